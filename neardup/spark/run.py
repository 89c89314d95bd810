"""`run_spark`: the audit as named Spark stages (`stages`, and `addition` when a crawl is added to an
earlier output), each timed and reported as it ends, then `finish`: the report numbers, `dupcheck.yaml`
and the manifest, last.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..errors import ConfigError, NeardupError, NotACrawlDump
from ..stages.base import Log, StageClock
from .output import FORMAT_VERSION, MANIFEST, OUTPUTS, report_numbers_of, write_output_files, written_at
from .revisits import link_revisits
from .session import delete, exists, hadoop_path
from .stages import (
    cluster_pages,
    find_pairs,
    fingerprint_units,
    ingest_and_normalize,
    keep_short_fetches,
    number_pages,
    write_pages,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def run_spark(
    spark: SparkSession,
    inputs: Sequence[str],
    out_dir: str,
    config: Config,
    *,
    input_format: str = "auto",
    keep_html: bool = False,
    overwrite: bool = False,
    previous: str | None = None,
    log: Log | None = None,
) -> dict[str, Any]:
    """Ingest, normalize, fingerprint, pair and cluster `inputs` under `config`; write Parquet under
    `out_dir` and return the manifest. Same page ids, fingerprints, pairs and clusters as the local
    engine on the same files (MinHash similarities are estimates there and here alike). With `previous`
    (an earlier run's output), `inputs` are added to it: the output is that of a run over its inputs then
    these, at the cost of the new records (`addition`)."""
    if input_format not in ("auto", "jsonl", "parquet", "warc"):
        raise ConfigError(f"input format must be auto, jsonl, parquet or warc, not {input_format!r}")
    if not inputs:
        raise NotACrawlDump("no input given")
    out = out_dir.rstrip("/")
    if exists(spark, out) and not overwrite:
        fs, p = hadoop_path(spark, out)
        if len(fs.listStatus(p)):
            raise NeardupError(f"{out_dir} exists and is not empty: choose another --out or pass --overwrite")
    delete(spark, f"{out}/{MANIFEST}")  # an overwritten run is unfinished until the new manifest lands
    work, ckpt = f"{out}/_work", f"{out}/_checkpoints"
    spark.sparkContext.setCheckpointDir(ckpt)
    clock = StageClock(log or (lambda msg: None))
    prev = None
    if previous is not None:
        from .addition import find_added_pairs, fingerprint_added_units, read_previous

        prev = read_previous(spark, previous, config, keep_html)
    try:
        with clock.stage("ingest+normalize"):
            records = ingest_and_normalize(spark, inputs, input_format, config, keep_html, work)
        with clock.stage("revisits across files"):
            records = link_revisits(records, config, keep_html, work)
        with clock.stage("page ids"):
            numbered = number_pages(spark, records, inputs, keep_html, out, work, prev)
            pages, sources = numbered.pages, numbered.sources
            if prev is not None:
                pages = pages.unionByName(prev.pages.select(*pages.columns))
            pages = keep_short_fetches(pages, config.min_words)
        if prev is None:
            with clock.stage("fingerprints"):
                units = fingerprint_units(pages, config, out, work)
            with clock.stage("candidates"):
                pairs = find_pairs(units, config, out, work)
        else:
            with clock.stage("fingerprints"):
                added = fingerprint_added_units(pages, prev, config, out, work)
                units = added.units
            with clock.stage("candidates"):
                pairs = find_added_pairs(added, prev, config, out, work)
            sources = [*prev.manifest["sources"], *sources]
            inputs = [*prev.manifest["inputs"], *inputs]
        with clock.stage("clusters"):
            clusters = cluster_pages(units, pairs, config, out)
        with clock.stage("write pages"):
            write_pages(pages, units, clusters, config, out)
        with clock.stage("report numbers"):
            numbers = report_numbers_of(
                spark.read.parquet(f"{out}/pages"), clusters.clusters, units.n_units, clusters.n_edges
            )
        manifest = {
            "neardup_spark": FORMAT_VERSION,
            "config": config.to_dict(),
            "norm_key": config.norm_key,
            "fingerprint_key": config.fingerprint_key,
            "inputs": list(inputs),
            "keep_html": keep_html,
            "sources": sources,
            "page_ids": numbered.page_ids,
            "counts": {
                "records": sum(s["n_records"] for s in sources),
                "pages": numbers["total_pages"],
                "errors": sum(s["n_errors"] for s in sources),
                "units": units.n_units,
                "pairs": pairs.n_pairs,
                "pairs_at_threshold": clusters.n_edges,
                "clusters": numbers["unique_pages"],
            },
            "numbers": numbers,
            "candidate_stats": pairs.stats.as_dict(),
            "timings_s": clock.total(),
            "spark": {
                "version": spark.version,
                "master": spark.sparkContext.master,
                "cc_rounds": clusters.rounds,
                "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
            },
            "outputs": {name: name for name in OUTPUTS},
            **(
                {
                    "previous": {
                        "path": prev.path,
                        "pages": prev.page_ids,
                        "new_units": added.n_new,
                        "all_pairs_again": added.all_pairs_again,
                    }
                }
                if prev is not None
                else {}
            ),
            "written_at": written_at(),
        }
        write_output_files(spark, out, config, manifest)
        return manifest
    finally:
        spark.catalog.clearCache()
        delete(spark, work)
        delete(spark, ckpt)
