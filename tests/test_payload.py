"""readers/payload.py: an HTTP response block decodes to the same page whether it is bytes or a view of
them (a worker reads blocks as views of shared memory), and the body after the header is a view, not a copy."""

from __future__ import annotations

import codecs
import gzip

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.readers.payload import decode_body, decode_html, parse_http, sniff_mime

PAGE = "<html><head><title>Caf\u00e9</title></head><body><p>na\u00efve r\u00e9sum\u00e9</p></body></html>"
ASCII_PAGE = "<!doctype html><html><body><p>plain</p></body></html>"

CASES = [
    # (body, Content-Type, expected (text, codec, source))
    (ASCII_PAGE.encode(), "text/html", (ASCII_PAGE, "utf-8", "ascii")),
    (PAGE.encode(), "text/html; charset=utf-8", (PAGE, "utf-8", "http")),
    (PAGE.encode("cp1252"), "text/html; charset=windows-1252", (PAGE, "cp1252", "http")),
    (
        PAGE.encode(),
        "text/html; charset=windows-1252",
        (PAGE, "utf-8", "http cp1252 overruled: the bytes are UTF-8"),
    ),
    (ASCII_PAGE.encode(), "text/html; charset=windows-1252", (ASCII_PAGE, "cp1252", "http")),
    (codecs.BOM_UTF16_LE + PAGE.encode("utf-16-le"), "text/html", (PAGE, "utf-16-le", "bom")),
    (codecs.BOM_UTF8 + PAGE.encode(), "text/html", (PAGE, "utf-8", "bom")),
    (
        b'<html><head><meta charset="iso-8859-1"></head><body>caf\xe9</body></html>',
        "text/html",
        ('<html><head><meta charset="iso-8859-1"></head><body>caf\u00e9</body></html>', "cp1252", "meta"),
    ),
    (
        PAGE.encode()[:-40] + b"\xff\xfe" + PAGE.encode()[-40:],
        "text/html; charset=utf-8",
        None,  # undecodable as declared: detection or replacement, the same for bytes and a view
    ),
]


@pytest.mark.parametrize(("body", "content_type", "expected"), CASES)
def test_a_view_of_the_body_decodes_as_its_bytes(
    body: bytes, content_type: str, expected: tuple[str, str, str] | None
) -> None:
    got = decode_html(body, content_type)
    assert decode_html(memoryview(body), content_type) == got
    assert decode_html(memoryview(b"xx" + body)[2:], content_type) == got
    if expected is not None:
        assert got == expected


def test_the_body_after_the_http_header_is_a_view_of_the_block() -> None:
    body = PAGE.encode()
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n" + gzip.compress(
        body
    )
    for given_block in (block, memoryview(block), memoryview(b"...." + block)[4:]):
        parsed = parse_http(given_block)
        assert not isinstance(parsed, str)
        status, headers, payload = parsed
        assert (status, headers) == (200, {"content-type": "text/html", "content-encoding": "gzip"})
        assert isinstance(payload, memoryview) and payload.obj is (
            given_block if isinstance(given_block, bytes) else given_block.obj
        )
        decoded, failed = decode_body(payload, headers, limit=1 << 20)
        assert (bytes(decoded), failed) == (body, None)
        assert sniff_mime(payload, "") == "application/gzip"


def test_a_header_of_lf_lines_and_one_without_a_body_parse_from_a_view() -> None:
    for block in (
        b"HTTP/1.0 404 Not Found\nContent-Type: text/html\n\n<p>x</p>",
        b"HTTP/1.1 304 Not Modified\r\n",
    ):
        assert parse_http(memoryview(block)) == parse_http(block)
    assert parse_http(memoryview(b"<html>no header</html>")) == "no status line"


@given(
    body=st.binary(max_size=300)
    | st.text(max_size=100).map(lambda s: ("<html><p>" + s).encode("utf-8", "surrogatepass")),
    charset=st.sampled_from(
        ["", "; charset=utf-8", "; charset=windows-1252", "; charset=shift_jis", "; charset=utf-16"]
    ),
)
def test_decoding_a_view_is_decoding_its_bytes(body: bytes, charset: str) -> None:
    content_type = "text/html" + charset
    assert decode_html(memoryview(body), content_type) == decode_html(body, content_type)
    assert sniff_mime(memoryview(body), "") == sniff_mime(body, "")
    block = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body
    assert parse_http(memoryview(block)) == parse_http(block)
    parsed = parse_http(block)
    assert not isinstance(parsed, str)
    assert decode_body(parsed[2], parsed[1], limit=1 << 20) == decode_body(
        bytes(parsed[2]), parsed[1], limit=1 << 20
    )
