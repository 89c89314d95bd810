"""`neardup spark` over the files of one de-duplicating crawl: a revisit in a later file whose record is
in an earlier input file is a copy of that file's page, as when the local engine ingests the files one
after the other into one database (`tests/test_warc_revisits.py`)."""

from __future__ import annotations

import gzip
import io
import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from archive_records import PNG, Archive, _doc, _heritrix_revisit, _http
from conftest import page_html, words_text
from spark_parity import SPARK_CONF, assert_matches_local, output_table
from warcio.warcwriter import WARCWriter

from neardup import engine
from neardup.cli import main
from neardup.config import Config
from neardup.store import Store

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]


HTML = ("Content-Type", "text/html")


def _near(i: int) -> str:
    """`_doc(i)` with its last words changed: a near-duplicate of it."""
    words = words_text(random.Random(i), 200).split()
    return page_html(f"Page {i}", " ".join(words[:-4] + ["other", "closing", "words", "here"]))


def _forward_revisit(a: Archive, url: str, body: bytes, date: str) -> tuple[Any, Any]:
    """A revisit at `url` written before its record (a response at `url` + "-record", written after it)."""
    scratch = WARCWriter(io.BytesIO(), gzip=True)
    record = scratch.create_warc_record(
        url + "-record", "response", payload=io.BytesIO(body), http_headers=_http("200 OK", [HTML])
    )
    h = record.rec_headers
    revisit = a.w.create_revisit_record(
        url,
        h.get_header("WARC-Payload-Digest"),
        h.get_header("WARC-Target-URI"),
        h.get_header("WARC-Date"),
        http_headers=_http("200 OK", [HTML]),
    )
    revisit.rec_headers.add_header("WARC-Refers-To", h.get_header("WARC-Record-ID"))
    revisit.rec_headers.replace_header("WARC-Date", date)
    a.w.write_record(revisit)
    a.w.write_record(record)
    return revisit, record


def _crawl(tmp_path: Path) -> list[Path]:
    """Three files of one crawl: the second revisits pages and an image of the first (Heritrix's
    identical-payload profile, no WARC-Refers-To) between pages of its own, and holds a revisit linked
    forward in its file after the image's (so its page moves down a place); the third revisits that one."""
    first = Archive(tmp_path / "crawl-00000.warc.gz")
    a = first.response("http://h.test/a", _doc(1).encode())
    b = first.response("http://h.test/b", _doc(2).encode())
    first.response("http://h.test/b-copy", _doc(2).encode())  # the same payload at another URL
    image = first.response("http://h.test/logo.png", PNG, headers=[("Content-Type", "image/png")])
    first.response("http://h.test/d", _doc(4).encode())
    first.close()
    second = Archive(tmp_path / "crawl-00001.warc.gz")
    second.response("http://h.test/a-near", _near(1).encode())
    _heritrix_revisit(second, image, "2030-01-01T00:00:00Z")  # no page to copy: a reject between pages
    _heritrix_revisit(second, b, "2030-01-01T00:00:01Z")
    forward, _ = _forward_revisit(second, "http://h.test/e", _doc(5).encode(), "2030-01-01T00:00:02Z")
    second.response("http://h.test/c", _doc(3).encode())
    _heritrix_revisit(second, a, "2030-01-01T00:00:03Z")
    second.response("http://h.test/d-near", _near(4).encode())
    second.close()
    third = Archive(tmp_path / "crawl-00002.warc.gz")
    _heritrix_revisit(third, forward, "2030-02-01T00:00:00Z")  # the page at its refers-to URL and date
    third.response("http://h.test/f", _doc(6).encode())
    third.close()
    return [first.path, second.path, third.path]


def test_revisits_of_an_earlier_input_file_are_its_pages_as_locally(tmp_path: Path) -> None:
    paths = _crawl(tmp_path)
    config = Config()
    store = Store(tmp_path / "local.duckdb")
    for path in paths:
        engine.ingest_file(store, path, config, jobs=1)
    out = tmp_path / "out"
    conf = [c if c != "local[2]" else "local[1]" for c in SPARK_CONF]
    assert main(["spark", *map(str, paths), "--out", str(out), *conf]) == 0
    manifest = json.loads((out / "_MANIFEST.json").read_text(encoding="utf-8"))

    pages = output_table(out, "pages").sort_values("page_id").reset_index(drop=True)
    want = store.page_table(config.norm_key)
    cols = ["page_id", "source_id", "line", "url", "fetched_at", "status", "md5", "exact_key"]
    pd.testing.assert_frame_equal(pages[cols], want[cols], check_dtype=False)
    assert pages["degenerate"].isna().tolist() == want["degenerate"].isna().tolist()
    # 4 HTML pages of the first file; 7 of the second: 2 revisits of the first, 1 of its own, 4 responses;
    # 2 of the third: a revisit of the second's own revisit, a response
    assert len(pages) == 13
    got_extra = [json.loads(e) for e in pages["extra"]]
    want_extra = [
        json.loads(e)
        for e in store.cursor().execute("SELECT extra FROM pages ORDER BY page_id").df()["extra"]
    ]
    assert got_extra == want_extra
    across = [e for e in got_extra if e["warc_type"] == "revisit" and "refers_to_file" in e]
    assert [e["refers_to_file"] for e in across] == [paths[0].name] * 2 + [paths[1].name]
    last = pages.iloc[-1]  # the third file's revisit: a copy of the page at its refers-to URL
    assert (
        last["url"] == "http://h.test/e"
        and json.loads(last["extra"])["refers_to_page_id"]
        == (pages.loc[pages["url"] == "http://h.test/e", "page_id"].iloc[0])
    )

    errors = output_table(out, "errors")
    want_err = store.ingest_errors()
    assert sorted(zip(errors["line"], errors["kind"], errors["reason"], strict=True)) == sorted(
        zip(want_err["line"], want_err["kind"], want_err["reason"], strict=True)
    )
    assert [r for r in errors["reason"] if r.startswith("revisit without its record")]
    assert [s["n_loaded"] for s in manifest["sources"]] == [4, 7, 2]
    assert_matches_local(out, manifest, store, config)
    assert manifest["numbers"]["byte_identical_duplicates"] == 5  # b-copy and the 4 revisits
    store.close()


def test_a_revisit_skips_a_page_rejected_as_a_duplicate_record_as_locally(tmp_path: Path) -> None:
    """A page the local engine rejects as a duplicate record (same url, fetch time and HTML as an earlier
    one, here its payload gzip-encoded: another payload digest) is no record a revisit can copy: the
    revisit of that digest copies the other page with it, locally and in Spark."""
    date = {"WARC-Date": "2024-01-01T00:00:00Z"}
    body = _doc(1).encode()
    encoded = gzip.compress(body, mtime=0)
    gz = [HTML, ("Content-Encoding", "gzip")]
    first = Archive(tmp_path / "crawl-00000.warc.gz")
    first.response("http://h.test/a", body, warc_headers=date)
    repeat = first.response("http://h.test/a", encoded, headers=gz, warc_headers=date)  # a duplicate record
    other = first.response(
        "http://h.test/a-gz", encoded, headers=gz, warc_headers={"WARC-Date": "2024-01-02T00:00:00Z"}
    )
    first.response("http://h.test/b", _doc(2).encode())
    first.close()
    second = Archive(tmp_path / "crawl-00001.warc.gz")
    _heritrix_revisit(second, repeat, "2030-01-01T00:00:00Z")
    second.response("http://h.test/b-near", _near(2).encode())
    second.close()
    paths = [first.path, second.path]

    config = Config()
    store = Store(tmp_path / "local.duckdb")
    for path in paths:
        engine.ingest_file(store, path, config, jobs=1)
    want_extra = [
        json.loads(e)
        for e in store.cursor().execute("SELECT extra FROM pages ORDER BY page_id").df()["extra"]
    ]
    # the page at a-gz: the one at the revisit's refers-to URL is a rejected duplicate
    copied = [e for e in want_extra if e["warc_type"] == "revisit"]
    assert [e["refers_to_record_id"] for e in copied] == [other.rec_headers.get_header("WARC-Record-ID")]
    assert [r for r in store.ingest_errors()["reason"] if r.startswith("duplicate record")]

    out = tmp_path / "out"
    conf = [c if c != "local[2]" else "local[1]" for c in SPARK_CONF]
    assert main(["spark", *map(str, paths), "--out", str(out), *conf]) == 0
    manifest = json.loads((out / "_MANIFEST.json").read_text(encoding="utf-8"))
    pages = output_table(out, "pages").sort_values("page_id").reset_index(drop=True)
    want = store.page_table(config.norm_key)
    cols = ["page_id", "source_id", "line", "url", "fetched_at", "status", "md5", "exact_key"]
    pd.testing.assert_frame_equal(pages[cols], want[cols], check_dtype=False)
    assert [json.loads(e) for e in pages["extra"]] == want_extra
    errors = output_table(out, "errors")
    want_err = store.ingest_errors()
    assert sorted(zip(errors["line"], errors["kind"], errors["reason"], strict=True)) == sorted(
        zip(want_err["line"], want_err["kind"], want_err["reason"], strict=True)
    )
    assert_matches_local(out, manifest, store, config)
    store.close()
