"""Secrets never reach an output: every rule proves itself on its samples, in Python and in polars, and
analyze / events / error messages are redacted unless --no-redact."""
from __future__ import annotations

import json
import re

import polars as pl
import pytest
from click.testing import CliRunner

from k3logs import redact
from k3logs.cli import cli

SECRET_LOG = (
    "INFO 08-11 07:35:59 [api_server.py:1] vLLM API server version 0.11.0\n"
    "INFO 08-11 07:35:59 [utils.py:2] non-default args: {'model': 'm', 'api_key': 'sk-abcdefghijklmnopqrstuvwxyz'}\n"
    "ERROR 08-11 07:36:00 [core.py:3] RuntimeError: boom with HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789\n"
)
SECRETS = ("sk-abcdefghijklmnopqrstuvwxyz", "hf_abcdefghijklmnopqrstuvwxyz0123456789")


@pytest.mark.parametrize("rule", redact.rules(), ids=lambda r: r.id)
def test_rule_samples(rule):
    if rule.between is not None:  # samples are texts of several lines: each comes out as one line
        for sample in rule.match + rule.no_match:
            out = redact.block(sample)
            assert ("[redacted]" in out) == (sample in rule.match) and out.count("\n") == sample.count("\n")
            key = re.compile(redact.excerpt_line().regex)  # (an excerpt also hides a key's BEGIN and END lines)
            assert redact.lines(sample.split("\n")) == [redact.excerpt_line().replace if key.match(raw) else line
                                                       for raw, line in zip(sample.split("\n"), out.split("\n"))]
            rows = redact.LineStream().series(pl.Series(sample.split("\n")), "f")  # as the event table does
            assert rows.to_list() == out.split("\n")
        return
    for line in rule.match:
        out = redact.text(line)
        assert "[redacted]" in out and out != line
        assert pl.select(redact.expr(pl.lit(line))).item() == out  # the Rust and Python engines agree
    for line in rule.no_match:
        assert redact.text(line) == line
        assert pl.select(redact.expr(pl.lit(line))).item() == line


def test_an_excerpt_line_that_is_only_key_material_is_hidden_and_its_near_misses_are_shown():
    rule = redact.excerpt_line()
    assert rule.match and rule.no_match
    for line in rule.match:
        assert redact.lines(["INFO starting", line]) == ["INFO starting", rule.replace]
        assert redact.text(line) != rule.replace  # only an excerpt's lines are tested so
    for line in rule.no_match:
        assert redact.lines([line]) == [redact.text(line)] != [rule.replace]


@pytest.mark.parametrize("rule", redact.rules(), ids=lambda r: r.id)
def test_every_text_a_rule_matches_holds_one_of_its_needles(rule):
    # series() only looks for secrets in the rows that hold a needle: a match without one would leak
    import re
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    assert rule.needles, "a rule without needles makes every row go through every rule"
    pattern = re.compile(rule.between[0] if rule.between else rule.regex)  # (what opens a block)

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.from_regex(pattern))
    def check(line):
        match = pattern.search(line)
        assert match and any(n in match.group(0).lower() for n in rule.needles), line
        assert len(redact.needle_rows(pl.Series([match.group(0)]))) == 1, line  # and the search finds it
    check()
    for line in rule.match:
        assert any(n in line.lower() for n in rule.needles), line


def test_needles_are_found_in_any_case_and_through_unicode_case_folding():
    # (?i) rules match the Kelvin sign for k and the long s for s: such a row must still reach the rules
    rows = ["api_KEY=abc", "plain", "\u212aey: v", "\u017fecret: v", "token", None]
    assert redact.needle_rows(pl.Series(rows)).to_list() == [0, 2, 3, 4]
    hidden = pl.Series(["password: hunter2", "\u017fecret: hunter2"])
    assert redact.series(hidden).to_list() == [redact.text(x) for x in hidden.to_list()]
    assert "hunter2" not in redact.series(hidden)[1]


NEEDLE_CHARS = "".join(sorted({c for r in redact.rules() for n in r.needles for c in n + n.upper()}))


@pytest.mark.parametrize("seed", range(3))
def test_the_needle_search_finds_the_rows_a_case_insensitive_search_finds(seed):
    # the needles are searched for in text with its ASCII letters lowered, plus the rows with a letter that
    # folds to ASCII: every row the rules' own case folding finds, and no other but those rows
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    letters = NEEDLE_CHARS + "\u212a\u017f\u0130\u0131\u00e9\u00df\u03a3 x=:"

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.one_of(st.none(), st.text(letters, max_size=24)), max_size=30))
    def check(rows):
        s = pl.Series("text", rows, pl.String)
        want = set(s.str.contains(redact._any_needle()).fill_null(False).arg_true().to_list())
        folding = {i for i, x in enumerate(rows) if x and any(c in x for c in redact.FOLDS_TO_ASCII)}
        got = set(redact.needle_rows(s).to_list())
        assert want <= got and got - want <= folding
    check()


def test_series_redacts_only_the_rows_with_a_secret_and_agrees_with_text():
    lines = [x for r in redact.rules() for x in (*r.match, *r.no_match)] + [None, "", "plain line"]
    got = redact.series(pl.Series("text", lines))
    assert got.name == "text" and got.len() == len(lines)
    assert got.to_list() == [None if x is None else redact.text(x) for x in lines]
    assert sum(a != b for a, b in zip(got.to_list(), lines)) == sum(len(r.match) for r in redact.rules())
    clean = pl.Series("text", ["a", None, "b"])
    assert redact.series(clean).to_list() == ["a", None, "b"]


def test_distinct_values_are_redacted_as_every_row_would_be():
    # file and node names: one value per batch (redacted once, in Python) or a few (once each)
    secret = "logs/run_HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789.log"
    for values in ([secret] * 5, ["node-a"] * 5, [secret, "node-a", secret, None], [None, None], []):
        s = pl.Series("file", values, pl.String)
        got = redact.distinct(s)
        assert got.name == "file" and got.to_list() == redact.series(s).to_list()
    assert "hf_abc" not in redact.distinct(pl.Series([secret] * 3))[2]


@pytest.fixture
def secret_bundle(tmp_path):
    d = tmp_path / "bundle"
    d.mkdir()
    (d / "vllm.log").write_text(SECRET_LOG)
    return d


def test_analyze_json_and_markdown_are_redacted(secret_bundle):
    for fmt in ("json", "md"):
        res = CliRunner().invoke(cli, ["analyze", str(secret_bundle), "--format", fmt], catch_exceptions=False)
        assert res.exit_code == 1
        assert not any(s in res.output for s in SECRETS)
        assert "[redacted]" in res.output or fmt == "md"


def test_no_redact_keeps_them(secret_bundle):
    res = CliRunner().invoke(cli, ["analyze", str(secret_bundle), "--format", "json", "--no-redact"],
                             catch_exceptions=False)
    assert SECRETS[1] in res.output


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_events_export_is_redacted(secret_bundle, tmp_path, fmt):
    out = tmp_path / f"events.{fmt}"
    res = CliRunner().invoke(cli, ["events", str(secret_bundle), "-o", str(out)], catch_exceptions=False)
    assert res.exit_code == 0
    data = pl.read_parquet(out).write_ndjson() if fmt == "parquet" else out.read_text()
    assert not any(s in data for s in SECRETS)
    assert "[redacted]" in data


def test_events_export_redacts_file_names_too(tmp_path):
    token = "hf_" + "Ab1" * 12
    d = tmp_path / "bundle"
    d.mkdir()
    (d / f"vllm-{token}.log").write_text("INFO 08-11 07:35:59 [core.py:1] started\n")
    out = tmp_path / "events.jsonl"
    res = CliRunner().invoke(cli, ["events", str(d), "-o", str(out)], catch_exceptions=False)
    assert res.exit_code == 0
    assert token not in out.read_text() and "vllm-[redacted].log" in out.read_text()


def test_report_object_is_redacted_everywhere(secret_bundle):
    from k3logs.api import analyze
    text = json.dumps(analyze(secret_bundle).to_dict())
    assert not any(s in text for s in SECRETS)
