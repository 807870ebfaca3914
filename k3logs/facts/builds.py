"""The builds nodes run, compared: NCCL, torch and vLLM versions read per node and rank, and which of them differ (the
check runtime_versions_across_nodes)."""
from __future__ import annotations

import re
from collections import defaultdict

from .util import RAN_RANK, Fact

# ------------------------------------------------------------------------------------------
# the same build on every node
# ------------------------------------------------------------------------------------------
BUILDS = (("nccl_version", "NCCL"), ("torch_version", "torch"), ("vllm_version", "vLLM"))
_PACKAGE_LISTS = ("pip_freeze", "collect_env")


def build_of(name: str, value: str) -> str | None:
    """The part of a version that must be equal on every rank: NCCL's x.y.z, torch's version with its CUDA
    build (+cu128), vLLM's release without a local suffix."""
    if name == "nccl_version":
        m = re.match(r"(\d+\.\d+\.\d+)", value)  # x.y.z of a version already read
        return m.group(1) if m else None
    if name == "vllm_version":
        return value.split("+", 1)[0] or None
    return value or None


def witness_of(f: Fact) -> tuple[str, str]:
    """Who states a fact: its node when known, else its file (the ranks that log to it, or one package list)."""
    return ("node", f.node) if f.node else ("file", f.file)


def differing(facts: list[Fact], name: str) -> list[str] | None:
    """The builds that differ between the ranks of one deployment, read within one kind of evidence (the logs
    the processes wrote, package lists, or the images a pod listing shows: a library's own banner and pip's
    package version are not compared with each other). Known nodes are compared with each other, each by the
    builds its best source shows; the facts of an unknown node only within their file (the ranks writing one log,
    one listing of several environments). None when no two of them differ."""
    for sources in (("log",), _PACKAGE_LISTS, ("pod_table",)):
        mine = [f for f in facts if f.source in sources]
        groups: dict[tuple[str, str], set[str]] = defaultdict(set)
        best: dict[str, int] = {}
        for f in mine:
            if f.node:
                best[f.node] = min(best.get(f.node, 9), RAN_RANK.get(f.source, 9))
        for f in mine:
            if f.node and RAN_RANK.get(f.source, 9) != best[f.node]:
                continue
            groups[witness_of(f)].add(build_of(name, f.value))
        per_node = [v for (k, _), v in groups.items() if k == "node"]
        split = any(a.isdisjoint(b) for i, a in enumerate(per_node) for b in per_node[i + 1:])
        split = split or any(len(v) > 1 for (k, _), v in groups.items() if k == "file")
        if split:
            return sorted({b for v in groups.values() for b in v})
    return None
