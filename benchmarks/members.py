"""What one member of a bundle costs: bundles of many tiny members, one shape at a time, each timed end to end
in a fresh process (`k3logs analyze BUNDLE --format json`, or --command sniff/events).

    python benchmarks/members.py                           # 100,000 members per shape
    python benchmarks/members.py --members 5000 --command events
    python benchmarks/members.py --profile "tar.gz, 1 line each" --members 5000   # where the time goes

Every bundle also holds one small vLLM log with an incident (its first member), and is read whole (--max-members
above its size). The fixed start (imports, catalogue: the same command on a bundle of that log alone) is taken
off before dividing by the members. Prints a markdown table: seconds, members/s, ms per member. --profile runs
the analysis in this process under cProfile and prints the CPU time of each stage (discover, sniff and open,
split/keep/parse, fold, decide, the whole) per member.
Nothing here is a test: numbers depend on the machine; the README quotes a run with the command that made it.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

INCIDENT = "".join(line + "\n" for line in [
    "INFO 08-11 07:35:59 [api_server.py:1] vLLM API server version 0.11.0",
    "(Worker_TP1 pid=301) INFO 08-11 07:36:03 [gpu_model_runner.py:2] Starting to load model m...",
    "(Worker_TP1 pid=301) ERROR 08-11 07:36:10 [multiproc_executor.py:597] Traceback (most recent call last):",
    '(Worker_TP1 pid=301) ERROR 08-11 07:36:10 [multiproc_executor.py:597]   File "x.py", line 2, in load_model',
    "(Worker_TP1 pid=301) ERROR 08-11 07:36:10 [multiproc_executor.py:597] torch.OutOfMemoryError: CUDA out of "
    "memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.02 GiB is free.",
]).encode()


def one_line(i: int) -> bytes:
    return f"INFO 08-11 07:36:{i % 60:02d} [x.py:1] member {i} done\n".encode()


def error_line(i: int) -> bytes:  # a line the analysis keeps and parses (an anchor of a signature)
    return f"ERROR 08-11 07:36:{i % 60:02d} [core.py:1] RuntimeError: CUDA error: an illegal memory access " \
           f"was encountered (member {i})\n".encode()


def traceback(i: int) -> bytes:  # kept, parsed and folded
    return (f"ERROR 08-11 07:36:{i % 60:02d} [core.py:1] Traceback (most recent call last):\n"
            f'  File "worker.py", line {i}, in run\n'
            f"RuntimeError: NCCL error: unhandled system error (member {i})\n").encode()


SHAPES = {  # name: (container, content of member i)
    "tar.gz, 1 line each": ("tar.gz", one_line),
    "tar, empty files": ("tar", lambda i: b""),
    "folder, 1 line each": ("folder", one_line),
    "tar.gz, 1 error line each": ("tar.gz", error_line),
    "tar.gz, a traceback each": ("tar.gz", traceback),
}


def build(shape: str, n: int, where: Path) -> Path:
    container, content = SHAPES[shape]
    if container == "folder":
        root = where / "bundle"
        (root / "many").mkdir(parents=True)
        (root / "a-vllm.log").write_bytes(INCIDENT)  # (first: read whatever the member limit)
        for i in range(n):
            (root / "many" / f"f{i:06d}.log").write_bytes(content(i))
        return root
    path = where / f"bundle.{container}"
    raw = open(path, "wb")
    out = zlib.compressobj(6, zlib.DEFLATED, 31) if container == "tar.gz" else None
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w|") as tf:
        ti = tarfile.TarInfo("case/a-vllm.log")
        ti.size = len(INCIDENT)
        tf.addfile(ti, io.BytesIO(INCIDENT))
        for i, data in ((i, content(i)) for i in range(n)):
            ti = tarfile.TarInfo(f"case/many/f{i:06d}.log")
            ti.size, ti.mtime = len(data), 1_780_000_000
            tf.addfile(ti, io.BytesIO(data))
            if sink.tell() > 1 << 20:
                raw.write(out.compress(sink.getvalue()) if out else sink.getvalue())
                sink.seek(0)
                sink.truncate()
    raw.write(out.compress(sink.getvalue()) + out.flush() if out else sink.getvalue())
    raw.close()
    return path


def command(cmd: str, bundle: Path, where: Path, n: int) -> list[str]:
    k3 = [sys.executable, "-m", "k3logs"]
    limit = ["--max-members", str(n + 10)]
    if cmd == "events":
        return [*k3, "events", str(bundle), "-o", str(where / "events.parquet"), *limit]
    if cmd == "sniff":
        return [*k3, "sniff", str(bundle), "--format", "json", *limit]
    return [*k3, "analyze", str(bundle), "--format", "json", *limit]


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, all its threads) of one command. CPU time is the figure to
    compare: on a shared machine the wall time also counts the others' work."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit(f"members: {' '.join(cmd[2:4])} failed: {p.stderr.decode()[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


STAGES = [  # (what, the functions whose cumulative time it is: they overlap, each is read on its own)
    ("discover (tar, folder walk)", ("discover.py", ("_open_top", "_open_file"))),
    ("sniff and open a member", ("ingest.py", ("open_member",))),
    ("split, keep and parse (packs too)", ("ingest.py", ("parse", "_chunks"))),
    ("fold", ("fold.py", ("fold_tracebacks", "fold_continuations"))),
    ("decide", ("decide.py", ("decide",))),
    ("whole analysis", ("pipeline.py", ("run",))),
]


def profile(shape: str, n: int) -> None:
    from k3logs.cli import _size_pools
    _size_pools()
    from k3logs.catalogue.load import load_catalogue
    from k3logs.pipeline import run
    from k3logs.settings import Settings
    cat = load_catalogue()
    with tempfile.TemporaryDirectory() as tmp:
        bundle = build(shape, n, Path(tmp))
        prof = cProfile.Profile(time.thread_time)  # (CPU time: the machine may be shared)
        prof.enable()
        run(bundle, Settings(jobs=1).with_limits(max_members=n + 10), cat)  # (one thread: cProfile sees its own)
        prof.disable()
    stats = pstats.Stats(prof).stats  # {(file, line, name): (cc, nc, tt, ct, callers)}
    print(f"{shape}, {n} members, under cProfile (its overhead included), CPU time of one thread:\n")
    print("| stage | s | µs per member |\n|---|---:|---:|")
    for stage, *where in STAGES:
        ct = sum(v[3] for (file, _, name), v in stats.items()
                 for suffix, names in where if file.endswith(suffix) and name in names)
        print(f"| {stage} | {ct:.2f} | {ct / n * 1e6:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=int, default=100_000)
    ap.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--command", choices=["analyze", "sniff", "events"], default="analyze")
    ap.add_argument("--profile", choices=list(SHAPES), help="profile one shape in this process instead")
    args = ap.parse_args()
    if args.profile:
        profile(args.profile, args.members)
        return
    with tempfile.TemporaryDirectory() as tmp:
        alone = Path(tmp) / "alone"
        alone.mkdir()
        (alone / "vllm.log").write_bytes(INCIDENT)
        start = min((timed(command(args.command, alone, Path(tmp), 1)) for _ in range(2)), key=lambda t: t[1])
        print(f"`k3logs {args.command}`, {args.members} members per shape; fixed start {start[0]:.2f} s, "
              f"{start[1]:.2f} s CPU\n")
        print("| shape | s | CPU s | members/s (CPU) | ms per member (CPU) |\n|---|---:|---:|---:|---:|")
        for shape in args.shapes:
            where = Path(tmp) / shape.replace(" ", "_").replace(",", "")
            where.mkdir()
            bundle = build(shape, args.members, where)
            wall, cpu = timed(command(args.command, bundle, where, args.members))
            per = max(cpu - start[1], 0) / args.members
            print(f"| {shape} | {wall:.1f} | {cpu:.1f} | {args.members / cpu:,.0f} | {per * 1e3:.3f} |", flush=True)


if __name__ == "__main__":
    main()
