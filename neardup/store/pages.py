"""Pages as loaded, with their HTML in compressed blocks, their normalized texts, the WARC payload digests
they are found by, and the records an ingest rejected."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, NotRequired, TypedDict, cast

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import NeardupError
from ..htmlcodec import html_codec
from ..rejects import Reject, RejectKind
from .connection import one_value, reads, writes
from .content import ContentRules, degenerate_sql
from .fingerprints import insert_sketches
from .schema import BEFORE_REJECT_KINDS, kind_of_reason_sql
from .spark_attach import run_page_units_sql, spark_run_of

_PAGE_COLUMNS = (
    "page_id, source_id, line, url, canonical_url, host, fetched_at, status, html, text_in, md5, rel_canonical, "
    "extra, html_block, html_start, html_bytes"
)
_BLOCK_COLUMNS = ("html_block", "html_start", "html_bytes")
# `PagesMixin.page_table`'s columns besides page_id: those of `pages`, then those of the page's text.
_PAGE_TABLE_COLUMNS = (
    "source_id", "line", "url", "canonical_url", "host", "fetched_at", "status", "md5", "rel_canonical"
)  # fmt: skip
_TEXT_TABLE_COLUMNS = ("exact_key", "degenerate", "n_words")


class PageRow(TypedDict):
    """A page as `PagesMixin.page` reads it: its `pages` columns but where its HTML is stored, and its text
    at one normalization (None where the page has none)."""

    page_id: int
    source_id: int
    line: int
    url: str
    canonical_url: str
    host: str
    fetched_at: object  # pandas.Timestamp, NaT when the record gave no time
    status: int | None
    md5: str
    rel_canonical: str | None
    extra: str | None  # the JSON text of the record's other fields
    text: str | None
    title: str | None
    n_words: int | None
    exact_key: str | None
    degenerate: str | None  # why the page is set aside
    html: NotRequired[str | None]  # with `source=True`
    text_in: NotRequired[str | None]


def _matched_rows(page_ids: np.ndarray, text_ids: np.ndarray) -> tuple[pa.Array, pa.Array] | None:
    """Where the pages (`page_ids`, ascending) and their texts (`text_ids`, ascending) differ (pages without a
    text, or texts of removed pages): (which pages have a text, the rows of their texts); None where they
    are the same ids."""
    if np.array_equal(page_ids, text_ids):
        return None
    at = np.minimum(np.searchsorted(text_ids, page_ids), max(len(text_ids) - 1, 0))
    both = text_ids[at] == page_ids if len(text_ids) else np.zeros(len(page_ids), dtype=bool)
    return pa.array(both), pa.array(at[both])


class PagesOutOfOrder(NeardupError):
    """A scan of the pages did not give them in page id order."""


def _by_page_id(table: pa.Table) -> pa.Table:
    """`table` in page id order (as read, where it is so already)."""
    ids = table.column("page_id").to_numpy()
    if len(ids) < 2 or bool((ids[1:] > ids[:-1]).all()):
        return table
    return table.take(pa.array(np.argsort(ids, kind="stable")))


class PagesMixin(ContentRules):
    """The store's part that keeps pages, their HTML blocks and texts, and the rejects."""

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
            "SELECT p.page_id, p.line, first.line AS first_line, first.source_id AS first_source, p.url, p.extra "
            "FROM pages p JOIN ("
            "  SELECT url, fetched_at, md5, min(page_id) AS first_id, arg_min(line, page_id) AS line, "
            "  arg_min(source_id, page_id) AS source_id FROM pages "
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
            # the first in another file: its line number there, which is another record's here
            "|| CASE WHEN first_source <> ? THEN ' of source ' || first_source ELSE '' END "
            # a web archive record: where it is (and its WACZ member), as its other rejects say
            "|| coalesce(' (offset ' || (extra->>'warc_offset') || ', ' || url || ')', '') "
            "|| coalesce(' (in ' || (extra->>'wacz_member') || ')', '') FROM duplicate_rows",
            [source_id, source, RejectKind.DUPLICATE, RejectKind.DUPLICATE, source_id],
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

    def page_table(
        self,
        norm_key: str,
        *,
        min_words: int | None = None,
        source_ids: Sequence[int] | None = None,
        fingerprint_key: str | None = None,
    ) -> pd.DataFrame:
        """One row per page (no HTML): what clustering and the report need; `degenerate` under `min_words`.
        With `source_ids`, the pages of those sources only. With `fingerprint_key`, a `unit_id` column too:
        the unit of the page's text in that fingerprint set, -1 where it has none (joined here: a map of a
        million text keys in pandas costs several times the join)."""
        return self.page_columns(
            norm_key, min_words=min_words, source_ids=source_ids, fingerprint_key=fingerprint_key
        ).to_pandas()

    @reads
    def page_columns(
        self,
        norm_key: str,
        *,
        min_words: int | None = None,
        source_ids: Sequence[int] | None = None,
        fingerprint_key: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        """`page_table`'s columns as DuckDB gives them (Arrow, in chunks): read once, coded to integers
        before pandas copies the strings (`analysis.load_fingerprints`). `columns` (with page_id) picks
        some of them, for every page only (not with `source_ids`)."""
        degenerate, params = degenerate_sql(min_words, self._short_fetch_keys(norm_key, min_words))
        if source_ids is None:
            table = self._all_pages_table(norm_key, degenerate, params, columns)
            if fingerprint_key is not None:
                table = table.append_column("unit_id", self._page_units(norm_key, fingerprint_key, table))
            return table
        units, unit_params = "", []
        if fingerprint_key is not None:
            units, unit_params = (
                ", coalesce(u.unit_id, -1)::BIGINT AS unit_id FROM pages p JOIN texts t ON t.page_id = p.page_id "
                "LEFT JOIN units u ON u.fingerprint_key = ? AND u.exact_key = t.exact_key",
                [fingerprint_key],
            )
        else:
            units = " FROM pages p JOIN texts t ON t.page_id = p.page_id"
        # through Arrow: the same frame as `.df()` for these columns, at under half its CPU (no Python string
        # per value before pandas' Arrow-backed strings)
        return (
            self.cursor()
            .sql(
                "SELECT p.page_id, p.source_id, p.line, p.url, p.canonical_url, p.host, p.fetched_at, p.status, p.md5, p.rel_canonical, "
                f"t.exact_key, {degenerate} AS degenerate, t.n_words{units} "
                "WHERE t.norm_key = ? AND p.source_id IN (SELECT UNNEST(?::INTEGER[])) ORDER BY p.page_id",
                params=[*params, *unit_params, norm_key, [int(s) for s in source_ids]],
            )
            .to_arrow_table()
        )

    def _all_pages_table(
        self, norm_key: str, degenerate: str, params: list[Any], columns: Sequence[str] | None = None
    ) -> pa.Table:
        """`page_table`'s columns (or those of them `columns` names) of every page with a text under
        `norm_key`, by page id: the pages and the texts read each in its stored order (page id order, as
        they are written) and put side by side, not joined and sorted by DuckDB (the sort of a million rows
        of URLs is half the query's CPU)."""
        cur = self.cursor()
        page_cols = [c for c in _PAGE_TABLE_COLUMNS if columns is None or c in columns]
        text_cols = [c for c in _TEXT_TABLE_COLUMNS if columns is None or c in columns]
        pages = cur.sql(f"SELECT page_id, {', '.join(page_cols)} FROM pages").to_arrow_table()
        text_sql = {
            "exact_key": "t.exact_key",
            "degenerate": f"{degenerate} AS degenerate",
            "n_words": "t.n_words",
        }
        texts = cur.sql(
            f"SELECT {', '.join(['t.page_id', *(text_sql[c] for c in text_cols)])} FROM texts t WHERE t.norm_key = ?",
            params=[*(params if "degenerate" in text_cols else []), norm_key],
        ).to_arrow_table()
        pages, texts = _by_page_id(pages), _by_page_id(texts)
        matched = _matched_rows(pages.column("page_id").to_numpy(), texts.column("page_id").to_numpy())
        if matched is not None:
            pages, texts = pages.filter(matched[0]), texts.take(matched[1])
        for name in text_cols:
            pages = pages.append_column(name, texts.column(name))
        return pages

    @reads
    def page_column_groups(
        self,
        norm_key: str,
        groups: Sequence[Sequence[str]],
        *,
        min_words: int | None = None,
        fingerprint_key: str | None = None,
    ) -> Iterator[pa.Table]:
        """`page_columns` of every page a group of columns at a time, each group read when the one before is
        let go of: first page_id and degenerate (and unit_id, with `fingerprint_key`), then the columns of
        each of `groups` (`pages` columns), in the same rows. What is coded to integers a group at a time
        (`analysis.load_fingerprints`) holds one group's strings, not every group's at once."""
        degenerate, params = degenerate_sql(min_words, self._short_fetch_keys(norm_key, min_words))
        cur = self.cursor()
        first = _by_page_id(
            cur.sql(
                f"SELECT t.page_id, {degenerate} AS degenerate FROM texts t WHERE t.norm_key = ?",
                params=[*params, norm_key],
            ).to_arrow_table()
        )
        page_ids = _by_page_id(cur.sql("SELECT page_id FROM pages").to_arrow_table()).column("page_id")
        matched = _matched_rows(page_ids.to_numpy(), first.column("page_id").to_numpy())
        keep: pa.Array | None = None
        if matched is not None:
            keep, first = matched[0], first.take(matched[1])
        if fingerprint_key is not None:
            first = first.append_column("unit_id", self._page_units(norm_key, fingerprint_key, first))
        rows = first.column("page_id")
        yield first
        del first
        for group in groups:
            yield self._page_group(cur, group, keep, rows)

    @staticmethod
    def _page_group(
        cur: duckdb.DuckDBPyConnection, group: Sequence[str], keep: pa.Array | None, rows: pa.ChunkedArray
    ) -> pa.Table:
        """The `pages` columns `group` of the rows `keep` picks (all, for None), by page id: those of the
        page ids `rows` (a write between the reads is an error, not a misplaced column)."""
        wanted = [c for c in _PAGE_TABLE_COLUMNS if c in group]
        table = _by_page_id(cur.sql(f"SELECT page_id, {', '.join(wanted)} FROM pages").to_arrow_table())
        if keep is not None and len(keep) == len(table):
            table = table.filter(keep)
        if not table.column("page_id").equals(rows):
            raise NeardupError("the pages changed while they were read: run the command again")
        return table

    @reads
    def page_url_batches(self, batch_rows: int) -> Iterator[pa.Array]:
        """The URLs of every page in page id order, `batch_rows` at a time, as a scan gives them: pages are
        written in page id order, which a scan keeps (a file whose scan does not, e.g. a Spark run's pages
        read in place, raises `PagesOutOfOrder`: read them with `page_urls`)."""
        last = -1
        for batch in self.cursor().sql("SELECT page_id, url FROM pages").to_arrow_reader(batch_rows):
            ids = batch.column(0).to_numpy()
            if len(ids) and (ids[0] <= last or not bool((ids[1:] > ids[:-1]).all())):
                raise PagesOutOfOrder("a scan of the pages is not in page id order")
            last = int(ids[-1]) if len(ids) else last
            yield batch.column(1)

    @reads
    def page_urls(self, page_ids: np.ndarray) -> pa.ChunkedArray:
        """The URLs (as fetched) of the pages `page_ids`, in that order (Arrow strings)."""
        ids = np.asarray(page_ids, dtype=np.int64)
        table = _by_page_id(self.cursor().sql("SELECT page_id, url FROM pages").to_arrow_table())
        stored = table.column("page_id").to_numpy()
        at = np.minimum(np.searchsorted(stored, ids), max(len(stored) - 1, 0))
        if not np.array_equal(stored[at] if len(stored) else np.empty(0, dtype=np.int64), ids):
            raise NeardupError("pages asked for are not in the store")
        urls = table.column("url")
        if len(at) != len(stored) or not np.array_equal(at, np.arange(len(at))):
            urls = urls.take(pa.array(at))
        return urls

    @reads
    def page_fields(self, norm_key: str, page_ids: np.ndarray, *, min_words: int | None = None) -> pa.Table:
        """`page_table`'s url, canonical_url, fetched_at, degenerate, n_words and exact_key of the pages
        `page_ids` (ascending, each with a text under `norm_key`), by page id: the fields a copy's category
        reads (`categories.suggest_copies`), without reading every page's strings."""
        ids = np.asarray(page_ids, dtype=np.int64)
        if not len(ids):
            ids = np.array([-1], dtype=np.int64)  # no page has it: the empty table, with its columns
        degenerate, params = degenerate_sql(min_words, self._short_fetch_keys(norm_key, min_words))
        cur = self.cursor()
        cur.register("wanted_pages", pa.table({"page_id": pa.array(ids)}))
        # the range lets the scans skip the row groups (in page id order) outside it
        between = [int(ids.min()), int(ids.max())]
        try:
            # put in page id order here, not by DuckDB: a sort of the rows' strings is memory DuckDB must
            # hold within its limit (`neardup report` gives it DUCKDB_SCAN_MEMORY)
            return _by_page_id(
                cur.sql(
                    f"SELECT p.page_id, p.url, p.canonical_url, p.fetched_at, {degenerate} AS degenerate, "
                    "t.n_words, t.exact_key FROM wanted_pages w JOIN pages p ON p.page_id = w.page_id "
                    "JOIN texts t ON t.page_id = w.page_id AND t.norm_key = ? "
                    "WHERE p.page_id BETWEEN ? AND ? AND t.page_id BETWEEN ? AND ?",
                    params=[*params, norm_key, *between, *between],
                ).to_arrow_table()
            )
        finally:
            cur.unregister("wanted_pages")

    def _page_units(self, norm_key: str, fingerprint_key: str, table: pa.Table) -> pa.Array:
        """The unit id of each row of `table` (`_all_pages_table`'s, by page id) in a fingerprint set, -1
        where its text has none: a join of two integer columns, placed by page id (a Spark run's pages, read
        in place, name their unit themselves: `run_page_units_sql`)."""
        cur = self.cursor()
        run_units = run_page_units_sql(spark_run_of(cur), norm_key, fingerprint_key)
        pairs = (
            cur.sql(run_units)
            if run_units is not None
            else cur.sql(
                "SELECT t.page_id, u.unit_id FROM texts t JOIN units u ON u.exact_key = t.exact_key "
                "WHERE t.norm_key = ? AND u.fingerprint_key = ?",
                params=[norm_key, fingerprint_key],
            )
        ).to_arrow_table()
        page_ids = table.column("page_id").to_numpy()
        unit = np.full(len(page_ids), -1, dtype=np.int64)
        found = pairs.column("page_id").to_numpy()
        at = np.searchsorted(page_ids, found)
        inside = at < len(page_ids)
        inside[inside] = page_ids[at[inside]] == found[inside]
        unit[at[inside]] = pairs.column("unit_id").to_numpy()[inside]
        return pa.array(unit)

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
    ) -> PageRow | None:
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
        row = cast(PageRow, df.iloc[0].to_dict())
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
    def pages_at_lines(self, source_id: int, lines: list[int]) -> dict[int, int]:
        """line -> page_id of the source's pages at those lines (a WARC file's record numbers): one scan of
        the source's (line, page_id) columns, narrowed to its row groups by their min/max source_id."""
        if not lines:
            return {}
        return dict(
            self.cursor()
            .execute(
                "SELECT line, page_id FROM pages WHERE source_id = ? AND line BETWEEN ? AND ? "
                "AND line IN (SELECT unnest(?::BIGINT[]))",
                [source_id, min(lines), max(lines), lines],
            )
            .fetchall()
        )

    @reads
    def page_source(self, page_id: int) -> str:
        """A page as loaded: its raw HTML, or the text it came as when the dump had no HTML ("" if neither)."""
        html, text_in = self._source(self.cursor(), page_id)
        return html if html is not None else text_in or ""
