"""The report: every key of report-contract.md with its type (incident and healthy), byte-identical output
whatever the order files were created in, and the markdown sections an operator reads."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import TESTS_DIR, make_bundle, text_of
from k3logs.report.assemble import typed_fact
from k3logs.api import analyze
from k3logs.report.render import render_json, render_markdown
from k3logs.schema import PHASES

INCIDENT = {
    "node-a/vllm.log": text_of(
        "(Worker_TP0 pid=101) INFO 08-11 10:00:00 [parallel_state.py:1] rank 0 in world size 2 is assigned as DP "
        "rank 0, PP rank 0, TP rank 0, EP rank 0",
        "[rank0]:[E811 10:10:05.412207911 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran "
        "for 600020 milliseconds before timing out."),
    "node-b/vllm.log": text_of(
        "(Worker_TP1 pid=202) INFO 08-11 10:00:00 [parallel_state.py:1] rank 1 in world size 2 is assigned as DP "
        "rank 0, PP rank 0, TP rank 1, EP rank 1",
        "(Worker_TP1 pid=202) ERROR 08-11 10:00:09 [core.py:708] RuntimeError: CUDA error: an illegal memory access "
        "was encountered"),
    "node-b/kern.log": "2026-08-11T10:00:07+00:00 gpu-b kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
                       "name=<unknown>, GPU has fallen off the bus.\n",
    "node-b/nvidia-smi.txt": (
        "Tue Aug 11 10:05:00 2026\n"
        "+-----------------------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |\n"
        "+-----------------------------------------------------------------------------------------+\n"),
    "node-b/core.bin": b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8,
}

HEALTHY = {
    "vllm.log": text_of(
        "INFO 08-11 10:00:00 [__init__.py:239] Automatically detected platform cuda.",
        "(APIServer pid=1) INFO 08-11 10:04:00 [launcher.py:1] Application startup complete.",
        "(APIServer pid=1) INFO 08-11 10:05:00 [loggers.py:123] Engine 000: Avg prompt throughput: 10.0 tokens/s, "
        "Avg generation throughput: 388.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.7%, "
        "Prefix cache hit rate: 0.0%"),
}

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$")


def report_json(path: Path | str) -> dict:
    return json.loads(render_json(analyze(path)))


def is_opt(value, typ) -> bool:
    return value is None or isinstance(value, typ)


def check_contract(d: dict) -> None:
    """Every field report-contract.md requires, with its type."""
    assert d["schema_version"] == 2 and type(d["schema_version"]) is int
    o = d["outcome"]
    assert o["state"] in ("never_ready", "crashed", "failing_requests", "restart_loop", "stopped", "serving",
                          "inconclusive")
    assert is_opt(o["file"], str) and (o["line"] is None or type(o["line"]) is int) and isinstance(o["detail"], str)
    assert d["healthy"] is (o["state"] in ("stopped", "serving") and d["first_causal"] is None)
    b = d["bundle"]
    assert isinstance(b["path"], str)
    for k in ("files", "bytes", "lines"):
        assert type(b[k]) is int and b[k] >= 0, k
    assert isinstance(b["skipped"], list)
    for s in b["skipped"]:
        assert isinstance(s["file"], str) and isinstance(s["reason"], str) and s["reason"]
    assert type(d["healthy"]) is bool
    rc = d["root_cause"]
    assert isinstance(rc["category"], str) and rc["category"]
    assert is_opt(rc["signature"], str)
    assert isinstance(rc["title"], str) and rc["title"]
    assert rc["confidence"] in ("high", "medium", "low")
    assert isinstance(rc["explanation"], str)
    assert isinstance(rc["remediation"], list) and all(isinstance(x, str) for x in rc["remediation"])
    fc = d["first_causal"]
    if fc is not None:
        assert set(fc) >= {"file", "line", "span", "timestamp", "text"}
        assert isinstance(fc["file"], str) and type(fc["line"]) is int and fc["line"] >= 1
        assert isinstance(fc["span"], list) and len(fc["span"]) == 2 and all(type(x) is int for x in fc["span"])
        assert fc["span"][0] <= fc["line"] <= fc["span"][1]
        assert fc["timestamp"] is None or ISO_Z.match(fc["timestamp"]), fc["timestamp"]
        assert isinstance(fc["text"], str) and fc["text"]
    assert set(d["origin"]) >= {"node", "rank", "node_from", "rank_from"}
    assert is_opt(d["origin"]["node"], str) and (d["origin"]["rank"] is None or type(d["origin"]["rank"]) is int)
    assert d["phase"] is None or d["phase"] in PHASES
    assert isinstance(d["symptoms"], list)
    for s in d["symptoms"]:
        assert isinstance(s["category"], str) and isinstance(s["file"], str) and type(s["line"]) is int
        assert is_opt(s["node"], str) and (s["rank"] is None or type(s["rank"]) is int)
        assert type(s["count"]) is int and s["count"] >= 1
    env = d["environment"]
    assert isinstance(env["facts"], dict) and all(isinstance(k, str) and isinstance(v, str)
                                                  for k, v in env["facts"].items())
    assert isinstance(env["checks"], list) and env["checks"]
    for c in env["checks"]:
        assert isinstance(c["id"], str) and c["status"] in ("pass", "fail", "unknown")
        assert c["evidence"] is None or re.match(r"^.+:\d+$", c["evidence"]), c["evidence"]
        assert isinstance(c["detail"], str)
    assert isinstance(d["evidence_missing"], list) and all(isinstance(x, str) for x in d["evidence_missing"])


@pytest.fixture(scope="module")
def incident(tmp_path_factory):
    root = make_bundle(tmp_path_factory.mktemp("incident"), INCIDENT)
    return root, report_json(root)


def test_incident_report_follows_the_contract(incident):
    root, d = incident
    check_contract(d)
    assert d["bundle"]["path"] == str(root)
    assert d["healthy"] is False
    assert (d["root_cause"]["category"], d["root_cause"]["signature"]) == ("gpu.xid", "nvrm-xid")
    assert d["first_causal"] == {"file": "node-b/kern.log", "line": 1, "span": [1, 1],
                                 "timestamp": "2026-08-11T10:00:07Z",
                                 "text": "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has "
                                         "fallen off the bus."}
    assert (d["origin"]["node"], d["origin"]["rank"]) == ("gpu-b", 1)
    assert d["root_cause"]["remediation"]
    assert {(s["category"], s["file"], s["line"]) for s in d["symptoms"]} == {
        ("gpu.illegal_access", "node-b/vllm.log", 2), ("nccl.timeout", "node-a/vllm.log", 2)}
    assert d["environment"]["facts"]["driver_version"] == "580.65.06"


def test_bundle_summary_counts_files_lines_and_skips(incident):
    _, d = incident
    b = d["bundle"]
    assert b["files"] == len(INCIDENT)
    assert b["lines"] == sum(v.count("\n") for v in INCIDENT.values() if isinstance(v, str))
    assert [s["file"] for s in b["skipped"]] == ["node-b/core.bin"]
    assert b["skipped"][0]["reason"].startswith("binary")


def test_bundle_bytes_are_the_bytes_of_the_files(incident):
    _, d = incident
    assert d["bundle"]["bytes"] == sum(len(v if isinstance(v, bytes) else v.encode()) for v in INCIDENT.values())


def test_healthy_report_follows_the_contract(tmp_path):
    d = report_json(make_bundle(tmp_path, HEALTHY))
    check_contract(d)
    assert d["healthy"] is True
    assert d["root_cause"]["category"] == "none" and d["root_cause"]["signature"] is None
    assert d["first_causal"] is None
    assert (d["origin"]["node"], d["origin"]["rank"]) == (None, None)
    assert d["symptoms"] == []


def test_output_is_identical_for_the_same_bundle(incident):
    root, _ = incident
    assert render_json(analyze(root)) == render_json(analyze(root))
    assert render_markdown(analyze(root)) == render_markdown(analyze(root))


def test_output_is_identical_whatever_order_the_files_were_created_in(tmp_path, monkeypatch):
    make_bundle(tmp_path / "first", INCIDENT)
    make_bundle(tmp_path / "second", dict(reversed(list(INCIDENT.items()))))
    outs = []
    for where in ("first", "second"):
        monkeypatch.chdir(tmp_path / where)   # the same path as given, so bundle.path matches too
        r = analyze("bundle")
        outs.append((render_json(r), render_markdown(r)))
    assert outs[0] == outs[1]


def test_a_copy_gives_the_same_report_apart_from_its_path(tmp_path, incident):
    root, d = incident
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    other = report_json(copy)
    assert other["bundle"].pop("path") == str(copy)
    d = json.loads(json.dumps(d))
    d["bundle"].pop("path")
    assert other == d


# ------------------------------------------------------------------------------------------
# markdown
# ------------------------------------------------------------------------------------------
def test_markdown_has_verdict_evidence_timeline_environment_and_remediation(incident):
    root, _ = incident
    md = render_markdown(analyze(root))
    assert md.startswith("# k3logs report")
    assert re.search(r"\*\*Verdict: Xid 79.*`gpu\.xid`.*confidence \*\*high\*\*", md)
    assert "## Root cause" in md and "`node-b/kern.log:1`" in md
    for heading in ("## Timeline", "## Environment", "## What to do"):
        assert heading in md, heading
    timeline = md.split("## Timeline", 1)[1].split("\n## ", 1)[0]
    assert "`node-b/vllm.log:2`" in timeline and "`node-a/vllm.log:2`" in timeline
    todo = md.split("## What to do", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^1\. \S", todo, re.M)


def test_markdown_of_a_healthy_bundle_says_so(tmp_path):
    md = render_markdown(analyze(make_bundle(tmp_path, HEALTHY)))
    assert "**Verdict: no incident found.**" in md
    assert "## Root cause" not in md and "## Environment" in md


def test_markdown_table_cells_stay_one_line(tmp_path):
    files = dict(INCIDENT)
    files["node-b/vllm.log"] = text_of(
        "(Worker_TP1 pid=202) INFO 08-11 10:00:00 [parallel_state.py:1] rank 1 in world size 2 is assigned as DP "
        "rank 0, PP rank 0, TP rank 1, EP rank 1",
        "(Worker_TP1 pid=202) ERROR 08-11 10:00:09 [core.py:708] RuntimeError: CUDA error: an illegal memory access "
        "was encountered | a | b |")
    md = render_markdown(analyze(make_bundle(tmp_path, files)))
    row = next(ln for ln in md.splitlines() if "node-b/vllm.log:2" in ln and ln.startswith("|"))
    assert "\\| a \\| b \\|" in row


MAP_STEP = "Map the PCI address to the GPU and rank"


def test_a_step_the_report_already_did_is_left_out_of_what_to_do():
    from k3logs.api import analyze
    r = analyze(TESTS_DIR.parent / "corpora" / "c208-xid79-torchrun-misleading-rootcause" / "bundle")
    assert r.origin.rank is not None and not any(MAP_STEP in s for s in r.root_cause.remediation)
    assert not any("xid.toml" in s for s in r.root_cause.remediation)


def test_near_miss_with_no_rank_the_report_asks_to_map_the_gpu(tmp_path):
    from k3logs.api import analyze
    bundle = make_bundle(tmp_path, {"dmesg.txt": "[ 9311.552013] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', "
                                                 "name=<unknown>, GPU has fallen off the bus.\n"})
    r = analyze(bundle)
    assert r.root_cause.category == "gpu.xid" and r.origin.rank is None
    assert any(MAP_STEP in s for s in r.root_cause.remediation)


def test_the_verdict_block_holds_the_gpu_the_first_two_steps_and_the_symptoms_above_the_root_cause():
    r = analyze(TESTS_DIR.parent / "corpora" / "c208-xid79-torchrun-misleading-rootcause" / "bundle")
    assert r.origin.gpu["uuid"].startswith("GPU-") and r.origin.gpu["recovery_action"] == "Node Reboot Required"
    md = render_markdown(r)
    head = md[:md.index("## Root cause")]
    assert "**GPU**: index 4, bus 0000:9a:00" in head and "**Node Reboot Required**" in head
    steps = re.findall(r"^(\d)\. (.*)$", head[head.index("**Do first:**"):], re.M)
    assert [s for _, s in steps][:2] == [s.replace("<", "\\<") for s in r.root_cause.remediation[:2]] and len(steps) == 2
    assert re.search(r"\*\*Symptoms\*\* \(the full table below\): `nccl\.timeout` \d+ on ", head)


def test_near_miss_a_healthy_report_and_a_software_cause_have_no_gpu_line_nor_steps_when_healthy(tmp_path):
    healthy = render_markdown(analyze(make_bundle(tmp_path / "h", HEALTHY)))
    assert "**Do first:**" not in healthy and "**GPU**" not in healthy
    r = analyze(TESTS_DIR.parent / "corpora" / "c203-shm-64m-docker-rtx6000ada" / "bundle")
    assert r.origin.gpu is None and "**GPU**" not in render_markdown(r) and "**Do first:**" in render_markdown(r)


@pytest.mark.parametrize("key, text, want", [
    ("gpu_count", "8", 8), ("shm_size", "17179869184", 17179869184), ("prefix_caching", "true", True),
    ("nvidia_peermem_loaded", "false", False), ("nccl_dmabuf_enable", "0", 0),
    # near misses: a version, an image tag and a value its type cannot read stay text
    ("driver_cuda", "13", "13"), ("vllm_version", "0.27", "0.27"), ("image", "1234", "1234"),
    ("max_model_len", "auto", "auto"), ("prefix_caching", "maybe", "maybe")])
def test_a_fact_takes_its_declared_type_and_a_value_it_cannot_read_stays_text(key, text, want):
    got = typed_fact(key, text)
    assert got == want and type(got) is type(want)


def test_a_fact_with_several_values_lists_each_typed_with_where_it_was_read():
    r = analyze(TESTS_DIR.parent / "corpora" / "c208-xid79-torchrun-misleading-rootcause" / "bundle")
    counts = r.environment.values["gpu_count"]
    assert sorted(v["value"] for v in counts) == [1, 8] and all(v["file"] and v["line"] for v in counts)
    assert r.environment.facts["gpu_count"] == "1 | 8"   # (the joined string stays, for the contract)
    # near miss: a version stays text, however numeric it looks
    assert {v["value"] for v in r.environment.values["driver_cuda"]} == {"12.9"}
