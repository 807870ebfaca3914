"""incidents.parquet: the scan's table, a row per bundle (SCHEMA), written whole and atomically."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from k3logs.report.assemble import FACT_KEYS, FACT_TYPES

TABLE = "incidents.parquet"
ARROW_TYPES = {str: pa.string(), int: pa.int64(), bool: pa.bool_()}
SCHEMA = pa.schema([
    ("path", pa.string()),               # the entry's name under ARCHIVE
    ("content_hash", pa.string()),       # see content_hash()
    ("bytes", pa.int64()),               # size on disk
    ("healthy", pa.bool_()),
    ("category", pa.string()),
    ("signature", pa.string()),
    ("title", pa.string()),
    ("confidence", pa.string()),
    ("node", pa.string()),
    ("rank", pa.int64()),
    ("phase", pa.string()),
    ("first_causal_time", pa.timestamp("us", tz="UTC")),
    ("first_causal_file", pa.string()),
    ("first_causal_line", pa.int64()),
    ("first_causal_text", pa.string()),
    ("other_template", pa.string()),     # category other: the masked message
    ("files", pa.int64()),
    ("lines", pa.int64()),
    ("skipped", pa.int64()),             # files not read, or read in part (listed in the report)
    # each fact's distinct values, typed: [8], [570, 580] (nodes that differ), ["vllm/vllm-openai:kimi-k3"]
    ("environment", pa.struct([(k, pa.list_(ARROW_TYPES[FACT_TYPES.get(k, str)])) for k in FACT_KEYS])),
    ("error", pa.string()),              # null when the bundle was analysed whole
    ("report", pa.string()),             # the report's path relative to OUT (null without a report)
    ("analysis_key", pa.string()),
])


# ----------------------------------------------------------------------------------------------
# the table
# ----------------------------------------------------------------------------------------------
def _atomic_write(path: Path, data: bytes | None = None, table: pa.Table | None = None) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if table is not None:
            pq.write_table(table, tmp, compression="zstd")
        else:
            tmp.write_bytes(data or b"")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_table(path: Path, rows: Iterable[dict]) -> None:
    """The rows sorted by path, written to a temporary file then renamed over `path`."""
    rows = sorted(rows, key=lambda r: r["path"])
    _atomic_write(path, table=pa.Table.from_pylist(rows, schema=SCHEMA))


def read_table(path: Path) -> list[dict]:
    """Rows of an incidents.parquet written by this version of scan ([] when there is none, or it has
    another schema: then every bundle is analysed again)."""
    if not path.is_file():
        return []
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError):
        return []
    return table.to_pylist() if table.schema.equals(SCHEMA) else []
