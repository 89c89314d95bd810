"""The same audit on Apache Spark, for crawls that do not fit one machine: `neardup spark`.

Every per-record step calls the local engine's own functions, batched through Arrow (`mapInArrow`,
the Arrow sibling of `mapInPandas`: no pandas round trip for raw bytes and timestamps):
`batches.ingest_batch` (= `ingest.validate` + `batches.text_row`) and `batches.fingerprint_batch`
(= `shingle_hashes` + `simhash_many` / `minhash_many`). Only the global steps are Spark-native:

- page ids: the local engine numbers good records 1, 2, ... in input order. Here each input split
  counts its own lines and good records, the driver turns those counts into offsets, so page ids and
  line numbers equal the local engine's without a global sort.
- units (one per distinct `exact_key` of content pages), numbered in `exact_key` order as locally.
- candidates: SimHash pigeonhole tables (`candidates.block_masks`, `candidates.choose_r`) and MinHash
  LSH bands (`candidates.lsh_params(lsh_threshold(...))`) become a groupBy on (table, key); buckets
  above `candidates.BUCKET_CAP` members are counted, not expanded; pairs are enumerated inside a
  bucket with `candidates.pairs_in_runs` and verified with the local estimates. The pair set equals
  the local engine's (tests/test_spark.py checks it).
- clusters: connected components by alternating large-star / small-star on DataFrames, checkpointed
  every few rounds (the driver finishes once the edges fit it); cluster ids and representatives (`clusters.pick_representatives`)
  follow the local rule.

Output under DIR (Parquet): `pages`, `units`, `pairs`, `clusters`, `errors`, plus `dupcheck.yaml` and
`_MANIFEST.json` (written last: a directory without it is not a finished run). `neardup open DIR`
makes a DuckDB file whose tables are views over these files, for the app and `neardup report`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .analysis import report_numbers
from .batches import fingerprint_batch, ingest_batch, reason_kind, set_batch, signatures
from .candidates import (
    BUCKET_CAP,
    CAPPED_NOTE,
    above_floor,
    block_masks,
    choose_r,
    exact_scores,
    intersection_sizes,
    lsh_params,
    lsh_threshold,
    pairs_in_runs,
    score_estimates,
)
from .clusters import pick_representatives
from .config import Config, dump_config
from .errors import ConfigError, NeardupError, NotACrawlDump
from .ingest import RawLine, detect_format
from .simhash import hamming_many
from .warc import WarcBatches

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MANIFEST = "_MANIFEST.json"
OUTPUTS = ("pages", "units", "pairs", "clusters", "errors")
FORMAT_VERSION = 1
# Connected components: a reliable checkpoint of the edge table every this many rounds.
CHECKPOINT_EVERY = 3
MAX_CC_ROUNDS = 60
# ... and finish on the driver once this few edges are left (int64 pairs: 16 MB per million).
CC_LOCAL_EDGES = 2_000_000
# Pages are large: Arrow batches of this many records keep the Python workers' memory flat.
ARROW_BATCH = 500
# MinHash verification broadcasts the signature matrix up to this size (else a shuffle join per pair).
BROADCAST_SIGNATURES_BYTES = 512 << 20
# Pairs emitted per Arrow batch when expanding buckets (a capped bucket alone makes 2M pairs).
PAIR_BATCH = 1 << 20

Log = Callable[[str], None]

# Bookkeeping columns that travel with each raw record (names no crawl field uses).
_SRC, _FILE, _START = "__nd_src", "__nd_file", "__nd_block"

_RECORD = pa.schema(
    [
        ("kind", pa.string()),  # page | error | chunk
        ("src", pa.int32()),
        ("file", pa.string()),
        ("block_start", pa.int64()),
        ("idx", pa.int64()),  # position of the record in its split (blank lines count)
        ("good_idx", pa.int64()),  # position among the split's good records
        ("n_lines", pa.int64()),
        ("n_good", pa.int64()),
        ("n_bad", pa.int64()),  # kind = chunk
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
    ]
)
_UNIT_SIMHASH = pa.schema(
    [("unit_id", pa.int32()), ("exact_key", pa.string()), ("n_shingles", pa.int32()), ("simhash", pa.int64())]
)
_UNIT_MINHASH = pa.schema(
    [
        ("unit_id", pa.int32()),
        ("exact_key", pa.string()),
        ("n_shingles", pa.int32()),
        ("minhash", pa.binary()),
    ]
)
_UNIT_SET = pa.schema([("unit_id", pa.int32()), ("shingles", pa.binary())])
_PAIR_BITS = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("hamming_bits", pa.int16())])
_PAIR_IDS = pa.schema([("a", pa.int32()), ("b", pa.int32())])
_PAIR_EST = pa.schema(
    [("a", pa.int32()), ("b", pa.int32()), ("jaccard", pa.float64()), ("containment", pa.float64())]
)
_REPS = pa.schema(
    [
        ("cluster_id", pa.int64()),
        ("representative_id", pa.int64()),
        ("representative_url", pa.string()),
        ("why", pa.string()),
    ]
)

_SPARK_TYPES = {
    pa.string(): "string",
    pa.int16(): "smallint",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.float64(): "double",
    pa.binary(): "binary",
    pa.timestamp("us"): "timestamp_ntz",
}


def _ddl(schema: pa.Schema) -> str:
    """Spark DDL for an Arrow schema (the types used here only)."""
    return ", ".join(f"`{f.name}` {_SPARK_TYPES[f.type]}" for f in schema)


def _signed64(x: int) -> int:
    """A 64-bit pattern as Spark's signed long (Spark has no unsigned type)."""
    return x - (1 << 64) if x >= 1 << 63 else x


# --- session and files ---------------------------------------------------------------------------
def spark_session(
    master: str = "local[*]", *, conf: dict[str, str] | None = None, app_name: str = "neardup"
) -> SparkSession:
    """A session for `run_spark`. Local masters run the workers on this interpreter; other masters
    get the `neardup` package shipped as a zip (its dependencies must be on the executors)."""
    # Batches cross to Python as Arrow (mapInArrow), never through pyspark's pandas conversion.
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise NeardupError(
            "pyspark is not installed: pip install 'neardup[spark]' (needs Java 17+)"
        ) from None
    local = master.startswith("local")
    defaults: dict[str, str] = {}
    if local:
        # The workers must import the same numpy / resiliparse / neardup as this process.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # Spark's 200 shuffle partitions turn each of the ~40 small stages into 200 tasks on a few cores.
        inside = master[len("local[") : -1] if master.startswith("local[") else "1"
        cores = (os.cpu_count() or 2) if inside in ("*", "") else int(inside.split(",")[0])
        defaults["spark.sql.shuffle.partitions"] = str(4 * cores)
    settings = {
        **defaults,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH),
        # Normalizing a page costs milliseconds of CPU: smaller splits than the 128 MB default keep the
        # cores evenly busy (a .gz file is one split whatever this says).
        "spark.sql.files.maxPartitionBytes": "32m",
        **(conf or {}),
    }
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # py4j / JVM launch errors carry no common type
        raise NeardupError(
            f"cannot start Spark ({master}): {str(exc).splitlines()[0]} (is Java 17+ installed and on PATH?)"
        ) from None
    spark.sparkContext.setLogLevel(settings.get("neardup.logLevel", "WARN"))
    if not local:
        pkg = Path(__file__).resolve().parent
        tmp = tempfile.mkdtemp(prefix="neardup-pyfiles-")
        spark.sparkContext.addPyFile(shutil.make_archive(f"{tmp}/neardup", "zip", pkg.parent, pkg.name))
    return spark


def _hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a driver's context has its JVM
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), p


def _exists(spark: SparkSession, path: str) -> bool:
    fs, p = _hadoop_path(spark, path)
    return bool(fs.exists(p))


def _delete(spark: SparkSession, path: str) -> None:
    fs, p = _hadoop_path(spark, path)
    if fs.exists(p):
        fs.delete(p, True)


def _write_text(spark: SparkSession, path: str, text: str) -> None:
    fs, p = _hadoop_path(spark, path)
    out = fs.create(p, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()


def _display_path(uri: str) -> str:
    """'file:///a/b' -> '/a/b' (what the local engine would print); other URIs unchanged."""
    return uri[len("file:") :].replace("///", "/", 1) if uri.startswith("file:") else uri


def _input_format(path: str, forced: str) -> str:
    if forced != "auto":
        return forced
    name = path.rstrip("/").lower()
    if name.endswith((".csv", ".csv.gz")):
        raise NotACrawlDump(
            f"{path}: CSV is not read by `neardup spark`: convert it to JSONL or Parquet, "
            "or load it with `neardup ingest`"
        )
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(WARC_SUFFIXES):
        return "warc"
    local = Path(_display_path(path))
    if local.is_dir() and any(local.glob("*.parquet")):
        return "parquet"
    if local.is_dir() and _warc_files(str(local)):
        return "warc"
    if local.is_file():  # by its magic bytes, as locally
        try:
            if detect_format(local) == "warc":
                return "warc"
        except NotACrawlDump:
            pass  # read as JSON lines: every line is a rejected record, as before
    return "jsonl"


WARC_SUFFIXES = (".warc", ".warc.gz", ".wet", ".wet.gz", ".arc.gz")


def _warc_files(path: str) -> list[str]:
    """A WARC input: the file, or the WARC files of a directory (sorted). WARC files are read whole by
    one task each (the reader needs the file's start), so they must be reachable from the executors at
    the same path (a local or shared file system)."""
    local = Path(_display_path(path))
    if local.is_dir():
        return sorted(str(p) for p in local.iterdir() if p.name.lower().endswith(WARC_SUFFIXES))
    return [str(local)]


# --- per-record work, in the Python workers ------------------------------------------------------
def _record_rows(
    base: dict[str, Any], raws: list[RawLine], config: Config, counts: list[int], keep_html: bool
) -> list[dict[str, Any]]:
    """`_RECORD` rows (pages, errors) of one split's records; `counts` [lines, good, bad] of the split
    so far: its good and bad counts move on."""
    good, bad = ingest_batch((raws, config))
    rows = []
    for rec in good:
        row = {**base, **rec, "kind": "page", "idx": rec["line"], "good_idx": counts[1]}
        if not keep_html:
            row["html"] = None
        rows.append(row)
        counts[1] += 1
    for line, reason in bad:
        rows.append({**base, "kind": "error", "idx": line, "reason": reason})
        counts[2] += 1
    return rows


def _warc_ingest_fn(
    config: Config, keep_html: bool
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Read each WARC file named in the rows with the local engine's reader (`warc.WarcBatches`) and
    validate + normalize its records with `ingest_batch`: one file is one split, its record numbers
    are its lines."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for src, file in zip(
                batch.column(_SRC).to_pylist(), batch.column(_FILE).to_pylist(), strict=True
            ):
                base = {"src": src, "file": file, "block_start": 0}
                c = [0, 0, 0]  # records, good, bad
                for chunk in WarcBatches(Path(_display_path(file)), batch_records=256):
                    raws = [RawLine(raw.line - 1, raw.payload) for raw in chunk]
                    c[0] = raws[-1].line + 1
                    if rows := _record_rows(base, raws, config, c, keep_html):
                        yield pa.RecordBatch.from_pylist(rows, schema=_RECORD)
                yield pa.RecordBatch.from_pylist(
                    [{**base, "kind": "chunk", "n_lines": c[0], "n_good": c[1], "n_bad": c[2]}],
                    schema=_RECORD,
                )

    return run


def _ingest_fn(
    config: Config, fmt: str, keep_html: bool
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Validate + normalize each record with the local engine's `ingest_batch`.

    Rows of one input split arrive in order and contiguous, so each split counts its own lines and
    good records; a summary row per split (kind = chunk) carries the totals to the driver.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        counts: dict[tuple[int, str, int], list[int]] = {}  # split -> [lines, good, bad]
        for batch in batches:
            src = batch.column(_SRC).to_pylist()
            files = batch.column(_FILE).to_pylist()
            starts = batch.column(_START).to_pylist()
            if fmt == "jsonl":
                payloads: list[Any] = batch.column("value").to_pylist()
            else:
                keep = [n for n in batch.schema.names if n not in (_SRC, _FILE, _START)]
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
                yield pa.RecordBatch.from_pylist(rows, schema=_RECORD)
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
            yield pa.RecordBatch.from_pylist(summary, schema=_RECORD)

    return run


def _fingerprint_fn(config: Config) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Fingerprints of unit texts with the local engine's `fingerprint_batch`."""
    schema = _UNIT_SIMHASH if config.method == "simhash" else _UNIT_MINHASH

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            sizes, fps = fingerprint_batch((batch.column("text").to_pylist(), config))
            cols = [
                batch.column("unit_id").cast(pa.int32()),
                batch.column("exact_key"),
                pa.array(sizes, pa.int32()),
            ]
            if config.method == "simhash":
                cols.append(pa.array(np.asarray(fps, dtype=np.uint64).view(np.int64)))
            else:
                cols.append(pa.array([row.tobytes() for row in fps], pa.binary()))
            yield pa.RecordBatch.from_arrays(cols, schema=schema)

    return run


def _bucket_runs(members: pa.ListArray) -> tuple[pa.Array, np.ndarray]:
    """Flattened bucket members and the start of each bucket in them."""
    sizes = members.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    return members.flatten(), starts


def _expand(starts: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) positions within buckets, with the local engine's `pairs_in_runs` (cap applied before)."""
    from .candidates import CandidateStats

    return pairs_in_runs(np.arange(total, dtype=np.int64), starts, np.iinfo(np.int64).max, CandidateStats())


def _simhash_bucket_fn(max_bits: int) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Pairs within SimHash buckets that are within `max_bits` (exact Hamming check)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            flat, starts = _bucket_runs(batch.column("members"))
            units = flat.field("unit_id").to_numpy(zero_copy_only=False).astype(np.int64)
            fps = flat.field("simhash").to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64)
            i, j = _expand(starts, len(units))
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
                    schema=_PAIR_BITS,
                )

    return run


def _lsh_bucket_fn() -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """All pairs within LSH buckets (candidates; verified after de-duplication)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            flat, starts = _bucket_runs(batch.column("members"))
            units = flat.to_numpy(zero_copy_only=False).astype(np.int64)
            i, j = _expand(starts, len(units))
            # A pair shares many bands: drop repeats within the batch before the shuffle does.
            a, b = units[i], units[j]
            code = np.unique(np.minimum(a, b) << 32 | np.maximum(a, b))
            a, b = code >> 32, code & 0xFFFFFFFF
            for s in range(0, len(a), PAIR_BATCH):
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array(a[s : s + PAIR_BATCH].astype(np.int32)),
                        pa.array(b[s : s + PAIR_BATCH].astype(np.int32)),
                    ],
                    schema=_PAIR_IDS,
                )

    return run


def _verify_minhash_fn(
    config: Config, shared: Any = None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The estimates and the size-ratio guard of `candidates.minhash_pairs`, per candidate pair.

    Signatures and sizes come with each pair (columns sig_a, sig_b, n_a, n_b) or, when `shared` is a
    broadcast (signature matrix, sizes) indexed by unit id, from there.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
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
                floor=config.minhash_floor,
                min_size_ratio=config.min_size_ratio,
                min_shingles=config.min_contained_shingles,
            )
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column("a").filter(pa.array(keep)),
                    batch.column("b").filter(pa.array(keep)),
                    pa.array(jac[keep]),
                    pa.array(cont[keep]),
                ],
                schema=_PAIR_EST,
            )

    return run


def _shingle_set_fn(k: int) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Exact shingle sets (sorted uint32 as bytes) of unit texts, with the local engine's `set_batch`."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            _, lens, values = set_batch(([], batch.column("text").to_pylist(), k))
            ends = np.cumsum(lens)
            blobs = [values[e - n : e].tobytes() for n, e in zip(lens, ends, strict=True)]
            yield pa.RecordBatch.from_arrays(
                [batch.column("unit_id").cast(pa.int32()), pa.array(blobs, pa.binary())], schema=_UNIT_SET
            )

    return run


def _exact_fn(config: Config) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Exact Jaccard and containment per pair (columns set_a, set_b), as `engine.verify_exact` computes them."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            m = batch.num_rows
            if m == 0:
                continue
            blobs = batch.column("set_a").to_pylist() + batch.column("set_b").to_pylist()
            lens = np.fromiter((len(x) // 4 for x in blobs), dtype=np.int64, count=2 * m)
            values = np.frombuffer(b"".join(blobs), dtype=np.uint32)
            inter = intersection_sizes(values, lens, np.arange(m), np.arange(m, 2 * m))
            jac, cont = exact_scores(
                inter, lens[:m], lens[m:], config.min_size_ratio, config.min_contained_shingles
            )
            keep = above_floor(jac, cont, config.similarity, config.minhash_floor)
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column("a").filter(pa.array(keep)),
                    batch.column("b").filter(pa.array(keep)),
                    pa.array(jac[keep]),
                    pa.array(cont[keep]),
                ],
                schema=_PAIR_EST,
            )

    return run


def _representatives_fn(
    rule: Sequence[str],
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """`clusters.pick_representatives` under `rule` over one partition (whole clusters: partitioned by cluster id)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        pages = pa.Table.from_batches(parts).to_pandas()
        reps = pick_representatives(pages, cluster_col="cluster_id", rule=rule).reset_index()
        yield pa.RecordBatch.from_pandas(reps[_REPS.names], schema=_REPS, preserve_index=False)

    return run


# --- global steps, on DataFrames -----------------------------------------------------------------
def _dense_index(df: DataFrame, order: Sequence[Any], name: str, *, start: int = 0) -> DataFrame:
    """`df` with `name` = start, start+1, ... in `order`, without collecting to one partition.

    A range-partitioned sort numbers rows inside each partition; the driver turns per-partition counts
    into offsets. The sorted frame is persisted so both passes see the same partitions.
    """
    from pyspark.sql import functions as F

    s = (
        df.orderBy(*order)
        .withColumn("_p", F.spark_partition_id())
        .withColumn("_m", F.monotonically_increasing_id())
    )
    s = s.persist()
    counts = sorted(
        (r["_p"], r["n"], r["m0"])
        for r in s.groupBy("_p").agg(F.count("*").alias("n"), F.min("_m").alias("m0")).collect()
    )
    rows, offset = [], start
    for p, n, m0 in counts:
        rows.append((p, offset - m0))
        offset += n
    spark = df.sparkSession
    shift = spark.createDataFrame(rows or [(0, 0)], "_p int, _shift bigint")
    return (
        s.join(F.broadcast(shift), "_p")
        .withColumn(name, F.col("_m") + F.col("_shift"))
        .drop("_p", "_m", "_shift")
    )


def _frame_from_arrow(spark: SparkSession, table: pa.Table) -> DataFrame:
    try:
        return spark.createDataFrame(table)  # Spark 4: Arrow in, no pandas
    except TypeError:
        return spark.createDataFrame(table.to_pandas())


def _large_star(edges: DataFrame) -> DataFrame:
    """Every node links its larger neighbours to the smallest of its neighbourhood (itself included)."""
    from pyspark.sql import functions as F

    both = edges.select("u", "v").union(edges.select(F.col("v").alias("u"), F.col("u").alias("v")))
    low = both.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
    return (
        both.join(low, "u")
        .filter(F.col("v") > F.col("u"))
        .select(F.col("v").alias("u"), F.col("m").alias("v"))
        .distinct()
    )


def _small_star(edges: DataFrame) -> DataFrame:
    """Every node links itself and its smaller neighbours to the smallest of those."""
    from pyspark.sql import functions as F

    down = edges.select(F.greatest("u", "v").alias("u"), F.least("u", "v").alias("v"))
    low = down.groupBy("u").agg(F.min("v").alias("m"))
    spokes = (
        down.join(low, "u")
        .filter(F.col("v") != F.col("m"))
        .select(F.col("v").alias("u"), F.col("m").alias("v"))
    )
    return spokes.union(low.select("u", F.col("m").alias("v"))).distinct()


def connected_components(
    edges: DataFrame,
    *,
    checkpoint_every: int = CHECKPOINT_EVERY,
    max_rounds: int = MAX_CC_ROUNDS,
    local_edges: int = CC_LOCAL_EDGES,
) -> tuple[DataFrame, int]:
    """(node, label) for every node of the undirected edges (a, b): label = smallest node id of its component.

    Alternating large-star / small-star (Kiveris et al., "Connected Components in MapReduce and Beyond",
    2014): each round rewires edges towards smaller ids without changing the components, and the graph
    ends as one star per component around its smallest node, in O(log^2 n) rounds. Each round's edge
    table is materialized (`localCheckpoint`, which cuts the plan), and every `checkpoint_every` rounds
    written to the context's checkpoint directory instead (it survives a lost executor). Once at most `local_edges` edges are left, the driver finishes with
    `clusters.components` (scipy), the local engine's own function. Returns (labels, rounds).
    """
    from pyspark.sql import functions as F

    spark = edges.sparkSession
    reliable = spark.sparkContext.getCheckpointDir() is not None
    cur = (
        edges.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v"))
        .filter(F.col("u") != F.col("v"))
        .distinct()
        .persist()
    )
    n_cur = cur.count()
    rounds = 0
    while n_cur > local_edges:
        rounds += 1
        if rounds > max_rounds:
            raise NeardupError(f"connected components did not converge in {max_rounds} rounds")
        new = _small_star(_large_star(cur))
        # Each round reads its input four times: without cutting the plan every round it grows 4x a round.
        new = new.checkpoint() if reliable and rounds % checkpoint_every == 0 else new.localCheckpoint()
        n_new = new.count()
        same = n_new == n_cur and new.subtract(cur).limit(1).count() == 0
        cur.unpersist()
        cur, n_cur = new, n_new
        if same:
            break
    if n_cur <= local_edges:
        from .clusters import components

        pairs = cur.toArrow() if hasattr(cur, "toArrow") else pa.Table.from_pandas(cur.toPandas())
        u = pairs.column("u").to_numpy().astype(np.int64)
        v = pairs.column("v").to_numpy().astype(np.int64)
        nodes, inverse = np.unique(np.concatenate([u, v]), return_inverse=True)
        comp = components(len(nodes), inverse[: len(u)], inverse[len(u) :])
        smallest = np.full(comp.max() + 1 if len(comp) else 0, np.iinfo(np.int64).max)
        np.minimum.at(smallest, comp, nodes)
        rows = pa.table({"node": nodes, "label": smallest[comp]})
        labels = _frame_from_arrow(spark, rows)
    else:
        # A star per component: every edge is (member, smallest); the centre labels itself.
        labels = (
            cur.select(F.col("u").alias("node"), F.col("v").alias("label"))
            .union(cur.select(F.col("v").alias("node"), F.col("v").alias("label")))
            .distinct()
        )
    cur.unpersist()
    return labels, rounds


def _read_inputs(spark: SparkSession, inputs: Sequence[str], input_format: str) -> dict[str, DataFrame]:
    """Raw records per format, each with its input index, file and split start."""
    from pyspark.sql import functions as F

    frames: dict[str, list[DataFrame]] = {"jsonl": [], "parquet": [], "warc": []}
    for src, path in enumerate(inputs):
        fmt = _input_format(path, input_format)
        if fmt == "warc":
            files = _warc_files(path)
            missing = [f for f in files if not Path(f).is_file()]
            if not files or missing:
                raise NotACrawlDump(f"{path}: no WARC file there" + (f" ({missing[0]})" if missing else ""))
            # `file:` URIs, as input_file_name() gives for the other formats
            frames["warc"].append(
                spark.createDataFrame(
                    [(src, Path(f).resolve().as_uri(), 0) for f in files],
                    f"{_SRC} int, {_FILE} string, {_START} bigint",
                )
            )
            continue
        try:
            if fmt == "jsonl":
                # Raw bytes, as the local engine reads them: `validate` reports invalid UTF-8 itself.
                df = spark.read.text(path).select(F.col("value").cast("binary").alias("value"))
            else:
                df = spark.read.parquet(path)
        except Exception as exc:  # AnalysisException: path does not exist, unreadable Parquet
            raise NotACrawlDump(f"{path}: cannot read it as {fmt} ({str(exc).splitlines()[0]})") from None
        if fmt == "parquet" and "url" not in df.columns:
            raise NotACrawlDump(f"{path}: a Parquet file without a 'url' column")
        frames[fmt].append(
            df.withColumn(_SRC, F.lit(src))
            .withColumn(_FILE, F.input_file_name())
            .withColumn(_START, F.input_file_block_start())
        )
    out = {}
    for fmt, dfs in frames.items():
        if dfs:
            df = dfs[0]
            for other in dfs[1:]:
                df = df.unionByName(other, allowMissingColumns=True)
            out[fmt] = df
    return out


def run_spark(
    spark: SparkSession,
    inputs: Sequence[str],
    out_dir: str,
    config: Config,
    *,
    input_format: str = "auto",
    keep_html: bool = False,
    overwrite: bool = False,
    log: Log | None = None,
) -> dict[str, Any]:
    """Ingest, normalize, fingerprint, pair and cluster `inputs` under `config`; write Parquet under
    `out_dir` and return the manifest. Same page ids, fingerprints, pairs and clusters as the local
    engine on the same files (MinHash similarities are estimates there and here alike)."""
    from pyspark.sql import functions as F

    say = log or (lambda msg: None)
    if input_format not in ("auto", "jsonl", "parquet", "warc"):
        raise ConfigError(f"input format must be auto, jsonl, parquet or warc, not {input_format!r}")
    if not inputs:
        raise NotACrawlDump("no input given")
    out = out_dir.rstrip("/")
    if _exists(spark, out) and not overwrite:
        fs, p = _hadoop_path(spark, out)
        if len(fs.listStatus(p)):
            raise NeardupError(f"{out_dir} exists and is not empty: choose another --out or pass --overwrite")
    _delete(spark, f"{out}/{MANIFEST}")  # an overwritten run is unfinished until the new manifest lands
    work, ckpt = f"{out}/_work", f"{out}/_checkpoints"
    spark.sparkContext.setCheckpointDir(ckpt)
    timings: dict[str, float] = {}
    t_all = time.perf_counter()

    def stage(name: str) -> Callable[[], None]:
        say(f"{name} ...")
        t0 = time.perf_counter()

        def done() -> None:
            timings[name] = round(time.perf_counter() - t0, 2)
            say(f"{name}: {timings[name]:.1f} s")

        return done

    try:
        # 1. ingest + normalize: the expensive per-record step, materialized once.
        done = stage("ingest+normalize")
        parts = []
        for fmt, raw in _read_inputs(spark, list(inputs), input_format).items():
            if fmt == "warc":  # one task per file
                fn = _warc_ingest_fn(config, keep_html)
                parts.append(raw.repartition(raw.count(), _FILE).mapInArrow(fn, _ddl(_RECORD)))
            else:
                parts.append(raw.mapInArrow(_ingest_fn(config, fmt, keep_html), _ddl(_RECORD)))
        records = parts[0]
        for part in parts[1:]:
            records = records.unionByName(part)
        records.write.mode("overwrite").parquet(f"{work}/records")
        records = spark.read.parquet(f"{work}/records")
        done()

        # 2. page ids and line numbers from per-split counts; duplicate records go to errors.
        done = stage("page ids")
        chunks = sorted(
            (r["src"], r["file"], r["block_start"], r["n_lines"], r["n_good"], r["n_bad"])
            for r in records.filter(F.col("kind") == "chunk").collect()
        )
        offsets: list[tuple[Any, ...]] = []
        sources: list[dict[str, Any]] = []
        page_start, last_file, line_start = 0, None, 0
        for src, file, block, n_lines, n_good, n_bad in chunks:
            if (src, file) != last_file:
                last_file, line_start = (src, file), 0
                sources.append(
                    {
                        "source_id": len(sources) + 1,
                        "path": _display_path(file),
                        "n_records": 0,
                        "n_loaded": 0,
                        "n_errors": 0,
                    }
                )
            s = sources[-1]
            offsets.append((src, file, block, s["source_id"], line_start, page_start))
            s["n_records"] += n_good + n_bad
            s["n_loaded"] += n_good
            s["n_errors"] += n_bad
            line_start += n_lines
            page_start += n_good
        if not offsets:
            raise NotACrawlDump(f"{', '.join(inputs)}: no records at all")
        off = F.broadcast(
            spark.createDataFrame(
                offsets,
                "src int, file string, block_start bigint, source_id int, line_start bigint, page_start bigint",
            )
        )
        keyed = records.join(off, ["src", "file", "block_start"])
        pages = keyed.filter(F.col("kind") == "page").select(
            (F.col("page_start") + F.col("good_idx") + 1).alias("page_id"),
            "source_id",
            (F.col("line_start") + F.col("idx") + 1).alias("line"),
            "url",
            "canonical_url",
            "host",
            "fetched_at",
            "status",
            "md5",
            "rel_canonical",
            "extra",
            *(["html"] if keep_html else []),
            "text",
            "title",
            "n_words",
            "exact_key",
            "degenerate",
        )
        errors = keyed.filter(F.col("kind") == "error").select(
            "source_id", (F.col("line_start") + F.col("idx") + 1).alias("line"), "reason"
        )
        # A record that repeats an earlier one (same url, fetch time and bytes) is rejected, as locally.
        slim = pages.select("page_id", "source_id", "line", "url", "fetched_at", "md5")
        first = (
            slim.groupBy("url", "fetched_at", "md5")
            .agg(
                F.count("*").alias("n"),
                F.min("page_id").alias("first_id"),
                F.min_by("line", "page_id").alias("first_line"),
            )
            .filter(F.col("n") > 1)
        )
        dups = (
            slim.alias("p")
            .join(
                first.alias("f"),
                (F.col("p.url") == F.col("f.url"))
                & F.col("p.fetched_at").eqNullSafe(F.col("f.fetched_at"))
                & (F.col("p.md5") == F.col("f.md5")),
            )
            .filter(F.col("p.page_id") != F.col("f.first_id"))
            .select(
                F.col("p.page_id").alias("page_id"),
                F.col("p.source_id").alias("source_id"),
                F.col("p.line").alias("line"),
                F.col("f.first_line").alias("first_line"),
            )
            .persist()
        )
        dup_errors = dups.select(
            "source_id",
            "line",
            F.concat(
                F.lit("duplicate record: same url, fetched_at and content as line "),
                F.col("first_line").cast("string"),
            ).alias("reason"),
        )
        pages = pages.join(dups.select("page_id"), "page_id", "left_anti")
        pages.write.mode("overwrite").parquet(f"{work}/pages")
        pages = spark.read.parquet(f"{work}/pages")
        path_of = spark.createDataFrame(
            [(s["source_id"], s["path"]) for s in sources], "source_id int, source string"
        )
        errors = errors.unionByName(dup_errors).join(F.broadcast(path_of), "source_id")
        errors.select("source_id", "source", "line", "reason").orderBy("source_id", "line").write.mode(
            "overwrite"
        ).parquet(f"{out}/errors")
        for sid, n in dups.groupBy("source_id").count().collect():
            s = sources[sid - 1]
            s["n_loaded"] -= n
            s["n_errors"] += n
        dups.unpersist()
        empty = [s for s in sources if s["n_loaded"] == 0]
        if empty:
            reasons = (
                errors.filter(F.col("source_id").isin([s["source_id"] for s in empty]))
                .select("reason")
                .limit(1000)
                .collect()
            )
            kinds = sorted({reason_kind(r["reason"]) for r in reasons})
            raise NotACrawlDump(
                f"{empty[0]['path']}: not a crawl dump: no usable record "
                f"({', '.join(kinds[:3]) or 'no records'})"
            )
        done()

        # 3. units (distinct exact keys of content pages, numbered in key order) and their fingerprints.
        done = stage("fingerprints")
        content = pages.filter(F.col("degenerate").isNull())
        unit_texts = content.groupBy("exact_key").agg(F.any_value("text").alias("text"))
        numbered = _dense_index(unit_texts, ["exact_key"], "unit_id")
        unit_schema = _UNIT_SIMHASH if config.method == "simhash" else _UNIT_MINHASH
        numbered.select("unit_id", "exact_key", "text").mapInArrow(
            _fingerprint_fn(config), _ddl(unit_schema)
        ).write.mode("overwrite").parquet(f"{out}/units")
        numbered.unpersist()
        units = spark.read.parquet(f"{out}/units")
        n_units = units.count()
        done()

        # 4. candidate pairs, verified, down to the loosest threshold.
        done = stage("candidates")
        if config.method == "simhash":
            pairs, stats = _simhash_pairs(spark, units, n_units, config)
        else:
            pairs, stats = _minhash_pairs(spark, units, n_units, config)
            if config.verify == "exact":
                pairs.write.mode("overwrite").parquet(f"{work}/pairs_estimated")
                pairs = spark.read.parquet(f"{work}/pairs_estimated")
                stats["verified_exact"] = pairs.count()
                pairs = _exact_pairs(spark, pairs, content, units, config, work)
        pairs.write.mode("overwrite").parquet(f"{work}/pairs")
        pairs = spark.read.parquet(f"{work}/pairs")
        page_unit = content.select("page_id", "exact_key", "canonical_url").join(
            units.select("exact_key", "unit_id"), "exact_key"
        )
        unit_page = page_unit.groupBy("unit_id").agg(
            F.min("page_id").alias("page_id"), F.min_by("canonical_url", "page_id").alias("url")
        )
        ua, ub = unit_page.alias("ua"), unit_page.alias("ub")
        pairs.alias("p").join(ua, F.col("p.a") == F.col("ua.unit_id")).join(
            ub, F.col("p.b") == F.col("ub.unit_id")
        ).select(
            "p.a",
            "p.b",
            F.col("ua.page_id").alias("page_a"),
            F.col("ub.page_id").alias("page_b"),
            F.col("ua.url").alias("url_a"),
            F.col("ub.url").alias("url_b"),
            F.lit(config.method).alias("method"),
            F.col("p.hamming_bits").cast("smallint").alias("hamming_bits"),
            "p.jaccard",
            "p.containment",
        ).orderBy("a", "b").write.mode("overwrite").parquet(f"{out}/pairs")
        n_pairs = pairs.count()
        if stats["verified_exact"]:
            stats["rejected_exact"] = stats["verified_exact"] - n_pairs
        done()

        # 5. clusters at the threshold: components over units; pages inherit their unit's.
        done = stage("clusters")
        if config.method == "simhash":
            edges = pairs.filter(F.col("hamming_bits") <= int(config.threshold))
        else:
            edges = pairs.filter(F.col(config.similarity) >= config.threshold)
        edges = edges.select("a", "b").persist()
        n_edges = edges.count()
        if n_edges:
            labels, rounds = connected_components(edges)
        else:
            labels, rounds = spark.createDataFrame([], "node int, label int"), 0
        unit_comp = (
            units.select("unit_id")
            .join(labels, units["unit_id"] == labels["node"], "left")
            .select("unit_id", F.coalesce(F.col("label"), F.col("unit_id")).cast("bigint").alias("comp"))
        )
        members = (
            page_unit.join(unit_comp, "unit_id")
            .join(content.select("page_id", "url", "host", "fetched_at", "rel_canonical"), "page_id")
            .persist()
        )
        sizes = members.groupBy("comp").agg(
            F.count("*").alias("cluster_size"), F.min("page_id").alias("first_page")
        )
        sizes = _dense_index(
            sizes, [F.col("cluster_size").desc(), F.col("first_page").asc()], "cluster_id", start=1
        )
        members = members.join(sizes.select("comp", "cluster_id", "cluster_size"), "comp").persist()
        sizes.unpersist()
        # A one-page cluster is its own representative ("shortest URL": nothing names it, no other fetch).
        single = members.filter(F.col("cluster_size") == 1).select(
            "cluster_id",
            F.col("page_id").alias("representative_id"),
            F.col("canonical_url").alias("representative_url"),
            F.lit("shortest URL").alias("why"),
        )
        multi = members.filter(F.col("cluster_size") > 1).select(
            "cluster_id", "page_id", "canonical_url", "rel_canonical", "fetched_at"
        )
        n_multi = multi.count()
        n_parts = max(int(spark.conf.get("spark.sql.shuffle.partitions") or 200), n_multi // 20000 + 1)
        reps = multi.repartition(n_parts, "cluster_id").mapInArrow(
            _representatives_fn(config.representative), _ddl(_REPS)
        )
        reps = single.unionByName(reps)
        clusters = members.join(reps, "cluster_id").select(
            "cluster_id",
            "cluster_size",
            "page_id",
            "url",
            "canonical_url",
            "host",
            "unit_id",
            "representative_id",
            "representative_url",
            "why",
            (F.col("page_id") == F.col("representative_id")).alias("is_representative"),
        )
        clusters.orderBy("cluster_id", "page_id").write.mode("overwrite").parquet(f"{out}/clusters")
        clusters = spark.read.parquet(f"{out}/clusters")
        edges.unpersist()
        members.unpersist()
        done()

        # 6. pages with their unit, fingerprint and cluster.
        done = stage("write pages")
        fp_cols = ["simhash"] if config.method == "simhash" else ["minhash"]
        info = clusters.select("page_id", "unit_id", "cluster_id").join(
            units.select("unit_id", "n_shingles", *fp_cols), "unit_id"
        )
        pages.join(info, "page_id", "left").orderBy("page_id").write.mode("overwrite").parquet(f"{out}/pages")
        done()

        # 7. the report numbers (`analysis.report_numbers`, as locally) and the manifest, last.
        numbers = _numbers(spark.read.parquet(f"{out}/pages"), clusters, n_units, n_edges)
        spark_info = {
            "version": spark.version,
            "master": spark.sparkContext.master,
            "cc_rounds": rounds,
            "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        }
        manifest = {
            "neardup_spark": FORMAT_VERSION,
            "config": config.to_dict(),
            "norm_key": config.norm_key,
            "fingerprint_key": config.fingerprint_key,
            "inputs": list(inputs),
            "keep_html": keep_html,
            "sources": sources,
            "counts": {
                "records": sum(s["n_records"] for s in sources),
                "pages": numbers["total_pages"],
                "errors": sum(s["n_errors"] for s in sources),
                "units": n_units,
                "pairs": n_pairs,
                "pairs_at_threshold": n_edges,
                "clusters": numbers["unique_pages"],
            },
            "numbers": numbers,
            "candidate_stats": stats,
            "timings_s": {**timings, "total": round(time.perf_counter() - t_all, 2)},
            "spark": spark_info,
            "outputs": {name: name for name in OUTPUTS},
            "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        _write_text(spark, f"{out}/dupcheck.yaml", dump_config(config))
        _write_text(spark, f"{out}/{MANIFEST}", json.dumps(manifest, indent=2, default=str) + "\n")
        return manifest
    finally:
        spark.catalog.clearCache()
        _delete(spark, work)
        _delete(spark, ckpt)


def _bucket_stats(sizes: DataFrame, cap: int) -> dict[str, int]:
    from pyspark.sql import functions as F

    n = F.col("size")
    kept = (n >= 2) & (n <= cap)
    row = sizes.agg(
        F.max(n).alias("largest"),
        F.sum(F.when(n > cap, 1).otherwise(0)).alias("capped"),
        F.sum(F.when(n > cap, n).otherwise(0)).alias("capped_members"),
        F.sum(F.when(kept, n * (n - 1) / 2).otherwise(0)).cast("bigint").alias("pairs"),
    ).collect()[0]
    return {
        "largest_bucket": int(row["largest"] or 0),
        "capped_buckets": int(row["capped"] or 0),
        "capped_members": int(row["capped_members"] or 0),
        "bucket_pairs": int(row["pairs"] or 0),
    }


def _empty_stats() -> dict[str, Any]:
    return {
        "tables": 0,
        "candidates": 0,
        "largest_bucket": 0,
        "capped_buckets": 0,
        "capped_members": 0,
        "verified_exact": 0,
        "rejected_exact": 0,
        "notes": [],
    }


def _simhash_pairs(
    spark: SparkSession, units: DataFrame, n: int, config: Config
) -> tuple[DataFrame, dict[str, Any]]:
    """`candidates.simhash_pairs` as joins: the same tables (block masks, r), cap and stats."""
    from pyspark.sql import functions as F

    stats = _empty_stats()
    empty = spark.createDataFrame(
        [], "a int, b int, hamming_bits smallint, jaccard double, containment double"
    )
    if n < 2:
        return empty, stats
    max_bits = config.simhash_max_bits
    r = choose_r(n, max_bits)
    tables = [
        (t, _signed64(sum(combo))) for t, combo in enumerate(combinations(block_masks(max_bits + r), r))
    ]
    table_df = F.broadcast(spark.createDataFrame(tables, "table int, mask bigint"))
    keyed = (
        units.select("unit_id", "simhash")
        .crossJoin(table_df)
        .select("table", (F.col("simhash").bitwiseAND(F.col("mask"))).alias("key"), "unit_id", "simhash")
    )
    sizes = keyed.groupBy("table", "key").agg(F.count("*").alias("size")).persist()
    b = _bucket_stats(sizes, BUCKET_CAP)
    stats.update(
        tables=len(tables),
        candidates=b["bucket_pairs"],
        largest_bucket=b["largest_bucket"],
        capped_buckets=b["capped_buckets"],
        capped_members=b["capped_members"],
    )
    if b["capped_buckets"]:
        stats["notes"].append(
            f"{b['capped_buckets']} SimHash bucket(s) with more than {BUCKET_CAP} members "
            f"({b['capped_members']} members) {CAPPED_NOTE}"
        )
    kept = sizes.filter((F.col("size") >= 2) & (F.col("size") <= BUCKET_CAP)).select("table", "key")
    buckets = (
        keyed.join(kept, ["table", "key"])
        .groupBy("table", "key")
        .agg(F.collect_list(F.struct("unit_id", "simhash")).alias("members"))
    )
    found = buckets.select("members").mapInArrow(_simhash_bucket_fn(max_bits), _ddl(_PAIR_BITS))
    pairs = found.dropDuplicates(["a", "b"]).select(
        "a",
        "b",
        "hamming_bits",
        F.lit(None).cast("double").alias("jaccard"),
        F.lit(None).cast("double").alias("containment"),
    )
    return pairs, stats


def _exact_pairs(
    spark: SparkSession, pairs: DataFrame, content: DataFrame, units: DataFrame, config: Config, work: str
) -> DataFrame:
    """MinHash pairs re-scored with exact shingle-set Jaccard and containment (config.verify == "exact"):
    each unit in a pair is tokenized once (the sets are written out, then read by both joins)."""
    from pyspark.sql import functions as F

    ids = (
        pairs.select(F.col("a").alias("unit_id")).union(pairs.select(F.col("b").alias("unit_id"))).distinct()
    )
    texts = (
        content.groupBy("exact_key")
        .agg(F.any_value("text").alias("text"))
        .join(units.select("exact_key", "unit_id"), "exact_key")
        .join(ids, "unit_id")
    )
    texts.select("unit_id", "text").mapInArrow(
        _shingle_set_fn(config.shingle_size), _ddl(_UNIT_SET)
    ).write.mode("overwrite").parquet(f"{work}/unit_sets")
    sets = spark.read.parquet(f"{work}/unit_sets")
    sa = sets.select(F.col("unit_id").alias("a"), F.col("shingles").alias("set_a"))
    sb = sets.select(F.col("unit_id").alias("b"), F.col("shingles").alias("set_b"))
    joined = pairs.select("a", "b").join(sa, "a").join(sb, "b").select("a", "b", "set_a", "set_b")
    return joined.mapInArrow(_exact_fn(config), _ddl(_PAIR_EST)).select(
        "a", "b", F.lit(None).cast("smallint").alias("hamming_bits"), "jaccard", "containment"
    )


def _minhash_pairs(
    spark: SparkSession, units: DataFrame, n: int, config: Config
) -> tuple[DataFrame, dict[str, Any]]:
    """`candidates.minhash_pairs` as joins: the same bands x rows, cap, estimates and stats."""
    from pyspark.sql import functions as F

    stats = _empty_stats()
    empty = spark.createDataFrame(
        [], "a int, b int, hamming_bits smallint, jaccard double, containment double"
    )
    if n < 2:
        return empty, stats
    bands, rows = lsh_params(
        lsh_threshold(config.minhash_floor, config.similarity, config.min_size_ratio), config.num_perm
    )
    stats["notes"].append(f"LSH bands x rows = {bands} x {rows}")
    band_df = F.broadcast(
        spark.createDataFrame([(b, b * rows * 4 + 1) for b in range(bands)], "band int, pos int")
    )
    keyed = (
        units.select("unit_id", "minhash")
        .crossJoin(band_df)
        .select("band", F.expr(f"substring(minhash, pos, {rows * 4})").alias("key"), "unit_id")
    )
    sizes = keyed.groupBy("band", "key").agg(F.count("*").alias("size")).persist()
    b = _bucket_stats(sizes, BUCKET_CAP)
    kept = sizes.filter((F.col("size") >= 2) & (F.col("size") <= BUCKET_CAP)).select("band", "key")
    buckets = (
        keyed.join(kept, ["band", "key"])
        .groupBy("band", "key")
        .agg(F.collect_list("unit_id").alias("members"))
    )
    cands = buckets.select("members").mapInArrow(_lsh_bucket_fn(), _ddl(_PAIR_IDS)).dropDuplicates(["a", "b"])
    # Buckets of one band are disjoint: the band's distinct pairs are its buckets' pairs (as counted locally).
    stats.update(
        tables=bands,
        candidates=b["bucket_pairs"],
        largest_bucket=b["largest_bucket"],
        capped_buckets=b["capped_buckets"],
        capped_members=b["capped_members"],
    )
    if b["capped_buckets"]:
        stats["notes"].append(
            f"{b['capped_buckets']} LSH bucket(s) with more than {BUCKET_CAP} members "
            f"({b['capped_members']} members) {CAPPED_NOTE}"
        )
    sig = units.select("unit_id", "minhash", "n_shingles")
    if n * config.num_perm * 4 <= BROADCAST_SIGNATURES_BYTES:
        # The signature matrix fits every worker: verify against a broadcast copy, no shuffle join.
        table = sig.toArrow() if hasattr(sig, "toArrow") else pa.Table.from_pandas(sig.toPandas())
        ids = table.column("unit_id").to_numpy().astype(np.int64)
        matrix = np.empty((n, config.num_perm), np.uint32)
        matrix[ids] = signatures(table.column("minhash").combine_chunks().to_pylist(), config.num_perm)
        set_sizes = np.zeros(n, np.int32)
        set_sizes[ids] = table.column("n_shingles").to_numpy()
        shared = spark.sparkContext.broadcast((matrix, set_sizes))
        pairs = cands.mapInArrow(_verify_minhash_fn(config, shared), _ddl(_PAIR_EST)).select(
            "a", "b", F.lit(None).cast("smallint").alias("hamming_bits"), "jaccard", "containment"
        )
        return pairs, stats
    sa = sig.select(
        F.col("unit_id").alias("a"), F.col("minhash").alias("sig_a"), F.col("n_shingles").alias("n_a")
    )
    sb = sig.select(
        F.col("unit_id").alias("b"), F.col("minhash").alias("sig_b"), F.col("n_shingles").alias("n_b")
    )
    joined = cands.join(sa, "a").join(sb, "b").select("a", "b", "sig_a", "sig_b", "n_a", "n_b")
    pairs = joined.mapInArrow(_verify_minhash_fn(config), _ddl(_PAIR_EST)).select(
        "a", "b", F.lit(None).cast("smallint").alias("hamming_bits"), "jaccard", "containment"
    )
    return pairs, stats


def _numbers(pages: DataFrame, clusters: DataFrame, n_units: int, n_edges: int) -> dict[str, Any]:
    """The report numbers of `analysis.analyze`, from the written pages and clusters."""
    from pyspark.sql import functions as F

    p = pages.agg(
        F.count("*").alias("total"),
        F.sum(F.when(F.col("degenerate").isNull(), 1).otherwise(0)).alias("content"),
        F.countDistinct(F.when(F.col("degenerate").isNull(), F.col("md5"))).alias("md5s"),
    ).collect()[0]
    c = (
        clusters.select("cluster_id", "cluster_size")
        .distinct()
        .agg(
            F.count("*").alias("clusters"),
            F.sum(F.when(F.col("cluster_size") > 1, 1).otherwise(0)).alias("dup_clusters"),
            F.max("cluster_size").alias("largest"),
        )
        .collect()[0]
    )
    return report_numbers(
        total_pages=int(p["total"]),
        content_pages=int(p["content"] or 0),
        distinct_md5s=int(p["md5s"]),
        distinct_texts=n_units,
        clusters=int(c["clusters"]),
        duplicate_clusters=int(c["dup_clusters"] or 0),
        largest_cluster=int(c["largest"] or 0),
        pairs_at_threshold=n_edges,
    ).as_dict()


# --- the output, audited locally -----------------------------------------------------------------
def read_manifest(out_dir: str | Path) -> dict[str, Any]:
    """The manifest of a finished run (NeardupError if the directory holds none)."""
    path = Path(_display_path(str(out_dir))) / MANIFEST
    if not path.is_file():
        raise NeardupError(
            f"{out_dir} is not a finished `neardup spark` output (no {MANIFEST}); "
            "a run that failed part-way leaves none"
        )
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("neardup_spark") != FORMAT_VERSION:
        raise NeardupError(
            f"{out_dir} was written by an incompatible neardup (format {manifest.get('neardup_spark')})"
        )
    return manifest


def open_output(out_dir: str | Path, db_path: str | Path, *, copy: bool = False) -> dict[str, Any]:
    """A DuckDB file over a Spark run's Parquet: views read the files in place (`copy=True` loads them
    into tables instead, so other fingerprint settings of the same normalization can be computed
    locally). Returns the manifest."""
    from .store import Store

    directory = Path(_display_path(str(out_dir))).resolve()
    manifest = read_manifest(directory)
    if Path(db_path).exists():
        raise NeardupError(f"{db_path} exists: `neardup open` makes a new database file; choose another --db")
    config = Config.from_dict(manifest["config"])
    with Store(db_path) as store:
        store.attach_parquet_run(
            str(directory),
            norm_key=config.norm_key,
            fingerprint_key=config.fingerprint_key,
            method=config.method,
            shingle_size=config.shingle_size,
            n_units=manifest["counts"]["units"],
            n_pairs=manifest["counts"]["pairs"],
            stats=manifest["candidate_stats"],
            seconds=sum(manifest["timings_s"].get(k, 0.0) for k in ("fingerprints", "candidates")),
            sources=manifest["sources"],
            has_html=bool(manifest.get("keep_html")),
            copy=copy,
        )
    return manifest


def check_setting(run: dict[str, str], config: Config) -> None:
    """Refuse a setting that a database opened from Spark output cannot compute (it holds no HTML)."""
    if run.get("mode") == "view" and config.fingerprint_key != run.get("fingerprint_key"):
        raise NeardupError(
            f"this database reads the Spark output {run.get('dir')} in place, computed for "
            f"{run.get('fingerprint_key')}; use its setting (--config {run.get('dir')}/dupcheck.yaml; "
            "thresholds are free), or `neardup open --copy` to compute other methods locally"
        )
    if config.norm_key != run.get("norm_key"):
        raise NeardupError(
            f"this database holds the Spark run's text normalized as {run.get('norm_key')!r}, not the HTML: "
            f"another normalization needs another `neardup spark` run"
        )
