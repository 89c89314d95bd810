"""The suggested category of each copy against its representative (`categories.suggest_copies`), kept per
(suggestion key, copy, representative): a pair's category depends on its two pages and the key's setting, not
on the threshold, so the pairs a threshold forms are compared once; and the reads of the texts that compare
them, a page-id run at a time."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .connection import StoreCore, reads, writes

# Wanted page ids closer than this share one range of a text read: the ranges' min/max prune the texts'
# row groups and vectors (2,048 rows), so scattered pages decompress the vectors holding them only.
TEXT_RANGE_GAP = 2048
# Rows a batch of a streamed text read: DuckDB has a few batches in flight as it converts them to Arrow,
# and at ~4.5 KB a text (the bench crawl) batches of 8,192 rows added ~140 MB to a window's read at 300k
# pages (bench/RESULTS.md); 1,024 rows, ~5 MB, cost no measurable CPU more.
TEXT_BATCH_ROWS = 1024


def _id_ranges(page_ids: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """Inclusive (first, last) runs of the sorted `page_ids`, a new run where ids lie `gap` or more apart."""
    if not len(page_ids):
        return []
    breaks = np.flatnonzero(np.diff(page_ids) >= gap) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [len(page_ids)]]) - 1
    return list(zip(page_ids[starts].tolist(), page_ids[stops].tolist(), strict=True))


class SuggestionsMixin(StoreCore):
    """The store's part that keeps the copies' suggested categories."""

    @reads
    def suggestions(
        self, suggestion_key: str, page_ids: np.ndarray, representative_ids: np.ndarray
    ) -> pd.DataFrame:
        """(pair, category, newer_than_kept) of the (page, representative) pairs of the two arrays stored under
        `suggestion_key`; `pair` is the pair's position in the arrays. Empty for a file from before the table
        (read where it cannot be written)."""
        cur = self.cursor()
        wanted = pa.table(
            {
                "pair": pa.array(np.arange(len(page_ids), dtype=np.int64)),
                "page_id": pa.array(np.asarray(page_ids, dtype=np.int64)),
                "representative_id": pa.array(np.asarray(representative_ids, dtype=np.int64)),
            }
        )
        cur.register("wanted_pairs", wanted)
        try:
            found = cur.sql(
                "SELECT w.pair, s.category, s.newer_than_kept FROM wanted_pairs w JOIN suggested_categories s "
                "ON s.page_id = w.page_id AND s.representative_id = w.representative_id "
                "WHERE s.suggestion_key = ?",
                params=[suggestion_key],
            ).to_arrow_table()
        except duckdb.CatalogException:
            return pd.DataFrame({"pair": [], "category": [], "newer_than_kept": []})
        finally:
            cur.unregister("wanted_pairs")
        # the few category names once, not a string a pair (a threshold move at a million pages reads 150k)
        category = pc.dictionary_encode(found.column("category")).combine_chunks()
        return pd.DataFrame(
            {
                "pair": found.column("pair").to_numpy(),
                "category": pd.Categorical.from_codes(
                    category.indices.to_numpy(zero_copy_only=False),
                    categories=pd.Index(category.dictionary.to_pylist(), dtype=object),
                ),
                "newer_than_kept": found.column("newer_than_kept").to_numpy(),
            }
        )

    @writes
    def add_suggestions(
        self,
        suggestion_key: str,
        page_ids: np.ndarray,
        representative_ids: np.ndarray,
        categories: Sequence[str],
        newer_than_kept: np.ndarray,
    ) -> None:
        """Keep the suggested categories of these (page, representative) pairs under `suggestion_key`; a pair
        stored already (another process computed it meanwhile) keeps its row."""
        cur = self.cursor()
        batch = pa.table(
            {
                "page_id": pa.array(np.asarray(page_ids, dtype=np.int64)),
                "representative_id": pa.array(np.asarray(representative_ids, dtype=np.int64)),
                "category": pa.array(list(categories), pa.string()),
                "newer_than_kept": pa.array(np.asarray(newer_than_kept, dtype=bool)),
            }
        )
        cur.register("suggestion_batch", batch)
        try:  # one statement: it commits whole or not at all
            cur.execute(
                "INSERT INTO suggested_categories SELECT ?, b.page_id, b.representative_id, b.category, "
                "b.newer_than_kept FROM suggestion_batch b WHERE NOT EXISTS (SELECT 1 FROM suggested_categories "
                "s WHERE s.suggestion_key = ? AND s.page_id = b.page_id AND s.representative_id = "
                "b.representative_id)",
                [suggestion_key, suggestion_key],
            )
        finally:
            cur.unregister("suggestion_batch")

    @reads
    def first_pages_of_texts(self, norm_key: str, exact_keys: Sequence[str]) -> pd.DataFrame:
        """(exact_key, page_id): the first page (lowest id) of each of these texts, the page whose text
        stands for the key's (as `unit_texts` picks it)."""
        cur = self.cursor()
        cur.register("wanted_keys", pa.table({"exact_key": pa.array(list(exact_keys), pa.string())}))
        try:
            return cur.sql(
                "SELECT t.exact_key, min(t.page_id) AS page_id FROM texts t WHERE t.norm_key = ? "
                "AND t.exact_key IN (SELECT exact_key FROM wanted_keys) GROUP BY t.exact_key",
                params=[norm_key],
            ).df()
        finally:
            cur.unregister("wanted_keys")

    @reads
    def texts_of_pages(self, norm_key: str, page_ids: np.ndarray) -> dict[int, str]:
        """The texts of these pages (sorted ids), by page id: one query over the runs of ids
        (`TEXT_RANGE_GAP`), so pages of a few row groups decompress those row groups' texts, not the file's.
        The rows stream out a batch at a time and the wanted ids are picked from each batch here: a join on
        the wanted ids inside DuckDB may build its hash table on the texts side, and a window of a large
        crawl's copies (~1 GB of texts at 1M pages) would pass the memory a read-only open allows it."""
        ids = np.asarray(page_ids, dtype=np.int64)
        ranges = _id_ranges(ids, TEXT_RANGE_GAP)
        if not ranges:
            return {}
        within = " OR ".join(["(t.page_id BETWEEN ? AND ?)"] * len(ranges))
        wanted = pa.array(ids)
        out: dict[int, str] = {}
        reader = (
            self.cursor()
            .sql(
                f"SELECT t.page_id, t.text FROM texts t WHERE t.norm_key = ? AND ({within})",
                params=[norm_key, *(x for r in ranges for x in r)],
            )
            .to_arrow_reader(TEXT_BATCH_ROWS)
        )
        for batch in reader:
            kept = batch.filter(pc.is_in(batch["page_id"], value_set=wanted))
            out.update(zip(kept["page_id"].to_pylist(), kept["text"].to_pylist(), strict=True))
        return out
