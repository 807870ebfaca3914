"""What a diff knows and says: its data (patterns/diff.toml: the facts compared, their families and weights, the
landmarks timed) and the records of the DiffReport (diff.schema.json)."""
from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from k3logs.catalogue.read import read_toml_or_raise
from k3logs.gate import json_safe
from k3logs.resources import data_dir
from k3logs.schema import PHASES

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("diff.schema.json")
ANY_NODE = "*"            # facts of files no node was found for
ABSENT = "(absent)"       # a list entry a node's list does not hold
NOVEL_CAP = 5000          # distinct new templates checked against the reference at most
TEXT_CHARS = 240


# ------------------------------------------------------------------------------------------------------
# data (patterns/diff.toml)
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Kind:
    id: str
    title: str
    weight: int
    facts: tuple[str, ...]
    why: str
    order: int


@dataclass(frozen=True)
class Family:
    prefix: str
    sources: frozenset[str]
    named: tuple[str, ...]


@dataclass(frozen=True)
class Figure:
    id: str
    title: str
    phase: str
    regex: re.Pattern
    tolerance: float


@dataclass(frozen=True)
class DiffData:
    kinds: tuple[Kind, ...]
    other: Kind
    ignore: tuple[str, ...]
    families: tuple[Family, ...]
    duration_factor: float
    duration_min_s: float
    figures: tuple[Figure, ...]
    levels: frozenset[str]
    shown: int
    kept: int
    min_chars: int

    def kind_of(self, name: str) -> tuple[Kind, int]:
        """The kind a fact belongs to (the first whose patterns match it) and the pattern's position in it."""
        for k in self.kinds:
            for i, pat in enumerate(k.facts):
                if fnmatch.fnmatchcase(name, pat):
                    return k, i
        return self.other, 0

    def ignored(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pat) for pat in self.ignore)

    def family(self, name: str) -> Family | None:
        return next((f for f in self.families if name.startswith(f.prefix)), None)


def _check(table: dict, keys: set[str], where: str) -> None:
    missing = keys - set(table)
    if missing:
        raise ValueError(f"patterns/diff.toml: {where} lacks {', '.join(sorted(missing))}")


@lru_cache(maxsize=4)
def load_data(path: str | None = None) -> DiffData:
    """patterns/diff.toml (or `path`), checked: every table has its keys, every regex compiles."""
    file = Path(path) if path else data_dir("patterns") / "diff.toml"
    doc, _ = read_toml_or_raise(file, "diff data")
    kinds = []
    for i, r in enumerate(doc["rank"]):
        _check(r, {"id", "title", "weight", "facts", "why"}, f"[[rank]] #{i + 1}")
        kinds.append(Kind(r["id"], r["title"], int(r["weight"]), tuple(r["facts"]), r["why"], i))
    o = doc["other"]
    other = Kind(o["id"], o["title"], int(o["weight"]), (), o["why"], len(kinds))
    fams = tuple(Family(x["prefix"], frozenset(x["sources"]), tuple(x.get("named", ()))) for x in doc["list"])
    figures = []
    for f in doc["figure"]:
        _check(f, {"id", "title", "phase", "regex", "tolerance"}, f"[[figure]] {f.get('id')}")
        if f["phase"] not in PHASES:
            raise ValueError(f"patterns/diff.toml: [[figure]] {f['id']}: unknown phase {f['phase']!r}")
        figures.append(Figure(f["id"], f["title"], f["phase"], re.compile(f["regex"]), float(f["tolerance"])))
    lc, msg = doc["lifecycle"], doc["messages"]
    return DiffData(tuple(kinds), other, tuple(doc["ignore"]["facts"]), fams, float(lc["duration_factor"]),
                    float(lc["duration_min_s"]), tuple(figures), frozenset(x.upper() for x in msg["levels"]),
                    int(msg["shown"]), int(msg["kept"]), int(msg["min_chars"]))


# ------------------------------------------------------------------------------------------------------
# the report
# ------------------------------------------------------------------------------------------------------
@dataclass
class Change:
    """One fact that differs: on `nodes` of the failing bundle against the reference (pair), or on `nodes`
    against the other nodes of the same bundle (nodes). `split`: nodes disagree with no majority."""

    rank: int
    fact: str
    change: str                  # changed | appeared | went_away | split
    nodes: list[str]
    reference: list[str]         # the value(s) compared against (the reference's, or the majority's)
    failing: list[str]           # the value(s) of `nodes`
    kind: str
    kind_title: str
    weight: int
    why: str
    compared_with: str           # the reference node of the same name, the reference's nodes, the other nodes
    evidence: str | None = None            # file:line on the failing side
    reference_evidence: str | None = None  # file:line on the side compared against
    by_node: dict[str, list[str]] = field(default_factory=dict)   # split only: every node's value(s)


@dataclass
class NotCompared:
    """A fact (that would matter) one side shows and the other holds no evidence for."""

    fact: str
    nodes: list[str]
    missing_in: str              # failing | reference
    value: list[str]
    evidence: str | None


@dataclass
class OddNode:
    node: str
    score: int
    facts: list[str]
    detail: str


@dataclass
class LifecycleRow:
    id: str                      # the phase, a figure id, or outcome
    row: str                     # phase | figure | outcome
    phase: str | None
    title: str
    reference: float | str | None
    failing: float | str | None
    reference_evidence: str | None = None
    failing_evidence: str | None = None
    reference_duration_s: float | None = None   # phases: until the next phase this run reached
    failing_duration_s: float | None = None
    departs: bool = False
    detail: str = ""


@dataclass
class Lifecycle:
    rows: list[LifecycleRow]
    departure: str | None        # id of the first row that departs
    detail: str


@dataclass
class NewMessage:
    template: str
    text: str
    file: str
    line: int
    node: str | None
    rank: int | None
    timestamp: str | None
    phase: str | None
    level: str | None
    count: int
    before_failure: bool | None
    matters: bool


@dataclass
class RunSummary:
    path: str
    nodes: list[str]
    healthy: bool
    outcome: str
    category: str
    first_causal: str | None
    failure_at: str | None


@dataclass
class DiffReport:
    mode: str                    # pair | nodes
    failing: RunSummary
    reference: RunSummary | None
    matters: bool
    summary: str
    environment: list[Change] = field(default_factory=list)
    not_compared: list[NotCompared] = field(default_factory=list)
    odd_node: OddNode | None = None
    node_differences: list[Change] = field(default_factory=list)
    lifecycle: Lifecycle | None = None
    messages: list[NewMessage] = field(default_factory=list)
    messages_total: int = 0
    messages_limited: bool = False
    schema_version: int = SCHEMA_VERSION
    tool: str = "k3logs"

    @property
    def exit_status(self) -> int:
        """0 nothing that matters differs, 1 something does."""
        return 1 if self.matters else 0

    def to_dict(self) -> dict:
        d = asdict(self)
        order = ["schema_version", "tool", "mode", "failing", "reference", "matters", "summary", "environment",
                 "not_compared", "odd_node", "node_differences", "lifecycle", "messages", "messages_total",
                 "messages_limited"]
        return {k: d[k] for k in order}

    def to_json(self) -> str:
        return json_safe(json.dumps(self.to_dict(), indent=2, ensure_ascii=False)) + "\n"


def schema() -> dict:
    """The JSON Schema of `DiffReport.to_json` (shipped in the package as diff.schema.json)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
