"""Where `analyze` writes: stdout unchanged, `-o FILE` as before, `-o DIR` (existing, or ending in '/') as
report.md + timeline.svg (the picture referenced from the markdown), report.json or report.html; a bad
`-o` fails with one line and exit 2 before anything is read or written; nothing lands outside the path."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import make_bundle
from k3logs.cli import cli
from test_cli import one_error_line
from test_report import INCIDENT, check_contract


def invoke(*args, **kw):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, **kw)


def tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return make_bundle(tmp_path_factory.mktemp("out"), INCIDENT)


@pytest.fixture(scope="module")
def stdout_md(bundle):
    r = invoke("analyze", bundle)
    assert r.exit_code == 1
    return r.stdout


@pytest.mark.parametrize("form", ["trailing-slash", "existing-folder"])
def test_a_folder_gets_the_markdown_and_its_picture(bundle, stdout_md, tmp_path, form):
    out = tmp_path / "incident"
    if form == "existing-folder":
        out.mkdir()
    arg = f"{out}/" if form == "trailing-slash" else str(out)
    before = tree(tmp_path)
    r = invoke("analyze", bundle, "-o", arg)
    assert r.exit_code == 1, r.stderr
    assert r.stdout == ""
    created = {"incident/report.md", "incident/timeline.svg"} | ({"incident"} if form == "trailing-slash" else set())
    assert tree(tmp_path) - before == created
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "](timeline.svg)" in md
    # the same report as on stdout, plus the picture
    assert [ln for ln in md.splitlines() if "](timeline.svg)" not in ln and ln] == \
        [ln for ln in stdout_md.splitlines() if ln]
    root = ET.fromstring((out / "timeline.svg").read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"


def test_a_file_path_gets_the_report_alone_as_before(bundle, stdout_md, tmp_path):
    out = tmp_path / "report.md"
    r = invoke("analyze", bundle, "-o", out)
    assert r.exit_code == 1 and r.stdout == "" and r.stderr == ""
    assert out.read_text(encoding="utf-8") == stdout_md
    assert tree(tmp_path) == {"report.md"}


@pytest.mark.parametrize("fmt", ["json", "html"])
def test_other_formats_in_a_folder(bundle, tmp_path, fmt):
    r = invoke("analyze", bundle, "--format", fmt, "-o", f"{tmp_path}/r/")
    assert r.exit_code == 1, r.stderr
    assert tree(tmp_path) == {"r", f"r/report.{fmt}"}


def test_html_to_a_file_and_to_stdout_are_the_same(bundle, tmp_path):
    out = tmp_path / "report.html"
    r = invoke("analyze", bundle, "--format", "html", "-o", out)
    assert r.exit_code == 1 and r.stdout == ""
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg " in page and "<details" in page
    assert invoke("analyze", bundle, "--format", "html").stdout == page


def test_json_can_carry_the_context_of_cited_lines(bundle):
    plain = json.loads(invoke("analyze", bundle, "--format", "json").stdout)
    assert plain["evidence_context"] == []
    d = json.loads(invoke("analyze", bundle, "--format", "json", "--context-lines", "1").stdout)
    check_contract(d)
    ex = {(e["file"], e["line"]): e for e in d["evidence_context"]}
    e = ex[(d["first_causal"]["file"], d["first_causal"]["line"])]
    assert e["first"] <= e["line"] < e["first"] + len(e["lines"]) and e["lines"][e["line"] - e["first"]] \
        .endswith(d["first_causal"]["text"])
    assert all(len(e["lines"]) <= 3 for e in d["evidence_context"])


@pytest.mark.parametrize("make, arg, says", [
    (lambda t: None, "missing/deeper/", "the folder"),
    (lambda t: (t / "afile").write_text("x"), "afile/", "not a folder"),
    (lambda t: None, "missing/report.html", "does not exist"),
])
def test_a_bad_output_path_fails_before_reading_with_one_line(bundle, tmp_path, make, arg, says):
    make(tmp_path)
    before = tree(tmp_path)
    r = invoke("analyze", bundle, "--format", "html", "-o", f"{tmp_path}/{arg}")
    assert r.exit_code == 2
    assert says in one_error_line(r)
    assert tree(tmp_path) == before


def test_context_lines_are_bounded(bundle):
    r = invoke("analyze", bundle, "--context-lines", "500")
    assert r.exit_code == 2 and "context-lines" in r.stderr


@pytest.mark.parametrize("where", ["report.md", "node-a/report.md", "incident/"])
def test_an_output_inside_the_bundle_is_refused(tmp_path, where):
    bundle = make_bundle(tmp_path, INCIDENT)
    before = tree(bundle)
    r = invoke("analyze", bundle, "-o", f"{bundle}/{where}")
    assert r.exit_code == 2 and "inside the bundle" in one_error_line(r)
    assert tree(bundle) == before


def test_an_output_that_is_the_bundle_itself_is_refused(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text(INCIDENT[next(iter(INCIDENT))])
    before = log.read_bytes()
    r = invoke("analyze", log, "-o", log)
    assert r.exit_code == 2 and "inside the bundle" in one_error_line(r)
    assert log.read_bytes() == before


def test_an_output_through_a_symbolic_link_is_refused(bundle, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "link.md").symlink_to(victim)
    r = invoke("analyze", bundle, "-o", tmp_path / "link.md")
    assert r.exit_code == 2 and "symbolic link" in one_error_line(r)
    folder = tmp_path / "incident"
    folder.mkdir()
    (folder / "report.md").symlink_to(victim)  # a link waiting where the folder's report goes
    r = invoke("analyze", bundle, "-o", f"{folder}/")
    assert r.exit_code == 2 and "cannot write to" in one_error_line(r)
    assert victim.read_text() == "keep me"
