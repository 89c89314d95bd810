"""store.suggestions: the copies' suggested categories kept per (key, copy, representative), and the reads of
texts by page id that compute them."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pytest
from conftest import page_html, words_text, write_jsonl

from neardup import engine
from neardup.config import Config
from neardup.store import Store, suggestions

NORM = Config().norm_key


def test_texts_of_pages_are_those_pages_texts_however_the_ids_are_grouped(
    loaded: tuple[Store, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """However the ids fall into ranges, and however many rows each streamed batch has."""
    store, _ = loaded
    every = store.texts_in_ranges(NORM, [(0, 10**9)]).set_index("page_id")["text"].to_dict()
    wanted = np.array(sorted(every)[::3], dtype=np.int64)
    for gap in (1, 2, suggestions.TEXT_RANGE_GAP):
        for batch_rows in (1, 4, suggestions.TEXT_BATCH_ROWS):
            monkeypatch.setattr(suggestions, "TEXT_RANGE_GAP", gap)
            monkeypatch.setattr(suggestions, "TEXT_BATCH_ROWS", batch_rows)
            assert store.texts_of_pages(NORM, wanted) == {int(i): every[int(i)] for i in wanted}
    assert store.texts_of_pages(NORM, np.array([], dtype=np.int64)) == {}


def test_id_ranges_cover_the_ids_and_part_where_they_lie_apart() -> None:
    ids = np.array([1, 2, 5, 40, 41, 100])
    assert suggestions._id_ranges(ids, 4) == [(1, 5), (40, 41), (100, 100)]
    assert suggestions._id_ranges(ids, 1000) == [(1, 100)]


def test_first_pages_of_texts_are_each_keys_lowest_page_id(loaded: tuple[Store, object]) -> None:
    store, _ = loaded
    texts = store.texts_in_ranges(NORM, [(0, 10**9)])
    want = texts.groupby("exact_key")["page_id"].min().to_dict()
    got = store.first_pages_of_texts(NORM, sorted(want))
    assert dict(zip(got["exact_key"], got["page_id"], strict=True)) == want


def test_a_pair_stored_twice_keeps_one_row_and_another_key_is_another_pair(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.add_suggestions(
            "k", np.array([3, 5]), np.array([1, 1]), ["URL variant", "syndicated"], np.array([0, 1])
        )
        store.add_suggestions(
            "k", np.array([5, 7]), np.array([1, 2]), ["other", "print version"], np.array([0, 0])
        )
        got = store.suggestions("k", np.array([7, 5, 3, 9]), np.array([2, 1, 1, 1])).sort_values("pair")
        assert got["pair"].tolist() == [0, 1, 2]
        assert got["category"].tolist() == ["print version", "syndicated", "URL variant"]
        assert got["newer_than_kept"].tolist() == [False, True, False]
        assert store.suggestions("other key", np.array([3]), np.array([1])).empty
        assert store.suggestions("k", np.array([3]), np.array([2])).empty  # another representative


def test_a_file_from_before_the_table_reads_none_read_only_and_gains_it_when_opened_to_write(
    tmp_path: Path, loaded: tuple[Store, object]
) -> None:
    store, _ = loaded
    old = tmp_path / "old.duckdb"
    with store.writing():
        store.cursor().execute("CHECKPOINT")
    shutil.copy(store.path, old)
    con = duckdb.connect(str(old))
    con.execute("DROP TABLE IF EXISTS suggested_categories")
    con.close()
    with Store(old, read_only=True) as read_only:
        assert read_only.suggestions("k", np.array([1]), np.array([0])).empty
    with Store(old) as writable:
        writable.add_suggestions("k", np.array([1]), np.array([0]), ["URL variant"], np.array([False]))
        assert writable.suggestions("k", np.array([1]), np.array([0]))["category"].tolist() == ["URL variant"]


def test_texts_of_pages_more_than_duckdbs_memory_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read-only open caps DuckDB's memory (256 MB by default), and the Clusters page and `neardup open`
    # read the texts of up to 262,144 copies at once (~1 GB at 1M pages): here 35 MB of texts under 24 MB.
    rng = random.Random(3)
    recs = [
        {"url": f"https://big.example.com/a/{i}", "html": page_html(f"A {i}", words_text(rng, 450))}
        for i in range(12_000)
    ]
    path = tmp_path / "big.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, write_jsonl(tmp_path / "crawl.jsonl", recs), Config(), jobs=1)
        engine.ensure_fingerprints(store, Config(), jobs=1)
        every = store.texts_in_ranges(NORM, [(0, 10**9)]).set_index("page_id")["text"].to_dict()
    assert sum(map(len, every.values())) > 32 * 2**20
    monkeypatch.setenv("NEARDUP_DUCKDB_MEMORY", "24MB")
    ids = np.array(sorted(every), dtype=np.int64)
    with Store(path, read_only=True) as store:
        assert store.texts_of_pages(NORM, ids) == every
        assert store.texts_of_pages(NORM, ids[::7]) == {int(i): every[int(i)] for i in ids[::7]}
