"""The ingest stage: one crawl dump read, validated, normalized and sketched (in workers), and its pages
written to the store as one source (`ingest_file`). `SourceLoad` gathers the workers' results into inserts
and keeps the source's counts; `FileSummary` is the stage's output."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..batches import ingest_arrow
from ..config import Config
from ..errors import NotACrawlDump
from ..ingest import detect_format, file_sha256, read_batches
from ..markdown import counted
from ..parallel import SharedSlots, default_jobs, parallel_map, prefetch
from ..readers.arc import ArcBatches
from ..readers.jsonl import shared_lines
from ..readers.shared_captures import shared_captures
from ..readers.wacz import WaczBatches
from ..readers.warc import WarcBatches
from ..rejects import BROKEN_FILE, Reject, RejectKind
from ..revisits import source_page_lookup, stored_page_lookup
from ..store import ROW_GROUP_ROWS, Store
from .base import BATCH, INSERT_ROWS, PARALLEL_MIN, Progress, no_progress

# ... or fewer rows once they hold this many bytes (HTML mostly): 2,048 real pages of 150 KB to 1 MB would
# hold 0.3-2 GB in this process, twice over while the previous insert is written.
INSERT_BYTES = 64 << 20
INSERT_ERRORS = 50_000  # rejects are small rows: one insert of many is what makes a flood of them quick
# A file smaller than this (about `base.PARALLEL_MIN` pages of typical HTML) is read in this process.
PARALLEL_BYTES = 4_000_000
# The formats whose batches reach the workers through shared memory (`_shared`).
SHARED_FORMATS = frozenset({"jsonl", "warc", "arc", "wacz"})


@dataclass(slots=True)
class FileSummary:
    path: str
    status: str  # "loaded" | "already loaded"
    records: int = 0
    loaded: int = 0
    errors: int = 0
    seconds: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)  # rejected records by `Reject.label`
    # Why part of the file was not read (a truncated or corrupt compressed file), as in `ingest_errors`.
    broken: str | None = None
    # Web archives: records that are not pages, by WARC-Type (request, metadata, warcinfo) or as the ARC
    # file header, and how many WARC revisit records were loaded as byte-identical copies of the record
    # they refer to.
    skipped: dict[str, int] = field(default_factory=dict)
    revisits: int = 0

    def notes(self) -> list[str]:
        """What the counts of pages and rejects leave out: WARC revisits and an archive's skipped records."""
        out = []
        if self.revisits == 1:
            out.append("1 WARC revisit record loaded as a byte-identical copy of the record it refers to")
        elif self.revisits:
            out.append(
                f"{self.revisits:,} WARC revisit records loaded as byte-identical copies of the record "
                "they refer to"
            )
        if self.skipped:
            kinds = ", ".join(f"{n:,} {t}" for t, n in sorted(self.skipped.items(), key=lambda kv: -kv[1]))
            n_skipped = sum(self.skipped.values())
            # no format named: the kinds say it (request, warcinfo of a WARC; an ARC's file header)
            out.append(
                f"{counted(n_skipped, 'record')} skipped, not {'a page' if n_skipped == 1 else 'pages'} ({kinds})"
            )
        return out


class _Chunks:
    """The reader's batches as the workers take them (with the config; a JSON-lines block's lines, or an
    archive's record blocks, in shared memory when `slots` is given, see `SharedSlots`), and how far the
    reader is in the file."""

    def __init__(self, reader: Iterable[Any], config: Config, slots: SharedSlots | None) -> None:
        self.reader, self.config, self.slots = reader, config, slots
        # bytes of the file the batches taken so far reach (their `end_byte`: a `LineBlock`'s, a `RecordBatch`'s)
        self.read_bytes = 0

    def __iter__(self) -> Iterator[tuple[Any, Config]]:
        for chunk in prefetch(self.reader):
            self.read_bytes = max(chunk.end_byte, self.read_bytes)
            yield (chunk if self.slots is None else _shared(chunk, self.slots)), self.config


def _shared(chunk: Any, slots: SharedSlots) -> Any:
    """A batch with its bytes in `slots`: an archive's batch (a list of records) its blocks, a JSON-lines
    block its lines."""
    if isinstance(chunk, list):
        return shared_captures(chunk, slots)
    return shared_lines(chunk, slots)


class SourceLoad:
    """The pages of one source on their way into the store, and its counts.

    `add` takes each worker result (pages, their sketches, rejects) and gathers them; `flush` writes what
    is gathered as one insert, in a thread (DuckDB releases the GIL) while the caller keeps the workers
    fed, one insert at a time; `finish` writes the rest and closes the source with its counts. `close`
    ends the writer thread, whatever happened.
    """

    def __init__(self, store: Store, source_id: int, name: str, config: Config) -> None:
        self.store, self.source_id, self.name, self.config = store, source_id, name, config
        self.next_id = store.next_page_id()
        self.rows = store.count_pages()  # rows of `pages` so far: where its row groups fill up
        self.pending: list[pa.Table] = []  # DuckDB appends fewer, larger batches faster
        self.pending_sketches: list[pa.Table] = []
        self.pending_errors: list[tuple[int, Reject]] = []
        self.n_pending = self.pending_bytes = 0
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="neardup-writer")
        self.writing: Future[None] | None = None
        self.loaded = self.errors = self.done_records = 0
        self.reasons: Counter[str] = Counter()
        self.first_reject: str | None = None
        self.broken: str | None = None

    def load(self, chunks: _Chunks, jobs: int, progress: Progress, size: int) -> None:
        """`add` the workers' results for `chunks` (`jobs` of them), saying how far the reader is in the file
        (of `size` bytes)."""
        for good, sketches, bad, discard_from in parallel_map(ingest_arrow, chunks, jobs=jobs):
            if chunks.slots is not None:
                chunks.slots.done()
            self.add(good, sketches, bad, discard_from)
            progress("ingest", self.done_records, 0)
            if chunks.read_bytes:  # how far the reader is in the file, for a percentage and an ETA
                progress("read", min(chunks.read_bytes, size), size)

    def load_held_revisits(
        self, reader: WarcBatches, slots: SharedSlots | None, jobs: int, progress: Progress
    ) -> None:
        """Load the revisits `reader` held back, linked to the pages of the file they refer to: after those
        are written (`WarcBatches.held_revisits`). A few are read in this process: a pool's start costs more."""
        self.write_all()
        if reader.n_held < PARALLEL_MIN:
            slots, jobs = None, 1
        self.load(_Chunks(reader.held_revisits(), self.config, slots), jobs, progress, 0)

    def add(
        self, good: pa.Table, sketches: pa.Table, bad: list[tuple[int, Reject]], discard_from: int | None
    ) -> None:
        """One worker result: its pages and their sketches, its rejects (line, reject), and the line from
        which the source's pages and rejects so far are void (a gzip member that failed its CRC), if any."""
        if discard_from is not None:
            self.discard(discard_from)
        # a block's own error comes first; a WARC file's last
        if broken := next((r.detail for _, r in bad if r.kind in BROKEN_FILE), None):
            self.broken = broken
        if self.first_reject is None and bad:
            self.first_reject = bad[0][1].detail
        self.done_records += good.num_rows + len(bad)
        self.reasons.update(reject.label for _, reject in bad)
        self.pending.append(good)
        self.pending_sketches.append(sketches)
        self.pending_errors.extend(bad)
        self.n_pending += good.num_rows
        self.pending_bytes += good.nbytes
        if (
            self.n_pending >= INSERT_ROWS
            or self.pending_bytes >= INSERT_BYTES
            or len(self.pending_errors) >= INSERT_ERRORS
        ):
            self.flush()
        self.loaded += good.num_rows
        self.errors += len(bad)

    def discard(self, line: int) -> None:
        """Drop the source's pages and rejects from `line` on, written or gathered."""
        self.write_all()
        n_pages, dropped = self.store.discard_lines(self.source_id, line)
        self.loaded -= n_pages
        self.errors -= len(dropped)
        self.done_records -= n_pages + len(dropped)
        # kinds, which count as labels: the rejects of a JSON line have no variant
        self.reasons.subtract(dropped)

    def flush(self) -> None:
        """Write the gathered pages (numbered on from the store's last page id), sketches and rejects, once
        the insert before is written."""
        if not self.pending:
            return
        batch = pa.concat_tables(self.pending)
        ids = pa.array(np.arange(self.next_id, self.next_id + batch.num_rows, dtype=np.int64))
        self._wait()
        full = (self.rows + batch.num_rows) // ROW_GROUP_ROWS > self.rows // ROW_GROUP_ROWS
        self.writing = self.writer.submit(
            self._write,
            batch.append_column("page_id", ids),
            pa.concat_tables(self.pending_sketches),
            list(self.pending_errors),
            full,
        )
        self.next_id += batch.num_rows
        self.rows += batch.num_rows
        self.pending.clear()
        self.pending_sketches.clear()
        self.pending_errors.clear()
        self.n_pending = self.pending_bytes = 0

    def _write(
        self, batch: pa.Table, sketches: pa.Table, errors: list[tuple[int, Reject]], full: bool
    ) -> None:
        self.store.add_errors(self.source_id, self.name, errors)
        if batch.num_rows:
            self.store.add_ingested(
                batch, self.source_id, self.config.norm_key, sketches, self.config.sketch_key, checkpoint=full
            )

    def write_all(self) -> None:
        """Write what is gathered, and wait for it to be written."""
        self.flush()
        self._wait()

    def _wait(self) -> None:
        if self.writing is not None:
            self.writing.result()

    def finish(self, path: Path, reader: object) -> FileSummary:
        """Write the rest, reject records that repeat others, and close the source with its counts;
        `NotACrawlDump` if the file held no usable record (the caller drops the source)."""
        self.write_all()
        summary = FileSummary(self.name, "loaded", loaded=self.loaded, errors=self.errors, broken=self.broken)
        reasons = +self.reasons  # drop the kinds a discard took to zero
        summary.records = summary.loaded + summary.errors
        dup = self.store.reject_duplicate_records(self.source_id, self.name)
        if dup:
            reasons[RejectKind.DUPLICATE] += dup
            summary.loaded -= dup
            summary.errors += dup
        if isinstance(reader, WarcBatches | ArcBatches | WaczBatches):  # revisits loaded, not set aside
            summary.skipped = dict(reader.skipped)
            summary.revisits = self.store.count_warc_revisits(self.source_id) if reader.revisits else 0
        if summary.loaded == 0 and summary.broken is not None:
            raise NotACrawlDump(f"{path}: {summary.broken}; nothing loaded")
        if summary.loaded == 0 and not dup:  # a file of pages loaded already is a source of none new
            detail = ", ".join(f"{n} x {r}" for r, n in reasons.most_common(3)) or "no records"
            if summary.errors == 1 and self.first_reject is not None:  # the one reason: say it whole
                detail = self.first_reject
            raise NotACrawlDump(f"{path}: not a crawl dump: no usable record ({detail})")
        self.store.finish_source(
            self.source_id, n_records=summary.records, n_loaded=summary.loaded, n_errors=summary.errors
        )
        summary.reasons = {str(kind): n for kind, n in reasons.items()}
        return summary

    def close(self, *, failed: bool) -> None:
        """End the writer thread: after the insert in flight, or, when the load `failed`, without the ones
        not yet started."""
        self.writer.shutdown(wait=True, cancel_futures=failed)


def ingest_file(
    store: Store,
    path: str | Path,
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    name: str | None = None,
) -> FileSummary:
    """Load one crawl dump (and normalize it under `config`). Re-ingesting the same bytes is a no-op.

    `name` is what the source is listed as (its rejects and the Load page's sources): an upload's own file
    name rather than the temporary copy read; the path by default.

    Bad records go to `ingest_errors` as (line, kind, reason). A file with no usable record at all raises
    `NotACrawlDump` and leaves the database as it was; one whose records are loaded already (from other
    bytes: another file, another order) is a source with no new page.
    """
    path = Path(path)
    shown = name or str(path)
    t0 = time.perf_counter()
    fmt = detect_format(path)
    sha = file_sha256(path)
    if store.source_by_hash(sha) is not None:
        return FileSummary(shown, "already loaded")
    size = path.stat().st_size
    source_id = store.begin_source(shown, sha, fmt)
    load = SourceLoad(store, source_id, shown, config)
    slots: SharedSlots | None = None
    with store.bulk_load():  # checkpoints where row groups fill up, and once at the end
        try:
            n_jobs = 1 if size < PARALLEL_BYTES else jobs or default_jobs()
            warc = fmt == "warc"
            reader = read_batches(
                path,
                fmt,
                batch_records=BATCH,
                stored_pages=stored_page_lookup(store) if warc else None,
                source_pages=source_page_lookup(store, source_id) if warc else None,
            )
            # Workers read the lines of a JSON-lines dump, the record blocks of an archive, from shared
            # memory (see `SharedSlots`).
            if n_jobs > 1 and fmt in SHARED_FORMATS and SharedSlots.available():
                slots = SharedSlots()
            chunks = _Chunks(reader, config, slots)
            load.load(chunks, n_jobs, progress, size)
            if chunks.read_bytes:
                progress("read", size, size)  # the whole file read (its last batch may end before its end)
            if isinstance(reader, WarcBatches) and reader.n_held:
                load.load_held_revisits(reader, slots, n_jobs, progress)
            summary = load.finish(path, reader)
        except BaseException:
            load.close(failed=True)
            store.drop_source(source_id)
            raise
        finally:
            load.close(failed=False)
            if slots is not None:
                slots.close()
    summary.seconds = time.perf_counter() - t0
    return summary


def ingest(
    store: Store,
    paths: Iterable[str | Path],
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
) -> list[FileSummary]:
    return [ingest_file(store, p, config, progress=progress, jobs=jobs) for p in paths]
