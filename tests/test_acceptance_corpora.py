"""Acceptance corpus cases: where a truth.json gives the go-live `verdict` or `prefix_cache` (`enabled`,
`hit_ratio`), the report must say the same (k3logs.evaluate scores them the same way); every go-live verdict
but GO has a case here (GO needs tool-call evidence, which the bundle analysis is handed from outside)."""
from __future__ import annotations

import pytest

from k3logs.evaluate import score
from test_corpora import CASES, report_of, truth_of

ACCEPTANCE = [c for c in CASES if "verdict" in truth_of(c) or "prefix_cache" in truth_of(c)]


@pytest.mark.parametrize("case", ACCEPTANCE)
def test_acceptance_answers_match_the_truth(case):
    s = score(case, truth_of(case), report_of(case))
    for key in ("verdict", "prefix_cache"):
        if key in s.ok:
            assert s.ok[key], f"{key}: got {s.got[key]}, want {s.want[key]}"


def test_every_verdict_that_needs_no_tool_calls_has_a_corpus_case():
    want = {"THROTTLE AND OBSERVE", "REWORK ENVIRONMENT", "SCALE OR RETOPOLOGISE"}
    assert want <= {truth_of(c).get("verdict") for c in ACCEPTANCE}


@pytest.mark.parametrize("case", [c for c in CASES if c not in ACCEPTANCE])
def test_an_ordinary_incident_bundle_says_nothing_about_go_live(case):
    r = report_of(case)
    assert r.capacity is None and r.verdict is None, "a bundle without /metrics got acceptance sections"
    assert r.prefix_cache.hit_ratio is None
