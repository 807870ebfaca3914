"""What attribution learns about a bundle: the Attribution record (every map with the witness that gave it), the hints
dumps give, and the identities it keys on (PCI bus ids, short host names) and the lines it reads them from."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import polars as pl

from k3logs.catalogue.regexes import Regexes
from k3logs.catalogue.witnesses import Witnesses, builtin_witnesses, expand_nodelist
from k3logs.schema import MIXED, the_one

# what the lines and paths attribution reads look like: patterns/diagnose.toml [[regex]]
RX = Regexes("diagnose.toml")

# the lines whose fields attribution reads (ranks, worlds, devices, PCI addresses, GPU identities, the tasks the
# kernel names) are data, each with its samples: patterns/attribution.toml [[rank_line]] (looked up when used,
# never at import: loading checks them with polars, whose threads must not start before a process forks)
KERNEL_TASK_LINES = ("kernel_task_crash", "kernel_task_killed", "kernel_task_oom", "kernel_task_xid")


def line_rx(name: str) -> str:
    """The regex (Rust syntax) of the [[rank_line]] `name`."""
    return builtin_witnesses().rank_line(name)


def unprefixed() -> pl.Expr:
    """A line its process wrote with no process prefix of its own (a journal's pid is its unit's process's)."""
    return pl.col("proc").is_null() & (pl.col("pid").is_null() | pl.col("ident").is_not_null())


MAX_WRAPPING_FOLDERS = 3  # folders that only wrap the rest (incident-42/bundle/...) looked into for node folders
# a container's output: its pids are its own
CONTAINER_WRAPPERS = {"docker_json", "cri", "kubectl_prefix", "stern", "compose"}
FACT_WITNESS = {  # how a report names the dump fact that gave a host: by fact, and by the dump it came from
    "hostname": "the hostname in {where}", "node_name": "the node name in {where}",
    "provenance": "the provenance note in {where}", "uname_host": "`uname -a` in {where}",
    ("hostname", "docker_inspect"): "docker inspect Config.Hostname in {where} (--network host: the host's name)",
    ("hostname", "k8s_describe"): "kubectl describe's Node: in {where}",
    ("node_name", "k8s_describe"): "kubectl describe's Node: in {where}",
    ("node_name", "pod_spec"): "the pod's spec.nodeName in {where}",
    ("node_name", "k8s_get"): "the NODE column of the pod listing in {where}",
    ("node_name", "manifest"): "the collector's manifest in {where}",
    ("hostname", "manifest"): "the collector's manifest in {where}",
}


def bus_key(dom: str | None, bus: str, dev: str) -> str:
    """PCI address normalised to dddd:bb:dd (log-formats.md 11.4)."""
    return f"{(dom or '0000')[-4:].lower()}:{bus.lower()}:{dev.lower()}"


def nccl_bus(busid: str) -> str:
    h = busid.lower().rjust(9, "0")
    return f"{h[0:4]}:{h[4:6]}:{h[6:8]}"


def short_host(h: str | None) -> str | None:
    if not h:
        return None
    h = h.strip()
    if RX["host_is_address"].fullmatch(h):
        return h
    return h.split(".", 1)[0] or None


def is_ip(v: str | None) -> bool:
    return bool(v) and bool(RX["ip"].fullmatch(v))


@dataclass
class Attribution:
    """What attribution learnt about the bundle (also reported), each map with the witness that gave it."""

    nodes: list[str] = field(default_factory=list)
    folder_node: dict[str, str] = field(default_factory=dict)
    file_node: dict[str, str] = field(default_factory=dict)
    ip_node: dict[str, str] = field(default_factory=dict)
    pid_rank: dict[tuple[str | None, int], int] = field(default_factory=dict)
    pid_gpu: dict[tuple[str | None, int], int] = field(default_factory=dict)
    bus_rank: dict[tuple[str | None, str], int] = field(default_factory=dict)
    bus_gpu: dict[tuple[str | None, str], int] = field(default_factory=dict)   # nvidia-smi's index (or NCCL's cudaDev)
    device_buses: set[tuple[str | None, str]] = field(default_factory=set)    # those of bus_gpu that are NCCL's cudaDev
    visible: dict[str | None, tuple[int, ...]] = field(default_factory=dict)  # CUDA_VISIBLE_DEVICES by node (None: all)
    bus_pid: dict[tuple[str | None, str], int] = field(default_factory=dict)
    local_rank: dict[tuple[str | None, int], int] = field(default_factory=dict)   # (node, local rank) -> rank
    pid_local: dict[tuple[str | None, int], int] = field(default_factory=dict)
    tid_pid: dict[tuple[str | None, int], int] = field(default_factory=dict)   # a thread's process
    file_rank: dict[str, int] = field(default_factory=dict)
    name_rank: dict[str, int] = field(default_factory=dict)
    single_node: str | None = None
    full_name: dict[str, str] = field(default_factory=dict)   # a node -> its one fully qualified name in the bundle
    unnamed_rank0: bool = False
    world_size: int | None = None
    tp_size: int | None = None
    pp_size: int | None = None
    # --- issue 20: every witness, and the maps beyond lines that print a host
    top_node: str | None = None                       # the one top folder of a bundle of one node
    alias_node: dict[str, str | None] = field(default_factory=dict)  # a pod's / container's hostname -> its node
    pod_node: dict[str, str] = field(default_factory=dict)
    finished_pods: set[str] = field(default_factory=set)  # pods a listing shows Completed (a finished Job's)
    pods: set[str] = field(default_factory=set)  # the pods the bundle names (listings, events, its logs' paths)
    span_node: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)  # file -> [(first, last, node)]
    span_time: dict[str, list[tuple[int, int, datetime]]] = field(default_factory=dict)  # -> [(first, last, UTC)]
    subject_node: dict[tuple[str, int], str] = field(default_factory=dict)   # (file, line) -> node it is about
    subject_pid: dict[tuple[str, int], tuple[str | None, int]] = field(default_factory=dict)  # -> (node, pid)
    subject_rank: dict[tuple[str, int], int] = field(default_factory=dict)   # (file, line) -> rank it is about
    # (file, line) -> (node, rank) of the actor that raised what a relayed traceback shows (the line stays the
    # relaying process's: the finding on it is the actor's)
    raised_by: dict[tuple[str, int], tuple[str, int | None]] = field(default_factory=dict)
    task_node: dict[tuple[str, int, int], str] = field(default_factory=dict)   # (file, step, task) -> node
    task_rank: dict[tuple[str, int, int], int] = field(default_factory=dict)   # (file, step, task) -> rank
    steps: dict[str, list[int]] = field(default_factory=dict)         # file -> the first line of each Slurm step
    restarts: dict[str, list[int]] = field(default_factory=dict)      # file -> lines where the server started again
    life_rank: dict[tuple[str | None, int, str, int], int] = field(default_factory=dict)  # (node, pid, file, epoch)
    # (file, epoch, its journal pid or None) -> the rank of its unprefixed process
    bare_rank: dict[tuple[str, int, int | None], int] = field(default_factory=dict)
    host_pid: dict[tuple[str | None, int], int] = field(default_factory=dict)  # (node, host pid) -> container pid
    container_pids: set[tuple[str | None, int]] = field(default_factory=set)  # pids seen only inside a container
    gpus: dict[tuple[str | None, str], dict] = field(default_factory=dict)  # (node, bus) -> index, bus_id, uuid, serial
    uuid_bus: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    serial_bus: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    why: dict[tuple, str] = field(default_factory=dict)  # (map, key) -> the witness, for node_from / rank_from

    def said(self, kind: str, key, text: str) -> None:
        """Remember the first witness of an entry of map `kind`."""
        self.why.setdefault((kind, key), text)

    def working_pod_nodes(self) -> set[str]:
        """The nodes of the pods that were at work: a finished Job's pod (a probe, a download done hours ago) on
        another node ran nothing of what the bundle's unnamed logs hold, unless no pod was at work."""
        working = {n for p, n in self.pod_node.items() if p not in self.finished_pods}
        return working or set(self.pod_node.values())


@dataclass
class DumpHints:
    """What the bundle's dumps tell attribution (read from their facts by `hints_from_facts`). Each map's value
    carries where it was read (file:line) in `where`."""

    file_host: dict[str, str] = field(default_factory=dict)          # a dump's own host
    gpu_buses: dict[str, list[str]] = field(default_factory=dict)    # a dump's GPU bus ids by index
    ip_host: dict[str, str] = field(default_factory=dict)            # 'node-b (10.0.0.2)'
    alias_host: dict[str, str] = field(default_factory=dict)         # an inventory row's rack slot, asset tag -> host
    named_hosts: set[str] = field(default_factory=set)               # hosts named anywhere (pod listing, pdsh)
    not_hosts: set[str] = field(default_factory=set)                 # the served model's names: no host's
    pod_node: dict[str, str] = field(default_factory=dict)           # a pod listing's NAME -> NODE
    finished_pods: set[str] = field(default_factory=set)             # ... the pods it shows Completed
    nic_gpu: dict[str, dict[str, int]] = field(default_factory=dict)  # a dump's HCA -> the GPU on its switch
    pods: set[str] = field(default_factory=set)                      # pod names the bundle holds (never nodes)
    pod_ip: dict[str, str] = field(default_factory=dict)             # a pod's IP -> the pod
    node_ip: dict[str, str] = field(default_factory=dict)            # a node's IP -> the node
    container_hosts: set[str] = field(default_factory=set)           # a container's own hostname (not its host's)
    span_node: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)  # file -> [(first, last, node)]
    span_time: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)  # file -> [(first, last, ISO time)]
    file_ips: dict[str, list[str]] = field(default_factory=dict)     # a dump's own addresses (`ip addr`)
    gpu_ids: dict[str, list[dict]] = field(default_factory=dict)     # a dump's GPUs: index, bus_id, uuid, serial
    visible: dict[str, tuple[int, ...]] = field(default_factory=dict)  # a dump's CUDA_VISIBLE_DEVICES (indexes)
    host_pid_mode: set[str] = field(default_factory=set)             # files of a container sharing the host's pids
    host_pid_containers: set[str] = field(default_factory=set)       # ... and the ids and names of such containers
    pid_ns: dict[int, int] = field(default_factory=dict)             # host pid -> container pid (NSpid)
    pid_ns_file: dict[int, str] = field(default_factory=dict)        # host pid -> the file that said so
    proc_titles: dict[str, dict[int, str]] = field(default_factory=dict)  # a dump's host pid -> its vLLM title
    nodelists: dict[str, str] = field(default_factory=dict)          # a Slurm job's node list -> where it is read
    job_nodelists: dict[str, tuple[str, str]] = field(default_factory=dict)  # job id -> its node list, where read
    job_hosts: set[str] = field(default_factory=set)                 # hosts a job's node lists name (sacct, env)
    where: dict[tuple, str] = field(default_factory=dict)            # (map, key) -> 'how, file:line'


def hints_from_facts(facts: Iterable) -> DumpHints:
    """Collect the facts attribution uses. A dump's host is its hostname, else the one node it names (a
    table of many pods on many nodes says nothing about where it was taken)."""
    h, names = DumpHints(), defaultdict(lambda: defaultdict(set))
    where: dict[tuple[str, str, str], str] = {}
    aliases: dict[str, set[str]] = {}
    for f in facts:
        words = f.value.split() if isinstance(f.value, str) else []
        at = f"{f.file}:{f.line}" if f.line else f.file
        if f.name in ("hostname", "node_name", "provenance", "uname_host") and words:
            names[f.file][f.name].add(f.value)
            where.setdefault((f.file, f.name, f.value), FACT_WITNESS.get((f.name, f.source), FACT_WITNESS[f.name])
                             .format(where=at))
        if f.name in ("hostname", "node_name", "clock_reading", "provenance", "uname_host") and words:
            h.named_hosts.add(short_host(words[0]))
            h.where.setdefault(("named", short_host(words[0])), FACT_WITNESS.get(
                (f.name, f.source), FACT_WITNESS.get(f.name, "the host named in {where}")).format(where=at))
        elif f.name in ("served_model_name", "model") and words:   # ('kimi-k3 (LWS ...) -- bundle for ...': no host)
            if name := short_host(words[0].rstrip("/").rsplit("/", 1)[-1]):
                h.not_hosts.add(name.lower())
        elif f.name == "gpu_bus_ids":
            h.gpu_buses[f.file] = f.value.split(",")
        elif f.name == "cuda_visible_devices" and all(v.strip().isdigit() for v in f.value.split(",")):
            h.visible[f.file] = tuple(int(v) for v in f.value.split(","))
            h.where.setdefault(("visible", f.file), at)
        elif f.name == "host_ip" and len(words) == 2:
            if h.ip_host.setdefault(words[1], words[0]) == words[0]:
                h.where.setdefault(("ip_host", words[1]), at)
        elif f.name == "pod_node" and len(words) == 2:
            h.pod_node.setdefault(words[0], words[1])
            h.pods.add(words[0])
            h.where.setdefault(("pod", words[0]), at)
        elif f.name == "container_node" and len(words) == 2:   # (docker inspect under --network host)
            h.pod_node.setdefault(words[0], words[1])
            h.where.setdefault(("pod", words[0]), f"docker inspect of container {words[0]}: its Config.Hostname "
                                                  f"under --network host, {at}")
        elif f.name == "pod_finished" and words:
            h.finished_pods.add(words[0])
        elif f.name == "pod_name" and words:
            h.pods.add(words[0])
        elif f.name == "pod_ip" and len(words) == 2:
            h.pod_ip.setdefault(words[1], words[0])
            h.where.setdefault(("pod_ip", words[1]), at)
        elif f.name == "node_ip" and len(words) == 2:
            h.node_ip.setdefault(words[1], words[0])
            h.where.setdefault(("node_ip", words[1]), at)
        elif f.name == "container_hostname" and words:
            h.container_hosts.add(words[0])
            h.where.setdefault(("container_host", words[0]), at)
        elif f.name in ("span_node", "span_time") and len(words) >= 3 and words[0].isdigit() and words[1].isdigit():
            getattr(h, f.name).setdefault(f.file, []).append((int(words[0]), int(words[1]), words[2]))
            h.where.setdefault(("span", f.file, int(words[0])), f"{' '.join(words[3:]) or 'the object'} ({at})")
        elif f.name == "ip" and "=" in f.value:
            ip = f.value.split("=", 1)[1].split("/", 1)[0]
            h.file_ips.setdefault(f.file, []).append(ip)
            h.where.setdefault(("file_ip", f.file, ip), at)
        elif f.name == "gpu_identity" and words:
            fields = dict(kv.split("=", 1) for kv in words if "=" in kv)
            h.gpu_ids.setdefault(f.file, []).append({**fields, "where": at})
        elif f.name == "pid_mode" and f.value == "host":
            h.host_pid_mode.add(f.file)
        elif f.name == "host_pid_container":
            h.host_pid_containers |= set(words)
        elif f.name == "process_title" and len(words) == 2 and words[0].isdigit():
            h.proc_titles.setdefault(f.file, {})[int(words[0])] = words[1]
            h.where.setdefault(("process_title", f.file, int(words[0])), at)
        elif f.name == "nspid" and len(words) == 2 and all(x.isdigit() for x in words):
            h.pid_ns.setdefault(int(words[0]), int(words[1]))
            h.pid_ns_file.setdefault(int(words[0]), f.file)
        elif f.name == "slurm_nodelist" and words:
            h.nodelists.setdefault(words[0], at)
            h.job_hosts |= set(expand_nodelist(words[0]))
        elif f.name == "job_nodelist" and len(words) == 2:
            h.job_nodelists.setdefault(words[0], (words[1], at))
        elif f.name == "job_nodes" and words:
            h.job_hosts |= set(expand_nodelist(words[0]))
        elif f.name == "nic_gpu" and len(words) == 2:
            h.nic_gpu.setdefault(f.file, {})[words[0]] = int(words[1])
        elif f.name == "host_alias" and len(words) == 2:
            aliases.setdefault(words[0], set()).add(words[1])
            h.where.setdefault(("alias_host", words[0]), at)
    # (a name several rows share, a SKU, names no one host)
    h.alias_host = {alias: next(iter(hosts)) for alias, hosts in aliases.items() if len(hosts) == 1}
    for file, by in names.items():
        for k in ("hostname", "node_name", "uname_host", "provenance"):
            if len(by.get(k, ())) == 1:
                value = next(iter(by[k]))
                h.file_host[file] = value
                h.where[("file_host", file)] = where[(file, k, value)]
                break
    return h


def host_field(source: str | None, wrapper: str | None) -> str:
    """How a report names the field a line prints its host in."""
    if wrapper == "journald_json":
        return "journald _HOSTNAME"
    if wrapper in ("journald", "journald_iso"):
        return "the journal's host field"
    if source == "nccl":
        return "the NCCL host field"
    if source == "torch":
        return "the torchelastic host field"
    return "the host field"


def nth(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, f"{n}th")


def ensure(events: pl.DataFrame) -> pl.DataFrame:
    """The columns attribution reads, null where a stage did not make them."""
    need = {"w_task": pl.Int32, "w_pod": pl.String, "w_host": pl.String, "host": pl.String, "ip": pl.String,
            "wrapper": pl.String, "source": pl.String, "pid": pl.Int64, "proc": pl.String, "rank": pl.Int32,
            "dev": pl.Int32, "tid": pl.Int64, "local_rank": pl.Int32, "line": pl.Int64}
    missing = [pl.lit(None, t).alias(c) for c, t in need.items() if c not in events.columns]
    return events.with_columns(missing) if missing else events


def epochs(ev: pl.DataFrame, a: Attribution) -> pl.Series:
    """Which lifetime of its file's processes each row is in: how many times the server started in that file
    at or before the row (a pid seen again after a restart may be another process)."""
    if not a.restarts or "file" not in ev.columns:
        return pl.repeat(0, ev.height, dtype=pl.Int32, eager=True)
    out = np.zeros(ev.height, dtype=np.int32)
    files = ev["file"]
    if (one := the_one(files)) is not MIXED:
        starts = a.restarts.get(one)
        if starts:
            out[:] = np.searchsorted(np.array(starts, dtype=np.int64), ev["line"].to_numpy(), side="right")
        return pl.Series(out)
    lines = ev["line"].to_numpy()
    for f, starts in a.restarts.items():
        idx = (files == f).fill_null(False).arg_true().to_numpy()
        if len(idx):
            out[idx] = np.searchsorted(np.array(starts, dtype=np.int64), lines[idx], side="right")
    return pl.Series(out)


def step_of(a: Attribution, file: str, line: int) -> int:
    return int(np.searchsorted(np.array(a.steps.get(file, []), dtype=np.int64), line, side="right"))


def elastic_entries(ev: pl.DataFrame) -> pl.DataFrame:
    """torchelastic failure summaries: every field line of an entry ('[1]:' then time/host/rank/exitcode)
    gets the entry's rank and host (log-formats.md 5.5)."""
    t, field_line = pl.col("text"), RX["elastic_field"].pattern
    if not ev["text"].str.contains(field_line).any():
        return ev
    # an entry starts at its '[N]:' line, or at its first field (time) where that line was not kept (analyze)
    opens = t.str.contains(RX["elastic_entry"].pattern)
    first_field = t.str.contains(RX["elastic_time"].pattern) & ~opens.shift(1).over("file", order_by=["line", "sub"]).fill_null(False)
    entry = (opens | first_field | ~t.str.contains(field_line)).cast(pl.Int32).cum_sum() \
        .over("file", order_by=["line", "sub"])
    in_entry = t.str.contains(field_line)
    ev = ev.with_columns(entry.alias("_entry"))
    ev = ev.with_columns(
        pl.when(in_entry).then(t.str.extract(RX["elastic_rank"].pattern, 1).cast(pl.Int32).drop_nulls().first()
                              .over(["file", "_entry"])).alias("_erank"),
        pl.when(in_entry).then(t.str.extract(RX["elastic_host"].pattern, 1).drop_nulls().first()
                              .over(["file", "_entry"])).alias("_ehost"))
    return ev.with_columns(pl.coalesce("rank", "_erank").alias("rank"),
                           pl.coalesce("host", "_ehost").alias("host")).drop("_entry", "_erank", "_ehost")


@dataclass
class Read:
    """One line witness read from a kept line."""

    name: str
    kind: str
    file: str
    line: int
    task: int | None
    g: dict


def line_witnesses(ev: pl.DataFrame, w: Witnesses) -> dict[str, list[Read]]:
    """Every line witness of patterns/attribution.toml found in the events (a vectorised prefilter, then the
    witness's regex on the few lines that hold one of its literals)."""
    out: dict[str, list[Read]] = defaultdict(list)
    if not ev.height or not w.in_lines:
        return out
    folded = list(w.folded_prefilters)
    holds = pl.col("text").str.contains_any(list(w.prefilters))
    if folded:
        holds = holds | pl.col("text").str.contains_any(folded, ascii_case_insensitive=True)
    cand = ev.filter(holds.fill_null(False))
    task = cand["w_task"] if "w_task" in cand.columns else pl.repeat(None, cand.height, dtype=pl.Int32, eager=True)
    for file, line, text, t in zip(cand["file"].to_list(), cand["line"].to_list(), cand["text"].to_list(),
                                   task.to_list()):
        for lw in w.in_lines:
            if not lw.prefilter_in(text):
                continue
            m = lw.regex.search(text)
            if m:
                out[lw.kind].append(Read(lw.name, lw.kind, file, line, t,
                                          {k: v for k, v in m.groupdict().items() if v is not None}))
    heads = ev.filter((pl.col("line") == 1) & (pl.col("text").str.strip_chars() != ""))   # (a text's first line:
    for file, line, text in heads.select("file", "line", "text").iter_rows():             # a note read as a log)
        for lw in (lw for lw in w.lines if lw.first_line and lw.prefilter_in(text)):
            if m := lw.regex.search(text):
                out[lw.kind].append(Read(lw.name, lw.kind, file, line, None,
                                         {k: v for k, v in m.groupdict().items() if v is not None}))
    return out


def died_actors(ev: pl.DataFrame) -> dict[tuple[str, int], tuple[str, int]]:
    """(file, line) -> (ip, pid) of the actor an ActorDiedError a driver relays is about, for each line of the message
    that names it (a folded exception's message: its dead actor's pid and ip, then why it died)."""
    if "exc_messages" not in ev.columns:
        return {}
    out: dict[tuple[str, int], tuple[str, int]] = {}
    rows = ev.filter(pl.col("exc_messages").list.join("\n").str.contains(r"\bip: \d").fill_null(False))
    for file, end, messages, lines in rows.select("file", "line_end", "exc_messages", "exc_lines").iter_rows():
        for i, (text, first) in enumerate(zip(messages, lines or [])):
            if first is not None and (m := RX["died_actor"].search(text or "")):
                last = lines[i + 1] - 1 if i + 1 < len(lines) and lines[i + 1] is not None else end or first
                out.update({(file, ln): (m.group("ip"), int(m.group("pid"))) for ln in range(first, last + 1)})
    return out
