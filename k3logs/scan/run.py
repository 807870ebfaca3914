"""Batch-scan a folder of support bundles into OUT/incidents.parquet (one row per bundle) and OUT/reports/
(the JSON report of each bundle).

Every entry directly under ARCHIVE that is a folder or an archive file is one bundle. `scan_one` analyses one
bundle and returns its row and report; it runs in worker processes here (`run_local`) or as Ray tasks
(ray.py), and never raises: a bundle that fails gives a row with its one-line error, and its row holds
only values the table can store. A bundle that runs longer than the time limit has its worker killed. The
parent is the only writer (workers and Ray nodes never write), and writes every file atomically.

Resuming: a bundle whose row in OUT has the same content hash and the same analysis key (k3logs version,
settings, pattern files) and whose report is still there is not analysed again; the worker only hashes it.
"""
from __future__ import annotations

import os
import re
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from k3logs.catalogue.load import load_catalogue
from k3logs.catalogue.signatures import Catalogue
from k3logs.errors import BundleError, ExitStatus, UsageError
from k3logs.progress import NullDisplay
from k3logs.settings import Settings

from .find import ARCHIVE_SUFFIXES, REPORTS, analysis_key, find_bundles, one_bundle_warning, report_names
from .local import run_local
from .table import SCHEMA, TABLE, _atomic_write, read_table, write_table
from .work import BUNDLE_TIMEOUT_S, Entry, Outcome, _out_of_range, clean_row, one_line_error

CHECKPOINT_S = 30.0        # an interrupted scan keeps the rows finished up to this long ago


@dataclass
class ScanResult:
    out: Path
    rows: list[dict]
    analysed: list[str]   # bundles analysed in this run
    unchanged: list[str]  # bundles whose rows were kept (same content hash and analysis key)
    others: list[str]     # files under ARCHIVE that are not bundles
    warning: str | None = None  # why ARCHIVE looks like one bundle itself

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


class Terminated(KeyboardInterrupt):
    """SIGTERM: the scan stops as on Ctrl-C (workers stopped, the rows finished so far written)."""


@contextmanager
def sigterm_stops_the_scan() -> Iterator[None]:
    """Within it, SIGTERM raises Terminated (in the main thread only: elsewhere Python cannot handle signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise Terminated

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def scan(archive: Path, out: Path, settings: Settings, catalogue: Catalogue, key: str, jobs: int,
         ray_address: str | None = None, display: NullDisplay | None = None,
         bundle_timeout: float | None = None) -> ScanResult:
    """Scan every bundle under `archive` into `out` (see the module's docstring), each bundle given at most
    `bundle_timeout` seconds (default BUNDLE_TIMEOUT_S)."""
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    timeout = BUNDLE_TIMEOUT_S if bundle_timeout is None else bundle_timeout
    if not timeout > 0:  # also NaN
        raise UsageError(f"--bundle-timeout must be more than 0 seconds, not {timeout:g}")
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
    last_write, unsaved = time.monotonic(), False
    if ray_address:
        from .ray import run_ray
        outcomes = run_ray(entries, catalogue, settings, ray_address, jobs, timeout)
    else:
        outcomes = run_local(entries, catalogue, settings, jobs, timeout)
    display.start(len(entries), sum(e.bytes for e in entries))
    try:
        for o in outcomes:  # None: no bundle finished, but time went by
            if o is not None:
                entry = by_name[o.rel]
                done[o.rel] = previous[o.rel] if o.unchanged else _finish(out, entry, o, key, settings)
                (unchanged if o.unchanged else analysed).append(o.rel)
                display.advance(entry.bytes, worked=not o.unchanged)
                unsaved = True
            if unsaved and time.monotonic() - last_write > CHECKPOINT_S:
                _checkpoint(out, entries, done, previous)
                last_write, unsaved = time.monotonic(), False
    finally:  # also on Ctrl-C: stop the workers, keep what is finished
        outcomes.close()
        display.close()
        _checkpoint(out, entries, done, previous)
    return ScanResult(out, [done[e.rel] for e in entries], sorted(analysed), sorted(unchanged), others,
                      one_bundle_warning(archive, others))


def _finish(out: Path, entry: Entry, o: Outcome, key: str, settings: Settings) -> dict:
    """The full row of an analysed bundle, its report written (or a stale one removed when it failed).
    A row the table cannot store (which a worker should never send) is stored with those values left
    empty, or as an error row: it costs that bundle, never the scan."""
    row, report = {name: None for name in SCHEMA.names}, o.report
    try:
        fields, bad = clean_row(o.row)
        row |= fields
        if bad:
            row["error"] = one_line_error("; ".join(e for e in (row["error"], _out_of_range(bad)) if e), settings)
    except Exception as e:
        row["error"] = one_line_error(f"internal error (its row could not be stored: {type(e).__name__})", settings)
        report = None
    row.update(path=entry.rel, bytes=entry.bytes, analysis_key=key)
    target = out / entry.report
    if isinstance(report, bytes):
        _atomic_write(target, report)
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


def scan_archive(archive: str | Path, out: str | Path, settings: Settings | None = None,
                 patterns: tuple[Path, ...] = (), jobs: int | None = None, ray: str | None = None, display=None,
                 bundle_timeout: float | None = None):
    """Analyse every bundle directly under `archive` (folders and archive files) into `out`/incidents.parquet
    and `out`/reports/, `jobs` worker processes at a time (default: one per core), or as Ray tasks on the
    cluster at `ray` ('local' starts one here), each bundle given at most `bundle_timeout` seconds (default
    scan.BUNDLE_TIMEOUT_S; its row then says so). Resumes: unchanged bundles are not analysed again.
    Returns a scan.ScanResult (rows, counts, exit status)."""
    settings = settings or Settings()
    cat = load_catalogue(tuple(patterns))
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    if bundle_timeout is not None and not bundle_timeout > 0:
        raise UsageError(f"--bundle-timeout must be more than 0 seconds, not {bundle_timeout}")
    return scan(Path(archive), Path(out), settings, cat, analysis_key(settings, patterns), jobs or cores(), ray,
                display, bundle_timeout)


def cores() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def read_scan(out: str | Path) -> list[dict]:
    """The rows of `out`/incidents.parquet written by `scan_archive`."""
    path = Path(out) / TABLE
    if not path.is_file():
        raise BundleError(f"no scan in {out}: {TABLE} is missing (run `k3logs scan ARCHIVE -o {out}` first)")
    rows = read_table(path)
    if not rows:
        raise BundleError(f"{path} is empty or was not written by this version of k3logs scan; scan again")
    return rows
