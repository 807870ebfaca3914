"""Byte streams a bundle's members are read through: a peek at the head that is handed back, the decompressors (gzip,
bzip2, xz, zstd) as streams, and the guards that count what is read against the bundle's limits and stop at damage."""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
import tarfile
import zipfile
import zlib
from typing import TYPE_CHECKING, BinaryIO

import zstandard

if TYPE_CHECKING:
    from .discover import Bundle  # (annotations only: discover imports this module)

PEEK = 512


def _skippable(head: bytes) -> bool:
    """A zstd skippable frame (magic 0x184D2A50 to 0x184D2A5F, little-endian): metadata a reader passes over."""
    return len(head) >= 4 and head[1:4] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50


def kind_of_head(head: bytes) -> str | None:
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:4] == b"\x28\xb5\x2f\xfd" or _skippable(head):
        return "zstd"
    if head[:3] == b"BZh":
        return "bzip2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    return None


def container_kind(path: str | os.PathLike) -> str | None:
    """What a file is by its first bytes: gzip, zstd, bzip2, xz, zip, tar, or None (no archive or compression)."""
    with open(path, "rb") as fh:
        return kind_of_head(fh.read(PEEK))


def read_up_to(stream: BinaryIO, n: int) -> bytes:
    """`n` bytes, fewer only at the end: one read may give less than asked (a gzip member gives one
    decompression step, tens of KiB; a peeked stream gives its head back alone first)."""
    parts, size = [], 0
    while size < n and (more := stream.read(n - size)):
        parts.append(more)
        size += len(more)
    return parts[0] if len(parts) == 1 else b"".join(parts)


class Prepend:
    """A read-only stream whose first bytes were already read (to sniff it): gives them back first.
    Plain pass-through reads, no copies; a read may return less than asked (callers read until b"")."""

    def __init__(self, raw: BinaryIO, head: bytes):
        self._raw, self._head = raw, head

    @property
    def cut(self) -> bool:
        """Whether the data ended early (damage or a limit), as the stream below says."""
        return bool(getattr(self._raw, "cut", False))

    def read(self, n: int | None = -1) -> bytes:
        if self._head:
            if n is None or n < 0:
                out, self._head = self._head + self._raw.read(), b""
            else:
                out, self._head = self._head[:n], self._head[n:]
            return out
        return self._raw.read(n)

    read1 = read


def peek(stream: BinaryIO, n: int = PEEK) -> tuple[bytes, BinaryIO]:
    head = read_up_to(stream, n)
    return head, Prepend(stream, head)


class Guarded:
    """Turns a decompression failure into end-of-data plus a recorded skip (salvage what was readable).
    With `compressed_size`, also ends the data at twice the ratio limit: a tar reads through (skips) the
    unread part of every member, so a bomb member stopped by Limited would otherwise be decompressed whole
    after all. (Twice: the members' own limit, which names the member, comes first.)"""

    def __init__(self, raw: BinaryIO, name: str, bundle: Bundle, compressed_size: int | None = None):
        self._raw, self._name, self._bundle, self._failed = raw, name, bundle, False
        lim = bundle.limits
        self._budget = 2 * max(lim.ratio_grace_bytes, lim.max_ratio * compressed_size) if compressed_size else None
        self._n = 0

    def read(self, n: int | None = -1) -> bytes:
        if self._failed:
            return b""
        if self._budget is not None and self._n > self._budget:
            self._failed = True
            self._bundle._cut.add(self._name)
            self._bundle.skip(self._name, f"decompresses to more than {self._budget} bytes, far more than "
                                          f"{self._bundle.limits.max_ratio}x its size (a decompression bomb?): the rest "
                                          f"was not read; raise --max-ratio to read it all")
            return b""
        try:  # read1: one decompression step, so data decoded before the damage is not lost with it
            data = self._raw.read1(n) if hasattr(self._raw, "read1") else self._raw.read(n)
            self._n += len(data)
            return data
        except (OSError, EOFError, zlib.error, zstandard.ZstdError, lzma.LZMAError, zipfile.BadZipFile,
                ValueError) as e:
            self._failed = True
            self._bundle.skip(self._name, f"compressed data is truncated or corrupt; read up to the damage ({error_text(e)})")
            return b""

    read1 = read

    @property
    def cut(self) -> bool:
        return self._failed


class _Zstd:
    """zstandard's stream reader ends quietly on truncated data: a first frame that declares its size and gives
    less is reported as damage (EOFError), like gzip does."""

    def __init__(self, stream: BinaryIO, head: bytes):
        self._r = zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)  # (skips skippable frames)
        pos = 0
        while _skippable(head[pos:pos + 4]) and pos + 8 <= len(head):
            pos += 8 + int.from_bytes(head[pos + 4:pos + 8], "little")
        try:
            size = zstandard.get_frame_parameters(head[pos:]).content_size
        except zstandard.ZstdError:
            size = 0
        self._expect = 0 if size >= zstandard.CONTENTSIZE_ERROR else size
        self._n = 0

    def read1(self, n: int = -1) -> bytes:
        data = self._r.read1(n)
        self._n += len(data)
        if not data and self._n < self._expect:
            raise EOFError(f"zstd data ends after {self._n} of the {self._expect} bytes its first frame declares")
        return data

    read = read1


class _Xz:
    """xz data, decoded 1 KiB of input at a time: lzma's own reader decodes 8 KiB at once and loses all that
    decoded from it at damage (a log whose damage is in its first 8 KiB gave nothing). Concatenated streams
    are read on; data after the last one that is not xz is ignored (as lzma's reader does)."""

    STEP = 1 << 10

    def __init__(self, stream: BinaryIO):
        self._s, self._d = stream, lzma.LZMADecompressor()
        self._in, self._at = b"", 0  # input read, and how much of it was decoded

    def read1(self, n: int = -1) -> bytes:
        n = n if n and n > 0 else 1 << 20
        while True:
            if self._d.eof:  # another stream may follow (streams may be padded with NULs)
                rest = (self._d.unused_data + self._in[self._at:]).lstrip(b"\x00")
                while len(rest) < 6 and (more := self._s.read(1 << 16)):
                    rest = (rest + more).lstrip(b"\x00")
                if not rest.startswith(b"\xfd7zXZ\x00"):
                    return b""
                self._in, self._at, self._d = rest, 0, lzma.LZMADecompressor()
            piece = b""
            if self._d.needs_input:
                if self._at >= len(self._in):
                    self._in, self._at = self._s.read(1 << 16), 0
                    if not self._in:
                        raise EOFError("xz data ends before its end-of-stream marker")
                piece = self._in[self._at:self._at + self.STEP]
                self._at += len(piece)
            out = self._d.decompress(piece, n)
            if out:
                return out

    read = read1


class Limited:
    """Enforces the per-member, total and compression-ratio limits while a member is read."""

    def __init__(self, raw: BinaryIO, name: str, bundle: Bundle, compressed_size: int | None):
        self._raw, self._name, self._bundle = raw, name, bundle
        self._compressed = compressed_size
        self._n = 0
        self._stopped = False

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:  # everything: read until the end or the limit
            parts = []
            while chunk := self.read(1 << 20):
                parts.append(chunk)
            return b"".join(parts)
        if self._stopped:
            return b""
        lim = self._bundle.limits
        room = min(lim.max_member_bytes - self._n, lim.max_total_bytes - self._bundle.bytes_read)
        if room <= 0:
            self._stop("limit")
            return b""
        try:
            data = self._raw.read(min(n, room))
        except (OSError, EOFError, zlib.error, zstandard.ZstdError, lzma.LZMAError, zipfile.BadZipFile,
                ValueError, tarfile.TarError) as e:
            self._stopped = True
            self._bundle.skip(self._name, f"read only the first {self._n} bytes: data is truncated or corrupt ({error_text(e)})")
            return b""
        self._n += len(data)
        with self._bundle._lock:
            self._bundle.bytes_read += len(data)
        if (self._compressed and self._n > lim.ratio_grace_bytes
                and self._n > lim.max_ratio * max(1, self._compressed)):
            self._stop("ratio")
        return data

    read1 = read

    @property
    def cut(self) -> bool:
        """Whether the member's data ended early: a limit, or damage (here or in the stream below)."""
        return self._stopped or bool(getattr(self._raw, "cut", False))

    def _stop(self, why: str) -> None:
        self._stopped = True
        lim = self._bundle.limits
        if why == "ratio":
            msg = (f"read only the first {self._n} bytes: decompresses more than {lim.max_ratio}x "
                   f"(a decompression bomb?); raise --max-ratio to read it all")
        elif self._n >= lim.max_member_bytes:
            msg = f"read only the first {self._n} bytes: file limit {lim.max_member_bytes} (--max-member-bytes)"
        else:
            msg = f"read only the first {self._n} bytes: bundle limit {lim.max_total_bytes} (--max-total-bytes)"
        self._bundle.skip(self._name, msg)


def decompressor(kind: str, stream: BinaryIO, head: bytes = b"") -> BinaryIO:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")
    if kind == "zstd":
        return _Zstd(stream, head)
    if kind == "bzip2":
        return bz2.BZ2File(stream)
    return _Xz(stream)


def error_text(e: BaseException) -> str:
    return (str(e) or type(e).__name__).splitlines()[0][:160]
