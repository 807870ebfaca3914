"""The capture corpus (corpora/captures/*/expected.json, hand-written truths; the bundles are made by
corpora/captures/make_bundles.py): `k3logs prefix` and `k3logs toolcalls` give exactly the expected
divergences and counts, and together the cases cover every divergence cause, every section, a negative
control, a clean group, and every tool-call failure kind. These cases are captures, not incidents: they
live outside `k3logs eval corpora` (which looks one level down for truth.json) and tools/coverage.py."""
from __future__ import annotations

import json

import pytest

from conftest import TESTS_DIR
from k3logs.captures.prefix import CAUSES, SECTIONS, check_requests
from k3logs.captures.toolcalls import KINDS, check_bundle

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


# ------------------------------------------------------------------------------------------------------
# any JSON in the places a capture holds it: no crash, every record accounted for
# ------------------------------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
                    max_leaves=12)
FIELD = st.sampled_from(["role", "content", "tool_calls", "function", "name", "arguments", "id", "type",
                         "tool_call_id", "parameters", "choices", "message"])
LOOSE = st.recursive(JSON, lambda kids: st.dictionaries(FIELD, kids, max_size=5) | st.lists(kids, max_size=3),
                     max_leaves=20)
MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool", 3])},
                                optional={"content": LOOSE, "tool_calls": LOOSE, "tool_call_id": LOOSE, "name": LOOSE})
REQUEST = st.fixed_dictionaries({"model": st.sampled_from(["m", "n", 7]), "messages": st.lists(MESSAGE, max_size=4)},
                                optional={"tools": LOOSE, "prompt": LOOSE})
RESPONSE = st.fixed_dictionaries({"choices": st.lists(st.fixed_dictionaries({"message": LOOSE}), max_size=2)}) | LOOSE
RECORD = st.fixed_dictionaries({"id": st.sampled_from(["a", "b", 1])},
                               optional={"request": REQUEST | LOOSE, "response": RESPONSE, "forwarded": RESPONSE})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(RECORD | REQUEST, min_size=1, max_size=6))
def test_any_capture_records_are_read_without_a_crash(tmp_path_factory, records):
    p = tmp_path_factory.mktemp("fuzz") / "c.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = check_requests(p)
    assert r.requests <= len(records)
    assert all(d.cause in ("timestamp", "request_id", "whitespace", "key_order", "tool_order", "text")
               for d in r.divergences)
    s = check_bundle(p)
    assert s.failed <= s.checked
