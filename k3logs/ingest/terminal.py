"""What a terminal did to a line, undone: ANSI colours stripped, a progress bar redrawn with carriage returns collapsed
to its last state, a tqdm bar glued to the next line split off, a line the container runtime cut in parts joined."""
from __future__ import annotations

import polars as pl

from k3logs.catalogue.regexes import Regexes
from k3logs.schema import LINE, SUB, TRUNCATED

INGEST = Regexes("ingest.toml")  # ansi_escape, tqdm_state, tqdm_glued, progress_prefix_only, syslog_escaped_control
TQDM_MARKS = ["\r", "/s]", "/it]"]  # a line with none has no tqdm state to collapse or split
COLOURED = pl.col("text").str.contains("\x1b", literal=True).fill_null(False)
MARKED = pl.col("text").str.contains_any(TQDM_MARKS)


def join_partials(df: pl.DataFrame) -> pl.DataFrame:
    """Re-join records the runtime split (CRI 'P' tags, Docker chunks without a newline): a partial record
    goes on in the next record of the same stream (the other stream's records may come in between)."""
    if not df["partial"].any():  # (nulls are not partial)
        return df
    grp = (~pl.col("partial").fill_null(False)).shift(1, fill_value=True).cum_sum().over("stream").alias("_g")
    firsts = [c for c in df.columns if c not in ("text", TRUNCATED, "partial", LINE, "stream")]
    return (df.with_columns(grp)
            .group_by("stream", "_g", maintain_order=True)
            .agg(pl.col(LINE).first(), pl.col(LINE).last().alias("_line_end"), pl.col("text").str.join(""),
                 pl.col(TRUNCATED).any(), pl.col("partial").last(), *[pl.col(c).first() for c in firsts])
            .drop("_g").sort(LINE))


def coloured_rows(df: pl.DataFrame) -> pl.Series:
    return df.select(COLOURED).to_series()  # (a built expression: a Series method builds one each call)


def syslog_controls(df: pl.DataFrame) -> pl.DataFrame:
    """Control characters rsyslog wrote as '#033' (ESC) and '#015' (CR) back to themselves: colour codes and
    progress bars then read as they were printed."""
    rx = INGEST["syslog_escaped_control"].pattern
    if not df["text"].str.contains(rx).any():
        return df
    return df.with_columns(pl.col("text").str.replace_all("#033[", "\x1b[", literal=True)
                           .str.replace_all("#015", "\r", literal=True))


def echoed_controls(df: pl.DataFrame) -> pl.DataFrame:
    """A terminal's echo of a control key typed over the output ('^C' before the line the interrupt made the
    server print) is a row of its own, before that line's (the operator's keystroke: a stop asked for)."""
    echo_rx = INGEST["echoed_control"].pattern
    echoed = df.select(pl.col("text").str.starts_with("^").fill_null(False)
                       & pl.col("text").str.contains(echo_rx).fill_null(False)
                       & pl.col("text").str.replace(echo_rx, "").str.len_bytes().gt(0)).to_series()
    if not echoed.any():
        return df
    glued = df.filter(echoed)
    keys = pl.col("text").str.extract(f"({echo_rx})", 1)
    return pl.concat([df.filter(~echoed), glued.with_columns(keys.alias("text")),
                      glued.with_columns(pl.col("text").str.replace(echo_rx, ""),
                                         (pl.col(SUB) + 1).cast(pl.Int8).alias(SUB))],
                     how="vertical_relaxed").sort([LINE, SUB])


def strip_ansi(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(pl.col("text").str.replace_all(INGEST["ansi_escape"].pattern, ""))


def on_rows(df: pl.DataFrame, mask: pl.Series, fn) -> pl.DataFrame:
    """Apply `fn` to the rows where `mask` holds only (the others are left as they are, in line order)."""
    if not mask.any():
        return df
    if mask.all():
        return fn(df)
    return pl.concat([df.filter(~mask), fn(df.filter(mask))], how="vertical_relaxed").sort([LINE, SUB])


def carriage_returns(df: pl.DataFrame) -> pl.DataFrame:
    """A trailing '\\r' marks a line continued by vLLM's formatter; other '\\r's separate tqdm states:
    keep the prefix written before the first one and the last state (with whatever is glued to it)."""
    df = df.with_columns(pl.lit(False).alias("cr_end"))
    return on_rows(df, df["text"].str.contains("\r", literal=True), _collapse_states)


def _collapse_states(df: pl.DataFrame) -> pl.DataFrame:
    t = pl.col("text").str.strip_chars_end("\n")
    cr_end = t.str.ends_with("\r")
    t = t.str.strip_chars_end("\r")
    # (these two kept here: they cut at the '\r's we look for, not what a line looks like)
    first = t.str.extract(r"^([^\r]*)\r", 1)
    last = t.str.extract(r"([^\r]*)$", 1)
    keep_first = first.str.contains(INGEST["progress_prefix_only"].pattern)
    collapsed = pl.when(first.is_null()).then(t).when(keep_first).then(first + last).otherwise(last)
    return df.with_columns(collapsed.alias("text"), cr_end.alias("cr_end"))


def split_glued(df: pl.DataFrame) -> pl.DataFrame:
    """Text written right after an unfinished tqdm state (no newline between) becomes its own row."""
    # a tqdm state ends in 'it/s]' or 's/it]' (rate) before anything glued to it
    return on_rows(df, df["text"].str.contains_any(["/s]", "/it]"]), _split_glued_rows)


def _split_glued_rows(df: pl.DataFrame) -> pl.DataFrame:
    cand = df["text"].str.contains(INGEST["tqdm_state"].pattern)
    if not cand.any():
        return df
    ext = df.select(pl.col("text").str.extract_groups(INGEST["tqdm_glued"].pattern)).unnest("text")
    glued = ext["tail"].is_not_null() & cand
    if not glued.any():
        return df
    heads = df.with_columns(pl.when(pl.lit(glued)).then(pl.lit(ext["head"])).otherwise(pl.col("text")).alias("text"))
    tails = (df.filter(glued).with_columns(pl.lit(ext["tail"].filter(glued)).alias("text"),
                                             (pl.col(SUB) + 1).cast(pl.Int8).alias(SUB))
             # the tail was not written by the process whose prefix starts the physical line
             .with_columns(pl.lit(None, pl.String).alias("proc"), pl.lit(None, pl.Int64).alias("pid"),
                           pl.lit(None, pl.String).alias("ip")))
    return pl.concat([heads, tails]).sort([LINE, SUB])
