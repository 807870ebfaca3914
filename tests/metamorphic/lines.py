"""A log line taken apart the way log-formats.md describes it (collector wrapper, process prefixes, the
application's head, the message), so that a new line can be written exactly like a neighbour: same wrapper
and time, same process, same head format."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime

from . import timefmt

DOCKER_JSON = re.compile(r'^\{\s*"log"\s*:')
CRI = re.compile(r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)) (?P<stream>stdout|stderr) "
                 r"(?P<tag>[FP])(?::\S*)? ?")
# text wrappers: everything before the process's own text (journald before the plain timestamp: it is longer)
TEXT_WRAPPERS = [
    ("journald", re.compile(r"^\w{3,4}\.? [ \d]\d \d\d:\d\d:\d\d(?:\.\d{1,6})? (?P<host>[\w.-]+) (?P<ident>[^\[:\s]+)"
                            r"(?:\[(?P<pid>\d+)\])?: ?")),
    ("journald_iso", re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:?\d\d) (?P<host>[\w.-]+) "
                                r"(?P<ident>[^\[:\s]+)(?:\[(?P<pid>\d+)\])?: ?")),
    ("kubectl_prefix", re.compile(r"^\[pod/[^/\]]+/[^\]]+\] ")),
    ("rfc3339", re.compile(r"^\[?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d)\]? ")),
    ("compose", re.compile(r"^[\w.-]+-\d+\s+\| ")),
]
PREFIXES = re.compile(
    r"^(?:(?:\x1b\[[\d;]*m)?\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*?pid=\d+(?:, ip=[0-9a-fA-F.:]+)?\)(?:\x1b\[[\d;]*m)? ?"
    r"|(?:\x1b\[[\d;]*m)?\((?:raylet|gcs_server)[^)]*\)(?:\x1b\[[\d;]*m)? ?"
    r"|\[rank\d+\]: ?|\[default\d+\]:|\[\d+,\d+\]<std(?:out|err)>: ?)+")
HEADS = [
    ("vllm", re.compile(r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?P<md>\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d) "
                        r"(?P<lb>\[?)(?P<loc>[\w./-]+?\.py:\d+)\] ?")),
    ("uvicorn", re.compile(r"^(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):\s+")),
    ("nccl", re.compile(r"^(?P<pre>(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\] )?[^\s:\[\]]+:\d+:\d+ (?:\[\d+\] )?"
                        r"(?:\S+:\d+ (?:\(\w+\) )?)?NCCL )(?P<level>INFO|WARN|TRACE) ")),
    ("kernel", re.compile(r"^(?:<\d+>)?\[\s*\d+\.\d+\] |^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] "
                          r"|^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d,\d{6}[+-]\d\d:\d\d ")),
    ("c10", re.compile(r"^\[[IWEF]\d{3,4} \d\d:\d\d:\d\d\.\d+ [\w.]+:\d+\] ")),
    ("glog", re.compile(r"^[DIWEFC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w/.-]+:\d+\] ?")),
]


def _docker_escape(s: str) -> str:
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def docker_json(text: str, stream: str, time: str) -> str:
    """One docker json-file record, as dockerd writes it (Go's encoder: <, > and & escaped)."""
    return _docker_escape(json.dumps({"log": text + "\n", "stream": stream, "time": time}, ensure_ascii=False,
                                     separators=(",", ":")))


@dataclass
class Line:
    """One physical line: its wrappers (outermost first), and what is inside."""

    wrappers: list[tuple[str, object]]  # (name, head text), or ('docker_json', (stream, time))
    inner: str                          # the process's own text: prefixes + head + message
    prefix: str
    head: str                           # vllm, uvicorn, nccl, kernel, c10, glog or ''
    hm: re.Match | None
    message: str
    ident: str | None = None            # journald's identifier

    @property
    def wrapper(self) -> str:
        return "+".join(n for n, _ in self.wrappers)

    def rewrap_at(self, text: str, seconds: int = 0, ident: str | None = None, year: int = 2024) -> str:
        """`text` in this line's wrappers, their times `seconds` later (journald's identifier replaced by
        `ident` when given)."""
        for name, head in reversed(self.wrappers):
            if name == "docker_json":
                stream, time = head
                text = docker_json(text, stream, timefmt.shift(time, seconds, year))
            else:
                h = timefmt.shift(head, seconds, year)
                if ident and name.startswith("journald"):
                    h = re.sub(r"[^\[:\s]+(?:\[\d+\])?: ?$", ident + ": ", h)
                text = h + text
        return text

    def clock(self, year: int) -> datetime | None:
        """The time the line states: its own head's, else its wrapper's."""
        own = timefmt.clock_of(self.inner, year)
        if own is not None:
            return own
        for name, head in self.wrappers:
            t = timefmt.clock_of(head[1] if name == "docker_json" else head, year)
            if t is not None:
                return t
        return None


def wrappers_of(lines: list[str]) -> set[str]:
    """The text wrappers a file's lines carry (on 30% of its first 200 lines or more): a line's own text
    may look like one ('Engine 000: ...' like a journald identifier), so a file decides, not a line."""
    counts: dict[str, int] = {}
    sample = [ln for ln in lines[:200] if ln.strip()]
    for ln in sample:
        for name in _layers(_unwrap_record(ln) or "", None)[0]:
            counts[name] = counts.get(name, 0) + 1
    return {n for n, c in counts.items() if c >= 0.3 * len(sample)}


def _unwrap_record(ln: str) -> str | None:
    if DOCKER_JSON.match(ln):
        try:
            return json.loads(ln).get("log", "")
        except ValueError:
            return None
    m = CRI.match(ln)
    return ln[m.end():] if m else ln


def _layers(inner: str, allowed: set[str] | None) -> tuple[list[str], list[str], str]:
    names, heads = [], []
    for _ in range(3):
        for name, rx in TEXT_WRAPPERS:
            m = rx.match(inner) if allowed is None or name in allowed else None
            if m:
                names.append(name)
                heads.append(inner[:m.end()])
                inner = inner[m.end():]
                break
        else:
            break
    return names, heads, inner


def take_apart(physical: str, allowed: set[str] | None = None) -> Line | None:
    """The layers of one line (without its newline), trying only the `allowed` text wrappers (all when None);
    None for a partial container record (no newline)."""
    wrappers: list[tuple[str, object]] = []
    inner, ident = physical, None
    if DOCKER_JSON.match(inner):
        try:
            rec = json.loads(inner)
        except ValueError:
            return None
        if not isinstance(rec.get("log"), str) or not rec["log"].endswith("\n"):
            return None
        wrappers.append(("docker_json", (rec.get("stream", "stdout"), rec.get("time", ""))))
        inner = rec["log"][:-1]
    elif (m := CRI.match(inner)):
        if m.group("tag") != "F":
            return None
        wrappers.append(("cri", inner[:m.end()]))
        inner = inner[m.end():]
    names, heads, inner = _layers(inner, allowed)
    for name, head in zip(names, heads):
        wrappers.append((name, head))
        if name.startswith("journald"):
            ident = dict(TEXT_WRAPPERS)[name].match(head).group("ident")
    pm = PREFIXES.match(inner)
    prefix = pm.group(0) if pm else ""
    rest = inner[len(prefix):]
    head, hm = "", None
    for name, rx in HEADS:
        hm = rx.match(rest)
        if hm:
            head = name
            break
    if not head and ident == "kernel":
        head = "kernel"
    message = rest[hm.end():] if hm else rest
    return Line(wrappers, inner, prefix, head, hm, message, ident)


def is_api_server(line: Line) -> bool:
    """The API server's own output (or a process that prints no prefix)."""
    return not line.prefix or "APIServer" in line.prefix


def head_text(kind: str, args: list[str], near: Line, t: datetime | None, ns: int) -> str | None:
    """The head a new line of `kind` gets next to `near` at time `t`; None when it cannot be written there."""
    if kind == "raw":
        return ""
    if kind == "uvicorn":
        return f"{args[0] if args else 'INFO'}:     "
    if kind == "vllm":
        if t is None:
            return None
        level, loc = args[0], ":".join(args[1:])
        old_style = near.head == "vllm" and not near.hm.group("lb")
        return f"{level} {t:%m-%d %H:%M:%S} " + (f"{loc}] " if old_style else f"[{loc}] ")
    if kind == "c10":
        if t is None:
            return None
        return f"[{args[0]}{t.month:02d}{t.day:02d} {t:%H:%M:%S}.{ns:09d} {':'.join(args[1:])}] "
    if kind == "nccl":
        if near.head != "nccl":
            return None
        return near.hm.group("pre") + (args[0] if args else "INFO") + " "
    if kind == "kernel":
        if near.head != "kernel":
            return None
        return near.hm.group(0) if near.hm else ""
    raise ValueError(f"unknown head kind {kind!r}")
