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

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import polars as pl

from k3logs.catalogue.regexes import Regexes
from k3logs.ingest.fold import written_newest_first
from k3logs.ingest.times import DATELESS_DAY, PLACEHOLDER_YEAR
from k3logs.schema import MIXED, at_rows, in_line_order, the_one

from .ages import aged_times, listings
from .arrival import bounded, order_bounds, proven
from .assign import rank_code
from .attribution import RX, line_rx
from .meetings import bursts, offset
from .zones import HOST_CLOCK, UTC, known_zone, lived_zones, local_utc, stated_zones, wrapped_zones

STATE = "state"  # the source of a row that states a condition since its time (formats.toml: a describe's condition)
INGEST = Regexes("ingest.toml")  # iso_zulu: an ISO time's 'Z', as the parser reads it
# (RX, patterns/diagnose.toml: the times a line writes inside its text: inner_uptime, dated, dated_rfc2822, dated_clf)


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


def _yearless() -> pl.Expr:
    """The wrapper's year-less time, refined by the line's own where that falls in the same second (a journal's
    whole seconds around klog's microseconds: the order of two lines in one second)."""
    c = pl.col
    finer = (c("lt_kind") == "yearless") & (c("lt").dt.truncate("1s") == c("wt"))
    return pl.when((c("wt_kind") == "yearless") & finer.fill_null(False)).then(c("lt")) \
        .when(c("wt_kind") == "yearless").then(c("wt")).when(c("lt_kind") == "yearless").then(c("lt"))


def _dateless() -> pl.Expr:
    """A time of day only (a logger's '%H:%M:%S'), as the time since the placeholder date's midnight."""
    return pl.when(pl.col("lt_kind") == "dateless").then(pl.col("lt") - pl.lit(DATELESS_DAY))


DAY_US = 86_400_000_000
PLACEHOLDER_START_US = int((datetime(int(PLACEHOLDER_YEAR), 1, 1, tzinfo=timezone.utc)
                            - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()) * 1_000_000
MARCH_1 = (31 + 29) * DAY_US  # from the start of the (leap) placeholder year


def _jan1_days(year: pl.Expr) -> pl.Expr:
    """Days from 1970-01-01 to January 1st of `year` (Gregorian): 365 a year plus the leap days between."""
    y = year - 1
    leap_days = lambda n: n // 4 - n // 100 + n // 400  # noqa: E731  (up to the end of year n)
    return 365 * (y - 1969) + leap_days(y) - leap_days(1969)


def _with_year(expr: pl.Expr, year: pl.Expr) -> pl.Expr:
    """A year-less time (parsed into PLACEHOLDER_YEAR, a leap year) moved into `year`; February 29th of a
    year that has none is null. Integer arithmetic: building datetimes from their parts is 15x slower."""
    into = expr.cast(pl.Int64) - PLACEHOLDER_START_US
    y = year.cast(pl.Int64)
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    late = into >= MARCH_1
    moved = _jan1_days(y) * DAY_US + into - pl.when(late & ~leap).then(DAY_US).otherwise(0)
    feb_29 = (into >= MARCH_1 - DAY_US) & ~late
    return pl.when(feb_29 & ~leap).then(None).otherwise(moved).cast(pl.Datetime("us"))


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
    # a node's UTC offset (timedatectl), in seconds: its host clock rows' zone-less times are read in it
    host_zone: dict[str, int] = field(default_factory=dict)
    # a node's zone by name (timedatectl's Europe/Amsterdam), where the system knows it: its host clock's times are
    # read by its rules, daylight saving time included (the hour a fall-back repeats: the second pass once the
    # file's clock went back)
    zone_name: dict[str, str] = field(default_factory=dict)
    # the one zone of a bundle whose deployment runs on its hosts, in no container: its processes' zone-less
    # times are in it (read in --tz otherwise: a container's clock is UTC)
    bare_zone: int | None = None
    # a file that holds lines relayed from other nodes (Ray's 'ip=' prefix) -> the node whose clock wrote it
    writer: dict[str, str] = field(default_factory=dict)
    # a file of times of day only -> (first line, the midnight it counts from), a day each time its clock turns
    days: dict[str, tuple[tuple[int, datetime], ...]] = field(default_factory=dict)
    # a file that lists events by their age (kubectl's LAST SEEN) -> (line, the UTC time a `date -u` printed
    # there): the ages of the rows after it count back from that time
    listed: dict[str, tuple[tuple[int, datetime], ...]] = field(default_factory=dict)
    bmc: dict[str, float] = field(default_factory=dict)  # a node's BMC clock (its SEL): seconds it reads ahead of UTC
    _plan: tuple | None = field(default=None, init=False, repr=False, compare=False)  # (see _own_time_plan)


def _exact(m: ClockModel) -> pl.Expr:
    c = pl.col
    return (pl.when(c("wt_kind") == "utc").then(c("wt"))
            .when(c("lt_kind") == "utc").then(c("lt"))
            .when(c("lt_kind") == "local").then(local_utc(c("lt"), m)))


def learn(ev: pl.DataFrame, tz: str = UTC, skew_tolerance: float = 2.0,
          boot_facts: dict[str | None, datetime] | None = None,
          reference_facts: list[datetime] | None = None,
          measured: dict[str, float] | None = None,
          zones: dict[str, int] | None = None, bare: bool = False,
          named: dict[str, str] | None = None, arrival: frozenset[str] = frozenset(),
          bmc: dict[str, float] | None = None) -> tuple[ClockModel, ClockReport]:
    """Reference dates for year-less times, boot times, and per-node offsets, from attributed events.
    `zones`: the UTC offset (seconds) of the nodes whose zone the bundle shows (`named`: by its name); `bare`: the
    deployment runs in no container (its processes keep their hosts' zone, when the hosts share one); `arrival`:
    the wrappers of files written live, whose line order bounds the estimated offsets (arrival.py); `bmc`: how far
    each node's BMC clock reads ahead of UTC (its SEL's times are read as the zone-less times they are)."""
    zones = {**wrapped_zones(ev), **stated_zones(ev), **(zones or {})}
    one = set(zones.values())
    if len(one) == 1 and len(zones) >= 2:   # (a site's hosts keep one zone: its other hosts' journals are in it)
        zones = {**{n: next(iter(one)) for n in ev["node"].drop_nulls().unique().to_list()}, **zones}
    m, rep = ClockModel(tz=tz, host_zone=zones, zone_name={n: z for n, z in (named or {}).items() if known_zone(z)},
                        bare_zone=one.pop() if bare and len(one) == 1 else None), ClockReport()
    m.bmc = {n: d - ((m.bare_zone or 0) if tz == UTC else 0) for n, d in (bmc or {}).items()}   # (as read: zone-less)
    c = pl.col
    exact = ev.select("node", _exact(m).alias("_e")).drop_nulls("_e")
    for (node,), g in exact.group_by("node"):
        m.node_ref[node] = g["_e"].median()
    text = ev["text"]
    mentioned = pl.concat([
        text.str.extract(RX["dated"].pattern, 1).str.replace("T", " ")
        .str.to_datetime("%Y-%m-%d %H:%M:%S", time_unit="us", strict=False),
        text.str.extract(RX["dated_rfc2822"].pattern, 1).str.to_datetime("%d %b %Y %H:%M:%S", time_unit="us", strict=False),
        text.str.extract(RX["dated_clf"].pattern, 1).str.to_datetime("%d/%b/%Y:%H:%M:%S", time_unit="us", strict=False),
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
        "node", _exact(m).alias("_e"),
        pl.coalesce(c("uptime"), c("text").str.extract(RX["inner_uptime"].pattern, 1).cast(pl.Float64, strict=False))
        .alias("_up")
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
    # a line Ray relays from a worker into the head's log is the worker's by attribution but was timed by the
    # head's clock: it is corrected with the offset of the node of the file's own lines
    if "ip" in ev.columns:
        relaying = ev.filter(c("ip").is_not_null()).select("file").unique()
        own = ev.join(relaying, on="file").filter(c("ip").is_null() & c("node").is_not_null())
        m.writer = dict(own.group_by("file").agg(c("node").mode().sort().first()).iter_rows())
    m.days = _days_of(ev, m)
    m.listed = listings(ev)
    # the zones of host clocks the bundle shows none of, as the deployment's processes the kernel names tell them
    about = ev.filter(HOST_CLOCK.fill_null(False) & (c("lt_kind") == "local") & ~c("node").is_in(list(m.host_zone))
                      & (c("rank_src") == rank_code("kernel_task"))) if tz == UTC and "rank_src" in ev.columns else None
    if about is not None and about.height:
        own = ev.filter(~HOST_CLOCK.fill_null(False) & (c("source") == "vllm"))
        m.host_zone.update(lived_zones(_times(about, m), _times(own, m)))
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
    timed = _times(ev.filter(c("text").str.contains(line_rx("assigned")) & c("node").is_not_null()), m)
    timed = timed.with_columns(_clock_of(timed, m).alias("node"))
    anchors = timed.filter(c("ts").is_not_null()).group_by("node").agg(pl.len().alias("_n")).sort("node")
    if anchors.height >= 2 and _one_world(timed):
        ref = anchors.sort(["_n", "node"], descending=[True, False]).row(0, named=True)
        rep.reference_node = ref["node"]
        met = bursts(timed)
        bounds = order_bounds(ev, ref["node"], arrival,
                              lambda f: _times(f, m).with_columns(_clock_of(f, m).alias("node")))
        for row in anchors.iter_rows(named=True):
            off = bounded(offset(met[row["node"]], met[ref["node"]]), bounds.get(row["node"]))
            nc = rep.nodes.setdefault(row["node"], NodeClock())
            nc.offset_s, nc.anchors = round(off, 3), row["_n"]
            nc.applied = abs(off) > skew_tolerance or proven(bounds.get(row["node"]))
            if nc.applied:
                m.offsets[row["node"]] = off
    return m, rep


HALF_DAY = 12 * 3600 * 1_000_000


def _days_of(ev: pl.DataFrame, m: ClockModel) -> dict[str, tuple[tuple[int, datetime], ...]]:
    """The dates of files whose lines give a time of day only. Within a file the day turns where its clock goes
    back more than twelve hours (on, in a file written newest first); the file's first day is the one that puts
    its lines nearest the dated lines of the same file, else of its node, else of the bundle (its other files'
    times of day are then dated alike: they were written together)."""
    c = pl.col
    tod = ev.filter(_dateless().is_not_null())
    if tod.is_empty():
        return {}
    dated = ev.with_columns(_own_times(ev.select(TIME_COLUMNS), m)["ts"]).drop_nulls("ts")
    near = {k: dict(dated.group_by(k).agg(c("ts").median()).iter_rows()) for k in ("file", "node")}
    anywhere = dated["ts"].median()
    step = (_dateless().dt.total_microseconds().diff().fill_null(0)).alias("_d")
    runs = tod.sort("line", "sub").with_columns(step).with_columns(
        ((c("_d") < -HALF_DAY).cast(pl.Int64) - (c("_d") > HALF_DAY).cast(pl.Int64)).cum_sum().over("file")
        .alias("_day"))
    days = {}
    for (file,), g in runs.group_by("file"):
        node = g["node"].drop_nulls().mode().sort().first() if g["node"].null_count() < g.height else None
        ref = near["file"].get(file) or near["node"].get(node) or anywhere or m.bundle_ref
        mid = g.select((_dateless().dt.total_microseconds() + c("_day") * DAY_US).median()).item()
        first = round((ref - DATELESS_DAY - timedelta(microseconds=mid)) / timedelta(days=1))
        starts = g.group_by("_day").agg(c("line").min()).sort("line")
        days[file] = tuple((line, DATELESS_DAY + timedelta(days=first + day)) for day, line in starts.iter_rows())
    return days


def in_file_order(ev: pl.DataFrame) -> pl.DataFrame:
    """`seq`: each line's place in the time order of its file: its line number, negated in a file written newest
    first (ingest.fold.written_newest_first). Whatever orders the lines of one file by their place reads `seq`."""
    newest_first = written_newest_first(ev, pl.col("file"), pl.col("ts"), "line")
    return ev.with_columns(pl.when(pl.col("file").is_in(newest_first.implode())).then(-pl.col("line"))
                           .otherwise(pl.col("line")).alias("seq"))


def _one_world(assigned: pl.DataFrame) -> bool:
    """Whether the nodes' rank-assignment lines are those of one world, printed at one moment: no rank of one data
    parallel group is claimed on two nodes. Two instances that each hold a whole world (a prefill and a decode,
    replicas behind a router) started when each was started."""
    place = assigned["text"].str.extract_groups(line_rx("assigned")).struct.unnest().select("r", "dp")
    claims = pl.concat([assigned.select("node"), place], how="horizontal").drop_nulls()
    return claims.group_by("r", "dp").agg(pl.col("node").n_unique().alias("_k")).filter(pl.col("_k") > 1).is_empty()


def _clock_of(ev: pl.DataFrame, m: ClockModel) -> pl.Expr:
    """The node whose clock timed each row: its own, or for a relayed line the node of the file it is in."""
    if not m.writer or "ip" not in ev.columns:
        return pl.col("node")
    relayed = pl.col("file").replace_strict(m.writer, default=None, return_dtype=pl.String)
    return pl.coalesce(pl.when(pl.col("ip").is_not_null()).then(relayed), pl.col("node"))


def _lookup(key: str, by: dict[str | None, datetime]) -> pl.Expr:
    """The time `by` gives the row's `key` (a None key stands for rows whose key is null)."""
    known = {k: v for k, v in by.items() if k is not None}
    found = pl.col(key).replace_strict(known, default=None, return_dtype=pl.Datetime("us")) if known else \
        pl.lit(None, pl.Datetime("us"))
    return found if None not in by else pl.when(pl.col(key).is_null()).then(pl.lit(by[None], pl.Datetime("us"))) \
        .otherwise(found)


TIME_COLUMNS = ("node", "file", "line", "lt", "lt_kind", "wt", "wt_kind", "uptime", "wrapper", "source")


def _times(ev: pl.DataFrame, m: ClockModel) -> pl.DataFrame:
    """`ts` (naive UTC) and `ts_quality` from each line's own clock, before filling and offsets. Worked out
    on the rows that carry a time only (in many logs most lines carry none: access logs, NCCL debug)."""
    return aged_times(_clocked_times(ev, m), m.listed) if m.listed else _clocked_times(ev, m)


def _clocked_times(ev: pl.DataFrame, m: ClockModel) -> pl.DataFrame:
    c = pl.col
    timed = ev.select(c("lt").is_not_null() | c("wt").is_not_null() | c("uptime").is_not_null()).to_series()
    if timed.all():
        return ev.with_columns(_own_times(ev.select(TIME_COLUMNS), m).get_columns())
    if not timed.any():
        return ev.with_columns(pl.lit(None, pl.Datetime("us")).alias("ts"), pl.lit(None, pl.String).alias("ts_quality"))
    idx = timed.arg_true()
    own = _own_times(ev.select(TIME_COLUMNS)[idx], m)
    return ev.with_columns(at_rows(ev.height, idx, own[c]).alias(c) for c in ("ts", "ts_quality"))


def _own_times(ev: pl.DataFrame, m: ClockModel) -> pl.DataFrame:
    """`ts` and `ts_quality` of rows (TIME_COLUMNS) that carry their own time."""
    steps, final = _own_time_plan(m)
    lf = ev.lazy()
    for step in steps:
        lf = lf.with_columns(step)
    return lf.select(final).collect()


def _own_time_plan(m: ClockModel) -> tuple[list[list[pl.Expr]], list[pl.Expr]]:
    """The steps of `_own_times`' query, built once per model (building its expressions cost more than
    running them on the few timed rows of a batch)."""
    key = (m.tz, m.bundle_ref, m.no_future, tuple(m.node_ref.items()), tuple(m.boots.items()),
           tuple(m.file_ref.items()), tuple(m.host_zone.items()), m.bare_zone, tuple(m.days.items()),
           tuple(m.zone_name.items()))
    if m._plan is None or m._plan[0] != key:
        m._plan = (key, _build_own_time_plan(m))
    return m._plan[1]


def _build_own_time_plan(m: ClockModel) -> tuple[list[list[pl.Expr]], list[pl.Expr]]:
    c = pl.col
    steps = [[_lookup("node", m.node_ref).alias("_ref"), _lookup("node", m.boots).alias("_boot"),
              _lookup("file", m.file_ref).alias("_fref")],
             [pl.coalesce("_fref", "_ref", pl.lit(m.bundle_ref, pl.Datetime("us"))).alias("_ref"),
              (c("_fref").is_null() & m.no_future).alias("_past"), _exact(m).alias("_exact")]]
    # the year of year-less times: the one that puts them closest to the file's last time (with nothing to
    # date the bundle), else the node's or the bundle's dated lines (a December line next to January
    # references belongs to the year before)
    # (in steps: each step's columns are computed once, where one expression would repeat its parts; one
    # lazy query, so that a batch pays one plan's fixed cost)
    steps.append([_yearless().alias("_yl"), c("_ref").dt.year().cast(pl.Int64).alias("_ry")])
    steps.append([_with_year(c("_yl"), c("_ry")).alias("_same")])
    half_year = pl.duration(days=183)
    year = (pl.when(c("_past")).then(pl.when(c("_same") > c("_ref")).then(c("_ry") - 1).otherwise(c("_ry")))
            .when(c("_same") - c("_ref") > half_year).then(c("_ry") - 1)
            .when(c("_ref") - c("_same") > half_year).then(c("_ry") + 1).otherwise(c("_ry")))
    steps.append([year.alias("_year")])
    best = local_utc(_with_year(c("_yl"), c("_year")), m)
    from_boot = c("_boot") + pl.duration(microseconds=(c("uptime") * 1e6).cast(pl.Int64))
    steps.append([pl.when(c("_yl").is_not_null()).then(best).alias("_yearless"),
                  pl.when(c("lt_kind") == "dateless").then(local_utc(_midnight(m) + _dateless(), m)).alias("_dated")])
    final = [pl.coalesce("_exact", "_yearless", "_dated", from_boot).alias("ts"),
             pl.when(c("_exact").is_not_null()).then(pl.lit("exact"))
             .when(c("_yearless").is_not_null() | c("_dated").is_not_null()
                   | (c("uptime").is_not_null() & c("_boot").is_not_null()))
             .then(pl.lit("inferred"))
             .when(c("uptime").is_not_null()).then(pl.lit("relative"))
             .otherwise(None).alias("ts_quality")]
    return steps, final


def _midnight(m: ClockModel) -> pl.Expr:
    """The midnight a time of day counts from: its file's day at its line (none where the model has no day)."""
    day = pl.lit(None, pl.Datetime("us"))
    for file, starts in m.days.items():
        for line, midnight in starts:  # (later starts are tried first: each `when` wraps the ones before)
            day = pl.when((pl.col("file") == file) & (pl.col("line") >= line)).then(pl.lit(midnight)).otherwise(day)
    return day


def apply(ev: pl.DataFrame, m: ClockModel, last_ts: dict[str, datetime] | None = None) -> pl.DataFrame:
    """Add `ts` (UTC) and `ts_quality`. Rows are in file order; a line with no time of its own takes the
    time of the line before it in its file (`last_ts` carries that across batches and is updated), but for a
    state's row (source `state`: a condition true since its time, not an event) which passes its time on to none."""
    c = pl.col
    ev = _times(ev, m)
    in_order = _one_file_in_order(ev)
    passed_on = pl.when(c("source") != STATE).then(c("ts")) if "source" in ev.columns else c("ts")
    if in_order:  # a batch of `events`: no window, and the carried time is one value
        carry = pl.lit((last_ts or {}).get(ev["file"][0]), pl.Datetime("us"))
        before = passed_on.forward_fill()
    else:
        carry = c("file").replace_strict(last_ts, default=None, return_dtype=pl.Datetime("us")) if last_ts else \
            pl.lit(None, pl.Datetime("us"))
        before = passed_on.forward_fill().over("file", order_by=["line", "sub"])
    own = c("ts_quality")
    filled = pl.when(own.is_null()).then(pl.coalesce(before, carry)).otherwise(c("ts"))
    quality = pl.when(own.is_null() & filled.is_not_null()).then(pl.lit("inferred")).otherwise(own).fill_null("none")
    aligned = filled
    if m.offsets:
        off = _clock_of(ev, m).replace_strict(m.offsets, default=None, return_dtype=pl.Float64)
        aligned = pl.when(off.is_not_null() & filled.is_not_null()) \
            .then(filled - pl.duration(microseconds=(off * 1e6).cast(pl.Int64))).otherwise(filled)
    if m.bmc and "source" in ev.columns:   # (a BMC's own clock: its SEL lines, by the readings of both clocks)
        ahead = c("node").replace_strict(m.bmc, default=None, return_dtype=pl.Float64)
        aligned = pl.when((c("source") == "bmc") & ahead.is_not_null()) \
            .then(aligned - pl.duration(microseconds=(ahead * 1e6).cast(pl.Int64))).otherwise(aligned)
    # (one query; the time before the node's offset is what the next batch of the file carries on with)
    ev = ev.with_columns(aligned.dt.replace_time_zone(UTC).alias("ts"), quality.alias("ts_quality"),
                         filled.alias("_local"))
    if last_ts is not None:
        carried = ev.select("file", "line", "sub", "_local").filter(
            ev["_local"].is_not_null() & (ev["ts_quality"] != "relative"))
        if in_order and carried.height:
            last_ts[carried["file"][0]] = carried["_local"][-1]
        elif carried.height:
            for f, t in carried.group_by("file").agg(c("_local").sort_by(["line", "sub"]).last()).iter_rows():
                last_ts[f] = t
    return ev.drop("_local")


def _one_file_in_order(ev: pl.DataFrame) -> bool:
    """Whether every row is from the same file, in (line, sub) order."""
    return the_one(ev["file"]) not in (MIXED, None) and in_line_order(ev)


def parse_iso(value: str) -> datetime | None:
    """A fact's ISO time as an aware datetime (naive ones are UTC)."""
    try:
        dt = datetime.fromisoformat(INGEST["iso_zulu"].sub("+00:00", value.strip()))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
