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

from .formats import TIME_GROUPS, Format, Formats
from .schema import LINE, SUB, TRUNCATED

ANSI = r"\x1b\[[0-9;?]*[A-Za-z]"
ANSI_RE = re.compile(ANSI)
TQDM_GLUE = r"^(?P<head>.*?\d+/\d+ \[[\d:]+<[\d:?]+,[^\]]*\])(?P<tail>\S.*)$"
PREFIX_ONLY = r"^(?:\([^()]*pid=\d+[^()]*\)\s*)*$"
TQDM_MARKS = ["\r", "/s]", "/it]"]  # a line with none has no tqdm state to collapse or split
MONTHS = {"Jan": "01", "Feb": "02", "Mar": "03", "Apr": "04", "May": "05", "Jun": "06", "Jul": "07",
          "Aug": "08", "Sep": "09", "Oct": "10", "Nov": "11", "Dec": "12"}
PLACEHOLDER_YEAR = "2000"  # a leap year: year-less times are kept in it until the clock stage fills the year

# columns of a parsed row (besides line, sub, truncated)
STR_COLS = ("text", "wrapper", "stream", "proc", "ip", "w_host", "ident", "source", "level", "loc", "host",
            "lt_kind", "wt_kind", "w_pod", "w_container")
PARSED_SCHEMA: dict[str, pl.DataType] = {
    LINE: pl.Int64, SUB: pl.Int8, TRUNCATED: pl.Boolean, "cr_end": pl.Boolean,
    **{c: pl.String for c in STR_COLS},
    "pid": pl.Int64, "tid": pl.Int64, "dev": pl.Int32, "rank": pl.Int32, "local_rank": pl.Int32,
    "w_task": pl.Int32,   # a launcher's task label (Slurm `srun -l`): the task that wrote the line
    "wt": pl.Datetime("us"), "lt": pl.Datetime("us"), "uptime": pl.Float64, "partial": pl.Boolean,
}
# what a field can hold: a value outside (year 0001, a pid of 5000 digits, 10**20 s since boot) is damage or
# a hostile bundle; it is treated as absent, and the row names it in UNREADABLE (the report lists them)
RANGES: dict[str, tuple] = {
    "pid": (0, 1 << 31), "tid": (0, 1 << 31), "dev": (0, 1 << 16), "rank": (0, 1 << 24), "local_rank": (0, 1 << 16),
    "w_task": (0, 1 << 24),
    "uptime": (0.0, 1e10), "wt": (datetime(1970, 1, 1), datetime(2200, 1, 1)),
    "lt": (datetime(1970, 1, 1), datetime(2200, 1, 1)),
}
UNREADABLE = "_unreadable"   # the fields of a row that held a value out of range (comma-separated), or null
FIELD_NAMES = {"lt": "time", "wt": "wrapper time", "uptime": "seconds since boot", "dev": "device",
               "local_rank": "local rank", "w_task": "task"}  # (as a report names them; the others by their own name)


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
        ext = df.select(pl.when(hit).then(pl.col("text")).alias("_m"), *[
            pl.when(hit).then(pl.col("text").str.json_path_match(f"$.{key}")).alias(name)
            for name, key in fmt.json_fields])
        key = dict(fmt.json_fields).get("text")
        if key is None:
            return ext
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


def _time_exprs(groups: frozenset[str] | set[str]) -> tuple[pl.Expr, pl.Expr, pl.Expr | None]:
    """(naive datetime, kind, uptime) expressions over an extracted group frame."""
    c = pl.col
    if "t_iso" in groups:
        iso = (c("t_iso").str.replace(",", ".", literal=True).str.replace(r"Z$", "+00:00")
               .str.replace(r"([+-]\d\d)(\d\d)$", "${1}:${2}").str.replace(" ", "T", literal=True))
        dt = (iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", time_zone="UTC", time_unit="us", strict=False)
              .dt.replace_time_zone(None))
        return dt, pl.when(dt.is_not_null()).then(pl.lit("utc")), None
    if "t_local" in groups:
        dt = (c("t_local").str.replace(",", ".", literal=True).str.replace("T", " ", literal=True)
              .str.replace_all("/", "-", literal=True)  # nvidia-smi's timestamp: '2026/07/09 10:00:00.394'
              .str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False))
        return dt, pl.when(dt.is_not_null()).then(pl.lit("local")), None
    if "t_md" in groups:
        dt = pl.concat_str([pl.lit(PLACEHOLDER_YEAR + "-"), c("t_md"), pl.lit(" "), c("t_hms")]).str.to_datetime(
            "%Y-%m-%d %H:%M:%S", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("yearless")), None
    if "t_glog" in groups:
        md = c("t_glog").str.extract(r"^(\d{3,4}) ", 1).str.zfill(4)
        hms = c("t_glog").str.extract(r" (\d\d:\d\d:\d\d(?:\.\d{1,6})?)", 1)
        dt = pl.concat_str([pl.lit(PLACEHOLDER_YEAR + "-"), md.str.slice(0, 2), pl.lit("-"), md.str.slice(2, 2),
                            pl.lit(" "), hms]).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("yearless")), None
    for name, kind in (("t_ctime", "local"), ("t_date", "utc")):
        if name in groups:  # 'Mon Aug 11 07:35:59 2026' (dmesg -T); `date`'s 'Wed Apr  8 09:14:02 UTC 2026'
            parts = c(name).str.replace_all(r"\s+", " ").str.split(" ")
            dt = pl.concat_str([parts.list.get(-1, null_on_oob=True), pl.lit("-"),
                                parts.list.get(1, null_on_oob=True).replace(MONTHS), pl.lit("-"),
                                parts.list.get(2, null_on_oob=True).str.zfill(2), pl.lit(" "),
                                parts.list.get(3, null_on_oob=True)]).str.to_datetime(
                "%Y-%m-%d %H:%M:%S", time_unit="us", strict=False)
            return dt, pl.when(dt.is_not_null()).then(pl.lit(kind)), None
    if "t_mdy" in groups:  # 'Sep 12 2024 03:41:17' (Fabric Manager)
        dt = c("t_mdy").str.to_datetime("%b %d %Y %H:%M:%S", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("local")), None
    if "t_syslog" in groups:
        parts = c("t_syslog").str.replace_all(r"\s+", " ").str.split(" ")
        dt = pl.concat_str([pl.lit(PLACEHOLDER_YEAR + "-"), parts.list.get(0, null_on_oob=True).replace(MONTHS),
                            pl.lit("-"), parts.list.get(1, null_on_oob=True).str.zfill(2), pl.lit(" "),
                            parts.list.get(2, null_on_oob=True)]).str.to_datetime(
            "%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
        return dt, pl.when(dt.is_not_null()).then(pl.lit("yearless")), None
    if "t_epoch_us" in groups:  # journald's __REALTIME_TIMESTAMP: microseconds since the epoch (UTC)
        us = c("t_epoch_us").cast(pl.Int64, strict=False)
        dt = pl.when(us.is_between(0, 7_258_118_400_000_000)).then(us).cast(pl.Datetime("us"))
        return dt, pl.when(dt.is_not_null()).then(pl.lit("utc")), None
    if "t_uptime" in groups:
        up = c("t_uptime").cast(pl.Float64, strict=False)
        return pl.lit(None, pl.Datetime("us")), pl.when(up.is_not_null()).then(pl.lit("boot")), up
    return pl.lit(None, pl.Datetime("us")), pl.lit(None, pl.String), None


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
    if fmt.json_escaped:
        text = pl.select(_json_unescape(pl.lit(text))).to_series()
    dt, kind, _ = _time_exprs(g)
    times = ext.with_columns(dt.alias("wt"), kind.alias("wt_kind")).select("wt", "wt_kind")
    new = {
        "text": text.fill_null(""),
        "wrapper": pl.lit(fmt.name),
        "wt": times["wt"], "wt_kind": times["wt_kind"],
    }
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
    elif fmt.json_escaped:
        new["partial"] = ~text.str.ends_with("\n")
    return df.with_columns(
        pl.when(pl.lit(m)).then(v if isinstance(v, pl.Expr) else pl.lit(v)).otherwise(pl.col(k)).alias(k)
        for k, v in new.items())


def _join_partials(df: pl.DataFrame) -> pl.DataFrame:
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


COLOURED = pl.col("text").str.contains("\x1b", literal=True).fill_null(False)
MARKED = pl.col("text").str.contains_any(TQDM_MARKS)


def _coloured(df: pl.DataFrame) -> pl.Series:
    return df.select(COLOURED).to_series()  # (a built expression: a Series method builds one each call)


def _strip_ansi(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(pl.col("text").str.replace_all(ANSI, ""))


def _on_rows(df: pl.DataFrame, mask: pl.Series, fn) -> pl.DataFrame:
    """Apply `fn` to the rows where `mask` holds only (the others are left as they are, in line order)."""
    if not mask.any():
        return df
    if mask.all():
        return fn(df)
    return pl.concat([df.filter(~mask), fn(df.filter(mask))], how="vertical_relaxed").sort([LINE, SUB])


def _carriage_returns(df: pl.DataFrame) -> pl.DataFrame:
    """A trailing '\\r' marks a line continued by vLLM's formatter; other '\\r's separate tqdm states:
    keep the prefix written before the first one and the last state (with whatever is glued to it)."""
    df = df.with_columns(pl.lit(False).alias("cr_end"))
    return _on_rows(df, df["text"].str.contains("\r", literal=True), _collapse_states)


def _collapse_states(df: pl.DataFrame) -> pl.DataFrame:
    t = pl.col("text").str.strip_chars_end("\n")
    cr_end = t.str.ends_with("\r")
    t = t.str.strip_chars_end("\r")
    first = t.str.extract(r"^([^\r]*)\r", 1)
    last = t.str.extract(r"([^\r]*)$", 1)
    keep_first = first.str.contains(PREFIX_ONLY)
    collapsed = pl.when(first.is_null()).then(t).when(keep_first).then(first + last).otherwise(last)
    return df.with_columns(collapsed.alias("text"), cr_end.alias("cr_end"))


def _split_glued(df: pl.DataFrame) -> pl.DataFrame:
    """Text written right after an unfinished tqdm state (no newline between) becomes its own row."""
    # a tqdm state ends in 'it/s]' or 's/it]' (rate) before anything glued to it
    return _on_rows(df, df["text"].str.contains_any(["/s]", "/it]"]), _split_glued_rows)


def _split_glued_rows(df: pl.DataFrame) -> pl.DataFrame:
    cand = df["text"].str.contains(r"\d+/\d+ \[[\d:]+<")
    if not cand.any():
        return df
    ext = df.select(pl.col("text").str.extract_groups(TQDM_GLUE)).unnest("text")
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


# What a prefix can look like, cheaply: '(...)' with up to two levels of nesting, '[...]:', an Open MPI tag.
# Which prefix format it is, and what it says, is decided once per distinct head (a few per file).
PREFIX_HEAD = (r"^((?:\x1b\[[\d;]*m)?\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)(?:\x1b\[[\d;]*m)? ?"
               r"|(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d [\d:]{8} \d{4})?\[\d+,\d+\]<std(?:out|err)>: ?"
               r"|\[[A-Za-z][^\]\s]{0,39}\]:? ?)")
PREFIX_START = r"^(?:[(\[]|\x1b\[|[A-Z][a-z]{2} [A-Z][a-z]{2} )"  # how every head below starts
SIMPLE_HEAD = r"^((?:\x1b\[[\d;]*m)?\([^()]*\)(?:\x1b\[[\d;]*m)? ?|\[[A-Za-z][^\],\s]{0,39}\]:? ?)"  # [rank3]:, [default0]: (not [1,3]<stdout>: nor kernel times)
SAMPLE_ROWS = 256  # a batch's first rows, read first to see how to read the rest (its lines are mostly alike)
PREFIX_FIELDS = {"_cut": pl.String, "_proc": pl.String, "_pid": pl.Int64, "_ip": pl.String, "_rank": pl.Int32,
                 "_local_rank": pl.Int32, "_stream": pl.String}


@lru_cache(maxsize=8)
def _compiled_prefixes(prefixes: tuple[Format, ...]) -> tuple[tuple[Format, re.Pattern], ...]:
    return tuple((f, re.compile(f.regex)) for f in prefixes)


def _read_heads(heads: list[str], prefixes: tuple[Format, ...]) -> pl.DataFrame:
    """What each distinct prefix head says (first matching prefix format), or nothing. A head may be wrapped in
    colour codes: the formats read it without them, and `_cut` (what the format read) keeps them."""
    rows = []
    for h in heads:
        clean = ANSI_RE.sub("", h) if "\x1b" in h else h
        for fmt, rx in _compiled_prefixes(prefixes):
            m = rx.match(clean)
            if not m:
                continue
            g = m.groupdict()
            _int = lambda v: (int(v) if len(v) < 19 else -1) if v is not None else None  # noqa: E731  (-1: out of range)
            rows.append((h, h[:_raw_end(h, m.end())], (g.get("proc") or "").strip() if "proc" in g else None,
                         _int(g.get("pid")), g.get("ip"), _int(g.get("rank")), _int(g.get("local_rank")),
                         g.get("stream")))
            break
    return pl.DataFrame(rows, schema={"_head": pl.String, **PREFIX_FIELDS}, orient="row")


def _raw_end(raw: str, clean_end: int) -> int:
    """Where in `raw` the first `clean_end` characters of its colour-free text end (codes within them count)."""
    if "\x1b" not in raw:
        return clean_end
    pos = seen = 0
    for m in ANSI_RE.finditer(raw):
        if seen + m.start() - pos >= clean_end:
            break
        seen += m.start() - pos
        pos = m.end()
    return pos + clean_end - seen


def _simple_heads(text: pl.Series) -> pl.Series:
    """SIMPLE_HEAD of each row (most heads: '(Name pid=N) ', '[rank3]: '), or null. The heads most rows
    share (those of the first SAMPLE_ROWS rows) are found by a plain comparison, the regex reads the other
    rows: a head that ends in a space is what the regex reads from any row that starts with it (nothing
    after it can lengthen it)."""
    sample = text.head(SAMPLE_ROWS).str.extract(SIMPLE_HEAD, 1).drop_nulls()
    common = [h for h, n in sample.value_counts(sort=True).iter_rows() if h.endswith(" ") and n * 4 >= SAMPLE_ROWS]
    if not common:
        return text.str.extract(SIMPLE_HEAD, 1)
    known = pl.when(pl.col("text").str.starts_with(common[0])).then(pl.lit(common[0]))
    for h in common[1:]:
        known = known.when(pl.col("text").str.starts_with(h)).then(pl.lit(h))
    heads = text.to_frame().select(known.otherwise(None)).to_series()
    rest = heads.is_null().arg_true()
    return heads.scatter(rest, text.gather(rest).str.extract(SIMPLE_HEAD, 1)) if len(rest) else heads


def _peel_prefixes(df: pl.DataFrame, prefixes: tuple[Format, ...]) -> pl.DataFrame:
    """Strip process/Ray/rank prefixes repeatedly; the innermost process wins, the outer Ray ip is kept."""
    c = pl.col
    for _ in range(8):
        text = df["text"]
        if not text.str.contains(PREFIX_START).any():  # (one cheap test: most lines have no prefix left)
            break
        heads = _simple_heads(text)
        # nested parentheses (Ray Data / Serve actor names), Open MPI tags
        if heads.null_count():
            rest = heads.is_null().arg_true()
            odd = text.gather(rest)
            odd = rest.filter(odd.str.starts_with("(") | odd.str.contains("]<std", literal=True))
            if len(odd):
                heads = heads.scatter(odd, text.gather(odd).str.extract(PREFIX_HEAD, 1))
        if heads.null_count() == len(heads):
            break
        one = heads[0] if not heads.null_count() and (heads == heads[0]).all() else None
        table = _read_heads([one] if one is not None else heads.drop_nulls().unique().sort().to_list(), prefixes)
        if table.is_empty():
            break
        if one is not None:  # (often: one process wrote the whole batch) what its head says, once
            s = {name: pl.lit(table[name][0], dtype) for name, dtype in PREFIX_FIELDS.items()}
        else:  # what each row's head says (a join of the heads alone: the frame is wide)
            said = heads.alias("_head").to_frame().join(table, on="_head", how="left", maintain_order="left")
            s = {name: pl.lit(said[name]) for name in PREFIX_FIELDS}  # (used as they are: one query per layer)
        hit = s["_cut"].is_not_null()
        df = df.with_columns(
            pl.when(hit).then(c("text").str.strip_prefix(s["_cut"])).otherwise(c("text")).alias("text"),
            pl.when(hit & s["_proc"].is_not_null()).then(s["_proc"]).otherwise(c("proc")).alias("proc"),
            pl.when(hit & s["_pid"].is_not_null()).then(s["_pid"]).otherwise(c("pid")).alias("pid"),
            pl.coalesce(c("ip"), s["_ip"]).alias("ip"),  # the outermost (Ray) ip is the node's
            pl.coalesce(c("rank"), s["_rank"]).alias("rank"),
            pl.coalesce(c("local_rank"), s["_local_rank"]).alias("local_rank"),
            pl.coalesce(c("stream"), s["_stream"]).alias("stream"),
        )
    return df


FEW_ROWS = 4096  # rows left unmatched: the formats that can match one of them are found in one query


def _can_match(text: pl.Series, formats: tuple[Format, ...]) -> set[str]:
    """Names of the `formats` that match at least one of `text`'s rows (one query, not one per format:
    a batch's last few unmatched lines would otherwise pay every format's fixed cost)."""
    found = text.to_frame().select(pl.col("text").str.contains(_head_regex(f)).any().alias(f.name) for f in formats)
    return {name for name, hit in found.row(0, named=True).items() if hit}


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
    dt, kind_e, up = _time_exprs(g)
    c = pl.col
    message = c("msg") if "msg" in g else c("_text").str.strip_prefix(c("_m"))
    read = [message.alias("text"), pl.lit(fmt.source, pl.String).alias("source"), dt.alias("lt"),
            kind_e.alias("lt_kind"), (up if up is not None else pl.lit(None, pl.Float64)).alias("uptime")]
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
    if not ctx.wrappers and ctx.kind == "log":
        # plain text that holds a journal's lines among its own (a section of nvidia-bug-report.log, a paste
        # of `journalctl -k`): those lines keep their time and host; the rest stays plain
        for fmt in formats.wrappers.values():
            if fmt.quoted:
                df = _apply_wrapper(df, fmt)
    if ctx.wrappers:  # a wrapped record may end in its own newline (lines are split without theirs)
        df = df.with_columns(pl.col("text").str.strip_chars_end("\n"))
    df = _join_partials(df)
    # colour codes go before the layers that read a line as text: on the rows they read (tqdm states), then
    # after the prefixes are peeled (a head may be coloured: most lines hold no other code), then the
    # prefixes they hid
    coloured = _coloured(df)
    marked = df.select(MARKED).to_series()  # (one search for the three layers that need one)
    if marked.any():
        if coloured.any():
            df = _on_rows(df, coloured & marked, _strip_ansi)
        df = _carriage_returns(df)
        df = _split_glued(df)
    df = _peel_prefixes(df, formats.prefixes)
    if coloured.any():
        df = _on_rows(df, _coloured(df), lambda rows: _peel_prefixes(_strip_ansi(rows), formats.prefixes))
    df = _apply_lines(df, formats.line_order(ctx.kind), ctx.kind)
    df = _in_range(df)
    cols = [c for c in (*PARSED_SCHEMA, UNREADABLE, "_line_end") if c in df.columns]
    return df.select(cols)  # every layer keeps the rows in (line, sub) order


def _in_range(df: pl.DataFrame) -> pl.DataFrame:
    """Values out of RANGES made absent, the row's UNREADABLE naming their fields (only when a batch has any)."""
    checked = [c for c in RANGES if c in df.columns]
    bad = {c: pl.col(c).is_not_null() & ~pl.col(c).is_between(*RANGES[c], closed="left") for c in checked}
    flags = df.select(pl.any_horizontal(*bad.values()).alias("any"), *(e.alias(c) for c, e in bad.items()))
    if not checked or not flags["any"].any():
        return df
    names = pl.concat_list([pl.when(flags[c]).then(pl.lit(c)) for c in checked]).list.drop_nulls().list.join(",")
    return df.with_columns(*(pl.when(flags[c]).then(None).otherwise(pl.col(c)).alias(c) for c in checked),
                           pl.when(flags["any"]).then(names).alias(UNREADABLE))
