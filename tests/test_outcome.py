"""The outcome first, then the earliest cause that explains it (#9): each rule of the decision on inline
bundles, with its positive and its near miss. Rules, not cases: hosts, pids and times are made up."""
from __future__ import annotations

import re

import pytest

from conftest import analyze_files, make_bundle, report_of, text_of
from k3logs.diagnose.missing import spans
from k3logs.pipeline import run

API = "(APIServer pid=1) INFO 11-18 07:{m:02d}:{s:02d} [api_server.py:1] "
WORKER = "(VllmWorker rank=0 pid={pid}) {level} 11-18 07:{m:02d}:{s:02d} [worker.py:1] "


def api(m: int, s: int, text: str, level: str = "INFO") -> str:
    return API.format(m=m, s=s).replace("INFO", level) + text


def worker(m: int, s: int, text: str, pid: int = 4711, level: str = "INFO") -> str:
    return WORKER.format(pid=pid, level=level, m=m, s=s) + text


START = [api(0, 0, "vLLM API server version 0.27.2"),
         api(0, 1, "non-default args: {'model': 'm', 'tensor_parallel_size': 1}")]
LOADED = [worker(1, 0, "Starting to load model m..."), worker(2, 0, "Model loading took 15.2 GiB and 60.1 seconds")]
READY = [api(3, 0, "Application startup complete.")]
SERVING = [api(4, 0, "Avg prompt throughput: 120.0 tokens/s, Avg generation throughput: 340.5 tokens/s, "
                     "Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%")]
STOP = [api(5, 0, "Shutting down"), api(5, 0, "Waiting for application shutdown."),
        api(5, 1, "Application shutdown complete.")]
OOM = worker(4, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                    "capacity of 79.15 GiB of which 1.02 GiB is free.", level="ERROR")
DEAD = api(5, 2, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
                 "(above) for the root cause.", level="ERROR")


def decision(tmp_path, files: dict[str, list[str] | str]):
    root = make_bundle(tmp_path, {k: v if isinstance(v, str) else "\n".join(v) + "\n" for k, v in files.items()})
    return run(root).decision


def state(d) -> tuple[str, str | None]:
    return d.outcome.state, d.root.category if d.root else None


# ------------------------------------------------------------------------------------------------------
# the outcome
# ------------------------------------------------------------------------------------------------------
def test_serving_with_nothing_abnormal_is_healthy(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING})
    assert state(d) == ("serving", None) and d.healthy


def test_a_stop_with_nothing_abnormal_before_is_healthy_whatever_its_trail_prints(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + STOP + [DEAD]})
    assert state(d) == ("stopped", None) and d.healthy
    assert next(f for f in d.findings if f.category == "symptom.engine_dead").set_aside.startswith("after the stop")


def last_state(reason: str, code: int) -> str:
    return text_of("Name:             vllm-0", "Node:             gpu-a1/10.0.0.5", "Containers:", "  vllm:",
                   "    State:          Running", "      Started:      Wed, 18 Nov 2026 07:00:00 +0000",
                   "    Last State:     Terminated", f"      Reason:       {reason}", f"      Exit Code:    {code}",
                   "    Ready:          True", "    Restart Count:  1")


@pytest.mark.parametrize("reason, code, healthy", [("Error", 1, False), ("Error", 2, False),
                                                   ("Completed", 0, True), ("Error", 143, True), ("Error", 130, True)])
def test_a_run_its_orchestrator_saw_end_abnormally_is_no_healthy_run_when_no_log_shows_why(tmp_path, reason, code,
                                                                                            healthy):
    # the restarted container serves; the one before it ended with an exit code no clean end gives (near misses:
    # done, or stopped by SIGTERM or SIGINT), and no log of it shows why
    a = run(make_bundle(tmp_path, {"gpu-a1/vllm.log": "\n".join(START + LOADED + READY + SERVING) + "\n",
                                   "kubectl-describe-pod.txt": last_state(reason, code)}))
    assert a.decision.healthy is healthy and a.decision.root is None
    if healthy:
        assert a.decision.outcome.state == "serving"
    else:
        assert (a.decision.outcome.state, a.decision.outcome.file) == ("inconclusive", "kubectl-describe-pod.txt")
        assert any("kubectl-describe-pod.txt:9" in m for m in a.missing)
        # an incident of a cause the bundle does not hold, after the phase its logs reach; exit status 3
        r = report_of(a)
        assert (r.root_cause.category, r.first_causal, r.phase, r.exit_status) == ("other", None, "serving", 3)


@pytest.mark.parametrize("stopped, healthy", [("vllm-k3-dp1", True),    # an operator's `docker stop` of it: its end
                                              ("vllm-k3-dp0", False)])  # near miss: the stop of another container
def test_a_container_an_operators_docker_stop_named_ended_by_that_stop_whatever_its_code(tmp_path, stopped, healthy):
    inspect = ('[{"Name": "/vllm-k3-dp1", "Config": {"Image": "vllm/vllm-openai:kimi-k3", "Cmd": ["vllm", "serve"]}, '
               '"State": {"Status": "exited", "Running": false, "OOMKilled": false, "ExitCode": 137}}]')
    a = run(make_bundle(tmp_path, {"gpu-a1/vllm.log": "\n".join(START + LOADED + READY + SERVING + STOP) + "\n",
                                   "gpu-a1/docker-inspect.json": inspect,
                                   "gpu-a0/terminal.log": f"ops@gpu-a0:~$ ssh gpu-a1 docker stop {stopped}\n"}))
    assert a.decision.healthy is healthy


def unit_status(unit: str, start: str, status: str) -> str:
    return text_of(f"× {unit} - {unit.split('.')[0]}", f"     Loaded: loaded (/etc/systemd/system/{unit}; static)",
                   "     Active: failed (Result: exit-code) since Wed 2026-11-18 06:50:00 UTC; 2h ago",
                   f"    Process: 5120 ExecStart={start} (code=exited, status={status})",
                   f"   Main PID: 5120 (code=exited, status={status})")


@pytest.mark.parametrize("unit, start, healthy", [
    ("vllm-qwen.service", "/opt/venv/bin/vllm serve m", False),
    ("backup-models.service", "/usr/local/sbin/backup-models.sh", True)])   # near miss: a program not the deployment's
def test_only_a_run_of_the_deployment_ending_abnormally_makes_a_quiet_bundle_inconclusive(tmp_path, unit, start,
                                                                                        healthy):
    a = run(make_bundle(tmp_path, {"gpu-a1/vllm.log": "\n".join(START + LOADED + READY + SERVING) + "\n",
                                   "gpu-a1/systemctl-status.txt": unit_status(unit, start, "12/n/a")}))
    assert a.decision.healthy is healthy
    assert a.decision.outcome.state == ("serving" if healthy else "inconclusive")


def test_a_run_that_ended_abnormally_with_its_failure_logged_keeps_that_cause(tmp_path):
    a = run(make_bundle(tmp_path, {"gpu-a1/vllm.log": "\n".join(START + LOADED + READY + SERVING + [OOM]) + "\n",
                                   "kubectl-describe-pod.txt": last_state("Error", 1)}))
    assert state(a.decision) == ("crashed", "oom.inference")


def _stats(m: int, s: int) -> str:
    return api(m, s, "Avg prompt throughput: 80.0 tokens/s, Avg generation throughput: 210.5 tokens/s, Running: 2 "
                     "reqs, Waiting: 0 reqs, GPU KV cache usage: 8.0%")


@pytest.mark.parametrize("after_stop, want", [
    ([_stats(6, 0), _stats(6, 10)], "serving"),                                   # the new pod serves on
    ([], "stopped"),                                                              # near miss: nothing after
    ([_stats(6, 0), _stats(6, 10), api(7, 0, "Shutting down")], "stopped")])     # near miss: it is stopped too
def test_a_rolling_update_whose_new_server_serves_after_the_old_one_stops_is_serving(tmp_path, after_stop, want):
    new = [api(4, 30, "vLLM API server version 0.27.2"), api(4, 50, "Application startup complete.")] + after_stop
    # (both pods on one node: they share its attempts)
    d = decision(tmp_path, {"gpu-a1/old-pod.log": START + LOADED + READY + SERVING + STOP, "gpu-a1/new-pod.log": new})
    assert state(d) == (want, None) and d.healthy


@pytest.mark.parametrize("new_at, want", [(6, "serving"),    # the new pod, on another node, serves on
                                           (4, "stopped")])   # near miss: its stats end before the old one stops
def test_a_rolling_update_in_one_export_of_both_nodes_lines_is_serving(tmp_path, new_at, want):
    """A log platform's export holds the old pod's and the new pod's lines in one file, each line behind its host."""
    old = [f"gpu-a1: {line}" for line in START + LOADED + READY + SERVING + STOP]
    new = [f"gpu-a2: {line}" for line in (api(4, 20, "Application startup complete."), _stats(new_at, 30),
                                          _stats(new_at, 40))]   # (ready before the old pod stops)
    d = decision(tmp_path, {"export.log": sorted(old + new, key=lambda line: line.split(" 11-18 ")[-1][:8])})
    assert state(d) == (want, None) and d.healthy


@pytest.mark.parametrize("oom_first, cause", [(True, True),     # the worker's OOM, then the head's stop
                                              (False, False)])  # near miss: written after the stop: its trail
def test_a_worker_nodes_failure_in_the_second_of_its_heads_stop_is_ordered_by_their_one_files_lines(tmp_path,
                                                                                                   oom_first, cause):
    """One job's output holds both nodes' lines, stamped in whole seconds: the file's order is the order."""
    head = [f"gpu-a1: {line}" for line in START + LOADED + READY + SERVING]
    oom = [f"gpu-a2: {worker(4, 30, line, pid=5511, level='ERROR')}" for line in (
        "rank 1 in world size 2 is assigned as DP rank 0, PP rank 1, TP rank 0, EP rank 0",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.12 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 604.25 MiB is free.")]
    stop = [f"gpu-a1: {api(4, 30, line)}" for line in ("Shutting down FastAPI HTTP server.",
                                                       "[shutdown] EngineCore: trigger received signal=SIGTERM")]
    d = decision(tmp_path, {"job.out": head + (oom + stop if oom_first else stop + oom)})
    assert (d.root is not None and d.root.category == "oom.inference") == cause, (d.outcome, d.root)


WORKER_NODE_STOP = [f"[2026-11-18 07:{t},588 I 96 96] (raylet) {text}" for t, text in [
    ("00:30", "main.cc:180: Setting cluster ID to: 2a1f"), ("05:00", "main.cc:483: received SIGTERM. Existing local "
                                                                      "drain request = None")]]
PEER_GONE = [api(5, 1, "ray.exceptions.ActorDiedError: The actor died because its node has died. Node Id: 85a3",
                 "ERROR"), DEAD.replace("05:02", "05:03")]


@pytest.mark.parametrize("head, healthy", [
    (START + LOADED + READY + SERVING, True),   # its head served; the worker node was stopped; the head's errors follow
    (START + LOADED, False),          # near miss: stopped while it started (as likely the start's failure)
    (START + LOADED + READY, False),  # near miss: the head prints no engine stats (it serves no instance of its own)
])
def test_a_worker_node_stopped_while_its_head_served_stopped_the_deployment(tmp_path, head, healthy):
    d = decision(tmp_path, {"gpu-a1/vllm.log": head + PEER_GONE, "gpu-b2/raylet.out": WORKER_NODE_STOP})
    assert d.healthy is healthy, (d.outcome, d.root)
    assert d.healthy is False or d.outcome.state == "stopped"


IB_FLUSHED = ("[2026-11-18 07:{t}] gpu-b2:3377:3402 [4] transport/net_ib.cc:2319 NCCL WARN NET/IB : Got completion "
              "from peer 10.52.8.17<50214> with status=5 opcode=0 len=0 vendor err 249 (Recv)")
HEADLESS = [worker(1, 0, "Starting to load model m...", pid=3377), worker(2, 0, "Model loading took 15.2 GiB and 60.1 "
                                                                               "seconds", pid=3377)]


@pytest.mark.parametrize("t, signal, healthy", [
    ("05:03", True, True),     # the head was asked to stop; the worker node's peers went away
    ("04:50", True, False),    # near miss: the worker failed before the head stopped
    ("05:03", False, False),   # near miss: the head wound down by itself (as after a failure of its own)
])
def test_a_worker_nodes_errors_after_its_head_was_asked_to_stop_are_the_stops_trail(tmp_path, t, signal, healthy):
    asked = [api(5, 0, "[shutdown] EngineCore: trigger received signal=SIGTERM")] if signal else []
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + asked + STOP,
                            "gpu-b2/vllm.log": HEADLESS + [IB_FLUSHED.format(t=t)]})
    assert d.healthy is healthy, (d.outcome, d.root)


def test_near_miss_a_failure_before_the_stop_is_the_cause(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [OOM] + STOP + [DEAD]})
    assert state(d) == ("crashed", "oom.inference") and not d.healthy


def test_a_failure_before_the_server_is_ready_never_readies_it(tmp_path):
    oom = worker(1, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [worker(1, 0, "Starting to load model m..."), oom]})
    assert state(d) == ("never_ready", "oom.load")


BIND = api(3, 1, "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already "
                "in use", "ERROR")


def test_a_port_never_bound_after_start_landmarks_never_readies_the_server(tmp_path):
    # uvicorn runs the app's startup before it binds: 'Application startup complete.' came before the bind failed
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + [BIND]})
    assert state(d) == ("never_ready", "net.port_in_use")


def test_near_miss_another_failure_after_the_same_landmarks_crashes_a_ready_server(tmp_path):
    crash = api(3, 1, "RuntimeError: CUDA error: an illegal memory access was encountered", "ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + [crash]})
    assert state(d) == ("crashed", "gpu.illegal_access")


IMPORT_FAIL = [api(40, 9, "Automatically detected platform cuda."),
               api(40, 10, "ImportError: /opt/venv/lib/python3.12/site-packages/vllm/_C.abi3.so: undefined symbol: "
                           "_ZN3c104cuda9SetDeviceEa", "ERROR")]


@pytest.mark.parametrize("log", ["gpu-a1/vllm.log", "vllm.log"])   # (a bundle that names no node too)
def test_a_start_after_a_stop_that_fails_at_import_is_a_new_attempt_that_never_readied(tmp_path, log):
    d = decision(tmp_path, {log: START + LOADED + READY + SERVING + STOP + IMPORT_FAIL})
    assert state(d) == ("never_ready", "dep.undefined_symbol")


@pytest.mark.parametrize("log", ["gpu-a1/vllm.log", "vllm.log"])
def test_near_miss_the_same_error_without_a_start_line_is_the_stop_s_trail(tmp_path, log):
    d = decision(tmp_path, {log: START + LOADED + READY + SERVING + STOP + IMPORT_FAIL[1:]})
    assert state(d) == ("stopped", None) and d.healthy


def pods(status: str, restarts: str) -> str:
    return ("NAME         READY   STATUS    RESTARTS   AGE   IP           NODE\n"
            f"vllm-0       0/1     {status}   {restarts}   47m   10.0.4.17    gpu-a1\n")


def _failing_starts(n: int) -> list[str]:
    """`n` starts of the same server, ten minutes apart, each failing the same way at load."""
    oom = worker(1, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", level="ERROR")
    once = START + [oom]
    return [line.replace("07:0", f"07:{2 * k}").replace("07:1", f"07:{2 * k + 1}") for k in range(n) for line in once]


DOCKER_PS = "CONTAINER ID   IMAGE          STATUS\n7d3c0e91b5a2   vllm:0.18.0   {}\n"


@pytest.mark.parametrize("starts, listing, want", [
    (3, None, "restart_loop"),                                    # started again and again
    (2, None, "never_ready"),                                     # near miss: a second start may be a retry by hand
    (2, pods("CrashLoopBackOff", "1 (38s ago)"), "restart_loop"),  # its orchestrator restarted it by itself
    (2, DOCKER_PS.format("Restarting (1) 6 seconds ago"), "restart_loop"),  # docker's restart policy restarts it
    (2, DOCKER_PS.format("Up 6 seconds"), "never_ready"),                    # near miss: up, not restarting
])
def test_a_failure_in_every_start_is_a_restart_loop_when_something_restarts_it(tmp_path, starts, listing, want):
    files = {"gpu-a1/vllm.log": _failing_starts(starts)}
    if listing:
        files["kubectl-get-pods.txt"] = listing
    assert state(decision(tmp_path, files)) == (want, "oom.load")


@pytest.mark.parametrize("peers_at, went_on", [("07:01:00", None),    # its peers' start lines in the same second
                                              ("07:01:30", 4)])     # near miss: the node's work half a minute on
def test_a_whole_nodes_fault_is_not_survived_by_its_other_processes_lines_in_the_same_second(tmp_path, peers_at,
                                                                                            went_on):
    from types import SimpleNamespace
    from k3logs.diagnose.outcome import Lifecycle
    error = worker(1, 0, "torch.AcceleratorError: CUDA error: invalid device ordinal", pid=4718, level="ERROR")
    peers = [f"(Worker_TP{r} pid={4711 + r}) INFO 11-18 {peers_at} [parallel_state.py:1] world_size=8 rank={r} "
             f"local_rank={r} distributed_init_method=tcp://127.0.0.1:41003 backend=nccl" for r in (3, 4)]
    a = run(make_bundle(tmp_path, {"gpu-a1/vllm.log": "\n".join(START + [error] + peers) + "\n"}))
    life = Lifecycle(a.events, {"gpu-a1/vllm.log"})
    f = next(f for f in a.decision.findings if f.line == 3)
    at = life.progress_after(f, node_wide=True)
    assert (at.line if at else None) == went_on


@pytest.mark.parametrize("crashing, want", [("nvidia-dcgm-exporter-p7w2q", "crashed"),  # another workload's loop
                                             ("kimi-k3-0", "restart_loop")])          # near miss: its own pod's
# (while it served: before, a pod of another name may be a part it waits for)
def test_only_restarts_of_the_deployments_own_pods_make_its_failure_a_loop(tmp_path, crashing, want):
    listing = ("NAME                         READY   STATUS             RESTARTS         AGE   IP            NODE\n"
               f"{crashing:<28} 0/1     CrashLoopBackOff   23 (2m11s ago)   9d    10.244.23.14  gpu-a1\n")
    dead = [api(4, 30, "EngineCore encountered a fatal error.", level="ERROR"),
            worker(4, 30, "torch.AcceleratorError: CUDA error: uncorrectable ECC error encountered", level="ERROR")]
    files = {"pods/kimi-k3-0/vllm.log": START + LOADED + READY + SERVING + dead, "kubectl-get-pods.txt": listing,
             "kubectl-get-pods-default.txt": "NAME        READY   STATUS    RESTARTS   AGE   IP           NODE\n"
                                             "kimi-k3-0   1/1     Running   0          9d    10.244.23.5  gpu-a1\n"}
    assert decision(tmp_path, files).outcome.state == want


@pytest.mark.parametrize("banner, want", [
    (" ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.15.1", "restart_loop"),   # a newer server's version, in its banner
    ("  █▄█▀ █     █     █     █  model   m", "never_ready"),          # near miss: the banner's model line
])
def test_a_banner_that_prints_the_version_begins_an_attempt(tmp_path, banner, want):
    log = [line.replace("vLLM API server version 0.27.2", banner) for line in _failing_starts(3)]
    assert state(decision(tmp_path, {"gpu-a1/vllm.log": log})) == (want, "oom.load")


@pytest.mark.parametrize("listing, want", [
    (pods("CrashLoopBackOff", "4 (1m ago)"), "restart_loop"),   # restarted again and again
    (pods("CrashLoopBackOff", "1 (38s ago)"), "crashed"),       # near miss: one crash, restarted once
    (None, "crashed"),
])
def test_a_crash_loop_needs_two_restarts_where_the_bundle_counts_them(tmp_path, listing, want):
    files = {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [OOM]}
    if listing:
        files["kubectl-get-pods.txt"] = listing
    assert state(decision(tmp_path, files))[0] == want


def test_near_miss_start_lines_printed_together_are_one_start(tmp_path):
    oom = worker(1, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", level="ERROR")
    same_start = START + [api(0, 1, "args: Namespace(model='m', tensor_parallel_size=1)")]
    assert state(decision(tmp_path, {"gpu-a1/vllm.log": same_start + [oom]})) == ("never_ready", "oom.load")


def test_a_bundle_with_no_log_of_the_deployment_is_inconclusive(tmp_path):
    d = decision(tmp_path, {"gpu-a1/dmesg.txt": ["[12.000000] Linux version 6.8.0 (builder@host) #1 SMP"]})
    assert state(d) == ("inconclusive", None) and not d.healthy


def test_logs_that_end_before_ready_with_nothing_abnormal_are_inconclusive(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED})
    assert state(d) == ("inconclusive", None) and not d.healthy


@pytest.mark.parametrize("lines, phase", [(START + LOADED, None),                    # inconclusive: failed in no phase
                                          (START + LOADED + READY + SERVING, "serving")])  # near miss: healthy
def test_an_inconclusive_report_names_no_phase_a_healthy_one_the_phase_it_reached(tmp_path, lines, phase):
    from conftest import report_of
    root = make_bundle(tmp_path, {"gpu-a1/vllm.log": "\n".join(lines) + "\n"})
    assert report_of(run(root)).phase == phase


def test_server_errors_after_ready_while_the_engine_runs_are_failing_requests(tmp_path):
    failing = [api(4, 10 + i, f'10.0.0.{i}:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error')
               for i in range(3)]
    idle = [api(4, 20 + i, "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, "
                           "Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%") for i in range(3)]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + failing + idle})
    assert d.outcome.state == "failing_requests" and not d.healthy


def test_a_request_that_failed_while_the_server_went_on_generating_was_survived(tmp_path):
    failing = [api(4, 10 + i, f'10.0.0.{i}:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error')
               for i in range(2)]
    busy = [api(4, 20 + i, "Avg prompt throughput: 80.0 tokens/s, Avg generation throughput: 310.0 tokens/s, "
                           "Running: 5 reqs, Waiting: 0 reqs, GPU KV cache usage: 9.0%") for i in range(2)]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + failing + busy})
    assert state(d) == ("serving", None) and d.healthy
    assert all(f.set_aside.startswith("survived") for f in d.findings if f.category == "symptom.http_error")


@pytest.mark.parametrize("times, state", [(3, "failing_requests"),   # the same failure on every such request
                                          (2, "serving")])            # near miss: twice, between successes
def test_a_request_failure_that_recurs_while_others_succeed_fails_a_kind_of_request(tmp_path, times, state):
    lines = []
    for i in range(times):
        lines += [api(4, 10 + 2 * i, f'10.0.0.{i}:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error'),
                  api(4, 11 + 2 * i, "Avg prompt throughput: 80.0 tokens/s, Avg generation throughput: 310.0 tokens/s, "
                                     "Running: 5 reqs, Waiting: 0 reqs, GPU KV cache usage: 9.0%")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + lines})
    assert d.outcome.state == state and d.healthy == (state == "serving")


BUSY = [api(4, s, "Avg prompt throughput: 80.0 tokens/s, Avg generation throughput: 310.0 tokens/s, Running: 48 reqs, "
                  "Waiting: 16 reqs, GPU KV cache usage: 74.0%") for s in (50, 59)]


def gateway(s: int, status: int) -> str:
    """An nginx access log line in front of the server (another process: it logs no work of its own)."""
    return f'10.30.9.203 - - [18/Nov/2025:07:04:{s:02d} +0000] "POST /v1/chat/completions HTTP/1.1" {status} 197 "-" "httpx"'


@pytest.mark.parametrize("status, state", [(503, "serving"),             # a full server refusing, again and again
                                           (500, "failing_requests")])   # near miss: a kind of request fails
def test_refusals_for_capacity_the_server_answered_after_were_survived_however_often(tmp_path, status, state):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + BUSY,
                            "gpu-a1/nginx-access.log": [gateway(10 + i, status) for i in range(5)]})
    assert d.outcome.state == state and d.healthy == (state == "serving")


def test_near_miss_refusals_with_nothing_generated_after_them_fail_requests(tmp_path):
    idle = [api(4, s, "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, "
                      "Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%") for s in (50, 59)]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + idle,
                            "gpu-a1/nginx-access.log": [gateway(10 + i, 503) for i in range(5)]})
    assert d.outcome.state == "failing_requests" and not d.healthy


IDLE = [api(4, s, "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, "
                  "Waiting: 0 reqs, GPU KV cache usage: 0.0%") for s in (50, 59)]


@pytest.mark.parametrize("after, healthy", [(BUSY, True),     # the deployment went on generating
                                            (IDLE, False)])   # near miss: nothing generated after it
def test_a_refusal_by_a_gateway_on_no_node_the_deployment_generated_after_was_survived(tmp_path, after, healthy):
    """The gateway's log is in a folder of its own, on none of the deployment's two nodes: its one 503 (a new pod of
    a rolling update not ready yet) was survived if the deployment's server generated after it."""
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + after,
                            "gpu-b2/worker.log": [worker(1, 0, "Starting to load model m...", pid=5150)],
                            "gateway/nginx-access.log": [gateway(10, 503)]})
    assert d.healthy == healthy


def _raised(m: int) -> list[str]:
    """A request's handler raising a known error (a module its option needs is not installed)."""
    return [api(m, 10, text, "ERROR") for text in (
        "Error in chat completion stream generator.", "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/structured_output/backend_xgrammar.py", line 40, '
        'in validate_xgrammar_grammar', "    import xgrammar as xgr", "ModuleNotFoundError: No module named 'xgrammar'")]


@pytest.mark.parametrize("raised, want", [(True, ("failing_requests", "dep.missing_module")),   # every such request
                                          (False, ("serving", None))])      # near miss: a warning that recurs
def test_a_known_exception_that_recurs_while_others_succeed_fails_a_kind_of_request(tmp_path, raised, want):
    busy = "Avg prompt throughput: 80.0 tokens/s, Avg generation throughput: 310.0 tokens/s, Running: 5 reqs, " \
           "Waiting: 0 reqs, GPU KV cache usage: 9.0%"
    lines = []
    for m in range(4, 7):
        lines += (_raised(m) if raised else [api(m, 10, "Failed to import from vllm._rocm_C with ModuleNotFoundError("
                                                        "\"No module named 'vllm._rocm_C'\")", "WARNING")])
        lines.append(api(m, 20, busy))
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + lines})
    assert state(d) == want


@pytest.mark.parametrize("minutes, stopped, state", [
    (12, True, "failing_requests"),   # the API server outlived its engine
    (1, False, "failing_requests"),   # it still answered, failing, when the bundle was taken
    (1, True, "crashed")])            # near miss: it ended within a minute
def test_a_server_that_answers_500_for_minutes_after_its_engine_died_fails_requests(tmp_path, minutes, stopped, state):
    dead = [OOM, api(4, 31, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.", "ERROR")]
    failing = [api(4 + m, 40, f'10.0.0.{m}:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error')
               for m in range(minutes + 1)]
    stop = [api(5 + minutes, 0, "Shutting down"), api(5 + minutes, 1, "Application shutdown complete.")] * stopped
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + dead + failing + stop})
    assert (d.outcome.state, d.root.category) == (state, "oom.inference")


def test_near_miss_requests_refused_before_ready_are_a_probe(tmp_path):
    probe = [api(0, 30, '10.0.0.9:5000 - "GET /v1/models HTTP/1.1" 503 Service Unavailable')]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + probe + LOADED + READY + SERVING})
    assert state(d) == ("serving", None)


# ------------------------------------------------------------------------------------------------------
# what the service survived is not a cause
# ------------------------------------------------------------------------------------------------------
ROCM = worker(0, 5, "Failed to import from vllm._rocm_C with ModuleNotFoundError(\"No module named "
                    "'vllm._rocm_C'\")", level="WARNING")


def test_an_error_its_process_went_on_from_is_survived(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [ROCM] + LOADED + READY + SERVING})
    assert state(d) == ("serving", None)
    assert any(f.set_aside and f.set_aside.startswith("survived") for f in d.findings)


def _rpc_error(m: int, s: int) -> list[str]:
    """A worker's exception in a call its engine made ('WorkerProc hit an exception.'), its traceback in full."""
    return [worker(m, s, text, level="ERROR") for text in [
        "WorkerProc hit an exception.", "Traceback (most recent call last):",
        '  File "/usr/lib/vllm/lora/worker_manager.py", line 102, in _load_adapter',
        "FileNotFoundError: [Errno 2] No such file or directory: '/adapters/a7/adapter_config.json'"]]


@pytest.mark.parametrize("after, survived", [
    ([_stats(4, 18), _stats(4, 28), _stats(4, 38)], True),   # its engine generates on: the worker is still there
    ([_stats(4, 18)], False),     # near miss: only the first stats after it, which may count work done before it
    ([api(4, 18, "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 4 reqs, "
                 "Waiting: 9 reqs, GPU KV cache usage: 9.0%")] * 3, False),   # near miss: nothing generated after
    # near miss: two engines on the node (another replica's server, pid 2, generates on): whose worker failed?
    ([x.replace("pid=1)", "pid=2)") for x in SERVING + [_stats(4, 18), _stats(4, 28), _stats(4, 38)]], False),
])
def test_a_workers_error_while_serving_is_survived_when_its_engine_generates_on(tmp_path, after, survived):
    # a worker shows no work of its own once it serves: the engine's stats, another process's, say it is there
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + _rpc_error(4, 10) + after})
    assert d.healthy is survived, (d.outcome, d.root)
    assert (next(f for f in d.findings if f.category == "symptom.worker_died").set_aside or "").startswith(
        "survived") is survived


def _rejected(s: int, status: str, pid: int = 1) -> list[str]:
    """A request's validation error as the API server logs it, then the response it gave."""
    return [api(4, s, text, "ERROR") for text in [
        "Error in preprocessing prompt inputs", "Traceback (most recent call last):",
        '  File "/usr/lib/vllm/multimodal/processing.py", line 1451, in _apply_hf_processor_mm_only',
        "ValueError: height:17 or width:1240 must be larger than factor:28"]] + [   # (uvicorn's line: no time)
        f'(APIServer pid={pid}) INFO:     10.0.0.9:4411 - "POST /v1/chat/completions HTTP/1.1" {status}']


@pytest.mark.parametrize("status, pid, healthy", [
    ("400 Bad Request", 1, True),                 # refused, again and again: the client's error, however often
    ("500 Internal Server Error", 1, False),      # near miss: the server failed the request
    ("400 Bad Request", 2, False),                # near miss: another process's response
])
def test_an_exception_its_process_answered_with_a_4xx_is_the_clients_error(tmp_path, status, pid, healthy):
    rejected = [line for s in (10, 20, 30) for line in _rejected(s, status, pid)]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + rejected + LATER})
    assert d.healthy is healthy, (d.outcome, d.root)


@pytest.mark.parametrize("port, cause", [("13345", True),   # the port the deployment's arguments name
                                         ("9835", False)])   # near miss: a monitoring probe's port
def test_a_firewalls_drop_is_about_the_deployment_only_on_a_port_it_names(tmp_path, port, cause):
    args = api(0, 1, "non-default args: {'model': 'm', 'data_parallel_size': 16, 'data_parallel_rpc_port': 13345}")
    drop = (f"2026-11-18T07:02:30+0000 gpu-a1 kernel: nft-drop-in: IN=bond0 OUT= MAC=b8:3f:d2:6a:10:c4:b8:3f:d2:6a:22:e0:"
            f"08:00 SRC=10.0.0.2 DST=10.0.0.1 LEN=60 TOS=0x00 PREC=0x00 TTL=64 ID=1 DF PROTO=TCP SPT=40000 DPT={port} "
            "WINDOW=64240 RES=0x00 SYN URGP=0")
    d = decision(tmp_path, {"gpu-a1/vllm.log": [START[0], args] + LOADED, "gpu-a1/journalctl-k.txt": [drop]})
    found = next(f for f in d.findings if f.sig == "firewall-dropped-deployment-port")
    assert (found.set_aside is None) is cause
    assert (d.root is not None and d.root.category == "nccl.bootstrap") is cause


@pytest.mark.parametrize("src, cause", [("10.0.0.2", True),    # the deployment's other node (NCCL's ports: ephemeral)
                                        ("10.0.0.9", False)])  # near miss: a host that runs none of it
def test_a_firewalls_drop_of_another_deployment_node_s_traffic_is_about_the_deployment_whatever_the_port(
        tmp_path, src, cause):
    drop = (f"2026-11-18T07:02:30+0000 gpu-a1 kernel: nft-drop-in: IN=bond0 OUT= MAC=b8:3f:d2:6a:10:c4:b8:3f:d2:6a:22:"
            f"e0:08:00 SRC={src} DST=10.0.0.1 LEN=60 TOS=0x00 PREC=0x00 TTL=64 ID=1 DF PROTO=TCP SPT=40000 DPT=45771 "
            "WINDOW=64240 RES=0x00 SYN URGP=0")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED, "gpu-a2/vllm.log": [worker(1, 0, "Starting to load "
                                                                                              "model m...")],
                            "gpu-a1/journalctl-k.txt": [drop],
                            "hosts": ["10.0.0.1 gpu-a1", "10.0.0.2 gpu-a2", "10.0.0.9 mon-01"]})
    found = next(f for f in d.findings if f.sig == "firewall-dropped-deployment-port")
    assert (found.set_aside is None) is cause


@pytest.mark.parametrize("src, dport, root", [
    ("10.0.0.2", "29511", "firewall-dropped-deployment-port"),
    ("10.0.0.9", "9100", "torch-store-unreachable")])   # near miss: a monitoring host's probe dropped that second
def test_a_firewalls_drop_of_the_rendezvous_port_is_why_the_connect_failed_in_that_second(tmp_path, src, dport, root):
    """node-b cannot reach the rendezvous store on node-a ('No route to host') in the second node-a's firewall logs
    rejecting node-b's packet to the store's port: the kernel says why the connect failed, so the drop is the root."""
    store = "(Worker_TP0 pid=220) WARNING 11-18 07:02:30 [utils.py:1] [c10d] The client socket has failed to " \
            "connect to [10.0.0.1]:29511 (errno: 113 - No route to host)."
    init = "(Worker_TP0 pid=220) INFO 11-18 07:02:20 [parallel_state.py:1] world_size=16 rank=8 local_rank=0 " \
           "distributed_init_method=tcp://10.0.0.1:29511 backend=nccl"
    drop = (f"2026-11-18T07:02:30+0000 gpu-a1 kernel: filter_IN_public_REJECT: IN=bond0 OUT= MAC=b8:3f:d2:6a:10:c4:b8:"
            f"3f:d2:6a:22:e0:08:00 SRC={src} DST=10.0.0.1 LEN=60 TOS=0x00 PREC=0x00 TTL=64 ID=1 DF PROTO=TCP "
            f"SPT=40000 DPT={dport} WINDOW=64240 RES=0x00 SYN URGP=0")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED, "gpu-a2/vllm.log": [init, store],
                            "gpu-a1/journalctl-k.txt": [drop],
                            "hosts": ["10.0.0.1 gpu-a1", "10.0.0.2 gpu-a2", "10.0.0.9 mon-01"]})
    assert d.root is not None and d.root.sig == root


HELPER = [f"2026-11-18T07:01:10+0000 gpu-a1 python[812]: {text}" for text in [
    "Traceback (most recent call last):", '  File "/opt/warmup.py", line 41, in wait_ready',
    "ConnectionRefusedError: [Errno 111] Connection refused"]]


def _journal(lines: list[str]) -> list[str]:
    """The lines as a journal's export (short-iso), each at its own time."""
    return [f"2026-11-18T07:{m}:{s}+0000 gpu-a1 vllm[4700]: {line}"
            for line in lines for m, s in [re.search(r"07:(\d\d):(\d\d)", line).groups()]]


def test_an_error_before_its_node_became_ready_did_not_keep_it_from_starting(tmp_path):
    # a helper's traceback while the server loads (a readiness probe's refused connect), then the server is ready
    journal = _journal(START + LOADED + READY + SERVING)
    d = decision(tmp_path, {"gpu-a1/journal.txt": sorted(journal[:3] + HELPER + journal[3:])})
    assert state(d) == ("serving", None) and d.healthy
    # near miss: the same error with no readiness after it is what the run came to
    d = decision(tmp_path / "never", {"gpu-a1/journal.txt": sorted(journal[:3] + HELPER)})
    assert d.outcome.state == "never_ready" and d.root is not None


def test_near_miss_progress_of_another_process_does_not_count(tmp_path):
    rocm = ROCM.replace("pid=4711", "pid=4999")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [rocm]})
    assert d.root is not None and d.root.category == "dep.missing_module"


def test_near_miss_an_error_that_explains_a_later_failure_was_not_survived(tmp_path):
    c_missing = worker(0, 5, "Failed to import from vllm._C with ModuleNotFoundError(\"No module named 'vllm._C'\")",
                       level="WARNING")
    op = worker(2, 30, "AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [c_missing] + LOADED + [op]})
    assert d.root is not None and (d.root.category, d.root.line) == ("dep.missing_module", 3)


C10D_RETRY = worker(1, 5, "[W1118 07:01:05.685723817 socket.cpp:755] [c10d] The client socket has failed to connect "
                         "to [gpu-a0]:29500 (errno: 111 - Connection refused).", level="WARNING")
RETRY = worker(1, 5, "gpu-a1:4711:4790 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<41233> "
                     "failed : Software caused connection abort", level="WARNING")
INIT = worker(1, 8, "world_size=2 rank=0 local_rank=0 distributed_init_method=tcp://10.0.0.1:29500 backend=nccl")
NCCL_MISMATCH = ("(VllmWorker rank=0 pid=4711) gpu-a1:4711:4790 [0] init.cc:1101 NCCL WARN Mismatched NCCL version "
                 "detected : rank 0 version 22703 rank 1 version 22707")
FAILED_START = api(1, 25, "WorkerProc failed to start.", "ERROR")


def test_a_retry_the_process_went_on_from_is_survived_though_a_later_cause_fails_it(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [RETRY, INIT, NCCL_MISMATCH, FAILED_START]})
    assert d.root is not None and d.root.category == "nccl.version_mismatch"
    (retry,) = [f for f in d.findings if f.category == "nccl.bootstrap"]
    assert retry.set_aside and retry.set_aside.startswith("survived")


def test_a_stores_connect_retry_is_a_symptom_the_processs_own_failure_outranks(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [C10D_RETRY, MODULE]})
    assert d.root is not None and d.root.category == "dep.missing_module"


def test_a_retry_its_node_went_on_from_is_no_root_when_only_an_unknown_error_follows(tmp_path):
    unknown = worker(2, 30, "KeyError: 'banned_phrases_file'", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [C10D_RETRY] + LOADED + [unknown]})
    assert d.root is not None and d.root.category == "other" and "KeyError" in d.root.text


def test_near_miss_a_retry_nothing_follows_stands_as_the_only_symptom(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [C10D_RETRY, FAILED_START]})
    assert d.root is not None and d.root.category == "nccl.bootstrap"


def test_near_miss_the_stores_connect_timing_out_is_the_cause(tmp_path):
    timeout = worker(1, 15, "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while "
                            "trying to connect to (10.0.0.1, 29500).", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [C10D_RETRY, timeout, MODULE]})
    assert d.root is not None and (d.root.category, d.root.line) == ("nccl.bootstrap", 4)


def test_near_miss_a_retry_that_only_the_failure_follows_is_the_cause(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [RETRY, INIT, FAILED_START]})
    assert d.root is not None and d.root.category == "nccl.bootstrap"


def test_a_link_that_comes_back_while_the_deployment_serves_is_survived(tmp_path):
    kernel = ["Nov 18 07:03:30 gpu-a1 kernel: mlx5_core 0000:c1:00.0 mlx5_4: Port: 1 Link DOWN",
              "Nov 18 07:03:42 gpu-a1 kernel: mlx5_core 0000:c1:00.0 mlx5_4: Port: 1 Link ACTIVE"]
    after = [api(4, 0, "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 300.0 tokens/s, Running: 2 "
                       "reqs, Waiting: 0 reqs, GPU KV cache usage: 3.0%").replace("07:04", "07:05")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + after,
                            "gpu-a1/journalctl-k.txt": kernel})
    assert state(d) == ("serving", None)


def test_near_miss_a_link_down_that_the_transport_errors_follow_is_the_cause(tmp_path):
    kernel = ["Nov 18 07:04:30 gpu-a1 kernel: mlx5_core 0000:c1:00.0 mlx5_4: Port: 1 Link DOWN"]
    nccl = [worker(4, 31, "gpu-a1:4711:4800 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB: Got completion from peer "
                          "10.0.0.2<50000> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1",
                   level="ERROR")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + nccl,
                            "gpu-a1/journalctl-k.txt": kernel})
    assert d.root is not None and d.root.category == "nccl.ib_transport"


@pytest.mark.parametrize("timeouts, survived", [(True, False),    # the EP kernels timed out on the dead link
                                                ([], True)])         # near miss: the engine went on, nothing failed
def test_a_link_down_the_expert_parallel_kernels_time_out_on_later_is_the_cause(tmp_path, timeouts, survived):
    # the engine works on for a while (its stats) before DeepEP's kernels give up on the peer behind the link
    kernel = ["Nov 18 07:03:30 gpu-a1 kernel: mlx5_core 0000:c1:00.0 mlx5_4: Port: 1 Link DOWN"]
    later = [api(4, 0, SERVING[0].split("] ", 1)[1]).replace("07:04", "07:05")]
    ep = [worker(5, 10, "DeepEP dispatch NVL receiver timeout, channel: 20, RDMA: 1, nvl: 4, src RDMA: 2, src nvl: 5",
                 level="ERROR")] if timeouts else []
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + later + ep,
                            "gpu-a1/journalctl-k.txt": kernel})
    assert d.healthy == survived
    assert survived or d.root.category == "nccl.ib_transport"


SLICE_FAILED = ("E1118 07:04:01.621444  771209 worker_pool.cpp:274] Worker: Process failed for slice (opcode: 1, "
                "source_addr: 0x7f3aec18eac8, length: 65536, local_nic: mlx5_1, peer_nic: 10.52.8.32:16111@mlx5_1): "
                "transport retry counter exceeded")
RE_ESTABLISHED = "I1118 07:04:05.630373  771209 rdma_endpoint.cpp:204] Connection re-established: " \
                 "10.52.8.31:16111@{nic} -> 10.52.8.32:16111@{nic}"


@pytest.mark.parametrize("nic, survived", [("mlx5_1", True),     # the transfer engine's own NIC reconnected
                                           ("mlx5_4", False)])   # near miss: another NIC's connection
def test_a_transfer_engine_s_retries_its_connection_came_back_from_are_survived(tmp_path, nic, survived):
    # (with no work of the engine after it: work after it would show it survived whatever reconnected, its thread
    # being no process of its own: test_an_unnamed_thread_of_the_servers_log_went_on_when_its_one_engine_did)
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [SLICE_FAILED,
                                                                                     RE_ESTABLISHED.format(nic=nic)]})
    slice_failed = next(f for f in d.findings if f.category == "nccl.ib_transport")
    assert bool(slice_failed.set_aside) == survived and (d.root is None) == survived


OOM_KILL = "Nov 18 07:04:30 {host} kernel: Memory cgroup out of memory: Killed process 31337 (VLLM::Worker_TP) " \
           "total-vm:79612908kB, anon-rss:24668408kB, file-rss:84000kB, shmem-rss:0kB, UID:0 oom_score_adj:-997"
LATER = [api(6, 0, "Avg prompt throughput: 90.0 tokens/s, Avg generation throughput: 280.0 tokens/s, Running: 3 "
                   "reqs, Waiting: 0 reqs, GPU KV cache usage: 9.0%")]


@pytest.mark.parametrize("prefill_after, survived", [([], False),       # the prefill's own log stops
                                                     (LATER, True)])    # near miss: it serves on itself
def test_a_kill_on_a_node_that_serves_by_itself_is_survived_only_by_its_own_work(tmp_path, prefill_after, survived):
    """Two instances (a prefill and a decode, each with its own API server): the decode serving on says nothing
    of the prefill whose worker the kernel killed."""
    d = decision(tmp_path, {"pd-p07/vllm.log": START + LOADED + READY + SERVING + prefill_after,
                            "pd-d02/vllm.log": START + LOADED + READY + SERVING + LATER,
                            "pd-p07/journalctl-k.txt": [OOM_KILL.format(host="pd-p07")]})
    kill = next(f for f in d.findings if f.category == "oom.host")
    assert bool(kill.set_aside) == survived
    assert (d.root is None) == survived


def test_near_miss_a_kill_on_a_headless_worker_node_lives_in_the_deployment_s_serving(tmp_path):
    """A node that prints no engine stats of its own (its engine's are the head's) went on while the head served."""
    d = decision(tmp_path, {"pd-w07/vllm.log": [worker(1, 0, "Starting to load model m...")],
                            "pd-h02/vllm.log": START + LOADED + READY + SERVING + LATER,
                            "pd-w07/journalctl-k.txt": [OOM_KILL.format(host="pd-w07")]})
    assert next(f for f in d.findings if f.category == "oom.host").set_aside.startswith("survived")


@pytest.mark.parametrize("other_after, back, state", [
    (LATER, False, "failing_requests"),                        # the other replica serves on
    (LATER + [DEAD.replace("05:02", "06:30")], False, "crashed"),   # near miss: it fails too
    (LATER, True, "serving")])   # the failed one is started again and serves to the end: back, whatever served
def test_one_instance_of_several_failing_while_another_serves_on_fails_part_of_the_requests(tmp_path, other_after,
                                                                                             back, state):
    """Two replicas behind a router, each with its own engine: one crashes; the other goes on generating (part of
    the traffic is still answered), or fails too (the service is gone); or the one that failed serves again."""
    again = [line.replace("07:0", "07:1") for line in START + LOADED + READY + SERVING] if back else []
    d = decision(tmp_path, {"rep-a1/vllm.log": START + LOADED + READY + SERVING + [OOM, DEAD] + again,
                            "rep-a2/vllm.log": START + LOADED + READY + SERVING + other_after})
    assert d.root is not None and d.root.node == "rep-a1" and d.outcome.state == state


@pytest.mark.parametrize("newest_first", [True, False])   # (the near miss: the same export, oldest first)
def test_an_export_written_newest_first_is_read_in_its_time_order(tmp_path, newest_first):
    """A log platform's export with the newest line first: the worker's death and the executor's shutdown that
    follows it, in the same second, are a crash and its trail, not a stop and what came after it."""
    lines = [f"2026-11-18T07:{m:02d}:{s:02d}Z {text}" for m, s, text in [
        (0, 0, "(APIServer pid=1) INFO 11-18 07:00:00 [api_server.py:1] vLLM API server version 0.27.2"),
        (3, 0, "(APIServer pid=1) INFO 11-18 07:03:00 [launcher.py:1] Application startup complete."),
        (4, 0, "(APIServer pid=1) INFO 11-18 07:04:00 [loggers.py:1] Engine 000: Avg prompt throughput: 120.0 tokens/s, "
               "Avg generation throughput: 340.5 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%"),
        (4, 30, "(VllmWorker rank=0 pid=4711) ERROR 11-18 07:04:30 [worker.py:1] torch.OutOfMemoryError: CUDA out of "
                "memory. Tried to allocate 2.00 GiB."),
        (4, 30, "(EngineCore pid=9) INFO 11-18 07:04:30 [multiproc_executor.py:732] Shutting down 7 remaining local "
                "workers.")]]
    d = decision(tmp_path, {"gpu-a1/export.txt": lines[::-1] if newest_first else lines})
    assert d.root is not None and d.root.category.startswith("oom") and d.outcome.state == "crashed"


TIMED_OUT = ("2026/11/18 07:{m:02d}:10 [error] 2291#2291: *55{m:02d} upstream timed out (110: Connection timed out) "
             "while reading response header from upstream, client: 10.70.2.41, server: llm, request: \"POST "
             "/v1/chat/completions HTTP/1.1\", upstream: \"http://10.60.4.11:8000/v1/chat/completions\"")


@pytest.mark.parametrize("flaps, timeouts, survived", [(4, 4, False),   # down and back again and again, 504s
                                                       (4, 0, True),    # near miss: nothing failed meanwhile
                                                       (1, 4, True)])   # near miss: once, and back
def test_a_link_that_keeps_going_down_while_requests_fail_was_not_survived(tmp_path, flaps, timeouts, survived):
    """A headless worker's link goes down and comes back again and again while the head serves on (slowly) and
    the gateway gives up on requests: the first flap is the cause, however each flap fared."""
    kernel = [line for k in range(flaps) for line in (
        f"Nov 18 07:{4 + 5 * k:02d}:30 gpu-a2 kernel: mlx5_core 0000:c1:00.0 mlx5_4: Port: 1 Link DOWN",
        f"Nov 18 07:{4 + 5 * k:02d}:36 gpu-a2 kernel: mlx5_core 0000:c1:00.0 mlx5_4: Port: 1 Link ACTIVE")]
    stats = [api(m, 0, "Avg prompt throughput: 9.0 tokens/s, Avg generation throughput: 12.5 tokens/s, Running: 40 "
                       "reqs, Waiting: 60 reqs, GPU KV cache usage: 71.0%") for m in range(5, 30, 4)]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + stats,
                            "gpu-a2/vllm.log": [worker(1, 0, "Starting to load model m...", pid=5511)],
                            "gpu-a2/journalctl-k.txt": kernel,
                            "gw/nginx-error.log": [TIMED_OUT.format(m=8 + 5 * k) for k in range(timeouts)] or [""]})
    if survived:
        assert d.root is None or d.root.file != "gpu-a2/journalctl-k.txt"
    else:
        assert (d.root.file, d.root.line) == ("gpu-a2/journalctl-k.txt", 1)


@pytest.mark.parametrize("after, survived", [
    ("Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 43 reqs, Waiting: 9 "
     "reqs, GPU KV cache usage: 41.3%", False),                        # requests running, nothing done: stalled
    ("Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 "
     "reqs, GPU KV cache usage: 0.0%", True)])                         # near miss: idle, nothing to do
def test_a_link_that_came_back_after_the_engine_stalled_for_good_was_not_survived(tmp_path, after, survived):
    kernel = ["Nov 18 07:04:31 gpu-a1 kernel: mlx5_core 0000:c1:00.0 mlx5_4: Port: 1 Link DOWN",
              "Nov 18 07:06:09 gpu-a1 kernel: mlx5_core 0000:c1:00.0 mlx5_4: Port: 1 Link ACTIVE"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING
                            + [api(4, 40 + k, after) for k in range(0, 20, 10)] + [api(6, s, after) for s in (0, 30)],
                            "gpu-a1/journalctl-k.txt": kernel})
    assert (d.root is None) == survived
    if not survived:
        assert (d.root.file, d.root.line) == ("gpu-a1/journalctl-k.txt", 1)


@pytest.mark.parametrize("stop_at, state", [(9, "stopped"),    # stopped by hand four minutes into the stall
                                             (4, "crashed")])   # near miss: ended seconds after its one stuck line
def test_the_one_stuck_stats_line_v1_logs_stands_until_the_servers_next_line(tmp_path, stop_at, state):
    """V1 logs a second stats line of no throughput at debug level only: one stuck line, then quiet while the API
    server lives on, is a stall that lasts until its next line."""
    xid = "Nov 18 07:04:29 gpu-a1 kernel: NVRM: Xid (PCI:0000:3a:00): 119, pid=4711, name=pt_main_thread, " \
          "Timeout after 6s of waiting for RPC response from GPU2 GSP!"
    stop = [api(stop_at, 50 if stop_at == 4 else 0, "Received SIGINT, shutting down"),
            api(stop_at, 50 if stop_at == 4 else 0, "Shutting down FastAPI HTTP server.")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [_stats(4, 30), api(4, 40, STUCK)]
                            + stop, "gpu-a1/kern.log": [xid]})
    assert (d.outcome.state, d.root.sig) == (state, "nvrm-xid")


GSP = "Nov 18 07:04:29 gpu-a1 kernel: NVRM: Xid (PCI:0000:18:00): 119, name=VLLM::Worker_TP, Timeout after 6s " \
      "of waiting for RPC response from GPU0 GSP!"
STUCK = "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 43 reqs, Waiting: 9 " \
        "reqs, GPU KV cache usage: 41.3%"


@pytest.mark.parametrize("worked_until, survived", [(40, False),   # work only in the first stats after it
                                                    (70, True)])   # near miss: stats 40 s after it count work
def test_a_gpu_fault_whose_next_stats_alone_count_work_was_not_survived(tmp_path, worked_until, survived):
    """vLLM's stats cover the interval since the ones before: the first after a fault (its time to the second)
    may count work done before it, and the engine stalled from then on."""
    stats = [_stats(4, 30)] + [_stats(4 + s // 60, s % 60) if s <= worked_until else api(4 + s // 60, s % 60, STUCK)
                               for s in range(40, 160, 10)]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + stats,
                            "gpu-a1/journalctl-k.txt": [GSP]})
    assert (d.root is not None and d.root.file == "gpu-a1/journalctl-k.txt") is not survived, (d.outcome, d.root)


@pytest.mark.parametrize("every, after, survived", [
    (30, [31], False),         # stats every 30 s: the one 31 s after the fault counts the 30 s before it, then nothing
    (10, [31, 41], True)])     # near miss: every 10 s, the one 31 s after counts work after it
def test_the_stats_interval_the_log_shows_is_how_far_the_first_stats_after_a_gpu_fault_look_back(tmp_path, every,
                                                                                                 after, survived):
    """VLLM_LOG_STATS_INTERVAL=30: each stats line counts the interval before it, so the first after the fault may
    count only work done before it."""
    times = list(range(4 * 60 - 2 * every, 4 * 60 + 1, every)) + [4 * 60 + 30 + a for a in after]
    stats = [_stats(t // 60, t % 60) for t in times]
    fault = GSP.replace("07:04:29", "07:04:30")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + stats,
                            "gpu-a1/journalctl-k.txt": [fault]})
    assert (d.root is not None and d.root.file == "gpu-a1/journalctl-k.txt") is not survived, (d.outcome, d.root)


XID_A2 = "Nov 18 07:04:29 gpu-a2 kernel: NVRM: Xid (PCI:0000:18:00): 74, name=pt_main_thread, NVLink: fatal error " \
         "detected on link 11"
INIT_A2 = "gpu-a2:{pid}:{pid} [0] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0 busId 18000 - Init COMPLETE"


@pytest.mark.parametrize("began, start, survived", [
    ("07:05:00", True, False),   # the worker started again after the fault
    ("07:00:00", True, True),    # near miss: it started before it
    ("07:05:00", False, True)])  # near miss: a log whose head was cut away after the fault starts nothing
def test_work_of_a_process_started_after_a_device_fault_does_not_show_the_fault_was_survived(tmp_path, began, start,
                                                                                               survived):
    platform = f"(Worker pid=5511) INFO 11-18 {began} [__init__.py:1] Automatically detected platform cuda."
    worker_log = [platform] * start + [
                  f"(Worker pid=5511) INFO 11-18 {began} [worker.py:1] world_size=2 rank=1 local_rank=0 "
                  "distributed_init_method=env:// backend=nccl",
                  "(Worker pid=5511) INFO 11-18 07:05:00 [worker.py:1] Starting to load model m...",
                  INIT_A2.format(pid=5511)]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING
                            + [api(4, 30, "EngineCore encountered a fatal error.", "ERROR")],
                            "gpu-a2/worker.log": worker_log, "gpu-a2/journalctl-k.txt": [XID_A2]})
    assert (d.root is not None and d.root.file == "gpu-a2/journalctl-k.txt") is not survived, (d.outcome, d.root)


SEGV_A2 = "Nov 18 07:04:29 gpu-a2 kernel: python3[2204117]: segfault at 0 ip 00007f5e2c1b3a40 sp 00007ffd4e1c8f20 " \
          "error 4 in libtorch_cuda.so[7f5e2a000000+2c1f000]"
XID48_A2 = "Nov 18 07:30:14 gpu-a2 kernel: NVRM: Xid (PCI:0000:5d:00): 48, pid=3318204, name=pt_main_thread, An " \
           "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."
WATCHDOG_A1 = "[rank0]:[E1118 07:40:15.412207911 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective " \
              "operation timeout: WorkNCCL(SeqNum=808, OpType=SEND, NumelIn=9801523, NumelOut=9801523, " \
              "Timeout(ms)=600000) ran for 600020 milliseconds before timing out."


@pytest.mark.parametrize("xid_on, root_line", [
    ("gpu-a2", 2),    # an Xid later on the crash's node came between: the nearer cause of the timeout
    (None, 1),        # near miss: nothing between: the crash explains it
    ("gpu-a3", 1)])   # near miss: a fault of a third node says nothing of which of the two the timeout is
def test_a_collective_timeout_on_another_node_is_the_nearer_causes_not_a_crash_the_service_ran_on_after(
        tmp_path, xid_on, root_line):
    stats = [_stats(m, 0) for m in range(5, 30, 5)]
    xid = {f"{xid_on}/journalctl-k.txt": [XID48_A2.replace("gpu-a2", xid_on)]} if xid_on == "gpu-a3" else {}
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + stats + [WATCHDOG_A1],
                            "gpu-a2/vllm.log": [worker(1, 0, "Starting to load model m...", pid=5511)],
                            "gpu-a3/vllm.log": [worker(1, 0, "Starting to load model m...", pid=6611)], **xid,
                            "gpu-a2/journalctl-k.txt": [SEGV_A2] + ([XID48_A2] if xid_on == "gpu-a2" else [])})
    assert (d.root.file, d.root.line) == ("gpu-a2/journalctl-k.txt", root_line), d.root


CONNECT_FAILED = worker(1, 2, "gpu-a1:4712:4790 [1] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
                              "10.0.0.2<41233> failed : Software caused connection abort", pid=4712, level="WARNING")
ASSIGNED = worker(1, 9, "rank 0 in world size 2 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0")
MODULE = worker(1, 20, "ModuleNotFoundError: No module named 'bitsandbytes'", level="ERROR")


def test_a_rendezvous_retry_is_survived_when_another_process_of_the_node_joins_the_group(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [CONNECT_FAILED, ASSIGNED, MODULE]})
    assert d.root is not None and d.root.category == "dep.missing_module"
    (retry,) = [f for f in d.findings if f.category == "nccl.bootstrap"]
    assert retry.set_aside and "its group formed" in retry.set_aside


def test_near_miss_a_rendezvous_retry_no_process_of_its_node_gets_past_is_the_cause(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [CONNECT_FAILED, MODULE],
                            "gpu-a2/vllm.log": [ASSIGNED]})
    assert d.root is not None and d.root.category == "nccl.bootstrap"


def test_near_miss_a_line_that_only_starts_the_meeting_shows_no_group(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [CONNECT_FAILED, INIT, FAILED_START]})
    assert d.root is not None and d.root.category == "nccl.bootstrap"


def test_retries_in_one_second_do_not_keep_each_other_alive(tmp_path):
    retries = [RETRY.replace("07:01:05", "07:01:06")] * 3
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [RETRY] + retries + [INIT, NCCL_MISMATCH, FAILED_START]})
    assert d.root is not None and d.root.category == "nccl.version_mismatch"
    assert all(f.set_aside for f in d.findings if f.category == "nccl.bootstrap")


def test_a_failure_the_start_fails_with_in_the_same_second_is_the_nearer_cause(tmp_path):
    failed = worker(1, 20, "EngineCore failed to start.", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [RETRY, INIT, failed, MODULE]})
    assert d.root is not None and d.root.category == "dep.missing_module"


FLAP = ["Nov 18 07:03:30 gpu-a1 kernel: mlx5_core 0000:2a:00.1 ens2f1np1: Link down",
        "Nov 18 07:03:31 gpu-a1 kernel: mlx5_core 0000:2a:00.1 ens2f1np1: Link up"]


def test_a_port_that_comes_back_before_anything_fails_is_survived_though_the_run_fails_later(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + [OOM], "gpu-a1/journalctl-k.txt": FLAP})
    assert d.root is not None and d.root.category.startswith("oom.")
    (flap,) = [f for f in d.findings if f.category == "nccl.ib_transport"]
    assert flap.set_aside and "survived: it recovered" in flap.set_aside


def test_near_miss_another_port_coming_back_is_no_recovery(tmp_path):
    other = [FLAP[0], FLAP[1].replace("0000:2a:00.1 ens2f1np1", "0000:2b:00.0 ens3f0np0")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + [OOM], "gpu-a1/journalctl-k.txt": other})
    assert d.root is not None and d.root.category == "nccl.ib_transport"


@pytest.mark.parametrize("back_at, survived", [("07:07:00", False),   # the cluster gave up on the node first
                                               ("07:04:20", True)])   # near miss: back before it did
def test_a_link_down_that_work_outlasted_was_not_survived_where_what_it_explains_came_before_it_was_back(
        tmp_path, back_at, survived):
    """The head's engine generated on after the worker node's port went down, until the cluster stopped hearing the
    node and declared it dead, the link still down: the loss of the link is the cause."""
    dead = "[2026-11-18 07:04:36,902 W 412 412] (gcs_server) gcs_node_manager.cc:418: The node with node id: " \
           "7e3a9c51 " \
           "and address: 10.0.0.2 and node name: 10.0.0.2 has been marked dead because the detector has missed too " \
           "many heartbeats from it."
    died = api(4, 37, "The actor is dead because its node has died. Node Id: 7e3a9c51", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING
                            + [api(4, 25, LATER[0].split("] ", 1)[1]), died, DEAD],
                            "gpu-a1/gcs_server.out": [dead], "hosts": ["10.0.0.1 gpu-a1", "10.0.0.2 gpu-b1"],
                            "gpu-b1/journalctl-k.txt": [FLAP[0].replace("07:03:30 gpu-a1", "07:04:05 gpu-b1"),
                                                        FLAP[1].replace("07:03:31 gpu-a1", f"{back_at} gpu-b1")]})
    link = next(f for f in d.findings if f.sig == "mlx5-netdev-link-down")
    assert bool(link.set_aside) == survived


def test_a_failure_before_ready_in_a_later_run_never_readied_that_run(tmp_path):
    again = [line.replace("07:00:0", "07:09:0") for line in START] + [MODULE.replace("07:01:20", "07:09:30")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + STOP + again})
    assert d.outcome.state == "never_ready" and d.root.category == "dep.missing_module"


def test_near_miss_a_headless_node_failing_lives_in_the_deployments_readiness(tmp_path):
    worker_line = worker(4, 30, "RuntimeError: CUDA error: an illegal memory access was encountered", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING,
                            "gpu-a2/vllm.log": [worker_line.replace("VllmWorker rank=0", "VllmWorker rank=1")]})
    assert d.outcome.state in ("crashed", "failing_requests")


SYSTEM_ERROR = worker(4, 30, "torch.distributed.DistBackendError: NCCL error in: NCCLUtils.hpp:268, unhandled system "
                             "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5", level="ERROR")


def test_a_failure_a_survived_flap_would_explain_is_a_cause_of_its_own(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + [SYSTEM_ERROR], "gpu-a1/journalctl-k.txt": FLAP})
    assert d.root is not None and d.root.category == "nccl.system_error"


def test_near_miss_a_link_that_stays_down_explains_it(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + [SYSTEM_ERROR], "gpu-a1/journalctl-k.txt": FLAP[:1]})
    assert d.root is not None and d.root.category == "nccl.ib_transport"


def test_a_killed_node_that_restarts_did_not_survive_the_kill(tmp_path):
    headless = "INFO 11-18 07:{m:02d}:{s:02d} [serve.py:214] Starting headless worker node: node_rank=1, nnodes=2"
    platform = "INFO 11-18 07:{m:02d}:{s:02d} [__init__.py:252] Automatically detected platform cuda."
    first = [platform.format(m=0, s=0), headless.format(m=0, s=2), worker(1, 0, "Starting to load model m...")]
    again = [platform.format(m=5, s=0), headless.format(m=5, s=2), worker(6, 0, "Starting to load model m...")]
    kill = ["Nov 18 07:04:30 gpu-a2 kernel: Memory cgroup out of memory: Killed process 4711 (python3) "
            "total-vm:1234kB, anon-rss:1000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:40kB oom_score_adj:999"]
    d = decision(tmp_path, {"gpu-a2/pods/w/vllm/0.log": first, "gpu-a2/pods/w/vllm/1.log": again,
                            "gpu-a2/journalctl-k.txt": kill})
    assert d.root is not None and d.root.category == "oom.host"


def test_an_oom_kill_of_a_process_that_is_not_the_deployments_is_set_aside(tmp_path):
    kernel = ["Nov 18 07:04:30 gpu-a1 kernel: Memory cgroup out of memory: Killed process 918273 (node_exporter) "
              "total-vm:1234kB, anon-rss:1000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:40kB oom_score_adj:999"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING, "gpu-a1/journalctl-k.txt": kernel})
    assert state(d) == ("serving", None)


def test_near_miss_an_oom_kill_of_the_deployments_process_is_the_cause(tmp_path):
    kernel = ["Nov 18 07:04:30 gpu-a1 kernel: Memory cgroup out of memory: Killed process 4711 (python3) "
              "total-vm:1234kB, anon-rss:1000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:40kB oom_score_adj:999"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [DEAD],
                            "gpu-a1/journalctl-k.txt": kernel})
    assert d.root is not None and d.root.category == "oom.host"


# ------------------------------------------------------------------------------------------------------
# what asserts nothing: listings of possible causes, notes quoting errors
# ------------------------------------------------------------------------------------------------------
RAY_DIED = ("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
            "Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root "
            "causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop "
            "--force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.")


def test_a_list_of_possible_causes_asserts_none_of_them(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [api(4, 40, RAY_DIED, "ERROR")]})
    assert not any(f.category in ("proc.segfault", "oom.host") for f in d.findings)
    said = api(4, 40, "Fatal Python error: Segmentation fault", "ERROR")  # the same words, stated
    d = decision(tmp_path / "stated", {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [said]})
    assert d.root is not None and d.root.category == "proc.segfault"


def test_near_miss_a_statement_before_a_guess_still_counts(tmp_path):
    line = worker(0, 5, "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. "
                        "changing env variable CUDA_VISIBLE_DEVICES after program start.", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [line]})
    assert d.root is not None and d.root.category == "env.cuda_init_failed"


def test_a_note_quoting_an_error_is_a_mention(tmp_path):
    note = ["Ticket 4411: the operator stopped the service for maintenance.",
            "The customer asked why the log shows 'torch.OutOfMemoryError: CUDA out of memory' in a prompt.",
            "Nothing to do.", "Closing."]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING, "ticket.txt": note})
    assert state(d) == ("serving", None)


XID_JOURNAL = ("Nov 18 07:04:10 gpu-a1 kernel: NVRM: Xid (PCI:0000:47:00): 48, pid=4711, name=python3, An "
               "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer")
REPORT = ["nvidia-bug-report.sh will now collect information about your system", "",
          *[f"Section {i}: nothing of note here, read the next one" for i in range(30)],
          "Scanning kernel log files for NVIDIA kernel messages:", "  journalctl -b -0:"]


def test_a_journal_line_inside_plain_text_keeps_its_time_and_host(tmp_path):
    # a bug report's journal section: its lines are the kernel's, with their time, not a note's mentions
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [OOM, DEAD],
                            "gpu-a1/nvidia-bug-report.log": REPORT + [XID_JOURNAL]})
    assert d.root is not None and (d.root.category, d.root.file) == ("gpu.xid", "gpu-a1/nvidia-bug-report.log")
    assert d.root.ts is not None and d.root.node == "gpu-a1"


def test_near_miss_the_same_message_without_its_journal_prefix_is_a_mention(tmp_path):
    bare = XID_JOURNAL.split("kernel: ", 1)[1]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [OOM, DEAD],
                            "gpu-a1/nvidia-bug-report.log": REPORT + [bare]})
    assert d.root is not None and d.root.category.startswith("oom.")


def test_near_miss_the_same_error_in_the_log_is_the_cause(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [OOM]})
    assert d.root is not None and d.root.category == "oom.inference"


# ------------------------------------------------------------------------------------------------------
# a worker that vanishes with no cause anywhere
# ------------------------------------------------------------------------------------------------------
GONE = api(4, 40, "Worker proc VllmWorker-0 died unexpectedly, shutting down executor.", "ERROR")


def test_a_worker_that_vanishes_with_no_cause_was_killed(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [GONE, DEAD.replace("05:02", "04:41")]})
    assert d.root is not None and d.root.category == "proc.killed" and d.confidence == "low"


SEGV_TEARDOWN = "Nov 18 07:{m:02d}:{s:02d} gpu-b1 kernel: ray::RayWorkerW[4712]: segfault at 0 ip 0000000000000000 " \
                "sp 00007ffd3a1c2e08 error 14 in libc.so.6[7f0a2c000000+195000]"


@pytest.mark.parametrize("at, root", [((5, 3), "proc.killed"),     # once the deployment winds down: its trail
                                      ((4, 20), "proc.segfault")])  # near miss: before the worker vanished
def test_a_crash_in_the_wind_down_after_a_worker_vanished_is_the_wind_down_s(tmp_path, at, root):
    gone = [GONE.replace("VllmWorker-0", "VllmWorker-1"), DEAD.replace("05:02", "04:41")]
    head = START + LOADED + READY + SERVING + gone + STOP
    d = decision(tmp_path, {"gpu-a1/vllm.log": head, "gpu-b1/vllm.log": [worker(1, 0, "Starting to load model m...",
                                                                                pid=4712)],
                            "gpu-b1/kern.log": [SEGV_TEARDOWN.format(m=at[0], s=at[1])]})
    assert d.root is not None and d.root.category == root


def test_near_miss_a_worker_that_died_of_its_own_error(tmp_path):
    error = worker(4, 40, "KeyError: 'banned_phrases_file'", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [GONE, error]})
    assert d.root is not None and d.root.category == "other"


# ------------------------------------------------------------------------------------------------------
# incomplete evidence
# ------------------------------------------------------------------------------------------------------
def test_a_node_the_launch_names_with_no_log_of_its_own_is_missing(tmp_path):
    logs = {f"gpu-h100-a0{i}/vllm.log": [line.replace("gpu-a1", f"gpu-h100-a0{i}") for line in START + LOADED]
            for i in (1, 2)}
    script = "#!/bin/bash\nfor h in gpu-h100-a02 gpu-h100-a03; do\n  ssh gpu-h100-a03 vllm serve m --headless\ndone\n"
    a = run(make_bundle(tmp_path, {**{k: "\n".join(v) + "\n" for k, v in logs.items()}, "launch.sh": script}))
    assert any("gpu-h100-a03" in m for m in a.missing) and not any("gpu-h100-a02" in m for m in a.missing)


def test_a_host_srun_says_a_task_ended_on_took_part_and_its_missing_log_is_named(tmp_path):
    out = "\n".join(START + LOADED + ["srun: error: gpu-h100-a02: task 1: Exited with exit code 1"]) + "\n"
    a = run(make_bundle(tmp_path, {"gpu-h100-a01/slurm-77.out": out}))
    assert any("gpu-h100-a02" in m for m in a.missing)


def test_the_schedulers_lines_about_a_node_in_a_job_output_are_not_its_log(tmp_path):
    # the job's output at the top holds only srun's and slurmstepd's reports about gpu-h100-a02: not its log
    log = "\n".join(START + LOADED) + "\n"
    job = log + ("rdzv endpoint gpu-h100-a02:29400\nsrun: error: gpu-h100-a01: task 1: Exited with exit code 1\n"
                 "slurmstepd: error: *** STEP 77.0 ON gpu-h100-a02 CANCELLED AT 2026-11-18T07:05:00 ***\n"
                 "srun: error: gpu-h100-a02: task 0: Exited with exit code 1\n")
    a = run(make_bundle(tmp_path, {"gpu-h100-a01/vllm.log": log, "slurm-77.out": job}))
    assert any("logs of node gpu-h100-a02" in m for m in a.missing)
    # near miss: with its own log beside it, nothing is missing of it
    b = run(make_bundle(tmp_path / "b", {"gpu-h100-a01/vllm.log": log, "gpu-h100-a02/vllm.log": log, "slurm-77.out": job}))
    assert not any("gpu-h100-a02" in m for m in b.missing)


def test_a_torchrun_node_count_beyond_the_nodes_with_logs_is_said(tmp_path):
    a = run(make_bundle(tmp_path, {"gpu-h100-a01/vllm.log": "\n".join(START + LOADED) + "\n",
                                   "job.sbatch": "srun torchrun --nnodes 3 --nproc-per-node 8 serve.py\n"}))
    assert any("2 more of the 3 nodes" in m for m in a.missing)


def test_near_miss_a_host_a_note_mentions_is_not_a_node_of_the_deployment(tmp_path):
    logs = {"gpu-h100-a01/vllm.log": "\n".join(START + LOADED) + "\n",
            "note.txt": "gpu-h100-a07 had a fan alarm last week; unrelated.\nNothing else.\n"}
    assert run(make_bundle(tmp_path, logs)).missing == []


DESCRIBE = ("Name:             vllm-0-1\nNamespace:        llm\nNode:             gpu-h100-a02/10.4.0.12\n"
            "Containers:\n  vllm:\n    Image:  vllm/vllm-openai:v0.27.2\nEvents:\n"
            "  Normal  Scheduled  11m  default-scheduler  Successfully assigned llm/vllm-0-1 to gpu-h100-a02\n")


def test_a_node_the_bundle_has_only_a_dump_about_has_no_log_of_its_own(tmp_path):
    logs = {"gpu-h100-a01/vllm.log": "\n".join(START + LOADED) + "\n", "kubectl-describe-vllm-0-1.txt": DESCRIBE}
    assert any("logs of node gpu-h100-a02" in m for m in run(make_bundle(tmp_path, logs)).missing)
    # near miss: with the node's own log beside the dump, nothing is missing
    logs["gpu-h100-a02/vllm.log"] = "\n".join(START + LOADED) + "\n"
    assert not any("gpu-h100-a02" in m for m in run(make_bundle(tmp_path / "both", logs)).missing)


def test_a_file_in_a_nodes_folder_is_its_own_log_but_the_control_planes_word_is_not(tmp_path):
    logs = {"gpu-h100-a01/vllm.log": "\n".join(START + LOADED) + "\n",
            "gpu-h100-a02/dmesg.txt": "[ 812.5] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n",
            "launch.sh": "#!/bin/bash\n# NODE_RANK=0 on gpu-h100-a01, 1 on gpu-h100-a02\nvllm serve m\n"}
    assert run(make_bundle(tmp_path, logs)).missing == []   # a02's kernel log is its own
    del logs["gpu-h100-a02/dmesg.txt"]
    assert any("logs of node gpu-h100-a02" in m for m in run(make_bundle(tmp_path / "gone", logs)).missing)
    # near miss: kubectl describe of a pod on another node says where it ran, not what that node logged
    logs = {"gpu-h100-a01/vllm.log": "\n".join(START + LOADED) + "\n", "kubectl-describe-vllm-0-1.txt": DESCRIBE}
    assert any("gpu-h100-a02" in m for m in run(make_bundle(tmp_path / "describe", logs)).missing)


def test_a_workers_lines_forwarded_into_another_nodes_log_are_not_its_log(tmp_path):
    forwarded = [f"(RayWorkerWrapper pid=812, ip=10.44.0.12) WARNING 01-01 00:00:0{i} [worker.py:1] slow step {i}"
                 for i in range(6)]  # (lines analyze keeps)
    logs = {"h100-ray-a/vllm-serve.log": "\n".join(START + LOADED + forwarded) + "\n",
            "hosts.txt": "10.44.0.11 h100-ray-a\n10.44.0.12 h100-ray-b\n"}  # (names the worker's IP only)
    assert any("logs of node h100-ray-b" in m for m in run(make_bundle(tmp_path, logs)).missing)
    # near miss: the same lines in a file that is nobody's (a job's gathered output) are the worker's log
    logs["job-output.log"] = logs.pop("h100-ray-a/vllm-serve.log")
    logs["h100-ray-a/vllm-serve.log"] = "\n".join(START + LOADED) + "\n"
    assert not any("h100-ray-b" in m for m in run(make_bundle(tmp_path / "gathered", logs)).missing)


@pytest.mark.parametrize("line, named", [
    ("#SBATCH -w hgx-q7-[21-22]", {"hgx-q7-21", "hgx-q7-22"}),
    ("nodelist: h200-n[01-02,07] (3 nodes)", {"h200-n01", "h200-n02", "h200-n07"}),
    ("ranks [0-7] on gpu-a01", {"gpu-a01"}),    # near miss: a rank range is no host list
])
def test_slurm_host_ranges_are_expanded(line, named):
    from k3logs.diagnose.missing import hosts_named
    assert hosts_named(line) >= named and not any("[" in h for h in hosts_named(line))
    assert not any(h.startswith("ranks") for h in hosts_named(line))


def test_a_slurm_host_range_names_the_node_whose_log_is_missing(tmp_path):
    logs = {"hgx-q7-21/slurm-4471.out": "\n".join(START + LOADED) + "\n",
            "job.sbatch": "#!/bin/bash\n#SBATCH -N 2\n#SBATCH -w hgx-q7-[21-22]\nsrun torchrun serve.py\n"}
    assert any("logs of node hgx-q7-22" in m for m in run(make_bundle(tmp_path, logs)).missing)
    # near miss: a host of another family in the same list is not taken for a sibling
    logs["job.sbatch"] = "#!/bin/bash\n#SBATCH -w hgx-q7-21,login-[1-2]\nsrun torchrun serve.py\n"
    assert run(make_bundle(tmp_path / "other", logs)).missing == []


SACCT = ("$ sacct -j 7310 --format=JobID,JobName,NodeList%24,State\n"
         "JobID           JobName                 NodeList      State\n"
         "------------ ---------- ------------------------ ----------\n"
         "7310            serve-k3        hgx-q7-[21-22]     FAILED\n"
         "7310.batch         batch              hgx-q7-21     FAILED\n"
         "{other}7310.0               ray              hgx-q7-22     FAILED\n")


def test_a_job_table_of_the_one_job_names_the_nodes_it_ran_on(tmp_path):
    logs = {"hgx-q7-21/slurm-7310.out": "\n".join(START + LOADED) + "\n", "sacct-7310.txt": SACCT.format(other="")}
    assert any("logs of node hgx-q7-22" in m for m in run(make_bundle(tmp_path, logs)).missing)
    # near miss: a queue of several jobs names nodes other jobs ran on
    logs["sacct-7310.txt"] = SACCT.format(other="7288            train            hgx-q7-[23-24]   RUNNING\n")
    assert run(make_bundle(tmp_path / "queue", logs)).missing == []


def test_a_line_naming_several_sibling_hosts_lists_the_deployments_nodes(tmp_path):
    logs = {"h100-pp-a/journal.txt": "\n".join(START + LOADED) + "\n",
            "ticket.txt": "09:41 restarted vllm.service on h100-pp-a, h100-pp-b; both fail during start\n"}
    assert any("logs of node h100-pp-b" in m for m in run(make_bundle(tmp_path, logs)).missing)
    # near misses: a line that names one sibling in passing, or two that are not written as a list
    for i, note in enumerate(["the Xid 63 on h100-pp-b is from Sunday's burn-in, unrelated\n",
                              "h100-pp-b drained for RMA, replaced in the ring by h100-pp-a\n"]):
        logs["ticket.txt"] = note
        assert run(make_bundle(tmp_path / f"near{i}", logs)).missing == [], note


PODS = ("NAME         READY   STATUS    RESTARTS   AGE   IP           NODE           NOMINATED NODE   READINESS GATES\n"
        "vllm-0       1/1     Running   0          9m    10.60.5.11   b200-k3-n05    <none>           <none>\n"
        "vllm-0-1     0/1     Error     3          9m    10.60.6.12   {node}    <none>           <none>\n")


def test_a_node_the_orchestrator_placed_a_pod_on_took_part(tmp_path):
    logs = {"b200-k3-n05/vllm.log": "\n".join(START + LOADED) + "\n", "pods-wide.txt": PODS.format(node="b200-k3-n06")}
    assert any("logs of node b200-k3-n06" in m for m in run(make_bundle(tmp_path, logs)).missing)
    # near miss: a pod on a node outside the deployment's naming (a CPU pool) is not taken for a missing node
    logs["pods-wide.txt"] = PODS.format(node="cpu-pool-x3 ")
    assert run(make_bundle(tmp_path / "cpu", logs)).missing == []


def test_ranks_are_spelled_as_spans():
    assert spans([8, 9, 10, 12, 14, 15]) == "8-10, 12, 14-15" and spans([3]) == "3"


@pytest.mark.parametrize("steps", [0, 1500])   # a small file (read in a pack) and one of 150 KB (alone)
def test_a_log_that_stops_inside_a_line_is_named_as_missing_its_end(tmp_path, steps):
    from k3logs.api import analyze
    busy = [worker(4, 0, f"step {i} " + "x" * 90) for i in range(steps)]
    lines = START + LOADED + READY + SERVING + busy + [OOM]
    cut = make_bundle(tmp_path / "cut", {"gpu-a1/vllm.log": "\n".join(lines) + "\n" + lines[0][:30]})
    said = analyze(cut).evidence_missing
    assert any(m.startswith("the end of gpu-a1/vllm.log") for m in said), said
    # near miss: the same log ending with its newline is whole
    whole = make_bundle(tmp_path / "whole", {"gpu-a1/vllm.log": "\n".join(lines) + "\n" + lines[0][:30] + "\n"})
    assert not any(m.startswith("the end of") for m in analyze(whole).evidence_missing)


CRASH_LOOP = "15s  Warning  BackOff  pod/vllm-0  Back-off restarting failed container vllm in pod vllm-0_llm(d1e8)"
ARGS = ["usage: api_server.py [-h] [--host HOST] [--port PORT]", "                     [--model MODEL]",
        "api_server.py: error: unrecognized arguments: --enable-metrics"]


def test_a_programs_usage_error_is_its_own_error_and_says_more_than_its_crash_loop(tmp_path):
    d = decision(tmp_path, {"vllm-0/previous.log": START + ARGS, "events.txt": [CRASH_LOOP] * 3})
    assert d.root is not None and (d.root.category, d.root.file, d.root.line) == ("other", "vllm-0/previous.log", 5)


def test_near_miss_a_crash_loop_with_no_error_of_its_own_is_reported(tmp_path):
    d = decision(tmp_path, {"vllm-0/previous.log": START, "events.txt": [CRASH_LOOP] * 3})
    assert d.root is not None and d.root.file == "events.txt"


UCX_RC = ("[1794985290.731043] [gpu-a1:4711:0]     ucp_context.c:1321 UCX  WARN  transport 'rc' is not available, "
          "please use one or more of: cma, cuda_copy, cuda_ipc, mm, posix, self, sm, sysv, tcp")


def handshake(m: int, s: int) -> list[str]:
    return [worker(m, s, "NIXL transfer failure: handshake_failed. Marking blocks as invalid", level="ERROR"),
            api(m, s, '10.0.0.9:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error')]


def stats_at(m: int) -> str:
    return SERVING[0].replace("07:04:00", f"07:{m:02d}:00")


@pytest.mark.parametrize("after_start, want", [
    (LOADED + READY + SERVING + handshake(4, 30) + [stats_at(5)] + handshake(5, 30) + [stats_at(6)] + handshake(6, 30)
     + [stats_at(7)], "failing_requests"),
    (LOADED + handshake(2, 30), "never_ready")])   # near miss: it fails before the server was ready
def test_a_cause_at_start_the_node_became_ready_after_fails_the_run_where_what_it_explains_fails(tmp_path, after_start,
                                                                                                want):
    # the node starts without the transport it was told to use, serves, and fails every transfer that needs it: the
    # run failed where they failed, not at the warning
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [UCX_RC] + after_start})
    assert state(d) == (want, "nccl.ib_transport") and d.root.text.startswith("transport 'rc'")


CONNECT_REFUSED = ("[W1118 07:00:30.118230412 socket.cpp:755] [c10d] The client socket has failed to connect to "
                   "[gpu-a1]:29500 (errno: 111 - Connection refused).")


@pytest.mark.parametrize("log, want", [(START + LOADED + READY + SERVING, "inconclusive"),
                                       (START + [CONNECT_REFUSED] + LOADED + READY + SERVING, "inconclusive"),  # (survived)
                                       (START + LOADED + READY + SERVING + [OOM], "crashed")])  # near miss: it says why
def test_a_restart_that_is_all_the_bundle_shows_is_an_incident_whose_log_is_missing(tmp_path, log, want):
    # the log was cut while it served; an orchestrator restarted the failed container later, and nothing says why
    a = run(make_bundle(tmp_path, {"vllm.log": "\n".join(log) + "\n", "events.txt": CRASH_LOOP + "\n",
                                   "kubectl-get-pods.txt": pods("Running", "1 (57m ago)")}))
    r = report_of(a)
    assert r.outcome.state == want
    if want == "inconclusive":
        assert (r.root_cause.category, r.first_causal, r.origin.node, r.exit_status) == ("other", None, "gpu-a1", 3)
        assert any("events.txt:1" in m for m in r.evidence_missing)


def test_near_miss_another_programs_error_line_is_no_exception(tmp_path):
    stop = ["slurmstepd: error: *** STEP 48213.0 ON gpu-b200-11 CANCELLED AT 2026-11-18T07:05:00 ***"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + stop})
    assert d.root is None


def _segfault_phase(tmp_path, second: int) -> str | None:
    segv = (f"Nov 18 07:05:{second:02d} gpu-b1 kernel: python3[4711]: segfault at 18 ip 00007f8a51c3e2b1 sp "
            "00007f8a2d3fd880 error 4 in libnccl.so.2[7f8a51a00000+1f2c000]")
    worker_b = [worker(1, 0, "Starting to load model m...", pid=4711).replace("rank=0", "rank=1")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + STOP,
                            "gpu-b1/vllm.log": worker_b, "gpu-b1/kern.log": [segv]})
    (f,) = [f for f in d.findings if f.category == "proc.segfault"]
    return f.phase


def test_another_nodes_shutdown_in_the_same_second_does_not_end_a_headless_nodes_serving(tmp_path):
    # the head winds down in the second the worker node's process crashes: which came first is unknown
    assert _segfault_phase(tmp_path, 0) == "serving"


def test_near_miss_a_headless_nodes_line_after_the_deployments_shutdown_is_in_it(tmp_path):
    assert _segfault_phase(tmp_path, 6) == "shutdown"


DESCRIBE_OOMKILLED = ("Name:         vllm-0-1\nNamespace:    inference\nNode:         gpu-b1/10.0.0.2\n"
                     "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n")


def test_an_untimed_file_does_not_take_the_deployment_s_last_phase(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + STOP,
                            "describe-worker.txt": DESCRIBE_OOMKILLED})
    (f,) = [f for f in d.findings if f.file == "describe-worker.txt" and f.category == "oom.host"]
    assert f.ts is None and f.phase != "shutdown"


def test_near_miss_an_untimed_line_after_timed_ones_follows_them_in_its_file(tmp_path):
    lines = START + LOADED + READY + SERVING + STOP + ["Killed"]
    a = analyze_files(tmp_path, {"gpu-a1/vllm.log": "\n".join(lines) + "\n"})
    assert a.events.sort("line")["phase"].to_list()[-1] == "shutdown"


def test_a_run_stopped_before_the_bundles_first_start_is_an_attempt_of_its_own(tmp_path):
    # the journal begins while an earlier run serves; the operator stops it, starts it again, and that start fails
    again = [api(6, 0, "vLLM API server version 0.27.2"), worker(6, 30, "torch.OutOfMemoryError: CUDA out of memory. "
                                                               "Tried to allocate 2.00 GiB.", level="ERROR")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": SERVING + STOP + again})
    assert d.root is not None and d.root.category.startswith("oom.") and d.root.set_aside is None


def _load_fails_before_and_after_a_start(tmp_path, before: list[str]):
    """A capture that begins inside a start: `before` it shows, then a load OOM, then two more starts that fail
    the same way."""
    again = [line for m in (6, 8) for line in (
        api(m, 0, "vLLM API server version 0.27.2"), worker(m, 10, "Starting to load model m...", pid=5150),
        worker(m, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB.", pid=5150,
               level="ERROR"))]
    return decision(tmp_path, {"gpu-a1/vllm.log": before + [LOAD_OOM] + again})


def test_a_start_that_loaded_weights_before_the_bundles_first_start_is_an_attempt_of_its_own(tmp_path):
    # the capture begins during a model load: a start does not come after its own load
    d = _load_fails_before_and_after_a_start(tmp_path, [worker(1, 0, "Starting to load model m...", pid=5150)])
    assert state(d) == ("restart_loop", "oom.load")


@pytest.mark.parametrize("mark, own", [("model_load", True), ("shutdown", True),
                                       ("startup", False), (None, False)])  # near misses: no work, no stop
def test_lines_before_the_first_start_are_an_attempt_of_their_own_only_past_a_load_or_a_stop(mark, own):
    # (import-time lines, 'Automatically detected platform', come before a start's version line)
    from datetime import datetime

    import polars as pl

    from k3logs.diagnose.outcome import Lifecycle
    ev = pl.DataFrame({"eid": [0, 1], "node": ["gpu-a1"] * 2, "rank": [None] * 2, "pid": [None] * 2,
                       "ident": [None] * 2, "source": ["log"] * 2,
                       "ts": [datetime(2025, 7, 24, 17, 30, s) for s in (0, 1)], "file": ["vllm.log"] * 2,
                       "line": [1, 2], "mark": [mark, "startup"], "attempt": [0, 1], "progress": [False] * 2},
                      schema_overrides={"rank": pl.Int64, "pid": pl.Int64, "ident": pl.String, "mark": pl.String})
    life = Lifecycle(ev, {"vllm.log"})
    assert (life.eid_attempt[0] != life.eid_attempt[1]) == own


def test_near_miss_a_failure_after_the_stop_with_no_new_start_is_the_shutdowns_trail(tmp_path):
    trail = [worker(5, 2, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", level="ERROR")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": SERVING + STOP + trail})
    assert d.root is None


GCS_DEAD = ("[2025-11-18 07:04:{s:02d},117 W 412 412] (gcs_server) gcs_node_manager.cc:418: The node with node id: "
            "7e3a9c51 and address: 10.20.4.21 and node name: 10.20.4.21 has been marked dead because the detector has "
            "missed too many heartbeats from it.")
ACTOR_GONE = api(4, 40, "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task. "
                        "The actor died because its node has died. Node Id: 7e3a9c51", level="ERROR")


def test_the_orchestrators_word_that_a_node_died_states_the_loss_an_actor_then_dies_of(tmp_path):
    d = decision(tmp_path, {"head/vllm.log": START + LOADED + READY + SERVING + [ACTOR_GONE],
                            "head/gcs_server.out": [GCS_DEAD.format(s=20)]})
    assert d.root is not None and (d.root.category, d.root.file) == ("infra.node_lost", "head/gcs_server.out")


@pytest.mark.parametrize("gcs_second", [None, 50])   # no such word; the word only after the actor died
def test_near_miss_the_symptom_stays_the_root_without_an_earlier_word_of_the_node(tmp_path, gcs_second):
    files = {"head/vllm.log": START + LOADED + READY + SERVING + [ACTOR_GONE]}
    if gcs_second is not None:
        files["head/gcs_server.out"] = [GCS_DEAD.format(s=gcs_second)]
    d = decision(tmp_path, files)
    assert d.root is not None and (d.root.category, d.root.file) == ("infra.node_lost", "head/vllm.log")


def test_near_miss_a_node_marked_dead_with_nothing_dying_after_is_no_incident(tmp_path):
    d = decision(tmp_path, {"head/vllm.log": START + LOADED + READY + SERVING,
                            "head/gcs_server.out": [GCS_DEAD.format(s=20)]})
    assert d.root is None


def test_a_headless_data_parallel_start_begins_a_new_run_after_an_earlier_stop(tmp_path):
    stopped = [api(0, 0, "vLLM API server version 0.27.2"), api(0, 5, "Received SIGTERM, shutting down engine processes.")]
    again = api(2, 0, "Launching 1 data parallel engine(s) in headless mode, with head node address tcp://10.0.0.1:13345.")
    crash = worker(3, 0, "RuntimeError: vLLM failed to compile the model. The most likely reason for this is that a "
                         "previous compilation failed, leading to a corrupted compilation artifact.", level="ERROR")
    d = decision(tmp_path, {"gpu-a2/journal-yesterday.txt": stopped, "gpu-a2/journal.txt": [again] + LOADED[:1] + [crash]})
    assert d.root is not None and d.root.category == "compile.failed"
    # near miss: with no start of its own after the stop, the error is the stopped run's shutdown trail
    d = decision(tmp_path / "trail", {"gpu-a2/journal-yesterday.txt": stopped, "gpu-a2/journal.txt": LOADED[:1] + [crash]})
    assert d.root is None or d.root.category != "compile.failed"


# a kernel line about one GPU (its bus id is a rank's): survived only when that rank went on, or the deployment served
def _gpu_fault_at_load(rank1_loaded: bool) -> dict[str, list[str]]:
    def w(rank: int, pid: int, m: int, s: int, text: str) -> str:
        return f"(VllmWorker rank={rank} pid={pid}) INFO 11-18 07:{m:02d}:{s:02d} [worker.py:1] {text}"
    nccl = [w(r, 4711 + r, 0, 10, f"gpu-a1:{4711 + r}:{4711 + r} [{r}] NCCL INFO ncclCommInitRank comm 0x5 rank {r} "
                                    f"nranks 2 cudaDev {r} nvmlDev {r} busId {bus}000 commId 0x1 - Init START")
            for r, bus in ((0, "3b"), (1, "9a"))]
    loaded = [w(0, 4711, 2, 0, "Model loading took 15.2 GiB and 60.1 seconds")]
    if rank1_loaded:
        loaded.append(w(1, 4712, 2, 1, "Model loading took 15.2 GiB and 61.0 seconds"))
    xid = ("Nov 18 07:01:30 gpu-a1 kernel: NVRM: Xid (PCI:0000:9a:00): 119, pid='<unknown>', name=<unknown>, "
           "Timeout after 6s of waiting for RPC response from GPU1 GSP! Expected function 76 (GSP_RM_CONTROL).")
    return {"gpu-a1/vllm.log": START + nccl + [w(r, 4711 + r, 1, 0, "Starting to load model m...") for r in (0, 1)]
            + loaded, "gpu-a1/kern.log": [xid]}


def test_a_gpu_fault_whose_rank_never_went_on_is_the_cause_though_other_ranks_did(tmp_path):
    d = decision(tmp_path, _gpu_fault_at_load(rank1_loaded=False))
    assert d.root is not None and (d.root.category, d.root.rank, d.root.file) == ("gpu.xid", 1, "gpu-a1/kern.log")


def test_near_miss_a_gpu_fault_whose_own_rank_went_on_is_survived(tmp_path):
    d = decision(tmp_path, _gpu_fault_at_load(rank1_loaded=True))
    (xid,) = [f for f in d.findings if f.category == "gpu.xid"]
    assert xid.set_aside is not None and xid.set_aside.startswith("survived"), xid.set_aside


@pytest.mark.parametrize("agent_restarts, own_restarts, want", [
    ("3 (9d ago)", "1 (2m ago)", "crashed"),        # a ready monitoring pod's restarts beside the deployment's pod
    ("0", "4 (1m ago)", "restart_loop"),            # near miss: the pod that is not ready restarted again and again
])
def test_restart_counts_of_a_pod_table_are_those_of_pods_not_ready(tmp_path, agent_restarts, own_restarts, want):
    listing = ("NAME              READY   STATUS    RESTARTS   AGE   IP           NODE\n"
               f"k3-serve-0        0/1     Running   {own_restarts}   36m   10.0.4.17    gpu-a1\n"
               f"node-exporter-7rq 1/1     Running   {agent_restarts}   27d   10.0.4.12    gpu-a1\n")
    files = {"k3-serve-0/vllm.log": START + LOADED + READY + SERVING + [OOM], "kubectl-get-pods-o-wide.txt": listing}
    assert state(decision(tmp_path, files))[0] == want


def test_a_point_is_after_by_line_in_its_file_and_by_time_elsewhere():
    from datetime import datetime

    from k3logs.diagnose.lifeline import At
    t = datetime(2026, 11, 18, 7, 0, 0)
    later = datetime(2026, 11, 18, 7, 0, 5)
    at = At(t, "a.log", 10)
    assert at.after(later, "a.log", 9)            # same file: the line decides, not the clock
    assert not at.after(None, "a.log", 10)        # the same line is not after itself
    assert At(later, "a.log", 11).after(t, "b.log", 500)
    assert not at.after(later, "b.log", 1)        # another file: earlier in time
    assert not At(None, "a.log", 99).after(t, "b.log", 1)  # untimed, in another file: no order


LOAD_OOM = worker(1, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total "
                         "capacity of 79.15 GiB of which 1.02 GiB is free.", pid=5150, level="ERROR")


def test_a_new_replica_failing_to_start_while_another_node_serves_on_is_serving(tmp_path):
    # the old replica on gpu-a1 serves and is never stopped; the new one on gpu-b2 fails while loading
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING,
                            "gpu-b2/vllm.log": START + [worker(1, 0, "Starting to load model m...", pid=5150),
                                                        LOAD_OOM]})
    assert state(d) == ("serving", "oom.load") and not d.healthy and d.root.node == "gpu-b2"
    # near miss: the serving one was stopped: nothing serves, the new one never became ready
    d = decision(tmp_path / "stopped", {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + STOP,
                                        "gpu-b2/vllm.log": START + [worker(1, 0, "Starting to load model m...",
                                                                           pid=5150), LOAD_OOM]})
    assert state(d) == ("never_ready", "oom.load")


@pytest.mark.parametrize("other_end, outcome", [([worker(3, 0, "Graph capturing finished in 39 secs, took 5.61 GiB")],
                                                  "never_ready"),   # its workers ended their start only
                                                 (READY + SERVING, "serving")])   # near miss: its server serves
def test_a_node_whose_workers_captured_their_graphs_is_no_server_serving_on_while_another_never_starts(tmp_path,
                                                                                                        other_end,
                                                                                                        outcome):
    """A new replica runs out of memory loading while the other node's workers finish capturing their CUDA graphs;
    no server of its is ready by that line alone (a pipeline's first stage, waiting for the others), so nothing
    serves on."""
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + other_end,
                            "gpu-b2/vllm.log": START + [worker(1, 0, "Starting to load model m...", pid=5150),
                                                        LOAD_OOM]})
    assert d.outcome.state == outcome and d.root.node == "gpu-b2"


@pytest.mark.parametrize("minute, cause", [(12, True),    # in the deployment's next start: its failure
                                            (7, False)])   # near miss: before it: the first run's trail
def test_a_headless_node_that_took_part_in_a_stopped_run_is_in_the_deployments_next_start(tmp_path, minute, cause):
    """The head was asked to stop at 07:05 and started again at 07:10; the worker node, which prints no start of
    its own, runs out of KV cache memory at 07:12: that is the new start's failure, not the first run's trail."""
    again = [api(10, 0, "vLLM API server version 0.27.2"), api(10, 1, "non-default args: {'model': 'm'}")]
    kv = worker(minute, 0, "ValueError: No available memory for the cache blocks. Try increasing "
                           "`gpu_memory_utilization` when initializing the engine.", pid=5150, level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING
                            + [api(4, 59, "Received SIGTERM, shutting down")] + STOP + again,
                            "gpu-b2/worker.log": [worker(1, 0, "Starting to load model m...", pid=5150), kv]})
    assert (d.root is not None and d.root.category == "oom.kv_cache") == cause


def test_a_hung_engine_answering_errors_until_it_dies_crashed(tmp_path):
    # after the fault the engine hangs: its server logs idle stats and answers 500 for ten minutes, then the
    # engine dies and the server stops: the minutes count from the engine's death (near miss above: 500s for
    # twelve minutes after it died are failing requests)
    hung = [x for m in range(10) for x in (
        api(4 + m, 40, f'10.0.0.{m}:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error'),
        api(4 + m, 45, "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, "
                       "Running: 8 reqs, Waiting: 3 reqs, GPU KV cache usage: 41.0%"))]
    dead = [api(14, 50, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.", "ERROR")]
    stop = [api(15, 0, "Shutting down"), api(15, 1, "Application shutdown complete.")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [OOM] + hung + dead + stop})
    assert (d.outcome.state, d.root.category) == ("crashed", "oom.inference")


@pytest.mark.parametrize("answered_for, state", [(10, "crashed"),              # 500s for seconds, then it ended
                                                  (360, "failing_requests")])   # near miss: for six minutes
def test_a_server_whose_engine_hung_silently_then_died_answered_for_its_answers_span(tmp_path, answered_for, state):
    """A worker dies, the engine hangs ten minutes answering nothing, then dies; the server answers 500 and ends:
    how long it answered is its answers' own span, not the time since the worker died."""
    gone = api(4, 30, "Worker proc VllmWorker-1 died unexpectedly, shutting down executor.", "ERROR")
    dead = [api(14, 50, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.", "ERROR")]
    failing = [api(15 + (s // 60), s % 60, f'10.0.0.9:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal '
                                           "Server Error") for s in (0, answered_for)]
    end = 15 + (answered_for + 30) // 60
    stop = [api(end, 0, "Shutting down"), api(end, 1, "Application shutdown complete.")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [gone] + dead + failing + stop})
    assert d.outcome.state == state


def test_a_stop_two_files_state_in_the_same_second_makes_what_follows_it_in_either_file_its_trail(tmp_path):
    # the scheduler's cancel (its own file) and the server's 'Shutting down' in the same second; the engine's
    # death right after the server's stop line is the stop's trail, though it is not after the scheduler's line
    job = "[2026-11-18T07:00:00+00:00] job 77 on gpu-a1\n" \
          "slurmstepd: error: *** JOB 77 ON gpu-a1 CANCELLED AT 2026-11-18T07:05:01 DUE TO TIME LIMIT ***\n"
    dead = api(5, 1, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.", "ERROR")
    d = decision(tmp_path, {"gpu-a1/job.out": job,
                            "gpu-a1/vllm.log": START + LOADED + READY + SERVING + [api(5, 1, "Shutting down"), dead]})
    assert state(d) == ("stopped", None) and d.healthy


def _later(lines: list[str], minutes: int) -> list[str]:
    """The same lines, `minutes` later (a second start in the same log)."""
    return [re.sub(r" 07:(\d\d):", lambda m: f" 07:{int(m.group(1)) + minutes:02d}:", ln) for ln in lines]


def test_stopped_then_started_again_and_serving_is_serving(tmp_path):
    first = START + LOADED + READY + SERVING + STOP
    d = decision(tmp_path, {"gpu-a1/vllm.log": first + _later(START + LOADED + READY + SERVING, 10)})
    assert state(d) == ("serving", None) and d.healthy
    # near miss: the second run was stopped too
    d = decision(tmp_path / "b", {"gpu-a1/vllm.log": first + _later(START + LOADED + READY + SERVING + STOP, 10)})
    assert state(d) == ("stopped", None)


def test_a_start_that_failed_then_a_rerun_that_serves_is_serving_and_an_incident(tmp_path):
    failed = START + [worker(1, 0, "Starting to load model m...", pid=5150), LOAD_OOM]
    d = decision(tmp_path, {"gpu-a1/vllm.log": failed + _later(START + LOADED + READY + SERVING, 10)})
    assert state(d) == ("serving", "oom.load") and not d.healthy
    # near miss: the rerun never became ready either
    d = decision(tmp_path / "b", {"gpu-a1/vllm.log": failed + _later(START + [worker(1, 0, "Starting to load model m...",
                                                                                    pid=5151)], 10)})
    assert d.outcome.state == "never_ready"


CHAT = "ValueError: As of transformers v4.44, default chat template is no longer allowed, so you must provide a " \
       "chat template if the tokenizer does not define one."


def test_an_error_that_recurs_in_its_process_minutes_later_was_not_survived(tmp_path):
    # the same error in the API server at 07:04 and, after work in between, at 07:14: the first is the cause
    busy = api(4, 50, "Avg prompt throughput: 80.0 tokens/s, Avg generation throughput: 310.0 tokens/s, "
                      "Running: 5 reqs, Waiting: 0 reqs, GPU KV cache usage: 9.0%")
    lines = START + LOADED + READY + SERVING + [api(4, 10, CHAT, "ERROR"), busy, api(14, 10, CHAT, "ERROR")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": lines})
    assert d.root is not None and d.root.line == lines.index(api(4, 10, CHAT, "ERROR")) + 1
    # near miss: once, and the process went on working: survived
    d = decision(tmp_path / "b", {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [api(4, 10, CHAT, "ERROR"), busy]})
    assert d.root is None


OVERFLOW = "OverflowError: out of range integral type conversion attempted"


@pytest.mark.parametrize("dead_pid, root", [(1, "other"), (2, None)])
def test_an_unknown_error_its_own_process_then_calls_its_engine_dead_was_not_survived(tmp_path, dead_pid, root):
    """An API server's output handler dies on an error no signature knows; the server still logs its work, then its
    own EngineDeadError: it had not survived the error, the root (`other`). Near miss: another process's
    EngineDeadError says nothing of this one's error, which its process went on from."""
    busy = api(4, 50, "Avg prompt throughput: 80.0 tokens/s, Avg generation throughput: 310.0 tokens/s, "
                      "Running: 5 reqs, Waiting: 0 reqs, GPU KV cache usage: 9.0%")
    dead = DEAD.replace("(APIServer pid=1)", f"(APIServer pid={dead_pid})")
    lines = START + LOADED + READY + SERVING + [api(4, 10, OVERFLOW, "ERROR"), busy, dead]
    d = decision(tmp_path, {"gpu-a1/vllm.log": lines})
    got = d.root.category if d.root is not None and d.root.line == lines.index(api(4, 10, OVERFLOW, "ERROR")) + 1 \
        else None
    assert got == root


@pytest.mark.parametrize("node, trail", [("10.30.8.7", True),    # an address no host is tied to: any node's
                                         ("gpu-b9", False)])       # near miss: a named node that never stopped
def test_what_a_node_known_only_by_its_address_logs_after_the_stop_is_the_trail(node, trail):
    from datetime import datetime
    from types import SimpleNamespace

    import polars as pl

    from k3logs.diagnose.outcome import Lifecycle
    t = [datetime(2025, 7, 24, 17, 30, s) for s in (0, 2, 5)]
    ev = pl.DataFrame({"eid": [0, 1, 2], "node": ["gpu-b7", "gpu-b8", node], "rank": [None] * 3, "pid": [None] * 3,
                       "ident": [None] * 3, "source": ["log", "log", "ray"], "ts": t, "file": ["job.out"] * 3,
                       "line": [10, 11, 20], "mark": ["shutdown", "shutdown", None], "attempt": [1, 1, 1],
                       "progress": [False] * 3}, schema_overrides={"rank": pl.Int64, "pid": pl.Int64, "ident": pl.String})
    life = Lifecycle(ev, {"job.out"})
    f = SimpleNamespace(eid=2, node=node, ts=t[2], file="job.out", line=20, place=20, source="ray")
    assert (life.after_stop(f) is not None) == trail


def test_a_service_is_ready_only_by_its_own_landmarks_when_services_share_a_node(tmp_path):
    # another compose service of the node (an embedding server) was ready; this one failed before it was
    def svc(name: str, m: int, text: str) -> str:
        return f"{name}-1  | 2025-09-03T08:{m:02d}:00.000000000Z {text}"
    embed = [svc("embed", 1, "(APIServer pid=7) INFO 09-03 08:01:00 [api_server.py:1] vLLM API server version 0.10.1"),
             svc("embed", 2, "(APIServer pid=7) INFO 09-03 08:02:00 [launcher.py:1] Application startup complete.")]
    chat = [svc("chat", 1, "(APIServer pid=9) INFO 09-03 08:01:00 [api_server.py:1] vLLM API server version 0.10.1"),
            svc("chat", 3, "(VllmWorker TP1 pid=286) ERROR 09-03 08:03:00 [worker.py:1] torch.OutOfMemoryError: CUDA "
                           "out of memory. Tried to allocate 28.00 MiB. GPU 1 has a total capacity of 79.19 GiB")]
    assert decision(tmp_path, {"compose-logs.txt": embed + chat}).outcome.state == "never_ready"


def test_a_unit_s_own_log_without_readiness_of_its_own_is_ready_when_its_node_s_server_is(tmp_path):
    # the server's log (no unit) was ready; its workers' NCCL output, journald's under a unit: no other service of the
    # node was ready on its own, so the unit's failure is the serving deployment's (near miss: the compose test above)
    server = [api(0, 0, "vLLM API server version 0.10.1"), api(3, 0, "Application startup complete."), *SERVING]
    unit = ["Nov 18 07:00:30 gpu-a1 vllm[5511]: gpu-a1:5511:5511 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 "
            "busId 18000 - Init COMPLETE",
            "Nov 18 07:00:31 gpu-a1 vllm[5511]: INFO 11-18 07:00:31 [__init__.py:1] Automatically detected platform "
            "cuda.",
            "Nov 18 07:06:00 gpu-a1 vllm[5511]: gpu-a1:5511:5600 [0] transport/net_ib.cc:1695 NCCL WARN NET/IB : Got "
            "completion from peer 10.0.0.2<33452> with status=12 opcode=1 len=0 vendor err 129 (Send) localGid "
            "::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0"]
    assert decision(tmp_path, {"gpu-a1/vllm.log": server, "gpu-a1/journal.txt": unit}).outcome.state == "crashed"


def test_near_miss_a_service_that_was_ready_itself_crashed(tmp_path):
    def svc(m: int, text: str) -> str:
        return f"chat-1  | 2025-09-03T08:{m:02d}:00.000000000Z {text}"
    chat = [svc(1, "(APIServer pid=9) INFO 09-03 08:01:00 [api_server.py:1] vLLM API server version 0.10.1"),
            svc(2, "(APIServer pid=9) INFO 09-03 08:02:00 [launcher.py:1] Application startup complete."),
            svc(3, "(VllmWorker TP1 pid=286) ERROR 09-03 08:03:00 [worker.py:1] torch.OutOfMemoryError: CUDA "
                   "out of memory. Tried to allocate 28.00 MiB. GPU 1 has a total capacity of 79.19 GiB")]
    assert decision(tmp_path, {"compose-logs.txt": chat}).outcome.state == "crashed"


# ------------------------------------------------------------------------------------------------------
# stops vLLM's own signal handler reports, errors a start survived, kills an eviction caused
# ------------------------------------------------------------------------------------------------------
SIGTERM_TRAIL = ["Traceback (most recent call last):",
                 '  File "/venv/vllm/entrypoints/openai/api_server.py", line 1916, in signal_handler',
                 '    raise KeyboardInterrupt("terminated")', "KeyboardInterrupt: terminated"]


def test_a_start_that_vllms_sigterm_handler_interrupts_was_stopped_not_failed(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [worker(1, 0, "Starting to load model m...")] + SIGTERM_TRAIL})
    assert state(d) == ("stopped", None) and d.healthy


def test_near_miss_a_failure_before_the_sigterm_handlers_stop_is_the_cause(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [worker(1, 0, "Starting to load model m..."),
                                                        OOM.replace("07:04:30", "07:01:30")] + SIGTERM_TRAIL})
    assert d.root is not None and d.root.category == "oom.load" and not d.healthy


HUB = api(0, 2, "Error retrieving safetensors: Cannot reach https://hf-mirror.com/m/resolve/main/model.safetensors: "
                "offline mode is enabled.", level="ERROR")
KILLED = "./serve.sh: line 9: 4711 Killed                  vllm serve m --port 8000"


def test_what_fails_after_the_server_an_error_let_start_is_ready_is_not_that_errors_failure(tmp_path):
    # (the shell's 'Killed' has no time of its own: it takes its neighbour's, seconds after the error)
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [HUB] + LOADED + READY + [KILLED]})
    assert d.root is not None and d.root.category == "proc.killed"
    assert next(f for f in d.findings if f.category == "model.download_failed").set_aside.startswith("survived")


def test_near_miss_an_error_followed_by_a_death_before_any_readiness_is_the_cause(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [HUB, KILLED]})
    assert d.root is not None and d.root.category == "model.download_failed" and d.outcome.state == "never_ready"


EVICTED = 'Message:          Usage of EmptyDir volume "hf-cache" exceeds the limit "100Gi". '


def attempt(m: int) -> list[str]:
    return [api(m, 0, "vLLM API server version 0.27.2"), worker(m, 20, "Starting to load model m...")] + \
        [api(m, 50, "Traceback (most recent call last):")] + SIGTERM_TRAIL[1:]


def test_stops_an_eviction_explains_are_failed_attempts_in_the_phase_the_work_had_reached(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": attempt(0) + attempt(2) + attempt(4),
                            "describe-pod.txt": ["Name:             vllm-0", "Namespace:        llm",
                                                 "Node:             gpu-a1/10.0.0.5", "Status:           Failed",
                                                 "Reason:           Evicted", EVICTED]})
    assert state(d) == ("restart_loop", "storage.disk_full") and d.root.phase == "model_load"


def test_near_miss_stops_with_no_cause_that_explains_them_are_an_operators(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": attempt(0) + attempt(2) + attempt(4)})
    assert state(d) == ("stopped", None) and d.healthy


ENGINE_GONE = [api(6, 0, "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.", level="ERROR"),
               api(6, 0, "AsyncLLM output_handler failed.", level="ERROR"), "Traceback (most recent call last):",
               '  File "/venv/vllm/v1/engine/core_client.py", line 885, in get_output_async',
               "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) "
               "for the root cause."]


def test_an_engine_that_dies_with_no_cause_anywhere_was_killed_not_failed_by_its_own_error(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + ENGINE_GONE})
    died = len(START + LOADED + READY + SERVING) + 1
    assert state(d) == ("crashed", "proc.killed") and d.root.line == died   # the death, not the EngineDeadError
    assert not any(f.category == "other" for f in d.findings)


def test_near_miss_an_engine_that_raised_before_it_died_died_of_that(tmp_path):
    raised = [worker(5, 50, "Traceback (most recent call last):", level="ERROR"),
              '  File "/venv/vllm/v1/worker/gpu_model_runner.py", line 10, in execute_model',
              "KeyError: 'mm_hashes'"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + raised + ENGINE_GONE})
    assert d.root is not None and d.root.category == "other" and "KeyError" in d.root.text


CAPTURED = worker(2, 30, "Graph capturing finished in 5 secs, took 0.33 GiB")
WARMUP_FAILS = worker(2, 31, "RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist",
                      level="ERROR")


def test_an_engine_that_failed_to_start_was_never_ready_whatever_landmark_came_before(tmp_path):
    failed = api(2, 31, "EngineCore failed to start.", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + [CAPTURED, failed, WARMUP_FAILS]})
    assert state(d) == ("never_ready", "compile.failed")


def test_near_miss_the_same_failure_with_no_failed_start_after_the_capture_crashed_a_ready_engine(tmp_path):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + [CAPTURED, WARMUP_FAILS]})
    assert state(d) == ("crashed", "compile.failed")


def api_raised(*frames: str) -> list[str]:
    return ["Traceback (most recent call last):"] + \
        [f'  File "/venv/vllm/entrypoints/openai/api_server.py", line 9, in {fn}' for fn in frames] + \
        ["ValueError: unreadable vocabulary file"]


def test_an_error_its_stack_places_in_the_servers_start_came_before_readiness(tmp_path):
    # (the engine captured its graphs; the API server failed building its handlers, after its workers went)
    gone = [worker(2, 40, "Parent process exited, terminating worker")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + [CAPTURED] + gone + api_raised("run_server", "init_app_state")})
    assert d.outcome.state == "never_ready"


def test_near_miss_an_error_of_a_serving_step_after_the_capture_crashed_a_ready_engine(tmp_path):
    gone = [worker(2, 40, "Parent process exited, terminating worker")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + [CAPTURED] + gone +
                            api_raised("run_busy_loop", "execute_model")})
    assert d.outcome.state == "crashed"


@pytest.mark.parametrize("warned, outcome", [
    ("09:00:00", "never_ready"),    # seconds before today's start: its import-time warning is its first line
    ("08:58:00", "restart_loop"),   # near miss: minutes before it, the warning stays with the run before
])
def test_an_import_warning_just_before_a_start_is_that_starts_not_the_previous_runs(tmp_path, warned, outcome):
    # (restarted by its orchestrator: failures in two starts are a loop)
    broken = f"WARNING 11-19 {warned} [_custom_ops.py:14] Failed to import from vllm._C with ImportError('/venv/" \
             "vllm/_C.abi3.so: undefined symbol: _ZN5torch7LibraryC1E')"
    today = [line.replace("11-18 07:", "11-19 09:") for line in START + LOADED]
    dies = worker(1, 30, "AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'", level="ERROR") \
        .replace("11-18 07:", "11-19 09:")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [broken] + today + [dies],
                            "kubectl-get-pods.txt": pods("CrashLoopBackOff", "1 (38s ago)")})
    assert state(d) == (outcome, "dep.undefined_symbol")


MISMATCH = "2026-11-18T07:04:10+00:00 gpu-a1 kernel: NVRM: API mismatch: the client 'nvidia-smi' (pid 991)#012NVRM: " \
           "has the version 580.95.05, but this kernel module has#012NVRM: the version 580.82.07.  Please make sure"


@pytest.mark.parametrize("outlived", [True, False])   # near miss: its run did not outlive it: its own phase
def test_a_fault_its_run_outlived_has_the_phase_where_it_bit_at_the_next_start(tmp_path, outlived):
    went_on = [api(20, 0, "Avg prompt throughput: 9.0 tokens/s, Avg generation throughput: 40.5 tokens/s, "
                          "Running: 1 reqs")] if outlived else []
    later = [api(30, 0, "vLLM API server version 0.27.2"),
             worker(30, 5, "RuntimeError: Failed to infer device type", level="ERROR")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + went_on + later,
                            "gpu-a1/kern.log": [MISMATCH]})
    assert d.root.category == "env.driver_mismatch" and (d.root.phase == "serving") != outlived


TIME_OF = re.compile(r"\d\d:\d\d:\d\d")


def supervised(second_start: list[str]) -> str:
    """A systemd unit's journal: `docker run` fails to publish its port, systemd restarts the unit once."""
    unit = "Nov 18 06:59:{s:02d} gpu-a1 {who}: {text}"
    return text_of(*[unit.format(s=s, who=w, text=t) for s, w, t in (
        (0, "systemd[1]", "Started vllm.service - vLLM server."),
        (1, "vllm[3120]", "docker: Error response from daemon: driver failed programming external connectivity on "
                          "endpoint vllm (5d1c0b9e): Bind for 0.0.0.0:8000 failed: port is already allocated."),
        (1, "systemd[1]", "vllm.service: Main process exited, code=exited, status=125/n/a"),
        (16, "systemd[1]", "vllm.service: Scheduled restart job, restart counter is at 1."),
        (16, "systemd[1]", "Started vllm.service - vLLM server."))], *[
        f"Nov 18 {TIME_OF.search(line)[0]} gpu-a1 vllm[3188]: {line}" for line in second_start])


def test_a_start_its_supervisor_restarted_once_and_that_then_serves_survived_its_failure(tmp_path):
    d = decision(tmp_path, {"journal.txt": supervised(START + LOADED + READY + SERVING)})
    assert state(d) == ("serving", None) and d.healthy
    port = next(f for f in d.findings if f.category == "net.port_in_use")
    assert port.set_aside.startswith("survived: its node became ready")


def test_near_miss_a_restart_whose_start_fails_again_is_no_recovery(tmp_path):
    again = START + [api(0, 5, "OSError: [Errno 98] Address already in use", level="ERROR")]
    d = decision(tmp_path, {"journal.txt": supervised(again)})
    assert not d.healthy and d.root.category == "net.port_in_use"


# ------------------------------------------------------------------------------------------
# a rolling update: a pod that waited for a node, old pods stopped while new ones serve
# ------------------------------------------------------------------------------------------
def events_of_update(scheduled: str) -> str:
    head = "LAST                   TYPE      REASON              OBJECT              COUNT   MESSAGE"
    return text_of(head,
                   "2026-08-11T10:00:30Z   Warning   FailedScheduling    vllm-new-m9c4t      1       0/4 nodes are "
                   "available: 4 Insufficient nvidia.com/gpu.",
                   f"2026-08-11T10:00:50Z   Normal    Scheduled           {scheduled}      1       Successfully "
                   f"assigned llm/{scheduled} to gpu-b2")


@pytest.mark.parametrize("scheduled, healthy", [("vllm-new-m9c4t", True),     # the pod that waited got its node
                                                ("vllm-new-x7k2p", False)])   # near miss: another pod's
def test_a_pod_scheduled_after_it_waited_for_a_node_survived_it(tmp_path, scheduled, healthy):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING,
                            "kubectl/events.txt": events_of_update(scheduled)})
    assert d.healthy == healthy


def test_a_run_that_still_serves_is_in_serving_though_an_old_pods_stop_comes_last_in_the_files(tmp_path):
    from conftest import report_of
    later = [api(6, s, SERVING[0].split("] ", 1)[1]) for s in (0, 10)]
    root = make_bundle(tmp_path, {"gpu-a1/new-pod.log": "\n".join(START + LOADED + READY + later) + "\n",
                                  "gpu-a2/old-pod.log": "\n".join(SERVING + STOP) + "\n",
                                  "kubectl/events.txt": text_of(  # (an untimed header, in the phase of the stop)
                                      "$ kubectl get events -n llm", "LAST                   TYPE      REASON     "
                                      "OBJECT     COUNT   MESSAGE", "2026-11-18T07:05:00Z   Normal    Killing    "
                                      "vllm-old   1       Stopping container vllm")})
    r = report_of(run(root))
    assert (r.outcome.state, r.phase) == ("serving", "serving")


@pytest.mark.parametrize("second_args, state", [("{'model': 'm', 'tensor_parallel_size': 2}", "never_ready"),
                                                ("{'model': 'm', 'tensor_parallel_size': 1}", "restart_loop")])
def test_a_rerun_with_other_arguments_is_another_run_not_the_first_started_again(tmp_path, second_args, state):
    # near miss: the same arguments started again and failing again is a loop
    def attempt(m: int, args: str) -> list[str]:
        return [api(m, 0, "vLLM API server version 0.27.2"), api(m, 1, f"non-default args: {args}"),
                worker(m, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", level="ERROR")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": attempt(0, "{'model': 'm', 'tensor_parallel_size': 1}")
                            + attempt(5, second_args) + attempt(9, second_args)})
    assert d.outcome.state == state


# ------------------------------------------------------------------------------------------------------
# whose lifecycle a node's line lives in
# ------------------------------------------------------------------------------------------------------
def _worker_oom_phase(tmp_path, worker_node: list[str]) -> str | None:
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + LATER,
                            "gpu-b1/vllm.log": worker_node})
    return next(f for f in d.findings if f.node == "gpu-b1" and f.category.startswith("oom")).phase


@pytest.mark.parametrize("stop_of_its_own", [[], [worker(4, 40, "Shutting down")]])
def test_a_headless_node_lives_in_the_deployments_serving_whether_or_not_it_stops_on_its_own(tmp_path,
                                                                                              stop_of_its_own):
    """A node with no serving landmark of its own (its engine's stats are the head's) serves while the deployment
    does; a stop landmark of its own, after, is no serving of its own."""
    assert _worker_oom_phase(tmp_path, [worker(1, 0, "Starting to load model m..."), OOM] + stop_of_its_own) \
        == "serving"


def test_near_miss_a_node_with_a_stop_of_its_own_takes_no_stop_from_a_deployment_that_never_served(tmp_path):
    """The head stopped during the start (the failure's consequence, logged first); the worker node's own failure
    after it stays in the phase its own start reached."""
    oom = worker(5, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + STOP,
                            "gpu-b1/vllm.log": [worker(1, 0, "Starting to load model m..."), oom,
                                                worker(5, 40, "Shutting down")]})
    assert next(f for f in d.findings if f.node == "gpu-b1" and f.category.startswith("oom")).phase == "model_load"


@pytest.mark.parametrize("start, phase", [((0, 10), "serving"),    # near miss: started with the deployment
                                          ((4, 10), "startup")])   # started once the deployment served already
def test_a_start_once_the_deployment_already_served_lives_a_lifecycle_of_its_own(tmp_path, start, phase):
    """A replacement pod (a rollout's, a crash loop's) starting beside a replica that serves on has not served."""
    assert _worker_oom_phase(tmp_path, [api(*start, "vLLM API server version 0.27.2"), OOM]) == phase


@pytest.mark.parametrize("untimed", [{}, {"gpu-b1/container.env": "NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME=eth0\n"}])
@pytest.mark.parametrize("restart, phase", [(True, "startup"),    # the node stopped and started again
                                            (False, "shutdown")])  # near miss: no start of its own after the stop
def test_a_node_s_new_start_after_its_stop_lives_its_own_lifecycle_whatever_untimed_lines_the_bundle_holds(
        tmp_path, untimed, restart, phase):
    """A headless node the deployment stopped and that started again has not served in its new start; an untimed
    line elsewhere (a dump's) does not carry the node's earlier serving over into it."""
    again = [api(4, 10, "Automatically detected platform cuda.")] if restart else []
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + LATER, **untimed,
                            "gpu-b1/vllm.log": [worker(1, 0, "Starting to load model m..."),
                                                worker(4, 0, "Shutting down"), *again, OOM.replace("4711", "5120")]})
    assert next(f for f in d.findings if f.node == "gpu-b1" and f.category.startswith("oom")).phase == phase


@pytest.mark.parametrize("restart, phase", [(True, "model_load"),  # a new start: its pid 4711 is a new process
                                            (False, "shutdown")])   # near miss: the same process, after its stop
def test_a_pid_an_earlier_attempt_used_is_a_new_process_in_the_next(tmp_path, restart, phase):
    """A container started again numbers its processes anew: a worker with the pid of one the last run stopped has
    reached only its own landmarks."""
    again = [api(2, 0, "Automatically detected platform cuda.")] if restart else []
    oom = worker(3, 30, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", level="ERROR")
    d = decision(tmp_path, {"gpu-a1/vllm.log": [api(0, 0, "Automatically detected platform cuda."),
                                                worker(0, 10, "Starting to load model m..."),
                                                worker(1, 0, "Shutting down"), *again,
                                                worker(3, 0, "Starting to load model m..."), oom]})
    assert next(f for f in d.findings if f.category.startswith("oom")).phase == phase


@pytest.mark.parametrize("start, phase", [((5, 0), "serving"),    # the node's log begins after the fault
                                          ((4, 10), "startup")])  # near miss: its start came before the fault
def test_a_node_s_line_before_its_start_once_the_deployment_served_lives_in_the_deployment_s_serving(tmp_path,
                                                                                                     start, phase):
    """A node whose earlier logs are gone (a restarted worker pod's): its kernel's fault before the log's first
    start happened while the deployment served; only what follows that start lives a lifecycle of its own."""
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + LATER,
                            "gpu-b1/kern.log": ["Nov 18 07:04:30 gpu-b1 kernel: NVRM: Xid (PCI:0000:9a:00): 79, "
                                                "pid=4711, name=VLLM::Worker_TP, GPU has fallen off the bus."],
                            "gpu-b1/vllm.log": [api(*start, "Automatically detected platform cuda."),
                                                api(5, 30, "Shutting down")]})
    assert next(f for f in d.findings if f.node == "gpu-b1" and f.category == "gpu.xid").phase == phase


@pytest.mark.parametrize("dedup, phase", [(" [repeated 7x across cluster]", "model_load"),   # one line for eight
                                          ("", "distributed_init")])  # near miss: another worker's line alone
def test_a_landmark_ray_printed_once_for_many_workers_is_each_worker_s_own(tmp_path, dedup, phase):
    """Ray drops the copies of a line its workers all print: the one that shows stands for every worker of its node,
    so a worker whose own lines stop at its communicator had loaded the model too."""
    def ray(pid: int, s: int, text: str) -> str:
        return f"(RayWorkerWrapper pid={pid}, ip=10.0.0.2) INFO 11-18 07:{s // 60:02d}:{s % 60:02d} " \
               f"[worker.py:1] {text}"
    lines = [ray(5512, 5, "rank 11 in world size 16 is assigned as DP rank 0, PP rank 0, TP rank 11"),
             ray(5501, 60, "Model loading took 47.2 GiB and 589.2 seconds" + dedup),
             "(RayWorkerWrapper pid=5512, ip=10.0.0.2) gpu-b1:5512:5800 [3] NCCL WARN NET/IB : mlx5_3:1 Got async "
             "event : local access violation work queue error"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + lines, "hosts": ["10.0.0.2 gpu-b1"]})
    assert next(f for f in d.findings if f.category == "nccl.ib_transport").phase == phase


@pytest.mark.parametrize("names_it, node", [(True, "gpu-b1"),    # the message names the dead actor's pid and ip
                                            (False, "gpu-a1")])  # near miss: it does not: the relaying driver's node
def test_a_relayed_actor_death_is_on_the_node_of_the_actor_its_message_names(tmp_path, names_it, node):
    def core(text: str) -> str:
        return f"(EngineCore_DP0 pid=2291) ERROR 11-18 07:04:30 [core.py:712] {text}"
    actor = ["\tclass_name: RayWorkerWrapper", "\tactor_id: 4b3c", "\tpid: 51877", "\tnamespace: 6f1e",
             "\tip: 10.0.0.2"] if names_it else []
    died = [core(x) for x in [
        "EngineCore failed to start.", "Traceback (most recent call last):",
        '  File "/opt/vllm/v1/engine/core.py", line 703, in run_engine_core',
        "    engine_core = EngineCoreProc(*args, **kwargs)",
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.", *actor,
        "The actor is dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY Worker exit "
        "detail: Task was killed due to the node running low on memory."]]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + [worker(1, 0, "Starting to load model m...")] + died,
                            "hosts": ["10.0.0.1 gpu-a1", "10.0.0.2 gpu-b1"]})
    assert d.root is not None and d.root.category == "oom.host" and d.root.node == node


@pytest.mark.parametrize("names_gpu, rank", [(" GPU 1 has a total capacity of 79.19 GiB of which 1.02 GiB is free.", 5),
                                             ("", None)])   # near miss: the error names no device
def test_a_relayed_cuda_error_takes_the_rank_its_device_is_on_the_node_of_the_actor_that_raised_it(tmp_path, names_gpu,
                                                                                                 rank):
    def ray(pid: int, ip: str, r: int) -> str:
        return f"(RayWorkerWrapper pid={pid}, ip={ip}) INFO 11-18 07:01:00 [parallel_state.py:1] rank {r} in world " \
               f"size 8 is assigned as DP rank 0, PP rank {r // 4}, TP rank {r % 4}"
    def core(text: str) -> str:
        return f"(EngineCore_DP0 pid=2291) ERROR 11-18 07:04:30 [core.py:712] {text}"
    raised = [core(x) for x in [
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::RayWorkerWrapper.execute_method() (pid=6005, "
        "ip=10.0.0.2, actor_id=9c1e)", '  File "/opt/vllm/v1/worker/gpu_worker.py", line 367, in execute_model',
        "    output = self.model_runner.execute_model(scheduler_output)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.22 GiB." + names_gpu]]
    own = "(RayWorkerWrapper pid=6005, ip=10.0.0.2) INFO 11-18 07:02:00 [gpu_worker.py:1] Model loading took 40.1 GiB"
    start = [START[0], api(0, 1, "non-default args: {'model': 'm', 'tensor_parallel_size': 4, "
                                 "'pipeline_parallel_size': 2, 'distributed_executor_backend': 'ray'}")]
    ranks = [ray(6000, "10.0.0.1", 0), ray(6004, "10.0.0.2", 4), own]
    d = decision(tmp_path, {"gpu-a1/vllm.log": start + LOADED + READY + SERVING + ranks + raised,
                            "hosts": ["10.0.0.1 gpu-a1", "10.0.0.2 gpu-b1"]})
    assert d.root is not None and d.root.category == "oom.inference" and (d.root.node, d.root.rank) == ("gpu-b1", rank)


@pytest.mark.parametrize("app_log, state, phase", [(False, "inconclusive", None),   # only the kernel's log
                                                   (True, "crashed", "serving")])     # near miss: the server's too
def test_a_cause_in_a_bundle_with_no_log_of_the_deployment_has_an_inconclusive_outcome_and_no_guessed_phase(
        tmp_path, app_log, state, phase):
    from conftest import report_of
    xid = "Nov 18 07:04:30 gpu-a1 kernel: NVRM: Xid (PCI:0000:9b:00): 119, pid=4711, name=pt_main_thread, Timeout " \
          "after 6s of waiting for RPC response from GPU4 GSP!"
    files = {"gpu-a1/kern.log": xid + "\n"}
    if app_log:
        files["gpu-a1/vllm.log"] = "\n".join(START + LOADED + READY + SERVING + [DEAD]) + "\n"
    r = report_of(run(make_bundle(tmp_path, files)))
    assert (r.root_cause.category, r.outcome.state, r.phase) == ("gpu.xid", state, phase)


@pytest.mark.parametrize("copy_pid, line", [(1187, 6),   # the same process's stamped copy: the raw line, at its time
                                             (1190, 8)])  # near miss: another process's statement
def test_a_crash_printed_raw_then_stamped_by_its_process_is_one_event_at_its_first_line(tmp_path, copy_pid, line):
    def ray(pid: int, text: str) -> str:
        return f"(RayWorkerWrapper pid={pid}, ip=10.0.0.2) {text}"
    sig = "*** SIGSEGV received at time=1763449442 on cpu 83 ***"
    lines = [ray(1190, "WARNING 11-18 07:04:05 [fused_moe.py:888] Using default MoE config."),
             ray(1187, sig), ray(1187, "PC: @     0x7f2e41d3b44a  (unknown)  addProxyOpIfNeeded()"),
             ray(copy_pid, f"[2026-11-18 07:04:02,418 E {copy_pid} {copy_pid}] logging.cc:474: {sig}")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + lines})
    assert d.root is not None and d.root.category == "proc.segfault" and (d.root.line, d.root.pid) == (line, copy_pid)


def test_near_miss_an_orchestrator_s_cause_with_no_log_of_the_deployment_says_it_never_ran(tmp_path):
    """A pod never scheduled has no log of its own: that it never became ready is the orchestrator's to say."""
    events = ["LAST SEEN   TYPE      REASON             OBJECT          MESSAGE",
              "2026-11-18T07:04:30Z   Warning   FailedScheduling   pod/vllm-0   0/4 nodes are available: "
              "4 Insufficient "
              "nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."]
    d = decision(tmp_path, {"kubectl/events.txt": events})
    assert d.root is not None and d.root.category == "infra.unschedulable" and d.outcome.state == "never_ready"


RAYLET_GONE = "(EngineCore_DP0 pid=388) (raylet) A worker died or was killed while executing a task by an unexpected " \
    "system error. Worker IP address: 10.60.3.21 Worker port: 10107 Worker PID: 3871 Worker exit type: SYSTEM_ERROR"


@pytest.mark.parametrize("last, phase", [
    (RAYLET_GONE, "cudagraph_capture"),   # the raylet's report about rank 6: the node's phase then
    ("(RayWorkerWrapper pid=3871) ERROR 11-18 07:02:51 [gpu_worker.py:1] RuntimeError: CUDA error: an illegal memory "
     "access was encountered", "model_load")])   # near miss: rank 6's own line: the furthest it reached itself
def test_a_report_of_a_worker_s_death_lives_in_its_writer_s_or_node_s_phase_not_the_dead_worker_s_last_line(
        tmp_path, last, phase):
    """The raylet reports a worker gone while the node captures CUDA graphs (rank 0's bar shows it): the death is
    placed then, whatever the dead worker last printed itself."""
    def ray(pid: int, s: int, text: str) -> str:
        return f"(RayWorkerWrapper pid={pid}) INFO 11-18 07:0{s // 60}:{s % 60:02d} [gpu_worker.py:1] {text}"
    start = [START[0], api(0, 1, "non-default args: {'model': 'm', 'tensor_parallel_size': 8}")]
    lines = [ray(3840, 50, "rank 0 in world size 8 is assigned as DP rank 0, PP rank 0, TP rank 0"),
             ray(3871, 51, "rank 6 in world size 8 is assigned as DP rank 0, PP rank 0, TP rank 6"),
             ray(3871, 100, "Model loading took 40.1 GiB and 60.2 seconds"),
             "(EngineCore_DP0 pid=388) INFO 11-18 07:02:50 [kv_cache_utils.py:1] GPU KV cache size: 1,024,000 tokens",
             "(RayWorkerWrapper pid=3840) Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   0%|"
             "          | 0/67",
             last]
    d = decision(tmp_path, {"gpu-a1/vllm.log": start + lines, "hosts": ["10.60.3.21 gpu-a1"]})
    f = next(f for f in d.findings if f.line == len(start + lines))
    assert (f.rank, f.phase) == (6, phase)


PORT = "gpu-b1:{pid}:4800 [{r}] NCCL WARN NET/IB : mlx5_2:1 Got async event : port {state}"
STATUS12 = ("gpu-b1:4712:4801 [1] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<41873> with status=12 opcode=0 "
            "len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.2 remoteGids::ffff:10.0.0.1 hca mlx5_2")


@pytest.mark.parametrize("meanwhile, survived", [([], True),                        # two ranks' witnesses of one flap
                                                 ([(4711, 31, STATUS12)], False)])  # near miss: a transfer failed
def test_a_flap_that_every_rank_saw_come_back_was_survived(tmp_path, meanwhile, survived):
    """Each rank on the port prints the adapter's 'port error', then 'port active': the other rank's witness of the
    same flap is no failure it caused; a completion error before the port came back is."""
    ranks = [(4711, 0), (4712, 1)]
    flap = [worker(4, 30, PORT.format(pid=p, r=r, state="error"), pid=p) for p, r in ranks] + \
           [worker(4, s, text, pid=p) for p, s, text in meanwhile] + \
           [worker(4, 33, PORT.format(pid=p, r=r, state="active"), pid=p) for p, r in ranks]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + LATER,
                            "gpu-b1/vllm.log": [worker(1, 0, "Starting to load model m...", pid=p) for p, _ in ranks]
                            + flap})
    assert (d.root is None) == survived


@pytest.mark.parametrize("unit, own_lines, healthy", [("node-exporter", True, True),
                                                       ("vllm-chat", False, False)])   # near miss: a unit of no lines
def test_a_restart_of_a_unit_whose_own_lines_are_another_programs_is_no_incident(tmp_path, unit, own_lines, healthy):
    """An exporter that failed to bind and was restarted by systemd, while the deployment serves: not the
    deployment's restart. A unit the bundle shows no line of may be the deployment's."""
    bind = f'Nov 18 07:04:10 gpu-a1 {unit}[3114]: level=error err="listen tcp :9100: bind: address already in use"'
    journal = ([bind] if own_lines else []) + \
        [f"Nov 18 07:04:10 gpu-a1 systemd[1]: {unit}.service: Main process exited, code=exited, status=1/FAILURE",
         f"Nov 18 07:04:15 gpu-a1 systemd[1]: {unit}.service: Scheduled restart job, restart counter is at 1."]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + LATER, "gpu-a1/journal.txt": journal})
    assert d.healthy == healthy


@pytest.mark.parametrize("instance, healthy", [("gpu-b9", True),     # another VM of the same spot pool
                                               ("gpu-a1", False)])   # near miss: the deployment's own node
def test_a_cloud_operation_on_a_node_the_deployment_does_not_run_on_is_no_incident(tmp_path, instance, healthy):
    """A cloud's operation list names every instance it preempted in the zone: one the deployment's lines show it
    does not run on is another node's business."""
    ops = ["NAME                          TYPE                         TARGET    STATUS  TIMESTAMP",
           f"systemevent-1763449450-64a1c0  compute.instances.preempted  {instance}  DONE    2026-11-18T07:04:10.412Z"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING, "gcloud-operations.txt": ops})
    assert d.healthy == healthy
    if not healthy:
        assert (d.root.category, d.root.node) == ("infra.node_lost", "gpu-a1")


@pytest.mark.parametrize("app_nodes, about", [({"gpu-a1"}, "gpu-b9"),               # every line placed elsewhere
                                              ({"gpu-a1", "10.52.14.9"}, None)])   # near miss: a node known by its ip
def test_a_cloud_operation_is_about_another_node_only_where_every_part_of_the_deployment_is_placed(app_nodes, about):
    from types import SimpleNamespace
    from k3logs.diagnose.survived import foreign_node
    f = SimpleNamespace(fields={"preempted": "us-central1-c/instances/gpu-b9"})
    assert foreign_node(f, SimpleNamespace(app_nodes=app_nodes)) == about


@pytest.mark.parametrize("hour, about", [(1, "gpu-b9"),   # hours before the deployment's first line, which then worked
                                         (7, None)])       # near miss: while it served
def test_an_instance_lost_before_the_deployments_first_line_is_none_of_its_nodes(hour, about):
    """Where some part of the deployment is not placed (a worker's pod gone with its node), an instance the cloud
    preempted before its first line is none of its nodes: it ran on what it got after."""
    from datetime import datetime, timezone
    from types import SimpleNamespace
    from k3logs.diagnose.survived import lost_before
    began = datetime(2026, 11, 18, 5, 0, tzinfo=timezone.utc)
    life = SimpleNamespace(began_after=lambda ts: ts < began, went_on_anywhere=lambda f: "vllm.log:9")
    f = SimpleNamespace(fields={"preempted": "us-central1-c/instances/gpu-b9"},
                        ts=datetime(2026, 11, 18, hour, 4, tzinfo=timezone.utc))
    assert lost_before(f, life) == about


CLOUD_OPS = ("gcloud-operations.txt", [
    "NAME                          TYPE                         TARGET    STATUS  TIMESTAMP",
    "systemevent-1763449450-64a1c0  compute.instances.preempted  gpu-a1  DONE    2026-11-18T07:04:10.412Z"])
NODE_NOT_READY = ("events.txt", [   # (the node controller's record, stamped to the second)
    "LAST                   NAMESPACE   TYPE     REASON         OBJECT        MESSAGE",
    "2026-11-18T07:04:10Z   default     Normal   NodeNotReady   node/gpu-a1   Node gpu-a1 status is now: NodeNotReady"])


@pytest.mark.parametrize("record", [CLOUD_OPS, NODE_NOT_READY])
@pytest.mark.parametrize("journal_host", ["gpu-a1", "gpu-a2"])
def test_a_nodes_own_line_states_its_loss_before_a_record_from_outside_of_the_same_moment(tmp_path, record,
                                                                                          journal_host):
    """The cloud's operation list, or the node controller's NodeNotReady, and the VM's own journal ('Power key pressed
    short.', the ACPI soft-off of a preemption) state the node's loss in the same second: the machine's own line is
    the first witness, whatever the signatures' priorities. Near miss: a power key pressed on another node that second
    is no statement about this one, and the record from outside stands."""
    name, lines = record
    journal = [f"2026-11-18T07:04:10.412000+00:00 {journal_host} systemd-logind[1203]: Power key pressed short."]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING, name: lines,
                            "gpu-a2/vllm.log": [worker(1, 0, "Starting to load model m...")],
                            f"{journal_host}/journal.txt": journal})
    want = f"{journal_host}/journal.txt" if journal_host == "gpu-a1" else name
    assert (d.root.category, d.root.file) == ("infra.node_lost", want)


POD_LOG = "pods/inference_kimi-k3-0_c2f81a07-9d4e-4b6a-8e13-5a7d0c9b2f64/vllm/0.log"
POD_DESCRIBE = ["Name:             kimi-k3-0", "Namespace:        inference", "Node:             gpu-a1/10.0.0.4",
            "Containers:", "  vllm:", "    Image:          vllm/vllm-openai:kimi-k3", "Events:",
            "  Type     Reason            Age   From               Message",
            "  ----     ------            ----  ----               -------",
            "  Warning  FailedScheduling  36m   default-scheduler  0/6 nodes are available: 1 Insufficient "
            "nvidia.com/gpu, 5 node(s) didn't match Pod's node affinity/selector."]
POD_SCHEDULED = ("  Normal   Scheduled         36m   default-scheduler  Successfully assigned inference/kimi-k3-0 "
                 "to gpu-a1")
EVENTS_ALL_NS = ["$ kubectl get events -A",
                 "NAMESPACE   LAST SEEN   TYPE      REASON             OBJECT           MESSAGE",
          "inference   36m         Warning   FailedScheduling   pod/kimi-k3-0    0/6 nodes are available: 1 "
          "Insufficient nvidia.com/gpu."]


def aside_at(d, file: str, line: int) -> str | None:
    return next(f.set_aside for f in d.findings if f.file == file and f.line == line)


@pytest.mark.parametrize("scheduled", [True, False])   # near miss: no Scheduled row after it
def test_a_pod_s_scheduling_failure_its_describe_shows_it_recovered_from_is_survived(tmp_path, scheduled):
    """A describe's event rows name no pod: they are the described pod's, so its Scheduled row after a
    FailedScheduling is that failure's recovery; the events list's copy of the failure (untimed too) is the same."""
    d = decision(tmp_path, {POD_LOG: START + LOADED + READY + SERVING + LATER,
                            "describe-pod.txt": POD_DESCRIBE + ([POD_SCHEDULED] if scheduled else []),
                            "events.txt": EVENTS_ALL_NS})
    if scheduled:
        assert aside_at(d, "describe-pod.txt", 10).startswith("survived: it recovered (describe-pod.txt:11)")
        assert aside_at(d, "events.txt", 3).startswith("the same failure of the same pod")
    else:
        assert aside_at(d, "describe-pod.txt", 10) is None and aside_at(d, "events.txt", 3) is None


@pytest.mark.parametrize("ns, foreign", [("gpu-operator", True),   # an exporter of another namespace
                                         ("inference", False)])    # near miss: the deployment's own namespace
def test_a_crash_loop_of_a_pod_in_a_namespace_the_deployment_does_not_run_in_is_no_incident(tmp_path, ns, foreign):
    back_off = (f"{ns}   30m   Warning   BackOff   pod/dcgm-exporter-w9r4k   Back-off restarting failed container "
                f"dcgm-exporter in pod dcgm-exporter-w9r4k_{ns}(5e1d2c3b-7a8f-4e6d-9c0b-1a2f3e4d5c6b)")
    evicted = (f"{ns}   4h12m   Warning   Evicted   pod/nightly-eval-3-8x2kf   The node was low on resource: "
               "ephemeral-storage. Threshold quantity: 345567824588, available: 331902116Ki.")
    d = decision(tmp_path, {POD_LOG: START + LOADED + READY + SERVING + LATER,
                            "events.txt": EVENTS_ALL_NS[:2] + [back_off, evicted]})
    for line in (3, 4):   # (a crash loop, an eviction)
        assert (aside_at(d, "events.txt", line) == f"about a pod of namespace {ns}, where none of the deployment's "
                                                   "pods runs") == foreign


@pytest.mark.parametrize("pod, served, foreign", [
    ("eval-runner-6cc9f4d7b8-9gq4z", True, True),    # another workload's pod, while the deployment served
    ("kimi-k3-7f6d9c8b5d-wx4tn", True, False),       # near miss: a new pod of the deployment's own (a rollout's)
    ("eval-runner-6cc9f4d7b8-9gq4z", False, False)])  # near miss: the deployment never served
def test_a_pod_of_another_workload_failing_while_the_deployment_serves_is_no_incident(tmp_path, pod, served, foreign):
    """A pod whose name shares no first word with any of the deployment's pods is another workload's: its image
    pull failing is no failure of the deployment, as long as the deployment served (before it did, the pod may be a
    part it waits for)."""
    rows = ["LAST SEEN   TYPE      REASON   OBJECT   MESSAGE",
            f'39m   Warning   Failed   pod/{pod}   Failed to pull image "registry.internal/ml/app:2.4.1": rpc error: '
            'code = NotFound desc = failed to resolve reference "registry.internal/ml/app:2.4.1": not found',
            f"2m    Warning   Failed   pod/{pod}   Error: ImagePullBackOff"]
    d = decision(tmp_path, {POD_LOG: START + LOADED + (READY + SERVING + LATER if served else []),
                            "events.txt": rows})
    for line in (2, 3):
        assert (aside_at(d, "events.txt", line) or "").startswith(f"about pod {pod}, of a workload") == foreign
    assert (d.root is None) == foreign


@pytest.mark.parametrize("served", [True, False])   # near miss: before the deployment served
def test_an_error_no_signature_knows_in_another_workload_s_describe_is_no_incident(tmp_path, served):
    """An unknown exception (a traceback no signature names) in the describe of another workload's pod is that
    workload's, as its signature findings are."""
    describe = ["Name:             etl-worker-5c8d9f7b6-q4m2z", "Namespace:        inference",
                "Node:             gpu-a1/10.0.0.4", "Containers:", "  etl:", "    State:          Waiting",
                "      Reason:       CrashLoopBackOff", "    Restart Count:  7",
                "$ kubectl logs -n inference etl-worker-5c8d9f7b6-q4m2z --previous | tail -n 5",
                "Traceback (most recent call last):", '  File "/app/etl/main.py", line 41, in <module>',
                '    bucket = os.environ["S3_BUCKET"]', "KeyError: 'S3_BUCKET'"]
    d = decision(tmp_path, {POD_LOG: START + LOADED + (READY + SERVING + LATER if served else []),
                            "describe-etl.txt": describe})
    assert (d.root is None) == served
    if not served:
        assert d.root.file == "describe-etl.txt"


def _assigned(rank: int, pid: int) -> str:
    return worker(0, 30, f"rank {rank} in world size 2 is assigned as DP rank 0, PP rank {rank}, TP rank 0", pid=pid)


@pytest.mark.parametrize("placed, aside", [(True, True),     # ranks 0 and 1 on gpu-a1 and gpu-b2: cpu-c3 is another's
                                           (False, False)])  # near miss: rank 1 placed nowhere: cpu-c3 may hold it
def test_a_failure_where_none_of_the_deployment_s_ranks_ran_while_it_worked_on_is_no_cause(tmp_path, placed, aside):
    kill = "Nov 18 07:04:50 cpu-c3 kernel: Out of memory: Killed process 4242 (python3) total-vm:48000000kB"
    files = {"gpu-a1/vllm.log": [_assigned(0, 4711)] + START + LOADED + READY + SERVING + LATER,
             "cpu-c3/kern.log": [kill]}
    if placed:
        files["gpu-b2/vllm.log"] = [_assigned(1, 5811)]
    d = decision(tmp_path, files)
    got = aside_at(d, "cpu-c3/kern.log", 1) or ""
    assert got.startswith("about cpu-c3, where none of the deployment's ranks ran") == aside


@pytest.mark.parametrize("ready, survived", [(True, True),     # the server became ready after the refused request
                                             (False, False)])  # near miss: it never did
def test_a_request_failed_before_the_server_was_ready_is_survived_once_it_is(tmp_path, ready, survived):
    gateway = 'gateway-1  | INFO:     172.19.0.1:40212 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error'
    server = ["vllm-1     | " + line for line in START + LOADED]
    later = ["vllm-1     | " + line for line in READY + SERVING + LATER] if ready else []
    d = decision(tmp_path, {"gpu-a1/compose-logs.txt": server + [gateway] + later})
    assert (aside_at(d, "gpu-a1/compose-logs.txt", 5) or "").startswith("survived: its node became ready") == survived


NODE_EVENTS = ["Events:", "  Type     Reason        Age   From     Message",
               "  ----     ------        ----  ----     -------",
               "  Normal   NodeNotReady  41m   kubelet  Node gpu-a1 status is now: NodeNotReady"]


@pytest.mark.parametrize("ready, survived", [(True, True),     # a kubelet restarted: Ready again, nothing failed
                                             (False, False)])  # near miss: the node never came back
def test_a_node_ready_again_with_nothing_failing_meanwhile_was_not_lost(tmp_path, ready, survived):
    back = ["  Normal   NodeReady     41m   kubelet  Node gpu-a1 status is now: NodeReady"] if ready else []
    head = ["Name:               gpu-a1", "Roles:              <none>",
            "Labels:             kubernetes.io/hostname=gpu-a1",
            "Taints:             <none>", "Capacity:", "  nvidia.com/gpu:     8"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + LATER,
                            "describe-node-gpu-a1.txt": head + NODE_EVENTS + back})
    assert (aside_at(d, "describe-node-gpu-a1.txt", 10) or "").startswith("survived: it recovered") == survived


GC_FAILED = ('Nov 18 07:04:30 gpu-a1 kubelet[918]: W1118 07:04:30.221990  918 image_gc_manager.go:446] '
             '"Failed to garbage collect required amount of images" err="wanted to free 80 GiB, but freed 12 GiB"')


@pytest.mark.parametrize("serving_after, survived", [(True, True),     # the server served on, on that node
                                                     (False, False)])  # near miss: nothing of it after
def test_a_node_s_disk_at_its_threshold_while_its_server_serves_on_was_survived(tmp_path, serving_after, survived):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + (LATER if serving_after else []),
                            "gpu-a1/journal-kubelet.txt": [GC_FAILED]})
    assert (aside_at(d, "gpu-a1/journal-kubelet.txt", 1) is not None) == survived


@pytest.mark.parametrize("later_task, survived", [(0, False),   # another task loading on is not its going on
                                                  (6, True)])   # near miss: the task itself went on loading
def test_a_task_of_a_job_s_output_goes_on_only_by_its_own_work(tmp_path, later_task, survived):
    oom = ("6: [rank6]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 2 has a total "
           "capacity of 44.39 GiB of which 281.06 MiB is free.")
    out = [f"{t}: INFO 05-21 14:02:09 [parallel_state.py:1] rank {t} in world size 8 is assigned as DP rank 0, PP rank "
           f"0, TP rank {t}" for t in range(8)] + \
          [f"{t}: INFO 05-21 14:02:20 [gpu_model_runner.py:1] Starting to load model m..." for t in range(8)] + \
          [oom, f"{later_task}: INFO 05-21 14:03:29 [default_loader.py:1] Loading weights took 63.87 seconds"]
    d = decision(tmp_path, {"run-4471823.log": out})
    assert (aside_at(d, "run-4471823.log", 17) or "").startswith("survived") == survived


@pytest.mark.parametrize("line, asked", [
    ("slurmstepd: error: *** JOB 884213 ON gpu-b017 CANCELLED AT 2026-03-11T10:37:12 ***", True),   # its owner
    ("slurmstepd: error: *** JOB 884213 ON gpu-b017 CANCELLED AT 2026-03-11T10:37:12 DUE TO TIME LIMIT ***", True),
    ("slurmstepd: error: *** JOB 884213 ON gpu-b017 CANCELLED AT 2026-03-11T10:37:12 DUE TO NODE FAILURE ***",
     False),                                                          # near miss: the job lost a node
    ("Shutting down", False),                                         # near miss: a server winding down by itself
    ("(gcs_server) gcs_node_manager.cc:127: Drain node request received, node id = 5d0c, reason = "
     "DRAIN_NODE_REASON_PREEMPTION, reason message = received SIGTERM", False),   # near miss: a cloud took the node
    ("[shutdown] EngineCore: received SIGTERM, shutting down", True),
])
def test_a_stop_asked_from_outside_is_told_from_a_wind_down(line, asked):
    import polars as pl

    from k3logs.diagnose.detect import outcome_data
    assert pl.Series([line]).str.contains(outcome_data().asked_to_stop)[0] is asked



CRON_TRACEBACK = ["Traceback (most recent call last):", '  File "{script}", line 9, in <module>', "    import pynvml",
                  "ModuleNotFoundError: No module named 'pynvml'",
                  "2026-11-18 07:05:01 inventory: pynvml missing, falling back to nvidia-smi; pushed 8 records"]


@pytest.mark.parametrize("script, in_app_log, foreign", [
    ("/usr/local/sbin/gpu_inventory.py", False, True),   # a cron job's own script, in a log of its own
    ("/usr/local/bin/vllm", False, False),               # near miss: an installed program's entry point runs it
    ("/usr/local/sbin/gpu_inventory.py", True, False)])  # near miss: in the deployment's own log (its script)
def test_a_traceback_of_another_program_s_script_is_no_cause(tmp_path, script, in_app_log, foreign):
    """A traceback whose outermost frame is a script of its own, not an installed package's code, in a file that
    holds none of the deployment's lines, is another program's (a fleet's cron job, an eval's client)."""
    tb = [line.format(script=script) for line in CRON_TRACEBACK]
    app = START + LOADED + READY + SERVING
    files = {"vllm.log": app + tb + LATER} if in_app_log else {"vllm.log": app + LATER, "inventory.log": tb}
    d = decision(tmp_path, files)
    file, line = ("vllm.log", len(app) + 4) if in_app_log else ("inventory.log", 4)
    assert (aside_at(d, file, line) or "").startswith(f"raised by {script}, another program") == foreign


@pytest.mark.parametrize("victim, at, root_is_kill", [
    (4712, "07:05:19.512", True),    # the vanished worker's pid, within the second of its report and of the stop
    (9999, "07:05:19.512", False),   # near miss: another pid: a kill in the deployment's wind-down
    (4712, "07:05:21.512", False)])  # near miss: seconds after the stop: its trail
def test_a_kill_naming_the_vanished_worker_s_pid_in_the_same_second_is_its_cause(tmp_path, victim, at, root_is_kill):
    """A report stamped in whole seconds stands for its whole second: a kill of another file within it may have
    come first, and one that names the pid of the worker reported gone is why it went."""
    ranks = [f"(Worker_TP{r} pid={4711 + r}) INFO 11-18 07:01:00 [parallel_state.py:1] world_size=2 rank={r} "
             f"local_rank={r} distributed_init_method=tcp://127.0.0.1:29500 backend=nccl" for r in (0, 1)]
    died = ["(EngineCore pid=300) ERROR 11-18 07:05:19 [multiproc_executor.py:1] Worker proc VllmWorker-1 died "
            "unexpectedly, shutting down executor.",
            "(Worker_TP0 pid=4711) INFO 11-18 07:05:19 [multiproc_executor.py:1] [shutdown] WorkerProc: terminated "
            "by shutdown signal"]
    auth = f"2026-11-18T{at}+00:00 gpu-a1 sudo:  ops : TTY=pts/3 ; PWD=/home/ops ; USER=root ; " \
           f"COMMAND=/usr/bin/kill -9 {victim}"
    on_host = [line.replace("(APIServer pid=1)", "(APIServer pid=280)") for line in START + ranks + LOADED + READY
               + SERVING]   # (pid 1 is a container's: the kernel and sudo print other pids)
    d = decision(tmp_path, {"gpu-a1/vllm.log": on_host + died, "gpu-a1/auth.log": [auth]})
    assert (d.root.file == "gpu-a1/auth.log") == root_is_kill
    if root_is_kill:
        assert d.root.rank == 1


@pytest.mark.parametrize("died, state", [
    (False, "stopped"),   # a hung server stopped by hand: the failure stalled it, the operator ended it
    (True, "crashed")])   # near miss: its engine died of it before the stop
def test_a_server_stopped_by_hand_after_a_failure_that_did_not_end_it_was_stopped(tmp_path, died, state):
    xid = "Nov 18 07:04:29 gpu-a1 kernel: NVRM: Xid (PCI:0000:3a:00): 119, pid=4711, name=pt_main_thread, " \
          "Timeout after 6s of waiting for RPC response from GPU2 GSP!"
    stuck = [api(m, 0, "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 4 "
                       "reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%") for m in (5, 6, 7)]   # (a stall)
    dead = [api(7, 30, "EngineCore encountered a fatal error.", level="ERROR")] if died else []
    stop = [api(9, 0, "Received SIGINT, shutting down"), api(9, 0, "Shutting down FastAPI HTTP server.")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + stuck + dead + stop,
                            "gpu-a1/kern.log": [xid]})
    assert d.root is not None and d.root.file == "gpu-a1/kern.log"
    assert d.outcome.state == state


@pytest.mark.parametrize("echo, state", [("^C", "stopped"),     # the operator's Ctrl-C on the head, in the stall
                                         ("", "crashed"),      # near miss: a stop no one is seen to ask for
                                         ("^C\n", "crashed")])  # near miss: a '^C' of its own (a `logs -f` stopped)
def test_a_stop_asked_of_the_head_stops_a_worker_nodes_stall_too(tmp_path, echo, state):
    """A worker node's fault stalls the engine; the operator stops the server on the head with Ctrl-C (the
    terminal's echo), which stops the head's Ray workers on the other node too."""
    xid = "Nov 18 07:04:29 gpu-a2 kernel: NVRM: Xid (PCI:0000:3a:00): 119, pid=5511, name=ray::RayWorkerWrapper, " \
          "Timeout after 6s of waiting for RPC response from GPU2 GSP!"
    stop = [echo + API.format(m=9, s=0).replace(" INFO 11-18 07:09:00 [api_server.py:1] ", " INFO:     ")
            + "Shutting down", api(9, 1, "Shutting down FastAPI HTTP server.")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [_stats(4, 30), api(4, 40, STUCK)]
                            + stop,
                            "gpu-a2/worker.log": [worker(1, 0, "Starting to load model m...", pid=5511)],
                            "gpu-a2/kern.log": [xid]})
    assert (d.root.file, d.outcome.state) == ("gpu-a2/kern.log", state)


@pytest.mark.parametrize("head_died, state", [
    ("", "stopped"),                                                 # the head hung until its operator cancelled it
    ("EngineCore encountered a fatal error.", "crashed"),            # near miss: the head's engine died of it first
    ("Shutting down FastAPI HTTP server.", "crashed")])              # near miss: the head wound down before the cancel
def test_a_worker_node_killed_while_its_head_hung_and_was_stopped_by_hand_was_stopped(tmp_path, head_died, state):
    """The kernel kills a worker node's process (a cause of a SIGTERM there), its executor dies of it and winds
    down; the head, told nothing, hangs until the job is cancelled: the kill sent the head no signal, and the
    worker's death is the kill's own."""
    kill = "Nov 18 07:04:31 gpu-a2 kernel: Memory cgroup out of memory: Killed process 5511 (VLLM::Worker_PP) " \
           "total-vm:412000000kB, anon-rss:398000000kB"
    stage = [worker(1, 0, "Starting to load model m...", pid=5511),
             "ERROR 11-18 07:04:32 [multiproc_executor.py:1] Worker proc VllmWorker-0 died unexpectedly, shutting "
             "down executor."]
    dead = [api(5, 30, head_died, level="ERROR" if "fatal" in head_died else "INFO")] if head_died else []
    cancel = ["slurmstepd: error: *** JOB 58213 ON gpu-a1 CANCELLED AT 2026-11-18T07:09:00 ***",
              api(9, 1, "Shutting down FastAPI HTTP server.")]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [_stats(4, 30), api(4, 40, STUCK)]
                            + dead + cancel,
                            "gpu-a2/worker.log": stage, "gpu-a2/kern.log": [kill]})
    assert (d.root.file, d.outcome.state) == ("gpu-a2/kern.log", state)


@pytest.mark.parametrize("stamped, root", [("07:05:30", "gpu-a1/kern.log"), ("07:06:10", None)])
def test_a_kill_stamped_after_its_victims_reported_death_came_before_it(tmp_path, stamped, root):
    """The executor reports rank 0's worker dead at 07:04:40 and the server shuts down; the kernel's kill of that
    worker's pid reads 07:05:30, after the shutdown, by a `dmesg -T` clock 50 s ahead: a kill comes before its
    victim's death, so it is placed at the report, and is the cause, not the shutdown's trail. Near miss: a kill
    stamped 90 s after the report (more than SAME_FAILURE_S past it) is no kill of that death."""
    died = "(VllmWorker rank=0 pid=4711) ERROR 11-18 07:04:40 [multiproc_executor.py:1] Worker proc VllmWorker-0 " \
           "died unexpectedly, shutting down executor."
    kill = f"Nov 18 {stamped} gpu-a1 kernel: Out of memory: Killed process 4711 (python3) total-vm:412000000kB, " \
           "anon-rss:398000000kB"
    down = [api(4, 41, "Shutting down FastAPI HTTP server."), api(4, 41, "Waiting for application shutdown.")]
    # (the server's own pid is no container's 1: the pids the log prints are the host's, the kernel's)
    on_host = [x.replace("(APIServer pid=1)", "(APIServer pid=4100)") for x in START + LOADED + READY + SERVING + down]
    d = decision(tmp_path, {"gpu-a1/vllm.log": on_host[:-2] + [died] + on_host[-2:], "gpu-a1/kern.log": [kill]})
    assert (d.root.file if d.root is not None and d.root.category == "oom.host" else None) == root


@pytest.mark.parametrize("unit, trail", [
    ("vllm.service", False),    # the unit it stopped, started again: what fails then is a new start's failure
    ("nvidia-dcgm.service", True)])   # near miss: another unit starting: the failure is the stop's trail
def test_a_unit_stopped_and_started_again_begins_a_new_attempt_though_its_server_prints_nothing(tmp_path, unit, trail):
    journal = ["Nov 18 07:05:00 gpu-a1 systemd[1]: Stopping vllm.service - vLLM server...",
               "Nov 18 07:05:01 gpu-a1 vllm[4100]: INFO 11-18 07:05:01 [launcher.py:1] Shutting down FastAPI HTTP "
               "server.",
               "Nov 18 07:05:02 gpu-a1 systemd[1]: Stopped vllm.service - vLLM server.",
               f"Nov 18 07:05:30 gpu-a1 systemd[1]: Starting {unit} - a service...",
               "Nov 18 07:05:31 gpu-a1 docker[4200]: nvidia-container-cli: initialization error: nvml error: "
               "driver/library version mismatch: unknown"]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING, "gpu-a1/journal.txt": journal})
    aside = aside_at(d, "gpu-a1/journal.txt", 5) or ""
    assert aside.startswith("after the stop") == trail
    assert (d.root is None) == trail


@pytest.mark.parametrize("own_kill, aside", [
    (True, True),     # the deployment's killed worker ran in its unit's cgroup: a session's kill is another's
    (False, False)])  # near miss: no kill shows where the deployment's processes ran
def test_an_oom_kill_in_a_cgroup_none_of_the_deployment_s_processes_ran_in_is_another_program_s(tmp_path, own_kill,
                                                                                                  aside):
    def kill(hh: str, pid: int, memcg: str) -> list[str]:
        return [f"Nov 18 {hh} gpu-a1 kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
                f"mems_allowed=0-1,oom_memcg={memcg},task_memcg={memcg},task=python3,pid={pid},uid=0",
                f"Nov 18 {hh} gpu-a1 kernel: Memory cgroup out of memory: Killed process {pid} (python3) "
                "total-vm:71244120kB, anon-rss:66714332kB, file-rss:55872kB, shmem-rss:0kB, UID:1007"]
    kern = kill("06:03:47", 38811, "/user.slice/user-1007.slice/session-412.scope") + \
        (kill("07:04:30", 4711, "/system.slice/vllm.service") if own_kill else [])
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING, "gpu-a1/kern.log": kern})
    assert (aside_at(d, "gpu-a1/kern.log", 2) or "").startswith("about pid 38811 in cgroup /user.slice") == aside


@pytest.mark.parametrize("same, copy", [(True, True),      # one line in an excerpt and in the process's own log
                                        (False, False)])   # near miss: two lines that differ are two events
def test_one_line_in_two_files_is_one_event_whose_copy_in_the_fuller_log_stands(tmp_path, same, copy):
    died = "(EngineCore pid=300) ERROR 11-18 07:05:19 [multiproc_executor.py:1] Worker proc VllmWorker-1 died " \
           "unexpectedly, shutting down executor."
    other = died.replace("VllmWorker-1", "VllmWorker-0")
    own = START + [line.replace("(APIServer pid=1)", "(EngineCore pid=300)") for line in SERVING + LATER] + [died]
    d = decision(tmp_path, {"a-excerpt.txt": [died if same else other], "vllm.log": own})
    assert (aside_at(d, "a-excerpt.txt", 1) or "").startswith("a copy of vllm.log") == copy


@pytest.mark.parametrize("server_lines, foreign", [
    (False, True),    # another Ray job's driver log: Ray's lines, none of the server's
    (True, False)])   # near miss: the server's own lines in the same file: the deployment's program
def test_every_line_of_another_program_s_log_is_that_program_s(tmp_path, server_lines, foreign):
    """Once a traceback shows a log is another program's (its own script, no line of the server's), that
    program's other lines there are its own too: the job's status line repeating the actor's death."""
    driver = ["2026-11-18 07:01:12,003\tINFO job_manager.py:531 -- Runtime env is setting up.",
              "2026-11-18 07:02:14,953\tWARNING worker.py:2071 -- The node with node id: 9c4e1a7f and address: "
              "10.64.6.9 and node name: 10.64.6.9 has been marked dead because the detector has missed too many "
              "heartbeats from it.",
              "Traceback (most recent call last):", '  File "/home/ray/evalbench/run_suite.py", line 219, in main',
              "    ray.get(agg.add_batch.remote(batch_id, scores))",
              "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
              "", "---------------------------------------", "Job 'raysubmit_Xq3vR8kL' failed",
              "---------------------------------------", "",
              "Status message: Job entrypoint command failed with exit code 1, last available logs:",
              "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task."]
    if server_lines:
        driver = [api(4, 10, "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 tokens/s, "
                            "Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%")] + driver
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + LATER,
                            "cpu-b2/job-driver.log": driver})
    assert (d.root is None) == foreign


@pytest.mark.parametrize("restarted, state", [(True, "serving"),     # crashed, started again, serves to the end
                                              (False, "crashed"),    # near miss: nothing started it again
                                              ("peer died", "crashed")])  # nor does it when another part died after
def test_a_run_that_crashed_and_was_started_again_and_serves_ends_serving(tmp_path, restarted, state):
    dead = [api(4, 30, "EngineCore encountered a fatal error.", level="ERROR"),
            worker(4, 30, "torch.AcceleratorError: CUDA error: uncorrectable ECC error encountered", level="ERROR")]
    again = [line.replace("07:0", "07:1") for line in START + LOADED + READY + SERVING] if restarted else []
    files = {"node-a/vllm.log": START + LOADED + READY + SERVING + dead + again}
    if restarted == "peer died":   # (a decode instance beside it, which crashed once it came back)
        files["node-b/vllm.log"] = START + LOADED + READY + SERVING + [DEAD.replace("07:05", "07:15")]
    d = decision(tmp_path, files)
    assert d.root is not None and d.outcome.state == state


@pytest.mark.parametrize("restart_after_last, state", [
    (True, "restart_loop"),   # the restarter goes on after the second failure: started again and again
    (False, "never_ready")])  # near miss: one restart that failed, and nothing restarts it any more
def test_one_restart_that_failed_is_a_loop_only_when_the_restarter_goes_on(tmp_path, restart_after_last, state):
    job = ["Nov 18 07:{:02d}:45 gpu-a1 systemd[1]: vllm.service: Scheduled restart job, restart counter is at {}."]
    journal = [job[0].format(1, 1)] + ([job[0].format(3, 2)] if restart_after_last else [])
    d = decision(tmp_path, {"gpu-a1/vllm.log": _failing_starts(2), "gpu-a1/journal.txt": journal})
    assert d.outcome.state == state


@pytest.mark.parametrize("status, state", [("restarting", "restart_loop"),   # docker starts it again right now
                                           ("exited", "never_ready")])       # near miss: its policy gave up
def test_a_container_docker_inspect_shows_restarting_goes_on_being_restarted(tmp_path, status, state):
    inspect = ('[{"Id": "7d3c0e91b5a2", "Name": "/vllm-qwen", "Config": {"Image": "vllm/vllm-openai:v0.11.0"}, '
               f'"State": {{"Status": "{status}", "Running": {str(status == "restarting").lower()}, '
               f'"Restarting": {str(status == "restarting").lower()}, "ExitCode": 1}}, "RestartCount": 1}}]')
    d = decision(tmp_path, {"gpu-a1/vllm.log": _failing_starts(2), "gpu-a1/docker-inspect.json": inspect})
    assert d.outcome.state == state


@pytest.mark.parametrize("cause, root", [
    ("OSError: [Errno 98] Address already in use", "net.port_in_use"),   # the server never listened: its own end
    ("RuntimeError: CUDA error: an illegal memory access was encountered", None)])   # near miss: the stop's trail
def test_a_cause_by_which_the_server_never_listened_tore_its_engine_down_before_its_traceback(tmp_path, cause, root):
    teardown = [worker(3, 1, "[shutdown] WorkerProc: terminated by shutdown signal"),
                "(EngineCore pid=89) INFO 11-18 07:03:01 [core.py:1] [shutdown] EngineCore: trigger received "
                "signal=SIGTERM",
                api(3, 3, "Traceback (most recent call last):"),
                '(APIServer pid=1)   File "/usr/local/lib/python3.12/dist-packages/uvicorn/server.py", line 135, in '
                'startup', f"(APIServer pid=1) {cause}"]
    d = decision(tmp_path, {"vllm.log": START + LOADED + READY + teardown})
    assert (d.root.category if d.root else None) == root


def _shared_syslog(own_line: str) -> dict[str, str]:
    torch = "Mar  4 01:51:03 gpu-b12 torchrun[771180]: [default{r}]:[rank{r}]:[E304 01:51:03.4{r}6 " \
            "ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=58211, " \
            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600021 milliseconds before timing out."
    serve = "(APIServer pid=1) INFO 03-04 {t} [loggers.py:1] Engine 000: Avg prompt throughput: 120.0 tokens/s, Avg " \
            "generation throughput: 340.5 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%"
    return {"gpu-b12/syslog": text_of(*([own_line] if own_line else []), *(torch.format(r=r) for r in range(4)),
                                      "Mar  4 01:51:03 gpu-b12 torchrun[771180]: [default0]:terminate called after "
                                      "throwing an instance of 'c10::DistBackendError'"),
            "gpu-b12/vllm.log": text_of("(APIServer pid=1) INFO 03-04 01:00:00 [api_server.py:1] vLLM API server "
                                        "version 0.10.2", "(APIServer pid=1) INFO 03-04 01:01:00 [launcher.py:1] "
                                        "Application startup complete.", serve.format(t="01:50:00"),
                                        serve.format(t="01:52:00"), serve.format(t="01:53:00"))}


@pytest.mark.parametrize("own_line, worker_pid, healthy", [
    ("", None, True),   # another user's training job on the same host: its timeouts in the shared syslog are not ours
    ("Mar  4 01:00:05 gpu-b12 torchrun[771180]: [default0]:INFO 03-04 01:00:05 [parallel_state.py:1] rank 0 in world "
     "size 4 is assigned as DP rank 0, PP rank 0, TP rank 0", None, False),   # near miss: the program runs our server
    ("", 771180, False)])   # near miss: its process is one the server's lines name (a worker's output, journald's)
def test_a_program_of_the_host_s_log_that_wrote_none_of_the_server_s_lines_is_another_workload(
        tmp_path, own_line, worker_pid, healthy):
    files = _shared_syslog(own_line)
    if worker_pid:
        files["gpu-b12/vllm.log"] += f"(Worker_TP0 pid={worker_pid}) INFO 03-04 01:00:30 [worker.py:1] Memory " \
                                     "profiling takes 5.3 seconds\n"
    d = decision(tmp_path, files)
    assert d.healthy is healthy


@pytest.mark.parametrize("lost_at, healthy", [("07:30:06", True),    # the node went 25 min after the stop: maintenance
                                              ("07:05:20", False)])  # near miss: right after: it may be why it stopped
def test_an_untimed_statement_of_a_node_s_loss_is_the_one_it_times_long_after_the_stop(tmp_path, lost_at, healthy):
    node = text_of("Name:               gpu-a1", "Conditions:",
                   "  Type             Status    LastHeartbeatTime                 LastTransitionTime                "
                   "Reason              Message",
                   f"  Ready            Unknown   Wed, 18 Nov 2026 07:05:00 +0000   Wed, 18 Nov 2026 {lost_at} +0000   "
                   "NodeStatusUnknown   Kubelet stopped posting node status.", "Events:",
                   "  Type    Reason              Age   From                   Message",
                   "  Normal  NodeNotReady        6m    node-controller        Node gpu-a1 status is now: NodeNotReady")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + STOP, "describe-node.txt": node})
    assert d.healthy is healthy


@pytest.mark.parametrize("head_restarts, head_fails, state", [
    (False, False, "never_ready"),    # the head ran once and was stopped: a worker node's unit that loops is that node's
    (False, True, "never_ready"),     # the head ran once and failed by itself
    (True, False, "restart_loop")])   # near miss: the head's own unit restarts it too: the deployment loops
def test_a_headless_node_that_loops_by_itself_makes_no_restart_loop_of_a_run_its_head_ended(tmp_path, head_restarts,
                                                                                             head_fails, state):
    unit = "Nov 18 07:0{m}:{s:02d} {host} systemd[1]: {name}.service: "
    loop = [line for i in range(4) for line in (
        unit.format(m=i, s=10, host="gpu-a2", name="k3-dp1") + "Main process exited, code=exited, status=125/n/a",
        f"Nov 18 07:0{i}:10 gpu-a2 dockerd[812]: nvidia-container-cli: initialization error: nvml error: driver not "
        "loaded",
        unit.format(m=i, s=40, host="gpu-a2", name="k3-dp1") + f"Scheduled restart job, restart counter is at {i + 1}.")]
    head = START + [api(0, 5, "Waiting for 16 ranks to join the rendezvous")] + (
        [api(5, 0, "ValueError: Current node has no GPU available. Placement group never became ready.", "ERROR"),
         api(5, 1, "RuntimeError: Engine core initialization failed. See root cause above.", "ERROR")] if head_fails
        else ["^C", api(5, 0, "KeyboardInterrupt")] + STOP)
    files = {"gpu-a1/vllm.log": head, "gpu-a2/journal.txt": loop}
    if head_restarts:
        files["gpu-a1/journal.txt"] = [unit.format(m=5, s=30, host="gpu-a1", name="vllm") +
                                       f"Scheduled restart job, restart counter is at {n}." for n in (1, 2)]
    d = decision(tmp_path, files)
    assert d.root is not None and d.outcome.state == state


@pytest.mark.parametrize("after, healthy", [(LATER, True),     # the engine went on generating: the retry held
                                            ([DEAD], False)])  # near miss: the engine died after it
def test_an_unnamed_thread_of_the_servers_log_went_on_when_its_one_engine_did(tmp_path, after, healthy):
    """A transfer engine's worker thread (glog's form: its number is no process vLLM names) fails a slice while the
    server serves; it shows no work of its own, so it went on if the node's one engine did."""
    slice_failed = "E1118 07:04:30.907118   227 worker_pool.cpp:263] Worker: Process failed for slice (opcode: 1, " \
                   "local_nic: mlx5_5, peer_nic: 10.60.2.18:15558@mlx5_5, retry_cnt: 0, max_retry_cnt: 8): transport " \
                   "retry counter exceeded"
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [slice_failed] + after})
    assert d.healthy is healthy


@pytest.mark.parametrize("before, healthy", [(False, False),   # a node new to the run after the stop: its own start
                                             (True, True)])    # near miss: a worker of the stopped run: its trail
def test_a_node_that_took_no_part_before_the_heads_stop_starts_a_run_of_its_own(tmp_path, before, healthy):
    asked = [api(5, 0, "[shutdown] EngineCore: trigger received signal=SIGTERM")]
    exec_error = "2026-11-18T07:05:06.301847214Z exec /bin/bash: exec format error"
    worker = (HEADLESS if before else []) + [exec_error]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + asked + STOP,
                            "gpu-b2/worker.log": worker})
    assert d.healthy is healthy
    assert healthy or (d.root.category, d.root.node, d.root.phase) == ("dep.image_not_found", "gpu-b2", "startup")


@pytest.mark.parametrize("evicted_at, aside", [("07:05:00", False),   # the eviction in the stop's second: its doing
                                               ("07:05:30", True)])   # near miss: after the stop: its trail
def test_a_cause_that_stops_containers_is_no_trail_of_the_stop_it_made(tmp_path, evicted_at, aside):
    def item(t: str, reason: str, message: str) -> str:
        return (f'- apiVersion: v1\n  firstTimestamp: "2026-11-18T{t}Z"\n  involvedObject:\n    kind: Pod\n'
                f"    name: vllm-0\n  message: '{message}'\n  reason: {reason}\n  reportingComponent: kubelet\n"
                "  reportingInstance: gpu-a1\n")
    events = "apiVersion: v1\nitems:\n" + item("07:05:00", "Killing", "Stopping container vllm") + \
        item(evicted_at, "Evicted", 'Usage of EmptyDir volume "hf-cache" exceeds the limit "60Gi". ') + \
        "kind: EventList\n"
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING, "events.yaml": events})
    evicted = next(f for f in d.findings if f.category == "storage.disk_full")
    assert bool(evicted.set_aside) is aside


# a log its collector cut after its first lines ends there, not the run
CUT = "### collect.sh: output cut to the first 1500 of 61288 lines (head) ###"


@pytest.mark.parametrize("footers, want", [
    ((CUT, CUT), "inconclusive"),                                   # every server log kept its first lines only
    ((CUT.replace("first", "last").replace("head", "tail"), CUT), "serving"),   # near miss: one kept its end
    ((CUT, None), "serving"),                                       # near miss: one runs on to the bundle's end
])
def test_a_server_whose_every_log_was_cut_after_its_first_lines_ended_no_one_knows_how(tmp_path, footers, want):
    logs = {f"gpu-a{i}/vllm.log": START + LOADED + READY + SERVING + ([footer] if footer else [])
            for i, footer in enumerate(footers, 1)}
    d = decision(tmp_path, logs)
    assert d.outcome.state == want and d.root is None


def _tool_parser_errors(header: bool) -> list[str]:
    """Three requests whose tool call the parser could not read, each logged with the traceback it caught (with
    `header`: vLLM's 'Error in extracting tool call from response.' before it), while the server serves on."""
    out = []
    for s in (10, 20, 30):
        block = ["Traceback (most recent call last):",
                 '  File "/venv/vllm/entrypoints/openai/tool_parsers/kimi_k3_tool_parser.py", line 210, in extract',
                 "    function_args = json.loads(raw_args)",
                 "json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column 642 (char 641)"]
        out += [api(4, s, line, level="ERROR").replace("[api_server.py:1]", "[kimi_k3_tool_parser.py:214]")
                for line in (["Error in extracting tool call from response."] if header else []) + block]
        out += [api(4, s + 1, '10.0.0.9:5512 - "POST /v1/chat/completions HTTP/1.1" 200 OK')]
    return out + SERVING


@pytest.mark.parametrize("header, healthy", [(True, True),     # the parser caught it and answered: context
                                             (False, False)])  # near miss: a bare traceback, every time
def test_a_tool_parsers_caught_error_and_its_traceback_are_no_failure(tmp_path, header, healthy):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + _tool_parser_errors(header)})
    assert d.healthy is healthy, (d.outcome, d.root)


@pytest.mark.parametrize("unit, healthy", [("fluent-bit", True),   # the unit of the process the kernel killed
                                           ("vllm-k3", False)])    # near miss: another unit restarted
def test_a_unit_restarted_after_the_kernel_killed_its_foreign_process_is_that_programs(tmp_path, unit, healthy):
    journal = ["Nov 18 07:04:40 gpu-a1 kernel: Memory cgroup out of memory: Killed process 5519 (fluent-bit) "
               "total-vm:4431232kB, anon-rss:2046540kB, file-rss:0kB",
               f"Nov 18 07:04:45 gpu-a1 systemd[1]: {unit}.service: Scheduled restart job, restart counter is at 1."]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + SERVING,
                            "gpu-a1/journal.txt": journal})
    assert d.healthy is healthy, (d.outcome, d.root)


def _first_start_error(cause_in_first: bool) -> list[str]:
    """A start whose engine fails on an error no signature knows, stops, and is started again; the second start
    waits for workers the first left behind and times out in its rendezvous (a known cause). With `cause_in_first`
    that timeout comes in the first start, before its stop."""
    timeout = api(9, 0, "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 8/16 "
                        "clients joined.", level="ERROR")
    first = START + LOADED + [
        api(3, 0, "EngineCore failed to start.", level="ERROR"),
        api(3, 0, "Traceback (most recent call last):", level="ERROR"),
        api(3, 0, '  File "/venv/vllm/v1/structured_output/__init__.py", line 61, in __init__', level="ERROR"),
        api(3, 0, "KeyError: \"Reasoning parser 'kimi-k3' not found.\"", level="ERROR")]
    if cause_in_first:
        first.append(timeout.replace("07:09:", "07:03:"))
    return first + [api(3, 5, "Shutting down"), api(4, 0, "vLLM API server version 0.27.2"), timeout]


@pytest.mark.parametrize("cause_in_first, root", [(False, "other"),             # the first start's own error
                                                  (True, "nccl.bootstrap")])   # near miss: a cause in that start
def test_the_first_starts_own_error_is_the_origin_of_later_starts_known_causes(tmp_path, cause_in_first, root):
    d = decision(tmp_path, {"gpu-a1/vllm.log": _first_start_error(cause_in_first)})
    assert d.root is not None and d.root.category == root, (d.root, d.outcome)


@pytest.mark.parametrize("stop_at, outcome", [("10:05:00", "inconclusive"),   # hours after its log's last line
                                              ("07:06:00", "serving")])       # near miss: within its log's span
def test_a_run_whose_logs_end_hours_before_its_unit_is_stopped_is_inconclusive(tmp_path, stop_at, outcome):
    """A rotated log collected without the live one: the unit's journal shows the deployment stopped hours after
    the last line the bundle holds of it; what it did meanwhile, and why, is not in the bundle."""
    journal = [f"Nov 18 {stop_at} gpu-a1 systemd[1]: Stopping vllm-k3.service - Kimi K3 vLLM server...",
               f"Nov 18 {stop_at} gpu-a1 systemd[1]: vllm-k3.service: Deactivated successfully."]
    root = make_bundle(tmp_path, {"gpu-a1/vllm.log": "\n".join(START + LOADED + READY + SERVING + LATER) + "\n",
                                  "gpu-a1/journal.txt": "\n".join(journal) + "\n"})
    a = run(root)
    assert a.decision.outcome.state == outcome
    if outcome == "inconclusive":
        assert any("up to its unit's stop (gpu-a1/journal.txt:1)" in m for m in a.missing)


# a host journal's kernel lines before the deployment's own first line are the host's, not the deployment's start
def _host_journal(lines: list[tuple[str, str, str]]) -> list[str]:
    return [f"2026-11-18T{t}.000000+00:00 gpu-a1 {ident}: {text}" for t, ident, text in lines]


@pytest.mark.parametrize("segv_at, want", [("04:41:12", "oom.host"),   # another job's crash hours before the start
                                           ("07:04:12", "proc.segfault")])   # near miss: a crash while it served
def test_a_crash_the_kernel_logged_before_the_deployments_first_line_in_a_host_journal_is_not_its(tmp_path, segv_at,
                                                                                               want):
    segv = "python3[71220]: segfault at 18 ip 00007f4c1e2a90d4 sp 00007ffd3c9e7a10 error 4 in libcuda.so.1[7f4c+1f2c]"
    kernel = [("04:06:13", "kernel", "audit: type=1400 apparmor=\"DENIED\" operation=\"open\" profile=\"snap.lxd\""),
              (segv_at, "kernel", segv)]
    unit = [(f"07:{line.split(' 11-18 07:')[1][:5]}", "vllm[1]", line) for line in START + LOADED + READY + SERVING]
    oom = ("07:06:30", "kernel", "Out of memory: Killed process 4711 (python3) total-vm:1583301244kB, anon-rss:2644168"
                                 "44kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:498212kB oom_score_adj:0")
    d = decision(tmp_path, {"gpu-a1/journal.txt": _host_journal(sorted(kernel + unit + [oom]))})
    assert d.root is not None and d.root.category == want


@pytest.mark.parametrize("second, phase", [(0, "serving"),  # the node's shutdown in the second of the stop it made
                                           (40, None)])     # near miss: the node went 40 s after its server stopped
def test_a_fault_that_stopped_its_node_stated_in_its_stop_has_the_phase_before_the_stop(tmp_path, second, phase):
    kubelet = (f"2026-11-18T07:05:{second:02d}.162811+00:00 gpu-a1 kubelet[2481]: I1118 07:05:{second:02d}.162811    "
               "2481 nodeshutdown_manager_linux.go:399] \"Shutdown manager detected new shutdown event, "
               "isNodeShuttingDownNow\" event=\"shutdown\"")
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + STOP,
                            "gpu-a1/journal.txt": [kubelet]})
    assert (d.root.category, d.root.phase) == ("infra.node_lost", phase) if phase else d.root is None


@pytest.mark.parametrize("pid, want", [(4711, "proc.killed"),   # an operator's `kill -9` of a worker, in root's history
                                       (9999, None)])           # near miss: another pid, and the server went on
def test_a_kill_typed_in_a_shell_history_with_its_times_is_the_cause_of_the_worker_it_killed(tmp_path, pid, want):
    history = ["#1794985400", "nvidia-smi", "#1794985460", f"kill -9 {pid}"]   # (07:03:20 and 07:04:20 UTC)
    after = [api(4, 25, "Worker proc VllmWorker-0 died unexpectedly, shutting down executor.", "ERROR"), DEAD] \
        if want else [api(5, 0, SERVING[0].split("] ", 1)[1])]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + after,
                            "gpu-a1/root.bash_history": history})
    assert (d.root.category, d.root.file, d.root.line) == (want, "gpu-a1/root.bash_history", 4) if want \
        else d.root is None


@pytest.mark.parametrize("head_after, want", [
    ([_stats(m, 0) for m in range(5, 10)], "failing_requests"),   # its head's server runs on to the end
    ([DEAD], "crashed"),                                             # near miss: the head's engine died of it
])
def test_a_headless_nodes_fault_is_judged_by_the_server_it_serves_through(tmp_path, head_after, want):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + head_after,
                            "gpu-b2/vllm.log": HEADLESS + [IB_FLUSHED.format(t="04:50")]})
    assert d.outcome.state == want, (d.outcome, d.root)


@pytest.mark.parametrize("seconds_apart, state", [(0, "crashed"),              # the requests in flight as it died
                                                  (60, "failing_requests")])   # near miss: it answered on, failing
def test_requests_failed_in_the_second_the_engine_died_are_no_server_answering_on(tmp_path, seconds_apart, state):
    dead = [OOM, api(4, 31, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.", "ERROR")]
    at = [4 * 60 + 32 + i * seconds_apart // 3 for i in range(4)]   # (from the second after its death)
    failing = [api(t // 60, t % 60, f'10.0.0.{i}:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server '
                                    "Error") for i, t in enumerate(at)]
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + dead + failing})
    assert (d.outcome.state, d.root.category) == (state, "oom.inference")


@pytest.mark.parametrize("head_after, want", [
    ([_stats(m, 0) for m in range(5, 8)] + [api(8, 0, "Shutting down"), api(8, 1, "Application shutdown complete.")],
     "crashed"),                                                # the head's server was stopped after it
    ([_stats(m, 0) for m in range(5, 8)], "failing_requests"),   # near miss: it runs on to the end
])
def test_a_headless_nodes_fault_ends_where_the_server_it_serves_through_was_stopped(tmp_path, head_after, want):
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + head_after,
                            "gpu-b2/vllm.log": HEADLESS + [IB_FLUSHED.format(t="04:50")]})
    assert d.outcome.state == want, (d.outcome, d.root)


def _frozen(m: int) -> str:
    return api(m, 0, "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, "
                     "Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%")


@pytest.mark.parametrize("died, want", [(True, "crashed"),              # its peers aborted: the engine is dead
                                        (False, "failing_requests")])   # near miss: all alive, the engine stuck
def test_a_stuck_engines_stats_after_its_workers_died_show_no_server_at_work(tmp_path, died, want):
    abort = ["[rank8]:[E1118 07:05:30.412207911 ProcessGroupNCCL.cpp:632] [Rank 8] Watchdog caught collective "
             "operation timeout: WorkNCCL(SeqNum=8812, OpType=SEND, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
             "for 600018 milliseconds before timing out."] if died else []
    d = decision(tmp_path, {"gpu-a1/vllm.log": START + LOADED + READY + SERVING + [_frozen(m) for m in range(5, 9)],
                            "gpu-b2/vllm.log": HEADLESS + [IB_FLUSHED.format(t="04:50")] + abort})
    assert d.outcome.state == want, (d.outcome, d.root)


@pytest.mark.parametrize("second, want", [
    ("port", "serving"),         # a restart that failed otherwise, then a start that serves to the end: back
    ("oom", "restart_loop"),     # near miss: the failure came again in the restart: a loop, whatever serves last
])
def test_restarts_that_end_in_a_start_serving_to_the_end_are_back_unless_the_failure_came_again(tmp_path, second,
                                                                                               want):
    def attempt(k: int, lines: list[str]) -> list[str]:
        return [line.replace("07:0", f"07:{k}") for line in lines]
    again = [BIND] if second == "port" else LOADED + READY + SERVING + [OOM, DEAD]
    log = (attempt(0, START + LOADED + READY + SERVING + [OOM, DEAD]) + attempt(1, START + again)
           + attempt(2, START + LOADED + READY + SERVING + [_stats(5, 0), _stats(6, 0)]))
    d = decision(tmp_path, {"gpu-a1/vllm.log": log})
    assert state(d) == (want, "oom.inference"), d.outcome
