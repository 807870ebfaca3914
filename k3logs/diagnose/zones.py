"""Local times as UTC: a node's zone by its offset or, where the bundle names it (timedatectl), by its rules,
daylight saving time included; the zone a host's own timed rows state. (The clock stage's: clock.py.)"""
from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

if TYPE_CHECKING:
    from .clock import ClockModel

UTC = "UTC"


def as_utc(expr: pl.Expr, tz: str) -> pl.Expr:
    """A naive local datetime read in `tz`, as naive UTC."""
    if tz == UTC:
        return expr
    return expr.dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null").dt.convert_time_zone(UTC) \
        .dt.replace_time_zone(None)


# rows timed by their host's clock, not a container's: a journal's syslog-style time, the kernel's own (dmesg -T)
HOST_CLOCK = (pl.col("wrapper") == "journald") | (pl.col("source") == "kernel")


def local_utc(expr: pl.Expr, m: ClockModel) -> pl.Expr:
    """A zone-less local time as naive UTC: in its node's own zone for a host clock row of a node whose zone the
    bundle shows (timedatectl), else in the zone of a bare-metal bundle's hosts, else in the zone of the analysis
    (--tz)."""
    other = as_utc(expr, m.tz) if m.bare_zone is None or m.tz != UTC else expr - pl.duration(seconds=m.bare_zone)
    if not m.host_zone:
        return other
    off = pl.col("node").replace_strict(m.host_zone, default=None, return_dtype=pl.Int64)
    out = pl.when(HOST_CLOCK.fill_null(False) & off.is_not_null()) \
        .then(expr - pl.duration(seconds=off)).otherwise(other)
    for name in sorted(set(m.zone_name.values())):   # (a zone known by name: by its rules, DST included)
        nodes = sorted(n for n, z in m.zone_name.items() if z == name)
        mine = pl.col("node").is_in(nodes) & (HOST_CLOCK | pl.lit(m.bare_zone is not None))
        out = pl.when(mine.fill_null(False)).then(in_zone(expr, name)).otherwise(out)
    return out


def in_zone(expr: pl.Expr, name: str) -> pl.Expr:
    """A local time of a zone by name as naive UTC: an hour a fall-back repeats is its first pass until the file's
    clock went back (by half an hour or more), its second after."""
    back = (expr < expr.cum_max().over("file") - pl.duration(minutes=30)).fill_null(False).cum_max().over("file")
    ambiguous = pl.when(back).then(pl.lit("latest")).otherwise(pl.lit("earliest"))
    return expr.dt.replace_time_zone(name, ambiguous=ambiguous, non_existent="null").dt.convert_time_zone(UTC) \
        .dt.replace_time_zone(None)


def known_zone(name: str) -> bool:
    """A zone the system knows by name, with rules of its own (a region's: Europe/Amsterdam)."""
    try:
        ZoneInfo(name)
        return "/" in name   # (a region's zone: an abbreviation names no rules of its own)
    except (ValueError, ZoneInfoNotFoundError):
        return False


def stated_zones(ev: pl.DataFrame) -> dict[str, int]:
    """node -> the one UTC offset its host's own timed rows state (journalctl's short-iso '+0200'): its host clock
    rows that state none (journalctl's default short format) are in that zone."""
    if "tz_off" not in ev.columns:
        return {}
    host = (pl.col("source") == "kernel") | pl.col("wrapper").str.starts_with("journald")
    stated = ev.filter(host.fill_null(False) & pl.col("tz_off").is_not_null() & pl.col("node").is_not_null()) \
        .group_by("node").agg(pl.col("tz_off").unique())
    return {node: offs[0] for node, offs in stated.iter_rows() if len(offs) == 1}


DAY_S, HALF_HOUR_S = 86_400, 1800


def wrapped_zones(ev: pl.DataFrame) -> dict[str, int]:
    """node -> its host clock's zone (seconds east of UTC), where its journal wraps lines that carry their own
    process's time (a container's vLLM, in UTC): the journal's time and the line's are one moment, so a difference
    of whole (or half) hours on nearly every such line, and at least three, is the host's zone."""
    def of_day(col: str) -> pl.Expr:
        t = pl.col(col)
        return t.dt.hour().cast(pl.Int64) * 3600 + t.dt.minute().cast(pl.Int64) * 60 + t.dt.second().cast(pl.Int64)
    both = ev.filter(pl.col("wrapper").str.starts_with("journald").fill_null(False) & pl.col("node").is_not_null()
                     & pl.col("wt").is_not_null() & pl.col("lt").is_not_null()
                     & pl.col("lt_kind").is_in(["yearless", "local"]))
    if both.is_empty():
        return {}
    d = ((of_day("wt") - of_day("lt") + DAY_S // 2) % DAY_S - DAY_S // 2).alias("_d")
    zone = ((pl.col("_d") / HALF_HOUR_S).round() * HALF_HOUR_S).cast(pl.Int64).alias("_z")
    got = both.select("node", d).with_columns(zone)
    got = got.with_columns(((pl.col("_d") - pl.col("_z")).abs() <= 2).alias("_on"))
    out = {}
    for (node,), g in got.group_by("node"):
        z, n = g.filter(pl.col("_on"))["_z"].value_counts(sort=True).row(0) if g["_on"].any() else (0, 0)
        if z and n >= 3 and n >= 0.8 * g.height:
            out[node] = int(z)
    return out


# a kernel line about a process may come minutes from its node's first or last line (a hung process logs nothing
# more): half an hour, less than any zone is apart, is no zone's difference
LIVED_SLACK_S = 1800


def lived_zones(kernel: pl.DataFrame, own: pl.DataFrame) -> dict[str, int]:
    """node -> its host clock's zone (seconds east of UTC), told by the deployment's processes its kernel names (an
    oom-kill, a segfault of a worker's pid): such a line happened while the deployment ran, and the deployment's own
    lines say so near it (an error, its rank's line). Where a node's zone-less local times put them outside the run
    (more than half an hour from its first or last line), the whole-hour shift that puts every one inside,
    nearest such lines, is the zone. `kernel`: those host clock rows
    (`node`, `rank`, `ts` read as UTC); `own`: the deployment's own rows (`rank`, `level`, `ts`)."""
    own = own.drop_nulls("ts")
    if kernel.is_empty() or own.is_empty():
        return {}
    slack = timedelta(seconds=LIVED_SLACK_S)
    # (the whole deployment's run: a node's own processes may log nothing while its head serves)
    start, end = own["ts"].min() - slack, own["ts"].max() + slack
    out = {}
    for (node,), g in kernel.drop_nulls("ts").group_by("node"):
        fits = [h for h in range(-12, 15) if all(start <= t - timedelta(hours=h) <= end for t in g["ts"])]
        if not fits or 0 in fits:   # (every line within the run as it reads: no zone to find)
            continue

        # (the lines that would tell each: the deployment's errors and its rank's own lines)
        tellers = {r: own.filter((pl.col("rank") == r) | pl.col("level").is_in(["ERROR", "CRITICAL"]))["ts"]
                   for r in g["rank"].unique().to_list()}

        def apart(h: int) -> float:   # (how far each line, so shifted, is from the nearest line that would tell it)
            return sum((tellers[r] - (t - timedelta(hours=h))).abs().min().total_seconds() if len(tellers[r]) else 0.0
                       for t, r in g.select("ts", "rank").iter_rows())
        out[node] = min(fits, key=apart) * 3600
    return out
