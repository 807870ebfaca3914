"""`k3logs collect`: run a fixed list of read-only commands on one node and write what they print as a bundle
that `k3logs analyze` reads (patterns/collect.toml holds the list).

Safety first: argument lists, never a shell; the only values from the user that reach a command line are a
container or pod name checked against a strict pattern and a duration turned into seconds. Every command has
a timeout (its whole process group is killed), no stdin and a size cap. A command that is missing, fails or
hangs is written down in the manifest and never fails the collection. Nothing is written but the archive,
through a temporary file beside it that is renamed at the end.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from k3logs import __version__
from k3logs.gate import collected, message
from k3logs.errors import UsageError

from .command import run_command
from .plan import Plan, Run, Target, applies, command_line, load_plan, parse_since, parse_target
from .write import env_allowed, limit_inspect_env, limit_pod_env, node_name, section_of, write_bundle


# ------------------------------------------------------------------------------------------
# the whole collection
# ------------------------------------------------------------------------------------------
@dataclass
class Collection:
    path: Path
    node: str
    runs: list[Run]
    files: dict[str, int] = field(default_factory=dict)   # bundle path -> bytes
    missing: list[str] = field(default_factory=list)      # what is not in the bundle, and why
    changed: list[str] = field(default_factory=list)      # what was cut from an output on purpose


def _open_output(out: Path, force: bool) -> tuple[int, Path]:
    """The temporary file the archive is written to, beside `out`; bad -o fails here, before anything runs."""
    if out.is_dir():
        raise UsageError(f"-o {out} is a folder; give a file name such as {out / 'bundle.tar.gz'}")
    if out.exists() and not force:
        raise UsageError(f"{out} exists; use --force to replace it")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"cannot write {out}: folder {parent} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{out.name}.", suffix=".partial")
    except OSError as e:
        raise UsageError(f"cannot write {out}: {e.strerror}") from e
    return fd, Path(tmp)


def collect(out: Path, container: str | None = None, pod: str | None = None, since: str | None = None,
            redact_secrets: bool = True, timeout: float | None = None, force: bool = False,
            progress: Callable[[Run], None] | None = None, plan: Plan | None = None) -> Collection:
    """Run the plan for this node (and the container or pod), write `out` and return what happened."""
    target = parse_target(container, pod)
    since_s = parse_since(since)
    if timeout is not None and not 0 < timeout <= 3600:
        raise UsageError("--timeout must be between 0 and 3600 seconds")
    plan = plan or load_plan()
    fd, tmp = _open_output(out, force)
    try:
        started = datetime.now(timezone.utc)
        # English messages and C dates, in UTC: the times dmesg -T, uptime -s and nvidia-smi print carry no zone,
        # and UTC is what `analyze` assumes for them (--tz)
        env = {**os.environ, "LC_ALL": "C", "TZ": "UTC"}
        runs: list[Run] = []
        by_id: dict[str, Run] = {}
        for cmd in plan.commands:
            if not applies(cmd, target):
                continue
            run = Run(cmd, command_line(cmd, target, since_s, plan))
            first = by_id.get(cmd.fallback) if cmd.fallback else None
            if first is not None and first.status == "ok" and first.output.strip():
                run.status, run.reason = "skipped", f"not needed: {first.command.id} gave the output"
            else:
                run_command(run, timeout or cmd.timeout, env)
            runs.append(run)
            by_id[cmd.id] = run
            if progress:
                progress(run)
        result = Collection(out, node_name(runs), runs)
        files = _contents(result, plan, target, redact_secrets)
        result.missing = [f"{r.command.id}: {r.reason}" for r in runs if r.status not in ("ok", "skipped")] \
            + result.missing
        files["manifest.json"] = _manifest(result, target, since, redact_secrets, started, plan, files)
        members = {f"{result.node}/{name}": data for name, data in files.items()}
        result.files = {name: len(data) for name, data in sorted(members.items())}
        write_bundle(fd, members, int(started.timestamp()))
        fd = -1
        if out.exists() and not force:  # appeared while we collected
            raise UsageError(f"{out} exists; use --force to replace it")
        os.replace(tmp, out)
        return result
    except BaseException:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise


def _written(run: Run) -> bool:
    """Whether a command's output goes into the bundle: whatever it printed (a failing nvidia-smi says why on
    stdout), except the error message of a failed log command, which is in the manifest instead."""
    if not run.output.strip():
        return False
    return not (run.command.merge_stderr and run.status not in ("ok", "timed_out"))


def _contents(result: Collection, plan: Plan, target: Target, redact_secrets: bool) -> dict[str, bytes]:
    """Bundle file name -> bytes, grouped as the plan says, redacted; env.txt from the container's or pod's
    declared environment (or this process's when neither was asked for), limited to the prefixes."""
    texts: dict[str, list[str]] = {}
    env_items: list[str] | None = None
    for run in result.runs:
        if not _written(run):
            continue
        if run.command.id in ("docker_inspect", "kubectl_pod") and run.status == "ok":
            try:
                doc = json.loads(run.output)
            except ValueError:
                doc = None
            if doc is not None:
                limit = limit_inspect_env if run.command.id == "docker_inspect" else limit_pod_env
                doc, env_items = limit(doc, plan.env_prefixes)
                run.output = (json.dumps(doc, indent=4) + "\n").encode()
                result.changed.append(f"{run.command.file}: environment limited to the prefixes"
                                      + ("; last-applied-configuration annotation dropped"
                                         if run.command.id == "kubectl_pod" else ""))
                pod_node = (doc.get("spec") or {}).get("nodeName") if isinstance(doc, dict) else None
                if isinstance(pod_node, str) and pod_node and pod_node.split(".")[0] != result.node.split(".")[0]:
                    # the host outputs (nvidia-smi, kernel log) then describe this machine, not the pod's node
                    result.missing.append(f"host outputs: the pod runs on {pod_node}, but they were taken on "
                                          f"{result.node}; run collect on {pod_node}")
        text = collected(section_of(run), redact_secrets)  # sections are separate outputs: redacted one by one
        run.bytes_written = len(text.encode())
        texts.setdefault(run.command.file, []).append(text)
    files = {name: "".join(parts).encode() for name, parts in texts.items()}
    if target.runtime == "host":
        env_items = [f"{k}={v}" for k, v in os.environ.items() if env_allowed(k, plan.env_prefixes)]
    prefixes = ", ".join(p + "*" for p in plan.env_prefixes)
    if env_items:
        files["env.txt"] = collected("\n".join(sorted(env_items)) + "\n", redact_secrets).encode()
    elif env_items is None:
        result.missing.append(f"env.txt: not written; the {target.describe()} could not be inspected")
    else:
        result.missing.append(f"env.txt: not written; no {prefixes} variables set")
    return files


def _manifest(result: Collection, target: Target, since: str | None, redact_secrets: bool, started: datetime,
              plan: Plan, files: dict[str, bytes]) -> bytes:
    doc = {"k3logs_manifest": {
        "node": result.node,
        "hostname": result.node,
        "collected_at_utc": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "k3logs_version": __version__,
        "target": target.describe(),
        "since": since or "",
        "redacted": redact_secrets,
        "env_prefixes": list(plan.env_prefixes),
        "files": sorted([*files, "manifest.json"]),
        "changed": result.changed,
        "commands": [r.manifest() for r in result.runs],
        "not_available": result.missing,
    }}
    return collected(json.dumps(doc, indent=2) + "\n", redact_secrets).encode()


def run_line(run: Run) -> str:
    """One command's manifest entry for people."""
    size = len(run.output)  # as printed; the manifest has the bytes written, after redaction
    size = f"{size / 1024:.1f} KiB" if size else "-"
    note = f"  ({message(run.reason)})" if run.reason else ""
    return f"  {run.status:<17} {run.command.id:<16} {run.duration_s:6.2f}s {size:>11}  {run.command.file}{note}"


def summary_lines(result: Collection) -> list[str]:
    """The end of the manifest for people (stderr): what was written, what was not available."""
    total = sum(result.files.values())
    lines = [f"wrote {result.path} ({result.node}/, {len(result.files)} files, {total / 1024:.1f} KiB)"]
    if result.missing:
        lines.append(f"not available ({len(result.missing)}): " + "; ".join(result.missing))
    return lines
