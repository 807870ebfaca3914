"""A fault stated late: a controller that decides from missed heartbeats (Kubernetes' node controller saying
NotReady: a signature that `lags`) says so once its grace has run out, while the peers of the node it lost have
already failed talking to it. The fault happened no later than the first of those failures (how-it-decides.md)."""
from __future__ import annotations

from k3logs.catalogue.signatures import Catalogue

from .findings import Finding
from .order import seconds, sort_key


def to_first_consequence(findings: list[Finding], cat: Catalogue, peer_node: dict[str, str]) -> None:
    """A statement of a signature that `lags` is placed at the first failure it explains, within its lag before
    it, of its own node or of a connection whose peer address is that node's (the fault's own consequences; a
    failure between other nodes says nothing of it). The findings are put in time order again when one moved."""
    sigs = {s.id: s for s in cat.signatures}
    moved = False
    for g in [f for f in findings if f.sig in sigs and sigs[f.sig].lags and f.role == "cause" and f.node is not None
              and f.ts is not None]:
        sig = sigs[g.sig]
        earlier = [f for f in findings if f is not g and f.role in ("cause", "symptom") and f.category in sig.explains
                   and (f.node == g.node or peer_node.get(f.fields.get("peer") or "") == g.node)
                   and (dt := seconds(f, g)) is not None and 0 < dt <= sig.lags]
        if not earlier:
            continue
        first = min(earlier, key=sort_key)
        g.fields["stated_at"], g.ts, g.ts_until, g.ts_quality = g.ts.isoformat(), first.ts, None, "inferred"
        g.phase = first.phase or g.phase   # (the phase it happened in, not the wind-down its statement came in)
        moved = True
    if moved:
        findings.sort(key=sort_key)


def said_late(root: Finding) -> str:
    """What the reason says of a fault placed at its first consequence."""
    if "stated_at" not in root.fields:
        return ""
    return (f"; stated at {root.fields['stated_at']} by a controller that waits out a grace before it says so, "
            "after its node's peers had failed talking to it: placed at the first of those failures")
