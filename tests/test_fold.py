"""fold: multi-line events become one row with an exact span (line .. _line_end): Python tracebacks with
their exception chain, faulthandler dumps, exception groups, vLLM records continued with '\\r\\n', and
indented kernel continuation lines."""
from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import analyze_files, parse_lines, parse_text, row, span, text_of
from k3logs.ingest.fold import fold_collective_stacks, fold_continuations, fold_tracebacks


def folded(lines: list[str], kind: str = "vllm", wrappers: tuple[str, ...] = ()) -> pl.DataFrame:
    return parse_lines(lines, kind=kind, wrappers=wrappers, fold=True)


def tracebacks(df: pl.DataFrame) -> list[dict]:
    return df.filter(pl.col("exc_types").is_not_null()).to_dicts()


PLAIN = [
    "INFO 08-11 07:35:59 [api_server.py:1] before",
    "Traceback (most recent call last):",
    '  File "/srv/app/serve.py", line 41, in <module>',
    "    main()",
    '  File "/srv/app/serve.py", line 30, in main',
    "    load_model(path)",
    "ValueError: No available memory for the cache blocks.",
    "INFO 08-11 07:36:59 [api_server.py:2] after",
]


def test_plain_traceback_is_one_row_spanning_header_to_exception():
    df = folded(PLAIN)
    assert df["line"].to_list() == [1, 2, 8]
    [tb] = tracebacks(df)
    assert span(tb) == (2, 7)
    assert tb["exc_types"] == ["ValueError"]
    assert tb["exc_messages"] == ["No available memory for the cache blocks."]
    assert tb["exc_lines"] == [7]
    assert tb["frames"] == ["<module>", "main"]
    assert (tb["source"], tb["text"]) == ("traceback", "ValueError: No available memory for the cache blocks.")


CHAIN = [
    "Traceback (most recent call last):",                                      # 1
    '  File "/srv/net.py", line 10, in connect',
    "    sock.connect(addr)",
    "ConnectionRefusedError: [Errno 111] Connection refused",                  # 4
    "",
    "During handling of the above exception, another exception occurred:",
    "",
    "Traceback (most recent call last):",                                      # 8
    '  File "/srv/net.py", line 20, in retry',
    "    connect()",
    "RuntimeError: cannot connect",                                            # 11
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",                                      # 15
    '  File "/srv/main.py", line 3, in <module>',
    "    retry()",
    "torch.distributed.DistBackendError: NCCL error in: NCCLUtils.hpp:268, unhandled system error",  # 18
    "INFO 08-11 07:36:59 [api_server.py:2] after",                             # 19
]


def test_chained_traceback_lists_every_link_first_exception_first():
    df = folded(CHAIN)
    [tb] = tracebacks(df)
    assert span(tb) == (1, 18)
    assert tb["exc_types"] == ["ConnectionRefusedError", "RuntimeError", "torch.distributed.DistBackendError"]
    assert tb["exc_messages"] == ["[Errno 111] Connection refused", "cannot connect",
                                  "NCCL error in: NCCLUtils.hpp:268, unhandled system error"]
    assert tb["exc_lines"] == [4, 11, 18]
    # the stacks outermost first: the last exception's (what the process was doing), down to the first's
    assert tb["frames"] == ["<module>", "retry", "connect"]
    assert tb["text"] == "ConnectionRefusedError: [Errno 111] Connection refused"


def test_a_chained_exception_printed_without_a_stack_stays_in_the_chain():
    # an exception made, not raised (urllib3's ProxyError): Python prints it after the separator with no
    # 'Traceback' header, and the chain goes on after it
    lines = CHAIN[:13] + ["", "urllib3.exceptions.ProxyError: ('Unable to connect to proxy', 'refused')", ""] + CHAIN[12:]
    [tb] = tracebacks(folded(lines))
    assert tb["exc_types"] == ["ConnectionRefusedError", "RuntimeError", "urllib3.exceptions.ProxyError",
                               "torch.distributed.DistBackendError"]
    assert span(tb) == (1, len(lines) - 1)
    # near miss: with no separator before it, an exception-like line after a finished traceback is not its link
    lines = PLAIN[1:7] + ["", "urllib3.exceptions.ProxyError: ('Unable to connect to proxy', 'refused')"]
    [tb] = tracebacks(folded(lines))
    assert tb["exc_types"] == ["ValueError"]


def test_chained_traceback_leaves_no_row_inside_its_span():
    df = folded(CHAIN)
    assert df["line"].to_list() == [1, 19]


def test_multi_line_exception_message_is_kept_whole():
    df = folded([
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/srv/app/serve.py", line 41, in <module>',
        "[rank0]:     dist.barrier()",
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268,"
        " unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
        "[rank0]: Last error:",
        "[rank0]: socketStartConnect: Connect to 10.0.3.17<41275> failed : Software caused connection abort",
        "INFO 08-11 07:36:59 [api_server.py:2] after",
    ])
    [tb] = tracebacks(df)
    assert span(tb) == (1, 7) and tb["exc_lines"] == [4] and tb["rank"] == 0
    assert tb["exc_types"] == ["torch.distributed.DistBackendError"]
    msg = tb["exc_messages"][0]
    assert msg.startswith("NCCL error in:") and msg.endswith("Last error:\nsocketStartConnect: Connect to "
                                                             "10.0.3.17<41275> failed : Software caused connection abort")


PTXAS = ["Traceback (most recent call last):", '  File "/srv/triton/compiler.py", line 442, in make_cubin',
         '    raise PTXASError(f"{error}")', "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX "
         "codegen error", "`ptxas` stderr:", "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'"]


@pytest.mark.parametrize("kept", [[1, 2, 3, 4, 6], [1, 2, 3, 4, 5, 6]])   # near miss: every line kept
def test_each_part_of_a_message_keeps_its_lines_place_where_lines_between_were_not_kept(kept):
    # (the analysis keeps only the lines it needs: a part's line is the first line's plus its place)
    df = parse_lines(PTXAS).filter(pl.col("line").is_in(kept))
    [tb] = tracebacks(fold_tracebacks(df))
    parts = tb["exc_messages"][0].split("\n")
    assert tb["exc_lines"][0] + parts.index(PTXAS[5]) == 6


def test_logger_prefixed_traceback_folds_with_its_records_time_and_level():
    p = "(EngineCore_DP0 pid=77) ERROR 08-11 07:36:12 [core.py:708] "
    df = parse_text(
        p + "EngineCore failed to start.\r\n"
        + p + "Traceback (most recent call last):\r\n"
        + p + '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 699, in run_engine_core\r\n'
        + p + "    engine_core = EngineCoreProc(*args, **kwargs)\r\n"
        + p + "                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\r\n"
        + p + "ValueError: No available memory for the cache blocks.\n"
        + "(APIServer pid=1) INFO 08-11 07:36:13 [api.py:1] next\n", fold=True)
    [tb] = tracebacks(df)
    assert span(tb) == (2, 6) and tb["exc_lines"] == [6]
    assert (tb["pid"], tb["level"], tb["loc"]) == (77, "ERROR", "core.py:708")
    assert tb["frames"] == ["run_engine_core"]
    assert row(df, 1)["text"] == "EngineCore failed to start."


def test_interleaved_tracebacks_of_two_processes_fold_separately():
    df = folded([
        "(EngineCore_DP0 pid=77) Traceback (most recent call last):",   # 1
        "(Worker_TP1 pid=79) Traceback (most recent call last):",       # 2
        '(EngineCore_DP0 pid=77)   File "/srv/core.py", line 5, in run',
        '(Worker_TP1 pid=79)   File "/srv/worker.py", line 9, in step',
        "(EngineCore_DP0 pid=77)     self.step()",
        "(Worker_TP1 pid=79)     model(x)",
        "(Worker_TP1 pid=79) torch.OutOfMemoryError: CUDA out of memory.",  # 7
        "(EngineCore_DP0 pid=77) RuntimeError: worker died",               # 8
    ])
    tbs = {t["pid"]: t for t in tracebacks(df)}
    assert set(tbs) == {77, 79} and df.height == 2
    assert (span(tbs[77]), tbs[77]["exc_types"], tbs[77]["frames"]) == ((1, 8), ["RuntimeError"], ["run"])
    assert (span(tbs[79]), tbs[79]["exc_types"], tbs[79]["frames"]) == ((2, 7), ["torch.OutOfMemoryError"], ["step"])


def test_interleaved_tracebacks_of_two_ranks_fold_separately():
    df = folded([
        "[rank0]: Traceback (most recent call last):",
        "[rank1]: Traceback (most recent call last):",
        '[rank0]:   File "/srv/app.py", line 5, in run',
        '[rank1]:   File "/srv/app.py", line 5, in run',
        "[rank0]:     dist.barrier()",
        "[rank1]:     dist.barrier()",
        "[rank0]: RuntimeError: rank 0 failed",
        "[rank1]: RuntimeError: rank 1 failed",
    ], kind="torch")
    tbs = {t["rank"]: t for t in tracebacks(df)}
    assert set(tbs) == {0, 1}
    assert (span(tbs[0]), tbs[0]["exc_messages"]) == ((1, 7), ["rank 0 failed"])
    assert (span(tbs[1]), tbs[1]["exc_messages"]) == ((2, 8), ["rank 1 failed"])


def test_multiprocessing_process_header_starts_the_traceback():
    df = folded([
        "(EngineCore_DP0 pid=77) Process EngineCore_DP0:",
        "(EngineCore_DP0 pid=77) Traceback (most recent call last):",
        '(EngineCore_DP0 pid=77)   File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
        "(EngineCore_DP0 pid=77)     self.run()",
        "(EngineCore_DP0 pid=77) ValueError: No available memory for the cache blocks.",
    ])
    [tb] = tracebacks(df)
    assert span(tb) == (1, 5) and tb["exc_lines"] == [5] and tb["exc_types"] == ["ValueError"]
    assert df.height == 1


FAULT = [
    "INFO 08-11 07:36:40 [gpu_model_runner.py:1] capturing",
    "Fatal Python error: Segmentation fault",                       # 2
    "",
    "Thread 0x00007f2a1bfff640 (most recent call first):",
    '  File "/usr/lib/python3.12/threading.py", line 331 in wait',
    "",
    "Current thread 0x00007f2a3c1ff740 (most recent call first):",
    '  File "/srv/vllm/torch_graphs.py", line 88 in capture_end',
    '  File "/srv/vllm/model_runner.py", line 12 in capture_model',
    '  File "/srv/vllm/main.py", line 3 in <module>',
    "",
    "Extension modules: numpy.core._multiarray_umath, torch._C (total: 2)",  # 12
    "INFO 08-11 07:36:41 [api.py:2] after",
]


def newest_first(lines: list[str], start: str = "2026-08-11T07:36:") -> list[str]:
    """`lines` as a log platform exports them, newest first, each with its own time (a second apart)."""
    return [f"{start}{s:02d}.000Z {line}" for s, line in reversed(list(enumerate(lines)))]


def test_a_traceback_written_newest_first_folds_in_the_order_it_was_written():
    df = folded(newest_first(PLAIN), wrappers=("rfc3339",))
    [tb] = tracebacks(df)
    # the span is the file's: the exception (line 2) up to the header (line 7)
    assert span(tb) == (2, 7) and tb["exc_lines"] == [2]
    assert tb["exc_types"] == ["ValueError"] and tb["frames"] == ["<module>", "main"]
    assert sorted(df["line"].to_list()) == [1, 2, 8]


def test_a_small_file_written_newest_first_folds_in_a_pack_of_files_too(tmp_path):
    a = analyze_files(tmp_path, {"export.log": text_of(*newest_first(PLAIN)), "other.log": text_of(*PLAIN)})
    tbs = a.events.filter(pl.col("exc_types").is_not_null()).sort("file")
    assert tbs.select("file", "line", "line_end").rows() == [("export.log", 2, 7), ("other.log", 2, 7)]


def test_near_miss_a_file_with_one_line_out_of_order_folds_as_written():
    lines = [f"2026-08-11T07:36:{s:02d}.000Z {line}" for s, line in enumerate(PLAIN)]
    lines[0], lines[-1] = lines[-1], lines[0]   # one record out of place: still oldest first
    [tb] = tracebacks(folded(lines, wrappers=("rfc3339",)))
    assert span(tb) == (2, 7) and tb["exc_lines"] == [7]


def test_faulthandler_dump_is_one_event_with_the_crashed_threads_stack():
    df = folded(FAULT)
    [tb] = tracebacks(df)
    assert span(tb) == (2, 12)
    assert tb["exc_lines"] == [2] and tb["text"] == "Fatal Python error: Segmentation fault"
    assert tb["frames"] == ["<module>", "capture_model", "capture_end"]  # outermost first, like tracebacks
    assert df["line"].to_list() == [1, 2, 13]


def test_caret_lines_of_python_311_and_313_are_frames_not_exceptions():
    df = folded([
        "Traceback (most recent call last):",
        '  File "/srv/a.py", line 20, in main',
        "    result = compute(table[key])",
        "                     ~~~~~^^^^^",
        '  File "/srv/a.py", line 9, in compute',
        "    return 1 / value",
        "           ~~^~~~~~~",
        "    ^^^^^^^^^^^^^^^^",
        "ZeroDivisionError: division by zero",
    ])
    [tb] = tracebacks(df)
    assert span(tb) == (1, 9) and tb["exc_types"] == ["ZeroDivisionError"] and tb["exc_lines"] == [9]
    assert tb["frames"] == ["main", "compute"]


GROUP = [
    "  + Exception Group Traceback (most recent call last):",      # 1
    '  |   File "/srv/g.py", line 9, in <module>',
    "  |     asyncio.run(main())",
    "  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)",  # 4
    "  +-+---------------- 1 ----------------",
    "    | Traceback (most recent call last):",
    '    |   File "/srv/g.py", line 4, in one',
    '    |     raise ValueError("bad one")',
    "    | ValueError: bad one",                                      # 9
    "    +---------------- 2 ----------------",
    "    | Traceback (most recent call last):",
    '    |   File "/srv/g.py", line 6, in two',
    '    |     raise KeyError("k")',
    "    | KeyError: 'k'",                                            # 14
    "    +------------------------------------",                      # 15
    "INFO 08-11 07:36:41 [api.py:2] after",                           # 16
]


def test_exception_group_lists_the_group_and_each_sub_exception():
    df = folded(GROUP)
    [tb] = tracebacks(df)
    assert span(tb) == (1, 15)
    assert tb["exc_types"] == ["ExceptionGroup", "ValueError", "KeyError"]
    assert tb["exc_messages"] == ["unhandled errors in a TaskGroup (2 sub-exceptions)", "bad one", "'k'"]
    assert tb["exc_lines"] == [4, 9, 14]
    assert df["line"].to_list() == [1, 16]


def test_newline_formatter_continued_record_is_one_event():
    p = "(VllmWorkerProcess pid=30417) INFO 08-11 07:36:20 [worker.py:266] "
    df = parse_text(p + "Memory profiling takes 5.12 seconds\r\n"
                    + p + "the current vLLM instance can use total_gpu_memory (79.19GiB) x 0.90 = 71.27GiB\r\n"
                    + p + "model weights take 15.23GiB; the rest of the memory reserved for KV Cache is 50.1GiB.\n"
                    + p + "a separate record\n", fold=True)
    assert df["line"].to_list() == [1, 4]
    r = row(df, 1)
    assert span(r) == (1, 3)
    assert r["text"].split("\n") == ["Memory profiling takes 5.12 seconds",
                                     "the current vLLM instance can use total_gpu_memory (79.19GiB) x 0.90 = 71.27GiB",
                                     "model weights take 15.23GiB; the rest of the memory reserved for KV Cache is 50.1GiB."]


def test_continued_records_of_different_processes_stay_apart():
    a = "(Worker_TP0 pid=10) INFO 08-11 07:36:20 [worker.py:266] "
    b = "(Worker_TP1 pid=11) INFO 08-11 07:36:20 [worker.py:266] "
    df = parse_text(a + "zero one\r\n" + b + "one one\r\n" + a + "zero two\n" + b + "one two\n", fold=True)
    assert {r["pid"]: (span(r), r["text"]) for r in df.iter_rows(named=True)} == {
        10: ((1, 3), "zero one\nzero two"), 11: ((2, 4), "one one\none two")}


def test_indented_dmesg_continuation_lines_join_the_kernel_record():
    df = folded(["[ 2207.551000] pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received",
                 "[ 2207.551903] NVRM: The NVIDIA GPU 0000:5e:00.0",
                 "               NVRM: (PCI ID: 10de:2330) installed in this system has",
                 "               NVRM: fallen off the bus and is not responding to commands.",
                 "[ 2207.561000] NVRM: Xid (PCI:0000:5e:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."],
                kind="kernel")
    assert df["line"].to_list() == [1, 2, 5]
    r = row(df, 2)
    assert span(r) == (2, 4) and r["uptime"] == 2207.551903
    assert "fallen off the bus and is not responding" in r["text"] and r["text"].startswith("NVRM: The NVIDIA GPU")
    assert span(row(df, 5)) == (5, 5)


def test_traceback_without_an_exception_line_is_not_folded():
    df = folded(["Traceback (most recent call last):",
                 '  File "/srv/a.py", line 2, in <module>',
                 "INFO 08-11 07:36:41 [api.py:2] the log goes on"])
    assert df["exc_types"].is_null().all() if "exc_types" in df.columns else True
    assert df["line"].to_list() == [1, 2, 3]


def test_exception_at_the_end_of_the_file_closes_the_traceback():
    df = folded(PLAIN[1:7])
    [tb] = tracebacks(df)
    assert span(tb) == (1, 6)


def test_rows_from_batches_with_and_without_joined_records_fold_together():
    """ingest concatenates parsed batches: one with CRI partials (a _line_end column), one without."""
    joined = parse_lines(["2026-08-11T07:36:12.5Z stderr P first ", "2026-08-11T07:36:12.6Z stderr F half"],
                         wrappers=("cri",))
    tb = parse_lines(["Traceback (most recent call last):", '  File "/srv/a.py", line 1, in f', "ValueError: x"])
    kern = parse_lines(["[ 1.000000] NVRM: one", "             NVRM: two"], kind="kernel")
    parts = [joined, tb.with_columns(pl.col("line") + 2), kern.with_columns(pl.col("line") + 5)]
    df = fold_continuations(fold_tracebacks(pl.concat(parts, how="diagonal_relaxed")))
    assert [span(r) for r in df.iter_rows(named=True)] == [(1, 2), (3, 5), (6, 7)]


TB_PIECES = ["Traceback (most recent call last):", '  File "/srv/a.py", line 3, in f', "    f()", "    ~~^^",
             "ValueError: bad", "KeyError: 'k'", "more message", "", CHAIN[5], CHAIN[12],
             "Fatal Python error: Aborted", "Current thread 0x00007f2a3c1ff740 (most recent call first):",
             '  File "/srv/a.py", line 3 in f', GROUP[0], GROUP[3], GROUP[4], GROUP[5], GROUP[8], GROUP[14],
             "Process EngineCore_DP0:", "INFO 08-11 07:36:41 [api.py:2] a record\r", "[ 1.000000] NVRM: x",
             "               NVRM: y"]
PREFIXES = ["", "(EngineCore_DP0 pid=77) ", "(Worker_TP1 pid=79) ", "[rank1]: "]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PREFIXES), st.sampled_from(TB_PIECES)), min_size=1, max_size=30),
       st.sampled_from(["vllm", "kernel"]))
def test_any_mix_of_traceback_pieces_folds_without_error_and_covers_every_line(pieces, kind):
    df = folded([p + t for p, t in pieces], kind=kind)
    covered = set()
    for r in df.iter_rows(named=True):
        a, e = span(r)
        assert a <= e
        covered |= {a, e}
        if r.get("exc_lines"):
            assert all(a <= x <= e for x in r["exc_lines"])
    assert covered >= set(df["line"].to_list())
    assert set(range(1, len(pieces) + 1)) - covered <= _inside_spans(df)


def _inside_spans(df: pl.DataFrame) -> set[int]:
    return {x for r in df.iter_rows(named=True) for x in range(span(r)[0], span(r)[1] + 1)}


def test_a_later_record_of_the_same_worker_is_not_part_of_its_exception_message():
    # a restarted worker reuses its pid and logs the same logger location, seconds later
    w = "(Worker_TP0 pid=163) ERROR 03-17 06:42:{} [multiproc_executor.py:762] {}"
    df = folded([w.format("04", "WorkerProc failed to start."), w.format("04", "Traceback (most recent call last):"),
                 w.format("04", '  File "/srv/w.py", line 3, in main'), w.format("04", "    init()"),
                 w.format("04", "RuntimeError: Error 803: system has unsupported display driver"),
                 w.format("04", "hint: check the driver"),
                 w.format("39", "WorkerProc failed to start.")])
    [tb] = tracebacks(df)
    assert span(tb) == (2, 6)   # the line written with the exception goes on its message; the restart's does not
    assert tb["exc_messages"] == ["Error 803: system has unsupported display driver\nhint: check the driver"]
    assert row(df, 7)["text"] == "WorkerProc failed to start."


DOWNLOAD = [
    "Traceback (most recent call last):",
    '  File "/venv/lib/python3.12/site-packages/urllib3/connectionpool.py", line 841, in urlopen',
    "    retries = retries.increment(",
    "urllib3.exceptions.ProxyError: ('Unable to connect to proxy', NameResolutionError('webproxy'))",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_worker.py", line 213, in load_model',
    "    self.model_runner.load_model()",
    '  File "/venv/lib/python3.12/site-packages/huggingface_hub/hf_api.py", line 2652, in model_info',
    "    r = get_session().get(path)",
    "requests.exceptions.ProxyError: Unable to connect to proxy",
]


def test_a_chained_exception_s_phase_comes_from_every_stack_of_the_chain():
    from k3logs.diagnose.detect import frame_phase
    [tb] = tracebacks(folded(DOWNLOAD))
    # the download's own stack names no step of the server; the exception raised from it was in load_model
    assert frame_phase(tb["frames"]) == "model_load"
    # near miss: the first exception alone (no chain) says nothing of the phase
    [alone] = tracebacks(folded(DOWNLOAD[:4]))
    assert alone["frames"] == ["urlopen"] and frame_phase(alone["frames"]) is None


# torch's watchdog: the stack of the collective it caught timing out, '#N fn from FILE:LINE', innermost first
WATCHDOG = "[rank8]:[E1124 09:37:47.119958402 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective: "
CPP_STACK = ["#0 all_reduce from /torch/distributed/distributed_c10d.py:3041",
             "#1 _dummy_run from /vllm/v1/worker/gpu_model_runner.py:3954",
             "#2 profile_run from /vllm/v1/worker/gpu_model_runner.py:4312",
             "#3 determine_available_memory from /vllm/v1/worker/gpu_worker.py:281"]


def test_the_stack_of_a_failed_collective_is_its_announcing_lines_frames_outermost_first():
    df = fold_collective_stacks(parse_lines([WATCHDOG, *CPP_STACK, "INFO 11-24 09:37:48 [core.py:1] after"],
                                            kind="torch"))
    head = row(df, 1)
    assert head["frames"] == ["determine_available_memory", "profile_run", "_dummy_run", "all_reduce"]
    assert span(head) == (1, 5) and df["line"].to_list() == [1, 6]


@pytest.mark.parametrize("lines", [
    ["INFO 11-24 09:37:47 [core.py:1] nothing announced", *CPP_STACK],       # no announcement before them
    [WATCHDOG, "INFO 11-24 09:37:47 [core.py:1] a line between", *CPP_STACK],   # not right after it
    [WATCHDOG, "#7 0x00007f3a2c7fe640 in ncclGroupEnd () from /usr/lib/libnccl.so.2"]])   # gdb's frame: no stack
def test_near_miss_frame_like_lines_not_right_after_the_announcement_are_no_stack(lines):
    df = fold_collective_stacks(parse_lines(lines, kind="torch"))
    assert df.height == len(lines)
    assert "frames" not in df.columns or df["frames"].null_count() == df.height
