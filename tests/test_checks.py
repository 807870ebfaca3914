"""run_checks / evidence_missing: pass, fail and unknown for every check; the command that ran wins."""
from __future__ import annotations

import re

import pytest

from conftest import analyze_files, text_of
from k3logs.facts.checks import CHECKS, Check, is_k3_deployment, run_checks
from k3logs.facts.evidence import evidence_missing
from k3logs.facts.extract import Fact, facts_from_dump
from k3logs.facts.data import default_facts_data

try:
    from .test_dumps import S
except ImportError:  # tests/ is not a package
    from test_dumps import S

K3 = [Fact("model", "moonshotai/Kimi-K3", "launch.txt", 1, None, "launch_cmd")]


def F(name: str, value: str, source: str = "launch_cmd", node: str | None = None, file: str | None = None,
      line: int = 1) -> Fact:
    return Fact(name, value, file or f"{source}.txt", line, node, source)


def check(cid: str, facts: list[Fact], is_k3: bool | None = None) -> Check:
    return next(c for c in run_checks(facts, is_k3=is_k3) if c.id == cid)


def test_every_check_is_defined_in_facts_toml_and_the_reverse():
    assert set(CHECKS) == set(default_facts_data().checks)


def test_result_shape():
    got = run_checks([])
    assert [c.id for c in got] == list(CHECKS)
    for c in got:
        assert c.status in ("pass", "fail", "unknown") and c.detail
        assert c.status == "unknown" and c.category is None and c.remediation == () and c.evidence is None


def test_k3_detection():
    assert is_k3_deployment(K3)
    assert is_k3_deployment([F("model_architecture", "KimiK3ForCausalLM", "model_config")])
    assert not is_k3_deployment([F("model", "moonshotai/Kimi-K2-Instruct")])
    for cid in ("image_is_k3", "vllm_version_min", "gpu_model_count", "prefix_caching_flag"):
        c = check(cid, [F("model", "meta-llama/Llama-3.1-8B"), F("image", "vllm/vllm-openai:v0.11.0")])
        assert (c.status, c.detail) == ("unknown", "not a K3 deployment")


# ------------------------------------------------------------------------------------------
# the chain
# ------------------------------------------------------------------------------------------
def test_driver_too_old_for_cuda13_image():
    facts = K3 + [F("image", "vllm/vllm-openai:kimi-k3", "k8s_describe", line=20),
                  F("driver_version", "570.172.08", "nvidia_smi", "n1", "smi.txt", 3),
                  F("driver_branch", "570", "nvidia_smi", "n1", "smi.txt", 3)]
    c = check("driver_branch_vs_cuda", facts)
    assert c.status == "fail" and c.evidence == "smi.txt:3" and c.category == "env.driver_too_old"
    assert "570.172.08" in c.detail and "r580" in c.detail and "CUDA 13" in c.detail
    assert any("r580" in r for r in c.remediation)


def test_driver_fail_on_one_node_of_two_and_pass():
    base = [F("torch_cuda_build", "cu130", "collect_env")]
    c = check("driver_branch_vs_cuda", base + [F("driver_branch", "580", "nvidia_smi", "a", "a.txt"),
                                               F("driver_branch", "575", "nvidia_smi", "b", "b.txt", 3)])
    assert c.status == "fail" and c.evidence == "b.txt:3"
    c = check("driver_branch_vs_cuda", base + [F("driver_branch", "580", "nvidia_smi", "a", "a.txt", 3)])
    assert c.status == "pass" and c.evidence == "a.txt:3"


def test_driver_cuda_only_from_nccl_log():
    c = check("driver_branch_vs_cuda", [F("driver_cuda", "12.8", "log", line=7), F("nccl_cuda", "13.0", "log")])
    assert c.status == "fail" and c.evidence == "log.txt:7"


def test_driver_unknown_without_evidence():
    assert check("driver_branch_vs_cuda", []).status == "unknown"
    c = check("driver_branch_vs_cuda", [F("driver_branch", "550", "nvidia_smi")])
    assert c.status == "unknown" and "runtime is unknown" in c.detail
    assert check("driver_branch_vs_cuda", [F("cuda_runtime", "12.4", "collect_env")]).status == "unknown"


def test_image_is_k3():
    assert check("image_is_k3", K3 + [F("image", "docker.io/vllm/vllm-openai:kimi-k3")]).status == "pass"
    c = check("image_is_k3", K3 + [F("image", "vllm/vllm-openai:v0.14.1", line=3)])
    assert c.status == "fail" and c.evidence == "launch_cmd.txt:3" and c.category == "dep.unsupported_arch"
    # the container that ran beats the launch file
    c = check("image_is_k3", K3 + [F("image", "vllm/vllm-openai:v0.14.1"),
                                   F("image", "vllm/vllm-openai:kimi-k3", "docker_inspect")])
    assert c.status == "pass" and c.evidence.startswith("docker_inspect.txt")
    assert check("image_is_k3", K3).status == "unknown"


@pytest.mark.parametrize("version,status", [("0.26.0", "fail"), ("0.27.0rc2.dev5+gabc", "fail"),
                                            ("0.27.0", "pass"), ("0.28.1", "pass"), ("main", "unknown")])
def test_vllm_version_min(version, status):
    assert check("vllm_version_min", K3 + [F("vllm_version", version, "log")]).status == status


def test_vllm_version_prefers_what_ran():
    c = check("vllm_version_min", K3 + [F("vllm_version", "0.27.1", "pip_freeze"), F("vllm_version", "0.14.1", "log")])
    assert c.status == "fail" and "0.14.1" in c.detail


def test_torch_cuda_build():
    c = check("torch_cuda_build", K3 + [F("torch_cuda_build", "cu129", "pip_freeze", line=40)])
    assert c.status == "fail" and c.evidence == "pip_freeze.txt:40" and c.category == "dep.undefined_symbol"
    assert check("torch_cuda_build", K3 + [F("torch_cuda_build", "cu130", "collect_env")]).status == "pass"
    # not K3: compared with the image's own CUDA
    assert check("torch_cuda_build", [F("torch_cuda_build", "cu128"), F("env:CUDA_VERSION", "12.8.1")]).status == "pass"
    assert check("torch_cuda_build", [F("torch_cuda_build", "cu128"), F("env:CUDA_VERSION", "13.0.1")]).status == "fail"
    assert check("torch_cuda_build", [F("torch_cuda_build", "cu128")]).status == "unknown"
    assert check("torch_cuda_build", K3).status == "unknown"


def test_pip_mixed_cuda():
    got = facts_from_dump("pip_freeze", "pip.txt", S.PIP_FREEZE_MIXED, None)
    c = check("pip_mixed_cuda", got)
    assert c.status == "fail" and c.evidence == "pip.txt:6" and "12 and 13" in c.detail
    assert check("pip_mixed_cuda", facts_from_dump("pip_freeze", "p", S.PIP_LIST, None)).status == "pass"
    assert check("pip_mixed_cuda", []).status == "unknown"


def test_no_remediation_advises_mixing():
    for defn in default_facts_data().checks.values():
        for text in defn.remediation:
            if re.search(r"\bmix", text, re.I):
                assert re.search(r"\b(never|not|rather than|instead)\b", text, re.I), text
            assert not re.search(r"pip install\S* .*cu12", text), text


# ------------------------------------------------------------------------------------------
# hardware and flags
# ------------------------------------------------------------------------------------------
def test_gpu_model_count():
    c = check("gpu_model_count", K3 + [F("gpu_count", "4", "nvidia_smi", line=9), F("gpu_model", "NVIDIA GB300", "nvidia_smi")])
    assert c.status == "fail" and c.evidence == "nvidia_smi.txt:9"
    c = check("gpu_model_count", K3 + [F("gpu_count", "8", "nvidia_smi"), F("gpu_model", "NVIDIA GB300", "nvidia_smi")])
    assert c.status == "pass" and "not GB300" not in c.detail
    c = check("gpu_model_count", K3 + [F("gpu_count", "8", "nvidia_smi"), F("gpu_model", "NVIDIA H200", "nvidia_smi")])
    assert c.status == "pass" and "may need more" in c.detail
    c = check("gpu_model_count", K3 + [F("gpu_count", "8", "nvidia_smi"), F("tensor_parallel_size", "4", "log", line=3)])
    assert c.status == "fail" and c.evidence == "log.txt:3"
    two_nodes = [F("gpu_count", "4", "nvidia_smi", "a"), F("gpu_count", "4", "nvidia_smi", "b")]
    assert check("gpu_model_count", K3 + two_nodes).status == "pass"
    assert check("gpu_model_count", K3).status == "unknown"


def test_prefix_caching_flag():
    assert check("prefix_caching_flag", K3 + [F("prefix_caching", "true", "log")]).status == "pass"
    c = check("prefix_caching_flag", K3 + [F("launch_command", "vllm serve moonshotai/Kimi-K3", "docker_inspect", line=5)])
    assert c.status == "fail" and c.evidence == "docker_inspect.txt:5" and c.category == "config.prefix_caching_off"
    # the template has the flag, the container that ran does not
    c = check("prefix_caching_flag", K3 + [F("launch_command", "vllm serve x --enable-prefix-caching", "pod_spec"),
                                           F("prefix_caching", "true", "pod_spec"),
                                           F("launch_command", "vllm serve x", "docker_inspect")])
    assert c.status == "fail" and c.evidence.startswith("docker_inspect")
    c = check("prefix_caching_flag", K3 + [F("prefix_caching", "false", "log"), F("prefix_caching", "true", "launch_cmd")])
    assert c.status == "fail"
    assert check("prefix_caching_flag", K3).status == "unknown"


def test_prefix_caching_off_is_shown_at_the_first_line_of_the_log_that_says_so():
    """vLLM's start-up warning that it disabled prefix caching comes before the engine config line."""
    config = F("prefix_caching", "false", "log", file="vllm.log", line=12)
    warning = F("prefix_caching", "false", "log", file="vllm.log", line=7)
    c = check("prefix_caching_flag", K3 + [config, warning])
    assert c.status == "fail" and c.evidence == "vllm.log:7"
    # near miss: on in what ran, whatever line says so first
    c = check("prefix_caching_flag", K3 + [F("prefix_caching", "true", "log", file="vllm.log", line=12)])
    assert c.status == "pass"


def test_all2all_backend_vs_interconnect():
    ep = [F("expert_parallel", "true", "log"), F("gpu_count", "8", "nvidia_smi")]
    inter = ep + [F("tensor_parallel_size", "8", "log"), F("data_parallel_size", "2", "log"),
                  F("interconnect", "rdma", "ibstat")]
    c = check("all2all_backend_vs_interconnect", inter + [F("all2all_backend", "flashinfer_nvlink_one_sided", "log", line=3)])
    assert c.status == "fail" and c.evidence == "log.txt:3" and "deepep_v2" in c.detail
    # the wrong backend fails where it first moves tokens: errors no signature knows, collectives never completed
    assert {"other", "nccl.timeout"} <= set(c.explains)
    assert check("all2all_backend_vs_interconnect", inter + [F("all2all_backend", "deepep_v2", "log")]).status == "pass"
    intra = ep + [F("tensor_parallel_size", "8", "log"), F("nvlink", "true", "nvidia_topo")]
    assert check("all2all_backend_vs_interconnect", intra + [F("all2all_backend", "flashinfer_nvlink_one_sided", "log")]).status == "pass"
    c = check("all2all_backend_vs_interconnect", intra + [F("all2all_backend", "deepep_v2", "log")])
    assert c.status == "fail" and "flashinfer_nvlink_one_sided" in c.detail
    # the group spans nodes of one multi-node NVLink domain (NCCL: MNNVL 1): NVLink, not RDMA
    trays = [F("expert_parallel", "true", "log"), F("gpu_count", "4", "nvidia_smi", "a"),
             F("gpu_count", "4", "nvidia_smi", "b"), F("tensor_parallel_size", "8", "log")]
    mnnvl = trays + [F("mnnvl", "true", "log")]
    assert check("all2all_backend_vs_interconnect", mnnvl + [F("all2all_backend", "flashinfer_nvlink_one_sided", "log")]).status == "pass"
    c = check("all2all_backend_vs_interconnect", mnnvl + [F("all2all_backend", "deepep_v2", "log")])
    assert c.status == "fail" and "MNNVL" in c.detail
    c = check("all2all_backend_vs_interconnect", trays + [F("interconnect", "rdma", "ibstat"),
                                                          F("all2all_backend", "flashinfer_nvlink_one_sided", "log")])
    assert c.status == "fail" and "deepep_v2" in c.detail  # (near miss: nodes joined by RDMA, no NVLink domain)
    # neither a shared NVLink domain nor RDMA shown between the nodes: the fabric the group crosses is not known
    c = check("all2all_backend_vs_interconnect", trays + [F("all2all_backend", "flashinfer_nvlink_one_sided", "log")])
    assert c.status == "unknown"
    # two nodes, pipeline across them, no nvidia-smi: the group still fits in one node
    pp = [F("expert_parallel", "true", "log"), F("tensor_parallel_size", "8", "log"),
          F("pipeline_parallel_size", "2", "log"), F("nnodes", "2", "log"), F("interconnect", "rdma", "log")]
    assert check("all2all_backend_vs_interconnect", pp + [F("all2all_backend", "flashinfer_nvlink_one_sided", "log")]).status == "pass"
    # ... and the stages on nodes joined by RDMA: the deployment's fabric's backend fits too (near miss: the same
    # group on one node, above, where deepep_v2 fails)
    assert check("all2all_backend_vs_interconnect", pp + [F("all2all_backend", "deepep_v2", "log")]).status == "pass"
    assert check("all2all_backend_vs_interconnect", ep).status == "unknown"
    # no count of GPUs per node, nodes joined by RDMA (a Ray cluster): vLLM's own word that its group is inside a node
    ray = [F("expert_parallel", "true", "log"), F("tensor_parallel_size", "8", "log"),
           F("pipeline_parallel_size", "4", "log"), F("interconnect", "rdma", "log")]
    nvlink = F("all2all_backend", "flashinfer_nvlink_one_sided", "log")
    assert check("all2all_backend_vs_interconnect", ray + [nvlink, F("ep_span", "intra", "log")]).status == "pass"
    assert check("all2all_backend_vs_interconnect", ray + [nvlink]).status == "fail"   # (near miss: it says nothing)
    c = check("all2all_backend_vs_interconnect", [F("all2all_backend", "deepep_v2"), F("launch_command", "vllm serve m")])
    assert c.status == "unknown" and "expert" in c.detail


# ------------------------------------------------------------------------------------------
# communication and shared memory
# ------------------------------------------------------------------------------------------
def test_ucx_tls_with_rdma():
    rdma = [F("interconnect", "rdma", "env")]
    assert check("ucx_tls_with_rdma", rdma + [F("ucx_tls", "rc,cuda_copy", "env")]).status == "pass"
    assert check("ucx_tls_with_rdma", rdma + [F("ucx_tls", "rc,cuda_copy,cuda_ipc", "env")]).status == "pass"
    c = check("ucx_tls_with_rdma", rdma + [F("ucx_tls", "tcp,cuda_copy", "env", line=4)])
    assert c.status == "fail" and c.evidence == "env.txt:4"
    c = check("ucx_tls_with_rdma", rdma + [F("kv_transfer", "NixlConnector", "launch_cmd"), F("env:NCCL_DEBUG", "INFO", "env")])
    assert c.status == "fail"
    assert check("ucx_tls_with_rdma", rdma).status == "unknown"
    assert check("ucx_tls_with_rdma", [F("ucx_tls", "tcp", "env")]).status == "unknown"


def test_nccl_dmabuf_advice():
    dm = [F("nccl_dmabuf_enable", "0", "env")]
    both = [F("nvidia_peermem_loaded", "true", "lsmod", "a"), F("nvidia_peermem_loaded", "true", "lsmod", "b")]
    assert check("nccl_dmabuf_advice", dm + both).status == "pass"
    one_missing = [F("nvidia_peermem_loaded", "true", "lsmod", "a"),
                   F("nvidia_peermem_loaded", "false", "lsmod", "b", "b/lsmod.txt", 1)]
    c = check("nccl_dmabuf_advice", dm + one_missing)
    assert c.status == "fail" and c.evidence == "b/lsmod.txt:1" and c.category == "nccl.dmabuf_524"
    assert "load nvidia_peermem first" in c.detail and " b " in c.detail + " "
    # errno 524 seen in the logs: the advice would be NCCL_DMABUF_ENABLE=0, so the same rule applies
    assert check("nccl_dmabuf_advice", [F("nccl_dmabuf_524", "true", "log")] + one_missing).status == "fail"
    c = check("nccl_dmabuf_advice", dm)
    assert c.status == "unknown" and "lsmod" in c.detail
    assert check("nccl_dmabuf_advice", both).status == "unknown"


def test_shm_size():
    got = facts_from_dump("docker_inspect", "inspect.json", S.DOCKER_INSPECT, None)
    c = check("shm_size", got)
    assert c.status == "fail" and c.evidence == "inspect.json:23" and c.category == "nccl.shm"
    assert check("shm_size", [F("shm_size", "67108864", "docker_inspect"), F("ipc_mode", "host", "docker_inspect")]).status == "pass"
    assert check("shm_size", [F("shm_size", str(64 * 2**30), "docker_inspect")]).status == "pass"
    assert check("shm_size", [F("shm_size", "unlimited", "k8s_describe")]).status == "pass"
    c = check("shm_size", [F("launch_command", "docker run -d --gpus all vllm/vllm-openai:v0.9.0 --model m")])
    assert c.status == "fail" and "64 MiB" in c.detail
    assert check("shm_size", []).status == "unknown"


# ------------------------------------------------------------------------------------------
# whole-bundle style: facts from several dumps, then checks
# ------------------------------------------------------------------------------------------
def test_checks_over_dump_facts():
    facts = (facts_from_dump("nvidia_smi", "n1/smi.txt", S.SMI_WIDE, "n1")
             + facts_from_dump("docker_inspect", "n1/inspect.json", S.DOCKER_INSPECT, "n1")
             + facts_from_dump("collect_env", "n1/env.txt", S.COLLECT_ENV_SECTIONED, "n1"))
    got = {c.id: c for c in run_checks(facts)}
    assert got["driver_branch_vs_cuda"].status == "pass"
    assert got["image_is_k3"].status == "pass"
    assert got["vllm_version_min"].status == "pass"
    assert got["torch_cuda_build"].status == "pass"
    assert got["prefix_caching_flag"].status == "fail"  # docker Args lack --enable-prefix-caching
    assert got["gpu_model_count"].status == "pass"  # TP 8 ran; the one nvidia-smi shows 2 of them
    assert "show 2 of them" in got["gpu_model_count"].detail
    assert got["shm_size"].status == "fail"


def test_checks_over_a_compose_deployment():
    # a Compose service's shm_size, without host IPC: 64 MiB is too small for NCCL (16 GiB, or host IPC, is not)
    small = S.COMPOSE.replace("  ipc: host\n", "").replace("shm_size: 16gb", "shm_size: 64m")
    got = {c.id: c for c in run_checks(facts_from_dump("compose", "compose.yaml", small, "n1"))}
    assert got["shm_size"].status == "fail" and got["shm_size"].evidence == "compose.yaml:6"
    assert "64 MiB" in got["shm_size"].detail and got["shm_size"].category == "nccl.shm"
    assert {c.id: c.status for c in run_checks(facts_from_dump("compose", "compose.yaml", S.COMPOSE, "n1"))
            }["shm_size"] == "pass"


# ------------------------------------------------------------------------------------------
# the same build on every node (taxonomy v2: nccl.version_mismatch)
# ------------------------------------------------------------------------------------------
VERSIONS = "runtime_versions_across_nodes"


def test_versions_across_nodes_differ_the_odd_node_out_is_the_evidence():
    # three nodes print their NCCL banner; one differs: the failure points at its line, not at the majority's
    facts = [F("nccl_version", "2.26.2", "log", "n1", "n1/vllm.log", 40), F("nccl_version", "2.26.2", "log", "n2", "n2/vllm.log", 41),
             F("nccl_version", "2.27.3", "log", "n3", "n3/vllm.log", 39)]
    c = check(VERSIONS, facts)
    assert c.status == "fail" and c.category == "nccl.version_mismatch" and c.evidence == "n3/vllm.log:39"
    assert "2.27.3" in c.detail and "2.26.2" in c.detail and "n3" in c.detail
    assert "other" in c.explains and "nccl.system_error" in c.explains and c.remediation


def test_versions_across_nodes_two_nodes_tie_the_first_shown_is_the_reference():
    # one node each: the build the bundle shows first (the leader's log) is the reference
    facts = [F("nccl_version", "2.27.3", "log", "worker", "logs/leader.log", 80),
             F("nccl_version", "2.26.2", "log", "leader", "logs/leader.log", 77)]
    c = check(VERSIONS, facts)
    assert c.status == "fail" and c.evidence == "logs/leader.log:80"


@pytest.mark.parametrize("head, odd", [("leader", "job.out:3"),   # the head's build is the deployment's
                                        (None, "job.out:4")])    # near miss: no head known: the first shown is
def test_versions_across_nodes_two_nodes_tie_the_head_s_build_is_the_reference(head, odd):
    """A worker's echo of its stale build comes first in the job's output; the head (rank 0's node) runs the build
    the deployment was started with: the worker is the odd one out."""
    facts = [F("nccl_version", "2.27.3", "log", "worker", "job.out", 3),
             F("nccl_version", "2.27.7", "log", "leader", "job.out", 4)]
    facts += [F("head_node", head, "log", head, "job.out", 9)] if head else []
    assert check(VERSIONS, facts).evidence == odd


@pytest.mark.parametrize("b_rank, head", [(1, ["node-a"]),   # one world: rank 0 runs on node-a
                                           (0, [])])        # near miss: two instances, a rank 0 each: no head
def test_the_head_is_the_node_of_rank_0_where_one_node_holds_one(tmp_path, b_rank, head):
    def log(rank: int) -> str:
        return text_of(f"(Worker pid={100 + rank}) INFO 08-11 10:00:00 [parallel_state.py:1] rank {rank} in world size "
                       f"2 is assigned as DP rank 0, PP rank {rank}, TP rank 0, EP rank 0")
    a = analyze_files(tmp_path, {"node-a/vllm.log": log(0), "node-b/vllm.log": log(b_rank)})
    assert [f.value for f in a.facts if f.name == "head_node"] == head


@pytest.mark.parametrize("pip, odd", [("pip_freeze", "job.out:4"),   # what ran first sets the reference, whatever
                                       ("log", "job.out:3")])   # near miss: all logs: the first file sorted
def test_versions_across_nodes_two_nodes_tie_what_ran_first_is_the_reference_not_a_folder_name(pip, odd):
    # the job's log shows the head's build first; the odd node's folder sorts before the head's
    facts = [F("nccl_version", "2.26.2", "log", "z-head", "job.out", 3),
             F("nccl_version", "2.27.3", "log", "a-node", "job.out", 4),
             F("nccl_version", "2.27.3", pip, "a-node", "a-node/pip.txt", 68),
             F("nccl_version", "2.26.2", pip, "z-head", "z-head/pip.txt", 68)]
    assert check(VERSIONS, facts).evidence == odd


def test_versions_across_nodes_the_images_pods_run_are_compared_with_each_other():
    # a pod listing's image column: two nodes' pods on different vLLM releases; the check names the odd one's node
    facts = [F("vllm_version", "0.27.1", "pod_table", "h200-b-05", "kubectl-get.txt", 9),
             F("vllm_version", "0.26.2", "pod_table", "h200-a-01", "kubectl-get.txt", 10)]
    c = check(VERSIONS, facts)
    assert c.status == "fail" and c.evidence == "kubectl-get.txt:10" and c.node == "h200-a-01"
    # near miss: an image's release is not compared with a log's banner of another node
    facts = [F("vllm_version", "0.27.1", "log", "h200-b-05", "decode.log", 2),
             F("vllm_version", "0.26.2", "pod_table", "h200-a-01", "kubectl-get.txt", 10)]
    assert check(VERSIONS, facts).status != "fail"


def test_versions_across_nodes_ranks_of_one_log_with_no_node():
    # srun-style output: no node names, the ranks of one job write one file; a package list names the
    # deployment's build, so the other one is the odd one out
    facts = [F("nccl_version", "2.26.5", "log", None, "slurm.out", 119), F("nccl_version", "2.26.2", "log", None, "slurm.out", 120),
             F("nccl_version", "2.26.2", "pip_freeze", None, "requirements.lock", 2)]
    c = check(VERSIONS, facts)
    assert c.status == "fail" and c.evidence == "slurm.out:119"


def test_versions_across_nodes_torch_and_vllm_builds_too():
    facts = [F("torch_version", "2.7.1+cu128", "collect_env", "n1", "n1/env.txt", 5),
             F("torch_version", "2.7.1+cu126", "collect_env", "n2", "n2/env.txt", 5),
             F("nccl_version", "2.26.2", "log", "n1"), F("nccl_version", "2.26.2", "log", "n2")]
    c = check(VERSIONS, facts)
    assert c.status == "fail" and "torch" in c.detail and c.evidence in ("n1/env.txt:5", "n2/env.txt:5")
    # a local build suffix is not another vLLM release
    same = [F("vllm_version", "0.27.1+cu130", "pip_freeze", "n1"), F("vllm_version", "0.27.1", "pip_freeze", "n2")]
    assert check(VERSIONS, same).status == "pass"


def test_versions_across_nodes_near_misses_pass_or_stay_unknown():
    # every node the same
    same = [F("nccl_version", "2.26.2", "log", "n1", "a.log", 3), F("nccl_version", "2.26.2", "log", "n2", "b.log", 3)]
    c = check(VERSIONS, same)
    assert c.status == "pass" and "2.26.2" in c.detail and c.category is None and c.explains == ()
    # one node upgraded between two starts: its history, not two nodes that differ
    history = [F("nccl_version", "2.26.2", "log", "n1", "a.log", 3), F("nccl_version", "2.27.3", "log", "n1", "a.log", 900),
               F("nccl_version", "2.27.3", "log", "n2", "b.log", 5)]
    # a library's banner and pip's package version are not compared with each other
    sources = [F("nccl_version", "2.21.5", "log", "n1", "a.log", 3), F("nccl_version", "2.26.2", "pip_freeze", "n2", "pip.txt", 4)]
    # two logs of unknown nodes (two deployments side by side, an old and a new container) are not compared
    two_runs = [F("vllm_version", "0.5.5", "log", None, "old.log", 2), F("vllm_version", "0.6.3", "log", None, "new.log", 2)]
    for facts in (history, sources, two_runs):
        c = check(VERSIONS, facts)
        assert c.status == "unknown" and c.category is None and "not on two nodes" in c.detail
    # one witness only
    c = check(VERSIONS, [F("nccl_version", "2.26.2", "log", "n1")])
    assert c.status == "unknown" and c.evidence is None


# ------------------------------------------------------------------------------------------
# evidence list
# ------------------------------------------------------------------------------------------
ALL_TITLES = ["launch command", "image tag and digest", "vLLM version", "full nvidia-smi output",
              "CUDA runtime (torch.version.cuda)", "the first exception with its whole stack", "node names",
              "GPU topology (nvidia-smi topo -m)",
              "communication environment variables (NCCL_*, UCX_*, CUDA_VISIBLE_DEVICES)"]


def test_evidence_missing_everything():
    assert evidence_missing([], set(), False) == ALL_TITLES


def test_evidence_missing_nothing():
    facts = [F("launch_command", "vllm serve m"), F("image", "i"), F("image_digest", "sha256:" + "0" * 64),
             F("vllm_version", "0.27.1", "log"), F("cuda_runtime", "13.0", "collect_env"),
             F("driver_version", "580.95.05", "nvidia_smi", node="n1"), F("env:NCCL_DEBUG", "INFO", "env")]
    assert evidence_missing(facts, {"nvidia_smi", "nvidia_topo"}, True) == []


def test_evidence_missing_partial():
    facts = [F("image", "i"), F("cuda_visible_devices", "0,1", "env")]
    got = evidence_missing(facts, {"nvidia_smi_q"}, True)
    assert "image tag and digest" in got and "full nvidia-smi output" not in got
    assert "communication environment variables (NCCL_*, UCX_*, CUDA_VISIBLE_DEVICES)" not in got
    assert "the first exception with its whole stack" not in got


IFACE = "nccl_interface_across_nodes"


def test_nccl_on_a_host_local_interface_in_a_run_across_nodes_fails_at_its_first_line():
    # one node's ranks bootstrap over its docker bridge; the other node's over its bond: the bridge's line is the cause
    facts = [F("nccl_bootstrap", "bond0:10.30.8.31", "log", "n1", "n1/journal.txt", 19),
             F("nccl_bootstrap", "docker0:172.17.0.1", "log", "n2", "n2/journal.txt", 28),
             F("nccl_bootstrap", "docker0:172.17.0.1", "log", "n2", "n2/journal.txt", 14)]
    c = check(IFACE, facts)
    assert c.status == "fail" and c.category == "nccl.bootstrap" and c.evidence == "n2/journal.txt:14"
    assert "docker0" in c.detail and "n2" in c.detail and "nccl.bootstrap" in c.explains and c.remediation
    lo = [F("nccl_bootstrap", "lo : 127.0.0.1", "log", "n1", "a.log", 3), F("nnodes", "2")]
    assert check(IFACE, lo).status == "fail"


@pytest.mark.parametrize("second, status", [("enxb03af2b6059f:169.254.3.1", "fail"),   # both nodes use one address
                                            ("enxb03af2b6059f:169.254.7.9", "pass")])  # near miss: each its own
def test_nccl_on_one_address_several_nodes_advertise_fails(second, status):
    facts = [F("nccl_bootstrap", "enxb03af2b6059f:169.254.3.1", "log", "n1", "a.log", 24),
             F("nccl_bootstrap", second, "log", "n2", "b.log", 12)]
    c = check(IFACE, facts)
    assert c.status == status and (status == "pass" or "several nodes" in c.detail)


@pytest.mark.parametrize("c04_bond, status", [("bond0=10.60.7.4/24", "fail"),
                                               # near miss: no interface of its own on the others' network (a
                                               # routed fabric: each node bootstraps on its own subnet)
                                               ("bond0=10.60.9.4/24", "pass")])
def test_nccl_on_an_address_off_the_network_the_other_nodes_bootstrap_on_fails(c04_bond, status):
    """c04's NCCL_SOCKET_IFNAME names its management port: its bootstrap address is on no network c03 has an
    interface on, though c04 has one on the network c03 bootstraps on (`ip -br addr` of both)."""
    facts = [F("nccl_bootstrap", "bond0:10.60.7.3", "log", "c03", "c03/journal.txt", 52),
             F("nccl_bootstrap", "enP5p9s0:172.28.14.22", "log", "c04", "c04/journal.txt", 50),
             F("ip", "enP5p9s0=172.28.7.3/24", "ip_addr", "c03", "c03/ip.txt", 3),
             F("ip", "bond0=10.60.7.3/24", "ip_addr", "c03", "c03/ip.txt", 6),
             F("ip", "enP5p9s0=172.28.14.22/24", "ip_addr", "c04", "c04/ip.txt", 3),
             F("ip", c04_bond, "ip_addr", "c04", "c04/ip.txt", 6)]
    c = check(IFACE, facts)
    assert c.status == status
    if status == "fail":
        assert c.evidence == "c04/journal.txt:50" and "off their network" in c.detail and "c04" in c.detail
    # near miss: without the nodes' addresses nothing says which networks they are on
    assert check(IFACE, facts[:2]).status == "pass"


def test_nccl_interface_near_misses_one_node_on_a_bridge_and_nodes_on_routed_interfaces():
    # a run on one host reaches its own ranks over any interface, its docker bridge too
    one = [F("nccl_bootstrap", "docker0:172.17.0.1", "log", "n1", "a.log", 3),
           F("nccl_bootstrap", "docker0:172.17.0.1", "log", "n1", "a.log", 9)]
    assert check(IFACE, one).status == "unknown"
    # nodes on their routed interfaces (a name that merely starts like a bridge's is not one: 'lom1')
    routed = [F("nccl_bootstrap", "bond0:10.30.8.31", "log", "n1", "a.log", 3),
              F("nccl_bootstrap", "lom1:10.30.8.32", "log", "n2", "b.log", 3)]
    c = check(IFACE, routed)
    assert c.status == "pass" and c.category is None and "bond0" in c.detail
    assert check(IFACE, []).status == "unknown"


@pytest.mark.parametrize("phase, explained", [("model_load", True),   # the wrong backend fails at its first all-to-all
                                              ("serving", False)])    # near miss: the deployment served with it
def test_a_check_whose_fault_shows_before_ready_explains_no_failure_of_a_deployment_that_served(phase, explained):
    import polars as pl
    from k3logs.catalogue.load import load_catalogue
    from k3logs.diagnose.findings import Decision, Finding
    from k3logs.diagnose.quiet import check_explains
    from k3logs.facts.checks import Check
    root = Finding(eid=3, sig=None, category="other", role="cause", priority=0, file="vllm.log", line=9, span=(9, 9),
                   ts=None, ts_quality="none", node="gpu-a", rank=2, pid=None, phase=phase, text="RuntimeError: x")
    wrong = Check("all2all_backend_vs_interconnect", "fail", "vllm.log:3", "nvlink backend over rdma",
                  "config.all2all_backend", ("use deepep_v2",), ("other",), None, True)
    ev = pl.DataFrame({"file": ["vllm.log"], "line": [3], "text": ["non-default args: {...}"], "ts": [None],
                       "ts_quality": ["none"], "node": ["gpu-a"], "rank": [None], "pid": [None], "phase": ["startup"]})
    got = check_explains(Decision(False, root, "low", "", [root]), [wrong], ev, {}, load_catalogue())
    assert (got.root.category == "config.all2all_backend") == explained


NETWORK = "nccl_network_across_nodes"


@pytest.mark.parametrize("worker, status, evidence", [
    (["Socket", "Socket"], "fail", "b/vllm.log:46"),   # the node that found no RDMA device fell back to sockets
    (["IB"], "pass", "a/vllm.log:54"),                   # near miss: every node on RDMA
])
def test_a_node_whose_nccl_fell_back_to_sockets_while_its_peers_use_rdma_is_the_odd_one_out(worker, status, evidence):
    facts = [F("nccl_network", "IB", "log", "node-a", "a/vllm.log", 54)]
    facts += [F("nccl_network", net, "log", "node-b", "b/vllm.log", 46 + 5 * i) for i, net in enumerate(worker)]
    c = check(NETWORK, facts)
    assert (c.status, c.evidence) == (status, evidence)
    if status == "fail":
        assert c.category == "nccl.ib_transport" and "node-b" in c.detail and "other" in c.explains


def test_near_miss_one_node_s_network_says_nothing_across_nodes():
    assert check(NETWORK, [F("nccl_network", "Socket", "log", "node-b", "b/vllm.log", 46)]).status == "unknown"
