"""Decide what a bundle file is from its CONTENT (names are arbitrary): binary or text, the wrapper
chain around its lines (docker json-file, CRI, journald, ...), and its kind (schema.LOG_KINDS /
DUMP_KINDS). Every decision comes with a one-line reason. Only the file's head is read."""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from k3logs.catalogue.formats import Formats, builtin_formats
from k3logs.catalogue.regexes import Regexes

from .dumps import SMALL_FILE_LINES, sniff_dump
from .lines import decode_head

HEAD_BYTES = 64 * 1024
HEAD_LINES = 200
LOG_SHARE = 0.9  # of a long head's lines in an application's log format: a log, never a dump
WRAPPER_ORDER = ("docker_json", "journald_json", "elastic_hit", "ecs_document", "fluentbit_json", "vector_k8s_json",
                 "gcp_log_entry", "loki_jsonl", "json_logger", "cloudwatch_tsv", "cri", "kubectl_prefix", "stern",
                 "loki_logcli",
                 "datadog_csv", "cloudwatch_insights_csv", "kibana_csv", "json_message_field", "logfmt", "journald_iso",
                 "journald_iso_nohost", "rfc3339", "journald", "compose", "srun_label", "pdsh")
JOURNALS = ("journald", "journald_iso", "journald_iso_nohost")   # a journal's text exports (its identifier per line)
# a bare label, 'N: ' or 'HOST: ': a dump whose lines start so (`ip -o addr`, `ifconfig`) is that dump, not a log
LABELS = ("srun_label", "pdsh")
NUL_RUN = re.compile(rb"\x00{8,}")  # (kept here: a hole in raw bytes; patterns/*.toml regexes are of text)
INGEST = Regexes("ingest.toml")  # ansi_escape
# what tells a file's kind by its content is data, each regex with its samples: patterns/formats.toml [[sniff]]
# (looked up when used, never at import: loading checks regexes with polars, whose threads must not start
# before a process forks)
# a plain file is of a log kind when at least 1 line in MIN_SHARE is of that kind; of vLLM's, 1 in VLLM_SHARE
# (vLLM output carries NCCL, torch and kernel-looking lines too: a few vLLM lines decide it)
MIN_SHARE, VLLM_SHARE = 5, 10
LINE_KIND = {"vllm": "vllm", "uvicorn": "vllm", "nccl": "nccl", "nccl_located": "nccl", "nccl_version": "nccl",
             "torch_c10": "torch", "glog": "log", "kernel_uptime": "kernel", "kernel_ctime": "kernel",
             "kernel_iso": "kernel", "kernel_decoded": "kernel", "ray": "ray", "ray_cpp": "ray", "python_dash": "log",
             "python_bracket": "torch", "python_basic": "log", "iso_stamped": "log", "local_stamped": "log"}


@dataclass(frozen=True)
class Sniffed:
    kind: str                       # LOG_KINDS, DUMP_KINDS, or text / binary / empty
    wrappers: tuple[str, ...]       # wrapper chain, outermost first
    reason: str
    is_dump: bool = False
    prose: bool = False             # no log format on most lines: notes, a ticket, a job spec (read as plain text)

    @property
    def parsed_as_log(self) -> bool:
        return self.kind not in ("binary", "empty", "captures")


@lru_cache(maxsize=1)
def _compiled(formats_id: int) -> dict[str, list[tuple[str, re.Pattern]]]:
    f = builtin_formats()
    return {
        "wrapper": [(n, re.compile(f.wrappers[n].regex)) for n in WRAPPER_ORDER if n in f.wrappers],
        "prefix": [(p.name, re.compile(p.regex)) for p in f.prefixes],
        "line": [(p.name, re.compile(p.regex)) for p in f.lines],
    }


def _kernels_journal(name: str, lines: list[str], pats: dict) -> bool:
    """A journal of the kernel's lines (`journalctl -k`, a grep of its SXids): what follows its wrapper is a driver's
    name ('nvidia-nvswitch2: ', 'nvme0n1: '), not a host's label."""
    rx = dict(pats["wrapper"])[name]
    if name not in JOURNALS or "ident" not in rx.groupindex:
        return False
    idents = [m.group("ident") for ln in lines if (m := rx.match(ln))]
    return bool(idents) and idents.count("kernel") * 2 >= len(idents)


def _binary_reason(head: bytes) -> str | None:
    if not head:
        return None
    sample = head[:8192]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        # UTF-16 with a BOM is text if it decodes as text: random bytes after a BOM give lone surrogates
        chars = sample.decode("utf-16", "replace")
        bad = sum(1 for c in chars if c == "\ufffd" or (c < " " and c not in "\t\n\r\x1b"))
        if bad > len(chars) // 100:
            return f"binary content ({bad * 100 // len(chars)}% undecodable or control characters after a UTF-16 BOM)"
        return None
    # runs of NUL bytes are holes, not content: a log zero-filled by a crash, or truncated under its writer
    # (logrotate copytruncate) so that its writer goes on at its old offset
    text = NUL_RUN.sub(b"", sample)
    if not text:
        return f"only NUL bytes in the first {len(sample)}"
    nul = text.count(0)
    ctrl = sum(1 for b in text if b < 32 and b not in (9, 10, 13, 27))  # NUL included
    # random bytes hold 11% control bytes (29 of 256 values), text almost none: 5% is far from both
    if nul > len(text) // 100 or ctrl > len(text) // 20:
        return f"binary content ({ctrl * 100 // len(text)}% control bytes in the first {len(sample)})"
    return None


def _peel(line: str, pats: list[tuple[str, re.Pattern]]) -> str:
    for _ in range(6):
        for _, p in pats:
            m = p.match(line)
            if m:
                line = line[m.end():]
                break
        else:
            return line
    return line


def _line_formats(inner: list[str], clean: list[str], pats, sniffing: dict) -> tuple[Counter, int]:
    """How many lines have each application format (a line counts once per kind), and how many have one of an
    application's own (vllm, nccl, torch, kernel ...: not a bare timestamp, which a monitoring CSV has too)."""
    counts: Counter = Counter()
    known = 0
    ansi = INGEST["ansi_escape"]
    for raw, ln in zip(inner, clean):
        raw = ansi.sub("", raw)
        if sniffing["vllm_proc"].match(raw) or sniffing["vllm_text"].search(ln):
            counts["vllm"] += 1
            known += 1
            continue
        if sniffing["k8s_events"].match(ln):
            counts["k8s_events"] += 1
            known += 1
            continue
        kinds = set()
        if sniffing["ray_mark"].search(raw):
            kinds.add("ray")
        if sniffing["torchelastic"].search(ln):
            kinds.add("torch")
        for name, p in pats["line"]:
            if m := p.match(ln):
                # the glog shape is shared by torch's Python logging (path.py) and Go's klog (main.go)
                kinds.add("torch" if name == "glog" and ".py:" in m.group("loc") else LINE_KIND.get(name, "log"))
                break
        counts.update(kinds)
        known += bool(kinds - {"log"})
    return counts, known


def _cleaned(inner: list[str], pats) -> list[str]:
    """The lines without colour codes and process prefixes: what an application's line format reads."""
    ansi = INGEST["ansi_escape"]
    return [_peel(ansi.sub("", ln), pats["prefix"]) for ln in inner]


def _log_after(inner: list[str], clean: list[str], pats, sniffing: dict) -> bool:
    """The second half of a head's lines nearly all have an application's log format: a log that opens with other
    output (a job's script prints nvidia-smi's table or its environment, then starts the server)."""
    half = len(inner) // 2
    return _line_formats(inner[half:], clean[half:], pats, sniffing)[1] >= LOG_SHARE * (len(inner) - half)


SPARSE_MIN = 3  # lines a sparse wrapper must match in a JSON document's head


def _sparse(name: str, hits: int, lines: list[str], formats: Formats | None) -> bool:
    """A sparse wrapper (formats.toml) on enough lines of a JSON document: the log lines it holds are the file's."""
    fmt = (formats or builtin_formats()).wrappers.get(name)
    return fmt is not None and fmt.sparse and hits >= SPARSE_MIN and lines[0].lstrip()[:1] in ("[", "{")


def sniff(head: bytes, size: int | None = None, formats: Formats | None = None) -> Sniffed:
    """Classify a file from its first bytes."""
    if not head.strip():
        return Sniffed("empty", (), "empty file" if not head else "only whitespace")
    why = _binary_reason(head)
    if why:
        return Sniffed("binary", (), why)
    pats = _compiled(id(formats or builtin_formats()))
    sniffing = (formats or builtin_formats()).sniff
    text = decode_head(head[:HEAD_BYTES])
    # (a line's CR, a copy through Windows, is no part of it: the parser drops it too, and a format's `$` needs that)
    lines = [ln.removesuffix("\r") for ln in text.split("\n")[:-1 if len(head) >= HEAD_BYTES else None]
             if ln.strip()][:HEAD_LINES]
    if not lines:
        lines = [text]
    n = len(lines)

    # 1. wrapper chain: a wrapper counts when it is on most lines
    wrappers: list[str] = []
    inner = lines
    reasons: list[str] = []
    for _ in range(2):
        counts = Counter()
        for ln in inner:
            for name, p in pats["wrapper"]:
                if p.match(ln):
                    counts[name] += 1
                    break
        if not counts:
            break
        name, hits = counts.most_common(1)[0]
        # (behind a journal's identifier comes its program's message: 'k3-dp1.service: ', a unit's; a host's label
        # is outermost, pdsh's of a journal it printed, never inside; and a kernel's journal names drivers there)
        if name in LABELS and wrappers and (name == "pdsh" and wrappers[0] in JOURNALS
                                            or _kernels_journal(wrappers[0], lines, pats)):
            break
        sparse = not wrappers and _sparse(name, hits, lines, formats)
        labels = not wrappers and _labels_among_script_lines(name, hits, inner, pats)
        if (hits * 2 < len(inner) and not sparse and not labels) or name in wrappers:
            break
        wrappers.append(name)
        reasons.append(f"{name} wrapper on {hits}/{len(inner)} lines")
        rx = dict(pats["wrapper"])[name]
        inner = [_unwrap(ln, rx, name) for ln in inner if not sparse or rx.match(ln)]   # (sparse: its lines)
    # (a dump whose lines start like labels; or, behind hosts' labels, a dump each host printed: pdsh's `env`, `date`)
    if wrappers and wrappers[0] in LABELS and (sniff_dump(text) or (wrappers[0] == "pdsh" and sniff_dump(
            "\n".join(inner)))) and not (
            n > SMALL_FILE_LINES and _log_after(inner, _cleaned(inner, pats), pats, sniffing)):
        wrappers, inner, reasons = [], lines, []
    if len(wrappers) == 1 and _sparse(wrappers[0], SPARSE_MIN, lines, formats) and \
            _line_formats(inner, _cleaned(inner, pats), pats, sniffing)[1] < LOG_SHARE * len(inner):
        # (a JSON document's message fields are log lines when they carry a log's own time and host, or are an
        # application's log lines (a log group's export: vLLM's own lines); an object's message with no time of its
        # own, a Kubernetes event's, is the document's field)
        wrappers, inner, reasons = [], lines, []

    # 3 before 2: the application format of each unwrapped line
    clean = _cleaned(inner, pats)
    counts, known = _line_formats(inner, clean, pats, sniffing)

    # 2. dumps are recognised on the unwrapped text; a long head whose lines nearly all have an application's log
    # format is a log (the dump detectors cost more than the rest of sniffing, for nothing, on every log file), and
    # so is one that ends in such lines (_log_after)
    if not wrappers and not (n > SMALL_FILE_LINES and (known >= LOG_SHARE * n
                                                       or _log_after(inner, clean, pats, sniffing))):
        dump = sniff_dump(text)
        if dump:
            kind, reason = dump
            return Sniffed(kind, (), reason, is_dump=True)

    # captured request/response bodies (one JSON object a line; a line may be longer than the head)
    if not wrappers and sniffing["capture_line"].match(lines[0]):
        return Sniffed("captures", (), "JSON lines holding chat requests or responses (messages / choices)")

    # 3. logs: the counts of each application format
    if {*JOURNALS, *_json_wrappers()} & set(wrappers):
        idents = Counter(i for ln in lines if (i := _journal_ident(ln, pats)))
        if idents and idents.most_common(1)[0][0] == "kernel":
            counts["kernel"] = n
        elif not counts.get("vllm"):   # (lines of a generic format in a journal are the journal's own)
            counts["journal"] = min(n, counts["journal"] + n // 2 + 1 + counts.pop("log", 0))
    if counts:
        if counts.get("vllm", 0) * VLLM_SHARE >= n:
            kind = "vllm"
        else:
            kind = counts.most_common(1)[0][0]
        hits = counts[kind]
        # (the one line of a known format among other text is a quote of it, unless the file is that line and
        # its indented continuation lines: a note citing a log)
        records = n - sum(1 for ln in inner if ln[:1] in (" ", "\t"))
        quote = sum(counts.values()) == 1 < records
        own = n - sum(1 for ln in clean if sniffing["traceback_body"].match(ln))
        if not wrappers and (hits * (VLLM_SHARE if kind == "vllm" else MIN_SHARE) < own or quote):
            # a line or two of a format among other text (notes, a unit file, a job spec): plain text. (A
            # container's or a unit's output is that program's, whatever else it prints.)
            reasons.append(f"no known format on most lines ({kind} {hits}/{n}); read as plain text")
            return Sniffed("log", tuple(wrappers), "; ".join(reasons), prose=True)
        also = ", ".join(f"{k} {v}" for k, v in counts.most_common() if k != kind)
        reasons.append(f"{kind} lines {hits}/{n}" + (f" (also {also})" if also else ""))
        return Sniffed(kind, tuple(wrappers), "; ".join(reasons))
    reasons.append(f"no known format in {n} lines; read as plain text")
    return Sniffed("log", tuple(wrappers), "; ".join(reasons), prose=not wrappers)


def _labels_among_script_lines(name: str, hits: int, lines: list[str], pats: dict) -> bool:
    """A batch job's output: the lines its tasks print behind their labels (`srun -l`: '0: ', '1: ') among the
    script's own (its echoes, a health check's curl), on a quarter of the lines or more (the file's own labels,
    not a journal's messages that begin like a host's: pdsh's). Tasks print many lines each, so the labels repeat;
    a numbered list's do not."""
    if name != "srun_label" or hits * 4 < len(lines):
        return False
    rx = dict(pats["wrapper"])[name]
    labels = {m.group(1) for ln in lines if (m := rx.match(ln))}
    return len(labels) * 4 <= hits


def _unwrap(line: str, rx: re.Pattern, name: str) -> str:
    m = rx.match(line)
    if not m:
        return line
    if name in _json_wrappers():
        try:
            obj = json.loads(line)
        except ValueError:
            return line
        t = None
        for key in _json_wrappers()[name]:   # (its text keys in order: the first the object has)
            t = obj
            for part in key.split("."):   # (a dotted key: in the objects inside)
                t = t.get(part) if isinstance(t, dict) else None
            if isinstance(t, (str, list)):   # (a key that holds an object, filebeat's `log`, is no text)
                break
        if isinstance(t, list) and all(isinstance(b, int) and 0 <= b < 256 for b in t):
            t = bytes(t).decode("utf-8", "replace")  # (journald's MESSAGE with control characters: its bytes)
        return t if isinstance(t, str) else ""
    if "text" in rx.groupindex:
        t = m.group("text") or ""
        if name in _json_escaped():
            t = t.replace("\\n", "").replace("\\r", "\r").replace('\\"', '"').replace("\\u001b", "\x1b")
        return t
    return line[m.end():]


@lru_cache(maxsize=1)
def _json_escaped() -> frozenset[str]:
    """Wrappers whose text is a JSON string's content (docker's json-file, a JSON export's message field)."""
    return frozenset(n for n, f in builtin_formats().wrappers.items() if f.json_escaped)


@lru_cache(maxsize=1)
def _json_wrappers() -> dict[str, tuple[str, ...]]:
    """Wrappers read by JSON key: name -> the keys of their text, in order."""
    return {n: tuple(k for f_, k in f.json_fields if f_ == "text") for n, f in builtin_formats().wrappers.items()
            if f.json_fields}


def _journal_ident(line: str, pats) -> str | None:
    for name, p in pats["wrapper"]:
        if name in JOURNALS:
            m = p.match(line)
            if m:
                return m.group("ident")
        elif name in _json_wrappers() and p.match(line):
            try:
                obj = json.loads(line)
            except ValueError:
                return None
            # (the identifier under the wrapper's own key for it: journald's SYSLOG_IDENTIFIER, filebeat's process.name)
            keys = [k for f_, k in builtin_formats().wrappers[name].json_fields if f_ == "ident"]
            return next((v for k in keys if isinstance(v := _at_key(obj, k), str)), None)
    return None


def _at_key(obj, dotted: str):
    """The value at a dotted key path of a JSON object ('host.name'), else None."""
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj
