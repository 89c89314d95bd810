"""Crawl dump formats -> validated records. Bad records become (line, `Reject`); nothing is fatal
but a file that is not a crawl dump at all.

Formats: JSON lines (`.jsonl`, `.ndjson`, `.json`, optionally `.gz`), CSV (`.csv`, `.csv.gz`) with a
header row, Parquet, WARC / WARC.gz / WET (read by `warc.py`), ARC / ARC.gz (`arc.py`), WACZ (`wacz.py`). Fields: `url` (required), `html` or `text` (one required), optional
`fetched_at`, `status`; any other field is kept as JSON in `extra`.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import math
import mmap
import re
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urljoin

from . import _html
from .arc import ArcBatches, is_arc_head
from .archives import ArchiveCapture
from .errors import NotACrawlDump
from .inflate import ZLIB_ERRORS, fast_zlib, open_gzip
from .parallel import SharedSlots, SlotRef, shared_view
from .rejects import Reject, RejectKind
from .urls import canonicalize_url, host_of
from .wacz import WaczBatches, is_wacz
from .warc import StoredPageLookup, WarcBatches, WarcCapture, is_framed_warc, is_warc_head

try:  # the pages of a batch hashed together (`add_md5s`)
    from . import _kernels
except ImportError:  # installed without a C compiler: each page hashed by hashlib as it is validated
    _kernels = None  # type: ignore[assignment]

try:  # orjson decodes a page-sized JSON line in half the time of `json` (bench/RESULTS.md)
    import orjson as _orjson
except ImportError:  # a platform without orjson wheels: `json` alone
    _orjson = None  # type: ignore[assignment]

MAX_PAGE_BYTES = 8 * 1024 * 1024  # larger pages are crawler accidents (media, dumps), not documents
# A JSON line may hold a page of MAX_PAGE_BYTES twice over (escaped quotes, `\/`) and 1 MB of other fields;
# a longer line is rejected as it streams, unread (a gz bomb of one 1 GB line costs one read piece of memory).
MAX_LINE_BYTES = 2 * MAX_PAGE_BYTES + (1 << 20)
UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
# A <link> tag, up to its '>' or to the next '<': a page of many '<link's and no '>' is scanned once, not once
# per '<link' to its end.
_LINK_TAG = re.compile(rb"<link\b[^<>]*>?", re.IGNORECASE)
_REL_CANONICAL = re.compile(rb"""\brel\s*=\s*["']?canonical\b""", re.IGNORECASE)
_HREF = re.compile(rb"""\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RawLine:
    """One unparsed record: a JSON line's bytes, a dict from CSV / Parquet, a WARC record (its number in
    the file) or why a record is rejected as it is read (a malformed WARC record, a CSV record too long)."""

    line: int
    # A JSON line is a view of its block's buffer (bytes, or a worker's shared-memory slot): it is decoded
    # where it lies, and is valid while its batch is worked on.
    payload: bytes | memoryview | dict[str, Any] | WarcCapture | ArchiveCapture | Reject


@dataclass(frozen=True, slots=True)
class LineBlock:
    """Whole lines of a JSON-lines dump in one buffer, `first_line` the 1-based number of the first.

    The reading process only cuts the decompressed stream at a newline; the worker splits the lines.
    One bytes object crosses the process boundary instead of a pickled record per line."""

    first_line: int
    data: bytes
    # Why the line after `data`'s lines is rejected: a compressed file that ends early, a line too long.
    error: Reject | None = None
    # Set with `error` when a gzip member fails its CRC: the lines from this one on, already read or not,
    # are not what was compressed and must not be kept.
    discard_from: int | None = None
    # How far the reader was in the file (compressed bytes) when it cut this block: for progress (0: unknown).
    end_byte: int = 0

    @property
    def error_line(self) -> int:
        return self.first_line + self.data.count(b"\n")

    def __iter__(self) -> Iterator[RawLine]:
        return _split_lines(self.data, self.first_line, len(self.data))


@dataclass(frozen=True, slots=True)
class SharedLines:
    """The lines of a `LineBlock` without an error, left in a worker pool's shared memory
    (`parallel.SharedSlots`): what crosses the pipe is where they are. Iterated in a worker, as the block."""

    first_line: int
    slot: SlotRef

    def __iter__(self) -> Iterator[RawLine]:
        return _split_lines(shared_view(self.slot), self.first_line, self.slot.size)


_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what `bytes.strip` strips


def _split_lines(buf: bytes | mmap.mmap, first_line: int, end: int) -> Iterator[RawLine]:
    """The lines of `buf[:end]` but blank ones, numbered from `first_line`, as views of `buf`: a page-sized
    line is not copied before it is decoded."""
    view = memoryview(buf)
    i, start = first_line, 0
    while start < end:
        nl = buf.find(b"\n", start, end)
        stop = end if nl < 0 else nl
        if start < stop and (view[start] not in _ASCII_SPACE or bytes(view[start:stop]).strip()):
            yield RawLine(i, view[start:stop])
        i, start = i + 1, stop + 1


def shared_lines(block: Iterable[RawLine], slots: SharedSlots) -> Iterable[RawLine]:
    """`block` with its lines in `slots` when it is a `LineBlock` of lines only (one with an error, or
    not JSON lines, goes as it is)."""
    if isinstance(block, LineBlock) and block.error is None and block.data:
        return SharedLines(block.first_line, slots.share(block.data))
    slots.skip()
    return block


BLOCK_BYTES = 2 << 20  # ~130 pages of 16 KB a batch
READ_BYTES = 1 << 18


@dataclass(frozen=True, slots=True)
class _Member:
    """A gzip member starts at compressed byte `offset`."""

    offset: int


@dataclass(frozen=True, slots=True)
class _Break:
    """The compressed stream stops early. `kind`: 'truncated' (the file ends inside a member), 'corrupt'
    (a CRC or deflate error: the member's output is not what was compressed) or 'trailing' (bytes
    after the last member that are not a gzip member)."""

    kind: str
    detail: str
    offset: int


def _inflated(f: BinaryIO) -> Iterator[bytes | _Member | _Break]:
    """The decompressed bytes of a gzip file in pieces of at most READ_BYTES, a `_Member` before each member
    and a `_Break` last if the stream stops early. Each member is inflated on its own, so its CRC (checked
    at its end) vouches for the pieces since its `_Member`; the bounded pieces keep a gz bomb's memory flat."""
    read_total = 0  # compressed bytes read from the file
    member = 0  # compressed byte where the current member starts
    d = fast_zlib.decompressobj(31)
    yield _Member(0)
    data, full, started = b"", False, False
    while True:
        if not data and not full:  # a full piece may leave output inside the inflater: ask again first
            data = f.read(READ_BYTES)
            read_total += len(data)
            if not data:
                break
        if not started:
            if not data.startswith(GZIP_MAGIC[:1]):  # after the last member: zero padding or garbage
                trailing = _trailing_bytes(data, f)
                if trailing:
                    yield _Break("trailing", f"{trailing:,} bytes that are not a gzip member", member)
                return
            started = True
        try:
            out = d.decompress(data, READ_BYTES)
        except ZLIB_ERRORS as exc:
            yield _Break("corrupt", str(exc), member)
            return
        full = len(out) == READ_BYTES
        data = d.unconsumed_tail
        if out:
            yield out
        if d.eof:
            data, full = d.unused_data, False
            member = read_total - len(data)
            d, started = fast_zlib.decompressobj(31), False
            yield _Member(member)
    if started and not d.eof:
        yield _Break(
            "truncated", f"the file ends inside the gzip member that starts at byte {member:,}", member
        )


def _trailing_bytes(data: bytes, f: BinaryIO) -> int:
    """How many bytes follow the last gzip member, `data` and the rest of `f`; 0 if they are all zero bytes
    (gzip(1) ignores zero padding, and so does this)."""
    n, garbage = 0, False
    while data:
        n += len(data)
        garbage = garbage or bool(data.strip(b"\0"))
        data = f.read(READ_BYTES)
    return n if garbage else 0


def _plain(f: BinaryIO) -> Iterator[bytes | _Member | _Break]:
    while piece := f.read(READ_BYTES):
        yield piece


def _break_reason(brk: _Break, first_line: int, partial: bool) -> Reject:
    if brk.kind == "truncated":
        where = "inside this record" if partial else "here"
        return RejectKind.TRUNCATED_FILE.reject(
            f": {brk.detail}; reading stopped {where}. The complete lines before "
            "are loaded (a cut-off member has no CRC to check them against)",
        )
    if brk.kind == "corrupt":
        since = (
            "its lines and all after it are"
            if first_line == 1
            else (
                f"the lines before line {first_line} passed their members' CRC; this member's lines and all after it are"
            )
        )
        return RejectKind.CORRUPT_FILE.reject(
            f": {brk.detail} in the gzip member that starts at byte {brk.offset:,} "
            f"(line {first_line}). gzip checks a member only at its end, so {since} not loaded",
        )
    return RejectKind.TRAILING_DATA.reject(f": {brk.detail}, ignored")


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
) -> Iterable[Iterable[RawLine]]:
    """The records of a file in batches for the workers: `LineBlock`s of about `block_bytes` for JSON lines
    (a batch ends at a newline: a longer line is a batch of its own), lists of `batch_records` otherwise
    (for WARC, ARC and WACZ a reader of `ARCHIVE_READERS`, which counts the records it skips).

    A JSON line longer than `max_line_bytes` is dropped as it streams and named in an error block, so the
    reader holds at most about `block_bytes + max_line_bytes` whatever the file. A compressed file that
    ends early keeps its complete lines; one whose CRC or deflate data fails gives an error block with
    `discard_from` set: the lines of the failed member (and after) must not be kept. `stored_pages` finds
    the stored page a WARC revisit stands for when its record is not in the file."""
    if fmt == "warc":
        return WarcBatches(path, batch_records=batch_records, stored_pages=stored_pages)
    if fmt in ARCHIVE_READERS:
        return ARCHIVE_READERS[fmt](path, batch_records=batch_records)
    return _read_batches(
        path, fmt, batch_records=batch_records, block_bytes=block_bytes, max_line_bytes=max_line_bytes
    )


def _read_batches(
    path: Path, fmt: str, *, batch_records: int, block_bytes: int, max_line_bytes: int
) -> Iterator[Iterable[RawLine]]:
    if fmt != "jsonl":
        it = read_raw(path, fmt, max_line_bytes=max_line_bytes)
        while chunk := list(islice(it, batch_records)):
            yield chunk
        return
    with open(path, "rb") as f:
        pieces = _inflated(f) if f.read(2) == GZIP_MAGIC else _plain(f)
        f.seek(0)
        yield from _line_blocks(pieces, block_bytes, max_line_bytes, f.tell)


def _line_blocks(
    pieces: Iterator[bytes | _Member | _Break],
    block_bytes: int,
    max_line_bytes: int,
    position: Callable[[], int],
) -> Iterator[LineBlock]:
    """`pieces` cut into `LineBlock`s; `position()` is how far the reader is in the file (for progress)."""
    line = 1  # the number of the first line in `parts`
    parts: list[bytes] = []
    size = 0  # bytes in `parts`
    tail = 0  # bytes in `parts` after its last newline (the line being read)
    nl = 0  # newlines in `parts`
    member_line = 1  # the line in which the current gzip member starts
    skipping = False  # inside a line over `max_line_bytes`: drop to its newline
    first = True
    for piece in pieces:
        if isinstance(piece, _Member):
            member_line = line + nl
            continue
        if isinstance(piece, _Break):
            data = b"".join(parts)
            if piece.kind == "corrupt":
                keep = _first_lines(data, member_line - line) if member_line > line else b""
                if keep:
                    yield LineBlock(line, keep)
                yield LineBlock(
                    member_line, b"", _break_reason(piece, member_line, False), discard_from=member_line
                )
                return
            cut = data.rfind(b"\n") + 1
            if cut:
                yield LineBlock(line, data[:cut])
                line += nl
            partial = skipping or bool(data[cut:].strip())
            yield LineBlock(line, b"", _break_reason(piece, line, partial))
            return
        if first and piece:
            piece = piece.removeprefix(UTF8_BOM)
            first = False
        newlines = count_newlines(piece)
        if skipping:
            if not newlines:
                continue
            piece = piece[piece.index(b"\n") + 1 :]
            newlines -= 1
            skipping = False
            line += 1
        if newlines and tail + (end := piece.index(b"\n")) > max_line_bytes:  # the line ends here, too long
            data = b"".join(parts)
            yield from _before_long_line(data, line, len(data) - tail, nl, max_line_bytes)
            line += nl + 1
            piece = piece[end + 1 :]
            newlines -= 1
            parts.clear()
            size = tail = nl = 0
        parts.append(piece)
        size += len(piece)
        nl += newlines
        tail = tail + len(piece) if not newlines else len(piece) - piece.rindex(b"\n") - 1
        if tail > max_line_bytes:  # an endless line: keep the lines before it, then skip it unread
            data = b"".join(parts)
            yield from _before_long_line(data, line, len(data) - tail, nl, max_line_bytes)
            line += nl
            parts.clear()
            size = tail = nl = 0
            skipping = True
            continue
        if size < block_bytes or size == tail:  # no newline yet: one long line, read on
            continue
        yield LineBlock(line, _cut_lines(parts, tail), end_byte=position())
        line += nl
        size, nl = tail, 0
    if skipping:  # the file ends inside the long line: it is named already
        return
    data = b"".join(parts)
    if data:
        yield LineBlock(line, data, end_byte=position())


def _cut_lines(parts: list[bytes], tail: int) -> bytes:
    """The bytes of `parts` but their last `tail` (the line being read), joined in one copy; `parts` is
    left holding the tail."""
    k, rest = len(parts) - 1, tail
    while rest > len(parts[k]):
        rest -= len(parts[k])
        k -= 1
    cut = len(parts[k]) - rest
    data = b"".join([*parts[:k], memoryview(parts[k])[:cut]])
    parts[:] = [parts[k][cut:], *parts[k + 1 :]] if tail else []
    return data


def count_newlines(data: bytes, *, scan: int = 64) -> int:
    """`data.count(b"\\n")`. A dump's lines are long (one page each): finding the few newlines of a read piece
    (memchr) is ~5x faster than `bytes.count`, which tests every byte; past `scan` of them, it counts."""
    n, i = 0, data.find(b"\n")
    while i >= 0:
        n += 1
        if n == scan:
            return data.count(b"\n")
        i = data.find(b"\n", i + 1)
    return n


def _before_long_line(
    data: bytes, line: int, cut: int, newlines: int, max_line_bytes: int
) -> Iterator[LineBlock]:
    """The lines of `data` before `cut` (from `line`, `newlines` of them), then the error of the too-long line
    that starts there."""
    if cut:
        yield LineBlock(line, data[:cut])
    yield LineBlock(
        line + newlines,
        b"",
        RejectKind.LINE_TOO_LONG.reject(
            f": over {max_line_bytes:,} bytes "
            f"(pages are limited to {MAX_PAGE_BYTES / 1e6:.0f} MB), skipped unread",
        ),
    )


def _first_lines(data: bytes, n: int) -> bytes:
    """The first `n` newline-terminated lines of `data` (fewer if it has fewer)."""
    end = 0
    for _ in range(n):
        nl = data.find(b"\n", end)
        if nl < 0:
            break
        end = nl + 1
    return data[:end]


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


_ARCHIVE_NAMES = {
    ".warc": "a WARC file (no WARC/ header)",
    ".wet": "a WARC file (no WARC/ header)",
    ".arc": "an ARC file (no filedesc:// header)",
    ".wacz": "a WACZ file (no ZIP with a datapackage.json or archive/)",
}


def detect_format(path: Path) -> str:
    """'jsonl', 'csv', 'parquet', 'warc', 'arc' or 'wacz', from the magic bytes and the name; NotACrawlDump
    otherwise, and for what is not a regular file (a folder, a device such as /dev/null, a FIFO: a dump is
    read twice, for its hash and its records) or is empty."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise NotACrawlDump(f"{path}: no such file") from None
    except OSError as exc:
        raise NotACrawlDump(f"{path}: cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise NotACrawlDump(f"{path}: a folder, not a crawl dump (give the files in it)")
    if not stat.S_ISREG(mode):
        raise NotACrawlDump(f"{path}: not a regular file (a device, FIFO or socket), not a crawl dump")
    if path.stat().st_size == 0:
        raise NotACrawlDump(f"{path}: an empty file, not a crawl dump")
    with open(path, "rb") as f:
        head = f.read(4096)
    name = path.name.lower().removesuffix(".gz")
    if head[:4] == PARQUET_MAGIC:
        return "parquet"
    if is_wacz(path):
        return "wacz"
    if head[:2] == GZIP_MAGIC:
        try:
            with gzip.open(path, "rb") as g:
                head = g.read(4096)
        except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a later member is corrupt
            head = _inflate_head(path)  # a file cut short still has a readable start (read_batches keeps it)
            if not head:
                raise NotACrawlDump(f"{path}: a broken gzip file ({exc})") from None
    if is_warc_head(head) or is_framed_warc(path):
        return "warc"
    if is_arc_head(head):
        return "arc"
    suffix = name[name.rfind(".") :]
    if suffix in _ARCHIVE_NAMES:
        raise NotACrawlDump(f"{path}: named {suffix} but not {_ARCHIVE_NAMES[suffix]}")
    if name.endswith(".parquet"):
        raise NotACrawlDump(f"{path}: named .parquet but not a Parquet file")
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".jsonl", ".ndjson", ".json")) or head.removeprefix(UTF8_BOM).lstrip()[:1] == b"{":
        return "jsonl"
    raise NotACrawlDump(
        f"{path}: not a crawl dump (expected .jsonl, .jsonl.gz, .ndjson, .csv or .parquet with url and html fields,"
        " or a WARC, ARC or WACZ file)"
    )


def check_dump(path: Path) -> str:
    """The format of a crawl dump (`detect_format`), after reading its start: a CSV or Parquet file
    without a url column raises `NotACrawlDump` here, before anything is written for it."""
    fmt = detect_format(path)
    if fmt in ("csv", "parquet"):
        next(iter(read_raw(path, fmt)), None)  # the generator, and its file, close as it is dropped
    return fmt


def _inflate_head(path: Path) -> bytes:
    """The first decompressed bytes of a gzip file that may end early; b"" when its start is broken too."""
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    try:
        return zlib.decompressobj(wbits=31).decompress(data, 4096)
    except zlib.error:
        return b""


def _open_binary(path: Path) -> BinaryIO:
    with open(path, "rb") as f:
        magic = f.read(2)
    return open_gzip(path) if magic == GZIP_MAGIC else open(path, "rb")


def read_raw(path: Path, fmt: str, *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[RawLine]:
    """Stream the records of a file without parsing their content (parsing runs in workers). A CSV record
    with a line over `max_line_bytes`, or longer than it in all, is a `Reject` (see `_csv_records`)."""
    if fmt in ARCHIVE_READERS:
        yield from ARCHIVE_READERS[fmt](path).records()
    elif fmt == "jsonl":
        with _open_binary(path) as f:
            for i, line in enumerate(f, start=1):
                if i == 1:
                    line = line.removeprefix(UTF8_BOM)
                if line.strip():
                    yield RawLine(i, line)
    elif fmt == "csv":
        with _open_binary(path) as f:
            yield from _csv_records(path, f, max_line_bytes)
    elif fmt == "parquet":
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
    else:
        raise NotACrawlDump(f"{path}: unknown format {fmt!r}")


class _CsvTooLong(Exception):
    """The CSV record being read is over the limit; it has been skipped to its end. `args[0]`: the `Reject`."""


class _CsvLines:
    """The lines of a CSV file for `csv` as str (UTF-8, undecodable bytes kept as surrogates), read at most
    `max_bytes` at a time: a record longer than that, in one line or in all, is skipped as it streams
    (`_CsvTooLong`) and never held whole. Lines end at \\n, \\r\\n or a lone \\r, as `open(newline="")` ends them.

    A record ends at the first line end outside quotes; while skipping one, the quotes are counted (each `"`
    toggles; an escaped `""` toggles twice), as `csv` reads quoted fields. `lines()` is a generator (what
    `csv` iterates fastest); it ends at `_CsvTooLong`, and the next `lines()` reads on after the record."""

    def __init__(self, f: BinaryIO, max_bytes: int) -> None:
        self._f = f
        self._max = max_bytes
        self._pending: list[bytes] = []  # the rest of a read line cut at its lone \r
        self.line = 0  # lines read
        self._record_bytes = 0
        self._quotes = 0  # quotes read in the current record
        self._record_start = 1
        self._record_raw: list[bytes] = []  # the current record's lines as read (at most `max_bytes`)
        self._first = True

    def new_record(self) -> None:
        self._record_bytes = self._quotes = 0
        self._record_start = self.line + 1
        self._record_raw = []

    def record_text(self) -> str:
        """The lines of the current record read so far, as `lines()` gives them."""
        return b"".join(self._record_raw).decode("utf-8", "surrogateescape")

    def reread_after_first_line(self) -> int:
        """Give the current record's lines after its first back to `lines()`, to be read again as records
        of their own; the number of the last line the record had reached."""
        reached = self.line
        self._pending.extend(reversed(self._record_raw[1:]))
        self.line = self._record_start
        return reached

    def _read(self) -> bytes:
        if self._pending:
            return self._pending.pop()
        raw = self._f.readline(self._max + 1)
        if self._first:
            raw = raw.removeprefix(UTF8_BOM)
            self._first = False
        return self._cut_at_cr(raw) if b"\r" in raw else raw

    def _cut_at_cr(self, raw: bytes) -> bytes:
        if raw.count(b"\r") == raw.count(b"\r\n"):
            return raw
        pieces = _LONE_CR.split(raw)
        self._pending = pieces[:0:-1]
        return pieces[0]

    def lines(self) -> Iterator[str]:
        max_bytes = self._max
        readline = self._f.readline
        while True:
            if self._pending or self._first:
                raw = self._read()
            else:  # _read, inlined: the common case
                raw = readline(max_bytes + 1)
                cr = raw.find(b"\r")
                if cr >= 0 and (raw[cr + 1 : cr + 2] != b"\n" or raw.count(b"\r") > 1):  # not one \r\n
                    raw = self._cut_at_cr(raw)
            if not raw:
                return
            self.line += 1
            self._quotes += raw.count(b'"')
            self._record_bytes += len(raw)
            self._record_raw.append(raw)
            if self._record_bytes > max_bytes:
                self._too_long(raw)
            yield raw.decode("utf-8", "surrogateescape")

    def _too_long(self, raw: bytes) -> None:
        if len(raw) > self._max:  # readline stopped inside the line
            kind, where = RejectKind.LINE_TOO_LONG, f"line {self.line} is over {self._max:,} bytes"
            while not raw.endswith((b"\n", b"\r")) and (raw := self._read()):
                self._quotes += raw.count(b'"')
        else:
            kind, where = (
                RejectKind.RECORD_TOO_LONG,
                f"over {self._max:,} bytes from line {self._record_start}",
            )
        if not self.skip_record():
            where += ", to the end of the file: a quote it opens is never closed"
        limit = f"pages are limited to {MAX_PAGE_BYTES / 1e6:.0f} MB"
        raise _CsvTooLong(kind.reject(f": {where} ({limit}), skipped"))

    def skip_record(self) -> bool:
        """Read on to the end of the current record, unkept; False if the file ends inside it."""
        self._record_raw = []
        ended = True  # called at a line's end
        while self._quotes % 2 or not ended:
            raw = self._read()
            if not raw:
                return False
            if ended:
                self.line += 1
            ended = raw.endswith((b"\n", b"\r"))
            self._quotes += raw.count(b'"')
        return True


_LONE_CR = re.compile(rb"(?<=\r)(?!\n)")


# What Python's csv says, in strict mode only, of a quoted field that is not closed where a field ends:
# a character after its closing quote, or the end of the file inside it.
_STRICT_ONLY_CSV_ERRORS = re.compile(r"expected after|unexpected end of data")


def _csv_records(path: Path, f: BinaryIO, max_line_bytes: int) -> Iterator[RawLine]:
    """The records of a CSV file with a header row, as `csv.DictReader` gives them (the header's names as
    keys), each named by its first line. A record over `max_line_bytes` (see `_CsvLines`) or that `csv`
    cannot read is a `Reject`, and the next record is read from the line after it.

    Quoted fields are read strictly: a quote never closed would otherwise take the rows after it into its
    field (up to the next quote, or to the end of the file) without a word. A record of several lines whose
    quoted field does not close where a field ends is rejected as an unterminated quote, and its lines after
    the first are read again as records. On one line, `"a"b` reads as `ab`, as `csv` reads it leniently."""
    csv.field_size_limit(max(csv.field_size_limit(), max_line_bytes))
    lines = _CsvLines(f, max_line_bytes)
    try:
        fieldnames = csv.DictReader(lines.lines()).fieldnames
    except _CsvTooLong as exc:
        raise NotACrawlDump(f"{path}: a CSV whose header row cannot be read ({exc.args[0].detail})") from None
    except csv.Error as exc:
        raise NotACrawlDump(f"{path}: a CSV whose header row cannot be read ({exc})") from None
    if not fieldnames or "url" not in fieldnames:
        raise NotACrawlDump(f"{path}: a CSV without a 'url' column (columns: {fieldnames})")
    names, n_names = list(fieldnames), len(fieldnames)

    def record(row: list[str]) -> dict[Any, Any]:
        rec: dict[Any, Any] = dict(zip(names, row, strict=False))
        if len(row) != n_names:  # as DictReader: extra cells under None, missing ones None
            if len(row) > n_names:
                rec[None] = row[n_names:]
            else:
                rec.update(dict.fromkeys(names[len(row) :]))
        return rec

    while True:
        lines.new_record()
        start = lines.line + 1
        try:
            for row in csv.reader(lines.lines(), strict=True):
                if row:  # a blank line is no record
                    yield RawLine(start, record(row))
                lines.new_record()
                start = lines.line + 1
            return
        except _CsvTooLong as exc:
            yield RawLine(start, exc.args[0])
        except csv.Error as exc:
            if not _STRICT_ONLY_CSV_ERRORS.search(str(exc)):
                lines.skip_record()
                yield RawLine(start, RejectKind.MALFORMED_CSV.reject(f": {exc}"))
            elif lines.line == start:
                row = next(csv.reader([lines.record_text()]), [])
                if row:
                    yield RawLine(start, record(row))
            else:
                reached = lines.reread_after_first_line()
                yield RawLine(
                    start,
                    RejectKind.MALFORMED_CSV.reject(
                        f": a quote opened on line {start} is not closed where a field ends "
                        f"(read on to line {reached}); the lines after it are read as records"
                    ),
                )


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


def rel_canonical_href(html: str) -> str | None:
    """The href of the page's first `<link rel=canonical>` in its first 64 KB, as written; None without one."""
    head = html[:65536].encode("utf-8", "surrogatepass")
    m = next((t for t in _LINK_TAG.finditer(head) if _REL_CANONICAL.search(t.group(0))), None)
    if not m:
        return None
    href = _HREF.search(m.group(0))
    if not href:
        return None
    value = next(g for g in href.groups() if g is not None).decode("utf-8", "replace").strip()
    return value or None


def _resolve(base: str, href: str) -> str | None:
    """The canonical form of `href` read against the page's url; None for an href no URL parser accepts
    (`http://[::1`): a broken hint on a good page."""
    try:
        return canonicalize_url(urljoin(base, href))
    except ValueError:
        return None


def parse_time(value: Any) -> datetime | None:
    """`value` as a naive UTC time, or None when it is none: a boolean, a number outside 1970..5138, text
    that is not ISO 8601, a time that leaves years 1..9999 when shifted to UTC."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        if isinstance(value, datetime):
            parsed = value
        elif isinstance(value, int | float):
            return datetime.fromtimestamp(value, UTC).replace(tzinfo=None) if 0 < value < 1e11 else None
        else:
            parsed = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        return parsed if parsed.tzinfo is None else parsed.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        return None


def _parse_status(value: Any) -> int | None:
    try:
        status = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity, which Python's json reads
        return None
    return status if 100 <= status <= 999 else None


def _unencodable_field(rec: dict[str, Any]) -> str | None:
    """The first string field that cannot be written as UTF-8 (it holds a lone surrogate), if any."""
    for key, value in rec.items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return key
    return None


def _finite(value: Any) -> Any:
    """`value` with NaN and the infinities (which JSON cannot hold) as the strings Python spells them."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _surrogate_reason(field: str) -> Reject:
    return RejectKind.INVALID_UNICODE.reject(
        f" in field {field!a}: an unpaired surrogate escape",
    )


class _Unstorable(ValueError):
    """A field whose value no UTF-8 text can hold (a lone surrogate); `args[0]` is its name."""


def _extra_json(extra: dict[str, Any]) -> str:
    """The record's other fields as JSON that DuckDB accepts; `_Unstorable` names a field that cannot be.
    Python's json reads and writes NaN and Infinity, JSON has no such values: they become the strings
    "nan", "inf", "-inf"."""

    def dump(obj: dict[str, Any]) -> str:
        try:
            text = json.dumps(obj, default=str, ensure_ascii=False, allow_nan=False)
        except ValueError:
            text = json.dumps(_finite(obj), default=str, ensure_ascii=False)
        text.encode("utf-8")  # raises on a lone surrogate, in a key or at any depth of a value
        return text

    try:
        return dump(extra)
    except UnicodeEncodeError:
        for key, value in extra.items():
            try:
                dump({key: value})
            except UnicodeEncodeError:
                raise _Unstorable(key) from None
        raise


_TOO_DEEP = RejectKind.TOO_DEEP.reject(" (Python reads about 1,000 levels)")


def _int_or_digits(digits: str) -> int | str:
    """A JSON integer as an int, or as its digits when it is longer than Python converts."""
    try:
        return int(digits)
    except ValueError:
        return digits


# A JSON integer of 19 digits or more may be beyond 64 bits, which orjson reads as a float and `json` exactly.
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def _holds_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_holds_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_float(v) for v in value)
    return False


def _not_an_object(value: object) -> Reject:
    return RejectKind.NOT_AN_OBJECT.reject(f" but a {type(value).__name__}")


def decode_json_line(payload: bytes | memoryview, *, fast: bool = True) -> dict[str, Any] | Reject:
    """A JSON line's object, or why it is rejected: what `json` makes of it, the same value and the
    same `Reject`. `fast` decodes with orjson where it is sure to agree: orjson refuses what only `json` reads
    (NaN, Infinity, 1e400, lone surrogate escapes, a byte-order mark, invalid UTF-8, integers beyond 64
    bits but for one case, deep nesting), and those lines go to `json`, which names the reason; the one
    case it reads otherwise, an integer beyond 64 bits read as a float, needs a float in the record and a
    run of 19 digits in the line, and such a line goes to `json` too."""
    if fast and _orjson is not None:
        try:
            rec = _orjson.loads(payload)
        except _orjson.JSONDecodeError:
            pass
        else:
            if not (_holds_float(rec) and _LONG_DIGITS.search(payload)):
                return rec if isinstance(rec, dict) else _not_an_object(rec)
    try:
        line = str(payload, "utf-8")
    except UnicodeDecodeError as exc:
        return RejectKind.INVALID_UTF8.reject(f" at byte {exc.start}")
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        return RejectKind.MALFORMED_JSON.reject(f": {exc.msg} (column {exc.colno})")
    except RecursionError:
        return _TOO_DEEP
    except ValueError:  # an integer of more digits than int() takes (sys.get_int_max_str_digits)
        try:
            rec = json.loads(line, parse_int=_int_or_digits)
        except RecursionError:
            return _TOO_DEEP
    if not isinstance(rec, dict):
        return _not_an_object(rec)
    return rec


def has_content(value: str) -> bool:
    """`bool(value.strip())` without its copy of a page that ends in a newline (~0.015 ms for 100 KB): the
    scan stops at the first character that is not whitespace, in the sense `strip` uses."""
    return bool(value) and not value.isspace()


_MISSING_URL = RejectKind.MISSING_URL.reject()
_MISSING_PAGE = RejectKind.MISSING_PAGE.reject()
_EMPTY_PAGE = RejectKind.EMPTY_PAGE.reject(" (html is blank)")


def validate(raw: RawLine, *, md5: bool = True) -> dict[str, Any] | Reject:
    """A clean record dict, or why the record is rejected. With `md5=False` the record's `md5` may be left
    None for `add_md5s`, which hashes a batch's pages together."""
    payload = raw.payload
    if isinstance(payload, WarcCapture | ArchiveCapture):
        payload = payload.record()
    if isinstance(payload, Reject):  # rejected as it was read
        return payload
    if isinstance(payload, bytes | memoryview):
        rec = decode_json_line(payload)
        if isinstance(rec, Reject):
            return rec
    else:
        rec = payload
        if (key := _unencodable_field(rec)) is not None:
            return RejectKind.INVALID_UTF8.reject(f" in field {key!a}")
    url = rec.get("url")
    if not isinstance(url, str) or not url.strip():
        return _MISSING_URL
    html = rec.get("html")
    text = rec.get("text")
    html = html if isinstance(html, str) and has_content(html) else None
    text = text if isinstance(text, str) and has_content(text) else None
    if html is None and text is None:
        present = [k for k in ("html", "text") if k in rec]
        return _EMPTY_PAGE if present else _MISSING_PAGE
    # Valid UTF-8 JSON can still escape half of a surrogate pair ("\ud800"), which no UTF-8 text can hold.
    # (A CSV or Parquet row was checked field by field above.) The MD5 and size are read from the str's
    # cached UTF-8 form, which the parser and Arrow read as well: the page is encoded once.
    page = html if html is not None else str(text)
    try:
        if md5 or _kernels is None:
            digest, size = _html.utf8_md5(page)
        else:
            digest, size = None, _kernels.utf8_size(page)
    except UnicodeEncodeError:
        return _surrogate_reason("html" if html is not None else "text")
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        return _surrogate_reason("url")
    if size > MAX_PAGE_BYTES:
        return RejectKind.PAGE_TOO_LARGE.reject(
            f" ({size / 1e6:.1f} MB > {MAX_PAGE_BYTES / 1e6:.0f} MB)",
        )
    canonical = canonicalize_url(url)
    rel = rel_canonical_href(html) if html is not None else None
    extra = {k: v for k, v in rec.items() if k not in ("url", "html", "text", "fetched_at", "status")}
    # A fetched_at or status that is not one is left empty; its value is kept with the other fields.
    fetched_raw = rec.get("fetched_at")
    fetched_at = parse_time(fetched_raw)
    if fetched_at is None and fetched_raw is not None and fetched_raw != "":
        extra["fetched_at"] = fetched_raw
    status_raw = rec.get("status")
    status = _parse_status(status_raw)
    if status is None and status_raw is not None and status_raw != "":
        extra["status"] = status_raw
    try:
        extra_json = _extra_json(extra) if extra else None
    except _Unstorable as exc:
        return _surrogate_reason(exc.args[0])
    except RecursionError:
        return _TOO_DEEP
    return {
        "url": url.strip(),
        "canonical_url": canonical,
        "host": host_of(canonical),
        "fetched_at": fetched_at,
        "status": status,
        "html": html,
        "text_in": text if html is None else None,
        "md5": digest,
        "rel_canonical": _resolve(url.strip(), rel) if rel else None,
        "extra": extra_json,
    }


def add_md5s(records: list[dict[str, Any]]) -> None:
    """Set the `md5` that `validate(..., md5=False)` left None: the MD5 of the page's UTF-8 (its html, or its
    text without one), the same digest hashlib gives. One MD5 is a chain of dependent steps; the compiled
    kernel hashes eight pages side by side in the lanes of a vector, ~4x the pages per CPU-second."""
    todo = [rec for rec in records if rec["md5"] is None]
    if not todo:
        return
    pages = [rec["html"] if rec["html"] is not None else rec["text_in"] for rec in todo]
    for rec, digest in zip(todo, _kernels.md5_many(pages), strict=True):
        rec["md5"] = digest
