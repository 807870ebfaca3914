"""The meetings the rank-assignment lines show: every worker of a world prints its line as the world forms, so the
lines of one node come in one burst per meeting (a start, a restart of the group). A node's clock is compared with
another's over one meeting: its burst nearest the other's (clocks are seldom minutes apart, restarts are), never
over the median of several starts, which falls between them."""
from __future__ import annotations

from datetime import datetime

import polars as pl

# a gap in a node's rank-assignment lines this long starts another meeting (a world forms within seconds)
MEETING_GAP_S = 60.0


def bursts(timed: pl.DataFrame) -> dict[str, list[datetime]]:
    """Node -> the median time of each burst of its rank-assignment lines (`timed`: node, ts), in time order."""
    c = pl.col
    rows = timed.filter(c("ts").is_not_null() & c("node").is_not_null()).sort("node", "ts")
    gap = (c("ts").diff().dt.total_seconds() > MEETING_GAP_S).fill_null(False).cum_sum().over("node")
    got = rows.with_columns(gap.alias("_b")).group_by("node", "_b").agg(c("ts").median()).sort("node", "_b")
    return {node: g["ts"].to_list() for (node,), g in got.group_by("node", maintain_order=True)}


def offset(mine: list[datetime], ref: list[datetime]) -> float:
    """A node's clock against the reference's: the difference of the nearest pair of their meetings."""
    return min(((a - b).total_seconds() for a in mine for b in ref), key=abs)
