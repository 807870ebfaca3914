"""The verdict where the logs name no cause: a failed environment check that explains the outcome becomes the root; the
load the server carried before a failure; and how much what the bundle lacks weighs on the confidence."""
from __future__ import annotations

import re
from dataclasses import replace

import polars as pl

from k3logs.catalogue.landmarks import decision_line
from k3logs.catalogue.signatures import Catalogue

from .detect import outcome_data
from .findings import TIE_SECONDS, Decision, Finding
from .outcome import Outcome

LOG_GAP_S = 1800   # the deployment's logs end this long before its unit's stop: they were cut, not its last words


def _check_root(check, ev: pl.DataFrame, dumps: dict[str, str], cat: Catalogue) -> Finding:
    """A failing check as a cause finding, at the line of its evidence (an event, else a dump's line)."""
    file, _, line = check.evidence.rpartition(":")
    at = ev.filter((pl.col("file") == file) & (pl.col("line") == int(line))).head(1)
    if at.height:
        r = at.row(0, named=True)
        text, ts, tq, node, rank, pid, phase = (r["text"], r["ts"], r["ts_quality"], r["node"], r["rank"], r["pid"],
                                                r["phase"])
    else:
        lines = dumps.get(file, "").split("\n")
        text = lines[int(line) - 1] if 0 < int(line) <= len(lines) else ""
        ts, tq, node, rank, pid, phase = None, "none", None, None, None, None
    return Finding(eid=-1, sig=None, category=check.category, role="cause", priority=0, file=file, line=int(line),
                   span=(int(line), int(line)), ts=ts, ts_quality=tq, node=node or check.node, rank=rank, pid=pid,
                   phase=phase or "startup", text=text.strip(), title=cat.categories[check.category].title,
                   check=check.id)


def check_explains(decision: Decision, checks, ev: pl.DataFrame, dumps: dict[str, str], cat: Catalogue) -> Decision:
    """A failing environment check is a cause like a log line: when its failure explains the root the logs name
    (facts.toml [[check]] `explains`: nodes that run different NCCL builds explain the NCCL errors their healthy
    peers report), the check's evidence (the odd node out) is the cause, and the logged root one of its
    symptoms. A root that comes before the evidence (both timed) is not explained, unless the evidence is its node's
    state restated at a later start (a crash loop's last attempt prints the setting its first one failed on)."""
    root = decision.root
    if root is None:
        return decision
    # a root of low confidence is a guess (a worker gone with nothing saying why, a symptom standing alone): a check
    # that explains the symptoms the logs show says more
    seen = {root.category} | ({f.category for f in decision.findings if f.role == "symptom"}
                              if decision.confidence == "low" else set())
    # (a fault that shows before the server is ready, the wrong all2all backend, did not fail a deployment that served)
    failing = [c for c in checks if c.status == "fail" and c.evidence and seen & set(c.explains)
               and c.category in cat.categories and not (c.before_ready and root.phase == "serving")]
    for check in sorted(failing, key=lambda c: (cat.categories[c.category].triage, c.id)):
        cause = _check_root(check, ev, dumps, cat)
        if cause.ts is not None and root.ts is not None and (cause.ts - root.ts).total_seconds() > TIE_SECONDS \
                and not _restated(cause, root, ev):
            continue
        if root.phase and root.phase != "shutdown":   # (a setting fails where what it causes shows: requests
            cause.phase = root.phase                    # timing out while serving, a communicator never built)
        findings = decision.findings if any(f is root for f in decision.findings) else decision.findings + [root]
        findings = findings + [cause]
        root.explained_by = len(findings) - 1
        return Decision(False, cause, "medium", f"the environment check {check.id!r} fails and explains the "
                        f"{root.category} error the logs show ({root.file}:{root.line}): {check.detail}", findings,
                        outcome=decision.outcome)
    return decision


def _restated(cause: Finding, root: Finding, ev: pl.DataFrame) -> bool:
    """The evidence is a later attempt's than the root, on the root's node: the state the failed attempt (the root's)
    ran in too, printed again by the next start."""
    if cause.node is None or cause.node != root.node:
        return False
    at = ev.filter(pl.struct("file", "line").is_in([{"file": cause.file, "line": cause.line},
                                                    {"file": root.file, "line": root.line}]))
    attempt = {(f, ln): a for f, ln, a in at.select("file", "line", "attempt").iter_rows()}
    mine, theirs = attempt.get((cause.file, cause.line)), attempt.get((root.file, root.line))
    return mine is not None and theirs is not None and mine > theirs


def quiet_verdict(decision: Decision, checks, ev: pl.DataFrame, dumps: dict[str, str],
                  cat: Catalogue, app_log: bool = True) -> Decision:
    """A bundle whose logs show no failure can still hold the incident: a configuration fault that
    crashes nothing (prefix caching off for K3, the wrong all2all backend) or that hangs the start (NCCL builds
    that differ between nodes), from a failing check. When the logs do show a failure, a failing check that
    explains it is the cause (check_explains). `app_log`: the bundle holds a log of the deployment."""
    if not decision.healthy and decision.root is not None:
        return check_explains(decision, checks, ev, dumps, cat)
    failing = [c for c in checks if c.status == "fail" and c.category in cat.categories
               and cat.categories[c.category].quiet and c.evidence]
    if not failing:
        return decision
    check = sorted(failing, key=lambda c: (cat.categories[c.category].triage, c.id))[0]
    root, outcome = _check_root(check, ev, dumps, cat), decision.outcome
    if outcome is not None and outcome.state == "inconclusive" and app_log:
        # the deployment's logs end before it was ready: with a fault that explains it, it never became ready
        outcome = Outcome("never_ready", root.file, root.line, "it never became ready, and a failing check "
                          "explains why")
    return Decision(False, root, "medium", f"the logs show no failure, but the environment check {check.id!r} "
                    f"fails: {check.detail}", decision.findings, outcome=outcome)


def unlogged_end(d: Decision, facts, cat: Catalogue) -> tuple[Decision, list[str]]:
    """A run of the deployment its orchestrator saw end abnormally while no log shows why: the failure happened
    where the bundle holds no log of it. Either the logs show nothing abnormal and a container's last state or a
    unit's main process ended with an exit code no clean end gives (a run ended by OOMKilled or SIGKILL has
    signatures of its own; a container an operator's `docker stop` named ended by it), or all they show is an
    orchestrator restarting a failed container, with no cause. The outcome is inconclusive, an incident (`other`)
    where the orchestrator says it happened, and what is missing is named."""
    data = outcome_data()
    if not d.healthy:
        # (the causes and deaths it shows, by their signatures' own categories: a retried connect is neither)
        seen = [cat.by_id(f.sig).category if f.sig else f.category for f in d.findings if f.set_aside is None
                and (f.role == "cause" or (f.sig and cat.by_id(f.sig).category in data.fatal))]
        if d.root is None or d.root.category != "other" or not seen or \
                any(c not in data.orchestrator_only for c in seen):
            return d, []
        f = d.root
        return _unexplained(d, f.file, f.line, f"all the bundle shows is an orchestrator restarting a failed container "
                            f"({f.file}:{f.line}): no log of the run that failed shows why",
                            f"the log of the run that failed before the restart ({f.file}:{f.line}), up to its end")
    # (a container an operator's command stopped ended by that stop, whatever its code: SIGKILL once its grace ran out)
    stopped = {name for f in facts if f.name == "stop_asked" for name in f.value.split()}
    ended = [f for f in facts if f.name == "run_ended" and f.value.split(" ", 1)[0] not in data.clean_exits
             and re.search(data.deployment_run, f.value.partition(" ")[2])
             and (f.value.split() + [""])[1] not in stopped]
    if not ended:
        return d, []
    f = min(ended, key=lambda f: (f.file, f.line or 0))
    how = f"exit code {f.value.split(' ', 1)[0]}"
    return _unexplained(d, f.file, f.line, f"a run ended abnormally ({how}, {f.file}:{f.line}) and no log the bundle "
                        "holds shows why: its log is missing or was cut before the end",
                        f"the log of the run that ended with {how} ({f.file}:{f.line}), up to its end")


def log_ends_early(d: Decision, ev: pl.DataFrame, app_files: set[str] | frozenset[str]) -> tuple[Decision, list[str]]:
    """A run the logs show healthy whose own logs end long before its systemd unit is stopped (a journal's 'Stopping
    UNIT - ... vLLM ...' more than LOG_GAP_S after the deployment's last line): what it did meanwhile, and why it
    was stopped, is not in the bundle (a rotated log collected without the live one). Inconclusive, the span named
    as missing."""
    if not d.healthy or not app_files:
        return d, []
    app = ev.filter(pl.col("file").is_in(sorted(app_files)) & pl.col("ts").is_not_null())
    if app.is_empty():
        return d, []
    last = app["ts"].max()
    stops = ev.filter(~pl.col("file").is_in(sorted(app_files)) & pl.col("ts").is_not_null()
                      & (pl.col("ts") > last + pl.duration(seconds=LOG_GAP_S))
                      & pl.col("text").str.contains(decision_line("unit_stopping"))
                      & pl.col("text").str.contains(outcome_data().deployment_run)).sort("ts")
    if stops.is_empty():
        return d, []
    at, ts = f"{stops['file'][0]}:{stops['line'][0]}", stops["ts"][0]
    end = app.filter(pl.col("ts") == last).row(0, named=True)   # (where its logs end: the outcome's place)
    return _unexplained(d, end["file"], end["line"],
                        f"the deployment's logs end at {last:%Y-%m-%d %H:%M:%S} and its unit was stopped "
                        f"{(ts - last).total_seconds() / 3600:.1f} h later ({at}): what it did meanwhile is not in "
                        "the bundle", f"the deployment's log from {last:%Y-%m-%d %H:%M:%S} up to its unit's stop "
                        f"({at})")


def _unexplained(d: Decision, file: str, line: int | None, detail: str, missing: str) -> tuple[Decision, list[str]]:
    """The incident whose log is missing: inconclusive where file:line (a finding's, a fact's) shows the end."""
    return (replace(d, healthy=False, confidence="low", reason=detail, unexplained=True,
                    outcome=Outcome("inconclusive", file, line, detail)), [missing])


def weigh(d: Decision, missing: list[str]) -> Decision:
    """The confidence of a cause that explains nothing else drops when the bundle lacks parts of the
    deployment (missing.py): the failure may have started there."""
    if not missing or d.root is None or d.confidence != "high":
        return d
    at = next((i for i, f in enumerate(d.findings) if f is d.root), None)
    if at is not None and any(f.explained_by == at for f in d.findings):
        return d
    return replace(d, confidence="medium", reason=f"{d.reason}; but the bundle lacks {missing[0].split(' (')[0]}, "
                                                  f"where the failure may have started")
