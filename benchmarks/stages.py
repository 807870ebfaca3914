"""Where the time of one `k3logs analyze` goes, stage by stage (the pipeline's data flow).

    python benchmarks/stages.py BUNDLE [BUNDLE ...]

Each bundle is analysed in a fresh process, under cProfile, after the imports and one warm-up analysis of the same
bundle (which compiles the regexes polars keeps). A stage's time is the cumulative wall time of the pipeline
function that runs it, on the main thread (waits for the reading threads included), so the stages add up to the
analysis; cProfile's own overhead inflates the Python-heavy stages a little. The imports and the first analysis are
timed apart. Nothing here is a test: the README quotes one run with the command that made it.
"""
from __future__ import annotations

import subprocess
import sys

# (stage, the function that runs it: module and name as cProfile reports them)
STAGES = [
    ("read, sniff, parse (ingest)", "k3logs/ingest/stream.py", "ingest"),
    ("dump facts", "k3logs/pipeline.py", "_dump_facts"),
    ("attribute (node, rank)", "k3logs/diagnose/attribute.py", "learn"),
    ("apply attribution", "k3logs/diagnose/assign.py", "apply"),
    ("align clocks", "k3logs/diagnose/clock.py", "learn"),
    ("phases", "k3logs/diagnose/phases.py", "assign_phases"),
    ("detect (signatures)", "k3logs/diagnose/detect.py", "detect"),
    ("facts from events", "k3logs/facts/extract.py", "facts_from_events"),
    ("checks", "k3logs/facts/checks.py", "run_checks"),
    ("decide", "k3logs/diagnose/decide.py", "decide"),
    ("missing evidence", "k3logs/diagnose/missing.py", "missing_parts"),
    ("acceptance", "k3logs/pipeline.py", "acceptance_of"),
    ("report (assemble, redact)", "k3logs/pipeline.py", "report_of"),
]
TOTAL = ("k3logs/pipeline.py", "analyze")

CHILD = r"""
import cProfile, json, pstats, sys, time
t = time.perf_counter()
from k3logs.cli import _size_pools
_size_pools()
from k3logs.catalogue.load import load_catalogue
from k3logs.pipeline import analyze
load_catalogue()
imports = time.perf_counter() - t
t = time.perf_counter(); analyze(sys.argv[1]); first = time.perf_counter() - t
prof = cProfile.Profile(); prof.enable(); analyze(sys.argv[1]); prof.disable()
cum = {}
for (path, _, name), (_, _, _, ct, _) in pstats.Stats(prof).stats.items():
    for suffix, fn in json.loads(sys.argv[2]):
        if name == fn and path.endswith(suffix):
            cum[f"{suffix}:{fn}"] = cum.get(f"{suffix}:{fn}", 0.0) + ct
print(json.dumps({"imports": imports, "first": first, "cum": cum}))
"""


def main(argv: list[str]) -> int:
    import json
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    wanted = [(m, f) for _, m, f in STAGES] + [TOTAL]
    for bundle in argv:
        out = subprocess.run([sys.executable, "-c", CHILD, bundle, json.dumps(wanted)], capture_output=True,
                             text=True)
        if out.returncode != 0:
            sys.exit(f"stages: {bundle}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else 'failed'}")
        got = json.loads(out.stdout.strip().splitlines()[-1])
        total = got["cum"].get(":".join(TOTAL), 0.0)
        print(f"\n{bundle}: imports and catalogue {got['imports']:.2f} s; first analysis {got['first']:.2f} s; "
              f"profiled analysis {total:.2f} s\n")
        print("| stage | seconds | share |")
        print("|---|---|---|")
        shown = 0.0
        for label, m, f in STAGES:
            secs = got["cum"].get(f"{m}:{f}", 0.0)
            shown += secs
            print(f"| {label} | {secs:.3f} | {100 * secs / total:.0f}% |" if total else f"| {label} | {secs:.3f} | |")
        if total:
            print(f"| other (glue, sorting the events) | {max(total - shown, 0):.3f} | "
                  f"{100 * max(total - shown, 0) / total:.0f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
