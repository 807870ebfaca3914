"""`k3logs diff`: what a failing run does differently from the last good one, or one node from the others.

Three comparisons over what `pipeline.run` already produced for each bundle (no new parser):

1. environment: every fact of both sides (facts.py, plus three lists read here from the same dumps and
   commands: `pip:<package>` from pip freeze, `module:<name>` from lsmod, `flag:<option>` from the vLLM
   command line that ran or vLLM's own non-default args), node by node: what changed, appeared or went away,
   ranked by the kind of change (patterns/diff.toml, the compatibility chain first). A node of the failing
   bundle is compared with the reference node of the same name, else with every reference node together.
   Within one bundle, each fact is compared across nodes: a node in the minority is out of step, and the node
   whose differences weigh most is the odd node out (named only when it is unambiguous: a strict majority on
   every fact it counts, and a top score of its own);
2. lifecycle: the landmarks of both runs (patterns/landmarks.toml phases, the figures vLLM prints on the way)
   side by side, and the first row where the failing run departs from the reference;
3. messages: the templates (templates.mask_template) the failing run printed and the reference never did
   (rapidfuzz ratio below templates.SAME_TEMPLATE), in time order, first those before the failure.

`diff_bundles` / `diff_nodes` make a `DiffReport`; `render_markdown` and `DiffReport.to_json` print it
(shape: k3logs/diff/diff.schema.json). Library only: the CLI is `k3logs diff` (cli/incident.py); run.py runs the analyses it compares.
"""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import polars as pl
from rapidfuzz import fuzz, process

from k3logs.contract import iso
from k3logs.diagnose.templates import SAME_TEMPLATE, mask_template
from k3logs.report.analysis import Analysis
from k3logs.schema import PHASES

from .environment import NodeFacts, compare_environments, compare_nodes, node_facts, top_line
from .model import (ANY_NODE, NOVEL_CAP, TEXT_CHARS, DiffData, DiffReport, Lifecycle, LifecycleRow, NewMessage,
                    RunSummary, load_data)


# ------------------------------------------------------------------------------------------------------
# 2. lifecycle
# ------------------------------------------------------------------------------------------------------
@dataclass
class _Run:
    reached: dict[str, tuple[float, str]]   # phase -> (seconds since the first landmark, file:line)
    figures: dict[str, tuple[float, str]]   # figure id -> (median value, file:line of the first)
    outcome: str


def _run_landmarks(a: Analysis, data: DiffData) -> _Run:
    ev = a.events
    reached: dict[str, tuple[float, str]] = {}
    figures: dict[str, tuple[float, str]] = {}
    if {"mark", "ts"} <= set(ev.columns):
        marks = ev.filter(pl.col("mark").is_not_null() & pl.col("ts").is_not_null()).sort("ts")
        if marks.height:
            t0 = marks["ts"][0]
            for phase, ts, file, line in marks.select("mark", "ts", "file", "line").iter_rows():
                if phase not in reached:
                    reached[phase] = ((ts - t0).total_seconds(), f"{file}:{line}")
        texts = ev.filter(pl.col("text").is_not_null()).sort(["ts", "file", "line"], nulls_last=True)
        for fig in data.figures:
            vals, where = [], None
            for file, line, text in texts.select("file", "line", "text").iter_rows():
                m = fig.regex.search(text)
                if not m:
                    continue
                raw = next((v for k, v in m.groupdict().items() if k.startswith("value") and v), None)
                if raw is None:
                    continue
                vals.append(float(raw.replace(",", "")))
                where = where or f"{file}:{line}"
            if vals:
                figures[fig.id] = (statistics.median(vals), where)
    return _Run(reached, figures, a.decision.outcome.state)


def _durations(reached: dict[str, tuple[float, str]]) -> dict[str, float | None]:
    order = [p for p in PHASES if p in reached]
    out: dict[str, float | None] = {}
    for i, p in enumerate(order):
        out[p] = reached[order[i + 1]][0] - reached[p][0] if i + 1 < len(order) else None
    return out


def compare_lifecycles(fail: Analysis, ref: Analysis, data: DiffData) -> Lifecycle:
    f, r = _run_landmarks(fail, data), _run_landmarks(ref, data)
    fd, rd = _durations(f.reached), _durations(r.reached)
    rows: list[LifecycleRow] = []
    for phase in PHASES:
        fr, rr = f.reached.get(phase), r.reached.get(phase)
        if fr or rr:
            row = LifecycleRow(phase, "phase", phase, phase, rr[0] if rr else None, fr[0] if fr else None,
                               rr[1] if rr else None, fr[1] if fr else None, rd.get(phase), fd.get(phase))
            if rr and not fr:
                row.departs, row.detail = True, f"the reference reached {phase}; the failing run never did"
            elif fr and not rr:
                row.departs, row.detail = True, f"the failing run reached {phase}; the reference never did"
            elif row.failing_duration_s is not None and row.reference_duration_s is not None and \
                    row.failing_duration_s > data.duration_factor * row.reference_duration_s and \
                    row.failing_duration_s - row.reference_duration_s >= data.duration_min_s:
                row.departs = True
                row.detail = (f"{phase} took {row.failing_duration_s:.0f} s, the reference "
                              f"{row.reference_duration_s:.0f} s")
            rows.append(row)
        for fig in (g for g in data.figures if g.phase == phase):
            fv, rv = f.figures.get(fig.id), r.figures.get(fig.id)
            if not (fv or rv):
                continue
            row = LifecycleRow(fig.id, "figure", phase, fig.title, rv[0] if rv else None, fv[0] if fv else None,
                               rv[1] if rv else None, fv[1] if fv else None)
            if fv and rv:
                base = max(abs(rv[0]), 1e-9)
                if abs(fv[0] - rv[0]) / base > fig.tolerance:
                    row.departs = True
                    row.detail = f"{fig.title}: {fv[0]:g}, the reference {rv[0]:g}"
            elif rv and phase in f.reached:
                row.departs, row.detail = True, f"the reference printed it ({rv[0]:g}); the failing run did not"
            rows.append(row)
    out = LifecycleRow("outcome", "outcome", None, "outcome", r.outcome, f.outcome)
    if f.outcome != r.outcome:
        out.departs, out.detail = True, f"the failing run ended {f.outcome}, the reference {r.outcome}"
    rows.append(out)
    first = next((row for row in rows if row.departs), None)
    detail = (f"departs at {first.title}: {first.detail}" if first else
              "the failing run follows the reference through every landmark")
    return Lifecycle(rows, first.id if first else None, detail)


# ------------------------------------------------------------------------------------------------------
# 3. messages
# ------------------------------------------------------------------------------------------------------
def _templates(a: Analysis, data: DiffData) -> pl.DataFrame:
    ev = a.events
    if "text" not in ev.columns:
        return pl.DataFrame()
    cols = [c for c in ("text", "file", "line", "node", "rank", "ts", "phase", "level", "exc_types") if c in ev.columns]
    ev = ev.select(cols).filter(pl.col("text").is_not_null() & (pl.col("text").str.strip_chars().str.len_chars()
                                                                 >= data.min_chars))
    texts = ev["text"].unique().to_list()
    masked = {t: mask_template(t)[:300] for t in texts}
    return ev.with_columns(pl.col("text").replace_strict(masked, return_dtype=pl.String).alias("template"))


def compare_messages(fail: Analysis, ref: Analysis, data: DiffData) -> tuple[list[NewMessage], int, bool]:
    """New templates of the failing run, grouped (same_template), ordered: before the failure in time
    order, then after it, then those with no time."""
    ft, rt = _templates(fail, data), _templates(ref, data)
    if ft.is_empty():
        return [], 0, False
    known = set(rt["template"].unique().to_list()) if not rt.is_empty() else set()
    known_list = sorted(known)
    ft = ft.sort(["ts", "file", "line"], nulls_last=True)
    order = ft["template"].unique(maintain_order=True).to_list()
    candidates = [t for t in order if t not in known]
    limited = len(candidates) > NOVEL_CAP
    novel: dict[str, str] = {}          # template -> the group it joins
    groups: list[str] = []
    for t in candidates[:NOVEL_CAP]:
        if known_list and process.extractOne(t, known_list, scorer=fuzz.ratio, score_cutoff=SAME_TEMPLATE):
            continue
        hit = process.extractOne(t, groups, scorer=fuzz.ratio, score_cutoff=SAME_TEMPLATE) if groups else None
        if hit:
            novel[t] = hit[0]
        else:
            novel[t] = t
            groups.append(t)
    root = fail.decision.root
    failure = root.ts if root is not None else None
    firsts: dict[str, dict] = {}
    counts: Counter = Counter()
    for row in ft.filter(pl.col("template").is_in(list(novel))).iter_rows(named=True):
        g = novel[row["template"]]
        counts[g] += 1
        firsts.setdefault(g, row)
    out = []
    for g, row in firsts.items():
        ts: datetime | None = row.get("ts")
        level = row.get("level")
        exc = row.get("exc_types") or []
        before = None if ts is None or failure is None else ts <= failure
        out.append(NewMessage(g, row["text"][:TEXT_CHARS], row["file"], row["line"], row.get("node"), row.get("rank"),
                              iso(ts), row.get("phase"), level, counts[g], before,
                              bool(exc) or (level or "").upper() in data.levels))
    out.sort(key=lambda m: (0 if m.before_failure else 1 if m.timestamp else 2, m.timestamp or "", m.file, m.line)
             if failure is not None else (0 if m.timestamp else 1, m.timestamp or "", m.file, m.line))
    return out, len(out), limited


# ------------------------------------------------------------------------------------------------------
# the whole diff
# ------------------------------------------------------------------------------------------------------
def _summary_of(a: Analysis, path: str, nf: NodeFacts) -> RunSummary:
    d = a.decision
    root = d.root
    return RunSummary(path, [n for n in nf.nodes if n != ANY_NODE], d.healthy, d.outcome.state,
                      root.category if root is not None else ("none" if d.healthy else "other"),
                      f"{root.file}:{root.line}" if root is not None else None,
                      iso(root.ts) if root is not None else None)


def diff_analyses(fail: Analysis, ref: Analysis, fail_path: str, ref_path: str, data: DiffData | None = None,
                  messages: bool = True) -> DiffReport:
    """Compare a failing run with a reference run (both analysed; keep_all=True for the message diff)."""
    data = data or load_data()
    ff, rf = node_facts(fail, data), node_facts(ref, data)
    env, unknown = compare_environments(ff, rf, data)
    nodes, odd = compare_nodes(ff, data)
    life = compare_lifecycles(fail, ref, data)
    msgs, total, limited = compare_messages(fail, ref, data) if messages else ([], 0, False)
    mattering = [c for c in env if c.weight > 0]
    new_bad = [m for m in msgs if m.matters]
    matters = bool(mattering) or life.departure is not None or bool(new_bad)
    parts = []
    if mattering:
        parts.append(f"{len(mattering)} environment change{'s' * (len(mattering) > 1)}, first: {top_line(mattering[0])}")
    else:
        parts.append("no environment change that matters")
    parts.append(life.detail)
    if msgs:
        parts.append(f"{total} new message template{'s' * (total > 1)}"
                     + (f" ({len(new_bad)} at warning level or above)" if new_bad else ""))
    if odd:
        parts.append(f"odd node out in the failing bundle: {odd.node}")
    return DiffReport("pair", _summary_of(fail, fail_path, ff), _summary_of(ref, ref_path, rf), matters,
                      "; ".join(parts), env, unknown, odd, nodes, life, msgs[:data.kept], total, limited)


def diff_one(a: Analysis, path: str, data: DiffData | None = None) -> DiffReport:
    """The nodes of one bundle compared with each other."""
    data = data or load_data()
    nf = node_facts(a, data)
    nodes, odd = compare_nodes(nf, data)
    real = [n for n in nf.nodes if n != ANY_NODE]
    matters = any(c.weight > 0 for c in nodes)
    if len(real) < 2:
        summary = f"one node ({real[0] if real else 'unnamed'}): nothing to compare it with; give a reference bundle"
    elif odd:
        summary = f"odd node out: {odd.node} ({odd.detail})"
    elif matters:
        summary = f"the nodes differ ({len(nodes)} facts) but no single node is the odd one out"
    else:
        summary = f"the {len(real)} nodes agree on every fact they show"
    return DiffReport("nodes", _summary_of(a, path, nf), None, matters, summary, [], [], odd, nodes)
