"""Captured tool calls checked against the tool schemas of their request, failures sorted into model/parser
faults (the raw response vLLM returned is itself wrong) and gateway faults (the raw response is fine, the
copy the gateway passed on is not).

API (for the go-live verdict's criterion "tool calls pass schema checks"):

    from k3logs.toolcalls import check_bundle
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

For the go-live verdict (api.report_of hands it over as a k3logs.verdict.ToolCallEvidence):
    ToolCallEvidence(s.checked, s.failed, (s.evidence or [s.first_checked])[0], s.detail)

Captures are read by k3logs.captures (shapes in its docstring): one exchange per record with the request,
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

import json
import tomllib
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import redact
from .captures import Capture, CaptureStats, read_captures
from .resources import data_dir
from .settings import Settings

MODEL_PARSER, GATEWAY, UNATTRIBUTED = "model_parser", "gateway", "unattributed"
KINDS = {  # kind -> the class it belongs to when the raw response is known
    "malformed_call": MODEL_PARSER, "unknown_tool": MODEL_PARSER, "arguments_not_json": MODEL_PARSER,
    "schema_violation": MODEL_PARSER, "leaked_markup": MODEL_PARSER,
    "lost_fields": GATEWAY, "double_escaped": GATEWAY, "altered_arguments": GATEWAY, "duplicated": GATEWAY,
}
EXAMPLES_PER_KIND = 3
MAX_EVIDENCE = 200
MAX_PENDING = 10_000  # exchanges split over records, held until the end to be joined


@lru_cache(maxsize=1)
def markup() -> tuple[str, ...]:
    data = tomllib.loads((data_dir("patterns") / "toolcalls.toml").read_text(encoding="utf-8"))
    return tuple(lit for entry in data["leaked_markup"] for lit in entry["literals"])


@dataclass(frozen=True)
class ToolCallFailure:
    cls: str              # model_parser | gateway | unattributed
    kind: str             # see KINDS
    evidence: str         # file:line of the capture record
    request: str          # the exchange's id, or its file:line
    tool: str | None
    detail: str           # one line, redacted


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
                                                 " ".join(detail.split())[:240]))
        if len(self.evidence) < MAX_EVIDENCE:
            self.evidence.append(cap.where)


# ------------------------------------------------------------------------------------------------------
# one call
# ------------------------------------------------------------------------------------------------------
def _tools(request: dict | None) -> dict[str, object]:
    """Tool name -> its parameters schema (None: any arguments)."""
    tools = (request or {}).get("tools") or [{"function": f} for f in (request or {}).get("functions") or []]
    out = {}
    for t in tools if isinstance(tools, list) else []:
        f = t.get("function") if isinstance(t, dict) and isinstance(t.get("function"), dict) else None
        if f and isinstance(f.get("name"), str):
            out[f["name"]] = f.get("parameters")
    return out


def _messages(response: dict | None) -> list[tuple[int, dict]]:
    """(choice index, message) of every answer of a chat completion."""
    choices = (response or {}).get("choices")
    return [(ci, c["message"]) for ci, c in enumerate(choices if isinstance(choices, list) else [])
            if isinstance(c, dict) and isinstance(c.get("message"), dict)]


def _calls(response: dict | None) -> list[tuple[int, object]]:
    """(choice index, call) of every tool call of a chat completion."""
    return [(ci, call) for ci, msg in _messages(response)
            for call in (msg["tool_calls"] if isinstance(msg.get("tool_calls"), list) else [])]


def _leaks(response: dict | None) -> list[str]:
    """The first markup literal in the text of each answer that holds one."""
    out = []
    for _, msg in _messages(response):
        content = msg.get("content")
        if isinstance(content, str):
            hit = next((lit for lit in markup() if lit in content), None)
            if hit:
                out.append(hit)
    return out


def _function(call) -> dict:
    return call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else {}


@lru_cache(maxsize=256)
def _validator(schema_json: str):
    """The validator of one tool schema (by its JSON text: checking a schema costs far more than a call),
    or the note saying why it cannot be applied."""
    import jsonschema
    import referencing

    from .bounded_regex import bounded_validator, unbounded_regexes
    schema = json.loads(schema_json)
    if unbounded_regexes(schema):
        return ("the tool's parameters use patternProperties with unevaluatedProperties, whose regexes k3logs "
                "cannot run with a time limit; not checked")
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        cls = bounded_validator(cls)  # (the schema's regexes come from the bundle: never run unbounded)
    except jsonschema.SchemaError as e:
        return f"the tool's parameters are not a valid JSON schema ({e.message})"
    except Exception as e:  # a schema of a type no draft knows
        return f"the tool's parameters could not be applied ({type(e).__name__}: {e})"
    # an empty registry: jsonschema's default one would fetch a remote $ref (a URL from untrusted input)
    return cls(schema, registry=referencing.Registry())


def _schema_problem(schema, args) -> str | None:
    from jsonschema.exceptions import best_match

    from .bounded_regex import GaveUp
    validator = _validator(json.dumps(schema, sort_keys=True, default=str))
    if isinstance(validator, str):
        return "!" + validator
    try:
        err = best_match(validator.iter_errors(args))
    except GaveUp as e:
        return f"!the tool's parameters could not be checked: {e}"
    except Exception as e:  # an unresolvable $ref (never fetched), a schema regex Python cannot compile
        return f"!the tool's parameters could not be applied ({type(e).__name__}: {e})"
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
    return f"{where}: {err.message}"


def call_problem(call, tools: dict[str, object]) -> tuple[str, str] | None:
    """(kind, detail) when a call is malformed by itself, None when it satisfies its tool's schema. A detail
    starting with '!' is a note about the request's schema, not a failure."""
    f = _function(call)
    name, args = f.get("name"), f.get("arguments")
    if not isinstance(name, str) or not name:
        return "malformed_call", "the call has no function name"
    if name not in tools:
        return "unknown_tool", f"{name!r} is not one of the request's tools ({', '.join(sorted(tools)) or 'none'})"
    if not isinstance(args, str):
        return "malformed_call", f"arguments is {type(args).__name__}, not a JSON string"
    try:
        parsed = json.loads(args)
    except (ValueError, RecursionError) as e:
        return "arguments_not_json", f"arguments are not JSON ({e}): {args[:80]}"
    if not isinstance(parsed, dict):
        return "arguments_not_json", f"arguments are a JSON {type(parsed).__name__}, not an object: {args[:80]}"
    schema = tools[name]
    if schema is None:
        return None
    problem = _schema_problem(schema, parsed)
    return ("schema_violation", problem) if problem else None


def gateway_problem(raw, fwd) -> tuple[str, str] | None:
    """(kind, detail) when the forwarded copy of a good raw call is not the same call."""
    if fwd is None:
        return "lost_fields", "the forwarded response does not have this call"
    rf, ff = _function(raw), _function(fwd)
    lost = [k for k in ("id", "type")
            if isinstance(raw, dict) and raw.get(k) and not (isinstance(fwd, dict) and fwd.get(k))]
    lost += [f"function.{k}" for k in ("name", "arguments") if rf.get(k) and not ff.get(k)]
    if lost:
        return "lost_fields", f"the forwarded call lacks {', '.join(lost)}"
    if ff.get("name") != rf.get("name"):
        return "altered_arguments", f"forwarded as {ff.get('name')!r} instead of {rf.get('name')!r}"
    want, got = json.loads(rf["arguments"]), ff.get("arguments")
    if not isinstance(got, str):
        return "altered_arguments", f"arguments forwarded as a JSON {type(got).__name__}, not a string"
    try:
        once = json.loads(got)
    except (ValueError, RecursionError):
        return "altered_arguments", f"forwarded arguments are not JSON: {got[:80]}"
    if isinstance(once, str):
        try:
            if json.loads(once) == want:
                return "double_escaped", f"arguments JSON-encoded twice: {got[:80]}"
        except (ValueError, RecursionError):
            pass
    if isinstance(once, dict) and isinstance(want, dict) and once != want and set(once) < set(want) \
            and all(once[k] == want[k] for k in once):
        return "lost_fields", f"the forwarded arguments lack {', '.join(sorted(set(want) - set(once)))}"
    if once != want:
        return "altered_arguments", f"forwarded arguments {got[:60]} differ from the raw {rf['arguments'][:60]}"
    return None


def _key(call) -> str:
    f = _function(call)
    return json.dumps([f.get("name"), f.get("arguments")], default=str)


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
        tools = _tools(cap.request)
        raw_known = cap.response is not None
        first = cap.response if raw_known else cap.forwarded
        cls_self = MODEL_PARSER if raw_known else UNATTRIBUTED
        if s.first_checked is None and (_leaks(first) or _calls(first)):
            s.first_checked = cap.where
        for lit in _leaks(first):
            s.checked += 1
            s.fail(cls_self, "leaked_markup", cap, None, f"tool-call markup {lit} in the answer's text")
        good: set[int] = set()  # identities of the calls that passed (only those are compared downstream)
        for _, call in _calls(first):
            s.checked += 1
            problem = call_problem(call, tools)
            if problem and problem[1].startswith("!"):
                self.schema_notes.setdefault(str(_function(call).get("name")), problem[1][1:])
                problem = None
            if problem:
                s.fail(cls_self, problem[0], cap, _function(call).get("name"), problem[1])
            else:
                good.add(id(call))
        if raw_known and cap.forwarded is not None:
            self._compare(cap, good)
        elif not raw_known:
            fwd = [c for _, c in _calls(cap.forwarded)]
            self._forwarded_again(cap, fwd, UNATTRIBUTED, None, {id(c) for c in fwd})

    def _compare(self, cap: Capture, good: set[int]) -> None:
        """Each good raw call against its forwarded copy (same id, else same position in the same choice)."""
        fwd = _calls(cap.forwarded)
        by_id: dict[str, object] = {}
        by_choice: dict[int, list] = {}
        for ci, c in fwd:
            if isinstance(c, dict) and isinstance(c.get("id"), str):
                by_id.setdefault(c["id"], c)
            by_choice.setdefault(ci, []).append(c)
        matched: set[int] = set()
        position: Counter = Counter()
        for ci, raw in _calls(cap.response):
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
                    self.summary.fail(GATEWAY, problem[0], cap, _function(raw).get("name"), problem[1])
        raw_keys = Counter(_key(c) for _, c in _calls(cap.response))
        self._forwarded_again(cap, [c for _, c in fwd], GATEWAY, raw_keys, matched)

    def _forwarded_again(self, cap: Capture, forwarded: list, cls: str, raw_keys: Counter | None,
                         matched: set[int]) -> None:
        """Forwarded calls beyond the raw ones: a copy of a raw call (or one seen before) is `duplicated`, another
        call `altered_arguments`; a call whose id was forwarded before, or forwarded again for the same exchange
        (a retry passed on with a new id), is `duplicated` too."""
        s, exchange, here = self.summary, cap.id or cap.where, set()
        for call in forwarded:
            k, cid = _key(call), call.get("id") if isinstance(call, dict) else None
            extra = id(call) not in matched
            repeated = (isinstance(cid, str) and cid in self.forwarded_ids) or (exchange, k) in self.forwarded_keys
            if extra:
                s.checked += 1
            if extra and not repeated and raw_keys is not None and k not in raw_keys:
                s.fail(cls, "altered_arguments", cap, _function(call).get("name"),
                       "a forwarded call the raw response does not have")
            elif extra or repeated:
                s.fail(cls, "duplicated", cap, _function(call).get("name"),
                       f"call {cid or _function(call).get('name')} forwarded more than once")
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
    return redact.obj(s) if settings.redact else s


def _evidence_order(where: str) -> tuple[str, int]:
    file, _, line = where.rpartition(":")
    return (file, int(line) if line.isdigit() else 0)


# ------------------------------------------------------------------------------------------------------
# markdown
# ------------------------------------------------------------------------------------------------------
def render_markdown(s: ToolCallSummary) -> str:
    from .render import cell
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
