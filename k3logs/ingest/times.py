"""What a line's time fields hold, as polars expressions: each time group of a format (formats.toml's `t_*`: ISO
with its offset or its zone's abbreviation, local, year-less, time of day, since the epoch, since boot) becomes a
naive datetime, its kind (utc, local, yearless, dateless, boot) and, for an ISO time, the offset it states."""
from __future__ import annotations

from datetime import datetime
from functools import lru_cache

import polars as pl

from k3logs.catalogue.regexes import Regexes, builtin_data

MONTHS = {"Jan": "01", "Feb": "02", "Mar": "03", "Apr": "04", "May": "05", "Jun": "06", "Jul": "07",
          "Aug": "08", "Sep": "09", "Oct": "10", "Nov": "11", "Dec": "12"}
PLACEHOLDER_YEAR = "2000"  # a leap year: year-less times are kept in it until the clock stage fills the year
DATELESS_DAY = datetime(2000, 1, 1)  # a time of day only is kept on it until the clock stage finds its date

INGEST = Regexes("ingest.toml")  # what a time field looks like where it is read


@lru_cache(maxsize=1)
def zone_offsets() -> dict[str, str]:
    """The UTC offset of each zone abbreviation that names one zone only (patterns/facts.toml [zone_offsets])."""
    return {"UTC": "+00:00", "GMT": "+00:00", **builtin_data("facts.toml").get("zone_offsets", {})}


def time_exprs(groups: frozenset[str] | set[str]) -> tuple[pl.Expr, pl.Expr, pl.Expr | None]:
    """(naive datetime, kind, uptime) expressions over an extracted group frame."""
    c = pl.col
    if "t_iso" in groups:
        abbr = c("t_iso").str.extract(INGEST["iso_zone_abbreviation"].pattern, 1)
        iso = (c("t_iso").str.replace(",", ".", literal=True).str.replace(INGEST["iso_zulu"].pattern, "+00:00")
               .str.replace(INGEST["iso_offset_no_colon"].pattern, "${1}:${2}"))
        offset = abbr.replace_strict(zone_offsets(), default=None)   # (an abbreviation of several zones: no time)
        iso = pl.when(abbr.is_null()).then(iso).otherwise(
            pl.concat_str([iso.str.head(-1 - abbr.str.len_chars()), offset]))
        iso = iso.str.replace(" ", "T", literal=True)
        dt = (iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", time_zone="UTC", time_unit="us", strict=False)
              .dt.replace_time_zone(None))
        if "t_local" in groups:   # (a record read by key: its zoned time, else its local one)
            local, _, _ = time_exprs(set(groups) - {"t_iso"})
            return pl.coalesce(dt, local), pl.when(dt.is_not_null()).then(pl.lit("utc")).when(
                local.is_not_null()).then(pl.lit("local")), None
        return dt, pl.when(dt.is_not_null()).then(pl.lit("utc")), None
    if "t_local" in groups:
        dt = (c("t_local").str.replace(",", ".", literal=True).str.replace("T", " ", literal=True)
              .str.replace_all("/", "-", literal=True)  # nvidia-smi's timestamp: '2026/07/09 10:00:00.394'
              .str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False))
        return dt, pl.when(dt.is_not_null()).then(pl.lit("local")), None
    if "t_tod" in groups:  # a time of day only (a logger's '%H:%M:%S' datefmt)
        dt = pl.concat_str([pl.lit(DATELESS_DAY.strftime("%Y-%m-%d ")), c("t_tod").str.replace(",", ".", literal=True)]
                           ).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("dateless")), None
    if "t_md" in groups:
        dt = pl.concat_str([pl.lit(PLACEHOLDER_YEAR + "-"), c("t_md"), pl.lit(" "), c("t_hms")]).str.to_datetime(
            "%Y-%m-%d %H:%M:%S", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("yearless")), None
    if "t_glog" in groups:
        md = c("t_glog").str.extract(INGEST["glog_month_day"].pattern, 1).str.zfill(4)
        hms = c("t_glog").str.extract(INGEST["glog_time"].pattern, 1)
        dt = pl.concat_str([pl.lit(PLACEHOLDER_YEAR + "-"), md.str.slice(0, 2), pl.lit("-"), md.str.slice(2, 2),
                            pl.lit(" "), hms]).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("yearless")), None
    for name, kind in (("t_ctime", "local"), ("t_date", "utc")):
        if name in groups:  # 'Mon Aug 11 07:35:59 2026' (dmesg -T); `date`'s 'Wed Apr  8 09:14:02 UTC 2026'
            parts = c(name).str.replace_all(INGEST["time_spaces"].pattern, " ").str.split(" ")
            dt = pl.concat_str([parts.list.get(-1, null_on_oob=True), pl.lit("-"),
                                parts.list.get(1, null_on_oob=True).replace(MONTHS), pl.lit("-"),
                                parts.list.get(2, null_on_oob=True).str.zfill(2), pl.lit(" "),
                                parts.list.get(3, null_on_oob=True)]).str.to_datetime(
                "%Y-%m-%d %H:%M:%S", time_unit="us", strict=False)
            return dt, pl.when(dt.is_not_null()).then(pl.lit(kind)), None
    if "t_mdy" in groups:  # 'Sep 12 2024 03:41:17' (Fabric Manager)
        dt = c("t_mdy").str.to_datetime("%b %d %Y %H:%M:%S", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("local")), None
    if "t_rfc2822" in groups:  # 'Thu, 27 Aug 2026 14:02:52 +0000' (kubectl describe's times)
        dt = (c("t_rfc2822").str.to_datetime("%a, %d %b %Y %H:%M:%S %z", time_zone="UTC", time_unit="us", strict=False)
              .dt.replace_time_zone(None))
        return dt, pl.when(dt.is_not_null()).then(pl.lit("utc")), None
    if "t_clf" in groups:  # the Common Log Format's '19/Aug/2025:10:12:35 +0000' (nginx, Apache access logs)
        dt = (c("t_clf").str.to_datetime("%d/%b/%Y:%H:%M:%S%.f %z", time_zone="UTC", time_unit="us", strict=False)
              .dt.replace_time_zone(None))
        return dt, pl.when(dt.is_not_null()).then(pl.lit("utc")), None
    if "t_sel" in groups:  # ipmitool sel's 'MM/DD/YYYY | HH:MM:SS' (the BMC's clock)
        dt = c("t_sel").str.to_datetime("%m/%d/%Y | %H:%M:%S", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("local")), None
    if "t_kibana" in groups:  # Kibana's 'Aug 4, 2026 @ 13:19:40.018' (the browser's zone)
        dt = c("t_kibana").str.to_datetime("%b %d, %Y @ %H:%M:%S%.f", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("local")), None
    if "t_syslog" in groups:
        parts = c("t_syslog").str.replace_all(INGEST["time_spaces"].pattern, " ").str.split(" ")
        dt = pl.concat_str([pl.lit(PLACEHOLDER_YEAR + "-"), parts.list.get(0, null_on_oob=True).replace(MONTHS),
                            pl.lit("-"), parts.list.get(1, null_on_oob=True).str.zfill(2), pl.lit(" "),
                            parts.list.get(2, null_on_oob=True)]).str.to_datetime(
            "%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("yearless")), None
    if "t_epoch_us" in groups or "t_epoch_s" in groups or "t_epoch_ms" in groups:
        # since the epoch (UTC): journald's __REALTIME_TIMESTAMP in microseconds, UCX's '[1791368269.118202]' in
        # seconds, CloudWatch's in milliseconds
        us = c("t_epoch_us").cast(pl.Int64, strict=False) if "t_epoch_us" in groups else \
            c("t_epoch_ms").cast(pl.Int64, strict=False) * 1000 if "t_epoch_ms" in groups else \
            (c("t_epoch_s").cast(pl.Float64, strict=False) * 1_000_000).round().cast(pl.Int64)
        dt = pl.when(us.is_between(0, 7_258_118_400_000_000)).then(us).cast(pl.Datetime("us"))
        return dt, pl.when(dt.is_not_null()).then(pl.lit("utc")), None
    if "t_uptime" in groups:
        up = c("t_uptime").cast(pl.Float64, strict=False)
        return pl.lit(None, pl.Datetime("us")), pl.when(up.is_not_null()).then(pl.lit("boot")), up
    return pl.lit(None, pl.Datetime("us")), pl.lit(None, pl.String), None


def stated_offset(groups: frozenset[str] | set[str]) -> pl.Expr | None:
    """The UTC offset (seconds east) an ISO time states ('+0200', '-05:00'; a 'Z' states none of a host's zone)."""
    if "t_iso" not in groups:
        return None
    parts = pl.col("t_iso").str.extract_groups(INGEST["iso_stated_offset"].pattern)   # (one pass: hours, minutes)
    hours, minutes = (parts.struct.field(k).cast(pl.Int32, strict=False) for k in ("1", "2"))
    return hours * 3600 + hours.sign() * minutes * 60
