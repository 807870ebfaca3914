"""Speed and memory of k3logs against ripgrep on the same bundle, in one run.

    python benchmarks/bench.py --mb 100 1000            # bundles made by ../shared/tools/genbundle.py
                                                        # (and, by default, 300 MB and 1 GB with request logging)
    python benchmarks/bench.py --bundle path/to/bundle  # any bundle you have

For each bundle it measures, each in a fresh process (peak RSS from the kernel's accounting):
  rg        `rg -c -f baseline-signatures.txt BUNDLE` (the grep operators do today)
  ingest    the pass `analyze` runs to read, sniff, parse the lines it needs and attribute them
  analyze   `k3logs analyze BUNDLE --format json` end to end
  events    `k3logs events BUNDLE -o events.parquet` (every line parsed and written)
and prints a markdown table (seconds, MB/s, CPU seconds, peak RSS, ratio to rg). The commands of one bundle run
in turn, `--repeat` rounds (rg, ingest, analyze, events, rg, ingest, ...), and each time is the median of its
rounds: a machine that slows down for a while slows every command alike. A gzipped bundle (`--gzip MB`) is
compared with `rg -z` (ripgrep decompressing each member with gzip, as `zcat | rg` does). Nothing here is a test:
numbers depend on the machine; the README quotes one run with the command that made it. The k3logs runs use a
bytecode cache in --workdir, as an installed tool has one (PYTHONDONTWRITEBYTECODE would otherwise make every run
compile the package's source again, about 0.2 s here). Where the time of one analysis goes: benchmarks/stages.py.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "tools"
INGEST = """
import sys
from k3logs.cli import _size_pools
_size_pools()  # (as the CLI does, before polars is imported)
from k3logs.catalogue.load import load_catalogue
from k3logs.pipeline import learn
from k3logs.settings import Settings
learn(sys.argv[1], Settings(), load_catalogue())
"""


ENV = dict(os.environ)


def wall(cmd: list[str]) -> float:
    """Wall seconds of one command: exit status 0, or 1 from k3logs (an incident) or rg (no match); the ingest
    script has no status of its own but 0."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    if proc.returncode not in ((0,) if cmd[0] == sys.executable else (0, 1)):
        sys.exit(f"bench: {' '.join(cmd[:3])} failed: {proc.stderr.decode()[-400:]}")
    return time.perf_counter() - t


def measure(cmds: list[list[str]], repeat: int) -> list[tuple[float, int, float]]:
    """The median wall time of each command over `repeat` rounds that run the commands in turn (warm page
    cache), and the peak RSS (KiB) and CPU seconds (user + system) of one more run measured by GNU time."""
    times: list[list[float]] = [[] for _ in cmds]
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            times[i].append(wall(cmd))
    out = []
    for cmd, t in zip(cmds, times):
        rss, cpu = 0, float("nan")
        if os.path.exists("/usr/bin/time"):
            with tempfile.NamedTemporaryFile("r") as f:
                subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", f.name, *cmd], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=ENV)
                kib, user, system = f.read().strip().splitlines()[-1].split()
                rss, cpu = int(kib), float(user) + float(system)
        out.append((statistics.median(t), rss, cpu))
    return out


def bundle_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, nargs="*", default=[100, 1000], help="sizes of generated bundles (MB)")
    ap.add_argument("--bundle", type=Path, action="append", default=[], help="an existing bundle to measure")
    ap.add_argument("--request-log", type=int, nargs="*", default=[300, 1000], metavar="MB",
                    help="sizes of generated bundles with vLLM's request logging on (genbundle --request-log: a "
                         "'Received request ...: prompt: ...' line per request); none: `--request-log` alone")
    ap.add_argument("--gzip", type=int, nargs="*", default=[], metavar="MB",
                    help="sizes of generated bundles whose logs are gzipped (compared with `rg -z`)")
    ap.add_argument("--fault", default="xid79", help="genbundle fault of the generated bundles")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per bundle (the median time is kept)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "k3logs-bench")
    ap.add_argument("--skip-events", action="store_true", help="do not measure `k3logs events`")
    a = ap.parse_args()
    ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    ENV["PYTHONPYCACHEPREFIX"] = str(a.workdir / "pycache")
    rg = shutil.which("rg")
    k3 = shutil.which("k3logs") or str(Path(sys.executable).parent / "k3logs")
    sigs = SHARED / "baseline-signatures.txt"
    bundles = list(a.bundle)
    generated = [] if a.bundle else ([(mb, "") for mb in a.mb] + [(mb, "requests") for mb in a.request_log]
                                     + [(mb, "gzip") for mb in a.gzip])
    for mb, kind in generated:
        out = a.workdir / f"gen-{mb}mb-{a.fault}{'-' + kind if kind else ''}"
        if not (out / "bundle").is_dir():
            subprocess.run([sys.executable, str(SHARED / "genbundle.py"), str(out), "--nodes", "2",
                            "--ranks-per-node", "8", "--mb", str(mb), "--seed", "7", "--fault", a.fault]
                           + {"": [], "requests": ["--request-log"], "gzip": ["--gzip"]}[kind],
                           check=True, stdout=subprocess.DEVNULL)
        bundles.append(out / "bundle")
    version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0] if rg else "MISSING"
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; {version}\n")
    print("| bundle | size | step | seconds | MB/s | CPU s | peak RSS | x rg |")
    print("|---|---|---|---|---|---|---|---|")
    for b in bundles:
        size = bundle_bytes(b)
        mb = size / 1e6
        zipped = any(b.rglob("*.gz"))
        steps: list[tuple[str, list[str]]] = []
        if rg and sigs.exists():
            steps.append(("rg -z -c -f baseline-signatures" if zipped else "rg -c -f baseline-signatures",
                          [rg, *(["-z"] if zipped else []), "-c", "-f", str(sigs), str(b)]))
        steps.append(("ingest (analyze's pass)", [sys.executable, "-c", INGEST, str(b)]))
        steps.append(("k3logs analyze", [k3, "analyze", str(b), "--format", "json"]))
        with tempfile.TemporaryDirectory() as d:
            if not a.skip_events:
                steps.append(("k3logs events", [k3, "events", str(b), "-o", str(Path(d) / "e.parquet")]))
            rows = [(name, *got) for (name, _), got in zip(steps, measure([c for _, c in steps], a.repeat))]
        base = rows[0][1] if rows[0][0].startswith("rg") else None
        for name, secs, rss, cpu in rows:
            ratio = f"{secs / base:.1f}" if base else "n/a"
            print(f"| {b.parent.name or b.name} | {mb:.0f} MB | {name} | {secs:.2f} | {mb / secs:.0f} | {cpu:.1f} | "
                  f"{rss / 1024:.0f} MiB | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
