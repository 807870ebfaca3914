"""Speed and memory of k3logs against ripgrep on the same bundle, in one run.

    python benchmarks/bench.py --mb 100 1000            # bundles made by ../shared/tools/genbundle.py
                                                        # (and, by default, 300 MB and 1 GB with request logging)
    python benchmarks/bench.py --bundle path/to/bundle  # any bundle you have

For each bundle it measures, each in a fresh process (peak RSS from the kernel's accounting):
  rg        `rg -c -f baseline-signatures.txt BUNDLE` (the grep operators do today)
  ingest    the pass `analyze` runs to read, sniff, parse the lines it needs and attribute them
  analyze   `k3logs analyze BUNDLE --format json` end to end
  events    `k3logs events BUNDLE -o events.parquet` (every line parsed and written)
and prints a markdown table (seconds, MB/s, CPU seconds, peak RSS, ratio to rg). Nothing here is a test: numbers
depend on the machine; the README quotes one run with the command that made it. The k3logs runs use a bytecode
cache in --workdir, as an installed tool has one (PYTHONDONTWRITEBYTECODE would otherwise make every run compile
the package's source again, about 0.2 s here).
"""
from __future__ import annotations

import argparse
import os
import shutil
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


def measure(cmd: list[str], repeat: int) -> tuple[float, int, float]:
    """Best wall time over `repeat` runs (warm page cache), and the peak RSS (KiB) and CPU seconds (user +
    system) of one more run measured by GNU time."""
    best = min(wall(cmd) for _ in range(repeat))
    rss, cpu = 0, float("nan")
    if os.path.exists("/usr/bin/time"):
        with tempfile.NamedTemporaryFile("r") as f:
            subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", f.name, *cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=ENV)
            kib, user, system = f.read().strip().splitlines()[-1].split()
            rss, cpu = int(kib), float(user) + float(system)
    return best, rss, cpu


def bundle_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, nargs="*", default=[100, 1000], help="sizes of generated bundles (MB)")
    ap.add_argument("--bundle", type=Path, action="append", default=[], help="an existing bundle to measure")
    ap.add_argument("--request-log", type=int, nargs="*", default=[300, 1000], metavar="MB",
                    help="sizes of generated bundles with vLLM's request logging on (genbundle --request-log: a "
                         "'Received request ...: prompt: ...' line per request); none: `--request-log` alone")
    ap.add_argument("--fault", default="xid79", help="genbundle fault of the generated bundles")
    ap.add_argument("--repeat", type=int, default=2, help="runs per measurement (best time is kept)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "k3logs-bench")
    ap.add_argument("--skip-events", action="store_true", help="do not measure `k3logs events`")
    a = ap.parse_args()
    ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    ENV["PYTHONPYCACHEPREFIX"] = str(a.workdir / "pycache")
    rg = shutil.which("rg")
    k3 = shutil.which("k3logs") or str(Path(sys.executable).parent / "k3logs")
    sigs = SHARED / "baseline-signatures.txt"
    bundles = list(a.bundle)
    generated = [] if a.bundle else [(mb, False) for mb in a.mb] + [(mb, True) for mb in a.request_log]
    for mb, requests in generated:
        out = a.workdir / f"gen-{mb}mb-{a.fault}{'-requests' if requests else ''}"
        if not (out / "bundle").is_dir():
            subprocess.run([sys.executable, str(SHARED / "genbundle.py"), str(out), "--nodes", "2",
                            "--ranks-per-node", "8", "--mb", str(mb), "--seed", "7", "--fault", a.fault]
                           + (["--request-log"] if requests else []), check=True, stdout=subprocess.DEVNULL)
        bundles.append(out / "bundle")
    version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0] if rg else "MISSING"
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; {version}\n")
    print("| bundle | size | step | seconds | MB/s | CPU s | peak RSS | x rg |")
    print("|---|---|---|---|---|---|---|---|")
    for b in bundles:
        size = bundle_bytes(b)
        mb = size / 1e6
        rows = []
        base = None
        if rg and sigs.exists():
            base, rss, cpu = measure([rg, "-c", "-f", str(sigs), str(b)], a.repeat)
            rows.append(("rg -c -f baseline-signatures", base, rss, cpu))
        rows.append(("ingest (analyze's pass)", *measure([sys.executable, "-c", INGEST, str(b)], a.repeat)))
        rows.append(("k3logs analyze", *measure([k3, "analyze", str(b), "--format", "json"], a.repeat)))
        if not a.skip_events:
            with tempfile.TemporaryDirectory() as d:
                rows.append(("k3logs events", *measure([k3, "events", str(b), "-o", str(Path(d) / "e.parquet")],
                                                        a.repeat)))
        for name, secs, rss, cpu in rows:
            ratio = f"{secs / base:.1f}" if base else "n/a"
            print(f"| {b.parent.name or b.name} | {mb:.0f} MB | {name} | {secs:.2f} | {mb / secs:.0f} | {cpu:.1f} | "
                  f"{rss / 1024:.0f} MiB | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
