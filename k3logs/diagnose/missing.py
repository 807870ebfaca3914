"""What the bundle lacks of the deployment (#9): the nodes that took part but left no log of their own, and the
ranks the world size says ran but no line shows. Incomplete evidence is said, not hidden: the report names
them in `evidence_missing`, and a cause that explains nothing else may lie there, so its confidence drops.

- A node has a log of its own when a good part (a quarter) of some log file's lines are about it (a head's log
  with a few of a Ray worker's forwarded lines is the head's; a job's output that srun gathers from every node
  is each node's; a Kubernetes events list or a host journal is nobody's).
- A node is named when a line is attributed to it (a forwarded worker line, a GCS line about it, a pod's
  events), or when the bundle's launch files name a host of the same family as the nodes it has
  (gpu-h100-a03 beside gpu-h100-a01 and gpu-h100-a02: an `ssh` target, a node list). A bare IP that nothing
  resolves to a host is not named: it may be a node that has logs under its name.
- With a world size, the ranks no line shows are named when they are whole nodes' worth (world size / nodes)
  and nodes are missing: ranks the bundle's lines never attribute are not taken for missing ones."""
from __future__ import annotations

import re

import polars as pl

from k3logs.catalogue.regexes import Regexes

from .outcome import HOST_KINDS

OWN_SHARE = 0.25   # of a log file's attributed lines
RX = Regexes("diagnose.toml")  # lists_hosts, host_name, ip_like


def _family(name: str) -> str:
    """A host name without its trailing number: the naming its siblings share."""
    return re.sub(r"\d+$", "", name)  # (kept here: trims a name we already read, not bundle text)


def nodes_without_logs(ev: pl.DataFrame, files, display, texts: list[str]) -> list[str]:
    """Nodes of the deployment that no log file of the bundle is the log of, in name order."""
    own_files = {display(f.file) for f in files if f.kind not in HOST_KINDS and not f.prose and f.lines}
    named_ev = ev.filter(pl.col("node").is_not_null())
    # a node whose lines are a good part of a log file (the file's, or the tasks' of a job's output that
    # srun gathers) has a log; a few lines forwarded into another node's log do not make one
    share = (named_ev.filter(pl.col("file").is_in(sorted(own_files))).group_by("file", "node").len()
             .with_columns((pl.col("len") / pl.col("len").sum().over("file")).alias("share")))
    have = set(share.filter(pl.col("share") >= OWN_SHARE)["node"].to_list())
    named = set(named_ev["node"].unique().to_list())
    families = {_family(n) for n in have if _family(n) != n}
    for text in texts:  # hosts of the nodes' own naming, where launch files and notes list the hosts to run on
        for line in text.split("\n"):
            if RX["lists_hosts"].search(line):
                named |= {h for h in RX["host_name"].findall(line) if _family(h) in families}
    return sorted(n for n in named - have if not RX["ip_like"].fullmatch(n))


def ranks_without_lines(ev: pl.DataFrame, world_size: int | None) -> list[int]:
    if not world_size or world_size > 4096:
        return []
    seen = set(ev["rank"].drop_nulls().unique().to_list()) if "rank" in ev.columns else set()
    return sorted(set(range(world_size)) - seen) if seen else []


def spans(ranks: list[int]) -> str:
    """[8, 9, 10, 12] -> '8-10, 12'."""
    out, start = [], None
    for i, r in enumerate(ranks):
        if start is None:
            start = r
        if i + 1 == len(ranks) or ranks[i + 1] != r + 1:
            out.append(f"{start}-{r}" if r != start else str(r))
            start = None
    return ", ".join(out)


def missing_parts(ev: pl.DataFrame, files, display, texts: list[str], world_size: int | None,
                  nnodes: int | None) -> list[str]:
    """The report's lines for what is missing of the deployment."""
    nodes = nodes_without_logs(ev, files, display, texts)
    out = [f"logs of node {n} (it took part: the bundle names it, but holds no log of its own)" for n in nodes]
    with_logs = {n for n in ev["node"].drop_nulls().unique().to_list() if not RX["ip_like"].fullmatch(n)} - set(nodes)
    total = max(len(with_logs) + len(nodes), nnodes or 0)
    ranks = ranks_without_lines(ev, world_size)
    per_node = world_size // total if world_size and total and world_size % total == 0 else 0
    short = len(with_logs) + len(nodes) < (nnodes or 0)
    if ranks and (nodes or short) and per_node and len(ranks) % per_node == 0:
        out.append(f"ranks {spans(ranks)} of world size {world_size}: no line of theirs is in the bundle")
    if short and with_logs:
        out.append(f"logs of {nnodes - len(with_logs) - len(nodes)} more of the {nnodes} nodes the launch "
                   f"command names (--nnodes)")
    return out
