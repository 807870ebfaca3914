"""Reading patterns/ files: TOML with the line of every table and key (tomllib gives no positions), one issue model
(file:line, message) and one regex check for every loader."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import polars as pl

from k3logs.errors import CatalogueError, SourceLocation

from .cache import parse_toml


@dataclass(frozen=True)
class Issue:
    """One problem found in the catalogue."""

    severity: str  # error | warning
    code: str
    message: str
    location: SourceLocation

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message} [{self.code}]"


class Problems(list):
    """The issues a loader finds in one pattern file, each an error at its file and line."""

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code

    def add(self, where: SourceLocation, message: str) -> None:
        self.append(Issue("error", self.code, message, where))


# --------------------------------------------------------------------------------------------
# locating things in TOML text (tomllib gives no positions)
# --------------------------------------------------------------------------------------------
def table_starts(text: str, header: str) -> list[int]:
    """1-based line numbers of every `[[header]]` line, in order."""
    pat = re.compile(r"^\s*\[\[\s*" + re.escape(header) + r"\s*\]\]\s*(#.*)?$")
    return [i + 1 for i, ln in enumerate(text.splitlines()) if pat.match(ln)]


def key_line(text: str, start: int, end: int | None, key: str) -> int:
    lines = text.splitlines()
    pat = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
    for i in range(start - 1, min(end or len(lines), len(lines))):
        if pat.match(lines[i]):
            return i + 1
    return start


def _toml_error_line(err: tomllib.TOMLDecodeError) -> int | None:
    m = re.search(r"line (\d+)", str(err))
    return int(m.group(1)) if m else None


def read_toml(path: Path, issues: list[Issue]) -> tuple[dict, str] | None:
    """A pattern file's data and text, or None with the problem (file:line) added to `issues`."""
    try:
        text = path.read_text(encoding="utf-8")
        return ascii_regexes(parse_toml(text)), text
    except tomllib.TOMLDecodeError as e:
        issues.append(Issue("error", "toml", f"not valid TOML: {e}", SourceLocation(str(path), _toml_error_line(e))))
    except (OSError, UnicodeDecodeError) as e:
        issues.append(Issue("error", "io", f"cannot read: {e}", SourceLocation(str(path))))
    return None


# Perl classes as the ASCII classes they stand for in a log line (outside brackets, inside them). Unicode's take the
# Rust engine about three times as long to compile, and polars keeps only 32 compiled regexes a thread: most of a
# run's regexes are compiled again each time they are used (#23).
ASCII_CLASS = {"d": ("[0-9]", "0-9"), "w": ("[0-9A-Za-z_]", "0-9A-Za-z_"), "s": (r"[\t\n\x0B\f\r ]", r"\t\n\x0B\f\r "),
               "D": ("[^0-9]", None), "W": ("[^0-9A-Za-z_]", None), "S": (r"[^\t\n\x0B\f\r ]", None)}


def ascii_classes(regex: str) -> str:
    """`regex` with \\d \\w \\s (and, outside brackets, \\D \\W \\S) written as ASCII classes: the same
    match in both engines (Python `re` and Rust) on the ASCII text of log heads and messages."""
    out, i, in_class = [], 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\" and i + 1 < len(regex):
            as_ascii = ASCII_CLASS.get(regex[i + 1], (None, None))[in_class]
            out.append(as_ascii or regex[i:i + 2])
            i += 2
            continue
        if in_class and regex.startswith("[:", i):  # a POSIX class inside brackets: [[:digit:]]
            end = regex.find(":]", i + 2)
            end = len(regex) if end < 0 else end + 2
            out.append(regex[i:end])
            i = end
            continue
        if not in_class and c == "[":
            j = i + 1 + regex.startswith("^", i + 1)
            j += regex.startswith("]", j)  # a `]` first in brackets is itself
            out.append(regex[i:j])
            i, in_class = j, True
            continue
        in_class = in_class and c != "]"
        out.append(c)
        i += 1
    return "".join(out)


def ascii_regexes(data):
    """`data` (parsed TOML) with every `regex` value's Perl classes as ASCII classes (ascii_classes)."""
    if isinstance(data, dict):
        return {k: ascii_classes(v) if k == "regex" and isinstance(v, str) else ascii_regexes(v)
                for k, v in data.items()}
    if isinstance(data, list):
        return [ascii_regexes(v) for v in data]
    return data


def read_toml_or_raise(path: Path, what: str) -> tuple[dict, str]:
    """A pattern file's data and text; CatalogueError (`what`, file:line) when it cannot be read."""
    issues: list[Issue] = []
    got = read_toml(path, issues)
    if got is None:
        raise CatalogueError(f"{what}: {issues[0].message}", source=issues[0].location)
    return got


def regex_error(pattern: str) -> str | None:
    """The Rust regex engine's complaint about `pattern`, or None if it compiles."""
    try:
        pl.Series([""], dtype=pl.String).str.contains(pattern)
    except Exception as e:  # polars raises ComputeError with the engine's message, caret and reason
        lines = str(e).splitlines()
        reason = next((ln[len("error: "):] for ln in lines if ln.startswith("error: ")), lines[0] if lines else "")
        caret = next((ln for ln in lines if ln.strip() and set(ln.strip()) == {"^"}), None)
        where = f" at column {len(caret) - len(caret.lstrip()) - 3}" if caret else ""  # the engine indents by 4
        return f"{reason}{where}"[:300]
    return None


def holds_literal(literals: tuple[str, ...], text: str, any_case: bool = False) -> bool:
    if any_case:
        text = text.lower()
        return any(lit.lower() in text for lit in literals)
    return any(lit in text for lit in literals)


class Prefiltered:
    """A regex (its text, or compiled) with the literals a line must hold for it to be tried."""

    prefilter: tuple[str, ...]
    regex: str | re.Pattern

    @cached_property
    def case_insensitive(self) -> bool:
        """A regex marked (?i) matches whatever the case: its prefilter literals must too."""
        if isinstance(self.regex, re.Pattern):
            return bool(self.regex.flags & re.IGNORECASE)
        return self.regex.startswith("(?i)")

    @cached_property
    def _folded(self) -> tuple[str, ...]:
        return tuple(lit.lower() for lit in self.prefilter)

    def prefilter_in(self, text: str) -> bool:
        """Whether `text` holds one of the prefilter literals (in any case, for a case-insensitive regex)."""
        if self.case_insensitive:   # (asked of every line of every dump: the flags and the folded literals once)
            text = text.lower()
            return any(lit in text for lit in self._folded)
        return any(lit in text for lit in self.prefilter)


def rust_line_problem(d: dict) -> str | None:
    """A regex read with the Rust engine (polars) must compile there, and there give every sample's fields
    and match no near miss."""
    if (err := regex_error(d["regex"])) is not None:
        return f"regex does not compile in the Rust engine: {err}"
    for line, fields in samples_of(d):
        got = pl.Series([line]).str.extract_groups(d["regex"])[0] if fields else {}
        if not pl.Series([line]).str.contains(d["regex"])[0]:
            return f"sample {line[:60]!r} does not match"
        if any(got.get(k) != v for k, v in fields):
            return f"sample {line[:60]!r} gives {got}, not {dict(fields)}"
    near = [n for n in d.get("no_match", []) if pl.Series([n]).str.contains(d["regex"])[0]]
    return f"near miss {near[0][:60]!r} matches" if near else None


def samples_of(d: dict, key: str = "line") -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    out = []
    for s in d.get("samples", []):
        if isinstance(s, str):
            out.append((s, ()))
        else:
            out.append((str(s.get(key, "")), tuple(sorted((str(k), str(v)) for k, v in (s.get("fields") or {}).items()))))
    return tuple(out)
