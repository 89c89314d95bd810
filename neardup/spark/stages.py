"""The stages of `neardup spark`, each a function with typed input and output; `run.run_spark` runs them
in order and times them.

1. `ingest_and_normalize`: validate + normalize every record in the workers, materialized once.
   (`revisits.link_revisits`: WARC revisits whose record is in another input file made pages copied from it.)
2. `number_pages`: page ids and line numbers as the local engine gives them; duplicate records and
   bad records go to `errors`.
3. `fingerprint_units`: one unit per distinct text of content pages, numbered in key order, with its
   fingerprint; the content pages' URLs under the config's URL rules (`apply_url_rules`).
4. `find_pairs`: candidate pairs, verified, down to the loosest threshold (`pairs`).
5. `cluster_pages`: connected components of the pairs at the threshold, cluster ids and representatives
   (`clusters`).
6. `write_pages`: the pages with their unit, fingerprint and cluster (`pages`).
Adding a crawl to an earlier output replaces 3 and 4 by `addition.fingerprint_added_units` and
`addition.find_added_pairs`, which build on these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..candidates import CandidateStats
from ..config import Config
from ..errors import NotACrawlDump
from ..rejects import RejectKind
from ..short_texts import TOO_SHORT, short_fetch_margin
from . import arrow
from .arrow import ddl, per_batch
from .components import connected_components, dense_index
from .pairs import exact_pairs, minhash_pairs, simhash_pairs
from .session import FILE, display_path, read_inputs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


# Duplicate records are dropped from the pages by a broadcast anti-join up to this many (8 bytes each).
BROADCAST_DUPLICATES = 10_000_000


@dataclass(slots=True)
class Previous:
    """An earlier run's output, read lazily from its Parquet."""

    path: str
    manifest: dict[str, Any]
    pages: DataFrame  # as numbered, without the columns `write_pages` adds
    units: DataFrame
    pairs: DataFrame
    errors: DataFrame

    @property
    def n_sources(self) -> int:
        return len(self.manifest["sources"])

    @property
    def page_ids(self) -> int:
        return int(self.manifest["page_ids"])

    @property
    def n_units(self) -> int:
        return int(self.manifest["counts"]["units"])

    def pages_like(self, slim: DataFrame) -> DataFrame:
        """The earlier pages a record of `slim` may repeat (same url and bytes), in `slim`'s columns."""
        return self.pages.select(*slim.columns).join(
            slim.select("url", "md5").distinct(), ["url", "md5"], "left_semi"
        )


@dataclass(slots=True)
class Units:
    content: DataFrame  # the content pages (not degenerate)
    units: DataFrame  # unit_id, exact_key, n_shingles and the fingerprint
    n_units: int
    page_unit: DataFrame  # page_id, exact_key, canonical_url, unit_id of each content page


@dataclass(slots=True)
class Pairs:
    pairs: DataFrame  # a, b, hamming_bits, jaccard, containment
    n_pairs: int
    stats: CandidateStats


@dataclass(slots=True)
class Clusters:
    clusters: DataFrame
    n_edges: int  # pairs at the threshold
    rounds: int  # of connected components on DataFrames


def ingest_and_normalize(
    spark: SparkSession, inputs: Sequence[str], input_format: str, config: Config, keep_html: bool, work: str
) -> DataFrame:
    """Every input record as a `RECORD` row (page, error, or a split's counts), written once."""
    parts = []
    for fmt, raw in read_inputs(spark, list(inputs), input_format).items():
        if fmt == "warc":  # one task per file
            n_files = raw.count()
            # several files: a revisit in one may stand for a record of another (`link_revisits`)
            fn = per_batch(arrow.warc_records, config, keep_html, n_files > 1)
            parts.append(raw.repartition(n_files, FILE).mapInArrow(fn, ddl(arrow.RECORD)))
        else:
            parts.append(raw.mapInArrow(arrow.ingest_fn(config, fmt, keep_html), ddl(arrow.RECORD)))
    records = parts[0]
    for part in parts[1:]:
        records = records.unionByName(part)
    records.write.mode("overwrite").parquet(f"{work}/records")
    return spark.read.parquet(f"{work}/records")


@dataclass(slots=True)
class Numbered:
    pages: DataFrame
    sources: list[dict[str, Any]]
    page_ids: int  # the last page id given (a rejected duplicate keeps its id unused)


def number_pages(
    spark: SparkSession,
    records: DataFrame,
    inputs: Sequence[str],
    keep_html: bool,
    out: str,
    work: str,
    previous: Previous | None = None,
) -> Numbered:
    """Page ids and line numbers from per-split counts, as the local engine numbers them; duplicate
    records (same url, fetch time and bytes as an earlier one) are rejected as locally, and the rejects
    are written to `errors`. A source without a usable record raises NotACrawlDump. After a `previous`
    run, sources and pages are numbered after its own, a record repeating one of its pages is rejected,
    and its rejects are written with these."""
    from pyspark.sql import functions as F

    first_source = previous.n_sources if previous else 0

    chunks = sorted(
        (r["src"], r["file"], r["block_start"], r["n_lines"], r["n_good"], r["n_bad"])
        for r in records.filter(F.col("kind") == "chunk").collect()
    )
    offsets: list[tuple[Any, ...]] = []
    sources: list[dict[str, Any]] = []
    page_start, last_file, line_start = previous.page_ids if previous else 0, None, 0
    for src, file, block, n_lines, n_good, n_bad in chunks:
        if (src, file) != last_file:
            last_file, line_start = (src, file), 0
            sources.append(
                {
                    "source_id": first_source + len(sources) + 1,
                    "path": display_path(file),
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
    # a page copied for a revisit names the page it copies, whose id is known here (`link_revisits`)
    ref_off = off.select(
        F.col("src").alias("ref_src"),
        F.col("file").alias("ref_file"),
        F.col("block_start").alias("ref_block_start"),
        F.col("page_start").alias("ref_page_start"),
    ).filter(F.col("ref_block_start") == 0)
    keyed = keyed.join(ref_off, ["ref_src", "ref_file"], "left").withColumn(
        "extra",
        F.when(
            F.col("ref_page_start").isNotNull(),
            F.regexp_replace(
                "extra",
                F.lit(f'"refers_to_page_id": {arrow.PAGE_ID_LATER}(?=[,}}])'),
                F.concat(
                    F.lit('"refers_to_page_id": '),
                    (F.col("ref_page_start") + F.col("ref_good_idx") + 1).cast("string"),
                ),
            ),
        ).otherwise(F.col("extra")),
    )
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
        "source_id",
        (F.col("line_start") + F.col("idx") + 1).alias("line"),
        F.col("error_kind").alias("kind"),
        "reason",
    )
    # A record that repeats an earlier one (same url, fetch time and bytes) is rejected, as locally.
    slim = pages.select("page_id", "source_id", "line", "url", "fetched_at", "md5", "extra")
    seen = slim if previous is None else slim.unionByName(previous.pages_like(slim))
    first = (
        seen.groupBy("url", "fetched_at", "md5")
        .agg(
            F.count("*").alias("n"),
            F.min("page_id").alias("first_id"),
            F.min_by("line", "page_id").alias("first_line"),
            F.min_by("source_id", "page_id").alias("first_source"),
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
            F.col("f.first_source").alias("first_source"),
            F.col("p.url").alias("url"),
            F.col("p.extra").alias("extra"),
        )
        .persist()
    )
    dup_errors = dups.select(
        "source_id",
        "line",
        F.lit(str(RejectKind.DUPLICATE)).alias("kind"),
        F.concat(
            F.lit(f"{RejectKind.DUPLICATE}: same url, fetched_at and content as line "),
            F.col("first_line").cast("string"),
            # the first in another file, as the local store names it
            F.when(
                F.col("first_source") != F.col("source_id"),
                F.concat(F.lit(" of source "), F.col("first_source").cast("string")),
            ).otherwise(F.lit("")),
            # a web archive record: where it is, as the local store names it
            F.coalesce(
                F.concat(
                    F.lit(" (offset "),
                    F.get_json_object("extra", "$.warc_offset"),
                    F.lit(", "),
                    F.col("url"),
                    F.lit(")"),
                ),
                F.lit(""),
            ),
            F.coalesce(
                F.concat(F.lit(" (in "), F.get_json_object("extra", "$.wacz_member"), F.lit(")")),
                F.lit(""),
            ),
        ).alias("reason"),
    )
    dup_counts = dups.groupBy("source_id").count().collect()
    dropped = dups.select("page_id")
    if sum(n for _, n in dup_counts) <= BROADCAST_DUPLICATES:
        dropped = F.broadcast(dropped)  # the pages (and their texts) stay where they were read
    pages = pages.join(dropped, "page_id", "left_anti")
    pages.write.mode("overwrite").parquet(f"{work}/pages")
    pages = spark.read.parquet(f"{work}/pages")
    path_of = spark.createDataFrame(
        [(s["source_id"], s["path"]) for s in sources], "source_id int, source string"
    )
    errors = errors.unionByName(dup_errors).join(F.broadcast(path_of), "source_id")
    if previous is not None:
        errors = errors.unionByName(previous.errors)
    errors.select("source_id", "source", "line", "kind", "reason").orderBy("source_id", "line").write.mode(
        "overwrite"
    ).parquet(f"{out}/errors")
    for sid, n in dup_counts:
        s = sources[sid - 1 - first_source]
        s["n_loaded"] -= n
        s["n_errors"] += n
    dups.unpersist()
    empty = [s for s in sources if s["n_loaded"] == 0]
    if empty:
        rows = (
            errors.filter(F.col("source_id").isin([s["source_id"] for s in empty]))
            .select("kind")
            .distinct()
            .collect()
        )
        kinds = sorted(r["kind"] for r in rows)
        raise NotACrawlDump(
            f"{empty[0]['path']}: not a crawl dump: no usable record ({', '.join(kinds[:3]) or 'no records'})"
        )
    return Numbered(pages, sources, page_start)


def keep_short_fetches(pages: DataFrame, min_words: int) -> DataFrame:
    """`pages` with the texts a few words short of `min_words` content where a fetch of their page (the same
    canonical URL) reaches it (`short_texts.short_fetch_margin`), as the local store decides them
    (`store.content.SHORT_FETCH_KEYS`): one verdict for a page in all its fetches."""
    from pyspark.sql import functions as F

    ok = F.col("degenerate").isNull() | (F.col("degenerate") == TOO_SHORT)
    floor = min_words - short_fetch_margin(min_words)
    reaching = pages.filter(ok & (F.col("n_words") >= min_words)).select("canonical_url")
    short = pages.filter(ok & (F.col("n_words") >= floor) & (F.col("n_words") < min_words))
    kept = [
        r["exact_key"]
        for r in short.join(reaching, "canonical_url", "left_semi").select("exact_key").distinct().collect()
    ]
    if not kept:
        return pages
    keys = pages.sparkSession.createDataFrame([(k, True) for k in kept], "exact_key string, kept boolean")
    return (
        pages.join(F.broadcast(keys), "exact_key", "left")
        .withColumn("degenerate", F.when(F.col("kept"), F.lit(None)).otherwise(F.col("degenerate")))
        .drop("kept")
        .select(*pages.columns)
    )


def apply_url_rules(pages: DataFrame, config: Config, work: str) -> DataFrame:
    """`pages` with canonical_url and rel_canonical rewritten by the config's URL rules, as the local
    engine rewrites them when it loads the fingerprints; the written `pages` keep the URLs as ingested,
    as the local store does."""
    spark = pages.sparkSession
    urls = pages.select("page_id", "url", "rel_canonical").mapInArrow(
        per_batch(arrow.urls_under_rules, config.url_rules), ddl(arrow.URLS)
    )
    urls.write.mode("overwrite").parquet(f"{work}/urls")
    return pages.drop("canonical_url", "rel_canonical").join(spark.read.parquet(f"{work}/urls"), "page_id")


def fingerprint_units(pages: DataFrame, config: Config, out: str, work: str) -> Units:
    """Units (distinct exact keys of content pages, numbered in key order) and their fingerprints,
    written to `units`. The content pages carry their URLs under the config's URL rules."""
    from pyspark.sql import functions as F

    spark = pages.sparkSession
    content = pages.filter(F.col("degenerate").isNull())
    if config.url_rules:
        content = apply_url_rules(content, config, work)
    # Each content page's text is fingerprinted in the task that read it (a text once per batch), so
    # the texts never cross a shuffle: the units are grouped and numbered on their keys and fingerprints
    # (~0.6 KB a unit against the text's few KB), at the cost of fingerprinting an exact copy in another
    # batch again (5% of the bench crawl's content pages).
    unit_schema = arrow.UNIT_SIMHASH if config.method == "simhash" else arrow.UNIT_MINHASH
    fp_cols = unit_schema.names[2:]
    fps = content.select(F.lit(-1).cast("int").alias("unit_id"), "exact_key", "text").mapInArrow(
        per_batch(arrow.unit_fingerprints, config), ddl(unit_schema)
    )
    per_key = fps.groupBy("exact_key").agg(*(F.any_value(c).alias(c) for c in fp_cols))
    numbered = dense_index(per_key, ["exact_key"], "unit_id")
    numbered.select(F.col("unit_id").cast("int").alias("unit_id"), "exact_key", *fp_cols).write.mode(
        "overwrite"
    ).parquet(f"{out}/units")
    numbered.unpersist()
    units = spark.read.parquet(f"{out}/units")
    page_unit = content.select("page_id", "exact_key", "canonical_url").join(
        units.select("exact_key", "unit_id"), "exact_key"
    )
    return Units(content, units, units.count(), page_unit)


def verified_pairs(
    units: Units, config: Config, work: str, *, touching: DataFrame | None = None
) -> tuple[DataFrame, CandidateStats]:
    """Candidate pairs, verified (exactly, for MinHash with `verify: exact`), down to the loosest
    threshold (a, b, hamming_bits, jaccard, containment); with `touching` (column unit_id) only the
    pairs with one of its units."""
    spark = units.units.sparkSession
    if config.method == "simhash":
        return simhash_pairs(spark, units.units, units.n_units, config, touching=touching)
    pairs, stats = minhash_pairs(spark, units.units, units.n_units, config, touching=touching)
    if config.verify == "exact":
        pairs.write.mode("overwrite").parquet(f"{work}/pairs_estimated")
        pairs = spark.read.parquet(f"{work}/pairs_estimated")
        stats.verified_exact = pairs.count()
        pairs = exact_pairs(spark, pairs, stats.verified_exact, units.content, units.units, config, work)
    return pairs, stats


def find_pairs(units: Units, config: Config, out: str, work: str) -> Pairs:
    """Candidate pairs, verified, down to the loosest threshold; written to `pairs` (`write_pairs`)."""
    pairs, stats = verified_pairs(units, config, work)
    return write_pairs(units, pairs, stats, config, out, work)


def write_pairs(
    units: Units, pairs: DataFrame, stats: CandidateStats, config: Config, out: str, work: str
) -> Pairs:
    """`pairs` written to `pairs` with the first page and URL of each unit."""
    from pyspark.sql import functions as F

    spark = units.units.sparkSession
    pairs.write.mode("overwrite").parquet(f"{work}/pairs")
    pairs = spark.read.parquet(f"{work}/pairs")
    unit_page = units.page_unit.groupBy("unit_id").agg(
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
    if stats.verified_exact:
        stats.rejected_exact = stats.verified_exact - n_pairs
    return Pairs(pairs, n_pairs, stats)


def cluster_pages(units: Units, pairs: Pairs, config: Config, out: str) -> Clusters:
    """Clusters at the threshold: components over units, pages inherit their unit's; cluster ids by
    size then first page, representatives by `config.representative`; written to `clusters`."""
    from pyspark.sql import functions as F

    spark = units.units.sparkSession
    if config.method == "simhash":
        edges = pairs.pairs.filter(F.col("hamming_bits") <= int(config.threshold))
    else:
        edges = pairs.pairs.filter(F.col(config.similarity) >= config.threshold)
    edges = edges.select("a", "b").persist()
    n_edges = edges.count()
    if n_edges:
        labels, rounds = connected_components(edges)
    else:
        labels, rounds = spark.createDataFrame([], "node int, label int"), 0
    unit_ids = units.units.select("unit_id")
    unit_comp = unit_ids.join(labels, unit_ids["unit_id"] == labels["node"], "left").select(
        "unit_id", F.coalesce(F.col("label"), F.col("unit_id")).cast("bigint").alias("comp")
    )
    members = (
        units.page_unit.join(unit_comp, "unit_id")
        .join(units.content.select("page_id", "url", "host", "fetched_at", "rel_canonical"), "page_id")
        .persist()
    )
    sizes = members.groupBy("comp").agg(
        F.count("*").alias("cluster_size"), F.min("page_id").alias("first_page")
    )
    sizes = dense_index(
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
        arrow.representatives_fn(config.representative), ddl(arrow.REPS)
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
    return Clusters(clusters, n_edges, rounds)


def write_pages(pages: DataFrame, units: Units, clusters: Clusters, config: Config, out: str) -> None:
    """The pages with their unit, fingerprint and cluster, written to `pages`."""
    fp_cols = ["simhash"] if config.method == "simhash" else ["minhash"]
    info = clusters.clusters.select("page_id", "unit_id", "cluster_id").join(
        units.units.select("unit_id", "n_shingles", *fp_cols), "unit_id"
    )
    pages.join(info, "page_id", "left").orderBy("page_id").write.mode("overwrite").parquet(f"{out}/pages")
