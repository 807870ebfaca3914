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

from .errors import UsageError
from .redact import shown
from .render import render_html, render_json, render_markdown, render_svg
from .report import Report

PICTURE = "timeline.svg"
EXTENSIONS = {"md": "md", "json": "json", "html": "html"}


@dataclass(frozen=True)
class Target:
    path: Path | None     # None: stdout
    folder: bool = False


def target(out: str | None) -> Target:
    """Check `-o` before any work is done: a folder, a file, or stdout; its parent must exist."""
    if out is None:
        return Target(None)
    if not out.strip():
        raise UsageError("-o needs a file or folder name")
    path = Path(out)  # a trailing '/' is dropped here: path.parent is the folder's parent
    folder = out.endswith(("/", os.sep)) or path.is_dir()
    parent = path.parent
    if folder and path.exists() and not path.is_dir():
        raise UsageError(f"cannot write the report into {out}: it exists and is not a folder")
    if not parent.is_dir():
        raise UsageError(f"cannot write the report to {out}: the folder {parent} does not exist")
    return Target(path, folder)


def render(report: Report, fmt: str, picture: str | None = None) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "html":
        return render_html(report)
    return render_markdown(report, picture=picture)


def write(report: Report, fmt: str, where: Target) -> list[Path]:
    """Write the report (and for markdown in a folder, its picture); returns the files written."""
    assert where.path is not None
    if not where.folder:
        where.path.write_text(shown(render(report, fmt), fmt), encoding="utf-8")
        return [where.path]
    where.path.mkdir(exist_ok=True)
    report_file = where.path / f"report.{EXTENSIONS[fmt]}"
    written = []
    if fmt == "md":
        picture = where.path / PICTURE
        picture.write_text(shown(render_svg(report)), encoding="utf-8")
        written.append(picture)
    report_file.write_text(shown(render(report, fmt, PICTURE if fmt == "md" else None), fmt), encoding="utf-8")
    return [report_file, *written]
