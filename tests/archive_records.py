"""Web archives written for the reader tests (WARC by warcio, an independent writer; pages with known text),
and what an ingest of one leaves in a fresh database."""

from __future__ import annotations

import io
import json
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from conftest import page_html, words_text
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from neardup import engine
from neardup.analysis import analyze, load_fingerprints
from neardup.config import Config
from neardup.errors import NotACrawlDump
from neardup.rejects import RejectKind
from neardup.report import report_dict
from neardup.store import Store


def _ingest(tmp_path: Path, path: Path, name: str = "db.duckdb") -> tuple[Store, engine.FileSummary]:
    store = Store(tmp_path / name)
    return store, engine.ingest_file(store, path, Config(), jobs=1)


def _pages(store: Store) -> list[dict[str, Any]]:
    df = store.cursor().execute("SELECT page_id, line, url, status, md5, extra FROM pages ORDER BY line").df()
    html = {
        r["page_id"]: r["html"]
        for t in store.page_records(np.sort(df["page_id"].to_numpy()), 256)
        for r in t.to_pylist()
    }
    df["html"] = df["page_id"].map(html)  # the raw HTML is read through the store
    rows = df.drop(columns="page_id").to_dict(orient="records")
    for r in rows:
        r["extra"] = json.loads(r["extra"]) if r["extra"] else {}
    return rows


def _errors(store: Store) -> list[tuple[int, str]]:
    errors = store.ingest_errors()
    # each reject is stored with its kind, the words its reason begins with
    assert all(r.startswith(RejectKind(k)) for k, r in zip(errors["kind"], errors["reason"], strict=True))
    return [(int(r.line), r.reason) for r in errors.itertuples()]


def _numbers(store: Store) -> dict[str, Any]:
    config = Config()
    return report_dict(analyze(load_fingerprints(store, config, jobs=1), config))


# --- edge cases written with warcio ---------------------------------------------------------------
def _http(status: str, headers: list[tuple[str, str]]) -> StatusAndHeaders:
    return StatusAndHeaders(status, headers, protocol="HTTP/1.1")


class Archive:
    """A WARC written with warcio, record by record."""

    def __init__(self, path: Path, *, gz: bool = True) -> None:
        self.path = path
        self.f = open(path, "wb")  # noqa: SIM115
        self.w = WARCWriter(self.f, gzip=gz)
        self.w.write_record(self.w.create_warcinfo_record(path.name, {"software": "neardup tests"}))

    def response(
        self,
        url: str,
        body: bytes,
        *,
        status: str = "200 OK",
        headers: list[tuple[str, str]] | None = None,
        warc_headers: dict[str, str] | None = None,
        length: int | None = None,
    ) -> Any:
        rec = self.w.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            length=length,
            http_headers=_http(status, [("Content-Type", "text/html")] if headers is None else headers),
            warc_headers_dict=warc_headers or {},
        )
        self.w.write_record(rec)
        return rec

    def close(self) -> Path:
        self.f.close()
        return self.path


def _doc(i: int, rng: random.Random | None = None) -> str:
    return page_html(f"Page {i}", words_text(rng or random.Random(i), 200))


IDENTICAL_PAYLOAD = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def _heritrix_revisit(a: Archive, original: Any, date: str, *, url: str | None = None) -> Any:
    """A revisit as Heritrix 3 writes one in a later file of a de-duplicating crawl: the identical-payload
    profile, the original's URL and date (WARC-Refers-To-Target-URI / -Date), its payload digest, and
    no WARC-Refers-To (the record id is in another file)."""
    h = original.rec_headers
    rec = a.w.create_revisit_record(
        url or h.get_header("WARC-Target-URI"),
        h.get_header("WARC-Payload-Digest"),
        h.get_header("WARC-Target-URI"),
        h.get_header("WARC-Date"),
        http_headers=_http("200 OK", [("Content-Type", "text/html")]),
    )
    assert rec.rec_headers.get_header("WARC-Profile") == IDENTICAL_PAYLOAD
    rec.rec_headers.replace_header("WARC-Date", date)
    a.w.write_record(rec)
    return rec


def ingest_hostile(data: bytes, name: str) -> None:
    """Ingest `data` into a fresh database: loaded (every reject of a named kind) or refused with
    NotACrawlDump; nothing else may escape."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        store = Store(str(Path(tmp) / "db.duckdb"))
        try:
            engine.ingest_file(store, path, Config(), jobs=1)
        except NotACrawlDump:
            return
        finally:
            store.close()
        store = Store(str(Path(tmp) / "db.duckdb"))
        assert set(store.ingest_errors()["kind"]) <= {str(k) for k in RejectKind}
        store.close()
