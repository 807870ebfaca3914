"""Which lines analyze keeps (Keep): those that hold a literal of a signature, a landmark or a witness, and a
traceback's frames around its header; the rest is counted, not parsed."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import polars as pl

TB_HEAD = (r"Traceback \(most recent call last\)|Fatal Python error: |^Process [\w.-]+:$|Exception in thread "
           r"|Stack trace of the failed collective:")
# lines of a traceback (frames, code, markers, chain separators, the exception): kept after a header (indented:
# also as a JSON string writes a tab, in a container runtime's record: '"log":"\t', '[core.py:710] \t')
TB_BODY = (r'File "|^\s|\]\s(?:\s|\\t)+\S|:"(?:\s|\\t)|Traceback|During handling|The above exception|Error|Exception'
           r"|Exit|Interrupt|Fatal|Thread 0x|Current thread|\^\^|~~|^\S*$|#\d+ \S+ from \S")
EARLY_TIME = r"^.{0,80}?\d\d:\d\d:\d\d"  # a time of day near the start of a line
TB_WINDOW = 400  # lines kept after a traceback header (its frames and exception), and before it: a log platform's
# export written newest first has its tracebacks upside down
LOOKBACK = 64  # rows searched back from a kept row with no time for the row that times it (a copy tool's summary
# of tens of untimed lines may stand between a job's timed banner and the error it reports)
# below this many lines the anchors are searched by Aho-Corasick: the one regex's lazy DFA pays about 20 ms of
# warm-up in every query, which is most of a small batch's cost (on 8 MB batches the regex is faster)
FEW_LINES = 20_000


@dataclass(frozen=True)
class Keep:
    """Which raw lines to parse: those containing one of `anchors` (plus their context), or one of `folded` in
    any case, except the lines `quoted` matches (user data: a logged prompt is nothing the diagnosis reads,
    and keeping one line a request would make memory grow with the requests); None = all."""

    anchors: tuple[str, ...]
    quoted: str = ""
    folded: tuple[str, ...] = ()

    @functools.cached_property  # built once, not once per file (bundles may hold thousands of files)
    def regex(self) -> str:
        exact = "|".join(re.escape(a) for a in sorted(set(self.anchors)))
        folded = "|".join(re.escape(a) for a in sorted(set(self.folded)))
        return f"{exact}|(?i:{folded})" if folded else exact

    @functools.cached_property
    def literal_sets(self) -> tuple[list[str], list[str]] | None:
        """The exact and the folded anchors for an Aho-Corasick search, which folds ASCII only (None when a
        folded anchor is not ASCII)."""
        if not all(a.isascii() for a in self.folded):
            return None
        return sorted(set(self.anchors)), sorted(set(self.folded))


class KeepState:
    """What the keep filter carries from one batch of a file to the next."""

    def __init__(self) -> None:
        self.since_tb = TB_WINDOW + 1
        self.tail: pl.DataFrame | None = None  # the batch before's last LOOKBACK rows (copied out)
        self.last_kept = 0  # the last line kept so far


def anchored(raw: pl.Series, keep: Keep) -> pl.Series:
    """Indices of the lines of `raw` that hold an anchor and are no user data: the one pass over every line
    (any thread)."""
    if len(raw) < FEW_LINES and keep.literal_sets:
        exact, folded = keep.literal_sets
        found = raw.str.contains_any(exact)
        if folded:
            found = found | raw.str.contains_any(folded, ascii_case_insensitive=True)
        hits = found.arg_true()
    else:
        hits = raw.str.contains(keep.regex).arg_true()
    if keep.quoted and len(hits):
        hits = hits.filter(~raw.gather(hits).str.contains(keep.quoted))
    return hits


def elide_user_data(events: pl.DataFrame, quoted: str) -> pl.DataFrame:
    """The events with the user data cut from the lines that quote it (a logged prompt kept as the line before an
    untimed hit, or as the row that times one): the line keeps its time, its place and the words that say it
    quotes a request, and no kilobytes of prompt reach the signatures or the report."""
    if not quoted or events.is_empty():
        return events
    text = pl.col("text")
    cut = text.str.replace(f"(?s)^(.*?(?:{quoted})).+", "${1} [user data elided]")
    return events.with_columns(pl.when(text.str.contains(quoted)).then(cut).otherwise(text).alias("text"))


def keep_rows(batch: pl.DataFrame, keep: Keep, state: KeepState, hit_idx: pl.Series | None = None
               ) -> tuple[pl.Series, int, int]:
    """Indices (sorted) of the rows of `batch` worth parsing: those with an anchor (`hit_idx`, if found
    already) plus their context; the context works on the few rows with an anchor, in file order. Also how
    many of the last rows of the batch before are context too (lines before an untimed hit that opens it), and
    among how many of its last rows the last one with a time of day times a row of this batch (0: none)."""
    raw = batch["raw"]
    n = len(raw)
    hit_idx = anchored(raw, keep) if hit_idx is None else hit_idx
    hits = raw.gather(hit_idx)
    parts = [hit_idx]
    # rows within TB_WINDOW around a traceback header (also one still open from the previous batch) that
    # look like part of a traceback; headers are among the hits ("Traceback" is an anchor)
    starts = hit_idx.filter(hits.str.contains(TB_HEAD)).to_list()
    spans = [(0, TB_WINDOW - state.since_tb)] if state.since_tb <= TB_WINDOW else []
    spans += [(max(0, st - TB_WINDOW), st + TB_WINDOW) for st in starts]
    state.since_tb = n - starts[-1] if starts else state.since_tb + n
    if spans:
        window = pl.concat([pl.int_range(lo, min(hi, n - 1) + 1, dtype=pl.UInt32, eager=True)
                            for lo, hi in spans]).unique()
        parts.append(window.filter(raw.gather(window).str.contains(TB_BODY)))
    # the two lines before a kept line that carries no time of its own (kernel continuation lines, NCCL
    # lines): the record it continues, and a time for it
    untimed = hit_idx.filter(~hits.str.contains(EARLY_TIME)).cast(pl.Int64)
    back = 0
    if len(untimed):
        parts += [(untimed - 1).clip(0).cast(pl.UInt32), (untimed - 2).clip(0).cast(pl.UInt32)]
        back = max(0, 2 - int(untimed.min()))
    kept = pl.concat(parts).unique().sort().to_numpy().astype(np.int64)
    timing, open_rows = _timing_rows(raw, kept, np.zeros(len(kept), dtype=np.int64))
    # (the row that times one of the first rows may be one of the batch before's last)
    timer = LOOKBACK - int(open_rows.min()) if len(open_rows) else 0
    return pl.Series(np.union1d(kept, timing), dtype=pl.UInt32), back, timer


def carried(tail: pl.DataFrame | None, back: int, timer: int) -> list[pl.DataFrame]:
    """The rows of the batch before that this one keeps (keep_rows' `back` and `timer`)."""
    if tail is None:
        return []
    out = [tail.tail(back)] if back else []
    if timer and (timed := tail.tail(timer).filter(pl.col("raw").str.contains(EARLY_TIME))).height:
        out.append(timed.tail(1))
    return out


def _timing_rows(raw: pl.Series, kept: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each kept row with no time of day of its own, the nearest row before it (at most LOOKBACK back, not
    before `first`, its file's first row) that has one: the row the parser times it from, as it would if every
    row were read (a context line two rows before an untimed hit may itself have none). Also the untimed rows
    whose search reached `first` with no such row (in a batch: the batch before may hold it)."""
    none = np.zeros(0, dtype=np.int64)
    untimed = ~raw.gather(kept).str.contains(EARLY_TIME).to_numpy() if len(kept) else np.zeros(0, dtype=bool)
    rows, first = kept[untimed], first[untimed]
    if not len(rows):
        return none, none
    cand = rows[:, None] - np.arange(1, LOOKBACK + 1)[None, :]
    flat = np.unique(cand[cand >= first[:, None]])
    timed = flat[raw.gather(flat).str.contains(EARLY_TIME).to_numpy()] if len(flat) else none
    j = np.searchsorted(timed, rows) - 1
    near = timed[np.clip(j, 0, None)] if len(timed) else np.full(len(rows), -1)
    found = (j >= 0) & (near >= first) & (near >= rows - LOOKBACK)
    return np.unique(near[found]), rows[~found & (rows - LOOKBACK < first)]


def kept_rows(raw: pl.Series, hits: np.ndarray, hit_file: np.ndarray, starts: np.ndarray, ends: np.ndarray
               ) -> np.ndarray:
    """keep_rows over many files at once, each a whole file read in one batch (so nothing is carried from a
    batch before): the rows with an anchor, the traceback body within TB_WINDOW around a header (within its
    file) and the two rows before an untimed hit (from the file's start)."""
    hit_raw = raw.gather(hits)
    timed = hit_raw.str.contains(EARLY_TIME).to_numpy()
    parts = [hits]
    heads = hits[hit_raw.str.contains(TB_HEAD).to_numpy()]
    if len(heads):
        file_of = np.searchsorted(ends, heads, side="right")
        first = np.maximum(heads - TB_WINDOW, starts[file_of])
        last = np.minimum(heads + TB_WINDOW, ends[file_of] - 1)
        lens = last - first + 1
        window = np.unique(np.repeat(first - np.cumsum(lens) + lens, lens) + np.arange(lens.sum()))
        parts.append(window[raw.gather(window).str.contains(TB_BODY).to_numpy()])
    untimed = hits[~timed]
    if len(untimed):
        first = starts[hit_file[~timed]]
        parts += [np.maximum(untimed - 1, first), np.maximum(untimed - 2, first)]
    kept = np.unique(np.concatenate(parts)).astype(np.int64)
    return np.union1d(kept, _timing_rows(raw, kept, starts[np.searchsorted(ends, kept, side="right")])[0])
