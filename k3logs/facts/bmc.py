"""The clock of a node's BMC, which times its System Event Log: `ipmitool sel time get` beside the host's `date -u`
in one transcript (a collector runs them one after the other). The BMC keeps its own clock, often local time and
drifting, so its SEL lines are read against the host's UTC by the difference of the two readings."""
from __future__ import annotations

from datetime import datetime

from .util import FACTS, Sink

NEAR = 4   # lines from the `date -u` reading to the BMC's: the same moment, read one command after the other


def parse_bmc_clock(sink: Sink, lines: list[str], base: int) -> None:
    """A `date -u` reading followed within NEAR lines by `ipmitool sel time get`'s: fact `bmc_clock`, how many
    seconds the BMC's clock reads ahead of UTC (its zone and its drift together)."""
    utc_at = None
    for i, ln in enumerate(lines):
        text = ln.strip()
        if (m := FACTS["utc_date_printed"].match(text)):
            utc_at = (i, datetime.strptime(" ".join(m.groups()), "%b %d %H:%M:%S %Y"))
        elif utc_at and i - utc_at[0] <= NEAR and (m := FACTS["bmc_time_printed"].match(text)):
            month, day, year, hms = m.groups()
            bmc = datetime.strptime(f"{year}-{month}-{day} {hms}", "%Y-%m-%d %H:%M:%S")
            sink.add("bmc_clock", str(round((bmc - utc_at[1]).total_seconds())), base + i + 1)
            utc_at = None
