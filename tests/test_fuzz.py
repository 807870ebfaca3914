"""Property tests (hypothesis) over the readers and the parsers, on untrusted bytes (issue 5, class 7).

Whatever the bytes -- random, a member of a tar or of a zip, a valid .tar/.tar.gz/.tar.zst/.zip bundle with
bits flipped, bytes inserted or deleted, or cut short -- `k3logs.api.analyze` either returns a report or
raises a `k3logs.errors.K3LogsError` (the CLI turns it into one line and exit status 2); nothing else may
escape. Line numbers count b'\\n' only: an event's `line` is the number of newlines before it, plus one,
whatever surrounds it (NULs, '\\r', invalid UTF-8, over-long lines). A random member beside an intact log
never hides the incident in that log.

CI runs each property on 50 examples (a few seconds each). For a longer fuzzing session, locally:

    HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest -q tests/test_fuzz.py

("long": 5000 examples per property, no deadline, about an hour on 2 cores; add `-x` to stop at the first
failure). Hypothesis shrinks a failure to a small input, prints it, and keeps it in .hypothesis/: the next
run, CI's included, tries it first. Turn a found input into a regression test in test_hostile.py.
"""
from __future__ import annotations

import io
import json
import os
import re
import tempfile
from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from conftest import tar_bytes, zip_bytes
from k3logs.api import analyze, write_events
from k3logs.catalogue.load import load_catalogue
from k3logs.ingest.dumps import sniff_dump
from k3logs.errors import K3LogsError
from k3logs.facts.extract import facts_from_dump
from k3logs.catalogue.formats import builtin_formats
from k3logs.ingest.lines import iter_line_batches
from k3logs.ingest.parse import FileContext, parse_batch
from k3logs.schema import DUMP_KINDS, LOG_KINDS, WRAPPERS
from k3logs.settings import Settings
from k3logs.ingest.sniff import sniff

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("fuzz-ci", max_examples=15, deadline=None, suppress_health_check=_HEALTH)
settings.register_profile("long", max_examples=5000, deadline=None, suppress_health_check=_HEALTH)
FUZZ = settings.get_profile("long" if os.environ.get("HYPOTHESIS_PROFILE") == "long" else "fuzz-ci")

CAT = load_catalogue()
SETTINGS = Settings(jobs=1)
SMALL_LIMITS = Settings(jobs=1).with_limits(max_line_bytes=64, max_ratio=5, ratio_grace_bytes=4096,
                                            max_member_bytes=1 << 16)

OOM = ("(Worker_TP1 pid=301) ERROR 08-11 07:36:10 [multiproc_executor.py:597] torch.OutOfMemoryError: CUDA out of "
       "memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.02 GiB is free.")
VLLM_LOG = (
    "INFO 08-11 07:35:59 [api_server.py:1] vLLM API server version 0.11.0\n"
    "(Worker_TP1 pid=301) INFO 08-11 07:36:02 [parallel_state.py:1] rank 1 in world size 2 is assigned as DP rank 0, "
    "PP rank 0, TP rank 1, EP rank 1\n"
    "(Worker_TP1 pid=301) INFO 08-11 07:36:03 [gpu_model_runner.py:2] Starting to load model moonshotai/Kimi-K3...\n"
    "(Worker_TP1 pid=301) ERROR 08-11 07:36:10 [multiproc_executor.py:597] Traceback (most recent call last):\n"
    "(Worker_TP1 pid=301) ERROR 08-11 07:36:10 [multiproc_executor.py:597]   File \"/usr/lib/vllm/v1/worker/"
    "gpu_model_runner.py\", line 2100, in load_model\n" + OOM + "\n")
OOM_LINE = 6

# pieces of real lines, to make random text look like logs (and reach the parsers' deeper branches)
FRAGMENTS = [
    b"INFO 08-11 07:35:59 [core.py:1] ", b"ERROR 08-11 07:36:10 [core.py:708] ", b"(Worker_TP0 pid=101) ",
    b"(EngineCore_DP0 pid=7) ", b"gpu-a:101:202 [0] NCCL INFO ", b"NCCL WARN ", b"[rank0]:[E811 10:10:05.41 ",
    b"Traceback (most recent call last):", b'  File "x.py", line 1, in f', b"RuntimeError: ", b"torch.OutOfMemoryError",
    b"[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, ", b"2026-08-11T10:00:07+00:00 gpu-b kernel: ",
    b'{"log":"INFO 08-11 07:35:59 x\\n","stream":"stderr","time":"2026-08-11T07:35:59.1Z"}',
    b"2026-08-11T07:35:59.123456789Z stderr F ", b"\x1b[32m", b"\x1b[0m", b"\r", b"\n", b"\x00", b"\xff\xfe",
    b"\xef\xbb\xbf", b"HF_TOKEN=hf_", b"--api-key ", b"Authorization: Bearer ", b"$ nvidia-smi\n",
    b"| NVIDIA-SMI 570.86.15    Driver Version: 570.86.15    CUDA Version: 12.8 |\n",
]
CAUSE_WORDS = re.compile(rb"(?i)xid|err|memory|fail|nccl|fault|kill|abort|fatal|exception|cuda|oom|warn|timeout"
                         rb"|signal|assert|illegal|denied|refused|invalid")
# what cannot state a cause of its own (a random member beside the incident must not hide it)
NOISE = [f for f in FRAGMENTS if not any(c in f for c in (b"Error", b"Xid", b"WARN", b"E811", b"Traceback"))]
log_like = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=40)), max_size=60).map(b"".join)
any_bytes = st.one_of(st.binary(max_size=4096), log_like)


def analyze_or_refuse(path: Path, settings: Settings = SETTINGS):
    """The report, or None when the bundle was refused with a K3LogsError (the CLI's exit status 2)."""
    try:
        return analyze(path, settings, CAT)
    except K3LogsError:
        return None


def events_of(path: Path, settings: Settings = SETTINGS) -> pl.DataFrame | None:
    out = path.parent / "events.jsonl"
    try:
        write_events(path, out, "jsonl", settings, CAT)
    except K3LogsError:
        return None
    text = out.read_text()
    return pl.read_ndjson(io.StringIO(text)) if text.strip() else None


# ------------------------------------------------------------------------------------------------------
# readers: random bytes as a file, as a member of a tar and of a zip
# ------------------------------------------------------------------------------------------------------
@FUZZ
@given(data=any_bytes, name=st.sampled_from(["vllm.log", "bundle.tar.gz", "x.zip", "dmesg", "b.zst"]))
@example(data=b"\x1f\x8b\x08" + bytes(20), name="bundle.tar.gz")
@example(data=b"PK\x03\x04" + bytes(40), name="x.zip")
def test_random_bytes_as_a_plain_file(data, name):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(data)
        analyze_or_refuse(p)
        analyze_or_refuse(p, SMALL_LIMITS)


member_names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1,
                       max_size=80)


@FUZZ
@given(data=st.one_of(st.binary(max_size=4096), st.lists(st.sampled_from(NOISE), max_size=60).map(b"".join)),
       name=member_names, how=st.sampled_from(["tar", "tar.gz", "tar.zst", "zip"]))
@example(data=b"x", name="../../etc/passwd", how="tar")
@example(data=b"x", name="/abs/vllm.log", how="zip")
def test_a_random_member_never_hides_the_incident_beside_it(data, name, how):
    files = {"case/node-a/vllm.log": VLLM_LOG, f"case/{name}": data}
    assume(len(files) == 2 and not CAUSE_WORDS.search(data))  # the member must not state an earlier cause itself
    blob = zip_bytes(files) if how == "zip" else tar_bytes(files, how.partition(".")[2][:3])
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"case.{how}"
        p.write_bytes(blob)
        report = analyze(p, SETTINGS, CAT)  # the log is intact: this bundle must be analysed, not refused
        assert report.root_cause.category.startswith("oom."), report.root_cause
        assert report.first_causal.file.endswith("node-a/vllm.log") and report.first_causal.line == OOM_LINE


# ------------------------------------------------------------------------------------------------------
# readers: mutations of small valid bundles
# ------------------------------------------------------------------------------------------------------
BASE_FILES = {"case/node-a/vllm.log": VLLM_LOG,
              "case/node-a/nvidia-smi.txt": "| NVIDIA-SMI 570.86.15    Driver Version: 570.86.15    CUDA Version: 12.8 |\n",
              "case/env.txt": "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789\nNCCL_IB_HCA=mlx5_0\n",
              "case/inner.tar.gz": tar_bytes({"inner/nccl.log": "gpu-a:101:202 [0] NCCL INFO Bootstrap : Using eth0\n"},
                                             "gz")}
BASES = {"tar": tar_bytes(BASE_FILES), "tar.gz": tar_bytes(BASE_FILES, "gz"), "tar.zst": tar_bytes(BASE_FILES, "zst"),
         "zip": zip_bytes(BASE_FILES)}

mutation = st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]), st.floats(0, 1),
                     st.binary(min_size=1, max_size=16))


def mutate(blob: bytes, ops) -> bytes:
    b = bytearray(blob)
    for op, where, data in ops:
        if not b:
            break
        i = min(int(where * len(b)), len(b) - 1)
        if op == "flip":
            b[i] ^= data[0] or 1
        elif op == "set":
            b[i:i + len(data)] = data
        elif op == "insert":
            b[i:i] = data
        elif op == "delete":
            del b[i:i + len(data)]
        else:
            del b[i:]
    return bytes(b)


@FUZZ
@given(how=st.sampled_from(sorted(BASES)), ops=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_bundles_are_analysed_or_refused_never_crash(how, ops):
    blob = mutate(BASES[how], ops)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"case.{how}"
        p.write_bytes(blob)
        report = analyze_or_refuse(p)
        if report is not None:
            text = json.dumps(report.to_dict())
            assert "hf_abcdefghijklmnopqrstuvwxyz0123456789" not in text  # redacted, damaged or not
            assert report.bundle.files >= 0 and all(s.reason for s in report.bundle.skipped)


# ------------------------------------------------------------------------------------------------------
# line numbers: an event's line is the count of b'\n' before it, plus one
# ------------------------------------------------------------------------------------------------------
@FUZZ
@given(before=st.lists(any_bytes, max_size=6).map(b"\n".join), after=any_bytes,
       small=st.booleans())
@example(before=b"\x00" * 70_000, after=b"", small=False)       # a hole longer than the head sniff reads
@example(before=b"x" * 300 + b"\r" * 5, after=b"\n\n", small=True)  # over-long line, carriage returns
@example(before=b"", after=b"INFO 03-01 00:00:00 -.py:0]torch.OutOfMemoryError", small=False)  # an earlier OOM
def test_event_line_numbers_count_newlines(before, after, small):
    assume(not before.startswith((b"\xff\xfe", b"\xfe\xff")))  # a UTF-16 BOM makes the rest another encoding
    data = before + b"\n" + OOM.encode() + b"\n" + after
    expected = before.count(b"\n") + 2
    settings = SMALL_LIMITS.with_limits(max_line_bytes=1 << 20, max_member_bytes=1 << 20) if small else SETTINGS
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "vllm.log"
        p.write_bytes(data)
        report = analyze_or_refuse(p, settings)
        if report is None or report.sniffed[0].kind == "binary":  # too many NULs or control bytes: not text
            assert events_of(p, settings) is None
            return
        ev = events_of(p, settings)
        assert ev is not None
        assert ev["line"].min() >= 1 and ev["line"].max() <= data.count(b"\n") + 1
        hits = ev.filter(pl.col("message").str.contains("Tried to allocate 2.00 GiB", literal=True))
        assert expected in hits["line"].to_list(), (expected, hits.select("line", "message").rows())
        fc = report.first_causal
        assert fc is not None
        if "OutOfMemoryError" in fc.text:  # ours, or one in the random text: either way on the line grep -n gives
            assert b"OutOfMemoryError" in data.split(b"\n")[fc.line - 1], (fc, data)


@FUZZ
@given(data=any_bytes, batch=st.integers(1, 64), max_line=st.integers(1, 128))
def test_line_batches_number_every_newline(data, batch, max_line):
    parts = list(iter_line_batches(io.BytesIO(data), batch, max_line))
    lines = pl.concat(parts)["line"].to_list() if parts else []
    pieces = data.split(b"\n")
    assert lines == list(range(1, len(pieces) - (pieces[-1] == b"") + 1))


# ------------------------------------------------------------------------------------------------------
# parsers: any text through every sniff, wrapper chain, line format and dump parser
# ------------------------------------------------------------------------------------------------------
@FUZZ
@given(data=any_bytes, kind=st.sampled_from(LOG_KINDS),
       wrappers=st.lists(st.sampled_from([w for w in WRAPPERS if w != "none"]), max_size=2, unique=True))
def test_any_lines_parse_under_any_kind_and_wrapper_chain(data, kind, wrappers):
    formats = builtin_formats()
    sniff(data[:65536], len(data), formats)
    for batch in iter_line_batches(io.BytesIO(data), 1 << 12, 256):
        out = parse_batch(batch, FileContext("f.log", kind, tuple(wrappers)), formats)
        assert set(out["line"].to_list()) <= set(batch["line"].to_list())  # rows keep the line they came from


@FUZZ
@given(data=any_bytes, kind=st.sampled_from(DUMP_KINDS + ("text",)))
def test_any_text_through_every_dump_parser(data, kind):
    text = data.decode("utf-8", "replace")
    sniff_dump(text)
    for fact in facts_from_dump(kind, "d.txt", text, None):
        assert fact.line is None or 1 <= fact.line <= text.count("\n") + 1
