"""The compiled page of an HTTP response (`neardup._archives.utf8_html`) is what `readers.payload` makes of
the same block, whenever it answers: on real crawlers' records, on the bench generator's pages (every
page whose charset resolves to UTF-8 answered), and on random hostile blocks."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup._archives import utf8_html
from neardup.readers.capture import WarcCapture
from neardup.readers.payload import HTML_TYPES, BodyTooLarge, decode_body, decode_html, parse_http, sniff_mime
from neardup.readers.warc import WarcBatches

ROOT = Path(__file__).resolve().parent.parent
ARCHIVES = ROOT / "tests" / "data" / "archives"
LIMIT = 1 << 20


def _python(block: bytes, limit: int = LIMIT) -> tuple[Any, ...]:
    """What `WarcCapture.page` reads of a response block, through `readers.payload`."""
    own = parse_http(block)
    if isinstance(own, str):
        return ("broken header", own)
    status, headers, body = own
    try:
        body, failed = decode_body(body, headers, limit=limit)
    except BodyTooLarge:
        return ("too large",)
    if failed:
        return ("undecodable", failed)
    content_type = headers.get("content-type", "")
    mime = sniff_mime(body, content_type)
    if mime not in HTML_TYPES:
        return ("not html", mime)
    html, charset, source = decode_html(body, content_type)
    return status, html, charset, source


def _agrees(block: bytes, limit: int = LIMIT) -> bool:
    """Whether the compiled page answers for `block`; when it does, it is the Python path's."""
    fast = utf8_html(block, limit)
    if fast is None:
        return False
    status, html, source = fast
    assert (status, html, "utf-8", source) == _python(block, limit)
    return True


def _blocks(path: Path) -> list[bytes]:
    return [
        bytes(r.payload.block)
        for r in WarcBatches(path).records()
        if isinstance(r.payload, WarcCapture) and r.payload.warc_type == "response"
    ]


def _archives() -> list[Path]:
    files = sorted(ARCHIVES.glob("*.warc*"))
    if extra := os.environ.get("NEARDUP_ARCHIVE_CORPUS"):  # real crawlers' files kept outside (PROVENANCE.md)
        files += sorted(p for p in Path(extra).rglob("*.warc*") if p.is_file())
    return files


@pytest.mark.parametrize("path", _archives(), ids=lambda p: p.name)
def test_a_real_crawlers_response_reads_the_same_compiled(path: Path) -> None:
    for block in _blocks(path):
        _agrees(block)


def test_the_bench_generators_utf8_pages_are_read_compiled_and_the_same(tmp_path: Path) -> None:
    """`scripts/jsonl_to_warc.py` over the sample: UTF-8 pages declared in the header or by <meta>, gzip and
    chunked among them, and windows-1252 pages (left to Python)."""
    import subprocess
    import sys

    out = tmp_path / "sample.warc.gz"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "jsonl_to_warc.py"),
            str(ROOT / "sample_data" / "crawl.jsonl.gz"),
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    blocks = _blocks(out)
    answered = [b for b in blocks if _agrees(b)]
    utf8 = [b for b in blocks if _python(b)[2:3] == ("utf-8",)]
    assert len(blocks) > 2500 and len(answered) == len(utf8) > 0.8 * len(blocks)


# --- random hostile blocks ----------------------------------------------------------------------------
_BODIES = [
    b"<!doctype html><html><head><title>t</title></head><body><p>plain words</p></body></html>",
    "<html><body><p>caf\u00e9 na\u00efve</p></body></html>".encode(),
    "<html><body><p>caf\u00e9</p></body></html>".encode("cp1252"),
    b"\xef\xbb\xbf<html><body>bom</body></html>",
    "<html>utf16</html>".encode("utf-16"),
    b'<html><head><meta charset="utf-8"></head><body>caf\xc3\xa9</body></html>',
    b'<html><head><META http-equiv="Content-Type" content="text/html; charset=UTF-8"></head>\xc3\xa9</html>',
    b"<html><head><meta charset = 'latin1'></head><body>caf\xe9</body></html>",
    b"<html><head><metacharset=utf-8></head>\xc3\xa9</html>",
    b"<html><head><meta x>charset=utf-8 \xc3\xa9</head></html>",
    b'<html><head><meta name=x charset="" content=y charset=utf8>\xc3\xa9</head></html>',
    b"<html>" + b" " * 4090 + b'<meta charset="utf-8">\xc3\xa9</html>',
    b"\x89PNG\r\n\x1a\n binary",
    b"  \n\t ",
    b"",
    b"<html><body>\xc3</body></html>",
]
_TYPES = [
    "text/html",
    "text/html; charset=utf-8",
    "text/html; charset=utf-8",
    "TEXT/HTML; charset=UTF-8",
    'text/html; charset="utf-8"',
    "text/html;charset=utf8",
    "text/html; charset=iso-8859-1",
    "text/html; charset=utf-8; charset=latin1",
    "text/html; charset= 'utf-8' ",
    'text/html; charset=" utf-8"',
    "text/html; charset=",
    "text/html; \x1ccharset=latin1",
    "application/xhtml+xml; charset=utf-8",
    "text/plain; charset=utf-8",
    "",
    "application/octet-stream",
    "text/html\xa0; charset=utf-8",
]


def _chunked(body: bytes, flaw: str) -> bytes:
    pieces = [body[i : i + 17] for i in range(0, len(body), 17)] or [b""]
    size = {"upper": "{:X}", "0x": "0x{:x}", "ext": "{:x};a=b", "space": " {:x} "}.get(flaw, "{:x}")
    out = b"".join(size.format(len(p)).encode() + b"\r\n" + p + b"\r\n" for p in pieces if p)
    if flaw == "cut":
        return out[: len(out) // 2]
    if flaw == "lf":
        out = out.replace(b"\r\n", b"\n")
    return out + (b"" if flaw == "no end" else b"0\r\n\r\n")


@st.composite
def _block(draw: st.DrawFn) -> bytes:
    body = draw(st.sampled_from(_BODIES))
    status = draw(
        st.sampled_from(
            [
                "HTTP/1.1 200 OK",
                "HTTP/1.1 200 OK",
                "HTTP/1.1 200 OK",
                "HTTP/1.0 404 Not Found",
                " HTTP/1.1 200",
                "HTTP/2 301",
                "HTTP/1.1 2000",
                "HTTP/1.1\t200",
                "HTTP/1.1 200",
            ]
        )
    )
    headers: list[str] = []
    if draw(st.integers(0, 4)):
        headers.append(
            f"{draw(st.sampled_from(['Content-Type', 'content-type', 'CONTENT-TYPE ']))}: {draw(st.sampled_from(_TYPES))}"
        )
    coding = draw(st.sampled_from([None, None, "gzip", "x-gzip", "identity", "br", "gzip, gzip", "GZIP"]))
    if coding is not None:
        damage = draw(st.sampled_from([None, None, "cut", "two", "junk", "plain"]))
        if "gzip" in coding.lower() and damage != "plain":
            packed = gzip.compress(body)
            body = {"cut": packed[:-5], "two": packed + gzip.compress(b"more"), "junk": packed + b"junk"}.get(
                damage or "", packed
            )
        headers.append(f"Content-Encoding: {coding}")
    if draw(st.booleans()):
        flaw = draw(
            st.sampled_from(["", "", "upper", "0x", "ext", "space", "cut", "lf", "no end", "not chunked"])
        )
        if flaw != "not chunked":
            body = _chunked(body, flaw)
        headers.append(f"Transfer-Encoding: {draw(st.sampled_from(['chunked', 'Chunked', 'gzip, chunked']))}")
    if draw(st.integers(0, 5)) == 0 and headers:
        headers.append(headers[0])  # a header named twice
    headers.append("X-Other: value")
    draw(st.randoms()).shuffle(headers)
    eol = draw(st.sampled_from(["\r\n"] * 5 + ["\n"]))
    head = (status + eol + eol.join(headers)).encode("latin-1")
    return head + b"\r\n\r\n" + body


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block=_block(), limit=st.sampled_from([LIMIT, 40]))
def test_a_hostile_response_reads_the_same_compiled_whenever_it_is_answered(block: bytes, limit: int) -> None:
    _agrees(block, limit)
