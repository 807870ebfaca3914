"""Shared helpers for the ingest tests: tiny bundles on tmp_path (folders and archives built in memory) and
a one-call line parser. Every log line used with them is written inline in the tests (made-up hosts,
pids and times)."""
from __future__ import annotations

import gzip
import importlib.util
import io
import os
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Iterable, Mapping

# a pytest-xdist worker is one of as many processes as cores: polars' pool gets the cores left to each, as the
# CLI sizes it (k3logs/cli/main.py; two workers each with a pool of two spent an eighth of the corpus's time in
# hand-offs). Polars reads it once, when first imported: below (and so the warning filter that names a polars
# class is added in pytest_configure, not in pyproject.toml: pytest imports what that names before this file).
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "").isdigit():
    os.environ.setdefault("POLARS_MAX_THREADS", str(max(1, len(os.sched_getaffinity(0))
                                                        // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))

import polars as pl
import pytest
import zstandard

from k3logs.ingest.discover import Bundle
from k3logs.ingest.fold import fold as fold_rows
from k3logs.catalogue.formats import builtin_formats
from k3logs.ingest.lines import iter_line_batches
from k3logs.ingest.parse import FileContext, parse_batch
from k3logs.settings import Limits

Content = str | bytes


def as_bytes(data: Content) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


# ------------------------------------------------------------------------------------------------------
# bundles
# ------------------------------------------------------------------------------------------------------
def broken_pattern_file(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of the built-in pattern file `name` with its first `old` replaced by `new` (which must be there)."""
    from k3logs.resources import data_dir
    text = (data_dir("patterns") / name).read_text()
    assert old in text, old
    bad = tmp_path / name
    bad.write_text(text.replace(old, new, 1))
    return bad


def make_bundle(tmp_path: Path, files: Mapping[str, Content], name: str = "bundle") -> Path:
    """A folder bundle at tmp_path/name holding `files` ({"node-a/vllm.log": "...", ...})."""
    root = tmp_path / name
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(as_bytes(data))
    return root


def tar_bytes(files: Mapping[str, Content], compression: str = "", extra: Iterable[tarfile.TarInfo] = ()) -> bytes:
    """A tar archive in memory; compression '' | 'gz' | 'zst'. `extra` adds non-file members (links, fifos...)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in files.items():
            raw = as_bytes(data)
            ti = tarfile.TarInfo(name)
            ti.size = len(raw)
            ti.mtime = 1_780_000_000
            tf.addfile(ti, io.BytesIO(raw))
        for ti in extra:
            tf.addfile(ti)
    return compress(buf.getvalue(), compression)


def zip_bytes(files: Mapping[str, Content], extra: Iterable[tuple[zipfile.ZipInfo, bytes]] = ()) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, as_bytes(data))
        for zi, data in extra:
            zf.writestr(zi, data)
    return buf.getvalue()


def compress(data: bytes, how: str) -> bytes:
    if how in ("", None):
        return data
    if how == "gz":
        return gzip.compress(data, mtime=0)
    if how == "zst":
        return zstandard.ZstdCompressor().compress(data)
    raise ValueError(how)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def read_bundle(path: Path, limits: Limits | None = None) -> tuple[Bundle, dict[str, bytes]]:
    """Iterate a bundle once: ({path as stored: bytes read}, with the bundle for skipped/display)."""
    b = Bundle(path, limits)
    got: dict[str, bytes] = {}
    for m in b.members():
        got[m.path] = m.stream.read()
    return b, got


def displayed(bundle: Bundle, got: Mapping[str, bytes]) -> dict[str, bytes]:
    return {bundle.display(k): v for k, v in got.items()}


def files_under(path: Path) -> set[Path]:
    return {p for p in path.rglob("*")}


# ------------------------------------------------------------------------------------------------------
# parsing
# ------------------------------------------------------------------------------------------------------
def parse_text(text: Content, kind: str = "vllm", wrappers: tuple[str, ...] = (), fold: bool = False,
               batch_bytes: int = 1 << 20, max_line: int = 1 << 20) -> pl.DataFrame:
    """Parse a whole text as one bundle file of `kind` (lines -> parse_batch [-> fold]), rows in line order."""
    parts = [parse_batch(b, FileContext("t.log", kind, tuple(wrappers)), builtin_formats())
             for b in iter_line_batches(io.BytesIO(as_bytes(text)), batch_bytes, max_line)]
    if not parts:
        return pl.DataFrame()
    df = pl.concat(parts, how="diagonal_relaxed")
    if fold:
        df = fold_rows(df)
    return df


def parse_lines(lines: Iterable[str], kind: str = "vllm", wrappers: tuple[str, ...] = (),
                fold: bool = False) -> pl.DataFrame:
    """Parsed rows for `lines` (each one physical line, given without its newline)."""
    return parse_text("".join(ln + "\n" for ln in lines), kind, wrappers, fold)


def row(df: pl.DataFrame, line: int, sub: int = 0) -> dict:
    """The parsed row of physical line `line` (and sub-row `sub`) as a dict."""
    hit = df.filter((pl.col("line") == line) & (pl.col("sub") == sub))
    assert hit.height == 1, f"expected one row for line {line} sub {sub}, got {hit.height}"
    return hit.row(0, named=True)


def span(r: Mapping) -> tuple[int, int]:
    end = r.get("_line_end")
    return r["line"], (end if end is not None else r["line"])


# ------------------------------------------------------------------------------------------------------
# analysis helpers (catalogue, detect, attribute, clock, decide, report, cli tests)
# ------------------------------------------------------------------------------------------------------
TESTS_DIR = Path(__file__).resolve().parent


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than 20 s (still runs by default; deselect with -m 'not slow')")
    # (a map_elements polars could do vectorised is an error: heavy lifting is vectorised)
    config.addinivalue_line("filterwarnings", "error::polars.exceptions.PolarsInefficientMapWarning")
    if FIRED_DIR not in os.environ:   # (xdist workers inherit it; setdefault would make a directory for each)
        os.environ[FIRED_DIR] = tempfile.mkdtemp(prefix="k3logs-fired-")
    # the suite starts k3logs in new processes (scan's workers, Ray's, the CLI's) hundreds of times: they share one
    # bytecode cache, as an installed tool has one (the test install skips compiling what it installs, and with
    # PYTHONDONTWRITEBYTECODE set every process compiled the modules it imports again, most of a second each)
    if PYCACHE not in os.environ:
        os.environ[PYCACHE] = os.environ["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="k3logs-pycache-")
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


# every cause signature fires on some corpus case (tools/coverage.py). Each case's verdict test records what
# fired on it and the run checks the union once every case has been seen: a test over the whole corpus had to
# analyse every case again on one worker, minutes of the suite's ten.
FIRED_DIR = "K3LOGS_TEST_FIRED_DIR"
PYCACHE = "K3LOGS_TEST_PYCACHE"


def record_fired(case: str, signatures: Iterable[str]) -> None:
    (Path(os.environ[FIRED_DIR]) / f"{case}.txt").write_text("".join(f"{s}\n" for s in sorted(set(signatures))))


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput") or FIRED_DIR not in os.environ:
        return   # (a worker: the controller checks)
    if PYCACHE in os.environ:
        shutil.rmtree(os.environ[PYCACHE], ignore_errors=True)
    records = Path(os.environ.pop(FIRED_DIR))
    fired = {s for f in records.glob("*.txt") for s in f.read_text().split()}
    seen, cases = len(list(records.glob("*.txt"))), len(list((TESTS_DIR.parent / "corpora").glob("*/truth.json")))
    shutil.rmtree(records, ignore_errors=True)
    if seen < cases:
        return   # (a selection of the tests: not every case was analysed)
    spec = importlib.util.spec_from_file_location("k3logs_coverage_tool", TESTS_DIR.parent / "tools" / "coverage.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    from k3logs.catalogue.load import load_catalogue
    missing = tool.unfired(load_catalogue(), fired)
    if missing:
        out = session.config.get_terminal_writer()
        out.line()
        out.line(f"FAILED: {len(missing)} cause signatures fire on no corpus case (tools/coverage.py):", red=True)
        for line in missing:
            out.line(f"  {line}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# the modules that read every corpus case share one analysis of each (tests/metamorphic/bed.py caches it per
# process): under pytest-xdist (`-n auto --dist loadgroup`) each case's tests run in one worker, the cases split
# over CORPUS_GROUPS groups by name, which the workers share out (in one or two groups they were the suite's
# longest path); other tests go to any worker
CORPUS_MODULES = ("test_corpora", "test_acceptance_corpora", "test_metamorphic", "test_render_corpora")
CORPUS_GROUPS = 48   # (8 left a worker idle for a minute at the end of the run, at 440 cases; a group is ~30 cases now)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    import zlib
    for item in items:
        if item.module is not None and item.module.__name__ in CORPUS_MODULES:
            case = item.callspec.params.get("case") if hasattr(item, "callspec") else None
            # (a test over the whole corpus analyses every case itself: a group of its own, not on top of one)
            group = zlib.crc32(case.encode()) % CORPUS_GROUPS if isinstance(case, str) else "whole"
            item.add_marker(pytest.mark.xdist_group(f"corpus-{group}"))


@pytest.fixture(scope="session")
def catalogue():
    """The built-in catalogue, loaded once."""
    from k3logs.catalogue.load import load_catalogue
    return load_catalogue()


def analyze_files(tmp_path: Path, files: Mapping[str, Content], name: str = "bundle", keep_all: bool = False,
                  settings=None, catalogue=None):
    """Write `files` as a folder bundle and run the whole pipeline on it: the Analysis."""
    from k3logs.pipeline import run
    return run(make_bundle(tmp_path, files, name), settings, catalogue, keep_all=keep_all)


def report_of(analysis, path: str = "bundle"):
    from k3logs.report.assemble import make_report
    return make_report(analysis, path)


def event_at(events: pl.DataFrame, file: str, line: int) -> dict:
    """The one event of `file` whose span [line, line_end] holds physical line `line` (the narrowest)."""
    end = "line_end" if "line_end" in events.columns else "line"
    hit = events.filter((pl.col("file") == file) & (pl.col("line") <= line) & (pl.col(end) >= line))
    assert hit.height, f"no event holds {file}:{line}"
    return hit.sort(pl.col(end) - pl.col("line")).row(0, named=True)


def text_of(*items: str) -> str:
    """Log text from lines (each gets its newline)."""
    return "".join(i + "\n" for i in items)
