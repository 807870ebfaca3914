"""The part of a bundle a user asks to look at (`--since`, `--until`, `--node`, `--rank`): which event rows
`analyze` diagnoses and `events` writes. Times are the bundle's clock after alignment (UTC): an ISO 8601 time
(zone-less: in --tz), or a duration (`90s`, `15m`, `2h`, `1d`) counted back from the last time the bundle
shows. A time bound leaves out the lines with no time; a node or rank bound, the lines of no node or rank."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from .errors import UsageError

DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)$")
SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Window:
    since: str | None = None
    until: str | None = None
    nodes: tuple[str, ...] = ()
    ranks: tuple[int, ...] = ()
    tz: str = "UTC"

    def __post_init__(self) -> None:
        for flag, value in (("--since", self.since), ("--until", self.until)):
            if value is not None:
                _moment(flag, value, self.tz, datetime.now(timezone.utc))  # a bad value fails before any work

    @property
    def empty(self) -> bool:
        return self.since is None and self.until is None and not self.nodes and not self.ranks

    def keep(self, last: datetime | None):
        """The rows inside the window, a polars expression over `ts` (UTC), `node` and `rank`; `last`: the
        bundle's last time, for durations."""
        import polars as pl  # (here: the CLI sizes polars' pool before polars is first imported)
        keep = pl.lit(True)
        for flag, value, op in (("--since", self.since, "ge"), ("--until", self.until, "le")):
            if value is None:
                continue
            at = _moment(flag, value, self.tz, last)
            if at is None:  # a duration, and the bundle shows no time: no line can be inside
                return pl.lit(False)
            bound = pl.lit(at).dt.cast_time_unit("us")
            keep = keep & getattr(pl.col("ts"), op)(bound).fill_null(False)
        if self.nodes:
            keep = keep & pl.col("node").is_in(list(self.nodes)).fill_null(False)
        if self.ranks:
            keep = keep & pl.col("rank").is_in(list(self.ranks)).fill_null(False)
        return keep

    def describe(self) -> str:
        parts = [f"--since {self.since}" if self.since else "", f"--until {self.until}" if self.until else "",
                 *(f"--node {n}" for n in self.nodes), *(f"--rank {r}" for r in self.ranks)]
        return " ".join(p for p in parts if p)


def _moment(flag: str, value: str, tz: str, last: datetime | None) -> datetime | None:
    """The UTC time a --since/--until value names (None: a duration, with no last time to count from)."""
    value = value.strip()
    if m := DURATION.match(value):
        if last is None:
            return None
        last = last if last.tzinfo else last.replace(tzinfo=timezone.utc)
        return last - timedelta(seconds=float(m.group(1)) * SECONDS[m.group(2)])
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{flag} takes a time (2026-05-14T14:30:00, zone-less times in --tz) or a duration "
                         f"counted back from the bundle's end (90s, 15m, 2h, 1d), not {value!r}") from None
    return (at if at.tzinfo else at.replace(tzinfo=ZoneInfo(tz))).astimezone(timezone.utc)
