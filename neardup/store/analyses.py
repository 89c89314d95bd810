"""Each source's own analysis at a setting (`compare.source_summary`): its numbers, hosts, clusters and its
units' clusters, kept while the fingerprint set it was computed from keeps its pairs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from .connection import StoreCore, one_value, reads, transaction, writes

# The tables of each source's own analysis (`Store.save_source_analysis`), the one with its key last.
SOURCE_ANALYSIS_TABLES = ("source_hosts", "source_clusters", "source_units", "source_analyses")


def pairs_digest(cur: duckdb.DuckDBPyConnection, fingerprint_key: str, analysis: list[Any]) -> str:
    """The count and a hash sum of the pairs of two units of a stored analysis (`analysis`: its source
    id and key), by the units' texts and the pairs' scores: the same whatever the unit ids."""
    return str(
        one_value(
            cur.execute(
                "SELECT count(*) || ':' || coalesce(sum(hash(least(ua.exact_key, ub.exact_key), "
                "greatest(ua.exact_key, ub.exact_key), p.hamming_bits, p.jaccard, p.containment)::HUGEINT), 0) "
                "FROM pairs p JOIN source_units ua ON ua.unit_id = p.a JOIN source_units ub ON ub.unit_id = p.b "
                "WHERE p.fingerprint_key = ? AND ua.source_id = ? AND ua.analysis_key = ? "
                "AND ub.source_id = ua.source_id AND ub.analysis_key = ua.analysis_key",
                [fingerprint_key, *analysis],
            ).fetchone()
        )
    )


def renumber_source_analyses(cur: duckdb.DuckDBPyConnection, fingerprint_key: str) -> None:
    """After a fingerprint set of `fingerprint_key` was written anew (inside that transaction): each
    source's stored analysis takes its units' new ids, and is dropped unless all its units are still
    units and the pairs between them are the ones it was computed from."""
    for source_id, analysis_key, digest in cur.execute(
        "SELECT source_id, analysis_key, pairs_digest FROM source_analyses WHERE fingerprint_key = ?",
        [fingerprint_key],
    ).fetchall():
        analysis = [source_id, analysis_key]
        cur.execute(
            "UPDATE source_units s SET unit_id = u.unit_id FROM units u WHERE u.fingerprint_key = ? "
            "AND u.exact_key = s.exact_key AND s.source_id = ? AND s.analysis_key = ?",
            [fingerprint_key, *analysis],
        )
        lost = one_value(
            cur.execute(
                "SELECT count(*) FROM source_units s WHERE s.source_id = ? AND s.analysis_key = ? AND NOT EXISTS "
                "(SELECT 1 FROM units u WHERE u.fingerprint_key = ? AND u.exact_key = s.exact_key)",
                [*analysis, fingerprint_key],
            ).fetchone()
        )
        if lost or pairs_digest(cur, fingerprint_key, analysis) != digest:
            for table in SOURCE_ANALYSIS_TABLES:
                cur.execute(f"DELETE FROM {table} WHERE source_id = ? AND analysis_key = ?", analysis)


class AnalysesMixin(StoreCore):
    """The store's part that keeps each source's own analysis (`compare`)."""

    @writes
    def save_source_analysis(
        self,
        source_id: int,
        analysis_key: str,
        *,
        fingerprint_key: str,
        numbers: dict[str, Any],
        hosts: pd.DataFrame,
        clusters: pd.DataFrame,
        units: pd.DataFrame,
    ) -> None:
        """Store one source's own analysis at a setting (replacing any stored before): its numbers, its
        hosts (host, pages, redundant, redundant_pct, in the report's order), its clusters (cluster_id,
        pages, first_page_id, first_url, first_exact_key) and its units' clusters (unit_id, exact_key,
        cluster_id)."""
        cur = self.cursor()
        key = [int(source_id), analysis_key]
        with transaction(cur):
            for table in SOURCE_ANALYSIS_TABLES:
                cur.execute(f"DELETE FROM {table} WHERE source_id = ? AND analysis_key = ?", key)
            for table, frame, columns in (
                (
                    "source_hosts",
                    hosts.assign(position=np.arange(len(hosts))),
                    "position, host, pages, redundant, redundant_pct",
                ),
                ("source_clusters", clusters, "cluster_id, pages, first_page_id, first_url, first_exact_key"),
                ("source_units", units, "unit_id, exact_key, cluster_id"),
            ):
                cur.register("analysis_batch", frame)
                cur.execute(f"INSERT INTO {table} SELECT ?, ?, {columns} FROM analysis_batch", key)
                cur.unregister("analysis_batch")
            cur.execute(
                "INSERT INTO source_analyses VALUES (?, ?, ?, ?, ?, ?)",
                [
                    *key,
                    fingerprint_key,
                    json.dumps(numbers),
                    pairs_digest(cur, fingerprint_key, key),
                    datetime.now(UTC).replace(tzinfo=None),
                ],
            )

    @reads
    def source_analysis(
        self, source_id: int, analysis_key: str
    ) -> tuple[dict[str, Any], pd.DataFrame] | None:
        """A source's stored analysis at a setting: its numbers and its hosts (as saved, in their order);
        None when none is stored (or the file, opened read-only at an older schema, has no such table)."""
        cur = self.cursor()
        key = [int(source_id), analysis_key]
        try:
            row = cur.execute(
                "SELECT numbers FROM source_analyses WHERE source_id = ? AND analysis_key = ?", key
            ).fetchone()
        except duckdb.CatalogException:
            return None
        if row is None:
            return None
        hosts = cur.execute(
            "SELECT host, pages, redundant, redundant_pct FROM source_hosts WHERE source_id = ? "
            "AND analysis_key = ? ORDER BY position",
            key,
        ).df()
        return json.loads(row[0]), hosts

    @reads
    def source_clusters(
        self, source_id: int, analysis_key: str, *, min_pages: int, cluster_ids: np.ndarray
    ) -> pd.DataFrame:
        """A source's stored clusters of at least `min_pages` pages and those of `cluster_ids`, by id."""
        cur = self.cursor()
        cur.register("wanted_clusters", pa.table({"cluster_id": np.asarray(cluster_ids, dtype=np.int64)}))
        df = cur.execute(
            "SELECT cluster_id, pages, first_page_id, first_url, first_exact_key FROM source_clusters "
            "WHERE source_id = ? AND analysis_key = ? AND (pages >= ? OR cluster_id IN "
            "(SELECT cluster_id FROM wanted_clusters)) ORDER BY cluster_id",
            [int(source_id), analysis_key, int(min_pages)],
        ).df()
        cur.unregister("wanted_clusters")
        return df

    @reads
    def source_unit_clusters(
        self, source_id: int, analysis_key: str, unit_ids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(unit ids, their clusters) of those of `unit_ids` that are units of the source's content pages,
        by unit id, from its stored analysis."""
        cur = self.cursor()
        cur.register("wanted_units", pa.table({"unit_id": np.asarray(unit_ids, dtype=np.int32)}))
        got = cur.execute(
            "SELECT unit_id, cluster_id FROM source_units WHERE source_id = ? AND analysis_key = ? "
            "AND unit_id IN (SELECT unit_id FROM wanted_units) ORDER BY unit_id",
            [int(source_id), analysis_key],
        ).fetchnumpy()
        cur.unregister("wanted_units")
        return np.asarray(got["unit_id"], dtype=np.int64), np.asarray(got["cluster_id"], dtype=np.int64)
