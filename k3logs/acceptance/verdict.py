"""Acceptance evidence judged: the prefix-cache and capacity sections of the report, and the go-live verdict
(k3-deployment-facts.md, "Go-live verdicts"): GO, THROTTLE AND OBSERVE, REWORK ENVIRONMENT or SCALE OR
RETOPOLOGISE, each criterion passed, failed or without evidence, with the file:line that shows it.

The rules are data (patterns/acceptance.toml `[verdict]`, `[[fault]]`, `[[rule]]`); this module gathers the
evidence for each criterion. A bundle without acceptance evidence (no /metrics dump, no tool-call checks: an
ordinary crash bundle) gets no verdict at all.

Tool calls are judged by k3logs.captures.toolcalls over the bundle's capture files (pipeline.report_of); the result comes
in as a `ToolCallEvidence`. Without one the tool-call criterion has no evidence, so GO is not possible and
THROTTLE AND OBSERVE is the best verdict.
"""
from __future__ import annotations

from dataclasses import dataclass

from k3logs.catalogue.acceptance import AcceptanceData, default_acceptance_data
from k3logs.contract import Capacity, Criterion, GoLive, PrefixCache, Rung
from k3logs.diagnose.clock import parse_iso
from k3logs.facts.checks import Check, is_k3_deployment
from k3logs.facts.util import RAN_RANK, Fact, version_less

from .metrics import FIELDS, Metrics

__all__ = ["ToolCallEvidence", "Incident", "prefix_cache_section", "capacity_section", "go_live"]

PASSED, FAILED, NONE = "passed", "failed", "no evidence"
TITLES = {
    "chain": "compatibility chain matches the recipe (driver, image, CUDA build, launch flags)",
    "capacity": "memory, KV cache, queueing and communication stay under control under load",
    "load": "the service starts and answers",
    "long_input": "long inputs are served",
    "concurrency": "concurrent requests without a new OOM",
    "sustained": "a sustained run without memory creep or repeated eviction",
    "prefix_cache": "prefix caching really hits",
    "tool_calls": "tool calls pass their schema checks",
    "faults": "no unexplained fault",
}


@dataclass(frozen=True)
class ToolCallEvidence:
    """What validating the bundle's captured tool calls found: `checked` calls were validated against the
    tool schemas of their requests, `failed` of them did not pass (model/parser or gateway faults alike);
    `evidence` is the file:line of the first failure (or of the first checked call when none failed)."""

    checked: int
    failed: int
    evidence: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class Incident:
    """The root cause of the incident found in the bundle, as the verdict needs it."""

    category: str
    group: str | None
    phase: str | None
    evidence: str | None
    title: str = ""


# ------------------------------------------------------------------------------------------
# prefix caching
# ------------------------------------------------------------------------------------------
def prefix_cache_section(facts: list[Fact], metrics: Metrics, data: AcceptanceData | None = None) -> PrefixCache:
    """On or off in the command that ran (its args, vLLM's start-up lines, the cache config it publishes), and
    the token hit ratio over every metrics window."""
    data = data or default_acceptance_data()
    out = PrefixCache()
    out.enabled, out.enabled_evidence, out.enabled_detail = _enabled(facts, data)
    queried, hits = metrics.total("queried_tokens"), metrics.total("hit_tokens")
    cached = metrics.total("cached_prompt_tokens")
    out.queried_tokens = None if queried is None else int(queried)
    out.hit_tokens = None if hits is None else int(hits)
    out.cached_prompt_tokens = None if cached is None else int(cached)
    if queried and hits is not None:
        out.hit_ratio = round(hits / queried, 4)
    rated = [w for w in metrics.windows if w.row.hit_ratio is not None]
    out.hot_windows = sum(w.row.hit_ratio >= data.thresholds.hot_hit_ratio for w in rated)
    if rated:
        best = max(rated, key=lambda w: w.row.hit_ratio)  # the first of equals: windows are in order
        out.best_window_hit_ratio = best.row.hit_ratio
        out.evidence = best.where.get("prefix_cache_hits")
    if hits and not out.enabled and not _stated(facts):  # a hit shows it on better than a default does
        out.enabled, out.enabled_evidence = True, out.evidence
        out.enabled_detail = "no flag or config in the bundle says so, but the metrics show prefix-cache hits"
    return out


def _stated(facts: list[Fact]) -> bool:
    """True when what ran says outright whether prefix caching is on (a flag, a start-up line, the config)."""
    return any(f.name == "prefix_caching" for f in facts)


def _enabled(facts: list[Fact], data: AcceptanceData) -> tuple[bool | None, str | None, str]:
    by_rank: dict[int, list[Fact]] = {}
    for f in facts:
        if f.name in ("prefix_caching", "launch_command"):
            by_rank.setdefault(RAN_RANK.get(f.source, 9), []).append(f)
    for rank in sorted(by_rank):
        group = sorted(by_rank[rank], key=lambda f: (f.file, f.line or 0))
        said = [f for f in group if f.name == "prefix_caching"]
        if said:
            f = next((x for x in said if x.value != "true"), said[0])  # as the check: one 'off' in what ran wins
            on = f.value == "true"
            return on, f.where, f"prefix caching {'on' if on else 'off'} in what ran ({f.source})"
        return _default(facts, group[0], data)
    return None, None, PrefixCache().enabled_detail


def _default(facts: list[Fact], command: Fact, data: AcceptanceData) -> tuple[bool | None, str | None, str]:
    d = data.prefix_default
    if is_k3_deployment(facts):
        return d.k3, command.where, "the command that ran has no prefix-caching flag, and K3 does not enable it by default"
    version = next((f.value for f in facts if f.name == "vllm_version"), None)
    older = version_less(version, d.v1_from) if version else None
    if older is None:
        return None, command.where, ("the command that ran has no prefix-caching flag, and the vLLM version that "
                                     "decides the default is not in the bundle")
    on = d.before_v1 if older else d.v1
    return on, command.where, (f"the command that ran has no prefix-caching flag: vLLM {version} "
                               f"{'enables' if on else 'does not enable'} it by default")


# ------------------------------------------------------------------------------------------
# capacity
# ------------------------------------------------------------------------------------------
def capacity_section(metrics: Metrics, data: AcceptanceData | None = None) -> Capacity | None:
    """The report's capacity section; None when the bundle holds no metrics."""
    data = data or default_acceptance_data()
    if not metrics.windows:
        return None
    ws = [w.row for w in metrics.windows]

    def peak(name: str):
        return metrics.peak(name)[0]

    means = [w.prompt_tokens // w.requests for w in ws if w.prompt_tokens is not None and w.requests]
    return Capacity(metrics.series, len(ws), ws[:data.thresholds.report_windows], peak("running"), peak("waiting"),
                    peak("kv_cache_usage"), None if metrics.total("preemptions") is None else int(metrics.total("preemptions")),
                    max(means) if means else None, bool(metrics.saturation or metrics.creep),
                    list(metrics.saturation), list(metrics.creep), metrics.limited)


# ------------------------------------------------------------------------------------------
# the verdict
# ------------------------------------------------------------------------------------------
def go_live(checks: list[Check], incident: Incident | None, prefix: PrefixCache, metrics: Metrics,
            ladder: list[Rung], tool_calls: ToolCallEvidence | None = None,
            data: AcceptanceData | None = None) -> GoLive | None:
    """The go-live verdict, or None when the bundle carries no acceptance evidence (no metrics and no tool-call
    checks). `checks` are the environment checks, `incident` the bundle's root cause (None when healthy),
    `ladder` the recovery ladder, `tool_calls` what validating captured tool calls found (None: not known)."""
    data = data or default_acceptance_data()
    if not metrics.windows and not (tool_calls and tool_calls.checked):
        return None
    fault = _fault_criterion(incident, data)
    crit = {
        "chain": _chain(checks, incident, fault, data),
        "capacity": _capacity(checks, incident, fault, metrics, data),
        "load": _load(ladder, metrics),
        "long_input": _long_input(metrics, data),
        "concurrency": _concurrency(ladder, metrics, data),
        "sustained": _sustained(metrics, data),
        "prefix_cache": _prefix(prefix, metrics),
        "tool_calls": _tool_calls(tool_calls),
        "faults": (FAILED, incident.evidence, f"{incident.category}: {incident.title}") if incident else
                  (PASSED, None, "no incident found in the bundle"),
    }
    criteria = [Criterion(cid, TITLES[cid], *crit[cid]) for cid in TITLES]
    failed = [c.id for c in criteria if c.status == FAILED]
    open_ = [c.id for c in criteria if c.status != PASSED]
    for rule in data.rules:
        if rule.any_failed and not set(rule.any_failed) & set(failed):
            continue
        if rule.all_passed and open_:
            continue
        hit = [c for c in criteria if c.id in rule.any_failed and c.status == FAILED]
        if hit:  # the details are in the criteria
            reason = ", ".join(f"{c.id} failed" for c in hit)
        elif rule.all_passed:
            reason = "every criterion passed"
        else:
            reason = "open: " + ", ".join(f"{c.id} ({c.status})" for c in criteria if c.status != PASSED)
        return GoLive(rule.verdict, reason, rule.advice, criteria)
    raise AssertionError("acceptance.toml ends with a fallback rule (checked on load)")


def _fault_criterion(incident: Incident | None, data: AcceptanceData) -> str | None:
    if incident is None:
        return None
    for f in data.faults:
        if incident.group in f.groups and (not f.phases or incident.phase in f.phases):
            return f.criterion
    return None


def _chain(checks: list[Check], incident: Incident | None, fault: str | None, data: AcceptanceData):
    by_id = {c.id: c for c in checks}
    bad = [by_id[i] for i in data.chain_checks if i in by_id and by_id[i].status == "fail"]
    if bad:
        return FAILED, bad[0].evidence, f"{bad[0].id}: {bad[0].detail}"
    if fault == "chain":
        return FAILED, incident.evidence, f"{incident.category}: {incident.title}"
    need = [by_id.get(i) for i in data.chain_required]
    if need and all(c is not None and c.status == "pass" for c in need):
        shown = [by_id[i] for i in data.chain_checks if i in by_id and by_id[i].status == "pass"]
        return PASSED, need[0].evidence, "passing: " + ", ".join(c.id for c in shown)
    return NONE, None, "no host driver / runtime evidence to check the chain against"


def _capacity(checks: list[Check], incident: Incident | None, fault: str | None, metrics: Metrics,
              data: AcceptanceData):
    bad = [c for c in checks if c.id in data.capacity_checks and c.status == "fail"]
    if bad:
        return FAILED, bad[0].evidence, f"{bad[0].id}: {bad[0].detail}"
    if fault == "capacity":
        return FAILED, incident.evidence, f"{incident.category} during {incident.phase or 'an unknown phase'}"
    flags = metrics.saturation + metrics.creep
    if flags:
        return FAILED, flags[0].evidence, "; ".join(f"{f.id}: {f.detail}" for f in flags)
    if metrics.windows:
        kv, where = metrics.peak("kv_cache_usage")
        running, _ = metrics.peak("running")
        waiting, _ = metrics.peak("waiting")
        shown = ", ".join(x for x in (f"peak KV-cache usage {kv:.1%}" if kv is not None else "",
                                      f"peak running {running}" if running is not None else "",
                                      f"peak waiting {waiting}" if waiting is not None else "") if x)
        return PASSED, where or metrics.windows[-1].row.evidence, \
            f"{len(metrics.windows)} window(s) without saturation or creep ({shown or 'no load gauges'})"
    return NONE, None, "no /metrics dump in the bundle"


def _load(ladder: list[Rung], metrics: Metrics):
    rungs = {r.rung: r for r in ladder}
    bad = next((r for r in (rungs.get(1), rungs.get(2)) if r and r.status == FAILED), None)
    if bad:
        return FAILED, bad.evidence, f"recovery ladder rung {bad.rung} failed: {bad.title}"
    if rungs.get(2) and rungs[2].status == PASSED:
        return PASSED, rungs[2].evidence, "a request completed"
    served = [w for w in metrics.windows if w.row.requests]
    if served:
        return PASSED, served[0].where.get(FIELDS["requests"]), "the metrics count finished requests"
    return NONE, None, "no completed request in the bundle"


def _long_input(metrics: Metrics, data: AcceptanceData):
    need = data.thresholds.long_input_tokens
    best = max(((w.row.prompt_tokens // w.row.requests, w) for w in metrics.windows
                if w.row.prompt_tokens is not None and w.row.requests), key=lambda t: t[0], default=None)
    if best and best[0] >= need:
        return PASSED, best[1].where.get(FIELDS["prompt_tokens"]), \
            f"{best[0]} prompt tokens per finished request in a window (>= {need})"
    if best:
        return NONE, None, f"at most {best[0]} prompt tokens per finished request in a window (long: >= {need})"
    return NONE, None, "no prompt-token and finished-request counters in the metrics"


def _concurrency(ladder: list[Rung], metrics: Metrics, data: AcceptanceData):
    rung = next((r for r in ladder if r.rung == 4), None)
    if rung and rung.status == FAILED:
        return FAILED, rung.evidence, "an OOM while serving concurrent requests"
    need = data.thresholds.concurrency_running
    running, where = metrics.peak("running")
    if running is not None and running >= need:
        return PASSED, where, f"up to {running} requests running at once (>= {need})"
    return NONE, None, (f"at most {running} requests running at once (concurrency: >= {need})" if running is not None
                        else "no running-requests gauge in the metrics")


def _sustained(metrics: Metrics, data: AcceptanceData):
    if metrics.creep:
        return FAILED, metrics.creep[0].evidence, metrics.creep[0].detail
    t = data.thresholds
    for s in metrics.series:
        n = sum(1 for w in metrics.windows if w.row.node == s.node)
        span = _seconds(s.first, s.last)
        if n >= t.sustained_windows and (span is None or span >= t.sustained_seconds):
            last = [w for w in metrics.windows if w.row.node == s.node][-1]
            return PASSED, last.row.evidence, (f"{n} windows" + (f" over {span // 60} min" if span is not None else "")
                                               + " without memory creep")
    return NONE, None, (f"no series of {t.sustained_windows} windows over {t.sustained_seconds // 60} min "
                        "(a sustained run) in the metrics")


def _seconds(first: str | None, last: str | None) -> int | None:
    a, b = parse_iso(first) if first else None, parse_iso(last) if last else None
    return int((b - a).total_seconds()) if a and b else None


def _prefix(prefix: PrefixCache, metrics: Metrics):
    if prefix.hot_windows:
        return PASSED, prefix.evidence, (f"{prefix.hot_windows} window(s) reuse cached tokens (best hit ratio "
                                         f"{prefix.best_window_hit_ratio:.1%})")
    if prefix.enabled is False:
        return FAILED, prefix.enabled_evidence, prefix.enabled_detail
    if prefix.queried_tokens:
        where = next((w.where.get(FIELDS["queried_tokens"]) for w in metrics.windows if w.row.queried_tokens), None)
        return FAILED, where, (f"{prefix.queried_tokens} tokens looked up, {prefix.hit_tokens or 0} hit: no window "
                               "shows reuse (a changed system prompt or tool schema breaks a shared prefix)")
    return NONE, None, "no prefix-cache counters in the metrics"


def _tool_calls(tc: ToolCallEvidence | None):
    if tc is None or tc.checked <= 0:
        return NONE, None, "no tool-call checks (captured tool calls validated against their schemas)"
    if tc.failed:
        return FAILED, tc.evidence, tc.detail or f"{tc.failed} of {tc.checked} tool calls failed their schema checks"
    return PASSED, tc.evidence, tc.detail or f"{tc.checked} tool calls passed their schema checks"
