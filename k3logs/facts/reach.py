"""Which NCCL bootstrap interfaces and addresses the other nodes of a run cannot reach (the check
`nccl_interface_across_nodes`, taxonomy v2 nccl.bootstrap)."""
from __future__ import annotations

from fnmatch import fnmatchcase


def unreachable(used: list[tuple[str, str | None]], host_local: tuple[str, ...]) -> list[int]:
    """The positions in `used` ('IFACE:ADDR' as NCCL prints it, and the node that uses it) of an interface that
    exists only inside its host (`host_local`: shell patterns) or an address several nodes advertise as theirs
    (a BMC's USB NIC gives every node the same link-local one: each dials itself)."""
    split = [[part.strip() for part in value.split(":", 1)] for value, _ in used]
    nodes_of: dict[str, set] = {}
    for (_, node), (*_, addr) in zip(used, split):
        nodes_of.setdefault(addr, set()).add(node)
    return [i for i, (iface, *rest) in enumerate(split)
            if any(fnmatchcase(iface, p) for p in host_local) or (rest and len(nodes_of[rest[0]]) > 1)]
