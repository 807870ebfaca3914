"""`k3logs diff` (#26): the corpus pairs (every case with a reference/ beside its bundle: the fact its truth names is
ranked first), the odd node out of one bundle, folders and archives, the JSON Schema, exit statuses, `analyze
--reference`; and unit tests of the ranking, the lists, the odd node out (with their near misses), the lifecycle
departure and the message templates, on hand-made facts and events."""
from __future__ import annotations

import json
import tarfile
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from types import SimpleNamespace

import jsonschema
import polars as pl
import pytest
from click.testing import CliRunner

from conftest import TESTS_DIR
from k3logs import api
from k3logs.cli import cli
from k3logs.diff.compare import compare_lifecycles, compare_messages
from k3logs.diff.model import ABSENT
from k3logs.diff.environment import NodeFacts, compare_environments, compare_nodes
from k3logs.diff.model import DiffData, load_data, schema
from k3logs.diff.render import render_markdown
from k3logs.facts.util import Fact
from k3logs.settings import Settings

CORPORA = TESTS_DIR.parent / "corpora"
PAIRS = sorted(p.parent.name for p in CORPORA.glob("*/reference") if (p.parent / "truth.json").is_file())
SETTINGS = Settings(redact=False)


def truth_of(case: str) -> dict:
    return json.loads((CORPORA / case / "truth.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def pair(case: str):
    return api.diff(CORPORA / case / "bundle", CORPORA / case / "reference", SETTINGS)


@lru_cache(maxsize=None)
def alone(case: str):
    return api.diff(CORPORA / case / "bundle", None, SETTINGS)


def validate(text: str) -> dict:
    doc = json.loads(text)
    jsonschema.Draft202012Validator(schema()).validate(doc)
    return doc


# ------------------------------------------------------------------------------------------------------
# the corpus pairs
# ------------------------------------------------------------------------------------------------------
def test_there_are_at_least_six_corpus_pairs_each_naming_what_changed():
    assert len(PAIRS) >= 6, PAIRS
    for case in PAIRS:
        assert truth_of(case).get("diff", {}).get("changed"), f"{case}: truth.json has no diff.changed"


@pytest.mark.parametrize("case", PAIRS)
def test_the_fact_that_changed_is_ranked_first(case):
    want, d = truth_of(case)["diff"], pair(case)
    top = d.environment[0]
    assert (top.rank, top.fact) == (1, want["changed"]), [(c.rank, c.fact, c.change) for c in d.environment[:5]]
    assert top.change == want.get("change", top.change)
    assert set(top.nodes) == set(want.get("nodes", top.nodes))
    if "from" in want:
        assert top.reference == [want["from"]] and top.failing == [want["to"]]
    assert d.matters and d.exit_status == 1
    assert d.lifecycle is not None and d.lifecycle.departure is not None   # the failing run stopped short of it
    validate(d.to_json())
    assert f"`{want['changed']}`" in render_markdown(d)


@pytest.mark.parametrize("case", [c for c in PAIRS if truth_of(c)["diff"].get("odd_node")])
def test_one_bundle_alone_names_its_odd_node_out(case):
    want, d = truth_of(case)["diff"], alone(case)
    assert d.mode == "nodes" and d.reference is None and d.lifecycle is None
    assert d.odd_node is not None and d.odd_node.node == want["odd_node"]
    assert d.odd_node.facts[0] == want["changed"]
    assert d.node_differences[0].nodes == [want["odd_node"]]
    assert d.exit_status == 1
    validate(d.to_json())
    assert f"Odd node out: {want['odd_node']}" in render_markdown(d)


def test_a_bundle_compared_with_itself_differs_in_nothing_that_matters():
    case = PAIRS[0]
    d = api.diff(CORPORA / case / "reference", CORPORA / case / "reference", SETTINGS)
    assert not d.matters and d.exit_status == 0
    assert d.environment == [] and d.messages == [] and d.lifecycle.departure is None
    validate(d.to_json())


def test_diff_reads_archives_as_it_reads_folders(tmp_path):
    case = next(c for c in PAIRS if "shm" in truth_of(c)["diff"]["changed"])
    for side in ("bundle", "reference"):
        with tarfile.open(tmp_path / f"{side}.tar.gz", "w:gz") as tar:
            tar.add(CORPORA / case / side, arcname=side)
    d = api.diff(tmp_path / "bundle.tar.gz", tmp_path / "reference.tar.gz", SETTINGS)
    want = pair(case)
    assert [(c.fact, c.change, c.nodes) for c in d.environment] == [(c.fact, c.change, c.nodes) for c in want.environment]
    assert d.lifecycle.departure == want.lifecycle.departure
    assert d.messages_total == want.messages_total


def test_the_new_messages_come_in_time_order_those_before_the_failure_first():
    d = pair(next(c for c in PAIRS if truth_of(c)["diff"]["changed"] == "shm_size"))
    flags = [m.before_failure for m in d.messages]
    assert flags and flags[0] is True
    assert flags == sorted(flags, key=lambda f: {True: 0, False: 1, None: 2}[f])
    before = [m.timestamp for m in d.messages if m.before_failure]
    assert before == sorted(before)
    assert any("failed to extend /dev/shm" in m.text for m in d.messages)
    assert all("vLLM is using nccl" not in m.text for m in d.messages)   # the reference printed those too


# ------------------------------------------------------------------------------------------------------
# the command line
# ------------------------------------------------------------------------------------------------------
def test_cli_diff_markdown_json_and_exit_statuses(tmp_path):
    case = PAIRS[0]
    runner = CliRunner()
    r = runner.invoke(cli, ["diff", str(CORPORA / case / "bundle"), str(CORPORA / case / "reference")])
    assert r.exit_code == 1, r.output
    assert r.output.startswith("# k3logs diff") and "## Environment: what changed, ranked" in r.output
    r = runner.invoke(cli, ["diff", str(CORPORA / case / "bundle"), str(CORPORA / case / "reference"), "--format", "json"])
    assert r.exit_code == 1
    assert validate(r.output)["environment"][0]["fact"] == truth_of(case)["diff"]["changed"]
    r = runner.invoke(cli, ["diff", str(CORPORA / case / "reference"), str(CORPORA / case / "reference")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["diff", str(tmp_path / "no-such-bundle"), str(CORPORA / case / "reference")])
    assert r.exit_code == 2 and r.output.startswith("k3logs: error:")
    (tmp_path / "empty").mkdir()
    r = runner.invoke(cli, ["diff", str(tmp_path / "empty")])
    assert r.exit_code == 2
    r = runner.invoke(cli, ["diff", str(CORPORA / case / "bundle"), "--format", "yaml"])
    assert r.exit_code == 2


def test_analyze_with_a_reference_adds_the_top_changes(tmp_path):
    case = next(c for c in PAIRS if truth_of(c)["diff"]["changed"] == "driver_version")
    bundle, ref = str(CORPORA / case / "bundle"), str(CORPORA / case / "reference")
    runner = CliRunner()
    plain = runner.invoke(cli, ["analyze", bundle, "--format", "json"])
    r = runner.invoke(cli, ["analyze", bundle, "--reference", ref, "--format", "json"])
    assert r.exit_code == plain.exit_code == 1
    doc, before = json.loads(r.output), json.loads(plain.output)
    section = doc.pop("reference_diff")
    assert doc == before                         # the report itself is untouched
    assert section["top_changes"][0]["fact"] == "driver_version" and section["matters"] is True
    r = runner.invoke(cli, ["analyze", bundle, "--reference", ref])
    assert "## What changed since the reference" in r.output and "`driver_version`" in r.output
    out = tmp_path / "incident"
    r = runner.invoke(cli, ["analyze", bundle, "--reference", ref, "-o", f"{out}/"])
    assert r.exit_code == 1 and "`driver_version`" in (out / "report.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------------
# unit tests: ranking and lists
# ------------------------------------------------------------------------------------------------------
def facts(spec: dict[str, dict[str, str | list[str]]], shows: dict[str, set[str]] | None = None) -> NodeFacts:
    """NodeFacts from {node: {fact: value or [values]}}."""
    out: dict = {}
    for node, fs in spec.items():
        out[node] = {}
        for name, vals in fs.items():
            vals = [vals] if isinstance(vals, str) else vals
            out[node][name] = {v: Fact(name, v, f"{node}/dump.txt", i + 1, node) for i, v in enumerate(vals)}
    return NodeFacts(out, {n: set((shows or {}).get(n, set())) for n in out})


DATA = load_data()


def ranked(fail: NodeFacts, ref: NodeFacts, data: DiffData = DATA) -> list[tuple[str, str]]:
    return [(c.fact, c.change) for c in compare_environments(fail, ref, data)[0]]


def test_the_chain_ranks_the_driver_before_the_image_before_the_runtime_before_a_flag():
    ref = facts({"n1": {"flag:enforce_eager": "false", "vllm_version": "0.11.0", "image": "v:1", "driver_version": "570.1"}},
                {"n1": {"flag:"}})
    fail = facts({"n1": {"flag:enforce_eager": "true", "vllm_version": "0.12.0", "image": "v:2", "driver_version": "580.2"}},
                 {"n1": {"flag:"}})
    assert ranked(fail, ref) == [("driver_version", "changed"), ("image", "changed"), ("vllm_version", "changed"),
                                 ("flag:enforce_eager", "changed")]


def test_the_ranking_is_data(tmp_path):
    text = (TESTS_DIR.parent / "patterns" / "diff.toml").read_text(encoding="utf-8")
    text = text.replace('id = "driver"\ntitle = "host driver"\nweight = 100', 'id = "driver"\ntitle = "host driver"\nweight = 1')
    (tmp_path / "diff.toml").write_text(text, encoding="utf-8")
    data = load_data(str(tmp_path / "diff.toml"))
    ref = facts({"n1": {"image": "v:1", "driver_version": "570.1"}})
    fail = facts({"n1": {"image": "v:2", "driver_version": "580.2"}})
    assert ranked(fail, ref, data) == [("image", "changed"), ("driver_version", "changed")]


def test_logging_switches_and_names_are_shown_but_do_not_matter():
    ref = facts({"n1": {"env:NCCL_DEBUG": "WARN"}}, {"n1": {"env:"}})
    fail = facts({"n1": {"env:NCCL_DEBUG": "INFO"}}, {"n1": {"env:"}})
    changes, _ = compare_environments(fail, ref, DATA)
    assert [(c.fact, c.weight) for c in changes] == [("env:NCCL_DEBUG", 0)]


def test_who_where_and_when_are_never_compared():
    for name in ("hostname", "collected_at", "boot_time", "gpu_process", "gpu_uuids", "metric:vllm:num_requests_running",
                 "restart_count", "exit_code", "launch_command", "flag:data_parallel_address", "env:VLLM_HOST_IP"):
        assert DATA.ignored(name), name
    for name in ("driver_version", "image_digest", "shm_size", "env:NCCL_IB_HCA", "flag:enforce_eager", "pip:triton"):
        assert not DATA.ignored(name), name


def test_a_fact_one_side_does_not_show_is_not_compared_absence_is_no_change():
    ref = facts({"n1": {"driver_version": "580.1", "torch_version": "2.9.0+cu128"}})
    fail = facts({"n1": {"driver_version": "580.1"}})              # no pip freeze, no collect_env on this side
    changes, unknown = compare_environments(fail, ref, DATA)
    assert changes == []
    assert [(u.fact, u.missing_in, u.value) for u in unknown] == [("torch_version", "failing", ["2.9.0+cu128"])]


def test_a_list_entry_goes_away_only_where_the_list_is_shown():
    ref = facts({"n1": {"pip:flashinfer-python": "0.5.3", "pip:numpy": "2.2.6"}}, {"n1": {"pip:"}})
    with_list = facts({"n1": {"pip:numpy": "2.2.6"}}, {"n1": {"pip:"}})
    without = facts({"n1": {}}, {"n1": set()})
    assert ranked(with_list, ref) == [("pip:flashinfer-python", "went_away")]
    assert ranked(without, ref) == []
    appeared = facts({"n1": {"pip:numpy": "2.2.6", "pip:flashinfer-python": "0.5.3", "pip:lmcache": "0.3.1"}}, {"n1": {"pip:"}})
    assert ranked(appeared, ref) == [("pip:lmcache", "appeared")]


def test_a_node_missing_from_the_reference_is_compared_with_every_reference_node():
    ref = facts({"a": {"nccl_version": "2.27.3"}, "d": {"nccl_version": "2.27.3"}})
    fail = facts({"a": {"nccl_version": "2.27.3"}, "c": {"nccl_version": "2.27.7"}})
    changes, _ = compare_environments(fail, ref, DATA)
    assert [(c.fact, c.nodes, c.reference, c.failing) for c in changes] == [("nccl_version", ["c"], ["2.27.3"], ["2.27.7"])]
    assert changes[0].compared_with.startswith("the reference")


def test_the_same_change_on_several_nodes_is_one_row():
    ref = facts({"a": {"shm_size": "34359738368"}, "b": {"shm_size": "34359738368"}})
    fail = facts({"a": {"shm_size": "67108864"}, "b": {"shm_size": "67108864"}})
    changes, _ = compare_environments(fail, ref, DATA)
    assert [(c.fact, c.nodes) for c in changes] == [("shm_size", ["a", "b"])]


# ------------------------------------------------------------------------------------------------------
# unit tests: the odd node out and its near misses
# ------------------------------------------------------------------------------------------------------
def test_the_node_in_the_minority_is_the_odd_node_out():
    nf = facts({"a": {"nccl_version": "2.27.3"}, "b": {"nccl_version": "2.27.3"}, "c": {"nccl_version": "2.27.7"}})
    diffs, odd = compare_nodes(nf, DATA)
    assert odd is not None and odd.node == "c" and odd.facts == ["nccl_version"]
    assert [(d.fact, d.change, d.nodes, d.reference, d.failing) for d in diffs] == \
        [("nccl_version", "changed", ["c"], ["2.27.3"], ["2.27.7"])]


def test_two_nodes_that_differ_have_no_majority_and_no_odd_node():
    nf = facts({"a": {"nccl_version": "2.27.3"}, "b": {"nccl_version": "2.27.7"}})
    diffs, odd = compare_nodes(nf, DATA)
    assert odd is None
    assert [(d.fact, d.change, d.by_node) for d in diffs] == [("nccl_version", "split", {"a": ["2.27.3"], "b": ["2.27.7"]})]


def test_three_nodes_that_all_differ_have_no_odd_node():
    nf = facts({"a": {"driver_version": "570"}, "b": {"driver_version": "575"}, "c": {"driver_version": "580"}})
    _, odd = compare_nodes(nf, DATA)
    assert odd is None


def test_a_node_without_the_evidence_is_not_odd_by_its_absence():
    nf = facts({"a": {"nvidia_peermem_loaded": "true", "module:ib_core": "loaded"},
                "b": {"nvidia_peermem_loaded": "true", "module:ib_core": "loaded"},
                "c": {}}, {"a": {"module:"}, "b": {"module:"}})
    diffs, odd = compare_nodes(nf, DATA)
    assert diffs == [] and odd is None


def test_a_module_that_one_node_lacks_in_its_own_lsmod_makes_it_odd():
    nf = facts({"a": {"module:gdrdrv": "loaded"}, "b": {"module:gdrdrv": "loaded"}, "c": {}},
               {"a": {"module:"}, "b": {"module:"}, "c": {"module:"}})
    diffs, odd = compare_nodes(nf, DATA)
    assert odd is not None and odd.node == "c"
    assert (diffs[0].fact, diffs[0].change, diffs[0].failing) == ("module:gdrdrv", "went_away", [])
    assert ABSENT not in diffs[0].reference


def test_a_difference_that_does_not_matter_names_no_odd_node():
    nf = facts({"a": {"env:NCCL_DEBUG": "WARN"}, "b": {"env:NCCL_DEBUG": "WARN"}, "c": {"env:NCCL_DEBUG": "INFO"}})
    diffs, odd = compare_nodes(nf, DATA)
    assert [d.fact for d in diffs] == ["env:NCCL_DEBUG"] and odd is None


def test_two_nodes_each_odd_in_a_fact_of_the_same_weight_tie_and_no_node_is_named():
    nf = facts({"a": {"nccl_version": "2.27.7", "nccl_cuda": "12.9"}, "b": {"nccl_version": "2.27.3", "nccl_cuda": "12.9"},
                "c": {"nccl_version": "2.27.3", "nccl_cuda": "13.0"}, "d": {"nccl_version": "2.27.3", "nccl_cuda": "12.9"}})
    diffs, odd = compare_nodes(nf, DATA)
    assert {(d.fact, tuple(d.nodes)) for d in diffs} == {("nccl_version", ("a",)), ("nccl_cuda", ("c",))}
    assert odd is None


def test_the_heavier_difference_decides_between_two_odd_nodes():
    nf = facts({"a": {"driver_version": "580.2", "kernel_version": "6.8"}, "b": {"driver_version": "570.1", "kernel_version": "6.8"},
                "c": {"driver_version": "570.1", "kernel_version": "6.5"}, "d": {"driver_version": "570.1", "kernel_version": "6.8"}})
    _, odd = compare_nodes(nf, DATA)
    assert odd is not None and odd.node == "a"


# ------------------------------------------------------------------------------------------------------
# unit tests: lifecycle and messages on hand-made event tables
# ------------------------------------------------------------------------------------------------------
T0 = datetime(2026, 5, 1, 8, 0, tzinfo=timezone.utc)


def run_of(rows: list[tuple[float, str | None, str]], outcome: str = "serving", root_at: float | None = None, level=None):
    ev = pl.DataFrame({
        "file": ["log.txt"] * len(rows), "line": list(range(1, len(rows) + 1)),
        "ts": [T0 + timedelta(seconds=s) for s, _, _ in rows], "mark": [m for _, m, _ in rows],
        "text": [t for _, _, t in rows], "node": ["n1"] * len(rows), "rank": [None] * len(rows),
        "phase": [m for _, m, _ in rows], "level": [level or "INFO"] * len(rows),
        "exc_types": [[] for _ in rows],
    }, schema_overrides={"rank": pl.Int32, "mark": pl.String, "phase": pl.String, "exc_types": pl.List(pl.String)})
    root = SimpleNamespace(ts=T0 + timedelta(seconds=root_at)) if root_at is not None else None
    return SimpleNamespace(events=ev, decision=SimpleNamespace(outcome=SimpleNamespace(state=outcome), root=root))


GOOD = [(0, "startup", "vLLM API server version 0.11.0"), (5, "distributed_init", "world_size=2 rank=0"),
        (8, "model_load", "Starting to load model m..."),
        (40, "kv_cache_init", "Model loading took 15.2 GiB and 31.5 seconds"),
        (45, "kv_cache_init", "GPU KV cache size: 400,000 tokens"), (60, "serving", "Application startup complete.")]


def test_the_lifecycle_departs_at_the_first_landmark_the_failing_run_missed():
    bad = run_of(GOOD[:3] + [(30, None, "torch.OutOfMemoryError: CUDA out of memory")], "never_ready", root_at=30)
    life = compare_lifecycles(bad, run_of(GOOD), DATA)
    assert life.departure == "model_load_seconds"         # model_load reached, its end never printed
    assert next(r for r in life.rows if r.id == "model_load").departs is False
    assert life.rows[-1].id == "outcome" and life.rows[-1].departs


def test_a_figure_off_by_more_than_its_tolerance_is_a_departure_and_within_it_is_not():
    smaller = [r if "KV cache size" not in r[2] else (45, "kv_cache_init", "GPU KV cache size: 120,000 tokens") for r in GOOD]
    near = [r if "KV cache size" not in r[2] else (45, "kv_cache_init", "GPU KV cache size: 395,000 tokens") for r in GOOD]
    assert compare_lifecycles(run_of(smaller), run_of(GOOD), DATA).departure == "kv_cache_tokens"
    assert compare_lifecycles(run_of(near), run_of(GOOD), DATA).departure is None


def test_a_phase_that_took_far_longer_is_a_departure():
    slow = [(s + (300 if s >= 40 else 0), m, t) for s, m, t in GOOD]
    life = compare_lifecycles(run_of(slow), run_of(GOOD), DATA)
    assert life.departure == "model_load" and "took" in next(r for r in life.rows if r.id == "model_load").detail


def test_a_message_with_other_numbers_is_the_same_template_and_a_new_one_is_new():
    ref = run_of(GOOD)
    fail = run_of(GOOD[:3] + [(9, None, "Starting to load model m..."), (12, None, "world_size=4 rank=3"),
                              (20, None, "NCCL WARN Error: failed to extend /dev/shm/nccl-Ab3dQz to 9637892 bytes")],
                  "never_ready", root_at=20, level="WARNING")
    msgs, total, limited = compare_messages(fail, ref, DATA)
    assert total == 1 and not limited
    assert "failed to extend" in msgs[0].text and msgs[0].before_failure is True and msgs[0].matters
