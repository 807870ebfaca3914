"""What cannot be the cause (decide's first step over the findings): a mention in prose, a line about another
program's process (its name, its cgroup, its own script's traceback), node, namespace or workload, a second file's
copy of a line, the shutdown's trail, and what the service survived: its process (a
kernel line's, or a fault of the whole node's: its node) went on working after it, its group formed, its node
became ready, its server went on generating after a request failed, or what failed came back (a device, a node
Ready again, a pod scheduled) before anything it explains failed; unless it explains what fails later, or recurs."""
from __future__ import annotations

import re
from itertools import islice

import polars as pl

from k3logs.catalogue.signatures import Catalogue, Signature

from .attribution import RX, is_ip, line_rx, short_host
from .detect import holds_prefilter, outcome_data
from .findings import EXPLAIN_WINDOW_S, FLAP_EPISODES, SAME_FAILURE_S, TIE_SECONDS, Finding, as_int
from .order import seconds, sort_key
from .lifeline import who
from .outcome import Lifecycle
from .templates import mask_template, same_template

STAMPED_COPY_LINES = 20   # how far below a crash's raw lines a logger's stamped copy of them comes


def recoveries(ev: pl.DataFrame, findings: list[Finding], cat: Catalogue) -> dict[int, Finding]:
    """id(finding) -> the first line after it (in its file: by place, events listed by age have no time), on its
    node (any, for a finding of no node: a pod waiting for one), saying its device is back: the signature's
    `recovery` with the same value in every field both name and the finding has."""
    out: dict[int, Finding] = {}
    place = "seq" if "seq" in ev.columns else "line"
    for sig in cat.signatures:
        mine = [f for f in findings if f.sig == sig.id] if sig.recovery else []
        if not mine:
            continue
        rec = sig.recovery
        rows = ev.filter(holds_prefilter(rec) & pl.col("text").str.contains(rec.regex))
        if rows.is_empty():
            continue
        rows = rows.select("eid", "node", "ts", "ts_quality", "file", "line", pl.col(place).alias("_place"),
                           "text").with_columns(pl.col("text").str.extract_groups(rec.regex).alias("_g")).unnest("_g")
        # (the fields both name: the signature's own, or one its findings were given, such as an event's pod)
        shared = list(rec.fields)
        # (a recovery that names only the node it is about, NodeReady: its node's own, whichever line said it was lost)
        of_node = set(shared) <= set(outcome_data().reported_node_fields)
        for f in mine:
            node = pl.col("node").eq_missing(f.node) if f.node is not None else pl.lit(True)
            for r in rows.filter(node).sort("ts", "_place", nulls_last=True).iter_rows(named=True):
                same = [k for k in shared if f.fields.get(k) is not None and r[k] is not None]
                later = r["_place"] > f.place if r["file"] == f.file else \
                    f.ts is not None and r["ts"] is not None and r["ts"] > f.ts
                if (same or (of_node and f.node is not None)) and later and all(str(f.fields[k]) == r[k] for k in same):
                    out[id(f)] = Finding(eid=r["eid"], sig=None, category="recovery", role="context", priority=0,
                                         span=(r["line"],) * 2, rank=None, pid=None, phase=None,
                                         **{k: r[k] for k in ("file", "line", "ts", "ts_quality", "node", "text")})
                    break
    return out


def one_pod_named(text: str, pods: frozenset[str] | set[str]) -> str | None:
    """The one pod of the bundle's that a line names as a word (an event row's 'pod/NAME', a listing's NAME)."""
    named = {w for w in re.split(r"[^a-z0-9.-]+", text) if w in pods} if pods else set()
    return named.pop() if len(named) == 1 else None


def workload(pod: str) -> str | None:
    """The workload a pod is of, as far as its name tells (patterns/diagnose.toml pod_workload)."""
    return m.group("workload") if (m := RX["pod_workload"].match(pod)) else None


def world_nodes(app_lines: pl.DataFrame) -> frozenset[str]:
    """The nodes the deployment's whole world ran on, where its lines state the world's size ('rank R in world size
    W') and place every rank of it on one node each (none where a rank is missing or on two nodes: replicas, a node
    whose logs are not here)."""
    if not {"rank", "node", "text"} <= set(app_lines.columns):
        return frozenset()
    sizes = app_lines["text"].str.extract(line_rx("assigned"), 2).cast(pl.Int64, strict=False).drop_nulls().unique() \
        .to_list()
    placed = app_lines.filter(pl.col("rank").is_not_null() & pl.col("node").is_not_null()).select("rank", "node") \
        .unique()
    ranks = placed["rank"].to_list()
    if len(sizes) != 1 or sizes[0] < 2 or len(ranks) != sizes[0] or set(ranks) != set(range(sizes[0])):
        return frozenset()
    return frozenset(placed["node"].to_list())


def workloads(app_lines: pl.DataFrame, pods: frozenset[str] | set[str]) -> set[str]:
    """The workloads of the deployment's own pods: the pods its logs' paths name (the longest name a path holds as
    a word) and its lines' `kubectl logs --prefix` labels."""
    own = set(app_lines["w_pod"].drop_nulls().unique().to_list()) if "w_pod" in app_lines.columns else set()
    longest = sorted(pods, key=len, reverse=True)
    for path in app_lines["file"].unique().to_list() if "file" in app_lines.columns else ():
        if pod := next((p for p in longest if re.search(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])", path)), None):
            own.add(pod)
    return {w for w in map(workload, own) if w}


def set_aside(findings: list[Finding], life: Lifecycle, prose: frozenset[str] | set[str],
               recovered: dict[int, Finding] | None = None, sigs: dict[str, Signature] | None = None,
               node_wide: frozenset[str] = frozenset(), app_workloads: frozenset[str] | set[str] = frozenset(),
               world: frozenset[str] = frozenset(), collective: frozenset[str] = frozenset(),
               quiet: frozenset[str] = frozenset(), peers: dict[str, str] | None = None) -> None:
    """Findings that cannot be the cause: mentions (a note or a ticket quoting an error: a plain line with no
    time in a file of prose), a pod of a workload none of the deployment's pods is of (`app_workloads`) while it
    served, the shutdown's trail (after its attempt's stop), and what the service survived (its process went on
    working after it, or its node for a kernel line or a `node_wide` category, and it explains nothing that
    follows; or its device came back before anything it explains failed). `peers`: the deployment's node of each IP."""
    at = {id(f): i for i, f in enumerate(findings)}
    # the cgroup of each process an OOM kill names, and those the deployment's killed processes were in
    memcg = {(f.node, as_int(f.fields.get("pid"))): f.fields["memcg"] for f in findings if f.fields.get("memcg")}
    own_cgroups = {cg for key, cg in memcg.items() if key in life.pids}
    # the programs whose tracebacks show they are other programs (foreign_script): their other lines are theirs too
    scripts = {(f.file, f.pid, f.ident): script for f in findings if (script := foreign_script(f, life))}
    shapes: dict[int, str] = {}   # (each line's template, made once)
    recovered, sigs = recovered or {}, sigs or {}

    causes = [h for h in findings if h.role == "cause"]

    def nearer_cause(f: Finding, g: Finding) -> bool:
        """Another cause on g's node came between f and g, or with g (the traceback that follows 'EngineCore failed
        to start' in the same second): g is that one's failure, not f's. For a `collective` symptom (a timeout every
        rank of a collective shows, whichever failed) also a later cause on f's own node: the nearer of the two."""
        return any(h is not f and h.eid != g.eid and h.set_aside is None
                   and (h.node == g.node or (g.category in collective and h.node == f.node))
                   and h.category not in (f.category, g.category) and sort_key(f) < sort_key(h)
                   and (sort_key(h) < sort_key(g) or (h.sig is not None and g.ts and h.ts
                                                        and 0 <= seconds(g, h) <= TIE_SECONDS))
                   for h in causes)

    def same_process(f: Finding, g: Finding) -> bool:
        """Both logged by one process of the deployment in one attempt (a kernel line names none)."""
        w = who(f.source, f.pid, f.ident, f.file, f.task)
        return bool(w) and w == who(g.source, g.pid, g.ident, g.file, g.task) \
            and life.attempt_of(g) == life.attempt_of(f)

    def fails_again(f: Finding, ready=None, since=None) -> bool:
        """Something later in its scope fails that it explains (within the explanation window; before `ready`,
        the node's readiness after the error of a process that names itself, if given, save the restart that
        brought it up: what fails once it is up is no failure of its start; an unnamed block may stand anywhere
        before its neighbours' times), or fails the same way on its node (within it, or however much later in
        the process that logged it; or, for a signature that `persists`, a state of the node such as a fabric
        manager that did not start or a filesystem gone read-only, anything it explains or its recurrence on its
        node however much later: a server already running may survive it, the next start does not), or, for an error no
        signature knows, its own process reports its engine or a worker gone. A recurrence on its node counts from
        `since`, where its process went on, if given (a process's failure, not a device's: what a device's fault does
        to its node's processes right after it is its consequence): before that, a statement of the same failure is
        that failure itself (vLLM's wait for its placement group, and Ray's autoscaler on the same request)."""
        i = at[id(f)]

        def again(g: Finding, dt: float) -> bool:
            explained = (g.explained_by == i or i in g.explainers) and not nearer_cause(f, g) \
                and (ready is None or ready.after(g.ts, g.file, g.place) and g.category != "symptom.restart")
            recurs = g.category == f.category and (
                (g.node == f.node and (since is None or since.before(g.ts, g.file, g.place)))
                or spreads(f) or met_elsewhere(f, g))
            # (an error no signature knows explains nothing by the catalogue; its own process saying later that its
            # engine or a worker is gone had not survived it: an API server whose output handler died)
            died = f.sig is None and g.category in outcome_data().vanished and same_process(f, g)
            return (dt <= EXPLAIN_WINDOW_S and (explained or recurs or died)) or \
                (recurs and (same_process(f, g) or persists(f))) or (explained and persists(f) and g.node == f.node)
        return keeps_coming_back(f) or any(
            g is not f and g.set_aside is None and sort_key(f) < sort_key(g)
            and (g.role == "cause" or g.category in outcome_data().fatal)
            and (dt := seconds(f, g)) is not None and dt >= 0 and again(g, dt) for g in findings)

    def keeps_coming_back(f: Finding) -> bool:
        """The same fault on its node returns FLAP_EPISODES times within the window, each apart from the one before
        (a link flapping on), and as many failures come meanwhile (requests too, however others fared)."""
        within = [g for g in findings if (dt := seconds(f, g)) is not None and 0 < dt <= EXPLAIN_WINDOW_S]
        later = sorted(g.ts for g in within if g.category == f.category and g.node == f.node)
        starts = [t for i, t in enumerate(later) if (t - ([f.ts] + later)[i]).total_seconds() > SAME_FAILURE_S]
        harm = [g for g in within if (g.set_aside is None and g.category in outcome_data().fatal)
                or g.category in outcome_data().request_level]
        return f.source == "kernel" and len(starts) >= FLAP_EPISODES and len(harm) >= FLAP_EPISODES

    def spreads(f: Finding) -> bool:
        """A device fault the kernel reports that never came back (an adapter's fatal error, a link down for
        good) reaches every node that talks through it: the same failure on a peer is its recurrence."""
        return f.source == "kernel" and id(f) not in recovered and f.sig in sigs and sigs[f.sig].scope == "bundle"

    def met_elsewhere(f: Finding, g: Finding) -> bool:
        """A configuration fault that crashes nothing itself (a `quiet` category: another NCCL installed on one node)
        recurs where other nodes meet it: a match of its category any node may show (a bundle-scoped signature)."""
        return f.category in quiet and g.sig in sigs and sigs[g.sig].scope == "bundle"

    def persists(f: Finding) -> bool:
        return f.sig in sigs and sigs[f.sig].persists

    def systematic(f: Finding) -> bool:
        """The same failure (its line's template) recurs in its process, however its later copies fared: a kind
        of request fails every time (a series' last copy has nothing after it to fail again). For a request's
        failure and an exception raised (known or not): a known error line that recurs outside a traceback (a
        retried connect, another program's GPU warning) has rules of its own."""
        need = outcome_data().request_systematic
        copies = (g for g in findings if g.sig == f.sig and same_process(f, g) and same_template(shape(f), shape(g)))
        return len(list(islice(copies, need))) >= need

    def shape(f: Finding) -> str:
        if id(f) not in shapes:
            shapes[id(f)] = mask_template(f.text)
        return shapes[id(f)]

    def failed_meanwhile(f: Finding, back: Finding) -> bool:
        """A failure f can explain came between it and its device's return (or with either). One whose own device
        came back too (another rank's witness of the same flap: 'port error', then 'port active') failed nothing."""
        explains = set(sigs[f.sig].explains) if f.sig in sigs else set()
        return any(g is not f and g.source != "kernel" and g.set_aside is None and g.category in explains
                   and id(g) not in recovered
                   and (a := seconds(f, g)) is not None and (b := seconds(g, back)) is not None
                   and a >= -TIE_SECONDS and b >= -TIE_SECONDS for g in findings)

    def failed_while_down(f: Finding) -> bool:
        """Work went on after f, but a failure f can explain came before its device came back: a link the cluster's
        heartbeats also cross, lost for longer than their timeout."""
        return (back := recovered.get(id(f))) is not None and failed_meanwhile(f, back)

    def long_after_stop(f: Finding) -> bool:
        """f came a minute or more after its attempt's stop, the server's own (in its log), and the deployment never
        started again after it."""
        return (stop := life.after_stop(f)) is not None and stop.file in life.server_files and stop.ts is not None \
            and f.ts is not None \
            and (f.ts - stop.ts).total_seconds() > SAME_FAILURE_S \
            and (life.last_start is None or life.last_start < stop.ts)

    def down_again(f: Finding, back: Finding) -> bool:
        """Its device failed the same way again within a minute of coming back, and that was not survived: one
        failure, flapping (a link down, up, down for good)."""
        return any(g is not f and g.sig == f.sig and g.node == f.node and g.fields == f.fields and g.set_aside is None
                   and sort_key(back) < sort_key(g) and (dt := seconds(back, g)) is not None and dt <= SAME_FAILURE_S
                   for g in findings)

    # the processes of other programs the kernel's lines name, by node: a unit of that name restarted is theirs
    killed_foreign: dict = {}
    for g in findings:
        if (name := foreign_process(g)) is not None:
            killed_foreign.setdefault(g.node, set()).add(name)
    # the latest first: whether a later failure counts depends on whether it was survived itself
    for f in sorted(findings, key=sort_key, reverse=True):
        if f.eid < 0:
            continue
        if f.file in prose and f.source in ("plain", None) and f.ts is None:
            f.set_aside = "a mention in a note, not a log line"
            continue
        if (name := foreign_process(f)) is not None:
            f.set_aside = f"about {name}, a process that is not the deployment's"
            continue
        if f.source != "kernel" and f.ident in life.other_programs and life.ready and f.file not in life.server_files:
            f.set_aside = f"logged by {f.ident}, a program that wrote none of the server's lines (another workload)"
            continue
        if f.source != "kernel" and (script := scripts.get((f.file, f.pid, f.ident))) is not None:
            f.set_aside = f"raised by {script}, another program: its log holds none of the server's lines"
            continue
        if own_cgroups and (cg := memcg.get(key := (f.node, as_int(f.fields.get("pid"))))) not in own_cgroups | {None} \
                and key not in life.pids:
            f.set_aside = f"about pid {key[1]} in cgroup {cg}, where none of the deployment's processes ran (its " \
                          f"killed processes ran in {', '.join(sorted(own_cgroups))})"
            continue
        if (name := foreign_node(f, life)) is not None:
            f.set_aside = f"about {name}, a node the deployment does not run on"
            continue
        if (name := lost_before(f, life)) is not None:
            f.set_aside = f"about {name}, lost before the deployment's first line: it ran on the nodes it got after"
            continue
        if world and f.node is not None and f.node not in world and (on := life.went_on_anywhere(f)) is not None:
            f.set_aside = f"about {f.node}, where none of the deployment's ranks ran (all ran on " \
                          f"{', '.join(sorted(world))}), and the deployment went on working ({on.file}:{on.line})"
            continue
        if (ns := f.fields.get("ns")) and life.app_namespaces and ns not in life.app_namespaces:
            f.set_aside = f"about a pod of namespace {ns}, where none of the deployment's pods runs"
            continue
        if (pod := f.fields.get("pod")) and app_workloads and life.ready and workload(pod) not in app_workloads:
            f.set_aside = f"about pod {pod}, of a workload none of the deployment's pods is of, while it served"
            continue
        if (unit := f.fields.get("unit")) in life.foreign:
            f.set_aside = f"about unit {unit}, whose own lines are none of the deployment's"
            continue
        if unit is not None and unit in killed_foreign.get(f.node, set()):
            f.set_aside = f"about unit {unit}, whose process the kernel names as none of the deployment's"
            continue
        if (port := f.fields.get("dport")) is not None and str(port) not in life.ports \
                and (peers or {}).get(f.fields.get("src") or "", f.node) == f.node:
            # (traffic from another node of the deployment is its own, whatever the port: NCCL's are ephemeral)
            f.set_aside = f"about traffic to port {port}, which no line of the deployment names, from none of its nodes"
            continue
        stop = life.after_stop(f)
        # (a cause by which the server never listened, the last step of its start, tears its engine down as it
        # unwinds: the engine's stop seconds before its traceback is that failure's, in the same attempt)
        own_teardown = stop is not None and (sig := sigs.get(f.sig)) is not None and sig.unready \
            and stop.ts is not None and f.ts is not None and 0 <= (f.ts - stop.ts).total_seconds() <= SAME_FAILURE_S
        # (and a cause that stops containers, an eviction, stated in the second of the stop it made: its doing)
        own_teardown = own_teardown or (stop is not None and sig is not None and "symptom.sigterm" in sig.explains
                                        and stop.ts is not None and f.ts is not None
                                        and abs((f.ts - stop.ts).total_seconds()) < TIE_SECONDS)
        if stop is not None and not own_teardown:
            f.set_aside = f"after the stop at {stop.file}:{stop.line} (the shutdown's trail)"
            continue
        # (a kill a program or a person sent: the kernel's own kills are told by the process's name, above)
        victim = as_int(f.fields.get("pid")) if f.category in outcome_data().process_categories \
            and f.source != "kernel" else None
        if f.role == "cause" and victim is not None and (f.node, victim) not in life.pids \
                and (went_on := life.went_on_anywhere(f)) is not None:
            f.set_aside = f"survived: pid {victim} is none of the deployment's processes, and the deployment went " \
                          f"on working ({went_on.file}:{went_on.line})"
        elif f.role == "cause" and f.sig is None and (refused := life.refused_after(f)) is not None:
            # (an error no signature knows; a known cause, a chat template missing, is the server's though it
            # answers 400)
            f.set_aside = f"the request it was raised for was refused ({refused.file}:{refused.line}, 4xx): the " \
                          "client's error, not the server's"
        elif f.role == "cause" and (met := life.joined_after(f)) is not None:
            f.set_aside = f"survived: its group formed after it ({met.file}:{met.line})"
        elif (f.role == "cause" or f.category in outcome_data().vanished) \
                and (went_on := life.progress_after(f, f.category in node_wide or f.sig in node_wide)) is not None \
                and not fails_again(f, since=None if f.source == "kernel" else went_on) \
                and not ((f.sig is None or f.source == "traceback") and systematic(f)) \
                and not life.stalled_at(f) and not failed_while_down(f):
            wide = f.source == "kernel" or f.category in node_wide or f.sig in node_wide
            f.set_aside = f"survived: {'its node' if wide else 'its process'} went on working " \
                          f"({went_on.file}:{went_on.line})"
        elif (f.role == "cause" or f.category == "symptom.restart" or f.category in outcome_data().request_level) \
                and (up := life.ready_after(f)) is not None \
                and not fails_again(f, up if f.pid is not None or f.ident else None):
            f.set_aside = f"survived: its node became ready after it ({up.file}:{up.line})"
        elif f.category in outcome_data().request_level and (went_on := life.served_after(f)) is not None \
                and not fails_again(f) and (f.fields.get("status") in outcome_data().shed_status or not systematic(f)):
            f.set_aside = f"survived: its server went on generating ({went_on.file}:{went_on.line}): one request failed"
        elif f.role == "cause" and (back := recovered.get(id(f))) is not None and not failed_meanwhile(f, back) \
                and not keeps_coming_back(f) and not down_again(f, back) and not life.stalled_at(f):
            f.set_aside = f"survived: it recovered ({back.file}:{back.line}) before anything failed"
    # an untimed line of a failure set aside where it shows its time (a pod status after the kernel's oom-kill
    # of the same container), or of a pod's failure it recovered from where its events are in order (its describe),
    # is the same failure
    # (a stop's trail too, where it shows its time well after the stop: a node powered off for maintenance after
    # its server was stopped, whose describe's events have only ages)
    aside = {(f.node, f.category): f.set_aside for f in findings if f.ts is not None and f.set_aside
             and (not f.set_aside.startswith("after the stop") or long_after_stop(f))}
    pod_aside = {(f.category, f.fields["pod"]): f.set_aside for f in findings
                 if f.ts is None and f.fields.get("pod") and id(f) in recovered and f.set_aside}
    survived = [g for g in findings if g.ts is not None and g.set_aside and g.set_aside.startswith("survived")]
    for f in findings:
        # (another witness's statement of a failure survived, within a minute of it on its node: the same failure)
        twin = next((g for g in survived if f.set_aside is None and f.role == "cause" and f.ts is not None
                     and g.node == f.node and g.category == f.category and g.file != f.file
                     and 0 <= (seconds(g, f) or -1) <= SAME_FAILURE_S), None)
        if twin is not None:
            f.set_aside = f"the same failure, stated by another witness ({twin.file}:{twin.line}): {twin.set_aside}"
        elif f.set_aside is None and f.role == "cause" and f.ts is None and (f.node, f.category) in aside:
            f.set_aside = f"the same failure as where it shows its time: {aside[(f.node, f.category)]}"
        elif f.set_aside is None and f.role == "cause" and f.ts is None \
                and (key := (f.category, f.fields.get("pod"))) in pod_aside:
            f.set_aside = f"the same failure of the same pod: {pod_aside[key]}"


def copies_aside(findings: list[Finding], ev: pl.DataFrame) -> None:
    """One line in two files (an excerpt of every unit's journal beside the unit's own) is one event: the copy in
    the file that holds more of its process's lines stands, the other is set aside as its copy. One statement a
    process printed twice in its file, unstamped and then through a logger that stamps it (Ray's signal handler
    writes a crash to stderr, then to its log), is one event too: the first copy, at the stamped copy's time."""
    stamped: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.set_aside is None and f.pid is not None:
            stamped.setdefault((f.file, f.pid, f.node, f.sig, f.text), []).append(f)
    for g in (sorted(g, key=lambda f: f.line) for g in stamped.values() if len(g) > 1):
        raw, copy = g[0], next((f for f in g[1:] if f.ts_quality == "exact"), None)
        if raw.ts_quality != "exact" and copy is not None and copy.line - raw.line <= STAMPED_COPY_LINES:
            raw.ts, raw.ts_quality = copy.ts, copy.ts_quality
            copy.set_aside = f"a stamped copy of {raw.file}:{raw.line}, the same statement of its process"
    by_line: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.set_aside is None and f.ts is not None and f.eid >= 0:
            by_line.setdefault((f.sig, f.category, f.text, f.ts, f.node, f.pid), []).append(f)
    groups = [g for g in by_line.values() if len({f.file for f in g}) > 1]
    if not groups:
        return
    counts = {(file, pid): n for file, pid, n in ev.group_by("file", "pid").len().iter_rows()}
    for g in groups:
        size = {f.file: counts.get((f.file, f.pid), 0) for f in g}
        keep = max(g, key=lambda f: size[f.file])
        for f in g:
            if size[f.file] < size[keep.file]:
                f.set_aside = f"a copy of {keep.file}:{keep.line}, whose file holds more of its process's lines"


def unexplain_by_set_aside(findings: list[Finding]) -> None:
    """An explanation by a finding that was set aside (a flap the service survived, a shutdown's trail) is
    void: the finding is explained by the first of its other explainers still standing, or by none."""
    for f in findings:
        if f.explained_by is not None and findings[f.explained_by].set_aside is not None:
            alive = [i for i in f.explainers if findings[i].set_aside is None]
            f.explained_by = min(alive, key=lambda i: sort_key(findings[i])) if alive else None


def lost_before(f: Finding, life: Lifecycle) -> str | None:
    """The instance a line is about (a cloud's operation on it) when that came before the deployment's first line
    and the deployment then worked: its nodes were the ones it got after, wherever its lines do not say."""
    named = next((f.fields[k] for k in outcome_data().about_node_fields if f.fields.get(k)), None)
    if not named or f.ts is None or not life.began_after(f.ts) or life.went_on_anywhere(f) is None:
        return None
    return short_host(str(named).rsplit("/", 1)[-1])


def foreign_node(f: Finding, life: Lifecycle) -> str | None:
    """The node a line is about (a cloud's operation on an instance) when the deployment's lines, every one of
    them placed on a named host (a Ray node known by its address alone may be that instance), show it runs
    elsewhere."""
    named = next((f.fields[k] for k in outcome_data().about_node_fields if f.fields.get(k)), None)
    if not named or not life.app_nodes or any(n is None or is_ip(n) for n in life.app_nodes):
        return None
    name = short_host(str(named).rsplit("/", 1)[-1])
    return name if name not in life.app_nodes else None


def foreign_script(f: Finding, life: Lifecycle) -> str | None:
    """The script of another program that raised f: its traceback's outermost frame is a script of its own
    (patterns/diagnose.toml own_script: not code of an installed package) and its file holds none of the server's
    lines (a fleet's cron job, a benchmark's or an eval's client, another Ray job's driver), in a run that served
    (before, a program beside it may be a part it waits for)."""
    m = RX["own_script"].match(f.script) if f.script and life.ready and f.file not in life.server_files else None
    return m.group("script") if m else None


def foreign_process(f: Finding) -> str | None:
    """The name of the process a kernel line is about when it is not one of the deployment's."""
    data = outcome_data()
    name = (f.fields.get("comm") or f.fields.get("task")) if f.category in data.process_categories else None
    return name if name and f.source == "kernel" and not re.match(data.processes, name) else None
