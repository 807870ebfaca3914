"""Which entries of an archive are bundles, what each holds (its content hash) and where its report goes."""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import asdict, replace
from pathlib import Path
from typing import Iterable

from k3logs import __version__
from k3logs.catalogue.load import pattern_dirs
from k3logs.errors import BundleError
from k3logs.ingest.streams import container_kind
from k3logs.settings import Settings

REPORTS = "reports"
SNIFF_BYTES = 64 << 10  # of a loose file under ARCHIVE, to tell whether it is a log
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.zstd", ".tar.bz2", ".tar.xz", ".zip")
HASH_CHUNK = 1 << 20


def _walk(root: Path) -> list[tuple[str, Path, os.stat_result]]:
    """(relative POSIX path, path, lstat) of everything below a folder that is not a folder, sorted by path.
    Links are not followed (a link is hashed as its target's text, never opened)."""
    out = []
    for d, dirs, files in os.walk(root, onerror=None):
        for name in dirs + files:
            p = Path(d) / name
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                out.append((p.relative_to(root).as_posix(), p, st))
    return sorted(out, key=lambda t: t[0])


def content_hash(path: Path) -> str:
    """blake2b (64-byte digest, hex) of a bundle. A file: its bytes, so it equals `b2sum FILE`. A folder: for
    each entry below it in sorted path order, its relative path, NUL, a type tag, NUL, then a regular file's
    size, NUL and bytes, or a link's target text. Renaming, adding, removing or changing any file changes it."""
    h = hashlib.blake2b()
    if not path.is_dir():
        with open(path, "rb") as fh:
            while chunk := fh.read(HASH_CHUNK):
                h.update(chunk)
        return h.hexdigest()
    for rel, p, st in _walk(path):
        h.update(os.fsencode(rel) + b"\0")
        if stat.S_ISREG(st.st_mode):
            h.update(b"file\0%d\0" % st.st_size)
            try:
                with open(p, "rb") as fh:
                    while chunk := fh.read(HASH_CHUNK):
                        h.update(chunk)
            except OSError as e:  # unreadable now: a different hash once it can be read
                h.update(b"unreadable\0%d" % (e.errno or 0))
        elif stat.S_ISLNK(st.st_mode):
            h.update(b"link\0" + os.fsencode(os.readlink(p)))
        else:
            h.update(b"special\0")  # fifos, sockets, devices are never opened
    return h.hexdigest()


def one_bundle_warning(archive: Path, others: list[str]) -> str | None:
    """ARCHIVE holds logs of its own (a vllm.log, a dmesg dump beside the folders): then it is one incident's
    bundle, whose node folders `scan` would take for separate incidents."""
    from k3logs.ingest.sniff import sniff
    from k3logs.schema import LOG_KINDS
    logs = []
    for name in others:
        try:
            with open(archive / name, "rb") as fh:
                kind = sniff(fh.read(SNIFF_BYTES)).kind
        except OSError:
            continue
        if kind in LOG_KINDS and kind != "log":
            logs.append(name)
    if not logs:
        return None
    shown = ", ".join(logs[:3]) + (f" and {len(logs) - 3} more" if len(logs) > 3 else "")
    return (f"{archive} holds logs of its own ({shown}): it looks like one bundle, whose folders are analysed "
            f"here as separate incidents; `k3logs analyze {archive}` diagnoses it as one")


def _is_archive_name(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def find_bundles(archive: Path, out: Path) -> tuple[list[tuple[str, Path, int]], list[str]]:
    """(name, path, bytes) of every bundle directly under ARCHIVE, sorted by name, and the names of the other
    files there (not folders, not archives by name or content). Hidden entries and OUT itself are left out."""
    if not archive.is_dir():
        what = "does not exist" if not archive.exists() else "is not a folder (use `k3logs analyze` for one bundle)"
        raise BundleError(f"cannot scan {archive}: it {what}")
    out_resolved = out.resolve()
    bundles, others = [], []
    try:
        entries = sorted(os.scandir(archive), key=lambda e: e.name)
    except OSError as e:
        raise BundleError(f"cannot list {archive}: {e.strerror or e}") from e
    for e in entries:
        p = Path(e.path)
        if e.name.startswith(".") or p.resolve() == out_resolved:
            continue
        try:
            if e.is_dir():
                bundles.append((e.name, p, sum(st.st_size for _, _, st in _walk(p) if stat.S_ISREG(st.st_mode))))
            elif e.is_file() and (_is_archive_name(e.name) or container_kind(p) is not None):
                bundles.append((e.name, p, e.stat().st_size))
            else:
                others.append(e.name)
        except OSError:  # unreadable: still a bundle, its row will say why
            bundles.append((e.name, p, 0))
    return bundles, others


def report_names(names: Iterable[str]) -> dict[str, str]:
    """A report path under OUT for each bundle name: reports/<name>.json where <name> holds only letters,
    digits, '.', '_' and '-' and starts with neither '.' nor '-'. A name that had to change, or that would
    collide with another (case-insensitively), gets a suffix from the hash of the original: no report can
    leave OUT/reports or overwrite another's."""
    out, used = {}, set()
    for name in sorted(names):
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".-")[:120] or "_"
        if safe != name or safe.lower() in used:
            tag = hashlib.blake2b(os.fsencode(name), digest_size=4).hexdigest()
            safe = f"{safe[:100]}-{tag}"
        base, n = safe, 2
        while safe.lower() in used:
            safe, n = f"{base}-{n}", n + 1
        used.add(safe.lower())
        out[name] = f"{REPORTS}/{safe}.json"
    return out


def analysis_key(settings: Settings, patterns: Iterable[Path] = ()) -> str:
    """What a row depends on besides the bundle: the k3logs version, the settings that change results, and
    the bytes of every pattern file (built-in and --patterns). Rows made with another key are redone."""
    h = hashlib.blake2b(digest_size=16)
    h.update(__version__.encode())
    h.update(json.dumps(asdict(replace(settings, jobs=0)), sort_keys=True).encode())
    for d in pattern_dirs(tuple(patterns)):
        for p in sorted(Path(d).rglob("*")):
            if p.is_file():
                h.update(os.fsencode(p.relative_to(d)) + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()
