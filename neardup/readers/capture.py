"""A web archive's record as a reader reads it in the main process and a worker decodes it: a
`WarcCapture` (a WARC record's block and the header fields ingest keeps; `record()` makes the page), an
`ArchiveCapture` (one read from an ARC file or from a WARC inside a WACZ, with that archive's fields), the
stored page a revisit of another file stands for, and one line for a person that says where a page's
record is, whichever archive it came from.

A revisit's page holds the payload of the record it refers to (in the same file, by WARC-Refers-To or
payload digest, or a page an earlier ingest stored with the same payload digest), so the report counts it
as a byte-identical duplicate; `extra` names that record (or page). A revisit whose record is in neither is
a bad record saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _encode_str
from typing import Any, BinaryIO, Literal, Protocol, cast

from resiliparse.parse.encoding import bytes_to_str

from .._archives import utf8_html
from ..records import MAX_PAGE_BYTES, CapturedPage, PageRecord, RawLine, RecordBatch
from ..rejects import Reject, RejectKind
from .inflate import raw_position
from .jsonl import BLOCK_BYTES
from .payload import HTML_TYPES, STATUS_LINE, BodyTooLarge, decode_body, decode_html, parse_http, sniff_mime

# A payload inflates to at most this: a page's bytes may be twice its UTF-8 (UTF-16 of ASCII), and `validate`
# judges the decoded page.
BODY_LIMIT = 2 * MAX_PAGE_BYTES


# Not frozen: a frozen dataclass's `__init__` sets each of the 19 fields through `object.__setattr__`, ~3 us
# more per record, and a capture is made twice per page (read, then again in the worker). Never changed
# once made: `dataclasses.replace` makes a changed copy.
@dataclass(slots=True)
class WarcCapture:
    """One page-like WARC record as read from the archive: its block (HTTP header and payload, still
    chunked and content-encoded) and the WARC header fields ingest keeps. `record()` decodes it."""

    warc_type: str  # response | resource | revisit | conversion
    url: str
    date: str | None  # WARC-Date as written (ISO 8601)
    record_id: str | None
    offset: int | None
    warc_file: str
    block: bytes | memoryview  # a view of a worker's shared memory (`shared_captures`), valid for its batch
    content_type: str | None  # the WARC Content-Type (of the block)
    payload_digest: str | None
    truncated: str | None  # WARC-Truncated: length | time | disconnect | unspecified
    # A revisit: the record it stands for (its block, id and offset); None when it is not in the file.
    original: WarcCapture | None = None
    refers_to: str | None = None  # WARC-Refers-To: the record id of the record a revisit stands for
    offset_in: str = "file"  # or "gunzipped stream": a file gzipped whole has no per-record offsets
    # A revisit whose record (at this offset) is read in the pass after the first (`WarcBatches._deferred`),
    # or whose page is found once the file's pages are stored (`WarcBatches.held_revisits`).
    pending: int | None = None
    # A revisit whose record is not among the records before it: looked for at the end of the file.
    forward: bool = False
    refers_to_url: str | None = None  # WARC-Refers-To-Target-URI
    refers_to_date: str | None = None  # WARC-Refers-To-Date
    # A revisit whose record is in no file but a page an earlier ingest stored (`WarcBatches.stored_pages`).
    stored: StoredPage | None = None
    # A revisit whose record is in the file but cut off (at this offset): rejected as that record is.
    record_cut: int | None = None

    @property
    def unlinked_revisit(self) -> bool:
        """A revisit whose record is neither in its file nor linked to a stored page (yet)."""
        return (
            self.warc_type == "revisit"
            and self.original is None
            and self.stored is None
            and self.record_cut is None
            and self.pending is None
            and not self.forward
        )

    @property
    def awaits_stored_page(self) -> bool:
        """A revisit whose record is not in its file, with a payload digest to find the page of another file
        by (`StoredPageLookup`): read without a lookup, it is still unlinked."""
        return self.unlinked_revisit and self.payload_digest is not None

    @property
    def page_payload_digest(self) -> str | None:
        """The payload digest its page's `extra` keeps: of the record a revisit stands for, else its own."""
        return (self.original or self).payload_digest

    def _location(self) -> list[str]:
        """Where the record lies in its file, as its page's extra fields' JSON members."""
        out = []
        if self.offset is not None:
            out.append(f'"warc_offset": {self.offset:d}')
            if self.offset_in != "file":
                out.append(f'"warc_offset_in": {_json_str(self.offset_in)}')
        if self.truncated:
            out.append(f'"warc_truncated": {_json_str(self.truncated)}')
        return out

    def record(self) -> PageRecord | Reject:
        """The ingest record (`url`, `html` or `text`, `fetched_at`, `status`, provenance fields), or why
        the record is not a page: `page()` as a dict."""
        return page_record(self.page())

    def page(self, *, record_id: bool = True, fields: PageRecord | None = None) -> CapturedPage | Reject:
        """The page and its provenance fields' JSON (without `warc_record_id` unless `record_id`; `fields`
        after them), or why the record is not a page."""
        where = f"offset {self.offset}" if self.offset is not None else f"record {self.record_id}"
        if not self.url.strip():
            return RejectKind.MISSING_URL.reject(f": no WARC-Target-URI ({where}, {self.warc_type} record)")
        if self.warc_type == "revisit" and self.stored is not None:
            return self._stored_page(self.stored, where, record_id, fields)
        if self.warc_type == "revisit" and self.original is None and self.record_cut is not None:
            return RejectKind.REVISIT_WITHOUT_RECORD.reject(
                f": the record it refers to (offset {self.record_cut}) is cut off ({where}, {self.url})"
            )
        if self.warc_type == "revisit" and self.original is None:
            return RejectKind.REVISIT_WITHOUT_RECORD.reject(
                f": {self.refers_to or self.payload_digest or 'no WARC-Refers-To or payload digest'} "
                f"is neither in this file nor a page of the database ({where}, {self.url})",
            )
        # `PageRecord`'s fields in its order, each written as JSON by its known type
        extra = [f'"warc_file": {_json_str(self.warc_file)}']
        if record_id:
            extra.append(f'"warc_record_id": {_json_str(self.record_id)}')
        extra.append(f'"warc_type": {_json_str(self.warc_type)}')
        extra.extend(self._location())
        source = self.original or self
        if source.payload_digest:
            extra.append(f'"payload_digest": {_json_str(source.payload_digest)}')
        if self.original is not None:
            extra.append(f'"refers_to_record_id": {_json_str(self.original.record_id)}')
            if self.original.offset is not None:
                extra.append(f'"refers_to_offset": {self.original.offset:d}')
        if self.warc_type == "conversion":  # WET: the block is the page's text, UTF-8
            text = bytes_to_str(bytes(self.block), "utf-8", errors="replace")
            return CapturedPage(self.url, None, text, self.date, None, _json_object(extra, fields))

        # A response that is not HTTP (Heritrix's `dns:` records, text/dns) is read as a resource.
        # WARC/0.17 writers gave a response the payload's Content-Type (text/html): its block still starts
        # with the HTTP status line.
        http_block = self.warc_type != "resource" and (
            self.content_type is None
            or self.content_type.lower().startswith(("application/http", "message/http"))
            or STATUS_LINE.match(self.block, 0, 64) is not None
        )
        if http_block and self.original is None and (page := self._utf8_page(where, extra, fields)):
            return page
        body: bytes | memoryview
        # a revisit's block may be empty (the standard allows it): the record it refers to has the header
        own = (
            parse_http(self.block)
            if http_block and (self.original is None or bytes(self.block).strip())
            else None
        )
        if isinstance(own, str):
            return RejectKind.BROKEN_HTTP_HEADER.reject(f": {own} ({where}, {self.url})")
        if self.original is not None:
            http = parse_http(source.block)
            if isinstance(http, str):
                return RejectKind.BROKEN_HTTP_HEADER.reject(
                    f": {http} in the record it refers to ({where}, {self.url})",
                )
            status = http[0] if own is None or own[0] in (None, 304) else own[0]
            headers, body = http[1], http[2]
        elif own is None:  # resource: the block is the payload
            status, headers, body = 200, {"content-type": self.content_type or ""}, self.block
        else:
            status, headers, body = own
        try:
            body, failed = decode_body(body, headers, limit=BODY_LIMIT)
        except BodyTooLarge as exc:
            return RejectKind.PAGE_TOO_LARGE.reject(
                f": Content-Encoding {exc.args[0]} inflates past {BODY_LIMIT / 1e6:.0f} MB, "
                f"inflating stopped there ({where}, {self.url})",
            )
        if failed:
            return RejectKind.UNDECODABLE_ENCODING.reject(f" {failed} ({where}, {self.url})", failed)
        content_type = headers.get("content-type", "")
        mime = sniff_mime(body, content_type)
        if mime not in HTML_TYPES:
            return RejectKind.NOT_HTML.reject(f" {mime} ({where}, {self.url})", mime)
        html, charset, charset_source = decode_html(body, content_type)
        if not html or html.isspace():
            return RejectKind.EMPTY_PAGE.reject(f" (html is blank; {where}, {self.url})")
        extra.append(f'"charset": {_json_str(charset)}')
        extra.append(f'"charset_source": {_json_str(charset_source)}')
        return CapturedPage(self.url, html, None, self.date, status, _json_object(extra, fields))

    def _utf8_page(
        self, where: str, extra: list[str], fields: PageRecord | None
    ) -> CapturedPage | Reject | None:
        """The page of the common response, HTML whose charset resolves to UTF-8, read in one compiled pass
        (`_archives.utf8_html`, _payload.c: what the Python path makes of it); None for any other response."""
        compiled = utf8_html(self.block, BODY_LIMIT)
        if compiled is None:
            return None
        status, html, charset_source = compiled
        if not html or html.isspace():
            return RejectKind.EMPTY_PAGE.reject(f" (html is blank; {where}, {self.url})")
        extra.append('"charset": "utf-8"')
        extra.append(f'"charset_source": {_json_str(charset_source)}')
        return CapturedPage(
            self.url, html, None, self.date, status, _json_object(extra, fields), html_from_utf8=True
        )

    def _stored_page(
        self, stored: StoredPage, where: str, record_id: bool, fields: PageRecord | None
    ) -> CapturedPage | Reject:
        """A revisit as a copy of a page an earlier ingest stored: its HTML, this record's URL and date."""
        own = parse_http(self.block) if self.block else None
        status = stored.status if isinstance(own, str) or own is None or own[0] in (None, 304) else own[0]
        extra = [f'"warc_file": {_json_str(self.warc_file)}']
        if record_id:
            extra.append(f'"warc_record_id": {_json_str(self.record_id)}')
        extra.append(f'"warc_type": {_json_str(self.warc_type)}')
        extra.append(f'"payload_digest": {_json_str(self.payload_digest)}')
        extra.append(f'"refers_to_page_id": {stored.page_id:d}')
        # the stored page's record, named "refers_to_<key>" (`STORED_WARC_FIELDS`, in its order)
        for key in ("file", "record_id", "offset"):
            if key in stored.warc:
                extra.append(f'"refers_to_{key}": {_json_value(stored.warc[key])}')
        extra.extend(self._location())
        for key in ("charset", "charset_source"):  # how the stored page's HTML was decoded
            if key in stored.warc:
                extra.append(f'"{key}": {_json_value(stored.warc[key])}')
        return CapturedPage(self.url, stored.html, None, self.date, status, _json_object(extra, fields))


def _json_str(value: str | None) -> str:
    """A str (or None) as JSON writes it (`ensure_ascii=False`)."""
    return "null" if value is None else _encode_str(value)


def _json_value(value: object) -> str:
    """A field's value as `json.dumps(value, ensure_ascii=False, default=str)` writes it."""
    if type(value) is str:
        return _encode_str(value)
    if type(value) is int:
        return str(value)
    if value is None or type(value) is bool:
        return _JSON_CONSTANTS[value]
    return json.dumps(value, ensure_ascii=False, default=str)


_JSON_CONSTANTS = {None: "null", True: "true", False: "false"}


def _json_object(members: list[str], fields: PageRecord | None) -> str:
    """A JSON object of `members` ('"key": value' texts) with `fields` after them, as `json.dumps` writes it."""
    if fields:
        members = members + [f"{_encode_str(key)}: {_json_value(value)}" for key, value in fields.items()]
    return "{" + ", ".join(members) + "}"


def page_record(page: CapturedPage | Reject) -> PageRecord | Reject:
    """A captured page as the dict `validate` reads it as well (its extra fields decoded)."""
    if isinstance(page, Reject):
        return page
    rec: dict[str, Any] = {"url": page.url}
    if page.html is not None:
        rec.update(html=page.html, fetched_at=page.fetched_at, status=page.status)
    else:
        rec.update(text=page.text, fetched_at=page.fetched_at)
    rec.update(json.loads(page.extra))
    return cast(PageRecord, rec)


@dataclass(frozen=True, slots=True)
class StoredPage:
    """A page an earlier ingest stored, standing for a revisit's record: its id, raw HTML, status, and
    where its record is and how it was decoded (`warc`: file, record_id, offset, charset, charset_source, as
    its `extra` names them, `STORED_WARC_FIELDS`)."""

    page_id: int
    html: str
    status: int | None
    warc: dict[str, Any]


# A stored page's extra field -> its key in `StoredPage.warc` (the revisit's extra names its record's
# "refers_to_<key>", and keeps the charset its HTML was decoded with as it is).
STORED_WARC_FIELDS = {
    "warc_file": "file",
    "warc_record_id": "record_id",
    "warc_offset": "offset",
    "charset": "charset",
    "charset_source": "charset_source",
}

# (payload digest, WARC-Refers-To-Target-URI, WARC-Refers-To-Date) -> the stored page, or None
StoredPageLookup = Callable[[str, str | None, str | None], StoredPage | None]

# record numbers of the file being read -> the pages stored for those of them that made one
SourcePages = Callable[[list[int]], dict[int, StoredPage]]


def describe_record(extra: str | dict[str, Any] | None) -> str | None:
    """Where a page's record is in its archive, for a person ("crawl.warc.gz · record <urn:...> · byte
    offset 1,234 · revisit of <urn:...> at byte offset 56"); None for a page that did not come from a WARC
    file."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except ValueError:
            return None
    if not isinstance(extra, dict) or "warc_file" not in extra:
        return None
    parts = [str(extra["warc_file"]), f"record {extra.get('warc_record_id')}"]
    if isinstance(extra.get("warc_offset"), int):
        where = "" if extra.get("warc_offset_in", "file") == "file" else f" in the {extra['warc_offset_in']}"
        parts.append(f"byte offset {extra['warc_offset']:,}{where}")
    if extra.get("warc_type") == "revisit":
        parts.append(f"revisit of {extra.get('refers_to_record_id')}{_referred_record(extra)}")
    if extra.get("warc_truncated"):
        parts.append(f"truncated by the crawler ({extra['warc_truncated']}): the text may be partial")
    if extra.get("charset"):
        parts.append(f"charset {extra['charset']} ({extra.get('charset_source')})")
    return " · ".join(parts)


def _referred_record(extra: dict[str, Any]) -> str:
    """Where a revisit's record is: its WACZ member or file when another than the revisit's own (a crawler's
    rolled-over WARC, an earlier ingest's file), and its byte offset there."""
    other = extra.get("refers_to_wacz_member") or extra.get("refers_to_file")
    where = f" in {other}" if other and other != extra.get("warc_file") else ""
    if isinstance(extra.get("refers_to_offset"), int):
        where += f" at byte offset {extra['refers_to_offset']:,}"
    return where


def _no_fields() -> PageRecord:
    return {}


@dataclass(frozen=True, slots=True)
class ArchiveCapture:
    """A `WarcCapture` read from an ARC file or from a WARC inside a WACZ: `record()` is the capture's,
    with `fields` added to the page (`archive_format`, the WACZ member, `wacz_page`, ...) and the
    capture's fields named in `drop` left out (an ARC record has no WARC-Record-ID)."""

    capture: WarcCapture
    fields: PageRecord = field(default_factory=_no_fields)
    drop: tuple[Literal["warc_record_id"], ...] = ()

    def record(self) -> PageRecord | Reject:
        return page_record(self.page())

    def page(self) -> CapturedPage | Reject:
        page = self.capture.page(record_id="warc_record_id" not in self.drop, fields=self.fields)
        member = self.fields.get("wacz_member")
        if isinstance(page, Reject) and member:
            # its offset is into the member, as the WACZ reader's own rejects say: the WARCs of one WACZ
            # have records at the same offsets
            return page._replace(detail=f"{page.detail} (in {member})")
        return page


# A batch of an archive's records holds about as many bytes of blocks as a JSON-lines block holds of lines
# (and at most `batch_records` records): 256 pages of 100 KB are 25 MB, and the main process holds a few
# batches at a time (read ahead, in shared memory, in flight).
BATCH_BYTES = BLOCK_BYTES


def block_bytes(item: object) -> int:
    """The bytes of the record blocks `item` brings to a batch (a revisit's record's as well)."""
    if isinstance(item, ArchiveCapture):
        item = item.capture
    if not isinstance(item, WarcCapture):
        return 0
    return len(item.block) + (len(item.original.block) if item.original is not None else 0)


class BatchedReader(Protocol):
    """An archive reader's bounds on a batch, and how far into its file it has read."""

    batch_records: int
    batch_bytes: int

    @property
    def read_position(self) -> int: ...


def record_batches(lines: Iterable[RawLine], reader: BatchedReader) -> Iterator[RecordBatch]:
    """`lines` in `RecordBatch`es of at most `reader.batch_records` records and about `reader.batch_bytes` of
    record blocks, each with `reader.read_position` when it was cut (0 once the file is closed: the load
    reports the whole file read at its end)."""
    batch, size = RecordBatch(), 0
    for raw in lines:
        batch.append(raw)
        size += block_bytes(raw.payload)
        if len(batch) >= reader.batch_records or size >= reader.batch_bytes:
            batch.end_byte = reader.read_position
            yield batch
            batch, size = RecordBatch(), 0
    if batch:
        batch.end_byte = reader.read_position
        yield batch


class ArchiveBatches:
    """An archive's records in batches for the workers: `_items()` in file order, numbered from 1 (a page or
    a named error each), as `record_batches` cuts them."""

    batch_records: int
    batch_bytes: int = BATCH_BYTES
    _reading: BinaryIO | None = None  # the file as `_items` reads it, while it does

    def _items(self) -> Iterator[ArchiveCapture | Reject]:
        raise NotImplementedError

    @property
    def read_position(self) -> int:
        """How far into the file (bytes as stored) the records read so far reach."""
        return raw_position(self._reading)

    def __iter__(self) -> Iterator[RecordBatch]:
        yield from record_batches(
            (RawLine(number, item) for number, item in enumerate(self._items(), start=1)), self
        )

    def records(self) -> Iterator[RawLine]:
        for batch in self:
            yield from batch


def describe_archive_record(extra: str | dict[str, Any] | None) -> str | None:
    """Where a page's record is in its archive, for a person: a WARC record as `warc.describe_record`
    says it; an ARC record by file, ARC version and byte offset; a WARC record in a WACZ with the WACZ
    file and member first, and whether the WACZ's pages list names the page. None for a page that did
    not come from an archive."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except ValueError:
            return None
    if not isinstance(extra, dict):
        return None
    fmt = extra.get("archive_format")
    if fmt == "arc":
        parts = [f"{extra.get('warc_file')} (ARC version {extra.get('arc_version')})"]
        if isinstance(extra.get("warc_offset"), int):
            where = (
                "" if extra.get("warc_offset_in", "file") == "file" else f" in the {extra['warc_offset_in']}"
            )
            parts.append(f"byte offset {extra['warc_offset']:,}{where}")
        if extra.get("charset"):
            parts.append(f"charset {extra['charset']} ({extra.get('charset_source')})")
        return " · ".join(parts)
    inner = describe_record(extra)
    if fmt != "wacz" or inner is None:
        return inner
    if extra.get("wacz_page") is True:
        listed = "in the WACZ's pages list (a page the crawler was asked for)"
    elif extra.get("wacz_extra_page") is True:
        listed = "in the WACZ's extra pages list (found by the crawler)"
    else:
        listed = "not in the WACZ's pages lists"
    # the member's path names its WARC file: the record's line goes on from the record id
    inner = inner.removeprefix(f"{extra['warc_file']} · ")
    return f"{extra.get('wacz_file')} · {extra.get('wacz_member')} · {listed} · {inner}"
