"""Read every file of a bundle: sniff it, cut it into line batches, keep the lines the diagnosis needs
(or all of them), parse and fold them. Dumps are also kept whole (bounded) for environment facts.

The `Keep` filter is what makes `analyze` fast: one vectorised regex of literal anchors (signature
prefilters, lifecycle landmarks, attribution lines) over the raw lines, plus the context a kept line
needs: the whole traceback after a 'Traceback' header, the line before it (kernel continuations), and
the nearest earlier line that carries a time (for lines that carry none)."""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import polars as pl

from .discover import Bundle, Member, peek
from .fold import fold_continuations, fold_tracebacks
from .formats import Formats, builtin_formats
from .lines import LineStats, iter_line_batches, open_text
from .parse import FileContext, parse_batch
from .settings import Settings
from .sniff import HEAD_BYTES, Sniffed, sniff

TB_HEAD = r"Traceback \(most recent call last\)|Fatal Python error: |^Process [\w.-]+:$|Exception in thread "
HAS_TIME = r"\d\d:\d\d:\d\d"
TB_WINDOW = 400  # lines kept after a traceback header (its frames and exception)


@dataclass(frozen=True)
class Keep:
    """Which raw lines to parse: those containing one of `anchors` (plus their context); None = all."""

    anchors: tuple[str, ...]

    @property
    def regex(self) -> str:
        return "|".join(re.escape(a) for a in sorted(set(self.anchors)))


@dataclass
class FileInfo:
    file: str            # path as stored (Bundle.display gives the reported path)
    kind: str
    reason: str
    wrappers: tuple[str, ...]
    lines: int = 0
    bytes: int = 0
    truncated: int = 0
    is_dump: bool = False


@dataclass
class Ingested:
    files: list[FileInfo] = field(default_factory=list)
    events: list[pl.DataFrame] = field(default_factory=list)   # parsed rows per file (with `file`)
    dumps: list[tuple[str, str, str]] = field(default_factory=list)  # (file, kind, text)


class _KeepState:
    """What the keep filter carries from one batch of a file to the next."""

    def __init__(self) -> None:
        self.since_tb = TB_WINDOW + 1


def _keep_mask(batch: pl.DataFrame, keep: Keep, state: _KeepState) -> pl.Series:
    raw = pl.col("raw")
    n = len(batch)
    m = batch.select(
        raw.str.contains(keep.regex).alias("hit"),
        raw.str.contains(TB_HEAD).alias("tb"),
        raw.str.contains(HAS_TIME).alias("ts"),
    )
    hit, tb, ts = m["hit"], m["tb"], m["ts"]
    idx = pl.int_range(0, n, eager=True)
    # rows within TB_WINDOW after a traceback header (continuing from the previous batch)
    last_tb = pl.select(pl.when(pl.lit(tb)).then(pl.lit(idx)).otherwise(None).forward_fill()).to_series()
    dist = pl.select(pl.when(last_tb.is_null()).then(pl.lit(idx) + state.since_tb)
                     .otherwise(pl.lit(idx) - last_tb)).to_series()
    in_tb = dist <= TB_WINDOW
    state.since_tb = int(dist[-1]) + 1 if n else state.since_tb
    wanted = hit | in_tb
    # the line before each kept line, and the nearest earlier timed line
    prev = wanted.shift(-1, fill_value=False)
    last_ts = pl.select(pl.when(pl.lit(ts)).then(pl.lit(idx)).otherwise(None).forward_fill().shift(1)).to_series()
    ctx_rows = last_ts.filter(wanted & ~ts).drop_nulls().unique()
    ctx = idx.is_in(ctx_rows)
    first_last_ts = pl.repeat(False, n, eager=True)
    if ts.any():
        first_last_ts = idx.is_in([int(ts.arg_true()[0]), int(ts.arg_true()[-1])])
    return wanted | prev | ctx | first_last_ts


def _read_dump(stream, limit: int) -> str:
    data = stream.read(limit + 1)
    return data[:limit].decode("utf-8", "replace")


def ingest_member(member: Member, display: str, settings: Settings, keep: Keep | None, formats: Formats,
                  out: Ingested) -> None:
    head, stream = peek(member.stream, HEAD_BYTES)
    sn: Sniffed = sniff(head, member.size, formats)
    info = FileInfo(member.path, sn.kind, sn.reason, sn.wrappers, is_dump=sn.is_dump)
    out.files.append(info)
    if not sn.parsed_as_log:
        info.bytes = len(head) + _drain(stream)
        return
    if sn.is_dump:
        text = _read_dump(stream, settings.limits.max_dump_bytes)
        out.dumps.append((member.path, sn.kind, text))
        stream = io.BytesIO(text.encode("utf-8"))
        head = text[:16].encode()
    stream = open_text(stream, head)
    ctx = FileContext(display, sn.kind, sn.wrappers)
    stats = LineStats()
    state = _KeepState()
    parts = []
    for batch in iter_line_batches(stream, settings.batch_bytes, settings.limits.max_line_bytes, stats):
        if keep is not None:
            batch = batch.filter(_keep_mask(batch, keep, state))
        if batch.is_empty():
            continue
        parts.append(parse_batch(batch, ctx, formats))
    info.lines, info.bytes, info.truncated = stats.lines, stats.bytes, stats.truncated
    if parts:
        rows = pl.concat(parts, how="diagonal_relaxed")
        rows = fold_continuations(fold_tracebacks(rows))
        out.events.append(rows.with_columns(pl.lit(member.path).alias("file")))


def _drain(stream) -> int:
    n = 0
    while chunk := stream.read(1 << 20):
        n += len(chunk)
    return n


def ingest(bundle: Bundle, settings: Settings, keep: Keep | None, formats: Formats | None = None) -> Ingested:
    formats = formats or builtin_formats()
    out = Ingested()
    for member in bundle.members():
        ingest_member(member, member.path, settings, keep, formats, out)
    return out
