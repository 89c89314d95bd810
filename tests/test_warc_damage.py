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
from test_warc import Archive, _doc, _errors, _http, _ingest, _pages
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from neardup import engine
from neardup.config import Config
from neardup.errors import NotACrawlDump
from neardup.rejects import RejectKind
from neardup.store import Store
from neardup.warc import WarcBatches, WarcCapture

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
from neardup.ingest import validate
from neardup.warc import WarcBatches, WarcCapture
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
