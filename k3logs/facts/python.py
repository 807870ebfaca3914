"""Facts from the Python side of the container: pip freeze / pip list, collect_env output, HF config.json."""
from __future__ import annotations

import json
import re

from .util import FACTS, Sink, cuda_major, emit_env, torch_build

# packages whose own version is the CUDA version (nvidia-cublas 12.x for CUDA 12, 13.x for CUDA 13)
_CUDA_VERSIONED = ("nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "nvidia-cuda-cupti", "nvidia-nvjitlink",
                   "nvidia-cublas", "nvidia-cuda-nvcc")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503: -, _ and . are one


def _cuda_major_of_package(name: str, ver: str) -> int | None:
    n = _norm(name)
    m = FACTS["package_cu_suffix"].search(n) or FACTS["package_cuda_suffix"].search(n)
    if m:
        d = m.group(1)
        return int(d[:2]) if len(d) == 3 else int(d)
    if torch_build(ver):
        return cuda_major(torch_build(ver))
    if n in _CUDA_VERSIONED:
        major = cuda_major(ver)
        return major if major and 10 <= major <= 20 else None
    return None


def packages(lines: list[str], base: int) -> list[tuple[str, str, int]]:
    """(normalised name, version, line number) for each package line."""
    out = []
    pin, row, editable = FACTS["pip_freeze_pin"], FACTS["pip_list_row"], FACTS["pip_editable"]
    for i, ln in enumerate(lines):
        s = ln.strip()
        m = pin.match(s) or (row.match(s) if not s.startswith(("-", "Package ")) else None)
        if m:
            out.append((_norm(m.group("name")), m.group("ver"), base + i + 1))
            continue
        m = editable.match(s)
        if m:
            out.append((_norm(m.group("name")), "editable", base + i + 1))
    return out


def package_facts(sink: Sink, pkgs: list[tuple[str, str, int]], skip: set[str] = frozenset()) -> None:
    majors: list[tuple[int, str, int]] = []
    nccl = FACTS["nccl_package"]
    for name, ver, no in pkgs:
        if name == "torch" and "torch_version" not in skip:
            sink.add("torch_version", ver, no)
            sink.add("torch_cuda_build", torch_build(ver), no)
        elif name == "vllm" and ver != "editable" and "vllm_version" not in skip:
            sink.add("vllm_version", ver, no)
        elif nccl.fullmatch(name):
            if name.startswith("nvidia"):
                sink.add("nccl_version", ver, no)
        elif name.startswith("nvidia-cuda-runtime") and "cuda_runtime" not in skip:
            m = re.match(r"(\d+\.\d+)", ver)  # major.minor of the version
            if m:
                sink.add("cuda_runtime", m.group(1), no)
        major = _cuda_major_of_package(name, ver)
        if major:
            majors.append((major, name, no))
    if not majors:
        return
    seen = sorted({m for m, _, _ in majors})
    sink.add("pip_cuda_majors", ",".join(str(m) for m in seen), majors[0][2])
    if len(seen) > 1:
        # the first package of the minority CUDA major is the evidence of the mix
        counts = {m: sum(1 for x, _, _ in majors if x == m) for m in seen}
        minority = min(seen, key=lambda m: (counts[m], m))
        first = next(x for x in majors if x[0] == minority)
        sink.add("pip_mixed_cuda", "true", first[2])
    else:
        sink.add("pip_mixed_cuda", "false", majors[0][2])


def parse_pip(sink: Sink, lines: list[str], base: int) -> None:
    package_facts(sink, packages(lines, base))


# ------------------------------------------------------------------------------------------
# collect_env
# ------------------------------------------------------------------------------------------
_UNKNOWN = {"", "could not collect", "n/a", "none", "not set"}


def parse_collect_env(sink: Sink, lines: list[str], base: int) -> None:
    from .nvidia import parse_topo  # the GPU Topology block is an embedded `nvidia-smi topo -m`

    found: set[str] = set()
    section = ""
    pip_lines: list[tuple[str, int]] = []
    topo_start = None
    gpu_names: list[tuple[str, int]] = []
    key_value, rule, gpu_line = FACTS["collect_env_key_value"], FACTS["collect_env_rule"], FACTS["collect_env_gpu_line"]
    topo_row, env_start = FACTS["topo_gpu_row"], FACTS["collect_env_env_line"]
    assignment = FACTS["collect_env_assignment"]
    for i, ln in enumerate(lines):
        no, s = base + i + 1, ln.strip()
        if rule.fullmatch(s) and i + 2 < len(lines) and rule.fullmatch(lines[i + 2].strip()):
            section = lines[i + 1].strip()
            continue
        if s.startswith(("[pip", "[conda]")):
            if s.startswith("[pip"):
                pip_lines.append((s, no))
            continue
        m = gpu_line.match(ln)
        if m and not topo_row.match(ln):
            gpu_names.append((m.group(2), no))
        if section == "Environment Variables" or (env_start.match(s) and "=" in s):
            em = assignment.match(s)
            if em:
                emit_env(sink, em.group(1), em.group(2), no)
                continue
        m = key_value.match(ln)
        if not m:
            continue
        key = (m.group("key") or m.group("key2")).strip()
        val = (m.group("val") or "").strip()
        unknown = val.lower() in _UNKNOWN
        if key == "GPU Topology":
            topo_start = i + 1
        elif key == "PyTorch version" and not unknown:
            sink.add("torch_version", val, no)
            sink.add("torch_cuda_build", torch_build(val), no)
            found.add("torch_version")
        elif key == "CUDA used to build PyTorch" and not unknown:
            sink.add("cuda_runtime", val, no)
            found.add("cuda_runtime")
        elif key == "CUDA runtime version" and not unknown and "cuda_runtime" not in found:
            sink.add("cuda_toolkit", val, no)
        elif key == "Nvidia driver version" and not unknown:
            sink.add("driver_version", val, no)
            sink.add("driver_branch", val.split(".", 1)[0], no)
        elif key == "vLLM Version" and not unknown:
            sink.add("vllm_version", val.split()[0], no)
            found.add("vllm_version")
        elif key == "GPU models and configuration" and val and not unknown:
            gm = FACTS["collect_env_gpu_value"].match(val)
            if gm:
                gpu_names.append((gm.group(2), no))
        elif key == "OS" and not unknown:
            sink.add("os", val, no)
    if gpu_names:
        names = sorted({n for n, _ in gpu_names})
        sink.add("gpu_model", ", ".join(names), gpu_names[0][1])
        sink.add("gpu_count", len(gpu_names), gpu_names[0][1])
    pkgs = []
    pin = FACTS["pip_freeze_pin"]
    for s, no in pip_lines:
        m = pin.match(s)
        if m:
            pkgs.append((_norm(m.group("name")), m.group("ver"), no))
    package_facts(sink, pkgs, skip=found)
    if topo_start is not None:
        # the first topo line is indented by two spaces; give parse_topo the block as it is
        parse_topo(sink, lines[topo_start:], base + topo_start)
    # `CUDA used to build PyTorch` may be missing when torch was built without CUDA; cu tags stand in
    if "cuda_runtime" not in found:
        for f in list(sink.facts):
            if f.name == "torch_cuda_build" and cuda_major(f.value):
                d = f.value[2:]
                sink.add("cuda_runtime", f"{d[:-1]}.{d[-1]}", f.line)
                break


# ------------------------------------------------------------------------------------------
# Hugging Face config.json
# ------------------------------------------------------------------------------------------
_MODEL_KEYS = (
    ("model_type", "model_type"), ("num_attention_heads", "num_attention_heads"),
    ("num_key_value_heads", "num_key_value_heads"), ("n_routed_experts", "num_experts"),
    ("num_local_experts", "num_experts"), ("num_experts", "num_experts"),
    ("num_experts_per_tok", "num_experts_per_tok"), ("max_position_embeddings", "max_position_embeddings"),
)


def parse_model_config(sink: Sink, lines: list[str], base: int) -> None:
    try:
        doc = json.loads("\n".join(lines))
    except ValueError:
        return
    if not isinstance(doc, dict):
        return

    def at(key: str) -> int:
        rx = re.compile(r'"' + re.escape(key) + r'"\s*:')  # the line naming the key (built)
        return next((base + i + 1 for i, ln in enumerate(lines) if rx.search(ln)), base + 1)

    arch = doc.get("architectures")
    if isinstance(arch, list) and arch:
        start = at("architectures") - base - 1
        hit = next((base + i + 1 for i in range(start, len(lines)) if f'"{arch[0]}"' in lines[i]), start + base + 1)
        sink.add("model_architecture", ",".join(str(a) for a in arch), hit)
    if isinstance(doc.get("_name_or_path"), str):
        sink.add("model", doc["_name_or_path"], at("_name_or_path"))
    for key, fact in _MODEL_KEYS:
        if isinstance(doc.get(key), (int, str)) and not isinstance(doc.get(key), bool):
            sink.add(fact, doc[key], at(key))
    q = doc.get("quantization_config")
    if isinstance(q, dict) and q.get("quant_method"):
        sink.add("quantization", q.get("quant_method"), at("quant_method"))
