"""The buckets of a MinHash fingerprint set's candidate search too large to expand (`capped_buckets`),
counted once per set, and the signatures of a few units: what a replay of the search on one pair reads."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import duckdb
import numpy as np
import pyarrow as pa

from .connection import StoreCore, reads, transaction, writes


@dataclass(frozen=True, slots=True)
class StoredCappedBuckets:
    """The capped buckets kept for a fingerprint set, as it was when they were counted."""

    n_units: int
    set_computed_at: datetime | None
    bucket_cap: int
    columns: dict[str, np.ndarray]  # lsh_table, band, bucket, size


class BucketsMixin(StoreCore):
    """The store's part that keeps the capped buckets of each MinHash fingerprint set."""

    @reads
    def capped_buckets(self, fingerprint_key: str) -> StoredCappedBuckets | None:
        """The capped buckets kept for `fingerprint_key`; None: none counted, or a file older than the tables.
        Whether they are of the set there is now is the caller's to check (`n_units`, `set_computed_at`)."""
        cur = self.cursor()
        try:
            row = cur.execute(
                "SELECT n_units, set_computed_at, bucket_cap FROM capped_bucket_sets WHERE fingerprint_key = ?",
                [fingerprint_key],
            ).fetchone()
        except duckdb.CatalogException:
            return None
        if row is None:
            return None
        columns = cur.execute(
            "SELECT lsh_table, band, bucket, size FROM capped_buckets WHERE fingerprint_key = ? "
            "ORDER BY lsh_table, band, bucket",
            [fingerprint_key],
        ).fetchnumpy()
        return StoredCappedBuckets(
            int(row[0]), row[1], int(row[2]), {k: np.asarray(v) for k, v in columns.items()}
        )

    @writes
    def save_capped_buckets(
        self,
        fingerprint_key: str,
        *,
        n_units: int,
        set_computed_at: datetime | None,
        bucket_cap: int,
        lsh_table: np.ndarray,
        band: np.ndarray,
        bucket: np.ndarray,
        size: np.ndarray,
    ) -> None:
        """Keep the capped buckets of `fingerprint_key`'s set (of `n_units` units, computed at
        `set_computed_at`) in place of any kept before, in one transaction."""
        rows = pa.table(
            {
                "fingerprint_key": pa.array([fingerprint_key] * len(size), pa.string()),
                "lsh_table": pa.array(np.asarray(lsh_table, dtype=np.int32)),
                "band": pa.array(np.asarray(band, dtype=np.int32)),
                "bucket": pa.array(np.asarray(bucket, dtype=np.uint64)),
                "size": pa.array(np.asarray(size, dtype=np.int64)),
            }
        )
        cur = self.cursor()
        with transaction(cur):
            for table in ("capped_bucket_sets", "capped_buckets"):
                cur.execute(f"DELETE FROM {table} WHERE fingerprint_key = ?", [fingerprint_key])
            cur.execute(
                "INSERT INTO capped_bucket_sets VALUES (?, ?, ?, ?)",
                [fingerprint_key, n_units, set_computed_at, bucket_cap],
            )
            cur.register("capped_bucket_rows", rows)
            cur.execute("INSERT INTO capped_buckets SELECT * FROM capped_bucket_rows")
            cur.unregister("capped_bucket_rows")

    @reads
    def unit_signature_batches_of(
        self, fingerprint_key: str, unit_ids: np.ndarray, batch_rows: int = 65_536
    ) -> Iterator[tuple[np.ndarray, pa.Array]]:
        """(unit ids, their stored MinHash signature bytes) of the given units of a fingerprint set, a batch
        at a time in no particular order: the caller places each batch by unit id (a quarter of a
        million-page crawl's units is 120 MB of signatures, which a sorted read would hold twice)."""
        cur = self.cursor()
        cur.register("wanted_units", pa.table({"unit_id": pa.array(np.asarray(unit_ids, dtype=np.int64))}))
        try:
            reader = cur.sql(
                "SELECT u.unit_id, u.minhash FROM units u WHERE u.fingerprint_key = ? "
                "AND u.unit_id IN (SELECT unit_id FROM wanted_units)",
                params=[fingerprint_key],
            ).to_arrow_reader(batch_rows)
            for batch in reader:
                yield batch.column(0).to_numpy().astype(np.int64), batch.column(1)
        finally:
            cur.unregister("wanted_units")

    @reads
    def unit_signatures_of(
        self, fingerprint_key: str, unit_ids: np.ndarray
    ) -> tuple[np.ndarray, pa.ChunkedArray]:
        """(unit ids, their stored MinHash signature bytes) of the given units of a fingerprint set, by unit id."""
        ids = pa.table({"unit_id": pa.array(np.asarray(unit_ids, dtype=np.int64))})
        cur = self.cursor()
        cur.register("wanted_units", ids)
        try:
            table = cur.sql(
                "SELECT u.unit_id, u.minhash FROM units u WHERE u.fingerprint_key = ? "
                "AND u.unit_id IN (SELECT unit_id FROM wanted_units) ORDER BY u.unit_id",
                params=[fingerprint_key],
            ).to_arrow_table()
        finally:
            cur.unregister("wanted_units")
        return table.column("unit_id").to_numpy().astype(np.int64), table.column("minhash")
