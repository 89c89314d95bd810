"""Write the archive corpus of this folder (see PROVENANCE.md): run from the repository root with
`python tests/data/archives/make_corpus.py`. It needs wget (a real crawler) and warcio.

- `wget-1.21.warc.gz`: wget crawls a small site served on 127.0.0.1 (per-page charsets in the HTTP
  header, in <meta>, or nowhere) and writes its WARC as it writes any.
- `warcio-*.warc*`: the same pages written by warcio (pywb's and Webrecorder's WARC writer), with a
  chunked and a gzip-encoded response, a revisit, request and metadata records and a `dns:` resource.
- `heritrix-layout-v1.arc.gz`, `heritrix-layout-v1.arc`, `alexa-layout-v2.arc`, `onestream-v1.arc.gz`: ARC
  files laid out byte for byte as Heritrix 1.14 (version 1, one gzip member per record, the XML
  `arcmetadata` file header) and Alexa (version 2, ten fields) write them; no ARC writer is packaged.
- `webrecorder-layout.wacz`, `early-layout.wacz`: WACZ files laid out as py-wacz / ArchiveWeb.page
  write them (`archive/`, `pages/pages.jsonl`, `pages/extraPages.jsonl`, `indexes/`,
  `datapackage.json`, `datapackage-digest.json`), and the early layout under `data/`.

`PAGES` is what the corpus test checks each page's text against.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import http.server
import io
import json
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

HERE = Path(__file__).parent

# path -> (Content-Type header, body bytes, a phrase the decoded page must hold)
_JA = "日本語のページです。東京の天気は晴れ、気温は二十度でした。" * 8
_ZH = "这是一个中文网页。北京今天天气很好，我们去公园散步。" * 8
_RU = "Это русская страница о погоде в Москве. Сегодня солнечно и тепло, мы гуляли в парке. " * 8
_DE = "Grüße aus Köln: schöne Äpfel und süße Brötchen über den Flüssen. " * 8
_EN = "A plain page about the weather, in English words only, for the index of the site. " * 8
_WORDS = [
    "river",
    "harbour",
    "market",
    "bridge",
    "council",
    "museum",
    "garden",
    "station",
    "library",
    "theatre",
    "school",
    "village",
    "forest",
    "mountain",
    "valley",
    "lake",
    "island",
    "coast",
    "festival",
    "harvest",
    "winter",
    "summer",
    "autumn",
    "spring",
    "morning",
    "evening",
    "painter",
    "writer",
    "baker",
    "farmer",
    "sailor",
    "doctor",
    "teacher",
    "builder",
    "singer",
    "walker",
    "reader",
    "keeper",
]
_STORY = " ".join(_WORDS[(i * 7 + i // 5) % len(_WORDS)] for i in range(400))
# the same article with one sentence changed: a near duplicate for the audit
_STORY_EDITED = _STORY.replace(_STORY[800:860], "the council closed the old bridge for repairs this week")


def _html(title: str, body: str, head: str = "") -> str:
    return (
        f"<!DOCTYPE html><html><head>{head}<title>{title}</title></head>"
        f"<body><main><article><h1>{title}</h1><p>{body}</p></article></main></body></html>"
    )


PAGES: dict[str, tuple[str, bytes, str]] = {
    "/index.html": (
        "text/html; charset=utf-8",
        _html(
            "Index",
            _EN
            + "".join(
                f"<a href='{p}'>{p}</a> "
                for p in (
                    "/ja.html",
                    "/zh.html",
                    "/ru.html",
                    "/de.html",
                    "/copy/de.html",
                    "/news/a.html",
                    "/news/a-print.html",
                )
            )
            + "<img src='/logo.png'>",
        ).encode(),
        "weather, in English words only",
    ),
    "/ja.html": (
        "text/html",
        _html("日本語", _JA, "<meta charset='EUC-JP'>").encode("euc-jp"),
        "東京の天気は晴れ",
    ),
    "/zh.html": ("text/html; charset=gbk", _html("中文", _ZH).encode("gbk"), "北京今天天气很好"),
    "/ru.html": ("text/html", _html("Погода", _RU).encode("cp1251"), "Сегодня солнечно и тепло"),
    "/de.html": (
        "text/html",
        _html("Köln", _DE, "<meta http-equiv='Content-Type' content='text/html; charset=iso-8859-1'>").encode(
            "iso-8859-1"
        ),
        "süße Brötchen",
    ),
    "/copy/de.html": (
        "text/html",
        _html("Köln", _DE, "<meta http-equiv='Content-Type' content='text/html; charset=iso-8859-1'>").encode(
            "iso-8859-1"
        ),
        "süße Brötchen",
    ),
    "/news/a.html": ("text/html; charset=utf-8", _html("News", _STORY, "").encode(), _STORY[:40]),
    "/news/a-print.html": (
        "text/html; charset=utf-8",
        _html("News", _STORY_EDITED).encode(),
        "repairs this week",
    ),
    "/logo.png": ("image/png", b"\x89PNG\r\n\x1a\n" + bytes(120), ""),
}
DATE14 = "20240305101500"
ISO = "2024-03-05T10:15:00Z"


# --- wget ----------------------------------------------------------------------------------------
class _Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        page = PAGES.get(self.path)
        if page is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", page[0])
        self.send_header("Content-Length", str(len(page[1])))
        self.end_headers()
        self.wfile.write(page[1])

    def log_message(self, *args: object) -> None:
        pass


def write_wget(out: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [
                    "wget",
                    "--recursive",
                    "--level=2",
                    "--page-requisites",
                    "-e",
                    "robots=off",
                    "--quiet",
                    f"--directory-prefix={tmp}/mirror",
                    f"--warc-file={tmp}/crawl",
                    f"http://127.0.0.1:{port}/index.html",
                ],
                check=False,
                timeout=60,
            )
            (out / "wget-1.21.warc.gz").write_bytes(Path(f"{tmp}/crawl.warc.gz").read_bytes())
    finally:
        server.shutdown()


# --- warcio --------------------------------------------------------------------------------------
def _http_block(path: str, *, chunked: bool = False, encoded: bool = False) -> tuple[StatusAndHeaders, bytes]:
    ctype, body, _ = PAGES[path]
    headers = [("Content-Type", ctype), ("Date", "Tue, 05 Mar 2024 10:15:00 GMT")]
    if encoded:
        body = gzip.compress(body, mtime=0)
        headers.append(("Content-Encoding", "gzip"))
    if chunked:
        body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (body[:100], body[100:])) + b"0\r\n\r\n"
        headers.append(("Transfer-Encoding", "chunked"))
    else:
        headers.append(("Content-Length", str(len(body))))
    return StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1"), body


def _warcio_records(w: WARCWriter, base: str, paths: list[str], *, revisit: str | None = None) -> None:
    w.write_record(w.create_warcinfo_record("crawl.warc.gz", {"software": "warcio", "format": "WARC/1.0"}))
    w.write_record(
        w.create_warc_record(
            "dns:example.org",
            "resource",
            payload=io.BytesIO(b"20240305101500\nexample.org. 300 IN A 192.0.2.1\n"),
            warc_content_type="text/dns",
        )
    )
    for i, path in enumerate(paths):
        url = base + path
        req = StatusAndHeaders(f"GET {path} HTTP/1.1", [("Host", base.split("//")[1])], is_http_request=True)
        w.write_record(w.create_warc_record(url, "request", payload=io.BytesIO(b""), http_headers=req))
        http, body = _http_block(path, chunked=i == 1, encoded=i == 2)
        rec = w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http)
        rec.rec_headers.replace_header("WARC-Date", ISO)
        w.write_record(rec)
    if revisit is not None:
        url = base + revisit
        _, body, _ = PAGES[revisit]
        digest = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
        http = StatusAndHeaders("200 OK", [("Content-Type", PAGES[revisit][0])], protocol="HTTP/1.1")
        w.write_record(
            w.create_revisit_record(url + "?again", digest, base + revisit, ISO, http_headers=http)
        )
    w.write_record(
        w.create_warc_record(
            base + paths[0], "metadata", payload=io.BytesIO(b"outlinks: 5\n"), warc_content_type="text/plain"
        )
    )


def write_warcio(out: Path) -> None:
    base = "http://site.example"
    for name, gz in (("warcio-per-record.warc.gz", True), ("warcio-plain.warc", False)):
        buf = io.BytesIO()
        _warcio_records(WARCWriter(buf, gzip=gz), base, list(PAGES), revisit="/de.html")
        (out / name).write_bytes(buf.getvalue())


# --- ARC -----------------------------------------------------------------------------------------
_ARC_XML = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<arcmetadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
    'xmlns:arc="http://archive.org/arc/1.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xmlns="http://archive.org/arc/1.0/" xsi:schemaLocation="http://archive.org/arc/1.0/ '
    'http://www.archive.org/arc/1.0/arc.xsd">\n'
    "<arc:software>Heritrix 1.14.4 http://crawler.archive.org</arc:software>\n"
    "<arc:hostname>crawler.example</arc:hostname>\n"
    "<arc:ip>192.0.2.10</arc:ip>\n"
    "<dcterms:isPartOf>corpus</dcterms:isPartOf>\n"
    "<dc:description>neardup test corpus</dc:description>\n"
    "<arc:operator>Admin</arc:operator>\n"
    '<ns0:date xmlns:ns0="http://purl.org/dc/elements/1.1/" xsi:type="dcterms:W3CDTF">'
    "2024-03-05T10:15:00+00:00</ns0:date>\n"
    "<arc:http-header-user-agent>Mozilla/5.0 (compatible; heritrix/1.14.4)</arc:http-header-user-agent>\n"
    "<arc:robots>obey</arc:robots>\n"
    "<dc:format>ARC file version 1.1</dc:format>\n"
    '<dcterms:conformsTo xsi:type="dcterms:URI">http://www.archive.org/web/researcher/ArcFileFormat.php'
    "</dcterms:conformsTo>\n"
    "</arcmetadata>\n"
)


def _raw_http(path: str, *, chunked: bool = False, encoded: bool = False) -> bytes:
    http, body = _http_block(path, chunked=chunked, encoded=encoded)
    return http.to_bytes() + body


def _arc_records(base: str) -> list[tuple[str, str, str, bytes]]:
    """(url, ip, content type, block): what Heritrix 1 wrote for a crawl: the DNS lookup, robots.txt,
    the pages as received (chunked, gzip-encoded), an image, a 404, a URL with a space."""
    records = [
        (
            "dns:site.example",
            "192.0.2.53",
            "text/dns",
            b"20240305101500\nsite.example.\t300\tIN\tA\t192.0.2.1\n",
        ),
        (
            base + "/robots.txt",
            "192.0.2.1",
            "text/plain",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n\r\nUser-agent: *\nDisallow:\n\n",
        ),
    ]
    for i, path in enumerate(PAGES):
        records.append(
            (
                base + path,
                "192.0.2.1",
                PAGES[path][0].split(";")[0],
                _raw_http(path, chunked=i == 1, encoded=i == 2),
            )
        )
    records.append(
        (
            base + "/gone page.html",
            "192.0.2.1",
            "text/html",
            b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<html><body><h1>Not found</h1></body></html>",
        )
    )
    return records


def write_arcs(out: Path) -> None:
    base = "http://site.example"
    name = "heritrix-layout-v1.arc"
    desc = (
        f"1 1 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n{_ARC_XML}".encode()
    )
    v1 = [f"filedesc://{name} 0.0.0.0 {DATE14} text/plain {len(desc)}\n".encode() + desc + b"\n"]
    for url, ip, mime, block in _arc_records(base):
        v1.append(f"{url} {ip} {DATE14} {mime} {len(block)}\n".encode() + block + b"\n")
    (out / name).write_bytes(b"".join(v1))
    (out / (name + ".gz")).write_bytes(b"".join(gzip.compress(r, mtime=0) for r in v1))
    (out / "onestream-v1.arc.gz").write_bytes(gzip.compress(b"".join(v1), mtime=0))

    name2 = "alexa-layout-v2.arc"
    desc2 = (
        b"2 0 Alexa Internet\nURL IP-address Archive-date Content-type Result-code Checksum Location "
        b"Offset Filename Archive-length\n"
    )
    v2 = [f"filedesc://{name2} 0.0.0.0 {DATE14} text/plain {len(desc2)}\n".encode() + desc2 + b"\n"]
    offset = len(v2[0])
    for url, ip, mime, block in _arc_records(base):
        code = block.split(b" ", 2)[1].decode() if block.startswith(b"HTTP/") else "-"
        md5 = hashlib.md5(block).hexdigest()
        rec = (
            f"{url} {ip} {DATE14} {mime} {code} {md5} - {offset} {name2} {len(block)}\n".encode()
            + block
            + b"\n"
        )
        v2.append(rec)
        offset += len(rec)
    (out / name2).write_bytes(b"".join(v2))


# --- WACZ ----------------------------------------------------------------------------------------
def _zip(out: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 3, 5, 10, 15, 0))
            # WARCs are stored (already gzipped, and a replay reads them by offset), the rest deflated
            info.compress_type = zipfile.ZIP_STORED if name.endswith(".gz") else zipfile.ZIP_DEFLATED
            z.writestr(info, data)


def _datapackage(members: dict[str, bytes]) -> dict[str, bytes]:
    resources = [
        {"name": Path(n).name, "path": n, "hash": "sha256:" + hashlib.sha256(d).hexdigest(), "bytes": len(d)}
        for n, d in members.items()
    ]
    package = json.dumps(
        {
            "profile": "data-package",
            "resources": resources,
            "created": ISO,
            "wacz_version": "1.1.1",
            "software": "neardup test corpus (py-wacz layout)",
            "title": "corpus",
        },
        indent=2,
    ).encode()
    digest = json.dumps(
        {"path": "datapackage.json", "hash": "sha256:" + hashlib.sha256(package).hexdigest()}, indent=2
    ).encode()
    return {**members, "datapackage.json": package, "datapackage-digest.json": digest}


def write_waczs(out: Path) -> None:
    base = "https://site.example"
    paths = list(PAGES)
    warcs = {}
    for i, part in enumerate((paths[:4], paths[4:])):
        buf = io.BytesIO()
        _warcio_records(WARCWriter(buf, gzip=True), base, part, revisit=part[0] if i else None)
        warcs[f"archive/rec-2024030510150{i}-corpus.warc.gz"] = buf.getvalue()
    header = json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "All Pages"})
    seeds = [header] + [
        json.dumps({"id": f"p{i}", "url": base + p, "ts": ISO, "title": p})
        for i, p in enumerate([*paths[:2], "/news/a.html"])
    ]
    extra = [json.dumps({"format": "json-pages-1.0", "id": "extra-pages", "title": "Extra Pages"})] + [
        json.dumps({"id": f"e{i}", "url": base + p, "ts": ISO}) for i, p in enumerate(paths[2:4])
    ]
    cdxj = "".join(
        f"example,site){p} {DATE14} "
        + json.dumps(
            {"url": base + p, "mime": PAGES[p][0].split(";")[0], "status": "200", "filename": Path(n).name}
        )
        + "\n"
        for n, part in zip(warcs, (paths[:4], paths[4:]), strict=True)
        for p in part
    )
    members = {
        **warcs,
        "pages/pages.jsonl": ("\n".join(seeds) + "\n").encode(),
        "pages/extraPages.jsonl": ("\n".join(extra) + "\n").encode(),
        "indexes/index.cdxj": "".join(sorted(cdxj.splitlines(keepends=True))).encode(),
    }
    _zip(out / "webrecorder-layout.wacz", _datapackage(members))

    buf = io.BytesIO()
    _warcio_records(WARCWriter(buf, gzip=False), base, paths[:3])
    early = {
        "data/archive/example-collection.warc": buf.getvalue(),
        "data/pages/pages.jsonl": seeds_bytes(seeds),
    }
    _zip(out / "early-layout.wacz", _datapackage(early))


def seeds_bytes(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    HERE.mkdir(parents=True, exist_ok=True)
    write_wget(HERE)
    write_warcio(HERE)
    write_arcs(HERE)
    write_waczs(HERE)


if __name__ == "__main__":
    sys.exit(main())
