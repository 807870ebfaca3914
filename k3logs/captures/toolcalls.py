"""Captured tool calls checked against the tool schemas of their request, failures sorted into model/parser
faults (the raw response vLLM returned is itself wrong) and gateway faults (the raw response is fine, the
copy the gateway passed on is not).

API (for the go-live verdict's criterion "tool calls pass schema checks"):

    from k3logs.captures.toolcalls import check_bundle
    s = check_bundle(path, settings=None)   # -> ToolCallSummary; raises BundleError if path cannot be read
    s.checked                 # tool calls checked (raw calls, leaked-markup answers, duplicated forwarded copies)
    s.failed_model_parser     # the raw response is malformed
    s.failed_gateway          # the raw response is fine, the forwarded copy is not
    s.failed_unattributed     # only the forwarded copy was captured: model or gateway cannot be told apart
    s.failed                  # the sum of the three
    s.passed                  # checked > 0 and failed == 0;  checked == 0 means "no evidence"
    s.kinds                   # {"model_parser.unknown_tool": 2, "gateway.double_escaped": 1, ...}
    s.examples                # [ToolCallFailure(cls, kind, evidence "file:line", request, tool, detail)], <= 3 a kind
    s.evidence                # "file:line" of every failure (the first 200), in bundle order
    s.first_checked           # "file:line" of the first exchange with a checked call (None: none)
    s.detail                  # one line: "3 of 10 tool calls failed: 2 model/parser (unknown_tool 1, ...); ..."
    s.to_json()               # the dict `k3logs toolcalls --format json` prints

For the go-live verdict (pipeline.report_of hands it over as a k3logs.acceptance.verdict.ToolCallEvidence):
    ToolCallEvidence(s.checked, s.failed, (s.evidence or [s.first_checked])[0], s.detail)

Captures are read by k3logs.captures.read (shapes in its docstring): one exchange per record with the request,
the raw response and/or the forwarded response (OpenAI chat completions: `choices[].message.tool_calls[]`
with `id`, `type`, `function.name` and `function.arguments`, a JSON string). Records of one exchange split
over lines or files are joined by id; a second record with the same id and a part already seen is a retry.

Model/parser kinds: malformed_call (no function name, arguments not a string), unknown_tool (a name the
request's tools do not have), arguments_not_json, schema_violation (jsonschema, the draft the schema names,
2020-12 otherwise; `$ref`s are never fetched), leaked_markup (tool-call markup of patterns/toolcalls.toml in
the answer's text: a call the parser did not extract). Gateway kinds: lost_fields (the forwarded copy lacks the
call, its id, type, name or arguments, or some of the arguments' fields), double_escaped (arguments
JSON-encoded twice), altered_arguments (other arguments, or an object instead of a string), duplicated (a forwarded
call id seen before, the same call forwarded again for the same exchange, or more copies of a call than the raw
response holds).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from k3logs.gate import release
from k3logs.settings import Settings

from .calls import call_key, call_problem, calls_of, function_of, gateway_problem, leaks_of, tools_of
from .read import Capture, CaptureStats, read_captures

MODEL_PARSER, GATEWAY, UNATTRIBUTED = "model_parser", "gateway", "unattributed"
KINDS = {  # kind -> the class it belongs to when the raw response is known
    "malformed_call": MODEL_PARSER, "unknown_tool": MODEL_PARSER, "arguments_not_json": MODEL_PARSER,
    "schema_violation": MODEL_PARSER, "leaked_markup": MODEL_PARSER,
    "lost_fields": GATEWAY, "double_escaped": GATEWAY, "altered_arguments": GATEWAY, "duplicated": GATEWAY,
}
EXAMPLES_PER_KIND = 3
MAX_EVIDENCE = 200
MAX_PENDING = 10_000  # exchanges split over records, held until the end to be joined


@dataclass(frozen=True)
class ToolCallFailure:
    cls: str              # model_parser | gateway | unattributed
    kind: str             # see KINDS
    evidence: str         # file:line of the capture record
    request: str          # the exchange's id, or its file:line
    tool: str | None
    detail: str = field(metadata={"clip": 240})  # one line, cut at the gate out (after it is redacted)


@dataclass
class ToolCallSummary:
    exchanges: int = 0
    checked: int = 0
    failed_model_parser: int = 0
    failed_gateway: int = 0
    failed_unattributed: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    examples: list[ToolCallFailure] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    first_checked: str | None = None   # file:line of the first exchange with a checked call
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return self.failed_model_parser + self.failed_gateway + self.failed_unattributed

    @property
    def passed(self) -> bool:
        return self.checked > 0 and self.failed == 0

    @property
    def detail(self) -> str:
        """One line for a verdict: how many failed, by class and kind."""
        if self.checked == 0:
            return "no captured tool call"
        if not self.failed:
            return f"{self.checked} tool calls passed their schema checks"
        parts = []
        for cls, n in ((MODEL_PARSER, self.failed_model_parser), (GATEWAY, self.failed_gateway),
                       (UNATTRIBUTED, self.failed_unattributed)):
            if n:
                kinds = ", ".join(f"{k.split('.', 1)[1]} {c}" for k, c in sorted(self.kinds.items())
                                  if k.startswith(cls + "."))
                parts.append(f"{n} {cls.replace('_', '/')} ({kinds})")
        return f"{self.failed} of {self.checked} tool calls failed: {'; '.join(parts)}"

    def to_json(self) -> dict:
        return {"exchanges": self.exchanges, "checked": self.checked, "passed": self.passed,
                "failed_model_parser": self.failed_model_parser, "failed_gateway": self.failed_gateway,
                "failed_unattributed": self.failed_unattributed, "kinds": dict(sorted(self.kinds.items())),
                "examples": [e.__dict__ for e in self.examples], "evidence": self.evidence,
                "first_checked": self.first_checked, "detail": self.detail, "notes": self.notes}

    def fail(self, cls: str, kind: str, cap: Capture, tool, detail: str) -> None:
        setattr(self, f"failed_{cls}", getattr(self, f"failed_{cls}") + 1)
        key = f"{cls}.{kind}"
        self.kinds[key] = self.kinds.get(key, 0) + 1
        if sum(e.cls == cls and e.kind == kind for e in self.examples) < EXAMPLES_PER_KIND:
            self.examples.append(ToolCallFailure(cls, kind, cap.where, cap.id or cap.where,
                                                 tool if isinstance(tool, str) else None,
                                                 " ".join(detail.split())))
        if len(self.evidence) < MAX_EVIDENCE:
            self.evidence.append(cap.where)


# ------------------------------------------------------------------------------------------------------
# one exchange
# ------------------------------------------------------------------------------------------------------
class _Checker:
    def __init__(self):
        self.summary = ToolCallSummary()
        self.forwarded_ids: set[str] = set()
        self.forwarded_keys: set[tuple[str, str]] = set()   # (exchange id, call) already forwarded
        self.no_request = 0
        self.schema_notes: dict[str, str] = {}

    def check(self, cap: Capture) -> None:
        s = self.summary
        if cap.response is None and cap.forwarded is None:
            return
        if cap.request is None:
            self.no_request += 1
            return
        s.exchanges += 1
        tools = tools_of(cap.request)
        raw_known = cap.response is not None
        first = cap.response if raw_known else cap.forwarded
        cls_self = MODEL_PARSER if raw_known else UNATTRIBUTED
        if s.first_checked is None and (leaks_of(first) or calls_of(first)):
            s.first_checked = cap.where
        for lit in leaks_of(first):
            s.checked += 1
            s.fail(cls_self, "leaked_markup", cap, None, f"tool-call markup {lit} in the answer's text")
        good: set[int] = set()  # identities of the calls that passed (only those are compared downstream)
        for _, call in calls_of(first):
            s.checked += 1
            problem = call_problem(call, tools)
            if problem and problem[1].startswith("!"):
                self.schema_notes.setdefault(str(function_of(call).get("name")), problem[1][1:])
                problem = None
            if problem:
                s.fail(cls_self, problem[0], cap, function_of(call).get("name"), problem[1])
            else:
                good.add(id(call))
        if raw_known and cap.forwarded is not None:
            self._compare(cap, good)
        elif not raw_known:
            fwd = [c for _, c in calls_of(cap.forwarded)]
            self._forwarded_again(cap, fwd, UNATTRIBUTED, None, {id(c) for c in fwd})

    def _compare(self, cap: Capture, good: set[int]) -> None:
        """Each good raw call against its forwarded copy (same id, else same position in the same choice)."""
        fwd = calls_of(cap.forwarded)
        by_id: dict[str, object] = {}
        by_choice: dict[int, list] = {}
        for ci, c in fwd:
            if isinstance(c, dict) and isinstance(c.get("id"), str):
                by_id.setdefault(c["id"], c)
            by_choice.setdefault(ci, []).append(c)
        matched: set[int] = set()
        position: Counter = Counter()
        for ci, raw in calls_of(cap.response):
            pos = position[ci]
            position[ci] += 1
            f = by_id.get(raw.get("id")) if isinstance(raw, dict) and isinstance(raw.get("id"), str) else None
            if f is None and pos < len(by_choice.get(ci, [])):
                f = by_choice[ci][pos]
            if f is not None:
                matched.add(id(f))
            if id(raw) in good:
                problem = gateway_problem(raw, f)
                if problem:
                    self.summary.fail(GATEWAY, problem[0], cap, function_of(raw).get("name"), problem[1])
        raw_keys = Counter(call_key(c) for _, c in calls_of(cap.response))
        self._forwarded_again(cap, [c for _, c in fwd], GATEWAY, raw_keys, matched)

    def _forwarded_again(self, cap: Capture, forwarded: list, cls: str, raw_keys: Counter | None,
                         matched: set[int]) -> None:
        """Forwarded calls beyond the raw ones: a copy of a raw call (or one seen before) is `duplicated`, another
        call `altered_arguments`; a call whose id was forwarded before, or forwarded again for the same exchange
        (a retry passed on with a new id), is `duplicated` too."""
        s, exchange, here = self.summary, cap.id or cap.where, set()
        for call in forwarded:
            k, cid = call_key(call), call.get("id") if isinstance(call, dict) else None
            extra = id(call) not in matched
            repeated = (isinstance(cid, str) and cid in self.forwarded_ids) or (exchange, k) in self.forwarded_keys
            if extra:
                s.checked += 1
            if extra and not repeated and raw_keys is not None and k not in raw_keys:
                s.fail(cls, "altered_arguments", cap, function_of(call).get("name"),
                       "a forwarded call the raw response does not have")
            elif extra or repeated:
                s.fail(cls, "duplicated", cap, function_of(call).get("name"),
                       f"call {cid or function_of(call).get('name')} forwarded more than once")
            here.add(k)
            if isinstance(cid, str):
                self.forwarded_ids.add(cid)
        self.forwarded_keys |= {(exchange, k) for k in here}


def check_bundle(path: str | Path, settings: Settings | None = None,
                 only: Collection[str] | None = None) -> ToolCallSummary:
    """Every captured tool call under `path` (file, folder or archive), checked (module docstring); with
    `only`, in those files of it alone (names as the report shows them)."""
    settings = settings or Settings()
    stats = CaptureStats()
    checker = _Checker()
    pending: dict[str, Capture] = {}
    for cap in read_captures(path, settings, stats, only):
        complete = cap.request is not None and cap.response is not None and cap.forwarded is not None
        if cap.id is None or complete:
            checker.check(cap)
            continue
        held = pending.get(cap.id)
        parts = ("request", "response", "forwarded")
        if held is not None and not any(getattr(held, k) is not None and getattr(cap, k) is not None for k in parts):
            for k in parts:  # another part of the same exchange: join them
                if getattr(held, k) is None:
                    setattr(held, k, getattr(cap, k))
            if cap.response is not None or cap.forwarded is not None:  # failures are in the responses: cite them
                held.file, held.line = cap.file, cap.line
            continue
        if held is not None:  # a part seen twice: a retry, its own exchange
            checker.check(pending.pop(cap.id))
        if len(pending) >= MAX_PENDING:
            checker.check(pending.pop(next(iter(pending))))
        pending[cap.id] = cap
    for cap in pending.values():
        checker.check(cap)
    s = checker.summary
    s.evidence.sort(key=_evidence_order)
    if checker.no_request:
        s.notes.append(f"{checker.no_request} response(s) without their request (no record with the same id): "
                       f"their tool calls were not checked")
    s.notes += [f"tool {name}: {why}; its arguments were only checked to be a JSON object"
                for name, why in sorted(checker.schema_notes.items())]
    s.notes += stats.notes()
    return release(s, settings)


def _evidence_order(where: str) -> tuple[str, int]:
    file, _, line = where.rpartition(":")
    return (file, int(line) if line.isdigit() else 0)


# ------------------------------------------------------------------------------------------------------
# markdown
# ------------------------------------------------------------------------------------------------------
def render_markdown(s: ToolCallSummary) -> str:
    from k3logs.report.render import cell
    verdict = "no tool calls found" if s.checked == 0 else ("all pass" if s.passed else f"{s.failed} failed")
    out = [f"# Tool calls: {s.checked} checked in {s.exchanges} exchange(s), {verdict}", "",
           "| class | failed | meaning |", "|---|---|---|",
           f"| model/parser | {s.failed_model_parser} | the raw response is malformed (unknown tool, arguments not "
           f"JSON or against the schema, tool-call markup left in the text) |",
           f"| gateway | {s.failed_gateway} | the raw response is fine, the forwarded copy lost fields, escaped "
           f"the arguments twice, changed them or repeated the call |"]
    if s.failed_unattributed:
        out.append(f"| unattributed | {s.failed_unattributed} | only the forwarded copy was captured: model or "
                   f"gateway cannot be told apart |")
    out.append("")
    if s.kinds:
        out += ["| kind | count |", "|---|---|"] + [f"| {k} | {n} |" for k, n in sorted(s.kinds.items())] + [""]
    if s.examples:
        out += ["## Examples", "", "| class | kind | where | request | tool | detail |", "|---|---|---|---|---|---|"]
        for e in s.examples:
            out.append(f"| {e.cls} | {e.kind} | {cell(e.evidence)} | {cell(e.request)} | {cell(e.tool or '-')} | "
                       f"{cell(e.detail)} |")
        out.append("")
    if s.notes:
        out += ["## Notes", ""] + [f"- {cell(n)}" for n in s.notes] + [""]
    return "\n".join(out)
