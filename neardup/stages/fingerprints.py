"""The fingerprints stage: the units (distinct content texts) of a setting with their fingerprints, and their
verified candidate pairs, stored once per `Config.fingerprint_key` as a `FingerprintSet`.

`current_fingerprints` says whether the stored set covers the pages there are; `compute_fingerprints`
makes it over every unit; `stages.incremental.extend_fingerprints` adds the units of pages loaded since.
`engine.ensure_fingerprints` chooses among them.
"""

from __future__ import annotations

import time

import numpy as np

from ..config import Config
from ..fingerprint_set import FingerprintSet, stored_stats
from ..store import Store
from .base import Progress, StageClock, no_progress
from .pairs import find_pairs
from .sketches import ensure_sketches


def added_since(store: Store, fingerprint_set: FingerprintSet) -> int | None:
    """The last page id a stored fingerprint set covers, when the pages up to it are the ones it was made
    from (pages were only added since: their ids are greater); None when the set does not say (stored by an
    earlier version, or by Spark) or a page it covered is gone."""
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
    with clock.stage("candidates"):
        progress("candidates", 0, 1)
        units = store.unit_sketches(
            config.norm_key,
            config.sketch_key,
            with_minhash=config.method == "minhash",
            min_words=config.min_words,
        )
        units.insert(0, "unit_id", np.arange(len(units), dtype=np.int32))
        pairs = find_pairs(store, config, units, progress=progress, jobs=jobs)
        units["minhash" if config.method == "simhash" else "simhash"] = None
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
