"""`k3logs collect`: run a fixed list of read-only commands on one node and write what they print as a bundle
that `k3logs analyze` reads (patterns/collect.toml holds the list).

Safety first: argument lists, never a shell; the only values from the user that reach a command line are a
container or pod name checked against a strict pattern and a duration turned into seconds. Every command has
a timeout (its whole process group is killed), no stdin and a size cap. A command that is missing, fails or
hangs is written down in the manifest and never fails the collection. Nothing is written but the archive,
through a temporary file beside it that is renamed at the end.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from . import __version__, redact
from .errors import CatalogueError, SourceLocation, UsageError
from .resources import data_dir

MAX_OUTPUT_BYTES = 64 * 1024 * 1024   # per command; more is cut and the manifest says so
MAX_STDERR_BYTES = 64 * 1024          # only its first line is kept, but read enough to find it
CONTAINER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")              # docker's own rule, bounded
K8S_NAMESPACE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")            # RFC 1123 label
K8S_POD = re.compile(r"^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$")                 # RFC 1123 subdomain
DURATION = re.compile(r"^(\d{1,6})([smhd])$")
NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
RUNTIMES = ("host", "docker", "kubectl", "inside")


@dataclass(frozen=True)
class Command:
    """One [[command]] of patterns/collect.toml."""

    id: str
    argv: tuple[str, ...]
    file: str
    runtime: str
    timeout: float
    why: str
    since: tuple[str, ...] = ()
    prompt: bool = False
    merge_stderr: bool = False
    fallback: str | None = None
    nul_args: bool = False
    keep: str = "head"   # which end of an output longer than the cap is kept


@dataclass(frozen=True)
class Plan:
    commands: tuple[Command, ...]
    python_versions: str
    env_prefixes: tuple[str, ...]


@dataclass(frozen=True)
class Target:
    """What to collect besides the host: nothing, a docker container, or a Kubernetes pod."""

    runtime: str = "host"   # host | docker | kubectl
    name: str | None = None
    namespace: str | None = None

    def describe(self) -> str:
        if self.runtime == "docker":
            return f"container {self.name}"
        if self.runtime == "kubectl":
            return f"pod {self.namespace}/{self.name}"
        return "host only"


@dataclass
class Run:
    """What one command did; `output` is what goes into the bundle (never into the manifest)."""

    command: Command
    argv: list[str]
    status: str = "ok"            # ok | not_found | timed_out | failed | permission_denied | skipped
    exit_status: int | None = None
    duration_s: float = 0.0
    reason: str = ""
    truncated: bool = False
    output: bytes = b""
    bytes_written: int = 0

    def manifest(self) -> dict:
        return {"id": self.command.id, "argv": [redact.text(a) for a in self.argv], "runtime": self.command.runtime,
                "file": self.command.file, "status": self.status, "exit_status": self.exit_status,
                "duration_s": round(self.duration_s, 3), "bytes": self.bytes_written, "truncated": self.truncated,
                "reason": redact.text(self.reason), "why": self.command.why}


# ------------------------------------------------------------------------------------------
# options
# ------------------------------------------------------------------------------------------
def parse_target(container: str | None, pod: str | None) -> Target:
    if container and pod:
        raise UsageError("give --container or --pod, not both")
    if container is not None:
        if not CONTAINER_NAME.match(container):
            raise UsageError(f"invalid --container {container!r}: letters, digits, '_', '.', '-' only")
        return Target("docker", container)
    if pod is not None:
        ns, sep, name = pod.partition("/")
        if not sep or not K8S_NAMESPACE.match(ns) or not K8S_POD.match(name):
            raise UsageError(f"invalid --pod {pod!r}: expected NAMESPACE/NAME (lower-case letters, digits, '-', '.')")
        return Target("kubectl", name, ns)
    return Target()


def parse_since(since: str | None) -> int | None:
    """--since as seconds: 90s, 30m, 2h, 1d."""
    if since is None:
        return None
    m = DURATION.match(since.strip())
    if not m or int(m.group(1)) == 0:
        raise UsageError(f"invalid --since {since!r}: a positive number with s, m, h or d (e.g. 2h)")
    return int(m.group(1)) * UNIT_SECONDS[m.group(2)]


def load_plan(path: Path | None = None) -> Plan:
    path = path or data_dir("patterns") / "collect.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        commands = tuple(Command(
            id=c["id"], argv=tuple(c["argv"]), file=c["file"], runtime=c["runtime"], timeout=float(c["timeout"]),
            why=c["why"], since=tuple(c.get("since", ())), prompt=bool(c.get("prompt", False)),
            merge_stderr=c.get("stderr", "keep") == "merge", fallback=c.get("fallback"),
            nul_args=bool(c.get("nul_args", False)), keep=c.get("keep", "head")) for c in data["command"])
        plan = Plan(commands, data["python"]["versions"], tuple(data["env"]["prefixes"]))
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise CatalogueError(f"collect commands are invalid: {e}", source=SourceLocation(str(path))) from e
    bad = [c.id for c in commands if c.runtime not in RUNTIMES or not c.argv or c.keep not in ("head", "tail")
           or not re.fullmatch(r"[\w-][\w.-]*", c.file)]  # a plain name: the node folder holds every file
    if bad:
        raise CatalogueError(f"collect commands with an unknown runtime or keep, no argv or a bad file name: "
                             f"{', '.join(bad)}", source=SourceLocation(str(path)))
    return plan


# ------------------------------------------------------------------------------------------
# running one command
# ------------------------------------------------------------------------------------------
def _fill(args: tuple[str, ...], values: dict[str, str]) -> list[str]:
    """Placeholders replaced by validated values only; anything else in braces is left as written."""
    return [re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), a) for a in args]


def command_line(cmd: Command, target: Target, since_s: int | None, plan: Plan) -> list[str]:
    values = {"python_versions": plan.python_versions}
    if target.name:
        values.update(name=target.name, pod=target.name, ns=target.namespace or "")
    if since_s is not None:
        values["since_s"] = str(since_s)
    argv = _fill(cmd.argv, values) + (_fill(cmd.since, values) if since_s is not None else [])
    if cmd.runtime == "inside":
        prefix = (["docker", "exec", target.name] if target.runtime == "docker"
                  else ["kubectl", "exec", "-n", target.namespace, target.name, "--"])
        argv = prefix + argv
    return argv


def _drain(stream, cap: int, chunks: list[bytes], capped: threading.Event, tail: bool = False) -> None:
    """Read a pipe to its end. Head mode keeps the first `cap` bytes and sets `capped` so that the caller
    stops the command; tail mode reads on and keeps the last `cap` bytes (a log's end is where it failed)."""
    kept = 0
    try:
        while chunk := stream.read1(65536):
            if tail:
                chunks.append(chunk)
                kept += len(chunk)
                while kept - len(chunks[0]) >= cap:
                    kept -= len(chunks.pop(0))
                if kept > cap:
                    capped.set()
                continue
            room = cap - kept
            if room > 0:
                chunks.append(chunk[:room])
                kept += min(room, len(chunk))
            if len(chunk) > room:
                capped.set()
    except (OSError, ValueError):  # the pipe was closed under us after a kill
        pass


def _tail_bytes(chunks: list[bytes], cap: int) -> bytes:
    """The last `cap` bytes, from the first whole line on."""
    data = b"".join(chunks)[-cap:]
    cut = data.find(b"\n")
    return data[cut + 1:] if cut >= 0 else data


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the command and every child it started (start_new_session)
    except (ProcessLookupError, PermissionError):
        pass


def run_command(run: Run, timeout: float, env: dict[str, str], cap: int = MAX_OUTPUT_BYTES) -> Run:
    """Run `run.argv`; fill in status, exit status, duration, output and why it gave nothing."""
    argv = run.argv
    if shutil.which(argv[0], path=env.get("PATH", "")) is None:
        run.status, run.reason = "not_found", f"{argv[0]}: not found on PATH"
        return run
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT if run.command.merge_stderr else subprocess.PIPE,
                                env=env, start_new_session=True, close_fds=True)
    except PermissionError as e:
        run.status, run.reason = "permission_denied", f"{argv[0]}: {e.strerror}"
        return run
    except OSError as e:
        run.status, run.reason = "not_found", f"{argv[0]}: {e.strerror}"
        return run
    out: list[bytes] = []
    err: list[bytes] = []
    capped = threading.Event()
    tail = run.command.keep == "tail"
    readers = [threading.Thread(target=_drain, args=(proc.stdout, cap, out, capped, tail), daemon=True)]
    if proc.stderr is not None:
        readers.append(threading.Thread(target=_drain, args=(proc.stderr, MAX_STDERR_BYTES, err, threading.Event()),
                                        daemon=True))
    for t in readers:
        t.start()
    timed_out = False
    try:
        while proc.poll() is None:
            if capped.is_set() and not tail:
                break
            if time.monotonic() >= start + timeout:
                timed_out = True
                break
            time.sleep(0.02)
    finally:  # also on Ctrl-C: a new session does not get the terminal's signal, so stop it here
        if proc.poll() is None:
            _kill_group(proc)
        proc.wait()
        for t in readers:
            t.join(timeout=2)  # a child that left the process group may still hold the pipe: do not wait for it
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    run.duration_s = time.monotonic() - start
    run.output = _tail_bytes(out, cap) if tail and capped.is_set() else b"".join(out)
    run.truncated = capped.is_set()
    run.exit_status = proc.returncode
    first_err = next((ln.strip() for ln in b"".join(err).decode("utf-8", "replace").splitlines() if ln.strip()), "")
    mib = cap // (1024 * 1024) or f"{cap} bytes"
    if timed_out:
        run.status, run.reason = "timed_out", f"timed out after {timeout:g} s; killed"
    elif run.truncated and not tail:
        run.reason = f"output cut at {mib} MiB; the command was stopped there"
    elif proc.returncode != 0:
        if not first_err and run.command.merge_stderr:
            first_err = next((ln.strip() for ln in run.output.decode("utf-8", "replace").splitlines()
                              if ln.strip()), "")
        denied = re.search(r"permission denied|operation not permitted|must be root", first_err, re.I)
        run.status = "permission_denied" if denied else "failed"
        run.reason = f"exit status {proc.returncode}" + (f": {redact.clip(first_err, 300)}" if first_err else "")
    elif not run.output.strip():
        run.reason = "no output"
    if run.truncated and tail:
        run.reason = "; ".join(x for x in (run.reason, f"only the last {mib} MiB kept") if x)
    return run


# ------------------------------------------------------------------------------------------
# what is written
# ------------------------------------------------------------------------------------------
def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def scrub(text: str, enabled: bool) -> str:
    """The same rules as every k3logs output: the multi-line ones over the whole text, then line by line."""
    if not enabled:
        return text
    lines = pl.Series("text", redact.block(text).split("\n"))
    return "\n".join(redact.series(lines).to_list())  # vectorised: 30x faster than a rule pass per line


def _env_allowed(name: str, prefixes: tuple[str, ...]) -> bool:
    return name.startswith(prefixes)


def limit_inspect_env(doc, prefixes: tuple[str, ...]) -> tuple[object, list[str]]:
    """docker inspect JSON with Config.Env cut to the allowed prefixes; and those NAME=value items."""
    kept: list[str] = []
    for item in doc if isinstance(doc, list) else [doc]:
        cfg = item.get("Config") if isinstance(item, dict) else None
        if isinstance(cfg, dict) and isinstance(cfg.get("Env"), list):
            cfg["Env"] = [e for e in cfg["Env"] if isinstance(e, str) and _env_allowed(e.partition("=")[0], prefixes)]
            kept.extend(cfg["Env"])
    return doc, kept


def limit_pod_env(doc, prefixes: tuple[str, ...]) -> tuple[object, list[str]]:
    """kubectl pod JSON with every container's env cut to the allowed prefixes; and the NAME=value items
    given literally (valueFrom entries keep their reference, not a value)."""
    kept: list[str] = []
    spec = doc.get("spec") if isinstance(doc, dict) else None
    if isinstance(spec, dict):
        for key in ("initContainers", "containers"):
            for c in spec.get(key) or []:
                if isinstance(c, dict) and isinstance(c.get("env"), list):
                    c["env"] = [e for e in c["env"] if isinstance(e, dict)
                                and _env_allowed(str(e.get("name", "")), prefixes)]
                    kept.extend(f"{e['name']}={e['value']}" for e in c["env"] if isinstance(e.get("value"), str))
        if isinstance(doc.get("metadata"), dict):
            # the last-applied annotation repeats the whole spec, env included
            (doc["metadata"].get("annotations") or {}).pop(
                "kubectl.kubernetes.io/last-applied-configuration", None)
    return doc, kept


def _section(run: Run) -> str:
    body = _text(run.output)
    if run.command.nul_args:  # /proc/PID/cmdline: arguments separated by NUL bytes
        body = shlex.join([a for a in body.split("\x00") if a]) + "\n"
    if body and not body.endswith("\n"):
        body += "\n"
    return (f"$ {shlex.join(run.argv)}\n" if run.command.prompt else "") + body


def node_name(runs: list[Run]) -> str:
    """The host name the `hostname` command printed, else this process's; the bundle's top folder."""
    printed = next((_text(r.output).strip() for r in runs if r.command.id == "hostname" and r.status == "ok"), "")
    for name in (printed, socket.gethostname()):
        if NODE_NAME.match(name):
            return name
    return "node"


def _tar_member(tar: tarfile.TarFile, name: str, data: bytes, mtime: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), mtime, 0o644
    tar.addfile(info, io.BytesIO(data))


def write_bundle(tmp_fd: int, files: dict[str, bytes], mtime: int) -> None:
    """Sorted members, fixed owner and mode, gzip header without a time: the same inputs give the same bytes."""
    with os.fdopen(tmp_fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            _tar_member(tar, name, files[name], mtime)
        gz.flush()
        raw.flush()
        os.fsync(raw.fileno())


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


def applies(cmd: Command, target: Target) -> bool:
    """Host commands always; docker / kubectl ones for their target; inside ones for either target."""
    if cmd.runtime == "inside":
        return target.runtime != "host"
    return cmd.runtime in ("host", target.runtime)


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
        text = scrub(_section(run), redact_secrets)  # sections are separate outputs: redacted one by one
        run.bytes_written = len(text.encode())
        texts.setdefault(run.command.file, []).append(text)
    files = {name: "".join(parts).encode() for name, parts in texts.items()}
    if target.runtime == "host":
        env_items = [f"{k}={v}" for k, v in os.environ.items() if _env_allowed(k, plan.env_prefixes)]
    prefixes = ", ".join(p + "*" for p in plan.env_prefixes)
    if env_items:
        files["env.txt"] = scrub("\n".join(sorted(env_items)) + "\n", redact_secrets).encode()
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
    return scrub(json.dumps(doc, indent=2) + "\n", redact_secrets).encode()


def run_line(run: Run) -> str:
    """One command's manifest entry for people."""
    size = len(run.output)  # as printed; the manifest has the bytes written, after redaction
    size = f"{size / 1024:.1f} KiB" if size else "-"
    note = f"  ({redact.text(run.reason)})" if run.reason else ""
    return f"  {run.status:<17} {run.command.id:<16} {run.duration_s:6.2f}s {size:>11}  {run.command.file}{note}"


def summary_lines(result: Collection) -> list[str]:
    """The end of the manifest for people (stderr): what was written, what was not available."""
    total = sum(result.files.values())
    lines = [f"wrote {result.path} ({result.node}/, {len(result.files)} files, {total / 1024:.1f} KiB)"]
    if result.missing:
        lines.append(f"not available ({len(result.missing)}): " + "; ".join(result.missing))
    return lines
