"""The prefixes launchers and process managers put before a line ('(EngineCore_DP0 pid=12)', '[rank3]:',
'[1,3]<stdout>:', 'host: '), peeled off into proc, pid, ip, rank and host, a batch's first rows read first to know
which can occur."""
from __future__ import annotations

import re
from functools import lru_cache

import polars as pl

from k3logs.catalogue.formats import Format
from k3logs.catalogue.regexes import Regexes

# What a prefix can look like, cheaply (run by polars): prefix_start, how every head starts; simple_head,
# '(Name pid=N) ', '[rank3]: '; prefix_head, any of them ('(...)' nested twice, '[...]:', an Open MPI tag).
# Which prefix format it is, and what it says, is decided once per distinct head (a few per file).
INGEST = Regexes("ingest.toml")
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
    ansi = INGEST["ansi_escape"]
    for h in heads:
        clean = ansi.sub("", h) if "\x1b" in h else h
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
    for m in INGEST["ansi_escape"].finditer(raw):
        if seen + m.start() - pos >= clean_end:
            break
        seen += m.start() - pos
        pos = m.end()
    return pos + clean_end - seen


def _simple_heads(text: pl.Series) -> pl.Series:
    """The simple_head of each row (most heads: '(Name pid=N) ', '[rank3]: '), or null. The heads most rows
    share (those of the first SAMPLE_ROWS rows) are found by a plain comparison, the regex reads the other
    rows: a head that ends in a space is what the regex reads from any row that starts with it (nothing
    after it can lengthen it)."""
    simple_head = INGEST["simple_head"].pattern
    sample = text.head(SAMPLE_ROWS).str.extract(simple_head, 1).drop_nulls()
    common = [h for h, n in sample.value_counts(sort=True).iter_rows() if h.endswith(" ") and n * 4 >= SAMPLE_ROWS]
    if not common:
        return text.str.extract(simple_head, 1)
    known = pl.when(pl.col("text").str.starts_with(common[0])).then(pl.lit(common[0]))
    for h in common[1:]:
        known = known.when(pl.col("text").str.starts_with(h)).then(pl.lit(h))
    heads = text.to_frame().select(known.otherwise(None)).to_series()
    rest = heads.is_null().arg_true()
    return heads.scatter(rest, text.gather(rest).str.extract(simple_head, 1)) if len(rest) else heads


def peel_prefixes(df: pl.DataFrame, prefixes: tuple[Format, ...]) -> pl.DataFrame:
    """Strip process/Ray/rank prefixes repeatedly; the innermost process wins, the outer Ray ip is kept."""
    c = pl.col
    prefix_start, prefix_head = INGEST["prefix_start"].pattern, INGEST["prefix_head"].pattern
    for _ in range(8):
        text = df["text"]
        if not text.str.contains(prefix_start).any():  # (one cheap test: most lines have no prefix left)
            break
        heads = _simple_heads(text)
        # nested parentheses (Ray Data / Serve actor names), Open MPI tags
        if heads.null_count():
            rest = heads.is_null().arg_true()
            odd = text.gather(rest)
            odd = rest.filter(odd.str.starts_with("(") | odd.str.contains("]<std", literal=True))
            if len(odd):
                heads = heads.scatter(odd, text.gather(odd).str.extract(prefix_head, 1))
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
