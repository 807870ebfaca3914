"""attribute: the node and the global rank (and GPU) of every event, learnt from the whole bundle: per-node
folders, host fields, Ray ip= resolved to hosts, rank-assignment lines joined by pid across files, NCCL
world communicators, torchelastic summaries, [rankN]: prefixes, worker names, and Xid PCI addresses."""
from __future__ import annotations

import io
import tarfile

import polars as pl
import pytest

from conftest import analyze_files, event_at, text_of
from k3logs.attribute import bus_key, nccl_bus, short_host
from k3logs.pipeline import run


def assigned(rank: int, world: int, pid: int, tp: int | None = None, pp: int = 0, t: str = "10:00:00") -> str:
    tp = rank if tp is None else tp
    return (f"(Worker_TP{tp} pid={pid}) INFO 08-11 {t} [parallel_state.py:1] rank {rank} in world size {world} is "
            f"assigned as DP rank 0, PP rank {pp}, TP rank {tp}, EP rank {tp}")


def nccl_init(host: str, pid: int, dev: int, rank: int, nranks: int, bus: str, comm: str = "0x55a83d106cf8") -> str:
    return (f"{host}:{pid}:{pid} [{dev}] NCCL INFO ncclCommInitRank comm {comm} rank {rank} nranks {nranks} "
            f"cudaDev {dev} nvmlDev {dev} busId {bus} commId 0x1 - Init START")


PLATFORM = "INFO 08-11 10:00:00 [__init__.py:239] Automatically detected platform cuda."
XID_9A = "[ 5000.100000] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


# ------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, want", [("9a000", "0000:9a:00"), ("18000", "0000:18:00"),
                                       ("801000", "0008:01:00"),     # GB200-style PCI domain 0008
                                       ("11b000", "0001:1b:00")])
def test_nccl_bus_id_is_normalised_to_dddd_bb_dd(raw, want):
    assert nccl_bus(raw) == want


def test_bus_key_and_short_host():
    assert bus_key(None, "9A", "00") == "0000:9a:00" and bus_key("00000000", "3b", "00") == "0000:3b:00"
    assert short_host("gpu-q22.cluster.local") == "gpu-q22" and short_host("10.0.3.18") == "10.0.3.18"
    assert short_host("") is None


# ------------------------------------------------------------------------------------------
# nodes
# ------------------------------------------------------------------------------------------
def test_node_from_per_node_folder(tmp_path):
    a = analyze_files(tmp_path, {"node-a/vllm.log": text_of(PLATFORM), "node-b/vllm.log": text_of(PLATFORM)})
    assert event_at(a.events, "node-a/vllm.log", 1)["node"] == "node-a"
    assert event_at(a.events, "node-b/vllm.log", 1)["node"] == "node-b"


def test_node_folders_inside_the_one_folder_that_wraps_the_bundle(tmp_path):
    # a ticket's folder 'incident-42/...': the per-node folders are one level down, beside shared files
    a = analyze_files(tmp_path, {"incident-42/node-a/vllm.log": text_of(PLATFORM),
                                 "incident-42/node-b/vllm.log": text_of(PLATFORM),
                                 "incident-42/env.txt": "HOSTNAME=launcher\n"})
    assert event_at(a.events, "incident-42/node-a/vllm.log", 1)["node"] == "node-a"
    assert event_at(a.events, "incident-42/node-b/vllm.log", 1)["node"] == "node-b"
    assert a.attribution.folder_node == {"incident-42/node-a": "node-a", "incident-42/node-b": "node-b"}


def test_per_node_archives_side_by_side_are_node_folders(tmp_path):
    for node in ("node-a", "node-b"):
        with tarfile.open(tmp_path / f"{node}.tar.gz", "w:gz") as tar:
            data = text_of(PLATFORM).encode()
            info = tarfile.TarInfo(f"{node}/vllm.log")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    a = run(tmp_path)
    assert event_at(a.events, "node-a.tar.gz/node-a/vllm.log", 1)["node"] == "node-a"
    assert event_at(a.events, "node-b.tar.gz/node-b/vllm.log", 1)["node"] == "node-b"


def test_a_folder_of_one_node_is_not_looked_into(tmp_path):
    a = analyze_files(tmp_path, {"gpu-x07/logs/vllm.log": text_of(
        "gpu-x07:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", PLATFORM), "gpu-x07/dmesg.txt": text_of(
        "[ 5000.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05")})
    assert a.attribution.folder_node == {"gpu-x07": "gpu-x07"}
    assert event_at(a.events, "gpu-x07/dmesg.txt", 1)["node"] == "gpu-x07"


def test_folders_that_are_a_layout_not_siblings_are_not_nodes(tmp_path):
    a = analyze_files(tmp_path, {"var-lib-docker/c1-json.log": text_of(PLATFORM), "host/dmesg.txt": text_of(
        "[ 5000.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05")})
    assert event_at(a.events, "var-lib-docker/c1-json.log", 1)["node"] != "var-lib-docker"
    assert a.attribution.folder_node == {}


def test_node_folder_takes_a_host_named_only_in_a_pod_listing(tmp_path):
    a = analyze_files(tmp_path, {
        "node-h200-n03/vllm.log": text_of(PLATFORM),
        "node-h200-n04/vllm.log": text_of("gpu:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", PLATFORM),
        "pods-wide.txt": "NAME      READY   STATUS    RESTARTS   AGE   IP           NODE        NOMINATED NODE   "
                         "READINESS GATES\nk3-0      1/1     Running   0          5m    10.1.0.5     h200-n03    "
                         "<none>           <none>\n"})
    assert event_at(a.events, "node-h200-n03/vllm.log", 1)["node"] == "h200-n03"


def test_kubectl_logs_of_a_pod_take_the_node_the_pod_listing_gives(tmp_path):
    a = analyze_files(tmp_path, {
        "kubectl-get-pods-wide.txt": "NAME          READY   STATUS    RESTARTS   AGE     IP           NODE       "
                                     "NOMINATED NODE   READINESS GATES\n"
                                     "kimi-k3-0     1/1     Running   0          7m29s   10.6.5.41    gpu-n05    "
                                     "<none>           <none>\n"
                                     "kimi-k3-0-1   0/1     Error     6          7m29s   10.6.6.12    gpu-n06    "
                                     "<none>           <none>\n",
        "kubectl-logs-kimi-k3-0-1-c-init.txt": text_of(PLATFORM),
        "kubectl-logs-kimi-k3-0.txt": text_of(PLATFORM)})
    assert event_at(a.events, "kubectl-logs-kimi-k3-0-1-c-init.txt", 1)["node"] == "gpu-n06"   # the longer name
    assert event_at(a.events, "kubectl-logs-kimi-k3-0.txt", 1)["node"] == "gpu-n05"


def test_the_one_folder_left_is_the_one_host_left(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(PLATFORM),
        "node-b/vllm.log": text_of("gpu-r5-08:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"),
        "env.txt": "# pdsh -w gpu-r5-[07-08] date +%FT%T.%N\ngpu-r5-07: 2025-12-09T02:03:17.118402991\n"
                   "gpu-r5-08: 2025-12-09T02:03:19.224871230\n"})
    assert a.attribution.folder_node == {"node-a": "gpu-r5-07", "node-b": "gpu-r5-08"}


def test_node_from_nccl_host_field_applies_to_the_whole_file(tmp_path):
    a = analyze_files(tmp_path, {"logs/vllm.log": text_of(
        "gpu-x07:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", PLATFORM)})
    assert event_at(a.events, "logs/vllm.log", 1)["node"] == "gpu-x07"
    assert event_at(a.events, "logs/vllm.log", 2)["node"] == "gpu-x07"   # a line naming no host: its file's


RAY_HEAD = text_of(
    PLATFORM,
    "(RayWorkerWrapper pid=5121, ip=10.0.3.18) gpu-b01:5121:5121 [1] NCCL INFO Bootstrap : Using eth0:10.0.3.18<0>",
    "(RayWorkerWrapper pid=5121, ip=10.0.3.18) INFO 08-11 10:00:05 [utils.py:1] Found nccl from library libnccl.so.2",
    "(RayWorkerWrapper pid=6121, ip=10.0.3.19) INFO 08-11 10:00:05 [utils.py:1] Found nccl from library libnccl.so.2",
    "gpu-a01:77:77 [0] NCCL INFO Bootstrap : Using eth0:10.0.3.17<0>",
)


def test_ray_ip_is_resolved_through_nccl_bootstrap_lines(tmp_path):
    a = analyze_files(tmp_path, {"head.log": RAY_HEAD})
    assert event_at(a.events, "head.log", 1)["node"] == "gpu-a01"    # the head's own lines
    relayed = event_at(a.events, "head.log", 3)                      # a Ray-relayed line naming no host
    assert (relayed["ip"], relayed["node"]) == ("10.0.3.18", "gpu-b01")
    assert a.attribution.ip_node["10.0.3.18"] == "gpu-b01"
    # an ip nothing ties to a host stays the node's name rather than being lost or given the head's
    assert event_at(a.events, "head.log", 4)["node"] == "10.0.3.19"


def test_ray_ip_is_resolved_through_a_host_ip_note(tmp_path):
    a = analyze_files(tmp_path, {"head.log": RAY_HEAD,
                                 "notes.txt": "cluster: gpu-a01 (10.0.3.17) head, gpu-c02 (10.0.3.19) worker\n"})
    assert event_at(a.events, "head.log", 4)["node"] == "gpu-c02"
    assert event_at(a.events, "head.log", 3)["node"] == "gpu-b01"    # bootstrap evidence still used


# ------------------------------------------------------------------------------------------
# ranks
# ------------------------------------------------------------------------------------------
def test_rank_from_assignment_line_joins_nccl_debug_file_by_pid(tmp_path):
    a = analyze_files(tmp_path, {
        "vllm.log": text_of(assigned(0, 2, 301), assigned(1, 2, 302)),
        "nccl.gpu-a.302.log": text_of(
            "gpu-a:302:302 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
            "gpu-a:302:350 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read",
            "gpu-a:302:350 [1] misc/socket.cc:1 NCCL WARN socket error"),
    }, keep_all=True)
    assert event_at(a.events, "vllm.log", 1)["rank"] == 0
    assert event_at(a.events, "vllm.log", 2)["rank"] == 1
    for line in (1, 2, 3):
        ev = event_at(a.events, "nccl.gpu-a.302.log", line)
        assert (ev["node"], ev["pid"], ev["rank"], ev["gpu"]) == ("gpu-a", 302, 1, 1)


TWO_COMMS = {
    # world of 4 over two nodes, and a 2-rank communicator per node whose 'rank' is not the global rank
    "node-a/out.log": text_of(nccl_init("gpu-a", 101, 0, 0, 4, "18000"), nccl_init("gpu-a", 102, 1, 1, 4, "9a000"),
                              nccl_init("gpu-a", 101, 0, 0, 2, "18000", "0x66"),
                              nccl_init("gpu-a", 102, 1, 1, 2, "9a000", "0x67")),
    "node-b/out.log": text_of(nccl_init("gpu-b", 201, 0, 0, 2, "18000", "0x76"),
                              nccl_init("gpu-b", 202, 1, 1, 2, "9a000", "0x77"),
                              nccl_init("gpu-b", 201, 0, 2, 4, "18000"), nccl_init("gpu-b", 202, 1, 3, 4, "9a000")),
}


def test_nccl_world_communicator_gives_the_rank_not_a_smaller_one(tmp_path):
    a = analyze_files(tmp_path, TWO_COMMS)
    assert a.attribution.world_size == 4
    # node-b prints its TP communicator ('rank 0 nranks 2') first: that rank is not the global one
    assert event_at(a.events, "node-b/out.log", 1)["rank"] == 2
    assert event_at(a.events, "node-b/out.log", 2)["rank"] == 3
    assert event_at(a.events, "node-a/out.log", 4)["rank"] == 1
    assert a.attribution.pid_rank == {("gpu-a", 101): 0, ("gpu-a", 102): 1, ("gpu-b", 201): 2, ("gpu-b", 202): 3}


ELASTIC = text_of(
    "W0811 10:00:08.400000 4326 site-packages/vllm/worker.py:1] something on this process",
    "E0811 10:00:09.123000 4321 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) "
    "local_rank: 1 (pid: 4326) of binary: /usr/bin/python3",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2026-08-11_10:00:09",
    "  host      : gpu-q22.cluster.local",
    "  rank      : 9 (local_rank: 1)",
    "  exitcode  : -6 (pid: 4326)",
    "  error_file: <N/A>",
    "  traceback : Signal 6 (SIGABRT) received by PID 4326",
    "============================================================",
)


def test_torchelastic_entry_gives_rank_and_host_to_its_fields(tmp_path):
    a = analyze_files(tmp_path, {"job.log": ELASTIC}, keep_all=True)
    for line in range(6, 12):
        ev = event_at(a.events, "job.log", line)
        assert (ev["node"], ev["rank"]) == ("gpu-q22", 9), line
    assert event_at(a.events, "job.log", 12)["rank"] is None   # the closing rule is not part of the entry


TWO_FAILURES = text_of(*("2026-08-11T10:00:10.038421947Z " + x for x in (  # `docker logs -t`: every line timed
    "Failures:",
    "[1]:",
    "  time      : 2026-08-11_10:00:09",
    "  host      : gpu-q22",
    "  rank      : 10 (local_rank: 2)",
    "  exitcode  : 1 (pid: 221)",
    "[2]:",
    "  time      : 2026-08-11_10:00:09",
    "  host      : gpu-q22",
    "  rank      : 8 (local_rank: 0)",
    "  exitcode  : 1 (pid: 212)",
)))


@pytest.mark.parametrize("keep_all", [True, False])
def test_each_torchelastic_entry_keeps_its_own_rank_when_its_opening_line_is_not_read(tmp_path, keep_all):
    # analyze does not keep the '[2]:' lines (nothing to match in them; a timed line needs no line before it
    # for its time): the entries must not run together
    a = analyze_files(tmp_path, {"job.log": TWO_FAILURES}, keep_all=keep_all)
    for lines, rank in ((range(3, 7), 10), (range(8, 12), 8)):
        for line in lines:
            ev = a.events.filter((pl.col("file") == "job.log") & (pl.col("line") == line))
            assert ev.height == 1 and ev["rank"][0] == rank, (line, ev.select("line", "rank", "text").rows())


def test_torchelastic_pid_and_local_rank_give_the_rank_of_that_process(tmp_path):
    a = analyze_files(tmp_path, {"job.log": ELASTIC}, keep_all=True)
    ev = event_at(a.events, "job.log", 1)      # a glog line of pid 4326 = local_rank 1 = rank 9
    assert (ev["pid"], ev["rank"]) == (4326, 9)
    assert a.attribution.local_rank[("gpu-q22", 1)] == 9


def test_torchelastic_agent_failure_line_gets_the_failed_childs_rank(tmp_path):
    a = analyze_files(tmp_path, {"job.log": ELASTIC}, keep_all=True)
    assert event_at(a.events, "job.log", 2)["rank"] == 9


def test_rank_prefix_of_torchrun_lines(tmp_path):
    a = analyze_files(tmp_path, {"job.log": text_of(
        "[rank9]:[E811 10:00:08.412207911 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600020 "
        "milliseconds before timing out.")})
    # '[rankN]:' is the global rank; '[Rank 1]' inside is the rank in a sub-group
    assert event_at(a.events, "job.log", 1)["rank"] == 9


def test_worker_name_gives_the_rank_with_the_parallel_sizes(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "INFO 08-11 10:00:00 [utils.py:1] non-default args: {'model': 'm', 'tensor_parallel_size': 8, "
        "'pipeline_parallel_size': 2}",
        "(Worker_PP1_TP5 pid=515) INFO 08-11 10:00:05 [gpu_model_runner.py:1] Starting to load model /models/m...",
        "(Worker_PP0_TP2 pid=502) INFO 08-11 10:00:05 [gpu_model_runner.py:1] Starting to load model /models/m...")},
        keep_all=True)
    assert event_at(a.events, "vllm.log", 2)["rank"] == 13     # PP1 x TP 8 + 5
    assert event_at(a.events, "vllm.log", 3)["rank"] == 2


def test_worker_name_without_the_tp_size_gives_no_rank(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "(Worker_PP1_TP5 pid=515) INFO 08-11 10:00:05 [gpu_model_runner.py:1] Starting to load model /models/m...")},
        keep_all=True)
    assert event_at(a.events, "vllm.log", 1)["rank"] is None


def test_single_gpu_deployment_is_rank_0(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "INFO 08-11 10:00:00 [core.py:1] Initializing a V1 LLM engine (v0.10.1.1) with config: model='m', "
        "tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1",
        "INFO 08-11 10:00:05 [gpu_model_runner.py:1] Starting to load model /models/m...",
        "ERROR 08-11 10:00:06 [core.py:1] RuntimeError: CUDA error: an illegal memory access was encountered")},
        keep_all=True)
    assert [event_at(a.events, "vllm.log", i)["rank"] for i in (1, 2, 3)] == [0, 0, 0]
    assert a.decision.root.rank == 0


def test_unknown_layout_gives_no_rank(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "INFO 08-11 10:00:05 [gpu_model_runner.py:1] Starting to load model /models/m...",
        "ERROR 08-11 10:00:06 [core.py:1] RuntimeError: CUDA error: an illegal memory access was encountered")},
        keep_all=True)
    assert event_at(a.events, "vllm.log", 2)["rank"] is None


# ------------------------------------------------------------------------------------------
# GPUs: Xid PCI address -> rank
# ------------------------------------------------------------------------------------------
def test_xid_pci_address_to_rank_via_nccl_bus_id(tmp_path):
    a = analyze_files(tmp_path, {**TWO_COMMS, "node-b/dmesg.txt": text_of(XID_9A)})
    ev = event_at(a.events, "node-b/dmesg.txt", 1)
    assert (ev["node"], ev["gpu"], ev["rank"]) == ("gpu-b", 1, 3)   # node-a's GPU at 9a is rank 1: not this one


def test_xid_pci_address_to_rank_via_nvidia_smi_index_and_local_rank(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/job.log": text_of("(Worker pid=101) INFO 08-11 10:00:00 [worker.py:1] world_size=4 rank=0 "
                                  "local_rank=0 distributed_init_method=env:// backend=nccl"),
        "node-b/job.log": text_of(
            "(Worker pid=201) INFO 08-11 10:00:00 [worker.py:1] world_size=4 rank=2 local_rank=0 "
            "distributed_init_method=env:// backend=nccl",
            "(Worker pid=202) INFO 08-11 10:00:00 [worker.py:1] world_size=4 rank=3 local_rank=1 "
            "distributed_init_method=env:// backend=nccl"),
        "node-b/gpus.csv": "index, name, pci.bus_id\n0, NVIDIA H100 80GB HBM3, 00000000:18:00.0\n"
                           "1, NVIDIA H100 80GB HBM3, 00000000:9A:00.0\n",
        "node-b/dmesg.txt": text_of(XID_9A)})
    ev = event_at(a.events, "node-b/dmesg.txt", 1)
    assert (ev["node"], ev["gpu"], ev["rank"]) == ("node-b", 1, 3)


def test_xid_gpu_index_comes_from_the_nvidia_smi_dump_of_the_same_node(tmp_path):
    def job(pids_ranks):
        return text_of(*(f"(Worker pid={p}) INFO 08-11 10:00:00 [worker.py:1] world_size=4 rank={r} local_rank={lr} "
                         f"distributed_init_method=env:// backend=nccl" for p, r, lr in pids_ranks))
    a = analyze_files(tmp_path, {
        "node-a/job.log": job([(101, 0, 0), (102, 1, 1)]),
        "node-a/gpus.csv": "index, name, pci.bus_id\n0, NVIDIA H100 80GB HBM3, 00000000:9A:00.0\n"
                           "1, NVIDIA H100 80GB HBM3, 00000000:18:00.0\n",
        "node-b/job.log": job([(201, 2, 0), (202, 3, 1)]),
        "node-b/gpus.csv": "index, name, pci.bus_id\n0, NVIDIA H100 80GB HBM3, 00000000:18:00.0\n"
                           "1, NVIDIA H100 80GB HBM3, 00000000:9A:00.0\n",
        "node-b/dmesg.txt": text_of(XID_9A)})
    ev = event_at(a.events, "node-b/dmesg.txt", 1)
    assert (ev["node"], ev["gpu"], ev["rank"]) == ("node-b", 1, 3)


def test_aer_line_is_about_the_device_that_reported_the_error_not_the_port(tmp_path):
    a = analyze_files(tmp_path, {**TWO_COMMS, "node-b/dmesg.txt": text_of(
        "[ 5000.100000] pcieport 0000:8b:00.0: AER: Uncorrected (Fatal) error received: 0000:9a:00.0")})
    ev = event_at(a.events, "node-b/dmesg.txt", 1)
    assert (ev["node"], ev["gpu"], ev["rank"]) == ("gpu-b", 1, 3)


def test_kernel_segfault_of_a_thread_takes_the_rank_of_its_process(tmp_path):
    a = analyze_files(tmp_path, {
        "node-b/out.log": text_of(nccl_init("gpu-b", 201, 0, 2, 4, "18000"), nccl_init("gpu-b", 202, 1, 3, 4, "9a000"),
                                  "gpu-b:202:2391 [1] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
                                  "10.0.0.1<40123> with status=12 opcode=1 len=0 vendor err 129 (Recv)"),
        "node-b/dmesg.txt": text_of("[ 5000.100000] NCCL Progress 5[2391]: segfault at 28 ip 00007f3a91e4c2b1 "
                                    "sp 00007f3a4dffe9a0 error 4 in libmlx5.so.1[7f3a91e32000+4c000]")})
    assert event_at(a.events, "node-b/dmesg.txt", 1)["rank"] == 3


def test_oom_killed_worker_takes_its_global_rank_not_its_local_worker_name(tmp_path):
    # data parallel 2 x tensor parallel 8 over two nodes: each node's workers are named rank=0..7, the same
    # pid lives on both nodes, and only the 'rank R in world size W' line gives the global rank
    def serve(first):
        return text_of(*[f"(VllmWorker rank={i} pid={2116 + i}) INFO 08-25 23:15:45 [parallel_state.py:1134] rank "
                         f"{first + i} in world size 16 is assigned as DP rank {first // 8}, PP rank 0, TP rank {i}, "
                         f"EP rank {first + i}" for i in range(8)],
                       "ERROR 08-25 23:20:01 [multiproc_executor.py:149] Worker proc VllmWorker-7 died unexpectedly, "
                       "shutting down executor.")
    a = analyze_files(tmp_path, {
        "node-a/vllm-serve.log": serve(0), "node-b/vllm-serve.log": serve(8),
        "node-b/dmesg.txt": text_of(
            "[Mon Aug 25 23:20:00 2025] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,"
            "global_oom,task_memcg=/kubepods/pod-vllm-1,task=python3,pid=2123,uid=0",
            "[Mon Aug 25 23:20:00 2025] Out of memory: Killed process 2123 (python3) total-vm:412000444kB, "
            "anon-rss:240001332kB, file-rss:0kB, shmem-rss:20480kB, UID:0 pgtables:402141kB oom_score_adj:0",
            "[Mon Aug 25 23:20:00 2025] oom_reaper: reaped process 2123 (python3), now anon-rss:0kB, file-rss:0kB")})
    assert [event_at(a.events, "node-b/dmesg.txt", i)["rank"] for i in (1, 2, 3)] == [15, 15, 15]
    root = a.decision.root
    assert (root.category, root.node, root.rank, root.line) == ("oom.host", "node-b", 15, 2)


def test_hca_kernel_line_takes_the_rank_of_the_gpu_on_its_rail(tmp_path):
    topo = ("\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
            "GPU0\t X \tNV18\tPIX\tSYS\t0-55\t0\t\tN/A\n"
            "GPU1\tNV18\t X \tSYS\tPIX\t56-111\t1\t\tN/A\n"
            "\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n")
    a = analyze_files(tmp_path, {**TWO_COMMS, "node-b/topo.txt": topo, "node-b/dmesg.txt": text_of(
        "[ 100.000000] mlx5_core 0000:5c:00.0 mlx5_1: Port: 1 Link ACTIVE",
        "[ 5000.100000] mlx5_core 0000:5c:00.0: poll_health:806:(pid 0): Fatal error 1 detected")})
    ev = event_at(a.events, "node-b/dmesg.txt", 2)
    assert (ev["node"], ev["gpu"], ev["rank"]) == ("gpu-b", 1, 3)


def test_xid_root_cause_takes_the_rank_of_its_gpu(tmp_path):
    a = analyze_files(tmp_path, {**TWO_COMMS, "node-b/dmesg.txt": text_of(XID_9A)})
    root = a.decision.root
    assert (root.category, root.node, root.rank, root.file, root.line) == ("gpu.xid", "gpu-b", 3, "node-b/dmesg.txt", 1)


def test_xid_on_a_nonzero_pci_domain_matches_the_nccl_bus_id(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/out.log": text_of(nccl_init("gb-a", 101, 0, 0, 2, "801000"), nccl_init("gb-a", 102, 1, 1, 2, "901000")),
        "node-a/dmesg.txt": text_of("[ 5000.100000] NVRM: Xid (PCI:0009:01:00): 79, pid='<unknown>', name=<unknown>, "
                                    "GPU has fallen off the bus.")})
    ev = event_at(a.events, "node-a/dmesg.txt", 1)
    assert (ev["gpu"], ev["rank"]) == (1, 1)
