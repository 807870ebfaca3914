"""The metamorphic sweep (issue #21): every transform of tests/metamorphic on every corpus case, diagnosed
in-process and scored against the case's truth carried over by the transform.

    python benchmarks/metamorphic.py --all [--jobs N] [--seeds K]     # the full sweep: failure tables
    python benchmarks/metamorphic.py --all --cases c208,c215 --transforms noise,wrap-cri
    python benchmarks/metamorphic.py --write CASE TRANSFORM SEED OUTDIR  # one variant, as a corpus case
    python benchmarks/metamorphic.py --write-all OUTDIR [--cases ...]   # every variant, for `k3logs eval OUTDIR`

Prints the failures per transform and per case (known ones, from tests/metamorphic/bed.py KNOWN, marked), then
the tables `k3logs eval` prints over the same scores. Exit status 1 when a failure is not a known one.
--cases and --transforms take comma-separated names or prefixes (c208 selects c208-xid79-...).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from metamorphic import bed  # noqa: E402
from metamorphic.transforms import TRANSFORMS, NotApplicable  # noqa: E402


def _pick(wanted: str | None, names: list[str]) -> list[str]:
    if not wanted:
        return names
    out = [n for n in names if any(n == w or n.startswith(w) for w in wanted.split(","))]
    if not out:
        sys.exit(f"metamorphic: nothing matches {wanted!r}")
    return out


def _one(job: tuple[str, str, int]) -> bed.Outcome:
    case, name, seed = job
    with tempfile.TemporaryDirectory(prefix="k3mm-") as tmp:
        o = bed.check(case, name, seed, Path(tmp) / "v")
    return o


def sweep(cases: list[str], names: list[str], seeds: int, jobs: int) -> list[bed.Outcome]:
    work = [(c, n, bed.seed_of(c, n) + k) for c in cases for n in names for k in range(seeds)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            return list(pool.map(_one, work, chunksize=4))
    return [_one(w) for w in work]


def report(outcomes: list[bed.Outcome]) -> int:
    from k3logs.evaluate.score import render_tables, tables
    wrong = sorted({o.case for o in outcomes if o.base_wrong})
    ran = [o for o in outcomes if o.applies and not o.base_wrong]
    bad = [o for o in ran if o.failed]
    new = [o for o in bad if not bed.known(o.case, o.transform)]
    print(f"{len(outcomes)} variants: {len(ran)} compared, {sum(not o.applies for o in outcomes)} not applicable, "
          f"{sum(o.applies and o.base_wrong for o in outcomes)} of {len(wrong)} cases k3logs gets wrong itself "
          f"(not compared); {len(bad)} failed ({len(bad) - len(new)} known, {len(new)} new)\n")
    print(f"| transform | applied | failed | known | new | wrong fields |\n|---|---:|---:|---:|---:|---|")
    for name in dict.fromkeys(o.transform for o in outcomes):
        rs = [o for o in ran if o.transform == name]
        fs = [o for o in rs if o.failed]
        fields: dict[str, int] = {}
        for o in fs:
            for f in ([k for k, ok in o.score.ok.items() if not ok] if o.score else ["error"]):
                fields[f] = fields.get(f, 0) + 1
        kn = sum(1 for o in fs if bed.known(o.case, o.transform))
        print(f"| {name} | {len(rs)} | {len(fs)} | {kn} | {len(fs) - kn} | "
              f"{', '.join(f'{k} {v}' for k, v in sorted(fields.items())) or '-'} |")
    print(f"\n| case | applied | failed | failing transforms |\n|---|---:|---:|---|")
    for case in dict.fromkeys(o.case for o in outcomes):
        rs = [o for o in ran if o.case == case]
        fs = [o for o in rs if o.failed]
        if fs:
            names = [o.transform + (" (known)" if bed.known(o.case, o.transform) else "") for o in fs]
            print(f"| {case} | {len(rs)} | {len(fs)} | {', '.join(names)} |")
    if new:
        print("\nnew failures:")
        for o in new:
            print(o.message())
    if wrong:
        print("\ncases diagnosed wrong themselves (tests/test_corpora.py), their variants not compared:\n  "
              + "\n  ".join(wrong))
    scores = [o.score for o in ran if o.score is not None]
    for line in render_tables(tables(scores)):
        print(line)
    return 1 if new else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="sweep every transform of every case")
    ap.add_argument("--write", nargs=4, metavar=("CASE", "TRANSFORM", "SEED", "OUTDIR"),
                    help="write one variant as a corpus case (OUTDIR/bundle, OUTDIR/truth.json)")
    ap.add_argument("--write-all", metavar="OUTDIR", help="write every variant as a corpus case under OUTDIR")
    ap.add_argument("--cases", help="comma-separated case names or prefixes")
    ap.add_argument("--transforms", help="comma-separated transform names or prefixes")
    ap.add_argument("--seeds", type=int, default=1, help="seeds per case and transform (default 1)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    a = ap.parse_args(argv)
    cases = _pick(a.cases, bed.cases())
    names = _pick(a.transforms, list(TRANSFORMS))
    if a.write:
        case, name, seed, out = a.write
        try:
            m = bed.write_case(_pick(case, bed.cases())[0], name, int(seed), Path(out))
        except NotApplicable as e:
            sys.exit(f"metamorphic: {name} does not apply to {case}: {e}")
        print(f"{out}/bundle and {out}/truth.json: {m.note}")
        return 0
    if a.write_all:
        n = 0
        for case in cases:
            for name in names:
                for k in range(a.seeds):
                    seed = bed.seed_of(case, name) + k
                    try:
                        bed.write_case(case, name, seed, Path(a.write_all) / f"{case}~{name}~{seed}")
                        n += 1
                    except NotApplicable:
                        pass
        print(f"{n} variants under {a.write_all}; score them with: k3logs eval {a.write_all}")
        return 0
    if not a.all and not (a.cases or a.transforms):
        ap.error("say --all, --cases/--transforms, --write or --write-all")
    t = time.perf_counter()
    outcomes = sweep(cases, names, a.seeds, max(1, a.jobs))
    status = report(outcomes)
    print(f"\n{len(outcomes)} variants in {time.perf_counter() - t:.0f} s (--jobs {a.jobs}, pid {os.getpid()})")
    return status


if __name__ == "__main__":
    sys.exit(main())
