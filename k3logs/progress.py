"""Progress on stderr: a one-line bar redrawn in place when stderr is a terminal, nothing otherwise (pipes,
CI, tests). Stdout only ever carries results."""
from __future__ import annotations

import sys
import time
from typing import TextIO

REDRAW_S = 0.2  # at most five redraws a second


class NullDisplay:
    """Shows nothing; the default of the library."""

    def start(self, total: int, total_bytes: int) -> None:
        pass

    def advance(self, nbytes: int, worked: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


class Bar(NullDisplay):
    """`scan  37/200 bundles  110/600 MB  ETA 2m10s`. The ETA comes from the bytes actually analysed, so
    bundles skipped as unchanged do not make it optimistic."""

    def __init__(self, label: str, stream: TextIO):
        self.label, self.stream = label, stream
        self.total = self.total_bytes = self.done = self.done_bytes = self.worked_bytes = 0
        self.t0 = self.drawn = 0.0

    def start(self, total: int, total_bytes: int) -> None:
        self.total, self.total_bytes, self.t0 = total, total_bytes, time.monotonic()
        self._draw(force=True)

    def advance(self, nbytes: int, worked: bool = True) -> None:
        self.done += 1
        self.done_bytes += nbytes
        self.worked_bytes += nbytes if worked else 0
        self._draw(force=self.done == self.total)

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.drawn < REDRAW_S:
            return
        self.drawn = now
        eta = "?"
        if self.worked_bytes:
            left = (now - self.t0) / self.worked_bytes * (self.total_bytes - self.done_bytes)
            eta = f"{int(left // 60)}m{int(left % 60):02d}s"
        mb = 1e6
        self.stream.write(f"\r{self.label}  {self.done}/{self.total} bundles  {self.done_bytes / mb:.0f}/"
                          f"{self.total_bytes / mb:.0f} MB  ETA {eta}   ")
        self.stream.flush()


def for_stderr(label: str) -> NullDisplay:
    """A Bar on stderr when it is a terminal, else a NullDisplay."""
    stream = sys.stderr
    return Bar(label, stream) if stream.isatty() else NullDisplay()
