"""Score analyses against truth.json files (the shape of ../shared/realworld): category, first causal
file and line, origin node and rank, phase, and false alarms on healthy bundles. Alternatives listed in
the truth (`root_cause_alt`, `phase_alt`, `first_causal.line_alt`) count as right; a null in the truth's
origin means the bundle cannot tell, and any answer is accepted there. Acceptance cases may also give
`verdict` (the go-live decision, or null for none) and `prefix_cache` {`enabled`, `hit_ratio`} (the ratio
within HIT_RATIO_TOLERANCE); these are scored only where the truth gives them. So are `outcome` (the state,
once reports carry one) and `missing_nodes` (each named in the report's evidence_missing). A metamorphic
variant's truth (tests/metamorphic) says which `variant` it is ({case, transform, seed}) and may score only some
criteria (`score_only`: one node's logs removed may change the answer, not that the node is missing).

The tables (`tables`) give what a regression needs to be found: per field, per category, the confusion of
categories, the false alarms on healthy cases and, for variants, the failures per transform."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from k3logs import progress
from k3logs.catalogue.load import load_catalogue
from k3logs.catalogue.signatures import Catalogue
from k3logs.contract import Report
from k3logs.pipeline import analyze
from k3logs.settings import Settings

CRITERIA = ("category", "line", "node", "rank", "phase")
OPTIONAL = ("verdict", "prefix_cache", "outcome", "missing")   # scored only in cases whose truth gives them
HIT_RATIO_TOLERANCE = 0.02


@dataclass
class CaseScore:
    case: str
    healthy: bool
    ok: dict[str, bool] = field(default_factory=dict)
    got: dict[str, object] = field(default_factory=dict)
    want: dict[str, object] = field(default_factory=dict)
    error: str | None = None
    variant: dict | None = None     # {case, transform, seed} of a metamorphic variant

    @property
    def passed(self) -> bool:
        return self.error is None and all(self.ok.values())


def find_cases(root: Path) -> list[Path]:
    """Case folders under `root` (one holding truth.json and bundle/), or `root` itself."""
    if (root / "truth.json").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/truth.json"))


def listed(alt) -> list:
    """An alternative given alone or as a list (truths write "phase_alt": "shutdown" as well as [...], and
    "line_alt": 121 as well as [121])."""
    return [] if alt is None else [alt] if isinstance(alt, (str, int, dict)) else list(alt)


def truth_lines(fc: dict) -> list[tuple[str, int]]:
    """(file, line) pairs a truth accepts as the first causal event: its own and its `line_alt`s."""
    out = [(fc.get("file"), fc.get("line"))]
    for alt in listed(fc.get("line_alt")):
        if isinstance(alt, dict):
            out.append((alt.get("file", fc.get("file")), alt.get("line")))
        else:
            out.append((fc.get("file"), alt))
    return out


def score(case: str, truth: dict, report: Report) -> CaseScore:
    healthy = bool(truth.get("healthy"))
    s = CaseScore(case, healthy)
    fc = truth.get("first_causal") or None
    cats = [truth["root_cause"], *listed(truth.get("root_cause_alt"))]
    got_cat = report.root_cause.category
    s.ok["category"] = got_cat in cats
    got_line = (report.first_causal.file, report.first_causal.line) if report.first_causal else None
    s.ok["line"] = (got_line is None) if fc is None else (got_line in truth_lines(fc))
    origin = truth.get("origin") or {}
    s.ok["node"] = origin.get("node") is None or report.origin.node == origin.get("node")
    s.ok["rank"] = origin.get("rank") is None or report.origin.rank == origin.get("rank")
    phases = [truth.get("phase"), *listed(truth.get("phase_alt"))]
    s.ok["phase"] = healthy or report.phase in phases
    s.got = {"category": got_cat, "line": got_line, "node": report.origin.node, "rank": report.origin.rank,
             "phase": report.phase}
    s.want = {"category": cats, "line": truth_lines(fc) if fc else None, "node": origin.get("node"),
              "rank": origin.get("rank"), "phase": phases}
    _score_acceptance(s, truth, report)
    _score_outcome(s, truth, report)
    if truth.get("score_only"):
        s.ok = {c: ok for c, ok in s.ok.items() if c in truth["score_only"]}
    s.variant = truth.get("variant")
    return s


def _score_outcome(s: CaseScore, truth: dict, report: Report) -> None:
    outcome = getattr(report, "outcome", None)
    if "outcome" in truth and outcome is not None:   # (reports carry no outcome before schema 2)
        got = outcome if isinstance(outcome, str) else getattr(outcome, "state", None) or (
            outcome.get("state") if isinstance(outcome, dict) else None)
        want = [truth["outcome"], *listed(truth.get("outcome_alt"))]
        s.ok["outcome"], s.got["outcome"], s.want["outcome"] = got in want, got, want
    missing = truth.get("missing_nodes") or truth.get("evidence_missing")  # (what evidence_missing must name)
    if missing:
        said = " ".join(report.evidence_missing).lower()
        s.ok["missing"] = all(n.lower() in said for n in missing)
        s.got["missing"], s.want["missing"] = list(report.evidence_missing), missing


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
    out = {}
    for c in CRITERIA:
        scored = [s for s in scores if c in s.ok or s.error]
        out[c] = sum(s.ok.get(c, False) for s in scored) / (len(scored) or 1)
    for c in OPTIONAL:
        scored = [s for s in scores if c in s.ok]
        if scored:
            out[c] = sum(s.ok[c] for s in scored) / len(scored)
    out["cases"] = sum(s.passed for s in scores) / n
    healthy = [s for s in scores if s.healthy]
    out["false_alarms"] = float(sum(s.error is not None or not s.ok.get("category", True) for s in healthy))
    return out


def _want_category(s: CaseScore) -> str:
    cats = s.want.get("category")
    return cats[0] if cats else "(error)"


def tables(scores: list[CaseScore]) -> dict[str, list]:
    """Where the failures are: per field, per truth category, the confusion of categories (truth -> got, the
    wrong ones), the false alarms on healthy cases and, over metamorphic variants, per transform. Plain rows
    (JSON-ready), sorted, so the same scores give the same tables."""
    fields = CRITERIA + tuple(c for c in OPTIONAL if any(c in s.ok for s in scores))
    per_field = []
    for c in fields:
        scored = [s for s in scores if c in s.ok]
        per_field.append({"field": c, "scored": len(scored), "right": sum(s.ok[c] for s in scored)})
    by_cat: dict[str, list[CaseScore]] = {}
    for s in scores:
        by_cat.setdefault(_want_category(s), []).append(s)
    per_category = []
    for cat, ss in sorted(by_cat.items()):
        wrong = {c: sum(1 for s in ss if c in s.ok and not s.ok[c]) for c in fields}
        per_category.append({"category": cat, "cases": len(ss), "passed": sum(s.passed for s in ss),
                             "errors": sum(1 for s in ss if s.error),
                             "wrong": {c: n for c, n in wrong.items() if n}})
    confusion: dict[tuple[str, str], int] = {}
    for s in scores:
        if "category" in s.ok and not s.ok["category"]:
            key = (_want_category(s), str(s.got.get("category")))
            confusion[key] = confusion.get(key, 0) + 1
    false_alarms = [{"case": s.case, "got": s.got.get("category"), "line": s.got.get("line")}
                    for s in sorted(scores, key=lambda s: s.case)
                    if s.healthy and "category" in s.ok and not s.ok["category"]]
    per_transform = []
    variants: dict[str, list[CaseScore]] = {}
    for s in scores:
        if s.variant:
            variants.setdefault(s.variant.get("transform", "?"), []).append(s)
    for name, ss in sorted(variants.items()):
        bad = [s for s in ss if not s.passed]
        wrong = {c: sum(1 for s in ss if c in s.ok and not s.ok[c]) for c in fields}
        per_transform.append({"transform": name, "variants": len(ss), "failed": len(bad),
                              "errors": sum(1 for s in ss if s.error), "wrong": {c: n for c, n in wrong.items() if n},
                              "failing": sorted(f"{s.variant.get('case')}:{s.variant.get('seed')}" for s in bad)})
    return {"per_field": per_field, "per_category": per_category,
            "confusion": [{"truth": t, "got": g, "cases": n} for (t, g), n in sorted(confusion.items())],
            "false_alarms": false_alarms, "per_transform": per_transform}


def _wrong(w: dict[str, int]) -> str:
    return ", ".join(f"{c} {n}" for c, n in w.items()) or "-"


def render_tables(t: dict[str, list]) -> list[str]:
    """The tables as aligned text lines."""
    out = ["", "per field:"]
    out += [f"  {r['field']:14} {r['right']:4}/{r['scored']:<4} right" for r in t["per_field"]]
    out += ["", f"per category:    {'':40} cases passed  wrong fields"]
    out += [f"  {r['category']:56} {r['cases']:5} {r['passed']:6}  {_wrong(r['wrong'])}"
            + (f" (errors {r['errors']})" if r["errors"] else "") for r in t["per_category"]]
    out += ["", "confusion of categories (truth -> got, wrong ones only):"]
    out += [f"  {r['truth']:40} -> {r['got']:40} {r['cases']}" for r in t["confusion"]] or ["  none"]
    out += ["", "false alarms on healthy cases:"]
    out += [f"  {r['case']:56} got {r['got']} at {r['line']}" for r in t["false_alarms"]] or ["  none"]
    if t["per_transform"]:
        out += ["", f"per transform:   {'':20} variants failed  wrong fields"]
        for r in t["per_transform"]:
            out.append(f"  {r['transform']:36} {r['variants']:8} {r['failed']:6}  {_wrong(r['wrong'])}"
                       + (f" (errors {r['errors']})" if r["errors"] else ""))
            out += [f"      {f}" for f in r["failing"]]
    return out


def evaluate_corpus(root: Path, settings: Settings | None = None,
                    catalogue: Catalogue | None = None) -> list[CaseScore]:
    cat = catalogue or load_catalogue()
    scores = []
    for case in find_cases(Path(root)):
        truth = load_truth(case)
        bundle = case / "bundle"
        try:
            report = analyze(bundle, settings, cat)
        except Exception as e:  # one broken case must not stop the evaluation
            s = CaseScore(case.name, bool(truth.get("healthy")))
            s.error = f"{type(e).__name__}: {e}"
            scores.append(s)
            progress.current().item(case.name)
            continue
        scores.append(score(case.name, truth, report))
        progress.current().item(case.name)
    return scores
