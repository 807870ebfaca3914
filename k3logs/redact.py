"""Secrets never reach an output: the rules in patterns/secrets.toml, applied to event tables (vectorised)
and to every string of a report or an error message."""
from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

import polars as pl

from .errors import CatalogueError, SourceLocation
from .resources import data_dir


@dataclass(frozen=True)
class Rule:
    id: str
    regex: str
    replace: str
    match: tuple[str, ...]
    no_match: tuple[str, ...]
    multiline: bool = False  # also applied to whole texts (block): its secret may sit on the next line

    @property
    def python(self) -> tuple[re.Pattern, str]:
        return re.compile(self.regex), re.sub(r"\$\{(\d+)\}", r"\\g<\1>", self.replace)


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    path = data_dir("patterns") / "secrets.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return tuple(Rule(d["id"], d["regex"], d["replace"], tuple(d.get("match", [])), tuple(d.get("no_match", [])),
                          bool(d.get("multiline", False)))
                     for d in data["secret"])
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise CatalogueError(f"secrets rules are invalid: {e}", source=SourceLocation(str(path))) from e


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[re.Pattern, str], ...]:
    return tuple(r.python for r in rules())


def text(value: str) -> str:
    """One string with every secret replaced."""
    for pattern, repl in _compiled():
        value = pattern.sub(repl, value)  # an alternative's unmatched group is replaced by nothing
    return value


def block(value: str) -> str:
    """A whole text (a dump read whole) with the secrets that span lines replaced: the multiline rules only
    (every rule applies line by line to whatever is output; running them all over megabytes costs seconds)."""
    for rule, (pattern, repl) in zip(rules(), _compiled()):
        if rule.multiline:
            value = pattern.sub(repl, value)
    return value


def expr(e: pl.Expr) -> pl.Expr:
    """The same, as a polars expression over a string column."""
    for r in rules():
        e = e.str.replace_all(r.regex, r.replace)
    return e


def obj(value):
    """A copy of a report (dataclasses, dicts, lists) with every string redacted."""
    if isinstance(value, str):
        return text(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: obj(getattr(value, f.name))
                                             for f in dataclasses.fields(value) if f.init})
    if isinstance(value, dict):
        return {k: obj(v) for k, v in value.items()}
    if isinstance(value, list):
        return [obj(v) for v in value]
    if isinstance(value, tuple):
        return tuple(obj(v) for v in value)
    return value
