"""Bytes -> batches of (line, text): split on b'\\n' only (a tqdm bar redrawn with '\\r' stays one line),
decode UTF-8 with replacement (UTF-16 with a BOM is recoded; other bytes that are not UTF-8 become
U+FFFD), cut over-long lines without ever holding them whole. Splitting and decoding are vectorised (pyarrow / polars)."""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import BinaryIO, Iterator

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from k3logs.schema import LINE, TRUNCATED

from .streams import read_up_to

RAW = "raw"


@dataclass
class LineStats:
    lines: int = 0
    bytes: int = 0
    truncated: int = 0   # (the cut line counted in `cut` too)
    undecodable: int = 0
    cut: int = 0         # 1 if the last line was cut short by the end of the data (damage or a limit)
    unended: int = 0     # 1 if the data itself ends inside its last line (no newline after it)

    def count(self, batch: pl.DataFrame) -> None:
        """Count the lines of a split batch (line, raw, truncated) and those that were cut."""
        self.lines += batch.height
        self.truncated += int(batch[TRUNCATED].sum())


def _utf16_reader(stream: BinaryIO, encoding: str) -> BinaryIO:
    """Re-encode a UTF-16 stream as UTF-8 on the fly (newlines keep their count)."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    class Recoded:
        @property
        def cut(self) -> bool:
            return bool(getattr(stream, "cut", False))

        def read(self, n: int = -1) -> bytes:
            while True:  # b"" means the end: read on while the bytes so far decode to nothing (a BOM, half a unit)
                data = stream.read(n)
                text = decoder.decode(data, final=not data)
                if text or not data:
                    return text.encode("utf-8")

    return Recoded()  # type: ignore[return-value]


def decode_head(head: bytes) -> str:
    """A file's first bytes as text: UTF-16 with a BOM, else UTF-8 (without its BOM)."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return head.decode("utf-16", "replace")
    return head.decode("utf-8-sig", "replace")


def crlf_line_ends(head: bytes) -> bool:
    """Whether a file's lines end in '\\r\\n' (written or copied on Windows, also by PowerShell's `>` in
    UTF-16): every line end of its head, two at least. (vLLM's own '\\r\\n' marks a continued record on a
    few lines only.)"""
    text = decode_head(head)
    ends = text.count("\n")
    return ends >= 2 and text.count("\r\n") == ends


def open_text(stream: BinaryIO, head: bytes) -> BinaryIO:
    """Wrap `stream` (whose first bytes are `head`) so that it yields UTF-8-ish bytes."""
    if head.startswith(codecs.BOM_UTF16_LE) or head.startswith(codecs.BOM_UTF16_BE):
        return _utf16_reader(stream, "utf-16")
    if head.startswith(codecs.BOM_UTF8):  # else the first line would not match any format
        stream.read(len(codecs.BOM_UTF8))
    return stream


def split_lines(buf, max_line: int) -> tuple[pl.Series, pl.Series]:
    """Split bytes that end just after a '\\n' into lines (without the '\\n'), as a polars String series, each
    cut to its first `max_line` bytes; and which lines were cut."""
    arr = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), 1, [None, pa.py_buffer(np.array([0, len(buf)], dtype=np.int64)), pa.py_buffer(buf)])
    parts = pc.split_pattern(arr, b"\n").flatten()
    parts = parts.slice(0, len(parts) - 1)  # the empty string after the final '\n'
    # bytes as stored, before any replacement (compared in polars: a Python number given to an arrow
    # function is converted by code that tries to import pandas, on every call, holding the GIL)
    lengths = pl.from_arrow(pc.binary_length(parts))
    assert isinstance(lengths, pl.Series)
    long = lengths > max_line
    if not long.any():
        try:  # (arrow checks the UTF-8 and makes the string views polars holds, without the GIL)
            return pl.from_arrow(parts.cast(pa.string_view())).rename(RAW), long.rename(TRUNCATED)
        except pa.ArrowInvalid:
            pass
    s = pl.from_arrow(parts)
    assert isinstance(s, pl.Series)
    if long.any():
        idx = long.arg_true().to_list()
        s = s.scatter(idx, [cut_line(s[i], max_line) for i in idx])
    try:
        text = s.cast(pl.String)
    except pl.exceptions.PolarsError:  # invalid UTF-8 (polars raises even when not strict): replace it
        if long.any():
            text = pl.Series([b.decode("utf-8", "replace") for b in s.to_list()], dtype=pl.String)
        else:  # in one go: a replacement never swallows a '\n'
            text = pl.Series([bytes(buf).decode("utf-8", "replace")]).str.split("\n").explode()
            text = text.slice(0, len(text) - 1)
    return text.rename(RAW), long.rename(TRUNCATED)


TOKEN_BYTES = rb"A-Za-z0-9_.+/=~-"   # what tokens, keys and base64 are made of
_CUT_TOKEN = re.compile(rb"[" + TOKEN_BYTES + rb"]+\Z")  # (kept here: bytes, and our own cut, not a format)


def cut_line(raw: bytes, max_line: int) -> bytes:
    """The first `max_line` bytes of a line longer than that, less the token the cut goes through: what is
    left of a secret cut short is no longer one a redaction rule knows (hf_ and 30 characters, ...)."""
    head = raw[:max_line]
    if not _CUT_TOKEN.match(raw, max_line, max_line + 1):
        return head
    return _CUT_TOKEN.sub(b"", head)


@dataclass(frozen=True)
class LineChunk:
    """A piece of a stream that ends at a line end. Cutting the stream is cheap and sequential; splitting a
    piece into lines (`frame`) is the costly part and can run on any thread."""

    parts: tuple[bytes | memoryview, ...]  # each ends just after a b"\n" (none for a giant line's head)
    max_line: int
    head: bytes | None = None  # the first max_line bytes of a line longer than that (parts is then empty)
    cut: bool = False  # its last line was cut short: the data ended inside it (damage or a limit)

    def frame(self, first_line: int) -> pl.DataFrame:
        """(line: i64, raw: str, truncated: bool), lines numbered from `first_line`."""
        if self.head is not None:
            text, trunc = pl.Series(RAW, [self.head.decode("utf-8", "replace")]), pl.Series([True])
        else:
            split = [split_lines(p, self.max_line) for p in self.parts]
            text, trunc = pl.concat([t for t, _ in split]), pl.concat([f for _, f in split])
            if self.cut:
                trunc = trunc.scatter(len(trunc) - 1, True)
        lines = pl.int_range(first_line, first_line + len(text), dtype=pl.Int64, eager=True).alias(LINE)
        return pl.DataFrame([lines, text.rename(RAW), trunc.rename(TRUNCATED)])


def iter_line_batches(stream: BinaryIO, batch_bytes: int, max_line: int, stats: LineStats | None = None
                      ) -> Iterator[pl.DataFrame]:
    """Yield DataFrames (line: i64, raw: str, truncated: bool) covering the stream in order.

    Memory stays bounded by `batch_bytes` plus `max_line`: a line longer than `max_line` is cut to its
    first `max_line` bytes, flagged, and the rest of it is skipped while reading.
    """
    next_line = 1
    for chunk in iter_line_chunks(stream, batch_bytes, max_line, stats):
        batch = chunk.frame(next_line)
        next_line += batch.height
        if stats is not None:
            stats.count(batch)
        yield batch


def iter_line_chunks(stream: BinaryIO, batch_bytes: int, max_line: int, stats: LineStats | None = None
                     ) -> Iterator[LineChunk]:
    """The stream cut into LineChunks of about `batch_bytes`, in order (`stats` gets the bytes; lines are
    numbered and counted by whoever splits the chunks)."""
    stats = stats if stats is not None else LineStats()
    carry = b""
    skipping = False  # inside the unread tail of an over-long line

    while True:
        chunk = read_up_to(stream, batch_bytes)  # (each batch has a fixed cost)
        if not chunk:
            break
        stats.bytes += len(chunk)
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            chunk = chunk[nl + 1:]
            skipping = False
        cut = chunk.rfind(b"\n")
        if cut < 0:
            carry = carry + chunk if carry else chunk
        elif carry:
            # the line that straddles two reads is joined on its own: copying the whole chunk is slow
            first = chunk.find(b"\n")
            rest = (memoryview(chunk)[first + 1: cut + 1],) if cut > first else ()
            yield LineChunk((carry + chunk[: first + 1], *rest), max_line)
            carry = chunk[cut + 1:]
        else:
            carry = chunk[cut + 1:]
            yield LineChunk((memoryview(chunk)[: cut + 1],), max_line)
        if len(carry) > max_line:
            # emit the head of the giant line now, skip the rest up to its newline
            yield LineChunk((), max_line, cut_line(carry, max_line))
            carry = b""
            skipping = True
    if carry:  # a last line without its newline: cut, if the stream ended early (`cut`, see discover)
        ended_early = bool(getattr(stream, "cut", False))
        stats.cut += ended_early
        stats.unended = int(not ended_early)
        yield LineChunk((carry + b"\n",), max_line, cut=ended_early)
