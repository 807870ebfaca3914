"""The library's entry points, one import away (the CLI is a thin layer over these). Each lives with its stage:
this module only hands them on."""
from __future__ import annotations

from k3logs.catalogue.load import load_catalogue
from k3logs.diff.run import analyze_with_reference, diff
from k3logs.evaluate.score import evaluate_corpus
from k3logs.pipeline import SniffRow, analyze, report_of, sniff_bundle, write_events
from k3logs.scan.run import read_scan, scan_archive

__all__ = ["analyze", "analyze_with_reference", "diff", "evaluate_corpus", "load_catalogue", "read_scan",
           "report_of", "scan_archive", "sniff_bundle", "SniffRow", "write_events"]
