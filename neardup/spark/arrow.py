"""The work Spark hands to the Python workers through `mapInArrow` (the Arrow sibling of `mapInPandas`:
no pandas round trip for raw bytes and timestamps).

Each function calls the local engine's own per-batch functions (`neardup.batches`) or the candidate
search's kernels on one Arrow batch. `per_batch` makes one of them a `mapInArrow` function; the
ingest of JSON lines and Parquet (`ingest_fn`) keeps counts across a partition's batches, and
`representatives_fn` needs a partition's whole clusters, so those two read the partition themselves.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..analysis import ruled_urls
from ..batches import fingerprint_batch, ingest_batch, set_batch, signature_matrix, signatures
from ..candidates import (
    CandidateStats,
    SizeClassTables,
    above_floor,
    band_key_columns,
    cross_pairs,
    exact_scores,
    intersection_sizes,
    lsh_band_table,
    pairs_in_runs,
    score_estimates,
    size_class_keys,
    size_classes,
    verified_band_pairs,
    verified_size_class_pairs,
)
from ..clusters import pick_representatives
from ..config import Config
from ..errors import NotACrawlDump
from ..ingest import ARCHIVE_READERS, detect_format
from ..readers.capture import STORED_WARC_FIELDS, StoredPage, WarcCapture
from ..readers.warc import WarcBatches
from ..records import RawLine, parse_time
from ..simhash import hamming_many
from ..urls import UrlRule
from .session import FILE, SRC, START, display_path

# Pairs emitted per Arrow batch when expanding buckets (a capped bucket alone makes 2M pairs).
PAIR_BATCH = 1 << 20

ArrowFn = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

RECORD = pa.schema(
    [
        ("kind", pa.string()),  # page | error | chunk | revisit (a WARC revisit of another file's record)
        ("src", pa.int32()),
        ("file", pa.string()),
        ("block_start", pa.int64()),
        ("idx", pa.int64()),  # position of the record in its split (blank lines count)
        ("good_idx", pa.int64()),  # position among the split's good records
        ("n_lines", pa.int64()),
        ("n_good", pa.int64()),
        ("n_bad", pa.int64()),  # kind = chunk
        ("error_kind", pa.string()),  # kind = error: a `RejectKind` value
        ("reason", pa.string()),  # kind = error
        ("url", pa.string()),
        ("canonical_url", pa.string()),
        ("host", pa.string()),
        ("fetched_at", pa.timestamp("us")),
        ("status", pa.int32()),
        ("md5", pa.string()),
        ("rel_canonical", pa.string()),
        ("extra", pa.string()),
        ("html", pa.string()),
        ("text", pa.string()),
        ("title", pa.string()),
        ("n_words", pa.int32()),
        ("exact_key", pa.string()),
        ("degenerate", pa.string()),
        # a WARC page: the payload digest its extra keeps (its html is kept for the revisits of other files)
        ("payload_digest", pa.string()),
        # kind = revisit: WARC-Refers-To-Target-URI / -Date, its block; its other fields are in `extra`
        ("refers_to_url", pa.string()),
        ("refers_to_at", pa.timestamp("us")),
        ("block", pa.binary()),
        # a page copied from another file's page for a revisit: that page's split and good_idx
        ("ref_src", pa.int32()),
        ("ref_file", pa.string()),
        ("ref_good_idx", pa.int64()),
    ]
)
UNIT_SIMHASH = pa.schema(
    [("unit_id", pa.int32()), ("exact_key", pa.string()), ("n_shingles", pa.int32()), ("simhash", pa.int64())]
)
UNIT_MINHASH = pa.schema(
    [
        ("unit_id", pa.int32()),
        ("exact_key", pa.string()),
        ("n_shingles", pa.int32()),
        ("minhash", pa.binary()),
    ]
)
UNIT_SET = pa.schema([("unit_id", pa.int32()), ("shingles", pa.binary())])
PAIR_BITS = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("hamming_bits", pa.int16())])
PAIR_IDS = pa.schema([("a", pa.int32()), ("b", pa.int32())])
# An entry of the size-class tables: `bucket` is a `size_class_keys` key without its lowest bit (`indexed`).
SIZE_CLASS_ENTRY = pa.schema(
    [("table", pa.int32()), ("bucket", pa.int64()), ("indexed", pa.int8()), ("unit_id", pa.int32())]
)
PAIR_EST = pa.schema(
    [("a", pa.int32()), ("b", pa.int32()), ("jaccard", pa.float64()), ("containment", pa.float64())]
)
# A unit's signature in one key group of a band (`BandGroups`).
BAND_ENTRY = pa.schema(
    [("group", pa.int32()), ("unit_id", pa.int32()), ("n_shingles", pa.int32()), ("minhash", pa.binary())]
)
# What a key group's task returns: the pairs kept (`PAIR_EST`, the other columns null), then one row of the
# group's bucket counts (a and b null; size_class 1 for a band of the size-class pass).
GROUP_COUNTS = ("candidates", "largest_bucket", "capped_buckets", "capped_members")
GROUP_PAIRS = pa.schema(
    [*PAIR_EST, ("size_class", pa.int8()), *((name, pa.int64()) for name in GROUP_COUNTS)]
)
URLS = pa.schema([("page_id", pa.int64()), ("canonical_url", pa.string()), ("rel_canonical", pa.string())])
REPS = pa.schema(
    [
        ("cluster_id", pa.int64()),
        ("representative_id", pa.int64()),
        ("representative_url", pa.string()),
        ("why", pa.string()),
    ]
)

_SPARK_TYPES = {
    pa.string(): "string",
    pa.int8(): "tinyint",
    pa.int16(): "smallint",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.float64(): "double",
    pa.binary(): "binary",
    pa.timestamp("us"): "timestamp_ntz",
}


def ddl(schema: pa.Schema) -> str:
    """Spark DDL for an Arrow schema (the types used here only)."""
    return ", ".join(f"`{f.name}` {_SPARK_TYPES[f.type]}" for f in schema)


def per_batch(fn: Callable[..., Iterable[pa.RecordBatch]], *args: Any) -> ArrowFn:
    """The `mapInArrow` function that yields `fn(batch, *args)`'s batches for each non-empty batch.

    `fn` is a module-level function, so Spark ships it by name (the workers import `neardup`)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows:
                yield from fn(batch, *args)

    return run


# --- ingest: validate + normalize with `batches.ingest_batch` -----------------------------------
# The fields of a revisit's `WarcCapture` that travel in a `kind = revisit` row's `extra` (its block apart).
_REVISIT_FIELDS = tuple(
    f.name
    for f in fields(WarcCapture)
    if f.name not in ("block", "original", "stored", "pending", "forward", "record_cut")
)
# The id a copied page's extra names until its page has one (`run.number_pages` sets it; ids start at 1).
PAGE_ID_LATER = 0


def _record_rows(
    base: dict[str, Any],
    raws: list[RawLine],
    config: Config,
    counts: list[int],
    keep_html: bool,
    keep_payloads: bool = False,
) -> list[dict[str, Any]]:
    """`RECORD` rows (pages, errors) of one split's records; `counts` [lines, good, bad] of the split
    so far: its good and bad counts move on.

    With `keep_payloads` (WARC files read together), a revisit whose record is not in its file is a
    `kind = revisit` row holding its place among the good records (`link_revisits` makes it a page or a
    reject), and the pages with a payload digest keep their html for such revisits."""
    waiting = {
        raw.line
        for raw in raws
        if keep_payloads and isinstance(raw.payload, WarcCapture) and raw.payload.awaits_stored_page
    }
    good, bad = ingest_batch(([raw for raw in raws if raw.line not in waiting] if waiting else raws, config))
    by_line = {rec["line"]: rec for rec in good}
    rows = []
    for raw in raws:  # in the reader's order: a page's id follows it
        cap = raw.payload if isinstance(raw.payload, WarcCapture) else None
        if cap is not None and raw.line in waiting:
            rows.append(
                {
                    **base,
                    "kind": "revisit",
                    "idx": raw.line,
                    "good_idx": counts[1],
                    "url": cap.url,
                    "payload_digest": cap.payload_digest,
                    "refers_to_url": cap.refers_to_url,
                    "refers_to_at": parse_time(cap.refers_to_date),
                    "extra": json.dumps({name: getattr(cap, name) for name in _REVISIT_FIELDS}),
                    "block": cap.block,
                }
            )
            counts[1] += 1
            continue
        rec = by_line.get(raw.line)
        if rec is None:
            continue
        row = {**base, **rec, "kind": "page", "idx": rec["line"], "good_idx": counts[1]}
        digest = cap.page_payload_digest if cap is not None and keep_payloads else None
        row["payload_digest"] = digest
        if not keep_html and digest is None:
            row["html"] = None
        rows.append(row)
        counts[1] += 1
    for line, reject in bad:
        rows.append(
            {**base, "kind": "error", "idx": line, "error_kind": reject.kind, "reason": reject.detail}
        )
        counts[2] += 1
    return rows


def linked_revisits(batch: pa.RecordBatch, config: Config, keep_html: bool) -> Iterator[pa.RecordBatch]:
    """`kind = revisit` rows (`_record_rows`) joined with the page of another file each stands for
    (columns orig_html, orig_status, orig_extra, ref_src, ref_file, ref_good_idx; null for none) as `RECORD`
    rows: a page copied from it as the local engine copies a stored page (`WarcCapture` with `stored`), or
    the reject the local engine gives, each in the revisit's place (src, file, idx, good_idx)."""
    for row in batch.to_pylist():
        cap = WarcCapture(**json.loads(row["extra"]), block=row["block"])
        if row["orig_html"] is not None:
            orig = json.loads(row["orig_extra"] or "{}")
            warc = {n: orig[k] for k, n in STORED_WARC_FIELDS.items() if k in orig}
            cap = replace(cap, stored=StoredPage(PAGE_ID_LATER, row["orig_html"], row["orig_status"], warc))
        base = {k: row[k] for k in ("src", "file", "block_start")}
        good, bad = ingest_batch(([RawLine(row["idx"], cap)], config))
        out = []
        for rec in good:
            page = {**base, **rec, "kind": "page", "idx": row["idx"], "good_idx": row["good_idx"]}
            page.update({k: row[k] for k in ("ref_src", "ref_file", "ref_good_idx")})
            page["payload_digest"] = cap.payload_digest
            if not keep_html:
                page["html"] = None
            out.append(page)
        for line, reject in bad:
            out.append(
                {**base, "kind": "error", "idx": line, "good_idx": row["good_idx"]}
                | {"error_kind": reject.kind, "reason": reject.detail}
            )
        yield pa.RecordBatch.from_pylist(out, schema=RECORD)


def archive_batches(path: Path) -> Iterable[list[RawLine]]:
    """The local engine's reader of a web archive file by its bytes (`ingest.ARCHIVE_READERS`: WARC,
    ARC, WACZ); a file detection refuses is read as WARC, whose reader names what is wrong in it. A one-stream
    WARC.gz failing its CRC gives its reject last: the records before it stay (their rows are sent)."""
    try:
        fmt = detect_format(path)
    except NotACrawlDump:
        fmt = "warc"
    reader = ARCHIVE_READERS.get(fmt, WarcBatches)(path, batch_records=256)
    return reader.record_lists() if isinstance(reader, WarcBatches) else reader


def warc_records(
    batch: pa.RecordBatch, config: Config, keep_html: bool, keep_payloads: bool = False
) -> Iterator[pa.RecordBatch]:
    """Read each WARC, ARC or WACZ file named in the rows with the local engine's reader (`archive_batches`) and
    validate + normalize its records with `ingest_batch`: one file is one split, its record numbers
    are its lines. `keep_payloads`: several files, whose revisits may stand for each other's records
    (`_record_rows`)."""
    for src, file in zip(batch.column(SRC).to_pylist(), batch.column(FILE).to_pylist(), strict=True):
        base = {"src": src, "file": file, "block_start": 0}
        c = [0, 0, 0]  # records, good, bad
        for chunk in archive_batches(Path(display_path(file))):
            raws = [RawLine(raw.line - 1, raw.payload) for raw in chunk]
            c[0] = raws[-1].line + 1
            if rows := _record_rows(base, raws, config, c, keep_html, keep_payloads):
                yield pa.RecordBatch.from_pylist(rows, schema=RECORD)
        yield pa.RecordBatch.from_pylist(
            [{**base, "kind": "chunk", "n_lines": c[0], "n_good": c[1], "n_bad": c[2]}],
            schema=RECORD,
        )


def ingest_fn(config: Config, fmt: str, keep_html: bool) -> ArrowFn:
    """Validate + normalize each record with the local engine's `ingest_batch`.

    Rows of one input split arrive in order and contiguous, so each split counts its own lines and
    good records; a summary row per split (kind = chunk) carries the totals to the driver.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        counts: dict[tuple[int, str, int], list[int]] = {}  # split -> [lines, good, bad]
        for batch in batches:
            src = batch.column(SRC).to_pylist()
            files = batch.column(FILE).to_pylist()
            starts = batch.column(START).to_pylist()
            if fmt == "jsonl":
                payloads: list[Any] = batch.column("value").to_pylist()
            else:
                keep = [n for n in batch.schema.names if n not in (SRC, FILE, START)]
                payloads = batch.select(keep).to_pylist()
            rows: list[dict[str, Any]] = []
            i, n = 0, batch.num_rows
            while i < n:
                key = (src[i], files[i], starts[i])
                j = i
                while j < n and (src[j], files[j], starts[j]) == key:
                    j += 1
                c = counts.setdefault(key, [0, 0, 0])
                raws = []
                for k in range(i, j):
                    idx = c[0]
                    c[0] += 1
                    payload = payloads[k]
                    if fmt == "jsonl" and (payload is None or not payload.strip()):
                        continue  # blank lines count as lines, not as records (as locally)
                    raws.append(RawLine(idx, payload))
                base = {"src": key[0], "file": key[1], "block_start": key[2]}
                rows += _record_rows(base, raws, config, c, keep_html)
                i = j
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=RECORD)
        summary = [
            {
                "kind": "chunk",
                "src": k[0],
                "file": k[1],
                "block_start": k[2],
                "n_lines": c[0],
                "n_good": c[1],
                "n_bad": c[2],
            }
            for k, c in counts.items()
        ]
        if summary:
            yield pa.RecordBatch.from_pylist(summary, schema=RECORD)

    return run


def urls_under_rules(batch: pa.RecordBatch, rules: Sequence[UrlRule]) -> Iterator[pa.RecordBatch]:
    """The canonical URL and rel=canonical of each page (columns page_id, url, rel_canonical) under the
    config's URL rules, with the local engine's `analysis.ruled_urls`."""
    canonical, rel = ruled_urls(
        batch.column("url").to_pylist(), batch.column("rel_canonical").to_pylist(), rules
    )
    yield pa.RecordBatch.from_arrays(
        [batch.column("page_id"), pa.array(canonical, pa.string()), pa.array(rel, pa.string())], schema=URLS
    )


# --- fingerprints and candidate pairs -----------------------------------------------------------
def unit_fingerprints(batch: pa.RecordBatch, config: Config) -> Iterator[pa.RecordBatch]:
    """Fingerprints of unit texts with the local engine's `fingerprint_batch`, once per exact key of the
    batch (the first row of each)."""
    first: dict[str, int] = {}
    for i, key in enumerate(batch.column("exact_key").to_pylist()):
        first.setdefault(key, i)
    if len(first) < batch.num_rows:
        batch = batch.take(pa.array(list(first.values())))
    sizes, fps = fingerprint_batch((batch.column("text").to_pylist(), config))
    cols = [batch.column("unit_id").cast(pa.int32()), batch.column("exact_key"), pa.array(sizes, pa.int32())]
    if config.method == "simhash":
        cols.append(pa.array(np.asarray(fps, dtype=np.uint64).view(np.int64)))
        schema = UNIT_SIMHASH
    else:
        cols.append(pa.array([row.tobytes() for row in fps], pa.binary()))
        schema = UNIT_MINHASH
    yield pa.RecordBatch.from_arrays(cols, schema=schema)


def _bucket_pairs(members: pa.ListArray) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """Flattened bucket members and all (i, j) positions within buckets, with the local engine's
    `pairs_in_runs` (the cap was applied before)."""
    sizes = members.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    flat = members.flatten()
    everything = np.iinfo(np.int64).max
    i, j = pairs_in_runs(np.arange(len(flat), dtype=np.int64), starts, everything, CandidateStats())
    return flat, i, j


def simhash_bucket_pairs(batch: pa.RecordBatch, max_bits: int) -> Iterator[pa.RecordBatch]:
    """Pairs within SimHash buckets that are within `max_bits` (exact Hamming check)."""
    flat, i, j = _bucket_pairs(batch.column("members"))
    units = flat.field("unit_id").to_numpy(zero_copy_only=False).astype(np.int64)
    fps = flat.field("simhash").to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64)
    for s in range(0, len(i), PAIR_BATCH):
        ii, jj = i[s : s + PAIR_BATCH], j[s : s + PAIR_BATCH]
        bits = hamming_many(fps[ii], fps[jj])
        close = bits <= max_bits
        a, b = units[ii][close], units[jj][close]
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(np.minimum(a, b).astype(np.int32)),
                pa.array(np.maximum(a, b).astype(np.int32)),
                pa.array(bits[close].astype(np.int16)),
            ],
            schema=PAIR_BITS,
        )


def _pair_ids(a: np.ndarray, b: np.ndarray) -> Iterator[pa.RecordBatch]:
    """Candidate pairs (min, max) as `PAIR_IDS` batches; a pair shares many bands: repeats within the
    batch are dropped before the shuffle does."""
    code = np.unique(np.minimum(a, b) << 32 | np.maximum(a, b))
    a, b = code >> 32, code & 0xFFFFFFFF
    for s in range(0, len(a), PAIR_BATCH):
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(a[s : s + PAIR_BATCH].astype(np.int32)),
                pa.array(b[s : s + PAIR_BATCH].astype(np.int32)),
            ],
            schema=PAIR_IDS,
        )


def lsh_bucket_pairs(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """All pairs within LSH buckets (candidates; `pairs.minhash_pairs` verifies and de-duplicates them)."""
    flat, i, j = _bucket_pairs(batch.column("members"))
    units = flat.to_numpy(zero_copy_only=False).astype(np.int64)
    yield from _pair_ids(units[i], units[j])


def _floor_and_guard(config: Config) -> dict[str, Any]:
    """The floor and size-ratio guard of the MinHash estimates, as the keywords of `candidates.score_estimates`
    and the functions that verify with it."""
    return {
        "floor": config.minhash_floor,
        "min_size_ratio": config.min_size_ratio,
        "min_shingles": config.min_contained_shingles,
    }


def lsh_band_estimates(
    batch: pa.RecordBatch, config: Config, shared: Any, rows: int, bucket_cap: int
) -> Iterator[pa.RecordBatch]:
    """The pairs of the LSH bands in column `band` that pass the estimates, as `candidates.minhash_pairs`
    finds and verifies each band's (`candidates.verified_band_pairs`), over the broadcast (signature
    matrix, sizes) indexed by unit id: the band keys never leave the task."""
    matrix, sizes = shared.value
    n = len(matrix)
    for band in batch.column("band").to_pylist():
        _, kept = verified_band_pairs(
            matrix,
            sizes,
            lsh_band_table(matrix, band, rows),
            similarity=config.similarity,
            **_floor_and_guard(config),
            bucket_cap=bucket_cap,
        )
        for codes, jac, cont in kept:
            if len(codes):
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array((codes // n).astype(np.int32)),
                        pa.array((codes % n).astype(np.int32)),
                        pa.array(jac),
                        pa.array(cont),
                    ],
                    schema=PAIR_EST,
                )


def size_class_entries(
    batch: pa.RecordBatch, tables: Sequence[SizeClassTables], num_perm: int
) -> Iterator[pa.RecordBatch]:
    """The entries of `candidates.containment_lsh_pairs`'s tables for units (columns unit_id, minhash,
    n_shingles): in each table (the bands of `tables`, numbered in order) a unit's indexed entry and one
    query entry per class distance, keyed with the local engine's `size_classes` and `size_class_keys`."""
    sigs = signatures(batch.column("minhash").to_pylist(), num_perm)
    classes = size_classes(batch.column("n_shingles").to_numpy(zero_copy_only=False))
    units = batch.column("unit_id").to_numpy(zero_copy_only=False).astype(np.int32)
    parts: list[tuple[np.ndarray, ...]] = []
    table = 0
    for t in tables:
        ids = np.tile(units, len(t.distances) + 1)
        for band in range(t.bands):
            keys = size_class_keys(sigs[:, band * t.rows : (band + 1) * t.rows], classes, t.distances)
            parts.append((np.full(len(keys), table, np.int32), keys, ids))
            table += 1
    if not parts:
        return
    table_col, keys, ids = (np.concatenate(p) for p in zip(*parts, strict=True))
    yield pa.RecordBatch.from_arrays(
        [
            pa.array(table_col),
            pa.array((keys >> np.uint64(1)).astype(np.int64)),
            pa.array((keys & np.uint64(1)).astype(np.int8)),
            pa.array(ids),
        ],
        schema=SIZE_CLASS_ENTRY,
    )


def size_class_band_estimates(
    tasks: Iterable[int], config: Config, shared: Any, tables: Sequence[SizeClassTables], bucket_cap: int
) -> Iterator[tuple[CandidateStats, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """For each band of `tables` numbered in `tasks` (their bands in order, as `size_class_entries` numbers
    them): its counts and the pairs (a, b, jaccard, containment) that pass the estimates, as
    `candidates.containment_lsh_pairs` finds and verifies each band's, over the broadcast (signature
    matrix, sizes) indexed by unit id: the keys never leave the task. A Python RDD function: the counts
    travel with the pairs to the driver."""
    matrix, sizes = shared.value
    n = len(matrix)
    classes = size_classes(sizes)
    bands = [(t, band) for t in tables for band in range(t.bands)]
    for task in tasks:
        t, band = bands[task]
        keys = size_class_keys(matrix[:, band * t.rows : (band + 1) * t.rows], classes, t.distances)
        ids = np.tile(np.arange(n, dtype=np.int64), len(t.distances) + 1)
        stats = CandidateStats(tables=1)
        kept = verified_size_class_pairs(
            matrix,
            sizes,
            keys,
            ids,
            stats,
            **_floor_and_guard(config),
            bucket_cap=bucket_cap,
        )
        if not kept:  # no candidates in this band
            kept = [(np.empty(0, np.int64), np.empty(0), np.empty(0))]
        codes, jac, cont = (np.concatenate(parts) for parts in zip(*kept, strict=True))
        yield stats, (codes // n).astype(np.int32), (codes % n).astype(np.int32), jac, cont


@dataclass(frozen=True, slots=True)
class BandGroups:
    """How `pairs.banded_by_shuffle` numbers the key groups of both LSH passes: the one index's `bands` of
    `rows` rows, then the bands of `size_class_tables` in order (each table's bands from column 0, as
    `size_class_entries` reads them); each band's keys (`candidates.band_keys` of its rows) cut into
    `per_band` groups by value, so that equal band rows, and so a bucket of either pass, fall in one
    group: group = band * per_band + key % per_band."""

    bands: int
    rows: int
    size_class_tables: tuple[SizeClassTables, ...]
    per_band: int

    @property
    def size_class_bands(self) -> list[tuple[SizeClassTables, int]]:
        """(tables, band within them) of each size-class band, in order."""
        return [(t, band) for t in self.size_class_tables for band in range(t.bands)]

    @property
    def n_size_class_bands(self) -> int:
        return sum(t.bands for t in self.size_class_tables)


def band_group_entries(batch: pa.RecordBatch, layout: BandGroups, num_perm: int) -> Iterator[pa.RecordBatch]:
    """For units (columns unit_id, n_shingles, minhash): each unit's entry (`BAND_ENTRY`) in the key group
    of every band of both passes that its band rows fall in (`BandGroups`), a batch a band."""
    sigs = signature_matrix(num_perm, batch.column("minhash"))
    carried = [batch.column("unit_id").cast(pa.int32()), batch.column("n_shingles").cast(pa.int32())]
    carried.append(batch.column("minhash"))
    per_band = np.uint64(layout.per_band)
    first = 0
    passes = [(layout.bands, layout.rows), *((t.bands, t.rows) for t in layout.size_class_tables)]
    for bands, rows in passes:
        for band, keys in band_key_columns(sigs, bands, rows):
            group = (first + band) * layout.per_band + (keys % per_band).astype(np.int64)
            yield pa.RecordBatch.from_arrays([pa.array(group.astype(np.int32)), *carried], schema=BAND_ENTRY)
        first += bands


def band_groups_fn(config: Config, layout: BandGroups, bucket_cap: int) -> ArrowFn:
    """`band_group_pairs` for each key group of a partition of `BAND_ENTRY` rows sorted by group: a group's
    rows are held until the next group's begin."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        held: list[pa.RecordBatch] = []
        for batch in batches:
            if not batch.num_rows:
                continue
            group = batch.column("group").to_numpy(zero_copy_only=False)
            cuts = [0, *(np.flatnonzero(group[1:] != group[:-1]) + 1).tolist(), len(group)]
            for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
                if held and held[0].column("group")[0].as_py() != group[lo]:
                    yield from band_group_pairs(held, config, layout, bucket_cap)
                    held = []
                held.append(batch.slice(lo, hi - lo))
        if held:
            yield from band_group_pairs(held, config, layout, bucket_cap)

    return run


def band_group_pairs(
    entries: Sequence[pa.RecordBatch], config: Config, layout: BandGroups, bucket_cap: int
) -> Iterator[pa.RecordBatch]:
    """The pairs of one key group's buckets (`entries`: its `BAND_ENTRY` rows) that pass the estimates,
    found and verified as the local engine does each band's (`candidates.verified_band_pairs`, or for a
    size-class band `candidates.verified_size_class_pairs`) over the group's signatures, then the group's
    bucket counts (`GROUP_PAIRS`). A group holds whole buckets, so the counts of a band's groups add up to
    the band's."""
    rows = pa.Table.from_batches(entries)
    group = int(entries[0].column("group")[0].as_py())
    ids = rows.column("unit_id").to_numpy().astype(np.int64)
    order = np.argsort(ids, kind="stable")  # local a < b is unit a < unit b
    ids = ids[order]
    sigs = signature_matrix(config.num_perm, rows.column("minhash"))[order]
    sizes = rows.column("n_shingles").to_numpy().astype(np.float64)[order]
    m, band = len(ids), group // layout.per_band
    stats = CandidateStats()
    if band < layout.bands:
        stats, kept = verified_band_pairs(
            sigs,
            sizes,
            lsh_band_table(sigs, band, layout.rows),
            similarity=config.similarity,
            **_floor_and_guard(config),
            bucket_cap=bucket_cap,
        )
    else:
        t, b = layout.size_class_bands[band - layout.bands]
        keys = size_class_keys(sigs[:, b * t.rows : (b + 1) * t.rows], size_classes(sizes), t.distances)
        local = np.tile(np.arange(m, dtype=np.int64), len(t.distances) + 1)
        kept = verified_size_class_pairs(
            sigs, sizes, keys, local, stats, **_floor_and_guard(config), bucket_cap=bucket_cap
        )
    counted = list(GROUP_PAIRS)[len(PAIR_EST) :]
    for codes, jac, cont in kept:
        if len(codes):
            a, b = ids[codes // m].astype(np.int32), ids[codes % m].astype(np.int32)
            yield pa.RecordBatch.from_arrays(
                [*map(pa.array, (a, b, jac, cont)), *(pa.nulls(len(codes), f.type) for f in counted)],
                schema=GROUP_PAIRS,
            )
    counts = [int(band >= layout.bands), *(getattr(stats, name) for name in GROUP_COUNTS)]
    yield pa.RecordBatch.from_arrays(
        [
            *(pa.nulls(1, f.type) for f in PAIR_EST),
            *(pa.array([v], f.type) for v, f in zip(counts, counted, strict=True)),
        ],
        schema=GROUP_PAIRS,
    )


def size_class_bucket_pairs(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """The (query, indexed) pairs within size-class buckets (column members: structs indexed, unit_id),
    with the local engine's `cross_pairs` (the cap was applied before); candidates, verified after
    de-duplication."""
    members = batch.column("members")
    sizes = members.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
    flat = members.flatten()
    indexed = flat.field("indexed").to_numpy(zero_copy_only=False).astype(np.uint64)
    units = flat.field("unit_id").to_numpy(zero_copy_only=False).astype(np.int64)
    keys = np.repeat(np.arange(len(sizes), dtype=np.uint64), sizes) << np.uint64(1) | indexed
    i, j = cross_pairs(keys, units, np.iinfo(np.int64).max, CandidateStats())
    yield from _pair_ids(i, j)


def _scored(batch: pa.RecordBatch, keep: np.ndarray, jac: np.ndarray, cont: np.ndarray) -> pa.RecordBatch:
    """The pairs (a, b) of `batch` where `keep`, with their scores (`PAIR_EST`)."""
    mask = pa.array(keep)
    return pa.RecordBatch.from_arrays(
        [
            batch.column("a").filter(mask),
            batch.column("b").filter(mask),
            pa.array(jac[keep]),
            pa.array(cont[keep]),
        ],
        schema=PAIR_EST,
    )


def minhash_estimates(batch: pa.RecordBatch, config: Config, shared: Any = None) -> Iterator[pa.RecordBatch]:
    """The estimates and the size-ratio guard of `candidates.minhash_pairs`, per candidate pair.

    Signatures and sizes come with each pair (columns sig_a, sig_b, n_a, n_b) or, when `shared` is a
    broadcast (signature matrix, sizes) indexed by unit id, from there.
    """
    if shared is not None:
        matrix, sizes = shared.value
        ia = batch.column("a").to_numpy(zero_copy_only=False).astype(np.int64)
        ib = batch.column("b").to_numpy(zero_copy_only=False).astype(np.int64)
        sig_a, sig_b, sa, sb = matrix[ia], matrix[ib], sizes[ia], sizes[ib]
    else:
        sig_a = signatures(batch.column("sig_a").to_pylist(), config.num_perm)
        sig_b = signatures(batch.column("sig_b").to_pylist(), config.num_perm)
        sa = batch.column("n_a").to_numpy(zero_copy_only=False).astype(np.int32)
        sb = batch.column("n_b").to_numpy(zero_copy_only=False).astype(np.int32)
    keep, jac, cont = score_estimates(
        sig_a,
        sig_b,
        sa,
        sb,
        similarity=config.similarity,
        **_floor_and_guard(config),
    )
    yield _scored(batch, keep, jac, cont)


def shingle_sets(batch: pa.RecordBatch, k: int) -> Iterator[pa.RecordBatch]:
    """Exact shingle sets (sorted uint32 as bytes) of unit texts, with the local engine's `set_batch`."""
    _, lens, values = set_batch(([], batch.column("text").to_pylist(), k))
    ends = np.cumsum(lens)
    blobs = [values[e - n : e].tobytes() for n, e in zip(lens, ends, strict=True)]
    yield pa.RecordBatch.from_arrays(
        [batch.column("unit_id").cast(pa.int32()), pa.array(blobs, pa.binary())], schema=UNIT_SET
    )


def exact_scores_of_sets(batch: pa.RecordBatch, config: Config) -> Iterator[pa.RecordBatch]:
    """Exact Jaccard and containment per pair (columns set_a, set_b), as `engine.verify_exact` computes them."""
    m = batch.num_rows
    blobs = batch.column("set_a").to_pylist() + batch.column("set_b").to_pylist()
    lens = np.fromiter((len(x) // 4 for x in blobs), dtype=np.int64, count=2 * m)
    values = np.frombuffer(b"".join(blobs), dtype=np.uint32)
    inter = intersection_sizes(values, lens, np.arange(m), np.arange(m, 2 * m))
    jac, cont = exact_scores(inter, lens[:m], lens[m:], config.min_size_ratio, config.min_contained_shingles)
    yield _scored(batch, above_floor(jac, cont, config.similarity, config.minhash_floor), jac, cont)


# --- clusters -----------------------------------------------------------------------------------
def representatives_fn(rule: Sequence[str]) -> ArrowFn:
    """`clusters.pick_representatives` under `rule` over one partition (whole clusters: partitioned by
    cluster id)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        pages = pa.Table.from_batches(parts).to_pandas()
        reps = pick_representatives(pages, cluster_col="cluster_id", rule=rule).reset_index()
        yield pa.RecordBatch.from_pandas(reps[REPS.names], schema=REPS, preserve_index=False)

    return run
