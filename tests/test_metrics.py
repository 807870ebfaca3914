"""Prometheus dumps of vLLM's /metrics: one scrape or a series (prompts, time lines, trailing timestamps, repeated
scrapes), counters with and without `_total`, several engines and models, counter resets, series split over
files, saturation and memory creep, and hostile text. Every dump is written inline (made-up values)."""
from __future__ import annotations

import time

import pytest

from k3logs.acceptance.metrics import read_metrics


def scrape(queries=0, hits=0, running=0, waiting=0, kv=0.0, preempt=0, engine="0", model="kimi-k3", total=True,
           rss=None, prompt=None, requests=None, cached=None, ts: int | None = None) -> str:
    """One /metrics text as vLLM's prometheus_client prints it (one engine)."""
    lab = f'engine="{engine}",model_name="{model}"'
    t = f" {ts}" if ts is not None else ""
    c = "_total" if total else ""
    out = [
        "# HELP vllm:num_requests_running Number of requests in model execution batches.",
        "# TYPE vllm:num_requests_running gauge",
        f"vllm:num_requests_running{{{lab}}} {float(running)}{t}",
        "# TYPE vllm:num_requests_waiting gauge",
        f"vllm:num_requests_waiting{{{lab}}} {float(waiting)}{t}",
        "# TYPE vllm:kv_cache_usage_perc gauge",
        f"vllm:kv_cache_usage_perc{{{lab}}} {kv}{t}",
        f"# TYPE vllm:prefix_cache_queries{c} counter",
        f"vllm:prefix_cache_queries{c}{{{lab}}} {float(queries)}{t}",
        f"vllm:prefix_cache_queries_created{{{lab}}} 1.7921766e+09{t}",
        f"# TYPE vllm:prefix_cache_hits{c} counter",
        f"vllm:prefix_cache_hits{c}{{{lab}}} {float(hits)}{t}",
        f"# TYPE vllm:num_preemptions{c} counter",
        f"vllm:num_preemptions{c}{{{lab}}} {float(preempt)}{t}",
    ]
    if prompt is not None:
        out.append(f"vllm:prompt_tokens{c}{{{lab}}} {float(prompt)}{t}")
    if requests is not None:
        out.append(f'vllm:request_success{c}{{{lab},finished_reason="stop"}} {float(requests)}{t}')
        out.append(f'vllm:request_success{c}{{{lab},finished_reason="length"}} 0.0{t}')
    if cached is not None:
        out.append(f"vllm:prompt_tokens_cached{c}{{{lab}}} {float(cached)}{t}")
    if rss is not None:
        out += ["# TYPE process_resident_memory_bytes gauge", f"process_resident_memory_bytes {float(rss)}{t}"]
    return "\n".join(out) + "\n"


def read(*files: tuple[str, str], node: str | None = "gpu-a"):
    return read_metrics([(name, node, text) for name, text in files])


def rows(m) -> list:
    return [w.row for w in m.windows]


def test_one_scrape_is_one_window_since_the_server_started():
    m = read(("metrics.txt", scrape(queries=1000, hits=250, running=12, waiting=3, kv=0.41, preempt=2)))
    (w,) = rows(m)
    assert (w.start, w.end) == (None, None)
    assert (w.queried_tokens, w.hit_tokens, w.hit_ratio) == (1000, 250, 0.25)
    assert (w.running, w.waiting, w.kv_cache_usage, w.preemptions) == (12, 3, 0.41, 2)
    assert w.evidence == "metrics.txt:3"           # the first sample line of the scrape
    assert m.windows[0].where["prefix_cache_hits"] == "metrics.txt:12"
    assert [s.scrapes for s in m.series] == [1] and m.saturation == [] and m.creep == []


def test_a_series_with_time_lines_gives_a_window_between_each_pair_of_scrapes():
    text = ("# scrape 2026-11-30T05:00:00Z\n" + scrape(queries=1000, hits=0, running=2)
            + "# scrape 2026-11-30T05:10:00Z\n" + scrape(queries=5000, hits=3000, running=4)
            + "# scrape 2026-11-30T05:20:00Z\n" + scrape(queries=6000, hits=3000, running=1))
    ws = rows(read(("series.prom", text)))
    assert [(w.start, w.end) for w in ws] == [("2026-11-30T05:00:00Z", "2026-11-30T05:10:00Z"),
                                              ("2026-11-30T05:10:00Z", "2026-11-30T05:20:00Z")]
    # counters are TOKENS over the window, gauges are read at its end
    assert [(w.queried_tokens, w.hit_tokens, w.hit_ratio, w.running) for w in ws] == [
        (4000, 3000, 0.75, 4), (1000, 0, 0.0, 1)]


def test_a_shell_transcript_takes_each_scrape_time_from_the_date_printed_before_it():
    text = ("$ date -u\nMon Nov 30 05:00:00 UTC 2026\n$ curl -s localhost:8000/metrics\n" + scrape(queries=10)
            + "$ date -u\nMon Nov 30 05:05:00 UTC 2026\n$ curl -s localhost:8000/metrics\n" + scrape(queries=30))
    (w,) = rows(read(("acceptance.txt", text)))
    assert (w.start, w.end, w.queried_tokens) == ("2026-11-30T05:00:00Z", "2026-11-30T05:05:00Z", 20)


def test_trailing_millisecond_timestamps_tell_scrapes_apart():
    t0 = 1_764_478_800_000  # 2025-11-30T05:00:00Z
    text = scrape(queries=100, hits=0, ts=t0) + scrape(queries=300, hits=150, ts=t0 + 15_000)
    (w,) = rows(read(("m.prom", text)))
    assert (w.start, w.end, w.queried_tokens, w.hit_tokens) == ("2025-11-30T05:00:00Z", "2025-11-30T05:00:15Z",
                                                                200, 150)


def test_scrapes_pasted_one_after_the_other_without_separators_are_still_a_series():
    text = scrape(queries=100, running=1) + scrape(queries=400, running=7) + scrape(queries=900, running=3)
    ws = rows(read(("pasted.txt", text)))
    assert [(w.queried_tokens, w.running) for w in ws] == [(300, 7), (500, 3)]


@pytest.mark.parametrize("total", [True, False])
def test_counters_read_the_same_with_or_without_total(total):
    text = "# 2026-11-30 05:00:00\n" + scrape(preempt=1, total=total) + "# 2026-11-30 05:01:00\n" + \
        scrape(preempt=5, total=total)
    (w,) = rows(read(("m.txt", text)))
    assert w.preemptions == 4


def test_engines_and_models_add_up_and_the_fullest_kv_cache_counts():
    one = scrape(queries=100, hits=10, running=3, waiting=1, kv=0.2, engine="0", model="a")
    two = scrape(queries=300, hits=90, running=5, waiting=0, kv=0.7, engine="1", model="a")
    three = scrape(queries=600, hits=0, running=1, waiting=2, kv=0.1, engine="0", model="b")
    (w,) = rows(read(("m.txt", one + two + three)))
    assert (w.queried_tokens, w.hit_tokens, w.running, w.waiting, w.kv_cache_usage) == (1000, 100, 9, 3, 0.7)


def test_finished_requests_add_up_over_their_other_labels():
    text = "# 2026-11-30 05:00:00\n" + scrape(prompt=0, requests=0, cached=0) + "# 2026-11-30 05:01:00\n" + \
        scrape(prompt=400_000, requests=4, cached=100_000)
    (w,) = rows(read(("m.txt", text)))
    assert (w.prompt_tokens, w.requests, w.cached_prompt_tokens) == (400_000, 4, 100_000)


def test_a_counter_that_drops_means_a_restart_and_counts_from_zero():
    text = ("# 2026-11-30 05:00:00\n" + scrape(queries=5000, hits=1000)
            + "# 2026-11-30 05:10:00\n" + scrape(queries=800, hits=400))
    (w,) = rows(read(("m.txt", text)))
    assert (w.queried_tokens, w.hit_tokens) == (800, 400)


def test_scrapes_in_files_without_times_are_ordered_by_their_counters_not_their_names():
    before, after = scrape(queries=1000, hits=100), scrape(queries=9000, hits=4100)
    (w,) = rows(read(("z-first.txt", before), ("a-second.txt", after)))
    assert (w.queried_tokens, w.hit_tokens) == (8000, 4000)
    assert w.evidence.startswith("a-second.txt:")


def test_each_node_is_its_own_series():
    m = read_metrics([("a/m.txt", "node-a", scrape(queries=100, hits=50)),
                      ("b/m.txt", "node-b", scrape(queries=100, hits=0))])
    assert [(w.row.node, w.row.hit_ratio) for w in m.windows] == [("node-a", 0.5), ("node-b", 0.0)]
    assert [s.node for s in m.series] == ["node-a", "node-b"]


def test_the_old_kv_cache_name_is_read_too():
    text = scrape(kv=0.3).replace("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
    assert rows(read(("m.txt", text)))[0].kv_cache_usage == 0.3


def series(values: list[dict]) -> str:
    return "".join(f"# 2026-11-30T05:{i:02d}:00Z\n" + scrape(**v) for i, v in enumerate(values))


def test_saturation_kv_pinned_waiting_growing_and_preemptions_rising():
    m = read(("m.txt", series([dict(kv=0.50, waiting=0, preempt=0), dict(kv=0.96, waiting=4, preempt=0),
                               dict(kv=0.99, waiting=9, preempt=3), dict(kv=0.98, waiting=20, preempt=7),
                               dict(kv=0.97, waiting=31, preempt=7)])))
    flags = {f.id: f for f in m.saturation}
    assert set(flags) == {"kv_pinned", "waiting_growing", "preemptions_rising"}
    assert flags["kv_pinned"].evidence == m.windows[-1].where["kv_cache_usage"]
    assert "3 windows in a row" in flags["waiting_growing"].detail


def test_a_busy_but_healthy_series_raises_no_flag():
    m = read(("m.txt", series([dict(kv=0.5, waiting=0, running=20), dict(kv=0.96, waiting=3, running=30),
                               dict(kv=0.7, waiting=1, running=25, preempt=1), dict(kv=0.6, waiting=2, running=28,
                                                                                     preempt=1)])))
    assert m.saturation == [] and m.creep == []


def test_process_memory_creeping_up_over_a_sustained_run_is_flagged():
    gib = 2**30
    rising = [dict(rss=(20 + i) * gib, kv=0.3) for i in range(8)]
    m = read(("m.txt", series(rising)))
    assert [f.id for f in m.creep] == ["memory_creep"]
    assert "over 7 windows" in m.creep[0].detail


def test_memory_that_goes_up_and_down_is_not_creep():
    gib = 2**30
    wobbly = [dict(rss=(20 + (i % 2)) * gib, kv=0.3 + 0.05 * (i % 3)) for i in range(10)]
    assert read(("m.txt", series(wobbly))).creep == []


def test_kv_usage_creeping_up_is_flagged():
    m = read(("m.txt", series([dict(kv=0.30 + 0.03 * i) for i in range(8)])))
    assert [f.id for f in m.creep] == ["kv_creep"]


@pytest.mark.parametrize("junk", [
    "vllm:num_requests_running{engine=\"0\"} notanumber\n",
    "vllm:num_requests_running{engine=\"0\" 3.0\n",
    "vllm:num_requests_running{engine=\"0\"} NaN\n",
    "vllm:num_requests_running{engine=\"0\"} +Inf\n",
    "vllm:prefix_cache_hits_total{engine=\"0\"} 1 99999999999999999999\n",
    "vllm:" + "x" * 100_000 + " 1\n",
    "vllm:num_requests_running{" + "a=\"b\"," * 20_000 + "} 1\n",
    "\x00\x01\x02 vllm:kv_cache_usage_perc 0.5\n",
    "# TYPE vllm:kv_cache_usage_perc gauge\n# 9999-99-99T99:99:99Z\n",
    "$ curl\n# EOF\n# EOF\n",
])
def test_malformed_lines_are_not_samples_and_never_raise(junk):
    m = read(("m.txt", junk + scrape(queries=10, hits=5, running=2)))
    assert [w.row.hit_ratio for w in m.windows][-1:] == [0.5]


def test_a_large_dump_is_read_in_bounded_time():
    # what ingest hands over is at most max_dump_bytes (8 MiB): a dump of that size, many scrapes and junk
    one = scrape(queries=10, hits=5, running=2)
    text = ("# 2026-11-30T05:00:00Z\n" + one + "garbage line that is no sample\n") * (8 * 2**20 // (len(one) + 60))
    t0 = time.perf_counter()
    m = read(("big.txt", text))
    assert time.perf_counter() - t0 < 20
    assert len(m.windows) > 1000 and m.saturation == []


def test_no_metrics_no_windows():
    m = read(("notes.txt", "nothing to see here\nvllm: a log line that mentions vllm: but is no sample\n"))
    assert m.windows == [] and m.series == []


def test_at_most_max_scrapes_are_read_and_the_report_says_so(monkeypatch):
    import k3logs.acceptance.metrics as metrics
    monkeypatch.setattr(metrics, "MAX_SCRAPES", 5)
    four = "".join(f"# 2026-11-30T05:0{i}:00Z\n" + scrape(queries=100 * i) for i in range(4))
    m = read(("a.txt", four), ("b.txt", four.replace("T05:", "T06:")), ("c.txt", four.replace("T05:", "T07:")))
    assert len(m.windows) == 4 and m.limited   # 5 scrapes read: a.txt whole, the first of b.txt


def test_a_dump_longer_than_the_sniffed_head_is_read_whole_and_a_longer_one_is_cut_and_said(tmp_path):
    from datetime import datetime, timedelta

    from conftest import make_bundle
    from k3logs.api import analyze
    from k3logs.settings import Limits, Settings
    t0 = datetime(2026, 11, 30, 5, 0)
    text = "".join(f"# {t0 + timedelta(minutes=i):%Y-%m-%dT%H:%M:%SZ}\n" + scrape(queries=100 * i, running=5)
                   for i in range(200))
    assert len(text) > 2 * 64 * 1024           # past the 64 KiB a file is sniffed from
    root = make_bundle(tmp_path, {"metrics.prom": text})
    r = analyze(root)
    assert r.capacity.windows_total == 199 and r.bundle.skipped == []
    cut = analyze(root, Settings(limits=Limits(max_dump_bytes=100_000)))
    assert 0 < cut.capacity.windows_total < 199
    assert [(s.file, "read whole only up to 100000 bytes" in s.reason) for s in cut.bundle.skipped] == \
        [("metrics.prom", True)]


def test_each_node_orders_its_own_scrapes_by_time_or_by_counters():
    timed = ("# 2026-11-30T05:10:00Z\n" + scrape(queries=900, hits=0) + "# 2026-11-30T05:00:00Z\n" +
             scrape(queries=100, hits=0))
    m = read_metrics([("a/m.txt", "node-a", timed), ("b/1.txt", "node-b", scrape(queries=5000, hits=2000)),
                      ("b/0.txt", "node-b", scrape(queries=1000, hits=0))])
    assert [(w.row.node, w.row.queried_tokens, w.row.hit_tokens) for w in m.windows] == [
        ("node-a", 800, 0), ("node-b", 4000, 2000)]
