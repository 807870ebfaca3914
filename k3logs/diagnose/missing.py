"""What the bundle lacks of the deployment (#9): the nodes that took part but left no log of their own, and the
ranks the world size says ran but no line shows. Incomplete evidence is said, not hidden: the report names
them in `evidence_missing`, and a cause that explains nothing else may lie there, so its confidence drops.

- A node has a log of its own when a good part (a quarter) of some log file's lines are about it (a job's output
  that srun gathers from every node is each node's; a Kubernetes events list or a host journal at the top is
  nobody's), or when a file is its own (in its folder: its kernel log, journal, the dumps collected on it).
  Lines forwarded into another node's file (a Ray head's log) make no log of the worker's, and what the control
  plane says of a node (kubectl describe, a pod listing) is not the node's.
- A node took part when a line is attributed to it (a forwarded worker line, a GCS line about it, a pod's
  events), when the orchestrator placed a pod there, or when a launch file, job script, its environment or a
  note lists it (an `ssh` target, a node list, a Slurm `-w` range, a NODE_RANK, a head or worker with its IP,
  hosts written side by side; the scheduler's node list of the job, pipeline.py). Hosts from pod listings and notes count only in the nodes' own naming family
  (gpu-h100-a03 beside gpu-h100-a01 and gpu-h100-a02). A bare IP that nothing resolves to a host is not named:
  it may be a node that has logs under its name.
- With a world size, the ranks no line shows are named when they are whole nodes' worth (world size / nodes)
  and nodes are missing: ranks the bundle's lines never attribute are not taken for missing ones."""
from __future__ import annotations

import polars as pl

from k3logs.catalogue.regexes import Regexes

from .assign import NODE_SRC
from .outcome import HOST_KINDS

OWN_SHARE = 0.25   # of a log file's attributed lines
LISTINGS = ("k8s_get", "docker_ps")  # tables of a cluster's objects: a row is no sign its node took part
# what the control plane says about a node (collected anywhere): no evidence collected on the node itself
ORCHESTRATOR = ("k8s_describe", "k8s_get", "pod_spec")
MAX_RANGE = 1024   # hosts a Slurm range may stand for (a longer one is not a node list)
RX = Regexes("diagnose.toml")  # what lists hosts, a host's name, a Slurm range, a sibling's index, an IP


def _family(name: str) -> str:
    """A host name without what tells it from its siblings (its last part after a dash, or its number): the
    naming they share."""
    return RX["sibling_index"].sub("", name)


def listed_together(line: str, hosts: set[str]) -> bool:
    """Whether two of `hosts` are written side by side as a list ('gpu-a01, gpu-a02', 'n01 + n02')."""
    at = [m for m in RX["host_name"].finditer(line) if m.group(1) in hosts]
    return any(RX["host_list_separator"].fullmatch(line[a.end():b.start()]) for a, b in zip(at, at[1:]))


def hosts_named(line: str) -> set[str]:
    """The host names a line writes, Slurm ranges expanded (hgx-q7-[21-22]: hgx-q7-21 and hgx-q7-22)."""
    out = set(RX["host_name"].findall(line))
    for m in RX["host_range"].finditer(line):
        for part in m.group("numbers").split(","):
            lo, _, hi = part.partition("-")
            if len(range(int(lo), int(hi or lo) + 1)) <= MAX_RANGE:
                out |= {f"{m.group('prefix')}{n:0{len(lo)}d}" for n in range(int(lo), int(hi or lo) + 1)}
    return out


def nodes_with_logs(ev: pl.DataFrame, files, display, file_node: dict[str, str | None]
                    ) -> tuple[set[str], set[str]]:
    """The nodes some log file of the bundle is the log of (a kernel log, a journal or a dump that is the
    node's file, in its folder, is one too; not what the control plane says of it), and every node a line is
    attributed to but a listing's (a table of a cluster's pods or nodes names nodes of any deployment: the
    caller takes those of the deployment's naming). A file that is one node's (its folder, its name says so:
    `file_node`) is no other node's log, whatever share of its lines that node's are (a Ray head's log with
    its workers' forwarded output)."""
    own_files = {display(f.file) for f in files
                 if f.kind not in HOST_KINDS and not f.prose and not f.is_dump and f.lines}
    named_ev = ev.filter(pl.col("node").is_not_null())
    # a node whose lines are a good part of a log file (the file's, or the tasks' of a job's output that
    # srun gathers) has a log; a few lines forwarded into another node's log do not make one, nor lines about
    # it (srun's and slurmstepd's reports of its tasks, a line that names it)
    owner = pl.col("file").replace_strict(file_node, default=None, return_dtype=pl.String)
    about = [NODE_SRC.index(k) + 1 for k in ("subject", "named")]
    share = (named_ev.filter(pl.col("file").is_in(sorted(own_files)) & ~pl.col("node_src").is_in(about))
             .group_by("file", "node").len()
             .with_columns((pl.col("len") / pl.col("len").sum().over("file")).alias("share"))
             .filter(owner.is_null() | (owner == pl.col("node"))))
    listings = sorted({display(f.file) for f in files if f.kind in LISTINGS})
    named = set(named_ev.filter(~pl.col("file").is_in(listings))["node"].unique().to_list())
    owned = {file_node.get(display(f.file)) for f in files
             if f.kind not in ORCHESTRATOR and not f.prose and f.lines}
    have = set(share.filter(pl.col("share") >= OWN_SHARE)["node"].to_list()) | (owned - {None})
    return have, named


def nodes_without_logs(have: set[str], named: set[str], texts: list[str], placed: set[str] = frozenset()
                       ) -> list[str]:
    """Nodes of the deployment that no log file of the bundle is the log of, in name order. Besides the nodes
    lines are attributed to (`named`), hosts of the nodes' own naming family where launch files and notes
    list the hosts to run on (a line that says so, or that lists two of them), and where the orchestrator
    placed the deployment's pods or its scheduler the job (`placed`: the nodes of a pod listing, events, describe,
    a job table)."""
    families = {_family(n) for n in have | named if _family(n) != n}
    for text in texts:
        for line in text.split("\n"):
            siblings = {h for h in hosts_named(line) if _family(h) in families}
            if (siblings and RX["lists_hosts"].search(line)) or listed_together(line, siblings | have):
                named |= siblings
    named |= {n for n in placed if _family(n) in families}
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


def missing_parts(ev: pl.DataFrame, files, display, file_node: dict[str, str | None], texts: list[str],
                  placed: set[str], world_size: int | None, nnodes: int | None) -> list[str]:
    """The report's lines for what is missing of the deployment."""
    have, named = nodes_with_logs(ev, files, display, file_node)
    nodes = nodes_without_logs(have, named, texts, placed)
    out = [f"logs of node {n} (it took part: the bundle names it, but holds no log of its own)" for n in nodes]
    with_logs = {n for n in have if not RX["ip_like"].fullmatch(n)}
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
