"""What a vLLM server's /metrics dumps say about load: scrapes, windows between them, saturation and creep.

A bundle may hold one scrape, a series of scrapes in one file (separated by shell prompts, `date` or ISO
time lines, `# EOF`, or told apart by each sample's trailing millisecond timestamp), or scrapes in several
files. Scrapes are grouped per node into one series per server and ordered by time, or, when some carry no
time, file by file in the order of their counters (counters only grow while a server runs, whatever the
files are called). A window is the stretch between two consecutive scrapes; a single scrape is one window
since the server started (with two or more, that first stretch is left out: it mixes whatever ran before
the test, warm-up traffic included).

Which metric names mean what, how engines combine and every threshold are data (patterns/acceptance.toml).
Lines are classified and samples extracted with polars; the few windows are judged in Python. The text is
what ingest read of the dump (at most `max_dump_bytes`), so a huge or hostile dump costs bounded work, and
nothing here raises on bad input: a line that is not a sample is not a sample.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

import polars as pl

from k3logs.catalogue.acceptance import AcceptanceData, default_acceptance_data
from k3logs.catalogue.regexes import Regexes
from k3logs.contract import CapacityWindow, Flag, MetricSeries, iso
from k3logs.ingest.dumps import PROMPTS

INGEST = Regexes("ingest.toml")  # the shell prompts a transcript's commands follow
ACCEPTANCE = Regexes("acceptance.toml")  # a scrape's lines, the markers between scrapes, a file name's time

MAX_SCRAPES = 20_000       # per bundle: a day of scrapes every 5 s; bounds memory whatever the bundle holds
# `window` field -> metric id (patterns/acceptance.toml)
FIELDS = {"queried_tokens": "prefix_cache_queries", "hit_tokens": "prefix_cache_hits",
          "cached_prompt_tokens": "prompt_tokens_cached", "prompt_tokens": "prompt_tokens",
          "requests": "requests_finished", "running": "running", "waiting": "waiting",
          "kv_cache_usage": "kv_cache_usage", "preemptions": "preemptions", "process_memory_bytes": "process_memory"}


@dataclass
class Window:
    """One window of one series, with the file:line stating each metric at its closing scrape."""

    row: CapacityWindow
    where: dict[str, str] = field(default_factory=dict)   # metric id -> file:line


@dataclass
class Metrics:
    """Every series found in a bundle, their windows (in order, per node) and the flags raised on them."""

    series: list[MetricSeries] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    saturation: list[Flag] = field(default_factory=list)
    creep: list[Flag] = field(default_factory=list)
    limited: bool = False     # more than MAX_SCRAPES scrapes in the bundle: the rest were not read

    def total(self, metric_field: str) -> float | None:
        vals = [getattr(w.row, metric_field) for w in self.windows if getattr(w.row, metric_field) is not None]
        return sum(vals) if vals else None

    def peak(self, metric_field: str) -> tuple[float | None, str | None]:
        """The largest value over every window, and where it is stated."""
        best: tuple[float | None, str | None] = (None, None)
        for w in self.windows:
            v = getattr(w.row, metric_field)
            if v is not None and (best[0] is None or v > best[0]):
                best = (v, w.where.get(FIELDS[metric_field]))
        return best


def holds_metrics(text: str) -> bool:
    """True when `text` holds vLLM /metrics samples (a dump of its own, or a transcript that scraped it)."""
    return bool(ACCEPTANCE["vllm_metrics_present"].search(text or ""))


def read_metrics(dumps: list[tuple[str, str | None, str]], data: AcceptanceData | None = None) -> Metrics:
    """Scrapes of every dump (display path, node, text) that holds vLLM metrics, as series and windows. At most
    MAX_SCRAPES scrapes are read (each dump is already bounded; many of them must not add up without end)."""
    data = data or default_acceptance_data()
    frames, total, limited = [], 0, False
    for file, node, text in dumps:
        if total >= MAX_SCRAPES:
            limited = limited or holds_metrics(text)
            continue
        f = _read_one(text, file, node, data) if holds_metrics(text) else None
        if f is None:
            continue
        n = f["scrape"].max() + 1
        if total + n > MAX_SCRAPES:
            f, limited = f.filter(pl.col("scrape") < MAX_SCRAPES - total), True
        frames.append(f)
        total += min(n, MAX_SCRAPES - total)
    if not frames:
        return Metrics()
    out = _judge(_windows(pl.concat(frames, how="vertical_relaxed"), data), data)
    out.limited = limited
    return out


def _read_one(text: str, file: str, node: str | None, data: AcceptanceData) -> pl.DataFrame | None:
    try:
        return _scrapes(text, file, node, data)
    except Exception:  # noqa: BLE001 - a dump no rule foresaw must not stop the analysis: it adds no scrape
        return None


# ------------------------------------------------------------------------------------------
# one dump -> one row per (scrape, metric, engine)
# ------------------------------------------------------------------------------------------
def _scrapes(text: str, file: str, node: str | None, data: AcceptanceData) -> pl.DataFrame | None:
    by_name = data.metric_of()
    labels = list(data.thresholds.engine_labels)
    df = pl.DataFrame({"raw": text.split("\n")}, schema={"raw": pl.String}).with_row_index("line", offset=1)
    raw = pl.col("raw").str.strip_suffix("\r")
    sample = ACCEPTANCE["metric_sample"].pattern  # polars applies these: `rust = true`, checked in both engines
    name = raw.str.extract(ACCEPTANCE["metric_name"].pattern, 1)
    is_sample = raw.str.contains(sample)   # not just a name: `Mon Nov 30 05:00:00 UTC 2026` starts like one
    prompt = pl.any_horizontal(*[raw.str.contains(INGEST[name].pattern) for name in PROMPTS])
    time_hint, meta = ACCEPTANCE["time_hint"].pattern, ACCEPTANCE["metric_meta"].pattern
    marker = (raw.str.contains(ACCEPTANCE["metric_eof"].pattern) | prompt
              | (raw.str.contains(time_hint) & ~raw.str.contains(meta) & ~is_sample)).fill_null(False)
    df = df.with_columns(raw.alias("raw"), name.alias("name"), marker.alias("marker"), is_sample.alias("sample"))
    df = df.with_columns(pl.col("marker").cum_sum().alias("segment"))
    df = df.filter(pl.col("marker") | (pl.col("sample") & pl.col("name").is_in(list(by_name))))
    markers = df.filter(pl.col("marker")).select("segment", "raw")
    s = df.filter(~pl.col("marker")).with_columns(pl.col("raw").str.extract_groups(sample).alias("m")) \
        .select("line", "segment", pl.col("m").struct.field("name"), pl.col("m").struct.field("labels").fill_null(""),
                pl.col("m").struct.field("value").cast(pl.Float64, strict=False).alias("value"),
                pl.col("m").struct.field("ts").cast(pl.Int64, strict=False).alias("ts"))
    s = s.filter(pl.col("value").is_not_null() & pl.col("value").is_finite() & pl.col("name").is_not_null())
    if s.is_empty():
        return None
    engine = pl.concat_str([pl.col("labels").str.extract(rf'(?:^|,)\s*{re.escape(k)}="([^"]*)"', 1).fill_null("")
                            for k in labels], separator="/") if labels else pl.lit("")
    # the n-th time one series (name and labels) appears in a segment is the n-th scrape of that segment
    occurrence = pl.int_range(pl.len()).over(["segment", "name", "labels"])
    s = s.with_columns(engine.alias("engine"),
                       pl.col("name").replace_strict({n: m.id for n, m in by_name.items()}).alias("metric"),
                       pl.when(pl.col("ts").is_not_null()).then(pl.lit(-1)).otherwise(occurrence).alias("occ"))
    keys = s.group_by("segment", "ts", "occ").agg(pl.col("line").min().alias("first")) \
        .sort("segment", "ts", "first", nulls_last=True).with_row_index("scrape")
    s = s.join(keys, on=["segment", "ts", "occ"], how="left", nulls_equal=True)
    s = s.group_by("scrape", "metric", "engine").agg(pl.col("value").sum(), pl.col("line").min(),
                                                    pl.col("first").first(), pl.col("ts").first(),
                                                    pl.col("segment").first())
    times = _segment_times(markers, set(s["segment"].unique().to_list()))
    n_scrapes = keys.height
    file_time = _file_time(file) if n_scrapes == 1 else None
    utc = pl.Datetime("us", "UTC")
    seg_time = pl.DataFrame({"segment": list(times), "_seg_time": list(times.values())},
                            schema={"segment": s.schema["segment"], "_seg_time": utc})
    s = s.join(seg_time, on="segment", how="left").with_columns(
        pl.coalesce(pl.from_epoch(pl.col("ts"), time_unit="ms").dt.replace_time_zone("UTC").cast(utc),
                    pl.col("_seg_time"), pl.lit(file_time, dtype=utc)).alias("time"),
        pl.lit(file).alias("file"), pl.lit(node, dtype=pl.String).alias("node"))
    return s.select("node", "file", "scrape", "first", "time", "metric", "engine", "value", "line")


def _segment_times(markers: pl.DataFrame, with_samples: set[int]) -> dict[int, datetime]:
    """The time each segment's scrape was taken: the last time line (or date output) before it, as long as no
    other scrape came in between (`$ date` then `$ curl .../metrics`: the time is in the segment before)."""
    out: dict[int, datetime] = {}
    pending: datetime | None = None
    for seg, raw in markers.iter_rows():
        if seg - 1 in with_samples:
            pending = None
        pending = _time_of(raw) or pending
        if pending is not None:
            out[seg] = pending
    return out


def _time_of(text: str) -> datetime | None:
    """A time written on a marker line (ISO 8601 or date(1)); zones other than UTC offsets are read as UTC."""
    try:
        m = ACCEPTANCE["iso_time"].search(text)
        if m:
            zone = m.group(3) or "Z"
            zone = "+00:00" if zone in ("Z", "UTC", "GMT") else (zone if ":" in zone else zone[:3] + ":" + zone[3:])
            return datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{zone}").astimezone(timezone.utc)
        m = ACCEPTANCE["date_time"].search(text)
        if m:
            return datetime.strptime(f"{m.group(1)} {m.group(2)} {m.group(3)} {m.group(4)}",
                                     "%b %d %H:%M:%S %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return None


def _file_time(file: str) -> datetime | None:
    m = ACCEPTANCE["file_name_time"].search(file.rsplit("/", 1)[-1])
    try:
        return datetime(*map(int, m.groups()), tzinfo=timezone.utc) if m else None
    except ValueError:
        return None


# ------------------------------------------------------------------------------------------
# series -> windows
# ------------------------------------------------------------------------------------------
def _windows(rows: pl.DataFrame, data: AcceptanceData) -> tuple[list[Window], list[MetricSeries]]:
    defs = {m.id: m for m in data.metrics}
    counters = [m.id for m in data.metrics if m.kind == "counter"]
    scrapes = rows.group_by("node", "file", "scrape").agg(
        pl.col("first").first(), pl.col("time").first(),
        pl.col("value").filter(pl.col("metric").is_in(counters)).sum().alias("_counted"))
    # a node whose scrapes all carry a time: by time; else each file's scrapes in file order, files by the
    # counters of their first scrape
    file_rank = scrapes.filter(pl.col("scrape") == 0).select("node", "file", pl.col("_counted").alias("_file_rank"))
    scrapes = scrapes.join(file_rank, on=["node", "file"], how="left", nulls_equal=True)
    timed = pl.col("time").null_count().over("node") == 0
    key = pl.when(timed).then(pl.col("time").dt.epoch("us").cast(pl.Float64)).otherwise(pl.col("_file_rank"))
    scrapes = scrapes.with_columns(key.alias("_key")).sort(["node", "_key", "file", "scrape"], nulls_last=True) \
        .with_columns(pl.int_range(pl.len()).over("node").alias("order"), pl.len().over("node").alias("n"))
    rows = rows.join(scrapes.select("node", "file", "scrape", "order", "n"), on=["node", "file", "scrape"],
                     nulls_equal=True).sort("node", "order", "metric", "engine", nulls_last=True)
    prev = pl.col("value").shift(1).over(["node", "metric", "engine"])
    counter = pl.col("metric").is_in(counters)
    # a counter's increase; a drop means the server restarted and counts again from zero
    delta = (pl.when(prev.is_null()).then(pl.when(pl.col("n") == 1).then(pl.col("value")))
             .when(pl.col("value") < prev).then(pl.col("value"))
             .otherwise(pl.col("value") - prev))
    rows = rows.with_columns(pl.when(counter).then(delta).otherwise(pl.col("value")).alias("v"))
    rows = rows.filter((pl.col("order") > 0) | (pl.col("n") == 1))
    agg = rows.group_by("node", "order", "metric").agg(
        pl.col("v").sum().alias("_sum"), pl.col("v").max().alias("_max"), pl.col("v").null_count().alias("_missing"),
        pl.len().alias("_n"), pl.col("line").min(), pl.col("file").first())
    times = {(r["node"], r["order"]): r for r in scrapes.iter_rows(named=True)}
    by_window: dict[tuple, dict[str, tuple[float | None, str]]] = {}
    for r in agg.sort("node", "order", "metric", nulls_last=True).iter_rows(named=True):
        v = None if r["_missing"] == r["_n"] else r["_max" if defs[r["metric"]].engines == "max" else "_sum"]
        by_window.setdefault((r["node"], r["order"]), {})[r["metric"]] = (v, f"{r['file']}:{r['line']}")
    windows = []
    for (node, order), vals in sorted(by_window.items(), key=lambda kv: (kv[0][0] is None, kv[0][0] or "", kv[0][1])):
        end = times[(node, order)]
        start = times.get((node, order - 1))
        got = {f: vals.get(mid, (None, ""))[0] for f, mid in FIELDS.items()}
        for f in ("queried_tokens", "hit_tokens", "cached_prompt_tokens", "prompt_tokens", "requests", "running",
                  "waiting", "preemptions", "process_memory_bytes"):
            got[f] = None if got[f] is None else int(round(got[f]))
        kv = got["kv_cache_usage"]
        if kv is not None and kv > 1.5:  # a re-export in percent: vLLM itself publishes a fraction
            kv = kv / 100
        got["kv_cache_usage"] = None if kv is None else round(kv, 4)
        q, h = got["queried_tokens"], got["hit_tokens"]
        ratio = round(h / q, 4) if q and h is not None else None
        row = CapacityWindow(node, iso(start["time"]) if start else None, iso(end["time"]),
                             f"{end['file']}:{end['first']}", hit_ratio=ratio, **got)
        windows.append(Window(row, {mid: where for mid, (_, where) in vals.items()}))
    series = []
    for node in sorted({s for s in scrapes["node"].to_list()}, key=lambda n: (n is None, n or "")):
        sc = scrapes.filter(pl.col("node").eq_missing(node))
        series.append(MetricSeries(node, sorted(set(sc["file"].to_list())), sc.height,
                                   iso(sc["time"].min()), iso(sc["time"].max())))
    return windows, series


# ------------------------------------------------------------------------------------------
# windows -> saturation and creep
# ------------------------------------------------------------------------------------------
def _judge(made: tuple[list[Window], list[MetricSeries]], data: AcceptanceData) -> Metrics:
    windows, series = made
    t = data.thresholds
    out = Metrics(series, windows)
    for node in [s.node for s in series]:
        ws = [w for w in windows if w.row.node == node]
        out.saturation += _saturation(node, ws, data)
        out.creep += [f for f in (_creep(node, ws, "kv_cache_usage", t.creep_kv_rise, False, t.creep_windows),
                                  _creep(node, ws, "process_memory_bytes", t.creep_memory_rise, True, t.creep_windows))
                      if f]
    return out


def _runs(ws: list[Window], ok) -> tuple[int, int]:
    """Longest run of consecutive windows i with ok(i): (length, index of its last window)."""
    best, cur, end = 0, 0, -1
    for i in range(len(ws)):
        cur = cur + 1 if ok(i) else 0
        if cur > best:
            best, end = cur, i
    return best, end


def _saturation(node: str | None, ws: list[Window], data: AcceptanceData) -> list[Flag]:
    t = data.thresholds
    flags = []
    kv = [w.row.kv_cache_usage for w in ws]
    n, end = _runs(ws, lambda i: kv[i] is not None and kv[i] >= t.kv_pinned)
    if n >= t.kv_pinned_windows:
        peak = max(v for v in kv if v is not None)
        flags.append(Flag("kv_pinned", node, f"KV-cache usage at or above {t.kv_pinned:.0%} for {n} windows in a row "
                          f"(peak {peak:.1%})", ws[end].where.get("kv_cache_usage")))
    wait = [w.row.waiting for w in ws]
    n, end = _runs(ws, lambda i: i > 0 and wait[i] is not None and wait[i - 1] is not None and wait[i] > wait[i - 1])
    if n >= t.waiting_growth_windows:
        flags.append(Flag("waiting_growing", node, f"the waiting queue grew {n} windows in a row, to {wait[end]} "
                          "requests", ws[end].where.get("waiting")))
    pre = [i for i, w in enumerate(ws) if (w.row.preemptions or 0) > 0]
    if len(pre) >= t.preemption_windows:
        total = sum(ws[i].row.preemptions for i in pre)
        flags.append(Flag("preemptions_rising", node, f"{total} preemptions over {len(pre)} of {len(ws)} windows",
                          ws[pre[-1]].where.get("preemptions")))
    return flags


def _creep(node: str | None, ws: list[Window], metric_field: str, rise: float, relative: bool,
           min_windows: int) -> Flag | None:
    """A gauge that never falls over at least `min_windows` windows in a row and rises by `rise` over them."""
    vals = [getattr(w.row, metric_field) for w in ws]
    best: Flag | None = None
    start = 0
    for i in range(len(vals) + 1):
        if i < len(vals) and vals[i] is not None and (i == start or vals[i] >= vals[i - 1]):
            continue
        run = vals[start:i]
        if len(run) >= min_windows and run[0] is not None:
            grew = (run[-1] - run[0]) / run[0] if relative and run[0] else run[-1] - run[0]
            if grew >= rise and not math.isinf(grew):
                shown = (f"{run[0] / 2**30:.1f} GiB to {run[-1] / 2**30:.1f} GiB" if relative
                         else f"{run[0]:.1%} to {run[-1]:.1%}")
                what = "process memory" if relative else "KV-cache usage"
                best = Flag(f"{'memory' if relative else 'kv'}_creep", node,
                            f"{what} rose from {shown} over {len(run)} windows without falling",
                            ws[i - 1].where.get(FIELDS[metric_field]))
        start = i if i < len(vals) and vals[i] is not None else i + 1
    return best
