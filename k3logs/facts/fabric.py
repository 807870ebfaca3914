"""Checks of the fabric across nodes: the interface NCCL bootstraps over, and the network its communicators use."""
from __future__ import annotations

from collections import Counter

from .data import FactsData
from .factset import FactSet, at_where
from .reach import unreachable


def check_interface(F: FactSet, data: FactsData, k3: bool):
    facts = F.get("nccl_bootstrap")
    if not facts:
        return "unknown", None, "no NCCL 'Bootstrap: Using IFACE:ADDR' line (NCCL_DEBUG=INFO)"
    nodes = {f.node for f in facts if f.node}
    if len(nodes) < 2 and (F.int_of("nnodes") or 1) < 2:
        return "unknown", None, "NCCL's interface of one node only: any interface reaches the ranks of one host"
    local = [facts[i] for i in unreachable([(f.value, f.node or f.file) for f in facts], data.versions.
                                           host_local_interfaces, [(f.value, f.node) for f in F.get("ip")])]
    if local:
        ev = min(local, key=lambda f: (f.file, f.line or 0))
        on = ", ".join(sorted({f.node or f.file for f in local}))
        return "fail", ev, (f"NCCL uses {ev.value}, an interface or address the other nodes cannot reach (host-only, "
                            f"one several nodes use, off their network), on {on}{at_where(ev)}, in a run across nodes")
    used = sorted({f.value.split(":", 1)[0].strip() for f in facts})
    return "pass", facts[0], f"NCCL uses {', '.join(used)} on {len(nodes) or 'several'} nodes"


def check_network(F: FactSet, data: FactsData, k3: bool):
    """Every node's communicators on one network: a node that fell back to sockets (NCCL found none of the RDMA
    devices NCCL_IB_HCA names) while the others use RDMA breaks every connection between them."""
    facts = [f for f in F.get("nccl_network") if f.node]
    nets: dict[str, set[str]] = {}
    for f in facts:
        nets.setdefault(f.node, set()).add(f.value)
    if len(nets) < 2:
        return "unknown", None, "NCCL's network ('Using network IB') of fewer than two nodes (NCCL_DEBUG=INFO)"
    # (a node that found no RDMA device uses sockets whatever else it printed)
    used = {n: "Socket" if "Socket" in v else min(v) for n, v in nets.items()}
    if len(set(used.values())) == 1:
        return "pass", facts[0], f"NCCL uses {next(iter(used.values()))} on {len(used)} nodes"
    counts = Counter(used.values())
    # the odd one out: the network fewer nodes use; between equals, the fallback (sockets) is the fault
    odd = min(counts, key=lambda net: (counts[net], net != "Socket"))
    ev = min((f for f in facts if used[f.node] == odd), key=lambda f: (f.file, f.line or 0))
    others = ", ".join(sorted(f"{n} {u}" for n, u in used.items() if u != odd))
    return "fail", ev, (f"NCCL uses {odd} on {', '.join(sorted(n for n, u in used.items() if u == odd))}"
                        f"{at_where(ev)} where the other nodes use RDMA or another network ({others})")
