"""sniff: a file's kind and wrapper chain come from its content alone, each with a one-line reason."""
from __future__ import annotations

import codecs
import json
import random

import pytest

from conftest import make_bundle
from k3logs.ingest.discover import Bundle
from k3logs.ingest.streams import peek
from k3logs.ingest.sniff import HEAD_BYTES, sniff


def lines(*ls: str) -> bytes:
    return ("\n".join(ls) + "\n").encode()


VLLM_PREFIXED = [
    "(APIServer pid=1) INFO 08-11 07:35:59 [api_server.py:1839] vLLM API server version 0.10.1",
    "(APIServer pid=1) INFO 08-11 07:35:59 [utils.py:233] non-default args: {'model': 'org/m-8b'}",
    "(EngineCore_DP0 pid=77) INFO 08-11 07:36:02 [core.py:61] Initializing a V1 LLM engine (v0.10.1) with config: x",
    "(EngineCore_DP0 pid=77) INFO 08-11 07:36:03 [parallel_state.py:1206] rank 0 in world size 1 is assigned as "
    "DP rank 0, PP rank 0, TP rank 0, EP rank 0",
    "(APIServer pid=1) INFO:     Application startup complete.",
]

SAMPLES = {
    "vllm_plain": (lines(
        "INFO 08-11 07:35:59 [__init__.py:244] Automatically detected platform cuda.",
        "INFO 08-11 07:35:59 [api_server.py:1912] vLLM API server version 0.11.0",
        "WARNING 08-11 07:36:02 [config.py:1339] Default sampling parameters have been overridden.",
        "INFO 08-11 07:36:05 [gpu_model_runner.py:2338] Starting to load model org/m-8b..."), "vllm", ()),
    "vllm_v07_no_brackets": (lines(
        "INFO 08-11 07:35:59 api_server.py:712] vLLM API server version 0.7.3",
        "INFO 08-11 07:35:59 config.py:542] This model supports multiple tasks.",
        "WARNING 08-11 07:36:02 arg_utils.py:1135] Chunked prefill is enabled by default."), "vllm", ()),
    "vllm_ansi_prefixes": (lines(*("\x1b[1;36m" + ln.replace(") ", ")\x1b[0;0m ", 1) for ln in VLLM_PREFIXED)),
                           "vllm", ()),
    "vllm_docker_json": (lines(*(json.dumps({"log": ln + "\n", "stream": "stdout",
                                             "time": f"2026-08-11T07:35:5{i}.50133Z"}, separators=(",", ":"))
                                 for i, ln in enumerate(VLLM_PREFIXED))), "vllm", ("docker_json",)),
    "vllm_cri": (lines(*(f"2026-08-11T07:35:5{i}.123456789Z stdout F {ln}" for i, ln in enumerate(VLLM_PREFIXED))),
                 "vllm", ("cri",)),
    "vllm_journald": (lines(*(f"Aug 11 07:35:5{i} gpu-node-07 vllm[4410]: {ln}"
                              for i, ln in enumerate(VLLM_PREFIXED))), "vllm", ("journald",)),
    "vllm_mixed_with_nccl_info": (lines(
        "INFO 08-11 07:35:59 [__init__.py:244] Automatically detected platform cuda.",
        *[f"gpu-node-07:4121:41{i:02d} [0] NCCL INFO Channel {i:02d}/0 : 0[0] -> 1[1] via P2P/CUMEM" for i in range(8)],
        "INFO 08-11 07:36:41 [gpu_model_runner.py:1291] Model loading took 15.2 GiB"), "vllm", ()),
    "nccl_debug_file": (lines(
        "gpu-node-07:4121:4121 [0] NCCL INFO Bootstrap : Using eth0:10.0.3.17<0>",
        "gpu-node-07:4121:4121 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
        "gpu-node-07:4121:4187 [0] NCCL INFO comm 0x55d0c8a3e2b0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0",
        "",
        "[2026-08-11 07:52:03] gpu-node-07:4121:4190 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: "
        "Connect to 10.0.3.18<41275> failed : Connection refused"), "nccl", ()),
    "torchrun": (lines(
        "W0811 07:35:50.060000 4321 torch/distributed/run.py:779] ",
        "W0811 07:35:50.060000 4321 torch/distributed/run.py:779] *****************************************",
        "E0811 07:52:04.512000 4321 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -6) "
        "local_rank: 3 (pid: 4325) of binary: /opt/venv/bin/python3",
        "Traceback (most recent call last):",
        '  File "/opt/venv/bin/torchrun", line 8, in <module>',
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "Root Cause (first observed failure):"), "torch", ()),
    "torch_c10_watchdog": (lines(
        "[rank3]:[E811 07:52:03.412207911 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600020 milliseconds",
        "[rank3]:[E811 07:52:03.412900001 ProcessGroupNCCL.cpp:1664] [PG 0 Rank 3] Exception (either an error or "
        "timeout) detected by watchdog at work: 808"), "torch", ()),
    "dmesg_raw": (lines(
        "[    0.000000] Linux version 6.8.0-45-generic (buildd@host) #45-Ubuntu SMP",
        "[ 2207.551903] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "[ 2207.552000] NVRM: GPU 0000:18:00.0: GPU has fallen off the bus."), "kernel", ()),
    "dmesg_T": (lines(
        "[Mon Aug 11 07:35:59 2026] mlx5_core 0000:9a:00.0 mlx5_3: Port: 1 Link DOWN",
        "[Mon Aug  4 07:36:01 2026] NVRM: Xid (PCI:0000:18:00): 48, pid=4410, name=pt_main_thread, DBE"), "kernel", ()),
    "dmesg_iso": (lines(
        "2026-08-11T07:35:59,412207+00:00 NVRM: GPU at PCI:0000:18:00: GPU-5f2b8e1c-0d3e",
        "2026-08-11T07:36:00,000001+00:00 NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."), "kernel", ()),
    "journalctl_k": (lines(
        "Aug 11 07:35:59 gpu-node-07 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>",
        "Aug 11 07:35:59 gpu-node-07 kernel: mlx5_core 0000:9a:00.0 mlx5_3: Port: 1 Link DOWN",
        "Aug 11 07:36:10 gpu-node-07 kernel: Out of memory: Killed process 4410 (python3)"), "kernel", ("journald",)),
    "journal_of_a_service": (lines(
        "Aug 11 07:35:59 gpu-node-07 kubelet[912]: I0811 07:35:59.000000     912 kubelet.go:2410] SyncLoop ADD",
        "Aug 11 07:36:00 gpu-node-07 systemd[1]: Started containerd.service.",
        "Aug 11 07:36:01 gpu-node-07 containerd[880]: time=\"2026-08-11T07:36:01Z\" level=info msg=\"ok\""),
        "journal", ("journald",)),
    "ray": (lines(
        "2026-08-11 07:35:41,418\tINFO worker.py:1841 -- Connecting to existing Ray cluster at address: 10.0.3.17:6379",
        "(raylet, ip=10.0.3.18) A worker died or was killed while executing a task by an unexpected system error.",
        "(MapWorker(MapBatches(Stage)) pid=5121, ip=10.0.3.18) hello [repeated 6x across cluster]",
        "[2026-08-11 07:35:41,418 E 5121 5180] core_worker.cc:215: Failed to register worker to Raylet"), "ray", ()),
    "k8s_events": (lines(
        "LAST SEEN   TYPE      REASON             OBJECT                 MESSAGE",
        "2m          Warning   FailedScheduling   pod/vllm-decode-0      0/4 nodes are available: 4 Insufficient gpu.",
        "5m          Normal    Scheduled          pod/vllm-prefill-0     Successfully assigned default/p to gpu-w-1"),
        "k8s_events", ()),
    # `-o custom-columns` with the times first: the time column is peeled like any RFC 3339 stamp
    "k8s_events_columns": (lines(
        "FIRST                 LAST                  TYPE      REASON      OBJECT         SOURCE        MESSAGE",
        "2026-10-27T09:40:58Z  2026-10-27T09:40:58Z  Normal    Scheduled   kimi-k3-0      <none>        Successfully "
        "assigned k3/kimi-k3-0 to b200-k3-n05",
        "2026-10-27T09:41:00Z  2026-10-27T09:41:00Z  Normal    Started     kimi-k3-0      b200-k3-n05   Started container",
        "2026-10-27T09:41:41Z  2026-10-27T09:43:10Z  Warning   BackOff     kimi-k3-0-1    b200-k3-n06   Back-off "
        "restarting failed container"),
        "k8s_events", ("rfc3339",)),
    "vllm_journald_json": (lines(*(json.dumps({"__CURSOR": f"s=1;i={i}", "__REALTIME_TIMESTAMP": f"17610263{i}0000000",
                                               "_HOSTNAME": "inf-l40s-07", "SYSLOG_IDENTIFIER": "vllm", "_PID": "1187",
                                               "MESSAGE": ln})
                                   for i, ln in enumerate(VLLM_PREFIXED))), "vllm", ("journald_json",)),
    # the same with colour codes: journald writes such a MESSAGE as an array of its bytes
    "vllm_journald_json_bytes": (lines(*(json.dumps({"__REALTIME_TIMESTAMP": f"17610263{i}0000000", "_PID": "1187",
                                                     "MESSAGE": list(f"\x1b[36m{ln}\x1b[0m".encode())})
                                         for i, ln in enumerate(VLLM_PREFIXED))), "vllm", ("journald_json",)),
    "kernel_journald_json": (lines(*(json.dumps({"MESSAGE": m, "_HOSTNAME": "gpu-node-07", "SYSLOG_IDENTIFIER": "kernel",
                                                 "__REALTIME_TIMESTAMP": "1761026333000000"}) for m in (
        "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "mlx5_core 0000:9a:00.0 mlx5_3: Port: 1 Link DOWN"))), "kernel", ("journald_json",)),
    "vllm_srun_label": (lines("+ srun -l --ntasks-per-node=8 python serve.py", *(f"{i}: {ln}" for i, ln in enumerate(
        VLLM_PREFIXED))), "vllm", ("srun_label",)),
    "vllm_datadog_csv": (lines("Date,Host,Service,Status,pod_name,Message", *(
        f'2026-08-11T07:35:{i:02d}.000Z,aks-h100pool-4181-vmss000004,llama405,info,llama405-0,'
        f'"{ln.replace(chr(34), 2 * chr(34))}, ok"' for i, ln in enumerate(VLLM_PREFIXED))), "vllm", ("datadog_csv",)),
    # Kibana's Discover as CSV: every cell quoted, its own date format (the browser's zone), newest row first
    "vllm_kibana_csv": (lines('"@timestamp","host.name","kubernetes.pod.name","message"', *(
        f'"Aug 4, 2026 @ 13:19:{59 - i:02d}.018","aks-gpuh100-3187-vmss000004","qwen3-32b-vllm-7c4d8f9b6-q8r5m",'
        f'"{ln.replace(chr(34), 2 * chr(34))}"' for i, ln in enumerate(VLLM_PREFIXED))), "vllm", ("kibana_csv",)),
    # ... or as Kibana's CSV report writes it now: a cell quoted only where it holds a comma or a quote
    "vllm_kibana_csv_minimal_quotes": (lines("@timestamp,host.name,log.file.path,message", *(
        f'"Nov 19, 2026 @ 15:45:{59 - i:02d}.489",gb3-r07-t03,/var/log/k3serve/4471923-gb3-r07-t03.log,{ln}'
        for i, ln in enumerate(VLLM_PREFIXED))), "vllm", ("kibana_csv",)),
    # a shipper's documents themselves (a search's hits' `_source`), Elastic Common Schema: filebeat's kernel lines
    "kernel_ecs_document": (lines(*(json.dumps({
        "@timestamp": f"2026-11-19T14:44:{48 + i:02d}.622Z", "agent": {"type": "filebeat"}, "host": {"name": "gb3-r07-t03"},
        "log": {"file": {"path": "/var/log/kern.log"}}, "message": m, "process": {"name": "kernel"}}) for i, m in enumerate((
            "NVRM: Xid (PCI:0009:01:00): 119, pid=48213, name=pt_main_thread, Timeout after 6s of waiting for RPC",
            "mlx5_core 0000:9a:00.0 mlx5_3: Port: 1 Link DOWN")))), "kernel", ("ecs_document",)),
    # a log router's logfmt records: a time first, the line in msg (its quotes escaped)
    "vllm_logfmt": (lines(*(f'time=2026-09-15T06:40:{i:02d}.411Z level=info host=k3-b300-a07 stream=stdout '
                            f'msg="{ln.replace(chr(34), chr(92) + chr(34))}"' for i, ln in enumerate(VLLM_PREFIXED))),
                    "vllm", ("logfmt",)),
    "vllm_kubectl_prefix": (lines(*(f"[pod/k3-0-1/vllm-worker] {ln}" for ln in VLLM_PREFIXED)), "vllm",
                            ("kubectl_prefix",)),
    "k8s_events_last_column": (lines(
        "LAST                   TYPE      REASON              OBJECT                        MESSAGE",
        "2026-07-21T13:01:12Z   Normal    Scheduled           kimi-k3-6d8f7c9b54-q2xlm      Successfully assigned",
        "2026-07-21T13:02:37Z   Normal    Started             kimi-k3-6d8f7c9b54-q2xlm      Started container vllm",
        "2026-07-21T13:04:51Z   Warning   Unhealthy           kimi-k3-6d8f7c9b54-q2xlm      Readiness probe failed"),
        "k8s_events", ("rfc3339",)),
}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_kind_and_wrappers_come_from_the_content(name):
    data, kind, wrappers = SAMPLES[name]
    s = sniff(data)
    assert (s.kind, s.wrappers) == (kind, wrappers), s.reason
    assert s.reason and "\n" not in s.reason
    assert not s.is_dump


@pytest.mark.parametrize("name", list(SAMPLES))
def test_a_copy_through_windows_is_sniffed_the_same(name):
    data, kind, wrappers = SAMPLES[name]
    s = sniff(data.replace(b"\n", b"\r\n"))
    assert (s.kind, s.wrappers) == (kind, wrappers), s.reason


@pytest.mark.parametrize("name", list(SAMPLES))
def test_reason_counts_never_exceed_the_lines_read(name):
    data, kind, _ = SAMPLES[name]
    s = sniff(data)
    hits, n = s.reason.rsplit(f"{kind} lines ", 1)[1].split(" ")[0].split("/")
    assert 0 < int(hits) <= int(n)


SCRIPT = ["curl: (7) Failed to connect to 10.1.2.11 port 8000 after 0 ms: Couldn't connect to server",
          "[serve] /health not ready yet, sleeping 10s"]


@pytest.mark.parametrize("labelled, wrappers", [
    ([f"{t}: {ln}" for ln in VLLM_PREFIXED for t in (0, 1)], ("srun_label",)),   # two tasks' lines among the script's
    ([f"{i}: {ln}" for i, ln in enumerate(VLLM_PREFIXED * 2)], ())])   # near miss: a numbered list, no label repeats
def test_a_batch_job_s_task_labels_among_its_script_s_own_lines_are_a_wrapper(labelled, wrappers):
    data = lines(*(x for ln in labelled for x in [ln] + SCRIPT))   # (a third of the lines labelled)
    assert sniff(data).wrappers == wrappers


def test_nvidia_smi_table_is_a_dump():
    smi = lines(
        "Mon Aug 11 07:35:59 2026       ",
        "+-----------------------------------------------------------------------------------------+",
        "| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |",
        "|-----------------------------------------+------------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "|=========================================+========================+======================|",
        "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |",
        "+-----------------------------------------+------------------------+----------------------+")
    s = sniff(smi)
    assert (s.kind, s.is_dump) == ("nvidia_smi", True) and s.reason


SMI_TABLE = ["Mon Aug 11 07:35:59 2026       ",
             "+-----------------------------------------------------------------------------------------+",
             "| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |",
             "|-----------------------------------------+------------------------+----------------------+",
             "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
             "|=========================================+========================+======================|"] + [
             f"|   {i}  NVIDIA H100 80GB HBM3          On  |   00000000:{18 + i}:00.0 Off |                    0 |"
             for i in range(8)] + ["+-----------------------------------------+------------------------+"] * 30


@pytest.mark.parametrize("label", ["", "0: "])   # as it is, and as `srun -l` labels each task's lines
@pytest.mark.parametrize("log_lines, kind", [(120, "vllm"),    # a job's output: its script's nvidia-smi, then the log
                                             (6, "nvidia_smi")])  # near miss: a dump with a few log lines after it
def test_a_log_that_opens_with_a_dump_is_the_log(label, log_lines, kind):
    log = [f"{label}INFO 03-06 16:39:{i % 60:02d} [llm_engine.py:234] Initializing a V0 LLM engine (v0.7.3)"
           for i in range(log_lines)]
    s = sniff(lines(*SMI_TABLE, *log))
    assert s.kind == kind, s.reason


def test_binary_data_is_binary():
    s = sniff(bytes(range(256)) * 8)
    assert s.kind == "binary" and "control bytes" in s.reason and not s.parsed_as_log


def test_empty_and_blank_files_are_empty():
    assert sniff(b"").kind == "empty" and sniff(b"").reason == "empty file"
    assert sniff(b"  \n\n\t\n").kind == "empty" and sniff(b"  \n\n").reason == "only whitespace"


def test_unknown_text_is_a_plain_log_with_a_reason():
    s = sniff(lines("hello there", "this is a note about the incident", "nothing to see here"))
    assert s.kind == "log" and s.wrappers == () and "no known format" in s.reason


def test_a_line_or_two_of_a_format_among_other_text_is_plain_text():
    # a Ray job's runtime env (one line shaped like Ray's logger), a unit file, notes quoting a log line
    runtime_env = lines("# submitted with: ray job submit --address http://10.3.12.40:8265 -- bash -c \"$ENTRYPOINT\"",
                        "env_vars:", "  VLLM_ARGS: >-", "    --tensor-parallel-size 16 --pipeline-parallel-size 2",
                        "    --max-model-len 65536 --gpu-memory-utilization 0.92", "    --max-num-seqs 128",
                        "  ENTRYPOINT: vllm serve meta-llama/Llama-3.1-405B-Instruct-FP8 $VLLM_ARGS")
    notes = lines("# what we saw", *["- the server restarted twice, then hung"] * 10,
                  "INFO 08-11 07:35:59 [api_server.py:1839] vLLM API server version 0.10.1", "- nothing else")
    for data in (runtime_env, notes):
        s = sniff(data)
        assert (s.kind, s.wrappers) == ("log", ()) and "no known format on most lines" in s.reason, s.reason
    # a program's output in a wrapper is that program's, whatever else it prints
    journal = lines(*[f"Aug 11 07:35:5{i % 10} h1 vllm[4121]: Collecting dependency {i}" for i in range(30)],
                    "Aug 11 07:35:59 h1 vllm[4121]: INFO 08-11 07:35:59 [api_server.py:1839] vLLM API server version 0.10.1")
    assert sniff(journal).kind == "vllm"


TB = ["Traceback (most recent call last):", '  File "/opt/conda/bin/torchrun", line 8, in <module>', "    sys.exit(main())",
      "             ^^^^^^", '  File "/opt/conda/lib/python3.12/site-packages/torch/distributed/run.py", line 919, in main',
      "    run(args)"] * 4


def test_a_crash_log_that_is_mostly_its_traceback_is_the_programs_log():
    glog = [f"W0304 07:31:12.118000 41233 torch/distributed/run.py:793] line {i}" for i in range(4)]
    s = sniff(lines("+ torchrun --nnodes 2 gen_batch.py", *glog, *TB,
                    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
                    "address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use"))
    assert s.kind == "torch" and not s.prose, s.reason


def test_near_miss_a_note_quoting_a_traceback_and_one_log_line_stays_plain_text():
    s = sniff(lines("# what the on-call pasted", *TB, "W0304 07:31:12.118000 41233 torch/distributed/run.py:793] x",
                    "- restarted it by hand"))
    assert s.prose and "no known format on most lines" in s.reason, s.reason


def test_one_line_with_its_indented_continuation_is_that_format():
    # the file is that line: a kernel message wrapped onto a second, indented line is a kernel log
    wrapped = lines("[ 8123.220114] NVRM: API mismatch: the client has the version 580.82.07, but",
                    "               NVRM: this kernel module has the version 570.124.06.")
    assert sniff(wrapped).kind == "kernel"
    # near miss: the same line followed by a line of prose is a quote of it
    quoted = lines("[ 8123.220114] NVRM: API mismatch: the client has the version 580.82.07, but",
                   "we saw this after the upgrade")
    assert sniff(quoted).kind == "log"
    # two lines of two known formats are a log, not a quote
    two = lines("(Worker_TP0 pid=101) INFO 08-11 10:00:00 [parallel_state.py:1] rank 0 in world size 2",
                "[rank0]:[E811 10:10:05.412207911 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective")
    assert sniff(two).kind == "vllm" and not sniff(two).prose


def test_utf16_text_with_a_bom_is_text_not_binary():
    data = codecs.BOM_UTF16_LE + SAMPLES["dmesg_raw"][0].decode().encode("utf-16-le")
    assert sniff(data).kind == "kernel"


def test_a_few_vllm_lines_decide_against_many_library_lines():
    data, kind, _ = SAMPLES["vllm_mixed_with_nccl_info"]
    assert "also nccl" in sniff(data).reason


@pytest.mark.parametrize("name", ["k8s_events", "k8s_events_columns", "k8s_events_last_column"])
def test_every_line_of_kubectl_events_is_recognised(name):
    data, _, _ = SAMPLES[name]
    n = len(data.splitlines())
    assert sniff(data).reason.endswith(f"k8s_events lines {n}/{n}")


def test_only_the_head_is_needed():
    data, _, _ = SAMPLES["nccl_debug_file"]
    big = data * 5000  # far more than the head sniff reads
    assert sniff(big[:64 * 1024]).kind == "nccl"


@pytest.mark.parametrize("name", ["nccl_debug_file", "dmesg_raw", "vllm_cri", "k8s_events"])
def test_file_names_play_no_part(name, tmp_path):
    data, kind, wrappers = SAMPLES[name]
    names = ("vllm.log", "nccl.gpu-node-07.4121.log", "dmesg.txt", "events.yaml", "0.log", "noext")
    got = {}
    for m in Bundle(make_bundle(tmp_path, {n: data for n in names})).members():
        head, _ = peek(m.stream, HEAD_BYTES)
        s = sniff(head, m.size)
        got[m.path] = (s.kind, s.wrappers)
    assert set(got) == set(names)
    assert set(got.values()) == {(kind, wrappers)}


def test_utf8_bom_does_not_hide_the_first_line():
    data = b"\xef\xbb\xbf" + SAMPLES["dmesg_T"][0]
    s = sniff(data)
    assert s.kind == "kernel" and s.reason.endswith("kernel lines 2/2")


def test_random_bytes_are_binary_however_they_fall():
    # 1 in 60 random buffers used to pass for text (11% control bytes against a 10% threshold): a flaky CI
    rng = random.Random(20261130)
    texts = [i for i in range(3000) if sniff(rng.randbytes(5000)).kind != "binary"]
    assert texts == []


@pytest.mark.parametrize("line, captures", [
    ('{"model": "moonshotai/Kimi-K3", "messages": [{"role": "user", "content": "hi"}]}', True),
    ('{"request_id": "q1", "body": "{\\"model\\": \\"m\\", \\"messages\\": []}"}', True),  # body as a string
    ('{"id": "x", "response": {"choices": [{"message": {"role": "assistant"}}]}}', True),
    ('{"log":"{\\"messages\\": []}\\n","stream":"stdout","time":"2026-08-11T07:35:59.000000001Z"}', False),
    ('{"level": "info", "msg": "server started"}', False),
])
def test_captured_requests_are_captures_never_log_lines(line, captures):
    got = sniff(((line + "\n") * 3).encode())
    assert (got.kind == "captures") == captures, got
    assert got.parsed_as_log != captures  # a prompt quoting an error is not that error


def test_a_dump_whose_lines_start_like_task_labels_is_that_dump():
    # `ip -o link`: every line starts 'N: ', as an `srun -l` label would
    s = sniff(lines("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT",
                    "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT",
                    "3: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4092 qdisc mq state UP mode DEFAULT"))
    assert (s.kind, s.wrappers, s.is_dump) == ("ip_addr", (), True)


def test_pdsh_output_is_each_hosts_lines_behind_its_name():
    s = sniff(lines("gpu-n03: INFO 11-19 13:58:07 [core.py:1] step", "gpu-n04: INFO 11-19 13:58:07 [core.py:1] step",
                    "gpu-n03: ERROR 11-19 13:58:08 [core.py:2] boom"))
    assert s.wrappers == ("pdsh",)
    # near misses: a traceback's dotted exception names, and `ifconfig`'s interfaces (a dump)
    assert "pdsh" not in sniff(lines("jinja2.exceptions.TemplateSyntaxError: Unexpected end of template.",
                                     "jinja2.exceptions.TemplateSyntaxError: Unexpected end of template.")).wrappers
    s = sniff(lines("eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500",
                    "        inet 10.0.0.4  netmask 255.255.255.0  broadcast 10.0.0.255",
                    "ib0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 4092",
                    "        inet 10.1.0.4  netmask 255.255.255.0  broadcast 10.1.0.255"))
    assert "pdsh" not in s.wrappers
    # and a dump each host printed behind its label (pdsh's `env` of every node) stays that dump
    s = sniff(lines(*(f"{h}: {kv}" for h in ("gpu-n03", "gpu-n04")
                      for kv in ("NCCL_DEBUG=WARN", "NCCL_IB_HCA=mlx5_0,mlx5_1", "NCCL_SOCKET_IFNAME=bond0"))))
    assert "pdsh" not in s.wrappers


def test_a_drivers_name_in_a_journal_of_the_kernels_lines_is_no_hosts_label():
    """`journalctl -k | grep SXid`: every line's text begins 'nvidia-nvswitch2: ', which looks like a pdsh label; the
    journal's host is the line's. Near miss: pdsh's output of a unit's journal, labels before the journal's lines."""
    sxid = "Nov 23 05:04:56 gpu-b07 kernel: nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 33"
    assert sniff(lines(sxid, sxid.replace("Link 33", "Link 34"))).wrappers == ("journald",)
    vllm = "Nov 23 05:31:21 gpu-b07 vllm[38702]: INFO 11-23 05:31:21 [core.py:1] step"
    assert sniff(lines(*(f"gpu-b0{i}: {vllm}" for i in (6, 7)))).wrappers == ("pdsh", "journald")



def test_a_units_name_in_a_journal_is_no_hosts_label():
    """A unit's own lines in its journal begin 'k3-dp1.service: ', which looks like a pdsh label (a name with a
    digit); the journal's host is the line's. Near miss: pdsh's output of the unit's journal, labels outermost."""
    unit = [f"Nov 18 07:0{i}:40 gpu-a2 systemd[1]: k3-dp1.service: Scheduled restart job, restart counter is at {i}."
            for i in range(1, 5)]
    assert sniff(lines(*unit)).wrappers == ("journald",)
    assert sniff(lines(*(f"gpu-a2: {u}" for u in unit))).wrappers == ("pdsh", "journald")

def test_a_long_log_in_an_applications_format_skips_the_dump_detectors(monkeypatch):
    import k3logs.ingest.sniff as sniff_module
    calls = []
    real = sniff_module.sniff_dump
    monkeypatch.setattr(sniff_module, "sniff_dump", lambda text: calls.append(1) or real(text))
    log = "".join(f"INFO 08-11 07:36:{i % 60:02d} [core.py:{i}] step {i}\n" for i in range(60)).encode()
    assert sniff(log).kind == "vllm" and calls == []
    # near miss: a monitoring CSV whose rows start with a time is still read as the dump it is
    csv = "timestamp, gpu_bus_id, pid, process_name, used_gpu_memory [MiB]\n" + "".join(
        f"2026/07/09 10:{i:02d}:00.394, 00000000:5D:00.0, 2871204, /usr/bin/python3, 3211 MiB\n" for i in range(50))
    assert sniff(csv.encode()).kind == "nvidia_smi_csv" and calls


GCLOUD_JSON = "[\n" + ",\n".join(
    '  {\n    "insertId": "c402e0da57000a",\n    "jsonPayload": {\n'
    f'      "message": "2026-09-22T13:41:{s:02d}.128422+00:00 a4x-k3-1 kernel: NVRM: Xid (PCI:0019:01:00): 119, pid=5321"\n'
    '    },\n    "timestamp": "2026-09-22T13:41:20.256422Z"\n  }' for s in (13, 7, 1)) + "\n]\n"


def test_a_json_export_s_message_fields_are_its_log_lines():
    sn = sniff(GCLOUD_JSON.encode())
    assert sn.wrappers == ("json_message_field", "journald_iso") and not sn.is_dump
    # near misses: a JSON document with no log line in it, and Kubernetes events whose messages carry no time of
    # their own, are dumps
    doc = json.dumps({"items": [{"message": "ok", "timestamp": "2026-09-22T13:41:20Z"}]}, indent=2)
    assert sniff(doc.encode()).wrappers == ()
    events = json.dumps({"items": [{"reason": "NodeNotReady", "message": f"Node gb300-n{i} status is now: NodeNotReady",
                                    "lastTimestamp": "2026-09-22T13:41:20Z"} for i in range(5)]}, indent=2)
    assert sniff(events.encode()).wrappers == ()


def test_a_log_groups_export_whose_messages_are_vllm_lines_is_read_through_its_message_fields():
    # (`aws logs get-log-events`: each event's message is a vLLM line, colour codes escaped in the JSON string)
    events = ",\n".join(
        '        {\n            "timestamp": 1795036213874,\n'
        f'            "message": "\\u001b[0;36m(Worker_TP5 pid=175)\\u001b[0;0m INFO 11-18 21:10:{s:02d} [core.py:1] '
        f'step {s}\\r",\n            "ingestionTime": 1795036215264\n        }}' for s in range(12))
    doc = '{\n    "events": [\n' + events + '\n    ]\n}\n'
    sn = sniff(doc.encode())
    assert sn.wrappers == ("json_message_field",) and sn.kind == "vllm" and not sn.is_dump
    # near miss: messages that are no application's log lines stay the document's fields
    plain = doc.replace("\\u001b[0;36m(Worker_TP5 pid=175)\\u001b[0;0m INFO 11-18 21:10:", "batch done, took ")
    assert sniff(plain.encode()).wrappers == ()


def test_a_loki_jsonl_export_is_read_through_its_line_with_the_labels_node():
    # (`logcli query -o jsonl`: newest first, the stream's labels name the node and the pod)
    rows = [json.dumps({"labels": {"container": "vllm", "node_name": "gpu-b300-r2-07", "pod": "kimi-k3-0"},
                        "line": f"(APIServer pid=1) INFO 12-03 03:47:{s:02d} [api_server.py:1] step {s}",
                        "timestamp": f"2026-12-03T03:47:{s:02d}.616565323Z"}) for s in range(20, 0, -1)]
    sn = sniff(("\n".join(rows) + "\n").encode())
    assert sn.wrappers == ("loki_jsonl",) and sn.kind == "vllm"
    # near miss: a JSON line with a "line" key but no stream labels is no Loki entry
    other = [json.dumps({"line": f"step {s}", "ts": s}) for s in range(20)]
    assert "loki_jsonl" not in sniff(("\n".join(other) + "\n").encode()).wrappers
