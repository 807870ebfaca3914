"""What happened to the deployment, decided from the lifecycle of all its nodes together, before its cause.

Every node's landmarks (patterns/landmarks.toml) split its logs into attempts (a restart begins a new one) and
say when an attempt became ready (a serving landmark) and when it was asked to stop or wound down (a shutdown
landmark: an operator's SIGTERM, a cancelled job, a stopped unit). Two rules set findings aside before any is
chosen as the cause: the shutdown's trail (whatever fails after its attempt's stop: EngineDeadError,
CancelledError, Ray's SIGTERM stacks, aborted requests) is the stop's consequence, never a cause; what the service
survived (an error its process, a kernel line: its node; one about a GPU: that GPU's rank, or the deployment
serving, went on from, to a later landmark or to work done) is context, unless it explains a failure that follows.

The outcome then says what the deployment came to (ending.py): never_ready, crashed, failing_requests,
restart_loop, stopped, serving, or inconclusive (no application log could show it). An incident is an abnormal
outcome.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import polars as pl

from k3logs.catalogue.landmarks import decision_line
from k3logs.schema import PHASES

from .attribution import RX, is_ip
from .detect import joined, outcome_data, progress_regex
from .ending import Ending, Outcome, stalled
from .lifeline import At, first_points, in_time_order, points_by_key, who

APP_KINDS = ("vllm", "torch", "ray", "nccl")   # logs of the deployment itself (not the kernel's, not the host's)
OTHER_PROGRAMS = ("torch", "nccl")   # a program's own lines that are no server's: a training job's (not Ray's daemons)
HOST_KINDS = ("journal", "kernel", "k8s_events")  # the host's and the orchestrator's: they mark no phase of it
HEALTHY = ("stopped", "serving")
TIE_SECONDS = 1.0   # log times have one-second resolution: events this close are simultaneous
# the kernel's clock and an application's may be this far apart (dmesg -T converts the monotonic clock, which drifts
# from the wall clock): a kernel line explains an application error up to this much before it, by the two clocks,
# and is no stop's trail up to this much after the stop
KERNEL_SLACK_S = 5.0
# vLLM's engine stats cover the interval since the last (10 s by default): a line this soon after a fault may report
# work done before it. A stall shows in stats with requests running at least STALL_SEEN_S after the fault
STATS_INTERVAL_S, STATS_INTERVAL_MAX_S, STALL_SEEN_S = 10.0, 60.0, 60.0


class Lifecycle(Ending):
    """The deployment's attempts, readiness, stops and progress, from the landmarks of every node.
    `restarts_seen`: restarts that the bundle's orchestrator state shows (pod restart counts; None: none shown);
    `host_pids`: (node, pid) of the deployment's processes as the host sees them (the kernel, the host's tools)."""

    def __init__(self, ev: pl.DataFrame, app_files: frozenset[str] | set[str], restarts_seen: int | None = None,
                 host_pids: Iterable[tuple] = (), restarting: bool = False):
        self.app_files, self.app_log, self.restarts_seen = set(app_files), bool(app_files), restarts_seen
        self.restarting = restarting   # (its container was being started again when the bundle was taken)
        cols = ("eid", "node", "rank", "pid", "ident", "source", "ts", "file", "line", "seq", "mark", "attempt",
                "progress")
        if "seq" not in ev.columns and "line" in ev.columns:
            ev = ev.with_columns(pl.col("line").alias("seq"))
        if not set(cols) <= set(ev.columns):
            ev = pl.DataFrame(schema={c: pl.Int64 for c in cols})
        if "w_task" not in ev.columns:   # (the `srun -l` task of a job's output, where a wrapper read one)
            ev = ev.with_columns(pl.lit(None, pl.Int32).alias("w_task"))
        # (lines before a node's first start landmark belong to its first attempt, unless they end in a stop or
        # reached a model's load: a run stopped, or a start that had loaded weights, before this bundle's first
        # start line is an attempt of its own; a start does not come after its own load)
        own = ((pl.col("attempt") == 0) & pl.col("mark").is_in(PHASES[PHASES.index("model_load"):])) \
            .fill_null(False).any().over("node")
        ev = ev.with_columns(pl.when(own).then(pl.col("attempt")).otherwise(pl.col("attempt").clip(lower_bound=1))
                             .alias("attempt"))
        marks = ev.filter(pl.col("mark").is_not_null() | pl.col("progress")).select(*cols, "w_task")
        self.ready = first_points(marks.filter(pl.col("mark") == "serving"))
        # (a server's readiness: by a serving landmark of its own, not only its workers' end of start)
        self.server_ready = first_points(ev.filter((pl.col("mark") == "serving") & ~pl.col("text").str.contains(
            outcome_data().worker_ready)).select(*cols, "w_task")) if "text" in ev.columns else self.ready
        # services that share a node (compose): (node, container or unit) with landmarks of its own, and (node,
        # attempt, it) -> its first serving mark
        named = marks.filter(pl.col("mark").is_not_null() & pl.col("ident").is_not_null())
        self._services = set(zip(named["node"].to_list(), named["ident"].to_list()))
        serving = in_time_order(named.filter(pl.col("mark") == "serving"), "node", "attempt", "ident", "ts", "file",
                                "line", "seq")
        self._ready_ident = {(n, a, i): At(ts, file, line, seq)
                             for n, a, i, ts, file, line, seq in reversed(list(serving))}
        stops = marks.filter(pl.col("mark") == "shutdown")
        self._stops = points_by_key(stops)
        self.stops = {k: ats[0] for k, ats in self._stops.items()}
        # (asked: its text says so, or a terminal's echo of Ctrl-C begins its line)
        echoed = ev.filter(pl.col("text").str.contains(outcome_data().interrupt_echo)).select("file", "line") \
            if "text" in ev.columns else None
        asked = ev.filter(pl.col("eid").is_in(stops["eid"].implode()) & (pl.col("text").str.contains(
            outcome_data().asked_to_stop) | pl.struct("file", "line").is_in(echoed.to_struct().implode()))) \
            if echoed is not None else ev.clear()
        self._asked = set(asked.select("node", "attempt").iter_rows())
        # (the attempts whose stop begins with the asking: a head stopped by hand, not a server winding down first)
        asked_at = set(asked.select("file", "line").iter_rows())
        self._asked_first = {k for k, at in self.stops.items() if (at.file, at.line) in asked_at}
        # (the landmarks that show a node's GPUs at work: its weights loaded, and every step after, to serving)
        worked = marks.filter(pl.col("mark").is_in([p for p in PHASES[PHASES.index("model_load"):] if p != "shutdown"]))
        self._gpus_worked = set(zip(worked["file"].to_list(), worked["line"].to_list()))
        starts = marks.filter((pl.col("mark") == "startup") & pl.col("ts").is_not_null())["ts"]
        self.last_start = starts.max() if len(starts) else None   # (the deployment's last start line)
        timed_stops = stops.filter(pl.col("ts").is_not_null()).sort("ts")
        self.last_stop = At(*timed_stops.select("ts", "file", "line", "seq").row(-1)) if timed_stops.height else None
        self.eid_attempt = dict(zip(ev["eid"].to_list(), ev["attempt"].to_list()))
        # (node, attempt) -> the arguments it ran with, where it logged them
        rx = outcome_data().run_args
        given = ev.filter(pl.col("text").str.contains(rx)).select(
            "node", "attempt", pl.col("text").str.extract(rx, 1)) if rx and "text" in ev.columns else None
        self._args = {} if given is None else {(n, a): x for n, a, x in reversed(given.rows())}
        # the deployment's own processes, by node (its logs' pids, and the host's)
        mine = ev.filter(pl.col("file").is_in(list(self.app_files)) & pl.col("pid").is_not_null()).select("node", "pid")
        self.pids = set(zip(mine["node"].to_list(), mine["pid"].to_list())) | set(host_pids)
        # the nodes the deployment's lines were written on (None among them: some line's node is not known)
        self.app_nodes = set(ev.filter(pl.col("file").is_in(list(self.app_files)))["node"].unique().to_list())
        # the files that hold the server's own lines (vLLM's: a Ray job's driver log of another job has Ray's only)
        self.server_files = set(ev.filter(pl.col("source") == "vllm")["file"].unique().to_list()) \
            if "source" in ev.columns else set(self.app_files)
        # the server's logs that end in a word that they were cut there (a collector kept the first lines only)
        ends = ev.filter(pl.col("file").is_in(list(self.server_files))).group_by("file").agg(
            pl.col("text").sort_by("line").last(), pl.col("line").max()) if "text" in ev.columns else None
        self.cut_at = {} if ends is None else {
            f: n for f, t, n in ends.filter(pl.col("text").str.contains(decision_line("log_cut_here"))).iter_rows()}
        # the Kubernetes namespaces of the deployment's pods, where its logs' paths say (/var/log/pods/NS_POD_UID)
        self.app_namespaces = {m.group("ns") for f in self.app_files if (m := RX["pod_log_dir"].search(f))}
        # progress by (node, attempt) and by (node, attempt, the process): in time order
        self._progress: dict[tuple, list[At]] = {}
        progress = self._progress
        for node, attempt, ts, file, line, seq, source, pid, ident, rank, task in in_time_order(
                marks.filter(pl.col("progress")), "node", "attempt", "ts", "file", "line", "seq", "source", "pid",
                "ident", "rank", "w_task"):
            at = At(ts, file, line, seq)
            progress.setdefault((node, attempt), []).append(at)
            if (w := who(source, pid, ident, file, task)):
                progress.setdefault((node, attempt, *w), []).append(at)
            if w and w[0] != "file":  # (a line that names no process is its file's: any of the file's work counts)
                progress.setdefault((node, attempt, "file", file), []).append(at)
            if rank is not None:
                progress.setdefault((node, attempt, "rank", rank), []).append(at)
        # the processes of each node that show work of their own ([progress]: not a landmark) once their node served
        # (an engine's generation; not a worker's start, its Init COMPLETE)
        rx = progress_regex()
        work = ev.filter(pl.col("progress") & pl.col("pid").is_not_null() & pl.col("ts").is_not_null()
                         & (pl.col("source") != "kernel") & pl.col("text").str.contains(rx[1])) \
            if rx and "text" in ev.columns else ev.clear()
        self._working: dict = {}   # node -> those processes
        for node, attempt, pid, ts in in_time_order(work, "node", "attempt", "pid", "ts"):
            if (r := self.ready.get((node, attempt))) is not None and r.ts is not None and ts >= r.ts:
                self._working.setdefault(node, set()).add(pid)
        # (node, pid) of the processes vLLM names (its prefix: a worker, an engine core, the API server)
        named = ev.filter(pl.col("proc").is_not_null() & pl.col("pid").is_not_null()) if "proc" in ev.columns else None
        self._named = set() if named is None else set(zip(named["node"].to_list(), named["pid"].to_list()))
        # the nodes of the deployment's API server (its heads)
        head = pl.col("text").str.contains(outcome_data().head_line) if "text" in ev.columns else pl.lit(False)
        if "proc" in ev.columns:
            head = head | pl.col("proc").str.contains(outcome_data().head_process).fill_null(False)
        runs = ev.filter(head & pl.col("node").is_not_null()).select("node", "attempt").unique()
        self.heads = set(runs["node"].to_list())
        self.head_runs = {n: len(g) for (n,), g in runs.group_by("node")}   # (the attempts its API server ran in)
        # the units and containers whose own lines show none of the deployment's programs (an exporter, a sidecar)
        # (the processes the server's own lines name: a worker's NCCL lines are the deployment's, whoever logged them)
        ours = ev.filter((pl.col("source") == "vllm") & pl.col("pid").is_not_null()).select("node", "pid").unique() \
            .with_columns(pl.lit(True).alias("_ours")) if "source" in ev.columns else None
        named = ev.filter(pl.col("ident").is_not_null())
        named = named.join(ours, on=["node", "pid"], how="left", nulls_equal=True) if ours is not None \
            else named.with_columns(pl.lit(None, pl.Boolean).alias("_ours"))
        idents = named.group_by("ident").agg(
            pl.col("source").is_in(APP_KINDS).any(), (pl.col("source") == "vllm").any().alias("_server"),
            (pl.col("source").is_in(OTHER_PROGRAMS) & pl.col("rank").is_not_null() & pl.col("_ours").is_null()).any()
            .alias("_program"))
        self.foreign = set(idents.filter(~pl.col("source"))["ident"].to_list())
        # the programs a host's log names (syslog's ident) whose ranks, none of them a process the server's lines name,
        # wrote torch's or NCCL's lines and never a line of the server's (its logs other files): another workload
        self.other_programs = set(idents.filter(pl.col("_program") & ~pl.col("_server"))["ident"].to_list()) \
            if "source" in ev.columns and (ev["source"] == "vllm").any() else set()
        self.stats = ev.filter(pl.col("mark") == "serving").select("node", "attempt", "ts", "file", "line",
                                                                   stalled("text" in ev.columns))
        # (node, attempt) that printed its own engine's periodic stats: an instance that serves by itself
        stats = ev.filter(pl.col("text").str.contains(decision_line("engine_stats"))) if "text" in ev.columns else None
        self._instances = set() if stats is None else set(zip(stats["node"].to_list(), stats["attempt"].to_list()))
        self._stats_lines = set() if stats is None else set(zip(stats["file"].to_list(), stats["line"].to_list()))
        # each file's stats interval (VLLM_LOG_STATS_INTERVAL): the shortest gap between its process's stats lines,
        # within reason (an idle server logs none; a gap of minutes is no interval)
        gaps = stats.sort("ts").select("file", pl.col("ts").diff().over("file", "pid").dt.total_seconds().alias("g")) \
            .filter(pl.col("g") >= 1).group_by("file").agg(pl.col("g").min()) if stats is not None else None
        self._stats_every = {} if gaps is None else {f: min(max(g, STATS_INTERVAL_S), STATS_INTERVAL_MAX_S)
                                                     for f, g in gaps.iter_rows()}
        began = ev.group_by("file").agg(pl.col("ts").min(),
                                        pl.col("ts").filter(pl.col("mark") == "startup").alias("_s"))
        # (the deployment's first line of its own: a host journal's kernel lines before it are the host's)
        own = pl.col("file").is_in(list(self.app_files)) & (pl.col("source").ne_missing("kernel")
                                                              if "source" in ev.columns else pl.lit(True))
        self._app_began = ev.filter(own)["ts"].min()
        # (each node's first line of the deployment's own logs)
        self._node_began = dict(ev.filter(pl.col("file").is_in(list(self.app_files)) & pl.col("ts").is_not_null())
                                .group_by("node").agg(pl.col("ts").min()).iter_rows())
        # (the times each file shows a start at: a process started there)
        self._file_starts = dict(zip(began["file"].to_list(), began["_s"].to_list()))
        # each process's responses of 4xx and 5xx, in time order: (at, status)
        rx = decision_line("error_response")
        answers = ev.filter(pl.col("text").str.contains(rx)).with_columns(
            pl.col("text").str.extract(rx, 1).alias("_status")) if "text" in ev.columns else None
        self._answers: dict[tuple, list] = {}
        for node, ts, file, line, seq, source, pid, ident, status in () if answers is None else in_time_order(
                answers, "node", "ts", "file", "line", "seq", "source", "pid", "ident", "_status"):
            self._answers.setdefault((node, *who(source, pid, ident, file)), []).append(
                (At(ts, file, line, seq), status))
        # the ports the deployment's own lines name (its arguments, its rendezvous address)
        said = (ev.filter(pl.col("file").is_in(list(self.app_files)))["text"] if "text" in ev.columns
                else pl.Series([""]))
        self.ports = set(said.str.extract_all(decision_line("named_port")).explode().str.extract(r"(\d+)$").unique())
        # the times of stats that show requests running and nothing done: an engine stuck
        running = pl.col("text").str.extract(decision_line("engine_stats"), 1).cast(pl.Int64, strict=False)
        stuck = [] if stats is None else stats.filter((running > 0) & ~pl.col("progress").fill_null(False)
                                                      & pl.col("ts").is_not_null())["ts"].to_list()
        stuck += [] if stats is None else self._stuck_since(ev, stats, running)
        work = [at.ts for key, ats in progress.items() if len(key) == 2 for at in ats if at.ts is not None]
        # (the deployment's first and last work, and its last stuck stats: what stalled_at compares, made once)
        self._work_span, self._last_stuck = (min(work), max(work)) if work else None, max(stuck, default=None)
        self._joined = None
        if (j := joined()) is not None and "joined" in ev.columns:
            met: dict[tuple, list[At]] = {}
            for node, attempt, ts, file, line, seq in in_time_order(ev.filter(pl.col("joined").fill_null(False)),
                                                            "node", "attempt", "ts", "file", "line", "seq"):
                met.setdefault((node, attempt), []).append(At(ts, file, line, seq))
            self._joined = (j[0], met)
        # when each attempt of each node began (its first timed line): which attempt a node was in at a time
        begun = ev.filter(pl.col("ts").is_not_null()).group_by("node", "attempt").agg(pl.col("ts").min())
        self._begun: dict = {}
        for node, attempt, ts in begun.sort("ts").iter_rows():
            self._begun.setdefault(node, []).append((ts, attempt))

    # --------------------------------------------------------------------------------------------
    def attempt_of(self, f) -> int | None:
        return self.eid_attempt.get(f.eid)

    def after_stop(self, f) -> At | None:
        """A stop of the finding's attempt that the finding comes after (its trail), else None: any of its stop
        lines (two files may state the same stop in the same second; one orders before the finding by its
        lines). A finding of no node, or of a node known only by an address no host is tied to (it may be any
        of them), in a bundle whose stops are all of named nodes, is measured against the first stop in the
        deployment."""
        named = [n for n, _ in self.stops]
        unnamed = f.node is None or (is_ip(f.node) and f.node not in named)
        if unnamed and named and not any(n is None or is_ip(n) for n in named):
            stops = sorted((s for s in self.stops.values() if s.ts is not None), key=lambda s: s.ts)
            stop = stops[0] if stops and stops[0].before(f.ts, f.file, f.place) else None
        else:  # (a bundle that names no node has its attempts too)
            stop = next((s for s in self._stops.get((f.node, self.attempt_of(f)), [])
                         if s.before(f.ts, f.file, f.place)), None)
        if stop is None and f.ts is not None:
            # a node that serves no instance of its own (a worker node of a multi-node engine: it prints no engine
            # stats, its head does) was stopped while the deployment served, or its head was asked to: so was the
            # other, in the attempt the finding's node was in then (a stop during the start, or in a batch job, is
            # as likely the failure's consequence: a job step cancelled after a task failed); not a node that took
            # no part before it (a new pod of the group started again: what it prints is the next run's)
            serves = (f.node, self.attempt_of(f)) in self._instances
            peers = [s for (node, attempt), s in self.stops.items() if node not in (None, f.node)
                     and ((node, attempt) in self._instances) != serves and (serves or (node, attempt) in self._asked)
                     and s.ts is not None and (s.ts - f.ts).total_seconds() <= TIE_SECONDS   # (two clocks; one
                     and (s.file != f.file or s.before(f.ts, f.file, f.place))               # file: its order)
                     and self.attempt_at(f.node, s.ts) == self.attempt_of(f)
                     and (f.node is None or ((took_part := self._node_began.get(f.node)) is not None
                                             and took_part <= s.ts))
                     and any(r.ts is not None and r.ts < s.ts for r in self.ready.values())]
            stop = min(peers, key=lambda s: s.ts, default=None)
        # a kernel line's clock may run seconds apart (KERNEL_SLACK_S); a stop stamped in whole seconds stands for its
        # second, against a cause stamped finer (a kill sudo logs: its symptoms in that second are still the trail)
        apart = (f.ts - stop.ts).total_seconds() if stop and f.file != stop.file and f.ts and stop.ts else None
        close = apart is not None and (apart <= KERNEL_SLACK_S if f.source == "kernel" else f.role == "cause" and
                                       stop.ts.microsecond == 0 and f.ts.microsecond != 0 and apart < TIE_SECONDS)
        return None if close else stop

    def joined_after_stop(self, f) -> bool:
        """The finding's node printed none of the deployment's lines before its first stop: a node new to the run
        (a pod of the group started again), whose lines are its own start's, not the stopped run's."""
        stops = [s.ts for s in self.stops.values() if s.ts is not None]
        began = self._node_began.get(f.node)
        return bool(stops) and f.node is not None and (began is None or began > min(stops))

    def progress_after(self, f, node_wide: bool = False) -> At | None:
        """The first sign of work on the finding's process (node_wide: any process of its node) after it, in
        the same attempt; for a kernel line about a GPU a rank uses: of that rank, or the deployment serving after
        it; for another kernel line (a link, a process of the node): of the deployment, anywhere after it (a
        node's worker logs no landmarks while the head serves: had the node's part failed, the deployment would
        not go on)."""
        w = who(f.source, f.pid, getattr(f, "ident", None), f.file, getattr(f, "task", None))
        # a node that serves by itself (its engine's stats are its own: one instance of several, a prefill beside a
        # decode; a headless worker prints none, the head prints them) goes on only by its own work
        serves_itself = not w and f.ts is not None and (f.node, self.attempt_at(f.node, f.ts)) in self._instances
        if not w and f.rank is not None and f.ts is not None:
            # a kernel line about one GPU: its rank's process went on, or the deployment served after it (a
            # worker logs nothing while the engine serves); other ranks loading on says nothing of that GPU
            attempt = self.attempt_at(f.node, f.ts)
            own = [at for at in self._progress.get((f.node, attempt, "rank", f.rank), [])
                   if at.ts is not None and at.ts > f.ts and self._proves_survival(at, f.ts)]
            return min(own, key=lambda at: at.ts) if own else \
                self._serving_after(f.ts, f.node if serves_itself else None)
        # (so does a node its BMC says lost power: the BMC outlives its host, whose peers load on a while without it)
        if serves_itself or (not w and f.source != "kernel"):
            return next((at for at in self._progress.get((f.node, self.attempt_of(f)), [])
                         if at.after(f.ts, f.file, f.place) and self._proves_survival(at, f.ts)), None)
        if not w:
            return self.went_on_anywhere(f, device=True)
        engines = self._working.get(f.node, set())
        unnamed = f.file in self.server_files and (f.node, self.attempt_of(f), *w) not in self._progress
        if w[0] == "pid" and ((f.node, w[1]) in self._named or unnamed) and w[1] not in engines \
                and len(engines) == 1 and f.ts is not None and self.ready_before(f):
            # a process vLLM names (a worker, an engine core), or one of the server's own log that names itself
            # nowhere else (a transfer engine's thread in glog's form), that shows no work of its own (its engine's
            # stats are another process's) failed while its node served: it went on if its node's one engine did,
            # past the first stats after it (which may count work done before it); of two engines, whose it is unknown
            return next((at for at in self._progress.get((f.node, self.attempt_of(f), "pid", *engines), [])
                         if at.ts is not None and (at.ts - f.ts).total_seconds() > STATS_INTERVAL_S), None)
        key = (f.node, self.attempt_of(f)) if node_wide else (f.node, self.attempt_of(f), *w)
        # (a whole node's: its other processes' work in the same second is the same start's, not after the failure)
        return next((at for at in self._progress.get(key, []) if at.after(f.ts, f.file, f.place) and not (
            node_wide and at.ts and f.ts and (at.ts - f.ts).total_seconds() < TIE_SECONDS)), None)

    def refused_after(self, f) -> At | None:
        """The next error response its process gave after the finding, within TIE_SECONDS (or next in its file, with
        no times), when it refused the request (4xx): the finding was that request's."""
        w = who(f.source, f.pid, getattr(f, "ident", None), f.file, getattr(f, "task", None))
        at, status = next(((at, status) for at, status in self._answers.get((f.node, *w), [])
                           if at.after(f.ts, f.file, f.place)), (None, None))
        near = at is not None and (f.ts is None or at.ts is None or (at.ts - f.ts).total_seconds() <= TIE_SECONDS)
        return at if near and str(status).startswith("4") else None

    def served_after(self, f) -> At | None:
        """The first sign of work after a request's failure: of its process; for a process that does no work of its
        own (a gateway, a proxy in front of the server), of any process of its node, or of the deployment's for a
        gateway the bundle places on no node."""
        if f.node is None:
            return self.went_on_anywhere(f)
        w = who(f.source, f.pid, getattr(f, "ident", None), f.file, getattr(f, "task", None))
        own = (f.node, self.attempt_of(f), *w) in self._progress if w else False
        return self.progress_after(f) if own else self.progress_after(f, node_wide=True)

    def went_on_anywhere(self, f, device: bool = False) -> At | None:
        """The first sign of work of the deployment, on any node, after the finding. (A node's work after its
        restart is a new attempt's: the fault was not survived there. After a `device` fault the kernel reports,
        only work that proves it survived: `_proves_survival`.)"""
        # (a device fault before the deployment began: only its own node's GPUs at work later prove it survived; the
        # other nodes' start goes on as far as their own steps take it, whatever that node's fault. A process the
        # kernel names then, crashed or killed, was no process of the deployment's yet)
        early = device and f.node is not None and f.ts is not None and f.category not in \
            outcome_data().process_categories and (self._app_began is None or f.ts < self._app_began)
        later = [at for key, ats in self._progress.items() for at in ats
                 if len(key) == 2 and f.ts is not None and at.ts is not None and at.ts > f.ts
                 and key[1] == self.attempt_at(key[0], f.ts) and (not device or self._proves_survival(at, f.ts))
                 and (not early or key[0] == f.node and (at.file, at.line) in self._gpus_worked)]
        return min(later, key=lambda at: at.ts) if later else None

    def _proves_survival(self, at: At, ts: datetime | None) -> bool:
        """`at` shows work that went on after a device fault at `ts` (a time to the second): it is not an engine's first
        stats after it, within its stats interval (they may count work done before it), and, where the deployment
        already ran then, its file shows no start between the fault and it (a process started after it is a restart,
        not a survivor; a log whose head was cut away starts nothing)."""
        if at.ts is None or ts is None:
            return True
        first_stats = (at.file, at.line) in self._stats_lines and (at.ts - ts).total_seconds() <= \
            self._stats_every.get(at.file, STATS_INTERVAL_S) + TIE_SECONDS
        restarted = self._app_began is not None and self._app_began <= ts and any(
            t is not None and ts < t <= at.ts for t in self._file_starts.get(at.file) or ())
        return not first_stats and not restarted

    @staticmethod
    def _stuck_since(ev: pl.DataFrame, stats: pl.DataFrame, running: pl.Expr) -> list:
        """The last time of each attempt's file whose last stats line shows requests running and nothing done: V1
        logs a second such line at debug level only (an idle server's quiet), so its file's later lines, the API
        server's answers to health checks, its stop, are the stall going on."""
        last = stats.filter(pl.col("ts").is_not_null()).sort("ts").group_by("file", "attempt").last() \
            .filter((running > 0) & ~pl.col("progress").fill_null(False)).select("file", "attempt")
        return [] if last.is_empty() else ev.join(last, on=["file", "attempt"]).group_by("file", "attempt") \
            .agg(pl.col("ts").max())["ts"].drop_nulls().to_list()

    def stalled_at(self, f) -> bool:
        """The deployment worked until the finding, and from then on its engine did nothing with requests running
        (stats a minute or more after it say so; a line within the first interval may count work done before it):
        a device that came back too late, the collectives it broke never resumed. An idle server: no stall."""
        if f.ts is None or self._work_span is None or self._last_stuck is None:
            return False
        first, last = self._work_span
        return first < f.ts and (self._last_stuck - f.ts).total_seconds() >= STALL_SEEN_S \
            and (last - f.ts).total_seconds() <= STATS_INTERVAL_S + TIE_SECONDS   # (the fault: to the second)

    def _serving_after(self, ts: datetime, node=None) -> At | None:
        """The first sign after `ts` that the deployment (or `node`) served: a node became ready, or worked once
        ready."""
        later = []
        for key, ready in self.ready.items():
            if ready.ts is None or node is not None and key[0] != node:
                continue
            if ready.ts > ts:
                later.append(ready)
            later += [at for at in self._progress.get(key, [])
                      if at.ts is not None and at.ts > ts and at.ts >= ready.ts and self._proves_survival(at, ts)]
        return min(later, key=lambda at: at.ts) if later else None

    def joined_after(self, f) -> At | None:
        """The first line after a failure of a meeting (landmarks.toml [joined]) showing that its group formed,
        from any process of its node in the same attempt; None for other categories."""
        if self._joined is None or not {f.category, f.sig} & self._joined[0]:
            return None
        return next((at for at in self._joined[1].get((f.node, self.attempt_of(f)), [])
                     if at.after(f.ts, f.file, f.place)), None)

    def attempt_at(self, node, ts: datetime):
        """The attempt the node was in at time ts (its first, before it logged anything)."""
        begun = self._begun.get(node, [])
        return next((a for t, a in reversed(begun) if t <= ts), begun[0][1] if begun else None)

    def ready_after(self, f) -> At | None:
        """The finding's node became ready after it, in the same attempt (an error that did not keep the server
        from starting); only for the deployment's own logs (a host's journal, a kernel line, an event have rules
        of their own)."""
        ready = self.ready.get((f.node, self.attempt_of(f))) \
            if f.source != "kernel" and f.file in self.app_files else None
        return ready if ready is not None and ready.after(f.ts, f.file, f.place) else None

    def serving_elsewhere(self, f) -> At | None:
        """A server that became ready in its node's last attempt and was never stopped, on another node than the
        finding's or in a later attempt of its own (a rerun after a fix): the service went on, or is back, while
        the finding's part never joined it."""
        mine = self.attempt_of(f)
        return next((r for (node, attempt), r in self._serving_at_end(self.server_ready)
                     if (f.node is not None and node is not None and node != f.node)
                     or (node == f.node and mine is not None and attempt is not None and attempt > mine)), None)

    def _serving_at_end(self, ready: dict | None = None) -> list:
        """((node, attempt), ready) of each node whose last attempt became ready and was never stopped."""
        ready = self.ready if ready is None else ready
        last: dict = {}
        for node, attempt in [*ready, *self.stops]:
            last[node] = max(last.get(node, attempt), attempt, key=lambda a: (a is not None, a or 0))
        return [(k, r) for k, r in sorted(ready.items(), key=lambda kv: str(kv[0]))
                if k[1] == last[k[0]] and k not in self.stops]

    def ready_before(self, f) -> bool:
        """The deployment was ready (any node, in the finding's attempt or, for a node without serving
        landmarks of its own such as a headless worker, any node's) before the finding. A finding of a container
        or unit with landmarks of its own is ready only by its own where another service of its node was ready on
        its own (compose)."""
        if (f.node, getattr(f, "ident", None)) in self._services:
            own = self._ready_ident.get((f.node, self.attempt_of(f), f.ident))
            if own is not None or any(n == f.node and i != f.ident for n, _, i in self._ready_ident):
                return own is not None and own.before(f.ts, f.file, f.place)
            # (no service of its node was ready on its own: it is ready when its node is, a unit's own log that
            # holds none of the server's readiness)
        mine = [r for (n, a), r in self.ready.items() if n == f.node and a == self.attempt_of(f)]
        headless = not any(n == f.node for n, _ in self.ready)  # (a node ready in another attempt has its own)
        others = list(self.ready.values()) if headless else []
        return any(r.before(f.ts, f.file, f.place) for r in mine + others)
