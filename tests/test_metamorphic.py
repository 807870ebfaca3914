"""Metamorphic tests (issue #21): transformations of the corpus cases that must leave the diagnosis as it was
(tests/metamorphic). First the transforms themselves (a renamed bundle holds no old name, a shifted clock moves
every time format, a rewrap keeps line numbers, ...), then a deterministic sample of variants (one or two per
case) scored like `k3logs eval` against the case's truth carried over by the transform. Known failures of k3logs
are bed.KNOWN, applied as strict xfail. The full sweep: `python benchmarks/metamorphic.py --all`."""
from __future__ import annotations

import io
import json
import re
import tarfile
import zipfile
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import zstandard

from metamorphic import bed, timefmt
from metamorphic import lines as L
from metamorphic.transforms import COMPRESSED, TRANSFORMS, Mapping, NotApplicable, apply, files_of, read_text

C101, C104, C201, C204, C207, C208 = (next(c for c in bed.cases() if c.startswith(p))
                                      for p in ("c101", "c104", "c201", "c204", "c207", "c208"))
C209, C215, C216 = (next(c for c in bed.cases() if c.startswith(p)) for p in ("c209", "c215", "c216"))


def variant(case: str, name: str, tmp: Path, seed: int = 7) -> Mapping:
    return apply(bed.case_profile(case), name, seed, tmp / "v")


def texts(root: Path) -> dict[str, str]:
    return {f: t.text for f in files_of(root) if (t := read_text(root / f)) is not None}


# ------------------------------------------------------------------------------------------------------
# the time shapes
# ------------------------------------------------------------------------------------------------------
EVERY_SHAPE = "\n".join([
    "INFO 08-11 07:35:59 [api_server.py:1] vLLM API server version 0.11.0",
    '{"log":"x\\n","stream":"stdout","time":"2026-08-11T07:35:59.5013324Z"}',
    "2026-08-11T07:35:59.123456789Z stdout F x",
    "[Mon Aug 11 07:35:59 2026] mlx5_core 0000:9a:00.0 mlx5_3: Port: 1 Link DOWN",
    "2026-08-11T07:35:59,412207+00:00 NVRM: GPU at PCI:0000:18:00",
    "Aug 11 07:35:59 gpu-node-07 kernel: x",
    "2026-08-11T07:35:59+0000 gpu-node-07 vllm[4410]: x",
    "W0811 07:35:50.060000 4321 torch/distributed/run.py:792] x",
    "[rank3]:[E811 07:52:03.412207911 ProcessGroupNCCL.cpp:616] x",
    "Job 48213 started on cn-gpu-031 at Wed Apr 15 09:14:02 UTC 2026",
    "[Sep 12 2024 03:41:17] [ERROR] [tid 2271] detected NVSwitch fatal error",
    "Start Time:   Thu, 17 Oct 2024 10:00:00 +0000",
    "  time       : 2026-08-11_07:52:04",
    "2026/07/09 10:00:00.394, 00000000:5D:00.0, 2871204, /usr/bin/python3, 3211 MiB",
    "2026-08-11 07:35:41,418\tINFO worker.py:1841 -- x",
    "[2026-11-12 14:02:05] gpu-k3-n02:131:202 [0] NCCL WARN x",
    "*** SIGSEGV received at time=1766143587 on cpu 71 ***",
    "btime 1793135692",
    "#1796827330",
    "   9 | 08/11/2026 | 07:35:59 | Power Supply PS1 Status | Power Supply AC lost | Asserted",
    'vllm:num_requests_running{engine="0"} 20.0 1795701600000',
    " 10:21:33 up 22 days,  1 user",
    "metrics/scrape-20260903T134110Z.prom",
    "[ 2207.551903] NVRM: Xid (PCI:0000:18:00): 79",
])


def test_every_time_shape_moves_by_the_offset_and_nothing_else_changes():
    delta = 40 * 86400 + 5 * 3600 + 7
    moved = timefmt.shift(EVERY_SHAPE, delta, 2026)
    before, after = timefmt.times(EVERY_SHAPE, 2026), timefmt.times(moved, 2026)
    assert [s for s, _, _ in before] == [s for s, _, _ in after]
    assert {s for s, _, _ in before} >= set(timefmt.CLOCK_SHAPES) | {"epoch", "prom", "upclock"}
    for (shape, _, t0), (_, _, t1) in zip(before, after):
        if t0 is not None:
            assert t1 - t0 == timedelta(seconds=delta), shape
    assert "time=1769617594 " in moved and " 1799175607000" in moved and " 15:21:40 up " in moved
    assert "btime 1796609699" in moved                    # /proc/stat's boot time, seconds since the epoch
    assert "\n#1800301337\n" in moved                    # bash's history stamp of the command below it
    assert "[Sun Sep 20 12:36:06 2026]" in moved          # the weekday follows the date
    assert "[ 2207.551903]" in moved                      # seconds since boot do not move
    assert "2026-09-20T12:36:06.123456789Z stdout F" in moved   # fraction and zone kept
    strip = lambda s: re.sub(r"\d", "0", re.sub(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|[A-Z][a-z]{2})\b", "M", s))  # noqa
    assert strip(moved) == strip(EVERY_SHAPE)             # same shapes, only digits and names changed


def test_a_year_less_time_moves_across_new_year_and_padding_is_kept():
    assert timefmt.shift("INFO 12-31 23:59:50 [x.py:1] y", 20, 2025) == "INFO 01-01 00:00:10 [x.py:1] y"
    assert timefmt.shift("Aug  1 07:35:59 h kernel: x", 86400, 2026) == "Aug  2 07:35:59 h kernel: x"
    assert timefmt.shift("[Fri Aug  7 07:35:59 2026] x", 86400, 2026) == "[Sat Aug  8 07:35:59 2026] x"


# ------------------------------------------------------------------------------------------------------
# the transforms
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [C101, C201, C208])
def test_renamed_hosts_pods_ips_and_container_ids_are_gone_and_tables_keep_their_columns(case, tmp_path):
    prof = bed.case_profile(case)
    m = variant(case, "rename-hosts", tmp_path)
    got = texts(m.path)
    assert set(m.hosts) == set(prof.hosts) and prof.hosts
    names = prof.hosts + prof.pods + prof.ips + prof.cids
    old = re.compile("|".join(rf"(?<![A-Za-z0-9.]){re.escape(n)}(?![A-Za-z0-9])" for n in names))
    for f, text in got.items():
        assert not old.search(text), f"{f}: {old.search(text).group(0)} left"
        assert not old.search(f), f
    want = texts(prof.bundle)
    for f, new in m.files.items():   # every replacement has the old name's length: columns stay aligned
        lengths = [(len(a), len(b)) for a, b in zip(got[new].split("\n"), want[f].split("\n"))
                   if not COMPRESSED.search(b)]   # (a compressed node list is written out with the new names)
        assert all(a == b for a, b in lengths), f
    truth = m.truth(prof.truth)
    assert truth["origin"]["node"] == m.hosts[prof.truth["origin"]["node"]]
    assert (m.path / truth["first_causal"]["file"]).is_file()


def test_renumbered_pids_move_together_in_every_context(tmp_path):
    prof = bed.case_profile(C201)
    m = variant(C201, "renumber-pids", tmp_path)
    off = int(m.note.split("+")[1])
    got, want = texts(m.path), texts(prof.bundle)
    pids = lambda t: [int(x) for x in re.findall(r"\bpid=(\d+)", t)]  # noqa: E731
    for f, new in m.files.items():
        assert pids(got[new]) == [p + off if p else 0 for p in pids(want[f])]
    for new in m.files.values():   # NCCL_DEBUG_FILE=nccl.%h.%p.log: the name's pid is its lines' pid
        if (name := re.match(r".*nccl\.[\w-]+\.(\d+)\.log$", new)):
            assert set(re.findall(r"^[\w-]+:(\d+):\d+ ", got[new], re.M)) == {name.group(1)}


def test_renamed_files_keep_their_bytes_and_the_witnesses_in_their_names(tmp_path):
    prof = bed.case_profile(C201)
    m = variant(C201, "rename-files", tmp_path)
    assert all(Path(f).name != Path(new).name and Path(f).parent == Path(new).parent for f, new in m.files.items())
    assert Counter((prof.bundle / f).read_bytes() for f in m.files) == \
        Counter((m.path / new).read_bytes() for new in m.files.values())
    for f, new in m.files.items():   # NCCL_DEBUG_FILE names carry the host: kept
        host = re.match(r"nccl\.([\w-]+)\.\d+\.log$", Path(f).name)
        assert not host or host.group(1) in Path(new).name


@pytest.mark.parametrize("case", [C104, C208, C209, C215])
def test_a_shifted_clock_moves_every_time_in_the_bundle_by_one_offset(case, tmp_path):
    prof = bed.case_profile(case)
    m = variant(case, "shift-clock", tmp_path)
    got, want = texts(m.path), texts(prof.bundle)
    pairs = []
    for f, text in want.items():
        text = "\n".join(ln for ln in text.split("\n") if not timefmt.BUILD.search(ln))   # (build dates stay)
        moved = "\n".join(ln for ln in got[m.file(f)].split("\n") if not timefmt.BUILD.search(ln))
        before, after = timefmt.times(text, prof.year), timefmt.times(moved, prof.year)
        assert [s for s, _, _ in before] == [s for s, _, _ in after], f
        pairs += [(shape, t0, t1) for (shape, _, t0), (_, _, t1) in zip(before, after) if t0 is not None]
    deltas = Counter(t1 - t0 for shape, t0, t1 in pairs if shape not in timefmt.YEARLESS)
    assert len(deltas) == 1 and abs(next(iter(deltas)).days) >= 3, deltas
    delta = next(iter(deltas))
    for shape, t0, t1 in pairs:   # a year-less time names the same day and time, in whichever year
        assert (t0 + delta).strftime("%m%d%H%M%S") == t1.strftime("%m%d%H%M%S"), (shape, t0, t1)
    uptimes = lambda ts: sorted(re.findall(r"^\[\s*\d+\.\d+\]", "\n".join(ts.values()), re.M))  # noqa: E731
    assert uptimes(got) == uptimes(want)   # seconds since boot stay


def test_a_skewed_node_moves_alone_and_the_readings_show_it(tmp_path):
    prof = bed.case_profile(C208)
    m = variant(C208, "skew-beyond", tmp_path, seed=3)
    node = m.note.split("'")[0]
    folder = next(d for d, n in prof.node_dirs.items() if n == node)
    got, want = texts(m.path), texts(prof.bundle)
    for f in want:
        assert (got[f] != want[f]) == (f.startswith(folder + "/") and bool(timefmt.times(want[f], prof.year))), f
    readings = next(t for f, t in got.items() if f not in want)
    hosts = {ln.split(":")[0]: datetime.fromisoformat(ln.split(": ")[1][:26]) for ln in readings.splitlines()[1:]}
    other = next(h for h in hosts if h != node)
    skew = int(re.search(r"clock ([+-]\d+) s", m.note).group(1))
    assert abs((hosts[node] - hosts[other]).total_seconds() - skew) < 1


def test_a_skew_moves_a_nodes_existing_date_reading_too(tmp_path):
    prof = bed.case_profile(C207)
    m = variant(C207, "skew-within", tmp_path)
    node = m.note.split("'")[0]
    got = texts(m.path)["clock-check.txt"]
    want = texts(prof.bundle)["clock-check.txt"]
    changed = [a for a, b in zip(got.splitlines(), want.splitlines()) if a != b]
    assert changed and all(ln.startswith(node + ":") for ln in changed)


@pytest.mark.parametrize("name", [n for n in TRANSFORMS if n.startswith("wrap-")])
def test_a_rewrap_keeps_every_line_where_it_was(name, tmp_path):
    prof = bed.case_profile(C208)
    m = variant(C208, name, tmp_path)
    got, want = texts(m.path), texts(prof.bundle)
    wrapped = [f for f in want if got[f] != want[f]]
    assert wrapped == ["node-a/torchrun-job-4471.log", "node-b/torchrun-job-4471.log"]
    for f in wrapped:
        old, new = want[f].split("\n"), got[f].split("\n")
        assert len(old) == len(new)
        times = []
        for a, b in zip(old, new):
            if not b:
                continue
            if name == "wrap-journald-json":
                rec = json.loads(b)
                msg = rec["MESSAGE"] if isinstance(rec["MESSAGE"], str) else bytes(rec["MESSAGE"]).decode()
                assert msg == a and rec["_HOSTNAME"] == prof.file_node[f]
                times.append(int(rec["__REALTIME_TIMESTAMP"]))
                continue
            p = L.take_apart(b)
            assert p.inner == a and p.wrapper, b
            times.append(b.split(" ")[0] if name != "wrap-docker" else json.loads(b)["time"])
            if name == "wrap-journald":
                assert f" {prof.file_node[f]} vllm[" in b
        assert times == sorted(times)


@pytest.mark.parametrize("name", ["pack-tgz", "pack-zip", "pack-zst", "pack-nested", "pack-top"])
def test_a_packed_bundle_holds_every_file_under_the_name_the_mapping_gives(name, tmp_path):
    prof = bed.case_profile(C208)
    m = variant(C208, name, tmp_path, seed=2)
    if name == "pack-top":   # a folder: names relative to it, the top folder kept
        shown = {f: (m.path / f).read_bytes() for f in files_of(m.path)}
    else:
        shown = _shown(_members(m.path.name, m.path.read_bytes()))
    for f in prof.files:
        assert shown[m.file(f)] == (prof.bundle / f).read_bytes(), f


def _members(name: str, data: bytes) -> dict[str, bytes]:
    if name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return {n: z.read(n) for n in z.namelist()}
    if name.endswith(".zst"):
        data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        return {i.name: t.extractfile(i).read() for i in t.getmembers() if i.isfile()}


def _shown(members: dict[str, bytes]) -> dict[str, bytes]:
    """Names as report-contract.md shows them: a single shared top folder dropped; a nested archive's members
    under the archive's own name."""
    tops = {n.split("/")[0] for n in members}
    if len(tops) == 1 and all("/" in n for n in members):
        members = {n.split("/", 1)[1]: d for n, d in members.items()}
    out = {}
    for n, d in members.items():
        if re.search(r"\.(zip|tar\.gz|tar\.zst)$", n):
            out |= {f"{n}/{k}": v for k, v in _members(n, d).items()}
        else:
            out[n] = d
    return out


@pytest.mark.parametrize("case, group", [(C208, "retries"), (C204, "requests"), (C216, "warnings"),
                                         (C204, "kernel")])
def test_noise_is_inserted_in_the_format_of_its_neighbours_and_the_old_lines_map(case, group, tmp_path):
    prof = bed.case_profile(case)
    m = variant(case, f"noise-{group}", tmp_path, seed=5)
    got, want = texts(m.path), texts(prof.bundle)
    assert m.inserted
    for f, where in m.inserted.items():
        old, new = want[f].split("\n"), got[f].split("\n")
        assert len(new) == len(old) + len(where)
        for n in range(1, len(old) + 1):
            assert new[m.line(f, n) - 1] == old[n - 1]
        allowed = L.wrappers_of(old)
        for after in set(where):
            near = L.take_apart(old[after - 1], allowed)
            for k in range(where.count(after)):
                p = L.take_apart(new[m.line(f, after) + k], allowed)
                assert p.wrapper == near.wrapper and p.prefix == near.prefix, new[m.line(f, after) + k]
                assert not re.search(r"@\{", new[m.line(f, after) + k])


def test_a_graceful_stop_ends_the_api_servers_log_in_its_format(tmp_path):
    m = variant(C216, "graceful-stop", tmp_path)
    assert m.expect == {"outcome": "stopped"}
    f = next(f for f in texts(m.path) if f.endswith("vllm/0.log"))
    tail = texts(m.path)[f].rstrip("\n").split("\n")[-5:]
    assert [L.take_apart(ln).message for ln in tail] == [
        "Shutting down FastAPI HTTP server.", "Shutting down", "Waiting for application shutdown.",
        "Application shutdown complete.", "Finished server process [1]"]
    assert all(L.take_apart(ln).wrapper == "cri" for ln in tail)
    assert any(f.startswith("operator-note") for f in texts(m.path))
    with pytest.raises(NotApplicable):
        variant(C208, "graceful-stop", tmp_path)   # an incident is not stopped by its operator


def test_a_dropped_node_folder_is_gone_and_named_in_the_expected_truth(tmp_path):
    prof = bed.case_profile(C208)
    m = variant(C208, "drop-node", tmp_path)
    gone = [d for d in prof.node_dirs if not (m.path / d).exists()]
    assert len(gone) == 1 and m.expect["missing_nodes"] == [prof.node_dirs[gone[0]]]
    with pytest.raises(NotApplicable):
        variant(C215, "drop-node", tmp_path)


def test_the_mapping_carries_files_lines_and_nodes_over():
    m = Mapping(Path("x"), files={"a.log": "d/a.log"}, inserted={"a.log": [3, 3, 10]}, hosts={"n1": "q7-01"})
    truth = {"first_causal": {"file": "a.log", "line": 12, "line_alt": [4, {"file": "b.log", "line": 2}]},
             "origin": {"node": "n1", "rank": 3}, "attribution": [{}]}
    t = m.truth(truth)
    assert t["first_causal"] == {"file": "d/a.log", "line": 15,
                                 "line_alt": [{"file": "d/a.log", "line": 6}, {"file": "b.log", "line": 2}]}
    assert t["origin"] == {"node": "q7-01", "rank": 3} and "attribution" not in t
    assert [m.line("a.log", n) for n in (1, 3, 4, 10, 11)] == [1, 3, 6, 12, 14]


# ------------------------------------------------------------------------------------------------------
# the sample: a transform for each of SAMPLE_SIZE cases (bed.py), scored against the case's truth
# ------------------------------------------------------------------------------------------------------
def test_the_sample_gives_its_cases_a_transform_and_every_transform_a_case():
    s = bed.sample()
    assert len(bed.sampled()) <= bed.SAMPLE_SIZE   # (the suite's time)
    right = [c for c in bed.sampled() if bed.base_right(c)]
    assert all(len(v) == 1 for v in s.values()) and len(s) >= len(right) - 1
    uses = Counter(n for v in s.values() for n in v)
    assert set(uses) == set(TRANSFORMS) and min(uses.values()) >= 1, uses  # (the full sweep: benchmarks/)


@pytest.mark.parametrize("case, slot", [(c, k) for c in bed.cases() for k in range(bed.slots(c))])
def test_a_variant_is_diagnosed_like_its_case(case, slot, tmp_path):
    if not bed.base_right(case):
        pytest.skip("the case itself is diagnosed wrong (tests/test_corpora.py says how): nothing to compare with")
    picks = bed.sample().get(case, ())
    if slot >= len(picks):
        pytest.skip("no further transform applies to this case")
    name = picks[slot]
    seed = bed.seed_of(case, name)
    o = bed.check(case, name, seed, tmp_path / "v")
    if not o.applies:
        pytest.skip(f"{name}: {o.reason}")
    reason = bed.known(case, name)
    if reason:   # a strict xfail: a fix must take its entry out of bed.KNOWN
        assert not o.passed, f"{case} / {name} / seed {seed} passes now: take it out of bed.KNOWN ({reason})"
        pytest.xfail(f"{name}: {reason}")
    assert o.passed, o.message()
