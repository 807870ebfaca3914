"""Every time shape a bundle holds (log-formats.md 12, patterns/formats.toml), found by one regex and written
back moved by a number of seconds in the same shape: separators, padding, fraction and zone are kept, a
weekday is recomputed. Year-less shapes (vLLM 'MM-DD', glog, syslog) are moved within a year the caller gives."""
from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MON = "|".join(MONTHS)
_DAY = "|".join(DAYS)

SHAPES = re.compile(rf"""(?=[0-9A-Z"tab_\[\#])   # (what every shape starts with: a fast refusal elsewhere)
 (?:
  (?P<iso>(?<!\d)(?P<iy>(?:19|20)\d\d)(?P<is1>[-/])(?P<imo>[01]\d)(?P=is1)(?P<id>[0-3]\d)(?P<isep>[T _])
          (?P<ih>[0-2]\d):(?P<imi>[0-5]\d):(?P<is>[0-6]\d))
 |(?P<compact>(?<!\d)(?P<cy>20\d\d)(?P<cmo>[01]\d)(?P<cd>[0-3]\d)T(?P<ch>[0-2]\d)(?P<cmi>[0-5]\d)(?P<cs>[0-6]\d)(?!\d))
 |(?P<ctime>\b(?:{_DAY})\ (?P<tmo>{_MON})\ (?P<td>[\ \d]\d)\ (?P<tt>\d\d:\d\d:\d\d)(?P<tz>\ [A-Z]{{3,4}})?\ (?P<ty>\d{{4}})\b)
 |(?P<rfc>\b(?:{_DAY}),\ (?P<rd>\d\d?)\ (?P<rmo>{_MON})\ (?P<ry>\d{{4}})\ (?P<rt>\d\d:\d\d:\d\d))
 |(?P<mdy>\b(?P<mmo>{_MON})\ (?P<md>\d\d)\ (?P<my>\d{{4}})\ (?P<mt>\d\d:\d\d:\d\d))
 |(?P<syslog>\b(?P<smo>{_MON})\ (?P<sd>[\ \d]\d)\ (?P<st>\d\d:\d\d:\d\d)(?!\ \d{{4}}))
 |(?P<glog>(?<![A-Za-z0-9])(?P<gl>[DIWEFC])(?P<gmd>\d{{3,4}})\ (?P<gt>\d\d:\d\d:\d\d)(?=\.\d))
 |(?P<vllm>(?<![\d-])(?P<vmo>[01]\d)-(?P<vd>[0-3]\d)\ (?P<vt>[0-2]\d:[0-5]\d:[0-6]\d))
 |(?P<sel>(?<![\d/])(?P<lmo>[01]\d)/(?P<ld>[0-3]\d)/(?P<ly>(?:19|20)\d\d)\ \|\ (?P<lt>[0-2]\d:[0-5]\d:[0-6]\d))
 |(?P<epoch>(?P<ek>time=|audit\(|"created":\ ?|__REALTIME_TIMESTAMP":"|btime\ |\[(?=1[5-9]\d{{8}}\.\d+\])|^\#(?=1[5-9]\d{{8}}[ \t]*$))(?P<ev>1[5-9]\d{{8}}(?:\d{{6}}|\d{{3}})?)(?!\d))
 |(?P<prom>(?<=\d\ )(?P<pv>1[5-9]\d{{11}})(?=[ \t]*$))
 |(?P<upclock>(?<![\d:])(?P<ut>[0-2]\d:[0-5]\d:[0-5]\d)(?=\ up\ ))
 )""", re.X | re.M)
YEARS = re.compile(rf"(?<!\d)(20\d\d)[-/][01]\d[-/][0-3]\d[T _][0-2]\d:|(?:{_MON}) [ \d]\d \d\d:\d\d:\d\d(?: [A-Z]{{3,4}})? "
                   rf"(20\d\d)\b|\b(?:{_MON}) \d\d (20\d\d) \d\d:")

# a date on such a line is when something was built (uname, the kernel's and NVRM's banners), not a clock
BUILD = re.compile(r"Linux version|\bSMP\b|PREEMPT|Kernel Module|Kernel Mode Setting Driver")
CLOCK_SHAPES = ("iso", "compact", "ctime", "rfc", "mdy", "syslog", "glog", "vllm", "sel")
YEARLESS = ("syslog", "glog", "vllm")


def _dt(y: int, mo: int, d: int, hms: str) -> datetime:
    h, mi, s = (int(x) for x in hms.split(":"))
    extra = s - 59 if s > 59 else 0   # a leap second written as :60
    return datetime(y, mo, d, h, mi, s - extra) + timedelta(seconds=extra)


def _yearful(y: int, mo: int, d: int) -> int:
    """A year in which month mo has day d (a year-less Feb 29 needs a leap year)."""
    while mo == 2 and d == 29 and not (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)):
        y -= 1
    return y


def parse(m: re.Match, year: int) -> tuple[str, datetime | None]:
    """(shape, the time it states; year-less shapes in `year`) of a SHAPES match; epochs and uptime clocks
    give None."""
    g = m.groupdict()
    shape = m.lastgroup
    if shape == "iso":
        return shape, _dt(int(g["iy"]), int(g["imo"]), int(g["id"]), f"{g['ih']}:{g['imi']}:{g['is']}")
    if shape == "compact":
        return shape, _dt(int(g["cy"]), int(g["cmo"]), int(g["cd"]), f"{g['ch']}:{g['cmi']}:{g['cs']}")
    if shape == "ctime":
        return shape, _dt(int(g["ty"]), MONTHS.index(g["tmo"]) + 1, int(g["td"]), g["tt"])
    if shape == "rfc":
        return shape, _dt(int(g["ry"]), MONTHS.index(g["rmo"]) + 1, int(g["rd"]), g["rt"])
    if shape == "mdy":
        return shape, _dt(int(g["my"]), MONTHS.index(g["mmo"]) + 1, int(g["md"]), g["mt"])
    if shape == "sel":   # ipmitool sel: 'MM/DD/YYYY | HH:MM:SS'
        return shape, _dt(int(g["ly"]), int(g["lmo"]), int(g["ld"]), g["lt"])
    if shape == "syslog":
        mo, d = MONTHS.index(g["smo"]) + 1, int(g["sd"])
        return shape, _dt(_yearful(year, mo, d), mo, d, g["st"])
    if shape == "glog":
        md = g["gmd"]
        mo, d = int(md[:-2]), int(md[-2:])
        return shape, _dt(_yearful(year, mo, d), mo, d, g["gt"])
    if shape == "vllm":
        mo, d = int(g["vmo"]), int(g["vd"])
        return shape, _dt(_yearful(year, mo, d), mo, d, g["vt"])
    return shape, None


def _render(m: re.Match, t: datetime) -> str:
    g, shape = m.groupdict(), m.lastgroup
    hms = t.strftime("%H:%M:%S")
    if shape == "iso":
        s = g["is1"]
        return f"{t.year:04d}{s}{t.month:02d}{s}{t.day:02d}{g['isep']}{hms}"
    if shape == "compact":
        return t.strftime("%Y%m%dT%H%M%S")
    if shape == "ctime":
        day = f"{t.day:02d}" if g["td"].startswith("0") else f"{t.day:2d}"
        return f"{DAYS[t.weekday()]} {MONTHS[t.month - 1]} {day} {hms}{g['tz'] or ''} {t.year}"
    if shape == "rfc":
        day = f"{t.day:02d}" if len(g["rd"]) == 2 else str(t.day)
        return f"{DAYS[t.weekday()]}, {day} {MONTHS[t.month - 1]} {t.year} {hms}"
    if shape == "mdy":
        return f"{MONTHS[t.month - 1]} {t.day:02d} {t.year} {hms}"
    if shape == "sel":
        return f"{t.month:02d}/{t.day:02d}/{t.year} | {hms}"
    if shape == "syslog":
        day = f"{t.day:2d}" if g["sd"].startswith(" ") else f"{t.day:02d}"
        return f"{MONTHS[t.month - 1]} {day} {hms}"
    if shape == "glog":
        md = f"{t.month:02d}{t.day:02d}" if len(g["gmd"]) == 4 or t.month >= 10 else f"{t.month}{t.day:02d}"
        return f"{g['gl']}{md} {hms}"
    if shape == "vllm":
        return f"{t.month:02d}-{t.day:02d} {hms}"
    raise ValueError(shape)


def _shift_one(m: re.Match, seconds: int, year: int, upclock: bool) -> str:
    shape = m.lastgroup
    if shape == "epoch":
        v = m.group("ev")
        scale = {10: 1, 13: 1000, 16: 1_000_000}[len(v)]
        return m.group("ek") + str(int(v) + seconds * scale)
    if shape == "prom":
        return str(int(m.group("pv")) + seconds * 1000)
    if shape == "upclock":
        if not upclock:
            return m.group(0)
        t = datetime(2000, 1, 1) + timedelta(hours=int(m.group("ut")[:2]), minutes=int(m.group("ut")[3:5]),
                                             seconds=int(m.group("ut")[6:]) + seconds)
        return t.strftime("%H:%M:%S")
    if shape == "ctime":   # (a build date is written like `date`)
        text, at = m.string, m.start()
        if BUILD.search(text[text.rfind("\n", 0, at) + 1:at]):
            return m.group(0)
    _, t = parse(m, year)
    return _render(m, t + timedelta(seconds=seconds))


def shift(text: str, seconds: int, year: int, upclock: bool = True) -> str:
    """`text` with every time in it moved by `seconds` (year-less ones read in `year`)."""
    if not seconds:
        return text
    return SHAPES.sub(lambda m: _shift_one(m, seconds, year, upclock), text)


def times(text: str, year: int) -> list[tuple[str, str, datetime | None]]:
    """(shape, text, time) of every time shape in `text`."""
    out = []
    for m in SHAPES.finditer(text):
        shape, t = parse(m, year)
        out.append((shape, m.group(0), t))
    return out


def clock_of(line: str, year: int) -> datetime | None:
    """The first wall-clock time a line states (its head's, as a rule; seconds since the epoch at its head, as
    UCX prints them, too)."""
    for m in SHAPES.finditer(line):
        if m.lastgroup in CLOCK_SHAPES:
            return parse(m, year)[1]
        if m.lastgroup == "epoch" and m.start() == 0:
            v = m.group("ev")
            return datetime(1970, 1, 1) + timedelta(seconds=int(v) / {10: 1, 13: 1000, 16: 1_000_000}[len(v)])
    return None


def year_of(texts) -> int | None:
    """The year most of the dated times in `texts` carry (not a build date: a kernel's or a driver's banner)."""
    years = Counter()
    for text in texts:
        for m in YEARS.finditer(text):
            start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
            if not BUILD.search(text, start, len(text) if end < 0 else end):
                years[int(next(g for g in m.groups() if g))] += 1
    return years.most_common(1)[0][0] if years else None
