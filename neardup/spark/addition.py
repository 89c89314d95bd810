"""A crawl added to an earlier `neardup spark` output (`neardup spark NEW --out OUT2 --previous OUT1`):
the new records are ingested, normalized and fingerprinted, and only their units' candidates (against
every earlier unit and among themselves) are looked up and verified, as the local engine's `incremental`
does; the output equals a full run over the earlier inputs then the new ones (tests/test_spark_addition.py).

What the earlier run gives: its pages (their ids, texts and short-fetch verdicts; a new record repeating
one of them is rejected as a duplicate), its units with their fingerprints (renumbered with the new ones
in exact_key order, as a full run numbers them), its pairs (kept, ids renumbered), its errors and sources.
What is computed again over all pages, being global: the short-fetch verdicts, the unit numbering, the
clusters and the rewritten `pages` / `clusters` tables; these read the earlier Parquet once, they do not
normalize or fingerprint it.

Where the new units could change an earlier pair's fate, all pairs are computed again from the stored
fingerprints (still without re-ingesting): a bucket grows past `BUCKET_CAP` with the new units (`pairs.
BucketGrown`; one over it already stays unexpanded), or (SimHash) the unit count makes `choose_r` pick
other tables. A WARC revisit in a
new file is linked only to records of the new files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..candidates import choose_r
from ..config import Config
from ..errors import NeardupError
from . import arrow
from .arrow import ddl, per_batch
from .components import dense_index
from .output import MANIFEST, READABLE_FORMATS
from .pairs import BucketGrown
from .session import exists, read_text
from .stages import Pairs, Previous, Units, apply_url_rules, verified_pairs, write_pairs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Columns `write_pages` adds to a page; the rest is the page as numbered.
_ADDED_TO_PAGES = {"unit_id", "cluster_id", "n_shingles", "simhash", "minhash"}


def read_previous(spark: SparkSession, path: str, config: Config, keep_html: bool) -> Previous:
    """The finished run at `path`; NeardupError when there is none or it ran under other settings."""
    import json

    prev = path.rstrip("/")
    if not exists(spark, f"{prev}/{MANIFEST}"):
        raise NeardupError(f"--previous {path}: not a finished `neardup spark` output (no {MANIFEST})")
    manifest = json.loads(read_text(spark, f"{prev}/{MANIFEST}"))
    if manifest.get("neardup_spark") not in READABLE_FORMATS or "page_ids" not in manifest:
        raise NeardupError(
            f"--previous {path} was written by a neardup that cannot add to it: run all inputs again"
        )
    if manifest["config"] != config.to_dict():
        differ = sorted(k for k, v in config.to_dict().items() if manifest["config"].get(k) != v)
        raise NeardupError(
            f"--previous {path} ran under other settings ({', '.join(differ)}): "
            f"pass its dupcheck.yaml with --config, or run all inputs again"
        )
    if bool(manifest["keep_html"]) != keep_html:
        raise NeardupError(f"--previous {path}: --keep-html must be as in that run ({manifest['keep_html']})")
    pages = spark.read.parquet(f"{prev}/pages")
    pages = pages.select(*(c for c in pages.columns if c not in _ADDED_TO_PAGES))
    return Previous(
        prev,
        manifest,
        pages,
        spark.read.parquet(f"{prev}/units"),
        spark.read.parquet(f"{prev}/pairs"),
        spark.read.parquet(f"{prev}/errors"),
    )


@dataclass(slots=True)
class AddedUnits:
    units: Units  # all units, numbered as a full run numbers them
    new: DataFrame  # unit_id of the units no earlier page has
    n_new: int
    renumbered: DataFrame  # old_id, unit_id of the earlier units
    all_pairs_again: bool = False  # set by `find_added_pairs` when it could not add (module doc)


def fingerprint_added_units(
    pages: DataFrame, previous: Previous, config: Config, out: str, work: str
) -> AddedUnits:
    """`run.fingerprint_units` fingerprinting only the texts the earlier run has no unit for; all units
    numbered in exact_key order and written to `units`."""
    from pyspark.sql import functions as F

    spark = pages.sparkSession
    content = pages.filter(F.col("degenerate").isNull())
    if config.url_rules:
        content = apply_url_rules(content, config, work)
    unit_schema = arrow.UNIT_SIMHASH if config.method == "simhash" else arrow.UNIT_MINHASH
    new_texts = (
        content.select("exact_key", "text")
        .join(previous.units.select("exact_key"), "exact_key", "left_anti")
        .groupBy("exact_key")
        .agg(F.any_value("text").alias("text"))
    )
    new_texts.select(F.lit(-1).cast("int").alias("unit_id"), "exact_key", "text").mapInArrow(
        per_batch(arrow.unit_fingerprints, config), ddl(unit_schema)
    ).write.mode("overwrite").parquet(f"{work}/new_units")
    new_fp = spark.read.parquet(f"{work}/new_units").drop("unit_id")
    fps = previous.units.drop("unit_id").unionByName(new_fp)
    numbered = dense_index(fps.select("exact_key"), ["exact_key"], "unit_id")
    numbered.join(fps, "exact_key").select(
        F.col("unit_id").cast("int").alias("unit_id"), *unit_schema.names[1:]
    ).write.mode("overwrite").parquet(f"{out}/units")
    numbered.unpersist()
    units = spark.read.parquet(f"{out}/units")
    page_unit = content.select("page_id", "exact_key", "canonical_url").join(
        units.select("exact_key", "unit_id"), "exact_key"
    )
    new = units.join(new_fp.select("exact_key"), "exact_key", "left_semi").select("unit_id")
    renumbered = previous.units.select("exact_key", F.col("unit_id").alias("old_id")).join(
        units.select("exact_key", "unit_id"), "exact_key"
    )
    return AddedUnits(Units(content, units, units.count(), page_unit), new, new_fp.count(), renumbered)


def earlier_pairs(previous: Previous, renumbered: DataFrame) -> DataFrame:
    """The earlier run's pairs under the new unit ids (a < b)."""
    from pyspark.sql import functions as F

    ids = renumbered.select("old_id", "unit_id")
    ra = ids.select(F.col("old_id").alias("a"), F.col("unit_id").alias("new_a"))
    rb = ids.select(F.col("old_id").alias("b"), F.col("unit_id").alias("new_b"))
    return (
        previous.pairs.select("a", "b", "hamming_bits", "jaccard", "containment")
        .join(F.broadcast(ra) if previous.n_units < 1 << 20 else ra, "a")
        .join(F.broadcast(rb) if previous.n_units < 1 << 20 else rb, "b")
        .select(
            F.least("new_a", "new_b").alias("a"),
            F.greatest("new_a", "new_b").alias("b"),
            "hamming_bits",
            "jaccard",
            "containment",
        )
    )


def _same_columns(pairs: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    return pairs.select(
        F.col("a").cast("int"),
        F.col("b").cast("int"),
        F.col("hamming_bits").cast("smallint"),
        F.col("jaccard").cast("double"),
        F.col("containment").cast("double"),
    )


def find_added_pairs(added: AddedUnits, previous: Previous, config: Config, out: str, work: str) -> Pairs:
    """The earlier pairs plus the new units' verified pairs, written as `run.find_pairs` writes them;
    all pairs from the stored fingerprints where the new units could change an earlier pair (module doc).
    The candidate statistics are those of the buckets looked up."""
    units = added.units
    same_tables = config.method != "simhash" or choose_r(units.n_units, config.simhash_max_bits) == choose_r(
        previous.n_units, config.simhash_max_bits
    )
    if same_tables:
        try:
            return _add_pairs(added, previous, config, out, work)
        except BucketGrown:
            pass
    added.all_pairs_again = True
    pairs, stats = verified_pairs(units, config, work)
    return write_pairs(units, pairs, stats, config, out, work)


def _add_pairs(added: AddedUnits, previous: Previous, config: Config, out: str, work: str) -> Pairs:
    spark = added.units.units.sparkSession
    new, stats = verified_pairs(added.units, config, work, touching=added.new)
    new = _same_columns(new)
    new.write.mode("overwrite").parquet(f"{work}/pairs_added")
    new = spark.read.parquet(f"{work}/pairs_added")
    n_new = new.count()
    pairs = new.unionByName(_same_columns(earlier_pairs(previous, added.renumbered)))
    result = write_pairs(added.units, pairs, stats, config, out, work)
    if stats.verified_exact:
        result.stats.rejected_exact = stats.verified_exact - n_new
    return result
