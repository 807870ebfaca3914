"""Results in the formats CI systems show where their users look: JUnit XML (test tabs of GitLab, Jenkins,
GitHub test reporters) and SARIF 2.1.0 (code scanning: a finding on its file and line). Used by `eval` (a test
case per corpus case) and `signatures check` (a finding per catalogue issue)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from k3logs import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass
class JUnitCase:
    name: str
    classname: str
    failure: str | None = None   # what is wrong (the case ran and disagrees)
    error: str | None = None     # the case could not run


@dataclass
class Finding:
    rule: str                    # e.g. eval/category, schema, regex
    level: str                   # error | warning | note
    message: str
    path: str | None = None      # relative to the working folder
    line: int | None = None


@dataclass
class Rule:
    id: str
    description: str


def junit(suite: str, cases: list[JUnitCase]) -> str:
    """One <testsuite> of `cases` as JUnit XML."""
    failures = sum(c.failure is not None and c.error is None for c in cases)
    errors = sum(c.error is not None for c in cases)
    counts = dict(tests=str(len(cases)), failures=str(failures), errors=str(errors), skipped="0")
    root = ET.Element("testsuites", name="k3logs", **counts)
    ts = ET.SubElement(root, "testsuite", name=suite, **counts)
    for c in cases:
        tc = ET.SubElement(ts, "testcase", name=c.name, classname=c.classname)
        if c.error is not None:
            ET.SubElement(tc, "error", message=_first_line(c.error)).text = c.error
        elif c.failure is not None:
            ET.SubElement(tc, "failure", message=_first_line(c.failure)).text = c.failure
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def sarif(tool: str, rules: list[Rule], findings: list[Finding]) -> str:
    """A SARIF 2.1.0 log of one run of `tool` (k3logs and the command) with `findings`."""
    results = []
    for f in findings:
        r = {"ruleId": f.rule, "level": f.level, "message": {"text": f.message}}
        if f.path:
            loc = {"artifactLocation": {"uri": Path(f.path).as_posix()}}
            if f.line:
                loc["region"] = {"startLine": int(f.line)}
            r["locations"] = [{"physicalLocation": loc}]
        results.append(r)
    run = {"tool": {"driver": {"name": tool, "version": __version__, "informationUri": "https://k3logs.invalid",
                               "rules": [{"id": r.id, "shortDescription": {"text": r.description}}
                                         for r in rules]}},
           "results": results}
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


def write(path: Path, text: str) -> None:
    Path(path).write_text(text, encoding="utf-8")


def relative(path: str | Path) -> str:
    """A path as CI shows it: relative to the working folder when it lies under it."""
    p = Path(path)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0][:500]


# ------------------------------------------------------------------------------------------------------
# the commands' results in these formats
# ------------------------------------------------------------------------------------------------------
def eval_junit(scores, corpus: Path) -> str:
    """`eval --junit`: a test case per corpus case, failing with the fields it gets wrong."""
    return junit(f"eval {corpus.name}", [
        JUnitCase(s.case, f"k3logs.eval.{corpus.name}", error=s.error or None,
                  failure="\n".join(_said(s, c) for c in _wrong(s)) or None) for s in scores])


def eval_sarif(scores, dirs: dict[str, Path], corpus: Path) -> str:
    """`eval --sarif`: a finding per wrong field (or case that could not run), on the case's truth.json."""
    def truth_of(case: str) -> str:
        return relative(dirs[case] / "truth.json") if case in dirs else relative(corpus)
    findings = [Finding("eval/error", "error", f"{s.case}: {s.error}", truth_of(s.case)) for s in scores if s.error]
    findings += [Finding(f"eval/{c}", "error", f"{s.case}: {_said(s, c)}", truth_of(s.case))
                 for s in scores if not s.error for c in _wrong(s)]
    fields = sorted({c for s in scores for c in _wrong(s)})
    return sarif("k3logs eval", [Rule(f"eval/{c}", f"the report's {c} disagrees with the case's truth") for c in fields]
                 + [Rule("eval/error", "the case could not be analysed")], findings)


def check_junit(issues, files: list[str]) -> str:
    """`signatures check --junit`: a test case per catalogue file, failing with its issues."""
    return junit("signatures check", [JUnitCase(relative(f), "k3logs.signatures.check", failure="\n".join(
        str(i) for i in issues if i.location.path == f) or None) for f in files])


def check_sarif(issues) -> str:
    """`signatures check --sarif`: a finding per catalogue issue, on its file and line."""
    return sarif("k3logs signatures check", [Rule(c, f"catalogue issue: {c}") for c in sorted({i.code for i in issues})],
                 [Finding(i.code, i.severity, i.message, relative(i.location.path), i.location.line) for i in issues])


def _wrong(score) -> list[str]:
    return [c for c, ok in score.ok.items() if not ok] if not score.error else []


def _said(score, field_name: str) -> str:
    return f"{field_name}: got {score.got.get(field_name)!r}, want {score.want.get(field_name)!r}"
