"""The timeline's x axis: UTC time mapped onto a width, cut where a long quiet stretch would squash the rest.
The times to draw are grouped into clusters separated by the longest gaps (each longer than a minute and than
a good share of what is still drawn); each cluster gets a width proportional to its duration (with a floor,
so a burst of events stays readable), the gaps a fixed-width break labelled with the time they skip."""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone

BREAK_W = 36            # an axis break
MIN_SEG_W = 64          # the narrowest a cluster of events is drawn
MIN_BREAK_S = 60.0      # a quiet stretch shorter than this is never cut
BREAK_SHARE = 0.35      # ... nor one that takes less than this share of what is still drawn
MAX_BREAKS = 4
NICE_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
              172800, 604800)
TICK_SPACING = 72       # pixels between tick labels at least
TICK_MARGIN = 24        # no tick label this close to a segment's ends (the break labels sit there)


def utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=timezone.utc)


def duration(s: float) -> str:
    """A quiet stretch, briefly: 45 s, 12 min, 3 h 5 min, 21 d."""
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        h, m = divmod(int(round(s / 60)), 60)
        return f"{h} h {m} min" if m and h < 10 else f"{h} h"
    return f"{s / 86400:.0f} d"


@dataclass
class Segment:
    t0: float
    t1: float
    x0: float
    x1: float

    def x(self, t: float) -> float:
        return self.x0 + (t - self.t0) / (self.t1 - self.t0) * (self.x1 - self.x0)


class Axis:
    def __init__(self, times: list[float], x0: float, x1: float):
        times = sorted(set(times))
        self.segments: list[Segment] = []
        self.gaps: list[tuple[float, float, float]] = []   # (x of the break, its width, seconds skipped)
        if not times:
            return
        cuts = self._breaks(times)
        clusters, start = [], 0
        for i in sorted(cuts):
            clusters.append((times[start], times[i]))
            start = i + 1
        clusters.append((times[start], times[-1]))
        spans = []
        for k, (a, b) in enumerate(clusters):
            pad = max(0.5, 0.03 * (b - a))
            if k > 0:
                pad_l = min(pad, 0.25 * (a - clusters[k - 1][1]))
            else:
                pad_l = pad
            pad_r = min(pad, 0.25 * (clusters[k + 1][0] - b)) if k + 1 < len(clusters) else pad
            spans.append((a - pad_l, b + pad_r))
        avail = (x1 - x0) - BREAK_W * (len(spans) - 1)
        widths = _share([b - a for a, b in spans], avail, MIN_SEG_W)
        x = x0
        for k, ((a, b), w) in enumerate(zip(spans, widths)):
            self.segments.append(Segment(a, b, x, x + w))
            x += w
            if k + 1 < len(spans):
                self.gaps.append((x, BREAK_W, spans[k + 1][0] - b))
                x += BREAK_W

    @staticmethod
    def _breaks(times: list[float]) -> set[int]:
        """Indices i where the stretch times[i] -> times[i+1] is cut: the longest first, while each is
        longer than a minute and than a good share of what would still be drawn."""
        drawn = times[-1] - times[0]
        gaps = sorted(((times[i + 1] - times[i], i) for i in range(len(times) - 1)), key=lambda g: (-g[0], g[1]))
        out: set[int] = set()
        for g, i in gaps:
            if len(out) >= MAX_BREAKS or g < MIN_BREAK_S or g < BREAK_SHARE * drawn:
                break
            out.add(i)
            drawn -= g
        return out

    def x(self, t: float) -> float:
        for s in self.segments:
            if t <= s.t1:
                return s.x(max(t, s.t0))
        return self.segments[-1].x1

    def clip(self, a: float, b: float) -> list[tuple[float, float]]:
        """[a, b] as drawn: one piece per segment it overlaps."""
        return [(s.x(max(a, s.t0)), s.x(min(b, s.t1))) for s in self.segments if a <= s.t1 and b >= s.t0]

    def ticks(self) -> list[tuple[float, str, str]]:
        out, last_day = [], None
        for s in self.segments:
            span = s.t1 - s.t0
            step = next((n for n in NICE_STEPS if n * (s.x1 - s.x0) / span >= TICK_SPACING), NICE_STEPS[-1])
            t = math.ceil(s.t0 / step) * step
            ts = []
            while t <= s.t1:
                if s.x0 + TICK_MARGIN <= s.x(t) <= s.x1 - TICK_MARGIN:  # labels stay clear of the breaks
                    ts.append(t)
                t += step
            if not ts:  # a narrow segment: its middle, to the second
                ts, step = [float(round((s.t0 + s.t1) / 2))], 1
            for t in ts:
                d = utc(t)
                label = d.strftime("%H:%M:%S") if step < 60 else d.strftime("%H:%M") if step < 86400 \
                    else d.strftime("%m-%d")
                day = d.strftime("%Y-%m-%d")
                out.append((s.x(t), label, day if day != last_day else ""))
                last_day = day
        return out



def _share(durations: list[float], avail: float, minimum: float) -> list[float]:
    """Widths proportional to durations, none below `minimum` (unless there is no room for that)."""
    n = len(durations)
    if minimum * n >= avail:
        return [avail / n] * n
    fixed: set[int] = set()
    while True:
        rest = avail - minimum * len(fixed)
        total = sum(d for i, d in enumerate(durations) if i not in fixed) or 1.0
        widths = [minimum if i in fixed else rest * d / total for i, d in enumerate(durations)]
        small = {i for i, w in enumerate(widths) if w < minimum and i not in fixed}
        if not small:
            return widths
        fixed |= small
