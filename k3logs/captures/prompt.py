"""The canonical prompt of a captured request: what `k3logs prefix` counts offsets in, split into its three
sections, and the normalised forms it groups and compares requests by.

    system    the leading system/developer messages, each  <|im_system|>system<|im_middle|>TEXT<|im_end|>
    tools     <|im_system|>tool_declare<|im_middle|>[TOOL, TOOL, ...]<|im_end|>, each TOOL as json.dumps
              writes it (keys in the order sent, ", " and ": " separators; HF chat templates' tojson
              keeps key order, so key order matters and the request body's own JSON whitespace does not)
    messages  every other message  <|im_ROLE|>ROLE[:name or tool_call_id]<|im_middle|>CONTENT
              [<|tool_calls_section_begin|><|tool_call_begin|>ID<|tool_call_argument_begin|>NAME:ARGUMENTS
              <|tool_call_end|>...<|tool_calls_section_end|>]<|im_end|>  (arguments and tool results exactly as
              sent: a re-serialised string changes the prompt); for /v1/completions, the `prompt` itself

Offsets are characters (code points) of that text. Dates/times and ids (patterns/prefix.toml) are masked with
one placeholder character each where requests are normalised or a divergence is explained.
"""
from __future__ import annotations

import bisect
import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from k3logs.catalogue.read import read_toml_or_raise
from k3logs.resources import data_dir

from .read import Capture

HEAD_SAMPLE = 2048  # characters from each end of the normalised system + tools that grouping compares
_WS = re.compile(r"\s+")
_DIGIT = re.compile(r"\d")
TS, ID = "\x01", "\x02"  # placeholders of masked dates/times and ids (never in JSON text)


# ------------------------------------------------------------------------------------------------------
# the catalogue: patterns/prefix.toml
# ------------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def catalogue() -> dict:
    return load_prefix_data(data_dir("patterns") / "prefix.toml")


def load_prefix_data(path: Path) -> dict:
    """A prefix file's tables: the request ids and timestamps masked (each a regex that compiles)."""
    data, _ = read_toml_or_raise(path, "prefix rules")
    for table in ("request_id", "timestamp"):
        for rule in data.get(table, []):
            re.compile(rule["regex"])
    return data


@lru_cache(maxsize=1)
def _maskers() -> tuple[tuple[re.Pattern, str], ...]:
    cat = catalogue()  # ids first: a uuid holds digit runs a date/time rule could take
    return tuple((re.compile(r["regex"]), ID) for r in cat["request_id"]) + \
        tuple((re.compile(r["regex"]), TS) for r in cat["timestamp"])


def mask(text: str) -> tuple[str, list[tuple[int, int, int, str]]]:
    """`text` with every date/time and id replaced by one placeholder character, and the masks as
    (start, end in `text`, position in the masked text, placeholder). For the few kilobytes around a
    divergence (where a match overlaps an earlier rule's, the earlier rule wins)."""
    spans: list[tuple[int, int, str]] = []
    for pattern, kind in _maskers():
        for m in pattern.finditer(text):
            if m.end() > m.start() and not any(s < m.end() and m.start() < e for s, e, _ in spans):
                spans.append((m.start(), m.end(), kind))
    spans.sort()
    out, masks, pos, length = [], [], 0, 0
    for s, e, kind in spans:
        out += [text[pos:s], kind]
        length += s - pos
        masks.append((s, e, length, kind))
        length += 1
        pos = e
    out.append(text[pos:])
    return "".join(out), masks


def masked(text: str) -> str:
    """`text` with dates/times and ids replaced (rule after rule: linear, for whole prompts)."""
    if not _DIGIT.search(text):  # every rule needs a digit (patterns/prefix.toml)
        return text
    for pattern, kind in _maskers():
        text = pattern.sub(kind, text)
    return text


# ------------------------------------------------------------------------------------------------------
# the prompt
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Part:
    """One element of the prompt: a system message, a tool, or a message, with its span in the text."""

    section: str
    index: int
    start: int
    end: int
    value: object


@dataclass
class Prompt:
    id: str
    where: str
    model: str
    text: str
    parts: list[Part]
    tool_names: list[str]
    message_keys: list[bytes]    # digests of the normalised messages of the messages section
    message_starts: list[int]
    head: Head                   # normalised system + tools (the grouping key)

    def part_at(self, offset: int) -> Part | None:
        i = bisect.bisect_right([p.start for p in self.parts], offset) - 1
        return self.parts[i] if 0 <= i < len(self.parts) and offset < self.parts[i].end else None


def structure(value):
    """The value with every string that holds a JSON object or array parsed (arguments, tool results)."""
    if isinstance(value, str):
        s = value.strip()
        if s[:1] in ("{", "["):
            try:
                return structure(json.loads(s))
            except ValueError:
                return value
        return value
    if isinstance(value, dict):
        return {str(k): structure(v) for k, v in value.items()}
    if isinstance(value, list):
        return [structure(v) for v in value]
    return value


def _squeezed(value):
    """Every string masked, then without whitespace (inside JSON text a newline would be an escape)."""
    if isinstance(value, str):
        return _WS.sub("", masked(value))
    if isinstance(value, dict):
        return {_squeezed(k): _squeezed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_squeezed(v) for v in value]
    return value


_cache: dict[bytes, str] = {}   # normalised forms by digest of the value's JSON text
_cache_chars = 0
CACHE_CHARS = 64 << 20          # bound: the cache is emptied when it would hold more


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def normalised(value) -> str:
    """What stays of a value when whitespace, key order, dates/times and ids do not count. Cached: the system
    prompt, the tools and the history repeat in every request."""
    global _cache_chars
    key = digest(json.dumps(value, ensure_ascii=False, default=str))
    hit = _cache.get(key)
    if hit is None:
        hit = json.dumps(_squeezed(structure(value)), sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                         default=str)
        if _cache_chars + len(hit) > CACHE_CHARS:
            _cache.clear()
            _cache_chars = 0
        _cache[key] = hit
        _cache_chars += len(hit)
    return hit


@dataclass(frozen=True)
class Head:
    """The normalised system prompt and tools of a request, kept small: its digest (equality), its length and
    its first and last HEAD_SAMPLE characters (likeness)."""

    digest: bytes
    length: int
    sample: str

    @classmethod
    def of(cls, text: str) -> "Head":
        sample = text if len(text) <= 2 * HEAD_SAMPLE else text[:HEAD_SAMPLE] + text[-HEAD_SAMPLE:]
        return cls(digest(text), len(text), sample)


def content_text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
            else:  # images, audio: a marker and where it comes from (a data: URL is cut to its head)
                out.append(f"<|media|>{json.dumps(part, ensure_ascii=False, default=str)[:200]}<|media_end|>")
        return "".join(out)
    return json.dumps(content, ensure_ascii=False, default=str)


def _tool_calls(calls) -> str:
    if not isinstance(calls, list) or not calls:
        return ""
    out = []
    for c in calls:
        f = c.get("function") if isinstance(c, dict) and isinstance(c.get("function"), dict) else {}
        args = f.get("arguments", "")
        args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
        out.append(f"<|tool_call_begin|>{c.get('id', '') if isinstance(c, dict) else ''}<|tool_call_argument_begin|>"
                   f"{f.get('name', '')}:{args}<|tool_call_end|>")
    return "<|tool_calls_section_begin|>" + "".join(out) + "<|tool_calls_section_end|>"


def _message(m) -> str:
    if not isinstance(m, dict):
        return f"<|im_user|>user<|im_middle|>{content_text(m)}<|im_end|>"
    role = str(m.get("role", "user"))
    tag = m.get("tool_call_id") or m.get("name")
    head = f"<|im_{role}|>{role}" + (f":{tag}" if isinstance(tag, str) else "")
    return f"{head}<|im_middle|>{content_text(m.get('content'))}{_tool_calls(m.get('tool_calls'))}<|im_end|>"


def _tool_name(tool) -> str:
    if isinstance(tool, dict):
        f = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if isinstance(f.get("name"), str):
            return f["name"]
    return json.dumps(tool, sort_keys=True, default=str)[:80]


def prompt_of(cap: Capture, ident: str) -> Prompt:
    """The canonical prompt of a captured request (see the module docstring)."""
    req = cap.request or {}
    messages = req.get("messages") if isinstance(req.get("messages"), list) else []
    tools = req.get("tools") if isinstance(req.get("tools"), list) else []
    if not tools and isinstance(req.get("functions"), list):  # the legacy field
        tools = [{"type": "function", "function": f} for f in req["functions"]]
    n_system = next((i for i, m in enumerate(messages)
                     if not (isinstance(m, dict) and m.get("role") in ("system", "developer"))), len(messages))
    texts, parts, pos = [], [], 0

    def emit(section: str, index: int, value, text: str) -> None:
        nonlocal pos
        parts.append(Part(section, index, pos, pos + len(text), value))
        texts.append(text)
        pos += len(text)

    for i, m in enumerate(messages[:n_system]):
        text = content_text(m.get("content"))
        emit("system", i, m.get("content"), f"<|im_system|>system<|im_middle|>{text}<|im_end|>")
    for k, tool in enumerate(tools):
        text = json.dumps(tool, ensure_ascii=False, default=str)
        emit("tools", k, tool, ("<|im_system|>tool_declare<|im_middle|>[" if k == 0 else ", ") + text
             + ("]<|im_end|>" if k == len(tools) - 1 else ""))
    rest = messages[n_system:]
    starts = []
    if "prompt" in req and not messages:
        p = req["prompt"]
        starts.append(pos)
        emit("messages", 0, p, p if isinstance(p, str) else json.dumps(p, ensure_ascii=False, default=str))
        rest_keys = [digest(normalised(p))]
    else:
        for i, m in enumerate(rest):
            starts.append(pos)
            emit("messages", i, m, _message(m))
        rest_keys = [digest(normalised(m)) for m in rest]
    head = Head.of(normalised({"system": [m.get("content") for m in messages[:n_system]],
                               "tools": sorted(normalised(t) for t in tools)}))
    model = req.get("model")
    return Prompt(ident, cap.where, model if isinstance(model, str) else "", "".join(texts), parts,
                  [_tool_name(t) for t in tools], rest_keys, starts, head)
