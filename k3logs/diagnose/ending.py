"""What the run came to (the outcome), judged over the lifecycle of all its nodes: mixed into outcome.Lifecycle,
whose attempts, readiness, stops, stats and progress it reads. never_ready, crashed, failing_requests,
restart_loop, stopped, serving, or inconclusive (no application log could show it)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from k3logs.catalogue.landmarks import decision_line

from .lifeline import At

# a server that still answers requests (failing them) this long after a failure, or until the bundle ends, serves on
# and fails its requests; one that a liveness probe or its own exit ends sooner crashed (probes give up within a
# minute or two)
ANSWERING_S = 300.0
# requests in flight when an engine dies fail within seconds of it, all at once, however the run ends
IN_FLIGHT_S = 30.0


def stalled(has_text: bool = True) -> pl.Expr:
    """An engine's stats that count requests running and generate nothing: it is stuck, not serving (built when
    called: a module's import runs no polars; false for a table of no text)."""
    said = pl.col("text").str.contains(decision_line("engine_stalled")).fill_null(False) if has_text else pl.lit(False)
    return said.alias("stalled")


@dataclass
class Outcome:
    state: str
    file: str | None = None
    line: int | None = None
    detail: str = ""


class Ending:
    """The outcome's half of Lifecycle: whether a failure ended the run, and how. It reads Lifecycle's attempts
    (attempt_of, _begun, _args, restarts_seen, restarting), stops (stops, _asked, _asked_first, last_stop, after_stop),
    readiness (ready, ready_before, serving_elsewhere, _serving_at_end), engine stats (stats, _instances) and
    progress."""

    def failed_again(self, failures: list, restarts: list = (), killers: list = ()) -> bool:
        """Two attempts of one node that ran the same arguments failed and it started a third time (a second, when
        something goes on restarting it by itself: a restart symptom after the last failure, or a status listing's,
        untimed: one restart that failed, after which nothing restarts it, is a crash restarted once), or its
        orchestrator shows restarts: two or more, or a restart symptom
        (`restarts`: CrashLoopBackOff, a back-off, systemd's restart job) unless every restart count shown is
        below two (one crash and its back-off is a crash, restarted). (An untimed line, a pod's last state, has no
        attempt.) An attempt stopped from outside after a cause that explains such a kill (`killers`: an
        eviction, untimed or before the stop) failed too: the stop was that cause's doing."""
        if (ended := self.head_ended(restarts)):   # (a headless node's own loop, in a run its head ended)
            failures, restarts = [f for f in failures if f.node in ended], [r for r in restarts if r.node in ended]
        per_node: dict = {}
        for f in (f for f in failures if f.ts is not None):
            per_node.setdefault(f.node, set()).add(self.attempt_of(f))
        for (node, attempt), stop in self.stops.items():
            if any(k.node == node and (k.ts is None or stop.after(k.ts, k.file, k.place)) for k in killers):
                per_node.setdefault(node, set()).add(attempt)
        counts = [int(v) for f in restarts for k in ("restarts", "restart_count")
                  if str(v := f.fields.get(k, "")).isdigit()] + [n for n in [self.restarts_seen] if n is not None]
        last = max((f.ts for f in failures if f.ts is not None), default=None)
        going_on = self.restarting or any(r.ts is None or (last is not None and r.ts > last) for r in restarts)
        starts = 2 if going_on else 3   # (else the second may be a retry by hand, or the restarter's last try)
        return any(self._repeated(node, a, starts) for node, a in per_node.items()) or \
            max(counts, default=0) >= 2 or bool(restarts and not counts)

    def fixed_starts(self) -> dict:
        """node -> when each of its attempts began that ran other arguments than the attempt before it and became
        ready: a fix that worked."""
        out: dict = {}
        for node, begun in self._begun.items():
            for (_, before), (t, attempt) in zip(begun, begun[1:]):
                was, now = self._args.get((node, before)), self._args.get((node, attempt))
                if was is not None and now is not None and was != now and (node, attempt) in self.ready:
                    out.setdefault(node, []).append(t)
        return out

    def head_ended(self, restarts: list = ()) -> set:
        """The deployment's heads (the nodes of its API server), where each server ran once and shows no restart of
        its own: the run ended as its head did (stopped by hand, its node lost, its own start failed), and a node that
        runs only workers and that its own unit or container restarts again and again meanwhile loops in a run that
        had ended or that never began (no head to join). Empty when the run has no such head."""
        heads = self.heads
        if not heads or any(self.head_runs.get(n) != 1 for n in heads) or any(r.node in heads for r in restarts):
            return set()
        return heads

    def _repeated(self, node, failed: set, starts: int) -> bool:
        """Two or more `failed` attempts of a node, of `starts` or more attempts, that ran what its first failed
        attempt ran (or whose arguments the bundle does not show): reruns with other arguments are other runs."""
        first = self._args.get((node, min(failed, key=lambda a: (a is None, a or 0))))
        same = {a for a in {a for _, a in self._begun.get(node, [])} | failed
                if first is None or self._args.get((node, a)) in (None, first)}
        return len(same & failed) >= 2 and len(same) >= starts

    def still_working_after(self, f, answered: list = (), deaths: list = ()) -> bool:
        """The finding's node kept logging its engine's stats after it, or kept answering requests (`answered`:
        failed requests, with their times) for ANSWERING_S or more (first answer to last), or until the bundle
        ends, with no stop: the server is up (an API server that outlives its engine and answers 500 to every
        request serves, and fails its requests). Answers count from the engine's death when one follows the finding
        (`deaths`: a hung engine's stats and timeouts before the watchdog kills it are its crash, not a server that
        serves)."""
        if f.ts is None:
            return False
        # (a node that serves through another's API server, printing no stats of its own: the server's nodes tell)
        serving = self.heads if f.node is not None and f.node not in self.heads and self.heads and \
            not any(n == f.node for n, _ in self._instances) else {f.node}
        died = [d.ts for d in deaths if d.ts is not None and d.ts >= f.ts and (d.node in serving or d.node == f.node)]
        since = min(died, default=f.ts)
        # (its own attempt's stats: a later attempt's are a restart's, back_serving)
        mine = pl.col("attempt").eq_missing(self.attempt_of(f)) if serving == {f.node} and \
            self.attempt_of(f) is not None else pl.lit(True)
        # (after a death, a stuck engine's stats are its API server's, logged over a dead engine)
        rows = self.stats.filter((pl.col("node").is_in(list(serving)) if f.node is not None else pl.lit(True))
                                 & (pl.col("ts") > since) & mine & ~(pl.col("stalled") & pl.lit(bool(died))))
        later = [a.ts for a in answered if a.ts is not None and a.ts > since and a.node in serving]
        stopped = self.after_stop(f) is not None or self.stops.get((f.node, self.attempt_of(f))) or any(
            node in serving - {f.node} and s.ts is not None and s.ts > f.ts for (node, _), s in self.stops.items())
        # (its attempt ended: stopped, or the node started again)
        ended = stopped or any(a != self.attempt_of(f) and t > since for t, a in self._begun.get(f.node, []))
        # (its answers' own span: an engine that hung before it died answered nothing meanwhile)
        # (and more than the burst of requests in flight that fail in the second their engine dies)
        span = (max(later) - min(later)).total_seconds() if later else 0.0
        answering = len(later) >= 2 and (span >= ANSWERING_S or (not ended and span >= IN_FLIGHT_S))
        return (rows.height >= 2 and not stopped) or (answering and self.after_stop(f) is None)

    def served_on_elsewhere(self, f, failed: list = ()) -> At | None:
        """Another instance (a node that prints its own engine's stats: a replica behind a router, a second
        decode) went on working after the instance that failed, to the end of the bundle, with nothing of
        `failed` (causes, deaths) on its node from then on: the work of the first sign of it."""
        if f.ts is None or f.node is None or not any(n == f.node for n, _ in self._instances):
            return None
        for (node, attempt), _ in self._serving_at_end():
            if node in (None, f.node) or (node, attempt) not in self._instances \
                    or any(g.node == node and g.ts is not None and g.ts >= f.ts for g in failed):
                continue
            if (on := next((at for at in self._progress.get((node, attempt), [])
                            if at.ts is not None and at.ts > f.ts), None)) is not None:
                return on
        return None

    def began_after(self, ts) -> bool:
        """The deployment's own first line came after `ts`."""
        return self._app_began is not None and ts < self._app_began

    def started_before(self, f) -> datetime | None:
        """The time of the last start f's file shows at or before f (its process's start)."""
        return max((t for t in self._file_starts.get(f.file) or () if t is not None and f.ts is not None
                    and t <= f.ts), default=None)

    def back_serving(self, f) -> At | None:
        """A later attempt of f's node that became ready after f and serves to the end of the bundle."""
        mine = self.attempt_of(f)
        return next((r for (node, attempt), r in self._serving_at_end() if node == f.node and mine is not None
                     and attempt is not None and attempt > mine and r.after(f.ts, f.file, f.place)), None)

    def stopped_after(self, f, failed: list = (), killers: list = ()) -> At | None:
        """The stop someone asked of f's attempt after f stalled its engine (stalled_at: requests running, nothing
        done), with nothing else failing from f on (`failed`: deaths, other causes: a liveness probe's kill, an
        orchestrator restarting the group) and no cause of a SIGTERM before it (`killers`: a reboot, an
        eviction): a hung server stopped by hand."""
        key = (f.node, self.attempt_of(f))
        if key not in self._asked:   # (a node whose processes a head runs, or whose own died of it while the head
            # hung: the stop asked first of the deployment, on its head, ends the run)
            key = min((k for k in self._asked_first if self.stops[k].after(f.ts, f.file, f.place)),
                      key=lambda k: (self.stops[k].ts is None, self.stops[k].ts or datetime.min), default=key)
        stop = self.stops.get(key)
        if stop is None or key not in self._asked or not stop.after(f.ts, f.file, f.place) \
                or not self.stalled_at(f) \
                or any((k.ts is None or stop.after(k.ts, k.file, k.place))
                       and (k.node in (None, key[0]) or k.source != "kernel")
                       for k in killers):   # (the kernel's kill of a process on another node signals no head)
            return None
        return None if any(g.category != f.category and g.ts and f.ts and f.ts <= g.ts
                           and not stop.before(g.ts, g.file, g.place) for g in failed) else stop

    def outcome(self, failure, again: bool, answered: list = (), deaths: list = (), failed: list = (),
                killers: list = (), unexplained: list | None = None) -> Outcome:
        """The outcome, given the failure that explains it (the root cause, or the first sign of a death
        when no cause was found; None: nothing abnormal), whether it failed again after a restart, the
        requests the server failed and the deaths of its engine (still_working_after), every failure
        (served_on_elsewhere), the causes of a SIGTERM and the failures the failure does not explain
        (stopped_after)."""
        if failure is not None:
            where = dict(file=failure.file, line=failure.line)
            # (an instance that failed while serving and serves again to the end is back, whatever served meanwhile)
            back = self.back_serving(failure) if self.ready_before(failure) and not failure.unready else None
            if back is None and (on := self.served_on_elsewhere(failure, failed)) is not None:
                return Outcome("failing_requests", **where, detail="one instance of several failed while another "
                               f"went on serving with nothing failing ({on.file}:{on.line}): part of the requests "
                               "failed")
            # (restarts that end in a start that serves to the end are back, unless the failure came again meanwhile)
            recurs = any(g.category == failure.category and g.node == failure.node
                         and self.attempt_of(g) not in (None, self.attempt_of(failure)) for g in failed)
            if again and (back is None or recurs):
                return Outcome("restart_loop", **where, detail="it was started again and again, and failed each time")
            if not self.app_log and failure.source == "kernel":   # (a device's fault: what the deployment did then,
                # no log shows; an orchestrator's, a pod never scheduled or an image never pulled, says it never ran)
                return Outcome("inconclusive", **where, detail="the bundle holds no log of the deployment itself: "
                               "what it did after this failure cannot be told")
            if self.ready_before(failure) and not failure.unready:  # (a port it never bound: never ready)
                if self.still_working_after(failure, answered, deaths):
                    return Outcome("failing_requests", **where,
                                   detail="it was serving and kept running, but failed from then on")
                if (stop := self.stopped_after(failure, failed if unexplained is None else unexplained,
                                               killers)) is not None:
                    return Outcome("stopped", stop.file, stop.line, "it was stopped from outside after it failed, "
                                   "before anything ended it (a hung server stopped by hand)")
                # (back, unless another part of the service died after it came back: a decode that crashed on it)
                if back is not None and not any(d.ts is not None and back.ts is not None and d.ts > back.ts
                                                and d.node != failure.node for d in deaths):
                    return Outcome("serving", back.file, back.line, "it was serving and failed, then its node "
                                   "started it again and it serves to the end of the bundle")
                return Outcome("crashed", **where, detail="it was serving, then failed")
            if (other := self.serving_elsewhere(failure)) is not None:
                return Outcome("serving", other.file, other.line, "a part that never became ready failed (a "
                               "rollout's new pod, a replacement, a start later run again) while a server on "
                               "another node went on serving, or a later start serves")
            return Outcome("never_ready", **where, detail="it failed before the server was ready")
        if not self.app_log:
            return Outcome("inconclusive", detail="the bundle holds no log of the deployment itself")
        stops = sorted(self.stops.values(), key=lambda s: (s.ts is None, s.ts or datetime.min, s.file, s.line))
        last = self.last_stop
        # serving after the last stop, in another file or on another node (a rolling update: the new pod serves as
        # the old one stops; a log platform's export holds both)
        node = next((n for (n, _), ats in self._stops.items() if last in ats), None)
        on = self.stats.filter((pl.col("ts") > last.ts) & ((pl.col("file") != last.file) | ~pl.col("node").eq_missing(
            node))) if last else self.stats.clear()
        if on.height >= 2:
            return Outcome("serving", on["file"][0], on["line"][0], "it was stopped in one place and went on serving "
                           "in another (a rolling update, a replacement)")
        # started again after the last stop and serving (a restart after a change of configuration)
        again = [r for (_, attempt), r in self._serving_at_end()
                 if last and r.ts is not None and last.ts is not None and r.ts > last.ts]
        if again:
            return Outcome("serving", again[0].file, again[0].line, "it was stopped, started again and serves")
        if stops:
            s = stops[0]
            return Outcome("stopped", s.file, s.line, "it was stopped, with nothing abnormal before")
        if self.ready and self.server_files and self.server_files <= set(self.cut_at):
            # (every log of the server ends where a collector cut it: how the run went on is not in the bundle)
            f = min(self.cut_at)
            return Outcome("inconclusive", f, self.cut_at[f], "it became ready, but every log of the server was cut "
                           "short by its collector (the first lines kept): how the run went on is not in the bundle")
        if self.ready:
            r = sorted(self.ready.values(), key=lambda s: (s.ts is None, s.ts or datetime.min, s.file, s.line))[0]
            return Outcome("serving", r.file, r.line, "it became ready and was still serving when the bundle ends")
        return Outcome("inconclusive", detail="the logs end before the server was ready, with nothing abnormal: "
                                              "the bundle cannot tell whether it would have started")
