"""The markdown summary of a scan (the rows of incidents.parquet): which causes recur and when they were
first and last seen, what the machines behind each cause have in common, the unknown (`other`) errors
grouped across bundles into families of similar templates, and the bundles that could not be analysed."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from k3logs.diagnose.templates import mask_template, same_template
from k3logs.report.render import cell, cell_code

ENV_COLUMNS = (("driver_branch", "driver branch"), ("image", "image"), ("vllm_version", "vLLM"),
               ("gpu_model", "GPU"))
TOP_VALUES = 3   # values shown per environment fact
EXAMPLES = 3     # bundles named per family


@dataclass
class Family:
    """Unknown errors whose masked templates are alike (templates.same_template), across bundles."""

    template: str                       # the most frequent template of the family
    templates: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)


def _when(ts: datetime | None) -> str:
    return ts.strftime("%Y-%m-%d %H:%M:%SZ") if ts else "-"


def _span(rows: list[dict]) -> tuple[str, str]:
    """First and last seen, by first causal time (bundles without one do not count)."""
    times = sorted(r["first_causal_time"] for r in rows if r["first_causal_time"] is not None)
    return (_when(times[0]), _when(times[-1])) if times else ("-", "-")


def _values(rows: list[dict], key: str) -> str:
    """`r570 ×3, r580 ×1, unknown ×2`: the most common values first, at most TOP_VALUES of them."""
    # (a fact with several values, nodes that differ: "570 / 580")
    counts = Counter(" / ".join(map(str, (r["environment"] or {}).get(key) or [])) or "unknown" for r in rows)
    ranked = sorted(counts.items(), key=lambda kv: (kv[0] == "unknown", -kv[1], kv[0]))
    shown = [f"{v} ×{n}" for v, n in ranked[:TOP_VALUES]]
    if len(ranked) > TOP_VALUES:
        shown.append(f"+{len(ranked) - TOP_VALUES} more")
    return ", ".join(shown)


def template_of(row: dict) -> str:
    return row["other_template"] or mask_template((row["first_causal_text"] or "").split("\n", 1)[0])


def other_families(rows: list[dict]) -> list[Family]:
    """Bundles of category `other` grouped by template: templates taken from the most frequent down, each
    joining the first family whose leading template it matches (order-independent: same rows, same
    families), families largest first."""
    by_template: dict[str, list[dict]] = {}
    for r in rows:
        if r["category"] == "other":
            by_template.setdefault(template_of(r), []).append(r)
    families: list[Family] = []
    for t, members in sorted(by_template.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        fam = next((f for f in families if same_template(f.template, t)), None)
        if fam is None:
            fam = Family(t)
            families.append(fam)
        fam.templates.append(t)
        fam.rows = sorted(fam.rows + members, key=lambda r: r["path"])
    return sorted(families, key=lambda f: (-len(f.rows), f.template))


def summarize(rows: list[dict]) -> str:
    """The summary as markdown."""
    failed = [r for r in rows if r["error"] is not None]
    incidents = [r for r in rows if r["healthy"] is False]
    healthy = sum(r["healthy"] is True and r["error"] is None for r in rows)
    out = ["# k3logs scan", "",
           f"{len(rows)} bundles: {len(incidents)} incidents, {healthy} healthy, {len(failed)} could not be "
           f"analysed (whole or in part).", ""]

    by_cause: dict[str, list[dict]] = {}
    for r in incidents:
        by_cause.setdefault(r["category"], []).append(r)
    out += ["## Causes", ""]
    if by_cause:
        out += ["| cause | bundles | first seen | last seen | " + " | ".join(t for _, t in ENV_COLUMNS) + " |",
                "|---|---|---|---|" + "---|" * len(ENV_COLUMNS)]
        for cause, rs in sorted(by_cause.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            first, last = _span(rs)
            env = " | ".join(cell(_values(rs, k)) for k, _ in ENV_COLUMNS)
            out.append(f"| {cell(cause)} | {len(rs)} | {first} | {last} | {env} |")
    else:
        out.append("No incident in any bundle.")
    out.append("")

    families = other_families(rows)
    if families:
        out += ["## Unknown errors (`other`) by family", "",
                "| family (template) | bundles | first seen | last seen | templates | bundles, e.g. |",
                "|---|---|---|---|---|---|"]
        for f in families:
            first, last = _span(f.rows)
            names = sorted(r["path"] for r in f.rows)
            more = f", +{len(names) - EXAMPLES}" if len(names) > EXAMPLES else ""
            out.append(f"| {cell_code(f.template)} | {len(f.rows)} | {first} | {last} | {len(f.templates)} | "
                       f"{cell(', '.join(names[:EXAMPLES]) + more)} |")
        out.append("")

    if failed:
        out += ["## Bundles that could not be analysed", "", "| bundle | error |", "|---|---|"]
        out += [f"| {cell(r['path'])} | {cell(r['error'])} |" for r in sorted(failed, key=lambda r: r["path"])]
        out.append("")
    return "\n".join(out)
