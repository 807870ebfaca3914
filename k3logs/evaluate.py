"""Score analyses against truth.json files (the shape of ../shared/realworld): category, first causal
file and line, origin node and rank, phase, and false alarms on healthy bundles. Alternatives listed in
the truth (`root_cause_alt`, `phase_alt`, `first_causal.line_alt`) count as right; a null in the truth's
origin means the bundle cannot tell, and any answer is accepted there. Acceptance cases may also give
`verdict` (the go-live decision, or null for none) and `prefix_cache` {`enabled`, `hit_ratio`} (the ratio
within HIT_RATIO_TOLERANCE); these are scored only where the truth gives them."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .report import Report

CRITERIA = ("category", "line", "node", "rank", "phase")
OPTIONAL = ("verdict", "prefix_cache")   # scored only in cases whose truth gives them
HIT_RATIO_TOLERANCE = 0.02


@dataclass
class CaseScore:
    case: str
    healthy: bool
    ok: dict[str, bool] = field(default_factory=dict)
    got: dict[str, object] = field(default_factory=dict)
    want: dict[str, object] = field(default_factory=dict)
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and all(self.ok.values())


def find_cases(root: Path) -> list[Path]:
    """Case folders under `root` (one holding truth.json and bundle/), or `root` itself."""
    if (root / "truth.json").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/truth.json"))


def truth_lines(fc: dict) -> list[tuple[str, int]]:
    """(file, line) pairs a truth accepts as the first causal event: its own and its `line_alt`s."""
    out = [(fc.get("file"), fc.get("line"))]
    for alt in fc.get("line_alt", []) or []:
        if isinstance(alt, dict):
            out.append((alt.get("file", fc.get("file")), alt.get("line")))
        else:
            out.append((fc.get("file"), alt))
    return out


def score(case: str, truth: dict, report: Report) -> CaseScore:
    healthy = bool(truth.get("healthy"))
    s = CaseScore(case, healthy)
    fc = truth.get("first_causal") or None
    cats = [truth["root_cause"], *truth.get("root_cause_alt", [])]
    got_cat = report.root_cause.category
    s.ok["category"] = got_cat in cats
    got_line = (report.first_causal.file, report.first_causal.line) if report.first_causal else None
    s.ok["line"] = (got_line is None) if fc is None else (got_line in truth_lines(fc))
    origin = truth.get("origin") or {}
    s.ok["node"] = origin.get("node") is None or report.origin.node == origin.get("node")
    s.ok["rank"] = origin.get("rank") is None or report.origin.rank == origin.get("rank")
    phases = [truth.get("phase"), *truth.get("phase_alt", [])]
    s.ok["phase"] = healthy or report.phase in phases
    s.got = {"category": got_cat, "line": got_line, "node": report.origin.node, "rank": report.origin.rank,
             "phase": report.phase}
    s.want = {"category": cats, "line": truth_lines(fc) if fc else None, "node": origin.get("node"),
              "rank": origin.get("rank"), "phase": phases}
    _score_acceptance(s, truth, report)
    return s


def _score_acceptance(s: CaseScore, truth: dict, report: Report) -> None:
    if "verdict" in truth:
        got = report.verdict.decision if report.verdict else None
        s.ok["verdict"], s.got["verdict"], s.want["verdict"] = got == truth["verdict"], got, truth["verdict"]
    want = truth.get("prefix_cache")
    if isinstance(want, dict):
        p = report.prefix_cache
        ok = True
        if "enabled" in want:
            ok = p.enabled == want["enabled"]
        if "hit_ratio" in want:
            w, g = want["hit_ratio"], p.hit_ratio
            ok = ok and ((w is None and g is None) or (w is not None and g is not None
                                                        and abs(w - g) <= HIT_RATIO_TOLERANCE))
        s.ok["prefix_cache"] = ok
        s.got["prefix_cache"] = {"enabled": p.enabled, "hit_ratio": p.hit_ratio}
        s.want["prefix_cache"] = want


def load_truth(case_dir: Path) -> dict:
    return json.loads((case_dir / "truth.json").read_text(encoding="utf-8"))


def summary(scores: list[CaseScore]) -> dict[str, float]:
    n = len(scores) or 1
    out = {c: sum(s.ok.get(c, False) for s in scores) / n for c in CRITERIA}
    for c in OPTIONAL:
        scored = [s for s in scores if c in s.ok]
        if scored:
            out[c] = sum(s.ok[c] for s in scored) / len(scored)
    out["cases"] = sum(s.passed for s in scores) / n
    healthy = [s for s in scores if s.healthy]
    out["false_alarms"] = float(sum(not s.ok.get("category", False) for s in healthy))
    return out
