"""WARC, WARC.gz and WET archives -> the records the rest of ingest reads (FastWARC, and a compiled loop for
the common case).

The main process only splits the archive into records (`WarcBatches`): a WARC.gz by a compiled loop
(`warc_compiled`: a gzip member per record inflated by libdeflate, or one stream by ISA-L) up to any record
it does not read cleanly, everything else by FastWARC's reader (its own inflate, so that offsets are
offsets into the compressed file); each record's bytes cross to a worker as a `WarcCapture` (`capture.py`; its block
through shared memory, `shared_captures.py`), and `WarcCapture.record()` does the per-page work there:
HTTP header, chunked and Content-Encoding decoding, the HTML test, the charset (`payload.py`).

Records:
- `response` (an HTTP response): a page; status from the status line, `fetched_at` from WARC-Date, url
  from WARC-Target-URI. `resource`: a page with status 200. `conversion` (WET): a plain-text page.
- `revisit`: a page holding the payload of the record it refers to (in the same file, before or after
  it, by WARC-Refers-To or by payload digest; else a page an earlier ingest stored with the same payload
  digest, `WarcBatches.stored_pages`), so the report counts it as a byte-identical duplicate; `extra`
  names that record (or page). A revisit whose record is in neither is a bad record saying so.
- `request`, `metadata`, `warcinfo`, `continuation`: skipped and counted (`WarcBatches.skipped`).
- A payload that is not HTML (by Content-Type, else by sniffing) is a bad record `not HTML <mime>`.
- A malformed record (an unreadable header, a Content-Length that overruns the next record, a record
  cut off at the end of the file) is a bad record naming its byte offset; reading resumes at the next
  record header (`WARC/x.y`) found in the file. A file gzipped as one stream that is cut short keeps every
  complete record and ends in one "truncated compressed file" reject; one failing its CRC keeps none.
- A Content-Encoding is inflated at most to twice the page limit: a bomb is a "page too large" reject.

Every page keeps in `extra`: `warc_file`, `warc_record_id`, `warc_offset` (of the record in the file as
stored, compressed or not; for a file gzipped as one stream, where no record has an offset of its own,
in the decompressed stream, and `warc_offset_in` says so), `warc_type`, `payload_digest`, `charset` (the encoding used) and `charset_source`, and
`warc_truncated` when the crawler cut the payload short (its text may be partial).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, cast

from fastwarc.warc import ArchiveIterator, WarcRecordType

from ..records import RawLine, RecordBatch
from ..rejects import Reject, RejectKind
from .capture import BATCH_BYTES, SourcePages, StoredPageLookup, WarcCapture, record_batches
from .inflate import GzipBreak, GzipStream, raw_position
from .jsonl import LineBlock
from .warc_compiled import MemberRecords, StreamRecords

WARC_MAGIC = b"WARC/"
FRAMED_MAGIC = (b"\x04\x22\x4d\x18", b"\x28\xb5\x2f\xfd")  # LZ4 frame, Zstandard frame
_GZIP_MAGIC = b"\x1f\x8b\x08"
_PAGE_TYPES = (
    WarcRecordType.response | WarcRecordType.resource | WarcRecordType.revisit | WarcRecordType.conversion
)
_RESYNC_WINDOW = 1 << 20
# A record's version line after the previous record's end (WARC/0.17, 0.18, 1.0, 1.1, ...).
_NEXT_HEADER = re.compile(rb"\r?\n\r?\nWARC/\d+\.\d+\r?\n")
_NEXT_HEADER_BYTES = 64  # a search this far back finds a header split between two inflated pieces
_VERSION_LINE = re.compile(rb"\nWARC/\d+\.\d+\r?\n")
RECENT_BYTES = 32 << 20  # page records kept for revisits: ~2,500 pages of 13 KB


def is_warc_head(head: bytes) -> bool:
    """Whether `head` (the file's first bytes, after gunzip) starts a WARC file."""
    return head[:5] == WARC_MAGIC


def is_framed_warc(path: Path) -> bool:
    """Whether `path` is a WARC compressed with LZ4 or Zstandard (FastWARC reads its first record)."""
    with open(path, "rb") as f:
        if f.read(4) not in FRAMED_MAGIC:
            return False
        f.seek(0)
        try:
            return next(iter(ArchiveIterator(f, parse_http=False)), None) is not None
        except OSError:
            return False


def _headers(rec: Any) -> dict[str, str]:
    """A record's WARC header by lower-case name (one call into FastWARC: 5x faster than a `get` per field)."""
    return {k.lower(): v for k, v in rec.headers.items()}


def _type_name(rtype: WarcRecordType) -> str:
    return str(rtype)  # FastWARC names its types: 'response', 'revisit', ...


def _uri(value: str | None) -> str:
    """A WARC header's URI: WARC 1.0 wraps it in `<>`, which is taken off as a pair; a bracket at one end only
    is part of the URL (a crawled href with a stray `>`)."""
    uri = (value or "").strip()
    return uri[1:-1].strip() if uri.startswith("<") and uri.endswith(">") else uri


_PAGE_SOURCE_NAMES = ("response", "resource")  # the records a revisit refers to


@dataclass(frozen=True, slots=True)
class RecordIndex:
    """The offsets of a WARC file's response and resource records, by WARC-Record-ID and by payload digest
    (the first record with it)."""

    by_id: dict[str, int]
    by_digest: dict[str, int]

    def find(self, refers_to: str | None, payload_digest: str | None) -> int | None:
        """The offset of the record a revisit refers to: by WARC-Refers-To, else by its payload digest."""
        pos = self.by_id.get(refers_to) if refers_to else None
        if pos is None and payload_digest:
            pos = self.by_digest.get(payload_digest)
        return pos


# `_deferred`'s revisits waiting for their records (by the offsets of those), what it yields, and how it links
_Waiting = dict[int, list[tuple[int, WarcCapture]]]
_Linked = Iterator[tuple[int, WarcCapture]]
_Link = Callable[[int, WarcCapture | None], _Linked]


@dataclass(slots=True)
class _Scan:
    """Where `WarcBatches._scan` is: the records read so far (a record's number), and the last capture read,
    held back one record: a read error right after it can still flag its length."""

    number: int = 0
    held: WarcCapture | None = None
    held_number: int = 0
    prev_pos: int = -1  # the offset of the last page-like record (frames holding several records)
    last_pos: int = -1  # the offset of the last record read since reading began or resumed (after an error)

    def hold(self, cap: WarcCapture) -> Iterator[tuple[int, WarcCapture]]:
        """Hold `cap` (record `number`), giving up the one held before."""
        if self.held is not None:
            yield self.held_number, self.held
        self.held, self.held_number = cap, self.number

    def release(self) -> Iterator[tuple[int, WarcCapture]]:
        """The capture held, if any, now."""
        if self.held is not None:
            yield self.held_number, self.held
            self.held = None


class WarcBatches:
    """The page-like records of a WARC file as batches of `RawLine(record number, WarcCapture)`, with
    bad records (malformed, cut off) as `RawLine(record number, Reject)`, which `validate` returns as is;
    a batch holds at most `batch_records` records and about `batch_bytes` of their blocks.

    A file gzipped per record is read by the compiled member loop (`MemberRecords`), FastWARC taking over
    from a member the loop does not read; offsets are those of the records' gzip members. One gzipped as a
    single stream is inflated by ISA-L (`inflate.GzipStream`), its records split by the compiled stream loop
    (`StreamRecords`) as far as it reads them, and offsets are into the decompressed stream
    (`warc_offset_in` says which). After iteration, `skipped` counts the
    records that are not pages by WARC-Type, and `revisits` the revisit records linked to their record.

    A stream cannot be sought: a revisit of a record read long before (no longer among those kept,
    `_remember`) is linked by one more pass over the stream, or, when the caller stores the pages as it reads
    them (`source_pages`), held back and linked to the page its record made (`held_revisits`)."""

    def __init__(
        self,
        path: Path,
        *,
        batch_records: int = 256,
        batch_bytes: int = BATCH_BYTES,
        stored_pages: StoredPageLookup | None = None,
        source_pages: SourcePages | None = None,
        compiled: bool = True,
    ) -> None:
        self.path = Path(path)
        self.name = self.path.name
        self.batch_records, self.batch_bytes = batch_records, batch_bytes
        self.skipped: Counter[str] = Counter()
        self.revisits = 0
        members, one_stream = _compression(self.path)
        self._members = members and not one_stream  # offsets are gzip members'
        self._one_stream = one_stream
        with open(self.path, "rb") as f:
            # FastWARC reads LZ4 and Zstandard too; a record's offset is its frame's while frames and
            # records are one to one, none after two records share a frame
            self._framed = f.read(4) in FRAMED_MAGIC
        # The compiled loops read what they can of a gzipped file (`compiled=False`: FastWARC reads all of it,
        # the path the loops are held to in the tests)
        self._compiled = compiled and (self._members or one_stream)
        self._no_offsets = False
        self._recent: OrderedDict[int, WarcCapture] = OrderedDict()
        self._recent_bytes = 0
        self.offset_in = "gunzipped stream" if one_stream else "file"
        self._by_id: dict[str, int] = {}  # record id -> offset of a response / resource
        self._by_digest: dict[str, int] = {}  # payload digest -> offset of the first with it
        self._cut: dict[str, int] = {}  # record id or payload digest -> offset of a record cut off
        self._aux_streams: dict[str, BinaryIO] = {}
        self._reading: BinaryIO | None = None  # the first pass's stream, while it reads
        # Looks up a page stored by an earlier ingest for a revisit whose record is not in this file.
        self.stored_pages = stored_pages
        # Finds the pages this file's records made, once the caller has stored `__iter__`'s batches.
        self.source_pages = source_pages if one_stream else None
        self._numbers: dict[int, int] = {}  # offset -> number of each page record (with source_pages)
        self._held: list[tuple[int, WarcCapture]] = []  # revisits waiting for `held_revisits`
        # Where a file gzipped as one stream stops early (cut short, or failing its CRC), by any read of it.
        self._break: GzipBreak | None = None

    def _open(self) -> BinaryIO:
        if self._one_stream:
            return cast(BinaryIO, GzipStream(self.path, on_break=self._on_break))
        return open(self.path, "rb")

    @contextmanager
    def _aux(self, name: str) -> Iterator[BinaryIO]:
        """A stream for the reads beside the main pass (`_next_record`, `_record_end`), one per use. A file
        gzipped as one stream keeps it open: those reads go forward, and a new stream would inflate the
        file again from its start for each (quadratic in a stream of many malformed records)."""
        if not self._one_stream:
            with open(self.path, "rb") as f:
                yield f
            return
        if name not in self._aux_streams:
            self._aux_streams[name] = self._open()
        yield self._aux_streams[name]

    def _on_break(self, brk: GzipBreak) -> None:
        if self._break is None or brk.at < self._break.at:
            self._break = brk

    @property
    def read_position(self) -> int:
        """How far into the file (bytes as stored) the records read so far reach; 0 outside the first pass."""
        return raw_position(self._reading)

    def __iter__(self) -> Iterator[RecordBatch | LineBlock]:
        """Batches of records, each with how far into the file it reaches (`RecordBatch.end_byte`); a
        one-stream file failing its CRC ends in a `LineBlock` holding the reject, with `discard_from` 1: the
        records sent before came from a stream that failed its check."""
        corrupt: list[LineBlock] = []

        def lines() -> Iterator[RawLine]:
            for number, item in self._records():
                if isinstance(item, Reject) and item.kind == RejectKind.CORRUPT_FILE:  # the last item
                    corrupt.append(LineBlock(number, b"", item, discard_from=1))
                else:
                    yield RawLine(number, item)

        yield from record_batches(lines(), self)
        yield from corrupt

    def record_lists(self) -> Iterator[list[RawLine]]:
        """The batches as lists, a failed stream's `LineBlock` as its one reject (for a reader that
        cannot take back the records it was given before: it keeps them)."""
        for batch in self:
            if isinstance(batch, LineBlock):
                assert batch.error is not None
                yield [RawLine(batch.error_line, batch.error)]
            else:
                yield batch

    def records(self) -> Iterator[RawLine]:
        for batch in self.record_lists():
            yield from batch

    def _capture(self, rec: Any, pos: int, block: bytes, h: dict[str, str]) -> WarcCapture:
        get = h.get
        # positional, in `WarcCapture`'s field order: a third less time than by keyword, once per record
        return WarcCapture(
            _type_name(rec.record_type),
            _uri(get("warc-target-uri")),  # url
            get("warc-date"),
            get("warc-record-id"),
            pos,  # offset
            self.name,  # warc_file
            block,
            get("content-type"),
            get("warc-payload-digest"),
            get("warc-truncated"),
            None,  # original
            get("warc-refers-to"),
            self.offset_in,
            None,  # pending
            False,  # forward
            _uri(get("warc-refers-to-target-uri")) or None,  # refers_to_url
            get("warc-refers-to-date"),
        )

    def _records(self) -> Iterator[tuple[int, WarcCapture | Reject]]:
        """(record number, capture or `Reject`) for every page-like or bad record; the others are counted.

        A revisit whose record is not among those read before it waits for the end of the file: its
        record may come later in the file (a file holding two sessions), else it may be a page stored by
        an earlier ingest (`stored_pages`). In a file gzipped as one stream a record is found again only by
        inflating the stream up to it, so a revisit of a record no longer kept (`_remember`) waits for one
        more pass that reads all of them, or, given `source_pages`, for `held_revisits`. The waiting revisits
        come last, each with its own record number."""
        waiting: list[tuple[int, WarcCapture]] = []
        try:
            for number, item in self._scan():
                if isinstance(item, WarcCapture) and (item.pending is not None or item.forward):
                    waiting.append((number, item))
                else:
                    yield number, item
        finally:
            for f in self._aux_streams.values():
                f.close()
            self._aux_streams.clear()
        if self._break is not None and self._break.kind == "corrupt":
            return  # nothing read from the file is kept
        reread: list[tuple[int, WarcCapture]] = []
        for number, cap in waiting:
            if cap.forward:
                pos = self.index.find(cap.refers_to, cap.payload_digest)
                if pos is None:
                    cut = self._cut.get(cap.refers_to or "") if cap.refers_to else None
                    if cut is None and cap.payload_digest:
                        cut = self._cut.get(cap.payload_digest)
                    if cut is not None:
                        yield number, replace(cap, forward=False, record_cut=cut)
                    else:
                        yield number, self._stored_copy(cap)
                    continue
                cap = replace(cap, forward=False, pending=pos)
            if self._one_stream and cap.pending not in self._recent:
                reread.append((number, cap))
            else:
                original = self._read_at(cap.pending) if cap.pending is not None else None
                if original is not None:
                    self.revisits += 1
                yield number, replace(cap, original=original, pending=None)
        if reread and self.source_pages is not None:
            self._held = reread
        elif reread:
            yield from self._deferred(reread)

    @property
    def n_held(self) -> int:
        """How many revisits `__iter__` held back for `held_revisits`."""
        return len(self._held)

    def held_revisits(self) -> Iterator[RecordBatch]:
        """The revisits `__iter__` held back (given `source_pages`), in batches, once the caller has stored
        the pages of its batches: each linked to the page its record made, found by one `source_pages` call a
        batch (the pages' HTML is in memory a batch at a time). A revisit whose record made no page (a payload
        that is not HTML, say) is linked by one more pass over the stream, as without `source_pages`, and
        rejected as that record is."""
        held, self._held = self._held, []
        if held and self.source_pages is not None:
            yield from record_batches(self._linked_to_pages(held, self.source_pages), self)

    def _linked_to_pages(
        self, held: list[tuple[int, WarcCapture]], source_pages: SourcePages
    ) -> Iterator[RawLine]:
        """`held_revisits`' records: the revisits linked to their pages, a batch of them a lookup, then those
        whose record made no page, read again from the stream."""
        numbers = self._numbers  # offset -> record number
        rest: list[tuple[int, WarcCapture]] = []
        for start in range(0, len(held), self.batch_records):
            batch = [
                (number, cap, numbers.get(cast(int, cap.pending)))
                for number, cap in held[start : start + self.batch_records]
            ]
            made = source_pages(sorted({record for _, _, record in batch if record is not None}))
            for number, cap, record in batch:
                page = made.get(record) if record is not None else None
                if page is None:
                    rest.append((number, cap))
                    continue
                self.revisits += 1
                yield RawLine(number, replace(cap, pending=None, stored=page))
        if rest:
            yield from (RawLine(number, cap) for number, cap in self._deferred(rest))

    def _stored_copy(self, cap: WarcCapture) -> WarcCapture:
        """A revisit whose record is not in this file, linked to a stored page of the same payload (one
        indexed lookup); as it is when there is none (it is then a bad record saying so)."""
        if self.stored_pages is None or not cap.payload_digest:
            return replace(cap, forward=False)
        stored = self.stored_pages(cap.payload_digest, cap.refers_to_url, cap.refers_to_date)
        if stored is not None:
            self.revisits += 1
        return replace(cap, forward=False, stored=stored)

    def _deferred(self, waiting: list[tuple[int, WarcCapture]]) -> Iterator[tuple[int, WarcCapture]]:
        """The waiting revisits linked to their records, read in one pass over the stream (one seek each
        for a record the pass does not reach: after a malformed record)."""
        by_pos: _Waiting = {}
        for number, cap in waiting:
            by_pos.setdefault(cap.pending, []).append((number, cap))  # type: ignore[arg-type]
        last = max(by_pos)

        def linked(pos: int, original: WarcCapture | None) -> Iterator[tuple[int, WarcCapture]]:
            for number, cap in by_pos.pop(pos):
                if original is not None:
                    self.revisits += 1
                yield number, replace(cap, original=original, pending=None)

        with self._open() as f:
            if self._compiled:  # the stream loop finds them, as far as it reads the stream
                yield from self._deferred_compiled(f, by_pos, last, linked)
            if by_pos:
                yield from self._deferred_fastwarc(f, by_pos, last, linked)
        for pos in sorted(by_pos):
            yield from linked(pos, self._read_at(pos))

    def _deferred_fastwarc(self, f: BinaryIO, by_pos: _Waiting, last: int, linked: _Link) -> _Linked:
        """`_deferred`'s pass by FastWARC, from the stream's start up to the last record waited for."""
        f.seek(0)
        try:
            for rec in ArchiveIterator(f, parse_http=False):
                pos = rec.stream_pos
                if pos in by_pos:
                    block = rec.reader.read()
                    whole = len(block) >= rec.content_length
                    yield from linked(pos, self._capture(rec, pos, block, _headers(rec)) if whole else None)
                if pos >= last:
                    break
        except OSError:  # a malformed record: the rest are sought one by one
            pass

    def _deferred_compiled(self, f: BinaryIO, by_pos: _Waiting, last: int, linked: _Link) -> _Linked:
        """`_deferred`'s pass by the compiled stream loop: the records it reads up to the last one waited for
        (FastWARC reads on from the start for any left)."""
        for item in StreamRecords(f, 0, self.name, self.offset_in):
            if type(item) is str:
                continue
            pos = cast(int, cast(WarcCapture, item).offset)
            if pos in by_pos:
                yield from linked(pos, cast(WarcCapture, item))
            if pos >= last:
                return

    def _scan(self) -> Iterator[tuple[int, WarcCapture | Reject]]:
        """`_records` in file order, a revisit whose record must be read again marked `pending`, one whose
        record is not among those before it marked `forward`.

        A gzipped file is read by a compiled loop (`MemberRecords`, `StreamRecords`) up to a record it does not
        read, then by FastWARC, and by the loop again from where reading resumes after a malformed record."""
        s = _Scan()
        start = 0
        last_start = (0, "")  # offset and URL of the last record begun: where a cut falls
        if (bad_line := self._lf_only_header()) is not None:
            yield (
                1,
                RejectKind.MALFORMED_RECORD.reject(
                    f" (at offset 0: {bad_line}); nothing of the file is read"
                ),
            )
            return
        with self._open() as f:
            self._reading = f
            while True:
                again = -1  # the offset of a record the member loop read, which FastWARC reads again unused
                if self._compiled:
                    loop = StreamRecords if self._one_stream else MemberRecords
                    members = loop(f, start, self.name, self.offset_in)
                    yield from self._read_members(members, s)
                    if members.stopped_at is None:
                        break
                    # FastWARC reads on from the last member the loop read (from a member, not from the bytes
                    # the loop stopped at, as a read from the start of the file would: the same errors)
                    if members.last_offset is not None:
                        start = again = members.last_offset
                    else:
                        start = members.stopped_at
                f.seek(start)
                error: str | None = None
                try:
                    for rec in ArchiveIterator(f, parse_http=False):
                        pos = rec.stream_pos
                        if pos == again:
                            again = -1
                            continue
                        s.number += 1
                        s.last_pos = pos
                        rtype = rec.record_type
                        if not rtype & _PAGE_TYPES:
                            got = rec.reader.consume()
                            if got < rec.content_length:  # the file ends inside it
                                last_start = (pos, f"a {_type_name(rtype)} record")
                                if self._break is not None:
                                    break
                                yield from s.release()
                                yield (
                                    s.number,
                                    RejectKind.RECORD_CUT_OFF.reject(
                                        f": {_type_name(rtype)} record, {got:,} of {rec.content_length:,} "
                                        f"bytes (offset {pos})"
                                    ),
                                )
                                continue
                            self.skipped[_type_name(rtype)] += 1
                            continue
                        block = rec.reader.read()
                        h = _headers(rec)
                        declared = h.get("content-length")
                        if declared is None or len(block) < rec.content_length:
                            url = h.get("warc-target-uri") or "no URL"
                            last_start = (pos, url)
                            self._note_cut(h, pos)
                            if self._break is not None:  # the compressed file ends inside it: said below
                                break
                            shown = (
                                f"{len(block):,} of {rec.content_length:,} bytes"
                                if declared is not None
                                else "in its WARC header"
                            )
                            yield from s.release()
                            yield (
                                s.number,
                                RejectKind.RECORD_CUT_OFF.reject(f": {shown} (offset {pos}, {url})"),
                            )
                            continue
                        if self._framed and pos == s.prev_pos:  # lz4 / zstd frames holding several records
                            self._framed, self._no_offsets = False, True
                            if s.held is not None:
                                s.held = replace(s.held, offset=None)
                        s.prev_pos = pos
                        cap = self._capture(rec, pos, block, h)
                        if self._no_offsets:
                            cap = replace(cap, offset=None)
                        yield from s.hold(self._page(cap, pos, s.number))
                except OSError as exc:  # FastWARC: "Invalid WARC header", a broken gzip member
                    error = str(exc) or type(exc).__name__
                if error is None or self._break is not None:
                    break
                s.number += 1
                after = s.last_pos if s.last_pos >= 0 else start
                resume = self._next_record(after + 1)
                if s.held is not None:
                    held = s.held
                    end = None if self._members else self._record_end(held.offset or 0, len(held.block))
                    if end is not None and resume is not None and end != resume:
                        yield (
                            s.held_number,
                            RejectKind.BAD_CONTENT_LENGTH.reject(
                                f" (offset {held.offset}, {held.url}): "
                                f"{len(held.block):,} bytes end the record at byte {end:,}, "
                                f"the next record starts at {resume:,}",
                            ),
                        )
                        s.held = None
                    else:
                        yield from s.release()
                where = f"after offset {after}" if s.number > 1 else "at offset 0"
                tail = (
                    f"reading resumed at offset {resume}"
                    if resume is not None
                    else "the rest of the file is lost"
                )
                yield s.number, RejectKind.MALFORMED_RECORD.reject(f" ({where}: {error}); {tail}")
                if resume is None:
                    break
                start, s.last_pos = resume, -1
        yield from s.release()
        if self._break is not None:
            yield s.number + 1, self._break_reject(last_start)

    def _read_members(
        self, members: MemberRecords | StreamRecords, s: _Scan
    ) -> Iterator[tuple[int, WarcCapture]]:
        """The records a compiled loop reads, numbered, indexed and linked as `_scan`'s own."""
        skipped = self.skipped
        for item in members:
            s.number += 1
            if type(item) is str:
                skipped[item] += 1
                continue
            cap = cast(WarcCapture, item)
            yield from s.hold(self._page(cap, cast(int, cap.offset), s.number))
        if members.last_offset is not None:
            s.last_pos = members.last_offset

    def _page(self, cap: WarcCapture, pos: int, number: int) -> WarcCapture:
        """A page-like record as read at `pos` (record `number`): a revisit linked to its record; a response
        or resource indexed by its id and payload digest and kept for the revisits after it."""
        if cap.warc_type == "revisit":
            return self._link(cap, self._by_id, self._by_digest)
        if cap.warc_type in _PAGE_SOURCE_NAMES:
            if cap.record_id:
                self._by_id.setdefault(cap.record_id, pos)
            if cap.payload_digest:
                self._by_digest.setdefault(cap.payload_digest, pos)
            self._remember(cap, number)
        return cap

    def _break_reject(self, last_start: tuple[int, str]) -> Reject:
        """The one reject that stands for the part of a one-stream gzip file that cannot be read."""
        brk = self._break
        assert brk is not None
        if brk.kind == "truncated":
            inside = (
                f" inside the record at offset {last_start[0]} ({last_start[1]})"
                if last_start[1] and last_start[0] < brk.at
                else ""
            )
            return RejectKind.TRUNCATED_FILE.reject(
                f": {brk.detail}; the gunzipped stream stops at offset {brk.at}{inside}. "
                "The complete records before are loaded (a cut-off gzip stream has no CRC to check them against)"
            )
        return RejectKind.CORRUPT_FILE.reject(
            f": {brk.detail} in the gzip member that starts at byte {brk.member:,}, after {brk.at:,} bytes "
            "inflated. gzip checks a member only at its end, so none of its records are loaded"
        )

    def _lf_only_header(self) -> str | None:
        """The first line of the first record's WARC header, named, when it ends in LF alone (a hand-written
        file): the standard ends header lines in CRLF, and FastWARC reads no record of such a file."""
        if self._members:
            with open(self.path, "rb") as raw:
                try:
                    head = zlib.decompressobj(wbits=31).decompress(raw.read(1 << 16), 4096)
                except zlib.error:
                    return None
        else:
            with self._open() as f:
                head = f.read(4096)
        if not is_warc_head(head):  # LZ4 or Zstandard frames: FastWARC's to read
            return None
        for number, line in enumerate(head.split(b"\n")[:-1], start=1):
            if not line.endswith(b"\r"):
                shown = line[:60].decode("utf-8", "replace")
                return f"line {number} of the WARC header, {shown!r}, ends in LF without CR (WARC ends header lines in CRLF)"
            if line == b"\r":
                return None
        return None

    def _note_cut(self, h: dict[str, str], pos: int) -> None:
        """Remember a cut-off record, so that a revisit of it is rejected as it is (not linked elsewhere)."""
        for key in (h.get("warc-record-id"), h.get("warc-payload-digest")):
            if key:
                self._cut.setdefault(key, pos)

    def _link(self, cap: WarcCapture, by_id: dict[str, int], by_digest: dict[str, int]) -> WarcCapture:
        """A revisit with the record it refers to attached (read again from its offset): by
        WARC-Refers-To, else by the payload digest; marked `forward` when neither is among the records read."""
        pos = RecordIndex(by_id, by_digest).find(cap.refers_to, cap.payload_digest)
        if pos is None:
            return replace(cap, forward=True)
        if self._one_stream and pos not in self._recent:
            return replace(cap, pending=pos)
        original = self._read_at(pos)
        if original is not None:
            self.revisits += 1
        return replace(cap, original=original)

    def _remember(self, cap: WarcCapture, number: int) -> None:
        """Keep the latest page records, up to `RECENT_BYTES`: a revisit mostly points at one of them,
        and re-reading a file gzipped as one stream means inflating it from its start. With `source_pages`,
        every page record's number is kept: the page of one no longer kept is found by it (`held_revisits`)."""
        if cap.offset is None:
            return
        self._recent[cap.offset] = cap
        self._recent_bytes += len(cap.block)
        if self.source_pages is not None:
            self._numbers[cap.offset] = number
        while self._recent_bytes > RECENT_BYTES and self._recent:
            self._recent_bytes -= len(self._recent.popitem(last=False)[1].block)

    @property
    def index(self) -> RecordIndex:
        """Where the response and resource records read so far are in the file."""
        return RecordIndex(self._by_id, self._by_digest)

    def read_record_at(self, pos: int) -> WarcCapture | None:
        """The page-like record at offset `pos` (of `index`), or None when it is cut off."""
        return self._read_at(pos)

    def _read_at(self, pos: int) -> WarcCapture | None:
        if (cap := self._recent.get(pos)) is not None:
            return cap
        with self._open() as f:
            f.seek(pos)
            for rec in ArchiveIterator(f, parse_http=False):
                block = rec.reader.read()
                if len(block) < rec.content_length:  # cut off: rejected itself, so not a revisit's copy
                    return None
                return self._capture(rec, pos, block, _headers(rec))
        return None

    def _record_end(self, offset: int, content_length: int) -> int | None:
        """Where an uncompressed record at `offset` ends by its Content-Length (its header, the block and
        the CRLF CRLF after it)."""
        with self._aux("record_end") as f:
            f.seek(offset)
            head = f.read(64 << 10)
        header_end = head.find(b"\r\n\r\n")
        return None if header_end < 0 else offset + header_end + 4 + content_length + 4

    def _next_record(self, start: int) -> int | None:
        """The offset of the next readable record header at or after `start`, or None."""
        with self._aux("next_record") as f:
            pos = start
            while True:
                try:
                    f.seek(pos)
                    window = f.read(_RESYNC_WINDOW + 16)
                except (OSError, EOFError):
                    return None
                if not window:
                    return None
                if self._members:
                    i = window.find(_GZIP_MAGIC)
                    while 0 <= i < _RESYNC_WINDOW:
                        if _warc_member_at(f, pos + i):
                            return pos + i
                        i = window.find(_GZIP_MAGIC, i + 1)
                else:
                    m = _VERSION_LINE.search(window)
                    if m is not None and m.start() < _RESYNC_WINDOW:
                        return pos + m.start() + 1
                if len(window) <= _RESYNC_WINDOW:
                    return None
                pos += _RESYNC_WINDOW


def _compression(path: Path) -> tuple[bool, bool]:
    """(gzipped, gzipped as one stream). A .warc.gz is normally one gzip member per record, so a
    record's offset is where its member starts; a file compressed whole has no such offsets."""
    with open(path, "rb") as f:
        data = f.read(1 << 20)
    if data[:3] != _GZIP_MAGIC:
        return False, False
    # In pieces: a bad CRC at the end of a small file keeps what came before it. Another record's header
    # inside the first member: the file is compressed as one stream (found in its first few KB, mostly).
    d, first = zlib.decompressobj(wbits=31), bytearray()
    for i in range(0, len(data), 1024):
        seen = len(first)
        try:
            first += d.decompress(data[i : i + 1024])
        except zlib.error:
            break
        if _NEXT_HEADER.search(first, max(0, seen - _NEXT_HEADER_BYTES)) is not None:
            return True, True
        if d.eof:
            break
    return True, _NEXT_HEADER.search(first) is not None  # a match longer than the overlap (long digits)


def _warc_member_at(f: BinaryIO, pos: int) -> bool:
    f.seek(pos)
    try:
        head = zlib.decompressobj(wbits=31).decompress(f.read(256), 16)
    except zlib.error:
        return False
    return head.startswith(WARC_MAGIC)
