"""The fuzz campaign's CI sample (#12): seeded mutants of corpus bundles (tests/mutants.py) through analyze,
sniff and events. Every run exits 0, 1, 2 or 3 with at most one line on stderr and no traceback, puts no
control character on stdout, and no planted secret (nor any 8-character fragment of one) in any output.
The whole campaign, with its table: `python benchmarks/fuzz.py --runs 2000`. A failure names the case and
the seed; `python benchmarks/fuzz.py --case CASE --seed SEED --keep DIR` writes that mutant out."""
from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from mutants import mutate, problems
from k3logs.cli import cli

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
CASES = sorted(p.parent for p in CORPORA.glob("*/truth.json"))
RUNS = 24  # (each ~0.7 s; benchmarks/fuzz.py runs thousands; 48 until the suite neared its ten minutes)
HANG_S = 180  # a run still going after this long is a hang (no timing: the runs take a second or two)


def commands(rng: random.Random, bundle: Path, out: Path) -> list[str]:
    return rng.choice([["analyze", str(bundle)], ["analyze", str(bundle), "--format", "json", "--context-lines", "5"],
                       ["analyze", str(bundle), "--format", "html"], ["sniff", str(bundle)],
                       ["events", str(bundle), "-o", str(out / "events.jsonl")]])


def run_once(args: list[str]):
    done: list = []
    t = threading.Thread(target=lambda: done.append(CliRunner().invoke(cli, args)), daemon=True)
    t.start()
    t.join(HANG_S)
    assert done, f"hang: {args} still running after {HANG_S} s"
    return done[0]


@pytest.mark.parametrize("i", range(RUNS))
def test_a_mutant_never_crashes_hangs_or_leaks(tmp_path, i):
    rng = random.Random(i)
    case = rng.choice(CASES)
    m = mutate(case, i, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    args = commands(rng, m.path, out)
    res = run_once(args)
    assert not isinstance(res.exception, BaseException) or isinstance(res.exception, SystemExit), \
        f"{case.name} seed {i} ({m.applied}): {res.exception!r}"
    files = {p.name: p.read_text("utf-8", "replace") for p in out.iterdir()}
    found = problems(res.exit_code, res.stdout, res.stderr, files, m.secrets)
    assert not found, (f"{case.name} seed {i} ({', '.join(m.applied)}; k3logs {' '.join(args[:1] + args[2:])}): "
                       f"{found}; write it out: python benchmarks/fuzz.py --case {case.name} --seed {i} --keep DIR")
