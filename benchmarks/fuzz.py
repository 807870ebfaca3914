"""The fuzz campaign (#12): seeded mutants of every corpus case (tests/mutants.py: byte flips, truncations,
huge numbers, odd dates, control characters in lines and names, nested packing, with planted secrets) through
`k3logs analyze` (md, json with context, html), `sniff` and `events`, each run in its own process with a time
limit. Prints a table of runs, crashes, hangs and leaks per mutation kind; exit status 1 if any run failed.

    python benchmarks/fuzz.py --runs 2000 [--jobs 2] [--seed 0]
    python benchmarks/fuzz.py --case c208-xid79-torchrun-misleading-rootcause --seed 17 --keep /tmp/mutant

Run i uses seed (--seed + i) and the case that seed picks, so a failure is reproduced from its case and seed.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from mutants import MUTATIONS, mutate, problems  # noqa: E402

CASES = sorted(p.parent for p in (REPO / "corpora").glob("*/truth.json"))
K3LOGS = [sys.executable, "-m", "k3logs"]
TIME_LIMIT_S = 300


def commands(rng: random.Random, bundle: Path, out: Path) -> list[str]:
    """As the CI sample picks them (tests/test_fuzz_mutants.py)."""
    return rng.choice([["analyze", str(bundle)], ["analyze", str(bundle), "--format", "json", "--context-lines", "5"],
                       ["analyze", str(bundle), "--format", "html"], ["sniff", str(bundle)],
                       ["events", str(bundle), "-o", str(out / "events.jsonl")]])


def one(seed: int, work: Path, case: Path | None = None, keep: Path | None = None) -> dict:
    rng = random.Random(seed)
    picked = rng.choice(CASES)  # (drawn even when the case is given: the command drawn next stays the same)
    case = case or picked
    place = Path(tempfile.mkdtemp(dir=work))
    try:
        m = mutate(case, seed, place)
    except Exception as e:  # the harness's own failure: said per run, the campaign goes on
        shutil.rmtree(place, ignore_errors=True)
        return {"case": case.name, "seed": seed, "applied": [], "command": "-", "exit": None, "seconds": 0.0,
                "problems": [], "hang": False, "harness": f"{type(e).__name__}: {e}"}
    out = place / "out"
    out.mkdir()
    args = commands(rng, m.path, out)
    start = time.monotonic()
    try:
        p = subprocess.run(K3LOGS + args, capture_output=True, timeout=TIME_LIMIT_S, cwd=place,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        code, stdout, stderr = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
        found = problems(code, stdout, stderr, {f.name: f.read_text("utf-8", "replace") for f in out.iterdir()},
                         m.secrets)
        hang = False
    except subprocess.TimeoutExpired:
        code, found, hang = None, [f"no answer after {TIME_LIMIT_S} s"], True
    row = {"case": case.name, "seed": seed, "applied": m.applied, "command": args[0], "exit": code,
           "seconds": time.monotonic() - start, "problems": found, "hang": hang}
    if keep is not None:
        shutil.copytree(m.path.parent, keep, dirs_exist_ok=True)
        print(f"mutant {case.name} seed {seed} ({', '.join(m.applied)}) written to {keep}; k3logs {' '.join(args)}")
    shutil.rmtree(place, ignore_errors=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0, help="the first run's seed")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--case", help="one case (with --seed: that mutant alone)")
    ap.add_argument("--keep", type=Path, help="write the mutant of --case/--seed here")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="k3logs-fuzz-"))
    try:
        if a.case:
            row = one(a.seed, work, REPO / "corpora" / a.case, a.keep)
            print(row)
            return 1 if row["problems"] else 0
        started = time.monotonic()
        with ThreadPoolExecutor(a.jobs) as pool:
            rows = list(pool.map(lambda i: one(a.seed + i, work), range(a.runs)))
        elapsed = time.monotonic() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(rows)} runs over {len({r['case'] for r in rows})} corpus cases in {elapsed:.0f} s "
          f"({a.jobs} at a time); exit statuses {dict(sorted(Counter(str(r['exit']) for r in rows).items()))}\n")
    print(f"| mutation | runs | crashes | hangs | leaks | control characters |\n|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in rows:
        for k in r["applied"]:
            by[k].append(r)
    for k in (*MUTATIONS, "all"):
        rs = rows if k == "all" else by.get(k, [])
        crash = sum(any(p.startswith(("exit status", "stderr")) for p in r["problems"]) for r in rs)
        leak = sum(any(p.startswith("secret") for p in r["problems"]) for r in rs)
        ctrl = sum(any(p.startswith("control") for p in r["problems"]) for r in rs)
        print(f"| {k} | {len(rs)} | {crash} | {sum(r['hang'] for r in rs)} | {leak} | {ctrl} |")
    bad = [r for r in rows if r["problems"] or r.get("harness")]
    for r in (r for r in rows if r.get("harness")):
        print(f"\nHARNESS {r['case']} seed {r['seed']}: the mutant could not be built: {r['harness']}")
    for r in (r for r in rows if r["problems"]):
        print(f"\nFAILED {r['case']} seed {r['seed']} ({', '.join(r['applied'])}; {r['command']}): {r['problems']}\n"
              f"  python benchmarks/fuzz.py --case {r['case']} --seed {r['seed']} --keep /tmp/mutant")
    slowest = max(rows, key=lambda r: r["seconds"])
    print(f"\nslowest run: {slowest['seconds']:.1f} s ({slowest['case']} seed {slowest['seed']}, {slowest['command']})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
