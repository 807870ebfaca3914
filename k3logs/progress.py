"""Progress on stderr: a one-line bar redrawn in place when stderr is a terminal, nothing otherwise (pipes,
CI, tests). Stdout only ever carries results."""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator, TextIO

REDRAW_S = 0.2  # at most five redraws a second


class NullDisplay:
    """Shows nothing; the default of the library."""

    def start(self, total: int, total_bytes: int) -> None:
        pass

    def advance(self, nbytes: int, worked: bool = True) -> None:
        pass

    def file(self, nbytes: int) -> None:
        """A file of the bundle was opened (any thread)."""

    def item(self, name: str) -> None:
        """One more unit of a command's work is done (a corpus case, a signature)."""

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


class Ticker(NullDisplay):
    """`analyze  37 files  410 MB  12s`, or `eval  12/123  4s`: how far a command has got, redrawn in place at
    most five times a second, cleared at the end (the results that follow on stdout stay clean)."""

    def __init__(self, label: str, stream: TextIO, total: int = 0, unit: str = ""):
        self.label, self.stream, self.total, self.unit = label, stream, total, unit
        self.files = self.bytes = self.items = 0
        self.t0, self.drawn = time.monotonic(), 0.0
        self.lock = threading.Lock()  # (files are opened by several threads)

    def file(self, nbytes: int) -> None:
        with self.lock:
            self.files += 1
            self.bytes += max(0, nbytes or 0)
            self._draw()

    def item(self, name: str) -> None:
        with self.lock:
            self.items += 1
            self._draw(name)

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def _draw(self, name: str = "") -> None:
        now = time.monotonic()
        if now - self.drawn < REDRAW_S:
            return
        self.drawn = now
        done = f"{self.files} files  {self.bytes / 1e6:.0f} MB"
        if self.unit:
            done = f"{self.items}{f'/{self.total}' if self.total else ''} {self.unit}"
        self.stream.write(f"\r\x1b[K{self.label}  {done}  {int(now - self.t0)}s  {name[:40]}")
        self.stream.flush()


_current: NullDisplay = NullDisplay()


def current() -> NullDisplay:
    """The display the command running now set up (a NullDisplay for library calls)."""
    return _current


@contextmanager
def showing(label: str, total: int = 0, unit: str = "", stream: TextIO | None = None) -> Iterator[NullDisplay]:
    """A Ticker on stderr (or `stream`) for the duration of a command, when that is a terminal: files and
    bytes read, or `unit`s done of `total`."""
    global _current
    stream = stream or sys.stderr
    shown = Ticker(label, stream, total, unit) if stream.isatty() else NullDisplay()
    before, _current = _current, shown
    try:
        yield shown
    finally:
        shown.close()
        _current = before


def for_stderr(label: str) -> NullDisplay:
    """A Bar on stderr when it is a terminal, else a NullDisplay."""
    stream = sys.stderr
    return Bar(label, stream) if stream.isatty() else NullDisplay()
