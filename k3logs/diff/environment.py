"""The environments compared: every fact of each node (dumps, flags, the command line), then what changed between the
failing run and the reference, or which node differs from the others, ranked by how often such a change breaks a
deployment."""
from __future__ import annotations

import ast
import fnmatch
import json
from collections import Counter, defaultdict
from dataclasses import dataclass

import polars as pl

from k3logs.catalogue.regexes import Regexes
from k3logs.facts.cmdline import invocations
from k3logs.facts.python import packages
from k3logs.facts.util import Fact, split_lines
from k3logs.ingest.dumps import command_kind, sniff_dump, split_transcript
from k3logs.report.analysis import Analysis

from .model import ABSENT, ANY_NODE, Change, DiffData, NotCompared, OddNode

DIFF = Regexes("diff.toml")  # how diff reads a line: non_default_args
FACTS = Regexes("facts.toml")  # lsmod_row: an lsmod line, as the facts stage reads it


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
                    m = FACTS["lsmod_row"].match(ln)
                    if m:
                        out.append(Fact(f"module:{m.group(1)}", "loaded", shown, seg.start + i + 1, node, "lsmod"))
    return out


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
            m = DIFF["non_default_args"].search(text or "")
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
                      f"fact{'s' * (n > 1)}, first {top_line(first)}")
    return out, odd


def top_line(c: Change) -> str:
    where = ", ".join(c.nodes)
    if c.change == "changed":
        return f"{c.fact} changed on {where}: {', '.join(c.reference)} -> {', '.join(c.failing)}"
    if c.change == "appeared":
        return f"{c.fact} appeared on {where}: {', '.join(c.failing)}"
    if c.change == "went_away":
        return f"{c.fact} went away on {where} (was {', '.join(c.reference)})"
    return f"{c.fact} differs between nodes with no majority"
