"""Read every file of a bundle: sniff it, cut it into line batches, keep the lines the diagnosis needs
(or all of them), parse and fold them. Dumps are also kept whole (bounded) for environment facts.

The `Keep` filter is what makes `analyze` fast: one vectorised regex of literal anchors (signature
prefilters, lifecycle landmarks, attribution lines) over the raw lines, plus the context a kept line
needs: the whole traceback after a 'Traceback' header, the line before it (kernel continuations), and
the nearest earlier line that carries a time (for lines that carry none)."""
from __future__ import annotations

import io
import itertools
from collections import deque
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import polars as pl

from k3logs import progress
from k3logs.catalogue.formats import Formats, builtin_formats
from k3logs.schema import LINE, TRUNCATED
from k3logs.settings import Settings

from .discover import Bundle, Member
from .fold import fold
from .keep import LOOKBACK, TB_HEAD, TB_WINDOW, Keep, KeepState, anchored, carried, elide_user_data, keep_rows
from .lines import LineChunk, LineStats, crlf_line_ends, iter_line_batches, iter_line_chunks, open_text
from .pack import PACK_FILES, TINY_BYTES, Pack
from .parse import FileContext, parse_batch
from .records import WRAPPER as STAMP_WRAPPER, stamp_yaml_entries
from .sniff import HEAD_BYTES, Sniffed, sniff
from .streams import Prepend, peek, read_up_to

TEXT_KINDS = ("log", "k8s_events")  # small files of these kinds are also read whole as text, for facts
PARSE_ROWS = 200_000  # kept lines parsed together


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
    hole: int = 0        # leading NUL bytes skipped (counted in `bytes`)
    cut_at: int = 0      # a dump longer than max_dump_bytes: only this many bytes were read
    prose: bool = False  # sniffed as plain text (notes, a ticket): its lines mention errors, they are not events
    unended: bool = False  # its data ends inside a line: the file was cut off while it was written or copied


@dataclass
class Ingested:
    files: list[FileInfo] = field(default_factory=list)
    events: list[pl.DataFrame] = field(default_factory=list)   # parsed rows per file (with `file`)
    dumps: list[tuple[str, str, str]] = field(default_factory=list)  # (file, kind, text)


HOLE = b"\x00" * 8
_ZEROS = bytes(1 << 20)


def _skip_hole(head: bytes, stream) -> tuple[int, bytes, object]:
    """Skip the NUL bytes a file starts with: a log truncated under its writer (logrotate copytruncate)
    starts with a hole as long as it was, then its new lines. Returns how many, and the head and stream
    from the first other byte (line numbers do not change: a hole holds no newline)."""
    stream.read(len(head))  # `stream` gives `head` first (peek): already seen, all in memory
    rest = head.lstrip(b"\x00")
    hole = len(head) - len(rest)
    while not rest:
        chunk = stream.read(len(_ZEROS))
        if not chunk:
            return hole, b"", stream
        if chunk == _ZEROS[:len(chunk)]:  # a memcmp: lstrip would cost a second per GB of hole
            hole += len(chunk)
            continue
        rest = chunk.lstrip(b"\x00")
        hole += len(chunk) - len(rest)
    head, stream = peek(Prepend(stream, rest), HEAD_BYTES)
    return hole, head, stream


def _read_dump(stream, limit: int) -> tuple[str, bool]:
    """The first `limit` bytes of a dump as text, and whether there was more."""
    data = read_up_to(stream, limit + 1)
    return data[:limit].decode("utf-8", "replace"), len(data) > limit


def open_member(member: Member, settings: Settings, formats: Formats, out: Ingested,
                known: Sniffed | None = None) -> tuple[FileInfo, object | None, FileContext | None]:
    """Sniff a member (unless what it is is `known`: read before); keep its text if it is a dump. Returns
    its FileInfo and, if it is read as lines, the text stream and the parsing context (None otherwise)."""
    progress.current().file(member.size)
    if member.size == 0:  # nothing to read (an archive of many empty members costs its listing only)
        sn = known or sniff(b"", 0, formats)
        info = FileInfo(member.path, sn.kind, sn.reason, sn.wrappers, is_dump=sn.is_dump, prose=sn.prose)
        out.files.append(info)
        return info, None, None
    head, stream = peek(member.stream, HEAD_BYTES)
    hole = 0
    if head.startswith(HOLE):
        hole, head, stream = _skip_hole(head, stream)
    sn: Sniffed = known or (sniff(head, member.size, formats) if head or not hole else
                            Sniffed("binary", (), f"only NUL bytes ({hole})"))
    reason = f"{sn.reason} (after a hole of {hole} NUL bytes)" if hole and head else sn.reason
    if (crlf := sn.parsed_as_log and crlf_line_ends(head)):
        reason += "; lines end in CRLF"
    info = FileInfo(member.path, sn.kind, reason, sn.wrappers, is_dump=sn.is_dump, hole=hole, prose=sn.prose)
    out.files.append(info)
    if not sn.parsed_as_log:
        info.bytes = hole + _drain(stream)  # the stream replays the head
        return info, None, None
    stream = open_text(stream, head)  # (UTF-16 recoded as UTF-8, a UTF-8 BOM dropped: for dumps too)
    wrappers = sn.wrappers
    if sn.is_dump or (sn.kind in TEXT_KINDS and (member.size or 0) <= settings.limits.max_dump_bytes):
        # dumps are read whole for facts; so are free text (notes, shell transcripts) and Kubernetes events,
        # which name hosts ('Successfully assigned ns/pod to node')
        text, cut = _read_dump(stream, settings.limits.max_dump_bytes)
        if crlf:  # (as many lines: only the '\r' goes)
            text = text.replace("\r\n", "\n")
        info.cut_at = settings.limits.max_dump_bytes if cut else 0
        out.dumps.append((member.path, sn.kind if sn.is_dump else "text", text))
        if not sn.is_dump and not wrappers and (stamped := stamp_yaml_entries(text)) is not None:
            info.reason += "; YAML log entries: each line takes its entry's time"
            wrappers, info.prose = (STAMP_WRAPPER,), False   # (the file's own wrappers stay none: read again, it
            # is stamped again)
            text = stamped
        whole = io.BytesIO(text.encode("utf-8"))
        whole.cut = cut or bool(getattr(stream, "cut", False))  # type: ignore[attr-defined]  (lines.iter_line_chunks)
        stream = whole
    return info, stream, FileContext(member.path, sn.kind, wrappers, crlf)


def iter_files_rows(files: Iterable[tuple[object, object, FileContext, LineStats]], settings: Settings,
                    keep: Keep | None, formats: Formats, pool: Executor | None = None, ahead: int | None = None
                    ) -> Iterator[tuple[object, pl.DataFrame]]:
    """Parsed and folded rows of each file of `files` ((key, stream, context, stats)), chunk by chunk, file
    after file, each with its file's key. Kept lines are gathered into chunks of about PARSE_ROWS before
    parsing (each parse has a fixed cost). Chunks parse independently: with a `pool`, the next ones
    (`ahead` of them, default `settings.jobs`) are parsed there while this thread folds the current one,
    the next file's first ones while the file before's last ones are folded. A traceback or continued
    record still open at the end of a chunk is held back and finished with the next one (a file's last
    chunk holds nothing back). A file's stream is read to its end before the next file is taken."""
    tiny = min(TINY_BYTES, settings.batch_bytes, settings.limits.max_line_bytes) if keep is not None else 0

    def chunks() -> Iterator[tuple]:
        pack = Pack()
        for key, stream, ctx, stats in files:
            if tiny:  # (a file that fits in one read, no line cut: the same rows whole or in a pack)
                data = read_up_to(stream, tiny + 1)
                if len(data) <= tiny:
                    pack.add(key, ctx, stats, data, bool(getattr(stream, "cut", False)))
                    if len(pack.keys) >= PACK_FILES or pack.size >= settings.batch_bytes:
                        yield None, None, None, pack, True
                        pack = Pack()
                    continue
                stream = Prepend(stream, data)
            if pack.keys:
                yield None, None, None, pack, True
                pack = Pack()
            for chunk, last in _with_last(_chunks(stream, settings, keep, stats, pool)):
                yield key, ctx, stats, chunk, last
        if pack.keys:
            yield None, None, None, pack, True

    def parse(item: tuple) -> tuple:
        key, ctx, stats, chunk, last = item
        if isinstance(chunk, Pack):
            return chunk, None, chunk.rows(keep, formats, settings.limits.max_line_bytes), None, True
        if isinstance(chunk, pl.DataFrame):
            return key, stats, parse_batch(chunk, ctx, formats), None, last
        batch = chunk.frame(1)  # split here, on the pool; numbered from 1 until its place is known
        return key, stats, parse_batch(batch, ctx, formats), batch.select(TRUNCATED), last

    parsed = _ahead(pool, parse, chunks(), ahead or settings.jobs) if pool is not None else map(parse, chunks())
    pending: pl.DataFrame | None = None
    before = 0  # lines of the file's LineChunks already parsed
    for key, stats, rows, split, last in parsed:
        if isinstance(key, Pack):  # (its files' rows, in file order, each with the index of its key in `_k`)
            if rows is not None:
                yield key, rows
            continue
        if split is not None:
            rows = _after(rows, before)
            before += split.height
            stats.count(split)
        if pending is not None:
            rows = pl.concat([pending, rows], how="diagonal_relaxed")
        cut = rows.height if last else _open_tail(rows)
        pending = rows.slice(cut) if cut < rows.height else None
        if last:
            before = 0
        if cut:
            yield key, fold(rows.slice(0, cut))


def _with_last(items: Iterator) -> Iterator[tuple]:
    """(item, whether it is the last one)."""
    held = next(items, None)
    if held is None:
        return
    for item in items:
        yield held, False
        held = item
    yield held, True


def _chunks(stream, settings: Settings, keep: Keep | None, stats: LineStats, pool: Executor | None = None
            ) -> Iterator[pl.DataFrame | LineChunk]:
    """The raw lines worth parsing, in chunks of about PARSE_ROWS; every line: the stream's LineChunks
    as they are (split into lines where they are parsed). With a `pool`, the next chunks are split and
    searched for anchors there (the costly part) while this thread keeps their rows in order."""
    cut = iter_line_chunks(stream, settings.batch_bytes, settings.limits.max_line_bytes, stats)
    if keep is None:
        yield from cut
        return

    def scan(chunk: LineChunk) -> tuple[pl.DataFrame, pl.Series]:
        batch = chunk.frame(1)  # numbered from 1 until its place is known
        return batch, anchored(batch["raw"], keep)

    state = KeepState()
    gathered: list[pl.DataFrame] = []
    size, before = 0, 0
    for batch, hit_idx in (_ahead(pool, scan, cut, settings.jobs) if pool is not None else map(scan, cut)):
        batch = _after(batch, before)
        before += batch.height
        stats.count(batch)
        # filtered strings still point into the batch's buffers: copy the few kept ones out, so that memory
        # stays bounded by one batch
        rows, back, timer = keep_rows(batch, keep, state, hit_idx)
        kept = pl.from_arrow(batch[rows].to_arrow())
        if (before_rows := carried(state.tail, back, timer)):  # an untimed row on the batch's first lines
            kept = pl.concat([pl.concat(before_rows).unique(LINE).sort(LINE).filter(pl.col(LINE) > state.last_kept),
                              kept])
        state.tail = pl.from_arrow(batch.tail(LOOKBACK).to_arrow())
        batch = kept
        if batch.is_empty():
            continue
        state.last_kept = batch[LINE][-1]
        gathered.append(batch)
        size += batch.height
        if size >= PARSE_ROWS:
            yield pl.concat(gathered)
            gathered, size = [], 0
    if gathered:
        yield pl.concat(gathered)


def _after(rows: pl.DataFrame, before: int) -> pl.DataFrame:
    """Rows of a chunk split before its place was known (lines numbered from 1), placed after `before` lines."""
    return rows.with_columns(pl.col(c) + before for c in (LINE, "_line_end") if c in rows.columns) if before else rows


def _ahead(pool: Executor, fn, items: Iterator, depth: int) -> Iterator:
    """`map(fn, items)` with up to `depth` calls running ahead on `pool`, results in order."""
    running: deque[Future] = deque()
    for item in items:
        running.append(pool.submit(fn, item))
        if len(running) > depth:
            yield running.popleft().result()
    while running:
        yield running.popleft().result()


def _open_tail(rows: pl.DataFrame) -> int:
    """Index of the first row that may still belong to a multi-line event continuing in the next batch:
    the first traceback header near the end (a chain has several: 'The above exception was the direct
    cause ...'), or a trailing run of '\\r'-continued lines."""
    n = rows.height
    near = rows["text"].tail(TB_WINDOW).str.contains(TB_HEAD).arg_true()
    cut = n - min(n, TB_WINDOW) + int(near[0]) if len(near) else n
    cont = rows["cr_end"].fill_null(False)
    if n and cont[-1]:
        not_cont = (~cont).arg_true()
        cut = min(cut, int(not_cont[-1]) + 1 if len(not_cont) else 0)
    return cut


def ingest_members(members: Iterable[Member], settings: Settings, keep: Keep | None, formats: Formats,
                   out: Ingested, parse: bool = True, pool: Executor | None = None) -> None:
    """Read members one after the other into `out`: what each is, its dump text, its parsed rows (through
    one parsing stream: iter_files_rows) or, without `parse`, only its lines counted."""
    opened: list[tuple[FileInfo, LineStats]] = []

    def files() -> Iterator[tuple[int, object, FileContext, LineStats]]:
        for member in members:
            info, stream, ctx = open_member(member, settings, formats, out)
            if stream is not None and ctx is not None:
                opened.append((info, LineStats()))
                yield len(opened) - 1, stream, ctx, opened[-1][1]

    if parse:
        parts: dict[object, list[pl.DataFrame]] = {}
        for i, rows in iter_files_rows(files(), settings, keep, formats, pool):
            parts.setdefault(i, []).append(rows if keep is None else elide_user_data(rows, keep.quoted))
        for i, rows in parts.items():
            if isinstance(i, Pack):  # (one frame for its files: `_k` says which)
                names = pl.Series([opened[key][0].file for key in i.keys], dtype=pl.String)
                out.events.append(rows[0].with_columns(names.gather(rows[0]["_k"]).alias("file")).drop("_k"))
                continue
            out.events.append(pl.concat(rows, how="diagonal_relaxed").with_columns(
                pl.lit(opened[i][0].file).alias("file")))
    else:
        tiny = min(TINY_BYTES, settings.batch_bytes, settings.limits.max_line_bytes)
        for _, stream, _, stats in files():
            data = read_up_to(stream, tiny + 1)
            if len(data) <= tiny:  # (counted here: one polars call a file costs more than the file)
                ended = bool(data) and not data.endswith(b"\n")
                stats.lines, stats.bytes = data.count(b"\n") + ended, len(data)
                stats.truncated = stats.cut = int(ended and bool(getattr(stream, "cut", False)))
                stats.unended = int(ended) - stats.cut
                continue
            for _ in iter_line_batches(Prepend(stream, data), settings.batch_bytes, settings.limits.max_line_bytes,
                                       stats):
                pass
    for info, stats in opened:
        # (a line cut by the end of the data is marked in the rows; the report counts over-long lines here,
        # the cut is in bundle.skipped)
        info.lines, info.bytes, info.truncated = stats.lines, info.hole + stats.bytes, stats.truncated - stats.cut
        info.unended = bool(stats.unended)


def _drain(stream) -> int:
    n = 0
    while chunk := stream.read(1 << 20):
        n += len(chunk)
    return n


def _together(groups: list) -> list[list]:
    """The groups of a bundle read one after the other by one thread: consecutive small files together (so
    that they go through the analysis in packs), each other group alone (files read in parallel)."""
    out: list[list] = []
    before = False  # the group before was small
    for g in groups:
        size = getattr(g, "size", None)  # (a folder's files have one: discover.Bundle.groups)
        small = size is not None and size <= TINY_BYTES
        if small and before and len(out[-1]) < PACK_FILES:
            out[-1].append(g)
        else:
            out.append([g])
        before = small
    return out


def ingest(bundle: Bundle, settings: Settings, keep: Keep | None, formats: Formats | None = None,
           parse: bool = True) -> Ingested:
    """Read the whole bundle; `parse=False` only sniffs and counts lines. The files of a folder are read
    by `settings.jobs` threads (the heavy work runs in polars and pyarrow, outside the GIL), each with the
    chunks of its file split and searched ahead on `settings.jobs` more."""
    formats = formats or builtin_formats()
    groups = _together(list(bundle.groups()))
    with ThreadPoolExecutor(settings.jobs) if settings.jobs > 1 else nullcontext() as scanners:

        def work(together: list) -> Ingested:
            part = Ingested()
            ingest_members(itertools.chain.from_iterable(g() for g in together), settings, keep, formats, part,
                           parse, scanners)
            return part

        if settings.jobs > 1 and len(groups) > 1:
            with ThreadPoolExecutor(settings.jobs) as pool:
                parts = list(pool.map(work, groups))
        else:
            parts = [work(g) for g in groups]
    out = Ingested()
    for part in parts:  # in bundle order, whatever finished first
        out.files += part.files
        out.events += part.events
        out.dumps += part.dumps
    return out
