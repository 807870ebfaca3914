"""facts_from_dump / facts_from_events: the values and the evidence lines of every dump kind; facts.toml loads."""
from __future__ import annotations

import codecs
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import analyze_files
from k3logs.ingest.dumps import sniff_dump
from k3logs.errors import CatalogueError
from k3logs.facts.extract import Fact, facts_from_dump, facts_from_events
from k3logs.facts.data import default_facts_data, load_facts_data
from k3logs.facts.util import norm_bus_id, parse_date, parse_size, redact_command, version_less
from k3logs.schema import DUMP_KINDS

try:
    from .test_dumps import S
except ImportError:  # tests/ is not a package
    from test_dumps import S

REALWORLD = Path("/work/shared/realworld")


def facts(kind: str, text: str, node: str | None = None, file: str = "f.txt") -> list[Fact]:
    got = facts_from_dump(kind, file, text, node)
    assert not [f for f in got if f.name == "dump_parse_error"], got
    return got


def one(got: list[Fact], name: str) -> tuple[str, int | None]:
    hits = [f for f in got if f.name == name]
    assert hits, f"no {name} in {[(f.name, f.value) for f in got]}"
    return hits[0].value, hits[0].line


def values(got: list[Fact], name: str) -> list[str]:
    return [f.value for f in got if f.name == name]


# ------------------------------------------------------------------------------------------
# nvidia-smi family
# ------------------------------------------------------------------------------------------
def test_smi_wide_table():
    got = facts("nvidia_smi", S.SMI_WIDE, node="gpu-a")
    assert one(got, "driver_version") == ("580.65.06", 3)
    assert one(got, "driver_branch") == ("580", 3)
    assert one(got, "driver_cuda") == ("13.0", 3)
    assert one(got, "collected_at") == ("2026-03-12T14:05:09", 1)
    assert one(got, "gpu_model") == ("NVIDIA GB300", 9)
    assert one(got, "gpu_count") == ("2", 9)
    assert one(got, "gpu_bus_ids") == ("0009:01:00,000a:01:00", 9)
    assert one(got, "gpu_process") == ("gpu=1 pid=77123 name=python3 mem=1190MiB", 23)
    assert {f.node for f in got} == {"gpu-a"} and {f.source for f in got} == {"nvidia_smi"}


def test_smi_narrow_table_with_err():
    got = facts("nvidia_smi", S.SMI_NARROW)
    assert one(got, "driver_version") == ("470.256.02", 3)
    assert one(got, "driver_cuda") == ("11.4", 3)
    assert one(got, "collected_at")[0] == "2024-09-03T23:10:20"
    assert one(got, "gpu_bus_ids")[0] == "0000:00:1e,0000:00:1f"
    assert one(got, "gpu_error") == ("GPU 1 (0000:00:1f): ERR! in nvidia-smi", 11)


@pytest.mark.parametrize("text,line,start", [
    (S.SMI_FAILED, 1, "NVIDIA-SMI has failed"),
    (S.SMI_FAILED_PROMPT, 2, "Unable to determine the device handle for GPU0000:3B:00.0"),
    (S.SMI_NO_DEVICES, 1, "No devices were found"),
])
def test_smi_failed(text, line, start):
    value, at = one(facts("nvidia_smi", text), "gpu_error")
    assert value.startswith(start) and at == line


def test_prompt_gives_hostname():
    assert one(facts("nvidia_smi", S.SMI_FAILED_PROMPT), "hostname") == ("gpu-x9", 1)


def test_smi_q():
    got = facts("nvidia_smi_q", S.SMI_Q)
    assert one(got, "driver_version") == ("575.57.08", 5)
    assert one(got, "driver_cuda") == ("12.9", 6)
    assert one(got, "collected_at") == ("2026-01-09T10:11:12", 4)
    assert one(got, "gpu_count") == ("2", 8)
    assert one(got, "ecc_uncorrectable") == ("0000:3b:00=2", 28)
    assert one(got, "remapped_rows_pending") == ("0000:3b:00=Yes", 30)
    assert one(got, "gpu_bus_ids")[0] == "0000:19:00,0000:3b:00"
    assert one(got, "gpu_uuids")[0].startswith("GPU-11111111")


def test_smi_q_xml():
    got = facts("nvidia_smi_q", S.SMI_Q_XML)
    assert one(got, "driver_version") == ("580.82.07", 5)
    assert one(got, "gpu_model")[0] == "NVIDIA B200"
    assert one(got, "gpu_uuids")[0] == "GPU-abcdefab-0000-1111-2222-333333333333"


def test_topo_with_nic_legend():
    got = facts("nvidia_topo", S.TOPO)
    assert one(got, "nvlink") == ("true", 2)
    assert one(got, "gpu_count")[0] == "4"
    assert set(values(got, "interconnect")) == {"nvlink", "rdma"}
    assert one(got, "nics") == ("mlx5_0,mlx5_1", 17)
    assert values(got, "nic_gpu") == []   # two GPUs behind each NIC's switch: no rail to tell


def test_topo_one_gpu_per_nic_gives_each_hca_its_gpu():
    rail = S.TOPO.replace("GPU1\tNV18\t X \tNV18\tNV18\tPIX", "GPU1\tNV18\t X \tNV18\tNV18\tNODE") \
        .replace("GPU2\tNV18\tNV18\t X \tNV18\tSYS\tPIX", "GPU2\tNV18\tNV18\t X \tNV18\tSYS\tNODE")
    got = facts("nvidia_topo", rail)
    assert sorted(values(got, "nic_gpu")) == ["mlx5_0 0", "mlx5_1 3"]


def test_topo_pcie_only_with_spaces():
    got = facts("nvidia_topo", S.TOPO_SPACES_PCIE)
    assert one(got, "nvlink")[0] == "false"
    assert values(got, "interconnect") == ["pcie"]


def test_csv_with_units_sorted_by_index():
    got = facts("nvidia_smi_csv", S.CSV_UNITS)
    assert one(got, "driver_version") == ("580.95.05", 2)
    assert one(got, "gpu_bus_ids")[0] == "0000:18:00,0000:2a:00"
    assert one(got, "gpu_uuids")[0].split(",")[0].startswith("GPU-aaaaaaaa")
    assert one(got, "ecc_uncorrectable") == ("0000:2a:00=3", 2)


def test_csv_without_units_and_without_header():
    assert one(facts("nvidia_smi_csv", S.CSV_NOUNITS), "gpu_model")[0] == "NVIDIA L40S"
    got = facts("nvidia_smi_csv", S.CSV_NOHEADER)
    assert one(got, "gpu_count") == ("2", 1)
    assert one(got, "gpu_bus_ids")[0] == "0000:07:00,0000:0f:00"


def test_csv_noheader_fields_from_the_command():
    got = facts("nvidia_smi_csv", S.CSV_WITH_COMMAND)
    assert one(got, "driver_version") == ("570.133.20", 2)
    assert one(got, "gpu_model")[0] == "NVIDIA H100 80GB HBM3"


@pytest.mark.parametrize("lost, buses", [
    (True, None),                                  # GPU 2 could not be opened: no list of bus ids by position
    (False, "0000:1b:00,0000:3a:00,0000:9b:00,0000:bc:00")])   # near miss: all four listed
def test_a_gpu_nvidia_smi_could_not_open_keeps_its_index_and_bus_and_leaves_no_gap_in_the_others(lost, buses):
    rows = ["index, pci.bus_id, uuid", "0, 00000000:1B:00.0, GPU-1c7d", "1, 00000000:3A:00.0, GPU-8e05",
            "2, 00000000:9B:00.0, GPU-6a3f", "3, 00000000:BC:00.0, GPU-f29a"]
    text = "\n".join(["Unable to determine the device handle for GPU2: 0000:9B:00.0: Unknown Error"] + rows[:3]
                     + rows[4:] if lost else rows) + "\n"
    got = facts("nvidia_smi_csv", text)
    assert (one(got, "gpu_bus_ids")[0] if buses else values(got, "gpu_bus_ids")) == (buses or [])
    assert any(v.startswith("index=2 bus_id=0000:9b:00") for v in values(got, "gpu_identity"))
    assert any(v.startswith("index=3 bus_id=0000:bc:00") for v in values(got, "gpu_identity"))


FLEET_CSV = ["index, pci.bus_id", "0, 00000000:1B:00.0", "1, 00000000:4D:00.0"]


@pytest.mark.parametrize("command, label, nodes", [
    ("srun --jobid=48213 --overlap -w hgx-b[08-09] --ntasks-per-node=1 -l nvidia-smi --query-gpu=index,pci.bus_id "
     "--format=csv", lambda i: f"{i}: ", ["hgx-b08", "hgx-b09"]),            # srun's tasks over the step's -w nodes
    ("pdsh -w gpu-n[01-02] nvidia-smi --query-gpu=index,pci.bus_id --format=csv", lambda i: f"gpu-n0{i + 1}: ",
     ["gpu-n01", "gpu-n02"]),                                                # pdsh's host labels
    ("nvidia-smi --query-gpu=index,pci.bus_id --format=csv", lambda i: "", [None])])   # near miss: one table
def test_a_fleet_tool_s_labelled_output_is_each_host_s_own(command, label, nodes):
    hosts = len(nodes)
    text = "\n".join([f"$ {command}", *(label(i) + ln for i in range(hosts) for ln in FLEET_CSV)]) + "\n"
    got = facts_from_dump("nvidia_smi_csv", "smi.txt", text, None)
    assert sorted((f.node or "", f.value) for f in got if f.name == "gpu_count") == \
        sorted((n or "", "2") for n in nodes)
    assert [f.line for f in got if f.name == "gpu_identity" and f.value.startswith("index=1")] == \
        [4 + 3 * i for i in range(hosts)]   # (each at its own line)


# ------------------------------------------------------------------------------------------
# python side
# ------------------------------------------------------------------------------------------
def test_collect_env_sectioned():
    got = facts("collect_env", S.COLLECT_ENV_SECTIONED)
    assert one(got, "torch_version") == ("2.9.0+cu130", 11)
    assert one(got, "torch_cuda_build") == ("cu130", 11)
    assert one(got, "cuda_runtime") == ("13.0", 13)
    assert one(got, "driver_version") == ("580.95.05", 25)
    assert one(got, "vllm_version") == ("0.27.2", 36)
    assert one(got, "gpu_count")[0] == "2" and one(got, "gpu_model")[0] == "NVIDIA B300"
    assert one(got, "nccl_version")[0] == "2.27.7"
    assert one(got, "nccl_socket_ifname") == ("ib0", 42)
    assert one(got, "env:VLLM_API_KEY")[0] == "[redacted]"
    assert one(got, "pip_mixed_cuda")[0] == "false"


def test_collect_env_flat_with_topology():
    got = facts("collect_env", S.COLLECT_ENV_FLAT)
    assert one(got, "torch_version") == ("2.4.0+cu121", 1)
    assert one(got, "cuda_runtime") == ("12.1", 3)
    assert one(got, "driver_version") == ("535.183.01", 9)
    assert one(got, "vllm_version") == ("0.6.1.post2", 14)
    assert one(got, "gpu_model") == ("NVIDIA L4", 8)
    assert one(got, "gpu_topology")[0] == "1 GPU"
    assert "torch_version" not in [f.name for f in got if f.value == "2.4.0"]  # [pip3] torch==2.4.0 does not override


def test_pip_freeze_mixing_cu12_and_cu13():
    got = facts("pip_freeze", S.PIP_FREEZE_MIXED)
    assert one(got, "pip_cuda_majors") == ("12,13", 3)
    assert one(got, "pip_mixed_cuda") == ("true", 6)  # nvidia-cudnn-cu12, the first of the minority major
    assert one(got, "torch_cuda_build") == ("cu130", 7)
    assert one(got, "cuda_runtime") == ("13.0", 4)
    assert one(got, "nccl_version") == ("2.27.7", 5)


def test_pip_list_table():
    got = facts("pip_freeze", S.PIP_LIST)
    assert one(got, "torch_version") == ("2.8.0+cu128", 3)
    assert one(got, "vllm_version") == ("0.10.2", 4)
    assert one(got, "pip_mixed_cuda")[0] == "false"


def test_model_config():
    got = facts("model_config", S.MODEL_CONFIG)
    assert one(got, "model_architecture") == ("KimiK3ForCausalLM", 3)
    assert one(got, "num_experts") == ("896", 7)


# ------------------------------------------------------------------------------------------
# environment and command lines
# ------------------------------------------------------------------------------------------
def test_env_with_secrets():
    got = facts("env", S.ENV_PRINTENV)
    assert one(got, "hostname") == ("trainer-7", 1)
    assert one(got, "nccl_ib_hca") == ("mlx5_0:1,mlx5_3:1", 3)
    assert one(got, "nccl_dmabuf_enable") == ("0", 4)
    assert one(got, "ucx_tls") == ("rc,cuda_copy", 5)
    assert one(got, "cuda_visible_devices") == ("0,1,2,3", 6)
    assert one(got, "all2all_backend") == ("deepep_v2", 7)
    assert one(got, "env:VLLM_API_KEY") == ("[redacted]", 9)
    assert one(got, "env:NCCL_KEY_PATH")[0] == "/etc/nccl"  # NCCL_* names are never redacted
    assert "env:HF_TOKEN" not in [f.name for f in got] and "env:PATH" not in [f.name for f in got]
    assert not any("hf_abcdef" in f.value or "sk-very" in f.value for f in got)


def test_env_export_and_sections():
    got = facts("env", S.ENV_EXPORT)
    assert one(got, "ucx_tls") == ("rc,cuda_copy,cuda_ipc", 3)
    got = facts("env", S.ENV_SECTIONS, node="bundle-node")
    by_node = {(f.node, f.name): f.line for f in got}
    assert by_node[("node-r1", "nccl_ib_hca")] == 3 and by_node[("node-r2", "nccl_ib_hca")] == 6


def test_launch_with_continuations_and_secret():
    got = facts("launch_cmd", S.LAUNCH_VLLM)
    cmd, line = one(got, "launch_command")
    assert line == 2 and cmd.startswith("VLLM_ALL2ALL_BACKEND=deepep_v2 vllm serve moonshotai/Kimi-K3")
    assert "sk-do-not-print" not in cmd and "--api-key [redacted]" in cmd
    assert one(got, "model") == ("moonshotai/Kimi-K3", 3)
    assert one(got, "tensor_parallel_size") == ("8", 4)
    assert one(got, "data_parallel_size") == ("2", 4)
    assert one(got, "expert_parallel") == ("true", 5)
    assert one(got, "max_model_len") == ("262144", 6)
    assert one(got, "all2all_backend") == ("deepep_v2", 2)
    assert "prefix_caching" not in [f.name for f in got]


def test_launch_docker_run_at_a_prompt():
    got = facts("launch_cmd", S.LAUNCH_DOCKER)
    assert one(got, "image") == ("vllm/vllm-openai:v0.26.1", 2)
    assert one(got, "image_digest")[0] == "sha256:" + "1" * 64
    assert one(got, "shm_size") == (str(32 * 2**30), 1)
    assert one(got, "prefix_caching") == ("false", 3)
    assert one(got, "tensor_parallel_size") == ("4", 3)
    assert "hf_secret123" not in one(got, "launch_command")[0]


def test_a_launch_script_expands_the_variables_it_assigns():
    got = facts("launch_cmd", S.LAUNCH_SCRIPT)
    assert one(got, "image") == ("vllm/vllm-openai:kimi-k3", 8)
    assert one(got, "ipc_mode") == ("host", 8)
    assert one(got, "tensor_parallel_size") == ("8", 8) and one(got, "prefix_caching") == ("true", 9)
    assert one(got, "env:NCCL_SOCKET_IFNAME") == ("bond0", 6)  # what it exports, the launched process has
    # a variable the script does not assign: the image is unknown, not '$IMAGE'
    unknown = facts("launch_cmd", S.LAUNCH_SCRIPT.replace("$IMG ", "$IMAGE "))
    assert "image" not in [f.name for f in unknown] and one(unknown, "tensor_parallel_size")[0] == "8"


@pytest.mark.parametrize("text,want", [
    (S.LAUNCH_PYTHON, {"model": "Qwen/Qwen3-8B", "prefix_caching": "true"}),
    (S.LAUNCH_CMDLINE, {"model": "moonshotai/Kimi-K3", "tensor_parallel_size": "8", "prefix_caching": "true"}),
    (S.LAUNCH_TORCHRUN, {"launch_command": "torchrun --nproc-per-node 8 --nnodes 2 train.py --config cfg.yaml",
                         "nnodes": "2"}),
    ("python -m torch.distributed.run --nnodes=1:4 --rdzv-backend c10d serve.py\n", {"nnodes": "4"}),
    # near miss: the script's own --nnodes is not torchrun's
    ("torchrun --nproc-per-node 8 --standalone train.py --nnodes 3\n", {"nnodes": None}),
    (S.LAUNCH_RAY, {"launch_command": "ray start --head --node-ip-address 10.3.3.1 --port 6379"}),
])
def test_launch_variants(text, want):
    got = {f.name: f.value for f in facts("launch_cmd", text)}
    assert {k: got.get(k) for k in want} == want


@pytest.mark.parametrize("text,model,extra", [
    ('/bin/sh -c "vllm serve m --enable-prefix-caching -tp 8"', "m", {"prefix_caching": "true", "tensor_parallel_size": "8"}),
    ("docker run --entrypoint vllm vllm/vllm-openai:kimi-k3 serve moonshotai/Kimi-K3 --all2all-backend deepep_v2",
     "moonshotai/Kimi-K3", {"image": "vllm/vllm-openai:kimi-k3", "all2all_backend": "deepep_v2"}),
    ("numactl --cpunodebind=0 --membind=0 vllm serve m --data-parallel-size 2", "m", {"data_parallel_size": "2"}),
    ("sudo -E env NCCL_DEBUG=INFO python3 -m vllm.entrypoints.openai.api_server --model m", "m", {"env:NCCL_DEBUG": "INFO"}),
    ("nohup vllm serve m --max-model-len 4096 > /tmp/log 2>&1 &", "m", {"max_model_len": "4096"}),
    ("srun --kill-on-bad-exit=1 --output=logs/%j-%t.out vllm serve m -tp 2", "m", {"tensor_parallel_size": "2"}),
    ("export NCCL_DEBUG=INFO ; vllm serve m -tp 4", "m", {"tensor_parallel_size": "4"}),  # not only an export
])
def test_command_line_wrappers(text, model, extra):
    got = {f.name: f.value for f in facts("launch_cmd", text + "\n")}
    assert got["model"] == model and {k: got.get(k) for k in extra} == extra


def test_a_dump_saved_by_powershell_in_utf16_gives_the_same_facts(tmp_path):
    powershell = codecs.BOM_UTF16_LE + S.SMI_WIDE.replace("\n", "\r\n").encode("utf-16-le")
    got = analyze_files(tmp_path / "ps", {"nvidia-smi.txt": powershell}).facts
    want = analyze_files(tmp_path / "utf8", {"nvidia-smi.txt": S.SMI_WIDE}).facts
    assert [(f.name, f.value, f.line) for f in got] == [(f.name, f.value, f.line) for f in want]
    assert "580.65.06" in [f.value for f in got if f.name == "driver_version"]


def test_docker_inspect_shm_args_state():
    got = facts("docker_inspect", S.DOCKER_INSPECT)
    assert one(got, "image") == ("vllm/vllm-openai:kimi-k3", 33)
    assert one(got, "image_digest") == ("sha256:" + "2" * 64, 36)
    assert one(got, "launch_command") == ("vllm serve moonshotai/Kimi-K3 --tensor-parallel-size 8 --all2all-backend deepep_v2", 4)
    assert one(got, "all2all_backend") == ("deepep_v2", 10)
    assert one(got, "shm_size") == ("67108864", 23)
    assert one(got, "ipc_mode") == ("private", 22)
    assert one(got, "hostname") == ("gpu-z17", 27)
    assert one(got, "oom_killed") == ("true", 16)
    assert one(got, "exit_code") == ("137", 17)
    assert one(got, "restart_count") == ("2", 20)
    assert one(got, "env:VLLM_API_KEY")[0] == "[redacted]"


@pytest.mark.parametrize("template, output, want", [
    ("'{{.RestartCount}} {{.State.ExitCode}} {{.HostConfig.RestartPolicy.Name}}'", "2 0 unless-stopped",
     {"restart_count": "2"}),                      # running (no state said): its exit code is no ended run's
    ('"{{.State.Status}}\t{{.State.ExitCode}}\t{{.RestartCount}}"', "exited\t137\t0",
     {"restart_count": "0", "exit_code": "137"}),
    ("'{{json .State}}'", "7 1 no", {})])          # near miss: a format that is no list of fields
def test_docker_inspect_with_a_format_of_its_own_states_the_fields_it_prints(template, output, want):
    text = f"$ docker inspect vllm-1 --format {template}\n{output}\n"
    got = {f.name: f.value for f in facts("transcript", text) if f.name in ("restart_count", "exit_code")}
    assert got == want


def test_docker_image_inspect_has_no_launch_command():
    got = facts("docker_inspect", S.DOCKER_IMAGE_INSPECT)
    assert one(got, "image")[0] == "vllm/vllm-openai:v0.27.1"
    assert one(got, "env:CUDA_VERSION")[0] == "12.9.1"
    assert "launch_command" not in [f.name for f in got]


def test_pod_yaml():
    got = facts("pod_spec", S.POD_YAML)
    assert one(got, "node_name") == ("gpu-node-44", 6)
    assert one(got, "image") == ("vllm/vllm-openai:kimi-k3", 9)
    assert one(got, "launch_command")[0] == "vllm serve moonshotai/Kimi-K3 --tensor-parallel-size 8 --enable-prefix-caching"
    assert one(got, "prefix_caching") == ("true", 15)
    assert one(got, "ucx_tls") == ("rc,cuda_copy", 17)
    assert one(got, "gpu_request")[0] == "8"
    assert one(got, "shm_size")[0] == str(32 * 2**30)


def test_nvidia_smi_list_names_and_counts_the_gpus():
    got = facts("nvidia_smi_list", S.SMI_LIST)
    assert one(got, "gpu_model") == ("NVIDIA H100 80GB HBM3", 3)
    assert one(got, "gpu_count")[0] == "3"  # a MIG device is not a GPU
    assert one(got, "gpu_uuids")[0].split(",")[2] == "GPU-03dceeb9-2c1e-4d7a-9b3f-dc341edb9688"
    assert one(got, "hostname")[0] == "gpu-h100-n04"
    assert one(facts("nvidia_smi_list", S.SMI_LIST_BARE), "gpu_count")[0] == "2"


def test_a_docker_ps_table_names_no_launch_command():
    # its COMMAND column quotes `vllm serve ...`, cut: that is not the command that ran
    got = facts("docker_ps", S.DOCKER_PS)
    assert not {"launch_command", "model", "image"} & {f.name for f in got}


def test_systemd_unit_runs_its_execstart_with_its_environment():
    got = facts("systemd_unit", S.SYSTEMD_UNIT)
    assert one(got, "launch_command")[1] == 10
    assert one(got, "image") == ("vllm/vllm-openai:v0.10.1.1", 10)  # not the one of the diff quoted below
    assert one(got, "tensor_parallel_size")[0] == "2"
    assert one(got, "env:NCCL_DEBUG") == ("WARN", 8)
    assert one(got, "env:VLLM_LOGGING_LEVEL")[0] == "DEBUG"


def test_a_supervisord_program_runs_its_command_over_its_indented_lines_with_its_environment():
    got = facts("supervisor_program", S.SUPERVISOR_PROGRAM)
    assert one(got, "launch_command")[1] == 3
    assert one(got, "tensor_parallel_size")[0] == "4"   # (on the command's second line)
    assert one(got, "env:CUDA_VISIBLE_DEVICES") == ("0,1,2,3", 5)   # (a comma inside quotes is the value's)
    assert one(got, "env:VLLM_LOGGING_LEVEL")[0] == "DEBUG"


def test_systemctl_status_says_how_the_main_process_ended():
    got = facts("systemctl_status", S.SYSTEMCTL_STATUS)
    assert one(got, "last_state_reason") == ("killed, signal=KILL", 5)
    assert "exit_code" not in {f.name for f in got}  # a signal is no exit code
    exited = facts("systemctl_status", "$ systemctl status vllm --no-pager\n" + S.SYSTEMCTL_STATUS.replace(
        "(code=killed, signal=KILL)", "(code=exited, status=1/FAILURE)"))
    assert one(exited, "exit_code") == ("1", 6) and one(exited, "last_state_reason")[0] == "exited, status=1/FAILURE"


@pytest.mark.parametrize("env, want", [("", "4,5,6,7"),    # the host's GPUs the service is given, in order
                                       ("      CUDA_VISIBLE_DEVICES: '0,1'\n", "0,1")])   # near miss: its own env
def test_a_compose_service_s_device_ids_are_the_host_gpus_its_cuda_devices_are(env, want):
    compose = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.13.0\n    environment:\n      HF_HOME: /hf\n" + env
               + "    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: "
               "nvidia\n              device_ids: ['4', '5', '6', '7']\n              capabilities: [gpu]\n")
    assert [f.value for f in facts("compose", compose) if f.name == "cuda_visible_devices"] == [want]


def test_compose_file_services():
    got = facts("compose", S.COMPOSE)
    images = sorted((f.value, f.line) for f in got if f.name == "image")
    assert images == [("prom/prometheus:v3.1.0", 18), ("vllm/vllm-openai:v0.27.1", 7)]  # (a merged key: its service)
    launches = sorted(f.value for f in got if f.name == "launch_command")
    assert launches == ["/bin/prometheus --config.file=/etc/prometheus/prometheus.yml",
                        "moonshotai/Kimi-K3 --tensor-parallel-size 8 --max-model-len 131072"]
    assert one(got, "tensor_parallel_size") == ("8", 10)  # the vllm-openai image runs `vllm serve` on them
    assert one(got, "max_model_len")[0] == "131072"
    assert one(got, "nccl_ib_hca") == ("mlx5_0,mlx5_1", 13)
    assert one(got, "shm_size")[0] == str(16 * 2**30)
    assert one(got, "ipc_mode")[0] == "host"
    assert one(got, "network_mode") == ("host", 20)
    assert not [f for f in got if "NCCL_DEBUG" in f.name]  # passed on from the host: no value here


def test_deployment_json():
    got = facts("pod_spec", S.DEPLOYMENT_JSON)
    assert one(got, "image")[0] == "vllm/vllm-openai:v0.11.0"
    assert one(got, "max_model_len")[0] == "8192"


LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        nodeSelector: {nvidia.com/gpu.product: NVIDIA-GB300, nvidia.com/gpu.clique: "7a31"}
        containers:
        - name: leader
          image: vllm/vllm-openai:kimi-k3
          args: ["moonshotai/Kimi-K3", "--tensor-parallel-size", "8", "--enable-expert-parallel", "--nnodes", "2"]
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: vllm/vllm-openai:kimi-k3
"""


def test_a_leader_worker_set_gives_its_leader_s_command_and_its_nvlink_clique():
    got = facts("pod_spec", LWS)
    assert one(got, "tensor_parallel_size")[0] == "8"   # the leader's template, not only the workers'
    assert one(got, "mnnvl") == ("true", 8)
    # near miss: pinned to a GPU product, not to a clique: nothing says its nodes share NVLink
    assert values(facts("pod_spec", LWS.replace(', nvidia.com/gpu.clique: "7a31"', "")), "mnnvl") == []


def test_describe_pod_and_node():
    got = facts("k8s_describe", S.DESCRIBE_POD)
    assert one(got, "node_name") == ("gpu-c12", 3)
    assert one(got, "image_digest") == ("sha256:" + "5" * 64, 8)
    assert one(got, "last_state_reason") == ("OOMKilled", 16)
    assert one(got, "exit_code") == ("137", 17)
    assert one(got, "restart_count") == ("4", 18)
    assert one(got, "tensor_parallel_size") == ("8", 11)
    assert one(got, "pod_events") == ("Warning BackOff (x7 over 3m): Back-off restarting failed container vllm", 36)
    assert one(got, "shm_size")[0] == "unlimited"
    node = facts("k8s_describe", S.DESCRIBE_NODE)
    assert one(node, "node_name") == ("gpu-c12", 1)
    assert one(node, "driver_version") == ("570.148.08", 4)
    assert one(node, "gpu_capacity") == ("8", 12)


DESCRIBE_PVC = """Name:          model-cache-kimi-k3-1
Namespace:     llm
StorageClass:  vast-nvme
Status:        Pending
Capacity:
Access Modes:
Used By:       kimi-k3-1
Events:
  Type     Reason              Age                   From                         Message
  ----     ------              ----                  ----                         -------
  Warning  ProvisioningFailed  2m11s (x38 over 113m)  persistentvolume-controller  storageclass not found
"""


def test_a_volume_claim_s_describe_names_no_node_though_it_has_a_capacity():
    assert values(facts("k8s_describe", DESCRIBE_PVC), "node_name") == []
    # near miss: a node's describe (its Capacity, no storage class) names its node
    assert one(facts("k8s_describe", S.DESCRIBE_NODE), "node_name")[0] == "gpu-c12"


# ------------------------------------------------------------------------------------------
# host dumps
# ------------------------------------------------------------------------------------------
def test_prometheus():
    got = facts("prometheus", S.PROMETHEUS)
    assert one(got, "metric:vllm:prefix_cache_hits") == ("250.0", 7)
    assert one(got, "prefix_cache_hit_rate")[0] == "0.2500"
    assert one(got, "prefix_caching") == ("false", 8)


def test_lsmod():
    assert one(facts("lsmod", S.LSMOD_WITH), "nvidia_peermem_loaded") == ("true", 2)
    got = facts("lsmod", S.LSMOD_WITHOUT)
    assert one(got, "nvidia_peermem_loaded") == ("false", 1)
    assert one(got, "mlx5_loaded") == ("true", 2)


def test_ibstat_and_ibv_devinfo():
    assert values(facts("ibstat", S.IBSTAT), "ib_port_state") == ["mlx5_0/1=Active", "mlx5_1/1=Down"]
    assert one(facts("ibstat", S.IBSTAT), "ib_port_state")[1] == 5
    assert one(facts("ibstat", S.IBV_DEVINFO), "ib_port_state") == ("mlx5_4/1=Active", 5)


def test_uptime_transcript():
    got = facts("uptime", S.UPTIME_MULTI)
    assert one(got, "collected_at") == ("2026-02-02T10:00:00+00:00", 2)
    assert one(got, "boot_time") == ("2026-02-02T07:59:59+00:00", 4)
    assert one(got, "hostname") == ("gpu-q3", 1)


def test_uptime_single_commands():
    assert one(facts("uptime", S.UPTIME_DATE_ONLY), "collected_at")[0] == "2026-02-02T10:00:00+00:00"
    assert one(facts("uptime", S.UPTIME_S), "boot_time") == ("2026-02-02T08:00:00", 1)


def test_uptime_and_date_at_one_prompt_give_the_boot_time_and_the_time_now():
    got = facts("uptime", "$ uptime -s; date -u\n2026-08-27 03:12:09\nWed Sep  9 09:35:51 UTC 2026\n")
    assert one(got, "boot_time") == ("2026-08-27T03:12:09+00:00", 2)
    # near miss: the date's own line is the time now, not the boot
    assert one(got, "collected_at") == ("2026-09-09T09:35:51+00:00", 3)


@pytest.mark.parametrize("text,want", [
    (S.IP_ADDR, [("eth0=192.168.50.7/24", 5), ("ib0=10.100.0.7/16", 7)]),
    (S.IP_BRIEF, [("eth0=192.168.50.7/24", 2), ("ib0=10.100.0.7/16", 3)]),
    (S.IFCONFIG, [("eth0=172.20.0.3/16", 2)]),
])
def test_ip_addr(text, want):
    assert [(f.value, f.line) for f in facts("ip_addr", text) if f.name == "ip"] == want


def test_ps_gives_the_command_that_ran():
    got = facts("ps", S.PS_EF)
    assert one(got, "prefix_caching") == ("true", 3)
    assert one(got, "launch_command")[0].endswith("vllm serve moonshotai/Kimi-K3 --tensor-parallel-size 8 --enable-prefix-caching")
    assert one(facts("ps", S.PS_AUX), "model") == ("x/y", 2)


def test_manifests_and_plain_json():
    assert one(facts("manifest", S.MANIFEST_JSON), "node_name")[0] == "gpu-m1"
    assert one(facts("manifest", S.MANIFEST_TOML), "node_name") == ("gpu-m2", 2)
    assert facts("json", S.OTHER_JSON) == []


def test_lines_are_newline_counted():
    text = "Fri Jan  9 10:11:12 2026\r\n" + S.SMI_WIDE.split("\n", 1)[1].replace("\n", "\r\n")
    assert one(facts("nvidia_smi", text), "driver_version") == ("580.65.06", 3)


@pytest.mark.parametrize("kind,text", [
    ("docker_inspect", '[{"Config": {"Env": 5, "Image": 7}, "State": {"ExitCode": "a"}, "RepoTags": "x", '
                       '"RepoDigests": 5, "Args": [1, null], "Path": null}]'),
    ("pod_spec", 'spec: {containers: [5, {image: 3, args: "x", env: [1, {name: 5}], resources: 5, volumeMounts: 7}], '
                 'volumes: [3, {emptyDir: 5}]}'),
    ("pod_spec", "kind: List\nitems: 5"),
    ("model_config", '{"architectures": "X", "quantization_config": 5}'),
    ("manifest", '{"k3logs_manifest": {"node": [1], "x": {"a": 1}}}'),
])
def test_wrongly_typed_fields_do_not_break_parsers(kind, text):
    facts(kind, text)


def test_pod_command_written_as_one_string():
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: x\n    image: vllm/vllm-openai:kimi-k3\n"
            '    command: "vllm serve m --enable-prefix-caching"\n')
    assert one(facts("pod_spec", text), "prefix_caching")[0] == "true"


def test_a_broken_dump_becomes_a_parse_error_fact_not_an_exception():
    got = facts_from_dump("docker_inspect", "x.json", '[{"Config": {"Env": 5}}]', None)
    assert isinstance(got, list)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(DUMP_KINDS), st.text(max_size=1500))
def test_any_kind_on_arbitrary_text_never_raises(kind, text):
    got = facts_from_dump(kind, "x", text, None)
    assert all(isinstance(f, Fact) and f.value for f in got)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 3000), st.text(max_size=40))
def test_cut_dumps_never_raise(cut, junk):
    for kind, text in (("docker_inspect", S.DOCKER_INSPECT), ("pod_spec", S.POD_YAML), ("nvidia_smi", S.SMI_WIDE),
                       ("k8s_describe", S.DESCRIBE_POD), ("launch_cmd", S.LAUNCH_VLLM), ("collect_env", S.COLLECT_ENV_FLAT)):
        facts_from_dump(kind, "x", text[:cut] + junk, None)


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------
def test_normalisers():
    assert norm_bus_id("00000000:18:00.0") == "0000:18:00"
    assert norm_bus_id("GPU0000:AB:00.0") == "0000:ab:00"
    assert parse_size("16Gi") == 16 * 2**30 and parse_size("1G") == 10**9 and parse_size("64g", docker=True) == 64 * 2**30
    assert parse_date("Sat Oct 03 15:02:57 UTC 2026") == "2026-10-03T15:02:57+00:00"
    assert parse_date("Mon, 17 Nov 2025 09:21:40 +0000") == "2025-11-17T09:21:40+00:00"
    assert parse_date("2026/09/02 not a date") is None
    assert version_less("0.27.0rc1", "0.27.0") and version_less("0.26.9", "0.27.0")
    assert not version_less("0.27.0", "0.27.0") and not version_less("0.27.1.dev3+gabc", "0.27.0")
    assert redact_command("docker run -e HF_TOKEN=abc -e NCCL_KEY=x img --api-key=zzz") == \
        "docker run -e HF_TOKEN=[redacted] -e NCCL_KEY=x img --api-key=[redacted]"


# ------------------------------------------------------------------------------------------
# facts from log events
# ------------------------------------------------------------------------------------------
def _events(rows: list[tuple[str, int, str | None, str]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"file": pl.String, "line": pl.Int64, "node": pl.String, "message": pl.String},
                        orient="row").with_columns(pl.lit("vllm").alias("source"))


def test_facts_from_events():
    ev = _events([
        ("a.log", 1, "n1", "Automatically detected platform cuda."),
        ("a.log", 2, "n1", "vLLM API server version 0.11.0"),
        ("a.log", 3, "n1", "non-default args: {'model': 'moonshotai/Kimi-K3', 'enable_prefix_caching': True, "
                           "'tensor_parallel_size': 8, 'all2all_backend': 'deepep_v2', 'served_model_name': ['k3']}"),
        ("a.log", 4, "n1", "Initializing a V1 LLM engine (v0.10.1.1) with config: model='m', tensor_parallel_size=8, "
                           "pipeline_parallel_size=2, data_parallel_size=1, enable_prefix_caching=False, max_seq_len=4096"),
        ("a.log", 5, "n1", "vLLM is using nccl==2.26.2"),
        ("a.log", 6, "n1", "gpu-1:10:10 [0] NCCL INFO NCCL version 2.26.2+cuda12.8"),
        ("a.log", 7, "n1", "gpu-1:10:10 [0] NCCL INFO cudaDriverVersion 12080"),
        ("a.log", 8, "n1", "2.9.0+cu130 13.0"),
        ("a.log", 9, "n1", "vLLM is using nccl==2.26.2"),
        ("k.log", 3, "n2", "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.172.08  Release Build"),
        ("k.log", 4, "n2", "gpu-2:1:1 [0] NCCL INFO NCCL_DMABUF_ENABLE set by environment to 0."),
        ("k.log", 5, None, None),
    ])
    got = facts_from_events(ev)
    by = {(f.name, f.value): (f.file, f.line, f.node, f.source) for f in got}
    assert by[("vllm_version", "0.11.0")] == ("a.log", 2, "n1", "log")
    assert by[("vllm_version", "0.10.1.1")][1] == 4
    assert by[("model", "moonshotai/Kimi-K3")][1] == 3
    assert by[("prefix_caching", "true")][1] == 3 and by[("prefix_caching", "false")][1] == 4
    assert by[("all2all_backend", "deepep_v2")][1] == 3
    assert by[("served_model_name", "k3")][1] == 3
    assert by[("pipeline_parallel_size", "2")][1] == 4 and by[("max_model_len", "4096")][1] == 4
    assert by[("nccl_version", "2.26.2")][1] == 5  # once, at its first line
    assert by[("nccl_cuda", "12.8")][1] == 6
    assert by[("driver_cuda", "12.8")][1] == 7
    assert by[("torch_cuda_build", "cu130")][1] == 8 and by[("cuda_runtime", "13.0")][1] == 8
    assert by[("driver_version", "570.172.08")] == ("k.log", 3, "n2", "log")
    assert by[("nccl_dmabuf_enable", "0")][2] == "n2"
    assert len([f for f in got if f.name == "nccl_version"]) == 1


@pytest.mark.parametrize("timed, file", [(True, "w.previous.log"),   # the earlier run's log, by its lines' times
                                         (False, "w.log")])           # near miss: no times: the name sorts first
def test_a_fact_printed_in_two_logs_of_one_node_is_kept_at_its_earliest_line_in_time(timed, file):
    from datetime import datetime, timezone
    at = (lambda h: datetime(2026, 11, 9, h, tzinfo=timezone.utc)) if timed else (lambda h: None)
    ev = pl.DataFrame({"file": ["w.log", "w.previous.log"], "line": [8, 8], "node": ["n6", "n6"],
                       "message": ["vLLM API server version 0.27.0"] * 2, "ts": [at(14), at(13)]},
                      schema_overrides={"ts": pl.Datetime("us", "UTC")})
    (fact,) = [f for f in facts_from_events(ev) if f.name == "vllm_version"]
    assert fact.file == file


def test_near_miss_within_one_file_an_untimed_banner_states_a_fact_before_its_timed_lines():
    from datetime import datetime, timezone
    ev = pl.DataFrame({"file": ["job.out", "job.out"], "line": [3, 63], "node": ["a18", "a18"],
                       "message": ["vLLM API server version 0.27.0"] * 2,
                       "ts": [None, datetime(2026, 12, 4, 11, 2, 31, tzinfo=timezone.utc)]},
                      schema_overrides={"ts": pl.Datetime("us", "UTC")})
    (fact,) = [f for f in facts_from_events(ev) if f.name == "vllm_version"]
    assert fact.line == 3


def test_facts_from_events_empty_and_minimal_frames():
    assert facts_from_events(pl.DataFrame()) == []
    assert facts_from_events(pl.DataFrame({"message": ["vLLM API server version 0.9.2"]}))[0].value == "0.9.2"


# ------------------------------------------------------------------------------------------
# facts.toml
# ------------------------------------------------------------------------------------------
def test_facts_toml_loads_and_replays_its_samples():
    data = load_facts_data()
    assert data.versions.k3_image == "vllm/vllm-openai:kimi-k3"
    assert data.driver_min_branch[13] == 580 and data.all2all_backend["rdma"] == "deepep_v2"
    assert data.versions.k3_min_vllm == "0.27.0" and data.versions.k3_torch_cuda_build == "cu130"
    assert data.versions.rdma_ucx_tls == "rc,cuda_copy" and data.versions.k3_min_gpus == 8
    assert len(data.evidence) == 9 and all(lf.samples for lf in data.log_facts)
    assert default_facts_data() is default_facts_data()


def test_bad_facts_toml_reports_file_and_line(tmp_path):
    good = (Path(default_facts_data().path)).read_text()
    bad = good.replace('k3_min_gpus = 8', 'k3_min_gpus = "eight"').replace(
        'id = "nccl-net-ib"', 'id = "nccl-net-ib"\ncolour = "red"').replace(
        "regex = 'cudaDriverVersion (?P<value>\\d{4,6})'", "regex = '(?<=x)cudaDriverVersion'")
    assert bad != good
    p = tmp_path / "facts.toml"
    p.write_text(bad)
    data, issues = load_facts_data(p, collect_errors=True)
    assert data is None
    msgs = {i.code: i for i in issues}
    assert {"versions", "unknown-key", "regex"} <= set(msgs)
    lines = bad.splitlines()
    assert "colour" in lines[msgs["unknown-key"].location.line - 1]
    assert "k3_min_gpus" in lines[msgs["versions"].location.line - 1]
    with pytest.raises(CatalogueError):
        load_facts_data(p)
    p.write_text("not = [toml")
    with pytest.raises(CatalogueError) as e:
        load_facts_data(p)
    assert e.value.problems[0].location.line == 1


def test_check_explains_is_read_and_checked_against_the_taxonomy(tmp_path):
    # a check's `explains` names the root categories its failure explains (the version check: the NCCL errors
    # of the healthy side); an unknown category there is an error with its line
    data = load_facts_data()
    assert {"nccl.system_error", "other"} <= set(data.checks["runtime_versions_across_nodes"].explains)
    assert data.checks["shm_size"].explains == ()
    good = (Path(default_facts_data().path)).read_text()
    bad = good.replace('explains = ["nccl.version_mismatch",', 'explains = ["nccl.nonsense",', 1)
    assert bad != good
    p = tmp_path / "facts.toml"
    p.write_text(bad)
    (tmp_path / "taxonomy.toml").write_text((Path(default_facts_data().path).parent / "taxonomy.toml").read_text())
    _, issues = load_facts_data(p, collect_errors=True)
    hit = [i for i in issues if i.code == "taxonomy"]
    assert hit and "nccl.nonsense" in hit[0].message
    assert "explains" in bad.splitlines()[hit[0].location.line - 1]


# ------------------------------------------------------------------------------------------
# real bundles (optional)
# ------------------------------------------------------------------------------------------
@pytest.mark.skipif(not REALWORLD.is_dir(), reason="no /work/shared/realworld")
def test_realworld_dumps_never_raise():
    seen_smi = 0
    for path in sorted(REALWORLD.glob("*/bundle/**/*")):
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        got = sniff_dump(text[:65536])
        if got is None:
            continue
        out = facts_from_dump(got[0], str(path.relative_to(REALWORLD)), text, None)
        assert not [f for f in out if f.name == "dump_parse_error"], (path, out)
        assert all(f.line is None or 1 <= f.line <= text.count("\n") + 1 for f in out)
        names = {f.name for f in out}
        if got[0] == "nvidia_smi":
            seen_smi += 1
            assert names & {"driver_version", "gpu_error"}, path
        if got[0] in ("nvidia_smi_q", "nvidia_smi_csv"):
            assert "driver_version" in names or "gpu_model" in names, path
        if got[0] == "launch_cmd":
            assert "launch_command" in names, path
        if got[0] in ("docker_inspect", "pod_spec", "k8s_describe"):
            assert names & {"image", "node_name"}, path
    assert seen_smi >= 1


@pytest.mark.parametrize("text, hosts", [
    ("node-a: 2026-08-11T12:00:00+00:00\nnode-b: 2026-08-11T12:00:03+00:00\n", ["node-a", "node-b"]),  # a transcript
    ("gpu-a01: 2026-08-11T12:00:00+00:00\n", ["gpu-a01"]),                                           # one host's reading
    ("collected-by: collect.sh v0.4\ncollected-at: 2026-07-08T09:58:44Z\nhostname: gpu-h100-09\n", []),  # a note's key
    # a loop's `printf '%s ' $n; ssh $n date -u ...`: host, a space, its time (near miss: a note's key so written)
    ("h200-p07 2026-06-16T11:02:05.318Z\nh200-p12 2026-06-16T11:06:19.027Z\n", ["h200-p07", "h200-p12"]),
    ("collected-at 2026-07-08T09:58:44Z\n", []),
    # a bastion's transcript of `ssh HOST 'hostname; date -u ...'`, one host after the other: each time is its host's
    ("$ ssh k3-head-a 'hostname; date -u +%FT%T.%3NZ'\nk3-head-a\n2026-12-02T07:41:02.118Z\n"
     "$ ssh k3-w-spot-1 'hostname; date -u +%FT%T.%3NZ'\nk3-w-spot-1\n2026-12-02T07:42:40.129Z\n",
     ["k3-head-a", "k3-w-spot-1"]),
    ("$ date -u +%FT%T.%3NZ\n2026-12-02T07:41:02.118Z\n", []),   # near miss: a time typed on no named host
])
def test_a_date_read_on_hosts_is_a_clock_reading_and_a_note_s_time_key_is_none(text, hosts):
    got = [f.value.split()[0] for f in facts_from_dump("text", "clock.txt", text, None) if f.name == "clock_reading"]
    assert got == hosts


@pytest.mark.parametrize("text, nodes", [
    ("JobId=4471823 JobName=serve\n   NodeList=gpu-h100-041\n   BatchHost=gpu-h100-041\n   NumNodes=1 NumCPUs=48\n",
     ["gpu-h100-041"]),                                                              # a job of one node
    ("JobId=4471824 JobName=serve\n   NodeList=hgx-b[05-06]\n   BatchHost=hgx-b05\n   NumNodes=2 NumCPUs=96\n", []),
])
def test_scontrol_show_job_of_one_node_names_that_node(text, nodes):
    got = [f.value for f in facts_from_dump("text", "scontrol.txt", text, None) if f.name == "node_name"]
    assert got == nodes


SACCT_ONE = "\n".join(f"{a:<12} {b:>10} {c:>16} {d:>10}" for a, b, c, d in [
    ("JobID", "JobName", "NodeList", "State"), ("-" * 12, "-" * 10, "-" * 16, "-" * 10),
    ("88412", "vllm-l33-+", "hpc-gpu-n17", "FAILED"), ("88412.batch", "batch", "hpc-gpu-n17", "FAILED")]) + "\n"


@pytest.mark.parametrize("text, nodes", [
    (SACCT_ONE, ["hpc-gpu-n17"]),                                                     # a job of one node
    (SACCT_ONE.replace("     hpc-gpu-n17", "hpc-gpu-n[17-18]", 1), []),                   # near miss: two nodes
    (SACCT_ONE + f"{'88413':<12} {'train':>10} {'hpc-gpu-n17':>16} {'RUNNING':>10}\n", []),  # two jobs
])
def test_sacct_of_a_job_of_one_node_names_that_node(text, nodes):
    got = [f.value for f in facts_from_dump("text", "sacct.txt", text, None) if f.name == "node_name"]
    assert got == nodes


def test_sacct_node_lists_are_read_whole_when_the_rows_are_off_the_dashes_by_a_character():
    # a hand-aligned table: the cells sit two characters right of their dashes; a cut at the dashes halves them
    rows = [("88412", "vllm-l33-+", "hpc-gpu-n[17-18]", "FAILED"), ("88412.batch", "batch", "hpc-gpu-n17", "FAILED")]
    text = SACCT_ONE.split("\n", 2)[0] + "\n" + SACCT_ONE.split("\n", 2)[1] + "\n" + "".join(
        f"{a:<12} {b:>10} {c:>18} {d:>10}\n" for a, b, c, d in rows)
    got = [f.value for f in facts_from_dump("text", "sacct.txt", text, None) if f.name == "job_nodes"]
    assert got == ["hpc-gpu-n[17-18]", "hpc-gpu-n17"]


def test_a_job_table_of_several_jobs_gives_each_job_its_own_row_s_node_list():
    text = SACCT_ONE.replace("     hpc-gpu-n17", "hpc-gpu-n[17-18]", 1) + \
        f"{'88413':<12} {'train':>10} {'hpc-gpu-n21':>16} {'RUNNING':>10}\n"
    got = [f.value for f in facts_from_dump("text", "sacct.txt", text, None) if f.name == "job_nodelist"]
    assert got == ["88412 hpc-gpu-n[17-18]", "88413 hpc-gpu-n21"]    # (a step's row, 88412.batch, is no job's)


@pytest.mark.parametrize("text, lists", [
    ("JobId=4471824 JobName=serve\n   NodeList=hgx-b[05-06]\n   BatchHost=hgx-b05\n   NumNodes=2\n", ["hgx-b[05-06]"]),
    (SACCT_ONE.replace("     hpc-gpu-n17", "hpc-gpu-n[17-18]", 1), ["hpc-gpu-n[17-18]"]),   # the job's own row
    # near miss: two jobs' NodeList lines, or a table of two jobs: no one job's list
    ("JobId=1\n   NodeList=hgx-b[05-06]\nJobId=2\n   NodeList=hgx-b[07-08]\n", []),
    (SACCT_ONE + f"{'88413':<12} {'train':>10} {'hpc-gpu-n17':>16} {'RUNNING':>10}\n", []),
])
def test_a_job_dump_gives_the_job_s_node_list_as_its_environment_would(text, lists):
    got = [f.value for f in facts_from_dump("text", "job.txt", text, None) if f.name == "slurm_nodelist"]
    assert got == lists


@pytest.mark.parametrize("table, counts", [
    ("NAME     READY   STATUS    RESTARTS      AGE   IP           NODE\n"
     "vllm-0   0/1     Running   3 (2m ago)    14m   10.68.2.31   gke-pool-x2mq\n"
     "vllm-1   0/1     Pending   0             14m   <none>       <none>\n"
     "agent-x  1/1     Running   5 (9d ago)    27d   10.68.2.12   gke-pool-x2mq\n", ["3", "0"]),  # (a ready pod: none)
    ("NAME     READY   STATUS    AGE   IP           NODE\n"                 # near miss: no RESTARTS column
     "vllm-0   0/1     Running   14m   10.68.2.31   gke-pool-x2mq\n", []),
    ("NAME     PHASE     READY   RESTARTS   NODE\n"                          # custom columns: ready true / false
     "vllm-0   Running   false   1          h200-p4-03\n"
     "agent-x  Running   true    5          h200-p4-03\n", ["1"]),
])
def test_a_pod_table_gives_each_pod_not_ready_its_restart_count(table, counts):
    got = [f.value for f in facts_from_dump("text", "pods.txt", "$ kubectl get pods -o wide\n" + table, None)
           if f.name == "restart_count"]
    assert got == counts


@pytest.mark.parametrize("status, finished", [("Completed", True), ("Succeeded", True),
                                               ("Error", False), ("Running", False)])   # near misses: not done
def test_a_pod_table_s_finished_pod_names_its_node_as_the_pod_s_only_and_frees_its_address(status, finished):
    table = ("NAME          READY   STATUS      RESTARTS   AGE   IP            NODE\n"
             f"probe-29374   0/1     {status:<9}   0          4m    10.244.2.19   infra-02\n")
    got = {f.name: f.value for f in facts_from_dump("text", "pods.txt", "$ kubectl get pods -o wide\n" + table, None)}
    assert ("pod_finished" in got, "node_name" in got, "pod_ip" in got) == (finished, not finished, not finished)
    assert got["pod_node"] == "probe-29374 infra-02"


def test_a_pod_table_with_an_image_column_gives_each_node_the_image_its_pod_runs():
    table = ("$ kubectl get pods -o custom-columns='NAME:.metadata.name,NODE:.spec.nodeName,IMAGE:.spec.containers[0].image'\n"
             "NAME              NODE        IMAGE\n"
             "qwen-decode-7c9   h200-b-05   vllm/vllm-openai:v0.27.1\n"
             "qwen-prefill-0    h200-a-01   vllm/vllm-openai:v0.26.2\n"
             "qwen-router-5f7   cpu-c-02    registry.internal/serving/pd-router:1.9.0\n")
    got = facts_from_dump("text", "pods.txt", table, None)
    assert [(f.value, f.node, f.line) for f in got if f.name == "vllm_version"] == [
        ("0.27.1", "h200-b-05", 3), ("0.26.2", "h200-a-01", 4)]
    # near miss: another program's image is an image, and no vLLM release
    assert ("registry.internal/serving/pd-router:1.9.0", "cpu-c-02") in [(f.value, f.node) for f in got
                                                                           if f.name == "image"]
    # a table with no READY column keeps its pods' nodes
    assert [f.value for f in got if f.name == "pod_node"][-1] == "qwen-router-5f7 cpu-c-02"


@pytest.mark.parametrize("between, pods", [("$ helm -n llm history kimi | tail -2\n", ["kimi-0 gpu-b3-07"]),
                                           ("", ["kimi-0 gpu-b3-07", "41 vllm-serving-0.9.4"])])
def test_a_pod_table_ends_where_the_next_command_was_typed(between, pods):
    # the next command's output is no row of the table, however its columns line up (near miss: with no prompt
    # between them, the lines that follow are read as rows)
    text = ("$ kubectl -n llm get pod kimi-0 -o wide\n"
            "NAME     READY   STATUS    RESTARTS   AGE   IP            NODE\n"
            "kimi-0   1/1     Running   0          55m   10.244.3.17   gpu-b3-07\n" + between +
            "41       Tue Nov 24 10:12:51 2026	superseded	vllm-serving-0.9.4 	0.27.1\n")
    assert [f.value for f in facts_from_dump("text", "pods.txt", text, None) if f.name == "pod_node"] == pods


@pytest.mark.parametrize("command, pods", [
    ("kubectl -n llm debug qwen3-6d8f7c9b5-r7tkz -it --copy-to=dbg-lmcache --container=vllm -- bash", ["dbg-lmcache"]),
    ("kubectl exec -it -n llm vllm-0 -- bash", ["vllm-0"]),
    ("kubectl logs vllm-0 --previous", []),                     # near miss: reads a pod's log, opens no shell in it
])
def test_a_shell_opened_in_a_pod_names_that_pod(command, pods):
    text = f"$ {command}\nroot@{pods[0] if pods else 'gpu-a01'}:/vllm-workspace# pip check\nNo broken requirements found.\n"
    got = [f.value for f in facts_from_dump("text", "session.txt", text, None) if f.name == "pod_name"]
    assert got == pods


@pytest.mark.parametrize("command, pods", [
    ("kubectl describe pod -n payments fraud-scorer-6d9b7f5c4-jw8rt | sed -n '/Containers:/,/Conditions:/p'",
     ["fraud-scorer-6d9b7f5c4-jw8rt"]),
    ("kubectl describe node gpu-a17 | sed -n '/Containers:/,/Conditions:/p'", []),   # near miss: a node's
])
def test_the_capture_of_a_pod_s_describe_names_that_pod_where_its_excerpt_has_no_name_line(command, pods):
    text = f"$ {command}\nContainers:\n  scorer:\n    State:          Running\n    Restart Count:  0\n"
    got = [f.value for f in facts_from_dump("text", "describe-excerpt.txt", text, None) if f.name == "pod_name"]
    assert got == pods


SCHEDULED = "2026-10-14T0{m}:00:00Z   Normal   Scheduled   {pod}   Successfully assigned inference/{pod} to h200-node-12"


@pytest.mark.parametrize("pods, want", [
    (["k3-serve-0-1"] * 4, ["3"]),               # the same pod made anew three times: three restarts
    (["k3-serve-0-1", "k3-serve-0"], []),         # near miss: two pods, each scheduled once
])
def test_a_pod_scheduled_again_and_again_counts_its_restarts(pods, want):
    text = "\n".join(SCHEDULED.format(m=i, pod=p) for i, p in enumerate(pods)) + "\n"
    got = [f.value for f in facts_from_dump("k8s_events", "events.txt", text, None) if f.name == "restart_count"]
    assert got == want


@pytest.mark.parametrize("count, want", [("9", ["8"]),   # one listed event that happened nine times: eight restarts
                                         ("1", [])])    # near miss: once
def test_a_listed_scheduling_counts_as_often_as_its_count_column_says(count, want):
    text = ("LAST                   FIRST                  COUNT   TYPE      REASON      OBJECT    MESSAGE\n"
            f"2026-11-17T11:46:31Z   2026-11-17T11:41:41Z   {count}       Normal    Scheduled   dsv31-0   Successfully "
            "assigned llm-serving/dsv31-0 to h100-rk3-07\n")
    got = [f.value for f in facts_from_dump("k8s_events", "events.txt", text, None) if f.name == "restart_count"]
    assert got == want


CREATED = "{when}   Normal   SuccessfulCreate   replicaset/vllm-7d9f8c6b5   Created pod: vllm-7d9f8c6b5-{pod}"


@pytest.mark.parametrize("made, want", [
    ([("10:00", "x2kpl"), ("10:10", "m8vqz"), ("10:20", "q4n7d")], ["2"]),   # replaced twice: two restarts
    ([("10:00", "x2kpl"), ("10:00", "m8vqz"), ("10:00", "q4n7d")], []),      # near miss: three replicas made at once
])
def test_a_controller_making_its_pods_again_later_counts_their_restarts(made, want):
    text = "\n".join(CREATED.format(when=f"2026-10-14T{t}:00Z", pod=p) for t, p in made) + "\n"
    got = [f.value for f in facts_from_dump("k8s_events", "events.txt", text, None) if f.name == "restart_count"]
    assert got == want


def test_the_boot_time_in_proc_stat_is_the_kernels_own_in_utc():
    got = facts("uptime", "$ date\nWed Nov  4 03:52:17 UTC 2026\n$ grep btime /proc/stat\nbtime 1793135692\n")
    assert one(got, "boot_time") == ("2026-10-27T21:14:52+00:00", 4)
    # near miss: a /proc/stat line of another counter says nothing of the boot
    assert not values(facts("uptime", "$ head -1 /proc/stat\ncpu  10132153 290696 3084719 46828483\n"), "boot_time")


LIST_BOOTS = ("$ journalctl --list-boots --no-pager\n"
              "IDX BOOT ID                          FIRST ENTRY                  LAST ENTRY\n"
              " -1 2b7e51c0d8a94e6fb3c1f2a7d9e04c68 Mon 2026-06-08 16:43:55 {tz} Thu 2026-06-11 03:02:31 {tz}\n"
              "  0 e41c9a07b2d5436f8e1a0c3b7d6f2e95 Thu 2026-06-11 03:05:22 {tz} Thu 2026-06-18 09:24:51 {tz}\n")


@pytest.mark.parametrize("tz, boot", [("CEST", "2026-06-11T03:05:22+02:00"), ("+08", "2026-06-11T03:05:22+08:00"),
                                      ("CST", "2026-06-11T03:05:22")])   # near miss: a zone of several places
def test_the_current_boot_s_first_journal_entry_is_the_boot_time_in_the_zone_it_names(tz, boot):
    got = facts("uptime", LIST_BOOTS.format(tz=tz))
    assert one(got, "boot_time") == (boot, 4)   # (the earlier boot's row, line 3, is another boot's)


@pytest.mark.parametrize("note, boot", [
    ("Added by support: the node's dmesg (ring buffer, node booted 2025-11-03 09:41:27 local; cluster in UTC).",
     "2025-11-03T09:41:27"),
    ("gpu-a07 up since 2026-02-01T06:12:40Z, no reboot since.", "2026-02-01T06:12:40+00:00"),
    ("The node was rebooted twice since 2025-11-03 09:41:27.", None),   # near miss: no boot it names the time of
])
def test_a_boot_time_a_note_states_is_the_boot_time(note, boot):
    assert values(facts("uptime", note + "\n"), "boot_time") == ([boot] if boot else [])


@pytest.mark.parametrize("text, offset", [
    ("$ date\nSat Mar 14 03:31:44 AM CDT 2026\n", "-18000"),   # a zone of one place: the host's zone
    ("$ date -u\nSat Mar 14 08:31:44 AM UTC 2026\n", None),    # near miss: asked for UTC, not the host's zone
    ("$ date\nSat Mar 14 03:31:44 AM CST 2026\n", None),       # near miss: CST names several zones
])
def test_a_date_that_prints_its_zone_gives_the_host_s_utc_offset(text, offset):
    got = values(facts("uptime", text), "utc_offset")
    assert got == ([offset] if offset else [])


@pytest.mark.parametrize("text, offset", [
    ("$ ntpdate -q ntp1.dc.internal\nserver 10.60.0.2, stratum 2, offset -70.412718, delay 0.02573\n"
     "19 Aug 10:49:33 ntpdate[48112]: step time server 10.60.0.2 offset -70.412718 sec\n", "70.412718"),
    ("$ ntpdate -q ntp1.dc.internal\nserver 10.60.0.2, stratum 16, offset 0.000000, delay 0.00000\n"
     "ntpdate: no server suitable for synchronization found\n", None),   # near miss: no server answered
])
def test_an_ntp_query_s_offset_is_how_far_the_host_s_clock_is_ahead(text, offset):
    assert values(facts("uptime", text), "clock_offset") == ([offset] if offset else [])


@pytest.mark.parametrize("finished, span", [("      Finished:     Thu, 18 Sep 2025 16:47:31 +0000\n",
                                             ["5 7 2025-09-18T16:47:31+00:00"]),
                                            ("", [])])   # near miss: a last state that gives no end
def test_a_last_state_s_reason_takes_the_time_it_finished(finished, span):
    describe = ("Name:         qwen-0\nContainers:\n  vllm:\n    Last State:     Terminated\n      Reason:       OOMKilled\n"
                "      Exit Code:    137\n" + finished + "    Ready:          False\n")
    got = facts("k8s_describe", describe)
    assert values(got, "span_time") == span   # (the Reason's line, 5, to the Finished line, 7)


@pytest.mark.parametrize("reference, offset", [("A9FEA97B (169.254.169.123)", "1.2"),
                                               ("00000000 ()", None)])   # near miss: chrony never synchronised
def test_chronys_system_time_is_a_measurement_only_once_it_synchronised(reference, offset):
    text = (f"$ chronyc tracking\nReference ID    : {reference}\nStratum         : 3\n"
            "System time     : 1.200000000 seconds fast of NTP time\nLast offset     : +0.000000000 seconds\n")
    assert values(facts("uptime", text), "clock_offset") == ([offset] if offset else [])


@pytest.mark.parametrize("command, name", [("hostname; hostname -I | tr ' ' '\\n' | head -3", "h200-sx-08"),
                                           ("hostname -I | tr ' ' '\\n'", None)])   # near miss: its addresses only
def test_hostname_then_its_addresses_name_the_host_and_its_addresses(command, name):
    out = ("h200-sx-08\n" if name else "") + "10.40.12.8\n172.17.0.1\n"
    got = facts("text", f"$ {command}\n{out}$ df -h /\nFilesystem  Size  Used Avail Use% Mounted on\n")
    assert values(got, "hostname") == ([name] if name else [])
    assert values(got, "ip") == ["hostname=10.40.12.8", "hostname=172.17.0.1"]
