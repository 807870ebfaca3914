"""stream_events: every line of a bundle as event-table batches with the same node, rank and time the
analysis gives those lines, in bounded memory (a large file comes in several batches)."""
from __future__ import annotations

import json

import polars as pl
import pytest

from conftest import analyze_files, make_bundle, text_of
from k3logs.pipeline import stream_events
from k3logs.schema import EVENT_SCHEMA
from k3logs.settings import KiB, Settings


def node_log(node: int, shift: int, extra: int = 0) -> str:
    """Two workers of one node, their rank assignment, NCCL lines, plain lines and a CUDA error; the node's
    clock is `shift` seconds ahead."""
    s = lambda sec: f"10:{(sec + shift) // 60:02d}:{(sec + shift) % 60:02d}"  # noqa: E731
    host = f"gpu-{'ab'[node]}"
    out = []
    for i in range(2):
        r, pid = node * 2 + i, 100 * (node + 1) + i
        out.append(f"(Worker_TP{i} pid={pid}) INFO 08-11 {s(10)} [parallel_state.py:1] rank {r} in world size 4 is "
                   f"assigned as DP rank 0, PP rank {node}, TP rank {i}, EP rank {i}")
        out.append(f"{host}:{pid}:{pid} [{i}] NCCL INFO ncclCommInitRank comm 0x55a8{pid} rank {r} nranks 4 cudaDev "
                   f"{i} nvmlDev {i} busId {18 + i}000 commId 0x1 - Init START")
    out.append("a plain line without a time")
    for k in range(extra):
        out.append(f"(Worker_TP0 pid={100 * (node + 1)}) INFO 08-11 {s(20 + k % 30)} [x.py:1] step {k} " + "x" * 80)
    out.append(f"(Worker_TP1 pid={100 * (node + 1) + 1}) ERROR 08-11 {s(59)} [core.py:708] RuntimeError: CUDA error: "
               f"an illegal memory access was encountered")
    return text_of(*out)


DMESG_TEXT = text_of("[    0.000000] Linux version 6.8.0", "[ 3600.250000] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', "
                     "name=<unknown>, GPU has fallen off the bus.")
TWO_NODES = {"node-a/vllm.log": node_log(0, 0), "node-b/vllm.log": node_log(1, 5)}
KEY = ["file", "line"]


def collect(path, settings=None) -> list[pl.DataFrame]:
    return list(stream_events(path, settings))


def test_stream_events_attribution_equals_the_analysis(tmp_path):
    a = analyze_files(tmp_path, TWO_NODES)
    assert a.clock.nodes["gpu-b"].applied           # the offset is part of what must agree
    got = pl.concat(collect(tmp_path / "bundle"))
    mine = a.events.select(*KEY, "node", "rank", "ts")
    joined = mine.join(got.select(*KEY, "node", "rank", "ts"), on=KEY, how="left", suffix="_stream")
    assert joined.height == a.events.height and joined.height >= 10
    for col in ("node", "rank", "ts"):
        diff = joined.filter(pl.col(col).ne_missing(pl.col(f"{col}_stream")))
        assert diff.is_empty(), f"{col} differs:\n{diff}"
    err = got.filter((pl.col("file") == "node-b/vllm.log") & pl.col("message").str.contains("illegal memory"))
    assert err.select("node", "rank").row(0) == ("gpu-b", 3)


def test_an_analysis_made_already_serves_as_the_first_pass(tmp_path):
    a = analyze_files(tmp_path, TWO_NODES)
    again = pl.concat(collect(tmp_path / "bundle"))
    reused = pl.concat(list(stream_events(tmp_path / "bundle", first=a)))
    assert reused.equals(again) and reused.height > a.events.height
    assert a.events.height > 0   # (the analysis keeps its own lines)


def test_every_line_comes_once_file_after_file(tmp_path):
    root = make_bundle(tmp_path, TWO_NODES)
    got = pl.concat(collect(root))
    for file, text in TWO_NODES.items():
        lines = got.filter(pl.col("file") == file)["line"].to_list()
        assert lines == list(range(1, text.count("\n") + 1)), file
    files = got["file"].to_list()
    assert files == sorted(files, key=lambda f: list(TWO_NODES).index(f))   # no interleaving of files


def test_the_table_does_not_depend_on_threads_or_batch_size(tmp_path):
    from polars.testing import assert_frame_equal
    files = {"node-a/vllm.log": node_log(0, 0, extra=800) + text_of(*CHAIN),
             "node-b/vllm.log": node_log(1, 5, extra=800), "node-b/dmesg.txt": DMESG_TEXT}
    root = make_bundle(tmp_path, files)
    one = pl.concat(collect(root, Settings(jobs=1)))
    for settings in (Settings(jobs=2), Settings(jobs=2, batch_bytes=16 * KiB)):
        assert_frame_equal(pl.concat(collect(root, settings)), one)


def test_the_analysis_does_not_depend_on_threads_or_batch_size(tmp_path):
    # analyze's pass splits and searches the chunks of a file ahead on a pool, then keeps their rows (and a
    # traceback's window across chunks) in order: whatever the threads and the chunk size, the same events
    from polars.testing import assert_frame_equal
    from k3logs.pipeline import run
    files = {"node-a/vllm.log": node_log(0, 0, extra=800) + text_of(*CHAIN),
             "node-b/vllm.log": node_log(1, 5, extra=800), "node-b/dmesg.txt": DMESG_TEXT}
    root = make_bundle(tmp_path, files)
    cols = ["file", "line", "line_end", "sub", "text", "node", "rank", "ts", "exc_types"]
    one = run(root, Settings(jobs=1)).events.select(cols)
    assert one.height >= 10 and one["exc_types"].drop_nulls().len() >= 1
    for settings in (Settings(jobs=2), Settings(jobs=2, batch_bytes=4 * KiB)):
        assert_frame_equal(run(root, settings).events.select(cols), one)


def test_batches_have_the_event_schema(tmp_path):
    for batch in collect(make_bundle(tmp_path, TWO_NODES)):
        assert dict(batch.schema) == dict(EVENT_SCHEMA)


def test_a_large_bundle_comes_in_bounded_batches(tmp_path):
    files = {"node-a/vllm.log": node_log(0, 0, extra=1500), "node-b/vllm.log": node_log(1, 5, extra=1500)}
    root = make_bundle(tmp_path, files)
    settings = Settings(batch_bytes=64 * KiB)
    size = sum(len(v) for v in files.values())
    assert size > 6 * 64 * KiB
    batches = collect(root, settings)
    assert len(batches) >= size // (64 * KiB) // 2
    for b in batches:
        assert b["message"].str.len_bytes().sum() <= 64 * KiB + settings.limits.max_line_bytes
    assert sum(b.height for b in batches) == sum(v.count("\n") for v in files.values())


def test_every_file_of_a_node_folder_gets_the_node_in_the_event_table(tmp_path):
    root = make_bundle(tmp_path, {**TWO_NODES, "node-a/app.log": text_of("just some words", "more words"),
                                  "node-b/gpus.csv": "index, name, pci.bus_id\n0, NVIDIA H100 80GB HBM3, "
                                                     "00000000:18:00.0\n"})
    got = pl.concat(collect(root))
    assert set(got.filter(pl.col("file") == "node-a/app.log")["node"]) == {"gpu-a"}
    assert set(got.filter(pl.col("file") == "node-b/gpus.csv")["node"]) == {"gpu-b"}


CHAIN = ["INFO 03-17 06:42:01 [x.py:1] loading",
         "Traceback (most recent call last):", '  File "/srv/a.py", line 1, in <module>', "    import bitsandbytes",
         "ModuleNotFoundError: No module named 'bitsandbytes'", "",
         "During handling of the above exception, another exception occurred:", "",
         "Traceback (most recent call last):", '  File "/srv/b.py", line 9, in load', "    need()",
         "ImportError: Please install bitsandbytes"]


def file_rows(text: str, batch_bytes: int, pool=None) -> pl.DataFrame:
    import io
    from k3logs.catalogue.formats import builtin_formats
    from k3logs.ingest.stream import iter_files_rows
    from k3logs.ingest.lines import LineStats
    from k3logs.ingest.parse import FileContext
    parts = iter_files_rows([("f", io.BytesIO(text.encode()), FileContext("f.log", "vllm"), LineStats())],
                            Settings(batch_bytes=batch_bytes), None, builtin_formats(), pool)
    return pl.concat([rows for _, rows in parts], how="diagonal_relaxed")


def test_parsing_ahead_on_a_pool_gives_the_rows_of_parsing_in_turn():
    from concurrent.futures import ThreadPoolExecutor
    from polars.testing import assert_frame_equal
    text = text_of(*(CHAIN * 40), *(f"INFO 03-17 06:43:{i % 60:02d} [y.py:{i}] line {i}" for i in range(3000)))
    with ThreadPoolExecutor(2) as pool:
        ahead = file_rows(text, 4 * KiB, pool)
    in_turn = file_rows(text, 4 * KiB)
    assert_frame_equal(ahead, in_turn)
    assert in_turn.filter(pl.col("exc_types").list.len() == 2).height >= 30   # chains folded across batches


def test_files_parsed_in_one_stream_give_each_file_its_own_rows_and_the_next_one_is_taken_early():
    """Several files through one parsing pool: each file's rows are what it gives alone (line numbers,
    folded chains, line counts), and the next file is opened while the last rows of the one before are
    still to come, so that the pool does not wait at every file's end."""
    import io
    from concurrent.futures import ThreadPoolExecutor
    from polars.testing import assert_frame_equal
    from k3logs.catalogue.formats import builtin_formats
    from k3logs.ingest.stream import iter_files_rows
    from k3logs.ingest.lines import LineStats
    from k3logs.ingest.parse import FileContext
    texts = {"a": text_of(*(f"INFO 03-17 06:43:{i % 60:02d} [y.py:{i}] line {i}" for i in range(900)), *CHAIN),
             "b": text_of(*CHAIN, *(f"INFO 03-17 06:44:{i % 60:02d} [z.py:{i}] row {i}" for i in range(700))),
             "c": text_of("INFO 03-17 06:45:00 [z.py:1] one line")}
    events: list[str] = []
    stats = {k: LineStats() for k in texts}

    def files():
        for key, text in texts.items():
            events.append(f"open {key}")
            yield key, io.BytesIO(text.encode()), FileContext(f"{key}.log", "vllm"), stats[key]

    got: dict[str, list[pl.DataFrame]] = {k: [] for k in texts}
    with ThreadPoolExecutor(2) as pool:
        for key, rows in iter_files_rows(files(), Settings(batch_bytes=4 * KiB), None, builtin_formats(), pool, 1):
            events.append(f"rows {key}")
            got[key].append(rows)
    for key, text in texts.items():
        assert_frame_equal(pl.concat(got[key], how="diagonal_relaxed"), file_rows(text, 4 * KiB))
        assert stats[key].lines == text.count("\n")
    last_a = max(i for i, e in enumerate(events) if e == "rows a")
    assert events.index("open b") < last_a


def test_a_chain_at_the_end_of_a_file_read_in_small_batches_is_one_event():
    rows = file_rows(text_of(*(f"INFO 03-17 06:41:{i % 60:02d} [y.py:1] line {i}" for i in range(200)), *CHAIN), 1 * KiB)
    [tb] = rows.filter(pl.col("exc_types").is_not_null()).to_dicts()
    assert tb["exc_types"] == ["ModuleNotFoundError", "ImportError"]


def test_a_consumer_that_stops_early_leaves_no_thread_behind(tmp_path):
    import threading
    files = {"node-a/vllm.log": node_log(0, 0, extra=1500), "node-b/vllm.log": node_log(1, 5, extra=1500)}
    batches = stream_events(make_bundle(tmp_path, files), Settings(batch_bytes=16 * KiB))
    assert next(batches).height
    batches.close()  # (the producer may be waiting to hand on its next batch)
    assert not [t for t in threading.enumerate() if t.name == "k3logs-events"]


def test_the_lines_kept_before_an_untimed_hit_do_not_depend_on_where_a_batch_starts(tmp_path):
    # a kernel line with no time of day keeps the two lines before it (the record it continues, and a
    # time for it): also when it is the first or second line of a batch, from the batch before
    lines = []
    for i in range(300):
        lines.append(f"[{100 + i:6d}.000000] cni0: port {i % 40}(veth{i:07x}) entered blocking state")
        if i % 7 == 3:
            lines.append(f"[{100 + i:6d}.500000] mce: [Hardware Error]: Machine check events logged")
    root = make_bundle(tmp_path, {"node-a/dmesg.txt": text_of(*lines)})
    whole = kept_lines(root, 1 << 20)
    assert len(whole) == 3 * sum(1 for i in range(300) if i % 7 == 3)
    for batch_bytes in range(1500, 2600, 37):
        assert kept_lines(root, batch_bytes) == whole, batch_bytes


def kept_lines(root, batch_bytes: int) -> list[int]:
    """The lines analyze keeps of the bundle at `root`, read in batches of `batch_bytes`."""
    from k3logs.catalogue.load import load_catalogue
    from k3logs.diagnose.detect import anchors
    from k3logs.ingest.discover import Bundle
    from k3logs.ingest.keep import Keep
    from k3logs.ingest.stream import ingest
    ing = ingest(Bundle(root), Settings(batch_bytes=batch_bytes), Keep(anchors(load_catalogue())))
    return pl.concat(ing.events)["line"].to_list()


def test_logged_prompts_are_not_kept_for_the_analysis_whatever_they_quote(tmp_path):
    """Memory must not grow with the requests: a request logger's line (a user_data signature's) is not kept,
    even when its prompt quotes an error; near miss: the server's own line with the same words is kept."""
    from k3logs.pipeline import learn
    prompt = ("(APIServer pid=1) INFO 08-11 10:00:{s:02d} [logger.py:43] Received request cmpl-{s}: prompt: "
              "'why RuntimeError: CUDA error: an illegal memory access was encountered', params: SamplingParams()")
    own = "(Worker pid=7) ERROR 08-11 10:01:00 [core.py:1] RuntimeError: CUDA error: an illegal memory access was encountered"
    root = make_bundle(tmp_path, {"vllm.log": text_of(*[prompt.format(s=s) for s in range(40)], own)})
    from k3logs.catalogue.load import load_catalogue
    kept = learn(root, Settings(), load_catalogue()).events
    assert kept["line"].to_list() == [41], kept.select("line", "text").rows()


@pytest.fixture
def sniffed(monkeypatch) -> list[bytes]:
    """The head of every file sniffed, in turn."""
    import k3logs.ingest.stream as ingest
    heads: list[bytes] = []
    real = ingest.sniff
    monkeypatch.setattr(ingest, "sniff", lambda head, *a: heads.append(head[:20]) or real(head, *a))
    return heads


def test_each_file_is_sniffed_once(tmp_path, sniffed):
    """The second pass takes what each file is from the first (sniffing a file costs milliseconds)."""
    root = make_bundle(tmp_path, {**TWO_NODES, "node-a/dmesg.txt": DMESG_TEXT})
    got = pl.concat(collect(root))
    assert len(sniffed) == 3
    assert set(got.filter(pl.col("file") == "node-a/dmesg.txt")["source"]) == {"kernel"}


def test_a_path_an_archive_holds_twice_is_sniffed_each_time(tmp_path, sniffed):
    """Two members of one name (a tar may hold them) may be different kinds of file: neither takes the
    other's."""
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for text in (DMESG_TEXT, node_log(0, 0)):
            data = text.encode()
            info = tarfile.TarInfo("logs/out.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (tmp_path / "b.tar").write_bytes(buf.getvalue())
    got = pl.concat(collect(tmp_path / "b.tar"))
    assert len(sniffed) == 4
    assert set(got.filter(pl.col("message").str.contains("Xid"))["source"]) == {"kernel"}
    assert got.filter(pl.col("message").str.contains("illegal memory")).height == 1
    assert "vllm" in set(got["source"])


# ------------------------------------------------------------------------------------------------------
# what events did not read (issue 22)
# ------------------------------------------------------------------------------------------------------
def test_a_line_cut_by_a_truncated_archive_is_marked_truncated_and_the_cut_is_said(tmp_path):
    from conftest import tar_bytes, write
    from k3logs.report.export import skipped_summary
    steps = "".join(f"(Worker_TP0 pid=100) INFO 08-11 10:00:{i % 60:02d} [x.py:1] step {i} {i * 7919 % 10007:05d}"
                    f"{'y' * 60}\n" for i in range(20_000))
    data = tar_bytes({"case/vllm.log": node_log(0, 0), "case/steps.log": steps, "case/after.log": "after\n"})
    cut_at = data.index(b"step 12345 ") + 20  # inside a line of steps.log
    path = write(tmp_path, "case.tar", data[:cut_at])
    skipped: list = []
    got = pl.concat(list(stream_events(path, skipped=skipped)))
    rows = got.filter(pl.col("file") == "steps.log").sort("line")
    assert rows.height == 12_346 and rows["message"][-1].startswith("step 12345 ")
    assert not rows["message"][-1].endswith("y" * 60)  # (cut short)
    assert rows["truncated"].to_list() == [False] * 12_345 + [True]  # the last line only: the archive ends in it
    assert not got.filter(pl.col("file") == "vllm.log")["truncated"].any()
    said = skipped_summary(skipped)
    assert "steps.log: read only the first" in said and "ends inside this member" in said, said


def test_a_file_whose_last_line_has_no_newline_is_not_marked_truncated(tmp_path):
    got = pl.concat(collect(make_bundle(tmp_path, {"vllm.log": node_log(0, 0).rstrip("\n")})))
    assert not got["truncated"].any()


# ------------------------------------------------------------------------------------------------------
# small files analysed together (ingest.Pack): the same rows as one by one
# ------------------------------------------------------------------------------------------------------
W = "(Worker_TP1 pid=301) "
CRI = "2026-08-11T07:36:10.{:06d}Z stdout {} "
TINY_FILES = {  # each pair: where a file's rows could meet the next file's if a pack mixed them up
    "a/1-traceback-at-the-end.log": text_of(W + "INFO 08-11 07:36:03 [gpu_model_runner.py:2] Starting to load model m",
                                            W + "ERROR 08-11 07:36:10 [core.py:1] Traceback (most recent call last):",
                                            W + 'ERROR 08-11 07:36:10 [core.py:1]   File "x.py", line 1, in f'),
    "a/2-starts-with-an-exception.log": text_of(W + "ERROR 08-11 07:36:10 [core.py:1] torch.OutOfMemoryError: CUDA out "
                                                    "of memory. Tried to allocate 2.00 GiB."),
    "b/1-cri-partial.log": text_of(CRI.format(1, "F") + W + "INFO 08-11 07:36:09 [x.py:1] loading",
                                   CRI.format(2, "P") + W + "ERROR 08-11 07:36:10 [core.py:1] RuntimeError: CUDA error: "
                                                            "an illegal memory access was"),
    "b/2-cri-rest.log": text_of(CRI.format(3, "F") + W + "ERROR 08-11 07:36:11 [core.py:2] CUDA error: out of memory"),
    "c/1-dmesg.txt": text_of("[  100.000000] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, "
                             "GPU has fallen off the bus."),
    "c/2-dmesg.txt": text_of("    NVRM: GPU at PCI:0000:18:00: GPU-0f3a", "[  101.000000] NVRM: Xid (PCI:0000:18:00): "
                             "79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."),
    "d/1-continued.log": text_of(W + "ERROR 08-11 07:36:10 [core.py:9] RuntimeError: CUDA error: out of memory\r"),
    "d/2-continued.log": text_of(W + "ERROR 08-11 07:36:10 [core.py:9] and then some more"),
    "e/untimed-first.log": text_of("gpu-a:301:301 [0] NCCL WARN NET/IB : Got completion with error 12, opcode 0",
                                   "gpu-a:301:301 [0] NCCL INFO more"),
    "f/crlf.log": text_of("INFO 08-11 07:36:01 [x.py:1] a\r", "ERROR 08-11 07:36:02 [x.py:1] CUDA out of memory\r"),
    "f/utf16.log": "\ufeffERROR 08-11 07:36:02 [x.py:1] CUDA error: an illegal memory access\n".encode("utf-16-le"),
    "f/latin1.log": b"ERROR 08-11 07:36:03 [x.py:1] caf\xe9 CUDA out of memory\n",
    "f/no-newline.log": "ERROR 08-11 07:36:04 [x.py:1] NCCL error: unhandled system error",
    "f/empty.log": "",
    "g/big.log": text_of(*[f"INFO 08-11 07:30:{i % 60:02d} [x.py:1] step {i} " + "z" * 60 for i in range(3500)],
                         W + "ERROR 08-11 07:36:10 [core.py:1] Traceback (most recent call last):"),  # 340 KB: alone
    "g/after-big.log": text_of(W + 'ERROR 08-11 07:36:10 [core.py:1]   File "y.py", line 2, in g',
                               W + "ERROR 08-11 07:36:10 [core.py:1] ValueError: bad"),
}


@pytest.mark.parametrize("shape", ["folder", "tar.gz"])
def test_small_files_analysed_in_packs_give_the_rows_they_give_one_by_one(tmp_path, monkeypatch, shape):
    from conftest import tar_bytes, write
    from k3logs.ingest import stream as ingest
    from k3logs.ingest.discover import Bundle
    from k3logs.pipeline import run
    root = make_bundle(tmp_path, TINY_FILES)
    if shape == "tar.gz":
        root = write(tmp_path, "case.tar.gz", tar_bytes({f"case/{k}": v for k, v in TINY_FILES.items()}, "gz"))
    packs = []
    rows = ingest.Pack.rows
    monkeypatch.setattr(ingest.Pack, "rows", lambda self, *a: packs.append(len(self.keys)) or rows(self, *a))
    packed = run(root, Settings(jobs=1))
    assert sum(packs) == len(TINY_FILES) - 2  # every file but the big one (and the empty one: never read)
    counted = ingest.ingest(Bundle(root), Settings(jobs=1), None, parse=False)  # (sniff: lines counted only)
    monkeypatch.setattr(ingest, "TINY_BYTES", 0)
    alone = run(root, Settings(jobs=1))
    assert [vars(f) for f in counted.files] == [vars(f) for f in ingest.ingest(Bundle(root), Settings(jobs=1), None,
                                                                                 parse=False).files]
    assert packed.events.height >= 15
    assert packed.events.select(sorted(packed.events.columns)).equals(alone.events.select(sorted(alone.events.columns)))
    assert [vars(f) for f in packed.ingested.files] == [vars(f) for f in alone.ingested.files]
    assert repr(packed.decision) == repr(alone.decision)  # (a Finding is not equal to itself: compared as text)


def test_a_small_file_cut_by_a_truncated_archive_has_its_last_line_marked_in_a_pack(tmp_path):
    from conftest import tar_bytes, write
    from k3logs.pipeline import run
    data = tar_bytes({"case/a.log": node_log(0, 0), "case/b.log": text_of(
        "ERROR 08-11 10:00:01 [x.py:1] RuntimeError: CUDA error: an illegal memory access was encountered",
        "ERROR 08-11 10:00:02 [x.py:1] RuntimeError: CUDA error: an illegal memory access was encountered")})
    path = write(tmp_path, "case.tar", data[:data.index(b"10:00:02") + 60])  # inside b.log's second line
    a = run(path, Settings(jobs=1))
    rows = a.events.filter(pl.col("file") == "b.log").sort("line")
    assert rows["line"].to_list() == [1, 2] and rows["truncated"].to_list() == [False, True]
    assert [f.truncated for f in a.ingested.files if f.file.endswith("b.log")] == [0]  # (not an over-long line)


def test_an_untimed_hit_keeps_the_row_that_times_it_a_few_rows_back_whatever_the_batches(tmp_path):
    # a timed line, three untimed detail lines, then an NCCL WARN with no time of day: the analysis keeps the
    # timed line (beyond the two rows of context) so the WARN is timed as the event table times it
    lines, warns = [], 0
    for i in range(120):
        lines += [f"INFO 08-11 10:{i // 60:02d}:{i % 60:02d} [x.py:1] step {i}", "  a", "  b", "  c"]
        if i % 9 == 4:
            warns += 1
            lines.append("gpu-a:77:91 [0] transport/net_ib.cc:1700 NCCL WARN NET/IB : Got completion from peer "
                         "10.0.0.2<51234> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1")
    root = make_bundle(tmp_path, {"node-a/nccl.log": text_of(*lines)})
    whole = kept_lines(root, 1 << 20)
    assert len(whole) == 4 * warns      # the WARN, its two rows of context, and the timed row four back
    for batch_bytes in range(1500, 2600, 53):
        assert kept_lines(root, batch_bytes) == whole, batch_bytes
    a = analyze_files(tmp_path / "a", {"node-a/nccl.log": text_of(*lines)})
    warn = a.events.filter(pl.col("text").str.contains("Got completion")).row(0, named=True)
    assert warn["ts"] is not None and warn["ts"].strftime("%H:%M:%S") == "10:00:04"


@pytest.mark.parametrize("details, timed", [(30, True),     # a copy tool's summary between the banner and the error
                                             (100, False)])   # near miss: beyond the rows searched back
def test_an_untimed_hit_is_timed_by_a_banner_tens_of_untimed_rows_back(tmp_path, details, timed):
    lines = ["[2026-11-19T08:11:05+00:00] stage-in: /lustre/models/m/ -> /local/models/m/",
             *(f"  Number of files: {i}" for i in range(details)),
             "rsync: [receiver] write failed on \"/local/models/m/model-00047-of-00064.safetensors\": No space left "
             "on device (28)"]
    root = make_bundle(tmp_path, {"node-a/stage-in.log": text_of(*lines)})
    whole = kept_lines(root, 1 << 20)
    assert (1 in whole) == timed                         # the banner is kept only to time the error
    for batch_bytes in (700, 1100, 1500):
        assert kept_lines(root, batch_bytes) == whole, batch_bytes
    a = analyze_files(tmp_path / "a", {"node-a/stage-in.log": text_of(*lines)})
    err = a.events.filter(pl.col("text").str.contains("write failed")).row(0, named=True)
    assert (err["ts"] is not None and err["ts"].strftime("%H:%M:%S") == "08:11:05") == timed


def _docker(text: str, us: int) -> str:
    return json.dumps({"log": text + "\n", "stream": "stdout", "time": f"2026-03-14T01:47:19.{us:06d}Z"})


ACTOR_DIED = ["Traceback (most recent call last):",
              '  File "/venv/ray/_private/worker.py", line 924, in get_objects',
              "    raise value",
              "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
              "\tclass_name: RayWorkerWrapper", "\tpid: 1402", "\tnamespace: 0c7e", "\tip: 10.42.6.22"]


@pytest.mark.parametrize("wrap", [False, True])
def test_an_exceptions_indented_message_lines_are_kept_under_a_runtimes_json_record_too(tmp_path, wrap):
    """A JSON string writes a tab as '\\t': the message lines Ray indents with one are the traceback's all the same;
    a line after them that is no part of it (near miss) stays out of the exception's message."""
    prefix = "(EngineCore_DP0 pid=4318) ERROR 03-14 01:47:19 [core.py:710] "
    lines = [prefix + x for x in ACTOR_DIED] + ["(APIServer pid=1) INFO 03-14 01:47:20 [api.py:1] shutting down"]
    body = "\n".join(_docker(x, us) for us, x in enumerate(lines)) + "\n" if wrap else text_of(*lines)
    a = analyze_files(tmp_path, {"vllm.log": body})
    (message,) = a.events.filter(pl.col("exc_messages").list.len() > 0)["exc_messages"].to_list()[0]
    assert "\tpid: 1402" in message and "\tip: 10.42.6.22" in message and "shutting down" not in message
