"""The rank maps of the first pass: (node, pid) -> global rank per process lifetime, from every line that prints a
rank, the workers' names, Ray's devices; and every GPU's identity (index, PCI bus id, UUID, serial) and its rank."""
from __future__ import annotations

import re
from collections import defaultdict

import polars as pl

from k3logs.catalogue.witnesses import builtin_witnesses

from .attribution import (CONTAINER_WRAPPERS, RX, Attribution, DumpHints, bus_key, epochs, line_rx, nccl_bus, nth,
                          unprefixed)

RAY_WORKERS = ("RayWorkerWrapper", "RayWorkerProc", "RayWorkerVllm")


def fields(frame: pl.DataFrame, line: str, *keep: str) -> pl.DataFrame:
    """`keep` and the named fields of the [[rank_line]] `line` on every row (null where it does not match)."""
    return frame.select(*keep, pl.col("text").str.extract_groups(line_rx(line)).alias("g")).unnest("g")


def learn_ranks(ev: pl.DataFrame, a: Attribution, hints: DumpHints) -> None:
    """The rank maps, each entry with its witness: (node, pid) -> rank per process lifetime, local ranks, NCCL
    devices and bus ids, NCCL_DEBUG_FILE names, worker names, parallel sizes."""
    # lifetimes: the lines where the server started again, per file (the first start opens lifetime 1)
    starts = ev.filter(pl.col("text").str.contains(RX["restart"].pattern).fill_null(False)).group_by("file") \
        .agg(pl.col("line").unique().sort())
    a.restarts = {f: lines for f, lines in starts.iter_rows() if len(lines) > 1}
    ev = ev.with_columns(epochs(ev, a).alias("_epoch"))
    # which lines a container's processes wrote: a container runtime's log, or a file where a vLLM process is pid 1
    # (its first process), but for what Ray relays from other nodes; a container sharing the host's pids is not one
    where = pl.concat_str([pl.col("file"), pl.col("node").fill_null("")], separator="\x00")
    pid1 = ev.filter((pl.col("pid") == 1) & pl.col("proc").is_not_null() & pl.col("ip").is_null()) \
        .select(where.alias("w"))["w"].unique().to_list()
    in_ns = pl.col("wrapper").is_in(list(CONTAINER_WRAPPERS)).fill_null(False) | (
        pl.col("ip").is_null() & where.is_in(pid1)).fill_null(False)
    shares_host = pl.col("file").is_in(list(hints.host_pid_mode))
    for name in sorted(n for n in hints.host_pid_containers if len(n) >= 12):   # (its log: containers/ID/ID-json.log)
        shares_host = shares_host | pl.col("file").str.contains(name, literal=True)
    in_ns = in_ns & ~shares_host
    ranks = ev.filter(pl.col("pid").is_not_null())
    cols = ["node", "pid", "file", "line", "_epoch"]
    assigned = fields(ranks, "assigned", *cols).drop_nulls(["r"])
    world_lines = fields(ranks, "world_line", *cols).drop_nulls(["r"])
    dp_worlds = fields(ranks, "dp_world", *cols).drop_nulls(["r"])
    worlds = [int(w) for w in assigned["w"].to_list() + world_lines["w"].to_list() + dp_worlds["w"].to_list()]
    init = fields(ranks, "nccl_init", *cols).drop_nulls(["r"])
    comm = fields(ranks, "nccl_comm", *cols).drop_nulls(["r"])
    nccl_worlds = [int(w) for w in init["w"].to_list() + comm["w"].to_list()]
    # torchelastic entries: (host, rank, local rank); agents' 'local_rank: L (pid: P)'
    elastic = fields(ev, "elastic_rank", "node", "file", "line").drop_nulls("r")
    printed = fields(ev, "rank_and_local", "node", "file", "line").drop_nulls("r")
    for node, f, ln, r, loc in pl.concat([elastic, printed]).iter_rows():
        if a.local_rank.setdefault((node, int(loc)), int(r)) == int(r):
            a.said("local", (node, int(loc)), f"local rank {loc} on {node} is rank {r} ({f}:{ln})")
    agents = fields(ev, "agent_failed", "node", "file", "line").drop_nulls("l")
    for node, f, ln, loc, pid in agents.iter_rows():
        a.pid_local.setdefault((node, int(pid)), int(loc))
        a.said("pid_local", (node, int(pid)), f"torchelastic 'local_rank: {loc} (pid: {pid})' on {f}:{ln}")
    for node, pid, loc, f, ln in ev.filter(pl.col("local_rank").is_not_null() & pl.col("pid").is_not_null()) \
            .group_by("node", "pid", "local_rank").agg(pl.col("file").first(), pl.col("line").min()).iter_rows():
        a.pid_local.setdefault((node, pid), int(loc))
        a.said("pid_local", (node, pid), f"its local rank prefix [default{loc}] on {f}:{ln}")
    known_rank = max([int(r) for r in elastic["r"].to_list()] or [-1])
    # parallel sizes, for worker names and device ranks when no map exists, and the world of a V0 driver
    for pat, attr in ((line_rx("tp_size"), "tp_size"), (line_rx("pp_size"), "pp_size")):
        found = ev["text"].str.extract(pat, 1).drop_nulls()
        if len(found):
            setattr(a, attr, int(found.mode().sort()[0]))
    a.world_size = max(worlds) if worlds else (max(nccl_worlds) if nccl_worlds else None)
    if not worlds and a.world_size is not None and (known_rank >= a.world_size
                                                    or (a.tp_size or 1) * (a.pp_size or 1) > a.world_size):
        a.world_size = None  # NCCL's largest communicator is not the world (PP/TP groups: a stage's TP group)

    # (node, pid) -> rank, per lifetime: every observation, then the pids that keep one rank everywhere
    seen: dict[tuple, dict[tuple, tuple[int, str]]] = defaultdict(dict)   # (node, pid) -> {(file, epoch): (rank, why)}

    def observe(node, pid, f, epoch, r, why, weak=False):
        by_life = seen[(node, pid)]
        if weak and (f, epoch) in by_life:
            return
        by_life.setdefault((f, epoch), (int(r), why))

    # (each DP engine in a world of its own, 'rank 0 in world size 8' under DP rank 0 and under DP rank 1: a rank's
    # place in the deployment counts the worlds of the DP ranks before its own; the deployment's world is all of them)
    per_engine = assigned.group_by("r", "w").agg(pl.col("dp").n_unique().alias("n"))["n"].max() or 0
    if per_engine > 1:
        assigned = assigned.with_columns((pl.col("dp").cast(pl.Int64) * pl.col("w").cast(pl.Int64)
                                          + pl.col("r").cast(pl.Int64)).alias("r"))
        a.world_size = int(assigned["w"].cast(pl.Int64).max()) * assigned["dp"].n_unique()
    for node, pid, f, ln, ep, r, w_, *_ in assigned.select(*cols, "r", "w").iter_rows():
        observe(node, pid, f, ep, r, f"'rank {r} in world size {w_}' on {f}:{ln}")
    for node, pid, f, ln, ep, r, w_ in dp_worlds.select(*cols, "r", "w").iter_rows():
        observe(node, pid, f, ep, r, f"'Adjusting world_size={w_} rank={r} ... for DP' on {f}:{ln}")
    for node, f, ln, ep, r, p in fields(ev, "launched", "node", "file", "line", "_epoch").drop_nulls("r").iter_rows():
        observe(node, int(p), f, ep, r, f"the launcher's 'rank {r} pid {p}' on {f}:{ln}", weak=True)
    for node, pid, f, ln, ep, w_, r, loc in world_lines.select(*cols, "w", "r", "l").iter_rows():
        observe(node, pid, f, ep, r, f"'world_size={w_} rank={r}' on {f}:{ln}", weak=True)
        a.pid_local.setdefault((node, pid), int(loc))
        if a.local_rank.setdefault((node, int(loc)), int(r)) == int(r):
            a.said("local", (node, int(loc)), f"local rank {loc} on {node} is rank {r} ({f}:{ln})")
    for node, pid, f, ln, ep, r, w_, dev, bus in init.select(*cols, "r", "w", "dev", "bus").iter_rows():
        a.pid_gpu.setdefault((node, pid), int(dev))
        key = (node, nccl_bus(bus))
        if a.bus_gpu.setdefault(key, int(dev)) == int(dev):
            a.device_buses.add(key)
        a.said("bus_gpu", key, f"NCCL busId {bus} = cudaDev {dev} on {f}:{ln}")
        a.bus_pid.setdefault(key, pid)
        if a.world_size and int(w_) == a.world_size:
            observe(node, pid, f, ep, r, f"NCCL 'rank {r} nranks {w_}' (world) busId {bus} on {f}:{ln}", weak=True)
            if a.bus_rank.setdefault(key, int(r)) == int(r):
                a.said("bus_rank", key, f"NCCL busId {bus} (rank {r}) on {f}:{ln}")
    for node, pid, tid in ranks.filter(pl.col("tid").is_not_null() & (pl.col("tid") != pl.col("pid"))) \
            .select("node", "pid", "tid").unique().iter_rows():
        a.tid_pid.setdefault((node, int(tid)), pid)
    # any NCCL line names its process's CUDA device ('host:pid:tid [dev] NCCL ...')
    for node, pid, dev in ranks.filter(pl.col("dev").is_not_null() & (pl.col("source") == "nccl")) \
            .select("node", "pid", "dev").unique().iter_rows():
        a.pid_gpu.setdefault((node, pid), int(dev))
    for node, pid, f, ln, ep, r, w_ in comm.select(*cols, "r", "w").iter_rows():
        if a.world_size and int(w_) == a.world_size:
            observe(node, pid, f, ep, r, f"NCCL 'rank {r} nRanks {w_}' (world) on {f}:{ln}", weak=True)
    # NCCL_DEBUG_FILE-style names that carry the rank (nccl-rank6.log)
    for f in sorted(ev.filter(pl.col("source") == "nccl")["file"].unique().to_list()):
        m = RX["node_file_name"].search(f.rsplit("/", 1)[-1])
        if m:
            a.file_rank[f] = int(m.group(1))
            a.said("file_rank", f, f"its NCCL_DEBUG_FILE name {f.rsplit('/', 1)[-1]}")
    for (f, node, pid, ep) in ev.filter(pl.col("file").is_in(list(a.file_rank)) & pl.col("pid").is_not_null()) \
            .select("file", "node", "pid", "_epoch").unique().iter_rows():
        observe(node, pid, f, ep, a.file_rank[f], a.why[("file_rank", f)], weak=True)
    # the one process of a file that prints its lines with no prefix (V0's driver worker in the engine, a single
    # process run): its 'rank R in world size W' line gives its other unprefixed lines that rank, as does the
    # handle of the message queue V0's driver writes for the other ranks of its node, when they are all the
    # world's but one: it is rank 0 (a later node's first worker writes one for its node's local ranks too)
    said = pl.col("text").str.extract(line_rx("assigned"), 1).cast(pl.Int32)
    readers = pl.col("text").str.extract(line_rx("driver_writer"), 1).str.count_matches(",") + 1
    world = a.world_size or (a.tp_size or 0) * (a.pp_size or 1)
    writes = pl.when(readers + 1 == world).then(pl.lit(0, pl.Int32))
    how = pl.when(said.is_not_null()).then(pl.lit("its 'rank R in world size' line")) \
        .otherwise(pl.lit("the handle of the message queue V0's driver worker (rank 0) writes for its node's ranks"))
    bare = ev.filter(unprefixed()) \
        .select("file", "line", "_epoch", "pid", pl.coalesce(said, writes).alias("r"), how.alias("how")) \
        .drop_nulls("r").sort("line").group_by("file", "_epoch", "pid") \
        .agg(pl.col("r").unique(), pl.col("line").first(), pl.col("how").first())
    for f, ep, pid, rs, ln, said_how in bare.iter_rows():
        if len(rs) == 1:
            a.bare_rank[(f, ep, pid)] = rs[0]
            a.said("bare", (f, ep, pid), f"the file's unprefixed process: {said_how} on {f}:{ln}")
    for (node, pid), by_life in seen.items():
        values = {r for r, _ in by_life.values()}
        if len(values) == 1:
            (r, why), = [min(by_life.values(), key=lambda v: v[1])]
            a.pid_rank[(node, pid)] = r
            a.said("pid", (node, pid), why)
        else:  # a pid reused by another process after a restart: each lifetime keeps its own rank
            for (f, epoch), (r, why) in by_life.items():
                a.life_rank[(node, pid, f, epoch)] = r
                a.said("life", (node, pid, f, epoch), why + " (this lifetime of the pid)")
    # pids seen only in a container's output are not the host pids the kernel prints
    in_container = ev.filter(pl.col("pid").is_not_null()).with_columns(in_ns.alias("_ns")).group_by("node", "pid") \
        .agg(pl.col("_ns").all().alias("_c"))
    a.container_pids = {(n, p) for n, p, c in in_container.iter_rows() if c}
    for host, inner in sorted(hints.pid_ns.items()):
        # (the node of the file that read /proc there; else each node whose container shows that pid)
        own = a.file_node.get(hints.pid_ns_file.get(host, ""))
        for node in {own} if own else {n for n, p in a.container_pids if p == inner} or {a.single_node}:
            a.host_pid.setdefault((node, host), inner)
    # a process known only by its local rank takes the global rank that local rank has on its node; with
    # the default CUDA_VISIBLE_DEVICES a worker's local rank is its CUDA device (NCCL's [dev])
    for (node, pid), loc in a.pid_local.items():
        if (node, loc) in a.local_rank and (node, pid) not in a.pid_rank:
            a.pid_rank[(node, pid)] = a.local_rank[(node, loc)]
            a.said("pid", (node, pid), f"{a.why.get(('pid_local', (node, pid)), 'its local rank')}; "
                                       f"{a.why.get(('local', (node, loc)), '')}".rstrip("; "))
    single_replica = len({n for n, _ in a.pid_gpu}) <= 1 and (
        a.world_size is None or a.tp_size is None or a.world_size == a.tp_size * (a.pp_size or 1))
    for (node, pid), dev in a.pid_gpu.items():
        if (node, pid) in a.pid_rank:
            continue
        if (node, dev) in a.local_rank:
            a.pid_rank[(node, pid)] = a.local_rank[(node, dev)]
            a.said("pid", (node, pid), f"its NCCL device [{dev}] = local rank {dev}; "
                                       f"{a.why.get(('local', (node, dev)), '')}".rstrip("; "))
        elif single_replica and a.tp_size and (a.pp_size or 1) == 1:
            a.pid_rank[(node, pid)] = dev  # one node, tensor parallel only: rank = TP rank = device
            a.said("pid", (node, pid), f"its NCCL device [{dev}] (one node, tensor parallel {a.tp_size} only)")
    _ray_device_ranks(ev, a)
    for (node, bus), pid in a.bus_pid.items():
        if (node, pid) in a.pid_rank and a.bus_rank.setdefault((node, bus), a.pid_rank[(node, pid)]) == \
                a.pid_rank[(node, pid)]:
            a.said("bus_rank", (node, bus), f"NCCL busId of pid {pid} ({a.why.get(('bus_gpu', (node, bus)), '')}); "
                                            f"pid {pid} is rank {a.pid_rank[(node, pid)]}: "
                                            f"{a.why.get(('pid', (node, pid)), '')}")
    first_line = {p: (f, ln) for p, f, ln in ev.filter(pl.col("proc").is_not_null()).group_by("proc")
                  .agg(pl.col("file").first(), pl.col("line").min()).iter_rows()}
    a.name_rank = _name_ranks(sorted(ev["proc"].drop_nulls().unique().to_list()), a)
    for p, r in a.name_rank.items():
        f, ln = first_line.get(p, ("", 0))
        sizes = f"TP {a.tp_size or 1} x PP {a.pp_size or 1}"
        a.said("name", p, f"the worker's name {p!r} ({sizes}; first on {f}:{ln})")
    # a worker's pid takes the rank its name gives, where no line says it (a kernel line names the pid only)
    named = ev.filter(pl.col("proc").is_in(list(a.name_rank)) & pl.col("pid").is_not_null()) \
        .group_by("node", "pid").agg(pl.col("proc").unique())
    for node, pid, procs in named.iter_rows():
        if len(procs) == 1 and (node, pid) not in a.pid_rank:
            a.pid_rank[(node, pid)] = a.name_rank[procs[0]]
            a.said("pid", (node, pid), a.why[("name", procs[0])])
    # a host pid whose title a process listing of its node shows ('48377 VLLM::Worker_TP1': systemctl status, ps)
    # takes the rank the title's worker name gives: a kernel line names the pid with its comm cut short
    for file, titles in hints.proc_titles.items():
        node = a.file_node.get(file) or a.single_node
        ranks = _name_ranks(sorted(set(titles.values())), a)
        for pid, title in titles.items():
            if title in ranks and (node, pid) not in a.pid_rank:
                a.pid_rank[(node, pid)] = ranks[title]
                a.said("pid", (node, pid), f"the process listing in {hints.where[('process_title', file, pid)]} "
                                           f"(pid {pid} is {title})")
    # a single-GPU deployment whose processes print no name (V0, early V1): its output is rank 0's
    a.unnamed_rank0 = (a.tp_size or 0) * (a.pp_size or 1) == 1 and a.world_size in (None, 1) \
        and ev["proc"].is_null().all()
    for file, buses in hints.gpu_buses.items():
        node = a.file_node.get(file) or a.single_node
        for i, b in enumerate(buses):
            if a.bus_gpu.setdefault((node, b), i) == i:
                a.said("bus_gpu", (node, b), f"nvidia-smi in {file}: GPU {i} is {b}")
    # the GPUs a deployment's processes see, where it named them (CUDA_VISIBLE_DEVICES=4,5,6,7: its device 2 is the
    # host's GPU 6); one list for every node where the file that says it is no node's, and only one such list
    for file, devices in hints.visible.items():
        a.visible.setdefault(a.file_node.get(file), devices)
        a.said("visible", a.file_node.get(file), f"CUDA_VISIBLE_DEVICES={','.join(map(str, devices))} "
                                                 f"({hints.where.get(('visible', file), file)})")
    if None in a.visible and len({v for f, v in hints.visible.items() if a.file_node.get(f) is None}) > 1:
        del a.visible[None]
    # (a node's own lines that echo the list: each node by its lines, in a job's output of every node)
    rx = line_rx("visible_devices")
    echoed = ev.filter(pl.col("node").is_not_null() & pl.col("text").str.contains(rx)).select(
        "node", "file", "line", pl.col("text").str.extract(rx, 1).alias("_v"))
    for (node,), g in echoed.group_by("node"):
        if g["_v"].n_unique() == 1 and node not in a.visible:
            a.visible[node] = tuple(int(v) for v in g["_v"][0].split(","))
            a.said("visible", node, f"CUDA_VISIBLE_DEVICES={g['_v'][0]} ({g['file'][0]}:{g['line'].min()})")
    for file, gpus in hints.gpu_ids.items():   # (a GPU named with its index: one nvidia-smi could not open too)
        node = a.file_node.get(file) or a.single_node
        for g in gpus:
            if (b := g.get("bus_id")) and str(i := g.get("index", "")).isdigit() \
                    and a.bus_gpu.setdefault((node, b), int(i)) == int(i):
                a.said("bus_gpu", (node, b), f"nvidia-smi in {file}: GPU {i} is {b} ({g['where']})")
    # an HCA's kernel lines are about the GPU on its PCIe switch (its rail): 'mlx5_core ADDR mlx5_3:' names
    # the HCA at ADDR, nvidia-smi topo's PIX cell the GPU next to mlx5_3
    hca_gpu = {(a.file_node.get(f) or a.single_node, hca): (g, f) for f, by in hints.nic_gpu.items()
               for hca, g in by.items()}
    if hca_gpu:
        named = fields(ev.filter(pl.col("source") == "kernel"), "hca_named", "node").drop_nulls("hca").unique()
        for node, dom, bus, dev, hca in named.iter_rows():
            if (node, hca) in hca_gpu:
                g, f = hca_gpu[(node, hca)]
                if a.bus_gpu.setdefault((node, bus_key(dom, bus, dev)), g) == g:
                    a.said("bus_gpu", (node, bus_key(dom, bus, dev)),
                           f"the HCA {hca} at {bus_key(dom, bus, dev)} is on GPU {g}'s PCIe switch ({f})")
    _block_local_ranks(a, hints)


def _block_local_ranks(a: Attribution, hints: DumpHints) -> None:
    """Every launcher vLLM uses numbers ranks node by node, each node's in device order (torchrun, vLLM's multi-node
    workers, its Ray executor: the driver's node first), so a rank's local rank is its place in its node's block.
    The block is what the node's known ranks fill where every node's fill one of one size (two ranks or more);
    else the world split evenly over the nodes the bundle shows ranks on, each node's known ranks inside one block
    of it, and no node's nvidia-smi table with fewer GPUs than a block (a node the bundle lacks makes them larger)."""
    by_node: dict = defaultdict(set)
    for (node, _), r in a.pid_rank.items():
        by_node[node].add(r)
    if None in by_node or not by_node:
        return
    sizes = {len(rs) for rs in by_node.values()}
    if len(sizes) == 1 and min(sizes) > 1 and all(max(rs) - min(rs) + 1 == len(rs) for rs in by_node.values()):
        for node, rs in by_node.items():
            for r in rs:
                if a.local_rank.setdefault((node, r - min(rs)), r) == r:
                    a.said("local", (node, r - min(rs)), f"rank {r} is local rank {r - min(rs)}: {node} holds ranks "
                                                         f"{min(rs)}-{max(rs)}, in order")
        return
    if not a.world_size or len(by_node) < 2 or a.world_size % len(by_node):
        return
    per = a.world_size // len(by_node)
    block = {node: {r // per for r in rs} for node, rs in by_node.items()}
    gpus = {a.file_node.get(f) or a.single_node: len(buses) for f, buses in hints.gpu_buses.items()}
    if any(len(b) != 1 for b in block.values()) or len({next(iter(b)) for b in block.values()}) < len(block) \
            or any(gpus.get(n, per) < per for n in by_node):
        return
    for node, (b,) in block.items():
        for d in range(per):
            r = b * per + d
            if a.local_rank.setdefault((node, d), r) == r:
                a.said("local", (node, d), f"local rank {d} on {node} is rank {r}: {node} holds ranks {b * per}-"
                                           f"{b * per + per - 1} (ranks {', '.join(map(str, sorted(by_node[node])))} "
                                           f"of world {a.world_size} over {len(by_node)} nodes, node by node)")


def _ray_device_ranks(ev: pl.DataFrame, a: Attribution) -> None:
    """Ranks of Ray workers that printed no rank line (they died in communicator setup) from their NCCL device:
    vLLM's Ray executor numbers its workers node by node, the driver's node first, then the others by IP, each
    node's in device order. Only when every worker's node is known, the nodes hold the world evenly, and every
    rank the bundle does print agrees."""
    procs = set(ev["proc"].drop_nulls().unique().to_list())
    world = a.world_size or ((a.tp_size or 0) * (a.pp_size or 1) or None)
    if not world or not procs & set(RAY_WORKERS):
        return
    relayed = ev.filter(pl.col("ip").is_not_null() & pl.col("node").is_not_null())
    driver = ev.filter(pl.col("ip").is_null() & pl.col("proc").is_null() & pl.col("node").is_not_null()
                       & (pl.col("source") == "vllm"))
    heads = set(driver.filter(pl.col("file").is_in(relayed["file"].unique().to_list()))["node"].unique().to_list())
    workers = {n for n, _ in a.pid_gpu} | heads
    if len(heads) != 1 or len(workers) < 2 or world % len(workers):
        return
    head = next(iter(heads))
    node_ip = {n: ip for ip, n in sorted(a.ip_node.items()) if n in workers}
    others = sorted(workers - {head}, key=lambda n: node_ip.get(n, ""))
    if len(others) > 1 and not all(n in node_ip for n in others):
        return
    order, per_node = [head, *others], world // len(workers)
    derived = {(n, p): order.index(n) * per_node + d for (n, p), d in a.pid_gpu.items() if d < per_node}
    if any(a.pid_rank[k] != r for k, r in derived.items() if k in a.pid_rank) or len(derived) < len(a.pid_gpu):
        return
    for (n, p), r in derived.items():
        if (n, p) not in a.pid_rank:
            a.pid_rank[(n, p)] = r
            a.said("pid", (n, p), f"its NCCL device [{a.pid_gpu[(n, p)]}] on {n}, the {nth(order.index(n) + 1)} "
                                  f"of {len(order)} nodes of {per_node} ranks each in vLLM's Ray order (the driver's "
                                  f"node {head} first, then by IP)")


def learn_gpus(ev: pl.DataFrame, a: Attribution, hints: DumpHints) -> None:
    """Each node's GPUs by bus id: index, UUID, board serial (nvidia-smi -q / -L / table, the kernel's own
    'GPU at PCI:... GPU-<uuid>' and serial lines), for the report's hardware causes."""
    for f, gpus in sorted(hints.gpu_ids.items()):
        node = a.file_node.get(f) or a.single_node
        for g in gpus:
            bus = g.get("bus_id")
            if not bus:
                bus = next((b for (n, b), i in a.bus_gpu.items() if n == node and str(i) == g.get("index")), None)
            if bus:
                _gpu_entry(a, node, bus, g, g["where"])
    kern = ev.filter((pl.col("source") == "kernel") & pl.col("text").str.contains("GPU at PCI|Board Serial Number"))
    last_bus: dict[tuple, str] = {}
    for f, ln, node, text in kern.sort("file", "line").select("file", "line", "node", "text").iter_rows():
        if m := re.search(line_rx("gpu_at"), text):
            bus = bus_key(m.group("dom"), m.group("bus"), m.group("dev"))
            last_bus[(f, node)] = bus
            _gpu_entry(a, node, bus, {"uuid": m.group("uuid")}, f"{f}:{ln}")
        elif (m := re.search(line_rx("gpu_serial"), text)) and (f, node) in last_bus:
            _gpu_entry(a, node, last_bus[(f, node)], {"serial": m.group("serial")}, f"{f}:{ln}")
    # a listing a log holds (a job's own nvidia-smi): the index of each UUID, so of the bus the kernel names with it
    rx = line_rx("gpu_listed")
    listed = ev.filter(pl.col("text").str.contains(rx)).select("file", "line", pl.col("text").str.extract_groups(rx)
                                                                .alias("_g")).unnest("_g")
    index_of = {(u or u2).lower(): (int(i or i2), f"{f}:{ln}") for f, ln, i, u, i2, u2
                in listed.select("file", "line", "index", "uuid", "index2", "uuid2").iter_rows()}
    for (node, bus), g in a.gpus.items():
        got = index_of.get(str(g.get("uuid", "")).lower())
        if got and a.bus_gpu.setdefault((node, bus), got[0]) == got[0]:
            a.said("bus_gpu", (node, bus), f"GPU {got[0]} is {g['uuid']} ({got[1]}), at {bus} by the kernel")
    for (node, bus), i in a.bus_gpu.items():
        if (node, bus) in a.gpus:
            a.gpus[(node, bus)]["index"] = i
    for g in a.gpus.values():   # `-q -i N` prints no index: its minor number (the /dev/nvidiaN it is) is the best
        if "index" not in g and "minor" in g:
            g["index"] = g["minor"]


def _gpu_entry(a: Attribution, node: str | None, bus: str, fields: dict, where: str) -> None:
    g = a.gpus.setdefault((node, bus), {"bus_id": bus})
    for k in ("index", "uuid", "serial", "minor"):
        v = fields.get(k)
        if v not in (None, "", "N/A") and k not in g:
            g[k] = int(v) if k in ("index", "minor") and str(v).isdigit() else v
            g.setdefault("where", []).append(where)
    if g.get("uuid"):
        a.uuid_bus.setdefault(g["uuid"].lower(), (node, bus))
    if g.get("serial"):
        a.serial_bus.setdefault(str(g["serial"]), (node, bus))


def gpu_identity(a: Attribution, node: str | None, bus: str | None = None, index: int | None = None,
                 uuid: str | None = None, serial: str | None = None) -> dict | None:
    """What the bundle says about one GPU: {index, bus_id, uuid, serial} (None where unknown; None when the GPU
    cannot be named), from any of its names: PCI bus id, index on its node, UUID, board serial."""
    key = None
    if bus:
        key = (node, bus) if (node, bus) in a.gpus or (node, bus) in a.bus_gpu else \
            next(((n, b) for (n, b) in a.gpus if b == bus), (node, bus))
    elif uuid and uuid.lower() in a.uuid_bus:
        key = a.uuid_bus[uuid.lower()]
    elif serial and serial in a.serial_bus:
        key = a.serial_bus[serial]
    elif index is not None:
        key = next(((n, b) for (n, b), i in a.bus_gpu.items() if n == node and i == index), None)
    if key is None or (key not in a.gpus and key not in a.bus_gpu):   # an address no GPU has (an HCA's)
        return None if index is None else {"index": index, "bus_id": None, "uuid": None, "serial": None}
    g = a.gpus.get(key, {})
    idx = g.get("index", a.bus_gpu.get(key, index))
    out = {"index": idx, "bus_id": key[1], "uuid": g.get("uuid"), "serial": g.get("serial")}
    return out if any(v is not None for v in out.values()) else None


def _name_ranks(procs: list[str], a: Attribution) -> dict[str, int]:
    """Global rank from a worker's name (patterns/attribution.toml [[worker]]), when the layout makes it
    unambiguous. On a single-GPU deployment the engine core is the only worker: rank 0."""
    w = builtin_witnesses()
    out = {}
    single = (a.tp_size or 0) * (a.pp_size or 1) == 1 and a.world_size in (None, 1)
    for p in procs:
        hit = w.worker(p)
        if not hit:
            continue
        entry, g = hit
        if single and entry.single:
            out[p] = 0
            continue
        if "engine" in g and "tp" not in g:
            # one GPU per data-parallel engine: the engine's index is its rank
            if a.tp_size == 1 and (a.pp_size or 1) == 1 and a.world_size and g["engine"] < a.world_size:
                out[p] = g["engine"]
            continue
        tp = g.get("tp")
        if tp is None:
            continue
        dp, pp = g.get("dp", 0), g.get("pp", 0)
        if dp and (a.world_size is None or a.tp_size is None):
            continue
        if pp and a.tp_size is None:
            continue
        tp_size, pp_size = a.tp_size or 1, a.pp_size or 1
        if not dp and not pp and a.world_size and a.tp_size and a.world_size != a.tp_size * pp_size:
            continue  # several replicas: the TP rank alone does not give the global rank
        out[p] = (dp * pp_size + pp) * tp_size + int(tp)
    return out
