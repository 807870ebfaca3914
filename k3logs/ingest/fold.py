"""Fold multi-line events into one row with a span: Python tracebacks (with their exception chain),
faulthandler dumps, vLLM records continued with '\\r\\n' + prefix, and indented kernel continuation lines.

Headers are found vectorised; the small state machine that strings a traceback together runs in Python
from each header until its traceback ends, so it visits the few rows tracebacks hold (log-formats.md 8)."""
from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import polars as pl
import pyarrow as pa

from k3logs.catalogue.formats import builtin_formats
from k3logs.catalogue.regexes import Regexes
from k3logs.schema import EXC_LINES, LINE, SUB, WRAPPER

INGEST = Regexes("ingest.toml")  # what a traceback's lines look like
MAX_EXC_CONTINUATION = 30
WINDOW = 2000  # rows of its stream after a header that a traceback may span
# inside an exception group (3.11+) every line carries a '|' margin and sub-exceptions are framed by '+---'
GROUP_START = "Exception Group Traceback"

ROLE_START, ROLE_FRAME, ROLE_SEP, ROLE_BLANK, ROLE_OTHER = 1, 2, 3, 4, 0


@lru_cache(maxsize=1)
def _traceback_lines() -> tuple[re.Pattern, re.Pattern, re.Pattern, re.Pattern]:
    """How a traceback's start, chain separator, frame and exception lines look (read per row: bound once)."""
    return (INGEST["traceback_start"], INGEST["traceback_chain_separator"], INGEST["traceback_frame"],
            INGEST["exception_line"])


def _role(text: str, is_start: bool) -> int:
    if is_start:
        return ROLE_START
    _, sep, frame, _ = _traceback_lines()
    if sep.match(text):
        return ROLE_SEP
    if not text.strip():
        return ROLE_BLANK
    return ROLE_FRAME if frame.match(text) else ROLE_OTHER


class _Block:
    """One traceback: its rows, and per exception of the chain the rows stating it (first, then its
    continuation lines)."""

    __slots__ = ("rows", "exc", "fatal", "state", "group", "bare", "held")

    def __init__(self, i: int, fatal: bool, group: bool = False):
        self.rows = [i]
        self.exc: list[list[int]] = [[i]] if fatal else []
        self.fatal = fatal
        self.state = "hdr"
        self.group = group           # inside an exception group: lines are read without their '|' margin
        self.bare: dict[int, str] = {}  # row -> text without the margin
        self.held: list[int] = []    # a blank line after an exception, kept if a chain separator follows

    def text(self, i: int, texts) -> str:
        return self.bare.get(i, texts[i])


def _group_role(text: str) -> tuple[int, str, bool] | None:
    """Role, bare text and 'looks like an exception' of a line inside an exception group (None: not framed)."""
    if INGEST["exception_group_edge"].match(text):
        return ROLE_SEP, text, False
    m = INGEST["exception_group_margin"].match(text)
    if not m:
        return None
    bare = text[m.end():]
    start, sep, frame, exc = _traceback_lines()
    if start.match(bare) or bare.startswith(GROUP_START):
        role = ROLE_START
    elif sep.match(bare):
        role = ROLE_SEP
    elif not bare.strip():
        role = ROLE_BLANK
    elif frame.match(bare):
        role = ROLE_FRAME
    else:
        role = ROLE_OTHER
    return role, bare, bool(exc.match(bare))


def _blocks_in_stream(idx: Sequence[int], starts: list[int], row) -> list[_Block]:
    """String tracebacks together within one process stream: `idx` are its rows in order, `starts` the
    positions in `idx` of header rows, `row(i)` gives a row's (text, source, loc, lt, line, keyed: a record read
    by JSON key, whole on its line, so another line is another record). A row more than WINDOW
    rows of its stream after the latest header is not read (nor any row between a finished traceback and
    the next header)."""
    out: list[_Block] = []
    cur: _Block | None = None
    prev: tuple = ("", "", None, None, None, False)
    heads, latest = set(starts), starts[0]
    exc = INGEST["exception_line"]

    def close() -> None:
        nonlocal cur
        if cur is not None:
            out.append(cur)
        cur = None

    k = starts[0]
    while k < len(idx):
        if cur is None or k - latest > WINDOW:  # on to the next header
            j = bisect_left(starts, k)
            if j == len(starts):
                break
            k = starts[j]
        i, is_start = int(idx[k]), k in heads
        if is_start:
            latest = k
        k += 1
        text, source, loc, lt, line, keyed = row(i)
        role, exc_like = _role(text, is_start), bool(exc.match(text))
        (_, psource, ploc, plt, pline, _), prev = prev, (text, source, loc, lt, line, keyed)
        if cur is not None and cur.group and (g := _group_role(text)) is not None:
            role, text, exc_like = g
            cur.bare[i] = text
        if cur is None:
            if role == ROLE_START:
                cur = _Block(i, text.startswith("Fatal Python error"), GROUP_START in text)
            continue
        if role == ROLE_START:
            chained = cur.state == "sep" or (cur.state == "hdr" and text.startswith("Traceback")
                                            and len(cur.rows) == 1 and not cur.fatal)
            if chained:
                cur.rows.append(i)
                cur.state = "hdr"
                cur.group = cur.group or GROUP_START in text
            else:
                close()
                cur = _Block(i, text.startswith("Fatal Python error"), GROUP_START in text)
        elif role == ROLE_FRAME:
            if cur.state in ("exc", "blank") and not cur.fatal:
                close()
                continue
            cur.rows.append(i)
            cur.state = "frames"
        elif role == ROLE_SEP:
            cur.rows += cur.held + [i]
            cur.held = []
            cur.state = "sep"
        elif role == ROLE_BLANK:
            if cur.state == "exc":
                cur.state = "blank"  # a chain separator may follow
                cur.held = [i]
            elif cur.state in ("frames", "hdr", "sep") or cur.fatal:
                cur.rows.append(i)
            else:
                close()
        else:  # an ordinary line
            if cur.fatal:
                if cur.state == "hdr" or text.startswith(("Python runtime state", "Extension modules")):
                    cur.rows.append(i)
                else:
                    close()
            elif exc_like and (cur.state == "frames" or (
                    # a chained exception made but not raised ('Type: message' with no stack before it)
                    cur.state == "sep" and not cur.group and text.split(" ", 1)[0].endswith(":"))):
                cur.rows.append(i)
                cur.exc.append([i])
                cur.state = "exc"
            elif (cur.state == "exc" and len(cur.exc[-1]) <= MAX_EXC_CONTINUATION
                  and source in ("plain", psource) and (source != "vllm" or (loc, lt) == (ploc, plt))
                  and not (keyed and line != pline)):
                cur.rows.append(i)  # the exception message goes on over several lines (written at once)
                cur.exc[-1].append(i)
            else:
                close()
    close()
    return [b for b in out if b.exc or b.fatal]


class _Rows:
    """A frame's rows as Python tuples, fetched SLICE rows at a time as they are asked for: the state
    machine reads a few rows from each header on (reading a polars Series one element at a time costs
    microseconds each)."""

    SLICE = 256

    def __init__(self, df: pl.DataFrame):
        self.df = df
        self.slices: dict[int, list[tuple]] = {}

    def __getitem__(self, i: int) -> tuple:
        start = i - i % self.SLICE
        if (got := self.slices.get(start)) is None:
            got = self.slices[start] = self.df.slice(start, self.SLICE).rows()
        return got[i - start]

    def column(self, k: int) -> "_Column":
        return _Column(self, k)


class _Column:
    def __init__(self, rows: _Rows, k: int):
        self.rows, self.k = rows, k

    def __getitem__(self, i: int):
        return self.rows[i][self.k]


@lru_cache(maxsize=1)
def _keyed_wrappers() -> frozenset[str]:
    """Wrappers read by JSON key: each line is one whole record (a logger's message and its exception)."""
    return frozenset(n for n, f in builtin_formats().wrappers.items() if f.json_fields)


def fold_tracebacks(df: pl.DataFrame) -> pl.DataFrame:
    """Replace the rows of each traceback by one row: line = its first line, `line_end` its last,
    text = the first exception of the chain, `exc_*` one entry per link."""
    if df.is_empty():
        return df
    is_start = df["text"].str.contains(INGEST["traceback_start"].pattern)
    if not is_start.any():
        return df
    # one stream per process, and per rank: torchrun interleaves the '[rankN]: ' tracebacks of its ranks.
    # A stream is read from its first header on.
    pids, ranks = df["pid"], df["rank"]
    # rows parsed in another batch may have no _line_end (null): they end on their own line
    ends = pl.coalesce("_line_end", LINE) if "_line_end" in df.columns else pl.col(LINE)
    keyed = pl.col(WRAPPER).is_in(list(_keyed_wrappers())).fill_null(False) if WRAPPER in df.columns \
        else pl.lit(False)
    table = _Rows(df.select("text", "source", "loc", "lt", LINE, ends.alias("_end"), keyed.alias("_keyed")))
    texts = table.column(0)

    def row(i: int) -> tuple:
        t = table[i]
        return *t[:5], t[6]

    first_of = pl.DataFrame({"pid": pids, "rank": ranks}).with_row_index("_i").filter(is_start) \
        .unique(["pid", "rank"], keep="first", maintain_order=True)
    blocks: list[_Block] = []
    for first, pid, rank in first_of.iter_rows():
        tail = pl.DataFrame({"pid": pids.slice(first), "rank": ranks.slice(first), "_s": is_start.slice(first)})
        mine = tail.with_row_index("_i", offset=first).filter(
            pl.col("pid").eq_missing(pid) & pl.col("rank").eq_missing(rank))
        # (as an array: the loop reads the few rows from each header on, of a stream that may be the batch)
        blocks += _blocks_in_stream(mine["_i"].to_numpy(), mine["_s"].arg_true().to_list(), row)
    if not blocks:
        return df
    lines, line_end = table.column(4), table.column(5)
    absorbed: list[int] = []
    heads, types, msgs, exc_lines, ends, first_text, frames, scripts = [], [], [], [], [], [], [], []
    frame_func = INGEST["traceback_frame_function"]
    for b in blocks:
        # the stack of the first exception of the chain (the innermost cause), outermost frame first
        if b.fatal:  # faulthandler: the crashed thread's stack, innermost first as printed
            cur_at = next((j for j in b.rows if texts[j].startswith("Current thread")), None)
            stack = [m for j in b.rows if cur_at is not None and j > cur_at and (m := frame_func.match(texts[j]))]
            frames.append([m["fn"] for m in reversed(stack)])
            scripts.append(stack[-1]["file"] if stack else None)
        else:
            # a chained exception's stacks, its last (outermost) first: the first exception's traceback starts at
            # the frame that caught it, the one raised from it ('direct cause', 'during handling') shows the rest
            # of what the process was doing (load_model above a download's requests frames)
            bounds = [-1, *(rows[0] for rows in b.exc)]
            stack = [m for lo, hi in reversed(list(zip(bounds, bounds[1:]))) for j in b.rows
                     if lo < j < hi and (m := frame_func.match(b.text(j, texts)))]
            frames.append([m["fn"] for m in stack])
            scripts.append(stack[0]["file"] if stack else None)
        absorbed += b.rows[1:]
        heads.append(b.rows[0])
        t, m, ln = [], [], []
        for rows in b.exc:
            typ, sep, msg = b.text(rows[0], texts).partition(":")
            if b.fatal or not sep or " " in typ.strip() or not typ.strip():
                typ, msg = "", b.text(rows[0], texts)
            # (one part per line from the first: a part's place is its line's, also where the analysis kept only
            # some of the lines between, so a match in a later part names its own line)
            first = int(lines[rows[0]])
            body = [""] * max((int(lines[j]) - first for j in rows[1:]), default=0)
            body += [""] * (not body and len(rows) > 1)   # (sub-rows of the exception's own line: one part)
            for j in rows[1:]:
                k = max(int(lines[j]) - first - 1, 0)
                body[k] = f"{body[k]} {b.text(j, texts)}".strip() if body[k] else b.text(j, texts)
            msg = "\n".join([msg.strip(), *body]).rstrip()
            t.append(typ.strip())
            m.append(msg)
            ln.append(int(lines[rows[0]]))
        types.append(t)
        msgs.append(m)
        exc_lines.append(ln)
        ends.append(max(int(line_end[j]) for j in b.rows))
        first_text.append(b.text(b.exc[0][0], texts))
    at = pl.Series(heads, dtype=pl.UInt32)
    # a head takes the time and level of the row that states the first exception, where it has none
    exc_at = pl.Series([b.exc[0][0] for b in blocks], dtype=pl.UInt32)
    new = {}
    own = ("lt", "lt_kind", "wt", "wt_kind", "level")
    at_heads, at_exc = df.select(own)[at], df.select(own)[exc_at]
    for c in own:
        lacking = at_heads[c].null_count()
        # (a column is copied only where a head lacks a value its exception's row has)
        if lacking and (filled := at_heads[c].fill_null(at_exc[c])).null_count() < lacking:
            new[c] = df[c].clone().scatter(at, filled)
    new["text"] = df["text"].clone().scatter(at, first_text)
    new["source"] = df["source"].clone().scatter(at, "traceback")
    # the chain's lists, null on every other row: row 0 of `chains` is all null, head k takes row k + 1
    # (built by arrow: polars reads nested Python lists value by value in Python)
    chains = pl.from_arrow(pa.table({"exc_types": pa.array([None, *types], pa.list_(pa.string())),
                                     "exc_messages": pa.array([None, *msgs], pa.list_(pa.string())),
                                     "exc_lines": pa.array([None, *exc_lines], pa.list_(pa.int64())),
                                     "frames": pa.array([None, *frames], pa.list_(pa.string())),
                                     "script": pa.array([None, *scripts], pa.string())}))
    assert isinstance(chains, pl.DataFrame)
    which = np.zeros(df.height, dtype=np.uint32)
    which[heads] = np.arange(1, len(heads) + 1, dtype=np.uint32)
    lists = chains[pl.Series(which)]
    line_end = (df["_line_end"].clone() if "_line_end" in df.columns else
                pl.repeat(None, df.height, dtype=pl.Int64, eager=True).alias("_line_end"))
    keep = np.ones(df.height, dtype=bool)
    keep[absorbed] = False
    return (df.with_columns(**new).hstack(lists)
            .with_columns(line_end.scatter(at, pl.Series(ends, dtype=pl.Int64)))
            .filter(pl.Series(keep)))


def fold_collective_stacks(df: pl.DataFrame) -> pl.DataFrame:
    """torch's watchdog prints the stack of the collective it caught timing out after 'Stack trace of the failed
    collective:', a '#N fn from FILE:LINE' line a frame, innermost first, with no prefix of its own: they are the
    frames of the line that announces them (outermost first, as a traceback's), and it absorbs them."""
    if df.is_empty() or not (head := df["text"].str.contains(INGEST["cpp_stack_start"].pattern)).any():
        return df
    fn = df["text"].str.extract(INGEST["cpp_stack_frame"].pattern, 1)
    # a stack is its head and the frame lines right after it, each on the next line of the file
    nxt = pl.col(LINE) == pl.col(LINE).shift(1) + 1
    runs = df.select(head.alias("_h"), fn.alias("_fn"), nxt.fill_null(False).alias("_n")).with_columns(
        (pl.col("_h") | pl.col("_fn").is_null() | ~pl.col("_n")).cum_sum().alias("_run"))
    first = runs.with_row_index("_i").filter(pl.col("_h")).select("_run", pl.col("_i").alias("_head"))
    mine = runs.with_row_index("_i").join(first, on="_run").filter(~pl.col("_h") & pl.col("_fn").is_not_null())
    if mine.is_empty():
        return df
    stacks = mine.group_by("_head").agg(pl.col("_fn").reverse().alias("_frames"), pl.col("_i").max().alias("_last"))
    at = pl.DataFrame({"_i": pl.int_range(df.height, dtype=pl.UInt32, eager=True)}).join(
        stacks, left_on="_i", right_on="_head", how="left", maintain_order="left")
    end = df[LINE].gather(at["_last"].fill_null(0)).cast(pl.Int64)
    line_end = df["_line_end"] if "_line_end" in df.columns else pl.repeat(None, df.height, dtype=pl.Int64, eager=True)
    keep = np.ones(df.height, dtype=bool)
    keep[mine["_i"].to_numpy()] = False
    frames = pl.coalesce("frames", at["_frames"]) if "frames" in df.columns else pl.lit(at["_frames"])
    out = df.with_columns(frames.alias("frames"), pl.when(at["_last"].is_not_null()).then(end)
                          .otherwise(line_end.cast(pl.Int64)).alias("_line_end"))
    return out.filter(pl.Series(keep))


def fold_continuations(df: pl.DataFrame) -> pl.DataFrame:
    """Join vLLM records split by NewLineFormatter ('\\r' at the end of all but the last line, same
    prefix on each) and kernel records whose continuation lines are indented with no timestamp."""
    if df.is_empty():
        return df
    same_record = (pl.col("cr_end").shift(1).over("pid").fill_null(False)
                   & (pl.col("loc") == pl.col("loc").shift(1).over("pid"))
                   & (pl.col("lt") == pl.col("lt").shift(1).over("pid")))
    indented = pl.col("text").str.contains(INGEST["kernel_continuation"].pattern)
    kernel_cont = ((pl.col("source") == "kernel") & pl.col("lt_kind").is_null()
                   & indented & (pl.col("source").shift(1) == "kernel"))
    # (each kind is looked for only where it can be: most batches have no '\r'-continued or kernel line)
    kinds = [e.fill_null(False) for e, possible in ((same_record, df["cr_end"].any()),
                                                    (kernel_cont, (df["source"] == "kernel").any())) if possible]
    if not kinds:
        return df
    cont = df.select(pl.any_horizontal(kinds).alias("c"))["c"]
    if "exc_types" in df.columns:
        cont = cont & df["exc_types"].is_null()
    if not cont.any():
        return df
    grp_key = "pid_or_kernel"
    df = df.with_columns(pl.lit(cont).alias("_c"),
                         pl.when(pl.col("source") == "kernel").then(pl.lit(-1)).otherwise(pl.col("pid")).alias(grp_key))
    df = df.with_columns((~pl.col("_c")).cast(pl.Int64).cum_sum().over(grp_key).alias("_g"))
    end_col = pl.coalesce("_line_end", LINE) if "_line_end" in df.columns else pl.col(LINE)
    others = [c for c in df.columns if c not in (LINE, "text", "_c", "_g", grp_key, "_line_end")]
    out = (df.with_columns(end_col.alias("_line_end"))
           .group_by(grp_key, "_g", maintain_order=True)
           .agg(pl.col(LINE).first(), pl.col("_line_end").max(), pl.col("text").str.join("\n"),
                *[pl.col(c).first() for c in others])
           .drop(grp_key, "_g"))
    return out.sort([LINE, SUB])


SPAN = 1 << 32   # a file's range of line numbers (in a pack, file k's lines are k * SPAN + line)
DESCENT_SHARE = 3  # a file is newest first when its timed lines go back in time this many times as often as on


def fold(df: pl.DataFrame) -> pl.DataFrame:
    """fold_tracebacks, then fold_continuations, each file in the order its lines were written. A file written
    newest first (a log platform's export: every traceback upside down) is read backwards: its lines are
    numbered from its range's end for the folding, and numbered back after it (a folded row keeps the span of
    its lines)."""
    back = _newest_first(df)
    if back.is_empty():
        return fold_continuations(fold_collective_stacks(fold_tracebacks(df)))
    flipped = _flip(df, back).sort([LINE, SUB])
    out = fold_continuations(fold_collective_stacks(fold_tracebacks(flipped)))
    return _flip(out, back).sort([LINE, SUB])


def _newest_first(df: pl.DataFrame) -> pl.Series:
    """The ranges (line // SPAN) of the files written newest first, by their wrapper's or their line's own times."""
    if "wt" not in df.columns and "lt" not in df.columns:
        return pl.Series("_f", [], dtype=pl.Int64)
    return written_newest_first(df, pl.col(LINE) // SPAN,
                                pl.coalesce([pl.col(k) for k in ("wt", "lt") if k in df.columns]), LINE)


def written_newest_first(df: pl.DataFrame, file: pl.Expr, when: pl.Expr, order: str) -> pl.Series:
    """The files (`file` of the rows) whose timed lines, in their `order`, go back in time DESCENT_SHARE times as
    often as on (a log platform's export: Loki's logcli, Datadog's CSV, a search's hits)."""
    c = pl.col
    timed = df.filter(when.is_not_null()).select(file.alias("_f"), when.alias("_t"), c(order).alias("_o"))
    moves = timed.select("_f", c("_t").diff().over("_f", order_by="_o").alias("_d")).drop_nulls("_d") \
        .group_by("_f").agg((c("_d") < pl.duration(microseconds=0)).sum().alias("_down"),
                            (c("_d") > pl.duration(microseconds=0)).sum().alias("_up"))
    return moves.filter((c("_down") >= 3) & (c("_down") > DESCENT_SHARE * c("_up")))["_f"]


def _flip(df: pl.DataFrame, files: pl.Series) -> pl.DataFrame:
    """The rows of `files` numbered backwards within their range (the span [line, end] becomes [flip(end),
    flip(line)]); the same call numbers them back. A range's line 0 (a pack's row that stands before each file)
    stays first."""
    c = pl.col
    mine = (c(LINE) // SPAN).is_in(files.implode()) & (c(LINE) % SPAN != 0)
    flip = lambda e: (c(LINE) // SPAN) * SPAN + (SPAN - e % SPAN)  # noqa: E731  (the row's range is unchanged)
    end = c("_line_end") if "_line_end" in df.columns else pl.lit(None, pl.Int64)
    cols = [pl.when(mine).then(flip(pl.coalesce(end, c(LINE)))).otherwise(c(LINE)).alias(LINE),
            pl.when(mine & end.is_not_null()).then(flip(c(LINE))).otherwise(end).alias("_line_end")]
    if EXC_LINES in df.columns:
        cols.append(pl.when(mine).then(c(EXC_LINES).list.eval((pl.element() // SPAN) * SPAN
                                                               + (SPAN - pl.element() % SPAN)))
                    .otherwise(c(EXC_LINES)).alias(EXC_LINES))
    return df.with_columns(cols)
