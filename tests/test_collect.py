"""`k3logs collect` against stand-in commands: small scripts in a tmp bin folder, the only thing on PATH, that
print made-up outputs written here (a two-GPU node, a vLLM container). One hangs, one fails, one is absent.
The real machine's tools are never run."""
from __future__ import annotations

import json
import os
import stat
import tarfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from k3logs.collect import command as collect_command, plan as collect_plan
from k3logs.api import sniff_bundle
from k3logs.cli import cli

NVIDIA_SMI = """\
Mon Nov 30 06:58:02 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.133.20             Driver Version: 570.133.20     CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   41C    P0            118W /  700W |   71234MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                    0 |
| N/A   39C    P0            115W /  700W |   71234MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
"""
NVIDIA_SMI_Q = """\

==============NVSMI LOG==============

Timestamp                                 : Mon Nov 30 06:58:03 2026
Driver Version                            : 570.133.20
CUDA Version                              : 12.8

Attached GPUs                             : 2
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Persistence Mode                      : Enabled
"""
TOPO = """\
\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV18\tPIX\t0-47\t0\t\tN/A
GPU1\tNV18\t X \tSYS\t0-47\t0\t\tN/A
NIC0\tPIX\tSYS\t X \t\t\t\t

Legend:

  X    = Self
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
"""
SMI_CSV = """\
index, name, pci.bus_id, driver_version, memory.total [MiB], memory.used [MiB]
0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 570.133.20, 81559 MiB, 71234 MiB
1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 570.133.20, 81559 MiB, 71234 MiB
"""
DMESG = """\
[Mon Nov 30 06:12:40 2026] nvidia-nvlink: Nvlink Core is being initialized, major device number 234
[Mon Nov 30 06:41:12 2026] NVRM: Xid (PCI:0000:18:00): 79, pid=48213, name=python3, GPU has fallen off the bus.
"""
LSMOD = """\
Module                  Size  Used by
nvidia_peermem         16384  0
nvidia_uvm           1794048  4
nvidia              11722752  212 nvidia_uvm,nvidia_peermem
mlx5_ib               462848  0
mlx5_core            2342912  1 mlx5_ib
"""
IBSTAT = """\
CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.39.1002
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tLink layer: InfiniBand
"""
UNAME = "Linux {host} 6.8.0-49-generic #49-Ubuntu SMP PREEMPT_DYNAMIC Mon Nov  4 02:06:24 UTC 2024 x86_64 GNU/Linux"
HF_TOKEN = "hf_" + "Q7zXk2LmPw9RtYv4NbJc6HdFs8GaUe3WoKi"
API_KEY = "sk-" + "k3test0123456789abcdefGHIJ"
VLLM_LOG = """\
2026-11-30T06:40:01.102934512Z INFO 11-30 06:40:01 [api_server.py:1405] vLLM API server version 0.11.2
2026-11-30T06:40:01.103001001Z INFO 11-30 06:40:01 [utils.py:253] non-default args: {{'model': '/models/kimi-k3', 'tensor_parallel_size': 2}}
2026-11-30T06:40:02.200000000Z INFO 11-30 06:40:02 [hf.py:88] downloading with token {token}
2026-11-30T06:41:12.500000000Z ERROR 11-30 06:41:12 [core.py:710] EngineCore encountered a fatal error.
2026-11-30T06:41:12.500100000Z Traceback (most recent call last):
2026-11-30T06:41:12.500200000Z   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 701, in run_engine_core
2026-11-30T06:41:12.500300000Z     engine_core.run_busy_loop()
2026-11-30T06:41:12.500400000Z RuntimeError: CUDA error: unspecified launch failure
"""
LAUNCH_ARGS = ["vllm", "serve", "/models/kimi-k3", "--tensor-parallel-size", "2", "--no-enable-prefix-caching",
               "--port", "8000", "--api-key", "sk-" + "k3launch0123456789abcdefXYZ"]
IMAGE = "vllm/vllm-openai:v0.11.2"
DIGEST = "sha256:" + "4f" * 32


def inspect_json(name: str, host: str) -> str:
    return json.dumps([{
        "Id": "9c1e" * 16, "Name": f"/{name}", "Path": LAUNCH_ARGS[0], "Args": LAUNCH_ARGS[1:],
        "State": {"Status": "exited", "Running": False, "ExitCode": 1},
        "Image": "sha256:" + "ab" * 32,
        "Config": {"Image": IMAGE, "Hostname": host,  # --network host: the node's name
                   "Env": ["PATH=/usr/local/sbin:/usr/bin", f"HF_TOKEN={HF_TOKEN}", "NCCL_DEBUG=INFO",
                           "NCCL_IB_HCA=mlx5_0", f"VLLM_API_KEY={API_KEY}", "CUDA_VERSION=12.8.1",
                           "NVIDIA_VISIBLE_DEVICES=all", "SECRET_ONLY_IN_FULL_ENV=do-not-keep"]},
        "HostConfig": {"ShmSize": 17179869184, "IpcMode": "host", "NetworkMode": "host"},
        "RepoDigests": [f"vllm/vllm-openai@{DIGEST}"],
    }], indent=4)


def pod_json(host: str) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "k3-serve-0", "namespace": "llm-prod", "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": json.dumps({"env": [{"name": "HF_TOKEN"}]})}},
        "spec": {"nodeName": host, "containers": [{
            "name": "vllm", "image": f"vllm/vllm-openai@{DIGEST}", "command": LAUNCH_ARGS[:2], "args": LAUNCH_ARGS[2:],
            "env": [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "HF_TOKEN", "value": HF_TOKEN},
                    {"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {"name": "k3", "key": "api-key"}}}]}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "vllm", "image": IMAGE,
                                                              "imageID": f"docker-pullable://vllm/vllm-openai@{DIGEST}",
                                                              "restartCount": 0}]},
    }, indent=2)


PIP_FREEZE = """\
numpy==2.2.6
torch==2.8.0+cu128
transformers==4.57.1
vllm==0.11.2
"""
VERSIONS = """\
PyTorch version: 2.8.0+cu128
CUDA used to build PyTorch: 12.8
vLLM Version: 0.11.2
"""


def _script(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _cat(text: str) -> str:
    return f"cat <<'K3EOF'\n{text.rstrip(chr(10))}\nK3EOF\n"  # the caller's ';;' lands on the next line


def stand_ins(bin_dir: Path, host: str = "gpu-a01", *, hang: str = "ibstat", fail: str = "ibdev2netdev") -> Path:
    """A bin folder with made-up tools. `hang` sleeps (in a child, so only a group kill stops it); `fail`
    exits 3 with a message; journalctl is absent; everything else prints its recorded output."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    _script(bin_dir, "nvidia-smi", f"""case "$*" in
  "-q") {_cat(NVIDIA_SMI_Q)} ;;
  "topo -m") {_cat(TOPO)} ;;
  --query-gpu*) {_cat(SMI_CSV)} ;;
  "") {_cat(NVIDIA_SMI)} ;;
  *) echo "unexpected: $*" >&2; exit 64 ;;
esac""")
    _script(bin_dir, "dmesg", _cat(DMESG))
    _script(bin_dir, "date", '[ "$TZ" = UTC ] && [ "$LC_ALL" = C ] && echo "Mon Nov 30 06:58:02 UTC 2026"')
    _script(bin_dir, "uptime", '[ "$1" = "-s" ] && echo "2026-11-28 09:13:44"')
    _script(bin_dir, "hostname", f"echo {host}")
    _script(bin_dir, "uname", f"echo '{UNAME.format(host=host)}'")
    _script(bin_dir, "lsmod", _cat(LSMOD))
    _script(bin_dir, "ibstat", _cat(IBSTAT))
    _script(bin_dir, "ibdev2netdev", "echo 'mlx5_0 port 1 ==> ibp24s0 (Up)'")
    cmdline = " ".join(LAUNCH_ARGS)  # printed NUL-separated, as /proc/1/cmdline holds it
    _script(bin_dir, "docker", f"""case "$1" in
  logs) {_cat(VLLM_LOG.format(token=HF_TOKEN))} ;;
  inspect) {_cat(inspect_json("vllm-k3", host))} ;;
  exec)
    shift 2
    case "$*" in
      "cat /proc/1/cmdline") printf '%s\\000' {cmdline} ;;
      "python3 -m pip freeze") {_cat(PIP_FREEZE)} ;;
      "python3 -c "*) {_cat(VERSIONS)} ;;
      *) echo "unexpected: $*" >&2; exit 64 ;;
    esac ;;
  *) echo "unexpected: $*" >&2; exit 64 ;;
esac""")
    in_container = f"""case "$*" in
      "cat /proc/1/cmdline") printf '%s\\000' {cmdline} ;;
      "python3 -m pip freeze") {_cat(PIP_FREEZE)} ;;
      "python3 -c "*) {_cat(VERSIONS)} ;;
      *) echo "unexpected: $*" >&2; exit 64 ;;
    esac"""
    _script(bin_dir, "kubectl", f"""case "$1 $2" in
  "logs --previous") echo 'Error from server (BadRequest): previous terminated container "vllm" not found' >&2
    exit 1 ;;
  "logs --timestamps") {_cat(VLLM_LOG.format(token=HF_TOKEN))} ;;
  "get pod") {_cat(pod_json(host))} ;;
  "exec -n")
    shift 5
    {in_container} ;;
  *) echo "unexpected: $*" >&2; exit 64 ;;
esac""")
    if hang:
        _script(bin_dir, hang, "sleep 300 &\nwait")
    if fail:
        _script(bin_dir, fail, "echo 'ibdev2netdev: no HCA found' >&2\necho 'see mst status' >&2\nexit 3")
    for tool in ("sleep", "cat", "printf"):  # the scripts' own helpers, from the real system
        real = next((Path(d) / tool for d in ("/bin", "/usr/bin") if (Path(d) / tool).exists()), None)
        if real and not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(real)
    return bin_dir


@pytest.fixture
def tools(tmp_path, monkeypatch):
    bin_dir = stand_ins(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def members(bundle: Path) -> dict[str, bytes]:
    with tarfile.open(bundle) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def manifest_of(bundle: Path) -> dict:
    files = members(bundle)
    name = next(n for n in files if n.endswith("/manifest.json"))
    return json.loads(files[name])["k3logs_manifest"]


def commands(manifest: dict) -> dict[str, dict]:
    return {c["id"]: c for c in manifest["commands"]}


def run_cli(*args):
    return CliRunner().invoke(cli, ["collect", *map(str, args)], catch_exceptions=False)


# ------------------------------------------------------------------------------------------------------
# the manifest: ok, hang, failure, absence
# ------------------------------------------------------------------------------------------------------
def test_host_collection_records_every_command(tools, tmp_path):
    out = tmp_path / "a.tar.gz"
    started = time.monotonic()
    result = run_cli("-o", out, "--timeout", "2")
    assert result.exit_code == 0, result.stderr
    assert time.monotonic() - started < 20  # the hanging ibstat was killed, not waited for
    man = manifest_of(out)
    assert man["node"] == "gpu-a01" and man["target"] == "host only" and man["redacted"] is True
    cmds = commands(man)
    assert cmds["nvidia_smi"]["status"] == "ok" and cmds["nvidia_smi"]["exit_status"] == 0
    assert cmds["nvidia_smi"]["argv"] == ["nvidia-smi"] and cmds["nvidia_smi"]["bytes"] > 500
    assert cmds["ibstat"]["status"] == "timed_out" and "timed out after 2 s" in cmds["ibstat"]["reason"]
    assert 1.5 < cmds["ibstat"]["duration_s"] < 3.5  # its sleeping child was killed too: no wait for the pipe
    assert cmds["ibdev2netdev"]["status"] == "failed" and cmds["ibdev2netdev"]["exit_status"] == 3
    assert cmds["ibdev2netdev"]["reason"] == "exit status 3: ibdev2netdev: no HCA found"
    assert cmds["kernel_journal"]["status"] == "skipped"  # dmesg worked
    assert cmds["date"]["status"] == "ok" and cmds["date"]["bytes"] > 20  # run with TZ=UTC and LC_ALL=C
    assert "docker_logs" not in cmds and "launch_cmd" not in cmds  # no container asked for
    assert any(m.startswith("ibstat: timed out") for m in man["not_available"])
    assert "not available (" in result.stderr and "wrote " in result.stderr


def test_dmesg_denied_falls_back_to_journal_and_absent_tool_is_not_found(tools, tmp_path):
    (tools / "dmesg").write_text("#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\n"
                                 "exit 1\n")
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out, "--timeout", "2", "--since", "2h").exit_code == 0
    cmds = commands(manifest_of(out))
    assert cmds["kernel_dmesg"]["status"] == "permission_denied"
    assert cmds["kernel_journal"]["status"] == "not_found"
    assert cmds["kernel_journal"]["reason"] == "journalctl: not found on PATH"
    assert cmds["kernel_journal"]["argv"][-2:] == ["--since", "-7200s"]
    assert "gpu-a01/kernel.log" not in members(out)


def test_journal_stands_in_for_a_denied_dmesg(tools, tmp_path):
    (tools / "dmesg").write_text("#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\n"
                                 "exit 1\n")
    _script(tools, "journalctl", _cat("2026-11-30T06:41:12+0000 gpu-a01 kernel: NVRM: Xid (PCI:0000:18:00): 79, "
                                      "pid=48213, name=python3, GPU has fallen off the bus."))
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out, "--timeout", "2").exit_code == 0
    assert commands(manifest_of(out))["kernel_journal"]["status"] == "ok"
    assert {Path(r.file).name: r.kind for r in sniff_bundle(out)}["kernel.log"] == "kernel"
    report = json.loads(CliRunner().invoke(cli, ["analyze", str(out), "--format", "json"]).stdout)
    assert "Xid" in json.dumps(report["root_cause"])


def test_machine_without_any_tool_still_gives_a_valid_bundle(tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "eth0")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "never-in-a-bundle")
    out = tmp_path / "bare.tar.gz"
    result = run_cli("-o", out)
    assert result.exit_code == 0, result.stderr
    files = members(out)
    node = next(iter(files)).split("/")[0]
    assert set(files) == {f"{node}/manifest.json", f"{node}/env.txt"}
    assert files[f"{node}/env.txt"].decode().splitlines() == ["NCCL_SOCKET_IFNAME=eth0"]
    man = manifest_of(out)
    statuses = {c["status"] for c in man["commands"] if c["id"] != "kernel_journal"}
    assert statuses == {"not_found"}
    assert "nvidia_smi: nvidia-smi: not found on PATH" in man["not_available"]


def test_output_is_cut_at_the_cap(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    stand_ins(bin_dir)
    _script(bin_dir, "lsmod", "while :; do echo 'nvidia 11722752 212'; done")
    monkeypatch.setenv("PATH", str(bin_dir))
    plan = collect_plan.load_plan()
    cmd = next(c for c in plan.commands if c.id == "lsmod")
    run = collect_command.run_command(collect_plan.Run(cmd, ["lsmod"]), 10, dict(os.environ), cap=4096)
    assert run.truncated and len(run.output) == 4096 and run.status == "ok"
    assert "cut at" in run.reason and run.duration_s < 5


def test_a_long_log_keeps_its_end(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    stand_ins(bin_dir)
    _script(bin_dir, "dmesg", "i=0; while [ $i -lt 3000 ]; do echo \"[Mon Nov 30 06:00:00 2026] line $i\"; "
                              "i=$((i+1)); done")
    monkeypatch.setenv("PATH", str(bin_dir))
    cmd = next(c for c in collect_plan.load_plan().commands if c.id == "kernel_dmesg")
    run = collect_command.run_command(collect_plan.Run(cmd, ["dmesg", "-T"]), 20, dict(os.environ), cap=4096)
    lines = run.output.decode().splitlines()
    assert run.truncated and len(run.output) <= 4096 and run.status == "ok"
    assert lines[-1].endswith("line 2999") and lines[0].startswith("[Mon Nov 30")  # whole lines only
    assert "only the last" in run.reason


def test_stopped_container_keeps_inspect_and_says_why_exec_failed(tools, tmp_path):
    real = (tools / "docker").read_text()
    (tools / "docker").write_text(real.replace('  exec)\n', '  exec)\n    echo "Error response from daemon: '
                                  'container 9c1e is not running" >&2; exit 1\n', 1))
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out, "--container", "vllm-k3", "--timeout", "2").exit_code == 0
    man = manifest_of(out)
    cmds = commands(man)
    for cid in ("launch_cmd", "python_versions", "pip_freeze"):
        assert cmds[cid]["status"] == "failed"
        assert cmds[cid]["reason"] == "exit status 1: Error response from daemon: container 9c1e is not running"
    assert "docker-inspect.json: environment limited to the prefixes" in man["changed"]
    files = members(out)
    assert "gpu-a01/launch-cmd.txt" not in files and "gpu-a01/docker-inspect.json" in files


def test_failed_log_command_writes_no_log_file(tools, tmp_path):
    real = (tools / "docker").read_text()
    (tools / "docker").write_text(real.replace('  logs)', '  logs) echo "Error: No such container: vllm-k3" >&2; '
                                  'exit 1 ;;\n  never)', 1))
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out, "--container", "vllm-k3", "--timeout", "2").exit_code == 0
    assert commands(manifest_of(out))["docker_logs"]["reason"] == "exit status 1: Error: No such container: vllm-k3"
    assert "gpu-a01/vllm.log" not in members(out)


# ------------------------------------------------------------------------------------------------------
# what the analyzer sees
# ------------------------------------------------------------------------------------------------------
def test_every_file_gets_the_right_kind(tools, tmp_path):
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out, "--container", "vllm-k3", "--timeout", "2").exit_code == 0
    kinds = {Path(r.file).name: r.kind for r in sniff_bundle(out)}
    assert kinds == {
        "nvidia-smi.txt": "nvidia_smi", "nvidia-smi-q.txt": "nvidia_smi_q", "nvidia-smi-topo.txt": "nvidia_topo",
        "nvidia-smi-gpus.csv": "nvidia_smi_csv", "kernel.log": "kernel", "host.txt": "uptime",
        "lsmod.txt": "lsmod", "vllm.log": "vllm",
        "docker-inspect.json": "docker_inspect", "launch-cmd.txt": "launch_cmd",
        "python-versions.txt": "collect_env", "pip-freeze.txt": "pip_freeze", "env.txt": "env",
        "manifest.json": "manifest"}


def test_infiniband_outputs_are_recognised(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(stand_ins(tmp_path / "bin", hang="", fail="")))
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out).exit_code == 0
    assert {Path(r.file).name: r.kind for r in sniff_bundle(out)}["ibstat.txt"] == "ibstat"
    text = members(out)["gpu-a01/ibstat.txt"].decode()
    assert text.startswith("$ ibstat\nCA 'mlx5_0'") and "$ ibdev2netdev\nmlx5_0 port 1 ==> ibp24s0 (Up)" in text


def test_round_trip_analyze_reports_the_environment(tools, tmp_path):
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out, "--container", "vllm-k3", "--timeout", "2").exit_code == 0
    result = CliRunner().invoke(cli, ["analyze", str(out), "--format", "json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    facts = _facts(report)
    assert facts["driver_version"] == "570.133.20"
    assert facts["cuda_runtime"] == "12.8"
    assert facts["vllm_version"] == "0.11.2"
    assert facts["image"] == IMAGE
    assert facts["prefix_caching"] == "false"
    assert [n["node"] for n in report["nodes"]] == ["gpu-a01"]


def test_round_trip_through_kubectl(tools, tmp_path):
    out = tmp_path / "p.tar.gz"
    assert run_cli("-o", out, "--pod", "llm-prod/k3-serve-0", "--timeout", "2").exit_code == 0
    man = manifest_of(out)
    cmds = commands(man)
    assert cmds["kubectl_logs_previous"]["status"] == "failed" and "previous terminated" in \
        cmds["kubectl_logs_previous"]["reason"]
    assert not any("the pod runs on" in m for m in man["not_available"])  # collected on the pod's node
    assert all(cmds[c]["status"] == "ok" for c in ("kubectl_logs", "kubectl_pod", "launch_cmd", "python_versions",
                                                     "pip_freeze"))
    assert cmds["launch_cmd"]["argv"] == ["kubectl", "exec", "-n", "llm-prod", "k3-serve-0", "--", "cat",
                                          "/proc/1/cmdline"]
    files = members(out)
    assert "gpu-a01/vllm-previous.log" not in files
    assert b"last-applied-configuration" not in files["gpu-a01/pod.json"]
    assert b"secretKeyRef" in files["gpu-a01/pod.json"] and files["gpu-a01/env.txt"] == b"NCCL_DEBUG=INFO\n"
    report = json.loads(CliRunner().invoke(cli, ["analyze", str(out), "--format", "json"]).stdout)
    facts = _facts(report)
    assert (facts["driver_version"], facts["cuda_runtime"], facts["vllm_version"], facts["prefix_caching"]) == \
        ("570.133.20", "12.8", "0.11.2", "false")
    assert facts["image_digest"] == DIGEST
    assert [n["node"] for n in report["nodes"]] == ["gpu-a01"]


def _facts(report: dict) -> dict[str, str]:
    return {name: str(value) for name, value in report["environment"]["facts"].items()}


def test_two_nodes_side_by_side_are_one_incident(tmp_path, monkeypatch):
    nodes = tmp_path / "incident"
    nodes.mkdir()
    for host in ("gpu-a01", "gpu-b07"):
        bin_dir = stand_ins(tmp_path / f"bin-{host}", host, hang="", fail="")
        monkeypatch.setenv("PATH", str(bin_dir))
        assert run_cli("-o", nodes / f"{host}.tar.gz", "--container", "vllm-k3").exit_code == 0
    result = CliRunner().invoke(cli, ["analyze", str(nodes), "--format", "json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stderr
    text = result.stdout
    assert "gpu-a01" in text and "gpu-b07" in text
    report = json.loads(text)
    assert sorted(_node_names(report)) == ["gpu-a01", "gpu-b07"]


def test_two_extracted_bundles_in_one_folder_are_one_incident(tmp_path, monkeypatch):
    both = tmp_path / "extracted"
    both.mkdir()
    for host in ("gpu-a01", "gpu-b07"):
        monkeypatch.setenv("PATH", str(stand_ins(tmp_path / f"bin-{host}", host, hang="", fail="")))
        out = tmp_path / f"{host}.tar.gz"
        assert run_cli("-o", out, "--container", "vllm-k3").exit_code == 0
        with tarfile.open(out) as tar:
            tar.extractall(both, filter="data")
    assert sorted(p.name for p in both.iterdir()) == ["gpu-a01", "gpu-b07"]
    result = CliRunner().invoke(cli, ["analyze", str(both), "--format", "json"], catch_exceptions=False)
    report = json.loads(result.stdout)
    assert sorted(_node_names(report)) == ["gpu-a01", "gpu-b07"]
    kernel = [row for row in report["timeline"] if "Xid" in json.dumps(row)]
    assert kernel and {row.get("node") for row in kernel} == {"gpu-a01", "gpu-b07"}


def test_two_bundles_tarred_together_are_one_incident(tmp_path, monkeypatch):
    for host in ("gpu-a01", "gpu-b07"):
        monkeypatch.setenv("PATH", str(stand_ins(tmp_path / f"bin-{host}", host, hang="", fail="")))
        assert run_cli("-o", tmp_path / f"{host}.tar.gz", "--container", "vllm-k3").exit_code == 0
    with tarfile.open(tmp_path / "incident.tar", "w") as tar:
        for host in ("gpu-a01", "gpu-b07"):
            tar.add(tmp_path / f"{host}.tar.gz", arcname=f"{host}.tar.gz")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "incident.tar"), "--format", "json"],
                                catch_exceptions=False)
    assert sorted(_node_names(json.loads(result.stdout))) == ["gpu-a01", "gpu-b07"]


def _node_names(report: dict) -> list[str]:
    return [n["node"] for n in report["nodes"]]


# ------------------------------------------------------------------------------------------------------
# redaction
# ------------------------------------------------------------------------------------------------------
def test_secrets_never_reach_the_bundle(tools, tmp_path):
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out, "--container", "vllm-k3", "--timeout", "2").exit_code == 0
    blob = b"".join(members(out).values())
    assert HF_TOKEN.encode() not in blob and API_KEY.encode() not in blob
    assert LAUNCH_ARGS[-1].encode() not in blob  # in inspect Args and /proc/1/cmdline
    assert b"SECRET_ONLY_IN_FULL_ENV" not in blob and b"HF_TOKEN=" not in blob  # env cut to the prefixes
    env = members(out)["gpu-a01/env.txt"].decode()
    assert "NCCL_DEBUG=INFO" in env and "VLLM_API_KEY=" in env and "PATH=" not in env


def test_no_redact_keeps_them(tools, tmp_path):
    out = tmp_path / "a.tar.gz"
    assert run_cli("-o", out, "--container", "vllm-k3", "--timeout", "2", "--no-redact").exit_code == 0
    files = members(out)
    assert HF_TOKEN.encode() in files["gpu-a01/vllm.log"]
    assert f"VLLM_API_KEY={API_KEY}".encode() in files["gpu-a01/env.txt"]
    assert LAUNCH_ARGS[-1].encode() in files["gpu-a01/launch-cmd.txt"]
    assert manifest_of(out)["redacted"] is False


def test_the_command_list_is_checked(tmp_path):
    plan = collect_plan.load_plan()
    assert {c.runtime for c in plan.commands} == {"host", "docker", "kubectl", "inside"}
    assert all(c.why and c.timeout > 0 for c in plan.commands)
    bad = tmp_path / "collect.toml"
    bad.write_text((collect_plan.data_dir("patterns") / "collect.toml").read_text()
                   .replace('file = "lsmod.txt"', 'file = "../../etc/lsmod"'))
    with pytest.raises(collect_plan.CatalogueError, match="lsmod"):
        collect_plan.load_plan(bad)


# ------------------------------------------------------------------------------------------------------
# usage and output safety
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, words", [
    (["--pod", "no-slash"], "invalid --pod"),
    (["--pod", "ns/Bad;rm -rf"], "invalid --pod"),
    (["--container", "-it"], "invalid --container"),
    (["--container", "a b"], "invalid --container"),
    (["--container", "x", "--pod", "a/b"], "not both"),
    (["--since", "yesterday"], "invalid --since"),
    (["--timeout", "0"], "--timeout"),
])
def test_bad_usage_is_one_line_and_exit_2(tools, tmp_path, args, words):
    out = tmp_path / "a.tar.gz"
    result = run_cli("-o", out, *args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("k3logs: error: ") and words in lines[0]
    assert list(tmp_path.glob("*.tar.gz*")) == [] and not list(tmp_path.glob(".a.tar.gz*"))


def test_output_rules(tools, tmp_path):
    out = tmp_path / "a.tar.gz"
    out.write_text("keep me")
    result = run_cli("-o", out)
    assert result.exit_code == 2 and "--force" in result.stderr and out.read_text() == "keep me"
    assert run_cli("-o", out, "--force", "--timeout", "2").exit_code == 0 and tarfile.is_tarfile(out)
    result = run_cli("-o", tmp_path / "missing" / "b.tar.gz")
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert run_cli("-o", tmp_path).exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz", "bin"]  # no temporary file left behind


def test_output_where_nobody_can_write(tools):
    result = run_cli("-o", "/proc/k3logs-collect-test.tar.gz")
    assert result.exit_code == 2 and result.stderr.startswith("k3logs: error: cannot write")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_output_folder(tools, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = run_cli("-o", locked / "a.tar.gz")
        assert result.exit_code == 2 and result.stderr.startswith("k3logs: error: cannot write")
    finally:
        locked.chmod(0o700)


def test_pod_commands_use_kubectl_with_validated_names(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "kubectl-calls"
    pod = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "k3-serve-0"},
                      "spec": {"nodeName": "gpu-c03", "containers": [{"name": "vllm", "image": IMAGE, "env": [
                          {"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "HF_TOKEN", "value": HF_TOKEN}]}]}})
    _script(bin_dir, "kubectl", f'echo "$*" >> {log}\n[ "$1" = get ] && echo \'{pod}\'\nexit 0')
    _script(bin_dir, "hostname", "echo jump-host")
    monkeypatch.setenv("PATH", str(bin_dir))
    out = tmp_path / "p.tar.gz"
    assert run_cli("-o", out, "--pod", "llm-prod/k3-serve-0", "--since", "30m").exit_code == 0
    calls = log.read_text().splitlines()
    assert "logs --timestamps -n llm-prod k3-serve-0 --all-containers --since 1800s" in calls
    assert "get pod -n llm-prod k3-serve-0 -o json" in calls
    assert "logs --previous --timestamps -n llm-prod k3-serve-0 --all-containers --since 1800s" in calls
    assert "exec -n llm-prod k3-serve-0 -- cat /proc/1/cmdline" in calls
    man = manifest_of(out)
    assert man["target"] == "pod llm-prod/k3-serve-0"
    assert any("the pod runs on gpu-c03, but they were taken on jump-host" in m for m in man["not_available"])
    files = members(out)
    assert files["jump-host/env.txt"] == b"NCCL_DEBUG=WARN\n" and HF_TOKEN.encode() not in files["jump-host/pod.json"]
    assert {Path(r.file).name: r.kind for r in sniff_bundle(out)}["pod.json"] == "pod_spec"


def test_same_inputs_same_members(tools, tmp_path):
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    for out in (a, b):
        assert run_cli("-o", out, "--container", "vllm-k3", "--timeout", "1").exit_code == 0
    with tarfile.open(a) as ta, tarfile.open(b) as tb:
        assert ta.getnames() == tb.getnames() == sorted(ta.getnames())
        assert {m.name: m.mode for m in ta.getmembers()} == {m.name: 0o644 for m in ta.getmembers()}
