"""Decide what failed first: the first CAUSE across all ranks and nodes after clock alignment.

- Symptoms (watchdog timeouts, dead engines, dead actors, ChildFailedError, peer resets, launcher
  SIGTERMs) never win while a cause exists; benign context lines veto the causes they also match.
- A cause explains later causes of the categories it lists (`explains`) in its scope (node, rank or the
  whole bundle): an Xid explains the CUDA errors on its node, /dev/shm and dmabuf failures explain
  'unhandled system error', an oom-kill explains the vanished worker and the peers' timeouts. An
  explained cause is a symptom of the one that explains it.
- The phase is the last lifecycle landmark the event's worker reached (the node's, for processes that
  are not workers and for kernel lines); OOM signatures are refined by that phase.
- With no cause: a symptom whose category is a root-cause category (nccl.timeout alone) stands, with low
  confidence; else the first exception on the earliest-failing rank is named `other`, its repeats across
  ranks grouped by template similarity (rapidfuzz).
"""
from __future__ import annotations

import polars as pl

from k3logs.catalogue.signatures import Catalogue

from .borrow import borrow_rank, figure_node, lagging_phase, shared_event, silent_peer, stack_phase, stopping_phase
from .detect import families, named_causes, outcome_data
from .findings import (EXPLAIN_WINDOW_S, SAME_FAILURE_S, TIE_SECONDS, Decision, Finding, benign_eids, exceptions,
                       findings_of, load_before, told_by_known)
from .late import said_late, to_first_consequence
from .loops import dated_back, first_failures, killed_unlogged
from .lifeline import NODE_SOURCES
from .order import first, seconds, sort_key
from .runs import earlier_runs
from .outcome import HEALTHY, KERNEL_SLACK_S, Lifecycle
from .survived import (copies_aside, one_pod_named, recoveries, set_aside, unexplain_by_set_aside, workload,
                       workloads, world_nodes)
from .templates import mask_template, same_template
from .vanished import (accounted, kills_before_deaths, names_victim, peer_gone_first, says_why, stuck_rank,
                       vanished_worker)
from .waits import waited_for


def _in_scope(a: Finding, b: Finding, scope: str) -> bool:
    if scope == "bundle":
        return True
    if scope == "rank":
        return a.rank is not None and a.rank == b.rank and a.node == b.node
    return a.node == b.node or a.node is None or b.node is None


def _explain(findings: list[Finding], cat: Catalogue) -> None:
    """Mark each finding that an earlier cause in scope explains; a line that names what caused it ('caused by
    previous Xid 149') is explained by that earlier finding; a match of a signature that is a consequence of
    what came before it (`after`: an abort after a collective timed out) is that one's symptom."""
    sigs = {s.id: s for s in cat.signatures}
    _named_causes(findings)
    _bursts(findings)
    for b in findings:
        sig = sigs.get(b.sig) if b.sig else None
        if sig is not None and sig.after and b.role == "cause":
            before = [a for a in findings if a.category in sig.after and a.node == b.node
                      and (dt := seconds(a, b)) is not None and 0 <= dt <= EXPLAIN_WINDOW_S
                      and (a.sig != b.sig or sort_key(a) < sort_key(b))]   # (not itself, nor its own next line)
            if before:
                b.role = "symptom"
                b.fields = {**b.fields, "after": before[0].text[:200]}
    causes = [f for f in findings if f.role == "cause"]
    at = {id(f): i for i, f in enumerate(findings)}
    for b in findings:
        for a in causes:
            if a is b or a.category == b.category or a.sig is None:
                continue
            sig = sigs[a.sig]
            collective = b.category in cat.categories and cat.categories[b.category].collective
            if b.category not in sig.explains or not (collective or _in_scope(a, b, sig.scope)):
                continue
            dt = seconds(a, b)
            if dt is None:
                ok = a.node == b.node or sig.scope == "bundle"  # the kernel's relative clock: same node
            else:  # (a kernel line's clock may run seconds apart from the application's: dmesg -T drifts; a state
                # of its node that `persists` explains what fails there however much later)
                ok = -(KERNEL_SLACK_S if a.source == "kernel" else TIE_SECONDS) <= dt \
                    and (dt <= EXPLAIN_WINDOW_S or (sig.persists and a.node is not None and a.node == b.node))
            if ok:
                b.explainers.add(at[id(a)])
            if ok and (b.explained_by is None or sort_key(a) < sort_key(findings[b.explained_by])):
                b.explained_by = at[id(a)]


def _named_causes(findings: list[Finding]) -> None:
    """'... caused by previous Xid 149' (landmarks.toml [[named_cause]]): the earlier finding on the same node
    whose field holds that value explains it."""
    for rule in named_causes():
        for b in findings:
            m = rule.regex.search(b.text)
            if not m:
                continue
            named = [a for a in findings if a is not b and a.node == b.node and str(a.fields.get(rule.field)) ==
                     m.group(rule.field) and sort_key(a) <= sort_key(b)]
            if named:
                b.explained_by = findings.index(sorted(named, key=sort_key)[0])


def _bursts(findings: list[Finding]) -> None:
    """A device's burst (landmarks.toml [[family]]): the first match of the signature on one device is the
    cause, and the matches that follow it within the family's seconds are its consequences (an Xid 13, then an
    Xid 109 of the same GPU: the 13 is the cause, though alone it would only be context)."""
    at = {id(f): i for i, f in enumerate(findings)}
    for rule in families():
        devices: dict[tuple, list[Finding]] = {}
        for f in findings:
            if f.sig == rule.signature and f.fields.get(rule.field) is not None and f.ts is not None:
                devices.setdefault((f.node, f.fields[rule.field]), []).append(f)
        for burst in devices.values():
            lead, *rest = sorted(burst, key=sort_key)
            later = [f for f in rest if (dt := seconds(lead, f)) is not None and 0 <= dt <= rule.seconds]
            if any(f.role == "cause" for f in later):
                lead.role = "cause"
            for f in later:
                if f.role in ("cause", "symptom") and lead.role == "cause":
                    f.role, f.explained_by = "symptom", at[id(lead)]


def _statement(root: Finding, findings: list[Finding]) -> Finding:
    """The line that states the cause: an NCCL failure surfaces in Python ('... unhandled system error ...
    Last error: <the WARN>'), but the WARN line of the same process names the failing call. NCCL debug
    files often carry no time, so the WARN of the same process and category is preferred when it is not
    later than the exception. A kernel's statement of its adapter's failure is the device's own: a WARN stamped a
    second later follows it; one stamped within its second (whose order is not known) names the failing call."""
    if root.source == "nccl" or not root.category.startswith("nccl."):
        return root
    kernel = root.source in NODE_SOURCES
    coarse = root.ts is not None and root.ts.microsecond == 0   # (a kernel time to the second: dmesg -T, syslog)

    def soon(dt: float) -> bool:
        return (dt < 1.0 if coarse else dt <= 0.0) if kernel else dt <= TIE_SECONDS
    same = [f for f in findings if f.source == "nccl" and f.category == root.category and f.role == "cause"
            and f.node == root.node and ((f.pid is not None and f.pid == root.pid)
                                         or (f.rank is not None and f.rank == root.rank))
            and (f.ts is None or root.ts is None or soon((f.ts - root.ts).total_seconds()))]
    if not same:
        return root
    pick = sorted(same, key=sort_key)[0]
    if pick.ts is None:  # it happened just before the exception that quotes it
        pick.ts, pick.ts_quality, pick.phase = root.ts, "inferred", root.phase
    return pick


def _specific(root: Finding, findings: list[Finding], cat: Catalogue) -> Finding:
    """A root of a category the taxonomy gives only when nothing more specific is found ('unhandled system error')
    is the first cause on its node that names what it was, whenever that came (a rerun with NCCL's debug output
    shows the /dev/shm that a first run's bare error hid): the cause of a kind that explains it."""
    if not (c := cat.categories.get(root.category)) or not c.unspecific:
        return root
    sigs = {s.id: s for s in cat.signatures}
    named = [f for f in findings if f.role == "cause" and f.set_aside is None and f.category != root.category
             and f.node == root.node and f.sig in sigs and root.category in sigs[f.sig].explains]
    return first(named, cat) if named else root


def _stated_before(root: Finding, findings: list[Finding], cat: Catalogue) -> Finding:
    """A fault as first stated: the earliest context line whose signature `states` its category, or for a symptom
    a category whose causes explain it (Ray marking a node dead, or failing its health checks, before an actor dies
    with its node or the collective its ranks were in times out), within the explanation window before it; a
    cause's only by its own process (a request retried before the error its last retry raises); a line that names a
    moment (a reboot announced for then: `at`) states only what happens on its node at that moment, however long
    before."""
    states = {s.id: s.states for s in cat.signatures if s.states}
    explained = {c: {e for s in cat.signatures if s.role == "cause" and s.category == c for e in s.explains}
                 for c in set(states.values())}
    said = [f for f in findings if f.role == "context" and f.set_aside is None and f.ts and root.ts
            and f.sig in states and "at_utc" not in f.fields
            and (root.category == states[f.sig] and (f.file, f.pid) == (root.file, root.pid) if root.role == "cause"
                 else root.category in {states[f.sig], *explained[states[f.sig]]})
            and 0 <= (root.ts - f.ts).total_seconds() <= EXPLAIN_WINDOW_S]
    said += [f for f in findings if f.role == "context" and f.set_aside is None and f.sig in states
             and states[f.sig] == root.category and root.role == "cause" and f.node == root.node
             and (at := f.fields.get("at_utc")) is not None and root.ts is not None and f.ts is not None
             and f.ts <= root.ts and abs((root.ts - at).total_seconds()) <= SAME_FAILURE_S]
    if not said:
        return root
    stated = min(said, key=sort_key)
    stated.category = states[stated.sig]
    stated.title = cat.categories[stated.category].title
    return stated


def _confirmed(findings: list[Finding], cat: Catalogue) -> None:
    """A context line whose signature `states` a fault of a node (Ray failing its health checks, marking it dead) is
    that fault's cause once a symptom of the same fault about the same node follows it within a minute (the
    deployment's actors died with that node): a cause, not a statement left for the symptom to find."""
    states = {s.id: s.states for s in cat.signatures if s.states}
    for f in findings:
        if f.role != "context" or f.set_aside is not None or f.sig not in states or f.node is None or f.ts is None \
                or "at_utc" in f.fields:
            continue
        if any(g.role == "symptom" and g.category == states[f.sig] and g.node == f.node and g.set_aside is None
               and (dt := seconds(f, g)) is not None and 0 <= dt <= SAME_FAILURE_S for g in findings):
            f.role, f.category = "cause", states[f.sig]
            f.title = cat.categories[f.category].title


def _other(candidates: list[Finding], findings: list[Finding]) -> tuple[Finding | None, str | None, int]:
    """The first exception the service did not survive (not a known symptom's line, if another is left), and
    how many node/ranks repeat its template."""
    left = [f for f in candidates if f.set_aside is None]
    if not left:
        return None, None, 0
    symptoms = {f.eid for f in findings if f.role == "symptom"}
    f = next((c for c in left if c.eid not in symptoms), left[0])
    template = mask_template(f.text)
    same = {(x.node, x.rank) for x in left if same_template(template, mask_template(x.text))}
    return f, template, len(same)


def _failed_start_first(others: list[Finding], causes: list[Finding], findings: list[Finding],
                        life: Lifecycle) -> bool:
    """An error no signature knows that failed its node's start (the traceback after 'EngineCore failed to start',
    in the same attempt), whose attempt then stopped before any known cause came: the known causes are later
    attempts' (a restart that waits for peers the failed start left behind), and the first start's own error is the
    origin."""
    error = next((o for o in others if o.set_aside is None and o.ts is not None), None)
    if error is None or (stop := life.stops.get((error.node, life.attempt_of(error)))) is None or stop.ts is None \
            or stop.ts < error.ts:
        return False
    failed = any(f.category in outcome_data().unready and f.node == error.node and f.set_aside is None
                 and life.attempt_of(f) == life.attempt_of(error)
                 and (dt := seconds(f, error)) is not None and 0 <= dt <= SAME_FAILURE_S for f in findings)
    return failed and all(c.ts is not None and c.ts > stop.ts for c in causes)


def _never_ready_after(root: Finding, findings: list[Finding], life: Lifecycle) -> bool:
    """A symptom that says the server never became ready ('EngineCore failed to start') follows the root in its
    node's attempt, or states it in the same second (the header before its traceback): the root came before
    readiness, whatever landmark another process printed before it."""
    return any(f.category in outcome_data().unready and f.set_aside is None and f.node == root.node
               and life.attempt_of(f) == life.attempt_of(root)
               and (sort_key(root) <= sort_key(f) or abs(seconds(root, f) or 0.0) <= TIE_SECONDS) for f in findings)


def _seen_failing(root, findings: list, life: Lifecycle, cat: Catalogue):
    """Where the run was seen to fail first: the root, or, for a root before readiness whose node became ready
    (a transport missing at start), the first failure it explains once the deployment served; for a state of its
    node that `persists` (a filesystem gone read-only) that the server running then outlived, the first failure it
    explains in a later attempt (the next start)."""
    at = findings.index(root) if root in findings else -1
    explained = [f for f in findings if at >= 0 and f.explained_by == at and f.set_aside is None]
    if life.ready_before(root) and root.sig is not None and cat.by_id(root.sig).persists:
        later = [f for f in explained if life.attempt_of(f) != life.attempt_of(root)]
        return first(later, cat) if later else root
    if life.ready_before(root) or root.unready:
        return root
    later = [f for f in explained if life.ready_before(f)]
    return first(later, cat) if later else root


def decide(ev: pl.DataFrame, det: pl.DataFrame, cat: Catalogue, app_files: frozenset[str] | set[str] | None = None,
           prose: frozenset[str] | set[str] = frozenset(), restarts_seen: int | None = None,
           peer_node: dict[str, str] | None = None, pid_rank: dict[tuple, int] | None = None,
           raised_by: dict[tuple[str, int], tuple] | None = None,
           described: dict[str, str] | None = None, pods: frozenset[str] | set[str] = frozenset(),
           restarting: bool = False, device_rank: dict[tuple, int] | None = None,
           loop_since: dict | None = None) -> Decision:
    """The outcome of the run, and the earliest event that explains it (module docstring, outcome.py).
    `app_files`: the deployment's own logs (default: every file); `prose`: files read as plain text (notes,
    tickets): their untimed plain lines mention errors; `restarts_seen`: restarts the orchestrator's state
    shows (a pod's or container's restart count); `peer_node`: the node of each IP the bundle ties to one;
    `pid_rank`: the rank of each (node, host pid), as the kernel and the host's tools see pids; `raised_by`: the
    (node, rank) of the actor that raised what a relayed traceback's line shows, by (file, line); `described`:
    the pod a file describes, by file (a describe's event rows name no pod); `pods`: the pods the bundle names;
    `restarting`: the deployment's container was being started again when the bundle was taken; `device_rank`: the
    rank of each (node, CUDA device); `loop_since`: the start of the pod of each node whose container crash-loops."""
    pid_rank = pid_rank or {}
    life = Lifecycle(ev, set(ev["file"].unique().to_list()) if app_files is None else app_files, restarts_seen,
                     host_pids=pid_rank, restarting=restarting)
    findings = findings_of(ev, det, cat)
    kills_before_deaths(findings)
    first_failures(findings, loop_since or {}, ev)
    to_first_consequence(findings, cat, peer_node or {})
    _explain(findings, cat)
    others = told_by_known(exceptions(ev, benign_eids(det, cat, findings),
                                      [f.eid for f in findings if f.role == "symptom"]), findings)
    for f in findings + others:   # (the pod a line is about: the one its describe is of, or the one pod an event
        # row or a listing's row names)
        if not f.fields.get("pod") and (pod := (described or {}).get(f.file) or one_pod_named(f.text, pods)):
            f.fields["pod"] = pod
    sigs = {s.id: s for s in cat.signatures}
    # (categories of the whole node's faults, and the signatures of such a state in a category that also holds others)
    node_wide = frozenset(c.id for c in cat.categories.values() if c.node_wide) | \
        frozenset(s.id for s in cat.signatures if s.node_wide)
    app_lines = ev.filter(pl.col("file").is_in(list(life.app_files)))
    app_nodes = set(app_lines["node"].drop_nulls().to_list())
    recovered = recoveries(ev, findings, cat)
    own_workloads = workloads(app_lines, pods)
    set_aside(findings + others, life, prose, recovered, sigs, node_wide,
              own_workloads, world_nodes(app_lines),
              frozenset(c.id for c in cat.categories.values() if c.collective),
              frozenset(c.id for c in cat.categories.values() if c.quiet),
              {ip: n for ip, n in (peer_node or {}).items() if n in app_nodes})
    copies_aside(findings, ev)
    peer_gone_first(findings, peer_node or {}, cat)
    unexplain_by_set_aside(findings)
    killed_unlogged(findings, life, ev)
    _confirmed(findings, cat)
    earlier_runs(findings, life, sigs, ev)
    # (requests refused before the server is ready are a probe's, not failures)
    answered = [f for f in findings if f.category in outcome_data().request_level and life.ready_before(f)]
    fatal = [f for f in findings if f.set_aside is None and f.category in outcome_data().fatal
             and (f.category not in outcome_data().request_level or f in answered)]
    deaths = [f for f in fatal if f.category not in outcome_data().request_level]   # (the engine's, not a request's)
    standing = [f for f in findings + others if f.role == "cause" and f.set_aside is None]
    failed = fatal + standing
    # (causes that explain a SIGTERM: an eviction, a node's reboot; the stop that follows them is their doing)
    killers = [f for f in standing if f.sig in sigs and "symptom.sigterm" in sigs[f.sig].explains]
    # (restarts of the deployment's pods: a monitoring agent crash-looping beside them, while it served, restarts
    # none of it)
    restarts = [f for f in findings if f.category == "symptom.restart" and not (
        life.ready and own_workloads and (pod := f.fields.get("pod")) and workload(pod) not in own_workloads)]
    again = life.failed_again(failed, restarts, killers)
    raised_by = raised_by or {}
    for f in findings:   # (a cause a relayed traceback shows is the rank's that raised it, once the run is judged)
        if f.role == "cause" and (f.file, f.line) in raised_by:
            f.raised_on, rank = raised_by[(f.file, f.line)]
            f.rank = f.rank if rank is None else rank
    causes = [f for f in findings if f.role == "cause" and f.explained_by is None and f.set_aside is None]
    if causes and _failed_start_first(others, causes, findings, life):
        causes = []   # (the first start's own error, which no signature knows, ended the attempt before any cause)
    if causes and all(f.phase == "shutdown" and (f.pid or f.fields.get("pid")) for f in causes) \
            and (lost := vanished_worker(findings, cat)) and sort_key(lost) < sort_key(first(causes, cat)) \
            and not accounted(lost, findings, cat) and not any(names_victim(f, lost, pid_rank) for f in causes):
        # (a process that crashes once the deployment winds down after a worker vanished crashes in the wind-down;
        # a node's loss, which its controller states only after a grace period, may still explain the vanishing,
        # and so does a kill that names the vanished worker's pid, logged in the same second)
        causes = []
    if causes:
        named = _statement(first(causes, cat), findings)
        picked = _specific(_stated_before(named, findings, cat), findings, cat)
        root = waited_for(picked, findings, life, ev, cat)
        kept_away = root is not picked
        root = shared_event(root, findings, peer_node or {}, recovered)
        borrow_rank(root, findings, pid_rank, node_wide, device_rank)
        # (a line that announced the moment of the fault, a reboot scheduled for then: the run came to what that
        # moment did to it, in the phase it was in by then)
        when = named if root is not named and "at_utc" in root.fields else root
        root.unready = root.unready or _never_ready_after(when, findings, life)
        root_at = findings.index(root)
        # (what the root explains failed of it: only other failures keep a hung run from being stopped by hand)
        outcome = life.outcome(_seen_failing(when, findings, life, cat), again, answered, deaths, failed, killers,
                               [g for g in failed if g.explained_by != root_at and root_at not in g.explainers])
        if (root.file, root.line) in raised_by:   # (its node: the actor's, not the one that printed it)
            root.node = raised_by[(root.file, root.line)][0]
            root.node_from = "the actor that raised it (the pid and ip its RayTaskError names)"
        silent_peer(root, findings, peer_node or {}, app_nodes)
        figure_node(root, ev)
        stack_phase(root, findings)
        if root.phase == "shutdown" and life.joined_after_stop(root) and root.sig in sigs and sigs[root.sig].phase:
            root.phase = sigs[root.sig].phase[0]   # (a node new to the run after the stop: its own next start)
        lagging_phase(root, findings, life.attempt_of, life.progress_after(root, True) is not None,
                      root.file not in life.app_files, life.progress_after(root) is not None)
        # (a stop of its node in the second it is stated: its doing, where its signature explains a stop)
        stopper = "symptom.sigterm" in sigs[root.sig].explains if root.sig in sigs else False
        made = [s for (node, _), s in life.stops.items() if stopper and node == root.node
                and (dt := seconds(s, root)) is not None and abs(dt) < TIE_SECONDS]
        stopping_phase(root, ev, made[0].ts if made else None)
        if not life.app_log and not root.phase_from_stack:   # (no lifecycle to place it in: a signature's guess)
            root.phase = None
        if when is not root:
            root.phase = when.phase
        strong = any(f.explained_by == root_at for f in findings)
        timed = root.ts is not None and root.ts_quality in ("exact", "inferred")
        weak = root.category in ("nccl.system_error", "proc.killed", "env.cuda_init_failed", "nccl.timeout")
        confidence = "high" if (timed or strong) and not weak else "medium"
        earliest = first(causes + [f for f in findings if f.role == "cause" and f.set_aside is None], cat) is root
        reason = ("the earliest cause across all ranks and nodes" if earliest else
                  "the cause that the logs name and that explains the rest") + (
            "; it explains the errors that follow it" if strong else "") + (
            "; it kept away the peers a wait timed out for" if kept_away else "") + dated_back(root) + said_late(root)
        load = load_before(ev, root) if root.category == "oom.inference" else None
        return Decision(False, root, confidence, reason, findings, load=load, outcome=outcome)
    first_death = first(fatal, cat) if fatal else None
    other, template, repeats = _other(others, findings)
    failure = first([f for f in (first_death, other) if f is not None], cat) if (first_death or other) else None
    if other is not None and other.unready and failure is not None and failure is not other \
            and (dt := seconds(failure, other)) is not None and 0 <= dt <= SAME_FAILURE_S:
        failure.unready = True   # (a start's own error, printed as its process exits, after the workers it took down)
    outcome = life.outcome(failure, again, answered, deaths, failed, killers)
    if failure is None:
        healthy = outcome.state in HEALTHY
        return Decision(healthy, None, "high" if healthy else "low",
                        "nothing abnormal was found before the run " + (
                            "was stopped" if outcome.state == "stopped" else "ends") if healthy
                        else outcome.detail, findings, outcome=outcome)
    vanished = vanished_worker(findings, cat)
    symptom_lines = {f.eid for f in findings if f.role == "symptom"}
    own_error = other if other is not None and other.eid not in symptom_lines else None
    silent = vanished is not None and not says_why(own_error, vanished) and not accounted(vanished, findings, cat)
    # (a worker reported gone before the others timed out: the collective it never began waited for it)
    if (stuck := stuck_rank(findings)) is not None and not (silent and sort_key(vanished) < sort_key(stuck)):
        return Decision(False, stuck, "low", "the ranks timed out in a collective that one rank never began (its "
                        "last enqueued work is behind its communicator's): that rank was stuck, the others waited "
                        "for it", findings + [stuck], outcome=outcome)
    if silent:
        return Decision(False, vanished, "low", "a worker vanished and nothing in the bundle says why: it was killed "
                        "from outside (an OOM killer, an operator, an orchestrator) on its node",
                        findings + [vanished], outcome=life.outcome(vanished, again, answered, deaths, failed, killers))
    roots = {k for k, c in cat.categories.items() if c.group not in ("symptom", "context")}
    # (a symptom its node went on from, a retried connect, says nothing of the failure; nor does one its own process
    # went on from in the same second, which a whole node's work in that second does not prove)
    fallback = [f for f in findings if f.role == "symptom" and f.category in roots and f.set_aside is None
                and life.progress_after(f) is None and life.progress_after(f, node_wide=True) is None]
    if fallback:
        root = _stated_before(first(fallback, cat), findings, cat)
        borrow_rank(root, findings, pid_rank, node_wide, device_rank)
        return Decision(False, root, "low",
                        "only symptoms were found; the earliest one that names a root-cause category is reported, "
                        "but the real cause is probably outside the bundle", findings, outcome=outcome)
    if other is not None:
        return Decision(False, other, "low", "no signature fits; the first exception the service did not survive "
                        "is reported", findings + [other], template=template, repeats=repeats, outcome=outcome)
    root = first_death
    root.category = "other"
    return Decision(False, root, "low", "only symptoms were found and no cause; reported as `other`", findings,
                    outcome=outcome)
