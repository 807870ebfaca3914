"""What the timeline template draws: lanes, phase bands, marks, ticks, axis breaks, the legend and the cause line, with
their sizes and colours, and the small helpers that place and cut text."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from .timeaxis import utc

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


def zigzag(mid: float, y: float) -> tuple[str, str]:
    return (f"{num(mid - 6)},{num(y + 5)} {num(mid - 2)},{num(y - 5)}",
            f"{num(mid + 2)},{num(y + 5)} {num(mid + 6)},{num(y - 5)}")
