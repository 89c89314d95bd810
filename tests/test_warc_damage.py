"""Damaged WARC files: a one-stream WARC.gz cut short or corrupt, decompression bombs inside records,
bad Content-Lengths in old WARC versions, LF-only headers, rejects that name where they are."""

from __future__ import annotations

import gzip
import io
import re
import zlib
from functools import cache
from pathlib import Path

import pytest
from archive_records import Archive, _doc, _errors, _http, _ingest, _pages
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from neardup import engine
from neardup.config import Config
from neardup.errors import NotACrawlDump
from neardup.readers.capture import WarcCapture
from neardup.readers.warc import WarcBatches
from neardup.rejects import RejectKind
from neardup.store import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_WARC = ROOT / "sample_data" / "crawl.warc.gz"
PAGE_TYPES = ("response", "resource", "revisit", "conversion")


@cache
def _sample_records() -> list[tuple[int, int, str]]:
    """(offset, end of the block, WARC-Type) of every record of the sample's gunzipped stream, by warcio."""
    out = []
    with gzip.open(SAMPLE_WARC) as f:
        it = WarcioIterator(f)
        for rec in it:
            offset = it.get_record_offset()
            rec.raw_stream.read()
            # warcio's record length counts the CRLF CRLF after the block
            out.append((offset, offset + it.get_record_length() - 4, rec.rec_type))
    return out


def _inflatable(data: bytes) -> int:
    """How many bytes of the gunzipped stream a cut gzip file gives."""
    d = zlib.decompressobj(wbits=31)
    n = 0
    for i in range(0, len(data), 1 << 20):
        n += len(d.decompress(data[i : i + (1 << 20)]))
    return n


@pytest.mark.parametrize("percent", range(5, 100, 5))
def test_a_one_stream_warc_cut_anywhere_keeps_every_record_before_the_cut(tmp_path, percent):
    data = SAMPLE_WARC.read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) * percent // 100])
    stream_end = _inflatable(cut.read_bytes())
    whole = {off for off, end, kind in _sample_records() if kind in PAGE_TYPES and end <= stream_end}
    reader = WarcBatches(cut)
    records = list(reader.records())
    read = {r.payload.offset for r in records if isinstance(r.payload, WarcCapture)}
    rejects = [r.payload for r in records if not isinstance(r.payload, WarcCapture)]
    assert read == whole
    (reject,) = rejects
    assert reject.kind == RejectKind.TRUNCATED_FILE
    assert f"ends at byte {len(data) * percent // 100:,}" in reject.detail
    # the offset in the gunzipped stream where reading stopped (ISA-L may hold back a few bytes of a cut
    # stream that zlib gives): no complete record lies beyond it
    m = re.search(r"stops at offset (\d+)", reject.detail)
    assert m is not None and stream_end - 64 <= int(m.group(1)) <= stream_end


def test_a_cut_one_stream_warc_loads_its_complete_pages_and_names_the_cut(tmp_path):
    plain = tmp_path / "three.warc"
    a = Archive(plain, gz=False)
    for i in range(3):
        a.response(f"http://c.test/{i}", _doc(i).encode())
    a.close()
    data = gzip.compress(plain.read_bytes())
    cut = tmp_path / "three.warc.gz"
    cut.write_bytes(data[:-12])  # the CRC and size trailer, and a little of the last deflate block
    store, summary = _ingest(tmp_path, cut)
    urls = [p["url"] for p in _pages(store)]
    assert urls[:2] == ["http://c.test/0", "http://c.test/1"]
    ((line, reason),) = _errors(store)
    assert reason.startswith("truncated compressed file") and "ends at byte" in reason
    assert summary.broken == reason
    store.close()


def test_a_one_stream_warc_with_one_flipped_byte_loads_no_page_after_it(tmp_path):
    data = bytearray(SAMPLE_WARC.read_bytes())
    data[len(data) * 30 // 100] ^= 0xFF
    bad = tmp_path / "flipped.warc.gz"
    bad.write_bytes(bytes(data))
    store = Store(tmp_path / "db.duckdb")
    with pytest.raises(NotACrawlDump) as exc:
        engine.ingest_file(store, bad, Config(), jobs=1)
    (line,) = str(exc.value).splitlines()
    assert "corrupt compressed file" in line and "nothing loaded" in line
    assert store.count_pages() == 0
    store.close()


def test_a_one_stream_warc_failing_its_crc_keeps_none_of_its_records(tmp_path):
    plain = tmp_path / "crc.warc"
    a = Archive(plain, gz=False)
    for i in range(3):
        a.response(f"http://k.test/{i}", _doc(i).encode())
    a.close()
    data = bytearray(gzip.compress(plain.read_bytes()))
    data[-8] ^= 0x01  # the CRC-32 of the trailer: every deflate block inflates, the check fails
    bad = tmp_path / "crc.warc.gz"
    bad.write_bytes(bytes(data))
    records = list(WarcBatches(bad).records())
    assert records[-1].payload.kind == RejectKind.CORRUPT_FILE  # type: ignore[union-attr]
    assert "none of its records are loaded" in records[-1].payload.detail  # type: ignore[union-attr]
    store = Store(tmp_path / "db.duckdb")
    with pytest.raises(NotACrawlDump, match="corrupt compressed file"):
        engine.ingest_file(store, bad, Config(), jobs=1)
    assert store.count_pages() == 0
    store.close()


def test_a_cut_inside_a_metadata_record_is_reported(tmp_path):
    path = tmp_path / "meta.warc"
    a = Archive(path, gz=False)
    a.response("http://m.test/0", _doc(0).encode())
    a.w.write_record(
        a.w.create_warc_record("http://m.test/0", "metadata", payload=io.BytesIO(b"outlink: x\r\n" * 400))
    )
    a.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 1000])
    store, summary = _ingest(tmp_path, path)
    assert [p["url"] for p in _pages(store)] == ["http://m.test/0"]
    ((line, reason),) = _errors(store)
    assert reason.startswith("record cut off: metadata record") and "offset" in reason
    assert summary.errors == 1
    store.close()


def _http_block(body: bytes, headers: list[tuple[str, str]]) -> bytes:
    return _http("200 OK", headers).to_bytes() + body


# --- decompression bombs inside records -----------------------------------------------------------
_PEAK_PROBE = """
import resource, sys, json
from pathlib import Path
from neardup.records import validate
from neardup.readers.capture import WarcCapture
from neardup.readers.warc import WarcBatches
(raw,) = [r for r in WarcBatches(Path(sys.argv[1])).records() if isinstance(r.payload, WarcCapture)]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rec = validate(raw)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"reason": getattr(rec, "detail", None), "grew_kb": after - before}))
"""


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "gzip, gzip"])
def test_a_content_encoding_bomb_is_inflated_only_to_the_page_limit(tmp_path, coding):
    """A 200 MB page in a few hundred KB (1,000x): rejected as too large, with the peak memory of the
    process that decodes it growing by a small part of that (the limit is 16 MB of bytes)."""
    import json
    import subprocess
    import sys

    from bombs import bomb

    body = bomb(coding, 200)
    assert len(body) < 400_000
    path = tmp_path / "bomb.warc.gz"
    a = Archive(path)
    a.response(
        "http://bomb.test/",
        body,
        headers=[("Content-Type", "text/html"), ("Content-Encoding", coding)],
    )
    a.close()
    env = {"PYTHONPATH": f"{ROOT}", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_PROBE, str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["reason"].startswith(f"page too large: Content-Encoding {coding.split(',')[-1].strip()}")
    assert "http://bomb.test/" in result["reason"] and "offset" in result["reason"]
    assert result["grew_kb"] < 48 * 1024, result  # the bomb is 200 MB: whole, it would add 200-400 MB


# --- old WARC versions, LF-only headers, rejects that say where -----------------------------------
def _record(
    url: str, body: bytes, *, version: bytes = b"1.0", warc_content_type: bytes | None = None
) -> bytes:
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=False)
    w.write_record(
        w.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            http_headers=_http("200 OK", [("Content-Type", "text/html")]),
        )
    )
    data = buf.getvalue().replace(b"WARC/1.0\r\n", b"WARC/" + version + b"\r\n", 1)
    if warc_content_type is not None:
        data = data.replace(
            b"Content-Type: application/http; msgtype=response", b"Content-Type: " + warc_content_type
        )
    return data


def _with_length(data: bytes, change: int) -> bytes:
    head, _, rest = data.partition(b"Content-Length: ")
    n, _, rest = rest.partition(b"\r\n")
    return head + b"Content-Length: %d\r\n" % (int(n) + change) + rest


@pytest.mark.parametrize("version", [b"0.17", b"0.18", b"1.0"])
def test_a_bad_content_length_in_any_warc_version_resyncs_at_the_next_record(tmp_path, version):
    out = b"".join(
        _with_length(
            _record(f"http://v.test/{i}", _doc(i).encode(), version=version), {2: 40, 4: -40}.get(i, 0)
        )
        for i in range(6)
    )
    path = tmp_path / "old.warc"
    path.write_bytes(out)
    store, _ = _ingest(tmp_path, path)
    pages = _pages(store)
    assert [p["url"] for p in pages] == [
        "http://v.test/0",
        "http://v.test/1",
        "http://v.test/3",
        "http://v.test/5",
    ]
    assert not any("WARC-Type" in p["html"] for p in pages)  # no page holds the next record's header
    bad = [r for _, r in _errors(store) if r.startswith("bad Content-Length")]
    assert len(bad) == 2 and "http://v.test/2" in bad[0] and "http://v.test/4" in bad[1]
    store.close()


def test_a_warc_017_response_typed_text_html_is_read_without_its_http_header(tmp_path):
    path = tmp_path / "v017.warc"
    path.write_bytes(
        _record("http://o.test/", _doc(1).encode(), version=b"0.17", warc_content_type=b"text/html")
    )
    store, _ = _ingest(tmp_path, path)
    (page,) = _pages(store)
    assert page["html"] == _doc(1) and page["status"] == 200
    store.close()


def test_lf_only_warc_headers_name_the_first_bad_line(tmp_path):
    body = b"HTTP/1.1 200 OK\nContent-Type: text/html\n\n" + _doc(1).encode()
    rec = (
        b"WARC/1.0\nWARC-Type: response\nWARC-Target-URI: http://l.test/\nWARC-Date: 2020-01-01T00:00:00Z\n"
        b"WARC-Record-ID: <urn:uuid:1>\nContent-Type: application/http; msgtype=response\n"
        b"Content-Length: %d\n\n%s\n\n" % (len(body), body)
    )
    path = tmp_path / "lf.warc"
    path.write_bytes(rec)
    store = Store(tmp_path / "db.duckdb")
    with pytest.raises(NotACrawlDump) as exc:
        engine.ingest_file(store, path, Config(), jobs=1)
    assert "line 1 of the WARC header, 'WARC/1.0', ends in LF without CR" in str(exc.value)
    store.close()


def test_a_record_cut_short_and_the_revisit_of_it_are_rejected_alike(tmp_path):
    """The file ends one byte into the block's last byte: the record is cut off, and the revisit written
    before it (a second session first) does not load its bytes either."""
    from warcio.warcwriter import WARCWriter

    record_bytes = io.BytesIO()
    w = WARCWriter(record_bytes, gzip=False)
    record = w.create_warc_record(
        "http://s.test/a",
        "response",
        payload=io.BytesIO(_doc(1).encode()),
        http_headers=_http("200 OK", [("Content-Type", "text/html")]),
    )
    w.write_record(record)
    path = tmp_path / "short.warc"
    a = Archive(path, gz=False)
    revisit = a.w.create_revisit_record(
        "http://s.test/a",
        record.rec_headers.get_header("WARC-Payload-Digest"),
        "http://s.test/a",
        record.rec_headers.get_header("WARC-Date"),
        http_headers=_http("200 OK", [("Content-Type", "text/html")]),
    )
    revisit.rec_headers.add_header("WARC-Refers-To", record.rec_headers.get_header("WARC-Record-ID"))
    a.w.write_record(revisit)
    a.w.write_record(
        a.w.create_warc_record(
            "http://s.test/b",
            "response",
            payload=io.BytesIO(_doc(2).encode()),
            http_headers=_http("200 OK", [("Content-Type", "text/html")]),
        )
    )
    a.close()
    with open(path, "ab") as f:
        f.write(record_bytes.getvalue()[:-5])  # the block less its last byte, and no CRLF CRLF
    store, _ = _ingest(tmp_path, path)
    assert [p["url"] for p in _pages(store)] == ["http://s.test/b"]
    reasons = sorted(r for _, r in _errors(store))
    assert len(reasons) == 2
    assert reasons[0].startswith("record cut off") and "http://s.test/a" in reasons[0]
    assert reasons[1].startswith("revisit without its record: the record it refers to (offset")
    assert "is cut off" in reasons[1]
    store.close()


def test_warc_rejects_name_the_record_offset_and_url(tmp_path):
    a = Archive(tmp_path / "where.warc.gz")
    a.response("http://w.test/page", _doc(1).encode())
    a.response("http://w.test/blank", b"   \n  ")
    a.w.write_record(
        a.w.create_warc_record(
            "",
            "response",
            payload=io.BytesIO(_doc(2).encode()),
            http_headers=_http("200 OK", [("Content-Type", "text/html")]),
        )
    )
    a.close()
    again = tmp_path / "again.warc.gz"
    new = gzip.compress(_record("http://w.test/new", _doc(3).encode()))
    again.write_bytes(a.path.read_bytes() + new)  # the same records, and one more
    store, _ = _ingest(tmp_path, a.path)
    engine.ingest_file(store, again, Config(), jobs=1)
    reasons = [r for _, r in _errors(store)]
    blank = [r for r in reasons if r.startswith("empty page")]
    missing = [r for r in reasons if r.startswith("missing url")]
    dup = [r for r in reasons if r.startswith("duplicate record")]
    assert blank and all("offset" in r and "http://w.test/blank" in r for r in blank), reasons
    assert missing and all("offset" in r for r in missing), reasons
    assert dup and all("offset" in r and "http://w.test/page" in r for r in dup), reasons
    store.close()
