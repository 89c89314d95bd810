"""ARC and ARC.gz files (the Internet Archive's format: Heritrix 1, Alexa, the first Common Crawl crawls)
-> the records the rest of ingest reads.

An ARC file starts with a file header record (`filedesc://NAME IP DATE text/plain LENGTH`), whose block
names the version: `1 ...` with five fields per record header line, `2 ...` with ten. Each record after
it is a header line, `URL IP-address Archive-date Content-type Archive-length` (version 2:
`URL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length`),
Archive-length bytes of block (for an http(s) URL the HTTP response as received) and a newline. The URL
is everything before the last fields, so a URL with a space in it reads whole. An .arc.gz holds one gzip
member per record, as Heritrix and Alexa write it; a file gzipped whole is read as one stream.

A record becomes a `capture.WarcCapture` (a `response` for an http(s) URL, a `resource` for the others,
such as Heritrix's `dns:` lookups), so its HTTP header, Content-Encoding, charset and HTML test are the
WARC reader's, wrapped in an `capture.ArchiveCapture` that marks it as ARC. The file header record is
skipped and counted (`ArcBatches.skipped`).

Every page keeps in `extra` what a WARC page keeps: `warc_file` (the ARC file's name), `warc_offset`
(of the record's gzip member, or of its header line in a plain file; in the decompressed stream for a
file gzipped whole, which `warc_offset_in` says), `warc_type`, `charset`, `charset_source`; and
`archive_format` "arc", `arc_version`, `arc_ip` (the IP-address field), `arc_checksum` (version 2).

Bad records are named with their byte offset and URL: a header line that is not one (`malformed record`;
reading resumes at the next header line found), an Archive-length that overruns the next record or stops
short of it (`bad Content-Length`), a block cut off at the end of the file, a block over
`MAX_RECORD_BYTES` (`record too long`, never read into memory), a gzip member that does not inflate
(`corrupt compressed file`; reading resumes at the next member) or that a cut file ends in.
"""

from __future__ import annotations

import io
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..records import PageRecord
from ..rejects import Reject, RejectKind
from .capture import BATCH_BYTES, ArchiveBatches, ArchiveCapture, WarcCapture
from .inflate import open_gzip

ARC_MAGIC = b"filedesc://"
_GZIP_MAGIC = b"\x1f\x8b\x08"
MAX_HEADER_LINE = 16 << 10  # a URL longer than this is not one
# A record block larger than this is a video or a dump, not a page: it is skipped unread. Pages larger
# than ingest's MAX_PAGE_BYTES are refused there; the margin is for a compressed or chunked body.
MAX_RECORD_BYTES = 64 << 20
# A gzip member that inflates past this is a bomb: it is left at that point and the next member sought.
MAX_MEMBER_INFLATE = 1 << 30
_CHUNK = 1 << 16
_RESYNC_WINDOW = 1 << 20
_VERSION_FIELDS = {1: 5, 2: 10}
_SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]{0,30}:")
_DATE = re.compile(rb"\d{8,20}")
# A line inside a record's block that looks like the next record's header line: the record's
# Archive-length is too large. (Heuristic: a page that prints such a line itself is cut there.)
_EMBEDDED_HEADER = re.compile(
    rb"\n(?=[A-Za-z][A-Za-z0-9+.-]{0,30}:[^\r\n]{0,16384}? \S+ \d{14} \S+ (?:\S+ ){0,5}\d{1,18}\n)"
)


@dataclass(frozen=True, slots=True)
class ArcHeader:
    """One record's header line."""

    url: str
    ip: str
    date: str  # Archive-date as written (YYYYMMDDhhmmss)
    mime: str
    length: int
    checksum: str | None  # version 2


def parse_header_line(line: bytes, fields: int = 5) -> ArcHeader | None:
    """The header line of a record (with `fields` fields, else the other version's), or None when the
    line is not one. A line that is one but for its Archive-length (`-1`, `abc`) has `length` -1."""
    text = line.rstrip(b"\r\n")
    if not text or len(text) > MAX_HEADER_LINE or b"\n" in text:
        return None
    for n in (fields, 10 if fields == 5 else 5):
        parts = text.rsplit(b" ", n - 1)
        if len(parts) != n or not parts[-1] or b" " in parts[-1]:
            continue
        url = parts[0].strip()
        if not _SCHEME.match(url) or not _DATE.fullmatch(parts[2]):
            continue
        length = parts[-1]
        return ArcHeader(
            url=_text(url),
            ip=_text(parts[1]),
            date=_text(parts[2]),
            mime=_text(parts[3]),
            length=int(length) if length.isdigit() and len(length) <= 18 else -1,
            checksum=_text(parts[5]) if n == 10 and parts[5] != b"-" else None,
        )
    return None


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def iso_date(arc_date: str) -> str:
    """An Archive-date (YYYYMMDDhhmmss, or a prefix of it) as ISO 8601 UTC; as written if it is not one."""
    if len(arc_date) < 8 or not arc_date.isdigit():
        return arc_date
    d = arc_date[:14].ljust(14, "0")
    return f"{d[0:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}Z"


def is_arc_head(head: bytes) -> bool:
    """Whether `head` (the file's first bytes, after gunzip) starts an ARC file."""
    return head.startswith(ARC_MAGIC)


@dataclass(slots=True)
class _Member:
    offset: int  # in the compressed file
    data: bytes  # inflated, at most MAX_RECORD_BYTES + a header line
    overflow: bool  # inflated to more than `data` holds
    error: str | None  # why the member ends early: corrupt, cut off, a bomb
    compressed_end: int  # where the next member starts


class ArcBatches(ArchiveBatches):
    """The records of an ARC file as batches of `RawLine(record number, ArchiveCapture | Reject)`, as
    `warc.WarcBatches` gives a WARC file's. After iteration, `skipped` counts the file header records;
    `revisits` is 0 (ARC has none)."""

    def __init__(self, path: Path, *, batch_records: int = 256, batch_bytes: int = BATCH_BYTES) -> None:
        self.path = Path(path)
        self.name = self.path.name
        self.batch_records, self.batch_bytes = batch_records, batch_bytes
        self.skipped: Counter[str] = Counter()
        self.revisits = 0
        self.version = 1
        self._fields = 5
        gzipped, one_stream = _compression(self.path)
        self._members = gzipped and not one_stream
        self._one_stream = one_stream
        self.offset_in = "gunzipped stream" if one_stream else "file"

    # --- the file, by its compression ------------------------------------------------------------
    def _items(self) -> Iterator[ArchiveCapture | Reject]:
        if self._members:
            yield from self._member_items()
            return
        with open_gzip(self.path) if self._one_stream else open(self.path, "rb") as f:
            self._reading = f
            try:
                yield from self._parse(f, lambda pos: pos)
            except EOFError as exc:  # ISA-L: a file gzipped whole and cut short
                yield RejectKind.TRUNCATED_FILE.reject(f": {exc}; the records before it are kept")
            except (OSError, zlib.error) as exc:
                yield RejectKind.CORRUPT_FILE.reject(f": {exc}; the records before it are kept")

    def _member_items(self) -> Iterator[ArchiveCapture | Reject]:
        """The records of each gzip member. A member that ends early (the file cut inside it, a member
        that does not inflate or is a bomb) keeps the complete records read from it; the one it cut is
        named once, by the member's reject."""
        with open(self.path, "rb") as f:
            self._reading = f
            for member in _gzip_members(f):
                items = list(
                    self._parse(
                        io.BytesIO(member.data),
                        _at_member(member.offset),
                        overflow=member.overflow,
                        rest="the rest of its gzip member is skipped",
                    )
                )
                if member.error is not None:
                    while items and isinstance(items[-1], Reject) and items[-1].kind in _CUT_KINDS:
                        items.pop()
                yield from items
                if member.error is not None:
                    head = parse_header_line(member.data.split(b"\n", 1)[0], self._fields)
                    yield member_reject(member, self.name, head.url if head is not None else None)

    # --- records in a stream ---------------------------------------------------------------------
    def _parse(
        self,
        f: BinaryIO,
        offset_of: Callable[[int], int | None],
        *,
        overflow: bool = False,
        rest: str = "the rest of the file is lost",
    ) -> Iterator[ArchiveCapture | Reject]:
        """The records of an uncompressed stream. `offset_of` maps a position in the stream to the offset
        a page keeps (None: it has none of its own); `overflow`: the stream stops where a record's block
        went past what was kept of it; `rest`: what a header line with none after it loses."""
        held: tuple[ArchiveCapture, int | None, str] | None = None  # the last page, its offset and URL
        while True:
            pos = f.tell()
            line = f.readline(MAX_HEADER_LINE + 2)
            if not line:
                break
            if not line.strip():  # the newline after a block, or more of them
                continue
            head = parse_header_line(line, self._fields)
            if head is None:
                resume = _next_header_line(f, pos + 1, self._fields)
                tail = f"reading resumed at offset {offset_of(resume)}" if resume is not None else rest
                shown = line[:60].decode("latin-1").rstrip("\r\n")
                if held is not None:  # the record before ends short of its Archive-length's end
                    yield RejectKind.BAD_CONTENT_LENGTH.reject(
                        f" (offset {held[1]}, {held[2]}): its Archive-length ends it at a line that is "
                        f"not an ARC header line ({shown!r}, offset {offset_of(pos)}); {tail}",
                    )
                    held = None
                else:
                    yield RejectKind.MALFORMED_RECORD.reject(
                        f" (offset {offset_of(pos)}: not an ARC header line: {shown!r}); {tail}"
                    )
                if resume is None:
                    break
                f.seek(resume)
                continue
            if held is not None:
                yield held[0]
                held = None
            offset = offset_of(pos)
            where = f"offset {offset}, {head.url}"
            if head.length < 0:
                resume = _next_header_line(f, pos + len(line) - 1, self._fields)
                tail = f"reading resumed at offset {offset_of(resume)}" if resume is not None else rest
                shown = line.rstrip(b"\r\n").rsplit(b" ", 1)[-1][:20].decode("latin-1")
                yield RejectKind.MALFORMED_RECORD.reject(
                    f" ({where}): an Archive-length of {shown!r} is not a number of bytes; {tail}"
                )
                if resume is None:
                    break
                f.seek(resume)
                continue
            if head.length > MAX_RECORD_BYTES:
                yield RejectKind.RECORD_TOO_LONG.reject(
                    f" ({where}): an Archive-length of {head.length:,} bytes "
                    f"(at most {MAX_RECORD_BYTES:,} are read)"
                )
                if overflow:
                    break
                f.seek(pos + len(line) + head.length)
                continue
            block = f.read(head.length)
            if len(block) < head.length:
                if overflow:
                    yield RejectKind.RECORD_TOO_LONG.reject(f" ({where}): its gzip member inflates past it")
                else:
                    yield RejectKind.RECORD_CUT_OFF.reject(
                        f": {len(block):,} of {head.length:,} bytes ({where})"
                    )
                break
            if (m := _EMBEDDED_HEADER.search(block)) is not None and (
                parse_header_line(block[m.end() :].split(b"\n", 1)[0], self._fields) is not None
            ):
                yield RejectKind.BAD_CONTENT_LENGTH.reject(
                    f" ({where}): its Archive-length of {head.length:,} bytes runs into the next "
                    f"record, {m.end():,} bytes into its block"
                )
                f.seek(pos + len(line) + m.end())
                continue
            if head.url.startswith("filedesc://"):
                self._file_header(block)
                self.skipped["ARC file header"] += 1
                continue
            held = (self._capture(head, offset, block), offset, head.url)
        if held is not None:
            yield held[0]

    def _file_header(self, block: bytes) -> None:
        """The version named in the file header record's block (`1 0 InternetArchive`, `2 0 Alexa ...`)."""
        first = block.split(b"\n", 1)[0].split()
        if first and first[0] in (b"1", b"2"):
            self.version = int(first[0])
            self._fields = _VERSION_FIELDS[self.version]

    def _capture(self, head: ArcHeader, offset: int | None, block: bytes) -> ArchiveCapture:
        http = head.url.lower().startswith(("http:", "https:"))
        cap = WarcCapture(
            warc_type="response" if http else "resource",
            url=head.url,
            date=iso_date(head.date),
            record_id=None,
            offset=offset,
            warc_file=self.name,
            block=block,
            # an http(s) block is an HTTP response (parsed by the WARC reader); the others are the payload
            content_type=None if http else head.mime,
            payload_digest=None,
            truncated=None,
            offset_in=self.offset_in,
        )
        fields: PageRecord = {"archive_format": "arc", "arc_version": self.version, "arc_ip": head.ip}
        if head.checksum:
            fields["arc_checksum"] = head.checksum
        return ArchiveCapture(cap, fields, drop=("warc_record_id",))


def _at_member(start: int) -> Callable[[int], int | None]:
    """Offsets in a gzip member's data: the member's own for its first record, none for any after it."""
    return lambda pos: start if pos == 0 else None


_CUT_KINDS = frozenset({RejectKind.RECORD_CUT_OFF, RejectKind.MALFORMED_RECORD, RejectKind.RECORD_TOO_LONG})


def member_reject(member: _Member, name: str, url: str | None) -> Reject:
    """The reject for a gzip member that ends early: the file cut inside it, or a member that does not
    inflate (reading resumed at the next member)."""
    record = f" ({url})" if url else ""
    if member.error == "cut off":
        return RejectKind.TRUNCATED_FILE.reject(
            f": {name} ends inside the gzip member at offset {member.offset}{record}; "
            "the records before it are kept"
        )
    return RejectKind.CORRUPT_FILE.reject(
        f": the gzip member at offset {member.offset}{record} {member.error}"
    )


def _gzip_members(f: BinaryIO) -> Iterator[_Member]:
    """The gzip members of a file, each inflated up to `MAX_RECORD_BYTES` and a header line (the rest is
    inflated and dropped, up to `MAX_MEMBER_INFLATE`). After a member that does not inflate, the next
    one is sought by its magic bytes; bytes after the last member that are not one are a member whose
    error says so."""
    keep = MAX_RECORD_BYTES + MAX_HEADER_LINE + 2
    pos = 0
    buf = f.read(_CHUNK)
    while buf:
        start = pos
        if not buf.startswith(_GZIP_MAGIC):
            resume = _next_member(f, start)
            yield _Member(start, b"", False, _not_a_member(resume), start)
            if resume is None:
                return
            f.seek(resume)
            pos, buf = resume, f.read(_CHUNK)
            continue
        d = zlib.decompressobj(wbits=31)
        out: list[bytes] = []
        kept = inflated = 0
        error: str | None = None
        while True:
            try:
                piece = d.decompress(buf, _CHUNK)
            except zlib.error as exc:
                error = f"does not inflate ({exc})"
                break
            rest = d.unused_data if d.eof else d.unconsumed_tail
            pos += len(buf) - len(rest)
            buf = rest
            inflated += len(piece)
            if kept < keep:
                out.append(piece[: keep - kept])
                kept += len(out[-1])
            if inflated > MAX_MEMBER_INFLATE:
                error = f"inflates past {MAX_MEMBER_INFLATE:,} bytes (a gzip bomb?)"
                break
            if d.eof:
                break
            if not buf:
                buf = f.read(_CHUNK)
                if not buf:
                    out.append(d.flush()[: max(0, keep - kept)])
                    error = "cut off"
                    break
        yield _Member(start, b"".join(out), inflated > kept, error, pos)
        if error is not None and error != "cut off":
            resume = _next_member(f, start + 1)
            if resume is None:
                return
            f.seek(resume)
            pos, buf = resume, f.read(_CHUNK)
        elif not buf:
            buf = f.read(_CHUNK)


def _not_a_member(resume: int | None) -> str:
    if resume is None:
        return "is not a gzip member: the bytes to the end of the file are ignored"
    return f"is not a gzip member: the bytes up to offset {resume} are ignored"


def _next_member(f: BinaryIO, start: int) -> int | None:
    """The offset of the next gzip member at or after `start` whose first line is an ARC header line."""
    pos = start
    while True:
        f.seek(pos)
        window = f.read(_RESYNC_WINDOW + 16)
        if not window:
            return None
        i = window.find(_GZIP_MAGIC)
        while 0 <= i < _RESYNC_WINDOW:
            f.seek(pos + i)
            try:
                head = zlib.decompressobj(wbits=31).decompress(f.read(MAX_HEADER_LINE), MAX_HEADER_LINE + 2)
            except zlib.error:
                head = b""
            if parse_header_line(head.split(b"\n", 1)[0]) is not None:
                return pos + i
            i = window.find(_GZIP_MAGIC, i + 1)
        if len(window) <= _RESYNC_WINDOW:
            return None
        pos += _RESYNC_WINDOW


_LINE_START = re.compile(rb"\n(?=[A-Za-z][A-Za-z0-9+.-]{0,30}:)")


def _next_header_line(f: BinaryIO, start: int, fields: int) -> int | None:
    """The offset of the next line at or after `start` that is a record header line, or None."""
    pos = start
    while True:
        f.seek(pos)
        window = f.read(_RESYNC_WINDOW + MAX_HEADER_LINE + 2)
        if not window:
            return None
        for m in _LINE_START.finditer(window, 0, _RESYNC_WINDOW):
            line = window[m.end() : m.end() + MAX_HEADER_LINE + 2].split(b"\n", 1)[0]
            if parse_header_line(line, fields) is not None:
                return pos + m.end()
        if len(window) <= _RESYNC_WINDOW:
            return None
        pos += _RESYNC_WINDOW


def _compression(path: Path) -> tuple[bool, bool]:
    """(gzipped, gzipped as one stream): an .arc.gz's first member holds the file header record alone;
    one that holds more (or does not end in the first MB) is a file gzipped whole."""
    with open(path, "rb") as f:
        data = f.read(1 << 20)
    if data[:3] != _GZIP_MAGIC:
        return False, False
    d = zlib.decompressobj(wbits=31)
    try:
        first = d.decompress(data, 4 << 20)
    except zlib.error:
        return True, False
    if not d.eof:
        return True, True
    line, _, rest = first.partition(b"\n")
    head = parse_header_line(line)
    if head is None:
        return True, False
    return True, bool(rest[head.length :].strip())
