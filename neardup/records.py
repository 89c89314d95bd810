"""The record every reader produces (`RawLine`), and what makes a clean page of it: decoding a JSON line,
validation (url, html or text, sizes, UTF-8, time and status fields), the rel=canonical hint, MD5s.

A reader (`neardup/readers/`) gives `RawLine`s whose payload is a JSON line's bytes, a dict (CSV,
Parquet), a capture of a web archive record (anything with `record()`, decoded in the worker) or a
`Reject` (a record that is bad as it is read); `validate` turns each into a clean record or a `Reject`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, TypedDict
from urllib.parse import urljoin

from . import _html
from .rejects import Reject, RejectKind
from .urls import canonicalize_url, host_of

try:  # the pages of a batch hashed together (`add_md5s`)
    from . import _kernels
except ImportError:  # installed without a C compiler: each page hashed by hashlib as it is validated
    _kernels = None  # type: ignore[assignment]

try:  # orjson decodes a page-sized JSON line in half the time of `json` (bench/RESULTS.md)
    import orjson as _orjson
except ImportError:  # a platform without orjson wheels: `json` alone
    _orjson = None  # type: ignore[assignment]

MAX_PAGE_BYTES = 8 * 1024 * 1024  # larger pages are crawler accidents (media, dumps), not documents
# A <link> tag, up to its '>' or to the next '<': a page of many '<link's and no '>' is scanned once, not once
# per '<link' to its end.
_LINK_TAG = re.compile(rb"<link\b[^<>]*>?", re.IGNORECASE)
_REL_CANONICAL = re.compile(rb"""\brel\s*=\s*["']?canonical\b""", re.IGNORECASE)
_HREF = re.compile(rb"""\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)


class PageRecord(TypedDict, total=False):
    """A dump's record as a web archive reader makes it (`Capture.record`) and `validate` reads it: the page
    (`html`, or `text` for a WET conversion), its URL, time and status, and where it came from; each field
    but `url` only where the record has it. A JSON line, CSV or Parquet record has fields of any name and
    type, and is read as a `Mapping[str, object]`. The fields but url, html, text, fetched_at and status
    are the page's `extra`, in this order."""

    url: str
    html: str
    text: str
    fetched_at: str | None  # WARC-Date as written (ISO 8601)
    status: int | None
    # WARC: its file, record and where the record lies in the file (`WarcCapture._location`)
    warc_file: str
    warc_record_id: str | None
    warc_type: str  # response | resource | revisit | conversion
    warc_offset: int
    warc_offset_in: str  # "gunzipped stream": a file gzipped whole has no per-record offsets
    warc_truncated: str
    payload_digest: str | None
    # a revisit: the record it stands for, in its file or a page an earlier ingest stored
    refers_to_record_id: str | None
    refers_to_offset: int
    refers_to_page_id: int
    refers_to_file: str
    charset: str
    charset_source: str
    # ARC (`readers.arc`) and WACZ (`readers.wacz`) fields
    archive_format: Literal["arc", "wacz"]
    arc_version: int
    arc_ip: str
    arc_checksum: str
    wacz_file: str
    wacz_member: str
    wacz_page: bool
    wacz_extra_page: bool
    refers_to_wacz_member: str


class CleanRecord(TypedDict):
    """A record `validate` found good: its page, URL, time and status checked and parsed, its other fields
    as JSON (`extra`). `md5` is None until `add_md5s` when it was validated with `md5=False`."""

    url: str
    canonical_url: str
    host: str
    fetched_at: datetime | None
    status: int | None
    html: str | None
    text_in: str | None  # the record's `text`, kept when it has no html
    md5: str | None
    rel_canonical: str | None
    extra: str | None


@dataclass(slots=True)
class CapturedPage:
    """A web archive record's page as its capture makes it (`Capture.page`): the fields `validate` reads,
    and the others (where the record is, its charset: `PageRecord`'s) as the JSON text `extra` is
    stored as, written by the capture, which knows their names and types, instead of a dict that
    `validate` filters and encodes per page. The same page as `Capture.record()`'s dict."""

    url: str
    html: str | None  # one of html and text
    text: str | None
    fetched_at: str | None
    status: int | None
    extra: str  # a JSON object, as `json.dumps(fields, ensure_ascii=False)` writes it
    # `html` decoded from bytes checked as UTF-8: it holds no lone surrogate (no second check, ~4 us a 15 KB page)
    html_from_utf8: bool = False

    def unencodable_field(self) -> str | None:
        """The first field, in `record()`'s order, that cannot be written as UTF-8 (a lone surrogate)."""
        for key, value in (
            ("url", self.url),
            ("html", None if self.html_from_utf8 else self.html),
            ("text", self.text),
            ("fetched_at", self.fetched_at),
        ):
            if value is not None:
                try:
                    _utf8_check(value)
                except UnicodeEncodeError:
                    return key
        try:
            _utf8_check(self.extra)
        except UnicodeEncodeError:
            return _unencodable_field(json.loads(self.extra))
        return None


class Capture(Protocol):
    """A web archive record as a reader read it (`readers.capture.WarcCapture`, `ArchiveCapture`): its
    page, or why it is none, is made in the worker that validates it (`page`; `record` is the same page
    as a dict)."""

    def record(self) -> PageRecord | Reject: ...

    def page(self) -> CapturedPage | Reject: ...


@dataclass(frozen=True, slots=True)
class RawLine:
    """One unparsed record: a JSON line's bytes, a dict from CSV / Parquet, a WARC record (its number in
    the file) or why a record is rejected as it is read (a malformed WARC record, a CSV record too long)."""

    line: int
    # A JSON line is a view of its block's buffer (bytes, or a worker's shared-memory slot): it is decoded
    # where it lies, and is valid while its batch is worked on.
    payload: bytes | memoryview | dict[str, Any] | Capture | Reject


class RecordBatch(list[RawLine]):
    """A batch of records for the workers and `end_byte`, how far into the file (its bytes as stored) the
    reader was when it cut the batch: the load's progress, as a JSON-lines `LineBlock`'s `end_byte` is."""

    end_byte = 0


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


def _utf8_check(value: str) -> object:
    """UnicodeEncodeError for a str with a lone surrogate. With the kernels, its UTF-8 is made once and
    kept on the str (CPython's cache), where the page's MD5, the parser and Arrow read it again."""
    return _kernels.utf8_size(value) if _kernels is not None else value.encode("utf-8")


def _unencodable_field(rec: Mapping[str, object]) -> str | None:
    """The first string field that cannot be written as UTF-8 (it holds a lone surrogate), if any."""
    for key, value in rec.items():
        if isinstance(value, str):
            try:
                _utf8_check(value)
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


# `json.dumps(obj, default=str, ensure_ascii=False, allow_nan=False)`, its encoder made once, not per page.
_EXTRA_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False, allow_nan=False)


def _extra_json(extra: dict[str, Any]) -> str:
    """The record's other fields as JSON that DuckDB accepts; `_Unstorable` names a field that cannot be.
    Python's json reads and writes NaN and Infinity, JSON has no such values: they become the strings
    "nan", "inf", "-inf"."""

    def dump(obj: dict[str, Any]) -> str:
        try:
            text = _EXTRA_ENCODER.encode(obj)
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


def decode_json_line(payload: bytes | memoryview, *, fast: bool = True) -> dict[str, object] | Reject:
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


_PAGE_FIELDS = ("url", "html", "text", "fetched_at", "status")


def validate(raw: RawLine, *, md5: bool = True) -> CleanRecord | Reject:
    """A clean record, or why the record is rejected. With `md5=False` the record's `md5` may be left
    None for `add_md5s`, which hashes a batch's pages together."""
    payload = raw.payload
    # a web archive record is decoded here, in the worker
    found = payload if isinstance(payload, bytes | memoryview | dict | Reject) else payload.page()
    if isinstance(found, Reject):  # rejected as it was read
        return found
    if isinstance(found, CapturedPage):
        if (key := found.unencodable_field()) is not None:
            return RejectKind.INVALID_UTF8.reject(f" in field {key!a}")
        return _clean(found.url, found.html, found.text, found.fetched_at, found.status, found.extra, md5=md5)
    rec: Mapping[str, object]
    if isinstance(found, bytes | memoryview):
        decoded = decode_json_line(found)
        if isinstance(decoded, Reject):
            return decoded
        rec = decoded
    else:
        rec = found
        if (key := _unencodable_field(rec)) is not None:
            return RejectKind.INVALID_UTF8.reject(f" in field {key!a}")
    extra = {k: v for k, v in rec.items() if k not in _PAGE_FIELDS}
    return _clean(
        rec.get("url"),
        rec.get("html"),
        rec.get("text"),
        rec.get("fetched_at"),
        rec.get("status"),
        extra,
        md5=md5,
        page_named="html" in rec or "text" in rec,
    )


def _clean(
    url: object,
    html_field: object,
    text_field: object,
    fetched_raw: object,
    status_raw: object,
    extra: dict[str, Any] | str,
    *,
    md5: bool,
    page_named: bool = True,
) -> CleanRecord | Reject:
    """`validate` of a record's fields: the page's (`url`, `html` or `text`, time, status) and the others
    (`extra`, as a dict or as their JSON text). `page_named`: the record has an html or a text field."""
    if not isinstance(url, str) or not url.strip():
        return _MISSING_URL
    html = html_field if isinstance(html_field, str) and has_content(html_field) else None
    text = text_field if isinstance(text_field, str) and has_content(text_field) else None
    if html is None and text is None:
        return _EMPTY_PAGE if page_named else _MISSING_PAGE
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
    # A fetched_at or status that is not one is left empty; its value is kept with the other fields.
    kept: dict[str, Any] = {}
    fetched_at = parse_time(fetched_raw)
    if fetched_at is None and fetched_raw is not None and fetched_raw != "":
        kept["fetched_at"] = fetched_raw
    status = _parse_status(status_raw)
    if status is None and status_raw is not None and status_raw != "":
        kept["status"] = status_raw
    try:
        if isinstance(extra, str):
            joined = _join_json(extra, _extra_json(kept)) if kept else extra
            extra_json: str | None = None if joined == "{}" else joined
        else:
            extra.update(kept)
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


def _join_json(first: str, second: str) -> str:
    """Two JSON objects' texts as one, the keys of `first` before those of `second`."""
    if first == "{}":
        return second
    return f"{first[:-1]}, {second[1:]}"


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
