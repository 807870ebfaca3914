"""Attach a node, a global rank and a GPU to every event (log-formats.md 11).

Node: the host a line names (NCCL, torchelastic, journald), a Ray `ip=` resolved through the lines that
tie an IP to a host, else the node of the file (its per-node folder, or the one host its own lines name),
else the bundle's only node. Rank: `[rankN]:`, then one (node, pid) -> rank map built from every file
(vLLM 'rank R in world size W is assigned as ...', NCCL 'rank R nranks W' lines of world-sized
communicators, torchelastic blocks, NCCL_DEBUG_FILE names), then the worker's name when the layout makes
it unambiguous. Kernel lines about a GPU (Xid, 'fallen off the bus') get the rank that owns that PCI
address (NCCL busId), and the GPU index from nvidia-smi's bus ids."""
from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

from .schema import MIXED, at_rows, the_one

ASSIGNED = r"rank (?P<r>\d+) in world size (?P<w>\d+) is assigned as DP rank (?P<dp>\d+), PP rank (?P<pp>\d+), (?:PCP rank \d+, )?TP rank (?P<tp>\d+)"
WORLD_LINE = r"world_size=(?P<w>\d+) rank=(?P<r>\d+) local_rank=(?P<l>\d+) distributed_init_method="
# torchelastic: an agent's 'failed (exitcode: N) local_rank: L (pid: P)' and a summary entry's fields
AGENT_FAILED = r"local_rank: (?P<l>\d+) \(pid: (?P<p>\d+)\)"
ELASTIC_RANK = r"^\s+rank\s*: (?P<r>\d+) \(local_rank: (?P<l>\d+)\)"
# any line that prints a process's global and local rank together ('rank=13/16 local_rank=5')
RANK_AND_LOCAL = r"\brank[=:]\s?(?P<r>\d+)(?:/\d+)?[,;]?\s+local_rank[=:]\s?(?P<l>\d+)\b"
NCCL_INIT = r"comm 0x[0-9a-f]+ rank (?P<r>\d+) nranks (?P<w>\d+) cudaDev (?P<dev>\d+)(?: nvmlDev \d+)? busId (?P<bus>[0-9a-f]+)"
NCCL_COMM = r"comm 0x[0-9a-f]+ rank (?P<r>\d+) nRanks (?P<w>\d+) nNodes"
NCCL_BOOT = r"Bootstrap ?: Using (?:\[\d+\])?[\w.-]+:(?P<ip>\d+\.\d+\.\d+\.\d+)<"
TP_SIZE = r"tensor_parallel_size['\"]?[=:] ?(?P<tp>\d+)"
PP_SIZE = r"pipeline_parallel_size['\"]?[=:] ?(?P<pp>\d+)"
PCI = r"(?:PCI:)?(?P<dom>[0-9a-fA-F]{4,8}):(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})"
WORKER_NAME = re.compile(r"^(?:Worker|VllmWorker)(?:_DP(?P<dp>\d+))?(?:_PP(?P<pp>\d+))?(?:_TP(?P<tp>\d+))?(?:_EP\d+)?"
                         r"(?: rank=(?P<rank>\d+)| TP(?P<tp2>\d+))?$")
# the PCI device a kernel line is about: AER names it after 'error received:' (the first address is the port)
AER_SOURCE = r"error (?:message )?received: (?:from )?" + PCI
HCA_NAMED = r"mlx5_core " + PCI + r"\.\d+ (?P<hca>mlx5_\d+):"
# a task the kernel names: by thread id in a crash ('NCCL Progress 5[2391]: segfault at 28 ...'), by pid
# when the OOM killer kills or reaps it ('Killed process 2123 (python3)', 'oom-kill:...,pid=2123,')
KERNEL_TASK = (r"\[(\d+)\]: (?:segfault|trap|general protection)",
               r"(?:Kill(?:ed)?|reaped) process (\d+) \(", r"oom-kill:constraint=[^\n]*?,pid=(\d+),")
KERNEL_TASK_WORDS = r"segfault|trap|general protection|process|oom-kill"  # in every line KERNEL_TASK reads
PCI_WORDS = r"NVRM|nvidia|NVIDIA|AER|mlx5_core"  # a kernel line about a GPU's or its rail's PCI device
NODE_FILE_NAME = re.compile(r"rank[-_]?(\d+)", re.I)
ARCHIVE_SUFFIX = re.compile(r"\.(?:tar\.(?:gz|zst|bz2|xz)|tgz|tzst|tar|zip)$", re.I)  # a node's archive, as a folder
MAX_WRAPPING_FOLDERS = 3  # folders that only wrap the rest (incident-42/bundle/...) looked into for node folders
NOT_NODE_DIRS = {"pods", "pod", "containers", "container", "logs", "log", "nccl", "metrics", "model", "models",
                 "kernel", "dmesg", "config", "configs", "k8s", "kubernetes", "events", "env", "ray", "vllm",
                 "node", "nodes", "bundle", "var", "tmp", "proc", "sys", "etc", "requests", "captures"}


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
    if re.fullmatch(r"[\d.]+|[0-9a-fA-F:]+", h):
        return h
    return h.split(".", 1)[0] or None


@dataclass
class Attribution:
    """What attribution learnt about the bundle (also reported)."""

    nodes: list[str] = field(default_factory=list)
    folder_node: dict[str, str] = field(default_factory=dict)
    file_node: dict[str, str] = field(default_factory=dict)
    ip_node: dict[str, str] = field(default_factory=dict)
    pid_rank: dict[tuple[str | None, int], int] = field(default_factory=dict)
    pid_gpu: dict[tuple[str | None, int], int] = field(default_factory=dict)
    bus_rank: dict[tuple[str | None, str], int] = field(default_factory=dict)
    bus_gpu: dict[tuple[str | None, str], int] = field(default_factory=dict)
    bus_pid: dict[tuple[str | None, str], int] = field(default_factory=dict)
    local_rank: dict[tuple[str | None, int], int] = field(default_factory=dict)   # (node, local rank) -> rank
    pid_local: dict[tuple[str | None, int], int] = field(default_factory=dict)
    tid_pid: dict[tuple[str | None, int], int] = field(default_factory=dict)   # a thread's process
    file_rank: dict[str, int] = field(default_factory=dict)
    name_rank: dict[str, int] = field(default_factory=dict)
    single_node: str | None = None
    unnamed_rank0: bool = False
    world_size: int | None = None
    tp_size: int | None = None
    pp_size: int | None = None


def _folder_in(path: str, base: str) -> str | None:
    """The folder directly under `base` ('' = the bundle root) that holds `path`, as a path (None: none)."""
    prefix = base + "/" if base else ""
    if not path.startswith(prefix):
        return None
    head, sep, _ = path[len(prefix):].partition("/")
    return prefix + head if sep else None


def folder_node_of(path: str, folder_node: dict[str, str]) -> str | None:
    """The node of the per-node folder that holds `path`, if any (folders are keyed by their path)."""
    return next((n for d, n in folder_node.items() if path.startswith(d + "/")), None)


def _hosts_named(folder: str, known_hosts: set[str]) -> list[str]:
    """The known hosts a folder's name stands for (node-gpu-r5-07 for gpu-r5-07)."""
    return [h for h in known_hosts if h == folder or (len(h) >= 4 and (h in folder or folder in h))]


def _node_folders(files: list[str], file_hosts: dict[str, str], known_hosts: set[str], base: str = "",
                  depth: int = 0) -> dict[str, str]:
    """Which folders directly under `base` (the bundle root first) are per-node folders, and the node each
    stands for. A bundle whose folders are all in one that names no host (a ticket's 'incident-42/node-a/...')
    has them inside that one: those are tried first, a few levels down."""
    dirs = sorted({d for f in files if (d := _folder_in(f, base))})
    name = {d: ARCHIVE_SUFFIX.sub("", d.rsplit("/", 1)[-1]) for d in dirs}  # node-a.tar.gz/...: node-a
    if len(dirs) == 1 and depth < MAX_WRAPPING_FOLDERS and not _hosts_named(name[dirs[0]], known_hosts):
        if inner := _node_folders(files, file_hosts, known_hosts, dirs[0], depth + 1):
            return inner
    out: dict[str, str] = {}
    for d in dirs:
        hosts = Counter(h for f, h in file_hosts.items() if _folder_in(f, base) == d)
        if len(hosts) == 1:
            out[d] = next(iter(hosts))
            continue
        if len(match := _hosts_named(name[d], known_hosts)) == 1:
            out[d] = match[0]
    # one folder left and one host the bundle names left: that folder is that host
    left = [d for d in dirs if d not in out and name[d].lower() not in NOT_NODE_DIRS]
    unplaced = known_hosts - set(out.values())
    if out and len(left) == 1 and len(unplaced) == 1:
        out[left[0]] = next(iter(unplaced))
    # the other folders are nodes only when they look like siblings (node-a, node-b), not like a layout
    # (var-lib-docker, host)
    candidates = [d for d in dirs if d not in out and name[d].lower() not in NOT_NODE_DIRS]
    if candidates and len(candidates) + len(out) >= 2 and \
            len(os.path.commonprefix([name[d] for d in [*candidates, *out]])) >= 3:
        for d in candidates:
            out[d] = name[d]
    return out


@dataclass
class DumpHints:
    """What the bundle's dumps tell attribution (read from their facts by `hints_from_facts`)."""

    file_host: dict[str, str] = field(default_factory=dict)          # a dump's own host
    gpu_buses: dict[str, list[str]] = field(default_factory=dict)    # a dump's GPU bus ids by index
    ip_host: dict[str, str] = field(default_factory=dict)            # 'node-b (10.0.0.2)'
    named_hosts: set[str] = field(default_factory=set)               # hosts named anywhere (pod listing, pdsh)
    pod_node: dict[str, str] = field(default_factory=dict)           # a pod listing's NAME -> NODE
    nic_gpu: dict[str, dict[str, int]] = field(default_factory=dict)  # a dump's HCA -> the GPU on its switch


def hints_from_facts(facts: Iterable) -> DumpHints:
    """Collect the facts attribution uses. A dump's host is its hostname, else the one node it names (a
    table of many pods on many nodes says nothing about where it was taken)."""
    h, names = DumpHints(), defaultdict(lambda: defaultdict(set))
    for f in facts:
        words = f.value.split() if isinstance(f.value, str) else []
        if f.name in ("hostname", "node_name"):
            names[f.file][f.name].add(f.value)
        if f.name in ("hostname", "node_name", "clock_reading") and words:
            h.named_hosts.add(short_host(words[0]))
        elif f.name == "gpu_bus_ids":
            h.gpu_buses[f.file] = f.value.split(",")
        elif f.name == "host_ip" and len(words) == 2:
            h.ip_host[words[1]] = words[0]
        elif f.name == "pod_node" and len(words) == 2:
            h.pod_node[words[0]] = words[1]
        elif f.name == "nic_gpu" and len(words) == 2:
            h.nic_gpu.setdefault(f.file, {})[words[0]] = int(words[1])
    for file, by in names.items():
        host = next((next(iter(by[k])) for k in ("hostname", "node_name") if len(by.get(k, ())) == 1), None)
        if host:
            h.file_host[file] = host
    return h


def learn(events: pl.DataFrame, hints: DumpHints | None = None, files: Iterable[str] = ()) -> Attribution:
    """Learn the node and rank maps of a bundle from its parsed events and what its dumps say. `files`
    names every file of the bundle, so that files with no line kept still get their folder's node."""
    hints = hints or DumpHints()
    host_facts = hints.file_host
    a = Attribution()
    ev = _hosts(_elastic_entries(events))
    # 1. ip -> host from NCCL bootstrap lines and from Ray-relayed NCCL lines
    boot = ev.filter(pl.col("_h").is_not_null() & (pl.col("source") == "nccl")).select(
        "_h", pl.coalesce(pl.col("text").str.extract(NCCL_BOOT, 1), pl.col("ip")).alias("_ip")).drop_nulls().unique()
    for h, ip in sorted(boot.iter_rows()):
        a.ip_node.setdefault(ip, h)
    for ip, h in sorted(hints.ip_host.items()):
        a.ip_node.setdefault(ip, h)
    # 2. the host each file's own lines name (lines relayed from other nodes by Ray carry ip=)
    own = ev.filter(pl.col("_h").is_not_null() & pl.col("ip").is_null()).group_by("file", "_h").len()
    file_hosts: dict[str, str] = {}
    for f in sorted(own["file"].unique().to_list()):
        rows = own.filter(pl.col("file") == f).sort(["len", "_h"], descending=[True, False])
        if rows.height == 1 or rows["len"][0] > 3 * rows["len"][1]:
            file_hosts[f] = rows["_h"][0]
    for f, h in host_facts.items():
        file_hosts.setdefault(f, short_host(h))
    known_hosts = set(file_hosts.values()) | set(a.ip_node.values()) | set(ev["_h"].drop_nulls().unique().to_list()) \
        | hints.named_hosts
    files = sorted(set(ev["file"].unique().to_list()) | set(host_facts) | set(hints.gpu_buses) | set(files))
    a.folder_node = _node_folders(files, file_hosts, known_hosts)
    pods = sorted(hints.pod_node, key=len, reverse=True)  # the longest name first: kimi-k3-0-1, then kimi-k3-0
    for f in files:
        a.file_node[f] = folder_node_of(f, a.folder_node) or file_hosts.get(f)
        if not a.file_node[f]:   # 'kubectl-logs-POD-c-CONTAINER.txt': the node a pod listing places POD on
            pod = next((p for p in pods if re.search(rf"(?<![A-Za-z0-9]){re.escape(p)}(?![A-Za-z0-9])", f)), None)
            a.file_node[f] = short_host(hints.pod_node[pod]) if pod else None
    nodes_seen = {n for n in a.file_node.values() if n} | known_hosts
    a.single_node = next(iter(nodes_seen)) if len(nodes_seen) == 1 else None
    a.nodes = sorted(n for n in nodes_seen if n and not re.fullmatch(r"[\d.]+", n))
    ev = _apply_nodes(ev, a)
    a.nodes = sorted(ev["node"].drop_nulls().unique().to_list())

    # 3. rank maps
    ranks = ev.filter(pl.col("pid").is_not_null())
    assigned = ranks.select("node", "pid", pl.col("text").str.extract_groups(ASSIGNED).alias("g")).unnest("g") \
        .drop_nulls(["r"])
    world_lines = ranks.select("node", "pid", pl.col("text").str.extract_groups(WORLD_LINE).alias("g")).unnest("g") \
        .drop_nulls(["r"])
    worlds = [int(w) for w in assigned["w"].to_list() + world_lines["w"].to_list()]
    init = ranks.select("node", "pid", pl.col("text").str.extract_groups(NCCL_INIT).alias("g")).unnest("g") \
        .drop_nulls(["r"])
    comm = ranks.select("node", "pid", pl.col("text").str.extract_groups(NCCL_COMM).alias("g")).unnest("g") \
        .drop_nulls(["r"])
    nccl_worlds = [int(w) for w in init["w"].to_list() + comm["w"].to_list()]
    # torchelastic entries: (host, rank, local rank); agents' 'local_rank: L (pid: P)'
    elastic = ev.select("node", pl.col("text").str.extract_groups(ELASTIC_RANK).alias("g")).unnest("g").drop_nulls("r")
    printed = ev.select("node", pl.col("text").str.extract_groups(RANK_AND_LOCAL).alias("g")).unnest("g").drop_nulls("r")
    for node, r, loc in pl.concat([elastic, printed]).iter_rows():
        a.local_rank.setdefault((node, int(loc)), int(r))
    agents = ev.select("node", pl.col("text").str.extract_groups(AGENT_FAILED).alias("g")).unnest("g").drop_nulls("l")
    for node, loc, pid in agents.iter_rows():
        a.pid_local.setdefault((node, int(pid)), int(loc))
    for node, pid, loc in ev.filter(pl.col("local_rank").is_not_null() & pl.col("pid").is_not_null()) \
            .select("node", "pid", "local_rank").unique().iter_rows():
        a.pid_local.setdefault((node, pid), int(loc))
    known_rank = max([int(r) for r in elastic["r"].to_list()] or [-1])
    a.world_size = max(worlds) if worlds else (max(nccl_worlds) if nccl_worlds else None)
    if not worlds and a.world_size is not None and known_rank >= a.world_size:
        a.world_size = None  # NCCL's largest communicator is not the world (torchrun PP/TP groups)
    for node, pid, r, *_ in assigned.iter_rows():
        a.pid_rank[(node, pid)] = int(r)
    for node, pid, w, r, loc in world_lines.select("node", "pid", "w", "r", "l").iter_rows():
        a.pid_rank.setdefault((node, pid), int(r))
        a.pid_local.setdefault((node, pid), int(loc))
        a.local_rank.setdefault((node, int(loc)), int(r))
    for node, pid, r, w, dev, bus in init.iter_rows():
        a.pid_gpu.setdefault((node, pid), int(dev))
        a.bus_gpu.setdefault((node, nccl_bus(bus)), int(dev))
        a.bus_pid.setdefault((node, nccl_bus(bus)), pid)
        if a.world_size and int(w) == a.world_size:
            a.pid_rank.setdefault((node, pid), int(r))
            a.bus_rank.setdefault((node, nccl_bus(bus)), int(r))
    for node, pid, tid in ranks.filter(pl.col("tid").is_not_null() & (pl.col("tid") != pl.col("pid"))) \
            .select("node", "pid", "tid").unique().iter_rows():
        a.tid_pid.setdefault((node, int(tid)), pid)
    # any NCCL line names its process's CUDA device ('host:pid:tid [dev] NCCL ...')
    for node, pid, dev in ranks.filter(pl.col("dev").is_not_null() & (pl.col("source") == "nccl")) \
            .select("node", "pid", "dev").unique().iter_rows():
        a.pid_gpu.setdefault((node, pid), int(dev))
    for node, pid, r, w in comm.iter_rows():
        if a.world_size and int(w) == a.world_size:
            a.pid_rank.setdefault((node, pid), int(r))
    # NCCL_DEBUG_FILE-style names that carry the rank (nccl-rank6.log)
    for f in sorted(ev.filter(pl.col("source") == "nccl")["file"].unique().to_list()):
        m = NODE_FILE_NAME.search(f.rsplit("/", 1)[-1])
        if m:
            a.file_rank[f] = int(m.group(1))
    for (f, node, pid) in ev.filter(pl.col("file").is_in(list(a.file_rank)) & pl.col("pid").is_not_null()) \
            .select("file", "node", "pid").unique().iter_rows():
        a.pid_rank.setdefault((node, pid), a.file_rank[f])
    # parallel sizes, for worker names and device ranks when no map exists
    for pat, attr in ((TP_SIZE, "tp_size"), (PP_SIZE, "pp_size")):
        found = ev["text"].str.extract(pat, 1).drop_nulls()
        if len(found):
            setattr(a, attr, int(found.mode().sort()[0]))
    # a process known only by its local rank takes the global rank that local rank has on its node; with
    # the default CUDA_VISIBLE_DEVICES a worker's local rank is its CUDA device (NCCL's [dev])
    for (node, pid), loc in a.pid_local.items():
        if (node, loc) in a.local_rank:
            a.pid_rank.setdefault((node, pid), a.local_rank[(node, loc)])
    single_replica = len({n for n, _ in a.pid_gpu}) <= 1 and (
        a.world_size is None or a.tp_size is None or a.world_size == a.tp_size * (a.pp_size or 1))
    for (node, pid), dev in a.pid_gpu.items():
        if (node, pid) in a.pid_rank:
            continue
        if (node, dev) in a.local_rank:
            a.pid_rank[(node, pid)] = a.local_rank[(node, dev)]
        elif single_replica and a.tp_size and (a.pp_size or 1) == 1:
            a.pid_rank[(node, pid)] = dev  # one node, tensor parallel only: rank = TP rank = device
    for (node, bus), pid in a.bus_pid.items():
        if (node, pid) in a.pid_rank:
            a.bus_rank.setdefault((node, bus), a.pid_rank[(node, pid)])
    a.name_rank = _name_ranks(sorted(ev["proc"].drop_nulls().unique().to_list()), a)
    # a single-GPU deployment whose processes print no name (V0, early V1): its output is rank 0's
    a.unnamed_rank0 = (a.tp_size or 0) * (a.pp_size or 1) == 1 and a.world_size in (None, 1) \
        and ev["proc"].is_null().all()
    for file, buses in hints.gpu_buses.items():
        node = a.file_node.get(file) or a.single_node
        for i, b in enumerate(buses):
            a.bus_gpu.setdefault((node, b), i)
    # an HCA's kernel lines are about the GPU on its PCIe switch (its rail): 'mlx5_core ADDR mlx5_3:' names
    # the HCA at ADDR, nvidia-smi topo's PIX cell the GPU next to mlx5_3
    hca_gpu = {(a.file_node.get(f) or a.single_node, hca): g for f, by in hints.nic_gpu.items() for hca, g in by.items()}
    if hca_gpu:
        named = ev.filter(pl.col("source") == "kernel").select(
            "node", pl.col("text").str.extract_groups(HCA_NAMED).alias("g")).unnest("g").drop_nulls("hca").unique()
        for node, dom, bus, dev, hca in named.iter_rows():
            if (node, hca) in hca_gpu:
                a.bus_gpu.setdefault((node, bus_key(dom, bus, dev)), hca_gpu[(node, hca)])
    return a


SHORT_HOST = r"^([A-Za-z][\w-]*)\..*$"
def _hosts(ev: pl.DataFrame) -> pl.DataFrame:
    """`_h`: the host a line names itself (NCCL, torchelastic, journald), cut to its short name."""
    named = ev.select(pl.coalesce(pl.col("host"), pl.col("w_host"))).to_series()
    if (one := the_one(named)) is not MIXED:  # (cut by the same engine, once)
        return ev.with_columns(pl.lit(pl.Series([one], dtype=pl.String).str.replace(SHORT_HOST, "${1}")[0],
                                      pl.String).alias("_h"))
    return ev.with_columns(named.str.replace(SHORT_HOST, "${1}").alias("_h"))


def _mapped(ev: pl.DataFrame, col: str, mapping: dict, dtype: pl.DataType) -> pl.Expr:
    """`col` looked up in `mapping` (null where it has no entry): a hash lookup, no join of the whole frame."""
    if not mapping:
        return pl.lit(None, dtype)
    if (one := the_one(ev[col])) is not MIXED:
        return pl.lit(mapping.get(one), dtype)
    return pl.col(col).replace_strict(mapping, default=None, return_dtype=dtype)


def _by_node_pid(ev: pl.DataFrame, table: dict[tuple[str | None, int], int]) -> pl.Series:
    """The value `table` gives each row's (node, pid), null where none (a join of those two columns only)."""
    if not table or ev["pid"].null_count() == ev.height:
        return pl.repeat(None, ev.height, dtype=pl.Int32, eager=True)
    if (node := the_one(ev["node"])) is not MIXED:
        if (pid := the_one(ev["pid"])) is not MIXED:
            return pl.repeat(table.get((node, pid)), ev.height, dtype=pl.Int32, eager=True)
        by_pid = {p: v for (n, p), v in table.items() if n == node}
        return ev["pid"].replace_strict(by_pid, default=None, return_dtype=pl.Int32) if by_pid else \
            pl.repeat(None, ev.height, dtype=pl.Int32, eager=True)
    right = pl.DataFrame([(n, p, v) for (n, p), v in table.items()],
                         schema={"node": pl.String, "pid": pl.Int64, "_v": pl.Int32}, orient="row")
    return ev.select("node", "pid").join(right, on=["node", "pid"], how="left", nulls_equal=True,
                                         maintain_order="left")["_v"]


def _apply_nodes(ev: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    ev = ev.with_columns(pl.coalesce("_h", _mapped(ev, "ip", a.ip_node, pl.String), pl.col("ip"),
                                     _mapped(ev, "file", a.file_node, pl.String)).alias("node")).drop("_h")
    # a line with no node of its own that names one of the bundle's nodes (a Kubernetes event row,
    # 'assigned ... to <node>'); else the bundle's only node
    missing = ev["node"].is_null()
    if a.nodes and missing.any():
        names = "|".join(re.escape(n) for n in sorted(a.nodes, key=len, reverse=True))
        idx = missing.arg_true()
        named = ev["text"].gather(idx).str.extract(rf"(?:^|[\s/=:'\"(])({names})(?:$|[\s,.;:'\")])", 1)
        ev = ev.with_columns(ev["node"].scatter(idx, named))
    if a.single_node:
        ev = ev.with_columns(pl.col("node").fill_null(a.single_node))
    return ev


def apply(events: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """Add `node`, `rank`, `gpu` to parsed events with what `learn` found (works batch by batch)."""
    ev = _apply_nodes(_hosts(_elastic_entries(events)), a)
    ev = ev.with_columns(
        pl.coalesce("rank", pl.lit(_by_node_pid(ev, a.pid_rank)), _mapped(ev, "file", a.file_rank, pl.Int32),
                    _mapped(ev, "proc", a.name_rank, pl.Int32)).cast(pl.Int32).alias("rank"),
        pl.coalesce("dev", pl.lit(_by_node_pid(ev, a.pid_gpu))).cast(pl.Int32).alias("gpu"))
    if a.local_rank and "local_rank" in ev.columns:
        # torchelastic's agent reports a child's failure: 'failed (exitcode: -6) local_rank: 1 (pid: 4326)'
        ev = ev.with_columns(pl.coalesce("local_rank", pl.col("text").str.extract(AGENT_FAILED, 1)
                                         .cast(pl.Int32)).alias("local_rank"))
        lm = pl.DataFrame([(n, l, r) for (n, l), r in a.local_rank.items()],
                          schema={"node": pl.String, "local_rank": pl.Int32, "_lr": pl.Int32}, orient="row")
        ev = ev.join(lm, on=["node", "local_rank"], how="left").with_columns(
            pl.coalesce("rank", "_lr").alias("rank")).drop("_lr")
    if a.unnamed_rank0:
        ev = ev.with_columns(pl.when(pl.col("source").is_in(["vllm", "traceback"]) & pl.col("rank").is_null())
                             .then(pl.lit(0, pl.Int32)).otherwise(pl.col("rank")).alias("rank"))
    return _kernel(ev, a)


ELASTIC_FIELD = r"^\s+(?:time|host|rank|exitcode|error_file|traceback)\s*:"
ELASTIC_ENTRY = r"^\[\d+\]:\s*$"
ELASTIC_TIME = r"^\s+time\s*:"


def _elastic_entries(ev: pl.DataFrame) -> pl.DataFrame:
    """torchelastic failure summaries: every field line of an entry ('[1]:' then time/host/rank/exitcode)
    gets the entry's rank and host (log-formats.md 5.5)."""
    t = pl.col("text")
    if not ev["text"].str.contains(ELASTIC_FIELD).any():
        return ev
    # an entry starts at its '[N]:' line, or at its first field (time) where that line was not kept (analyze)
    opens = t.str.contains(ELASTIC_ENTRY)
    first_field = t.str.contains(ELASTIC_TIME) & ~opens.shift(1).over("file", order_by=["line", "sub"]).fill_null(False)
    entry = (opens | first_field | ~t.str.contains(ELASTIC_FIELD)).cast(pl.Int32).cum_sum() \
        .over("file", order_by=["line", "sub"])
    in_entry = t.str.contains(ELASTIC_FIELD)
    ev = ev.with_columns(entry.alias("_entry"))
    ev = ev.with_columns(
        pl.when(in_entry).then(t.str.extract(r"^\s+rank\s*: (\d+)", 1).cast(pl.Int32).drop_nulls().first()
                              .over(["file", "_entry"])).alias("_erank"),
        pl.when(in_entry).then(t.str.extract(r"^\s+host\s*: (\S+)", 1).drop_nulls().first()
                              .over(["file", "_entry"])).alias("_ehost"))
    return ev.with_columns(pl.coalesce("rank", "_erank").alias("rank"),
                           pl.coalesce("host", "_ehost").alias("host")).drop("_entry", "_erank", "_ehost")


def _name_ranks(procs: list[str], a: Attribution) -> dict[str, int]:
    """Global rank from a worker's name, when the layout makes it unambiguous. On a single-GPU
    deployment the engine core is the only worker: rank 0."""
    out = {}
    single = (a.tp_size or 0) * (a.pp_size or 1) == 1 and a.world_size in (None, 1)
    for p in procs:
        if single and re.match(r"^(?:EngineCore|Worker|VllmWorker)", p):
            out[p] = 0
            continue
        m = WORKER_NAME.match(p)
        if not m:
            continue
        tp = m.group("tp") or m.group("tp2") or m.group("rank")
        if tp is None:
            continue
        dp, pp = int(m.group("dp") or 0), int(m.group("pp") or 0)
        if dp and (a.world_size is None or a.tp_size is None):
            continue
        if pp and a.tp_size is None:
            continue
        tp_size, pp_size = a.tp_size or 1, a.pp_size or 1
        if not dp and not pp and a.world_size and a.tp_size and a.world_size != a.tp_size * pp_size:
            continue  # several replicas: the TP rank alone does not give the global rank
        out[p] = (dp * pp_size + pp) * tp_size + int(tp)
    return out


def _kernel(ev: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """Kernel lines take a rank from the task or the PCI device they are about (worked out on the kernel
    rows alone: a batch of application logs has none)."""
    idx = (ev["source"] == "kernel").fill_null(False).arg_true()
    if not len(idx):
        return ev
    sub = _kernel_gpu(_kernel_task(ev[["node", "text", "rank", "gpu"]][idx], a), a)
    return ev.with_columns(ev["rank"].cast(pl.Int32).scatter(idx, sub["rank"].cast(pl.Int32)),
                           ev["gpu"].cast(pl.Int32).scatter(idx, sub["gpu"].cast(pl.Int32)))


def _kernel_task(kern: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """A kernel line about a task (a segfault, an OOM kill) takes the rank of the process it names (of the
    process a crashed thread belongs to)."""
    if not a.pid_rank:
        return kern
    rows = [(n, t, a.pid_rank.get((n, a.tid_pid.get((n, t), t)))) for n, t in a.tid_pid] + \
        [(n, p, r) for (n, p), r in a.pid_rank.items()]
    tr = pl.DataFrame(rows, schema={"node": pl.String, "_task": pl.Int64, "_trank": pl.Int32}, orient="row") \
        .drop_nulls().unique(["node", "_task"], keep="first")
    text = kern["text"]
    named = text.str.contains(KERNEL_TASK_WORDS).fill_null(False).arg_true()  # (the few lines worth reading)
    read = text.gather(named).to_frame().select(pl.coalesce(pl.col("text").str.extract(p, 1) for p in KERNEL_TASK))
    task = at_rows(kern.height, named, read.to_series().cast(pl.Int64, strict=False))
    return kern.with_columns(task.alias("_task")) \
        .join(tr, on=["node", "_task"], how="left", maintain_order="left") \
        .with_columns(pl.coalesce("rank", "_trank").alias("rank")).drop("_task", "_trank")


def _kernel_gpu(kern: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """A kernel line about a PCI device (Xid, AER, an HCA on a GPU's rail) takes that GPU and its rank."""
    about = kern["text"].str.contains(PCI_WORDS).fill_null(False).arg_true()
    if not len(about):
        return kern
    text = kern["text"].gather(about)  # (an address is searched for only in the lines about such a device)
    first, aer = text.str.extract_groups(PCI).struct.unnest(), text.str.extract_groups(AER_SOURCE).struct.unnest()
    pci = aer.select(pl.when(aer["bus"].is_not_null()).then(aer[c]).otherwise(first[c]) for c in ("dom", "bus", "dev"))
    bus = pci.select(pl.when(pl.col("bus").is_not_null()).then(pl.concat_str([
        pl.col("dom").fill_null("0000").str.slice(-4).str.to_lowercase(), pl.lit(":"),
        pl.col("bus").str.to_lowercase(), pl.lit(":"), pl.col("dev").str.to_lowercase()]))).to_series()
    if bus.null_count() == len(bus):
        return kern
    kern = kern.with_columns(at_rows(kern.height, about, bus).alias("_bus"))
    br = pl.DataFrame([(n, b, r) for (n, b), r in a.bus_rank.items()],
                      schema={"node": pl.String, "_bus": pl.String, "_brank": pl.Int32}, orient="row")
    bg = pl.DataFrame([(n, b, g) for (n, b), g in a.bus_gpu.items()],
                      schema={"_gnode": pl.String, "_bus": pl.String, "_bgpu": pl.Int32}, orient="row")
    # nvidia-smi bus ids may come from a dump without a node: match on the bus alone when unique
    bg_any = bg.group_by("_bus").agg(pl.col("_bgpu").first(), pl.len().alias("_n")).filter(pl.col("_n") == 1) \
        .select("_bus", pl.col("_bgpu").alias("_bgpu_any"))
    # with the default CUDA_VISIBLE_DEVICES a worker's local rank is its GPU index, and so is its NCCL [dev]
    by_dev = defaultdict(set)
    for (n, p), g in a.pid_gpu.items():
        if (n, p) in a.pid_rank:
            by_dev[(n, g)].add(a.pid_rank[(n, p)])
    gpu_rank = {k: next(iter(r)) for k, r in by_dev.items() if len(r) == 1} | a.local_rank
    lr = pl.DataFrame([(n, g, r) for (n, g), r in gpu_rank.items()],
                      schema={"node": pl.String, "_lgpu": pl.Int32, "_lrank": pl.Int32}, orient="row")
    return (kern.join(br, on=["node", "_bus"], how="left", maintain_order="left")
            .join(bg.rename({"_gnode": "node"}), on=["node", "_bus"], how="left", maintain_order="left")
            .join(bg_any, on="_bus", how="left", maintain_order="left")
            .with_columns(pl.when(pl.col("_bus").is_not_null()).then(pl.coalesce("gpu", "_bgpu", "_bgpu_any"))
                          .otherwise(pl.col("gpu")).cast(pl.Int32).alias("gpu"))
            .join(lr, left_on=["node", "gpu"], right_on=["node", "_lgpu"], how="left", maintain_order="left")
            .with_columns(pl.when(pl.col("_bus").is_not_null()).then(pl.coalesce("rank", "_brank", "_lrank"))
                          .otherwise(pl.col("rank")).alias("rank"))
            .drop("_bus", "_brank", "_bgpu", "_bgpu_any", "_lrank"))
