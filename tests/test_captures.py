"""The capture corpus (corpora/captures/*/expected.json, hand-written truths; the bundles are made by
corpora/captures/make_bundles.py): `k3logs prefix` and `k3logs toolcalls` give exactly the expected
divergences and counts, and together the cases cover every divergence cause, every section, a negative
control, a clean group, and every tool-call failure kind. These cases are captures, not incidents: they
live outside `k3logs eval corpora` (which looks one level down for truth.json) and tools/coverage.py."""
from __future__ import annotations

import json

import pytest

from conftest import TESTS_DIR
from k3logs.prefix import CAUSES, SECTIONS, check_requests
from k3logs.toolcalls import KINDS, check_bundle

CAPTURES = TESTS_DIR.parent / "corpora" / "captures"
CASES = sorted(p.parent.name for p in CAPTURES.glob("*/expected.json"))


def truth(case: str) -> dict:
    return json.loads((CAPTURES / case / "expected.json").read_text(encoding="utf-8"))


def by_command(command: str) -> list[str]:
    return [c for c in CASES if truth(c)["command"] == command]


def test_the_cases_are_ours_and_numbered_in_our_range():
    assert len(CASES) >= 14
    assert all(430 <= int(c[1:4]) <= 449 for c in CASES)
    assert not list(CAPTURES.glob("*/truth.json")), "a truth.json would put a capture case into `k3logs eval`"


@pytest.mark.parametrize("case", by_command("prefix"))
def test_prefix_case(case):
    want = truth(case)["expect"]
    r = check_requests(CAPTURES / case / "bundle")
    out = r.to_json()
    got = [{k: d[k] for k in ("request", "against", "section", "cause")} for d in out["divergences"]]
    assert got == want["divergences"]
    assert (out["requests"], len(out["groups"])) == (want["requests"], want["groups"])
    if "skipped" in want:
        assert dict(r.stats.skipped) == want["skipped"]
    text = json.dumps(out)
    for secret in want.get("absent", []):
        assert secret not in text


@pytest.mark.parametrize("case", by_command("toolcalls"))
def test_toolcalls_case(case):
    want = truth(case)["expect"]
    s = check_bundle(CAPTURES / case / "bundle")
    got = {k: getattr(s, k) for k in ("exchanges", "checked", "failed_model_parser", "failed_gateway",
                                      "failed_unattributed", "kinds")}
    assert got == {k: want[k] for k in got}
    assert s.passed == (s.checked > 0 and not want["kinds"])
    text = json.dumps(s.to_json())
    for secret in want.get("absent", []):
        assert secret not in text


def test_every_cause_section_and_control_has_a_case():
    divs = [d for c in by_command("prefix") for d in truth(c)["expect"]["divergences"]]
    assert {d["cause"] for d in divs} == set(CAUSES)
    assert {d["section"] for d in divs} == set(SECTIONS)
    assert {"system", "tools"} <= {d["section"] for d in divs if d["cause"] == "text"}   # negative controls
    assert any(not truth(c)["expect"]["divergences"] for c in by_command("prefix"))     # a clean group


def test_every_tool_call_kind_has_a_case():
    kinds = {k for c in by_command("toolcalls") for k in truth(c)["expect"]["kinds"]}
    assert kinds >= {f"{cls}.{kind}" for kind, cls in KINDS.items()}
    assert any(k.startswith("unattributed.") for k in kinds)
    assert any(not truth(c)["expect"]["kinds"] for c in by_command("toolcalls"))       # all pass
