"""clock: one UTC time line with a quality flag. Year-less vLLM times take the year of the node's dated
lines; the kernel's seconds since boot become wall time with the boot time; container wrapper times are
exact; untimed lines take the previous line's time; per-node offsets are estimated from the rank-assignment
lines (applied above the tolerance) unless the bundle measured them."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import polars as pl
import pytest

import k3logs.diagnose.clock as clock_mod
from conftest import analyze_files, event_at, text_of
from k3logs.diagnose.clock import parse_iso
from k3logs.settings import Settings


def iso(ev: dict) -> str | None:
    return ev["ts"].strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".") if ev["ts"] is not None else None


def at(a, file: str, line: int) -> tuple[str | None, str]:
    ev = event_at(a.events, file, line)
    return iso(ev), ev["ts_quality"]


def pin_now(monkeypatch, when: datetime) -> None:
    """Pin 'now', the reference when nothing in the bundle dates it (so no test depends on today's date)."""
    class Fixed(datetime):
        @classmethod
        def now(cls, tz=None):
            return when.astimezone(tz) if tz else when.replace(tzinfo=None)
    monkeypatch.setattr(clock_mod, "datetime", Fixed)


@pytest.fixture(autouse=True)
def now_2026_11_30(monkeypatch):
    pin_now(monkeypatch, datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc))


@pytest.fixture
def now_2026_06_15(monkeypatch):
    pin_now(monkeypatch, datetime(2026, 6, 15, 12, 0, tzinfo=timezone.utc))


def vllm(t: str, msg: str = "Automatically detected platform cuda.") -> str:
    return f"INFO {t} [x.py:1] {msg}"


# ------------------------------------------------------------------------------------------
# years
# ------------------------------------------------------------------------------------------
def test_yearless_time_takes_the_year_of_a_dated_line_of_the_same_node(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": text_of(vllm("12-31 23:59:58"), vllm("01-01 00:00:02")),
        "node-a/kern.log": "2024-12-31T23:59:50+00:00 gpu-a kernel: NVRM: loading NVIDIA UNIX Open Kernel Module "
                           "for x86_64  580.65.06\n",
        "node-b/vllm.log": text_of(vllm("03-05 10:00:00")),
        "node-b/kern.log": "2023-03-05T09:59:00+00:00 gpu-b kernel: NVRM: loading NVIDIA UNIX Open Kernel Module "
                           "for x86_64  580.65.06\n",
    }, keep_all=True)
    assert at(a, "node-a/kern.log", 1) == ("2024-12-31T23:59:50", "exact")
    # the Dec 31 -> Jan 1 rollover: each line the year that puts it next to the node's dated lines
    assert at(a, "node-a/vllm.log", 1) == ("2024-12-31T23:59:58", "inferred")
    assert at(a, "node-a/vllm.log", 2) == ("2025-01-01T00:00:02", "inferred")
    assert at(a, "node-b/vllm.log", 1) == ("2023-03-05T10:00:00", "inferred")   # its own node's year
    assert a.clock.year_source == "dated lines in the bundle"


@pytest.mark.parametrize("klog, want", [("09:10:14.780000", "09:10:14.78"),   # the journal's second, refined
                                         ("09:10:11.250000", "09:10:14")])     # near miss: another second
def test_a_journal_lines_whole_second_is_refined_by_the_klog_time_it_wraps_in_that_second(tmp_path, klog, want):
    a = analyze_files(tmp_path, {"gpu-a1/journal.txt": text_of(
        "2024-11-03T08:00:00+00:00 gpu-a1 kernel: NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.65.06",
        f"Nov 03 09:10:14 gpu-a1 kubelet[3381]: E1103 {klog}    3381 log.go:32] \"PullImage from image service "
        "failed\" err=\"rpc error: code = NotFound\"")}, keep_all=True)
    assert at(a, "gpu-a1/journal.txt", 2)[0] == f"2024-11-03T{want}"


def test_rollover_from_a_january_dated_line_puts_december_in_the_year_before(tmp_path):
    a = analyze_files(tmp_path, {
        "vllm.log": text_of(vllm("12-31 23:59:58")),
        "kern.log": "2025-01-01T00:00:10+00:00 gpu-a kernel: NVRM: loading NVIDIA UNIX Open Kernel Module\n"},
        keep_all=True)
    assert at(a, "vllm.log", 1) == ("2024-12-31T23:59:58", "inferred")


def test_no_date_anywhere_takes_the_most_recent_past_year(tmp_path, now_2026_06_15):
    a = analyze_files(tmp_path, {"vllm.log": text_of(vllm("12-31 23:59:58"), vllm("01-01 00:00:02"),
                                                      vllm("06-15 11:00:00"))}, keep_all=True)
    assert at(a, "vllm.log", 1) == ("2025-12-31T23:59:58", "inferred")   # 2026-12-31 would be in the future
    assert at(a, "vllm.log", 2) == ("2026-01-01T00:00:02", "inferred")
    assert at(a, "vllm.log", 3) == ("2026-06-15T11:00:00", "inferred")
    assert "most recent past year" in a.clock.year_source


def test_no_date_anywhere_keeps_a_file_in_order_across_todays_date(tmp_path, now_2026_06_15):
    a = analyze_files(tmp_path, {"vllm.log": text_of(vllm("06-14 23:00:00"), vllm("06-16 01:00:00"))}, keep_all=True)
    first, second = at(a, "vllm.log", 1)[0], at(a, "vllm.log", 2)[0]
    assert first < second
    assert second == "2025-06-16T01:00:00"   # 2026-06-16 is in the future, so the whole file is 2025


def tod(t: str, msg: str = "Automatically detected platform cuda.") -> str:
    return f"{t} INFO [x.py:1] {msg}"


def test_times_of_day_only_take_the_date_of_their_files_dated_lines_and_turn_the_day_at_midnight(tmp_path):
    a = analyze_files(tmp_path, {
        "node-a/serve.log": text_of(tod("23:59:50"), tod("23:59:58"),
                                    "[W1101 00:00:05.000000000 socket.cpp:487] [c10d] recvValue failed",
                                    tod("00:00:06"), tod("00:10:00")),
        "node-a/kern.log": "2026-10-31T23:59:40+00:00 gpu-a kernel: NVRM: loading NVIDIA UNIX Open Kernel Module\n",
    }, keep_all=True)
    assert at(a, "node-a/serve.log", 1) == ("2026-10-31T23:59:50", "inferred")
    assert at(a, "node-a/serve.log", 4) == ("2026-11-01T00:00:06", "inferred")
    assert at(a, "node-a/serve.log", 5) == ("2026-11-01T00:10:00", "inferred")


def test_near_miss_a_clock_that_goes_back_minutes_does_not_turn_the_day(tmp_path):
    a = analyze_files(tmp_path, {
        "serve.log": text_of(tod("10:00:00"), tod("10:05:00"), tod("09:58:00")),
        "kern.log": "2026-10-31T09:59:00+00:00 gpu-a kernel: NVRM: loading NVIDIA UNIX Open Kernel Module\n",
    }, keep_all=True)
    assert at(a, "serve.log", 3) == ("2026-10-31T09:58:00", "inferred")


def test_a_file_of_times_of_day_with_no_dated_line_of_its_own_is_dated_with_the_bundles_others(tmp_path):
    # the worker's log holds times of day only and its node nothing dated: it is dated with the leader's
    # file (which turned the day at midnight), so that its 23:31 comes before the leader's 00:01
    a = analyze_files(tmp_path, {
        "leader/serve.log": text_of(tod("23:31:05"), tod("00:01:28", "rendezvous failed"),
                                    "[W1101 00:01:28.771295351 socket.cpp:487] [c10d] recvValue failed"),
        "worker/serve.log": text_of(tod("23:31:06"), tod("23:31:08", "OSError: [Errno 28] No space left")),
    }, keep_all=True)
    assert at(a, "worker/serve.log", 2)[0] == f"{at(a, 'leader/serve.log', 1)[0][:10]}T23:31:08"
    assert at(a, "worker/serve.log", 2)[0] < at(a, "leader/serve.log", 2)[0]


def test_a_file_of_times_of_day_written_newest_first_turns_the_day_backwards(tmp_path):
    a = analyze_files(tmp_path, {
        "export.log": text_of(tod("00:00:06"), tod("23:59:58")),
        "kern.log": "2026-11-01T00:00:01+00:00 gpu-a kernel: NVRM: loading NVIDIA UNIX Open Kernel Module\n",
    }, keep_all=True)
    assert at(a, "export.log", 1) == ("2026-11-01T00:00:06", "inferred")
    assert at(a, "export.log", 2) == ("2026-10-31T23:59:58", "inferred")


def test_a_node_conditions_time_is_its_own_and_passes_to_no_line_after_it(tmp_path):
    describe = text_of(
        "Name:               b300-r2-n08", "Conditions:",
        "  Type             Status    LastHeartbeatTime                 LastTransitionTime                Reason  "
        "            Message",
        "  Ready            Unknown   Thu, 27 Aug 2026 14:02:07 +0000   Thu, 27 Aug 2026 14:02:52 +0000   "
        "NodeStatusUnknown   Kubelet stopped posting node status.",
        "Events:", "  Normal  NodeNotReady  12m   node-controller  Node b300-r2-n08 status is now: NodeNotReady")
    a = analyze_files(tmp_path, {"kubectl-describe-node.txt": describe}, keep_all=True)
    assert at(a, "kubectl-describe-node.txt", 4) == ("2026-08-27T14:02:52", "exact")   # its LastTransitionTime
    assert at(a, "kubectl-describe-node.txt", 6)[0] is None   # an event by its age: no time from the state before


def test_february_29_moves_into_leap_years_only():
    import random
    import polars as pl
    from k3logs.diagnose.clock import _with_year
    rnd = random.Random(7)
    times = [datetime(2000, 1, 1) + (datetime(2001, 1, 1) - datetime(2000, 1, 1)) * rnd.random() for _ in range(3000)]
    times += [datetime(2000, 2, 28, 23, 59, 59, 999999), datetime(2000, 2, 29, 12), datetime(2000, 3, 1)]
    years = [rnd.choice([1970, 1999, 2023, 2024, 2025, 2100, 2400]) for _ in times]
    got = pl.DataFrame({"t": times, "y": years}).select(_with_year(pl.col("t"), pl.col("y")).alias("r"))["r"]

    def moved(t: datetime, y: int) -> datetime | None:
        try:
            return t.replace(year=y)
        except ValueError:   # February 29th of a year that has none
            return None
    assert got.to_list() == [moved(t, y) for t, y in zip(times, years)]


def test_a_february_29_line_next_to_a_year_without_one_is_analysed(tmp_path):
    a = analyze_files(tmp_path, {
        "vllm.log": text_of(vllm("02-29 10:00:00"), vllm("03-01 10:00:00")),
        "kern.log": "2025-03-01T09:00:00+00:00 gpu-a kernel: NVRM: loading NVIDIA UNIX Open Kernel Module\n"},
        keep_all=True)
    assert at(a, "vllm.log", 2) == ("2025-03-01T10:00:00", "inferred")
    assert at(a, "vllm.log", 1) == (None, "none")   # 2025 has no February 29th: the line's time is unknown


def test_dates_written_inside_lines_give_the_year(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        vllm("03-05 10:00:00"),
        vllm("03-05 10:00:01", "Loading checkpoint saved at 2023-03-04 18:00:00"))}, keep_all=True)
    assert at(a, "vllm.log", 1) == ("2023-03-05T10:00:00", "inferred")
    assert a.clock.year_source == "dates written inside log lines"


def test_an_access_logs_dates_give_the_year_of_the_lines_around_it(tmp_path, now_2026_06_15):
    """A reverse proxy's access log beside vLLM's in one compose log: its [08/May/2025:10:34:17 +0000] (the
    Common Log Format's time, a line's own) dates the bundle, so vLLM's year-less lines are in 2025, not in the
    most recent past year (2026)."""
    access = '10.61.3.22 - - [08/May/2025:10:34:17 +0000] "POST /v1/chat/completions HTTP/1.1" 200 8434 "-" "httpx"'
    a = analyze_files(tmp_path, {"vllm.log": text_of(vllm("05-08 10:34:16"), access)}, keep_all=True)
    assert at(a, "vllm.log", 1) == ("2025-05-08T10:34:16", "inferred")
    assert a.clock.year_source == "dated lines in the bundle"
    # near miss: the same request line without the access log's year leaves the year to the assumption
    a = analyze_files(tmp_path / "near", {"vllm.log": text_of(vllm("05-08 10:34:16"),
                                                              access.replace("/2025:", ":"))}, keep_all=True)
    assert at(a, "vllm.log", 1) == ("2026-05-08T10:34:16", "inferred")
    assert "most recent past year" in a.clock.year_source


# ------------------------------------------------------------------------------------------
# kernel seconds since boot
# ------------------------------------------------------------------------------------------
DMESG = text_of("[  100.500000] Linux version 6.8.0",
                "[ 3600.250000] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
                "the bus.")


def test_dmesg_uptime_becomes_wall_time_with_uptime_s(tmp_path):
    a = analyze_files(tmp_path, {"dmesg.txt": DMESG, "uptime.txt": "$ uptime -s\n2026-08-11 09:00:00\n"},
                      keep_all=True)
    assert at(a, "dmesg.txt", 1) == ("2026-08-11T09:01:40.5", "inferred")
    assert at(a, "dmesg.txt", 2) == ("2026-08-11T10:00:00.25", "inferred")


def test_dmesg_without_boot_time_stays_relative(tmp_path):
    a = analyze_files(tmp_path, {"dmesg.txt": DMESG}, keep_all=True)
    ev = event_at(a.events, "dmesg.txt", 2)
    assert (ev["ts"], ev["ts_quality"], ev["uptime"]) == (None, "relative", 3600.25)


def test_kernel_lines_with_both_clocks_give_the_boot_time(tmp_path):
    a = analyze_files(tmp_path, {"node-a/kern.log": text_of(
        "2026-08-11T10:00:00+00:00 gpu-a kernel: [ 3600.000000] mlx5_core 0000:17:00.0: Port module event",
        ), "node-a/dmesg.txt": text_of("[ 7200.000000] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', "
                                       "name=<unknown>, GPU has fallen off the bus.")}, keep_all=True)
    assert at(a, "node-a/dmesg.txt", 1) == ("2026-08-11T11:00:00", "inferred")
    assert a.clock.nodes["gpu-a"].boot_time.startswith("2026-08-11T09:00:00")


# ------------------------------------------------------------------------------------------
# wrappers, untimed lines
# ------------------------------------------------------------------------------------------
def test_docker_json_and_cri_wrapper_times_are_exact(tmp_path):
    docker = "".join(json.dumps({"log": text + "\n", "stream": "stdout", "time": t}) + "\n" for text, t in [
        (vllm("08-11 10:00:00"), "2025-08-11T10:00:03.25Z"),   # the wrapper's clock wins over vLLM's
        ("a plain line", "2025-08-11T10:00:04.5Z")])
    cri = text_of("2025-08-11T10:00:05.123456789Z stdout F " + vllm("08-11 10:00:05"),
                  "2025-08-11T10:00:06.5Z stderr F some plain text")
    a = analyze_files(tmp_path, {"c/abc-json.log": docker, "pods/ns_pod_uid/vllm/0.log": cri}, keep_all=True)
    assert at(a, "c/abc-json.log", 1) == ("2025-08-11T10:00:03.25", "exact")
    assert at(a, "c/abc-json.log", 2) == ("2025-08-11T10:00:04.5", "exact")
    assert at(a, "pods/ns_pod_uid/vllm/0.log", 1) == ("2025-08-11T10:00:05.123456", "exact")
    assert at(a, "pods/ns_pod_uid/vllm/0.log", 2) == ("2025-08-11T10:00:06.5", "exact")


def test_zone_less_times_are_read_in_the_given_zone(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(vllm("08-11 10:00:00")),
                                 "kern.log": "2026-08-11T09:00:00+00:00 gpu-a kernel: NVRM: loading\n"},
                      settings=Settings(tz="Europe/Berlin"), keep_all=True)
    assert at(a, "vllm.log", 1) == ("2026-08-11T08:00:00", "inferred")     # 10:00 CEST = 08:00 UTC


def test_a_line_without_time_takes_the_previous_lines_time(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "a first plain line", vllm("08-11 10:00:00"), "some plain text without time", vllm("08-11 10:00:09"))},
        keep_all=True)
    assert at(a, "vllm.log", 3) == ("2026-08-11T10:00:00", "inferred")
    assert at(a, "vllm.log", 1) == (None, "none")          # nothing before it in its file


# ------------------------------------------------------------------------------------------
# clock offsets between nodes
# ------------------------------------------------------------------------------------------
def node_log(node: int, shift: int) -> str:
    """Two workers' rank assignment (printed at the same instant on every node) and a later line, on a node
    whose clock is `shift` seconds ahead."""
    out = [f"(Worker_TP{i} pid={100 * node + i}) INFO 08-11 10:00:{10 + shift:02d} [parallel_state.py:1] rank "
           f"{node * 2 + i} in world size 4 is assigned as DP rank 0, PP rank {node}, TP rank {i}, EP rank {i}"
           for i in range(2)]
    out.append(f"(Worker_TP0 pid={100 * node}) INFO 08-11 10:00:{30 + shift:02d} [x.py:1] Starting to load model /m")
    return text_of(*out)


def test_offset_above_the_tolerance_is_estimated_and_applied(tmp_path):
    a = analyze_files(tmp_path, {"node-a/vllm.log": node_log(0, 0), "node-b/vllm.log": node_log(1, 5)},
                      keep_all=True)
    nb = a.clock.nodes["node-b"]
    assert (nb.offset_s, nb.applied, nb.anchors) == (5.0, True, 2)
    assert a.clock.reference_node == "node-a"
    assert at(a, "node-b/vllm.log", 3) == ("2026-08-11T10:00:30", "inferred")   # printed 10:00:35


def test_near_miss_two_instances_each_holding_a_whole_world_are_not_aligned_by_their_starts(tmp_path):
    """A prefill and a decode (or two replicas) each print ranks 0 and 1 of their own world when each was started:
    those lines are no simultaneous moment, and no offset is estimated from them."""
    second = node_log(0, 0).replace("10:00:", "10:07:")   # the other instance, started seven minutes later
    a = analyze_files(tmp_path, {"node-a/vllm.log": node_log(0, 0), "node-b/vllm.log": second}, keep_all=True)
    assert not any(nc.applied for nc in a.clock.nodes.values())
    assert at(a, "node-b/vllm.log", 3) == ("2026-08-11T10:07:30", "inferred")


def test_offset_below_the_tolerance_is_reported_not_applied(tmp_path):
    a = analyze_files(tmp_path, {"node-a/vllm.log": node_log(0, 0), "node-b/vllm.log": node_log(1, 1)},
                      keep_all=True)
    nb = a.clock.nodes["node-b"]
    assert (nb.offset_s, nb.applied) == (1.0, False)
    assert at(a, "node-b/vllm.log", 3) == ("2026-08-11T10:00:31", "inferred")


def test_the_tolerance_is_a_setting(tmp_path):
    a = analyze_files(tmp_path, {"node-a/vllm.log": node_log(0, 0), "node-b/vllm.log": node_log(1, 5)},
                      settings=Settings(skew_tolerance=10.0), keep_all=True)
    assert (a.clock.nodes["node-b"].offset_s, a.clock.nodes["node-b"].applied) == (5.0, False)
    assert at(a, "node-b/vllm.log", 3)[0] == "2026-08-11T10:00:35"


@pytest.mark.parametrize("fmt", ["date -Is", "date -u +'%F %T.%N UTC'"])
def test_offsets_measured_by_a_pdsh_date_transcript_win_over_the_estimate(tmp_path, fmt):
    def reading(host: str, s: int) -> str:
        return f"{host}: 2026-08-11T12:00:0{s}+00:00" if fmt == "date -Is" else f"{host}: 2026-08-11 12:00:0{s}.5 UTC"
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": node_log(0, 0), "node-b/vllm.log": node_log(1, 5),
        "clock-check.txt": text_of(f"$ pdsh -w node-a,node-b {fmt}", reading("node-a", 0), reading("node-b", 3))},
        keep_all=True)
    nb = a.clock.nodes["node-b"]
    assert (nb.offset_s, nb.applied, nb.source) == (3.0, True, "measured in the bundle")
    assert at(a, "node-b/vllm.log", 3)[0] == "2026-08-11T10:00:32"   # 10:00:35 printed, 3 s ahead


def srun_job(b_ahead: int) -> str:
    """One `srun -l` output of two nodes, in the order srun received the lines: gpu2's worker prints its rank
    assignment five seconds after gpu1's, by the clock that timed it; gpu2's clock is `b_ahead` s ahead."""
    def line(task: int, node: int, true_s: int, msg: str) -> str:
        return (f"{task}: (Worker_TP0 pid={100 * node}) INFO 08-11 10:00:{true_s + (b_ahead if node else 0):02d} "
                f"[x.py:1] {msg}")
    assigned = "rank {r} in world size 2 is assigned as DP rank 0, PP rank {r}, TP rank 0, EP rank 0"
    return text_of("+ echo 'SLURM_JOB_ID=7 SLURM_JOB_NODELIST=gpu[1-2] SLURM_NNODES=2 SLURM_NTASKS=2'",
                   "+ srun -l --ntasks-per-node=1 vllm serve /m", line(0, 0, 10, assigned.format(r=0)),
                   line(0, 0, 14, "Starting to load model /m"), line(1, 1, 14, "Starting to load model /m"),
                   line(1, 1, 15, assigned.format(r=1)), line(0, 0, 16, "Loading weights took 1.00 seconds"),
                   line(1, 1, 18, "Loading weights took 1.00 seconds"))


@pytest.mark.parametrize("b_ahead, want", [(0, (1.0, False)), (5, (6.0, True))])
def test_a_file_written_live_bounds_the_offset_its_lines_order_allows(tmp_path, b_ahead, want):
    """Rank-assignment lines five seconds apart read as gpu2's clock 5 s ahead; but srun wrote gpu2's lines between
    gpu1's of 10:00:14 and 10:00:16 as they arrived, so its clock is within a second of gpu1's (and the 5 s
    estimate is no skew). Near miss: where gpu2's every line is stamped 5 s ahead, its order allows an offset (the
    10 s estimate moved to the 5 s the order allows, give or take its second of slack), which is applied."""
    a = analyze_files(tmp_path, {"slurm-7.out": srun_job(b_ahead)}, keep_all=True)
    nb = a.clock.nodes["gpu2"]
    assert (nb.offset_s, nb.applied) == want


ILLEGAL = "CUDA error: an illegal memory access was encountered"


@pytest.mark.parametrize("leaders_own, want", [(False, (-2.0, False)), (True, (-4.0, True))])
def test_a_report_of_another_nodes_error_came_after_it_whatever_the_clocks_say(tmp_path, leaders_own, want):
    """node-b's rank assignment, stamped 4 s before node-a's, reads as its clock 4 s behind; but node-a's engine
    relayed node-b's worker's error a second after node-b stamped it, so node-b's clock cannot be more than a
    second (and the slack) behind. Near miss: the error raised on node-a too, the relay may be of that one."""
    raised = "(Worker_TP0 pid={pid}) ERROR 08-11 10:05:00 [gpu_worker.py:1] torch.AcceleratorError: " + ILLEGAL
    relay = (f"(EngineCore_DP0 pid=50) ERROR 08-11 10:05:01 [core.py:1] RuntimeError: Worker failed with error "
             f"'{ILLEGAL}\\nSearch for `cudaErrorIllegalAddress'', please check the stack trace above for the "
             "root cause")
    a_log = node_log(0, 0) + (raised.format(pid=100) + "\n" if leaders_own else "") + relay + "\n"
    a = analyze_files(tmp_path, {"node-a/vllm.log": a_log, "node-b/vllm.log": node_log(1, -4) + raised.format(pid=200)
                                 + "\n"}, keep_all=True)
    nb = a.clock.nodes["node-b"]
    assert (nb.offset_s, nb.applied) == want


@pytest.mark.parametrize("raised_at, want", [("10:05:03", (2.0, True)), ("10:05:02", (2.0, False))])
def test_a_skew_the_order_of_lines_proves_is_applied_below_the_tolerance(tmp_path, raised_at, want):
    """node-b's rank assignment reads as its clock 2 s ahead, within the estimate's tolerance; but node-a's engine
    relayed node-b's worker's error at 10:05:01, which node-b stamped 10:05:03: its clock is ahead, by more than the
    slack, and the offset is applied. Near miss: stamped 10:05:02, within a second's slack of the relay, it proves
    nothing, and 2 s stays below the tolerance."""
    raised = f"(Worker_TP0 pid=200) ERROR 08-11 {raised_at} [gpu_worker.py:1] torch.AcceleratorError: " + ILLEGAL
    relay = (f"(EngineCore_DP0 pid=50) ERROR 08-11 10:05:01 [core.py:1] RuntimeError: Worker failed with error "
             f"'{ILLEGAL}\\nSearch for `cudaErrorIllegalAddress'', please check the stack trace above for the "
             "root cause")
    a = analyze_files(tmp_path, {"node-a/vllm.log": node_log(0, 0) + relay + "\n",
                                 "node-b/vllm.log": node_log(1, 2) + raised + "\n"}, keep_all=True)
    nb = a.clock.nodes["node-b"]
    assert (nb.offset_s, nb.applied) == want


def test_parse_iso_reads_zones_and_treats_naive_times_as_utc():
    assert parse_iso("2026-08-11T10:00:00Z") == datetime(2026, 8, 11, 10, tzinfo=timezone.utc)
    assert parse_iso("2026-08-11 12:00:00+02:00").astimezone(timezone.utc).hour == 10
    assert parse_iso("2026-08-11T10:00:00").tzinfo is timezone.utc
    assert parse_iso("yesterday") is None


def test_a_line_ray_relays_into_the_heads_log_keeps_the_heads_clock(tmp_path):
    # node-b's clock is 3 s ahead (measured); a worker line Ray relays from node-b into node-a's log was timed
    # by node-a's clock: it is node-b's line but not corrected; node-b's own log is
    head = node_log(0, 0) + text_of(
        "(RayWorkerWrapper pid=900, ip=10.0.0.2) INFO 08-11 10:00:40 [x.py:1] Loading weights took 9.1 seconds")
    worker = node_log(1, 3) + text_of("node-b:900:900 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>")
    a = analyze_files(tmp_path, {
        "node-a/vllm.log": head, "node-b/vllm.log": worker,
        "clock-check.txt": "$ pdsh -w node-a,node-b date -Is\nnode-a: 2026-08-11T12:00:00+00:00\n"
                           "node-b: 2026-08-11T12:00:03+00:00\n"}, keep_all=True)
    relayed = event_at(a.events, "node-a/vllm.log", 4)
    assert relayed["node"] == "node-b"
    assert at(a, "node-a/vllm.log", 4)[0] == "2026-08-11T10:00:40"
    assert at(a, "node-b/vllm.log", 3)[0] == "2026-08-11T10:00:30"   # its own line: 10:00:33 printed


def test_a_hosts_journal_is_read_in_the_zone_its_timedatectl_shows_and_its_containers_logs_are_not(tmp_path):
    # the node's journal writes Berlin summer time with no zone; the pod's vLLM log on the same node is UTC
    zone = ("               Local time: Thu 2026-06-18 16:52:51 CEST\n"
            "           Universal time: Thu 2026-06-18 14:52:51 UTC\n"
            "                Time zone: Europe/Berlin (CEST, +0200)\n")
    journal = text_of("Jun 18 16:41:52.418237 gpu-b07 kernel: NVRM: Xid (PCI:0000:bb:00): 119, pid='<unknown>', "
                      "name=<unknown>, Timeout after 6s of waiting for RPC response from GPU5 GSP!")
    pod = text_of("(APIServer pid=1) INFO 06-18 14:41:50 [api_server.py:1] Avg prompt throughput: 1.0 tokens/s, "
                  "Avg generation throughput: 20.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%")
    files = {"gpu-b07/journalctl-k.txt": journal, "gpu-b07/vllm.log": pod}
    a = analyze_files(tmp_path / "a", {**files, "gpu-b07/timedatectl.txt": zone}, keep_all=True)
    assert at(a, "gpu-b07/journalctl-k.txt", 1)[0] == "2026-06-18T14:41:52.418237"
    assert at(a, "gpu-b07/vllm.log", 1)[0] == "2026-06-18T14:41:50"
    # near miss: without the node's zone, its journal is read in the analysis' zone (UTC)
    b = analyze_files(tmp_path / "b", files, keep_all=True)
    assert at(b, "gpu-b07/journalctl-k.txt", 1)[0] == "2026-06-18T16:41:52.418237"


@pytest.mark.parametrize("nodes, want", [(1, "2026-06-18T14:41:52.418237"),    # the bundle's one node's zone
                                          (2, "2026-06-18T16:41:52.418237")])   # near miss: whose zone, of two?
def test_a_timedatectl_that_names_no_host_is_the_zone_of_the_bundle_s_one_node(tmp_path, nodes, want):
    zone = "                Time zone: Europe/Berlin (CEST, +0200)\n"
    kern = "Jun 18 16:41:52.418237 {} kernel: NVRM: Xid (PCI:0000:bb:00): 119, pid='<unknown>', name=<unknown>, " \
           "Timeout after 6s of waiting for RPC response from GPU5 GSP!"
    files = {"host/journal.txt": text_of(*(kern.format(h) for h in ["gpu-b07", "gpu-b08"][:nodes])),
             "host/timedatectl.txt": zone}
    a = analyze_files(tmp_path, files, keep_all=True)
    assert at(a, "host/journal.txt", 1)[0] == want


@pytest.mark.parametrize("iso_offsets, want", [(["+0200", "+0200"], "2026-06-18T14:41:52.418237"),
                                                 (["+0200", "+0100"], "2026-06-18T16:41:52.418237")])
def test_a_hosts_journal_is_read_in_the_zone_its_own_short_iso_lines_state(tmp_path, iso_offsets, want):
    # the kernel's lines as `journalctl -k -o short-iso` wrote them state the host's offset; its journal in the
    # default short format does not: it is in that zone. Near miss: lines that state two offsets name no one zone
    kernel = text_of(*[f"2026-06-18T16:0{i}:00{off} gpu-b07 kernel: mlx5_core 0000:4d:00.0 mlx5_3: Port: 1 Link ACTIVE"
                       for i, off in enumerate(iso_offsets)])
    journal = text_of("Jun 18 16:41:52.418237 gpu-b07 vllm[4102]: ERROR 06-18 16:41:52 [core.py:1] RuntimeError: boom")
    a = analyze_files(tmp_path, {"gpu-b07/journalctl-k.txt": kernel, "gpu-b07/journalctl-u-vllm.txt": journal},
                      keep_all=True)
    assert at(a, "gpu-b07/journalctl-k.txt", 1)[0] == "2026-06-18T14:00:00"
    assert at(a, "gpu-b07/journalctl-u-vllm.txt", 1)[0] == want


@pytest.mark.parametrize("hosts, want", [(("ws-0412", "hx-login02"), "2026-08-11T10:00:00"),   # two hosts in CEST
                                          (("ws-0412",), "2026-08-11T12:00:00")])   # near miss: one workstation's zone
def test_a_site_s_hosts_keep_one_zone_where_two_of_them_show_it(tmp_path, hosts, want):
    """A GPU node's kernel journal states no zone; the workstation and the login node the operator ran `date` on
    both show CEST: the site's hosts keep one zone. One machine alone (a laptop) may be anywhere."""
    files = {f"{h}/date.txt": f"[ops@{h} ~]$ date\nTue Aug 11 12:31:07 CEST 2026\n" for h in hosts}
    files["gpu-a07/journalctl-k.txt"] = text_of("Aug 11 12:00:00 gpu-a07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, "
                                                "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    a = analyze_files(tmp_path, files, keep_all=True)
    assert at(a, "gpu-a07/journalctl-k.txt", 1)[0] == want


@pytest.mark.parametrize("inner, want", [("05:50:{s:02d}", "2026-11-21T05:50:10"),   # the container's UTC: CET journal
                                          ("06:50:{s:02d}", "2026-11-21T06:50:10"),   # near miss: the same clock
                                          ("05:{s:02d}:00", "2026-11-21T06:50:10")])  # near miss: no one difference
def test_a_journal_whose_lines_carry_their_process_s_own_time_hours_apart_is_in_that_zone(tmp_path, inner, want):
    """A systemd unit runs vLLM in docker: the journal stamps host time (CET), each line it wraps carries vLLM's
    own time (the container's UTC), one hour earlier: the journal is in UTC+1."""
    lines = [f"Nov 21 06:50:{s:02d} gb300-n01 vllm-k3[3290]: (APIServer pid=1) INFO 11-21 {inner.format(s=s)} "
             f"[loggers.py:1] Engine 000: Avg prompt throughput: 0.0 tokens/s" for s in (10, 20, 30, 40)]
    lines.append("Nov 21 06:50:10 gb300-n01 kernel: mlx5_core 0000:5b:00.0 mlx5_3: Port: 1 Link DOWN")
    a = analyze_files(tmp_path, {"gb300-n01/journal.txt": text_of(*lines)}, keep_all=True)
    assert at(a, "gb300-n01/journal.txt", 5)[0] == want


@pytest.mark.parametrize("local, want", [("19:41:27", "2026-11-19T03:41:27"),   # dmesg -T in PST, 8 h behind
                                          ("03:41:27", "2026-11-19T03:41:27")])   # near miss: already the run's time
def test_a_host_clock_s_zone_is_where_the_kernel_s_kill_of_a_worker_falls_within_the_run(tmp_path, local, want):
    """The kernel's oom-kill of a worker (its pid) happened while the deployment ran, next to the engine's report of
    that worker's death: a dmesg -T that names no zone, eight hours before the run began, is in a zone 8 h behind."""
    day = "Wed Nov 18" if local.startswith("19") else "Thu Nov 19"
    vllm = text_of("(Worker_TP1 pid=208231) INFO 11-19 01:53:24 [parallel_state.py:1] world_size=2 rank=1 local_rank=1 "
                   "distributed_init_method=tcp://10.0.0.5:41533 backend=nccl",
                   "(Worker_TP1 pid=208231) INFO 11-19 01:53:30 [gpu_model_runner.py:1] Starting to load model /m",
                   "(EngineCore pid=207811) ERROR 11-19 03:41:27 [multiproc_executor.py:1] Worker proc VllmWorker-1 "
                   "died unexpectedly, shutting down executor.")
    dmesg = text_of(f"[{day} {local} 2026] Memory cgroup out of memory: Killed process 208231 (VLLM::Worker_TP) "
                    "total-vm:3118841204kB, anon-rss:302114508kB, file-rss:1281704kB, shmem-rss:12582912kB")
    a = analyze_files(tmp_path, {"gpu-b06/vllm.log": vllm, "gpu-b06/dmesg-T.txt": dmesg}, keep_all=True)
    assert at(a, "gpu-b06/dmesg-T.txt", 1)[0] == want


@pytest.mark.parametrize("container, want", [(None, "2026-05-12T13:46:09"),    # a Slurm job on the host: EDT
                                              ("ps", "2026-05-12T09:46:09"),    # near miss: a container's UTC
                                              ("pyxis", "2026-05-12T09:46:09"),   # a job step run in a container
                                              ("script", "2026-05-12T13:46:09")])   # its batch script, no dump
def test_a_job_that_runs_on_its_hosts_writes_their_zone(tmp_path, container, want):
    zone = "$ timedatectl | grep 'Time zone'\n                Time zone: America/New_York (EDT, -0400)\n"
    job = ("JobId=48213 JobName=vllm-405b\n   JobState=FAILED Reason=OutOfMemory\n"
           "   StartTime=2026-05-12T09:41:02 EndTime=2026-05-12T09:52:19\n   NodeList=gpu-r2-n15\n")
    files = {"gpu-r2-n15/timedatectl.txt": zone, "scontrol-show-job.txt": job,
             "gpu-r2-n15/vllm.log": text_of("(EngineCore pid=7) INFO 05-12 09:46:09 [core.py:1] Starting to load model")}
    if container == "ps":
        files["gpu-r2-n15/docker-ps.txt"] = ("CONTAINER ID   IMAGE                      STATUS        NAMES\n"
                                             "7c4e1f0a92b3   vllm/vllm-openai:v0.11.2   Up 3 minutes  vllm\n")
    elif container in ("pyxis", "script"):
        image = "--container-image=/lustre/images/vllm.sqsh " if container == "pyxis" else ""
        files["job.sbatch"] = f"#!/bin/bash\n#SBATCH --nodes=1\nexport NCCL_DEBUG=WARN\nsrun -l {image}vllm serve /models/m\n"
        if container == "script":
            del files["scontrol-show-job.txt"]
    a = analyze_files(tmp_path, files, keep_all=True)
    assert at(a, "gpu-r2-n15/vllm.log", 1)[0] == want


@pytest.mark.parametrize("runner, want", [
    ("[program:vllm]\ncommand=/opt/vllm/bin/vllm serve /models/m --port 8001\n", "2026-10-14T12:37:00"),  # CEST
    ("[program:vllm]\nautorestart=true\n", "2026-10-14T14:37:00")])   # near miss: no program it runs
def test_a_supervisord_program_runs_on_its_host_and_writes_its_zone(tmp_path, runner, want):
    """A supervisord program runs on its host, as a systemd unit does: its zone-less times are the host's, whose
    syslog states its offset (+02:00)."""
    files = {"dgx-a07/auth.log": "2026-10-14T14:31:05.662318+02:00 dgx-a07 sudo: pam_unix(sudo:session): session "
                                 "closed for user root\n",
             "dgx-a07/supervisor/vllm.conf": runner,
             "dgx-a07/vllm.log": text_of("(APIServer pid=7) INFO 10-14 14:37:00 [loggers.py:1] Engine 000: Avg "
                                         "prompt throughput: 1.0 tokens/s")}
    a = analyze_files(tmp_path, files, keep_all=True)
    assert at(a, "dgx-a07/vllm.log", 1)[0] == want


# ------------------------------------------------------------------------------------------
# a file written newest first (a log platform's export)
# ------------------------------------------------------------------------------------------
def test_a_file_whose_times_go_back_is_read_newest_first_and_its_places_count_from_its_end():
    from k3logs.diagnose.clock import in_file_order
    t = [datetime(2026, 3, 14, 7, 32, s) for s in (25, 24, 24, 23, 20)]
    ev = pl.DataFrame({"file": ["export.txt"] * 5 + ["app.log"] * 5, "line": list(range(1, 6)) * 2,
                       "ts": t + t[::-1]})
    got = in_file_order(ev)
    assert got.filter(pl.col("file") == "export.txt")["seq"].to_list() == [-1, -2, -3, -4, -5]
    # near miss: a file written oldest first, and one with a line or two out of order, keep their line numbers
    assert got.filter(pl.col("file") == "app.log")["seq"].to_list() == [1, 2, 3, 4, 5]
    jumbled = pl.DataFrame({"file": ["app.log"] * 6, "line": list(range(1, 7)),
                            "ts": [datetime(2026, 3, 14, 7, 32, s) for s in (1, 3, 2, 5, 4, 6)]})
    assert in_file_order(jumbled)["seq"].to_list() == [1, 2, 3, 4, 5, 6]


# ------------------------------------------------------------------------------------------
# ages
# ------------------------------------------------------------------------------------------
EVENTS = ("LAST SEEN   TYPE      REASON         OBJECT                 MESSAGE",
          "9m16s       Normal    NodeShutdown   node/gke-spot-x4mq     Shutdown manager detected shutdown event",
          "41m         Warning   Unhealthy      pod/dsv3-0             Readiness probe failed: HTTP probe failed")
DESCRIBED = ("Events:", "  Type     Reason   Age               From     Message",
             "  Warning  BackOff  2m (x3 over 10m)  kubelet  Back-off restarting failed container")


@pytest.mark.parametrize("date, want", [   # (a recurring event: its first time, '2m (x3 over 10m)': 10m ago)
    ("Fri Nov 20 10:39:41 UTC 2026", ("2026-11-20T10:30:25", "2026-11-20T09:58:41", "2026-11-20T10:29:41")),
    ("2026-11-20T10:39:41+00:00", ("2026-11-20T10:30:25", "2026-11-20T09:58:41", "2026-11-20T10:29:41")),
    ("Fri Nov 20 10:39:41 CET 2026", ("2026-11-20T09:30:25", "2026-11-20T08:58:41", "2026-11-20T09:29:41")),
    ("Fri Nov 20 10:39:41 CST 2026", (None, None, None))])   # near miss: a zone of several names says no instant
def test_a_listing_of_event_ages_counts_back_from_the_time_date_printed_before_it(tmp_path, date, want):
    a = analyze_files(tmp_path, {"kubectl.txt": text_of("$ date -u", date, "$ kubectl get events", *EVENTS,
                                                        "$ kubectl describe pod dsv3-0", *DESCRIBED)},
                      keep_all=True)
    assert tuple(at(a, "kubectl.txt", n)[0] for n in (5, 6, 10)) == want


@pytest.mark.parametrize("command, want", [
    ("$ kubectl get events -n x   # 2026-11-20 10:39:41 UTC", "2026-11-20T09:47:41"),   # when the command ran
    ("$ kubectl get events -n x   # 2026-11-20 10:39:41 CET", None)])   # near miss: a zone not UTC
def test_a_listing_counts_back_from_the_utc_time_its_command_was_stamped_with_to_a_recurring_events_first(
        tmp_path, command, want):
    row = "49m (x11 over 52m)   Warning   FailedScheduling   pod/kimi-k3-0-1   0/42 nodes are available: 36 Insufficient"
    a = analyze_files(tmp_path, {"kubectl.txt": text_of(command, "LAST SEEN   TYPE   REASON   OBJECT   MESSAGE", row)},
                      keep_all=True)
    assert at(a, "kubectl.txt", 3)[0] == want


def test_near_miss_ages_listed_before_any_printed_time_have_none(tmp_path):
    a = analyze_files(tmp_path, {"kubectl.txt": text_of("$ kubectl get events", *EVENTS, "$ date -u",
                                                        "Fri Nov 20 10:39:41 UTC 2026")}, keep_all=True)
    assert at(a, "kubectl.txt", 3)[0] is None


@pytest.mark.parametrize("zone, want", [
    ("Europe/Amsterdam (CET, +0100)", ("2026-10-25T00:30:00", "2026-10-25T00:59:00", "2026-10-25T01:05:00")),
    # near miss: a zone known only by its offset (the one at collection): one hour late before the change
    ("n/a (CET, +0100)", ("2026-10-25T01:30:00", "2026-10-25T01:59:00", "2026-10-25T01:05:00"))])
def test_a_journal_in_a_named_zone_reads_the_hour_a_fall_back_repeats_as_its_file_wrote_it(tmp_path, zone, want):
    """Summer time ends at 03:00 CEST: 02:00-02:59 comes twice. The file's clock going back is the second pass."""
    line = "Oct 25 {} ams-gw-02 kernel: mlx5_core 0000:5c:00.0 mlx5_2: Port: 1 Link {}"
    a = analyze_files(tmp_path, {
        "ams-gw-02/journal.txt": text_of(line.format("02:30:00", "ACTIVE"), line.format("02:59:00", "ACTIVE"),
                                         line.format("02:05:00", "DOWN")),
        "ams-gw-02/timedatectl.txt": f"                Time zone: {zone}\n"}, keep_all=True)
    assert tuple(at(a, "ams-gw-02/journal.txt", n)[0] for n in (1, 2, 3)) == want


def test_near_miss_lines_after_a_printed_time_that_state_no_age_take_no_time_from_it(tmp_path):
    a = analyze_files(tmp_path, {"scrollback.txt": text_of(
        "$ date -u", "Fri Nov 20 10:39:41 UTC 2026", "$ vllm serve m --tensor-parallel-size 3",
        "  Value error, Total number of attention heads (32) must be divisible by tensor parallel size (3).")},
        keep_all=True)
    assert at(a, "scrollback.txt", 4)[0] is None


@pytest.mark.parametrize("header, hour", [("(node clock America/Chicago, CDT = UTC-5)", 16),   # said: local time
                                          ("(collected after the job ended)", 11)])    # near miss: no zone said
def test_a_collectors_header_that_says_its_hosts_clock_zone_puts_its_kernel_lines_in_that_zone(tmp_path, header, hour):
    dmesg = text_of(f"# pdsh -w gpn-b23 'dmesg -T'   {header}",
                    "[Wed Oct 21 11:41:07 2026] Memory cgroup out of memory: Killed process 51881 (VLLM::Worker_PP) "
                    "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0")
    a = analyze_files(tmp_path, {"gpn-b23/dmesg-T.txt": dmesg,
                                 "gpn-b21/vllm.log": text_of("INFO 10-21 16:40:00 [api_server.py:1] vLLM API server "
                                                             "version 0.27.1")})
    assert event_at(a.events, "gpn-b23/dmesg-T.txt", 2)["ts"].hour == hour


def _assigned(rank: int, t: str, pid: int) -> str:
    return f"(Worker_PP{rank}_TP0 pid={pid}) INFO 10-21 {t} [parallel_state.py:1] rank {rank} in world size 2 is " \
           f"assigned as DP rank 0, PP rank {rank}, TP rank 0, EP rank 0"


@pytest.mark.parametrize("worker_at, offset", [("09:46:47", 0.0),     # the same meeting, a second apart: no skew
                                               ("09:48:18", 90.0)])   # near miss: that meeting, 90 s later
def test_a_nodes_clock_is_compared_over_one_meeting_not_the_median_of_its_starts(tmp_path, worker_at, offset):
    leader = text_of(_assigned(0, "09:28:34", 251), _assigned(0, "09:46:48", 254))   # two starts of the leader
    a = analyze_files(tmp_path, {"gpu-w03/vllm.log": leader, "gpu-w05/vllm.log": text_of(_assigned(1, worker_at, 121))})
    assert a.clock_model.offsets.get("gpu-w05", 0.0) == pytest.approx(offset, abs=1.5)


def _power_loss(transcript: bool) -> dict[str, str]:
    """A head whose NCCL sends to the worker fail at 14:27:34 UTC; the worker's BMC logged its power loss at 14:27:25
    UTC, in its own clock, which reads 1:02:13 ahead (local time, and fast)."""
    files = {
        "gpu-n11/vllm.log": "\n".join([
            "(APIServer pid=1) INFO 11-25 13:40:00 [launcher.py:37] Application startup complete.",
            "[2026-11-25 14:27:34] gpu-n11:311:402 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
            "from peer 10.61.3.14<49255> with status=12 opcode=0 len=0 vendor err 129 (Recv)"]) + "\n",
        "gpu-n14/ipmitool-sel-elist.txt": "   a | 11/25/2026 | 15:29:38 | Power Supply PSU4 Status | Power Supply AC "
                                          "lost | Asserted\n",
        "hosts": "10.61.3.14 gpu-n14\n"}
    if transcript:
        files["gpu-n14/collect-info.txt"] = "$ date -u\nWed Nov 25 15:12:08 UTC 2026\n$ ipmitool sel time get\n" \
                                            "11/25/2026 16:14:21\n"
    return files


@pytest.mark.parametrize("transcript, root", [(True, "infra.node_lost"),     # the BMC's clock, read beside UTC
                                              (False, "nccl.ib_transport")])  # near miss: its SEL read as UTC
def test_a_bmcs_event_log_is_read_in_the_bmcs_own_clock(tmp_path, transcript, root):
    a = analyze_files(tmp_path, _power_loss(transcript))
    assert a.decision.root is not None and a.decision.root.category == root, a.decision.root
