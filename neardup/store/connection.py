"""Connections to a database file and the leases that share them: one connection per file and process,
opened on demand (read-only unless a writer needs it), waiting for another process's lock, and the base
of `Store` that every part of the store builds on (`StoreCore`: `cursor`, `writing`, `reading`, `close`).
"""

from __future__ import annotations

import atexit
import functools
import inspect
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self, TypeVar

import duckdb
import pandas as pd

from ..dbfile import remove_database_file
from ..errors import DatabaseLocked, NeardupError

DEFAULT_DB = "neardup.duckdb"
DUCKDB_MEMORY = "1GB"
# A file open only to read (the app's pages between writes): DuckDB needs little beyond the blocks a query
# scans, and keeps those cached up to its limit; at 1 GB a read of the signatures of a million-page crawl's
# paired units left 500 MB of them resident (bench/RESULTS.md). Sorts and joins spill past it.
DUCKDB_READ_MEMORY = "256MB"
# A process whose reads each scan a column once (`neardup report`: the signatures twice to count the capped
# buckets, the texts of the copies a window at a time): a block is seldom read again, yet every block scanned
# stays cached up to the limit, so the limit is what the scans cost in memory (bench/RESULTS.md: 128 MB left
# the report's peak at 300k pages ~70 MB higher than this). Its joins and aggregates spill past it.
DUCKDB_SCAN_MEMORY = "64MB"
# Tables are stored in row groups of this many rows (DuckDB's default is 122,880). A checkpoint
# re-compresses every row group that changed since the last one, so a bulk load checkpoints when a row
# group of `pages` fills up; at 16k rows (~260 MB of HTML) that stays within the memory cap.
ROW_GROUP_ROWS = 16_384
CHECKPOINT_THRESHOLD = "512MB"
F = TypeVar("F", bound=Callable[..., Any])
ALIAS = "neardup"  # the attached file's catalog name inside each store's connection

# How long an open waits for another process's lock (a short write: a label, an app page's read) before
# it names the holder; NEARDUP_LOCK_WAIT_S overrides. An on-demand store keeps the file open this long after
# its last use, so one app page's queries share one open (attaching costs a few ms; see bench/bench_app.py).
LOCK_WAIT_S = 10.0
LINGER_S = 1.0
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


def sql_literal(value: str) -> str:
    """A quoted SQL string, for the few statements that cannot bind parameters (ATTACH, view definitions)."""
    return "'" + value.replace("'", "''") + "'"


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


def _attach(
    path: str, *, write: bool, bulk: bool, lock_wait_s: float, memory_limit: str | None = None
) -> duckdb.DuckDBPyConnection:
    """A connection with the file attached as `ALIAS`, waiting up to `lock_wait_s` for another process's lock;
    DuckDB's memory limited to `memory_limit` (else DUCKDB_MEMORY for a write, DUCKDB_READ_MEMORY for a read).

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
        # (1.45 GB with 1 GB); a read-only open less (DUCKDB_READ_MEMORY). Operators that need more spill to
        # disk. NEARDUP_DUCKDB_MEMORY overrides both, and `memory_limit`.
        default = memory_limit or (DUCKDB_MEMORY if write else DUCKDB_READ_MEMORY)
        limit = os.environ.get("NEARDUP_DUCKDB_MEMORY", default)
        con.execute("SET memory_limit = ?", [limit])
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


@contextmanager
def transaction(cur: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The block's statements on `cur` as one transaction: committed when the block ends, rolled back when it
    raises (the exception goes on)."""
    cur.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    cur.execute("COMMIT")


def one_row(row: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """The one row an aggregate (count, max) or a pragma always answers."""
    if row is None:
        raise RuntimeError("an aggregate query returned no row")
    return row


_SIZE_UNITS = {"bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def duckdb_size_bytes(text: str) -> int:
    """Bytes of a size as DuckDB shows a setting ("953.6 MiB", "256 bytes"): cut to a tenth of its unit, so
    the middle of that tenth (set again, it shows the same)."""
    value, unit = text.split()
    return int(float(value) * _SIZE_UNITS[unit] + (0.05 * _SIZE_UNITS[unit] if unit.endswith("iB") else 0))


def one_value(row: tuple[Any, ...] | None) -> Any:
    """The value of the one-row, one-column answer an aggregate always gives."""
    return one_row(row)[0]


class _Leases:
    """The leases one thread holds on one file."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


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
        self.held = threading.local()  # a thread's `_Leases` (a thread never waits for itself)

    def acquire(
        self,
        *,
        write: bool,
        bulk: bool,
        lock_wait_s: float,
        pin: bool = False,
        memory_limit: str | None = None,
    ) -> _Leases | None:
        """Take a lease; returns the count it was added to (None for a pin), to hand back to `release`:
        a generator holding a lease can be closed by the collector on another thread. `memory_limit` is
        DuckDB's where this opens the file (`_attach`); a connection open already keeps its own."""
        leases = self.held.__dict__.setdefault("leases", _Leases())
        mine = leases.n
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
                    self.con = _attach(
                        self.path, write=write, bulk=bulk, lock_wait_s=lock_wait_s, memory_limit=memory_limit
                    )
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
            if pin:
                return None
            leases.n += 1
            return leases

    def release(self, leases: _Leases | None, *, linger_s: float) -> None:
        with self.cond:
            if leases is not None:
                leases.n -= 1
            self.users -= 1
            self.pins -= leases is None
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

    def close_idle(self) -> None:
        """Close every file no one uses, now: run at the interpreter's exit, before a linger timer (a daemon
        thread) could close one while the interpreter finalizes, which aborts the process inside DuckDB."""
        with self._lock:
            files = list(self._files.values())
        for f in files:
            f.close_idle()


_CONNECTIONS = _Connections()
atexit.register(_CONNECTIONS.close_idle)


def _leased(write: bool) -> Callable[[F], F]:
    """Run a Store method (or iterate a generator method) holding a read or write lease on the file."""

    def decorate(method: F) -> F:
        if inspect.isgeneratorfunction(method):

            @functools.wraps(method)
            def generator(self: StoreCore, *args: Any, **kwargs: Any) -> Any:
                with self._lease(write=write):
                    yield from method(self, *args, **kwargs)

            return generator  # type: ignore[return-value]

        @functools.wraps(method)
        def call(self: StoreCore, *args: Any, **kwargs: Any) -> Any:
            with self._lease(write=write):
                return method(self, *args, **kwargs)

        return call  # type: ignore[return-value]

    return decorate


reads, writes = _leased(False), _leased(True)


class StoreCore:
    """What every part of a `Store` builds on: the file's path, how it is opened, and a lease on its one
    connection in this process (`cursor` inside `writing`, `reading`, or a method decorated with `reads` or
    `writes`). `Store` (the package's facade) documents the ways a file is held."""

    # Whether `pages` has the html_blocks columns (not in a file of schema 3 or earlier opened read-only,
    # nor in the view over a Spark run's Parquet from before them).
    _blocks: bool
    # An older schema version the file has: `Store._init_schema` upgrades it; a read-only open reads it.
    _upgrade_from: str | None

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
        self.path = str(path)
        # DuckDB's memory limit where this store opens the file (None: `_attach`'s default for a read or
        # a write)
        self.memory_limit = memory_limit
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
        if self._file.bulk and self._file.users:
            raise DatabaseLocked(f"{self.path} is being bulk-loaded in this process; retry when it is done")

    def _lease_enter(self, *, write: bool, bulk: bool = False, pin: bool = False) -> _Leases | None:
        if write and self.read_only:
            raise NeardupError(f"{self.path} was opened read-only; open it again to write")
        return self._file.acquire(
            write=write, bulk=bulk, lock_wait_s=self.lock_wait_s, pin=pin, memory_limit=self.memory_limit
        )

    @contextmanager
    def _lease(self, *, write: bool, bulk: bool = False) -> Iterator[None]:
        leases = self._lease_enter(write=write, bulk=bulk)
        try:
            yield
        except duckdb.IOException as exc:
            if "Could not read enough bytes" in str(exc):  # a lost block of a damaged file: one line
                raise _open_error(self.path, exc, write=write) from None
            raise
        finally:
            self._file.release(leases, linger_s=self.linger_s)

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

    @contextmanager
    def duckdb_memory_at_most(self, limit_bytes: int) -> Iterator[None]:
        """DuckDB's memory limit at most `limit_bytes` while the block runs (its sorts, joins and inserts
        spill what passes it; blocks it cached beyond it are evicted), then as it was. The setting is the
        open connection's: call it inside `writing` or `reading`."""
        cur = self.cursor()
        before = duckdb_size_bytes(
            one_value(cur.execute("SELECT current_setting('memory_limit')").fetchone())
        )
        if before <= limit_bytes:
            yield
            return
        cur.execute("SET memory_limit = ?", [f"{int(limit_bytes)}B"])
        try:
            yield
        finally:
            cur.execute("SET memory_limit = ?", [f"{before}B"])

    def cursor(self) -> duckdb.DuckDBPyConnection:
        con = self._file.con
        if con is None or not self._file.users:
            raise RuntimeError(
                "a Store method ran without a lease on the file: decorate it with @reads or @writes"
            )
        cur = con.cursor()
        cur.execute(f"USE {ALIAS}")  # a cursor starts in the connection's in-memory catalog
        return cur

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if not self.on_demand:
                self._file.release(None, linger_s=0.0)
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

    def __enter__(self) -> Self:
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
