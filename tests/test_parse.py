"""parse.parse_batch: wrappers, partial records, ANSI, tqdm states, process/Ray/rank/MPI prefixes and the
line formats, peeled in order (log-formats.md 1.3), with the fields and times each layer carries."""
from __future__ import annotations

import io
import json
from datetime import datetime

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import parse_lines, parse_text, row, span
from k3logs.catalogue.formats import builtin_formats
from k3logs.ingest.lines import iter_line_batches
from k3logs.ingest.parse import FileContext, parse_batch


def dt(s: str) -> datetime:
    return datetime.fromisoformat(s)


# ------------------------------------------------------------------------------------------------------
# nesting
# ------------------------------------------------------------------------------------------------------
def test_cri_ray_vllm_prefix_and_logger_are_peeled_in_turn():
    df = parse_lines(["2026-08-11T07:36:02.250Z stdout F (RayWorkerWrapper pid=5120, ip=10.0.3.18) "
                      "(Worker_TP1 pid=5121) INFO 08-11 07:36:02 [gpu_model_runner.py:2581] Model loading took 15.2 GiB"],
                     wrappers=("cri",))
    r = row(df, 1)
    assert r["text"] == "Model loading took 15.2 GiB"
    assert (r["wrapper"], r["stream"], r["wt"], r["wt_kind"]) == ("cri", "stdout", dt("2026-08-11 07:36:02.250"), "utc")
    assert (r["proc"], r["pid"], r["ip"]) == ("Worker_TP1", 5121, "10.0.3.18")  # innermost process, Ray's ip
    assert (r["source"], r["level"], r["loc"]) == ("vllm", "INFO", "gpu_model_runner.py:2581")
    assert (r["lt"], r["lt_kind"]) == (dt("2000-08-11 07:36:02"), "yearless")


def test_cri_ray_prefix_and_nccl_line_are_peeled_in_turn():
    df = parse_lines(["2026-08-11T07:36:10.88Z stdout F (RayWorkerWrapper pid=5121, ip=10.0.3.18) "
                      "gpu-node-08:5121:5188 [1] NCCL INFO Bootstrap : Using eth0:10.0.3.18<0>"], wrappers=("cri",))
    r = row(df, 1)
    assert (r["source"], r["level"], r["text"]) == ("nccl", "INFO", "Bootstrap : Using eth0:10.0.3.18<0>")
    assert (r["proc"], r["pid"], r["tid"], r["ip"], r["host"], r["dev"]) == (
        "RayWorkerWrapper", 5121, 5188, "10.0.3.18", "gpu-node-08", 1)


def test_nested_ray_serve_prefixes_are_stripped_repeatedly():
    df = parse_lines(["(ServeReplica:app:LLMServer:m pid=41) (EngineCore pid=52) (RayWorkerProc pid=63) "
                      "(Worker pid=63) INFO 08-11 07:36:02 [gpu_worker.py:277] Available KV cache memory: 20.1 GiB"])
    r = row(df, 1)
    assert (r["proc"], r["pid"], r["source"]) == ("Worker", 63, "vllm")
    assert r["text"] == "Available KV cache memory: 20.1 GiB"


# ------------------------------------------------------------------------------------------------------
# container wrappers and partial records
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("echo, rows", [
    ("^C", [("^C", None), ("Shutting down FastAPI HTTP server.", "APIServer")]),
    ("^", [("^(APIServer pid=49102) INFO 01-22 14:21:05 [launcher.py:110] Shutting down FastAPI HTTP server.", None)]),
])   # near miss: a caret of the line's own
def test_a_terminals_echo_of_ctrl_c_is_a_row_of_its_own_before_the_line_it_made_the_server_print(echo, rows):
    """The echo is the operator's keystroke (a stop asked for); the line after it is the server's, its prefix read."""
    line = f"{echo}(APIServer pid=49102) INFO 01-22 14:21:05 [launcher.py:110] Shutting down FastAPI HTTP server."
    # (and under a wrapper: a terminal's capture that docker's json-file log holds)
    for df in (parse_lines([line]), parse_lines([docker(line + "\n")], wrappers=("docker_json",))):
        assert df.filter(pl.col("line") == 1).sort("sub").select("text", "proc").rows() == rows


def docker(log: str, stream: str = "stdout", time: str = "2026-08-11T07:35:59.5013324Z") -> str:
    return json.dumps({"log": log, "stream": stream, "time": time}, separators=(",", ":"))


def test_docker_json_escapes_are_undone():
    line = docker('ERROR 08-11 07:36:12 [core.py:708] bad <tag> & "quoted" C:\\dir\\file\n')
    assert "\\u003c" in line.replace("<", "\\u003c") and '\\"' in line and "\\\\" in line
    line = line.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    r = row(parse_lines([line], wrappers=("docker_json",)), 1)
    assert r["text"] == 'bad <tag> & "quoted" C:\\dir\\file'
    assert (r["stream"], r["wt"], r["wt_kind"], r["level"]) == ("stdout", dt("2026-08-11 07:35:59.501332"), "utc",
                                                                "ERROR")


def test_docker_json_partial_record_is_joined_with_the_next_of_its_stream():
    lines = [docker("ERROR 08-11 07:36:12 [core.py:708] first half, ", "stderr", "2026-08-11T07:36:12.1Z"),
             docker("INFO 08-11 07:36:12 [api.py:1] other stream\n", "stdout", "2026-08-11T07:36:12.2Z"),
             docker("second half\n", "stderr", "2026-08-11T07:36:12.3Z"),
             docker("INFO 08-11 07:36:13 [api.py:2] after\n", "stderr", "2026-08-11T07:36:13Z")]
    df = parse_lines(lines, wrappers=("docker_json",))
    assert df["line"].to_list() == [1, 2, 4]
    first = row(df, 1)
    assert first["text"] == "first half, second half"
    assert span(first) == (1, 3)
    assert (first["stream"], first["wt"], first["level"]) == ("stderr", dt("2026-08-11 07:36:12.1"), "ERROR")
    assert row(df, 2)["text"] == "other stream" and span(row(df, 2)) == (2, 2)


def test_docker_json_embedded_newline_stays_one_line_number():
    df = parse_lines([docker("a\\nb\n").replace("\\\\n", "\\n"), docker("next\n")], wrappers=("docker_json",))
    assert df["line"].to_list() == [1, 2]


def test_cri_partial_records_are_joined_up_to_the_full_one():
    lines = ["2026-08-11T07:36:12.5Z stderr P (EngineCore_DP0 pid=77) ERROR 08-11 07:36:12 [core.py:708] "
             "EngineCore failed to start. config={\"model\": \"",
             "2026-08-11T07:36:12.5Z stdout F INFO 08-11 07:36:12 [api.py:9] meanwhile on stdout",
             "2026-08-11T07:36:12.500013Z stderr P org/m-8b\", ",
             "2026-08-11T07:36:12.500014Z stderr F \"max_model_len\": 32768}",
             "2026-08-11T07:36:12.61Z stderr F (EngineCore_DP0 pid=77) Traceback (most recent call last):"]
    df = parse_lines(lines, wrappers=("cri",))
    assert df["line"].to_list() == [1, 2, 5]
    r = row(df, 1)
    assert r["text"] == 'EngineCore failed to start. config={"model": "org/m-8b", "max_model_len": 32768}'
    assert span(r) == (1, 4) and (r["pid"], r["level"], r["stream"]) == (77, "ERROR", "stderr")
    assert row(df, 2)["text"] == "meanwhile on stdout"


def test_cri_final_partial_without_full_record_is_kept():
    df = parse_lines(["2026-08-11T07:36:12.5Z stdout F INFO 08-11 07:36:12 [api.py:9] ok",
                      "2026-08-11T07:36:13.5Z stdout P exiting without a newline"], wrappers=("cri",))
    assert row(df, 2)["text"] == "exiting without a newline"


def test_cri_o_local_time_with_offset_is_converted_to_utc():
    r = row(parse_lines(["2020-01-26T03:17:29.346494690-04:00 stderr F hello"], kind="log", wrappers=("cri",)), 1)
    assert (r["wt"], r["wt_kind"], r["text"]) == (dt("2020-01-26 07:17:29.346494"), "utc", "hello")


def test_cri_empty_message_is_legal():
    r = row(parse_lines(["2026-08-11T07:35:59Z stdout F "], wrappers=("cri",)), 1)
    assert r["text"] == "" and r["stream"] == "stdout"


def test_kubectl_prefix_then_timestamps_chain():
    df = parse_lines(["[pod/vllm-decode-0/vllm] 2026-08-11T07:36:41.9Z (APIServer pid=1) INFO 08-11 07:36:41 "
                      "[launcher.py:44] Route: /v1/chat/completions",
                      "[pod/vllm-decode-0/vllm] 2026-08-11T07:36:42.000000001Z INFO:     Application startup complete."],
                     wrappers=("kubectl_prefix", "rfc3339"))
    a, b = row(df, 1), row(df, 2)
    assert (a["text"], a["proc"], a["wt"], a["wt_kind"]) == ("Route: /v1/chat/completions", "APIServer",
                                                             dt("2026-08-11 07:36:41.9"), "utc")
    assert (b["source"], b["level"], b["text"], b["wt"]) == ("uvicorn", "INFO", "Application startup complete.",
                                                             dt("2026-08-11 07:36:42"))


def test_compose_prefix_is_peeled():
    r = row(parse_lines(["vllm-1  | (APIServer pid=1) INFO 08-11 07:36:41 [launcher.py:44] Route: /v1/models"],
                        wrappers=("compose",)), 1)
    assert (r["wrapper"], r["proc"], r["text"]) == ("compose", "APIServer", "Route: /v1/models")


def test_journald_wrapper_keeps_host_ident_pid_and_yearless_time():
    r = row(parse_lines(["Aug  1 07:35:59 gpu-node-07 vllm[4410]: (APIServer pid=4410) INFO 08-01 07:35:59 "
                         "[api_server.py:1839] vLLM API server version 0.10.1"], wrappers=("journald",)), 1)
    assert (r["w_host"], r["ident"], r["pid"], r["proc"]) == ("gpu-node-07", "vllm", 4410, "APIServer")
    assert (r["wt"], r["wt_kind"]) == (dt("2000-08-01 07:35:59"), "yearless")
    assert r["text"] == "vLLM API server version 0.10.1"


@pytest.mark.parametrize("ident, source", [("kernel", "kernel"),
                                            ("kubelet", "plain")])   # near miss: another program's line
def test_a_search_hit_of_a_journal_line_is_its_programs_by_the_journals_identifier(ident, source):
    """filebeat's journald input keeps the journal's SYSLOG_IDENTIFIER as syslog.identifier: a kernel line the hit
    holds is the kernel's, however bare its text."""
    hit = ('{"_index":".ds-filebeat-8.16.1","_id":"Ga","_source":{"@timestamp":"2026-12-05T13:51:03.412Z",'
           '"message":"mlx5_core 0000:9a:00.0 mlx5_5: Port: 1 Link DOWN","host":{"name":"hx-b200-032"},'
           f'"syslog":{{"identifier":"{ident}","priority":4}}}}}}')
    r = row(parse_lines([hit], kind="plain", wrappers=("elastic_hit",)), 1)
    assert (r["source"], r["ident"], r["w_host"]) == (source, ident, "hx-b200-032")


def test_journald_kernel_lines_are_kernel_events():
    df = parse_lines(["Aug 11 07:35:59 gpu-node-07 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', "
                      "name=<unknown>, GPU has fallen off the bus.",
                      "Aug 11 07:36:00 gpu-node-07 kernel: [ 2207.551903] NVRM: GPU 0000:18:00.0: fallen off the bus."],
                     kind="kernel", wrappers=("journald",))
    a, b = row(df, 1), row(df, 2)
    assert (a["source"], a["ident"], a["w_host"]) == ("kernel", "kernel", "gpu-node-07")
    assert a["text"].startswith("NVRM: Xid (PCI:0000:18:00): 79")
    assert (b["source"], b["uptime"], b["lt_kind"], b["wt_kind"]) == ("kernel", 2207.551903, "boot", "yearless")


def test_a_kibana_export_row_takes_its_date_in_the_browsers_zone_and_its_message_unquoted():
    df = parse_lines(['"Aug 4, 2026 @ 13:19:40.018","aks-gpu-vmss000004","genai","ValueError: ""max_tokens"" is 0"'],
                     wrappers=("kibana_csv",))
    r = row(df, 1)
    assert (r["w_host"], r["text"], r["wt"], r["wt_kind"]) == (
        "aks-gpu-vmss000004", 'ValueError: "max_tokens" is 0', dt("2026-08-04 13:19:40.018"), "local")


@pytest.mark.parametrize("stamp, want", [("2026-10-08 16:21:01 CEST", dt("2026-10-08 14:21:01")),
                                         ("2026-01-12 09:00:00 JST", dt("2026-01-12 00:00:00")),
                                         ("2026-10-08 16:21:01 CST", None)])   # near miss: CST names several zones
def test_a_scripts_stamp_with_its_zones_abbreviation_is_read_through_the_zones_offset(stamp, want):
    r = row(parse_lines([f"[{stamp}] starting ray worker on gpu-h200-b14"], kind="log"), 1)
    assert r["text"] == "starting ray worker on gpu-h200-b14" and r["lt"] == want
    assert r["lt_kind"] == ("utc" if want else None)


def test_a_cloudwatch_insights_export_row_is_its_message_unquoted_on_the_host_its_log_stream_names():
    df = parse_lines(['"2026-09-15 03:27:35.271","ip-10-3-41-17/kimi-k3","(APIServer pid=1) INFO:     10.3.12.41:4137 '
                      '- ""POST /v1/chat/completions HTTP/1.1"" 500 Internal Server Error"',
                      "2026-03-04 14:22:08,762\tWARNING resource_demand_scheduler.py:782 -- no node type, a, b"],
                     kind="log", wrappers=("cloudwatch_insights_csv",))
    r = row(df, 1)
    assert (r["w_host"], r["wt"], r["wt_kind"]) == ("ip-10-3-41-17", dt("2026-09-15 03:27:35.271"), "local")
    assert r["text"].endswith('"POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error')
    assert row(df, 2)["w_host"] is None   # near miss: Python logging's ',762' is no CSV row


@pytest.mark.parametrize("time_key, when, kind", [("time", "2026-06-18T09:13:12.131+02:00", "utc"),
                                                  ("asctime", "2026-06-18 09:13:12,131", "local")])
def test_a_json_loggers_record_is_its_message_then_its_exceptions_lines(time_key, when, kind):
    """python-json-logger: keys as the logging config names them; the traceback it caught follows the message."""
    rec = {"levelname": "ERROR", "name": "vllm.v1.executor.multiproc_executor", "pid": 213, "host": "l40s-inf-03",
           time_key: when, "message": "WorkerProc hit an exception.",
           "exc_info": 'Traceback (most recent call last):\n  File "x.py", line 9, in f\nRuntimeError: no C compiler'}
    df = parse_lines([json.dumps(rec), json.dumps({"name": "other", "message": "no level: another program's"})],
                     wrappers=("json_logger",))
    rows = df.filter(pl.col("line") == 1).sort("sub")
    assert rows["text"].to_list() == ["WorkerProc hit an exception.", "Traceback (most recent call last):",
                                      '  File "x.py", line 9, in f', "RuntimeError: no C compiler"]
    first = row(df, 1)
    assert (first["w_host"], first["pid"], first["wt"], first["wt_kind"]) == (
        "l40s-inf-03", 213, dt("2026-06-18 07:13:12.131" if kind == "utc" else "2026-06-18 09:13:12.131"), kind)
    assert row(df, 2)["w_host"] is None   # (near miss: a JSON object with no level is none of a logger's records)


def test_journald_iso_kernel_line_has_an_exact_time():
    r = row(parse_lines(["2026-08-11T07:35:59+0200 gpu-node-07 kernel: mlx5_core 0000:9a:00.0 mlx5_3: Port: 1 Link DOWN"],
                        kind="kernel", wrappers=("journald_iso",)), 1)
    assert (r["wt"], r["wt_kind"], r["source"]) == (dt("2026-08-11 05:35:59"), "utc", "kernel")


# ------------------------------------------------------------------------------------------------------
# ANSI, prefixes
# ------------------------------------------------------------------------------------------------------
def test_ansi_colour_around_prefixes_is_stripped():
    df = parse_lines(["\x1b[1;36m(EngineCore_DP0 pid=77)\x1b[0;0m INFO 08-11 07:36:02 [core.py:61] colour",
                      "\x1b[36m(RayWorkerVllm pid=88)\x1b[0m [E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught",
                      "\x1b[0;36m(Worker_TP0 pid=90)\x1b[0;0m \x1b[32mINFO\x1b[0m \x1b[90m08-11 07:36:03 "
                      "[gpu_worker.py:1]\x1b[0m coloured level"])
    assert [(r["proc"], r["pid"], r["source"], r["text"]) for r in df.iter_rows(named=True)] == [
        ("EngineCore_DP0", 77, "vllm", "colour"),
        ("RayWorkerVllm", 88, "torch", "[Rank 3] Watchdog caught"),
        ("Worker_TP0", 90, "vllm", "coloured level")]


COLOURED = [
    "\x1b[1;36m(EngineCore_DP0 pid=77)\x1b[0;0m INFO 08-11 07:36:02 [core.py:61] colour around the head",
    "(\x1b[36mWorker_TP1\x1b[0m pid=91) INFO 08-11 07:36:02 [core.py:61] colour inside the head",
    "\x1b[36m(APIServer pid=1)\x1b[0m \x1b[33m[rank0]:\x1b[0m INFO 08-11 07:36:02 [core.py:61] nested heads",
    "\x1b[K(APIServer pid=1) INFO 08-11 07:36:02 [core.py:61] a code that is not a colour",
    "\x1b[36m(RayWorkerWrapper pid=5, ip=10.0.0.1)\x1b[0m INFO 08-11 07:36:02 [w.py:1] \x1b[31mred\x1b[0m words",
    "\x1b[36m(APIServer pid=1)\x1b[0m Loading: 50%|\x1b[32m#####\x1b[0m     | 5/10 [00:01<00:01, 4.2it/s]INFO 08-11 "
    "07:36:02 [core.py:61] glued after a bar",
    "\x1b[36m(APIServer pid=1)\x1b[0m 10%|#  | 1/10 [00:01<00:09]\r\x1b[36m(APIServer pid=1)\x1b[0m 20%|## | 2/10",
]


@pytest.mark.parametrize("line", COLOURED)
def test_colour_codes_anywhere_parse_like_the_line_without_them(line):
    import re
    from polars.testing import assert_frame_equal
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line)
    assert_frame_equal(parse_lines([line]), parse_lines([plain]))


def test_rank_prefix_on_traceback_lines():
    df = parse_lines(["[rank3]: Traceback (most recent call last):",
                      '[rank3]:   File "/srv/app/serve.py", line 41, in <module>',
                      "[rank3]: torch.distributed.DistBackendError: NCCL error in: x"])
    assert df["rank"].to_list() == [3, 3, 3]
    assert df["text"].to_list()[0] == "Traceback (most recent call last):"
    assert df["text"].to_list()[1] == '  File "/srv/app/serve.py", line 41, in <module>'


def test_rank_prefix_glued_to_a_c10_line():
    r = row(parse_lines(["[rank3]:[E811 07:52:03.412207911 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
                         "collective operation timeout"]), 1)
    assert (r["rank"], r["source"], r["level"], r["loc"]) == (3, "torch", "ERROR", "ProcessGroupNCCL.cpp:616")
    assert (r["lt"], r["lt_kind"]) == (dt("2000-08-11 07:52:03.412207"), "yearless")


def test_open_mpi_tag_gives_rank_and_stream():
    df = parse_lines(["[1,3]<stdout>:gpu-node-07:4121:4121 [3] NCCL INFO Bootstrap : Using eth0:10.0.3.17<0>",
                      "Mon Aug 11 07:52:03 2026[1,0]<stderr>:gpu-node-07:4118:4118 [0] NCCL INFO cudaDriverVersion 12080"],
                     kind="nccl")
    a, b = row(df, 1), row(df, 2)
    assert (a["rank"], a["stream"], a["source"], a["pid"], a["dev"]) == (3, "stdout", "nccl", 4121, 3)
    assert (b["rank"], b["stream"], b["text"]) == (0, "stderr", "cudaDriverVersion 12080")


def test_prefix_only_line_is_an_empty_message_of_that_process():
    r = row(parse_lines(["(Worker_TP0 pid=101) "]), 1)
    assert (r["text"], r["proc"], r["pid"]) == ("", "Worker_TP0", 101)


def test_ray_special_names_and_task_prefix():
    df = parse_lines(["(raylet, ip=10.0.3.18) A worker died or was killed while executing a task.",
                      "(pid=2296, ip=10.0.3.22) INFO 10-03 13:40:21 [__init__.py:241] Automatically detected platform cuda."])
    a, b = row(df, 1), row(df, 2)
    assert (a["proc"], a["ip"], a["text"]) == ("raylet", "10.0.3.18", "A worker died or was killed while executing a task.")
    assert (b["pid"], b["ip"], b["source"]) == (2296, "10.0.3.22", "vllm")


# heads and what follows them: with and without colour, the space, the colon; a head repeated without its
# space; rows with no head
HEADS = ["\x1b[1;36m(APIServer pid=1)\x1b[0;0m ", "(APIServer pid=1) ", "(APIServer pid=1)", "(EngineCore pid=7) ",
         "[rank3]: ", "[rank3]:", "[rank3] ", ""]
TAILS = ["INFO 08-11 07:36:02 [api_server.py:1] x", " INFO:     1.2.3.4:5 - \"GET / HTTP/1.1\" 200 OK", ":y",
         "\x1b[0;0m z", "(Nested pid=2) w", ""]


@settings(max_examples=60, deadline=None)
@given(common=st.sampled_from(HEADS), rows=st.lists(st.tuples(st.sampled_from(HEADS), st.sampled_from(TAILS)),
                                                      max_size=40), copies=st.integers(0, 300))
def test_heads_most_rows_share_are_read_as_the_regex_reads_them(common, rows, copies):
    # the heads of the first rows are compared as text on every row, not read by the regex: whatever
    # follows a row's head, and whatever heads the other rows have, each row gets the head the regex gives
    from k3logs.ingest.prefixes import _simple_heads
    from k3logs.ingest.prefixes import INGEST
    text = pl.Series("text", [common + "INFO 08-11 07:36:02 [a.py:1] m"] * copies + [h + t for h, t in rows], pl.String)
    assert _simple_heads(text).to_list() == text.str.extract(INGEST["simple_head"].pattern, 1).to_list()


def test_a_batch_one_process_wrote_reads_as_it_does_among_other_processes():
    # every row with the same head is read once, as literals; the same rows among rows of another process
    # are read through the table of heads: the same fields either way
    lines = ["\x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO:     10.0.6.52:60872 - \"POST /v1/completions HTTP/1.1\" 200 OK",
             "\x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO 08-11 07:36:02 [api_server.py:1] Started server process",
             "\x1b[1;36m(APIServer pid=1)\x1b[0;0m (Nested pid=9) WARNING 08-11 07:36:03 [x.py:2] inner"] * 50
    alone = parse_lines(lines)
    mixed = parse_lines(lines + ["(EngineCore pid=7) INFO 08-11 07:36:04 [core.py:1] other"]).head(len(lines))
    from polars.testing import assert_frame_equal
    assert_frame_equal(alone, mixed)
    assert alone["proc"].unique().sort().to_list() == ["APIServer", "Nested"] and alone["pid"].min() == 1


# ------------------------------------------------------------------------------------------------------
# tqdm carriage-return states
# ------------------------------------------------------------------------------------------------------
BAR = "Capturing CUDA graphs (decode, FULL): {p:3d}%|#####     | {n}/67 [00:14<00:01,  4.31it/s]"


def test_bar_states_collapse_to_the_last_and_keep_the_prefix_written_first():
    raw = "(Worker_TP0_EP0 pid=101) \r" + "\r".join(BAR.format(p=p, n=n) for p, n in ((10, 7), (50, 33), (100, 67)))
    r = row(parse_text(raw + "\n"), 1)
    assert r["text"] == BAR.format(p=100, n=67)
    assert (r["proc"], r["pid"], r["cr_end"]) == ("Worker_TP0_EP0", 101, False)


def test_prefixed_line_glued_after_an_unfinished_bar_is_its_own_row():
    raw = ("(Worker_TP0_EP0 pid=101) \r" + BAR.format(p=50, n=33) + "\r" + BAR.format(p=91, n=61)
           + "(Worker_TP2_EP2 pid=103) INFO 08-11 07:36:58 [custom_all_reduce.py:203] Registering 9302 cuda graph addresses\n"
           + "INFO 08-11 07:36:59 [gpu_worker.py:1] next line\n")
    df = parse_text(raw)
    assert df.select("line", "sub").rows() == [(1, 0), (1, 1), (2, 0)]
    bar, glued = row(df, 1, 0), row(df, 1, 1)
    assert bar["text"] == BAR.format(p=91, n=61) and (bar["proc"], bar["pid"]) == ("Worker_TP0_EP0", 101)
    assert (glued["proc"], glued["pid"], glued["source"], glued["level"]) == ("Worker_TP2_EP2", 103, "vllm", "INFO")
    assert glued["text"] == "Registering 9302 cuda graph addresses"
    assert (glued["lt"], glued["loc"]) == (dt("2000-08-11 07:36:58"), "custom_all_reduce.py:203")


def test_faulthandler_glued_after_a_bar_is_its_own_row_without_the_bar_writers_pid():
    raw = ("(Worker_TP1 pid=102) \r" + BAR.format(p=100, n=67) + "Fatal Python error: Segmentation fault\n"
           "\nThread 0x00007f2a1bfff640 (most recent call first):\n")
    df = parse_text(raw)
    bar, fatal = row(df, 1, 0), row(df, 1, 1)
    assert bar["pid"] == 102
    assert fatal["text"] == "Fatal Python error: Segmentation fault"
    assert fatal["pid"] is None and fatal["proc"] is None


def test_vllm_record_continued_with_carriage_return_is_flagged():
    df = parse_text("(EngineCore_DP0 pid=77) ERROR 08-11 07:36:12 [core.py:708] first\r\n"
                    "(EngineCore_DP0 pid=77) ERROR 08-11 07:36:12 [core.py:708] second\n")
    assert df["cr_end"].to_list() == [True, False]
    assert df["text"].to_list() == ["first", "second"]


# ------------------------------------------------------------------------------------------------------
# line formats
# ------------------------------------------------------------------------------------------------------
def test_vllm_logger_with_and_without_brackets():
    df = parse_lines(["INFO 08-11 07:35:59 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: x",
                      "INFO 08-11 07:35:59 [__init__.py:244] Automatically detected platform cuda."])
    assert df["loc"].to_list() == ["llm_engine.py:237", "__init__.py:244"]
    assert df["text"].to_list() == ["Initializing an LLM engine (v0.6.3) with config: x",
                                    "Automatically detected platform cuda."]


def test_vllm_warn_level_is_normalised_to_warning():
    r = row(parse_lines(["WARN 08-11 07:36:02 interface.py:275] Using 'pin_memory=False' as WSL is detected."]), 1)
    assert (r["level"], r["source"]) == ("WARNING", "vllm")


def test_vllm_debug_line_with_a_relative_path():
    r = row(parse_lines(["DEBUG 08-11 07:36:03 [model_executor/.../quantization/utils/fp8_utils.py:51] x"]), 1)
    assert (r["level"], r["loc"], r["text"]) == ("DEBUG", "model_executor/.../quantization/utils/fp8_utils.py:51", "x")


def test_nccl_info_and_warn_with_and_without_timestamp():
    df = parse_lines(["gpu-node-07:4121:4121 [0] NCCL INFO Bootstrap : Using eth0:10.0.3.17<0>",
                      "",
                      "gpu-node-08:3310:3391 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion with status=12",
                      "[2026-08-11 07:52:03] gpu-node-08:3310:3391 [5] misc/socket.cc:484 NCCL WARN socketStartConnect: "
                      "Connect to 10.0.3.17<41275> failed : Software caused connection abort",
                      "[2026-08-11 07:52:03.412207] gpu-node-07:4121:4187 [0] NCCL INFO Connected all rings",
                      "gpu-node-08:3310:3391 [5] transport/net_ib.cc:1696 (ncclIbTest) NCCL WARN NET/IB : 2.30 form"],
                     kind="nccl")
    info, warn, warn_ts, info_ts, warn_fn = (row(df, i) for i in (1, 3, 4, 5, 6))
    assert (info["level"], info["host"], info["pid"], info["tid"], info["dev"], info["lt"]) == (
        "INFO", "gpu-node-07", 4121, 4121, 0, None)
    assert (warn["level"], warn["loc"], warn["dev"]) == ("WARNING", "transport/net_ib.cc:1696", 5)
    assert warn["text"] == "NET/IB : Got completion with status=12"
    assert (warn_ts["lt"], warn_ts["lt_kind"], warn_ts["loc"]) == (dt("2026-08-11 07:52:03"), "local", "misc/socket.cc:484")
    assert (info_ts["lt"], info_ts["lt_kind"]) == (dt("2026-08-11 07:52:03.412207"), "local")
    assert (warn_fn["loc"], warn_fn["text"]) == ("transport/net_ib.cc:1696", "NET/IB : 2.30 form")
    assert row(df, 2)["source"] == "nccl"  # the blank line before a WARN is still the NCCL file's


def test_nccl_trace_call_and_version_lines():
    df = parse_lines(["gpu-node-07:4121:4187 [0] 1234.567 ncclProxyProgress:123 NCCL TRACE progress",
                      "gpu-node-07:4121:4187 NCCL CALL ncclAllReduce(0x7f3a,0x7f3a,1048576,7,0,0x55d0)",
                      "NCCL version 2.21.5+cuda12.4"], kind="nccl")
    trace, call, version = row(df, 1), row(df, 2), row(df, 3)
    assert (trace["level"], trace["text"], trace["dev"]) == ("DEBUG", "progress", 0)
    assert (call["source"], call["level"], call["pid"], call["dev"]) == ("nccl", "DEBUG", 4121, None)
    assert call["text"] == "ncclAllReduce(0x7f3a,0x7f3a,1048576,7,0,0x55d0)"
    assert (version["source"], version["text"]) == ("nccl", "NCCL version 2.21.5+cuda12.4")


def test_torch_c10_dates_with_three_and_four_digits():
    df = parse_lines(["[E626 07:52:03.412207911 ProcessGroupNCCL.cpp:616] [Rank 3] three digits",
                      "[W1207 08:10:44.051220331 ProcessGroupNCCL.cpp:1496] four digits",
                      "[E ProcessGroupNCCL.cpp:475] [Rank 3] torch 2.1 form"], kind="torch")
    assert df["lt"].to_list() == [dt("2000-06-26 07:52:03.412207"), dt("2000-12-07 08:10:44.051220"), None]
    assert df["level"].to_list() == ["ERROR", "WARNING", "ERROR"]
    assert df["lt_kind"].to_list() == ["yearless", "yearless", None]


def test_torch_python_glog_line_with_pid():
    r = row(parse_lines(["E0811 07:52:04.512000 4321 torch/distributed/elastic/multiprocessing/api.py:874] failed "
                         "(exitcode: -6) local_rank: 3 (pid: 4325) of binary: /opt/venv/bin/python3"], kind="torch"), 1)
    assert (r["source"], r["level"], r["pid"], r["lt"]) == ("torch", "ERROR", 4321, dt("2000-08-11 07:52:04.512"))
    assert r["loc"] == "torch/distributed/elastic/multiprocessing/api.py:874"


def test_kernel_dmesg_forms_and_their_times():
    df = parse_lines(["[ 2207.551903] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.",
                      "<3>[ 2208.000001] raw priority",
                      "[Mon Aug  4 07:35:59 2026] mlx5_core 0000:9a:00.0 mlx5_3: Port: 1 Link DOWN",
                      "2026-08-11T07:35:59,412207+02:00 NVRM: GPU at PCI:0000:18:00: GPU-5f2b8e1c",
                      "kern  :err   : [ 2209.000001] NVRM: decoded"], kind="kernel")
    assert df["source"].unique().to_list() == ["kernel"]
    assert df["lt_kind"].to_list() == ["boot", "boot", "local", "utc", "boot"]
    assert df["uptime"].to_list() == [2207.551903, 2208.000001, None, None, 2209.000001]
    assert row(df, 3)["lt"] == dt("2026-08-04 07:35:59")
    assert row(df, 4)["lt"] == dt("2026-08-11 05:35:59.412207")
    assert row(df, 5)["level"] == "ERROR"
    assert df["text"].to_list()[0] == "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."


def test_ray_uvicorn_and_python_logging_lines():
    df = parse_lines(["2026-08-11 07:35:41,418\tINFO worker.py:1841 -- Connecting to existing Ray cluster",
                      "[2026-08-11 07:35:41,418 E 5121 5180] core_worker.cc:215: Failed to register worker",
                      "(APIServer pid=1) INFO:     10.0.9.41:53422 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
                      "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)",
                      "(EngineCore_DP0 pid=77) 2026-03-08 16:44:29,692 - INFO - autotuner.py:262 - flashinfer.jit: x"],
                     kind="log")
    assert df["source"].to_list() == ["ray", "ray", "uvicorn", "python", "python"]
    assert df["lt_kind"].to_list() == ["local", "local", None, None, "local"]
    assert row(df, 2)["pid"] == 5121 and row(df, 3)["pid"] == 1 and row(df, 5)["pid"] == 77
    assert row(df, 5)["lt"] == dt("2026-03-08 16:44:29.692")


def test_date_output_ending_a_line_is_its_time_only_after_at_or_started_and_in_utc():
    df = parse_lines(["Job 48213 started on cn-gpu-031 at Wed Apr  8 09:14:02 UTC 2026",
                      "collection finished at Thu Nov 26 23:59:59 GMT 2026",
                      "Job 48214 started on cn-gpu-031 at Wed Apr  8 09:14:02 CST 2026",
                      "NVRM version: NVIDIA UNIX Open Kernel Module  580.95.05  Release Build  (dvs-builder@U22)  "
                      "Thu Sep 11 19:40:27 UTC 2025",
                      "Linux h1 6.8.0-60-generic #63-Ubuntu SMP Tue Apr 15 19:04:15 UTC 2025 x86_64 GNU/Linux",
                      "INFO 04-08 09:14:11 [core.py:1] started at Wed Apr  8 09:14:02 UTC 2026"], kind="log")
    assert df["lt"].to_list()[:2] == [dt("2026-04-08 09:14:02"), dt("2026-11-26 23:59:59")]
    assert df["lt_kind"].to_list() == ["utc", "utc", None, None, None, "yearless"]
    assert row(df, 1)["text"] == "Job 48213 started on cn-gpu-031 at Wed Apr  8 09:14:02 UTC 2026"
    # an ambiguous zone, and build dates: no time rather than a wrong one
    assert df["source"].to_list()[2:5] == ["plain", "plain", "plain"]
    assert row(df, 6)["source"] == "vllm"  # a line's own format wins over a date in its message
    banners = parse_lines(["=== job 4471902 on gpu-a100-14 started Tue Oct 14 09:12:31 UTC 2025 ===",
                           "=== job 4471902 finished with exit code 1 at Tue Oct 14 09:14:02 UTC 2025 ===",
                           "Job 771205 on dgx-a100-017,dgx-a100-018 started Thu May 14 14:19:44 UTC 2026",
                           "image built Tue Oct 14 09:12:31 UTC 2025 ==="], kind="log")
    assert banners["lt"].to_list() == [dt("2025-10-14 09:12:31"), dt("2025-10-14 09:14:02"),
                                       dt("2026-05-14 14:19:44"), None]
    assert row(banners, 1)["text"].endswith("UTC 2025 ===")  # the whole line stays the message


def test_rows_of_a_sampling_csv_carry_the_time_of_their_timestamp_column():
    df = parse_lines(["timestamp, index, memory.used [MiB]", "2026/07/09 10:00:00.394, 0, 3211 MiB",
                      "2026/07/09 10:01:00.255, 0, 80122 MiB", "0, NVIDIA H100 80GB HBM3, 00000000:19:00.0"],
                     kind="nvidia_smi_csv")
    assert df["lt"].to_list() == [None, dt("2026-07-09 10:00:00.394"), dt("2026-07-09 10:01:00.255"), None]
    assert df["lt_kind"].to_list() == [None, "local", "local", None]
    assert row(df, 3)["text"] == "0, 80122 MiB"


def test_fabric_manager_lines_carry_their_local_time_level_and_thread():
    df = parse_lines(["[Sep 03 2024 07:15:48] [INFO] [tid 2248] Successfully configured all the available NVSwitches",
                      "[Sep 12 2024 03:41:17] [ERROR] [tid 2271] detected NVSwitch fatal error 24007 on fid 0",
                      "[Sep 12 2024 03:41:18] [FATAL] [tid 2272] NVSwitch fatal error on a link connected to GPU 3"],
                     kind="log")
    assert df["lt"].to_list() == [dt("2024-09-03 07:15:48"), dt("2024-09-12 03:41:17"), dt("2024-09-12 03:41:18")]
    assert df["lt_kind"].to_list() == ["local"] * 3
    assert df["level"].to_list() == ["INFO", "ERROR", "CRITICAL"]
    assert df["tid"].to_list() == [2248, 2271, 2272]
    assert row(df, 2)["text"] == "detected NVSwitch fatal error 24007 on fid 0"


def test_unmatched_lines_are_plain_except_in_kernel_and_nccl_files():
    assert row(parse_lines(["just some text"], kind="vllm"), 1)["source"] == "plain"
    assert row(parse_lines(["               NVRM: continuation"], kind="kernel"), 1)["source"] == "kernel"
    assert row(parse_lines(["some nccl tail"], kind="nccl"), 1)["source"] == "nccl"


MIXED_FORMAT_LINES = [
    "INFO 08-23 17:10:41 [api_server.py:1805] vLLM API server version 0.10.1.1",
    'INFO:     10.0.7.218:41798 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "gpu-node-07:4121:4121 [0] NCCL INFO Bootstrap: Using eth0:10.0.3.17<0>",
    "[2026-11-12 14:02:05] gpu-k3-n02:131:202 [0] misc/ibvwrap.cc:212 NCCL WARN Call to mlx5dv_reg_dmabuf_mr failed",
    "[2026-11-12 14:02:06] gpu-k3-n02:131:202 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
    "gpu-node-08:3310:3391 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion with status=12",
    "plain text that no format reads",
]


@pytest.mark.parametrize("kind", ["vllm", "nccl"])
@pytest.mark.parametrize("major", range(len(MIXED_FORMAT_LINES)))
def test_a_line_parses_the_same_alone_and_among_many_lines_of_other_formats(kind, major):
    """How a batch is read depends on its mix (a format most of a batch's first lines do not match is first
    searched for, then read; a time group no line of the batch has is not parsed): the rows must not."""
    others = [ln for i, ln in enumerate(MIXED_FORMAT_LINES) if i != major]
    lines = [MIXED_FORMAT_LINES[major]] * 300 + others + [MIXED_FORMAT_LINES[major]] * 3 + others[::-1]
    batch = parse_lines(lines, kind=kind).drop("line")
    alone = {ln: parse_lines([ln], kind=kind).drop("line").row(0, named=True) for ln in MIXED_FORMAT_LINES}
    assert batch.to_dicts() == [alone[ln] for ln in lines]
    assert batch["source"].n_unique() >= 2


# ------------------------------------------------------------------------------------------------------
# any input
# ------------------------------------------------------------------------------------------------------
PIECES = st.sampled_from([
    "(Worker_TP1 pid=12) ", "(RayWorkerWrapper pid=5, ip=10.0.0.1) ", "[rank2]: ", "[1,3]<stdout>:",
    "INFO 08-11 07:35:59 [core.py:1] ", "WARN 13-45 99:99:99 x.py:1] ", "gpu-1:4:5 [0] NCCL INFO ",
    "[ 12.000001] ", "[Mon Aug 11 07:35:59 2026] ", "2026-08-11T07:35:59Z stdout P ", "\x1b[1;36m", "\x1b[0m",
    "\r", "| 3/4 [00:01<00:02, 1.0it/s]", "Traceback (most recent call last):", "{\"log\":\"x", "\"}", "\\",
    "(", ")", "[", "]", ":", " ", "x", "\ufffd", "\x00", "\t",
])
LINE = st.one_of(st.lists(PIECES, max_size=8).map("".join), st.text(max_size=60))


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=12),
       kind=st.sampled_from(["vllm", "nccl", "kernel", "torch", "log"]),
       wrappers=st.sampled_from([(), ("cri",), ("docker_json",), ("journald",), ("kubectl_prefix", "rfc3339")]))
def test_any_text_parses_without_error_and_keeps_every_line_number(lines, kind, wrappers):
    data = "\n".join(ln.replace("\n", " ") for ln in lines) + "\n"
    batches = list(iter_line_batches(io.BytesIO(data.encode("utf-8", "replace")), 1 << 20, 1 << 20))
    out = pl.concat([parse_batch(b, FileContext("f", kind, wrappers), builtin_formats()) for b in batches])
    covered = set(out["line"].to_list())
    if "_line_end" in out.columns:  # joined partial records cover their whole span
        for a, e in out.select("line", "_line_end").drop_nulls().iter_rows():
            covered |= set(range(a, e + 1))
    assert covered == set(range(1, len(lines) + 1))
    assert out.select("line", "sub").is_unique().all()


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=300), kind=st.sampled_from(["vllm", "kernel", "log"]))
def test_any_bytes_parse_without_error(data, kind):
    batches = list(iter_line_batches(io.BytesIO(data), 64, 1 << 10))
    n = sum(b.height for b in batches)
    rows = [parse_batch(b, FileContext("f", kind, ("cri",)), builtin_formats()) for b in batches]
    lines = set().union(*(set(r["line"].to_list()) for r in rows)) if rows else set()
    ends = set()
    for r in rows:
        if "_line_end" in r.columns:
            for a, e in r.select("line", "_line_end").drop_nulls().iter_rows():
                ends |= set(range(a, e + 1))
    assert lines | ends == set(range(1, n + 1))


def test_journald_lines_take_their_source_from_the_writer_not_the_file_kind():
    lines = ["Aug 11 07:35:59 gpu-node-07 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>",
             "Aug 11 07:36:00 gpu-node-07 systemd[1]: Started containerd.service."]
    in_journal = parse_lines(lines, kind="journal", wrappers=("journald",))
    in_kernel_log = parse_lines(lines, kind="kernel", wrappers=("journald",))
    for df in (in_journal, in_kernel_log):
        assert df["source"].to_list() == ["kernel", "plain"]


def test_a_json_export_s_message_fields_are_parsed_its_other_lines_are_not():
    from test_sniff import GCLOUD_JSON
    got = parse_lines(GCLOUD_JSON.split("\n")[:-1], kind="kernel", wrappers=("json_message_field", "journald_iso"))
    assert got["line"].to_list() == [5, 12, 19]   # one row a message, none merged with the next
    assert got["text"][0].startswith("NVRM: Xid") and got["wt"][0] == datetime(2026, 9, 22, 13, 41, 13, 128422)


def test_rsyslog_s_escapes_of_control_characters_read_as_the_characters():
    line = ("2026-09-22T13:05:20.920114+00:00 a4x-k3-0 vllm-k3[4187]: #033[0;36m(Worker_PP0_TP0_EP0 pid=262)#033[0;0m "
            "INFO 09-22 13:05:20 [model_runner.py:1] Starting to load model")
    r = parse_lines([line], kind="vllm", wrappers=("journald_iso",)).row(0, named=True)
    assert (r["proc"], r["pid"], r["text"]) == ("Worker_PP0_TP0_EP0", 262, "Starting to load model")
    # near miss: a '#' and digits that are no escape stay as they are
    plain = parse_lines(["2026-09-22T13:05:20+00:00 a4x-k3-0 app[1]: see issue #0331"], kind="log",
                        wrappers=("journald_iso",)).row(0, named=True)
    assert plain["text"].endswith("see issue #0331")
