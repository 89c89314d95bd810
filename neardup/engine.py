"""The pipeline: ingest -> normalize -> fingerprint + candidate pairs -> clusters at a threshold.

Every stage reads and writes through the `Store`, works in batches, and is computed once per setting:
texts per normalization, fingerprints and pairs per `Config.fingerprint_key`. A threshold change only
filters the stored pairs and re-clusters (`analyze`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .candidates import (
    CAPPED_NOTE,
    CandidateStats,
    above_floor,
    exact_scores,
    intersection_sizes,
    minhash_pairs,
    simhash_pairs,
)
from .clusters import WHY, components, representative_rows
from .config import Config
from .errors import NotACrawlDump
from .incremental import extend_fingerprints
from .ingest import LineBlock, RawLine, detect_format, file_sha256, read_batches, validate
from .minhash import estimate_jaccard
from .normalize import degenerate_reason, parse_page
from .parallel import parallel_map, prefetch
from .shingles import shingle_set32_of, text_words
from .simhash import hamming_many
from .sketch import sketch_many
from .store import ROW_GROUP_ROWS, Store
from .urls import apply_url_rules
from .warc import WarcBatches

# (stage, done, total): pages, except stage "read": bytes of the file read so far (JSON lines only)
# The bundled sample crawl (3,000 synthetic pages with ground truth): package data (neardup/sample_data).
SAMPLE_CRAWL = Path(__file__).resolve().parent / "sample_data" / "crawl.jsonl.gz"
Progress = Callable[[str, int, int], None]
BATCH = 256
INSERT_ROWS = 2048
# ... or fewer rows once they hold this many bytes (HTML mostly): 2,048 real pages of 150 KB to 1 MB would
# hold 0.3-2 GB in this process, twice over while the previous insert is written.
INSERT_BYTES = 64 << 20
INSERT_ERRORS = 50_000  # rejects are small rows: one insert of many is what makes a flood of them quick
# The kinds of reject that say part of a compressed file was not read (FileSummary.broken).
_BROKEN_KINDS = ("truncated compressed file", "corrupt compressed file")
# Below this many records a worker pool costs more than it saves.
PARALLEL_MIN = 2000


def _noop(stage: str, done: int, total: int) -> None:
    pass


# --- normalization (runs in workers) -------------------------------------------------------------
def _text_row(
    html: str | None, text_in: str | None, status: int | None, config: Config
) -> tuple[dict[str, Any], np.ndarray]:
    """The `texts` row of one page and its word hashes (for sketching)."""
    if html is not None:
        parsed = parse_page(
            html,
            mode=config.normalize,
            strip_tags=config.strip_tags,
            extractor=config.extractor,
            comments=config.comments,
        )
        text, title, too_complex, main_words = parsed.text, parsed.title, parsed.degenerate, parsed.main_words
    else:
        text, title, too_complex, main_words = " ".join((text_in or "").split()), "", None, None
    joined, hashes = text_words(text)
    row = {
        "text": text,
        "title": title,
        "n_words": len(hashes),
        "exact_key": hashlib.sha256(joined).hexdigest(),
        "degenerate": too_complex
        or degenerate_reason(
            text,
            title=title,
            status=status,
            n_words=len(hashes),
            min_words=config.min_words,
            main_words=main_words,
        ),
    }
    return row, hashes


def text_row(html: str | None, text_in: str | None, status: int | None, config: Config) -> dict[str, Any]:
    """Normalized text and everything derived from it for one page under `config`'s normalization."""
    return _text_row(html, text_in, status, config)[0]


def _ingest_records(
    lines: Iterable[RawLine], config: Config
) -> tuple[list[dict[str, Any]], list[tuple[int, str]], list[np.ndarray]]:
    """Validate and normalize records: the good ones (with their word hashes, for sketching) and (line, reason)."""
    good, bad, tokens = [], [], []
    if isinstance(lines, LineBlock) and lines.error is not None:
        bad.append((lines.error_line, lines.error))
    for raw in lines:
        try:
            rec = validate(raw)
            if isinstance(rec, str):
                bad.append((raw.line, rec))
                continue
            row, toks = _text_row(rec["html"], rec["text_in"], rec["status"], config)
        except Exception as exc:  # a case the checks do not know yet: the record is named, the load goes on
            bad.append((raw.line, _unexpected(exc)))
            continue
        rec["line"] = raw.line
        rec.update(row)
        good.append(rec)
        tokens.append(toks)
    return good, bad, tokens


def _unexpected(exc: BaseException) -> str:
    return f"unreadable record (please report this): {type(exc).__name__}: {ascii(str(exc))[1:-1][:200]}"


def _ingest_batch(
    args: tuple[Iterable[RawLine], Config],
) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    good, bad, _ = _ingest_records(*args)
    return good, bad


def _normalize_batch(args: tuple[pd.DataFrame, Config]) -> pd.DataFrame:
    df, config = args
    rows = [
        text_row(
            h if isinstance(h, str) else None,
            t if isinstance(t, str) else None,
            None if pd.isna(s) else int(s),
            config,
        )
        for h, t, s in zip(df["html"], df["text_in"], df["status"], strict=True)
    ]
    out = pd.DataFrame(rows, columns=["text", "title", "n_words", "exact_key", "degenerate"])
    out.insert(0, "page_id", df["page_id"].to_numpy())
    out.insert(0, "norm_key", config.norm_key)
    return out


# --- ingest -------------------------------------------------------------------------------------
@dataclass(slots=True)
class FileSummary:
    path: str
    status: str  # "loaded" | "already loaded"
    records: int = 0
    loaded: int = 0
    errors: int = 0
    seconds: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)
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


# What an ingest worker returns per batch; the main process adds page ids (see `Store.add_ingested`).
_INGEST_SCHEMA = pa.schema(
    [
        ("line", pa.int64()),
        ("url", pa.string()),
        ("canonical_url", pa.string()),
        ("host", pa.string()),
        ("fetched_at", pa.timestamp("us")),
        ("status", pa.int32()),
        ("html", pa.string()),
        ("text_in", pa.string()),
        ("md5", pa.string()),
        ("rel_canonical", pa.string()),
        ("extra", pa.string()),
        ("text", pa.string()),
        ("title", pa.string()),
        ("n_words", pa.int32()),
        ("exact_key", pa.string()),
        ("degenerate", pa.string()),
    ]
)


def _ingest_arrow(
    args: tuple[Iterable[RawLine], Config],
) -> tuple[pa.Table, pa.Table, list[tuple[int, str]], int | None]:
    """Records -> (pages with texts, sketches of the content pages, rejects, the line from which earlier
    pages must be dropped (`LineBlock.discard_from`)), built in the worker: the tables cross the process
    boundary as a few buffers and DuckDB scans them without Python objects. Sketching here reuses the
    words just computed, so the default setting needs no second pass."""
    lines, config = args
    good, bad, tokens = _ingest_records(lines, config)
    if not good:  # rejects only, as in a flood of them: the empty tables are built once
        return *_no_pages(), bad, getattr(lines, "discard_from", None)
    try:
        table = pa.Table.from_pylist(good, schema=_INGEST_SCHEMA)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        table, good, tokens = _arrow_rows(good, tokens, bad)
    content = [i for i, rec in enumerate(good) if rec["degenerate"] is None]
    sketches = _sketch_table([good[i]["exact_key"] for i in content], [tokens[i] for i in content], config)
    return table, sketches, bad, getattr(lines, "discard_from", None)


@functools.cache
def _no_pages() -> tuple[pa.Table, pa.Table]:
    """The pages and sketches tables of a batch without a page (building them costs ~0.7 ms a batch)."""
    return _INGEST_SCHEMA.empty_table(), _sketch_table([], [], Config())


def _arrow_rows(
    good: list[dict[str, Any]], tokens: list[np.ndarray], bad: list[tuple[int, str]]
) -> tuple[pa.Table, list[dict[str, Any]], list[np.ndarray]]:
    """The pages table row by row, when the batch as a whole does not convert: rows that do not go to `bad`."""
    tables, kept, kept_tokens = [], [], []
    for rec, toks in zip(good, tokens, strict=True):
        try:
            tables.append(pa.Table.from_pylist([rec], schema=_INGEST_SCHEMA))
        except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
            bad.append((rec["line"], _unexpected(exc)))
            continue
        kept.append(rec)
        kept_tokens.append(toks)
    table = pa.concat_tables(tables) if tables else _INGEST_SCHEMA.empty_table()
    return table, kept, kept_tokens


def _reason_kind(reason: str) -> str:
    return reason.split(":")[0].split(" (")[0].split(" at byte")[0]


def ingest_file(
    store: Store, path: str | Path, config: Config, *, progress: Progress = _noop, jobs: int | None = None
) -> FileSummary:
    """Load one crawl dump (and normalize it under `config`). Re-ingesting the same bytes is a no-op.

    Bad records go to `ingest_errors` as (line, reason). A file with no usable record at all raises
    `NotACrawlDump` and leaves the database as it was.
    """
    path = Path(path)
    t0 = time.perf_counter()
    fmt = detect_format(path)
    sha = file_sha256(path)
    if store.source_by_hash(sha) is not None:
        return FileSummary(str(path), "already loaded")
    size = path.stat().st_size
    source_id = store.begin_source(str(path), sha, fmt)
    summary = FileSummary(str(path), "loaded")
    reasons: Counter[str] = Counter()
    next_id = store.next_page_id()
    rows = store.count_pages()  # rows of `pages` so far: where its row groups fill up
    writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="neardup-writer")
    with store.bulk_load():  # checkpoints where row groups fill up, and once at the end
        try:
            small = size < 4_000_000  # about PARALLEL_MIN pages of typical HTML
            reader = read_batches(path, fmt, batch_records=BATCH)
            read_bytes = 0

            def batches() -> Iterator[tuple[Any, Config]]:
                nonlocal read_bytes
                for chunk in prefetch(reader):
                    read_bytes = getattr(chunk, "end_byte", 0) or read_bytes
                    yield chunk, config

            done_records = 0
            pending: list[pa.Table] = []  # DuckDB appends fewer, larger batches faster
            pending_sketches: list[pa.Table] = []
            pending_errors: list[tuple[int, str]] = []
            n_pending = 0
            pending_bytes = 0
            # DuckDB writes in a thread (it releases the GIL), one batch at a time, while this thread keeps
            # the workers fed: otherwise they idle for every append.
            writing: Future[None] | None = None

            def write(batch: pa.Table, sketches: pa.Table, errors: list[tuple[int, str]], full: bool) -> None:
                store.add_errors(source_id, str(path), errors)
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

            for good, sketches, bad, discard_from in parallel_map(
                _ingest_arrow, batches(), jobs=1 if small else jobs
            ):
                if discard_from is not None:  # a gzip member failed its CRC: its pages so far go too
                    flush()
                    if writing is not None:
                        writing.result()
                    n_pages, dropped = store.discard_lines(source_id, discard_from)
                    summary.loaded -= n_pages
                    summary.errors -= len(dropped)
                    done_records -= n_pages + len(dropped)
                    reasons.subtract(_reason_kind(r) for r in dropped)
                if bad and bad[0][1].startswith(_BROKEN_KINDS):  # a block's own error comes first
                    summary.broken = bad[0][1]
                done_records += good.num_rows + len(bad)
                for _, reason in bad:
                    reasons[_reason_kind(reason)] += 1
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
            if isinstance(reader, WarcBatches):
                summary.skipped, summary.revisits = dict(reader.skipped), reader.revisits
            dup = store.reject_duplicate_records(source_id, str(path))
            if dup:
                reasons["duplicate record"] += dup
                summary.loaded -= dup
                summary.errors += dup
            if summary.loaded == 0 and summary.broken is not None:
                raise NotACrawlDump(f"{path}: {summary.broken}; nothing loaded")
            if summary.loaded == 0:
                detail = ", ".join(f"{n} x {r}" for r, n in reasons.most_common(3)) or "no records"
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
    summary.reasons = dict(reasons)
    summary.seconds = time.perf_counter() - t0
    return summary


def ingest(
    store: Store,
    paths: Sequence[str | Path],
    config: Config,
    *,
    progress: Progress = _noop,
    jobs: int | None = None,
) -> list[FileSummary]:
    return [ingest_file(store, p, config, progress=progress, jobs=jobs) for p in paths]


def ensure_texts(store: Store, config: Config, *, progress: Progress = _noop, jobs: int | None = None) -> int:
    """Normalize the pages that have no text yet under `config.norm_key`; returns how many were done."""
    total = store.count_pages_without_text(config.norm_key)
    if total == 0:
        return 0
    batches = ((df, config) for df in store.pages_without_text(config.norm_key, BATCH))
    done = 0
    for out in parallel_map(_normalize_batch, batches, jobs=1 if total < PARALLEL_MIN else jobs):
        store.add_texts(out)
        done += len(out)
        progress("normalize", done, total)
    return done


# --- fingerprints and pairs --------------------------------------------------------------------
def _signatures(blobs: Sequence[bytes], num_perm: int) -> np.ndarray:
    """MinHash signatures (n x num_perm, uint32) from their stored bytes."""
    if not len(blobs):
        return np.empty((0, num_perm), np.uint32)
    return np.frombuffer(b"".join(blobs), dtype=np.uint32).reshape(len(blobs), -1)


def _fingerprint_batch(args: tuple[list[str], Config]) -> tuple[np.ndarray, np.ndarray]:
    """Shingle-set sizes and the fingerprints of `config.method` for texts (the Spark path's unit of work)."""
    texts, config = args
    sk = sketch_many([text_words(t)[1] for t in texts], config.shingle_size, config.num_perm, config.seed)
    return sk.n_shingles, sk.simhash if config.method == "simhash" else sk.minhash


def _sketch_table(exact_keys: list[str], word_hashes: Sequence[np.ndarray], config: Config) -> pa.Table:
    """Both fingerprints of each word sequence under `config.sketch_key` (rows of the `sketches` table)."""
    sk = sketch_many(word_hashes, config.shingle_size, config.num_perm, config.seed)
    sigs = np.ascontiguousarray(sk.minhash)
    width = sigs.shape[1] * 4
    # One binary column straight from the signature matrix's bytes: fixed-width rows, offsets computed.
    offsets = pa.py_buffer(np.arange(len(sigs) + 1, dtype=np.int32) * width)
    minhash = pa.Array.from_buffers(pa.binary(), len(sigs), [None, offsets, pa.py_buffer(sigs)])
    return pa.table(
        {
            "exact_key": pa.array(exact_keys, pa.string()),
            "n_shingles": pa.array(sk.n_shingles),
            "simhash": pa.array(sk.simhash, pa.uint64()),
            "minhash": minhash,
        }
    )


def _sketch_batch(args: tuple[list[str], list[str], Config]) -> pa.Table:
    exact_keys, texts, config = args
    return _sketch_table(exact_keys, [text_words(t)[1] for t in texts], config)


def ensure_sketches(
    store: Store, config: Config, *, progress: Progress = _noop, jobs: int | None = None
) -> int:
    """Sketch the distinct content texts that have no sketch under `config.sketch_key` yet (the ingest
    sketches its own setting as it goes, so this runs for a new shingle size or normalization)."""
    total = store.count_unsketched(config.norm_key, config.sketch_key, min_words=config.min_words)
    if total == 0:
        return 0
    batches = (
        (df["exact_key"].tolist(), df["text"].tolist(), config)
        for df in store.unsketched_texts(
            config.norm_key, config.sketch_key, BATCH * 4, min_words=config.min_words
        )
    )
    done = 0
    pending: list[pa.Table] = []
    for table in parallel_map(_sketch_batch, batches, jobs=1 if total < PARALLEL_MIN else jobs):
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
    store: Store, config: Config, *, progress: Progress = _noop, jobs: int | None = None
) -> dict[str, Any]:
    """Fingerprints and verified candidate pairs for `config` (cached per `config.fingerprint_key`).

    When they are stored already this only reads (an on-demand store opens the file read-only)."""
    cached = _current_fingerprints(store, config)
    if cached is not None:
        return cached
    with store.writing():
        ensure_texts(store, config, progress=progress, jobs=jobs)
        cached = _current_fingerprints(store, config) or extend_fingerprints(
            store, config, progress=progress, jobs=jobs
        )
        if cached is not None:
            return cached
        return _compute_fingerprints(store, config, progress=progress, jobs=jobs)


def _current_fingerprints(store: Store, config: Config) -> dict[str, Any] | None:
    """The stored fingerprint set of `config`, if every page has its text and the set covers every text
    (a dump loaded after the fingerprints were computed brings new texts: they are computed again)."""
    with store.reading():
        cached = store.fingerprint_set(config.fingerprint_key)
        if cached is None or store.count_pages_without_text(config.norm_key):
            return None
        return (
            cached
            if cached["n_units"] == store.count_units(config.norm_key, min_words=config.min_words)
            else None
        )


def _compute_fingerprints(
    store: Store, config: Config, *, progress: Progress = _noop, jobs: int | None = None
) -> dict[str, Any]:
    key = config.fingerprint_key
    t0 = time.perf_counter()
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
        sigs = _signatures(units["minhash"], config.num_perm)
        a, b, jac, cont, stats = minhash_pairs(
            sigs,
            n_shingles,
            similarity=config.similarity,
            floor=config.minhash_floor,
            min_size_ratio=config.min_size_ratio,
            seed=config.seed,
            min_shingles=config.min_contained_shingles,
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
        stats=stats.as_dict(),
        seconds=time.perf_counter() - t0,
    )
    return store.fingerprint_set(key)  # type: ignore[return-value]


def _set_batch(args: tuple[list[str], list[str], int]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Exact shingle sets of texts: (their keys, set sizes, the sets' sorted uint32 values concatenated)."""
    keys, texts, k = args
    sets = [shingle_set32_of(text_words(t)[1], k) for t in texts]
    lens = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    return keys, lens, np.concatenate(sets) if sets else np.empty(0, np.uint32)


def verify_exact(
    store: Store,
    config: Config,
    unit_keys: np.ndarray,
    n_shingles: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    stats: CandidateStats,
    *,
    progress: Progress = _noop,
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
        _set_batch, batches, jobs=1 if len(need) < PARALLEL_MIN else jobs
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


# --- clusters at a threshold --------------------------------------------------------------------
@dataclass(slots=True)
class Fingerprints:
    """What re-clustering needs, loaded once per fingerprint key (the app caches this).

    `arrays` holds the per-page columns as integer arrays (factorized URLs, hosts, MD5s), so that
    `analyze` runs on numpy alone and a threshold change costs milliseconds, not a DataFrame shuffle.
    """

    config: Config
    pages: pd.DataFrame  # one row per page, with unit_id (-1 for degenerate pages)
    n_units: int
    pairs: dict[str, np.ndarray]
    simhash: np.ndarray | None
    minhash: np.ndarray | None
    stats: dict[str, Any]
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    hosts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    # Threshold-independent: distinct MD5s ("md5") and distinct texts ("units") among content pages.
    fixed_counts: dict[str, int] = field(default_factory=dict)
    n_shingles: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # per unit


def _page_arrays(pages: pd.DataFrame) -> tuple[dict[str, np.ndarray], np.ndarray]:
    n = len(pages)
    url_codes, _ = pd.factorize(
        pd.concat([pages["canonical_url"], pages["rel_canonical"]], ignore_index=True)
    )
    host_codes, hosts = pd.factorize(pages["host"])
    fetched = pd.to_datetime(pages["fetched_at"])
    arrays = {
        "unit": pages["unit_id"].to_numpy(dtype=np.int64),
        "page_id": pages["page_id"].to_numpy(dtype=np.int64),
        "url_id": url_codes[:n].astype(np.int64),
        "rel_id": url_codes[n:].astype(np.int64),
        "fetched_ns": np.where(fetched.isna(), -1, fetched.to_numpy(dtype="datetime64[ns]").astype(np.int64)),
        "url_len": pages["canonical_url"].str.len().to_numpy(dtype=np.int64),
        "host": host_codes.astype(np.int64),
        "md5": pd.factorize(pages["md5"])[0].astype(np.int64),
    }
    return arrays, np.asarray(hosts, dtype=object)


def load_fingerprints(
    store: Store, config: Config, *, progress: Progress = _noop, jobs: int | None = None
) -> Fingerprints:
    fset = ensure_fingerprints(store, config, progress=progress, jobs=jobs)
    key = config.fingerprint_key
    units = store.units(key, with_signatures=config.method == "minhash")
    pages = store.page_table(config.norm_key, min_words=config.min_words)
    if config.url_rules:  # the config's URL rules rewrite the canonical URLs (see `neardup rules`)
        pages["canonical_url"] = [apply_url_rules(u, config.url_rules) for u in pages["url"]]
        pages["rel_canonical"] = [
            None if not isinstance(u, str) else apply_url_rules(u, config.url_rules)
            for u in pages["rel_canonical"]
        ]
    unit_of = pd.Series(units["unit_id"].to_numpy(), index=units["exact_key"])
    pages["unit_id"] = pages["exact_key"].map(unit_of).fillna(-1).astype(np.int64)
    pages.loc[pages["degenerate"].notna(), "unit_id"] = -1
    simhash = minhash = None
    if config.method == "simhash":
        simhash = units["simhash"].to_numpy(dtype=np.uint64)
    else:
        minhash = _signatures(units["minhash"], config.num_perm)
    arrays, hosts = _page_arrays(pages)
    content = arrays["unit"] >= 0
    fixed_counts = {
        "md5": len(np.unique(arrays["md5"][content])),
        "units": len(np.unique(arrays["unit"][content])),
    }
    return Fingerprints(
        config,
        pages,
        len(units),
        store.pair_arrays(key),
        simhash,
        minhash,
        fset["stats"],
        arrays,
        hosts,
        fixed_counts,
        units["n_shingles"].to_numpy(dtype=np.int64),
    )


def subset_fingerprints(fp: Fingerprints, keep: np.ndarray) -> Fingerprints:
    """The fingerprints of the pages where `keep` (a boolean mask over `fp.pages`) is true, e.g. of one
    source: the units and pairs are shared, only the pages and their counts change."""
    arrays = {k: v[keep] for k, v in fp.arrays.items()}
    content = arrays["unit"] >= 0
    fixed_counts = {
        "md5": len(np.unique(arrays["md5"][content])),
        "units": len(np.unique(arrays["unit"][content])),
    }
    return dataclasses.replace(
        fp, pages=fp.pages[keep].reset_index(drop=True), arrays=arrays, fixed_counts=fixed_counts
    )


def pair_scores(fp: Fingerprints, config: Config) -> np.ndarray:
    """The similarity that `config.threshold` applies to, per stored pair (bits for simhash)."""
    if config.method == "simhash":
        return fp.pairs["hamming_bits"].astype(np.int64)
    return fp.pairs["jaccard" if config.similarity == "jaccard" else "containment"].astype(np.float64)


def pairs_at_threshold(fp: Fingerprints, config: Config) -> np.ndarray:
    """Boolean mask over stored pairs: which are duplicates at `config.threshold`."""
    scores = pair_scores(fp, config)
    return scores <= config.threshold if config.method == "simhash" else scores >= config.threshold


@dataclass(slots=True)
class Analysis:
    config: Config
    pages: pd.DataFrame
    numbers: dict[str, Any]
    hosts: pd.DataFrame
    cluster_sizes: pd.Series
    warnings: list[str]


def similarity_to(
    fp: Fingerprints, units_a: np.ndarray, units_b: np.ndarray, config: Config
) -> tuple[np.ndarray, np.ndarray]:
    """(similarity, where it comes from) of unit pairs, in the threshold's unit: Hamming bits for simhash;
    for minhash the Jaccard or the containment, as `config.similarity` says.

    Sources: "same text" (0 bits / 1.0); "stored pair", the pair's stored score, which the threshold
    applied to (exact for MinHash with verify: exact); "fingerprints", the Hamming distance of the two
    SimHash fingerprints; "minhash estimate", from the signatures (and, for containment, the shingle
    counts and the size guard) for units that are not a stored pair (joined through other units).
    """
    ua, ub = np.asarray(units_a, dtype=np.int64), np.asarray(units_b, dtype=np.int64)
    same = ua == ub
    sim = np.where(same, 0.0 if config.method == "simhash" else 1.0, np.nan)
    source = np.where(same, "same text", "").astype(object)

    lo, hi = np.minimum(ua, ub), np.maximum(ua, ub)
    stored = fp.pairs["a"].astype(np.int64) * fp.n_units + fp.pairs["b"].astype(np.int64)
    want = lo * fp.n_units + hi
    found = np.zeros(len(want), dtype=bool)
    if len(stored) and len(want):
        order = np.argsort(stored, kind="stable")
        pos = np.minimum(np.searchsorted(stored[order], want), len(order) - 1)
        found = ~same & (stored[order][pos] == want)
        sim[found] = pair_scores(fp, config)[order][pos[found]]
    source[found] = "stored pair"

    rest = ~same & ~found
    if rest.any():
        if config.method == "simhash":
            assert fp.simhash is not None
            sim[rest] = hamming_many(fp.simhash[ua[rest]], fp.simhash[ub[rest]])
            source[rest] = "fingerprints"
        else:
            assert fp.minhash is not None
            est = estimate_jaccard(fp.minhash[ua[rest]], fp.minhash[ub[rest]])
            if config.similarity == "containment":
                na, nb = fp.n_shingles[ua[rest]], fp.n_shingles[ub[rest]]
                inter = est * (na + nb) / (1.0 + est)  # |A n B| from the Jaccard estimate and the set sizes
                est = exact_scores(inter, na, nb, config.min_size_ratio, config.min_contained_shingles)[1]
            sim[rest] = est
            source[rest] = "minhash estimate"
    return sim, source


def analyze(fp: Fingerprints, config: Config) -> Analysis:
    """Cluster at `config.threshold` (same fingerprint key as `fp`) and compute the report numbers.

    Clusters are the connected components of distinct texts (units) joined by pairs at the threshold;
    pages inherit their text's cluster, so exact duplicates are always together. Cluster ids run
    1..K by size (largest first), then by first page id; degenerate pages get none.
    """
    if config.fingerprint_key != fp.config.fingerprint_key:
        raise ValueError("analyze() needs fingerprints computed for the same setting")
    arr = fp.arrays
    unit, page_id = arr["unit"], arr["page_id"]
    n_total = len(unit)
    content = unit >= 0
    idx = np.flatnonzero(content)
    keep = pairs_at_threshold(fp, config)
    unit_comp = components(fp.n_units, fp.pairs["a"][keep], fp.pairs["b"][keep])

    # Components with content pages, numbered compactly (bincount: no sort).
    comp_of = unit_comp[unit[idx]]
    counts_all = np.bincount(comp_of, minlength=int(unit_comp.max(initial=-1)) + 1)
    present = np.flatnonzero(counts_all)
    compact = np.full(len(counts_all), -1, dtype=np.int64)
    compact[present] = np.arange(len(present))
    inverse, counts = compact[comp_of], counts_all[present]
    first_page = np.full(len(present), np.iinfo(np.int64).max)
    np.minimum.at(first_page, inverse, page_id[idx])
    rank = np.empty(len(present), dtype=np.int64)
    rank[np.lexsort((first_page, -counts))] = np.arange(1, len(present) + 1)
    cluster = np.zeros(n_total, dtype=np.int64)
    cluster[idx] = rank[inverse]
    size = np.zeros(n_total, dtype=np.int64)
    size[idx] = counts[inverse]

    # A single page is its own representative; the rule only has to run over clusters of two or more.
    rep = np.where(content, np.arange(n_total), -1)
    why_page = np.full(n_total, None, dtype=object)
    why_page[content] = WHY[2]  # "shortest URL": a single page
    multi = idx[size[idx] > 1]
    rows, why = representative_rows(
        cluster[multi],
        arr["url_id"][multi],
        arr["rel_id"][multi],
        arr["fetched_ns"][multi],
        arr["url_len"][multi],
        page_id[multi],
        config.representative,
    )
    rep_of_cluster = np.full(len(present) + 1, -1, dtype=np.int64)  # cluster id -> row of its representative
    rep_of_cluster[cluster[multi][rows]] = multi[rows]
    why_of_cluster = np.empty(len(present) + 1, dtype=object)
    why_of_cluster[cluster[multi][rows]] = WHY[why]
    rep[multi] = rep_of_cluster[cluster[multi]]
    why_page[multi] = why_of_cluster[cluster[multi]]
    is_rep = rep == np.arange(n_total)
    # Similarity to the representative, in the threshold's unit.
    sim = np.full(n_total, np.nan)
    sim[idx] = similarity_to(fp, unit[idx], unit[rep[idx]], config)[0]

    na_int = ~content
    canonical = fp.pages["canonical_url"].to_numpy(dtype=object)
    pages = fp.pages.assign(
        cluster_id=pd.arrays.IntegerArray(cluster, na_int),
        cluster_size=pd.arrays.IntegerArray(size, na_int),
        representative_id=pd.arrays.IntegerArray(np.where(content, page_id[rep], 0), na_int),
        representative_url=np.where(content, canonical[rep], None),
        why=why_page,
        is_representative=is_rep,
        similarity_to_representative=sim,
    )

    n_content = len(idx)
    n_clusters = len(present)
    dup_sizes = np.sort(counts[counts > 1])[::-1]
    redundant = n_content - n_clusters
    numbers = {
        "total_pages": n_total,
        "content_pages": n_content,
        "degenerate_pages": n_total - n_content,
        "byte_identical_duplicates": n_content - fp.fixed_counts["md5"],
        "exact_duplicates": n_content - fp.fixed_counts["units"],
        "near_duplicates": fp.fixed_counts["units"] - n_clusters,
        "unique_pages": n_clusters,
        "duplicate_clusters": len(dup_sizes),
        "largest_cluster": int(counts.max()) if n_clusters else 0,
        "redundant_pages": redundant,
        "redundant_pct": round(100.0 * redundant / n_total, 2) if n_total else 0.0,
        "pairs_at_threshold": int(keep.sum()),
    }
    host = arr["host"][idx]
    host_pages = np.bincount(host, minlength=len(fp.hosts))
    host_redundant = np.bincount(host, weights=~is_rep[idx], minlength=len(fp.hosts)).astype(np.int64)
    hosts = pd.DataFrame({"host": fp.hosts, "pages": host_pages, "redundant": host_redundant})
    hosts = hosts[hosts["pages"] > 0]
    hosts["redundant_pct"] = (100.0 * hosts["redundant"] / hosts["pages"]).round(1)
    hosts = hosts.sort_values(["redundant", "pages"], ascending=False, kind="stable").reset_index(drop=True)
    # Only the capped-bucket notes are warnings; the others (e.g. the LSH bands x rows) are information.
    warnings = [note for note in fp.stats.get("notes", []) if CAPPED_NOTE in note]
    largest = numbers["largest_cluster"]
    if n_content and largest >= 20 and largest > 0.01 * n_content:
        warnings.append(
            f"the largest cluster holds {largest} pages ({100 * largest / n_content:.1f}% of content pages): "
            "boilerplate may be being fingerprinted; check it, or try normalize: main or a tighter threshold"
        )
    return Analysis(config, pages, numbers, hosts, pd.Series(dup_sizes, name="size"), warnings)
