"""k3logs prefix: the canonical prompt and its offsets, grouping, every cause and section, the capture shapes
(bare, wrapped, body as a string, compressed, in an archive), damaged and huge input, redaction, the CLI.
Every request is written inline (a made-up agent)."""
from __future__ import annotations

import gzip
import json
import re

import pytest
from click.testing import CliRunner

from conftest import compress, tar_bytes
from k3logs.cli import cli
from k3logs.captures.read import Capture
from k3logs.captures.prefix import CAUSES, check_requests, common_prefix
from k3logs.captures.prompt import catalogue, mask, prompt_of
from k3logs.settings import Settings

SYSTEM = "You are Kimi, the operations assistant. Answer briefly and cite the runbook section you used."
TOOL_A = {"type": "function", "function": {"name": "search_docs", "description": "Search the runbooks.",
                                           "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                                                          "required": ["query"]}}}
TOOL_B = {"type": "function", "function": {"name": "run_sql", "description": "Run read-only SQL.",
                                           "parameters": {"type": "object", "properties": {"sql": {"type": "string"}},
                                                          "required": ["sql"]}}}
SYS_HEAD = "<|im_system|>system<|im_middle|>"


def req(system=SYSTEM, question="What does Xid 79 mean?", tools=(TOOL_A, TOOL_B), model="kimi-k3", history=()):
    messages = ([{"role": "system", "content": system}] if system is not None else []) + list(history) + \
        [{"role": "user", "content": question}]
    body = {"model": model, "messages": messages}
    if tools:
        body["tools"] = list(tools)
    return body


def wrapped(ident, body):
    return {"id": ident, "request": body}


def run(tmp_path, *records, name="requests.jsonl", raw_lines=(), settings=None):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records) + "".join(ln + "\n" for ln in raw_lines))
    return check_requests(p, settings)


def only(report):
    assert len(report.divergences) == 1, report.divergences
    return report.divergences[0]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


# ------------------------------------------------------------------------------------------------------
# the catalogue of masks
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["timestamp", "request_id"])
def test_mask_rules_find_their_samples_whole_and_leave_near_misses(kind):
    for rule in catalogue()[kind]:
        for sample in rule["match"]:
            m = re.search(rule["regex"], sample)
            assert m and m.group() == sample, (rule["id"], sample)
        for sample in rule["no_match"]:
            assert not re.search(rule["regex"], sample), (rule["id"], sample)
    assert set(catalogue()["advice"]) == set(CAUSES)


def test_mask_replaces_times_and_ids_by_one_character_each():
    masked, masks = mask("at 2026-11-03T10:14:07Z trace 3f2a9c1e-7b4d-4e8a-9c61-0e4d2f7b9a35 done")
    assert masked == "at \x01 trace \x02 done"
    assert [(s, e, k) for s, e, _, k in masks] == [(3, 23, "\x01"), (30, 66, "\x02")]


@pytest.mark.parametrize("n", [0, 1, 4095, 4096, 4097, 10000])
def test_common_prefix_is_exact_at_block_edges(n):
    a = "ab" * (n // 2) + "a" * (n % 2)
    for k in sorted({0, n // 3, max(0, n - 1), n}):
        for b in (a[:k] + "z" + a[k:], a[:k]):
            assert common_prefix(a, b) == common_prefix(b, a) == k


# ------------------------------------------------------------------------------------------------------
# the canonical prompt
# ------------------------------------------------------------------------------------------------------
def test_prompt_serialisation_is_the_documented_one():
    body = req(tools=[TOOL_A], history=[
        {"role": "user", "content": "find it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "search_docs", "arguments": '{"query": "x"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "[]"}], question="thanks")
    p = prompt_of(Capture("f", 1, None, request=body), "r")
    assert p.text == (
        f"{SYS_HEAD}{SYSTEM}<|im_end|>"
        f"<|im_system|>tool_declare<|im_middle|>[{json.dumps(TOOL_A)}]<|im_end|>"
        "<|im_user|>user<|im_middle|>find it<|im_end|>"
        "<|im_assistant|>assistant<|im_middle|><|tool_calls_section_begin|><|tool_call_begin|>call_1"
        '<|tool_call_argument_begin|>search_docs:{"query": "x"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>'
        "<|im_tool|>tool:call_1<|im_middle|>[]<|im_end|>"
        "<|im_user|>user<|im_middle|>thanks<|im_end|>")
    assert [(pt.section, pt.index) for pt in p.parts] == [("system", 0), ("tools", 0), ("messages", 0),
                                                          ("messages", 1), ("messages", 2), ("messages", 3)]


def test_completions_prompt_is_the_messages_section(tmp_path):
    r = run(tmp_path, {"model": "base", "prompt": "Incident summary for rack B 2026-11-03:\n"},
            {"model": "base", "prompt": "Incident summary for rack B 2026-11-04:\n"})
    d = only(r)
    assert (d.section, d.cause, d.offset) == ("messages", "timestamp", len("Incident summary for rack B 2026-11-0"))


# ------------------------------------------------------------------------------------------------------
# causes, sections, offsets
# ------------------------------------------------------------------------------------------------------
def test_timestamp_changed_before_the_system_prompt(tmp_path):
    r = run(tmp_path, wrapped("a", req(f"Current time: 2026-11-03T10:14:07Z\n{SYSTEM}")),
            wrapped("b", req(f"Current time: 2026-11-03T10:15:31Z\n{SYSTEM}", question="How do I drain a node?")))
    d = only(r)
    assert (d.request, d.against, d.section, d.cause) == ("b", "a", "system", "timestamp")
    assert d.offset == len(SYS_HEAD + "Current time: 2026-11-03T10:1")
    assert "[A: 4:07Z" in d.context and "| B: 5:31Z" in d.context


def test_timestamp_inserted_with_a_label(tmp_path):
    r = run(tmp_path, wrapped("a", req()), wrapped("b", req(f"Today is Tuesday, November 3rd, 2026. {SYSTEM}")))
    d = only(r)
    assert (d.section, d.cause, d.offset) == ("system", "timestamp", len(SYS_HEAD))


def test_request_id_inserted_then_changed(tmp_path):
    r = run(tmp_path, wrapped("a", req()),
            wrapped("b", req(f"[trace 3f2a9c1e-7b4d-4e8a-9c61-0e4d2f7b9a35] {SYSTEM}")),
            wrapped("c", req(f"[trace b71c04d2-9e3f-4a51-8d2c-6f0e1a9b3c47] {SYSTEM}")))
    got = [(d.request, d.against, d.section, d.cause, d.offset) for d in r.divergences]
    assert got == [("b", "a", "system", "request_id", len(SYS_HEAD)),
                   ("c", "b", "system", "request_id", len(SYS_HEAD + "[trace "))]


def test_whitespace_in_the_system_prompt(tmp_path):
    d = only(run(tmp_path, wrapped("a", req()), wrapped("b", req(SYSTEM.replace("briefly and", "briefly  and")))))
    assert (d.section, d.cause, d.offset) == ("system", "whitespace", len(SYS_HEAD + "You are Kimi, the operations "
                                                                                     "assistant. Answer briefly "))


def test_whitespace_in_a_re_sent_user_turn(tmp_path):
    a = req(question="Why is node gpu-17 slow?\n")
    b = req(history=[{"role": "user", "content": "Why is node gpu-17 slow?"},
                     {"role": "assistant", "content": "Its GPU 3 throttles."}], question="Since when?")
    d = only(run(tmp_path, wrapped("a", a), wrapped("b", b)))
    assert (d.section, d.cause) == ("messages", "whitespace")
    assert d.offset == prompt_of(Capture("f", 1, None, request=a), "a").text.index("\n<|im_end|>")


def test_key_order_of_a_tool_schema(tmp_path):
    reordered = {"function": TOOL_A["function"], "type": "function"}
    d = only(run(tmp_path, wrapped("a", req()), wrapped("b", req(tools=(reordered, TOOL_B)))))
    assert (d.section, d.cause) == ("tools", "key_order")
    assert d.offset == len(f"{SYS_HEAD}{SYSTEM}<|im_end|><|im_system|>tool_declare<|im_middle|>[{{\"")


def test_tool_order(tmp_path):
    d = only(run(tmp_path, wrapped("a", req()), wrapped("b", req(tools=(TOOL_B, TOOL_A)))))
    assert (d.section, d.cause) == ("tools", "tool_order")
    assert d.offset == len(f"{SYS_HEAD}{SYSTEM}<|im_end|><|im_system|>tool_declare<|im_middle|>"
                           f"[{{\"type\": \"function\", \"function\": {{\"name\": \"")


def test_a_tool_added_is_text_not_tool_order(tmp_path):
    tools = [{"type": "function", "function": {"name": f"tool_{n}", "description": f"Does {n} things.",
                                               "parameters": {"type": "object", "properties": {}}}}
             for n in ("one", "two", "three", "four", "five", "six")]
    d = only(run(tmp_path, wrapped("a", req(tools=tools[1:])), wrapped("b", req(tools=tools))))
    assert (d.section, d.cause) == ("tools", "text")


def history(args: str, result: str) -> list[dict]:
    return [{"role": "user", "content": "Is gpu-17 healthy?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_k9j8h7g6f5d4", "type": "function", "function": {"name": "run_sql", "arguments": args}}]},
            {"role": "tool", "tool_call_id": "call_k9j8h7g6f5d4", "content": result}]


@pytest.mark.parametrize("args_b, result_b, cause", [
    ('{"sql":"select 1"}', '{"node": "gpu-17", "xid": 79}', "whitespace"),     # arguments re-serialised compact
    ('{"sql": "select 1"}', '{"xid": 79, "node": "gpu-17"}', "key_order"),     # tool result keys reordered
])
def test_re_serialised_history(tmp_path, args_b, result_b, cause):
    a = req(history=history('{"sql": "select 1"}', '{"node": "gpu-17", "xid": 79}'), question="Open a ticket.")
    b = req(history=history(args_b, result_b) + [{"role": "user", "content": "Open a ticket."},
                                                 {"role": "assistant", "content": "OPS-1"}], question="Thanks")
    d = only(run(tmp_path, wrapped("a", a), wrapped("b", b)))
    assert (d.section, d.cause) == ("messages", cause)
    text_a = prompt_of(Capture("f", 1, None, request=a), "a").text
    # the space after "sql": in a, the first key of the tool result
    assert d.offset == (text_a.index(' "select 1"}') if cause == "whitespace" else text_a.index('{"node"') + 2)


def test_regenerated_tool_call_ids_in_history(tmp_path):
    a = req(history=history('{"sql": "select 1"}', "[]"), question="Open a ticket.")
    b = json.loads(json.dumps(a).replace("call_k9j8h7g6f5d4", "call_Zq81x0BdE45c"))
    b["messages"].append({"role": "user", "content": "sev2"})
    d = only(run(tmp_path, wrapped("a", a), wrapped("b", b)))
    assert (d.section, d.cause) == ("messages", "request_id")


def test_negative_control_changed_system_prompt_is_text_never_a_hit(tmp_path):
    changed = SYSTEM.replace("Answer briefly", "Answer in detail")
    r = run(tmp_path, wrapped("cold", req()), wrapped("hot", req(question="Only sev1.")),
            wrapped("negative", req(changed)), wrapped("hot-2", req(question="Only sev2.")))
    d = only(r)
    assert (d.request, d.against, d.section, d.cause) == ("negative", "cold", "system", "text")
    assert len(r.groups) == 1  # an edit keeps the request in its group: compared, not silently apart


def test_a_changed_sentence_near_a_date_is_still_text(tmp_path):
    a = req(f"You are a helpful assistant. Today is 2026-11-03. {SYSTEM}")
    b = req(f"You are a pirate. Today is 2026-11-03. {SYSTEM}")
    assert only(run(tmp_path, wrapped("a", a), wrapped("b", b))).cause == "text"


# ------------------------------------------------------------------------------------------------------
# what is not a divergence; grouping
# ------------------------------------------------------------------------------------------------------
def test_hot_requests_continued_conversations_and_retries_are_clean(tmp_path):
    turn1 = req()
    turn2 = req(history=[{"role": "user", "content": "What does Xid 79 mean?"},
                         {"role": "assistant", "content": "A GPU fell off the bus."}], question="What now?")
    r = run(tmp_path, wrapped("1", turn1), wrapped("2", req(question="Other question")), wrapped("3", turn2),
            wrapped("4", turn1))
    assert r.divergences == [] and r.requests == 4 and len(r.groups) == 1


def test_groups_by_model_and_by_system_prompt(tmp_path):
    other = ("You translate release notes into German. Keep product names, version numbers, flags and "
             "commands in English, keep the markdown structure, and never translate code blocks or log lines; "
             "when a sentence is ambiguous, prefer the wording of the previous release notes.")
    r = run(tmp_path, wrapped("a", req()), wrapped("b", req(model="kimi-k3-lite")), wrapped("c", req(other)),
            wrapped("d", req(other, question="Translate: driver 580")))
    assert [g.requests for g in r.groups] == [["a"], ["b"], ["c", "d"]]
    assert r.divergences == []
    j = r.to_json()
    assert list(j) == ["requests", "groups", "divergences"] and j["groups"][1]["model"] == "kimi-k3-lite"
    assert j["groups"][0]["tools"] == ["search_docs", "run_sql"]


# ------------------------------------------------------------------------------------------------------
# capture shapes, damage, bounds
# ------------------------------------------------------------------------------------------------------
def test_bare_wrapped_and_string_bodies_are_all_read(tmp_path):
    r = run(tmp_path, req(), {"request_id": "r2", "body": json.dumps(req(question="x"))},
            {"exchange_id": 3, "request_body": req(question="y")}, wrapped("r4", req(question="z")))
    assert r.requests == 4 and r.groups[0].requests == ["requests.jsonl:1", "r2", "3", "r4"]


def test_duplicate_ids_are_told_apart_by_where_they_are(tmp_path):
    r = run(tmp_path, wrapped("x", req()), wrapped("x", req(question="again")))
    assert r.groups[0].requests == ["x", "x@requests.jsonl:2"]


def test_malformed_lines_are_skipped_and_counted(tmp_path):
    r = run(tmp_path, wrapped("a", req()), raw_lines=[
        "not json", '{"id": "b", "request": {"model": "kimi-k3", "messages": [', '{"event": "reload"}', "[1, 2]",
        '{"id": "c", "request": "not an object"}', "", '{"a":' * 50000 + "1" + "}" * 50000])  # nested too deep
    assert r.requests == 1
    assert r.stats.skipped == {"not JSON": 2, "not valid JSON": 2,
                               "a JSON object that is neither a request nor a wrapped exchange": 1,
                               "a wrapped exchange whose request/response is not a JSON object (or not a request)": 1}
    assert any("first at requests.jsonl:2" in n for n in r.notes)


def test_a_line_over_the_limit_is_skipped_and_the_rest_is_read(tmp_path):
    huge = wrapped("huge", req(SYSTEM + "x" * 3_000_000))
    r = run(tmp_path, wrapped("a", req()), huge, wrapped("b", req(question="later")),
            settings=Settings().with_limits(max_line_bytes=1 << 20))
    assert r.requests == 2 and [g.requests for g in r.groups] == [["a", "b"]]
    assert sum(r.stats.skipped.values()) == 1 and "max-line-bytes" in next(iter(r.stats.skipped))


def test_memory_held_to_compare_with_is_bounded(tmp_path, monkeypatch):
    import k3logs.captures.prefix as prefix
    monkeypatch.setattr(prefix, "MAX_HELD_CHARS", 3_000)  # about 4 requests
    other = "You translate release notes into German. " * 20
    recs = [wrapped(f"a{i}", req(question=f"q{i}")) for i in range(10)] + [wrapped("o", req(other))] + \
        [wrapped("a-again", req(f"Current time: 2026-11-03T10:14:07Z {SYSTEM}"))]
    r = run(tmp_path, *recs)
    assert r.requests == 12 and len(r.groups) == 2
    assert any("let go" in n for n in r.notes)
    assert r.divergences[0].request == "a-again" and r.divergences[0].cause == "timestamp"


@pytest.mark.parametrize("how", ["gz", "zst", "tar.gz"])
def test_compressed_files_and_archives(tmp_path, how):
    data = (json.dumps(wrapped("a", req())) + "\n" + json.dumps(wrapped("b", req(tools=(TOOL_B, TOOL_A)))) + "\n")
    if how == "tar.gz":
        p = tmp_path / "bundle.tar.gz"
        p.write_bytes(tar_bytes({"b/vllm.log": "INFO 11-03 10:13:58 [api_server.py:1] vLLM API server\n",
                                 "b/captures/req.jsonl": data}, "gz"))
    else:
        p = tmp_path / f"req.jsonl.{how}"
        p.write_bytes(compress(data.encode(), how))
    d = only(check_requests(p))
    assert (d.request, d.cause) == ("b", "tool_order")


# ------------------------------------------------------------------------------------------------------
# secrets, CLI
# ------------------------------------------------------------------------------------------------------
KEY = "sk-live-0123456789abcdefghijklmn"


def test_secrets_in_bodies_and_headers_never_reach_an_output(tmp_path):
    p = tmp_path / "r.jsonl"
    recs = [{"id": "a", "headers": {"Authorization": f"Bearer {KEY}"}, "request": req(f"api_key={KEY} {SYSTEM}")},
            {"id": "b", "headers": {"Authorization": f"Bearer {KEY}"}, "request": req(f"api_key={KEY}  {SYSTEM}")}]
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    for fmt in ("json", "md"):
        res = invoke("prefix", p, "--format", fmt)
        assert res.exit_code == 1 and KEY not in res.stdout + res.stderr
        assert "whitespace" in res.stdout
    assert KEY in invoke("prefix", p, "--format", "json", "--no-redact").stdout


def test_cli_json_has_exactly_the_documented_keys_and_exit_statuses(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps(wrapped("a", req())) + "\n" + json.dumps(wrapped("b", req(tools=(TOOL_B, TOOL_A)))) + "\n")
    res = invoke("prefix", p, "--format", "json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert list(out) == ["requests", "groups", "divergences"]
    assert list(out["divergences"][0]) == ["request", "against", "offset", "section", "cause", "context"]
    clean = tmp_path / "clean.jsonl"
    clean.write_text(json.dumps(req()) + "\n")
    res = invoke("prefix", clean)
    assert res.exit_code == 0 and res.stdout.startswith("# Prefix check: 1 requests")


@pytest.mark.parametrize("make", ["missing", "empty", "no-requests", "folder-of-logs"])
def test_cli_nothing_to_compare_exits_2_with_one_line(tmp_path, make):
    target = tmp_path / "in.jsonl"
    if make == "empty":
        target.write_text("")
    elif make == "no-requests":
        target.write_text("hello\n{\"a\": 1}\n")
    elif make == "folder-of-logs":
        target = tmp_path / "bundle"
        target.mkdir()
        (target / "vllm.log").write_text("INFO 11-03 10:13:58 [api_server.py:1] vLLM API server\n")
    res = invoke("prefix", target)
    assert res.exit_code == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("k3logs: error: ") and "Traceback" not in res.stderr


def test_gzip_damaged_midway_is_read_up_to_the_damage(tmp_path):
    data = "".join(json.dumps(wrapped(str(i), req(question=f"q{i}"))) + "\n" for i in range(200)).encode()
    p = tmp_path / "r.jsonl.gz"
    blob = gzip.compress(data)
    p.write_bytes(blob[: len(blob) // 2])
    r = check_requests(p)
    assert 0 < r.requests < 200 and r.stats.bundle_skipped
