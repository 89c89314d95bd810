"""The store-driven pipeline: ingest -> normalize -> fingerprint + verified candidate pairs.

Every step reads and writes through the `Store`, hands its batches to workers (`neardup.batches`), and is
computed once per setting: texts per normalization, fingerprints and pairs per `Config.fingerprint_key`.
Clustering at a threshold and the report numbers are `neardup.analysis`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .batches import ingest_arrow, normalize_batch, set_batch, signatures, sketch_batch
from .candidates import (
    CandidateStats,
    above_floor,
    exact_scores,
    intersection_sizes,
    minhash_pairs,
    simhash_pairs,
)
from .config import Config
from .errors import NotACrawlDump
from .ingest import detect_format, file_sha256, read_batches
from .parallel import SharedSlots, default_jobs, parallel_map, prefetch
from .readers.arc import ArcBatches
from .readers.jsonl import shared_lines
from .readers.wacz import WaczBatches
from .readers.warc import WarcBatches
from .rejects import BROKEN_FILE, Reject, RejectKind
from .revisits import stored_page_lookup
from .store import ROW_GROUP_ROWS, Store

# The bundled sample crawl (3,000 synthetic pages with ground truth): package data (neardup/sample_data).
SAMPLE_CRAWL = Path(__file__).resolve().parent / "sample_data" / "crawl.jsonl.gz"
# (stage, done, total): pages, except stage "read": bytes of the file read so far (JSON lines only)
Progress = Callable[[str, int, int], None]
BATCH = 256
INSERT_ROWS = 2048
# ... or fewer rows once they hold this many bytes (HTML mostly): 2,048 real pages of 150 KB to 1 MB would
# hold 0.3-2 GB in this process, twice over while the previous insert is written.
INSERT_BYTES = 64 << 20
INSERT_ERRORS = 50_000  # rejects are small rows: one insert of many is what makes a flood of them quick
# Below this many records a worker pool costs more than it saves.
PARALLEL_MIN = 2000


def no_progress(stage: str, done: int, total: int) -> None:
    pass


# --- ingest -------------------------------------------------------------------------------------
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
    # WARC: records that are not pages, by WARC-Type (request, metadata, warcinfo), and how many revisit
    # records were loaded as byte-identical copies of the record they refer to.
    skipped: dict[str, int] = field(default_factory=dict)
    revisits: int = 0

    def notes(self) -> list[str]:
        """What the counts of pages and rejects leave out: WARC revisits and skipped records."""
        out = []
        if self.revisits:
            out.append(
                f"{self.revisits:,} WARC revisit records loaded as byte-identical copies of the record "
                "they refer to"
            )
        if self.skipped:
            kinds = ", ".join(f"{n:,} {t}" for t, n in sorted(self.skipped.items(), key=lambda kv: -kv[1]))
            out.append(f"{sum(self.skipped.values()):,} WARC records skipped, not pages ({kinds})")
        return out


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
    summary = FileSummary(shown, "loaded")
    reasons: Counter[str] = Counter()
    next_id = store.next_page_id()
    rows = store.count_pages()  # rows of `pages` so far: where its row groups fill up
    writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="neardup-writer")
    slots: SharedSlots | None = None
    with store.bulk_load():  # checkpoints where row groups fill up, and once at the end
        try:
            small = size < 4_000_000  # about PARALLEL_MIN pages of typical HTML
            n_jobs = 1 if small else jobs or default_jobs()
            reader = read_batches(
                path,
                fmt,
                batch_records=BATCH,
                stored_pages=stored_page_lookup(store) if fmt == "warc" else None,
            )
            read_bytes = 0

            # Workers read the lines of a JSON-lines dump from shared memory (see `SharedSlots`).
            if n_jobs > 1 and fmt == "jsonl" and SharedSlots.available():
                slots = SharedSlots()

            def batches() -> Iterator[tuple[Any, Config]]:
                nonlocal read_bytes
                for chunk in prefetch(reader):
                    read_bytes = getattr(chunk, "end_byte", 0) or read_bytes
                    yield (chunk if slots is None else shared_lines(chunk, slots)), config

            done_records = 0
            first_reject: str | None = None
            pending: list[pa.Table] = []  # DuckDB appends fewer, larger batches faster
            pending_sketches: list[pa.Table] = []
            pending_errors: list[tuple[int, Reject]] = []
            n_pending = 0
            pending_bytes = 0
            # DuckDB writes in a thread (it releases the GIL), one batch at a time, while this thread keeps
            # the workers fed: otherwise they idle for every append.
            writing: Future[None] | None = None

            def write(
                batch: pa.Table, sketches: pa.Table, errors: list[tuple[int, Reject]], full: bool
            ) -> None:
                store.add_errors(source_id, shown, errors)
                if batch.num_rows:
                    store.add_ingested(
                        batch, source_id, config.norm_key, sketches, config.sketch_key, checkpoint=full
                    )

            def flush() -> None:
                nonlocal next_id, n_pending, pending_bytes, writing, rows
                if pending:
                    batch = pa.concat_tables(pending)
                    ids = pa.array(np.arange(next_id, next_id + batch.num_rows, dtype=np.int64))
                    if writing is not None:
                        writing.result()
                    full = (rows + batch.num_rows) // ROW_GROUP_ROWS > rows // ROW_GROUP_ROWS
                    writing = writer.submit(
                        write,
                        batch.append_column("page_id", ids),
                        pa.concat_tables(pending_sketches),
                        list(pending_errors),
                        full,
                    )
                    next_id += batch.num_rows
                    rows += batch.num_rows
                    pending.clear()
                    pending_sketches.clear()
                    pending_errors.clear()
                    n_pending = pending_bytes = 0

            for good, sketches, bad, discard_from in parallel_map(ingest_arrow, batches(), jobs=n_jobs):
                if slots is not None:
                    slots.done()
                if discard_from is not None:  # a gzip member failed its CRC: its pages so far go too
                    flush()
                    if writing is not None:
                        writing.result()
                    n_pages, dropped = store.discard_lines(source_id, discard_from)
                    summary.loaded -= n_pages
                    summary.errors -= len(dropped)
                    done_records -= n_pages + len(dropped)
                    # kinds, which count as labels: the rejects of a JSON line have no variant
                    reasons.subtract(dropped)
                # a block's own error comes first; a WARC file's last
                if broken := next((r.detail for _, r in bad if r.kind in BROKEN_FILE), None):
                    summary.broken = broken
                if first_reject is None and bad:
                    first_reject = bad[0][1].detail
                done_records += good.num_rows + len(bad)
                reasons.update(reject.label for _, reject in bad)
                pending.append(good)
                pending_sketches.append(sketches)
                pending_errors.extend(bad)
                n_pending += good.num_rows
                pending_bytes += good.nbytes
                if (
                    n_pending >= INSERT_ROWS
                    or pending_bytes >= INSERT_BYTES
                    or len(pending_errors) >= INSERT_ERRORS
                ):
                    flush()
                summary.loaded += good.num_rows
                summary.errors += len(bad)
                progress("ingest", done_records, 0)
                if read_bytes:  # JSON lines: how far the reader is in the file, for a percentage and an ETA
                    progress("read", min(read_bytes, size), size)
            flush()
            if writing is not None:
                writing.result()
            reasons = +reasons  # drop the kinds a discard took to zero
            summary.records = summary.loaded + summary.errors
            dup = store.reject_duplicate_records(source_id, shown)
            if dup:
                reasons[RejectKind.DUPLICATE] += dup
                summary.loaded -= dup
                summary.errors += dup
            if isinstance(reader, WarcBatches | ArcBatches | WaczBatches):  # revisits loaded, not set aside
                summary.skipped = dict(reader.skipped)
                summary.revisits = store.count_warc_revisits(source_id) if reader.revisits else 0
            if summary.loaded == 0 and summary.broken is not None:
                raise NotACrawlDump(f"{path}: {summary.broken}; nothing loaded")
            if summary.loaded == 0 and not dup:  # a file of pages loaded already is a source of none new
                detail = ", ".join(f"{n} x {r}" for r, n in reasons.most_common(3)) or "no records"
                if summary.errors == 1 and first_reject is not None:  # the one reason: say it whole
                    detail = first_reject
                raise NotACrawlDump(f"{path}: not a crawl dump: no usable record ({detail})")
            store.finish_source(
                source_id, n_records=summary.records, n_loaded=summary.loaded, n_errors=summary.errors
            )
        except BaseException:
            writer.shutdown(wait=True, cancel_futures=True)
            store.drop_source(source_id)
            raise
        finally:
            writer.shutdown(wait=True)
            if slots is not None:
                slots.close()
    summary.reasons = {str(kind): n for kind, n in reasons.items()}
    summary.seconds = time.perf_counter() - t0
    return summary


def ingest(
    store: Store,
    paths: Sequence[str | Path],
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
) -> list[FileSummary]:
    return [ingest_file(store, p, config, progress=progress, jobs=jobs) for p in paths]


# --- texts, sketches, fingerprints and pairs -----------------------------------------------------
# The key of a fingerprint set's statistics that records the pages it was made from (`Store.page_coverage`):
# a set with it is checked, and extended, by page ids instead of by counting every text and unit.
COVERAGE = "pages_covered"


def ensure_texts(
    store: Store,
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    since: int = -1,
) -> int:
    """Normalize the pages (after page id `since`) that have no text yet under `config.norm_key`; returns
    how many were done."""
    total = store.count_pages_without_text(config.norm_key, since=since)
    if total == 0:
        return 0
    batches = ((df, config) for df in store.pages_without_text(config.norm_key, BATCH, since=since))
    done = 0
    for out in parallel_map(normalize_batch, batches, jobs=1 if total < PARALLEL_MIN else jobs):
        store.add_texts(out)
        done += len(out)
        progress("normalize", done, total)
    return done


def ensure_sketches(
    store: Store,
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    since: int = -1,
) -> int:
    """Sketch the distinct content texts (of the pages after page id `since`) that have no sketch under
    `config.sketch_key` yet (the ingest sketches its own setting as it goes, so this runs for a new shingle
    size or normalization)."""
    total = store.count_unsketched(
        config.norm_key, config.sketch_key, min_words=config.min_words, since=since
    )
    if total == 0:
        return 0
    batches = (
        (df["exact_key"].tolist(), df["text"].tolist(), config)
        for df in store.unsketched_texts(
            config.norm_key, config.sketch_key, BATCH * 4, min_words=config.min_words, since=since
        )
    )
    done = 0
    pending: list[pa.Table] = []
    for table in parallel_map(sketch_batch, batches, jobs=1 if total < PARALLEL_MIN else jobs):
        pending.append(table)
        done += table.num_rows
        if sum(t.num_rows for t in pending) >= INSERT_ROWS * 4:
            store.add_sketches(pa.concat_tables(pending), config.sketch_key)
            pending.clear()
        progress("fingerprint", done, total)
    if pending:
        store.add_sketches(pa.concat_tables(pending), config.sketch_key)
    return done


def ensure_fingerprints(
    store: Store, config: Config, *, progress: Progress = no_progress, jobs: int | None = None
) -> dict[str, Any]:
    """Fingerprints and verified candidate pairs for `config` (cached per `config.fingerprint_key`).

    When they are stored already this only reads (an on-demand store opens the file read-only)."""
    cached = _current_fingerprints(store, config)
    if cached is not None:
        return cached
    with store.writing():
        stored = store.fingerprint_set(config.fingerprint_key)
        since = added_since(store, stored) if stored is not None else None
        ensure_texts(store, config, progress=progress, jobs=jobs, since=-1 if since is None else since)
        from .incremental import extend_fingerprints  # it builds on this module's steps

        cached = _current_fingerprints(store, config) or extend_fingerprints(
            store, config, progress=progress, jobs=jobs
        )
        if cached is not None:
            return cached
        return _compute_fingerprints(store, config, progress=progress, jobs=jobs)


def added_since(store: Store, fingerprint_set: dict[str, Any]) -> int | None:
    """The last page id a stored fingerprint set covers, when the pages up to it are the ones it was made
    from (pages were only added since: their ids are greater); None when the set does not say (stored by an
    earlier version, or by Spark) or a page it covered is gone."""
    coverage = fingerprint_set["stats"].get(COVERAGE)
    if coverage is None or store.pages_after(coverage) is None:
        return None
    return int(coverage["last_page_id"])


def _current_fingerprints(store: Store, config: Config) -> dict[str, Any] | None:
    """The stored fingerprint set of `config`, if every page has its text and the set covers every text
    (a dump loaded after the fingerprints were computed brings new texts: `ensure_fingerprints` then extends
    the set with them, `incremental.extend_fingerprints`, or computes it again where it cannot). A set that
    records the pages it covers (`COVERAGE`) is current when no page came or went since; one without is
    checked by counting the texts and units."""
    with store.reading():
        cached = store.fingerprint_set(config.fingerprint_key)
        if cached is None:
            return None
        coverage = cached["stats"].get(COVERAGE)
        if coverage is not None:
            return cached if store.pages_after(coverage) == 0 else None
        if store.count_pages_without_text(config.norm_key):
            return None
        return (
            cached
            if cached["n_units"] == store.count_units(config.norm_key, min_words=config.min_words)
            else None
        )


def _compute_fingerprints(
    store: Store, config: Config, *, progress: Progress = no_progress, jobs: int | None = None
) -> dict[str, Any]:
    key = config.fingerprint_key
    t0 = time.perf_counter()
    coverage = store.page_coverage()  # every page has its text (`ensure_texts`, under the same lease)
    ensure_sketches(store, config, progress=progress, jobs=jobs)
    progress("candidates", 0, 1)
    units = store.unit_sketches(
        config.norm_key,
        config.sketch_key,
        with_minhash=config.method == "minhash",
        min_words=config.min_words,
    )
    units.insert(0, "unit_id", np.arange(len(units), dtype=np.int32))
    n_shingles = units["n_shingles"].to_numpy(np.int32)
    if config.method == "simhash":
        fps = units["simhash"].to_numpy(np.uint64)
        a, b, bits, stats = simhash_pairs(fps, config.simhash_max_bits)
        units["minhash"] = None
        pairs = pd.DataFrame(
            {"a": a, "b": b, "hamming_bits": bits.astype(np.int16), "jaccard": np.nan, "containment": np.nan}
        )
    else:
        sigs = signatures(units["minhash"], config.num_perm)
        a, b, jac, cont, stats = minhash_pairs(
            sigs,
            n_shingles,
            similarity=config.similarity,
            floor=config.minhash_floor,
            min_size_ratio=config.min_size_ratio,
            seed=config.seed,
            min_shingles=config.min_contained_shingles,
            partial_copies=config.searches_partial_copies,
        )
        del sigs  # ~0.5 GB at 1M texts; the verification needs the room
        if config.verify == "exact":
            a, b, jac, cont = verify_exact(
                store,
                config,
                units["exact_key"].to_numpy(),
                n_shingles,
                a,
                b,
                stats,
                progress=progress,
                jobs=jobs,
            )
        units["simhash"] = None
        pairs = pd.DataFrame(
            {
                "a": a,
                "b": b,
                "hamming_bits": pd.array([None] * len(a), dtype="Int16"),
                "jaccard": jac,
                "containment": cont,
            }
        )
    progress("candidates", 1, 1)
    store.save_fingerprints(
        key,
        norm_key=config.norm_key,
        method=config.method,
        shingle_size=config.shingle_size,
        units=units,
        pairs=pairs,
        stats={**stats.as_dict(), COVERAGE: coverage},
        seconds=time.perf_counter() - t0,
    )
    return store.fingerprint_set(key)  # type: ignore[return-value]


def verify_exact(
    store: Store,
    config: Config,
    unit_keys: np.ndarray,
    n_shingles: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    stats: CandidateStats,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exact Jaccard and containment of MinHash pairs (units a[i], b[i]); keeps those at or above the floor.

    `unit_keys` and `n_shingles` are per unit: its exact key and its number of distinct shingles.
    The shingle sets of the units in pairs are rebuilt from their texts (in workers) as sorted uint32,
    the values MinHash sketched, and intersected in bulk (`intersection_sizes`). A pair reaches this
    step because its estimate passed the floor; near the floor that selects pairs whose estimate came
    out high, so the exact scores are what the threshold should apply to.
    """
    stats.verified_exact = len(a)
    if not len(a):
        return a, b, np.empty(0), np.empty(0)
    need = np.unique(np.concatenate((a, b)))
    progress("verify", 0, len(need))
    rank = np.full(len(unit_keys), -1, dtype=np.int64)
    rank[need] = np.arange(len(need))
    index = pd.Index(unit_keys[need])
    batches = (
        (df["exact_key"].tolist(), df["text"].tolist(), config.shingle_size)
        for df in store.unit_texts(config.norm_key, unit_keys[need].tolist(), BATCH * 4)
    )
    # One buffer, filled as the sets arrive: a set of 32-bit values is at most as large as the unit's
    # set of 64-bit shingle hashes, so the units' shingle counts bound the total (~0.6 GB at 1M pages).
    values = np.empty(int(np.asarray(n_shingles, dtype=np.int64)[need].sum()), dtype=np.uint32)
    pos_parts, len_parts, filled, done = [], [], 0, 0
    for keys, lens, batch_values in parallel_map(
        set_batch, batches, jobs=1 if len(need) < PARALLEL_MIN else jobs
    ):
        values[filled : filled + len(batch_values)] = batch_values
        filled += len(batch_values)
        pos_parts.append(index.get_indexer(keys))
        len_parts.append(lens)
        done += len(keys)
        progress("verify", done, len(need))
    pos = np.concatenate(pos_parts) if pos_parts else np.empty(0, np.int64)
    arrived_lens = np.concatenate(len_parts) if len_parts else np.empty(0, np.int64)
    if (pos < 0).any() or len(pos) != len(need):
        raise RuntimeError("exact verification: a unit's text is missing from the store")
    # The batches come in no particular order: address each set where it arrived (no copy of the values).
    lens, offsets = np.empty_like(arrived_lens), np.empty_like(arrived_lens)
    lens[pos] = arrived_lens
    offsets[pos] = np.concatenate(([0], np.cumsum(arrived_lens)[:-1]))
    inter = intersection_sizes(values, lens, rank[a], rank[b], offsets=offsets)
    jac, cont = exact_scores(
        inter, lens[rank[a]], lens[rank[b]], config.min_size_ratio, config.min_contained_shingles
    )
    keep = above_floor(jac, cont, config.similarity, config.minhash_floor)
    stats.rejected_exact = int(len(a) - keep.sum())
    return a[keep], b[keep], jac[keep], cont[keep]
