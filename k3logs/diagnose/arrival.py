"""How far apart two nodes' clocks can be, read off lines whose order is known whatever the clocks stamped on
them: a file written live as tasks on several nodes printed (formats.toml `arrival`: Slurm's `srun -l` output),
where a line that arrived before another was printed before it; and a process's report of an error another node
raised (diagnose.toml `relayed_error`), which came after it. Each such pair bounds the difference of two clocks."""
from __future__ import annotations

from collections.abc import Callable

import polars as pl

from .attribution import RX

SLACK_S = 1.0   # the launcher forwards a line within a second, and whole-second stamps drop up to one more


def order_bounds(ev: pl.DataFrame, ref: str, arrival: frozenset[str],
                 timed: Callable[[pl.DataFrame], pl.DataFrame]) -> dict[str, tuple[float, float]]:
    """What the order of lines allows each node's offset to be: in files written live (`arrival`: their wrappers),
    and between an error and another node's report of it. `timed`: rows with their own time (`ts`) and the node
    whose clock timed them (`node`)."""
    c = pl.col
    live = ev.filter(c("wrapper").is_in(list(arrival)) & c("node").is_not_null()) if arrival else ev.clear()
    relays = ev.filter(c("node").is_not_null() & c("text").str.contains(RX["relayed_error"].pattern))
    if relays.is_empty() and live.is_empty():
        return {}
    # (the rows that may have raised a relayed error: any row on a node, by the message the reports quote)
    said = relays["text"].str.extract(RX["relayed_error"].pattern, 1).drop_nulls().unique().to_list()
    raised = ev.filter(c("node").is_not_null() & pl.any_horizontal(c("text").str.contains(s, literal=True)
                                                                   for s in said)) if said else ev.clear()
    return merged(offset_bounds(timed(live), ref), relay_bounds(timed(raised), ref))


def offset_bounds(timed: pl.DataFrame, ref: str) -> dict[str, tuple[float, float]]:
    """(lo, hi): the range of each node's clock minus `ref`'s that the order of the files allows, in seconds.
    `timed`: rows of arrival-ordered files with `file`, `line`, `sub`, `node` (the clock that timed the row) and
    `ts` (the row's own time, before any offset)."""
    c = pl.col
    rows = timed.drop_nulls(["node", "ts"]).with_columns((c("ts").dt.epoch("us") / 1e6).alias("_t"))
    bounds: dict[str, tuple[float, float]] = {}
    for (_,), f in rows.group_by("file"):
        if ref not in f["node"].to_list():
            continue
        f = f.sort("line", "sub")
        r = pl.when(c("node") == ref).then(c("_t"))
        for node in sorted(set(f["node"].to_list()) - {ref}):
            n = pl.when(c("node") == node).then(c("_t"))
            # n printed before r: node's clock minus ref's >= n - r; n printed after r: <= n - r
            got = f.select(
                (n.cum_max().forward_fill().shift(1) - r).max().alias("lo"),
                (n.reverse().cum_min().forward_fill().reverse().shift(-1) - r).min().alias("hi")).row(0)
            lo, hi = bounds.get(node, (float("-inf"), float("inf")))
            bounds[node] = (max(lo, got[0] if got[0] is not None else lo),
                            min(hi, got[1] if got[1] is not None else hi))
    return bounds


def relay_bounds(timed: pl.DataFrame, ref: str) -> dict[str, tuple[float, float]]:
    """(lo, hi) as offset_bounds gives them, from relayed errors: the raising node's clock minus the reporter's is at
    least the raise's stamp minus the report's, where the error's message was raised on one other node only (raised
    on several, or on the reporter's own too, the report follows the first of them, which no line says). `timed`:
    rows with `node` (the clock's), `text` and `ts` (own time, before any offset)."""
    c = pl.col
    rows = timed.drop_nulls(["node", "ts"])
    relay = RX["relayed_error"].pattern
    reports = rows.with_columns(c("text").str.extract(relay, 1).alias("_m")).drop_nulls("_m") \
        .group_by("node", "_m").agg(c("ts").min()).sort("ts").head(20)
    bounds: dict[str, tuple[float, float]] = {}
    for node, msg, said in reports.iter_rows():
        raised = rows.filter(c("text").str.contains(msg, literal=True) & ~c("text").str.contains(relay))
        if raised["node"].n_unique() != 1 or raised["node"][0] == node or ref not in (node, raised["node"][0]):
            continue
        gap = (raised["ts"].min() - said).total_seconds()   # the raiser's clock minus the reporter's is >= gap
        other, lo, hi = (raised["node"][0], gap, float("inf")) if node == ref else (node, float("-inf"), -gap)
        was = bounds.get(other, (float("-inf"), float("inf")))
        bounds[other] = (max(was[0], lo), min(was[1], hi))
    return bounds


def merged(*all_bounds: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """The bounds of every witness together: each node's tightest."""
    out: dict[str, tuple[float, float]] = {}
    for bounds in all_bounds:
        for node, (lo, hi) in bounds.items():
            was = out.get(node, (float("-inf"), float("inf")))
            out[node] = (max(was[0], lo), min(was[1], hi))
    return out


def proven(bound: tuple[float, float] | None) -> bool:
    """Whether the order of lines shows the clocks apart, however little (beyond SLACK_S): such a skew is applied even
    below the estimate's tolerance, which is for the noise of an estimate that nothing bounds."""
    if bound is None or bound[0] - SLACK_S > bound[1] + SLACK_S:
        return False
    return bound[0] - SLACK_S > 0 or bound[1] + SLACK_S < 0


def bounded(estimate: float, bound: tuple[float, float] | None) -> float:
    """The estimate moved into what the arrival order allows (give or take SLACK_S); an order that contradicts
    itself (lines reordered on the way) bounds nothing."""
    if bound is None or bound[0] - SLACK_S > bound[1] + SLACK_S:
        return estimate
    return min(max(estimate, bound[0] - SLACK_S), bound[1] + SLACK_S)
