"""What collect writes: each command's output (redacted at the gate out: gate.collected), the environment of
inspect and pod specs limited to the variables that matter, all in one tar.gz with a manifest."""
from __future__ import annotations

import gzip
import io
import os
import shlex
import socket
import tarfile

from .plan import NODE_NAME, Run


# ------------------------------------------------------------------------------------------
# what is written
# ------------------------------------------------------------------------------------------
def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def env_allowed(name: str, prefixes: tuple[str, ...]) -> bool:
    return name.startswith(prefixes)


def limit_inspect_env(doc, prefixes: tuple[str, ...]) -> tuple[object, list[str]]:
    """docker inspect JSON with Config.Env cut to the allowed prefixes; and those NAME=value items."""
    kept: list[str] = []
    for item in doc if isinstance(doc, list) else [doc]:
        cfg = item.get("Config") if isinstance(item, dict) else None
        if isinstance(cfg, dict) and isinstance(cfg.get("Env"), list):
            cfg["Env"] = [e for e in cfg["Env"] if isinstance(e, str) and env_allowed(e.partition("=")[0], prefixes)]
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
                                and env_allowed(str(e.get("name", "")), prefixes)]
                    kept.extend(f"{e['name']}={e['value']}" for e in c["env"] if isinstance(e.get("value"), str))
        if isinstance(doc.get("metadata"), dict):
            # the last-applied annotation repeats the whole spec, env included
            (doc["metadata"].get("annotations") or {}).pop(
                "kubectl.kubernetes.io/last-applied-configuration", None)
    return doc, kept


def section_of(run: Run) -> str:
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
