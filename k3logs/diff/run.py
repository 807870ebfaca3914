"""The runs a diff compares: each bundle analysed (every line kept), then compared (compare.py), redacted."""
from __future__ import annotations

from pathlib import Path

from k3logs.catalogue.load import load_catalogue
from k3logs.catalogue.signatures import Catalogue
from k3logs.contract import Report
from k3logs.gate import release
from k3logs.pipeline import check_readable, report_of, run
from k3logs.settings import Settings

from .compare import diff_analyses, diff_one
from .render import reference_section


def diff(failing: str | Path, reference: str | Path | None = None, settings: Settings | None = None,
         catalogue: Catalogue | None = None):
    """`k3logs diff`: what the failing bundle does differently from the reference bundle (environment ranked,
    lifecycle side by side, new messages), or with no reference how the bundle's nodes differ and which is
    the odd node out. Returns a diff.DiffReport (secrets redacted unless the settings say not to); raises
    BundleError when a bundle cannot be read at all."""
    settings = settings or Settings()
    cat = catalogue or load_catalogue()
    fail = run(failing, settings, cat, keep_all=True)
    check_readable(str(failing), fail.bundle, fail.ingested)
    if reference is None:
        return release(diff_one(fail, str(failing)), settings)
    ref = run(reference, settings, cat, keep_all=True)
    check_readable(str(reference), ref.bundle, ref.ingested)
    return release(diff_analyses(fail, ref, str(failing), str(reference)), settings)


def analyze_with_reference(path: str | Path, reference: str | Path, settings: Settings | None = None,
                           catalogue: Catalogue | None = None, context_lines: int = 0) -> tuple[Report, dict]:
    """`analyze --reference`: the report of `path` and the short diff section against `reference` (the top
    changed facts and the lifecycle departure; diff.reference_section), redacted like the report."""
    settings = settings or Settings()
    cat = catalogue or load_catalogue()
    analysis = run(path, settings, cat)
    report = report_of(analysis, str(path), settings, context_lines)
    ref = run(reference, settings, cat)
    check_readable(str(reference), ref.bundle, ref.ingested)
    section = reference_section(diff_analyses(analysis, ref, str(path), str(reference), messages=False))
    return report, release(section, settings)
