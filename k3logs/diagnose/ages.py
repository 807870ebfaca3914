"""Times of listed events that state only their age (`kubectl get events`' LAST SEEN, describe's Age): the time a
`date` printed before the listing, less the age. (The clock stage's: clock.py.)"""
from __future__ import annotations

from datetime import datetime

import polars as pl

from k3logs.ingest.times import zone_offsets

from .attribution import RX


def age() -> pl.Expr:
    """A listed event's age in seconds (kubectl get events' LAST SEEN, describe's Age), null on other rows: of its
    first occurrence where the row says the event recurred ('49m (x11 over 52m)': first seen 52m ago), the moment
    a failure it states was first stated."""
    text = pl.col("text")

    def said(group: int) -> pl.Expr:
        return pl.coalesce(text.str.extract(RX["event_age"].pattern, group),
                           text.str.extract(RX["described_event_age"].pattern, group))

    def seconds(said: pl.Expr) -> pl.Expr:
        part = said.str.extract_groups(RX["age_parts"].pattern).struct.field
        return pl.when(said.is_not_null()).then(
            sum(part(str(i)).cast(pl.Int64).fill_null(0) * unit for i, unit in enumerate((86400, 3600, 60, 1), 1)))
    return pl.max_horizontal(seconds(said(1)), seconds(said(2)))


def printed() -> pl.Expr:
    """The UTC time a `date` printed (in a zone the abbreviation names alone), alone on its line, or a kubectl
    command's comment gives as when it ran (naive UTC), null on other rows."""
    text = pl.col("text").str.strip_chars()
    part = text.str.extract_groups(RX["date_printed"].pattern).struct.field
    c_locale = pl.concat_str([part("5"), part("1"), part("2"), part("3")], separator=" ")
    ahead = part("4").replace_strict(_zone_seconds(), default=None, return_dtype=pl.Int64)   # (of UTC)
    ran = text.str.extract_groups(RX["command_stamped_utc"].pattern).struct.field
    return pl.coalesce(c_locale.str.to_datetime("%Y %b %d %H:%M:%S", time_unit="us", strict=False)
                       - pl.duration(seconds=ahead),
                       text.str.extract(RX["date_printed_iso_utc"].pattern, 1)
                       .str.to_datetime("%Y-%m-%dT%H:%M:%S", time_unit="us", strict=False),
                       pl.concat_str([ran("1"), ran("2")], separator=" ")
                       .str.to_datetime("%Y-%m-%d %H:%M:%S", time_unit="us", strict=False))


def _zone_seconds() -> dict[str, int]:
    """Zone abbreviation -> seconds ahead of UTC (facts.toml [zone_offsets])."""
    def secs(off: str) -> int:
        sign, hours, minutes = (-1 if off[0] == "-" else 1), int(off[1:3]), int(off[4:6])
        return sign * (hours * 3600 + minutes * 60)
    return {k: secs(v) for k, v in zone_offsets().items()}


def listings(ev: pl.DataFrame) -> dict[str, tuple[tuple[int, datetime], ...]]:
    """Files that list events by their age -> the lines where a `date` in them printed the time, and that time (in
    UTC): the time the listing after it was taken (a collector's transcript, `date -u; kubectl get events`)."""
    if "text" not in ev.columns:
        return {}
    # (the few rows that can be a listed event first: the age's regexes need not run on every line)
    rows = ev.filter(pl.col("text").str.contains_any(["Normal ", "Warning "]).fill_null(False))
    aged = rows.filter(age().is_not_null()).select("file").unique()
    if aged.is_empty():
        return {}
    got = ev.join(aged, on="file").select("file", "line", printed().alias("_t")).drop_nulls("_t").sort("line")
    return {file: tuple(g.select("line", "_t").iter_rows()) for (file,), g in got.group_by("file")}


def aged_times(ev: pl.DataFrame, listed: dict[str, tuple[tuple[int, datetime], ...]]) -> pl.DataFrame:
    """A listed event with no time of its own, after a printed time in its file: that time less its age (its
    last occurrence, to the precision the age is printed in)."""
    c = pl.col
    idx = ev.select(c("file").is_in(list(listed)) & c("ts").is_null()).to_series().arg_true()
    if not len(idx):
        return ev
    listed_at = pl.lit(None, pl.Datetime("us"))
    for file, marks in listed.items():
        for line, t in marks:   # (later marks are tried first: each `when` wraps the ones before)
            listed_at = pl.when((c("file") == file) & (c("line") > line)).then(pl.lit(t)).otherwise(listed_at)
    aged = ev[idx].select((listed_at - pl.duration(seconds=age())).alias("ts"))["ts"]
    ts = ev["ts"].scatter(idx, aged)
    quality = ev["ts_quality"].scatter(idx, pl.Series(["inferred"] * len(idx)).zip_with(aged.is_not_null(),
                                                                                       ev["ts_quality"][idx]))
    return ev.with_columns(ts.alias("ts"), quality.alias("ts_quality"))
