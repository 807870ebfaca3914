"""The one gate out: secrets never reach an output. The rules in patterns/secrets.toml apply to event tables
(vectorised, file by file in line order: `LineStream`), to every string of a report and to whatever else
leaves the process (errors, sniff and scan rows). Text is redacted whole and only then cut (`clip`, and the
lengths a report's fields declare, applied by `report`): a cut can remove what a rule needs to see (the '@'
of a URL's password, the end of a token)."""
from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .errors import CatalogueError, SourceLocation
from .resources import data_dir
from .schema import MIXED, the_one


@dataclass(frozen=True)
class Rule:
    id: str
    regex: str
    replace: str
    match: tuple[str, ...]
    no_match: tuple[str, ...]
    multiline: bool = False  # also applied to whole texts (block): its secret may sit on the next line
    needles: tuple[str, ...] = ()  # every match contains one of them (ignoring case); none: no shortcut
    between: tuple[str, str] | None = None  # (begin, end): every line between two such lines is a secret

    @property
    def python(self) -> tuple[re.Pattern, str]:
        return re.compile(self.regex), re.sub(r"\$\{(\d+)\}", r"\\g<\1>", self.replace)


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    return load_rules(data_dir("patterns") / "secrets.toml")


def load_rules(path: Path) -> tuple[Rule, ...]:
    """The rules of a secrets file (patterns/secrets.toml), or CatalogueError."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        out = tuple(Rule(d["id"], d.get("regex", ""), d["replace"], tuple(d.get("match", [])),
                         tuple(d.get("no_match", [])), bool(d.get("multiline", False)), tuple(d.get("needles", [])),
                         tuple(d["between"]) if "between" in d else None)
                    for d in data["secret"])
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise CatalogueError(f"secrets rules are invalid: {e}", source=SourceLocation(str(path))) from e
    for r in out:
        if bool(r.regex) == (r.between is not None) or (r.between is not None and len(r.between) != 2):
            raise CatalogueError(f"secrets rule {r.id!r} needs either a regex or a pair of `between` regexes",
                                 source=SourceLocation(str(path)))
    load_excerpt_line(path)  # (the same file: checked with it)
    return out


@dataclass(frozen=True)
class ExcerptLine:
    """What an excerpt's line that is nothing but key material becomes (secrets.toml [excerpt_line])."""
    regex: str
    replace: str
    match: tuple[str, ...]
    no_match: tuple[str, ...]


@lru_cache(maxsize=1)
def excerpt_line() -> ExcerptLine:
    return load_excerpt_line(data_dir("patterns") / "secrets.toml")


def load_excerpt_line(path: Path) -> ExcerptLine:
    """The [excerpt_line] table of a secrets file, or CatalogueError."""
    try:
        d = tomllib.loads(path.read_text(encoding="utf-8"))["excerpt_line"]
        out = ExcerptLine(d["regex"], d["replace"], tuple(d.get("match", [])), tuple(d.get("no_match", [])))
        re.compile(out.regex)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, re.error) as e:
        raise CatalogueError(f"secrets [excerpt_line] is invalid: {e}", source=SourceLocation(str(path))) from e
    return out


@lru_cache(maxsize=1)
def _key_material() -> re.Pattern:
    return re.compile(excerpt_line().regex)


@lru_cache(maxsize=1)
def line_rules() -> tuple[Rule, ...]:
    """The rules that apply to one line at a time (the others need the lines around it)."""
    return tuple(r for r in rules() if r.between is None)


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[re.Pattern, str], ...]:
    return tuple(r.python for r in line_rules())


@lru_cache(maxsize=1)
def _between() -> tuple[tuple[re.Pattern, re.Pattern, str], ...]:
    return tuple((re.compile(r.between[0]), re.compile(r.between[1]), r.replace)
                 for r in rules() if r.between is not None)


@lru_cache(maxsize=8192)  # (a report repeats its strings: file names, nodes, the same lines in several places)
def text(value: str) -> str:
    """One string with every secret replaced."""
    for pattern, repl in _compiled():
        value = pattern.sub(repl, value)  # an alternative's unmatched group is replaced by nothing
    return value


def block(value: str) -> str:
    """A whole text (a dump read whole) with the secrets that span lines replaced: the multiline rules and
    the lines between a begin and an end line (every rule applies line by line to whatever is output;
    running them all over megabytes costs seconds). As many lines come out as went in."""
    for rule, (pattern, repl) in zip(line_rules(), _compiled()):
        if rule.multiline:
            value = pattern.sub(repl, value)
    if any(b.search(value) for b, _, _ in _between()):
        value = "\n".join(_between_lines(value.split("\n")))
    return value


def _between_lines(lines: list[str]) -> list[str]:
    for begin, end, repl in _between():
        inside = False
        for i, ln in enumerate(lines):
            if inside and end.search(ln):
                inside = False
            elif inside:
                lines[i] = repl
            elif begin.search(ln) and not end.search(ln):
                inside = True
    return lines


def lines(values: list[str]) -> list[str]:
    """Consecutive lines of one file (an excerpt): every rule, those that span lines included; a line that
    is nothing but key material is not shown at all."""
    key, hidden = _key_material(), excerpt_line().replace
    if any("\n" in v for v in values):  # (not physical lines: each on its own)
        out = [text(v) for v in values]
    else:
        out = [text(v) for v in block("\n".join(values)).split("\n")]
    return [hidden if key.match(v) else r for v, r in zip(values, out)]


REDACTED = "[redacted]"


def clip(value: str, n: int) -> str:
    """`value` cut to at most `n` characters for display ('…' where it was cut), redacted first: a cut may
    remove the part a rule needs to recognise a secret. Always redacts (a cut description is never raw)."""
    return cut(text(value), n)


def cut(value: str, n: int) -> str:
    """`value` cut to at most `n` characters, '…' marking the cut, never inside a '[redacted]'."""
    if len(value) <= n:
        return value
    head = value[: max(0, n - 1)]
    start = head.rfind("[")
    if start >= 0 and REDACTED.startswith(head[start:]) and head[start:] != REDACTED:
        head = head[:start]
    return head + "…"


def expr(e: pl.Expr) -> pl.Expr:
    """The line rules, as a polars expression over a string column."""
    for r in line_rules():
        e = e.str.replace_all(r.regex, r.replace)
    return e


@lru_cache(maxsize=1)
def _any_rule() -> str:
    """One regex that matches wherever some line rule would (inline flags stay inside each group)."""
    return "|".join(f"(?:{r.regex})" for r in line_rules())


@lru_cache(maxsize=1)
def _any_needle() -> str | None:
    """One regex that matches wherever a rule's needle is, in any case (None: a rule has no needles). Its
    case folding is the rules' own (the Kelvin sign is a k), and polars keeps it compiled: an Aho-Corasick
    search of the same literals is built anew on every call, and costs more on a batch."""
    if not all(r.needles for r in rules()):
        return None
    return "(?i)" + "|".join(re.escape(n) for n in sorted({n for r in rules() for n in r.needles}))


# the only letters outside ASCII that Unicode's simple case folding (the rules' (?i)) takes to ASCII ones:
# the Kelvin sign (k) and the long s (s)
FOLDS_TO_ASCII = ("\u212a", "\u017f")


@lru_cache(maxsize=1)
def _lowercase_needles() -> str | None:
    """The needles as one case-sensitive regex, for text whose ASCII letters are lowered (None: a rule has no
    needles, or a needle is not ASCII)."""
    needles = {n.lower() for r in rules() for n in r.needles}
    if not all(r.needles for r in rules()) or not all(n.isascii() for n in needles):
        return None
    return "|".join(re.escape(n) for n in sorted(needles))


def needle_rows(s: pl.Series) -> pl.Series:
    """Indices of the rows that may hold a secret: those with a needle, in any case. The needles are
    searched for as they are in the text with its ASCII letters lowered (by arrow), plus the rows that hold
    a letter folding to an ASCII one: 2 to 3 times faster than a case-insensitive search, missing none of
    the rows it finds."""
    if _any_needle() is None:
        return pl.int_range(len(s), dtype=pl.UInt32, eager=True)
    if (needles := _lowercase_needles()) is None:
        return s.str.contains(_any_needle()).fill_null(False).arg_true()
    # (made string views by arrow: polars' own conversion would hold the GIL)
    lowered = pl.from_arrow(pc.ascii_lower(s.to_arrow()).cast(pa.string_view()))
    assert isinstance(lowered, pl.Series)
    return pl.DataFrame([lowered.alias("lowered"), s.alias("text")]).select(_needle_hits(needles)).to_series()


@lru_cache(maxsize=1)
def _needle_hits(needles: str) -> pl.Expr:
    """needle_rows' query (built once: building it costs as much as running it on a batch)."""
    return ((pl.col("lowered").str.contains(needles) | pl.col("text").str.contains_any(list(FOLDS_TO_ASCII)))
            .fill_null(False).arg_true())


def series(s: pl.Series) -> pl.Series:
    """`expr` over a string Series, faster: the rows with a needle, then those that hold a secret; only
    they go through every rule (a row no rule matches is left as it is by all of them)."""
    rows = needle_rows(s)
    if rows.is_empty():
        return s
    hits = rows.filter(s.gather(rows).str.contains(_any_rule()).fill_null(False))
    if hits.is_empty():
        return s
    fixed = s.gather(hits).to_frame().select(expr(pl.col(s.name))).to_series()
    return s.clone().scatter(hits, fixed)


def distinct(s: pl.Series) -> pl.Series:
    """`series` for a column of few distinct values (file and node names): each value is redacted once,
    not once per row (a batch of `events` holds one file, often one node: that value, in Python)."""
    if (one := the_one(s)) is not MIXED and one is not None:
        fixed_one = text(one)
        return s if fixed_one == one else pl.repeat(fixed_one, len(s), dtype=pl.String, eager=True).alias(s.name)
    values = s.unique()
    fixed = series(values)
    return s if fixed.equals(values) else s.replace(values, fixed)


def obj(value, enabled: bool = True, clip_at: int | None = None, as_lines: bool = False):
    """A copy of a report (dataclasses, dicts, lists) with every string redacted (unless not `enabled`),
    then cut where its dataclass field says (`metadata={"clip": n}`); a field marked `{"lines": True}`
    holds consecutive lines of one file, redacted together (a secret's value may be on the next line)."""
    if isinstance(value, str):
        value = text(value) if enabled else value
        return value if clip_at is None else cut(value, clip_at)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{
            f.name: obj(getattr(value, f.name), enabled, f.metadata.get("clip"), f.metadata.get("lines", False))
            for f in dataclasses.fields(value) if f.init})
    if isinstance(value, dict):
        return {k: obj(v, enabled) for k, v in value.items()}
    if isinstance(value, list):
        if as_lines and enabled and all(isinstance(v, str) for v in value):
            return [v if clip_at is None else cut(v, clip_at) for v in lines(value)]
        return [obj(v, enabled, clip_at) for v in value]
    if isinstance(value, tuple):
        return tuple(obj(v, enabled, clip_at) for v in value)
    return value


class LineStream:
    """The event table's text, file after file, batch after batch in line order, with what only the lines
    before show: a line between the begin and end lines of a key (a PEM body), the value on the line after
    its option or name (`--api-key \\`, then the key). Rows that need this are few; they are found with
    vectorised searches, and only they are handled in Python."""

    def __init__(self) -> None:
        self._file: str | None = None
        self._prev: str | None = None     # the raw text of the file's last row so far
        self._inside: list[bool] = [False] * len(_between())

    def series(self, s: pl.Series, file: str | None) -> pl.Series:
        """`s` (one batch of one file's rows, in order) with every secret replaced."""
        if file != self._file:
            self._file, self._prev, self._inside = file, None, [False] * len(_between())
        out = series(s)
        if s.is_empty():
            return out
        fixes: dict[int, str] = {}
        self._next_line_values(s, fixes)
        self._between_rows(s, fixes)
        self._prev = s[-1]
        if not fixes:
            return out
        idx = sorted(fixes)
        return out.scatter(idx, [fixes[i] for i in idx])

    def _next_line_values(self, s: pl.Series, fixes: dict[int, str]) -> None:
        multi = [r for r in line_rules() if r.multiline]
        if not multi:
            return
        prev = s.shift(1, fill_value=self._prev)
        joined = (prev.fill_null("") + "\n" + s.fill_null(""))
        hit = joined.str.contains("|".join(f"(?:{r.regex})" for r in multi)).fill_null(False) & prev.is_not_null()
        for i in hit.arg_true().to_list():
            before, now = prev[i], s[i]
            fixed = block(f"{before}\n{now}").split("\n", 1)[1]
            if fixed != now:
                fixes[i] = text(fixed)

    def _between_rows(self, s: pl.Series, fixes: dict[int, str]) -> None:
        for k, (begin, end, repl) in enumerate(_between()):
            b = s.str.contains(begin.pattern).fill_null(False)
            if not self._inside[k] and not b.any():
                continue
            e = s.str.contains(end.pattern).fill_null(False)
            # a row is inside while the last begin line before it is later than the last end line
            idx = pl.int_range(len(s), eager=True)
            opened = pl.select(pl.when(b & ~e).then(idx)).to_series()
            closed = pl.select(pl.when(e).then(idx)).to_series()
            last_open = opened.shift(1).forward_fill()
            if self._inside[k]:  # the batch before ended inside
                last_open = last_open.fill_null(-1)
            last_close = closed.shift(1).forward_fill()
            body = (last_open.is_not_null() & (last_close.is_null() | (last_open > last_close)) & ~e)
            for i in body.arg_true().to_list():
                fixes[i] = repl
            lo = opened.max() if opened.max() is not None else (-1 if self._inside[k] else None)
            hi = closed.max()
            self._inside[k] = lo is not None and (hi is None or lo > hi)


# ------------------------------------------------------------------------------------------------------
# characters: nothing a bundle holds may drive the terminal that shows an output, or hide what it says
# ------------------------------------------------------------------------------------------------------
# control characters but tab and newline (C0, DEL, C1: terminal escapes, OSC 52 clipboard writes, DCS),
# and the marks that reorder what follows them (bidi overrides and isolates: text that reads otherwise)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(value: str) -> str:
    """Text safe to print: control characters shown as \\xNN, bidi marks as [U+202E]."""
    if _CONTROL.search(value):
        value = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)
    if _BIDI.search(value):
        value = _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", value)
    return value


def json_safe(value: str) -> str:
    """JSON text (as json.dumps writes it, which escapes C0 itself) with DEL, C1, line separators and bidi
    marks escaped as \\uXXXX too: the same data, nothing raw for a terminal to act on."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def shown(value: str, fmt: str = "text") -> str:
    """Any output text as it may leave the process (stdout or a file): JSON escaped, the rest visible."""
    return json_safe(value) if fmt == "json" else visible(value)
