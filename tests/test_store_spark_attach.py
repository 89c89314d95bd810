"""store.spark_attach: a Spark run's output opens only into a database that holds nothing yet."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_crawl, write_jsonl

from neardup import engine
from neardup.config import Config
from neardup.errors import NeardupError
from neardup.store import Store


def _attach(store: Store, out_dir: Path) -> None:
    config = Config()
    store.attach_parquet_run(
        str(out_dir),
        norm_key=config.norm_key,
        fingerprint_key=config.fingerprint_key,
        method=config.method,
        shingle_size=config.shingle_size,
        n_units=0,
        n_pairs=0,
        stats={},
        seconds=0.0,
        sources=[],
        has_html=False,
    )


def test_a_database_with_pages_is_refused_unchanged(tmp_path: Path) -> None:
    crawl = make_crawl()
    with Store(tmp_path / "crawl.duckdb") as store:
        engine.ingest_file(store, write_jsonl(tmp_path / "crawl.jsonl", crawl.records), Config(), jobs=1)
        with pytest.raises(NeardupError, match="already holds pages"):
            _attach(store, tmp_path / "out")
        assert store.count_pages() == len(crawl.records) and store.spark_run() is None


def test_a_database_with_a_loaded_source_and_no_page_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "empty_source.duckdb") as store:
        source_id = store.begin_source("rejects.jsonl", "0" * 64, "jsonl")
        store.finish_source(source_id, n_records=1, n_loaded=0, n_errors=1)
        with pytest.raises(NeardupError, match="already holds pages"):
            _attach(store, tmp_path / "out")
        assert len(store.sources()) == 1 and store.spark_run() is None
