"""attribute: the node and the global rank (and GPU) of every event, learnt from the whole bundle: per-node
folders, host fields, Ray ip= resolved to hosts, rank-assignment lines joined by pid across files, NCCL
world communicators, torchelastic summaries, [rankN]: prefixes, worker names, and Xid PCI addresses."""
from __future__ import annotations

import io
import tarfile

import polars as pl
import pytest

from conftest import analyze_files, broken_pattern_file, event_at, text_of
from k3logs.diagnose.attribution import bus_key, nccl_bus, short_host
from k3logs.errors import CatalogueError
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


@pytest.mark.parametrize("other, node", [("sosreport-gpu-x08-2026-03-17-mbtc", "gpu-x08"),   # the host in its name
                                         ("sosreport-2026-03-17-mbtc", None)])   # near miss: a date and an id only
def test_a_collectors_folder_named_after_a_host_of_the_bundle_is_that_nodes(tmp_path, other, node):
    """sosreport names its archive sosreport-HOST-DATE-ID: a collector's folder, and the one host it names."""
    journal = "Mar 17 14:52:3{t} gpu-x0{n} kernel: mlx5_core 0000:5e:00.0 mlx5_3: Port: 1 Link ACTIVE"
    a = analyze_files(tmp_path, {"sosreport-gpu-x07-2026-03-17-kdqz/journal.txt": text_of(
                                     *(journal.format(n=7, t=t) for t in range(4))),
                                 f"{other}/journal.txt": text_of(*(journal.format(n=8, t=t) for t in range(4))),
                                 f"{other}/sos_commands/ipmitool/ipmitool_sel_elist": text_of(
                                     "   9 | 03/17/2026 | 14:52:36 | Power Supply #0x64 | Power Supply AC lost | "
                                     "Asserted")})
    assert event_at(a.events, f"{other}/sos_commands/ipmitool/ipmitool_sel_elist", 1)["node"] == node


@pytest.mark.parametrize("unit, node", [("kimi-k3", "inf-b300-11"),   # the unit's folder: the one host's
                                         ("vllm-qwen", "kimi-k3")])     # near miss: another unit's name
def test_a_folder_named_after_a_systemd_unit_of_the_bundle_is_no_hosts(tmp_path, unit, node):
    journal = f"Nov 05 09:02:05 inf-b300-11 systemd[1]: Starting {unit}.service - Kimi K3 (vLLM, podman quadlet)..."
    a = analyze_files(tmp_path, {f"journal-{unit}.service.txt": text_of(journal),
                                 "kimi-k3/container.log": text_of("(APIServer pid=2) INFO 11-05 08:02:13 "
                                                                  "[api_server.py:1] vLLM API server version 0.28.1")})
    assert event_at(a.events, "kimi-k3/container.log", 1)["node"] == node


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


@pytest.mark.parametrize("notes, node", [("hosts: 10.40.8.17 = gpu-h100-17, 10.40.8.18 = gpu-h100-18\n", "gpu-h100-18"),
                                         ("hosts: two H100 boxes\n", None)])   # near miss: no address tied to a host
def test_a_folder_named_by_a_node_s_address_is_that_node_s(tmp_path, notes, node):
    a = analyze_files(tmp_path, {"10.40.8.17/vllm.log": text_of(PLATFORM), "10.40.8.18/vllm.log": text_of(PLATFORM),
                                 "notes.txt": notes})
    assert event_at(a.events, "10.40.8.18/vllm.log", 1)["node"] == node


INVENTORY = "rack_slot,asset_tag,{host_column},data_ip,sku\nr07-s1,AT-0041187,hgx-a114,10.62.7.31,8xH200-141GB\n" \
    "r07-s3,AT-0041190,hgx-a121,10.62.7.33,8xH200-141GB\n"


@pytest.mark.parametrize("host_column, node", [("hostname", "hgx-a121"),   # the inventory's host column
                                               ("owner", None)])          # near miss: a table with no host column
def test_a_folder_named_by_a_node_s_rack_slot_in_an_inventory_is_that_node_s(tmp_path, host_column, node):
    a = analyze_files(tmp_path, {"r07-s1/vllm.log": text_of(PLATFORM), "r07-s3/vllm.log": text_of(PLATFORM),
                                 "inventory.csv": INVENTORY.format(host_column=host_column)})
    assert event_at(a.events, "r07-s3/vllm.log", 1)["node"] == (node or "r07-s3")


def test_near_miss_a_name_several_inventory_rows_share_names_no_host(tmp_path):
    a = analyze_files(tmp_path, {"8xH200-141GB/vllm.log": text_of(PLATFORM), "r07-s1/vllm.log": text_of(PLATFORM),
                                 "inventory.csv": INVENTORY.format(host_column="hostname")})
    assert event_at(a.events, "8xH200-141GB/vllm.log", 1)["node"] not in ("hgx-a114", "hgx-a121")


def _ubuntu_log(pid: int, ip: str) -> str:
    return text_of(f"ubuntu:{pid}:{pid} [0] NCCL INFO Bootstrap : Using bond0:{ip}<0>",
                   f"ubuntu:{pid}:{pid} [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0")


@pytest.mark.parametrize("second_ip, node", [("10.91.4.22", "gpu-e02"),   # two machines both named 'ubuntu'
                                             ("10.91.4.21", "ubuntu")])   # near miss: one machine, two files
def test_a_host_name_several_machines_print_names_none_their_bootstrap_addresses_do(tmp_path, second_ip, node):
    a = analyze_files(tmp_path, {"vllm.ubuntu.47302.log": _ubuntu_log(47302, "10.91.4.21"),
                                 "vllm.ubuntu.50119.log": _ubuntu_log(50119, second_ip),
                                 "etc-hosts.txt": "10.91.4.21 gpu-e01\n10.91.4.22 gpu-e02\n"})
    assert event_at(a.events, "vllm.ubuntu.50119.log", 2)["node"] == node


def test_the_one_folder_left_is_the_one_host_left(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(PLATFORM),
        "node-b/vllm.log": text_of("gpu-r5-08:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"),
        "env.txt": "# pdsh -w gpu-r5-[07-08] date +%FT%T.%N\ngpu-r5-07: 2025-12-09T02:03:17.118402991\n"
                   "gpu-r5-08: 2025-12-09T02:03:19.224871230\n"})
    assert a.attribution.folder_node == {"node-a": "gpu-r5-07", "node-b": "gpu-r5-08"}


@pytest.mark.parametrize("folder, node", [("gpu-r5-n08", "gpu-r5-n08"),   # the folder's full name of the host 'n08'
                                           ("node-b", "n08")])             # near miss: a folder that names no host
def test_the_one_folder_left_keeps_its_full_name_of_the_short_name_notes_give_the_one_host_left(tmp_path, folder,
                                                                                                node):
    a = analyze_files(tmp_path, {
        "gpu-r5-n07/vllm.log": text_of("gpu-r5-n07:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", PLATFORM),
        f"{folder}/dmesg.txt": XID_9A + "\n",
        "NOTES.txt": "kimi-k3 on gpu-r5-n07 (head) and its worker; dmesg taken on n08 at 19:40Z.\n"})
    assert a.attribution.folder_node.get(folder) == node


def test_a_short_name_notes_give_a_host_already_placed_is_not_the_one_host_left(tmp_path):
    # (near miss, a short name no folder names is the one host left: the test of the one folder left, above)
    a = analyze_files(tmp_path, {
        "b300-r2-n17/vllm.log": text_of("b300-r2-n17:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", PLATFORM),
        "b300-r2-n18/dmesg.txt": XID_9A + "\n",
        "notes.txt": "Incident: kimi-k3 stopped answering, then the API container on n17 exited\n"})
    assert a.attribution.folder_node == {"b300-r2-n17": "b300-r2-n17", "b300-r2-n18": "b300-r2-n18"}


def test_near_miss_a_folder_of_launch_scripts_is_not_the_one_host_left(tmp_path):
    # the other node's folder is gone; what is left besides node-a holds only a launch script and a recipe
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of("gpu-r5-07:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", PLATFORM),
        "launch/serve.sh": "#!/bin/bash\nexec vllm serve m --tensor-parallel-size 8 --pipeline-parallel-size 2\n",
        "launch/recipe.yaml": "model: m\nparallel:\n  pipeline_parallel_size: 2\n",
        "env.txt": "# pdsh -w gpu-r5-[07-08] date +%FT%T.%N\ngpu-r5-07: 2025-12-09T02:03:17.118402991\n"
                   "gpu-r5-08: 2025-12-09T02:03:19.224871230\n"})
    assert a.attribution.folder_node == {"node-a": "gpu-r5-07"}


ETC_HOSTS = ("127.0.0.1\tlocalhost\n127.0.1.1\thgx-r7-n11.lab\thgx-r7-n11\n10.40.2.10\thgx-r7-n10\n"
             "10.40.2.11\thgx-r7-n11\n10.40.2.12\thgx-r7-n12\n10.40.2.13\thgx-r7-n13\n")


@pytest.mark.parametrize("worker_ip, want", [("10.40.2.12", "hgx-r7-n12"),   # the deployment's other host
                                             (None, "node-b")])               # near miss: /etc/hosts lists four
def test_the_one_folder_left_is_the_one_host_left_the_deployment_uses(tmp_path, worker_ip, want):
    relayed = f"(RayWorkerWrapper pid=3181, ip={worker_ip}) " if worker_ip else "(RayWorkerWrapper pid=3181) "
    a = analyze_files(tmp_path, {"node-a/etc-hosts.txt": ETC_HOSTS, "node-a/vllm.log": text_of(PLATFORM, relayed + PLATFORM),
                                 "node-b/dmesg.txt": XID_9A + "\n"})
    assert a.attribution.folder_node == {"node-a": "hgx-r7-n11", "node-b": want}   # node-a: its /etc/hosts' 127.0.1.1


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


@pytest.mark.parametrize("host, node", [("gpu-c02", "gpu-c02"),   # `set -x` printed the step as it ran
                                        ('"$node_2"', "10.0.3.19")])  # near miss: the template, not expanded
def test_ray_ip_is_resolved_through_the_slurm_step_that_started_ray_on_a_named_host(tmp_path, host, node):
    step = f"+ srun --nodes=1 --ntasks=1 -w {host} ray start --address=10.0.3.17:6379 --node-ip-address=10.0.3.19 --block"
    a = analyze_files(tmp_path, {"slurm-42.out": step + "\n" + RAY_HEAD})
    assert event_at(a.events, "slurm-42.out", 5)["node"] == node


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


@pytest.mark.parametrize("pp, rank", [("2", None),   # TP4 x PP2: a stage's 4-rank group is not the world of 8
                                       ("1", 2)])     # near miss: TP4 alone, the 4-rank communicator is the world
def test_a_stages_communicator_is_not_the_world_the_parallel_sizes_make(tmp_path, pp, rank):
    args = ("INFO 03-14 09:12:12 api_server.py:913] args: Namespace(model='m', tensor_parallel_size=4, "
            f"pipeline_parallel_size={pp})")
    a = analyze_files(tmp_path, {"gpu-b/out.log": text_of(args, nccl_init("gpu-b", 2217, 2, 2, 4, "56000"))})
    assert a.attribution.world_size == (None if pp == "2" else 4)
    assert event_at(a.events, "gpu-b/out.log", 2)["rank"] == rank


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


# a world of 4: rank 0 on node-a, ranks 2 and 3 on node-b as its local ranks 0 and 1
LOCAL_RANKS = {f"node-{n}/job.log": text_of(*(f"(Worker pid={p}) INFO 08-11 10:00:00 [worker.py:1] world_size=4 "
                                               f"rank={r} local_rank={lr} distributed_init_method=env:// backend=nccl"
                                               for p, r, lr in pids))
               for n, pids in (("a", [(101, 0, 0)]), ("b", [(201, 2, 0), (202, 3, 1)]))}


def test_xid_pci_address_to_rank_via_nvidia_smi_index_and_local_rank(tmp_path):
    a = analyze_files(tmp_path, {
        **LOCAL_RANKS,
        "node-b/gpus.csv": "index, name, pci.bus_id\n0, NVIDIA H100 80GB HBM3, 00000000:18:00.0\n"
                           "1, NVIDIA H100 80GB HBM3, 00000000:9A:00.0\n",
        "node-b/dmesg.txt": text_of(XID_9A)})
    ev = event_at(a.events, "node-b/dmesg.txt", 1)
    assert (ev["node"], ev["gpu"], ev["rank"]) == ("node-b", 1, 3)


@pytest.mark.parametrize("visible, rank", [("1,2", 2),   # the host's GPU 1 is the processes' device 0: rank 2
                                            (None, 3)])    # near miss: no CUDA_VISIBLE_DEVICES: device 1, rank 3
def test_an_xid_s_gpu_is_the_device_its_place_in_cuda_visible_devices_says(tmp_path, visible, rank):
    env = {"node-b/env.txt": f"CUDA_VISIBLE_DEVICES={visible}\nCUDA_DEVICE_ORDER=PCI_BUS_ID\n"} if visible else {}
    a = analyze_files(tmp_path, {
        **env, **LOCAL_RANKS,
        "node-b/gpus.csv": "index, name, pci.bus_id\n0, NVIDIA H100 80GB HBM3, 00000000:18:00.0\n"
                           "1, NVIDIA H100 80GB HBM3, 00000000:9A:00.0\n2, NVIDIA H100 80GB HBM3, 00000000:A0:00.0\n",
        "node-b/dmesg.txt": text_of(XID_9A)})
    assert event_at(a.events, "node-b/dmesg.txt", 1)["rank"] == rank


@pytest.mark.parametrize("echo_node, rank", [("b", 2),    # node-b's task echoes its GPUs: its device 0 is GPU 1
                                              ("a", 3)])   # near miss: node-a's echo says nothing of node-b's GPUs
def test_a_cuda_visible_devices_a_node_s_log_echoes_is_that_node_s(tmp_path, echo_node, rank):
    a = analyze_files(tmp_path, {
        **LOCAL_RANKS, f"node-{echo_node}/launch.log": text_of(
            "2026-08-11 09:59:58,000 INFO launch: SLURM_STEP_GPUS=1,2 CUDA_VISIBLE_DEVICES=1,2 starting vllm"),
        "node-b/gpus.csv": "index, name, pci.bus_id\n0, NVIDIA H100 80GB HBM3, 00000000:18:00.0\n"
                           "1, NVIDIA H100 80GB HBM3, 00000000:9A:00.0\n2, NVIDIA H100 80GB HBM3, 00000000:A0:00.0\n",
        "node-b/dmesg.txt": text_of(XID_9A)})
    assert event_at(a.events, "node-b/dmesg.txt", 1)["rank"] == rank


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


@pytest.mark.parametrize("per_engine, want", [(True, [0, 1, 2, 3]), (False, [0, 1, 2, 3])])
def test_a_dp_engine_in_its_own_world_takes_its_place_in_the_deployment(tmp_path, per_engine, want):
    """Data parallel 4 with one GPU per engine: each engine core is 'rank 0 in world size 1' under its own DP rank,
    so its rank in the deployment is its DP rank (DP rank x world size + rank), and the deployment's world is 4.
    Near miss: the same four ranks in one world ('rank d in world size 4'): the printed rank is already global."""
    def line(d: int) -> str:
        r, w = (0, 1) if per_engine else (d, 4)
        return (f"(EngineCore_DP{d} pid={300 + d}) INFO 11-03 09:36:26 [parallel_state.py:1325] rank {r} in world "
                f"size {w} is assigned as DP rank {d}, PP rank 0, TP rank 0, EP rank {d}")
    a = analyze_files(tmp_path, {"gpu-a1/vllm.log": text_of(*[line(d) for d in range(4)])}, keep_all=True)
    assert [event_at(a.events, "gpu-a1/vllm.log", d + 1)["rank"] for d in range(4)] == want
    assert a.attribution.world_size == 4


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


# ------------------------------------------------------------------------------------------
# issue 20: every witness names the node (and says which): each kind with its near miss
# ------------------------------------------------------------------------------------------
from k3logs.diagnose.ranks import gpu_identity  # noqa: E402
from k3logs.diagnose.witness import event_gpu, witness  # noqa: E402
from k3logs.catalogue.witnesses import builtin_witnesses, expand_nodelist, expand_tasks  # noqa: E402

W = builtin_witnesses()
ERROR = "ERROR 08-11 10:00:09 [core.py:1] RuntimeError: CUDA error: an illegal memory access was encountered"


def witness_of(a, file: str, line: int) -> tuple[str | None, str | None]:
    return witness(a.attribution, event_at(a.events, file, line))


# --- the patterns prove themselves -------------------------------------------------------------
@pytest.mark.parametrize("name", W.folder_samples[0])
def test_a_folder_named_like_a_host_may_be_a_node(name):
    assert W.is_node_folder_name(name)


@pytest.mark.parametrize("name", W.folder_samples[1])
def test_a_generic_folder_is_never_a_node(name):
    assert not W.is_node_folder_name(name)


@pytest.mark.parametrize("token", W.host_samples[0])
def test_host_samples_are_hosts(token):
    assert W.is_host(token)


@pytest.mark.parametrize("token", W.host_samples[1])
def test_interfaces_files_and_durations_are_not_hosts(token):
    assert not W.is_host(token)


HOST_IP_SAMPLES = [pytest.param(h, line, dict(fields), id=f"{h.name}-{i}")
                   for h in W.host_ips for i, (line, fields) in enumerate(h.samples)]
HOST_IP_NEAR = [pytest.param(h, line, id=f"{h.name}-no-{i}") for h in W.host_ips for i, line in enumerate(h.no_match)]


@pytest.mark.parametrize("h, line, fields", HOST_IP_SAMPLES)
def test_host_ip_samples_tie_their_host_and_ip(h, line, fields):
    m = h.regex.search(line)
    assert m and all(m.group(k) == v for k, v in fields.items()), (line, m and m.groupdict())


@pytest.mark.parametrize("h, line", HOST_IP_NEAR)
def test_host_ip_near_misses_tie_nothing(h, line):
    # a match whose 'host' is an interface, a file or a duration is no tie
    assert all(not W.is_host(m.group("host")) for m in h.regex.finditer(line)), line


LINE_SAMPLES = [pytest.param(w, line, dict(fields), id=f"{w.name}-{i}")
                for w in W.lines for i, (line, fields) in enumerate(w.samples)]
LINE_NEAR = [pytest.param(w, line, id=f"{w.name}-no-{i}") for w in W.lines for i, line in enumerate(w.no_match)]


@pytest.mark.parametrize("w, line, fields", LINE_SAMPLES)
def test_line_witness_samples_give_their_fields(w, line, fields):
    assert any(p in line for p in w.prefilter), "a sample holds one of its prefilter literals"
    m = w.regex.search(line)
    assert m and all(m.group(k) == v for k, v in fields.items()), (line, m and m.groupdict())


@pytest.mark.parametrize("w, line", LINE_NEAR)
def test_line_witness_near_misses_do_not_match(w, line):
    m = w.regex.search(line)
    assert not m or ("host" in m.groupdict() and not W.is_host(m.group("host"))), (line, m and m.groupdict())


WORKER_SAMPLES = [pytest.param(w, name, dict(fields), id=f"{w.name}-{i}")
                  for w in W.workers for i, (name, fields) in enumerate(w.samples)]
WORKER_NEAR = [pytest.param(w, name, id=f"{w.name}-no-{i}") for w in W.workers for i, name in enumerate(w.no_match)]


@pytest.mark.parametrize("w, name, fields", WORKER_SAMPLES)
def test_worker_name_samples_give_their_numbers(w, name, fields):
    entry, got = W.worker(name)
    assert entry is w and got == {k: int(v) for k, v in fields.items()}


@pytest.mark.parametrize("w, name", WORKER_NEAR)
def test_worker_name_near_misses_are_not_that_name(w, name):
    hit = W.worker(name)
    assert hit is None or hit[0] is not w


def test_slurm_node_lists_and_task_ranges_expand():
    assert expand_nodelist("gpu-b[05-07,09],cpu-1") == ["gpu-b05", "gpu-b06", "gpu-b07", "gpu-b09", "cpu-1"]
    assert expand_nodelist("hgx-b[05-06]") == ["hgx-b05", "hgx-b06"] and expand_nodelist("solo") == ["solo"]
    assert expand_tasks("0-3,8") == [0, 1, 2, 3, 8] and expand_tasks("x") == []


# --- the layout -------------------------------------------------------------------------------------
def test_the_one_folder_of_a_bundle_named_like_a_host_is_its_node(tmp_path):
    a = analyze_files(tmp_path, {"dgx-a100-m07/vllm-serve.log": text_of(PLATFORM, ERROR),
                                 "dgx-a100-m07/launch.sh": "vllm serve m\n"})
    ev = event_at(a.events, "dgx-a100-m07/vllm-serve.log", 2)
    assert ev["node"] == "dgx-a100-m07"
    assert witness_of(a, "dgx-a100-m07/vllm-serve.log", 2)[0].startswith("node folder dgx-a100-m07/")


@pytest.mark.parametrize("folder", ["logs", "bundle", "var", "incident-42", "INC-2291"])
def test_a_generic_lone_folder_is_not_a_node(tmp_path, folder):
    a = analyze_files(tmp_path, {f"{folder}/vllm-serve.log": text_of(PLATFORM, ERROR)})
    assert event_at(a.events, f"{folder}/vllm-serve.log", 2)["node"] is None
    assert a.attribution.folder_node == {}


@pytest.mark.parametrize("second_gpu_host, node", [(False, "gpu-a07"),   # the client's host shows no GPU
                                                     (True, None)])        # near miss: two hosts show GPUs
def test_a_server_log_that_names_no_host_ran_on_the_one_host_whose_gpus_the_bundle_shows(tmp_path, second_gpu_host,
                                                                                          node):
    """A single host's bundle that also holds a client's log from another machine: the server's log, which names no
    host, is the GPU host's, not the client's."""
    kernel = "Aug 11 09:58:00 {h} kernel: NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release"
    files = {"vllm.log": text_of(PLATFORM, ERROR), "dmesg.txt": text_of(kernel.format(h="gpu-a07")),
             "client.log": text_of("# docker logs batch-client (ci-runner-03), UTC",
                                   "2026-08-11 10:00:10,118 ERROR   batch.item failed: Error code: 500")}
    if second_gpu_host:
        files["dmesg-b.txt"] = text_of(kernel.format(h="gpu-a08"))
    a = analyze_files(tmp_path, files)
    assert event_at(a.events, "vllm.log", 2)["node"] == node
    assert event_at(a.events, "client.log", 2)["node"] == "ci-runner-03"


@pytest.mark.parametrize("selector, node", [(" --field-selector involvedObject.name=vllm-0", "gpu-b03"),
                                             ("", None)])   # near miss: the namespace's events, of any pod
def test_events_a_kubectl_command_selects_for_one_pod_are_of_that_pod_s_node(tmp_path, selector, node):
    events = text_of(f"$ kubectl get events -n llm{selector} --sort-by=.firstTimestamp",
                     "LAST SEEN   TYPE      REASON      OBJECT   MESSAGE",
                     "2m          Normal    Killing     <none>   Container main failed liveness probe, will be restarted")
    pods = text_of("NAME     READY   STATUS    RESTARTS   AGE   IP            NODE      NOMINATED NODE   READINESS GATES",
                   "vllm-0   0/1     Running   6          26m   10.244.17.42  gpu-b03   <none>           <none>",
                   "vllm-1   1/1     Running   0          26m   10.244.18.40  gpu-b04   <none>           <none>")
    a = analyze_files(tmp_path, {"events.txt": events, "pods.txt": pods})
    assert a.attribution.file_node.get("events.txt") == node


@pytest.mark.parametrize("status, node", [("Completed", "gpu-b03"),   # a finished Job's pod on another node
                                           ("Running", None)])         # near miss: a second pod at work
def test_a_finished_job_s_pod_on_another_node_leaves_the_working_pod_s_node_the_bundle_s_only_one(tmp_path, status,
                                                                                                node):
    pods = text_of("NAME          READY   STATUS      RESTARTS   AGE   IP            NODE      NOMINATED NODE",
                   "vllm-0        0/1     Running     2          36m   10.244.17.42  gpu-b03   <none>",
                   f"probe-29374   0/1     {status:<9}   0          4m    10.244.2.19   infra-02  <none>")
    a = analyze_files(tmp_path, {"pods.txt": pods, "logs/vllm.log": text_of(PLATFORM, ERROR)})
    assert event_at(a.events, "logs/vllm.log", 2)["node"] == node


def test_a_lone_folder_whose_lines_print_another_host_is_that_host(tmp_path):
    a = analyze_files(tmp_path, {"box-17/vllm.log": text_of("gpu-x07:123:456 [0] NCCL INFO NCCL version 2.21.5",
                                                            PLATFORM)})
    assert event_at(a.events, "box-17/vllm.log", 2)["node"] == "gpu-x07"


def test_the_top_folder_of_an_archive_of_one_node_is_its_node(tmp_path):
    with tarfile.open(tmp_path / "collected.tar.gz", "w:gz") as tar:
        for name, text in (("gpu-a01/vllm.log", text_of(PLATFORM, ERROR)), ("gpu-a01/env.txt", "X=1\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    a = run(tmp_path / "collected.tar.gz")
    assert event_at(a.events, "vllm.log", 2)["node"] == "gpu-a01"   # the folder is dropped from the names
    assert "top folder gpu-a01/" in witness_of(a, "vllm.log", 2)[0]


def test_pod_log_folders_are_not_node_folders(tmp_path):
    pods = "var/log/pods/inference_qwen3-32b-7b5d9c6f4d-{}_6b69c2db-a9e4-35cf-c94b-de718ab4fc9{}/vllm/0.log"
    cri = "2025-09-22T08:06:28.1Z stdout F " + PLATFORM
    a = analyze_files(tmp_path, {pods.format("8kx2p", "a"): text_of(cri), pods.format("zx4lm", "b"): text_of(cri),
                                 "pods-wide.txt": "NAME                          READY  STATUS   RESTARTS  AGE  IP          "
                                                  "NODE\nqwen3-32b-7b5d9c6f4d-8kx2p    0/1    Evicted  0         9m   "
                                                  "10.244.7.19 gpu-l40s-b03\nrouter-5d9c6f4d-q9rtn         1/1    "
                                                  "Running  0         9m   10.244.5.2  gpu-l40s-b01\n"})
    assert a.attribution.folder_node == {}
    ev = event_at(a.events, pods.format("8kx2p", "a"), 1)
    assert ev["node"] == "gpu-l40s-b03"     # its path names the pod, the listing its node
    assert "the log of pod qwen3-32b-7b5d9c6f4d-8kx2p" in witness_of(a, pods.format("8kx2p", "a"), 1)[0]
    assert event_at(a.events, pods.format("zx4lm", "b"), 1)["node"] is None   # a pod no listing places


@pytest.mark.parametrize("folder, node", [("inference_vllm-0-1", "gpu-h200-b07"),   # NS_POD: the listing's node
                                          ("gpu-h200-b09", "gpu-h200-b09")])       # near miss: a node's folder
def test_a_folder_named_namespace_and_pod_is_that_pods_not_a_node(tmp_path, folder, node):
    cri = "2025-09-22T08:06:28.1Z stdout F " + PLATFORM
    listing = ("NAME      READY  STATUS  RESTARTS  AGE  IP          NODE\n"
               "vllm-0    0/1    Error   0         9m   10.244.7.19 gpu-h200-b03\n"
               "vllm-0-1  0/1    Error   0         9m   10.244.7.20 gpu-h200-b07\n")
    a = analyze_files(tmp_path, {"pods/inference_vllm-0/vllm.log": text_of(cri),
                                 f"pods/{folder}/vllm.log": text_of(cri), "pods-wide.txt": listing})
    assert event_at(a.events, f"pods/{folder}/vllm.log", 1)["node"] == node


# --- Kubernetes ---------------------------------------------------------------------------------------
POD_JSON = """{
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "k3-serve-0-1", "namespace": "llm"},
  "spec": {"nodeName": "h100-n12", "containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0"}]},
  "status": {"podIP": "10.244.7.18", "hostIP": "172.24.8.112"}
}
"""
POD_NCCL = text_of("k3-serve-0-1:423:1588 [3] NCCL INFO NCCL version 2.21.5+cuda12.4",
                   "k3-serve-0-1:423:1588 [3] misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-x")


def test_a_pod_hostname_in_nccl_lines_is_the_pods_node_from_its_spec(tmp_path):
    a = analyze_files(tmp_path, {"worker.log": POD_NCCL, "pod.json": POD_JSON})
    assert event_at(a.events, "worker.log", 2)["node"] == "h100-n12"
    node_from = witness_of(a, "worker.log", 2)[0]
    assert "k3-serve-0-1 is a pod on h100-n12" in node_from and "pod.json" in node_from


@pytest.mark.parametrize("uid, node", [("7c1e9a2b-4d3f-4e85-9a6b-0c2d1e3f4a5b", "h100-n12"),
                                       ("0d2c6e9a-71b3-4f08-a5d2-c8e1b0f9a364", "h100-n25")])   # near miss: another uid
def test_a_pod_log_folders_uid_takes_the_node_of_that_pods_object_not_of_a_later_pod_of_its_name(tmp_path, uid, node):
    # the group was recreated after the incident: the listing shows a new pod of the same name on another node
    listing = ("NAME           READY   STATUS    RESTARTS   AGE   IP            NODE\n"
               "k3-serve-0-1   1/1     Running   0          8m    10.244.9.3    h100-n25\n")
    spec = POD_JSON.replace('"namespace": "llm"}', '"namespace": "llm", "uid": "7c1e9a2b-4d3f-4e85-9a6b-0c2d1e3f4a5b"}')
    log = f"pods/llm_k3-serve-0-1_{uid}/vllm/0.log"
    a = analyze_files(tmp_path, {log: POD_NCCL, "a-get-pods-wide.txt": listing, "pod.yaml.json": spec})
    assert event_at(a.events, log, 2)["node"] == node


def test_a_pod_name_is_never_a_node_name(tmp_path):
    # the pod is known (its spec) but not where it runs: no node, rather than the pod's name
    spec = POD_JSON.replace('"nodeName": "h100-n12", ', "")
    a = analyze_files(tmp_path, {"worker.log": POD_NCCL, "pod.json": spec})
    assert event_at(a.events, "worker.log", 2)["node"] != "k3-serve-0-1"
    assert "k3-serve-0-1" not in a.attribution.nodes


@pytest.mark.parametrize("table", [
    # kubectl get pods -o wide, with NAMESPACE (-A) and without the last two columns
    "NAMESPACE   NAME           READY   STATUS    RESTARTS   AGE   IP            NODE\n"
    "llm         k3-serve-0-1   1/1     Running   0          9m    10.244.7.18   h100-n12\n",
    # custom columns, the node first
    "NODE       POD            IP\nh100-n12   k3-serve-0-1   10.244.7.18\n",
    # a pasted table as a comment, with the READINESS GATES columns
    "# NAME           READY   STATUS    RESTARTS      AGE   IP            NODE       NOMINATED NODE   READINESS GATES\n"
    "# k3-serve-0-1   1/1     Running   3 (41s ago)   9m    10.244.7.18   h100-n12   <none>           <none>\n",
])
def test_pod_listings_in_any_column_layout_place_the_pod(tmp_path, table):
    a = analyze_files(tmp_path, {"worker.log": POD_NCCL, "pods.txt": table})
    assert event_at(a.events, "worker.log", 2)["node"] == "h100-n12"
    assert a.attribution.pod_node["k3-serve-0-1"] == "h100-n12"


def test_ray_ip_of_a_pod_is_its_node_through_the_pod_ip_column(tmp_path):
    log = text_of("[pod/k3-serve-0/vllm] " + PLATFORM,
                  "[pod/k3-serve-0/vllm] (RayWorkerWrapper pid=2417, ip=10.244.7.18) " + ERROR)
    table = ("NAME           READY   STATUS    RESTARTS   AGE   IP            NODE       NOMINATED NODE\n"
             "k3-serve-0     1/1     Running   0          9m    10.244.3.41   h100-n11   <none>\n"
             "k3-serve-0-1   1/1     Running   0          9m    10.244.7.18   h100-n12   <none>\n")
    a = analyze_files(tmp_path, {"kubectl-logs-prefix.txt": log, "pods.txt": table})
    assert event_at(a.events, "kubectl-logs-prefix.txt", 1)["node"] == "h100-n11"  # the --prefix pod's node
    assert event_at(a.events, "kubectl-logs-prefix.txt", 2)["node"] == "h100-n12"  # the relayed worker's node
    node_from = witness_of(a, "kubectl-logs-prefix.txt", 2)[0]
    assert node_from.startswith("Ray ip=10.244.7.18 via pod k3-serve-0-1's IP in pods.txt:3")
    assert "kubectl --prefix pod k3-serve-0" in witness_of(a, "kubectl-logs-prefix.txt", 1)[0]


def test_scheduled_event_places_the_pod_of_a_prefixed_log(tmp_path):
    events = ("LAST SEEN   TYPE     REASON      OBJECT             MESSAGE\n"
              "5m          Normal   Scheduled   pod/k3-serve-0-1   Successfully assigned llm/k3-serve-0-1 to h100-n12\n")
    a = analyze_files(tmp_path, {"events.txt": events, "logs.txt": text_of("[pod/k3-serve-0-1/vllm] " + PLATFORM)})
    assert event_at(a.events, "logs.txt", 1)["node"] == "h100-n12"
    assert "Scheduled event on events.txt:2" in witness_of(a, "logs.txt", 1)[0]


@pytest.mark.parametrize("obj, placed", [("k3-serve-0-1", True),   # custom columns: OBJECT:.involvedObject.name
                                         ("k3-serve", False)])     # near miss: the Deployment's name, no pod's
def test_an_event_row_naming_its_object_bare_is_about_that_pod(tmp_path, obj, placed):
    events = ("FIRST                  LAST                   TYPE      REASON    OBJECT         MESSAGE\n"
              f"2026-09-15T10:33:07Z   2026-09-15T10:33:07Z   Warning   Evicted   {obj}   Usage of EmptyDir volume "
              '"hf-cache" exceeds the limit "100Gi".\n')
    pods = ("NAME           READY   STATUS    RESTARTS   AGE   IP          NODE       NOMINATED NODE   "
            "READINESS GATES\n"
            "k3-serve-0-1   0/1     Evicted   0          19m   10.0.0.62   h100-n12   <none>           <none>\n"
            "k3-serve-0-2   1/1     Running   0          8m    10.0.0.63   h100-n13   <none>           <none>\n")
    a = analyze_files(tmp_path, {"kubectl/events.txt": events, "kubectl/pods.txt": pods})
    assert (event_at(a.events, "kubectl/events.txt", 2)["node"] == "h100-n12") == placed


@pytest.mark.parametrize("note, placed", [("k3-serve-0-1 runs on node h100-n12.", True),
                                           ("vllm runs on node h100-n12.", False)])   # near miss: no pod's name
def test_a_note_saying_where_a_pod_runs_places_its_log(tmp_path, note, placed):
    a = analyze_files(tmp_path, {"notes.txt": note + "\n", "k3-serve-0-1/vllm.log": text_of(PLATFORM)})
    assert (event_at(a.events, "k3-serve-0-1/vllm.log", 1)["node"] == "h100-n12") == placed


def test_describe_node_line_places_the_pod_and_ties_the_node_ip(tmp_path):
    describe = ("Name:             k3-serve-0-1\nNamespace:        llm\nNode:             h100-w12/10.8.44.12\n"
                "IP:               10.128.3.9\nContainers:\n  vllm:\n    Image:          vllm/vllm-openai:v0.11.0\n")
    log = text_of(PLATFORM, "(RayWorkerWrapper pid=77, ip=10.8.44.12) " + ERROR)
    a = analyze_files(tmp_path, {"describe.txt": describe, "head.log": log})
    assert a.attribution.pod_node["k3-serve-0-1"] == "h100-w12"
    assert event_at(a.events, "head.log", 2)["node"] == "h100-w12"


EVENTS_JSON = """{
    "apiVersion": "v1",
    "items": [
        {
            "involvedObject": {"kind": "Pod", "name": "qwen3-32b-8kx2p", "namespace": "inference"},
            "kind": "Event",
            "message": "Usage of EmptyDir volume \\"hf-cache\\" exceeds the limit \\"60Gi\\". ",
            "reason": "Evicted",
            "source": {"component": "kubelet", "host": "gpu-l40s-b03"},
            "type": "Warning"
        },
        {
            "involvedObject": {"kind": "Node", "name": "gpu-l40s-b01"},
            "kind": "Event",
            "message": "Node gpu-l40s-b01 status is now: NodeNotReady",
            "reason": "NodeNotReady",
            "source": {"component": "node-controller"},
            "type": "Normal"
        },
        {
            "involvedObject": {"kind": "Pod", "name": "qwen3-32b-zx4lm", "namespace": "inference"},
            "kind": "Event",
            "message": "Stopping container vllm",
            "reason": "Killing",
            "source": {"component": "kubelet"},
            "type": "Normal"
        }
    ],
    "kind": "List"
}
"""


def test_events_json_objects_take_their_kubelet_or_node_and_a_pods_event_its_pods_node(tmp_path):
    table = "NAME              READY   STATUS    RESTARTS   AGE   IP           NODE\n" \
            "qwen3-32b-zx4lm   1/1     Running   0          9m   10.1.0.5     gpu-l40s-b07\n"
    a = analyze_files(tmp_path, {"events.json": EVENTS_JSON, "pods.txt": table}, keep_all=True)
    assert event_at(a.events, "events.json", 7)["node"] == "gpu-l40s-b03"     # the message line: its source.host
    assert "source.host" in witness_of(a, "events.json", 7)[0]
    assert event_at(a.events, "events.json", 15)["node"] == "gpu-l40s-b01"    # a Node event: that node
    assert event_at(a.events, "events.json", 23)["node"] == "gpu-l40s-b07"    # a pod's event: the pod's node
    assert event_at(a.events, "events.json", 2)["node"] is None              # outside every object



def test_an_events_json_objects_lines_take_its_time_when_first_seen(tmp_path):
    timed = EVENTS_JSON.replace('"kind": "Node", "name": "gpu-l40s-b01"},',
                                '"kind": "Node", "name": "gpu-l40s-b01"},\n'
                                '            "firstTimestamp": "2026-11-12T13:47:37Z",\n'
                                '            "lastTimestamp": "2026-11-12T13:52:37Z",')
    a = analyze_files(tmp_path, {"events.json": timed}, keep_all=True)
    message = event_at(a.events, "events.json", 17)
    assert "NodeNotReady" in message["text"] and message["ts"].strftime("%H:%M:%S") == "13:47:37"
    assert message["ts_quality"] == "exact"
    assert event_at(a.events, "events.json", 7)["ts"] is None     # near miss: an object that gives no time


# --- Ray -----------------------------------------------------------------------------------------------
def test_ray_ip_resolved_through_etc_hosts_and_a_gcs_line_about_a_dead_node(tmp_path):
    hosts = "127.0.0.1\tlocalhost\n10.20.4.13\ta100-srv-03.lab.internal\ta100-srv-03\n" \
            "10.20.4.21\ta100-srv-11.lab.internal\ta100-srv-11\n"
    gcs = text_of(
        "[2025-07-22 16:02:30,902 I 412 412] (gcs_server) gcs_server.cc:295: Main service Event stats:",
        "[2025-07-22 16:31:24,117 W 412 412] (gcs_server) gcs_health_check_manager.cc:191: Health check failed for "
        "node 7e3a9c51d08f4b26, remaining checks 4, status UNAVAILABLE: failed to connect to all addresses; last "
        "error: UNKNOWN: ipv4:10.20.4.21:36473: Failed to connect to remote host: Connection timed out",
        "[2025-07-22 16:31:30,121 W 412 412] (gcs_server) gcs_health_check_manager.cc:191: Health check failed for "
        "node 7e3a9c51d08f4b26, remaining checks 3, status DEADLINE_EXCEEDED: Deadline Exceeded",
        "[2025-07-22 16:31:51,131 W 412 412] (gcs_server) gcs_node_manager.cc:418: The node with node id: "
        "7e3a9c51d08f4b26 and address: 10.20.4.21 and node name: 10.20.4.21 has been marked dead because the "
        "detector has missed too many heartbeats from it.")
    a = analyze_files(tmp_path, {"a100-srv-03/etc-hosts": hosts, "a100-srv-03/gcs_server.out": gcs,
                                 "a100-srv-03/vllm.log": text_of(PLATFORM, "(RayWorkerWrapper pid=3105, "
                                                                 "ip=10.20.4.21) " + PLATFORM)}, keep_all=True)
    for line in (2, 3, 4):       # about the dead node (line 3 names it by its Ray node id only)
        assert event_at(a.events, "a100-srv-03/gcs_server.out", line)["node"] == "a100-srv-11", line
    assert event_at(a.events, "a100-srv-03/gcs_server.out", 1)["node"] == "a100-srv-03"   # the GCS's own line
    assert event_at(a.events, "a100-srv-03/vllm.log", 2)["node"] == "a100-srv-11"
    node_from = witness_of(a, "a100-srv-03/gcs_server.out", 4)[0]
    assert "the node the GCS marks dead" in node_from and "a100-srv-03/etc-hosts:3" in node_from


def test_a_dead_ray_worker_named_by_address_and_pid_is_that_node_and_rank(tmp_path):
    log = text_of(
        "(RayWorkerWrapper pid=4173, ip=172.20.8.14) INFO 08-11 10:00:00 [parallel_state.py:1] rank 10 in world "
        "size 16 is assigned as DP rank 0, PP rank 1, TP rank 2",
        "(EngineCore_DP0 pid=2077) (raylet, ip=172.20.8.14) A worker died or was killed while executing a task by "
        "an unexpected system error. Worker ID: 8b1f Node ID: 51c0 Worker IP address: 172.20.8.14 Worker port: "
        "10043 Worker PID: 4173 Worker exit type: SYSTEM_ERROR")
    a = analyze_files(tmp_path, {"hgx-c3/vllm.log": log, "notes.md": "hgx-c3 (head, 172.20.8.13) and hgx-c4 "
                                                                     "(172.20.8.14)\n"})
    ev = event_at(a.events, "hgx-c3/vllm.log", 2)
    assert (ev["node"], ev["rank"]) == ("hgx-c4", 10)
    assert "the process the line is about, pid 4173" in witness_of(a, "hgx-c3/vllm.log", 2)[1]


def test_a_ray_line_in_the_drivers_journal_is_the_node_its_ip_names_not_the_journals_host(tmp_path):
    lines = ("(RayWorkerWrapper pid=4173, ip=172.20.8.14) INFO 08-11 10:00:00 [parallel_state.py:1] rank 10 in world "
             "size 16 is assigned as DP rank 0, PP rank 1, TP rank 2",
             "(RayWorkerWrapper pid=4173, ip=172.20.8.14) " + ERROR,
             "(EngineCore_DP0 pid=2077) " + ERROR)
    journal = text_of(*(f"2026-08-11T10:00:0{i}+0000 hgx-c3 vllm[1851]: {ln}" for i, ln in enumerate(lines)))
    a = analyze_files(tmp_path, {"hgx-c3/journal.txt": journal, "notes.md": "hgx-c3 (head, 172.20.8.13) and hgx-c4 "
                                                                            "(172.20.8.14)\n"})
    ev = event_at(a.events, "hgx-c3/journal.txt", 2)
    assert (ev["node"], ev["rank"]) == ("hgx-c4", 10)
    # near miss: the driver's own line (no ip=) is the journal host's
    assert event_at(a.events, "hgx-c3/journal.txt", 3)["node"] == "hgx-c3"


def test_an_ip_nothing_ties_to_a_host_is_the_name_of_last_resort(tmp_path):
    a = analyze_files(tmp_path, {"head.log": RAY_HEAD})
    assert event_at(a.events, "head.log", 4)["node"] == "10.0.3.19"
    assert "no host named for that IP" in witness_of(a, "head.log", 4)[0]


def test_ray_workers_that_died_before_their_rank_line_take_it_from_their_device_and_node(tmp_path):
    log = text_of(
        "INFO 06-24 13:05:44 [cli_args.py:1] non-default args: {'distributed_executor_backend': 'ray', "
        "'pipeline_parallel_size': 2, 'tensor_parallel_size': 8}",
        "(RayWorkerWrapper pid=411, ip=10.244.7.18) w1:411:1590 [1] misc/socket.cc:64 NCCL WARN socketProgress: "
        "Connection closed by remote peer",
        "(RayWorkerWrapper pid=423, ip=10.244.7.18) w1:423:1588 [3] misc/shmutils.cc:87 NCCL WARN Error: failed "
        "to extend /dev/shm/nccl-Yz81Qa to 9637892 bytes, error: No space left on device (28)")
    table = ("NAME       READY   STATUS    RESTARTS   AGE   IP            NODE\n"
             "vllm-0     1/1     Running   0          9m    10.244.3.41   l40s-gpu-03\n"
             "w1         1/1     Running   0          9m    10.244.7.18   l40s-gpu-07\n")
    a = analyze_files(tmp_path, {"vllm-0_leader.log": log, "pods.txt": table})
    assert [event_at(a.events, "vllm-0_leader.log", i)["rank"] for i in (2, 3)] == [9, 11]
    assert "the second of 2 nodes" in witness_of(a, "vllm-0_leader.log", 3)[1]


# --- journald, syslog, launchers ----------------------------------------------------------------------
def test_journald_json_hostname_names_the_node(tmp_path):
    import json
    entry = lambda msg, t: json.dumps({"__REALTIME_TIMESTAMP": str(t), "_HOSTNAME": "inf-l40s-07",  # noqa: E731
                                       "SYSLOG_IDENTIFIER": "vllm", "_PID": "1187", "MESSAGE": msg})
    a = analyze_files(tmp_path, {"journal.json": text_of(entry(PLATFORM, 1761026333771461),
                                                         entry(ERROR, 1761026334771461))})
    ev = event_at(a.events, "journal.json", 2)
    assert ev["node"] == "inf-l40s-07" and ev["ts"] is not None
    assert witness_of(a, "journal.json", 2)[0] == "journald _HOSTNAME 'inf-l40s-07' on line 2"


def test_syslog_host_field_names_the_node(tmp_path):
    a = analyze_files(tmp_path, {"journal.txt": text_of(*(f"Aug 11 10:00:0{i} gpu-node-07 vllm[4410]: {ln}"
                                                          for i, ln in enumerate((PLATFORM, ERROR))))})
    assert event_at(a.events, "journal.txt", 2)["node"] == "gpu-node-07"
    assert witness_of(a, "journal.txt", 2)[0].startswith("the journal's host field 'gpu-node-07'")


SRUN = text_of(
    "+ echo 'SLURM_JOB_ID=884213 SLURM_JOB_NODELIST=hgx-b[05-06] SLURM_NNODES=2 SLURM_NTASKS=4'",
    "+ srun -l --ntasks-per-node=2 bash -c 'RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS exec python infer.py'",
    "0: " + PLATFORM, "1: " + PLATFORM, "2: " + PLATFORM, "3: " + ERROR)


@pytest.mark.parametrize("tasks, node", [((0,), "hgx-b06"),    # one task's output, named by its node: that node's
                                          ((0, 1), "hgx-b05")])  # near miss: two tasks' output: over the node list
def test_the_one_task_of_a_file_named_by_its_node_is_that_node_s(tmp_path, tasks, node):
    """`srun -l -o job-%t-%N.out`: each node's task writes its own file, labelled 0: in every one; the job's node list
    would put task 0 on its first node, the file's name says which node it is."""
    out = text_of("+ echo 'SLURM_JOB_ID=884213 SLURM_JOB_NODELIST=hgx-b[05-06] SLURM_NNODES=2'",
                  *(f"{t}: " + PLATFORM for t in tasks))
    kernel = "Aug 11 09:58:00 {h} kernel: NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05"
    a = analyze_files(tmp_path, {"logs/job-884213-1-hgx-b06.out": out,
                                 "logs/job-884213-0-hgx-b05.out": text_of("0: " + PLATFORM),
                                 **{f"{h}/journal-k.txt": text_of(kernel.format(h=h)) for h in ("hgx-b05", "hgx-b06")}})
    assert event_at(a.events, "logs/job-884213-1-hgx-b06.out", 2)["node"] == node


def test_srun_task_labels_take_the_node_the_node_list_and_tasks_per_node_give(tmp_path):
    a = analyze_files(tmp_path, {"slurm-884213.out": SRUN})
    assert [event_at(a.events, "slurm-884213.out", i)["node"] for i in (3, 4, 5, 6)] == \
        ["hgx-b05", "hgx-b05", "hgx-b06", "hgx-b06"]
    ev = event_at(a.events, "slurm-884213.out", 6)
    assert ev["rank"] == 3       # RANK=$SLURM_PROCID: the task is the rank
    node_from, rank_from = witness_of(a, "slurm-884213.out", 6)
    assert "srun -l task 3" in node_from and "the second is hgx-b06" in node_from
    assert "RANK" in rank_from


@pytest.mark.parametrize("line, node", [(6, "hgx-b06"),    # task 3's: srun's client wrote it on the batch host
                                         (1, "hgx-b05")])   # near miss: the batch script's own line, unlabelled
def test_a_labelled_line_a_journal_holds_is_its_tasks_node_not_the_journals_host(tmp_path, line, node):
    """The job's output as the batch host's journal (or a log shipper) read it: srun -l forwards every task's
    output to its client on the batch host, so the host field names where it was written down, and the label
    names the task that wrote it."""
    journal = "".join(f"Aug 11 10:00:{i:02d} hgx-b05 slurm-job[4410]: {ln}\n" for i, ln in enumerate(SRUN.splitlines()))
    a = analyze_files(tmp_path, {"batch-host/journal.txt": journal})
    assert event_at(a.events, "batch-host/journal.txt", line)["node"] == node


@pytest.mark.parametrize("step, node", [("$ srun --jobid=884213 --overlap -w hgx-b[06-07] --ntasks-per-node=1 -l dmesg",
                                         "hgx-b06"),   # a helper step on its own nodes: task 0 is the first of those
                                        ("$ srun --jobid=884213 --overlap --ntasks-per-node=1 -l dmesg",
                                         "hgx-b05")])  # near miss: no -w: the job's nodes
def test_a_step_given_its_own_nodes_lays_its_tasks_over_those(tmp_path, step, node):
    out = text_of("+ echo 'SLURM_JOB_ID=884213 SLURM_JOB_NODELIST=hgx-b[05-07] SLURM_NNODES=3 SLURM_NTASKS=24'",
                  step, "0: [Sat Mar 14 09:58:00 2026] NVRM: GPU at PCI:0000:4d:00: GPU-c41a9e07",
                  "0: [Sat Mar 14 10:43:51 2026] NVRM: Xid (PCI:0000:4d:00): 48, pid=2210571, An uncorrectable "
                  "double bit error (DBE) has been detected on GPU in the framebuffer.",
                  *(f"1: [Sat Mar 14 10:3{i}:40 2026] perf: interrupt took too long (2503 > 2500)" for i in range(4)))
    a = analyze_files(tmp_path, {"srun-dmesg.txt": out})
    assert event_at(a.events, "srun-dmesg.txt", 4)["node"] == node


STATED = "12: INFO 05-14 09:12:46 [parallel_state.py:1004] rank 12 in world size 16 is assigned as DP rank 0, " \
    "PP rank 0, TP rank 12"


@pytest.mark.parametrize("err, rank", [("dsv3-884213.err", 12),    # the same job's stderr: the same tasks
                                       ("dsv3-884214.err", None)])  # near miss: another job's
def test_a_task_that_states_its_rank_is_that_rank_in_its_job_s_other_output_too(tmp_path, err, rank):
    out = text_of("12: " + PLATFORM, STATED)
    a = analyze_files(tmp_path, {"dsv3-884213.out": out, err: text_of("12: Fatal Python error: Segmentation fault")})
    assert event_at(a.events, "dsv3-884213.out", 1)["rank"] == 12   # (in its own output)
    assert event_at(a.events, err, 1)["rank"] == rank


def test_near_miss_a_task_that_states_several_ranks_runs_several_workers_and_is_none_of_them(tmp_path):
    other = STATED.replace("rank 12 in", "rank 13 in").replace("TP rank 12", "TP rank 13")
    out = text_of("12: " + PLATFORM, STATED, other, "12: Fatal Python error: Segmentation fault")
    a = analyze_files(tmp_path, {"dsv3-884213.out": out})
    assert event_at(a.events, "dsv3-884213.out", 4)["rank"] is None


def test_srun_errors_place_tasks_on_hosts_and_without_a_node_list_tasks_have_no_node(tmp_path):
    no_list = SRUN.replace("SLURM_JOB_NODELIST=hgx-b[05-06] ", "")
    a = analyze_files(tmp_path, {"slurm.out": no_list})
    assert event_at(a.events, "slurm.out", 6)["node"] is None
    a = analyze_files(tmp_path / "x", {"slurm.out": no_list + "srun: error: hgx-b06: tasks 2-3: Exited with exit "
                                                             "code 1\n"})
    assert event_at(a.events, "slurm.out", 6)["node"] == "hgx-b06"
    assert "srun's own line 7" in witness_of(a, "slurm.out", 6)[0]


@pytest.mark.parametrize("tasks, rank", [("task 3", 3),          # the one task srun reports, its rank
                                         ("tasks 2-3", None)])   # near miss: two tasks: no one rank
def test_slurmstepd_s_oom_kill_before_srun_s_report_of_one_task_is_about_that_task_s_rank(tmp_path, tasks, rank):
    out = SRUN + ("slurmstepd: error: Detected 1 oom_kill event in StepId=884213.0. Some of the step tasks have been "
                  f"OOM Killed.\nsrun: error: hgx-b06: {tasks}: Out Of Memory\n")
    a = analyze_files(tmp_path, {"slurm.out": out})
    for line in (7, 8):
        assert (event_at(a.events, "slurm.out", line)["node"], event_at(a.events, "slurm.out", line)["rank"]) == \
            ("hgx-b06", rank)


@pytest.mark.parametrize("between, node", [("", "hgx-b06"),
                                            ("0: WARNING still loading\n", None)])   # near miss: not right before
def test_slurmstepd_errors_right_before_srun_s_report_of_a_task_are_about_its_host(tmp_path, between, node):
    out = ("0: INFO 11-18 09:14:32 [api_server.py:1] vLLM API server version 0.11.0\n"
           "slurmstepd: error: pyxis: container start failed with error code: 1\n"
           "slurmstepd: error: pyxis:     nvidia-container-cli: requirement error: unsatisfied condition: cuda>=13.0\n"
           + between + "srun: error: hgx-b06: task 1: Exited with exit code 1\n"
           "slurmstepd: error: *** STEP 88213.0 ON hgx-b05 CANCELLED AT 2026-11-18T09:16:04 ***\n")
    a = analyze_files(tmp_path, {"slurm.out": out})
    assert event_at(a.events, "slurm.out", 3)["node"] == node


ENV_DUMP = "SLURM_JOB_ID=884213\nSLURM_JOB_NODELIST={}\nSLURM_NNODES=2\nSLURMD_NODENAME=hgx-b05\n"


def test_srun_task_labels_take_the_node_list_of_an_env_dump_when_the_output_has_none(tmp_path):
    no_list = SRUN.replace("SLURM_JOB_NODELIST=hgx-b[05-06] ", "")
    a = analyze_files(tmp_path, {"slurm.out": no_list, "env.txt": ENV_DUMP.format("hgx-b[05-06]")})
    assert event_at(a.events, "slurm.out", 6)["node"] == "hgx-b06"
    assert "over the job's nodes (env.txt:2), the second is hgx-b06" in witness_of(a, "slurm.out", 6)[0]


def test_near_miss_two_dumps_with_different_node_lists_place_no_task(tmp_path):
    no_list = SRUN.replace("SLURM_JOB_NODELIST=hgx-b[05-06] ", "")
    a = analyze_files(tmp_path, {"slurm.out": no_list, "a/env.txt": ENV_DUMP.format("hgx-b[05-06]"),
                                 "b/env.txt": ENV_DUMP.format("hgx-c[01-02]")})
    assert event_at(a.events, "slurm.out", 6)["node"] is None
    assert not a.attribution.task_node


SACCT_TWO_JOBS = "\n".join(f"{a:<14} {b:>10} {c:>16} {d:>14}" for a, b, c, d in [
    ("JobID", "JobName", "NodeList", "State"), ("-" * 14, "-" * 10, "-" * 16, "-" * 14),
    ("884107", "serve", "hgx-c[01,04]", "TIMEOUT"), ("884107.0", "bash", "hgx-c[01,04]", "CANCELLED"),
    ("884213", "serve", "hgx-b[05-06]", "FAILED"), ("884213.0", "bash", "hgx-b[05-06]", "FAILED")]) + "\n"


@pytest.mark.parametrize("out_name, node", [("slurm-884213.out", "hgx-b06"),
                                            ("slurm-884107.out", "hgx-c04"),    # the other job's row
                                            ("slurm-991100.out", None)])        # near miss: a job the table lacks
def test_srun_task_labels_take_the_node_list_a_job_table_gives_the_job_the_output_file_names(tmp_path, out_name,
                                                                                            node):
    no_list = SRUN.replace("SLURM_JOB_NODELIST=hgx-b[05-06] ", "")
    a = analyze_files(tmp_path, {out_name: no_list, "sacct.txt": SACCT_TWO_JOBS})
    assert event_at(a.events, out_name, 6)["node"] == node
    if node:
        assert f"job {out_name[6:12]}'s row, sacct.txt" in witness_of(a, out_name, 6)[0]


SACCT_ONE_NODE = SACCT_TWO_JOBS.replace("hgx-b[05-06]", "hgx-b05")


@pytest.mark.parametrize("table, out_name, node", [
    (SACCT_ONE_NODE, "k2-serve-884213.out", "hgx-b05"),   # the job ran on one node: all its output is that node's
    (SACCT_TWO_JOBS, "k2-serve-884213.out", None),        # near miss: two nodes, and no task labels to tell them
    (SACCT_ONE_NODE, "k2-serve.out", None)])              # near miss: a name that numbers no job
def test_a_job_output_is_the_node_its_one_node_job_ran_on(tmp_path, table, out_name, node):
    log = text_of("INFO 10-14 21:02:30 [api_server.py:1] vLLM API server version 0.27.0",
                  "(Worker_TP2 pid=513) INFO 10-14 21:03:01 [parallel_state.py:1] rank 2 in world size 8 is "
                  "assigned as DP rank 0, PP rank 0, TP rank 2, EP rank 2")
    a = analyze_files(tmp_path, {out_name: log, "sacct.txt": table})
    assert event_at(a.events, out_name, 2)["node"] == node


def test_a_task_that_prints_its_host_is_on_that_host(tmp_path):
    a = analyze_files(tmp_path, {"slurm.out": text_of("0: node_rank=0 host=gpu-b200-11", "1: node_rank=1 "
                                                      "host=gpu-b200-12", "1: " + ERROR)})
    assert event_at(a.events, "slurm.out", 3)["node"] == "gpu-b200-12"


# --- dumps: docker inspect, bug report, provenance -------------------------------------------------------
def inspect(network: str, hostname: str) -> str:
    return ('[{"Id": "7d2e91c04bfa3e6f", "Name": "/vllm", "State": {"Status": "exited", "ExitCode": 1}, '
            f'"Config": {{"Hostname": "{hostname}", "Image": "vllm/vllm-openai:v0.11.0"}}, '
            f'"HostConfig": {{"NetworkMode": "{network}", "ShmSize": 67108864}}}}]\n')


def test_docker_inspect_hostname_is_the_node_under_host_networking(tmp_path):
    a = analyze_files(tmp_path, {"inspect.json": inspect("host", "gpu-h100-sxm-17"),
                                 "docker-logs.txt": text_of(PLATFORM, ERROR)})
    assert event_at(a.events, "docker-logs.txt", 2)["node"] == "gpu-h100-sxm-17"
    assert "inspect.json" in witness_of(a, "docker-logs.txt", 2)[0]


@pytest.mark.parametrize("network, node", [("host", "gpu-h200-b03"),   # its Id names the container's log
                                            ("bridge", None)])           # near miss: the container's own hostname
def test_docker_inspects_of_two_hosts_name_each_container_log_by_its_id(tmp_path, network, node):
    cid = {"b03": "5f0c1e9b2a77" + "d4" * 26, "b07": "c7a1d04e8b31" + "e9" * 26}

    def inspected(host: str) -> str:
        return inspect(network, f"gpu-h200-{host}").replace("7d2e91c04bfa3e6f", cid[host])
    a = analyze_files(tmp_path, {"inspect/5f0c1e9b2a77.json": inspected("b03"),
                                 "inspect/c7a1d04e8b31.json": inspected("b07"),
                                 **{f"containers/{c}/{c}-json.log": text_of(PLATFORM, ERROR) for c in cid.values()}})
    log = f"containers/{cid['b03']}/{cid['b03']}-json.log"
    assert event_at(a.events, log, 2)["node"] == node


def test_near_miss_a_hostname_that_is_the_containers_own_name_was_given_to_it_not_taken_from_its_host(tmp_path):
    # (`--hostname vllm` next to `--network host`): the folder the operator named after the host stands
    a = analyze_files(tmp_path, {"gpu-h100-sxm-17/inspect.json": inspect("host", "vllm"),
                                 "gpu-h100-sxm-17/docker-logs.txt": text_of(PLATFORM, ERROR)})
    assert event_at(a.events, "gpu-h100-sxm-17/docker-logs.txt", 2)["node"] == "gpu-h100-sxm-17"


def test_a_container_log_in_docker_s_own_layout_takes_the_host_not_its_id_folder(tmp_path):
    cid = "d41f8a7c2e0b93516c7d2f4a8e1b0c3d5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c"
    log = f"containers/{cid}/{cid}-json.log"
    a = analyze_files(tmp_path, {"inspect.json": inspect("host", "b200-pod2-n06"), log: text_of(PLATFORM, ERROR)})
    assert event_at(a.events, log, 2)["node"] == "b200-pod2-n06"
    assert a.attribution.folder_node == {}


@pytest.mark.parametrize("network, node", [("host", "gpu-h100-sxm-17"), ("bridge", None)])
def test_a_folder_named_by_a_container_id_takes_the_host_its_inspect_names(tmp_path, network, node):
    # the containers of two nodes, folders named by their ids: each folder's inspect names its host (near miss:
    # under bridge networking the hostname is the container's own, no host's)
    a = analyze_files(tmp_path, {"containers/3f9c1a2b7d40/inspect.json": inspect(network, "gpu-h100-sxm-17"),
                                 "containers/3f9c1a2b7d40/docker-logs.txt": text_of(PLATFORM, ERROR),
                                 "containers/a81e55c0f2d9/inspect.json": inspect(network, "gpu-h100-sxm-18"),
                                 "containers/a81e55c0f2d9/docker-logs.txt": text_of(PLATFORM)})
    assert event_at(a.events, "containers/3f9c1a2b7d40/docker-logs.txt", 2)["node"] == node


def test_near_miss_a_container_id_folder_whose_files_name_two_hosts_is_no_one_nodes(tmp_path):
    a = analyze_files(tmp_path, {"containers/3f9c1a2b7d40/inspect.json": inspect("host", "gpu-h100-sxm-17"),
                                 "containers/3f9c1a2b7d40/inspect-old.json": inspect("host", "gpu-h100-sxm-18"),
                                 "containers/3f9c1a2b7d40/docker-logs.txt": text_of(PLATFORM, ERROR)})
    assert a.attribution.folder_node == {}


def v0_engine(handle_readers: str, prefix: str = "", tp: int = 4) -> list[str]:
    """A V0 multiproc engine: its own (driver worker's) lines unprefixed, its workers' prefixed."""
    return [prefix + "INFO 01-21 13:05:09 llm_engine.py:234] Initializing an LLM engine (v0.6.6) with config: "
                     f"model='m', tensor_parallel_size={tp}, pipeline_parallel_size=1",
            prefix + "INFO 01-21 13:05:11 shm_broadcast.py:255] vLLM message queue communication handle: "
            f"Handle(connect_ip='127.0.0.1', local_reader_ranks=[{handle_readers}], buffer_handle=(3, 4194304))",
            prefix + "(VllmWorkerProcess pid=212) INFO 01-21 13:05:11 model_runner.py:1094] Starting to load model m",
            prefix + "ERROR 01-21 13:05:28 engine.py:366] safetensors_rust.SafetensorError: Error while deserializing "
                     "header: MetadataIncompleteBuffer"]


@pytest.mark.parametrize("readers, tp, rank", [
    ("1, 2, 3", 4, 0),         # V0: the driver writes the queue its three workers read
    ("0, 1, 2, 3", 4, None),   # near miss: V1's executor writes it for every rank
    ("1, 2, 3", 8, None)])     # near miss: a second node's first worker writes one for its own node's ranks
def test_the_driver_worker_of_a_v0_engine_is_rank_0_by_the_queue_it_writes(tmp_path, readers, tp, rank):
    a = analyze_files(tmp_path, {"gpu-a/vllm.log": text_of(*v0_engine(readers, tp=tp))})
    assert event_at(a.events, "gpu-a/vllm.log", 4)["rank"] == rank
    assert event_at(a.events, "gpu-a/vllm.log", 3)["rank"] != 0


def test_in_a_journal_the_driver_is_its_units_process_and_no_other(tmp_path):
    unit = "Mar 04 10:21:{s} infer-07 vllm[184211]: "
    journal = [unit.format(s=30 + i) + line for i, line in enumerate(v0_engine("1", tp=2))]
    journal.append("Mar 04 10:21:40 infer-07 systemd[1]: vllm.service: Failed with result 'exit-code'.")
    a = analyze_files(tmp_path, {"journal.txt": text_of(*journal)})
    assert event_at(a.events, "journal.txt", 4)["rank"] == 0
    assert event_at(a.events, "journal.txt", 5)["rank"] is None   # systemd's own line, another process


@pytest.mark.parametrize("launcher, rank", [("started rank 5 pid 41877 on GPU 5", 5),   # the script names both
                                            ("started rank 5 on GPU 5", None)])          # near miss: no pid
def test_a_launchers_line_naming_a_rank_and_its_pid_gives_the_kill_of_that_pid_its_rank(tmp_path, launcher, rank):
    a = analyze_files(tmp_path, {
        "gpu-a/run.log": text_of(f"[run] 2026-03-12T03:00:03+01:00 {launcher} -> shard-5.log"),
        "gpu-a/journal.txt": text_of("Mar 12 04:17:41 gpu-a kernel: Out of memory: Killed process 41877 (python3) "
                                     "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:1001 pgtables:1kB")})
    assert event_at(a.events, "gpu-a/journal.txt", 1)["rank"] == rank


NODE = "ip-10-42-19-88.us-west-2.compute.internal"
SPOT = f"2025-10-21T14:39:52Z   default   Warning   SpotInterruption   {NODE}   Spot ITN received. Instance will be " \
       "interrupted at 2025-10-21T14:41:52Z"


def test_a_spot_interruption_event_is_about_the_node_it_names_by_its_full_name(tmp_path):
    from conftest import report_of
    a = analyze_files(tmp_path, {"kubectl-get-events.txt": text_of(
        "TIME                   NS        TYPE      REASON             OBJECT   MESSAGE", SPOT)})
    r = report_of(a)
    assert (r.root_cause.category, r.origin.node) == ("infra.node_lost", NODE)
    # near miss: the interruption of a pod's object names no node
    b = analyze_files(tmp_path / "b", {"kubectl-get-events.txt": text_of(SPOT.replace(NODE, "pod/vllm-0"))})
    assert report_of(b).origin.node is None


def ansible_docker_ps(rows: dict[str, str]) -> str:
    """`docker ps --no-trunc` run on several hosts by ansible: one section per host."""
    out = ["$ ansible gpu -m shell -a 'docker ps -a --no-trunc'"]
    for host, cid in rows.items():
        out += [f"{host} | CHANGED | rc=0 >>", "CONTAINER ID" + " " * 56 + "IMAGE   STATUS   NAMES",
                f"{cid}   vllm/vllm-openai:v0.11.0   Up 3 hours   vllm"]
    return text_of(*out)


def test_a_container_log_in_docker_s_layout_is_on_the_host_whose_docker_ps_lists_its_id(tmp_path):
    cid, other = "5a82d5a6796c" + "6f" * 26, "edf5b3f0fc7b" + "26" * 26
    log = f"containers/{cid}/{cid}-json.log"
    a = analyze_files(tmp_path / "a", {"ps.txt": ansible_docker_ps({"gpu-k09": other, "gpu-k11": cid}),
                                       log: text_of(PLATFORM, ERROR)})
    assert event_at(a.events, log, 2)["node"] == "gpu-k11"
    assert "gpu-k11" in witness_of(a, log, 2)[0]
    # near miss: a docker ps of no named host says nothing of where the container runs
    b = analyze_files(tmp_path / "b", {"ps.txt": ansible_docker_ps({"gpu-k11": cid}).replace("gpu-k11 | ", "| "),
                                       log: text_of(PLATFORM, ERROR)})
    assert event_at(b.events, log, 2)["node"] is None


def test_a_containers_own_hostname_is_not_a_node(tmp_path):
    a = analyze_files(tmp_path, {"inspect.json": inspect("bridge", "vllm-box"), "hostname.txt": "$ hostname\ngpu-h100-03\n",
                                 "docker-logs.txt": text_of("vllm-box:77:77 [0] NCCL INFO NCCL version 2.21.5", ERROR)})
    assert event_at(a.events, "docker-logs.txt", 1)["node"] == "gpu-h100-03"   # the host the container runs on
    assert "vllm-box" not in a.attribution.nodes
    # with no other name for its host, the name the container was given stands for it (and says so)
    a = analyze_files(tmp_path / "alone", {"inspect.json": inspect("bridge", "vllm-box"),
                                           "docker-logs.txt": text_of(PLATFORM, ERROR)})
    assert event_at(a.events, "docker-logs.txt", 2)["node"] == "vllm-box"
    assert "the container's hostname vllm-box (docker inspect in inspect.json:1)" in witness_of(a, "docker-logs.txt", 2)[0]


def test_uname_in_a_bug_report_and_a_provenance_note_name_their_files_host(tmp_path):
    report = text_of("nvidia-bug-report.sh will now collect information about your system", "",
                     "Linux a100-r3-n15 5.15.0-119-generic #129-Ubuntu SMP Fri Aug 2 19:25:20 UTC 2024 x86_64 GNU/Linux",
                     "[ 5000.100000] NVRM: Xid (PCI:0000:9a:00): 48, pid=4410, name=pt_main_thread, DBE")
    a = analyze_files(tmp_path, {"n15/nvidia-bug-report.log": report, "n14/env.txt": "# collected on a100-r3-n14\n"
                                                                                    "NCCL_DEBUG=WARN\n",
                                 "n14/vllm.log": text_of(PLATFORM)})
    assert event_at(a.events, "n15/nvidia-bug-report.log", 4)["node"] == "a100-r3-n15"
    assert a.attribution.file_node["n14/env.txt"] == "a100-r3-n14"


# --- a bundle of one node ----------------------------------------------------------------------------
ONE_HOST = {"vllm-serve.log": text_of(PLATFORM, ERROR), "df-h.txt": "$ df -h /data   # on host gpu-a40-07\n"
                                                                   "Filesystem  Size  Used Avail Use% Mounted on\n"}


def test_a_shell_comment_naming_the_host_makes_it_the_bundle_s_only_node(tmp_path):
    a = analyze_files(tmp_path, ONE_HOST)
    assert event_at(a.events, "vllm-serve.log", 2)["node"] == "gpu-a40-07"
    assert witness_of(a, "vllm-serve.log", 2)[0] == "the bundle's only node (the provenance note on df-h.txt:1)"


@pytest.mark.parametrize("history", ["# ~/.bash_history of mlops@gpu-a40-07\ncd ~/serving\n",
                                     "mlops@gpu-a40-07:~/serving$ vllm serve Qwen/Qwen2.5-7B-Instruct\n",
                                     "[root@gpu-a40-07 ~]# nvidia-smi -L\n"])
def test_a_shell_s_user_at_host_makes_it_the_bundle_s_only_node(tmp_path, history):
    a = analyze_files(tmp_path, {"vllm-serve.log": ONE_HOST["vllm-serve.log"], "history.txt": history})
    assert event_at(a.events, "vllm-serve.log", 2)["node"] == "gpu-a40-07"
    # near miss: a command that logs in to that host, or mails it, does not say the bundle was taken there
    near = analyze_files(tmp_path / "near", {"vllm-serve.log": ONE_HOST["vllm-serve.log"],
                                              "history.txt": "ssh mlops@gpu-a40-07 'nvidia-smi'\n"
                                                             "mail oncall@gpu-a40-07 < report.txt\n"})
    assert event_at(near.events, "vllm-serve.log", 2)["node"] is None


def test_a_note_that_opens_with_a_host_makes_it_the_bundle_s_only_node(tmp_path):
    note = "inf-h200-02, Mon 3 Nov 2025. The container died during the re-index burst.\n"
    a = analyze_files(tmp_path, {"vllm-serve.log": ONE_HOST["vllm-serve.log"], "notes.txt": note})
    assert event_at(a.events, "vllm-serve.log", 2)["node"] == "inf-h200-02"
    # near misses: the same name opening a later line of the note, and a model's name opening it
    for i, text in enumerate(["Mon 3 Nov 2025.\n" + note, "qwen3-32b (AWQ), the endpoint has been down since 14:00\n"]):
        near = analyze_files(tmp_path / f"near{i}", {"vllm-serve.log": ONE_HOST["vllm-serve.log"], "notes.txt": text})
        assert event_at(near.events, "vllm-serve.log", 2)["node"] is None


@pytest.mark.parametrize("note, node", [("Host gpu-ws-12, docker. The model was swapped at 09:14.\n", "gpu-ws-12"),
                                        ("Host networking: the container shares gpu-ws-12's stack.\n", None)])
def test_a_note_s_sentence_that_names_the_host_makes_it_the_bundle_s_only_node(tmp_path, note, node):
    a = analyze_files(tmp_path, {"vllm-serve.log": ONE_HOST["vllm-serve.log"], "notes.txt": "Ticket 4412\n" + note})
    assert event_at(a.events, "vllm-serve.log", 2)["node"] == node


@pytest.mark.parametrize("note, node", [("- llm-gw-02: 2x H100 NVL, docker compose project /opt/llmstack.\n", "llm-gw-02"),
                                        ("- qwen3-32b: 2x H100 needed at least.\n", None)])   # near miss: a model
def test_a_note_s_line_that_names_a_machine_by_its_gpus_makes_it_the_bundle_s_only_node(tmp_path, note, node):
    a = analyze_files(tmp_path, {"vllm-serve.log": ONE_HOST["vllm-serve.log"], "notes.txt": "INC-20931\n" + note})
    assert event_at(a.events, "vllm-serve.log", 2)["node"] == node


def test_a_pdsh_line_is_the_node_that_printed_it_not_the_bastion_that_ran_pdsh(tmp_path):
    out = text_of("[ops@bastion-2 ~]$ pdsh -w gpu-n0[3-4] 'docker logs -t vllm 2>&1 | tail'",
                  "gpu-n03: " + PLATFORM, "gpu-n04: " + PLATFORM, "gpu-n03: " + ERROR)
    a = analyze_files(tmp_path, {"pdsh-docker-logs.txt": out})
    nodes = [event_at(a.events, "pdsh-docker-logs.txt", n)["node"] for n in (2, 3, 4)]
    assert nodes == ["gpu-n03", "gpu-n04", "gpu-n03"]


@pytest.mark.parametrize("label, node", [("gpu-n03: ", None),   # pdsh's label: the host that printed the line only
                                         ("Nov 19 13:58:07 gpu-n03 vllm[4121]: ", "gpu-n03")])  # near miss: a journal
def test_a_file_of_pdsh_labelled_lines_is_no_one_host_s_and_its_unlabelled_lines_are_its_runner_s(tmp_path, label,
                                                                                                 node):
    out = text_of(*(label + t for t in (PLATFORM, PLATFORM, PLATFORM)), ERROR)
    a = analyze_files(tmp_path, {"collected.txt": out, "gpu-n04/vllm.log": text_of(PLATFORM)})
    assert event_at(a.events, "collected.txt", 1)["node"] == "gpu-n03"
    assert event_at(a.events, "collected.txt", 4)["node"] == node


def test_near_miss_a_bundle_naming_a_second_host_gives_no_node_by_default(tmp_path):
    a = analyze_files(tmp_path, {**ONE_HOST, "env.txt": "# collected on gpu-a40-08\nNCCL_DEBUG=WARN\n"})
    assert event_at(a.events, "vllm-serve.log", 2)["node"] is None


# --- pids: lifetimes, containers ---------------------------------------------------------------------------
def test_a_pid_reused_after_a_restart_is_another_process(tmp_path):
    start = "(APIServer pid=1) INFO 08-11 10:00:00 [api_server.py:1] vLLM API server version 0.11.0"
    a = analyze_files(tmp_path, {"gpu-a01/vllm.log": text_of(
        start, assigned(0, 2, 212), assigned(1, 2, 213), "(Worker_TP0 pid=212) " + ERROR[0:6] + ERROR[6:],
        start, assigned(1, 2, 212), assigned(0, 2, 213), "(Worker_TP1 pid=212) " + ERROR)})
    assert event_at(a.events, "gpu-a01/vllm.log", 4)["rank"] == 0
    assert event_at(a.events, "gpu-a01/vllm.log", 8)["rank"] == 1
    assert ("gpu-a01", 212) not in a.attribution.pid_rank      # no one rank for that pid
    assert "this lifetime of the pid" in witness_of(a, "gpu-a01/vllm.log", 8)[1]


OOM_212 = "[Mon Aug 25 23:20:00 2025] Out of memory: Killed process 212 (python3) total-vm:4120kB, anon-rss:2400kB"


def test_a_kernel_pid_is_not_a_containers_pid(tmp_path):
    import json
    docker = text_of(*(json.dumps({"log": ln + "\n", "stream": "stdout", "time": "2025-08-25T23:15:45.1Z"})
                       for ln in ("(APIServer pid=1) " + PLATFORM, assigned(3, 4, 212))))
    a = analyze_files(tmp_path, {"gpu-a01/container-json.log": docker, "gpu-a01/dmesg.txt": text_of(OOM_212)})
    assert event_at(a.events, "gpu-a01/dmesg.txt", 1)["rank"] is None   # host pid 212 is not the container's 212
    a = analyze_files(tmp_path / "mapped", {"gpu-a01/container-json.log": docker,
                                            "gpu-a01/dmesg.txt": text_of(OOM_212.replace("212", "48213")),
                                            "gpu-a01/proc-status.txt": "Name:\tpython3\nNSpid:\t48213\t212\n"})
    assert event_at(a.events, "gpu-a01/dmesg.txt", 1)["rank"] == 3
    assert "host pid 48213 is pid 212 in its container (NSpid)" in witness_of(a, "gpu-a01/dmesg.txt", 1)[1]


def test_an_xid_naming_its_process_takes_that_process_s_rank(tmp_path):
    xid = "[Mon Aug 25 23:20:00 2025] NVRM: Xid (PCI:0000:3a:00): 45, pid=212, name=VLLM::Worker_TP, Ch 00000010"
    unknown = "[Mon Aug 25 23:20:00 2025] NVRM: Xid (PCI:0000:3a:00): 74, pid='<unknown>', name=<unknown>, NVLink: " \
              "fatal error detected on link 11"
    a = analyze_files(tmp_path, {"gpu-a01/vllm.log": text_of(assigned(3, 4, 212)),
                                 "gpu-a01/dmesg.txt": text_of(xid, unknown)})
    assert event_at(a.events, "gpu-a01/dmesg.txt", 1)["rank"] == 3
    # near miss: the driver could not tell whose work it was
    assert event_at(a.events, "gpu-a01/dmesg.txt", 2)["rank"] is None


@pytest.mark.parametrize("pid_mode, rank", [("host", 3), ("", None)])
def test_a_container_sharing_the_host_s_pids_is_named_by_its_inspect_beside_its_log(tmp_path, pid_mode, rank):
    import json
    cid = "9f4c1e07b2d85a36c0e19b7f4a2d6e58c3b10f97e2a4d5c86b1e0f3a9c7d2b45"
    docker = text_of(*(json.dumps({"log": ln + "\n", "stream": "stdout", "time": "2025-08-25T23:15:45.1Z"})
                       for ln in ("(APIServer pid=1) " + PLATFORM, assigned(3, 4, 212))))
    inspect = json.dumps([{"Id": cid, "Name": "/vllm-pp", "Config": {"Hostname": "gpu-a01"},
                           "HostConfig": {"NetworkMode": "host", "PidMode": pid_mode}}], indent=2)
    a = analyze_files(tmp_path, {f"gpu-a01/containers/{cid}/{cid}-json.log": docker, "gpu-a01/docker-inspect.json": inspect,
                                 "gpu-a01/dmesg.txt": text_of(OOM_212)})
    # PidMode host: the kernel's pid 212 is the worker's own; near miss: a container of its own pid namespace
    assert event_at(a.events, "gpu-a01/dmesg.txt", 1)["rank"] == rank


def test_a_kernel_pid_is_the_process_of_a_plain_log_with_the_same_pid(tmp_path):
    a = analyze_files(tmp_path, {"gpu-a01/vllm.log": text_of(assigned(3, 4, 212)), "gpu-a01/dmesg.txt": text_of(OOM_212)})
    assert event_at(a.events, "gpu-a01/dmesg.txt", 1)["rank"] == 3


@pytest.mark.parametrize("pid, rank", [(4712, 3),      # the pid of a worker named Worker_TP3 (no rank line anywhere)
                                       (4799, None)])  # near miss: a pid no worker of the deployment has
def test_a_kernel_pid_takes_the_rank_the_worker_s_name_gives(tmp_path, pid, rank):
    workers = [f"(Worker_TP{i} pid={4709 + i}) INFO 05-27 10:02:37 [pynccl.py:70] vLLM is using nccl==2.27.3"
               for i in range(4)]
    segv = (f"May 27 10:02:38 gpu-a07 kernel: [1236086.543531] pt_main_thread[{pid}]: segfault at 28 ip "
            "00007f3b2c4d1e6b sp 00007ffd0c7e2b10 error 4 in libnccl.so.2[7f3b2c200000+1f3b000]")
    a = analyze_files(tmp_path, {"gpu-a07/vllm.log": text_of("(APIServer pid=4700) " + PLATFORM, *workers),
                                 "gpu-a07/kern.log": text_of(segv)})
    assert event_at(a.events, "gpu-a07/kern.log", 1)["rank"] == rank


@pytest.mark.parametrize("title, rank", [("VLLM::Worker_TP1", 1),      # the worker the host's listing names
                                         ("VLLM::EngineCore", None)])  # near miss: a process of no rank
def test_a_kernel_pid_takes_the_rank_its_title_in_a_host_process_listing_gives(tmp_path, title, rank):
    status = ("* vllm.service - vLLM\n     Active: active (running)\n   Main PID: 48211 (vllm)\n"
              "     CGroup: /system.slice/vllm.service\n"
              "             |-48211 /opt/vllm/venv/bin/python3 /opt/vllm/venv/bin/vllm serve m "
              "--tensor-parallel-size 2\n"
              f"             `-48377 {title}\n")
    xid = ("[Mon Aug 25 23:20:00 2025] NVRM: Xid (PCI:0000:61:00): 119, pid=48377, name=VLLM::Worker_TP, "
           "Timeout after 6s")
    a = analyze_files(tmp_path, {"gpu-a01/vllm.log": text_of("(APIServer pid=48211) " + PLATFORM,
                                                             "(APIServer pid=48211) INFO 08-25 23:00:00 [utils.py:1] "
                                                             "non-default args: {'tensor_parallel_size': 2}"),
                                 "gpu-a01/systemctl-status.txt": status, "gpu-a01/dmesg.txt": text_of(xid)})
    assert event_at(a.events, "gpu-a01/dmesg.txt", 1)["rank"] == rank


# --- GPUs: nvidia-smi as maps, the kernel's GPU identity ---------------------------------------------------
SMI_Q = """==============NVSMI LOG==============

Timestamp                                 : Mon Aug 11 07:35:59 2026
Driver Version                            : 570.86.15
CUDA Version                              : 12.8

Attached GPUs                             : 8
GPU 00000000:9A:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Serial Number                         : 1652922001234
    GPU UUID                              : GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77
    Minor Number                          : 1
"""
SMI_L = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0a1b2c3d-0000-1111-2222-333344445555)\n" \
        "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77)\n"


def test_nvidia_smi_q_of_one_gpu_and_l_give_the_gpu_of_an_xid_its_index_uuid_and_serial(tmp_path):
    a = analyze_files(tmp_path, {**TWO_COMMS, "node-b/dmesg.txt": text_of(XID_9A), "node-b/smi-q-i1.txt": SMI_Q,
                                 "node-b/smi-L.txt": SMI_L})
    ev = event_at(a.events, "node-b/dmesg.txt", 1)
    assert event_gpu(a.attribution, ev) == {"index": 1, "bus_id": "0000:9a:00",
                                                 "uuid": "GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77",
                                                 "serial": "1652922001234"}
    assert gpu_identity(a.attribution, "gpu-b", uuid="GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77")["index"] == 1


def test_the_kernels_own_gpu_lines_give_the_uuid_and_serial_of_a_bus_id(tmp_path):
    a = analyze_files(tmp_path, {"gpu-a01/dmesg.txt": text_of(
        "[ 10.000000] NVRM: GPU at PCI:0000:9a:00: GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77",
        "[ 10.000001] NVRM: GPU Board Serial Number: 1652922001234", XID_9A)})
    g = event_gpu(a.attribution, event_at(a.events, "gpu-a01/dmesg.txt", 3))
    assert (g["bus_id"], g["uuid"], g["serial"]) == ("0000:9a:00", "GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77",
                                                    "1652922001234")


@pytest.mark.parametrize("uuid, index", [("GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77", 4),   # the kernel's UUID
                                         ("GPU-0a1b2c3d-0000-1111-2222-333344445555", None)])  # near miss: other
def test_a_gpu_listing_a_job_printed_in_its_log_gives_the_kernels_uuid_its_index(tmp_path, uuid, index):
    """`srun -l nvidia-smi --query-gpu=index,pci.bus_id,uuid` in the job's output: the row with the UUID the kernel
    names beside the bus id of its Xid is that GPU's index (whichever task printed it: a UUID is unique)."""
    a = analyze_files(tmp_path, {
        "job.out": text_of("1: index, pci.bus_id, uuid", f"1: 4, 00000000:9A:00.0, {uuid}"),
        "gpu-a01/dmesg.txt": text_of("[ 10.000000] NVRM: GPU at PCI:0000:9a:00: "
                                     "GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77", XID_9A)})
    g = event_gpu(a.attribution, event_at(a.events, "gpu-a01/dmesg.txt", 2))
    assert g["index"] == index


@pytest.mark.parametrize("uuid, node, rank", [("GPU-5f2b8e1c-0d3e-7a41-9b6c-2f1e0a9d8c77", "gpu-b", 3),
                                               ("GPU-0a1b2c3d-0000-1111-2222-333344445555", None, None)])  # unlisted
def test_a_line_that_names_a_gpu_by_uuid_alone_is_about_the_node_and_rank_of_that_gpu(tmp_path, uuid, node, rank):
    """The device plugin's Xid names its GPU by UUID only: node-b's `nvidia-smi -q` lists that UUID at 9a:00,
    where NCCL saw rank 3. Near miss: a UUID no listing holds names neither."""
    a = analyze_files(tmp_path, {**TWO_COMMS, "node-b/smi-q-i1.txt": SMI_Q, "k8s/nvidia-device-plugin.log": text_of(
        "I0811 07:52:00.741607       1 health.go:177] XidCriticalError: Xid=79 on Device="
        f"{uuid}; marking device as unhealthy.")})
    ev = event_at(a.events, "k8s/nvidia-device-plugin.log", 1)
    assert (ev["node"], ev["rank"]) == (node, rank)
    if node:
        node_from, rank_from = witness(a.attribution, ev)
        assert node_from.startswith("the GPU it names on line 1, GPU-5f2b8e1c") and "node-b/smi-q-i1.txt" in node_from
        assert "NCCL busId 9a000" in rank_from


@pytest.mark.parametrize("named, gpu6", [({0: 8, 1: 9, 2: 10, 3: 11, 4: 12, 5: 13, 7: 15}, 14),
                                         # near misses: the last index unnamed is beyond those named; ranks named
                                         # with no one offset from their local ranks
                                         ({0: 8, 1: 9, 2: 10, 3: 11, 4: 12, 5: 13}, None),
                                         ({0: 8, 1: 9, 5: 3, 7: 15}, None)])
def test_a_gpu_between_those_a_nodes_workers_name_is_the_local_rank_they_leave_unnamed(named, gpu6):
    """A worker stuck in its GPU's fault prints nothing: its node's other workers, each the node's first rank plus
    its local rank, name the rank left between them."""
    from k3logs.diagnose.assign import gpu_ranks
    from k3logs.diagnose.attribution import Attribution
    a = Attribution()
    a.local_rank = {("gpu-b", lr): r for lr, r in named.items()}
    assert gpu_ranks(a).get(("gpu-b", 6)) == gpu6


def test_an_hcas_pci_address_is_not_a_gpus(tmp_path):
    # no topo -m ties mlx5_1 to a GPU: its address names no GPU and no rank
    a = analyze_files(tmp_path, {**TWO_COMMS, "node-b/dmesg.txt": text_of(
        "[ 5000.100000] mlx5_core 0000:5c:00.0: poll_health:806:(pid 0): Fatal error 1 detected")})
    ev = event_at(a.events, "node-b/dmesg.txt", 1)
    assert (ev["gpu"], ev["rank"]) == (None, None)
    assert event_gpu(a.attribution, ev) is None


# --- the report says how ------------------------------------------------------------------------------------
def test_the_report_gives_node_from_and_rank_from_and_the_markdown_says_them(tmp_path):
    from conftest import report_of
    from k3logs.report.render import render_markdown
    a = analyze_files(tmp_path, {**TWO_COMMS, "node-b/dmesg.txt": text_of(XID_9A)})
    r = report_of(a)
    assert (r.origin.node, r.origin.rank) == ("gpu-b", 3)
    assert r.origin.node_from.startswith("node folder node-b/")
    assert "NCCL busId 9a000" in r.origin.rank_from
    md = render_markdown(r)
    assert "Node from node folder node-b/" in md and "; rank from the GPU at PCI 0000:9a:00" in md
    assert '"node_from": "node folder node-b/' in r.to_json()


def test_a_rank_by_pid_on_a_machine_with_no_name_says_no_node(tmp_path):
    log = text_of("(Worker_TP1 pid=301) INFO 08-11 10:00:00 [parallel_state.py:1] rank 1 in world size 2 is "
                  "assigned as DP rank 0, PP rank 0, TP rank 1, EP rank 1",
                  "(Worker_TP1 pid=301) " + ERROR)
    a = analyze_files(tmp_path, {"vllm.log": log}, name="case")
    node_from, rank_from = witness_of(a, "vllm.log", 2)
    assert event_at(a.events, "vllm.log", 2)["rank"] == 1
    assert rank_from.startswith("pid 301: ") and "None" not in rank_from


# ------------------------------------------------------------------------------------------
# the lines whose fields attribution reads are data ([[rank_line]]), checked on load with the Rust engine
# ------------------------------------------------------------------------------------------
def test_every_rank_line_the_code_reads_loads_with_its_samples():
    from k3logs.catalogue.witnesses import RANK_LINES, builtin_witnesses
    w = builtin_witnesses()
    assert set(w.rank_lines) == set(RANK_LINES)
    got = pl.Series(["rank 3 in world size 8 is assigned as DP rank 0, PP rank 0, TP rank 3, EP rank 3"]) \
        .str.extract_groups(w.rank_line("assigned"))[0]
    assert (got["r"], got["w"], got["tp"]) == ("3", "8", "3")


@pytest.mark.parametrize("change, want", [
    (('fields = { r = "3", w = "8", dp', 'fields = { r = "4", w = "8", dp'), "gives"),
    (('no_match = ["rank 3 in world size 8 is ready"]',
      'no_match = ["rank 3 in world size 8 is assigned as DP rank 0, PP rank 0, TP rank 3"]'), "matches"),
    (('name = "gpu_serial"', 'name = "gpu_board_serial"'), "'gpu_serial' is missing"),
    (("regex = 'GPU Board Serial Number: (?P<serial>\\w+)'",
      "regex = 'GPU Board Serial Number: (?<=x)(?P<serial>\\w+)'"), "Rust engine"),
    # (a line analyze would not keep: its sample holds none of the literals it is kept by)
    (('keep = ["Board Serial Number"]', 'keep = ["Board Serial No"]'), "holds none of its `keep` literals"),
])
def test_a_rank_line_whose_sample_fields_near_miss_name_or_regex_is_wrong_is_an_issue(tmp_path, change, want):
    from k3logs.catalogue.witnesses import load_witnesses
    with pytest.raises(CatalogueError) as e:
        load_witnesses(broken_pattern_file(tmp_path, "attribution.toml", *change))
    assert any(want in str(p) for p in e.value.problems), e.value.problems


@pytest.mark.parametrize("change, want", [
    (('fields = { host = "gpu-k3-n02" }', 'fields = { host = "gpu-k3-n03" }'), "should give"),
    (('no_match = ["# copied from the old L40S box"', 'no_match = ["# collected on gpu-k3-n09"'), "near miss"),
])
def test_a_line_witness_whose_sample_or_near_miss_fails_is_an_issue_where_it_is_written(tmp_path, change, want):
    from k3logs.catalogue.witnesses import load_witnesses
    with pytest.raises(CatalogueError) as e:
        load_witnesses(broken_pattern_file(tmp_path, "attribution.toml", *change))
    assert any(want in str(p) and "provenance" in str(p) and p.location.line for p in e.value.problems), \
        e.value.problems


# ------------------------------------------------------------------------------------------
# a node named by a file's name: Slurm's -o %N, NCCL_DEBUG_FILE=%h.%p, a collector's dmesg-HOST.txt
# ------------------------------------------------------------------------------------------
SLURM_STEP_END = "slurmstepd: error: *** STEP 4471823.0 ON hgx-h200-113 CANCELLED AT 2026-12-03T15:06:03 ***"
VLLM_LINE = "INFO 12-03 14:21:10 [__init__.py:231] Automatically detected platform cuda."


def test_a_sibling_file_made_from_the_same_name_template_is_its_host_s(tmp_path):
    a = analyze_files(tmp_path, {"logs/job-7-hgx-h200-113.out": text_of(VLLM_LINE, SLURM_STEP_END),
                                 "logs/job-7-hgx-h200-114.out": text_of(VLLM_LINE)})
    assert a.attribution.file_node["logs/job-7-hgx-h200-113.out"] == "hgx-h200-113"
    assert a.attribution.file_node["logs/job-7-hgx-h200-114.out"] == "hgx-h200-114"


def test_near_miss_a_file_whose_name_differs_elsewhere_is_no_node_s(tmp_path):
    a = analyze_files(tmp_path, {"logs/job-7-hgx-h200-113.out": text_of(VLLM_LINE, SLURM_STEP_END),
                                 "logs/job-8-summary.out": text_of(VLLM_LINE)})
    assert a.attribution.file_node["logs/job-8-summary.out"] is None


SACCT = ("JobID             JobName  Partition               NodeList               Start\n"
         "------------ ------------ ---------- ---------------------- -------------------\n"
         "4471823            k3-dp2       h200     hgx-h200-[113-114] 2026-12-03T14:21:03\n")


def test_a_file_name_holding_a_host_the_slurm_job_ran_on_is_that_host_s(tmp_path):
    # the two nodes' outputs were renamed apart (no common template): the job's node list makes 114 a host
    files = {"part5-hgx-h200-113.txt": text_of(VLLM_LINE, SLURM_STEP_END), "dump3-hgx-h200-114.dat": text_of(VLLM_LINE)}
    fn = analyze_files(tmp_path / "a", {**files, "capture.txt": SACCT}).attribution.file_node
    assert fn["dump3-hgx-h200-114.dat"] == "hgx-h200-114"
    # near miss: without the job's node list, 114 is a host nothing names
    assert analyze_files(tmp_path / "b", files).attribution.file_node["dump3-hgx-h200-114.dat"] is None


def test_a_file_name_holding_a_known_host_as_a_whole_token_is_that_host_s(tmp_path):
    files = {"gpu-b12/vllm.log": text_of("gpu-b12:77:77 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.12<0>"),
             "gpu-b1/vllm.log": text_of("gpu-b1:77:77 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"),
             "dumps/dmesg-gpu-b12.txt": "[ 1.000000] Linux version 5.15\n",
             "dumps/gpu-b1-2-notes.txt": "[ 1.000000] Linux version 5.15\n"}   # near miss: gpu-b1-2 is not gpu-b1
    fn = analyze_files(tmp_path, files).attribution.file_node
    assert (fn["dumps/dmesg-gpu-b12.txt"], fn["dumps/gpu-b1-2-notes.txt"]) == ("gpu-b12", None)


def test_folders_named_after_host_paths_are_layout_not_sibling_nodes(tmp_path):
    log = text_of(VLLM_LINE)
    layout = analyze_files(tmp_path / "layout", {"var-lib-docker-containers/5e9a0c2b7f3d/5e9a0c2b7f3d-json.log": log,
                                                  "var-log-procsnap/ps.txt": log}).attribution
    assert layout.folder_node == {}
    siblings = analyze_files(tmp_path / "nodes", {"node-a/vllm.log": log, "node-b/vllm.log": log}).attribution
    assert siblings.folder_node == {"node-a": "node-a", "node-b": "node-b"}   # near miss: names of siblings


def test_a_node_s_one_fully_qualified_name_is_the_name_the_report_gives():
    from k3logs.catalogue.witnesses import builtin_witnesses
    from k3logs.diagnose.attribute import _full_names
    eks = "ip-10-44-183-27.us-west-2.compute.internal"
    got = _full_names([eks, "ip-10-44-183-27", "gpu-a.lab.example", "gpu-a.dc2.example", "10.44.183.27",
                       "other-9.example"], {"ip-10-44-183-27", "gpu-a"}, builtin_witnesses())
    # near misses: two full names for gpu-a (which one?), an address, a host that is no node of the bundle
    assert got == {"ip-10-44-183-27": eks}


def test_node_folders_inside_a_layout_folder_beside_others(tmp_path):
    log = text_of(VLLM_LINE)
    fn = analyze_files(tmp_path / "a", {"nodes/gpu-h200-p11/vllm.log": log, "nodes/gpu-h200-p14/dmesg.txt": log,
                                        "launch/run.sh": "ray start --head\n"}).attribution.folder_node
    assert fn == {"nodes/gpu-h200-p11": "gpu-h200-p11", "nodes/gpu-h200-p14": "gpu-h200-p14"}
    near = analyze_files(tmp_path / "b", {"logs/app/vllm.log": log, "launch/run.sh": "ray start --head\n"})
    assert near.attribution.folder_node == {}   # near miss: a folder that does not look like a host
    # near miss: one folder named like a host inside a layout folder is a pod's, not the bundle's one node
    pod = analyze_files(tmp_path / "c", {"pods/llama8b-7f9c6d5b8-qk2vd/vllm.log": log, "node/notes.txt": "x\n"})
    assert pod.attribution.folder_node == {}


RELAYED = "(RayWorkerWrapper pid=9127, ip=10.52.4.24) INFO 11-21 14:03:30 [worker.py:1] world_size=16 rank=8"


def test_ray_s_local_node_ip_in_a_node_s_file_names_that_node_s_address(tmp_path):
    a = analyze_files(tmp_path / "a", {"gpu-h200-p11/vllm.log": text_of(RELAYED),
                                       "gpu-h200-p14/ray-start.log": text_of("Local node IP: 10.52.4.24")})
    assert a.attribution.ip_node == {"10.52.4.24": "gpu-h200-p14"}
    near = analyze_files(tmp_path / "b", {"vllm.log": text_of(RELAYED, "Local node IP: 10.52.4.24")})
    assert near.attribution.ip_node == {}   # near miss: a file of no node says nothing of whose address it is
    # `ray start` in a terminal colours the words: the line is read all the same
    coloured = "2026-05-12 08:52:43,771\tINFO scripts.py:1047 -- \x1b[37mLocal node IP\x1b[39m: \x1b[1m10.52.4.24\x1b[22m"
    c = analyze_files(tmp_path / "c", {"gpu-h200-p11/vllm.log": text_of(RELAYED),
                                       "gpu-h200-p14/ray-start.log": text_of(coloured)})
    assert c.attribution.ip_node == {"10.52.4.24": "gpu-h200-p14"}


@pytest.mark.parametrize("second, want", [(None, {"10.52.4.11": "gpu-h200-p11"}), ("10.52.4.24", {})])
def test_a_node_s_file_that_prints_two_local_node_ips_names_neither(tmp_path, second, want):
    """A file of one node (its folder's) whose lines print two Ray node addresses under no label holds two hosts'
    output (`srun -w HOST` steps appended to one file): the file's node is one of them at most, so neither is
    named by the file. Near miss: one address, the file's node's."""
    lines = ["Local node IP: 10.52.4.11"] + ([f"Local node IP: {second}"] if second else [])
    a = analyze_files(tmp_path, {"gpu-h200-p11/slurm-4242.out": text_of(*lines)})
    assert a.attribution.ip_node == want


@pytest.mark.parametrize("banner, want", [
    ("[2026-02-17 13:58:02] job 48213 on gpu-h200-p[11,14], head=gpu-h200-p11 (10.52.4.11)", "gpu-h200-p11"),
    ("[2026-02-17 13:58:02] NCCL INFO Bootstrap : Using ib0 (10.52.4.11)", None)])   # near miss: an interface
def test_a_host_written_beside_its_address_in_a_log_line_ties_them(tmp_path, banner, want):
    """A job's own banner in its output ties a host to its address, as a note does: the log's host (IP) forms
    ([[host_ip]] `in_logs`) are read on its lines (those the analysis keeps: every line here)."""
    a = analyze_files(tmp_path, {"slurm-48213.out": text_of(banner, RELAYED.replace("10.52.4.24", "10.52.4.11"))},
                      keep_all=True)
    assert a.attribution.ip_node.get("10.52.4.11") == want


def test_a_launcher_starting_ray_on_a_host_names_the_local_node_ip_ray_prints_next(tmp_path):
    job = ["[09:02:09] Starting Ray HEAD on gpu-h200-p11", "Local node IP: 10.52.4.11", "Ray runtime started.",
           "[09:02:25] Starting Ray WORKER 1 on gpu-h200-p14", "Local node IP: 10.52.4.24", RELAYED]
    a = analyze_files(tmp_path / "a", {"slurm-4242.out": text_of(*job)})
    assert a.attribution.ip_node == {"10.52.4.11": "gpu-h200-p11", "10.52.4.24": "gpu-h200-p14"}
    # near miss: the worker's launcher line comes after its 'Local node IP' (that address follows the head's
    # start, with another `ray start` line between): no host is tied to it
    swapped = [job[0], job[1], job[2], job[4], job[3], RELAYED]
    b = analyze_files(tmp_path / "b", {"slurm-4242.out": text_of(*swapped)})
    assert b.attribution.ip_node == {"10.52.4.11": "gpu-h200-p11"}


def test_ray_s_local_node_ip_printed_by_an_srun_task_names_that_task_s_node(tmp_path):
    """One job output for every node (srun -l): each 'Local node IP' is its task's node's, not the file's."""
    nodes = "SLURM_JOB_NODELIST=gpu-h200-p[11,14]"
    job = [nodes, "0: Local node IP: 10.52.4.11", "1: Local node IP: 10.52.4.24", "0: " + RELAYED]
    a = analyze_files(tmp_path / "a", {"gpu-h200-p11/slurm-4242.out": text_of(*job)})
    assert a.attribution.ip_node == {"10.52.4.11": "gpu-h200-p11", "10.52.4.24": "gpu-h200-p14"}
    # near miss: lines with no task label are the file's node's
    b = analyze_files(tmp_path / "b", {"gpu-h200-p11/slurm-4242.out": text_of(nodes, "Local node IP: 10.52.4.11")})
    assert b.attribution.ip_node == {"10.52.4.11": "gpu-h200-p11"}


@pytest.mark.parametrize("second, ip_node", [
    ("10.52.4.24", {}),                                 # one label, two addresses: two steps on two nodes (srun -w)
    ("10.52.4.11", {"10.52.4.11": "gpu-h200-p11"})])    # near miss: the label's one address, printed twice
def test_a_task_label_that_prints_two_addresses_of_its_own_names_no_node_by_them(tmp_path, second, ip_node):
    """`srun -l -N1 -n1 -w HEAD ray start --head` and `srun -l -N1 -n1 -w WORKER ray start`: each step's one task is
    task 0, on another node; which is which the output does not say."""
    job = ["SLURM_JOB_NODELIST=gpu-h200-p[11,14]", "0: Local node IP: 10.52.4.11", f"0: Local node IP: {second}"]
    a = analyze_files(tmp_path, {"slurm-4242.out": text_of(*job)})
    assert a.attribution.ip_node == ip_node


DRIVER = ("2026-10-14 08:31:21,424\tINFO worker.py:1692 -- Connecting to existing Ray cluster at address: "
          "10.52.4.11:6379...")


@pytest.mark.parametrize("local, head_tied", [("(RayWorkerWrapper pid=58611) INFO 11-21 14:03:30 [worker.py:1] "
                                               "world_size=16 rank=0", True),
                                              # near miss: a worker line relayed from the head's address: the driver
                                              # is not on the head
                                              ("(RayWorkerWrapper pid=58611, ip=10.52.4.11) INFO 11-21 14:03:30 "
                                               "[worker.py:1] world_size=16 rank=0", False)])
def test_a_ray_driver_in_a_nodes_file_that_relays_nothing_from_the_head_names_the_heads_address(tmp_path, local,
                                                                                                  head_tied):
    a = analyze_files(tmp_path, {"gpu-h200-p11/vllm.log": text_of(DRIVER, local, RELAYED),
                                 "gpu-h200-p14/dmesg.txt": "[  1.0] Linux version 6.8.0\n"})
    assert (a.attribution.ip_node.get("10.52.4.11") == "gpu-h200-p11") == head_tied
    # the one address left and the one node folder left are one node
    assert (a.attribution.ip_node.get("10.52.4.24") == "gpu-h200-p14") == head_tied


GCS_DEAD = ('{{"label":"RAY_NODE_REMOVED","message":"The node with node id: 3b9e51c0d7a84f2e and address: {ip} and '
            'node name: {ip} has been marked dead because the detector has missed too many heartbeats from it."}}')


@pytest.mark.parametrize("relayed, tied", [([RELAYED], True),
                                           # near miss: the deployment's lines come from two addresses no host is
                                           # tied to: which is the node left is not told
                                           ([RELAYED, RELAYED.replace("10.52.4.24", "10.52.4.27")], False)])
def test_the_ray_address_left_is_the_deployments_own_before_a_node_the_gcs_marked_dead(tmp_path, relayed, tied):
    """The GCS's event log also marks dead a node that had left the cluster before the run (10.52.4.31): the
    address the deployment's relayed lines come from is the one left for the node folder left."""
    a = analyze_files(tmp_path, {"gpu-h200-p11/vllm.log": text_of(DRIVER, "(RayWorkerWrapper pid=58611) INFO 11-21 "
                                                                          "14:03:30 [worker.py:1] rank=0", *relayed),
                                 "gpu-h200-p11/event_GCS.log": text_of(GCS_DEAD.format(ip="10.52.4.31"),
                                                                       GCS_DEAD.format(ip="10.52.4.24")),
                                 "gpu-h200-p14/dmesg.txt": "[  1.0] Linux version 6.8.0\n"})
    assert (a.attribution.ip_node.get("10.52.4.24") == "gpu-h200-p14") == tied
    assert "10.52.4.31" not in a.attribution.ip_node


def test_near_miss_of_two_node_folders_left_the_one_ray_address_left_is_neither(tmp_path):
    a = analyze_files(tmp_path, {"gpu-h200-p11/vllm.log": text_of(DRIVER, RELAYED),
                                 "gpu-h200-p14/dmesg.txt": "[  1.0] Linux version 6.8.0\n",
                                 "gpu-h200-p15/dmesg.txt": "[  1.0] Linux version 6.8.0\n"})
    assert "10.52.4.24" not in a.attribution.ip_node


def test_a_launcher_that_announces_every_ray_node_first_pairs_them_with_the_addresses_in_order(tmp_path):
    head, worker = "Starting Ray head on gpu-h200-p11", "Starting Ray worker on gpu-h200-p14"
    started = ["Local node IP: 10.52.4.11", *["Ray runtime started."] * 10, "Local node IP: 10.52.4.24"]
    a = analyze_files(tmp_path / "a", {"slurm-4242.out": text_of(head, worker, *started, RELAYED)})
    assert a.attribution.ip_node == {"10.52.4.11": "gpu-h200-p11", "10.52.4.24": "gpu-h200-p14"}
    # near miss: three announcements and two addresses: which node printed which is not told
    third = "Starting Ray worker on gpu-h200-p15"
    b = analyze_files(tmp_path / "b", {"slurm-4242.out": text_of(head, worker, third, *started, RELAYED)})
    assert b.attribution.ip_node == {}


def test_the_one_ray_address_left_is_the_one_node_of_the_slurm_job_left(tmp_path):
    # the job ran on two nodes; the head's address is known, the worker's is not: the one Ray address left is it
    files = {"gpu-c016/vllm.log": text_of(RELAYED.replace("10.52.4.24", "10.70.12.42")),
             "gpu-c016/ip-addr.txt": "$ hostname -I\n10.70.12.41\n"}
    env = "SLURM_JOB_ID=771234\nSLURM_JOB_NAME=serve\nSLURM_NNODES={n}\nSLURM_JOB_NODELIST=gpu-c[016-{last}]\n"
    a = analyze_files(tmp_path / "a", {**files, "env.txt": env.format(n=2, last="017")})
    assert a.attribution.ip_node.get("10.70.12.42") == "gpu-c017"
    # near miss: three nodes in the job, two without an address: which one is it?
    b = analyze_files(tmp_path / "b", {**files, "env.txt": env.format(n=3, last="018")})
    assert "10.70.12.42" not in b.attribution.ip_node


def test_flat_files_named_by_host_are_their_hosts(tmp_path):
    kern = "[ 100.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05\n"
    fn = analyze_files(tmp_path / "a", {"dmesg.gpu-x17.txt": kern, "dmesg.gpu-x18.txt": kern,
                                        "vllm-gpu-x17.log": text_of(VLLM_LINE), "vllm-gpu-x18.log": text_of(VLLM_LINE)}
                       ).attribution.file_node
    assert (fn["vllm-gpu-x17.log"], fn["dmesg.gpu-x18.txt"]) == ("gpu-x17", "gpu-x18")
    # near miss: files named by rank, and no host's own dump among them
    near = analyze_files(tmp_path / "b", {"nccl-rank0.log": text_of(VLLM_LINE), "nccl-rank1.log": text_of(VLLM_LINE),
                                          "vllm-rank0.log": text_of(VLLM_LINE), "vllm-rank1.log": text_of(VLLM_LINE)})
    assert set(near.attribution.file_node.values()) == {None}


def test_a_folder_whose_files_all_hold_one_host_is_that_hosts(tmp_path):
    kern = "[ 100.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05\n"
    fn = analyze_files(tmp_path / "a", {"gpu-x17.dmesg.txt": kern, "gpu-x17.vllm-serve.log": text_of(VLLM_LINE),
                                        "launch-gpu-x17.sh": "vllm serve m\n"}).attribution.file_node
    assert fn["gpu-x17.vllm-serve.log"] == "gpu-x17"
    # near miss: a file of the folder does not begin with it (the token is one file's, not the folder's)
    fn = analyze_files(tmp_path / "b", {"gpu-x17.dmesg.txt": kern, "gpu-x17.vllm-serve.log": text_of(VLLM_LINE),
                                        "vllm-serve.log": text_of(VLLM_LINE)}).attribution.file_node
    assert fn["gpu-x17.vllm-serve.log"] is None


@pytest.mark.parametrize("relayed", [True, False])   # near miss: the driver's own CUDA error
def test_a_cause_in_a_relayed_ray_task_error_is_the_actor_that_raised_it(tmp_path, relayed):
    ec = "(EngineCore_DP0 pid=48502) ERROR 05-06 16:43:12 [core.py:720] "
    head = ("ray.exceptions.RayTaskError(RuntimeError): ray::RayWorkerWrapper.__ray_call__() (pid=4811, "
            "ip=10.128.0.22, actor_id=392dbf6ce)") if relayed else "Traceback (most recent call last):"
    lines = [
        "(RayWorkerWrapper pid=4811, ip=10.128.0.22) INFO 05-06 16:00:01 [parallel_state.py:1] rank 9 in world size 12 "
        "is assigned as DP rank 0, PP rank 2, TP rank 1, EP rank 9",
        ec + "EngineCore encountered a fatal error.",
        ec + head,
        ec + '  File "/opt/vllm/model_executor/layers/fused_moe.py", line 88, in topk',
        ec + "RuntimeError: CUDA error: an illegal memory access was encountered",
    ]
    a = analyze_files(tmp_path, {"gpu-h1/vllm-serve.log": "\n".join(lines) + "\n"})
    root = a.decision.root
    assert (root.category, root.line) == ("gpu.illegal_access", 5)
    assert (root.node, root.rank) == (("10.128.0.22", 9) if relayed else ("gpu-h1", None))
    # (the line itself stays the engine core's, which printed it)
    assert event_at(a.events, "gpu-h1/vllm-serve.log", 5)["node"] == "gpu-h1"


@pytest.mark.parametrize("own_log", [True, False])   # near miss: the relay is the only witness
def test_the_actors_own_log_wins_over_the_traceback_a_driver_relays_in_the_same_second(tmp_path, own_log):
    ec = "(EngineCore_DP0 pid=48502) ERROR 05-06 16:43:12 [core.py:720] "
    cuda = "RuntimeError: CUDA error: an illegal memory access was encountered"
    driver = [
        "(RayWorkerWrapper pid=4811, ip=10.128.0.22) INFO 05-06 16:00:01 [parallel_state.py:1] rank 9 in world size "
        "12 is assigned as DP rank 0, PP rank 2, TP rank 1, EP rank 9",
        ec + "EngineCore encountered a fatal error.",
        ec + "ray.exceptions.RayTaskError(RuntimeError): ray::RayWorkerWrapper.__ray_call__() (pid=4811, "
        "ip=10.128.0.22, actor_id=392dbf6ce)",
        ec + '  File "/opt/vllm/model_executor/layers/fused_moe.py", line 88, in topk',
        ec + cuda,
    ]
    files = {"gpu-h1/vllm-serve.log": "\n".join(driver) + "\n", "etc-hosts.txt": "10.128.0.22 gpu-w2\n"}
    if own_log:   # (sorted after the driver's file, which wins a tie on the file's name alone)
        files["gpu-w2/worker-4811.out"] = f"ERROR 05-06 16:43:12 [worker_base.py:620] {cuda}\n"
    root = analyze_files(tmp_path, files).decision.root
    assert (root.file, root.line) == (("gpu-w2/worker-4811.out", 1) if own_log else ("gpu-h1/vllm-serve.log", 5))


def test_folders_that_are_siblings_of_each_other_are_nodes_beside_one_that_is_not(tmp_path):
    # a prefill and a decode node beside a gateway's folder: the two share a name's stem, the third shares none
    log = text_of(VLLM_LINE)
    fn = analyze_files(tmp_path, {"gpu-pf-01/vllm.log": log, "gpu-pd-02/vllm.log": log,
                                  "gateway-x9/nginx.log": log}).attribution.folder_node
    assert fn == {"gpu-pf-01": "gpu-pf-01", "gpu-pd-02": "gpu-pd-02"}   # near miss: gateway-x9 is none's sibling


@pytest.mark.parametrize("header, node", [("# _HOSTNAME=gpu-b12", "gpu-b12"),   # the export's header names its host
                                          ("# _MACHINE_ID=a81f0c6e", None)])      # near miss: a machine id
def test_a_journal_export_without_hostnames_is_the_host_its_header_names_and_its_units_lines_are_read(
        tmp_path, header, node):
    unit = text_of(header, "# cmd: journalctl -u vllm.service -o short-iso-precise --no-hostname",
                   "2026-09-22T00:41:04.014341-07:00 vllm[51988]: (Worker_PP1_TP3 pid=52262) INFO 09-22 00:41:04 "
                   "[parallel_state.py:1325] world_size=16 rank=11 local_rank=3 "
                   "distributed_init_method=tcp://10.4.1.1:29500 backend=nccl")
    a = analyze_files(tmp_path, {"exports/unit.txt": unit})
    ev = event_at(a.events, "exports/unit.txt", 3)
    assert (ev["node"], ev["rank"], ev["pid"]) == (node, 11, 52262)


@pytest.mark.parametrize("tree, node", [("var/log/", "inf-a100-22"),   # a host's own file tree: its capture
                                        ("", None)])                     # near miss: two unrelated names, no tree
def test_a_folder_named_like_a_host_that_holds_its_var_or_etc_tree_is_that_hosts(tmp_path, tree, node):
    cri = "2025-09-22T08:06:28.1Z stdout F " + PLATFORM
    a = analyze_files(tmp_path, {f"collected/inf-a100-22/{tree}vllm.log": text_of(cri),
                                 f"collected/gw-nginx-01/{tree}access.log": text_of(
                                     '10.0.0.5 - - [22/Sep/2025:08:06:30 +0000] "GET /health HTTP/1.1" 200 2')})
    assert event_at(a.events, f"collected/inf-a100-22/{tree}vllm.log", 1)["node"] == node


CID = "3f9a0c1d2e7b46f8a05c91d3e7b2f6408c1a9d5e3b7f02c64e8a1d9b5c3f7e20"


@pytest.mark.parametrize("listed, node", [(CID, "gpu-c04"),                      # its host's docker ps lists it
                                          ("8e2a4c6e8a0c" + "0" * 52, None)])   # near miss: another container
@pytest.mark.parametrize("path", [f"containers/{CID}/{CID}-json.log",   # docker's own layout
                                  f"container-logs/{CID}-json.log"])    # copied out of it, flat
def test_a_containers_own_log_is_on_the_host_whose_docker_ps_lists_it(tmp_path, listed, node, path):
    ps = text_of("$ hostname; docker ps -a --no-trunc", "gpu-c04",
                 "CONTAINER ID   IMAGE   STATUS   NAMES",
                 f"{listed}   vllm/vllm-openai:v0.14.1   Up About an hour   vllm-l405")
    log = '{"log":"INFO 01-27 10:37:32 [api_server.py:1] vLLM API server version 0.14.1\\n","stream":"stdout",' \
          '"time":"2026-01-27T10:37:32.58Z"}\n'
    a = analyze_files(tmp_path, {path: log, "hosts/gpu-c04/docker-ps.txt": ps,
                                 "hosts/gpu-c03/uptime.txt": "10:00:00 up 3 days\n"})
    assert event_at(a.events, path, 1)["node"] == node


@pytest.mark.parametrize("opening, node", [("hgx-h200-b07 -- qwen3 container down", "hgx-h200-b07"),
                                           ("qwen3-235b -- container down", None)])   # near miss: a model's name
def test_a_note_read_as_a_log_still_names_its_host_on_its_first_line(tmp_path, opening, node):
    note = text_of(opening, "",
                   "03:14 synthgen-nightly reported 47 failed requests and connection refused afterwards.",
                   "03:41 on-call (me) did `docker start qwen3-235b` -- it died again during startup after ~20 s.",
                   "03:46 collected: docker json log of the container (covers the original run from 07-07 21:03 and "
                   "the 03:41 start attempt),", "      dmesg -T, nvidia-smi query, docker ps/inspect, launch command.",
                   "Host clock and container clock are both UTC.")
    a = analyze_files(tmp_path, {"notes.txt": note, "vllm.log": text_of(
        "INFO 07-08 03:41:22 [api_server.py:1] vLLM API server version 0.23.0")})
    assert event_at(a.events, "vllm.log", 1)["node"] == node


@pytest.mark.parametrize("world, node_b_ranks, rank", [
    (8, range(4, 8), 5),    # each node a block of four ranks: the bus's GPU 1 is gpu-b's second, rank 5
    (8, (4, 7), 5),         # two of gpu-b's four: world 8 over two nodes is blocks of four, gpu-b's is 4-7
    (12, range(8, 12), 9),  # a node the bundle lacks (world 12, blocks of four): the blocks the nodes fill
    (12, (4, 7), None)])    # near miss: world 12 over two nodes is blocks of six, which gpu-b's ranks straddle
def test_a_node_s_block_of_ranks_gives_each_its_local_rank_and_the_gpu_of_that_index(tmp_path, world, node_b_ranks,
                                                                                       rank):
    """With no NCCL device line, a kernel line about a bus whose index only an `nvidia-smi -q -i N` dump gives (no
    host in it) takes the rank whose place in its node's block of consecutive ranks is that index."""
    def worker(node_rank: int, r: int) -> str:
        return f"(Worker_PP{node_rank}_TP{r % 4} pid={5000 + r}) INFO 08-19 06:00:00 [parallel_state.py:1] rank {r} " \
               f"in world size {world} is assigned as DP rank 0, PP rank {node_rank}, TP rank {r % 4}"
    xid = "Aug 19 06:17:20 gpu-b kernel: NVRM: Xid (PCI:0000:9a:00): 119, pid=4012, name=nv-hostengine, Timeout " \
          "waiting for RPC from GSP!"
    a = analyze_files(tmp_path, {"gpu-a/vllm.log": text_of(*(worker(0, r) for r in range(4))),
                                 "gpu-b/vllm.log": text_of(*(worker(r // 4, r) for r in node_b_ranks)),
                                 "gpu-b/kern.log": text_of(xid), "smi/gpu1.txt": SMI_Q})
    assert event_at(a.events, "gpu-b/kern.log", 1)["rank"] == rank


@pytest.mark.parametrize("head_ranks, rank", [((0, 3), 5),   # Ray's workers too: node by node, in device order
                                              ((0, 5), None)])  # near miss: the head shows a rank of gpu-b's block
def test_ray_workers_known_by_a_few_ranks_give_their_node_s_block_its_local_ranks(tmp_path, head_ranks, rank):
    """vLLM's Ray executor numbers its workers node by node (the driver's first), each node's in device order: a
    node's one known rank places its block, and the bus's GPU 1 there is the block's second rank."""
    def worker(ip: str, r: int) -> str:
        return f"(RayWorkerWrapper pid={6000 + r}, ip={ip}) INFO 08-19 06:00:00 [parallel_state.py:1] rank {r} in " \
               f"world size 8 is assigned as DP rank 0, PP rank {r // 4}, TP rank {r % 4}"
    xid = "Aug 19 06:17:20 gpu-b kernel: NVRM: Xid (PCI:0000:9a:00): 79, pid=6005, name=ray::RayWorkerWr, GPU has " \
          "fallen off the bus."
    a = analyze_files(tmp_path, {"gpu-a/vllm.log": text_of(*(worker("10.0.0.1", r) for r in head_ranks),
                                                           worker("10.0.0.2", 6)),
                                 "gpu-b/kern.log": text_of(xid), "smi/gpu1.txt": SMI_Q,
                                 "hosts.txt": text_of("10.0.0.1 gpu-a", "10.0.0.2 gpu-b")})
    assert event_at(a.events, "gpu-b/kern.log", 1)["rank"] == rank


CRICTL = """$ sudo crictl pods
POD ID              CREATED             STATE               NAME                NAMESPACE           ATTEMPT             RUNTIME
70573b139cd28       About an hour ago   Ready               {pod}            llm-prod            0                   (default)
5e53deda3f40a       9 days ago          Ready               node-exporter-z5wcc   monitoring          0                   (default)
"""


@pytest.mark.parametrize("listed, node", [("dsv3-0-2", "gpu-k8s-h07"),    # the host's crictl lists the pod
                                          ("dsv3-0-1", None)])            # near miss: another pod is listed
def test_a_pod_its_host_s_crictl_lists_is_on_that_host_with_its_log_and_the_hostname_its_lines_print(
        tmp_path, listed, node):
    log = text_of("dsv3-0-2:2311:2311 [3] NCCL INFO NET/IB : mlx5_3:1 Got async error event: port error",
                  "(Worker_PP2_TP5 pid=2311) INFO 02-17 11:00:00 [worker.py:1] rank 21 in world size 24 is assigned "
                  "as DP rank 0, PP rank 2, TP rank 5")
    a = analyze_files(tmp_path, {"nodes/gpu-k8s-h07/crictl.txt": CRICTL.format(pod=listed),
                                 "nodes/gpu-k8s-h11/crictl.txt": CRICTL.format(pod="dsv3-0"),
                                 "pods/dsv3-0-2_vllm.log": log})
    assert (a.attribution.file_node.get("pods/dsv3-0-2_vllm.log") == "gpu-k8s-h07") == (node is not None)


@pytest.mark.parametrize("saved_id, node", [("ff556cb918aa1910", "b300-n03"),   # the id of its last state
                                            ("0d1e2f3a4b5c6d7e", None)])       # near miss: an id nothing names
def test_a_log_saved_under_a_container_id_the_pod_s_status_names_is_on_the_pod_s_node(tmp_path, saved_id, node):
    import json
    pod = json.dumps({"apiVersion": "v1", "kind": "List", "items": [{
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "k3-0-1", "namespace": "inference"},
        "spec": {"nodeName": "b300-n03", "containers": [{"name": "vllm", "image": "vllm/vllm-openai:kimi-k3"}]},
        "status": {"containerStatuses": [{
            "name": "vllm", "containerID": "containerd://4a7b9caabfc838b4",
            "lastState": {"terminated": {"exitCode": 137, "containerID": "containerd://ff556cb918aa1910"}}}]}}]},
        indent=4)
    log = text_of("(Worker_TP5 pid=212) INFO 02-17 11:00:00 [worker.py:1] rank 13 in world size 16 is assigned as "
                  "DP rank 0, PP rank 0, TP rank 13")
    a = analyze_files(tmp_path, {"kubectl-get-pod.json": pod, f"container-logs/{saved_id}.log": log,
                                 "other-node/b300-n04-notes.txt": "b300-n04 holds the other pod\n"})
    assert a.attribution.file_node.get(f"container-logs/{saved_id}.log") == node


@pytest.mark.parametrize("nspid, rank", [(True, 13),     # NSpid read on gpu-b: the host pid is gpu-b's pid 208
                                         (False, None)])  # near miss: nothing ties the host pid to a container pid
def test_an_nspid_read_on_a_node_maps_that_node_s_host_pid_though_another_node_s_container_has_the_same_pid(
        tmp_path, nspid, rank):
    def worker(container: bool, name: str, r: int) -> str:
        # (gpu-a's server runs in a container, its pid 1 shows it; gpu-b's logs show no pid namespace)
        return ("(APIServer pid=1) INFO 11-18 07:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
                if container else "") + \
               f"({name} pid=208) INFO 11-18 07:00:01 [parallel_state.py:1] rank {r} in world size 16 is assigned as " \
               f"DP rank 0, PP rank {r // 8}, TP rank {r % 8}\n"
    kill = "Nov 18 07:05:00 gpu-b kernel: Out of memory: Killed process 3318842 (ray::RayWorkerW) total-vm:1kB, " \
           "anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0\n"
    files = {"gpu-a/vllm.log": worker(True, "Worker_TP3", 3), "gpu-b/vllm.log": worker(False, "Worker_PP1_TP5", 13),
             "gpu-b/kern.log": kill, "gpu-a/kern.log": kill.replace("gpu-b", "gpu-a").replace("3318842", "1")}
    if nspid:
        files["gpu-b/nspid.txt"] = "/proc/3318842/status:NSpid:\t3318842\t208\n"
    a = analyze_files(tmp_path, files)
    assert event_at(a.events, "gpu-b/kern.log", 1)["rank"] == rank


@pytest.mark.parametrize("obj, node", [("node/gke-spot-x4mq", "gke-spot-x4mq"),   # the event's object is a node
                                       ("pod/dsv3-0-1", None)])   # near miss: a pod the bundle places nowhere
def test_an_event_row_about_a_node_object_is_that_node_s(tmp_path, obj, node):
    a = analyze_files(tmp_path, {"kubectl-get-events.txt": text_of(
        "NAMESPACE  LAST SEEN   TYPE      REASON         OBJECT                 MESSAGE",
        f"default    9m16s       Normal    NodeShutdown   {obj}     Shutdown manager detected shutdown event")})
    assert event_at(a.events, "kubectl-get-events.txt", 2)["node"] == node


RAY_WORKER = "worker-9c41e07b5d2a8f63c1b4e09d7a35f2816e0c4b9d3a7f15e82c6d90b4-01000000-{pid}.out"
RAYLET = ("[2026-03-17 13:02:31,141 I 30977 30977] (raylet) raylet.cc:134: Raylet of id, 3e8a15c0 started. Raylet "
          "consists of node_manager and object_manager. node_manager address: {ip}:34007 object_manager address: "
          "{ip}:45613 hostname: {ip}")


def ray_bundle(worker_pid: int, raylet_ip: str) -> dict[str, str]:
    return {
        "head-a/etc-hosts.txt": text_of("10.52.16.19  gpu-h100-a11", "10.52.16.23  gpu-h100-a14"),
        "head-a/vllm.log": text_of("INFO 03-17 14:06:22 [loggers.py:111] Engine 000: Avg prompt throughput: 2576.1 "
                                   "tokens/s, Avg generation throughput: 525.7 tokens/s, Running: 28 reqs",
                                   "(RayWorkerWrapper pid=48213, ip=10.52.16.23) *** SIGSEGV received at "
                                   "time=1773756393 on cpu 71 ***"),
        "ray-node-2/raylet.out": text_of(RAYLET.format(ip=raylet_ip)),
        f"ray-node-2/{RAY_WORKER.format(pid=worker_pid)}": text_of(
            "INFO 03-17 13:04:40 [__init__.py:239] Automatically detected platform cuda.",
            "INFO 03-17 13:04:49 [parallel_state.py:1004] rank 11 in world size 16 is assigned as DP rank 0, PP rank "
            "1, TP rank 3")}


@pytest.mark.parametrize("pid, rank", [(48213, 11),     # the worker's own file is named after its pid
                                       (48214, None)])  # near miss: another worker's file
def test_a_ray_worker_s_own_log_named_after_its_pid_gives_that_pid_its_rank(tmp_path, pid, rank):
    a = analyze_files(tmp_path, ray_bundle(pid, "10.52.16.23"))
    assert event_at(a.events, "head-a/vllm.log", 2)["rank"] == rank


@pytest.mark.parametrize("ip, node", [("10.52.16.23", "gpu-h100-a14"),   # the raylet's own address, by /etc/hosts
                                      ("10.52.16.77", "10.52.16.77")])   # near miss: nothing names it: the address
def test_a_raylet_s_own_address_names_its_folder_s_node(tmp_path, ip, node):
    a = analyze_files(tmp_path, ray_bundle(48213, ip))
    assert a.attribution.file_node["ray-node-2/raylet.out"] == node


@pytest.mark.parametrize("banner, node", [
    ("=== serve.sh start 2026-11-05T08:47:31+00:00 host=ws-gpu-31 TP=6 port=8010", "ws-gpu-31"),  # the script's own
    ("=== serve.sh start 2026-11-05T08:47:31+00:00 host=0.0.0.0 TP=6 port=8010", None)])  # near miss: an address to bind
def test_a_launch_script_s_start_banner_names_the_host_its_log_is_written_on(tmp_path, banner, node):
    a = analyze_files(tmp_path, {"logs/vllm.log": text_of(banner, PLATFORM, ERROR)})
    assert event_at(a.events, "logs/vllm.log", 3)["node"] == node


ANSIBLE = ("[sre@ctl01 ~]$ ansible gpu -b -m shell -a \"dmesg -T | egrep -i 'killed process'\"",
           "gpu-n02 | CHANGED | rc=0 >>",
           "[Thu Sep  3 08:01:02 2026] Out of memory: Killed process 51122 (python3) total-vm:1kB, anon-rss:1kB, "
           "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:1kB oom_score_adj:0",
           "gpu-n03 | CHANGED | rc=0 >>",
           "[Thu Sep  3 08:17:12 2026] Out of memory: Killed process 77321 (VLLM::Worker_DP) total-vm:1kB, "
           "anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:997 pgtables:1kB oom_score_adj:0",
           "[sre@ctl01 ~]$ uptime",
           " 08:30:01 up 41 days,  3:12,  1 user,  load average: 0.10, 0.20, 0.30")


@pytest.mark.parametrize("line, node", [(3, "gpu-n02"), (5, "gpu-n03"),   # each host section's own lines
                                        (7, None)])   # near miss: the next prompt, the control host's command
def test_ansible_ad_hoc_output_is_each_host_section_s_own(tmp_path, line, node):
    a = analyze_files(tmp_path, {"ansible/fleet-sweep.txt": text_of(*ANSIBLE)}, keep_all=True)
    got = event_at(a.events, "ansible/fleet-sweep.txt", line)["node"]
    assert got == node or (node is None and got not in ("gpu-n02", "gpu-n03"))


@pytest.mark.parametrize("field, node", [("http_address", "node-b"),    # the engine's own address: its node's
                                         ("proxy_address", None)])      # near miss: the proxy's, another node's
def test_a_p2p_kv_engine_s_own_address_is_its_node_s(tmp_path, field, node):
    init = (f"(Worker_TP3 pid=177) INFO 07-22 02:47:42 [p2p_nccl_engine.py:187] P2pNcclEngine init, rank:3, "
            f"local_rank:3, {field}:10.60.1.23:20002")
    a = analyze_files(tmp_path, {"node-b/vllm.log": text_of(PLATFORM, init), "node-a/vllm.log": text_of(PLATFORM)})
    assert a.attribution.ip_node.get("10.60.1.23") == node


@pytest.mark.parametrize("word, node", [("WARN", None),           # a log level where a journal's host would stand
                                        ("gpu-a2", "gpu-a2")])    # near miss: a host there is the line's node
def test_a_log_level_after_an_iso_time_is_no_host(tmp_path, word, node):
    log = f"2026-09-18T14:07:41.671Z {word} lt: req #2785 ended early: finish_reason=abort (stream closed by server)\n"
    a = analyze_files(tmp_path, {"loadgen.log": log * 3}, keep_all=True)
    assert event_at(a.events, "loadgen.log", 1)["node"] == node and (word in a.attribution.nodes) == bool(node)


@pytest.mark.parametrize("opening, node", [("kimi-k3 (LWS inference/kimi-k3, group 0) -- bundle for the 5xx alert",
                                            None),   # the served model's name opening a note names no host
                                           ("gpu-k3-n02 (bare metal) -- bundle for the 5xx alert",
                                            "gpu-k3-n02")])   # near miss: a host's name does
def test_the_served_models_name_is_no_host(tmp_path, opening, node):
    launch = "vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --tensor-parallel-size 8\n"
    a = analyze_files(tmp_path, {"README.txt": opening + "\n- pods: the group's logs\n", "launch.sh": launch,
                                 "gpu-b17/vllm.log": "INFO 10-14 09:00:00 [api_server.py:1] vLLM API server version "
                                                     "0.27.0\n"})
    assert ("kimi-k3" in a.attribution.nodes) is False
    assert a.attribution.file_node.get("README.txt") == node


@pytest.mark.parametrize("ip, node", [("10.12.0.37", "10.12.0.37"),   # the address Ray's lines use names the node
                                      ("10.12.0.38", None)])          # near miss: an address no line uses
def test_a_folder_named_by_an_address_the_lines_use_with_no_host_name_is_that_node_s(tmp_path, ip, node):
    relayed = f"(RayWorkerWrapper pid=2219, ip={ip}) INFO 10-20 16:20:11 [worker.py:1] Starting to load model m..."
    kill = "[Tue Oct 20 16:29:47 2026] Memory cgroup out of memory: Killed process 1873433 (ray::RayWorkerW) " \
           "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0"
    a = analyze_files(tmp_path, {"10.12.0.35/vllm-serve.log": text_of(PLATFORM, relayed),
                                 "10.12.0.37/dmesg-T.txt": text_of(kill)})
    assert event_at(a.events, "10.12.0.37/dmesg-T.txt", 1)["node"] == node


@pytest.mark.parametrize("value, names", [("...same model and parallel flags as the leader...", set()),   # no name
                                          ("/models/Kimi-K3/", {"kimi-k3"}),       # a directory: its last part
                                          ("moonshotai/Kimi-K3", {"kimi-k3"})])
def test_the_served_models_names_are_read_from_any_model_value(value, names):
    from k3logs.diagnose.attribution import hints_from_facts
    from k3logs.facts.util import Fact
    assert hints_from_facts([Fact("model", value, "launch.sh", 3, None, "log")]).not_hosts == names


@pytest.mark.parametrize("pods_folder, node", [(True, None),            # a dump of the cluster: its pods' folders
                                               (False, "gpu-h100-a11")])   # near miss: a node's own folder
def test_a_file_in_a_pods_folder_witnesses_its_pods_node_not_its_parent_folders(tmp_path, pods_folder, node):
    nccl = "gpu-h100-a11:251:251 [0] NCCL INFO Bootstrap : Using eth0:10.233.1.5<0>\n"
    inner = "k3-0/logs.txt" if pods_folder else "logs.txt"
    listing = "NAME   READY   STATUS    RESTARTS   AGE   IP           NODE\nk3-0   1/1     Running   0          1h    " \
              "10.233.1.5   gpu-h100-a11\nk3-0-1 1/1     Running   0          1h    10.233.2.5   gpu-h100-a12\n"
    a = analyze_files(tmp_path, {f"cluster-info/llm-prod/{inner}": nccl, "cluster-info/llm-prod/notes.txt": "dump\n",
                                 "pods.txt": listing})
    assert a.attribution.file_node.get("cluster-info/llm-prod/notes.txt") == node


@pytest.mark.parametrize("adjusted, rank", [(True, 8),     # its rank across the DP engines
                                            (False, 0)])   # near miss: its engine's own world only
def test_a_worker_s_rank_adjusted_for_data_parallel_is_its_rank_in_the_deployment(tmp_path, adjusted, rank):
    w = "(Worker_DP1_TP0_EP8 pid=161) INFO 12-09 06:04:55 [{}] "
    lines = [w.format("gpu_worker.py:97") + "world_size=8 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:"
             "46148 backend=nccl"]
    if adjusted:
        lines.append(w.format("parallel_state.py:1142") + "Adjusting world_size=16 rank=8 distributed_init_method="
                                                        "tcp://10.61.4.7:13347 for DP")
    lines.append("(Worker_DP1_TP0_EP8 pid=161) ERROR 12-09 06:04:58 [core.py:708] RuntimeError: CUDA error: an illegal "
                 "memory access was encountered")
    a = analyze_files(tmp_path, {"gpu-b1/vllm.log": text_of(*lines)})
    assert event_at(a.events, "gpu-b1/vllm.log", len(lines))["rank"] == rank
