"""Crawl dump -> records: the format of a file (`readers.sniff`), its reader (`readers/`, one module per
format), the records it gives (`records.RawLine`, checked by `records.validate`). Bad records become
(line, `Reject`); nothing is fatal but a file that is not a crawl dump at all.

Formats: JSON lines (`.jsonl`, `.ndjson`, `.json`, optionally `.gz`), CSV (`.csv`, `.csv.gz`) with a
header row, Parquet, WARC / WARC.gz / WET, ARC / ARC.gz, WACZ. Fields: `url` (required), `html` or
`text` (one required), optional `fetched_at`, `status`; any other field is kept as JSON in `extra`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

from .errors import NotACrawlDump
from .readers.arc import ArcBatches
from .readers.capture import SourcePages, StoredPageLookup
from .readers.csvfile import CsvRecords, read_csv
from .readers.jsonl import BLOCK_BYTES, MAX_LINE_BYTES, read_jsonl, read_jsonl_blocks
from .readers.parquet import ParquetRows, read_parquet
from .readers.sniff import detect_format
from .readers.wacz import WaczBatches
from .readers.warc import WarcBatches
from .records import RawLine, RecordBatch

__all__ = [
    "ARCHIVE_READERS",
    "check_dump",
    "detect_format",
    "file_sha256",
    "read_batches",
    "read_raw",
]

# The web archive formats, by `detect_format`'s name: each reader counts the records it skips.
ARCHIVE_READERS: dict[str, type[WarcBatches | ArcBatches | WaczBatches]] = {
    "warc": WarcBatches,
    "arc": ArcBatches,
    "wacz": WaczBatches,
}


def read_batches(
    path: Path,
    fmt: str,
    *,
    batch_records: int = 256,
    block_bytes: int = BLOCK_BYTES,
    max_line_bytes: int = MAX_LINE_BYTES,
    stored_pages: StoredPageLookup | None = None,
    source_pages: SourcePages | None = None,
) -> Iterable[Iterable[RawLine]]:
    """The records of a file in batches for the workers: `LineBlock`s of about `block_bytes` for JSON lines
    (`readers.jsonl.read_jsonl_blocks`), `RecordBatch`es of `batch_records` otherwise (for WARC, ARC and
    WACZ a reader of `ARCHIVE_READERS`, which counts the records it skips, and also cuts a batch at about
    `block_bytes` of record blocks). Each batch says how far into the file it reaches (`end_byte`).
    `stored_pages` finds the stored page a WARC revisit stands for when its record is not in the file;
    `source_pages` the pages the file's own records made (`WarcBatches.held_revisits`)."""
    if fmt == "warc":
        return WarcBatches(
            path,
            batch_records=batch_records,
            batch_bytes=block_bytes,
            stored_pages=stored_pages,
            source_pages=source_pages,
        )
    if fmt in ARCHIVE_READERS:
        return ARCHIVE_READERS[fmt](path, batch_records=batch_records, batch_bytes=block_bytes)
    if fmt == "jsonl":
        return read_jsonl_blocks(path, block_bytes=block_bytes, max_line_bytes=max_line_bytes)
    if fmt == "csv":
        return _batched(CsvRecords(path, max_line_bytes=max_line_bytes), batch_records)
    if fmt == "parquet":
        return _batched(ParquetRows(path), batch_records)
    raise NotACrawlDump(f"{path}: unknown format {fmt!r}")


def _batched(reader: CsvRecords | ParquetRows, size: int) -> Iterator[RecordBatch]:
    """`reader`'s records in batches of `size`, each with how far into the file the reader was."""
    records = iter(reader)
    while chunk := RecordBatch(islice(records, size)):
        chunk.end_byte = reader.read_position
        yield chunk


def read_raw(path: Path, fmt: str, *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[RawLine]:
    """Stream the records of a file without parsing their content (parsing runs in workers). A CSV record
    with a line over `max_line_bytes`, or longer than it in all, is a `Reject` (`readers.csvfile`)."""
    if fmt in ARCHIVE_READERS:
        yield from ARCHIVE_READERS[fmt](path).records()
    elif fmt == "jsonl":
        yield from read_jsonl(path)
    elif fmt == "csv":
        yield from read_csv(path, max_line_bytes=max_line_bytes)
    elif fmt == "parquet":
        yield from read_parquet(path)
    else:
        raise NotACrawlDump(f"{path}: unknown format {fmt!r}")


def check_dump(path: Path) -> str:
    """The format of a crawl dump (`detect_format`), after reading its start: a CSV or Parquet file
    without a url column raises `NotACrawlDump` here, before anything is written for it."""
    fmt = detect_format(path)
    if fmt in ("csv", "parquet"):
        next(iter(read_raw(path, fmt)), None)  # the generator, and its file, close as it is dropped
    return fmt


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()
