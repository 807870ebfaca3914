"""decide: the first CAUSE across ranks and nodes. Symptoms never win while a cause exists; a cause
explains the later causes of the categories it lists in its scope (Xid -> CUDA error, oom-kill -> killed
worker, /dev/shm -> 'unhandled system error', driver mismatch -> CUDA init errors); the OOM category follows
the phase; no cause leaves a symptom of a root-cause category (low confidence), else the first exception as
`other`; a quiet bundle can still hold a configuration fault."""
from __future__ import annotations

import json

import pytest

from conftest import analyze_files, report_of, text_of
from k3logs.diagnose.findings import Finding
from k3logs.diagnose.templates import mask_template

WATCHDOG = ("[rank{r}]:[E811 {t}.412207911 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) "
            "ran for 600020 milliseconds before timing out.")
OOM = ("ERROR 08-11 {t} [core.py:708] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
       "GPU {g} has a total capacity of 79.15 GiB of which 1.02 GiB is free.")
ILLEGAL = "ERROR 08-11 {t} [core.py:708] RuntimeError: CUDA error: an illegal memory access was encountered"
XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


def assigned(rank: int, world: int, pid: int, t: str = "10:00:00") -> str:
    return (f"(Worker_TP{rank} pid={pid}) INFO 08-11 {t} [parallel_state.py:1] rank {rank} in world size {world} is "
            f"assigned as DP rank 0, PP rank 0, TP rank {rank}, EP rank {rank}")


def root_of(a) -> Finding:
    assert not a.decision.healthy and a.decision.root is not None
    return a.decision.root


def finding(a, sig: str) -> Finding:
    (f,) = [f for f in a.decision.findings if f.sig == sig]
    return f


def explained_by_root(a, f: Finding) -> bool:
    return f.explained_by is not None and a.decision.findings[f.explained_by] is a.decision.root


# ------------------------------------------------------------------------------------------
# causes before symptoms
# ------------------------------------------------------------------------------------------
def test_an_earlier_watchdog_timeout_loses_to_a_later_cause_on_another_rank(tmp_path):
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(
        assigned(3, 8, 303), assigned(5, 8, 305),
        WATCHDOG.format(r=3, t="10:00:05"),
        "(Worker_TP5 pid=305) " + OOM.format(t="10:00:06", g=5))})
    root = root_of(a)
    assert (root.sig, root.rank, root.line) == ("cuda-out-of-memory", 5, 4)
    assert root.category.startswith("oom.")
    r = report_of(a)
    assert [(s.category, s.rank, s.line) for s in r.symptoms] == [("nccl.timeout", 3, 3)]
    assert r.root_cause.confidence == "high"


# ------------------------------------------------------------------------------------------
# cross-source links
# ------------------------------------------------------------------------------------------
def test_xid_explains_the_cuda_error_that_follows_on_its_node(tmp_path):
    # the dmesg has no boot time: the Xid's time is unknown, yet it explains the CUDA error of its node
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(assigned(0, 2, 101), WATCHDOG.format(r=0, t="10:10:05")),
        "node-b/vllm.log": text_of(assigned(1, 2, 202), "(Worker_TP1 pid=202) " + ILLEGAL.format(t="10:00:09")),
        "node-b/dmesg.txt": text_of("[ 1000.000000] Linux version 6.8.0", f"[12311.920117] {XID79}"),
    })
    root = root_of(a)
    assert (root.category, root.file, root.line, root.node) == ("gpu.xid", "node-b/dmesg.txt", 2, "node-b")
    assert root.ts is None and root.rank == 1          # the rank it borrows from the error it explains
    assert explained_by_root(a, finding(a, "cuda-illegal-memory-access"))
    r = report_of(a)
    assert r.root_cause.title.startswith("Xid 79") and r.root_cause.confidence == "high"
    assert {s.category for s in r.symptoms} == {"gpu.illegal_access", "nccl.timeout"}


def test_the_cuda_error_without_an_xid_is_the_root(tmp_path):
    a = analyze_files(tmp_path, {
        "node-b/vllm.log": text_of(assigned(1, 2, 202), "(Worker_TP1 pid=202) " + ILLEGAL.format(t="10:00:09")),
        "node-b/dmesg.txt": text_of("[ 1000.000000] Linux version 6.8.0")})
    assert root_of(a).category == "gpu.illegal_access"


def test_xid_on_another_node_does_not_explain_the_cuda_error(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(assigned(0, 2, 101), "(Worker_TP0 pid=101) " + ILLEGAL.format(t="10:00:05")),
        "node-b/vllm.log": text_of(assigned(1, 2, 202)),
        "node-b/kern.log": f"2026-08-11T10:00:07+00:00 gpu-b kernel: {XID79}\n"})
    assert root_of(a).category == "gpu.illegal_access"   # earlier, and on a node the Xid does not reach
    assert finding(a, "cuda-illegal-memory-access").explained_by is None


@pytest.mark.parametrize("t, root", [("10:00:09", "gpu.xid"),              # 2 s after, by the kernel's clock
                                     ("10:00:15", "gpu.illegal_access")])  # near miss: 8 s after
def test_a_kernel_line_a_few_seconds_after_the_error_by_its_clock_still_explains_it(tmp_path, t, root):
    a = analyze_files(tmp_path, {
        "node-b/vllm.log": text_of(assigned(1, 2, 202), "(Worker_TP1 pid=202) " + ILLEGAL.format(t="10:00:07")),
        "node-b/kern.log": f"2026-08-11T{t}+00:00 gpu-b kernel: {XID79}\n"})
    assert root_of(a).category == root


@pytest.mark.parametrize("t, node, root", [("10:00:10", "gpu-b", "nvrm-xid"),      # 3 s after, by the kernel's clock
                                           ("10:00:10", "gpu-c", "cuda-uncorrectable-ecc"),  # near miss: other node
                                           ("10:00:16", "gpu-b", "cuda-uncorrectable-ecc")])  # near miss: 9 s after
def test_the_kernels_report_of_the_fault_a_process_states_comes_first_within_its_clocks_slack(tmp_path, t, node,
                                                                                                root):
    ecc = ("(Worker_TP1 pid=202) ERROR 08-11 10:00:07 [core.py:1] RuntimeError: CUDA error: uncorrectable ECC "
           "error encountered")
    a = analyze_files(tmp_path, {
        "gpu-b/vllm.log": text_of(assigned(1, 2, 202), ecc),
        f"{node}/kern.log": f"2026-08-11T{t}+00:00 {node} kernel: NVRM: Xid (PCI:0000:9b:00): 48, pid=202, An "
                            "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer.\n"})
    assert root_of(a).sig == root


@pytest.mark.parametrize("next_t, root", [("10:20:07", "nvrm-xid"),                # the Xid lies before it
                                          ("10:10:00", "cuda-uncorrectable-ecc")])  # near miss: long before the Xid
def test_an_untimed_traceback_happened_up_to_its_file_s_next_timed_line(tmp_path, next_t, root):
    """A traceback with no time of its own carries the time of the line before it (ten minutes before the Xid
    here), yet it came as late as the next timed line kept: the kernel's report of the fault within that window
    is the same fault's, and comes first."""
    a = analyze_files(tmp_path, {
        "gpu-b/vllm.log": text_of(assigned(1, 2, 202), "(Worker_TP1 pid=202) INFO 08-11 10:00:07 [core.py:1] step",
                                  "Traceback (most recent call last):",
                                  '  File "/usr/lib/python3/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 1, '
                                  "in execute_model", "RuntimeError: CUDA error: uncorrectable ECC error encountered",
                                  f"[W811 {next_t}.300000480 ProcessGroupNCCL.cpp:1538] Warning: WARNING: "
                                  "destroy_process_group() was not called before program exit, which can leak "
                                  "resources."),
        "gpu-b/kern.log": "2026-08-11T10:20:05+00:00 gpu-b kernel: NVRM: Xid (PCI:0000:9b:00): 48, pid=202, An "
                          "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer.\n"})
    assert root_of(a).sig == root


@pytest.mark.parametrize("t, root", [("10:00:10", "gpu.xid"),              # 2 s after the stop, by the kernel's clock
                                     ("10:00:40", "gpu.illegal_access")])  # near miss: half a minute after: a trail
def test_a_kernel_line_a_few_seconds_after_the_stop_by_its_clock_is_no_trail(tmp_path, t, root):
    a = analyze_files(tmp_path, {
        "node-b/vllm.log": text_of(assigned(1, 2, 202), "(Worker_TP1 pid=202) " + ILLEGAL.format(t="10:00:07"),
                                   "(APIServer pid=1) INFO 08-11 10:00:08 [launcher.py:1] Shutting down FastAPI HTTP "
                                   "server."),
        "node-b/kern.log": f"2026-08-11T{t}+00:00 gpu-b kernel: {XID79}\n"})
    assert root_of(a).category == root
    # and it happened in the phase the node was in before the stop, not in the stop
    assert root_of(a).phase != "shutdown"


MISMATCH = "NVRM: API mismatch: the client has the version 580.95.05, but"


@pytest.mark.parametrize("t, phase", [("10:05:12", "startup"),   # the second the server started again
                                      ("10:05:09", None)])       # near miss: seconds before it: the stop's trail
def test_a_kernel_line_in_the_second_the_server_started_again_is_the_new_start_s(tmp_path, t, phase):
    start = "INFO 08-11 10:05:12 [__init__.py:220] No platform detected, vLLM is running on UnspecifiedPlatform"
    a = analyze_files(tmp_path, {
        "node-b/vllm.log": text_of(UP, "(APIServer pid=1) INFO 08-11 10:05:00 [launcher.py:1] Shutting down FastAPI "
                                       "HTTP server.", start),
        "node-b/kern.log": f"2026-08-11T{t}+00:00 gpu-b kernel: {MISMATCH}\n"})
    f = finding(a, "nvml-driver-library-mismatch")
    assert (f.set_aside is None, f.phase) == (True, phase) if phase else f.set_aside.startswith("after the stop")


def test_kernel_oom_kill_explains_the_vanished_worker_and_the_timeouts(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(assigned(0, 2, 101), WATCHDOG.format(r=0, t="10:10:05")),
        "node-b/vllm.log": text_of(
            assigned(1, 2, 202),
            "(EngineCore_DP0 pid=77) ERROR 08-11 10:00:12 [multiproc_executor.py:154] Worker proc VllmWorker-1 died "
            "unexpectedly, shutting down executor.",
            "/entrypoint.sh: line 12:    77 Killed                  python3 -m vllm.entrypoints.openai.api_server",
            WATCHDOG.format(r=1, t="10:10:04")),
        "node-b/dmesg.txt": text_of(
            "[12311.920117] python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, "
            "oom_score_adj=0",
            "[12311.952001] Out of memory: Killed process 202 (python3) total-vm:412334876kB, anon-rss:201334564kB, "
            "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:421004kB oom_score_adj:0"),
    })
    root = root_of(a)
    assert (root.category, root.file, root.line, root.node, root.rank) == ("oom.host", "node-b/dmesg.txt", 2, "node-b", 1)
    assert explained_by_root(a, finding(a, "process-sigkill"))       # a cause it explains: not a rival
    assert explained_by_root(a, finding(a, "worker-proc-died"))
    same_node_timeout = [f for f in a.decision.findings if f.category == "nccl.timeout" and f.node == "node-b"]
    assert same_node_timeout and all(explained_by_root(a, f) for f in same_node_timeout)
    assert {s.category for s in report_of(a).symptoms} >= {"symptom.worker_died", "nccl.timeout", "proc.killed"}


def test_dev_shm_failure_explains_unhandled_system_error(tmp_path):
    # NCCL_DEBUG_FILE lines carry no time; the Python errors do and come first in time order
    a = analyze_files(tmp_path, {
        "vllm.log": text_of(
            assigned(0, 2, 101), assigned(1, 2, 102),
            "(Worker_TP0 pid=101) ERROR 08-11 10:00:02 [multiproc_executor.py:596] RuntimeError: NCCL error: "
            "unhandled system error (run with NCCL_DEBUG=INFO for details)",
            "(Worker_TP1 pid=102) ERROR 08-11 10:00:02 [multiproc_executor.py:596] RuntimeError: NCCL error: "
            "unhandled system error (run with NCCL_DEBUG=INFO for details)"),
        "nccl.gpu-a.102.log": text_of(
            "gpu-a:102:140 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
            "gpu-a:102:140 [1] misc/shmutils.cc:73 NCCL WARN Error: failed to extend /dev/shm/nccl-Ab3dQz to "
            "9637892 bytes, error: No space left on device (28)"),
    })
    root = root_of(a)
    assert (root.category, root.file, root.line, root.rank) == ("nccl.shm", "nccl.gpu-a.102.log", 2, 1)
    errors = [f for f in a.decision.findings if f.category == "nccl.system_error"]
    assert len(errors) == 2 and all(explained_by_root(a, f) for f in errors)


@pytest.mark.parametrize("rerun_host, root", [("gpu-a", "nccl.shm"),            # the rerun on its node says why
                                               ("gpu-b", "nccl.system_error")])  # near miss: another node's
def test_an_unhandled_system_error_is_what_a_later_rerun_on_its_node_names(tmp_path, rerun_host, root):
    """A first run shows only 'unhandled system error'; its rerun with NCCL_DEBUG=INFO names /dev/shm."""
    bare = ("(Worker_TP0 pid=101) ERROR 08-11 10:00:02 [multiproc_executor.py:596] RuntimeError: NCCL error: "
            "unhandled system error (run with NCCL_DEBUG=INFO for details)")
    shm = (f"{rerun_host}:230:311 [1] misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-Wk3ZpQ to "
           "9637892 bytes, error: No space left on device (28)")
    a = analyze_files(tmp_path, {"gpu-a/first-run.log": text_of(assigned(0, 1, 101), bare),
                                 f"{rerun_host}/rerun.log": text_of(
                                     assigned(0, 1, 230, t="10:05:00"), f"{rerun_host}:230:311 [1] NCCL INFO "
                                     "Channel 00/0 : 1[1] -> 2[2] via SHM/direct/direct", shm)})
    assert root_of(a).category == root


def test_unhandled_system_error_alone_is_its_own_root_with_medium_confidence(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        assigned(0, 1, 101),
        "(Worker_TP0 pid=101) ERROR 08-11 10:00:02 [multiproc_executor.py:596] RuntimeError: NCCL error: "
        "unhandled system error (run with NCCL_DEBUG=INFO for details)")})
    assert root_of(a).category == "nccl.system_error"
    assert a.decision.confidence == "medium"      # a weak category: the real cause is usually elsewhere


def test_driver_mismatch_explains_cuda_init_errors(tmp_path):
    a = analyze_files(tmp_path, {
        "dmesg.txt": text_of("[ 8123.220114] NVRM: API mismatch: the client has the version 580.82.07, but NVRM: "
                             "this kernel module has the version 575.57.08.  Please NVRM: make sure that this kernel "
                             "module and all NVIDIA driver NVRM: components have the same version."),
        "vllm.log": text_of(
            "INFO 08-11 10:00:00 [__init__.py:239] Automatically detected platform cuda.",
            "(Worker_TP0 pid=101) ERROR 08-11 10:00:01 [multiproc_executor.py:596] RuntimeError: CUDA error: "
            "initialization error")})
    root = root_of(a)
    assert (root.category, root.sig, root.file, root.line) == ("env.driver_mismatch", "nvml-driver-library-mismatch",
                                                                "dmesg.txt", 1)
    assert explained_by_root(a, finding(a, "cuda-initialization-error"))


# ------------------------------------------------------------------------------------------
# no cause
# ------------------------------------------------------------------------------------------
def test_benign_noise_alone_is_healthy(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "INFO 08-11 10:00:00 [__init__.py:239] Automatically detected platform cuda.",
        "WARNING 08-11 10:00:01 [tokenizer.py:1] Using a slow tokenizer. This might cause a significant slowdown. "
        "Consider using a fast tokenizer instead.",
        "WARNING 08-11 10:00:01 [config.py:1] DeprecationWarning: `torch_dtype` is deprecated! Use `dtype` instead!",
        "(APIServer pid=1) INFO 08-11 10:00:04 [launcher.py:1] Application startup complete.",
        "(APIServer pid=1) INFO:     10.0.9.41:53422 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK")})
    assert a.decision.healthy and a.decision.root is None
    r = report_of(a)
    assert (r.healthy, r.root_cause.category, r.first_causal, r.exit_status) == (True, "none", None, 0)


def test_watchdog_timeout_alone_is_the_root_with_low_confidence(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(assigned(0, 2, 101), WATCHDOG.format(r=0, t="10:10:05"))})
    root = root_of(a)
    assert (root.category, root.line, root.rank) == ("nccl.timeout", 2, 0)
    assert a.decision.confidence == "low"
    assert report_of(a).exit_status == 1


KEYERROR = [
    "(Worker_TP{r} pid={p}) ERROR 08-11 10:00:0{s} [core.py:1] Traceback (most recent call last):",
    '(Worker_TP{r} pid={p}) ERROR 08-11 10:00:0{s} [core.py:1]   File "/app/logits.py", line 12, in apply',
    "(Worker_TP{r} pid={p}) ERROR 08-11 10:00:0{s} [core.py:1]     return self.table[token_id]",
    "(Worker_TP{r} pid={p}) ERROR 08-11 10:00:0{s} [core.py:1] KeyError: 'token_1516{r}{s}'",
]


def test_unknown_exception_is_other_with_its_template_and_repeats(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(assigned(0, 2, 101), *(x.format(r=0, p=101, s=4) for x in KEYERROR)),
        "node-b/vllm.log": text_of(assigned(1, 2, 202), *(x.format(r=1, p=202, s=3) for x in KEYERROR)),
    })
    root = root_of(a)
    # the earliest-failing rank, at the line stating the exception, the traceback as its span
    assert (root.category, root.sig, root.node, root.rank, root.line, root.span) == (
        "other", None, "node-b", 1, 5, (2, 5))
    assert a.decision.confidence == "low"
    assert (a.decision.template, a.decision.repeats) == ("KeyError: <s>", 2)
    r = report_of(a)
    assert r.other == {"template": "KeyError: <s>", "repeats": 2} and r.exit_status == 1


def test_mask_turns_numbers_hex_strings_and_paths_into_placeholders():
    assert mask_template("KeyError: 'token_151643' at 0x7f3a in /opt/app/x.py line 12") == \
        "KeyError: <s> at <hex> in <path> line <n>"


# ------------------------------------------------------------------------------------------
# OOM by phase
# ------------------------------------------------------------------------------------------
W = "(Worker_TP0 pid=101) "
HEAD = [W + "INFO 08-11 10:00:00 [parallel_state.py:1] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, "
            "TP rank 0, EP rank 0"]
LOAD = W + "INFO 08-11 10:01:00 [gpu_model_runner.py:1] Starting to load model /models/m..."
KV = W + "INFO 08-11 10:02:00 [gpu_worker.py:1] Available KV cache memory: 34.27 GiB"
CAPTURE = (W + "INFO 08-11 10:03:00 [gpu_model_runner.py:1] Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):"
               "   1%|          | 1/67 [00:00<00:19,  3.45it/s]")
CAPTURED = W + "INFO 08-11 10:03:30 [gpu_model_runner.py:1] Graph capturing finished in 7 secs, took 0.53 GiB"
UP = "(APIServer pid=1) INFO 08-11 10:04:00 [launcher.py:1] Application startup complete."
STATS = ("(APIServer pid=1) INFO 08-11 {t} [loggers.py:123] Engine 000: Avg prompt throughput: 2110.4 tokens/s, Avg "
         "generation throughput: {g} tokens/s, Running: {run} reqs, Waiting: {wait} reqs, GPU KV cache usage: {kv}%, "
         "Prefix cache hit rate: 63.9%")


@pytest.mark.parametrize("before, t, category, phase", [
    ([LOAD], "10:01:05", "oom.load", "model_load"),
    ([LOAD, KV, CAPTURE], "10:03:05", "oom.cudagraph", "cudagraph_capture"),
    ([LOAD, KV, CAPTURE, CAPTURED, UP], "10:06:00", "oom.inference", "serving"),
])
def test_the_same_cuda_oom_text_is_split_by_phase(tmp_path, before, t, category, phase):
    a = analyze_files(tmp_path, {"vllm.log": text_of(*HEAD, *before, W + OOM.format(t=t, g=0))})
    root = root_of(a)
    assert (root.sig, root.category, root.phase) == ("cuda-out-of-memory", category, phase)
    r = report_of(a)
    assert (r.root_cause.category, r.phase) == (category, phase)


def test_oom_while_serving_reports_the_load_at_failure(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        *HEAD, LOAD, KV, CAPTURE, CAPTURED, UP,
        STATS.format(t="10:05:00", g="388.0", run=12, wait=0, kv="41.7"),
        STATS.format(t="10:05:10", g="388.0", run=22, wait=3, kv="91.7"),
        W + OOM.format(t="10:06:00", g=0),
        STATS.format(t="10:06:10", g="0.0", run=0, wait=9, kv="0.0"))})   # after the failure: not used
    assert root_of(a).category == "oom.inference"
    load = report_of(a).load_at_failure
    assert (load["running"], load["waiting"], load["kv_cache_usage_pct"], load["evidence"]) == (22, 3, 91.7, "vllm.log:8")
    assert load["max_waiting_recent"] == 3


# ------------------------------------------------------------------------------------------
# what is not an incident, and what a quiet bundle can still hold
# ------------------------------------------------------------------------------------------
REJECTED = [
    "(APIServer pid=1) ERROR 08-11 10:04:30 [serving_chat.py:1] Error in preprocessing prompt inputs",
    "(APIServer pid=1) ERROR 08-11 10:04:30 [serving_chat.py:1] Traceback (most recent call last):",
    '(APIServer pid=1) ERROR 08-11 10:04:30 [serving_chat.py:1]   File "/app/chat_utils.py", line 12, in parse',
    "(APIServer pid=1) ERROR 08-11 10:04:30 [serving_chat.py:1]     return tmpl.render(messages)",
    "(APIServer pid=1) ERROR 08-11 10:04:30 [serving_chat.py:1] ValueError: unexpected role 'critic' in message 3",
]


def test_an_exception_the_service_survived_is_not_an_incident(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        *HEAD, LOAD, KV, CAPTURE, CAPTURED, UP, *REJECTED,
        STATS.format(t="10:05:00", g="350.0", run=2, wait=0, kv="1.7"))})
    assert a.decision.healthy
    assert report_of(a).exit_status == 0


def test_an_exception_after_the_last_tokens_is_an_incident(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        *HEAD, LOAD, KV, CAPTURE, CAPTURED, UP,
        STATS.format(t="10:04:20", g="350.0", run=2, wait=0, kv="1.7"), *REJECTED)})
    root = root_of(a)
    assert (root.category, root.line) == ("other", 12)


K3_LAUNCH = "vllm serve moonshotai/Kimi-K3 \\\n  --tensor-parallel-size 8 \\\n  --max-model-len 262144{extra}\n"
QUIET_LOG = text_of(
    "INFO 08-11 10:00:00 [__init__.py:239] Automatically detected platform cuda.",
    "(APIServer pid=1) INFO 08-11 10:04:00 [launcher.py:1] Application startup complete.",
    STATS.format(t="10:05:00", g="388.0", run=22, wait=3, kv="91.7"))


def test_quiet_k3_bundle_without_prefix_caching_is_a_config_incident(tmp_path):
    a = analyze_files(tmp_path, {"launch.sh": K3_LAUNCH.format(extra=""), "vllm.log": QUIET_LOG})
    root = root_of(a)
    assert (root.category, root.check, root.file, root.line) == ("config.prefix_caching_off", "prefix_caching_flag",
                                                                 "launch.sh", 1)
    r = report_of(a)
    assert (r.root_cause.confidence, r.exit_status) == ("medium", 1)
    assert any("--enable-prefix-caching" in step for step in r.root_cause.remediation)


def test_quiet_k3_bundle_with_prefix_caching_is_healthy(tmp_path):
    a = analyze_files(tmp_path, {"launch.sh": K3_LAUNCH.format(extra=" --enable-prefix-caching"),
                                 "vllm.log": QUIET_LOG})
    assert a.decision.healthy


def test_a_failing_quiet_check_does_not_replace_a_crash(tmp_path):
    a = analyze_files(tmp_path, {"launch.sh": K3_LAUNCH.format(extra=""), "vllm.log": text_of(
        *HEAD, LOAD, W + OOM.format(t="10:01:05", g=0))})
    assert root_of(a).category == "oom.load"


# ------------------------------------------------------------------------------------------
# a dead worker is named by its executor index or pid, not its global rank
# ------------------------------------------------------------------------------------------
def replica(dp: int, t: str = "10:00:00") -> list[str]:
    """One data-parallel replica of two workers (VllmWorker rank=0/1: the index in its engine)."""
    return [f"(VllmWorker rank={i} pid={600 + i}) INFO 08-11 {t} [parallel_state.py:1] rank {2 * dp + i} in world "
            f"size 4 is assigned as DP rank {dp}, PP rank 0, TP rank {i}, EP rank {2 * dp + i}" for i in (0, 1)]


@pytest.mark.parametrize("line, want", [
    ("(EngineCore_DP1 pid=256) ERROR 08-11 10:05:00 [multiproc_executor.py:149] Worker proc VllmWorker-0 died "
     "unexpectedly, shutting down executor.", 2),
    ("ERROR 08-11 10:05:00 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 601 died, exit code: -9", 3),
])
def test_a_dead_worker_symptom_takes_the_global_rank_of_the_worker_it_names(tmp_path, line, want):
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(*replica(0)),
                                 "node-b/vllm.log": text_of(*replica(1), line)})
    (dead,) = [f for f in a.decision.findings if f.sig == "worker-proc-died"]
    assert (dead.node, dead.rank) == ("node-b", want)


def stage(name: str, dp: int, pp: int, ranks: tuple[int, ...]) -> list[str]:
    """Workers of TP2 named `name` with their TP index; `ranks` their global ranks."""
    return [f"({name.format(i=i)} pid={700 + r}) INFO 08-11 10:00:00 [parallel_state.py:1] rank {r} in world size "
            f"8 is assigned as DP rank {dp}, PP rank {pp}, TP rank {i}, EP rank {r}" for i, r in enumerate(ranks)]


def test_a_dead_worker_named_by_its_executor_rank_is_that_rank_on_a_pipeline_stage_node(tmp_path):
    # vLLM names a worker process VllmWorker-<its rank in the executor>: on the second pipeline stage's node,
    # VllmWorker-3 is rank 3 (its TP index is 1)
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(*stage("Worker_PP0_TP{i}", 0, 0, (0, 1))),
                                 "node-b/vllm.log": text_of(*stage("Worker_PP1_TP{i}", 0, 1, (2, 3)),
                                     "ERROR 08-11 10:05:00 [multiproc_executor.py:271] Worker proc VllmWorker-3 died "
                                     "unexpectedly, shutting down executor.")})
    (dead,) = [f for f in a.decision.findings if f.sig == "worker-proc-died"]
    assert (dead.node, dead.rank) == ("node-b", 3)


@pytest.mark.parametrize("reporter, want", [("(EngineCore_DP1 pid=256) ", 3),   # replica 1's executor: its second
                                             ("", None)])                        # near miss: whose executor?
def test_a_dead_worker_executor_rank_on_a_node_of_several_replicas_is_its_replicas(tmp_path, reporter, want):
    # two data-parallel replicas on one node: VllmWorker-1 is rank 1 or rank 3; the engine core that reports it
    # says which replica's executor it is
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(*stage("Worker_PP0_TP{i}", 0, 0, (4, 5))),
                                 "node-b/vllm.log": text_of(
        *stage("Worker_DP0_TP{i}", 0, 0, (0, 1)), *stage("Worker_DP1_TP{i}", 1, 0, (2, 3)),
        f"{reporter}ERROR 08-11 10:05:00 [multiproc_executor.py:271] Worker proc VllmWorker-1 died unexpectedly, "
        "shutting down executor.")})
    (dead,) = [f for f in a.decision.findings if f.sig == "worker-proc-died"]
    assert dead.rank == want


def test_a_dead_worker_index_is_its_rank_when_no_worker_line_says_otherwise(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "(EngineCore_DP0 pid=256) ERROR 08-11 10:05:00 [multiproc_executor.py:149] Worker proc VllmWorker-3 died "
        "unexpectedly, shutting down executor.")})
    (dead,) = [f for f in a.decision.findings if f.sig == "worker-proc-died"]
    assert dead.rank == 3


# ------------------------------------------------------------------------------------------
# a line that names its cause; a cause that is the consequence of what came before it (`after`)
# ------------------------------------------------------------------------------------------
KXID = "2026-08-11T10:00:0{s}+00:00 {h} kernel: NVRM: Xid (PCI:0000:3b:00): {x}, pid=2211, name=python3, {m}"
XID149 = dict(x=149, m="NETIR_LINK_EVT Fatal error detected on link 14")
XID154 = dict(x=154, m="GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required) caused by previous "
                       "Xid 149")


def test_a_line_naming_its_cause_is_explained_by_that_earlier_finding_on_its_node(tmp_path):
    a = analyze_files(tmp_path, {"node-b/kern.log": text_of(KXID.format(s=5, h="gpu-b", **XID149),
                                                            KXID.format(s=7, h="gpu-b", **XID154))})
    root = root_of(a)
    assert root.fields.get("xid") == "149"
    (later,) = [f for f in a.decision.findings if f.fields.get("xid") == "154"]
    assert explained_by_root(a, later)


def test_a_line_naming_its_cause_is_not_explained_by_that_cause_on_another_node(tmp_path):
    a = analyze_files(tmp_path, {"node-a/kern.log": text_of(KXID.format(s=5, h="gpu-a", **XID149)),
                                 "node-b/kern.log": text_of(KXID.format(s=7, h="gpu-b", **XID154))})
    (later,) = [f for f in a.decision.findings if f.fields.get("xid") == "154"]
    assert later.explained_by is None


ABORT = "(Worker_TP{r} pid={p}) Fatal Python error: Aborted"


def test_an_abort_after_a_collective_timed_out_on_its_node_is_the_timeouts_symptom(tmp_path):
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(
        assigned(0, 8, 101), WATCHDOG.format(r=0, t="10:10:05"), ABORT.format(r=0, p=101))})
    (abort,) = [f for f in a.decision.findings if f.sig == "sigabrt-abort"]
    assert abort.role == "symptom"
    assert root_of(a).category == "nccl.timeout"


def test_an_abort_with_no_timeout_before_it_stays_a_cause(tmp_path):
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(
        assigned(0, 8, 101), "(Worker_TP0 pid=101) INFO 08-11 10:10:05 [core.py:1] step", ABORT.format(r=0, p=101)),
        "node-b/vllm.log": text_of(assigned(1, 8, 202), WATCHDOG.format(r=1, t="10:10:05"))})
    (abort,) = [f for f in a.decision.findings if f.sig == "sigabrt-abort"]
    assert abort.role == "cause"


XID13 = dict(x=13, m="Graphics SM Warp Exception on (GPC 1, TPC 0, SM 1): Out Of Range Address")
XID109 = dict(x=109, m="Ch 00000010, errorString CTX SWITCH TIMEOUT, Info 0x3c046")


def test_the_first_of_a_gpus_burst_of_xids_is_the_cause(tmp_path):
    # alone an Xid 13 is context (the application's fault); an Xid 109 of the same GPU right after makes it the cause
    a = analyze_files(tmp_path, {"node-b/kern.log": text_of(KXID.format(s=7, h="gpu-b", **XID13),
                                                            KXID.format(s=8, h="gpu-b", **XID109))})
    root = root_of(a)
    assert (root.fields.get("xid"), root.line) == ("13", 1)
    (later,) = [f for f in a.decision.findings if f.fields.get("xid") == "109"]
    assert later.role == "symptom" and explained_by_root(a, later)


def test_near_miss_xids_of_two_gpus_are_two_bursts(tmp_path):
    other_gpu = KXID.format(s=8, h="gpu-b", **XID109).replace("0000:3b:00", "0000:5e:00")
    a = analyze_files(tmp_path, {"node-b/kern.log": text_of(KXID.format(s=7, h="gpu-b", **XID13), other_gpu)})
    assert (root_of(a).fields.get("xid"), root_of(a).line) == ("109", 2)


PULL_SUMMARY = "      Reason:       ImagePullBackOff"
MANIFEST = ("  Warning  Failed   38m (x5 over 41m)  kubelet  Error: reading manifest v9.9 in docker.io/vllm/vllm-openai: "
            "manifest unknown")


def test_untimed_statements_of_one_failure_take_the_more_specific_one(tmp_path):
    # a status dump lists its summary (the container's state) before its events: no clock orders them
    a = analyze_files(tmp_path, {"describe-pod.txt": text_of("Name: vllm-0", "Node: gpu-w12/10.0.0.12",
                                                             "State: Waiting", PULL_SUMMARY, "Events:", MANIFEST)})
    assert (root_of(a).sig, root_of(a).line) == ("image-manifest-not-found", 6)
    # nor are the names of two files: the summary in the file that sorts first changes nothing
    b = analyze_files(tmp_path / "two", {"a-pods.txt": text_of("Node: gpu-w12/10.0.0.12", PULL_SUMMARY),
                                         "b-events.txt": text_of("Node: gpu-w12/10.0.0.12", MANIFEST)})
    assert (root_of(b).sig, root_of(b).file) == ("image-manifest-not-found", "b-events.txt")


def test_near_miss_untimed_failures_of_two_kinds_keep_the_files_order(tmp_path):
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    a = analyze_files(tmp_path, {"notes-run.log": text_of(oom, MANIFEST)})
    assert root_of(a).line == 1 and root_of(a).category.startswith("oom.")


# ------------------------------------------------------------------------------------------
# the stack a line without one raises: the same process's traceback right after it
# ------------------------------------------------------------------------------------------
def _shm_failure_then_traceback(pid_of_traceback: int, t_traceback: str) -> str:
    w1, wt = "(RayWorkerWrapper pid=423) ", f"(RayWorkerWrapper pid={pid_of_traceback}) "
    err = f"ERROR 08-11 {t_traceback} [worker_base.py:628] "
    return text_of(
        "INFO 08-11 10:00:00 [api_server.py:1] vLLM API server version 0.9.1",
        w1 + "INFO 08-11 10:00:05 [__init__.py:244] Automatically detected platform cuda.",
        w1 + "gpu-b:423:1588 [3] misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-Yz81Qa to "
             "9637892 bytes, error: No space left on device (28)",
        wt + err + "Error executing method 'init_device'. This might cause deadlock in distributed execution.",
        wt + err + "Traceback (most recent call last):",
        wt + err + '  File "/v/worker/worker_base.py", line 620, in execute_method',
        wt + err + "    return run_method(self, method, args, kwargs)",
        wt + err + '  File "/v/v1/worker/gpu_worker.py", line 146, in init_device',
        wt + err + "    init_worker_distributed_environment(self.vllm_config, self.rank,",
        wt + err + '  File "/v/distributed/parallel_state.py", line 1031, in init_model_parallel_group',
        wt + err + "    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(",
        wt + err + "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")


def test_a_line_without_a_stack_takes_the_phase_of_its_process_s_traceback_right_after(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": _shm_failure_then_traceback(423, "10:00:05")})
    root = root_of(a)
    assert (root.category, root.line, root.phase, root.phase_from_stack) == ("nccl.shm", 3, "distributed_init", True)


@pytest.mark.parametrize("stack_rank, phase", [(8, "kv_cache_init"),
                                                # near miss: another rank's stack says nothing of rank 8's wait
                                                (9, "model_load")])
def test_a_watchdog_timeout_takes_the_phase_of_the_collective_stack_its_rank_prints_after_it(tmp_path, stack_rank,
                                                                                              phase):
    """torch's watchdog names no pid: its line and the stack of the collective it caught are its rank's."""
    watchdog = "[rank{r}]:[E1124 09:37:47.1199{n} ProcessGroupNCCL.cpp:{loc}] "
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "INFO 11-24 09:27:00 [api_server.py:1] vLLM API server version 0.11.0",
        "(Worker pid=259) INFO 11-24 09:27:45 [gpu_model_runner.py:3318] Model loading took 71.2 GiB",
        watchdog.format(r=8, n=66, loc=685) + "[Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600059 milliseconds "
        "before timing out.",
        watchdog.format(r=stack_rank, n=58, loc=733) + "Stack trace of the failed collective: ",
        "#0 all_reduce from /torch/distributed/distributed_c10d.py:3041",
        "#1 profile_run from /vllm/v1/worker/gpu_model_runner.py:4312",
        "#2 determine_available_memory from /vllm/v1/worker/gpu_worker.py:281")})
    root = root_of(a)
    assert (root.category, root.line, root.phase) == ("nccl.timeout", 3, phase)


@pytest.mark.parametrize("pid, t", [(424, "10:00:05"),    # another process's traceback
                                    (423, "10:00:40")])   # its own, but half a minute later
def test_near_miss_another_process_s_or_a_later_traceback_gives_no_phase(tmp_path, pid, t):
    a = analyze_files(tmp_path, {"vllm.log": _shm_failure_then_traceback(pid, t)})
    root = root_of(a)
    assert (root.category, root.line, root.phase, root.phase_from_stack) == ("nccl.shm", 3, "startup", False)


# ------------------------------------------------------------------------------------------
# an untimed, more specific statement of the same fault
# ------------------------------------------------------------------------------------------
RAY_UNSCHEDULABLE = ("2025-09-16T02:10:59.518000000Z (EngineCore_0 pid=377) (autoscaler +0m34s) Warning: The following "
                     "resource request cannot be scheduled right now: {'GPU': 1.0}. This is likely due to all cluster "
                     "resources being claimed by actors. Consider creating fewer actors or adding more nodes to this Ray "
                     "cluster.")
DESCRIBE_EVENTS = text_of(
    "Name:         dsv31-0-1", "Status:       Pending", "Events:",
    "  Type     Reason            Age   From               Message",
    "  ----     ------            ----  ----               -------",
    "  Warning  FailedScheduling  31m   default-scheduler  0/5 nodes are available: 3 Insufficient nvidia.com/gpu, "
    "2 node(s) were unschedulable. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.")


def test_an_untimed_more_specific_statement_of_the_same_fault_is_the_root(tmp_path):
    a = analyze_files(tmp_path, {"leader/vllm.log": text_of(RAY_UNSCHEDULABLE),
                                 "worker/kubectl-describe-pod.txt": DESCRIBE_EVENTS})
    root = root_of(a)
    assert (root.category, root.file, root.line) == ("infra.unschedulable", "worker/kubectl-describe-pod.txt", 6)


def test_near_miss_an_untimed_statement_on_another_node_is_not_taken(tmp_path):
    a = analyze_files(tmp_path, {"gpu-h100-01/vllm.log": text_of(RAY_UNSCHEDULABLE),
                                 "gpu-h100-02/kubectl-describe-pod.txt": DESCRIBE_EVENTS})
    root = root_of(a)
    assert (root.category, root.file, root.line) == ("infra.unschedulable", "gpu-h100-01/vllm.log", 1)


def _events_listed_by_age(assigned_pod: str) -> str:
    return text_of(
        "LAST SEEN   TYPE      REASON             OBJECT                MESSAGE",
        "23m         Warning   FailedScheduling   pod/vllm-6d94b-fz7cn  0/5 nodes are available: 4 Insufficient "
        "nvidia.com/gpu.",
        f"22m         Normal    Scheduled          pod/{assigned_pod}  Successfully assigned llm/{assigned_pod} to "
        "gpu-h100-03")


def test_a_pod_that_waited_for_a_node_and_was_then_scheduled_was_not_unschedulable(tmp_path):
    # events listed by age have no time of their own: their order in the list is their order
    a = analyze_files(tmp_path, {"kubectl-get-events.txt": _events_listed_by_age("vllm-6d94b-fz7cn")})
    assert all(f.set_aside for f in a.decision.findings if f.category == "infra.unschedulable")


def test_near_miss_another_pod_scheduled_after_it_does_not_place_the_waiting_one(tmp_path):
    a = analyze_files(tmp_path, {"kubectl-get-events.txt": _events_listed_by_age("vllm-6d94b-q9l4t")})
    assert root_of(a).category == "infra.unschedulable"


@pytest.mark.parametrize("pulled_for, survived", [("k3-head-7kq2n", True),
                                                  ("k3-head-q9l4t", False)])   # near miss: another pod's pull
def test_a_pod_whose_image_pull_failed_and_was_then_pulled_survived_the_failure(tmp_path, pulled_for, survived):
    events = text_of(
        "LAST SEEN   TYPE      REASON    OBJECT              MESSAGE",
        "51m         Warning   Failed    pod/k3-head-7kq2n   Error: ErrImagePull",
        "51m         Normal    BackOff   pod/k3-head-7kq2n   Back-off pulling image \"vllm/vllm-openai:kimi-k3\"",
        f"49m         Normal    Pulled    pod/{pulled_for}   Successfully pulled image \"vllm/vllm-openai:kimi-k3\" in "
        "2m0.91s (2m12.443s including waiting)")
    a = analyze_files(tmp_path, {"kubectl-get-events.txt": events})
    pulls = [f for f in a.decision.findings if f.sig == "k8s-image-pull-backoff"]
    assert pulls and all(bool(f.set_aside) is survived for f in pulls)


@pytest.mark.parametrize("ready_node, survived", [("gpu-b", True),    # its node came back: the pod's copy of the loss too
                                                   ("gpu-c", False)])  # near miss: another node came back
def test_a_pods_word_of_its_node_lost_is_survived_when_that_node_turned_ready_again(tmp_path, ready_node, survived):
    pods = text_of("NAME     READY   STATUS    RESTARTS   AGE   IP           NODE",
                   "k3-0-1   1/1     Running   0          50m   10.40.9.18   gpu-b")
    events = text_of("LAST SEEN   TYPE      REASON         OBJECT           MESSAGE",
                     "11m         Warning   NodeNotReady   pod/k3-0-1       Node is not ready",
                     f"10m         Normal    NodeReady      node/{ready_node}   Node {ready_node} status is now: "
                     "NodeReady")
    a = analyze_files(tmp_path, {"kubectl-get-pods.txt": pods, "kubectl-get-events.txt": events})
    lost = [f for f in a.decision.findings if f.sig == "k8s-node-notready"]
    assert lost and all(bool(f.set_aside) is survived for f in lost)


@pytest.mark.parametrize("claim_age, line", [("9m31s", 4),    # the same moment: the row that names the node
                                              ("20m", 3)])     # near miss: the claim's row came first
def test_of_two_like_statements_in_one_moment_the_one_that_names_its_node_is_the_root(tmp_path, claim_age, line):
    rows = ["NAMESPACE   LAST SEEN   TYPE      REASON            OBJECT                                           MESSAGE",
            "default     58m         Normal    DisruptionBlocked node/gpu-n01                                     Pod "
            "has \"karpenter.sh/do-not-disrupt\" annotation (Pod=inference/kimi-k3-0)",
            f"default     {claim_age:<11} Warning   SpotInterrupted   nodeclaim/gpu-spot-9fz4d                         Spot "
            "interruption warning was triggered",
            "default     9m31s       Warning   SpotInterrupted   node/gpu-spot-n07                                Spot "
            "interruption warning was triggered"]
    root = root_of(analyze_files(tmp_path, {"kubectl-get-events.txt": text_of(*rows)}))
    assert (root.category, root.line) == ("infra.node_lost", line)


# ------------------------------------------------------------------------------------------
# a vanished worker whose node's loss was stated before it
# ------------------------------------------------------------------------------------------
NODE_ID = "a09d3e6b2c7f41e85d0b9a3c6e2f7d1b"


def _node_lost(marked_at: str) -> dict[str, str]:
    return {
        "launch.txt": "# gpu-b12: ray start --address=10.66.0.11:6379 --node-ip-address=10.66.0.12\n",
        "gpu-a11/gcs_server.out": text_of(
            f"[2025-11-20 {marked_at},902 E 1823 1823] (gcs_server) gcs_node_manager.cc:375: The node with node id: "
            f"{NODE_ID} and address: 10.66.0.12 and node name: 10.66.0.12 has been marked dead because the detector "
            "has missed too many heartbeats from it.",
            f"[2025-11-20 16:47:31,905 I 1823 1823] (gcs_server) gcs_actor_manager.cc:1102: Actor is failed 3f8b1c0e77d2 "
            f"on worker 000000 at node {NODE_ID}, need_reschedule = false, death context type = ActorDiedErrorContext"),
        "gpu-a11/vllm.log": text_of(
            "(EngineCore_DP0 pid=28210) ERROR 11-20 16:47:33 [core.py:843] ray.exceptions.ActorDiedError: The actor "
            "died unexpectedly before finishing this task.",
            "(EngineCore_DP0 pid=28210) ERROR 11-20 16:47:33 [core.py:843] The actor is dead because its node has "
            "died.")}  # (no node id: the driver's own node, not the one the GCS saw go)


def test_a_worker_gone_after_its_node_was_marked_dead_is_the_node_s_loss(tmp_path):
    root = root_of(analyze_files(tmp_path, _node_lost("16:47:31")))
    assert (root.category, root.file, root.line, root.node) == ("infra.node_lost", "gpu-a11/gcs_server.out", 1,
                                                                "gpu-b12")


def test_near_miss_a_node_marked_dead_after_the_worker_went_does_not_account_for_it(tmp_path):
    root = root_of(analyze_files(tmp_path, _node_lost("16:49:31")))
    assert root.category == "proc.killed"


@pytest.mark.parametrize("died_with_it, root", [(True, ("infra.node_lost", "gpu-a11/gcs_server.out", "gpu-b12")),
                                                 # near miss: no actor died with that node: the restart's wait is
                                                 # what failed
                                                 (False, ("infra.unschedulable", "gpu-a11/vllm.log", "gpu-a11"))])
def test_a_node_ray_marked_dead_that_actors_died_with_is_the_cause_before_a_later_one(tmp_path, died_with_it, root):
    """Ray marks the worker node dead, the deployment's actors die with it, and the restart waits for GPUs the lost
    node held: the loss is the cause, stated first by the GCS, not the restart's unschedulable request."""
    files = _node_lost("16:47:31")
    waited = ("(EngineCore_DP0 pid=29001) (autoscaler +5m2s) Warning: The following resource request cannot be "
              "scheduled right now: {'GPU': 1.0}. This is likely due to all cluster resources being claimed by actors.")
    died = f"(EngineCore_DP0 pid=28210) The actor died because its node has died. Node Id: {NODE_ID}"
    files["gpu-a11/vllm.log"] += text_of(*([died] if died_with_it else []),
                                         "(APIServer pid=29000) INFO 11-20 16:50:02 [api_server.py:1] vLLM API "
                                         "server version 0.11.0", waited.replace("(EngineCore", "2025-11-20 "
                                         "16:52:40,118\tWARNING (EngineCore"))
    got = root_of(analyze_files(tmp_path, files))
    assert (got.category, got.file, got.node) == root


@pytest.mark.parametrize("t_app, root_file", [("10:00:07", "node-b/kern.log"),   # the same second: the kernel's
                                              ("10:00:05", "node-a/vllm.log")])  # near miss: the app's is earlier
def test_in_the_same_second_the_kernel_s_statement_of_a_fault_comes_first(tmp_path, t_app, root_file):
    ecc = f"ERROR 08-11 {t_app} [core.py:1] RuntimeError: CUDA error: uncorrectable ECC error encountered"
    xid48 = "NVRM: Xid (PCI:0000:3a:00): 48, pid=2214863, name=pt_main_thread, An uncorrectable double bit error (DBE)"
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(ecc),
                                 "node-b/kern.log": f"2026-08-11T10:00:07+00:00 gpu-b kernel: {xid48}\n"})
    assert root_of(a).file == root_file


@pytest.mark.parametrize("copy_at, root_file", [("13:51:03", "gpu-b/kern.log"),   # the same second: the finer clock
                                                 ("13:51:01", "ops/dmesg-T.txt")])   # near miss: seconds earlier
def test_in_the_same_second_a_statement_stamped_to_the_millisecond_comes_before_one_in_whole_seconds(tmp_path, copy_at,
                                                                                                    root_file):
    """The operator's `dmesg -T` copy of the kernel's line is stamped in whole seconds: 13:51:03 stands for any
    moment of that second, and the journal's 13:51:03.412 is the same line, timed."""
    down = "mlx5_core 0000:9a:00.0 mlx5_5: Port: 1 Link DOWN"
    a = analyze_files(tmp_path, {"gpu-b/kern.log": f"2026-12-05T13:51:03.412000+00:00 gpu-b kernel: {down}\n",
                                 "ops/dmesg-T.txt": f"[Sat Dec  5 {copy_at} 2026] {down}\n"})
    assert root_of(a).file == root_file


HEALTH_FATAL = "Oct 28 14:41:05 pd-p05 kernel: mlx5_core 0000:5c:00.0: poll_health:835:(pid 0): Fatal error 1 detected"
RETRY_EXCEEDED = ("(Worker_TP2 pid=257) ERROR 10-28 14:41:08 [nixl_connector.py:1] UCX error: Transport retry count "
                  "exceeded on mlx5_2:1/RoCE (synd 0x15 vend 0x81 hw_synd 0/0)")


@pytest.mark.parametrize("kernel, root_file", [
    ([HEALTH_FATAL], "pd-p05/kern.log"),                                            # it never came back
    ([HEALTH_FATAL.replace("poll_health:835:(pid 0): Fatal error 1 detected", "mlx5_2: Port: 1 Link DOWN"),
      "Oct 28 14:41:06 pd-p05 kernel: mlx5_core 0000:5c:00.0 mlx5_2: Port: 1 Link ACTIVE"], "pd-d09/vllm.log"),
])   # near miss: the link came back before the peer failed
def test_a_device_fault_that_never_recovers_is_not_survived_when_a_peer_fails_the_same_way(tmp_path, kernel, root_file):
    """The prefill's adapter fails for good while its process prefills on; the decode reading through it fails."""
    serving = "(APIServer pid=1) INFO 10-28 14:4{m}:12 [loggers.py:1] Engine 000: Avg prompt throughput: 4000.0 " \
              "tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs"
    ready = "(APIServer pid=1) INFO 10-28 14:30:00 [launcher.py:1] Application startup complete."
    a = analyze_files(tmp_path, {
        "pd-p05/vllm.log": text_of(ready, serving.format(m=0), serving.format(m=1), serving.format(m=2)),
        "pd-p05/kern.log": text_of(*kernel),
        "pd-d09/vllm.log": text_of(ready, serving.format(m=0), RETRY_EXCEEDED)})
    assert root_of(a).file == root_file


@pytest.mark.parametrize("again, root_line", [("14:41:16", 1),    # down again 10 s after it came back: one flapping
                                               ("14:45:06", 3)])   # near miss: minutes later: the first survived
def test_a_link_that_came_back_and_went_down_again_within_a_minute_is_one_failure(tmp_path, again, root_line):
    down = "Oct 28 {t} pd-p05 kernel: mlx5_core 0000:5c:00.0 mlx5_2: Port: 1 Link DOWN"
    serving = "(APIServer pid=1) INFO 10-28 14:4{m}:12 [loggers.py:1] Engine 000: Avg prompt throughput: 4000.0 " \
              "tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs"
    ready = "(APIServer pid=1) INFO 10-28 14:30:00 [launcher.py:1] Application startup complete."
    a = analyze_files(tmp_path, {
        "pd-p05/vllm.log": text_of(ready, serving.format(m=0), serving.format(m=1)),
        "pd-p05/kern.log": text_of(down.format(t="14:41:05"),
                                   "Oct 28 14:41:06 pd-p05 kernel: mlx5_core 0000:5c:00.0 mlx5_2: Port: 1 Link ACTIVE",
                                   down.format(t=again)),
        "pd-d09/vllm.log": text_of(ready, serving.format(m=0), RETRY_EXCEEDED.replace("14:41:08", again))})
    assert (root_of(a).file, root_of(a).line) == ("pd-p05/kern.log", root_line)


@pytest.mark.parametrize("peer, node", [("10.0.7.12", "gpu-b1"),   # the node its peer's errors name: the one it took
                                        ("10.0.7.13", "gpu-a1")])  # near miss: they name no node of the tie
def test_one_power_loss_every_node_logged_at_once_is_the_cause_on_the_node_its_peers_lost(tmp_path, peer, node):
    sel = "   9 | 08/11/2026 | 10:05:00 | Power Supply PS1 Status | Power Supply AC lost | Asserted\n"
    before = STATS.format(t="10:04:50", g="350.0", run=2, wait=0, kv="1.7")
    lost = (f"gpu-a1:3310:3391 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {peer}<52113> "
            "with status=12 opcode=0 len=0 vendor err 129 (Recv)")
    root = root_of(analyze_files(tmp_path, {
        "gpu-a1/vllm.log": text_of(*HEAD, UP, before), "gpu-a1/ipmitool-sel-elist.txt": sel,
        "gpu-a1/nccl.log": f"[2026-08-11 10:05:31] {lost}\n", "gpu-b1/ipmitool-sel-elist.txt": sel,
        "gpu-b1/vllm.log": text_of(*HEAD, UP, before), "hosts.txt": "10.0.7.11 gpu-a1\n10.0.7.12 gpu-b1\n"}))
    assert (root.category, root.node, root.file) == ("infra.node_lost", node, f"{node}/ipmitool-sel-elist.txt")


@pytest.mark.parametrize("back, node", [(("gpu-a1",), "gpu-b1"),   # the one whose port alone stayed down
                                        ((), "gpu-a1")])           # near miss: none came back: the first stands
def test_one_switch_reboot_every_node_saw_is_the_cause_on_the_node_whose_port_stayed_down(tmp_path, back, node):
    down = "[Tue Mar 10 10:41:51 2026] mlx5_core 0000:b3:00.0 mlx5_5: Port: 1 Link DOWN"
    up = "[Tue Mar 10 10:42:40 2026] mlx5_core 0000:b3:00.0 mlx5_5: Port: 1 Link ACTIVE"   # (after the errors)
    fail = ("[2026-03-10 10:42:25] {n}:73514:73675 [5] transport/net_ib.cc:2331 NCCL WARN NET/IB: Got completion from "
            "peer 10.44.12.3<47219> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_5")
    root = root_of(analyze_files(tmp_path, {f"{n}/dmesg.txt": text_of(down, *([up] if n in back else []))
                                            for n in ("gpu-a1", "gpu-b1")} | {
        f"{n}/nccl.log": text_of(fail.format(n=n)) for n in ("gpu-a1", "gpu-b1")}))
    assert (root.sig, root.node) == ("mlx5-port-down", node)


@pytest.mark.parametrize("hca, rank", [("mlx5_5", 13),    # NCCL's error through the port that went down: its rank
                                       ("mlx5_2", None)])  # near miss: another adapter's user
def test_a_port_down_takes_the_rank_of_the_process_whose_error_names_its_adapter(tmp_path, hca, rank):
    nccl = ("h100-n04:73514:73675 [5] transport/net_ib.cc:2331 NCCL WARN NET/IB: Got completion from peer "
            f"10.44.12.3<47219> with status=12 opcode=0 len=0 vendor err 129 (Send) hca {hca}")
    a = analyze_files(tmp_path, {
        "h100-n04/dmesg.txt": "[Tue Mar 10 10:41:51 2026] mlx5_core 0000:b3:00.0 mlx5_5: Port: 1 Link DOWN\n",
        "h100-n04/nccl.log": text_of("h100-n04:73514:73514 [5] NCCL INFO comm 0x5581 rank 13 nranks 16 cudaDev 5 "
                                     "nvmlDev 5 busId b9000 commId 0x1 - Init COMPLETE",
                                     f"[2026-03-10 10:42:25] {nccl}")})
    assert (root_of(a).sig, root_of(a).rank) == ("mlx5-port-down", rank)



@pytest.mark.parametrize("ranks, rank", [((13,), 13),       # one rank's transfers fail after its adapter's module did
                                         ((13, 14), None)])  # near miss: two ranks fail alike: no one's
def test_a_device_fault_naming_no_adapter_takes_the_rank_that_alone_fails_the_same_way_after_it(tmp_path, ranks, rank):
    module = ("[Tue Mar 10 10:41:51 2026] mlx5_core 0000:c1:00.0: mlx5_port_module_event:1131:(pid 0): Port module "
              "event[error]: module 0, Cable error, High Temperature")
    inits = [f"h100-n04:7351{r}:7351{r} [{r - 8}] NCCL INFO comm 0x5581 rank {r} nranks 16 cudaDev {r - 8} nvmlDev "
             f"{r - 8} busId b9000 commId 0x1 - Init COMPLETE" for r in ranks]
    fails = [f"[2026-03-10 10:42:0{i}] h100-n04:7351{r}:73675 [{r - 8}] transport/net_ib.cc:2331 NCCL WARN NET/IB: Got "
             "completion from peer 10.44.12.3<47219> with status=12 opcode=0 len=0 vendor err 129 (Send)"
             for i, r in enumerate(ranks)]
    a = analyze_files(tmp_path, {"h100-n04/dmesg.txt": module + "\n", "h100-n04/nccl.log": text_of(*inits, *fails)})
    assert (root_of(a).sig, root_of(a).rank) == ("mlx5-port-module-cable-error", rank)


@pytest.mark.parametrize("own, rank", [(True, 13),     # the adapter's event every process reports, then one's transfers
                                       (False, None)])  # near miss: only the event every process reports: no rank's
def test_an_adapter_event_every_process_reports_at_once_lends_no_rank_to_a_fault_of_that_adapter(tmp_path, own, rank):
    module = ("[Tue Mar 10 10:41:51 2026] mlx5_core 0000:c1:00.0: mlx5_port_module_event:1131:(pid 0): Port module "
              "event[error]: module 3, Cable error, High Temperature")
    inits = [f"h100-n04:7351{r - 8}:7351{r - 8} [{r - 8}] NCCL INFO comm 0x5581 rank {r} nranks 16 cudaDev {r - 8} "
             f"nvmlDev {r - 8} busId b9000 commId 0x1 - Init COMPLETE" for r in range(8, 16)]
    events = [f"[2026-03-10 10:41:51] h100-n04:7351{r - 8}:73675 [{r - 8}] transport/net_ib.cc:199 NCCL WARN NET/IB : "
              "mlx5_3:1 Got async event : port error" for r in range(8, 16)]
    fails = ["[2026-03-10 10:42:05] h100-n04:73515:73675 [5] transport/net_ib.cc:2331 NCCL WARN NET/IB: Got completion "
             "from peer 10.44.12.3<47219> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_3"] if own else []
    a = analyze_files(tmp_path, {"h100-n04/dmesg.txt": module + "\n",
                                 "h100-n04/nccl.log": text_of(*inits, *events, *fails)})
    assert (root_of(a).sig, root_of(a).rank) == ("mlx5-port-module-cable-error", rank)


NVSHMEM_IBGDA = ("2026-12-08T10:41:17+0000 ct06 k3-serve[61822]: /tmp/nvshmem/src/host/transport/transport.cpp:"
                 "nvshmemi_transport_init:282: init failed for transport: IBGDA")
NVSHMEM_EXIT = ("2026-12-08T10:41:17+0000 ct06 k3-serve[61822]: /tmp/nvshmem/src/host/init/init.cu:"
                "nvshmemi_check_state_and_init:1200: nvshmem initialization failed, exiting")


@pytest.mark.parametrize("lines, first", [
    ([NVSHMEM_IBGDA, NVSHMEM_EXIT], 1),    # the transport that failed, then NVSHMEM's generic exit: the first names it
    ([NVSHMEM_EXIT], 1),                  # near miss: the generic exit alone is the statement
])
def test_nvshmems_word_of_the_transport_that_failed_states_its_exit(tmp_path, lines, first):
    a = analyze_files(tmp_path, {"ct06/journal.log": text_of(*lines)})
    assert (root_of(a).category, root_of(a).line) == ("config.all2all_backend", first)
    assert root_of(a).sig == ("nvshmem-ibgda-init-failed" if len(lines) == 2 else "nvshmem-no-rdma-transport")

# ------------------------------------------------------------------------------------------
# a guess (a worker gone, nothing says why) yields to a failing check that explains what the logs show
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version_b, root", [("2.26.2", "nccl.version_mismatch"),   # node-b runs another NCCL
                                             ("2.27.3", "proc.killed")])            # near miss: the same build
def test_a_failing_check_that_explains_the_symptoms_beats_a_vanished_worker_guess(tmp_path, version_b, root):
    using = "INFO 08-11 10:00:01 [pynccl.py:70] vLLM is using nccl=={}"
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(assigned(0, 2, 101), "(Worker_TP0 pid=101) " + using.format("2.27.3"),
                                   WATCHDOG.format(r=0, t="10:10:05"),
                                   "ERROR 08-11 10:10:06 [multiproc_executor.py:1] Worker proc VllmWorker-0 died "
                                   "unexpectedly, shutting down executor."),
        "node-b/vllm.log": text_of(assigned(1, 2, 202), "(Worker_TP1 pid=202) " + using.format(version_b),
                                   WATCHDOG.format(r=1, t="10:10:05"))})
    assert root_of(a).category == root


@pytest.mark.parametrize("image_b, category", [("v0.26.2", "nccl.version_mismatch"),   # the prefill's pod runs another
                                                ("v0.27.1", "other")])                    # near miss: the same image
def test_a_pod_listing_whose_images_differ_names_the_odd_pod_s_node(tmp_path, image_b, category):
    table = ("NAME          NODE        IMAGE\n"
             "decode-7c9f   h200-b-05   vllm/vllm-openai:v0.27.1\n"
             f"prefill-0     h200-a-01   vllm/vllm-openai:{image_b}\n")
    a = analyze_files(tmp_path, {
        "kubectl-get.txt": "$ kubectl get pods -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,"
                           "IMAGE:.spec.containers[0].image\n" + table,
        "decode.log": text_of("(APIServer pid=1) INFO 11-11 13:05:16 [api_server.py:1] vLLM API server version 0.27.1",
                              "(EngineCore pid=122) ERROR 11-11 13:08:52 [nixl_connector.py:1011] RuntimeError: NIXL "
                              "compatibility hash mismatch. Local: 5f772c82, Remote: c7d3ab32")})
    root = root_of(a)
    assert root.category == category
    if category != "other":   # the cause is the listing's row, on the node of the pod it names
        assert (root.file, root.line, root.node) == ("kubectl-get.txt", 4, "h200-a-01")


# ------------------------------------------------------------------------------------------
# a collective's symptom is explained by a cause on any node
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("t_timeout, root", [("10:10:05", "gpu.xid"),        # the hang the Xid started, 10 min on
                                             ("12:10:05", "nccl.timeout")])  # near miss: two hours later
def test_an_xid_on_one_node_explains_the_watchdog_timeouts_of_another(tmp_path, t_timeout, root):
    stats = ("(APIServer pid=1) INFO 08-11 10:00:20 [loggers.py:1] Engine 000: Avg prompt throughput: 1904.2 tokens/s, "
             "Avg generation throughput: 3.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%")
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(assigned(0, 2, 101), stats, WATCHDOG.format(r=0, t=t_timeout)),
        "node-b/kern.log": f"2026-08-11T10:00:00+00:00 gpu-b kernel: {XID79.replace('79,', '94,')}\n"})
    assert root_of(a).category == root


# ------------------------------------------------------------------------------------------
# the GPUDirect module NVSHMEM needs: a cause when the run fails without it, context when it went on
# ------------------------------------------------------------------------------------------
NVSHMEM = "/workspace/nvshmem_src/src/modules/transport/{t}/{t}.cpp:nvshmemt_init:3626: "
NO_PEERMEM = [W + "INFO 08-11 10:01:00 [all2all.py:388] DeepEP v2 buffer: num_nvl_bytes=1073741824",
              NVSHMEM.format(t="ibgda") + "neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.",
              "/workspace/nvshmem_src/src/host/transport/transport.cpp:nvshmemi_transport_init:275: init failed for "
              "transport: IBGDA"]


def test_nvshmem_without_peer_memory_module_is_the_rdma_cause(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        *HEAD, LOAD, *NO_PEERMEM,
        "/workspace/nvshmem_src/src/host/transport/transport.cpp:nvshmemi_transport_init:287: Unable to initialize "
        "any transports. returning error.")})
    root = root_of(a)
    assert (root.sig, root.category, root.line) == ("gpudirect-peer-memory-module-missing", "nccl.ib_transport", 4)


def test_nvshmem_without_peer_memory_module_that_went_on_to_serve_is_healthy(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        *HEAD, LOAD, *NO_PEERMEM, KV, CAPTURE, CAPTURED, UP,
        STATS.format(t="10:05:00", g="350.0", run=2, wait=0, kv="1.7"))})
    assert a.decision.healthy


# ------------------------------------------------------------------------------------------
# a connection error naming a peer whose worker was already gone: the peer died, the link did not fail
# ------------------------------------------------------------------------------------------
def _peer_worker_gone(t_gone: str, t_ib: str) -> dict[str, str]:
    """Two nodes' docker logs (-t): rank 5 on gpu-a sees an IB error from gpu-b's address at t_ib; gpu-b's
    executor reports its rank-13 worker gone, with nothing said about why, at t_gone."""
    def at(t: str, line: str) -> str:
        return f"2026-08-11T{t}.000000000Z {line}"
    return {
        "gpu-a/docker-logs.txt": text_of(
            at("10:00:00", assigned(5, 16, 251)),
            at("10:00:01", "gpu-a:251:251 [5] NCCL INFO Bootstrap : Using bond0:10.0.0.1<0>"),
            at(t_ib, "gpu-a:251:1382 [5] transport/net_ib.cc:2337 NCCL WARN NET/IB : Got completion from peer "
                     "10.0.0.2<47013> with status=12 opcode=0 len=0 vendor err 129 (Send)")),
        "gpu-b/docker-logs.txt": text_of(
            at("10:00:00", "(Worker_PP1_TP5_EP5 pid=113) INFO 08-11 10:00:00 [parallel_state.py:1] rank 13 in world "
                           "size 16 is assigned as DP rank 0, PP rank 1, TP rank 5, EP rank 5"),
            at("10:00:01", "gpu-b:113:113 [5] NCCL INFO Bootstrap : Using bond0:10.0.0.2<0>"),
            at(t_gone, f"ERROR 08-11 {t_gone} [multiproc_executor.py:284] Worker proc Worker_PP1_TP5_EP5 died "
                       "unexpectedly, shutting down executor.")),
    }


def test_a_connection_error_after_its_peer_lost_a_worker_is_not_the_cause(tmp_path):
    a = analyze_files(tmp_path, _peer_worker_gone(t_gone="10:27:29", t_ib="10:27:33"))
    root = root_of(a)
    assert (root.category, root.node, root.rank, root.line) == ("proc.killed", "gpu-b", 13, 3)
    assert "its peer gpu-b had lost a worker" in finding(a, "nccl-ib-completion-error").set_aside


def test_a_connection_error_before_its_peer_lost_a_worker_is_the_cause(tmp_path):
    a = analyze_files(tmp_path, _peer_worker_gone(t_gone="10:27:40", t_ib="10:27:33"))
    root = root_of(a)
    assert (root.category, root.node, root.rank, root.line) == ("nccl.ib_transport", "gpu-a", 5, 3)


# ------------------------------------------------------------------------------------------
# a fault of the node's GPU stack that the deployment worked on after (another program's, on the same node)
# ------------------------------------------------------------------------------------------
NO_DEVICE = ('W0811 10:00:30.230349 1 pinned_memory_manager.cc:273] "Unable to allocate pinned system memory, pinned '
             'memory pool will not be available: no CUDA-capable device is detected"')


def test_a_gpu_stack_fault_the_deployment_worked_on_after_is_survived(tmp_path):
    a = analyze_files(tmp_path, {"other-program.log": text_of(NO_DEVICE), "vllm.log": text_of(
        *HEAD, LOAD, KV, CAPTURE, CAPTURED, UP, STATS.format(t="10:05:00", g="350.0", run=2, wait=0, kv="1.7"))})
    assert a.decision.healthy
    (f,) = [f for f in a.decision.findings if f.category == "env.no_gpu_visible"]
    assert f.set_aside.startswith("survived: its node went on working")


def test_a_gpu_stack_fault_the_deployment_did_not_work_on_after_is_the_cause(tmp_path):
    a = analyze_files(tmp_path, {"other-program.log": text_of(NO_DEVICE), "vllm.log": text_of(
        *HEAD, LOAD.replace("10:01:00", "10:00:20"),
        W + "ERROR 08-11 10:00:31 [core.py:1] EngineCore failed to start.")})
    assert (root_of(a).category, root_of(a).file) == ("env.no_gpu_visible", "other-program.log")


SXID = ("Aug 11 09:30:00 gpu-b kernel: nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 33 "
        "LTSSM Fault Up")


@pytest.mark.parametrize("b_loads, root", [(False, "gpu-b/kern.log"),   # gpu-b never got past its GPUs' init
                                           (True, None)])              # near miss: it loaded weights after the fault
def test_a_device_fault_before_the_deployment_began_is_survived_only_by_its_own_nodes_gpus_at_work(tmp_path,
                                                                                                   b_loads, root):
    """A fabric fault at boot, half an hour before the start: the other node's start going on proves nothing of
    this node's GPUs (they are not its), its own weights loaded onto them do."""
    a_log = [*HEAD, LOAD, KV, CAPTURE, CAPTURED, UP] if b_loads else [*HEAD, LOAD]
    b_log = [W.replace("101", "201") + "INFO 08-11 10:00:00 [gpu_worker.py:1] world_size=2 rank=1 local_rank=0",
             W.replace("101", "201") + ("INFO 08-11 10:01:00 [gpu_model_runner.py:1] Starting to load model /models/m"
                                        if b_loads else "ERROR 08-11 10:00:05 [multiproc_executor.py:1] RuntimeError: "
                                        "CUDA error: system not yet initialized (802)")]
    a = analyze_files(tmp_path, {"gpu-a/vllm.log": text_of(*a_log), "gpu-b/vllm.log": text_of(*b_log),
                                 "gpu-b/kern.log": text_of(SXID)})
    assert (root_of(a).file if root else None) == root
    (f,) = [f for f in a.decision.findings if f.file == "gpu-b/kern.log"]
    assert (f.set_aside is not None) == b_loads


@pytest.mark.parametrize("t_lost, phase", [("10:01:30", "model_load"),   # the node went while the model loaded
                                           ("10:05:30", "serving")])     # near miss: after it was ready
def test_a_node_lost_takes_the_phase_its_logs_reached(tmp_path, t_lost, phase):
    lost = f"Aug 11 {t_lost} gpu-b kubelet[2841]: I0811 {t_lost}.000000 2841 nodeshutdown_manager_linux.go:1] " \
           "\"Shutdown manager detected new shutdown event, isNodeShuttingDownNow\" event=true"
    # (the server's log ends where the node went: a node lost while the model loaded never became ready after)
    lines = [*HEAD, LOAD] if phase == "model_load" else \
        [*HEAD, LOAD, KV, CAPTURE, CAPTURED, UP, STATS.format(t="10:05:00", g="350.0", run=2, wait=0, kv="1.7")]
    a = analyze_files(tmp_path, {"gpu-b/kubelet-journal.txt": text_of(lost), "gpu-b/vllm.log": text_of(*lines)})
    assert (root_of(a).category, root_of(a).phase) == ("infra.node_lost", phase)


@pytest.mark.parametrize("t_died, rank", [("10:20:01", 1),      # the worker reported dead after the dump
                                          ("10:00:03", None)])  # near miss: before it (the dump explains nothing)
def test_a_crash_dump_explains_the_worker_reported_dead_after_it_and_takes_its_rank(tmp_path, t_died, rank):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        assigned(0, 2, 101), assigned(1, 2, 102),
        "(EngineCore_DP0 pid=77) INFO 08-11 10:00:05 [core.py:1] still running",
        "Fatal Python error: Segmentation fault", "", "Thread 0x00007f2d0b7fe6c0 (most recent call first):",
        '  File "/usr/lib/python3.12/threading.py", line 359 in wait',
        STATS.format(t="10:20:00", g="350.0", run=2, wait=0, kv="1.7"),
        f"(EngineCore_DP0 pid=77) ERROR 08-11 {t_died} [multiproc_executor.py:1] Worker proc VllmWorker-1 died "
        "unexpectedly, shutting down executor.")})
    segfault = finding(a, "python-fatal-segfault")
    assert (segfault.rank, segfault.set_aside is None) == (rank, rank is not None)


@pytest.mark.parametrize("t_ib, root_category", [("16:47:45", "infra.node_lost"),    # the node was reported lost
                                                 ("16:47:20", "nccl.ib_transport")])  # near miss: the link failed first
def test_a_connection_error_to_an_unmapped_peer_after_a_node_was_reported_lost_is_not_the_cause(tmp_path, t_ib,
                                                                                               root_category):
    files = _node_lost("16:47:31")
    files["gpu-a11/vllm.log"] = text_of(
        f"(RayWorkerWrapper pid=3310) [2025-11-20 {t_ib}] gpu-a11:3310:3391 [5] transport/net_ib.cc:1696 NCCL WARN "
        "NET/IB : Got completion from peer 192.168.62.134<52113> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
        *files["gpu-a11/vllm.log"].splitlines())
    root = root_of(analyze_files(tmp_path, files))
    assert root.category == root_category



def _late_notready(peer: str, said_at: str) -> dict[str, str]:
    """A head's NCCL send to its peer fails at 09:53:15 (status=12) and the engine dies; the node controller says
    gpu-b7 (10.0.0.7) is NotReady at `said_at`."""
    head = text_of(
        "(APIServer pid=1) INFO 09-14 08:30:00 [api_server.py:1] vLLM API server version 0.27.2",
        "(APIServer pid=1) INFO 09-14 08:40:00 [launcher.py:37] Application startup complete.",
        f"[2026-09-14 09:53:15] gpu-a1:311:402 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from "
        f"peer {peer}<49255> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
        "(EngineCore_DP0 pid=211) ERROR 09-14 09:53:17 [core.py:1] EngineCore encountered a fatal error.",
        "(APIServer pid=1) ERROR 09-14 09:53:17 [async_llm.py:1] vllm.v1.engine.exceptions.EngineDeadError: EngineCore "
        "encountered an issue. See stack trace (above) for the root cause.")
    events = text_of(
        "LAST SEEN              TYPE     REASON         OBJECT             MESSAGE",
        f"2026-09-14T{said_at}Z   Normal   NodeNotReady   node/gpu-b7        Node gpu-b7 status is now: NodeNotReady")
    return {"gpu-a1/vllm.log": head, "k8s/events.txt": events, "hosts": "10.0.0.7 gpu-b7\n10.0.0.9 gpu-c9\n"}


def test_a_node_said_notready_after_its_peers_failed_talking_to_it_was_lost_first(tmp_path):
    d = analyze_files(tmp_path, _late_notready("10.0.0.7", "09:53:26")).decision
    assert (d.root.category, d.root.node, d.root.file) == ("infra.node_lost", "gpu-b7", "k8s/events.txt")
    assert "stated at" in d.reason


@pytest.mark.parametrize("peer, said_at", [("10.0.0.7", "09:55:00"),    # said long after the failures
                                           ("10.0.0.9", "09:53:26")])   # the failing link's peer is another node
def test_near_miss_a_late_notready_of_no_peer_of_the_failure_leaves_the_link_the_cause(tmp_path, peer, said_at):
    d = analyze_files(tmp_path, _late_notready(peer, said_at)).decision
    assert d.root.category == "nccl.ib_transport"

# ------------------------------------------------------------------------------------------
# a chained exception states its cause first
# ------------------------------------------------------------------------------------------
HUB = ["Traceback (most recent call last):",
       '  File "/usr/lib/python3/urllib3/connection.py", line 198, in _new_conn',
       "ConnectionRefusedError: [Errno 111] Connection refused",                                             # 3
       "", "The above exception was the direct cause of the following exception:", "",
       "Traceback (most recent call last):",
       '  File "/usr/lib/python3/urllib3/connectionpool.py", line 841, in urlopen',
       "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries "
       "exceeded with url: /org/m/resolve/main/config.json (Caused by ProxyError('Unable to connect to proxy'))"]  # 9


def test_a_cause_matched_on_a_later_exception_of_a_chain_is_stated_by_its_first(tmp_path):
    a = analyze_files(tmp_path, {"gpu-a1/vllm.log": "\n".join(
        ["INFO 11-18 07:00:00 [api_server.py:1] vLLM API server version 0.11.0"] + HUB) + "\n"})
    root = a.decision.root
    assert root.category == "model.download_failed" and root.line == 4
    # near miss: the same error alone (no chain) is stated on its own line
    a = analyze_files(tmp_path / "alone", {"gpu-a1/vllm.log": "\n".join(
        ["INFO 11-18 07:00:00 [api_server.py:1] vLLM API server version 0.11.0"] + HUB[6:]) + "\n"})
    assert a.decision.root.category == "model.download_failed" and a.decision.root.line == 4


JIT = ["Traceback (most recent call last):",
       '  File "/usr/lib/python3.12/subprocess.py", line 571, in run',
       "subprocess.CalledProcessError: Command '['ninja', '-v', '-C', '/cache/cached_ops']' returned non-zero exit "
       "status 1.",                                                                                          # 4
       "", "The above exception was the direct cause of the following exception:", "",
       "Traceback (most recent call last):",
       '  File "/usr/local/lib/python3.12/dist-packages/jit/cpp_ext.py", line 331, in run_ninja',
       "RuntimeError: JIT build failed. Output:",                                                           # 10
       "[1/4] /opt/cuda/12.8/bin/nvcc -c fmha_plan.cu -o fmha_plan.cuda.o",
       "nvcc fatal   : Unsupported gpu architecture 'compute_103a'"]                                        # 12


@pytest.mark.parametrize("lines, line", [(JIT, 12),   # the compiler's own word, in the output the exception carries
                                         # near miss: the later exception's first line states it: the chain's first
                                         (JIT[:8] + ["RuntimeError: nvcc fatal   : Unsupported gpu architecture "
                                                     "'compute_103a'"], 4)])
def test_a_tool_output_a_later_exception_carries_is_the_line_of_the_cause_it_states(tmp_path, lines, line):
    a = analyze_files(tmp_path, {"gpu-a1/vllm.log": "\n".join(
        ["INFO 11-18 07:00:00 [api_server.py:1] vLLM API server version 0.11.0"] + lines) + "\n"})
    assert (a.decision.root.category, a.decision.root.line) == ("compile.failed", line)


@pytest.mark.parametrize("version_b, state", [("2.21.5", "never_ready"),     # the start hangs on the odd build
                                              ("2.27.3", "inconclusive")])   # near miss: the same build
def test_a_start_that_ends_silently_with_a_failing_check_never_became_ready(tmp_path, version_b, state):
    using = "INFO 08-11 10:00:01 [pynccl.py:70] vLLM is using nccl=={}"
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(assigned(0, 2, 101), "(Worker_TP0 pid=101) " + using.format("2.27.3")),
        "node-b/vllm.log": text_of(assigned(1, 2, 202), "(Worker_TP1 pid=202) " + using.format(version_b))})
    assert a.decision.outcome.state == state


def _found(i: int, category: str, role: str, ts, node: str, phase: str | None, explained_by: int | None = None):
    from datetime import datetime
    t = datetime(2026, 11, 12, 13, 47, ts) if ts is not None else None
    return Finding(eid=i, sig=None, category=category, role=role, priority=50, file=f"f{i}", line=1, span=(1, 1),
                   ts=t, ts_quality="exact" if t else "none", node=node, rank=None, pid=None, phase=phase, text="x",
                   explained_by=explained_by)


@pytest.mark.parametrize("source, warned, kept", [
    ("kernel", 8, True),        # the adapter's own statement of its failure, the WARN a second later
    ("kernel", 7, False),       # near miss: the WARN in the same second (which came first is not known)
    ("kernel", 7.5, False),     # nor within the second the kernel's time is stamped to (a wrapper's finer time)
    ("traceback", 8, False)])   # near miss: Python's restatement: NCCL's WARN names the call
def test_the_kernels_statement_of_its_adapters_failure_is_not_replaced_by_the_nccl_warning_after_it(source, warned,
                                                                                                  kept):
    from datetime import timedelta
    from k3logs.diagnose.decide import _statement
    root = _found(0, "nccl.ib_transport", "cause", 7, "n06", "serving")
    warn = _found(1, "nccl.ib_transport", "cause", int(warned), "n06", "serving")
    warn.ts += timedelta(seconds=warned - int(warned))
    root.source, warn.source, root.rank, warn.rank = source, "nccl", 11, 11
    assert (_statement(root, [root, warn]) is root) == kept


@pytest.mark.parametrize("quality, phase", [("exact", "shutdown"),        # stated 30 s after what it explains
                                             ("inferred", "model_load")])  # near miss: counted back from an age
def test_a_fault_timed_from_a_listed_age_does_not_lag_what_it_explains_within_the_ages_unit(quality, phase):
    from k3logs.diagnose.borrow import lagging_phase
    root = _found(0, "storage.disk_full", "cause", 40, "w04", "model_load")
    root.ts_quality = quality
    lagging_phase(root, [root, _found(1, "symptom.sigterm", "symptom", 10, "w04", "shutdown", explained_by=0)])
    assert root.phase == phase


def test_a_fault_stated_after_the_errors_it_explains_takes_the_first_ones_phase():
    from k3logs.diagnose.borrow import lagging_phase
    # the node controller's timed NotReady (0) comes 9 s after the peer's NCCL error (2), which the untimed
    # statement of the same loss (1) explains; by then the engine was shutting down
    root = _found(0, "infra.node_lost", "cause", 37, "n11", "shutdown")
    fs = [root, _found(1, "infra.node_lost", "cause", None, "n11", "serving"),
          _found(2, "nccl.ib_transport", "cause", 28, "n03", "serving", explained_by=1)]
    lagging_phase(root, fs)
    assert root.phase == "serving"
    # near miss: what it explains comes after it: its own phase stands
    root = _found(0, "infra.node_lost", "cause", 37, "n11", "shutdown")
    fs = [root, _found(2, "nccl.ib_transport", "cause", 40, "n03", "serving", explained_by=0)]
    lagging_phase(root, fs)
    assert root.phase == "shutdown"
    # near miss: what the untimed statement explains came hours before (a start's retried connect): no consequence
    root = _found(0, "infra.node_lost", "cause", 37, "n11", "serving")
    early = _found(2, "nccl.bootstrap", "symptom", 28, "n03", "distributed_init", explained_by=1)
    early.ts = early.ts.replace(hour=10)
    lagging_phase(root, [root, _found(1, "infra.node_lost", "cause", None, "n11", "serving"), early])
    assert root.phase == "serving"


@pytest.mark.parametrize("ts, phase", [(None, "startup"),    # an untimed status row: in no attempt, no phase
                                       (50, "serving")])      # near miss: a timed failure of a later start
def test_only_a_timed_failure_of_a_later_start_gives_an_outlived_fault_its_phase(ts, phase):
    from k3logs.diagnose.borrow import lagging_phase
    root = _found(0, "net.port_in_use", "cause", 30, "n1", "startup")
    later = _found(1, "symptom.restart", "symptom", ts, "n1", "serving", explained_by=0)
    lagging_phase(root, [root, later], attempt_of=lambda f: 1 if f is root else 3, outlived=True)
    assert root.phase == phase


def _complaint(i: int, node: str, peer: str):
    f = _found(i, "nccl.ib_transport", "cause", 10 + i, node, "serving")
    f.fields, f.rank = {"peer": peer}, i
    return f


def test_the_node_that_several_others_cannot_reach_is_the_one_at_fault():
    from k3logs.diagnose.borrow import silent_peer
    peers = {"10.0.0.2": "n2", "10.0.0.1": "n1", "10.0.0.3": "n3"}
    # n1 and n3 cannot reach n2, which complains of nobody
    root = _complaint(0, "n1", "10.0.0.2")
    silent_peer(root, [root, _complaint(1, "n3", "10.0.0.2")], peers)
    assert (root.node, root.rank) == ("n2", None) and "n1, n3" in root.node_from
    # near miss: one complainer cannot tell which end failed
    root = _complaint(0, "n1", "10.0.0.2")
    silent_peer(root, [root, _complaint(1, "n1", "10.0.0.2")], peers)
    assert (root.node, root.rank, root.node_from) == ("n1", 0, None)
    # near miss: the ends complain of each other
    root = _complaint(0, "n1", "10.0.0.2")
    silent_peer(root, [root, _complaint(1, "n2", "10.0.0.1"), _complaint(2, "n3", "10.0.0.2")], peers)
    assert root.node == "n1"
    # near miss: a peer address the bundle ties to no node
    root = _complaint(0, "n1", "192.168.9.9")
    silent_peer(root, [root, _complaint(1, "n3", "192.168.9.9")], peers)
    assert root.node == "n1"


@pytest.mark.parametrize("reason, node", [("No route to host, exceeded error retry count", "n2"),  # its firewall
                                          ("Connection refused", "n2"),        # nothing listened on its port
                                          ("Connection timed out", "n1")])     # near miss: no answer from either end
def test_one_complainer_names_the_peer_whose_end_refused_its_connect(reason, node):
    from k3logs.diagnose.borrow import silent_peer
    root = _complaint(0, "n1", "10.0.0.2")
    root.fields["reason"] = reason
    silent_peer(root, [root, _complaint(1, "n1", "10.0.0.2")], {"10.0.0.2": "n2", "10.0.0.1": "n1"})
    assert root.node == node
    # near miss: the refused address is on no network of the complainer's (its own routing found no way there)
    root = _complaint(0, "n1", "10.0.0.2")
    root.fields["reason"] = reason
    silent_peer(root, [root, _complaint(1, "n1", "10.0.0.2")], {"10.0.0.2": "n2", "192.168.4.1": "n1"})
    assert root.node == "n1"


@pytest.mark.parametrize("copy_node, want", [("head", 1),    # the copy on another node names no rank
                                              ("w1", 0)])     # near miss: one node's two lines keep their order
def test_a_failing_process_s_own_line_wins_the_same_second_over_a_copy_relayed_by_another_node(copy_node, want):
    from k3logs.catalogue.load import load_catalogue
    from k3logs.diagnose.order import first
    copy = _found(0, "oom.load", "cause", 3, copy_node, "model_load")   # (its file, f0, sorts first)
    own = _found(1, "oom.load", "cause", 3, "w1", "model_load")
    own.rank = 4
    assert first([copy, own], load_catalogue()).eid == want


# ------------------------------------------------------------------------------------------
# a kill names its victim
# ------------------------------------------------------------------------------------------
SUDO_KILL = "Nov 10 10:05:{s} gpu-a01 sudo[9{s}]: ops : TTY=pts/3 ; PWD=/home/ops ; USER=root ; COMMAND=/usr/bin/kill -9 {pid}"
DIED = "(EngineCore_DP0 pid=200) ERROR 11-10 10:05:31 [multiproc_executor.py:1] Worker proc VllmWorker-1 died unexpectedly, " \
       "shutting down executor."


def test_a_kill_of_a_worker_is_the_cause_on_the_worker_s_rank(tmp_path):
    up = [UP.replace("08-11", "11-10"), STATS.replace("08-11", "11-10").format(t="10:05:00", g=90.1, run=4, wait=0,
                                                                                kv=12.0)]
    log = text_of(assigned(0, 2, 211).replace("08-11", "11-10"), assigned(1, 2, 212).replace("08-11", "11-10"), *up,
                  DIED)
    a = analyze_files(tmp_path, {"gpu-a01/vllm.log": log, "gpu-a01/auth.log": text_of(SUDO_KILL.format(s=30, pid=212))})
    root = root_of(a)
    assert (root.sig, root.file, root.rank) == ("kill-sent-to-pid", "gpu-a01/auth.log", 1)


def test_a_kill_of_another_process_the_deployment_served_after_is_survived(tmp_path):
    stats = [STATS.replace("08-11", "11-10").format(t=f"10:05:{s}", g=90.1, run=4, wait=0, kv=12.0) for s in (0, 20)]
    log = text_of(assigned(0, 2, 211).replace("08-11", "11-10"), assigned(1, 2, 212).replace("08-11", "11-10"),
                  UP.replace("08-11", "11-10"), *stats, DIED)
    auth = text_of(SUDO_KILL.format(s=10, pid=47105), SUDO_KILL.format(s=30, pid=212))
    a = analyze_files(tmp_path, {"gpu-a01/vllm.log": log, "gpu-a01/auth.log": auth})
    # the stale process killed first is none of the deployment's, and the server answered after it
    assert "none of the deployment's processes" in a.decision.findings[0].set_aside
    assert (root_of(a).line, root_of(a).rank) == (2, 1)


@pytest.mark.parametrize("pid, aside", [(47105, True),   # a host cron job's python, none of the deployment's
                                        (212, False)])   # near miss: the shell names a worker of the deployment
def test_a_shell_s_report_of_a_crash_names_its_victim(tmp_path, pid, aside):
    stats = [STATS.replace("08-11", "11-10").format(t=f"10:05:{s}", g=90.1, run=4, wait=0, kv=12.0) for s in (0, 20)]
    log = text_of(assigned(0, 2, 211).replace("08-11", "11-10"), assigned(1, 2, 212).replace("08-11", "11-10"),
                  UP.replace("08-11", "11-10"), *stats)
    cron = f"/bin/sh: line 1: {pid:>6} Segmentation fault      (core dumped) /usr/bin/python3 /opt/exporter/gpu.py"
    a = analyze_files(tmp_path, {"gpu-a01/vllm.log": log, "gpu-a01/cron.log": text_of(
        "2026-11-10T10:05:09Z exporter[47100]: wrote gpu.prom", cron)})
    crash = next(f for f in a.decision.findings if f.category == "proc.segfault")
    assert ("none of the deployment's processes" in (crash.set_aside or "")) == aside


# ------------------------------------------------------------------------------------------
# a wait for peers that never came covers the whole wait
# ------------------------------------------------------------------------------------------
def _vllm(m: int, s: int, text: str, level: str = "INFO", who: str = "") -> str:
    return f"{who}{level} 11-21 10:{m:02d}:{s:02d} [x.py:1] {text}"


@pytest.mark.parametrize("start, joined, root_node", [
    (8, False, "gpu-b1"),   # the worker's start began within the wait and never joined: it kept its ranks away
    (12, False, "gpu-a1"),  # near miss: it started only after the wait had timed out
    (8, True, "gpu-a1"),    # near miss: it had joined (its distributed init) before it failed
])
def test_a_peer_that_started_within_a_timed_out_wait_and_failed_before_joining_is_why_it_timed_out(
        tmp_path, start, joined, root_node):
    leader = [_vllm(0, 0, "Automatically detected platform cuda."),
              _vllm(0, 5, "world_size=8 rank=0 local_rank=0 distributed_init_method=tcp://gpu-a1:29500 backend=nccl",
                    who="(Worker_TP0 pid=281) "),
              _vllm(10, 56, "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 4/8 "
                            "clients joined.", level="ERROR", who="(Worker_TP0 pid=281) ")]
    worker = [_vllm(start, 0, "Automatically detected platform cuda."),
              *([_vllm(start, 5, "world_size=8 rank=4 local_rank=0 distributed_init_method=tcp://gpu-a1:29500 "
                                 "backend=nccl", who="(Worker_TP0 pid=90) ")] if joined else []),
              _vllm(start + 3, 3, "Error retrieving file list: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co'"
                                  ", port=443): Max retries exceeded with url: /api/models/org/m/tree/main\"))",
                    level="ERROR")]
    a = analyze_files(tmp_path, {"gpu-a1/vllm.log": text_of(*leader), "gpu-b1/vllm.log": text_of(*worker)})
    assert root_of(a).node == root_node
    if root_node == "gpu-b1":
        assert (root_of(a).category, root_of(a).phase) == ("model.download_failed", "startup")


# ------------------------------------------------------------------------------------------
# a rank behind its communicator when the watchdogs fire was stuck
# ------------------------------------------------------------------------------------------
def pg_status(rank: int, guid: int, enqueued: int, s: int = 7) -> str:
    return (f"[rank{rank}]:[E1008 14:12:0{s}.401822118 ProcessGroupNCCL.cpp:2057] [PG ID 5 PG GUID {guid} Rank "
            f"{rank % 2}]  failure detected by watchdog at work sequence id: 88412 PG status: last enqueued work: "
            f"{enqueued}, last completed work: 88411")


@pytest.mark.parametrize("guids, enqueued, want", [
    ((23, 23), (88412, 88411), 13),     # rank 13 never began collective 88412: it was stuck
    ((23, 23), (88412, 88412), None),   # near miss: both began it, neither is behind
    ((17, 23), (88412, 88411), None),   # near miss: two communicators count their work apart
])
def test_the_rank_behind_its_communicator_when_the_watchdogs_fire_is_the_stuck_one(tmp_path, guids, enqueued, want):
    lines = [pg_status(5, guids[0], enqueued[0]), pg_status(13, guids[1], enqueued[1])]
    a = analyze_files(tmp_path, {"vllm.log": text_of(*lines)})
    root = a.decision.root
    assert (root.rank if root is not None and root.title and "stuck" in root.title else None) == want


@pytest.mark.parametrize("gone_at, root", [("14:02:07", "proc.killed"),     # a worker reported gone before them
                                            ("14:12:09", "nccl.timeout")])   # near miss: reported after them
def test_a_worker_reported_gone_before_the_watchdogs_fire_is_why_its_communicator_waited(tmp_path, gone_at, root):
    """A Ray worker killed silently: its communicator's others wait, one of them behind, until the watchdogs fire."""
    gone = (f"(raylet) [2026-10-08 {gone_at},500 E 711 711] A worker died or was killed while executing a task by "
            "an unexpected system error. Worker IP address: 10.8.1.21 Worker PID: 4117 Worker exit type: SYSTEM_ERROR")
    lines = [pg_status(5, 23, 88412), pg_status(13, 23, 88411)]
    a = analyze_files(tmp_path, {"vllm.log": text_of(*sorted([gone, *lines], key=lambda x: "14:02" not in x))})
    assert root_of(a).category == root


# ------------------------------------------------------------------------------------------
# a fault logged before its node's start got anywhere bit where it shows
# ------------------------------------------------------------------------------------------
FM = ("2026-06-22T{t}+0000 gpu-a1 nv-fabricmanager[3127]: fabric manager NVIDIA GPU driver interface version "
      "580.82.07 don't match with driver version 580.95.05. Please update with matching NVIDIA driver package.")
START_802 = ["INFO 06-22 05:00:00 [api_server.py:1] vLLM API server version 0.10.1",
             "(VllmWorker TP0 pid=77) INFO 06-22 05:00:10 [cuda.py:1] Using Flash Attention backend on V1 engine.",
             "(VllmWorker TP0 pid=77) ERROR 06-22 05:00:12 [worker.py:1] RuntimeError: Unexpected error from "
             "cudaGetDeviceCount(). Error 802: system not yet initialized"]


@pytest.mark.parametrize("t, phase", [("03:10:52", "device_init"),   # hours before: it bit at device init
                                      ("05:00:05", "startup")])      # near miss: in the start, seconds before
def test_a_host_fault_logged_before_the_start_takes_the_phase_where_it_bit(tmp_path, t, phase):
    died = "(VllmWorker TP0 pid=77) ERROR 06-22 05:00:12 [multiproc_executor.py:1] WorkerProc failed to start."
    a = analyze_files(tmp_path, {"gpu-a1/journal.txt": FM.format(t=t) + "\n",
                                 "gpu-a1/vllm.log": text_of(*START_802, died)})
    root = root_of(a)
    # (a fault of the whole node names no process: no rank from the worker whose start it failed)
    assert (root.file, root.phase, root.rank) == ("gpu-a1/journal.txt", phase, None)


def test_near_miss_a_fault_the_deployments_own_log_states_at_its_start_keeps_the_start_phase(tmp_path):
    # the unit's own journal: its start failed there (and again later, further along): the start is where it failed
    a = analyze_files(tmp_path, {"gpu-a1/vllm.log": text_of(FM.format(t="03:10:52").replace(
        "nv-fabricmanager[3127]: ", "vllm[3127]: "), *START_802)})
    root = root_of(a)
    assert (root.file, root.line, root.phase) == ("gpu-a1/vllm.log", 1, "startup")


# ------------------------------------------------------------------------------------------
# a cause with no rank takes none from several ranks failing alike at once
# ------------------------------------------------------------------------------------------
UNREACHABLE = "[W317 09:41:23.405024838 socket.cpp:767] [c10d] The client socket has failed to connect to " \
              "[gpu-a017]:29500 (errno: 113 - No route to host)."


def _rank_line(r: int) -> str:
    return (f"(Worker_PP1_TP{r - 8} pid={700 + r}) INFO 03-17 09:41:20 [parallel_state.py:1] rank {r} in world size "
            f"16 is assigned as DP rank 0, PP rank 1, TP rank {r - 8}, EP rank {r - 8}")


@pytest.mark.parametrize("alike, rank", [(True, None),    # every rank's start fails the same way at once
                                         (False, 9)])     # near miss: one rank's, then the others it took down
def test_a_cause_takes_no_rank_from_several_ranks_failing_alike_at_once(tmp_path, alike, rank):
    died = [f"(Worker_PP1_TP{r - 8} pid={700 + r}) ERROR 03-17 09:51:20 [multiproc_executor.py:1] WorkerProc "
            f"failed to start." for r in (9, 10, 11)]
    if not alike:
        died = [died[0]] + [f"(Worker_PP1_TP{r - 8} pid={700 + r}) INFO 03-17 09:51:20 [multiproc_executor.py:1] "
                            f"Parent process exited, terminating worker" for r in (10, 11)]
    a = analyze_files(tmp_path, {"gpu-a018/vllm.log": text_of(*[_rank_line(r) for r in (9, 10, 11)], UNREACHABLE,
                                                              *died)})
    root = root_of(a)
    assert (root.category, root.rank) == ("nccl.bootstrap", rank)


@pytest.mark.parametrize("retry_at, rank", [("15:03:30.100000", 0), ("15:03:30.400000", 1)])
def test_a_cause_takes_no_rank_from_a_line_it_explains_printed_before_it(tmp_path, retry_at, rank):
    # near miss: the same retry printed after the cause is its consequence, the first on its node
    w0, w1 = "(Worker_PP0_TP0 pid=277) ", "(Worker_PP0_TP1 pid=280) "
    lines = [
        w0 + "INFO 12-02 15:03:29 [gpu_worker.py:97] world_size=2 rank=0 local_rank=0 "
        "distributed_init_method=tcp://10.0.0.1:29511 backend=nccl",
        w1 + "INFO 12-02 15:03:29 [gpu_worker.py:97] world_size=2 rank=1 local_rank=1 "
        "distributed_init_method=tcp://10.0.0.1:29511 backend=nccl",
        f"[W1202 {retry_at} socket.cpp:755] [c10d] The client socket has failed to connect to [h1]:29511 "
        "(errno: 111 - Connection refused).",
        "[W1202 15:03:30.352338 socket.cpp:462] [c10d] The server socket has failed to bind to [::]:29511 "
        "(errno: 98 - Address already in use).",
        w0 + "ERROR 12-02 15:03:31 [multiproc_executor.py:810] WorkerProc failed to start.",
    ]
    lines[2] = w1 + lines[2]
    if retry_at > "15:03:30.3":   # (in the order it was printed)
        lines[2], lines[3] = lines[3], lines[2]
    root = root_of(analyze_files(tmp_path, {"h1/vllm.log": "\n".join(lines) + "\n"}))
    assert (root.category, root.rank) == ("net.port_in_use", rank)


@pytest.mark.parametrize("pid, rank", [(3391, 7), (4242, None)])   # near miss: a pid no worker of the node has
def test_the_worker_rays_memory_monitor_killed_is_the_rank_its_pid_names(tmp_path, pid, rank):
    kill = (f"[2026-09-14 11:02:37,160 I 1187 1187] node_manager.cc:3193: Killing 1 worker(s), kill details: Memory on "
            f"the node (IP: 10.88.14.37, ID: e31f0c9a) where the lease (actor ID: 5f8db1e9, name=RayWorkerProc.__init__, "
            f"pid={pid}, memory used=171.40GB) was running was 1459.64GB / 1536.00GB (0.950286), which exceeds the "
            "memory usage threshold of 0.95. Ray killed this worker (ID: 3be7bea3) because it was the most recently "
            "scheduled task")
    worker = ("(RayWorkerProc pid=3391) INFO 09-14 02:30:01 [parallel_state.py:1] rank 7 in world size 8 is assigned as "
              "DP rank 0, PP rank 0, TP rank 7, EP rank 7")
    root = root_of(analyze_files(tmp_path, {"hgx-n12/raylet.out": text_of(kill), "hgx-n12/replica.log": text_of(worker),
                                            "etc-hosts.txt": "10.88.14.37 hgx-n12\n"}))
    assert (root.category, root.rank) == ("oom.host", rank)


@pytest.mark.parametrize("extra, root", [("", "config.prefix_caching_off"),              # K3 recomputing every prefix
                                         (" \\\n  --enable-prefix-caching", "other")])   # near miss: it was on
def test_k3_without_prefix_caching_explains_gateway_timeouts_the_server_never_logs_failing(tmp_path, extra, root):
    timeouts = "\n".join(f'[2026-08-11T10:0{m}:00.000Z] "POST /v1/chat/completions HTTP/1.1" 504 UT 491626 24 120004 '
                         f'- "10.9.4.250" "agent/1.0" "b0d22d8{m}" "kimi.llm.internal" "10.244.3.17:8000"'
                         for m in (6, 7, 8)) + "\n"
    a = analyze_files(tmp_path, {"launch.sh": K3_LAUNCH.format(extra=extra), "vllm.log": QUIET_LOG,
                                 "gateway/envoy-access.log": timeouts})
    assert root_of(a).category == root
    assert root != "config.prefix_caching_off" or root_of(a).phase == "serving"   # (where it showed)


@pytest.mark.parametrize("served_on, root", [(True, None),                 # one supply lost, the node went on
                                             (False, "infra.node_lost"),   # near miss: its log stops, a peer fails
                                             ("peer", "infra.node_lost")])  # nor does its peer's load going on
def test_a_power_loss_the_bmc_logged_is_the_node_lost_unless_the_node_went_on(tmp_path, served_on, root):
    sel = "   9 | 08/11/2026 | 10:05:00 | Power Supply PS1 Status | Power Supply AC lost | Asserted\n"
    before = STATS.format(t="10:04:50", g="350.0", run=2, wait=0, kv="1.7")
    on = [STATS.format(t=t, g="350.0", run=2, wait=0, kv="1.7") for t in ("10:05:10", "10:05:20", "10:05:30")]
    files = {"gpu-a1/vllm.log": text_of(*HEAD, UP, before, *(on if served_on is True else [])),
             "gpu-a1/ipmitool-sel-elist.txt": sel}
    if served_on == "peer":   # (both loading: the node goes dark, its peer loads on and then waits for it)
        files["gpu-a1/vllm.log"] = text_of(*HEAD, LOAD)
        files["gpu-b1/vllm.log"] = text_of(*HEAD, LOAD, W + "INFO 08-11 10:06:00 [default_loader.py:1] Loading weights "
                                           "took 300.12 seconds", *(W + f"WARNING 08-11 10:0{m}:00 [shm_broadcast.py:1] "
                                           "No available shared memory broadcast block found in 60 seconds."
                                                                    for m in (7, 8, 9)))
    elif not served_on:
        files["gpu-b1/vllm.log"] = text_of(*HEAD, UP, before, "(APIServer pid=1) ERROR 08-11 10:05:09 [core.py:1] "
                                          "RuntimeError: NCCL error: remote process exited or there was a network "
                                          "error, NCCL version 2.27.3")
    d = analyze_files(tmp_path, files).decision
    assert (None if d.healthy or d.root is None else d.root.category) == root


@pytest.mark.parametrize("first_on, line", [("07/30/2026 | 22:14:00", 2),   # its past: the node ran the deployment after it
                                            ("08/11/2026 | 10:04:55", 1)])  # near miss: the same loss a moment before
def test_a_power_loss_the_bmc_logged_before_the_node_ran_the_deployment_is_the_nodes_past(tmp_path, first_on, line):
    """A BMC's record is about its whole node, not a process of it: the node's loss in the run is not the recurrence of
    one it ran the deployment after."""
    sel = (f"   8 | {first_on} | Power Supply PS2 Status | Power Supply AC lost | Asserted\n"
           "   9 | 08/11/2026 | 10:05:00 | Power Supply PS1 Status | Power Supply AC lost | Asserted\n")
    before = STATS.format(t="10:04:50", g="350.0", run=2, wait=0, kv="1.7")
    lost = ("(APIServer pid=1) ERROR 08-11 10:05:09 [core.py:1] RuntimeError: NCCL error: remote process exited or "
            "there was a network error, NCCL version 2.27.3")
    root = root_of(analyze_files(tmp_path, {"gpu-a1/vllm.log": text_of(*HEAD, UP, before),
                                            "gpu-a1/ipmitool-sel-elist.txt": sel,
                                            "gpu-b1/vllm.log": text_of(*HEAD, UP, before, lost)}))
    assert (root.category, root.node, root.line) == ("infra.node_lost", "gpu-a1", line)


# ------------------------------------------------------------------------------------------
# a fault first stated by a line that is no cause by itself
# ------------------------------------------------------------------------------------------
HUB_RETRY = ("(Worker_TP0 pid=212) WARNING 08-11 {t} [_http.py:1] '[Errno 101] Network is unreachable' thrown while "
             "requesting HEAD https://huggingface.co/Qwen/Qwen3-8B/resolve/main/config.json")
HUB_FAILED = ("(Worker_TP0 pid=212) ERROR 08-11 {t} [core.py:708] huggingface_hub.errors.LocalEntryNotFoundError: "
              "An error happened while trying to locate the file on the Hub and we cannot find the requested files "
              "in the local cache.")


@pytest.mark.parametrize("retried_by, line", [("pid=212", 2),    # the retry its last attempt's error follows
                                              ("pid=377", 3)])   # near miss: another process's retry
def test_a_retried_request_is_where_the_download_failure_its_last_retry_raises_was_first_stated(tmp_path, retried_by,
                                                                                                line):
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(
        "INFO 08-11 09:59:59 [api_server.py:1] vLLM API server version 0.11.0",
        HUB_RETRY.format(t="10:00:00").replace("pid=212", retried_by), HUB_FAILED.format(t="10:00:31"))})
    root = root_of(a)
    assert (root.category, root.line) == ("model.download_failed", line)


def test_near_miss_a_retried_request_that_succeeds_is_no_failure(tmp_path):
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(
        "INFO 08-11 09:59:59 [api_server.py:1] vLLM API server version 0.11.0", HUB_RETRY.format(t="10:00:00"),
        "(Worker_TP0 pid=212) INFO 08-11 10:00:05 [weight_utils.py:1] Time spent downloading weights for "
        "Qwen/Qwen3-8B: 4.2 seconds")})
    assert a.decision.root is None


# ------------------------------------------------------------------------------------------
# a state of the node that persists: survived by what ran before it, not by what starts after
# ------------------------------------------------------------------------------------------
MISMATCH = ("[Tue Nov 24 {t} 2026] NVRM: API mismatch: the client '{who}' (pid 771102) has the version 580.105.08, "
            "but this kernel module has the version 580.95.05.")
SERVED = ["INFO 11-24 05:00:00 [api_server.py:1] vLLM API server version 0.11.0",
          "INFO 11-24 05:05:00 [api_server.py:1] Application startup complete.",
          "INFO 11-24 06:20:00 [loggers.py:1] Avg prompt throughput: 120.0 tokens/s, Avg generation throughput: 340.5 "
          "tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%"]
RESTARTED = ["INFO 11-24 10:02:20 [api_server.py:1] vLLM API server version 0.11.0",
             "ERROR 11-24 10:02:25 [engine.py:1] RuntimeError: Failed to infer device type"]


@pytest.mark.parametrize("restarted, root_line", [(True, 1),      # the mismatch the next start fails on began then
                                                  (False, None)])  # near miss: the server ran on, nothing started
def test_a_driver_mismatch_a_running_server_outlives_is_the_cause_of_the_next_starts_failure(tmp_path, restarted,
                                                                                               root_line):
    kernel = [MISMATCH.format(t="06:13:29", who="nvidia-persiste")] + (
        [MISMATCH.format(t="10:02:24", who="vllm")] if restarted else [])
    a = analyze_files(tmp_path, {"gpu-a1/dmesg-T.txt": text_of(*kernel),
                                 "gpu-a1/vllm.log": text_of(*SERVED, *(RESTARTED if restarted else []))})
    root = a.decision.root
    assert (root.file, root.line) == ("gpu-a1/dmesg-T.txt", root_line) if root_line else root is None


EXT4 = ["[Tue Nov 24 06:13:29 2026] EXT4-fs error (device nvme1n1p1): ext4_mb_generate_buddy:1218: group 1842, block "
        "bitmap and bg descriptor inconsistent: 31102 vs 31108 free clusters",
        "[Tue Nov 24 06:13:29 2026] EXT4-fs (nvme1n1p1): Remounting filesystem read-only"]
EROFS = ["INFO 11-24 10:02:20 [api_server.py:1] vLLM API server version 0.11.0",
         "(Worker_TP0 pid=96) ERROR 11-24 10:02:51 [multiproc_executor.py:1] torch._dynamo.exc.BackendCompilerFailed: "
         "backend='<vllm.compilation.backends.VllmBackend object at 0x7f8e03a7b150>' raised:",
         "(Worker_TP0 pid=96) ERROR 11-24 10:02:51 [multiproc_executor.py:1] OSError: [Errno 30] Read-only file "
         "system: '/data/vllm-cache/torch_compile_cache/71c0a9e3f2'"]


@pytest.mark.parametrize("restarted_on, root_file, outcome", [
    ("gpu-a1", "gpu-a1/dmesg-T.txt", "never_ready"),   # its node's next start fails writing: the remount, hours before
    ("gpu-a2", "gpu-a2/vllm.log", None)])    # near miss: the next start is on another node: its own failure
def test_a_filesystem_gone_read_only_a_running_server_outlives_is_the_cause_of_its_nodes_next_start(
        tmp_path, restarted_on, root_file, outcome):
    a = analyze_files(tmp_path, {"gpu-a1/dmesg-T.txt": text_of(*EXT4), "gpu-a1/vllm.log": text_of(*SERVED),
                                 f"{restarted_on}/vllm.log": text_of(*SERVED, *EROFS) if restarted_on == "gpu-a1"
                                 else text_of(*EROFS)})
    root = root_of(a)
    assert root.file == root_file and (outcome is None or a.decision.outcome.state == outcome)


PIP_NCCL = "2025-05-21T09:13:52.559189336Z stderr F torch 2.6.0 requires nvidia-nccl-cu12==2.21.5, but you have " \
           "nvidia-nccl-cu12 2.26.2 which is incompatible."
B_INIT = "2025-05-21T09:14:30.000000000Z stdout F gpu-b:611:611 [0] NCCL INFO comm 0x1 rank 8 nranks 16 cudaDev 0 " \
         "busId 18000 - Init COMPLETE"
A_TRUNCATED = ["INFO 05-21 09:14:35 [pynccl.py:69] vLLM is using nccl==2.21.5",
               "gpu-a:712:1044 [0] bootstrap.cc:77 NCCL WARN Message truncated : received 172 bytes instead of 64"]


@pytest.mark.parametrize("met, root_file", [(True, "gpu-b/worker.log"),   # the other NCCL meets the nodes' one
                                            (False, None)])               # near miss: nothing meets it: it ran on
def test_another_nccl_installed_on_one_node_is_the_cause_where_the_other_nodes_meet_it(tmp_path, met, root_file):
    a = analyze_files(tmp_path, {"gpu-b/worker.log": text_of(PIP_NCCL, B_INIT),
                                 "gpu-a/vllm.log": text_of("INFO 05-21 09:14:00 [api_server.py:1] vLLM API server "
                                                           "version 0.8.5", *(A_TRUNCATED if met else []))})
    root = a.decision.root
    assert (root.file if root is not None and root.category == "nccl.version_mismatch" else None) == root_file


SMI = ("+-----------------------------------------------------------------------------------------+\n"
       "| NVIDIA-SMI {v}              Driver Version: {v}      CUDA Version: {c}     |\n"
       "+-----------------------------------------+------------------------+----------------------+\n")


@pytest.mark.parametrize("driver, cuda, category", [("575.57.08", "12.9", "env.driver_too_old"),
                                                    ("580.95.05", "13.0", "proc.killed")])   # near miss: r580
def test_a_driver_too_old_for_the_containers_cuda_explains_workers_that_died_at_start_saying_nothing(
        tmp_path, driver, cuda, category):
    a = analyze_files(tmp_path, {
        "gpu-a1/nvidia-smi.txt": SMI.format(v=driver, c=cuda), "pip-freeze.txt": "torch==2.11.0+cu130\nvllm==0.27.1\n",
        "gpu-a1/vllm.log": text_of("INFO 08-11 10:00:00 [api_server.py:1] vLLM API server version 0.27.1",
                                   "(EngineCore pid=188) ERROR 08-11 10:00:20 [core.py:1] Exception: WorkerProc "
                                   "initialization failed due to an exception in a background process. See stack "
                                   "trace for root cause.")})
    assert root_of(a).category == category


@pytest.mark.parametrize("loaded, healthy", [("570.172.08", True),    # ops loaded the client's driver: fixed
                                             ("570.158.01", False)])  # near miss: the same old module again
def test_a_driver_mismatch_the_client_s_kernel_module_was_loaded_after_is_fixed(tmp_path, loaded, healthy):
    serve = "(APIServer pid=1) INFO 08-11 {t} [loggers.py:1] Engine 000: Avg prompt throughput: 120.0 tokens/s, Avg " \
            "generation throughput: 340.5 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%"
    a = analyze_files(tmp_path, {
        # (dmesg with no boot time: its lines are in no time order with the server's)
        "gpu-a/dmesg.txt": text_of(
            "[204399.774019] NVRM: API mismatch: the client has the version 570.172.08, but",
            f"[204492.188460] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  {loaded}  Release Build"),
        "gpu-a/vllm.log": text_of("(APIServer pid=1) INFO 08-11 09:10:00 [api_server.py:1] vLLM API server version "
                                  "0.10.2", "(APIServer pid=1) INFO 08-11 09:12:00 [launcher.py:1] Application startup "
                                  "complete.", serve.format(t="09:13:00"), serve.format(t="09:14:00"))})
    assert a.decision.healthy is healthy


def _nixl_failure_and_traceback(n: int, traceback_pid: int) -> list[str]:
    """A known error's log record (logger.exception): its message, then the traceback it caught."""
    tb = f"(Worker_TP0 pid={traceback_pid}) ERROR 08-11 10:04:3{n} [worker.py:702] "
    return [W + f"ERROR 08-11 10:04:3{n} [worker.py:702] NIXL transfer failure: handshake_failed | Context: "
                "{'failure_type': 'handshake_failed'}",
            tb + "Traceback (most recent call last):",
            tb + '  File "/app/nixl/worker.py", line 436, in _nixl_handshake',
            tb + "    handshake_bytes = sock.recv()",
            tb + "zmq.error.Again: Resource temporarily unavailable"]


@pytest.mark.parametrize("traceback_pid, healthy", [(101, True), (102, False)])
def test_the_traceback_a_known_errors_record_prints_is_that_errors_detail(tmp_path, traceback_pid, healthy):
    # near miss: another process's traceback right after it is an error of its own, and it recurs
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        *HEAD, LOAD, KV, CAPTURE, CAPTURED, UP, STATS.format(t="10:04:10", g="350.0", run=2, wait=0, kv="1.7"),
        *(line for n in range(3) for line in _nixl_failure_and_traceback(n, traceback_pid)),
        STATS.format(t="10:05:00", g="350.0", run=2, wait=0, kv="1.7"))})
    assert a.decision.healthy is healthy
    if not healthy:
        assert root_of(a).category == "other"


CABLE = ("Oct 28 14:41:06 pd-p05 kernel: mlx5_core 0000:5c:00.0: mlx5_port_module_event:1142:(pid 0): Port module "
         "event[error]: module 2, Cable error, Bus stuck (I2C or data shorted)")


@pytest.mark.parametrize("down_file, root", [
    ("pd-p05/kern.log", "mlx5-port-down"),                 # the same clock: its line before the cable's is first
    ("pd-p05/vllm.log", "mlx5-port-module-cable-error")])  # near miss: another file's clock: within the kernel's slack
def test_a_kernel_line_after_another_of_its_own_file_is_later_whatever_the_clocks_slack(tmp_path, down_file, root):
    down = "Oct 28 14:41:05 pd-p05 kernel: mlx5_core 0000:5c:00.0 mlx5_2: Port: 1 Link DOWN"
    nccl = ("(Worker_TP2 pid=257) ERROR 10-28 14:41:05 [nixl_connector.py:1] UCX error: Transport retry count "
            "exceeded on mlx5_2:1/RoCE (synd 0x15 vend 0x81 hw_synd 0/0)")
    files = {"pd-p05/kern.log": text_of(*([down] if down_file == "pd-p05/kern.log" else []), CABLE)}
    if down_file != "pd-p05/kern.log":
        files[down_file] = text_of(nccl)
    a = analyze_files(tmp_path, files)
    assert root_of(a).sig == root


def test_a_cause_in_a_json_loggers_exception_is_on_the_records_own_line(tmp_path):
    """Every line of a record read by key (its message, its exception's traceback) is on the record's line: a
    cause stated in a later part of the exception's message is there too, and the record's host is its node."""
    rec = lambda n, msg, exc=None: json.dumps({  # noqa: E731
        "levelname": "ERROR" if exc else "INFO", "pid": 213, "host": "l40s-inf-03", "message": msg,
        "time": f"2026-06-18T09:13:1{n}.131+00:00", **({"exc_info": exc} if exc else {})})
    exc = ("Traceback (most recent call last):\n  File \"x.py\", line 9, in f\n"
           "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
           "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.")
    a = analyze_files(tmp_path, {"vllm.jsonl": text_of(rec(0, "vLLM API server version 0.22.0"),
                                                       rec(1, "WorkerProc hit an exception.", exc),
                                                       rec(2, "Engine core initialization failed.", None))})
    root = root_of(a)
    assert (root.category, root.line, root.node) == ("compile.failed", 2, "l40s-inf-03")


@pytest.mark.parametrize("severity, root", [("Fatal", "nvrm-xid"),   # a fatal NVLink5 sub-code: the cause
                                            ("Nonfatal", None)])      # near miss: NVIDIA's non-fatal sub-code
def test_an_nvlink5_xid_its_line_calls_nonfatal_is_context(tmp_path, severity, root):
    xid = (f"2026-12-09T16:16:48,611420+00:00 NVRM: Xid (PCI:0008:01:00): 145, RLW_REMAP {severity} XC0 i0 Link 11 "
           "(0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)")
    oom = OOM.replace("08-11", "12-09").format(t="16:16:50", g=0)
    a = analyze_files(tmp_path, {"gpu-a1/dmesg.txt": text_of(xid), "gpu-a1/vllm.log": text_of(oom)})
    assert root_of(a).sig == (root or "cuda-out-of-memory")


@pytest.mark.parametrize("b_figure, head_fig, node", [("8.31", "41.20", "node-b"),
                                                      ("41.20", "8.31", "node-a"),    # near miss: the head's own
                                                      ("8.31", "12.00", "node-a")])   # near miss: both fall short
def test_an_error_that_quotes_one_other_nodes_kv_cache_figure_is_that_nodes(tmp_path, b_figure, head_fig, node):
    """The head's engine refuses to start: 'the available KV cache memory (8.31 GiB)' is less than the 19.31 GiB a
    request needs. Only node-b's workers printed 'Available KV cache memory: 8.31 GiB', and the head's held 41.20
    (node-b's memory setting differs): the shortfall is node-b's. Near misses: the head's own worker printed the
    figure; the head's workers fell short too (12.00 GiB): no one node's, the engine's node stands."""
    def worker(i: int, figure: str) -> str:
        return f"(Worker_PP0_TP{i} pid={300 + i}) INFO 12-03 14:15:58 [gpu_worker.py:1] Available KV cache memory: " \
               f"{figure} GiB"
    refused = ("(EngineCore pid=290) ERROR 12-03 14:16:05 [core.py:1] ValueError: To serve at least one request with "
               "the model's max seq len (1048576), (19.31 GiB KV cache is needed, which is larger than the available KV "
               "cache memory (8.31 GiB). Based on the available memory, the estimated maximum model length is 450000.")
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(worker(0, head_fig), worker(1, head_fig), refused),
                                 "node-b/vllm.log": text_of(worker(0, b_figure), worker(1, b_figure))})
    assert (a.decision.root.category, a.decision.root.node) == ("oom.kv_cache", node)


@pytest.mark.parametrize("hosts, complainers, node", [
    (("node-a", "node-b", "node-c"), ("node-b", "node-c"), "node-a"),
    (("node-a", "node-b"), ("node-b",), "node-a"),              # two nodes: the one that complains of none
    (("node-a", "node-b", "node-c"), ("node-b",), "node-b")])   # near miss: one of two others
def test_a_peer_at_a_loopback_address_is_the_one_node_that_complains_of_none(tmp_path, hosts, complainers, node):
    """Ranks on node-b and node-c are told to reach a peer at 127.0.1.1: a host whose own name resolves to loopback
    advertised it, the deployment's one node whose ranks complain of none (node-a); one complainer of two nodes
    names the other too. Near miss: one complainer cannot tell which of two others advertised it: its own node
    stands."""
    def start(n: int) -> str:
        return f"(Worker_TP0 pid={200 + n}) INFO 12-02 14:20:21 [gpu_worker.py:98] world_size=3 rank={n} local_rank=0 " \
               "distributed_init_method=tcp://node-a:29600 backend=nccl"
    refused = ("[rank{n}]:[E1202 14:20:30.424503399 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
               "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:152] timed out connecting: SO_ERROR: Connection "
               "refused, remote=[127.0.1.1]:36012")
    files = {f"{h}/vllm.log": text_of(start(i), *([refused.format(n=i)] if h in complainers else []))
             for i, h in enumerate(hosts)}
    a = analyze_files(tmp_path, files)
    assert (a.decision.root.category, a.decision.root.node) == ("nccl.bootstrap", node)


# ------------------------------------------------------------------------------------------------------
# a crash loop repeats its failure (loops.py)
def _crash_loop(restarts: int) -> dict:
    """A leader that waits ten minutes for a worker whose container crash-loops on its own arguments since its
    pod started at 03:12:52, with `restarts` restarts; the worker's log holds its last attempt only."""
    t = "2026-09-14T{}Z "
    leader = [t.format("03:35:03.0") + "(APIServer pid=1) INFO 09-14 03:35:03 [__init__.py:241] Automatically "
              "detected platform cuda.",
              t.format("03:35:23.0") + "(EngineCore pid=214) INFO 09-14 03:35:23 [core.py:96] Initializing a V1 LLM "
              "engine (v0.27.2) with config: model='m'",
              t.format("03:45:37.2") + "(Worker_PP0_TP0_EP0 pid=281) ERROR 09-14 03:45:37 [multiproc_executor.py:790]"
              " torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 8/16 clients "
              "joined."]
    worker = [t.format("03:52:06.0") + "INFO 09-14 03:52:06 [__init__.py:241] Automatically detected platform "
              "cuda.",
              t.format("03:52:18.0") + "pydantic_core._pydantic_core.ValidationError: 1 validation error for "
              "ModelConfig",
              t.format("03:52:18.0") + "  Value error, User-specified max_model_len (1064960) is greater than the "
              "derived max_model_len (max_position_embeddings=1048576 or model_max_length=None in model's "
              "config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."]
    pods = ["NAME          READY   STATUS             RESTARTS   AGE   IP             NODE       NOMINATED NODE   "
            "READINESS GATES",
            "k3-0          0/1     Running            0          42m   10.244.14.37   gpu-a14    <none>           "
            "<none>",
            f"k3-0-1        0/1     CrashLoopBackOff   {restarts}         42m   10.244.15.52   gpu-a15    <none>"
            "           <none>"]
    describe = ["Name:             k3-0-1", "Namespace:        llm", "Node:             gpu-a15/10.40.2.15",
                "Start Time:       Mon, 14 Sep 2026 03:12:52 +0000", "Status:           Running",
                "IP:               10.244.15.52", "Containers:", "  vllm-worker:",
                "    State:          Waiting", "      Reason:       CrashLoopBackOff",
                f"    Restart Count:  {restarts}"]
    files = {"logs/k3-0_vllm-leader.log": leader, "logs/k3-0-1_vllm-worker.log": worker,
             "kubectl-get-pods.txt": pods, "kubectl-describe-pod-k3-0-1.txt": describe}
    return {name: "\n".join(lines) + "\n" for name, lines in files.items()}


def test_a_crash_looping_worker_failed_on_its_own_arguments_from_its_pods_start(tmp_path):
    d = analyze_files(tmp_path, _crash_loop(11)).decision
    assert d.root is not None and d.root.category == "config.max_model_len" and d.root.node == "gpu-a15"
    assert "crash-loops since its pod started" in d.reason


def test_near_miss_one_restart_is_no_loop_and_the_printed_time_stands(tmp_path):
    d = analyze_files(tmp_path, _crash_loop(1)).decision
    assert d.root is not None and d.root.category == "nccl.bootstrap" and d.root.node == "gpu-a14"


def test_near_miss_an_earlier_attempt_in_the_bundle_keeps_its_printed_time(tmp_path):
    # (the bundle holds an attempt of the worker that began before the one that failed: that is the first start it
    # shows, and the later attempt's failure is no first one)
    files = _crash_loop(11)
    files["logs/k3-0-1_vllm-worker_previous.log"] = files["logs/k3-0-1_vllm-worker.log"].splitlines()[0] \
        .replace("03:52:06", "03:51:06") + "\n"
    d = analyze_files(tmp_path, files).decision
    assert d.root is not None and d.root.category == "nccl.bootstrap"


def _probe_loop(log_from: str, ready: bool = False) -> dict:
    """A leader whose startup probe killed its container at 10:16:54 and 10:29:12; the bundle holds only the
    current container's log (from `log_from`), in which the NCCL bootstrap fails before the server is ready (or,
    with `ready`, after it served)."""
    t = "2026-11-12T{}Z "
    log = [t.format(log_from) + "(APIServer pid=1) INFO 11-12 10:29:25 [api_server.py:1902] vLLM API server "
           "version 0.28.1",
           t.format("10:29:34.0") + "(EngineCore pid=211) INFO 11-12 10:29:34 [core.py:93] Initializing a V1 LLM "
           "engine (v0.28.1) with config: model='m'"]
    if ready:
        log.append(t.format("10:29:40.0") + "(APIServer pid=1) INFO 11-12 10:29:40 [launcher.py:37] Application "
                   "startup complete.")
    log.append(t.format("10:29:53.0") + "k3-0:296:1256 [3] bootstrap.cc:209 NCCL WARN Message truncated : received "
               "176 bytes instead of 172")
    events = ["LAST SEEN   TYPE      REASON    OBJECT      MESSAGE",
              "2026-11-12T10:16:54Z   Warning   Unhealthy   pod/k3-0   Startup probe failed: connect: connection "
              "refused",
              "2026-11-12T10:16:54Z   Normal    Killing     pod/k3-0   Container vllm failed startup probe, will be "
              "restarted",
              "2026-11-12T10:29:12Z   Normal    Killing     pod/k3-0   Container vllm failed startup probe, will be "
              "restarted"]
    return {"k3-0/vllm.log": "\n".join(log) + "\n", "events.txt": "\n".join(events) + "\n"}


def test_a_probe_kill_of_a_start_the_bundle_has_no_log_of_is_the_next_starts_failure(tmp_path):
    d = analyze_files(tmp_path, _probe_loop("10:29:25.0")).decision
    assert d.root is not None and d.root.category == "nccl.version_mismatch"
    kill = next(f for f in d.findings if f.sig == "orchestrator-probe-kill")
    assert kill.role == "symptom" and kill.fields["start_failed_on"].endswith(f":{d.root.line}")


def test_near_miss_a_probe_kill_of_a_logged_start_stands(tmp_path):
    # (the log begins before the first kill: the bundle shows that start, and it failed on nothing but the probe)
    d = analyze_files(tmp_path, _probe_loop("10:10:00.0")).decision
    assert d.root is not None and d.root.sig == "orchestrator-probe-kill"


def test_near_miss_a_next_start_that_was_ready_before_its_failure_leaves_the_kill(tmp_path):
    d = analyze_files(tmp_path, _probe_loop("10:29:25.0", ready=True)).decision
    assert d.root is not None and d.root.sig == "orchestrator-probe-kill"


@pytest.mark.parametrize("named, announced", [("04:00:00", True),    # the node went away at the moment announced
                                              ("05:00:00", False)])  # near miss: another moment: another reboot
def test_a_reboot_announced_for_the_moment_the_node_went_away_is_the_first_statement_of_its_loss(tmp_path, named,
                                                                                                 announced):
    journal = [f"Oct 14 03:06:12 gpu-b23 systemd-logind[1281]: The system will reboot at Wed 2026-10-14 {named} CDT!",
               "Oct 14 03:10:00 gpu-b23 systemd[1]: Finished sysstat-collect.service - system activity accounting.",
               'Oct 14 04:00:00 gpu-b23 kubelet[2417]: I1014 04:00:00.031014    2417 nodeshutdown_manager_linux.go:273] '
               '"Shutdown manager detected new shutdown event" event="shutdown"']
    peer = ["(EngineCore_DP0 pid=88) ERROR 10-14 09:00:02 [core.py:1] RuntimeError: Connection closed by peer "
            "[10.60.4.23]:45012",
            "(APIServer pid=1) ERROR 10-14 09:00:03 [async_llm.py:1] vllm.v1.engine.exceptions.EngineDeadError: "
            "EngineCore encountered an issue. See stack trace (above) for the root cause."]
    zone = ["Local time: Wed 2026-10-14 04:10:00 CDT", "Universal time: Wed 2026-10-14 09:10:00 UTC",
            "Time zone: America/Chicago (CDT, -0500)"]
    d = analyze_files(tmp_path, {"gpu-b23/journal.txt": "\n".join(journal) + "\n",
                                 "gpu-b23/timedatectl.txt": "\n".join(zone) + "\n",
                                 "gpu-b17/vllm.log": "\n".join(peer) + "\n"}).decision
    assert d.root is not None and d.root.category == "infra.node_lost" and d.root.node == "gpu-b23"
    assert (d.root.line == 1) is announced


@pytest.mark.parametrize("witnesses, hca, rank", [
    (8, " hca mlx5_3", 3),   # every process saw it: the adapter's, rank 3 used it
    (8, "", 3),              # the transfer errors name no adapter: the first to fail
    (1, " hca mlx5_3", 0)])  # near miss: one process's own event stays its own
def test_an_adapter_event_every_process_reports_is_the_rank_s_that_used_the_adapter(tmp_path, witnesses, hca, rank):
    event = "[2026-09-22 08:03:11] gpu-n02:{pid}:{tid} [{dev}] transport/net_ib.cc:253 NCCL WARN NET/IB : mlx5_3:1 " \
            "Got non-fatal async event: port error(10)"
    init = "gpu-n02:{pid}:{tid} [{dev}] NCCL INFO comm 0x55d8c0a1b2c0 rank {dev} nranks 8 cudaDev {dev} busId " \
           "{dev}a000 - Init COMPLETE"
    lines = [init.format(pid=120 + d, tid=140 + d, dev=d) for d in range(8)]
    lines += [event.format(pid=120 + d, tid=140 + d, dev=d) for d in range(witnesses)]
    lines += ["[2026-09-22 08:03:42] gpu-n02:123:394 [3] transport/net_ib.cc:2543 NCCL WARN NET/IB: Got completion from "
              "peer 10.233.75.30<40129> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) localGid "
              "::ffff:192.168.203.27 remoteGids::ffff:192.168.203.33" + hca]
    d = analyze_files(tmp_path, {"gpu-n02/nccl.log": "\n".join(lines) + "\n"}).decision
    assert d.root is not None and d.root.sig == "nccl-ib-async-port-error" and d.root.rank == rank


@pytest.mark.parametrize("args, rank", [("{'model': 'm', 'tensor_parallel_size': 4}", 3),   # one engine: GPU 3 is rank 3
                                        ("{'model': 'm', 'tensor_parallel_size': 4, 'data_parallel_size': 2}",
                                         None)])   # near miss: two engines on the node: whose GPU 3 is unknown
def test_with_no_rank_stated_a_one_node_engines_gpu_is_its_rank(tmp_path, args, rank):
    lines = ["INFO 11-18 07:00:00 [api_server.py:1] vLLM API server version 0.27.2",
             f"INFO 11-18 07:00:01 [utils.py:253] non-default args: {args}",
             "ERROR 11-18 07:04:30 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB. "
             "GPU 3 has a total capacity of 79.19 GiB of which 4.37 GiB is free."]
    d = analyze_files(tmp_path, {"gpu-a1/vllm.log": "\n".join(lines) + "\n"}).decision
    assert d.root is not None and d.root.category.startswith("oom.") and d.root.rank == rank


SLURM_OOM = ["slurmstepd: error: Detected 1 oom_kill event in StepId=88213.0. Some of the step tasks have been OOM "
             "Killed.", "srun: error: hgx-a12: task 1: Out Of Memory"]


@pytest.mark.parametrize("kernel, root", [
    (False, ("job.out", 2)),     # Slurm's own count of the step's OOM kills is the first word of them
    (True, ("hgx-a12/kern.log", 1)),   # near miss: the kernel's kill line on its node came first, with the victim
])
def test_slurms_count_of_a_steps_oom_kills_follows_the_kernels_own_line(tmp_path, kernel, root):
    files = {"job.out": text_of("2026-10-21T14:02:11+00:00 job 88213 on hgx-a11 hgx-a12", *SLURM_OOM)}
    if kernel:
        files["hgx-a12/kern.log"] = ("2026-10-21T14:02:10+00:00 hgx-a12 kernel: Memory cgroup out of memory: Killed "
                                     "process 4242 (python) total-vm:312465608kB, anon-rss:250817440kB\n")
    r = root_of(analyze_files(tmp_path, files))
    assert (r.category, (r.file, r.line)) == ("oom.host", root)


# ------------------------------------------------------------------------------------------
# an earlier run
# ------------------------------------------------------------------------------------------
def two_runs(second: str, failure: str) -> str:
    return text_of("(APIServer pid=1) INFO 08-11 10:00:00 [api_server.py:1] vLLM API server version 0.11.0",
                   "(Worker_TP0 pid=305) INFO 08-11 10:01:00 [gpu_model_runner.py:1] Starting to load model m...",
                   "(Worker_TP0 pid=305) " + OOM.format(t="10:02:00", g=0),
                   f"(APIServer pid=1) INFO {second} [api_server.py:1] vLLM API server version 0.11.0",
                   f"(APIServer pid=1) ERROR {second} [api_server.py:9] {failure}")


ENOSPC = "OSError: [Errno 28] No space left on device: '/root/.cache/huggingface/hub/models--m/blobs/0a1b'"


@pytest.mark.parametrize("second, failure, root_line", [
    ("08-12 09:00:00", ENOSPC, 5),                      # started again the next day, failed otherwise: that run's
    ("08-11 10:05:00", ENOSPC, 3),                      # near miss: restarted within minutes (a crash loop)
    ("08-12 09:00:00", OOM.format(t="09:00:00", g=0).split("] ", 1)[1], 3),   # near miss: it fails the same way
])
def test_a_failed_run_the_deployment_was_started_again_after_is_not_the_cause_of_a_later_run_s_other_failure(
        tmp_path, second, failure, root_line):
    a = analyze_files(tmp_path, {"gpu-a01/vllm.log": two_runs(second, failure)})
    root = root_of(a)
    assert root.line == root_line
    if root_line == 5:
        assert "an earlier run's failure" in finding(a, "cuda-out-of-memory").set_aside


# ------------------------------------------------------------------------------------------
# a fault at the start that its own process went past bit where it first needed what failed
# ------------------------------------------------------------------------------------------
DEEP_EP = ["(Worker_TP0 pid=77) INFO 11-24 02:14:32 [__init__.py:231] Automatically detected platform cuda.",
           "(Worker_TP0 pid=77) WARNING 11-24 02:14:33 [import_utils.py:408] Module deep_ep was found but failed to "
           "import",
           "(Worker_TP0 pid=77) WARNING 11-24 02:14:33 [import_utils.py:408] ImportError: /venv/deep_ep_cpp.cpython-312-"
           "x86_64-linux-gnu.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs"]
WENT_ON = "(Worker_TP0 pid=77) INFO 11-24 02:14:36 [parallel_state.py:1] rank 0 in world size 2 is assigned as DP rank " \
          "0, PP rank 0, TP rank 0, EP rank 0"
KERNELS = "(Worker_TP{n} pid={pid}) ERROR 11-24 02:14:41 [multiproc_executor.py:772] AssertionError: DeepEP kernels not " \
          "found. Please install DeepEP kernels."


@pytest.mark.parametrize("after, phase", [
    ([WENT_ON, KERNELS.format(n=0, pid=77)], "distributed_init"),   # its process joined the group, then missed it
    ([KERNELS.format(n=0, pid=77)], "startup"),                     # near miss: its process went on to nothing
])
def test_a_fault_at_the_start_its_process_went_past_takes_the_phase_where_it_bit(tmp_path, after, phase):
    a = analyze_files(tmp_path, {"gpu-a1/vllm.log": text_of(*DEEP_EP, *after)})
    root = root_of(a)
    assert (root.sig, root.line, root.phase) == ("undefined-symbol", 3, phase)


# ------------------------------------------------------------------------------------------
# a failing check explains a crash loop's earlier attempt on the node whose later start restates it
# ------------------------------------------------------------------------------------------
def _net(t: str, host: str, net: str, pid: int) -> list[str]:
    return [f"(APIServer pid={pid}) INFO 12-09 {t} [api_server.py:1] vLLM API server version 0.27.1",
            f"{host}:{pid}:{pid + 30} [0] NCCL INFO Using network {net}",
            f"(Worker_TP0 pid={pid}) INFO 12-09 {t} [gpu_worker.py:97] Loading model weights"]


INTERNAL = "(Worker_TP0 pid=179) ERROR 12-09 06:03:55 [multiproc_executor.py:684] RuntimeError: NCCL error: internal " \
           "error - please report this issue to the NCCL developers"


@pytest.mark.parametrize("later_on, category", [("gpu-b", "nccl.ib_transport"),   # its node's next start restates it
                                                ("gpu-c", "other")])              # near miss: another node's start
def test_a_failing_check_explains_an_earlier_attempt_on_the_node_whose_next_start_restates_the_state(
        tmp_path, later_on, category):
    files = {"gpu-a/vllm.log": text_of(*_net("06:04:50", "gpu-a", "IB", 204)),
             "gpu-b/previous.log": text_of(INTERNAL),
             f"{later_on}/vllm.log": text_of(*_net("06:04:57", later_on, "Socket", 161))}
    assert root_of(analyze_files(tmp_path, files)).category == category


@pytest.mark.parametrize("named, node", [("10.31.4.32", "gpu-w2"),    # the message below names the raiser's node
                                         ("10.31.4.99", None)])       # near miss: an address tied to no node
def test_an_exception_whose_message_names_its_process_node_is_that_nodes(tmp_path, named, node):
    out = ["[job] 418822 on gpu-h1,gpu-w2", "Traceback (most recent call last):",
           '  File "/usr/local/lib/python3.12/dist-packages/ray/_private/utils.py", line 1581, in check_version_info',
           "    raise RuntimeError(error_message)",
           "RuntimeError: Version mismatch: The cluster was started with:", "    Ray: 2.59.1", "    Python: 3.12.11",
           f"This process on node {named} was started with:", "    Ray: 2.56.0", "    Python: 3.12.11"]
    root = root_of(analyze_files(tmp_path, {"slurm-418822.out": text_of(*out),
                                            "hosts.txt": "10.31.4.31 gpu-h1\n10.31.4.32 gpu-w2\n"}))
    assert (root.sig, root.line, root.node) == ("ray-version-mismatch", 5, node)


# ------------------------------------------------------------------------------------------
# a wait for resources the deployment got past, stated by it and by Ray's autoscaler, is survived
# ------------------------------------------------------------------------------------------
ENGINE = "(EngineCore pid=4302) {level} 09-22 {t} [ray_utils.py:338] "
WAITED = [ENGINE.format(level="WARNING", t="09:31:20") + "The number of required GPUs exceeds the total number of "
          "available GPUs in the placement group.",
          ENGINE.format(level="INFO", t="09:31:50") + "Waiting for creating a placement group of specs for 30 seconds.",
          "(EngineCore pid=4302) (autoscaler +47s) Warning: The following resource request cannot be scheduled right "
          "now: {'GPU': 1.0}. This is likely due to all cluster resources being claimed by actors.",
          ENGINE.format(level="INFO", t="09:45:37") + "GPU KV cache size: 2,981,376 tokens",
          "(APIServer pid=4187) INFO 09-22 09:46:12 [api_server.py:1] Application startup complete.",
          "(APIServer pid=4187) INFO 09-22 09:46:25 [loggers.py:259] Engine 000: Avg prompt throughput: 8914.4 tokens/s, "
          "Avg generation throughput: 1148.4 tokens/s, Running: 48 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.1%"]
AUTOSCALER = "2026-09-22 {t},102\tWARNING resource_demand_scheduler.py:791 -- The autoscaler could not find a node type " \
             "to satisfy the request: [{{'GPU': 1.0}}].\n" + "\n".join(
                 ["======== Autoscaler status: 2026-09-22 09:32:02.086560 ========", "Node status", "-" * 63, "Active:",
                  " 1 headgroup", "Pending:", " 10.72.15.22: b200, uninitialized", "Recent failures:", " (no failures)",
                  "Demands:", " {{'GPU': 1.0}} * 16 (PACK): 1+ pending placement groups"])


@pytest.mark.parametrize("autoscaler_at, again, healthy", [
    ("09:31:55", False, True),    # its own restatement and the autoscaler's, before it went on: the same wait
    ("09:31:55", True, False),    # near miss: the shortage again once it had gone on
])
def test_a_wait_for_gpus_the_engine_got_past_is_survived_whoever_restates_it_meanwhile(tmp_path, autoscaler_at, again,
                                                                                      healthy):
    later = [ENGINE.format(level="WARNING", t="09:46:40") + "The number of required GPUs exceeds the total number of "
             "available GPUs in the placement group."] if again else []
    a = analyze_files(tmp_path, {"gpu-b200-03/vllm-serve.log": text_of(*WAITED, *later),
                                 "gpu-b200-03/autoscaler.log": AUTOSCALER.format(t=autoscaler_at) + "\n"})
    assert a.decision.healthy == healthy


@pytest.mark.parametrize("joined, survived", [(True, True),     # `ray start` got through on its next try
                                              (False, False)])  # near miss: it never reached the head
def test_a_ray_node_that_could_not_reach_the_gcs_survived_it_once_its_ray_runtime_started(tmp_path, joined, survived):
    lines = ["2025-10-21 08:37:46,884\tINFO scripts.py:1047 -- Local node IP: 10.244.8.19",
             "ConnectionError: Failed to connect to GCS at address 10.244.7.31:6379 within 5 seconds.",
             "2025-10-21 08:38:12,513\tINFO scripts.py:1047 -- Local node IP: 10.244.8.19"]
    lines += ["2025-10-21 08:38:13,813\tSUCC scripts.py:1078 -- Ray runtime started."] if joined else []
    a = analyze_files(tmp_path, {"gpu-b/ray-worker.log": text_of(*lines)})
    f = finding(a, "ray-node-cannot-reach-gcs")
    assert (f.set_aside is not None) == survived


@pytest.mark.parametrize("line, cause", [
    ("W1022 13:42:55.495129 3391 watcher.go:93] Error while processing event: inotify_add_watch "
     "/sys/fs/cgroup/kubepods.slice: no space left on device", False),   # the watch limit: no disk is full
    ("E1022 13:42:55.495129 3391 kubelet.go:93] failed to write /var/lib/kubelet/pods/x/volumes/cache/a1b2: no "
     "space left on device", True)])                                       # near miss: a write to a full disk
def test_inotify_s_no_space_left_is_its_watch_limit_not_a_full_disk(tmp_path, line, cause):
    a = analyze_files(tmp_path, {"gpu-a1/kubelet.log": line + "\n"})
    assert any(f.category == "storage.disk_full" for f in a.decision.findings) == cause


@pytest.mark.parametrize("went_on, root", [(True, "other"), (False, "nccl.bootstrap")])
def test_a_retried_connect_its_process_went_on_from_in_the_same_second_is_no_cause(tmp_path, went_on, root):
    # near miss: the retry is the last its process printed before the start failed: it stays the fallback symptom
    w0, w1 = "(Worker_TP0 pid=173) ", "(Worker_TP1 pid=178) "
    lines = [w0 + "[W1120 09:44:19.874527131 socket.cpp:755] [c10d] The client socket has failed to connect to "
                  "[localhost]:29500 (errno: 111 - Connection refused).",
             w1 + "INFO 11-20 09:44:20 [parallel_state.py:1] rank 1 in world size 2 is assigned as DP rank 0, PP "
                  "rank 0, TP rank 1, EP rank 1",
             w1 + "ERROR 11-20 09:44:21 [multiproc_executor.py:597] WorkerProc failed to start.",
             w1 + "ERROR 11-20 09:44:21 [multiproc_executor.py:597] Traceback (most recent call last):",
             w1 + "ERROR 11-20 09:44:21 [multiproc_executor.py:597]   File \"/opt/acme/guard.py\", line 41, in __init__",
             w1 + "ERROR 11-20 09:44:21 [multiproc_executor.py:597] KeyError: 'banned_phrases_file'"]
    if went_on:
        lines.insert(1, w0 + "INFO 11-20 09:44:20 [parallel_state.py:1] rank 0 in world size 2 is assigned as DP "
                             "rank 0, PP rank 0, TP rank 0, EP rank 0")
    assert root_of(analyze_files(tmp_path, {"vllm.log": "\n".join(lines) + "\n"})).category == root


@pytest.mark.parametrize("util, root", [(0.97, "oom.inference"),   # started with a fix that worked: a run of its own
                                        (0.85, "oom.kv_cache")])   # near miss: the same arguments again
def test_a_failed_start_its_node_was_started_again_after_with_other_arguments_is_not_the_later_failure(
        tmp_path, util, root):
    def start(t: str, u: float) -> str:
        return (f"(APIServer pid=1) INFO 12-03 {t} [api_server.py:1] vLLM API server version 0.27.0\n"
                f"(APIServer pid=1) INFO 12-03 {t} [utils.py:1] non-default args: {{'model_tag': 'm', "
                f"'gpu_memory_utilization': {u}}}")
    lines = [start("02:00:00", 0.85),
             "(EngineCore pid=181) ERROR 12-03 02:01:40 [core.py:911] ValueError: To serve at least one request with the "
             "model's max seq len (1048576), (38.62 GiB KV cache is needed, which is larger than the available KV cache "
             "memory (12.10 GiB). Based on the available memory, the estimated maximum model length is 327680. Try "
             "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
             start("02:02:20", util),
             "(APIServer pid=1) INFO 12-03 02:10:00 [launcher.py:1] Application startup complete.",
             "(APIServer pid=1) INFO 12-03 02:11:00 [loggers.py:1] Engine 000: Avg prompt throughput: 80.0 tokens/s, "
             "Avg generation throughput: 210.5 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 8.0%",
             "(Worker_TP5 pid=260) " + OOM.format(t="02:20:26", g=5).replace("08-11", "12-03")]
    assert root_of(analyze_files(tmp_path, {"b300/vllm.log": text_of(*lines)})).category == root


@pytest.mark.parametrize("announced, phase", [(True, "serving"),    # told the day before, it happened while serving
                                              (False, "serving")])  # near miss: the reboot's own line, as it happened
def test_a_reboot_announced_for_a_moment_is_placed_in_the_phase_that_moment_was_in(tmp_path, announced, phase):
    journal = (["Nov 18 06:27:48 gpu-b systemd-logind[998]: The system will reboot at Thu 2026-11-19 02:00:00 UTC!"]
               if announced else []) + ["Nov 19 02:00:00 gpu-b systemd-logind[998]: System is rebooting."]
    api = "(APIServer pid=1) INFO 11-18 {t} [{f}] {m}"
    log = [api.format(t="14:00:00", f="api_server.py:1", m="vLLM API server version 0.27.0"),
           api.format(t="14:10:00", f="launcher.py:1", m="Application startup complete."),
           api.format(t="23:50:00", f="loggers.py:1", m="Engine 000: Avg prompt throughput: 80.0 tokens/s, Avg "
                      "generation throughput: 210.5 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: "
                      "8.0%")]
    a = analyze_files(tmp_path, {"gpu-b/vllm.log": text_of(*log), "gpu-b/journal.txt": text_of(*journal)})
    root = root_of(a)
    assert (root.category, root.line, root.phase, a.decision.outcome.state) == ("infra.node_lost", 1, phase,
                                                                                 "crashed")
