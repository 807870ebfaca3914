"""Which witness named an event's node and rank, and its GPU: the report's origin.node_from, rank_from and gpu, read
from the maps attribution kept with their witnesses."""
from __future__ import annotations

import re

import polars as pl

from .assign import NODE_SRC, RANK_SRC, kernel_bus
from .attribution import KERNEL_TASK_LINES, RX, Attribution, epochs, host_field, is_ip, line_rx, short_host, step_of
from .ranks import gpu_identity


# ------------------------------------------------------------------------------------------------
# which witness named an event's node and rank (the report's origin.node_from / rank_from)
# ------------------------------------------------------------------------------------------------
def witness(a: Attribution, row: dict) -> tuple[str | None, str | None]:
    """(node_from, rank_from): in words, the witness that named the node and the rank of one event (a row of the
    analysis' events: file, line, node, rank, node_src, rank_src, host, ip, pid, ...). None where the event has
    no node or rank, or where they were not attribution's (another stage shared them)."""
    return _node_from(a, row), _rank_from(a, row)


def _get(row: dict, k: str):
    v = row.get(k)
    return None if v is None or (isinstance(v, float) and v != v) else v


def _node_from(a: Attribution, row: dict) -> str | None:
    node, f, ln = _get(row, "node"), _get(row, "file"), _get(row, "line")
    src = _get(row, "node_src")
    kind = NODE_SRC[src - 1] if src else None
    if node is None or kind is None:
        return None
    if kind == "span":
        start = next((s for s, e, n in a.span_node.get(f, []) if s <= ln <= e), None)
        return a.why.get(("span", (f, start)))
    if kind == "subject":
        return a.why.get(("subject", (f, ln)))
    if kind == "host":
        h = short_host(_get(row, "host") or _get(row, "w_host"))
        text = f"{host_field(_get(row, 'source'), _get(row, 'wrapper'))} {h!r} on line {ln}"
        if h in a.alias_node:
            return f"{text}: {a.why.get(('alias', h), '')}"
        if is_ip(h) and h != node:
            return f"{text}, via {a.why.get(('ip', h), '')}"
        return text
    if kind == "ip":
        ip = _get(row, "ip")
        return f"Ray ip={ip} via {a.why.get(('ip', ip), 'a host <-> IP tie')}"
    if kind == "ip_raw":
        return f"Ray ip={_get(row, 'ip')} (no host named for that IP: the IP is the name)"
    if kind == "task":
        t = _get(row, "w_task")
        return a.why.get(("task", (f, step_of(a, f, ln), t)))
    if kind == "pod":
        pod = _get(row, "w_pod")
        return f"kubectl --prefix pod {pod} on line {ln}, on {a.pod_node.get(pod)} ({a.why.get(('pod', pod), '')})"
    if kind == "file":
        return a.why.get(("file", f))
    if kind == "named":
        return f"the node the line names ({node}, line {ln})"
    if kind == "gpu_uuid":
        return f"the GPU it names on line {ln}, {_listed(a, _get(row, 'text'))}"
    return a.why.get(("single", node), "the bundle's only node")


def _rank_from(a: Attribution, row: dict) -> str | None:
    rank, f, ln = _get(row, "rank"), _get(row, "file"), _get(row, "line")
    node, pid = _get(row, "node"), _get(row, "pid")
    src = _get(row, "rank_src")
    kind = RANK_SRC[src - 1] if src else None
    if rank is None or kind is None:
        return None
    if kind == "line":
        if RX["elastic_field"].search(_get(row, "text") or ""):
            return f"its torchelastic failure entry ('rank : {rank}', line {ln})"
        return f"the line's own rank label ([rank{rank}]: or [job,{rank}]<stdout>:, line {ln})"
    if kind == "subject":
        return a.why.get(("subject_rank", (f, ln)))
    where = f"pid {pid}" + (f" on {node}" if node is not None else "")  # (no node: a bundle of one machine)
    if kind == "life":
        epoch = int(epochs(pl.DataFrame({"file": [f], "line": [ln]}), a)[0])
        return f"{where}: " + a.why.get(("life", (node, pid, f, epoch)), "")
    if kind == "pid":
        return f"{where}: " + a.why.get(("pid", (node, pid)), "")
    if kind == "file_rank":
        return a.why.get(("file_rank", f))
    if kind == "bare":
        epoch = int(epochs(pl.DataFrame({"file": [f], "line": [ln]}), a)[0])
        return a.why.get(("bare", (f, epoch, pid))) or a.why.get(("bare", (f, epoch, None)))
    if kind == "task":
        t = _get(row, "w_task")
        return a.why.get(("task_rank", (f, step_of(a, f, ln), t)))
    if kind == "name":
        return a.why.get(("name", _get(row, "proc")))
    if kind == "local":
        loc = _get(row, "local_rank")
        return a.why.get(("local", (node, loc)), f"local rank {loc} on {node}")
    if kind == "rank0":
        return "a deployment of one GPU whose processes print no name: rank 0"
    text = _get(row, "text") or ""
    if kind == "kernel_task":
        task = next((int(m.group(1)) for n in KERNEL_TASK_LINES if (m := re.search(line_rx(n), text))), None)
        inner = a.host_pid.get((node, task))
        proc = a.tid_pid.get((node, task), task) if inner is None else inner
        how = f"host pid {task} is pid {inner} in its container (NSpid); " if inner is not None else \
            (f"thread {task} of pid {proc}; " if proc != task else "")
        return f"the kernel names task {task}: {how}pid {proc} on {node}: {a.why.get(('pid', (node, proc)), '')}"
    if kind == "gpu_uuid":
        uuid_node, bus = a.uuid_bus.get(RX["gpu_uuid"].search(text).group(0).lower())
        index = (gpu_identity(a, uuid_node, bus=bus) or {}).get("index")
        how = a.why.get(("bus_rank", (uuid_node, bus))) or a.why.get(("local", (uuid_node, index)),
                                                                       f"GPU {index} is local rank {index}")
        return f"the GPU it names, {_listed(a, text)}, GPU {index}: {how}"
    bus = kernel_bus(pl.Series([text]))[0]
    if kind == "kernel_bus":
        return f"the GPU at PCI {bus}: {a.why.get(('bus_rank', (node, bus)), '')}"
    gpu = _get(row, "gpu")
    return f"the GPU at PCI {bus} is GPU {gpu} ({a.why.get(('bus_gpu', (node, bus)), 'nvidia-smi')}); " + \
        a.why.get(("local", (node, gpu)), f"GPU {gpu} is local rank {gpu} on {node}")


def _listed(a: Attribution, text: str) -> str:
    """Where the bundle lists the GPU whose UUID `text` names: '<uuid>, at PCI <bus> on <node> (<where>)'."""
    uuid = RX["gpu_uuid"].search(text).group(0)
    node, bus = a.uuid_bus[uuid.lower()]
    where = ", ".join(a.gpus.get((node, bus), {}).get("where", [])[:1])
    return f"{uuid}, at PCI {bus} on {node}" + (f" ({where})" if where else "")


def event_gpu(a: Attribution, row: dict) -> dict | None:
    """The identity of the GPU an event is about (its PCI address in a kernel line, a UUID or board serial it
    prints, else its process's device): {index, bus_id, uuid, serial}."""
    node, text = _get(row, "node"), _get(row, "text") or ""
    if _get(row, "source") == "kernel" and RX["pci_words"].search(text):
        bus = kernel_bus(pl.Series([text]))[0]
        if bus:
            return gpu_identity(a, node, bus=bus)
    if m := RX["gpu_uuid"].search(text):
        if got := gpu_identity(a, node, uuid=m.group(0)):
            return got
    if m := RX["gpu_serial"].search(text):
        if got := gpu_identity(a, node, serial=m.group(1)):
            return got
    gpu = _get(row, "gpu")
    return gpu_identity(a, node, index=gpu) if gpu is not None else None
