"""The library's entry points (the CLI is a thin layer over these)."""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import progress, redact
from .assemble import make_report
from .catalogue import Catalogue, load_catalogue
from .discover import Bundle
from .errors import BundleError, UsageError
from .evaluate import CaseScore, find_cases, load_truth, score
from .evidence import read_excerpts
from .export import write_events  # noqa: F401  (part of the library's API)
from .ingest import Ingested, ingest
from .pipeline import Analysis, run
from .report import Report
from .settings import Settings
from .toolcalls import check_bundle
from .verdict import ToolCallEvidence


def analyze(path: str | Path, settings: Settings | None = None, catalogue: Catalogue | None = None,
            context_lines: int = 0, display: str | None = None) -> Report:
    """Diagnose one bundle; the report names it `display` (default: `path` as given; a bundle of one file
    also names that file so). Raises BundleError when nothing in it could be read (report-contract.md: exit
    2). With `context_lines`, the report also holds that many lines of the bundle before and after every line
    it cites (`evidence_context`, for the HTML report)."""
    settings = settings or Settings()
    name = Path(display).name if display else None
    return report_of(run(path, settings, catalogue, name=name), str(path) if display is None else display,
                     settings, context_lines)


def diff(failing: str | Path, reference: str | Path | None = None, settings: Settings | None = None,
         catalogue: Catalogue | None = None):
    """`k3logs diff`: what the failing bundle does differently from the reference bundle (environment ranked,
    lifecycle side by side, new messages), or with no reference how the bundle's nodes differ and which is
    the odd node out. Returns a diff.DiffReport (secrets redacted unless the settings say not to); raises
    BundleError when a bundle cannot be read at all."""
    from .diff import diff_analyses, diff_one
    settings = settings or Settings()
    cat = catalogue or load_catalogue()
    fail = run(failing, settings, cat, keep_all=True)
    _check_readable(str(failing), fail.bundle, fail.ingested)
    if reference is None:
        return redact.obj(diff_one(fail, str(failing)), settings.redact)
    ref = run(reference, settings, cat, keep_all=True)
    _check_readable(str(reference), ref.bundle, ref.ingested)
    return redact.obj(diff_analyses(fail, ref, str(failing), str(reference)), settings.redact)


def analyze_with_reference(path: str | Path, reference: str | Path, settings: Settings | None = None,
                           catalogue: Catalogue | None = None, context_lines: int = 0) -> tuple[Report, dict]:
    """`analyze --reference`: the report of `path` and the short diff section against `reference` (the top
    changed facts and the lifecycle departure; diff.reference_section), redacted like the report."""
    from .diff import diff_analyses, reference_section
    settings = settings or Settings()
    cat = catalogue or load_catalogue()
    analysis = run(path, settings, cat)
    report = report_of(analysis, str(path), settings, context_lines)
    ref = run(reference, settings, cat)
    _check_readable(str(reference), ref.bundle, ref.ingested)
    section = reference_section(diff_analyses(analysis, ref, str(path), str(reference), messages=False))
    return report, redact.obj(section, settings.redact)


def report_of(analysis: Analysis, display_path: str, settings: Settings | None = None,
              context_lines: int = 0) -> Report:
    """The report of an analysis (secrets redacted unless the settings say not to)."""
    settings = settings or Settings()
    _check_readable(display_path, analysis.bundle, analysis.ingested)
    report = make_report(analysis, display_path, _tool_call_evidence(analysis, settings))
    if context_lines > 0:
        report.evidence_context = read_excerpts(analysis.bundle, report, context_lines, settings)
    return redact.obj(report, settings.redact)  # the gate out: redacted whole, then cut


def _tool_call_evidence(analysis: Analysis, settings: Settings) -> ToolCallEvidence | None:
    """The bundle's captured tool calls checked against their schemas, for the go-live verdict (None when
    it holds no captures: no evidence). Only the files sniffed as captures are read again."""
    captures = {analysis.bundle.display(f.file) for f in analysis.ingested.files if f.kind == "captures"}
    if not captures:
        return None
    s = check_bundle(analysis.bundle.path, settings, only=captures)
    if not s.checked:
        return None
    return ToolCallEvidence(s.checked, s.failed, (s.evidence or [s.first_checked])[0], s.detail)


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


def scan_archive(archive: str | Path, out: str | Path, settings: Settings | None = None,
                 patterns: tuple[Path, ...] = (), jobs: int | None = None, ray: str | None = None, display=None,
                 bundle_timeout: float | None = None):
    """Analyse every bundle directly under `archive` (folders and archive files) into `out`/incidents.parquet
    and `out`/reports/, `jobs` worker processes at a time (default: one per core), or as Ray tasks on the
    cluster at `ray` ('local' starts one here), each bundle given at most `bundle_timeout` seconds (default
    scan.BUNDLE_TIMEOUT_S; its row then says so). Resumes: unchanged bundles are not analysed again.
    Returns a scan.ScanResult (rows, counts, exit status)."""
    from .scan import analysis_key, scan
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
            progress.current().item(case.name)
            continue
        scores.append(score(case.name, truth, report))
        progress.current().item(case.name)
    return scores
