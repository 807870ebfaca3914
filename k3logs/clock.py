"""Put every event on one UTC time line, with a quality flag (log-formats.md 12).

exact     the line or its container wrapper states date and time (zone-less ones are read in --tz)
inferred  the year came from elsewhere in the bundle (vLLM 'MM-DD', torch glog, syslog), the kernel's
          seconds-since-boot were turned into wall time with the node's boot time, or a line with no time
          of its own took the time of the line before it in its file
relative  kernel seconds since boot on a node whose boot time the bundle does not give
none      nothing in the bundle tells

Nodes' clocks disagree: an offset per node is estimated from events every rank logs at the same moment
(the rank assignment right after the process-group barrier) and applied when it exceeds the tolerance.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

import polars as pl

from .attribute import ASSIGNED

UTC = "UTC"
INNER_UPTIME = r"^\[\s*(\d+\.\d+)\]"


@dataclass
class NodeClock:
    offset_s: float | None = None       # this node's clock minus the reference node's
    applied: bool = False
    anchors: int = 0
    boot_time: str | None = None        # ISO UTC
    boot_source: str | None = None


@dataclass
class ClockReport:
    reference_node: str | None = None
    year_source: str | None = None
    nodes: dict[str, NodeClock] = field(default_factory=dict)


def _as_utc(expr: pl.Expr, tz: str) -> pl.Expr:
    """A naive local datetime read in `tz`, as naive UTC."""
    if tz == UTC:
        return expr
    return expr.dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null").dt.convert_time_zone(UTC) \
        .dt.replace_time_zone(None)


def _with_year(expr: pl.Expr, year: pl.Expr) -> pl.Expr:
    return pl.datetime(year, expr.dt.month(), expr.dt.day(), expr.dt.hour(), expr.dt.minute(), expr.dt.second(),
                       expr.dt.microsecond(), time_unit="us")


def align(ev: pl.DataFrame, tz: str = UTC, skew_tolerance: float = 2.0,
          boot_facts: dict[str | None, datetime] | None = None,
          reference_facts: list[datetime] | None = None) -> tuple[pl.DataFrame, ClockReport]:
    """Add `ts` (UTC) and `ts_quality` to attributed events."""
    rep = ClockReport()
    c = pl.col
    exact = (pl.when(c("wt_kind") == "utc").then(c("wt"))
             .when(c("lt_kind") == "utc").then(c("lt"))
             .when(c("lt_kind") == "local").then(_as_utc(c("lt"), tz)))
    ev = ev.with_columns(exact.alias("_exact"))

    # 1. the year of year-less times: the one closest to the node's (else the bundle's) dated events
    refs = ev.filter(c("_exact").is_not_null()).group_by("node").agg(c("_exact").median().alias("_ref"))
    all_exact = ev["_exact"].drop_nulls()
    bundle_ref = all_exact.median() if len(all_exact) else None
    if bundle_ref is None and reference_facts:
        bundle_ref = sorted(reference_facts)[len(reference_facts) // 2].replace(tzinfo=None)
        rep.year_source = "dates in the bundle's dumps"
    elif bundle_ref is not None:
        rep.year_source = "dated lines in the bundle"
    if bundle_ref is None:
        bundle_ref = datetime.now(timezone.utc).replace(tzinfo=None)
        rep.year_source = "none in the bundle: the current year was assumed"
    ev = ev.join(refs, on="node", how="left", nulls_equal=True).with_columns(
        c("_ref").fill_null(pl.lit(bundle_ref, pl.Datetime("us"))))
    yl = pl.when(c("wt_kind") == "yearless").then(c("wt")).when(c("lt_kind") == "yearless").then(c("lt"))
    ref_year = c("_ref").dt.year()
    cands = [_as_utc(_with_year(yl, ref_year + d), tz) for d in (-1, 0, 1)]
    diffs = [(cand - c("_ref")).abs() for cand in cands]
    best = (pl.when(diffs[0] < pl.min_horizontal(diffs[1], diffs[2])).then(cands[0])
            .when(diffs[2] < diffs[1]).then(cands[2]).otherwise(cands[1]))
    ev = ev.with_columns(pl.when(yl.is_not_null()).then(best).alias("_yearless"))

    # 2. kernel seconds since boot: boot time from the dumps, else from a line with both clocks
    boots: dict[str | None, tuple[datetime, str]] = {}
    for node, bt in (boot_facts or {}).items():
        boots[node] = (bt.astimezone(timezone.utc).replace(tzinfo=None) if bt.tzinfo else bt, "uptime -s / date in the bundle")
    both = ev.filter(c("_exact").is_not_null() & (c("source") == "kernel")).with_columns(
        c("text").str.extract(INNER_UPTIME, 1).cast(pl.Float64, strict=False).alias("_up")).drop_nulls("_up")
    for node, g in both.group_by("node"):
        est = g.select((c("_exact") - pl.duration(microseconds=(c("_up") * 1e6).cast(pl.Int64))).median())[0, 0]
        boots.setdefault(node[0], (est, "kernel lines that carry both wall time and uptime"))
    if None in boots and len({n for n in ev["node"].unique().to_list() if n}) <= 1:
        for n in ev["node"].drop_nulls().unique().to_list():
            boots.setdefault(n, boots[None])
    bt = pl.DataFrame({"node": [k for k in boots], "_boot": [v[0] for v in boots.values()]},
                      schema={"node": pl.String, "_boot": pl.Datetime("us")})
    ev = ev.join(bt, on="node", how="left", nulls_equal=True)
    from_boot = c("_boot") + pl.duration(microseconds=(c("uptime") * 1e6).cast(pl.Int64))
    ev = ev.with_columns(
        pl.coalesce("_exact", "_yearless", from_boot).alias("ts"),
        pl.when(c("_exact").is_not_null()).then(pl.lit("exact"))
        .when(c("_yearless").is_not_null() | (c("uptime").is_not_null() & c("_boot").is_not_null())).then(pl.lit("inferred"))
        .when(c("uptime").is_not_null()).then(pl.lit("relative"))
        .otherwise(None).alias("ts_quality"))
    for node, (when, src) in boots.items():
        if node is not None:
            nc = rep.nodes.setdefault(node, NodeClock())
            nc.boot_time, nc.boot_source = when.replace(tzinfo=timezone.utc).isoformat(), src

    # 3. lines with no time of their own take the time of the line before them in the file
    ev = ev.sort(["file", "line", "sub"]).with_columns(
        pl.when(c("ts_quality").is_null()).then(c("ts").forward_fill().over("file")).otherwise(c("ts")).alias("ts"))
    ev = ev.with_columns(
        pl.when(c("ts_quality").is_null() & c("ts").is_not_null()).then(pl.lit("inferred"))
        .otherwise(c("ts_quality")).fill_null("none").alias("ts_quality"))

    # 4. per-node clock offsets from the rank-assignment lines every worker prints at the same moment
    anchors = ev.filter(c("text").str.contains(ASSIGNED) & c("ts").is_not_null() & c("node").is_not_null()) \
        .group_by("node").agg(c("ts").median().alias("_a"), pl.len().alias("_n")).sort("node")
    if anchors.height >= 2:
        ref = anchors.sort(["_n", "node"], descending=[True, False]).row(0, named=True)
        rep.reference_node = ref["node"]
        offsets = {}
        for row in anchors.iter_rows(named=True):
            off = (row["_a"] - ref["_a"]).total_seconds()
            nc = rep.nodes.setdefault(row["node"], NodeClock())
            nc.offset_s, nc.anchors = round(off, 3), row["_n"]
            nc.applied = abs(off) > skew_tolerance
            if nc.applied:
                offsets[row["node"]] = off
        if offsets:
            om = pl.DataFrame({"node": list(offsets), "_off": list(offsets.values())},
                              schema={"node": pl.String, "_off": pl.Float64})
            ev = ev.join(om, on="node", how="left").with_columns(
                pl.when(c("_off").is_not_null() & c("ts").is_not_null())
                .then(c("ts") - pl.duration(microseconds=(c("_off") * 1e6).cast(pl.Int64))).otherwise(c("ts"))
                .alias("ts")).drop("_off")
    ev = ev.drop("_exact", "_ref", "_yearless", "_boot")
    return ev.with_columns(c("ts").dt.replace_time_zone(UTC)), rep


def parse_iso(value: str) -> datetime | None:
    """A fact's ISO time as an aware datetime (naive ones are UTC)."""
    try:
        dt = datetime.fromisoformat(re.sub(r"Z$", "+00:00", value.strip()))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
