"""One command run: in its own process group, with a time limit, its output capped (the tail kept where the end
matters, as a journal's), killed whole when it overruns."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time

from k3logs import redact

from .plan import MAX_OUTPUT_BYTES, MAX_STDERR_BYTES, Run


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
