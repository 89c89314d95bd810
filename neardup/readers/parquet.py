"""Parquet files -> `RawLine`s of row dicts, numbered from 1, read in record batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import NotACrawlDump
from ..records import RawLine


def read_parquet(path: Path) -> Iterator[RawLine]:
    """The rows of a Parquet file; `NotACrawlDump` for an unreadable file or one without a `url` column."""
    yield from ParquetRows(path)


class ParquetRows:
    """`read_parquet`'s rows, a row group at a time, and how far into the file those read so far reach:
    the row group's bytes in the share of its rows read."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.read_position = 0

    def __iter__(self) -> Iterator[RawLine]:
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(self.path)
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise NotACrawlDump(f"{self.path}: unreadable Parquet ({exc})") from None
        if "url" not in pf.schema_arrow.names:
            raise NotACrawlDump(f"{self.path}: a Parquet file without a 'url' column")
        row_number = 0
        with pf:
            for group in range(pf.num_row_groups):
                start, end = _row_group_bytes(pf.metadata.row_group(group))
                rows, read = max(pf.metadata.row_group(group).num_rows, 1), 0
                for batch in pf.iter_batches(batch_size=1000, row_groups=[group]):
                    for rec in _parquet_rows(batch):
                        row_number += 1
                        read += 1
                        self.read_position = start + (end - start) * read // rows
                        yield RawLine(row_number, rec)


def _row_group_bytes(group: Any) -> tuple[int, int]:
    """Where a row group's column chunks lie in the file: (first byte, last byte + 1)."""
    spans = []
    for i in range(group.num_columns):
        col = group.column(i)
        first = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
        spans.append((first, first + col.total_compressed_size))
    return min(s for s, _ in spans), max(e for _, e in spans)


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
