"""Load patterns/attribution.toml: what the witnesses of a line's node, process and rank look like (folder names,
host <-> IP ties, log lines that name a pod's node, a file's host, the node a line is about, Slurm tasks, vLLM
worker names), validated on load with file:line for every problem."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from k3logs.errors import CatalogueError, SourceLocation
from k3logs.resources import data_dir

from .cache import content_key, kept
from .read import (Prefiltered, Problems, holds_literal, read_toml_or_raise, rust_line_problem, samples_of,
                   table_starts)

LINE_KINDS = {
    "pod_node": {"pod", "node"}, "file_host": {"host"}, "line_host": {"host"}, "subject": set(),
    "ray_node": {"ip"}, "nodelist": {"nodelist"}, "step": {"args"}, "task_hosts": {"host", "tasks"},
    "task_host": {"host"}, "pid_ns": {"host_pid", "pid"}, "ray_head": {"ip"}, "about_pod": {"pod"},
    "own_ip": {"ip"}, "starts_ray": {"host"}, "remote_raise": {"pid", "ip"}, "message_node": {"ip"},
    "container_listed": {"container"},
    "section_host": {"host"}, "section_end": set(),
}
WORKER_GROUPS = {"dp", "pp", "tp", "local", "engine"}

# the [[rank_line]] names k3logs/diagnose/attribution.py reads
RANK_LINES = ("assigned", "driver_writer", "launched", "world_line", "dp_world", "agent_failed", "elastic_rank",
              "rank_and_local", "nccl_init", "nccl_comm",
              "nccl_boot", "tp_size", "pp_size", "pci", "aer_source", "hca_named", "gpu_at", "gpu_serial", "gpu_listed",
              "visible_devices",
              "kernel_task_crash", "kernel_task_killed", "kernel_task_oom", "kernel_task_xid")


@dataclass(frozen=True)
class LineWitness(Prefiltered):
    name: str
    kind: str
    prefilter: tuple[str, ...]
    regex: re.Pattern
    samples: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    no_match: tuple[str, ...]
    location: SourceLocation
    first_line: bool = False   # read only on a text's first line that holds anything (never a kept log line)


@dataclass(frozen=True)
class WorkerName:
    name: str
    regex: re.Pattern
    single: bool      # rank 0 on a deployment of one GPU
    samples: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    no_match: tuple[str, ...]
    location: SourceLocation


@dataclass(frozen=True)
class HostIp:
    name: str
    regex: re.Pattern
    samples: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    no_match: tuple[str, ...]
    location: SourceLocation
    in_logs: bool = False   # also read on log lines (a form no log line writes for anything else)


@dataclass(frozen=True)
class Witnesses:
    not_node_dirs: frozenset[str]
    generic_dir: re.Pattern
    host_dir: re.Pattern
    container_dir: re.Pattern
    folder_samples: tuple[tuple[str, ...], tuple[str, ...]]   # (node, not_node)
    not_host: re.Pattern
    host_samples: tuple[tuple[str, ...], tuple[str, ...]]
    host_ips: tuple[HostIp, ...]
    lines: tuple[LineWitness, ...]
    workers: tuple[WorkerName, ...]
    rank_lines: dict[str, str] = field(default_factory=dict)   # [[rank_line]]: name -> regex (Rust syntax)
    rank_keep: tuple[str, ...] = ()   # the literals of the rank lines analyze keeps (their `keep`)

    def rank_line(self, name: str) -> str:
        return self.rank_lines[name]

    def is_node_folder_name(self, name: str) -> bool:
        """Whether a folder named `name` may stand for a node by its name alone (it looks like a host)."""
        return bool(self.host_dir.match(name)) and not self.is_generic_folder(name) and self.is_host(name)

    def is_container_folder(self, name: str) -> bool:
        """A folder named by a container's id: one container's files, whose host is the one they name."""
        return bool(self.container_dir.match(name))

    def is_generic_folder(self, name: str) -> bool:
        """A layout's, a ticket's or a collection's folder: never a node, whatever its files say."""
        return name.lower() in self.not_node_dirs or bool(self.generic_dir.match(name))

    def is_host(self, token: str | None) -> bool:
        """Whether `token` may name a host (not an interface, a file, a duration, 'localhost')."""
        return bool(token) and not self.not_host.match(token)

    @cached_property
    def in_lines(self) -> tuple[LineWitness, ...]:
        """The witnesses read on any line (a first line's are read from the dump's text: their literals would keep
        every line of a log). Once: attribution asks it for every line it reads."""
        return tuple(w for w in self.lines if not w.first_line)

    @property
    def prefilters(self) -> tuple[str, ...]:
        return tuple(sorted({p for w in self.in_lines for p in w.prefilter}))

    @property
    def folded_prefilters(self) -> tuple[str, ...]:
        """The prefilters of case-insensitive witnesses, which a line may hold in any case."""
        return tuple(sorted({p for w in self.in_lines if w.case_insensitive for p in w.prefilter}))

    def of_kind(self, *kinds: str) -> tuple[LineWitness, ...]:
        return tuple(w for w in self.lines if w.kind in kinds)

    def worker(self, proc: str | None) -> tuple[WorkerName, dict[str, int]] | None:
        """The worker-name entry `proc` matches and the numbers it carries ({'pp': 1, 'tp': 2})."""
        if not proc:
            return None
        for w in self.workers:
            m = w.regex.match(proc)
            if m:
                return w, {k: int(v) for k, v in m.groupdict().items() if v is not None}
        return None


def expand_nodelist(text: str) -> list[str]:
    """Slurm's compressed host lists: 'gpu-b[05-07,09],cpu-1' -> gpu-b05 gpu-b06 gpu-b07 gpu-b09 cpu-1 (zero
    padding kept). At most 4096 names."""
    out: list[str] = []
    for m in re.finditer(r"([^,\[\]]+)(?:\[([\d,-]+)\])?", text or ""):
        head, ranges = m.group(1).strip(), m.group(2)
        if not head:
            continue
        if not ranges:
            out.append(head)
            continue
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                continue
            width = len(lo)
            for n in range(int(lo), int(hi or lo) + 1):
                out.append(f"{head}{n:0{width}d}")
                if len(out) >= 4096:
                    return out
    return out


def expand_tasks(text: str) -> list[int]:
    """'0-7' -> 0..7, '1,3-4' -> 1 3 4 (at most 65536)."""
    out: list[int] = []
    for part in (text or "").split(","):
        lo, _, hi = part.strip().partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()) and int(hi or lo) - int(lo) < 65536:
            out += range(int(lo), int(hi or lo) + 1)
    return out[:65536]


def _compile(rx: str, where: SourceLocation, what: str, problems: Problems) -> re.Pattern | None:
    try:
        return re.compile(rx)
    except re.error as e:
        problems.add(where, f"{what}: regex does not compile: {e}")
        return None


def load_witnesses(path: Path | None = None) -> Witnesses:
    path = path or data_dir("patterns") / "attribution.toml"
    data, text = read_toml_or_raise(path, "attribution patterns")
    problems = Problems("attribution")
    folders, hosts = data.get("folders", {}), data.get("hosts", {})
    here = SourceLocation(str(path))
    generic = _compile(folders.get("generic", "(?!)"), here, "[folders] generic", problems)
    host_dir = _compile(folders.get("host", "(?!)"), here, "[folders] host", problems)
    container_dir = _compile(folders.get("one_container", "(?!)"), here, "[folders] one_container", problems)
    not_host = _compile(hosts.get("not_host", "(?!)"), here, "[hosts] not_host", problems)
    fs, hs = folders.get("samples", {}), hosts.get("samples", {})

    def table(name: str, keys: set[str]):
        starts = table_starts(text, name)
        for i, d in enumerate(data.get(name, [])):
            loc = SourceLocation(str(path), starts[i] if i < len(starts) else None)
            if set(d) - keys:
                problems.add(loc, f"unknown keys {sorted(set(d) - keys)}")
            if "name" not in d or "regex" not in d:
                problems.add(loc, "needs name and regex")
                continue
            rx = _compile(d["regex"], loc, d["name"], problems)
            if rx is None:
                continue
            if not d.get("samples"):
                problems.add(loc, f"{d['name']}: needs samples")
            yield d, rx, loc

    host_ips = tuple(HostIp(d["name"], rx, samples_of(d), tuple(d.get("no_match", [])), loc, bool(d.get("in_logs")))
                     for d, rx, loc in table("host_ip", {"name", "regex", "samples", "no_match", "in_logs"})
                     if not _missing(rx, {"host", "ip"}, loc, d["name"], problems))
    lines = []
    keys = {"name", "kind", "prefilter", "regex", "samples", "no_match", "first_line"}
    for d, rx, loc in table("line_witness", keys):
        kind = d.get("kind")
        if kind not in LINE_KINDS:
            problems.add(loc, f"{d['name']}: kind must be one of {sorted(LINE_KINDS)}")
            continue
        if _missing(rx, LINE_KINDS[kind], loc, d["name"], problems):
            continue
        if not d.get("prefilter"):
            problems.add(loc, f"{d['name']}: needs prefilter literals")
            continue
        for sample, _ in samples_of(d):
            if not holds_literal(tuple(d["prefilter"]), sample, bool(rx.flags & re.IGNORECASE)):
                problems.add(loc, f"{d['name']}: sample {sample[:60]!r} holds none of the prefilter literals")
        lines.append(LineWitness(d["name"], kind, tuple(d["prefilter"]), rx, samples_of(d),
                                 tuple(d.get("no_match", [])), loc, bool(d.get("first_line", False))))
    workers = []
    for d, rx, loc in table("worker", {"name", "regex", "samples", "no_match", "single"}):
        if set(rx.groupindex) - WORKER_GROUPS:
            problems.add(loc, f"{d['name']}: groups must be among {sorted(WORKER_GROUPS)}")
            continue
        workers.append(WorkerName(d["name"], rx, bool(d.get("single", False)), samples_of(d, "name"),
                                  tuple(d.get("no_match", [])), loc))
    rank_lines, rank_keep = {}, set()
    for d, rx, loc in table("rank_line", {"name", "regex", "samples", "no_match", "keep"}):
        keep = d.get("keep", [])
        if (problem := rust_line_problem(d)) is not None:
            problems.add(loc, f"{d['name']}: {problem}")
        elif keep and (bare := next((ln for ln, _ in samples_of(d) if not any(k in ln for k in keep)), None)):
            problems.add(loc, f"{d['name']}: sample {bare[:60]!r} holds none of its `keep` literals")
        else:
            rank_lines[d["name"]] = d["regex"]
            rank_keep |= set(keep)
    for name in sorted(set(RANK_LINES) - set(rank_lines)):
        problems.add(SourceLocation(str(path)),
                     f"[[rank_line]] {name!r} is missing (k3logs/diagnose/attribution.py reads it)")
    w = Witnesses(
        not_node_dirs=frozenset(n.lower() for n in folders.get("not_nodes", [])), generic_dir=generic,
        host_dir=host_dir, container_dir=container_dir,
        folder_samples=(tuple(fs.get("node", [])), tuple(fs.get("not_node", []))),
        not_host=not_host, host_samples=(tuple(hs.get("host", [])), tuple(hs.get("not_host", []))),
        host_ips=host_ips, lines=tuple(lines), workers=tuple(workers), rank_lines=rank_lines,
        rank_keep=tuple(sorted(rank_keep)))
    for lw in lines:
        _replay(lw, w, problems)
    if problems:
        raise CatalogueError(f"{len(problems)} problem(s) in {path}: {problems[0]}", problems)
    return w


def _replay(lw: LineWitness, w: Witnesses, problems: Problems) -> None:
    """A line witness's samples give their fields as the analysis searches for them; a near miss gives
    nothing (or a 'host' that is no host)."""
    for sample, fields in lw.samples:
        m = lw.regex.search(sample)
        if not m or any(m.group(k) != v for k, v in dict(fields).items()):
            problems.add(lw.location, f"{lw.name}: sample {sample[:60]!r} should give {dict(fields)}, gives "
                                      f"{m.groupdict() if m else 'no match'}")
    for near in lw.no_match:
        if (m := lw.regex.search(near)) and not ("host" in m.groupdict() and not w.is_host(m.group("host"))):
            problems.add(lw.location, f"{lw.name}: near miss {near[:60]!r} matches ({m.groupdict()})")


def _missing(rx: re.Pattern, need: set[str], loc, name: str, problems: Problems) -> bool:
    if need - set(rx.groupindex):
        problems.add(loc, f"{name}: regex needs the groups {sorted(need - set(rx.groupindex))}")
        return True
    return False


@lru_cache(maxsize=1)
def builtin_witnesses() -> Witnesses:
    """The built-in witnesses, checked once per content of attribution.toml (and of this package) and kept in the
    cache folder: checking every regex with the Rust engine on each run cost a small bundle's analysis a tenth of
    its time."""
    path = data_dir("patterns") / "attribution.toml"
    return kept("witnesses", content_key([path]), lambda: load_witnesses(path), lambda got: isinstance(got, Witnesses))
