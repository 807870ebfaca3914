"""A crash loop repeats its failure: a container that its orchestrator has restarted again and again since its pod
started, and whose log holds only its last attempt (`kubectl logs` shows the current or the previous run), failed
the same way on every attempt when the failure came before the process spoke to any peer (its arguments, its
image, its devices: nothing another node does changes them). Its first failure was at the loop's start, not at
the time the last attempt printed it (how-it-decides.md)."""
from __future__ import annotations

from datetime import datetime, timezone

import polars as pl

from .findings import SAME_FAILURE_S, Finding
from .order import sort_key
from .survived import workload, workloads

# phases before a process speaks to a peer: what fails there fails the same way on every start
ON_ITS_OWN = ("startup", "device_init")
# restarts that make a loop: one restart may have had another cause (a group restart, an eviction)
LOOP_RESTARTS = 2


def restarts_seen(facts: list, app_lines: pl.DataFrame, pods: frozenset[str] | set[str]) -> int | None:
    """The most restarts the orchestrator's state shows of the deployment's containers: a listing row of a pod
    of another workload than the deployment's own pods (a monitoring agent crash-looping beside it) counts none of
    them; where the deployment's workloads are not known, every count."""
    own = workloads(app_lines, pods)
    pod_at = {(f.file, f.line): f.value.split()[0] for f in facts if f.name == "pod_node" and f.value}
    return max((int(f.value) for f in facts if f.name == "restart_count" and f.value.isdigit()
                and not (own and (pod := pod_at.get((f.file, f.line))) and workload(pod) not in own)), default=None)


def loop_starts(facts: list) -> dict[str, datetime]:
    """Nodes whose pod restarted its container at least LOOP_RESTARTS times -> the pod's start (in UTC), from
    the record that states both (a describe, a pod's status)."""
    restarts = {(f.file, f.node): int(f.value) for f in facts if f.name == "restart_count" and f.value.isdigit()}
    since: dict[str, datetime] = {}
    for f in facts:
        if f.name != "pod_started" or not f.node or restarts.get((f.file, f.node), 0) < LOOP_RESTARTS:
            continue
        try:
            at = datetime.fromisoformat(f.value)
        except ValueError:
            continue
        if at.tzinfo is None:   # (a start with no zone cannot be placed against the logs' UTC)
            continue
        at = at.astimezone(timezone.utc)
        since[f.node] = min(at, since.get(f.node, at))
    return since


def first_failures(findings: list[Finding], since: dict[str, datetime], ev: pl.DataFrame) -> None:
    """A cause of a node in a crash loop, in a phase before any peer, in a log that begins more than SAME_FAILURE_S
    after the loop's start and is the node's first start in the bundle (its last attempt only), happened first at
    the loop's start plus its time into the attempt: it is placed there (and the findings are put in time order
    again) where that puts it before another node's cause, and passes none of its own node's."""
    mine = [f for f in findings if f.role == "cause" and f.node in since and f.phase in ON_ITS_OWN
            and f.ts is not None]
    if not mine:
        return
    starts = ev.filter(pl.col("node").is_in(list(since)) & (pl.col("mark") == "startup") & pl.col("ts").is_not_null())
    first_start = dict(starts.group_by("node").agg(pl.col("ts").min()).iter_rows())
    begun = dict(ev.filter(pl.col("file").is_in([f.file for f in mine])).group_by("file")
                 .agg(pl.col("ts").min()).iter_rows())
    causes = [g for g in findings if g.role == "cause" and g.ts is not None]
    moved = False
    for f in mine:
        start, loop = begun.get(f.file), since[f.node]
        if start is None or (start - loop).total_seconds() <= SAME_FAILURE_S or f.ts < start \
                or first_start.get(f.node, start) < start:   # (an earlier attempt in the bundle: the first)
            continue
        at = loop + (f.ts - start)
        passed = [g for g in causes if at <= g.ts < f.ts and g.file != f.file]
        if any(g.node == f.node for g in passed) or not any(g.node != f.node for g in passed):
            continue
        f.fields["loop_since"], f.fields["printed_at"] = loop.isoformat(), f.ts.isoformat()
        f.ts, f.ts_until, f.ts_quality, moved = at, None, "inferred", True
    if moved:
        findings.sort(key=sort_key)


def killed_unlogged(findings: list[Finding], life, ev: pl.DataFrame) -> None:
    """A start killed from outside (a probe that failed, an orchestrator's kill) whose log the bundle does not hold
    (every log of the deployment begins after the kill: a dump of the current containers) failed the way the next
    start does: where the first cause after the kill comes before the deployment was ready, the kill is that
    cause's symptom, a start that hung on it, not a probe too tight for a slow start."""
    app = ev.filter(pl.col("file").is_in(list(life.app_files)) & pl.col("ts").is_not_null())
    if not app.height:
        return
    logged_from = app["ts"].min()
    causes = [f for f in findings if f.role == "cause" and f.set_aside is None and f.explained_by is None
              and f.ts is not None]
    for kill in [f for f in causes if f.category == "proc.killed" and f.file not in life.app_files
                 and f.ts < logged_from]:
        after = [f for f in causes if f.ts > kill.ts and f.category != "proc.killed"]
        if not after or (nxt := min(after, key=sort_key)).file not in life.app_files or life.ready_before(nxt):
            continue
        # (no `explained_by`: that link runs forward in time, and the kill came first)
        kill.role, kill.fields["start_failed_on"] = "symptom", f"{nxt.file}:{nxt.line}"


def dated_back(root: Finding) -> str:
    """What the reason says of a cause placed at its loop's start."""
    if "loop_since" not in root.fields:
        return ""
    return (f"; its container crash-loops since its pod started ({root.fields['loop_since']}) and its log holds only "
            f"the last attempt, which printed it at {root.fields['printed_at']}: it failed the same way from the "
            "first start")
