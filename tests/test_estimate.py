"""The estimate of the three numbers from a sample of the pages (neardup.estimate), against the exact numbers
of the same setting computed over every page of the bundled sample crawl."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from neardup import engine, estimate
from neardup.analysis import Fingerprints, analyze, duplicate_pairs, load_fingerprints
from neardup.config import Config
from neardup.store import Store

REFERENCE = Config()
SETTINGS = {
    "shingle 5 -> 7": REFERENCE.with_shingle_size(7),
    "minhash -> simhash": REFERENCE.with_method("simhash"),
}


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """The bundled sample crawl (3,000 pages), with the reference's and the two settings' fingerprints."""
    store = Store(tmp_path_factory.mktemp("estimate") / "sample.duckdb")
    engine.ingest_file(store, engine.SAMPLE_CRAWL, REFERENCE)
    for config in (REFERENCE, *SETTINGS.values()):
        engine.ensure_fingerprints(store, config)
    yield store
    store.close()


@pytest.fixture(scope="module")
def reference(sample_store: Store) -> Fingerprints:
    return load_fingerprints(sample_store, REFERENCE)


def test_the_sample_is_runs_of_consecutive_rows_the_same_for_a_seed() -> None:
    rows = estimate.sample_page_rows(100_000, 2_000, 7, run_pages=100)
    assert len(rows) == 2_000 and len(np.unique(rows)) == 2_000
    assert np.array_equal(rows, estimate.sample_page_rows(100_000, 2_000, 7, run_pages=100))
    assert not np.array_equal(rows, estimate.sample_page_rows(100_000, 2_000, 8, run_pages=100))
    starts = rows[::100]
    assert np.all(starts % 100 == 0)
    assert np.array_equal(rows, (starts[:, None] + np.arange(100)).ravel())
    groups = estimate.jackknife_groups(rows, 100)
    assert sorted(np.bincount(groups)) == [200] * estimate.JACKKNIFE_GROUPS
    # asked for more than the runs there are: every row
    assert np.array_equal(estimate.sample_page_rows(950, 2_000, 7, run_pages=100), np.arange(950))


def test_the_sample_is_a_fifth_of_a_small_crawl_in_two_runs_per_group_at_least() -> None:
    assert estimate.sample_size(3_000) == (600, 30)
    assert estimate.sample_size(100_000) == (estimate.SAMPLE_PAGES, estimate.SAMPLE_RUN)
    assert estimate.sample_size(1_000_000) == (estimate.SAMPLE_PAGES, estimate.SAMPLE_RUN)


def test_count_numbers_counts_as_the_report_does(reference: Fingerprints) -> None:
    exact = analyze(reference, REFERENCE).numbers
    keep = duplicate_pairs(reference.pairs, REFERENCE)
    content = reference.arrays["unit"] >= 0
    counted = estimate.count_numbers(
        content,
        reference.arrays["md5"],
        reference.arrays["unit"],
        reference.n_units,
        reference.pairs["a"][keep].astype(np.int64),
        reference.pairs["b"][keep].astype(np.int64),
    )
    assert counted == tuple(exact[name] for name in estimate.NUMBERS)


@pytest.mark.parametrize("setting", SETTINGS, ids=list(SETTINGS))
def test_a_sample_of_every_page_gives_the_exact_numbers(
    sample_store: Store, reference: Fingerprints, setting: str
) -> None:
    config = SETTINGS[setting]
    counts = estimate.sample_counts(sample_store, config, reference, sample_pages=10_000, run_pages=1_000)
    assert counts is not None and counts.sample_pages == len(reference.pages)
    got = estimate.estimate_numbers(counts, config, REFERENCE, analyze(reference, REFERENCE).numbers)
    exact = analyze(load_fingerprints(sample_store, config), config).numbers
    assert {k: v.value for k, v in got.numbers.items()} == {k: exact[k] for k in estimate.NUMBERS}


@pytest.mark.parametrize("setting", SETTINGS, ids=list(SETTINGS))
def test_the_exact_numbers_fall_inside_the_interval_in_most_seeds(
    sample_store: Store, reference: Fingerprints, setting: str
) -> None:
    """A third of the pages, in runs of 25: the exact near duplicates inside the 95% interval in at least 7
    of 10 seeds; exact and byte-identical duplicates, which neither setting changes, exactly (width 0)."""
    config = SETTINGS[setting]
    exact = analyze(load_fingerprints(sample_store, config), config).numbers
    ref_numbers = analyze(reference, REFERENCE).numbers
    inside, naive_inside = 0, 0
    for seed in range(10):
        counts = estimate.sample_counts(
            sample_store, config, reference, sample_pages=1_000, seed=seed, run_pages=25
        )
        assert counts is not None and 900 <= counts.sample_pages <= 1_000
        got = estimate.estimate_numbers(counts, config, REFERENCE, ref_numbers)
        for name in ("byte_identical_duplicates", "exact_duplicates"):
            assert got.numbers[name].exact and got.numbers[name].value == exact[name]
        near = got.numbers["near_duplicates"]
        assert near.value is not None and near.low is not None and near.high is not None
        assert near.low <= near.value <= near.high
        inside += near.low <= exact["near_duplicates"] <= near.high
        # the sample's own count scaled by pages: what the ratio corrects (partners outside the sample)
        scaled = estimate.count_numbers(
            counts.content,
            counts.md5,
            counts.unit,
            counts.n_units,
            counts.pairs["a"][duplicate_pairs(counts.pairs, config)].astype(np.int64),
            counts.pairs["b"][duplicate_pairs(counts.pairs, config)].astype(np.int64),
        )[2] * (len(reference.pages) / counts.sample_pages)
        naive_inside += near.low <= scaled <= near.high
    assert inside >= 7, f"the exact value was inside the interval in {inside} of 10 seeds"
    assert naive_inside <= 2, "the sample's own count, scaled, should fall short of the interval"


def test_no_estimate_across_normalizations(sample_store: Store, reference: Fingerprints) -> None:
    other = REFERENCE.replace(normalize="strip")
    assert not estimate.comparable(other, REFERENCE)
    assert estimate.sample_counts(sample_store, other, reference) is None
