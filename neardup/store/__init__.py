"""The only module that talks to DuckDB. Every query binds its parameters with `?`.

One `Store` per database file. DuckDB connections are not thread-safe; every method takes its own
`cursor()` so a Streamlit app can share one `Store` between sessions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import NeardupError, SchemaError
from ..htmlcodec import html_codec
from ..rejects import Reject, RejectKind
from .analyses import AnalysesMixin
from .connection import (
    ALIAS,
    CHECKPOINT_THRESHOLD,
    DEFAULT_DB,
    DUCKDB_MEMORY,
    LINGER_S,
    LOCK_WAIT_S,
    ROW_GROUP_ROWS,
    StoreCore,
    one_value,
    reads,
    sql_literal,
    writes,
)
from .content import ContentRules, degenerate_sql
from .fingerprints import FingerprintsMixin, insert_sketches
from .schema import (
    BEFORE_REJECT_KINDS,
    SCHEMA_VERSION,
    UPGRADABLE_VERSIONS,
    SchemaMixin,
    is_database_file,
    kind_of_reason_sql,
)
from .sources import SourcesMixin
from .spark_attach import SparkAttachMixin

__all__ = [
    "ALIAS",
    "CHECKPOINT_THRESHOLD",
    "DEFAULT_DB",
    "DUCKDB_MEMORY",
    "LABEL_CLOCK_SKEW",
    "LINGER_S",
    "LOCK_WAIT_S",
    "ROW_GROUP_ROWS",
    "SCHEMA_VERSION",
    "UPGRADABLE_VERSIONS",
    "Store",
    "is_database_file",
    "kind_of_reason_sql",
    "sql_literal",
]

# An imported label may carry a time this far ahead of this machine's clock (two machines' clocks differ).
LABEL_CLOCK_SKEW = timedelta(minutes=5)
# The columns of labels.csv (Store.labels), as import_labels reads and inserts them.
_LABEL_COLUMNS = (
    "url_a",
    "md5_a",
    "url_b",
    "md5_b",
    "label",
    "category",
    "note",
    "labeler",
    "labeled_at",
    "setting",
)


_PAGE_COLUMNS = (
    "page_id, source_id, line, url, canonical_url, host, fetched_at, status, html, text_in, md5, rel_canonical, "
    "extra, html_block, html_start, html_bytes"
)
_BLOCK_COLUMNS = ("html_block", "html_start", "html_bytes")


class Store(
    SchemaMixin, SourcesMixin, FingerprintsMixin, ContentRules, AnalysesMixin, SparkAttachMixin, StoreCore
):
    """The database file, attached with row groups of `ROW_GROUP_ROWS`.

    A held store (the default) opens the file when created and keeps it until `close`: read-write, or
    read-only. An `on_demand` store (the app; `neardup report`) holds nothing at rest: each method opens
    the file for as long as it runs (and `LINGER_S` after), read-only for reads and read-write for writes,
    so other processes can use the file in between. DuckDB lets one process open a file read-write, or
    any number read-only while none writes; an open that finds the file locked waits up to `lock_wait_s`
    (a label is written in milliseconds), then raises `DatabaseLocked` naming the process that holds it.
    Several steps that write (an ingest, computing fingerprints) run inside `writing()`: one open for all.

    `bulk=True` is for a process that has the file to itself for a load (`neardup ingest`, the benchmark):
    no write-ahead log, so commits are durable at checkpoints only (the loader checkpoints where a row
    group fills up and at its end; `close` checkpoints). With a log each page's HTML is written twice, to the
    log and then to the file, and DuckDB's default 122,880-row groups spill past the memory cap before their
    checkpoint; bench/RESULTS.md has the measurements. A crash
    mid-load leaves the source 'loading', and the next open drops it, as without `bulk`. Labels are never
    written through a bulk store. Every store attaches the file with the same row group size: a checkpoint
    under DuckDB's default size rewrote a file of 16k-row groups whole (17 s, twice the size at 100k
    pages); files written with larger row groups open as they are.

    A file is refused, before anything is written to it, unless it is a neardup database or empty."""

    def __init__(
        self,
        path: str | Path = DEFAULT_DB,
        *,
        read_only: bool = False,
        bulk: bool = False,
        on_demand: bool = False,
        lock_wait_s: float | None = None,
        linger_s: float | None = None,
    ) -> None:
        super().__init__(
            path,
            read_only=read_only,
            bulk=bulk,
            on_demand=on_demand,
            lock_wait_s=lock_wait_s,
            linger_s=linger_s,
        )
        self._upgrade_from: str | None = None  # an older schema version _init_schema upgrades
        # `_short_fetch_keys` by (norm_key, min_words, the pages' last id and count, the texts' count)
        self._short_fetches: dict[tuple[str, int, int, int, int], list[str]] = {}
        self.created = False  # whether this store made the file's schema (it was new, or empty)
        self._blocks = True
        exists = Path(self.path).exists()
        if read_only and not exists:
            raise NeardupError(f"no database at {self.path}")
        # An existing file is checked read-only first: a foreign or damaged file is refused unwritten.
        with self._lease(write=not exists, bulk=self.bulk and not exists):
            missing = self._check_schema()
        if not on_demand:
            self._lease_enter(write=not read_only, bulk=self.bulk, pin=True)
        self._closed = False
        try:
            if not read_only and (missing or self._upgrade_from or self._has_incomplete_sources()):
                self._init_schema()
        except BaseException:
            self.close()
            raise

    @writes
    def _init_schema(self) -> None:
        """The file's schema made or upgraded (`_make_schema`), and a load that died part-way dropped, under
        one write lease."""
        self._make_schema()
        self.drop_incomplete_sources()

    # --- pages ------------------------------------------------------------------------------
    @reads
    def next_page_id(self) -> int:
        return int(
            one_value(self.cursor().execute("SELECT coalesce(max(page_id), 0) + 1 FROM pages").fetchone())
        )

    @writes
    def add_ingested(
        self,
        batch: pa.Table,
        source_id: int,
        norm_key: str,
        sketches: pa.Table | None = None,
        sketch_key: str = "",
        *,
        checkpoint: bool = False,
    ) -> None:
        """Pages, their normalized texts and (optionally) sketches from one ingest batch, in one transaction;
        then a checkpoint if asked (see `bulk_load`). The batch holds its HTML compressed, as an ingest
        worker builds it (`batches.html_blocks`): page ids are consecutive, so a block's id, the page id
        of its first page, is each page's id less its `html_back`."""
        cur = self.cursor()
        cur.register("ingest_batch", batch)
        cur.execute("BEGIN TRANSACTION")
        if sketches is not None:
            insert_sketches(cur, sketches, sketch_key)
        cur.execute(
            "INSERT INTO html_blocks SELECT page_id - html_back, html_block_raw, html_block_data "
            "FROM ingest_batch WHERE html_block_data IS NOT NULL"
        )
        cur.execute(
            f"INSERT INTO pages ({_PAGE_COLUMNS}) SELECT page_id, ?, line, url, canonical_url, host, fetched_at, "
            "status, NULL, text_in, md5, rel_canonical, extra, page_id - html_back, html_start, html_bytes "
            "FROM ingest_batch",
            [source_id],
        )
        cur.execute(
            "INSERT INTO texts SELECT ?, page_id, text, title, n_words, exact_key, degenerate FROM ingest_batch",
            [norm_key],
        )
        cur.execute(
            "INSERT INTO warc_payloads SELECT d, page_id, ? FROM ("
            "  SELECT json_extract_string(extra, '$.payload_digest') AS d, page_id FROM ingest_batch"
            "  WHERE contains(extra, '\"payload_digest\"')) WHERE d IS NOT NULL",
            [source_id],
        )
        cur.execute("COMMIT")
        cur.unregister("ingest_batch")
        if checkpoint:
            cur.execute("CHECKPOINT")

    @writes
    def add_errors(self, source_id: int, source: str, errors: Sequence[tuple[int | None, Reject]]) -> None:
        """Record rejected records as (line, `Reject`), in one insert from Arrow (`executemany` takes ~5 ms a
        row)."""
        if not errors:
            return
        lines = [line for line, _ in errors]
        kinds = [reject.kind for _, reject in errors]
        details = [reject.detail for _, reject in errors]
        cur = self.cursor()
        cur.register(
            "error_batch",
            pa.table(
                {
                    "line": pa.array(lines, pa.int64()),
                    "kind": pa.array(kinds, pa.string()),
                    "reason": pa.array(details, pa.string()),
                }
            ),
        )
        cur.execute(
            "INSERT INTO ingest_errors SELECT ?, ?, line, kind, reason FROM error_batch", [source_id, source]
        )
        cur.unregister("error_batch")

    @writes
    def discard_lines(self, source_id: int, first_line: int) -> tuple[int, list[str]]:
        """Remove the pages and rejects of a source from `first_line` on (the part of a file that turned out
        corrupt); returns how many pages went and the kinds of the rejects that went."""
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        n_pages = one_value(
            cur.execute(
                "SELECT count(*) FROM pages WHERE source_id = ? AND line >= ?", [source_id, first_line]
            ).fetchone()
        )
        kinds = [
            k
            for (k,) in cur.execute(
                "SELECT kind FROM ingest_errors WHERE source_id = ? AND line >= ?", [source_id, first_line]
            ).fetchall()
        ]
        cur.execute(
            "DELETE FROM texts WHERE page_id IN (SELECT page_id FROM pages WHERE source_id = ? AND line >= ?)",
            [source_id, first_line],
        )
        cur.execute("DELETE FROM pages WHERE source_id = ? AND line >= ?", [source_id, first_line])
        self._drop_unused_blocks(cur)
        cur.execute("DELETE FROM ingest_errors WHERE source_id = ? AND line >= ?", [source_id, first_line])
        cur.execute("COMMIT")
        return int(n_pages), kinds

    @writes
    def reject_duplicate_records(self, source_id: int, source: str) -> int:
        """Move records of this source that repeat an earlier record (same URL, fetch time and bytes)
        to `ingest_errors`. A re-fetch (another time) is kept: it is what the audit is about."""
        cur = self.cursor()
        dup = (
            "SELECT p.page_id, p.line, first.line AS first_line, p.url, p.extra FROM pages p JOIN ("
            "  SELECT url, fetched_at, md5, min(page_id) AS first_id, arg_min(line, page_id) AS line FROM pages "
            "  GROUP BY url, fetched_at, md5 HAVING count(*) > 1) first "
            "ON p.url = first.url AND p.fetched_at IS NOT DISTINCT FROM first.fetched_at AND p.md5 = first.md5 "
            "WHERE p.source_id = ? AND p.page_id <> first.first_id"
        )
        cur.execute("BEGIN TRANSACTION")
        cur.execute(f"CREATE OR REPLACE TEMP TABLE duplicate_rows AS {dup}", [source_id])
        n = one_value(cur.execute("SELECT count(*) FROM duplicate_rows").fetchone())
        cur.execute(
            "INSERT INTO ingest_errors SELECT ?, ?, line, ?, "
            "? || ': same url, fetched_at and content as line ' || first_line "
            # a WARC record: where it is, as its other rejects say
            "|| coalesce(' (offset ' || (extra->>'warc_offset') || ', ' || url || ')', '') FROM duplicate_rows",
            [source_id, source, RejectKind.DUPLICATE, RejectKind.DUPLICATE],
        )
        cur.execute("DELETE FROM texts WHERE page_id IN (SELECT page_id FROM duplicate_rows)")
        cur.execute("DELETE FROM pages WHERE page_id IN (SELECT page_id FROM duplicate_rows)")
        if n:
            self._drop_unused_blocks(cur)
        cur.execute("DROP TABLE duplicate_rows")
        cur.execute("COMMIT")
        return int(n)

    def _drop_unused_blocks(self, cur: duckdb.DuckDBPyConnection) -> None:
        """The HTML blocks none of whose pages is left (the caller's transaction): a block may hold pages
        on both sides of a partial delete."""
        if self._blocks:
            cur.execute(
                "DELETE FROM html_blocks WHERE block_id NOT IN "
                "(SELECT DISTINCT html_block FROM pages WHERE html_block IS NOT NULL)"
            )

    def _html_columns(self, alias: str = "") -> str:
        """The columns `_inflate` reads the raw HTML from, as NULLs where `pages` lacks the block columns."""
        if self._blocks:
            return ", ".join(f"{alias}{c}" for c in ("html", *_BLOCK_COLUMNS))
        return f"{alias}html, NULL::BIGINT AS html_block, NULL::INTEGER AS html_start, NULL::INTEGER AS html_bytes"

    def _inflate(
        self, cur: duckdb.DuckDBPyConnection, table: pa.Table, kept: dict[int, bytes] | None = None
    ) -> pa.Table:
        """`table` (with `_html_columns`) with each page's raw HTML in `html`, from its block where it is
        in one; the block columns dropped. Each block is read and inflated once per call; `kept` carries
        the last one over to the next call (a block may straddle two batches of a scan in page order)."""
        blocks = table.column("html_block")
        if blocks.null_count == table.num_rows:
            return table.drop_columns(list(_BLOCK_COLUMNS))
        ids = [int(b) for b in np.unique(blocks.drop_null().to_numpy())]
        inflated = {b: kept[b] for b in ids if kept and b in kept}
        wanted = [b for b in ids if b not in inflated]
        if wanted:
            codec = html_codec()
            for block_id, raw_bytes, data in cur.execute(
                "SELECT block_id, raw_bytes, data FROM html_blocks WHERE block_id BETWEEN ? AND ? "
                "AND block_id = ANY(?)",
                [wanted[0], wanted[-1], wanted],
            ).fetchall():
                inflated[block_id] = codec.decompress(data, decompressed_size=raw_bytes, asbytes=True)
        # The column is built from the inflated bytes as they are (valid UTF-8: the ingest encoded it).
        pieces: list[bytes] = []
        valid = np.zeros(table.num_rows, bool)
        rows = zip(
            table.column("html").to_pylist(),
            blocks.to_pylist(),
            *(table.column(c).to_pylist() for c in _BLOCK_COLUMNS[1:]),
            strict=True,
        )
        for i, (html, block, start, size) in enumerate(rows):
            if block is not None:
                if block not in inflated:
                    raise NeardupError(
                        f"{self.path} is damaged: the HTML block {block} of a page is missing; re-ingest its source"
                    )
                pieces.append(inflated[block][start : start + size])
                valid[i] = True
            else:  # in the column (loaded under an older schema), or none
                pieces.append(b"" if html is None else html.encode("utf-8"))
                valid[i] = html is not None
        if kept is not None:
            kept.clear()
            kept[ids[-1]] = inflated[ids[-1]]
        offsets = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum([len(p) for p in pieces], out=offsets[1:])
        column = pa.Array.from_buffers(
            pa.large_string(),
            len(pieces),
            [pa.array(valid).buffers()[1], pa.py_buffer(offsets), pa.py_buffer(b"".join(pieces))],
        )
        if offsets[-1] < 2**31:  # the type DuckDB gives (a batch of the largest pages stays large)
            column = column.cast(pa.string())
        i = table.schema.get_field_index("html")
        return table.set_column(i, "html", column).drop_columns(list(_BLOCK_COLUMNS))

    @reads
    def html_bytes(self) -> int:
        """Bytes of raw HTML (UTF-8) in `pages`, without inflating it."""
        blocks = "coalesce(sum(html_bytes), 0)" if self._blocks else "0"
        return int(
            one_value(
                self.cursor()
                .execute(f"SELECT coalesce(sum(strlen(html)), 0) + {blocks} FROM pages")
                .fetchone()
            )
        )

    @reads
    def count_pages(self) -> int:
        return int(one_value(self.cursor().execute("SELECT count(*) FROM pages").fetchone()))

    def _reject_kind_sql(self) -> str:
        """The `kind` of an `ingest_errors` row: its column, or in a file of an older schema opened read-only
        (so not upgraded) the kind its reason begins with."""
        return kind_of_reason_sql("reason") if self._upgrade_from in BEFORE_REJECT_KINDS else "kind"

    @reads
    def ingest_errors(self, limit: int | None = None) -> pd.DataFrame:
        """The rejected records: source, line, kind (a `RejectKind` value), reason."""
        sql = (
            f"SELECT source, line, {self._reject_kind_sql()} AS kind, reason FROM ingest_errors "
            "ORDER BY source_id, line"
        )
        if limit is not None:
            return self.cursor().execute(sql + " LIMIT ?", [limit]).df()
        return self.cursor().execute(sql).df()

    @reads
    def rejects_by_kind(self) -> dict[str, int]:
        """How many records were rejected, by kind (a `RejectKind` value), most first."""
        rows = (
            self.cursor()
            .execute(
                f"SELECT {self._reject_kind_sql()} AS kind, count(*) AS n FROM ingest_errors "
                "GROUP BY kind ORDER BY n DESC, kind"
            )
            .fetchall()
        )
        return {str(kind): int(n) for kind, n in rows}

    @reads
    def pages_without_text(
        self, norm_key: str, batch_rows: int, *, since: int = -1
    ) -> Iterator[pd.DataFrame]:
        """Pages not yet normalized under `norm_key` (of those after page id `since`), in batches (memory
        stays flat)."""
        cur, kept = self.cursor(), dict[int, bytes]()
        for rb in cur.sql(
            f"SELECT page_id, {self._html_columns()}, text_in, status FROM pages p WHERE p.page_id > ? AND "
            "NOT EXISTS (SELECT 1 FROM texts t WHERE t.norm_key = ? AND t.page_id > ? AND t.page_id = p.page_id) "
            "ORDER BY page_id",
            params=[since, norm_key, since],
        ).to_arrow_reader(batch_rows):
            yield self._inflate(self.cursor(), pa.Table.from_batches([rb]), kept).to_pandas()

    @reads
    def count_pages_without_text(self, norm_key: str, *, since: int = -1) -> int:
        """The pages (after page id `since`) not yet normalized under `norm_key`."""
        return int(
            one_value(
                self.cursor()
                .execute(
                    "SELECT count(*) FROM pages p WHERE p.page_id > ? AND NOT EXISTS "
                    "(SELECT 1 FROM texts t WHERE t.norm_key = ? AND t.page_id > ? AND t.page_id = p.page_id)",
                    [since, norm_key, since],
                )
                .fetchone()
            )
        )

    @reads
    def page_coverage(self) -> dict[str, int]:
        """The pages there are, as a fingerprint set records them (`pages_after`): the last page id and the
        count. Page ids only grow (`next_page_id`), so pages added later have greater ids."""
        last, n = self.cursor().execute(
            "SELECT coalesce(max(page_id), -1), count(*) FROM pages"
        ).fetchone() or (
            -1,
            0,
        )
        return {"last_page_id": int(last), "pages": int(n)}

    @reads
    def pages_after(self, coverage: dict[str, int]) -> int | None:
        """How many pages came after `coverage` (`page_coverage`) was taken, or None when a page it counted
        is gone (the pages up to its last id are not the same count). One pass over the page ids."""
        last = int(coverage["last_page_id"])
        upto, after = self.cursor().execute(
            "SELECT count(*) FILTER (WHERE page_id <= ?), count(*) FILTER (WHERE page_id > ?) FROM pages",
            [last, last],
        ).fetchone() or (0, 0)
        return None if int(upto) != int(coverage["pages"]) else int(after)

    @writes
    def add_texts(self, batch: pa.Table | pd.DataFrame) -> None:
        if isinstance(batch, pd.DataFrame):  # DuckDB scans Arrow faster than object columns
            batch = pa.Table.from_pandas(batch, preserve_index=False)
        cur = self.cursor()
        cur.register("text_batch", batch)
        cur.execute(
            "INSERT INTO texts SELECT norm_key, page_id, text, title, n_words, exact_key, degenerate FROM text_batch"
        )
        cur.unregister("text_batch")

    @reads
    def page_table(
        self, norm_key: str, *, min_words: int | None = None, source_ids: Sequence[int] | None = None
    ) -> pd.DataFrame:
        """One row per page (no HTML): what clustering and the report need; `degenerate` under `min_words`.
        With `source_ids`, the pages of those sources only."""
        degenerate, params = degenerate_sql(min_words, self._short_fetch_keys(norm_key, min_words))
        sources, source_params = "", []
        if source_ids is not None:
            sources, source_params = (
                " AND p.source_id IN (SELECT UNNEST(?::INTEGER[]))",
                [[int(s) for s in source_ids]],
            )
        return (
            self.cursor()
            .execute(
                "SELECT p.page_id, p.source_id, p.line, p.url, p.canonical_url, p.host, p.fetched_at, p.status, p.md5, p.rel_canonical, "
                f"t.exact_key, {degenerate} AS degenerate, t.n_words FROM pages p JOIN texts t ON t.page_id = p.page_id "
                f"WHERE t.norm_key = ?{sources} ORDER BY p.page_id",
                [*params, norm_key, *source_params],
            )
            .df()
        )

    @reads
    def page_records(self, page_ids: np.ndarray, batch_rows: int) -> Iterator[pa.Table]:
        """The loaded fields (page_id, url, html, text_in, fetched_at, status, extra) of the given pages,
        in batches of at most `batch_rows`, in page id order; `page_ids` must be sorted. Each batch reads
        one page id range, which the row groups' min/max statistics narrow to the row groups holding it
        (pages are stored in page id order), so memory stays at one batch of HTML."""
        ids = np.asarray(page_ids, dtype=np.int64)
        cur, kept = self.cursor(), dict[int, bytes]()
        for start in range(0, len(ids), batch_rows):
            chunk = ids[start : start + batch_rows]
            cur.register("wanted_pages", pa.table({"page_id": pa.array(chunk, pa.int64())}))
            table = cur.sql(
                f"SELECT page_id, url, {self._html_columns()}, text_in, fetched_at, status, extra::VARCHAR AS extra "
                "FROM pages WHERE page_id BETWEEN ? AND ? AND page_id IN (SELECT page_id FROM wanted_pages) "
                "ORDER BY page_id",
                params=[int(chunk[0]), int(chunk[-1])],
            ).to_arrow_table()
            cur.unregister("wanted_pages")
            yield self._inflate(cur, table, kept)

    @reads
    def extra_fields(self, batch_rows: int = 65_536) -> Iterator[list[str]]:
        """The `extra` JSON of every page that has one, in batches (no HTML is read)."""
        for df in self._batches(
            "SELECT extra::VARCHAR AS extra FROM pages WHERE extra IS NOT NULL", [], batch_rows
        ):
            yield df["extra"].tolist()

    @reads
    def page(
        self, page_id: int, norm_key: str, *, min_words: int | None = None, source: bool = True
    ) -> dict[str, Any] | None:
        """A page with its text; `degenerate` under `min_words`. `source=False` leaves out the raw `html` and
        `text_in` (`page_source` reads them): they are most of a page's bytes."""
        degenerate, params = degenerate_sql(min_words, self._short_fetch_keys(norm_key, min_words))
        columns = (
            "p.* EXCLUDE (" + ", ".join(("html", "text_in", *(_BLOCK_COLUMNS if self._blocks else ()))) + ")"
        )
        cur = self.cursor()
        df = cur.execute(
            f"SELECT {columns}, t.text, t.title, t.n_words, t.exact_key, {degenerate} AS degenerate FROM pages p "
            "LEFT JOIN texts t ON t.page_id = p.page_id AND t.norm_key = ? WHERE p.page_id = ?",
            [*params, norm_key, page_id],
        ).df()
        if df.empty:
            return None
        row: dict[str, Any] = df.iloc[0].to_dict()
        if source:
            row["html"], row["text_in"] = self._source(cur, page_id)
        return row

    def _source(self, cur: duckdb.DuckDBPyConnection, page_id: int) -> tuple[str | None, str | None]:
        """A page's raw HTML and `text_in`: one block is inflated, the page's neighbours with it."""
        table = cur.sql(
            f"SELECT {self._html_columns()}, text_in FROM pages WHERE page_id = ?", params=[page_id]
        ).to_arrow_table()
        if not table.num_rows:
            raise KeyError(f"page {page_id} is not in the database")
        row = self._inflate(cur, table).to_pylist()[0]
        return row["html"], row["text_in"]

    @reads
    def count_warc_revisits(self, source_id: int) -> int:
        """The pages of a source loaded from WARC revisit records."""
        return int(
            one_value(
                self.cursor()
                .execute(
                    "SELECT count(*) FROM pages WHERE source_id = ? "
                    "AND json_extract_string(extra, '$.warc_type') = 'revisit'",
                    [source_id],
                )
                .fetchone()
            )
        )

    @reads
    def page_by_payload(
        self, payload_digest: str, url: str | None = None, fetched_at: datetime | None = None
    ) -> tuple[int, str | None, int | None, str | None] | None:
        """(page_id, raw HTML, status, extra) of a stored page with this WARC payload digest: the one at
        `url` fetched at `fetched_at` if there is one, else at `url`, else the first. One index lookup on the
        digest, then the candidates' rows by page id (their row groups only)."""
        cur = self.cursor()
        ids = [
            r[0]
            for r in cur.execute(
                "SELECT page_id FROM warc_payloads WHERE payload_digest = ? LIMIT 1000", [payload_digest]
            ).fetchall()
        ]
        if not ids:
            return None
        rows = cur.execute(
            "SELECT page_id, url, fetched_at, status, extra FROM pages WHERE page_id IN "
            "(SELECT unnest(?::BIGINT[])) AND page_id BETWEEN ? AND ? ORDER BY page_id",
            [ids, min(ids), max(ids)],
        ).fetchall()
        if not rows:
            return None
        best = min(
            rows,
            key=lambda r: (
                url is not None and r[1] != url,
                fetched_at is not None and r[2] != fetched_at,
                r[0],
            ),
        )
        html, _ = self._source(cur, best[0])
        return int(best[0]), html, best[3], best[4]

    @reads
    def page_source(self, page_id: int) -> str:
        """A page as loaded: its raw HTML, or the text it came as when the dump had no HTML ("" if neither)."""
        html, text_in = self._source(self.cursor(), page_id)
        return html if html is not None else text_in or ""

    # --- labels -----------------------------------------------------------------------------
    _LABEL_COLUMNS = "url_a, md5_a, url_b, md5_b, label, category, note, labeler, labeled_at, setting"
    _LABEL_UPSERT = (
        f"INSERT INTO labels ({_LABEL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (url_a, md5_a, url_b, md5_b, labeler) DO UPDATE SET label = excluded.label, "
        "category = excluded.category, note = excluded.note, labeled_at = excluded.labeled_at, "
        "setting = excluded.setting WHERE excluded.labeled_at > labels.labeled_at"
    )
    # Tabs of one app are threads of one process sharing one DuckDB instance, where two transactions
    # writing one table at once conflict ("Conflict on update"): label writes take turns on this lock.
    _LABEL_WRITES = threading.Lock()

    @writes
    def _write_labels(self, rows: list[list[Any]]) -> list[bool]:
        """Upsert label rows in one transaction, all of them or none: whether each was kept (a stored label
        of the same pair and labeler given later than the row's `labeled_at` stays)."""
        kept = []
        with self._LABEL_WRITES:
            cur = self.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                for row in rows:
                    kept.append(one_value(cur.execute(self._LABEL_UPSERT, row).fetchone()) > 0)
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")
        return kept

    def write_labels(self, labels: Sequence[Mapping[str, Any]]) -> list[bool]:
        """Store labels (`labels()` rows: url_a, md5_a, url_b, md5_b, label, category, note, labeler,
        labeled_at, setting as JSON text) in one transaction, committed when this returns; whether each
        was kept. The latest label of a pair and labeler by `labeled_at` is kept, whichever is written
        last (two tabs of one labeler, a label queued while the file was busy)."""
        rows = []
        for r in labels:
            (a, ma), (b, mb) = sorted(((r["url_a"], r["md5_a"] or ""), (r["url_b"], r["md5_b"] or "")))
            rows.append(
                [
                    a,
                    ma,
                    b,
                    mb,
                    r["label"],
                    r["category"],
                    r["note"],
                    r["labeler"] or "",
                    r["labeled_at"],
                    r["setting"],
                ]
            )
        return self._write_labels(rows)

    @writes
    def record_label(
        self,
        url_a: str,
        url_b: str,
        *,
        label: str,
        md5_a: str = "",
        md5_b: str = "",
        category: str | None = None,
        note: str | None = None,
        labeler: str | None = None,
        setting: dict[str, Any] | None = None,
        labeled_at: datetime | None = None,
    ) -> bool:
        """Store one label at once, replacing this labeler's label of the same pair given before
        `labeled_at` (default: now); a later one stays, and this returns False. Another labeler's label of
        the pair stays. A side is (canonical URL, MD5 of the page's bytes); sides are stored in sorted
        order."""
        (a, ma), (b, mb) = sorted(((url_a, md5_a or ""), (url_b, md5_b or "")))
        when = labeled_at or datetime.now(UTC).replace(tzinfo=None)
        setting_json = json.dumps(setting) if setting else None
        return self._write_labels([[a, ma, b, mb, label, category, note, labeler or "", when, setting_json]])[
            0
        ]

    @reads
    def label_of(
        self, url_a: str, url_b: str, *, md5_a: str = "", md5_b: str = "", labeler: str | None = None
    ) -> dict[str, Any] | None:
        """This labeler's label of a pair (all columns), or None."""
        (a, ma), (b, mb) = sorted(((url_a, md5_a or ""), (url_b, md5_b or "")))
        df = (
            self.cursor()
            .execute(
                f"SELECT {self._LABEL_COLUMNS} FROM labels WHERE url_a = ? AND md5_a = ? AND url_b = ? AND md5_b = ? "
                "AND labeler = ?",
                [a, ma, b, mb, labeler or ""],
            )
            .df()
        )
        return None if df.empty else df.iloc[0].to_dict()

    @writes
    def delete_label(
        self, url_a: str, url_b: str, *, md5_a: str = "", md5_b: str = "", labeler: str | None = None
    ) -> None:
        """Remove this labeler's label of a pair (undo)."""
        (a, ma), (b, mb) = sorted(((url_a, md5_a or ""), (url_b, md5_b or "")))
        self.cursor().execute(
            "DELETE FROM labels WHERE url_a = ? AND md5_a = ? AND url_b = ? AND md5_b = ? AND labeler = ?",
            [a, ma, b, mb, labeler or ""],
        )

    @writes
    def take_back_label(
        self,
        url_a: str,
        url_b: str,
        *,
        md5_a: str = "",
        md5_b: str = "",
        labeler: str | None = None,
        given_at: datetime,
        previous: Mapping[str, Any] | None = None,
    ) -> bool:
        """Undo: the label this labeler gave the pair at `given_at` replaced by `previous` (a `label_of`
        row: the label it replaced), or removed when there was none; False, and nothing changed, when the
        stored label is no longer the one given at `given_at` (a later one replaced it)."""
        (a, ma), (b, mb) = sorted(((url_a, md5_a or ""), (url_b, md5_b or "")))
        key = [a, ma, b, mb, labeler or ""]
        where = "url_a = ? AND md5_a = ? AND url_b = ? AND md5_b = ? AND labeler = ? AND labeled_at = ?"
        with self._LABEL_WRITES:
            cur = self.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                if previous is None:
                    n = cur.execute(f"DELETE FROM labels WHERE {where}", [*key, given_at]).fetchone()
                else:
                    setting = _cell(previous.get("setting"))
                    n = cur.execute(
                        "UPDATE labels SET label = ?, category = ?, note = ?, labeled_at = ?, setting = ? "
                        f"WHERE {where}",
                        [
                            previous["label"],
                            _cell(previous.get("category")),
                            _cell(previous.get("note")),
                            pd.Timestamp(previous["labeled_at"]).to_pydatetime(),
                            setting if setting is None or isinstance(setting, str) else json.dumps(setting),
                            *key,
                            given_at,
                        ],
                    ).fetchone()
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")
        return bool(one_value(n))

    @writes
    def import_labels(self, labels: pd.DataFrame, *, now: datetime | None = None) -> int:
        """Merge labels (e.g. a colleague's labels.csv) and return how many rows of the table were added or
        changed. All or nothing: every row is checked first, and any bad row refuses the whole file with a
        message naming the row (1 = the first data row) and the column.

        Columns: `url_a`, `url_b`, `label` (one of LABELS); optional `md5_a` / `md5_b` (32 hex digits; missing:
        the label applies to the URLs), `category`, `note`, `labeler`, `labeled_at` (ISO 8601, UTC unless it
        names an offset; not later than `now` plus LABEL_CLOCK_SKEW) and `setting` (a JSON object). Each row
        is inserted as it is; on a key the table already holds, a timed row replaces the stored label when it
        is newer, and a row without a time never replaces one (it is stored at `now` when its key is new).
        Within one file only the newest row of a key is kept. Text cells defused by `csvsafe.to_csv` are
        restored."""
        from ..csvsafe import DEFUSED_PATTERN
        from ..labels import LABELS

        need = ["url_a", "url_b", "label"]
        missing = [c for c in need if c not in labels.columns]
        if missing:
            raise NeardupError(f"a labels file needs the columns {need}; it lacks {missing}")
        now = now or datetime.now(UTC).replace(tzinfo=None)
        columns = {"row": pa.array(np.arange(1, len(labels) + 1, dtype=np.int64))}
        for name in _LABEL_COLUMNS:
            if name not in labels.columns:
                columns[name] = pa.nulls(len(labels), pa.string())
                continue
            try:  # strings (and NaN for empty cells) convert without a copy through Python objects
                columns[name] = pa.array(labels[name], type=pa.string(), from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                columns[name] = pa.array(labels[name].astype("string"), type=pa.string(), from_pandas=True)
        # every cell as text, '' for an empty one, with the quote csvsafe.to_csv put before a formula removed
        cells = ", ".join(
            f"CASE WHEN regexp_matches({c}, ?) THEN {c}[2:] ELSE coalesce({c}, '') END AS {c}"
            for c in _LABEL_COLUMNS
        )
        cur = self.cursor()
        cur.execute("SET TimeZone = 'UTC'")  # this cursor only: a time without an offset is UTC
        cur.register("label_file", pa.table(columns))
        try:
            cur.execute(
                f"CREATE TEMP TABLE label_import AS SELECT row, {cells} FROM label_file",
                [DEFUSED_PATTERN] * len(_LABEL_COLUMNS),
            )
            self._check_labels(cur, labels=LABELS, latest=now + LABEL_CLOCK_SKEW)
            return self._merge_labels(cur, now)
        finally:
            cur.execute("DROP TABLE IF EXISTS temp.label_import")
            cur.unregister("label_file")

    @staticmethod
    def _check_labels(cur: duckdb.DuckDBPyConnection, *, labels: Sequence[str], latest: datetime) -> None:
        """Raise one NeardupError naming the first bad rows (row, column, value, rule), or return."""
        ts = "TRY_CAST(NULLIF(labeled_at, '') AS TIMESTAMPTZ)"
        rules: list[tuple[str, str, str, list[Any]]] = [
            ("url_a", "url_a = ''", "is empty", []),
            ("url_b", "url_b = ''", "is empty", []),
            (
                "label",
                f"label NOT IN ({', '.join('?' * len(labels))})",
                f"is not one of {', '.join(labels)}",
                list(labels),
            ),
            (
                "md5_a",
                "md5_a <> '' AND NOT regexp_full_match(md5_a, '[0-9a-f]{32}')",
                "is not an MD5 (32 hex digits)",
                [],
            ),
            (
                "md5_b",
                "md5_b <> '' AND NOT regexp_full_match(md5_b, '[0-9a-f]{32}')",
                "is not an MD5 (32 hex digits)",
                [],
            ),
            ("labeled_at", f"labeled_at <> '' AND {ts} IS NULL", "is not an ISO 8601 time", []),
            (
                "labeled_at",
                f"{ts} > ?::TIMESTAMP",
                f"is in the future (after {latest:%Y-%m-%d %H:%M} UTC)",
                [latest],
            ),
            (
                "setting",
                "setting <> '' AND (NOT json_valid(setting) OR json_type(setting::JSON) <> 'OBJECT')",
                "is not a JSON object",
                [],
            ),
        ]
        found: list[tuple[int, str]] = []
        total = 0
        for column, where, rule, params in rules:
            n, first = cur.execute(
                f"SELECT count(*), list([row::VARCHAR, {column}] ORDER BY row)[1:3] FROM label_import WHERE {where}",
                params,
            ).fetchall()[0]
            total += n
            for row, value in first or []:
                found.append((int(row), f"row {row}, column {column}: {_shown(value)} {rule}"))
        if total:
            found.sort()
            more = f" (and {total - min(len(found), 3)} more)" if total > 3 else ""
            raise NeardupError(
                "labels file refused, nothing imported: " + "; ".join(m for _, m in found[:3]) + more
            )

    def _merge_labels(self, cur: duckdb.DuckDBPyConnection, now: datetime) -> int:
        """Insert the checked `label_import` rows in one transaction; the table's key decides what conflicts."""
        keys = cur.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() WHERE database_name = ? "
            "AND table_name = 'labels' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE') "
            "ORDER BY constraint_type = 'PRIMARY KEY' DESC",
            [ALIAS],
        ).fetchall()
        if not keys:
            raise SchemaError(f"{self.path}: the labels table has no key to merge imported labels on")
        key = keys[0][0]
        nullable = dict(
            cur.execute(
                "SELECT column_name, is_nullable FROM duckdb_columns() WHERE database_name = ? AND table_name = 'labels'",
                [ALIAS],
            ).fetchall()
        )

        def text(name: str) -> str:  # an empty optional cell is NULL where the table allows it
            return f"NULLIF({name}, '')" if nullable.get(name, True) else name

        swap = "(url_a > url_b OR (url_a = url_b AND md5_a > md5_b))"
        select = (
            f"SELECT row, CASE WHEN {swap} THEN url_b ELSE url_a END AS url_a, "
            f"CASE WHEN {swap} THEN md5_b ELSE md5_a END AS md5_a, "
            f"CASE WHEN {swap} THEN url_a ELSE url_b END AS url_b, "
            f"CASE WHEN {swap} THEN md5_a ELSE md5_b END AS md5_b, label, "
            f"{text('category')} AS category, {text('note')} AS note, {text('labeler')} AS labeler, "
            "coalesce(TRY_CAST(NULLIF(labeled_at, '') AS TIMESTAMPTZ)::TIMESTAMP, ?::TIMESTAMP) AS labeled_at, "
            "NULLIF(setting, '')::JSON AS setting FROM label_import WHERE (labeled_at <> '') = ?"
        )
        out = ", ".join(_LABEL_COLUMNS)
        update = ", ".join(f"{c} = excluded.{c}" for c in _LABEL_COLUMNS if c not in key)
        statements = [  # (timed rows?, what a conflict does)
            (True, f"DO UPDATE SET {update} WHERE excluded.labeled_at > labels.labeled_at"),
            (False, "DO NOTHING"),  # a row without a time never replaces a label
        ]
        changed = 0
        cur.execute("BEGIN TRANSACTION")
        try:
            for timed, on_conflict in statements:
                rows, keys = cur.execute(
                    f"SELECT count(*), count(DISTINCT ({', '.join(key)})) FROM ({select})", [now, timed]
                ).fetchall()[0]
                if not rows:
                    continue
                # a key twice in one statement is an error in DuckDB: keep the newest row of each key
                newest = (
                    f"QUALIFY row_number() OVER (PARTITION BY {', '.join(key)} "
                    "ORDER BY labeled_at DESC, row DESC) = 1"
                    if keys < rows
                    else ""
                )
                changed += cur.execute(
                    f"INSERT INTO labels BY NAME SELECT {out} FROM ({select}) {newest} "
                    f"ON CONFLICT ({', '.join(key)}) {on_conflict}",
                    [now, timed],
                ).fetchall()[0][0]
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        return int(changed)

    @reads
    def labels_version(self) -> tuple[int, int]:
        """A value that changes whenever a label is written, changed or deleted (the row count and a hash
        over every row): a copy of `labels()` stays current while this stays the same."""
        row = (
            self.cursor()
            .execute(
                "SELECT count(*), coalesce(sum(hash(url_a, md5_a, url_b, md5_b, label, category, note, labeler, "
                "labeled_at, setting)), 0) FROM labels"
            )
            .fetchone()
        )
        assert row is not None
        return int(row[0]), int(row[1])

    @reads
    def labels(self) -> pd.DataFrame:
        """Every label, oldest first; `labeler` is None for an unnamed labeler."""
        return (
            self.cursor()
            .execute(
                "SELECT url_a, md5_a, url_b, md5_b, label, category, note, nullif(labeler, '') AS labeler, labeled_at, "
                "setting FROM labels ORDER BY labeled_at"
            )
            .df()
        )


def _cell(value: Any) -> Any:
    """A value of a DataFrame row, None where pandas holds a missing value (NaN, NaT, NA)."""
    return None if value is None or (not isinstance(value, (str, dict, list)) and pd.isna(value)) else value


def _shown(value: str) -> str:
    """A cell of an imported file, quoted and cut for an error message."""
    return repr(value) if len(value) <= 60 else repr(value[:57] + "...")
