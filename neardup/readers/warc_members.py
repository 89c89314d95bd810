"""The records of a WARC.gz written a gzip member per record (as Heritrix, wget, warcio and Common Crawl write
them), read by the compiled loop of `neardup._archives` (_warc_members.c): each member inflated by
libdeflate, its record split and its capture made in C, in place of FastWARC's reader and the Python around
each of its records.

The loop reads only the members it is sure of (one whole, well-formed record each, a plain ASCII header)
and stops at any other: `MemberRecords.stopped_at` says where, and `WarcBatches` has FastWARC read the rest
of the file from the last member the loop read (the loop reads again where reading resumes after a
malformed record). A record read here is the capture FastWARC's path makes of it (tests/test_warc_members.py
holds the two to each other over real crawlers' archives and hostile records).
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from typing import BinaryIO

from .._archives import MemberReader
from .capture import WarcCapture

CHUNK_RECORDS = 64  # records per call into the loop: the reader's position moves on between calls
CHUNK_BYTES = 1 << 21
_MORE, _END, _STOPPED = 0, 1, 2


class MemberRecords:
    """The records of the open file `f` from byte `start` (a member's first byte): a page-like record's
    `WarcCapture`, another record as its type's name ('request', 'metadata', ...). After iteration,
    `stopped_at` is the offset of the first member the loop did not read, None when it read to the end, and
    `last_offset` the offset of the last record it read (None for none). `f`'s position follows the
    records read (the load's progress)."""

    def __init__(self, f: BinaryIO, start: int, warc_file: str, offset_in: str) -> None:
        self._f, self._start = f, start
        self._warc_file, self._offset_in = warc_file, offset_in
        self.stopped_at: int | None = None
        self.last_offset: int | None = None

    def __iter__(self) -> Iterator[WarcCapture | str]:
        reader = MemberReader()
        read = reader.read
        f, pos = self._f, self._start
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            while True:
                items, pos, status, last = read(
                    data, pos, CHUNK_RECORDS, CHUNK_BYTES, WarcCapture, self._warc_file, self._offset_in
                )
                f.seek(pos)
                if last >= 0:
                    self.last_offset = last
                yield from items
                if status == _STOPPED:
                    self.stopped_at = pos
                    return
                if status == _END:
                    return
