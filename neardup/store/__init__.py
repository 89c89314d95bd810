"""The only package that talks to DuckDB. Every query binds its parameters with `?`.

One `Store` per database file. DuckDB connections are not thread-safe; every method takes its own
`cursor()` so a Streamlit app can share one `Store` between sessions.

`Store` is one object over a module per thing stored, each a part it is made of:

| module | what it keeps |
|---|---|
| `connection` | the file's one connection in this process, leases on it, locks (`StoreCore`) |
| `schema` | recognizing a neardup file, making its tables, upgrading an older one |
| `sources` | the crawl dumps loaded, a bulk load, removing a source |
| `pages` | pages, their HTML blocks and texts, WARC payload digests, rejected records |
| `content` | which texts are content at a min_words (SQL shared by `pages` and `fingerprints`) |
| `fingerprints` | sketches, and each setting's units and candidate pairs |
| `analyses` | each source's own analysis (`compare`) |
| `parsed_urls` | the pages' URLs as URL rules parse them (`url_parse.parse_urls`) |
| `labels` | labels: written, taken back, imported, read |
| `spark_attach` | a `neardup spark` run's Parquet, read in place |
| `suggestions` | each copy's suggested category against its representative, and the text reads that compute it |
| `buckets` | each MinHash fingerprint set's buckets too large to expand, and a few units' signatures |

The package imports no pipeline module (ingest, normalize, batches, engine): only leaves (`errors`,
`parsed_urls`, `dbfile`, `rejects`, `csvsafe`, `htmlcodec`, `short_texts`, `pairkey`); `tests/test_store_layers.py` checks it.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import NeardupError
from .analyses import AnalysesMixin
from .buckets import BucketsMixin, StoredCappedBuckets
from .connection import (
    ALIAS,
    CHECKPOINT_THRESHOLD,
    DEFAULT_DB,
    DUCKDB_MEMORY,
    DUCKDB_SCAN_MEMORY,
    LINGER_S,
    LOCK_WAIT_S,
    ROW_GROUP_ROWS,
    sql_literal,
    writes,
)
from .fingerprints import FingerprintsMixin, UnitsFile
from .labels import LABEL_CLOCK_SKEW, LabelsMixin
from .pages import PagesMixin
from .parsed_urls import ParsedUrlsMixin
from .schema import SCHEMA_VERSION, UPGRADABLE_VERSIONS, SchemaMixin, is_database_file, kind_of_reason_sql
from .sources import SourcesMixin
from .spark_attach import SparkAttachMixin
from .suggestions import SuggestionsMixin

__all__ = [
    "ALIAS",
    "CHECKPOINT_THRESHOLD",
    "DEFAULT_DB",
    "DUCKDB_MEMORY",
    "DUCKDB_SCAN_MEMORY",
    "LABEL_CLOCK_SKEW",
    "LINGER_S",
    "LOCK_WAIT_S",
    "ROW_GROUP_ROWS",
    "SCHEMA_VERSION",
    "StoredCappedBuckets",
    "UPGRADABLE_VERSIONS",
    "UnitsFile",
    "Store",
    "is_database_file",
    "kind_of_reason_sql",
    "sql_literal",
]


class Store(
    SchemaMixin,
    SourcesMixin,
    PagesMixin,
    FingerprintsMixin,
    AnalysesMixin,
    ParsedUrlsMixin,
    LabelsMixin,
    SparkAttachMixin,
    SuggestionsMixin,
    BucketsMixin,
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
        memory_limit: str | None = None,
    ) -> None:
        super().__init__(
            path,
            read_only=read_only,
            bulk=bulk,
            on_demand=on_demand,
            lock_wait_s=lock_wait_s,
            linger_s=linger_s,
            memory_limit=memory_limit,
        )
        self._upgrade_from = None
        self._short_fetches = {}
        self.created = False
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
