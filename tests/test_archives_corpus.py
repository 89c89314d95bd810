"""The archive corpus (tests/data/archives, see its PROVENANCE.md) through `neardup ingest`: every record
of every file is a page or a named error, counted against warcio's own reading of the same file; the
pages' charsets; the WACZ pages list. A directory named by NEARDUP_ARCHIVE_CORPUS adds its WARC, ARC
and WACZ files to the same checks (real crawlers' files kept outside the repository)."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from neardup import cli
from neardup.errors import NotACrawlDump
from neardup.ingest import ARCHIVE_READERS, detect_format
from neardup.readers.capture import describe_archive_record
from neardup.records import validate
from neardup.rejects import Reject, RejectKind
from neardup.store import Store

CORPUS = Path(__file__).parent / "data" / "archives"
_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wacz")


def _corpus() -> list[Path]:
    files = sorted(p for p in CORPUS.iterdir() if p.name.endswith(_SUFFIXES))
    if extra := os.environ.get("NEARDUP_ARCHIVE_CORPUS"):
        files += sorted(p for p in Path(extra).rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES))
    return files


def _make_corpus() -> Any:
    spec = importlib.util.spec_from_file_location("make_corpus", CORPUS / "make_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _warcio_count(data: bytes) -> tuple[int, bool]:
    """(records warcio reads in an ARC or WARC file's bytes, whether it read to the end). A file gzipped
    whole, which warcio refuses, is counted in its gunzipped bytes."""
    n = 0
    try:
        for rec in WarcioIterator(io.BytesIO(data), arc2warc=False):
            rec.content_stream().read()
            n += 1
    except Exception:  # warcio's ArchiveLoadFailed and its parsers' errors: what it read so far
        if data[:2] == b"\x1f\x8b":
            try:
                return _warcio_count(gzip.decompress(data))
            except (OSError, EOFError):
                pass
        return n, False
    return n, True


def warcio_records(path: Path) -> tuple[int, bool]:
    if not path.name.endswith(".wacz"):
        return _warcio_count(path.read_bytes())
    total, whole = 0, True
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.filename.removeprefix("data/").startswith("archive/") and not info.is_dir():
                n, ok = _warcio_count(z.read(info))
                total, whole = total + n, whole and ok
    return total, whole


def read_records(path: Path) -> tuple[list[dict[str, Any]], list[Reject], int]:
    """(pages, rejects, skipped records) as the reader and `validate` give them."""
    reader = ARCHIVE_READERS[detect_format(path)](path)
    pages: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    for raw in reader.records():
        rec = validate(raw)
        (rejects if isinstance(rec, Reject) else pages).append(rec)  # type: ignore[arg-type]
    return pages, rejects, sum(reader.skipped.values())


def ingested(path: Path, db: Path) -> Store:
    """The store `neardup ingest PATH --db DB` wrote."""
    assert cli.main(["ingest", str(path), "--db", str(db)]) == 0
    return Store(str(db))


def stored_pages(store: Store) -> list[dict[str, Any]]:
    ids = np.sort(store.cursor().execute("SELECT page_id FROM pages").fetchnumpy()["page_id"])
    rows = [r for t in store.page_records(ids, 256) for r in t.to_pylist()]
    for r in rows:
        r["extra"] = json.loads(r["extra"]) if r["extra"] else {}
    return rows


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_every_record_is_a_page_or_a_named_error(path: Path, tmp_path: Path, capsys) -> None:
    db = tmp_path / "corpus.duckdb"
    code = cli.main(["ingest", str(path), "--db", str(db)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    pages, rejects, skipped = read_records(path)
    counted, whole = warcio_records(path)
    ours = len(pages) + len(rejects) + skipped
    # Where the reader resynchronized after bytes that are no record, a `malformed record` reject stands
    # for them: warcio may count them as a record or not.
    resyncs = sum(r.kind == RejectKind.MALFORMED_RECORD for r in rejects)
    if whole:
        assert abs(ours - counted) <= resyncs, (len(pages), len(rejects), skipped, counted)
    else:  # warcio gave up on the file: it still reads no record this does not
        assert ours >= counted
        assert rejects
    assert {r.kind for r in rejects} <= set(RejectKind)
    assert all(r.detail.startswith(r.kind) for r in rejects)
    if code == 2:  # refused whole, with its reasons, and nothing kept
        assert not pages and err.startswith("neardup: error:") and "no usable record" in err
        return
    assert code == 0
    store = Store(str(db))
    n_pages = store.cursor().execute("SELECT count(*) FROM pages").fetchone()[0]
    errors = store.ingest_errors()
    assert n_pages + len(errors) == len(pages) + len(rejects)
    assert set(errors["kind"]) <= {str(k) for k in RejectKind}
    for page in stored_pages(store):  # every page says where its record is
        extra = page["extra"]
        assert extra["warc_file"] and isinstance(extra.get("warc_offset"), int | None)
        assert describe_archive_record(extra)


def test_corpus_pages_decode_in_their_charsets(tmp_path: Path) -> None:
    made = _make_corpus()
    checked = 0
    for path in sorted(CORPUS.iterdir()):
        if not path.name.endswith(_SUFFIXES):
            continue
        store = ingested(path, tmp_path / f"{path.name}.duckdb")
        for page in stored_pages(store):
            url_path = "/" + page["url"].split("/", 3)[3]
            if url_path.split("?")[0] in made.PAGES and made.PAGES[url_path.split("?")[0]][2]:
                assert made.PAGES[url_path.split("?")[0]][2] in page["html"], (path.name, page["url"])
                checked += 1
    # 8 in each ARC file (and a 404 page), 9 in a warcio WARC (a revisit), 8 by wget, 9 + 3 in the WACZ files
    assert checked == 4 * 8 + 2 * 9 + 8 + 9 + 3


def test_an_arc_page_names_its_file_version_and_offset(tmp_path: Path) -> None:
    path = CORPUS / "alexa-layout-v2.arc"
    store = ingested(path, tmp_path / "db.duckdb")
    data = path.read_bytes()
    for page in stored_pages(store):
        extra = page["extra"]
        assert extra["archive_format"] == "arc" and extra["arc_version"] == 2
        # the offset is where the record's header line starts, and the line names the URL
        assert data[extra["warc_offset"] :].startswith(page["url"].encode() + b" ")
        assert "warc_record_id" not in extra
        assert f"byte offset {extra['warc_offset']:,}" in describe_archive_record(extra)


def test_arc_gz_offsets_are_the_records_gzip_members(tmp_path: Path) -> None:
    path = CORPUS / "heritrix-layout-v1.arc.gz"
    store = ingested(path, tmp_path / "db.duckdb")
    data = path.read_bytes()
    pages = stored_pages(store)
    assert len(pages) == 9
    for page in pages:
        member = gzip.GzipFile(fileobj=io.BytesIO(data[page["extra"]["warc_offset"] :])).readline()
        assert member.startswith(page["url"].encode() + b" ")


def test_wacz_pages_list_marks_the_pages_the_crawler_was_asked_for(tmp_path: Path) -> None:
    path = CORPUS / "webrecorder-layout.wacz"
    store = ingested(path, tmp_path / "db.duckdb")
    with zipfile.ZipFile(path) as z:
        listed = {json.loads(line).get("url") for line in z.read("pages/pages.jsonl").splitlines()}
        extra_listed = {json.loads(line).get("url") for line in z.read("pages/extraPages.jsonl").splitlines()}
    pages = {p["url"]: p["extra"] for p in stored_pages(store)}
    assert {u for u, e in pages.items() if e["wacz_page"]} == listed - {None}
    assert {u for u, e in pages.items() if e.get("wacz_extra_page")} == extra_listed - {None}
    for url, extra in pages.items():
        assert extra["wacz_file"] == path.name
        assert extra["wacz_member"].startswith("archive/") and extra["wacz_member"].endswith(
            extra["warc_file"]
        )
        member = zipfile.ZipFile(path).read(extra["wacz_member"])
        assert gzip.GzipFile(fileobj=io.BytesIO(member[extra["warc_offset"] :])).read(5) == b"WARC/"
        said = describe_archive_record(extra)
        assert said is not None and said.startswith(f"{path.name} · {extra['wacz_member']} · ")
        assert said.count(extra["warc_file"]) == 1, said  # the member names its WARC: once
        assert ("a page the crawler was asked for" in said) == (url in listed)


def test_a_zip_that_is_not_a_wacz_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "photos.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.jpg", b"\xff\xd8\xff" + bytes(10))
    with pytest.raises(NotACrawlDump, match="not a crawl dump"):
        detect_format(path)


@pytest.mark.spark
def test_spark_reads_arc_and_wacz_files_as_the_local_engine(tmp_path: Path) -> None:
    """`neardup spark` over a directory of an ARC, two WACZ and a WARC file: the same pages (URL, line,
    archive offset and WACZ mark) and errors as `neardup ingest` of the same files."""
    import pandas as pd

    inputs = tmp_path / "inputs"
    inputs.mkdir()
    # the early WACZ's three pages are in the other WACZ too: duplicate records, named by WACZ member
    for name in ("alexa-layout-v2.arc", "early-layout.wacz", "webrecorder-layout.wacz", "wget-1.21.warc.gz"):
        (inputs / name).write_bytes((CORPUS / name).read_bytes())
    out = tmp_path / "out"
    conf = ["--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=4"]
    assert cli.main(["spark", str(inputs), "--out", str(out), *conf]) == 0
    db = tmp_path / "local.duckdb"
    assert cli.main(["ingest", *[str(p) for p in sorted(inputs.iterdir())], "--db", str(db)]) == 0
    store = Store(str(db))
    want = store.cursor().execute("SELECT page_id, line, url, extra FROM pages ORDER BY page_id").df()
    got = pd.read_parquet(out / "pages").sort_values("page_id").reset_index(drop=True)
    assert got["url"].tolist() == want["url"].tolist() and got["line"].tolist() == want["line"].tolist()
    keys = ("warc_offset", "archive_format", "wacz_page")
    assert [[json.loads(e).get(k) for k in keys] for e in got["extra"]] == [
        [json.loads(e).get(k) for k in keys] for e in want["extra"]
    ]
    errors = pd.read_parquet(out / "errors")
    assert sorted(errors["reason"]) == sorted(store.ingest_errors()["reason"])
    assert [r for r in errors["reason"] if r.startswith("duplicate record") and r.endswith(".warc.gz)")]


def test_an_arc_file_s_skipped_records_are_not_called_warc_records(tmp_path: Path, capsys) -> None:
    path = CORPUS / "heritrix-layout-v1.arc"
    assert cli.main(["ingest", str(path), "--db", str(tmp_path / "db.duckdb"), "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "heritrix-layout-v1.arc: 9 pages loaded, 3 records rejected" in out
    assert "  1 record skipped, not a page (1 ARC file header)" in out
    assert "WARC" not in out


def test_a_wacz_reject_names_the_member_its_offset_is_in(tmp_path: Path) -> None:
    # both WARCs of the WACZ start with a dns: record at one offset: the offset alone names neither
    store = ingested(CORPUS / "webrecorder-layout.wacz", tmp_path / "db.duckdb")
    reasons = sorted(store.ingest_errors()["reason"])
    assert reasons == [
        "not HTML image/png (offset 4712, https://site.example/logo.png) "
        "(in archive/rec-20240305101501-corpus.warc.gz)",
        "not HTML text/dns (offset 262, dns:example.org) (in archive/rec-20240305101500-corpus.warc.gz)",
        "not HTML text/dns (offset 262, dns:example.org) (in archive/rec-20240305101501-corpus.warc.gz)",
    ]


def test_a_wacz_duplicate_record_names_its_member(tmp_path: Path) -> None:
    db = tmp_path / "db.duckdb"
    assert cli.main(["ingest", str(CORPUS / "early-layout.wacz"), "--db", str(db), "--jobs", "1"]) == 0
    store = ingested(CORPUS / "webrecorder-layout.wacz", db)
    errors = store.ingest_errors()
    assert (
        "duplicate record: same url, fetched_at and content as line 2 of source 1 "
        "(offset 859, https://site.example/index.html) (in archive/rec-20240305101500-corpus.warc.gz)"
    ) in set(errors["reason"])
