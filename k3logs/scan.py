"""Batch-scan a folder of support bundles into OUT/incidents.parquet (one row per bundle) and OUT/reports/
(the JSON report of each bundle).

Every entry directly under ARCHIVE that is a folder or an archive file is one bundle. `scan_one` analyses one
bundle and returns its row and report; it runs in worker processes here (`run_local`) or as Ray tasks
(scan_ray.py), and never raises: a bundle that fails gives a row with its one-line error, and its row holds
only values the table can store. A bundle that runs longer than the time limit has its worker killed. The
parent is the only writer (workers and Ray nodes never write), and writes every file atomically.

Resuming: a bundle whose row in OUT has the same content hash and the same analysis key (k3logs version,
settings, pattern files) and whose report is still there is not analysed again; the worker only hashes it.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import math
import multiprocessing
import os
import pickle
import re
import signal
import stat
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from multiprocessing.connection import wait as wait_any
from pathlib import Path
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__, redact
from .api import analyze
from .assemble import FACT_KEYS, FACT_TYPES
from .catalogue import Catalogue, pattern_dirs
from .discover import container_kind
from .errors import BundleError, ExitStatus, K3LogsError, UsageError
from .progress import NullDisplay
from .report import Report
from .settings import Settings

TABLE = "incidents.parquet"
REPORTS = "reports"
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.zstd", ".tar.bz2", ".tar.xz", ".zip")
MAX_TASKS_PER_WORKER = 100  # then the worker process is replaced: what bundles left in its heap is given back
CHECKPOINT_S = 30.0        # an interrupted scan keeps the rows finished up to this long ago
BUNDLE_TIMEOUT_S = 300.0   # default --bundle-timeout
TICK_S = 1.0               # the longest the parent waits without looking at its clocks (time limits, checkpoints)
# tests only: "NAME=SECONDS" makes a worker sleep that long before analysing bundle NAME (a bundle that hangs)
SLOW_ENV = "K3LOGS_TEST_SLOW_BUNDLE"
HASH_CHUNK = 1 << 20
ERROR_CHARS = 400

ARROW_TYPES = {str: pa.string(), int: pa.int64(), bool: pa.bool_()}
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
    # each fact's distinct values, typed: [8], [570, 580] (nodes that differ), ["vllm/vllm-openai:kimi-k3"]
    ("environment", pa.struct([(k, pa.list_(ARROW_TYPES[FACT_TYPES.get(k, str)])) for k in FACT_KEYS])),
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
    report: bytes | None = None    # the report's JSON (UTF-8)
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


SNIFF_BYTES = 64 << 10  # of a loose file under ARCHIVE, to tell whether it is a log


def one_bundle_warning(archive: Path, others: list[str]) -> str | None:
    """ARCHIVE holds logs of its own (a vllm.log, a dmesg dump beside the folders): then it is one incident's
    bundle, whose node folders `scan` would take for separate incidents."""
    from .schema import LOG_KINDS
    from .sniff import sniff
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


# the columns a worker fills (the parent adds path, bytes, report and analysis_key)
ROW_FIELDS = [f for f in SCHEMA if f.name not in ("path", "bytes", "report", "analysis_key")]


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


# ----------------------------------------------------------------------------------------------
# worker processes
# ----------------------------------------------------------------------------------------------
PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """A worker must not outlive the scan, even one killed by SIGKILL: on Linux the kernel kills it when
    its parent exits; a thread that checks the parent every second covers other systems and the parent
    dying before prctl took hold."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="k3logs-parent-watch", daemon=True).start()


def _worker(conn, catalogue: Catalogue, settings: Settings, parent: int) -> None:
    """A worker process: says "ready", then takes bundles over `conn` and sends back their outcomes until
    it gets None or the pipe closes. The catalogue comes once, with the process."""
    # Ctrl-C is the parent's to handle (it stops the workers and writes the table)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    try:
        conn.send("ready")
        while (entry := conn.recv()) is not None:
            try:
                data = pickle.dumps(scan_entry(entry, catalogue, settings))
            except Exception as e:  # an outcome that cannot be pickled: the row says so
                data = pickle.dumps(Outcome(entry.rel, {"error": one_line_error(
                    f"internal error (its result could not be sent: {type(e).__name__})", settings)}))
            conn.send_bytes(data)
    except (EOFError, OSError):  # the parent is gone or stopped us
        pass
    # nothing to save here: skip the interpreter's teardown (most of a second with polars loaded)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class _Worker:
    """A worker process as the parent sees it: its pipe, whether it is ready, the bundle it is on."""

    def __init__(self, ctx, catalogue: Catalogue, settings: Settings):
        self.conn, theirs = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(theirs, catalogue, settings, os.getpid()), daemon=True)
        self.proc.start()
        theirs.close()
        self.ready = False
        self.entry: Entry | None = None
        self.deadline = math.inf
        self.done = 0

    def give(self, entry: Entry, timeout: float) -> None:
        self.entry, self.deadline = entry, time.monotonic() + timeout
        try:
            self.conn.send(entry)
        except OSError:  # it has just died: its sentinel says so next
            pass

    def stop(self) -> None:
        """Ask an idle worker to exit, kill one on a bundle (then `reap` it)."""
        if self.entry is None:
            try:
                self.conn.send(None)
            except OSError:
                pass
        else:
            self.proc.kill()
        self.conn.close()

    def reap(self, until: float) -> None:
        """Wait until `until` (monotonic) for a stopped worker to exit, then kill it."""
        self.proc.join(max(0.0, until - time.monotonic()))
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()

    def how_it_died(self) -> str:
        code = self.proc.exitcode
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                pass
        return f"exit status {code}"


def run_local(entries: list[Entry], catalogue: Catalogue, settings: Settings, jobs: int,
              timeout: float = BUNDLE_TIMEOUT_S) -> Iterator[Outcome | None]:
    """Outcomes of `entries` from `jobs` worker processes (spawned: nothing inherited from this process),
    each replaced after MAX_TASKS_PER_WORKER bundles. Also yields None at least every TICK_S while it waits,
    so that the caller can keep its own clocks. A bundle still running after `timeout` seconds has its worker
    killed and gets that as its error. A worker that dies (killed for memory, crashed) is replaced and its
    bundle retried at the end, alone; one that kills its worker again gets that as its error."""
    ctx = multiprocessing.get_context("spawn")
    todo, retry, retried = deque(entries), deque(), set()
    workers: list[_Worker] = []
    gone: list[_Worker] = []  # stopped, perhaps still exiting
    failed_starts = 0         # workers in a row that died before they were ready
    try:
        while todo or retry or any(w.entry for w in workers):
            busy = sum(w.entry is not None for w in workers)
            while len(workers) < min(jobs, len(todo) + busy + (1 if retry else 0)):
                workers.append(_Worker(ctx, catalogue, settings))
            for w in workers:
                if w.ready and w.entry is None:
                    if todo:
                        w.give(todo.popleft(), timeout)
                    elif retry and not any(x.entry for x in workers):
                        w.give(retry.popleft(), timeout)
            now = time.monotonic()
            wait_s = min([TICK_S] + [w.deadline - now for w in workers if w.entry])
            ready = set(wait_any([w.conn for w in workers] + [w.proc.sentinel for w in workers], max(0.0, wait_s)))
            if not ready:
                yield None
            now = time.monotonic()
            gone = [g for g in gone if g.proc.is_alive()]  # (is_alive reaps the ones that have exited)
            for w in list(workers):
                if w.conn in ready or w.proc.sentinel in ready:
                    try:
                        got = w.conn.recv()
                    except (EOFError, OSError):  # it died
                        workers.remove(w)
                        w.stop()
                        w.reap(now + 1.0)
                        if not w.ready:
                            failed_starts += 1
                            if failed_starts == 3:  # (one can be killed for memory; three in a row cannot start)
                                raise K3LogsError(f"worker processes cannot start ({w.how_it_died()})")
                        elif w.entry is not None and w.entry.rel not in retried:
                            retried.add(w.entry.rel)
                            retry.append(w.entry)
                        elif w.entry is not None:
                            yield Outcome(w.entry.rel, {"error": one_line_error(
                                f"its worker process died on it twice, the second time alone ({w.how_it_died()}: "
                                "out of memory, or a crash)", settings)})
                        continue
                    except Exception as e:  # the outcome could not be unpickled: the pipe is still whole
                        got = e
                    if not w.ready:
                        w.ready, failed_starts = True, 0
                        continue
                    entry, w.entry, w.deadline = w.entry, None, math.inf
                    w.done += 1
                    if w.done >= MAX_TASKS_PER_WORKER:
                        workers.remove(w)
                        w.stop()
                        gone.append(w)
                    yield checked(entry, got, settings)
                elif w.entry is not None and now >= w.deadline:
                    workers.remove(w)
                    w.stop()
                    gone.append(w)
                    yield timed_out(w.entry, timeout, settings)
    finally:  # also on Ctrl-C and SIGTERM: no worker is left behind
        for w in workers:
            w.stop()
        until = time.monotonic() + 2.0
        for w in workers + gone:
            w.reap(until)


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
        from .scan_ray import run_ray
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
