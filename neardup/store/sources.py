"""The sources a database holds (one crawl dump each): beginning and finishing a load, a bulk load's
checkpoints, and taking a source out with everything it wrote."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TypedDict, cast

import duckdb
import pandas as pd

from ..errors import NeardupError
from .analyses import SOURCE_ANALYSIS_TABLES
from .connection import CHECKPOINT_THRESHOLD, StoreCore, one_value, reads, writes
from .parsed_urls import PARSED_URL_TABLES
from .spark_attach import spark_run_of


class SourceRow(TypedDict):
    """A row of `sources` as `SourcesMixin.source_by_hash` reads it."""

    source_id: int
    path: str
    sha256: str
    format: str
    status: str  # 'loading' until the whole file is in, then 'done'
    # DEFAULT 0, and set when the load is done: never null
    n_records: int
    n_loaded: int
    n_errors: int
    loaded_at: object  # pandas.Timestamp, NaT until the load is done


class SourcesMixin(StoreCore):
    """The store's part that keeps the sources."""

    def _has_incomplete_sources(self) -> bool:
        with self._lease(write=False):
            return bool(
                one_value(
                    self.cursor().execute("SELECT count(*) FROM sources WHERE status <> 'done'").fetchone()
                )
            )

    @reads
    def source_by_hash(self, sha256: str) -> SourceRow | None:
        df = self.cursor().execute("SELECT * FROM sources WHERE sha256 = ?", [sha256]).df()
        return None if df.empty else cast(SourceRow, df.iloc[0].to_dict())

    @writes
    def begin_source(self, path: str, sha256: str, fmt: str) -> int:
        cur = self.cursor()
        source_id = one_value(cur.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sources").fetchone())
        cur.execute(
            "INSERT INTO sources (source_id, path, sha256, format, status) VALUES (?, ?, ?, ?, 'loading')",
            [source_id, path, sha256, fmt],
        )
        return int(source_id)

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """No automatic checkpoints until the block ends: the loader checkpoints itself where a row group of
        `pages` is full (`add_ingested(checkpoint=True)`), so each row group is compressed once instead of
        at every 512 MB of log, and the file has no dead blocks from re-written row groups
        (bench/RESULTS.md). Memory stays capped:
        DuckDB spills the un-checkpointed rows to its temp directory."""
        with self.writing():
            self.cursor().execute("SET checkpoint_threshold = '1TB'")
            try:
                yield
            finally:
                self.cursor().execute("SET checkpoint_threshold = ?", [CHECKPOINT_THRESHOLD])
                self.cursor().execute("CHECKPOINT")

    @writes
    def finish_source(self, source_id: int, *, n_records: int, n_loaded: int, n_errors: int) -> None:
        self.cursor().execute(
            "UPDATE sources SET status = 'done', n_records = ?, n_loaded = ?, n_errors = ?, loaded_at = ? "
            "WHERE source_id = ?",
            [n_records, n_loaded, n_errors, datetime.now(UTC).replace(tzinfo=None), source_id],
        )

    def _delete_source_rows(self, cur: duckdb.DuckDBPyConnection, source_id: int) -> None:
        """A source's pages, their texts, its errors and the sketches no remaining text has (the ingest
        workers write sketches with the pages), inside the caller's transaction. What is kept by page id
        goes too: the ids of the last source's pages are given again to the next source's."""
        cur.execute(
            "DELETE FROM texts WHERE page_id IN (SELECT page_id FROM pages WHERE source_id = ?)", [source_id]
        )
        cur.execute(
            "DELETE FROM suggested_categories WHERE page_id IN (SELECT page_id FROM pages WHERE source_id = ?) "
            "OR representative_id IN (SELECT page_id FROM pages WHERE source_id = ?)",
            [source_id, source_id],
        )
        for table in PARSED_URL_TABLES:  # a parse of every page there was, its codes shared by them all
            cur.execute(f"DELETE FROM {table}")
        if self._blocks:  # a block holds pages of one source only
            cur.execute(
                "DELETE FROM html_blocks WHERE block_id IN (SELECT html_block FROM pages WHERE source_id = ?)",
                [source_id],
            )
        cur.execute("DELETE FROM pages WHERE source_id = ?", [source_id])
        cur.execute("DELETE FROM warc_payloads WHERE source_id = ?", [source_id])
        cur.execute("DELETE FROM ingest_errors WHERE source_id = ?", [source_id])
        cur.execute("DELETE FROM sources WHERE source_id = ?", [source_id])
        cur.execute("DELETE FROM sketches WHERE exact_key NOT IN (SELECT exact_key FROM texts)")
        for table in SOURCE_ANALYSIS_TABLES:  # a later source may take its id
            cur.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])

    @writes
    def drop_source(self, source_id: int) -> None:
        """Remove everything a source wrote (used when its load fails part-way, before any fingerprints)."""
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        self._delete_source_rows(cur, source_id)
        cur.execute("COMMIT")

    @writes
    def remove_source(self, source_id: int) -> int:
        """Take a loaded source out: its pages, texts, sketches and errors, and every fingerprint set (units,
        pairs), which the next analysis recomputes from the pages left. Labels stay: they are keyed by URL and
        content, so they apply again if those pages come back. Returns the pages removed."""
        cur = self.cursor()
        if spark_run_of(cur):
            raise NeardupError(
                f"{self.path} reads a Spark run's Parquet: its sources cannot be removed one by one"
            )
        n_pages = int(
            one_value(cur.execute("SELECT count(*) FROM pages WHERE source_id = ?", [source_id]).fetchone())
        )
        cur.execute("BEGIN TRANSACTION")
        self._delete_source_rows(cur, source_id)
        for table in ("pairs", "units", "fingerprint_sets", *SOURCE_ANALYSIS_TABLES):
            cur.execute(f"DELETE FROM {table}")
        cur.execute("COMMIT")
        return n_pages

    @writes
    def drop_incomplete_sources(self) -> None:
        for (source_id,) in (
            self.cursor().execute("SELECT source_id FROM sources WHERE status <> 'done'").fetchall()
        ):
            self.drop_source(source_id)

    @reads
    def sources(self) -> pd.DataFrame:
        return (
            self.cursor()
            .execute(
                "SELECT source_id, path, format, n_records, n_loaded, n_errors, loaded_at FROM sources "
                "WHERE status = 'done' ORDER BY source_id"
            )
            .df()
        )
