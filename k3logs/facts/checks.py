"""Checks of the environment against the deployment facts (k3-deployment-facts.md), and the evidence list.

`run_checks(facts)` answers one `Check` per definition in patterns/facts.toml `[[check]]`: pass, fail or
unknown, with the file:line of the deciding fact and, for a failure, the taxonomy category it points to and
what to do. A check never guesses: without evidence it says `unknown` and what is missing. Where several
sources disagree, the command that really ran wins (the args vLLM logged, a process list, the container's
Args) over a template (pod spec, launch file). No remediation advises mixing CUDA wheels.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from k3logs.errors import CatalogueError

from .builds import BUILDS, build_of, differing, witness_of
from .data import CheckDef, FactsData, default_facts_data
from .fabric import check_interface, check_network
from .factset import FactSet, at_where as _at   # (where a fact was read, in a check's detail)
from .util import RAN_RANK, Fact, cuda_major, norm_image, version_less

__all__ = ["Check", "run_checks", "is_k3_deployment"]


@dataclass(frozen=True)
class Check:
    id: str
    status: str                  # pass | fail | unknown
    evidence: str | None         # 'file:line' of the deciding fact
    detail: str
    category: str | None         # taxonomy id a failure points to (None unless failed)
    remediation: tuple[str, ...]  # what to do (empty unless failed)
    explains: tuple[str, ...] = ()  # root categories a failure explains (facts.toml [[check]] `explains`)
    node: str | None = None      # the node the deciding fact is about (a pod listing's row names its own)
    before_ready: bool = False   # its fault shows before the server is ready (facts.toml [[check]] `before_ready`)


def is_k3_deployment(facts: list[Fact], data: FactsData | None = None) -> bool:
    """True when a model name, served name or architecture holds every K3 word ('kimi', 'k3')."""
    words = [w.lower() for w in (data or default_facts_data()).versions.k3_model_words]
    for f in facts:
        if f.name in ("model", "model_architecture", "served_model_name", "model_type"):
            v = f.value.lower()
            if all(w in v for w in words):
                return True
    return False


def run_checks(facts: list[Fact], is_k3: bool | None = None, data: FactsData | None = None) -> list[Check]:
    data = data or default_facts_data()
    F = FactSet(facts)
    k3 = is_k3_deployment(facts, data) if is_k3 is None else is_k3
    out = []
    for cid, fn in CHECKS.items():
        defn = data.checks.get(cid)
        if defn is None:
            raise CatalogueError(f"{data.path}: no [[check]] with id {cid!r}; every check needs its definition")
        if defn.k3_only and not k3:
            out.append(Check(cid, "unknown", None, "not a K3 deployment", None, ()))
            continue
        status, fact, detail = fn(F, data, k3)
        out.append(_mk(defn, status, fact, detail))
    return out


def _mk(defn: CheckDef, status: str, fact: Fact | None, detail: str) -> Check:
    failed = status == "fail"
    return Check(defn.id, status, fact.where if fact else None, detail,
                 defn.category if failed else None, defn.remediation if failed else (),
                 defn.explains if failed else (), fact.node if fact else None, defn.before_ready)


# ------------------------------------------------------------------------------------------
# the chain: driver, image, runtime
# ------------------------------------------------------------------------------------------
def _runtime_major(F: FactSet, data: FactsData) -> tuple[int | None, Fact | None, str]:
    """The most demanding CUDA major the container's runtime shows, with its evidence."""
    best: tuple[int | None, Fact | None, str] = (None, None, "")
    cands = [(f, "torch.version.cuda " + f.value) for f in F.get("cuda_runtime")]
    cands += [(f, "torch build " + f.value) for f in F.get("torch_cuda_build")]
    cands += [(f, "NCCL built for CUDA " + f.value) for f in F.get("nccl_cuda")]
    cands += [(f, "image CUDA_VERSION " + f.value) for f in F.get("env:CUDA_VERSION")]
    cands += [(f, f"image {f.value} (a CUDA {data.versions.k3_cuda_major} build)") for f in F.get("image")
              if norm_image(f.value) == norm_image(data.versions.k3_image)]
    for f, why in cands:
        major = data.versions.k3_cuda_major if f.name == "image" else cuda_major(f.value)
        if major and (best[0] is None or major > best[0]):
            best = (major, f, why)
    return best


def check_driver(F: FactSet, data: FactsData, k3: bool):
    major, rf, why = _runtime_major(F, data)
    drivers = F.get("driver_branch")
    if not drivers and not F.get("driver_cuda"):
        return "unknown", None, ("no host driver version in the bundle "
                                 "(nvidia-smi, nvidia-smi -q, /proc/driver/nvidia/version)")
    if major is None:
        d = (drivers or F.get("driver_cuda"))[0]
        return "unknown", d, (f"host driver {'r' + d.value if d.name == 'driver_branch' else 'supports CUDA ' + d.value}; "
                              "the container's CUDA runtime is unknown (torch.version.cuda, collect_env, pip freeze)")
    need = data.driver_min_branch.get(major)
    if need is None:
        return "unknown", rf, f"no minimum driver branch known for CUDA {major} (facts.toml [driver_min_branch])"
    bad = [f for f in drivers if f.value.isdigit() and int(f.value) < need]
    if not drivers:  # only the driver's CUDA version (NCCL cudaDriverVersion, nvidia-smi header) is known
        bad = [f for f in F.get("driver_cuda") if (cuda_major(f.value) or 99) < major]
    if bad:
        b = bad[0]
        ver = next((f.value for f in F.get("driver_version") if f.file == b.file and f.node == b.node), None)
        shown = (f"driver {ver or 'r' + b.value}" if b.name == "driver_branch"
                 else f"a driver that supports CUDA {b.value} at most")
        return "fail", b, (f"host {shown}{_at(b)} is older than r{need}, which CUDA {major} needs; the container is "
                           f"CUDA {major}: {why}{_at(rf)}. nvidia-smi's 'CUDA Version' is the driver's maximum, "
                           "not the runtime")
    if drivers:
        shown = "driver r" + ", r".join(sorted({f.value for f in drivers})) + f" meets r{need}"
    else:
        shown = "the driver supports CUDA " + ", ".join(sorted({f.value for f in F.get("driver_cuda")}))
    return "pass", (drivers or F.get("driver_cuda"))[0], f"{shown} for CUDA {major} ({why})"


def check_image(F: FactSet, data: FactsData, k3: bool):
    imgs = F.ran("image")
    if not imgs:
        return "unknown", None, "no image tag in the bundle (docker inspect, pod spec, kubectl describe, launch command)"
    rank = RAN_RANK.get(imgs[0].source, 9)
    top = [f for f in imgs if RAN_RANK.get(f.source, 9) == rank]
    want = norm_image(data.versions.k3_image)
    wrong = [f for f in top if norm_image(f.value) != want]
    if wrong:
        return "fail", wrong[0], (f"K3 runs in {wrong[0].value}{_at(wrong[0])}, "
                                  f"not the dedicated image {data.versions.k3_image}")
    return "pass", top[0], f"image {top[0].value}"


def check_vllm(F: FactSet, data: FactsData, k3: bool):
    f = F.first("vllm_version")
    if not f:
        return "unknown", None, "no vLLM version in the bundle (API server start line, collect_env, pip freeze)"
    less = version_less(f.value, data.versions.k3_min_vllm)
    if less is None:
        return "unknown", f, f"cannot compare vLLM version {f.value!r}"
    if less:
        return "fail", f, f"vLLM {f.value}{_at(f)} is older than {data.versions.k3_min_vllm}, the first with K3 support"
    return "pass", f, f"vLLM {f.value} >= {data.versions.k3_min_vllm}"


def check_torch(F: FactSet, data: FactsData, k3: bool):
    builds = F.ran("torch_cuda_build") or [f for f in F.ran("cuda_runtime") if f.source in ("collect_env", "log")]
    if k3:
        v = data.versions
        want, why = v.k3_cuda_major, f"the K3 recipe ({v.k3_image}, {v.k3_torch_cuda_build})"
    else:
        env = F.first("env:CUDA_VERSION")
        want, why = (cuda_major(env.value), f"the image's CUDA_VERSION {env.value}{_at(env)}") if env else (None, "")
    if not builds:
        return "unknown", None, "torch's CUDA build is unknown (collect_env, pip freeze, torch.__version__)"
    if want is None:
        return "unknown", builds[0], f"torch {builds[0].value}; no container CUDA version to compare it with"
    bad = [f for f in builds if cuda_major(f.value) != want]
    if bad:
        return "fail", bad[0], (f"torch is a {bad[0].value} build{_at(bad[0])} but {why} is CUDA {want}: a wheel from "
                                "another CUDA index in the image")
    return "pass", builds[0], f"torch {builds[0].value} matches CUDA {want} ({why})"


def check_pip_mix(F: FactSet, data: FactsData, k3: bool):
    mixed = F.get("pip_mixed_cuda")
    if not mixed:
        return "unknown", None, "no pip freeze / collect_env package list in the bundle"
    bad = [f for f in mixed if f.value == "true"]
    majors = sorted({m for f in F.get("pip_cuda_majors") for m in f.value.split(",")})
    if bad:
        return "fail", bad[0], f"CUDA {' and '.join(majors)} packages installed together{_at(bad[0])}"
    return "pass", mixed[0], f"all CUDA packages are CUDA {', '.join(majors)}"


# ------------------------------------------------------------------------------------------
# hardware and launch flags
# ------------------------------------------------------------------------------------------
def _gpus_per_node(F: FactSet) -> dict[str | None, tuple[int, Fact]]:
    per: dict[str | None, tuple[int, Fact]] = {}
    for f in F.get("gpu_count") + F.get("gpu_request"):
        try:
            n = int(f.value)
        except ValueError:
            continue
        if f.node not in per or n > per[f.node][0]:
            per[f.node] = (n, f)
    return per


def check_gpus(F: FactSet, data: FactsData, k3: bool):
    v = data.versions
    per = _gpus_per_node(F)
    tp = F.int_of("tensor_parallel_size")
    used = tp * (F.int_of("pipeline_parallel_size") or 1) * (F.int_of("data_parallel_size") or 1) if tp else None
    total = sum(n for n, _ in per.values())
    if not per and used is None:
        return "unknown", None, "no GPU count (nvidia-smi) and no parallel sizes in the bundle"
    model = F.first("gpu_model")
    ev = next(iter(per.values()))[1] if per else F.first("tensor_parallel_size")
    if used is not None and used < v.k3_min_gpus:
        f = F.first("tensor_parallel_size")
        return "fail", f, (f"K3 runs on {used} GPUs (tensor x pipeline x data parallel){_at(f)}; "
                           f"the recipe needs {v.k3_min_gpus}")
    if used is None and total < v.k3_min_gpus:
        return "fail", ev, f"{total} GPU(s) seen{_at(ev)}; the K3 recipe needs at least {v.k3_min_gpus} GB300-class GPUs"
    n = used if used is not None else total
    cls = model and any(c.lower() in model.value.lower() for c in v.k3_gpu_class)
    note = "" if cls or not model else f"; {model.value} is not GB300-class: other generations may need more GPUs"
    if per and total < n:
        note += f"; the dumps show {total} of them"
    how = " (tensor x pipeline x data parallel)" if used is not None else ""
    return "pass", ev, f"{n} GPUs{how}{' (' + model.value + ')' if model else ''} >= {v.k3_min_gpus}{note}"


def check_prefix(F: FactSet, data: FactsData, k3: bool):
    groups: dict[int, list[Fact]] = defaultdict(list)
    for f in F.get("prefix_caching") + F.get("launch_command"):
        groups[RAN_RANK.get(f.source, 9)].append(f)
    for rank in sorted(groups):
        pcs = [f for f in groups[rank] if f.name == "prefix_caching"]
        if pcs:
            off = sorted((f for f in pcs if f.value != "true"), key=lambda f: (f.file, f.line or 0))  # (first first)
            if off:
                return "fail", off[0], f"prefix caching is off in what ran{_at(off[0])}"
            return "pass", pcs[0], f"prefix caching on in what ran{_at(pcs[0])}"
        lc = groups[rank][0]
        return "fail", lc, f"the launch command{_at(lc)} has no --enable-prefix-caching (not on by default for K3)"
    return "unknown", None, "no launch command and no vLLM start-up args in the bundle"


def check_all2all(F: FactSet, data: FactsData, k3: bool):
    b = F.first("all2all_backend")
    if not b:
        return "unknown", None, "no --all2all-backend / VLLM_ALL2ALL_BACKEND in the command that ran"
    if not F.get("expert_parallel") and (F.get("launch_command") or F.get("tensor_parallel_size")):
        return "unknown", b, f"--all2all-backend {b.value} without --enable-expert-parallel: the backend is unused"
    per = _gpus_per_node(F)
    gpn = max((n for n, _ in per.values()), default=None)
    tp = F.int_of("tensor_parallel_size")
    ep = tp * (F.int_of("data_parallel_size") or 1) if tp else None
    nnodes = F.int_of("nnodes")
    if gpn is None and ep and nnodes and nnodes > 1:  # no nvidia-smi: GPUs per node from the parallel layout
        gpn = ep * (F.int_of("pipeline_parallel_size") or 1) // nnodes or None
    nv = [f for f in F.get("nvlink") if f.value == "true"] + [f for f in F.get("interconnect") if f.value == "nvlink"]
    pcie = [f for f in F.get("nvlink") if f.value == "false"]
    rdma = [f for f in F.get("interconnect") if f.value == "rdma"]
    mnnvl = F.get("mnnvl")  # NCCL: the communicator's nodes share one NVLink domain
    said = F.first("ep_span")   # (vLLM's own word on where its group runs, where nothing gives the GPUs per node)
    if gpn and ep or said:
        span = ("intra" if ep <= gpn else "inter") if gpn and ep else said.value
        fits = "fits in" if span == "intra" else "spans more than"
        where = f"the expert-parallel group ({ep} GPUs = TP x DP) {fits} one node of {gpn} GPUs" if gpn and ep else \
            f"the expert-parallel group is {span}-node, as vLLM says{_at(said)}"
        if span == "inter" and mnnvl:
            where += f", inside one multi-node NVLink domain (MNNVL{_at(mnnvl[0])})"
        # (across nodes: NVLink where NCCL shows one multi-node NVLink domain, RDMA where the bundle shows it; neither
        # shown, the fabric between the nodes is not known)
        expected = ("nvlink" if mnnvl else "rdma" if rdma else None) if span == "inter" else (
            "nvlink" if not (pcie and not nv) else None)
        pp = F.int_of("pipeline_parallel_size") or 1
        if expected == "nvlink" and rdma and not mnnvl and (ep * pp > gpn if gpn and ep else pp > 1):
            # (each pipeline stage's group inside a node, the stages on nodes joined by RDMA: the recipe's rule
            # fits the group's fabric, NVLink, and the deployment's, RDMA; neither backend is against it)
            where += f", its {pp} pipeline stages on nodes joined by RDMA"
            if b.value == data.all2all_backend["rdma"]:
                return "pass", b, f"--all2all-backend {b.value} fits the deployment's rdma: {where}"
    else:
        where = "the group size per node is unknown"
        expected = "nvlink" if nv and not rdma else "rdma" if rdma and not nv else None
    if expected is None:
        return "unknown", b, (f"--all2all-backend {b.value}; {where}, and the interconnect it crosses is not clear "
                              f"(NVLink: {bool(nv)}, RDMA: {bool(rdma)})")
    want = data.all2all_backend[expected]
    if b.value == want:
        return "pass", b, f"--all2all-backend {b.value} fits {expected}: {where}"
    if b.value in data.all2all_backend.values():
        return "fail", b, (f"--all2all-backend {b.value}{_at(b)} but {where}, so the all-to-all crosses {expected}: "
                           f"use {want}")
    recipe = ", ".join(f"{k}: {v}" for k, v in data.all2all_backend.items())
    return "unknown", b, f"--all2all-backend {b.value} is neither of the recipe's ({recipe})"


# ------------------------------------------------------------------------------------------
# communication and shared memory
# ------------------------------------------------------------------------------------------
def check_ucx(F: FactSet, data: FactsData, k3: bool):
    rdma = [f for f in F.get("interconnect") if f.value == "rdma"]
    if not rdma:
        return "unknown", None, "no RDMA interconnect seen (ibstat, topo NIC legend, NCCL_IB_HCA, NCCL NET/IB)"
    want = data.versions.rdma_ucx_tls
    ucx = F.ran("ucx_tls")
    if ucx:
        have = {t.strip() for t in ucx[0].value.split(",")}
        if set(want.split(",")) <= have:
            return "pass", ucx[0], f"UCX_TLS={ucx[0].value} with RDMA{_at(rdma[0])}"
        return "fail", ucx[0], f"UCX_TLS={ucx[0].value}{_at(ucx[0])} on an RDMA deployment; the recipe sets {want}"
    kv = F.first("kv_transfer")
    env = [f for f in F.all if f.name.startswith("env:")]
    if kv and env:
        return "fail", kv, (f"KV-cache transfer ({kv.value}){_at(kv)} on RDMA, and UCX_TLS is not set in the "
                            "environment dumps")
    if not kv:
        return "unknown", rdma[0], ("RDMA seen; UCX_TLS matters for KV-cache transfer (--kv-transfer-config), "
                                    "which the bundle does not show")
    return "unknown", kv, "KV-cache transfer configured on RDMA; no environment dump shows whether UCX_TLS is set"


def check_dmabuf(F: FactSet, data: FactsData, k3: bool):
    trig = [f for f in F.get("nccl_dmabuf_enable") if f.value.strip() == "0"] + F.get("nccl_dmabuf_524")
    if not trig:
        return "unknown", None, "NCCL_DMABUF_ENABLE=0 is neither set nor called for (no mlx5 dmabuf errno 524)"
    t = trig[0]
    why = "NCCL_DMABUF_ENABLE=0 is set" if t.name == "nccl_dmabuf_enable" else "mlx5 dmabuf registration failed (errno 524)"
    lsm: dict[str | None, list[Fact]] = defaultdict(list)
    for f in F.get("nvidia_peermem_loaded"):
        lsm[f.node].append(f)
    if not lsm:
        return "unknown", t, (f"{why}{_at(t)}, but no lsmod shows whether nvidia_peermem is loaded: "
                              "load it on every node first")
    missing = {n: fs for n, fs in lsm.items() if not any(f.value == "true" for f in fs)}
    if missing:
        f = next(iter(missing.values()))[0]
        nodes = ", ".join(str(n) if n else "(unnamed node)" for n in missing)
        return "fail", f, (f"{why}; nvidia_peermem is not loaded on {nodes}{_at(f)}: load nvidia_peermem first, "
                           "NCCL_DMABUF_ENABLE=0 falls back to it")
    nodes = ", ".join(sorted(str(n) for n in lsm if n)) or "the node with lsmod"
    return "pass", next(iter(lsm.values()))[0], f"{why}; nvidia_peermem is loaded on {nodes}"


def check_shm(F: FactSet, data: FactsData, k3: bool):
    limit = data.versions.docker_default_shm_bytes
    files: dict[str, dict[str, Fact]] = defaultdict(dict)
    for f in F.get("shm_size") + F.get("ipc_mode"):
        files[f.file].setdefault(f.name, f)
    ordered = sorted(files.items(), key=lambda kv: min(RAN_RANK.get(f.source, 9) for f in kv[1].values()))
    for _, got in ordered:
        ipc, shm = got.get("ipc_mode"), got.get("shm_size")
        if ipc and ipc.value == "host":
            return "pass", ipc, f"IPC namespace is the host's{_at(ipc)}: /dev/shm is the host's"
        if shm and shm.value.isdigit():
            size = int(shm.value)
            if size <= limit:
                return "fail", shm, (f"/dev/shm is {size // 2**20} MiB{_at(shm)} and the IPC mode is "
                                     f"{ipc.value if ipc else 'not host'}: too small for NCCL")
            return "pass", shm, f"/dev/shm is {size / 2**30:g} GiB"
        if shm:
            return "pass", shm, f"/dev/shm is {shm.value}"
    for lc in F.get("launch_command"):
        if lc.source == "launch_cmd" and " run " in f" {lc.value} " and lc.value.split()[0].endswith(("docker", "podman")):
            return "fail", lc, (f"docker run without --shm-size or --ipc=host{_at(lc)}: the container gets the "
                                "default 64 MiB /dev/shm")
    return "unknown", None, "no docker ShmSize / --shm-size / --ipc or pod /dev/shm volume in the bundle"


def check_versions_across_nodes(F: FactSet, data: FactsData, k3: bool):
    seen: list[str] = []
    apart: list[str] = []
    shown: Fact | None = None
    for name, label in BUILDS:
        facts = [f for f in F.get(name) if build_of(name, f.value)]
        if not facts:
            continue
        builds = differing(facts, name)
        if builds is None:
            found = sorted({build_of(name, f.value) for f in facts})
            if len(found) > 1:   # a node's restarts, logs of unknown nodes, a banner against a package list
                apart.append(f"{label} {', '.join(found)}")
            elif len({witness_of(f) for f in facts}) > 1:
                seen.append(f"{label} {found[0]}")
                shown = shown or min(facts, key=lambda f: (RAN_RANK.get(f.source, 9), f.file, f.line or 0))
            continue
        # the build most witnesses (nodes, logs, package lists) show is the deployment's; between equals, the head's
        # (rank 0's node), then the one that ran first (a log's before a package list's, not a folder name's)
        order = sorted(facts, key=lambda f: (RAN_RANK.get(f.source, 9), f.file, f.line or 0))
        head = {f.value for f in F.get("head_node")}
        rank = {b: (len({witness_of(f) for f in facts if build_of(name, f.value) == b}),
                    any(f.node in head for f in facts if build_of(name, f.value) == b),
                    -next(i for i, f in enumerate(order) if build_of(name, f.value) == b)) for b in builds}
        ref = max(builds, key=rank.__getitem__)
        ev = next(f for f in order if build_of(name, f.value) != ref)   # (the odd one's first run)
        where = {b: ", ".join(sorted({f.node or f.where for f in facts if build_of(name, f.value) == b}))
                 for b in builds}
        others = "; ".join(f"{label} {b} ({where[b]})" for b in builds if b != ref)
        return "fail", ev, (f"the ranks of one deployment run different {label} builds: {others} against {label} "
                            f"{ref} ({where[ref]}); the odd one out is {label} {build_of(name, ev.value)}{_at(ev)}")
    if apart:
        return "unknown", None, ("different builds appear, but not on two nodes (or ranks of one log) at once: "
                                 + "; ".join(apart) + " (a node's restarts, or logs whose node is unknown)")
    if seen:
        return "pass", shown, "the same build on every node and rank that shows it: " + "; ".join(seen)
    return "unknown", None, ("no NCCL, torch or vLLM version from two nodes or ranks (NCCL version banners, "
                             "'vLLM is using nccl', pip freeze / collect_env per node)")


CHECKS = {
    "driver_branch_vs_cuda": check_driver, "image_is_k3": check_image, "vllm_version_min": check_vllm,
    "torch_cuda_build": check_torch, "pip_mixed_cuda": check_pip_mix, "gpu_model_count": check_gpus,
    "prefix_caching_flag": check_prefix, "all2all_backend_vs_interconnect": check_all2all,
    "ucx_tls_with_rdma": check_ucx, "nccl_dmabuf_advice": check_dmabuf, "shm_size": check_shm,
    "nccl_interface_across_nodes": check_interface, "runtime_versions_across_nodes": check_versions_across_nodes,
    "nccl_network_across_nodes": check_network,
}
