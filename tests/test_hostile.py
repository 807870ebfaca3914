"""Untrusted bundles (issue 5): never crash, never escape, never leak. Every test BUILDS its hostile input in
tmp_path, puts a known incident beside it (a vLLM worker dying of a CUDA OOM while loading the model), runs
the real CLI (click's CliRunner, or the installed `k3logs` in a subprocess where a hang, the time or the
memory of a real process matters) and checks:

- the exit status: 0/1 when something could be analysed, 2 (one line on stderr) only when nothing could;
- no Python traceback on stdout or stderr;
- nothing written outside the output path (the whole tmp_path, the current folder included, is compared
  before and after; names that would escape it are checked by their absolute target);
- no secret of the bundle in any output (markdown, JSON, the event table, sniff, stderr);
- the real error is still found: root_cause.category is oom.* at the right file and line.

The classes follow issue 5: archives, folders, content, secrets, errors (bounds are measured where they
matter: the decompression bombs and the 300 MB file with no newline). Property tests are in test_fuzz.py.
"""
from __future__ import annotations

import codecs
import gzip
import io
import json
import lzma
import os
import signal
import socket
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from conftest import compress, tar_bytes, zip_bytes
from test_discover import sparse_bomb
from k3logs.ingest import discover, names as bundle_names
from k3logs.cli import cli

# ------------------------------------------------------------------------------------------------------
# the incident every bundle holds, and the secrets it carries
# ------------------------------------------------------------------------------------------------------
WORKER = "(Worker_TP1 pid=301) "
INCIDENT_LINES = [
    "INFO 08-11 07:35:59 [api_server.py:1] vLLM API server version 0.11.0",
    "INFO 08-11 07:36:00 [core.py:70] Initializing a V1 LLM engine (v0.11.0) with config: model='moonshotai/Kimi-K3'",
    WORKER + "INFO 08-11 07:36:02 [parallel_state.py:1] rank 1 in world size 2 is assigned as DP rank 0, PP rank 0, "
             "TP rank 1, EP rank 1",
    WORKER + "INFO 08-11 07:36:03 [gpu_model_runner.py:2] Starting to load model moonshotai/Kimi-K3...",
    WORKER + "ERROR 08-11 07:36:10 [multiproc_executor.py:597] WorkerProc failed to start.",
    WORKER + "ERROR 08-11 07:36:10 [multiproc_executor.py:597] Traceback (most recent call last):",
    WORKER + 'ERROR 08-11 07:36:10 [multiproc_executor.py:597]   File "/usr/local/lib/python3.12/dist-packages/vllm/'
             'v1/worker/gpu_model_runner.py", line 2100, in load_model',
    WORKER + "ERROR 08-11 07:36:10 [multiproc_executor.py:597]     self.model = model_loader.load_model(",
    WORKER + "ERROR 08-11 07:36:10 [multiproc_executor.py:597] torch.OutOfMemoryError: CUDA out of memory. Tried to "
             "allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.02 GiB is free.",
    "INFO 08-11 07:36:11 [utils.py:2] non-default args: {'model': 'm', 'api_key': 'sk-hostile-api-key-0123456789abcdef'}",
    "INFO 08-11 07:36:11 [envs.py:3] HF_TOKEN=hf_HostileBundleToken0123456789abcdefgh seen in the environment",
]
OOM_LINE = 9  # the line that states the cause (its traceback starts on line 6)
INCIDENT = "".join(line + "\n" for line in INCIDENT_LINES)
INCIDENT_B = INCIDENT.encode()
SECRETS = ("sk-hostile-api-key-0123456789abcdef", "hf_HostileBundleToken0123456789abcdefgh")

K3LOGS = Path(sys.executable).with_name("k3logs")
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# ------------------------------------------------------------------------------------------------------
# the harness
# ------------------------------------------------------------------------------------------------------
def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root` (links not followed): type, size, modification time."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            out[str(p.relative_to(root))] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
    return out


def no_traceback(*texts: str) -> None:
    for t in texts:
        assert "Traceback (most recent call last)" not in t, t[-3000:]


def no_secret(*texts: str, secrets=SECRETS) -> None:
    for t in texts:
        for s in secrets:
            assert s not in t, f"secret {s!r} leaked: ...{t[max(0, t.find(s) - 200):t.find(s) + 100]}..."


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("k3logs: error: "), stderr
    return lines[0]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@dataclass
class Outcome:
    report: dict | None     # analyze --format json, when it exited 0/1
    status: int
    outputs: dict[str, str]  # every output, by name (stdout, stderr, files)

    @property
    def skipped(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for s in (self.report or {}).get("bundle", {}).get("skipped", []):
            out.setdefault(s["file"], []).append(s["reason"])
        return out

    def skip_reasons(self) -> str:
        return "\n".join(f"{f}: {r}" for f, rs in self.skipped.items() for r in rs)


def check_bundle(tmp_path: Path, bundle: Path, *flags: str, status: tuple[int, ...] = (1,),
                 oom_file: str | None = "vllm.log", oom_line: int = OOM_LINE, secrets=SECRETS,
                 commands=("json", "md", "events", "sniff")) -> Outcome:
    """Run analyze (JSON to a file, markdown to stdout), events (JSON lines) and sniff on `bundle` in-process,
    from a current folder inside tmp_path, and check the five guarantees."""
    out_dir = tmp_path / "out"
    cwd = tmp_path / "cwd" / "deeper" / "still"  # '../../x' from here stays inside tmp_path
    out_dir.mkdir(exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    before = snapshot(tmp_path)
    old_cwd = os.getcwd()
    os.chdir(cwd)
    outputs: dict[str, str] = {}
    written: set[Path] = set()
    try:
        report = None
        status_seen = None
        if "json" in commands:
            out = out_dir / f"report-{uuid.uuid4().hex}.json"
            r = invoke("analyze", bundle, "--format", "json", "-o", out, *flags)
            assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
            status_seen = r.exit_code
            outputs["analyze json stderr"] = r.stderr
            outputs["analyze json stdout"] = r.stdout
            if out.exists():
                written.add(out)
                outputs["analyze json"] = out.read_text()
                report = json.loads(outputs["analyze json"])
            if r.exit_code == 2:
                one_error_line(r.stderr)
                assert not out.exists()
        if "md" in commands:
            r = invoke("analyze", bundle, *flags)
            assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
            outputs["analyze md"], outputs["analyze md stderr"] = r.stdout, r.stderr
            assert status_seen is None or r.exit_code == status_seen
            status_seen = r.exit_code
        if "events" in commands:
            out = out_dir / f"events-{uuid.uuid4().hex}.jsonl"
            r = invoke("events", bundle, "-o", out, *flags)
            assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
            outputs["events stderr"] = r.stderr
            assert r.exit_code == (2 if status_seen == 2 else 0), r.stderr
            if out.exists():
                written.add(out)
                outputs["events"] = out.read_text()
        if "sniff" in commands:
            r = invoke("sniff", bundle, "--format", "json", *flags)
            assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
            assert r.exit_code == 0, r.stderr
            outputs["sniff"], outputs["sniff stderr"] = r.stdout, r.stderr
    finally:
        os.chdir(old_cwd)
    after = snapshot(tmp_path)
    new = {k for k in after if k not in before or after[k] != before[k]} - {str(p.relative_to(tmp_path))
                                                                              for p in written}
    new.discard("out")  # the output folder's own mtime
    assert not new, f"written outside the output path: {sorted(new)}"
    assert status_seen in status, (status_seen, outputs)
    no_traceback(*outputs.values())
    no_secret(*outputs.values(), secrets=secrets)
    if oom_file is not None:
        assert report is not None
        assert report["root_cause"]["category"].startswith("oom."), report["root_cause"]
        assert report["first_causal"]["file"].endswith(oom_file), report["first_causal"]
        assert report["first_causal"]["line"] == oom_line, report["first_causal"]
    return Outcome(report, status_seen, outputs)


@dataclass
class Proc:
    status: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mib: float


# Runs a command and writes its peak RSS (KiB) to the file named first. A process's peak starts at its
# parent's peak (Linux keeps the high-water mark across fork and exec), and the test runner's own can be large:
# so k3logs is started by this small launcher, whose peak is small, and measured there.
LAUNCH = """import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL)
_, wstatus, usage = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(wstatus)
if code < 0:  # killed by a signal: so is the launcher, as if it were the command
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def run_k3logs(*args, timeout: float = 120, cwd: Path | None = None) -> Proc:
    """The installed entry point in a child process: its exit status, output, wall time and peak RSS (of that
    process alone, see LAUNCH). Killed with its launcher, and the test failed, past `timeout`: a hang is a
    failure."""
    cmd = [str(K3LOGS)] if K3LOGS.exists() else [sys.executable, "-m", "k3logs"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as peak:
        t0 = time.monotonic()
        p = subprocess.Popen([sys.executable, "-c", LAUNCH, peak.name, *cmd, *map(str, args)], stdout=out,
                             stderr=err, stdin=subprocess.DEVNULL, cwd=cwd, start_new_session=True)
        killed = threading.Event()

        def kill():
            killed.set()
            os.killpg(p.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            p.wait()
        finally:
            timer.cancel()
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        proc = Proc(p.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                    seconds, int(peak.read() or 0) / 1024)
    assert not killed.is_set(), f"k3logs {' '.join(map(str, args))} did not finish in {timeout} s"
    no_traceback(proc.stdout, proc.stderr)
    return proc


def check_report(report: dict, oom_file: str = "vllm.log", oom_line: int = OOM_LINE) -> None:
    assert report["root_cause"]["category"].startswith("oom."), report["root_cause"]
    assert report["first_causal"]["file"].endswith(oom_file) and report["first_causal"]["line"] == oom_line


def tarinfo(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname, ti.mtime = kind, linkname, 1_780_000_000
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        ti.devmajor, ti.devminor = 1, 3
    return ti


def gzip_stream(path: Path, parts, level: int = 6) -> int:
    """Write a gzip file from an iterable of byte chunks, holding one chunk at a time; returns its size. Each
    chunk is a gzip member of its own (a gzip file may hold several; readers join them), and a chunk that
    comes again is compressed once: 2 GiB of zeros cost a second, not twelve."""
    members: dict[bytes, bytes] = {}
    with open(path, "wb") as f:
        for chunk in parts:
            if chunk not in members:
                members = {chunk: gzip.compress(chunk, level, mtime=0)}  # (one kept: the runs are consecutive)
            f.write(members[chunk])
    return path.stat().st_size


def zeros(total: int, chunk: int = 16 << 20):
    block = bytes(chunk)
    while total > 0:
        yield block[:min(chunk, total)]
        total -= chunk


def tar_header(name: str, size: int) -> bytes:
    ti = tarfile.TarInfo(name)
    ti.size, ti.mtime = size, 1_780_000_000
    return ti.tobuf(format=tarfile.GNU_FORMAT)


def tar_member(name: str, data: bytes) -> bytes:
    return tar_header(name, len(data)) + data + bytes(-len(data) % 512)


# ======================================================================================================
# 1. archives
# ======================================================================================================
FILLER = "".join(f"INFO 08-11 07:40:{i % 60:02d} [loggers.py:1] step {i} {os.urandom(24).hex()}\n"
                 for i in range(40_000))  # ~3 MB that compresses about 2x: the damage falls inside it


@pytest.mark.parametrize("kind", ["tar.gz", "tar.zst", "zip"])
@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_truncated_archive_is_salvaged_up_to_the_damage(tmp_path, kind, keep):
    files = {"case/node-a/vllm.log": INCIDENT, "case/node-a/steps.log": FILLER}
    data = zip_bytes(files) if kind == "zip" else tar_bytes(files, kind.split(".")[1])
    bundle = tmp_path / f"case.{kind}"
    bundle.write_bytes(data[: int(len(data) * keep)])
    o = check_bundle(tmp_path, bundle)
    assert "truncated or corrupt" in o.skip_reasons() or "corrupt zip" in o.skip_reasons(), o.skip_reasons()
    assert "skipped or read in part" in o.outputs["events stderr"]  # events says so too
    # what was readable of the file cut in two was read
    assert any(f["file"].endswith("steps.log") and f["lines"] > 1000 for f in o.report["sniffed"]), o.report["sniffed"]


def test_a_corrupt_xz_is_analysed_up_to_the_damage(tmp_path):
    """Damage in an xz's first 8 KiB of input gave nothing (lzma's reader decodes that much at once)."""
    data = bytearray(lzma.compress(INCIDENT_B + FILLER.encode()))
    data[3000:3064] = bytes(64)
    bundle = tmp_path / "case"
    bundle.mkdir()
    (bundle / "vllm.log.xz").write_bytes(bytes(data))
    o = check_bundle(tmp_path, bundle, oom_file="vllm.log.xz", commands=("json", "events"))
    assert "truncated or corrupt" in o.skipped["vllm.log.xz"][0]


@pytest.mark.parametrize("kind", ["tar.gz", "tar.zst", "zip"])
def test_corrupt_bytes_inside_an_archive_are_reported_not_raised(tmp_path, kind):
    files = {"case/node-a/vllm.log": INCIDENT, "case/node-a/steps.log": FILLER, "case/node-b/more.log": FILLER}
    data = bytearray(zip_bytes(files) if kind == "zip" else tar_bytes(files, kind.split(".")[1]))
    mid = len(data) // 2
    data[mid: mid + 64] = bytes(64)  # a run of zeros where the middle of the data was
    bundle = tmp_path / f"case.{kind}"
    bundle.write_bytes(bytes(data))
    o = check_bundle(tmp_path, bundle)
    assert o.skipped, "the damage must be reported"


def test_a_streamed_zip_cut_short_is_read_from_its_local_headers(tmp_path):
    """zip written to a pipe (sizes after the data, no central directory until the end), cut in two."""
    class Sink(io.RawIOBase):
        def __init__(self):
            self.data = bytearray()

        def writable(self):
            return True

        def write(self, b):
            self.data += b
            return len(b)

    sink = Sink()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in {"case/vllm.log": INCIDENT, "case/steps.log": FILLER}.items():
            with zf.open(name, "w") as w:
                w.write(text.encode())
    bundle = tmp_path / "case.zip"
    bundle.write_bytes(bytes(sink.data[: len(sink.data) * 3 // 4]))
    o = check_bundle(tmp_path, bundle)
    assert "local headers" in o.skip_reasons()


@pytest.mark.parametrize("data", [b"\x1f\x8bgarbage, not a gzip stream", b"PK\x03\x04" + bytes(200),
                                  b"\x28\xb5\x2f\xfd" + os.urandom(300), b"BZh9" + os.urandom(300)],
                         ids=["gzip", "zip", "zstd", "bzip2"])
def test_an_archive_with_nothing_readable_exits_2_with_one_line(tmp_path, data):
    bundle = tmp_path / "bundle.tar.gz"
    bundle.write_bytes(data)
    o = check_bundle(tmp_path, bundle, status=(2,), oom_file=None)
    assert "could be read" in o.outputs["analyze json stderr"]


def escaping_names(tag: str) -> list[str]:
    return ["../../etc/x", "/abs/path/vllm-abs.log", "..\\..\\windows\\x.log", "case/../../../up.log",
            f"../../../../../../../../../../tmp/k3logs-escape-{tag}/escaped.log", f"/tmp/k3logs-escape-{tag}/abs.log"]


@pytest.mark.parametrize("kind", ["tar", "tar.gz", "zip"])
def test_member_names_that_leave_the_bundle_are_read_in_place_never_written(tmp_path, kind):
    tag = uuid.uuid4().hex
    files = {name: f"INFO 08-11 07:36:20 [x.py:1] escaped member {i}\n" for i, name in enumerate(escaping_names(tag))}
    files["case/vllm.log"] = INCIDENT
    data = zip_bytes(files) if kind == "zip" else tar_bytes(files, "gz" if kind == "tar.gz" else "")
    bundle = tmp_path / f"case.{kind}"
    bundle.write_bytes(data)
    o = check_bundle(tmp_path, bundle)
    assert not Path(f"/tmp/k3logs-escape-{tag}").exists()
    assert not (tmp_path / "etc").exists() and not (tmp_path / "up.log").exists()
    names = {f["file"] for f in o.report["sniffed"]}
    assert "etc/x" in names and "abs/path/vllm-abs.log" in names  # read, under a name inside the bundle
    assert all(".." not in n and not n.startswith("/") for n in names)


def test_links_devices_and_fifos_inside_a_tar_are_never_opened(tmp_path):
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("OUTSIDE_PASSWORD=never-read-0123\n")
    extra = [tarinfo("case/etc-passwd", tarfile.SYMTYPE, "/etc/passwd"),
             tarinfo("case/outside", tarfile.SYMTYPE, str(outside)),
             tarinfo("case/up", tarfile.SYMTYPE, "../../../outside-secret.txt"),
             tarinfo("case/inside", tarfile.SYMTYPE, "vllm.log"),
             tarinfo("case/loop", tarfile.SYMTYPE, "loop"),
             tarinfo("case/hard-inside", tarfile.LNKTYPE, "case/vllm.log"),
             tarinfo("case/hard-shadow", tarfile.LNKTYPE, "/etc/shadow"),
             tarinfo("case/null", tarfile.CHRTYPE), tarinfo("case/sda", tarfile.BLKTYPE),
             tarinfo("case/fifo", tarfile.FIFOTYPE)]
    bundle = tmp_path / "case.tar.gz"
    bundle.write_bytes(tar_bytes({"case/vllm.log": INCIDENT}, "gz", extra))
    o = check_bundle(tmp_path, bundle, secrets=SECRETS + ("never-read-0123",))
    for name in ("etc-passwd", "outside", "up", "inside", "loop", "hard-inside", "hard-shadow", "null", "sda", "fifo"):
        assert any("never opened" in r for r in o.skipped.get(name, [])), (name, o.skipped)
    assert not (tmp_path / "cwd" / "deeper" / "still" / "case").exists()


def test_links_and_devices_inside_a_zip_are_never_opened(tmp_path):
    def special(name: str, mode: int, data: bytes) -> tuple[zipfile.ZipInfo, bytes]:
        zi = zipfile.ZipInfo(name)
        zi.external_attr = mode << 16
        return zi, data

    extra = [special("case/etc-passwd", stat.S_IFLNK | 0o777, b"/etc/passwd"),
             special("case/fifo", stat.S_IFIFO | 0o644, b""), special("case/null", stat.S_IFCHR | 0o644, b"")]
    bundle = tmp_path / "case.zip"
    bundle.write_bytes(zip_bytes({"case/vllm.log": INCIDENT}, extra))
    o = check_bundle(tmp_path, bundle)
    for name in ("etc-passwd", "fifo", "null"):
        assert any("never opened" in r for r in o.skipped.get(name, [])), (name, o.skipped)


def nest(inner: bytes, levels: int) -> bytes:
    for i in range(levels):
        inner = tar_bytes({f"level-{levels - i}.tar.gz": inner}, "gz")
    return inner


def test_archives_nested_five_deep_stop_at_the_depth_limit(tmp_path):
    deep = tar_bytes({"deep/vllm-deep.log": INCIDENT.replace("GPU 1", "GPU 0")}, "gz")
    bundle = tmp_path / "case.tar.gz"
    bundle.write_bytes(tar_bytes({"case/vllm.log": INCIDENT, "case/nest.tar.gz": nest(deep, 4)}, "gz"))
    o = check_bundle(tmp_path, bundle)
    assert "nested deeper than 3 levels" in o.skip_reasons()
    assert not any("vllm-deep.log" in f["file"] for f in o.report["sniffed"])
    # a deeper limit opens them all: the innermost log is read
    o = check_bundle(tmp_path, bundle, "--max-depth", "8", commands=("json",), oom_file=None)
    assert o.report["root_cause"]["category"].startswith("oom.")
    assert "nested deeper" not in o.skip_reasons()
    assert any(f["file"].endswith("deep/vllm-deep.log") for f in o.report["sniffed"])


# a node's log of a realistic size (5 MB): earlier lines, then the incident, whose OOM is far past any head
EARLIER = 60_000
NODE_LOG = "".join(f"INFO 08-11 07:{30 + i // 12_000:02d}:{i // 200 % 60:02d} [loggers.py:1] step {i} "
                   f"{os.urandom(24).hex()}\n" for i in range(EARLIER)) + INCIDENT
NESTED_ZIP = {  # where the node's zip sits: the bundle's name and bytes
    "tar.gz holding a zip": lambda z: ("case.tar.gz", tar_bytes({"case/node-a.zip": z, "case/notes.txt": "x\n"}, "gz")),
    "zip in zip": lambda z: ("case.zip", zip_bytes({"case/node-a.zip": z, "case/notes.txt": "x\n"})),
    "zip.gz": lambda z: ("node-a.zip.gz", compress(z, "gz")),
    "zip in tar.zst": lambda z: ("case.tar.zst", tar_bytes({"case/node-a.zip": z, "case/notes.txt": "x\n"}, "zst")),
}


@pytest.mark.parametrize("nesting", NESTED_ZIP)
def test_a_zip_inside_an_archive_or_gzip_is_read_whole(tmp_path, nesting):
    """A zip that is not a file of its own is read into memory (zip needs random access): it was read with one
    read(), which a peeked or decompressed stream answers with its first bytes only, and salvaged from those."""
    name, data = NESTED_ZIP[nesting](zip_bytes({"node-a/vllm.log": NODE_LOG}))
    bundle = tmp_path / name
    bundle.write_bytes(data)
    o = check_bundle(tmp_path, bundle, commands=("json", "events"), oom_line=EARLIER + OOM_LINE)
    assert "corrupt zip" not in o.skip_reasons() and not o.skipped, o.skip_reasons()
    log = [f for f in o.report["sniffed"] if f["file"].endswith("vllm.log")]
    assert [f["lines"] for f in log] == [EARLIER + len(INCIDENT_LINES)], o.report["sniffed"]
    assert o.outputs["events"].count("step ") >= EARLIER  # every line is in the event table


def test_a_tar_with_2000_tiny_members_is_read_whole_or_cut_by_the_member_limit(tmp_path):
    # (what it costs is measured by benchmarks/members.py, not here)
    files = {f"case/many/f{i:04d}.log": f"INFO 08-11 07:36:{i % 60:02d} [x.py:1] member {i}\n" for i in range(2000)}
    files["case/vllm.log"] = INCIDENT
    bundle = tmp_path / "case.tar.gz"
    bundle.write_bytes(tar_bytes(files, "gz"))
    o = check_bundle(tmp_path, bundle, commands=("json",))
    assert o.report["bundle"]["files"] == 2001
    # and the member limit cuts it short, saying so: the incident's log, past the limit, is not read, so
    # nothing can show an incident (3, inconclusive), never "healthy"
    o = check_bundle(tmp_path, bundle, "--max-members", "100", commands=("json",), oom_file=None, status=(3,))
    assert "more than 100" in o.skip_reasons()


def test_a_huge_pax_header_is_refused_not_read_into_memory(tmp_path):
    """tarfile reads an extended header whole: 1 GiB of pax header (2 MB compressed) must not become 1 GiB
    of memory (it took 2.2 GB of RSS before the fix)."""
    bundle = tmp_path / "case"
    bundle.mkdir()
    (bundle / "vllm.log").write_bytes(INCIDENT_B)
    size = 1 << 30
    ti = tarfile.TarInfo("././@PaxHeader")
    ti.type, ti.size = tarfile.XHDTYPE, size
    record = b"9 a=bcde\n" * (1 << 20)
    gzip_stream(bundle / "pax.tar.gz", [ti.tobuf(format=tarfile.USTAR_FORMAT),
                                        *(record for _ in range(size // len(record))), record[: size % len(record)]])
    before = snapshot(tmp_path)
    p = run_k3logs("analyze", bundle, "--format", "json", timeout=120, cwd=tmp_path)
    assert snapshot(tmp_path) == before
    assert p.status == 1, p.stderr
    d = json.loads(p.stdout)
    check_report(d)
    assert any("extended header" in s["reason"] for s in d["bundle"]["skipped"]), d["bundle"]["skipped"]
    assert p.max_rss_mib < 600, p.max_rss_mib


def test_a_chain_of_sparse_map_blocks_is_cut(tmp_path):
    """A GNU sparse member whose map says 'more follows' forever: tarfile would follow it to the end."""
    ti = tarfile.TarInfo("case/sparse.log")
    ti.type, ti.size = tarfile.GNUTYPE_SPARSE, 0
    head = bytearray(ti.tobuf(format=tarfile.GNU_FORMAT))
    head[482] = 1  # isextended
    head[148:156] = b" " * 8
    head[148:156] = b"%06o\0 " % sum(head)
    ext = bytearray(512)
    ext[504] = 1
    data = tar_member("case/vllm.log", INCIDENT_B) + bytes(head) + bytes(ext) * 8000
    bundle = tmp_path / "case.tar"
    bundle.write_bytes(data)
    o = check_bundle(tmp_path, bundle, commands=("json",))
    assert "sparse map longer" in o.skip_reasons()


def test_a_sparse_tar_that_declares_64_gib_is_read_within_the_ratio_limit(tmp_path):
    """20 KB of tar whose sparse members declare 16 GiB each: tarfile makes their holes up as zeros, which the
    limits on the archive stream never saw (64 GiB were read). Now the zeros count against the ratio."""
    bundle = tmp_path / "case.tar"
    bundle.write_bytes(tar_member("case/vllm.log", INCIDENT_B) + sparse_bomb(members=4, declared=16 << 30))
    assert bundle.stat().st_size < 20_000
    o = check_bundle(tmp_path, bundle, commands=("json",))
    assert o.report["bundle"]["bytes"] < 300 << 20  # the 256 MiB the ratio allows a small archive, no more
    assert "decompression bomb" in o.skip_reasons()


@pytest.mark.parametrize("pax", [{"GNU.sparse.map": "abc", "GNU.sparse.size": "10", "GNU.sparse.name": "x"},
                                 {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.realsize": "10"},
                                 {"GNU.sparse.size": "zz", "GNU.sparse.numblocks": "5"}, {"size": "-5"}],
                         ids=["sparse-map", "sparse-1.0-map", "sparse-size", "negative-size"])
def test_damaged_pax_fields_are_reported_not_raised(tmp_path, pax):
    """tarfile converts some pax fields with int() unchecked: a ValueError escaped as an internal error."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, data, headers in (("case/vllm.log", INCIDENT_B, {}), ("case/bad.log", b"x" * 700, pax)):
            ti = tarfile.TarInfo(name)
            ti.size, ti.pax_headers = len(data), dict(headers)
            tf.addfile(ti, io.BytesIO(data))
    bundle = tmp_path / "case.tar.gz"
    bundle.write_bytes(compress(buf.getvalue(), "gz"))
    o = check_bundle(tmp_path, bundle, commands=("json", "events"))
    assert "truncated or corrupt" in o.skip_reasons()


def test_a_zip_whose_directory_says_an_unknown_version_is_still_read(tmp_path):
    """zipfile raises NotImplementedError for a 'version needed' it does not know (found by test_fuzz)."""
    data = bytearray(zip_bytes({"case/vllm.log": INCIDENT, "case/steps.log": FILLER[:5000]}))
    cd = data.rfind(b"PK\x01\x02")  # the last central directory entry
    data[cd + 6] = 84  # 'version needed to extract': 8.4
    bundle = tmp_path / "case.zip"
    bundle.write_bytes(bytes(data))
    o = check_bundle(tmp_path, bundle)
    assert "local headers" in o.skip_reasons()


NASTY_NAMES = ["caf\xe9-latin1.log", "new\nline.log", "esc\x1b[31mred\x1b]0;title\x07.log", "tab\there.log"]


def assert_names_are_printable(o: Outcome) -> None:
    for key in ("analyze md", "sniff", "events", "analyze json"):
        text = o.outputs.get(key, "")
        assert "\x1b" not in text and "\x07" not in text, key
    names = [f["file"] for f in o.report["sniffed"]]
    assert all(n.isprintable() for n in names), names


def test_member_names_that_are_not_utf8_or_hold_control_characters(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tf:
        for name, data in [("case/vllm.log", INCIDENT_B)] + [(f"case/{n}", b"INFO 08-11 07:36:20 [x.py:1] x\n")
                                                             for n in NASTY_NAMES]:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    bundle = tmp_path / "case.tar"
    bundle.write_bytes(buf.getvalue())
    o = check_bundle(tmp_path, bundle)
    assert_names_are_printable(o)
    assert any(f["file"] == "caf\ufffd-latin1.log" for f in o.report["sniffed"])


def test_file_names_that_are_not_utf8_or_hold_control_characters(tmp_path):
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(INCIDENT_B)
    for n in NASTY_NAMES:
        with open(os.path.join(os.fsencode(b), n.encode("latin-1")), "wb") as f:
            f.write(b"INFO 08-11 07:36:20 [x.py:1] x\n")
    o = check_bundle(tmp_path, b)
    assert_names_are_printable(o)
    r = invoke("sniff", b)
    assert len(r.stdout.strip().splitlines()) == 1 + 1 + len(NASTY_NAMES)  # one line per file


# ------------------------------------------------------------------------------------------------------
# decompression bombs: 2 GB of zeros, compressed as a stream (never held), read with lowered limits
# ------------------------------------------------------------------------------------------------------
BOMB_BYTES = 2 << 30


def analyze_in_place(folder: Path, bundle: Path, *flags):
    """`k3logs analyze --format json` run in `folder` (which holds the bundle): the process and its report,
    after checking that it found the incident and wrote nothing there."""
    before = snapshot(folder)
    p = run_k3logs("analyze", bundle, "--format", "json", *flags, timeout=120, cwd=folder)
    assert snapshot(folder) == before
    assert p.status == 1, p.stderr
    d = json.loads(p.stdout)
    check_report(d)
    return p, d


@pytest.fixture(scope="module")
def bomb_dir(tmp_path_factory):
    """vllm.log beside zeros.gz (2 GiB of zeros, 2 MB on disk), built once for the module."""
    d = tmp_path_factory.mktemp("bomb") / "bundle"
    d.mkdir()
    (d / "vllm.log").write_bytes(INCIDENT_B)
    gzip_stream(d / "zeros.gz", zeros(BOMB_BYTES))
    return d


@pytest.mark.parametrize("flags,why", [(("--max-ratio", "10"), "decompression bomb"),
                                      (("--max-member-bytes", str(64 << 20)), "file limit"),
                                      ((), "decompression bomb")], ids=["max-ratio", "max-member-bytes", "defaults"])
def test_a_gzip_bomb_beside_the_logs_is_read_in_part_in_bounded_time_and_memory(bomb_dir, flags, why, record_property):
    p, d = analyze_in_place(bomb_dir.parent, bomb_dir, *flags)
    reasons = [s["reason"] for s in d["bundle"]["skipped"] if s["file"] == "zeros.gz"]
    assert any(why in r for r in reasons), reasons
    assert d["bundle"]["bytes"] <= BOMB_BYTES + len(INCIDENT_B)
    record_property("seconds", round(p.seconds, 2))
    record_property("max_rss_mib", round(p.max_rss_mib))
    assert p.seconds < 60 and p.max_rss_mib < 600, (p.seconds, p.max_rss_mib)


def test_a_bomb_member_of_a_tar_gz_does_not_make_the_archive_be_decompressed_whole(tmp_path, record_property):
    """The member is stopped at the ratio limit, and the archive stream at twice it: tarfile would otherwise
    skip (decompress) the rest of the bomb before the next member. 1 GiB of zeros after the incident."""
    size = 1 << 30
    bundle = tmp_path / "case.tar.gz"
    gzip_stream(bundle, [tar_member("case/vllm.log", INCIDENT_B), tar_header("case/zeros.bin", size),
                         *zeros(size), tar_member("case/after.log", b"INFO 08-11 07:40:00 [x.py:1] after\n"),
                         bytes(1024)])
    p, d = analyze_in_place(tmp_path, bundle, "--max-ratio", "10")
    reasons = {s["file"]: s["reason"] for s in d["bundle"]["skipped"]}
    assert "decompression bomb" in reasons["zeros.bin"] and "decompression bomb" in reasons["case.tar.gz"]
    assert d["bundle"]["bytes"] < 600 << 20
    record_property("seconds", round(p.seconds, 2))
    record_property("max_rss_mib", round(p.max_rss_mib))
    assert p.seconds < 60 and p.max_rss_mib < 600


def test_a_bomb_member_of_a_zip_is_read_in_part(tmp_path):
    bundle = tmp_path / "case.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:  # (level 1: 3 s, not 10)
        zf.writestr("case/vllm.log", INCIDENT)
        with zf.open("case/zeros.bin", "w", force_zip64=True) as w:
            for chunk in zeros(1 << 30):
                w.write(chunk)
    p, d = analyze_in_place(tmp_path, bundle, "--max-ratio", "10")
    assert any("decompression bomb" in s["reason"] for s in d["bundle"]["skipped"])
    assert p.seconds < 60 and p.max_rss_mib < 600


# ======================================================================================================
# 2. folders
# ======================================================================================================
def test_link_loops_and_links_leaving_the_bundle_are_not_followed(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "private.log").write_text("INFO 08-11 07:36:30 [x.py:1] DB_PASSWORD=outside-never-read-42\n")
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(INCIDENT_B)
    (b / "loop").symlink_to(".")
    (b / "up-loop").symlink_to("../bundle")
    (b / "sub").mkdir()
    (b / "sub" / "back").symlink_to("..")
    (b / "self").symlink_to("self")
    (b / "dangling").symlink_to("nothing-here")
    (b / "etc").symlink_to("/etc")
    (b / "passwd").symlink_to("/etc/passwd")
    (b / "elsewhere").symlink_to(outside)
    (b / "private.log").symlink_to(outside / "private.log")
    o = check_bundle(tmp_path, b, secrets=SECRETS + ("outside-never-read-42",))
    sk = o.skipped
    assert "link loop" in " ".join(sk["loop"] + sk["up-loop"] + sk["sub/back"])
    for name in ("etc", "passwd", "elsewhere", "private.log"):
        assert any("leaves the bundle" in r for r in sk[name]), (name, sk)
    assert sk["self"] and sk["dangling"]


def test_fifo_and_socket_are_never_opened(tmp_path):
    """Opening a FIFO blocks until a writer comes: the real process must finish, well within the timeout."""
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(INCIDENT_B)
    os.mkfifo(b / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(b / "sock"))
        before = snapshot(tmp_path)
        for cmd in (("analyze", b, "--format", "json"), ("sniff", b, "--format", "json")):
            p = run_k3logs(*cmd, timeout=60)
            assert p.status == (1 if cmd[0] == "analyze" else 0), p.stderr
            no_secret(p.stdout, p.stderr)
            if cmd[0] == "analyze":
                d = json.loads(p.stdout)
                check_report(d)
                reasons = {s["file"]: s["reason"] for s in d["bundle"]["skipped"]}
                assert "fifo" in reasons["fifo"] and "never opened" in reasons["fifo"]
                assert "socket" in reasons["sock"] and "never opened" in reasons["sock"]
        assert snapshot(tmp_path) == before
    finally:
        sock.close()


def test_folders_nested_40_deep_stop_at_the_folder_depth_limit(tmp_path):
    b = tmp_path / "bundle"
    deep = b.joinpath(*[f"d{i}" for i in range(40)])
    deep.mkdir(parents=True)
    (deep / "deep.log").write_text("INFO 08-11 07:36:30 [x.py:1] forty folders down\n")
    (b / "vllm.log").write_bytes(INCIDENT_B)
    o = check_bundle(tmp_path, b)
    assert "nested deeper than 32 levels" in o.skip_reasons()


@pytest.mark.skipif(IS_ROOT, reason="root reads a chmod 000 file anyway (see the test below for root)")
def test_an_unreadable_file_is_skipped_with_its_reason(tmp_path):
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(INCIDENT_B)
    locked = b / "locked.log"
    locked.write_text("INFO 08-11 07:36:30 [x.py:1] you cannot read me\n")
    locked.chmod(0)
    try:
        o = check_bundle(tmp_path, b)
        assert any("cannot open" in r for r in o.skipped["locked.log"])
    finally:
        locked.chmod(0o644)


def test_an_unreadable_file_is_skipped_with_its_reason_even_as_root(tmp_path, monkeypatch):
    """The same, for root: discover's open() of that one file fails as it would for anyone else."""
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(INCIDENT_B)
    locked = b / "locked.log"
    locked.write_text("INFO 08-11 07:36:30 [x.py:1] you cannot read me\n")
    real_open = open

    def deny(path, *a, **k):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(discover, "open", deny, raising=False)
    o = check_bundle(tmp_path, b)
    assert any("cannot open: Permission denied" in r for r in o.skipped["locked.log"]), o.skipped


def test_empty_files_beside_the_logs_change_nothing(tmp_path):
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(INCIDENT_B)
    for name in ("empty.log", "dmesg.txt", "nvidia-smi.txt"):
        (b / name).write_bytes(b"")
    (b / "blank.log").write_text("\n\n   \n")
    o = check_bundle(tmp_path, b)
    kinds = {f["file"]: f["kind"] for f in o.report["sniffed"]}
    assert kinds["empty.log"] == "empty" and kinds["blank.log"] == "empty"


def test_a_folder_of_only_empty_files_exits_2_with_one_line(tmp_path):
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "empty.log").write_bytes(b"")
    o = check_bundle(tmp_path, b, status=(2,), oom_file=None)
    assert "could be read" in one_error_line(o.outputs["analyze json stderr"])


# ======================================================================================================
# 3. content
# ======================================================================================================
def with_lines(*before: bytes) -> tuple[bytes, int]:
    """The incident after `before` (raw bytes, newlines included): the bytes, and the line of the OOM."""
    head = b"".join(before)
    return head + INCIDENT_B, head.count(b"\n") + OOM_LINE


def test_a_binary_file_is_skipped_with_its_reason(tmp_path):
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(INCIDENT_B)
    (b / "core.12345").write_bytes(b"\x7fELF\x02\x01\x01" + os.urandom(200_000))
    (b / "model.safetensors").write_bytes(bytes(4096) + os.urandom(4096))
    o = check_bundle(tmp_path, b)
    assert any(r.startswith("binary") for r in o.skipped["core.12345"])
    assert any(r.startswith("binary") for r in o.skipped["model.safetensors"])
    assert all("%" not in r or int(r.split("%")[0].split("(")[-1]) <= 100 for rs in o.skipped.values() for r in rs)


def crlf() -> tuple[bytes, int]:
    return INCIDENT_B.replace(b"\n", b"\r\n"), OOM_LINE


def utf16(bom: bytes, codec: str) -> tuple[bytes, int]:
    text = "INFO 08-11 07:35:58 [x.py:1] caf\u00e9 \u4e2d\u6587 \U0001f680\n" + INCIDENT
    return bom + text.encode(codec), OOM_LINE + 1


CONTENT = {
    "nul-bytes-in-lines": lambda: with_lines(b"INFO 08-11 07:35:50 [x.py:1] a\x00b\x00c\n" * 3),
    "nul-hole-mid-file": lambda: with_lines(b"INFO 08-11 07:35:50 [x.py:1] before the crash\n", bytes(5000),
                                            b"INFO 08-11 07:35:51 [x.py:1] after the crash\n"),
    "nul-hole-at-start": lambda: with_lines(bytes(4096)),  # truncated under its writer (copytruncate)
    "nul-hole-of-3-mib": lambda: with_lines(bytes(3 << 20)),  # more than the head sniff reads
    "crlf": crlf,
    "utf-16-le-bom": lambda: utf16(codecs.BOM_UTF16_LE, "utf-16-le"),
    "utf-16-be-bom": lambda: utf16(codecs.BOM_UTF16_BE, "utf-16-be"),
    "utf-8-bom": lambda: (codecs.BOM_UTF8 + INCIDENT_B, OOM_LINE),
    "latin-1": lambda: with_lines("INFO 08-11 07:35:50 [x.py:1] caf\u00e9 na\u00efve \u00fcber\n".encode("latin-1") * 50),
    "mixed-encodings": lambda: with_lines("INFO 08-11 07:35:50 [x.py:1] caf\u00e9\n".encode(),
                                          "INFO 08-11 07:35:51 [x.py:1] caf\u00e9\n".encode("latin-1"),
                                          "INFO 08-11 07:35:52 [x.py:1] \u4e2d\n".encode("gbk"),
                                          b"INFO 08-11 07:35:53 [x.py:1] \xff\xfe\xc3(\xa0\xa1\n"),
    "ansi-colours": lambda: (b"".join(b"\x1b[1;31m" + ln.encode() + b"\x1b[0m\n" for ln in INCIDENT_LINES), OOM_LINE),
    "tqdm-cr-noise": lambda: with_lines(b"".join(b"Loading safetensors checkpoint shards: %3d%% Completed | %d/64 "
                                                 b"[00:%02d<00:10, 2.1it/s]\r" % (i * 100 // 64, i, i % 60)
                                                 for i in range(64)) + b"\n",
                                        b"\x1b[A\x1b[2K\r" * 20 + b"\n"),
    "huge-line-30mb": lambda: with_lines(b"INFO 08-11 07:35:50 [x.py:1] " + b"A" * (30 << 20) + b"\n"),
}


@pytest.mark.parametrize("case", CONTENT)
def test_hostile_content_keeps_the_error_and_grep_line_numbers(tmp_path, case):
    data, line = CONTENT[case]()
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(data)
    (b / "worker-copy.log").write_bytes(data)  # the same hostile file, beside the first one (sorts after it)
    commands = ("json", "events") if len(data) > 1 << 20 else ("json", "md", "events", "sniff")
    o = check_bundle(tmp_path, b, oom_line=line, commands=commands)
    if case == "huge-line-30mb":
        assert "truncated" in " ".join(o.skipped["vllm.log"])
        assert max(len(ln) for ln in o.outputs["events"].splitlines()) < 2 << 20  # cut, not held whole
    if case.startswith("nul-hole"):
        assert o.report["sniffed"][0]["kind"] == "vllm", o.report["sniffed"]
    events = pl.read_ndjson(io.StringIO(o.outputs["events"]))
    oom = events.filter(pl.col("message").str.contains("CUDA out of memory") & (pl.col("file") == "vllm.log"))
    assert line in oom["line"].to_list() or line in oom["line_end"].to_list()


def test_a_300_mb_file_with_no_newline_is_read_in_bounded_memory(tmp_path, record_property):
    b = tmp_path / "bundle"
    b.mkdir()
    (b / "vllm.log").write_bytes(INCIDENT_B)
    piece = b"INFO 08-11 07:35:59 [x.py:1] " + b"B" * ((1 << 20) - 29)
    with open(b / "no-newline.log", "wb") as f:
        for _ in range(300):  # 300 MiB, one chunk at a time
            f.write(piece)
    before = snapshot(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    p = run_k3logs("analyze", b, "--format", "json", timeout=180)
    assert p.status == 1, p.stderr
    d = json.loads(p.stdout)
    check_report(d)
    assert {"file": "no-newline.log", "reason": "1 line(s) longer than the limit were truncated"} in d["bundle"]["skipped"]
    record_property("analyze_seconds", round(p.seconds, 2))
    record_property("analyze_max_rss_mib", round(p.max_rss_mib))
    assert p.max_rss_mib < 600, p.max_rss_mib
    e = run_k3logs("events", b, "-o", out / "events.parquet", timeout=180)
    assert e.status == 0, e.stderr
    record_property("events_seconds", round(e.seconds, 2))
    record_property("events_max_rss_mib", round(e.max_rss_mib))
    assert e.max_rss_mib < 800, e.max_rss_mib
    df = pl.read_parquet(out / "events.parquet")
    row = df.filter(pl.col("file") == "no-newline.log").row(0, named=True)
    assert row["line"] == 1 and row["truncated"] and len(row["message"]) <= 256 * 1024
    assert set(snapshot(tmp_path)) - set(before) == {"out", "out/events.parquet"}


# ======================================================================================================
# 4. secrets
# ======================================================================================================
PLANTED = {
    # in log lines
    "log-api-key": "Sq9LogApiKeyValue01", "log-hf": "hf_PlantedHuggingFaceToken0123456789",
    "log-db": "Pw9PlantedDbPassLog", "log-url": "Url9PlantedPass", "log-bearer": "Bearer9PlantedTokenValue",
    "aws-id": "AKIAPLANTED0KEY12345", "aws-secret": "Aws9PlantedSecretKeyValue",
    # env dump
    "env-secret": "Svc9PlantedSecret", "env-password": "Pw9PlantedDbPass", "env-key": "Wandb9PlantedKey",
    "env-quoted": "Oai9PlantedKey", "env-token": "Gh9PlantedToken",
    # launch command
    "cli-api-key": "Cli9PlantedApiKey", "cli-hf-token": "Hft9PlantedToken", "cli-continued": "Cont9PlantedApiKey",
    "cli-header": "Hdr9PlantedBearer",
    # docker inspect
    "inspect-arg": "Arg9PlantedApiKey", "inspect-env": "Ienv9PlantedPassword",
    # pod yaml
    "pod-flow-arg": "Flow9PlantedApiKey", "pod-flow-env": "Yflow9PlantedHfToken",
    "pod-block-env": "Yblock9PlantedPassword", "pod-url": "Redis9PlantedPass", "pod-block-arg": "Blk9PlantedApiKey",
    # a file name
    "file-name": "hf_FileNamePlantedToken0123456789ab",
}
P = PLANTED
SECRET_BUNDLE = {
    "node-a/vllm.log": INCIDENT + "".join(line + "\n" for line in [
        f"INFO 08-11 07:36:12 [utils.py:2] non-default args: {{'model': 'm', 'api_key': '{P['log-api-key']}'}}",
        f"INFO 08-11 07:36:12 [x.py:3] env HF_TOKEN={P['log-hf']} DB_PASSWORD={P['log-db']}",
        f"INFO 08-11 07:36:12 [x.py:4] pulling https://deploy:{P['log-url']}@registry.example.com/v2/ with "
        f"Authorization: Bearer {P['log-bearer']}",
        f"INFO 08-11 07:36:12 [x.py:5] aws key {P['aws-id']} AWS_SECRET_ACCESS_KEY={P['aws-secret']}",
        f"ERROR 08-11 07:36:13 [x.py:6] RuntimeError: upload failed for https://u:{P['log-url']}@s3.example.com/b",
    ]),
    "node-a/env.txt": "\n".join([
        "PATH=/usr/local/bin:/usr/bin", f"MY_SERVICE_SECRET={P['env-secret']}", f"DB_PASSWORD={P['env-password']}",
        f"WANDB_API_KEY={P['env-key']}", f'OPENAI_API_KEY="{P["env-quoted"]}"', f"GITHUB_TOKEN={P['env-token']}",
        f"AWS_ACCESS_KEY_ID={P['aws-id']}", f"AWS_SECRET_ACCESS_KEY={P['aws-secret']}", "NCCL_IB_HCA=mlx5_0", ""]),
    "node-a/launch-cmd.txt": "\n".join([
        f"$ vllm serve moonshotai/Kimi-K3 --tensor-parallel-size 8 --api-key {P['cli-api-key']} \\",
        f"    --hf-token {P['cli-hf-token']} \\",
        "    --api-key \\",
        f"    {P['cli-continued']}",
        f'$ curl -H "Authorization: Bearer {P["cli-header"]}" http://localhost:8000/v1/models', ""]),
    "node-a/docker-inspect.json": json.dumps([{
        "Id": "d41f7a09c2b8", "Path": "vllm",
        "Args": ["serve", "moonshotai/Kimi-K3", "--api-key", P["inspect-arg"]],
        "Config": {"Env": [f"HF_TOKEN={P['log-hf']}", f"DB_PASSWORD={P['inspect-env']}", "PATH=/usr/bin"]},
    }], indent=4) + "\n",
    "node-a/pod.yaml": "\n".join([
        "apiVersion: v1", "kind: Pod", "metadata:", "  name: kimi-k3-0", "spec:", "  containers:",
        "    - name: vllm", "      image: vllm/vllm-openai:v0.11.0",
        f'      args: ["moonshotai/Kimi-K3", "--api-key", "{P["pod-flow-arg"]}"]',
        "      command:", "        - vllm", "        - serve", "        - --api-key", f"        - {P['pod-block-arg']}",
        "      env:",
        f'        - {{name: HF_TOKEN, value: "{P["pod-flow-env"]}"}}',
        "        - name: DB_PASSWORD", f"          value: {P['pod-block-env']}",
        "        - name: REDIS_URL", f"          value: redis://:{P['pod-url']}@10.0.0.5:6379/0", ""]),
    f"node-a/HF_TOKEN={P['file-name']}.log": "INFO 08-11 07:36:14 [x.py:1] a file named after a token\n",
}


@pytest.fixture
def secret_bundle(tmp_path) -> Path:
    b = tmp_path / "bundle"
    for name, text in SECRET_BUNDLE.items():
        (b / name).parent.mkdir(parents=True, exist_ok=True)
        (b / name).write_text(text)
    return b


def test_planted_secrets_are_in_the_bundle_and_kept_with_no_redact(secret_bundle, tmp_path):
    out = tmp_path / "raw.jsonl"
    r = invoke("events", secret_bundle, "-o", out, "--no-redact")
    assert r.exit_code == 0, r.stderr
    raw = out.read_text() + invoke("analyze", secret_bundle, "--format", "json", "--no-redact").stdout
    assert [k for k, v in PLANTED.items() if v not in raw] == []


@pytest.mark.parametrize("kind", ["folder", "tar.gz"])
def test_secrets_are_redacted_in_every_output(secret_bundle, tmp_path, kind):
    bundle = secret_bundle
    if kind == "tar.gz":
        bundle = tmp_path / "bundle.tar.gz"
        bundle.write_bytes(tar_bytes({f"bundle/{k}": v for k, v in SECRET_BUNDLE.items()}, "gz"))
    o = check_bundle(tmp_path, bundle, oom_file="node-a/vllm.log", secrets=tuple(PLANTED.values()) + SECRETS,
                     commands=("json", "md", "events", "sniff"))
    assert "[redacted]" in o.outputs["events"]
    out = tmp_path / "out"
    for fmt in ("parquet", "csv"):
        r = invoke("events", bundle, "-o", out / f"events.{fmt}")
        assert r.exit_code == 0, r.stderr
        text = (pl.read_parquet(out / "events.parquet").write_ndjson() if fmt == "parquet"
                else (out / "events.csv").read_text())
        no_secret(text, r.stderr, secrets=tuple(PLANTED.values()))
    r = invoke("sniff", bundle)  # the table too
    no_secret(r.stdout, r.stderr, secrets=tuple(PLANTED.values()))


def test_a_secret_in_an_error_message_is_redacted(tmp_path):
    for missing in (tmp_path / f"HF_TOKEN={PLANTED['log-hf']}", tmp_path / f"key-{PLANTED['aws-id']}" / "bundle",
                    tmp_path / f"DB_PASSWORD={PLANTED['env-password']}.tar.gz"):
        r = invoke("analyze", missing)
        assert r.exit_code == 2
        line = one_error_line(r.stderr)
        assert "[redacted]" in line
        no_secret(line, r.stdout, secrets=tuple(PLANTED.values()))


# ======================================================================================================
# 5. errors
# ======================================================================================================
def test_a_missing_path_exits_2_with_one_line(tmp_path):
    for cmd in ("analyze", "sniff"):
        r = invoke(cmd, tmp_path / "no-such-bundle")
        assert r.exit_code == 2 and "no-such-bundle" in one_error_line(r.stderr)
    r = invoke("events", tmp_path / "no-such-bundle", "-o", tmp_path / "e.parquet")
    assert r.exit_code == 2 and "no-such-bundle" in one_error_line(r.stderr)
    assert not (tmp_path / "e.parquet").exists()


def test_an_empty_folder_exits_2_with_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    o = check_bundle(tmp_path, tmp_path / "empty", status=(2,), oom_file=None)
    assert "holds no files" in one_error_line(o.outputs["analyze json stderr"])


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n" + bytes(64) + os.urandom(4000), os.urandom(5000),
                                  b"\xff\xfe" + os.urandom(5000), b"\xfe\xff" + os.urandom(5000),
                                  b"\x7fELF\x02\x01\x01\x00" + bytes(4000)],
                         ids=["png", "random", "random-after-utf16-le-bom", "random-after-utf16-be-bom", "elf"])
def test_a_file_that_is_not_a_bundle_exits_2_with_one_line(tmp_path, data):
    p = tmp_path / "picture.png"
    p.write_bytes(data)
    o = check_bundle(tmp_path, p, status=(2,), oom_file=None)
    assert "binary" in one_error_line(o.outputs["analyze json stderr"])


def test_an_unknown_option_exits_2_without_a_traceback(tmp_path):
    (tmp_path / "vllm.log").write_bytes(INCIDENT_B)
    for cmd in ("analyze", "events", "sniff"):
        r = invoke(cmd, tmp_path / "vllm.log", "--no-such-option")
        assert r.exit_code == 2 and "No such option" in r.stderr
        no_traceback(r.stdout, r.stderr)


@pytest.mark.parametrize("flag", ["--max-total-bytes", "--max-member-bytes", "--max-members", "--max-depth",
                                  "--max-line-bytes", "--max-ratio"])
@pytest.mark.parametrize("value", ["0", "-3", str(1 << 64)])
def test_a_limit_of_zero_less_or_past_64_bits_is_a_usage_error(tmp_path, flag, value):
    (tmp_path / "vllm.log").write_bytes(INCIDENT_B)
    out = tmp_path / "events.jsonl"
    for args in (("analyze", tmp_path / "vllm.log"), ("events", tmp_path / "vllm.log", "-o", out)):
        r = invoke(*args, flag, value)
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        assert flag in one_error_line(r.stderr)
        no_traceback(r.stdout, r.stderr)
    assert not out.exists()


def test_debug_shows_the_traceback_of_an_error(tmp_path):
    r = CliRunner().invoke(cli, ["analyze", str(tmp_path / "missing"), "--debug"])
    from k3logs.errors import BundleError
    assert isinstance(r.exception, BundleError)  # raised (a traceback), not turned into one line


def test_the_installed_entry_point_gives_one_line_and_status_2(tmp_path):
    p = run_k3logs("analyze", tmp_path / "missing", timeout=60)
    assert p.status == 2 and p.stdout == ""
    assert "missing" in one_error_line(p.stderr)


def test_a_name_longer_than_1_kib_is_shortened_with_its_hash(tmp_path):
    long_a, long_b = "a" * 3000 + "-vllm.log", "a" * 3000 + "-other.log"
    bundle = tmp_path / "case.tar.gz"
    bundle.write_bytes(tar_bytes({f"case/node-a/{long_a}": INCIDENT, f"case/node-a/{long_b}": "hello\n"}, "gz"))
    o = check_bundle(tmp_path, bundle, oom_file="-vllm.log", commands=("json", "md", "sniff"))
    names = [row["file"] for row in json.loads(o.outputs["sniff"])]
    assert len(names) == 2 and len(set(names)) == 2 and all(len(n) <= 1024 for n in names), names
    shown = o.report["first_causal"]["file"]
    assert shown.startswith("node-a/aaaa") and shown.endswith("-vllm.log")
    assert bundle_names._digest(long_a) in shown      # the hash of the whole name: two long names stay two
    assert all(len(line) < 1200 for line in o.outputs["analyze md"].splitlines())
    # near miss: a name within the limit is shown whole
    assert bundle_names.printable("case/" + "b" * 900 + ".log") == "case/" + "b" * 900 + ".log"
