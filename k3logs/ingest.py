"""Read every file of a bundle: sniff it, cut it into line batches, keep the lines the diagnosis needs
(or all of them), parse and fold them. Dumps are also kept whole (bounded) for environment facts.

The `Keep` filter is what makes `analyze` fast: one vectorised regex of literal anchors (signature
prefilters, lifecycle landmarks, attribution lines) over the raw lines, plus the context a kept line
needs: the whole traceback after a 'Traceback' header, the line before it (kernel continuations), and
the nearest earlier line that carries a time (for lines that carry none)."""
from __future__ import annotations

import functools
import io
import itertools
import re
from contextlib import nullcontext
from collections import deque
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator

import numpy as np
import polars as pl

from . import progress, redact
from .discover import Bundle, Member, Prepend, peek, read_up_to
from .fold import fold_continuations, fold_tracebacks
from .formats import Formats, builtin_formats
from .lines import LineChunk, LineStats, _split, crlf_line_ends, iter_line_batches, iter_line_chunks, open_text
from .parse import FileContext, parse_batch
from .schema import LINE, SUB, TRUNCATED
from .settings import Settings
from .sniff import HEAD_BYTES, Sniffed, sniff

TB_HEAD = r"Traceback \(most recent call last\)|Fatal Python error: |^Process [\w.-]+:$|Exception in thread "
# lines of a traceback (frames, code, markers, chain separators, the exception): kept after a header
TB_BODY = (r'File "|^\s|\]\s{2,}\S|Traceback|During handling|The above exception|Error|Exception|Exit|Interrupt'
           r"|Fatal|Thread 0x|Current thread|\^\^|~~|^\S*$")
EARLY_TIME = r"^.{0,80}?\d\d:\d\d:\d\d"  # a time of day near the start of a line
TEXT_KINDS = ("log", "k8s_events")  # small files of these kinds are also read whole as text, for facts
TB_WINDOW = 400  # lines kept after a traceback header (its frames and exception)
PARSE_ROWS = 200_000  # kept lines parsed together
TINY_BYTES = 64 << 10  # a file this small goes through the analysis in a pack of such files (see _Pack)
PACK_FILES = 8192      # files in a pack at most (and batch_bytes of them)
FILE = 1 << 32         # in a pack, line numbers are file * FILE + line (files apart, in order)


@dataclass(frozen=True)
class Keep:
    """Which raw lines to parse: those containing one of `anchors` (plus their context), except the lines
    `quoted` matches (user data: a logged prompt is nothing the diagnosis reads, and keeping one line a
    request would make memory grow with the requests); None = all."""

    anchors: tuple[str, ...]
    quoted: str = ""

    @functools.cached_property  # built once, not once per file (bundles may hold thousands of files)
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
    hole: int = 0        # leading NUL bytes skipped (counted in `bytes`)
    cut_at: int = 0      # a dump longer than max_dump_bytes: only this many bytes were read
    prose: bool = False  # sniffed as plain text (notes, a ticket): its lines mention errors, they are not events
    unended: bool = False  # its data ends inside a line: the file was cut off while it was written or copied


@dataclass
class Ingested:
    files: list[FileInfo] = field(default_factory=list)
    events: list[pl.DataFrame] = field(default_factory=list)   # parsed rows per file (with `file`)
    dumps: list[tuple[str, str, str]] = field(default_factory=list)  # (file, kind, text)


class _KeepState:
    """What the keep filter carries from one batch of a file to the next."""

    def __init__(self) -> None:
        self.since_tb = TB_WINDOW + 1
        self.tail: pl.DataFrame | None = None  # the batch before's last two rows (copied out)
        self.last_kept = 0  # the last line kept so far


def _anchored(raw: pl.Series, keep: Keep) -> pl.Series:
    """Indices of the lines of `raw` that hold an anchor and are no user data: the one pass over every line
    (any thread)."""
    hits = raw.str.contains(keep.regex).arg_true()
    if keep.quoted and len(hits):
        hits = hits.filter(~raw.gather(hits).str.contains(keep.quoted))
    return hits


def _keep_rows(batch: pl.DataFrame, keep: Keep, state: _KeepState, hit_idx: pl.Series | None = None
               ) -> tuple[pl.Series, int]:
    """Indices (sorted) of the rows of `batch` worth parsing: those with an anchor (`hit_idx`, if found
    already) plus their context; the context works on the few rows with an anchor, in file order. Also how
    many of the last rows of the batch before are context too (lines before an untimed hit that opens it)."""
    raw = batch["raw"]
    n = len(raw)
    hit_idx = _anchored(raw, keep) if hit_idx is None else hit_idx
    hits = raw.gather(hit_idx)
    parts = [hit_idx]
    # rows within TB_WINDOW after a traceback header (also one still open from the previous batch) that
    # look like part of a traceback; headers are among the hits ("Traceback" is an anchor)
    starts = hit_idx.filter(hits.str.contains(TB_HEAD)).to_list()
    spans = [(0, TB_WINDOW - state.since_tb)] if state.since_tb <= TB_WINDOW else []
    spans += [(st, st + TB_WINDOW) for st in starts]
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
    return pl.concat(parts).unique().sort(), back


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
    if sn.is_dump or (sn.kind in TEXT_KINDS and (member.size or 0) <= settings.limits.max_dump_bytes):
        # dumps are read whole for facts; so are free text (notes, shell transcripts) and Kubernetes events,
        # which name hosts ('Successfully assigned ns/pod to node')
        text, cut = _read_dump(stream, settings.limits.max_dump_bytes)
        if crlf:  # (as many lines: only the '\r' goes)
            text = text.replace("\r\n", "\n")
        info.cut_at = settings.limits.max_dump_bytes if cut else 0
        if settings.redact:  # a secret whose value is on the next line is only seen here, in the whole text
            text = redact.block(text)
        out.dumps.append((member.path, sn.kind if sn.is_dump else "text", text))
        whole = io.BytesIO(text.encode("utf-8"))
        whole.cut = cut or bool(getattr(stream, "cut", False))  # type: ignore[attr-defined]  (lines.iter_line_chunks)
        stream = whole
    return info, stream, FileContext(member.path, sn.kind, sn.wrappers, crlf)


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
        pack = _Pack()
        for key, stream, ctx, stats in files:
            if tiny:  # (a file that fits in one read, no line cut: the same rows whole or in a pack)
                data = read_up_to(stream, tiny + 1)
                if len(data) <= tiny:
                    pack.add(key, ctx, stats, data, bool(getattr(stream, "cut", False)))
                    if len(pack.keys) >= PACK_FILES or pack.size >= settings.batch_bytes:
                        yield None, None, None, pack, True
                        pack = _Pack()
                    continue
                stream = Prepend(stream, data)
            if pack.keys:
                yield None, None, None, pack, True
                pack = _Pack()
            for chunk, last in _with_last(_chunks(stream, settings, keep, stats, pool)):
                yield key, ctx, stats, chunk, last
        if pack.keys:
            yield None, None, None, pack, True

    def parse(item: tuple) -> tuple:
        key, ctx, stats, chunk, last = item
        if isinstance(chunk, _Pack):
            return chunk, None, chunk.rows(keep, formats, settings.limits.max_line_bytes), None, True
        if isinstance(chunk, pl.DataFrame):
            return key, stats, parse_batch(chunk, ctx, formats), None, last
        batch = chunk.frame(1)  # split here, on the pool; numbered from 1 until its place is known
        return key, stats, parse_batch(batch, ctx, formats), batch.select(TRUNCATED), last

    parsed = _ahead(pool, parse, chunks(), ahead or settings.jobs) if pool is not None else map(parse, chunks())
    pending: pl.DataFrame | None = None
    before = 0  # lines of the file's LineChunks already parsed
    for key, stats, rows, split, last in parsed:
        if isinstance(key, _Pack):  # (its files' rows, in file order, each with the index of its key in `_k`)
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
            yield key, fold_continuations(fold_tracebacks(rows.slice(0, cut)))


class _Pack:
    """Small files analysed together: their lines split, searched for anchors, kept, parsed and folded in
    one go, not one polars call of each kind per file (a fixed cost of about 3 ms a file: 100,000 tiny
    files took five minutes). Each file is one batch of its own, as it would be alone: lines are numbered
    in it, the keep filter's context stops at its ends, and a file's rows are told apart from the others'
    where they could meet (a partial record, a traceback's stream, a continued record; see _fold)."""

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
        raw, trunc = _split(b"".join(texts), max_line)
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
        hits = _anchored(raw, keep).to_numpy().astype(np.int64)
        if not len(hits):
            return None
        kept = _kept_rows(raw, hits, np.searchsorted(ends, hits, side="right"), starts, ends)
        file_at = np.repeat(np.array(which, dtype=np.int64), counts)[kept]
        local = kept - starts[np.searchsorted(ends, kept, side="right")] + 1
        batch = pl.DataFrame({LINE: file_at * FILE + local, "raw": raw.gather(kept), TRUNCATED: trunc.gather(kept)})
        return _fold(self._parse(batch, file_at, formats)).drop("_pid0")

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


def _kept_rows(raw: pl.Series, hits: np.ndarray, hit_file: np.ndarray, starts: np.ndarray, ends: np.ndarray
               ) -> np.ndarray:
    """_keep_rows over many files at once, each a whole file read in one batch (so nothing is carried from a
    batch before): the rows with an anchor, the traceback body within TB_WINDOW after a header (up to the
    file's end) and the two rows before an untimed hit (from the file's start)."""
    hit_raw = raw.gather(hits)
    timed = hit_raw.str.contains(EARLY_TIME).to_numpy()
    parts = [hits]
    heads = hits[hit_raw.str.contains(TB_HEAD).to_numpy()]
    if len(heads):
        last = np.minimum(heads + TB_WINDOW, ends[np.searchsorted(ends, heads, side="right")] - 1)
        lens = last - heads + 1
        window = np.unique(np.repeat(heads - np.cumsum(lens) + lens, lens) + np.arange(lens.sum()))
        parts.append(window[raw.gather(window).str.contains(TB_BODY).to_numpy()])
    untimed = hits[~timed]
    if len(untimed):
        first = starts[hit_file[~timed]]
        parts += [np.maximum(untimed - 1, first), np.maximum(untimed - 2, first)]
    return np.unique(np.concatenate(parts))


def _fold(rows: pl.DataFrame) -> pl.DataFrame:
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
    out = fold_continuations(fold_tracebacks(both)).filter(pl.col(LINE) % FILE != 0)
    local = [(pl.col(c) % FILE).alias(c) for c in (LINE, "_line_end") if c in out.columns]
    if "exc_lines" in out.columns:
        local.append(pl.col("exc_lines").list.eval(pl.element() % FILE))
    return out.with_columns(pl.col("_pid0").alias("pid"), file.alias("_k"), *local)


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
        return batch, _anchored(batch["raw"], keep)

    state = _KeepState()
    gathered: list[pl.DataFrame] = []
    size, before = 0, 0
    for batch, hit_idx in (_ahead(pool, scan, cut, settings.jobs) if pool is not None else map(scan, cut)):
        batch = _after(batch, before)
        before += batch.height
        stats.count(batch)
        # filtered strings still point into the batch's buffers: copy the few kept ones out, so that memory
        # stays bounded by one batch
        rows, back = _keep_rows(batch, keep, state, hit_idx)
        kept = pl.from_arrow(batch[rows].to_arrow())
        if back and state.tail is not None:  # an untimed hit on the batch's first lines: those before it
            kept = pl.concat([state.tail.tail(back).filter(pl.col(LINE) > state.last_kept), kept])
        state.tail = pl.from_arrow(batch.tail(2).to_arrow())
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
            parts.setdefault(i, []).append(rows)
        for i, rows in parts.items():
            if isinstance(i, _Pack):  # (one frame for its files: `_k` says which)
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
