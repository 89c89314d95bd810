"""WACZ input (`neardup.readers.wacz`): members that cannot be read are named errors and the others load; no
member name becomes a path; bombs stop at their bound; hostile ZIPs through the whole ingest path."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from archive_records import Archive, _doc, _errors, _heritrix_revisit, _pages, ingest_hostile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from neardup import engine
from neardup.config import Config
from neardup.errors import NotACrawlDump
from neardup.ingest import detect_format
from neardup.readers import wacz
from neardup.readers.capture import describe_archive_record
from neardup.records import validate
from neardup.rejects import Reject, RejectKind
from neardup.store import Store


def warc(urls: list[str], *, gz: bool = True) -> bytes:
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=gz)
    for url in urls:
        body = f"<html><body><p>The page at {url}, with words enough to be a page.</p></body></html>".encode()
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
    return buf.getvalue()


def pages_list(urls: list[str]) -> bytes:
    lines = [{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}] + [{"url": u} for u in urls]
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


def make_wacz(path: Path, members: list[tuple[str, bytes]], *, deflate: bool = False) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members:
            z.writestr(name, data, zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED)
    return path


def read(path: Path) -> tuple[list[dict], list[Reject]]:
    pages, rejects = [], []
    for raw in wacz.WaczBatches(path).records():
        rec = validate(raw)
        (rejects if isinstance(rec, Reject) else pages).append(rec)
    return pages, rejects


@pytest.mark.filterwarnings("ignore:Duplicate name")  # zipfile warns as it writes the duplicate member
def test_unreadable_members_are_named_and_the_others_load(tmp_path: Path, monkeypatch) -> None:
    good = warc(["http://a.example/1", "http://a.example/2"])
    path = make_wacz(
        tmp_path / "mixed.wacz",
        [
            ("archive/../../escape.warc.gz", good),
            ("archive/a.warc.gz", good),
            ("archive/a.warc.gz", good),
            ("archive/notes.txt", b"not a warc"),
            ("archive/c.warc", warc(["http://a.example/3"], gz=False)),
            ("pages/pages.jsonl", pages_list(["http://a.example/1"]) + b"{broken\n[1]\n"),
        ],
    )
    pages, rejects = read(path)
    assert [p["url"] for p in pages] == ["http://a.example/1", "http://a.example/2", "http://a.example/3"]
    assert all(r.kind == RejectKind.BAD_WACZ_MEMBER for r in rejects)
    details = sorted(r.detail for r in rejects)
    assert any("archive/../../escape.warc.gz: a '..' in its path" in d for d in details)
    assert any("a second member of the same name" in d for d in details)
    assert any("archive/notes.txt: not a WARC file" in d for d in details)
    assert any("pages/pages.jsonl: line 3 is not JSON" in d for d in details)
    assert any("line 4 is not a JSON object" in d for d in details)
    assert not (tmp_path.parent / "escape.warc.gz").exists()
    marks = {p["url"]: json.loads(p["extra"])["wacz_page"] for p in pages}
    assert marks == {"http://a.example/1": True, "http://a.example/2": False, "http://a.example/3": False}


def test_a_zip_bomb_member_stops_at_its_bound(tmp_path: Path) -> None:
    bomb = b"WARC/1.0\r\n" + bytes(8 << 20)  # deflates ~1000:1
    path = make_wacz(
        tmp_path / "bomb.wacz",
        [("archive/bomb.warc", bomb), ("archive/ok.warc.gz", warc(["http://a.example/"]))],
        deflate=True,
    )
    pages, rejects = read(path)
    assert [p["url"] for p in pages] == ["http://a.example/"]
    assert [r.kind for r in rejects] == [RejectKind.BAD_WACZ_MEMBER]
    assert "archive/bomb.warc: inflates past" in rejects[0].detail and "ZIP bomb" in rejects[0].detail


def test_an_encrypted_or_corrupt_member_is_named(tmp_path: Path) -> None:
    data = warc(["http://a.example/1"])
    path = make_wacz(tmp_path / "x.wacz", [("archive/enc.warc.gz", data), ("archive/crc.warc.gz", data)])
    raw = bytearray(path.read_bytes())
    raw[6] |= 1  # the first local header's encryption flag
    second = raw.find(b"PK\x03\x04", 4)
    raw[second + 30 + len("archive/crc.warc.gz") + 40] ^= 0xFF  # a byte of the stored data: its CRC fails
    central = raw.find(b"PK\x01\x02")
    raw[central + 8] |= 1  # and the central directory's flag
    path.write_bytes(bytes(raw))
    pages, rejects = read(path)
    assert not pages
    assert sorted(r.detail.split(": ", 1)[1][:11] for r in rejects) == ["encrypted", "unreadable "]


def test_a_broken_zip_or_one_that_is_no_wacz_is_refused(tmp_path: Path) -> None:
    path = make_wacz(tmp_path / "cut.wacz", [("archive/a.warc.gz", warc(["http://a.example/"]))])
    path.write_bytes(path.read_bytes()[:-30])  # the central directory's end is gone
    pages, rejects = read(path)
    assert not pages and [r.kind for r in rejects] == [RejectKind.CORRUPT_FILE]
    with (
        Store(str(tmp_path / "db.duckdb")) as store,
        pytest.raises(NotACrawlDump, match="not a readable ZIP"),
    ):
        engine.ingest_file(store, path, Config(), jobs=1)
    other = make_wacz(tmp_path / "photos.zip", [("img/a.jpg", b"\xff\xd8\xff")])
    with pytest.raises(NotACrawlDump, match="not a crawl dump"):
        detect_format(other)


def test_unsafe_names() -> None:
    assert wacz.unsafe_name("archive/a.warc.gz") is None
    for name in ("/etc/passwd", "archive/../../x", "C:evil", "archive\\x", "a\x00b", ""):
        assert wacz.unsafe_name(name) is not None, name


# --- hostile WACZ files through the whole ingest path ---------------------------------------------------
_NAMES = st.sampled_from(
    [
        "archive/a.warc.gz",
        "archive/a.warc.gz",
        "data/archive/b.warc",
        "archive/../x.warc",
        "/archive/abs.warc",
        "archive/",
        "pages/pages.jsonl",
        "pages/extraPages.jsonl",
        "datapackage.json",
    ]
)
_DATA = st.one_of(
    st.just(warc(["http://a.example/1", "http://a.example/2"])),
    st.just(warc(["http://a.example/3"], gz=False)),
    st.just(pages_list(["http://a.example/1"])),
    st.binary(max_size=300),
    st.just(b"WARC/1.0\r\n" + bytes(1 << 20)),
)


@st.composite
def hostile_waczs(draw: st.DrawFn) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in draw(st.lists(st.tuples(_NAMES, _DATA), max_size=5)):
            z.writestr(name, data, draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])))
    data = buf.getvalue()
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return data


@pytest.mark.filterwarnings("ignore:Duplicate name")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_waczs())
def test_hostile_wacz_files_are_named_errors_never_a_crash(data: bytes) -> None:
    ingest_hostile(data, "hostile.wacz")
    # no member name became a path: none of the traversing names was written
    assert not Path(tempfile.gettempdir(), "x.warc").exists() and not Path("/archive/abs.warc").exists()


@pytest.mark.parametrize("revisit_first", [False, True], ids=["record-member-first", "revisit-member-first"])
def test_a_revisit_links_to_its_record_in_another_warc_of_the_wacz(
    tmp_path: Path, revisit_first: bool
) -> None:
    """Browsertrix rolls its WARCs over: a revisit in one WARC of a WACZ may stand for a record in another
    (before or after it in the ZIP). It is loaded as a copy of that record, which its page names."""
    first = Archive(tmp_path / "rec-20240305101500-crawl.warc.gz")
    original = first.response("https://w.test/a", _doc(1).encode())
    first.response("https://w.test/b", _doc(2).encode())
    first.close()
    second = Archive(tmp_path / "rec-20240305101501-crawl.warc.gz")
    _heritrix_revisit(second, original, "2024-03-05T10:20:00Z")
    second.response("https://w.test/c", _doc(3).encode())
    second.close()
    members = [(f"archive/{a.path.name}", a.path.read_bytes()) for a in (first, second)]
    if revisit_first:
        members.reverse()
    path = make_wacz(
        tmp_path / "crawl.wacz", [*members, ("pages/pages.jsonl", pages_list(["https://w.test/a"]))]
    )

    store = Store(tmp_path / "db.duckdb")
    summary = engine.ingest_file(store, path, Config(), jobs=1)
    assert _errors(store) == []
    pages = {(p["url"], p["extra"]["wacz_member"]): p for p in _pages(store)}
    assert len(pages) == 4
    record = pages[("https://w.test/a", f"archive/{first.path.name}")]
    copy = pages[("https://w.test/a", f"archive/{second.path.name}")]
    assert copy["html"] == record["html"] and copy["md5"] == record["md5"]
    assert copy["extra"]["warc_type"] == "revisit"
    assert copy["extra"]["refers_to_record_id"] == record["extra"]["warc_record_id"]
    assert copy["extra"]["refers_to_offset"] == record["extra"]["warc_offset"]
    assert copy["extra"]["refers_to_wacz_member"] == f"archive/{first.path.name}"
    assert (
        f"revisit of {record['extra']['warc_record_id']} in archive/{first.path.name} at byte offset "
        f"{record['extra']['warc_offset']:,}"
    ) in describe_archive_record(copy["extra"])
    assert copy["extra"]["wacz_page"] is True
    assert summary.revisits == 1
    store.close()
