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
DATED = r"\b(20\d\d-[01]\d-[0-3]\d[ T][0-2]\d:[0-5]\d:[0-5]\d)"  # a full date written inside a line
DATED_RFC2822 = r"\b([0-3]?\d [A-Z][a-z]{2} 20\d\d [0-2]\d:[0-5]\d:[0-5]\d)\b"  # 'Start Time: Thu, 17 Oct 2024 ...' 


@dataclass
class NodeClock:
    offset_s: float | None = None       # this node's clock minus the reference node's
    applied: bool = False
    anchors: int = 0
    boot_time: str | None = None        # ISO UTC
    boot_source: str | None = None
    source: str = "estimated from the rank-assignment lines"


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


def _yearless() -> pl.Expr:
    c = pl.col
    return pl.when(c("wt_kind") == "yearless").then(c("wt")).when(c("lt_kind") == "yearless").then(c("lt"))


def _with_year(expr: pl.Expr, year: pl.Expr) -> pl.Expr:
    return pl.datetime(year, expr.dt.month(), expr.dt.day(), expr.dt.hour(), expr.dt.minute(), expr.dt.second(),
                       expr.dt.microsecond(), time_unit="us")


@dataclass
class ClockModel:
    """What the clock stage learnt about a bundle; applied batch by batch by `apply`."""

    tz: str = UTC
    bundle_ref: datetime | None = None
    node_ref: dict[str | None, datetime] = field(default_factory=dict)
    boots: dict[str | None, datetime] = field(default_factory=dict)
    offsets: dict[str, float] = field(default_factory=dict)   # applied offsets only
    no_future: bool = False  # the reference is "now": never pick a year that is after it
    file_ref: dict[str, datetime] = field(default_factory=dict)  # with no_future: each file's last time


def _exact(tz: str) -> pl.Expr:
    c = pl.col
    return (pl.when(c("wt_kind") == "utc").then(c("wt"))
            .when(c("lt_kind") == "utc").then(c("lt"))
            .when(c("lt_kind") == "local").then(_as_utc(c("lt"), tz)))


def learn(ev: pl.DataFrame, tz: str = UTC, skew_tolerance: float = 2.0,
          boot_facts: dict[str | None, datetime] | None = None,
          reference_facts: list[datetime] | None = None,
          measured: dict[str, float] | None = None) -> tuple[ClockModel, ClockReport]:
    """Reference dates for year-less times, boot times, and per-node offsets, from attributed events."""
    m, rep = ClockModel(tz=tz), ClockReport()
    c = pl.col
    exact = ev.select("node", _exact(tz).alias("_e")).drop_nulls("_e")
    for (node,), g in exact.group_by("node"):
        m.node_ref[node] = g["_e"].median()
    mentioned = pl.concat([
        ev["text"].str.extract(DATED, 1).str.replace("T", " ").str.to_datetime("%Y-%m-%d %H:%M:%S", time_unit="us",
                                                                             strict=False),
        ev["text"].str.extract(DATED_RFC2822, 1).str.to_datetime("%d %b %Y %H:%M:%S", time_unit="us", strict=False),
    ]).drop_nulls()
    if exact.height:
        m.bundle_ref, rep.year_source = exact["_e"].median(), "dated lines in the bundle"
    elif reference_facts:
        m.bundle_ref = sorted(reference_facts)[len(reference_facts) // 2].astimezone(timezone.utc).replace(tzinfo=None)
        rep.year_source = "dates in the bundle's dumps"
    elif len(mentioned):
        m.bundle_ref, rep.year_source = mentioned.median(), "dates written inside log lines"
    else:
        # nothing dates the bundle: the most recent year that does not put the logs in the future
        m.bundle_ref = datetime.now(timezone.utc).replace(tzinfo=None)
        m.no_future = True
        rep.year_source = "none in the bundle: the most recent past year was assumed"
        # one year per file, not per line: its last line is in the most recent past, the others are near it
        now = pl.lit(m.bundle_ref, pl.Datetime("us"))
        last = ev.filter(_yearless().is_not_null()).group_by("file").agg(
            _yearless().sort_by(["line", "sub"]).last().alias("_y")).with_columns(
            _with_year(c("_y"), now.dt.year()).alias("_y")).with_columns(
            pl.when(c("_y") > now).then(c("_y").dt.offset_by("-1y")).otherwise(c("_y")).alias("_y"))
        m.file_ref = dict(last.iter_rows())
    # boot times: from the dumps (uptime -s, date + /proc/uptime), else from kernel lines with both clocks
    sources: dict[str | None, str] = {}
    for node, bt in (boot_facts or {}).items():
        m.boots[node] = bt.astimezone(timezone.utc).replace(tzinfo=None) if bt.tzinfo else bt
        sources[node] = "uptime -s / date in the bundle"
    both = ev.filter(c("source") == "kernel").select(
        "node", _exact(tz).alias("_e"),
        pl.coalesce(c("uptime"), c("text").str.extract(INNER_UPTIME, 1).cast(pl.Float64, strict=False)).alias("_up")
    ).drop_nulls(["_e", "_up"])
    for (node,), g in both.group_by("node"):
        if node not in m.boots:
            m.boots[node] = g.select((c("_e") - pl.duration(microseconds=(c("_up") * 1e6).cast(pl.Int64))).median())[0, 0]
            sources[node] = "kernel lines that carry both wall time and uptime"
    nodes = sorted(n for n in ev["node"].unique().to_list() if n)
    if None in m.boots and len(nodes) <= 1:
        for n in nodes:
            m.boots.setdefault(n, m.boots[None])
            sources.setdefault(n, sources[None])
    for node, when in m.boots.items():
        if node is not None:
            nc = rep.nodes.setdefault(node, NodeClock())
            nc.boot_time, nc.boot_source = when.replace(tzinfo=timezone.utc).isoformat(), sources[node]
    # per-node offsets: measured in the bundle (simultaneous `date` readings, chrony) if it can, else
    # estimated from the rank-assignment lines every worker prints at the same moment
    if measured:
        nodes_known = set(nodes)
        usable = {n: off for n, off in measured.items() if n in nodes_known}
        if len(usable) >= 2:
            ref_node = min(usable)
            rep.reference_node = ref_node
            for node, off in sorted(usable.items()):
                rel = off - usable[ref_node]
                nc = rep.nodes.setdefault(node, NodeClock())
                nc.offset_s, nc.anchors, nc.source = round(rel, 3), 0, "measured in the bundle"
                nc.applied = abs(rel) > 0.5  # a measurement is trusted below the estimate's tolerance
                if nc.applied:
                    m.offsets[node] = rel
            return m, rep
    timed = _times(ev.filter(c("text").str.contains(ASSIGNED) & c("node").is_not_null()), m)
    anchors = timed.filter(c("ts").is_not_null()).group_by("node").agg(
        c("ts").median().alias("_a"), pl.len().alias("_n")).sort("node")
    if anchors.height >= 2:
        ref = anchors.sort(["_n", "node"], descending=[True, False]).row(0, named=True)
        rep.reference_node = ref["node"]
        for row in anchors.iter_rows(named=True):
            off = (row["_a"] - ref["_a"]).total_seconds()
            nc = rep.nodes.setdefault(row["node"], NodeClock())
            nc.offset_s, nc.anchors = round(off, 3), row["_n"]
            nc.applied = abs(off) > skew_tolerance
            if nc.applied:
                m.offsets[row["node"]] = off
    return m, rep


def _lookup(key: str, by: dict[str | None, datetime]) -> pl.Expr:
    """The time `by` gives the row's `key` (a None key stands for rows whose key is null)."""
    known = {k: v for k, v in by.items() if k is not None}
    found = pl.col(key).replace_strict(known, default=None, return_dtype=pl.Datetime("us")) if known else \
        pl.lit(None, pl.Datetime("us"))
    return found if None not in by else pl.when(pl.col(key).is_null()).then(pl.lit(by[None], pl.Datetime("us"))) \
        .otherwise(found)


def _times(ev: pl.DataFrame, m: ClockModel) -> pl.DataFrame:
    """`ts` (naive UTC) and `ts_quality` from each line's own clock, before filling and offsets."""
    c = pl.col
    ev = ev.with_columns(_lookup("node", m.node_ref).alias("_ref"), _lookup("node", m.boots).alias("_boot"),
                         _lookup("file", m.file_ref).alias("_fref")) \
        .with_columns(pl.coalesce("_fref", "_ref", pl.lit(m.bundle_ref, pl.Datetime("us"))).alias("_ref"),
                      (c("_fref").is_null() & m.no_future).alias("_past"), _exact(m.tz).alias("_exact"))
    # the year of year-less times: the one that puts them closest to the file's last time (with nothing to
    # date the bundle), else the node's or the bundle's dated lines (a December line next to January
    # references belongs to the year before)
    yl = _yearless()
    ref_year = c("_ref").dt.year()
    same_year = _with_year(yl, ref_year)
    half_year = pl.duration(days=183)
    year = (pl.when(c("_past")).then(pl.when(same_year > c("_ref")).then(ref_year - 1).otherwise(ref_year))
            .when(same_year - c("_ref") > half_year).then(ref_year - 1)
            .when(c("_ref") - same_year > half_year).then(ref_year + 1).otherwise(ref_year))
    best = _as_utc(_with_year(yl, year), m.tz)
    from_boot = c("_boot") + pl.duration(microseconds=(c("uptime") * 1e6).cast(pl.Int64))
    ev = ev.with_columns(pl.when(yl.is_not_null()).then(best).alias("_yearless"))
    return ev.with_columns(
        pl.coalesce("_exact", "_yearless", from_boot).alias("ts"),
        pl.when(c("_exact").is_not_null()).then(pl.lit("exact"))
        .when(c("_yearless").is_not_null() | (c("uptime").is_not_null() & c("_boot").is_not_null()))
        .then(pl.lit("inferred"))
        .when(c("uptime").is_not_null()).then(pl.lit("relative"))
        .otherwise(None).alias("ts_quality")).drop("_ref", "_fref", "_past", "_boot", "_exact", "_yearless")


def apply(ev: pl.DataFrame, m: ClockModel, last_ts: dict[str, datetime] | None = None) -> pl.DataFrame:
    """Add `ts` (UTC) and `ts_quality`. Rows are in file order; a line with no time of its own takes the
    time of the line before it in its file (`last_ts` carries that across batches and is updated)."""
    c = pl.col
    ev = _times(ev, m)
    if last_ts:
        carry = pl.DataFrame({"file": list(last_ts), "_carry": list(last_ts.values())},
                             schema={"file": pl.String, "_carry": pl.Datetime("us")})
        ev = ev.join(carry, on="file", how="left")
    else:
        ev = ev.with_columns(pl.lit(None, pl.Datetime("us")).alias("_carry"))
    if ev["ts_quality"].null_count():
        filled = pl.coalesce(c("ts").forward_fill().over("file", order_by=["line", "sub"]), c("_carry"))
        ev = ev.with_columns(pl.when(c("ts_quality").is_null()).then(filled).otherwise(c("ts")).alias("ts"))
    ev = ev.with_columns(
        pl.when(c("ts_quality").is_null() & c("ts").is_not_null()).then(pl.lit("inferred"))
        .otherwise(c("ts_quality")).fill_null("none").alias("ts_quality")).drop("_carry")
    if last_ts is not None:
        for f, t in ev.filter(c("ts").is_not_null() & (c("ts_quality") != "relative")).group_by("file").agg(
                c("ts").sort_by(["line", "sub"]).last()).iter_rows():
            last_ts[f] = t
    if m.offsets:
        om = pl.DataFrame({"node": list(m.offsets), "_off": list(m.offsets.values())},
                          schema={"node": pl.String, "_off": pl.Float64})
        ev = ev.join(om, on="node", how="left").with_columns(
            pl.when(c("_off").is_not_null() & c("ts").is_not_null())
            .then(c("ts") - pl.duration(microseconds=(c("_off") * 1e6).cast(pl.Int64))).otherwise(c("ts"))
            .alias("ts")).drop("_off")
    return ev.with_columns(c("ts").dt.replace_time_zone(UTC))


def align(ev: pl.DataFrame, tz: str = UTC, skew_tolerance: float = 2.0,
          boot_facts: dict[str | None, datetime] | None = None,
          reference_facts: list[datetime] | None = None) -> tuple[pl.DataFrame, ClockReport]:
    """Learn the bundle's clocks from these events and apply them to them."""
    m, rep = learn(ev, tz, skew_tolerance, boot_facts, reference_facts)
    return apply(ev, m), rep


def parse_iso(value: str) -> datetime | None:
    """A fact's ISO time as an aware datetime (naive ones are UTC)."""
    try:
        dt = datetime.fromisoformat(re.sub(r"Z$", "+00:00", value.strip()))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
