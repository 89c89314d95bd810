"""`link_revisits`: WARC revisits across the input files of one run, as the local engine links them when it
ingests the files one after the other into one database (`neardup.revisits`).

A revisit whose record is not in its file (a de-duplicating crawl writes the body once, in an earlier
file) comes out of the workers as a `kind = revisit` row in its place among its file's good records. It is
joined on its payload digest with the pages of the files before its own (in page-id order) and takes the
one `Store.page_by_payload` would take: at its WARC-Refers-To-Target-URI, then at its WARC-Refers-To-Date,
then the first. `arrow.linked_revisits` makes it a page copied from that one, or the local engine's
"revisit without its record" reject; the splits' good records are numbered again without the rejects.

A page that `number_pages` rejects as a duplicate record is no candidate, as the local lookup does not find
a page its file's ingest rejected.

Approximate where the local lookup sees what this join does not: a copied page of an earlier file is not a
candidate (the local store has its digest too; it wins only when it alone is at the refers-to URL or date),
nor does it make a later record a duplicate here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import Config
from . import arrow
from .arrow import ddl, per_batch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SPLIT = ["src", "file", "block_start"]


def link_revisits(records: DataFrame, config: Config, keep_html: bool, work: str) -> DataFrame:
    """`records` with each `kind = revisit` row made a page or a reject (`arrow.linked_revisits`), the good
    records of the splits holding a reject numbered again (good_idx, and the ref_good_idx naming them), and
    their chunk counts moved; `records` itself when there is no such row."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = records.sparkSession
    if records.filter(F.col("kind") == "revisit").limit(1).count() == 0:
        return records
    r = records.filter(F.col("kind") == "revisit").alias("r")
    pages = records.filter(F.col("kind") == "page")
    # A page repeating an earlier one (same url, fetch time and bytes) is rejected by `number_pages` as the
    # local engine rejects it after its file, whose lookup then finds the other pages of the digest only.
    first = Window.partitionBy("url", "fetched_at", "md5").orderBy(*SPLIT, "good_idx")
    repeats = (
        pages.withColumn("_nth", F.row_number().over(first))
        .filter(F.col("_nth") > 1)
        .select(*SPLIT, "good_idx")
    )
    c = (
        pages.filter(F.col("payload_digest").isNotNull() & F.col("html").isNotNull())
        .join(repeats, [*SPLIT, "good_idx"], "left_anti")
        .select("src", "file", "good_idx", "url", "fetched_at", "status", "extra", "html", "payload_digest")
        .alias("c")
    )
    earlier = (F.col("c.src") < F.col("r.src")) | (
        (F.col("c.src") == F.col("r.src")) & (F.col("c.file") < F.col("r.file"))
    )
    joined = r.join(c, (F.col("r.payload_digest") == F.col("c.payload_digest")) & earlier, "left")
    preference = Window.partitionBy("r.src", "r.file", "r.idx").orderBy(
        (F.col("r.refers_to_url").isNotNull() & ~F.col("c.url").eqNullSafe(F.col("r.refers_to_url"))).asc(),
        (
            F.col("r.refers_to_at").isNotNull() & ~F.col("c.fetched_at").eqNullSafe(F.col("r.refers_to_at"))
        ).asc(),
        F.col("c.src").asc(),
        F.col("c.file").asc(),
        F.col("c.good_idx").asc(),
    )
    chosen = (
        joined.withColumn("_rank", F.row_number().over(preference))
        .filter(F.col("_rank") == 1)
        .select(
            "r.src",
            "r.file",
            "r.block_start",
            "r.idx",
            "r.good_idx",
            "r.extra",
            "r.block",
            F.col("c.html").alias("orig_html"),
            F.col("c.status").alias("orig_status"),
            F.col("c.extra").alias("orig_extra"),
            F.col("c.src").alias("ref_src"),
            F.col("c.file").alias("ref_file"),
            F.col("c.good_idx").alias("ref_good_idx"),
        )
    )
    linked = chosen.mapInArrow(per_batch(arrow.linked_revisits, config, keep_html), ddl(arrow.RECORD))
    linked.write.mode("overwrite").parquet(f"{work}/revisits")
    linked = spark.read.parquet(f"{work}/revisits")

    # A revisit rejected leaves a gap among its split's good records: those after it move down.
    failed = {
        (row["src"], row["file"], row["block_start"]): row["n"]
        for row in linked.filter(F.col("kind") == "error")
        .groupBy(*SPLIT)
        .count()
        .withColumnRenamed("count", "n")
        .collect()
    }
    pages = records.filter(F.col("kind") == "page").unionByName(linked.filter(F.col("kind") == "page"))
    if failed:
        gaps = spark.createDataFrame(
            [(*k, n) for k, n in failed.items()], "src int, file string, block_start bigint, n_failed bigint"
        )
        in_gaps = pages.join(F.broadcast(gaps.select(*SPLIT)), SPLIT, "left_semi")
        renumbered = in_gaps.withColumn(
            "new_idx", F.row_number().over(Window.partitionBy(*SPLIT).orderBy("good_idx")) - 1
        )
        moved = renumbered.select(
            F.col("src").alias("ref_src"),
            F.col("file").alias("ref_file"),
            F.col("good_idx").alias("ref_good_idx"),
            F.col("new_idx").alias("ref_new_idx"),
        )
        pages = (
            pages.join(F.broadcast(gaps.select(*SPLIT)), SPLIT, "left_anti")
            .unionByName(renumbered.withColumn("good_idx", F.col("new_idx")).drop("new_idx"))
            .join(moved, ["ref_src", "ref_file", "ref_good_idx"], "left")
            .withColumn("ref_good_idx", F.coalesce(F.col("ref_new_idx"), F.col("ref_good_idx")))
            .drop("ref_new_idx")
        )
        chunks = (
            records.filter(F.col("kind") == "chunk")
            .join(F.broadcast(gaps), SPLIT, "left")
            .withColumn("n_good", F.col("n_good") - F.coalesce(F.col("n_failed"), F.lit(0)))
            .withColumn("n_bad", F.col("n_bad") + F.coalesce(F.col("n_failed"), F.lit(0)))
            .drop("n_failed")
        )
    else:
        chunks = records.filter(F.col("kind") == "chunk")
    others = records.filter(F.col("kind") == "error").unionByName(linked.filter(F.col("kind") == "error"))
    out = pages.unionByName(chunks).unionByName(others).select(*arrow.RECORD.names)
    out.write.mode("overwrite").parquet(f"{work}/records_linked")
    return spark.read.parquet(f"{work}/records_linked")
