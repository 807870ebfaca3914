"""The library's entry points (the CLI is a thin layer over these)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import redact
from .assemble import make_report
from .catalogue import Catalogue, load_catalogue
from .discover import Bundle
from .evaluate import CaseScore, find_cases, load_truth, score
from .evidence import read_excerpts
from .ingest import ingest
from .pipeline import Analysis, run, stream_events
from .report import Report
from .settings import Settings


def analyze(path: str | Path, settings: Settings | None = None, catalogue: Catalogue | None = None,
            context_lines: int = 0) -> Report:
    """Diagnose one bundle. With `context_lines`, the report also holds that many lines of the bundle
    before and after every line it cites (`evidence_context`, for the HTML report)."""
    settings = settings or Settings()
    return report_of(run(path, settings, catalogue), str(path), settings, context_lines)


def report_of(analysis: Analysis, display_path: str, settings: Settings | None = None,
              context_lines: int = 0) -> Report:
    """The report of an analysis (secrets redacted unless the settings say not to)."""
    settings = settings or Settings()
    report = make_report(analysis, display_path)
    if context_lines > 0:
        report.evidence_context = read_excerpts(analysis.bundle, report, context_lines, settings)
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
