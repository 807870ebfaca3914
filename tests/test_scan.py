"""`k3logs scan`: an archive of corpus bundles (folders, .tar.gz, .zip, .tar.zst) with a truncated and a
mislabelled archive among them. Rows are checked against each case's truth.json; then determinism
(--jobs 1 vs 2, Ray vs local), resume, interruption, hostile names, redaction, the summary and the exit
statuses."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from conftest import TESTS_DIR, files_under, make_bundle, tar_bytes, zip_bytes
from k3logs.api import read_scan, scan_archive
from k3logs.cli import cli
from k3logs.evaluate.score import truth_lines
from k3logs.progress import NullDisplay
from k3logs.scan import local, run as scan_module
from k3logs.scan.find import content_hash, report_names
from k3logs.scan.run import _finish
from k3logs.scan.table import SCHEMA, TABLE, write_table
from k3logs.scan.work import ROW_FIELDS, SLOW_ENV, Entry, Outcome, clean_row
from k3logs.scan.summary import other_families, summarize
from k3logs.settings import Settings

CORPORA = TESTS_DIR.parent / "corpora"
# name in the archive -> (corpus case, how it is stored)
GOOD = {
    "c208-xid79": ("c208-xid79-torchrun-misleading-rootcause", "folder"),
    "c217-keyerror.tar.gz": ("c217-other-custom-logitsproc-keyerror", "tar.gz"),
    "c214-healthy.zip": ("c214-healthy-k3-2node-deepep-rdma", "zip"),
    "c201-dmabuf.tar.zst": ("c201-k3-dp2-dmabuf524-debugfile", "tar.zst"),
    "c213-no-prefix-caching.tgz": ("c213-k3-prefix-caching-not-enabled", "tar.gz"),
}
TRUNCATED = "truncated.tar.gz"  # the first half of a good .tar.gz
MISLABELLED = "mislabelled.zip"  # not an archive at all


def bundle_files(case: str) -> dict[str, bytes]:
    root = CORPORA / case / "bundle"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def add_bundle(archive: Path, name: str, case: str, how: str) -> None:
    if how == "folder":
        shutil.copytree(CORPORA / case / "bundle", archive / name)
        return
    files = {f"bundle/{k}": v for k, v in bundle_files(case).items()}
    data = zip_bytes(files) if how == "zip" else tar_bytes(files, how.removeprefix("tar").lstrip("."))
    (archive / name).write_bytes(data)


def truth(case: str) -> dict:
    return json.loads((CORPORA / case / "truth.json").read_text(encoding="utf-8"))


def build_archive(root: Path) -> Path:
    archive = root / "archive"
    archive.mkdir()
    for name, (case, how) in GOOD.items():
        add_bundle(archive, name, case, how)
    whole = tar_bytes({f"bundle/{k}": v for k, v in bundle_files("c215-healthy-tp8-docker-graceful-stop").items()},
                      "gz")
    (archive / TRUNCATED).write_bytes(whole[: len(whole) // 2])
    (archive / MISLABELLED).write_bytes(b"these are notes, not a zip archive\n" * 20)
    (archive / "README.txt").write_text("not a bundle: ignored\n")
    return archive


def rows_by_path(out: Path) -> dict[str, dict]:
    return {r["path"]: r for r in read_scan(out)}


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    """The archive scanned once with two worker processes: (archive, out, result)."""
    root = tmp_path_factory.mktemp("scan")
    archive = build_archive(root)
    out = root / "out"
    result = scan_archive(archive, out, jobs=2)
    return archive, out, result


# ------------------------------------------------------------------------------------------
# the rows
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(GOOD))
def test_each_row_agrees_with_the_truth_of_its_case(scanned, name):
    _, out, _ = scanned
    row, t = rows_by_path(out)[name], truth(GOOD[name][0])
    assert row["error"] is None
    assert row["healthy"] is bool(t.get("healthy"))
    assert row["category"] in [t["root_cause"], *t.get("root_cause_alt", [])]
    origin = t.get("origin") or {}
    if origin.get("node") is not None:
        assert row["node"] == origin["node"]
    if origin.get("rank") is not None:
        assert row["rank"] == origin["rank"]
    if t.get("first_causal"):
        assert (row["first_causal_file"], row["first_causal_line"]) in truth_lines(t["first_causal"])
    if not t.get("healthy"):
        alt = t.get("phase_alt", [])
        assert row["phase"] in [t["phase"], *([alt] if isinstance(alt, str) else alt)]


def test_a_corrupt_and_a_mislabelled_archive_get_their_error_and_the_scan_goes_on(scanned):
    _, _, result = scanned
    rows = {r["path"]: r for r in result.rows}
    assert set(rows) == set(GOOD) | {TRUNCATED, MISLABELLED}, "README.txt is not a bundle"
    assert result.others == ["README.txt"]
    assert "truncated or corrupt" in rows[TRUNCATED]["error"]
    assert rows[TRUNCATED]["report"] is not None, "what could be read is still analysed and reported"
    assert "not an archive" in rows[MISLABELLED]["error"]
    assert rows[MISLABELLED]["category"] is None and rows[MISLABELLED]["report"] is None
    assert rows[MISLABELLED]["content_hash"] == hashlib.blake2b(
        b"these are notes, not a zip archive\n" * 20).hexdigest()
    assert result.failed == 2 and result.exit_status == 3


def test_reports_sit_beside_the_table_and_match_their_rows(scanned):
    _, out, _ = scanned
    for path, row in rows_by_path(out).items():
        if row["report"] is None:
            continue
        report = json.loads((out / row["report"]).read_text(encoding="utf-8"))
        assert report["bundle"]["path"] == path
        assert report["root_cause"]["category"] == row["category"]
        assert report["root_cause"]["signature"] == row["signature"]
        assert (report["origin"]["node"], report["origin"]["rank"]) == (row["node"], row["rank"])
        when = (report["first_causal"] or {}).get("timestamp")
        assert (datetime.fromisoformat(when) if when else None) == row["first_causal_time"]
        for key, values in report["environment"]["values"].items():   # typed, every distinct value
            assert row["environment"].get(key) == list(dict.fromkeys(v["value"] for v in values))
        assert set(report["environment"]["facts"]) == {k for k, v in row["environment"].items() if v is not None}
    assert sorted(p.name for p in (out / "reports").iterdir()) == sorted(
        Path(r["report"]).name for r in rows_by_path(out).values() if r["report"])


def test_the_table_is_sorted_by_path_and_jobs_1_writes_the_same_bytes(scanned, tmp_path):
    archive, out, _ = scanned
    table = pq.read_table(out / TABLE)
    assert table.schema.equals(SCHEMA)
    paths = table.column("path").to_pylist()
    assert paths == sorted(paths)
    scan_archive(archive, tmp_path / "one", jobs=1)
    assert (tmp_path / "one" / TABLE).read_bytes() == (out / TABLE).read_bytes()
    for report in (out / "reports").iterdir():
        assert (tmp_path / "one" / "reports" / report.name).read_bytes() == report.read_bytes()


def test_ray_local_writes_the_same_output_as_worker_processes(scanned, tmp_path):
    pytest.importorskip("ray")
    archive, out, _ = scanned
    result = scan_archive(archive, tmp_path / "ray", jobs=2, ray="local")
    assert len(result.analysed) == len(GOOD) + 2
    assert (tmp_path / "ray" / TABLE).read_bytes() == (out / TABLE).read_bytes()
    assert sorted(p.name for p in (tmp_path / "ray" / "reports").iterdir()) == sorted(
        p.name for p in (out / "reports").iterdir())
    for report in (out / "reports").iterdir():
        assert (tmp_path / "ray" / "reports" / report.name).read_bytes() == report.read_bytes()


# ------------------------------------------------------------------------------------------
# resume and interruption
# ------------------------------------------------------------------------------------------
def test_resume_skips_unchanged_bundles_and_reanalyses_a_changed_one(scanned, tmp_path):
    archive, out, _ = scanned
    mine, again = tmp_path / "archive", tmp_path / "out"
    shutil.copytree(archive, mine)
    shutil.copytree(out, again)
    # the xid79 folder now holds the healthy case: same name, new content, new verdict
    shutil.rmtree(mine / "c208-xid79")
    shutil.copytree(CORPORA / "c215-healthy-tp8-docker-graceful-stop" / "bundle", mine / "c208-xid79")
    (mine / "c214-healthy.zip").unlink()
    result = scan_archive(mine, again, jobs=2)
    failed = {TRUNCATED, MISLABELLED}  # rows with an error are always tried again
    assert result.analysed == sorted({"c208-xid79"} | failed)
    assert result.unchanged == sorted(set(GOOD) - {"c208-xid79", "c214-healthy.zip"})
    rows = rows_by_path(again)
    assert "c214-healthy.zip" not in rows and not (again / "reports" / "c214-healthy.zip.json").exists()
    assert rows["c208-xid79"]["healthy"] is True and rows["c208-xid79"]["category"] == "none"
    assert rows["c208-xid79"]["content_hash"] == content_hash(mine / "c208-xid79")
    for name in result.unchanged:
        assert rows[name] == rows_by_path(out)[name]
    # other settings are another analysis: nothing is reused
    redo = scan_archive(mine, again, Settings(tz="Europe/Berlin"), jobs=2)
    assert redo.unchanged == []


class StopAfter(NullDisplay):
    """A display that presses Ctrl-C after `n` bundles."""

    def __init__(self, n: int):
        self.n = n

    def advance(self, nbytes: int, worked: bool = True) -> None:
        self.n -= 1
        if self.n == 0:
            raise KeyboardInterrupt


def test_an_interrupted_scan_keeps_the_finished_rows_and_a_second_run_does_the_rest(scanned, tmp_path):
    archive, out, _ = scanned
    with pytest.raises(KeyboardInterrupt):
        scan_archive(archive, tmp_path / "out", jobs=1, display=StopAfter(3))
    kept = rows_by_path(tmp_path / "out")
    assert len(kept) == 3
    result = scan_archive(archive, tmp_path / "out", jobs=2)
    assert set(result.unchanged) == {p for p, r in kept.items() if r["error"] is None}
    assert (tmp_path / "out" / TABLE).read_bytes() == (out / TABLE).read_bytes()


# ------------------------------------------------------------------------------------------
# untrusted names and secrets
# ------------------------------------------------------------------------------------------
def test_report_names_stay_inside_reports_and_never_collide():
    hostile = ["../../etc/passwd", "..", "-rf", "a b", "a_b", "A_B", "x" * 300, "ünïcødé", "line\nbreak",
               "back\\..\\slash", "CON", "report.json", "report.json.json"]
    names = report_names(hostile)
    assert len({n.lower() for n in names.values()}) == len(hostile)
    for name in names.values():
        folder, file = name.split("/")
        assert folder == "reports" and file.endswith(".json") and len(file) < 200
        assert not file.startswith((".", "-")) and set(file) <= set(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
    assert names["report.json"] == "reports/report.json.json", "a name that is safe is kept"
    assert names["a b"].startswith("reports/a_b-") and names["A_B"] == "reports/A_B.json"
    assert names["a_b"].startswith("reports/a_b-"), "a_b and A_B would be one file on a case-insensitive disk"


def test_hostile_entry_names_write_nothing_outside_out(tmp_path):
    archive = tmp_path / "archive"
    archive.mkdir()
    for name in ["..evil.tar.gz", "$(touch pwned).tar.gz", "new\nline.tar.gz", "-rf.tar.gz", "x.tar.gz"]:
        add_bundle(archive, name, "c217-other-custom-logitsproc-keyerror", "tar.gz")
    before = files_under(tmp_path)
    out = tmp_path / "out"
    result = scan_archive(archive, out, jobs=1)
    created = files_under(tmp_path) - before
    assert created and all(out == p or out in p.parents for p in created)
    assert {r["path"] for r in result.rows} == {"$(touch pwned).tar.gz", "new\nline.tar.gz", "-rf.tar.gz",
                                                "x.tar.gz"}, "hidden entries are not bundles"
    assert all(r["category"] == "other" for r in result.rows)


def test_secrets_in_the_first_causal_line_are_redacted_in_the_table_unless_no_redact(tmp_path):
    archive = tmp_path / "archive"
    archive.mkdir()
    token = "hf_abcdefghijklmnopqrstuvwxyz0123456789"
    files = bundle_files("c217-other-custom-logitsproc-keyerror")
    log = "compose-logs-guarded-llm.txt"
    files[log] = files[log].replace(b"KeyError: 'banned_phrases_file'", f"KeyError: 'key {token}'".encode())
    (archive / "leaky.tar.gz").write_bytes(tar_bytes(files, "gz"))
    redacted = scan_archive(archive, tmp_path / "out", jobs=1).rows[0]
    assert "KeyError" in redacted["first_causal_text"] and token not in redacted["first_causal_text"]
    assert token not in (tmp_path / "out" / TABLE).read_bytes().decode("latin-1")
    assert token not in (tmp_path / "out" / redacted["report"]).read_text()
    kept = scan_archive(archive, tmp_path / "raw", Settings(redact=False), jobs=1).rows[0]
    assert token in kept["first_causal_text"]


# ------------------------------------------------------------------------------------------
# hash
# ------------------------------------------------------------------------------------------
def test_content_hash_is_b2sum_for_a_file_and_follows_every_change_of_a_folder(tmp_path):
    f = tmp_path / "b.tar.gz"
    f.write_bytes(b"\x1f\x8b" + os.urandom(5000))
    assert content_hash(f) == hashlib.blake2b(f.read_bytes()).hexdigest()
    d = tmp_path / "bundle"
    (d / "node-a").mkdir(parents=True)
    (d / "node-a" / "vllm.log").write_text("one\n")
    (d / "dmesg.txt").write_text("two\n")
    seen = {content_hash(d)}
    assert content_hash(d) in seen, "stable"
    (d / "node-a" / "vllm.log").write_text("one!\n")
    seen.add(content_hash(d))
    (d / "dmesg.txt").rename(d / "dmesg.log")
    seen.add(content_hash(d))
    (d / "node-a" / "empty").write_text("")
    seen.add(content_hash(d))
    (d / "link").symlink_to("dmesg.log")
    seen.add(content_hash(d))
    assert len(seen) == 5


# ------------------------------------------------------------------------------------------
# summary
# ------------------------------------------------------------------------------------------
def row(path: str, category: str, when: str | None = None, template: str | None = None, **env) -> dict:
    return {"path": path, "category": category, "healthy": category == "none", "error": None,
            "first_causal_time": datetime.fromisoformat(when).replace(tzinfo=timezone.utc) if when else None,
            "other_template": template, "first_causal_text": template,
            "environment": {k: v if isinstance(v, list) else [v] for k, v in env.items()}}


def test_summary_ranks_causes_with_first_and_last_seen_and_the_environment_behind_them():
    rows = [row("a", "gpu.xid", "2025-03-01T10:00:00", driver_branch=570, gpu_model="H100"),
            row("b", "gpu.xid", "2025-01-05T08:00:00", driver_branch=570, gpu_model="H100"),
            row("c", "gpu.xid", None, driver_branch=[570, 580], gpu_model="H100"),
            row("d", "oom.load", "2025-02-01T00:00:00", image="vllm/vllm-openai:v0.11.1"),
            row("e", "none")]
    md = summarize(rows)
    lines = md.splitlines()
    xid = next(i for i, ln in enumerate(lines) if ln.startswith("| gpu.xid"))
    oom = next(i for i, ln in enumerate(lines) if ln.startswith("| oom.load"))
    assert xid < oom, "ranked by count"
    assert "| gpu.xid | 3 | 2025-01-05 08:00:00Z | 2025-03-01 10:00:00Z | 570 ×2, 570 / 580 ×1 |" in md
    assert "H100 ×3" in lines[xid] and "vllm/vllm-openai:v0.11.1 ×1" in lines[oom]
    assert "5 bundles: 4 incidents, 1 healthy, 0 could not be analysed" in md


def test_unknown_errors_are_grouped_into_families_by_template_similarity():
    rows = [row("a", "other", "2025-01-01T00:00:00", "KeyError: <s>"),
            row("b", "other", "2025-01-02T00:00:00", "KeyError: <s>"),
            row("c", "other", "2025-01-03T00:00:00", "RuntimeError: shape mismatch in custom op <s> at <path>"),
            row("d", "other", "2025-01-04T00:00:00", "RuntimeError: shape mismatch in custom op <s> at <path>!"),
            row("e", "other", "2025-01-05T00:00:00", "ValueError: tokenizer has no chat template"),
            row("f", "gpu.xid", "2025-01-05T00:00:00")]
    families = other_families(rows)
    assert [sorted(r["path"] for r in f.rows) for f in families] == [["a", "b"], ["c", "d"], ["e"]]
    assert families[1].templates == ["RuntimeError: shape mismatch in custom op <s> at <path>",
                                     "RuntimeError: shape mismatch in custom op <s> at <path>!"]
    assert families == other_families(list(reversed(rows))), "the order of the rows does not matter"
    md = summarize(rows)
    assert "| `KeyError: <s>` | 2 | 2025-01-01 00:00:00Z | 2025-01-02 00:00:00Z | 1 | a, b |" in md


def test_scan_summary_reads_a_finished_scan(scanned):
    _, out, _ = scanned
    r = invoke("scan-summary", out)
    assert r.exit_code == 0, r.stderr
    assert "| other | 1 |" in r.stdout and "| `KeyError: <s>` | 1 |" in r.stdout
    assert f"| {TRUNCATED} | " in r.stdout and f"| {MISLABELLED} | not an archive" in r.stdout
    assert r.stdout == summarize(read_scan(out)) + "\n"


# ------------------------------------------------------------------------------------------
# the command: exit statuses and one-line errors
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("names, status", [
    (["c214-healthy.zip"], 0),
    (["c214-healthy.zip", "c217-keyerror.tar.gz"], 1),
    (["c214-healthy.zip", MISLABELLED], 3),
])
def test_exit_status_says_whether_incidents_were_found_or_bundles_failed(tmp_path, names, status):
    archive = tmp_path / "archive"
    archive.mkdir()
    for name in names:
        if name == MISLABELLED:
            (archive / name).write_text("no zip\n")
        else:
            add_bundle(archive, name, *GOOD[name])
    r = invoke("scan", archive, "-o", tmp_path / "out", "--jobs", "1", "--summary")
    assert r.exit_code == status, r.stderr
    assert r.stdout.startswith("# k3logs scan")
    assert r.stderr.strip().splitlines()[-1].startswith(f"{len(names)} bundles ({len(names)} analysed")


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("k3logs: error: "), result.stderr
    return lines[0]


def test_bad_usage_is_one_line_and_exit_2(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    bundle = tmp_path / "one.tar.gz"
    bundle.write_bytes(tar_bytes({"a.log": "x\n"}, "gz"))
    assert "does not exist" in one_error_line(invoke("scan", tmp_path / "nope", "-o", tmp_path / "o"))
    assert "not a folder" in one_error_line(invoke("scan", bundle, "-o", tmp_path / "o"))
    assert "no bundle under" in one_error_line(invoke("scan", empty, "-o", tmp_path / "o"))
    assert "--jobs" in one_error_line(invoke("scan", tmp_path, "-o", tmp_path / "o", "--jobs", "0"))
    assert "is a file" in one_error_line(invoke("scan", tmp_path, "-o", bundle))
    assert "no scan in" in one_error_line(invoke("scan-summary", empty))
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert "pip install 'k3logs[ray]'" in one_error_line(invoke("scan", tmp_path, "-o", tmp_path / "o",
                                                                "--ray", "local"))


# ------------------------------------------------------------------------------------------
# one bundle never stops or hangs a scan
# ------------------------------------------------------------------------------------------
ILLEGAL = "ERROR 11-20 09:44:05 [core.py:2] RuntimeError: CUDA error: an illegal memory access was encountered\n"
ODD = {  # a log line each whose numbers or dates are out of any column's range
    "year-0001": "0001-01-01T00:00:05Z ERROR worker: NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU "
                 "has fallen off the bus.\n",
    "pid-5000-digits": ILLEGAL.replace("[core.py:2]", f"[core.py:2] (EngineCore_DP0 pid={'9' * 5000})"),
    "tp-1e999": "INFO 11-20 09:44:04 [utils.py:233] non-default args: {'model': 'm', 'tensor_parallel_size': 1e999}\n"
                + ILLEGAL,
}


def tiny(archive: Path, name: str, log: str = ILLEGAL) -> None:
    (archive / name).mkdir(parents=True)
    (archive / name / "vllm.log").write_text(log)


def test_odd_numbers_and_dates_cost_at_most_their_own_fields_and_a_resumed_scan_finishes(tmp_path):
    archive = tmp_path / "archive"
    for name, log in ODD.items():
        tiny(archive, name, log)
    add_bundle(archive, "c217-keyerror.tar.gz", *GOOD["c217-keyerror.tar.gz"])
    result = scan_archive(archive, tmp_path / "out", jobs=2)
    rows = rows_by_path(tmp_path / "out")
    assert set(rows) == set(ODD) | {"c217-keyerror.tar.gz"}
    assert rows["c217-keyerror.tar.gz"]["error"] is None and rows["c217-keyerror.tar.gz"]["category"] == "other"
    odd = rows["year-0001"]  # a report that says '1-01-01T00:00:05Z' (no ISO time) once stopped the scan here
    assert odd["first_causal_time"] in (None, datetime(1, 1, 1, 0, 0, 5, tzinfo=timezone.utc))
    said = json.loads((tmp_path / "out" / odd["report"]).read_text())["first_causal"]
    if odd["first_causal_time"] is None and (said or {}).get("timestamp"):
        assert "first_causal_time" in odd["error"] and odd["category"] == "gpu.xid"
    again = scan_archive(archive, tmp_path / "out", jobs=2)
    assert {r["path"] for r in again.rows} == set(rows)
    assert again.unchanged == sorted(p for p, r in rows.items() if r["error"] is None)
    assert again.failed == result.failed


def test_a_worker_cleans_its_row_values_the_table_cannot_store_are_left_empty_and_named():
    good = {"content_hash": "ab", "healthy": False, "category": "gpu.xid", "rank": 3, "lines": 10,
            "first_causal_time": "2025-11-20T09:44:05+00:00",
            "environment": {"gpu_count": [8], "driver_branch": [570, 580], "image": ["vllm/vllm-openai:kimi-k3"]}}
    row, bad = clean_row(good)
    assert bad == [] and row["rank"] == 3 and row["environment"]["gpu_count"] == [8]
    assert row["environment"]["driver_branch"] == [570, 580] and row["environment"]["image"] == ["vllm/vllm-openai:kimi-k3"]
    assert row["first_causal_time"] == datetime(2025, 11, 20, 9, 44, 5, tzinfo=timezone.utc)
    assert set(row) == {f.name for f in ROW_FIELDS}
    row, bad = clean_row(good | {"first_causal_time": "1-01-01T00:00:05Z", "rank": 10 ** 26, "lines": 1e999,
                                 "title": "lone \ud800 surrogate",
                                 "environment": {"gpu_count": [10 ** 5000], "max_model_len": ["auto"]}})
    assert bad == ["title", "rank", "first_causal_time", "lines", "environment.gpu_count",
                   "environment.max_model_len"]
    assert row["rank"] is None and row["first_causal_time"] is None and row["environment"]["gpu_count"] is None
    assert row["category"] == "gpu.xid", "the other values are kept"


def test_the_parent_survives_a_row_it_cannot_store(tmp_path):
    entry = Entry("x", str(tmp_path / "x"), 10, "reports/x.json")
    (tmp_path / "reports").mkdir()
    hostile = Outcome("x", {"rank": 10 ** 30, "first_causal_time": "1-01-01T00:00:05Z", "category": "gpu.xid",
                            "environment": ["not", "a", "struct"]}, b"{}")
    row = _finish(tmp_path, entry, hostile, "key", Settings())
    assert row["rank"] is None and row["category"] == "gpu.xid" and row["report"] == "reports/x.json"
    assert "rank" in row["error"] and "first_causal_time" in row["error"] and "environment" in row["error"]
    broken = _finish(tmp_path, entry, Outcome("x", "not a row"), "key", Settings())
    assert "internal error" in broken["error"] and broken["report"] is None
    write_table(tmp_path / TABLE, [row, broken])  # both can be stored
    assert len(read_scan(tmp_path)) == 2


def test_a_bundle_that_hangs_is_killed_at_its_time_limit_and_the_table_is_saved_meanwhile(tmp_path, monkeypatch):
    archive = tmp_path / "archive"
    for name in ("a-fast", "b-fast", "c-hangs", "d-fast"):
        tiny(archive, name)
    monkeypatch.setenv(SLOW_ENV, "c-hangs=600")
    monkeypatch.setattr(scan_module, "CHECKPOINT_S", 2.0)
    monkeypatch.setattr(local, "TICK_S", 0.2)
    saved: list[set[str]] = []
    real_write = scan_module.write_table

    def write_table_spy(path, rows):
        rows = list(rows)
        saved.append({r["path"] for r in rows})
        real_write(path, rows)

    monkeypatch.setattr(scan_module, "write_table", write_table_spy)
    # one worker: d-fast can only be analysed by the worker that replaces the one killed on c-hangs
    r = invoke("scan", archive, "-o", tmp_path / "out", "--jobs", "1", "--bundle-timeout", "4")
    assert r.exit_code == 3, r.stderr
    rows = rows_by_path(tmp_path / "out")
    assert rows["c-hangs"]["error"] == "timed out after 4 s: its worker was stopped (--bundle-timeout)"
    assert rows["c-hangs"]["category"] is None and rows["c-hangs"]["report"] is None
    for name in ("a-fast", "b-fast", "d-fast"):
        assert rows[name]["error"] is None and rows[name]["category"] == "gpu.illegal_access"
    # b-fast comes in right after a-fast, then nothing for 4 s: only a timer saves it before c-hangs ends
    assert {"a-fast", "b-fast"} in saved, "the table was saved while c-hangs was running"
    assert saved[-1] == set(rows)


def test_the_api_takes_the_time_limit_too(tmp_path, monkeypatch):
    from k3logs.errors import UsageError
    archive = tmp_path / "archive"
    for name in ("a-fast", "b-hangs"):
        tiny(archive, name)
    monkeypatch.setenv(SLOW_ENV, "b-hangs=600")
    with pytest.raises(UsageError):
        scan_archive(archive, tmp_path / "out", bundle_timeout=0)
    result = scan_archive(archive, tmp_path / "out", jobs=1, bundle_timeout=2)
    errors = {r["path"]: r["error"] for r in result.rows}
    assert errors["a-fast"] is None and errors["b-hangs"].startswith("timed out after 2 s")


def test_ray_cancels_a_bundle_past_its_time_limit(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    archive = tmp_path / "archive"
    for name in ("a-fast", "b-hangs", "c-fast"):
        tiny(archive, name)
    monkeypatch.setenv(SLOW_ENV, "b-hangs=600")  # before Ray starts: its workers inherit it
    # (the workers are started before the first bundle: their start, over 20 s on this 2-core machine running
    # two fuzz jobs beside the suite, does not count against a bundle)
    r = invoke("scan", archive, "-o", tmp_path / "out", "--ray", "local", "--jobs", "2", "--bundle-timeout", "10")
    assert r.exit_code == 3, r.stderr
    rows = rows_by_path(tmp_path / "out")
    assert rows["b-hangs"]["error"] == "timed out after 10 s: its worker was stopped (--bundle-timeout)"
    assert rows["a-fast"]["error"] is None and rows["c-fast"]["error"] is None


@pytest.mark.parametrize("value", ["0", "-5", "nan"])
def test_the_time_limit_must_be_positive(tmp_path, value):
    tiny(tmp_path / "archive", "a")
    line = one_error_line(invoke("scan", tmp_path / "archive", "-o", tmp_path / "out", "--bundle-timeout", value))
    assert "--bundle-timeout must be more than 0 seconds" in line


def children(pid: int) -> set[tuple[int, str]]:
    """(pid, start time) of the processes whose parent is `pid`."""
    out = set()
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add((int(stat_file.parent.name), fields[19]))
    return out


def alive(proc: tuple[int, str]) -> bool:
    """Whether that process (same pid, same start time) still runs (a zombie has ended)."""
    try:
        fields = Path(f"/proc/{proc[0]}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == proc[1] and fields[0] != "Z"


def wait_for(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def sleeping(pid: int) -> bool:
    """Whether the main thread of `pid` is in a sleep call (as a worker in the slow-bundle hook is)."""
    try:
        return "nanosleep" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def test_a_bundle_whose_worker_dies_is_retried_alone_then_gets_that_error(tmp_path, monkeypatch):
    probe = subprocess.Popen(["sleep", "30"])
    try:
        if not wait_for(lambda: sleeping(probe.pid), 5):
            pytest.skip("/proc/PID/wchan does not show where a process sleeps here")
    finally:
        probe.kill()
        probe.wait()
    archive = tmp_path / "archive"
    for name in ("a-fast", "b-dies", "c-fast"):
        tiny(archive, name)
    monkeypatch.setenv(SLOW_ENV, "b-dies=600")  # its worker sleeps there, and is killed by this test
    done = {}
    scanning = threading.Thread(target=lambda: done.update(result=scan_archive(archive, tmp_path / "out", jobs=1)))
    scanning.start()
    killed: set[int] = set()
    try:
        end = time.monotonic() + 120
        while len(killed) < 2 and time.monotonic() < end:
            for pid, _ in children(os.getpid()):
                if pid not in killed and sleeping(pid):  # the worker on b-dies (once, then alone)
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            time.sleep(0.1)
    finally:
        scanning.join(120)
    rows = {r["path"]: r for r in done["result"].rows}
    assert len(killed) == 2
    assert rows["b-dies"]["error"].startswith("its worker process died on it twice, the second time alone "
                                              "(killed by SIGKILL")
    assert rows["a-fast"]["error"] is None and rows["c-fast"]["error"] is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killing_a_scan_leaves_no_worker_behind(tmp_path, sig):
    archive, out = tmp_path / "archive", tmp_path / "out"
    tiny(archive, "a-fast")
    tiny(archive, "b-hangs")
    scan = subprocess.Popen([sys.executable, "-m", "k3logs", "scan", archive, "-o", out, "--jobs", "2"],
                            env=os.environ | {SLOW_ENV: "b-hangs=600"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for((out / "reports" / "a-fast.json").exists, 120), "a-fast was never analysed"
        workers = children(scan.pid)  # and multiprocessing's resource tracker
        assert len(workers) >= 2
        scan.send_signal(sig)
        status = scan.wait(60)
    finally:
        scan.kill()
    assert wait_for(lambda: not any(alive(w) for w in workers), 10), "a worker outlived the scan"
    if sig == signal.SIGTERM:
        assert status == 143
        assert scan.stderr.read().strip().splitlines()[-1] == (
            "k3logs: error: terminated; the rows finished so far are kept")
        assert set(rows_by_path(out)) == {"a-fast"}
    else:
        assert status == -signal.SIGKILL


VLLM_LOG = ("INFO 11-18 07:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
            "INFO 11-18 07:00:01 [api_server.py:1] non-default args: {'model': 'm'}\n"
            "ERROR 11-18 07:01:00 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")


def test_scan_warns_when_the_archive_is_one_bundle_with_logs_of_its_own(tmp_path):
    root = make_bundle(tmp_path / "incident", {"vllm.log": VLLM_LOG, "node-a/vllm.log": VLLM_LOG,
                                               "node-b/dmesg.txt": "[  1.0] Linux version 6.8.0\n"})
    r = invoke("scan", root, "-o", tmp_path / "out")
    assert "k3logs: warning:" in r.stderr and "looks like one bundle" in r.stderr and "vllm.log" in r.stderr


def test_near_miss_an_archive_of_bundles_with_an_index_beside_them_gets_no_warning(tmp_path):
    root = make_bundle(tmp_path / "archive", {"incident-0412/vllm.log": VLLM_LOG,
                                              "incident-0413/vllm.log": VLLM_LOG,
                                              "index.csv": "bundle,ticket\nincident-0412,OPS-1\n"})
    r = invoke("scan", root, "-o", tmp_path / "out")
    assert "warning" not in r.stderr and "1 other file(s) under ARCHIVE ignored" in r.stderr
