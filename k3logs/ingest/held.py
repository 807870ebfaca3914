"""Bundles that are not one path on disk, held in memory as one (a memfd: nothing of a bundle is written to
disk, outside the output path or anywhere): standard input (`k3logs analyze -`) and several bundles of one
incident (`k3logs analyze node-a.tar.gz node-b/`). Each returns a path discover reads like any archive."""
from __future__ import annotations

import os
import sys
import tarfile
from pathlib import Path

from k3logs.errors import UsageError

STDIN_NAME = "stdin"  # what a bundle read from standard input is called in the report


def from_stdin(limit: int) -> Path:
    """Standard input (a tar stream, a compressed archive or one log) as the bundle: held in memory (a memfd,
    never on disk: nothing of a bundle is written outside the output path), as much as --max-total-bytes."""
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("`k3logs analyze -` reads the bundle from standard input: pipe a tar stream or a log "
                         "into it (`tar c bundle/ | k3logs analyze -`)")
    if not hasattr(os, "memfd_create"):
        raise UsageError("reading a bundle from standard input needs Linux (memfd); give its path instead")
    fd = os.memfd_create("k3logs-stdin")
    with open(fd, "wb", closefd=False) as held:
        size = 0
        while chunk := sys.stdin.buffer.read(1 << 20):
            size += len(chunk)
            if size > limit:
                raise UsageError(f"standard input holds more than --max-total-bytes ({limit} bytes); give the "
                                 f"bundle's path instead")
            held.write(chunk)
    return Path(f"/proc/self/fd/{fd}")


def combined(bundles: tuple[Path, ...], limit: int) -> Path:
    """Several bundles of one incident (a bundle per node) as one: an archive held in memory (a memfd, never
    on disk) with each as a member of its own name, a folder with its files under it, an archive or log as it
    is (read as a nested archive), so that every file keeps the name of the bundle it came from (node folders
    and node-named archives say whose it is). At most --max-total-bytes of files."""
    if not hasattr(os, "memfd_create"):
        raise UsageError("analysing several bundles as one needs Linux (memfd); put them in one folder instead")
    names: set[str] = set()
    total = 0
    for b in bundles:
        if not b.exists():
            raise UsageError(f"cannot read {b}: no such file or folder")
        if b.name in names:
            raise UsageError(f"two bundles are named {b.name}: give them different names (their files would mix)")
        names.add(b.name)
        total += sum(f.lstat().st_size for f in b.rglob("*") if f.is_file() and not f.is_symlink()) \
            if b.is_dir() else b.stat().st_size
        if total > limit:
            raise UsageError(f"the bundles hold more than --max-total-bytes ({limit} bytes) together")
    fd = os.memfd_create("k3logs-bundles")
    with open(fd, "wb", closefd=False) as held, tarfile.open(fileobj=held, mode="w") as tar:
        for b in bundles:  # (links are stored as links, never followed: discover judges them)
            tar.add(b, arcname=b.name, recursive=True)
    return Path(f"/proc/self/fd/{fd}")
