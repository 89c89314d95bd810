"""Candidate pairs on Spark: `candidates.simhash_pairs` as joins, and `candidates.minhash_pairs` (with the
size-class pass `candidates.containment_lsh_pairs` under `partial_copies`) in band tasks that get the
signatures by a broadcast or a shuffle (joins when a crawl is added), with the same tables or bands, bucket
cap, verification and statistics as the local engine."""

from __future__ import annotations

from functools import partial
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ..batches import signatures
from ..candidates import (
    BUCKET_CAP,
    CandidateStats,
    add_size_class_pass,
    band_counts,
    block_masks,
    choose_r,
    lsh_band_table,
    lsh_params,
    lsh_threshold,
    partial_copy_ratio,
    size_class_tables,
)
from ..config import Config
from . import arrow
from .arrow import ddl, per_batch
from .components import frame_from_arrow, to_arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# The LSH passes broadcast the signature matrix to their band tasks up to this size (~1M units at 128
# permutations), else shuffle each unit's signature to its bands' tasks (`banded_by_shuffle`); the Spark
# setting neardup.broadcastSignaturesBytes overrides it.
BROADCAST_SIGNATURES_BYTES = 512 << 20
BROADCAST_SIGNATURES_SETTING = "neardup.broadcastSignaturesBytes"
# A band task of `banded_by_shuffle` holds about this many bytes of signatures at once (one key group of a
# band: the group's signatures, twice while they are sorted by unit, and its buckets' pairs).
BAND_GROUP_BYTES = 64 << 20
# Exact verification joins the pages' texts to a broadcast of the paired units' keys up to this many.
BROADCAST_PAIRED_UNITS = 2_000_000


def signed64(x: int) -> int:
    """A 64-bit pattern as Spark's signed long (Spark has no unsigned type)."""
    return x - (1 << 64) if x >= 1 << 63 else x


class BucketGrown(Exception):
    """A bucket holding a unit of `touching` grew past `BUCKET_CAP` with it: a full computation no longer
    expands it, so pairs found in it earlier may be gone; the caller computes all pairs again."""


def touched_buckets(keyed: DataFrame, bucket: list[str], touching: DataFrame | None) -> DataFrame:
    """The rows of `keyed` in the buckets (columns `bucket`) that hold a unit of `touching` (column
    unit_id), marked (column touching: 1, else null), or all rows without `touching`: the buckets a
    crawl's new units can add pairs to."""
    from pyspark.sql import functions as F

    if touching is None:
        return keyed
    marked = keyed.join(touching.select("unit_id", F.lit(1).alias("touching")), "unit_id", "left")
    touched = marked.filter(F.col("touching") == 1).select(*bucket).distinct()
    return marked.join(touched, bucket, "left_semi")


def bucket_sizes(keyed: DataFrame, bucket: list[str], touching: DataFrame | None) -> DataFrame:
    """(`bucket`, size) of `keyed`; with `touching` (`touched_buckets` rows), BucketGrown when one
    holds more than `BUCKET_CAP` rows and would hold at most that many without the marked units."""
    from pyspark.sql import functions as F

    if touching is None:
        return keyed.groupBy(*bucket).agg(F.count("*").alias("size"))
    sizes = (
        keyed.groupBy(*bucket)
        .agg(F.count("*").alias("size"), F.count("touching").alias("n_touching"))
        .persist()
    )
    size = F.col("size")
    grown = sizes.filter((size > BUCKET_CAP) & (size - F.col("n_touching") <= BUCKET_CAP)).limit(1).count()
    if grown:
        sizes.unpersist()
        raise BucketGrown
    return sizes.drop("n_touching")


def pairs_touching(pairs: DataFrame, touching: DataFrame | None) -> DataFrame:
    """The pairs (a, b) with a unit of `touching` (column unit_id), or all without `touching`."""
    if touching is None:
        return pairs
    ids = touching.select("unit_id")
    with_a = pairs.join(ids.withColumnRenamed("unit_id", "a"), "a", "left_semi")
    with_b = pairs.join(ids.withColumnRenamed("unit_id", "b"), "b", "left_semi")
    return with_a.unionByName(with_b).dropDuplicates(["a", "b"])


def _buckets(
    keyed: DataFrame,
    table: str,
    member: Any,
    *,
    n_tables: int,
    stats: CandidateStats,
    touching: DataFrame | None = None,
) -> DataFrame:
    """The buckets (`table`, key) of `keyed` with 2 to BUCKET_CAP rows, each as its list of `member`
    (column "members"); the bucket counts go into `stats` as `candidates` counts them locally: the
    pairs of the buckets kept (buckets of one table are disjoint), and the buckets above the cap; the
    caller adds the capped-bucket warning once its counts are complete. With `touching`, only the
    buckets holding one of its units (`touched_buckets`), and only those are counted."""
    from pyspark.sql import functions as F

    keyed = touched_buckets(keyed, [table, "key"], touching)
    sizes = bucket_sizes(keyed, [table, "key"], touching).persist()
    n = F.col("size")
    kept = (n >= 2) & (n <= BUCKET_CAP)
    row = sizes.agg(
        F.max(n).alias("largest"),
        F.sum(F.when(n > BUCKET_CAP, 1).otherwise(0)).alias("capped"),
        F.sum(F.when(n > BUCKET_CAP, n).otherwise(0)).alias("capped_members"),
        F.sum(F.when(kept, n * (n - 1) / 2).otherwise(0)).cast("bigint").alias("pairs"),
    ).collect()[0]
    stats.tables = n_tables
    stats.candidates = int(row["pairs"] or 0)
    stats.largest_bucket = int(row["largest"] or 0)
    stats.capped_buckets = int(row["capped"] or 0)
    stats.capped_members = int(row["capped_members"] or 0)
    return (
        keyed.join(sizes.filter(kept).select(table, "key"), [table, "key"])
        .groupBy(table, "key")
        .agg(F.collect_list(member).alias("members"))
    )


def _estimated(pairs: DataFrame) -> DataFrame:
    """MinHash pairs (a, b, jaccard, containment) in the columns of the pairs table."""
    from pyspark.sql import functions as F

    return pairs.select(
        "a", "b", F.lit(None).cast("smallint").alias("hamming_bits"), "jaccard", "containment"
    )


def _no_pairs(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(
        [], "a int, b int, hamming_bits smallint, jaccard double, containment double"
    )


def simhash_pairs(
    spark: SparkSession, units: DataFrame, n: int, config: Config, *, touching: DataFrame | None = None
) -> tuple[DataFrame, CandidateStats]:
    """`candidates.simhash_pairs` as joins: the same tables (block masks, r), cap and stats. With
    `touching` (column unit_id), only the pairs with one of its units, the stats of their buckets."""
    from pyspark.sql import functions as F

    stats = CandidateStats(bucket_cap=BUCKET_CAP)
    if n < 2:
        return _no_pairs(spark), stats
    max_bits = config.simhash_max_bits
    r = choose_r(n, max_bits)
    tables = [(t, signed64(sum(combo))) for t, combo in enumerate(combinations(block_masks(max_bits + r), r))]
    table_df = F.broadcast(spark.createDataFrame(tables, "table int, mask bigint"))
    keyed = (
        units.select("unit_id", "simhash")
        .crossJoin(table_df)
        .select("table", (F.col("simhash").bitwiseAND(F.col("mask"))).alias("key"), "unit_id", "simhash")
    )
    member = F.struct("unit_id", "simhash")
    buckets = _buckets(keyed, "table", member, n_tables=len(tables), stats=stats, touching=touching)
    stats.warn_capped("SimHash", BUCKET_CAP)
    found = buckets.select("members").mapInArrow(
        per_batch(arrow.simhash_bucket_pairs, max_bits), ddl(arrow.PAIR_BITS)
    )
    pairs = (
        pairs_touching(found, touching)
        .dropDuplicates(["a", "b"])
        .select(
            "a",
            "b",
            "hamming_bits",
            F.lit(None).cast("double").alias("jaccard"),
            F.lit(None).cast("double").alias("containment"),
        )
    )
    return pairs, stats


def signatures_broadcast_bytes(spark: SparkSession) -> int:
    """The largest signature matrix the LSH passes broadcast to their band tasks: the Spark setting
    neardup.broadcastSignaturesBytes, else `BROADCAST_SIGNATURES_BYTES`."""
    value = spark.conf.get(BROADCAST_SIGNATURES_SETTING, None)
    return BROADCAST_SIGNATURES_BYTES if value is None else int(value)


def minhash_pairs(
    spark: SparkSession, units: DataFrame, n: int, config: Config, *, touching: DataFrame | None = None
) -> tuple[DataFrame, CandidateStats]:
    """`candidates.minhash_pairs` as Spark tasks: the same bands x rows, cap, estimates and stats. The
    band tasks get the signatures by a broadcast up to `signatures_broadcast_bytes` (`banded_in_tasks`),
    by a shuffle above it (`banded_by_shuffle`). With `touching` (column unit_id), only the pairs with one
    of its units, the stats of their buckets (`grouped_band_pairs`)."""
    stats = CandidateStats(bucket_cap=BUCKET_CAP)
    if n < 2:
        return _no_pairs(spark), stats
    bands, rows = lsh_params(
        lsh_threshold(config.minhash_floor, config.similarity, config.min_size_ratio), config.num_perm
    )
    stats.lsh_bands, stats.lsh_rows = bands, rows
    fits = n * config.num_perm * 4 <= signatures_broadcast_bytes(spark)
    if touching is None:
        banded = banded_in_tasks if fits else banded_by_shuffle
        return _estimated(banded(spark, units, n, config, bands, rows, stats)), stats
    found = grouped_band_pairs(spark, units, n, config, bands, rows, stats, touching=touching, broadcast=fits)
    return _estimated(found), stats


def grouped_band_pairs(
    spark: SparkSession,
    units: DataFrame,
    n: int,
    config: Config,
    bands: int,
    rows: int,
    stats: CandidateStats,
    *,
    touching: DataFrame | None = None,
    broadcast: bool,
) -> DataFrame:
    """The LSH pairs (a, b, jaccard, containment) at or above the floor, with the buckets of both passes
    made by a groupBy on (band, key) (`_buckets`, `size_class_candidates`): with `touching`, only the
    buckets and pairs of its units. The candidates are verified in their bucket tasks against the
    broadcast signatures (`broadcast`), or after a join of both signatures to each distinct pair."""
    from pyspark.sql import functions as F

    band_df = F.broadcast(
        spark.createDataFrame([(b, b * rows * 4 + 1) for b in range(bands)], "band int, pos int")
    )
    keyed = (
        units.select("unit_id", "minhash")
        .crossJoin(band_df)
        .select("band", F.expr(f"substring(minhash, pos, {rows * 4})").alias("key"), "unit_id")
    )
    buckets = _buckets(keyed, "band", "unit_id", n_tables=bands, stats=stats, touching=touching)
    cands = buckets.select("members").mapInArrow(per_batch(arrow.lsh_bucket_pairs), ddl(arrow.PAIR_IDS))
    if config.searches_partial_copies:
        cands = cands.unionByName(size_class_candidates(units, config, stats, touching=touching))
    stats.warn_capped("LSH", BUCKET_CAP)  # the one index's buckets, as locally
    if broadcast:
        # Each bucket task verifies its pairs against a broadcast copy of the signatures, and only the
        # pairs kept are shuffled to drop the ones found in several bands.
        verify = per_batch(arrow.minhash_estimates, config, broadcast_signatures(spark, units, n, config))
        kept = pairs_touching(cands.mapInArrow(verify, ddl(arrow.PAIR_EST)), touching)
        return kept.dropDuplicates(["a", "b"])
    cands = pairs_touching(cands, touching).dropDuplicates(["a", "b"])
    sig = units.select("unit_id", "minhash", "n_shingles")
    sa = sig.select(
        F.col("unit_id").alias("a"), F.col("minhash").alias("sig_a"), F.col("n_shingles").alias("n_a")
    )
    sb = sig.select(
        F.col("unit_id").alias("b"), F.col("minhash").alias("sig_b"), F.col("n_shingles").alias("n_b")
    )
    joined = cands.join(sa, "a").join(sb, "b").select("a", "b", "sig_a", "sig_b", "n_a", "n_b")
    return joined.mapInArrow(per_batch(arrow.minhash_estimates, config), ddl(arrow.PAIR_EST))


def broadcast_signatures(spark: SparkSession, units: DataFrame, n: int, config: Config) -> Any:
    """The units' signature matrix and shingle counts, indexed by unit id, as a broadcast variable."""
    table = to_arrow(units.select("unit_id", "minhash", "n_shingles"))
    ids = table.column("unit_id").to_numpy().astype(np.int64)
    matrix = np.empty((n, config.num_perm), np.uint32)
    matrix[ids] = signatures(table.column("minhash").to_pylist(), config.num_perm)
    set_sizes = np.zeros(n, np.float64)
    set_sizes[ids] = table.column("n_shingles").to_numpy()
    return spark.sparkContext.broadcast((matrix, set_sizes))


def banded_in_tasks(
    spark: SparkSession,
    units: DataFrame,
    n: int,
    config: Config,
    bands: int,
    rows: int,
    stats: CandidateStats,
) -> DataFrame:
    """The LSH pairs (a, b, jaccard, containment) at or above the floor, when the signature matrix fits
    every worker: one task per band groups, pairs and verifies the band's rows of the broadcast matrix as
    the local engine does (`arrow.lsh_band_estimates`), and only the pairs kept are shuffled, to drop the
    ones found in several bands. The bucket counts go into `stats`, from the driver's copy."""
    from pyspark.sql import functions as F

    shared = broadcast_signatures(spark, units, n, config)
    matrix = shared.value[0]
    for band in range(bands):
        stats.merge(band_counts(lsh_band_table(matrix, band, rows), BUCKET_CAP))
    found = (
        spark.range(bands, numPartitions=bands)
        .select(F.col("id").cast("int").alias("band"))
        .mapInArrow(
            per_batch(arrow.lsh_band_estimates, config, shared, rows, BUCKET_CAP), ddl(arrow.PAIR_EST)
        )
    )
    if config.searches_partial_copies:
        found = found.unionByName(size_classes_in_tasks(spark, shared, config, stats))
    stats.warn_capped("LSH", BUCKET_CAP)  # the one index's buckets, as locally
    return found.dropDuplicates(["a", "b"])


def banded_by_shuffle(
    spark: SparkSession,
    units: DataFrame,
    n: int,
    config: Config,
    bands: int,
    rows: int,
    stats: CandidateStats,
) -> DataFrame:
    """The pairs of `banded_in_tasks` (both passes) for a signature matrix of any size: no broadcast, each
    unit's signature goes by one shuffle to the task of each band's key group it falls in (a band's keys
    cut by value into groups of about `BAND_GROUP_BYTES` of signatures: a bucket lies in one group), for
    the one index's bands and the size-class bands alike (`arrow.BandGroups`). A task takes its groups one
    at a time (sorted by group), makes each group's buckets and verifies their pairs as the local engine
    does (`arrow.band_group_pairs`), and returns the pairs kept and the group's bucket counts, which go
    into `stats` as `banded_in_tasks` adds them. The pairs kept are shuffled to drop the ones found in
    several bands. A unit's signature crosses the shuffle once a band (32 + 42 bands at the defaults)."""
    from pyspark.sql import functions as F

    tables = (
        size_class_tables(partial_copy_ratio(config.min_size_ratio), config.num_perm)
        if config.searches_partial_copies
        else []
    )
    per_band = max(1, -(-n * config.num_perm * 4 // BAND_GROUP_BYTES))
    layout = arrow.BandGroups(bands=bands, rows=rows, size_class_tables=tuple(tables), per_band=per_band)
    found = (
        units.select("unit_id", "n_shingles", "minhash")
        .mapInArrow(per_batch(arrow.band_group_entries, layout, config.num_perm), ddl(arrow.BAND_ENTRY))
        .repartition("group")
        .sortWithinPartitions("group")
        .mapInArrow(arrow.band_groups_fn(config, layout, BUCKET_CAP), ddl(arrow.GROUP_PAIRS))
        .persist()  # read twice: the counts, then the pairs
    )
    lsh = CandidateStats(tables=bands)
    size_class = CandidateStats(tables=layout.n_size_class_bands, size_class_tables=tuple(tables))
    for row in found.filter(F.col("a").isNull()).collect():
        counts = CandidateStats(
            candidates=row["candidates"],
            largest_bucket=row["largest_bucket"],
            capped_buckets=row["capped_buckets"],
            capped_members=row["capped_members"],
        )
        (size_class if row["size_class"] else lsh).merge(counts)
    stats.merge(lsh)
    if tables:
        add_size_class_pass(stats, size_class, BUCKET_CAP)
    stats.warn_capped("LSH", BUCKET_CAP)  # the one index's buckets, as locally
    pairs = found.filter(F.col("a").isNotNull()).select(*arrow.PAIR_EST.names)
    return pairs.dropDuplicates(["a", "b"])


def size_classes_in_tasks(
    spark: SparkSession, shared: Any, config: Config, stats: CandidateStats
) -> DataFrame:
    """The pairs (a, b, jaccard, containment) of `candidates.containment_lsh_pairs` at or above the floor,
    over the broadcast signatures (`banded_in_tasks`): one task per size-class band makes the band's keys,
    pairs and verifies them as the local engine does (`arrow.size_class_band_estimates`); the band counts
    and the pairs kept (a few per unit) come back to the driver, and the counts go into `stats` as
    `candidates.add_size_class_pass` adds them locally."""
    tables = size_class_tables(partial_copy_ratio(config.min_size_ratio), config.num_perm)
    n_bands = sum(t.bands for t in tables)
    per_band = (
        spark.sparkContext.parallelize(range(n_bands), n_bands)
        .mapPartitions(
            partial(
                arrow.size_class_band_estimates,
                config=config,
                shared=shared,
                tables=tables,
                bucket_cap=BUCKET_CAP,
            )
        )
        .collect()
    )
    counts = CandidateStats(size_class_tables=tuple(tables))
    for band_stats, *_ in per_band:
        counts.merge(band_stats)
    add_size_class_pass(stats, counts, BUCKET_CAP)
    columns = [
        np.concatenate([np.empty(0, f.type.to_pandas_dtype()), *(band[k] for band in per_band)])
        for k, f in enumerate(arrow.PAIR_EST, start=1)
    ]
    return frame_from_arrow(spark, pa.Table.from_arrays(columns, schema=arrow.PAIR_EST))


def size_class_candidates(
    units: DataFrame, config: Config, stats: CandidateStats, *, touching: DataFrame | None = None
) -> DataFrame:
    """The candidates (a, b) of `candidates.containment_lsh_pairs` as a groupBy on (table, bucket): the same
    size classes, tables and keys (computed in the workers with the local functions), the same cap and
    counts, added to `stats` as `minhash_pairs` adds them locally (`candidates.add_size_class_pass`). The verification is
    the LSH candidates': `minhash_pairs` verifies the union."""
    from pyspark.sql import functions as F

    tables = size_class_tables(partial_copy_ratio(config.min_size_ratio), config.num_perm)
    entries = units.select("unit_id", "minhash", "n_shingles").mapInArrow(
        per_batch(arrow.size_class_entries, tables, config.num_perm), ddl(arrow.SIZE_CLASS_ENTRY)
    )
    # read twice: the bucket sizes, then the kept buckets' members
    entries = touched_buckets(entries, ["table", "bucket"], touching).persist()
    if touching is not None:
        bucket_sizes(entries, ["table", "bucket"], touching).unpersist()  # BucketGrown, else nothing
    sizes = (
        entries.groupBy("table", "bucket")
        .agg(F.count("*").alias("size"), F.sum("indexed").alias("n_x"))
        .withColumn("n_q", F.col("size") - F.col("n_x"))
        .persist()
    )
    n = F.col("size")
    kept = (F.col("n_q") > 0) & (F.col("n_x") > 0) & (n <= BUCKET_CAP)
    row = sizes.agg(
        F.max(n).alias("largest"),
        F.sum(F.when(n > BUCKET_CAP, 1).otherwise(0)).alias("capped"),
        F.sum(F.when(n > BUCKET_CAP, n).otherwise(0)).alias("capped_members"),
        F.sum(F.when(kept, F.col("n_q") * F.col("n_x")).otherwise(0)).cast("bigint").alias("pairs"),
    ).collect()[0]
    partial = CandidateStats(
        tables=sum(t.bands for t in tables),
        candidates=int(row["pairs"] or 0),
        largest_bucket=int(row["largest"] or 0),
        capped_buckets=int(row["capped"] or 0),
        capped_members=int(row["capped_members"] or 0),
        size_class_tables=tuple(tables),
    )
    add_size_class_pass(stats, partial, BUCKET_CAP)
    buckets = (
        entries.join(sizes.filter(kept).select("table", "bucket"), ["table", "bucket"])
        .groupBy("table", "bucket")
        .agg(F.collect_list(F.struct("indexed", "unit_id")).alias("members"))
    )
    return buckets.select("members").mapInArrow(per_batch(arrow.size_class_bucket_pairs), ddl(arrow.PAIR_IDS))


def exact_pairs(
    spark: SparkSession,
    pairs: DataFrame,
    n_pairs: int,
    content: DataFrame,
    units: DataFrame,
    config: Config,
    work: str,
) -> DataFrame:
    """The `n_pairs` MinHash `pairs` re-scored with exact shingle-set Jaccard and containment
    (config.verify == "exact"): each unit in a pair is tokenized once (the sets are written out, then
    read by both joins)."""
    from pyspark.sql import functions as F

    ids = (
        pairs.select(F.col("a").alias("unit_id")).union(pairs.select(F.col("b").alias("unit_id"))).distinct()
    )
    # only the paired units' texts reach the groupBy (an exact_key is one text), and with few pairs the
    # other pages' texts are not shuffled for the join either
    wanted = units.select("exact_key", "unit_id").join(ids, "unit_id")
    if 2 * n_pairs <= BROADCAST_PAIRED_UNITS:
        wanted = F.broadcast(wanted)
    texts = (
        content.select("exact_key", "text")
        .join(wanted, "exact_key")
        .groupBy("unit_id")
        .agg(F.any_value("text").alias("text"))
    )
    texts.select("unit_id", "text").mapInArrow(
        per_batch(arrow.shingle_sets, config.shingle_size), ddl(arrow.UNIT_SET)
    ).write.mode("overwrite").parquet(f"{work}/unit_sets")
    sets = spark.read.parquet(f"{work}/unit_sets")
    sa = sets.select(F.col("unit_id").alias("a"), F.col("shingles").alias("set_a"))
    sb = sets.select(F.col("unit_id").alias("b"), F.col("shingles").alias("set_b"))
    joined = pairs.select("a", "b").join(sa, "a").join(sb, "b").select("a", "b", "set_a", "set_b")
    return _estimated(joined.mapInArrow(per_batch(arrow.exact_scores_of_sets, config), ddl(arrow.PAIR_EST)))
