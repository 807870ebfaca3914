"""A wait for peers that never came covers the whole wait: the failure that kept a peer away may be stated after
the waiter gave up (a pod in a crash loop keeps only its last attempts' logs), yet its start lay inside the wait."""
from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING

import polars as pl

from k3logs.catalogue.landmarks import decision_line
from k3logs.catalogue.signatures import Catalogue
from k3logs.schema import PHASES

from .findings import Finding
from .order import first

if TYPE_CHECKING:
    from .outcome import Lifecycle

JOINED = [p for p in PHASES[PHASES.index("distributed_init"):] if p != "shutdown"]   # (its landmarks: it had joined)


def waited_for(root: Finding, findings: list[Finding], life: Lifecycle, ev: pl.DataFrame,
               cat: Catalogue) -> Finding:
    """The failure why the peers a timed-out wait names as missing never joined, else `root`: on another node, in
    a start of its process that began within the wait and had not joined (no landmark of the distributed init or
    after it, in its file, since that start), whenever it is stated."""
    m = re.search(decision_line("waiting_for_peers"), root.text or "")
    if m is None or root.ts is None or int(m["joined"]) >= int(m["total"]):
        return root
    began = root.ts - timedelta(seconds=int(m["secs"]))
    joined = ev.filter(pl.col("mark").is_in(JOINED) & pl.col("ts").is_not_null()).select("file", "ts")

    def kept_away(g: Finding) -> bool:
        start = life.started_before(g)
        return start is not None and began <= start <= root.ts and joined.filter(
            (pl.col("file") == g.file) & pl.col("ts").is_between(start, g.ts)).is_empty()
    why = [g for g in findings if g.role == "cause" and g.set_aside is None and g.node not in (None, root.node)
           and g.ts is not None and g.ts >= began and kept_away(g)]
    if not why:
        return root
    g = first(why, cat)
    # (a process that never joined lives a lifecycle of its own: the waiter's stop is not its phase)
    start = life.started_before(g)
    own = ev.filter((pl.col("file") == g.file) & pl.col("ts").is_between(start, g.ts) & pl.col("mark").is_in(PHASES)
                    & (pl.col("mark") != "shutdown"))["mark"].to_list()
    g.phase = max(own, key=PHASES.index, default=PHASES[0])
    return g
