"""The scan's per-bundle work as Ray tasks, for archives that outgrow one machine. Ray is an optional extra
(`pip install 'k3logs[ray]'`), imported only here and only when `--ray` is given.

Each task runs the same `scan.scan_entry` as a local worker and returns the same Outcome, so the output is the
same. The bundles must be readable at the same path on every Ray node (a shared filesystem) and k3logs
installed there; OUT is written by this process only."""
from __future__ import annotations

import logging
import os
import time
from typing import Iterator

from k3logs.catalogue.signatures import Catalogue
from k3logs.errors import UsageError
from k3logs.settings import Settings

from .work import (BUNDLE_TIMEOUT_S, MAX_TASKS_PER_WORKER, TICK_S, Entry, Outcome, checked, one_line_error, scan_entry,
                    timed_out)

WARM_UP_S = 0.5


def _ray():
    try:
        import ray
    except ImportError as e:
        raise UsageError("--ray needs Ray, which is not installed: pip install 'k3logs[ray]'") from e
    return ray


def _connect(ray, address: str, jobs: int) -> bool:
    """Join the cluster at `address` ('local': start a Ray instance on this machine with `jobs` CPUs).
    Returns whether this call started Ray (and so must shut it down)."""
    if ray.is_initialized():
        return False
    quiet = {"logging_level": logging.WARNING, "log_to_driver": False}
    try:
        if address == "local":
            ray.init(num_cpus=jobs, include_dashboard=False, **quiet)
        else:
            ray.init(address=address, **quiet)
    except Exception as e:  # ConnectionError, ValueError, RuntimeError ... depending on the Ray version
        first = (str(e) or type(e).__name__).splitlines()[0]
        raise UsageError(f"cannot start or reach Ray at {address!r}: {first}") from e
    return True


def run_ray(entries: list[Entry], catalogue: Catalogue, settings: Settings, address: str,
            jobs: int, timeout: float = BUNDLE_TIMEOUT_S) -> Iterator[Outcome | None]:
    """Outcomes of `entries` from Ray tasks, about two per cluster CPU in flight (bounded driver memory),
    and None at least every TICK_S while waiting (as local.run_local). A task that fails in Ray itself (its
    worker died, the node was lost) gives that bundle's error; one still running after `timeout` seconds is
    cancelled, its worker killed (ray.cancel with force), and gets that as its error. Ray is imported and
    reached here, before anything is scanned, so that a missing Ray or a wrong address is a usage error."""
    ray = _ray()
    started = _connect(ray, address, jobs)
    return _outcomes(ray, started, entries, catalogue, settings, jobs, timeout)


def _ready() -> int:
    time.sleep(WARM_UP_S)  # (held a moment, so that the tasks in flight together each need a worker of their own)
    return os.getpid()


def _warm_up(ray, cpus: int) -> None:
    """Start a worker on every CPU (this module, and so k3logs, imported) before the first bundle: a worker's
    start (seconds; over 20 s on a loaded 2-core machine) would otherwise count against its first bundle's
    time limit."""
    ready = ray.remote(num_cpus=1)(_ready)
    ray.get([ready.remote() for _ in range(cpus)])


def _outcomes(ray, started: bool, entries: list[Entry], catalogue: Catalogue, settings: Settings,
              jobs: int, timeout: float) -> Iterator[Outcome | None]:
    try:
        task = ray.remote(num_cpus=1, max_calls=MAX_TASKS_PER_WORKER, max_retries=1)(scan_entry)
        cat_ref, settings_ref = ray.put(catalogue), ray.put(settings)
        cpus = max(1, int(ray.cluster_resources().get("CPU", jobs)))
        _warm_up(ray, cpus)
        pending = list(reversed(entries))
        inflight: dict = {}   # in the order submitted
        running: dict = {}    # since when a task has been one of the oldest `cpus` in flight
        while pending or inflight:
            while pending and len(inflight) < 2 * cpus:
                entry = pending.pop()
                inflight[task.remote(entry, cat_ref, settings_ref)] = entry
            # Ray does not say when a task starts: the oldest `cpus` tasks in flight are taken as running
            # (about right when tasks start in order), so that time queued is not counted against a bundle
            now = time.monotonic()
            for ref in list(inflight)[:cpus]:
                running.setdefault(ref, now)
            wait_s = min([TICK_S] + [t + timeout - now for t in running.values()])
            done, _ = ray.wait(list(inflight), num_returns=1, timeout=max(0.0, wait_s))
            if not done:
                yield None
            for ref in done:
                entry = inflight.pop(ref)
                running.pop(ref, None)
                try:
                    yield checked(entry, ray.get(ref), settings)
                except ray.exceptions.RayError as e:
                    first = (str(e) or type(e).__name__).splitlines()[0]
                    yield Outcome(entry.rel, {"error": one_line_error(f"Ray task failed: {first}", settings)})
            now = time.monotonic()
            for ref in [r for r, t in running.items() if now - t >= timeout]:
                ray.cancel(ref, force=True)
                running.pop(ref)
                yield timed_out(inflight.pop(ref), timeout, settings)
    finally:
        if started:
            ray.shutdown()
