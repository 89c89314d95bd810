"""ARC input (`neardup.readers.arc`): bad records named with their offset and URL, the rest of the file read;
hostile files through the whole ingest path. The well-formed files are in the corpus test."""

from __future__ import annotations

import gzip
import tempfile
import zlib
from pathlib import Path

import pytest
from archive_records import ingest_hostile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.errors import NotACrawlDump
from neardup.ingest import detect_format
from neardup.readers import arc
from neardup.records import validate
from neardup.rejects import Reject, RejectKind

PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
    b"<html><head><title>T</title></head><body><p>"
    + "Grüße aus Köln, page {}. ".encode() * 20
    + b"</p></body></html>"
)
DESC = b"1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n"


def header(name: str = "t.arc") -> bytes:
    return f"filedesc://{name} 0.0.0.0 20240305101500 text/plain {len(DESC)}\n".encode() + DESC + b"\n"


def record(url: str, block: bytes, *, length: int | None = None) -> bytes:
    n = len(block) if length is None else length
    return f"{url} 192.0.2.1 20240305101500 text/html {n}\n".encode() + block + b"\n"


def page(i: int) -> bytes:
    return PAGE.replace(b"{}", str(i).encode())


def read(path: Path) -> tuple[list[dict], list[Reject]]:
    pages, rejects = [], []
    for raw in arc.ArcBatches(path).records():
        rec = validate(raw)
        (rejects if isinstance(rec, Reject) else pages).append(rec)
    return pages, rejects


def test_an_archive_length_too_short_or_too_long_is_named_and_the_rest_loads(tmp_path: Path) -> None:
    short = record("http://a.example/1", page(1), length=len(page(1)) - 40)
    long = record("http://a.example/3", page(3), length=len(page(3)) + 200)
    path = tmp_path / "lengths.arc"
    path.write_bytes(
        header()
        + short
        + record("http://a.example/2", page(2))
        + long
        + record("http://a.example/4", page(4))
    )
    pages, rejects = read(path)
    assert [p["url"] for p in pages] == ["http://a.example/2", "http://a.example/4"]
    assert [r.kind for r in rejects] == [RejectKind.BAD_CONTENT_LENGTH] * 2
    first = len(header())
    assert f"offset {first}, http://a.example/1" in rejects[0].detail
    assert "reading resumed at offset" in rejects[0].detail
    assert "http://a.example/3" in rejects[1].detail and "runs into the next record" in rejects[1].detail


def test_a_cut_file_keeps_the_records_before(tmp_path: Path) -> None:
    records = [header()] + [record(f"http://a.example/{i}", page(i)) for i in range(3)]
    plain = b"".join(records)
    members = b"".join(gzip.compress(r, mtime=0) for r in records)
    cut_plain = tmp_path / "cut.arc"
    cut_plain.write_bytes(plain[: len(plain) - 100])
    pages, rejects = read(cut_plain)
    assert len(pages) == 2 and [r.kind for r in rejects] == [RejectKind.RECORD_CUT_OFF]
    assert "http://a.example/2" in rejects[0].detail
    cut_gz = tmp_path / "cut.arc.gz"
    cut_gz.write_bytes(members[: len(members) - 100])
    pages, rejects = read(cut_gz)
    assert len(pages) == 2 and [r.kind for r in rejects] == [RejectKind.TRUNCATED_FILE]
    last = len(members) - len(gzip.compress(records[-1], mtime=0))
    assert f"offset {last}" in rejects[0].detail


def test_a_member_that_does_not_inflate_is_named_and_the_next_ones_read(tmp_path: Path) -> None:
    gz = [
        gzip.compress(r, mtime=0)
        for r in [header()] + [record(f"http://a.example/{i}", page(i)) for i in range(3)]
    ]
    broken = bytearray(gz[2])
    broken[20:40] = bytes(20)  # inside the deflate data
    path = tmp_path / "corrupt.arc.gz"
    path.write_bytes(gz[0] + gz[1] + bytes(broken) + gz[3])
    pages, rejects = read(path)
    assert [p["url"] for p in pages] == ["http://a.example/0", "http://a.example/2"]
    assert [r.kind for r in rejects] == [RejectKind.CORRUPT_FILE]
    assert f"offset {len(gz[0]) + len(gz[1])}" in rejects[0].detail
    # the offset of each page is its member's
    assert pages[1]["extra"].count(f'"warc_offset": {len(gz[0]) + len(gz[1]) + len(broken)}') == 1


def test_a_gzip_bomb_member_and_a_huge_record_are_named_unread(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(arc, "MAX_MEMBER_INFLATE", 1 << 20)
    bomb_block = bytes(4 << 20)
    bomb = gzip.compress(record("http://a.example/bomb", bomb_block), mtime=0)
    ok = gzip.compress(record("http://a.example/ok", page(0)), mtime=0)
    path = tmp_path / "bomb.arc.gz"
    path.write_bytes(gzip.compress(header(), mtime=0) + bomb + ok)
    pages, rejects = read(path)
    assert [p["url"] for p in pages] == ["http://a.example/ok"]
    assert [r.kind for r in rejects] == [RejectKind.CORRUPT_FILE]
    assert "http://a.example/bomb" in rejects[0].detail and "gzip bomb" in rejects[0].detail

    monkeypatch.setattr(arc, "MAX_RECORD_BYTES", 1000)
    plain = tmp_path / "huge.arc"
    plain.write_bytes(
        header() + record("http://a.example/huge", bytes(5000)) + record("http://a.example/ok", b"x")
    )
    pages, rejects = read(plain)
    assert [r.kind for r in rejects] == [RejectKind.RECORD_TOO_LONG, RejectKind.BROKEN_HTTP_HEADER]
    assert "http://a.example/huge" in rejects[0].detail


def test_version_2_lines_and_urls_with_spaces(tmp_path: Path) -> None:
    desc = b"2 0 Alexa Internet\nURL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length\n"
    head = f"filedesc://v2.arc 0.0.0.0 19961104142103 text/plain {len(desc)}\n".encode() + desc + b"\n"
    block = page(7)
    line = f"http://a.example/with space.html 192.0.2.1 19961104142103 text/html 200 abc123 - {len(head)} v2.arc {len(block)}\n"
    path = tmp_path / "v2.arc"
    path.write_bytes(head + line.encode() + block + b"\n")
    pages, rejects = read(path)
    assert not rejects
    assert pages[0]["url"] == "http://a.example/with space.html"
    assert pages[0]["fetched_at"].year == 1996
    assert '"arc_version": 2' in pages[0]["extra"] and '"arc_checksum": "abc123"' in pages[0]["extra"]


def test_detection_by_bytes_not_names(tmp_path: Path) -> None:
    disguised = tmp_path / "crawl.bin"
    disguised.write_bytes(header() + record("http://a.example/", page(0)))
    assert detect_format(disguised) == "arc"
    gz = tmp_path / "crawl.dat.gz"
    gz.write_bytes(gzip.compress(header(), mtime=0) + gzip.compress(record("http://a.example/", page(0))))
    assert detect_format(gz) == "arc"
    fake = tmp_path / "fake.arc"
    fake.write_text("not an archive\n")
    with pytest.raises(NotACrawlDump, match="named .arc but not an ARC file"):
        detect_format(fake)


def test_a_corrupt_second_member_in_the_first_bytes_is_detected_and_named(tmp_path: Path) -> None:
    second = bytearray(gzip.compress(record("http://a.example/", page(0)), mtime=0))
    second[12:30] = b"\xff" * 18
    path = tmp_path / "corrupt.arc.gz"
    path.write_bytes(gzip.compress(header(), mtime=0) + bytes(second))
    assert detect_format(path) == "arc"
    pages, rejects = read(path)
    assert not pages and [r.kind for r in rejects] == [RejectKind.CORRUPT_FILE]


# --- hostile files through the whole ingest path ----------------------------------------------------
_URLS = st.sampled_from(
    ["http://a.example/", "https://b.example/x y", "dns:a.example", "filedesc://x", "ftp://c/"]
)
_FIELDS = st.sampled_from(["192.0.2.1", "-", "", "0.0.0.0 extra"])


@st.composite
def hostile_arcs(draw: st.DrawFn) -> bytes:
    version = draw(st.sampled_from([1, 2]))
    parts = [header() if version == 1 else header().replace(b"1 0 Internet", b"2 0 Internet")]
    for _ in range(draw(st.integers(0, 6))):
        block = draw(st.sampled_from([page(1), b"", b"HTTP/1.1 200 OK\r\n\r\n", b"\x89PNG"])) + draw(
            st.binary(max_size=40)
        )
        length = draw(st.sampled_from([len(block), len(block) + 7, max(0, len(block) - 7), 10**17]))
        date = draw(st.sampled_from(["20240305101500", "2024", "99999999999999999999", "x"]))
        length_field = draw(st.sampled_from([str(length), "-1", "abc", ""]))
        fields = f"{draw(_URLS)} {draw(_FIELDS)} {date} text/html"
        if version == 2:
            fields += " 200 - - 0 t.arc"
        parts.append(
            f"{fields} {length_field}\n".encode() + block + draw(st.sampled_from([b"\n", b"", b"\r\n\n"]))
        )
    mode = draw(st.sampled_from(["plain", "members", "one stream"]))
    data = (
        b"".join(parts)
        if mode == "plain"
        else b"".join(gzip.compress(p, mtime=0) for p in parts)
        if mode == "members"
        else gzip.compress(b"".join(parts), mtime=0)
    )
    if data and draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    if data and draw(st.booleans()):
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    return data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_arcs())
def test_hostile_arc_files_are_named_errors_never_a_crash(data: bytes) -> None:
    ingest_hostile(data, "hostile.arc")


def test_zlib_errors_in_a_member_are_caught_at_every_cut() -> None:
    """Every cut point of a per-record .arc.gz reads without an exception escaping the reader."""
    gz = gzip.compress(header(), mtime=0) + gzip.compress(record("http://a.example/", page(0)), mtime=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cut.arc.gz"
        for cut in range(0, len(gz), 7):
            path.write_bytes(gz[:cut])
            try:
                items = list(arc.ArcBatches(path).records())
            except zlib.error:  # pragma: no cover - the failure this guards against
                pytest.fail(f"cut at {cut}")
            assert all(isinstance(validate(raw), dict | Reject) for raw in items)
