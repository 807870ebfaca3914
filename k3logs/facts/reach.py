"""Which NCCL bootstrap interfaces and addresses the other nodes of a run cannot reach (the check
`nccl_interface_across_nodes`, taxonomy v2 nccl.bootstrap)."""
from __future__ import annotations

import ipaddress
from fnmatch import fnmatchcase


def unreachable(used: list[tuple[str, str | None]], host_local: tuple[str, ...],
                addresses: list[tuple[str, str | None]] = ()) -> list[int]:
    """The positions in `used` ('IFACE:ADDR' as NCCL prints it, and the node that uses it) of an interface that
    exists only inside its host (`host_local`: shell patterns), an address several nodes advertise as theirs
    (a BMC's USB NIC gives every node the same link-local one: each dials itself), or one off the others' network
    (`off_network`, over the nodes' `ip addr`: 'IFACE=ADDR/LEN' and its node)."""
    split = [[part.strip() for part in value.split(":", 1)] for value, _ in used]
    nodes_of: dict[str, set] = {}
    for (_, node), (*_, addr) in zip(used, split):
        nodes_of.setdefault(addr, set()).add(node)
    off = off_network([(node, rest[0] if rest else "") for (_, node), (_, *rest) in zip(used, split)], addresses)
    return [i for i, (iface, *rest) in enumerate(split)
            if any(fnmatchcase(iface, p) for p in host_local) or (rest and len(nodes_of[rest[0]]) > 1) or i in off]


def off_network(used: list[tuple[str | None, str]], addresses: list[tuple[str, str | None]]) -> set[int]:
    """The positions in `used` (node, bootstrap address) of an address on none of the networks another node has an
    interface on, from a node that has one on the network the others bootstrap on: it could have used that one
    (NCCL_SOCKET_IFNAME names another interface there, a management port), and the others cannot dial it."""
    nets: dict[str | None, list] = {}
    for value, node in addresses:
        try:
            nets.setdefault(node, []).append(ipaddress.ip_interface(value.split("=", 1)[-1]).network)
        except ValueError:
            continue
    boot = [(node, _address(addr)) for node, addr in used]
    out = set()
    for i, (node, addr) in enumerate(boot):
        others = [(n, a) for n, a in boot if n != node and a is not None and n in nets]
        if addr is None or node not in nets or not others:
            continue
        unreached = all(not any(addr in net for net in nets[n]) for n, _ in others)
        could = all(any(a in net for net in nets[node]) for _, a in others)
        if unreached and could:
            out.add(i)
    return out


def _address(text: str):
    try:
        return ipaddress.ip_address(text.split("<", 1)[0].split("%", 1)[0])
    except ValueError:
        return None
