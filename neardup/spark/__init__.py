"""The same audit on Apache Spark, for crawls that do not fit one machine: `neardup spark`.

Every per-record step calls the local engine's own functions, batched through Arrow (`mapInArrow`,
the Arrow sibling of `mapInPandas`: no pandas round trip for raw bytes and timestamps):
`batches.ingest_batch` (= `ingest.validate` + `batches.text_row`) and `batches.fingerprint_batch`
(= `shingle_hashes` + `simhash_many` / `minhash_many`). Only the global steps are Spark-native:

- page ids: the local engine numbers good records 1, 2, ... in input order. Here each input split
  counts its own lines and good records, the driver turns those counts into offsets, so page ids and
  line numbers equal the local engine's without a global sort.
- units (one per distinct `exact_key` of content pages), numbered in `exact_key` order as locally.
- URLs: the config's `url_rules` rewrite the content pages' canonical URL and rel=canonical in the
  workers with the local engine's `analysis.ruled_urls`; the written `pages` keep them as ingested.
- candidates: SimHash pigeonhole tables (`candidates.block_masks`, `candidates.choose_r`) and MinHash
  LSH bands (`candidates.lsh_params(lsh_threshold(...))`) become a groupBy on (table, key); buckets
  above `candidates.BUCKET_CAP` members are counted, not expanded; pairs are enumerated inside a
  bucket with `candidates.pairs_in_runs` and verified with the local estimates. Under `partial_copies`
  the size-class tables of `candidates.containment_lsh_pairs` (`size_class_tables`, keys from
  `size_class_keys` in the workers) are a groupBy on (table, bucket) too, their (query, indexed) pairs
  enumerated with `candidates.cross_pairs`. The pair set equals the local engine's (tests/test_spark.py
  checks it).
- clusters: connected components by alternating large-star / small-star on DataFrames, checkpointed
  every few rounds (the driver finishes once the edges fit it); cluster ids and representatives (`clusters.pick_representatives`)
  follow the local rule.

Output under DIR (Parquet): `pages`, `units`, `pairs`, `clusters`, `errors`, plus `dupcheck.yaml` and
`_MANIFEST.json` (written last: a directory without it is not a finished run). `neardup open DIR`
makes a DuckDB file whose tables are views over these files, for the app and `neardup report`.

Modules: `session` (the SparkSession, files, inputs), `pyenv` (the executors' Python environment,
packed and cached for `spark.archives`), `probe` (Java, the master and an executor checked before any
work), `arrow` (the work in the Python workers, one
`mapInArrow` wrapper), `pairs` (candidates as joins), `components` (dense numbering, connected
components), `run` (`run_spark`, one function per named, timed stage), `addition` (`--previous`: a
crawl added to an earlier output, at the new records' cost), `output` (report numbers, manifest,
`neardup open`).
"""

from .components import connected_components
from .output import MANIFEST, check_setting, open_output, read_manifest
from .run import run_spark
from .session import spark_session

__all__ = [
    "MANIFEST",
    "check_setting",
    "connected_components",
    "open_output",
    "read_manifest",
    "run_spark",
    "spark_session",
]
