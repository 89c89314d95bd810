"""The only module that talks to DuckDB. Every query binds its parameters with `?`.

One `Store` per database file. DuckDB connections are not thread-safe; every method takes its own
`cursor()` so a Streamlit app can share one `Store` between sessions.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from .batches import html_codec
from .candidate_stats import upgrade_stored_stats
from .dbfile import remove_database_file
from .errors import DatabaseLocked, NeardupError, SchemaError
from .fingerprint_set import FingerprintSet
from .normalize import TOO_SHORT, short_fetch_margin
from .rejects import Reject, RejectKind

SCHEMA_VERSION = "6"
# Older versions this one upgrades in place on a writable open (read-only opens read them as they are),
# oldest first: a file of one of them takes the upgrade steps from its version on (`Store._upgrade`).
UPGRADABLE_VERSIONS = ("2", "3", "4", "5")
# The versions whose `ingest_errors` has no `kind` column.
_BEFORE_REJECT_KINDS = ("2", "3")
DEFAULT_DB = "neardup.duckdb"
DUCKDB_MEMORY = "1GB"
# Tables are stored in row groups of this many rows (DuckDB's default is 122,880). A checkpoint
# re-compresses every row group that changed since the last one, so a bulk load checkpoints when a row
# group of `pages` fills up; at 16k rows (~260 MB of HTML) that stays within the memory cap.
ROW_GROUP_ROWS = 16_384
CHECKPOINT_THRESHOLD = "512MB"
F = TypeVar("F", bound=Callable[..., Any])
ALIAS = "neardup"  # the attached file's catalog name inside each store's connection
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


# Whether a text is content, and why not. `degenerate` is stored at normalization with the min_words of that
# time; the "too short" rule is applied again when a query runs, with the setting's min_words (bound as a
# parameter), so a report at another min_words counts what it says. A stored 'too short' means no other
# rule applied (they are tried first): a text is content when it has no other reason and at least
# min_words words, or is a short fetch its page's other fetches make content (`_SHORT_FETCH_KEYS`). Without a
# min_words, the decision stored at normalization.
_NO_OTHER_REASON = "({t}.degenerate IS NULL OR {t}.degenerate = '" + TOO_SHORT + "')"
# A page near min_words gets one verdict in all its fetches: a fetch of it with a widget's few words fewer than
# another (a rotating promo line, a "most read" entry) would else be set aside as too short while the other is
# clustered. So a text of min_words - short_fetch_margin(min_words) words or more is content when one of its
# pages shares its canonical URL (the same page under a tracking parameter, http or www, a trailing slash, or
# fetched again) with a fetch of at least min_words words: the verdict is the page's, and an exact duplicate's
# text takes it from any of its pages. A text further below is another state of the page (an empty shell, a
# cut fetch) and keeps its own verdict. The texts so kept, by exact key (parameters: norm_key, the margin's
# floor, min_words twice); `Store._short_fetch_keys` keeps them per state of the pages, as finding them reads
# every page's canonical URL (~0.25 s at 300k pages).
_SHORT_FETCH_KEYS = (
    "SELECT DISTINCT s.exact_key FROM texts s JOIN pages sp ON sp.page_id = s.page_id "
    "JOIN pages lp ON lp.canonical_url = sp.canonical_url JOIN texts l ON l.page_id = lp.page_id "
    "AND l.norm_key = s.norm_key WHERE s.norm_key = ? AND s.n_words >= ? AND s.n_words < ? AND l.n_words >= ? AND "
    + _NO_OTHER_REASON.format(t="s")
    + " AND "
    + _NO_OTHER_REASON.format(t="l")
    + " ORDER BY s.exact_key"
)


def _is_content(min_words: int | None, kept: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """SQL condition on a `texts` row `t` (and its parameters): the text is content. `kept`: the short
    fetches' texts their pages make content (`Store._short_fetch_keys`)."""
    if min_words is None:
        return "t.degenerate IS NULL", []
    return (
        f"{_NO_OTHER_REASON.format(t='t')} AND (t.n_words >= ? OR t.exact_key IN (SELECT UNNEST(?::VARCHAR[])))",
        [min_words, list(kept)],
    )


def _degenerate(min_words: int | None, kept: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """SQL expression over a `texts` row `t` (and its parameters): why the text is not content, or NULL."""
    if min_words is None:
        return "t.degenerate", []
    return (
        f"CASE WHEN t.degenerate IS NOT NULL AND t.degenerate <> '{TOO_SHORT}' THEN t.degenerate "
        f"WHEN t.n_words < ? AND t.exact_key NOT IN (SELECT UNNEST(?::VARCHAR[])) THEN '{TOO_SHORT}' END"
    ), [min_words, list(kept)]


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


# The tables of each source's own analysis (`Store.save_source_analysis`), the one with its key last.
_SOURCE_ANALYSIS_TABLES = ("source_hosts", "source_clusters", "source_units", "source_analyses")


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


def is_database_file(path: str | Path) -> bool:
    """Whether `path` is a DuckDB database file (its header names the format), not e.g. a crawl dump."""
    try:
        with open(path, "rb") as f:
            return f.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def sql_literal(value: str) -> str:
    """A quoted SQL string, for the few statements that cannot bind parameters (ATTACH, view definitions)."""
    return "'" + value.replace("'", "''") + "'"


def kind_of_reason_sql(column: str) -> str:
    """SQL for the `RejectKind` of a reject written before kinds had a column of their own: the kind whose
    words begin `column` (the longest that does; every `Reject.detail` begins with its kind's words), and
    an unreadable record for a text no kind begins."""
    whens = " ".join(
        f"WHEN starts_with({column}, {sql_literal(k)}) THEN {sql_literal(k)}"
        for k in sorted(RejectKind, key=len, reverse=True)
    )
    return f"CASE {whens} ELSE {sql_literal(RejectKind.UNREADABLE)} END"


# What a neardup database holds besides its meta row, in every schema it opens (the oldest it upgrades
# included) and in a `neardup open` file (views): a file with neardup's meta row but not these is another
# application's, which may keep a meta(key, value) table with a schema_version row too.
_NEARDUP_SIGNATURE = {
    "sources": ("source_id", "sha256", "status"),
    "pages": ("page_id", "url", "canonical_url", "md5"),
    "ingest_errors": ("source", "reason"),
}
# What else than tables and views a file may hold that makes it another application's (parameter: the
# alias, four times).
_OTHER_OBJECTS = (
    "SELECT 'sequence', sequence_name FROM duckdb_sequences() WHERE database_name = ? "
    "UNION ALL SELECT 'macro', function_name FROM duckdb_functions() WHERE database_name = ? AND NOT internal "
    "UNION ALL SELECT 'type', type_name FROM duckdb_types() WHERE database_name = ? AND NOT internal "
    "UNION ALL SELECT 'schema', schema_name FROM duckdb_schemas() WHERE database_name = ? AND NOT internal"
)


# How long an open waits for another process's lock (a short write: a label, an app page's read) before
# it names the holder; NEARDUP_LOCK_WAIT_S overrides. An on-demand store keeps the file open this long after
# its last use, so one app page's queries share one open (attaching costs a few ms; see bench/bench_app.py).
LOCK_WAIT_S = 10.0
LINGER_S = 1.0
_HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


def _process_command(pid: int) -> str:
    """What process `pid` runs, shortened for a message: `neardup ingest crawl.jsonl.gz`, or "" if unknown."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return ""
    argv = [a for a in argv if a]
    if argv and Path(argv[0]).name.startswith("python"):
        argv = argv[1:]
        if argv[:1] == ["-m"]:
            argv = argv[1:]
    if not argv:
        return ""
    command = " ".join([Path(argv[0]).name.removesuffix(".cli"), *argv[1:]])  # python -m neardup.cli: neardup
    return command if len(command) <= 80 else command[:77] + "..."


def _open_error(path: str, exc: duckdb.Error, *, write: bool) -> NeardupError:
    """One line a user can act on for a failed ATTACH."""
    msg = str(exc)
    name = Path(path).name
    held = _LOCK_HOLDER.search(msg)
    if held:
        pid = int(held.group(2))
        command = _process_command(pid)
        who = f"PID {pid}" + (f" ({command})" if command else "")
        if "read-only mode" in msg:  # the holder only reads; we asked to write
            return DatabaseLocked(
                f"{name} is open read-only by {who}, and writing needs it to itself; "
                "close that process (or wait for it to finish) and retry"
            )
        return DatabaseLocked(
            f"{name} is open for writing by {who}; wait for it to finish (or close it) and retry"
        )
    if "sqlite_scanner" in msg:  # DuckDB knows the file for SQLite's and wants its (never loaded) reader
        return NeardupError(f"{path} is a SQLite database, not a DuckDB file: give neardup a new file (--db)")
    if "not a valid DuckDB database" in msg:
        return NeardupError(f"{path} is not a DuckDB database file: give neardup a new file (--db)")
    if "Could not read enough bytes" in msg:
        return NeardupError(f"{path} is damaged (truncated or corrupt): restore it or ingest into a new file")
    if not write and not Path(path).exists():
        return NeardupError(f"no database at {path}")
    return NeardupError(f"cannot open database {path}: {msg.splitlines()[0]}")


def _attach(path: str, *, write: bool, bulk: bool, lock_wait_s: float) -> duckdb.DuckDBPyConnection:
    """A connection with the file attached as `ALIAS`, waiting up to `lock_wait_s` for another process's lock.

    Extensions are never installed or loaded on the fly: DuckDB would otherwise fetch its SQLite reader
    from the internet to open a SQLite file given as the database."""
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    options = [f"ROW_GROUP_SIZE {ROW_GROUP_ROWS}"]
    if not write:
        options.append("READ_ONLY")
    if bulk:
        options.append("RECOVERY_MODE no_wal_writes")
    deadline = time.monotonic() + lock_wait_s
    delay_s = 0.02
    try:
        while True:
            try:
                con.execute(f"ATTACH {sql_literal(path)} AS {ALIAS} ({', '.join(options)})")
                if os.path.exists(path) or time.monotonic() > deadline:
                    break
                # removed by the process that held its lock (a new file it kept nothing in): make it anew
                con.execute(f"DETACH {ALIAS}")
                time.sleep(delay_s)
                continue
            except duckdb.IOException as exc:
                if "Could not set lock" not in str(exc) or time.monotonic() + delay_s > deadline:
                    raise _open_error(path, exc, write=write) from None
                time.sleep(delay_s)
                delay_s = min(2 * delay_s, 0.25)
            except duckdb.Error as exc:
                raise _open_error(path, exc, write=write) from None
        con.execute(f"USE {ALIAS}")
        # DuckDB's own memory (buffer pool, un-checkpointed appends) is capped, so a long load stays flat:
        # by default it may use 80% of RAM and the main process grew to 2.4 GB over a 100k-page load
        # (1.45 GB with 1 GB). Operators that need more spill to disk. NEARDUP_DUCKDB_MEMORY overrides.
        con.execute("SET memory_limit = ?", [os.environ.get("NEARDUP_DUCKDB_MEMORY", DUCKDB_MEMORY)])
        # What exceeds it spills where DuckDB spills for a file it opens itself, beside the file (for the
        # in-memory connection the file is attached to, it would be `.tmp/` in the working directory),
        # unless the file's folder is read-only.
        if os.access(os.path.dirname(os.path.abspath(path)), os.W_OK):
            con.execute("SET temp_directory = ?", [f"{path}.tmp"])
        if write:
            # Checkpoint (compress and write out) after every 512 MB of log rather than DuckDB's 16 MB: a
            # bulk load then re-compresses the open row group ~30x less often (bench/RESULTS.md).
            con.execute("SET checkpoint_threshold = ?", [CHECKPOINT_THRESHOLD])
    except BaseException:
        con.close()
        raise
    return con


def _row(row: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """The one row an aggregate (count, max) or a pragma always answers."""
    if row is None:
        raise RuntimeError("an aggregate query returned no row")
    return row


def _one(row: tuple[Any, ...] | None) -> Any:
    """The value of the one-row, one-column answer an aggregate always gives."""
    return _row(row)[0]


class _File:
    """One database file in this process: at most one connection, shared by every Store and thread on it.

    The connection is opened on demand, read-only unless a writer needs it, and counts its users (leases).
    A write that finds it open read-only waits until the readers are done, then reopens it for writing.
    The file is attached (not opened as the default database) because only ATTACH takes a row group size
    and a recovery mode; DuckDB's own instance cache does not cover attached files, so this registry does.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.cond = threading.Condition()
        self.con: duckdb.DuckDBPyConnection | None = None
        self.writable = False
        self.bulk = False
        self.users = 0
        self.pins = 0  # users that are held stores (open until closed, on any thread)
        self.writers_waiting = 0
        self.linger: threading.Timer | None = None
        self.discard = False  # remove the file as the connection closes (Store.discard)
        self.held = threading.local()  # leases this thread holds (a thread never waits for itself)

    def acquire(self, *, write: bool, bulk: bool, lock_wait_s: float, pin: bool = False) -> None:
        mine = getattr(self.held, "n", 0)
        with self.cond:
            if bulk and self.users:
                raise DatabaseLocked(
                    f"{self.path} is already open in this process; a bulk load needs it to itself"
                )
            while True:
                if self.con is not None:
                    fits = (self.writable or not write) and (self.bulk or not bulk)
                    # a reader that holds nothing yet lets a waiting writer go first
                    if fits and (self.writable or not self.writers_waiting or mine):
                        break
                    if not self.users:
                        self._close()  # idle but not what is needed: reopen below
                        continue
                    if write and mine:
                        raise NeardupError(
                            f"{self.path} is open read-only here; a write cannot start inside a read"
                        )
                    if write and self.pins:
                        raise NeardupError(
                            f"{self.path} is open read-only in this process; close it before writing"
                        )
                elif write or not self.writers_waiting:
                    self.con = _attach(self.path, write=write, bulk=bulk, lock_wait_s=lock_wait_s)
                    self.writable, self.bulk = write, bulk
                    continue
                self.writers_waiting += write
                try:
                    self.cond.wait()
                finally:
                    self.writers_waiting -= write
            self._cancel_linger()
            self.users += 1
            self.pins += pin
        if not pin:
            self.held.n = mine + 1

    def release(self, *, linger_s: float, pin: bool = False) -> None:
        if not pin:
            self.held.n -= 1
        with self.cond:
            self.users -= 1
            self.pins -= pin
            if self.users == 0:
                if self.bulk or linger_s <= 0:
                    self._close()
                else:
                    self.linger = threading.Timer(linger_s, self.close_idle)
                    self.linger.daemon = True
                    self.linger.start()
            self.cond.notify_all()

    def close_idle(self) -> None:
        with self.cond:
            if self.con is not None and not self.users:
                self._close()
                self.cond.notify_all()

    def _cancel_linger(self) -> None:
        if self.linger is not None:
            self.linger.cancel()
            self.linger = None

    def _close(self) -> None:
        self._cancel_linger()
        con, self.con = self.con, None
        if con is None:
            return
        try:
            if self.discard:  # removed while still locked: no other process opens what is removed
                remove_database_file(self.path)
            elif self.bulk:  # bulk: nothing is in a log, the checkpoint makes it durable
                try:
                    con.execute("CHECKPOINT")
                except duckdb.Error as exc:
                    # A failed write (a full disk) invalidates the database, and the error was raised
                    # to the write already: the file keeps what its last checkpoint wrote.
                    if "has been invalidated" not in str(exc):
                        raise
        finally:
            self.bulk = self.discard = False
            con.close()


class _Connections:
    """The `_File` of each database file open in this process, by real path."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, _File] = {}

    def file(self, path: str) -> _File:
        key = os.path.realpath(path)
        with self._lock:
            return self._files.setdefault(key, _File(path))


_CONNECTIONS = _Connections()


def _leased(write: bool) -> Callable[[F], F]:
    """Run a Store method (or iterate a generator method) holding a read or write lease on the file."""

    def decorate(method: F) -> F:
        if inspect.isgeneratorfunction(method):

            @functools.wraps(method)
            def generator(self: Store, *args: Any, **kwargs: Any) -> Any:
                with self._lease(write=write):
                    yield from method(self, *args, **kwargs)

            return generator  # type: ignore[return-value]

        @functools.wraps(method)
        def call(self: Store, *args: Any, **kwargs: Any) -> Any:
            with self._lease(write=write):
                return method(self, *args, **kwargs)

        return call  # type: ignore[return-value]

    return decorate


_reads, _writes = _leased(False), _leased(True)
_PAGE_COLUMNS = (
    "page_id, source_id, line, url, canonical_url, host, fetched_at, status, html, text_in, md5, rel_canonical, "
    "extra, html_block, html_start, html_bytes"
)
_BLOCK_COLUMNS = ("html_block", "html_start", "html_bytes")
# The indexes of schema.sql's tables, made with them: only where a point lookup needs one (an index slows
# every insert into its table).
_INDEXES = {
    "warc_payloads": "CREATE INDEX IF NOT EXISTS warc_payloads_digest ON warc_payloads (payload_digest)",
}


class Store:
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
        self.path = str(path)
        self.read_only = read_only
        self.bulk = bulk and not read_only and not on_demand
        self.on_demand = on_demand
        # how long an on-demand store keeps the file open after its last use (LINGER_S unless given)
        self.linger_s = (LINGER_S if linger_s is None else linger_s) if on_demand else 0.0
        self.lock_wait_s = (
            float(os.environ.get("NEARDUP_LOCK_WAIT_S", LOCK_WAIT_S)) if lock_wait_s is None else lock_wait_s
        )
        self._file = _CONNECTIONS.file(self.path)
        self._closed = True
        self._upgrade_from: str | None = None  # an older schema version _init_schema upgrades
        # `_short_fetch_keys` by (norm_key, min_words, the pages' last id and count, the texts' count)
        self._short_fetches: dict[tuple[str, int, int, int, int], list[str]] = {}
        self.created = False  # whether this store made the file's schema (it was new, or empty)
        # Whether `pages` has the html_blocks columns (not in a file of schema 3 or earlier opened
        # read-only, nor in the view over a Spark run's Parquet from before them).
        self._blocks = True
        if self._file.bulk and self._file.users:
            raise DatabaseLocked(f"{self.path} is being bulk-loaded in this process; retry when it is done")
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

    # --- plumbing ---------------------------------------------------------------------------
    def _lease_enter(self, *, write: bool, bulk: bool = False, pin: bool = False) -> None:
        if write and self.read_only:
            raise NeardupError(f"{self.path} was opened read-only; open it again to write")
        self._file.acquire(write=write, bulk=bulk, lock_wait_s=self.lock_wait_s, pin=pin)

    @contextmanager
    def _lease(self, *, write: bool, bulk: bool = False) -> Iterator[None]:
        self._lease_enter(write=write, bulk=bulk)
        try:
            yield
        except duckdb.IOException as exc:
            if "Could not read enough bytes" in str(exc):  # a lost block of a damaged file: one line
                raise _open_error(self.path, exc, write=write) from None
            raise
        finally:
            self._file.release(linger_s=self.linger_s)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Keep the file open read-write for a block of writes and reads (an ingest, fingerprints)."""
        with self._lease(write=True):
            yield

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Keep the file open (read-only, unless it is open for writing already) for a block of reads."""
        with self._lease(write=False):
            yield

    def cursor(self) -> duckdb.DuckDBPyConnection:
        con = self._file.con
        if con is None or not self._file.users:
            raise RuntimeError(
                "a Store method ran without a lease on the file: decorate it with @_reads or @_writes"
            )
        cur = con.cursor()
        cur.execute(f"USE {ALIAS}")  # a cursor starts in the connection's in-memory catalog
        return cur

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if not self.on_demand:
                self._file.release(linger_s=0.0, pin=True)
            self._file.close_idle()

    def discard(self) -> None:
        """Close a bulk store and remove its file, log and spill folder: a file this process made and kept
        nothing in (a refused or failed first ingest). The file is removed before its lock is released."""
        if not self.bulk:
            raise RuntimeError("only a bulk store has its file to itself, to remove it")
        if self._closed:
            remove_database_file(self.path)
            return
        self._file.discard = True
        self.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _batches(
        self, sql: str, params: list[Any], batch_rows: int, cur: duckdb.DuckDBPyConnection | None = None
    ) -> Iterator[pd.DataFrame]:
        """Stream a query's rows as DataFrames of at most `batch_rows` (memory stays flat); on `cur` when
        the query needs that cursor's registrations."""
        for rb in (cur or self.cursor()).sql(sql, params=params).to_arrow_reader(batch_rows):
            yield rb.to_pandas()

    def _check_schema(self) -> list[str]:
        """The neardup tables this file lacks; raises unless it is a neardup database of this version or
        holds nothing at all (another application's database is never written to)."""
        cur = self.cursor()
        objects = {
            r[0]
            for r in cur.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = ?", [ALIAS]
            ).fetchall()
        }
        ddl = resources.files("neardup").joinpath("schema.sql").read_text(encoding="utf-8")
        statements = {
            m.group(1): st
            for st in re.sub(r"--[^\n]*", "", ddl).split(";")
            if (m := re.search(r"CREATE TABLE IF NOT EXISTS (\w+)", st))
        }
        if not self._file.writable:
            # A truncated file opens, and fails only at the first query that reads a lost block (or takes an
            # append into the hole). Every block in use is on disk, after three 4 KB headers; the header's
            # block count is no bound, as it may count free blocks at the end that were never written.
            block_size, used = _row(
                cur.execute(
                    "SELECT block_size, used_blocks FROM pragma_database_size() WHERE database_name = ?",
                    [ALIAS],
                ).fetchone()
            )
            size, needed = Path(self.path).stat().st_size, _HEADER_BYTES + block_size * used
            if size < needed:
                raise NeardupError(
                    f"{self.path} is damaged (truncated or corrupt), {size:,} bytes where its blocks in use need "
                    f"{needed:,}: restore it or ingest into a new file"
                )
        if "meta" in objects:
            try:
                row = cur.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            except duckdb.Error:
                row = None
            if row is None:
                raise SchemaError(
                    f"{self.path} is not a neardup database (it has a meta table without neardup's "
                    "schema_version): give neardup a new file (--db)"
                )
            lacking = self._lacks_neardup_columns(cur)
            if lacking:
                raise SchemaError(
                    f"{self.path} is not a neardup database (it has a meta table with a schema_version row, "
                    f"but not neardup's {', '.join(lacking)}): give neardup a new file (--db)"
                )
            if row[0] in UPGRADABLE_VERSIONS:
                self._upgrade_from = row[0]
            elif row[0] != SCHEMA_VERSION:
                raise SchemaError(
                    f"{self.path} has schema version {row[0]}, this neardup needs {SCHEMA_VERSION}: "
                    "re-ingest into a new database file"
                )
        elif objects:
            shown = ", ".join(sorted(objects)[:5]) + (", ..." if len(objects) > 5 else "")
            raise SchemaError(
                f"{self.path} is another application's database (tables: {shown}), not a neardup one: "
                "give neardup a new file (--db)"
            )
        elif other := cur.execute(_OTHER_OBJECTS, [ALIAS] * 4).fetchall():
            shown = ", ".join(f"{kind} {name}" for kind, name in other[:5]) + (
                ", ..." if len(other) > 5 else ""
            )
            raise SchemaError(
                f"{self.path} is another application's database ({shown}), not a neardup one: "
                "give neardup a new file (--db)"
            )
        self._ddl = statements
        self._blocks = "pages" not in objects or self._pages_have_blocks(cur)
        return [name for name in statements if name not in objects]

    @staticmethod
    def _lacks_neardup_columns(cur: duckdb.DuckDBPyConnection) -> list[str]:
        """The tables or columns of `_NEARDUP_SIGNATURE` the file lacks, as `table.column`."""
        have = set(
            cur.execute(
                "SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_catalog = ?",
                [ALIAS],
            ).fetchall()
        )
        return [
            f"{table}.{column}"
            for table, columns in _NEARDUP_SIGNATURE.items()
            for column in columns
            if (f"{table}.{column}",) not in have
        ]

    @staticmethod
    def _pages_have_blocks(cur: duckdb.DuckDBPyConnection) -> bool:
        return bool(
            _one(
                cur.execute(
                    "SELECT count(*) FROM information_schema.columns WHERE table_catalog = ? "
                    "AND table_name = 'pages' AND column_name = 'html_block'",
                    [ALIAS],
                ).fetchone()
            )
        )

    def _has_incomplete_sources(self) -> bool:
        with self._lease(write=False):
            return bool(
                _one(self.cursor().execute("SELECT count(*) FROM sources WHERE status <> 'done'").fetchone())
            )

    @_writes
    def _init_schema(self) -> None:
        """A new file gets every table and the meta row; an older one gains the tables added since; a
        load that died part-way is dropped. The file is checked again under this write lease, which no
        other process can share: another may have made the schema since the read that led here (two
        first ingests into one new file: the tables are made once, by the first to write)."""
        missing = self._check_schema()
        cur = self.cursor()
        if missing:
            cur.execute("BEGIN TRANSACTION")
            for table in missing:
                cur.execute(self._ddl[table])
                if table in _INDEXES:
                    cur.execute(_INDEXES[table])
            if "meta" in missing:
                cur.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
                self.created = True
            cur.execute("COMMIT")
        if self._upgrade_from is not None:
            self._upgrade(self._upgrade_from)
            self._upgrade_from = None
        self.drop_incomplete_sources()

    # --- sources ----------------------------------------------------------------------------
    @_reads
    def source_by_hash(self, sha256: str) -> dict[str, Any] | None:
        df = self.cursor().execute("SELECT * FROM sources WHERE sha256 = ?", [sha256]).df()
        return None if df.empty else df.iloc[0].to_dict()

    @_writes
    def begin_source(self, path: str, sha256: str, fmt: str) -> int:
        cur = self.cursor()
        source_id = _one(cur.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sources").fetchone())
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

    @_writes
    def finish_source(self, source_id: int, *, n_records: int, n_loaded: int, n_errors: int) -> None:
        self.cursor().execute(
            "UPDATE sources SET status = 'done', n_records = ?, n_loaded = ?, n_errors = ?, loaded_at = ? "
            "WHERE source_id = ?",
            [n_records, n_loaded, n_errors, datetime.now(UTC).replace(tzinfo=None), source_id],
        )

    def _delete_source_rows(self, cur: duckdb.DuckDBPyConnection, source_id: int) -> None:
        """A source's pages, their texts, its errors and the sketches no remaining text has (the ingest
        workers write sketches with the pages), inside the caller's transaction."""
        cur.execute(
            "DELETE FROM texts WHERE page_id IN (SELECT page_id FROM pages WHERE source_id = ?)", [source_id]
        )
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
        for table in _SOURCE_ANALYSIS_TABLES:  # a later source may take its id
            cur.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])

    @_writes
    def drop_source(self, source_id: int) -> None:
        """Remove everything a source wrote (used when its load fails part-way, before any fingerprints)."""
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        self._delete_source_rows(cur, source_id)
        cur.execute("COMMIT")

    @_writes
    def remove_source(self, source_id: int) -> int:
        """Take a loaded source out: its pages, texts, sketches and errors, and every fingerprint set (units,
        pairs), which the next analysis recomputes from the pages left. Labels stay: they are keyed by URL and
        content, so they apply again if those pages come back. Returns the pages removed."""
        if self.spark_run():
            raise NeardupError(
                f"{self.path} reads a Spark run's Parquet: its sources cannot be removed one by one"
            )
        cur = self.cursor()
        n_pages = int(
            _one(cur.execute("SELECT count(*) FROM pages WHERE source_id = ?", [source_id]).fetchone())
        )
        cur.execute("BEGIN TRANSACTION")
        self._delete_source_rows(cur, source_id)
        for table in ("pairs", "units", "fingerprint_sets", *_SOURCE_ANALYSIS_TABLES):
            cur.execute(f"DELETE FROM {table}")
        cur.execute("COMMIT")
        return n_pages

    @_writes
    def drop_incomplete_sources(self) -> None:
        for (source_id,) in (
            self.cursor().execute("SELECT source_id FROM sources WHERE status <> 'done'").fetchall()
        ):
            self.drop_source(source_id)

    @_reads
    def sources(self) -> pd.DataFrame:
        return (
            self.cursor()
            .execute(
                "SELECT source_id, path, format, n_records, n_loaded, n_errors, loaded_at FROM sources "
                "WHERE status = 'done' ORDER BY source_id"
            )
            .df()
        )

    # --- pages ------------------------------------------------------------------------------
    @_reads
    def next_page_id(self) -> int:
        return int(_one(self.cursor().execute("SELECT coalesce(max(page_id), 0) + 1 FROM pages").fetchone()))

    @_writes
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
            self._insert_sketches(cur, sketches, sketch_key)
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

    @_writes
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

    @_writes
    def discard_lines(self, source_id: int, first_line: int) -> tuple[int, list[str]]:
        """Remove the pages and rejects of a source from `first_line` on (the part of a file that turned out
        corrupt); returns how many pages went and the kinds of the rejects that went."""
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        n_pages = _one(
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

    @_writes
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
        n = _one(cur.execute("SELECT count(*) FROM duplicate_rows").fetchone())
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

    @_reads
    def html_bytes(self) -> int:
        """Bytes of raw HTML (UTF-8) in `pages`, without inflating it."""
        blocks = "coalesce(sum(html_bytes), 0)" if self._blocks else "0"
        return int(
            _one(
                self.cursor()
                .execute(f"SELECT coalesce(sum(strlen(html)), 0) + {blocks} FROM pages")
                .fetchone()
            )
        )

    @_reads
    def count_pages(self) -> int:
        return int(_one(self.cursor().execute("SELECT count(*) FROM pages").fetchone()))

    def _reject_kind_sql(self) -> str:
        """The `kind` of an `ingest_errors` row: its column, or in a file of an older schema opened read-only
        (so not upgraded) the kind its reason begins with."""
        return kind_of_reason_sql("reason") if self._upgrade_from in _BEFORE_REJECT_KINDS else "kind"

    @_reads
    def ingest_errors(self, limit: int | None = None) -> pd.DataFrame:
        """The rejected records: source, line, kind (a `RejectKind` value), reason."""
        sql = (
            f"SELECT source, line, {self._reject_kind_sql()} AS kind, reason FROM ingest_errors "
            "ORDER BY source_id, line"
        )
        if limit is not None:
            return self.cursor().execute(sql + " LIMIT ?", [limit]).df()
        return self.cursor().execute(sql).df()

    @_reads
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

    @_reads
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

    @_reads
    def count_pages_without_text(self, norm_key: str, *, since: int = -1) -> int:
        """The pages (after page id `since`) not yet normalized under `norm_key`."""
        return int(
            _one(
                self.cursor()
                .execute(
                    "SELECT count(*) FROM pages p WHERE p.page_id > ? AND NOT EXISTS "
                    "(SELECT 1 FROM texts t WHERE t.norm_key = ? AND t.page_id > ? AND t.page_id = p.page_id)",
                    [since, norm_key, since],
                )
                .fetchone()
            )
        )

    @_reads
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

    @_reads
    def pages_after(self, coverage: dict[str, int]) -> int | None:
        """How many pages came after `coverage` (`page_coverage`) was taken, or None when a page it counted
        is gone (the pages up to its last id are not the same count). One pass over the page ids."""
        last = int(coverage["last_page_id"])
        upto, after = self.cursor().execute(
            "SELECT count(*) FILTER (WHERE page_id <= ?), count(*) FILTER (WHERE page_id > ?) FROM pages",
            [last, last],
        ).fetchone() or (0, 0)
        return None if int(upto) != int(coverage["pages"]) else int(after)

    @_writes
    def add_texts(self, batch: pa.Table | pd.DataFrame) -> None:
        if isinstance(batch, pd.DataFrame):  # DuckDB scans Arrow faster than object columns
            batch = pa.Table.from_pandas(batch, preserve_index=False)
        cur = self.cursor()
        cur.register("text_batch", batch)
        cur.execute(
            "INSERT INTO texts SELECT norm_key, page_id, text, title, n_words, exact_key, degenerate FROM text_batch"
        )
        cur.unregister("text_batch")

    @_reads
    def page_table(
        self, norm_key: str, *, min_words: int | None = None, source_ids: Sequence[int] | None = None
    ) -> pd.DataFrame:
        """One row per page (no HTML): what clustering and the report need; `degenerate` under `min_words`.
        With `source_ids`, the pages of those sources only."""
        degenerate, params = _degenerate(min_words, self._short_fetch_keys(norm_key, min_words))
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

    @_reads
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

    @_reads
    def extra_fields(self, batch_rows: int = 65_536) -> Iterator[list[str]]:
        """The `extra` JSON of every page that has one, in batches (no HTML is read)."""
        for df in self._batches(
            "SELECT extra::VARCHAR AS extra FROM pages WHERE extra IS NOT NULL", [], batch_rows
        ):
            yield df["extra"].tolist()

    @_reads
    def page(
        self, page_id: int, norm_key: str, *, min_words: int | None = None, source: bool = True
    ) -> dict[str, Any] | None:
        """A page with its text; `degenerate` under `min_words`. `source=False` leaves out the raw `html` and
        `text_in` (`page_source` reads them): they are most of a page's bytes."""
        degenerate, params = _degenerate(min_words, self._short_fetch_keys(norm_key, min_words))
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

    @_reads
    def count_warc_revisits(self, source_id: int) -> int:
        """The pages of a source loaded from WARC revisit records."""
        return int(
            _one(
                self.cursor()
                .execute(
                    "SELECT count(*) FROM pages WHERE source_id = ? "
                    "AND json_extract_string(extra, '$.warc_type') = 'revisit'",
                    [source_id],
                )
                .fetchone()
            )
        )

    @_reads
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

    @_reads
    def page_source(self, page_id: int) -> str:
        """A page as loaded: its raw HTML, or the text it came as when the dump had no HTML ("" if neither)."""
        html, text_in = self._source(self.cursor(), page_id)
        return html if html is not None else text_in or ""

    # --- fingerprints and pairs -------------------------------------------------------------
    def _short_fetch_keys(self, norm_key: str, min_words: int | None) -> list[str]:
        """The texts of `norm_key` short of `min_words` that a fetch of their page reaching it makes content
        (`_SHORT_FETCH_KEYS`), kept per state of the pages and texts (pages only grow: their last id and count
        say which; texts of a normalization are only added: their count)."""
        if min_words is None:
            return []
        cur = self.cursor()
        last, n_pages, n_texts = _row(
            cur.execute(
                "SELECT (SELECT coalesce(max(page_id), -1) FROM pages), (SELECT count(*) FROM pages), "
                "(SELECT count(*) FROM texts WHERE norm_key = ?)",
                [norm_key],
            ).fetchone()
        )
        state = (norm_key, min_words, last, n_pages, n_texts)
        if state not in self._short_fetches:
            floor = min_words - short_fetch_margin(min_words)
            keys = cur.execute(_SHORT_FETCH_KEYS, [norm_key, floor, min_words, min_words]).fetchall()
            if len(self._short_fetches) >= 8:  # a few settings at a time
                self._short_fetches.clear()
            self._short_fetches[state] = [k for (k,) in keys]
        return self._short_fetches[state]

    @_reads
    def count_units(self, norm_key: str, *, min_words: int | None = None) -> int:
        content, params = _is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        return int(
            _one(
                self.cursor()
                .execute(
                    f"SELECT count(DISTINCT exact_key) FROM texts t WHERE norm_key = ? AND {content}",
                    [norm_key, *params],
                )
                .fetchone()
            )
        )

    def _insert_sketches(self, cur: duckdb.DuckDBPyConnection, sketches: pa.Table, sketch_key: str) -> None:
        cur.register("sketch_batch", sketches)
        cur.execute(
            "INSERT INTO sketches SELECT ?, exact_key, n_shingles, simhash, minhash FROM sketch_batch",
            [sketch_key],
        )
        cur.unregister("sketch_batch")

    @_writes
    def add_sketches(self, sketches: pa.Table, sketch_key: str) -> None:
        self._insert_sketches(self.cursor(), sketches, sketch_key)

    @_reads
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
        content, params = _is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        yield from self._batches(
            _ONE_TEXT_PER_KEY.format(
                content=content,
                where="AND t.page_id > ? AND NOT EXISTS (SELECT 1 FROM sketches s "
                "WHERE s.sketch_key = ? AND s.exact_key = t.exact_key)",
            ),
            [norm_key, *params, since, sketch_key, norm_key],
            batch_rows,
        )

    @_reads
    def count_unsketched(
        self, norm_key: str, sketch_key: str, *, min_words: int | None = None, since: int = -1
    ) -> int:
        """`unsketched_texts`' count."""
        content, params = _is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        return int(
            _one(
                self.cursor()
                .execute(
                    f"SELECT count(DISTINCT exact_key) FROM texts t WHERE norm_key = ? AND {content} AND t.page_id > ? "
                    "AND NOT EXISTS (SELECT 1 FROM sketches s WHERE s.sketch_key = ? AND s.exact_key = t.exact_key)",
                    [norm_key, *params, since, sketch_key],
                )
                .fetchone()
            )
        )

    @_reads
    def unit_texts(self, norm_key: str, exact_keys: Sequence[str], batch_rows: int) -> Iterator[pd.DataFrame]:
        """(exact_key, text) of the given content texts, in batches, in no particular order."""
        cur = self.cursor()  # the registration lives and dies with this cursor
        cur.register("wanted_units", pa.table({"exact_key": pa.array(list(exact_keys), pa.string())}))
        # the keys say which texts: no content condition beyond them
        sql = _ONE_TEXT_PER_KEY.format(
            content="true", where="AND t.exact_key IN (SELECT exact_key FROM wanted_units)"
        )
        yield from self._batches(sql, [norm_key, norm_key], batch_rows, cur)

    @_reads
    def unit_sketches(
        self, norm_key: str, sketch_key: str, *, with_minhash: bool, min_words: int | None = None
    ) -> pd.DataFrame:
        """One row per distinct content text under `min_words` (exact_key order): exact_key, n_shingles,
        simhash[, minhash]."""
        return self._unit_sketches(norm_key, sketch_key, with_minhash=with_minhash, min_words=min_words)

    def _unit_sketches(
        self,
        norm_key: str,
        sketch_key: str,
        *,
        with_minhash: bool,
        min_words: int | None,
        not_in_set: str | None = None,
        since: int = -1,
    ) -> pd.DataFrame:
        """`unit_sketches`, leaving out the texts that are units of fingerprint set `not_in_set`, of the
        pages after page id `since`."""
        cols = "s.exact_key, any_value(s.n_shingles) AS n_shingles, any_value(s.simhash) AS simhash" + (
            ", any_value(s.minhash) AS minhash" if with_minhash else ""
        )
        content, params = _is_content(min_words, self._short_fetch_keys(norm_key, min_words))
        where, more = ("", []) if not_in_set is None else (_NOT_A_UNIT, [not_in_set])
        return (
            self.cursor()
            .execute(
                f"SELECT {cols} FROM sketches s SEMI JOIN "
                f"(SELECT exact_key FROM texts t WHERE norm_key = ? AND {content} AND t.page_id > ? {where}) u "
                "ON u.exact_key = s.exact_key WHERE s.sketch_key = ? GROUP BY s.exact_key ORDER BY s.exact_key",
                [norm_key, *params, since, *more, sketch_key],
            )
            .df()
        )

    @_reads
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
        added fetch of their page makes content (`_SHORT_FETCH`), which ask for the set to be computed again."""
        content, params = _is_content(min_words, self._short_fetch_keys(norm_key, min_words))
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
        if since is not None:
            return self._unit_sketches(
                norm_key,
                sketch_key,
                with_minhash=with_minhash,
                min_words=min_words,
                not_in_set=fingerprint_key,
                since=since,
            )
        gone = _one(
            cur.execute(
                "SELECT count(*) FROM units u WHERE u.fingerprint_key = ? AND NOT EXISTS "
                f"(SELECT 1 FROM texts t WHERE t.norm_key = ? AND {content} AND t.exact_key = u.exact_key)",
                [fingerprint_key, norm_key, *params],
            ).fetchone()
        )
        if gone:
            return None
        return self._unit_sketches(
            norm_key, sketch_key, with_minhash=with_minhash, min_words=min_words, not_in_set=fingerprint_key
        )

    @_reads
    def fingerprint_set(self, fingerprint_key: str) -> FingerprintSet | None:
        df = (
            self.cursor()
            .execute("SELECT * FROM fingerprint_sets WHERE fingerprint_key = ?", [fingerprint_key])
            .df()
        )
        return None if df.empty else FingerprintSet.from_row(df.iloc[0].to_dict())

    @_writes
    def save_fingerprints(
        self,
        fingerprint_key: str,
        *,
        norm_key: str,
        method: str,
        shingle_size: int,
        units: pd.DataFrame,
        pairs: pd.DataFrame,
        stats: dict[str, Any],
        seconds: float,
    ) -> None:
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        for table in ("fingerprint_sets", "units", "pairs"):
            cur.execute(f"DELETE FROM {table} WHERE fingerprint_key = ?", [fingerprint_key])
        self._insert_fingerprints(cur, fingerprint_key, units, pairs)
        self._renumber_source_analyses(cur, fingerprint_key)
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

    @staticmethod
    def _insert_fingerprints(
        cur: duckdb.DuckDBPyConnection, fingerprint_key: str, units: pd.DataFrame, pairs: pd.DataFrame
    ) -> None:
        """Insert unit and pair rows of a fingerprint set, inside the caller's transaction."""
        for table, frame, columns in (
            ("units", units, "unit_id, exact_key, n_shingles, simhash, minhash"),
            ("pairs", pairs, "a, b, hamming_bits, jaccard, containment"),
        ):
            cur.register("fingerprint_batch", frame)
            cur.execute(f"INSERT INTO {table} SELECT ?, {columns} FROM fingerprint_batch", [fingerprint_key])
            cur.unregister("fingerprint_batch")

    @_writes
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
        cur.execute("BEGIN TRANSACTION")
        try:
            if units is not None and pairs is not None:
                self._insert_fingerprints(cur, fingerprint_key, units, pairs)
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
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    @_reads
    def units(
        self,
        fingerprint_key: str,
        *,
        with_signatures: bool = False,
        source_ids: Sequence[int] | None = None,
    ) -> pd.DataFrame:
        """The units of a fingerprint set by unit id; with `source_ids`, those of the sources' pages only."""
        cols = "unit_id, exact_key, n_shingles, simhash" + (", minhash" if with_signatures else "")
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

    @_reads
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

    @_reads
    def pairs(self, fingerprint_key: str) -> pd.DataFrame:
        return (
            self.cursor()
            .execute(
                "SELECT a, b, hamming_bits, jaccard, containment FROM pairs WHERE fingerprint_key = ?",
                [fingerprint_key],
            )
            .df()
        )

    @_reads
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

    @_reads
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

    # --- each source's own analysis (compare) -----------------------------------------------
    @staticmethod
    def _pairs_digest(cur: duckdb.DuckDBPyConnection, fingerprint_key: str, analysis: list[Any]) -> str:
        """The count and a hash sum of the pairs of two units of a stored analysis (`analysis`: its source
        id and key), by the units' texts and the pairs' scores: the same whatever the unit ids."""
        return str(
            _one(
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

    def _renumber_source_analyses(self, cur: duckdb.DuckDBPyConnection, fingerprint_key: str) -> None:
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
            lost = _one(
                cur.execute(
                    "SELECT count(*) FROM source_units s WHERE s.source_id = ? AND s.analysis_key = ? AND NOT EXISTS "
                    "(SELECT 1 FROM units u WHERE u.fingerprint_key = ? AND u.exact_key = s.exact_key)",
                    [*analysis, fingerprint_key],
                ).fetchone()
            )
            if lost or self._pairs_digest(cur, fingerprint_key, analysis) != digest:
                for table in _SOURCE_ANALYSIS_TABLES:
                    cur.execute(f"DELETE FROM {table} WHERE source_id = ? AND analysis_key = ?", analysis)

    @_writes
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
        cur.execute("BEGIN TRANSACTION")
        try:
            for table in _SOURCE_ANALYSIS_TABLES:
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
                    self._pairs_digest(cur, fingerprint_key, key),
                    datetime.now(UTC).replace(tzinfo=None),
                ],
            )
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    @_reads
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

    @_reads
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

    @_reads
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

    def _upgrade(self, version: str) -> None:
        """A file of an older schema `version` brought to SCHEMA_VERSION in one transaction, its rows kept:
        each step takes one version to the next."""
        steps = {
            "2": self._upgrade_labels_per_labeler,
            "3": self._upgrade_to_4,
            "4": self._upgrade_to_5,
            "5": self._upgrade_candidate_stats,
        }
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        for older in UPGRADABLE_VERSIONS[UPGRADABLE_VERSIONS.index(version) :]:
            steps[older](cur)
        cur.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [SCHEMA_VERSION])
        cur.execute("COMMIT")
        self._blocks = self._pages_have_blocks(cur)

    def _upgrade_to_4(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 3 -> 4: the rejects' kinds, and the html_blocks columns of `pages`."""
        self._upgrade_reject_kinds(cur)
        self._upgrade_html_blocks(cur)

    def _upgrade_to_5(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 4 -> 5: the tables of each source's own analysis (empty: a comparison fills them). The
        version changes with them because a neardup of schema 4 rewrites fingerprint sets without dropping
        the analyses of their old unit ids: it must not open a file that holds some."""
        for table in _SOURCE_ANALYSIS_TABLES:
            cur.execute(self._ddl[table])

    def _upgrade_candidate_stats(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 5 -> 6: each fingerprint set's candidate statistics as fields, read once from the text of
        their notes (`candidate_stats.upgrade_stored_stats`)."""
        for key, stats in cur.execute("SELECT fingerprint_key, stats FROM fingerprint_sets").fetchall():
            upgraded = upgrade_stored_stats(json.loads(stats) if stats else {})
            cur.execute(
                "UPDATE fingerprint_sets SET stats = ? WHERE fingerprint_key = ?", [json.dumps(upgraded), key]
            )

    def _upgrade_html_blocks(self, cur: duckdb.DuckDBPyConnection) -> None:
        """`pages` gains the html_blocks columns; the HTML loaded before stays in `html`, where the readers
        find it (a Spark run's view keeps its own columns)."""
        kind = _one(
            cur.execute(
                "SELECT table_type FROM information_schema.tables WHERE table_catalog = ? AND table_name = 'pages'",
                [ALIAS],
            ).fetchone()
        )
        if kind == "BASE TABLE" and not self._pages_have_blocks(cur):
            for column, sql_type in (
                ("html_block", "BIGINT"),
                ("html_start", "INTEGER"),
                ("html_bytes", "INTEGER"),
            ):
                cur.execute(f"ALTER TABLE pages ADD COLUMN {column} {sql_type}")

    def _upgrade_labels_per_labeler(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 2 -> 3: labels keyed by (pair, labeler) instead of by pair, rows kept as they are."""
        cur.execute("ALTER TABLE labels RENAME TO labels_v2")
        cur.execute(self._ddl["labels"])  # schema.sql's, as _check_schema parsed it
        cur.execute(
            f"INSERT INTO labels ({self._LABEL_COLUMNS}) SELECT url_a, md5_a, url_b, md5_b, label, category, "
            "note, coalesce(labeler, ''), labeled_at, setting FROM labels_v2"
        )
        cur.execute("DROP TABLE labels_v2")

    def _upgrade_reject_kinds(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 3 -> 4: each reject's kind in a column of its own, read once from the words its reason
        begins with."""
        cur.execute("ALTER TABLE ingest_errors RENAME TO ingest_errors_v3")
        cur.execute(self._ddl["ingest_errors"])
        cur.execute(
            "INSERT INTO ingest_errors (source_id, source, line, kind, reason) "
            f"SELECT source_id, source, line, {kind_of_reason_sql('reason')}, reason FROM ingest_errors_v3"
        )
        cur.execute("DROP TABLE ingest_errors_v3")

    @_writes
    def _write_labels(self, rows: list[list[Any]]) -> list[bool]:
        """Upsert label rows in one transaction, all of them or none: whether each was kept (a stored label
        of the same pair and labeler given later than the row's `labeled_at` stays)."""
        kept = []
        with self._LABEL_WRITES:
            cur = self.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                for row in rows:
                    kept.append(_one(cur.execute(self._LABEL_UPSERT, row).fetchone()) > 0)
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

    @_writes
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

    @_reads
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

    @_writes
    def delete_label(
        self, url_a: str, url_b: str, *, md5_a: str = "", md5_b: str = "", labeler: str | None = None
    ) -> None:
        """Remove this labeler's label of a pair (undo)."""
        (a, ma), (b, mb) = sorted(((url_a, md5_a or ""), (url_b, md5_b or "")))
        self.cursor().execute(
            "DELETE FROM labels WHERE url_a = ? AND md5_a = ? AND url_b = ? AND md5_b = ? AND labeler = ?",
            [a, ma, b, mb, labeler or ""],
        )

    @_writes
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
        return bool(_one(n))

    @_writes
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
        from .csvsafe import DEFUSED_PATTERN
        from .labels import LABELS

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

    @_reads
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

    @_reads
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

    # --- a `neardup spark` run, read in place -------------------------------------------------
    @_writes
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
        if self.count_pages() or len(self.sources()):
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

    @_reads
    def spark_run(self) -> dict[str, str] | None:
        """Where this database's data lives if it was opened from a Spark run (dir, mode, keys), else None."""
        rows = self.cursor().execute("SELECT key, value FROM meta WHERE key LIKE 'spark_%'").fetchall()
        return {k.removeprefix("spark_"): v for k, v in rows} or None


def _cell(value: Any) -> Any:
    """A value of a DataFrame row, None where pandas holds a missing value (NaN, NaT, NA)."""
    return None if value is None or (not isinstance(value, (str, dict, list)) and pd.isna(value)) else value


def _shown(value: str) -> str:
    """A cell of an imported file, quoted and cut for an error message."""
    return repr(value) if len(value) <= 60 else repr(value[:57] + "...")
