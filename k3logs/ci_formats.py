"""Results in the formats CI systems show where their users look: JUnit XML (test tabs of GitLab, Jenkins,
GitHub test reporters) and SARIF 2.1.0 (code scanning: a finding on its file and line). Used by `eval` (a test
case per corpus case) and `signatures check` (a finding per catalogue issue)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass
class TestCase:
    name: str
    classname: str
    failure: str | None = None   # what is wrong (the case ran and disagrees)
    error: str | None = None     # the case could not run
    skipped: str | None = None   # expected to fail (a known failure), with why


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
    extra: dict = field(default_factory=dict)


def junit(suite: str, cases: list[TestCase]) -> str:
    """One <testsuite> of `cases` as JUnit XML."""
    failures = sum(c.failure is not None for c in cases)
    errors = sum(c.error is not None for c in cases)
    skipped = sum(c.skipped is not None and c.failure is None and c.error is None for c in cases)
    root = ET.Element("testsuites", name="k3logs", tests=str(len(cases)), failures=str(failures),
                      errors=str(errors), skipped=str(skipped))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(failures),
                       errors=str(errors), skipped=str(skipped))
    for c in cases:
        tc = ET.SubElement(ts, "testcase", name=c.name, classname=c.classname)
        if c.error is not None:
            ET.SubElement(tc, "error", message=_first_line(c.error)).text = c.error
        elif c.failure is not None:
            ET.SubElement(tc, "failure", message=_first_line(c.failure)).text = c.failure
        elif c.skipped is not None:
            ET.SubElement(tc, "skipped", message=_first_line(c.skipped))
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
                               "rules": [{"id": r.id, "shortDescription": {"text": r.description}, **r.extra}
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
