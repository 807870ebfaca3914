"""Decide by content whether a bundle file is an environment dump, and which one.

`sniff_dump(head)` looks at the first ~64 KiB of a file's text and answers `(kind, reason)` with a kind from
`schema.DUMP_KINDS`, or None when the text is not a dump (the caller then treats it as a log). It is cheap
(a handful of anchored regexes over at most a few hundred lines) and never raises.

Files that are shell transcripts (`$ nvidia-smi`, `root@host:~# uptime`, several commands in one file) are
split into segments at the prompts; each segment's kind comes from its command, or from its content.
"""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from k3logs.catalogue.regexes import Regexes
from k3logs.redact import clip

MAX_LINES = 400          # lines looked at for line-shaped detectors
SMALL_FILE_LINES = 40    # launch commands, uptime and failed nvidia-smi outputs are short

# ------------------------------------------------------------------------------------------
# shell transcripts
# ------------------------------------------------------------------------------------------
INGEST = Regexes("ingest.toml")  # what a dump's text looks like: a prompt, a command, a tool's header
PROMPTS = ("prompt_dollar", "prompt_user_at_host", "prompt_bracketed")
# command -> dump kind, first match wins: the regex of a kind is named command_<kind>
COMMAND_KINDS = ("nvidia_topo", "nvidia_smi_csv", "nvidia_smi_q", "nvidia_smi_list", "nvidia_smi", "collect_env",
                 "pip_freeze", "docker_inspect", "k8s_describe", "pod_spec", "compose", "docker_ps", "slurm_job",
                 "systemctl_status", "lsmod", "ibstat", "ip_addr", "uptime", "env", "ps", "free", "launch_cmd",
                 "model_config", "prometheus")


@lru_cache(maxsize=1)
def _prompts() -> tuple[re.Pattern, ...]:
    return tuple(INGEST[name] for name in PROMPTS)


@lru_cache(maxsize=1)
def _command_kinds() -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((INGEST[f"command_{kind}"], kind) for kind in COMMAND_KINDS)


@dataclass(frozen=True)
class Segment:
    """Lines [start, end) of a file (0-based indexes) that hold one command's output."""

    start: int
    end: int
    command: str | None = None     # the command typed at the prompt line start-1, if any
    host: str | None = None        # host name shown in the prompt
    prompt_line: int | None = None  # 0-based index of the prompt line


def prompt_of(line: str) -> re.Match | None:
    for rx in _prompts():
        m = rx.match(line)
        if m:
            return m
    return None


def command_kind(cmd: str | None) -> str | None:
    if not cmd:
        return None
    for rx, kind in _command_kinds():
        if rx.search(cmd):
            return kind
    return None


def split_transcript(lines: list[str]) -> list[Segment]:
    """Segments between prompt lines; one segment (no command) when the text has no prompt."""
    segs: list[Segment] = []
    cur_start, cur_cmd, cur_host, cur_prompt = 0, None, None, None
    i = 0
    while i < len(lines):
        m = prompt_of(lines[i])
        if not m:
            i += 1
            continue
        if i > cur_start or cur_cmd is not None:
            segs.append(Segment(cur_start, i, cur_cmd, cur_host, cur_prompt))
        cmd, j = m.group("cmd").rstrip(), i
        while cmd.endswith("\\") and j + 1 < len(lines):  # the command goes on over continuation lines
            j += 1
            cmd = cmd[:-1].rstrip() + " " + lines[j].strip()
        cur_start, cur_cmd, cur_host, cur_prompt = j + 1, cmd.strip(), m.groupdict().get("host"), i
        i = j + 1
    segs.append(Segment(cur_start, len(lines), cur_cmd, cur_host, cur_prompt))
    return [s for s in segs if s.command is not None or any(x.strip() for x in lines[s.start:s.end])]


# ------------------------------------------------------------------------------------------
# content detectors: each takes the prepared lines and returns a reason or None
# ------------------------------------------------------------------------------------------
def _is_comment(ln: str) -> bool:
    s = ln.lstrip()
    return s.startswith("#") and not INGEST["prometheus_comment"].match(s)


_WRAPPERS = {"sudo", "nohup", "exec", "env", "time", "numactl", "taskset", "stdbuf", "setsid", "nice", "srun", "mpirun"}


def is_launch_line(text: str) -> bool:
    """True when the line *starts* a launcher (after env assignments and wrappers such as sudo, numactl).

    A launcher merely mentioned inside a line (a docker ps COMMAND column, a log message) does not count.
    """
    toks = text.split()
    assignment, cpu_list, launch = INGEST["shell_assignment_token"], INGEST["cpu_list_token"], INGEST["launch_command"]
    i = 0
    while i < len(toks) and (assignment.match(toks[i]) or toks[i].rsplit("/", 1)[-1] in _WRAPPERS
                             or (i and toks[i].startswith("-")) or cpu_list.fullmatch(toks[i])):
        i += 1
    if i >= len(toks):
        return False
    head = toks[i].rsplit("/", 1)[-1]
    rest = " ".join([head, *toks[i + 1:]])
    if INGEST["launcher_host_command"].fullmatch(head):
        return bool(launch.search(rest))
    return bool(launch.match(rest))


def logical_lines(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first index, last index, text) with backslash continuations joined; prompts stripped."""
    out: list[tuple[int, int, str]] = []
    buf: list[str] = []
    start = 0
    for i, raw in enumerate(lines):
        ln = raw.replace("\x00", " ")
        if not buf:
            start = i
            m = prompt_of(ln)
            if m:
                ln = m.group("cmd")
        cont = ln.rstrip().endswith("\\")
        buf.append(ln.rstrip()[:-1] if cont else ln)
        if not cont:
            out.append((start, i, " ".join(x.strip() for x in buf).strip()))
            buf = []
    if buf:
        out.append((start, len(lines) - 1, " ".join(x.strip() for x in buf).strip()))
    return out


def _json_kind(text: str) -> tuple[str, str] | None:
    s = text.strip()
    if not s or not INGEST["json_start"].match(s):
        return None
    first = s.split("\n", 1)[0].strip()
    try:
        doc = json.loads(s)
    except (ValueError, RecursionError):
        doc = None
        if "\n" in s and first.startswith("{") and first.endswith("}"):
            try:
                json.loads(first)
                return None  # JSON lines: a log (docker json-file, vLLM JSON logging)
            except (ValueError, RecursionError):
                pass
        if '"log"' in first and '"stream"' in first:
            return None
    return _json_doc_kind(doc, s[:8192])


def _json_doc_kind(doc: object, head: str) -> tuple[str, str] | None:
    items = doc if isinstance(doc, list) else [doc]
    dicts = [d for d in items if isinstance(d, dict)]
    keys = set().union(*(d.keys() for d in dicts)) if dicts else set()
    if doc is None:  # truncated or broken JSON: decide on keys seen in the head
        keys = set(INGEST["json_key"].findall(head))
    if "k3logs_manifest" in keys:
        return "manifest", 'JSON with a top-level "k3logs_manifest" key'
    if keys & {"HostConfig", "RepoTags", "RepoDigests"} or {"Config", "State"} <= keys or {"Path", "Args", "State"} <= keys:
        return "docker_inspect", "JSON with docker inspect keys (Config/HostConfig/State/RepoTags)"
    if {"apiVersion", "kind"} <= keys:
        kinds = {str(d.get("kind")) for d in dicts} if dicts else set()
        # (a typed list, `kubectl cluster-info dump`'s PodList, EventList, NodeList: its items are read one by one)
        if doc is None or kinds & {"Pod", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet",
                                   "List", "PodTemplate", "LeaderWorkerSet"} or any(k.endswith("List") for k in kinds):
            return "pod_spec", f"Kubernetes JSON ({', '.join(sorted(kinds)) or 'apiVersion/kind'})"
    if "architectures" in keys or ("model_type" in keys and ("hidden_size" in keys or "num_hidden_layers" in keys)):
        return "model_config", 'JSON with "architectures" / "model_type" (Hugging Face config.json)'
    if doc is None and not keys:
        return None
    return "json", "a JSON document of no known dump shape"


def _toml_manifest(text: str) -> tuple[str, str] | None:
    if not INGEST["toml_manifest"].search(text):
        return None
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        pass  # truncated head: the key is enough
    return "manifest", 'TOML with a top-level "k3logs_manifest" key'


_CSV_KNOWN = {"index", "name", "uuid", "pci.bus_id", "driver_version", "pid", "process_name", "used_gpu_memory",
              "used_memory", "serial", "memory.total", "memory.used", "vbios_version", "gpu_name", "gpu_uuid"}


def _smi_csv(nc: list[str]) -> str | None:
    if not nc:
        return None
    cells = [c.strip() for c in nc[0].split(",")]
    if len(cells) >= 2 and all(INGEST["smi_csv_field"].match(c) for c in cells):
        names = {INGEST["smi_csv_unit"].sub("", c) for c in cells}
        if names & _CSV_KNOWN and (any("." in n for n in names) or names & {"driver_version", "uuid", "process_name"}):
            return f"nvidia-smi --query csv header ({clip(nc[0].strip(), 60)})"
    rows = [[c.strip() for c in ln.split(",")] for ln in nc[:50]]
    bus_cell = INGEST["smi_bus_cell"]
    if rows and all(len(r) == len(rows[0]) and len(r) >= 2 for r in rows) and \
            all(any(bus_cell.match(c) for c in r) for r in rows):
        return "nvidia-smi --query csv rows (bus id / GPU UUID cells) without header"
    return None


def _detect(lines: list[str], text: str) -> tuple[str, str] | None:
    body = [ln for ln in lines[:MAX_LINES] if ln.strip()]
    nc = [ln for ln in body if not _is_comment(ln)]
    if not nc:
        return None
    first = nc[0]
    top = "\n".join(nc[:12])
    if INGEST["smi_q_banner"].search(top):
        return "nvidia_smi_q", "NVSMI LOG banner (nvidia-smi -q)"
    if INGEST["smi_header"].search(top):
        return "nvidia_smi", "nvidia-smi table header (NVIDIA-SMI / Driver Version)"
    marks = INGEST["collect_env_mark"].findall("\n".join(nc[:60]))
    if any(m.startswith(("Collecting", "PyTorch")) or m.strip() == "vLLM Info" for m in marks) or len(marks) >= 2:
        return "collect_env", "collect_env sections / keys (PyTorch version, vLLM Version)"
    if INGEST["topo_header"].search("\n".join(nc[:5])):
        return "nvidia_topo", "nvidia-smi topo -m matrix header (GPU0 ... CPU Affinity)"
    reason = _smi_csv(nc)
    if reason:
        return "nvidia_smi_csv", reason
    smi_list, smi_fail = INGEST["smi_list_line"], INGEST["smi_fail"]
    listed = sum(bool(smi_list.match(ln)) for ln in nc)
    if listed and listed * 2 >= len(nc):
        return "nvidia_smi_list", "nvidia-smi -L lines (GPU n: name (UUID: GPU-...))"
    if len(nc) <= SMALL_FILE_LINES and any(smi_fail.match(ln) for ln in nc[:6]):
        return "nvidia_smi", "failed nvidia-smi output (" + clip(next(ln for ln in nc if smi_fail.match(ln)).strip(), 50) + ")"
    if INGEST["describe_first_line"].match(first) and len(set(INGEST["describe_mark"].findall(text))) >= 2:
        return "k8s_describe", "kubectl describe layout (Name:, Namespace:/Containers:/Events: ...)"
    if INGEST["yaml_containers"].search(text) and (
            (INGEST["yaml_api_version"].search(text) and INGEST["yaml_workload_kind"].search(text))
            or (INGEST["yaml_spec"].search(text) and INGEST["yaml_image"].search(text))):
        return "pod_spec", "Kubernetes YAML (apiVersion/kind/spec.containers)"
    if INGEST["compose_services"].search(text) and INGEST["compose_image"].search(text):
        return "compose", "Docker Compose file (services: with image/build)"
    if INGEST["docker_ps_header"].match(first):
        return "docker_ps", "docker ps table header (CONTAINER ID IMAGE ...)"
    if INGEST["k8s_get_header"].match(first):
        return "k8s_get", "kubectl get table header (NAME READY STATUS RESTARTS AGE, or nodes)"
    head = next((i for i, ln in enumerate(nc[:3]) if INGEST["free_header"].match(ln)), None)  # (after `hostname`, say)
    if head is not None and nc[head + 1:head + 2] and nc[head + 1].startswith("Mem:"):
        return "free", "free table (total used free shared buff/cache available; Mem:)"
    if INGEST["slurm_job_record"].match(first):
        return "slurm_job", "Slurm job record (scontrol show job / sacct)"
    instructions = [ln for ln in nc if ln[:1].isalpha()]  # (continued lines are indented)
    dockerfile = INGEST["dockerfile_instruction"]
    known = sum(bool(dockerfile.match(ln)) for ln in instructions)
    if INGEST["dockerfile_first"].match(first) and known >= 2 and known * 10 >= len(instructions) * 8 \
            and any(ln.startswith("FROM ") for ln in instructions):
        return "dockerfile", "Dockerfile (FROM, RUN, COPY ... instructions)"
    if INGEST["systemctl_status_first"].match(first) and any(ln.lstrip().startswith("Active:") for ln in nc[1:6]):
        return "systemctl_status", "systemctl status (unit, Loaded:, Active:)"
    if INGEST["unit_section"].search(text) and INGEST["unit_exec_start"].search(text):
        return "systemd_unit", "systemd unit ([Service] with ExecStart=)"
    if INGEST["supervisor_program"].search(text) and INGEST["supervisor_command"].search(text):
        return "supervisor_program", "supervisord program ([program:NAME] with command=)"
    if INGEST["prometheus_exposition"].search("\n".join(body[:20])):
        return "prometheus", "Prometheus exposition (# HELP/# TYPE, vllm: samples)"
    if INGEST["lsmod_header"].match(first):
        return "lsmod", "lsmod header (Module Size Used by)"
    if INGEST["ibstat_device"].search(top) and INGEST["ibstat_port"].search("\n".join(nc[:40])):
        return "ibstat", "ibstat / ibv_devinfo CA and port state lines"
    if INGEST["ps_header"].match(first):
        return "ps", "ps table header (PID ... CMD/COMMAND)"
    ip_link, ip_brief = INGEST["ip_link"], INGEST["ip_brief"]
    if any(ip_link.match(ln) for ln in nc[:10]) or \
            (sum(bool(ip_brief.match(ln)) for ln in nc) >= max(2, (len(nc) + 1) // 2)):
        return "ip_addr", "ip addr / ip -br addr / ifconfig output"
    uptime = INGEST["uptime_line"]
    if len(nc) <= SMALL_FILE_LINES and all(uptime.match(ln) for ln in nc):
        return "uptime", "date / uptime / /proc/uptime output"
    pip_line = INGEST["pip_line"]
    pip = sum(bool(pip_line.match(ln.strip())) for ln in nc)
    if INGEST["pip_list_header"].match(first.strip()) or (pip >= 2 and pip >= 0.6 * len(nc)):
        return "pip_freeze", "pip freeze / pip list lines (name==version)"
    logical = [t for _, _, t in logical_lines(lines[:MAX_LINES]) if t and not _is_comment(t)]
    launches = [t for t in logical if is_launch_line(t)]
    if launches and len(logical) <= SMALL_FILE_LINES and len(launches) * 2 >= len(logical):
        return "launch_cmd", "command line (" + clip(_launcher_of(launches[0]), 30) + ")"
    # a shell script: its setup lines (source, module load, export, cd) around the launch
    if launches and INGEST["shell_shebang"].match(body[0]):
        return "launch_cmd", "shell script running " + clip(_launcher_of(launches[0]), 30)
    env_line, env_name_line, note_line = INGEST["env_assignment"], INGEST["env_name_assignment"], INGEST["note_line"]
    kv = sum(bool(env_line.match(ln)) for ln in nc)
    named = sum(bool(env_name_line.match(ln)) for ln in nc)
    # "gpu: 4 x L40S" lines of a hand-written note neither count for nor against an environment listing
    notes = sum(bool(note_line.match(ln)) and not env_line.match(ln) for ln in nc)
    counted = max(1, len(nc) - notes)
    if kv >= 2 and (kv >= 0.6 * counted or (named >= 2 and kv >= 0.4 * counted)):
        return "env", f"{kv} KEY=VALUE lines (environment)"
    return None


def _launcher_of(line: str) -> str:
    """The launcher a launch line runs ('vllm serve', 'docker run', ...)."""
    return INGEST["launch_command"].search(line).group(0).strip()


def sniff_dump(head: str) -> tuple[str, str] | None:
    """(dump kind, one-line reason) when `head` is an environment dump; None when it is not (a log)."""
    try:
        return _sniff(head)
    except Exception:  # noqa: BLE001 - sniffing must never break a run; unknown text is a log
        return None


def _sniff(head: str) -> tuple[str, str] | None:
    if not isinstance(head, str):
        return None
    text = head.lstrip("\ufeff")
    if not text.strip():
        return None
    got = _json_kind(text)
    if got or (INGEST["json_start"].match(text) and _looks_jsonl(text)):
        return got
    got = _toml_manifest(text)
    if got:
        return got
    lines = text.split("\n")[:MAX_LINES * 2]
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    segs = split_transcript(lines)
    if any(s.command for s in segs):
        got = _sniff_transcript(lines, segs)
        if got:
            return got
        lines = [ln for ln in lines if not prompt_of(ln)]
        return _detect(lines, "\n".join(lines))
    return _detect(lines, text)


def _looks_jsonl(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        json.loads(first)
        return True
    except (ValueError, RecursionError):
        return False


def _sniff_transcript(lines: list[str], segs: list[Segment]) -> tuple[str, str] | None:
    found: list[tuple[int, str, str]] = []
    for s in segs:
        body = lines[s.start:s.end]
        size = sum(1 for x in body if x.strip())
        kind = command_kind(s.command)
        if kind is None and s.command and is_launch_line(s.command):
            # `$ vllm serve ...` followed by output: a launch command only if little or nothing follows
            if size <= 2:
                kind = "launch_cmd"
            else:
                return None
        if kind:
            found.append((size, kind, f"shell transcript: `{clip(s.command, 50)}`"))
            continue
        got = _json_kind("\n".join(body)) or _detect(body, "\n".join(body))
        if got:
            found.append((size, got[0], f"shell transcript segment: {got[1]}"))
    if not found:
        return None
    size, kind, reason = max(found, key=lambda t: t[0])
    others = len(found) - 1
    return kind, reason + (f" (+{others} other command{'s' if others > 1 else ''})" if others else "")
