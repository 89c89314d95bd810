"""A run's output: the report numbers from its written tables, the manifest (written last: a directory
without it is not a finished run), and opening the output as a DuckDB file for the app and reports."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from ..analysis import report_numbers
from ..candidate_stats import upgrade_stored_stats
from ..config import Config, dump_config
from ..errors import NeardupError
from .session import display_path, write_text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MANIFEST = "_MANIFEST.json"
OUTPUTS = ("pages", "units", "pairs", "clusters", "errors")
FORMAT_VERSION = 2
# The formats `neardup open` reads; 1 has no `kind` column in `errors` (it is read from the reason).
READABLE_FORMATS = (1, 2)


class SparkManifest(TypedDict):
    """A finished run's manifest (`run_spark` writes it last). An older version's (format 1) holds the
    setting and the candidate statistics in its own form, which `Config.from_dict` and
    `upgrade_stored_stats` read."""

    neardup_spark: int  # FORMAT_VERSION
    config: Mapping[str, Any]  # `Config.to_dict`
    norm_key: str
    fingerprint_key: str
    inputs: list[str]
    keep_html: NotRequired[bool]
    sources: list[dict[str, Any]]  # the `sources` rows of the run's inputs
    page_ids: NotRequired[int]  # the last page id given (`--previous` numbers the added pages after it)
    counts: dict[str, int | float]  # records, pages, errors, units, pairs, pairs_at_threshold, clusters
    numbers: dict[str, int | float]  # the report numbers (`report_numbers_of`)
    candidate_stats: Mapping[str, Any]  # `CandidateStats.as_dict`
    timings_s: dict[str, float]  # by stage, and the total
    spark: dict[str, object]  # version, master, connected-component rounds, shuffle partitions
    outputs: dict[str, str]
    previous: NotRequired[dict[str, Any]]  # a run that added to an earlier one (`--previous`): that run
    written_at: str


def report_numbers_of(
    pages: DataFrame, clusters: DataFrame, n_units: int, n_edges: int
) -> dict[str, int | float]:
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


def write_output_files(spark: SparkSession, out: str, config: Config, manifest: Mapping[str, Any]) -> None:
    """The setting (`dupcheck.yaml`, to replay or audit the run) and the manifest, last."""
    write_text(spark, f"{out}/dupcheck.yaml", dump_config(config))
    write_text(spark, f"{out}/{MANIFEST}", json.dumps(manifest, indent=2, default=str) + "\n")


def written_at() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- the output, audited locally ---------------------------------------------------------------
def read_manifest(out_dir: str | Path) -> SparkManifest:
    """The manifest of a finished run (NeardupError if the directory holds none)."""
    path = Path(display_path(str(out_dir))) / MANIFEST
    if not path.is_file():
        raise NeardupError(
            f"{out_dir} is not a finished `neardup spark` output (no {MANIFEST}); "
            "a run that failed part-way leaves none"
        )
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("neardup_spark") not in READABLE_FORMATS:
        raise NeardupError(
            f"{out_dir} was written by an incompatible neardup (format {manifest.get('neardup_spark')})"
        )
    return manifest


def open_output(out_dir: str | Path, db_path: str | Path, *, copy: bool = False) -> SparkManifest:
    """A DuckDB file over a Spark run's Parquet: views read the files in place (`copy=True` loads them
    into tables instead, so other fingerprint settings of the same normalization can be computed
    locally). Returns the manifest."""
    from ..store import Store

    directory = Path(display_path(str(out_dir))).resolve()
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
            n_units=int(manifest["counts"]["units"]),
            n_pairs=int(manifest["counts"]["pairs"]),
            stats=upgrade_stored_stats(manifest["candidate_stats"]),  # a manifest of an older version
            seconds=sum(manifest["timings_s"].get(k, 0.0) for k in ("fingerprints", "candidates")),
            sources=manifest["sources"],
            has_html=bool(manifest.get("keep_html")),
            copy=copy,
            error_kinds=manifest["neardup_spark"] >= 2,
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
