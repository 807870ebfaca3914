"""Tar and zip members as streams: a tar member's data and sparse holes, extended headers capped, a zip's local entries
read without its central directory (salvage), zip64 sizes."""
from __future__ import annotations

import lzma
import stat
import struct
import tarfile
import zlib
from typing import TYPE_CHECKING, BinaryIO

import zstandard

if TYPE_CHECKING:
    from .discover import Bundle  # (annotations only: discover imports this module)

# what tarfile raises on damaged data (ValueError: pax fields it converts without checking, e.g. GNU.sparse.map)
TAR_ERRORS = (tarfile.TarError, OSError, EOFError, ValueError, zlib.error, zstandard.ZstdError, lzma.LZMAError)
MAX_TAR_META = 1 << 20  # bytes of extended headers (pax, GNU long names, sparse maps) before one member


class TarData:
    """The data of one tar member, read from the archive stream: where the stream ends early, what was read
    is given and the member is recorded as read in part."""

    def __init__(self, raw, size: int, name: str, bundle: Bundle):
        self._raw, self._left, self._name, self._bundle = raw, size, name, bundle
        self._n = 0

    def read(self, n: int | None = -1) -> bytes:
        n = self._left if n is None or n < 0 else min(n, self._left)
        if n <= 0:
            return b""
        data = self._raw.read(n)
        self._n += len(data)
        self._left -= len(data)
        if len(data) < n:
            self._left = 0
            self.cut = True
            self._bundle.skip(self._name, f"read only the first {self._n} bytes: the archive ends inside this "
                                          f"member (truncated or corrupt)")
        return data

    read1 = read
    cut = False


class Sparse:
    """A sparse tar member (GNU or pax): tarfile makes up its holes as zeros, which no limit on the archive
    stream sees (a 20 KB tar may declare 64 GiB). The zeros made up over the whole archive share one ratio
    budget (`holes`, a one-item list), counted as what a member gives beyond its stored data."""

    def __init__(self, raw, stored: int, holes: list[int], name: str, bundle: Bundle):
        self._raw, self._stored, self._holes, self._name, self._bundle = raw, stored, holes, name, bundle
        self._n = 0
        self.cut = False

    def read(self, n: int | None = -1) -> bytes:
        n = 1 << 20 if n is None or n < 0 else n
        room = max(0, self._stored - self._n) + self._holes[0]
        if self.cut or n <= 0:
            return b""
        if room <= 0:
            self.cut = True
            lim = self._bundle.limits
            self._bundle.skip(self._name, f"read only the first {self._n} bytes: a sparse member whose holes make "
                                          f"the archive more than {lim.max_ratio}x its size (a decompression bomb?); "
                                          f"raise --max-ratio to read it all")
            return b""
        made = max(0, self._n - self._stored)
        data = self._raw.read(min(n, room))
        self._n += len(data)
        self._holes[0] -= max(0, self._n - self._stored) - made
        return data

    read1 = read


class _Capped:
    """A tarfile stream that may give at most `limit` more bytes (while tarfile reads a sparse map)."""

    def __init__(self, raw, limit: int):
        self._raw, self._left = raw, limit

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0 or n > self._left:
            raise tarfile.ReadError(f"sparse map longer than {MAX_TAR_META} bytes")
        self._left -= n
        return self._raw.read(n)

    def __getattr__(self, name):
        return getattr(self._raw, name)


class TarInfo(tarfile.TarInfo):
    """tarfile's member header, bounded. tarfile reads an extended header whole into memory (a pax header
    may claim gigabytes), follows chains of them by recursion, and ends quietly at a damaged header: here
    each is capped, chains are short, and a damaged header is remembered to be reported."""

    @classmethod
    def fromtarfile(cls, tf):
        depth = getattr(tf, "_k3_depth", 0)
        if depth >= 8:
            raise tarfile.ReadError("more than 8 extended headers before one member")
        tf._k3_depth = depth + 1
        try:
            return super().fromtarfile(tf)
        except tarfile.HeaderError as e:
            if depth == 0 and not isinstance(e, tarfile.EOFHeaderError):
                tf._k3_bad_header = e
            raise
        finally:
            tf._k3_depth = depth

    def _proc_member(self, tf):
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
                         tarfile.SOLARIS_XHDTYPE):
            total = self.size + (getattr(tf, "_k3_global", 0) if self.type == tarfile.XGLTYPE else 0)
            if total > MAX_TAR_META:
                raise tarfile.ReadError(f"extended header of {self.size} bytes (more than {MAX_TAR_META})")
            if self.type == tarfile.XGLTYPE:  # global headers accumulate over the whole archive
                tf._k3_global = total
        return super()._proc_member(tf)

    def _capped(self, method, tf, *args):
        raw = tf.fileobj
        tf.fileobj = _Capped(raw, MAX_TAR_META)
        try:
            return method(*args)
        finally:
            tf.fileobj = raw

    def _proc_sparse(self, tf):  # GNU sparse: a chain of map blocks, each followed while it says 'more'
        return self._capped(super()._proc_sparse, tf, tf)

    def _proc_gnusparse_10(self, next, pax_headers, tf):  # pax sparse 1.0: a map read line by line
        return self._capped(super()._proc_gnusparse_10, tf, next, pax_headers, tf)


class ZipLocal:
    """The data of one zip member found by its local header: stored bytes, or a raw deflate stream (which
    ends by itself, so its size need not be known). Raises EOFError where the file ends first."""

    def __init__(self, fobj: BinaryIO, start: int, method: int, csize: int | None):
        self._f, self._pos, self._left = fobj, start, csize
        self._d = zlib.decompressobj(-15) if method == 8 else None
        self._tail = b""

    def _raw(self, n: int) -> bytes:
        self._f.seek(self._pos)  # the salvage loop and this reader share the file
        data = self._f.read(n if self._left is None else min(n, self._left))
        self._pos += len(data)
        if self._left is not None:
            self._left -= len(data)
        return data

    def read(self, n: int = -1) -> bytes:
        n = n if n and n > 0 else 1 << 20
        if self._d is None:
            data = self._raw(n)
            if not data and self._left:
                raise EOFError("zip member data ends early (the archive is truncated)")
            return data
        while not self._d.eof:
            data = self._tail or self._raw(1 << 16)
            if not data:
                raise EOFError("zip member data ends early (the archive is truncated)")
            out = self._d.decompress(data, n)
            self._tail = self._d.unconsumed_tail
            if out:
                return out
        return b""

    read1 = read

    def finish(self) -> int | None:
        """Where the member's deflate data ends (reading through what was not read); None if damaged."""
        try:
            while self.read(1 << 20):
                pass
        except (EOFError, zlib.error):
            return None
        return self._pos - len(self._d.unused_data) if self._d else self._pos  # (at the end, the tail is unused_data)


def zip64_sizes(extra: bytes, usize: int, csize: int) -> tuple[int, int]:
    i = 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack("<HH", extra[i:i + 4])
        if tag == 1:
            k = min(size, 16, len(extra) - i - 4) // 8  # a damaged extra field may be shorter than it says
            vals = list(struct.unpack(f"<{k}Q", extra[i + 4:i + 4 + k * 8]))
            if usize == 0xFFFFFFFF and vals:
                usize = vals.pop(0)
            if csize == 0xFFFFFFFF and vals:
                csize = vals.pop(0)
            break
        i += 4 + size
    return usize, csize


def after_descriptor(fobj: BinaryIO, pos: int) -> int | None:
    """Offset of the next local header after a data descriptor (12 to 24 bytes, with or without its signature)."""
    fobj.seek(pos)
    window = fobj.read(32)
    nxt = window.find(b"PK\x03\x04", 12)
    return pos + nxt if 0 <= nxt <= 24 else None


def file_type(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISLNK, "symbolic link"), (stat.S_ISDIR, "folder")):
        if test(mode):
            return name
    return "special file"


def tar_type(ti: tarfile.TarInfo) -> str:
    if ti.issym():
        return f"symbolic link to {ti.linkname!r}"
    if ti.islnk():
        return f"hard link to {ti.linkname!r}"
    if ti.ischr() or ti.isblk():
        return "device node"
    if ti.isfifo():
        return "fifo"
    return "special member"
