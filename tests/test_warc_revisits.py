"""WARC revisits: linked to their record later in the same file, and across files to a page an earlier
ingest stored (a de-duplicating crawl written as Heritrix writes it), counted when loaded."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from archive_records import PNG, Archive, _doc, _errors, _heritrix_revisit, _http, _ingest, _numbers, _pages
from hostile_warc import hostile_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup import engine
from neardup.config import Config
from neardup.errors import NotACrawlDump
from neardup.readers import warc
from neardup.readers.capture import describe_record
from neardup.stages import ingest as ingest_stage
from neardup.store import Store

ROOT = Path(__file__).resolve().parent.parent


def _neardup(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neardup.cli", *argv],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        cwd=ROOT,
        timeout=300,
    )


def test_revisits_of_a_deduplicating_crawl_link_to_the_pages_of_its_earlier_file(tmp_path):
    first = Archive(tmp_path / "crawl-00000.warc.gz")
    a = first.response("http://h.test/a", _doc(1).encode())
    b = first.response("http://h.test/b", _doc(2).encode())
    first.response("http://h.test/b-copy", _doc(2).encode())  # the same payload at another URL
    image = first.response("http://h.test/logo.png", PNG, headers=[("Content-Type", "image/png")])
    first.close()
    second = Archive(tmp_path / "crawl-00001.warc.gz")
    _heritrix_revisit(second, a, "2030-01-01T00:00:00Z")
    _heritrix_revisit(second, b, "2030-01-01T00:00:01Z")
    _heritrix_revisit(second, image, "2030-01-01T00:00:02Z")
    second.response("http://h.test/c", _doc(3).encode())
    second.close()
    db = tmp_path / "crawl.duckdb"
    one = _neardup("ingest", str(first.path), "--db", str(db), "--jobs", "1")
    two = _neardup("ingest", str(second.path), "--db", str(db), "--jobs", "1")
    assert one.returncode == 0 and two.returncode == 0, (one.stderr, two.stderr)
    assert "3 pages loaded, 1 record rejected" in two.stdout, two.stdout
    assert "2 WARC revisit records loaded as byte-identical copies" in two.stdout, two.stdout
    store = Store(db)
    pages = {(p["url"], p["extra"]["warc_file"]): p for p in _pages(store)}
    for url in ("http://h.test/a", "http://h.test/b"):
        original, revisit = pages[(url, first.path.name)], pages[(url, second.path.name)]
        assert revisit["html"] == original["html"] and revisit["md5"] == original["md5"]
        assert revisit["extra"]["warc_type"] == "revisit"
        assert revisit["extra"]["refers_to_file"] == first.path.name
        assert revisit["extra"]["refers_to_offset"] == original["extra"]["warc_offset"]
        # the page at the URL WARC-Refers-To-Target-URI names, not the first with its digest (b-copy)
        assert revisit["extra"]["refers_to_record_id"] == original["extra"]["warc_record_id"]
        # the Audit page's line says which file the record is in, and where
        assert (
            f"revisit of {original['extra']['warc_record_id']} in {first.path.name} at byte offset "
            f"{original['extra']['warc_offset']:,}"
        ) in describe_record(revisit["extra"])
    # the image was never a page: its revisit has no page to copy
    image_errors = sorted(reason for _, reason in _errors(store))
    assert len(image_errors) == 2 and all("http://h.test/logo.png" in r for r in image_errors)
    assert image_errors[0].startswith("not HTML image/png")
    assert image_errors[1].startswith("revisit without its record")
    assert _numbers(store)["numbers"]["byte_identical_duplicates"] == 3  # b-copy, and the two revisits
    store.close()


def test_a_revisit_of_another_file_costs_one_indexed_lookup(tmp_path, monkeypatch):
    first = Archive(tmp_path / "one.warc.gz")
    records = [first.response(f"http://i.test/{i}", _doc(i).encode()) for i in range(5)]
    first.close()
    second = Archive(tmp_path / "two.warc.gz")
    for i, rec in enumerate(records):
        _heritrix_revisit(second, rec, f"2030-01-01T00:00:0{i}Z")
    second.close()
    store = Store(tmp_path / "db.duckdb")
    engine.ingest_file(store, first.path, Config(), jobs=1)
    calls: list[str] = []
    lookup = Store.page_by_payload

    def counted(self: Store, digest: str, *args: Any) -> Any:
        calls.append(digest)
        return lookup(self, digest, *args)

    monkeypatch.setattr(Store, "page_by_payload", counted)
    summary = engine.ingest_file(store, second.path, Config(), jobs=1)
    assert summary.loaded == 5 and summary.revisits == 5
    assert sorted(calls) == sorted(r.rec_headers.get_header("WARC-Payload-Digest") for r in records)
    indexed = (
        store.cursor()
        .execute("SELECT expressions FROM duckdb_indexes() WHERE table_name = 'warc_payloads'")
        .fetchall()
    )
    assert indexed and "payload_digest" in indexed[0][0]
    store.close()


def test_a_revisit_before_its_record_in_the_same_file_links_forward(tmp_path):
    """A file holding two sessions: the second session's revisit is written before the record it refers
    to (of the first session, appended later)."""
    from warcio.warcwriter import WARCWriter

    path = tmp_path / "sessions.warc.gz"
    a = Archive(path)
    html = _doc(7).encode()
    # the record is made first, to know its id and digest, and written after the revisit
    scratch = WARCWriter(open(tmp_path / "scratch.warc.gz", "wb"), gzip=True)  # noqa: SIM115
    import io

    record = scratch.create_warc_record(
        "http://f.test/page",
        "response",
        payload=io.BytesIO(html),
        http_headers=_http("200 OK", [("Content-Type", "text/html")]),
    )
    scratch.out.close()
    revisit = a.w.create_revisit_record(
        "http://f.test/page",
        record.rec_headers.get_header("WARC-Payload-Digest"),
        "http://f.test/page",
        record.rec_headers.get_header("WARC-Date"),
        http_headers=_http("200 OK", [("Content-Type", "text/html")]),
    )
    revisit.rec_headers.add_header("WARC-Refers-To", record.rec_headers.get_header("WARC-Record-ID"))
    revisit.rec_headers.replace_header("WARC-Date", "2030-01-01T00:00:00Z")
    a.w.write_record(revisit)
    a.w.write_record(record)
    a.close()
    store, summary = _ingest(tmp_path, path)
    pages = {p["line"]: p for p in _pages(store)}
    assert sorted(pages) == [2, 3] and _errors(store) == []
    assert pages[2]["extra"]["warc_type"] == "revisit" and pages[2]["html"] == html.decode()
    assert pages[2]["extra"]["refers_to_offset"] == pages[3]["extra"]["warc_offset"]
    assert summary.revisits == 1
    store.close()


def test_the_summary_counts_the_revisits_loaded_not_those_set_aside(tmp_path):
    a = Archive(tmp_path / "mixed.warc.gz")
    image = a.response("http://s.test/logo.png", PNG, headers=[("Content-Type", "image/png")])
    page = a.response("http://s.test/page", _doc(4).encode())
    for rec, date in (
        (image, "2030-01-01T00:00:00Z"),
        (image, "2030-01-02T00:00:00Z"),
        (page, "2030-01-03T00:00:00Z"),
    ):
        r = a.w.create_revisit_record(
            rec.rec_headers.get_header("WARC-Target-URI"),
            rec.rec_headers.get_header("WARC-Payload-Digest"),
            rec.rec_headers.get_header("WARC-Target-URI"),
            rec.rec_headers.get_header("WARC-Date"),
        )
        r.rec_headers.add_header("WARC-Refers-To", rec.rec_headers.get_header("WARC-Record-ID"))
        r.rec_headers.replace_header("WARC-Date", date)
        a.w.write_record(r)
    store, summary = _ingest(tmp_path, a.close())
    assert summary.loaded == 2 and summary.revisits == 1
    assert (
        summary.notes()[0]
        == "1 WARC revisit record loaded as a byte-identical copy of the record it refers to"
    )
    store.close()


@st.composite
def _one_stream(draw: st.DrawFn) -> bytes:
    """Hostile records (`hostile_warc.hostile_record`) and clean responses and revisits of them, gzipped as
    one stream, perhaps cut short."""
    clean = st.sampled_from(_CLEAN)
    records = draw(st.lists(st.one_of(hostile_record(), clean, clean, clean), min_size=1, max_size=12))
    for response in _CLEAN[:2]:  # the responses the clean revisits refer to, somewhere in the file
        records.insert(draw(st.integers(0, len(records))), response)
    whole = gzip.compress(b"".join(records))
    return whole[: draw(st.sampled_from([len(whole), len(whole), len(whole) // 2, len(whole) - 3]))]


def _clean(rtype: str, rid: str, digest: str, body: bytes, refers_to: str = "") -> bytes:
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    head = (
        f"WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Target-URI: http://o.test/{rid}\r\n"
        f"WARC-Date: 2026-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:{rid}>\r\n"
        f"WARC-Payload-Digest: {digest}\r\nContent-Type: application/http; msgtype=response\r\n"
        + (f"WARC-Refers-To: <urn:uuid:{refers_to}>\r\n" if refers_to else "")
        + f"Content-Length: {len(block)}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


_CLEAN = [
    _clean("response", "p1", "sha1:P1", _doc(1).encode()),
    _clean("response", "p2", "sha1:P2", b"\x89PNG\r\n\x1a\n not a page"),
    _clean("revisit", "v1", "sha1:P1", b"", refers_to="p1"),
    _clean("revisit", "v2", "sha1:P2", b"", refers_to="p2"),
    _clean("revisit", "v3", "sha1:P1", b""),  # by its payload digest alone
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_one_stream())
def test_a_one_stream_file_loads_the_same_with_its_revisits_held_as_with_a_second_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    # Every record a revisit refers to is gone from those kept: each is linked to the page its record made
    # (or read again, when it made none), or, without the store's pages, by a second pass over the stream.
    monkeypatch.setattr(warc, "RECENT_BYTES", 1)
    path = tmp_path / "hostile.warc.gz"
    path.write_bytes(data)
    loads = []
    for held in (True, False):
        if not held:
            monkeypatch.setattr(ingest_stage, "source_page_lookup", lambda store, source_id: None)
        with Store(tmp_path / f"held-{held}.duckdb") as store:
            try:
                summary = engine.ingest_file(store, path, Config(), jobs=1)
            except NotACrawlDump as exc:
                loads.append(str(exc))
                continue
            pages = [
                (p["line"], p["url"], p["status"], p["md5"], p["html"], p["extra"].get("warc_type"))
                for p in _pages(store)
            ]
            loads.append((pages, _errors(store), summary.loaded, summary.errors, summary.revisits))
    monkeypatch.undo()
    assert loads[0] == loads[1]
