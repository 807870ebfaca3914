"""The only module that calls every stage, in order: discover -> sniff -> parse -> attribute -> clock ->
detect -> decide -> facts and checks -> acceptance -> Report, redacted at the gate out (`report_of`); and the
event table of a bundle, streamed (`stream_events`, `write_events`)."""
from __future__ import annotations

import queue
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import polars as pl

from k3logs.acceptance.judge import Acceptance, judge
from k3logs.acceptance.verdict import ToolCallEvidence
from k3logs.captures.toolcalls import check_bundle
from k3logs.catalogue.formats import builtin_formats
from k3logs.catalogue.load import load_catalogue
from k3logs.catalogue.signatures import Catalogue
from k3logs.diagnose import assign, attribute, clock
from k3logs.diagnose.assign import gpu_ranks, task_ranks
from k3logs.diagnose.attribution import Attribution, hints_from_facts
from k3logs.diagnose.clock import ClockModel, ClockReport, parse_iso
from k3logs.diagnose.decide import decide
from k3logs.diagnose.detect import anchors, detect, folded_anchors
from k3logs.diagnose.loops import loop_starts, restarts_seen
from k3logs.diagnose.missing import hosts_named, missing_parts
from k3logs.diagnose.outcome import APP_KINDS, HOST_KINDS
from k3logs.diagnose.phases import assign_phases
from k3logs.diagnose.quiet import log_ends_early, quiet_verdict, unlogged_end, weigh
from k3logs.facts.checks import run_checks
from k3logs.facts.extract import Fact, facts_from_dump, facts_from_events, host_ips_in_logs, zones_said_in_logs
from k3logs.ingest.discover import Bundle, Skip
from k3logs.ingest.keep import Keep
from k3logs.ingest.lines import LineStats
from k3logs.ingest.sniff import Sniffed
from k3logs.ingest.stream import Ingested, ingest, iter_files_rows, open_member
from k3logs.report.analysis import Analysis
from k3logs.report.assemble import make_report
from k3logs.report.evidence import read_excerpts
from k3logs.report.export import STDOUT, EventWriter

from .gate import EventGate, release
from .contract import Report
from .errors import BundleError
from .schema import EVENT_SCHEMA, in_line_order
from .settings import Settings

QUEUED = 1  # attributed batches waiting for the event table and the writer
PARSE_AHEAD = 1  # batches of a file parsed ahead of the one being folded (each on a thread of its own)
EVENTS_BATCH_BYTES = 8 << 20
# the texts that may list the hosts a deployment runs on: launch and job scripts, systemd units, their environment,
# compose and pod specs, notes
LAUNCH_TEXTS = ("launch_cmd", "slurm_job", "systemd_unit", "supervisor_program", "env", "compose", "pod_spec", "text")



def _dump_facts(ing: Ingested, bundle: Bundle) -> list[Fact]:
    out: list[Fact] = []
    for file, kind, text in ing.dumps:
        out += facts_from_dump(kind, bundle.display(file), text, None)
    return out


def _measured_offsets(facts: list[Fact]) -> dict[str, float]:
    """Per-node clock offsets the bundle measured: the same `date` read on several hosts at once (best),
    else chrony's own error against NTP."""
    readings: dict[str, dict[str, datetime]] = {}
    for f in facts:
        if f.name == "clock_reading":
            host, ts = f.value.split(" ", 1)
            if (dt := parse_iso(ts)) is not None:
                readings.setdefault(f.file, {})[host] = dt
    for by_host in readings.values():
        if len(by_host) >= 2:
            first = min(by_host.values())
            return {h: (t - first).total_seconds() for h, t in by_host.items()}
    chrony = {}
    for f in facts:
        if f.name == "clock_offset":
            parts = f.value.split()
            host = parts[0] if len(parts) == 2 else f.node
            if host:
                chrony[host] = float(parts[-1])
    return chrony if len(chrony) >= 2 else {}


@dataclass
class Learnt:
    """What the first pass over a bundle learns: its files, parsed kept lines, facts, maps and clocks."""

    bundle: Bundle
    ingested: Ingested
    events: pl.DataFrame
    facts: list[Fact]
    attribution: Attribution
    clock: ClockReport
    clock_model: ClockModel


# what shows a deployment in containers: a container runtime's or a log shipper's record around its lines, or the
# container's or pod's own description; and on its hosts: a batch scheduler's or an init system's record of it
CONTAINER_WRAPPERS = ("docker_json", "cri", "kubectl_prefix", "stern", "compose", "fluentbit_json", "elastic_hit",
                      "cloudwatch_tsv")
CONTAINER_DUMPS = ("docker_inspect", "docker_ps", "pod_spec", "compose", "k8s_describe", "k8s_get", "k8s_events",
                   "dockerfile")
HOST_RUN_DUMPS = ("slurm_job", "systemd_unit", "supervisor_program")


def _head(events: pl.DataFrame) -> list[Fact]:
    """The node of rank 0, the deployment's head, as a fact (the build it runs is the deployment's, between equals);
    none where two nodes hold a rank 0 (two instances: a prefill and a decode, replicas)."""
    rank0 = events.filter((pl.col("rank") == 0) & pl.col("node").is_not_null())
    return [Fact("head_node", rank0["node"][0], rank0["file"][0], rank0["line"][0], rank0["node"][0], "log")] \
        if rank0["node"].n_unique() == 1 else []


def _on_hosts(files, facts: list[Fact]) -> bool:
    """The deployment ran on its hosts (a Slurm job, its dumps or its batch script; a systemd unit, a supervisord
    program), in no container the bundle shows (a dump of one, a container's log wrapper, a launch that runs it in
    one)."""
    return (any(f.kind in HOST_RUN_DUMPS for f in files) or any(f.name == "slurm_launch" for f in facts)) and not any(
        f.kind in CONTAINER_DUMPS or set(f.wrappers) & set(CONTAINER_WRAPPERS) for f in files) and not any(
        f.name == "container_launch" for f in facts)


def learn(path: str | Path, settings: Settings, cat: Catalogue, keep_all: bool = False,
          name: str | None = None) -> Learnt:
    """Read the bundle (only the lines the diagnosis needs unless `keep_all`), then attribute and align them.
    `name`: what a bundle of one file is called (standard input's)."""
    bundle = Bundle(path, settings.limits, name)
    keep = Keep(anchors(cat, attribute.anchors() + builtin_formats().keep),
                "|".join(f"(?:{s.regex})" for s in cat.signatures if s.user_data),
                folded_anchors(cat) + attribute.folded_anchors())
    ing = ingest(bundle, settings, None if keep_all else keep)
    events = (pl.concat(ing.events, how="diagonal_relaxed") if ing.events else
              pl.DataFrame(schema={"file": pl.String, "line": pl.Int64, "sub": pl.Int8, "text": pl.String}))
    events = ensure_columns(events)
    events = assign.file_pids(events.with_columns(pl.col("file").replace({f: bundle.display(f) for f in bundle.names})))

    facts = _dump_facts(ing, bundle) + host_ips_in_logs(events) + zones_said_in_logs(events)
    attribution = attribute.learn(events, hints_from_facts(facts),
                                  [bundle.display(f) for f in bundle.names], top=bundle.common_prefix.rstrip("/") or None)
    events = assign.apply(events, attribution)
    # (a dump that names no host, in a bundle of one node, is that node's)
    facts = [replace(f, node=f.node or attribution.file_node.get(f.file) or attribution.single_node) for f in facts]
    boots = {}
    for f in facts:
        if f.name == "boot_time" and (dt := parse_iso(f.value)):
            boots[f.node] = dt
    refs = [dt for f in facts if f.name == "collected_at" and (dt := parse_iso(f.value))]
    zones = {f.node: int(f.value) for f in facts if f.name == "utc_offset" and f.node}
    named = {f.node: f.value for f in facts if f.name == "utc_zone" and f.node}
    bmc = {f.node: float(f.value) for f in facts if f.name == "bmc_clock" and f.node}
    clock_model, clock_report = clock.learn(events, settings.tz, settings.skew_tolerance, boots, refs,
                                            _measured_offsets(facts), zones, _on_hosts(ing.files, facts), named,
                                            frozenset(n for n, f in builtin_formats().wrappers.items() if f.arrival),
                                            bmc)
    events = clock.in_file_order(clock.apply(events, clock_model))
    return Learnt(bundle, ing, events, facts, attribution, clock_report, clock_model)


def run(path: str | Path, settings: Settings | None = None, catalogue: Catalogue | None = None,
        keep_all: bool = False, name: str | None = None) -> Analysis:
    """Diagnose a bundle: learn it, then detect, decide and check the environment."""
    settings = settings or Settings()
    cat = catalogue or load_catalogue()
    lt = learn(path, settings, cat, keep_all, name)
    events = lt.events.sort(["ts", "file", "seq", "sub"], nulls_last=True).with_row_index("eid")
    host = {lt.bundle.display(f.file) for f in lt.ingested.files if f.kind in HOST_KINDS or f.prose}
    events = assign_phases(events, host)  # (on every line read: a window's phases begin before it)
    window_note = []
    if not settings.window.empty:
        inside = events.filter(settings.window.keep(events["ts"].max()))
        window_note = [f"every line outside {settings.window.describe()}: only {inside.height} of the "
                       f"{events.height} lines k3logs read were diagnosed"]
        events = inside
    det = detect(events, cat)
    facts = lt.facts + facts_from_events(
        events.select("file", "line", "node", "source", "ts", pl.col("text").alias("message"))) + _head(events)
    checks = run_checks(facts)
    dumps = {lt.bundle.display(f): text for f, _, text in lt.ingested.dumps}
    # the deployment's own logs: files holding lines of its programs (whatever else they hold: sidecars)
    app_files = set(events.filter(pl.col("source").is_in(APP_KINDS))["file"].unique().to_list()) - host
    prose = {lt.bundle.display(f.file) for f in lt.ingested.files if f.prose}
    restarts = restarts_seen(facts, events.filter(pl.col("file").is_in(list(app_files))), lt.attribution.pods)
    # (a vLLM container that its restart policy is starting again when the bundle was taken)
    restarting = any(f.name == "restarting" and "vllm" in f.value.lower() for f in facts)
    pods = Counter(f.file for f in facts if f.name == "pod_name")
    described = {f.file: f.value for f in facts if f.name == "pod_name" and pods[f.file] == 1}
    decision = quiet_verdict(decide(events, det, cat, app_files, prose, restarts, lt.attribution.ip_node,
                                    task_ranks(lt.attribution), lt.attribution.raised_by, described,
                                    lt.attribution.pods, restarting, gpu_ranks(lt.attribution, _one_engine(facts)),
                                    loop_starts(facts)),
                                checks, events, dumps,
                                cat, bool(app_files))
    decision, unlogged = unlogged_end(decision, facts, cat)
    decision, cut = log_ends_early(decision, events, app_files)
    unlogged += cut
    nnodes = max([int(f.value) for f in facts if f.name == "nnodes" and f.value.isdigit()] or [0]) or None
    missing = missing_parts(events, lt.ingested.files, lt.bundle.display, lt.attribution.file_node,
                            [t for _, kind, t in lt.ingested.dumps if kind in LAUNCH_TEXTS],
                            {f.value for f in facts if f.name == "node_name"} |
                            {h for f in facts if f.name == "job_nodes" for h in hosts_named(f.value)},
                            lt.attribution.world_size, nnodes) + unlogged
    a = Analysis(lt.bundle, lt.ingested, events, det, lt.attribution, lt.clock, lt.clock_model, facts, checks,
                 weigh(decision, missing), cat, missing + window_note)
    a.acceptance = acceptance_of(a, _tool_call_evidence(lt.bundle, lt.ingested, settings))
    return a


def _one_engine(facts) -> bool:
    """The deployment runs one engine: no launch shows data parallelism."""
    return not any(f.name == "data_parallel_size" and f.value.isdigit() and int(f.value) > 1 for f in facts)


def acceptance_of(a: Analysis, tool_calls: ToolCallEvidence | None) -> Acceptance:
    """The acceptance stage over a diagnosed bundle: its /metrics scrapes (among the dumps), its events and
    decision, and the tool calls checked."""
    display = a.bundle.display
    scrapes = [(display(f), a.attribution.file_node.get(display(f)), text) for f, _, text in a.ingested.dumps]
    return judge(a.events, a.attribution.nodes, a.decision, a.catalogue, a.facts, a.checks, scrapes, tool_calls)


def ensure_columns(ev: pl.DataFrame) -> pl.DataFrame:
    """Every internal column (null where no stage made it), and `line_end` for `_line_end`."""
    return ev.with_columns(_missing_columns(tuple(ev.columns))).drop("_line_end", strict=False)


@lru_cache(maxsize=64)
def _missing_columns(have: tuple[str, ...]) -> tuple[pl.Expr, ...]:
    """ensure_columns' expressions for a frame with columns `have` (built once: they cost as much to build
    as to run)."""
    from k3logs.ingest.parse import PARSED_SCHEMA
    need = {**PARSED_SCHEMA, "file": pl.String, "exc_types": pl.List(pl.String),
            "exc_messages": pl.List(pl.String), "exc_lines": pl.List(pl.Int64), "frames": pl.List(pl.String),
            "script": pl.String}
    line_end = pl.coalesce("_line_end", "line") if "_line_end" in have else pl.col("line")
    return (*[pl.lit(None, dtype).alias(c) for c, dtype in need.items() if c not in have], line_end.alias("line_end"))


def to_event_table(ev: pl.DataFrame) -> pl.DataFrame:
    """The public event schema (schema.EVENT_SCHEMA) from the internal columns of one file's batch."""
    return ev.select(_event_columns())


# the event table's columns from the internal ones (the others have the same name)
RENAMED = {"process": "proc", "location": "loc", "message": "text"}


@lru_cache(maxsize=1)
def _event_columns() -> tuple[pl.Expr, ...]:
    """The event table's columns, in order and type, as expressions over the internal columns (built once:
    a batch pays for running them only)."""
    return tuple(pl.col(RENAMED.get(name, name)).cast(dtype).alias(name) for name, dtype in EVENT_SCHEMA.items())


def stream_events(path: str | Path, settings: Settings | None = None, catalogue: Catalogue | None = None,
                  skipped: list[Skip] | None = None, first: Learnt | Analysis | None = None):
    """Every line of the bundle as event-table batches, file after file in bundle order, in bounded
    memory: a first pass over the lines `analyze` keeps learns the node/rank maps and the clocks; the
    second parses every line of each file and applies them. At the end, `skipped` gets what was not read
    as lines (limits, damage, links, binary files), with the reason.

    The second pass is a pipeline of three stages that run at once: the batches of a file are split and
    parsed on `settings.jobs` threads, at most PARSE_AHEAD ahead; one thread folds and attributes them in
    order, file after file; this one makes the event table and hands it on (to the writer). Batches are
    big (each polars operation has a fixed cost per batch) and few are alive at a time (each holds several
    times its bytes while it is parsed), so that memory stays bounded whatever the bundle. `first`: the first
    pass made already (`run`'s Analysis of the same bundle with the same settings), not made again."""
    settings = settings or Settings()
    first = first or learn(path, settings, catalogue or load_catalogue())
    inside = None if settings.window.empty else settings.window.keep(first.events["ts"].max())
    # only its maps, clocks and file kinds are needed from here on: the lines it parsed go (their memory
    # is the second pass's to use)
    first = replace(first, events=first.events.clear(), ingested=Ingested(files=first.ingested.files))
    settings = replace(settings, batch_bytes=min(settings.batch_bytes, EVENTS_BATCH_BYTES))
    formats = builtin_formats()
    bundle = Bundle(path, settings.limits)
    # what each file is, as the first pass sniffed it (a path the bundle holds twice is sniffed again)
    paths = Counter(f.file for f in first.ingested.files)
    known = {f.file: Sniffed(f.kind, f.wrappers, f.reason, f.is_dump, f.prose) for f in first.ingested.files
             if paths[f.file] == 1}
    out: queue.Queue = queue.Queue(maxsize=QUEUED)
    stopping = threading.Event()  # the consumer went away: the producer must not wait on a full queue

    def put(item) -> None:
        while not stopping.is_set():
            try:
                out.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def files():
        """(key, stream, context, stats) of each file read as lines, in bundle order."""
        for group in bundle.groups():
            for member in group():
                info, stream, ctx = open_member(member, settings, formats, Ingested(), known.get(member.path))
                if stream is not None and ctx is not None:
                    yield (member, first.bundle.display(member.path)), stream, ctx, LineStats()
                elif info.kind != "empty":
                    not_lines.append(Skip(bundle.display(member.path), f"{info.kind}: {info.reason}"))

    def produce() -> None:
        """Every file's batches, attributed and aligned, in order."""
        try:
            with ThreadPoolExecutor(max(1, settings.jobs)) as parsers:
                current, last_ts = None, {}
                for key, rows in iter_files_rows(files(), settings, None, formats, parsers, PARSE_AHEAD):
                    if key is not current:
                        current, last_ts = key, {}
                    rows = ensure_columns(rows.with_columns(pl.lit(key[1]).alias("file")))
                    rows = clock.apply(assign.apply(assign.file_pids(rows), first.attribution), first.clock_model,
                                       last_ts)
                    if stopping.is_set():
                        return
                    put(rows if in_line_order(rows) else rows.sort(["line", "sub"]))
        except BaseException as e:  # handed to the consumer, raised there
            put(e)
        finally:
            put(None)

    not_lines: list[Skip] = []
    producer = threading.Thread(target=produce, name="k3logs-events", daemon=True)
    producer.start()
    door = EventGate(settings)
    try:
        while (item := out.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            table = door.release(to_event_table(item))  # (whole batches: a secret's context may lie outside)
            yield table if inside is None else table.filter(inside)
        if skipped is not None:
            skipped += [Skip(bundle.display(s.file), s.reason) for s in bundle.skipped] + not_lines
    finally:
        stopping.set()
        producer.join()


def analyze(path: str | Path, settings: Settings | None = None, catalogue: Catalogue | None = None,
            context_lines: int = 0, display: str | None = None) -> Report:
    """Diagnose one bundle; the report names it `display` (default: `path` as given; a bundle of one file
    also names that file so). Raises BundleError when nothing in it could be read (report-contract.md: exit
    2). With `context_lines`, the report also holds that many lines of the bundle before and after every line
    it cites (`evidence_context`, for the HTML report)."""
    settings = settings or Settings()
    name = Path(display).name if display else None
    return report_of(run(path, settings, catalogue, name=name), str(path) if display is None else display,
                     settings, context_lines)


def report_of(analysis: Analysis, display_path: str, settings: Settings | None = None,
              context_lines: int = 0) -> Report:
    """The report of an analysis (secrets redacted unless the settings say not to)."""
    settings = settings or Settings()
    check_readable(display_path, analysis.bundle, analysis.ingested)
    report = make_report(analysis, display_path)
    if context_lines > 0:
        report.evidence_context = read_excerpts(analysis.bundle, report, context_lines, settings)
    return release(report, settings)


def _tool_call_evidence(bundle: Bundle, ingested: Ingested, settings: Settings) -> ToolCallEvidence | None:
    """The bundle's captured tool calls checked against their schemas, for the go-live verdict (None when
    it holds no captures: no evidence). Only the files sniffed as captures are read again."""
    captures = {bundle.display(f.file) for f in ingested.files if f.kind == "captures"}
    if not captures:
        return None
    s = check_bundle(bundle.path, settings, only=captures)
    if not s.checked:
        return None
    return ToolCallEvidence(s.checked, s.failed, (s.evidence or [s.first_checked])[0], s.detail)


def check_readable(path: str | Path, bundle: Bundle, ing: Ingested) -> None:
    """A bundle none of whose files holds text (empty, corrupt, binary, all skipped) cannot be analysed: saying
    'no incident found' would be a wrong answer, not a diagnosis."""
    if any(f.kind not in ("binary", "empty") for f in ing.files):
        return
    if not ing.files and not bundle.skipped:
        raise BundleError(f"{path} holds no files: nothing to analyse")
    kinds = Counter(f.kind for f in ing.files)
    parts = [f"{n} {k} file{'s' * (n > 1)}" for k, n in sorted(kinds.items())]
    if bundle.skipped:
        s = bundle.skipped[0]
        parts.append(f"{len(bundle.skipped)} skipped, first {bundle.display(s.file) or s.file}: {s.reason}")
    raise BundleError(f"nothing in {path} could be read as text ({'; '.join(parts)}); "
                      f"`k3logs sniff` lists every file and why")


@dataclass
class SniffRow:
    file: str
    kind: str
    reason: str
    lines: int
    bytes: int


def sniff_bundle(path: str | Path, settings: Settings | None = None) -> list[SniffRow]:
    """What each file of a bundle is (kind by content, with the reason), with its line and byte counts."""
    settings = settings or Settings()
    bundle = Bundle(path, settings.limits)
    ing = ingest(bundle, settings, keep=None, parse=False)
    rows = [SniffRow(bundle.display(f.file), f.kind, f.reason, f.lines, f.bytes) for f in ing.files]
    rows += [SniffRow(bundle.display(s.file), "skipped", s.reason, 0, 0) for s in bundle.skipped]
    return sorted(release(rows, settings), key=lambda r: r.file)  # (names come from the bundle)


def write_events(path: str | Path, out: Path, fmt: str = "parquet", settings: Settings | None = None,
                 catalogue: Catalogue | None = None, skipped: list[Skip] | None = None) -> int:
    """Write every event of a bundle (schema.EVENT_SCHEMA) batch by batch; returns how many. `skipped` gets
    what was not read as lines, with the reason (see skipped_summary)."""
    settings = settings or Settings()
    n = 0
    def remove() -> None:  # (standard output is not a file to remove)
        if str(out) != STDOUT:
            Path(out).unlink(missing_ok=True)
    try:
        with EventWriter(out, fmt) as writer:
            for batch in stream_events(path, settings, catalogue, skipped):  # secrets redacted unless --no-redact
                writer.write(batch)
                n += batch.height
    except BaseException:  # no half-written (or empty, for a missing bundle) file is left behind
        remove()
        raise
    if n == 0 and not settings.window.empty:
        remove()
        raise BundleError(f"no line of {path} falls inside {settings.window.describe()}")
    if n == 0:  # every line of a readable file is an event: nothing could be read (report-contract.md: exit 2)
        remove()
        raise BundleError(f"no line of {path} could be read as text (it is empty, binary, corrupt or unreadable); "
                          f"`k3logs sniff` lists every file and why")
    return n


