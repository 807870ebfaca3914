"""A failure of an earlier run is not the incident's when the deployment was started again and failed otherwise: a
bundle that holds yesterday's failed job and today's (one output file appended to by every job, a journal of many
starts) is about the last run, unless what failed first explains what failed last (how-it-decides.md)."""
from __future__ import annotations

import numpy as np
import polars as pl

from k3logs.catalogue.signatures import Signature

from .findings import Finding
from .order import sort_key

# the deployment logged nothing for this long: it was down, and what follows is another run (an orchestrator
# restarts a crash loop within minutes; a job submitted again, a service started by hand the next day, far later)
RUN_GAP_S = 1800


def earlier_runs(findings: list[Finding], life, sigs: dict[str, Signature], ev: pl.DataFrame) -> None:
    """Set aside a cause whose node started again after it when a later run failed with a cause of another category
    that it does not explain, and no later run repeats its category on its node (a crash loop fails the same way
    each time: its first is the cause). A later run begins after a silence of the whole deployment of RUN_GAP_S, or
    where its node, having never become ready, started with other arguments and became ready (a fix that worked)."""
    causes = [f for f in findings if f.role == "cause" and f.set_aside is None and f.ts is not None and f.node]
    if len(causes) < 2:
        return
    times = ev.filter(pl.col("file").is_in(list(life.app_files)))["ts"].drop_nulls().sort()
    if times.len() < 2:
        return
    at = times.to_numpy()
    gaps = np.nonzero(np.diff(at) > np.timedelta64(RUN_GAP_S, "s"))[0]
    resumed = [times[int(i) + 1] for i in gaps]   # the first line of each run after a silence
    fixed = life.fixed_starts()
    for f in sorted(causes, key=sort_key):
        mine = life.attempt_of(f)
        refixed = [t for t in fixed.get(f.node, ()) if t > f.ts] if (f.node, mine) not in life.ready else []
        run_after = min([t for t in resumed if t > f.ts] + refixed, default=None)
        if run_after is None or mine is None or f.set_aside is not None \
                or (life.attempt_at(f.node, times[-1]) or 0) <= mine:   # (its node never started again)
            continue
        later = [g for g in causes if g.ts >= run_after and g.set_aside is None and g.explained_by is None]
        if any(g.category == f.category and g.node == f.node for g in later):
            continue
        explains = set(sigs[f.sig].explains) if f.sig in sigs else set()
        other = next((g for g in later if g.category != f.category and g.category not in explains), None)
        if other is not None:
            f.set_aside = (f"an earlier run's failure: the deployment was started again after it and failed otherwise "
                           f"({other.file}:{other.line})")
