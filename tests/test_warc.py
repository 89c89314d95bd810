"""WARC input: a crawl written by a real crawler (wget), edge cases written with warcio, and the same
report as the JSON-lines form of the same pages."""

from __future__ import annotations

import gzip
import io
import json
import random
import shutil
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import brotli
import pytest
from archive_records import Archive, _doc, _errors, _http, _ingest, _numbers, _pages
from conftest import page_html, words_text
from warcio.archiveiterator import ArchiveIterator as WarcioIterator
from warcio.warcwriter import WARCWriter

from neardup.errors import NotACrawlDump
from neardup.ingest import detect_format, read_raw
from neardup.readers import warc
from neardup.records import validate

WGET = shutil.which("wget") or "/usr/bin/wget"


# --- a real crawler ------------------------------------------------------------------------------
ARTICLES = 6


def _site(root: Path) -> dict[str, bytes]:
    """A small site: articles in one template, exact copies under other paths, a near copy with another
    date line, a link to a missing page, an ISO-8859-1 page declared only in <meta>, an image."""
    rng = random.Random(5)
    bodies = [words_text(rng, 260) for _ in range(ARTICLES)]

    def article(i: int, date: str = "2026-03-02") -> str:  # the template's menu links into the index
        return page_html(f"Article {i}", f"Published {date}. {bodies[i]}").replace(
            "href='/section-", "href='/index.html#s"
        )

    files: dict[str, bytes] = {f"articles/a{i}.html": article(i).encode() for i in range(ARTICLES)}
    files["copies/a0.html"] = files["articles/a0.html"]
    files["mirror/a1.html"] = files["articles/a1.html"]
    files["near/a2.html"] = article(2, "2026-03-09").encode()
    umlaut = (
        "<!DOCTYPE html><html><head><meta http-equiv='Content-Type' content='text/html; charset=iso-8859-1'>"
        "<title>Grüße aus Köln</title></head><body><main><article><h1>Grüße aus Köln</h1><p>"
        + "Schöne Äpfel und süße Brötchen über den Flüssen. " * 30
        + "</p></article></main></body></html>"
    )
    files["de/umlaut.html"] = umlaut.encode("iso-8859-1")
    files["img/logo.png"] = b"\x89PNG\r\n\x1a\n" + bytes(200)
    links = "".join(f"<li><a href='/{p}'>{p}</a></li>" for p in files if p.endswith(".html"))
    files["index.html"] = (
        f"<html><head><title>Index</title></head><body><img src='/img/logo.png'><ul>{links}"
        "<li><a href='/gone.html'>a page that is gone</a></li></ul></body></html>"
    ).encode()
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return files


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def wget_crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes], str]:
    """(the WARC wget wrote, the site's files, the base URL)."""
    tmp = tmp_path_factory.mktemp("wget")
    site = tmp / "site"
    files = _site(site)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(site)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        subprocess.run(
            [
                WGET,
                "--recursive",
                "--level=3",
                "--page-requisites",
                "-e",
                "robots=off",
                "--quiet",
                "--no-verbose",
                f"--directory-prefix={tmp / 'mirror'}",
                f"--warc-file={tmp / 'crawl'}",
                f"{base}/index.html",
            ],
            check=False,
            timeout=120,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    warc = tmp / "crawl.warc.gz"
    assert warc.exists(), "wget wrote no WARC"
    return warc, files, base


@pytest.mark.wget
def test_a_wget_crawl_loads_every_html_page(tmp_path, wget_crawl):
    warc, files, base = wget_crawl
    assert detect_format(warc) == "warc"
    store, summary = _ingest(tmp_path, warc)
    pages = {p["url"]: p for p in _pages(store)}
    html_urls = {f"{base}/{rel}" for rel in files if rel.endswith(".html")}
    assert html_urls | {f"{base}/gone.html"} == set(pages)
    assert pages[f"{base}/gone.html"]["status"] == 404
    assert {p["status"] for u, p in pages.items() if u != f"{base}/gone.html"} == {200}
    assert summary.reasons.get("not HTML image/png") == 1
    # one request record per fetch, the image's too; a fetch wget retried (a dropped connection) writes two
    assert summary.skipped["request"] >= len(pages) + 1, (summary.skipped, summary.reasons, sorted(pages))
    assert summary.skipped["warcinfo"] == 1
    umlaut = pages[f"{base}/de/umlaut.html"]
    assert "Grüße aus Köln" in umlaut["html"] and "süße Brötchen" in umlaut["html"]
    assert umlaut["extra"]["charset_source"] == "meta"
    for p in pages.values():  # traceable: the record is where extra says
        assert p["extra"]["warc_file"] == warc.name and p["extra"]["warc_record_id"].startswith("<urn:uuid:")
    with open(warc, "rb") as f:
        offsets = {
            r.rec_headers.get_header("WARC-Target-URI"): it.get_record_offset()
            for it in [WarcioIterator(f)]
            for r in it
            if r.rec_type == "response"
        }
    assert {u: p["extra"]["warc_offset"] for u, p in pages.items()} == {u: offsets[u] for u in pages}
    d = _numbers(store)["numbers"]
    assert d["byte_identical_duplicates"] == 2  # copies/a0, mirror/a1
    assert d["near_duplicates"] == 1  # near/a2 (another date line)
    assert d["degenerate_pages"] == 1  # the 404
    store.close()


@pytest.mark.wget
def test_a_wget_crawl_reports_as_its_jsonl_form(tmp_path, wget_crawl):
    """The JSON lines of the same fetches, read with warcio (the oracle), give the same report."""
    warc, files, base = wget_crawl
    lines = []
    with open(warc, "rb") as f:
        for r in WarcioIterator(f):
            if r.rec_type != "response" or "html" not in (r.http_headers.get_header("Content-Type") or ""):
                continue
            url = r.rec_headers.get_header("WARC-Target-URI")
            raw = r.content_stream().read()
            rel = url.removeprefix(base + "/")
            charset = "iso-8859-1" if rel == "de/umlaut.html" else "utf-8"
            lines.append(
                {
                    "url": url,
                    "html": raw.decode(charset),
                    "status": int(r.http_headers.get_statuscode()),
                    "fetched_at": r.rec_headers.get_header("WARC-Date"),
                }
            )
    jsonl = tmp_path / "crawl.jsonl"
    jsonl.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    warc_store, _ = _ingest(tmp_path, warc, "w.duckdb")
    jsonl_store, _ = _ingest(tmp_path, jsonl, "j.duckdb")
    w, j = _numbers(warc_store), _numbers(jsonl_store)
    assert w["numbers"] == j["numbers"] and w["degenerate_by_reason"] == j["degenerate_by_reason"]
    assert [p["md5"] for p in _pages(warc_store)] == [p["md5"] for p in _pages(jsonl_store)]
    warc_store.close()
    jsonl_store.close()


def test_revisits_are_byte_identical_copies_of_their_record(tmp_path):
    a = Archive(tmp_path / "revisit.warc.gz")
    first = a.response("http://site.test/a", _doc(1).encode())
    rid, digest = (
        first.rec_headers.get_header("WARC-Record-ID"),
        first.rec_headers.get_header("WARC-Payload-Digest"),
    )
    a.response("http://site.test/b", _doc(2).encode())
    revisit = a.w.create_revisit_record(
        "http://site.test/a",
        digest,
        "http://site.test/a",
        "2026-03-01T00:00:00Z",
        http_headers=_http("200 OK", [("Content-Type", "text/html")]),
    )
    revisit.rec_headers.add_header("WARC-Refers-To", rid)
    revisit.rec_headers.replace_header("WARC-Date", "2030-01-01T00:00:00Z")  # a later fetch
    a.w.write_record(revisit)
    lost = a.w.create_revisit_record(
        "http://site.test/c",
        "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "http://site.test/c",
        "2026-03-01T00:00:00Z",
    )
    a.w.write_record(lost)
    store, summary = _ingest(tmp_path, a.close())
    pages = _pages(store)
    assert [p["url"] for p in pages] == ["http://site.test/a", "http://site.test/b", "http://site.test/a"]
    assert pages[2]["md5"] == pages[0]["md5"] and pages[2]["html"] == pages[0]["html"]
    assert pages[2]["extra"]["warc_type"] == "revisit"
    assert pages[2]["extra"]["refers_to_record_id"] == rid
    assert pages[2]["extra"]["refers_to_offset"] == pages[0]["extra"]["warc_offset"]
    assert summary.revisits == 1
    ((line, reason),) = _errors(store)
    assert (
        line == 5
        and reason.startswith("revisit without its record: sha1:AAAA")
        and "http://site.test/c" in reason
    )
    assert _numbers(store)["numbers"]["byte_identical_duplicates"] == 1
    store.close()


def test_content_and_transfer_encodings_are_decoded(tmp_path):
    html = {i: _doc(i).encode() for i in range(5)}
    a = Archive(tmp_path / "enc.warc")
    a.response(
        "http://e.test/gzip",
        gzip.compress(html[0]),
        headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
    )
    a.response(
        "http://e.test/deflate",
        zlib.compress(html[1]),
        headers=[("Content-Type", "text/html"), ("Content-Encoding", "deflate")],
    )
    a.response(
        "http://e.test/br",
        brotli.compress(html[2]),
        headers=[("Content-Type", "text/html"), ("Content-Encoding", "br")],
    )
    chunked = (
        b"".join(
            b"%x\r\n%s\r\n" % (len(html[3][i : i + 500]), html[3][i : i + 500])
            for i in range(0, len(html[3]), 500)
        )
        + b"0\r\n\r\n"
    )
    a.response(
        "http://e.test/chunked",
        chunked,
        headers=[("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")],
    )
    gz = gzip.compress(html[4])
    both = b"%x\r\n%s\r\n0\r\n\r\n" % (len(gz), gz)
    a.response(
        "http://e.test/both",
        both,
        headers=[
            ("Content-Type", "text/html"),
            ("Transfer-Encoding", "chunked"),
            ("Content-Encoding", "gzip"),
        ],
    )
    a.response(
        "http://e.test/broken",
        b"\x1f\x8b\x08garbage",
        headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
    )
    store, _ = _ingest(tmp_path, a.close())
    pages = {p["url"].rsplit("/", 1)[1]: p for p in _pages(store)}
    for i, name in enumerate(["gzip", "deflate", "br", "chunked", "both"]):
        assert pages[name]["html"] == html[i].decode(), name
        assert pages[name]["extra"]["payload_digest"].startswith("sha1:")
    broken_at = _offsets(a.path)["http://e.test/broken"]
    assert [r for _, r in _errors(store)] == [
        f"undecodable Content-Encoding gzip (offset {broken_at}, http://e.test/broken)"
    ]
    store.close()


def _offsets(path: Path) -> dict[str, int]:
    with open(path, "rb") as f:
        it = WarcioIterator(f)
        return {
            r.rec_headers.get_header("WARC-Target-URI"): it.get_record_offset()
            for r in it
            if r.rec_type in ("response", "resource", "revisit", "conversion")
        }


def test_charsets_header_bom_meta_detection_and_wrong_declarations(tmp_path):
    text = "Grüße aus Köln: schöne Äpfel, süße Brötchen, weiße Flüsse. " * 20
    cyr = "Съешь же ещё этих мягких французских булок, да выпей чаю. " * 20
    jp = "日本語のページです。東京の天気は晴れです。" * 20

    def page(s: str, meta: str = "") -> str:
        return f"<html><head>{meta}<title>t</title></head><body><p>{s}</p></body></html>"

    a = Archive(tmp_path / "charsets.warc.gz")
    cases = {
        "header-1252": (page(text).encode("cp1252"), "text/html; charset=windows-1252", "http", "cp1252"),
        "bom": (codecs_bom() + page(text).encode(), "text/html", "bom", "utf-8"),
        "meta-latin1": (
            page(text, "<meta charset='ISO-8859-1'>").encode("latin-1"),
            "text/html",
            "meta",
            "cp1252",
        ),
        "meta-sjis": (
            page(jp, "<meta charset=shift_jis>").encode("shift_jis"),
            "text/html",
            "meta",
            "shift_jis",
        ),
        "detect-1251": (page(cyr).encode("cp1251"), "text/html", "detected", "cp1251"),
        "none-utf8": (page(text).encode(), "text/html", "detected", "utf-8"),
        # declared UTF-8, the bytes are windows-1252: detection wins
        "wrong-utf8": (page(text).encode("cp1252"), "text/html; charset=utf-8", "detected", "cp1252"),
        # declared ISO-8859-1, the bytes are UTF-8
        "wrong-latin1": (page(text).encode(), "text/html; charset=iso-8859-1", "overruled", "utf-8"),
        "unknown-label": (page(text).encode(), "text/html; charset=x-no-such-thing", "detected", "utf-8"),
    }
    for name, (body, ctype, _, _) in cases.items():
        a.response(f"http://c.test/{name}", body, headers=[("Content-Type", ctype)])
    a.response(
        "http://c.test/garbage",
        b"<html><body><p>" + bytes(range(128, 256)) * 20 + b"</p></body></html>",
        headers=[("Content-Type", "text/html; charset=utf-8")],
    )
    store, _ = _ingest(tmp_path, a.close())
    pages = {p["url"].rsplit("/", 1)[1]: p for p in _pages(store)}
    for name, (_, _, source, codec) in cases.items():
        p = pages[name]
        want = cyr if "1251" in name else jp if "sjis" in name else text
        assert want.strip() in p["html"], (name, p["html"][:200])
        assert source in p["extra"]["charset_source"], (name, p["extra"])
        assert p["extra"]["charset"] == codec, (name, p["extra"])
    garbage = pages["garbage"]  # no charset reads these bytes: loaded, with U+FFFD for what does not decode
    assert "\ufffd" in garbage["html"] and "undecodable bytes replaced" in garbage["extra"]["charset_source"]
    store.close()


def codecs_bom() -> bytes:
    return b"\xef\xbb\xbf"


def test_not_html_is_counted_per_mime_type(tmp_path):
    a = Archive(tmp_path / "mime.warc.gz")
    a.response("http://m.test/page", _doc(1).encode())
    a.response(
        "http://m.test/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(50), headers=[("Content-Type", "image/png")]
    )
    a.response(
        "http://m.test/a.png", b"\x89PNG\r\n\x1a\n" + bytes(50), headers=[("Content-Type", "image/png")]
    )
    a.response("http://m.test/app.js", b"var x = 1;", headers=[("Content-Type", "application/javascript")])
    a.response("http://m.test/doc", b"%PDF-1.4 ...", headers=[])  # no Content-Type: sniffed
    a.response(
        "http://m.test/sniffed", _doc(2).encode(), headers=[("Content-Type", "application/octet-stream")]
    )
    store, summary = _ingest(tmp_path, a.close())
    assert [p["url"] for p in _pages(store)] == ["http://m.test/page", "http://m.test/sniffed"]
    assert summary.reasons == {
        "not HTML image/png": 2,
        "not HTML application/javascript": 1,
        "not HTML application/pdf": 1,
    }
    assert all(r.startswith("not HTML ") and "http://m.test/" in r for _, r in _errors(store))
    store.close()


def test_skipped_record_types_are_counted(tmp_path):
    a = Archive(tmp_path / "types.warc")
    a.response("http://t.test/a", _doc(1).encode())
    a.w.write_record(
        a.w.create_warc_record("http://t.test/a", "request", payload=io.BytesIO(b"GET /a HTTP/1.1\r\n\r\n"))
    )
    a.w.write_record(
        a.w.create_warc_record(
            "http://t.test/a",
            "metadata",
            payload=io.BytesIO(b"via: x\r\n"),
            warc_content_type="application/warc-fields",
        )
    )
    a.w.write_record(
        a.w.create_warc_record(
            "http://t.test/shot",
            "resource",
            payload=io.BytesIO(_doc(2).encode()),
            warc_content_type="text/html",
        )
    )
    # Heritrix's DNS lookups: response records that are not HTTP
    a.w.write_record(
        a.w.create_warc_record(
            "dns:t.test",
            "response",
            payload=io.BytesIO(b"20260301 t.test. 1 IN A 1"),
            warc_content_type="text/dns",
        )
    )
    store, summary = _ingest(tmp_path, a.close())
    pages = _pages(store)
    assert [(p["url"], p["status"], p["extra"]["warc_type"]) for p in pages] == [
        ("http://t.test/a", 200, "response"),
        ("http://t.test/shot", 200, "resource"),
    ]
    assert summary.skipped == {"warcinfo": 1, "request": 1, "metadata": 1}
    assert summary.reasons == {"not HTML text/dns": 1}
    store.close()


def test_truncated_records_are_kept_and_flagged(tmp_path):
    a = Archive(tmp_path / "trunc.warc.gz")
    html = _doc(1).encode()
    a.response("http://t.test/cut", html[: len(html) // 2], warc_headers={"WARC-Truncated": "length"})
    store, _ = _ingest(tmp_path, a.close())
    (p,) = _pages(store)
    assert p["extra"]["warc_truncated"] == "length" and p["html"] == html[: len(html) // 2].decode()
    store.close()


@pytest.mark.parametrize("gz", [False, True])
def test_a_bad_content_length_is_named_and_the_rest_loads(tmp_path, gz):
    """Record 3 claims 40 bytes more than it has, record 5 40 fewer (what grab-site and wget have written)."""
    out = bytearray()
    for i in range(6):
        buf = io.BytesIO()
        w = WARCWriter(buf, gzip=False)
        w.write_record(
            w.create_warc_record(
                f"http://b.test/{i}",
                "response",
                payload=io.BytesIO(_doc(i).encode()),
                http_headers=_http("200 OK", [("Content-Type", "text/html")]),
            )
        )
        data = buf.getvalue()
        change = {2: 40, 4: -40}.get(i, 0)
        if change:
            head, _, rest = data.partition(b"Content-Length: ")
            n, _, rest = rest.partition(b"\r\n")
            data = head + b"Content-Length: %d\r\n" % (int(n) + change) + rest
        out += gzip.compress(data) if gz else data
    path = tmp_path / ("bad.warc.gz" if gz else "bad.warc")
    path.write_bytes(bytes(out))
    store, summary = _ingest(tmp_path, path)
    urls = [p["url"] for p in _pages(store)]
    errors = _errors(store)
    assert "http://b.test/5" in urls and "http://b.test/0" in urls and "http://b.test/1" in urls, (
        urls,
        errors,
    )
    assert any(r.startswith("malformed record") and "reading resumed at offset" in r for _, r in errors), (
        errors
    )
    if not gz:  # the length is checked against where the next record starts
        bad = [r for _, r in errors if r.startswith("bad Content-Length")]
        assert len(bad) == 2 and "http://b.test/2" in bad[0] and "http://b.test/4" in bad[1], errors
        assert urls == ["http://b.test/0", "http://b.test/1", "http://b.test/3", "http://b.test/5"]
    store.close()


@pytest.mark.parametrize("gz", [False, True])
def test_a_file_cut_mid_record_keeps_the_records_before(tmp_path, gz):
    path = tmp_path / ("full.warc.gz" if gz else "full.warc")
    a = Archive(path, gz=gz)
    for i in range(4):
        a.response(f"http://x.test/{i}", _doc(i).encode())
    a.close()
    data = path.read_bytes()
    cut = tmp_path / path.name.replace("full", "cut")
    last = _offsets(path)["http://x.test/3"]
    cut.write_bytes(data[: last + (len(data) - last) // 2])
    store, summary = _ingest(tmp_path, cut)
    assert [p["url"] for p in _pages(store)] == ["http://x.test/0", "http://x.test/1", "http://x.test/2"]
    ((line, reason),) = _errors(store)
    assert line == 5 and (f"offset {last}" in reason or f"after offset {last}" in reason), reason
    store.close()


def test_a_warc_gzipped_as_one_stream_has_offsets_into_the_stream(tmp_path):
    plain = tmp_path / "one.warc"
    a = Archive(plain, gz=False)
    for i in range(3):
        a.response(f"http://o.test/{i}", _doc(i).encode())
    a.close()
    whole = tmp_path / "one.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    store, _ = _ingest(tmp_path, whole)
    pages = _pages(store)
    assert [p["extra"]["warc_offset"] for p in pages] == list(_offsets(plain).values())
    assert {p["extra"]["warc_offset_in"] for p in pages} == {"gunzipped stream"}
    store.close()


def _one_stream_with_far_revisits(tmp_path: Path, image: bool = False) -> Path:
    """A WARC gzipped as one stream: four responses (the third an image when `image`), then revisits of the
    third (twice), the fourth and the first, and a response between them."""
    plain = tmp_path / "old.warc"
    a = Archive(plain, gz=False)
    firsts = [
        a.response(f"http://r.test/{i}", _PNG, headers=[("Content-Type", "image/png")])
        if image and i == 2
        else a.response(f"http://r.test/{i}", _doc(i).encode())
        for i in range(4)
    ]

    def revisit(rec: Any, date: str) -> None:
        url = rec.rec_headers.get_header("WARC-Target-URI")
        r = a.w.create_revisit_record(
            url,
            rec.rec_headers.get_header("WARC-Payload-Digest"),
            url,
            "2026-03-01T00:00:00Z",
            http_headers=_http("200 OK", [("Content-Type", "text/html")]),
        )
        r.rec_headers.add_header("WARC-Refers-To", rec.rec_headers.get_header("WARC-Record-ID"))
        r.rec_headers.replace_header("WARC-Date", date)
        a.w.write_record(r)

    revisit(firsts[2], "2030-01-01T00:00:00Z")  # record 6
    revisit(firsts[3], "2030-01-02T00:00:00Z")  # record 7: of the record just before it
    a.response("http://r.test/late", _doc(9).encode())  # record 8
    revisit(firsts[0], "2030-01-03T00:00:00Z")  # record 9
    revisit(firsts[2], "2030-01-04T00:00:00Z")  # record 10: a second revisit of the same record
    a.close()
    whole = tmp_path / "old.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    return whole


_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def _second_passes(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The record numbers each second pass over a one-stream file is made for, as they happen."""
    passes: list[list[int]] = []
    deferred = warc.WarcBatches._deferred

    def counted(self: warc.WarcBatches, waiting: list[tuple[int, Any]]) -> Any:
        passes.append([number for number, _ in waiting])
        return deferred(self, waiting)

    monkeypatch.setattr(warc.WarcBatches, "_deferred", counted)
    return passes


def test_one_stream_revisits_of_records_read_long_before_are_copies_of_their_pages(tmp_path, monkeypatch):
    # In a file gzipped as one stream a record read long before cannot be sought: the ingest links the
    # revisits of records no longer kept to the pages those records made, once they are stored, each revisit
    # with its own number, and the stream is inflated once.
    monkeypatch.setattr(warc, "RECENT_BYTES", 1)  # no record is kept for the revisits
    passes = _second_passes(monkeypatch)
    store, summary = _ingest(tmp_path, _one_stream_with_far_revisits(tmp_path))
    pages = {p["line"]: p for p in _pages(store)}
    page_id = dict(store.cursor().execute("SELECT line, page_id FROM pages").fetchall())
    assert sorted(pages) == [2, 3, 4, 5, 6, 7, 8, 9, 10]
    for line, original in ((6, 4), (7, 5), (9, 2), (10, 4)):
        extra = pages[line]["extra"]
        assert extra["warc_type"] == "revisit"
        assert pages[line]["html"] == pages[original]["html"] and pages[line]["md5"] == pages[original]["md5"]
        assert extra["refers_to_offset"] == pages[original]["extra"]["warc_offset"]
        assert extra["refers_to_record_id"] == pages[original]["extra"]["warc_record_id"]
        assert extra["refers_to_page_id"] == page_id[original] and extra["refers_to_file"] == "old.warc.gz"
        assert (extra["charset"], extra["charset_source"]) == (
            pages[original]["extra"]["charset"],
            pages[original]["extra"]["charset_source"],
        )
    assert summary.revisits == 4 and summary.loaded == 9 and summary.errors == 0
    assert passes == []
    store.close()


def test_held_revisits_load_alike_in_workers_and_in_this_process(tmp_path, monkeypatch):
    # Many held revisits go to the workers (through shared memory), a few are read in the ingest's process:
    # the same pages either way.
    from neardup import engine
    from neardup.config import Config
    from neardup.stages import ingest as ingest_stage
    from neardup.store import Store

    monkeypatch.setattr(warc, "RECENT_BYTES", 1)
    monkeypatch.setattr(ingest_stage, "PARALLEL_BYTES", 0)  # a small file goes to the workers too
    path = _one_stream_with_far_revisits(tmp_path)
    loads = []
    for parallel_min in (1, 1 << 20):
        monkeypatch.setattr(ingest_stage, "PARALLEL_MIN", parallel_min)
        with Store(tmp_path / f"p{parallel_min}.duckdb") as store:
            summary = engine.ingest_file(store, path, Config(), jobs=2)
            loads.append((_pages(store), _errors(store), summary.loaded, summary.revisits))
    assert loads[0] == loads[1] and loads[0][2:] == (9, 4)


def test_held_revisits_read_their_pages_a_batch_at_a_time(tmp_path, monkeypatch):
    # Held revisits may be many (a de-duplicating crawl gzipped whole): the pages they copy are read a batch
    # of revisits at a time, not all into memory at once.
    from neardup.readers.capture import StoredPage

    monkeypatch.setattr(warc, "RECENT_BYTES", 1)
    calls: list[list[int]] = []

    def source_pages(numbers: list[int]) -> dict[int, StoredPage]:
        calls.append(numbers)
        return {n: StoredPage(100 + n, f"<html><p>page {n}</p></html>", 200, {}) for n in numbers}

    reader = warc.WarcBatches(
        _one_stream_with_far_revisits(tmp_path), batch_records=2, source_pages=source_pages
    )
    assert sum(len(batch) for batch in reader) == 5 and reader.n_held == 4
    linked = [raw for batch in reader.held_revisits() for raw in batch]
    assert [raw.line for raw in linked] == [6, 7, 9, 10]
    assert [raw.payload.stored.page_id for raw in linked] == [104, 105, 102, 104]
    assert calls == [[4, 5], [2, 4]] and reader.revisits == 4


def test_one_stream_revisits_read_without_a_store_are_linked_by_a_second_pass(tmp_path, monkeypatch):
    # The reader alone (Spark's executors read files so) links them by inflating the stream again, to the
    # same HTML as the ingest's copies of the stored pages.
    monkeypatch.setattr(warc, "RECENT_BYTES", 1)
    passes = _second_passes(monkeypatch)
    path = _one_stream_with_far_revisits(tmp_path)
    pages = {raw.line: raw.payload.record() for raw in warc.WarcBatches(path).records()}
    assert passes == [[6, 7, 9, 10]]
    store, _ = _ingest(tmp_path, path)
    stored = {p["line"]: p for p in _pages(store)}
    for line in (6, 7, 9, 10):
        assert pages[line]["html"] == stored[line]["html"]
    store.close()


def test_a_far_revisit_of_a_record_that_is_not_html_is_rejected_as_the_record_is(tmp_path, monkeypatch):
    # The image made no page: its two revisits are read again from the stream (that pass made for them
    # alone) and rejected as it is; the first response's revisit is a copy of its page.
    monkeypatch.setattr(warc, "RECENT_BYTES", 1)
    passes = _second_passes(monkeypatch)
    store, summary = _ingest(tmp_path, _one_stream_with_far_revisits(tmp_path, image=True))
    errors = dict(_errors(store))
    assert sorted(errors) == [4, 6, 10]
    assert all(errors[n].startswith("not HTML image/png") for n in (4, 6, 10)), errors
    assert sorted(p["line"] for p in _pages(store)) == [2, 3, 5, 7, 8, 9]
    assert passes == [[6, 10]] and summary.revisits == 2  # the revisits loaded
    store.close()


def test_detection_by_magic_bytes_not_names(tmp_path):
    a = Archive(tmp_path / "real.warc.gz")
    a.response("http://d.test/a", _doc(1).encode())
    a.close()
    disguised = tmp_path / "really-gzip.warc"
    disguised.write_bytes((tmp_path / "real.warc.gz").read_bytes())
    assert detect_format(disguised) == "warc"
    no_name = tmp_path / "dump.bin"
    no_name.write_bytes(disguised.read_bytes())
    assert detect_format(no_name) == "warc"
    fake = tmp_path / "fake.warc"
    fake.write_text("<html>not a warc</html>")
    with pytest.raises(NotACrawlDump, match="named .warc but not a WARC file"):
        detect_format(fake)
    fake_gz = tmp_path / "fake.warc.gz"
    fake_gz.write_bytes(gzip.compress(b"hello"))
    with pytest.raises(NotACrawlDump, match="not a WARC file"):
        detect_format(fake_gz)


def test_wet_conversion_records_are_text_pages(tmp_path):
    path = tmp_path / "crawl.warc.wet.gz"
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        w.write_record(w.create_warcinfo_record(path.name, {"software": "wet"}))
        for i in range(3):
            text = words_text(random.Random(i), 150).encode()
            w.write_record(
                w.create_warc_record(
                    f"http://w.test/{i}",
                    "conversion",
                    payload=io.BytesIO(text),
                    warc_content_type="text/plain",
                )
            )
    raws = list(read_raw(path, detect_format(path)))
    recs = [validate(r) for r in raws]
    assert [r["url"] for r in recs] == [f"http://w.test/{i}" for i in range(3)]
    assert all(r["html"] is None and r["text_in"] for r in recs)
    store, summary = _ingest(tmp_path, path)
    assert summary.loaded == 3 and summary.skipped == {"warcinfo": 1}
    store.close()


def test_a_warcio_warc_reports_as_its_jsonl_form(tmp_path):
    """Copies, near copies, a revisit, encodings and charsets: the WARC and the JSON lines of the same
    fetches give the same report."""
    rng = random.Random(3)
    docs = [page_html(f"Doc {i}", words_text(rng, 220)) for i in range(8)]
    docs.append(docs[2].replace("</p>", " One more closing sentence here.</p>", 1))
    a = Archive(tmp_path / "same.warc.gz")
    lines = []
    for i, html in enumerate(docs + [docs[0], docs[1]]):
        url = f"http://s.test/{i}"
        date = f"2026-03-0{1 + i % 9}T10:00:00Z"
        if i % 3 == 0:
            body, headers = (
                gzip.compress(html.encode("cp1252")),
                [("Content-Type", "text/html; charset=windows-1252"), ("Content-Encoding", "gzip")],
            )
        else:
            body, headers = html.encode(), [("Content-Type", "text/html")]
        a.response(url, body, headers=headers, warc_headers={"WARC-Date": date})
        lines.append({"url": url, "html": html, "fetched_at": date, "status": 200})
    a.close()
    jsonl = tmp_path / "same.jsonl"
    jsonl.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    ws, _ = _ingest(tmp_path, a.path, "w.duckdb")
    js, _ = _ingest(tmp_path, jsonl, "j.duckdb")
    w, j = _numbers(ws), _numbers(js)
    assert w["numbers"] == j["numbers"] and w["numbers"]["byte_identical_duplicates"] == 2
    assert w["numbers"]["near_duplicates"] >= 1
    ws.close()
    js.close()


@pytest.mark.parametrize("writer", ["Lz4Writer", "ZstdWriter"])
def test_lz4_and_zstandard_warcs_are_read(tmp_path, writer):
    """FastWARC reads WARCs compressed with LZ4 or Zstandard; one frame holding several records gives them
    no offsets of their own."""
    from fastwarc import stream_io

    plain = tmp_path / "p.warc"
    a = Archive(plain, gz=False)
    for i in range(3):
        a.response(f"http://z.test/{i}", _doc(i).encode())
    a.close()
    path = tmp_path / "p.warc.lz4"
    with open(path, "wb") as f:
        w = getattr(stream_io, writer)(f)
        w.write(plain.read_bytes())
        w.close()
    assert detect_format(path) == "warc"
    store, summary = _ingest(tmp_path, path)
    pages = _pages(store)
    assert [p["url"] for p in pages] == [f"http://z.test/{i}" for i in range(3)]
    assert all("warc_offset" not in p["extra"] for p in pages) and summary.skipped == {"warcinfo": 1}
    store.close()


def test_a_target_uri_keeps_its_angle_brackets_unless_it_is_wrapped_in_a_pair(tmp_path):
    # WARC 1.0 wrote WARC-Target-URI as `<uri>`; a URL of WARC 1.1 may itself end in `>` (a crawled href
    # with a stray bracket), which is part of it.
    a = Archive(tmp_path / "brackets.warc.gz")
    a.response("http://b.test/q?x=a>", _doc(1).encode())
    a.response("<http://b.test/wrapped>", _doc(2).encode())
    a.response("http://b.test/<i>x</i>", _doc(3).encode())
    store, _ = _ingest(tmp_path, a.close())
    assert [p["url"] for p in _pages(store)] == [
        "http://b.test/q?x=a>",
        "http://b.test/wrapped",
        "http://b.test/<i>x</i>",
    ]
    store.close()
