"""Where the events of a lifecycle happened: a point (time, file, line, its place in its file's time order), the
process a line is about, and rows in time order."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl


# the sources whose lines are about their whole node, never a process of it (formats.toml's `source`)
NODE_SOURCES = frozenset({"kernel", "bmc"})


@dataclass(frozen=True)
class At:
    ts: datetime | None
    file: str
    line: int
    seq: int | None = None   # its place in its file's time order (clock.in_file_order), if not its line

    def before(self, ts: datetime | None, file: str, place: int) -> bool:
        """This point comes before an event at (ts, file, place in its file): by place in the same file, else by
        time."""
        if file == self.file:
            return (self.line if self.seq is None else self.seq) < place
        return self.ts is not None and ts is not None and self.ts < ts

    def after(self, ts: datetime | None, file: str, place: int) -> bool:
        """This point comes after an event at (ts, file, place in its file): by place in the same file, else by
        time."""
        if file == self.file:
            return (self.line if self.seq is None else self.seq) > place
        return self.ts is not None and ts is not None and self.ts > ts


def points_by_key(rows: pl.DataFrame) -> dict:
    """(node, attempt) -> the rows' places, in time order."""
    out: dict = {}
    for node, attempt, ts, file, line, seq in in_time_order(rows, "node", "attempt", "ts", "file", "line", "seq"):
        out.setdefault((node, attempt), []).append(At(ts, file, line, seq))
    return out


def first_points(rows: pl.DataFrame) -> dict:
    """(node, attempt) -> the first row's place."""
    return {k: ats[0] for k, ats in points_by_key(rows).items()}


def in_time_order(frame: pl.DataFrame, *cols: str):
    """The rows of `frame`'s `cols` in time order, as tuples (column lists zipped: a bundle has thousands of
    progress lines, and polars' row iteration costs ten times more)."""
    frame = frame.sort(["ts", "file", "seq"], nulls_last=True)
    return zip(*(frame[c].to_list() for c in cols))


def who(source: str | None, pid: int | None, ident: str | None, file: str, task: int | None = None) -> tuple:
    """The process a line is about, as precisely as the line says: its pid, else the unit or container that
    logged it (journald identifier, compose service), else the task of a job's output that printed it (Slurm's
    `srun -l` label: one file holds every task's lines), else its log file; a kernel line, or a BMC's event
    record: its whole node."""
    if source in NODE_SOURCES:
        return ()
    if pid is not None:
        return ("pid", pid)
    if ident:
        return ("ident", ident)
    return ("task", file, task) if task is not None else ("file", file)
