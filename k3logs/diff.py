"""`k3logs diff`: what a failing run does differently from the last good one, or one node from the others.

Three comparisons over what `pipeline.run` already produced for each bundle (no new parser):

1. environment: every fact of both sides (facts.py, plus three lists read here from the same dumps and
   commands: `pip:<package>` from pip freeze, `module:<name>` from lsmod, `flag:<option>` from the vLLM
   command line that ran or vLLM's own non-default args), node by node: what changed, appeared or went away,
   ranked by the kind of change (patterns/diff.toml, the compatibility chain first). A node of the failing
   bundle is compared with the reference node of the same name, else with every reference node together.
   Within one bundle, each fact is compared across nodes: a node in the minority is out of step, and the node
   whose differences weigh most is the odd node out (named only when it is unambiguous: a strict majority on
   every fact it counts, and a top score of its own);
2. lifecycle: the landmarks of both runs (patterns/landmarks.toml phases, the figures vLLM prints on the way)
   side by side, and the first row where the failing run departs from the reference;
3. messages: the templates (decide.mask_template) the failing run printed and the reference never did
   (rapidfuzz ratio below decide.SAME_TEMPLATE), in time order, first those before the failure.

`diff_bundles` / `diff_nodes` make a `DiffReport`; `render_markdown` and `DiffReport.to_json` print it
(shape: k3logs/diff.schema.json). Library only: the CLI is `k3logs diff` in cli.py.
"""
from __future__ import annotations

import ast
import fnmatch
import json
import re
import statistics
import tomllib
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import polars as pl
from rapidfuzz import fuzz, process

from .decide import SAME_TEMPLATE, mask_template
from .dumps import command_kind, sniff_dump, split_transcript
from .facts_cmdline import invocations
from .facts_python import packages
from .facts_util import Fact, split_lines
from .pipeline import Analysis
from .redact import json_safe
from .report import iso
from .resources import data_dir
from .schema import PHASES

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
    doc = tomllib.loads(file.read_text(encoding="utf-8"))
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


# ------------------------------------------------------------------------------------------------------
# facts, node by node
# ------------------------------------------------------------------------------------------------------
@dataclass
class NodeFacts:
    """One bundle's facts: node -> fact name -> value -> the first fact stating it; and the lists each node
    holds (`shows`: the list prefixes whose source is on that node)."""

    facts: dict[str, dict[str, dict[str, Fact]]]
    shows: dict[str, set[str]]

    @property
    def nodes(self) -> list[str]:
        return sorted(self.facts)


def _where(f: Fact | None) -> str | None:
    if f is None:
        return None
    return f"{f.file}:{f.line}" if f.line else f.file


def _plain(v) -> str:
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True)
    return str(v)


def _dump_lists(a: Analysis) -> list[Fact]:
    """pip:<package> (pip freeze) and module:<name> (lsmod) from the bundle's dumps, segment by segment as
    facts.facts_from_dump reads a shell transcript."""
    out: list[Fact] = []
    for file, kind, text in a.ingested.dumps:
        shown = a.bundle.display(file)
        node = a.attribution.file_node.get(shown)
        lines = split_lines(text or "")
        segs = split_transcript(lines) if lines else []
        transcript = any(s.command for s in segs)
        for seg in segs:
            body = lines[seg.start:seg.end]
            seg_kind = kind
            if transcript:
                seg_kind = command_kind(seg.command)
                if seg_kind is None and any(x.strip() for x in body):
                    sniffed = sniff_dump("\n".join(body))
                    seg_kind = sniffed[0] if sniffed else None
            if seg_kind == "pip_freeze":
                out += [Fact(f"pip:{name}", ver, shown, no, node, "pip_freeze")
                        for name, ver, no in packages(body, seg.start)]
            elif seg_kind == "lsmod":
                for i, ln in enumerate(body):
                    m = re.match(r"^(\w+)\s+\d+\s+\d+", ln)
                    if m:
                        out.append(Fact(f"module:{m.group(1)}", "loaded", shown, seg.start + i + 1, node, "lsmod"))
    return out


_NON_DEFAULT = re.compile(r"non-default args: (\{.*\})\s*$")


def _flags(a: Analysis, facts: list[Fact]) -> list[Fact]:
    """flag:<option> for every option of the vLLM command that ran on a node (its launch command), else of
    vLLM's own 'non-default args' line."""
    out: list[Fact] = []
    for f in facts:
        if f.name != "launch_command":
            continue
        for inv in invocations(f.value):
            if inv.kind == "vllm":
                out += [Fact(f"flag:{k}", _plain(v), f.file, f.line, f.node, f.source) for k, v in inv.vllm.items()]
    have = {f.node for f in out}
    ev = a.events
    if "text" in ev.columns:
        rows = ev.filter(pl.col("text").str.contains("non-default args: {", literal=True)) \
            .select("file", "line", "node", "text").iter_rows()
        for file, line, node, text in rows:
            if node in have:
                continue
            m = _NON_DEFAULT.search(text or "")
            try:
                args = ast.literal_eval(m.group(1)) if m else None
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                args = None
            if isinstance(args, dict):
                out += [Fact(f"flag:{k}", _plain(v), file, line, node, "log") for k, v in args.items()]
    return out


def node_facts(a: Analysis, data: DiffData) -> NodeFacts:
    """Every fact of an analysis (plus the lists above), by node, without the ignored ones."""
    facts = list(a.facts) + _dump_lists(a)
    facts += _flags(a, facts)
    named = [n for n in {f.node for f in facts if f.node}]
    if "node" in a.events.columns:
        named += [n for n in a.events["node"].drop_nulls().unique().to_list()]
    only = sorted(set(named))
    by: dict[str, dict[str, dict[str, Fact]]] = defaultdict(lambda: defaultdict(dict))
    shows: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        node = f.node or (only[0] if len(only) == 1 else ANY_NODE)
        fam = data.family(f.name)
        if fam and f.source in fam.sources:
            shows[node].add(fam.prefix)
        if fam and any(fnmatch.fnmatchcase(f.name[len(fam.prefix):], p) for p in fam.named):
            continue
        if data.ignored(f.name) or f.value is None:
            continue
        by[node][f.name].setdefault(str(f.value), f)
    for node in shows:
        by.setdefault(node, defaultdict(dict))
    return NodeFacts({n: dict(v) for n, v in by.items()}, {n: shows.get(n, set()) for n in by})


# ------------------------------------------------------------------------------------------------------
# 1. environment
# ------------------------------------------------------------------------------------------------------
def _sort_key(data: DiffData, c: Change) -> tuple:
    kind, pos = data.kind_of(c.fact)
    return (-c.weight, kind.order, pos, c.fact, c.change, c.nodes)


def _change(data: DiffData, fact: str, change: str, nodes: list[str], ref: dict[str, Fact], fail: dict[str, Fact],
            against: str) -> Change:
    kind, _ = data.kind_of(fact)
    return Change(0, fact, change, nodes, sorted(ref), sorted(fail), kind.id, kind.title, kind.weight, kind.why,
                  against, _where(next(iter(fail.values()), None)), _where(next(iter(ref.values()), None)))


def _ranked(data: DiffData, changes: list[Change]) -> list[Change]:
    changes.sort(key=lambda c: _sort_key(data, c))
    for i, c in enumerate(changes, 1):
        c.rank = i
    return changes


def compare_environments(fail: NodeFacts, ref: NodeFacts, data: DiffData) -> tuple[list[Change], list[NotCompared]]:
    """What differs between the failing bundle's nodes and the reference, ranked (see the module doc)."""
    merged: dict[tuple, Change] = {}
    unknown: dict[tuple, NotCompared] = {}
    union: dict[str, dict[str, Fact]] = defaultdict(dict)
    for n in ref.nodes:
        for name, vals in ref.facts[n].items():
            for v, f in vals.items():
                union[name].setdefault(v, f)
    union_shows = set().union(*ref.shows.values()) if ref.shows else set()
    for node in fail.nodes:
        if node in ref.facts:
            rfacts, rshows, against = ref.facts[node], ref.shows.get(node, set()), f"reference node {node}"
        else:
            rfacts, rshows = union, union_shows
            against = "the reference" + (f" ({', '.join(ref.nodes)})" if ref.nodes != [ANY_NODE] else "")
        ffacts, fshows = fail.facts[node], fail.shows.get(node, set())
        for name in sorted(set(ffacts) | set(rfacts)):
            fv, rv = ffacts.get(name, {}), rfacts.get(name, {})
            if fv and rv:
                if set(fv) == set(rv):
                    continue
                change = "changed"
            else:
                fam = data.family(name)
                shown_by = rshows if fv else fshows
                if not (fam and fam.prefix in shown_by):
                    kind, _ = data.kind_of(name)
                    if kind.weight > 0:
                        side, vals = ("reference", fv) if fv else ("failing", rv)
                        key = (name, side, tuple(sorted(vals)))
                        nc = unknown.setdefault(key, NotCompared(name, [], side, sorted(vals),
                                                                 _where(next(iter(vals.values())))))
                        nc.nodes.append(node)
                    continue
                change = "appeared" if fv else "went_away"
            key = (name, change, tuple(sorted(rv)), tuple(sorted(fv)), against.startswith("the reference"))
            if key in merged:
                merged[key].nodes.append(node)
            else:
                merged[key] = _change(data, name, change, [node], rv, fv, against)
    for c in merged.values():
        if c.compared_with.startswith("reference node") and len(c.nodes) > 1:
            c.compared_with = "the reference nodes of the same names"
    return _ranked(data, list(merged.values())), sorted(unknown.values(), key=lambda u: (u.missing_in, u.fact))


def compare_nodes(nf: NodeFacts, data: DiffData) -> tuple[list[Change], OddNode | None]:
    """Each fact across the nodes of one bundle: the nodes in the minority, and the odd node out."""
    nodes = [n for n in nf.nodes if n != ANY_NODE]
    if len(nodes) < 2:
        return [], None
    out: list[Change] = []
    score: Counter = Counter()
    counted: dict[str, list[str]] = defaultdict(list)
    for name in sorted({k for n in nodes for k in nf.facts[n]}):
        fam = data.family(name)
        groups: dict[frozenset, list[str]] = defaultdict(list)
        first: dict[frozenset, Fact | None] = {}
        for n in nodes:
            vals = nf.facts[n].get(name, {})
            if vals:
                key = frozenset(vals)
                first.setdefault(key, next(iter(vals.values())))
            elif fam and fam.prefix in nf.shows.get(n, set()):
                key = frozenset({ABSENT})
                first.setdefault(key, None)
            else:
                continue        # this node holds no evidence of it
            groups[key].append(n)
        if len(groups) < 2:
            continue
        kind, _ = data.kind_of(name)
        ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
        (top, top_nodes), second = ranked[0], ranked[1]
        if len(top_nodes) > len(second[1]):
            for key, members in ranked[1:]:
                change = "went_away" if key == {ABSENT} else "appeared" if top == {ABSENT} else "changed"
                against = f"the other nodes ({', '.join(top_nodes)})"
                out.append(Change(0, name, change, sorted(members), sorted(top - {ABSENT}), sorted(key - {ABSENT}),
                                  kind.id, kind.title, kind.weight, kind.why, against,
                                  _where(first[key]), _where(first[top])))
                if kind.weight > 0:
                    for n in members:
                        score[n] += kind.weight
                        counted[n].append(name)
        else:
            by_node = {n: sorted(k - {ABSENT}) or [ABSENT] for k, ms in groups.items() for n in ms}
            out.append(Change(0, name, "split", sorted(by_node), [], [], kind.id, kind.title, kind.weight, kind.why,
                              "no majority: the nodes disagree", None, None, by_node))
    out = _ranked(data, out)
    odd = None
    top2 = score.most_common(2)
    if top2 and (len(top2) == 1 or top2[0][1] > top2[1][1]):
        node, pts = top2[0]
        first = next(c for c in out if node in c.nodes and c.weight > 0 and c.change != "split")
        others = [n for n in nodes if n != node]
        n = len(counted[node])
        odd = OddNode(node, pts, [c.fact for c in out if node in c.nodes and c.fact in counted[node]],
                      f"it differs from the other node{'s' * (len(others) > 1)} ({', '.join(others)}) in {n} "
                      f"fact{'s' * (n > 1)}, first {_top(first)}")
    return out, odd


# ------------------------------------------------------------------------------------------------------
# 2. lifecycle
# ------------------------------------------------------------------------------------------------------
@dataclass
class _Run:
    reached: dict[str, tuple[float, str]]   # phase -> (seconds since the first landmark, file:line)
    figures: dict[str, tuple[float, str]]   # figure id -> (median value, file:line of the first)
    outcome: str


def _run_landmarks(a: Analysis, data: DiffData) -> _Run:
    ev = a.events
    reached: dict[str, tuple[float, str]] = {}
    figures: dict[str, tuple[float, str]] = {}
    if {"mark", "ts"} <= set(ev.columns):
        marks = ev.filter(pl.col("mark").is_not_null() & pl.col("ts").is_not_null()).sort("ts")
        if marks.height:
            t0 = marks["ts"][0]
            for phase, ts, file, line in marks.select("mark", "ts", "file", "line").iter_rows():
                if phase not in reached:
                    reached[phase] = ((ts - t0).total_seconds(), f"{file}:{line}")
        texts = ev.filter(pl.col("text").is_not_null()).sort(["ts", "file", "line"], nulls_last=True)
        for fig in data.figures:
            vals, where = [], None
            for file, line, text in texts.select("file", "line", "text").iter_rows():
                m = fig.regex.search(text)
                if not m:
                    continue
                raw = next((v for k, v in m.groupdict().items() if k.startswith("value") and v), None)
                if raw is None:
                    continue
                vals.append(float(raw.replace(",", "")))
                where = where or f"{file}:{line}"
            if vals:
                figures[fig.id] = (statistics.median(vals), where)
    return _Run(reached, figures, a.decision.outcome.state)


def _durations(reached: dict[str, tuple[float, str]]) -> dict[str, float | None]:
    order = [p for p in PHASES if p in reached]
    out: dict[str, float | None] = {}
    for i, p in enumerate(order):
        out[p] = reached[order[i + 1]][0] - reached[p][0] if i + 1 < len(order) else None
    return out


def compare_lifecycles(fail: Analysis, ref: Analysis, data: DiffData) -> Lifecycle:
    f, r = _run_landmarks(fail, data), _run_landmarks(ref, data)
    fd, rd = _durations(f.reached), _durations(r.reached)
    rows: list[LifecycleRow] = []
    for phase in PHASES:
        fr, rr = f.reached.get(phase), r.reached.get(phase)
        if fr or rr:
            row = LifecycleRow(phase, "phase", phase, phase, rr[0] if rr else None, fr[0] if fr else None,
                               rr[1] if rr else None, fr[1] if fr else None, rd.get(phase), fd.get(phase))
            if rr and not fr:
                row.departs, row.detail = True, f"the reference reached {phase}; the failing run never did"
            elif fr and not rr:
                row.departs, row.detail = True, f"the failing run reached {phase}; the reference never did"
            elif row.failing_duration_s is not None and row.reference_duration_s is not None and \
                    row.failing_duration_s > data.duration_factor * row.reference_duration_s and \
                    row.failing_duration_s - row.reference_duration_s >= data.duration_min_s:
                row.departs = True
                row.detail = (f"{phase} took {row.failing_duration_s:.0f} s, the reference "
                              f"{row.reference_duration_s:.0f} s")
            rows.append(row)
        for fig in (g for g in data.figures if g.phase == phase):
            fv, rv = f.figures.get(fig.id), r.figures.get(fig.id)
            if not (fv or rv):
                continue
            row = LifecycleRow(fig.id, "figure", phase, fig.title, rv[0] if rv else None, fv[0] if fv else None,
                               rv[1] if rv else None, fv[1] if fv else None)
            if fv and rv:
                base = max(abs(rv[0]), 1e-9)
                if abs(fv[0] - rv[0]) / base > fig.tolerance:
                    row.departs = True
                    row.detail = f"{fig.title}: {fv[0]:g}, the reference {rv[0]:g}"
            elif rv and phase in f.reached:
                row.departs, row.detail = True, f"the reference printed it ({rv[0]:g}); the failing run did not"
            rows.append(row)
    out = LifecycleRow("outcome", "outcome", None, "outcome", r.outcome, f.outcome)
    if f.outcome != r.outcome:
        out.departs, out.detail = True, f"the failing run ended {f.outcome}, the reference {r.outcome}"
    rows.append(out)
    first = next((row for row in rows if row.departs), None)
    detail = (f"departs at {first.title}: {first.detail}" if first else
              "the failing run follows the reference through every landmark")
    return Lifecycle(rows, first.id if first else None, detail)


# ------------------------------------------------------------------------------------------------------
# 3. messages
# ------------------------------------------------------------------------------------------------------
def _templates(a: Analysis, data: DiffData) -> pl.DataFrame:
    ev = a.events
    if "text" not in ev.columns:
        return pl.DataFrame()
    cols = [c for c in ("text", "file", "line", "node", "rank", "ts", "phase", "level", "exc_types") if c in ev.columns]
    ev = ev.select(cols).filter(pl.col("text").is_not_null() & (pl.col("text").str.strip_chars().str.len_chars()
                                                                 >= data.min_chars))
    texts = ev["text"].unique().to_list()
    masked = {t: mask_template(t)[:300] for t in texts}
    return ev.with_columns(pl.col("text").replace_strict(masked, return_dtype=pl.String).alias("template"))


def compare_messages(fail: Analysis, ref: Analysis, data: DiffData) -> tuple[list[NewMessage], int, bool]:
    """New templates of the failing run, grouped (same_template), ordered: before the failure in time
    order, then after it, then those with no time."""
    ft, rt = _templates(fail, data), _templates(ref, data)
    if ft.is_empty():
        return [], 0, False
    known = set(rt["template"].unique().to_list()) if not rt.is_empty() else set()
    known_list = sorted(known)
    ft = ft.sort(["ts", "file", "line"], nulls_last=True)
    order = ft["template"].unique(maintain_order=True).to_list()
    candidates = [t for t in order if t not in known]
    limited = len(candidates) > NOVEL_CAP
    novel: dict[str, str] = {}          # template -> the group it joins
    groups: list[str] = []
    for t in candidates[:NOVEL_CAP]:
        if known_list and process.extractOne(t, known_list, scorer=fuzz.ratio, score_cutoff=SAME_TEMPLATE):
            continue
        hit = process.extractOne(t, groups, scorer=fuzz.ratio, score_cutoff=SAME_TEMPLATE) if groups else None
        if hit:
            novel[t] = hit[0]
        else:
            novel[t] = t
            groups.append(t)
    root = fail.decision.root
    failure = root.ts if root is not None else None
    firsts: dict[str, dict] = {}
    counts: Counter = Counter()
    for row in ft.filter(pl.col("template").is_in(list(novel))).iter_rows(named=True):
        g = novel[row["template"]]
        counts[g] += 1
        firsts.setdefault(g, row)
    out = []
    for g, row in firsts.items():
        ts: datetime | None = row.get("ts")
        level = row.get("level")
        exc = row.get("exc_types") or []
        before = None if ts is None or failure is None else ts <= failure
        out.append(NewMessage(g, row["text"][:TEXT_CHARS], row["file"], row["line"], row.get("node"), row.get("rank"),
                              iso(ts), row.get("phase"), level, counts[g], before,
                              bool(exc) or (level or "").upper() in data.levels))
    out.sort(key=lambda m: (0 if m.before_failure else 1 if m.timestamp else 2, m.timestamp or "", m.file, m.line)
             if failure is not None else (0 if m.timestamp else 1, m.timestamp or "", m.file, m.line))
    return out, len(out), limited


# ------------------------------------------------------------------------------------------------------
# the whole diff
# ------------------------------------------------------------------------------------------------------
def _summary_of(a: Analysis, path: str, nf: NodeFacts) -> RunSummary:
    d = a.decision
    root = d.root
    return RunSummary(path, [n for n in nf.nodes if n != ANY_NODE], d.healthy, d.outcome.state,
                      root.category if root is not None else ("none" if d.healthy else "other"),
                      f"{root.file}:{root.line}" if root is not None else None,
                      iso(root.ts) if root is not None else None)


def _top(c: Change) -> str:
    where = ", ".join(c.nodes)
    if c.change == "changed":
        return f"{c.fact} changed on {where}: {', '.join(c.reference)} -> {', '.join(c.failing)}"
    if c.change == "appeared":
        return f"{c.fact} appeared on {where}: {', '.join(c.failing)}"
    if c.change == "went_away":
        return f"{c.fact} went away on {where} (was {', '.join(c.reference)})"
    return f"{c.fact} differs between nodes with no majority"


def diff_analyses(fail: Analysis, ref: Analysis, fail_path: str, ref_path: str, data: DiffData | None = None,
                  messages: bool = True) -> DiffReport:
    """Compare a failing run with a reference run (both analysed; keep_all=True for the message diff)."""
    data = data or load_data()
    ff, rf = node_facts(fail, data), node_facts(ref, data)
    env, unknown = compare_environments(ff, rf, data)
    nodes, odd = compare_nodes(ff, data)
    life = compare_lifecycles(fail, ref, data)
    msgs, total, limited = compare_messages(fail, ref, data) if messages else ([], 0, False)
    mattering = [c for c in env if c.weight > 0]
    new_bad = [m for m in msgs if m.matters]
    matters = bool(mattering) or life.departure is not None or bool(new_bad)
    parts = []
    if mattering:
        parts.append(f"{len(mattering)} environment change{'s' * (len(mattering) > 1)}, first: {_top(mattering[0])}")
    else:
        parts.append("no environment change that matters")
    parts.append(life.detail)
    if msgs:
        parts.append(f"{total} new message template{'s' * (total > 1)}"
                     + (f" ({len(new_bad)} at warning level or above)" if new_bad else ""))
    if odd:
        parts.append(f"odd node out in the failing bundle: {odd.node}")
    return DiffReport("pair", _summary_of(fail, fail_path, ff), _summary_of(ref, ref_path, rf), matters,
                      "; ".join(parts), env, unknown, odd, nodes, life, msgs[:data.kept], total, limited)


def diff_one(a: Analysis, path: str, data: DiffData | None = None) -> DiffReport:
    """The nodes of one bundle compared with each other."""
    data = data or load_data()
    nf = node_facts(a, data)
    nodes, odd = compare_nodes(nf, data)
    real = [n for n in nf.nodes if n != ANY_NODE]
    matters = any(c.weight > 0 for c in nodes)
    if len(real) < 2:
        summary = f"one node ({real[0] if real else 'unnamed'}): nothing to compare it with; give a reference bundle"
    elif odd:
        summary = f"odd node out: {odd.node} ({odd.detail})"
    elif matters:
        summary = f"the nodes differ ({len(nodes)} facts) but no single node is the odd one out"
    else:
        summary = f"the {len(real)} nodes agree on every fact they show"
    return DiffReport("nodes", _summary_of(a, path, nf), None, matters, summary, [], [], odd, nodes)


# ------------------------------------------------------------------------------------------------------
# markdown
# ------------------------------------------------------------------------------------------------------
def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        v = f"{v:g}"
    if isinstance(v, list):
        v = ", ".join(v) if v else "-"
    return " ".join(str(v).split()).replace("|", "\\|").replace("`", "'")


def _value_cell(vals: list[str]) -> str:
    return _cell(", ".join(vals)) if vals else "-"


def _changes_table(changes: list[Change], reference_label: str, failing_label: str = "failing") -> list[str]:
    out = [f"| # | kind | fact | node(s) | change | {reference_label} | {failing_label} | evidence |",
           "|---|---|---|---|---|---|---|---|"]
    for c in changes:
        ref = _value_cell(c.reference) if c.change != "split" else "-"
        fail = _value_cell(c.failing) if c.change != "split" else \
            _cell("; ".join(f"{n}: {', '.join(v)}" for n, v in c.by_node.items()))
        out.append(f"| {c.rank} | {_cell(c.kind_title)} | `{_cell(c.fact)}` | {_cell(c.nodes)} | {c.change} | {ref} "
                   f"| {fail} | {_cell(c.evidence)} |")
    return out


def _secs(v) -> str:
    return "-" if v is None else f"+{v:.0f} s" if isinstance(v, float) else _cell(v)


def render_markdown(d: DiffReport) -> str:
    lines = ["# k3logs diff", ""]
    f = d.failing
    lines.append(f"- **failing**: `{_cell(f.path)}` ({f.outcome}; {f.category}"
                 + (f" at {_cell(f.first_causal)}" if f.first_causal else "") + f"; nodes: {_cell(f.nodes)})")
    if d.reference:
        r = d.reference
        lines.append(f"- **reference**: `{_cell(r.path)}` ({r.outcome}; {r.category}; nodes: {_cell(r.nodes)})")
    lines += ["", f"**{'Something that matters differs' if d.matters else 'Nothing that matters differs'}** "
              f"(exit {d.exit_status}): {_cell(d.summary)}", ""]
    if d.mode == "pair":
        lines += ["## Environment: what changed, ranked", ""]
        if d.environment:
            lines += _changes_table(d.environment, "reference")
        else:
            lines.append("No fact differs between the two bundles.")
        if d.not_compared:
            lines += ["", "Not compared (one bundle holds no evidence of it): " + "; ".join(
                f"`{_cell(u.fact)}` only in the {'failing' if u.missing_in == 'reference' else 'reference'} bundle "
                f"({_value_cell(u.value)})" for u in d.not_compared[:20])
                + ("; ..." if len(d.not_compared) > 20 else "")]
        lines.append("")
    lines += ["## Nodes compared with each other" if d.mode == "nodes" else "## The failing bundle's nodes", ""]
    if d.odd_node:
        lines.append(f"**Odd node out: {_cell(d.odd_node.node)}** — {_cell(d.odd_node.detail)}.")
        lines.append("")
    if d.node_differences:
        lines += _changes_table(d.node_differences, "the other nodes", "these nodes")
    else:
        lines.append("The nodes agree on every fact they show (or the bundle has one node).")
    lines.append("")
    if d.lifecycle:
        lines += ["## Lifecycle side by side", "", f"**{_cell(d.lifecycle.detail)}**", "",
                  "| landmark | reference | failing | reference took | failing took | departs |", "|---|---|---|---|---|---|"]
        for row in d.lifecycle.rows:
            if row.row == "phase":
                ref, fail = _secs(row.reference), _secs(row.failing)
            else:
                ref, fail = _cell(row.reference), _cell(row.failing)
            took = [("-" if v is None else f"{v:.0f} s") for v in (row.reference_duration_s, row.failing_duration_s)]
            lines.append(f"| {_cell(row.title)} | {ref} | {fail} | {took[0]} | {took[1]} | "
                         f"{'**yes**: ' + _cell(row.detail) if row.departs else ''} |")
        lines.append("")
    if d.mode == "pair":
        lines += ["## Messages the reference never printed", ""]
        if d.messages:
            shown = d.messages[:load_data().shown]
            lines += [f"{d.messages_total} new template{'s' * (d.messages_total > 1)}, the ones before the failure "
                      f"first{'; the first ' + str(len(shown)) + ' here' if len(shown) < d.messages_total else ''}.", "",
                      "| time | node | rank | phase | before failure | count | where | message |",
                      "|---|---|---|---|---|---|---|---|"]
            for m in shown:
                bf = "-" if m.before_failure is None else ("yes" if m.before_failure else "no")
                lines.append(f"| {_cell(m.timestamp)} | {_cell(m.node)} | {_cell(m.rank)} | {_cell(m.phase)} | {bf} "
                             f"| {m.count} | {_cell(f'{m.file}:{m.line}')} | {'**' if m.matters else ''}"
                             f"{_cell(m.text)}{'**' if m.matters else ''} |")
        else:
            lines.append("None: every message of the failing run has a template the reference printed too.")
        lines.append("")
    return "\n".join(lines)


def reference_section(d: DiffReport, top: int = 5) -> dict:
    """The short form `analyze --reference` adds to its report: the top changed facts and the departure."""
    return {
        "reference": d.reference.path if d.reference else None,
        "matters": d.matters,
        "summary": d.summary,
        "top_changes": [{"rank": c.rank, "fact": c.fact, "change": c.change, "nodes": c.nodes,
                         "reference": c.reference, "failing": c.failing, "kind": c.kind, "evidence": c.evidence}
                        for c in d.environment[:top]],
        "departure": d.lifecycle.detail if d.lifecycle else None,
        "odd_node": d.odd_node.node if d.odd_node else None,
        "more": "k3logs diff FAILING REFERENCE",
    }


def reference_markdown(section: dict) -> str:
    lines = ["", "## What changed since the reference", "",
             f"Compared with `{_cell(section['reference'])}`: {_cell(section['summary'])}.", ""]
    if section["top_changes"]:
        lines += ["| # | fact | node(s) | change | reference | failing |", "|---|---|---|---|---|---|"]
        for c in section["top_changes"]:
            lines.append(f"| {c['rank']} | `{_cell(c['fact'])}` | {_cell(c['nodes'])} | {c['change']} | "
                         f"{_value_cell(c['reference'])} | {_value_cell(c['failing'])} |")
        lines.append("")
    lines += [f"The whole comparison (every fact, the lifecycle side by side, the new messages): "
              f"`k3logs diff FAILING {_cell(section['reference'])}`.", ""]
    return "\n".join(lines)
