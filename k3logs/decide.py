"""Decide what failed first: the first CAUSE across all ranks and nodes after clock alignment.

- Symptoms (watchdog timeouts, dead engines, dead actors, ChildFailedError, peer resets, launcher
  SIGTERMs) never win while a cause exists; benign context lines veto the causes they also match.
- A cause explains later causes of the categories it lists (`explains`) in its scope (node, rank or the
  whole bundle): an Xid explains the CUDA errors on its node, /dev/shm and dmabuf failures explain
  'unhandled system error', an oom-kill explains the vanished worker and the peers' timeouts. An
  explained cause is a symptom of the one that explains it.
- The phase is the last lifecycle landmark the event's worker reached (the node's, for processes that
  are not workers and for kernel lines); OOM signatures are refined by that phase.
- With no cause: a symptom whose category is a root-cause category (nccl.timeout alone) stands, with low
  confidence; else the first exception on the earliest-failing rank is named `other`, its repeats across
  ranks grouped by template similarity (rapidfuzz).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import polars as pl
from rapidfuzz import fuzz

from .attribute import WORKER_NAME
from .catalogue import Catalogue, Signature
from .detect import families, frame_phase, named_causes, outcome_data, phase_marks
from .outcome import HEALTHY, Lifecycle, Outcome
from .schema import PHASES

SAME_FAILURE_S = 60.0     # the same fault seen again this soon is the same failure (not a retry)
TIE_SECONDS = 1.0          # log times have one-second resolution: causes this close are simultaneous
EXPLAIN_WINDOW_S = 3600.0  # an explanation reaches this far forward in time
SAME_START_S = 5           # start landmarks this close together on a node are one start of the server
WORKERS = re.compile(r"^(?:Worker|VllmWorker|RayWorker|RayWorkerWrapper|RayWorkerProc)\b")
# an exception's type line, or a Python program's argparse usage error ('api_server.py: error: unrecognized
# arguments: ...', 'vllm serve: error: ...'; not another program's 'slurmstepd: error:')
EXCEPTION_LINE = r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Fault)\b:?|^(?:[\w.-]+\.py|vllm(?: [\w-]+)?): error: "
SAME_TEMPLATE = 90         # rapidfuzz ratio (0-100) from which two masked messages are the same error
MASKS = [(re.compile(r"0x[0-9a-fA-F]+"), "<hex>"), (re.compile(r"\b\d+(?:\.\d+)?\b"), "<n>"),
         (re.compile(r"'[^']*'|\"[^\"]*\""), "<s>"), (re.compile(r"/[\w./-]+"), "<path>")]


@dataclass(eq=False)  # findings are compared by identity
class Finding:
    """One recognised event (cause, symptom or context) with what the report needs of it."""

    eid: int
    sig: str | None
    category: str
    role: str
    priority: int
    file: str
    line: int
    span: tuple[int, int]
    ts: datetime | None
    ts_quality: str
    node: str | None
    rank: int | None
    pid: int | None
    phase: str | None
    text: str
    source: str | None = None
    uptime: float | None = None       # kernel seconds since boot, for lines with no wall time
    fields: dict = field(default_factory=dict)
    check: str | None = None          # set when the finding comes from a failing environment check
    explained_by: int | None = None
    explainers: set[int] = field(default_factory=set)  # every earlier cause that could explain it (explained_by: the first)
    title: str | None = None
    phase_from_stack: bool = False
    set_aside: str | None = None      # why it cannot be the cause: after the stop (its trail), or survived
    ident: str | None = None          # the unit or container that logged it (journald, compose), if any


@dataclass
class Decision:
    healthy: bool
    root: Finding | None
    confidence: str
    reason: str
    findings: list[Finding]
    template: str | None = None        # for `other`: the masked message
    repeats: int = 0                   # for `other`: how many ranks hit the same template
    load: dict | None = None           # for oom.inference: running / waiting / KV use before it
    outcome: Outcome = field(default_factory=lambda: Outcome("serving"))


def mask_template(text: str) -> str:
    """An error message with its numbers, addresses, quoted strings and paths masked: its template."""
    for rx, rep in MASKS:
        text = rx.sub(rep, text)
    return text.strip()


def same_template(a: str, b: str) -> bool:
    """Two masked messages are one error template (also used by `scan` to group bundles' unknown errors)."""
    return fuzz.ratio(a, b) >= SAME_TEMPLATE


def assign_phases(ev: pl.DataFrame, outside: frozenset[str] | set[str] = frozenset()) -> pl.DataFrame:
    """`phase` per event: the furthest landmark its worker (else its node, in this attempt of the server)
    reached at or before it. Phases do not go back: a backend chosen while the model is built is not a
    return to device init. Kept for the outcome: `mark` (the landmark's phase), `attempt` (the node's
    restarts so far) and `progress` (the line shows its process doing its work). Lines of the files
    `outside` the deployment (host journals, kernel logs, Kubernetes events) mark no phase: a unit that
    another program stops is not the deployment stopping."""
    marks = phase_marks(ev)
    if outside:
        inside = ~ev["file"].is_in(sorted(outside))
        marks = marks.with_columns(pl.when(inside).then(pl.col(c)).otherwise(None if c == "mark" else False).alias(c)
                                   for c in marks.columns)
    order = {p: i for i, p in enumerate(PHASES)}
    ev = ev.with_columns(marks["mark"].replace_strict(order, default=None, return_dtype=pl.Int8).alias("_mi"),
                         marks["restart"].alias("_restart"), marks["mark"].alias("_mark"),
                         marks["progress"].alias("progress"), marks["joined"].alias("joined"))
    ev = ev.sort(["ts", "file", "line", "sub"], nulls_last=True)
    ev = ev.with_columns(_restart=pl.col("_restart") | _opens_start(ev))
    # a start prints several start landmarks at once (the version, then its arguments): one attempt
    last_start = pl.when(pl.col("_restart")).then(pl.col("ts")).forward_fill().shift(1).over("node")
    ev = ev.with_columns((pl.col("_restart") & (last_start.is_null() | pl.col("ts").is_null()
                                                | (pl.col("ts") - last_start > pl.duration(seconds=SAME_START_S))))
                         .alias("_restart"))
    is_worker = pl.col("proc").str.contains(WORKERS.pattern).fill_null(False) | pl.col("rank").is_not_null()
    attempt = pl.col("_restart").cast(pl.Int32).cum_sum().over("node").alias("_attempt")
    ev = ev.with_columns(attempt)
    proc_i = pl.col("_mi").fill_null(-1).cum_max().over(["node", "pid"])
    node_i = pl.col("_mi").fill_null(-1).cum_max().over(["node", "_attempt"])
    names = {i: p for p, i in order.items()}
    own_i = pl.when(is_worker & pl.col("pid").is_not_null() & (proc_i >= 0)).then(proc_i).otherwise(node_i)
    # serving (and winding down) is the deployment's state, not one process's: once the server is ready, every
    # worker on its node serves, and a node with no serving landmark of its own (a headless worker) lives in
    # the deployment's lifecycle
    late = order["serving"]
    node_late = pl.when(node_i >= late).then(node_i).otherwise(-1)
    own_serving = (pl.col("_mi") >= late).fill_null(False).any().over("node")
    ev = ev.with_columns(_deployment_late(ev, late))
    phase_i = pl.max_horizontal(own_i, node_late, pl.when(own_serving).then(-1).otherwise(pl.col("_dep")))
    ev = ev.with_columns(phase_i.replace_strict(names, default=None, return_dtype=pl.String).alias("phase"))
    # kernel lines whose time is unknown, or that come before the service logged anything (an earlier
    # attempt of a crash loop), take the phase the node's logs reached
    last_node = ev.filter(pl.col("_mark").is_not_null()).group_by("node").agg(pl.col("_mark").last().alias("_lastp"))
    unplaced = pl.col("ts").is_null() | (pl.col("phase").is_null() & (pl.col("source") == "kernel"))
    ev = ev.join(last_node, on="node", how="left", nulls_equal=True).with_columns(
        pl.when(unplaced).then(pl.coalesce("phase", "_lastp")).otherwise(pl.col("phase")).alias("phase"))
    return ev.rename({"_mark": "mark", "_attempt": "attempt"}).drop("_lastp", "_mi", "_restart", "_dep")


def _opens_start(ev: pl.DataFrame) -> pl.Series:
    """Startup lines that a restart landmark follows on their node within SAME_START_S (the platform is
    detected at import, before the server prints its version): the new attempt begins with them, so that
    they are not the previous attempt's work. (rows in time order)"""
    starts = ev.filter(pl.col("_restart") & pl.col("ts").is_not_null()).select("node", pl.col("ts").alias("_next"))
    probe = ev.select(pl.int_range(pl.len()).alias("_i"), "node", "ts", "_mark").filter(
        (pl.col("_mark") == "startup") & pl.col("ts").is_not_null())
    if starts.is_empty() or probe.is_empty():
        return pl.Series("_restart", [False] * ev.height)
    got = probe.sort("ts").join_asof(starts.sort("_next"), left_on="ts", right_on="_next", by="node",
                                     strategy="forward", tolerance=timedelta(seconds=SAME_START_S),
                                     check_sortedness=False)  # (sorted by ts above; `by` hides it)
    hit = got.filter(pl.col("_next").is_not_null())["_i"]
    return pl.Series("_restart", [False] * ev.height).scatter(hit, True)


def _deployment_late(ev: pl.DataFrame, late: int) -> pl.Series:
    """`_dep`: the furthest serving-or-later landmark (serving, shutdown) the deployment reached before each row
    (rows in time order). Another node's landmark counts only from TIE_SECONDS after it: within the same second
    the order of two nodes' lines is unknown (a worker's crash and the head's shutdown it causes)."""
    own = pl.when(pl.col("_mi") >= late).then(pl.col("_mi")).otherwise(-1).fill_null(-1)
    same_node = own.cum_max().over("node")  # (on its own node, file order is time order)
    marks = ev.filter((pl.col("_mi") >= late) & pl.col("ts").is_not_null()).select(
        (pl.col("ts") + pl.duration(seconds=TIE_SECONDS)).alias("_at"), pl.col("_mi").cum_max().alias("_far"))
    if marks.is_empty():
        return ev.select(same_node.alias("_dep"))["_dep"]
    probe = ev.select(pl.int_range(pl.len()).alias("_i"), "ts").filter(pl.col("ts").is_not_null())
    got = probe.join_asof(marks.sort("_at"), left_on="ts", right_on="_at", strategy="backward")
    other = pl.Series("_o", [None] * ev.height, dtype=pl.Int64).scatter(got["_i"], got["_far"].cast(pl.Int64))
    # an untimed row follows the rows before it
    other = other.fill_null(strategy="forward") if ev["ts"].null_count() else other
    return ev.select(pl.max_horizontal(same_node, pl.lit(other).fill_null(-1)).alias("_dep"))["_dep"]


def _set_aside_by_context(det: pl.DataFrame, cat: Catalogue) -> tuple[pl.DataFrame, set[tuple[int, int, int]]]:
    """The matches left once a context signature has vetoed its line, in one step over the table: no other
    match on that line (or exception link) is an event, and a match of a `user_data` signature (a logged
    prompt, one a request) is no finding at all, so nothing is kept per request. Also the vetoed lines that
    still hold a match (an Xid's role comes from the Xid table: the loop below applies the veto to it)."""
    vetoes = [s.id for s in cat.signatures if s.role == "context" and s.veto == "line"]
    keep = [s.id for s in cat.signatures if s.role == "context" or s.table == "xid"]
    quiet = [s.id for s in cat.signatures if s.user_data]
    key = ["eid", "link", "part"]
    vetoed = det.filter(pl.col("sig").is_in(vetoes)).select(key).unique()
    if vetoed.is_empty():
        return det, set()
    set_aside = det.join(vetoed, on=key, how="semi").filter(~pl.col("sig").is_in(keep)).select(*key, "sig")
    rest = det.join(set_aside, on=[*key, "sig"], how="anti").filter(~pl.col("sig").is_in(quiet))
    return rest, set(vetoed.join(rest.select(key), on=key, how="semi").iter_rows())


def benign_eids(det: pl.DataFrame, cat: Catalogue, findings: list) -> pl.Series:
    """The events a context signature matched (user data included) or that are context by their Xid: never an
    unknown error."""
    context = [s.id for s in cat.signatures if s.role == "context"]
    return pl.concat([det.filter(pl.col("sig").is_in(context))["eid"].cast(pl.UInt32),
                      pl.Series([f.eid for f in findings if f.role == "context"], dtype=pl.UInt32)]).unique()


def _findings(ev: pl.DataFrame, det: pl.DataFrame, cat: Catalogue) -> list[Finding]:
    det, vetoed = _set_aside_by_context(det, cat)
    if det.is_empty():
        return []
    rows = det.join(ev.select("eid", "file", "line", "line_end", "ts", "ts_quality", "node", "rank", "pid", "phase",
                              "source", "ident", "uptime", "text", "exc_lines", "exc_types", "exc_messages", "frames"),
                    on="eid", how="left")
    sigs = {s.id: s for s in cat.signatures}
    dead_worker_rank = _dead_worker_ranks(ev)
    out: list[Finding] = []
    for r in rows.iter_rows(named=True):
        sig: Signature = sigs[r["sig"]]
        fields = {k: v for k, v in json.loads(r["fields"] or "{}").items() if v is not None}
        phase = _phase(r["phase"], r["frames"], sig)
        stack_phase = frame_phase(r["frames"]) is not None
        role, category, title = sig.role, sig.category_for_phase(phase), sig.title
        if sig.table == "xid" and "xid" in fields:
            entry = cat.xid.get(int(fields["xid"]))
            if entry:
                role = entry.role if sig.role == "cause" else sig.role
                where = f" on GPU {fields['pci']}" if fields.get("pci") else ""
                title = f"Xid {entry.code}{where}: {entry.meaning.split(':')[0].split('.')[0]}"
        if role != "context" and (r["eid"], r["link"], r["part"]) in vetoed:
            continue  # the line is benign or user data (a logged prompt): nothing on it is an event
        line = r["line"]
        text = r["text"]
        if r["link"] >= 0 and r["exc_lines"]:
            line = r["exc_lines"][r["link"]] + r["part"]  # a message's later lines follow its first
            typ, msg = r["exc_types"][r["link"]], r["exc_messages"][r["link"]]
            text = msg.split("\n")[r["part"]] if r["part"] else (f"{typ}: {msg}" if typ else msg)
        rank = r["rank"] if r["rank"] is not None else _int(fields.get("rank"))
        if sig.role == "symptom" and ("worker" in fields or "pid" in fields):
            rank = dead_worker_rank(r["node"], fields, rank)
        out.append(Finding(
            eid=r["eid"], sig=sig.id, category=category, role=role, priority=sig.priority, file=r["file"],
            line=line, span=(r["line"], r["line_end"] or r["line"]), ts=r["ts"], ts_quality=r["ts_quality"],
            node=r["node"], rank=rank, pid=r["pid"], phase=phase, text=text.split("\n", 1)[0], source=r["source"],
            ident=r["ident"],
            uptime=r["uptime"], fields=fields,
            title=title, phase_from_stack=stack_phase))
    return out


def _phase(observed: str | None, frames: list[str] | None, sig: Signature | None) -> str | None:
    """The stack's innermost known frame first; else the last landmark reached, moved forward to the
    signature's own phase when the landmarks lag behind it (they are sparse: a driver fault at import
    happens at device init whatever was printed before)."""
    from_stack = frame_phase(frames)
    if from_stack:
        return from_stack
    hint = sig.phase[0] if sig is not None and sig.phase else None
    if observed and hint and len(sig.phase) == 1:
        return hint if PHASES.index(hint) > PHASES.index(observed) else observed
    return observed or hint


def _dead_worker_ranks(ev: pl.DataFrame):
    """A line about a dead worker names it by the executor's index ('Worker proc VllmWorker-0 died') or its
    pid, not by its global rank: under data parallel, VllmWorker-0 of the fourth replica is rank 24. The
    worker's own lines carry its attributed rank; a name or pid that gives one rank on its node is used,
    else the index itself when the node has no attributed workers (one replica: index = rank)."""
    own = ev.filter(pl.col("rank").is_not_null() & pl.col("node").is_not_null()) \
        .select("node", "pid", "rank", pl.col("proc").str.extract_groups(WORKER_NAME.pattern).alias("name"))
    own = own.select("node", "pid", "rank", pl.coalesce(pl.col("name").struct.field(g) for g in ("tp", "tp2", "rank"))
                     .cast(pl.Int64, strict=False).alias("index"))
    by_index = own.drop_nulls("index").group_by("node", "index").agg(pl.col("rank").unique())
    by_pid = own.drop_nulls("pid").group_by("node", "pid").agg(pl.col("rank").unique())
    index_rank = {(n, i): r[0] for n, i, r in by_index.iter_rows() if len(r) == 1}
    pid_rank = {(n, p): r[0] for n, p, r in by_pid.iter_rows() if len(r) == 1}
    mapped_nodes = {n for n, _ in index_rank}

    def rank_of(node: str | None, fields: dict, rank: int | None) -> int | None:
        pid, index = _int(fields.get("pid")), _int(fields.get("worker"))
        if pid is not None and (node, pid) in pid_rank:
            return pid_rank[(node, pid)]
        if index is not None:
            return index_rank.get((node, index), index if node not in mapped_nodes else rank)
        return rank
    return rank_of


def _int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _seconds(a: Finding, b: Finding) -> float | None:
    if a.ts is None or b.ts is None:
        return None
    return (b.ts - a.ts).total_seconds()


def _in_scope(a: Finding, b: Finding, scope: str) -> bool:
    if scope == "bundle":
        return True
    if scope == "rank":
        return a.rank is not None and a.rank == b.rank and a.node == b.node
    return a.node == b.node or a.node is None or b.node is None


def _explain(findings: list[Finding], cat: Catalogue) -> None:
    """Mark each finding that an earlier cause in scope explains; a line that names what caused it ('caused by
    previous Xid 149') is explained by that earlier finding; a match of a signature that is a consequence of
    what came before it (`after`: an abort after a collective timed out) is that one's symptom."""
    sigs = {s.id: s for s in cat.signatures}
    _named_causes(findings)
    _bursts(findings)
    for b in findings:
        sig = sigs.get(b.sig) if b.sig else None
        if sig is not None and sig.after and b.role == "cause":
            before = [a for a in findings if a.category in sig.after and a.node == b.node
                      and (dt := _seconds(a, b)) is not None and 0 <= dt <= EXPLAIN_WINDOW_S]
            if before:
                b.role = "symptom"
                b.fields = {**b.fields, "after": before[0].text[:200]}
    causes = [f for f in findings if f.role == "cause"]
    at = {id(f): i for i, f in enumerate(findings)}
    for b in findings:
        for a in causes:
            if a is b or a.category == b.category or a.sig is None:
                continue
            sig = sigs[a.sig]
            if b.category not in sig.explains or not _in_scope(a, b, sig.scope):
                continue
            dt = _seconds(a, b)
            if dt is None:
                ok = a.node == b.node or sig.scope == "bundle"  # the kernel's relative clock: same node
            else:
                ok = -TIE_SECONDS <= dt <= EXPLAIN_WINDOW_S
            if ok:
                b.explainers.add(at[id(a)])
            if ok and (b.explained_by is None or _sort_key(a) < _sort_key(findings[b.explained_by])):
                b.explained_by = at[id(a)]


def _named_causes(findings: list[Finding]) -> None:
    """'... caused by previous Xid 149' (landmarks.toml [[named_cause]]): the earlier finding on the same node
    whose field holds that value explains it."""
    for rule in named_causes():
        for b in findings:
            m = rule.regex.search(b.text)
            if not m:
                continue
            named = [a for a in findings if a is not b and a.node == b.node and str(a.fields.get(rule.field)) ==
                     m.group(rule.field) and _sort_key(a) <= _sort_key(b)]
            if named:
                b.explained_by = findings.index(sorted(named, key=_sort_key)[0])


def _bursts(findings: list[Finding]) -> None:
    """A device's burst (landmarks.toml [[family]]): the first match of the signature on one device is the
    cause, and the matches that follow it within the family's seconds are its consequences (an Xid 13, then an
    Xid 109 of the same GPU: the 13 is the cause, though alone it would only be context)."""
    at = {id(f): i for i, f in enumerate(findings)}
    for rule in families():
        devices: dict[tuple, list[Finding]] = {}
        for f in findings:
            if f.sig == rule.signature and f.fields.get(rule.field) is not None and f.ts is not None:
                devices.setdefault((f.node, f.fields[rule.field]), []).append(f)
        for burst in devices.values():
            first, *rest = sorted(burst, key=_sort_key)
            later = [f for f in rest if (dt := _seconds(first, f)) is not None and 0 <= dt <= rule.seconds]
            if any(f.role == "cause" for f in later):
                first.role = "cause"
            for f in later:
                if f.role in ("cause", "symptom") and first.role == "cause":
                    f.role, f.explained_by = "symptom", at[id(first)]


def _sort_key(f: Finding):
    known = f.ts is not None and f.ts_quality != "relative"
    return (0 if known else 1, f.ts.timestamp() if known else 0.0, f.file, f.line)


def _first(cands: list[Finding], cat: Catalogue) -> Finding:
    """The earliest; within the same second the more specific (priority), then the triage order."""
    cands = sorted(cands, key=_sort_key)
    first = cands[0]
    if first.ts is None and first.uptime is None:
        # untimed lines that state the same failure on one node: neither a file's order (a status dump lists its
        # summary before its events) nor the files' names are a clock, so the more specific statement wins
        tied = [c for c in cands if c.ts is None and c.uptime is None and c.category == first.category
                and (c.node == first.node or None in (c.node, first.node))]
    elif first.ts is None:  # kernel lines with only seconds since boot: simultaneous on the same clock
        tied = [c for c in cands if c.ts is None and c.file == first.file and c.uptime is not None
                and abs(c.uptime - first.uptime) < TIE_SECONDS]
    else:
        tied = [c for c in cands if c.ts is not None and abs((c.ts - first.ts).total_seconds()) < TIE_SECONDS]
    triage = {k: v.triage for k, v in cat.categories.items()}
    return sorted(tied, key=lambda c: (-c.priority, _sort_key(c), triage.get(c.category, 99)))[0]


def _statement(root: Finding, findings: list[Finding]) -> Finding:
    """The line that states the cause: an NCCL failure surfaces in Python ('... unhandled system error ...
    Last error: <the WARN>'), but the WARN line of the same process names the failing call. NCCL debug
    files often carry no time, so the WARN of the same process and category is preferred when it is not
    later than the exception."""
    if root.source == "nccl" or not root.category.startswith("nccl."):
        return root
    same = [f for f in findings if f.source == "nccl" and f.category == root.category and f.role == "cause"
            and f.node == root.node and ((f.pid is not None and f.pid == root.pid)
                                         or (f.rank is not None and f.rank == root.rank))
            and (f.ts is None or root.ts is None or (f.ts - root.ts).total_seconds() <= TIE_SECONDS)]
    if not same:
        return root
    pick = sorted(same, key=_sort_key)[0]
    if pick.ts is None:  # it happened just before the exception that quotes it
        pick.ts, pick.ts_quality, pick.phase = root.ts, "inferred", root.phase
    return pick


def _borrow_rank(root: Finding, findings: list[Finding]) -> None:
    """A cause with no rank (a kernel line, a crash written by C code) takes the rank of the first
    event it explains on its node, or of a dead-worker symptom that names it right after. A cause whose
    time is unknown (kernel seconds since boot with no boot time) also takes that event's phase."""
    # what it explains: itself, or the other lines of the same failure (an oom-kill block) that
    # explained those events first
    same = {i for i, f in enumerate(findings) if f is root or (f.category == root.category and f.node == root.node)}
    explained = [f for f in findings if f.explained_by in same]
    if root.ts is None or root.ts_quality == "relative":
        placed = [f for f in explained if f.phase and f.ts is not None]
        if placed:
            root.phase = sorted(placed, key=_sort_key)[0].phase
    if root.rank is not None:
        return
    # the same process on the same node (a kernel line names its pid): its own lines say its rank
    pid = root.pid if root.pid is not None else _int(root.fields.get("pid"))
    same_pid = [f for f in findings if f.rank is not None and f.node == root.node and pid is not None
                and (f.pid == pid or _int(f.fields.get("pid")) == pid)]
    linked = same_pid or [f for f in explained if f.rank is not None and f.node == root.node]
    near = [f for f in findings if f.role == "symptom" and f.rank is not None and f.node == root.node
            and (dt := _seconds(root, f)) is not None and -TIE_SECONDS <= dt <= 120 and ("rank" in f.fields or "worker" in f.fields)]
    # the same fault seen by one rank in the same instant (the kernel's segfault line and the worker's own
    # 'SIGSEGV received'): the host's pid is not the container's, the time and the kind of failure are
    same_fault = [f for f in findings if f.rank is not None and f.node == root.node and f.category == root.category
                  and (dt := _seconds(root, f)) is not None and abs(dt) <= 2 * TIE_SECONDS]
    if len({f.rank for f in same_fault}) > 1:
        same_fault = []
    for group in (linked, same_fault, near):
        if group:
            pick = sorted(group, key=_sort_key)[0]
            root.rank = pick.rank
            if root.node is None:
                root.node = pick.node
            return


def _stack_phase(root: Finding, findings: list[Finding]) -> None:
    """A cause whose own line has no stack takes the phase that a stack of the same failure shows
    (a driver fault warned about at import, then raised inside init_device on every worker)."""
    if root.phase_from_stack:
        return
    same = [f for f in findings if f.category == root.category and f.phase_from_stack and f.phase
            and (root.node is None or f.node in (None, root.node))
            and (dt := _seconds(root, f)) is not None and -TIE_SECONDS <= dt <= SAME_FAILURE_S]
    if same:
        root.phase = sorted(same, key=_sort_key)[0].phase


def _exceptions(ev: pl.DataFrame, benign: pl.Series) -> list[Finding]:
    """Exceptions and ERROR lines no signature knows (nor sets aside as benign), as `other` candidates in
    time order; the first that the service did not survive names an incident that no signature fits."""
    cand = ev.filter(
        (pl.col("exc_types").is_not_null() & (pl.col("text").str.starts_with("Fatal Python error").not_()))
        | (pl.col("text").str.contains(EXCEPTION_LINE) & pl.col("level").is_in(["ERROR", "CRITICAL"]).fill_null(True)))
    cand = cand.filter(~pl.col("eid").is_in(benign.implode()))
    out = []
    for r in cand.sort(["ts", "file", "line"], nulls_last=True).iter_rows(named=True):
        text = r["text"].split("\n", 1)[0]
        out.append(Finding(eid=r["eid"], sig=None, category="other", role="cause", priority=0, file=r["file"],
                           line=r["exc_lines"][0] if r["exc_lines"] else r["line"],
                           span=(r["line"], r["line_end"] or r["line"]), ts=r["ts"], ts_quality=r["ts_quality"],
                           node=r["node"], rank=r["rank"], pid=r["pid"],
                           phase=_phase(r["phase"], r["frames"], None), text=text,
                           source=r["source"], ident=r["ident"], title="Unrecognised error: " + mask_template(text)))
    return out


def _other(candidates: list[Finding], findings: list[Finding]) -> tuple[Finding | None, str | None, int]:
    """The first exception the service did not survive (not a known symptom's line, if another is left), and
    how many node/ranks repeat its template."""
    left = [f for f in candidates if f.set_aside is None]
    if not left:
        return None, None, 0
    symptoms = {f.eid for f in findings if f.role == "symptom"}
    f = next((c for c in left if c.eid not in symptoms), left[0])
    template = mask_template(f.text)
    same = {(x.node, x.rank) for x in left if same_template(template, mask_template(x.text))}
    return f, template, len(same)


def _recoveries(ev: pl.DataFrame, findings: list[Finding], cat: Catalogue) -> dict[int, Finding]:
    """id(finding) -> the first line after it, on its node, saying its device is back: the signature's
    `recovery` with the same value in every field both name and the finding has."""
    out: dict[int, Finding] = {}
    for sig in cat.signatures:
        mine = [f for f in findings if f.sig == sig.id and f.ts is not None] if sig.recovery else []
        if not mine:
            continue
        rec = sig.recovery
        rows = ev.filter(pl.col("text").str.contains_any(list(rec.prefilter)) & pl.col("text").str.contains(rec.regex)
                         & pl.col("ts").is_not_null())
        if rows.is_empty():
            continue
        rows = rows.select("eid", "node", "ts", "ts_quality", "file", "line", "text").with_columns(
            pl.col("text").str.extract_groups(rec.regex).alias("_g")).unnest("_g")
        shared = [k for k in rec.fields if k in sig.fields]
        for f in mine:
            for r in rows.filter(pl.col("node").eq_missing(f.node) & (pl.col("ts") >= f.ts)).sort("ts", "line") \
                    .iter_rows(named=True):
                same = [k for k in shared if f.fields.get(k) is not None and r[k] is not None]
                later = r["line"] > f.line if r["file"] == f.file else r["ts"] > f.ts
                if same and later and all(str(f.fields[k]) == r[k] for k in same):
                    out[id(f)] = Finding(eid=r["eid"], sig=None, category="recovery", role="context", priority=0,
                                         file=r["file"], line=r["line"], span=(r["line"], r["line"]), ts=r["ts"],
                                         ts_quality=r["ts_quality"], node=r["node"], rank=None, pid=None,
                                         phase=None, text=r["text"])
                    break
    return out


def _set_aside(findings: list[Finding], life: Lifecycle, prose: frozenset[str] | set[str],
               recovered: dict[int, Finding] | None = None, sigs: dict[str, Signature] | None = None) -> None:
    """Findings that cannot be the cause: mentions (a note or a ticket quoting an error: a plain line with no
    time in a file of prose), the shutdown's trail (after its attempt's stop), and what the service survived
    (its process, or its node, went on working after it, and it explains nothing that follows; or its device
    came back before anything it explains failed)."""
    at = {id(f): i for i, f in enumerate(findings)}
    recovered, sigs = recovered or {}, sigs or {}

    causes = [h for h in findings if h.role == "cause"]

    def nearer_cause(f: Finding, g: Finding) -> bool:
        """Another cause on g's node came between f and g, or with g (the traceback that follows 'EngineCore
        failed to start' in the same second): g is that one's failure, not f's."""
        return any(h is not f and h.eid != g.eid and h.set_aside is None and h.node == g.node
                   and h.category not in (f.category, g.category) and _sort_key(f) < _sort_key(h)
                   and (_sort_key(h) < _sort_key(g) or (h.sig is not None and g.ts and h.ts
                                                        and 0 <= _seconds(g, h) <= TIE_SECONDS))
                   for h in causes)

    def fails_again(f: Finding) -> bool:
        """Something later in its scope fails that it explains, or fails the same way."""
        i = at[id(f)]
        return any(g is not f and g.set_aside is None and _sort_key(f) < _sort_key(g)
                   and (((g.explained_by == i or i in g.explainers) and not nearer_cause(f, g))
                        or (g.category == f.category and g.node == f.node))
                   and (g.role == "cause" or g.category in outcome_data().fatal)
                   and (dt := _seconds(f, g)) is not None and 0 <= dt <= EXPLAIN_WINDOW_S for g in findings)

    def failed_meanwhile(f: Finding, back: Finding) -> bool:
        """A failure f can explain came between it and its device's return (or with either)."""
        explains = set(sigs[f.sig].explains) if f.sig in sigs else set()
        return any(g is not f and g.source != "kernel" and g.set_aside is None and g.category in explains
                   and (a := _seconds(f, g)) is not None and (b := _seconds(g, back)) is not None
                   and a >= -TIE_SECONDS and b >= -TIE_SECONDS for g in findings)

    # the latest first: whether a later failure counts depends on whether it was survived itself
    for f in sorted(findings, key=_sort_key, reverse=True):
        if f.eid < 0:
            continue
        if f.file in prose and f.source in ("plain", None) and f.ts is None:
            f.set_aside = "a mention in a note, not a log line"
            continue
        if (name := _foreign_process(f)) is not None:
            f.set_aside = f"about {name}, a process that is not the deployment's"
            continue
        stop = life.after_stop(f)
        if stop is not None:
            f.set_aside = f"after the stop at {stop.file}:{stop.line} (the shutdown's trail)"
            continue
        if f.role == "cause" and (met := life.joined_after(f)) is not None:
            f.set_aside = f"survived: its group formed after it ({met.file}:{met.line})"
        elif f.role == "cause" and (went_on := life.progress_after(f)) is not None and not fails_again(f):
            f.set_aside = f"survived: {'its node' if f.source == 'kernel' else 'its process'} went on working " \
                          f"({went_on.file}:{went_on.line})"
        elif f.role == "cause" and (back := recovered.get(id(f))) is not None and not failed_meanwhile(f, back):
            f.set_aside = f"survived: the device came back ({back.file}:{back.line}) before anything failed"
    # an untimed line of a failure set aside where it shows its time (a pod status after the kernel's oom-kill
    # of the same container) is the same failure
    aside = {(f.node, f.category): f.set_aside for f in findings if f.ts is not None and f.set_aside
             and not f.set_aside.startswith("after the stop")}
    for f in findings:
        if f.set_aside is None and f.role == "cause" and f.ts is None and (f.node, f.category) in aside:
            f.set_aside = f"the same failure as where it shows its time: {aside[(f.node, f.category)]}"


def _unexplain_by_set_aside(findings: list[Finding]) -> None:
    """An explanation by a finding that was set aside (a flap the service survived, a shutdown's trail) is
    void: the finding is explained by the first of its other explainers still standing, or by none."""
    for f in findings:
        if f.explained_by is not None and findings[f.explained_by].set_aside is not None:
            alive = [i for i in f.explainers if findings[i].set_aside is None]
            f.explained_by = min(alive, key=lambda i: _sort_key(findings[i])) if alive else None


def _says_why(error: Finding | None, gone: Finding) -> bool:
    """An error came before the worker was reported gone, or with it (its traceback follows 'WorkerProc
    failed to start' on the same node): the worker did not vanish silently."""
    if error is None:
        return False
    if _sort_key(error) < _sort_key(gone):
        return True
    dt = _seconds(gone, error)
    return error.node == gone.node and dt is not None and dt <= SAME_FAILURE_S


def _foreign_process(f: Finding) -> str | None:
    """The name of the process a kernel line is about when it is not one of the deployment's."""
    data = outcome_data()
    name = (f.fields.get("comm") or f.fields.get("task")) if f.category in data.process_categories else None
    return name if name and f.source == "kernel" and not re.match(data.processes, name) else None


def _accounted(gone: Finding, findings: list[Finding], cat: Catalogue) -> bool:
    """A symptom of a root category says why the worker went (Ray: 'the actor died because its node has
    died'): at the same time, on its node, of a category whose causes explain workers gone."""
    vanished = outcome_data().vanished
    explaining = {s.category for s in cat.signatures if s.role == "cause" and set(s.explains) & vanished}
    return any(f.role == "symptom" and f.category in explaining and f.set_aside is None and f.node == gone.node
               and (dt := _seconds(gone, f)) is not None and abs(dt) <= SAME_FAILURE_S for f in findings)


def _vanished_worker(findings: list[Finding], cat: Catalogue) -> Finding | None:
    """With no cause anywhere: the first worker reported gone (a dead worker, a dead actor, a failed child)
    was killed from outside. The cause is proc.killed on that worker, not the error the engine raises
    after it."""
    data = outcome_data()
    gone = [f for f in findings if f.set_aside is None and f.category in data.vanished]
    if not gone:
        return None
    # the report that names the worker (its rank) says more than the engine's own 'a worker died'
    first = _first([f for f in gone if f.rank is not None] or gone, cat)
    sig = cat.by_id(data.killed_signature) if data.killed_signature else None
    who = f"rank {first.rank}" if first.rank is not None else (first.fields.get("worker") or first.fields.get("proc")
                                                                or "a worker")
    return Finding(eid=first.eid, sig=sig.id if sig else None, category="proc.killed", role="cause",
                   priority=0, file=first.file, line=first.line, span=first.span, ts=first.ts,
                   ts_quality=first.ts_quality, node=first.node, rank=first.rank, pid=first.pid, phase=first.phase,
                   text=first.text, fields=first.fields,
                   title=f"{who} vanished with no cause in the bundle (killed from outside?)")


STATS = (r"Running: (?P<running>\d+) reqs, (?:Swapped: \d+ reqs, )?(?:Waiting|Pending): (?P<waiting>\d+) reqs,"
         r"(?: Preemptions: (?P<preemptions>\d+),)? GPU KV cache usage: (?P<kv>[\d.]+)%")


def load_before(ev: pl.DataFrame, f: Finding) -> dict | None:
    """The engine's last stats line before `f` (oom.inference: what load the server was under)."""
    if f.ts is None:
        return None
    st = ev.filter(pl.col("text").str.contains("GPU KV cache usage") & (pl.col("ts") <= f.ts)) \
        .sort("ts").select("file", "line", "ts", pl.col("text").str.extract_groups(STATS).alias("g")).unnest("g") \
        .drop_nulls("running")
    if st.is_empty():
        return None
    last = st.row(-1, named=True)
    peak = st.tail(6)
    return {"running": int(last["running"]), "waiting": int(last["waiting"]), "kv_cache_usage_pct": float(last["kv"]),
            "preemptions": _int(last["preemptions"]), "evidence": f"{last['file']}:{last['line']}",
            "max_waiting_recent": int(peak["waiting"].cast(pl.Int64).max())}


def _check_root(check, ev: pl.DataFrame, dumps: dict[str, str], cat: Catalogue) -> Finding:
    """A failing check as a cause finding, at the line of its evidence (an event, else a dump's line)."""
    file, _, line = check.evidence.rpartition(":")
    at = ev.filter((pl.col("file") == file) & (pl.col("line") == int(line))).head(1)
    if at.height:
        r = at.row(0, named=True)
        text, ts, tq, node, rank, pid, phase = (r["text"], r["ts"], r["ts_quality"], r["node"], r["rank"], r["pid"],
                                                r["phase"])
    else:
        lines = dumps.get(file, "").split("\n")
        text = lines[int(line) - 1] if 0 < int(line) <= len(lines) else ""
        ts, tq, node, rank, pid, phase = None, "none", None, None, None, None
    return Finding(eid=-1, sig=None, category=check.category, role="cause", priority=0, file=file, line=int(line),
                   span=(int(line), int(line)), ts=ts, ts_quality=tq, node=node, rank=rank, pid=pid,
                   phase=phase or "startup", text=text.strip(), title=cat.categories[check.category].title,
                   check=check.id)


def check_explains(decision: Decision, checks, ev: pl.DataFrame, dumps: dict[str, str], cat: Catalogue) -> Decision:
    """A failing environment check is a cause like a log line: when its failure explains the root the logs name
    (facts.toml [[check]] `explains`: nodes that run different NCCL builds explain the NCCL errors their healthy
    peers report), the check's evidence (the odd node out) is the cause, and the logged root one of its
    symptoms. A root that comes before the evidence (both timed) is not explained."""
    root = decision.root
    if root is None:
        return decision
    failing = [c for c in checks if c.status == "fail" and c.evidence and root.category in c.explains
               and c.category in cat.categories]
    for check in sorted(failing, key=lambda c: (cat.categories[c.category].triage, c.id)):
        cause = _check_root(check, ev, dumps, cat)
        if cause.ts is not None and root.ts is not None and (cause.ts - root.ts).total_seconds() > TIE_SECONDS:
            continue
        findings = decision.findings if any(f is root for f in decision.findings) else decision.findings + [root]
        findings = findings + [cause]
        root.explained_by = len(findings) - 1
        return Decision(False, cause, "medium", f"the environment check {check.id!r} fails and explains the "
                        f"{root.category} error the logs show ({root.file}:{root.line}): {check.detail}", findings,
                        outcome=decision.outcome)
    return decision


def quiet_verdict(decision: Decision, checks, ev: pl.DataFrame, dumps: dict[str, str],
                  cat: Catalogue) -> Decision:
    """A bundle whose logs show no failure can still hold the incident: a configuration fault that
    crashes nothing (prefix caching off for K3, the wrong all2all backend), from a failing check. When the logs
    do show a failure, a failing check that explains it is the cause (check_explains)."""
    if not decision.healthy and decision.root is not None:
        return check_explains(decision, checks, ev, dumps, cat)
    failing = [c for c in checks if c.status == "fail" and c.category in cat.categories
               and cat.categories[c.category].quiet and c.evidence]
    if not failing:
        return decision
    check = sorted(failing, key=lambda c: (cat.categories[c.category].triage, c.id))[0]
    return Decision(False, _check_root(check, ev, dumps, cat), "medium", f"the logs show no failure, but the "
                    f"environment check {check.id!r} fails: {check.detail}", decision.findings,
                    outcome=decision.outcome)


def weigh(d: Decision, missing: list[str]) -> Decision:
    """The confidence of a cause that explains nothing else drops when the bundle lacks parts of the
    deployment (missing.py): the failure may have started there."""
    if not missing or d.root is None or d.confidence != "high":
        return d
    at = next((i for i, f in enumerate(d.findings) if f is d.root), None)
    if at is not None and any(f.explained_by == at for f in d.findings):
        return d
    return replace(d, confidence="medium", reason=f"{d.reason}; but the bundle lacks {missing[0].split(' (')[0]}, "
                                                  f"where the failure may have started")


def decide(ev: pl.DataFrame, det: pl.DataFrame, cat: Catalogue, app_files: frozenset[str] | set[str] | None = None,
           prose: frozenset[str] | set[str] = frozenset(), restarts_seen: int = 0) -> Decision:
    """The outcome of the run, and the earliest event that explains it (module docstring, outcome.py).
    `app_files`: the deployment's own logs (default: every file); `prose`: files read as plain text (notes,
    tickets): their untimed plain lines mention errors; `restarts_seen`: restarts the orchestrator's state
    shows (a pod's or container's restart count)."""
    life = Lifecycle(ev, set(ev["file"].unique().to_list()) if app_files is None else app_files, restarts_seen)
    findings = _findings(ev, det, cat)
    _explain(findings, cat)
    others = _exceptions(ev, benign_eids(det, cat, findings))
    _set_aside(findings + others, life, prose, _recoveries(ev, findings, cat), {s.id: s for s in cat.signatures})
    _unexplain_by_set_aside(findings)
    # (requests refused before the server is ready are a probe's, not failures)
    fatal = [f for f in findings if f.set_aside is None and f.category in outcome_data().fatal
             and (f.category != "symptom.http_error" or life.ready_before(f))]
    again = life.failed_again(fatal + [f for f in findings + others if f.role == "cause" and f.set_aside is None]) \
        or any(f.category == "symptom.restart" for f in findings)
    causes = [f for f in findings if f.role == "cause" and f.explained_by is None and f.set_aside is None]
    if causes:
        root = _statement(_first(causes, cat), findings)
        _borrow_rank(root, findings)
        _stack_phase(root, findings)
        root_at = findings.index(root)
        strong = any(f.explained_by == root_at for f in findings)
        timed = root.ts is not None and root.ts_quality in ("exact", "inferred")
        weak = root.category in ("nccl.system_error", "proc.killed", "env.cuda_init_failed", "nccl.timeout")
        confidence = "high" if (timed or strong) and not weak else "medium"
        earliest = _first(causes + [f for f in findings if f.role == "cause" and f.set_aside is None], cat) is root
        reason = ("the earliest cause across all ranks and nodes" if earliest else
                  "the cause that the logs name and that explains the rest") + (
            "; it explains the errors that follow it" if strong else "")
        load = load_before(ev, root) if root.category == "oom.inference" else None
        return Decision(False, root, confidence, reason, findings, load=load,
                        outcome=life.outcome(root, again))
    first_death = _first(fatal, cat) if fatal else None
    other, template, repeats = _other(others, findings)
    failure = _first([f for f in (first_death, other) if f is not None], cat) if (first_death or other) else None
    outcome = life.outcome(failure, again)
    if failure is None:
        healthy = outcome.state in HEALTHY
        return Decision(healthy, None, "high" if healthy else "low",
                        "nothing abnormal was found before the run " + (
                            "was stopped" if outcome.state == "stopped" else "ends") if healthy
                        else outcome.detail, findings, outcome=outcome)
    vanished = _vanished_worker(findings, cat)
    symptom_lines = {f.eid for f in findings if f.role == "symptom"}
    own_error = other if other is not None and other.eid not in symptom_lines else None
    if vanished is not None and not _says_why(own_error, vanished) and not _accounted(vanished, findings, cat):
        return Decision(False, vanished, "low", "a worker vanished and nothing in the bundle says why: it was killed "
                        "from outside (an OOM killer, an operator, an orchestrator) on its node",
                        findings + [vanished], outcome=life.outcome(vanished, again))
    roots = {k for k, c in cat.categories.items() if c.group not in ("symptom", "context")}
    # (a symptom its node went on from, a retried connect, says nothing of the failure)
    fallback = [f for f in findings if f.role == "symptom" and f.category in roots and f.set_aside is None
                and life.progress_after(f, node_wide=True) is None]
    if fallback:
        root = _first(fallback, cat)
        _borrow_rank(root, findings)
        return Decision(False, root, "low",
                        "only symptoms were found; the earliest one that names a root-cause category is reported, "
                        "but the real cause is probably outside the bundle", findings, outcome=outcome)
    if other is not None:
        return Decision(False, other, "low", "no signature fits; the first exception the service did not survive "
                        "is reported", findings + [other], template=template, repeats=repeats, outcome=outcome)
    root = first_death
    root.category = "other"
    return Decision(False, root, "low", "only symptoms were found and no cause; reported as `other`", findings,
                    outcome=outcome)
