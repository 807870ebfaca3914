"""What the root cause takes from the other witnesses of its fault: the rank of the process it names or of
the events it explains, the node at the silent end of a link that fails or whose figure it quotes, and the phase
that a stack or an earlier consequence of the same failure shows."""
from __future__ import annotations

import re

import polars as pl

from k3logs.catalogue.landmarks import decision_line

from .attribution import RX
from .findings import EXPLAIN_WINDOW_S, SAME_FAILURE_S, TIE_SECONDS, Finding, as_int
from .order import apart, seconds, sort_key

LAG_S = 300.0   # how long after its first consequences a fault may be stated (a node's NotReady after its loss)
AGE_UNIT_S = 60.0   # how far before its counted-back time a listed event's age ('19m') may put it


def borrow_rank(root: Finding, findings: list[Finding], pid_rank: dict[tuple, int],
                node_wide: frozenset[str] = frozenset(), device_rank: dict[tuple, int] | None = None) -> None:
    """A cause with no rank (a kernel line, a crash written by C code) takes the rank of the process it names
    (`pid_rank`: (node, host pid) -> rank), or of the CUDA device its error names, else of the first event it
    explains on its node, or of a dead-worker symptom that names it right after; a fault of the whole node (`node_wide`
    categories: a driver, the fabric manager) names no process and takes no rank from what it explains. A cause
    whose time is unknown (kernel seconds since boot with no boot time) also takes that event's phase, unless that
    is the shutdown (an eviction's stop: the cause came before it)."""
    # what it explains: itself, or the other lines of the same failure (an oom-kill block) that
    # explained those events first
    same = {i for i, f in enumerate(findings) if f is root or (f.category == root.category and f.node == root.node)}
    explained = [f for f in findings if f.explained_by in same]
    if root.ts is None or root.ts_quality == "relative":
        placed = [f for f in explained if f.phase and f.phase != "shutdown" and f.ts is not None]
        if placed:
            root.phase = sorted(placed, key=sort_key)[0].phase
    dev = root.fields.get("ifname") or root.fields.get("hca") or root.fields.get("dev")
    if dev and root.rank is not None and len({f.rank for f in findings if f.sig == root.sig and f.node == root.node
                                              and f.fields.get("dev") == dev and (dt := apart(root, f)) is not None
                                              and dt <= TIE_SECONDS}) >= 2:
        # (an adapter's event every process of its node reports at once is the node's adapter's, not the rank's
        # that printed it first: it is the rank's whose own transfers on that adapter failed)
        after = [f for f in findings if f.rank is not None and f.node == root.node and f.sig != root.sig
                 and f.category == root.category and (dt := seconds(root, f)) is not None
                 and 0 <= dt <= EXPLAIN_WINDOW_S]
        users = {f.rank for f in after if dev in (f.fields.get("hca"), f.fields.get("ifname"))}
        if len(users) == 1:
            root.rank = users.pop()
        elif after and not any(f.fields.get("hca") or f.fields.get("ifname") for f in after):
            root.rank = min(after, key=sort_key).rank   # (errors that name no adapter: the first to fail)
        return
    if root.rank is not None:
        return
    # the same process on the same node (a kernel line names its pid): its own lines say its rank
    named = as_int(root.fields.get("pid"))   # (the pid the line is about, a kill's victim, before its writer's)
    pid = named if named is not None else root.pid
    if named is not None and (root.node, named) in pid_rank:
        root.rank = pid_rank[(root.node, named)]
        return
    # the CUDA device its own error names ('GPU 3 has a total capacity'), on the node of the process that raised it:
    # a worker's device is its local rank (`device_rank`: (node, device) -> rank)
    gpu = as_int(root.fields.get("gpu")) if root.source != "kernel" else None
    if gpu is not None and (key := (root.raised_on or root.node, gpu)) in (device_rank or {}):
        root.rank = device_rank[key]
        return
    same_pid = [f for f in findings if f.rank is not None and f.node == root.node and pid is not None
                and (f.pid == pid or as_int(f.fields.get("pid")) == pid)]
    if not same_pid and root.category in node_wide:
        return
    # the process that used the device it names (a port of mlx5_5 down; NCCL's error on hca mlx5_5): one rank
    users = {f.rank for f in findings if dev and not same_pid and f.rank is not None and f.node == root.node
             and dev in (f.fields.get("hca"), f.fields.get("ifname"))
             and (dt := seconds(root, f)) is not None and 0 <= dt <= EXPLAIN_WINDOW_S}
    if len(users) == 1:
        root.rank = users.pop()
        return
    linked = same_pid or [f for f in explained if f.rank is not None and f.node == root.node and not_before(root, f)]
    if not same_pid and linked:
        # (several ranks of its node failing alike in the same instant first: none of them is its origin; a worker
        # that died and the others its executor then lost are not alike)
        head = sorted(linked, key=sort_key)[0]
        if any(f.rank != head.rank and f.sig == head.sig and (dt := seconds(head, f)) is not None
               and 0 <= dt <= TIE_SECONDS for f in linked):
            linked = []

    def broadcast(f: Finding) -> bool:   # (an adapter's event every process of its node reports at once: no rank's)
        d = f.fields.get("dev")
        return d is not None and len({g.rank for g in findings if g.sig == f.sig and g.node == f.node and g.fields.get(
            "dev") == d and (dt := apart(f, g)) is not None and dt <= TIE_SECONDS}) >= 2

    near = [f for f in findings if f.role == "symptom" and f.rank is not None and f.node == root.node
            and (dt := seconds(root, f)) is not None and -TIE_SECONDS <= dt <= 120 and ("rank" in f.fields or "worker" in f.fields)]
    # the same fault seen by one rank in the same instant (the kernel's segfault line and the worker's own
    # 'SIGSEGV received'): the host's pid is not the container's, the time and the kind of failure are
    same_fault = [f for f in findings if f.rank is not None and f.node == root.node and f.category == root.category
                  and (dt := apart(root, f)) is not None and dt <= 2 * TIE_SECONDS and not broadcast(f)]
    if len({f.rank for f in same_fault}) > 1:
        same_fault = []
    # (a fault of a device one rank uses, its adapter's module overheating, and that rank alone failing the same way
    # within the minute after it, its transfers on that adapter, naming no other adapter: that rank's)
    same_fault = same_fault or [f for f in findings if f.rank is not None and f.node == root.node
                                and f.category == root.category and f.role == "cause" and not broadcast(f)
                                and (dt := seconds(root, f)) is not None and 0 <= dt <= SAME_FAILURE_S
                                and not (dev and (named := f.fields.get("hca") or f.fields.get("ifname"))
                                         and named != dev)]
    if len({f.rank for f in same_fault}) > 1:
        same_fault = []
    for group in (linked, same_fault, near):
        if group:
            pick = sorted(group, key=sort_key)[0]
            root.rank = pick.rank
            if root.node is None:
                root.node = pick.node
            return


def not_before(a: Finding, b: Finding) -> bool:
    """b was not printed before a: a line a cause explains within the tie but before it, by a clock finer than
    a second, is another rank's trouble that came first (a retry), not its consequence. A whole second, as most
    logs print, holds any instant of that second."""
    dt = seconds(a, b)
    return dt is None or dt >= 0 or (b.ts.microsecond == 0 and dt > -1)


def stack_phase(root: Finding, findings: list[Finding]) -> None:
    """A cause whose own line has no stack takes the phase that a stack of the same failure shows
    (a driver fault warned about at import, then raised inside init_device on every worker)."""
    if root.phase_from_stack:
        return
    same = [f for f in findings if f.category == root.category and f.phase_from_stack and f.phase
            and (root.node is None or f.node in (None, root.node))
            and (dt := seconds(root, f)) is not None and -TIE_SECONDS <= dt <= SAME_FAILURE_S]
    if same:
        root.phase = sorted(same, key=sort_key)[0].phase


def lagging_phase(root: Finding, findings: list[Finding], attempt_of=lambda f: None,
                  outlived: bool = False, host_logged: bool = False, went_on: bool = False) -> None:
    """A fault stated after errors it explains (a node controller marks a node NotReady 40 s after its last
    heartbeat, while its peers have already failed) happened no later than the first of them: the phase is that
    one's (not the shutdown its consequences began). A fault its own run outlived (`outlived`: it went on working
    after it), whose first failure is in a later start of its node (a driver upgraded under a running server: the
    next start cannot use the GPU), has that failure's phase too; so does a fault logged outside the deployment's
    own logs (`host_logged`) while its node's start had not got anywhere, a minute or more before it shows (a
    fabric manager that failed at boot: the server's start fails at device init), and so does a fault at the start
    that its own process went past (`went_on`: an extension that failed to import, logged as a warning, is missed
    where the process first needs it). The fault: the root and its other statements (same category, same node)."""
    fault = {i for i, f in enumerate(findings) if f is root or (f.role == "cause" and f.category == root.category
                                                                and f.node == root.node)}
    explained = [f for f in findings if f.explained_by in fault and f.phase]
    # (a fault lags what it explains by a heartbeat's timeout or a controller's grace, minutes at most: an error
    # hours before it, a start's retried connect, is no consequence of it; a time counted back from a listed age is
    # as late as the event can have been, its consequences a minute before it may well be after it)
    earlier = [f for f in explained if (dt := seconds(f, root)) is not None and 0 < dt <= LAG_S
               and (root.ts_quality != "inferred" or dt > AGE_UNIT_S)]
    if earlier:
        root.phase = min(earlier, key=sort_key).phase
        return
    # (an untimed line, a listing's status row, is in no attempt: its place in the bundle says nothing of when)
    later = sorted((f for f in explained if f.node == root.node and f.set_aside is None and f.ts is not None),
                   key=sort_key)
    mine, theirs = attempt_of(root), attempt_of(later[0]) if later else None
    if outlived and mine is not None and theirs is not None and theirs > mine:
        root.phase = later[0].phase
    elif root.phase == "startup" and (host_logged or went_on):
        # a fault logged before its node's start got anywhere bit where it, or what it explains, next shows past
        # the start (a warning at import, then the error in device init)
        # (what a fault its process went past explains, not its other processes' statements of it at their import)
        shown = sorted((f for i, f in enumerate(findings) if ((i in fault and host_logged) or f.explained_by in fault)
                        and f.phase and f.node == root.node and f.set_aside is None
                        and (dt := seconds(root, f)) is not None and dt > (SAME_FAILURE_S if host_logged else 0)),
                       key=sort_key)
        bit = [f.phase for f in shown if (dt := seconds(shown[0], f)) is not None and dt <= SAME_FAILURE_S]
        root.phase = next((p for p in bit if p != "startup"), root.phase)


def stopping_phase(root: Finding, ev: pl.DataFrame, stop_ts) -> None:
    """A fault that stopped its node (a reboot, an eviction), stated in the stop it made (`stop_ts`: that stop's time,
    where its signature explains a stop's SIGTERM and it is stated in the second of one on its node), happened in the
    phase the deployment was in before that stop, not in the shutdown it began."""
    if root.phase != "shutdown" or stop_ts is None or not {"ts", "phase"} <= set(ev.columns):
        return
    before = ev.filter((pl.col("ts") < stop_ts) & pl.col("phase").is_not_null() & (pl.col("phase") != "shutdown"))
    root.phase = before.sort("ts")["phase"][-1] if before.height else root.phase


def silent_peer(root: Finding, findings: list[Finding], peer_node: dict[str, str],
                nodes: set[str] | frozenset[str] = frozenset()) -> None:
    """The node that several others cannot reach is the one at fault: when the root names a peer it could not
    reach (a connect that found no route, a send the peer never acknowledged), and such complaints from two or
    more nodes all name peers on one other node that itself complains of none, the fault is that node's (its
    port, its firewall): the complainers are its witnesses. One complainer cannot tell which end failed (a
    timeout), unless the peer's end answered the connect with its refusal (no listener, a firewall's reject: 'No
    route to host') on a network the complainer is on too (one of its own addresses in the same /24; else its
    own routing may have found no way there); nor can both ends complaining of each other: the root's own node
    stands. A peer at a loopback address (a host whose own name resolves to 127.0.1.1 advertised it) is on the one
    node of the deployment's (`nodes`) that complains of none, whoever complains: a node that connects to a
    loopback address was told it by another."""
    if root.fields.get("peer") is None:
        return
    complaints = [f for f in findings if f.role == "cause" and f.set_aside is None and f.fields.get("peer")]
    by = sorted({f.node for f in complaints if f.node})
    loopback = str(root.fields["peer"]).startswith("127.")
    own = {ip.rsplit(".", 1)[0] for ip, node in peer_node.items() if node == root.node}
    refused = re.search(decision_line("refused_by_peer"), str(root.fields.get("reason") or "")) is not None \
        and str(root.fields["peer"]).rsplit(".", 1)[0] in own
    ends = set(nodes) - set(by) if loopback else {peer_node.get(f.fields["peer"]) for f in complaints}
    if len(ends) != 1 or None in ends or len(by) < (1 if loopback or refused else 2):
        return
    (end,) = ends
    if end in by:
        return
    root.node, root.rank = end, None
    root.node_from = f"the peer ({root.fields['peer']}) that the connection errors of {', '.join(by)} could not " \
                     f"reach, which reports no such error itself"


def shared_event(root: Finding, findings: list[Finding], peer_node: dict[str, str],
                 recovered: dict[int, Finding]) -> Finding:
    """One event that several nodes state at once (a rack's power feed lost, a switch rebooting: the root's signature
    on each within TIE_SECONDS) is the cause on the node it took down: the one the connection errors that follow it
    name as their peer (and that names none itself), else the one whose statement alone did not recover. The root
    moves to that node's own first statement of it; a tie nothing tells apart stands."""
    tied = [f for f in findings if f.sig is not None and f.sig == root.sig and f.node and f.set_aside is None
            and (dt := seconds(root, f)) is not None and abs(dt) < TIE_SECONDS]
    nodes = {f.node for f in tied}
    if len(nodes) < 2:
        return root
    complaints = [f for f in findings if f.role == "cause" and f.set_aside is None and f.fields.get("peer")
                  and (dt := seconds(root, f)) is not None and 0 <= dt <= EXPLAIN_WINDOW_S]
    ends = {peer_node.get(f.fields["peer"]) for f in complaints} - {None}
    down = {f.node for f in tied if id(f) not in recovered}
    if len(ends) == 1 and ends <= nodes and not ends & {f.node for f in complaints}:
        node, why = ends.pop(), "the node its peers' connection errors name"
    elif len(down) == 1 and down != nodes:
        node, why = down.pop(), "the node where it alone did not recover"
    else:
        return root
    pick = min((f for f in tied if f.node == node), key=sort_key)
    pick.node_from = f"{why}, of {len(nodes)} that stated the same event at once"
    return pick


def figure_node(root: Finding, ev: pl.DataFrame) -> None:
    """A cause that quotes a figure one node's processes printed is that node's: the head's engine refusing to start
    because 'the available KV cache memory (8.31 GiB)' is less than a request needs quotes the smallest of its
    workers' 'Available KV cache memory' figures; when only one other node's workers printed it, and every other
    node's would have held the request, the shortfall is that node's (its memory setting differs). Where every node
    falls short, the engine's node stands."""
    said, needed = root.fields.get("available_gib"), root.fields.get("needed_gib")
    if said is None or needed is None or "text" not in ev.columns:
        return
    printed = ev.select("node", pl.col("text").str.extract(RX["kv_available"].pattern, 1)
                        .cast(pl.Float64, strict=False).alias("v")).drop_nulls()
    short = set(printed.filter(pl.col("v") == float(said))["node"].to_list())
    enough = printed.filter(~pl.col("node").is_in(list(short)))
    if len(short) == 1 and (node := short.pop()) != root.node and enough.height \
            and enough["v"].min() >= float(needed):
        root.node, root.rank = node, None
        root.node_from = f"the workers that printed the figure it quotes ({said} GiB of KV cache; the other nodes' " \
                         f"held the {needed} GiB it needs)"
