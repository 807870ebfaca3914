"""Where `analyze` writes its report: stdout, one file, or a folder.

- no `-o`: the report on stdout (md, json or html);
- `-o FILE`: the report in that file, exactly what stdout would get (as before the folder form existed);
- `-o DIR` where DIR is an existing folder or a path ending in '/': DIR/report.md with DIR/timeline.svg
  beside it (referenced from the markdown, so GitHub and GitLab show the picture), or DIR/report.json,
  DIR/report.html. The folder itself is created if missing (its parent must exist); nothing else is
  written."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from k3logs.contract import Report
from k3logs.errors import UsageError
from k3logs.gate import shown

from .render import render_html, render_json, render_markdown, render_svg

PICTURE = "timeline.svg"
Then = Callable[[str, str], str]
EXTENSIONS = {"md": "md", "json": "json", "html": "html"}


@dataclass(frozen=True)
class Target:
    path: Path | None     # None: stdout
    folder: bool = False


def target(out: str | None, bundle: str | Path | None = None) -> Target:
    """Check `-o` before any work is done: a folder, a file, or stdout; its parent must exist, and it is
    neither a symbolic link nor inside the bundle (see `outside`)."""
    if out is None:
        return Target(None)
    if not out.strip():
        raise UsageError("-o needs a file or folder name")
    path = Path(out)  # a trailing '/' is dropped here: path.parent is the folder's parent
    folder = (out.endswith(("/", os.sep)) or path.is_dir()) and not path.is_symlink()
    parent = path.parent
    if folder and path.exists() and not path.is_dir():
        raise UsageError(f"cannot write the report into {out}: it exists and is not a folder")
    if not parent.is_dir():
        raise UsageError(f"cannot write the report to {out}: the folder {parent} does not exist")
    outside(path, bundle)
    return Target(path, folder)


def outside(path: Path, bundle: str | Path | None) -> None:
    """Refuse an output that is a symbolic link (writing through it would change a file elsewhere) or that
    lies inside the bundle (the report would become part of the evidence, or replace it)."""
    if path.is_symlink():
        raise UsageError(f"cannot write to {path}: it is a symbolic link; name the file itself")
    if bundle is None:
        return
    dest, src = path.parent.resolve() / path.name, Path(bundle).resolve()
    if dest == src or (src.is_dir() and src in dest.parents):
        raise UsageError(f"cannot write to {path}: it is inside the bundle {bundle}; write the output elsewhere")


def _write(path: Path, text: str) -> None:
    """`text` into `path`, never through a symbolic link (one put there after the checks included)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        raise UsageError(f"cannot write to {path}: {e.strerror or e}") from e
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def render(report: Report, fmt: str, picture: str | None = None, then: Then | None = None) -> str:
    """The report as text; `then(text, fmt)` adds to it (a section made by a later stage: the reference diff)."""
    if fmt == "json":
        text = render_json(report)
    elif fmt == "html":
        text = render_html(report)
    else:
        text = render_markdown(report, picture=picture)
    return text if then is None else then(text, fmt)


def write(report: Report, fmt: str, where: Target, then: Then | None = None) -> list[Path]:
    """Write the report (and for markdown in a folder, its picture); returns the files written."""
    assert where.path is not None
    if not where.folder:
        _write(where.path, shown(render(report, fmt, then=then), fmt))
        return [where.path]
    where.path.mkdir(exist_ok=True)
    report_file = where.path / f"report.{EXTENSIONS[fmt]}"
    written = []
    if fmt == "md":
        picture = where.path / PICTURE
        _write(picture, shown(render_svg(report)))
        written.append(picture)
    _write(report_file, shown(render(report, fmt, PICTURE if fmt == "md" else None, then), fmt))
    return [report_file, *written]
