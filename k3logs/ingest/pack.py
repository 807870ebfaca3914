"""Tiny files read together: a pack of files under TINY_BYTES goes through parsing as one batch (each polars query has
a fixed cost), its line numbers kept apart by file (file * FILE + line)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from k3logs.catalogue.formats import Formats
from k3logs.schema import LINE, SUB, TRUNCATED

from .fold import SPAN, fold
from .keep import Keep, anchored, kept_rows
from .lines import LineStats, split_lines
from .parse import FileContext, parse_batch

TINY_BYTES = 256 << 10  # a file this small goes through the analysis in a pack of such files (see Pack)
PACK_FILES = 8192      # files in a pack at most (and batch_bytes of them)
FILE = SPAN            # in a pack, line numbers are file * FILE + line (files apart, in order)


class Pack:
    """Small files analysed together: their lines split, searched for anchors, kept, parsed and folded in
    one go, not one polars call of each kind per file (a fixed cost of about 3 ms a file: 100,000 tiny
    files took five minutes). Each file is one batch of its own, as it would be alone: lines are numbered
    in it, the keep filter's context stops at its ends, and a file's rows are told apart from the others'
    where they could meet (a partial record, a traceback's stream, a continued record; see fold_rows)."""

    def __init__(self) -> None:
        self.keys: list = []
        self.items: list[tuple[FileContext, LineStats, bytes, bool]] = []
        self.size = 0

    def add(self, key, ctx: FileContext, stats: LineStats, data: bytes, cut: bool) -> None:
        self.keys.append(key)
        self.items.append((ctx, stats, data, cut))
        self.size += len(data)

    def rows(self, keep: Keep, formats: Formats, max_line: int) -> pl.DataFrame | None:
        """The kept rows of every file, parsed and folded, in file order, `_k` the file's index in `keys`
        (None: no file has a line worth parsing). Fills each file's LineStats."""
        texts = [d if d.endswith(b"\n") else d + b"\n" for _, _, d, _ in self.items if d]
        which = [k for k, (_, _, d, _) in enumerate(self.items) if d]
        if not texts:
            return None
        counts = np.array([t.count(b"\n") for t in texts], dtype=np.int64)
        raw, trunc = split_lines(b"".join(texts), max_line)
        ends = np.cumsum(counts)  # each file's rows: [ends - counts, ends)
        starts = ends - counts
        cut = [k for k, (_, _, d, c) in enumerate(self.items) if c and d and not d.endswith(b"\n")]
        if cut:  # the last line of a file whose data ended early (damage, a limit) was cut short
            at = {k: i for i, k in enumerate(which)}
            trunc = trunc.scatter([int(ends[at[k]]) - 1 for k in cut], True)
        per_file = np.add.reduceat(trunc.to_numpy().astype(np.int64), starts) if len(trunc) else counts * 0
        for i, k in enumerate(which):
            _, stats, data, c = self.items[k]
            stats.lines, stats.bytes = int(counts[i]), len(data)
            stats.truncated, stats.cut = int(per_file[i]), int(c and not data.endswith(b"\n"))
            stats.unended = int(not c and not data.endswith(b"\n"))
        hits = anchored(raw, keep).to_numpy().astype(np.int64)
        if not len(hits):
            return None
        kept = kept_rows(raw, hits, np.searchsorted(ends, hits, side="right"), starts, ends)
        file_at = np.repeat(np.array(which, dtype=np.int64), counts)[kept]
        local = kept - starts[np.searchsorted(ends, kept, side="right")] + 1
        batch = pl.DataFrame({LINE: file_at * FILE + local, "raw": raw.gather(kept), TRUNCATED: trunc.gather(kept)})
        return fold_rows(self._parse(batch, file_at, formats)).drop("_pid0")

    def _parse(self, batch: pl.DataFrame, file_at: np.ndarray, formats: Formats) -> pl.DataFrame:
        """parse_batch once per kind of file (FileContext less the path) among the files with kept rows."""
        groups: dict[FileContext, list[int]] = {}
        for k in np.unique(file_at).tolist():
            groups.setdefault(replace(self.items[k][0], file=""), []).append(k)
        parts = []
        for ks in groups.values():
            ctx = self.items[ks[0]][0]
            rows = batch if len(groups) == 1 else batch.filter(pl.Series(np.isin(file_at, ks)))
            parsed = parse_batch(rows, ctx, formats)
            if "_line_end" in parsed.columns and (parsed.select(
                    (pl.col("_line_end") // FILE != pl.col(LINE) // FILE).any()).item()):
                # a partial record (CRI 'P', a Docker chunk) was joined with the next file's: each file alone
                parsed = pl.concat([parse_batch(rows.filter(pl.col(LINE) // FILE == k), ctx, formats)
                                    for k in ks], how="diagonal_relaxed")
            parts.append(parsed)
        return parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed").sort([LINE, SUB])


def fold_rows(rows: pl.DataFrame) -> pl.DataFrame:
    """fold_tracebacks and fold_continuations over a pack's rows (lines numbered (file << 32) + line), each
    file on its own: a traceback's or a continued record's stream is a process (pid) of one file here, and a
    row of no file stands before each file (a kernel continuation line goes on the row before it). Returns
    the rows with lines as the file numbers them, `_k` the file and `_pid0` (dropped by the caller)."""
    file = pl.col(LINE) // FILE
    rows = rows.with_columns(pl.col("pid").alias("_pid0"), pl.concat_str(
        file.cast(pl.String), pl.col("pid").cast(pl.String).fill_null("-"), separator=":").rank("dense")
        .cast(pl.Int64).alias("pid"))
    firsts = rows.select(file.unique(maintain_order=True).alias("_f"))["_f"]
    top = rows["pid"].max() or 0
    barrier = pl.DataFrame({LINE: firsts * FILE, SUB: pl.repeat(0, len(firsts), dtype=pl.Int8, eager=True),
                            "text": pl.repeat("", len(firsts), eager=True), "source": pl.repeat(
                                "plain", len(firsts), eager=True), "cr_end": pl.repeat(False, len(firsts), eager=True),
                            "pid": pl.int_range(top + 1, top + 1 + len(firsts), dtype=pl.Int64, eager=True)})
    both = pl.concat([rows, barrier.cast({c: rows.schema[c] for c in barrier.columns})],
                     how="diagonal_relaxed").sort([LINE, SUB])
    out = fold(both).filter(pl.col(LINE) % FILE != 0)
    local = [(pl.col(c) % FILE).alias(c) for c in (LINE, "_line_end") if c in out.columns]
    if "exc_lines" in out.columns:
        local.append(pl.col("exc_lines").list.eval(pl.element() % FILE))
    return out.with_columns(pl.col("_pid0").alias("pid"), file.alias("_k"), *local)
