"""The HTML report in a real browser: headless Chromium (Debian's `chromium`, which .ci/run installs) opens
the report of a multi-node corpus case with a fresh profile; the page must log nothing to the console,
its DOM must hold the picture and the expandable evidence, and its screenshot must show the picture (not
a blank page). A page with a deliberate script error proves that console errors are caught at all.
Skipped only where chromium is missing outside CI; in CI (CI=true) a missing chromium fails."""
from __future__ import annotations

import html
import importlib.util
import json
import os
import re

import pytest
from click.testing import CliRunner

from conftest import TESTS_DIR
from k3logs.cli import cli

REPO = TESTS_DIR.parent
CASE = REPO / "corpora" / "c208-xid79-torchrun-misleading-rootcause"
spec = importlib.util.spec_from_file_location("k3logs_screenshot_tool", REPO / "tools" / "screenshot.py")
shot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shot)

if shot.find_chromium() is None:
    if os.environ.get("CI"):
        raise RuntimeError("chromium is missing in CI: .ci/run must install it (apt-get install chromium)")
    pytest.skip("chromium is not installed here (apt-get install chromium); CI installs it", allow_module_level=True)

CAUSE_RED = (0xd6, 0x27, 0x28)  # timeline.CAUSE_COLOUR: only the first cause is drawn in it


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser") / "report.html"
    r = CliRunner().invoke(cli, ["analyze", str(CASE / "bundle"), "--format", "html", "-o", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 1, r.stderr
    return out


def test_console_errors_are_seen_at_all(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction()</script></body></html>")
    done = shot.run(bad.as_uri(), "--dump-dom")
    assert any("undefinedFunction" in m for m in shot.console_messages(done.stderr)), done.stderr[-3000:]


def test_the_report_loads_without_console_errors_and_builds_its_dom(page):
    done = shot.run(page.as_uri(), "--dump-dom")
    assert shot.console_messages(done.stderr) == []
    dom = done.stdout
    assert dom.count('class="lane"') == 2 + 16                 # the picture, parsed by the browser
    assert dom.count('data-kind="cause"') == 1
    assert re.search(r"<details class=\"evidence\">", dom)    # evidence that expands without script
    assert dom.rstrip().endswith("</html>")


def test_the_screenshot_shows_the_report_and_its_picture(page, tmp_path):
    png = tmp_path / "report.png"
    done = shot.screenshot(page, png, 1200, 1000)
    assert shot.console_messages(done.stderr) == []
    w, h, _, _ = shot.read_png(png)
    assert (w, h) == (1200, 1000)
    colours = shot.pixels(png)
    background = max(colours.values())
    assert len(colours) > 50, "a blank or flat screenshot"
    assert w * h - background > 0.05 * w * h, "almost everything is one colour"
    assert colours.get(CAUSE_RED, 0) > 50, "the first cause (drawn in the picture) is not on screen"


# measured by the browser's own layout: the cause's mark is what a click at its centre hits (nothing drawn
# over it), its label lies inside the picture and overlaps no other text nor any mark, and no two labels of
# the picture overlap (the legend and the notes included)
GEOMETRY = """<script>
(function () {
  const svg = document.querySelector('svg.k3-timeline');
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const meet = (a, b) => a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5;
  const mark = svg.querySelector('g.mark[data-kind="cause"]');
  const label = svg.querySelector('g.cause-line text');
  mark.scrollIntoView({block: 'center'});
  const m = box(mark), l = box(label), s = box(svg);
  const hit = document.elementFromPoint((m[0] + m[2]) / 2, (m[1] + m[3]) / 2);
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
  const pairs = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach(b => {
    if (meet(box(a), box(b))) pairs.push([a.textContent, b.textContent]);
  }));
  document.body.setAttribute('data-geometry', JSON.stringify({
    mark_on_top: mark.contains(hit), mark_size: [m[2] - m[0], m[3] - m[1]],
    label: label.textContent, label_inside: l[0] >= s[0] && l[2] <= s[2] && l[1] >= s[1] && l[3] <= s[3],
    label_over_marks: [...svg.querySelectorAll('g.mark')].filter(g => meet(box(g), l)).length,
    overlapping_texts: pairs}));
})();
</script>"""


def geometry(page, tmp_path) -> dict:
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", GEOMETRY + "</body>"), encoding="utf-8")
    done = shot.run(probe.as_uri(), "--dump-dom", "--window-size=1200,900")
    assert shot.console_messages(done.stderr) == []
    found = re.search(r'data-geometry="([^"]*)"', done.stdout)
    assert found, done.stdout[-2000:]
    return json.loads(html.unescape(found.group(1)))


def test_the_cause_mark_and_its_label_are_visible_and_overlap_nothing(page, tmp_path):
    g = geometry(page, tmp_path)
    assert g["mark_on_top"], "something is drawn over the first cause's mark"
    assert min(g["mark_size"]) >= 14, g["mark_size"]               # the larger diamond, 16 px
    assert g["label"].startswith("first cause") and g["label_inside"]
    assert g["label_over_marks"] == 0 and g["overlapping_texts"] == [], g


def test_near_miss_the_probe_sees_an_overlap_when_there_is_one(page, tmp_path):
    """A label drawn over the cause's label, and a mark over the cause's mark, are both caught."""
    broken = tmp_path / "broken.html"
    text = page.read_text(encoding="utf-8")
    cause = re.search(r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="(start|end)"[^>]*>first cause', text)
    mark = re.search(r'<g class="mark" data-kind="cause"[^>]*transform="translate\(([\d.]+),([\d.]+)\)"', text)
    extra = (f'<text x="{cause.group(1)}" y="{cause.group(2)}" text-anchor="{cause.group(3)}" font-size="11">'
             f'overlapping label</text>'
             f'<circle cx="{mark.group(1)}" cy="{mark.group(2)}" r="12" fill="#000000"/></svg>')
    broken.write_text(text.replace("</svg>", extra, 1), encoding="utf-8")
    g = geometry(broken, tmp_path)
    assert not g["mark_on_top"] and g["overlapping_texts"], g
