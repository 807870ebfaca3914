"""Walk a bundle (folder, archive, compressed file, plain file; archives nested in archives) as a stream of
members. Nothing is extracted to disk; a member is read once, in order, as a binary stream. Whatever is
not read (links, devices, limits hit, corrupt data) is recorded in `Bundle.skipped` with a reason."""
from __future__ import annotations

import functools
import io
import os
import posixpath
import stat
import struct
import tarfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from k3logs.errors import BundleError
from k3logs.settings import Limits

from .archives import TAR_ERRORS, Sparse, TarData, TarInfo, ZipLocal, after_descriptor, file_type, tar_type, zip64_sizes
from .names import printable, sanitize
from .streams import Guarded, Limited, decompressor, error_text, kind_of_head, peek, read_up_to


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
            kind = kind_of_head(head)
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
                    self.skip(r, f"not a regular file ({file_type(lst.st_mode)}); never opened")

        yield from walk(self.path, "", 0)

    def _open_file(self, path: Path, rel: str, st: os.stat_result) -> Iterator[Member]:
        try:
            fh = open(path, "rb", buffering=0)
        except OSError as e:
            self.skip(rel, f"cannot open: {e.strerror or e}")
            return
        with fh:
            head, stream = peek(fh)
            kind = kind_of_head(head)
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
        inner = decompressor(kind, stream, head)
        inner_head, inner_stream = peek(Guarded(inner, name, self, compressed_size=size), 512)
        inner_kind = kind_of_head(inner_head)
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
            tf = tarfile.open(fileobj=stream, mode="r|", tarinfo=TarInfo)
        except TAR_ERRORS as e:
            self.skip(name, f"corrupt or unreadable tar archive: {error_text(e)}")
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
                    self.skip(mname, f"not a regular file ({tar_type(ti)}); never opened")
                    continue
                # straight from the archive stream (tarfile's own reader drops a whole chunk at the damage);
                # sparse members need tarfile's map, and only their data blocks are stored
                stored = ti.size if ti.sparse is None else sum(size for _, size in ti.sparse)
                bound = min(stored, compressed_size) if compressed_size else stored
                if ti.sparse is None:
                    fobj = TarData(tf.fileobj, ti.size, mname, self)
                else:
                    fobj = Sparse(tf.extractfile(ti), stored, holes, mname, self)
                head, s = peek(fobj)
                kind = kind_of_head(head)
                if kind is None:
                    yield from self._emit(Member(mname, s, ti.size, float(ti.mtime)), compressed_size=bound)
                else:
                    yield from self._open_container(mname, s, head, kind, depth + 1, size=bound)
        except TAR_ERRORS as e:
            if name not in self._cut:  # else the reason is already recorded
                self.skip(name, f"archive is truncated or corrupt after {count} member(s): {error_text(e)}")
            return
        bad = getattr(tf, "_k3_bad_header", None)  # tarfile ends quietly at a damaged header
        if bad is not None and name not in self._cut:
            self.skip(name, f"archive is truncated or corrupt after {count} member(s): {error_text(bad)}; "
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
            self.skip(name, f"corrupt zip archive: {error_text(e)}; members read from their local headers up to the damage")
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
                self.skip(mname, f"not a regular file ({file_type(mode)}); never opened")
                continue
            if zi.flag_bits & 0x1:
                self.skip(mname, "encrypted zip member; not read")
                continue
            try:
                raw = zf.open(zi)
            except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError) as e:
                self.skip(mname, f"cannot open zip member: {error_text(e)}")
                continue
            with raw:
                head, s = peek(Guarded(raw, mname, self))
                kind = kind_of_head(head)
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
                usize, csize = zip64_sizes(extra, usize, csize)
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
            member = ZipLocal(fobj, start, method, csize if known else None)
            if not raw_name.endswith(b"/"):
                head, st = peek(Guarded(member, mname, self))
                kind = kind_of_head(head)
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
                pos = after_descriptor(fobj, done)
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
        m.stream = Limited(m.stream, m.path, self, compressed_size)
        yield m
