"""The Report model: every decision already made, in the shape of report-contract.md (plus extras).
Renderers only format it."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from .gate import json_safe

SCHEMA_VERSION = 2
# how long a text may be in the report: the gate out (gate.release) cuts it there, after redacting it whole
TITLE_CHARS = 140
LINE_CHARS = 240
EXCERPT_LINE_CHARS = 400


def clipped(n: int):
    """A text field the output gate cuts to `n` characters."""
    return field(metadata={"clip": n})


def iso(ts: datetime | None) -> str | None:
    if ts is None:
        return None
    return ts.strftime("%Y-%m-%dT%H:%M:%S") + (f".{ts.microsecond:06d}".rstrip("0").rstrip(".") if ts.microsecond else "") + "Z"


@dataclass
class Skipped:
    file: str
    reason: str


@dataclass
class FileEntry:
    file: str
    kind: str
    reason: str
    lines: int
    bytes: int
    node: str | None = None


@dataclass
class BundleSummary:
    path: str
    files: int
    bytes: int
    lines: int
    skipped: list[Skipped] = field(default_factory=list)


@dataclass
class Outcome:
    """What happened to the deployment (report-contract.md): never_ready, crashed, failing_requests,
    restart_loop, stopped, serving or inconclusive; the line that shows it."""

    state: str
    file: str | None = None
    line: int | None = None
    detail: str = ""


@dataclass
class RootCause:
    category: str
    signature: str | None
    title: str = clipped(TITLE_CHARS)
    confidence: str
    explanation: str
    remediation: list[str]


@dataclass
class FirstCausal:
    file: str
    line: int
    span: list[int]
    timestamp: str | None
    text: str


@dataclass
class Origin:
    node: str | None = None
    rank: int | None = None
    node_from: str | None = None   # the witness that named the node (a log line's host, a node folder, ...)
    rank_from: str | None = None   # the witness that named the rank
    gpu: dict | None = None        # a hardware cause's GPU: index, bus_id, uuid, serial, recovery_action (the driver's)


@dataclass
class Symptom:
    category: str
    file: str
    line: int
    node: str | None
    rank: int | None
    count: int
    title: str | None = field(default=None, metadata={"clip": TITLE_CHARS})
    timestamp: str | None = None
    source: str | None = None   # the log kind of the first one (kernel lines belong on their node's lane)


@dataclass
class CheckOut:
    id: str
    status: str
    evidence: str | None
    detail: str


@dataclass
class Environment:
    facts: dict[str, str] = field(default_factory=dict)   # one string a fact (several values joined by ' | ')
    checks: list[CheckOut] = field(default_factory=list)
    # typed: each fact's every value (a number as a number) with where it was read: {name: [{value, file, line}]}
    values: dict[str, list[dict]] = field(default_factory=dict)


@dataclass
class TimelineEntry:
    timestamp: str | None
    ts_quality: str
    node: str | None
    rank: int | None
    role: str           # cause | symptom | context | landmark
    category: str
    file: str
    line: int
    text: str = clipped(LINE_CHARS)


@dataclass
class Rung:
    rung: int
    title: str
    status: str          # passed | failed | no evidence
    evidence: str | None = None


@dataclass
class NodeSummary:
    node: str
    ranks: list[int]
    files: int
    first: str | None
    last: str | None
    clock_offset_s: float | None = None
    clock_offset_applied: bool = False
    boot_time: str | None = None


@dataclass
class PhaseSpan:
    """How long one lane (a rank; a node's own processes when it has no ranks) stayed in one phase:
    from the first event of a run of that phase to the first of the next run (or the lane's last event)."""

    node: str | None
    rank: int | None
    phase: str
    start: str
    end: str


@dataclass
class KernelEvent:
    """Kernel lines the catalogue recognised on one node (cause, symptom or context), grouped by what
    they say: the first one, the last one's time and how many."""

    node: str | None
    rank: int | None       # the rank owning the GPU the line names, when known
    role: str
    category: str
    title: str = clipped(TITLE_CHARS)
    file: str
    line: int
    timestamp: str | None
    last: str | None
    count: int


@dataclass
class CapacityWindow:
    """One window of a metrics series (the stretch between two scrapes of one server): counters as their
    increase over it (prefix-cache queries and hits are TOKENS), gauges as read at its end."""

    node: str | None
    start: str | None          # the scrape that opens it (null: since the server started)
    end: str | None
    evidence: str              # file:line of the scrape that closes it
    hit_ratio: float | None = None
    queried_tokens: int | None = None
    hit_tokens: int | None = None
    cached_prompt_tokens: int | None = None
    prompt_tokens: int | None = None
    requests: int | None = None
    running: int | None = None
    waiting: int | None = None
    kv_cache_usage: float | None = None   # fraction, the fullest engine
    preemptions: int | None = None
    process_memory_bytes: int | None = None


@dataclass
class Flag:
    """A capacity finding over a series: saturation (kv_pinned, waiting_growing, preemptions_rising) or
    memory creep (kv_creep, memory_creep)."""

    id: str
    node: str | None
    detail: str
    evidence: str | None


@dataclass
class MetricSeries:
    node: str | None
    files: list[str]
    scrapes: int
    first: str | None
    last: str | None


@dataclass
class Capacity:
    """What the /metrics dumps say about load (null in the report when the bundle has none)."""

    series: list[MetricSeries]
    windows_total: int
    windows: list[CapacityWindow]
    peak_running: int | None
    peak_waiting: int | None
    peak_kv_cache_usage: float | None
    preemptions: int | None
    longest_mean_prompt_tokens: int | None
    saturated: bool
    saturation: list[Flag] = field(default_factory=list)
    memory_creep: list[Flag] = field(default_factory=list)
    limited: bool = False    # the bundle held more scrapes than k3logs reads (20000): the rest were left out


@dataclass
class PrefixCache:
    """Is prefix caching on in what ran, and does it hit (token hit ratio over every metrics window)."""

    enabled: bool | None = None
    enabled_evidence: str | None = None
    enabled_detail: str = "no launch command, vLLM start-up args or cache config in the bundle"
    hit_ratio: float | None = None
    queried_tokens: int | None = None
    hit_tokens: int | None = None
    cached_prompt_tokens: int | None = None
    hot_windows: int = 0
    best_window_hit_ratio: float | None = None
    evidence: str | None = None      # the hits line of the best window


@dataclass
class Criterion:
    id: str
    title: str
    status: str          # passed | failed | no evidence
    evidence: str | None = None
    detail: str = ""


@dataclass
class GoLive:
    """The go-live verdict (k3-deployment-facts.md): GO, THROTTLE AND OBSERVE, REWORK ENVIRONMENT or
    SCALE OR RETOPOLOGISE, why, and every criterion with its evidence."""

    decision: str
    reason: str
    advice: str
    criteria: list[Criterion] = field(default_factory=list)


@dataclass
class Excerpt:
    """Lines of the bundle around one cited line (`line`), as stored: `first` is the number of lines[0]."""

    file: str
    line: int
    first: int
    lines: list[str] = field(metadata={"clip": EXCERPT_LINE_CHARS, "lines": True})  # redacted together


@dataclass
class Report:
    bundle: BundleSummary
    healthy: bool
    root_cause: RootCause
    first_causal: FirstCausal | None
    origin: Origin
    phase: str | None
    symptoms: list[Symptom]
    environment: Environment
    evidence_missing: list[str]
    outcome: Outcome = field(default_factory=lambda: Outcome("inconclusive"))
    schema_version: int = SCHEMA_VERSION
    tool: str = "k3logs"
    why_not_symptom: str = ""
    timeline: list[TimelineEntry] = field(default_factory=list)
    nodes: list[NodeSummary] = field(default_factory=list)
    recovery_ladder: list[Rung] = field(default_factory=list)
    load_at_failure: dict | None = None
    other: dict | None = None
    sniffed: list[FileEntry] = field(default_factory=list)
    clock: dict = field(default_factory=dict)
    phases: list[PhaseSpan] = field(default_factory=list)
    kernel_events: list[KernelEvent] = field(default_factory=list)
    evidence_context: list[Excerpt] = field(default_factory=list)
    prefix_cache: PrefixCache = field(default_factory=PrefixCache)
    capacity: Capacity | None = None
    verdict: GoLive | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        order = ["schema_version", "tool", "bundle", "healthy", "outcome", "root_cause", "first_causal", "origin", "phase",
                 "symptoms", "environment", "evidence_missing", "why_not_symptom", "timeline", "nodes",
                 "recovery_ladder", "prefix_cache", "capacity", "verdict", "load_at_failure", "other", "clock", "sniffed", "phases", "kernel_events",
                 "evidence_context"]
        return {k: d[k] for k in order}

    def to_json(self) -> str:
        """The JSON report; characters a terminal would act on (C1 controls, bidi marks) are escaped."""
        return json_safe(json.dumps(self.to_dict(), indent=2, ensure_ascii=False, sort_keys=False)) + "\n"

    @property
    def exit_status(self) -> int:
        """0 no incident, 1 an incident, 3 inconclusive: nothing in the bundle could show one, or what the deployment
        did (a device's fault the kernel logged, where no log of the deployment shows the rest: the outcome)."""
        if self.healthy:
            return 0
        return 3 if self.first_causal is None or self.outcome.state == "inconclusive" else 1


SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


def schema() -> dict:
    """The JSON Schema of `Report.to_json` (report-contract.md; shipped in the package as report.schema.json)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
