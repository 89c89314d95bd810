"""A captured HTTP response -> its page: the HTTP header (status and the headers decoding needs), chunked
transfer and Content-Encoding undone (bounded: a bomb stops at the limit), the MIME type (declared, else
sniffed), the charset (header, BOM, <meta>, else detected). Shared by the WARC, ARC and WACZ readers.

A block is bytes or a view of them (a worker reads it from shared memory, `shared_captures`): the body
after the HTTP header is a view of the block, not a copy, until it is decoded to text (a copy of the page
costs about as much as its charset decoding).
"""

from __future__ import annotations

import codecs
import functools
import io
import re
import zlib
from typing import Any

from resiliparse.parse.encoding import detect_encoding, map_encoding_to_html5

from .inflate import ZLIB_ERRORS, fast_zlib

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
_GZIP_MAGIC = b"\x1f\x8b\x08"

STATUS_LINE = re.compile(rb"\s*HTTP/\d(?:\.\d)?[ \t]+(\d{3})(?:\s|$)")
# Only the headers decoding needs: a regex over the header bytes beats splitting every line in Python.
_HEADER = re.compile(
    rb"^(content-type|content-encoding|transfer-encoding)[ \t]*:[ \t]*([^\r\n]*)",
    re.IGNORECASE | re.MULTILINE,
)


_CRLF_CRLF = re.compile(rb"\r\n\r\n")
_LF_LF = re.compile(rb"\n\n")


def parse_http(block: bytes | memoryview) -> tuple[int | None, dict[str, str], memoryview] | str:
    """(status, the Content-Type / Content-Encoding / Transfer-Encoding headers by lower-case name, body
    as a view of `block`) of an HTTP response block, or what is wrong with its header."""
    found = _CRLF_CRLF.search(block)  # `bytes.find`'s first match, on a view as well
    sep = 4
    if found is None:
        found, sep = _LF_LF.search(block), 2
    end = found.start() if found is not None else len(block)  # none: a header with no body (a revisit)
    if found is None:
        sep = 0
    head = bytes(block[:end])
    m = STATUS_LINE.match(head)
    if m is None:
        return "no status line"
    headers: dict[str, str] = {}
    for name, value in _HEADER.findall(head, m.end()):
        key, text = name.decode("ascii").lower(), value.strip().decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return int(m.group(1)), headers, memoryview(block)[end + sep :]


def _dechunk(body: bytes) -> bytes | None:
    """The payload of a chunked body, or None when it is not chunked after all (some crawlers store
    the payload decoded and keep the header)."""
    out: list[memoryview] = []  # the chunks as views of `body`: copied once, by the join
    view = memoryview(body)
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
        out.append(view[eol + 1 : eol + 1 + size])
        pos = eol + 1 + size
        if body[pos : pos + 2] == b"\r\n":
            pos += 2
        elif body[pos : pos + 1] == b"\n":
            pos += 1


_DECODE_ERRORS = (zlib.error, OSError)


class BodyTooLarge(Exception):
    """A Content-Encoding that inflates past the limit: `args[0]` is the coding."""


def _decompress(data: bytes | memoryview, wbits: int, max_length: int) -> tuple[bytes, Any]:
    """(`data` inflated, at most `max_length` bytes; the decompressor, for its `eof` and `unused_data`).
    ISA-L (`inflate.fast_zlib`, half zlib's CPU on the gzip bodies of the bench's crawl) when it reads the
    stream to its end; else zlib, whose verdict on a stream cut short, broken or past the limit it is (ISA-L
    reads some broken gzip headers as an empty stream)."""
    try:
        fast = fast_zlib.decompressobj(wbits)
        out = fast.decompress(data, max_length)
        if fast.eof:
            return out, fast
    except ZLIB_ERRORS:
        pass
    slow = zlib.decompressobj(wbits)
    return slow.decompress(data, max_length), slow


def _inflate(body: bytes | memoryview, coding: str, limit: int) -> bytes:
    """`body` decoded from `coding`, inflated at most `limit` bytes (`BodyTooLarge` past it): a bomb of a
    few KB that inflates to gigabytes costs `limit` bytes of memory, never its whole."""
    if coding in ("gzip", "x-gzip"):
        out, d = _decompress(body, 31, limit + 1)
        while len(out) <= limit and d.eof and d.unused_data.startswith(_GZIP_MAGIC):  # concatenated members
            more, d = _decompress(d.unused_data, 31, limit + 1 - len(out))
            out += more
    elif coding == "deflate":  # zlib-wrapped as the standard says, or raw deflate as some servers send
        try:
            out, _ = _decompress(body, 15, limit + 1)
        except zlib.error:
            out, _ = _decompress(body, -15, limit + 1)
    elif coding == "br":
        from fastwarc.stream_io import BrotliReader

        out = BrotliReader(io.BytesIO(body)).read(limit + 1)
    else:
        raise ValueError(coding)
    if len(out) > limit:
        raise BodyTooLarge(coding)
    return out


def decode_body(
    body: bytes | memoryview, headers: dict[str, str], *, limit: int
) -> tuple[bytes | memoryview, str | None]:
    """The payload with chunked transfer and Content-Encoding undone; (body, the coding that failed).
    Each coding inflates at most `limit` bytes: `BodyTooLarge` names one that goes past it."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        dechunked = _dechunk(bytes(body))
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


def sniff_mime(body: bytes | memoryview, content_type: str) -> str:
    """The payload's MIME type: the Content-Type's, else sniffed from the bytes."""
    declared = content_type.split(";", 1)[0].strip().lower()
    head = bytes(body[:1024]).lstrip()
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


@functools.lru_cache(maxsize=1024)  # a crawl's pages name a few labels: ~1.5 us a lookup saved per page
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


def _is_utf8_text(body: bytes | memoryview) -> bool:
    """Non-ASCII bytes that are valid UTF-8: a page declared as a single-byte charset is really UTF-8."""
    try:
        return not str(body, "utf-8").isascii()  # a str knows whether it is ASCII without a scan
    except UnicodeDecodeError:
        return False


def _ascii_text(body: bytes | memoryview) -> str | None:
    """The text of a body all ASCII (its UTF-8 decoding), else None."""
    try:
        return str(body, "ascii")
    except UnicodeDecodeError:
        return None


def decode_html(body: bytes | memoryview, content_type: str) -> tuple[str, str, str]:
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
    start = bytes(body[:3])
    for bom, name in _BOMS:
        if start.startswith(bom):
            bom_codec = name
            break
    else:
        bom_codec = None
    if (codec := _codec(header)) is not None:
        source = "http"
    elif bom_codec is not None:
        codec, source = bom_codec, "bom"
    elif (m := _META_CHARSET.search(body[:_HEAD_BYTES])) and (
        codec := _codec(bytes(m.group(1)).decode("ascii"))
    ):
        source = "meta"
    elif (text := _ascii_text(body)) is not None:
        return text, "utf-8", "ascii"
    else:
        codec, source = _codec(detect_encoding(bytes(body))) or "utf-8", "detected"
    if codec.startswith("utf-16") and source in ("meta", "detected"):
        codec = "utf-8"  # a page that names UTF-16 in its own ASCII bytes is not UTF-16 (the HTML standard's rule)
    if codec != "utf-8" and not codec.startswith("utf-16") and _is_utf8_text(body):
        codec, source = "utf-8", f"{source} {codec} overruled: the bytes are UTF-8"
    if bom_codec is not None and bom_codec == codec:
        body = body[len(codecs.BOM_UTF8) if codec == "utf-8" else 2 :]
    try:
        return str(body, codec), codec, source
    except UnicodeDecodeError:  # a declared charset the bytes break: what detection finds, if that reads them
        detected = _codec(detect_encoding(bytes(body)))
        if detected is not None and detected != codec:
            try:
                return (
                    str(body, detected),
                    detected,
                    f"detected ({source} {codec} does not decode the bytes)",
                )
            except UnicodeDecodeError:
                pass
    return str(body, codec, "replace"), codec, f"{source}, undecodable bytes replaced"
