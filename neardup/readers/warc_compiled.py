"""The records of a WARC.gz read by the compiled loops of `neardup._archives` (_warc_members.c), in place of
FastWARC's reader and the Python around each of its records: `MemberRecords` for a file written a gzip
member per record (as Heritrix, wget, warcio and Common Crawl write them: each member inflated by
libdeflate, its record split and its capture made in C), `StreamRecords` for one gzipped as one stream (the
stream inflated by ISA-L, `inflate.GzipStream`, its records split in C).

A loop reads only the records it is sure of (whole and well formed, a plain ASCII header, blank lines and
the next record after it) and stops at any other: `stopped_at` says where, and `WarcBatches` has FastWARC
read the rest of the file from the last record the loop read (the loop reads again where reading resumes
after a malformed record). A record read here is the capture FastWARC's path makes of it
(tests/test_warc_compiled.py holds the two to each other over real crawlers' archives and hostile files).
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from typing import BinaryIO, cast

from .._archives import MemberReader
from .capture import WarcCapture
from .inflate import GzipStream

CHUNK_RECORDS = 64  # records per call into the loop: the reader's position moves on between calls
CHUNK_BYTES = 1 << 21
_MORE, _END, _STOPPED, _NEED_MORE = 0, 1, 2, 3


class _CompiledRecords:
    """A compiled loop's records of the open file `f` from offset `start` (a record's first byte): a
    page-like record's `WarcCapture`, another record as its type's name ('request', 'metadata', ...). After
    iteration, `stopped_at` is the offset of the first record the loop did not read, None when it read to
    the end, and `last_offset` the offset of the last record it read (None for none)."""

    def __init__(self, f: BinaryIO, start: int, warc_file: str, offset_in: str) -> None:
        self._f, self._start = f, start
        self._warc_file, self._offset_in = warc_file, offset_in
        self.stopped_at: int | None = None
        self.last_offset: int | None = None

    def _note(self, pos: int, status: int, last: int) -> bool:
        """Note a call's last record read and where the loop stopped (at `pos`); whether the loop is done."""
        if last >= 0:
            self.last_offset = last
        if status == _STOPPED:
            self.stopped_at = pos
        return status in (_STOPPED, _END)


class MemberRecords(_CompiledRecords):
    """The records of a file gzipped a member per record (offsets are its members'); `f`'s position follows
    the records read (the load's progress)."""

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
                done = self._note(pos, status, last)
                yield from items
                if done:
                    return


class StreamRecords(_CompiledRecords):
    """The records of a WARC gzipped as one stream, `f` its inflated stream (`inflate.GzipStream`: its pieces
    are fed as inflated, `read1`); offsets are in the inflated stream."""

    def __iter__(self) -> Iterator[WarcCapture | str]:
        reader = MemberReader()
        read = reader.read_stream
        f = cast(GzipStream, self._f)
        f.seek(self._start)
        reader.feed(b"", self._start)
        final = False
        while True:
            items, pos, status, last = read(
                final, CHUNK_RECORDS, CHUNK_BYTES, WarcCapture, self._warc_file, self._offset_in
            )
            done = self._note(pos, status, last)
            yield from items
            if done:
                return
            if status == _NEED_MORE:  # the next record runs past the bytes at hand: a piece more
                piece = f.read1()
                final = not piece
                reader.feed(piece, -1)
