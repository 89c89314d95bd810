"""A `neardup spark` run's Parquet output, read in place: the database's pages, texts, units, pairs and
rejects become views over it (or tables copied from it), and its meta rows say where it lives."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import duckdb

from ..errors import NeardupError
from ..fingerprint_set import COVERAGE
from .connection import StoreCore, one_value, reads, sql_literal, writes
from .schema import kind_of_reason_sql


def spark_run_of(cur: duckdb.DuckDBPyConnection) -> dict[str, str] | None:
    """Where the database's data lives if it was opened from a Spark run (dir, mode, keys), else None."""
    rows = cur.execute("SELECT key, value FROM meta WHERE key LIKE 'spark_%'").fetchall()
    return {k.removeprefix("spark_"): v for k, v in rows} or None


def run_page_units_sql(run: dict[str, str] | None, norm_key: str, fingerprint_key: str) -> str | None:
    """A query of each content page's unit (page_id, unit_id), in page id order, from the Parquet of a Spark
    run read in place (`run`: `spark_run_of`), whose pages carry their unit in the run's own setting; None
    for any other database or setting. The run wrote the unit beside each page: no join of a million text
    keys."""
    if (
        run is None
        or run.get("mode") != "view"
        or run.get("norm_key") != norm_key
        or run.get("fingerprint_key") != fingerprint_key
    ):
        return None
    pages = sql_literal(run["dir"].rstrip("/") + "/pages/*.parquet")
    return (
        f"SELECT page_id::BIGINT AS page_id, unit_id::BIGINT AS unit_id FROM read_parquet({pages}) "
        "WHERE unit_id IS NOT NULL"
    )


class SparkAttachMixin(StoreCore):
    """The store's part that opens a Spark run's output."""

    @writes
    def attach_parquet_run(
        self,
        out_dir: str,
        *,
        norm_key: str,
        fingerprint_key: str,
        method: str,
        shingle_size: int,
        n_units: int,
        n_pairs: int,
        stats: dict[str, Any],
        seconds: float,
        sources: list[dict[str, Any]],
        has_html: bool,
        copy: bool = False,
        error_kinds: bool = True,
    ) -> None:
        """Replace pages, texts, units, pairs and ingest_errors of this (new) database by views over the
        Parquet a Spark run wrote under `out_dir` (`copy=True`: tables loaded from it). Labels stay a table.
        `error_kinds=False`: the run's `errors` have no `kind` column (an older output format)."""
        held = self.cursor().execute(
            "SELECT (SELECT count(*) FROM pages) + (SELECT count(*) FROM sources WHERE status = 'done')"
        )
        if one_value(held.fetchone()):
            raise NeardupError(
                f"{self.path} already holds pages: open a Spark output into a new database file"
            )

        lit = sql_literal  # DuckDB cannot bind parameters inside a view definition

        def src(name: str) -> str:
            return f"read_parquet({lit(out_dir.rstrip('/') + '/' + name + '/*.parquet')})"

        html = "html" if has_html else "NULL::VARCHAR"
        kind = "TABLE" if copy else "VIEW"
        selects = {
            "pages": f"SELECT page_id::BIGINT AS page_id, source_id::INTEGER AS source_id, line::BIGINT AS line, url, "
            f"canonical_url, host, fetched_at::TIMESTAMP AS fetched_at, status::INTEGER AS status, "
            f"{html} AS html, NULL::VARCHAR AS text_in, md5, rel_canonical, extra::JSON AS extra, "
            f"NULL::BIGINT AS html_block, NULL::INTEGER AS html_start, NULL::INTEGER AS html_bytes "
            f"FROM {src('pages')}",
            "texts": f"SELECT {lit(norm_key)} AS norm_key, page_id::BIGINT AS page_id, text, title, "
            f"n_words::INTEGER AS n_words, exact_key, degenerate FROM {src('pages')}",
            # Spark has no unsigned type: the fingerprint was written as the signed long with the same bits.
            "units": f"SELECT {lit(fingerprint_key)} AS fingerprint_key, unit_id::INTEGER AS unit_id, exact_key, "
            f"n_shingles::INTEGER AS n_shingles, "
            + (
                "CASE WHEN simhash < 0 THEN (simhash::HUGEINT + 18446744073709551616)::UBIGINT "
                "ELSE simhash::UBIGINT END AS simhash, NULL::BLOB AS minhash "
                if method == "simhash"
                else "NULL::UBIGINT AS simhash, minhash::BLOB AS minhash "
            )
            + f"FROM {src('units')}",
            "pairs": f"SELECT {lit(fingerprint_key)} AS fingerprint_key, a::INTEGER AS a, b::INTEGER AS b, "
            f"hamming_bits::SMALLINT AS hamming_bits, jaccard::DOUBLE AS jaccard, "
            f"containment::DOUBLE AS containment FROM {src('pairs')}",
            "ingest_errors": f"SELECT source_id::INTEGER AS source_id, source, line::BIGINT AS line, "
            f"{'kind' if error_kinds else kind_of_reason_sql('reason')} AS kind, reason FROM {src('errors')}",
        }
        now = datetime.now(UTC).replace(tzinfo=None)
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        for name, select in selects.items():
            cur.execute(f"DROP TABLE {name}")
            cur.execute(f"CREATE {kind} {name} AS {select}")
        if not copy:
            # Views over the run's files hold the pages the set was made from, and no others ever: the set
            # is current by its coverage (one pass over the page ids), where a set without one is checked
            # by counting every text and unit through the Parquet (seconds at 1M pages).
            last, n_pages = cur.execute(
                "SELECT coalesce(max(page_id), -1), count(*) FROM pages"
            ).fetchone() or (-1, 0)
            stats = {**stats, COVERAGE: {"last_page_id": int(last), "pages": int(n_pages)}}
        for s in sources:
            cur.execute(
                "INSERT INTO sources VALUES (?, ?, ?, 'spark', 'done', ?, ?, ?, ?)",
                [
                    s["source_id"],
                    s["path"],
                    f"spark:{out_dir}:{s['source_id']}",
                    s["n_records"],
                    s["n_loaded"],
                    s["n_errors"],
                    now,
                ],
            )
        cur.execute(
            "INSERT INTO fingerprint_sets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                fingerprint_key,
                norm_key,
                method,
                shingle_size,
                n_units,
                n_pairs,
                json.dumps(stats),
                seconds,
                now,
            ],
        )
        cur.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [
                ("spark_dir", out_dir),
                ("spark_mode", "copy" if copy else "view"),
                ("spark_fingerprint_key", fingerprint_key),
                ("spark_norm_key", norm_key),
            ],
        )
        cur.execute("COMMIT")

    @reads
    def spark_run(self) -> dict[str, str] | None:
        """Where this database's data lives if it was opened from a Spark run (dir, mode, keys), else None."""
        return spark_run_of(self.cursor())
