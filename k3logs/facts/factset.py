"""The facts a check reads, by name, and how a check's detail names where one was read."""
from __future__ import annotations

from collections import defaultdict

from .util import RAN_RANK, Fact


class FactSet:
    """The bundle's facts by name."""

    def __init__(self, facts: list[Fact]):
        self.by: dict[str, list[Fact]] = defaultdict(list)
        for f in facts:
            self.by[f.name].append(f)
        self.all = facts

    def get(self, name: str) -> list[Fact]:
        return self.by.get(name, [])

    def ran(self, name: str) -> list[Fact]:
        """Facts of `name`, the command that really ran first."""
        return sorted(self.get(name), key=lambda f: (RAN_RANK.get(f.source, 9), f.file, f.line or 0))

    def first(self, name: str) -> Fact | None:
        r = self.ran(name)
        return r[0] if r else None

    def int_of(self, name: str) -> int | None:
        f = self.first(name)
        try:
            return int(float(f.value)) if f else None
        except ValueError:
            return None


def at_where(f: Fact | None) -> str:
    """' (file:line, node N)' of a fact, for a check's detail."""
    return f" ({f.where}{', node ' + f.node if f and f.node else ''})" if f else ""
