"""A DiffReport as markdown, and the short 'what changed' section that analyze --reference adds to its report."""
from __future__ import annotations

from .model import Change, DiffReport, load_data


# ------------------------------------------------------------------------------------------------------
# markdown
# ------------------------------------------------------------------------------------------------------
def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        v = f"{v:g}"
    if isinstance(v, list):
        v = ", ".join(v) if v else "-"
    return " ".join(str(v).split()).replace("|", "\\|").replace("`", "'")


def _value_cell(vals: list[str]) -> str:
    return _cell(", ".join(vals)) if vals else "-"


def _changes_table(changes: list[Change], reference_label: str, failing_label: str = "failing") -> list[str]:
    out = [f"| # | kind | fact | node(s) | change | {reference_label} | {failing_label} | evidence |",
           "|---|---|---|---|---|---|---|---|"]
    for c in changes:
        ref = _value_cell(c.reference) if c.change != "split" else "-"
        fail = _value_cell(c.failing) if c.change != "split" else \
            _cell("; ".join(f"{n}: {', '.join(v)}" for n, v in c.by_node.items()))
        out.append(f"| {c.rank} | {_cell(c.kind_title)} | `{_cell(c.fact)}` | {_cell(c.nodes)} | {c.change} | {ref} "
                   f"| {fail} | {_cell(c.evidence)} |")
    return out


def _secs(v) -> str:
    return "-" if v is None else f"+{v:.0f} s" if isinstance(v, float) else _cell(v)


def render_markdown(d: DiffReport) -> str:
    lines = ["# k3logs diff", ""]
    f = d.failing
    lines.append(f"- **failing**: `{_cell(f.path)}` ({f.outcome}; {f.category}"
                 + (f" at {_cell(f.first_causal)}" if f.first_causal else "") + f"; nodes: {_cell(f.nodes)})")
    if d.reference:
        r = d.reference
        lines.append(f"- **reference**: `{_cell(r.path)}` ({r.outcome}; {r.category}; nodes: {_cell(r.nodes)})")
    lines += ["", f"**{'Something that matters differs' if d.matters else 'Nothing that matters differs'}** "
              f"(exit {d.exit_status}): {_cell(d.summary)}", ""]
    if d.mode == "pair":
        lines += ["## Environment: what changed, ranked", ""]
        if d.environment:
            lines += _changes_table(d.environment, "reference")
        else:
            lines.append("No fact differs between the two bundles.")
        if d.not_compared:
            lines += ["", "Not compared (one bundle holds no evidence of it): " + "; ".join(
                f"`{_cell(u.fact)}` only in the {'failing' if u.missing_in == 'reference' else 'reference'} bundle "
                f"({_value_cell(u.value)})" for u in d.not_compared[:20])
                + ("; ..." if len(d.not_compared) > 20 else "")]
        lines.append("")
    lines += ["## Nodes compared with each other" if d.mode == "nodes" else "## The failing bundle's nodes", ""]
    if d.odd_node:
        lines.append(f"**Odd node out: {_cell(d.odd_node.node)}** — {_cell(d.odd_node.detail)}.")
        lines.append("")
    if d.node_differences:
        lines += _changes_table(d.node_differences, "the other nodes", "these nodes")
    else:
        lines.append("The nodes agree on every fact they show (or the bundle has one node).")
    lines.append("")
    if d.lifecycle:
        lines += ["## Lifecycle side by side", "", f"**{_cell(d.lifecycle.detail)}**", "",
                  "| landmark | reference | failing | reference took | failing took | departs |", "|---|---|---|---|---|---|"]
        for row in d.lifecycle.rows:
            if row.row == "phase":
                ref, fail = _secs(row.reference), _secs(row.failing)
            else:
                ref, fail = _cell(row.reference), _cell(row.failing)
            took = [("-" if v is None else f"{v:.0f} s") for v in (row.reference_duration_s, row.failing_duration_s)]
            lines.append(f"| {_cell(row.title)} | {ref} | {fail} | {took[0]} | {took[1]} | "
                         f"{'**yes**: ' + _cell(row.detail) if row.departs else ''} |")
        lines.append("")
    if d.mode == "pair":
        lines += ["## Messages the reference never printed", ""]
        if d.messages:
            shown = d.messages[:load_data().shown]
            lines += [f"{d.messages_total} new template{'s' * (d.messages_total > 1)}, the ones before the failure "
                      f"first{'; the first ' + str(len(shown)) + ' here' if len(shown) < d.messages_total else ''}.", "",
                      "| time | node | rank | phase | before failure | count | where | message |",
                      "|---|---|---|---|---|---|---|---|"]
            for m in shown:
                bf = "-" if m.before_failure is None else ("yes" if m.before_failure else "no")
                lines.append(f"| {_cell(m.timestamp)} | {_cell(m.node)} | {_cell(m.rank)} | {_cell(m.phase)} | {bf} "
                             f"| {m.count} | {_cell(f'{m.file}:{m.line}')} | {'**' if m.matters else ''}"
                             f"{_cell(m.text)}{'**' if m.matters else ''} |")
        else:
            lines.append("None: every message of the failing run has a template the reference printed too.")
        lines.append("")
    return "\n".join(lines)


def reference_section(d: DiffReport, top: int = 5) -> dict:
    """The short form `analyze --reference` adds to its report: the top changed facts and the departure."""
    return {
        "reference": d.reference.path if d.reference else None,
        "matters": d.matters,
        "summary": d.summary,
        "top_changes": [{"rank": c.rank, "fact": c.fact, "change": c.change, "nodes": c.nodes,
                         "reference": c.reference, "failing": c.failing, "kind": c.kind, "evidence": c.evidence}
                        for c in d.environment[:top]],
        "departure": d.lifecycle.detail if d.lifecycle else None,
        "odd_node": d.odd_node.node if d.odd_node else None,
        "more": "k3logs diff FAILING REFERENCE",
    }


def reference_markdown(section: dict) -> str:
    lines = ["", "## What changed since the reference", "",
             f"Compared with `{_cell(section['reference'])}`: {_cell(section['summary'])}.", ""]
    if section["top_changes"]:
        lines += ["| # | fact | node(s) | change | reference | failing |", "|---|---|---|---|---|---|"]
        for c in section["top_changes"]:
            lines.append(f"| {c['rank']} | `{_cell(c['fact'])}` | {_cell(c['nodes'])} | {c['change']} | "
                         f"{_value_cell(c['reference'])} | {_value_cell(c['failing'])} |")
        lines.append("")
    lines += [f"The whole comparison (every fact, the lifecycle side by side, the new messages): "
              f"`k3logs diff FAILING {_cell(section['reference'])}`.", ""]
    return "\n".join(lines)
