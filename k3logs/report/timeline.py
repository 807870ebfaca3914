"""The geometry of the timeline picture, computed from the Report alone: one lane per node and rank
(grouped by node: first the node's own lane for kernel lines and launcher events, then its ranks), one
UTC x axis shared by all lanes and cut where a long quiet stretch would squash the rest, phase bands,
symptoms by category, kernel events, the first cause, per-node clock notes. The template
report_templates/timeline.svg.j2 only draws what this returns; numbers are formatted here, once, so the
same report always gives the same bytes."""
from __future__ import annotations

import math

from k3logs.contract import Report
from k3logs.diagnose.attribution import short_host
from k3logs.schema import PHASES

from .picture import (BOLD_W, CAUSE_COLOUR, CHAR_W, GAP_W, LABEL_W, NODE_H, NOTIME_W, PALETTE, PHASE_COLOURS,
                       PLOT_RIGHT, PLOT_X, RANK_H, REPEAT_MIN_PX, TOP, WIDTH, Band, Break, CauseLine, Lane, LegendItem,
                       Mark, Picture, Tick, clock_note, clock_time, cut, num, seconds, zigzag)
from .timeaxis import Axis, duration


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
        ranks = lanes.setdefault(origin_lane(r), set())
        if r.origin.rank is not None:
            ranks.add(r.origin.rank)
    order = sorted((n for n in lanes if n is not None)) + ([None] if None in lanes else [])
    return {n: sorted(lanes[n]) for n in order}


def origin_lane(r: Report) -> str | None:
    """The lane of the origin's node: nodes are drawn by the names the tables use (the short one where the report
    gives the origin's fully qualified name)."""
    node = r.origin.node
    return node if node is None or any(n.node == node for n in r.nodes) else short_host(node)


def _key(node: str | None, rank: int | None) -> tuple[str, str]:
    return ("" if node is None else node, "" if rank is None else str(rank))


def _drawn(r: Report) -> set[tuple[str, str]]:
    """The (node, rank) lanes something is drawn on: a phase band, a symptom, the first cause."""
    keys = {_key(p.node, p.rank) for p in r.phases if p.rank is not None}
    keys |= {_key(s.node, s.rank) for s in r.symptoms if s.rank is not None and s.source != "kernel"}
    if r.first_causal is not None and r.origin.rank is not None:
        keys.add(_key(origin_lane(r), r.origin.rank))
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
    lane = lane_of.get(_key(origin_lane(r), r.origin.rank)) if fc else None
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
    pic.breaks = [Break(num(x), num(w), num(x + w / 2), duration(s), zigzag(x + w / 2, axis_y))
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
