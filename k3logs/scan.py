"""Batch-scan a folder of support bundles into OUT/incidents.parquet (one row per bundle) and OUT/reports/
(the JSON report of each bundle).

Every entry directly under ARCHIVE that is a folder or an archive file is one bundle. `scan_one` analyses one
bundle and returns its row and report; it runs in worker processes here (`run_local`) or as Ray tasks
(scan_ray.py), and never raises: a bundle that fails gives a row with its one-line error. The parent is
the only writer (workers and Ray nodes never write), and writes every file atomically.

Resuming: a bundle whose row in OUT has the same content hash and the same analysis key (k3logs version,
settings, pattern files) and whose report is still there is not analysed again; the worker only hashes it.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import signal
import stat
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__, redact
from .api import analyze
from .assemble import FACT_KEYS
from .catalogue import Catalogue, pattern_dirs
from .discover import container_kind
from .errors import BundleError, ExitStatus, K3LogsError
from .progress import NullDisplay
from .report import Report
from .settings import Settings

TABLE = "incidents.parquet"
REPORTS = "reports"
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.zstd", ".tar.bz2", ".tar.xz", ".zip")
MAX_TASKS_PER_WORKER = 100  # then the worker process is replaced: what bundles left in its heap is given back
CHECKPOINT_S = 30.0        # an interrupted scan keeps the rows finished up to this long ago
HASH_CHUNK = 1 << 20
ERROR_CHARS = 400

SCHEMA = pa.schema([
    ("path", pa.string()),               # the entry's name under ARCHIVE
    ("content_hash", pa.string()),       # see content_hash()
    ("bytes", pa.int64()),               # size on disk
    ("healthy", pa.bool_()),
    ("category", pa.string()),
    ("signature", pa.string()),
    ("title", pa.string()),
    ("confidence", pa.string()),
    ("node", pa.string()),
    ("rank", pa.int64()),
    ("phase", pa.string()),
    ("first_causal_time", pa.timestamp("us", tz="UTC")),
    ("first_causal_file", pa.string()),
    ("first_causal_line", pa.int64()),
    ("first_causal_text", pa.string()),
    ("other_template", pa.string()),     # category other: the masked message
    ("files", pa.int64()),
    ("lines", pa.int64()),
    ("skipped", pa.int64()),             # files not read, or read in part (listed in the report)
    ("environment", pa.struct([(k, pa.string()) for k in FACT_KEYS])),
    ("error", pa.string()),              # null when the bundle was analysed whole
    ("report", pa.string()),             # the report's path relative to OUT (null without a report)
    ("analysis_key", pa.string()),
])


@dataclass(frozen=True)
class Entry:
    """One bundle to scan."""

    rel: str                       # its name under ARCHIVE: the row's path
    path: str                      # absolute path the workers open
    bytes: int                     # size on disk (of a folder: its files)
    report: str                    # where its report goes, relative to OUT
    known_hash: str | None = None  # the hash its row in OUT has, when that row may be reused


@dataclass
class Outcome:
    """What a worker gives back for one bundle."""

    rel: str
    row: dict                      # SCHEMA's columns except path, bytes, report and analysis_key
    report_json: str | None = None
    unchanged: bool = False        # the hash matched `known_hash`: nothing was analysed


# ----------------------------------------------------------------------------------------------
# what is a bundle, its hash, where its report goes
# ----------------------------------------------------------------------------------------------
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


# ----------------------------------------------------------------------------------------------
# one bundle (runs in a worker process or a Ray task)
# ----------------------------------------------------------------------------------------------
def one_line_error(message: str, settings: Settings) -> str:
    text = " ".join(message.split())
    return redact.clip(text, ERROR_CHARS) if settings.redact else redact.cut(text, ERROR_CHARS)


def _damage(report: Report, name: str) -> str | None:
    """Why an analysed bundle's row still carries an error: nothing in it could be read, or the archive
    itself (not one of its files) is corrupt or truncated, so the verdict rests on part of it."""
    own = [s.reason for s in report.bundle.skipped if s.file in (name, ".")]
    if report.bundle.files == 0 or report.bundle.lines == 0:
        why = own[0] if own else (report.bundle.skipped[0].reason if report.bundle.skipped else "no file holds a line")
        return f"nothing readable in the bundle: {why}"
    if own:
        return f"{own[0]} (what could be read was analysed)"
    return None


def _not_an_archive(path: Path, name: str) -> str | None:
    """A file named like an archive whose content is none: corrupt or mislabelled (analyze would read it as
    a plain file and find nothing)."""
    if path.is_dir() or not _is_archive_name(name):
        return None
    if path.stat().st_size == 0:
        return "the archive is empty (0 bytes)"
    if container_kind(path) is None:
        return "not an archive: no tar, zip, gzip, zstd, bzip2 or xz header although the name says so"
    return None


def _timestamp(iso: str | None) -> datetime | None:
    return datetime.fromisoformat(iso) if iso else None


def _row(report: Report, digest: str, error: str | None) -> dict:
    fc, rc = report.first_causal, report.root_cause
    return {
        "content_hash": digest, "healthy": report.healthy, "category": rc.category, "signature": rc.signature,
        "title": rc.title, "confidence": rc.confidence, "node": report.origin.node, "rank": report.origin.rank,
        "phase": report.phase, "first_causal_time": _timestamp(fc.timestamp) if fc else None,
        "first_causal_file": fc.file if fc else None, "first_causal_line": fc.line if fc else None,
        "first_causal_text": fc.text if fc else None,
        "other_template": (report.other or {}).get("template"),
        "files": report.bundle.files, "lines": report.bundle.lines, "skipped": len(report.bundle.skipped),
        "environment": {k: report.environment.facts.get(k) for k in FACT_KEYS}, "error": error,
    }


def scan_one(entry: Entry, catalogue: Catalogue, settings: Settings) -> Outcome:
    """Hash one bundle and, unless it is unchanged, analyse it. Never raises for a bad bundle."""
    path = Path(entry.path)
    try:
        digest = content_hash(path)
    except OSError as e:
        return Outcome(entry.rel, {"error": one_line_error(f"cannot read {entry.rel}: {e.strerror or e}", settings)})
    if digest == entry.known_hash:
        return Outcome(entry.rel, {"content_hash": digest}, unchanged=True)
    report = None
    try:
        problem = _not_an_archive(path, entry.rel)
        report = None if problem else analyze(path, settings, catalogue, display=entry.rel)
    except K3LogsError as e:
        problem = str(e)
    except OSError as e:
        problem = f"cannot read {entry.rel}: {e.strerror or e}"
    except Exception as e:  # a bug must cost one row, not the scan; the row names it
        problem = f"internal error ({type(e).__name__}: {e})"
    if report is None or problem:
        return Outcome(entry.rel, {"content_hash": digest, "error": one_line_error(problem, settings)})
    damage = _damage(report, entry.rel)
    return Outcome(entry.rel, _row(report, digest, damage and one_line_error(damage, settings)), report.to_json())


_WORKER: dict = {}


def _init_worker(catalogue: Catalogue, settings: Settings) -> None:
    # Ctrl-C is the parent's to handle (it stops handing out bundles and writes the table); a worker
    # interrupted in its queue would only print a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER.update(catalogue=catalogue, settings=settings)


def _scan_in_worker(entry: Entry) -> Outcome:
    return scan_one(entry, _WORKER["catalogue"], _WORKER["settings"])


def run_local(entries: list[Entry], catalogue: Catalogue, settings: Settings, jobs: int) -> Iterator[Outcome]:
    """Outcomes of `entries` from `jobs` worker processes (spawned: no state inherited from this process),
    each replaced after MAX_TASKS_PER_WORKER bundles. At most `jobs` bundles are handed out at a time:
    with a backlog queued, Python 3.11-3.13's max_tasks_per_child can stop replacing workers and hang
    (cpython gh-115634). A worker that dies (killed for memory, crashed) breaks the pool; the bundles it
    held are retried at the end one at a time, and one that kills its worker again gets that as its error."""
    pending = list(reversed(entries))
    suspects: list[Entry] = []
    while pending:
        yield from _pool_pass(pending, suspects, catalogue, settings, jobs)
    for entry in suspects:
        lone: list[Entry] = [entry]
        again: list[Entry] = []
        yield from _pool_pass(lone, again, catalogue, settings, 1)
        for e in again:
            yield Outcome(e.rel, {"error": one_line_error(
                "the worker process died while analysing this bundle (killed for memory, or crashed)", settings)})


def _pool_pass(pending: list[Entry], suspects: list[Entry], catalogue: Catalogue, settings: Settings,
               jobs: int) -> Iterator[Outcome]:
    """Run `pending` (popped from the end) until it is empty or the pool breaks (then the bundles in flight
    go to `suspects`)."""
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker,
                               initargs=(catalogue, settings), max_tasks_per_child=MAX_TASKS_PER_WORKER)
    inflight: dict = {}
    try:
        while pending or inflight:
            while pending and len(inflight) < jobs:
                entry = pending.pop()
                inflight[pool.submit(_scan_in_worker, entry)] = entry
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for fut in done:
                entry = inflight.pop(fut)
                try:
                    outcome = fut.result()
                except BrokenProcessPool:
                    suspects.append(entry)
                    suspects.extend(inflight.values())
                    inflight.clear()
                    return
                yield outcome
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# ----------------------------------------------------------------------------------------------
# the table
# ----------------------------------------------------------------------------------------------
def _atomic_write(path: Path, data: bytes | None = None, table: pa.Table | None = None) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if table is not None:
            pq.write_table(table, tmp, compression="zstd")
        else:
            tmp.write_bytes(data or b"")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_table(path: Path, rows: Iterable[dict]) -> None:
    """The rows sorted by path, written to a temporary file then renamed over `path`."""
    rows = sorted(rows, key=lambda r: r["path"])
    _atomic_write(path, table=pa.Table.from_pylist(rows, schema=SCHEMA))


def read_table(path: Path) -> list[dict]:
    """Rows of an incidents.parquet written by this version of scan ([] when there is none, or it has
    another schema: then every bundle is analysed again)."""
    if not path.is_file():
        return []
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError):
        return []
    return table.to_pylist() if table.schema.equals(SCHEMA) else []


@dataclass
class ScanResult:
    out: Path
    rows: list[dict]
    analysed: list[str]   # bundles analysed in this run
    unchanged: list[str]  # bundles whose rows were kept (same content hash and analysis key)
    others: list[str]     # files under ARCHIVE that are not bundles

    @property
    def failed(self) -> int:
        return sum(r["error"] is not None for r in self.rows)

    @property
    def incidents(self) -> int:
        return sum(r["healthy"] is False for r in self.rows)

    @property
    def exit_status(self) -> int:
        if self.failed:
            return ExitStatus.SOME_FAILED
        return ExitStatus.INCIDENT if self.incidents else ExitStatus.NO_INCIDENT


def scan(archive: Path, out: Path, settings: Settings, catalogue: Catalogue, key: str, jobs: int,
         ray_address: str | None = None, display: NullDisplay | None = None) -> ScanResult:
    """Scan every bundle under `archive` into `out` (see the module's docstring)."""
    display = display or NullDisplay()
    found, others = find_bundles(archive, out)
    if not found:
        raise BundleError(f"no bundle under {archive}: expected folders or archive files "
                          f"({', '.join(ARCHIVE_SUFFIXES)})")
    if out.exists() and not out.is_dir():
        raise BundleError(f"cannot write to {out}: it is a file, not a folder")
    (out / REPORTS).mkdir(parents=True, exist_ok=True)
    previous = {r["path"]: r for r in read_table(out / TABLE)}
    names = report_names(name for name, _, _ in found)
    entries = []
    for name, path, size in found:
        old = previous.get(name)
        reusable = (old is not None and old["analysis_key"] == key and old["error"] is None
                    and old["report"] == names[name] and (out / names[name]).is_file())
        entries.append(Entry(name, str(path.resolve()), size, names[name], old["content_hash"] if reusable else None))
    _remove_stale_reports(out, previous, names)

    done: dict[str, dict] = {}
    by_name = {e.rel: e for e in entries}
    analysed: list[str] = []
    unchanged: list[str] = []
    last_write = time.monotonic()
    if ray_address:
        from .scan_ray import run_ray
        outcomes = run_ray(entries, catalogue, settings, ray_address, jobs)
    else:
        outcomes = run_local(entries, catalogue, settings, jobs)
    display.start(len(entries), sum(e.bytes for e in entries))
    try:
        for o in outcomes:
            entry = by_name[o.rel]
            done[o.rel] = previous[o.rel] if o.unchanged else _finish(out, entry, o, key)
            (unchanged if o.unchanged else analysed).append(o.rel)
            display.advance(entry.bytes, worked=not o.unchanged)
            if time.monotonic() - last_write > CHECKPOINT_S:
                _checkpoint(out, entries, done, previous)
                last_write = time.monotonic()
    finally:  # also on Ctrl-C: stop the workers, keep what is finished
        outcomes.close()
        display.close()
        _checkpoint(out, entries, done, previous)
    return ScanResult(out, [done[e.rel] for e in entries], sorted(analysed), sorted(unchanged), others)


def _finish(out: Path, entry: Entry, o: Outcome, key: str) -> dict:
    """The full row of an analysed bundle, its report written (or a stale one removed when it failed)."""
    row = {name: None for name in SCHEMA.names} | o.row
    row.update(path=entry.rel, bytes=entry.bytes, analysis_key=key)
    target = out / entry.report
    if o.report_json is not None:
        _atomic_write(target, o.report_json.encode("utf-8"))
        row["report"] = entry.report
    else:
        target.unlink(missing_ok=True)
    return row


def _checkpoint(out: Path, entries: list[Entry], done: dict[str, dict], previous: dict[str, dict]) -> None:
    """Write the table as it stands: finished rows, and the old rows of bundles not reached yet (a resume
    checks their hashes again). Bundles no longer in ARCHIVE drop out."""
    rows = [done.get(e.rel) or previous.get(e.rel) for e in entries]
    write_table(out / TABLE, [r for r in rows if r is not None])


def _remove_stale_reports(out: Path, previous: dict[str, dict], names: dict[str, str]) -> None:
    """Reports of bundles no longer in ARCHIVE (only files this scan names itself: reports/<safe>.json)."""
    keep = set(names.values())
    for row in previous.values():
        rep = row.get("report")
        if rep and rep not in keep and re.fullmatch(rf"{REPORTS}/[A-Za-z0-9_][A-Za-z0-9._-]*\.json", rep):
            (out / rep).unlink(missing_ok=True)
