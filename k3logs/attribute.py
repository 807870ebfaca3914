"""Attach a node, a global rank and a GPU to every event (log-formats.md 11), and say which witness named each.

Node, in this order of precedence (docs/how-it-decides.md; what each witness looks like is
patterns/attribution.toml):
  1. what the line is about: a Kubernetes event object's node (events JSON involvedObject / source.host), the node
     a Ray GCS or raylet line names (marked dead, health check, memory monitor), resolved to a host name;
  2. the host the line itself prints (NCCL host field, journald host / _HOSTNAME, torchelastic host, slurmstepd),
     unless it is a pod's or a container's hostname: then the node that pod or container runs on;
  3. Ray's `ip=` of a relayed line, resolved through any host <-> IP tie (NCCL bootstrap lines, /etc/hosts, notes,
     `hostname -I`, `ip addr`, pod and node IPs); the IP itself only as the name of last resort;
  4. the launcher's label: Slurm `srun -l` task -> its host (srun's own errors, the task printing its host, the
     job's node list and the step's tasks per node); `kubectl logs --prefix` pod -> its node;
  5. the file's node: its per-node folder (also the one top folder of a bundle of one node named like a host; a
     generic name such as `logs` or `incident-42` is not a node), else the host its own lines print, else the host
     it states (`uname -a`, a provenance note, the dump's hostname, docker inspect Config.Hostname under --network
     host, kubectl describe Node:), else the pod whose log it is (its path or name) -> that pod's node;
  6. a node of the bundle the line names (a Kubernetes event row 'assigned ... to NODE');
  7. the bundle's only node.
A pod name is never a node name: a pod maps to a node only where the bundle says so (pod listing NODE column, pod
JSON spec.nodeName, describe Node:, a Scheduled event).

Rank: `[rankN]:` and the like on the line, then one (node, pid) -> rank map built from every file (vLLM 'rank R in
world size W is assigned as ...', 'world_size=W rank=R local_rank=L', NCCL 'rank R nranks W' lines of world-sized
communicators, torchelastic blocks, NCCL_DEBUG_FILE names), per process lifetime (a pid that comes back after the
server restarted with another rank is another process), then the Slurm task when the step says the task is the rank
(RANK=$SLURM_PROCID), the worker's name (patterns/attribution.toml [[worker]]) when the layout makes it unambiguous,
the local rank. Kernel lines about a task take the rank of that process (a host pid mapped to the container's pid
where the bundle shows both: NSpid); kernel lines about a GPU (Xid, 'fallen off the bus', AER, an HCA on the GPU's
rail) get the rank that owns that PCI address (NCCL busId, or nvidia-smi index + local rank), and the GPU's identity
(index, bus id, UUID, serial) from nvidia-smi -q / -L / the kernel's 'GPU at PCI:... GPU-<uuid>' lines.

Every map keeps its witness (file:line), so that `witness(a, row)` can say for any event, the report's root
first, how its node and its rank were named."""
from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .schema import MIXED, at_rows, the_one
from .witnesses import Witnesses, builtin_witnesses, expand_nodelist, expand_tasks

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
# kept for decide.py, which reads a worker's index with it; the names are data: patterns/attribution.toml [[worker]]
WORKER_NAME = re.compile(r"^(?:Worker|VllmWorker)(?:_DP(?P<dp>\d+))?(?:_PP(?P<pp>\d+))?(?:_TP(?P<tp>\d+))?(?:_EP\d+)?"
                         r"(?: rank=(?P<rank>\d+)| TP(?P<tp2>\d+))?$")
# the PCI device a kernel line is about: AER names it after 'error received:' (the first address is the port)
AER_SOURCE = r"error (?:message )?received: (?:from )?" + PCI
HCA_NAMED = r"mlx5_core " + PCI + r"\.\d+ (?P<hca>mlx5_\d+):"
# the kernel's own GPU identity lines: 'NVRM: GPU at PCI:0000:18:00: GPU-<uuid>', then 'GPU Board Serial Number'
GPU_AT = r"GPU at PCI:(?P<dom>[0-9a-fA-F]{4,8}):(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2}): (?P<uuid>GPU-[0-9a-fA-F-]{8,})"
GPU_SERIAL = r"GPU Board Serial Number: (?P<serial>\w+)"
# a task the kernel names: by thread id in a crash ('NCCL Progress 5[2391]: segfault at 28 ...'), by pid
# when the OOM killer kills or reaps it ('Killed process 2123 (python3)', 'oom-kill:...,pid=2123,')
KERNEL_TASK = (r"\[(\d+)\]: (?:segfault|trap|general protection)",
               r"(?:Kill(?:ed)?|reaped) process (\d+) \(", r"oom-kill:constraint=[^\n]*?,pid=(\d+),")
KERNEL_TASK_WORDS = r"segfault|trap|general protection|process|oom-kill"  # in every line KERNEL_TASK reads
PCI_WORDS = r"NVRM|nvidia|NVIDIA|AER|mlx5_core"  # a kernel line about a GPU's or its rail's PCI device
NODE_FILE_NAME = re.compile(r"rank[-_]?(\d+)", re.I)
ARCHIVE_SUFFIX = re.compile(r"\.(?:tar\.(?:gz|zst|bz2|xz)|tgz|tzst|tar|zip)$", re.I)  # a node's archive, as a folder
MAX_WRAPPING_FOLDERS = 3  # folders that only wrap the rest (incident-42/bundle/...) looked into for node folders
CONTAINER_WRAPPERS = {"docker_json", "cri", "kubectl_prefix", "compose"}  # a container's output: its pids are its own
# Kubernetes log paths: /var/log/pods/NS_POD_UID/CONTAINER/N.log and /var/log/containers/POD_NS_CONTAINER-ID.log
POD_LOG_DIR = re.compile(r"(?:^|/)(?P<ns>[a-z0-9][a-z0-9-]*)_(?P<pod>[a-z0-9][a-z0-9.-]*)_[0-9a-f]{8}-[0-9a-f-]{20,}(?:/|$)")
CONTAINER_LOG = re.compile(r"(?:^|/)(?P<pod>[a-z0-9][a-z0-9.-]*)_(?P<ns>[a-z0-9][a-z0-9-]*)_[a-z0-9-]+-[0-9a-f]{64}\.log$")
CONTAINER_ID_HOST = re.compile(r"^[0-9a-f]{12}$")  # docker's default hostname: the container id
# Slurm step options: tasks per node, tasks, nodes; the task's id given to the program as its rank
STEP_PER_NODE = re.compile(r"--ntasks-per-node[= ](\d+)")
STEP_NTASKS = re.compile(r"(?:^|\s)(?:-n\s*|--ntasks[= ])(\d+)")
STEP_NNODES = re.compile(r"(?:^|\s)(?:-N\s*|--nodes[= ])(\d+)")
TASK_IS_RANK = re.compile(r"\b(?:RANK|--rank)[= ]\$\{?SLURM_PROCID\b")
JOB_NTASKS = re.compile(r"\bSLURM_NTASKS=(\d+)")
JOB_NNODES = re.compile(r"\bSLURM_(?:JOB_)?NNODES=(\d+)")
RESTART = r"vLLM API server version|^args: Namespace\("   # the server starting (again): a new process lifetime


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


def is_ip(v: str | None) -> bool:
    return bool(v) and bool(re.fullmatch(r"\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:]+", v))


def anchors() -> tuple[str, ...]:
    """Literals of the lines attribution reads (analyze keeps the lines that hold one)."""
    return builtin_witnesses().prefilters + ("GPU at PCI", "Board Serial Number", "NSpid")


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
    # --- issue 20: every witness, and the maps beyond lines that print a host
    top_node: str | None = None                       # the one top folder of a bundle of one node
    alias_node: dict[str, str | None] = field(default_factory=dict)  # a pod's / container's hostname -> its node
    pod_node: dict[str, str] = field(default_factory=dict)
    span_node: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)  # file -> [(first, last, node)]
    subject_node: dict[tuple[str, int], str] = field(default_factory=dict)   # (file, line) -> node it is about
    subject_pid: dict[tuple[str, int], tuple[str | None, int]] = field(default_factory=dict)  # -> (node, pid)
    subject_rank: dict[tuple[str, int], int] = field(default_factory=dict)   # (file, line) -> rank it is about
    task_node: dict[tuple[str, int, int], str] = field(default_factory=dict)   # (file, step, task) -> node
    task_rank: dict[tuple[str, int, int], int] = field(default_factory=dict)   # (file, step, task) -> rank
    steps: dict[str, list[int]] = field(default_factory=dict)         # file -> the first line of each Slurm step
    restarts: dict[str, list[int]] = field(default_factory=dict)      # file -> lines where the server started again
    life_rank: dict[tuple[str | None, int, str, int], int] = field(default_factory=dict)  # (node, pid, file, epoch)
    bare_rank: dict[tuple[str, int], int] = field(default_factory=dict)  # (file, epoch) -> rank of its unprefixed process
    host_pid: dict[tuple[str | None, int], int] = field(default_factory=dict)  # (node, host pid) -> container pid
    container_pids: set[tuple[str | None, int]] = field(default_factory=set)  # pids seen only inside a container
    gpus: dict[tuple[str | None, str], dict] = field(default_factory=dict)  # (node, bus) -> index, bus_id, uuid, serial
    uuid_bus: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    serial_bus: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    why: dict[tuple, str] = field(default_factory=dict)  # (map, key) -> the witness, for node_from / rank_from

    def said(self, kind: str, key, text: str) -> None:
        """Remember the first witness of an entry of map `kind`."""
        self.why.setdefault((kind, key), text)


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


def _node_folders(files: list[str], file_hosts: dict[str, str], known_hosts: set[str], w: Witnesses,
                  why: dict[str, str], pods: set[str] = frozenset(), base: str = "", depth: int = 0) -> dict[str, str]:
    """Which folders directly under `base` (the bundle root first) are per-node folders, and the node each
    stands for (`why` gets how each was told). A bundle whose folders are all in one that names no host (a
    ticket's 'incident-42/node-a/...') has them inside that one: those are tried first, a few levels down. A
    generic folder (`logs`, `incident-42`: patterns/attribution.toml [folders]), a pod's folder (named after a
    pod, or /var/log/pods' NS_POD_UID) is never a node's."""
    dirs = sorted({d for f in files if (d := _folder_in(f, base))})
    name = {d: ARCHIVE_SUFFIX.sub("", d.rsplit("/", 1)[-1]) for d in dirs}  # node-a.tar.gz/...: node-a
    if len(dirs) == 1 and depth < MAX_WRAPPING_FOLDERS and not _hosts_named(name[dirs[0]], known_hosts):
        inner_why: dict[str, str] = {}
        if inner := _node_folders(files, file_hosts, known_hosts, w, inner_why, pods, dirs[0], depth + 1):
            why.update(inner_why)
            return inner
    dirs = [d for d in dirs if not w.is_generic_folder(name[d]) and name[d] not in pods
            and not POD_LOG_DIR.search(name[d] + "/")]
    out: dict[str, str] = {}
    for d in dirs:
        hosts = Counter(h for f, h in file_hosts.items() if _folder_in(f, base) == d)
        if len(hosts) == 1:
            out[d] = next(iter(hosts))
            why[d] = f"node folder {d}/ (its files print the host {out[d]})"
            continue
        if len(match := _hosts_named(name[d], known_hosts)) == 1:
            out[d] = match[0]
            why[d] = f"node folder {d}/ (named after the host {out[d]})"
    # one folder left and one host the bundle names left: that folder is that host
    left = [d for d in dirs if d not in out and not w.is_generic_folder(name[d])]
    unplaced = known_hosts - set(out.values())
    if out and len(left) == 1 and len(unplaced) == 1:
        out[left[0]] = next(iter(unplaced))
        why[left[0]] = f"node folder {left[0]}/ (the one folder and the one host left: {out[left[0]]})"
    # the other folders are nodes only when they look like siblings (node-a, node-b), not like a layout
    # (var-lib-docker, host)
    candidates = [d for d in dirs if d not in out and not w.is_generic_folder(name[d])]
    if candidates and len(candidates) + len(out) >= 2 and \
            len(os.path.commonprefix([name[d] for d in [*candidates, *out]])) >= 3:
        for d in candidates:
            out[d] = name[d]
            why[d] = f"node folder {d}/"
    # a bundle of one node: its one folder, named like a host, whose files print no other host
    if not out and len(dirs) == 1 and w.is_node_folder_name(name[dirs[0]]) and \
            not any(_folder_in(f, base) == dirs[0] for f in file_hosts):
        out[dirs[0]] = name[dirs[0]]
        why[dirs[0]] = f"node folder {dirs[0]}/ (the bundle's one folder, named like a host)"
    return out


@dataclass
class DumpHints:
    """What the bundle's dumps tell attribution (read from their facts by `hints_from_facts`). Each map's value
    carries where it was read (file:line) in `where`."""

    file_host: dict[str, str] = field(default_factory=dict)          # a dump's own host
    gpu_buses: dict[str, list[str]] = field(default_factory=dict)    # a dump's GPU bus ids by index
    ip_host: dict[str, str] = field(default_factory=dict)            # 'node-b (10.0.0.2)'
    named_hosts: set[str] = field(default_factory=set)               # hosts named anywhere (pod listing, pdsh)
    pod_node: dict[str, str] = field(default_factory=dict)           # a pod listing's NAME -> NODE
    nic_gpu: dict[str, dict[str, int]] = field(default_factory=dict)  # a dump's HCA -> the GPU on its switch
    pods: set[str] = field(default_factory=set)                      # pod names the bundle holds (never nodes)
    pod_ip: dict[str, str] = field(default_factory=dict)             # a pod's IP -> the pod
    node_ip: dict[str, str] = field(default_factory=dict)            # a node's IP -> the node
    container_hosts: set[str] = field(default_factory=set)           # a container's own hostname (not its host's)
    span_node: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)  # file -> [(first, last, node)]
    file_ips: dict[str, list[str]] = field(default_factory=dict)     # a dump's own addresses (`ip addr`)
    gpu_ids: dict[str, list[dict]] = field(default_factory=dict)     # a dump's GPUs: index, bus_id, uuid, serial
    host_pid_mode: set[str] = field(default_factory=set)             # files of a container sharing the host's pids
    pid_ns: dict[int, int] = field(default_factory=dict)             # host pid -> container pid (NSpid)
    where: dict[tuple, str] = field(default_factory=dict)            # (map, key) -> 'how, file:line'


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


def hints_from_facts(facts: Iterable) -> DumpHints:
    """Collect the facts attribution uses. A dump's host is its hostname, else the one node it names (a
    table of many pods on many nodes says nothing about where it was taken)."""
    h, names = DumpHints(), defaultdict(lambda: defaultdict(set))
    where: dict[tuple[str, str, str], str] = {}
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
        elif f.name == "gpu_bus_ids":
            h.gpu_buses[f.file] = f.value.split(",")
        elif f.name == "host_ip" and len(words) == 2:
            if h.ip_host.setdefault(words[1], words[0]) == words[0]:
                h.where.setdefault(("ip_host", words[1]), at)
        elif f.name == "pod_node" and len(words) == 2:
            h.pod_node.setdefault(words[0], words[1])
            h.pods.add(words[0])
            h.where.setdefault(("pod", words[0]), at)
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
        elif f.name == "span_node" and len(words) >= 3 and words[0].isdigit() and words[1].isdigit():
            h.span_node.setdefault(f.file, []).append((int(words[0]), int(words[1]), words[2]))
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
        elif f.name == "nspid" and len(words) == 2 and all(x.isdigit() for x in words):
            h.pid_ns.setdefault(int(words[0]), int(words[1]))
        elif f.name == "nic_gpu" and len(words) == 2:
            h.nic_gpu.setdefault(f.file, {})[words[0]] = int(words[1])
    for file, by in names.items():
        for k in ("hostname", "node_name", "uname_host", "provenance"):
            if len(by.get(k, ())) == 1:
                value = next(iter(by[k]))
                h.file_host[file] = value
                h.where[("file_host", file)] = where[(file, k, value)]
                break
    return h


@dataclass
class _Read:
    """One line witness read from a kept line."""

    name: str
    kind: str
    file: str
    line: int
    task: int | None
    g: dict


def _line_witnesses(ev: pl.DataFrame, w: Witnesses) -> dict[str, list[_Read]]:
    """Every line witness of patterns/attribution.toml found in the events (a vectorised prefilter, then the
    witness's regex on the few lines that hold one of its literals)."""
    out: dict[str, list[_Read]] = defaultdict(list)
    if not ev.height or not w.lines:
        return out
    cand = ev.filter(pl.col("text").str.contains_any(list(w.prefilters)).fill_null(False))
    task = cand["w_task"] if "w_task" in cand.columns else pl.repeat(None, cand.height, dtype=pl.Int32, eager=True)
    for file, line, text, t in zip(cand["file"].to_list(), cand["line"].to_list(), cand["text"].to_list(),
                                   task.to_list()):
        for lw in w.lines:
            if not any(p in text for p in lw.prefilter):
                continue
            m = lw.regex.search(text)
            if m:
                out[lw.kind].append(_Read(lw.name, lw.kind, file, line, t,
                                          {k: v for k, v in m.groupdict().items() if v is not None}))
    return out


class _Names:
    """Resolves a name a line prints to a node: a pod's or a container's hostname to the node it runs on (or to
    nothing when the bundle does not say), an IP to its host (or itself: the name of last resort)."""

    def __init__(self, a: Attribution, w: Witnesses):
        self.a, self.w = a, w

    def host(self, name: str | None) -> str | None:
        if not name:
            return None
        if name in self.a.alias_node:
            return self.a.alias_node[name]
        if is_ip(name):
            return self.a.ip_node.get(name, name)
        return short_host(name)


def learn(events: pl.DataFrame, hints: DumpHints | None = None, files: Iterable[str] = (),
          top: str | None = None) -> Attribution:
    """Learn the node and rank maps of a bundle from its parsed events and what its dumps say. `files`
    names every file of the bundle, so that files with no line kept still get their folder's node; `top` is the
    folder every file of an archive was in (dropped from the names)."""
    w = builtin_witnesses()
    hints = hints or DumpHints()
    a = Attribution()
    ev = _hosts(_elastic_entries(ensure(events)))
    reads = _line_witnesses(ev, w)
    names = _Names(a, w)

    # 1. pods and the nodes they run on; the names lines print that are a pod's or a container's, not a node's
    for pod, node in sorted(hints.pod_node.items()):
        a.pod_node[pod] = short_host(node)
        a.said("pod", pod, hints.where.get(("pod", pod), "a pod listing"))
    for r in reads["pod_node"]:
        if a.pod_node.setdefault(r.g["pod"], short_host(r.g["node"])) == short_host(r.g["node"]):
            a.said("pod", r.g["pod"], f"the Scheduled event on {r.file}:{r.line}")
    pods = set(a.pod_node) | hints.pods | set(ev["w_pod"].drop_nulls().unique().to_list())
    for f in [*files, *ev["file"].unique().to_list()]:
        if m := POD_LOG_DIR.search(f) or CONTAINER_LOG.search(f):
            pods.add(m.group("pod"))
    for pod in sorted(pods):
        a.alias_node[pod] = a.pod_node.get(pod)
        a.said("alias", pod, f"{pod} is a pod" + (f" on {a.pod_node[pod]} ({a.why[('pod', pod)]})"
                                                  if pod in a.pod_node else ""))
    line_hosts = set(ev["_h"].drop_nulls().unique().to_list())
    for h in sorted(hints.container_hosts | {h for h in line_hosts if CONTAINER_ID_HOST.match(h)}):
        if h not in a.alias_node:
            a.alias_node[h] = None  # the container's: its file's node
            a.said("alias", h, f"{h} is a container's hostname")

    # 2. ip -> host: NCCL bootstrap lines, notes and /etc/hosts, node and pod IPs, Ray's registrations
    boot = ev.filter(pl.col("_h").is_not_null() & (pl.col("source") == "nccl")).select(
        "_h", pl.coalesce(pl.col("text").str.extract(NCCL_BOOT, 1), pl.col("ip")).alias("_ip"), "file", "line") \
        .drop_nulls(["_h", "_ip"]).unique(["_h", "_ip"], keep="first").sort("_ip", "_h")
    for h, ip, f, ln in boot.iter_rows():
        if (node := names.host(h)) and a.ip_node.setdefault(ip, node) == node:
            a.said("ip", ip, f"NCCL bootstrap on {f}:{ln} ({h} uses {ip})")
    for ip, h in sorted(hints.ip_host.items()):
        if w.is_host(short_host(h)) and a.ip_node.setdefault(ip, short_host(h)) == short_host(h):
            a.said("ip", ip, f"{hints.where.get(('ip_host', ip), 'a note')} ({short_host(h)} = {ip})")
    for ip, node in sorted(hints.node_ip.items()):
        if a.ip_node.setdefault(ip, short_host(node)) == short_host(node):
            a.said("ip", ip, f"the node IP in {hints.where.get(('node_ip', ip))}")
    for ip, pod in sorted(hints.pod_ip.items()):
        if a.pod_node.get(pod) and a.ip_node.setdefault(ip, a.pod_node[pod]) == a.pod_node[pod]:
            a.said("ip", ip, f"pod {pod}'s IP in {hints.where.get(('pod_ip', ip))}; {pod} runs on {a.pod_node[pod]} "
                             f"({a.why[('pod', pod)]})")
    for ip, node in list(a.ip_node.items()):   # an IP a note ties to a pod's hostname: that pod's node
        if node in a.alias_node:
            if a.alias_node[node]:
                a.ip_node[ip] = a.alias_node[node]
            else:
                del a.ip_node[ip]
    ray_ids: dict[str, str] = {}
    for r in reads["ray_node"] + reads["subject"]:
        if r.g.get("node_id") and r.g.get("ip"):
            ray_ids.setdefault(r.g["node_id"], r.g["ip"])

    # 3. the host each file's own lines name (lines relayed from other nodes by Ray carry ip=), resolved
    own = ev.filter(pl.col("_h").is_not_null() & pl.col("ip").is_null()).group_by("file", "_h") \
        .agg(pl.len(), pl.col("line").min().alias("first"), pl.col("source").first(), pl.col("wrapper").first())
    file_hosts: dict[str, str] = {}
    file_why: dict[str, str] = {}
    for f in sorted(own["file"].unique().to_list()):
        rows = own.filter(pl.col("file") == f).with_columns(
            pl.col("_h").map_elements(names.host, return_dtype=pl.String).alias("_n")).drop_nulls("_n")
        rows = rows.group_by("_n").agg(pl.col("len").sum(), pl.col("first").min(), pl.col("_h").first(),
                                       pl.col("source").first(), pl.col("wrapper").first()) \
            .sort(["len", "_n"], descending=[True, False])
        if rows.height and (rows.height == 1 or rows["len"][0] > 3 * rows["len"][1]):
            r = rows.row(0, named=True)
            file_hosts[f] = r["_n"]
            file_why[f] = f"{_host_field(r['source'], r['wrapper'])} {r['_h']!r} on {f}:{r['first']}" + \
                (f" ({a.why[('alias', r['_h'])]})" if r["_h"] in a.alias_node else "")
    for r in reads["file_host"]:
        if w.is_host(r.g["host"]) and r.file not in file_hosts:
            file_hosts[r.file] = short_host(r.g["host"])
            file_why[r.file] = f"{'`uname -a`' if r.name == 'uname' else 'the provenance note'} on {r.file}:{r.line}"
    for f, h in sorted(hints.file_host.items()):
        if (node := names.host(h)) and w.is_host(node) and f not in file_hosts:
            file_hosts[f] = node
            file_why[f] = hints.where.get(("file_host", f), f"the hostname in {f}")
    known_hosts = {h for h in [*file_hosts.values(), *a.ip_node.values(), *map(names.host, line_hosts),
                               *map(names.host, hints.named_hosts), *a.pod_node.values()]
                   if h and not is_ip(h) and w.is_host(h)}
    files = sorted(set(ev["file"].unique().to_list()) | set(hints.file_host) | set(hints.gpu_buses) | set(files))
    folder_why: dict[str, str] = {}
    a.folder_node = _node_folders(files, file_hosts, known_hosts, w, folder_why, pods | set(a.alias_node))
    if top and not a.folder_node and w.is_node_folder_name(top) and set(file_hosts.values()) <= {top}:
        a.top_node = top
    pods_longest = sorted(a.pod_node, key=len, reverse=True)  # the longest name first: kimi-k3-0-1, then kimi-k3-0
    relayed = {f: set(ips) for f, ips in ev.filter(pl.col("ip").is_not_null()).group_by("file")
               .agg(pl.col("ip").unique()).iter_rows()}
    for f in files:
        if node := folder_node_of(f, a.folder_node):
            d = next(d for d, n in a.folder_node.items() if f.startswith(d + "/"))
            a.file_node[f], why = node, folder_why[d]
        elif a.top_node:
            a.file_node[f], why = a.top_node, f"the archive's one top folder {a.top_node}/ (named like a host)"
        elif f in file_hosts:
            a.file_node[f], why = file_hosts[f], file_why[f]
        elif (m := POD_LOG_DIR.search(f) or CONTAINER_LOG.search(f)) and a.pod_node.get(m.group("pod")):
            pod = m.group("pod")
            a.file_node[f], why = a.pod_node[pod], f"the log of pod {pod} (its path), on {a.pod_node[pod]} " \
                                                   f"({a.why[('pod', pod)]})"
        elif pod := next((p for p in pods_longest
                          if re.search(rf"(?<![A-Za-z0-9]){re.escape(p)}(?![A-Za-z0-9])", f)), None):
            # 'kubectl-logs-POD-c-CONTAINER.txt': the node a pod listing places POD on
            a.file_node[f], why = a.pod_node[pod], f"the file of pod {pod} (its name), on {a.pod_node[pod]} " \
                                                   f"({a.why[('pod', pod)]})"
        elif head := next((r for r in reads["ray_head"] if r.file == f and a.ip_node.get(r.g["ip"])
                           and r.g["ip"] not in relayed.get(f, ())), None):
            # a Ray driver on the head: none of its relayed workers' lines comes from the head's address
            node = a.ip_node[head.g["ip"]]
            a.file_node[f], why = node, f"the Ray driver's head {head.g['ip']} (line {head.line}; no worker line " \
                                        f"relayed from it), via {a.why.get(('ip', head.g['ip']), '')}"
        else:
            a.file_node[f], why = None, None
        if why:
            a.said("file", f, why)
    # a dump's own addresses are its node's
    for f, ips in sorted(hints.file_ips.items()):
        if node := a.file_node.get(f):
            for ip in ips:
                if a.ip_node.setdefault(ip, node) == node:
                    a.said("ip", ip, f"`ip addr` in {hints.where.get(('file_ip', f, ip), f)} (the dump of {node})")

    # 4. what a line is about, or where it happened; Kubernetes event objects; Slurm tasks
    for r in reads["subject"]:
        node, how = _subject(r, a, ray_ids, names)
        if node:
            a.subject_node[(r.file, r.line)] = node
            a.said("subject", (r.file, r.line), how)
            if r.g.get("pid"):
                a.subject_pid[(r.file, r.line)] = (node, int(r.g["pid"]))
    for r in reads["about_pod"]:
        if node := a.pod_node.get(r.g["pod"]):
            a.subject_node.setdefault((r.file, r.line), node)
            a.said("subject", (r.file, r.line), f"the pod the line is about ({r.g['pod']}, line {r.line}), on {node} "
                                                f"({a.why[('pod', r.g['pod'])]})")
    # a line naming where it happened, and srun's report of the tasks that ended on a host, are about that host
    for r in [*reads["line_host"], *reads["task_hosts"]]:
        if (node := names.host(r.g["host"])) and w.is_host(node):
            a.subject_node.setdefault((r.file, r.line), node)
            a.said("subject", (r.file, r.line), f"the host the line names ({r.g['host']}, {r.name})")
    for f, spans in hints.span_node.items():
        resolved = []
        for s, e, n in sorted(spans):
            pod = n[4:] if n.startswith("pod/") else None
            node = a.pod_node.get(pod) if pod else names.host(n)
            if node:
                resolved.append((s, e, node))
                how = hints.where.get(("span", f, s), f"{f}:{s}")
                a.said("span", (f, s), f"{how}, on {node} ({a.why[('pod', pod)]})" if pod else how)
        if resolved:
            a.span_node[f] = resolved
    _slurm(ev, reads, a, names)

    nodes_seen = {n for n in a.file_node.values() if n} | known_hosts | set(a.subject_node.values()) | \
        set(a.task_node.values()) | {n for spans in a.span_node.values() for _, _, n in spans}
    nodes_seen = {n for n in nodes_seen if n and (not is_ip(n) or n in a.subject_node.values())}
    a.single_node = next(iter(nodes_seen)) if len(nodes_seen) == 1 else None
    named = sorted(h for h, n in a.alias_node.items() if n is None and h not in pods)
    if not nodes_seen and len(named) == 1:
        # a container's own hostname (its id, or a name set with --hostname), and no other name for the machine:
        # it stands for its host, as an IP would (the name of last resort)
        h = named[0]
        how = f"docker inspect in {hints.where[('container_host', h)]}" if ("container_host", h) in hints.where \
            else "its lines print it"
        a.single_node = h
        a.said("single", h, f"the bundle's only node: the container's hostname {h} ({how}), no other name for its "
                            f"host")
    elif a.single_node:
        src = next((a.why[("file", f)] for f, n in sorted(a.file_node.items()) if n == a.single_node
                    and ("file", f) in a.why), None) or hints.where.get(("named", a.single_node)) or \
            next((a.why[("ip", ip)] for ip, n in sorted(a.ip_node.items()) if n == a.single_node), None)
        a.said("single", a.single_node, f"the bundle's only node ({src})" if src else "the bundle's only node")
    a.nodes = sorted(n for n in nodes_seen if n and not is_ip(n))
    ev = _apply_nodes(ev, a)
    a.nodes = sorted(ev["node"].drop_nulls().unique().to_list())
    _ranks(ev, a, hints)
    for key, (node, pid) in a.subject_pid.items():
        if (node, pid) in a.pid_rank:
            a.subject_rank[key] = a.pid_rank[(node, pid)]
            a.said("subject_rank", key, f"the process the line is about, pid {pid} on {node} (line {key[1]}): "
                                        f"{a.why.get(('pid', (node, pid)), '')}")
    _gpus(ev, a, hints)
    return a


def _host_field(source: str | None, wrapper: str | None) -> str:
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


def _subject(r: _Read, a: Attribution, ray_ids: dict[str, str], names: _Names) -> tuple[str | None, str]:
    """The node a line is about (a Ray node's name or address), and how it was told."""
    g = r.g
    ip = g.get("ip") or ray_ids.get(g.get("node_id", ""))
    name = g.get("name")
    label = {"gcs_marked_dead": "the node the GCS marks dead", "gcs_health_check": "the node whose health check failed",
             "gcs_removing_node": "the node the GCS removes", "raylet_memory_monitor": "the node of the memory monitor",
             "ray_worker_died_address": "the dead worker's node"}.get(r.name, "the node the line is about")
    if name and not is_ip(name) and names.w.is_host(name):
        return names.host(name), f"{label} ({name}, on line {r.line})"
    if ip:
        node = names.host(ip)
        via = a.why.get(("ip", ip))
        how = f"{label}, Ray node IP {ip}" + (f" via {via}" if via and node != ip else " (no host named for it)")
        return node, how
    return None, ""


def _slurm(ev: pl.DataFrame, reads: dict[str, list[_Read]], a: Attribution, names: _Names) -> None:
    """Slurm `srun -l` task labels -> nodes (and ranks when the task is the rank), per file and job step: the
    tasks srun's own errors place on a host, the host a task prints, else the step's tasks per node over the job's
    node list (block distribution, Slurm's default)."""
    labelled = ev.filter(pl.col("w_task").is_not_null())
    if not labelled.height:
        return
    for f in sorted(labelled["file"].unique().to_list()):
        steps = sorted(r.line for r in reads["step"] if r.file == f and r.task is None)
        a.steps[f] = steps
        lists = sorted((r.line, expand_nodelist(r.g["nodelist"])) for r in reads["nodelist"] if r.file == f)
        nodelist = next((nl for _, nl in lists if nl), [])
        nl_line = next((ln for ln, nl in lists if nl), None)
        env = " ".join(t for t in ev.filter((pl.col("file") == f) & pl.col("text").str.contains("SLURM_N"))["text"])
        tasks_here = labelled.filter(pl.col("file") == f)
        here_steps = np.searchsorted(np.array(steps, dtype=np.int64), tasks_here["line"].to_numpy(), side="right")
        for step in range(len(steps) + 1):
            args = next((r.g["args"] for r in reads["step"] if r.file == f and r.task is None and step
                         and r.line == steps[step - 1]), "")
            in_step = tasks_here.filter(pl.Series(here_steps == step))
            ids = sorted(set(in_step["w_task"].to_list()))
            per_node = _per_node(args, env, len(nodelist), max(ids) + 1 if ids else 0)
            # every task of the step, also those whose lines analyze did not keep
            n_tasks = max(ids) + 1 if ids else 0
            if m := STEP_NTASKS.search(args):
                n_tasks = max(n_tasks, int(m.group(1)))
            elif nodelist and per_node:
                n_tasks = max(n_tasks, per_node * len(nodelist))
            ids = list(range(min(n_tasks, 1 << 16)))
            if not ids:
                continue
            header = f"the step on line {steps[step - 1]}" if step else "the job's first step"
            for r in [*reads["task_hosts"], *reads["task_host"]]:
                if r.file != f or step_of(a, f, r.line) != step:
                    continue
                node = names.host(r.g["host"])
                if not node or not names.w.is_host(node):
                    continue
                for t in (expand_tasks(r.g["tasks"]) if r.kind == "task_hosts" else [r.task]):
                    if t is not None and a.task_node.setdefault((f, step, t), node) == node:
                        a.said("task", (f, step, t), f"srun -l task {t}: " + (
                            f"srun's own line {r.line} places it on {r.g['host']}" if r.kind == "task_hosts"
                            else f"it prints its host {r.g['host']} on line {r.line}"))
            if nodelist and per_node:
                for t in ids:
                    if (f, step, t) not in a.task_node and t // per_node < len(nodelist):
                        node = names.host(nodelist[t // per_node])
                        a.task_node[(f, step, t)] = node
                        a.said("task", (f, step, t), f"srun -l task {t} of {header}: {per_node} task(s) per node "
                                                     f"over the job's nodes (line {nl_line}), the "
                                                     f"{_nth(t // per_node + 1)} is {nodelist[t // per_node]}")
            if args and TASK_IS_RANK.search(args):
                for t in ids:
                    a.task_rank[(f, step, t)] = t
                    a.said("task_rank", (f, step, t), f"srun -l task {t}: {header} gives each task its id as RANK "
                                                      f"(SLURM_PROCID)")


def _per_node(args: str, env: str, nnodes_listed: int, ntasks_seen: int) -> int | None:
    """Tasks per node of a step: --ntasks-per-node, else its tasks over its nodes (or the job's)."""
    if m := STEP_PER_NODE.search(args):
        return int(m.group(1)) or None
    ntasks = STEP_NTASKS.search(args) or JOB_NTASKS.search(env)
    nnodes = STEP_NNODES.search(args) or JOB_NNODES.search(env)
    n_t = int(ntasks.group(1)) if ntasks else ntasks_seen
    n_n = int(nnodes.group(1)) if nnodes else nnodes_listed
    return -(-n_t // n_n) if n_t and n_n else None


def _nth(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, f"{n}th")


def ensure(events: pl.DataFrame) -> pl.DataFrame:
    """The columns attribution reads, null where a stage did not make them."""
    need = {"w_task": pl.Int32, "w_pod": pl.String, "w_host": pl.String, "host": pl.String, "ip": pl.String,
            "wrapper": pl.String, "source": pl.String, "pid": pl.Int64, "proc": pl.String, "rank": pl.Int32,
            "dev": pl.Int32, "tid": pl.Int64, "local_rank": pl.Int32, "line": pl.Int64}
    missing = [pl.lit(None, t).alias(c) for c, t in need.items() if c not in events.columns]
    return events.with_columns(missing) if missing else events


def _epochs(ev: pl.DataFrame, a: Attribution) -> pl.Series:
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


def _ranks(ev: pl.DataFrame, a: Attribution, hints: DumpHints) -> None:
    """The rank maps, each entry with its witness: (node, pid) -> rank per process lifetime, local ranks, NCCL
    devices and bus ids, NCCL_DEBUG_FILE names, worker names, parallel sizes."""
    # lifetimes: the lines where the server started again, per file (the first start opens lifetime 1)
    starts = ev.filter(pl.col("text").str.contains(RESTART).fill_null(False)).group_by("file") \
        .agg(pl.col("line").unique().sort())
    a.restarts = {f: lines for f, lines in starts.iter_rows() if len(lines) > 1}
    ev = ev.with_columns(_epochs(ev, a).alias("_epoch"))
    # which lines a container's processes wrote: a container runtime's log, or a file where a vLLM process is pid 1
    # (its first process), but for what Ray relays from other nodes; a container sharing the host's pids is not one
    where = pl.concat_str([pl.col("file"), pl.col("node").fill_null("")], separator="\x00")
    pid1 = ev.filter((pl.col("pid") == 1) & pl.col("proc").is_not_null() & pl.col("ip").is_null()) \
        .select(where.alias("w"))["w"].unique().to_list()
    in_ns = pl.col("wrapper").is_in(list(CONTAINER_WRAPPERS)).fill_null(False) | (
        pl.col("ip").is_null() & where.is_in(pid1)).fill_null(False)
    in_ns = in_ns & ~pl.col("file").is_in(list(hints.host_pid_mode))
    ranks = ev.filter(pl.col("pid").is_not_null())
    cols = ["node", "pid", "file", "line", "_epoch"]
    assigned = ranks.select(*cols, pl.col("text").str.extract_groups(ASSIGNED).alias("g")).unnest("g") \
        .drop_nulls(["r"])
    world_lines = ranks.select(*cols, pl.col("text").str.extract_groups(WORLD_LINE).alias("g")).unnest("g") \
        .drop_nulls(["r"])
    worlds = [int(w) for w in assigned["w"].to_list() + world_lines["w"].to_list()]
    init = ranks.select(*cols, pl.col("text").str.extract_groups(NCCL_INIT).alias("g")).unnest("g").drop_nulls(["r"])
    comm = ranks.select(*cols, pl.col("text").str.extract_groups(NCCL_COMM).alias("g")).unnest("g").drop_nulls(["r"])
    nccl_worlds = [int(w) for w in init["w"].to_list() + comm["w"].to_list()]
    # torchelastic entries: (host, rank, local rank); agents' 'local_rank: L (pid: P)'
    elastic = ev.select("node", "file", "line", pl.col("text").str.extract_groups(ELASTIC_RANK).alias("g")) \
        .unnest("g").drop_nulls("r")
    printed = ev.select("node", "file", "line", pl.col("text").str.extract_groups(RANK_AND_LOCAL).alias("g")) \
        .unnest("g").drop_nulls("r")
    for node, f, ln, r, loc in pl.concat([elastic, printed]).iter_rows():
        if a.local_rank.setdefault((node, int(loc)), int(r)) == int(r):
            a.said("local", (node, int(loc)), f"local rank {loc} on {node} is rank {r} ({f}:{ln})")
    agents = ev.select("node", "file", "line", pl.col("text").str.extract_groups(AGENT_FAILED).alias("g")) \
        .unnest("g").drop_nulls("l")
    for node, f, ln, loc, pid in agents.iter_rows():
        a.pid_local.setdefault((node, int(pid)), int(loc))
        a.said("pid_local", (node, int(pid)), f"torchelastic 'local_rank: {loc} (pid: {pid})' on {f}:{ln}")
    for node, pid, loc, f, ln in ev.filter(pl.col("local_rank").is_not_null() & pl.col("pid").is_not_null()) \
            .group_by("node", "pid", "local_rank").agg(pl.col("file").first(), pl.col("line").min()).iter_rows():
        a.pid_local.setdefault((node, pid), int(loc))
        a.said("pid_local", (node, pid), f"its local rank prefix [default{loc}] on {f}:{ln}")
    known_rank = max([int(r) for r in elastic["r"].to_list()] or [-1])
    a.world_size = max(worlds) if worlds else (max(nccl_worlds) if nccl_worlds else None)
    if not worlds and a.world_size is not None and known_rank >= a.world_size:
        a.world_size = None  # NCCL's largest communicator is not the world (torchrun PP/TP groups)

    # (node, pid) -> rank, per lifetime: every observation, then the pids that keep one rank everywhere
    seen: dict[tuple, dict[tuple, tuple[int, str]]] = defaultdict(dict)   # (node, pid) -> {(file, epoch): (rank, why)}

    def observe(node, pid, f, epoch, r, why, weak=False):
        by_life = seen[(node, pid)]
        if weak and (f, epoch) in by_life:
            return
        by_life.setdefault((f, epoch), (int(r), why))

    for node, pid, f, ln, ep, r, w_, *_ in assigned.select(*cols, "r", "w").iter_rows():
        observe(node, pid, f, ep, r, f"'rank {r} in world size {w_}' on {f}:{ln}")
    for node, pid, f, ln, ep, w_, r, loc in world_lines.select(*cols, "w", "r", "l").iter_rows():
        observe(node, pid, f, ep, r, f"'world_size={w_} rank={r}' on {f}:{ln}", weak=True)
        a.pid_local.setdefault((node, pid), int(loc))
        if a.local_rank.setdefault((node, int(loc)), int(r)) == int(r):
            a.said("local", (node, int(loc)), f"local rank {loc} on {node} is rank {r} ({f}:{ln})")
    for node, pid, f, ln, ep, r, w_, dev, bus in init.select(*cols, "r", "w", "dev", "bus").iter_rows():
        a.pid_gpu.setdefault((node, pid), int(dev))
        key = (node, nccl_bus(bus))
        a.bus_gpu.setdefault(key, int(dev))
        a.said("bus_gpu", key, f"NCCL busId {bus} = cudaDev {dev} on {f}:{ln}")
        a.bus_pid.setdefault(key, pid)
        if a.world_size and int(w_) == a.world_size:
            observe(node, pid, f, ep, r, f"NCCL 'rank {r} nranks {w_}' (world) busId {bus} on {f}:{ln}", weak=True)
            if a.bus_rank.setdefault(key, int(r)) == int(r):
                a.said("bus_rank", key, f"NCCL busId {bus} (rank {r}) on {f}:{ln}")
    for node, pid, tid in ranks.filter(pl.col("tid").is_not_null() & (pl.col("tid") != pl.col("pid"))) \
            .select("node", "pid", "tid").unique().iter_rows():
        a.tid_pid.setdefault((node, int(tid)), pid)
    # any NCCL line names its process's CUDA device ('host:pid:tid [dev] NCCL ...')
    for node, pid, dev in ranks.filter(pl.col("dev").is_not_null() & (pl.col("source") == "nccl")) \
            .select("node", "pid", "dev").unique().iter_rows():
        a.pid_gpu.setdefault((node, pid), int(dev))
    for node, pid, f, ln, ep, r, w_ in comm.select(*cols, "r", "w").iter_rows():
        if a.world_size and int(w_) == a.world_size:
            observe(node, pid, f, ep, r, f"NCCL 'rank {r} nRanks {w_}' (world) on {f}:{ln}", weak=True)
    # NCCL_DEBUG_FILE-style names that carry the rank (nccl-rank6.log)
    for f in sorted(ev.filter(pl.col("source") == "nccl")["file"].unique().to_list()):
        m = NODE_FILE_NAME.search(f.rsplit("/", 1)[-1])
        if m:
            a.file_rank[f] = int(m.group(1))
            a.said("file_rank", f, f"its NCCL_DEBUG_FILE name {f.rsplit('/', 1)[-1]}")
    for (f, node, pid, ep) in ev.filter(pl.col("file").is_in(list(a.file_rank)) & pl.col("pid").is_not_null()) \
            .select("file", "node", "pid", "_epoch").unique().iter_rows():
        observe(node, pid, f, ep, a.file_rank[f], a.why[("file_rank", f)], weak=True)
    # the one process of a file that prints its lines with no prefix (V0's driver worker in the engine, a single
    # process run): its 'rank R in world size W' line gives its other unprefixed lines that rank
    bare = ev.filter(pl.col("pid").is_null() & pl.col("proc").is_null()) \
        .select("file", "line", "_epoch", pl.col("text").str.extract(ASSIGNED, 1).cast(pl.Int32).alias("r")) \
        .drop_nulls("r").group_by("file", "_epoch").agg(pl.col("r").unique(), pl.col("line").min())
    for f, ep, rs, ln in bare.iter_rows():
        if len(rs) == 1:
            a.bare_rank[(f, ep)] = rs[0]
            a.said("bare", (f, ep), f"the file's unprefixed process: 'rank {rs[0]} in world size ...' on {f}:{ln}")
    for (node, pid), by_life in seen.items():
        values = {r for r, _ in by_life.values()}
        if len(values) == 1:
            (r, why), = [min(by_life.values(), key=lambda v: v[1])]
            a.pid_rank[(node, pid)] = r
            a.said("pid", (node, pid), why)
        else:  # a pid reused by another process after a restart: each lifetime keeps its own rank
            for (f, epoch), (r, why) in by_life.items():
                a.life_rank[(node, pid, f, epoch)] = r
                a.said("life", (node, pid, f, epoch), why + " (this lifetime of the pid)")
    # pids seen only in a container's output are not the host pids the kernel prints
    in_container = ev.filter(pl.col("pid").is_not_null()).with_columns(in_ns.alias("_ns")).group_by("node", "pid") \
        .agg(pl.col("_ns").all().alias("_c"))
    a.container_pids = {(n, p) for n, p, c in in_container.iter_rows() if c}
    for host, inner in sorted(hints.pid_ns.items()):
        for node in {n for n, p in a.container_pids if p == inner} or {a.single_node}:
            a.host_pid.setdefault((node, host), inner)
    # parallel sizes, for worker names and device ranks when no map exists
    for pat, attr in ((TP_SIZE, "tp_size"), (PP_SIZE, "pp_size")):
        found = ev["text"].str.extract(pat, 1).drop_nulls()
        if len(found):
            setattr(a, attr, int(found.mode().sort()[0]))
    # a process known only by its local rank takes the global rank that local rank has on its node; with
    # the default CUDA_VISIBLE_DEVICES a worker's local rank is its CUDA device (NCCL's [dev])
    for (node, pid), loc in a.pid_local.items():
        if (node, loc) in a.local_rank and (node, pid) not in a.pid_rank:
            a.pid_rank[(node, pid)] = a.local_rank[(node, loc)]
            a.said("pid", (node, pid), f"{a.why.get(('pid_local', (node, pid)), 'its local rank')}; "
                                       f"{a.why.get(('local', (node, loc)), '')}".rstrip("; "))
    single_replica = len({n for n, _ in a.pid_gpu}) <= 1 and (
        a.world_size is None or a.tp_size is None or a.world_size == a.tp_size * (a.pp_size or 1))
    for (node, pid), dev in a.pid_gpu.items():
        if (node, pid) in a.pid_rank:
            continue
        if (node, dev) in a.local_rank:
            a.pid_rank[(node, pid)] = a.local_rank[(node, dev)]
            a.said("pid", (node, pid), f"its NCCL device [{dev}] = local rank {dev}; "
                                       f"{a.why.get(('local', (node, dev)), '')}".rstrip("; "))
        elif single_replica and a.tp_size and (a.pp_size or 1) == 1:
            a.pid_rank[(node, pid)] = dev  # one node, tensor parallel only: rank = TP rank = device
            a.said("pid", (node, pid), f"its NCCL device [{dev}] (one node, tensor parallel {a.tp_size} only)")
    _ray_device_ranks(ev, a)
    for (node, bus), pid in a.bus_pid.items():
        if (node, pid) in a.pid_rank and a.bus_rank.setdefault((node, bus), a.pid_rank[(node, pid)]) == \
                a.pid_rank[(node, pid)]:
            a.said("bus_rank", (node, bus), f"NCCL busId of pid {pid} ({a.why.get(('bus_gpu', (node, bus)), '')}); "
                                            f"pid {pid} is rank {a.pid_rank[(node, pid)]}: "
                                            f"{a.why.get(('pid', (node, pid)), '')}")
    first_line = {p: (f, ln) for p, f, ln in ev.filter(pl.col("proc").is_not_null()).group_by("proc")
                  .agg(pl.col("file").first(), pl.col("line").min()).iter_rows()}
    a.name_rank = _name_ranks(sorted(ev["proc"].drop_nulls().unique().to_list()), a)
    for p, r in a.name_rank.items():
        f, ln = first_line.get(p, ("", 0))
        sizes = f"TP {a.tp_size or 1} x PP {a.pp_size or 1}"
        a.said("name", p, f"the worker's name {p!r} ({sizes}; first on {f}:{ln})")
    # a single-GPU deployment whose processes print no name (V0, early V1): its output is rank 0's
    a.unnamed_rank0 = (a.tp_size or 0) * (a.pp_size or 1) == 1 and a.world_size in (None, 1) \
        and ev["proc"].is_null().all()
    for file, buses in hints.gpu_buses.items():
        node = a.file_node.get(file) or a.single_node
        for i, b in enumerate(buses):
            if a.bus_gpu.setdefault((node, b), i) == i:
                a.said("bus_gpu", (node, b), f"nvidia-smi in {file}: GPU {i} is {b}")
    # an HCA's kernel lines are about the GPU on its PCIe switch (its rail): 'mlx5_core ADDR mlx5_3:' names
    # the HCA at ADDR, nvidia-smi topo's PIX cell the GPU next to mlx5_3
    hca_gpu = {(a.file_node.get(f) or a.single_node, hca): (g, f) for f, by in hints.nic_gpu.items()
               for hca, g in by.items()}
    if hca_gpu:
        named = ev.filter(pl.col("source") == "kernel").select(
            "node", pl.col("text").str.extract_groups(HCA_NAMED).alias("g")).unnest("g").drop_nulls("hca").unique()
        for node, dom, bus, dev, hca in named.iter_rows():
            if (node, hca) in hca_gpu:
                g, f = hca_gpu[(node, hca)]
                if a.bus_gpu.setdefault((node, bus_key(dom, bus, dev)), g) == g:
                    a.said("bus_gpu", (node, bus_key(dom, bus, dev)),
                           f"the HCA {hca} at {bus_key(dom, bus, dev)} is on GPU {g}'s PCIe switch ({f})")


RAY_WORKERS = ("RayWorkerWrapper", "RayWorkerProc", "RayWorkerVllm")


def _ray_device_ranks(ev: pl.DataFrame, a: Attribution) -> None:
    """Ranks of Ray workers that printed no rank line (they died in communicator setup) from their NCCL device:
    vLLM's Ray executor numbers its workers node by node, the driver's node first, then the others by IP, each
    node's in device order. Only when every worker's node is known, the nodes hold the world evenly, and every
    rank the bundle does print agrees."""
    procs = set(ev["proc"].drop_nulls().unique().to_list())
    world = a.world_size or ((a.tp_size or 0) * (a.pp_size or 1) or None)
    if not world or not procs & set(RAY_WORKERS):
        return
    relayed = ev.filter(pl.col("ip").is_not_null() & pl.col("node").is_not_null())
    driver = ev.filter(pl.col("ip").is_null() & pl.col("proc").is_null() & pl.col("node").is_not_null()
                       & (pl.col("source") == "vllm"))
    heads = set(driver.filter(pl.col("file").is_in(relayed["file"].unique().to_list()))["node"].unique().to_list())
    workers = {n for n, _ in a.pid_gpu} | heads
    if len(heads) != 1 or len(workers) < 2 or world % len(workers):
        return
    head = next(iter(heads))
    node_ip = {n: ip for ip, n in sorted(a.ip_node.items()) if n in workers}
    others = sorted(workers - {head}, key=lambda n: node_ip.get(n, ""))
    if len(others) > 1 and not all(n in node_ip for n in others):
        return
    order, per_node = [head, *others], world // len(workers)
    derived = {(n, p): order.index(n) * per_node + d for (n, p), d in a.pid_gpu.items() if d < per_node}
    if any(a.pid_rank[k] != r for k, r in derived.items() if k in a.pid_rank) or len(derived) < len(a.pid_gpu):
        return
    for (n, p), r in derived.items():
        if (n, p) not in a.pid_rank:
            a.pid_rank[(n, p)] = r
            a.said("pid", (n, p), f"its NCCL device [{a.pid_gpu[(n, p)]}] on {n}, the {_nth(order.index(n) + 1)} "
                                  f"of {len(order)} nodes of {per_node} ranks each in vLLM's Ray order (the driver's "
                                  f"node {head} first, then by IP)")


def _gpus(ev: pl.DataFrame, a: Attribution, hints: DumpHints) -> None:
    """Each node's GPUs by bus id: index, UUID, board serial (nvidia-smi -q / -L / table, the kernel's own
    'GPU at PCI:... GPU-<uuid>' and serial lines), for the report's hardware causes."""
    for f, gpus in sorted(hints.gpu_ids.items()):
        node = a.file_node.get(f) or a.single_node
        for g in gpus:
            bus = g.get("bus_id")
            if not bus:
                bus = next((b for (n, b), i in a.bus_gpu.items() if n == node and str(i) == g.get("index")), None)
            if bus:
                _gpu_entry(a, node, bus, g, g["where"])
    kern = ev.filter((pl.col("source") == "kernel") & pl.col("text").str.contains("GPU at PCI|Board Serial Number"))
    last_bus: dict[tuple, str] = {}
    for f, ln, node, text in kern.sort("file", "line").select("file", "line", "node", "text").iter_rows():
        if m := re.search(GPU_AT, text):
            bus = bus_key(m.group("dom"), m.group("bus"), m.group("dev"))
            last_bus[(f, node)] = bus
            _gpu_entry(a, node, bus, {"uuid": m.group("uuid")}, f"{f}:{ln}")
        elif (m := re.search(GPU_SERIAL, text)) and (f, node) in last_bus:
            _gpu_entry(a, node, last_bus[(f, node)], {"serial": m.group("serial")}, f"{f}:{ln}")
    for (node, bus), i in a.bus_gpu.items():
        if (node, bus) in a.gpus:
            a.gpus[(node, bus)]["index"] = i
    for g in a.gpus.values():   # `-q -i N` prints no index: its minor number (the /dev/nvidiaN it is) is the best
        if "index" not in g and "minor" in g:
            g["index"] = g["minor"]


def _gpu_entry(a: Attribution, node: str | None, bus: str, fields: dict, where: str) -> None:
    g = a.gpus.setdefault((node, bus), {"bus_id": bus})
    for k in ("index", "uuid", "serial", "minor"):
        v = fields.get(k)
        if v not in (None, "", "N/A") and k not in g:
            g[k] = int(v) if k in ("index", "minor") and str(v).isdigit() else v
            g.setdefault("where", []).append(where)
    if g.get("uuid"):
        a.uuid_bus.setdefault(g["uuid"].lower(), (node, bus))
    if g.get("serial"):
        a.serial_bus.setdefault(str(g["serial"]), (node, bus))


def gpu_identity(a: Attribution, node: str | None, bus: str | None = None, index: int | None = None,
                 uuid: str | None = None, serial: str | None = None) -> dict | None:
    """What the bundle says about one GPU: {index, bus_id, uuid, serial} (None where unknown; None when the GPU
    cannot be named), from any of its names: PCI bus id, index on its node, UUID, board serial."""
    key = None
    if bus:
        key = (node, bus) if (node, bus) in a.gpus or (node, bus) in a.bus_gpu else \
            next(((n, b) for (n, b) in a.gpus if b == bus), (node, bus))
    elif uuid and uuid.lower() in a.uuid_bus:
        key = a.uuid_bus[uuid.lower()]
    elif serial and serial in a.serial_bus:
        key = a.serial_bus[serial]
    elif index is not None:
        key = next(((n, b) for (n, b), i in a.bus_gpu.items() if n == node and i == index), None)
    if key is None or (key not in a.gpus and key not in a.bus_gpu):   # an address no GPU has (an HCA's)
        return None if index is None else {"index": index, "bus_id": None, "uuid": None, "serial": None}
    g = a.gpus.get(key, {})
    idx = g.get("index", a.bus_gpu.get(key, index))
    out = {"index": idx, "bus_id": key[1], "uuid": g.get("uuid"), "serial": g.get("serial")}
    return out if any(v is not None for v in out.values()) else None


SHORT_HOST = r"^([A-Za-z][\w-]*)\..*$"
NODE_SRC = ("span", "subject", "host", "ip", "ip_raw", "task", "pod", "file", "named", "single")  # node_src 1..
RANK_SRC = ("line", "subject", "life", "pid", "file_rank", "bare", "task", "name", "local", "rank0", "kernel_task",
            "kernel_bus", "kernel_local")  # rank_src 1..


def _code(kind: str) -> int:
    """rank_src's code for a kind of witness."""
    return RANK_SRC.index(kind) + 1


def _bare(ev: pl.DataFrame, a: Attribution) -> pl.Series:
    """The rank of a file's unprefixed process, on its unprefixed vLLM lines and tracebacks."""
    if not a.bare_rank:
        return pl.repeat(None, ev.height, dtype=pl.Int32, eager=True)
    right = pl.DataFrame([(f, e, r) for (f, e), r in a.bare_rank.items()],
                         schema={"file": pl.String, "_epoch": pl.Int32, "_v": pl.Int32}, orient="row")
    got = ev.select("file", _epochs(ev, a).alias("_epoch")).join(right, on=["file", "_epoch"], how="left",
                                                                  maintain_order="left")["_v"]
    own = ev.select(pl.col("pid").is_null() & pl.col("proc").is_null()
                    & pl.col("source").is_in(["vllm", "traceback"])).to_series()
    return pl.select(pl.when(pl.lit(own)).then(pl.lit(got))).to_series()


def _hosts(ev: pl.DataFrame) -> pl.DataFrame:
    """`_h`: the host a line names itself (NCCL, torchelastic, journald), cut to its short name. A wrapper's
    host (journald's) is where the line was written: a line Ray relays from a worker on another node (its
    prefix's ip=) is that node's, not the driver's."""
    written = pl.when(pl.col("ip").is_null()).then(pl.col("w_host"))
    named = ev.select(pl.coalesce(pl.col("host"), written)).to_series()
    if (one := the_one(named)) is not MIXED:  # (cut by the same engine, once)
        return ev.with_columns(pl.lit(pl.Series([one], dtype=pl.String).str.replace(SHORT_HOST, "${1}")[0],
                                      pl.String).alias("_h"))
    return ev.with_columns(named.str.replace(SHORT_HOST, "${1}").alias("_h"))


def _mapped(ev: pl.DataFrame, col: str, mapping: dict, dtype: pl.DataType) -> pl.Expr:
    """`col` looked up in `mapping` (null where it has no entry): a hash lookup, no join of the whole frame."""
    if not mapping or col not in ev.columns:
        return pl.lit(None, dtype)
    if (one := the_one(ev[col])) is not MIXED:
        return pl.lit(mapping.get(one), dtype)
    return pl.col(col).replace_strict(mapping, default=None, return_dtype=dtype)


def _own_host(ev: pl.DataFrame, a: Attribution) -> pl.Expr:
    """The host a line prints, as a node: a pod's or container's hostname becomes its node (or nothing), an IP
    its host."""
    table = {**{ip: n for ip, n in a.ip_node.items()}, **a.alias_node}
    if not table:
        return pl.col("_h")
    if (one := the_one(ev["_h"])) is not MIXED:
        return pl.lit(table.get(one, one) if one is not None else None, pl.String)
    known = pl.col("_h").is_in(list(table))
    return pl.when(known).then(pl.col("_h").replace_strict(
        {k: v for k, v in table.items() if v is not None}, default=None, return_dtype=pl.String)) \
        .otherwise(pl.col("_h"))


def _by_file_line(ev: pl.DataFrame, table: dict[tuple[str, int], object], dtype: pl.DataType = pl.String
                  ) -> pl.Series:
    """`table`'s value at each row's (file, line), null elsewhere."""
    if not table:
        return pl.repeat(None, ev.height, dtype=dtype, eager=True)
    files = {f for f, _ in table}
    if (one := the_one(ev["file"])) is not MIXED and one not in files:
        return pl.repeat(None, ev.height, dtype=dtype, eager=True)
    right = pl.DataFrame([(f, ln, v) for (f, ln), v in table.items()],
                         schema={"file": pl.String, "line": pl.Int64, "_v": dtype}, orient="row")
    return ev.select("file", "line").join(right, on=["file", "line"], how="left", maintain_order="left")["_v"]


def _spans(ev: pl.DataFrame, a: Attribution) -> pl.Series:
    """The node of the object (a Kubernetes event in events JSON) whose lines hold each row, null elsewhere."""
    out = pl.repeat(None, ev.height, dtype=pl.String, eager=True)
    if not a.span_node:
        return out
    files, lines = ev["file"], ev["line"].to_numpy()
    vals = np.full(ev.height, None, dtype=object)
    for f, spans in a.span_node.items():
        idx = (files == f).fill_null(False).arg_true().to_numpy()
        if not len(idx):
            continue
        starts = np.array([s for s, _, _ in spans], dtype=np.int64)
        ends = np.array([e for _, e, _ in spans], dtype=np.int64)
        nodes = np.array([n for _, _, n in spans], dtype=object)
        i = np.searchsorted(starts, lines[idx], side="right") - 1
        inside = (i >= 0) & (lines[idx] <= ends[np.clip(i, 0, None)])
        vals[idx[inside]] = nodes[i[inside]]
    return pl.Series(vals.tolist(), dtype=pl.String)


def step_of(a: Attribution, file: str, line: int) -> int:
    return int(np.searchsorted(np.array(a.steps.get(file, []), dtype=np.int64), line, side="right"))


def _by_task(ev: pl.DataFrame, a: Attribution, table: dict[tuple[str, int, int], object], dtype) -> pl.Series:
    """`table`'s value at each labelled row's (file, Slurm step, task), null elsewhere."""
    if not table or ev["w_task"].null_count() == ev.height:
        return pl.repeat(None, ev.height, dtype=dtype, eager=True)
    steps = np.zeros(ev.height, dtype=np.int64)
    files, lines = ev["file"], ev["line"].to_numpy()
    for f, st in a.steps.items():
        idx = (files == f).fill_null(False).arg_true().to_numpy()
        if len(idx):
            steps[idx] = np.searchsorted(np.array(st, dtype=np.int64), lines[idx], side="right")
    right = pl.DataFrame([(f, s, t, v) for (f, s, t), v in table.items()],
                         schema={"file": pl.String, "_step": pl.Int64, "w_task": pl.Int32, "_v": dtype}, orient="row")
    return ev.select("file", pl.Series("_step", steps), pl.col("w_task").cast(pl.Int32)) \
        .join(right, on=["file", "_step", "w_task"], how="left", maintain_order="left")["_v"]


def _coded(exprs: list[pl.Expr]) -> tuple[pl.Expr, pl.Expr]:
    """coalesce(exprs) and the 1-based position of the one that gave the value (null: none)."""
    code = pl.lit(None, pl.Int8)
    for i, e in reversed(list(enumerate(exprs, 1))):
        code = pl.when(e.is_not_null()).then(pl.lit(i, pl.Int8)).otherwise(code)
    return pl.coalesce(exprs), code


def _apply_nodes(ev: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    ev = ensure(ev)
    node, code = _coded([pl.lit(_spans(ev, a)), pl.lit(_by_file_line(ev, a.subject_node)), _own_host(ev, a),
                         _mapped(ev, "ip", a.ip_node, pl.String), pl.col("ip"),
                         pl.lit(_by_task(ev, a, a.task_node, pl.String)), _mapped(ev, "w_pod", a.pod_node, pl.String),
                         _mapped(ev, "file", a.file_node, pl.String)])
    ev = ev.with_columns(node.alias("node"), code.alias("node_src")).drop("_h")
    # a line with no node of its own that names one of the bundle's nodes (a Kubernetes event row,
    # 'assigned ... to <node>'); else the bundle's only node
    missing = ev["node"].is_null()
    if a.nodes and missing.any():
        names = "|".join(re.escape(n) for n in sorted(a.nodes, key=len, reverse=True))
        idx = missing.arg_true()
        named = ev["text"].gather(idx).str.extract(rf"(?:^|[\s/=:'\"(])({names})(?:$|[\s,.;:'\")])", 1)
        ev = ev.with_columns(ev["node"].scatter(idx, named), ev["node_src"].scatter(idx, _code_where(named, 9)))
    if a.single_node:
        ev = ev.with_columns(pl.when(pl.col("node").is_null()).then(pl.lit(10, pl.Int8)).otherwise(pl.col("node_src"))
                             .alias("node_src"), pl.col("node").fill_null(a.single_node))
    return ev


def _code_where(values: pl.Series, code: int) -> pl.Series:
    """`code` where `values` holds something, null elsewhere."""
    return pl.select(pl.when(pl.lit(values).is_not_null()).then(pl.lit(code, pl.Int8))).to_series() \
        if len(values) else pl.Series([], dtype=pl.Int8)


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


def _by_life(ev: pl.DataFrame, a: Attribution) -> pl.Series:
    """The rank of each row's process in its lifetime, for the pids that were several processes."""
    if not a.life_rank or ev["pid"].null_count() == ev.height:
        return pl.repeat(None, ev.height, dtype=pl.Int32, eager=True)
    right = pl.DataFrame([(n, p, f, e, r) for (n, p, f, e), r in a.life_rank.items()],
                         schema={"node": pl.String, "pid": pl.Int64, "file": pl.String, "_epoch": pl.Int32,
                                 "_v": pl.Int32}, orient="row")
    return ev.select("node", "pid", "file", _epochs(ev, a).alias("_epoch")) \
        .join(right, on=["node", "pid", "file", "_epoch"], how="left", nulls_equal=True, maintain_order="left")["_v"]


def apply(events: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """Add `node`, `rank`, `gpu` to parsed events with what `learn` found (works batch by batch), and
    `node_src` / `rank_src`: which witness named them (NODE_SRC, RANK_SRC; `witness` says it in words)."""
    ev = _apply_nodes(_hosts(_elastic_entries(ensure(events))), a)
    rank, code = _coded([pl.col("rank"), pl.lit(_by_file_line(ev, a.subject_rank, pl.Int32)), pl.lit(_by_life(ev, a)), pl.lit(_by_node_pid(ev, a.pid_rank)),
                         _mapped(ev, "file", a.file_rank, pl.Int32), pl.lit(_bare(ev, a)),
                         pl.lit(_by_task(ev, a, a.task_rank, pl.Int32)), _mapped(ev, "proc", a.name_rank, pl.Int32)])
    ev = ev.with_columns(rank.cast(pl.Int32).alias("rank"), code.alias("rank_src"),
                         pl.coalesce("dev", pl.lit(_by_node_pid(ev, a.pid_gpu))).cast(pl.Int32).alias("gpu"))
    if a.local_rank and "local_rank" in ev.columns:
        # torchelastic's agent reports a child's failure: 'failed (exitcode: -6) local_rank: 1 (pid: 4326)'
        ev = ev.with_columns(pl.coalesce("local_rank", pl.col("text").str.extract(AGENT_FAILED, 1)
                                         .cast(pl.Int32)).alias("local_rank"))
        lm = pl.DataFrame([(n, l, r) for (n, l), r in a.local_rank.items()],
                          schema={"node": pl.String, "local_rank": pl.Int32, "_lr": pl.Int32}, orient="row")
        ev = ev.join(lm, on=["node", "local_rank"], how="left").with_columns(
            pl.when(pl.col("rank").is_null() & pl.col("_lr").is_not_null()).then(pl.lit(_code("local"), pl.Int8))
            .otherwise(pl.col("rank_src")).alias("rank_src"),
            pl.coalesce("rank", "_lr").alias("rank")).drop("_lr")
    if a.unnamed_rank0:
        zero = pl.col("source").is_in(["vllm", "traceback"]) & pl.col("rank").is_null()
        ev = ev.with_columns(pl.when(zero).then(pl.lit(_code("rank0"), pl.Int8)).otherwise(pl.col("rank_src"))
                             .alias("rank_src"),
                             pl.when(zero).then(pl.lit(0, pl.Int32)).otherwise(pl.col("rank")).alias("rank"))
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
    """Global rank from a worker's name (patterns/attribution.toml [[worker]]), when the layout makes it
    unambiguous. On a single-GPU deployment the engine core is the only worker: rank 0."""
    w = builtin_witnesses()
    out = {}
    single = (a.tp_size or 0) * (a.pp_size or 1) == 1 and a.world_size in (None, 1)
    for p in procs:
        hit = w.worker(p)
        if not hit:
            continue
        entry, g = hit
        if single and entry.single:
            out[p] = 0
            continue
        if "engine" in g and "tp" not in g:
            # one GPU per data-parallel engine: the engine's index is its rank
            if a.tp_size == 1 and (a.pp_size or 1) == 1 and a.world_size and g["engine"] < a.world_size:
                out[p] = g["engine"]
            continue
        tp = g.get("tp")
        if tp is None:
            continue
        dp, pp = g.get("dp", 0), g.get("pp", 0)
        if dp and (a.world_size is None or a.tp_size is None):
            continue
        if pp and a.tp_size is None:
            continue
        tp_size, pp_size = a.tp_size or 1, a.pp_size or 1
        if not dp and not pp and a.world_size and a.tp_size and a.world_size != a.tp_size * pp_size:
            continue  # several replicas: the TP rank alone does not give the global rank
        out[p] = (dp * pp_size + pp) * tp_size + int(tp)
    return out


def worker_rank(a: Attribution, name: str | None, node: str | None = None) -> int | None:
    """The global rank a worker's name gives (as it appears in a prefix or in a message: 'VllmWorker-7'), on
    `node`: from the name's parallel ranks, else its local index through the node's local ranks."""
    if not name:
        return None
    if name in a.name_rank:
        return a.name_rank[name]
    hit = builtin_witnesses().worker(name)
    if not hit:
        return None
    g = hit[1]
    got = _name_ranks([name], a).get(name)
    if got is None and "local" in g and (node, g["local"]) in a.local_rank:
        got = a.local_rank[(node, g["local"])]
    return got


def _kernel(ev: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """Kernel lines take a rank from the task or the PCI device they are about (worked out on the kernel
    rows alone: a batch of application logs has none)."""
    idx = (ev["source"] == "kernel").fill_null(False).arg_true()
    if not len(idx):
        return ev
    sub = _kernel_gpu(_kernel_task(ev[["node", "text", "rank", "gpu", "rank_src"]][idx], a), a)
    return ev.with_columns(ev["rank"].cast(pl.Int32).scatter(idx, sub["rank"].cast(pl.Int32)),
                           ev["gpu"].cast(pl.Int32).scatter(idx, sub["gpu"].cast(pl.Int32)),
                           ev["rank_src"].cast(pl.Int8).scatter(idx, sub["rank_src"].cast(pl.Int8)))


def _task_ranks(a: Attribution) -> dict[tuple[str | None, int], int]:
    """(node, task id the kernel prints) -> rank: host pids only (a container's own pids are not what the kernel
    prints, unless the bundle maps them: NSpid), and threads of those processes."""
    out: dict[tuple[str | None, int], int] = {}
    for (n, p), r in a.pid_rank.items():
        if (n, p) not in a.container_pids:
            out.setdefault((n, p), r)
    for (n, host), inner in a.host_pid.items():
        if (n, inner) in a.pid_rank:
            out.setdefault((n, host), a.pid_rank[(n, inner)])
    for (n, t), p in a.tid_pid.items():
        if (n, p) in out:
            out.setdefault((n, t), out[(n, p)])
    return out


def _kernel_task(kern: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """A kernel line about a task (a segfault, an OOM kill) takes the rank of the process it names (of the
    process a crashed thread belongs to)."""
    table = _task_ranks(a)
    if not table:
        return kern
    tr = pl.DataFrame([(n, t, r) for (n, t), r in table.items()],
                      schema={"node": pl.String, "_task": pl.Int64, "_trank": pl.Int32}, orient="row")
    text = kern["text"]
    named = text.str.contains(KERNEL_TASK_WORDS).fill_null(False).arg_true()  # (the few lines worth reading)
    read = text.gather(named).to_frame().select(pl.coalesce(pl.col("text").str.extract(p, 1) for p in KERNEL_TASK))
    task = at_rows(kern.height, named, read.to_series().cast(pl.Int64, strict=False))
    return kern.with_columns(task.alias("_task")) \
        .join(tr, on=["node", "_task"], how="left", maintain_order="left") \
        .with_columns(pl.when(pl.col("rank").is_null() & pl.col("_trank").is_not_null())
                      .then(pl.lit(_code("kernel_task"), pl.Int8))
                      .otherwise(pl.col("rank_src")).alias("rank_src"),
                      pl.coalesce("rank", "_trank").alias("rank")).drop("_task", "_trank")


def _kernel_bus(text: pl.Series) -> pl.Series:
    """The PCI device each kernel line is about (dddd:bb:dd), null where none."""
    first, aer = text.str.extract_groups(PCI).struct.unnest(), text.str.extract_groups(AER_SOURCE).struct.unnest()
    pci = aer.select(pl.when(aer["bus"].is_not_null()).then(aer[c]).otherwise(first[c]) for c in ("dom", "bus", "dev"))
    return pci.select(pl.when(pl.col("bus").is_not_null()).then(pl.concat_str([
        pl.col("dom").fill_null("0000").str.slice(-4).str.to_lowercase(), pl.lit(":"),
        pl.col("bus").str.to_lowercase(), pl.lit(":"), pl.col("dev").str.to_lowercase()]))).to_series()


def _kernel_gpu(kern: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """A kernel line about a PCI device (Xid, AER, an HCA on a GPU's rail) takes that GPU and its rank."""
    about = kern["text"].str.contains(PCI_WORDS).fill_null(False).arg_true()
    if not len(about):
        return kern
    bus = _kernel_bus(kern["text"].gather(about))  # (an address is searched for only in the lines about a device)
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
    lr = pl.DataFrame([(n, g, r) for (n, g), r in _gpu_ranks(a).items()],
                      schema={"node": pl.String, "_lgpu": pl.Int32, "_lrank": pl.Int32}, orient="row")
    out = (kern.join(br, on=["node", "_bus"], how="left", maintain_order="left")
           .join(bg.rename({"_gnode": "node"}), on=["node", "_bus"], how="left", maintain_order="left")
           .join(bg_any, on="_bus", how="left", maintain_order="left")
           .with_columns(pl.when(pl.col("_bus").is_not_null()).then(pl.coalesce("gpu", "_bgpu", "_bgpu_any"))
                         .otherwise(pl.col("gpu")).cast(pl.Int32).alias("gpu"))
           .join(lr, left_on=["node", "gpu"], right_on=["node", "_lgpu"], how="left", maintain_order="left"))
    fresh = pl.col("_bus").is_not_null() & pl.col("rank").is_null()
    return (out.with_columns(
        pl.when(fresh & pl.col("_brank").is_not_null()).then(pl.lit(_code("kernel_bus"), pl.Int8))
        .when(fresh & pl.col("_lrank").is_not_null()).then(pl.lit(_code("kernel_local"), pl.Int8))
        .otherwise(pl.col("rank_src")).alias("rank_src"),
        pl.when(pl.col("_bus").is_not_null()).then(pl.coalesce("rank", "_brank", "_lrank"))
        .otherwise(pl.col("rank")).alias("rank"))
        .drop("_bus", "_brank", "_bgpu", "_bgpu_any", "_lrank"))


def _gpu_ranks(a: Attribution) -> dict[tuple[str | None, int], int]:
    """(node, GPU index) -> rank: with the default CUDA_VISIBLE_DEVICES a worker's local rank is its GPU index,
    and so is its NCCL [dev]."""
    by_dev = defaultdict(set)
    for (n, p), g in a.pid_gpu.items():
        if (n, p) in a.pid_rank:
            by_dev[(n, g)].add(a.pid_rank[(n, p)])
    return {k: next(iter(r)) for k, r in by_dev.items() if len(r) == 1} | a.local_rank


# ------------------------------------------------------------------------------------------------
# which witness named an event's node and rank (the report's origin.node_from / rank_from)
# ------------------------------------------------------------------------------------------------
def witness(a: Attribution, row: dict) -> tuple[str | None, str | None]:
    """(node_from, rank_from): in words, the witness that named the node and the rank of one event (a row of the
    analysis' events: file, line, node, rank, node_src, rank_src, host, ip, pid, ...). None where the event has
    no node or rank, or where they were not attribution's (another stage shared them)."""
    return _node_from(a, row), _rank_from(a, row)


def _get(row: dict, k: str):
    v = row.get(k)
    return None if v is None or (isinstance(v, float) and v != v) else v


def _node_from(a: Attribution, row: dict) -> str | None:
    node, f, ln = _get(row, "node"), _get(row, "file"), _get(row, "line")
    src = _get(row, "node_src")
    kind = NODE_SRC[src - 1] if src else None
    if node is None or kind is None:
        return None
    if kind == "span":
        start = next((s for s, e, n in a.span_node.get(f, []) if s <= ln <= e), None)
        return a.why.get(("span", (f, start)))
    if kind == "subject":
        return a.why.get(("subject", (f, ln)))
    if kind == "host":
        h = short_host(_get(row, "host") or _get(row, "w_host"))
        text = f"{_host_field(_get(row, 'source'), _get(row, 'wrapper'))} {h!r} on line {ln}"
        if h in a.alias_node:
            return f"{text}: {a.why.get(('alias', h), '')}"
        if is_ip(h) and h != node:
            return f"{text}, via {a.why.get(('ip', h), '')}"
        return text
    if kind == "ip":
        ip = _get(row, "ip")
        return f"Ray ip={ip} via {a.why.get(('ip', ip), 'a host <-> IP tie')}"
    if kind == "ip_raw":
        return f"Ray ip={_get(row, 'ip')} (no host named for that IP: the IP is the name)"
    if kind == "task":
        t = _get(row, "w_task")
        return a.why.get(("task", (f, step_of(a, f, ln), t)))
    if kind == "pod":
        pod = _get(row, "w_pod")
        return f"kubectl --prefix pod {pod} on line {ln}, on {a.pod_node.get(pod)} ({a.why.get(('pod', pod), '')})"
    if kind == "file":
        return a.why.get(("file", f))
    if kind == "named":
        return f"the node the line names ({node}, line {ln})"
    return a.why.get(("single", node), "the bundle's only node")


def _rank_from(a: Attribution, row: dict) -> str | None:
    rank, f, ln = _get(row, "rank"), _get(row, "file"), _get(row, "line")
    node, pid = _get(row, "node"), _get(row, "pid")
    src = _get(row, "rank_src")
    kind = RANK_SRC[src - 1] if src else None
    if rank is None or kind is None:
        return None
    if kind == "line":
        if re.search(ELASTIC_FIELD, _get(row, "text") or ""):
            return f"its torchelastic failure entry ('rank : {rank}', line {ln})"
        return f"the line's own rank label ([rank{rank}]: or [job,{rank}]<stdout>:, line {ln})"
    if kind == "subject":
        return a.why.get(("subject_rank", (f, ln)))
    where = f"pid {pid}" + (f" on {node}" if node is not None else "")  # (no node: a bundle of one machine)
    if kind == "life":
        epoch = int(_epochs(pl.DataFrame({"file": [f], "line": [ln]}), a)[0])
        return f"{where}: " + a.why.get(("life", (node, pid, f, epoch)), "")
    if kind == "pid":
        return f"{where}: " + a.why.get(("pid", (node, pid)), "")
    if kind == "file_rank":
        return a.why.get(("file_rank", f))
    if kind == "bare":
        epoch = int(_epochs(pl.DataFrame({"file": [f], "line": [ln]}), a)[0])
        return a.why.get(("bare", (f, epoch)))
    if kind == "task":
        t = _get(row, "w_task")
        return a.why.get(("task_rank", (f, step_of(a, f, ln), t)))
    if kind == "name":
        return a.why.get(("name", _get(row, "proc")))
    if kind == "local":
        loc = _get(row, "local_rank")
        return a.why.get(("local", (node, loc)), f"local rank {loc} on {node}")
    if kind == "rank0":
        return "a deployment of one GPU whose processes print no name: rank 0"
    text = _get(row, "text") or ""
    if kind == "kernel_task":
        task = next((int(m.group(1)) for p in KERNEL_TASK if (m := re.search(p, text))), None)
        inner = a.host_pid.get((node, task))
        proc = a.tid_pid.get((node, task), task) if inner is None else inner
        how = f"host pid {task} is pid {inner} in its container (NSpid); " if inner is not None else \
            (f"thread {task} of pid {proc}; " if proc != task else "")
        return f"the kernel names task {task}: {how}pid {proc} on {node}: {a.why.get(('pid', (node, proc)), '')}"
    bus = _kernel_bus(pl.Series([text]))[0]
    if kind == "kernel_bus":
        return f"the GPU at PCI {bus}: {a.why.get(('bus_rank', (node, bus)), '')}"
    gpu = _get(row, "gpu")
    return f"the GPU at PCI {bus} is GPU {gpu} ({a.why.get(('bus_gpu', (node, bus)), 'nvidia-smi')}); " + \
        a.why.get(("local", (node, gpu)), f"GPU {gpu} is local rank {gpu} on {node}")


def event_gpu(a: Attribution, row: dict) -> dict | None:
    """The identity of the GPU an event is about (its PCI address in a kernel line, a UUID or board serial it
    prints, else its process's device): {index, bus_id, uuid, serial}."""
    node, text = _get(row, "node"), _get(row, "text") or ""
    if _get(row, "source") == "kernel" and re.search(PCI_WORDS, text):
        bus = _kernel_bus(pl.Series([text]))[0]
        if bus:
            return gpu_identity(a, node, bus=bus)
    if m := re.search(r"GPU-[0-9a-fA-F]{8}-[0-9a-fA-F-]{27,}", text):
        if got := gpu_identity(a, node, uuid=m.group(0)):
            return got
    if m := re.search(r"[Ss]erial[ :]+(\d{10,})", text):
        if got := gpu_identity(a, node, serial=m.group(1)):
            return got
    gpu = _get(row, "gpu")
    return gpu_identity(a, node, index=gpu) if gpu is not None else None
