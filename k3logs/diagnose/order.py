"""Which of several findings came first: by time after clock alignment (a kernel's seconds since boot only against
its own file), then a node's own line before a record from outside about it, then the more specific statement (the
signature's priority, the kernel's, one that names its rank), then the triage order."""
from __future__ import annotations

from k3logs.catalogue.signatures import Catalogue

from .detect import outcome_data
from .findings import TIE_SECONDS, Finding
from .outcome import KERNEL_SLACK_S


def seconds(a: Finding, b: Finding) -> float | None:
    if a.ts is None or b.ts is None:
        return None
    return (b.ts - a.ts).total_seconds()


def apart(a: Finding, b: Finding) -> float | None:
    """The fewest seconds between a and b that their clocks allow: a line with no time of its own happened
    anywhere from the time it carries up to the next timed line of its file (`ts_until`)."""
    if a.ts is None or b.ts is None:
        return None
    lo = max(a.ts, b.ts)
    hi = min(a.ts_until or a.ts, b.ts_until or b.ts)
    return max(0.0, (lo - hi).total_seconds())


def sort_key(f: Finding):
    known = f.ts is not None and f.ts_quality != "relative"
    return (0 if known else 1, f.ts.timestamp() if known else 0.0, f.file, f.place)


def first(cands: list[Finding], cat: Catalogue) -> Finding:
    """The earliest; within the same second the more specific (priority), then the triage order."""
    cands = sorted(cands, key=sort_key)
    first = cands[0]
    # untimed lines that state the same failure on one node: neither a file's order (a status dump lists its
    # summary before its events) nor the files' names are a clock, so the more specific statement wins
    untimed = [c for c in cands if c.ts is None and c.uptime is None and c.category == first.category
               and (c.node == first.node or None in (c.node, first.node))]
    if first.ts is None and first.uptime is None:
        tied = untimed
    elif first.ts is None:  # kernel lines with only seconds since boot: simultaneous on the same clock
        tied = [c for c in cands if c.ts is None and c.file == first.file and c.uptime is not None
                and abs(c.uptime - first.uptime) < TIE_SECONDS]
    else:  # (and a more specific untimed statement of the same fault, an event's age, may well be earlier)
        tied = [c for c in cands if c.ts is not None and abs((c.ts - first.ts).total_seconds()) < TIE_SECONDS]
        tied += [c for c in untimed if c.priority > first.priority]
        # the kernel's report of the fault a process states, on that process's node, within the kernel clock's slack
        # (a line with no time of its own came before the next timed line of its file: as late as that; a later
        # line of the first's own file is on its clock, and later)
        until = first.ts_until or first.ts
        tied += [c for c in cands if c.source == "kernel" and not any(c is t for t in tied) and c.file != first.file
                 and c.category == first.category
                 and (c.raised_on or c.node) == (first.raised_on or first.node) and c.ts is not None
                 and -KERNEL_SLACK_S <= (c.ts - first.ts).total_seconds()
                 and (c.ts - until).total_seconds() <= KERNEL_SLACK_S]
    triage = {k: v.triage for k, v in cat.categories.items()}
    # (as specific, the kernel's statement first: the hardware's own report names the device the others only feel;
    # then one that names its rank before a line of another node that names none: the failing process's own line
    # before the copy another node relays of it, and the raiser's own log before the traceback a driver relays)
    ranked = {c.raised_on or c.node for c in tied if c.rank is not None}
    own_logs = {(c.node, c.file) for c in tied if c.raised_on is None}

    # (a record from outside about a node, a cloud's operation on an instance, after that node's own line of the same
    # moment: the machine's own journal is the first witness of what happened to it)
    about = outcome_data().reported_node_fields

    def outside(c: Finding) -> bool:
        return any(c.fields.get(k) for k in about) and any(
            o.node == c.node and not any(o.fields.get(k) for k in about) for o in tied if o is not c)

    def relayed(c: Finding) -> bool:
        if c.raised_on is not None:
            return any(node == c.raised_on and file != c.file for node, file in own_logs)
        return c.rank is None and bool(ranked - {c.node})

    def coarse(c: Finding) -> bool:   # (a copy of a statement stamped in whole seconds, an operator's `dmesg -T`, an
        # event the kubelet posts: it is the same moment as another witness's finer stamp of it in that second)
        return c.ts is not None and c.ts.microsecond == 0 and any(
            o.ts is not None and o.file != c.file and (o.node, o.sig) == (c.node, c.sig)
            and 0 < (o.ts - c.ts).total_seconds() < 1
            for o in tied)

    def twin_names_node(c: Finding) -> bool:   # (of two statements alike in one moment, the one that names its node:
        # a cluster's event about a node before its twin about the node's cloud claim, which names none; untimed, they
        # are alike when only one word, the object, differs)
        return c.node is None and any(
            o.node is not None and o.sig == c.sig and (
                abs(d) < TIE_SECONDS if (d := seconds(o, c)) is not None
                else o.ts is None and c.ts is None and len(set(o.text.split()) ^ set(c.text.split())) <= 2)
            for o in tied)

    return sorted(tied, key=lambda c: (outside(c), -c.priority, c.source != "kernel", relayed(c), coarse(c),
                                       twin_names_node(c), sort_key(c), triage.get(c.category, 99)))[0]
