"""Findings: every detection and every exception as a candidate cause with its time, node, rank and phase; the Decision
record; and the load the server carried before a finding."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from k3logs.catalogue.landmarks import decision_line
from k3logs.catalogue.signatures import Catalogue, Signature
from k3logs.schema import PHASES

from .attribution import RX
from .detect import frame_phase
from .outcome import TIE_SECONDS, Outcome
from .templates import mask_template


SAME_FAILURE_S = 60.0     # the same fault seen again this soon is the same failure (not a retry)
EXPLAIN_WINDOW_S = 3600.0  # an explanation reaches this far forward in time
FLAP_EPISODES = 3          # a fault back this many more times within the window (each more than SAME_FAILURE_S
                           # after the one before) keeps coming back: however each time fared, it was not survived
# the lines the decision reads are data, each with samples: patterns/landmarks.toml [[line]] (looked up when used,
# never at import: loading checks them with polars, whose threads must not start before a process forks)


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
    unready: bool = False             # it came before readiness: its signature says so (a port never bound), its
                                      # stack (a start-up step), or a failed start that follows it (the outcome)
    set_aside: str | None = None      # why it cannot be the cause: after the stop (its trail), or survived
    ident: str | None = None          # the unit or container that logged it (journald, compose), if any
    task: int | None = None           # the `srun -l` task that printed it, in a job's output of every task
    node_from: str | None = None      # the witness that gave it its node when its own line did not (the report's)
    raised_on: str | None = None      # the node of the actor that raised it, when another process printed it (Ray)
    newest_first: bool = False        # its file is written newest first (clock.in_file_order)
    script: str | None = None         # the file its traceback's outermost frame runs, where no frame is one the
                                      # landmarks know (the deployment's steps)
    ts_until: datetime | None = None  # a line with no time of its own (ts: the time of the line before it) came
                                      # before this one: the time of the next line of its file that has one

    @property
    def place(self) -> int:
        """Its place in the time order of its file (a file written newest first counts from its end)."""
        return -self.line if self.newest_first else self.line


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
    unexplained: bool = False          # an abnormal end was seen (an orchestrator's), its cause is in no log held


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


def findings_of(ev: pl.DataFrame, det: pl.DataFrame, cat: Catalogue) -> list[Finding]:
    det, vetoed = _set_aside_by_context(det, cat)
    if det.is_empty():
        return []
    rows = det.join(ev.select("eid", "file", "line", "line_end", "ts", "ts_quality", "node", "rank", "pid", "proc",
                              "phase", "source", "ident", "uptime", "text", "exc_lines", "exc_types", "exc_messages",
                              "frames", "script", *(c for c in ("seq", "w_task", "wt") if c in ev.columns)),
                    on="eid", how="left")
    rows = _until(_with_following_stack(rows, ev), ev)
    sigs = {s.id: s for s in cat.signatures}
    dead_worker_rank = _dead_worker_ranks(ev)
    out: list[Finding] = []
    for r in rows.iter_rows(named=True):
        sig: Signature = sigs[r["sig"]]
        fields = {k: v for k, v in json.loads(r["fields"] or "{}").items() if v is not None}
        if "at" in fields and (when := _moment(fields["at"], r["ts"], r.get("wt"))) is not None:
            fields["at_utc"] = when
        phase = _phase(r["phase"], r["frames"], sig)
        stack_phase = frame_phase(r["frames"]) is not None
        role, category, title = sig.role, sig.category_for_phase(phase), sig.title
        if sig.table == "xid" and "xid" in fields:
            entry = cat.xid.get(int(fields["xid"]))
            if entry:
                role = entry.role if sig.role == "cause" else sig.role
                if entry.context_when and re.search(entry.context_when, fields.get("detail") or ""):
                    role = "context"
                where = f" on GPU {fields['pci']}" if fields.get("pci") else ""
                title = f"Xid {entry.code}{where}: {entry.meaning.split(':')[0].split('.')[0]}"
        if role != "context" and (r["eid"], r["link"], r["part"]) in vetoed:
            continue  # the line is benign or user data (a logged prompt): nothing on it is an event
        line = r["line"]
        text = r["text"]
        if r["link"] >= 0 and r["exc_lines"]:
            # a chain states its cause first: a cause matched on a later exception (raised from the first, or
            # while handling it) is the first exception's failure, so the line is the first's (a symptom's is its own;
            # so is a later line of a message, the output of the tool it ran that the exception carries: a compiler's)
            link, part = (r["link"], r["part"]) if r["link"] == 0 or role != "cause" or r["part"] > 0 else (0, 0)
            # (a message's later lines follow its first, within the traceback: a record's sub-rows share its line)
            line = min(r["exc_lines"][link] + part, r["line_end"] or r["line"])
            typ, msg = r["exc_types"][link], r["exc_messages"][link]
            text = msg.split("\n")[part] if part else (f"{typ}: {msg}" if typ else msg)
        rank = r["rank"] if r["rank"] is not None else as_int(fields.get("rank"))
        if sig.role == "symptom" and ("worker" in fields or "pid" in fields or "proc" in fields):
            rank = dead_worker_rank(r["node"], fields, rank, r["proc"])
        out.append(Finding(
            eid=r["eid"], sig=sig.id, category=category, role=role, priority=sig.priority, file=r["file"],
            line=line, span=(r["line"], r["line_end"] or r["line"]), ts=r["ts"], ts_quality=r["ts_quality"],
            node=r["node"], rank=rank, pid=r["pid"], phase=phase, text=text.split("\n", 1)[0], source=r["source"],
            ident=r["ident"], task=r.get("w_task"), newest_first=(r.get("seq") or 0) < 0,
            uptime=r["uptime"], fields=fields, script=_script(r), ts_until=r["ts_until"],
            title=title, phase_from_stack=stack_phase, unready=sig.unready or _starting(r["frames"])))
    return out


def _moment(at: str, ts: datetime | None, printed: datetime | None) -> datetime | None:
    """The time of the moment a line names (`at`, as its host prints local time: 'reboot at 2026-10-14 04:00:00
    CDT'), by the line's own printed time and its time on the common clock: the moment is as far after the line on
    both. (A printed time with no year takes the moment's.) None beyond a week, or where either time is missing."""
    try:
        named = datetime.strptime(at, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    if ts is None or printed is None:
        return None
    try:
        ahead = named - printed.replace(year=named.year)
    except ValueError:   # (29 February printed with no year)
        return None
    return ts + ahead if abs(ahead.total_seconds()) <= 7 * 86400 else None


def _with_following_stack(rows: pl.DataFrame, ev: pl.DataFrame) -> pl.DataFrame:
    """A line with no stack of its own (NCCL's WARN, a CUDA error printed before the raise) takes the stack of
    the traceback its own process prints right after it (same node and pid, within TIE_SECONDS, further down
    the same file): that exception is this failure raised, and its frames say what the process was doing. A line
    that names no pid is its rank's (torch's watchdog, then the stack of the collective it caught)."""
    who = (pl.coalesce(pl.col("pid").cast(pl.Int64), -1 - pl.col("rank").cast(pl.Int64)).alias("_who"),
           pl.col("node").fill_null("").alias("_node"))   # (a join matches no null: a bundle of one machine)
    bare = rows.with_columns(who).filter(pl.col("frames").is_null() & pl.col("_who").is_not_null()
                                         & pl.col("ts").is_not_null())
    stacks = ev.with_columns(who).filter(pl.col("frames").is_not_null() & pl.col("_who").is_not_null()
                                         & pl.col("ts").is_not_null())
    if bare.is_empty() or stacks.is_empty():
        return rows
    keys = ["file", "_node", "_who"]
    got = bare.select("eid", *keys, "ts", "line").sort("line").join_asof(
        stacks.select(*keys, pl.col("ts").alias("_ts"), pl.col("line").alias("_line"), pl.col("frames").alias("_f"))
        .sort("_line"), left_on="line", right_on="_line", by=keys, strategy="forward", allow_exact_matches=False,
        check_sortedness=False)  # (sorted by line above; `by` hides it)
    # (further down the file, within a tie of its time either way: threads stamp their lines as they print them)
    got = got.filter((pl.col("_ts") - pl.col("ts")).dt.total_microseconds().abs() <= TIE_SECONDS * 1e6)
    got = got.select("eid", "_f")
    return rows.join(got, on="eid", how="left").with_columns(pl.coalesce("frames", "_f").alias("frames")).drop("_f")


def _until(rows: pl.DataFrame, ev: pl.DataFrame) -> pl.DataFrame:
    """`ts_until` of a row whose time is the line's before it: the time of the next row of its file that has a
    time of its own, of those kept (an untimed traceback happened somewhere between the two; where none was kept,
    it has no bound)."""
    own = pl.any_horizontal(pl.col(c).is_not_null() for c in ("lt", "wt", "uptime"))
    inferred = rows.filter(pl.col("ts").is_not_null()).join(ev.filter(~own).select("eid"), on="eid", how="semi")
    timed = ev.filter(own & pl.col("ts").is_not_null() & (pl.col("ts_quality") != "relative"))
    if inferred.is_empty() or timed.is_empty():
        return rows.with_columns(pl.lit(None, rows.schema["ts"]).alias("ts_until"))
    got = inferred.select("eid", "file", "line").sort("line").join_asof(
        timed.select("file", pl.col("line").alias("_line"), pl.col("ts").alias("ts_until")).sort("_line"),
        left_on="line", right_on="_line", by="file", strategy="forward", allow_exact_matches=False,
        check_sortedness=False)
    return rows.join(got.select("eid", "ts_until").unique("eid"), on="eid", how="left")


def _phase(observed: str | None, frames: list[str] | None, sig: Signature | None) -> str | None:
    """The stack's innermost known frame first; else the last landmark reached, moved forward to the
    signature's own phase when the landmarks lag behind it (they are sparse: a driver fault at import
    happens at device init whatever was printed before); a check made where its frame's function begins
    (`at_frame`) takes that frame's phase, whatever landmark that function printed."""
    from_stack = frame_phase(frames, None if sig is not None and sig.at_frame else observed)
    if from_stack:
        return from_stack
    hint = sig.phase[0] if sig is not None and sig.phase else None
    if observed and hint and len(sig.phase) == 1:
        return hint if PHASES.index(hint) > PHASES.index(observed) else observed
    return observed or hint


def _dead_worker_ranks(ev: pl.DataFrame):
    """A line about a dead worker names it by its process name ('Worker proc Worker_PP1_TP5 died'), its
    executor rank ('Worker proc VllmWorker-0 died') or its pid, not by its global rank: under data parallel,
    VllmWorker-0 of the fourth replica is rank 24. The worker's own lines carry its attributed rank; a name or
    pid that gives one rank on its node is used; else, reported by a replica's engine core (EngineCore_DP5), that
    replica's executor rank: its workers in the order of their ranks; else, on a node that runs one replica, the
    executor rank when the node holds that rank (pipeline stages across nodes: VllmWorker-11 is rank 11 on the
    second node); else the TP index it maps to on its node; else the index itself when the node has no attributed
    workers."""
    own = ev.filter(pl.col("rank").is_not_null() & pl.col("node").is_not_null()) \
        .select("node", "pid", "proc", "rank",
                pl.col("proc").str.extract_groups(RX["worker_name"].pattern).alias("name"))
    own = own.select("node", "pid", "proc", "rank", pl.col("name").struct.field("dp").cast(pl.Int64).alias("replica"),
                     pl.col("name").struct.field("dp").is_not_null().alias("dp"),
                     pl.coalesce(pl.col("name").struct.field(g) for g in ("tp", "tp2", "rank"))
                     .cast(pl.Int64, strict=False).alias("index"))
    replica = dict(own.drop_nulls("replica").group_by("replica").agg(pl.col("rank").unique().sort()).iter_rows())
    node_ranks = {n: set(r) for n, r, dp in own.group_by("node").agg(pl.col("rank").unique(), pl.col("dp").any())
                  .iter_rows() if not dp}
    by_index = own.drop_nulls("index").group_by("node", "index").agg(pl.col("rank").unique())
    by_pid = own.drop_nulls("pid").group_by("node", "pid").agg(pl.col("rank").unique())
    by_name = own.drop_nulls("proc").group_by("node", "proc").agg(pl.col("rank").unique())
    index_rank = {(n, i): r[0] for n, i, r in by_index.iter_rows() if len(r) == 1}
    pid_rank = {(n, p): r[0] for n, p, r in by_pid.iter_rows() if len(r) == 1}
    name_rank = {(n, p): r[0] for n, p, r in by_name.iter_rows() if len(r) == 1}
    mapped_nodes = set(by_index["node"].to_list())

    def rank_of(node: str | None, fields: dict, rank: int | None, reporter: str | None = None) -> int | None:
        pid, index = as_int(fields.get("pid")), as_int(fields.get("worker"))
        if pid is not None and (node, pid) in pid_rank:
            return pid_rank[(node, pid)]
        if (node, fields.get("proc")) in name_rank:
            return name_rank[(node, fields.get("proc"))]
        ranks = replica.get(as_int(m.group(1))) if reporter and (m := RX["engine_replica"].match(reporter)) else None
        if index is not None and ranks and index < len(ranks):
            return ranks[index]
        if index is not None:
            if index in node_ranks.get(node, ()):
                return index
            return index_rank.get((node, index), index if node not in mapped_nodes else rank)
        return rank
    return rank_of


def as_int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def exceptions(ev: pl.DataFrame, benign: pl.Series, symptoms: list[int] = ()) -> list[Finding]:
    """Exceptions and ERROR lines no signature knows (nor sets aside as benign), as `other` candidates in
    time order; the first that the service did not survive names an incident that no signature fits. A lone
    exception a symptom signature knows (`symptoms`: their events; EngineDeadError) is that symptom, not an
    unknown error; one chained to others may hide an unknown one and stays."""
    cand = ev.filter(
        (pl.col("exc_types").is_not_null() & (pl.col("text").str.starts_with("Fatal Python error").not_()))
        | (pl.col("text").str.contains(decision_line("exception_line"))
           & pl.col("level").is_in(["ERROR", "CRITICAL"]).fill_null(True)))
    known = pl.col("eid").is_in(pl.Series(list(symptoms), dtype=pl.UInt32).implode()) \
        & (pl.col("exc_types").list.len().fill_null(0) <= 1)
    cand = cand.filter(~pl.col("eid").is_in(benign.implode()) & ~known)
    out = []
    place = "seq" if "seq" in cand.columns else "line"
    for r in cand.sort(["ts", "file", place], nulls_last=True).iter_rows(named=True):
        text = r["text"].split("\n", 1)[0]
        out.append(Finding(eid=r["eid"], sig=None, category="other", role="cause", priority=0, file=r["file"],
                           line=r["exc_lines"][0] if r["exc_lines"] else r["line"],
                           span=(r["line"], r["line_end"] or r["line"]), ts=r["ts"], ts_quality=r["ts_quality"],
                           node=r["node"], rank=r["rank"], pid=r["pid"],
                           phase=_phase(r["phase"], r["frames"], None), text=text,
                           source=r["source"], ident=r["ident"], title="Unrecognised error: " + mask_template(text),
                           newest_first=(r.get("seq") or 0) < 0, script=_script(r),
                           unready=_starting(r["frames"])))
    return out


def told_by_known(others: list[Finding], findings: list[Finding]) -> list[Finding]:
    """The unknown exceptions that are not a known line's own detail: a logger's record of a known cause, or of an
    error its code caught and went on from (a context signature: a tool parser's 'Error in extracting tool call'),
    prints its message and then, on the next lines, the traceback it caught (`logger.exception`), in one process at
    one time; that traceback's last line is how the known error surfaced, not an error of its own."""
    heads = {(f.file, f.span[1], f.pid): f.ts for f in findings if f.role in ("cause", "context") and f.sig is not None}
    return [g for g in others if (key := (g.file, g.span[0] - 1, g.pid)) not in heads
            or (t := heads[key]) is None or g.ts is None or abs((g.ts - t).total_seconds()) > TIE_SECONDS]


def _script(r: dict) -> str | None:
    """The file a traceback's outermost frame runs, where none of its frames is a step the landmarks know."""
    return r.get("script") if frame_phase(r.get("frames")) is None else None


def _starting(frames: list[str] | None) -> bool:
    """The stack places the failure in the server's start (its innermost known frame is a start-up step's): it
    failed before the server was ready, whatever another process of it printed."""
    phase = frame_phase(frames)
    return phase is not None and PHASES.index(phase) < PHASES.index("serving")


def load_before(ev: pl.DataFrame, f: Finding) -> dict | None:
    """The engine's last stats line before `f` (oom.inference: what load the server was under)."""
    if f.ts is None:
        return None
    st = ev.filter(pl.col("text").str.contains("GPU KV cache usage") & (pl.col("ts") <= f.ts)) \
        .sort("ts").select("file", "line", "ts", pl.col("text").str.extract_groups(decision_line("engine_stats"))
                           .alias("g")).unnest("g") \
        .drop_nulls("running")
    if st.is_empty():
        return None
    last = st.row(-1, named=True)
    peak = st.tail(6)
    return {"running": int(last["running"]), "waiting": int(last["waiting"]), "kv_cache_usage_pct": float(last["kv"]),
            "preemptions": as_int(last["preemptions"]), "evidence": f"{last['file']}:{last['line']}",
            "max_waiting_recent": int(peak["waiting"].cast(pl.Int64).max())}
