"""WARC, WARC.gz and WET archives -> the records the rest of ingest reads (FastWARC).

The main process only splits the archive into records (`WarcBatches`, FastWARC's reader, its own
inflate so that offsets are offsets into the compressed file); each record's bytes cross to a worker
as a `WarcCapture`, and `WarcCapture.record()` does the per-page work there: HTTP header, chunked and
Content-Encoding decoding, the HTML test, the charset.

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

import codecs
import io
import json
import re
import zlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from fastwarc.warc import ArchiveIterator, WarcRecordType
from resiliparse.parse.encoding import bytes_to_str, detect_encoding, map_encoding_to_html5

from .inflate import GzipBreak, GzipStream
from .rejects import Reject, RejectKind

if TYPE_CHECKING:
    from .ingest import LineBlock, RawLine

WARC_MAGIC = b"WARC/"
FRAMED_MAGIC = (b"\x04\x22\x4d\x18", b"\x28\xb5\x2f\xfd")  # LZ4 frame, Zstandard frame
_GZIP_MAGIC = b"\x1f\x8b\x08"
_PAGE_TYPES = (
    WarcRecordType.response | WarcRecordType.resource | WarcRecordType.revisit | WarcRecordType.conversion
)
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# A Content-Type that says nothing about the bytes: sniff them.
_UNSPECIFIC_TYPES = frozenset(
    {"", "application/octet-stream", "unk", "unknown", "application/unknown", "binary/octet-stream"}
)
_HEAD_BYTES = (
    4096  # where a <meta charset> must be (the HTML standard says the first 1024 bytes; pages overrun it)
)
_META_CHARSET = re.compile(
    rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9_.:+-]{1,40})""", re.IGNORECASE
)
_MARKUP = re.compile(rb"<(?:!doctype\s+html|html|head|body|title|div|p|meta|a)\b", re.IGNORECASE)
_MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_-]{0,60}/[A-Za-z0-9][A-Za-z0-9.+_-]{0,60}")
_BINARY_MAGIC = (
    (b"\x89PNG", "image/png"),
    (b"GIF8", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_RESYNC_WINDOW = 1 << 20
# A record's version line after the previous record's end (WARC/0.17, 0.18, 1.0, 1.1, ...).
_NEXT_HEADER = re.compile(rb"\r?\n\r?\nWARC/\d+\.\d+\r?\n")
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


# --- per record, in the workers -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class WarcCapture:
    """One page-like WARC record as read from the archive: its block (HTTP header and payload, still
    chunked and content-encoded) and the WARC header fields ingest keeps. `record()` decodes it."""

    warc_type: str  # response | resource | revisit | conversion
    url: str
    date: str | None  # WARC-Date as written (ISO 8601)
    record_id: str | None
    offset: int | None
    warc_file: str
    block: bytes
    content_type: str | None  # the WARC Content-Type (of the block)
    payload_digest: str | None
    truncated: str | None  # WARC-Truncated: length | time | disconnect | unspecified
    # A revisit: the record it stands for (its block, id and offset); None when it is not in the file.
    original: WarcCapture | None = None
    refers_to: str | None = None  # WARC-Refers-To: the record id of the record a revisit stands for
    offset_in: str = "file"  # or "gunzipped stream": a file gzipped whole has no per-record offsets
    # A revisit whose record (at this offset) is read in the pass after the first (`WarcBatches._deferred`).
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
    def awaits_stored_page(self) -> bool:
        """A revisit whose record is not in its file, with a payload digest to find the page of another file
        by (`StoredPageLookup`): read without a lookup, it is still unlinked."""
        return (
            self.warc_type == "revisit"
            and self.payload_digest is not None
            and self.original is None
            and self.stored is None
            and self.record_cut is None
            and self.pending is None
            and not self.forward
        )

    @property
    def page_payload_digest(self) -> str | None:
        """The payload digest its page's `extra` keeps: of the record a revisit stands for, else its own."""
        return (self.original or self).payload_digest

    def _location(self) -> dict[str, Any]:
        """Where the record lies in its file, for its page's extra fields."""
        out: dict[str, Any] = {}
        if self.offset is not None:
            out["warc_offset"] = self.offset
            if self.offset_in != "file":
                out["warc_offset_in"] = self.offset_in
        if self.truncated:
            out["warc_truncated"] = self.truncated
        return out

    def record(self) -> dict[str, Any] | Reject:
        """The ingest record (`url`, `html` or `text`, `fetched_at`, `status`, provenance fields), or why
        the record is not a page."""
        where = f"offset {self.offset}" if self.offset is not None else f"record {self.record_id}"
        if not self.url.strip():
            return RejectKind.MISSING_URL.reject(f": no WARC-Target-URI ({where}, {self.warc_type} record)")
        if self.warc_type == "revisit" and self.stored is not None:
            return self._stored_record(self.stored, where)
        if self.warc_type == "revisit" and self.original is None and self.record_cut is not None:
            return RejectKind.REVISIT_WITHOUT_RECORD.reject(
                f": the record it refers to (offset {self.record_cut}) is cut off ({where}, {self.url})"
            )
        if self.warc_type == "revisit" and self.original is None:
            return RejectKind.REVISIT_WITHOUT_RECORD.reject(
                f": {self.refers_to or self.payload_digest or 'no WARC-Refers-To or payload digest'} "
                f"is neither in this file nor a page of the database ({where}, {self.url})",
            )
        extra: dict[str, Any] = {
            "warc_file": self.warc_file,
            "warc_record_id": self.record_id,
            "warc_type": self.warc_type,
        }
        extra.update(self._location())
        source = self.original or self
        if source.payload_digest:
            extra["payload_digest"] = source.payload_digest
        if self.original is not None:
            extra["refers_to_record_id"] = self.original.record_id
            if self.original.offset is not None:
                extra["refers_to_offset"] = self.original.offset
        if self.warc_type == "conversion":  # WET: the block is the page's text, UTF-8
            text = bytes_to_str(self.block, "utf-8", errors="replace")
            return {"url": self.url, "text": text, "fetched_at": self.date, **extra}

        # A response that is not HTTP (Heritrix's `dns:` records, text/dns) is read as a resource.
        # WARC/0.17 writers gave a response the payload's Content-Type (text/html): its block still starts
        # with the HTTP status line.
        http_block = self.warc_type != "resource" and (
            self.content_type is None
            or self.content_type.lower().startswith(("application/http", "message/http"))
            or _STATUS_LINE.match(self.block, 0, 64) is not None
        )
        # a revisit's block may be empty (the standard allows it): the record it refers to has the header
        own = parse_http(self.block) if http_block and (self.original is None or self.block.strip()) else None
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
        from .ingest import MAX_PAGE_BYTES  # (ingest imports this module)

        # A page's bytes may be twice its UTF-8 (UTF-16 of ASCII): `validate` judges the decoded page.
        limit = 2 * MAX_PAGE_BYTES
        try:
            body, failed = decode_body(body, headers, limit=limit)
        except BodyTooLarge as exc:
            return RejectKind.PAGE_TOO_LARGE.reject(
                f": Content-Encoding {exc.args[0]} inflates past {limit / 1e6:.0f} MB, "
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
        extra["charset"] = charset
        extra["charset_source"] = charset_source
        return {"url": self.url, "html": html, "fetched_at": self.date, "status": status, **extra}

    def _stored_record(self, stored: StoredPage, where: str) -> dict[str, Any] | Reject:
        """A revisit as a copy of a page an earlier ingest stored: its HTML, this record's URL and date."""
        own = parse_http(self.block) if self.block else None
        status = stored.status if isinstance(own, str) or own is None or own[0] in (None, 304) else own[0]
        extra: dict[str, Any] = {
            "warc_file": self.warc_file,
            "warc_record_id": self.record_id,
            "warc_type": self.warc_type,
            "payload_digest": self.payload_digest,
            "refers_to_page_id": stored.page_id,
            **{f"refers_to_{k}": v for k, v in stored.warc.items()},
        }
        extra.update(self._location())
        return {"url": self.url, "html": stored.html, "fetched_at": self.date, "status": status, **extra}


@dataclass(frozen=True, slots=True)
class StoredPage:
    """A page an earlier ingest stored, standing for a revisit's record: its id, raw HTML, status, and
    where its record is (`warc`: file, record_id, offset, as its `extra` names them)."""

    page_id: int
    html: str
    status: int | None
    warc: dict[str, Any]


# A stored page's extra field -> its key in `StoredPage.warc` (the revisit's extra names it "refers_to_<key>").
STORED_WARC_FIELDS = {"warc_file": "file", "warc_record_id": "record_id", "warc_offset": "offset"}

# (payload digest, WARC-Refers-To-Target-URI, WARC-Refers-To-Date) -> the stored page, or None
StoredPageLookup = Callable[[str, str | None, str | None], StoredPage | None]


_STATUS_LINE = re.compile(rb"\s*HTTP/\d(?:\.\d)?[ \t]+(\d{3})(?:\s|$)")
# Only the headers decoding needs: a regex over the header bytes beats splitting every line in Python.
_HEADER = re.compile(
    rb"^(content-type|content-encoding|transfer-encoding)[ \t]*:[ \t]*([^\r\n]*)",
    re.IGNORECASE | re.MULTILINE,
)


def parse_http(block: bytes) -> tuple[int | None, dict[str, str], bytes] | str:
    """(status, the Content-Type / Content-Encoding / Transfer-Encoding headers by lower-case name, body)
    of an HTTP response block, or what is wrong with its header."""
    end = block.find(b"\r\n\r\n")
    sep = 4
    if end < 0:
        end, sep = block.find(b"\n\n"), 2
    if end < 0:
        end, sep = len(block), 0  # a header with no body (a revisit, a HEAD response)
    head = block[:end]
    m = _STATUS_LINE.match(head)
    if m is None:
        return "no status line"
    headers: dict[str, str] = {}
    for name, value in _HEADER.findall(head, m.end()):
        key, text = name.decode("ascii").lower(), value.strip().decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return int(m.group(1)), headers, block[end + sep :]


def _dechunk(body: bytes) -> bytes | None:
    """The payload of a chunked body, or None when it is not chunked after all (some crawlers store
    the payload decoded and keep the header)."""
    out: list[bytes] = []
    pos = 0
    while True:
        eol = body.find(b"\n", pos)
        if eol < 0:
            return b"".join(out) if out else None  # cut off inside the chunks: what arrived
        size_field = body[pos:eol].split(b";")[0].strip()
        try:
            size = int(size_field, 16)
        except ValueError:
            return b"".join(out) if out else None
        if size == 0:
            return b"".join(out)
        out.append(body[eol + 1 : eol + 1 + size])
        pos = eol + 1 + size
        if body[pos : pos + 2] == b"\r\n":
            pos += 2
        elif body[pos : pos + 1] == b"\n":
            pos += 1


_DECODE_ERRORS = (zlib.error, OSError)


class BodyTooLarge(Exception):
    """A Content-Encoding that inflates past the limit: `args[0]` is the coding."""


def _inflate(body: bytes, coding: str, limit: int) -> bytes:
    """`body` decoded from `coding`, inflated at most `limit` bytes (`BodyTooLarge` past it): a bomb of a
    few KB that inflates to gigabytes costs `limit` bytes of memory, never its whole."""
    if coding in ("gzip", "x-gzip"):
        d = zlib.decompressobj(31)
        out = d.decompress(body, limit + 1)
        while len(out) <= limit and d.eof and d.unused_data.startswith(_GZIP_MAGIC):  # concatenated members
            rest = d.unused_data
            d = zlib.decompressobj(31)
            out += d.decompress(rest, limit + 1 - len(out))
    elif coding == "deflate":  # zlib-wrapped as the standard says, or raw deflate as some servers send
        try:
            d = zlib.decompressobj(15)
            out = d.decompress(body, limit + 1)
        except zlib.error:
            d = zlib.decompressobj(-15)
            out = d.decompress(body, limit + 1)
    elif coding == "br":
        from fastwarc.stream_io import BrotliReader

        out = BrotliReader(io.BytesIO(body)).read(limit + 1)
    else:
        raise ValueError(coding)
    if len(out) > limit:
        raise BodyTooLarge(coding)
    return out


def decode_body(body: bytes, headers: dict[str, str], *, limit: int) -> tuple[bytes, str | None]:
    """The payload with chunked transfer and Content-Encoding undone; (body, the coding that failed).
    Each coding inflates at most `limit` bytes: `BodyTooLarge` names one that goes past it."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        dechunked = _dechunk(body)
        if dechunked is not None:
            body = dechunked
    codings = [c.strip().lower() for c in headers.get("content-encoding", "").split(",")]
    for coding in reversed([c for c in codings if c and c != "identity"]):
        try:
            body = _inflate(body, coding, limit)
        except ValueError:  # an unknown coding: the bytes decide below
            continue
        except _DECODE_ERRORS:  # a payload stored decoded, or broken (BrotliReader raises OSError)
            if sniff_mime(body, "") in HTML_TYPES:
                continue
            return body, coding[:20]
    return body, None


def sniff_mime(body: bytes, content_type: str) -> str:
    """The payload's MIME type: the Content-Type's, else sniffed from the bytes."""
    declared = content_type.split(";", 1)[0].strip().lower()
    head = body[:1024].lstrip()
    binary = next((mime for magic, mime in _BINARY_MAGIC if head.startswith(magic)), None)
    if declared not in _UNSPECIFIC_TYPES:
        m = _MIME.fullmatch(declared)
        if m is None:
            return "invalid/content-type"
        # "text/html" on an image or a PDF (a misconfigured server): the bytes win
        return binary if binary is not None and m.group(0) in HTML_TYPES else m.group(0)
    if binary is not None:
        return binary
    if _MARKUP.search(head):
        return "text/html"
    return "application/octet-stream" if b"\x00" in head else "text/plain"


def _codec(label: str | None) -> str | None:
    """The WHATWG encoding for a charset label, or None for a label no codec knows."""
    if not label:
        return None
    name = map_encoding_to_html5(label.strip().strip("\"'").lower(), fallback_utf8=False)
    if name is None:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _is_utf8_text(body: bytes) -> bool:
    """Non-ASCII bytes that are valid UTF-8: a page declared as a single-byte charset is really UTF-8."""
    if body.isascii():
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode_html(body: bytes, content_type: str) -> tuple[str, str, str]:
    """(text, encoding used, where it came from): the HTTP header's charset, else a BOM, else
    `<meta charset>` / http-equiv, else detection (resiliparse). A declared single-byte charset on bytes
    that are valid UTF-8 (with non-ASCII) loses to UTF-8, a declared charset the bytes do not decode in
    loses to detection; what still does not decode becomes U+FFFD (never an error)."""
    _, _, params = content_type.partition(";")
    header = None
    for param in params.split(";"):
        key, eq, value = param.partition("=")
        if eq and key.strip().lower() == "charset":
            header = value
    for bom, name in _BOMS:
        if body.startswith(bom):
            bom_codec = name
            break
    else:
        bom_codec = None
    if (codec := _codec(header)) is not None:
        source = "http"
    elif bom_codec is not None:
        codec, source = bom_codec, "bom"
    elif (m := _META_CHARSET.search(body[:_HEAD_BYTES])) and (codec := _codec(m.group(1).decode("ascii"))):
        source = "meta"
    elif body.isascii():
        codec, source = "utf-8", "ascii"
    else:
        codec, source = _codec(detect_encoding(body)) or "utf-8", "detected"
    if codec.startswith("utf-16") and source in ("meta", "detected"):
        codec = "utf-8"  # a page that names UTF-16 in its own ASCII bytes is not UTF-16 (the HTML standard's rule)
    if codec != "utf-8" and not codec.startswith("utf-16") and _is_utf8_text(body):
        codec, source = "utf-8", f"{source} {codec} overruled: the bytes are UTF-8"
    if bom_codec is not None and bom_codec == codec:
        body = body[len(codecs.BOM_UTF8) if codec == "utf-8" else 2 :]
    try:
        return body.decode(codec), codec, source
    except UnicodeDecodeError:  # a declared charset the bytes break: what detection finds, if that reads them
        detected = _codec(detect_encoding(body))
        if detected is not None and detected != codec:
            try:
                return (
                    body.decode(detected),
                    detected,
                    f"detected ({source} {codec} does not decode the bytes)",
                )
            except UnicodeDecodeError:
                pass
    return body.decode(codec, errors="replace"), codec, f"{source}, undecodable bytes replaced"


def describe_record(extra: str | dict[str, Any] | None) -> str | None:
    """Where a page's record is in its archive, for a person ("crawl.warc.gz · record <urn:...> · byte
    offset 1,234 · revisit of <urn:...>"); None for a page that did not come from a WARC file."""
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
        parts.append(f"revisit of {extra.get('refers_to_record_id')}")
    if extra.get("warc_truncated"):
        parts.append(f"truncated by the crawler ({extra['warc_truncated']}): the text may be partial")
    if extra.get("charset"):
        parts.append(f"charset {extra['charset']} ({extra.get('charset_source')})")
    return " · ".join(parts)


# --- the archive, in the main process --------------------------------------------------------------
def _headers(rec: Any) -> dict[str, str]:
    """A record's WARC header by lower-case name (one call into FastWARC: 5x faster than a `get` per field)."""
    return {k.lower(): v for k, v in rec.headers.items()}


def _type_name(rtype: WarcRecordType) -> str:
    return str(rtype)  # FastWARC names its types: 'response', 'revisit', ...


_PAGE_SOURCES = WarcRecordType.response | WarcRecordType.resource


class WarcBatches:
    """The page-like records of a WARC file as batches of `RawLine(record number, WarcCapture)`, with
    bad records (malformed, cut off) as `RawLine(record number, Reject)`, which `validate` returns as is.

    A file gzipped per record is read by FastWARC's own inflate, so offsets are those of the records'
    gzip members; one gzipped as a single stream is inflated by ISA-L (`inflate.GzipStream`) and offsets are
    into the decompressed stream (`warc_offset_in` says which). After iteration, `skipped` counts the
    records that are not pages by WARC-Type, and `revisits` the revisit records linked to their record."""

    def __init__(
        self, path: Path, *, batch_records: int = 256, stored_pages: StoredPageLookup | None = None
    ) -> None:
        self.path = Path(path)
        self.name = self.path.name
        self.batch_records = batch_records
        self.skipped: Counter[str] = Counter()
        self.revisits = 0
        members, one_stream = _compression(self.path)
        self._members = members and not one_stream  # offsets are gzip members'
        self._one_stream = one_stream
        with open(self.path, "rb") as f:
            # FastWARC reads LZ4 and Zstandard too; a record's offset is its frame's while frames and
            # records are one to one, none after two records share a frame
            self._framed = f.read(4) in FRAMED_MAGIC
        self._no_offsets = False
        self._recent: OrderedDict[int, WarcCapture] = OrderedDict()
        self._recent_bytes = 0
        self.offset_in = "gunzipped stream" if one_stream else "file"
        self._by_id: dict[str, int] = {}  # record id -> offset of a response / resource
        self._by_digest: dict[str, int] = {}  # payload digest -> offset of the first with it
        self._cut: dict[str, int] = {}  # record id or payload digest -> offset of a record cut off
        self._aux_streams: dict[str, BinaryIO] = {}
        # Looks up a page stored by an earlier ingest for a revisit whose record is not in this file.
        self.stored_pages = stored_pages
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

    def __iter__(self) -> Iterator[list[RawLine] | LineBlock]:
        """Batches of records; a one-stream file failing its CRC ends in a `LineBlock` holding the reject,
        with `discard_from` 1: the records sent before came from a stream that failed its check."""
        from .ingest import LineBlock, RawLine

        batch: list[RawLine] = []
        for number, item in self._records():
            if isinstance(item, Reject) and item.kind == RejectKind.CORRUPT_FILE:
                if batch:
                    yield batch
                    batch = []
                yield LineBlock(number, b"", item, discard_from=1)
                continue
            batch.append(RawLine(number, item))
            if len(batch) >= self.batch_records:
                yield batch
                batch = []
        if batch:
            yield batch

    def record_lists(self) -> Iterator[list[RawLine]]:
        """The batches as lists, a failed stream's `LineBlock` as its one reject (for a reader that
        cannot take back the records it was given before: it keeps them)."""
        from .ingest import LineBlock, RawLine

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
        return WarcCapture(
            warc_type=_type_name(rec.record_type),
            url=(h.get("warc-target-uri") or "").strip("<> "),
            date=h.get("warc-date"),
            record_id=h.get("warc-record-id"),
            offset=pos,
            warc_file=self.name,
            block=block,
            content_type=h.get("content-type"),
            payload_digest=h.get("warc-payload-digest"),
            truncated=h.get("warc-truncated"),
            offset_in=self.offset_in,
            refers_to=h.get("warc-refers-to"),
            refers_to_url=(h.get("warc-refers-to-target-uri") or "").strip("<> ") or None,
            refers_to_date=h.get("warc-refers-to-date"),
        )

    def _records(self) -> Iterator[tuple[int, WarcCapture | Reject]]:
        """(record number, capture or `Reject`) for every page-like or bad record; the others are counted.

        A revisit whose record is not among those read before it waits for the end of the file: its
        record may come later in the file (a file holding two sessions), else it may be a page stored by
        an earlier ingest (`stored_pages`). In a file gzipped as one stream a record is found again only by
        inflating the stream up to it, so a revisit of a record no longer kept (`_remember`) waits for one
        more pass that reads all of them. The waiting revisits come last, each with its own record number."""
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
                pos = self._by_id.get(cap.refers_to or "") if cap.refers_to else None
                if pos is None and cap.payload_digest:
                    pos = self._by_digest.get(cap.payload_digest)
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
        if reread:
            yield from self._deferred(reread)

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
        by_pos: dict[int, list[tuple[int, WarcCapture]]] = {}
        for number, cap in waiting:
            by_pos.setdefault(cap.pending, []).append((number, cap))  # type: ignore[arg-type]
        last = max(by_pos)

        def linked(pos: int, original: WarcCapture | None) -> Iterator[tuple[int, WarcCapture]]:
            for number, cap in by_pos.pop(pos):
                if original is not None:
                    self.revisits += 1
                yield number, replace(cap, original=original, pending=None)

        with self._open() as f:
            try:
                for rec in ArchiveIterator(f, parse_http=False):
                    pos = rec.stream_pos
                    if pos in by_pos:
                        block = rec.reader.read()
                        whole = len(block) >= rec.content_length
                        yield from linked(
                            pos, self._capture(rec, pos, block, _headers(rec)) if whole else None
                        )
                    if pos >= last:
                        break
            except OSError:  # a malformed record: the rest are sought one by one
                pass
        for pos in sorted(by_pos):
            yield from linked(pos, self._read_at(pos))

    def _scan(self) -> Iterator[tuple[int, WarcCapture | Reject]]:
        """`_records` in file order, a revisit whose record must be read again marked `pending`, one whose
        record is not among those before it marked `forward`."""
        by_id, by_digest = self._by_id, self._by_digest
        # The last capture is held back one record: a read error right after it can still flag its length.
        held: WarcCapture | None = None
        held_number = 0
        number = 0
        prev_pos = -1
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
            while True:
                f.seek(start)
                last_pos = -1
                error: str | None = None
                try:
                    for rec in ArchiveIterator(f, parse_http=False):
                        number += 1
                        pos = last_pos = rec.stream_pos
                        rtype = rec.record_type
                        if not rtype & _PAGE_TYPES:
                            got = rec.reader.consume()
                            if got < rec.content_length:  # the file ends inside it
                                last_start = (pos, f"a {_type_name(rtype)} record")
                                if self._break is not None:
                                    break
                                if held is not None:
                                    yield held_number, held
                                    held = None
                                yield (
                                    number,
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
                            if held is not None:
                                yield held_number, held
                                held = None
                            yield number, RejectKind.RECORD_CUT_OFF.reject(f": {shown} (offset {pos}, {url})")
                            continue
                        if self._framed and pos == prev_pos:  # lz4 / zstd frames holding several records
                            self._framed, self._no_offsets = False, True
                            if held is not None:
                                held = replace(held, offset=None)
                        prev_pos = pos
                        cap = self._capture(rec, pos, block, h)
                        if self._no_offsets:
                            cap = replace(cap, offset=None)
                        if rtype == WarcRecordType.revisit:
                            cap = self._link(cap, by_id, by_digest)
                        elif rtype & _PAGE_SOURCES:
                            if cap.record_id:
                                by_id.setdefault(cap.record_id, pos)
                            if cap.payload_digest:
                                by_digest.setdefault(cap.payload_digest, pos)
                            self._remember(cap)
                        if held is not None:
                            yield held_number, held
                        held, held_number = cap, number
                except OSError as exc:  # FastWARC: "Invalid WARC header", a broken gzip member
                    error = str(exc) or type(exc).__name__
                if error is None or self._break is not None:
                    break
                number += 1
                after = last_pos if last_pos >= 0 else start
                resume = self._next_record(after + 1)
                if held is not None:
                    end = None if self._members else self._record_end(held.offset or 0, len(held.block))
                    if end is not None and resume is not None and end != resume:
                        yield (
                            held_number,
                            RejectKind.BAD_CONTENT_LENGTH.reject(
                                f" (offset {held.offset}, {held.url}): "
                                f"{len(held.block):,} bytes end the record at byte {end:,}, "
                                f"the next record starts at {resume:,}",
                            ),
                        )
                    else:
                        yield held_number, held
                    held = None
                where = f"after offset {after}" if number > 1 else "at offset 0"
                tail = (
                    f"reading resumed at offset {resume}"
                    if resume is not None
                    else "the rest of the file is lost"
                )
                yield number, RejectKind.MALFORMED_RECORD.reject(f" ({where}: {error}); {tail}")
                if resume is None:
                    break
                start = resume
        if held is not None:
            yield held_number, held
        if self._break is not None:
            yield number + 1, self._break_reject(last_start)

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
        refers_to = cap.refers_to
        pos = by_id.get(refers_to) if refers_to else None
        if pos is None and cap.payload_digest:
            pos = by_digest.get(cap.payload_digest)
        if pos is None:
            return replace(cap, forward=True)
        if self._one_stream and pos not in self._recent:
            return replace(cap, pending=pos)
        original = self._read_at(pos)
        if original is not None:
            self.revisits += 1
        return replace(cap, original=original)

    def _remember(self, cap: WarcCapture) -> None:
        """Keep the latest page records, up to `RECENT_BYTES`: a revisit mostly points at one of them,
        and re-reading a file gzipped as one stream means inflating it from its start."""
        if cap.offset is None:
            return
        self._recent[cap.offset] = cap
        self._recent_bytes += len(cap.block)
        while self._recent_bytes > RECENT_BYTES and self._recent:
            self._recent_bytes -= len(self._recent.popitem(last=False)[1].block)

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
    # In pieces: a bad CRC at the end of a small file keeps what came before it.
    d, pieces = zlib.decompressobj(wbits=31), []
    for i in range(0, len(data), 1024):
        try:
            pieces.append(d.decompress(data[i : i + 1024]))
        except zlib.error:
            break
        if d.eof:
            break
    first = b"".join(pieces)
    # Another record's header inside the first member: the file is compressed as one stream.
    return True, _NEXT_HEADER.search(first) is not None


def _warc_member_at(f: BinaryIO, pos: int) -> bool:
    f.seek(pos)
    try:
        head = zlib.decompressobj(wbits=31).decompress(f.read(256), 16)
    except zlib.error:
        return False
    return head.startswith(WARC_MAGIC)
