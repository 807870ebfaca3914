"""Corpus cases (a sample spread over the corpus) render in every form: markdown with its picture, the SVG (well-formed XML, one
lane per rank of the report, the first cause on its origin's lane, one mark per symptom, kernel event and cause)
and the HTML report (well-formed, self-contained, every cited line's context that the bundle holds).
The analyses are the ones test_corpora.py already made (cached), so this costs only the rendering."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from k3logs.api import report_of
from k3logs.contract import schema
from k3logs.report.render import render_html, render_markdown, render_svg
from k3logs.report.timeline import origin_lane
from k3logs.settings import Settings
from test_corpora import CASES, CORPORA, analysis_of, spread
from test_html import check_html
from test_timeline import lane_at, lanes, marks

SVG = "{http://www.w3.org/2000/svg}"
REPORT_SCHEMA = jsonschema.Draft202012Validator(schema())


def _expand(spans: str) -> list[int]:
    out = []
    for part in spans.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


# (a sample whose cost stays the same as the corpus grows: every third case cost the suite 80 s of work at 1328)
@pytest.mark.parametrize("case", spread(CASES, 150))
def test_case_renders_markdown_svg_and_html(case):
    r = report_of(analysis_of(case), str(CORPORA / case / "bundle"), Settings(), context_lines=3)

    # the JSON report is what the shipped schema says (`k3logs schema`)
    REPORT_SCHEMA.validate(json.loads(r.to_json()))

    md = render_markdown(r, picture="timeline.svg")
    assert md.startswith("# k3logs report") and md.count("](timeline.svg)") == 1

    svg = render_svg(r)
    assert render_svg(r) == svg
    root = ET.fromstring(svg.encode("utf-8"))
    ls = lanes(root)
    ranks = {(n.node, str(k)) for n in r.nodes for k in n.ranks}
    drawn = {(ln["node"], ln["rank"]) for ln in ls if ln["kind"] == "rank"}
    # (ranks with nothing drawn share one lane of their node: '0-3,5')
    quiet = {(ln["node"], str(k)) for ln in ls if ln["kind"] == "quiet" for k in _expand(ln["rank"])}
    assert ranks <= drawn | quiet and len(drawn) == len([ln for ln in ls if ln["kind"] == "rank"])
    ms = marks(root)
    symptoms = [s for s in r.symptoms if s.source != "kernel"]
    assert len([m for m in ms if m["kind"] == "symptom"]) == len(symptoms)
    assert len([m for m in ms if m["kind"] == "kernel"]) == len(r.kernel_events)
    causes = [m for m in ms if m["kind"] == "cause"]
    if r.first_causal is None:
        assert not causes
    else:
        assert len(causes) == 1
        lane = lane_at(ls, causes[0]["y"])
        # (the lane of the origin's node: its short name where the report gives its fully qualified one)
        want = (origin_lane(r) or "", "" if r.origin.rank is None else str(r.origin.rank))
        assert (lane["node"], lane["rank"]) == want

    html = render_html(r)
    page = check_html(html)
    assert len(page.findall(f".//{SVG}svg")) == 1
    summaries = {"".join(d.find("summary").itertext()) for d in page.iter("details")}
    assert {f"{e.file}:{e.line}" for e in r.evidence_context} <= summaries
    if r.first_causal is not None:
        fc = f"{r.first_causal.file}:{r.first_causal.line}"
        bundle_file = CORPORA / case / "bundle" / r.first_causal.file
        if bundle_file.is_file() and not re.search(r"\.(gz|zst|bz2|xz)$", bundle_file.name):
            assert fc in summaries, "the first cause's line is in a plain file: its context must be shown"
