"""What collect runs: the plan (patterns/collect.toml: read-only commands, each for the host, a container, a pod or
inside), the target and --since checked, and each command's argument list."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from k3logs.catalogue.read import read_toml_or_raise
from k3logs.errors import CatalogueError, SourceLocation, UsageError
from k3logs.resources import data_dir

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
        return {"id": self.command.id, "argv": self.argv, "runtime": self.command.runtime,
                "file": self.command.file, "status": self.status, "exit_status": self.exit_status,
                "duration_s": round(self.duration_s, 3), "bytes": self.bytes_written, "truncated": self.truncated,
                "reason": self.reason, "why": self.command.why}


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
        data, _ = read_toml_or_raise(path, "collect commands")
        commands = tuple(Command(
            id=c["id"], argv=tuple(c["argv"]), file=c["file"], runtime=c["runtime"], timeout=float(c["timeout"]),
            why=c["why"], since=tuple(c.get("since", ())), prompt=bool(c.get("prompt", False)),
            merge_stderr=c.get("stderr", "keep") == "merge", fallback=c.get("fallback"),
            nul_args=bool(c.get("nul_args", False)), keep=c.get("keep", "head")) for c in data["command"])
        plan = Plan(commands, data["python"]["versions"], tuple(data["env"]["prefixes"]))
    except (KeyError, TypeError, ValueError) as e:
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


def applies(cmd: Command, target: Target) -> bool:
    """Host commands always; docker / kubectl ones for their target; inside ones for either target."""
    if cmd.runtime == "inside":
        return target.runtime != "host"
    return cmd.runtime in ("host", target.runtime)
