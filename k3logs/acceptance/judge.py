"""The acceptance stage, run by the pipeline after the diagnosis. In: the events, the decision, the nodes, the
facts and checks, the /metrics scrapes among the dumps, the tool calls checked. Out: Acceptance: the recovery
ladder, the prefix-cache and capacity sections and the go-live verdict (the report only shows them)."""
from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from k3logs.catalogue.acceptance import default_acceptance_data
from k3logs.catalogue.signatures import Catalogue
from k3logs.contract import Capacity, GoLive, PrefixCache, Rung
from k3logs.diagnose.findings import Decision, Finding
from k3logs.facts.checks import Check
from k3logs.facts.util import Fact

from .metrics import Metrics, read_metrics
from .verdict import Incident, ToolCallEvidence, capacity_section, go_live, prefix_cache_section


@dataclass
class Acceptance:
    """What the bundle shows of readiness and load, judged."""

    prefix_cache: PrefixCache
    capacity: Capacity | None
    ladder: list[Rung] = field(default_factory=list)
    verdict: GoLive | None = None


def judge(events: pl.DataFrame, nodes: list[str], decision: Decision, catalogue: Catalogue, facts: list[Fact],
          checks: list[Check], scrapes: list[tuple[str, str | None, str]],
          tool_calls: ToolCallEvidence | None) -> Acceptance:
    """The acceptance sections of a diagnosed bundle. `scrapes`: (file, node, text) of the dumps that may be
    /metrics scrapes; `tool_calls`: what checking the bundle's captured tool calls found (None: no such
    evidence)."""
    metrics = read_metrics(scrapes)
    prefix = prefix_cache_section(facts, metrics)
    rungs = ladder(events, nodes, decision, prefix, metrics)
    root = decision.root
    happened = incident(root, catalogue) if root is not None else None
    verdict = go_live(checks, happened, prefix, metrics, rungs, tool_calls)
    return Acceptance(prefix, capacity_section(metrics), rungs, verdict)


def root_phase(root: Finding, catalogue: Catalogue) -> str | None:
    """The root cause's phase: its line's, else the first its signature names."""
    if root.phase:
        return root.phase
    sig = catalogue.by_id(root.sig) if root.sig else None
    return sig.phase[0] if sig and sig.phase else None


def incident(root: Finding, catalogue: Catalogue) -> Incident:
    """The root cause as the verdict weighs it: its category, the category's group, its phase, its line."""
    cat = catalogue.categories.get(root.category)
    return Incident(root.category, cat.group if cat else None, root_phase(root, catalogue),
                    f"{root.file}:{root.line}", root.title or root.category)


def ladder(ev: pl.DataFrame, nodes: list[str], decision: Decision, prefix: PrefixCache | None = None,
           metrics: Metrics | None = None) -> list[Rung]:
    """The recovery ladder from the logs; where they give no evidence for rungs 3 and 4, from the metrics
    (a window that reuses cached tokens; concurrent requests running)."""
    root = decision.root
    t = pl.col("text")

    def first(expr) -> str | None:
        hit = ev.filter(expr).select("file", "line").head(1)
        return f"{hit['file'][0]}:{hit['line'][0]}" if hit.height else None

    steps = default_acceptance_data().ladder
    started = ev.filter(t.str.contains(steps[0].up))
    started_nodes = set(started["node"].drop_nulls().to_list())
    cats = {f.category for f in decision.findings if f.role == "cause"}
    failed_start = root is not None and root.phase not in (None, "serving", "shutdown")
    rungs = []
    if failed_start:
        s1 = ("failed", f"{root.file}:{root.line}")
    elif started.height and (not nodes or len(started_nodes) >= 1):
        s1 = ("passed", first(t.str.contains(steps[0].regex)))
    else:
        s1 = ("no evidence", None)
    rungs.append(s1)
    ok_req = first(t.str.contains(steps[1].regex))
    rungs.append(("passed", ok_req) if ok_req else ("failed", None) if failed_start else ("no evidence", None))
    hit = ev.filter(t.str.contains(steps[2].regex))
    if hit.height:
        rungs.append(("passed", f"{hit['file'][0]}:{hit['line'][0]}"))
    elif prefix is not None and prefix.hot_windows:
        rungs.append(("passed", prefix.evidence))
    elif prefix is not None and metrics is not None and metrics.windows and prefix.queried_tokens:
        looked = next(w.where.get("prefix_cache_queries") for w in metrics.windows if w.row.queried_tokens)
        rungs.append(("failed", looked))  # tokens were looked up, no window reused them
    else:
        rungs.append(("no evidence", None))
    busy = first(t.str.contains(steps[3].regex))
    if not busy and metrics is not None:
        running, where = metrics.peak("running")
        if running is not None and running >= default_acceptance_data().thresholds.concurrency_running:
            busy = where
    if "oom.inference" in cats:
        rungs.append(("failed", f"{root.file}:{root.line}" if root else None))
    else:
        rungs.append(("passed", busy) if busy else ("no evidence", None))
    comm_fail = [f for f in decision.findings if f.role == "cause" and f.category.startswith("nccl.")]
    if comm_fail and (root is None or root.phase == "serving"):
        rungs.append(("failed", f"{comm_fail[0].file}:{comm_fail[0].line}"))
    elif len(nodes) >= 2 and busy and not failed_start:
        rungs.append(("passed", busy))
    else:
        rungs.append(("no evidence", None))
    return [Rung(i + 1, steps[i].title, s, e) for i, (s, e) in enumerate(rungs)]
