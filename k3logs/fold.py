"""Fold multi-line events into one row with a span: Python tracebacks (with their exception chain),
faulthandler dumps, vLLM records continued with '\\r\\n' + prefix, and indented kernel continuation lines.

Row roles are computed vectorised; the small state machine that strings a traceback together runs in
Python over the rows of the few streams that contain one (log-formats.md 8)."""
from __future__ import annotations

import re

import polars as pl

from .schema import LINE, SUB

START = r"^(?:Traceback \(most recent call last\):|Fatal Python error: |\s*\+ Exception Group Traceback|Exception in thread .*:$|Process [\w.-]+:$)"
FRAME = (r"^(?:\s+File \"|\s{2,}\S|\s*[~^]+\s*$|Thread 0x[0-9a-fA-F]+|Current thread 0x|\s*\[Previous line repeated"
         r"|\s*\|\s|\s*\+[-+]|Extension modules: |Stack \(most recent call first\)|Python runtime state: )")
SEP = r"^(?:During handling of the above exception, another exception occurred:|The above exception was the direct cause of the following exception:)\s*$"
EXC = r"^[A-Za-z_][\w.]*(?::|\s*$)"  # 'ValueError: ...', 'KeyboardInterrupt'
MAX_EXC_CONTINUATION = 30
WINDOW = 2000  # rows of its stream after a header that a traceback may span
FRAME_FUNC = re.compile(r'^\s*File "[^"]*", line \d+,? in (\S+)')
# inside an exception group (3.11+) every line carries a '|' margin and sub-exceptions are framed by '+---'
GROUP_START = "Exception Group Traceback"
GROUP_MARGIN = re.compile(r"^\s*\| ?")
GROUP_EDGE = re.compile(r"^\s*\+[-+]+")
START_RE, SEP_RE, FRAME_RE, EXC_RE = (re.compile(x) for x in (START, SEP, FRAME, EXC))

ROLE_START, ROLE_FRAME, ROLE_SEP, ROLE_BLANK, ROLE_OTHER = 1, 2, 3, 4, 0


def _roles(df: pl.DataFrame) -> pl.Series:
    t = pl.col("text")
    return df.select(
        pl.when(t.str.contains(START)).then(ROLE_START)
        .when(t.str.contains(SEP)).then(ROLE_SEP)
        .when(t.str.strip_chars() == "").then(ROLE_BLANK)
        .when(t.str.contains(FRAME)).then(ROLE_FRAME)
        .otherwise(ROLE_OTHER).cast(pl.Int8).alias("role"))["role"]


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
    if GROUP_EDGE.match(text):
        return ROLE_SEP, text, False
    m = GROUP_MARGIN.match(text)
    if not m:
        return None
    bare = text[m.end():]
    if START_RE.match(bare) or bare.startswith(GROUP_START):
        role = ROLE_START
    elif SEP_RE.match(bare):
        role = ROLE_SEP
    elif not bare.strip():
        role = ROLE_BLANK
    elif FRAME_RE.match(bare):
        role = ROLE_FRAME
    else:
        role = ROLE_OTHER
    return role, bare, bool(EXC_RE.match(bare))


def _blocks_in_stream(idx: list[int], roles: list[int], texts: list[str], sources: list[str],
                      locs: list[str | None], excs: list[bool]) -> list[_Block]:
    """String tracebacks together within one process stream (rows given in order)."""
    out: list[_Block] = []
    cur: _Block | None = None

    def close() -> None:
        nonlocal cur
        if cur is not None:
            out.append(cur)
        cur = None

    for k, i in enumerate(idx):
        role, text, exc_like = roles[k], texts[k], excs[k]
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
            elif cur.state == "frames" and exc_like:
                cur.rows.append(i)
                cur.exc.append([i])
                cur.state = "exc"
            elif (cur.state == "exc" and len(cur.exc[-1]) <= MAX_EXC_CONTINUATION
                  and sources[k] in ("plain", sources[k - 1]) and (sources[k] != "vllm" or locs[k] == locs[k - 1])):
                cur.rows.append(i)  # the exception message goes on over several lines
                cur.exc[-1].append(i)
            else:
                close()
    close()
    return [b for b in out if b.exc or b.fatal]


def fold_tracebacks(df: pl.DataFrame) -> pl.DataFrame:
    """Replace the rows of each traceback by one row: line = its first line, `line_end` its last,
    text = the first exception of the chain, `exc_*` one entry per link."""
    if df.is_empty() or not df["text"].str.contains(START).any():
        return df
    df = df.with_row_index("_i")
    # one stream per process, and per rank: torchrun interleaves the '[rankN]: ' tracebacks of its ranks
    # only the rows that can belong to a traceback: within WINDOW rows of a header in the same stream
    start = pl.col("text").str.contains(START)
    pos = pl.int_range(pl.len()).over("pid", "rank")
    last_start = pl.when(start).then(pos).otherwise(None).forward_fill().over("pid", "rank")
    streams = df.filter((pos - last_start) <= WINDOW)
    streams = streams.with_columns(_roles(streams), pl.col("text").str.contains(EXC).alias("_exc"))
    blocks: list[_Block] = []
    for _, part in streams.group_by("pid", "rank", maintain_order=True):
        blocks += _blocks_in_stream(part["_i"].to_list(), part["role"].to_list(), part["text"].to_list(),
                                    part["source"].to_list(), part["loc"].to_list(), part["_exc"].to_list())
    if not blocks:
        return df.drop("_i")
    texts = df["text"]
    lines = df[LINE]
    # rows parsed in another batch may have no _line_end (null): they end on their own line
    line_end = df.select(pl.coalesce("_line_end", LINE)).to_series() if "_line_end" in df.columns else lines
    absorbed: list[int] = []
    heads, types, msgs, exc_lines, ends, first_text, frames = [], [], [], [], [], [], []
    for b in blocks:
        # the stack of the first exception of the chain (the innermost cause), outermost frame first
        if b.fatal:  # faulthandler: the crashed thread's stack, innermost first as printed
            cur_at = next((j for j in b.rows if texts[j].startswith("Current thread")), None)
            stack = [m.group(1) for j in b.rows if cur_at is not None and j > cur_at
                     and (m := FRAME_FUNC.match(texts[j]))]
            frames.append(stack[::-1])
        else:
            upto = b.exc[0][0]
            frames.append([m.group(1) for j in b.rows if j < upto and (m := FRAME_FUNC.match(b.text(j, texts)))])
        absorbed += b.rows[1:]
        heads.append(b.rows[0])
        t, m, ln = [], [], []
        for rows in b.exc:
            typ, sep, msg = b.text(rows[0], texts).partition(":")
            if b.fatal or not sep or " " in typ.strip() or not typ.strip():
                typ, msg = "", b.text(rows[0], texts)
            msg = "\n".join([msg.strip(), *(b.text(j, texts) for j in rows[1:] if b.text(j, texts).strip())]).strip()
            t.append(typ.strip())
            m.append(msg)
            ln.append(int(lines[rows[0]]))
        types.append(t)
        msgs.append(m)
        exc_lines.append(ln)
        ends.append(max(int(line_end[j]) for j in b.rows))
        first_text.append(b.text(b.exc[0][0], texts))
    info = pl.DataFrame({
        "_i": pl.Series(heads, dtype=pl.UInt32),
        "_ftext": first_text, "_fend": pl.Series(ends, dtype=pl.Int64),
        "exc_types": pl.Series(types, dtype=pl.List(pl.String)),
        "exc_messages": pl.Series(msgs, dtype=pl.List(pl.String)),
        "exc_lines": pl.Series(exc_lines, dtype=pl.List(pl.Int64)),
        "frames": pl.Series(frames, dtype=pl.List(pl.String)),
        "_exc_row": pl.Series([b.exc[0][0] for b in blocks], dtype=pl.UInt32),
    })
    # time, level and pid of the row that states the first exception
    exc_rows = df.select("_i", "lt", "lt_kind", "wt", "wt_kind", "level").rename(
        {"_i": "_exc_row", "lt": "_elt", "lt_kind": "_elk", "wt": "_ewt", "wt_kind": "_ewk", "level": "_elevel"})
    info = info.join(exc_rows, on="_exc_row", how="left")
    out = (df.filter(~pl.col("_i").is_in(pl.Series(absorbed, dtype=pl.UInt32).implode()))
           .join(info, on="_i", how="left")
           .with_columns(
               pl.when(pl.col("_ftext").is_not_null()).then(pl.col("_ftext")).otherwise(pl.col("text")).alias("text"),
               pl.when(pl.col("_ftext").is_not_null()).then(pl.lit("traceback")).otherwise(pl.col("source")).alias("source"),
               pl.coalesce(pl.col("_fend"), *([pl.col("_line_end")] if "_line_end" in df.columns else [])).alias("_line_end"),
               pl.coalesce("lt", "_elt").alias("lt"), pl.coalesce("lt_kind", "_elk").alias("lt_kind"),
               pl.coalesce("wt", "_ewt").alias("wt"), pl.coalesce("wt_kind", "_ewk").alias("wt_kind"),
               pl.coalesce("level", "_elevel").alias("level"),
           ))
    return out.drop("_i", "_ftext", "_fend", "_exc_row", "_elt", "_elk", "_ewt", "_ewk", "_elevel").sort([LINE, SUB])


def fold_continuations(df: pl.DataFrame) -> pl.DataFrame:
    """Join vLLM records split by NewLineFormatter ('\\r' at the end of all but the last line, same
    prefix on each) and kernel records whose continuation lines are indented with no timestamp."""
    if df.is_empty():
        return df
    same_record = (pl.col("cr_end").shift(1).over("pid").fill_null(False)
                   & (pl.col("loc") == pl.col("loc").shift(1).over("pid"))
                   & (pl.col("lt") == pl.col("lt").shift(1).over("pid")))
    kernel_cont = ((pl.col("source") == "kernel") & pl.col("lt_kind").is_null()
                   & pl.col("text").str.contains(r"^\s+\S") & (pl.col("source").shift(1) == "kernel"))
    cont = df.select((same_record.fill_null(False) | kernel_cont.fill_null(False)).alias("c"))["c"]
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
