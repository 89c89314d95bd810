"""Archive batches sent to the workers through shared memory: what a worker iterates is what the reader
gave, record for record (captures, their blocks and fields, rejects), and an ingest by a pool of workers
loads what one process loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_records import Archive, _doc, _errors, _http, _pages

from neardup import engine
from neardup.config import Config
from neardup.ingest import detect_format, read_batches
from neardup.parallel import SharedSlots
from neardup.readers.capture import ArchiveCapture, WarcCapture
from neardup.readers.shared_captures import SharedCaptures, shared_captures
from neardup.records import validate
from neardup.rejects import Reject
from neardup.stages import ingest as ingest_stage
from neardup.store import Store

ARCHIVES = Path(__file__).resolve().parent / "data" / "archives"

pytestmark = pytest.mark.skipif(not SharedSlots.available(), reason="no memfd or /proc")


def _revisits_and_rejects(path: Path) -> Path:
    """A WARC.gz with pages, a revisit of one, a revisit of nothing, a PNG and a record cut off."""
    a = Archive(path)
    first = a.response("http://site.test/a", _doc(1).encode())
    for i in range(2, 6):
        a.response(f"http://site.test/{i}", _doc(i).encode())
    revisit = a.w.create_revisit_record(
        "http://site.test/a",
        first.rec_headers.get_header("WARC-Payload-Digest"),
        "http://site.test/a",
        "2026-03-01T00:00:00Z",
        http_headers=_http("200 OK", [("Content-Type", "text/html")]),
    )
    revisit.rec_headers.replace_header("WARC-Date", "2030-01-01T00:00:00Z")  # a later fetch
    a.w.write_record(revisit)
    a.w.write_record(
        a.w.create_revisit_record(
            "http://site.test/lost", "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "http://site.test/lost", "2026"
        )
    )
    a.response("http://site.test/png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), headers=[])
    a.response("http://site.test/6", _doc(6).encode())
    a.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # the last record cut off
    return path


@pytest.mark.parametrize(
    "name",
    [
        "warcio-per-record.warc.gz",
        "warcio-plain.warc",
        "wget-1.21.warc.gz",
        "heritrix-layout-v1.arc.gz",
        "webrecorder-layout.wacz",
        "revisits-and-rejects.warc.gz",
    ],
)
def test_a_batch_from_shared_memory_is_the_readers_batch(tmp_path: Path, name: str) -> None:
    path = (
        ARCHIVES / name if name != "revisits-and-rejects.warc.gz" else _revisits_and_rejects(tmp_path / name)
    )
    batches = list(read_batches(path, detect_format(path), batch_records=3))
    kinds = {type(r.payload) for b in batches for r in b}
    assert kinds & {WarcCapture, ArchiveCapture}
    with SharedSlots() as slots:
        for batch in batches:  # each slot is reused once its batch is done, as the engine does
            shared = shared_captures(batch, slots)
            assert isinstance(shared, SharedCaptures)
            # the blocks are views of the slot: read before it is reused, as a worker reads them
            assert list(shared) == batch
            assert [validate(r) for r in shared] == [validate(r) for r in batch]
            slots.done()
    if name == "revisits-and-rejects.warc.gz":
        assert any(isinstance(r.payload, Reject) for b in batches for r in b)
        assert any(getattr(r.payload, "original", None) is not None for b in batches for r in b)


def test_a_batch_without_a_capture_goes_as_it_is() -> None:
    from neardup.records import RawLine
    from neardup.rejects import RejectKind

    batch = [RawLine(1, RejectKind.MALFORMED_RECORD.reject(" (at offset 0)"))]
    with SharedSlots() as slots:
        assert shared_captures(batch, slots) is batch
        slots.done()  # a skipped batch keeps the slots in step


def test_workers_load_what_one_process_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _revisits_and_rejects(tmp_path / "r.warc.gz")
    loads = {}
    for jobs in (1, 2):
        # a small file is read in one process: this one goes to the workers too
        monkeypatch.setattr(ingest_stage, "PARALLEL_BYTES", 0 if jobs > 1 else 1 << 40)
        with Store(tmp_path / f"j{jobs}.duckdb") as store:
            summary = engine.ingest_file(store, path, Config(), jobs=jobs)
            loads[jobs] = (_pages(store), _errors(store), summary.loaded, summary.revisits, summary.skipped)
    assert loads[2] == loads[1]
    pages, errors, loaded, revisits, _ = loads[2]
    assert loaded == 6 and revisits == 1 and len(errors) == 3
    assert pages[-1]["html"] == pages[0]["html"] and pages[-1]["extra"]["warc_type"] == "revisit"


def _real_size_archives(tmp_path: Path) -> list[Path]:
    """40 pages of ~100 KB each as a WARC.gz, an ARC and a WACZ (the size of real pages, not the sample's)."""
    import gzip
    import zipfile

    bodies = [(f"http://site.test/{i}", (_doc(i) * 40).encode()) for i in range(40)]
    a = Archive(tmp_path / "big.warc.gz")
    for url, body in bodies:
        a.response(url, body)
    warc = a.close()
    desc = b"1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n"
    arc = tmp_path / "big.arc.gz"
    with open(arc, "wb") as f:
        f.write(
            gzip.compress(
                f"filedesc://big.arc 0.0.0.0 20240305101500 text/plain {len(desc)}\n".encode() + desc + b"\n"
            )
        )
        for url, body in bodies:
            block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
            f.write(
                gzip.compress(
                    f"{url} 192.0.2.1 20240305101500 text/html {len(block)}\n".encode() + block + b"\n"
                )
            )
    wacz = tmp_path / "big.wacz"
    with zipfile.ZipFile(wacz, "w") as z:
        z.writestr("archive/data.warc.gz", warc.read_bytes())
        z.writestr("pages/pages.jsonl", b'{"format": "json-pages-1.0", "id": "pages"}\n')
    return [warc, arc, wacz]


def test_an_archive_batch_is_cut_by_its_blocks_bytes_as_a_json_lines_block_is(tmp_path: Path) -> None:
    """256 records of real-size pages are 25 MB, which the main process would hold several times over (read
    ahead, in shared memory, in flight): a batch ends at about a JSON-lines block's bytes."""
    from neardup.readers.capture import block_bytes
    from neardup.readers.jsonl import BLOCK_BYTES

    for path in _real_size_archives(tmp_path):
        batches = [list(b) for b in read_batches(path, detect_format(path))]
        sizes = [sum(block_bytes(r.payload) for r in b) for b in batches]
        largest = max(block_bytes(r.payload) for b in batches for r in b)
        assert sum(len(b) for b in batches) == 40, path.name
        assert len(batches) > 1, path.name
        # each batch stops at the record that reaches the bound
        assert all(BLOCK_BYTES <= s < BLOCK_BYTES + largest for s in sizes[:-1]), (path.name, sizes)
        assert sizes[-1] < BLOCK_BYTES + largest
