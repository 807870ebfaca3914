"""Peel a batch of raw lines, layer by layer, into parsed rows. Everything here is vectorised over the
batch: each format is one regex over the rows that can still match it (formats.toml says which).

Order (log-formats.md 1.3): collector wrapper -> partial records re-joined -> ANSI colour -> tqdm
carriage-return states (text glued after a bar becomes its own row, `sub` = 1) -> process / Ray / rank
prefixes (repeatedly) -> the application line format, which sets `source`, level, time and message.
(Colour codes are taken out of a line before a layer reads it as text; a prefix is read with its codes,
which most coloured lines only have there, so they are stripped from the few lines that still hold one.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import polars as pl

from k3logs.catalogue.formats import TIME_GROUPS, Format, Formats, json_path
from k3logs.catalogue.regexes import Regexes
from k3logs.schema import LINE, SUB, TRUNCATED

from .prefixes import SAMPLE_ROWS, peel_prefixes
from .times import stated_offset, time_exprs
from .terminal import (MARKED, carriage_returns, coloured_rows, echoed_controls, join_partials, on_rows, split_glued,
                       strip_ansi, syslog_controls)


# columns of a parsed row (besides line, sub, truncated)
STR_COLS = ("text", "wrapper", "stream", "proc", "ip", "w_host", "ident", "source", "level", "loc", "host",
            "lt_kind", "wt_kind", "w_pod", "w_container")
PARSED_SCHEMA: dict[str, pl.DataType] = {
    LINE: pl.Int64, SUB: pl.Int8, TRUNCATED: pl.Boolean, "cr_end": pl.Boolean,
    **{c: pl.String for c in STR_COLS},
    "pid": pl.Int64, "tid": pl.Int64, "dev": pl.Int32, "rank": pl.Int32, "local_rank": pl.Int32,
    "w_task": pl.Int32,   # a launcher's task label (Slurm `srun -l`): the task that wrote the line
    "wt": pl.Datetime("us"), "lt": pl.Datetime("us"), "uptime": pl.Float64, "partial": pl.Boolean,
    "tz_off": pl.Int32,   # the UTC offset (seconds east) an ISO time of the line states, if it states one
}
# what a field can hold: a value outside (year 0001, a pid of 5000 digits, 10**20 s since boot) is damage or
# a hostile bundle; it is treated as absent, and the row names it in UNREADABLE (the report lists them)
RANGES: dict[str, tuple] = {
    "pid": (0, 1 << 31), "tid": (0, 1 << 31), "dev": (0, 1 << 16), "rank": (0, 1 << 24), "local_rank": (0, 1 << 16),
    "w_task": (0, 1 << 24), "tz_off": (-14 * 3600, 14 * 3600 + 1),   # (UTC-12 to UTC+14 are the zones there are)
    "uptime": (0.0, 1e10), "wt": (datetime(1970, 1, 1), datetime(2200, 1, 1)),
    "lt": (datetime(1970, 1, 1), datetime(2200, 1, 1)),
}
INGEST = Regexes("ingest.toml")  # the regexes of a line's reading that are no format's

UNREADABLE = "_unreadable"   # the fields of a row that held a value out of range (comma-separated), or null
# (as a report names them; the others by their own name)
FIELD_NAMES = {"lt": "time", "wt": "wrapper time", "uptime": "seconds since boot", "dev": "device",
               "local_rank": "local rank", "w_task": "task", "tz_off": "UTC offset"}


@dataclass(frozen=True)
class FileContext:
    file: str                      # path inside the bundle
    kind: str                      # sniffed kind (schema.LOG_KINDS)
    wrappers: tuple[str, ...] = ()  # wrapper chain, outermost first
    crlf: bool = False             # lines end in '\r\n': the '\r' is the line end, not vLLM's continuation mark


def _groups(fmt: Format) -> set[str]:
    return set(fmt.groups)


def _head_regex(fmt: Format) -> str:
    return f"(?P<_m>{fmt.regex})"  # (one string per format: polars caches compiled regexes by their text)


def _extract(df: pl.DataFrame, fmt: Format) -> pl.DataFrame:
    """The format's named groups for each row of `df`, plus `_m` (the whole head; null = no match). A wrapper
    read by JSON key (journald's `-o json`) takes each field from its key, wherever it is in the object."""
    if fmt.json_fields:
        hit = pl.col("text").str.contains(fmt.regex).fill_null(False)
        keys: dict[str, list[str]] = {}
        for name, key in fmt.json_fields:
            keys.setdefault(name, []).append(key)
        ext = df.select(pl.when(hit).then(pl.col("text")).alias("_m"), *[
            pl.when(hit).then(pl.coalesce(pl.col("text").str.json_path_match(json_path(k)) for k in ks)).alias(name)
            for name, ks in keys.items()])
        key = keys.get("text", [None])[0]
        if key is None:
            return ext
        # (kept here: built from the format's own key, escaped)
        arrays = df.select(pl.col("text").str.contains(f'"{re.escape(key)}"\\s*:\\s*\\[').fill_null(False)).to_series()
        return ext.with_columns(_byte_array_text(ext["text"], arrays))
    return df.select(pl.col("text").str.extract_groups(_head_regex(fmt))).unnest("text")


_HEX = {str(i): f"{i:02x}" for i in range(256)}


def _byte_array_text(values: pl.Series, arrays: pl.Series) -> pl.Series:
    """The values whose JSON field journald wrote as an array of bytes ('"MESSAGE":[27,91,...]': the message
    holds control characters, an ANSI colour), where `arrays`, as their text; other values as they are."""
    if not arrays.any():
        return values
    hexed = values.str.strip_chars("[] ").str.split(",").list.eval(
        pl.element().str.strip_chars().replace_strict(_HEX, default=None)).list.join("").str.decode("hex")
    try:
        text = hexed.cast(pl.String)
    except pl.exceptions.ComputeError:  # (bytes that are not UTF-8: the rare rows one by one)
        text = pl.Series([None if b is None else b.decode("utf-8", "replace") for b in hexed], dtype=pl.String)
    return pl.select(pl.when(arrays).then(text).otherwise(values)).to_series().alias(values.name)


def _level(expr: pl.Expr, fmt: Format) -> pl.Expr:
    mapping = dict(fmt.level_map)
    return expr.replace(mapping) if mapping else expr


def _json_unescape(e: pl.Expr) -> pl.Expr:
    """Undo the JSON string escapes Docker writes (\\u sequences other than the usual few are left as is)."""
    hold = "\ue000"
    return (e.str.replace_all(r"\\", hold, literal=True)
            .str.replace_all(r"\n", "\n", literal=True).str.replace_all(r"\r", "\r", literal=True)
            .str.replace_all(r"\t", "\t", literal=True).str.replace_all(r"\"", '"', literal=True)
            .str.replace_all(r"\/", "/", literal=True)
            .str.replace_all(r"\u003c", "<", literal=True).str.replace_all(r"\u003e", ">", literal=True)
            .str.replace_all(r"\u0026", "&", literal=True).str.replace_all(r"\u001b", "\x1b", literal=True)
            .str.replace_all(r"\u0000", "", literal=True)
            .str.replace_all(hold, "\\", literal=True))


# ------------------------------------------------------------------------------------------------
# layers
# ------------------------------------------------------------------------------------------------
def _apply_wrapper(df: pl.DataFrame, fmt: Format) -> pl.DataFrame:
    ext = _extract(df, fmt)
    m = ext["_m"].is_not_null()
    if not m.any():
        return df
    g = _groups(fmt)
    text = ext["text"] if "text" in g else df["text"].str.strip_prefix(ext["_m"])
    if "exc" in g:   # (a logger's formatted exception: the lines after its message)
        text = pl.select(pl.when(pl.lit(ext["exc"]).is_not_null()).then(
            pl.concat_str([pl.lit(text), pl.lit(ext["exc"])], separator="\n")).otherwise(pl.lit(text))).to_series()
    if fmt.json_escaped:
        text = pl.select(_json_unescape(pl.lit(text))).to_series()
    elif fmt.csv_quoted:   # (a quoted cell: its quotes off, its doubled quotes single)
        quoted = text.str.starts_with('"') & text.str.ends_with('"') & (text.str.len_chars() >= 2)
        text = pl.select(pl.when(quoted).then(pl.lit(text).str.slice(1, pl.lit(text).str.len_chars() - 2)
                                              .str.replace_all('""', '"', literal=True))
                         .otherwise(pl.lit(text))).to_series()
    dt, kind, _ = time_exprs(g)
    off = stated_offset(g)
    times = ext.with_columns(dt.alias("wt"), kind.alias("wt_kind"), *([] if off is None else [off.alias("tz_off")]))
    new = {
        "text": text.fill_null(""),
        "wrapper": pl.lit(fmt.name),
        "wt": times["wt"], "wt_kind": times["wt_kind"],
    }
    if off is not None:
        new["tz_off"] = times["tz_off"]
    if "stream" in g:
        new["stream"] = ext["stream"]
    if "host" in g:
        new["w_host"] = ext["host"]
    for grp, col in (("pod", "w_pod"), ("container", "w_container")):
        if grp in g:
            new[col] = ext[grp]
    if "task" in g:
        new["w_task"] = ext["task"].cast(pl.Int64, strict=False).cast(pl.Int32, strict=False)
    if "ident" in g:
        new["ident"] = ext["ident"]
    if "pid" in g:
        new["pid"] = ext["pid"].cast(pl.Int64, strict=False)
    if "tag" in g:
        new["partial"] = ext["tag"] == "P"
    elif fmt.json_escaped and not fmt.sparse:   # (docker's json-file: a chunk with no newline goes on in the next)
        new["partial"] = ~text.str.ends_with("\n")
    out = df.with_columns(
        pl.when(pl.lit(m)).then(v if isinstance(v, pl.Expr) else pl.lit(v)).otherwise(pl.col(k)).alias(k)
        for k, v in new.items())
    return _one_row_a_line(out) if fmt.json_fields else out


def _one_row_a_line(df: pl.DataFrame) -> pl.DataFrame:
    """A record read by JSON key whose text holds several lines (a message and its exception's traceback): one
    row each, in order (sub-rows of the record's line), as a plain log prints them."""
    multi = df["text"].str.strip_chars_end("\n").str.contains("\n", literal=True).fill_null(False)
    if not multi.any():
        return df
    rows = df.filter(multi).with_columns(pl.col("text").str.strip_chars_end("\n").str.split("\n")).explode("text")
    # (a sub-row number is a byte: a longer traceback's last rows share the last, in order)
    rows = rows.with_columns((pl.col(SUB) + pl.int_range(pl.len()).over(LINE)).clip(upper_bound=127).cast(pl.Int8)
                             .alias(SUB))
    return pl.concat([df.filter(~multi), rows], how="vertical_relaxed").sort([LINE, SUB], maintain_order=True)


FEW_ROWS = 4096  # rows left unmatched: the formats that can match one of them are found in one query


def _can_match(text: pl.Series, formats: tuple[Format, ...]) -> set[str]:
    """Names of the `formats` that are the first to match at least one of `text`'s rows: one pass of one regex, their
    heads in order as its alternatives (a batch's last few unmatched lines would otherwise pay every format's fixed
    cost; a format whose rows an earlier one takes reads none of them)."""
    # (a head not anchored at the line's start, a user's, may match anywhere: it is tried)
    anchored = tuple(f for f in formats if f.regex.startswith("^"))
    found = text.str.extract_groups(_first_of(anchored)).struct.unnest().select(pl.all().is_not_null().any()) \
        if anchored else None
    return {f.name for f in formats if f not in anchored} | \
        {f.name for f, hit in zip(anchored, found.row(0) if found is not None else ()) if hit}


@lru_cache(maxsize=64)
def _first_of(formats: tuple[Format, ...]) -> str:
    """One regex whose group _fI holds a row's head when format I is the first of `formats` to match it (heads
    anchored at the line's start: of alternatives at one place, the first in order wins)."""
    return "|".join(f"(?P<_f{i}>{INGEST['named_group_open'].sub('(?:', f.regex)})" for i, f in enumerate(formats))


def _mostly_unmatched(text: pl.Series, fmt: Format) -> bool:
    """Whether `fmt` matches fewer than half of the first SAMPLE_ROWS rows (a file's lines are mostly of
    one format: the one that matches a batch is seldom tried first on it)."""
    sample = text.head(SAMPLE_ROWS)
    return sample.str.contains(_head_regex(fmt)).sum() * 2 < len(sample)


def _apply_lines(df: pl.DataFrame, formats: tuple[Format, ...], kind: str) -> pl.DataFrame:
    """First matching line format wins; the rest of the line after its head is the message. Formats are
    tried on the text of the rows still unmatched; what they read is put back in row order at the end
    (the frame itself is never filtered: it is wide)."""
    rest, text = pl.int_range(df.height, dtype=pl.UInt32, eager=True), df["text"]
    pieces: list[pl.DataFrame] = []
    can_match: set[str] | None = None
    for i, fmt in enumerate(formats):
        if not len(rest):
            break
        if can_match is None and len(rest) <= FEW_ROWS:
            can_match = _can_match(text, formats[i:])
        if can_match is not None and fmt.name not in can_match:
            continue
        if _mostly_unmatched(text, fmt):  # read groups only on the rows it matches: a plain match is cheaper
            m = text.str.contains(_head_regex(fmt)).fill_null(False)
            ext = None
        else:
            ext = _extract(text.to_frame(), fmt)
            m = ext["_m"].is_not_null()
        matched = m.sum()
        if not matched:
            continue
        if matched == len(m):  # (often every row left: no filtering)
            at, hit, rest, text = rest, text, rest.clear(), text.clear()
        else:
            at, hit = rest.filter(m), text.filter(m)
            if ext is not None:
                ext = ext.filter(m)
            m = ~m
            rest, text = rest.filter(m), text.filter(m)
        if ext is None:
            ext = _extract(hit.to_frame(), fmt)
        pieces.append(_read_line_format(ext, hit, df["pid"].gather(at), fmt).insert_column(0, at.alias("_i")))
    if len(rest):
        fallback = kind if kind in ("kernel", "nccl") else "plain"
        # a journald line says who wrote it: the kernel's lines are kernel events in any file, others are not
        ident = pl.col("ident")
        source = (pl.when(ident == "kernel").then(pl.lit("kernel"))
                  .when(ident.is_not_null() & pl.lit(kind == "kernel")).then(pl.lit("plain"))
                  .otherwise(pl.lit(fallback)))
        pieces.append(pl.DataFrame({"_i": rest, "source": df.select(source.alias("source")).to_series().gather(rest)}))
    # a column a format does not read keeps the row's value from the layers before
    names = list(dict.fromkeys(k for piece in pieces for k in piece.columns))
    read = pl.concat([pl.DataFrame({k: piece[k] if k in piece.columns else df[k].gather(piece["_i"]) for k in names})
                      for piece in pieces])
    if len(pieces) > 1:
        read = read.sort("_i")
    return df.with_columns(read[k] for k in names if k != "_i")


def _read_line_format(ext: pl.DataFrame, hit: pl.Series, pid_before: pl.Series, fmt: Format) -> pl.DataFrame:
    """What a line format reads from the rows it matched (`ext`: its groups; `hit`: their text), in one
    query: message, source, time, level, location, host, pid (else the one a prefix gave), thread, device."""
    # a time group no row of the batch has (NCCL lines mostly carry no time) is not parsed
    read = _line_format_reads(fmt, frozenset(t for t in _groups(fmt) if t not in TIME_GROUPS
                                             or ext[t].null_count() < ext.height))
    return ext.with_columns(hit.alias("_text"), pid_before.alias("_pid_before")).select(read)


@lru_cache(maxsize=1024)
def _line_format_reads(fmt: Format, g: frozenset[str]) -> tuple[pl.Expr, ...]:
    """`_read_line_format`'s expressions for a format whose groups `g` hold something: built once (building
    them costs as much as running them on a batch)."""
    dt, kind_e, up = time_exprs(g)
    c = pl.col
    message = c("msg") if "msg" in g else c("_text").str.strip_prefix(c("_m"))
    read = [message.alias("text"), pl.lit(fmt.source, pl.String).alias("source"), dt.alias("lt"),
            kind_e.alias("lt_kind"), (up if up is not None else pl.lit(None, pl.Float64)).alias("uptime")]
    if (off := stated_offset(g)) is not None:
        read.append(off.alias("tz_off"))
    if "level" in g:
        read.append(_level(c("level"), fmt).alias("level"))
    read += [c(name) for name in ("loc", "host") if name in g]
    read += [c(name).cast(dtype, strict=False) for name, dtype in (("tid", pl.Int64), ("dev", pl.Int32)) if name in g]
    if "pid" in g:
        read.append(pl.coalesce(c("pid").cast(pl.Int64, strict=False), c("_pid_before")).alias("pid"))
    return tuple(read)


@lru_cache(maxsize=2)
def _first_columns(crlf: bool) -> tuple[pl.Expr, ...]:
    """Every parsed column, before any layer reads a line: the line as text, no wrapper, the rest empty."""
    return (pl.col(LINE), pl.lit(0, pl.Int8).alias(SUB), pl.col(TRUNCATED), pl.lit(False).alias("cr_end"),
            (pl.col("raw").str.strip_suffix("\r") if crlf else pl.col("raw")).alias("text"),
            pl.lit("none").alias("wrapper"),
            *[pl.lit(None, dtype).alias(c) for c, dtype in PARSED_SCHEMA.items()
              if c not in (LINE, SUB, TRUNCATED, "cr_end", "text", "wrapper")])


def parse_batch(batch: pl.DataFrame, ctx: FileContext, formats: Formats) -> pl.DataFrame:
    """Raw lines (line, raw, truncated) -> parsed rows (PARSED_SCHEMA, text = the message), in line order."""
    n = len(batch)
    df = batch.select(_first_columns(ctx.crlf))
    if n == 0:
        return df
    for name in ctx.wrappers:
        df = _apply_wrapper(df, formats.wrappers[name])
        if formats.wrappers[name].sparse:   # (a JSON document's own lines around the log lines it holds: not lines
            df = df.filter(pl.col("wrapper") == name)   # of the log)
    if not ctx.wrappers and ctx.kind == "log":
        # plain text that holds a journal's lines among its own (a section of nvidia-bug-report.log, a paste
        # of `journalctl -k`): those lines keep their time and host; the rest stays plain
        for fmt in formats.wrappers.values():
            if fmt.quoted:
                df = _apply_wrapper(df, fmt)
    if ctx.wrappers:  # a wrapped record may end in its own newline (lines are split without theirs)
        df = df.with_columns(pl.col("text").str.strip_chars_end("\n"))
    df = join_partials(df)
    if ctx.wrappers:   # (a syslog relay's escapes of control characters)
        df = syslog_controls(df)
    # colour codes go before the layers that read a line as text: on the rows they read (tqdm states), then
    # after the prefixes are peeled (a head may be coloured: most lines hold no other code), then the
    # prefixes they hid
    coloured = coloured_rows(df)
    marked = df.select(MARKED).to_series()  # (one search for the three layers that need one)
    if marked.any():
        if coloured.any():
            df = on_rows(df, coloured & marked, strip_ansi)
        df = carriage_returns(df)
        df = split_glued(df)
    df = peel_prefixes(echoed_controls(df), formats.prefixes)
    if coloured.any():
        df = on_rows(df, coloured_rows(df), lambda rows: peel_prefixes(strip_ansi(rows), formats.prefixes))
    df = _apply_lines(df, formats.line_order(ctx.kind), ctx.kind)
    df = _in_range(df)
    cols = [c for c in (*PARSED_SCHEMA, UNREADABLE, "_line_end") if c in df.columns]
    return df.select(cols)  # every layer keeps the rows in (line, sub) order


def _in_range(df: pl.DataFrame) -> pl.DataFrame:
    """Values out of RANGES made absent, the row's UNREADABLE naming their fields (only when a batch has any)."""
    checked = tuple(c for c in RANGES if c in df.columns)
    if not checked:
        return df
    flags = df.select(_out_of_range(checked))
    if not flags["any"].any():
        return df
    names = pl.concat_list([pl.when(flags[c]).then(pl.lit(c)) for c in checked]).list.drop_nulls().list.join(",")
    return df.with_columns(*(pl.when(flags[c]).then(None).otherwise(pl.col(c)).alias(c) for c in checked),
                           pl.when(flags["any"]).then(names).alias(UNREADABLE))


@lru_cache(maxsize=16)
def _out_of_range(checked: tuple[str, ...]) -> tuple[pl.Expr, ...]:
    """Whether each of the `checked` columns holds a value out of its range, and whether any does: built once
    (building them cost as much as running them on a small batch)."""
    bad = [pl.col(c).is_not_null() & ~pl.col(c).is_between(*RANGES[c], closed="left") for c in checked]
    return pl.any_horizontal(*bad).alias("any"), *(e.alias(c) for c, e in zip(checked, bad))
