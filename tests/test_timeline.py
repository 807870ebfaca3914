"""The timeline picture, read back with xml.etree: one lane per node and per rank (grouped by node), the
first cause on its origin's lane, marks in time order on one x axis that cuts long quiet stretches,
kernel events on their node's lane, phase bands inside their lanes, clock notes, readable at 16 and 64
ranks, escaped bundle strings, and the same bytes for the same bundle."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone

import pytest

from conftest import TESTS_DIR
from k3logs.api import analyze
from k3logs.report.render import render_svg
from k3logs.contract import (BundleSummary, Environment, FirstCausal, KernelEvent, NodeSummary, Origin, PhaseSpan,
                           Report, RootCause, Symptom, iso)

NS = {"s": "http://www.w3.org/2000/svg"}
T0 = datetime(2026, 3, 2, 7, 0, 0, tzinfo=timezone.utc)
STEPS = (("startup", 0), ("distributed_init", 20), ("model_load", 40), ("kv_cache_init", 400),
         ("cudagraph_capture", 460), ("serving", 500))
FAILED_AT = 1861.0   # the Xid, 22 minutes into serving
TIMEOUT_AT = 2461.0  # the other ranks' watchdogs, ten minutes later
CASE = TESTS_DIR.parent / "corpora" / "c208-xid79-torchrun-misleading-rootcause"


def at(s: float) -> str:
    return iso(T0 + timedelta(seconds=s))


def incident(nodes: int = 2, per_node: int = 8, bad_rank: int = 12, name: str = "gpu-node-{:02d}") -> Report:
    """A multi-node incident as the analysis would report it: every rank through the lifecycle, an Xid on
    one rank's GPU, that rank's CUDA error a second later, the other ranks' timeouts ten minutes later,
    a launcher SIGTERM per node, a kernel line repeated for a while, one symptom with no time."""
    names = [name.format(i) for i in range(nodes)]
    bad_node = names[bad_rank // per_node]
    phases, symptoms, ns = [], [], []
    for n, node in enumerate(names):
        ranks = list(range(n * per_node, (n + 1) * per_node))
        ns.append(NodeSummary(node, ranks, 3, at(0), at(3000), 0.4 * n, n % 2 == 1))
        for r in ranks:
            for i, (phase, s) in enumerate(STEPS):
                end = STEPS[i + 1][1] if i + 1 < len(STEPS) else TIMEOUT_AT + r * 0.05
                phases.append(PhaseSpan(node, r, phase, at(s + r * 0.1), at(end + r * 0.1)))
            if r != bad_rank:
                symptoms.append(Symptom("nccl.timeout", f"{node}/vllm.log", 100 + r, node, r, 3, "watchdog timeout",
                                        at(TIMEOUT_AT + r * 0.05), "torch"))
        symptoms.append(Symptom("symptom.sigterm", f"{node}/vllm.log", 900, node, None, 1, "SIGTERM",
                                at(TIMEOUT_AT + 9), "torch"))
    symptoms.append(Symptom("gpu.illegal_access", f"{bad_node}/vllm.log", 50, bad_node, bad_rank, 1, "CUDA error",
                            at(FAILED_AT + 1), "vllm"))
    symptoms.append(Symptom("proc.segfault", f"{names[0]}/vllm.log", 70, names[0], 1, 1, "abort", None, "vllm"))
    kernel = [KernelEvent(bad_node, bad_rank, "cause", "gpu.xid", "Xid 79: GPU has fallen off the bus",
                          f"{bad_node}/dmesg.txt", 19, at(FAILED_AT), at(FAILED_AT), 1),
              KernelEvent(bad_node, bad_rank, "context", "gpu.xid", "Xid 154: recovery action changed",
                          f"{bad_node}/dmesg.txt", 25, at(FAILED_AT + 2), at(FAILED_AT + 40), 4)]
    return Report(
        bundle=BundleSummary("bundle", 1, 1, 1), healthy=False,
        root_cause=RootCause("gpu.xid", "nvrm-xid", "Xid 79: GPU has fallen off the bus", "high", "", []),
        first_causal=FirstCausal(f"{bad_node}/dmesg.txt", 19, [19, 19], at(FAILED_AT), "NVRM: Xid 79"),
        origin=Origin(bad_node, bad_rank), phase="serving", symptoms=symptoms, environment=Environment(),
        evidence_missing=[], nodes=ns, phases=phases, kernel_events=kernel,
        clock={"reference_node": names[0], "year_source": "dumps"})


def parse(svg: str) -> ET.Element:
    assert svg.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<svg ')
    return ET.fromstring(svg.encode("utf-8"))


def lanes(root: ET.Element) -> list[dict]:
    return [{"kind": g.get("data-kind"), "node": g.get("data-node"), "rank": g.get("data-rank"),
             "y": float(g.get("data-y")), "h": float(g.get("data-h"))}
            for g in root.findall(".//s:g[@class='lane']", NS)]


def marks(root: ET.Element) -> list[dict]:
    out = []
    for g in root.findall(".//s:g[@class='mark']", NS):
        x, y = map(float, re.fullmatch(r"translate\(([\d.]+),([\d.]+)\)", g.get("transform")).groups())
        out.append({"kind": g.get("data-kind"), "node": g.get("data-node"), "rank": g.get("data-rank"),
                    "t": g.get("data-t"), "category": g.get("data-category"), "x": x, "y": y})
    return out


def lane_at(ls: list[dict], y: float) -> dict:
    hit = [ln for ln in ls if ln["y"] <= y <= ln["y"] + ln["h"]]
    assert len(hit) == 1, (y, hit)
    return hit[0]


@pytest.mark.parametrize("nodes", [2, 8], ids=["16-ranks", "64-ranks"])
def test_one_lane_per_node_and_rank_grouped_by_node(nodes):
    r = incident(nodes)
    ls = lanes(parse(render_svg(r)))
    want = [("node", n.node, "") for n in r.nodes]
    assert [(ln["kind"], ln["node"], ln["rank"]) for ln in ls if ln["kind"] == "node"] == want
    ranks = [(ln["node"], int(ln["rank"])) for ln in ls if ln["kind"] == "rank"]
    assert sorted(ranks) == sorted((n.node, k) for n in r.nodes for k in n.ranks)
    assert len(ranks) == len(set(ranks)) == nodes * 8
    # top to bottom, each node's lane then its own ranks in order, lanes never overlap
    expected = [key for n in r.nodes for key in [(n.node, "")] + [(n.node, str(k)) for k in n.ranks]]
    assert [(ln["node"], ln["rank"]) for ln in ls] == expected
    for a, b in zip(ls, ls[1:]):
        assert a["y"] + a["h"] <= b["y"] + 1e-6


@pytest.mark.parametrize("nodes", [2, 8], ids=["16-ranks", "64-ranks"])
def test_readable_at_16_and_64_ranks(nodes):
    root = parse(render_svg(incident(nodes)))
    ls = lanes(root)
    assert min(ln["h"] for ln in ls if ln["kind"] == "rank") >= 14      # room for a 10 px label
    assert int(root.get("width")) <= 1000                                # a markdown column, unscaled
    assert int(root.get("height")) <= 160 + 28 * nodes + 16 * 8 * nodes + 120
    # every rank lane is labelled with its rank, in a font that stays legible
    labels = [t for t in root.iter(f"{{{NS['s']}}}text") if (t.text or "").startswith("rank ")]
    assert len(labels) == 8 * nodes and all(float(t.get("font-size")) >= 10 for t in labels)


def test_the_first_cause_is_marked_on_its_rank_and_labelled():
    r = incident(bad_rank=12)
    root = parse(render_svg(r))
    causes = [m for m in marks(root) if m["kind"] == "cause"]
    assert len(causes) == 1
    lane = lane_at(lanes(root), causes[0]["y"])
    assert (lane["node"], lane["rank"]) == (r.origin.node, "12") == (causes[0]["node"], causes[0]["rank"])
    assert causes[0]["t"] == r.first_causal.timestamp
    label = root.find(".//s:g[@class='cause-line']/s:text", NS).text
    assert "first cause" in label and "07:31:01" in label and "gpu-node-01 rank 12" in label


def test_the_cause_moves_with_the_origin():
    root = parse(render_svg(incident(bad_rank=3)))
    cause = next(m for m in marks(root) if m["kind"] == "cause")
    assert (lane_at(lanes(root), cause["y"])["node"], lane_at(lanes(root), cause["y"])["rank"]) == ("gpu-node-00", "3")


def test_marks_are_in_time_order_on_one_axis():
    r = incident(8)
    ms = marks(parse(render_svg(r)))
    timed = [m for m in ms if m["t"]]
    untimed = [m for m in ms if not m["t"]]
    when = [datetime.fromisoformat(m["t"]) for m in timed]
    assert when == sorted(when)                                                # document order is time order
    assert ms[: len(timed)] == timed and untimed                              # the untimed ones come last
    for (a, ta), (b, tb) in zip(zip(timed, when), zip(timed[1:], when[1:])):  # later is further right
        assert a["x"] < b["x"] if ta < tb else a["x"] == b["x"]
    assert min(m["x"] for m in untimed) > max(m["x"] for m in timed)         # the 'no time' column
    # every timed mark of the same time sits at the same x, whatever its lane
    by_t: dict[str, set[float]] = {}
    for m in timed:
        by_t.setdefault(m["t"], set()).add(m["x"])
    assert all(len(xs) == 1 for xs in by_t.values())


def test_a_long_quiet_stretch_is_cut_so_the_failure_is_not_squashed():
    r = incident()
    root = parse(render_svg(r))
    breaks = root.findall(".//s:g[@class='break']", NS)
    minutes = [int(m.group(1)) for b in breaks if (m := re.fullmatch(r"(\d+) min", b.find("s:text", NS).text))]
    assert any(21 <= m <= 23 for m in minutes)  # serving from 500 s to the Xid at 1861 s, nothing in between
    ms = [m for m in marks(root) if m["kind"] != "cause"]
    xid = next(m for m in ms if m["kind"] == "kernel" and m["t"] == at(FAILED_AT))
    cuda = next(m for m in ms if m["category"] == "gpu.illegal_access")
    # one second apart: a linear axis over the 41 minutes drawn would put them about 0.3 px apart
    linear = (float(root.get("width")) - 200) / (TIMEOUT_AT + 10)
    assert cuda["x"] - xid["x"] >= 5 * linear


def test_no_cut_when_nothing_is_quiet():
    r = incident()
    r.phases = [p for p in r.phases if p.phase in ("startup", "distributed_init")]
    r.symptoms, r.kernel_events, r.first_causal, r.origin = [], [], None, Origin()
    root = parse(render_svg(r))
    assert root.findall(".//s:g[@class='break']", NS) == []
    assert root.find(".//s:g[@class='cause-line']", NS) is None


def test_kernel_events_are_on_their_nodes_lane():
    r = incident()
    root = parse(render_svg(r))
    ls = lanes(root)
    kernel = [m for m in marks(root) if m["kind"] == "kernel"]
    assert len(kernel) == len(r.kernel_events) == 2
    for m in kernel:
        lane = lane_at(ls, m["y"])
        assert (lane["kind"], lane["node"]) == ("node", "gpu-node-01")
    # the repeated one: a second, smaller hollow mark at its last time (38 s on), no bar across the lane
    g = root.find(".//s:g[@class='mark'][@data-kind='kernel'][@data-t='%s']" % at(FAILED_AT + 2), NS)
    last = g.find("s:rect[@class='last']", NS)
    assert float(last.get("x")) > 0 and last.get("fill") == "none" and g.find("s:line", NS) is None
    # near miss: the line seen once has no second mark
    once = root.find(".//s:g[@class='mark'][@data-kind='kernel'][@data-t='%s']" % at(FAILED_AT), NS)
    assert once.find("s:rect[@class='last']", NS) is None


def quiet_incident() -> Report:
    """incident(), where only ranks 0, 8 and 12 logged anything (the others: no phase, no symptom)."""
    r = incident()
    keep = {0, 8, 12}
    r.phases = [p for p in r.phases if p.rank in keep]
    r.symptoms = [s for s in r.symptoms if s.rank is None or s.rank in keep]
    return r


def test_ranks_that_logged_nothing_share_one_lane_per_node():
    r = quiet_incident()
    root = parse(render_svg(r))
    got = [(ln["kind"], ln["node"], ln["rank"]) for ln in lanes(root)]
    assert got == [("node", "gpu-node-00", ""), ("rank", "gpu-node-00", "0"), ("quiet", "gpu-node-00", "1-7"),
                   ("node", "gpu-node-01", ""), ("rank", "gpu-node-01", "8"), ("rank", "gpu-node-01", "12"),
                   ("quiet", "gpu-node-01", "9-11,13-15")]
    texts = {t.text for t in root.iter(f"{{{NS['s']}}}text")}
    assert {"ranks 1-7: no events", "ranks 9-11, 13-15: no events"} <= texts
    # nothing is drawn on a folded lane: every mark stands on the lane of its own rank or node
    ls = lanes(root)
    assert all(lane_at(ls, m["y"])["kind"] != "quiet" for m in marks(root))


def test_near_miss_a_rank_with_only_its_phases_keeps_its_lane():
    r = quiet_incident()
    r.phases += [p for p in incident().phases if p.rank == 3]   # rank 3 logged its lifecycle, no error
    got = [(ln["kind"], ln["rank"]) for ln in lanes(parse(render_svg(r))) if ln["node"] == "gpu-node-00"]
    assert got == [("node", ""), ("rank", "0"), ("rank", "3"), ("quiet", "1-2,4-7")]


def label_spans(root: ET.Element, y: str) -> list[tuple[float, float, str]]:
    """Where the centred labels on the row at `y` lie (the layout's own estimate of a glyph's width)."""
    from k3logs.report.timeline import _span
    out = []
    for t in root.iter(f"{{{NS['s']}}}text"):
        if t.get("y") == y and t.get("text-anchor") == "middle":
            a, b = _span(t.get("x"), t.text, float(t.get("font-size") or 10))
            out.append((a, b, t.text))
    return sorted(out)


def test_axis_labels_never_overlap_even_when_segments_are_narrow():
    r = incident()
    # five short bursts an hour apart: five narrow segments, each with its own time label
    for i in range(5):
        r.symptoms.append(Symptom("proc.killed", "gpu-node-00/vllm.log", 300 + i, "gpu-node-00", 0, 1, "killed",
                                  at(4000 + 3600 * i), "vllm"))
    root = parse(render_svg(r))
    rows = {t.get("y") for t in root.iter(f"{{{NS['s']}}}text") if t.get("text-anchor") == "middle"}
    assert len(rows) >= 2
    for y in rows:
        spans = label_spans(root, y)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), (y, spans)


def test_crowded_labels_are_left_out_and_spaced_ones_kept():
    """The layout's rule itself: tick labels 30 px apart (each about 48 px wide) lose every other label and
    keep every line; a break's label yields to nothing on its row but an earlier break's. Near miss: labels
    100 px apart are all kept."""
    from k3logs.report.timeline import Break, Picture, Tick, _unclutter
    def picture(step: float) -> Picture:
        p = Picture(1000, 0, "t", "192", "988", "72", "200")
        p.ticks = [Tick(f"{200 + step * i:.1f}", "10:00:00", "2026-03-02" if i == 0 else "") for i in range(8)]
        p.breaks = [Break("400", "20", "410", "3 h"), Break("418", "20", "428", "2 h")]
        return p
    crowded = picture(30)
    _unclutter(crowded)
    assert len(crowded.ticks) == 8 and [bool(t.label) for t in crowded.ticks] == [True, False] * 4
    assert [g.shown for g in crowded.breaks] == [True, False]
    spaced = picture(100)
    _unclutter(spaced)
    assert all(t.label for t in spaced.ticks) and spaced.ticks[0].date == "2026-03-02"


def test_symptoms_are_on_their_lanes_coloured_by_category():
    r = incident()
    root = parse(render_svg(r))
    ls = lanes(root)
    sym = [m for m in marks(root) if m["kind"] == "symptom"]
    assert len(sym) == len(r.symptoms)
    for m in sym:
        lane = lane_at(ls, m["y"])
        assert (lane["node"], lane["rank"]) == (m["node"], m["rank"])
    fills = {}
    for g in root.findall(".//s:g[@class='mark'][@data-kind='symptom']", NS):
        fills.setdefault(g.get("data-category"), set()).add(g.find("s:circle", NS).get("fill"))
    assert all(len(f) == 1 for f in fills.values())                       # one colour per category
    assert len({next(iter(f)) for f in fills.values()}) == len(fills)      # different categories differ
    legend = {t.text for t in root.findall(".//s:g[@class='legend']/s:text", NS)}
    assert set(fills) <= legend


def test_phase_bands_lie_in_their_lanes_in_lifecycle_order():
    r = incident()
    root = parse(render_svg(r))
    ls = lanes(root)
    bands = root.findall(".//s:rect[@class='band']", NS)
    assert {b.get("data-phase") for b in bands} == {p for p, _ in STEPS}
    rank0 = [b for b in bands if lane_at(ls, float(b.get("y")) + 1)["rank"] == "0"]
    xs = [float(b.get("x")) for b in rank0]
    assert xs == sorted(xs)
    order = []
    for b in rank0:
        if b.get("data-phase") not in order:
            order.append(b.get("data-phase"))
    assert order == [p for p, _ in STEPS]
    for b in bands:
        lane = lane_at(ls, float(b.get("y")) + 1)
        assert float(b.get("y")) + float(b.get("height")) <= lane["y"] + lane["h"]


def test_clock_corrections_are_noted_per_node():
    root = parse(render_svg(incident(4)))
    notes = {g.get("data-node"): g.findall("s:text", NS)[1].text
             for g in root.findall(".//s:g[@class='lane'][@data-kind='node']", NS)}
    assert "reference clock" in notes["gpu-node-00"]
    assert "+0.4 s (corrected)" in notes["gpu-node-01"]
    assert "+0.8 s (not applied)" in notes["gpu-node-02"]


def test_bundle_strings_are_escaped():
    nasty = 'n<script>alert("x")</script>&\'\x07'
    r = incident(name=nasty + "{:02d}")
    r.root_cause.title = "<b>bold</b> & \x1b[31mred"
    svg = render_svg(r)
    root = parse(svg)
    assert "<script" not in svg and "<b>" not in svg
    assert not root.findall(".//s:script", NS)
    node_lanes = root.findall(".//s:g[@class='lane'][@data-kind='node']", NS)
    assert node_lanes[0].get("data-node") == nasty.replace("\x07", "\ufffd") + "00"
    assert root.find("s:title", NS).text.endswith("<b>bold</b> & \ufffd[31mred")


def test_an_empty_report_still_draws():
    r = incident()
    r.nodes, r.phases, r.symptoms, r.kernel_events, r.first_causal = [], [], [], [], None
    r.origin = Origin()
    root = parse(render_svg(r))
    assert lanes(root) == [] and marks(root) == []
    assert "Nothing in this bundle carries a time" in "".join(root.itertext())


# ------------------------------------------------------------------------------------------
# a real multi-node case, through the whole pipeline
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus_svg():
    return analyze(CASE / "bundle"), render_svg(analyze(CASE / "bundle"))


def test_corpus_case_picture_matches_its_report(corpus_svg):
    r, svg = corpus_svg
    truth = json.loads((CASE / "truth.json").read_text(encoding="utf-8"))
    root = parse(svg)
    ls = lanes(root)
    assert len([ln for ln in ls if ln["kind"] == "rank"]) == sum(len(n.ranks) for n in r.nodes) == 16
    cause = next(m for m in marks(root) if m["kind"] == "cause")
    lane = lane_at(ls, cause["y"])
    assert (lane["node"], lane["rank"]) == (truth["origin"]["node"], str(truth["origin"]["rank"]))
    xid = [m for m in marks(root) if m["kind"] == "kernel" and m["category"] == "gpu.xid"]
    assert xid and all(lane_at(ls, m["y"])["kind"] == "node" for m in xid)
    assert root.findall(".//s:g[@class='break']", NS)   # weeks of uptime before, 39 quiet minutes of serving


def test_same_bundle_same_bytes(corpus_svg):
    _, svg = corpus_svg
    assert render_svg(analyze(CASE / "bundle")) == svg


# ------------------------------------------------------------------------------------------
# what the report gives the picture: phase spans per lane, kernel events per node
# ------------------------------------------------------------------------------------------
def worker(tp: int, pid: int, t: str, message: str) -> str:
    return f"(Worker_TP{tp} pid={pid}) INFO 08-11 {t} [x.py:1] {message}"


LIFECYCLE = {
    "node-a/vllm.log": "".join(line + "\n" for line in [
        worker(0, 101, "10:00:00", "rank 0 in world size 2 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0"),
        worker(1, 102, "10:00:01", "rank 1 in world size 2 is assigned as DP rank 0, PP rank 0, TP rank 1, EP rank 1"),
        worker(0, 101, "10:00:10", "Starting to load model /models/x..."),
        worker(1, 102, "10:00:12", "Starting to load model /models/x..."),
        worker(0, 101, "10:01:00", "Available KV cache memory: 34.27 GiB"),
        worker(1, 102, "10:01:05", "Available KV cache memory: 34.27 GiB"),
        worker(0, 101, "10:01:30", "Graph capturing finished in 7 secs, took 0.53 GiB"),
    ]),
    # a boot line weeks earlier: kernel lines only borrow their node's phase, they must not stretch a band
    "node-a/kern.log": "2026-07-20T08:00:00+00:00 gpu-a kernel: Linux version 6.8.0 (buildd@lcy02) #1 SMP\n"
                       "2026-08-11T10:02:00+00:00 gpu-a kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
                       "name=<unknown>, GPU has fallen off the bus.\n",
}


@pytest.fixture(scope="module")
def lifecycle(tmp_path_factory):
    from conftest import make_bundle
    return analyze(make_bundle(tmp_path_factory.mktemp("lifecycle"), LIFECYCLE))


def test_phase_spans_follow_each_ranks_landmarks(lifecycle):
    by_rank: dict[int | None, list] = {}
    for p in lifecycle.phases:
        by_rank.setdefault(p.rank, []).append(p)
    assert set(by_rank) == {0, 1}   # the node has ranks: no separate lane for its other processes
    r0 = [(p.phase, p.start, p.end) for p in by_rank[0]]
    assert r0 == [("distributed_init", "2026-08-11T10:00:00Z", "2026-08-11T10:00:10Z"),
                  ("model_load", "2026-08-11T10:00:10Z", "2026-08-11T10:01:00Z"),
                  ("kv_cache_init", "2026-08-11T10:01:00Z", "2026-08-11T10:01:30Z"),
                  ("serving", "2026-08-11T10:01:30Z", "2026-08-11T10:01:30Z")]
    r1 = [(p.phase, p.start, p.end) for p in by_rank[1]]
    assert r1[-1] == ("kv_cache_init", "2026-08-11T10:01:05Z", "2026-08-11T10:01:05Z")
    assert all(not p.start.startswith("2026-07") for p in lifecycle.phases)


def test_kernel_events_are_grouped_per_node_with_the_cause_marked(lifecycle):
    xid = [k for k in lifecycle.kernel_events if k.category == "gpu.xid"]
    assert len(xid) == 1
    k = xid[0]
    assert (k.role, k.file, k.line, k.count, k.timestamp) == ("cause", "node-a/kern.log", 2, 1, "2026-08-11T10:02:00Z")
    assert k.node == lifecycle.origin.node
    assert all(s.source != "kernel" for s in lifecycle.symptoms)


def test_a_node_without_ranks_gets_one_lane_and_kernel_lines_do_not_stretch_it(tmp_path):
    from conftest import make_bundle
    from test_report import HEALTHY
    files = {"node-a/vllm.log": HEALTHY["vllm.log"], "node-a/kern.log": LIFECYCLE["node-a/kern.log"]}
    r = analyze(make_bundle(tmp_path, files))
    assert r.phases and {p.rank for p in r.phases} == {None}
    assert [p.phase for p in r.phases] == ["startup", "serving"]
    assert r.phases[0].start == "2026-08-11T10:00:00Z" and r.phases[-1].end == "2026-08-11T10:05:00Z"
