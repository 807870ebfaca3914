"""Walk a bundle (folder, archive, compressed file, plain file; archives nested in archives) as a stream of
members. Nothing is extracted to disk; a member is read once, in order, as a binary stream. Whatever is
not read (links, devices, limits hit, corrupt data) is recorded in `Bundle.skipped` with a reason."""
from __future__ import annotations

import bz2
import functools
import gzip
import io
import lzma
import os
import posixpath
import stat
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
COMPRESSED_SUFFIXES = (".gz", ".tgz", ".zst", ".zstd", ".bz2", ".xz")


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


def sanitize(name: str) -> str:
    """A member name as a relative POSIX path: no leading '/', no '..' segments, no empty parts."""
    name = name.replace("\\", "/")
    parts = [p for p in posixpath.normpath("/" + name).split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or "_"


def _magic(head: bytes) -> str | None:
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:4] == b"\x28\xb5\x2f\xfd":
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


class Prepend:
    """A read-only stream whose first bytes were already read (to sniff it): gives them back first.
    Plain pass-through reads, no copies; a read may return less than asked (callers read until b"")."""

    def __init__(self, raw: BinaryIO, head: bytes):
        self._raw, self._head = raw, head

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
    head = b""
    while len(head) < n:
        chunk = stream.read(n - len(head))
        if not chunk:
            break
        head += chunk
    return head, Prepend(stream, head)


class Bundle:
    """One support bundle. Iterate `members()` once; then `skipped`, `files`, `bytes_read` are final."""

    def __init__(self, path: str | os.PathLike, limits: Limits | None = None):
        self.path = Path(path)
        self.limits = limits or Limits()
        self.skipped: list[Skip] = []
        self.names: list[str] = []
        self.files = 0
        self.bytes_read = 0
        self._lock = threading.Lock()  # groups may be read by several threads
        self._archive = False
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
        self.skipped.append(Skip(file, reason))

    @property
    def common_prefix(self) -> str:
        """The single top-level folder every archive member shares ('' for folders or mixed roots)."""
        if not self._archive or not self.names:
            return ""
        firsts = {n.split("/", 1)[0] for n in self.names}
        if len(firsts) == 1 and all("/" in n for n in self.names):
            return firsts.pop() + "/"
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
            for target, rel, st in self._walk_dir():
                yield functools.partial(self._open_file, target, rel, st)
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
                yield from self._emit(Member(self.path.name, stream, size, os.stat(self.path).st_mtime))
                return
            self._archive = True
            name = self.path.name
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
        if kind == "tar":
            yield from self._tar(name, prefix, stream, depth)
            return
        inner = _decompressor(kind, stream, head)
        inner_head, inner_stream = peek(_Guarded(inner, name, self), 512)
        inner_kind = _magic(inner_head)
        if inner_kind == "tar":
            yield from self._tar(name, prefix, inner_stream, depth, compressed_size=size)
        elif inner_kind is not None:
            yield from self._open_container(_strip_suffix(name), inner_stream, inner_head, inner_kind, depth + 1,
                                            top=top)
        else:
            single = _strip_suffix(posixpath.basename(name) if top else name)
            yield from self._emit(Member(single, inner_stream, None, None), compressed_size=size)

    def _tar(self, name: str, prefix: str, stream: BinaryIO, depth: int, compressed_size: int | None = None
             ) -> Iterator[Member]:
        """`compressed_size`: of the whole compressed tar, an upper bound on any member's share (ratio limit)."""
        try:
            tf = tarfile.open(fileobj=stream, mode="r|")
        except (tarfile.TarError, OSError, EOFError, zlib.error, zstandard.ZstdError, lzma.LZMAError) as e:
            self.skip(name, f"corrupt or unreadable tar archive: {_why(e)}")
            return
        count = 0
        try:
            for ti in tf:
                count += 1
                mname = prefix + sanitize(ti.name)
                if ti.isdir():
                    continue
                if count > self.limits.max_members:
                    self.skip(mname, f"more than {self.limits.max_members} members; the rest were not read")
                    break
                if not ti.isreg():
                    self.skip(mname, f"not a regular file ({_tar_type(ti)}); never opened")
                    continue
                fobj = tf.extractfile(ti)
                if fobj is None:
                    continue
                head, s = peek(fobj)
                kind = _magic(head)
                if kind is None:
                    yield from self._emit(Member(mname, s, ti.size, float(ti.mtime)), compressed_size=compressed_size)
                else:
                    yield from self._open_container(mname, s, head, kind, depth + 1, size=ti.size)
        except (tarfile.TarError, OSError, EOFError, zlib.error, zstandard.ZstdError, lzma.LZMAError) as e:
            self.skip(name, f"archive is truncated or corrupt after {count} member(s): {_why(e)}")

    def _zip(self, name: str, prefix: str, stream: BinaryIO, seekable: BinaryIO | None, depth: int
             ) -> Iterator[Member]:
        fobj: BinaryIO
        if seekable is not None and seekable.seekable():
            seekable.seek(0)
            fobj = seekable
        else:
            data = stream.read(self.limits.max_nested_zip_bytes + 1)
            if len(data) > self.limits.max_nested_zip_bytes:
                self.skip(name, f"zip inside an archive larger than {self.limits.max_nested_zip_bytes} bytes; not opened")
                return
            fobj = io.BytesIO(data)
        try:
            zf = zipfile.ZipFile(fobj)
            infos = zf.infolist()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
            self.skip(name, f"corrupt zip archive: {_why(e)}")
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
                    yield from self._open_container(mname, s, head, kind, depth + 1, size=zi.file_size)

    # ----------------------------------------------------------------------------------------
    def _emit(self, m: Member, compressed_size: int | None = None) -> Iterator[Member]:
        with self._lock:
            self.files += 1
            self.names.append(m.path)
        if self.files > self.limits.max_members:
            self.skip(m.path, f"more than {self.limits.max_members} files; not read")
            return
        if self.bytes_read >= self.limits.max_total_bytes:
            self.skip(m.path, f"bundle already gave {self.limits.max_total_bytes} bytes (--max-total-bytes); not read")
            return
        m.stream = _Limited(m.stream, m.path, self, compressed_size)
        yield m


class _Guarded:
    """Turns a decompression failure into end-of-data plus a recorded skip (salvage what was readable)."""

    def __init__(self, raw: BinaryIO, name: str, bundle: Bundle):
        self._raw, self._name, self._bundle, self._failed = raw, name, bundle, False

    def read(self, n: int | None = -1) -> bytes:
        if self._failed:
            return b""
        try:  # read1: one decompression step, so data decoded before the damage is not lost with it
            return self._raw.read1(n) if hasattr(self._raw, "read1") else self._raw.read(n)
        except (OSError, EOFError, zlib.error, zstandard.ZstdError, lzma.LZMAError, zipfile.BadZipFile,
                ValueError) as e:
            self._failed = True
            self._bundle.skip(self._name, f"compressed data is truncated or corrupt; read up to the damage ({_why(e)})")
            return b""

    read1 = read


class _Zstd:
    """zstandard's stream reader ends quietly on truncated data: a first frame that declares its size and gives
    less is reported as damage (EOFError), like gzip does."""

    def __init__(self, stream: BinaryIO, head: bytes):
        self._r = zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)
        try:
            size = zstandard.get_frame_parameters(head).content_size
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


def _decompressor(kind: str, stream: BinaryIO, head: bytes = b"") -> BinaryIO:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")
    if kind == "zstd":
        return _Zstd(stream, head)
    if kind == "bzip2":
        return bz2.BZ2File(stream)
    return lzma.LZMAFile(stream)


def _strip_suffix(name: str) -> str:
    low = name.lower()
    if low.endswith(".tgz"):
        return name[:-4] + ".tar"
    for suf in COMPRESSED_SUFFIXES:
        if low.endswith(suf):
            return name[: -len(suf)] or name
    return name


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
