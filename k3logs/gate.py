"""The one gate out: every text that leaves the process passes here, once, as the last step before it is
written. Secrets are redacted (patterns/secrets.toml, applied by k3logs.redact) over whole values, then texts
are cut to the lengths the output declares, and nothing is cut or re-read after. No character from a bundle
reaches a terminal as a control sequence. One door per kind of output:

- `release`: a report, a diff, a capture check's result, scan and sniff rows (dataclasses, dicts, lists);
- `EventGate`: the event table, batch after batch of each file in line order (a secret's value may be on the
  line before, a key's body between its BEGIN and END lines);
- `message`: an error, note or warning for the terminal, on one line;
- `collected`: a file `collect` writes, whole.

Before the gate, bundle text flows through the stages as it is. A stage that cuts a piece of bundle text into a
description of its own (a sniff reason, a prompt's window) redacts the piece whole first (`redact.clip`): a cut
can remove what a rule needs to see; the gate redacts the whole output again."""
from __future__ import annotations

from typing import TypeVar

import polars as pl

from . import redact
from .redact import json_safe, shown, visible  # noqa: F401  (the character doors, for the writers)
from .schema import EXC_MESSAGES, FILE, MESSAGE, NODE, the_one
from .settings import Settings

T = TypeVar("T")


def release(value: T, settings: Settings | None = None, limit: int | None = None) -> T:
    """A copy of `value` (dataclasses, dicts, lists, strings) with every string redacted whole, unless the
    settings say not to, then cut where its dataclass fields declare (`metadata={"clip": n}`); a string
    to `limit` characters."""
    return redact.obj(value, settings.redact if settings else True, limit)


def message(text: str, limit: int | None = None) -> str:
    """An error, note or warning on one line: always redacted (it may quote the bundle whatever the
    settings), then cut to `limit` characters, its control characters shown."""
    one = " ".join(visible(redact.text(text)).split())
    return one if limit is None else redact.cut(one, limit)


def collected(text: str, redacting: bool = True) -> str:
    """A file `collect` writes: the multi-line rules over the whole text, then every rule line by line."""
    if not redacting:
        return text
    lines = pl.Series("text", redact.block(text).split("\n"))
    return "\n".join(redact.series(lines).to_list())  # vectorised: 30x faster than a rule pass per line


class EventGate:
    """The event table's door: the batches of each file in line order, as `events` writes them. The text,
    file and node names and exception messages come from the bundle and are redacted; the rest is
    numbers, names of formats, and what k3logs derived."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._lines = redact.LineStream() if settings is None or settings.redact else None

    def release(self, table: pl.DataFrame) -> pl.DataFrame:
        if self._lines is None or table.is_empty():
            return table
        file = the_one(table[FILE])
        table = table.with_columns(self._lines.series(table[MESSAGE], file if isinstance(file, str) else None),
                                   redact.distinct(table[FILE]), redact.distinct(table[NODE]))
        if table[EXC_MESSAGES].null_count() < table.height:  # (only folded tracebacks have them)
            table = table.with_columns(pl.col(EXC_MESSAGES).list.eval(redact.expr(pl.element())))
        return table
