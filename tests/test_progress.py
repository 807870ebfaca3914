"""Progress on stderr: a line redrawn in place while a command works, on a terminal only, cleared before the
results; nothing at all when stderr is a pipe or a file (CI, scripts) or for library calls."""
from __future__ import annotations

import io

import pytest

from k3logs import progress
from k3logs.api import analyze, evaluate_corpus
from conftest import TESTS_DIR

CASE = TESTS_DIR.parent / "corpora" / "c208-xid79-torchrun-misleading-rootcause"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def every_tick_drawn(monkeypatch):
    monkeypatch.setattr(progress, "REDRAW_S", 0.0)


def test_analyze_on_a_terminal_shows_the_files_read_and_clears_the_line_at_the_end():
    term = Terminal()
    with progress.showing("analyze", stream=term):
        analyze(CASE / "bundle")
    out = term.getvalue()
    files = sum(1 for p in (CASE / "bundle").rglob("*") if p.is_file())
    assert f"analyze  {files} files" in out and out.endswith("\r\x1b[K") and "\n" not in out


def test_near_miss_a_pipe_or_a_library_call_gets_nothing():
    pipe = io.StringIO()
    with progress.showing("analyze", stream=pipe):
        analyze(CASE / "bundle")
    assert pipe.getvalue() == ""
    assert isinstance(progress.current(), progress.NullDisplay) and not isinstance(progress.current(),
                                                                                     progress.Ticker)


def test_eval_counts_its_cases_of_the_total(tmp_path):
    (tmp_path / CASE.name).symlink_to(CASE)
    term = Terminal()
    with progress.showing("eval", 1, "cases", stream=term):
        evaluate_corpus(tmp_path)
    assert "eval  1/1 cases" in term.getvalue()
