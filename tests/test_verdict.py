"""The acceptance sections and the go-live verdict: prefix caching on or off from what ran, every verdict rule
(REWORK ENVIRONMENT wins, SCALE OR RETOPOLOGISE, GO only with tool-call evidence, THROTTLE AND OBSERVE),
no verdict without acceptance evidence, the recovery ladder from metrics, and the report end to end (JSON,
markdown, HTML)."""
from __future__ import annotations

import json

import pytest

from conftest import make_bundle, text_of
from k3logs.catalogue.acceptance import load_acceptance_data
from k3logs.api import analyze
from k3logs.facts.checks import Check
from k3logs.errors import CatalogueError
from k3logs.facts.util import Fact
from k3logs.acceptance.metrics import Metrics, read_metrics
from k3logs.report.render import render_html, render_json, render_markdown
from k3logs.contract import Rung
from k3logs.acceptance.verdict import Incident, ToolCallEvidence, go_live, prefix_cache_section
from test_metrics import scrape


# ------------------------------------------------------------------------------------------
# prefix caching on or off
# ------------------------------------------------------------------------------------------
def fact(name: str, value: str, source: str = "launch_cmd", line: int = 1, file: str = "cmd.txt") -> Fact:
    return Fact(name, value, file, line, None, source)


K3 = fact("model", "moonshotai/Kimi-K3", "log", 3, "vllm.log")
QWEN = fact("model", "Qwen/Qwen3-32B", "log", 3, "vllm.log")


@pytest.mark.parametrize("facts, want", [
    ([K3, fact("launch_command", "vllm serve moonshotai/Kimi-K3 --enable-prefix-caching"),
      fact("prefix_caching", "true")], (True, "cmd.txt:1")),
    ([QWEN, fact("launch_command", "vllm serve Qwen/Qwen3-32B --no-enable-prefix-caching"),
      fact("prefix_caching", "false")], (False, "cmd.txt:1")),
    # no flag: K3 does not enable it by default ...
    ([K3, fact("launch_command", "vllm serve moonshotai/Kimi-K3 -tp 8")], (False, "cmd.txt:1")),
    # ... vLLM V1 does for other models; before V1 it did not; without a version the bundle cannot tell
    ([QWEN, fact("vllm_version", "0.11.0", "log"), fact("launch_command", "vllm serve Qwen/Qwen3-32B")],
     (True, "cmd.txt:1")),
    ([QWEN, fact("vllm_version", "0.6.3", "log"), fact("launch_command", "vllm serve Qwen/Qwen3-32B")],
     (False, "cmd.txt:1")),
    ([QWEN, fact("launch_command", "vllm serve Qwen/Qwen3-32B")], (None, "cmd.txt:1")),
    ([QWEN], (None, None)),
    # the engine's own config line (what ran) wins over a template that says otherwise
    ([K3, fact("prefix_caching", "true", "pod_spec", 9, "deploy.yaml"),
      fact("prefix_caching", "false", "log", 10, "vllm.log")], (False, "vllm.log:10")),
])
def test_prefix_caching_on_or_off_in_what_ran(facts, want):
    p = prefix_cache_section(facts, Metrics())
    assert (p.enabled, p.enabled_evidence) == want
    assert p.hit_ratio is None and p.enabled_detail


def test_hits_show_prefix_caching_on_when_only_a_default_said_off():
    text = scrape(queries=1000, hits=400, model="kimi-k3")
    facts = [K3, fact("launch_command", "vllm serve moonshotai/Kimi-K3 -tp 8")]
    p = prefix_cache_section(facts, read_metrics([("m.txt", None, text)]))
    assert (p.enabled, p.enabled_evidence) == (True, "m.txt:12")
    said = prefix_cache_section(facts + [fact("prefix_caching", "false", "log", 10, "vllm.log")],
                                read_metrics([("m.txt", None, text)]))
    assert (said.enabled, said.enabled_evidence) == (False, "vllm.log:10")  # what ran says so: reported as is


def test_hit_ratio_is_tokens_hit_over_tokens_queried_across_windows():
    text = "".join(f"# 2026-11-30T05:0{i}:00Z\n" + scrape(queries=q, hits=h)
                   for i, (q, h) in enumerate([(0, 0), (10_000, 0), (20_000, 9_000), (30_000, 9_000)]))
    p = prefix_cache_section([], read_metrics([("m.txt", None, text)]))
    assert (p.queried_tokens, p.hit_tokens, p.hit_ratio) == (30_000, 9_000, 0.3)
    assert (p.hot_windows, p.best_window_hit_ratio) == (1, 0.9)
    assert p.evidence.startswith("m.txt:") and p.enabled is True  # hits prove it is on when no flag is known


# ------------------------------------------------------------------------------------------
# the verdict rules
# ------------------------------------------------------------------------------------------
CHAIN_OK = [Check(i, "pass", "nvidia-smi.txt:9", "ok", None, ()) for i in (
    "driver_branch_vs_cuda", "image_is_k3", "vllm_version_min", "torch_cuda_build", "prefix_caching_flag")]
LADDER_OK = [Rung(1, "starts", "passed", "vllm.log:40"), Rung(2, "answers", "passed", "vllm.log:41"),
             Rung(3, "prefix", "passed", "m.txt:12"), Rung(4, "concurrency", "passed", "m.txt:3"),
             Rung(5, "multi-node", "no evidence")]
GIB = 2**30


def good_series(n: int = 8, **over) -> Metrics:
    """A sustained run: n scrapes 10 minutes apart, long prompts, 24 running, prefix hits, no saturation."""
    text = ""
    for i in range(n):
        v = dict(queries=400_000 * i, hits=300_000 * i, running=24, waiting=0, kv=0.4 + 0.05 * (i % 2),
                 prompt=400_000 * i, requests=4 * i, rss=30 * GIB)
        v.update({k: f(i) for k, f in over.items()})
        text += f"# 2026-11-30T{5 + i // 6:02d}:{i % 6}0:00Z\n" + scrape(**v)
    return read_metrics([("acceptance/metrics.txt", "gpu-a", text)])


def verdict(checks=CHAIN_OK, incident=None, metrics=None, ladder=LADDER_OK, tool_calls=None, facts=()):
    metrics = good_series() if metrics is None else metrics
    prefix = prefix_cache_section(list(facts), metrics)
    return go_live(list(checks), incident, prefix, metrics, ladder, tool_calls)


def status(v) -> dict[str, str]:
    return {c.id: c.status for c in v.criteria}


def test_go_needs_every_criterion_including_tool_calls():
    v = verdict(tool_calls=ToolCallEvidence(checked=40, failed=0, evidence="captures/calls.jsonl:1"))
    assert v.decision == "GO", v.reason
    assert set(status(v).values()) == {"passed"}
    assert all(c.evidence for c in v.criteria if c.id != "faults")


def test_without_tool_call_evidence_the_best_verdict_is_throttle_and_observe():
    v = verdict()
    assert v.decision == "THROTTLE AND OBSERVE"
    assert status(v)["tool_calls"] == "no evidence" and "tool_calls (no evidence)" in v.reason
    assert [c.id for c in v.criteria if c.status != "passed"] == ["tool_calls"]


def test_failing_tool_calls_are_an_open_criterion_not_a_rebuild():
    v = verdict(tool_calls=ToolCallEvidence(checked=40, failed=3, evidence="captures/calls.jsonl:17"))
    assert v.decision == "THROTTLE AND OBSERVE"
    tc = next(c for c in v.criteria if c.id == "tool_calls")
    assert (tc.status, tc.evidence) == ("failed", "captures/calls.jsonl:17") and "3 of 40" in tc.detail


def test_a_chain_off_the_recipe_is_rework_environment_and_wins_over_saturation():
    bad = [Check("driver_branch_vs_cuda", "fail", "node-a/nvidia-smi.txt:3", "host driver 570.172.08 is older "
                 "than r580", "env.driver_too_old", ())] + CHAIN_OK[1:]
    saturated = good_series(kv=lambda i: 0.99, waiting=lambda i: 10 * i)
    v = verdict(checks=bad, metrics=saturated, tool_calls=ToolCallEvidence(10, 0))
    assert v.decision == "REWORK ENVIRONMENT"
    chain = next(c for c in v.criteria if c.id == "chain")
    assert (chain.status, chain.evidence) == ("failed", "node-a/nvidia-smi.txt:3")
    assert status(v)["capacity"] == "failed"


def test_saturation_under_load_with_a_good_chain_is_scale_or_retopologise():
    v = verdict(metrics=good_series(kv=lambda i: 0.97, waiting=lambda i: 5 * i, preempt=lambda i: 3 * i))
    assert v.decision == "SCALE OR RETOPOLOGISE"
    cap = next(c for c in v.criteria if c.id == "capacity")
    assert cap.status == "failed" and "kv_pinned" in cap.detail and cap.evidence.startswith("acceptance/metrics.txt:")


def test_memory_creep_over_a_sustained_run_is_scale_or_retopologise():
    v = verdict(metrics=good_series(rss=lambda i: (30 + 2 * i) * GIB))
    assert v.decision == "SCALE OR RETOPOLOGISE"
    assert status(v)["sustained"] == "failed"


@pytest.mark.parametrize("group, phase, want", [
    ("memory", "serving", "SCALE OR RETOPOLOGISE"),          # an OOM under load
    ("communication", "serving", "SCALE OR RETOPOLOGISE"),   # cross-node comms under load
    ("communication", "distributed_init", "REWORK ENVIRONMENT"),  # shm / dmabuf / bootstrap at start
    ("environment", "device_init", "REWORK ENVIRONMENT"),
    ("hardware", "serving", "REWORK ENVIRONMENT"),
    ("process", "serving", "THROTTLE AND OBSERVE"),          # unexplained: open, never GO
])
def test_the_incident_in_the_bundle_fails_the_criterion_its_group_points_to(group, phase, want):
    inc = Incident("x.y", group, phase, "vllm.log:900", "something broke")
    v = verdict(incident=inc, tool_calls=ToolCallEvidence(10, 0))
    assert v.decision == want
    assert status(v)["faults"] == "failed"


def test_prefix_caching_that_never_hits_is_a_failed_criterion_and_not_go():
    no_hits = good_series(hits=lambda i: 0)
    v = verdict(metrics=no_hits, tool_calls=ToolCallEvidence(10, 0))
    assert v.decision == "THROTTLE AND OBSERVE"
    pc = next(c for c in v.criteria if c.id == "prefix_cache")
    assert pc.status == "failed" and "0 hit" in pc.detail


def test_no_acceptance_evidence_no_verdict():
    assert verdict(metrics=Metrics()) is None
    assert verdict(metrics=Metrics(), tool_calls=ToolCallEvidence(checked=5, failed=0)).decision == \
        "THROTTLE AND OBSERVE"


def test_a_short_single_scrape_leaves_the_load_stages_open():
    one = read_metrics([("m.txt", None, scrape(queries=1000, hits=600, running=2, kv=0.2))])
    v = verdict(metrics=one, tool_calls=ToolCallEvidence(10, 0))
    assert v.decision == "THROTTLE AND OBSERVE"
    s = status(v)
    assert (s["sustained"], s["concurrency"], s["long_input"], s["prefix_cache"]) == \
        ("no evidence", "no evidence", "no evidence", "passed")


def test_the_rules_are_data_and_checked_on_load(tmp_path):
    bad = tmp_path / "acceptance.toml"
    from k3logs.resources import data_dir
    text = (data_dir("patterns") / "acceptance.toml").read_text()
    bad.write_text(text.replace('any_failed = ["chain"]', 'any_failed = ["chian"]').replace(
        "kv_pinned = 0.95", 'kv_pinned = "high"'))
    with pytest.raises(CatalogueError) as e:
        load_acceptance_data(bad)
    msgs = [str(p) for p in e.value.problems]
    assert any("any_failed" in m and "acceptance.toml:" in m for m in msgs)
    assert any("kv_pinned" in m for m in msgs)


def test_the_ladder_rungs_are_data_and_their_samples_are_held_to_their_regex(tmp_path):
    """The built-in rungs load with their titles and regexes; near misses: a sample the regex misses, a near
    miss it matches, and a ladder of four rungs are each an issue of acceptance.toml."""
    from k3logs.catalogue.acceptance import default_acceptance_data
    from k3logs.resources import data_dir
    steps = default_acceptance_data().ladder
    assert len(steps) == 5 and steps[0].up and all(s.regex for s in steps[:4]) and steps[4].regex is None
    text = (data_dir("patterns") / "acceptance.toml").read_text()
    for broken, want in [
        (text.replace('"INFO:     Application startup complete."', '"INFO:     Application started."'), "does not match"),
        (text.replace('no_match = ["INFO:     Waiting for application startup."]',
                      'no_match = ["INFO:     Application startup complete."]'), "matches the regex"),
        (text.rsplit("[[rung]]", 1)[0], "5 [[rung]] tables"),
    ]:
        bad = tmp_path / "acceptance.toml"
        bad.write_text(broken)
        with pytest.raises(CatalogueError) as e:
            load_acceptance_data(bad)
        assert any(want in str(p) and "acceptance.toml:" in str(p) for p in e.value.problems), want


# ------------------------------------------------------------------------------------------
# end to end
# ------------------------------------------------------------------------------------------
LOG = text_of(
    "(APIServer pid=1) INFO 11-30 05:00:00 [api_server.py:1788] vLLM API server version 0.11.0",
    "(APIServer pid=1) INFO 11-30 05:00:00 [utils.py:302] non-default args: {'model_tag': 'Qwen/Qwen3-32B', "
    "'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2}",
    "(APIServer pid=1) INFO 11-30 05:04:00 [launcher.py:1] Application startup complete.",
    '(APIServer pid=1) INFO:     10.0.0.7:41234 - "POST /v1/chat/completions HTTP/1.1" 200 OK')


def test_the_report_carries_the_sections_and_renders_them(tmp_path):
    series = "".join(f"# 2026-11-30T05:{10 + i}:00Z\n" + scrape(queries=1000 * i, hits=600 * i, running=6,
                                                                model="qwen3-32b") for i in range(3))
    root = make_bundle(tmp_path, {"vllm.log": LOG, "metrics/series.prom": series,
                                  "cmd.txt": "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2\n"})
    r = analyze(root, context_lines=1)
    d = json.loads(render_json(r))
    assert d["prefix_cache"]["enabled"] is True and d["prefix_cache"]["hit_ratio"] == 0.6
    assert d["prefix_cache"]["enabled_evidence"] == "cmd.txt:1"
    assert d["capacity"]["windows_total"] == 2 and d["capacity"]["peak_running"] == 6
    assert d["verdict"]["decision"] == "THROTTLE AND OBSERVE"
    ladder = {g["rung"]: g for g in d["recovery_ladder"]}
    assert ladder[3]["status"] == "passed" and ladder[3]["evidence"].startswith("metrics/series.prom:")
    assert ladder[4]["status"] == "passed" and ladder[4]["evidence"].startswith("metrics/series.prom:")
    md = render_markdown(r)
    assert "## Go-live verdict: **THROTTLE AND OBSERVE**" in md and "Token hit ratio **60.0%**" in md
    html = render_html(r)
    assert "Go-live verdict: THROTTLE AND OBSERVE" in html and "<summary><code>metrics/series.prom:" in html
    assert render_json(analyze(root, context_lines=1)) == render_json(r)


def test_a_crash_bundle_without_acceptance_evidence_says_nothing_about_go_live(tmp_path):
    root = make_bundle(tmp_path, {"vllm.log": LOG + text_of(
        "(EngineCore pid=9) ERROR 11-30 05:09:00 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is free.")})
    d = json.loads(render_json(analyze(root)))
    assert d["verdict"] is None and d["capacity"] is None and d["prefix_cache"]["hit_ratio"] is None
    md = render_markdown(analyze(root))
    assert "Go-live" not in md and "/metrics" not in md
