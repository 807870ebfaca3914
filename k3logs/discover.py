"""Walk a bundle (folder, archive, compressed file, plain file; archives nested in archives) as a stream of
members. Nothing is extracted to disk; a member is read once, in order, as a binary stream. Whatever is
not read (links, devices, limits hit, corrupt data) is recorded in `Bundle.skipped` with a reason."""
from __future__ import annotations

import bz2
import functools
import gzip
import hashlib
import io
import lzma
import os
import posixpath
import re
import stat
import struct
import tarfile
import threading
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import zstandard

from .errors import BundleError
from .settings import Limits

PEEK = 512
# what tarfile raises on damaged data (ValueError: pax fields it converts without checking, e.g. GNU.sparse.map)
_TAR_ERRORS = (tarfile.TarError, OSError, EOFError, ValueError, zlib.error, zstandard.ZstdError, lzma.LZMAError)


@dataclass(frozen=True)
class Skip:
    file: str
    reason: str


@dataclass
class Member:
    path: str               # path inside the bundle as stored (see Bundle.display for the reported form)
    stream: BinaryIO        # valid until the next member is requested
    size: int | None = None  # bytes as stored, when known
    mtime: float | None = None


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


MAX_NAME = 1024   # characters of a name shown whole
MAX_PART = 128    # a longer folder or file name in a name longer than MAX_NAME is shortened with its hash


def printable(name: str) -> str:
    """A name as it may be shown: bytes that were not UTF-8 (tarfile and os.scandir keep them as lone
    surrogates, which no output can encode) become U+FFFD, control characters (a newline, a terminal escape)
    become \\xNN; a name longer than MAX_NAME has its long parts shortened, each keeping its start, its end
    (the extension) and a hash of the whole part (two long names stay two names)."""
    if _CONTROL.search(name):
        try:
            name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            pass
        name = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0xd800 else "\ufffd", name)
    if len(name) > MAX_NAME:
        name = "/".join(_short(part) for part in name.split("/"))
        if len(name) > MAX_NAME:  # (many parts: the path's end stays, after the hash of the whole)
            name = f"{_digest(name)}~{name[-(MAX_NAME - 20):]}"
    return name


def _short(part: str) -> str:
    return part if len(part) <= MAX_PART else f"{part[:60]}~{_digest(part)}~{part[-40:]}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def sanitize(name: str) -> str:
    """A member name as a relative POSIX path: no leading '/', no '..' segments, no empty parts."""
    name = name.replace("\\", "/")
    parts = [p for p in posixpath.normpath("/" + name).split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or "_"


def _skippable(head: bytes) -> bool:
    """A zstd skippable frame (magic 0x184D2A50 to 0x184D2A5F, little-endian): metadata a reader passes over."""
    return len(head) >= 4 and head[1:4] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50


def _magic(head: bytes) -> str | None:
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
        return _magic(fh.read(PEEK))


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


class Bundle:
    """One support bundle. Iterate `members()` once; then `skipped`, `files`, `bytes_read` are final."""

    def __init__(self, path: str | os.PathLike, limits: Limits | None = None, name: str | None = None):
        self.path = Path(path)
        self.name = name or self.path.name  # a bundle of one file (or archive): the name it goes by
        self.limits = limits or Limits()
        self.skipped: list[Skip] = []
        self.names: list[str] = []
        self.files = 0
        self.bytes_read = 0
        self._lock = threading.Lock()  # groups may be read by several threads
        self._archive = False
        self._cut: set[str] = set()   # compressed containers cut short by a limit (reason already recorded)
        self._tops: set[str] = set()  # first path segments of the names (two are enough to know there is no prefix)
        self._all_nested = True       # every name has a '/'
        self._said: set[str] = set()  # reasons said once for all the files they cut (_skip_once)
        if not self.path.exists() and not self.path.is_symlink():
            raise BundleError(f"cannot read {self.path}: no such file or folder")
        st = os.stat(self.path) if self.path.exists() else None
        if st is None:
            raise BundleError(f"cannot read {self.path}: it is a dangling link")
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            raise BundleError(f"cannot read {self.path}: not a regular file or folder")
        if stat.S_ISREG(st.st_mode) and not os.access(self.path, os.R_OK):
            raise BundleError(f"cannot read {self.path}: permission denied")

    # ----------------------------------------------------------------------------------------
    def skip(self, file: str, reason: str) -> None:
        self.skipped.append(Skip(printable(file), printable(reason)))

    def _skip_once(self, file: str, reason: str) -> None:
        """A limit that cuts every file after it is said once, at the first (not once a file: a folder of a
        million files would make a report of a million lines)."""
        if reason not in self._said:
            self._said.add(reason)
            self.skip(file, reason)

    @property
    def _too_many(self) -> str:
        return f"more than {self.limits.max_members} files (--max-members); this one and those after it were not read"

    @property
    def common_prefix(self) -> str:
        """The single top-level folder every archive member shares ('' for folders or mixed roots)."""
        if not self._archive or not self.names:
            return ""
        if len(self._tops) == 1 and self._all_nested:  # kept up to date by _emit: O(1) per call
            return next(iter(self._tops)) + "/"
        return ""

    def display(self, name: str) -> str:
        prefix = self.common_prefix
        return name[len(prefix):] if prefix and name.startswith(prefix) else name

    # ----------------------------------------------------------------------------------------
    def members(self) -> Iterator[Member]:
        """Every member, in order, one at a time (a member's stream is valid until the next is asked)."""
        for group in self.groups():
            yield from group()

    def groups(self) -> Iterator[Callable[[], Iterator[Member]]]:
        """The bundle as independent groups of members: one per file of a folder (so files can be read
        in parallel, each group in one thread), or the whole archive."""
        if self.path.is_dir():
            for n, (target, rel, st) in enumerate(self._walk_dir(), 1):
                if n > self.limits.max_members:  # (the walk stops there)
                    self._skip_once(rel, self._too_many)
                    return
                group = functools.partial(self._open_file, target, rel, st)
                group.size = st.st_size  # type: ignore[attr-defined]  (small files are read together: ingest)
                yield group
            return
        yield self._open_top
    def _open_top(self) -> Iterator[Member]:
        try:
            fh = open(self.path, "rb")
        except OSError as e:
            raise BundleError(f"cannot read {self.path}: {e.strerror or e}") from e
        with fh:
            size = os.fstat(fh.fileno()).st_size
            head, stream = peek(fh)
            kind = _magic(head)
            if kind is None:
                yield from self._emit(Member(self.name, stream, size, os.stat(self.path).st_mtime))
                return
            self._archive = True
            name = self.name
            yield from self._open_container(name, stream, head, kind, depth=0, seekable=fh, size=size,
                                            top=True)

    def _walk_dir(self) -> Iterator[tuple[Path, str, os.stat_result]]:
        """(path, path inside the bundle, stat) of every regular file, links resolved inside the bundle."""
        root = self.path.resolve()
        seen_dirs: set[tuple[int, int]] = set()

        def walk(d: Path, rel: str, depth: int) -> Iterator[tuple[Path, str, os.stat_result]]:
            if depth > self.limits.max_dir_depth:
                self.skip(rel or ".", f"folder nested deeper than {self.limits.max_dir_depth} levels; not read")
                return
            try:
                st = os.stat(d)
                key = (st.st_dev, st.st_ino)
                if key in seen_dirs:
                    self.skip(rel or ".", "folder already visited (link loop); not read again")
                    return
                seen_dirs.add(key)
                entries = sorted(os.scandir(d), key=lambda e: e.name)
            except OSError as e:
                self.skip(rel or ".", f"cannot list folder: {e.strerror or e}")
                return
            for e in entries:
                r = f"{rel}/{e.name}" if rel else e.name
                try:
                    lst = e.stat(follow_symlinks=False)
                except OSError as err:
                    self.skip(r, f"cannot stat: {err.strerror or err}")
                    continue
                target = Path(e.path)
                if stat.S_ISLNK(lst.st_mode):
                    try:
                        resolved = target.resolve(strict=True)
                    except (OSError, RuntimeError):
                        self.skip(r, "symbolic link to nothing (or a link loop); not followed")
                        continue
                    if resolved != root and root not in resolved.parents:
                        self.skip(r, "symbolic link that leaves the bundle; not followed")
                        continue
                    try:
                        lst = os.stat(resolved)
                    except OSError as err:
                        self.skip(r, f"cannot stat link target: {err.strerror or err}")
                        continue
                    target = resolved
                if stat.S_ISDIR(lst.st_mode):
                    yield from walk(target, r, depth + 1)
                elif stat.S_ISREG(lst.st_mode):
                    yield target, r, lst
                else:
                    self.skip(r, f"not a regular file ({_file_type(lst.st_mode)}); never opened")

        yield from walk(self.path, "", 0)

    def _open_file(self, path: Path, rel: str, st: os.stat_result) -> Iterator[Member]:
        try:
            fh = open(path, "rb", buffering=0)
        except OSError as e:
            self.skip(rel, f"cannot open: {e.strerror or e}")
            return
        with fh:
            head, stream = peek(fh)
            kind = _magic(head)
            if kind is None:
                yield from self._emit(Member(rel, stream, st.st_size, st.st_mtime))
            else:
                yield from self._open_container(rel, stream, head, kind, depth=0, seekable=fh, size=st.st_size)

    # ----------------------------------------------------------------------------------------
    def _open_container(self, name: str, stream: BinaryIO, head: bytes, kind: str, depth: int,
                        seekable: BinaryIO | None = None, size: int | None = None,
                        top: bool = False) -> Iterator[Member]:
        """`name` is an archive or a compressed file: yield what is inside it."""
        if depth > self.limits.max_depth:
            self.skip(name, f"archive nested deeper than {self.limits.max_depth} levels; not opened")
            return
        prefix = "" if top else name + "/"
        if kind == "zip":
            yield from self._zip(name, prefix, stream, seekable, depth)
            return
        if kind == "tar":  # (a plain tar is bounded by its own size: its sparse members expand)
            yield from self._tar(name, prefix, stream, depth, compressed_size=size)
            return
        inner = _decompressor(kind, stream, head)
        inner_head, inner_stream = peek(_Guarded(inner, name, self, compressed_size=size), 512)
        inner_kind = _magic(inner_head)
        if inner_kind == "tar":
            yield from self._tar(name, prefix, inner_stream, depth, compressed_size=size)
        elif inner_kind is not None:
            yield from self._open_container(name, inner_stream, inner_head, inner_kind, depth + 1, size=size,
                                            top=top)
        else:  # the file's name as stored (report-contract.md), its lines those `zgrep -n` counts
            single = posixpath.basename(name) if top else name
            yield from self._emit(Member(single, inner_stream, None, None), compressed_size=size)

    def _tar(self, name: str, prefix: str, stream: BinaryIO, depth: int, compressed_size: int | None = None
             ) -> Iterator[Member]:
        """`compressed_size`: of the whole (compressed) tar as stored, an upper bound on any member's share
        (ratio limit)."""
        try:
            tf = tarfile.open(fileobj=stream, mode="r|", tarinfo=_TarInfo)
        except _TAR_ERRORS as e:
            self.skip(name, f"corrupt or unreadable tar archive: {_why(e)}")
            return
        lim = self.limits
        # zeros tarfile makes up for the holes of sparse members, over the whole archive
        holes = [max(lim.ratio_grace_bytes, lim.max_ratio * compressed_size) if compressed_size
                 else lim.ratio_grace_bytes]
        count = 0
        try:
            for ti in tf:
                count += 1
                mname = prefix + sanitize(ti.name)
                if ti.isdir():
                    continue
                if self.bytes_read >= self.limits.max_total_bytes:
                    self.skip(name, f"bundle already gave {self.limits.max_total_bytes} bytes (--max-total-bytes); "
                                    f"the rest of the archive was not read")
                    return
                if count > self.limits.max_members:
                    self.skip(mname, f"more than {self.limits.max_members} members; the rest were not read")
                    break
                if not ti.isreg():
                    self.skip(mname, f"not a regular file ({_tar_type(ti)}); never opened")
                    continue
                # straight from the archive stream (tarfile's own reader drops a whole chunk at the damage);
                # sparse members need tarfile's map, and only their data blocks are stored
                stored = ti.size if ti.sparse is None else sum(size for _, size in ti.sparse)
                bound = min(stored, compressed_size) if compressed_size else stored
                if ti.sparse is None:
                    fobj = _TarData(tf.fileobj, ti.size, mname, self)
                else:
                    fobj = _Sparse(tf.extractfile(ti), stored, holes, mname, self)
                head, s = peek(fobj)
                kind = _magic(head)
                if kind is None:
                    yield from self._emit(Member(mname, s, ti.size, float(ti.mtime)), compressed_size=bound)
                else:
                    yield from self._open_container(mname, s, head, kind, depth + 1, size=bound)
        except _TAR_ERRORS as e:
            if name not in self._cut:  # else the reason is already recorded
                self.skip(name, f"archive is truncated or corrupt after {count} member(s): {_why(e)}")
            return
        bad = getattr(tf, "_k3_bad_header", None)  # tarfile ends quietly at a damaged header
        if bad is not None and name not in self._cut:
            self.skip(name, f"archive is truncated or corrupt after {count} member(s): {_why(bad)}; "
                            f"the rest was not read")

    def _zip(self, name: str, prefix: str, stream: BinaryIO, seekable: BinaryIO | None, depth: int
             ) -> Iterator[Member]:
        fobj: BinaryIO
        if seekable is not None and seekable.seekable():
            seekable.seek(0)
            fobj = seekable
        else:  # (read until full: one read of a peeked or decompressed stream gives less)
            data = read_up_to(stream, self.limits.max_nested_zip_bytes + 1)
            if len(data) > self.limits.max_nested_zip_bytes:
                self.skip(name, f"zip inside an archive larger than {self.limits.max_nested_zip_bytes} bytes; not opened")
                return
            fobj = io.BytesIO(data)
        try:
            zf = zipfile.ZipFile(fobj)
            infos = zf.infolist()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, struct.error) as e:
            # (NotImplementedError: a 'version needed' byte zipfile does not know, damaged or not)
            # a zip cut short (an interrupted copy) loses its central directory, at the end: its members
            # can still be read in order from their local headers, up to the damage
            self.skip(name, f"corrupt zip archive: {_why(e)}; members read from their local headers up to the damage")
            yield from self._zip_salvage(name, prefix, fobj, depth)
            return
        for count, zi in enumerate(infos, 1):
            mname = prefix + sanitize(zi.filename)
            if zi.is_dir():
                continue
            if count > self.limits.max_members:
                self.skip(mname, f"more than {self.limits.max_members} members; the rest were not read")
                break
            mode = zi.external_attr >> 16
            if stat.S_IFMT(mode) and not stat.S_ISREG(mode):  # many zips carry permission bits only
                self.skip(mname, f"not a regular file ({_file_type(mode)}); never opened")
                continue
            if zi.flag_bits & 0x1:
                self.skip(mname, "encrypted zip member; not read")
                continue
            try:
                raw = zf.open(zi)
            except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError) as e:
                self.skip(mname, f"cannot open zip member: {_why(e)}")
                continue
            with raw:
                head, s = peek(_Guarded(raw, mname, self))
                kind = _magic(head)
                if kind is None:
                    yield from self._emit(Member(mname, s, zi.file_size, None), compressed_size=zi.compress_size)
                else:
                    yield from self._open_container(mname, s, head, kind, depth + 1, size=zi.compress_size)

    def _zip_salvage(self, name: str, prefix: str, fobj: BinaryIO, depth: int) -> Iterator[Member]:
        """The members of a zip without its central directory, from their local headers (stored or deflated)."""
        end = fobj.seek(0, os.SEEK_END)
        pos, count = 0, 0
        while True:
            fobj.seek(pos)
            hdr = fobj.read(30)
            if len(hdr) < 30 or hdr[:4] != b"PK\x03\x04":
                return
            _, _, flags, method, _, _, _, csize, usize, nlen, xlen = struct.unpack("<4sHHHHHIIIHH", hdr)
            if not nlen:  # not a header a zip writer makes: damage
                return
            raw_name = fobj.read(nlen)
            extra = fobj.read(xlen)
            if (csize == 0xFFFFFFFF or usize == 0xFFFFFFFF) and not flags & 0x08:
                usize, csize = _zip64_sizes(extra, usize, csize)
            start = pos + 30 + nlen + xlen
            known = not flags & 0x08  # else sizes follow the data (a streamed zip): only deflate ends by itself
            mname = prefix + sanitize(raw_name.decode("utf-8" if flags & 0x800 else "cp437", "replace"))
            count += 1
            if count > self.limits.max_members:
                self.skip(mname, f"more than {self.limits.max_members} members; the rest were not read")
                return
            if flags & 0x1 or method not in (0, 8):
                self.skip(mname, "encrypted zip member; not read" if flags & 0x1 else
                          f"zip member compressed with method {method}; not read")
                if not known:
                    return
                pos = start + csize
                continue
            if not known and method == 0:
                self.skip(mname, "stored zip member of unknown size; the rest of the archive was not read")
                return
            member = _ZipLocal(fobj, start, method, csize if known else None)
            if not raw_name.endswith(b"/"):
                head, st = peek(_Guarded(member, mname, self))
                kind = _magic(head)
                if kind is None:
                    yield from self._emit(Member(mname, st, usize if known else None, None),
                                          compressed_size=csize if known else end - start)
                else:
                    yield from self._open_container(mname, st, head, kind, depth + 1,
                                                    size=csize if known else end - start)
            if known:
                pos = start + csize
            else:
                done = member.finish()  # read through the rest of the deflate stream to find where it ends
                if done is None:
                    return
                pos = _after_descriptor(fobj, done)
                if pos is None:
                    return

    # ----------------------------------------------------------------------------------------
    def _emit(self, m: Member, compressed_size: int | None = None) -> Iterator[Member]:
        m.path = printable(m.path)
        with self._lock:
            self.files += 1
            self.names.append(m.path)
            if len(self._tops) < 2:
                self._tops.add(m.path.split("/", 1)[0])
            self._all_nested = self._all_nested and "/" in m.path
        if self.files > self.limits.max_members:
            self._skip_once(m.path, self._too_many)
            return
        if self.bytes_read >= self.limits.max_total_bytes:
            self._skip_once(m.path, f"bundle already gave {self.limits.max_total_bytes} bytes (--max-total-bytes); "
                                    f"this file and those after it were not read")
            return
        m.stream = _Limited(m.stream, m.path, self, compressed_size)
        yield m


class _Guarded:
    """Turns a decompression failure into end-of-data plus a recorded skip (salvage what was readable).
    With `compressed_size`, also ends the data at twice the ratio limit: a tar reads through (skips) the
    unread part of every member, so a bomb member stopped by _Limited would otherwise be decompressed whole
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
            self._bundle.skip(self._name, f"compressed data is truncated or corrupt; read up to the damage ({_why(e)})")
            return b""

    read1 = read

    @property
    def cut(self) -> bool:
        return self._failed


class _TarData:
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


class _Sparse:
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


MAX_TAR_META = 1 << 20  # bytes of extended headers (pax, GNU long names, sparse maps) before one member


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


class _TarInfo(tarfile.TarInfo):
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


class _Limited:
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
            self._bundle.skip(self._name, f"read only the first {self._n} bytes: data is truncated or corrupt ({_why(e)})")
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


class _ZipLocal:
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


def _zip64_sizes(extra: bytes, usize: int, csize: int) -> tuple[int, int]:
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


def _after_descriptor(fobj: BinaryIO, pos: int) -> int | None:
    """Offset of the next local header after a data descriptor (12 to 24 bytes, with or without its signature)."""
    fobj.seek(pos)
    window = fobj.read(32)
    nxt = window.find(b"PK\x03\x04", 12)
    return pos + nxt if 0 <= nxt <= 24 else None


def _decompressor(kind: str, stream: BinaryIO, head: bytes = b"") -> BinaryIO:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")
    if kind == "zstd":
        return _Zstd(stream, head)
    if kind == "bzip2":
        return bz2.BZ2File(stream)
    return _Xz(stream)


def _why(e: BaseException) -> str:
    return (str(e) or type(e).__name__).splitlines()[0][:160]


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISLNK, "symbolic link"), (stat.S_ISDIR, "folder")):
        if test(mode):
            return name
    return "special file"


def _tar_type(ti: tarfile.TarInfo) -> str:
    if ti.issym():
        return f"symbolic link to {ti.linkname!r}"
    if ti.islnk():
        return f"hard link to {ti.linkname!r}"
    if ti.ischr() or ti.isblk():
        return "device node"
    if ti.isfifo():
        return "fifo"
    return "special member"
