"""Load patterns/acceptance.toml (the /metrics series k3logs reads, the thresholds that judge them and the
go-live rules) into frozen dataclasses. Every key is checked on load; every problem carries the file and
line, and all of them are reported at once (CatalogueError)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import polars as pl

from k3logs.errors import CatalogueError, SourceLocation
from k3logs.resources import data_dir

from .read import Issue, key_line, read_toml, regex_error, table_starts

CRITERIA = ("chain", "capacity", "load", "long_input", "concurrency", "sustained", "prefix_cache", "tool_calls",
            "faults")
VERDICTS = ("GO", "THROTTLE AND OBSERVE", "REWORK ENVIRONMENT", "SCALE OR RETOPOLOGISE")
# "regex": the named regexes of acceptance/metrics.py, read (and checked) by catalogue/regexes.py, not here
TOP_KEYS = {"metric", "thresholds", "prefix_caching_default", "verdict", "fault", "rule", "rung", "regex"}
METRIC_KEYS = {"id", "names", "kind", "engines"}
FAULT_KEYS = {"groups", "phases", "criterion"}
RULE_KEYS = {"verdict", "any_failed", "all_passed", "advice"}
RUNG_KEYS = {"title", "regex", "up", "samples", "no_match"}
RUNGS = 5  # the recovery ladder of k3-deployment-facts.md
THRESHOLD_TYPES = {
    "engine_labels": list, "hot_hit_ratio": float, "kv_pinned": float, "kv_pinned_windows": int,
    "waiting_growth_windows": int, "preemption_windows": int, "creep_windows": int, "creep_kv_rise": float,
    "creep_memory_rise": float, "concurrency_running": int, "long_input_tokens": int, "sustained_windows": int,
    "sustained_seconds": int, "report_windows": int,
}
DEFAULT_TYPES = {"v1_from": str, "v1": bool, "before_v1": bool, "k3": bool}
VERDICT_TYPES = {"chain_checks": list, "chain_required": list, "capacity_checks": list}


@dataclass(frozen=True)
class MetricDef:
    id: str
    names: tuple[str, ...]
    kind: str                # counter | gauge
    engines: str = "sum"     # sum | max


@dataclass(frozen=True)
class Thresholds:
    engine_labels: tuple[str, ...]
    hot_hit_ratio: float
    kv_pinned: float
    kv_pinned_windows: int
    waiting_growth_windows: int
    preemption_windows: int
    creep_windows: int
    creep_kv_rise: float
    creep_memory_rise: float
    concurrency_running: int
    long_input_tokens: int
    sustained_windows: int
    sustained_seconds: int
    report_windows: int


@dataclass(frozen=True)
class PrefixDefault:
    v1_from: str
    v1: bool
    before_v1: bool
    k3: bool


@dataclass(frozen=True)
class FaultRule:
    groups: tuple[str, ...]
    phases: tuple[str, ...]
    criterion: str


@dataclass(frozen=True)
class VerdictRule:
    verdict: str
    any_failed: tuple[str, ...] = ()
    all_passed: bool = False
    advice: str = ""


@dataclass(frozen=True)
class LadderRung:
    title: str
    regex: str | None = None   # a line that shows the rung passed (its first is the evidence)
    up: str | None = None      # rung 1: a line that shows a node's engine is up


@dataclass(frozen=True)
class AcceptanceData:
    metrics: tuple[MetricDef, ...]
    thresholds: Thresholds
    prefix_default: PrefixDefault
    chain_checks: tuple[str, ...]
    chain_required: tuple[str, ...]
    capacity_checks: tuple[str, ...]
    faults: tuple[FaultRule, ...]
    rules: tuple[VerdictRule, ...]
    ladder: tuple[LadderRung, ...]

    def metric_of(self) -> dict[str, MetricDef]:
        """Every published name (counters also with `_total`) -> its definition."""
        out: dict[str, MetricDef] = {}
        for m in self.metrics:
            for n in m.names:
                out[n] = m
                if m.kind == "counter":
                    out[n + "_total"] = m
        return out


@lru_cache(maxsize=4)
def default_acceptance_data() -> AcceptanceData:
    return load_acceptance_data()


def load_acceptance_data(path: Path | str | None = None) -> AcceptanceData:
    """Load acceptance.toml (default: the built-in one); raises CatalogueError listing every problem."""
    path = Path(path) if path else data_dir("patterns") / "acceptance.toml"
    issues: list[Issue] = []
    data = _load(path, issues)
    if issues or data is None:
        raise CatalogueError(f"{len(issues)} problem(s) in {path.name}; first: {issues[0] if issues else 'unreadable'}",
                             issues, issues[0].location if issues else SourceLocation(str(path)))
    return data


def _load(path: Path, issues: list[Issue]) -> AcceptanceData | None:
    got = read_toml(path, issues)
    if got is None:
        return None
    raw, text = got

    def err(message: str, key: str, start: int = 1, end: int | None = None) -> None:
        issues.append(Issue("error", "acceptance", message, SourceLocation(str(path), key_line(text, start, end, key))))

    for k in sorted(set(raw) - TOP_KEYS):
        err(f"unknown top-level key {k!r}", k)
    thresholds = _typed(raw.get("thresholds", {}), THRESHOLD_TYPES, "thresholds", err)
    default = _typed(raw.get("prefix_caching_default", {}), DEFAULT_TYPES, "prefix_caching_default", err)
    verdict = _typed(raw.get("verdict", {}), VERDICT_TYPES, "verdict", err)
    metrics = [MetricDef(d["id"], tuple(d["names"]), d["kind"], d.get("engines", "sum"))
               for d in _tables(raw, text, "metric", METRIC_KEYS, err, _metric_ok)]
    faults = [FaultRule(tuple(d["groups"]), tuple(d.get("phases", ())), d["criterion"])
              for d in _tables(raw, text, "fault", FAULT_KEYS, err, _fault_ok)]
    rules = [VerdictRule(d["verdict"], tuple(d.get("any_failed", ())), bool(d.get("all_passed", False)),
                         d.get("advice", "")) for d in _tables(raw, text, "rule", RULE_KEYS, err, _rule_ok)]
    ladder = [LadderRung(d["title"], d.get("regex"), d.get("up"))
              for d in _tables(raw, text, "rung", RUNG_KEYS, err, _rung_ok)]
    if len(raw.get("rung", [])) != RUNGS:
        err(f"the recovery ladder has {RUNGS} [[rung]] tables, in order", "rung")
    ids = [m.id for m in metrics]
    for need in ("prefix_cache_queries", "prefix_cache_hits", "kv_cache_usage", "running", "waiting", "preemptions"):
        if need not in ids:
            err(f"[[metric]] {need!r} is missing", "metric")
    if len(set(ids)) != len(ids):
        err("[[metric]] ids must be unique", "id")
    if not rules or rules[-1].any_failed or rules[-1].all_passed:
        err("the last [[rule]] must be the fallback (neither any_failed nor all_passed)", "verdict")
    if issues:
        return None
    return AcceptanceData(tuple(metrics), Thresholds(**{k: tuple(v) if isinstance(v, list) else v
                                                        for k, v in thresholds.items()}),
                          PrefixDefault(**default), tuple(verdict["chain_checks"]), tuple(verdict["chain_required"]),
                          tuple(verdict["capacity_checks"]), tuple(faults), tuple(rules), tuple(ladder))


def _typed(table: object, types: dict[str, type], name: str, err) -> dict:
    out: dict = {}
    table = table if isinstance(table, dict) else {}
    for k in sorted(set(table) - set(types)):
        err(f"[{name}] unknown key {k!r}", k)
    for k, typ in types.items():
        v = table.get(k)
        if typ is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        ok = isinstance(v, typ) and (typ is bool or not isinstance(v, bool))
        if ok and typ is list:
            ok = all(isinstance(x, str) for x in v)
        if not ok:
            err(f"[{name}] {k} must be {'a list of strings' if typ is list else 'a ' + typ.__name__}", k)
        out[k] = v
    return out


def _tables(raw: dict, text: str, name: str, keys: set[str], err, valid) -> list[dict]:
    starts = table_starts(text, name)
    out = []
    for i, d in enumerate(raw.get(name, [])):
        start = starts[i] if i < len(starts) else 1
        end = starts[i + 1] if i + 1 < len(starts) else None
        if not isinstance(d, dict):
            err(f"[[{name}]] must be a table", name, start, end)
            continue
        for k in sorted(set(d) - keys):
            err(f"[[{name}]] unknown key {k!r}", k, start, end)
        problem = valid(d)
        if problem:
            err(f"[[{name}]] {problem}", problem.split()[0], start, end)
            continue
        out.append(d)
    return out


def _strs(v: object) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v)


def _metric_ok(d: dict) -> str | None:
    if not isinstance(d.get("id"), str) or not _strs(d.get("names")):
        return "id and names (a list of strings) are required"
    if d.get("kind") not in ("counter", "gauge"):
        return "kind must be counter or gauge"
    if d.get("engines", "sum") not in ("sum", "max"):
        return "engines must be sum or max"
    return None


def _fault_ok(d: dict) -> str | None:
    if not _strs(d.get("groups")) or ("phases" in d and not _strs(d["phases"])):
        return "groups (and phases) must be lists of strings"
    if d.get("criterion") not in CRITERIA:
        return f"criterion must be one of {', '.join(CRITERIA)}"
    return None


def _rung_ok(d: dict) -> str | None:
    if not isinstance(d.get("title"), str) or not d["title"]:
        return "title is required"
    for key in ("regex", "up"):
        if key in d and (not isinstance(d[key], str) or regex_error(d[key]) is not None):
            return f"{key} must be a regex the Rust engine compiles"
    if "regex" not in d:
        return "samples need a regex" if d.get("samples") or d.get("no_match") else None
    samples, near = d.get("samples", []), d.get("no_match", [])
    if not _strs(samples) or (near and not _strs(near)):
        return "samples (and no_match) must be lists of strings"
    hits = pl.Series(samples + near, dtype=pl.String).str.contains(d["regex"]).to_list()
    if not all(hits[:len(samples)]):
        return f"samples: {samples[hits.index(False)]!r} does not match the regex"
    if any(hits[len(samples):]):
        return f"no_match: {near[hits[len(samples):].index(True)]!r} matches the regex"
    return None


def _rule_ok(d: dict) -> str | None:
    if d.get("verdict") not in VERDICTS:
        return f"verdict must be one of {', '.join(VERDICTS)}"
    if "any_failed" in d and (not _strs(d["any_failed"]) or set(d["any_failed"]) - set(CRITERIA)):
        return f"any_failed must name criteria among {', '.join(CRITERIA)}"
    if not isinstance(d.get("all_passed", False), bool) or not isinstance(d.get("advice", ""), str):
        return "all_passed must be a boolean and advice a string"
    return None
