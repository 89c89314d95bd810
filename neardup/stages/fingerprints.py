"""The fingerprints stage: the units (distinct content texts) of a setting with their fingerprints, and their
verified candidate pairs, stored once per `Config.fingerprint_key` as a `FingerprintSet`.

`current_fingerprints` says whether the stored set covers the pages there are; `compute_fingerprints`
makes it over every unit; `stages.incremental.extend_fingerprints` adds the units of pages loaded since.
`engine.ensure_fingerprints` chooses among them.
"""

from __future__ import annotations

import os
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..batches import signature_matrix
from ..config import Config
from ..fingerprint_set import FingerprintSet, stored_stats
from ..spill import SpillDir, SpillPlan, out_of_core_limit
from ..store import Store, UnitsFile
from .base import Progress, StageClock, no_progress
from .pairs import SpilledUnits, find_pairs
from .sketches import ensure_sketches


def added_since(store: Store, fingerprint_set: FingerprintSet) -> int | None:
    """The last page id a stored fingerprint set covers, when the pages up to it are the ones it was made
    from (pages were only added since: their ids are greater); None when the set does not say (stored by an
    earlier version, or by a Spark run opened as a copy) or a page it covered is gone."""
    coverage = fingerprint_set.coverage
    if coverage is None or store.pages_after(coverage) is None:
        return None
    return int(coverage["last_page_id"])


def current_fingerprints(store: Store, config: Config) -> FingerprintSet | None:
    """The stored fingerprint set of `config`, if every page has its text and the set covers every text
    (a dump loaded after the fingerprints were computed brings new texts: the set is then extended with
    them, `stages.incremental.extend_fingerprints`, or computed again where it cannot). A set that records
    the pages it covers is current when no page came or went since; one without is checked by counting the
    texts and units."""
    with store.reading():
        cached = store.fingerprint_set(config.fingerprint_key)
        if cached is None:
            return None
        if cached.coverage is not None:
            return cached if store.pages_after(cached.coverage) == 0 else None
        if store.count_pages_without_text(config.norm_key):
            return None
        return (
            cached
            if cached.n_units == store.count_units(config.norm_key, min_words=config.min_words)
            else None
        )


def compute_fingerprints(
    store: Store,
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    clock: StageClock | None = None,
) -> FingerprintSet:
    """The fingerprint set of `config` over every unit, stored in place of any before. Every page has its
    text (`stages.texts.ensure_texts`, under the same `store.writing()` lease)."""
    clock = clock or StageClock()
    t0 = time.perf_counter()
    coverage = store.page_coverage()
    with clock.stage("sketches"):
        ensure_sketches(store, config, progress=progress, jobs=jobs)
    n_units = store.count_units(config.norm_key, min_words=config.min_words)
    limit = out_of_core_limit(n_units, config.memory_limit_bytes)
    with ExitStack() as spilling:
        with clock.stage("candidates"):
            progress("candidates", 0, 1)
            units: pd.DataFrame | UnitsFile
            if limit is None:
                units = store.unit_sketches(
                    config.norm_key,
                    config.sketch_key,
                    with_minhash=config.method == "minhash",
                    min_words=config.min_words,
                )
                units.insert(0, "unit_id", np.arange(len(units), dtype=np.int32))
                pairs = find_pairs(store, config, units, progress=progress, jobs=jobs)
                units["minhash" if config.method == "simhash" else "simhash"] = None
            else:
                plan = SpillPlan.for_limit(limit, config.num_perm)
                spilling.enter_context(store.duckdb_memory_at_most(plan.duckdb_memory))
                spill = spilling.enter_context(SpillDir(spill_folder(store)))
                spilled, units = spill_units(store, config, spill, plan, n_units=n_units)
                pairs = find_pairs(store, config, spilled, progress=progress, jobs=jobs)
                clock.say(f"out of core: {spill.bytes_used() / 2**20:,.0f} MB on disk in {spill.path}")
            progress("candidates", 1, 1)
        progress("save", 0, 1)
        store.save_fingerprints(
            config.fingerprint_key,
            norm_key=config.norm_key,
            method=config.method,
            shingle_size=config.shingle_size,
            units=units,
            pairs=pairs.frame(),
            stats=stored_stats(pairs.stats, coverage),
            seconds=time.perf_counter() - t0,
        )
    saved = store.fingerprint_set(config.fingerprint_key)
    assert saved is not None
    progress("save", 1, 1)
    return saved


def spill_folder(store: Store) -> Path | None:
    """Where the out-of-core files go: beside the database, as DuckDB's own spill (None: the system's
    temporary folder, for a database without a writable folder)."""
    folder = Path(store.path).resolve().parent
    return folder if os.access(folder, os.W_OK) else None


def spill_units(
    store: Store, config: Config, spill: SpillDir, plan: SpillPlan, *, n_units: int = 0
) -> tuple[SpilledUnits, UnitsFile]:
    """The units of `config` read from the store a batch at a time (`unit_sketch_batches`, exact-key order):
    unit id i is row i of the stream, of every array of the `SpilledUnits` (signatures and exact keys
    written to `spill`) and of the `UnitsFile` the store saves (the rows `unit_sketches` gives a full
    computation, signatures kept for MinHash, fingerprints for SimHash). The store sorts them a range of
    exact keys at a time (`SpillPlan.sort_rows` of the `n_units` expected in each)."""
    minhash = config.method == "minhash"
    keys = spill.array("exact-keys", "S64")
    sigs = spill.array("signatures", np.uint32, (config.num_perm,)) if minhash else None
    n_shingles: list[np.ndarray] = []
    simhash: list[np.ndarray] = []
    units_path = spill.path / "units.parquet"
    with pq.ParquetWriter(units_path, UNIT_ROWS) as rows:
        for batch in store.unit_sketch_batches(
            config.norm_key,
            config.sketch_key,
            plan.read_rows,
            with_minhash=minhash,
            min_words=config.min_words,
            key_ranges=max(1, -(-n_units // plan.sort_rows)),
        ):
            first, m = keys.rows, batch.num_rows
            exact_keys = batch.column("exact_key")
            batch_keys = np.array(exact_keys.to_pylist(), dtype="S")
            if batch_keys.itemsize > 64:  # an S64 array would cut it short
                raise ValueError(
                    f"an exact key of {batch_keys.itemsize} characters: SHA-256 hex keys have 64"
                )
            keys.append(batch_keys)
            counts = batch.column("n_shingles").to_numpy().astype(np.int32)
            n_shingles.append(counts)
            if sigs is not None:
                sigs.append(signature_matrix(config.num_perm, batch.column("minhash")))
            else:
                simhash.append(batch.column("simhash").to_numpy().astype(np.uint64))
            rows.write_table(
                pa.table(
                    [
                        pa.array(np.arange(first, first + m, dtype=np.int64), pa.int32()),
                        exact_keys.cast(pa.string()),
                        pa.array(counts, pa.int32()),
                        pa.nulls(m, pa.uint64()) if minhash else pa.array(simhash[-1], pa.uint64()),
                        batch.column("minhash").cast(pa.binary()) if minhash else pa.nulls(m, pa.binary()),
                    ],
                    schema=UNIT_ROWS,
                )
            )
    spilled = SpilledUnits(
        exact_keys=keys.read(),
        n_shingles=np.concatenate(n_shingles) if n_shingles else np.empty(0, np.int32),
        simhash=None if minhash else (np.concatenate(simhash) if simhash else np.empty(0, np.uint64)),
        signature_file=sigs,
        spill=spill,
        plan=plan,
    )
    return spilled, UnitsFile(str(units_path), keys.rows)


# The `units` table's columns, as the out-of-core step writes them.
UNIT_ROWS = pa.schema(
    [
        ("unit_id", pa.int32()),
        ("exact_key", pa.string()),
        ("n_shingles", pa.int32()),
        ("simhash", pa.uint64()),
        ("minhash", pa.binary()),
    ]
)
