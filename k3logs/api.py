"""The library's entry points (the CLI is a thin layer over these)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import redact
from .assemble import make_report
from .catalogue import Catalogue, load_catalogue
from .discover import Bundle
from .errors import BundleError, UsageError
from .evaluate import CaseScore, find_cases, load_truth, score
from .ingest import ingest
from .pipeline import run, stream_events
from .report import Report
from .settings import Settings


def analyze(path: str | Path, settings: Settings | None = None, catalogue: Catalogue | None = None,
            display: str | None = None) -> Report:
    """Diagnose one bundle; the report names it `display` (default: `path` as given)."""
    settings = settings or Settings()
    analysis = run(path, settings, catalogue)
    report = make_report(analysis, str(path) if display is None else display)
    return redact.obj(report) if settings.redact else report


@dataclass
class SniffRow:
    file: str
    kind: str
    reason: str
    lines: int
    bytes: int


def sniff_bundle(path: str | Path, settings: Settings | None = None) -> list[SniffRow]:
    """What each file of a bundle is (kind by content, with the reason), with its line and byte counts."""
    settings = settings or Settings()
    bundle = Bundle(path, settings.limits)
    ing = ingest(bundle, settings, keep=None, parse=False)
    rows = [SniffRow(bundle.display(f.file), f.kind, f.reason, f.lines, f.bytes) for f in ing.files]
    rows += [SniffRow(bundle.display(s.file), "skipped", s.reason, 0, 0) for s in bundle.skipped]
    return sorted(rows, key=lambda r: r.file)


def write_events(path: str | Path, out: Path, fmt: str = "parquet", settings: Settings | None = None,
                 catalogue: Catalogue | None = None) -> int:
    """Write every event of a bundle (schema.EVENT_SCHEMA) batch by batch; returns how many."""
    from .export import EventWriter
    n = 0
    with EventWriter(out, fmt) as writer:
        for batch in stream_events(path, settings, catalogue):
            writer.write(batch)
            n += batch.height
    return n


def scan_archive(archive: str | Path, out: str | Path, settings: Settings | None = None,
                 patterns: tuple[Path, ...] = (), jobs: int | None = None, ray: str | None = None, display=None):
    """Analyse every bundle directly under `archive` (folders and archive files) into `out`/incidents.parquet
    and `out`/reports/, `jobs` worker processes at a time (default: one per core), or as Ray tasks on the
    cluster at `ray` ('local' starts one here). Resumes: unchanged bundles are not analysed again.
    Returns a scan.ScanResult (rows, counts, exit status)."""
    from .scan import analysis_key, scan
    settings = settings or Settings()
    cat = load_catalogue(tuple(patterns))
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    return scan(Path(archive), Path(out), settings, cat, analysis_key(settings, patterns), jobs or cores(), ray,
                display)


def cores() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def read_scan(out: str | Path) -> list[dict]:
    """The rows of `out`/incidents.parquet written by `scan_archive`."""
    from .scan import TABLE, read_table
    path = Path(out) / TABLE
    if not path.is_file():
        raise BundleError(f"no scan in {out}: {TABLE} is missing (run `k3logs scan ARCHIVE -o {out}` first)")
    rows = read_table(path)
    if not rows:
        raise BundleError(f"{path} is empty or was not written by this version of k3logs scan; scan again")
    return rows


def evaluate_corpus(root: Path, settings: Settings | None = None,
                    catalogue: Catalogue | None = None) -> list[CaseScore]:
    cat = catalogue or load_catalogue()
    scores = []
    for case in find_cases(Path(root)):
        truth = load_truth(case)
        bundle = case / "bundle"
        try:
            report = analyze(bundle, settings, cat)
        except Exception as e:  # one broken case must not stop the evaluation
            s = CaseScore(case.name, bool(truth.get("healthy")))
            s.error = f"{type(e).__name__}: {e}"
            scores.append(s)
            continue
        scores.append(score(case.name, truth, report))
    return scores
