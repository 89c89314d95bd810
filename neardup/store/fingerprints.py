"""Sketches of the content texts, and fingerprint sets: a setting's units (its distinct content texts) and
the candidate pairs between them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from ..fingerprint_set import FingerprintSet
from .analyses import renumber_source_analyses
from .connection import one_value, reads, transaction, writes
from .content import ContentRules, is_content

# One text per distinct content exact_key (any of its pages), for the texts that `content` and `where`
# select (conditions on `t`, a row of texts). The page is chosen on the small columns and its text
# fetched by a join: aggregating the texts themselves (any_value(text) ... GROUP BY) copied every text
# into the hash table (measured on 32k of 100k texts: 0.8-1.5 s -> 0.23 s).
_ONE_TEXT_PER_KEY = (
    "WITH pick AS (SELECT t.exact_key, min(t.page_id) AS page_id FROM texts t "
    "WHERE t.norm_key = ? AND {content} {where} GROUP BY t.exact_key) "
    "SELECT p.exact_key, t.text FROM pick p JOIN texts t ON t.page_id = p.page_id WHERE t.norm_key = ?"
)


# A condition on a `texts` row `t` (and its parameter, a fingerprint key): its text is no unit of that set.
_NOT_A_UNIT = (
    "AND NOT EXISTS (SELECT 1 FROM units u WHERE u.fingerprint_key = ? AND u.exact_key = t.exact_key)"
)


# The units of a fingerprint set (parameters: its key twice, then a list of source ids) whose texts are
# those of pages of the given sources: what a comparison of a few sources of a large database reads.
_SOURCE_UNITS = (
    "SELECT u.unit_id FROM units u WHERE u.fingerprint_key = ? AND u.exact_key IN ("
    "SELECT t.exact_key FROM texts t JOIN pages p ON p.page_id = t.page_id "
    "WHERE t.norm_key = (SELECT norm_key FROM fingerprint_sets WHERE fingerprint_key = ?) "
    "AND p.source_id IN (SELECT UNNEST(?::INTEGER[])))"
)


def _source_unit_params(fingerprint_key: str, source_ids: Sequence[int]) -> list[Any]:
    """The parameters of `_SOURCE_UNITS`."""
    return [fingerprint_key, fingerprint_key, [int(s) for s in source_ids]]


def insert_sketches(cur: duckdb.DuckDBPyConnection, sketches: pa.Table, sketch_key: str) -> None:
    """Insert a batch of sketches (exact_key, n_shingles, simhash, minhash), inside the caller's transaction."""
    cur.register("sketch_batch", sketches)
    cur.execute(
        "INSERT INTO sketches SELECT ?, exact_key, n_shingles, simhash, minhash FROM sketch_batch",
        [sketch_key],
    )
    cur.unregister("sketch_batch")


@dataclass(frozen=True, slots=True)
class UnitsFile:
    """The unit rows of a fingerprint set in a Parquet file (unit_id, exact_key, n_shingles, simhash,
    minhash: the `units` table's columns), written a batch at a time by the out-of-core fingerprint step, so
    no frame of every signature is built; `count` rows."""

    path: str
    count: int

    def __len__(self) -> int:
        return self.count


def _insert_fingerprints(
    cur: duckdb.DuckDBPyConnection, fingerprint_key: str, units: pd.DataFrame, pairs: pd.DataFrame
) -> None:
    """Insert unit and pair rows of a fingerprint set, inside the caller's transaction."""
    for table, frame, columns in (
        ("units", units, "unit_id, exact_key, n_shingles, simhash, minhash"),
        ("pairs", pairs, "a, b, hamming_bits, jaccard, containment"),
    ):
        if table == "units" and len(frame.columns) == 0:
            continue
        cur.register("fingerprint_batch", frame)
        cur.execute(f"INSERT INTO {table} SELECT ?, {columns} FROM fingerprint_batch", [fingerprint_key])
        cur.unregister("fingerprint_batch")


class FingerprintsMixin(ContentRules):
    """The store's part that keeps sketches and fingerprint sets."""

    @reads
    def count_units(self, norm_key: str, *, min_words: int | None = None) -> int:
        content, params = is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        return int(
            one_value(
                self.cursor()
                .execute(
                    f"SELECT count(DISTINCT exact_key) FROM texts t WHERE norm_key = ? AND {content}",
                    [norm_key, *params],
                )
                .fetchone()
            )
        )

    @writes
    def add_sketches(self, sketches: pa.Table, sketch_key: str) -> None:
        insert_sketches(self.cursor(), sketches, sketch_key)

    @reads
    def unsketched_texts(
        self,
        norm_key: str,
        sketch_key: str,
        batch_rows: int,
        *,
        min_words: int | None = None,
        since: int = -1,
    ) -> Iterator[pd.DataFrame]:
        """Distinct content texts (under `min_words`) that have no sketch under `sketch_key` yet, in batches;
        of the pages after page id `since` only."""
        content, params = is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        yield from self._batches(
            _ONE_TEXT_PER_KEY.format(
                content=content,
                where="AND t.page_id > ? AND NOT EXISTS (SELECT 1 FROM sketches s "
                "WHERE s.sketch_key = ? AND s.exact_key = t.exact_key)",
            ),
            [norm_key, *params, since, sketch_key, norm_key],
            batch_rows,
        )

    @reads
    def count_unsketched(
        self, norm_key: str, sketch_key: str, *, min_words: int | None = None, since: int = -1
    ) -> int:
        """`unsketched_texts`' count."""
        content, params = is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        return int(
            one_value(
                self.cursor()
                .execute(
                    f"SELECT count(DISTINCT exact_key) FROM texts t WHERE norm_key = ? AND {content} AND t.page_id > ? "
                    "AND NOT EXISTS (SELECT 1 FROM sketches s WHERE s.sketch_key = ? AND s.exact_key = t.exact_key)",
                    [norm_key, *params, since, sketch_key],
                )
                .fetchone()
            )
        )

    @reads
    def unit_texts(
        self, norm_key: str, exact_keys: Sequence[str] | Path, batch_rows: int
    ) -> Iterator[pd.DataFrame]:
        """(exact_key, text) of the given content texts, in batches, in no particular order; `exact_keys` a
        list, or a Parquet file of them (column exact_key: the keys of many units, never in memory)."""
        cur = self.cursor()  # the registration lives and dies with this cursor
        if isinstance(exact_keys, Path):
            wanted, params = "read_parquet(?)", [norm_key, str(exact_keys), norm_key]
        else:
            cur.register("wanted_units", pa.table({"exact_key": pa.array(list(exact_keys), pa.string())}))
            wanted, params = "wanted_units", [norm_key, norm_key]
        # the keys say which texts: no content condition beyond them
        sql = _ONE_TEXT_PER_KEY.format(
            content="true", where=f"AND t.exact_key IN (SELECT exact_key FROM {wanted})"
        )
        yield from self._batches(sql, params, batch_rows, cur)

    @reads
    def texts_in_ranges(self, norm_key: str, ranges: Sequence[tuple[int, int]]) -> pd.DataFrame:
        """(page_id, exact_key, text) of the pages whose ids fall in one of the inclusive `ranges`: a sample
        of pages in runs of consecutive ids, read through the page ids' min/max index, a few row groups per
        run (pages chosen one by one across the file decompress every row group's texts)."""
        if not ranges:
            return pd.DataFrame({"page_id": [], "exact_key": [], "text": []})
        within = " OR ".join(["(t.page_id BETWEEN ? AND ?)"] * len(ranges))
        params: list[Any] = [norm_key, *(int(x) for r in ranges for x in r)]
        return (
            self.cursor()
            .execute(
                f"SELECT t.page_id, t.exact_key, t.text FROM texts t WHERE t.norm_key = ? AND ({within})",
                params,
            )
            .df()
        )

    @reads
    def unit_sketches(
        self, norm_key: str, sketch_key: str, *, with_minhash: bool, min_words: int | None = None
    ) -> pd.DataFrame:
        """One row per distinct content text under `min_words` (exact_key order): exact_key, n_shingles,
        simhash[, minhash]."""
        return self._frame(
            self._unit_sketches_query(norm_key, sketch_key, with_minhash=with_minhash, min_words=min_words)
        )

    @reads
    def unit_sketch_batches(
        self,
        norm_key: str,
        sketch_key: str,
        batch_rows: int,
        *,
        with_minhash: bool,
        min_words: int | None = None,
        key_ranges: int = 1,
    ) -> Iterator[pa.RecordBatch]:
        """`unit_sketches` in Arrow record batches of at most `batch_rows`, in the same (exact_key) order: a
        batch's signatures in one buffer, with no bytes object or frame per unit. `key_ranges` > 1: sorted
        a range of exact keys at a time (SHA-256 hex keys split evenly by their first four digits; any key
        falls in one range), each query a share of the units: DuckDB's sort of the signatures does not spill
        (at 1M units it needs more than 128 MB)."""
        bounds = [f"{i * 65536 // key_ranges:04x}" for i in range(1, max(1, key_ranges))]
        for keys_from, keys_below in zip([None, *bounds], [*bounds, None], strict=True):
            sql, params = self._unit_sketches_query(
                norm_key,
                sketch_key,
                with_minhash=with_minhash,
                min_words=min_words,
                keys_from=keys_from,
                keys_below=keys_below,
            )
            yield from self.cursor().sql(sql, params=params).to_arrow_reader(batch_rows)

    def _frame(self, query: tuple[str, list[Any]]) -> pd.DataFrame:
        return self.cursor().execute(*query).df()

    def _unit_sketches_query(
        self,
        norm_key: str,
        sketch_key: str,
        *,
        with_minhash: bool,
        min_words: int | None,
        not_in_set: str | None = None,
        since: int = -1,
        keys_from: str | None = None,
        keys_below: str | None = None,
    ) -> tuple[str, list[Any]]:
        """The query of `unit_sketches` (and its parameters); of the exact keys in [keys_from, keys_below)
        where given."""
        cols = "s.exact_key, any_value(s.n_shingles) AS n_shingles, any_value(s.simhash) AS simhash" + (
            ", any_value(s.minhash) AS minhash" if with_minhash else ""
        )
        content, params = is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        where, more = ("", []) if not_in_set is None else (_NOT_A_UNIT, [not_in_set])
        # the range on both sides of the join: the texts' keys it hashes are the range's too
        within = ("AND {0}.exact_key >= ? " if keys_from is not None else "") + (
            "AND {0}.exact_key < ? " if keys_below is not None else ""
        )
        bounds = [k for k in (keys_from, keys_below) if k is not None]
        return (
            f"SELECT {cols} FROM sketches s SEMI JOIN "
            f"(SELECT exact_key FROM texts t WHERE norm_key = ? AND {content} AND t.page_id > ? {where} "
            f"{within.format('t')}) u "
            f"ON u.exact_key = s.exact_key WHERE s.sketch_key = ? {within.format('s')}"
            "GROUP BY s.exact_key ORDER BY s.exact_key",
            [norm_key, *params, since, *more, *bounds, sketch_key, *bounds],
        )

    @reads
    def appended_units(
        self,
        fingerprint_key: str,
        norm_key: str,
        sketch_key: str,
        *,
        with_minhash: bool,
        min_words: int | None = None,
        since: int | None = None,
    ) -> pd.DataFrame | None:
        """The sketches of the content texts that are not units of the stored fingerprint set of
        `fingerprint_key` (exact_key order, as `unit_sketches`), when every stored unit is still a content
        text (pages were only added since); None when one is not, or there is no stored set. `since`, the
        last page id the set covers where the pages up to it are unchanged (`pages_after`), says where the
        added pages start: only their texts are read, and the short texts of the pages before it that an
        added fetch of their page makes content (`SHORT_FETCH_KEYS`), which ask for the set to be computed again."""
        content, params = is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        cur = self.cursor()
        if (
            cur.execute(
                "SELECT 1 FROM fingerprint_sets WHERE fingerprint_key = ?", [fingerprint_key]
            ).fetchone()
            is None
        ):
            return None
        if since is not None and min_words is not None:
            kept = self._short_fetch_keys(norm_key, min_words)
            if (
                kept
                and cur.execute(
                    "SELECT 1 FROM texts t WHERE t.norm_key = ? AND t.page_id <= ? AND t.n_words < ? "
                    f"AND t.exact_key IN (SELECT UNNEST(?::VARCHAR[])) {_NOT_A_UNIT} LIMIT 1",
                    [norm_key, since, min_words, kept, fingerprint_key],
                ).fetchone()
            ):
                return None
        if since is None:
            gone = one_value(
                cur.execute(
                    "SELECT count(*) FROM units u WHERE u.fingerprint_key = ? AND NOT EXISTS "
                    f"(SELECT 1 FROM texts t WHERE t.norm_key = ? AND {content} AND t.exact_key = u.exact_key)",
                    [fingerprint_key, norm_key, *params],
                ).fetchone()
            )
            if gone:
                return None
        return self._frame(
            self._unit_sketches_query(
                norm_key,
                sketch_key,
                with_minhash=with_minhash,
                min_words=min_words,
                not_in_set=fingerprint_key,
                since=-1 if since is None else since,
            )
        )

    @reads
    def fingerprint_set(self, fingerprint_key: str) -> FingerprintSet | None:
        df = (
            self.cursor()
            .execute("SELECT * FROM fingerprint_sets WHERE fingerprint_key = ?", [fingerprint_key])
            .df()
        )
        return None if df.empty else FingerprintSet.from_row(df.iloc[0].to_dict())

    @writes
    def save_fingerprints(
        self,
        fingerprint_key: str,
        *,
        norm_key: str,
        method: str,
        shingle_size: int,
        units: pd.DataFrame | UnitsFile,
        pairs: pd.DataFrame,
        stats: dict[str, Any],
        seconds: float,
    ) -> None:
        """The fingerprint set in place of any before, in one transaction; `units` as a frame (unit_id,
        exact_key, n_shingles, simhash, minhash) or in a file (`UnitsFile`)."""
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        for table in ("fingerprint_sets", "units", "pairs"):
            cur.execute(f"DELETE FROM {table} WHERE fingerprint_key = ?", [fingerprint_key])
        if isinstance(units, UnitsFile):
            self._insert_units_file(cur, fingerprint_key, units)
            _insert_fingerprints(cur, fingerprint_key, pd.DataFrame(), pairs)
        else:
            _insert_fingerprints(cur, fingerprint_key, units, pairs)
        renumber_source_analyses(cur, fingerprint_key)
        cur.execute(
            "INSERT INTO fingerprint_sets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                fingerprint_key,
                norm_key,
                method,
                shingle_size,
                len(units),
                len(pairs),
                json.dumps(stats),
                seconds,
                datetime.now(UTC).replace(tzinfo=None),
            ],
        )
        cur.execute("COMMIT")

    def _insert_units_file(
        self, cur: duckdb.DuckDBPyConnection, fingerprint_key: str, units: UnitsFile
    ) -> None:
        cur.execute(
            "INSERT INTO units SELECT ?, unit_id, exact_key, n_shingles, simhash, minhash FROM read_parquet(?)",
            [fingerprint_key, units.path],
        )
        saved = cur.execute(
            "SELECT count(*) FROM units WHERE fingerprint_key = ?", [fingerprint_key]
        ).fetchall()[0][0]
        if saved != units.count:
            raise RuntimeError(f"fingerprint units: {saved:,} saved of the {units.count:,} written")

    @writes
    def append_fingerprints(
        self,
        fingerprint_key: str,
        *,
        units: pd.DataFrame | None,
        pairs: pd.DataFrame | None,
        stats: dict[str, Any],
        seconds: float,
    ) -> None:
        """Add units (ids after the stored ones) and the pairs they are in to a stored fingerprint set, and
        bring its counts, statistics and time up to date, in one transaction (units and pairs None: the
        statistics only)."""
        cur = self.cursor()
        with transaction(cur):
            if units is not None and pairs is not None:
                _insert_fingerprints(cur, fingerprint_key, units, pairs)
            cur.execute(
                "UPDATE fingerprint_sets SET n_units = n_units + ?, n_pairs = n_pairs + ?, stats = ?, "
                "seconds = ?, computed_at = ? WHERE fingerprint_key = ?",
                [
                    0 if units is None else len(units),
                    0 if pairs is None else len(pairs),
                    json.dumps(stats),
                    seconds,
                    datetime.now(UTC).replace(tzinfo=None),
                    fingerprint_key,
                ],
            )

    @reads
    def units(
        self,
        fingerprint_key: str,
        *,
        with_signatures: bool = False,
        with_exact_keys: bool = True,
        source_ids: Sequence[int] | None = None,
    ) -> pd.DataFrame:
        """The units of a fingerprint set by unit id; with `source_ids`, those of the sources' pages only."""
        cols = (
            "unit_id"
            + (", exact_key" if with_exact_keys else "")
            + ", n_shingles, simhash"
            + (", minhash" if with_signatures else "")
        )
        sources, params = "", []
        if source_ids is not None:
            sources, params = (
                f" AND unit_id IN ({_SOURCE_UNITS})",
                _source_unit_params(fingerprint_key, source_ids),
            )
        return (
            self.cursor()
            .execute(
                f"SELECT {cols} FROM units WHERE fingerprint_key = ?{sources} ORDER BY unit_id",
                [fingerprint_key, *params],
            )
            .df()
        )

    @reads
    def unit_columns(self, fingerprint_key: str, *, with_simhash: bool) -> dict[str, np.ndarray]:
        """`n_shingles` (and `simhash`) of a fingerprint set's units, indexed by unit id (0..n-1): read in
        stored order and placed by id, with no sort in DuckDB and no frame."""
        table = (
            self.cursor()
            .sql(
                f"SELECT unit_id, n_shingles{', simhash' if with_simhash else ''} FROM units WHERE fingerprint_key = ?",
                params=[fingerprint_key],
            )
            .to_arrow_table()
        )
        ids = np.asarray(table.column("unit_id").to_numpy(), dtype=np.int64)
        placed = {}
        for name, dtype in (("n_shingles", np.int64), ("simhash", np.uint64)):
            if name in table.column_names:
                placed[name] = np.empty(len(ids), dtype=dtype)
                placed[name][ids] = table.column(name).to_numpy()
        return placed

    @reads
    def unit_signatures(self, fingerprint_key: str) -> tuple[pd.DataFrame, pa.ChunkedArray]:
        """The units of a fingerprint set by unit id (as `units`) and their MinHash signatures' stored bytes
        as an Arrow column (`batches.signature_matrix` reads it without a Python object per unit)."""
        table = (
            self.cursor()
            .sql(
                "SELECT unit_id, exact_key, n_shingles, simhash, minhash FROM units WHERE fingerprint_key = ? "
                "ORDER BY unit_id",
                params=[fingerprint_key],
            )
            .to_arrow_table()
        )
        return table.drop_columns(["minhash"]).to_pandas(), table.column("minhash")

    @reads
    def unit_signature_batches(
        self, fingerprint_key: str, batch_rows: int = 65_536
    ) -> Iterator[tuple[np.ndarray, pa.Array]]:
        """(unit ids, their stored MinHash signature bytes) of a fingerprint set's units, a batch at a time
        in no particular order (a million units' are half a gigabyte: the caller places each batch by unit
        id, and DuckDB sorts nothing)."""
        sql = "SELECT unit_id, minhash FROM units WHERE fingerprint_key = ?"
        for batch in self.cursor().sql(sql, params=[fingerprint_key]).to_arrow_reader(batch_rows):
            yield batch.column(0).to_numpy().astype(np.int64), batch.column(1)

    @reads
    def pairs(self, fingerprint_key: str) -> pd.DataFrame:
        return (
            self.cursor()
            .execute(
                "SELECT a, b, hamming_bits, jaccard, containment FROM pairs WHERE fingerprint_key = ?",
                [fingerprint_key],
            )
            .df()
        )

    @reads
    def pair_arrays(
        self, fingerprint_key: str, *, source_ids: Sequence[int] | None = None
    ) -> dict[str, np.ndarray]:
        """Pairs as numpy arrays (fast path for re-clustering at a new threshold); with `source_ids`, the
        pairs of two units of the sources' pages (`units(source_ids=...)`) only."""
        query, params = (
            "SELECT a, b, hamming_bits, jaccard, containment FROM pairs WHERE fingerprint_key = ?",
            [],
        )
        if source_ids is not None:
            query = (
                f"WITH su AS MATERIALIZED ({_SOURCE_UNITS}) {query} "
                "AND a IN (SELECT unit_id FROM su) AND b IN (SELECT unit_id FROM su)"
            )
            params = _source_unit_params(fingerprint_key, source_ids)
        tbl = self.cursor().execute(query, [*params, fingerprint_key]).fetchnumpy()
        return {k: np.asarray(v) for k, v in tbl.items()}

    @reads
    def pairs_of_units(self, fingerprint_key: str, unit_ids: np.ndarray) -> dict[str, np.ndarray]:
        """The pairs (as `pair_arrays`) with at least one of the given units."""
        cur = self.cursor()
        cur.register("wanted_units", pa.table({"unit_id": np.asarray(unit_ids, dtype=np.int32)}))
        tbl = cur.execute(
            "SELECT a, b, hamming_bits, jaccard, containment FROM pairs WHERE fingerprint_key = ? "
            "AND (a IN (SELECT unit_id FROM wanted_units) OR b IN (SELECT unit_id FROM wanted_units))",
            [fingerprint_key],
        ).fetchnumpy()
        cur.unregister("wanted_units")
        return {k: np.asarray(v) for k, v in tbl.items()}
