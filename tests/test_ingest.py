"""Ingest: formats, bad records as (line, reason), idempotent re-ingest, files that are not dumps."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import page_html, write_jsonl
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from neardup import engine
from neardup import records as records_module
from neardup.batches import ingest_arrow, ingest_records
from neardup.config import Config
from neardup.errors import DatabaseLocked, NotACrawlDump
from neardup.ingest import detect_format, read_batches, read_raw
from neardup.parallel import SharedSlots
from neardup.readers.inflate import GZIP_MAGIC
from neardup.readers.jsonl import MAX_LINE_BYTES, READ_BYTES, LineBlock, count_newlines, shared_lines
from neardup.records import MAX_PAGE_BYTES, RawLine, decode_json_line, validate
from neardup.rejects import Reject, RejectKind
from neardup.store import Store
from neardup.store import connection as store_connection

CONFIG = Config()


def _good(i: int, **extra: object) -> dict:
    body = " ".join(f"word{i}x{j}" for j in range(60))
    return {
        "url": f"https://site.example.com/p/{i}",
        "fetched_at": f"2024-01-{i + 1:02d}T08:00:00Z",
        "status": 200,
        "html": page_html(f"Page {i}", body),
        **extra,
    }


def _line(obj: object) -> bytes:
    return json.dumps(obj).encode("utf-8") + b"\n"


@pytest.fixture(scope="module")
def messy_dump(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int], dict[int, str]]:
    """A JSONL file with good and bad records. Returns (path, line of each good url, reason per bad line)."""
    path = tmp_path_factory.mktemp("messy") / "messy.jsonl"
    huge_html = "<html><body><p>" + "filler " * (10 * 1024 * 1024 // 7) + "</p></body></html>"
    assert MAX_PAGE_BYTES < len(huge_html) < MAX_LINE_BYTES  # a line the reader takes, a page too large
    first = _good(0)
    lines: list[bytes] = [
        _line(first),  # 1
        _line(_good(1)),  # 2
        b'{"url": "https://site.example.com/broken", "html": "<p>cut off\n',  # 3 malformed JSON
        b'{"url": "https://site.example.com/latin1", "html": "<p>caf\xe9</p>"}\n',  # 4 invalid UTF-8
        _line({"html": "<p>no url here</p>", "fetched_at": "2024-01-01"}),  # 5 missing url
        _line({"url": "https://site.example.com/nobody", "status": 200}),  # 6 no html or text
        _line({"url": "https://site.example.com/blank", "html": "   \n  "}),  # 7 blank html
        _line({"url": "https://site.example.com/huge", "html": huge_html}),  # 8 too large
        _line(first),  # 9 duplicate of line 1
        _line({**first, "fetched_at": "2024-06-01T08:00:00Z"}),  # 10 re-fetch: kept
        _line({"url": "https://site.example.com/plain", "text": "plain text " * 40}),  # 11 text, no html
        _line(_good(2, lang="en", crawl_id=7, tags=["a", "b"])),  # 12 extra fields
        b"\n",  # 13 blank line: skipped
        _line([1, 2, 3]),  # 14 not an object
        _line(_good(3)),  # 15
        b'{"url": "https://site.example.com/half", "html": "<p>\\ud800</p>"}\n',  # 16 lone surrogate
        _line({"url": "https://site.example.com/emoji", "html": "<p>\U0001f600</p>"}),  # 17 a pair: fine
        b'{"url": "https://site.example.com/x", "html": "<p>x</p>", "\\udc00": 1}\n',  # 18 ... in a key
        b'{"url": "https://site.example.com/nan", "html": "<p>n</p>", "score": NaN, "v": [Infinity]}\n',  # 19
    ]
    path.write_bytes(b"".join(lines))
    good = {
        "https://site.example.com/p/0": 1,
        "https://site.example.com/p/1": 2,
        "https://site.example.com/plain": 11,
        "https://site.example.com/p/2": 12,
        "https://site.example.com/p/3": 15,
        "https://site.example.com/emoji": 17,
        "https://site.example.com/nan": 19,
    }
    bad = {
        3: "malformed JSON",
        4: "invalid UTF-8",
        5: "missing url",
        6: "missing html or text",
        7: "empty page",
        8: "page too large",
        9: "duplicate record",
        14: "not a JSON object",
        16: "invalid Unicode in field 'html'",
        18: "invalid Unicode in field '\\udc00'",
    }
    return path, good, bad


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "t.duckdb")
    yield s
    s.close()


def _pages(store: Store) -> list[dict]:
    table = store.page_table(CONFIG.norm_key)
    return [store.page(int(pid), CONFIG.norm_key) for pid in table["page_id"]]


def test_messy_dump_loads_good_records_and_records_bad_ones(
    store: Store, messy_dump: tuple[Path, dict[str, int], dict[int, str]]
) -> None:
    path, good, bad = messy_dump
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert summary.status == "loaded"
    assert summary.loaded == len(good) + 1  # + the re-fetch
    assert summary.errors == len(bad)
    assert summary.records == summary.loaded + summary.errors
    assert store.count_pages() == summary.loaded

    pages = _pages(store)
    lines_by_url: dict[str, list[int]] = {}
    for p in pages:
        lines_by_url.setdefault(p["url"], []).append(int(p["line"]))
    assert {u: min(ls) for u, ls in lines_by_url.items()} == good
    # the re-fetch (same url, another time) is kept, the duplicate (same time and bytes) is not
    assert sorted(lines_by_url["https://site.example.com/p/0"]) == [1, 10]

    errors = store.ingest_errors()
    assert set(errors["source"]) == {str(path)}
    got = dict(zip(errors["line"].astype(int), errors["reason"], strict=True))
    assert sorted(got) == sorted(bad)
    for line, kind in bad.items():
        assert got[line].startswith(kind), (line, got[line])
    assert got[9].endswith("as line 1")
    # JSON has no NaN or Infinity (Python's json reads them): kept, as the strings Python spells them
    [nan] = [p for p in pages if p["url"].endswith("/nan")]
    assert json.loads(nan["extra"]) == {"score": "nan", "v": ["inf"]}

    src = store.sources()
    assert len(src) == 1
    assert (int(src.loc[0, "n_loaded"]), int(src.loc[0, "n_errors"])) == (summary.loaded, summary.errors)


def test_a_record_repeating_one_of_another_file_names_that_file_s_source(
    store: Store, tmp_path: Path
) -> None:
    """A duplicate's reason points at the first record: its line, and its source when it is in another
    file (the line of the rejected record's own file would be another record)."""
    first = write_jsonl(tmp_path / "first.jsonl", [_good(0), _good(1)])
    second = write_jsonl(tmp_path / "second.jsonl", [_good(2), _good(1), _good(2)])
    engine.ingest_file(store, first, CONFIG, jobs=1)
    engine.ingest_file(store, second, CONFIG, jobs=1)
    errors = store.ingest_errors()
    got = dict(zip(errors["line"].astype(int), errors["reason"], strict=True))
    assert got == {
        2: "duplicate record: same url, fetched_at and content as line 2 of source 1",
        3: "duplicate record: same url, fetched_at and content as line 1",
    }


def test_record_fields(store: Store, messy_dump: tuple[Path, dict[str, int], dict[int, str]]) -> None:
    path, _, _ = messy_dump
    engine.ingest_file(store, path, CONFIG, jobs=1)
    by_line = {int(p["line"]): p for p in _pages(store)}
    first = by_line[1]
    assert first["canonical_url"] == "https://site.example.com/p/0"
    assert first["host"] == "site.example.com"
    assert first["fetched_at"].to_pydatetime() == datetime(2024, 1, 1, 8, 0)
    assert int(first["status"]) == 200
    assert first["extra"] is None or first["extra"] != first["extra"]  # NULL (None or NaN)
    plain = by_line[11]
    assert plain["html"] is None
    assert plain["text_in"].startswith("plain text")
    assert store.page_source(int(plain["page_id"])) == plain["text_in"]  # no HTML: the text it came as
    assert store.page_source(int(first["page_id"])) == first["html"]
    assert plain["text"].startswith("plain text")
    assert int(plain["n_words"]) == 80
    assert json.loads(by_line[12]["extra"]) == {"lang": "en", "crawl_id": 7, "tags": ["a", "b"]}


def test_reingest_same_file_is_a_noop(store: Store, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [_good(i) for i in range(5)])
    first = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert (first.status, first.loaded) == ("loaded", 5)
    # same bytes under another name: still the same source
    copy = tmp_path / "copy-of-a.jsonl"
    shutil.copy(path, copy)
    for p in (path, copy):
        again = engine.ingest_file(store, p, CONFIG, jobs=1)
        assert again.status == "already loaded"
        assert again.loaded == 0
    assert store.count_pages() == 5
    assert len(store.sources()) == 1


def test_second_file_adds(store: Store, tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [_good(i) for i in range(5)])
    b = write_jsonl(tmp_path / "b.jsonl", [_good(i) for i in range(3, 9)])  # 3 and 4 repeat a's records
    engine.ingest_file(store, a, CONFIG, jobs=1)
    s = engine.ingest_file(store, b, CONFIG, jobs=1)
    assert (s.loaded, s.errors) == (4, 2)
    assert store.count_pages() == 9
    assert len(store.sources()) == 2
    errors = store.ingest_errors()
    assert list(errors["source"]) == [str(b), str(b)]
    assert list(errors["line"]) == [1, 2]
    page_ids = store.page_table(CONFIG.norm_key)["page_id"].tolist()
    assert len(set(page_ids)) == 9


# --- formats -------------------------------------------------------------------------------------
def _records() -> list[dict]:
    recs = [_good(i) for i in range(6)]
    recs.append(
        {
            "url": "https://site.example.com/plain",
            "text": "plain words " * 40,
            "fetched_at": "2024-02-01T00:00:00Z",
            "status": 200,
        }
    )
    return recs


def _write_csv(path: Path, recs: list[dict]) -> None:
    fields = ["url", "html", "text", "fetched_at", "status"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in recs:
            w.writerow({k: r.get(k, "") for k in fields})


def _write_parquet(path: Path, recs: list[dict]) -> None:
    fields = ["url", "html", "text", "fetched_at", "status"]
    pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in fields} for r in recs]), path)


def _loaded(tmp_path: Path, path: Path) -> list[tuple]:
    with Store(tmp_path / f"{path.name}.duckdb") as store:
        s = engine.ingest_file(store, path, CONFIG, jobs=1)
        assert s.errors == 0
        pages = _pages(store)
    return sorted(
        (
            p["url"],
            p["canonical_url"],
            p["fetched_at"].to_pydatetime(),
            int(p["status"]),
            p["md5"],
            p["text"],
            p["exact_key"],
        )
        for p in pages
    )


def test_gzip_csv_and_parquet_load_the_same_records(tmp_path: Path) -> None:
    recs = _records()
    plain = write_jsonl(tmp_path / "d.jsonl", recs)
    gz = tmp_path / "d.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    csv_path = tmp_path / "d.csv"
    _write_csv(csv_path, recs)
    csv_gz = tmp_path / "d2.csv.gz"
    csv_gz.write_bytes(gzip.compress(csv_path.read_bytes()))
    parquet = tmp_path / "d.parquet"
    _write_parquet(parquet, recs)

    assert [detect_format(p) for p in (plain, gz, csv_path, csv_gz, parquet)] == [
        "jsonl",
        "jsonl",
        "csv",
        "csv",
        "parquet",
    ]
    expected = _loaded(tmp_path, plain)
    assert len(expected) == len(recs)
    for p in (gz, csv_path, csv_gz, parquet):
        assert _loaded(tmp_path, p) == expected, p.name


def test_csv_and_parquet_bad_rows_are_recorded(store: Store, tmp_path: Path) -> None:
    recs = [_good(0), {"url": "", "html": "<p>x</p>"}, _good(1), {"url": "https://e.com/x", "html": ""}]
    csv_path = tmp_path / "bad.csv"
    _write_csv(csv_path, recs)
    s = engine.ingest_file(store, csv_path, CONFIG, jobs=1)
    assert (s.loaded, s.errors) == (2, 2)
    errors = store.ingest_errors()
    # CSV lines count the header: record 2 is on line 3
    assert dict(zip(errors["line"], errors["reason"], strict=True)) == {
        3: "missing url",
        5: "empty page (html is blank)",
    }
    parquet = tmp_path / "bad.parquet"
    _write_parquet(parquet, [_good(5), {"url": None, "html": "<p>x</p>"}])
    s = engine.ingest_file(store, parquet, CONFIG, jobs=1)
    assert (s.loaded, s.errors) == (1, 1)
    assert store.ingest_errors()["line"].tolist()[-1] == 2


# --- not a crawl dump ----------------------------------------------------------------------------
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def _not_dumps(tmp_path: Path) -> list[Path]:
    png = tmp_path / "picture.png"
    png.write_bytes(PNG)
    png_named_jsonl = tmp_path / "picture.jsonl"
    png_named_jsonl.write_bytes(PNG)
    no_url = tmp_path / "objects.jsonl"
    no_url.write_text("".join(json.dumps({"id": i, "html": "<p>x</p>"}) + "\n" for i in range(5)))
    array = tmp_path / "array.json"
    array.write_text(json.dumps([{"id": 1}, {"id": 2}]))
    csv_no_url = tmp_path / "table.csv"
    csv_no_url.write_text("id,html\n1,<p>x</p>\n")
    fake_parquet = tmp_path / "fake.parquet"
    fake_parquet.write_text("url,html\n")
    broken_gz = tmp_path / "broken.jsonl.gz"
    broken_gz.write_bytes(gzip.compress(b'{"url": "https://e.com", "html": "<p>x</p>"}\n' * 50)[:30])
    return [png, png_named_jsonl, no_url, array, csv_no_url, fake_parquet, broken_gz]


def test_not_a_crawl_dump_raises_and_leaves_nothing_behind(store: Store, tmp_path: Path) -> None:
    for path in _not_dumps(tmp_path):
        with pytest.raises(NotACrawlDump, match=path.name):
            engine.ingest_file(store, path, CONFIG, jobs=1)
        assert store.sources().empty, path.name
        assert store.count_pages() == 0, path.name
        assert store.ingest_errors().empty, path.name


def test_not_a_crawl_dump_keeps_existing_data(store: Store, tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [_good(i) for i in range(3)])
    engine.ingest_file(store, good, CONFIG, jobs=1)
    for path in _not_dumps(tmp_path):
        with pytest.raises(NotACrawlDump):
            engine.ingest_file(store, path, CONFIG, jobs=1)
    assert store.count_pages() == 3
    assert len(store.sources()) == 1
    assert store.ingest_errors().empty
    # a file of only duplicates of loaded records is a source with no new page
    dup = write_jsonl(tmp_path / "dups.jsonl", [_good(0), _good(1)])
    s = engine.ingest_file(store, dup, CONFIG, jobs=1)
    assert (s.loaded, s.errors, s.reasons) == (0, 2, {"duplicate record": 2})
    assert store.count_pages() == 3
    assert len(store.sources()) == 2


def test_missing_file_is_not_a_dump(tmp_path: Path) -> None:
    with pytest.raises(NotACrawlDump, match="no such file"):
        detect_format(tmp_path / "nope.jsonl")


# --- validate ------------------------------------------------------------------------------------
def test_validate_record() -> None:
    rec = validate(
        RawLine(
            1,
            _line(
                {
                    "url": " HTTP://WWW.Site.example.com/a/?utm_source=x ",
                    "html": "<html><head><link href='/canon/' rel=canonical></head><body>x</body></html>",
                    "fetched_at": 1700000000,
                    "status": "404",
                    "lang": "de",
                }
            ),
        )
    )
    assert isinstance(rec, dict)
    assert rec["url"] == "HTTP://WWW.Site.example.com/a/?utm_source=x"
    assert rec["canonical_url"] == "https://site.example.com/a"
    assert rec["host"] == "site.example.com"
    assert rec["rel_canonical"] == "https://site.example.com/canon"  # relative href, resolved
    assert rec["fetched_at"] == datetime(2023, 11, 14, 22, 13, 20)
    assert rec["status"] == 404
    assert json.loads(rec["extra"]) == {"lang": "de"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-01T12:00:00+02:00", datetime(2024, 3, 1, 10, 0)),
        ("2024-03-01", datetime(2024, 3, 1)),
        ("yesterday", None),
        ("", None),
        (None, None),
    ],
)
def test_validate_fetched_at(value: object, expected: datetime | None) -> None:
    rec = validate(RawLine(1, {"url": "https://e.com/", "html": "<p>x</p>", "fetched_at": value}))
    assert isinstance(rec, dict)
    assert rec["fetched_at"] == expected


@pytest.mark.parametrize(
    ("value", "expected"), [(200, 200), ("301", 301), ("abc", None), (42, None), (None, None)]
)
def test_validate_status(value: object, expected: int | None) -> None:
    rec = validate(RawLine(1, {"url": "https://e.com/", "html": "<p>x</p>", "status": value}))
    assert isinstance(rec, dict)
    assert rec["status"] == expected


@pytest.fixture
def new_york_tz(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run in a zone far from UTC, so a conversion to local time shows."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("new_york_tz")
def test_aware_datetimes_are_stored_in_utc() -> None:
    # Parquet hands over timezone-aware datetimes; the machine's own zone must not leak in.
    aware = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
    rec = validate(RawLine(1, {"url": "https://e.com/", "html": "<p>x</p>", "fetched_at": aware}))
    iso = validate(
        RawLine(1, {"url": "https://e.com/", "html": "<p>x</p>", "fetched_at": "2024-03-01T12:00Z"})
    )
    assert isinstance(rec, dict) and isinstance(iso, dict)
    assert rec["fetched_at"] == iso["fetched_at"] == datetime(2024, 3, 1, 12, 0)


@pytest.mark.usefixtures("new_york_tz")
def test_parquet_timestamps_match_jsonl(tmp_path: Path) -> None:
    recs = [_good(i) for i in range(3)]
    parquet = tmp_path / "ts.parquet"
    rows = [
        {
            "url": r["url"],
            "html": r["html"],
            "fetched_at": datetime.fromisoformat(r["fetched_at"].replace("Z", "+00:00")),
        }
        for r in recs
    ]
    table = pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [("url", pa.string()), ("html", pa.string()), ("fetched_at", pa.timestamp("us", tz="UTC"))]
        ),
    )
    pq.write_table(table, parquet)
    with Store(tmp_path / "ts.duckdb") as store:
        engine.ingest_file(store, parquet, CONFIG, jobs=1)
        got = sorted(t.to_pydatetime() for t in store.page_table(CONFIG.norm_key)["fetched_at"])
    assert got == [datetime(2024, 1, d, 8, 0) for d in (1, 2, 3)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.just(b""), st.just(b"  "), st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"."))),
        max_size=30,
    ),
    st.booleans(),
    st.integers(min_value=1, max_value=64),
)
def test_line_blocks_give_the_records_of_read_raw(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], trailing_newline: bool, block_bytes: int
) -> None:
    # Blank lines, lines longer than a block, a last line without a newline: same records, same line numbers.
    content = b"\n".join(lines) + (b"\n" if trailing_newline and lines else b"")
    assume(not content.startswith(GZIP_MAGIC))  # such a file is read as gzip, which has its own tests
    path = tmp_path_factory.mktemp("blocks") / "d.jsonl"
    path.write_bytes(content)
    want = [(r.line, r.payload.rstrip(b"\n")) for r in read_raw(path, "jsonl")]
    blocks = list(read_batches(path, "jsonl", block_bytes=block_bytes))
    assert all(isinstance(b, LineBlock) for b in blocks)
    assert [(r.line, r.payload) for b in blocks for r in b] == want


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")) | st.sampled_from([b"", b"  ", b"\r"]),
        max_size=30,
    ),
    st.integers(min_value=1, max_value=64),
)
def test_lines_in_shared_memory_are_the_blocks_lines(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], block_bytes: int
) -> None:
    path = tmp_path_factory.mktemp("shared") / "d.jsonl"
    path.write_bytes(b"\n".join(lines))
    blocks = list(read_batches(path, "jsonl", block_bytes=block_bytes))
    with SharedSlots() as slots:
        got = []
        for b in blocks:  # each slot is reused once its batch is done, as the engine does
            # a line is a view of its slot, valid while its batch is worked on: copied out before the reuse
            got.extend((r.line, bytes(r.payload)) for r in shared_lines(b, slots))
            slots.done()
    assert got == [(r.line, r.payload) for b in blocks for r in b]


def test_a_line_viewed_from_shared_memory_validates_as_its_bytes(tmp_path: Path) -> None:
    lines = [_line(_good(i)) for i in range(5)] + [b'{"url": "x"}\n', b"[1]\n", b'{"url": \xff}\n']
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"".join(lines))
    (block,) = read_batches(path, "jsonl")
    with SharedSlots() as slots:
        viewed = [(r.line, validate(r)) for r in shared_lines(block, slots)]
    assert viewed == [(i, validate(RawLine(i, line.rstrip(b"\n")))) for i, line in enumerate(lines, start=1)]


@given(st.binary(max_size=300), st.integers(min_value=1, max_value=5))
def test_count_newlines_is_bytes_count(data: bytes, scan: int) -> None:
    assert count_newlines(data, scan=scan) == data.count(b"\n")


def test_gzip_dump_reads_in_blocks_with_line_numbers(tmp_path: Path) -> None:
    raw = b"".join(_line(_good(i)) for i in range(40)) + b"\n" + _line({"url": "x"})
    path = tmp_path / "d.jsonl.gz"
    path.write_bytes(gzip.compress(raw))
    recs = [r for b in read_batches(path, "jsonl", block_bytes=3000) for r in b]
    assert [r.line for r in recs] == [*range(1, 41), 42]
    assert json.loads(bytes(recs[-1].payload)) == {"url": "x"}


def test_csv_batches_are_lists_of_records(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["url", "html"])
        w.writeheader()
        for i in range(5):
            w.writerow({"url": f"https://e.com/{i}", "html": f"<p>{i}</p>"})
    batches = list(read_batches(path, "csv", batch_records=2))
    assert [len(b) for b in batches] == [2, 2, 1]
    assert [r.payload["url"] for b in batches for r in b] == [f"https://e.com/{i}" for i in range(5)]


def test_bulk_store_load_is_durable_and_reopens_normally(
    tmp_path: Path, messy_dump: tuple[Path, dict[str, int], dict[int, str]]
) -> None:
    # `neardup ingest` loads through a bulk store (no write-ahead log): what it loaded is in the file after close.
    path, good, bad = messy_dump
    db = tmp_path / "bulk.duckdb"
    with Store(db, bulk=True) as store:
        summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert not (tmp_path / "bulk.duckdb.wal").exists()
    with Store(db) as store:
        urls = store.page_table(CONFIG.norm_key)["url"]
        assert len(urls) == summary.loaded and set(urls) == set(good)
        assert sorted(store.ingest_errors()["line"]) == sorted(bad)
        store.record_label("https://a.example/", "https://b.example/", label="duplicate")
    with Store(db) as store:  # written through the log of a normal store: durable at once
        assert len(store.labels()) == 1
    with Store(db, bulk=True) as store:  # and a second bulk open sees it too: re-ingest is a no-op
        assert engine.ingest_file(store, path, CONFIG, jobs=1).status == "already loaded"


def test_bulk_store_reports_a_locked_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "locked.duckdb"
    Store(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(db)!r}); "
            "print('ready', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(
            DatabaseLocked, match=rf"locked.duckdb is open for writing by PID {holder.pid} \("
        ):
            Store(db, bulk=True, lock_wait_s=0.2)
    finally:
        holder.communicate("")


def test_truncated_gzip_keeps_every_complete_record_before_the_cut(store: Store, tmp_path: Path) -> None:
    # A dump cut off mid-transfer: every record complete before the cut loads, the partial one is an error.
    raw = b"".join(_line(_good(i)) for i in range(400))
    packed = gzip.compress(raw)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    complete = zlib.decompressobj(31).decompress(path.read_bytes()).count(b"\n")  # what zlib inflates
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    errors = store.ingest_errors()
    assert (summary.loaded, summary.errors) == (complete, 1)
    assert errors["reason"].str.startswith("truncated compressed file").all()
    assert summary.broken == errors["reason"][0]
    assert errors["line"].tolist() == [complete + 1]
    assert sorted(store.page_table(CONFIG.norm_key)["url"]) == sorted(
        f"https://site.example.com/p/{i}" for i in range(complete)
    )


def _flip(data: bytes, start: int, n: int) -> bytes:
    return data[:start] + bytes(b ^ 0x5A for b in data[start : start + n]) + data[start + n :]


def test_a_corrupt_single_member_gzip_is_refused(store: Store, tmp_path: Path) -> None:
    # 1 KB flipped in the middle: gzip checks its CRC only at the member's end, so nothing in it is vouched for.
    raw = b"".join(_line(_good(i)) for i in range(3000))
    packed = gzip.compress(raw)
    path = tmp_path / "flipped.jsonl.gz"
    path.write_bytes(_flip(packed, len(packed) // 2, 1024))
    with pytest.raises(NotACrawlDump, match=r"corrupt compressed file: .* at byte 0 \(line 1\).* not loaded"):
        engine.ingest_file(store, path, CONFIG, jobs=1)
    assert store.count_pages() == 0 and store.sources().empty and store.ingest_errors().empty


@pytest.mark.parametrize("damage", ["content", "crc"])
def test_a_corrupt_gzip_member_drops_itself_and_what_follows(
    store: Store, tmp_path: Path, damage: str
) -> None:
    # Four members of 500 records each (concatenated gzip, as `cat a.gz b.gz` makes); the third is damaged in
    # its deflate data or only in its CRC. The first two passed their CRC: they are kept, the rest is one error.
    # A block (2 MB) ends inside the third member, so its first lines are stored when its CRC fails.
    n = 500
    members = [gzip.compress(b"".join(_line(_good(n * m + i)) for i in range(n))) for m in range(4)]
    third = members[2]
    members[2] = _flip(third, len(third) // 2, 64) if damage == "content" else _flip(third, len(third) - 8, 1)
    path = tmp_path / "members.jsonl.gz"
    path.write_bytes(b"".join(members))
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert (summary.loaded, summary.errors, summary.records) == (2 * n, 1, 2 * n + 1)
    assert sorted(store.page_table(CONFIG.norm_key)["line"]) == list(range(1, 2 * n + 1))
    errors = store.ingest_errors()
    assert errors["line"].tolist() == [2 * n + 1]
    offset = len(members[0]) + len(members[1])
    assert errors["reason"][0].startswith("corrupt compressed file: ")
    assert f"starts at byte {offset:,} (line {2 * n + 1})" in errors["reason"][0]
    assert summary.broken == errors["reason"][0]
    assert summary.reasons == {"corrupt compressed file": 1}
    assert store.sources()["n_loaded"].tolist() == [2 * n]


def test_bom_jsonl_and_csv_load_their_first_record(tmp_path: Path) -> None:
    recs = _records()
    plain = tmp_path / "bom.jsonl"
    plain.write_bytes(b"\xef\xbb\xbf" + b"".join(_line(r) for r in recs))
    gz = tmp_path / "bom.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    csv_path = tmp_path / "bom.csv"
    _write_csv(csv_path, recs)
    csv_path.write_bytes(b"\xef\xbb\xbf" + csv_path.read_bytes())
    nameless = tmp_path / "bom_dump"  # told apart by its first byte after the mark
    nameless.write_bytes(plain.read_bytes())
    assert detect_format(nameless) == "jsonl"
    for path in (plain, gz, csv_path):
        assert len(_loaded(tmp_path, path)) == len(recs), path.name


def test_an_endless_line_is_skipped_as_it_streams(tmp_path: Path) -> None:
    # A gz bomb: 40 MB of zeros on line 2 of a file of 40 KB. The reader drops the line unread and holds no
    # more than its limit, a read piece and a block at a time.
    limit, block = 256 << 10, 64 << 10
    raw = _line(_good(0)) + b"\0" * (40 << 20) + b"\n" + _line(_good(1))
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(raw))
    assert path.stat().st_size < 100_000
    tracemalloc.start()
    try:
        blocks = list(read_batches(path, "jsonl", block_bytes=block, max_line_bytes=limit))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * limit + 2 * block + 4 * READ_BYTES, peak
    assert [r.line for b in blocks for r in b] == [1, 3]
    errors = [(b.error_line, b.error) for b in blocks if b.error]
    assert len(errors) == 1 and errors[0][0] == 2 and errors[0][1].kind == RejectKind.LINE_TOO_LONG


def test_a_line_over_the_limit_is_a_named_reject(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(_line(_good(0)) + _line({"url": "https://e.com/x", "html": "x" * (MAX_LINE_BYTES + 10)}))
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert (summary.loaded, summary.errors) == (1, 1)
    assert store.ingest_errors()["line"].tolist() == [2]


def _row_groups(store: Store, table: str) -> int:
    return (
        store.cursor()
        .execute(f"SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('{table}')")
        .fetchone()[0]
    )


def test_a_normal_open_keeps_the_row_groups_a_bulk_load_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every store attaches with the same row group size: under DuckDB's default a checkpoint merged the
    # bulk load's smaller row groups, rewriting the whole file (17 s and twice the size at 100k pages).
    monkeypatch.setattr(store_connection, "ROW_GROUP_ROWS", 2048)
    db = tmp_path / "rg.duckdb"
    with Store(db, bulk=True) as store:
        cur = store.cursor()
        cur.execute("CREATE TABLE filler (i BIGINT, s VARCHAR)")
        for k in range(8):
            cur.execute(
                "INSERT INTO filler SELECT range, repeat(md5(range::VARCHAR), 20) FROM range(?, ?)",
                [k * 2048, (k + 1) * 2048],
            )
            cur.execute("CHECKPOINT")
        assert _row_groups(store, "filler") == 8
    size = db.stat().st_size
    with Store(db) as store:
        store.record_label("https://a.example/", "https://b.example/", label="duplicate")
        store.cursor().execute("CHECKPOINT")
        assert _row_groups(store, "filler") == 8
    assert db.stat().st_size <= size * 1.1


def test_stores_on_one_file_share_its_connection(tmp_path: Path) -> None:
    db = tmp_path / "shared.duckdb"
    first, second = Store(db), Store(db)  # e.g. the app's cached store and a test's or a page's own
    first.record_label("https://a.example/", "https://b.example/", label="not")
    assert len(second.labels()) == 1
    first.close()
    first.close()  # closing twice is harmless and does not close the other store's connection
    assert len(second.labels()) == 1
    with pytest.raises(DatabaseLocked, match="bulk load needs it to itself"):
        Store(db, bulk=True)
    second.close()
    with Store(db, bulk=True) as bulk:  # once nobody else has it
        assert len(bulk.labels()) == 1


def test_bulky_columns_are_stored_with_the_compression_the_schema_names(tmp_path: Path) -> None:
    # HTML and texts as ZSTD, MinHash signatures (random bytes) as they are: DuckDB does not spend the
    # checkpoint trying its other compressions on them.
    path = tmp_path / "crawl.jsonl"
    path.write_text("".join(_line(_good(i)).decode() for i in range(300)))
    with Store(tmp_path / "c.duckdb", bulk=True) as store:
        engine.ingest_file(store, path, CONFIG, jobs=1)
        engine.ensure_fingerprints(store, Config(method="minhash"), jobs=1)
        store.cursor().execute("CHECKPOINT")
        used = dict(
            store.cursor()
            .execute(
                "SELECT table_name || '.' || column_name, list(DISTINCT compression ORDER BY compression) FROM ("
                "  SELECT 'pages' AS table_name, * FROM pragma_storage_info('pages') UNION ALL "
                "  SELECT 'texts', * FROM pragma_storage_info('texts') UNION ALL "
                "  SELECT 'sketches', * FROM pragma_storage_info('sketches') UNION ALL "
                "  SELECT 'units', * FROM pragma_storage_info('units')) "
                "WHERE segment_type NOT IN ('VALIDITY') GROUP BY 1"
            )
            .fetchall()
        )
    assert used["pages.html"] == ["ZSTD"]
    assert used["texts.text"] == ["ZSTD"]
    assert used["sketches.minhash"] == ["Uncompressed"]
    assert used["units.minhash"] == ["Uncompressed"]


def _hostile_text(max_size: int) -> st.SearchStrategy[str]:
    """Any text, often with half a surrogate pair, which JSON can escape and UTF-8 cannot hold."""
    return st.text(st.sampled_from("a <&\u00e9\ud800\udfff") | st.characters(), max_size=max_size)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _hostile_text(8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_hostile_text(5), inner, max_size=3),
    max_leaves=8,
)
_HREFS = st.tuples(
    st.sampled_from(["", "/", "//", "http://", "https://www.", "mailto:"]),
    st.text(alphabet="[]%@?#.&=:/ab1 \\x", max_size=12),
).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    url=_hostile_text(40),
    href=_HREFS,
    body=_hostile_text(60),
    fetched_at=_JSON_VALUES,
    status=_JSON_VALUES,
    extra=st.dictionaries(_hostile_text(6), _JSON_VALUES, max_size=3),
    as_json=st.booleans(),
)
def test_validate_never_raises_and_what_it_keeps_is_storable(
    url: str, href: str, body: str, fetched_at: object, status: object, extra: dict, as_json: bool
) -> None:
    # Hostile records: any url, a <link rel=canonical> with any href, any JSON in the other fields (NaN,
    # lone surrogates, nesting). Each is either a reason or a record DuckDB takes as it is.
    rec = {
        **extra,
        "url": url,
        "fetched_at": fetched_at,
        "status": status,
        "html": f"<head><link rel=canonical href='{href}'></head><p>{body} end</p>",
    }
    # A JSON line (ensure_ascii: surrogates and NaN pass as escapes and literals) or a CSV / Parquet row.
    raw = RawLine(1, json.dumps(rec).encode("utf-8") if as_json else rec)
    got = validate(raw)
    pages, _, bad, _ = ingest_arrow(([raw], CONFIG))  # what a worker hands back: normalized, in Arrow
    assert (pages.num_rows, len(bad)) == ((0, 1) if isinstance(got, Reject) else (1, 0))
    if isinstance(got, Reject):
        assert got.detail.startswith(got.kind) and got.detail.encode("utf-8")
        return
    for value in got.values():
        if isinstance(value, str):
            value.encode("utf-8")  # no lone surrogate reaches a VARCHAR column
    if got["extra"] is not None:
        assert duckdb.execute("SELECT ?::JSON", [got["extra"]]).fetchone()[0] is not None


_JSON_NUMBERS = st.sampled_from(
    [
        "18446744073709551615",  # the largest 64-bit unsigned integer
        "18446744073709551616",  # one more
        "-9223372036854775809",  # one below the smallest 64-bit signed integer
        "123456789012345678901234567890",
        "1.5",
        "-0",
        "1e400",
        "NaN",
        "-Infinity",
        '"\\ud800"',  # a lone surrogate escape
        '"\\ud83d\\ude00"',
        "[[[[[[[[[[1]]]]]]]]]]",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(_JSON_VALUES | _JSON_NUMBERS.map(lambda s: ("raw", s)), max_size=4),
    html_digits=st.booleans(),
    top=st.sampled_from(["object", "array", "number"]),
    noise=st.sampled_from([b"", b"\r", b"\xef\xbb\xbf", b"\xff", b" ,"]),
)
def test_json_lines_decode_as_the_standard_library_decodes_them(
    values: list, html_digits: bool, top: str, noise: bytes
) -> None:
    # The fast decoder (orjson) and `json` agree on every line: the same object, or the same reason.
    parts = [v[1] if isinstance(v, tuple) else json.dumps(v) for v in values]
    html = json.dumps("<p>order 12345678901234567890</p>" if html_digits else "<p>x</p>")
    if top == "object":
        body = ", ".join([f'"html": {html}'] + [f'"k{i}": {p}' for i, p in enumerate(parts)])
        text = "{" + body + "}"
    elif top == "array":
        text = "[" + ", ".join(parts) + "]"
    else:
        text = parts[0] if parts else "7"
    line = text.encode("utf-8", "surrogatepass")
    line = noise + line if noise == b"\xef\xbb\xbf" else line + noise
    fast, plain = decode_json_line(line), decode_json_line(line, fast=False)
    assert type(fast) is type(plain)
    assert json.dumps(fast, sort_keys=False) == json.dumps(plain, sort_keys=False)


# --- one hostile record never stops a load ---------------------------------------------------------
_BIG_INT = "9" * 5000  # over Python's 4,300-digit limit for int()
_SHIFTED_OUT = ("0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00")  # leave years 1..9999 in UTC


def _page(store: Store, line: int) -> dict:
    table = store.page_table(CONFIG.norm_key)
    page_id = int(table.loc[table["line"] == line, "page_id"].iloc[0])
    return store.page(page_id, CONFIG.norm_key)


@pytest.mark.parametrize("gz", [False, True])
def test_hostile_json_records_are_named_or_kept_without_the_bad_field(
    store: Store, tmp_path: Path, gz: bool
) -> None:
    deep = '{"url": "https://e.com/deep", "html": "<p>x</p>", "x": ' + "[" * 1200 + "]" * 1200 + "}"
    raw = b"".join(
        [
            _line(_good(0)),  # 1
            f'{{"url": "https://e.com/bigint", "html": "<p>b</p>", "n": {_BIG_INT}}}\n'.encode(),  # 2 kept, n as digits
            deep.encode() + b"\n",  # 3 too deep
            b"[" * 100_000 + b"\n",  # 4 too deep
            _line({**_good(4), "fetched_at": _SHIFTED_OUT[0]}),  # 5 kept, no time
            _line({**_good(5), "fetched_at": _SHIFTED_OUT[1]}),  # 6 kept, no time
            _line({**_good(6), "fetched_at": True}),  # 7 a bool is not a time
            f'{{"url": "https://e.com/bigstatus", "html": "<p>s</p>", "status": {_BIG_INT}}}\n'.encode(),  # 8
            _BIG_INT.encode() + b"\n",  # 9 not an object
            _line(_good(9)),  # 10
        ]
    )
    path = tmp_path / ("hostile.jsonl.gz" if gz else "hostile.jsonl")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    errors = store.ingest_errors()
    got = dict(zip(errors["line"], errors["reason"], strict=True))
    assert sorted(got) == [3, 4, 9]
    assert got[3].startswith("JSON nested too deeply") and got[4].startswith("JSON nested too deeply")
    assert got[9] == "not a JSON object but a str"
    assert (summary.loaded, summary.errors) == (7, 3)
    assert json.loads(_page(store, 2)["extra"]) == {"n": _BIG_INT}
    for line, value in ((5, _SHIFTED_OUT[0]), (6, _SHIFTED_OUT[1]), (7, True)):
        page = _page(store, line)
        assert page["fetched_at"] is None or pd.isna(page["fetched_at"])
        assert json.loads(page["extra"]) == {"fetched_at": value}
    assert pd.isna(_page(store, 8)["status"])
    assert json.loads(_page(store, 8)["extra"]) == {"status": _BIG_INT}


@pytest.mark.parametrize("gz", [False, True])
def test_csv_out_of_range_dates_and_numbers_keep_the_page(store: Store, tmp_path: Path, gz: bool) -> None:
    recs = [
        _good(0),
        {**_good(1), "fetched_at": _SHIFTED_OUT[0]},
        {**_good(2), "fetched_at": _SHIFTED_OUT[1]},
        {**_good(3), "status": _BIG_INT},
        _good(4),
    ]
    path = tmp_path / "dates.csv"
    _write_csv(path, recs)
    if gz:
        path = path.rename(tmp_path / "dates.csv.gz")
        path.write_bytes(gzip.compress(path.read_bytes()))
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert (summary.loaded, summary.errors) == (5, 0)
    for line, value in ((3, _SHIFTED_OUT[0]), (4, _SHIFTED_OUT[1])):
        page = _page(store, line)
        assert pd.isna(page["fetched_at"])
        assert json.loads(page["extra"]) == {"fetched_at": value}
    assert json.loads(_page(store, 5)["extra"]) == {"status": _BIG_INT}


def test_a_parquet_cell_that_is_not_utf8_rejects_its_row_only(store: Store, tmp_path: Path) -> None:
    recs = [_good(i) for i in range(5)]
    urls = pa.array(
        [r["url"].encode() for r in recs[:2]]
        + [b"https://e.com/caf\xe9"]
        + [r["url"].encode() for r in recs[3:]],
        pa.binary(),
    ).view(pa.string())
    # microseconds since 1970 of the year 10000: beyond what Python's datetime holds
    times = pa.array([1_700_000_000_000_000, 253_402_300_800_000_000 + 1, None, None, None], pa.int64()).cast(
        pa.timestamp("us", tz="UTC")
    )
    table = pa.table({"url": urls, "html": [r["html"] for r in recs], "fetched_at": times})
    path = tmp_path / "badcell.parquet"
    pq.write_table(table, path, row_group_size=1000)
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert (summary.loaded, summary.errors) == (4, 1)
    errors = store.ingest_errors()
    assert errors["line"].tolist() == [3]
    assert errors["reason"][0] == "invalid UTF-8 in field 'url'"
    assert _page(store, 1)["fetched_at"].to_pydatetime() == datetime(2023, 11, 14, 22, 13, 20)
    page = _page(store, 2)
    assert pd.isna(page["fetched_at"])
    assert json.loads(page["extra"])["fetched_at"].startswith("unreadable timestamp")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, None),
        (False, None),
        (_SHIFTED_OUT[0], None),
        (_SHIFTED_OUT[1], None),
        (datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))), None),
        (float("nan"), None),
        (1e300, None),
    ],
)
def test_validate_fetched_at_that_is_no_time(value: object, expected: datetime | None) -> None:
    rec = validate(RawLine(1, {"url": "https://e.com/", "html": "<p>x</p>", "fetched_at": value}))
    assert isinstance(rec, dict)
    assert rec["fetched_at"] == expected
    assert "fetched_at" in json.loads(rec["extra"])


@pytest.mark.parametrize(("tail", "error"), [(b"\0" * 70_000, None), (b"not gzip at all", "trailing data")])
def test_bytes_after_the_last_gzip_member(
    store: Store, tmp_path: Path, tail: bytes, error: str | None
) -> None:
    # Zero padding (tape blocks, preallocated files) is ignored as gzip(1) does; other bytes are named.
    path = tmp_path / "padded.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(_line(_good(i)) for i in range(3))) + tail)
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert summary.loaded == 3
    reasons = store.ingest_errors()["reason"].tolist()
    assert reasons == (
        []
        if error is None
        else [
            f"trailing data after the last gzip member: {len(tail)} bytes that are not a gzip member, ignored"
        ]
    )


def test_members_cut_mid_line_keep_only_the_lines_before_the_failed_member(
    store: Store, tmp_path: Path
) -> None:
    # bgzip cuts members at a size, not at newlines: the line the failed member starts in is not vouched for.
    raw = b"".join(_line(_good(i)) for i in range(60))
    cuts = [0, 20_000, 41_111, 63_333, len(raw)]
    members = [gzip.compress(raw[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
    members[2] = members[2][:-8] + bytes(b ^ 1 for b in members[2][-8:-4]) + members[2][-4:]  # its CRC
    path = tmp_path / "bgzip_like.jsonl.gz"
    path.write_bytes(b"".join(members))
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    first_bad = raw[: cuts[2]].count(b"\n") + 1  # the line holding the failed member's first byte
    assert summary.loaded == first_bad - 1
    assert store.ingest_errors()["line"].tolist() == [first_bad]
    assert sorted(store.page_table(CONFIG.norm_key)["line"]) == list(range(1, first_bad))


def test_rel_canonical_is_read_from_the_link_tag() -> None:
    from neardup.records import rel_canonical_href

    assert (
        rel_canonical_href("<head><link rel='stylesheet' href='/s.css'><LINK REL=Canonical HREF=/a></head>")
        == "/a"
    )
    assert rel_canonical_href('<link href="/b" rel="canonical">') == "/b"
    assert rel_canonical_href('<link rel="canonical">') is None
    assert rel_canonical_href("<link rel=stylesheet href=/x><p>rel=canonical href=/y</p>") is None
    # many unclosed '<link's (10.7 s): each scanned up to the next '<', not to the end of the head
    assert rel_canonical_href("<html><head>" + "<link " * 13_000) is None
    assert rel_canonical_href("<html><head>" + "<link rel" * 7_000) is None
    assert rel_canonical_href("<link " * 10_000 + "<link rel=canonical href=/z>") == "/z"


@pytest.mark.parametrize("gz", [False, True])
def test_a_csv_line_over_the_limit_is_a_named_reject_read_in_bounded_memory(tmp_path: Path, gz: bool) -> None:
    """A CSV record with a line longer than the limit is (its first line, "line too long"), skipped as it
    streams: the reader holds about one limit of it, not the line (a 1 GB line was read whole)."""
    limit = 100_000
    long_cell = "x" * (50 * limit)
    rows = [
        ["https://e.com/a", "<p>a</p>"],
        ["https://e.com/long", long_cell],
        ["https://e.com/b", "<p>b\nstill b</p>"],
        ["https://e.com/quoted-long", "line\n" + long_cell],
        ["https://e.com/c", "<p>c</p>"],
        [
            "https://e.com/many-lines",
            "\n".join(["y" * 1000] * 200),
        ],  # every line short, the field over the limit
        ["https://e.com/d", "<p>d</p>"],
    ]
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(["url", "html"])
    w.writerows(rows)
    raw = buf.getvalue().encode()
    path = tmp_path / ("long.csv.gz" if gz else "long.csv")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    tracemalloc.start()
    try:
        records = [r for batch in read_batches(path, "csv", max_line_bytes=limit) for r in batch]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * limit + 4 * READ_BYTES, peak
    got = [(r.line, r.payload["url"] if isinstance(r.payload, dict) else r.payload) for r in records]
    assert [line for line, _ in got] == [2, 3, 4, 6, 8, 9, 209]
    assert [u for _, u in got if isinstance(u, str)] == [f"https://e.com/{k}" for k in "abcd"]
    rejects = [r for _, r in got if isinstance(r, Reject)]
    assert [r.kind for r in rejects] == [
        RejectKind.LINE_TOO_LONG,
        RejectKind.LINE_TOO_LONG,
        RejectKind.RECORD_TOO_LONG,
    ]
    assert rejects[0].detail.startswith("line too long: line 3 is over 100,000 bytes")
    assert rejects[1].detail.startswith("line too long: line 7 is over 100,000 bytes")
    assert rejects[2].detail.startswith("record too long: over 100,000 bytes from line 9")


def test_a_csv_with_a_long_line_loads_the_rest(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    _write_csv(path, [_good(0), {"url": "https://e.com/x", "html": "x" * (MAX_LINE_BYTES + 10)}, _good(1)])
    summary = engine.ingest_file(store, path, CONFIG, jobs=1)
    assert (summary.loaded, summary.errors) == (2, 1)
    assert store.ingest_errors()["line"].tolist() == [3]


@pytest.mark.parametrize("kernels", [True, False], ids=["md5_many", "no-kernels"])
def test_a_batch_hashed_together_has_each_page_md5(monkeypatch: pytest.MonkeyPatch, kernels: bool) -> None:
    # with the kernels the pages are hashed after validation, together; without them, one by one as before
    if not kernels:
        monkeypatch.setattr(records_module, "_kernels", None)
    pages = ["<p>Grüße 😀</p>" * n for n in (1, 5, 300, 4000)] + ["<p>x</p>" * 9000]
    lines = [json.dumps({"url": f"https://a.example/{i}", "html": p}).encode() for i, p in enumerate(pages)]
    lines.append(json.dumps({"url": "https://a.example/t", "text": "only text"}).encode())
    lines.append(json.dumps({"url": "https://a.example/s", "html": "<p>\ud800</p>"}).encode())
    good, bad, _ = ingest_records([RawLine(i, line) for i, line in enumerate(lines, start=1)], CONFIG)
    want = [hashlib.md5(p.encode("utf-8")).hexdigest() for p in [*pages, "only text"]]
    assert [rec["md5"] for rec in good] == want
    assert [(line, reject.kind) for line, reject in bad] == [(len(lines), RejectKind.INVALID_UNICODE)]


_SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u205f\u3000"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(_SPACES) | st.characters(exclude_categories=["Cs"]), max_size=30))
def test_a_page_is_blank_exactly_when_it_strips_to_nothing(value: str) -> None:
    """`validate` tells a blank html or text by `has_content`, which does not copy a page the way `strip` does.
    Lone surrogates are left out: a page holding one is invalid Unicode, blank or not (the test above)."""
    assert records_module.has_content(value) == bool(value.strip())
    rec = validate(RawLine(1, json.dumps({"url": "https://a.example/", "html": value}).encode()))
    assert isinstance(rec, Reject) != bool(value.strip())
