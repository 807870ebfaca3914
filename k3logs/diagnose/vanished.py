"""Who failed first when nothing says why: a worker that vanished with no cause anywhere (a dead worker, a dead actor,
a failed child) was killed from outside, and the cause is proc.killed on that worker; a rank whose collective
work is behind its communicator's when their watchdogs fire was stuck, and the timeouts are its (how-it-decides.md)."""
from __future__ import annotations

from k3logs.catalogue.signatures import Catalogue

from .detect import outcome_data
from .findings import EXPLAIN_WINDOW_S, SAME_FAILURE_S, TIE_SECONDS, Finding, as_int
from .order import first, seconds, sort_key


def says_why(error: Finding | None, gone: Finding) -> bool:
    """An error came before the worker was reported gone, or with it (its traceback follows 'WorkerProc
    failed to start' on the same node): the worker did not vanish silently."""
    if error is None:
        return False
    if sort_key(error) < sort_key(gone):
        return True
    dt = seconds(gone, error)
    return error.node == gone.node and dt is not None and dt <= SAME_FAILURE_S


def _losses(cat: Catalogue) -> tuple[set[str], set[str]]:
    """The categories whose causes explain workers gone (a node lost, a host OOM), and the context signatures
    that state one of them (the GCS marking a node dead)."""
    vanished = outcome_data().vanished
    explaining = {s.category for s in cat.signatures if s.role == "cause" and set(s.explains) & vanished}
    return explaining, {s.id for s in cat.signatures if s.states in explaining}


def accounted(gone: Finding, findings: list[Finding], cat: Catalogue) -> bool:
    """A symptom of a root category says why the worker went (Ray: 'the actor died because its node has
    died'): at the same time, on its node, of a category whose causes explain workers gone; or, before it, a
    context line that states such a category on its node (the GCS marking the node dead)."""
    explaining, states = _losses(cat)
    return any(f.set_aside is None and f.node == gone.node and (dt := seconds(f, gone)) is not None and (
        (f.role == "symptom" and f.category in explaining and abs(dt) <= SAME_FAILURE_S)
        or (f.role == "context" and f.sig in states and 0 <= dt <= EXPLAIN_WINDOW_S)) for f in findings)


def names_victim(f: Finding, gone: Finding, pid_rank: dict[tuple, int]) -> bool:
    """f is a kill (or a crash) of the process that vanished: the pid it names is, on its node, the gone worker's
    rank's, and it is logged within a second of the report (one of them stamped in whole seconds)."""
    victim = as_int(f.fields.get("pid"))
    return victim is not None and gone.rank is not None and pid_rank.get((f.node, victim)) == gone.rank \
        and f.node == gone.node and (dt := seconds(gone, f)) is not None and abs(dt) < TIE_SECONDS


def vanished_worker(findings: list[Finding], cat: Catalogue) -> Finding | None:
    """With no cause anywhere: the first worker reported gone (a dead worker, a dead actor, a failed child)
    was killed from outside. The cause is proc.killed on that worker, not the error the engine raises
    after it."""
    data = outcome_data()
    gone = [f for f in findings if f.set_aside is None and f.category in data.vanished]
    if not gone:
        return None
    # the report that names the worker (its rank) says more than the engine's own 'a worker died'
    w = first([f for f in gone if f.rank is not None] or gone, cat)
    sig = cat.by_id(data.killed_signature) if data.killed_signature else None
    who = f"rank {w.rank}" if w.rank is not None else (w.fields.get("worker") or w.fields.get("proc") or "a worker")
    return Finding(eid=w.eid, sig=sig.id if sig else None, category="proc.killed", role="cause", priority=0,
                   file=w.file, line=w.line, span=w.span, ts=w.ts, ts_quality=w.ts_quality, node=w.node, rank=w.rank,
                   pid=w.pid, phase=w.phase, text=w.text, fields=w.fields,
                   title=f"{who} vanished with no cause in the bundle (killed from outside?)")


def peer_gone_first(findings: list[Finding], peer_node: dict[str, str], cat: Catalogue) -> None:
    """A connection error that names its peer (NCCL's 'Got completion from peer IP', 'Connect to IP failed')
    after a worker of the peer's node was reported gone, or the node itself reported lost (a context line that
    states a node's loss: the GCS failing its health checks), within SAME_FAILURE_S: the process at the other end
    had died; the link did not fail. A peer address the bundle ties to no node (an RDMA address) is the lost one's
    when one node alone was reported lost then. Set aside, so that what took the worker, or the node, is the cause."""
    vanished = outcome_data().vanished
    states = _losses(cat)[1]
    gone = [g for g in findings if g.set_aside is None and g.node is not None
            and (g.category in vanished or (g.role == "context" and g.sig in states))]
    nodes = set(peer_node.values()) | {g.node for g in findings if g.node}
    for f in findings:
        peer = f.fields.get("peer") if f.role == "cause" and f.set_aside is None else None
        if not peer:
            continue
        before = [g for g in gone if g.node != f.node and (dt := seconds(g, f)) is not None and 0 <= dt <= SAME_FAILURE_S]
        node = peer_node.get(peer, peer)
        if node in nodes:
            before = [g for g in before if g.node == node]
        elif len({g.node for g in before if g.role == "context"}) == 1:
            before = [g for g in before if g.role == "context"]
        else:
            continue
        if before:
            g = min(before, key=sort_key)
            what = "was reported lost" if g.role == "context" else "had lost a worker"
            f.set_aside = f"its peer {g.node} {what} just before ({g.file}:{g.line}): the process at the other end " \
                          "was gone"


def stuck_rank(findings: list[Finding]) -> Finding | None:
    """Every member of a communicator reports its last enqueued collective when the watchdog fires (torch's
    'PG status: last enqueued work: N', 'Last enqueued NCCL work: N'): a member whose count is behind the others'
    never began the collective they timed out in. It was stuck (not dead), and the others waited for it: the cause
    is nccl.timeout on that rank, at the first line that shows it behind."""
    members: dict[str, list[tuple[int, Finding]]] = {}
    for f in findings:
        pg, done = f.fields.get("pg"), f.fields.get("enqueued")
        if f.set_aside is None and f.category == "nccl.timeout" and pg and done and done.lstrip("-").isdigit():
            members.setdefault(pg, []).append((int(done), f))
    behind = [f for group in members.values() if len({f.rank for _, f in group}) >= 2
              for n, f in group if n < max(m for m, _ in group) and f.rank is not None]
    if not behind:
        return None
    w = min(behind, key=sort_key)
    return Finding(eid=w.eid, sig=w.sig, category="nccl.timeout", role="cause", priority=0, file=w.file, line=w.line,
                   span=w.span, ts=w.ts, ts_quality=w.ts_quality, node=w.node, rank=w.rank, pid=w.pid, phase=w.phase,
                   text=w.text, fields=w.fields,
                   title=f"rank {w.rank} never began the collective its communicator timed out in: it was stuck")


def kills_before_deaths(findings: list[Finding]) -> None:
    """The kernel's kill of a deployment's process came before any report of that process's death, whatever the
    kernel's clock says (`dmesg -T` converts the monotonic clock, which drifts from the wall clock: seconds, a minute
    on a host up for months). A kill of a rank stamped after the first report of that rank's death on its node, by
    at most SAME_FAILURE_S past the latest the report can be (an untimed line: its file's next time), is placed at
    the report, in its phase (and the findings are put in time order again)."""
    killers = outcome_data().process_categories
    deaths = [g for g in findings if g.category in outcome_data().vanished and g.rank is not None and g.ts is not None
              and g.source != "kernel"]
    moved = False
    for f in findings:
        if f.source != "kernel" or f.category not in killers or f.rank is None or f.ts is None:
            continue
        before = [g for g in deaths if g.node == f.node and g.rank == f.rank and g.ts < f.ts
                  and 0 < (f.ts - (g.ts_until or g.ts)).total_seconds() <= SAME_FAILURE_S]
        if before:
            report = min(before, key=sort_key)
            f.ts, f.ts_until, f.phase, moved = report.ts, report.ts_until, report.phase, True
    if moved:
        findings.sort(key=sort_key)
