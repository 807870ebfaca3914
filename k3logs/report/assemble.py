"""Turn an Analysis into the Report: the verdict and its evidence, symptoms by category and rank, the
timeline around the failure, environment facts and checks, missing evidence, remediation in the
operators' triage order, and the recovery ladder."""
from __future__ import annotations

import re
from collections import defaultdict

import polars as pl

from k3logs.acceptance.judge import root_phase
from k3logs.contract import (BundleSummary, CheckOut, Environment, FileEntry, FirstCausal, KernelEvent, NodeSummary,
                             Origin, Outcome, PhaseSpan, Report, RootCause, Skipped, Symptom, TimelineEntry, iso)
from k3logs.diagnose.findings import Finding
from k3logs.diagnose.witness import event_gpu, witness
from k3logs.facts.evidence import evidence_missing
from k3logs.ingest.parse import FIELD_NAMES, UNREADABLE
from k3logs.schema import PHASES

from .analysis import Analysis

TIMELINE_BEFORE = 8
TIMELINE_AFTER = 24
FACT_KEYS = ("driver_version", "driver_branch", "driver_cuda", "cuda_runtime", "torch_version", "torch_cuda_build",
             "vllm_version", "nccl_version", "image", "image_digest", "gpu_model", "gpu_count", "interconnect", "model",
             "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_model_len",
             "prefix_caching", "all2all_backend", "ucx_tls", "nccl_dmabuf_enable", "nvidia_peermem_loaded",
             "shm_size", "launch_command")


def _facts_dict(facts) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in FACT_KEYS:
        vals = []
        for f in facts:
            if f.name == key and f.value not in vals:
                vals.append(f.value)
        if vals:
            out[key] = vals[0] if len(vals) == 1 else " | ".join(sorted(vals))
    return out


# the reported facts that are not text: JSON and incidents.parquet give them as numbers and booleans
FACT_TYPES: dict[str, type] = {
    "driver_branch": int, "gpu_count": int, "tensor_parallel_size": int, "pipeline_parallel_size": int,
    "data_parallel_size": int, "max_model_len": int, "shm_size": int, "nccl_dmabuf_enable": int,
    "prefix_caching": bool, "nvidia_peermem_loaded": bool,
}
BOOLEAN_WORDS = {"true": True, "1": True, "yes": True, "on": True,
                 "false": False, "0": False, "no": False, "off": False}


def typed_fact(key: str, value: str) -> int | bool | str:
    """A fact's value as its type (FACT_TYPES); a value that does not read as it stays text (the table of a
    scan leaves it empty). Versions are text: 12.10 is a CUDA version, not 12.1."""
    kind = FACT_TYPES.get(key, str)
    if kind is int and re.fullmatch(r"-?\d{1,18}", value.strip()):
        return int(value)
    if kind is bool and value.strip().lower() in BOOLEAN_WORDS:
        return BOOLEAN_WORDS[value.strip().lower()]
    return value


def _fact_values(facts) -> dict[str, list[dict]]:
    """Every value of each reported fact, typed, with the file and line it was read from (in name order)."""
    out: dict[str, list[dict]] = {}
    for key in FACT_KEYS:
        seen = []
        for f in facts:
            if f.name == key and (f.value, f.file, f.line) not in seen:
                seen.append((f.value, f.file, f.line))
        if seen:
            out[key] = [{"value": typed_fact(key, v), "file": fl, "line": ln} for v, fl, ln in seen]
    return out


def _triage(cat, category: str | None) -> int:
    c = cat.categories.get(category or "")
    return c.triage if c else 99


def _symptoms(findings: list[Finding], root: Finding | None) -> list[Symptom]:
    groups: dict[tuple, list[Finding]] = defaultdict(list)
    for f in findings:
        if f is root or f.role == "context":
            continue
        if f.role == "cause" and f.explained_by is None:
            continue
        groups[(f.category, f.node, f.rank)].append(f)
    out = []
    for (cat, node, rank), fs in groups.items():
        first = sorted(fs, key=lambda f: (f.ts is None, f.ts.timestamp() if f.ts else 0, f.file, f.line))[0]
        out.append(Symptom(cat, first.file, first.line, node, rank, len(fs), first.title, iso(first.ts), first.source))
    return sorted(out, key=lambda s: (s.timestamp is None, s.timestamp or "", s.category, s.node or "",
                                      -1 if s.rank is None else s.rank, s.file, s.line))


def _timeline(a: Analysis, root: Finding | None) -> list[TimelineEntry]:
    fs = [f for f in a.decision.findings if f.role != "context" or f is root]
    fs = sorted(fs, key=lambda f: (f.ts is None, f.ts.timestamp() if f.ts else 0, f.file, f.line))
    if root is not None and root in fs:
        i = fs.index(root)
        fs = fs[max(0, i - TIMELINE_BEFORE): i + TIMELINE_AFTER]
    else:
        fs = fs[:TIMELINE_AFTER]
    # per node and rank, only the first of each category in the window
    seen, out = set(), []
    for f in fs:
        key = (f.category, f.node, f.rank)
        if key in seen and f is not root:
            continue
        seen.add(key)
        role = "cause" if f is root else ("symptom" if f.role == "cause" else f.role)
        out.append(TimelineEntry(iso(f.ts), f.ts_quality, f.node, f.rank, role, f.category, f.file, f.line,
                                 f.text))
    return out


def _nodes(a: Analysis) -> list[NodeSummary]:
    ev = a.events
    out = []
    stats = ev.filter(pl.col("node").is_not_null()).group_by("node").agg(
        pl.col("rank").drop_nulls().unique().sort().alias("ranks"), pl.col("file").n_unique().alias("files"),
        pl.col("ts").min().alias("first"), pl.col("ts").max().alias("last")).sort("node")
    for r in stats.iter_rows(named=True):
        nc = a.clock.nodes.get(r["node"])
        out.append(NodeSummary(r["node"], [int(x) for x in r["ranks"]], r["files"], iso(r["first"]), iso(r["last"]),
                               nc.offset_s if nc else None, nc.applied if nc else False,
                               nc.boot_time if nc else None))
    return out


def _phase_spans(a: Analysis) -> list[PhaseSpan]:
    """Runs of one phase per lane, in time order: a lane per rank, and a node's own processes (launchers,
    API server) as one lane when the node has no ranked events. Kernel lines only borrow their node's
    phase (a boot line would stretch a band over weeks), so they are left out."""
    ev = a.events
    if ev.is_empty():
        return []
    ev = ev.filter(pl.col("ts").is_not_null() & pl.col("phase").is_not_null() & (pl.col("ts_quality") != "relative")
                   & (pl.col("source") != "kernel").fill_null(True))
    node_has_ranks = pl.col("rank").is_not_null().any().over("node")
    ev = ev.filter(pl.col("rank").is_not_null() | ~node_has_ranks)
    lane = ["node", "rank"]
    order = {p: i for i, p in enumerate(PHASES)}
    ev = ev.select("node", "rank", "ts", pl.col("phase").replace_strict(order, default=None, return_dtype=pl.Int8)
                   .alias("_i")).drop_nulls("_i").sort(["node", "rank", "ts", "_i"], nulls_last=True)
    # a phase never goes back within a lane (processes of one rank interleave), except when the
    # server starts again
    restart = ((pl.col("_i") == 0) & (pl.col("_i").shift(1).over(lane) > 0)).fill_null(False)
    ev = ev.with_columns(restart.cum_sum().over(lane).alias("_attempt"))
    ev = ev.with_columns(pl.col("_i").cum_max().over([*lane, "_attempt"]).alias("_i"))
    ev = ev.with_columns(((pl.col("_i") != pl.col("_i").shift(1).over(lane)).fill_null(True)
                          | (pl.col("_attempt") != pl.col("_attempt").shift(1).over(lane)).fill_null(True))
                         .cum_sum().over(lane).alias("_run"))
    ev = ev.with_columns(pl.col("_i").replace_strict(dict(enumerate(PHASES)), return_dtype=pl.String).alias("phase"))
    runs = ev.group_by([*lane, "_run"]).agg(pl.col("phase").first(), pl.col("ts").min().alias("start"),
                                            pl.col("ts").max().alias("_last")).sort([*lane, "_run"], nulls_last=True)
    runs = runs.with_columns(pl.coalesce(pl.col("start").shift(-1).over(lane), pl.col("_last")).alias("end"))
    return [PhaseSpan(r["node"], r["rank"], r["phase"], iso(r["start"]), iso(r["end"]))
            for r in runs.iter_rows(named=True)]


def _kernel_events(findings: list[Finding], root: Finding | None) -> list[KernelEvent]:
    """The kernel lines the catalogue recognised, per node and what they say (first, last, how many)."""
    groups: dict[tuple, list[Finding]] = defaultdict(list)
    for f in findings:
        if f.source == "kernel":
            role = "cause" if f is root else ("symptom" if f.role == "cause" else f.role)  # as in the timeline
            groups[(f.node, role, f.category, f.title or f.category)].append(f)
    out = []
    for (node, role, cat, title), fs in groups.items():
        fs = sorted(fs, key=lambda f: (f is not root, f.ts is None, f.ts.timestamp() if f.ts else 0, f.file, f.line))
        last = max((f.ts for f in fs if f.ts is not None), default=None)
        ranks = {f.rank for f in fs}
        out.append(KernelEvent(node, fs[0].rank if len(ranks) == 1 else None, role, cat, title, fs[0].file,
                               fs[0].line, iso(fs[0].ts), iso(last), len(fs)))
    return sorted(out, key=lambda k: (k.node is None, k.node or "", k.timestamp is None, k.timestamp or "",
                                      k.category, k.title, k.file, k.line))


def _remediation(a: Analysis, root: Finding | None, checks) -> list[str]:
    cat = a.catalogue
    steps: list[tuple[int, int, str]] = []
    if root is not None and root.sig:
        sig = cat.by_id(root.sig)
        entry = cat.xid.get(int(root.fields["xid"])) if sig.table == "xid" and root.fields.get("xid") else None
        done = {"rank": root.rank is not None, "xid_known": entry is not None}
        unless = dict(sig.remediation_unless)
        rem = [s for s in sig.remediation if not done.get(unless.get(s, ""), False)]
        if entry:
            rem = [entry.action] + rem
        steps += [(_triage(cat, root.category), i, s) for i, s in enumerate(rem)]
    for c in checks:
        if c.status == "fail":
            steps += [(_triage(cat, c.category), 100 + i, s) for i, s in enumerate(c.remediation)]
    seen, out = set(), []
    for _, _, s in sorted(steps, key=lambda x: (x[0], x[1])):
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def _explanation(a: Analysis, root: Finding | None) -> tuple[str, str]:
    d = a.decision
    if root is None:
        return "No cause, symptom or unexplained exception was found in the bundle.", ""
    base = ""
    if root.check:
        check = next(c for c in a.checks if c.id == root.check)
        base = f"{check.detail}."
    if root.sig:
        sig = a.catalogue.by_id(root.sig)
        base = sig.explanation
        if sig.table == "xid" and root.fields.get("xid"):
            entry = a.catalogue.xid.get(int(root.fields["xid"]))
            if entry:
                base = f"Xid {entry.code} ({entry.name}): {entry.meaning}. " + base
    idx = d.findings.index(root) if root in d.findings else -1
    explained = [f for f in d.findings if f.explained_by == idx and idx >= 0]
    symptoms = [f for f in d.findings if f.role == "symptom"]
    why = d.reason[0].upper() + d.reason[1:] + "."
    if explained:
        cats = sorted({f.category for f in explained})
        why += f" It explains {len(explained)} later event(s) ({', '.join(cats)}) in its scope."
    if symptoms:
        later = [s for s in symptoms if s.ts and root.ts and s.ts >= root.ts]
        why += (f" {len(symptoms)} symptom line(s) ({', '.join(sorted({s.category for s in symptoms})[:6])}) are "
                f"consequences{' and come after it' if later else ''}; they are not causes.")
    if d.template:
        why += f" The same error template was seen on {d.repeats} node/rank(s)."
    return (base.strip() or root.title or root.category), why


def _unreadable(events: pl.DataFrame) -> list[Skipped]:
    """The fields that held a value out of range (parse.RANGES), left empty: per file and field, where first."""
    if UNREADABLE not in events.columns:
        return []
    bad = (events.filter(pl.col(UNREADABLE).is_not_null()).select("file", "line", pl.col(UNREADABLE).str.split(","))
           .explode(UNREADABLE).group_by("file", UNREADABLE).agg(pl.col("line").min(), pl.len().alias("n")))
    return [Skipped(r["file"], f"{FIELD_NAMES.get(r[UNREADABLE], r[UNREADABLE])} out of range on line {r['line']}"
                    + (f" and {r['n'] - 1} more" if r["n"] > 1 else "") + ": read as absent")
            for r in bad.sort("file", UNREADABLE).iter_rows(named=True)]


def make_report(a: Analysis, display_path: str) -> Report:
    """The report of an analysis: every decision made already by the stages, mapped onto the report's shape."""
    d = a.decision
    # (an abnormal end whose cause is in no log held: what shows the end, an orchestrator's restart, is no cause; it
    # names where it happened)
    witness, root = d.root, None if d.unexplained else d.root
    ing = a.ingested
    b = a.bundle
    kinds = {f.kind for f in ing.files}
    has_tb = a.events["exc_types"].is_not_null().any() if a.events.height else False
    checks = a.checks
    # a healthy bundle has no exception whose stack could be missing
    missing = a.missing + evidence_missing(a.facts, kinds, bool(has_tb) or d.healthy)
    # a log whose data ends inside a line was cut off while it was written or copied: its end is not here
    missing += [f"the end of {b.display(f.file)} (it stops inside a line: cut off while it was written or copied)"
                for f in ing.files if f.unended and not f.is_dump and not f.prose and f.kind != "binary"]
    skipped = [Skipped(b.display(s.file), s.reason) for s in b.skipped]
    skipped += [Skipped(b.display(f.file), f"{f.kind}: {f.reason}") for f in ing.files if f.kind in ("binary",)]
    skipped += [Skipped(b.display(f.file), f"{f.truncated} line(s) longer than the limit were truncated")
                for f in ing.files if f.truncated]
    skipped += [Skipped(b.display(f.file), f"a dump is read whole only up to {f.cut_at} bytes: the rest was not read")
                for f in ing.files if f.cut_at]
    skipped += _unreadable(a.events)
    summary = BundleSummary(display_path, len(ing.files), sum(f.bytes for f in ing.files),
                            sum(f.lines for f in ing.files), sorted(skipped, key=lambda s: (s.file, s.reason)))
    explanation, why = _explanation(a, root)
    if root is None:
        title = "Inconclusive: the bundle cannot show the cause" if d.outcome.state == "inconclusive" else \
            "No incident found"
        # (an abnormal end seen with its cause in no log held is an incident of a cause no category names: `other`)
        rc = RootCause("other" if d.unexplained else "none", None, title, d.confidence, explanation, [])
        # (inconclusive: nothing shows that it failed, so in no phase; the last phase its logs reach is no answer,
        # unless it did fail: then it failed after that phase began)
        unknown = d.outcome.state == "inconclusive" and not d.unexplained
        first, phase = None, None if unknown else _last_phase(a)
        origin = _origin(a, witness) if witness is not None else Origin()
    else:
        title = root.title or root.category
        rc = RootCause(root.category, root.sig, title, d.confidence, explanation, _remediation(a, root, checks))
        first = FirstCausal(root.file, root.line, [root.span[0], max(root.span[1], root.line)], iso(root.ts), root.text)
        # (what the deployment did then, no log shows: only a phase the evidence gives, never a signature's guess)
        origin, phase = _origin(a, root), root.phase if d.outcome.state == "inconclusive" else \
            root_phase(root, a.catalogue)
    other = {"template": d.template, "repeats": d.repeats} if d.template else None
    files = [FileEntry(b.display(f.file), f.kind, f.reason, f.lines, f.bytes,
                       a.attribution.file_node.get(b.display(f.file))) for f in ing.files]
    clock = {"reference_node": a.clock.reference_node, "year_source": a.clock.year_source}
    acc = a.acceptance
    o = d.outcome
    return Report(
        bundle=summary, healthy=d.healthy, outcome=Outcome(o.state, o.file, o.line, o.detail), root_cause=rc, first_causal=first, origin=origin, phase=phase,
        symptoms=_symptoms(d.findings, root),
        environment=Environment(_facts_dict(a.facts),
                                [CheckOut(c.id, c.status, c.evidence, c.detail) for c in checks],
                                _fact_values(a.facts)),
        evidence_missing=missing, why_not_symptom=why, timeline=_timeline(a, root), nodes=_nodes(a),
        recovery_ladder=acc.ladder, load_at_failure=d.load, other=other,
        sniffed=sorted(files, key=lambda f: f.file), clock=clock, phases=_phase_spans(a),
        kernel_events=_kernel_events(d.findings, root), prefix_cache=acc.prefix_cache, capacity=acc.capacity,
        verdict=acc.verdict)


def _origin(a: Analysis, root: Finding) -> Origin:
    """The root's node and rank, and the witnesses that named them (witness.witness on the root's event). A
    node or rank the decision gave the root that its event did not have is another witness's of the same fault."""
    row = None
    if "eid" in a.events.columns and root.eid is not None:
        hit = a.events.filter(pl.col("eid") == root.eid)
        row = hit.row(0, named=True) if hit.height else None
    node_from, rank_from = witness(a.attribution, row) if row else (None, None)
    if row is not None and row.get("node") != root.node:
        node_from = (root.node_from or "another witness of the same fault") if root.node is not None else None
    if row is not None and row.get("rank") != root.rank:
        rank_from = "another witness of the same fault" if root.rank is not None else None
    if rank_from and row is not None and row.get("source") == "kernel" and row.get("rank") == root.rank:
        gpu = event_gpu(a.attribution, row)
        if gpu and (gpu.get("uuid") or gpu.get("serial")):
            named = ", ".join(f"{k} {v}" for k, v in gpu.items() if v is not None and k != "bus_id")
            rank_from = f"{rank_from} (GPU {gpu['bus_id']}: {named})"
    return Origin(a.attribution.full_name.get(root.node, root.node), root.rank,
                  node_from if root.node is not None else None,
                  rank_from if root.rank is not None else None, _hardware_gpu(a, root, row))


def _hardware_gpu(a: Analysis, root: Finding, row: dict | None) -> dict | None:
    """For a hardware cause: its GPU's identity, and the recovery the driver asks for it (an Xid line that
    names one, xid.toml `names_action`, on the same node and GPU)."""
    group = a.catalogue.categories.get(root.category)
    if row is None or group is None or group.group != "hardware":
        return None
    gpu = dict(event_gpu(a.attribution, row) or {})
    pci = root.fields.get("pci")
    if not gpu and pci:
        gpu = {"bus_id": pci}
    actions = {e.code: re.compile(e.names_action) for e in a.catalogue.xid.values() if e.names_action}
    for f in a.decision.findings:
        xid = f.fields.get("xid")
        rx = actions.get(int(xid)) if str(xid).isdigit() else None
        if rx and f.node == root.node and (not pci or f.fields.get("pci") in (None, pci)) and (m := rx.search(f.text)):
            gpu["recovery_action"] = m.group("action")
    return {k: v for k, v in gpu.items() if v is not None} or None


def _last_phase(a: Analysis) -> str | None:
    """The phase the run was in when the bundle was taken: serving if it still served (an old pod's stop in a
    rolling update is not the run's), else the last phase by time."""
    o = a.decision.outcome
    if o.state == "serving":
        return "serving"
    if "phase" not in a.events.columns:
        return None
    # (an end no log shows: the phase where the logs it has stop)
    at = a.events.filter((pl.col("file") == o.file) & (pl.col("line") == o.line) & pl.col("phase").is_not_null()) \
        if a.decision.unexplained and o.file else a.events.clear()
    if at.height:
        return at["phase"][0]
    ph = a.events.filter(pl.col("phase").is_not_null())
    if "ts" in ph.columns:
        ph = ph.sort("ts", nulls_last=False, maintain_order=True)
    return ph["phase"][-1] if len(ph) else None
