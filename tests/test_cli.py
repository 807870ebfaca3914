"""The command line, through click's CliRunner (catch_exceptions=False: a traceback is a failure): exit
statuses of the contract, one-line errors, -o, sniff's table, the event table in three formats,
signatures list/check, eval over the corpus, --version."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from conftest import TESTS_DIR, make_bundle, tar_bytes, text_of
from k3logs import __version__
from k3logs.catalogue.load import load_catalogue
from k3logs.cli import cli
from k3logs.report.export import CATEGORICAL
from k3logs.schema import EVENT_SCHEMA
from test_report import HEALTHY, INCIDENT, check_contract



def invoke(*args: str, **kw):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, **kw)


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("k3logs: error: "), lines[0]
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def incident(tmp_path_factory):
    return make_bundle(tmp_path_factory.mktemp("cli"), INCIDENT)


# ------------------------------------------------------------------------------------------
# analyze: exit statuses and output
# ------------------------------------------------------------------------------------------
def test_analyze_json_of_an_incident_exits_1_and_follows_the_contract(incident):
    r = invoke("analyze", incident, "--format", "json")
    assert r.exit_code == 1, r.stderr
    d = json.loads(r.stdout)
    check_contract(d)
    assert d["healthy"] is False and d["root_cause"]["category"] == "gpu.xid"


@pytest.mark.parametrize("compression", ["", "gz"])
def test_analyze_dash_reads_a_tar_stream_from_standard_input_like_its_folder(incident, compression):
    files = {f"bundle/{p.relative_to(incident)}": p.read_bytes() for p in sorted(incident.rglob("*")) if p.is_file()}
    r = invoke("analyze", "-", "--format", "json", input=tar_bytes(files, compression))
    want = json.loads(invoke("analyze", incident, "--format", "json").stdout)
    d = json.loads(r.stdout)
    assert r.exit_code == 1 and d["bundle"]["path"] == "stdin"
    assert (d["root_cause"], d["first_causal"], d["origin"]) == (want["root_cause"], want["first_causal"], want["origin"])


def test_analyze_dash_reads_one_log_from_standard_input_named_stdin(incident):
    log = next(p for p in sorted(incident.rglob("*")) if p.is_file() and "Xid" in p.read_text(errors="replace"))
    d = json.loads(invoke("analyze", "-", "--format", "json", input=log.read_bytes()).stdout)
    assert d["root_cause"]["category"] == "gpu.xid" and d["first_causal"]["file"] == "stdin"


def test_near_miss_analyze_dash_with_nothing_on_standard_input_is_one_error_line():
    r = invoke("analyze", "-", input=b"")
    assert r.exit_code == 2 and "stdin" in one_error_line(r)


def test_analyze_json_of_a_healthy_bundle_exits_0(tmp_path):
    r = invoke("analyze", make_bundle(tmp_path, HEALTHY), "--format", "json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    check_contract(d)
    assert d["healthy"] is True and d["first_causal"] is None


def test_analyze_a_missing_path_exits_2_with_one_line(tmp_path):
    r = invoke("analyze", tmp_path / "no-such-bundle")
    assert r.exit_code == 2
    assert "no-such-bundle" in one_error_line(r)
    assert r.stdout == ""


def test_analyze_a_dangling_link_exits_2(tmp_path):
    (tmp_path / "bundle.log").symlink_to(tmp_path / "gone.log")
    r = invoke("analyze", tmp_path / "bundle.log")
    assert r.exit_code == 2 and "dangling" in one_error_line(r)


def test_analyze_a_fifo_exits_2(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    r = invoke("analyze", tmp_path / "pipe")
    assert r.exit_code == 2 and "not a regular file" in one_error_line(r)


def test_analyze_an_unreadable_file_exits_2(tmp_path, monkeypatch):
    p = tmp_path / "vllm.log"
    p.write_text(HEALTHY["vllm.log"])
    real_access = os.access
    # the tests may run as root, who reads everything: make this one file unreadable
    monkeypatch.setattr(os, "access", lambda path, mode, *a, **k: False if Path(path) == p else real_access(path, mode))
    r = invoke("analyze", p)
    assert r.exit_code == 2
    assert "Traceback" not in r.stderr and re.search(r"not readable|permission denied", r.stderr)


@pytest.mark.parametrize("error", [MemoryError, RecursionError])
def test_running_out_of_memory_is_one_line_naming_only_options_that_exist(tmp_path, monkeypatch, error):
    p = tmp_path / "vllm.log"
    p.write_text(HEALTHY["vllm.log"])

    def exhausted(*a, **k):
        raise error()

    monkeypatch.setattr("k3logs.pipeline.analyze", exhausted)
    line = one_error_line(invoke("analyze", p))
    assert "ran out of" in line
    named = re.findall(r"--[a-z][a-z-]+", line)
    assert named and set(named) <= set(re.findall(r"--[a-z][a-z-]+", invoke("analyze", "--help").stdout)), line


def test_analyze_a_partly_unreadable_bundle_still_reports(tmp_path):
    archive = tmp_path / "bundle.tar.gz"
    good = tar_bytes(HEALTHY, "gz")
    archive.write_bytes(good[: len(good) - 40])   # the gzip stream is cut short
    r = invoke("analyze", archive, "--format", "json")
    assert r.exit_code in (0, 1), r.stderr
    assert json.loads(r.stdout)["bundle"]["skipped"]


@pytest.mark.parametrize("make", ["corrupt-archive", "empty-folder"])
def test_analyze_a_bundle_with_nothing_readable_exits_2(tmp_path, make):
    if make == "corrupt-archive":
        target = tmp_path / "bundle.tar.gz"
        target.write_bytes(b"\x1f\x8b\x08garbage, not a gzip stream at all")
    else:
        target = tmp_path / "empty"
        target.mkdir()
    r = invoke("analyze", target, "--format", "json")
    assert r.exit_code == 2
    one_error_line(r)


def test_analyze_bad_usage_exits_2(incident):
    r = invoke("analyze", incident, "--tz", "Mars/Olympus")
    assert r.exit_code == 2 and "time zone" in one_error_line(r)
    r = invoke("analyze", incident, "--format", "xml")
    assert r.exit_code == 2


def test_analyze_out_writes_the_report_and_nothing_to_stdout(incident, tmp_path):
    out = tmp_path / "report.md"
    r = invoke("analyze", incident, "-o", out)
    assert r.exit_code == 1 and r.stdout == ""
    md = out.read_text(encoding="utf-8")
    assert "**Verdict:" in md and "`node-b/kern.log:1`" in md
    jout = tmp_path / "report.json"
    assert invoke("analyze", incident, "--format", "json", "--out", jout).exit_code == 1
    assert json.loads(jout.read_text())["first_causal"]["file"] == "node-b/kern.log"


def test_analyze_stdout_is_byte_identical_across_runs(incident):
    a, b = invoke("analyze", incident, "--format", "json"), invoke("analyze", incident, "--format", "json")
    assert a.stdout_bytes == b.stdout_bytes
    a, b = invoke("analyze", incident), invoke("analyze", incident)
    assert a.stdout_bytes == b.stdout_bytes


def test_analyze_with_user_patterns(tmp_path):
    pats = tmp_path / "pats"
    pats.mkdir()
    (pats / "widget.toml").write_text('''\
[[signature]]
id = "widget-exploded"
category = "proc.segfault"
title = "Widget exploded"
role = "cause"
prefilter = ["widget exploded"]
regex = 'widget exploded at (?P<addr>0x[0-9a-f]+)'
explanation = "A made-up failure."
remediation = ["Replace the widget."]
[signature.samples]
match = ["widget exploded at 0x1f"]
no_match = ["widget is fine"]
''')
    bundle = make_bundle(tmp_path, {"app.log": text_of("ERROR 08-11 10:00:00 [w.py:1] widget exploded at 0xbeef")})
    r = invoke("analyze", bundle, "--format", "json", "--patterns", pats)
    assert r.exit_code == 1
    d = json.loads(r.stdout)
    assert (d["root_cause"]["signature"], d["root_cause"]["remediation"]) == ("widget-exploded", ["Replace the widget."])


# ------------------------------------------------------------------------------------------
# sniff
# ------------------------------------------------------------------------------------------
def test_sniff_table_has_a_row_and_a_reason_for_every_file(incident):
    r = invoke("sniff", incident)
    assert r.exit_code == 0, r.stderr
    header, *rows = r.stdout.splitlines()
    assert header.split() == ["file", "kind", "lines", "bytes", "reason"]
    assert len(rows) == len(INCIDENT)
    got = {}
    for row in rows:
        file, kind, nlines, nbytes, reason = row.split(None, 4)
        assert nlines.isdigit() and nbytes.isdigit() and reason.strip(), row
        got[file] = kind
    assert got == {"node-a/vllm.log": "vllm", "node-b/vllm.log": "vllm", "node-b/kern.log": "kernel",
                   "node-b/nvidia-smi.txt": "nvidia_smi", "node-b/core.bin": "binary"}


def test_sniff_json(incident):
    r = invoke("sniff", incident, "--format", "json")
    rows = json.loads(r.stdout)
    assert {x["file"] for x in rows} == set(INCIDENT)
    assert all(x["reason"] for x in rows)


# ------------------------------------------------------------------------------------------
# events
# ------------------------------------------------------------------------------------------
EVENTS_BUNDLE = {   # no multi-line events: one row per physical line
    "node-a/vllm.log": text_of(
        "(Worker_TP0 pid=101) INFO 08-11 10:00:00 [parallel_state.py:1] rank 0 in world size 2 is assigned as DP "
        "rank 0, PP rank 0, TP rank 0, EP rank 0",
        "plain words",
        "(Worker_TP0 pid=101) INFO 08-11 10:00:02 [x.py:1] hello"),
    "node-b/vllm.log": text_of(
        "(Worker_TP1 pid=202) INFO 08-11 10:00:00 [parallel_state.py:1] rank 1 in world size 2 is assigned as DP "
        "rank 0, PP rank 0, TP rank 1, EP rank 1",
        "(Worker_TP1 pid=202) ERROR 08-11 10:00:09 [core.py:708] RuntimeError: CUDA error: an illegal memory access "
        "was encountered"),
    "node-b/nccl.log": text_of("gpu-b:202:202 [1] NCCL INFO NCCL version 2.21.5+cuda12.4",
                               "gpu-b:202:202 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>"),
    "node-b/dmesg.txt": text_of("[ 1000.000000] Linux version 6.8.0"),
}
N_LINES = sum(v.count("\n") for v in EVENTS_BUNDLE.values())


@pytest.fixture(scope="module")
def events_bundle(tmp_path_factory):
    return make_bundle(tmp_path_factory.mktemp("events"), EVENTS_BUNDLE)


def read_events(path: Path, fmt: str) -> pl.DataFrame:
    return {"parquet": pl.read_parquet, "csv": pl.read_csv, "jsonl": pl.read_ndjson}[fmt](path)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_events_writes_every_line(events_bundle, tmp_path, fmt):
    out = tmp_path / f"x.{fmt}"
    r = invoke("events", events_bundle, "-o", out)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "" and f"wrote {N_LINES} events" in r.stderr
    df = read_events(out, fmt)
    assert df.height == N_LINES
    assert sorted(zip(df["file"], df["line"])) == sorted(
        (f, i) for f, v in EVENTS_BUNDLE.items() for i in range(1, v.count("\n") + 1))


def test_events_parquet_has_the_event_schema(events_bundle, tmp_path):
    out = tmp_path / "x.parquet"
    invoke("events", events_bundle, "-o", out)
    df = pl.read_parquet(out)
    # the columns of few values come back as categoricals, the rest as the event schema says
    assert dict(df.schema) == {k: pl.Categorical if k in CATEGORICAL else v for k, v in EVENT_SCHEMA.items()}
    # dictionary-encoded for any Arrow reader; free text written from string views is read back as plain strings
    import pyarrow as pa
    import pyarrow.parquet as pq
    arrow = pq.read_schema(out)
    assert arrow.field("node").type == pa.dictionary(pa.int32(), pa.string())
    assert arrow.field("message").type == pa.string() and arrow.field("exc_types").type.value_type == pa.string()
    assert arrow.field("ts").type == pa.timestamp("us", tz="UTC") and arrow.field("sub").type == pa.int8()
    group = pq.ParquetFile(out).metadata.row_group(0)
    columns = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
    assert columns["node"].has_dictionary_page and not columns["message"].has_dictionary_page
    row = df.filter((pl.col("file") == "node-b/vllm.log") & (pl.col("line") == 2)).row(0, named=True)
    # node-b's NCCL lines name its host: the folder stands for gpu-b
    assert (row["node"], row["rank"], row["pid"], row["level"], row["ts_quality"]) == ("gpu-b", 1, 202, "ERROR",
                                                                                       "inferred")


def test_events_parquet_stores_line_numbers_as_deltas_and_statistics_where_readers_filter(events_bundle, tmp_path):
    import pyarrow.parquet as pq
    out = tmp_path / "x.parquet"
    invoke("events", events_bundle, "-o", out)
    group = pq.ParquetFile(out).metadata.row_group(0)
    columns = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
    assert "DELTA_BINARY_PACKED" in columns["line"].encodings
    assert "DELTA_BINARY_PACKED" not in columns["message"].encodings
    assert columns["ts"].is_stats_set and not columns["message"].is_stats_set


def test_events_format_option_overrides_the_extension(events_bundle, tmp_path):
    out = tmp_path / "events.out"
    assert invoke("events", events_bundle, "-o", out, "--format", "jsonl").exit_code == 0
    assert pl.read_ndjson(out).height == N_LINES


def test_events_dash_writes_json_lines_to_standard_output_and_no_file(events_bundle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("events", events_bundle, "-o", "-")
    assert r.exit_code == 0 and "to standard output" in r.stderr and not (tmp_path / "-").exists()
    import io
    assert pl.read_ndjson(io.BytesIO(r.stdout_bytes)).height == N_LINES


def test_near_miss_a_dash_with_a_format_writes_that_format_to_standard_output(events_bundle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("events", events_bundle, "-o", "-", "--format", "csv")
    assert r.exit_code == 0 and r.stdout.startswith("file,line,") and r.stdout.count("\n") == N_LINES + 1


def test_events_needs_an_output(events_bundle):
    r = invoke("events", events_bundle)
    assert r.exit_code == 2 and "-o" in r.stderr


# ------------------------------------------------------------------------------------------
# signatures
# ------------------------------------------------------------------------------------------
def test_signatures_list_lists_every_id():
    r = invoke("signatures", "list")
    assert r.exit_code == 0
    ids = [ln.split()[0] for ln in r.stdout.splitlines()]
    assert ids == [s.id for s in load_catalogue().signatures]
    assert re.search(r"\d+ signatures, \d+ Xid codes", r.stderr)


@pytest.mark.slow  # replays every sample of every signature (about 10 s)
def test_patterns_check_passes_on_the_builtins_with_a_passing_junit_and_no_sarif_finding(tmp_path):
    """(The near miss of the JUnit/SARIF tests below: a clean catalogue. One run: a check takes 10 s.)"""
    r = invoke("patterns", "check", "--fail-on-issues", "--junit", tmp_path / "c.xml", "--sarif", tmp_path / "c.sarif")
    assert r.exit_code == 0, r.stdout
    assert r.stdout == ""
    assert re.search(r"\d+ signatures, 0 issue\(s\)", r.stderr)
    cases = _junit_cases(tmp_path / "c.xml")
    assert len(cases) > 5 and all(v is None for v in cases.values())
    assert _sarif_results(tmp_path / "c.sarif") == []


@pytest.mark.parametrize("command, case", [("patterns", "bad-regex"), ("patterns", "unknown-key"),
                                           ("patterns", "invalid-toml"), ("signatures", "bad-regex")])
def test_patterns_check_and_its_former_name_fail_on_a_broken_folder(command, case):
    r = invoke(command, "check", "--fail-on-issues", "--patterns", TESTS_DIR / "bad_patterns" / case)
    assert r.exit_code == 1
    assert r.stdout.strip() == (TESTS_DIR / "expected" / f"{case}.txt").read_text().strip().replace(
        "bad_patterns/", str(TESTS_DIR / "bad_patterns") + "/")


# ------------------------------------------------------------------------------------------
# eval, version, help
# ------------------------------------------------------------------------------------------
def _eval_case(root: Path, name: str, files: dict, truth: dict) -> None:
    make_bundle(root / name, files)
    (root / name / "truth.json").write_text(json.dumps(truth), encoding="utf-8")


def test_eval_tables_say_where_the_failures_are_per_field_category_and_transform(tmp_path):
    xid = {"root_cause": "gpu.xid", "first_causal": {"file": "node-b/kern.log", "line": 1},
           "origin": {"node": "gpu-b", "rank": 1}, "phase": "distributed_init"}
    _eval_case(tmp_path, "a-right", INCIDENT, xid | {"variant": {"case": "a", "transform": "wrap-cri", "seed": 1}})
    _eval_case(tmp_path, "b-rank", INCIDENT, xid | {"origin": {"node": "gpu-b", "rank": 5},
                                                    "variant": {"case": "b", "transform": "noise-kernel", "seed": 2}})
    _eval_case(tmp_path, "c-alarm", INCIDENT, {"root_cause": "none", "healthy": True, "first_causal": None})
    _eval_case(tmp_path, "d-gone", HEALTHY, {"root_cause": "none", "healthy": True, "first_causal": None,
                                             "missing_nodes": ["gpu-z"], "score_only": ["missing"],
                                             "variant": {"case": "d", "transform": "drop-node", "seed": 3}})
    r = invoke("eval", tmp_path, "--min-score", "0")
    assert r.exit_code == 0, r.stdout
    out = r.stdout
    assert re.search(r"^  rank +2/3 +right$", out, re.M)                  # per field (d-gone scores only 'missing')
    assert re.search(r"^  gpu\.xid +2 +1  rank 1$", out, re.M)             # per truth category
    assert re.search(r"^  none +2 +0  category 1, line 1, missing 1$", out, re.M)
    assert re.search(r"^  none +-> gpu\.xid +1$", out, re.M)               # confusion, wrong ones only
    assert re.search(r"^  c-alarm +got gpu\.xid at \('node-b/kern\.log', 1\)$", out, re.M)   # false alarm
    assert re.search(r"^  noise-kernel +1 +1  rank 1\n      b:2$", out, re.M)  # per transform, failing variants
    assert re.search(r"^  drop-node +1 +1  missing 1\n      d:3$", out, re.M)
    assert re.search(r"^  wrap-cri +1 +0  -$", out, re.M)
    assert out.splitlines()[-1].startswith("category=") and "false_alarms=1" in out.splitlines()[-1]
    assert invoke("eval", tmp_path, "--min-score", "0").stdout == out    # deterministic
    d = json.loads(invoke("eval", tmp_path, "--min-score", "0", "--format", "json").stdout)
    assert [t["transform"] for t in d["tables"]["per_transform"]] == ["drop-node", "noise-kernel", "wrap-cri"]
    assert d["tables"]["confusion"] == [{"truth": "none", "got": "gpu.xid", "cases": 1}]
    assert invoke("eval", tmp_path).exit_code == 1                       # below --min-score 1.0


def test_eval_of_a_folder_without_cases_is_bad_usage(tmp_path):
    r = invoke("eval", tmp_path / "nothing")
    assert r.exit_code == 2


def test_version():
    r = invoke("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"k3logs, version {__version__}"


def test_help_short_option():
    r = invoke("-h")
    assert r.exit_code == 0 and "analyze" in r.stdout and "Usage:" in r.stdout


def test_the_cli_sizes_polars_pool_before_polars_is_imported():
    # k3logs runs Settings.jobs threads of its own: polars' pool gets the cores they leave (at least one),
    # which only works if importing the CLI has not imported polars yet
    import subprocess
    from k3logs.settings import Settings
    code = ("import os, sys, k3logs.cli as c; assert 'polars' not in sys.modules; c._size_pools(); "
            "import polars, pyarrow; print(polars.thread_pool_size(), pyarrow.default_memory_pool().backend_name, "
            "os.environ['_RJEM_MALLOC_CONF'])")
    env = {k: v for k, v in os.environ.items() if k not in ("POLARS_MAX_THREADS", "_RJEM_MALLOC_CONF")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    threads, pool, malloc_conf = out.split()
    assert int(threads) == max(1, len(os.sched_getaffinity(0)) - Settings().jobs)
    assert malloc_conf.endswith(",narenas:1")  # (polars puts its own settings first, and the caller's after)
    import pyarrow as pa
    try:
        assert pool == pa.jemalloc_memory_pool().backend_name
    except NotImplementedError:  # (a pyarrow built without jemalloc keeps its default)
        assert pool == pa.default_memory_pool().backend_name
    mine = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**env, "POLARS_MAX_THREADS": "3", "_RJEM_MALLOC_CONF": "narenas:4"}).stdout
    assert mine.split()[0] == "3" and mine.split()[2].endswith(",narenas:4")  # the user's own settings are kept
    # `events` runs stages that each wait on polars' pool: it gets a thread per core
    pipelined = subprocess.run([sys.executable, "-c", code.replace("c._size_pools()", "c._size_pools('events')")],
                               capture_output=True, text=True, env=env, check=True).stdout
    assert int(pipelined.split()[0]) == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("args", [["signatures", "list"], ["signatures", "list", "--debug"]])
def test_a_closed_pipe_ends_the_command_quietly_with_sigpipes_status(args):
    import subprocess
    p = subprocess.Popen([sys.executable, "-m", "k3logs", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line (`| head -0`)
    err = p.stderr.read()
    assert p.wait() == 141 and err == b""


def test_near_miss_an_open_pipe_gets_every_line_and_status_0():
    import subprocess
    p = subprocess.run([sys.executable, "-m", "k3logs", "signatures", "list"], capture_output=True)
    assert p.returncode == 0 and p.stdout.count(b"\n") > 100 and b"error" not in p.stderr


@pytest.mark.parametrize("which", ["report", "diff"])
def test_schema_prints_a_valid_json_schema(which):
    import jsonschema
    r = invoke("schema", which)
    assert r.exit_code == 0
    jsonschema.Draft202012Validator.check_schema(json.loads(r.stdout))


def test_an_incidents_report_follows_the_printed_schema_and_a_broken_one_does_not(incident):
    import jsonschema
    v = jsonschema.Draft202012Validator(json.loads(invoke("schema").stdout))
    doc = json.loads(invoke("analyze", incident, "--format", "json").stdout)
    v.validate(doc)
    for broken in ({**doc, "phase": "warmup"}, {k: x for k, x in doc.items() if k != "outcome"},
                   {**doc, "origin": {**doc["origin"], "rank": -1}}):
        assert not v.is_valid(broken)


def test_analyze_until_before_the_cause_leaves_it_out_and_says_so(incident):
    full = json.loads(invoke("analyze", incident, "--format", "json").stdout)
    cause_at = full["first_causal"]["timestamp"]
    assert cause_at is not None
    before = (datetime.fromisoformat(cause_at.replace("Z", "+00:00")) - timedelta(seconds=1)).isoformat()
    d = json.loads(invoke("analyze", incident, "--format", "json", "--until", before).stdout)
    assert d["first_causal"] is None or d["first_causal"]["timestamp"] < cause_at
    assert any(m.startswith(f"every line outside --until {before}") for m in d["evidence_missing"])


def test_near_miss_a_window_around_the_cause_keeps_the_diagnosis(incident):
    full = json.loads(invoke("analyze", incident, "--format", "json").stdout)
    node = full["origin"]["node"]
    d = json.loads(invoke("analyze", incident, "--format", "json", "--node", node, "--since", "1d").stdout)
    assert (d["root_cause"]["category"], d["first_causal"]["line"]) == (full["root_cause"]["category"],
                                                                     full["first_causal"]["line"])


def test_events_window_keeps_only_its_rows(events_bundle, tmp_path):
    every = pl.read_ndjson(io.BytesIO(invoke("events", events_bundle, "-o", "-").stdout_bytes))
    ranks = sorted(every["rank"].drop_nulls().unique().to_list())
    got = pl.read_ndjson(io.BytesIO(invoke("events", events_bundle, "-o", "-", "--rank", ranks[0]).stdout_bytes))
    assert 0 < got.height < every.height and got["rank"].unique().to_list() == [ranks[0]]
    timed = every.filter(pl.col("ts").is_not_null()).sort("ts")
    since = timed["ts"][timed.height // 2]
    got = pl.read_ndjson(io.BytesIO(invoke("events", events_bundle, "-o", "-", "--since", since).stdout_bytes))
    assert got.height == every.filter(pl.col("ts") >= since).height and got["ts"].null_count() == 0


@pytest.mark.parametrize("flag, value", [("--since", "yesterday"), ("--until", "14:30 tomorrow")])
def test_near_miss_a_window_time_that_is_neither_a_time_nor_a_duration_is_one_error_line(incident, flag, value):
    r = invoke("analyze", incident, flag, value)
    assert r.exit_code == 2 and flag in one_error_line(r)


@pytest.mark.parametrize("args, says", [(["analyze", "--bogus", "x"], "No such option '--bogus'"),
                                        (["nosuch"], "No such command 'nosuch'"),
                                        (["events", "x"], "Missing option '-o'"),
                                        (["analyze", "x", "--format", "xml"], "'xml' is not one of")])
def test_clicks_own_usage_errors_are_one_line_in_k3logs_style(args, says):
    r = invoke(*args)
    line = one_error_line(r)
    assert r.exit_code == 2 and says in line and "--help`)" in line and "Usage:" not in r.output


# ------------------------------------------------------------------------------------------
# CI formats: JUnit XML and SARIF from eval and signatures check
# ------------------------------------------------------------------------------------------
def _junit_cases(path: Path) -> dict[str, object]:
    import xml.etree.ElementTree as ET
    return {tc.get("name"): tc.find("failure") for tc in ET.parse(path).getroot().iter("testcase")}


def _sarif_results(path: Path) -> list[dict]:
    doc = json.loads(path.read_text())
    assert doc["version"] == "2.1.0" and doc["runs"][0]["tool"]["driver"]["name"].startswith("k3logs")
    rules = {r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    results = doc["runs"][0]["results"]
    assert all(r["ruleId"] in rules and r["level"] in ("error", "warning", "note") for r in results)
    return results


def test_eval_writes_junit_and_sarif_with_a_failure_per_wrong_case(tmp_path):
    corpus = tmp_path / "corpus"
    for case in ("c203-shm-64m-docker-rtx6000ada", "c546-k3-gb300-2tray-manual-podman-run-no-prefix-caching"):
        shutil.copytree(TESTS_DIR.parent / "corpora" / case, corpus / case)
    r = invoke("eval", corpus, "--junit", tmp_path / "eval.xml", "--sarif", tmp_path / "eval.sarif")
    assert r.exit_code == 1   # c546 is a known failure: the score is below 1.0
    cases = _junit_cases(tmp_path / "eval.xml")
    assert cases["c203-shm-64m-docker-rtx6000ada"] is None
    assert "category: got" in cases["c546-k3-gb300-2tray-manual-podman-run-no-prefix-caching"].text
    results = _sarif_results(tmp_path / "eval.sarif")
    assert results and all(r["message"]["text"].startswith("c546") for r in results)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {
        str((corpus / "c546-k3-gb300-2tray-manual-podman-run-no-prefix-caching" / "truth.json"))}


def test_signatures_check_writes_junit_and_sarif_with_each_issue_on_its_line(tmp_path):
    bad = TESTS_DIR / "bad_patterns" / "bad-regex"
    r = invoke("signatures", "check", "--patterns", bad, "--junit", tmp_path / "c.xml", "--sarif", tmp_path / "c.sarif")
    assert r.exit_code == 1
    failing = {k: v for k, v in _junit_cases(tmp_path / "c.xml").items() if v is not None}
    assert len(failing) == 1 and next(iter(failing)).endswith(".toml") and "regex" in next(iter(failing.values())).text
    (result,) = _sarif_results(tmp_path / "c.sarif")
    assert result["level"] == "error" and result["locations"][0]["physicalLocation"]["region"]["startLine"] > 1


def test_analyze_several_bundles_of_one_incident_as_one(incident, tmp_path):
    whole = json.loads(invoke("analyze", incident, "--format", "json").stdout)
    for node in ("node-a", "node-b"):  # the same nodes as archives, one per node
        (tmp_path / f"{node}.tar.gz").write_bytes(tar_bytes(
            {p.name: p.read_bytes() for p in (incident / node).iterdir()}, "gz"))
    for parts in ([incident / "node-a", incident / "node-b"], [tmp_path / "node-a.tar.gz", tmp_path / "node-b.tar.gz"]):
        d = json.loads(invoke("analyze", *parts, "--format", "json").stdout)
        assert d["bundle"]["path"] == " + ".join(map(str, parts))
        assert (d["root_cause"]["category"], d["origin"]["rank"], d["first_causal"]["line"]) == (
            whole["root_cause"]["category"], whole["origin"]["rank"], whole["first_causal"]["line"])
        assert d["first_causal"]["file"].split("/", 1)[0] in ("node-b", "node-b.tar.gz")


@pytest.mark.parametrize("second", ["same-name", "-"])
def test_near_miss_bundles_whose_files_would_mix_or_stdin_with_another_are_one_error_line(incident, second):
    other = incident / "node-a" if second == "same-name" else "-"
    r = invoke("analyze", incident / "node-a", other)
    assert r.exit_code == 2 and one_error_line(r)


def test_shell_completion_script_is_printed_through_the_entry_point():
    import subprocess
    env = {**os.environ, "_K3LOGS_COMPLETE": "bash_source"}
    p = subprocess.run([sys.executable, "-c", "import sys; sys.argv[0] = 'k3logs'; from k3logs.cli import main; main()"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "_k3logs_completion()" in p.stdout


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_events_text_formats_write_times_one_way_rfc3339_in_utc(events_bundle, tmp_path, fmt):
    out = tmp_path / f"x.{fmt}"
    assert invoke("events", events_bundle, "-o", out).exit_code == 0
    raw = out.read_text()
    times = re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[^,\"]*", raw)
    assert times and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", t) for t in times)
    parquet = pl.read_parquet(invoke("events", events_bundle, "-o", tmp_path / "x.parquet") and tmp_path / "x.parquet")
    assert parquet["ts"].dtype == pl.Datetime("us", "UTC")   # (Parquet keeps the timestamp type)


@pytest.mark.parametrize("line_alt", [121, [121], [{"line": 121}]])
def test_a_truth_s_line_alt_may_be_one_line_or_a_list(line_alt):
    from k3logs.evaluate.score import truth_lines
    fc = {"file": "vllm.log", "line": 122, "line_alt": line_alt}
    assert truth_lines(fc) == [("vllm.log", 122), ("vllm.log", 121)]
