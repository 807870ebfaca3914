"""What the report is made from: every stage's output for one bundle (pipeline.run makes it)."""
from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from k3logs.acceptance.judge import Acceptance
from k3logs.catalogue.signatures import Catalogue
from k3logs.diagnose.attribution import Attribution
from k3logs.diagnose.clock import ClockModel, ClockReport
from k3logs.diagnose.findings import Decision
from k3logs.facts.checks import Check
from k3logs.facts.extract import Fact
from k3logs.ingest.discover import Bundle
from k3logs.ingest.stream import Ingested


@dataclass
class Analysis:
    """Everything the stages produced, for the report and for `events`."""

    bundle: Bundle
    ingested: Ingested
    events: pl.DataFrame          # attributed, aligned, phased; internal columns included
    detections: pl.DataFrame
    attribution: Attribution
    clock: ClockReport
    clock_model: ClockModel
    facts: list[Fact]
    checks: list[Check]
    decision: Decision
    catalogue: Catalogue
    missing: list[str] = field(default_factory=list)   # nodes and ranks of the deployment the bundle lacks
    acceptance: Acceptance | None = None   # the acceptance stage's sections (pipeline.run sets it)
