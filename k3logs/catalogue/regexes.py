"""Named regexes as data: the `[[regex]]` tables of a pattern file (patterns/ingest.toml, facts.toml, ...), each
with the samples it must match (and the groups they give) and the near misses it must not, checked on load. Code
names a regex and never writes one: `RX = Regexes("diagnose.toml")` at the top of a module, `RX["host_name"]`
where it is used; the file is read on first use, once a process (importing a module reads nothing). A regex
marked `rust = true` is also run by polars (its `.pattern`, so flags go inline): it is checked there too."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from k3logs.errors import CatalogueError, SourceLocation
from k3logs.resources import data_dir

from .read import Problems, read_toml_or_raise, rust_line_problem, samples_of, table_starts

FLAGS = {"multiline": re.M, "ignorecase": re.I, "verbose": re.X, "dotall": re.S}
USES = ("search", "match", "fullmatch")  # how the code applies it: the samples are tried the same way
KEYS = {"name", "regex", "flags", "use", "rust", "samples", "no_match", "why"}


def load_regexes(path: Path) -> dict[str, re.Pattern]:
    """The compiled `[[regex]]` tables of a pattern file by name, their samples replayed; CatalogueError
    listing every problem (a regex that does not compile, a sample it does not match or whose groups differ,
    a near miss it matches, a name given twice, an unknown key) at its file and line."""
    data, text = read_toml_or_raise(path, f"{path.name} cannot be read")
    problems = Problems("regex")
    out: dict[str, re.Pattern] = {}
    tables = data.get("regex", [])
    starts = table_starts(text, "regex")
    for i, d in enumerate(tables):
        where = SourceLocation(str(path), starts[i] if i < len(starts) else None)
        if (rx := _one(d, where, problems)) is None:
            continue
        if d["name"] in out:
            problems.add(where, f"regex {d['name']!r} is defined twice")
        out[d["name"]] = rx
    if problems:
        raise CatalogueError(f"{len(problems)} problem(s) in {path}: {problems[0]}", problems)
    return out


def _one(d: dict, where: SourceLocation, problems: Problems) -> re.Pattern | None:
    name = d.get("name")
    if not isinstance(name, str) or not isinstance(d.get("regex"), str):
        problems.add(where, "a [[regex]] needs a `name` and a `regex` (strings)")
        return None
    if unknown := set(d) - KEYS:
        problems.add(where, f"regex {name!r}: unknown key(s) {', '.join(sorted(unknown))}")
    flags = 0
    for f in d.get("flags", []):
        if f not in FLAGS:
            problems.add(where, f"regex {name!r}: unknown flag {f!r} (one of {', '.join(FLAGS)})")
        flags |= FLAGS.get(f, 0)
    use = d.get("use", "search")
    if use not in USES:
        problems.add(where, f"regex {name!r}: `use` is one of {', '.join(USES)}, not {use!r}")
        return None
    try:
        rx = re.compile(d["regex"], flags)
    except re.error as e:
        problems.add(where, f"regex {name!r} does not compile: {e}")
        return None
    samples = samples_of(d)
    if not samples:
        problems.add(where, f"regex {name!r} has no sample: each regex shows one line it matches")
    for line, fields in samples:
        m = getattr(rx, use)(line)
        if m is None:
            problems.add(where, f"regex {name!r}: sample {line[:60]!r} does not match ({use})")
        elif any(m.group(k) != v for k, v in fields if k in rx.groupindex) or \
                any(k not in rx.groupindex for k, _ in fields):
            problems.add(where, f"regex {name!r}: sample {line[:60]!r} gives {m.groupdict()}, not {dict(fields)}")
    for near in d.get("no_match", []):
        if getattr(rx, use)(near) is not None:
            problems.add(where, f"regex {name!r}: near miss {near[:60]!r} matches")
    # read by polars too (`.pattern`): it must compile there and say the same of the samples
    if d.get("rust") and flags:
        problems.add(where, f"regex {name!r} (rust = true): polars takes no `flags`; write them inline, (?i)")
    elif d.get("rust") and (problem := rust_line_problem(d)):
        problems.add(where, f"regex {name!r} (rust = true): {problem}")
    return rx


@lru_cache(maxsize=None)
def builtin_data(file: str) -> dict:
    """The built-in pattern file as written (read once a process)."""
    data, _ = read_toml_or_raise(data_dir("patterns") / file, f"{file} cannot be read")
    return data


@lru_cache(maxsize=None)
def builtin_tables(file: str) -> dict[str, dict]:
    """The built-in file's `[[regex]]` tables by name, as written. They are compiled one by one when first
    used, and their samples replayed by `k3logs patterns check` (and so by CI), not on every run: start-up
    is paid by every analysis (#23)."""
    return {d["name"]: d for d in builtin_data(file).get("regex", []) if isinstance(d, dict) and "name" in d}


@lru_cache(maxsize=None)
def builtin_regex(file: str, name: str) -> re.Pattern:
    try:
        d = builtin_tables(file)[name]
    except KeyError:
        raise KeyError(f"patterns/{file} has no [[regex]] named {name!r}") from None
    flags = 0
    for f in d.get("flags", []):
        flags |= FLAGS[f]
    return re.compile(d["regex"], flags)


class Regexes:
    """The named regexes of one built-in pattern file, each compiled when first used."""

    def __init__(self, file: str) -> None:
        self.file = file

    def __getitem__(self, name: str) -> re.Pattern:
        return builtin_regex(self.file, name)
