"""One bundle's work, the same in a worker process and in a Ray task: analysed within its time limit, its row made."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa

from k3logs.gate import release
from k3logs.catalogue.signatures import Catalogue
from k3logs.contract import Report
from k3logs.errors import K3LogsError
from k3logs.ingest.streams import container_kind
from k3logs.pipeline import analyze
from k3logs.report.assemble import FACT_KEYS
from k3logs.settings import Settings

from .find import _is_archive_name, content_hash
from .table import SCHEMA

# the columns a worker fills (the parent adds path, bytes, report and analysis_key)
ROW_FIELDS = [f for f in SCHEMA if f.name not in ("path", "bytes", "report", "analysis_key")]

MAX_TASKS_PER_WORKER = 100  # then the worker process is replaced: what bundles left in its heap is given back
BUNDLE_TIMEOUT_S = 300.0   # default --bundle-timeout
TICK_S = 1.0               # the longest the parent waits without looking at its clocks (time limits, checkpoints)
# tests only: "NAME=SECONDS" makes a worker sleep that long before analysing bundle NAME (a bundle that hangs)
SLOW_ENV = "K3LOGS_TEST_SLOW_BUNDLE"
ERROR_CHARS = 400


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
    report: bytes | None = None    # the report's JSON (UTF-8)
    unchanged: bool = False        # the hash matched `known_hash`: nothing was analysed


def one_line_error(message: str, settings: Settings) -> str:
    return release(" ".join(message.split()), settings, ERROR_CHARS)


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


def _row(report: Report, digest: str) -> dict:
    fc, rc = report.first_causal, report.root_cause
    return {
        "content_hash": digest, "healthy": report.healthy, "category": rc.category, "signature": rc.signature,
        "title": rc.title, "confidence": rc.confidence, "node": report.origin.node, "rank": report.origin.rank,
        "phase": report.phase, "first_causal_time": fc.timestamp if fc else None,
        "first_causal_file": fc.file if fc else None, "first_causal_line": fc.line if fc else None,
        "first_causal_text": fc.text if fc else None,
        "other_template": (report.other or {}).get("template"),
        "files": report.bundle.files, "lines": report.bundle.lines, "skipped": len(report.bundle.skipped),
        "environment": {k: list(dict.fromkeys(v["value"] for v in report.environment.values[k]))
                        if k in report.environment.values else None for k in FACT_KEYS},
    }


def _fits(value, typ: pa.DataType):
    """`value` as column type `typ` holds it (an ISO time parsed), or raise if it cannot hold it."""
    if pa.types.is_timestamp(typ) and isinstance(value, str):
        value = datetime.fromisoformat(value)
    pa.array([value], type=typ)
    return value


def clean_row(row: dict) -> tuple[dict, list[str]]:
    """`row` (ROW_FIELDS' columns) with every value the table cannot store (out of range, not a valid time,
    of another type) set to null, and the names of those columns (`environment.<fact>` for a fact)."""
    out, bad = {}, []
    for f in ROW_FIELDS:
        value = row.get(f.name)
        if pa.types.is_struct(f.type) and isinstance(value, dict):
            value = dict(value)
            for child in f.type:
                try:
                    value[child.name] = _fits(value.get(child.name), child.type)
                except Exception:
                    value[child.name] = None
                    bad.append(f"{f.name}.{child.name}")
            value = {child.name: value[child.name] for child in f.type}
        try:
            value = _fits(value, f.type)
        except Exception:
            value = None
            bad.append(f.name)
        out[f.name] = value
    return out, bad


def _out_of_range(bad: list[str]) -> str | None:
    return f"unreadable value(s) left empty: {', '.join(bad)}" if bad else None


def scan_one(entry: Entry, catalogue: Catalogue, settings: Settings) -> Outcome:
    """Hash one bundle and, unless it is unchanged, analyse it. Never raises: whatever goes wrong with a
    bundle (unreadable, hostile, a bug) is its row's error, and its row holds only values the table can
    store (any other is left empty and named in the error), so that the parent can always take it."""
    path, digest = Path(entry.path), None
    try:
        digest = content_hash(path)
        if digest == entry.known_hash:
            return Outcome(entry.rel, {"content_hash": digest}, unchanged=True)
        problem = _not_an_archive(path, entry.rel)
        if problem is None:
            report = analyze(path, settings, catalogue, display=entry.rel)
            row, bad = clean_row(_row(report, digest))
            error = "; ".join(e for e in (_damage(report, entry.rel), _out_of_range(bad)) if e)
            row["error"] = one_line_error(error, settings) if error else None
            return Outcome(entry.rel, row, report.to_json().encode("utf-8"))
    except K3LogsError as e:
        problem = str(e)
    except OSError as e:
        problem = f"cannot read {entry.rel}: {e.strerror or e}"
    except Exception as e:  # a bug must cost one row, not the scan; the row names it
        problem = f"internal error ({type(e).__name__}: {e})"
    return Outcome(entry.rel, {"content_hash": digest, "error": one_line_error(problem, settings)})


def scan_entry(entry: Entry, catalogue: Catalogue, settings: Settings) -> Outcome:
    """`scan_one` as a worker or Ray task runs it: with the tests' slow-bundle hook (SLOW_ENV), and a last
    boundary should even the error's text fail."""
    name, _, seconds = os.environ.get(SLOW_ENV, "").partition("=")
    if name and name == entry.rel:
        time.sleep(float(seconds))
    try:
        return scan_one(entry, catalogue, settings)
    except Exception as e:
        return Outcome(entry.rel, {"error": f"internal error ({type(e).__name__})"})


def timed_out(entry: Entry, timeout: float, settings: Settings) -> Outcome:
    return Outcome(entry.rel, {"error": one_line_error(
        f"timed out after {timeout:g} s: its worker was stopped (--bundle-timeout)", settings)})


def checked(entry: Entry, got, settings: Settings) -> Outcome:
    """What a worker sent back for `entry`, or an error outcome when it is not an outcome for that bundle."""
    if isinstance(got, Outcome) and got.rel == entry.rel and isinstance(got.row, dict):
        return got
    return Outcome(entry.rel, {"error": one_line_error(
        f"internal error (the worker sent back {type(got).__name__} instead of this bundle's row)", settings)})
