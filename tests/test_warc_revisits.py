"""WARC revisits: linked to their record later in the same file, and across files to a page an earlier
ingest stored (a de-duplicating crawl written as Heritrix writes it), counted when loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from archive_records import PNG, Archive, _doc, _errors, _heritrix_revisit, _http, _ingest, _numbers, _pages

from neardup import engine
from neardup.config import Config
from neardup.readers.capture import describe_record
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
