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

from k3logs.redact import clip

MAX_LINES = 400          # lines looked at for line-shaped detectors
SMALL_FILE_LINES = 40    # launch commands, uptime and failed nvidia-smi outputs are short

# ------------------------------------------------------------------------------------------
# shell transcripts
# ------------------------------------------------------------------------------------------
PROMPT_RES = (
    re.compile(r"^\$ (?P<cmd>\S.*)$"),
    re.compile(r"^(?P<user>[\w.-]+)@(?P<host>[\w.-]+):[^\s$#]*[$#] ?(?P<cmd>\S.*)$"),
    re.compile(r"^\[(?P<user>[\w.-]+)@(?P<host>[\w.-]+)[^\]]*\][$#] ?(?P<cmd>\S.*)$"),
)

# command -> dump kind, first match wins
COMMAND_KINDS: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p), k) for p, k in (
    (r"\bnvidia-smi\b.*\btopo\b", "nvidia_topo"),
    (r"\bnvidia-smi\b.*--query-(?:gpu|compute-apps)\b", "nvidia_smi_csv"),
    (r"\bnvidia-smi\b.*(?:\s-q\b|\s--query\b|\s-x\b)", "nvidia_smi_q"),
    (r"\bnvidia-smi\b.*\s(?:-L|--list-gpus)\b", "nvidia_smi_list"),
    (r"\bnvidia-smi\b(?!.*\s(?:nvlink|dmon|pmon|-L|--list-gpus|mig|-r)\b)", "nvidia_smi"),
    (r"\bcollect[_-]env\b", "collect_env"),
    (r"\b(?:pip3?|uv pip|-m pip)\s+(?:freeze|list)\b", "pip_freeze"),
    (r"\b(?:docker|podman|nerdctl)\s+(?:container\s+|image\s+)?inspect\b", "docker_inspect"),
    (r"\bkubectl\b.*\bdescribe\b", "k8s_describe"),
    (r"\bkubectl\b.*\bget\b.*(?:-o|--output)[\s=]*(?:yaml|json)\b", "pod_spec"),
    (r"\bdocker[ -]compose\b.*\bconfig\b", "compose"),
    (r"\b(?:docker|podman|nerdctl)\s+(?:container\s+)?(?:ps|ls)\b", "docker_ps"),
    (r"\b(?:scontrol\s+show\s+job|sacct|squeue)\b", "slurm_job"),
    (r"\bsystemctl\s+(?:\S+\s+)*status\b", "systemctl_status"),
    (r"\blsmod\b", "lsmod"),
    (r"\b(?:ibstat|ibv_devinfo|ibdev2netdev)\b", "ibstat"),
    (r"(?:^|\s)ip(?:\s+-\S+)*\s+(?:a|ad|addr|address)\b|\bifconfig\b", "ip_addr"),
    (r"^(?:sudo\s+)?(?:date|uptime)\b|/proc/uptime\b", "uptime"),
    (r"(?:^|\s)(?:env|printenv)\s*(?:$|\|)|\bexport\s+-p\b|/environ\b", "env"),
    (r"^(?:sudo\s+)?ps\b", "ps"),
    (r"(?:^|[;&|]\s*)(?:sudo\s+)?free\b", "free"),
    (r"/proc/(?:\d+|self)/cmdline", "launch_cmd"),
    (r"config\.json\b", "model_config"),
    (r"/metrics\b", "prometheus"),
))


@dataclass(frozen=True)
class Segment:
    """Lines [start, end) of a file (0-based indexes) that hold one command's output."""

    start: int
    end: int
    command: str | None = None     # the command typed at the prompt line start-1, if any
    host: str | None = None        # host name shown in the prompt
    prompt_line: int | None = None  # 0-based index of the prompt line


def prompt_of(line: str) -> re.Match | None:
    for rx in PROMPT_RES:
        m = rx.match(line)
        if m:
            return m
    return None


def command_kind(cmd: str | None) -> str | None:
    if not cmd:
        return None
    for rx, kind in COMMAND_KINDS:
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
    return s.startswith("#") and not re.match(r"#\s*(?:HELP|TYPE)\s", s)


_SMI_HEADER = re.compile(r"^\|?\s*NVIDIA-SMI\s+[\d.]+\s+Driver Version:\s*[\d.]+", re.M)
SMI_FAIL = re.compile(
    r"^\s*(?:NVIDIA-SMI has failed|No devices were found|Unable to determine the device handle"
    r"|Failed to initialize NVML|NVIDIA-SMI couldn't find libnvidia-ml|Driver/library version mismatch)")
_SMI_Q = re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$|<nvidia_smi_log>", re.M)
_COLLECT_ENV = re.compile(
    r"^(?:Collecting environment information|\s+vLLM Info\s*$|vLLM Version\s*:|PyTorch version\s*:"
    r"|CUDA used to build PyTorch\s*:)", re.M)
_TOPO_HEADER = re.compile(r"^[ \t]*GPU0(?:[ \t]+(?:GPU\d+|NIC\d+|mlx\d_\d+|\w+_\d+))*[ \t]+CPU Affinity", re.M)
_CSV_FIELD = re.compile(r"^[a-z][a-z_]*(?:\.[a-z_0-9]+)*(?: \[[^\]]+\])?$")
_CSV_KNOWN = {"index", "name", "uuid", "pci.bus_id", "driver_version", "pid", "process_name", "used_gpu_memory",
              "used_memory", "serial", "memory.total", "memory.used", "vbios_version", "gpu_name", "gpu_uuid"}
_BUS_CELL = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d$|^GPU-[0-9a-f-]{8,}$")
_DESCRIBE_MARKS = re.compile(
    r"^(?:Namespace|Containers|Events|Conditions|Labels|Node|Volumes|QoS Class|Roles|Taints|Capacity"
    r"|Allocatable|System Info|Annotations|Start Time|Status|Controlled By|Init Containers):", re.M)
_PROM_HELP = re.compile(r"^# (?:HELP|TYPE) vllm:|^vllm:\w+(?:\{|\s)"
                        r"|^# TYPE [a-zA-Z_:][\w:]* (?:counter|gauge|histogram|summary|untyped|info)\s*$", re.M)
_LSMOD = re.compile(r"^Module\s+Size\s+Used by\s*$")
_IBSTAT = re.compile(r"^CA '[^']+'\s*$|^hca_id:\s+\S+|^\S+ port \d+ ==> \S+ \((?:Up|Down)\)", re.M)
_IB_PORT = re.compile(r"^\s+(?:Port \d+:|State:|Physical state:|port:\s+\d+|state:\s+PORT_)", re.M)
_PS_HEADER = re.compile(r"^\s*(?:(?:UID|USER)\s+PID\b|PID\b).*\b(?:CMD|COMMAND|ARGS)\s*$")
_IP_LINK = re.compile(r"^\d+:\s+[\w@.:-]+:\s+<[A-Z_,-]*>.*\bmtu\b|^[\w.:-]+:\s+flags=\d+<|^[\w.:-]+\s+Link encap:")
_IP_BRIEF = re.compile(r"^[\w@.:-]+\s+(?:UP|DOWN|UNKNOWN|DORMANT|LOWERLAYERDOWN|NOTPRESENT)\b")
_UPTIME_LINE = re.compile(
    r"^\s*(?:\d\d:\d\d:\d\d\s+up\s.*load averages?:.*"
    r"|up\s+\d+\s+(?:year|week|day|hour|minute)s?.*"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\s*(?:Z|[+-]\d\d:?\d\d|UTC)?"
    r"|\d+\.\d+\s+\d+\.\d+"
    r"|(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*,?\s+)?(?:\d{1,2}\s+)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w*"
    r"\s+(?:\d{1,2},?\s+)?(?:\d{4},?\s+)?\d{1,2}:\d\d:\d\d(?:\s*[AP]M)?(?:\s+[A-Z]{2,5}|\s+[+-]\d{4})?(?:\s+\d{4})?)\s*$")
_PIP_LINE = re.compile(r"^(?:[A-Za-z0-9][\w.-]*(?:\[[\w,.-]+\])?\s*(?:===?|@)\s*\S+|-e\s+\S+)\s*$")
_PIP_LIST_HEADER = re.compile(r"^Package\s+Version(?:\s+.*)?$")
_ENV_LINE = re.compile(r"^\s*(?:export\s+|declare\s+-x\s+|set\s+)?[A-Za-z_][A-Za-z0-9_]*=")
_NOTE_LINE = re.compile(r"^[A-Za-z][\w .()/-]{0,60}:\s+\S")
_ENV_NAME_LINE = re.compile(r"^\s*(?:export\s+|declare\s+-x\s+)?[A-Z][A-Z0-9]*_[A-Z0-9_]*=")
_SCRIPT = re.compile(r"^#!\s*/\S*(?:bin/(?:env\s+)?(?:ba|z|da|k)?sh)\b")  # a shell script (sbatch scripts too)
LAUNCH_RE = re.compile(
    r"(?:^|[\s/;&|(\"'=])(?:vllm\s+serve\b|python[\d.]*\s+(?:-\S+\s+)*-m\s+vllm\.entrypoints|"
    r"(?:docker|podman|nerdctl)\s+(?:container\s+)?run\b|torchrun\b|ray\s+start\b|"
    r"python[\d.]*\s+(?:-\S+\s+)*-m\s+torch\.distributed\.run\b)")
_YAML_API = re.compile(r"^apiVersion:\s*\S", re.M)
_YAML_KIND = re.compile(r"^kind:\s*(?:Pod|Deployment|StatefulSet|DaemonSet|Job|CronJob|ReplicaSet|List|PodTemplate"
                        r"|LeaderWorkerSet)\b", re.M)
_YAML_CONTAINERS = re.compile(r"^\s*(?:-\s+)?containers:\s*$", re.M)
_YAML_IMAGE = re.compile(r"^\s*(?:-\s+)?image:\s*\S", re.M)
_YAML_SPEC = re.compile(r"^spec:\s*$", re.M)
# tables and files a person tells at a glance (kept as text: their generic facts, pod -> node, hosts, are read)
_DOCKER_PS_HEADER = re.compile(r"^CONTAINER ID\s+IMAGE\s+")
_K8S_GET_HEADER = re.compile(r"^(?:NAMESPACE\s+)?NAME\s+(?:READY\s+STATUS\s+RESTARTS\s+AGE|STATUS\s+ROLES\s+AGE\s+VERSION)\b")
_FREE_HEADER = re.compile(r"^\s+total\s+used\s+free\s+shared\s+buff/cache\s+available\s*$")
_SLURM_JOB = re.compile(r"^JobId=\d+ JobName=|^\s*JobID\s+JobName\s")
_DOCKERFILE_LINE = re.compile(r"^(?:FROM|RUN|COPY|ADD|ENV|ARG|ENTRYPOINT|CMD|WORKDIR|USER|EXPOSE|LABEL|SHELL|VOLUME"
                              r"|HEALTHCHECK|ONBUILD|STOPSIGNAL)\s")  # (upper case, as written: 'From #channel' is prose)
SMI_LIST_LINE = re.compile(r"^GPU (?P<idx>\d+): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[0-9a-fA-F-]+)\)\s*$")
SYSTEMCTL_STATUS = re.compile(r"^[●*○×]? ?\S+\.(?:service|scope|socket|timer) - ")  # its first line
_UNIT_SECTION = re.compile(r"^\[(?:Unit|Service|Install)\]\s*$", re.M)
_UNIT_EXEC = re.compile(r"^ExecStart=", re.M)
_COMPOSE_SERVICES = re.compile(r"^services:\s*$", re.M)  # a Compose file: top-level services, each with an image or a build
_COMPOSE_IMAGE = re.compile(r"^\s+(?:image|build):", re.M)


_WRAPPERS = {"sudo", "nohup", "exec", "env", "time", "numactl", "taskset", "stdbuf", "setsid", "nice", "srun", "mpirun"}


def is_launch_line(text: str) -> bool:
    """True when the line *starts* a launcher (after env assignments and wrappers such as sudo, numactl).

    A launcher merely mentioned inside a line (a docker ps COMMAND column, a log message) does not count.
    """
    toks = text.split()
    i = 0
    while i < len(toks) and (re.match(r"^[A-Za-z_]\w*=", toks[i]) or toks[i].rsplit("/", 1)[-1] in _WRAPPERS
                             or (i and toks[i].startswith("-")) or re.fullmatch(r"[\d,x-]+|0x[0-9a-fA-F]+", toks[i])):
        i += 1
    if i >= len(toks):
        return False
    head = toks[i].rsplit("/", 1)[-1]
    rest = " ".join([head, *toks[i + 1:]])
    if re.fullmatch(r"(?:ba|z)?sh|python[\d.]*|kubectl", head):
        return bool(LAUNCH_RE.search(rest))
    return bool(LAUNCH_RE.match(rest))


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


_JSON_START = re.compile(r'^\s*(?:\{\s*(?:"|\}|$)|\[\s*(?:[\{\["\]]|$))')


def _json_kind(text: str) -> tuple[str, str] | None:
    s = text.strip()
    if not s or not _JSON_START.match(s):
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
        keys = set(re.findall(r'"([A-Za-z_][\w.]*)"\s*:', head))
    if "k3logs_manifest" in keys:
        return "manifest", 'JSON with a top-level "k3logs_manifest" key'
    if keys & {"HostConfig", "RepoTags", "RepoDigests"} or {"Config", "State"} <= keys or {"Path", "Args", "State"} <= keys:
        return "docker_inspect", "JSON with docker inspect keys (Config/HostConfig/State/RepoTags)"
    if {"apiVersion", "kind"} <= keys:
        kinds = {str(d.get("kind")) for d in dicts} if dicts else set()
        if doc is None or kinds & {"Pod", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet",
                                   "List", "PodTemplate", "LeaderWorkerSet"}:
            return "pod_spec", f"Kubernetes JSON ({', '.join(sorted(kinds)) or 'apiVersion/kind'})"
    if "architectures" in keys or ("model_type" in keys and ("hidden_size" in keys or "num_hidden_layers" in keys)):
        return "model_config", 'JSON with "architectures" / "model_type" (Hugging Face config.json)'
    if doc is None and not keys:
        return None
    return "json", "a JSON document of no known dump shape"


def _toml_manifest(text: str) -> tuple[str, str] | None:
    if not re.search(r"^\s*(?:\[k3logs_manifest\]|k3logs_manifest\s*=)", text, re.M):
        return None
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        pass  # truncated head: the key is enough
    return "manifest", 'TOML with a top-level "k3logs_manifest" key'


def _smi_csv(nc: list[str]) -> str | None:
    if not nc:
        return None
    cells = [c.strip() for c in nc[0].split(",")]
    if len(cells) >= 2 and all(_CSV_FIELD.match(c) for c in cells):
        names = {re.sub(r"\s*\[.*\]$", "", c) for c in cells}
        if names & _CSV_KNOWN and (any("." in n for n in names) or names & {"driver_version", "uuid", "process_name"}):
            return f"nvidia-smi --query csv header ({clip(nc[0].strip(), 60)})"
    rows = [[c.strip() for c in ln.split(",")] for ln in nc[:50]]
    if rows and all(len(r) == len(rows[0]) and len(r) >= 2 for r in rows) and \
            all(any(_BUS_CELL.match(c) for c in r) for r in rows):
        return "nvidia-smi --query csv rows (bus id / GPU UUID cells) without header"
    return None


def _detect(lines: list[str], text: str) -> tuple[str, str] | None:
    body = [ln for ln in lines[:MAX_LINES] if ln.strip()]
    nc = [ln for ln in body if not _is_comment(ln)]
    if not nc:
        return None
    first = nc[0]
    top = "\n".join(nc[:12])
    if _SMI_Q.search(top):
        return "nvidia_smi_q", "NVSMI LOG banner (nvidia-smi -q)"
    if _SMI_HEADER.search(top):
        return "nvidia_smi", "nvidia-smi table header (NVIDIA-SMI / Driver Version)"
    marks = _COLLECT_ENV.findall("\n".join(nc[:60]))
    if any(m.startswith(("Collecting", "PyTorch")) or m.strip() == "vLLM Info" for m in marks) or len(marks) >= 2:
        return "collect_env", "collect_env sections / keys (PyTorch version, vLLM Version)"
    if _TOPO_HEADER.search("\n".join(nc[:5])):
        return "nvidia_topo", "nvidia-smi topo -m matrix header (GPU0 ... CPU Affinity)"
    reason = _smi_csv(nc)
    if reason:
        return "nvidia_smi_csv", reason
    listed = sum(bool(SMI_LIST_LINE.match(ln)) for ln in nc)
    if listed and listed * 2 >= len(nc):
        return "nvidia_smi_list", "nvidia-smi -L lines (GPU n: name (UUID: GPU-...))"
    if len(nc) <= SMALL_FILE_LINES and any(SMI_FAIL.match(ln) for ln in nc[:6]):
        return "nvidia_smi", "failed nvidia-smi output (" + clip(next(ln for ln in nc if SMI_FAIL.match(ln)).strip(), 50) + ")"
    if re.match(r"^Name:\s+\S", first) and len(set(_DESCRIBE_MARKS.findall(text))) >= 2:
        return "k8s_describe", "kubectl describe layout (Name:, Namespace:/Containers:/Events: ...)"
    if _YAML_CONTAINERS.search(text) and (
            (_YAML_API.search(text) and _YAML_KIND.search(text)) or (_YAML_SPEC.search(text) and _YAML_IMAGE.search(text))):
        return "pod_spec", "Kubernetes YAML (apiVersion/kind/spec.containers)"
    if _COMPOSE_SERVICES.search(text) and _COMPOSE_IMAGE.search(text):
        return "compose", "Docker Compose file (services: with image/build)"
    if _DOCKER_PS_HEADER.match(first):
        return "docker_ps", "docker ps table header (CONTAINER ID IMAGE ...)"
    if _K8S_GET_HEADER.match(first):
        return "k8s_get", "kubectl get table header (NAME READY STATUS RESTARTS AGE, or nodes)"
    head = next((i for i, ln in enumerate(nc[:3]) if _FREE_HEADER.match(ln)), None)  # (after `hostname`, say)
    if head is not None and nc[head + 1:head + 2] and nc[head + 1].startswith("Mem:"):
        return "free", "free table (total used free shared buff/cache available; Mem:)"
    if _SLURM_JOB.match(first):
        return "slurm_job", "Slurm job record (scontrol show job / sacct)"
    instructions = [ln for ln in nc if ln[:1].isalpha()]  # (continued lines are indented)
    known = sum(bool(_DOCKERFILE_LINE.match(ln)) for ln in instructions)
    if re.match(r"(?:FROM|ARG)\s", first) and known >= 2 and known * 10 >= len(instructions) * 8 \
            and any(ln.startswith("FROM ") for ln in instructions):
        return "dockerfile", "Dockerfile (FROM, RUN, COPY ... instructions)"
    if SYSTEMCTL_STATUS.match(first) and any(ln.lstrip().startswith("Active:") for ln in nc[1:6]):
        return "systemctl_status", "systemctl status (unit, Loaded:, Active:)"
    if _UNIT_SECTION.search(text) and _UNIT_EXEC.search(text):
        return "systemd_unit", "systemd unit ([Service] with ExecStart=)"
    if _PROM_HELP.search("\n".join(body[:20])):
        return "prometheus", "Prometheus exposition (# HELP/# TYPE, vllm: samples)"
    if _LSMOD.match(first):
        return "lsmod", "lsmod header (Module Size Used by)"
    if _IBSTAT.search(top) and _IB_PORT.search("\n".join(nc[:40])):
        return "ibstat", "ibstat / ibv_devinfo CA and port state lines"
    if _PS_HEADER.match(first):
        return "ps", "ps table header (PID ... CMD/COMMAND)"
    if any(_IP_LINK.match(ln) for ln in nc[:10]) or \
            (sum(bool(_IP_BRIEF.match(ln)) for ln in nc) >= max(2, (len(nc) + 1) // 2)):
        return "ip_addr", "ip addr / ip -br addr / ifconfig output"
    if len(nc) <= SMALL_FILE_LINES and all(_UPTIME_LINE.match(ln) for ln in nc):
        return "uptime", "date / uptime / /proc/uptime output"
    pip = sum(bool(_PIP_LINE.match(ln.strip())) for ln in nc)
    if _PIP_LIST_HEADER.match(first.strip()) or (pip >= 2 and pip >= 0.6 * len(nc)):
        return "pip_freeze", "pip freeze / pip list lines (name==version)"
    logical = [t for _, _, t in logical_lines(lines[:MAX_LINES]) if t and not _is_comment(t)]
    launches = [t for t in logical if is_launch_line(t)]
    if launches and len(logical) <= SMALL_FILE_LINES and len(launches) * 2 >= len(logical):
        return "launch_cmd", "command line (" + clip(LAUNCH_RE.search(launches[0]).group(0).strip(), 30) + ")"
    if launches and _SCRIPT.match(body[0]):  # its setup lines (source, module load, export, cd) around the launch
        return "launch_cmd", "shell script running " + clip(LAUNCH_RE.search(launches[0]).group(0).strip(), 30)
    kv = sum(bool(_ENV_LINE.match(ln)) for ln in nc)
    named = sum(bool(_ENV_NAME_LINE.match(ln)) for ln in nc)
    # "gpu: 4 x L40S" lines of a hand-written note neither count for nor against an environment listing
    notes = sum(bool(_NOTE_LINE.match(ln)) and not _ENV_LINE.match(ln) for ln in nc)
    counted = max(1, len(nc) - notes)
    if kv >= 2 and (kv >= 0.6 * counted or (named >= 2 and kv >= 0.4 * counted)):
        return "env", f"{kv} KEY=VALUE lines (environment)"
    return None


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
    if got or (_JSON_START.match(text) and _looks_jsonl(text)):
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
