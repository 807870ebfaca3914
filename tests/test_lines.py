"""lines.iter_line_batches: line numbers count b'\\n' only (as `grep -n` does), whatever the batch size; long
lines are cut and flagged without being held; decoding never fails."""
from __future__ import annotations

import codecs
import io
import tracemalloc

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from k3logs.ingest.lines import LineStats, crlf_line_ends, iter_line_batches, open_text


def read_lines(data: bytes, batch_bytes: int = 1 << 20, max_line: int = 1 << 20,
               stats: LineStats | None = None) -> pl.DataFrame:
    parts = list(iter_line_batches(io.BytesIO(data), batch_bytes, max_line, stats))
    return pl.concat(parts) if parts else pl.DataFrame(schema={"line": pl.Int64, "raw": pl.String,
                                                               "truncated": pl.Boolean})


def expected_pieces(data: bytes) -> list[bytes]:
    """What `grep -n` numbers: the pieces between newlines, the last one only when it is not empty."""
    pieces = data.split(b"\n")
    return pieces[:-1] if pieces[-1] == b"" else pieces


def test_lines_are_numbered_from_one_on_newlines():
    df = read_lines(b"first\nsecond\nthird\n")
    assert df["line"].to_list() == [1, 2, 3]
    assert df["raw"].to_list() == ["first", "second", "third"]
    assert not df["truncated"].any()


def test_final_line_without_newline_is_counted():
    df = read_lines(b"one\ntwo")
    assert df.rows() == [(1, "one", False), (2, "two", False)]


def test_empty_lines_keep_their_numbers():
    assert read_lines(b"\n\nx\n\n")["raw"].to_list() == ["", "", "x", ""]


def test_tqdm_line_redrawn_with_carriage_returns_is_one_line():
    bar = b"Loading: 10%|#| 1/10 [00:01<00:09]\rLoading: 50%|#####| 5/10 [00:05<00:05]\rLoading: 100%|##| 10/10\n"
    df = read_lines(bar + b"INFO next\n")
    assert df["line"].to_list() == [1, 2]
    assert df["raw"][0].count("\r") == 2 and df["raw"][1] == "INFO next"


def test_crlf_counts_one_line_per_newline():
    df = read_lines(b"a\r\nb\r\n\r\nc")
    assert df["line"].to_list() == [1, 2, 3, 4]
    assert df["raw"].to_list() == ["a\r", "b\r", "\r", "c"]


def test_invalid_utf8_is_replaced_not_raised():
    df = read_lines(b"ok\n\xff\xfe bad \xc3\n\xe4\xb8\xad\xe6\x96\x87 fine\n")
    assert df["raw"].to_list() == ["ok", "\ufffd\ufffd bad \ufffd", "\u4e2d\u6587 fine"]


def test_utf16_with_bom_is_recoded_with_the_same_line_numbers():
    text = "INFO first \u00e9\r\nsecond\nthird"
    for bom_encoding in ("utf-16-le", "utf-16-be"):
        bom = codecs.BOM_UTF16_LE if bom_encoding.endswith("le") else codecs.BOM_UTF16_BE
        raw = bom + text.encode(bom_encoding)
        stream = open_text(io.BytesIO(raw), raw[:64])
        df = pl.concat(list(iter_line_batches(stream, 1 << 20, 1 << 20)))
        assert df["raw"].to_list() == ["INFO first \u00e9\r", "second", "third"]


def test_utf16_is_read_whole_with_tiny_batches():
    raw = codecs.BOM_UTF16_LE + "".join(f"line {i}\n" for i in range(50)).encode("utf-16-le")
    for batch in (1, 3, 7):
        stream = open_text(io.BytesIO(raw), raw[:64])
        df = pl.concat(list(iter_line_batches(stream, batch, 1 << 20)))
        assert df["raw"].to_list() == [f"line {i}" for i in range(50)], batch


def test_line_over_the_limit_is_cut_and_flagged():
    df = read_lines(b"short\n" + b"word " * 1000 + b"\nafter\n", max_line=1024)
    assert df["line"].to_list() == [1, 2, 3]
    assert df["raw"][1] == ("word " * 205)[:1024]   # the cut falls between two words
    assert df["truncated"].to_list() == [False, True, False]


@pytest.mark.parametrize("size,batch", [(1 << 10, 1 << 20), (1 << 16, 1 << 12)])  # in one read; in pieces
def test_a_token_the_limit_cuts_leaves_no_prefix(size, batch):
    token = b"hf_" + b"Zq7vX2pL9kR4" * 5
    line = b"RuntimeError: " + b"w " * ((size - 20) // 2) + token
    df = read_lines(line + b"\nnext\n", max_line=size, batch_bytes=batch)
    assert df["truncated"].to_list() == [True, False]
    assert df["raw"][0].endswith("w ") and "hf_" not in df["raw"][0]
    df = read_lines(b"x " * (size // 2) + b"tail words\n", max_line=size, batch_bytes=batch)  # a cut between tokens keeps all
    assert df["raw"][0] == "x " * (size // 2)


def test_line_of_exactly_the_limit_is_not_truncated():
    df = read_lines(b"y" * 1024 + b"\n", max_line=1024, batch_bytes=100)
    assert df.rows() == [(1, "y" * 1024, False)]


class _Generated(io.RawIOBase):
    """A stream of `n` bytes of one giant line of words followed by a short one, produced on the fly."""

    def __init__(self, n: int):
        self.left, self.tail = n, b"\nlast line\n"
        self.at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.left > 0:
            k = min(len(b), self.left)
            b[:k] = (b"z " * (k // 2 + 2))[self.at % 2: self.at % 2 + k]
            self.left -= k
            self.at += k
            return k
        k = min(len(b), len(self.tail))
        b[:k] = self.tail[:k]
        self.tail = self.tail[k:]
        return k


def test_twenty_megabyte_line_is_cut_without_being_held():
    stats = LineStats()
    tracemalloc.start()
    parts = list(iter_line_batches(io.BufferedReader(_Generated(20 << 20)), 64 << 10, 1024, stats))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    df = pl.concat(parts)
    assert df.rows() == [(1, "z " * 512, True), (2, "last line", False)]
    assert stats.truncated == 1 and stats.lines == 2 and stats.bytes == (20 << 20) + 11
    assert peak < 4 << 20  # never the whole 20 MB line


def test_over_long_final_line_without_newline_is_cut_once():
    df = read_lines(b"a\n" + b"q," * 5_000, max_line=100, batch_bytes=256)
    assert df.rows() == [(1, "a", False), (2, "q," * 50, True)]


def test_tiny_batches_give_the_same_lines_as_one_batch():
    data = (b"INFO 08-11 07:35:59 [core.py:1] start\r\n" + b"\xff\xfe broken\n" + b"bar 1/4\rbar 4/4\n"
            + b"long " * 100 + b"\n\n" + b"no newline at the end")
    whole = read_lines(data, max_line=200)
    for batch in (1, 2, 5, 17, 64):
        assert read_lines(data, batch_bytes=batch, max_line=200).rows() == whole.rows(), batch


class Trickle(io.RawIOBase):
    """A stream that gives at most `step` bytes a read, as a decompressing one gives one step's output."""

    def __init__(self, data: bytes, step: int):
        self._data, self._step, self._pos = data, step, 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self._step if n is None or n < 0 else min(n, self._step)
        piece = self._data[self._pos:self._pos + n]
        self._pos += len(piece)
        return piece


def test_a_stream_giving_little_at_a_time_is_still_read_in_full_batches():
    # a gzip member gives tens of KiB a read: a batch per read would pay each batch's fixed cost hundreds
    # of times over (a gzipped bundle read at a tenth of the speed)
    data = b"".join(b"line %06d of a gzipped log\n" % i for i in range(20000))
    batches = list(iter_line_batches(Trickle(data, 1000), 64 * 1024, 1 << 20))
    assert len(batches) == -(-len(data) // (64 * 1024))
    assert pl.concat(batches).rows() == read_lines(data).rows()


def test_stats_count_lines_bytes_and_truncations():
    stats = LineStats()
    read_lines(b"a\n" + b"b" * 50 + b"\nc", max_line=10, stats=stats)
    assert (stats.lines, stats.bytes, stats.truncated) == (3, 2 + 51 + 1, 1)


def test_empty_stream_gives_no_lines():
    assert read_lines(b"").height == 0


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400), batch=st.integers(1, 64))
def test_any_bytes_give_grep_line_numbers(data, batch):
    df = read_lines(data, batch_bytes=batch, max_line=1 << 20)
    pieces = expected_pieces(data)
    assert df["line"].to_list() == list(range(1, len(pieces) + 1))
    assert df["raw"].to_list() == [p.decode("utf-8", "replace") for p in pieces]


@settings(max_examples=200, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b"\n", b"\r", b"\xff", b"\xe4\xb8\xad", b"xxxxxxxxxx"]), max_size=80)
       .map(b"".join), batch=st.integers(1, 32), max_line=st.integers(1, 40))
def test_any_bytes_with_a_small_line_limit_keep_numbering_and_flag_long_lines(data, batch, max_line):
    df = read_lines(data, batch_bytes=batch, max_line=max_line)
    pieces = expected_pieces(data)
    assert df["line"].to_list() == list(range(1, len(pieces) + 1))
    assert df["truncated"].to_list() == [len(p) > max_line for p in pieces]


def test_utf8_bom_is_dropped_so_the_first_line_is_clean():
    raw = codecs.BOM_UTF8 + b"INFO 08-11 07:35:59 [core.py:1] first\nsecond\n"
    df = pl.concat(list(iter_line_batches(open_text(io.BytesIO(raw), raw[:64]), 1 << 20, 1 << 20)))
    assert df["raw"].to_list() == ["INFO 08-11 07:35:59 [core.py:1] first", "second"]


def test_crlf_line_ends_are_every_line_end_of_the_head_not_a_few_continued_records():
    assert crlf_line_ends(b"INFO a\r\nINFO b\r\nINFO c")
    # vLLM ends the lines of a record it continues with '\r\n', the others with '\n'
    assert not crlf_line_ends(b"INFO a\r\n  more of a\r\nINFO b\nINFO c\n")
    assert not crlf_line_ends(b"one line\r\n") and not crlf_line_ends(b"")
    assert crlf_line_ends(codecs.BOM_UTF16_LE + "INFO a\r\nINFO b\r\n".encode("utf-16-le"))  # PowerShell's `>`
