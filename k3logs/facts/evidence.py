"""The evidence an incident record must hold (patterns/facts.toml [[evidence]]) that a bundle lacks, named for people."""
from __future__ import annotations

from .data import FactsData, default_facts_data
from .util import Fact


def evidence_missing(facts: list[Fact], kinds_present: set[str], has_traceback: bool,
                     data: FactsData | None = None) -> list[str]:
    """Human names of the evidence an incident record must hold that the bundle lacks, in the facts' order."""
    data = data or default_facts_data()
    names = {f.name for f in facts}
    out = []
    for item in data.evidence:
        tests = []
        if item.any_fact:
            tests.append(any(n in names for n in item.any_fact))
        if item.any_kind:
            tests.append(any(k in kinds_present for k in item.any_kind))
        if item.fact_prefix:
            tests.append(any(n.startswith(p) for n in names for p in item.fact_prefix))
        if item.traceback:
            tests.append(has_traceback)
        if item.node:
            tests.append(any(f.node for f in facts))
        present = all(n in names for n in item.all_fact) and (any(tests) if tests else True)
        if not present:
            out.append(item.title)
    return out
