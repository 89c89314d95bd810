"""The store-driven pipeline, stage by stage: ingest -> texts -> sketches -> fingerprints + verified
candidate pairs (`neardup.stages`).

Every stage reads and writes through the `Store`, hands its batches to workers (`neardup.batches`), and is
computed once per setting: texts per normalization, fingerprints and pairs per `Config.fingerprint_key`.
Clustering at a threshold and the report numbers are `neardup.analysis`.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from .config import Config
from .fingerprint_set import COVERAGE, FingerprintSet
from .spill import duckdb_memory
from .stages.base import BATCH, INSERT_ROWS, PARALLEL_MIN, Progress, StageClock, no_progress
from .stages.buckets import ensure_capped_buckets
from .stages.fingerprints import added_since, compute_fingerprints, current_fingerprints
from .stages.incremental import extend_fingerprints
from .stages.ingest import INSERT_BYTES, FileSummary, SourceLoad, ingest, ingest_file
from .stages.pairs import UnitPairs, find_pairs, verify_exact
from .stages.sketches import ensure_sketches
from .stages.texts import ensure_texts
from .stages.urls import ensure_parsed_urls
from .store import Store

__all__ = [
    "BATCH",
    "COVERAGE",
    "INSERT_BYTES",
    "INSERT_ROWS",
    "PARALLEL_MIN",
    "SAMPLE_CRAWL",
    "FileSummary",
    "FingerprintSet",
    "Progress",
    "SourceLoad",
    "StageClock",
    "UnitPairs",
    "ensure_capped_buckets",
    "ensure_fingerprints",
    "ensure_parsed_urls",
    "fingerprint_plan",
    "ensure_sketches",
    "ensure_texts",
    "find_pairs",
    "ingest",
    "ingest_file",
    "no_progress",
    "verify_exact",
]

# The bundled sample crawl (3,000 synthetic pages with ground truth): package data (neardup/sample_data).
SAMPLE_CRAWL = Path(__file__).resolve().parent / "sample_data" / "crawl.jsonl.gz"


def ensure_fingerprints(
    store: Store,
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    clock: StageClock | None = None,
) -> FingerprintSet:
    """Fingerprints and verified candidate pairs for `config` (cached per `config.fingerprint_key`): the
    stored set when it covers the pages there are, else the texts of new pages normalized and the stored set
    extended with their units, else the set computed over every unit. `clock` times the stages that run.

    When they are stored already this only reads (an on-demand store opens the file read-only)."""
    cached = current_fingerprints(store, config)
    if cached is not None:
        return cached
    clock = clock or StageClock()
    with store.writing(), ExitStack() as within:
        if config.memory_limit_bytes is not None:
            # the reads before the units' (texts, counts, coverage) keep to it as well: a million pages'
            # blocks they scan would stay cached up to DuckDB's own limit
            within.enter_context(store.duckdb_memory_at_most(duckdb_memory(config.memory_limit_bytes)))
        stored = store.fingerprint_set(config.fingerprint_key)
        since = added_since(store, stored) if stored is not None else None
        with clock.stage("texts"):
            ensure_texts(store, config, progress=progress, jobs=jobs, since=-1 if since is None else since)
        cached = current_fingerprints(store, config)
        if cached is None:
            with clock.stage("extend fingerprints"):
                cached = extend_fingerprints(store, config, progress=progress, jobs=jobs)
        if cached is not None:
            return cached
        with clock.stage("fingerprints"):
            return compute_fingerprints(store, config, progress=progress, jobs=jobs, clock=clock)


def fingerprint_plan(store: Store, config: Config) -> list[str]:
    """The stages `ensure_fingerprints(store, config)` reports progress of, in order, as they stand (their
    names as the progress calls them): none when the set is stored; "normalize" where pages have no text
    under the setting's normalization, "fingerprint" (the sketches) where texts have no sketch under its
    shingle size, then "candidates", "verify" (MinHash with exact verification) and "save". A set that is
    extended with new pages (`extend_fingerprints`) reports its own stages; the plan is then approximate."""
    if current_fingerprints(store, config) is not None:
        return []
    with store.reading():
        plan = ["normalize"] if store.count_pages_without_text(config.norm_key) else []
        if plan or store.count_unsketched(config.norm_key, config.sketch_key, min_words=config.min_words):
            plan.append("fingerprint")
    plan.append("candidates")
    if config.method == "minhash" and config.verify == "exact":
        plan.append("verify")
    return [*plan, "save"]
