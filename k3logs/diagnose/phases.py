"""The phase of every line (taxonomy.md phases): the lifecycle landmarks of each node's server, starts of the server
told apart, host lines left out of the lifecycle they do not belong to."""
from __future__ import annotations

from datetime import timedelta

import polars as pl

from k3logs.catalogue.landmarks import decision_line
from k3logs.schema import PHASES

from .assign import rank_code
from .detect import phase_marks
from .findings import TIE_SECONDS
from .outcome import APP_KINDS, KERNEL_SLACK_S

SAME_START_S = 5           # start landmarks this close together on a node are one start of the server


def assign_phases(ev: pl.DataFrame, outside: frozenset[str] | set[str] = frozenset()) -> pl.DataFrame:
    """`phase` per event: the furthest landmark its worker (else its node, in this attempt of the server)
    reached at or before it. Phases do not go back: a backend chosen while the model is built is not a
    return to device init. Kept for the outcome: `mark` (the landmark's phase), `attempt` (the node's
    restarts so far) and `progress` (the line shows its process doing its work). Lines of the files
    `outside` the deployment (host journals, kernel logs, Kubernetes events) mark no phase: a unit that
    another program stops is not the deployment stopping."""
    marks = phase_marks(ev)
    if outside:
        inside = ~ev["file"].is_in(sorted(outside))
        marks = marks.with_columns(pl.when(inside).then(pl.col(c)).otherwise(None if c == "mark" else False).alias(c)
                                   for c in marks.columns)
    order = {p: i for i, p in enumerate(PHASES)}
    ev = ev.with_columns(marks["mark"].replace_strict(order, default=None, return_dtype=pl.Int8).alias("_mi"),
                         marks["restart"].alias("_restart"), marks["mark"].alias("_mark"),
                         marks["progress"].alias("progress"), marks["joined"].alias("joined"))
    ev = ev.sort(["ts", "file", "seq" if "seq" in ev.columns else "line", "sub"], nulls_last=True)
    # a server stopped, then a start landmark again (its import's platform line, before any version line: it may
    # fail right there): it was started again
    again = ((pl.col("_mark") == "startup") & (pl.col("_mark").forward_fill().shift(1).over("node") == "shutdown")
             ).fill_null(False)
    # the deployment's systemd unit stopped (a stop of its own), then started again: a new attempt, whether or not
    # the server prints a line of it
    stopped = pl.when(pl.col("_mark") == "shutdown").then(pl.col("text").str.extract(decision_line("unit_stopping"), 1))
    started = pl.col("text").str.extract(decision_line("unit_starting"), 1)
    again = again | (started == stopped.forward_fill().shift(1).over("node")).fill_null(False)
    # a node with no start of its own (a headless worker) that took part in a run the deployment stopped is in its
    # next start: its deployment's lines after a start that came after the stop are a new attempt's
    start_ts = pl.when(pl.col("_mark") == "startup").then(pl.col("ts")).forward_fill()
    stop_ts = pl.when(pl.col("_mark") == "shutdown").then(pl.col("ts")).forward_fill()
    joined = (~(pl.col("_mark") == "startup").fill_null(False).any().over("node") & (start_ts > stop_ts)
              & (pl.col("ts").min().over("node") < stop_ts) & pl.col("source").is_in(APP_KINDS)).fill_null(False)
    again = again | (joined & ~joined.shift(1).over("node").fill_null(False))
    ev = ev.with_columns(_restart=pl.col("_restart") | _opens_start(ev) | again)
    # a start prints several start landmarks at once (the version, then its arguments): one attempt
    last_start = pl.when(pl.col("_restart")).then(pl.col("ts")).forward_fill().shift(1).over("node")
    ev = ev.with_columns((pl.col("_restart") & (last_start.is_null() | pl.col("ts").is_null()
                                                | (pl.col("ts") - last_start > pl.duration(seconds=SAME_START_S))))
                         .alias("_restart"))
    # (a line whose rank is its subject's, a raylet's report of a worker's death, is not that worker's own doing: it
    # lives in its writer's, or its node's, lifecycle)
    own_rank = pl.col("rank").is_not_null() & (pl.col("rank_src") != rank_code("subject")).fill_null(True)
    is_worker = pl.col("proc").str.contains(decision_line("worker_process")).fill_null(False) | own_rank
    attempt = pl.col("_restart").cast(pl.Int32).cum_sum().over("node").alias("_attempt")
    ev = ev.with_columns(attempt)
    # (a pid is one process within one attempt: a container started again numbers its processes anew)
    proc_i = pl.col("_mi").fill_null(-1).cum_max().over(["node", "_attempt", "pid"])
    node_i = pl.col("_mi").fill_null(-1).cum_max().over(["node", "_attempt"])
    names = {i: p for p, i in order.items()}
    # (a landmark Ray's deduplication printed once for many workers is each of its node's workers' own too)
    deduped_i = pl.when(pl.col("text").str.contains(decision_line("repeated_across_cluster")).fill_null(False)) \
        .then(pl.col("_mi")).fill_null(-1).cum_max().over(["node", "_attempt"])
    own_i = pl.when(is_worker & pl.col("pid").is_not_null() & (proc_i >= 0)) \
        .then(pl.max_horizontal(proc_i, deduped_i)).otherwise(node_i)
    # serving (and winding down) is the deployment's state, not one process's: once the server is ready, every
    # worker on its node serves, and a node with no serving landmark of its own (a headless worker) lives in
    # the deployment's lifecycle
    late = order["serving"]
    node_late = pl.when(node_i >= late).then(node_i).otherwise(-1)
    # (a node with a stop of its own takes only the deployment's serving: its stop is its own)
    own_serving = (pl.col("_mi") == late).fill_null(False).any().over("node")
    own_stop = (pl.col("_mi") > late).fill_null(False).any().over("node")
    ev = ev.with_columns(_deployment_late(ev, late).get_columns())
    dep = pl.when(own_serving | (own_stop & (pl.col("_served") == 0))).then(-1) \
        .when(own_stop).then(pl.col("_dep").clip(upper_bound=late)).otherwise(pl.col("_dep"))
    phase_i = pl.max_horizontal(own_i, node_late, dep)
    ev = ev.with_columns(phase_i.replace_strict(names, default=None, return_dtype=pl.String).alias("phase"))
    # kernel lines whose time is unknown, or that come before the service logged anything (an earlier
    # attempt of a crash loop), take the phase the node's logs reached; a line whose time is unknown (a pod's
    # status, an event's age) that would fall in the node's stop takes the furthest phase its work reached
    # before it (a stop is where the work ended, not what it was doing)
    last_node = ev.filter(pl.col("_mark").is_not_null()).group_by("node").agg(
        pl.col("_mark").last().alias("_lastp"),
        pl.col("_mi").filter((pl.col("_mark") != "shutdown") & (pl.col("_attempt") == pl.col("_attempt").max()))
        .max().replace_strict(names, default=None, return_dtype=pl.String).alias("_workp"))
    unplaced = pl.col("ts").is_null() | (pl.col("phase").is_null() & (pl.col("source") == "kernel"))
    ev = ev.join(last_node, on="node", how="left", nulls_equal=True).with_columns(
        pl.when(unplaced).then(pl.coalesce("phase", "_lastp")).otherwise(pl.col("phase")).alias("phase"))
    ev = ev.with_columns(pl.when(pl.col("ts").is_null() & (pl.col("phase") == "shutdown"))
                         .then(pl.coalesce("_workp", "phase")).otherwise(pl.col("phase")).alias("phase"))
    ev = _late_kernel_lines(ev)
    return ev.rename({"_mark": "mark", "_attempt": "attempt"}).drop("_lastp", "_workp", "_mi", "_restart", "_dep",
                                                                    "_served")


def _late_kernel_lines(ev: pl.DataFrame) -> pl.DataFrame:
    """A kernel line that falls after its node's stop is the new attempt's when the node started again within
    the same second (the driver answering the new start; it sorts before that attempt's first line), else, up
    to KERNEL_SLACK_S after the stop (its clock may run seconds apart from the deployment's), the phase the node
    was in before it. (rows in time order)"""
    late = (pl.col("source") == "kernel") & (pl.col("phase") == "shutdown") & pl.col("ts").is_not_null()
    rows = ev.select(late.fill_null(False).arg_true()).to_series()
    if not len(rows):
        return ev
    phase, attempt = ev["phase"], ev["_attempt"]
    lines = ev[rows].select(pl.Series("_i", rows), "node", "ts")
    starts = ev.filter(pl.col("_restart") & pl.col("ts").is_not_null() & pl.col("phase").is_not_null())
    if not starts.is_empty():
        got = lines.sort("ts").join_asof(
            starts.select("node", pl.col("ts").alias("_start"), pl.col("phase").alias("_p"),
                          pl.col("_attempt").alias("_a")).sort("_start"),
            left_on="ts", right_on="_start", by="node", strategy="forward", tolerance=timedelta(seconds=TIE_SECONDS),
            check_sortedness=False).filter(pl.col("_p").is_not_null())
        phase, attempt = phase.scatter(got["_i"], got["_p"]), attempt.scatter(got["_i"], got["_a"])
        lines = lines.filter(~pl.col("_i").is_in(got["_i"].implode()))
    app = ev.filter((pl.col("source") != "kernel").fill_null(True) & pl.col("ts").is_not_null())
    stops = app.filter(pl.col("_mark") == "shutdown").group_by("node").agg(pl.col("ts").min().alias("_stop"))
    before = app.join(stops, on="node").filter((pl.col("ts") < pl.col("_stop")) & pl.col("phase").is_not_null()) \
        .group_by("node").agg(pl.col("phase").last().alias("_p"), pl.col("_stop").first())
    got = lines.join(before, on="node").filter((pl.col("ts") - pl.col("_stop")) <= pl.duration(seconds=KERNEL_SLACK_S))
    return ev.with_columns(phase.scatter(got["_i"], got["_p"]) if got.height else phase, attempt)


def _opens_start(ev: pl.DataFrame) -> pl.Series:
    """Startup lines that a restart landmark follows on their node within SAME_START_S (the platform is
    detected, vLLM's compiled ops are imported, at import, before the server prints its version): the new attempt
    begins with them, so that they are not the previous attempt's work. (rows in time order)"""
    node = pl.col("node").cast(pl.String).fill_null("")   # (a bundle that names no node: one node, joined too)
    starts = ev.filter(pl.col("_restart") & pl.col("ts").is_not_null()).select(node, pl.col("ts").alias("_next"))
    probe = ev.select(pl.int_range(pl.len()).alias("_i"), node, "ts", "_mark").filter(
        (pl.col("_mark") == "startup") & pl.col("ts").is_not_null())
    if starts.is_empty() or probe.is_empty():
        return pl.Series("_restart", [False] * ev.height)
    got = probe.sort("ts").join_asof(starts.sort("_next"), left_on="ts", right_on="_next", by="node",
                                     strategy="forward", tolerance=timedelta(seconds=SAME_START_S),
                                     check_sortedness=False)  # (sorted by ts above; `by` hides it)
    hit = got.filter(pl.col("_next").is_not_null())["_i"]
    return pl.Series("_restart", [False] * ev.height).scatter(hit, True)


def _deployment_late(ev: pl.DataFrame, late: int) -> pl.DataFrame:
    """`_dep`: the furthest serving-or-later landmark (serving, shutdown) the deployment reached before each row
    (rows in time order), and `_served` (1, else 0): whether one of them was serving; both none (-1, 0) where the
    row's node started (a start landmark of its attempt) once the deployment already served: a replacement pod, a
    crash loop's restart beside an old replica still serving, lives a lifecycle of its own. Another node's landmark
    counts only from TIE_SECONDS after it: within the same second the order of two nodes' lines is unknown (a
    worker's crash and the head's shutdown it causes)."""
    own = pl.when(pl.col("_mi") >= late).then(pl.col("_mi")).otherwise(-1).fill_null(-1)
    same_node = own.cum_max().over("node")  # (on its own node, file order is time order)
    marks = ev.filter((pl.col("_mi") >= late) & pl.col("ts").is_not_null()).select(
        (pl.col("ts") + pl.duration(seconds=TIE_SECONDS)).alias("_at"), pl.col("_mi").cum_max().alias("_far"),
        (pl.col("_mi") == late).cum_max().cast(pl.Int64).alias("_srv"))
    if marks.is_empty():
        return ev.select(same_node.alias("_dep"), pl.lit(0, pl.Int64).alias("_served"))
    marks = marks.sort("_at")
    started = pl.col("ts").filter(pl.col("_mi") == 0).min().over("node", "_attempt").alias("_begun")
    probe = ev.select(pl.int_range(pl.len()).alias("_i"), "ts", started).filter(pl.col("ts").is_not_null())
    starts = probe.select("_begun").drop_nulls().unique().sort("_begun").join_asof(
        marks.select(pl.col("_at").alias("_late_before")), left_on="_begun", right_on="_late_before",
        strategy="backward")
    # (a row before its attempt's start, a kernel line of a node whose earlier logs are gone, is not the start's)
    own_life = pl.col("_late_before").is_not_null() & (pl.col("ts") >= pl.col("_begun"))
    got = probe.join_asof(marks, left_on="ts", right_on="_at", strategy="backward") \
        .join(starts, on="_begun", how="left").with_columns(
            pl.when(~own_life).then(pl.col("_far")).alias("_far"),
            pl.when(~own_life).then(pl.col("_srv")).alias("_srv"))

    def at_rows(values: pl.Series) -> pl.Series:
        return pl.Series([None] * ev.height, dtype=pl.Int64).scatter(got["_i"], values.cast(pl.Int64))
    other = pl.DataFrame({"_f": ev["file"], "_o": at_rows(got["_far"]), "_s": at_rows(got["_srv"])})
    # an untimed row follows the rows before it in its file (a file with no time at all follows none)
    if ev["ts"].null_count():   # (a timed row left none on purpose, a new start's own lifecycle, stays none)
        untimed = pl.lit(ev["ts"].is_null())
        other = other.select(pl.when(untimed).then(pl.col(c).forward_fill().over("_f")).otherwise(pl.col(c)).alias(c)
                             for c in ("_o", "_s"))
    return ev.select(pl.max_horizontal(same_node, pl.lit(other["_o"]).fill_null(-1)).alias("_dep"),
                     pl.lit(other["_s"]).fill_null(0).alias("_served"))
