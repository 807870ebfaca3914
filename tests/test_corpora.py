"""The corpus: one test per corpora/*/truth.json comparing the report with the truth (category, first causal
file and line, origin, phase, alternatives included; healthy cases have no cause), one test per attribution
spot check of the event table (node, rank, time), every cause signature exercised by a case
(tools/coverage.py, checked at the run's end: tests/conftest.py), and the sample of real-world bundles in ../shared/realworld scored at 100%."""
from __future__ import annotations

import codecs
import json
import shutil
import tarfile
import tomllib
from datetime import datetime, timedelta
from functools import lru_cache

import polars as pl
import pytest

from conftest import TESTS_DIR, record_fired
from metamorphic import bed
from k3logs import api
from k3logs.api import evaluate_corpus
from k3logs.catalogue.witnesses import builtin_witnesses
from k3logs.evaluate.score import listed, score, truth_lines
from k3logs.pipeline import run, stream_events
from k3logs.settings import Settings

REPO = TESTS_DIR.parent
CORPORA = REPO / "corpora"
REALWORLD = REPO.parent / "shared" / "realworld"
CASES = sorted(p.parent.name for p in CORPORA.glob("*/truth.json"))
# what k3logs gets wrong today, by case: strict xfails, so that a fix shows (corpora/known_failures.toml)
KNOWN = tomllib.loads((CORPORA / "known_failures.toml").read_text(encoding="utf-8"))


def known(case: str, what: str, reason: str | None = None) -> list:
    """The xfail mark of a case's known failure of kind `what` (verdict, events), if it has one."""
    why = reason or KNOWN.get(case, {}).get(what)
    return [pytest.mark.xfail(strict=True, reason=why)] if why else []


def cases_but(what: str) -> list:
    return [pytest.param(c, marks=known(c, what)) for c in CASES]
CAT = bed.catalogue()   # (collecting its errors: test_catalogue reports them)


def truth_of(case: str) -> dict:
    return json.loads((CORPORA / case / "truth.json").read_text(encoding="utf-8"))


# one analysis and one report per case and process, shared with the metamorphic bed
analysis_of = bed.analysis
report_of = bed.original   # what `k3logs analyze` reports, before redaction


@lru_cache(maxsize=None)
def events_of(case: str) -> pl.DataFrame:
    """The event table `k3logs events` writes (every line, attributed and aligned)."""
    return pl.concat(list(stream_events(CORPORA / case / "bundle", catalogue=CAT, first=analysis_of(case))),
                     how="vertical_relaxed")


# ------------------------------------------------------------------------------------------
# verdicts
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", cases_but("verdict"))
def test_case_verdict_matches_the_truth(case):
    truth, r = truth_of(case), report_of(case)
    record_fired(case, analysis_of(case).detections["sig"])   # (the run checks that every cause signature fired)
    # `k3logs eval corpora` scores it as passed too (its tables and exit statuses: test_cli, on small corpora)
    s = score(case, truth, r)
    assert s.passed, s.error or {c: (s.got.get(c), s.want.get(c)) for c, ok in s.ok.items() if not ok}
    cats = [truth["root_cause"], *listed(truth.get("root_cause_alt"))]   # (alone or as a list, as eval reads it)
    assert r.root_cause.category in cats, f"category {r.root_cause.category}, want one of {cats}"
    outcomes = [truth["outcome"], *listed(truth.get("outcome_alt"))]
    assert r.outcome.state in outcomes, f"outcome {r.outcome.state}, want one of {outcomes}"
    said = " ".join(r.evidence_missing).lower()
    assert all(m.lower() in said for m in truth.get("evidence_missing", [])), \
        f"evidence_missing {r.evidence_missing} does not name {truth['evidence_missing']}"
    if truth.get("healthy"):
        assert r.healthy and r.first_causal is None and r.root_cause.signature is None, \
            f"a healthy bundle got a cause: {r.root_cause.category} at {r.first_causal}"
        assert r.exit_status == 0
        return
    # (an inconclusive bundle: no incident shown and none ruled out, exit status 3)
    assert not r.healthy and r.exit_status == (3 if truth.get("outcome") == "inconclusive" else 1)
    fc = truth["first_causal"]
    got = (r.first_causal.file, r.first_causal.line) if r.first_causal else None
    assert got in (truth_lines(fc) if fc else [None]), f"first causal {got}, want {truth_lines(fc) if fc else None}"
    origin = truth.get("origin") or {}
    if origin.get("node") is not None:
        assert r.origin.node == origin["node"]
    if origin.get("rank") is not None:
        assert r.origin.rank == origin["rank"]
    phases = [truth.get("phase"), *listed(truth.get("phase_alt"))]
    assert r.phase in phases, f"phase {r.phase}, want one of {phases}"


# ------------------------------------------------------------------------------------------
# attribution spot checks
# ------------------------------------------------------------------------------------------
# spot checks that state a bug not fixed yet: (case, file, line) -> what is wrong (an xfail, strict: a fix shows)
KNOWN_BUGS: dict[tuple[str, str, int], str] = {
    (case, ref.rsplit(":", 1)[0], int(ref.rsplit(":", 1)[1])): "attribution of this line is wrong (known_failures.toml)"
    for case, e in KNOWN.items() for ref in e.get("attribution", [])}


def spot_checks() -> list:
    out = []
    for case in CASES:
        for i, sc in enumerate(truth_of(case).get("attribution", []) or []):
            key = (case, sc["file"], sc["line"])
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[key])] if key in KNOWN_BUGS else []
            parts = sc["file"].split("/")
            short = parts[0] if len(parts) == 1 else f"{parts[0]}/{parts[-1]}"
            out.append(pytest.param(case, i, id=f"{case}:{short}:{sc['line']}", marks=marks))
    return out


def event_holding(ev: pl.DataFrame, file: str, line: int) -> dict | None:
    """The event that states `line` (it starts there, or one of its exceptions does), else the narrowest
    event whose [line, line_end] holds it (a folded traceback, a continued record); None if no event does."""
    hit = ev.filter((pl.col("file") == file) & (
        ((pl.col("line") <= line) & (pl.col("line_end") >= line))
        | pl.col("exc_lines").list.contains(line).fill_null(False)))
    if not hit.height:
        return None
    hit = hit.with_columns(
        (pl.col("line") != line).alias("_not_start"),
        ~pl.col("exc_lines").list.contains(line).fill_null(False).alias("_not_exc"),
        (pl.col("line_end") - pl.col("line")).alias("_width"))
    return hit.sort("_not_start", "_not_exc", "_width", "line").row(0, named=True)


def event_of_line(case: str, file: str, line: int) -> dict:
    """The analysis's event holding `line` (what the report is made of), else the event table's (every line).
    (The table is a second pass over the bundle, a minute of the suite's ten over every case with spot checks:
    the test below checks on a sample that both attribute the lines they hold alike.)"""
    ev = event_holding(analysis_of(case).events, file, line)
    if ev is None:
        ev = event_holding(events_of(case), file, line)
    assert ev is not None, f"no event holds {file}:{line}"
    return ev


def norm(text: str) -> str:
    return " ".join(text.split())


def as_printed(case: str, ev: dict) -> str:
    """The event's time on its own node's clock, to the second: the truth gives times as printed on each node,
    the event table has them aligned (the node's applied offset subtracted)."""
    node = next((n for n in report_of(case).nodes if n.node == ev["node"]), None)
    offset = node.clock_offset_s if node is not None and node.clock_offset_applied else 0.0
    ts: datetime = ev["ts"] + timedelta(seconds=offset or 0.0, microseconds=500)  # float-safe truncation
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("case, i", spot_checks())
def test_attribution_spot_check(case, i):
    sc = truth_of(case)["attribution"][i]
    ev = event_of_line(case, sc["file"], sc["line"])
    if sc.get("contains") and ev["line"] == sc["line"]:   # the event found is the line the truth means
        want = norm(sc["contains"])
        said = ev["message"] if "message" in ev else ev["text"]   # (the table's name for the analysis's text)
        texts = [norm(t) for t in [said, *(ev["exc_messages"] or [])] if t and t.strip()]
        # the truth quotes the printed line, prefixes included: its end must be in the message
        assert any(want[-25:] in t or t in want for t in texts), \
            f"{sc['file']}:{sc['line']} is {texts[:1]}, not {want!r}"
    got = {"node": ev["node"], "rank": ev["rank"]}
    want = {"node": sc.get("node"), "rank": sc.get("rank")}
    for k in ("node", "rank"):
        if sc.get(k) is not None:   # null: the bundle cannot tell, any answer is accepted
            assert got[k] == want[k], f"{k}: got {got[k]!r}, want {want[k]!r} at {sc['file']}:{sc['line']}"
    if sc.get("ts") is not None:   # null: the bundle cannot tell, any answer is accepted
        assert ev["ts_quality"] != "none", f"no time at {sc['file']}:{sc['line']}, want {sc['ts']}"
        assert ev["ts"] is not None and as_printed(case, ev) == sc["ts"]


def spread(items: list, n: int) -> list:
    """`n` of `items`, evenly spaced from the first (all of them if there are no more): a sample whose cost stays
    the same as the corpus grows."""
    return list(items) if len(items) <= n else [items[i * len(items) // n] for i in range(n)]


# (a sample of the cases, and each known difference: a second pass over every line of every case cost the suite a
# minute and a half of its ten)
EVENT_TABLE_CASES = {p.values[0] for p in spread(cases_but("events"), 100)}


@pytest.mark.parametrize("case", [p for p in cases_but("events")
                                  if p.values[0] in EVENT_TABLE_CASES or KNOWN.get(p.values[0], {}).get("events")])
def test_the_event_table_attributes_and_times_each_line_as_the_analysis_does(case):
    # `events` learns from analyze's lines, then applies what it learnt batch by batch (a batch is one file,
    # mostly one node and pid): the lines both hold must agree. (A traceback the analysis holds from its
    # 'Traceback' line may start a line earlier in the table, at a 'Process ...:' header: inner join.)
    key, cols = ["file", "line", "sub"], ["node", "rank", "gpu", "ts", "ts_quality"]
    mine = analysis_of(case).events.select(*key, *cols)
    both = mine.join(events_of(case).select(*key, *cols), on=key, how="inner", suffix="_events")
    assert both.height >= 0.9 * mine.height, f"{mine.height - both.height} of {mine.height} lines not in the table"
    for col in cols:
        differ = both.filter(pl.col(col).ne_missing(pl.col(f"{col}_events")))
        assert differ.is_empty(), f"{col} differs:\n{differ.head(5)}"


# (cases whose top folders are nodes' folders: two or more, none a layout's or a collection's, such as `docker/` and
# `host/` beside each other, which the transform below would ship as if they were two nodes)
MULTI_NODE_FOLDER_CASES = [c for c in CASES if len(tops := [p for p in (CORPORA / c / "bundle").iterdir() if p.is_dir()])
                           >= 2 and not any(builtin_witnesses().is_generic_folder(p.name) for p in tops)]


# (the shipping transforms below run on a sample of the cases, to keep the suite within its time)
@pytest.mark.parametrize("case", spread(MULTI_NODE_FOLDER_CASES, 30))
def test_a_ticket_folder_of_per_node_archives_reports_the_same(case, tmp_path):
    # as operators ship it: each node's folder archived on its node (node-a.tar.gz holding node-a/...), the
    # archives and the shared files in a ticket's folder beside a note. Only the paths change
    ticket = tmp_path / "incident-42"
    shutil.copytree(CORPORA / case / "bundle", ticket)
    for node_dir in [p for p in ticket.iterdir() if p.is_dir()]:
        with tarfile.open(ticket / f"{node_dir.name}.tar.gz", "w:gz") as tar:
            tar.add(node_dir, arcname=node_dir.name)
        shutil.rmtree(node_dir)
    (tmp_path / "ticket.txt").write_text("support bundle attached to ticket 42\n", encoding="utf-8")
    want, got = report_of(case), api.report_of(run(tmp_path, catalogue=CAT), str(tmp_path), Settings(redact=False))

    def shipped(path: str) -> str:
        top = path.split("/", 1)[0]
        in_folder = (CORPORA / case / "bundle" / top).is_dir()
        return f"incident-42/{top}.tar.gz/{path}" if in_folder else f"incident-42/{path}"

    assert got.root_cause.category == want.root_cause.category
    assert (got.first_causal and (got.first_causal.file, got.first_causal.line)) == \
        (want.first_causal and (shipped(want.first_causal.file), want.first_causal.line))
    assert (got.origin.node, got.origin.rank, got.phase) == (want.origin.node, want.origin.rank, want.phase)
    assert {n.node for n in got.nodes} == {n.node for n in want.nodes}


WINDOWS_CASES = spread(CASES, 32)


@pytest.mark.parametrize("case", WINDOWS_CASES)
def test_a_bundle_copied_through_windows_reports_the_same(case, tmp_path):
    # every text file with CRLF line ends (vLLM's own CR LF becomes CR CR LF); every other case of the sample also
    # in UTF-16, as PowerShell's `>` writes it
    utf16 = WINDOWS_CASES.index(case) % 2 == 1
    for f in (CORPORA / case / "bundle").rglob("*"):
        if f.is_file():
            copy = tmp_path / f.relative_to(CORPORA / case / "bundle")
            copy.parent.mkdir(parents=True, exist_ok=True)
            data = f.read_bytes()
            if not f.name.endswith((".gz", ".zst", ".tgz", ".zip", ".tar")):  # (archives are copied as they are)
                data = data.replace(b"\n", b"\r\n")
                data = codecs.BOM_UTF16_LE + data.decode("utf-8").encode("utf-16-le") if utf16 else data
            copy.write_bytes(data)
    want, got = report_of(case), api.report_of(run(tmp_path, catalogue=CAT), str(tmp_path), Settings(redact=False))
    key = lambda r: (r.root_cause.category, r.first_causal and (r.first_causal.file, r.first_causal.line),  # noqa: E731
                     r.origin.node, r.origin.rank, r.phase, [(t.file, t.line, t.category) for t in r.timeline])
    assert key(got) == key(want)
    assert got.environment == want.environment


# ------------------------------------------------------------------------------------------
# coverage and the real-world sample
# ------------------------------------------------------------------------------------------
@pytest.mark.skipif(not REALWORLD.is_dir(), reason="../shared/realworld is not present")
def test_realworld_sample_scores_100_percent():
    scores = evaluate_corpus(REALWORLD, catalogue=CAT)
    assert scores, "no truth.json under ../shared/realworld"
    bad = {s.case: s.error or {c: (s.got[c], s.want[c]) for c, ok in s.ok.items() if not ok}
           for s in scores if not s.passed}
    assert bad == {}
