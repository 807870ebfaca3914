"""k3logs toolcalls: every failure kind in its class (model/parser, gateway, unattributed), passing calls,
exchanges joined by id and retries, the library API the go-live verdict uses, redaction, the CLI.
Every exchange is written inline (a made-up agent behind a gateway)."""
from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from k3logs.cli import cli
from k3logs.captures.toolcalls import KINDS, ToolCallSummary, check_bundle
from k3logs.captures.calls import call_problem, gateway_problem, markup

TOOLS = [{"type": "function", "function": {
    "name": "run_sql", "parameters": {"type": "object", "properties": {
        "sql": {"type": "string"}, "database": {"type": "string", "enum": ["metrics", "inventory"]}},
        "required": ["sql", "database"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}]
TOOLMAP = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
REQUEST = {"model": "kimi-k3", "messages": [{"role": "user", "content": "Is gpu-17 healthy?"}], "tools": TOOLS}
GOOD_ARGS = '{"sql": "select 1", "database": "metrics"}'


def call(cid="chatcmpl-tool-1", name="run_sql", arguments=GOOD_ARGS):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def answer(*calls, content=None):
    msg = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = list(calls)
    return {"id": "chatcmpl-9", "object": "chat.completion",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}]}


def exchange(ident, raw, forwarded="same", request=REQUEST):
    rec = {"id": ident, "request": request}
    if raw is not None:
        rec["response"] = raw
    if forwarded is not None:
        rec["forwarded"] = copy.deepcopy(raw) if forwarded == "same" else forwarded
    return rec


def check(tmp_path, *records, raw_lines=()) -> ToolCallSummary:
    p = tmp_path / "x.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records) + "".join(ln + "\n" for ln in raw_lines))
    return check_bundle(p)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_leaked_markup_samples():
    import tomllib
    from k3logs.resources import data_dir
    data = tomllib.loads((data_dir("patterns") / "toolcalls.toml").read_text(encoding="utf-8"))
    for entry in data["leaked_markup"]:
        for s in entry["match"]:
            assert any(lit in s for lit in entry["literals"]), (entry["id"], s)
        for s in entry["no_match"]:
            assert not any(lit in s for lit in markup()), (entry["id"], s)


# ------------------------------------------------------------------------------------------------------
# one call
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("c, kind", [
    (call(), None),
    (call(name="ping", arguments="{}"), None),
    (call(name="reboot_node"), "unknown_tool"),
    (call(arguments='{"sql": "select 1", "database": "metrics"'), "arguments_not_json"),
    (call(arguments='"{\\"sql\\": \\"select 1\\"}"'), "arguments_not_json"),          # a string, not an object
    (call(arguments='{"sql": "select 1", "database": "logs"}'), "schema_violation"),   # enum
    (call(arguments='{"sql": "select 1"}'), "schema_violation"),                      # required
    (call(arguments='{"sql": 1, "database": "metrics"}'), "schema_violation"),         # type
    (call(arguments='{"sql": "x", "database": "metrics", "limit": 5}'), "schema_violation"),  # additionalProperties
    ({"id": "c", "type": "function", "function": {"arguments": "{}"}}, "malformed_call"),
    ({"id": "c", "type": "function", "function": {"name": "run_sql", "arguments": {"sql": "x"}}}, "malformed_call"),
    ("not a call", "malformed_call"),
])
def test_call_problem_kinds(c, kind):
    got = call_problem(c, TOOLMAP)
    assert (got[0] if got else None) == kind
    if kind:
        assert KINDS[kind] == "model_parser"


def test_schema_violation_names_the_field():
    kind, detail = call_problem(call(arguments='{"sql": "select 1", "database": "logs"}'), TOOLMAP)
    assert detail.startswith("database: 'logs' is not one of")


@pytest.mark.parametrize("fwd, kind", [
    (call(), None),
    (call(arguments='{"sql":"select 1","database":"metrics"}'), None),   # whitespace: the same arguments
    (None, "lost_fields"),
    ({"type": "function", "function": {"name": "run_sql", "arguments": GOOD_ARGS}}, "lost_fields"),
    ({"id": "chatcmpl-tool-1", "type": "function", "function": {"name": "run_sql"}}, "lost_fields"),
    (call(arguments=json.dumps(GOOD_ARGS)), "double_escaped"),
    (call(arguments='{"sql": "drop table x", "database": "metrics"}'), "altered_arguments"),
    ({"id": "chatcmpl-tool-1", "type": "function", "function": {"name": "run_sql",
                                                                "arguments": json.loads(GOOD_ARGS)}}, "altered_arguments"),
])
def test_gateway_problem_kinds(fwd, kind):
    got = gateway_problem(call(), fwd)
    assert (got[0] if got else None) == kind
    if kind:
        assert KINDS[kind] == "gateway"


def test_a_schema_that_is_invalid_or_refers_elsewhere_is_a_note_never_a_fetch(tmp_path, monkeypatch):
    import urllib.request
    fetched = []
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: fetched.append(a) or 1 / 0)
    tools = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object", "properties": {
        "x": {"$ref": "https://schemas.example.invalid/x.json"}}}}},
        {"type": "function", "function": {"name": "b", "parameters": {"type": 12}}}]
    req = {**REQUEST, "tools": tools}
    s = check(tmp_path, exchange("1", answer(call("c1", "a", '{"x": 1}')), request=req),
              exchange("2", answer(call("c2", "b", '{"y": 2}')), request=req))
    assert s.checked == 2 and s.failed == 0
    assert [n.split(":")[0] for n in s.notes] == ["tool a", "tool b"]
    assert fetched == []


# ------------------------------------------------------------------------------------------------------
# exchanges
# ------------------------------------------------------------------------------------------------------
def test_all_pass_and_the_api_the_verdict_reads(tmp_path):
    s = check(tmp_path, exchange("1", answer(call("c1"))), exchange("2", answer(call("c2"), call("c3", "ping", "{}"))),
              exchange("3", answer(content="gpu-17 is fine.")))
    assert (s.exchanges, s.checked, s.failed_model_parser, s.failed_gateway, s.failed_unattributed) == (3, 3, 0, 0, 0)
    assert s.passed and s.failed == 0 and s.examples == [] and s.evidence == []
    assert s.first_checked == "x.jsonl:1" and s.detail == "3 tool calls passed their schema checks"
    j = s.to_json()
    assert j["passed"] is True and j["checked"] == 3


def test_no_tool_call_is_no_evidence(tmp_path):
    s = check(tmp_path, exchange("1", answer(content="hello")))
    assert s.checked == 0 and not s.passed and s.failed == 0 and s.first_checked is None


def test_model_parser_failures_are_not_blamed_on_the_gateway(tmp_path):
    leaked = answer(content='<|tool_calls_section_begin|><|tool_call_begin|>functions.run_sql:0'
                            '<|tool_call_argument_begin|>{"sql": "select 1"}<|tool_call_end|>')
    s = check(tmp_path, exchange("m1", answer(call("c1", "reboot_node"))),
              exchange("m2", answer(call("c2", arguments="{not json"))), exchange("m3", leaked),
              exchange("m4", answer(call("c4")), forwarded=answer(call("c4", arguments="{not json"))))
    assert (s.failed_model_parser, s.failed_gateway) == (3, 1)
    assert s.kinds == {"model_parser.unknown_tool": 1, "model_parser.arguments_not_json": 1,
                       "model_parser.leaked_markup": 1, "gateway.altered_arguments": 1}
    assert s.evidence == ["x.jsonl:1", "x.jsonl:2", "x.jsonl:3", "x.jsonl:4"]
    assert s.detail == ("4 of 4 tool calls failed: 3 model/parser (arguments_not_json 1, leaked_markup 1, "
                        "unknown_tool 1); 1 gateway (altered_arguments 1)")
    assert {(e.kind, e.evidence, e.request) for e in s.examples} >= {("unknown_tool", "x.jsonl:1", "m1")}


def test_gateway_duplicates_within_a_response_and_across_a_retry(tmp_path):
    s = check(tmp_path, exchange("g1", answer(call("c1")), forwarded=answer(call("c1"), call("c1"))),
              exchange("g2", answer(call("c2"))),
              exchange("g2", answer(call("c2-retry"))),             # retried upstream: same call, new id
              exchange("g3", answer(call("c3"), call("c3b"))),       # the model really called twice: fine
              exchange("g4", answer(call("c1"))))                    # an id forwarded before
    assert s.kinds == {"gateway.duplicated": 3}
    assert s.checked == 7 and s.failed_gateway == 3
    assert s.evidence == ["x.jsonl:1", "x.jsonl:3", "x.jsonl:5"]


def test_split_records_are_joined_by_id_and_only_the_forwarded_copy_is_unattributed(tmp_path):
    s = check(tmp_path, {"request_id": "q1", "body": json.dumps(REQUEST)},
              {"request_id": "q2", "body": json.dumps(REQUEST)},
              {"request_id": "q3", "body": json.dumps(REQUEST)},
              {"request_id": "q1", "upstream_response": answer(call("c1", arguments='{"sql": "x"}'))},
              {"request_id": "q2", "raw_response": answer(call("c2")), "client_response": answer(call("c2"))},
              {"request_id": "q3", "client_response": answer(call("c3", "reboot_node"))},
              {"request_id": "q9", "response": answer(call("c9"))})
    assert (s.exchanges, s.checked) == (3, 3)
    assert s.kinds == {"model_parser.schema_violation": 1, "unattributed.unknown_tool": 1}
    assert s.evidence == ["x.jsonl:4", "x.jsonl:6"]    # the response records, not the requests
    assert any("1 response(s) without their request" in n for n in s.notes)


def test_malformed_lines_are_skipped_and_counted(tmp_path):
    s = check(tmp_path, exchange("1", answer(call("c1"))), raw_lines=["garbage", '{"id": "2", "response": {"ch'])
    assert s.checked == 1 and s.passed
    assert any("not JSON" in n for n in s.notes) and any("not valid JSON" in n for n in s.notes)


# ------------------------------------------------------------------------------------------------------
# secrets, CLI
# ------------------------------------------------------------------------------------------------------
KEY = "sk-live-0123456789abcdefghijklmn"


def test_secrets_in_arguments_and_headers_never_reach_an_output(tmp_path):
    p = tmp_path / "x.jsonl"
    rec = exchange("1", answer(call("c1", "run_sql", f'{{"sql": "select 1", "api_key": "{KEY}"')))  # cut short
    rec["headers"] = {"authorization": f"Bearer {KEY}"}
    p.write_text(json.dumps(rec) + "\n")
    for fmt in ("md", "json"):
        r = invoke("toolcalls", p, "--format", fmt)
        assert r.exit_code == 1 and KEY not in r.stdout + r.stderr and "arguments_not_json" in r.stdout
    assert KEY in invoke("toolcalls", p, "--format", "json", "--no-redact").stdout  # the detail quotes them


def test_cli_exit_statuses(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(exchange("1", answer(call("c1")))) + "\n")
    r = invoke("toolcalls", good, "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["passed"] is True
    r = invoke("toolcalls", good)
    assert r.exit_code == 0 and r.stdout.startswith("# Tool calls: 1 checked in 1 exchange(s), all pass")
    for target in (tmp_path / "missing.jsonl", tmp_path / "x.log"):
        if target.name == "x.log":
            target.write_text("INFO nothing here\n")
        r = invoke("toolcalls", target)
        lines = r.stderr.strip().splitlines()
        assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("k3logs: error: ")


# ------------------------------------------------------------------------------------------------------
# a tool schema's regexes come from the bundle: bounded (#12)
# ------------------------------------------------------------------------------------------------------
def _returns(fn, *args, seconds: float = 60.0):
    """fn(*args), failing the test if it has not returned in `seconds` (a hang detector, not a timing)."""
    import threading
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    t.start()
    t.join(seconds)
    assert out, f"{fn.__name__} did not return within {seconds} s"
    return out[0]


def _call(args: dict) -> dict:
    return {"function": {"name": "f", "arguments": json.dumps(args)}}


@pytest.mark.parametrize("where", ["pattern", "patternProperties"])
def test_a_catastrophic_pattern_gives_up_with_a_note_and_is_not_run_again(where):
    evil, value = "^(q|qq)+$", "q" * 40 + "!"
    schema = ({"type": "object", "properties": {"x": {"type": "string", "pattern": evil}}} if where == "pattern"
              else {"type": "object", "patternProperties": {evil: {"type": "integer"}}, "additionalProperties": False})
    call = _call({"x": value} if where == "pattern" else {value: 1})
    for _ in range(2):
        kind, detail = _returns(call_problem, call, {"f": schema})
        assert detail.startswith("!") and "not" in detail and evil in detail  # a note: no pass, no failure


def test_bounded_patterns_still_decide_as_jsonschema_does():
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": "^[a-z]+$"}},
              "patternProperties": {"^n_": {"type": "integer"}}, "additionalProperties": False}
    assert call_problem(_call({"x": "abc", "n_1": 3}), {"f": schema}) is None
    assert call_problem(_call({"x": "ABC"}), {"f": schema})[1] == "x: 'ABC' does not match '^[a-z]+$'"
    assert call_problem(_call({"x": "a", "n_1": "three"}), {"f": schema})[1] == "n_1: 'three' is not of type 'integer'"
    assert call_problem(_call({"x": "a", "y": 1}), {"f": schema})[1] == "(arguments): 'y' does not match any of the regexes: '^n_'"


def test_pattern_properties_under_unevaluated_properties_is_not_run():
    schema = {"type": "object", "patternProperties": {"^(q|qq)+$": {}}, "unevaluatedProperties": False}
    kind, detail = _returns(call_problem, _call({"q" * 40 + "!": 1}), {"f": schema})
    assert detail.startswith("!") and "unevaluatedProperties" in detail
