"""Parquet files -> `RawLine`s of row dicts, numbered from 1, read in record batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import NotACrawlDump
from ..records import RawLine


def read_parquet(path: Path) -> Iterator[RawLine]:
    """The rows of a Parquet file; `NotACrawlDump` for an unreadable file or one without a `url` column."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise NotACrawlDump(f"{path}: unreadable Parquet ({exc})") from None
    if "url" not in pf.schema_arrow.names:
        raise NotACrawlDump(f"{path}: a Parquet file without a 'url' column")
    row_number = 0
    for batch in pf.iter_batches(batch_size=1000):
        for rec in _parquet_rows(batch):
            row_number += 1
            yield RawLine(row_number, rec)


def _parquet_rows(batch: Any) -> list[dict[str, Any]]:
    """The rows of a record batch as dicts. A cell Python cannot hold (a string that is not UTF-8, a time
    beyond year 9999) does not sink its batch: a string becomes its bytes decoded with surrogateescape
    (which `validate` names as invalid UTF-8), any other value the text of why it is unreadable."""
    try:
        return batch.to_pylist()
    except (ValueError, OverflowError, TypeError):  # UnicodeDecodeError is a ValueError
        pass
    import pyarrow as pa

    columns: dict[str, list[Any]] = {}
    for name, col in zip(batch.schema.names, batch.columns, strict=True):
        try:
            columns[name] = col.to_pylist()
            continue
        except (ValueError, OverflowError, TypeError):
            pass
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            raw = col.cast(pa.large_binary()).to_pylist()
            columns[name] = [None if b is None else b.decode("utf-8", "surrogateescape") for b in raw]
            continue
        values = []
        for i in range(len(col)):
            try:
                values.append(col[i].as_py())
            except (ValueError, OverflowError, TypeError) as exc:
                values.append(f"unreadable {col.type}: {exc}")
        columns[name] = values
    return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
