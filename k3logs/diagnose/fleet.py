"""Sections a fleet tool prints per host (Ansible's ad-hoc 'HOST | CHANGED | rc=0 >>', then the command's lines
on that host): attribution's spans, as a pod JSON object's lines are its pod's."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .attribution import Attribution, Read

if TYPE_CHECKING:
    from .attribute import Names

OPEN_END = 1 << 40   # (a section that runs to its file's end)


def learn_sections(reads: dict[str, list[Read]], a: Attribution, names: Names) -> None:
    """Each host header's lines, up to the next header or shell prompt in its file, are that host's."""
    ends: dict[str, list[int]] = {}
    for r in [*reads["section_host"], *reads["section_end"]]:
        ends.setdefault(r.file, []).append(r.line)
    for r in reads["section_host"]:
        if not (node := names.host(r.g["host"])) or not names.w.is_host(node):
            continue
        end = min((ln for ln in ends[r.file] if ln > r.line), default=OPEN_END) - 1
        a.span_node.setdefault(r.file, []).append((r.line, end, node))
        a.said("span", (r.file, r.line), f"the host section '{r.g['host']} | ...' on line {r.line}")
