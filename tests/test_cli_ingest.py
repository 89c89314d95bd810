"""`neardup ingest` on refused inputs: no database is made for nothing, every file it can load is loaded,
each refused file is one line, and a file whose pages are all loaded already is a no-op."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import Crawl, write_jsonl

from neardup.cli import main
from neardup.store import Store


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _png(tmp: Path) -> str:
    (tmp / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    return str(tmp / "image.png")


def _csv_without_url(tmp: Path) -> str:
    (tmp / "table.csv").write_text("id,html\n1,<p>x</p>\n")
    return str(tmp / "table.csv")


def _empty(tmp: Path) -> str:
    (tmp / "empty.jsonl").write_bytes(b"")
    return str(tmp / "empty.jsonl")


def _folder(tmp: Path) -> str:
    (tmp / "folder").mkdir()
    return str(tmp / "folder")


def _fifo(tmp: Path) -> str:
    os.mkfifo(tmp / "pipe.jsonl")
    return str(tmp / "pipe.jsonl")


def _parquet_without_url(tmp: Path) -> str:
    pq.write_table(pa.table({"html": ["<p>x</p>"]}), tmp / "t.parquet")
    return str(tmp / "t.parquet")


def _header_only_csv(tmp: Path) -> str:
    (tmp / "header.csv").write_text("url,html\n")
    return str(tmp / "header.csv")


def _only_bad_records(tmp: Path) -> str:
    (tmp / "bad.jsonl").write_text('{not json\n{"html": "<p>no url</p>"}\n')
    return str(tmp / "bad.jsonl")


REFUSED: dict[str, tuple[Callable[[Path], str], str]] = {
    "png": (_png, "not a crawl dump"),
    "missing": (lambda tmp: str(tmp / "missing.jsonl"), "no such file"),
    "csv-without-url": (_csv_without_url, "without a 'url' column"),
    "empty": (_empty, "empty file"),
    "dev-null": (lambda tmp: os.devnull, "not a regular file"),
    "folder": (_folder, "a folder"),
    "fifo": (_fifo, "not a regular file"),
    "parquet-without-url": (_parquet_without_url, "without a 'url' column"),
    "header-only-csv": (_header_only_csv, "no usable record"),
    "only-bad-records": (_only_bad_records, "no usable record"),
}


@pytest.mark.parametrize("kind", list(REFUSED))
def test_a_refused_ingest_makes_no_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    make, needle = REFUSED[kind]
    path = make(tmp_path)
    db = tmp_path / "new.duckdb"
    code, out, err = _run(capsys, "ingest", path, "--db", str(db), "--jobs", "1")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and path in lines[0], err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("new")) == []


def test_ingest_loads_every_file_it_can_and_names_each_refused_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl: Crawl
) -> None:
    first = write_jsonl(tmp_path / "first.jsonl", crawl.records[:10])
    second = write_jsonl(tmp_path / "second.jsonl", crawl.records[10:25])
    png, missing = _png(tmp_path), str(tmp_path / "missing.jsonl")
    bad = _only_bad_records(tmp_path)
    db = str(tmp_path / "d.duckdb")
    code, out, err = _run(
        capsys, "ingest", png, str(first), missing, bad, str(second), "--db", db, "--jobs", "1"
    )
    assert code == 2
    assert f"{first}: 10 pages loaded" in out and f"{second}: 15 pages loaded" in out
    refused = err.strip().splitlines()
    assert len(refused) == 3, err
    for line, path in zip(refused, (png, missing, bad), strict=True):
        assert path in line and "error" in line
    with Store(db, read_only=True) as store:
        assert store.count_pages() == 25
        assert sorted(store.sources()["path"]) == sorted([str(first), str(second)])


def test_a_file_whose_pages_are_all_loaded_is_a_source_with_no_new_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl: Crawl
) -> None:
    first = write_jsonl(tmp_path / "first.jsonl", crawl.records[:10])
    again = write_jsonl(tmp_path / "again.jsonl", crawl.records[:10][::-1])  # other bytes, the same records
    db = str(tmp_path / "d.duckdb")
    assert _run(capsys, "ingest", str(first), "--db", db, "--jobs", "1")[0] == 0
    code, out, err = _run(capsys, "ingest", str(again), "--db", db, "--jobs", "1")
    assert code == 0, err
    assert f"{again}: no new page (its 10 records are loaded already)" in out
    code, out, err = _run(capsys, "ingest", str(again), "--db", db, "--jobs", "1")
    assert code == 0 and "already loaded" in out
    with Store(db, read_only=True) as store:
        assert store.count_pages() == 10
        sources = store.sources()
        assert sorted(sources["path"]) == sorted([str(first), str(again)])
        assert sorted(sources["n_loaded"]) == [0, 10]


def test_a_refused_ingest_keeps_an_empty_database_file_it_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "given.duckdb"
    duckdb.connect(str(db)).close()
    code, _, err = _run(capsys, "ingest", _only_bad_records(tmp_path), "--db", str(db), "--jobs", "1")
    assert code == 2 and "no usable record" in err
    assert db.exists()


def test_the_rejects_line_is_said_after_a_run_that_rejected_records_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl: Crawl
) -> None:
    """ "rejected records are listed in the ingest_errors table" follows a run whose files had bad records,
    not one that found its file loaded already (nothing was read, nothing rejected)."""
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(write_jsonl(tmp_path / "good.jsonl", crawl.records[:5]).read_bytes() + b"{not json\n")
    clean = write_jsonl(tmp_path / "clean.jsonl", crawl.records[5:10])
    db = str(tmp_path / "d.duckdb")
    code, out, _ = _run(capsys, "ingest", str(mixed), "--db", db, "--jobs", "1")
    assert code == 0 and "1 record rejected" in out and "ingest_errors table" in out
    code, out, _ = _run(capsys, "ingest", str(mixed), "--db", db, "--jobs", "1")
    assert code == 0 and "already loaded" in out and "ingest_errors table" not in out
    code, out, _ = _run(capsys, "ingest", str(clean), "--db", db, "--jobs", "1")
    assert code == 0 and "5 pages loaded" in out and "ingest_errors table" not in out
