"""Acceptance corpus cases: where a truth.json gives the go-live `verdict` or `prefix_cache` (`enabled`,
`hit_ratio`), the report must say the same (k3logs.evaluate.score scores them the same way); every go-live verdict
has a case, GO only where the bundle also holds tool-call captures that pass."""
from __future__ import annotations

from dataclasses import replace

import pytest

from k3logs.report.assemble import make_report
from k3logs.evaluate.score import score
from k3logs.acceptance.verdict import ToolCallEvidence
from k3logs.pipeline import acceptance_of
from test_corpora import CASES, CORPORA, analysis_of, known, report_of, truth_of

ACCEPTANCE = [c for c in CASES if "verdict" in truth_of(c) or "prefix_cache" in truth_of(c)]


@pytest.mark.parametrize("case", [pytest.param(c, marks=known(c, "verdict")) for c in ACCEPTANCE])
def test_acceptance_answers_match_the_truth(case):
    s = score(case, truth_of(case), report_of(case))
    for key in ("verdict", "prefix_cache"):
        if key in s.ok:
            assert s.ok[key], f"{key}: got {s.got[key]}, want {s.want[key]}"


def test_every_verdict_has_a_corpus_case():
    want = {"GO", "THROTTLE AND OBSERVE", "REWORK ENVIRONMENT", "SCALE OR RETOPOLOGISE"}
    assert want <= {truth_of(c).get("verdict") for c in ACCEPTANCE}


GREEN = "c417-k3-acceptance-sustained-green-no-toolcall-evidence"


@pytest.mark.parametrize("tool_calls, want", [
    (ToolCallEvidence(checked=48, failed=0, evidence="captures/toolcalls.jsonl:1"), "GO"),
    (ToolCallEvidence(checked=48, failed=5, evidence="captures/toolcalls.jsonl:31"), "THROTTLE AND OBSERVE"),
    (None, "THROTTLE AND OBSERVE"),
])
def test_the_all_green_run_is_go_only_with_passing_tool_calls(tool_calls, want):
    a = analysis_of(GREEN)
    r = make_report(replace(a, acceptance=acceptance_of(a, tool_calls)), str(CORPORA / GREEN / "bundle"))
    assert r.verdict.decision == want, r.verdict.reason


@pytest.mark.parametrize("case", [c for c in CASES if c not in ACCEPTANCE])
def test_an_ordinary_incident_bundle_says_nothing_about_go_live(case):
    r = report_of(case)
    # (an incident's /metrics snapshot, a file of its own or a transcript's `curl .../metrics`: judged, no truth for it)
    if any(f.kind == "prometheus" for f in r.sniffed) or (r.capacity is not None and r.capacity.series):
        pytest.skip("the bundle holds a /metrics scrape")
    assert r.capacity is None and r.verdict is None, "a bundle without /metrics got acceptance sections"
    assert r.prefix_cache.hit_ratio is None


def test_the_report_shows_what_the_acceptance_stage_judged_and_computes_none_of_it():
    """Acceptance is a stage of the pipeline (pipeline.run sets it); the report maps it as it is."""
    from k3logs.acceptance.judge import Acceptance
    from k3logs.contract import GoLive, PrefixCache, Rung
    a = analysis_of(GREEN)
    assert a.acceptance is not None and a.acceptance.verdict is not None
    judged = Acceptance(PrefixCache(enabled=False), None, [Rung(1, "every node's service starts", "failed", "x:1")],
                        GoLive("REWORK ENVIRONMENT", "a verdict the report did not reach itself", ""))
    r = make_report(replace(a, acceptance=judged), str(CORPORA / GREEN / "bundle"))
    assert (r.prefix_cache, r.capacity, r.recovery_ladder, r.verdict) == (judged.prefix_cache, None, judged.ladder,
                                                                           judged.verdict)
