"""Writes the bundles of the capture cases (corpora/captures/c4xx-*/bundle/) from the made-up requests and
responses below: a Kimi K3 operations agent behind a gateway. Nothing here comes from real captures. The
truth of each case (expected.json) is written by hand, not by this script or by k3logs.

    python corpora/captures/make_bundles.py
"""
from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = "moonshotai/Kimi-K3"

SYSTEM = ("You are Kimi, the operations assistant of the Acme GPU platform. Answer briefly and cite the runbook "
          "section you used. Never run destructive SQL. When a question needs live data, call a tool instead of "
          "guessing.")
TOOLS = [
    {"type": "function", "function": {
        "name": "search_docs", "description": "Search the internal runbooks.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 20}}, "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "run_sql", "description": "Run a read-only SQL query.",
        "parameters": {"type": "object", "properties": {
            "sql": {"type": "string"},
            "database": {"type": "string", "enum": ["metrics", "inventory"]}},
            "required": ["sql", "database"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "create_ticket", "description": "Open an incident ticket.",
        "parameters": {"type": "object", "properties": {
            "title": {"type": "string", "maxLength": 120},
            "severity": {"type": "string", "enum": ["sev1", "sev2", "sev3"]},
            "node": {"type": "string", "pattern": "^[a-z0-9-]+$"}}, "required": ["title", "severity"]}}},
]


def sys_msg(text: str = SYSTEM) -> dict:
    return {"role": "system", "content": text}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def call(cid: str, name: str, arguments: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant_calls(*calls: dict, content=None) -> dict:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool_result(cid: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def request(messages: list, tools=TOOLS, model: str = MODEL, **extra) -> dict:
    body = {"model": model, "messages": messages}
    if tools is not None:
        body["tools"] = tools
    body.update(extra)
    return body


def completion(message: dict, finish: str, cid: str = "chatcmpl-5b0e1c2d3f4a") -> dict:
    return {"id": cid, "object": "chat.completion", "created": 1793700847, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 912, "completion_tokens": 31, "total_tokens": 943}}


def calls_answer(*calls: dict) -> dict:
    return completion({"role": "assistant", "content": None, "tool_calls": list(calls)}, "tool_calls")


def text_answer(text: str) -> dict:
    return completion({"role": "assistant", "content": text}, "stop")


def line(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def write(case: str, name: str, lines: list[str], gz: bool = False) -> None:
    p = HERE / case / "bundle" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(ln + "\n" for ln in lines).encode("utf-8")
    if gz:
        p.write_bytes(gzip.compress(data, mtime=0))
    else:
        p.write_bytes(data)


def sorted_keys(obj):
    return json.loads(json.dumps(obj, sort_keys=True))


# ------------------------------------------------------------------------------------------------------
# prefix cases
# ------------------------------------------------------------------------------------------------------
def c430():
    """Clean: cold, hot repeats (only the last user turn changes), a conversation continued with its history
    serialised the same way, a retried identical request; the same prompt on another model is its own group."""
    args = '{"query": "nccl watchdog timeout", "top_k": 3}'
    turn1 = request([sys_msg(), user("Why did rank 5 hit an NCCL watchdog timeout?")])
    turn2 = request([sys_msg(), user("Why did rank 5 hit an NCCL watchdog timeout?"),
                     assistant_calls(call("call_q1w2e3r4t5y6", "search_docs", args)),
                     tool_result("call_q1w2e3r4t5y6", '{"hits": [{"section": "4.2", "title": "NCCL timeouts"}]}'),
                     user("And how do I raise the timeout?")])
    lines = [line(request([sys_msg(), user("What does Xid 79 mean?")])),
             line(request([sys_msg(), user("How do I drain a node before maintenance?")])),
             line(turn1),
             line(request([sys_msg(), user("Which nodes run driver 575?")])),
             line(turn2),
             line(request([sys_msg(), user("Which nodes run driver 575?")])),
             line(request([sys_msg(), user("What does Xid 79 mean?")], model="moonshotai/Kimi-K3-Lite"))]
    write("c430-prefix-clean-hot-repeats", "requests.jsonl", lines)


def c431():
    """A gateway puts the current time in front of the system prompt: every hot request breaks at the time."""
    times = ["2026-11-03T10:14:07Z", "2026-11-03T10:15:31Z", "2026-11-03T10:16:02Z"]
    questions = ["What does Xid 79 mean?", "How do I drain a node?", "Which nodes run driver 575?"]
    lines = [line({"id": f"req-{i + 1}", "received": t,
                   "request": request([sys_msg(f"Current time: {t}\n{SYSTEM}"), user(q)])})
             for i, (t, q) in enumerate(zip(times, questions))]
    write("c431-prefix-timestamp-before-system", "gateway-requests.jsonl", lines)


def c432():
    """The first request went straight to vLLM; through the gateway, a trace id is put before the system prompt."""
    ids = [None, "3f2a9c1e-7b4d-4e8a-9c61-0e4d2f7b9a35", "b71c04d2-9e3f-4a51-8d2c-6f0e1a9b3c47"]
    questions = ["What does Xid 79 mean?", "How do I drain a node?", "Which nodes run driver 575?"]
    lines = []
    for i, (tid, q) in enumerate(zip(ids, questions)):
        system = SYSTEM if tid is None else f"[trace {tid}] {SYSTEM}"
        body = request([sys_msg(system), user(q)])
        lines.append(line({"request_id": f"r{i + 1}", "path": "/v1/chat/completions",
                           "headers": {"Authorization": "Bearer sk-acmegw-0b1c2d3e4f5a6b7c8d9e0f1a"},
                           "body": json.dumps(body, ensure_ascii=False)}))
    write("c432-prefix-request-id-before-system", "gateway-requests.jsonl", lines)


def c433():
    """One gateway replica re-serialises the tool schemas with sorted keys."""
    q = ["What does Xid 79 mean?", "How do I drain a node?", "Which nodes run driver 575?"]
    lines = [line({"id": "a1", "replica": "gw-0", "request": request([sys_msg(), user(q[0])])}),
             line({"id": "a2", "replica": "gw-1", "request": request([sys_msg(), user(q[1])], tools=sorted_keys(TOOLS))}),
             line({"id": "a3", "replica": "gw-0", "request": request([sys_msg(), user(q[2])])})]
    write("c433-prefix-tool-schema-key-order", "gateway-requests.jsonl", lines)


def c434():
    """The agent builds its tool list from a set: the order changes from request to request."""
    s, r, c = TOOLS
    orders = [[s, r, c], [r, s, c], [s, r, c], [c, s, r]]
    q = ["What does Xid 79 mean?", "How do I drain a node?", "Which nodes run driver 575?", "Open a ticket for gpu-17"]
    lines = [line(request([sys_msg(), user(qq)], tools=o)) for o, qq in zip(orders, q)]
    write("c434-prefix-tool-order", "requests.jsonl", lines)


def c435():
    """Whitespace: the agent re-serialises the tool-call arguments of its history compactly on turn 2 and with
    spaces on turn 3; another client strips the trailing newline of its first question on the next turn."""
    u1 = user("Find the runbook for NCCL watchdog timeouts")
    spaced = '{"query": "nccl watchdog timeout", "top_k": 3}'
    compact = '{"query":"nccl watchdog timeout","top_k":3}'
    result = tool_result("call_a8s7d6f5g4h3", '{"hits": [{"section": "4.2", "title": "NCCL timeouts"}]}')
    turn2 = [sys_msg(), u1, assistant_calls(call("call_a8s7d6f5g4h3", "search_docs", compact)), result]
    turn3 = [sys_msg(), u1, assistant_calls(call("call_a8s7d6f5g4h3", "search_docs", spaced)), result,
             {"role": "assistant", "content": "Runbook 4.2: raise NCCL_TIMEOUT only after checking the links."},
             user("Which links?")]
    other1 = [sys_msg(), user("Why is node gpu-17 slow?\n")]
    other2 = [sys_msg(), user("Why is node gpu-17 slow?"), {"role": "assistant", "content": "Its GPU 3 throttles."},
              user("Since when?")]
    lines = [line({"id": "t1", "request": request([sys_msg(), u1])}),
             line({"id": "t2", "request": request(turn2)}),
             line({"id": "t3", "request": request(turn3)}),
             line({"id": "o1", "request": request(other1)}),
             line({"id": "o2", "request": request(other2)})]
    write("c435-prefix-whitespace-in-history", "agent-requests.jsonl", lines)


def c436():
    """Key order: a tool result and tool-call arguments come back into the history with their keys reordered
    (a round trip through a map that does not keep order)."""
    u1 = user("Is gpu-17 healthy?")
    a1 = assistant_calls(call("call_k9j8h7g6f5d4", "run_sql", '{"sql": "select * from node_status where node = \'gpu-17\'", "database": "metrics"}'))
    a1_reordered = assistant_calls(call("call_k9j8h7g6f5d4", "run_sql", '{"database": "metrics", "sql": "select * from node_status where node = \'gpu-17\'"}'))
    res = tool_result("call_k9j8h7g6f5d4", '{"node": "gpu-17", "status": "degraded", "xid": 79}')
    res_reordered = tool_result("call_k9j8h7g6f5d4", '{"status": "degraded", "node": "gpu-17", "xid": 79}')
    a2 = {"role": "assistant", "content": "gpu-17 is degraded after an Xid 79."}
    lines = [line({"id": "k1", "request": request([sys_msg(), u1, a1, res])}),
             line({"id": "k2", "request": request([sys_msg(), u1, a1, res_reordered, a2, user("Open a ticket.")])}),
             line({"id": "k3", "request": request([sys_msg(), u1, a1_reordered, res_reordered, a2,
                                                    user("Open a ticket."), user("sev2 please")])})]
    write("c436-prefix-key-order-in-history", "agent-requests.jsonl", lines)


def c437():
    """Acceptance step 3: cold, hot, hot, then the negative control (one sentence of the system prompt changed),
    then hot again. The negative control must be reported as a text change, never as a hit."""
    changed = SYSTEM.replace("Answer briefly", "Answer in detail")
    q = "Summarise the last 24 hours of incidents on rack B."
    lines = [line({"id": "cold", "request": request([sys_msg(), user(q)])}),
             line({"id": "hot-1", "request": request([sys_msg(), user(q + " Group them by node.")])}),
             line({"id": "hot-2", "request": request([sys_msg(), user(q + " Only sev1.")])}),
             line({"id": "negative", "request": request([sys_msg(changed), user(q)])}),
             line({"id": "hot-3", "request": request([sys_msg(), user(q + " Only sev2.")])})]
    write("c437-prefix-negative-control-system-prompt", "acceptance-requests.jsonl", lines)


def c438():
    """Negative control on the tools: one tool's description changed."""
    tools = copy.deepcopy(TOOLS)
    tools[0]["function"]["description"] = "Search the internal runbooks and postmortems."
    q = "Summarise the last 24 hours of incidents on rack B."
    lines = [line({"id": "cold", "request": request([sys_msg(), user(q)])}),
             line({"id": "hot", "request": request([sys_msg(), user(q + " Only sev1.")])}),
             line({"id": "negative-tools", "request": request([sys_msg(), user(q)], tools=tools)})]
    write("c438-prefix-negative-control-tool-schema", "acceptance-requests.jsonl", lines)


def c439():
    """A bundle: a vLLM log, and gzipped gateway captures mixing chat requests whose history is re-stamped with
    the send time, a conversation whose tool-call ids the gateway regenerates, completions requests on another
    model, a response without its request and damaged lines."""
    ask = "Show the last Xid on gpu-17"
    a1 = assistant_calls(call("call_8f3a1b2c9d01", "run_sql", '{"sql": "select xid from kernel_events where node = \'gpu-17\' order by ts desc limit 1", "database": "metrics"}'))
    r1 = tool_result("call_8f3a1b2c9d01", '{"xid": 79}')
    conv1_t1 = request([sys_msg(), user(f"[2026-11-03 10:14:07] {ask}")])
    conv1_t2 = request([sys_msg(), user(f"[2026-11-03 10:14:09] {ask}"), a1, r1])
    b1 = assistant_calls(call("call_Xk29fLq01Ab7", "create_ticket", '{"title": "gpu-17 Xid 79", "severity": "sev2", "node": "gpu-17"}'))
    b1_new = assistant_calls(call("call_Pq77nZ02Rt5e", "create_ticket", '{"title": "gpu-17 Xid 79", "severity": "sev2", "node": "gpu-17"}'))
    conv2_t2 = request([sys_msg(), user("Open a ticket for gpu-17"), b1, tool_result("call_Xk29fLq01Ab7", '{"ticket": "OPS-4411"}'),
                        user("Add the node name to the title")])
    conv2_t3 = request([sys_msg(), user("Open a ticket for gpu-17"), b1_new, tool_result("call_Pq77nZ02Rt5e", '{"ticket": "OPS-4411"}'),
                        user("Add the node name to the title"), {"role": "assistant", "content": "Done: OPS-4411."},
                        user("Thanks")])
    base = "kimi-k3-base"
    lines = [
        line({"id": "g-101", "request": conv1_t1}),
        "GET /healthz 200",
        line({"id": "g-102", "request": conv1_t2}),
        '{"id": "g-103", "request": {"model": "moonshotai/Kimi-K3", "messages": [{"role": "user", "content": "cut',
        line({"event": "gateway-reload", "config": "v42"}),
        line({"id": "g-104", "request": conv2_t2}),
        line({"id": "g-105", "request": conv2_t3}),
        line({"id": "g-106", "response": text_answer("gpu-17 logged Xid 79 at 10:02.")}),
        line({"id": "g-107", "request": {"model": base, "prompt": "Incident summary for rack B:\n", "max_tokens": 200}}),
        line({"id": "g-108", "request": {"model": base, "prompt": "Incident summary for rack C:\n", "max_tokens": 200}}),
    ]
    write("c439-prefix-bundle-gz-history-stamps-and-ids", "captures/gateway-2026-11-03.jsonl.gz", lines, gz=True)
    log = ["INFO 11-03 10:13:58 [api_server.py:1784] vLLM API server version 0.27.1",
           "INFO 11-03 10:13:58 [utils.py:326] non-default args: {'model_tag': 'moonshotai/Kimi-K3', "
           "'enable_prefix_caching': True, 'tensor_parallel_size': 8}",
           "INFO 11-03 10:14:10 [loggers.py:123] Engine 000: Avg prompt throughput: 912.0 tokens/s, Avg generation "
           "throughput: 31.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit "
           "rate: 12.5%"]
    write("c439-prefix-bundle-gz-history-stamps-and-ids", "vllm/server.log", log)


# ------------------------------------------------------------------------------------------------------
# tool-call cases
# ------------------------------------------------------------------------------------------------------
def exchange(ident: str, req: dict, raw: dict | None, forwarded: dict | None | str = "same") -> str:
    rec = {"id": ident, "request": req}
    if raw is not None:
        rec["response"] = raw
    if forwarded == "same":
        forwarded = copy.deepcopy(raw)
    if forwarded is not None:
        rec["forwarded"] = forwarded
    return line(rec)


ASK = request([sys_msg(), user("Is gpu-17 healthy? Open a ticket if not.")])
SEARCH = call("chatcmpl-tool-7a1b2c3d4e5f", "search_docs", '{"query": "xid 79", "top_k": 3}')
SQL = call("chatcmpl-tool-8b2c3d4e5f6a", "run_sql", '{"sql": "select status from node_status where node = \'gpu-17\'", "database": "metrics"}')
TICKET = call("chatcmpl-tool-9c3d4e5f6a7b", "create_ticket", '{"title": "gpu-17 degraded after Xid 79", "severity": "sev2", "node": "gpu-17"}')


def c440():
    """Every tool call valid, forwarded unchanged; a plain answer; two parallel calls."""
    lines = [exchange("x1", ASK, calls_answer(SQL)),
             exchange("x2", ASK, calls_answer(SEARCH, TICKET)),
             exchange("x3", ASK, text_answer("gpu-17 is healthy.")),
             exchange("x4", ASK, calls_answer(call("chatcmpl-tool-0d4e5f6a7b8c", "search_docs", '{"query": "drain a node"}')))]
    write("c440-toolcalls-all-pass", "gateway/exchanges.jsonl", lines)


def c441():
    """The raw responses are wrong (the gateway forwards them as they are): an unknown tool, arguments that are
    not JSON, two schema violations, tool-call markup left in the text, a call without a name; one good call."""
    leaked = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.run_sql:0<|tool_call_argument_begin|>"
              '{"sql": "select 1", "database": "metrics"}<|tool_call_end|><|tool_calls_section_end|>')
    lines = [exchange("m1", ASK, calls_answer(call("chatcmpl-tool-1a", "search_runbooks", '{"query": "xid 79"}'))),
             exchange("m2", ASK, calls_answer(call("chatcmpl-tool-2b", "search_docs", '{"query": "xid 79", "top_k": 3'))),
             exchange("m3", ASK, calls_answer(call("chatcmpl-tool-3c", "run_sql", '{"sql": "select 1", "database": "logs"}'))),
             exchange("m4", ASK, calls_answer(call("chatcmpl-tool-4d", "create_ticket", '{"title": "gpu-17 degraded"}'))),
             exchange("m5", ASK, completion({"role": "assistant", "content": leaked}, "stop")),
             exchange("m6", ASK, calls_answer({"id": "chatcmpl-tool-6f", "type": "function", "function": {"arguments": "{}"}})),
             exchange("m7", ASK, calls_answer(SQL))]
    write("c441-toolcalls-model-parser-failures", "gateway/exchanges.jsonl", lines)


def c442():
    """The raw responses are right, the gateway breaks its copies: drops the tool calls, drops a call id,
    JSON-encodes the arguments twice, repeats a call, passes on both answers of a retried request, drops an
    argument, cuts an argument's text."""
    def fresh(c: dict, cid: str, arguments: str | None = None) -> dict:
        return call(cid, c["function"]["name"], c["function"]["arguments"] if arguments is None else arguments)

    sql1, sql2 = fresh(SQL, "chatcmpl-tool-0a1b2c3d4e01"), fresh(SQL, "chatcmpl-tool-0a1b2c3d4e02")
    search3, ticket4 = fresh(SEARCH, "chatcmpl-tool-0a1b2c3d4e03"), fresh(TICKET, "chatcmpl-tool-0a1b2c3d4e04")
    ticket5, retry5 = fresh(TICKET, "chatcmpl-tool-0a1b2c3d4e05"), fresh(TICKET, "chatcmpl-tool-0a1b2c3d4e15")
    search6 = fresh(SEARCH, "chatcmpl-tool-0a1b2c3d4e06")
    ticket7, ticket8 = fresh(TICKET, "chatcmpl-tool-0a1b2c3d4e07"), fresh(TICKET, "chatcmpl-tool-0a1b2c3d4e08")
    no_calls = completion({"role": "assistant", "content": None}, "tool_calls")
    no_id = calls_answer({"type": "function", "function": sql2["function"]})
    twice = calls_answer(fresh(search3, search3["id"], json.dumps(search3["function"]["arguments"])))
    lines = [exchange("g1", ASK, calls_answer(sql1), no_calls),
             exchange("g2", ASK, calls_answer(sql2), no_id),
             exchange("g3", ASK, calls_answer(search3), twice),
             exchange("g4", ASK, calls_answer(ticket4), calls_answer(ticket4, ticket4)),
             exchange("g5", ASK, calls_answer(ticket5)),
             exchange("g5", ASK, calls_answer(retry5)),
             exchange("g6", ASK, calls_answer(search6)),
             exchange("g7", ASK, calls_answer(ticket7), calls_answer(fresh(ticket7, ticket7["id"], json.dumps(
                 {k: v for k, v in json.loads(ticket7["function"]["arguments"]).items() if k != "node"})))),
             exchange("g8", ASK, calls_answer(ticket8), calls_answer(fresh(ticket8, ticket8["id"], json.dumps(
                 {**json.loads(ticket8["function"]["arguments"]), "title": "gpu-17 degraded a"}))))]
    write("c442-toolcalls-gateway-failures", "gateway/exchanges.jsonl", lines)


def c443():
    """A bundle whose gateway logs requests and responses in two files, joined by request_id: one schema
    violation, one double-encoded copy, one exchange whose raw response was not captured (an unknown tool:
    model or gateway cannot be told), a response whose request is missing, and an API key in a header."""
    reqs, resps = [], []
    bad_ticket = call("chatcmpl-tool-aa01", "create_ticket", '{"title": "gpu-17", "severity": "urgent"}')
    for rid, raw, fwd in [("q1", calls_answer(SQL), "same"),
                          ("q2", calls_answer(bad_ticket), "same"),
                          ("q3", calls_answer(SEARCH), calls_answer({**SEARCH, "function": {
                              "name": "search_docs", "arguments": json.dumps(SEARCH["function"]["arguments"])}})),
                          ("q4", None, calls_answer(call("chatcmpl-tool-dd04", "reboot_node", '{"node": "gpu-17"}')))]:
        reqs.append(line({"request_id": rid, "headers": {"authorization": "Bearer sk-acmegw-9f8e7d6c5b4a39281706f5e4"},
                          "body": json.dumps(ASK)}))
        rec = {"request_id": rid}
        if raw is not None:
            rec["upstream_response"] = raw
        rec["client_response"] = copy.deepcopy(raw) if fwd == "same" else fwd
        resps.append(line(rec))
    resps.append(line({"request_id": "q9", "upstream_response": calls_answer(SQL), "client_response": calls_answer(SQL)}))
    write("c443-toolcalls-split-logs-bundle", "gateway/requests.jsonl", reqs)
    write("c443-toolcalls-split-logs-bundle", "gateway/responses.jsonl", resps)
    write("c443-toolcalls-split-logs-bundle", "vllm/server.log",
          ["INFO 11-03 10:13:58 [api_server.py:1784] vLLM API server version 0.27.1",
           "INFO 11-03 10:13:58 [utils.py:326] non-default args: {'model_tag': 'moonshotai/Kimi-K3', "
           "'enable_auto_tool_choice': True, 'tool_call_parser': 'kimi_k2'}"])


if __name__ == "__main__":
    for make in (c430, c431, c432, c433, c434, c435, c436, c437, c438, c439, c440, c441, c442, c443):
        make()
