"""The library's entry points (the CLI is a thin layer over these)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from . import redact
from .assemble import make_report
from .catalogue import Catalogue, load_catalogue
from .discover import Bundle
from .errors import BundleError
from .evaluate import CaseScore, find_cases, load_truth, score
from .evidence import read_excerpts
from .ingest import Ingested, ingest
from .pipeline import Analysis, run, stream_events
from .report import Report
from .settings import Settings


def analyze(path: str | Path, settings: Settings | None = None, catalogue: Catalogue | None = None,
            context_lines: int = 0) -> Report:
    """Diagnose one bundle. Raises BundleError when nothing in it could be read (report-contract.md: exit 2).
    With `context_lines`, the report also holds that many lines of the bundle before and after every line
    it cites (`evidence_context`, for the HTML report)."""
    settings = settings or Settings()
    return report_of(run(path, settings, catalogue), str(path), settings, context_lines)


def report_of(analysis: Analysis, display_path: str, settings: Settings | None = None,
              context_lines: int = 0) -> Report:
    """The report of an analysis (secrets redacted unless the settings say not to)."""
    settings = settings or Settings()
    _check_readable(display_path, analysis.bundle, analysis.ingested)
    report = make_report(analysis, display_path)
    if context_lines > 0:
        report.evidence_context = read_excerpts(analysis.bundle, report, context_lines, settings)
    return redact.obj(report) if settings.redact else report


def _check_readable(path: str | Path, bundle: Bundle, ing: Ingested) -> None:
    """A bundle none of whose files holds text (empty, corrupt, binary, all skipped) cannot be analysed: saying
    'no incident found' would be a wrong answer, not a diagnosis."""
    if any(f.kind not in ("binary", "empty") for f in ing.files):
        return
    if not ing.files and not bundle.skipped:
        raise BundleError(f"{path} holds no files: nothing to analyse")
    kinds = Counter(f.kind for f in ing.files)
    parts = [f"{n} {k} file{'s' * (n > 1)}" for k, n in sorted(kinds.items())]
    if bundle.skipped:
        s = bundle.skipped[0]
        parts.append(f"{len(bundle.skipped)} skipped, first {bundle.display(s.file) or s.file}: {s.reason}")
    raise BundleError(f"nothing in {path} could be read as text ({'; '.join(parts)}); "
                      f"`k3logs sniff` lists every file and why")


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
    if settings.redact:  # names come from the bundle, and may hold secrets too
        rows = [redact.obj(r) for r in rows]
    return sorted(rows, key=lambda r: r.file)


def write_events(path: str | Path, out: Path, fmt: str = "parquet", settings: Settings | None = None,
                 catalogue: Catalogue | None = None) -> int:
    """Write every event of a bundle (schema.EVENT_SCHEMA) batch by batch; returns how many."""
    from .export import EventWriter
    settings = settings or Settings()
    n = 0
    try:
        with EventWriter(out, fmt) as writer:
            for batch in stream_events(path, settings, catalogue):
                if settings.redact:  # messages are redacted already; file and node names come from the bundle
                    batch = batch.with_columns(redact.expr(pl.col("file")), redact.expr(pl.col("node")))
                writer.write(batch)
                n += batch.height
    except BaseException:  # no half-written (or empty, for a missing bundle) file is left behind
        Path(out).unlink(missing_ok=True)
        raise
    if n == 0:  # every line of a readable file is an event: nothing could be read (report-contract.md: exit 2)
        Path(out).unlink(missing_ok=True)
        raise BundleError(f"no line of {path} could be read as text (it is empty, binary, corrupt or unreadable); "
                          f"`k3logs sniff` lists every file and why")
    return n


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
