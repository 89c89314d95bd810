"""The compiled loops (`readers.warc_compiled`) read a WARC.gz, written a gzip member per record or gzipped as
one stream, as FastWARC's path does: the same records, captures, rejects, counts and links, on real
crawlers' files and on random hostile ones, and it is a loop that reads the common case (not FastWARC every
time)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import pytest
from hostile_warc import HTML, hostile_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.readers.capture import WarcCapture
from neardup.readers.inflate import GzipStream
from neardup.readers.warc import WarcBatches, _compression
from neardup.readers.warc_compiled import MemberRecords, StreamRecords
from neardup.rejects import RejectKind

ROOT = Path(__file__).resolve().parent.parent
ARCHIVES = ROOT / "tests" / "data" / "archives"


def _gzipped(path: Path) -> bool:
    """A WARC.gz: a member per record, or one stream (several records to a member)."""
    return _compression(path)[0]


def _files() -> list[Path]:
    files = [ROOT / "sample_data" / "crawl.warc.gz", *sorted(ARCHIVES.glob("*.warc.gz"))]
    if extra := os.environ.get("NEARDUP_ARCHIVE_CORPUS"):  # real crawlers' files kept outside (PROVENANCE.md)
        files += sorted(p for p in Path(extra).rglob("*.warc.gz") if p.is_file())
    return [p for p in files if _gzipped(p)]


def _read(path: Path, *, compiled: bool) -> tuple[list[Any], dict[str, int], int]:
    batches = WarcBatches(path, compiled=compiled)
    records = list(batches.records())
    return records, dict(batches.skipped), batches.revisits


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_a_real_crawlers_warc_gz_reads_the_same_by_the_compiled_loops_as_by_fastwarc(
    path: Path, tmp_path: Path
) -> None:
    compiled = _read(path, compiled=True)
    assert compiled == _read(path, compiled=False)
    assert compiled[0] or compiled[1], "no record read"
    # and its records gzipped as one stream, as a person gzips a .warc, through the stream loop
    try:
        whole = gzip.decompress(path.read_bytes())
    except (OSError, EOFError):  # a damaged test file: its own read above is the test
        return
    one_stream = tmp_path / f"one-stream-{path.name}"
    one_stream.write_bytes(gzip.compress(whole))
    assert _read(one_stream, compiled=True) == _read(one_stream, compiled=False)


def test_the_stream_loop_alone_reads_a_clean_one_stream_file_to_its_end() -> None:
    path = ROOT / "sample_data" / "crawl.warc.gz"  # several records to a gzip member: read as one stream
    with GzipStream(path) as f:
        loop = StreamRecords(f, 0, path.name, "gunzipped stream")
        read = [r for r in loop if isinstance(r, WarcCapture)]
        assert loop.stopped_at is None and f.raw_position() == path.stat().st_size
    assert len(read) == 3000 and all(c.offset_in == "gunzipped stream" for c in read)


@pytest.mark.parametrize("name", ["wget-1.21.warc.gz", "warcio-per-record.warc.gz"])
def test_the_member_loop_alone_reads_a_real_crawlers_file_to_its_end(name: str) -> None:
    path = ARCHIVES / name
    with open(path, "rb") as f:
        members = MemberRecords(f, 0, path.name, "file")
        read = list(members)
        assert members.stopped_at is None
        assert f.tell() == path.stat().st_size  # the load's progress reaches the file's end
    assert len(read) == 22  # warcinfo, request / response pairs, a revisit, metadata: every record
    captures = [r for r in read if isinstance(r, WarcCapture)]
    assert captures and all(c.offset is not None and c.warc_file == name for c in captures)


def test_fastwarc_reads_from_a_member_the_loop_does_not_read_and_the_loop_again_after_a_resync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = [gzip.compress(_warc(f"http://a.example/{i}", HTML)) for i in range(6)]
    folded = gzip.compress(
        _warc("http://a.example/folded", HTML).replace(b"\r\nWARC-Date:", b"\r\n  folded\r\nWARC-Date:", 1)
    )
    garbage = b"\x00 not a gzip member \x00" * 4
    path = tmp_path / "odd.warc.gz"
    path.write_bytes(b"".join([clean[0], clean[1], folded, clean[2], garbage, clean[3], clean[4], clean[5]]))
    starts: list[tuple[int, int]] = []  # (offset, records read) of each run of the member loop

    class Watched(MemberRecords):
        def __iter__(self) -> Any:
            read = 0
            for item in super().__iter__():
                read += 1
                yield item
            starts.append((self._start, read))

    monkeypatch.setattr("neardup.readers.warc.MemberRecords", Watched)
    records, _, _ = _read(path, compiled=True)
    pages = [r.payload.url for r in records if isinstance(r.payload, WarcCapture)]
    assert pages == [f"http://a.example/{i}" for i in (0, 1)] + [
        "http://a.example/folded folded"
    ] + [  # a folded line goes on its field
        f"http://a.example/{i}" for i in (2, 3, 4, 5)
    ]
    resumed = sum(len(m) for m in (clean[0], clean[1], folded, clean[2], garbage))
    assert starts == [(0, 2), (resumed, 3)]  # up to the folded record; again after the garbage
    monkeypatch.undo()
    assert records == _read(path, compiled=False)[0]


def test_a_complete_record_before_bytes_that_are_not_a_member_is_kept(tmp_path: Path) -> None:
    members = [gzip.compress(_warc(f"http://a.example/{i}", HTML)) for i in range(3)]
    path = tmp_path / "junk.warc.gz"
    path.write_bytes(members[0] + members[1] + b"\x1f" + members[2])
    records, _, _ = _read(path, compiled=True)
    shown = [r.payload.url if isinstance(r.payload, WarcCapture) else r.payload.detail for r in records]
    assert shown == [
        "http://a.example/0",
        "http://a.example/1",
        f"malformed record (after offset {len(members[0])}: Gzip decompression error: data error); "
        f"reading resumed at offset {len(members[0]) + len(members[1]) + 1}",
        "http://a.example/2",
    ]


def _warc(uri: str, html: bytes) -> bytes:
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html
    head = (
        f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2026-01-01T00:00:00Z\r\n"
        f"WARC-Record-ID: <urn:uuid:{uri}>\r\nContent-Type: application/http; msgtype=response\r\n"
        f"Content-Length: {len(block)}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


# --- random hostile files: every kind of member the loop must leave to FastWARC, mixed with clean ones ----
@st.composite
def _archive(draw: st.DrawFn) -> bytes:
    """Records gzipped a member each, some two to a member, with a member cut, corrupt or garbage between."""
    records = draw(st.lists(hostile_record(), min_size=1, max_size=8))
    out = bytearray()
    i = 0
    while i < len(records):
        together = 2 if i + 1 < len(records) and draw(st.integers(0, 7)) == 0 else 1
        member = gzip.compress(
            b"".join(records[i : i + together]), compresslevel=draw(st.sampled_from([1, 6, 9]))
        )
        damage = draw(st.sampled_from([None] * 8 + ["cut", "crc", "garbage"]))
        if damage == "cut":
            member = member[: draw(st.integers(1, len(member) - 1))]
        elif damage == "crc":
            member = member[:-8] + bytes([member[-8] ^ 0xFF]) + member[-7:]
        elif damage == "garbage":
            member += b"\x00junk\x1f\x8b"
        out += member
        i += together
    if draw(st.booleans()):  # gzipped as one stream instead, perhaps cut short
        whole = gzip.compress(b"".join(records))
        out = bytearray(
            whole[: draw(st.sampled_from([len(whole), len(whole), len(whole) // 2, len(whole) - 3]))]
        )
    return bytes(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_archive())
def test_a_hostile_warc_gz_reads_the_same_by_the_member_loop_as_by_fastwarc(
    tmp_path: Path, data: bytes
) -> None:
    path = tmp_path / "hostile.warc.gz"
    path.write_bytes(data)
    _same_or_more(_read(path, compiled=True), _read(path, compiled=False))


def _same_or_more(
    compiled: tuple[list[Any], dict[str, int], int], fastwarc: tuple[list[Any], dict[str, int], int]
) -> None:
    """The member loop's records are FastWARC's, number for number, but for a complete record FastWARC loses
    when the bytes after its member are not another member (its read-ahead fails inside the record): the
    loop keeps it, and the malformed-record reject after it is the same."""
    ours, theirs = ({r.line: r.payload for r in out[0]} for out in (compiled, fastwarc))
    for line, payload in theirs.items():
        assert ours.get(line) == payload, line
    for line in ours.keys() - theirs.keys():
        assert isinstance(ours[line], WarcCapture), ours[line]
        after = theirs.get(line + 1)
        assert after is not None and after.kind == RejectKind.MALFORMED_RECORD, after
    assert all(compiled[1].get(k, 0) >= n for k, n in fastwarc[1].items()) and compiled[2] >= fastwarc[2]
