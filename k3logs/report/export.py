"""Write event-table batches to Parquet, CSV or JSON lines as they come (nothing is held whole)."""
from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from k3logs.ingest.discover import Skip
from k3logs.schema import FILE, HOST, IP, LEVEL, NODE, PROCESS, SOURCE, STREAM, TS_QUALITY, WRAPPER, empty_events

STATISTICS = ("file", "line", "source", "node", "rank", "gpu", "pid", "level", "ts")
DELTAS = ("line", "line_end")  # columns stored as differences (consecutive line numbers: a bit or two each)
WRITE_BATCH_ROWS = 64 * 1024
LIST_SEPARATOR = "\u241f"  # between the links of a folded traceback in CSV cells
VIEWS = pl.CompatLevel.newest()
RFC3339 = "%Y-%m-%dT%H:%M:%S%.6fZ"  # times in CSV and JSON lines: RFC 3339, UTC, microseconds
# columns of few values (a file's name on each of its lines): dictionary-encoded in Parquet, and read back as
# categoricals (polars' Categorical, pyarrow's dictionary) from the Arrow schema the file keeps
CATEGORICAL = (FILE, SOURCE, WRAPPER, STREAM, NODE, PROCESS, HOST, IP, LEVEL, TS_QUALITY)
DICTIONARY = pa.dictionary(pa.int32(), pa.string())


STDOUT = "-"  # the output path that means standard output


class EventWriter:
    def __init__(self, out: Path | str, fmt: str):
        self.out, self.fmt = (sys.stdout.buffer if str(out) == STDOUT else Path(out)), fmt
        self._pq: pq.ParquetWriter | None = None
        self._fh = None
        self._header = True

    def __enter__(self) -> "EventWriter":
        if self.fmt == "parquet":
            # dictionary pages for the categorical columns only (on free text they cost a third of the time,
            # and lz4 takes most of their gain); line numbers as deltas (a third smaller files, and cheaper
            # than lz4 on them); min/max statistics only where readers filter (time, place, kind of line), not
            # on free text; values encoded 64 Ki at a time, not 1 Ki (a tenth less time)
            self._pq = pq.ParquetWriter(self.out, parquet_table(empty_events()).schema, compression="lz4",
                                        use_dictionary=list(CATEGORICAL),
                                        column_encoding=dict.fromkeys(DELTAS, "DELTA_BINARY_PACKED"),
                                        write_statistics=list(STATISTICS), write_batch_size=WRITE_BATCH_ROWS)
        else:
            self._fh = self.out if not isinstance(self.out, Path) else open(self.out, "wb")
        return self

    def write(self, batch: pl.DataFrame) -> None:
        if batch.is_empty():
            return
        if self._pq is not None:
            self._pq.write_table(parquet_table(batch))
            return
        batch = batch.with_columns(pl.col("ts").dt.strftime(RFC3339))  # (text formats: one way to write a time)
        if self.fmt == "csv":
            flat = batch.with_columns(
                pl.col("exc_types").list.join(LIST_SEPARATOR), pl.col("exc_messages").list.join(LIST_SEPARATOR),
                pl.col("exc_lines").cast(pl.List(pl.String)).list.join(","))
            flat.write_csv(self._fh, include_header=self._header)
            self._header = False
        else:
            batch.write_ndjson(self._fh)

    def __exit__(self, *exc) -> None:
        if self._pq is not None:
            if self._pq.is_open:
                self._pq.close()
        elif self._fh is not None:
            self._fh.flush() if self._fh is sys.stdout.buffer else self._fh.close()


def parquet_table(batch: pl.DataFrame) -> pa.Table:
    """A batch as the Parquet file holds it: the categorical columns dictionary-encoded, other text as plain
    strings (the Arrow schema the file keeps is what every reader gets back: no string views)."""
    table = batch.to_arrow(compat_level=VIEWS)  # (views: no copy from polars)
    for name in CATEGORICAL:
        i = table.schema.get_field_index(name)
        table = table.set_column(i, pa.field(name, DICTIONARY), pc.dictionary_encode(table.column(i)).cast(DICTIONARY))
    return table.cast(pa.schema([f.with_type(_plain(f.type)) for f in table.schema]))


def _plain(t: pa.DataType) -> pa.DataType:
    if t == pa.string_view():
        return pa.string()
    if pa.types.is_large_list(t):
        return pa.large_list(_plain(t.value_type))
    return t


def skipped_summary(skipped: list[Skip], show: int = 2) -> str:
    """What `events` did not read, on one line: the first few, with their reasons."""
    if not skipped:
        return ""
    first = "; ".join(f"{s.file}: {s.reason}" for s in skipped[:show])
    more = f"; and {len(skipped) - show} more" if len(skipped) > show else ""
    return f"{len(skipped)} skipped or read in part (`k3logs sniff` lists them all): {first}{more}"
