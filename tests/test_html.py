"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched), with every
section of the markdown report, the lines around each cited line read back from the bundle (expandable,
no JavaScript), environment checks coloured by status, bundle strings escaped and secrets redacted."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from conftest import make_bundle, text_of
from k3logs.api import analyze
from k3logs.report.render import render_html, render_markdown
from test_redact import SECRET_LOG, SECRETS
from test_report import INCIDENT

XHTML = "{http://www.w3.org/2000/svg}"
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source", "track", "embed"}


class Balance(HTMLParser):
    """Every element opened is closed, in order (what a browser would otherwise silently repair)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []
        self.css: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "style":
            self.css.append(data)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def check_html(html: str) -> ET.Element:
    """Well-formed HTML (balanced) that is also well-formed XML, self-contained and script-free."""
    assert html.startswith("<!DOCTYPE html>\n<html lang=\"en\">")
    p = Balance()
    p.feed(html)
    p.close()
    assert not p.errors and not p.stack, (p.errors, p.stack)
    assert not {"script", "link", "iframe", "img", "object", "embed"} & set(p.tags)
    # nothing fetched: no attribute that loads something, no url() or @import in any style
    assert not [(k, v) for k, v in p.attrs if k in ("src", "href", "srcset", "data", "xlink:href")
                or k.startswith("on") or "url(" in v]
    assert p.css and not re.search(r"url\(|@import", "".join(p.css))
    return ET.fromstring(html.encode("utf-8"))


@pytest.fixture(scope="module")
def incident(tmp_path_factory):
    root = make_bundle(tmp_path_factory.mktemp("html"), INCIDENT)
    report = analyze(root, context_lines=3)
    return report, render_html(report)


def text(el: ET.Element) -> str:
    return "".join(el.itertext())


def test_it_is_one_self_contained_page_with_the_picture_inline(incident):
    _, html = incident
    root = check_html(html)
    svgs = root.findall(f".//{XHTML}svg")
    assert len(svgs) == 1
    assert len(svgs[0].findall(f".//{XHTML}g[@class='lane']")) == 2 + 2   # two nodes, one rank each
    assert "<style>" in html and "<?xml" not in html


def test_it_has_every_section_of_the_markdown_report(incident):
    report, html = incident
    root = check_html(html)
    md = render_markdown(report)
    headings = [h.lstrip("#").strip() for h in re.findall(r"^#{2,3} .+$", md, re.M)]
    html_headings = [text(h) for h in root.iter() if h.tag in ("h2", "h3")]
    assert headings and all(h in html_headings for h in headings), (headings, html_headings)
    # and what the sections say: verdict, cited lines, remediation steps, checks
    body = text(root)
    assert "Verdict: " + report.root_cause.title in body
    for step in report.root_cause.remediation:
        assert step in body
    for c in report.environment.checks:
        assert c.id in body


def test_cited_lines_open_onto_their_context_from_the_bundle(incident):
    report, html = incident
    root = check_html(html)
    details = root.findall(".//details")
    assert details
    lines = INCIDENT["node-b/vllm.log"].splitlines()
    cited = next(d for d in details if text(d.find("summary")) == "node-b/vllm.log:2")
    shown = text(cited.find("pre"))
    assert lines[0] in shown and lines[1] in shown   # the line before it, and itself
    hit = [s for s in cited.find("pre").iter("span") if s.get("class") == "hit"]
    assert len(hit) == 1 and lines[1] in text(hit[0]) and re.match(r"\s+2\s", text(hit[0]))
    cause = f"{report.first_causal.file}:{report.first_causal.line}"
    first = next(d for d in details if text(d.find("summary")) == cause)
    assert report.first_causal.text in text(first)


def test_no_context_when_asked_for_none(tmp_path):
    report = analyze(make_bundle(tmp_path, INCIDENT), context_lines=0)
    root = check_html(render_html(report))
    assert report.evidence_context == [] and root.findall(".//details") == []
    assert "node-b/vllm.log:2" in text(root)   # still cited, just not expandable


def test_checks_are_coloured_by_status(incident):
    report, html = incident
    root = check_html(html)
    rows = [tr for tr in root.iter("tr") if tr.get("class") in ("pass", "fail", "unknown")]
    assert len(rows) == len(report.environment.checks)
    assert [tr.get("class") for tr in rows] == [c.status for c in report.environment.checks]
    css = html.split("<style>", 1)[1].split("</style>", 1)[0]
    colours = {s: re.search(rf"tr\.{s} td\.status[^{{]*\{{ color: (#[0-9a-f]{{6}})", css).group(1)
               for s in ("pass", "fail", "unknown")}
    assert len(set(colours.values())) == 3


def test_bundle_text_is_escaped_in_the_report_and_the_context(tmp_path):
    files = dict(INCIDENT)
    files["node-b/vllm.log"] = text_of(
        "(Worker_TP1 pid=202) INFO 08-11 10:00:00 [parallel_state.py:1] rank 1 in world size 2 is assigned as DP "
        "rank 0, PP rank 0, TP rank 1, EP rank 1",
        "<script>alert('x')</script><img src=x onerror=alert(1)> \x1b[31m&amp; \x07",
        "(Worker_TP1 pid=202) ERROR 08-11 10:00:09 [core.py:708] RuntimeError: CUDA error: an illegal memory access "
        "was encountered <b>bold</b>")
    html = render_html(analyze(make_bundle(tmp_path, files), context_lines=3))
    root = check_html(html)
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    shown = "".join(text(d) for d in root.findall(".//details"))
    assert "<script>alert('x')</script>" in shown          # shown as text, as it is in the bundle
    assert "&amp;" in shown and "\x07" not in shown


def test_secrets_never_reach_the_html_not_even_in_context(tmp_path):
    make_bundle(tmp_path, {"vllm.log": SECRET_LOG})
    html = render_html(analyze(tmp_path / "bundle", context_lines=5))
    root = check_html(html)
    assert root.findall(".//details")
    assert not any(s in html for s in SECRETS)
    assert "[redacted]" in "".join(text(d) for d in root.findall(".//details"))


def test_key_material_next_to_a_cited_line_is_not_shown(tmp_path):
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
    log = SECRET_LOG + "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n"
    make_bundle(tmp_path, {"vllm.log": log})
    html = render_html(analyze(tmp_path / "bundle", context_lines=5))
    shown = "".join(text(d) for d in check_html(html).findall(".//details"))
    assert "[redacted: key material]" in shown
    assert body not in html and "BEGIN PRIVATE KEY" not in html
