"""Shared pieces of the fact extractors: the Fact record, a Sink that collects facts with their lines,
redaction of secrets, and small normalisers (dates, bus ids, sizes, versions).

Line numbers are 1-based and newline-counted: a text is split on '\\n' only (never on '\\r'), so they
agree with `grep -n` and with the event table.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from k3logs.catalogue.regexes import Regexes, builtin_data

# which source shows what really ran: lower is better
RAN_RANK = {"log": 0, "prometheus": 1, "ps": 1, "docker_inspect": 2, "k8s_describe": 3, "pod_spec": 4, "compose": 4,
            "collect_env": 5, "pip_freeze": 6, "launch_cmd": 7, "systemd_unit": 7,
            "supervisor_program": 7, "env": 8}

ENV_PREFIXES = ("NCCL_", "UCX_", "CUDA_", "VLLM_", "NVIDIA_")
SENSITIVE_WORDS = ("TOKEN", "SECRET", "PASSWORD", "KEY")
REDACTED = "[redacted]"
FACTS = Regexes("facts.toml")  # the [[regex]] tables of patterns/facts.toml


@dataclass(frozen=True)
class Fact:
    """One environment fact and where it was read.

    `source` is the dump kind it came from ('nvidia_smi', 'docker_inspect', ...) or 'log' for facts read
    from log events; checks use it to prefer the command that really ran over a template.
    """

    name: str
    value: str
    file: str
    line: int | None
    node: str | None
    source: str = ""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


def split_lines(text: str) -> list[str]:
    """Physical lines split on '\\n' only, a trailing '\\r' removed from each."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


# ------------------------------------------------------------------------------------------
# secrets
# ------------------------------------------------------------------------------------------
def is_sensitive(name: str) -> bool:
    up = name.upper()
    if up.startswith(("NCCL_", "UCX_")):
        return False
    return any(w in up for w in SENSITIVE_WORDS)


def redact_value(name: str, value: str) -> str:
    return REDACTED if is_sensitive(name) and value else value


def redact_command(cmd: str) -> str:
    """Hide values of secret-looking assignments and options inside a command line."""
    def assign(m: re.Match) -> str:
        if is_sensitive(m.group("name")):
            return f"{m.group('pre')}{m.group('name')}={REDACTED}"
        return m.group(0)

    cmd = FACTS["command_assignment"].sub(assign, cmd)
    cmd = FACTS["secret_option"].sub(lambda m: m.group("opt") + REDACTED, cmd)
    return FACTS["bearer_token"].sub(lambda m: m.group("opt") + REDACTED, cmd)


# ------------------------------------------------------------------------------------------
# the sink
# ------------------------------------------------------------------------------------------
class Sink:
    """Collects facts for one file; `base` offsets give physical line numbers."""

    def __init__(self, file: str, node: str | None, source: str):
        self.file = file
        self.node = node
        self.source = source
        self.facts: list[Fact] = []
        self._seen: set[tuple] = set()

    def add(self, name: str, value: object, line: int | None, *, node: str | None | bool = False,
            source: str | None = None) -> None:
        if value is None:
            return
        text = str(value).strip()
        if not text:
            return
        if name.startswith("env:"):
            text = redact_value(name[4:], text)
        elif name in ("launch_command", "process"):
            text = redact_command(text)
        nd = self.node if node is False else node
        key = (name, text, line, nd)
        if key in self._seen:
            return
        self._seen.add(key)
        self.facts.append(Fact(name, text, self.file, line, nd, source or self.source))


def emit_env(sink: Sink, name: str, value: str, line: int | None, node: str | None | bool = False) -> None:
    """env:<NAME> for the communication/runtime variables, plus the named facts derived from them."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    if name.startswith(ENV_PREFIXES):
        sink.add(f"env:{name}", value if value else '""', line, node=node)
    derived = {
        "UCX_TLS": "ucx_tls", "NCCL_DMABUF_ENABLE": "nccl_dmabuf_enable",
        "NCCL_SOCKET_IFNAME": "nccl_socket_ifname", "NCCL_IB_HCA": "nccl_ib_hca",
        "CUDA_VISIBLE_DEVICES": "cuda_visible_devices", "VLLM_ALL2ALL_BACKEND": "all2all_backend",
        "SLURM_JOB_NODELIST": "slurm_nodelist", "SLURM_NODELIST": "slurm_nodelist",
    }.get(name)
    if derived and value:
        sink.add(derived, value, line, node=node)
    if name == "HOSTNAME" and value:
        sink.add("hostname", value, line, node=node)
    if name == "NCCL_IB_HCA" and value and not value.startswith("^"):
        sink.add("interconnect", "rdma", line, node=node)


# ------------------------------------------------------------------------------------------
# normalisers
# ------------------------------------------------------------------------------------------
_MONTHS = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
DATE_FORMS = ("date_c_locale", "date_rfc2822", "date_iso")  # [[regex]] names, tried in this order
_ZERO_TZ = ("UTC", "GMT", "Z", "UT")


def tz_suffix(tz: str | None) -> str:
    """'+02:00' for a zone as a time prints it ('+0200', '+02', 'UTC', 'CEST'); '' for none, or an abbreviation
    that names several zones (CST: patterns/facts.toml [zone_offsets] lists those that name one)."""
    if not tz:
        return ""
    if tz.upper() in _ZERO_TZ:
        return "+00:00"
    m = re.fullmatch(r"([+-])(\d\d)(?::?(\d\d))?", tz)  # splits an offset already read into its numbers
    if m:
        return f"{m.group(1)}{m.group(2)}:{m.group(3) or '00'}"
    # (facts.toml [zone_offsets], as written: facts/data.py checks the table where facts.toml is loaded whole)
    return str(builtin_data("facts.toml").get("zone_offsets", {}).get(tz.upper(), ""))


def parse_date(text: str) -> str | None:
    """ISO 8601 for a date as `date`, nvidia-smi, RFC 2822 or ISO print it; None otherwise.

    A zone is kept when the text states UTC/GMT or a numeric offset; otherwise the result is naive.
    """
    s = text.strip()
    for form in DATE_FORMS:
        m = FACTS[form].match(s)
        if not m:
            continue
        g = m.groupdict()
        mon = int(g["mo"]) if g.get("mo") else _MONTHS[g["mon"][:3].lower()]
        hour = int(g["H"])
        if g.get("ampm") == "PM" and hour < 12:
            hour += 12
        elif g.get("ampm") == "AM" and hour == 12:
            hour = 0
        try:
            y, d, mi, sec = int(g["y"]), int(g["d"]), int(g["M"]), int(g["S"])
        except (TypeError, ValueError):
            return None
        if not (1 <= mon <= 12 and 1 <= d <= 31 and hour < 24 and mi < 60 and sec < 61):
            return None
        return f"{y:04d}-{mon:02d}-{d:02d}T{hour:02d}:{mi:02d}:{sec:02d}{tz_suffix(g.get('tz'))}"
    return None


def norm_bus_id(text: str) -> str | None:
    """'00000000:18:00.0' / '0000:18:00' / '18:00.0' -> '0000:18:00' (lower-case hex)."""
    m = FACTS["pci_bus_id"].search(text or "")
    if not m:
        return None
    dom = int(m.group("dom"), 16) if m.group("dom") else 0
    return f"{dom:04x}:{m.group('bus').lower()}:{m.group('dev').lower()}"


# mechanics, not a format: splits a size already read from a dump into its number and unit
_SIZE_RE = re.compile(r"^\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<u>[A-Za-z]*)\s*$")
_K8S_UNITS = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
              "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_DOCKER_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30,
                 "t": 2**40, "tb": 2**40}


def parse_size(text: str, docker: bool = False) -> int | None:
    """Bytes for a Kubernetes quantity ('16Gi', '1G') or, with docker=True, a docker size ('64g', '512m')."""
    m = _SIZE_RE.match(str(text))
    if not m:
        return None
    unit = m.group("u")
    mult = _DOCKER_UNITS.get(unit.lower()) if docker else _K8S_UNITS.get(unit)
    if mult is None:
        return None
    return int(float(m.group("n")) * mult)


# mechanics, not a format: splits a version already read from a dump into its release numbers
_REL_RE = re.compile(r"^\s*v?(?P<rel>\d+(?:\.\d+)*)(?P<rest>.*)$")


def version_key(text: str) -> tuple[tuple[int, ...], int] | None:
    """A sortable key for '0.27.1', '0.18.1rc1.dev203+g97d1', '0.5.0.post1': (release, 0 if pre-release else 1)."""
    m = _REL_RE.match(text or "")
    if not m:
        return None
    rel = tuple(int(x) for x in m.group("rel").split("."))
    while len(rel) > 1 and rel[-1] == 0:
        rel = rel[:-1]
    rest = m.group("rest").lower()
    pre = bool(FACTS["prerelease_suffix"].match(rest))
    return rel, 0 if pre else 1


def version_less(a: str, b: str) -> bool | None:
    ka, kb = version_key(a), version_key(b)
    if ka is None or kb is None:
        return None
    return ka < kb


def cuda_major(text: str | None) -> int | None:
    """CUDA major from '13.0', '12.8.1', 'cu130', 'cu129', '2.9.0+cu130', '12080' (cudaDriverVersion)."""
    if not text:
        return None
    s = str(text).strip().lower()
    # mechanics: splits a version already read into its numbers
    m = re.search(r"cu(\d{2,3})\b", s)
    if m:
        d = m.group(1)
        return int(d[:-1]) if len(d) == 3 else int(d[0])
    m = re.fullmatch(r"(\d{2})(\d{3})", s)
    if m:
        return int(m.group(1))
    m = re.match(r"(\d+)(?:\.\d+)*", s)
    return int(m.group(1)) if m else None


def torch_build(version: str) -> str | None:
    """'2.9.0+cu130' -> 'cu130'."""
    m = FACTS["torch_cuda_tag"].search(version or "")
    return m.group(1) if m else None


def norm_image(ref: str) -> str:
    """Image reference without registry default prefixes and digest: docker.io/library/x -> x."""
    s = (ref or "").strip()
    s = s.split("@", 1)[0]
    for p in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if s.startswith(p):
            s = s[len(p):]
    if s.startswith("library/"):
        s = s[len("library/"):]
    return s


def digest_of(ref: str) -> str | None:
    m = FACTS["image_digest"].search(ref or "")
    return m.group(1) if m else None


def find_line(lines: list[str], needle: str | re.Pattern, start: int = 0, end: int | None = None) -> int | None:
    """Index of the first line in [start, end) containing `needle` (a literal or compiled regex)."""
    end = len(lines) if end is None else min(end, len(lines))
    for i in range(max(0, start), end):
        if (needle.search(lines[i]) if isinstance(needle, re.Pattern) else needle in lines[i]):
            return i
    return None


def templated_inspect(lines: list[str], command: str | None) -> list[dict] | None:
    """What `docker inspect --format '{{.RestartCount}} {{.State.ExitCode}}'` printed, as the JSON it stands for
    ({"RestartCount": 2, "State": {"ExitCode": 0}}): one object per output line, each field's value read where
    the template puts it (a field's value holds no blank unless it is the last). None where the format is not a
    plain list of fields."""
    m = FACTS["inspect_format"].search(command or "")
    if not m:
        return None
    template = m.group("t") or m.group("t2") or ""
    parts = re.split(r"\{\{\s*\.([\w.]+)\s*\}\}", template.replace("\\t", "\t"))
    fields, literals = parts[1::2], parts[0::2]
    if not fields or any("{" in lit or "}" in lit for lit in literals):
        return None

    def literal(text: str) -> str:   # (blanks: any run of them; the output's columns may be padded)
        return r"\s+".join(re.escape(w) for w in text.split(" ")) if text.strip() else (r"\s+" if text else "")
    rx = re.compile("".join(literal(lit) + (r"(\S*)" if i < len(fields) - 1 else "(.*?)")
                            for i, lit in enumerate(literals[:-1])) + literal(literals[-1]) + "$")
    out = []
    for line in lines:
        if not (got := rx.match(line.strip())):
            continue
        doc: dict = {}
        for path, raw in zip(fields, got.groups()):
            *outer, last = path.split(".")
            d = doc
            for key in outer:
                d = d.setdefault(key, {})
            d[last] = int(raw) if raw.isdigit() else {"true": True, "false": False}.get(raw, raw)
        out.append(doc)
    return out or None
