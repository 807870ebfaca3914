"""The scan's worker processes on this machine: each bundle in a process that dies with the scan and gives up at its
time limit."""
from __future__ import annotations

import ctypes
import math
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import wait as wait_any
from typing import Iterator

from k3logs.catalogue.signatures import Catalogue
from k3logs.errors import K3LogsError
from k3logs.settings import Settings

from .work import (BUNDLE_TIMEOUT_S, MAX_TASKS_PER_WORKER, TICK_S, Entry, Outcome, checked, one_line_error, scan_entry,
                    timed_out)

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """A worker must not outlive the scan, even one killed by SIGKILL: on Linux the kernel kills it when
    its parent exits; a thread that checks the parent every second covers other systems and the parent
    dying before prctl took hold."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="k3logs-parent-watch", daemon=True).start()


def _worker(conn, catalogue: Catalogue, settings: Settings, parent: int) -> None:
    """A worker process: says "ready", then takes bundles over `conn` and sends back their outcomes until
    it gets None or the pipe closes. The catalogue comes once, with the process."""
    # Ctrl-C is the parent's to handle (it stops the workers and writes the table)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    try:
        conn.send("ready")
        while (entry := conn.recv()) is not None:
            try:
                data = pickle.dumps(scan_entry(entry, catalogue, settings))
            except Exception as e:  # an outcome that cannot be pickled: the row says so
                data = pickle.dumps(Outcome(entry.rel, {"error": one_line_error(
                    f"internal error (its result could not be sent: {type(e).__name__})", settings)}))
            conn.send_bytes(data)
    except (EOFError, OSError):  # the parent is gone or stopped us
        pass
    # nothing to save here: skip the interpreter's teardown (most of a second with polars loaded)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class _Worker:
    """A worker process as the parent sees it: its pipe, whether it is ready, the bundle it is on."""

    def __init__(self, ctx, catalogue: Catalogue, settings: Settings):
        self.conn, theirs = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(theirs, catalogue, settings, os.getpid()), daemon=True)
        self.proc.start()
        theirs.close()
        self.ready = False
        self.entry: Entry | None = None
        self.deadline = math.inf
        self.done = 0

    def give(self, entry: Entry, timeout: float) -> None:
        self.entry, self.deadline = entry, time.monotonic() + timeout
        try:
            self.conn.send(entry)
        except OSError:  # it has just died: its sentinel says so next
            pass

    def stop(self) -> None:
        """Ask an idle worker to exit, kill one on a bundle (then `reap` it)."""
        if self.entry is None:
            try:
                self.conn.send(None)
            except OSError:
                pass
        else:
            self.proc.kill()
        self.conn.close()

    def reap(self, until: float) -> None:
        """Wait until `until` (monotonic) for a stopped worker to exit, then kill it."""
        self.proc.join(max(0.0, until - time.monotonic()))
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()

    def how_it_died(self) -> str:
        code = self.proc.exitcode
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                pass
        return f"exit status {code}"


def run_local(entries: list[Entry], catalogue: Catalogue, settings: Settings, jobs: int,
              timeout: float = BUNDLE_TIMEOUT_S) -> Iterator[Outcome | None]:
    """Outcomes of `entries` from `jobs` worker processes (spawned: nothing inherited from this process),
    each replaced after MAX_TASKS_PER_WORKER bundles. Also yields None at least every TICK_S while it waits,
    so that the caller can keep its own clocks. A bundle still running after `timeout` seconds has its worker
    killed and gets that as its error. A worker that dies (killed for memory, crashed) is replaced and its
    bundle retried at the end, alone; one that kills its worker again gets that as its error."""
    ctx = multiprocessing.get_context("spawn")
    todo, retry, retried = deque(entries), deque(), set()
    workers: list[_Worker] = []
    gone: list[_Worker] = []  # stopped, perhaps still exiting
    failed_starts = 0         # workers in a row that died before they were ready
    try:
        while todo or retry or any(w.entry for w in workers):
            busy = sum(w.entry is not None for w in workers)
            while len(workers) < min(jobs, len(todo) + busy + (1 if retry else 0)):
                workers.append(_Worker(ctx, catalogue, settings))
            for w in workers:
                if w.ready and w.entry is None:
                    if todo:
                        w.give(todo.popleft(), timeout)
                    elif retry and not any(x.entry for x in workers):
                        w.give(retry.popleft(), timeout)
            now = time.monotonic()
            wait_s = min([TICK_S] + [w.deadline - now for w in workers if w.entry])
            ready = set(wait_any([w.conn for w in workers] + [w.proc.sentinel for w in workers], max(0.0, wait_s)))
            if not ready:
                yield None
            now = time.monotonic()
            gone = [g for g in gone if g.proc.is_alive()]  # (is_alive reaps the ones that have exited)
            for w in list(workers):
                if w.conn in ready or w.proc.sentinel in ready:
                    try:
                        got = w.conn.recv()
                    except (EOFError, OSError):  # it died
                        workers.remove(w)
                        w.stop()
                        w.reap(now + 1.0)
                        if not w.ready:
                            failed_starts += 1
                            if failed_starts == 3:  # (one can be killed for memory; three in a row cannot start)
                                raise K3LogsError(f"worker processes cannot start ({w.how_it_died()})")
                        elif w.entry is not None and w.entry.rel not in retried:
                            retried.add(w.entry.rel)
                            retry.append(w.entry)
                        elif w.entry is not None:
                            yield Outcome(w.entry.rel, {"error": one_line_error(
                                f"its worker process died on it twice, the second time alone ({w.how_it_died()}: "
                                "out of memory, or a crash)", settings)})
                        continue
                    except Exception as e:  # the outcome could not be unpickled: the pipe is still whole
                        got = e
                    if not w.ready:
                        w.ready, failed_starts = True, 0
                        continue
                    entry, w.entry, w.deadline = w.entry, None, math.inf
                    w.done += 1
                    if w.done >= MAX_TASKS_PER_WORKER:
                        workers.remove(w)
                        w.stop()
                        gone.append(w)
                    yield checked(entry, got, settings)
                elif w.entry is not None and now >= w.deadline:
                    workers.remove(w)
                    w.stop()
                    gone.append(w)
                    yield timed_out(w.entry, timeout, settings)
    finally:  # also on Ctrl-C and SIGTERM: no worker is left behind
        for w in workers:
            w.stop()
        until = time.monotonic() + 2.0
        for w in workers + gone:
            w.reap(until)
