"""Why a prefix does not hit: captured requests grouped by the prefix they should share, and for each request
that breaks it earlier than expected, the first differing offset, its section and its cause.

Offsets count characters of the canonical prompt (k3logs.captures.prompt: sections system, tools, messages).

Grouping: requests of the same `model` whose system prompts and tool definitions are the same once
normalised (JSON parsed, keys sorted, tools sorted, whitespace removed, dates/times and ids masked) or alike
(rapidfuzz ratio >= 90 over that normalised text, its first and last 2048 characters when longer, and lengths
within 20%): an edited system prompt or tool stays in its group, so a negative control is reported as `text`,
never as a hit; a different system prompt, or a change of more than about a tenth of the fixed part, makes a
new group (not expected to share).

Within a group, a request is compared with the earlier request it should share the most with: system and
tools always, then every message up to the first one that differs once normalised (the new turn). A
divergence is reported when the prompts differ before that point; its cause is the first of tool_order,
whitespace, key_order, timestamp, request_id that explains the first difference, else text. Bounded: the
last 32 requests of a group are kept to compare with, 256 Mi characters of them in all, at most 1000 groups.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from k3logs import redact
from k3logs.gate import release
from k3logs.settings import Settings

from .prompt import ID, TS, Head, Prompt, catalogue, content_text, mask, prompt_of, structure
from .read import CaptureStats, read_captures

SECTIONS = ("system", "tools", "messages")
CAUSES = ("timestamp", "request_id", "whitespace", "key_order", "tool_order", "text")
WINDOW = 32        # earlier requests of a group kept to compare with (vLLM's cache evicts too)
MAX_GROUPS = 1000  # beyond this, requests that fit no group are counted but not compared
MAX_HELD_CHARS = 256 << 20  # characters of prompts kept to compare with, over all groups
SIMILAR = 90       # rapidfuzz ratio for "the same system prompt and tools, up to edits"
_WS = re.compile(r"\s+")


# ------------------------------------------------------------------------------------------------------
# comparing two prompts
# ------------------------------------------------------------------------------------------------------
def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix: whole blocks compared as slices, then the differing block halved
    (prompts are megabytes; a character loop in Python would dominate the run)."""
    n, i, step = min(len(a), len(b)), 0, 4096
    while i + step <= n and a[i:i + step] == b[i:i + step]:
        i += step
    lo, hi = i, min(i + step, n)  # a[:lo] == b[:lo]; the first difference is before hi (or there is none)
    if a[lo:hi] == b[lo:hi]:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def expected_shared(a: Prompt, b: Prompt) -> int:
    """Where `b` may legitimately start to differ from `a`: its first message that differs once normalised
    (system and tools are always expected to be shared within a group); the end of `b` when every one of its
    messages is in `a`."""
    i = 0
    while i < min(len(a.message_keys), len(b.message_keys)) and a.message_keys[i] == b.message_keys[i]:
        i += 1
    return b.message_starts[i] if i < len(b.message_keys) else len(b.text)


def _whitespace_only(a: str, b: str, o: int, span: int = 2048, keep: int = 256) -> bool:
    """The first difference is whitespace: past it, the next `keep` characters that are not whitespace agree."""
    wa, wb = _WS.sub("", a[o:o + span]), _WS.sub("", b[o:o + span])
    n = min(len(wa), len(wb), keep)
    return wa[:n] == wb[:n] and (n > 0 or wa == wb)


def _same_objects(va, vb) -> bool:
    """The same JSON objects with keys in another order (dict equality ignores order, dumps does not)."""
    sa, sb = structure(va), structure(vb)
    return sa == sb and json.dumps(sa, default=str) != json.dumps(sb, default=str)


def _masked_cause(a: str, b: str, o: int) -> str | None:
    """timestamp or request_id when the first difference is a date/time or an id: changed in place, or
    inserted (with at most a short label) before text that then agrees again."""
    s = max(0, o - 160)
    if s:  # start the window on a word boundary (far enough back that a date at the difference is whole)
        sp = _WS.search(a, s, o)
        s = sp.end() if sp else s
    wa, wb = a[s:o + 1024], b[s:o + 1024]
    r = o - s
    ma, masks_a = mask(wa)
    mb, masks_b = mask(wb)
    at_r = [k for st, e, _, k in masks_a + masks_b if st <= r < e]
    inside = [mp for st, e, mp, _ in masks_a if st <= r < e]  # where the difference is, in the masked text
    pos_a = inside[0] if inside else r - sum(e - st - 1 for st, e, _, _ in masks_a if e <= r)
    ops = [op for op in difflib.SequenceMatcher(None, ma, mb, autojunk=False).get_opcodes()]
    first = next((i for i, op in enumerate(ops) if op[0] != "equal"), None)
    if first is None or ops[first][1] > pos_a:  # masked, the texts agree past the difference: it was a mask
        return {TS: "timestamp", ID: "request_id"}[at_r[0]] if at_r else None
    _, i1, i2, j1, j2 = ops[first]
    ha, hb = ma[i1:i2], mb[j1:j2]
    kinds = [c for c in ha + hb if c in (TS, ID)]
    if not kinds:
        return None
    nxt = ops[first + 1] if first + 1 < len(ops) else None
    isolated = nxt is None or (nxt[0] == "equal" and (nxt[2] - nxt[1] >= 16 or nxt[2] == len(ma)))
    labels = [re.sub(r"[\W_]+", "", h.replace(TS, "").replace(ID, "")) for h in (ha, hb)]
    if isolated and min(len(x) for x in labels) == 0 and max(len(x) for x in labels) <= 120:
        return {TS: "timestamp", ID: "request_id"}[kinds[0]]
    return None


def classify(a: Prompt, b: Prompt, o: int) -> tuple[str, str]:
    """(section, cause) of the first difference of `b` from `a`, at offset `o`."""
    pa, pb = a.part_at(o), b.part_at(o)
    parts = [p for p in (pa, pb) if p is not None]
    section = min((p.section for p in parts), key=SECTIONS.index) if parts else "messages"
    if (pa and pb and pa.section == pb.section == "tools" and a.tool_names != b.tool_names
            and sorted(a.tool_names) == sorted(b.tool_names)
            and a.tool_names[pa.index] != b.tool_names[pb.index]):
        return section, "tool_order"
    if _whitespace_only(a.text, b.text, o):
        return section, "whitespace"
    if pa and pb and (pa.section, pa.index) == (pb.section, pb.index) and _same_objects(pa.value, pb.value):
        return section, "key_order"
    return section, _masked_cause(a.text, b.text, o) or "text"


def _shown(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def context(a: str, b: str, o: int, width: int = 40, redacting: bool = True) -> str:
    """A short excerpt: the shared text before the offset, then what each request has from there. When
    `redacting`, the texts are redacted whole first (a window cut through a secret would hide it from the
    rules), and the offset is then where the redacted texts part."""
    ra, rb = (redact.text(a), redact.text(b)) if redacting else (a, b)
    if (ra, rb) != (a, b):
        a, b = ra, rb
        o = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    before = ("..." if o > width else "") + _shown(b[max(0, o - width):o])
    return f"{before}[A: {_shown(a[o:o + width])!s} | B: {_shown(b[o:o + width])!s}]"


# ------------------------------------------------------------------------------------------------------
# the report
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Divergence:
    request: str
    against: str
    offset: int
    section: str
    cause: str
    context: str


@dataclass
class Group:
    model: str
    requests: list[str] = field(default_factory=list)
    at: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    system: str = ""
    head: Head | None = field(default=None, repr=False)
    recent: list[Prompt] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        return {"model": self.model, "requests": self.requests, "at": self.at, "tools": self.tools,
                "system": self.system}


@dataclass
class PrefixReport:
    requests: int
    groups: list[Group]
    divergences: list[Divergence]
    stats: CaptureStats
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """The documented JSON: exactly requests, groups, divergences."""
        return {"requests": self.requests, "groups": [g.to_json() for g in self.groups],
                "divergences": [d.__dict__ for d in self.divergences]}


class _Groups:
    """The groups found so far, and the earlier requests each keeps to compare with, within two bounds: the
    last WINDOW requests of a group, and MAX_HELD_CHARS of prompt text over all groups (past it, the oldest
    request of the group used least recently is let go)."""

    def __init__(self):
        self.groups: list[Group] = []
        self.exact: dict[tuple[str, bytes], Group] = {}
        self.by_use: dict[int, Group] = {}  # id(group) -> group, least recently used first
        self.held = 0
        self.let_go = 0

    def find(self, p: Prompt) -> Group | None:
        g = self.exact.get((p.model, p.head.digest))
        if g is not None:
            return g
        from rapidfuzz import fuzz
        best, best_score = None, 0.0
        for g in self.groups:
            n, m = g.head.length, p.head.length
            if g.model != p.model or min(n, m) < 0.8 * max(n, m):
                continue
            score = fuzz.ratio(p.head.sample, g.head.sample, score_cutoff=SIMILAR)
            if score > best_score:
                best, best_score = g, score
        if best is not None:
            self.exact[(p.model, p.head.digest)] = best
        return best

    def new(self, p: Prompt, redacting: bool) -> Group:
        system = "".join(pt.value if isinstance(pt.value, str) else content_text(pt.value)
                         for pt in p.parts if pt.section == "system")
        g = Group(p.model, tools=p.tool_names, system=_shown(redact.clip(system, 80) if redacting else redact.cut(system, 80)), head=p.head)
        self.groups.append(g)
        self.exact[(p.model, p.head.digest)] = g
        return g

    def keep(self, g: Group, p: Prompt) -> None:
        g.recent.append(p)
        self.held += len(p.text)
        if len(g.recent) > WINDOW:
            self.held -= len(g.recent.pop(0).text)
        self.by_use.pop(id(g), None)
        self.by_use[id(g)] = g
        while self.held > MAX_HELD_CHARS:
            victim = next(v for v in self.by_use.values() if v.recent)
            self.held -= len(victim.recent.pop(0).text)
            self.let_go += 1


def check_requests(path: str | Path, settings: Settings | None = None) -> PrefixReport:
    """Read every captured request under `path` (a .jsonl file, compressed or not, a folder or an archive)
    and report the groups and the divergences (module docstring). Raises BundleError when `path` cannot be
    read at all; a malformed line is skipped and counted (`stats`)."""
    settings = settings or Settings()
    stats = CaptureStats()
    found = _Groups()
    divergences: list[Divergence] = []
    seen_ids: set[str] = set()
    n = 0
    for cap in read_captures(path, settings, stats):
        if cap.request is None:
            continue  # a response without its request: nothing to compare
        ident = cap.id if cap.id is not None and cap.id not in seen_ids else \
            (f"{cap.id}@{cap.where}" if cap.id is not None else cap.where)
        seen_ids.add(ident)
        try:
            p = prompt_of(cap, ident)
        except RecursionError:
            stats.skip("a request nested too deep to compare", cap.where)
            continue
        n += 1
        g = found.find(p)
        if g is None:
            if len(found.groups) >= MAX_GROUPS:
                stats.skip(f"more than {MAX_GROUPS} prefix groups; not compared", cap.where)
                continue
            g = found.new(p, settings.redact)
        elif g.recent:
            d = _divergence(p, g.recent, settings.redact)
            if d is not None:
                divergences.append(d)
        g.requests.append(ident)
        g.at.append(cap.where)
        found.keep(g, p)
    for g in found.groups:  # what was kept to compare with is not part of the report
        g.recent, g.head = [], None
    notes = stats.notes()
    if found.let_go:
        notes.append(f"{found.let_go} earlier request(s) were let go before the end to keep memory bounded "
                     f"({MAX_HELD_CHARS} characters of prompts held); later ones were not compared with them")
    report = PrefixReport(n, found.groups, divergences, stats, notes)
    return release(report, settings)


def _divergence(b: Prompt, earlier: list[Prompt], redacting: bool) -> Divergence | None:
    """`b` against the earlier request it should share the most with (then the one it shares the most with,
    then the earliest); None when it shares all it should."""
    expected = [expected_shared(a, b) for a in earlier]
    most = max(expected)
    best = None
    for a, e in zip(earlier, expected):  # the common prefix only of those it should share the most with
        if e == most:
            cand = (common_prefix(a.text, b.text), a)
            if best is None or cand[0] > best[0]:
                best = cand
    expected, (actual, a) = most, best
    if actual >= expected:
        return None
    section, cause = classify(a, b, actual)
    return Divergence(b.id, a.id, actual, section, cause, context(a.text, b.text, actual, redacting=redacting))


# ------------------------------------------------------------------------------------------------------
# markdown
# ------------------------------------------------------------------------------------------------------
def render_markdown(report: PrefixReport) -> str:
    from k3logs.report.render import cell, cell_code
    out = [f"# Prefix check: {report.requests} requests, {len(report.groups)} group(s), "
           f"{len(report.divergences)} divergence(s)", ""]
    if report.groups:
        out += ["| group | model | requests | tools | system prompt starts |", "|---|---|---|---|---|"]
        for i, g in enumerate(report.groups, 1):
            out.append(f"| {i} | {cell(g.model or '-')} | {len(g.requests)} | {cell(', '.join(g.tools) or '-')} | "
                       f"{cell(g.system or '-')} |")
        out.append("")
    if report.divergences:
        out += ["## Where the shared prefix breaks", "",
                "| request | against | offset | section | cause | context |", "|---|---|---|---|---|---|"]
        for d in report.divergences:
            out.append(f"| {cell(d.request)} | {cell(d.against)} | {d.offset} | {d.section} | **{d.cause}** | "
                       f"{cell_code(d.context)} |")
        out += ["", "## What to do", ""]
        advice = catalogue()["advice"]
        for cause in CAUSES:
            k = sum(d.cause == cause for d in report.divergences)
            if k:
                out.append(f"- **{cause}** ({k}): {advice[cause]}")
        out.append("")
    else:
        out += ["Every request shares all it should with an earlier one of its group.", ""]
    if report.notes:
        out += ["## Not read", ""] + [f"- {cell(n)}" for n in report.notes] + [""]
    out.append("Offsets count characters of the canonical prompt (system, tools, messages); see k3logs' "
               "docs/captures.md.")
    return "\n".join(out) + "\n"
