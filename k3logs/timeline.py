"""The geometry of the timeline picture, computed from the Report alone: one lane per node and rank
(grouped by node: first the node's own lane for kernel lines and launcher events, then its ranks), one
UTC x axis shared by all lanes and cut where a long quiet stretch would squash the rest, phase bands,
symptoms by category, kernel events, the first cause, per-node clock notes. The template
report_templates/timeline.svg.j2 only draws what this returns; numbers are formatted here, once, so the
same report always gives the same bytes."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone

from .report import Report
from .schema import PHASES
from .timeaxis import Axis, duration, utc

WIDTH = 1000            # fits a GitHub/GitLab markdown column without much scaling
LABEL_W = 184           # lane labels on the left
PLOT_X = 192
PLOT_RIGHT = WIDTH - 12
NODE_H = 28             # a node's own lane holds its name and clock note
RANK_H = 16
TOP = 78                # title, cause label, date and tick rows above the first lane
CHAR_W = 0.52           # average glyph width per pixel of font size (sans-serif), to cut long labels
BOLD_W = 0.64           # the same for bold text, and a generous bound for laying out the legend
REPEAT_MIN_PX = 10      # a repeat closer than this to the first line is not marked apart
NOTIME_W = 56           # the column of events whose time is unknown
GAP_W = 8

CAUSE_COLOUR = "#d62728"  # kept for the first cause only
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
           "#393b79", "#637939", "#8c6d31")
PHASE_COLOURS = {"startup": "#e9e9e9", "device_init": "#d6e6f5", "distributed_init": "#d4edd1",
                 "model_load": "#fde0bf", "kv_cache_init": "#f2d9ee", "cudagraph_capture": "#e3daf4",
                 "serving": "#cfeeea", "shutdown": "#f3d2d2"}


# ------------------------------------------------------------------------------------------------------
# what the template draws
# ------------------------------------------------------------------------------------------------------
@dataclass
class Lane:
    node: str          # "" when the bundle cannot tell the node
    rank: str          # "" for a node's own lane; the ranks, for a lane of quiet ranks ("1-7,9-15")
    kind: str          # node | rank | quiet (the ranks of a node that logged nothing drawn here, folded)
    y: str
    h: str
    mid: str
    label: str
    note: str = ""     # clock note of a node lane
    title: str = ""
    shade: bool = False
    label_y: str = ""
    note_y: str = ""


@dataclass
class Band:
    x: str
    y: str
    w: str
    h: str
    colour: str
    phase: str
    label: str
    label_x: str
    label_y: str
    title: str


@dataclass
class Mark:
    kind: str          # cause | symptom | kernel
    shape: str         # circle | square | diamond
    x: str
    y: str
    colour: str
    hollow: bool
    node: str
    rank: str
    ts: str            # ISO time, "" when unknown
    category: str
    title: str
    dx_last: str = ""  # a kernel line repeated until later: a small hollow mark at its last time (relative to x)
    half: str = "5"    # a square's half size: the first cause's kernel line is larger, so that a line of the
    size: str = "10"   # same failure a microsecond later (drawn over it) leaves it visible


@dataclass
class Tick:
    x: str
    label: str
    date: str


@dataclass
class Break:
    x: str
    w: str
    mid: str
    label: str
    zigzag: tuple[str, str] = ("", "")   # the two strokes of the break sign on the axis
    shown: bool = True                    # whether its label has room on the axis (its tooltip says it anyway)


@dataclass
class LegendItem:
    kind: str          # phase | category | kernel | cause
    colour: str
    label: str
    x: str             # the swatch's box (top left)
    y: str
    cx: str            # its centre
    cy: str
    text_x: str
    text_y: str
    points: str = ""   # the cause's diamond


@dataclass
class CauseLine:
    x: str
    y1: str
    y2: str
    label: str
    label_x: str
    label_y: str
    anchor: str


@dataclass
class Picture:
    width: int
    height: int
    title: str
    plot_x: str
    plot_right: str
    axis_y: str
    lanes_bottom: str
    tick_y: str = ""
    date_y: str = ""
    cover_y: str = ""     # breaks cover the plot from here, this high
    cover_h: str = ""
    plot_h: str = ""
    lanes: list[Lane] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    breaks: list[Break] = field(default_factory=list)
    legend: list[LegendItem] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (y, text) below the legend
    cause: CauseLine | None = None
    notime: Break | None = None   # the column for events with no time
    empty: bool = False


def num(v: float) -> str:
    """One decimal, no '-0.0': coordinates always print the same."""
    s = f"{v:.1f}"
    return "0.0" if s == "-0.0" else s


def cut(text: str, px: float, size: float, bold: bool = False) -> str:
    """`text` shortened with an ellipsis to about `px` pixels at font `size`."""
    text = " ".join(str(text).split())
    n = max(4, int(px / (size * (BOLD_W if bold else CHAR_W))))
    return text if len(text) <= n else text[: n - 1] + "…"


def seconds(ts: str | None) -> float | None:
    if not ts:
        return None
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()


def clock_time(t: float) -> str:
    """HH:MM:SS, with milliseconds when the time has them."""
    d = utc(t)
    return d.strftime("%H:%M:%S") + (f".{d.microsecond // 1000:03d}" if d.microsecond else "")


def clock_note(offset: float | None, applied: bool, reference: bool) -> str:
    if reference:
        return "reference clock"
    if offset is None or (offset == 0 and not applied):
        return ""
    off = f"{offset:+.2f}".rstrip("0").rstrip(".")
    return f"clock {off} s (corrected)" if applied else f"clock {off} s (not applied)"


def _zigzag(mid: float, y: float) -> tuple[str, str]:
    return (f"{num(mid - 6)},{num(y + 5)} {num(mid - 2)},{num(y - 5)}",
            f"{num(mid + 2)},{num(y + 5)} {num(mid + 6)},{num(y - 5)}")


# ------------------------------------------------------------------------------------------------------
# the picture
# ------------------------------------------------------------------------------------------------------
def _lane_keys(r: Report) -> dict[str | None, list[int]]:
    """Every node that anything drawn names, with the ranks seen on it."""
    lanes: dict[str | None, set[int]] = {}
    for n in r.nodes:
        lanes.setdefault(n.node, set()).update(n.ranks)
    for item in [*r.phases, *r.symptoms]:
        ranks = lanes.setdefault(item.node, set())
        if item.rank is not None:
            ranks.add(item.rank)
    for k in r.kernel_events:
        lanes.setdefault(k.node, set())
    if r.first_causal is not None:
        ranks = lanes.setdefault(r.origin.node, set())
        if r.origin.rank is not None:
            ranks.add(r.origin.rank)
    order = sorted((n for n in lanes if n is not None)) + ([None] if None in lanes else [])
    return {n: sorted(lanes[n]) for n in order}


def _key(node: str | None, rank: int | None) -> tuple[str, str]:
    return ("" if node is None else node, "" if rank is None else str(rank))


def _drawn(r: Report) -> set[tuple[str, str]]:
    """The (node, rank) lanes something is drawn on: a phase band, a symptom, the first cause."""
    keys = {_key(p.node, p.rank) for p in r.phases if p.rank is not None}
    keys |= {_key(s.node, s.rank) for s in r.symptoms if s.rank is not None and s.source != "kernel"}
    if r.first_causal is not None and r.origin.rank is not None:
        keys.add(_key(r.origin.node, r.origin.rank))
    return keys


def ranges(ranks: list[int]) -> str:
    """1, 2, 3, 5, 9, 10 -> '1-3, 5, 9-10'."""
    runs: list[list[int]] = []
    for k in sorted(ranks):
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _lanes(r: Report) -> tuple[list[Lane], dict[tuple[str, str], Lane], float]:
    """The lanes top to bottom, by (node, rank) key, and where the last one ends."""
    nodes = {n.node: n for n in r.nodes}
    reference = r.clock.get("reference_node") if r.clock else None
    keys = _lane_keys(r)
    drawn = _drawn(r)
    lanes: list[Lane] = []
    y = float(TOP)
    for node, ranks in keys.items():
        ns = nodes.get(node)
        note = clock_note(ns.clock_offset_s, ns.clock_offset_applied, node == reference and len(keys) > 1) \
            if ns else ""
        name = node if node is not None else "(node unknown)"
        count = f"{len(ranks)} rank{'s' if len(ranks) != 1 else ''}" if ranks else "no ranks"
        node_key, rank_key = _key(node, None)
        lanes.append(Lane(node_key, rank_key, "node", num(y), num(NODE_H), num(y + NODE_H / 2 + 2),
                          cut(name, LABEL_W - 8, 11, bold=True),
                          cut(f"{count} · {note}" if note else count, LABEL_W - 8, 9),
                          f"node {name}: {count}" + (f"; {note}" if note else ""), shade=True,
                          label_y=num(y + 12), note_y=num(y + 24)))
        y += NODE_H
        # a rank nothing is drawn for (it logged nothing the report holds) shares one lane with the others
        quiet = [k for k in ranks if (node_key, str(k)) not in drawn]
        for rank in ranks:
            if rank in quiet:
                continue
            lanes.append(Lane(node_key, str(rank), "rank", num(y), num(RANK_H), num(y + RANK_H / 2), f"rank {rank}",
                              title=f"{name} rank {rank}", label_y=num(y + RANK_H / 2 + 3.5)))
            y += RANK_H
        if quiet:
            which = f"rank{'s' if len(quiet) > 1 else ''} {ranges(quiet)}"
            lanes.append(Lane(node_key, ranges(quiet).replace(" ", ""), "quiet", num(y), num(RANK_H),
                              num(y + RANK_H / 2), cut(f"{which}: no events", LABEL_W - 20, 10),
                              title=f"{name} {which}: no events", label_y=num(y + RANK_H / 2 + 3.5)))
            y += RANK_H
    return lanes, {(ln.node, ln.rank): ln for ln in lanes if ln.kind != "quiet"}, y


def _bands(r: Report, lane_of: dict[tuple[str, str], Lane], axis: Axis) -> list[Band]:
    """Phase bands, cut by the axis breaks; the first lane of each node that has room names them."""
    out: list[Band] = []
    labelled: set[tuple[str, str]] = set()
    for p in r.phases:
        a, b = seconds(p.start), seconds(p.end)
        lane = lane_of.get(_key(p.node, p.rank))
        if a is None or b is None or lane is None:
            continue
        name = p.phase.replace("_", " ")
        ly, lh = float(lane.y), float(lane.h)
        for x0, x1 in axis.clip(a, b):
            w = max(x1 - x0, 1.5)
            label = ""
            if (lane.node, p.phase) not in labelled and w > len(name) * 9 * CHAR_W + 6:
                label = name
                labelled.add((lane.node, p.phase))
            out.append(Band(num(x0), num(ly + 2), num(w), num(lh - 4), PHASE_COLOURS.get(p.phase, "#eeeeee"),
                            p.phase, label, num(x0 + 3), num(ly + lh / 2 + 3), f"{p.phase}: {p.start} to {p.end}"))
    return out


def _marks(r: Report, symptoms: list, lane_of: dict[tuple[str, str], Lane], x_of, axis: Axis,
           colour: dict[str, str]) -> list[Mark]:
    """Symptoms on their lanes, kernel lines on their node's lane, the first cause on its rank: in time
    order (untimed last), then top to bottom."""
    marks: list[tuple[tuple, Mark]] = []
    for s in symptoms:
        lane = lane_of.get(_key(s.node, s.rank))
        if lane is None:
            continue
        t = seconds(s.timestamp)
        seen = f"{s.count} times, first" if s.count > 1 else "at"
        marks.append(((t is None, t or 0.0, float(lane.y), s.category),
                      Mark("symptom", "circle", num(x_of(t)), lane.mid, colour[s.category], False, lane.node,
                           lane.rank, s.timestamp or "", s.category,
                           f"{s.category} ({s.title or s.category}) {seen} {s.timestamp or 'an unknown time'}, "
                           f"{s.file}:{s.line}")))
    for k in r.kernel_events:
        lane = lane_of.get(_key(k.node, None))
        if lane is None:
            continue
        t0, t1 = seconds(k.timestamp), seconds(k.last)
        extra = f", {k.count} times until {k.last}" if k.count > 1 else ""
        # (its last repeat is marked where it stands clear of the first)
        repeat = num(axis.x(t1) - axis.x(t0)) if t0 is not None and t1 is not None and \
            axis.x(t1) - axis.x(t0) >= REPEAT_MIN_PX else ""
        marks.append(((t0 is None, t0 or 0.0, float(lane.y), k.category),
                      Mark("kernel", "square", num(x_of(t0)), lane.mid,
                           CAUSE_COLOUR if k.role == "cause" else colour[k.category], k.role == "context", lane.node,
                           lane.rank, k.timestamp or "", k.category,
                           f"kernel {k.role}: {k.title} at {k.timestamp or 'an unknown time'}{extra}, "
                           f"{k.file}:{k.line}", repeat, *(("7", "14") if k.role == "cause" else ()))))
    fc = r.first_causal
    lane = lane_of.get(_key(r.origin.node, r.origin.rank)) if fc else None
    if fc is not None and lane is not None:
        t = seconds(fc.timestamp)
        marks.append(((t is None, t or 0.0, float(lane.y), "~cause"),
                      Mark("cause", "diamond", num(x_of(t)), lane.mid, CAUSE_COLOUR, False, lane.node, lane.rank,
                           fc.timestamp or "", r.root_cause.category,
                           f"first cause: {r.root_cause.title} at {fc.timestamp or 'an unknown time'}, "
                           f"{fc.file}:{fc.line}")))
    return [m for _, m in sorted(marks, key=lambda km: km[0])]


def _cause_line(r: Report, mark: Mark, bottom: float) -> CauseLine:
    """The dashed line through every lane at the first cause, labelled at the top on the side with room."""
    x = float(mark.x)
    t = seconds(r.first_causal.timestamp) if r.first_causal else None
    where = " ".join(w for w in (r.origin.node, None if r.origin.rank is None else f"rank {r.origin.rank}") if w)
    label = f"first cause · {clock_time(t) if t is not None else 'time unknown'}" + (f" · {where}" if where else "") \
        + f" · {r.root_cause.title}"
    left = x > (PLOT_X + PLOT_RIGHT) / 2
    room = (x - 12) if left else (WIDTH - x - 12)
    return CauseLine(num(x), num(40), num(bottom), cut(label, room, 11, bold=True), num(x - 4 if left else x + 4),
                     num(36), "end" if left else "start")


def _span(x: str, text: str, size: float) -> tuple[float, float]:
    """Where a centred label of `text` at font `size` lies on its row, with a little space either side."""
    half = len(text) * size * CHAR_W / 2 + 3
    return float(x) - half, float(x) + half


def _unclutter(pic: Picture) -> None:
    """Labels of one row never overlap: on the tick row the 'no time' column's label, then tick labels left to
    right; on the date row each break's duration, then the dates. A label that would overlap one placed
    before it is left out (its tick line stays)."""
    def place(taken: list[tuple[float, float]], x: str, text: str, size: float) -> bool:
        a, b = _span(x, text, size)
        if any(a < d and c < b for c, d in taken):
            return False
        taken.append((a, b))
        return True

    row: list[tuple[float, float]] = []
    if pic.notime is not None:
        place(row, pic.notime.mid, pic.notime.label, 10)
    for t in pic.ticks:
        if not place(row, t.x, t.label, 10):
            t.label = t.date = ""
    dates: list[tuple[float, float]] = []
    for g in pic.breaks:
        g.shown = place(dates, g.mid, g.label, 9)
    for t in pic.ticks:
        if t.date and not place(dates, t.x, t.date, 9):
            t.date = ""


def _legend(items: list[tuple[str, str, str]], y: float) -> tuple[list[LegendItem], float]:
    """Legend entries wrapped to the width; returns them and the baseline of the last row."""
    out, x = [], 8.0
    for kind, col, label in items:
        w = 18 + len(label) * 10 * BOLD_W + 10
        if x + w > WIDTH - 8:
            x, y = 8.0, y + 18
        cx, cy = x + 7, y - 4
        out.append(LegendItem(kind, col, label, num(x), num(y - 9), num(cx), num(cy), num(x + 18), num(y),
                              f"{num(cx)},{num(cy - 7)} {num(cx + 7)},{num(cy)} {num(cx)},{num(cy + 7)} "
                              f"{num(cx - 7)},{num(cy)}"))
        x += w
    return out, y


def layout(r: Report) -> Picture:
    lanes, lane_of, bottom = _lanes(r)

    # the axis: every time something is drawn at; kernel symptoms are drawn as kernel events
    symptoms = [s for s in r.symptoms if s.source != "kernel"]
    stamps = [t for p in r.phases for t in (p.start, p.end)] + [s.timestamp for s in symptoms] + \
        [t for k in r.kernel_events for t in (k.timestamp, k.last)] + \
        ([r.first_causal.timestamp] if r.first_causal else [])
    times = [t for ts in stamps if (t := seconds(ts)) is not None]
    untimed = any(seconds(s.timestamp) is None for s in symptoms) or \
        any(seconds(k.timestamp) is None for k in r.kernel_events) or \
        (r.first_causal is not None and seconds(r.first_causal.timestamp) is None)
    right = PLOT_RIGHT - (NOTIME_W + GAP_W if untimed else 0)
    axis = Axis(times, PLOT_X, right)

    def x_of(t: float | None) -> float:
        return right + GAP_W + NOTIME_W / 2 if t is None else axis.x(t)

    axis_y = TOP - 6
    title = cut(f"k3logs timeline (UTC): {r.root_cause.title}", WIDTH - 16, 13, bold=True)
    pic = Picture(WIDTH, 0, title, num(PLOT_X), num(PLOT_RIGHT), num(axis_y), num(bottom), tick_y=num(axis_y - 5),
                  date_y=num(axis_y - 18), cover_y=num(axis_y - 14), cover_h=num(bottom - axis_y + 14),
                  plot_h=num(bottom - axis_y), lanes=lanes, empty=not times and not untimed)
    if untimed:
        pic.notime = Break(num(right + GAP_W), num(NOTIME_W), num(right + GAP_W + NOTIME_W / 2), "no time")
    pic.ticks = [Tick(num(x), label, day) for x, label, day in axis.ticks()]
    pic.breaks = [Break(num(x), num(w), num(x + w / 2), duration(s), _zigzag(x + w / 2, axis_y))
                  for x, w, s in axis.gaps]
    _unclutter(pic)
    pic.bands = _bands(r, lane_of, axis)
    # colours by category, in sorted order so that they never depend on the bundle's file order
    cats = sorted({s.category for s in symptoms} | {k.category for k in r.kernel_events if k.role != "cause"})
    colour = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(cats)}
    pic.marks = _marks(r, symptoms, lane_of, x_of, axis, colour)
    cause = next((m for m in pic.marks if m.kind == "cause"), None)
    if cause is not None:
        pic.cause = _cause_line(r, cause, bottom)

    on_lanes = {s.category for s in symptoms}
    items = [("phase", PHASE_COLOURS[p], p.replace("_", " ")) for p in PHASES if any(b.phase == p for b in pic.bands)]
    items += [("category" if c in on_lanes else "kernel", colour[c], c) for c in cats]
    if r.kernel_events:
        items.append(("kernel", "#555555", "kernel line, on its node's lane (hollow: context only; small: its last repeat)"))
    if pic.cause is not None:
        items.append(("cause", CAUSE_COLOUR, "first cause"))
    pic.legend, y = _legend(items, bottom + 22)

    notes = []
    if reference := (r.clock.get("reference_node") if r.clock else None):
        notes.append(f"Times are UTC on the clock of {reference}; each node's clock correction is noted under its "
                     f"name.")
    if pic.breaks:
        notes.append("Zigzag gaps cut quiet stretches out of the axis; each is labelled with the time it skips.")
    if pic.notime is not None:
        notes.append("Events whose time the bundle does not give are drawn in the 'no time' column.")
    if pic.empty:
        notes.append("Nothing in this bundle carries a time: there is no timeline to draw.")
    for n in notes:
        y += 15 if pic.notes else 22
        pic.notes.append((num(y), cut(n, WIDTH - 16, 10)))
    pic.height = int(math.ceil(y + (4 if pic.notes else 26)))
    return pic
