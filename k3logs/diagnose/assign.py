"""The second pass: every event gets its node, rank and GPU from the maps the first pass learnt (attribute.learn), each
with the code of the witness that gave it (NODE_SRC, RANK_SRC); kernel lines about a task or a PCI device take that
process's or that GPU's rank."""
from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import polars as pl

from k3logs.catalogue.witnesses import builtin_witnesses
from k3logs.schema import MIXED, at_rows, the_one

from .attribution import KERNEL_TASK_LINES, RX, Attribution, elastic_entries, ensure, epochs, line_rx, unprefixed
from .ranks import gpu_identity

SHORT_HOST = r"^([A-Za-z][\w-]*)\..*$"
MAX_LOCAL_GPUS = 64   # (a node's GPUs, at most)
NODE_SRC = ("span", "subject", "host", "ip", "ip_raw", "task", "pod", "file", "named", "single",
            "gpu_uuid")  # node_src 1..
RANK_SRC = ("line", "subject", "life", "pid", "file_rank", "bare", "task", "name", "local", "rank0", "kernel_task",
            "kernel_bus", "kernel_local", "gpu_uuid")  # rank_src 1..


def rank_code(kind: str) -> int:
    """rank_src's code for a kind of witness."""
    return RANK_SRC.index(kind) + 1


def _bare(ev: pl.DataFrame, a: Attribution) -> pl.Series:
    """The rank of a file's unprefixed process (by its journal pid, if any), on its unprefixed lines of vLLM, of
    Python (a library's warning) and tracebacks."""
    if not a.bare_rank:
        return pl.repeat(None, ev.height, dtype=pl.Int32, eager=True)
    right = pl.DataFrame([(f, e, p, r) for (f, e, p), r in a.bare_rank.items()], orient="row",
                         schema={"file": pl.String, "_epoch": pl.Int32, "pid": ev.schema["pid"], "_v": pl.Int32})
    got = ev.select("file", epochs(ev, a).alias("_epoch"), "pid").join(
        right, on=["file", "_epoch", "pid"], how="left", maintain_order="left", nulls_equal=True)["_v"]
    own = ev.select(unprefixed() & pl.col("source").is_in(["vllm", "traceback", "python", "plain"])).to_series()
    return pl.select(pl.when(pl.lit(own)).then(pl.lit(got))).to_series()


def file_pids(ev: pl.DataFrame) -> pl.DataFrame:
    """A line with no pid of its own in a file named after the one process that wrote it (a Ray worker's
    worker-ID-JOB-PID.out) is that process's."""
    files = ev["file"].unique().to_list()
    named = {f: int(m.group("pid")) for f in files if (m := RX["ray_worker_log"].search(f))}
    if not named:
        return ev
    return ev.with_columns(pl.coalesce("pid", _mapped(ev, "file", named, pl.Int64)).alias("pid"))


def host_columns(ev: pl.DataFrame) -> pl.DataFrame:
    """`_h`: the host a line names itself (NCCL, torchelastic, journald), cut to its short name. A wrapper's
    host (journald's) is where the line was written: a line Ray relays from a worker on another node (its
    prefix's ip=) is that node's, not the driver's; and a line an `srun -l` label carries (`_hw`: the wrapper's
    host, after the task's node) is its task's, which srun's client wrote down on its own host."""
    labelled = pl.col("w_task").is_not_null() & pl.col("ip").is_null()
    written = pl.when(pl.col("ip").is_null() & pl.col("w_task").is_null()).then(pl.col("w_host"))
    named = ev.select(pl.coalesce(pl.col("host"), written)).to_series()
    ev = ev.with_columns(pl.when(labelled).then(pl.col("w_host")).str.replace(SHORT_HOST, "${1}").alias("_hw"))
    # (a word where a wrapper's host stands that no host is named: a log level, 'TIME WARN prog: ...')
    if bad := [h for h in named.unique().drop_nulls().to_list() if not builtin_witnesses().is_host(h)]:
        named = ev.select(pl.when(named.is_in(bad)).then(None).otherwise(named)).to_series()
        ev = ev.with_columns(pl.when(pl.col("_hw").is_in(bad)).then(None).otherwise(pl.col("_hw")).alias("_hw"))
    if (one := the_one(named)) is not MIXED:  # (cut by the same engine, once)
        return ev.with_columns(pl.lit(pl.Series([one], dtype=pl.String).str.replace(SHORT_HOST, "${1}")[0],
                                      pl.String).alias("_h"))
    return ev.with_columns(named.str.replace(SHORT_HOST, "${1}").alias("_h"))


def _mapped(ev: pl.DataFrame, col: str, mapping: dict, dtype: pl.DataType) -> pl.Expr:
    """`col` looked up in `mapping` (null where it has no entry): a hash lookup, no join of the whole frame."""
    if not mapping or col not in ev.columns:
        return pl.lit(None, dtype)
    if (one := the_one(ev[col])) is not MIXED:
        return pl.lit(mapping.get(one), dtype)
    return pl.col(col).replace_strict(mapping, default=None, return_dtype=dtype)


def _own_host(ev: pl.DataFrame, a: Attribution) -> pl.Expr:
    """The host a line prints, as a node: a pod's or container's hostname becomes its node (or nothing), an IP
    its host."""
    table = {**{ip: n for ip, n in a.ip_node.items()}, **a.alias_node}
    if not table:
        return pl.col("_h")
    if (one := the_one(ev["_h"])) is not MIXED:
        return pl.lit(table.get(one, one) if one is not None else None, pl.String)
    known = pl.col("_h").is_in(list(table))
    return pl.when(known).then(pl.col("_h").replace_strict(
        {k: v for k, v in table.items() if v is not None}, default=None, return_dtype=pl.String)) \
        .otherwise(pl.col("_h"))


def _by_file_line(ev: pl.DataFrame, table: dict[tuple[str, int], object], dtype: pl.DataType = pl.String
                  ) -> pl.Series:
    """`table`'s value at each row's (file, line), null elsewhere."""
    if not table:
        return pl.repeat(None, ev.height, dtype=dtype, eager=True)
    files = {f for f, _ in table}
    if (one := the_one(ev["file"])) is not MIXED and one not in files:
        return pl.repeat(None, ev.height, dtype=dtype, eager=True)
    right = pl.DataFrame([(f, ln, v) for (f, ln), v in table.items()],
                         schema={"file": pl.String, "line": pl.Int64, "_v": dtype}, orient="row")
    return ev.select("file", "line").join(right, on=["file", "line"], how="left", maintain_order="left")["_v"]


def _spans(ev: pl.DataFrame, table: dict[str, list[tuple[int, int, object]]], dtype=pl.String) -> pl.Series:
    """The value of the object (a Kubernetes event in events JSON: its node, its time) whose lines hold each row,
    null elsewhere."""
    out = pl.repeat(None, ev.height, dtype=dtype, eager=True)
    if not table:
        return out
    files, lines = ev["file"], ev["line"].to_numpy()
    vals = np.full(ev.height, None, dtype=object)
    for f, spans in table.items():
        idx = (files == f).fill_null(False).arg_true().to_numpy()
        if not len(idx):
            continue
        starts = np.array([s for s, _, _ in spans], dtype=np.int64)
        ends = np.array([e for _, e, _ in spans], dtype=np.int64)
        nodes = np.array([n for _, _, n in spans], dtype=object)
        i = np.searchsorted(starts, lines[idx], side="right") - 1
        inside = (i >= 0) & (lines[idx] <= ends[np.clip(i, 0, None)])
        vals[idx[inside]] = nodes[i[inside]]
    return pl.Series(vals.tolist(), dtype=dtype)


def _by_task(ev: pl.DataFrame, a: Attribution, table: dict[tuple[str, int, int], object], dtype) -> pl.Series:
    """`table`'s value at each labelled row's (file, Slurm step, task), null elsewhere."""
    if not table or ev["w_task"].null_count() == ev.height:
        return pl.repeat(None, ev.height, dtype=dtype, eager=True)
    steps = np.zeros(ev.height, dtype=np.int64)
    files, lines = ev["file"], ev["line"].to_numpy()
    for f, st in a.steps.items():
        idx = (files == f).fill_null(False).arg_true().to_numpy()
        if len(idx):
            steps[idx] = np.searchsorted(np.array(st, dtype=np.int64), lines[idx], side="right")
    right = pl.DataFrame([(f, s, t, v) for (f, s, t), v in table.items()],
                         schema={"file": pl.String, "_step": pl.Int64, "w_task": pl.Int32, "_v": dtype}, orient="row")
    return ev.select("file", pl.Series("_step", steps), pl.col("w_task").cast(pl.Int32)) \
        .join(right, on=["file", "_step", "w_task"], how="left", maintain_order="left")["_v"]


def _coded(exprs: list[pl.Expr], codes: list[int] | None = None) -> tuple[pl.Expr, pl.Expr]:
    """coalesce(exprs) and the code of the one that gave the value (`codes`, else its 1-based position; null:
    none)."""
    code = pl.lit(None, pl.Int8)
    for i, e in reversed(list(zip(codes or range(1, len(exprs) + 1), exprs))):
        code = pl.when(e.is_not_null()).then(pl.lit(i, pl.Int8)).otherwise(code)
    return pl.coalesce(exprs), code


def apply_nodes(ev: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    ev = ensure(ev)
    node, code = _coded([pl.lit(_spans(ev, a.span_node)), pl.lit(_by_file_line(ev, a.subject_node)), _own_host(ev, a),
                         _mapped(ev, "ip", a.ip_node, pl.String), pl.col("ip"),
                         pl.lit(_by_task(ev, a, a.task_node, pl.String)), pl.col("_hw"),
                         _mapped(ev, "w_pod", a.pod_node, pl.String), _mapped(ev, "file", a.file_node, pl.String)],
                        [1, 2, 3, 4, 5, 6, 3, 7, 8])
    ev = ev.with_columns(node.alias("node"), code.alias("node_src")).drop("_h", "_hw")
    # a line with no node of its own that names one of the bundle's nodes (a Kubernetes event row,
    # 'assigned ... to <node>'); else the bundle's only node
    missing = ev["node"].is_null()
    if a.nodes and missing.any():
        names = "|".join(re.escape(n) for n in sorted(a.nodes, key=len, reverse=True))
        idx = missing.arg_true()
        named = ev["text"].gather(idx).str.extract(rf"(?:^|[\s/=:'\"(])({names})(?:$|[\s,.;:'\")])", 1)
        ev = ev.with_columns(ev["node"].scatter(idx, named), ev["node_src"].scatter(idx, _code_where(named, 9)))
    # a line with no node that names a GPU by its UUID (a device plugin's, DCGM's) is about the node whose GPU
    # listing holds that UUID: UUIDs are unique
    listed = {u: n for u, (n, _) in a.uuid_bus.items() if n is not None}
    idx = _naming_a_gpu(ev, ev["node"].is_null()) if listed else None
    if idx is not None and len(idx):
        named = _uuid_in(ev["text"].gather(idx)).replace_strict(listed, default=None, return_dtype=pl.String)
        ev = ev.with_columns(ev["node"].scatter(idx, named), ev["node_src"].scatter(idx, _code_where(named, 11)))
    if a.single_node:
        ev = ev.with_columns(pl.when(pl.col("node").is_null()).then(pl.lit(10, pl.Int8)).otherwise(pl.col("node_src"))
                             .alias("node_src"), pl.col("node").fill_null(a.single_node))
    return ev


def _naming_a_gpu(ev: pl.DataFrame, where: pl.Series) -> pl.Series:
    """The rows among `where` whose text names a GPU by UUID."""
    return (where & ev["text"].str.contains("GPU-", literal=True)).fill_null(False).arg_true()


def _uuid_in(text: pl.Series) -> pl.Series:
    """The GPU UUID each line names, lower case (null where none)."""
    return text.str.extract(f"({RX['gpu_uuid'].pattern})", 1).str.to_lowercase()


def uuid_ranks(a: Attribution) -> dict[str, int]:
    """GPU UUID -> the rank on that GPU: the rank NCCL saw on its bus, else the one on its index."""
    local = gpu_ranks(a)
    out = {}
    for uuid, (node, bus) in a.uuid_bus.items():
        index = (gpu_identity(a, node, bus=bus) or {}).get("index")
        rank = a.bus_rank.get((node, bus), local.get((node, index)) if index is not None else None)
        if node is not None and rank is not None:
            out[uuid] = rank
    return out


def _gpu_named(ev: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """A line with no rank that names a GPU by UUID takes the rank on that GPU."""
    ranks = uuid_ranks(a) if a.uuid_bus else {}
    idx = _naming_a_gpu(ev, ev["rank"].is_null()) if ranks else None
    if idx is None or not len(idx):
        return ev
    rank = _uuid_in(ev["text"].gather(idx)).replace_strict(ranks, default=None, return_dtype=pl.Int32)
    return ev.with_columns(ev["rank"].cast(pl.Int32).scatter(idx, rank),
                           ev["rank_src"].cast(pl.Int8).scatter(idx, _code_where(rank, rank_code("gpu_uuid"))))


def _code_where(values: pl.Series, code: int) -> pl.Series:
    """`code` where `values` holds something, null elsewhere."""
    return pl.select(pl.when(pl.lit(values).is_not_null()).then(pl.lit(code, pl.Int8))).to_series() \
        if len(values) else pl.Series([], dtype=pl.Int8)


def _by_node_pid(ev: pl.DataFrame, table: dict[tuple[str | None, int], int]) -> pl.Series:
    """The value `table` gives each row's (node, pid), null where none (a join of those two columns only)."""
    if not table or ev["pid"].null_count() == ev.height:
        return pl.repeat(None, ev.height, dtype=pl.Int32, eager=True)
    if (node := the_one(ev["node"])) is not MIXED:
        if (pid := the_one(ev["pid"])) is not MIXED:
            return pl.repeat(table.get((node, pid)), ev.height, dtype=pl.Int32, eager=True)
        by_pid = {p: v for (n, p), v in table.items() if n == node}
        return ev["pid"].replace_strict(by_pid, default=None, return_dtype=pl.Int32) if by_pid else \
            pl.repeat(None, ev.height, dtype=pl.Int32, eager=True)
    right = pl.DataFrame([(n, p, v) for (n, p), v in table.items()],
                         schema={"node": pl.String, "pid": pl.Int64, "_v": pl.Int32}, orient="row")
    return ev.select("node", "pid").join(right, on=["node", "pid"], how="left", nulls_equal=True,
                                         maintain_order="left")["_v"]


def _by_life(ev: pl.DataFrame, a: Attribution) -> pl.Series:
    """The rank of each row's process in its lifetime, for the pids that were several processes."""
    if not a.life_rank or ev["pid"].null_count() == ev.height:
        return pl.repeat(None, ev.height, dtype=pl.Int32, eager=True)
    right = pl.DataFrame([(n, p, f, e, r) for (n, p, f, e), r in a.life_rank.items()],
                         schema={"node": pl.String, "pid": pl.Int64, "file": pl.String, "_epoch": pl.Int32,
                                 "_v": pl.Int32}, orient="row")
    return ev.select("node", "pid", "file", epochs(ev, a).alias("_epoch")) \
        .join(right, on=["node", "pid", "file", "_epoch"], how="left", nulls_equal=True, maintain_order="left")["_v"]


def apply(events: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """Add `node`, `rank`, `gpu` to parsed events with what `learn` found (works batch by batch), and
    `node_src` / `rank_src`: which witness named them (NODE_SRC, RANK_SRC; `witness` says it in words)."""
    ev = apply_nodes(host_columns(elastic_entries(ensure(events))), a)
    if a.span_time:   # (an event object's time is its lines' own, as a wrapper's would be)
        t = pl.lit(_spans(ev, a.span_time, pl.Datetime("us")))
        ev = ev.with_columns(pl.coalesce("wt", t).alias("wt"),
                             pl.when(pl.col("wt").is_null() & t.is_not_null()).then(pl.lit("utc"))
                             .otherwise(pl.col("wt_kind")).alias("wt_kind"))
    rank, code = _coded([pl.col("rank"), pl.lit(_by_file_line(ev, a.subject_rank, pl.Int32)), pl.lit(_by_life(ev, a)), pl.lit(_by_node_pid(ev, a.pid_rank)),
                         _mapped(ev, "file", a.file_rank, pl.Int32), pl.lit(_bare(ev, a)),
                         pl.lit(_by_task(ev, a, a.task_rank, pl.Int32)), _mapped(ev, "proc", a.name_rank, pl.Int32)])
    ev = ev.with_columns(rank.cast(pl.Int32).alias("rank"), code.alias("rank_src"),
                         pl.coalesce("dev", pl.lit(_by_node_pid(ev, a.pid_gpu))).cast(pl.Int32).alias("gpu"))
    if a.local_rank and "local_rank" in ev.columns:
        # torchelastic's agent reports a child's failure: 'failed (exitcode: -6) local_rank: 1 (pid: 4326)'
        ev = ev.with_columns(pl.coalesce("local_rank", pl.col("text").str.extract(line_rx("agent_failed"), 1)
                                         .cast(pl.Int32)).alias("local_rank"))
        lm = pl.DataFrame([(n, l, r) for (n, l), r in a.local_rank.items()],
                          schema={"node": pl.String, "local_rank": pl.Int32, "_lr": pl.Int32}, orient="row")
        ev = ev.join(lm, on=["node", "local_rank"], how="left").with_columns(
            pl.when(pl.col("rank").is_null() & pl.col("_lr").is_not_null()).then(pl.lit(rank_code("local"), pl.Int8))
            .otherwise(pl.col("rank_src")).alias("rank_src"),
            pl.coalesce("rank", "_lr").alias("rank")).drop("_lr")
    if a.unnamed_rank0:
        zero = pl.col("source").is_in(["vllm", "traceback"]) & pl.col("rank").is_null()
        ev = ev.with_columns(pl.when(zero).then(pl.lit(rank_code("rank0"), pl.Int8)).otherwise(pl.col("rank_src"))
                             .alias("rank_src"),
                             pl.when(zero).then(pl.lit(0, pl.Int32)).otherwise(pl.col("rank")).alias("rank"))
    return _gpu_named(_kernel(ev, a), a)


def _kernel(ev: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """Kernel lines take a rank from the task or the PCI device they are about (worked out on the kernel
    rows alone: a batch of application logs has none)."""
    idx = (ev["source"] == "kernel").fill_null(False).arg_true()
    if not len(idx):
        return ev
    sub = _kernel_gpu(_kernel_task(ev[["node", "text", "rank", "gpu", "rank_src"]][idx], a), a)
    return ev.with_columns(ev["rank"].cast(pl.Int32).scatter(idx, sub["rank"].cast(pl.Int32)),
                           ev["gpu"].cast(pl.Int32).scatter(idx, sub["gpu"].cast(pl.Int32)),
                           ev["rank_src"].cast(pl.Int8).scatter(idx, sub["rank_src"].cast(pl.Int8)))


def task_ranks(a: Attribution) -> dict[tuple[str | None, int], int]:
    """(node, task id the kernel prints) -> rank: host pids only (a container's own pids are not what the kernel
    prints, unless the bundle maps them: NSpid), and threads of those processes."""
    out: dict[tuple[str | None, int], int] = {}
    for (n, p), r in a.pid_rank.items():
        if (n, p) not in a.container_pids:
            out.setdefault((n, p), r)
    for (n, host), inner in a.host_pid.items():
        if (n, inner) in a.pid_rank:
            out.setdefault((n, host), a.pid_rank[(n, inner)])
    for (n, t), p in a.tid_pid.items():
        if (n, p) in out:
            out.setdefault((n, t), out[(n, p)])
    return out


def _kernel_task(kern: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """A kernel line about a task (a segfault, an OOM kill) takes the rank of the process it names (of the
    process a crashed thread belongs to)."""
    table = task_ranks(a)
    if not table:
        return kern
    tr = pl.DataFrame([(n, t, r) for (n, t), r in table.items()],
                      schema={"node": pl.String, "_task": pl.Int64, "_trank": pl.Int32}, orient="row")
    text = kern["text"]
    named = text.str.contains(RX["kernel_task_words"].pattern).fill_null(False).arg_true()  # (the few lines worth reading)
    read = text.gather(named).to_frame().select(
        pl.coalesce(pl.col("text").str.extract(line_rx(n), 1) for n in KERNEL_TASK_LINES))
    task = at_rows(kern.height, named, read.to_series().cast(pl.Int64, strict=False))
    return kern.with_columns(task.alias("_task")) \
        .join(tr, on=["node", "_task"], how="left", maintain_order="left") \
        .with_columns(pl.when(pl.col("rank").is_null() & pl.col("_trank").is_not_null())
                      .then(pl.lit(rank_code("kernel_task"), pl.Int8))
                      .otherwise(pl.col("rank_src")).alias("rank_src"),
                      pl.coalesce("rank", "_trank").alias("rank")).drop("_task", "_trank")


def kernel_bus(text: pl.Series) -> pl.Series:
    """The PCI device each kernel line is about (dddd:bb:dd), null where none."""
    first = text.str.extract_groups(line_rx("pci")).struct.unnest()
    aer = text.str.extract_groups(line_rx("aer_source")).struct.unnest()
    pci = aer.select(pl.when(aer["bus"].is_not_null()).then(aer[c]).otherwise(first[c]) for c in ("dom", "bus", "dev"))
    return pci.select(pl.when(pl.col("bus").is_not_null()).then(pl.concat_str([
        pl.col("dom").fill_null("0000").str.slice(-4).str.to_lowercase(), pl.lit(":"),
        pl.col("bus").str.to_lowercase(), pl.lit(":"), pl.col("dev").str.to_lowercase()]))).to_series()


def _kernel_gpu(kern: pl.DataFrame, a: Attribution) -> pl.DataFrame:
    """A kernel line about a PCI device (Xid, AER, an HCA on a GPU's rail) takes that GPU and its rank."""
    about = kern["text"].str.contains(RX["pci_words"].pattern).fill_null(False).arg_true()
    if not len(about):
        return kern
    bus = kernel_bus(kern["text"].gather(about))  # (an address is searched for only in the lines about a device)
    if bus.null_count() == len(bus):
        return kern
    kern = kern.with_columns(at_rows(kern.height, about, bus).alias("_bus"))
    br = pl.DataFrame([(n, b, r) for (n, b), r in a.bus_rank.items()],
                      schema={"node": pl.String, "_bus": pl.String, "_brank": pl.Int32}, orient="row")
    # (nvidia-smi's index of a bus; else a `-q` dump's minor number, the /dev/nvidiaN the GPU is: its index)
    index = {**{k: g["minor"] for k, g in a.gpus.items() if isinstance(g.get("minor"), int)}, **a.bus_gpu}
    bg = pl.DataFrame([(n, b, _device(a, n, b, g)) for (n, b), g in index.items()],
                      schema={"_gnode": pl.String, "_bus": pl.String, "_bgpu": pl.Int32}, orient="row")
    # nvidia-smi bus ids may come from a dump without a node: match on the bus alone when unique
    bg_any = bg.group_by("_bus").agg(pl.col("_bgpu").first(), pl.len().alias("_n")).filter(pl.col("_n") == 1) \
        .select("_bus", pl.col("_bgpu").alias("_bgpu_any"))
    lr = pl.DataFrame([(n, g, r) for (n, g), r in gpu_ranks(a).items()],
                      schema={"node": pl.String, "_lgpu": pl.Int32, "_lrank": pl.Int32}, orient="row")
    out = (kern.join(br, on=["node", "_bus"], how="left", maintain_order="left")
           .join(bg.rename({"_gnode": "node"}), on=["node", "_bus"], how="left", maintain_order="left")
           .join(bg_any, on="_bus", how="left", maintain_order="left")
           .with_columns(pl.when(pl.col("_bus").is_not_null()).then(pl.coalesce("gpu", "_bgpu", "_bgpu_any"))
                         .otherwise(pl.col("gpu")).cast(pl.Int32).alias("gpu"))
           .join(lr, left_on=["node", "gpu"], right_on=["node", "_lgpu"], how="left", maintain_order="left"))
    fresh = pl.col("_bus").is_not_null() & pl.col("rank").is_null()
    return (out.with_columns(
        pl.when(fresh & pl.col("_brank").is_not_null()).then(pl.lit(rank_code("kernel_bus"), pl.Int8))
        .when(fresh & pl.col("_lrank").is_not_null()).then(pl.lit(rank_code("kernel_local"), pl.Int8))
        .otherwise(pl.col("rank_src")).alias("rank_src"),
        pl.when(pl.col("_bus").is_not_null()).then(pl.coalesce("rank", "_brank", "_lrank"))
        .otherwise(pl.col("rank")).alias("rank"))
        .drop("_bus", "_brank", "_bgpu", "_bgpu_any", "_lrank"))


def _device(a: Attribution, node: str | None, bus: str, index: int) -> int | None:
    """The CUDA device a GPU of nvidia-smi's `index` is to the deployment's processes on `node`: its place in their
    CUDA_VISIBLE_DEVICES, where the bundle gives it (None: they do not see it); NCCL's cudaDev already is one."""
    seen = a.visible.get(node, a.visible.get(None))
    if seen is None or (node, bus) in a.device_buses:
        return index
    return seen.index(index) if index in seen else None


def gpu_ranks(a: Attribution, one_engine: bool = False) -> dict[tuple[str | None, int], int]:
    """(node, GPU index) -> rank: with the default CUDA_VISIBLE_DEVICES a worker's local rank is its GPU index,
    and so is its NCCL [dev]. Where no line states a rank, in a deployment of one node and one engine
    (`one_engine`: no data parallelism), the GPU a worker's own error names is its rank: vLLM puts local rank r on
    its device r."""
    if one_engine and len(a.nodes) == 1 and not a.pid_rank and not a.local_rank:
        return {(a.nodes[0], d): d for d in range(MAX_LOCAL_GPUS)}
    by_dev = defaultdict(set)
    for (n, p), g in a.pid_gpu.items():
        if (n, p) in a.pid_rank:
            by_dev[(n, g)].add(a.pid_rank[(n, p)])
    return {k: next(iter(r)) for k, r in by_dev.items() if len(r) == 1} | _between(a.local_rank) | a.local_rank


def _between(local: dict[tuple[str | None, int], int]) -> dict[tuple[str | None, int], int]:
    """The local ranks a node's workers leave unnamed between those they name, where every one it names is its
    node's first rank plus its local rank (a worker stuck in the GPU's fault prints nothing)."""
    out = {}
    for node in {n for n, _ in local}:
        mine = {lr: r for (n, lr), r in local.items() if n == node}
        if len(mine) >= 2 and len({r - lr for lr, r in mine.items()}) == 1:
            first = next(r - lr for lr, r in mine.items())
            out |= {(node, lr): first + lr for lr in range(min(mine), max(mine)) if lr not in mine}
    return out
