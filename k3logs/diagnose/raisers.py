"""Which process raised what a traceback shows, where the line that prints it is another's: a driver relaying what a
Ray actor raised (its header names the actor's pid and ip), or an exception whose message, lines below it, names the
node its process runs on (Ray's version check: 'This process on node IP was started with:')."""
from __future__ import annotations

import polars as pl

from k3logs.catalogue.landmarks import decision_line

from .attribution import Attribution, Read, died_actors

MESSAGE_LINES = 8   # how far below its exception's line a message may name its process's node


def learn_raisers(ev: pl.DataFrame, reads: dict[str, list[Read]], a: Attribution) -> None:
    """a.raised_by: (file, line) -> (node, rank) of the process that raised what the line shows."""
    for key, (ip, pid) in _remote_raises(ev, reads["remote_raise"]).items():
        own = ev.filter((pl.col("pid") == pid) & (pl.col("ip") == ip) & pl.col("node").is_not_null())["node"]
        if own.len():   # (the node its own relayed lines (pid, ip) are on)
            a.raised_by[key] = (own[0], a.pid_rank.get((own[0], pid)))
    for key, (ip, pid) in died_actors(ev).items():   # (the actor an ActorDiedError is about: on its node, its rank)
        if (node := a.ip_node.get(ip)) and key not in a.raised_by:
            a.raised_by[key] = (node, a.pid_rank.get((node, pid)))
    for key, ip in _message_nodes(ev, reads["message_node"]).items():
        if (node := a.ip_node.get(ip)) and key not in a.raised_by:
            a.raised_by[key] = (node, None)


def _remote_raises(ev: pl.DataFrame, reads: list[Read]) -> dict[tuple[str, int], tuple[str, int]]:
    """(file, line) -> (ip, pid) of the actor that raised what a relayed traceback shows: from its header line to the
    exception's own line, over the lines the relaying process printed (its pid)."""
    out: dict[tuple[str, int], tuple[str, int]] = {}
    for r in reads:
        head = ev.filter((pl.col("file") == r.file) & (pl.col("line") == r.line))
        pid = head["pid"][0] if head.height else None
        rows = ev.filter((pl.col("file") == r.file) & (pl.col("line") >= r.line)
                         & (pl.col("pid") == pid if pid is not None else pl.col("pid").is_null())).sort("line")
        ends = rows.filter((pl.col("line") > r.line) & pl.col("text").str.contains(decision_line("exception_line")))
        last = ends["line"][0] if ends.height else r.line
        for line in rows.filter(pl.col("line") <= last)["line"].to_list():
            out[(r.file, line)] = (r.g["ip"], int(r.g["pid"]))
    return out


def _message_nodes(ev: pl.DataFrame, reads: list[Read]) -> dict[tuple[str, int], str]:
    """(file, line) -> the address of the node whose process raised the exception a message line names it in: from
    the nearest exception line above it (within MESSAGE_LINES) down to it."""
    out: dict[tuple[str, int], str] = {}
    for r in reads:
        above = ev.filter((pl.col("file") == r.file) & pl.col("line").is_between(r.line - MESSAGE_LINES, r.line - 1)
                          & pl.col("text").str.contains(decision_line("exception_line")))
        if above.height:
            for line in range(above["line"].max(), r.line + 1):
                out[(r.file, line)] = r.g["ip"]
    return out
