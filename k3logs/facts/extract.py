"""Environment facts from dumps (`facts_from_dump`) and from log events (`facts_from_events`).

A fact is a name, a string value and the file:line that states it (k3-deployment-facts.md names what a
diagnosis is checked against; checks.py turns facts into pass/fail/unknown). Dumps are small, so they are
read with plain Python; log events are pre-filtered with polars and only the few candidate rows are
read in Python. The regexes for log facts are data: patterns/facts.toml `[[log_fact]]`.

Fact names (see docs/how-it-decides.md, environment): driver_version, driver_branch, driver_cuda, cuda_runtime,
torch_version, torch_cuda_build, vllm_version, nccl_version, image, image_digest, gpu_model, gpu_count,
gpu_bus_ids, gpu_uuids, nic_gpu, gpu_error, ecc_uncorrectable, remapped_rows_pending, nvlink, interconnect,
launch_command, prefix_caching, all2all_backend, tensor_parallel_size, pipeline_parallel_size,
data_parallel_size, max_model_len, gpu_memory_utilization, model, ucx_tls, nccl_dmabuf_enable,
nccl_socket_ifname, nccl_ib_hca, cuda_visible_devices, env:<NAME>, nvidia_peermem_loaded, mlx5_loaded,
ib_port_state, shm_size, ipc_mode, hostname, node_name, pod_node, ip, boot_time, collected_at, pip_cuda_majors,
pip_mixed_cuda, model_architecture, exit_code, oom_killed, restart_count, pod_started, last_state_reason, pod_events;
and a few more (expert_parallel, nnodes, served_model_name, kv_transfer, nccl_cuda, nccl_dmabuf_524,
nccl_bootstrap, slurm_nodelist, gpu_process, process, nics, kernel_version, ofed_version, uptime_seconds, image_id,
network_mode, container_node, gpu_request, gpu_capacity, gpu_allocatable, cuda_toolkit, metric:<name>,
prefix_cache_hit_rate, model_type, num_attention_heads, num_experts, utc_zone, ...).
"""
from __future__ import annotations

import polars as pl

from k3logs.catalogue.witnesses import builtin_witnesses, expand_nodelist
from k3logs.ingest.dumps import Segment, command_kind, is_launch_line, sniff_dump, split_transcript

from .bmc import parse_bmc_clock
from .cmdline import parse_env, parse_launch, parse_supervisor_program, parse_systemd_unit
from .data import FactsData, apply_log_fact, default_facts_data
from .describe import parse_describe
from .host import (add_host_ips, parse_clocks, parse_host_ips, parse_ibstat, parse_inventory, parse_ip, parse_lsmod,
                   parse_manifest, parse_misc, parse_prometheus, parse_ps, parse_systemctl_status, parse_uptime)
from .k8s import parse_compose, parse_docker_inspect, parse_pod_spec, parse_schedulings
from .kubectl import parse_container_hosts, parse_pod_tables
from .nvidia import parse_smi_csv, parse_smi_list, parse_smi_q, parse_smi_table, parse_topo
from .python import parse_collect_env, parse_model_config, parse_pip
from .slurm import parse_launchers, parse_slurm_job
from .util import FACTS, Fact, Sink, split_lines

__all__ = ["Fact", "facts_from_dump", "facts_from_events"]

PARSERS = {
    "nvidia_smi": parse_smi_table, "nvidia_smi_q": parse_smi_q, "nvidia_topo": parse_topo,
    "nvidia_smi_csv": parse_smi_csv, "nvidia_smi_list": parse_smi_list, "env": parse_env, "launch_cmd": parse_launch,
    "pip_freeze": parse_pip, "collect_env": parse_collect_env, "docker_inspect": parse_docker_inspect,
    "pod_spec": parse_pod_spec, "compose": parse_compose, "systemd_unit": parse_systemd_unit,
    "supervisor_program": parse_supervisor_program,
    "k8s_describe": parse_describe, "prometheus": parse_prometheus, "lsmod": parse_lsmod, "ibstat": parse_ibstat,
    "uptime": parse_uptime, "ip_addr": parse_ip, "ps": parse_ps, "systemctl_status": parse_systemctl_status,
    "model_config": parse_model_config,
    "manifest": parse_manifest, "json": None,
}
TAKES_COMMAND = {"nvidia_smi_csv", "uptime", "docker_inspect"}
MERGED = ("uptime",)


def facts_from_dump(kind: str, file: str, text: str, node: str | None) -> list[Fact]:
    """Every fact the dump `text` (of `kind`, as sniffed) states, with 1-based newline-counted lines.

    A shell transcript (`$ cmd` prompts) is read segment by segment, each by its command's kind. A parser
    failure does not raise: it becomes a `dump_parse_error` fact so the rest of the bundle is still read.
    """
    sink = Sink(file, node, kind)
    lines = split_lines(text or "")
    segs = split_transcript(lines) if lines else []
    transcript = any(s.command for s in segs)
    merged: list[Segment] = []  # uptime needs `date` and `uptime -s` together: read those segments as one
    for seg in segs or [Segment(0, 0)]:
        if transcript and command_kind(seg.command) in MERGED:
            merged.append(seg)
            if seg.host and seg.prompt_line is not None:
                sink.add("hostname", seg.host, seg.prompt_line + 1)
            continue
        body = lines[seg.start:seg.end]
        if seg.host and seg.prompt_line is not None:
            sink.add("hostname", seg.host, seg.prompt_line + 1)
        if not transcript:
            seg_kind = kind
        else:
            seg_kind = command_kind(seg.command)
            if seg.command and seg_kind is None and is_launch_line(seg.command):
                seg_kind, body, seg = "launch_cmd", lines[seg.prompt_line:seg.start], Segment(seg.prompt_line, seg.start)
            elif seg.command:
                _run(sink, "misc", parse_misc, body, seg.start, seg.command)
            if seg_kind is None and any(x.strip() for x in body):
                sniffed = sniff_dump("\n".join(body))
                seg_kind = sniffed[0] if sniffed else (kind if seg.command is None else None)
        parser = PARSERS.get(seg_kind or "")
        if parser is None:
            continue
        sink.source = seg_kind if transcript else kind
        for node, own in _by_label(body, seg.command) or [(sink.node, body)]:
            sink.node, sink_node = node, sink.node
            _run(sink, seg_kind, parser, own, seg.start, seg.command if seg_kind in TAKES_COMMAND else None)
            sink.node = sink_node
    _run(sink, "pod_tables", parse_pod_tables, lines, 0, None)
    _run(sink, "container_hosts", parse_container_hosts, lines, 0, None)
    _run(sink, "schedulings", parse_schedulings, lines, 0, None)
    _run(sink, "host_ips", parse_host_ips, lines, 0, None)
    _run(sink, "inventory", parse_inventory, lines, 0, None)
    _run(sink, "clocks", parse_clocks, lines, 0, None)
    _run(sink, "bmc_clock", parse_bmc_clock, lines, 0, None)
    _run(sink, "slurm_job", parse_slurm_job, lines, 0, None)
    _run(sink, "launchers", parse_launchers, lines, 0, None)
    for kind_ in MERGED:
        segs_ = [s for s in merged if command_kind(s.command) == kind_]
        if segs_:
            keep = {i for s in segs_ for i in range(s.start - 1, s.end)}
            masked = [ln if i in keep else "" for i, ln in enumerate(lines)]
            sink.source = kind_
            _run(sink, kind_, PARSERS[kind_], masked, 0, None)
    return _dedup(sink.facts)


def _by_label(body: list[str], command: str | None) -> list[tuple[str | None, list[str]]] | None:
    """A command a fleet tool ran on several hosts (pdsh's 'host: ' before each line, `srun -l`'s 'N: '): each
    label's lines, the others blanked (so lines keep their numbers), and the node it names: pdsh's host, or the
    srun task's node over the step's own nodes (`-w LIST`, tasks per node). None when the output is not so."""
    got = [FACTS["fleet_label"].match(ln) for ln in body]
    labels = {m.group("host") or m.group("task").strip() for m in got if m}
    if len(labels) < 2 or sum(1 for m in got if m) < 0.8 * sum(1 for ln in body if ln.strip()):
        return None
    nodes = expand_nodelist(m.group("nodelist")) if command and (m := FACTS["step_nodes"].search(command)) else []
    per = (int(m.group(1)) or 1) if command and (m := FACTS["fleet_per_node"].search(command)) else 1
    out = []
    for label in sorted(labels, key=lambda x: (not x.isdigit(), int(x) if x.isdigit() else 0, x)):
        node = (nodes[int(label) // per] if int(label) // per < len(nodes) else None) if label.isdigit() \
            else label.split(".", 1)[0]
        out.append((node, [m.group("rest") if m and (m.group("host") or m.group("task").strip()) == label else ""
                           for m in got]))
    return out


def _run(sink: Sink, kind: str, parser, body: list[str], base: int, command: str | None) -> None:
    try:
        if kind == "misc" or kind in TAKES_COMMAND:
            parser(sink, body, base, command)
        else:
            parser(sink, body, base)
    except Exception as e:  # noqa: BLE001 - one odd dump must not stop the analysis; the fact says what broke
        sink.add("dump_parse_error", f"{kind}: {type(e).__name__}: {e}", base + 1)


def _dedup(facts: list[Fact]) -> list[Fact]:
    seen: set[tuple] = set()
    out = []
    for f in facts:
        key = (f.name, f.value, f.node, f.file)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def facts_from_events(events: pl.DataFrame, data: FactsData | None = None) -> list[Fact]:
    """Facts that logs print (vLLM version and args, NCCL version, driver CUDA version, NVRM driver, ...).

    `events` needs string columns `file`, `message`, `node` (optional), int `line` and `ts` (optional). Candidate
    rows are picked with one vectorised `str.contains_any` over the prefilter literals of facts.toml's
    `[[log_fact]]`; only those rows are matched in Python. Each distinct (fact, value, node) is kept once, at its
    first line: of the file whose lines begin first in time where they have times (a restarted container's log
    sorts by name before its earlier run's), then by file and line (a file's untimed banner before its timed lines).
    """
    data = data or default_facts_data()
    if events is None or events.height == 0 or "message" not in events.columns:
        return []
    cols = events.columns
    frame = events.lazy().select(
        (pl.col("file").cast(pl.String) if "file" in cols else pl.lit("")).fill_null("").alias("file"),
        (pl.col("line").cast(pl.Int64) if "line" in cols else pl.lit(None, dtype=pl.Int64)).alias("line"),
        (pl.col("node").cast(pl.String) if "node" in cols else pl.lit(None, dtype=pl.String)).alias("node"),
        pl.col("message").cast(pl.String).fill_null("").alias("message"),
        (pl.col("ts").min().over("file") if "ts" in cols else pl.lit(None, pl.Datetime("us", "UTC"))).alias("_began"),
    ).filter(pl.col("message").str.contains_any(data.prefilters)).sort(["_began", "file", "line"], nulls_last=True) \
        .unique(subset=["node", "message"], keep="first", maintain_order=True)  # 64 ranks print the same banner
    sinks: dict[tuple[str, str | None], Sink] = {}
    rows = frame.collect().drop("_began").rows()
    first = {(file, line): i for i, (file, line, _, _) in enumerate(rows)}
    for file, line, node, msg in rows:
        for lf in data.log_facts:
            if not any(p in msg for p in lf.prefilter):
                continue
            m = lf.compiled.search(msg)
            if m:
                sink = sinks.setdefault((file, node), Sink(file, node, "log"))
                apply_log_fact(lf, m, sink, line)
    facts = [f for s in sinks.values() for f in s.facts]
    facts.sort(key=lambda f: first.get((f.file, f.line), len(first)))
    seen: set[tuple] = set()
    out = []
    for f in facts:
        key = (f.name, f.value, f.node)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def zones_said_in_logs(events: pl.DataFrame) -> list[Fact]:
    """The UTC offset a line says its file's clock is in (a collector's header on a host's kernel log: '(node
    clock America/Chicago, CDT = UTC-5)'), as `utc_offset` of the file (its node is the file's, once attributed)."""
    if events.is_empty():
        return []
    rx = FACTS["clock_zone_said"]
    rows = events.filter(pl.col("text").str.contains(rx.pattern).fill_null(False))
    out = []
    for file, line, text in rows.select("file", "line", "text").iter_rows():
        if m := rx.search(text):
            east = (int(m.group("hours")) * 3600 + int(m.group("minutes") or 0) * 60) * (-1 if m["sign"] == "-" else 1)
            out.append(Fact("utc_offset", str(east), file, line, None, "log"))
    return out


def host_ips_in_logs(events: pl.DataFrame) -> list[Fact]:
    """Hosts written beside their address in log lines (a job's banner 'head=hgx-b17 (10.31.8.17)'), in the
    [[host_ip]] forms marked `in_logs`: the rows with an address in parentheses next to a name are found in one
    vectorised step, and only those are read."""
    forms = [h for h in builtin_witnesses().host_ips if h.in_logs]
    if not forms or events.is_empty():
        return []
    rows = events.filter(pl.col("text").str.contains(FACTS["ipv4_beside_name"].pattern).fill_null(False))
    sinks: dict[str, Sink] = {}
    for file, line, text in rows.select("file", "line", "text").iter_rows():   # (before attribution: no node yet)
        add_host_ips(sinks.setdefault(file, Sink(file, None, "log")), text, line, forms)
    return [f for s in sinks.values() for f in s.facts]
