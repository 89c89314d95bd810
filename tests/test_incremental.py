"""Adding a crawl extends the stored fingerprints: the result is the set a full computation stores."""

from __future__ import annotations

import dataclasses
import functools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import make_crawl, write_jsonl

from neardup import analysis, engine
from neardup.candidates import CandidateStats, containment_lsh_pairs, minhash_pairs, partial_copy_ratio
from neardup.config import Config
from neardup.shingles import text_words
from neardup.sketch import sketch_many
from neardup.stages.incremental import (
    BucketCapped,
    extend_fingerprints,
    merged_stats,
    minhash_new_pairs,
    new_cross_pairs,
)
from neardup.store import Store


def _cut_short(seed: int) -> list[dict[str, Any]]:
    """Long articles, each with a syndicated copy of its first 40%: pairs only the size-class pass of
    `partial_copies` finds (the one index is sized for copies down to half their original)."""
    rng = random.Random(seed)
    records = []
    for d in range(6):
        words = [f"s{seed}d{d}w{rng.randrange(10**6)}" for _ in range(1500)]
        for i, body in enumerate((words, words[:600])):
            html = f"<html><body><article><p>{' '.join(body)}</p></article></body></html>"
            records.append({"url": f"https://site{i}.example/{seed}/{d}", "html": html, "status": 200})
    return records


def _crawls(tmp_path: Path) -> tuple[Path, Path]:
    """A base crawl and an added one: the added crawl repeats base texts, edits some of them (pairs of a
    stored and a new unit) and brings stories of its own with their edits (pairs of two new units); of the
    cut-short copies, it brings the copy of a stored original, the original of a stored copy, and both."""
    recs = make_crawl(seed=3, n_articles=8, n_edits=6).records
    short = _cut_short(7)
    added = recs[1::2] + [dict(r, fetched_at="2024-06-01") for r in make_crawl(seed=5).records]
    base = recs[::2] + short[:4] + short[5:8:2]
    added += short[4:8:2] + short[8:]
    return write_jsonl(tmp_path / "base.jsonl", base), write_jsonl(tmp_path / "added.jsonl", added)


def _state(store: Store, config: Config) -> dict[str, Any]:
    """The fingerprint set as a user sees it: units and pairs by text (unit ids are internal), clusters."""
    key = config.fingerprint_key
    fset = store.fingerprint_set(key)
    assert fset is not None
    units = store.units(key, with_signatures=True)
    text_of = units["exact_key"].to_numpy()
    pairs = store.pairs(key)
    a, b = text_of[pairs.pop("a")], text_of[pairs.pop("b")]
    pairs.insert(0, "text_a", np.minimum(a, b))
    pairs.insert(1, "text_b", np.maximum(a, b))
    clusters = analysis.analyze(analysis.load_fingerprints(store, config, jobs=1), config).pages
    return {
        "units": units.drop(columns="unit_id").sort_values("exact_key").reset_index(drop=True),
        "pairs": pairs.sort_values(["text_a", "text_b"]).reset_index(drop=True),
        "counts": (fset.n_units, fset.n_pairs),
        "stats": (fset.stats, fset.coverage),
        "clusters": clusters[["page_id", "cluster_id", "representative_id", "similarity_to_representative"]],
    }


def _computed_at_once(db: Path, config: Config, *dumps: Path) -> dict[str, Any]:
    """The state of a fingerprint set computed in full after every dump is loaded."""
    with Store(db) as store:
        for f in dumps:
            engine.ingest_file(store, f, config, jobs=1)
        engine.ensure_fingerprints(store, config, jobs=1)
        return _state(store, config)


CONFIGS = {
    "minhash": Config(method="minhash"),  # partial_copies: the one index and the size-class pass
    "minhash, one index": Config(method="minhash", partial_copies=False),
    "simhash": Config(method="simhash", threshold=4),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_added_crawl_gives_the_full_computation(tmp_path: Path, name: str) -> None:
    config = CONFIGS[name]
    base, added = _crawls(tmp_path)
    full = _computed_at_once(tmp_path / "full.duckdb", config, base, added)
    with Store(tmp_path / "incremental.duckdb") as store:
        engine.ingest_file(store, base, config, jobs=1)
        n_old = engine.ensure_fingerprints(store, config, jobs=1).n_units
        engine.ingest_file(store, added, config, jobs=1)
        with store.writing():
            assert extend_fingerprints(store, config) is not None
        incremental = _state(store, config)
        pairs = store.pairs(config.fingerprint_key)  # by unit id: the stored ones come first
        ids = store.units(config.fingerprint_key)["unit_id"].tolist()

    assert ids == list(range(incremental["counts"][0]))
    assert ((pairs["a"] < n_old) & (pairs["b"] >= n_old)).any()  # a stored unit and a new one
    assert (pairs["a"] >= n_old).any()  # two new units
    assert (pairs["b"] < n_old).any()  # two stored units
    for name in ("units", "pairs", "clusters"):
        pd.testing.assert_frame_equal(incremental[name], full[name], check_exact=True)
    assert incremental["counts"] == full["counts"]
    assert incremental["stats"] == full["stats"]
    if config.searches_partial_copies:  # pairs of the size-class pass are among those extended
        with Store(tmp_path / "one_index.duckdb") as store:
            one_index = dataclasses.replace(config, partial_copies=False)
            for f in (base, added):
                engine.ingest_file(store, f, one_index, jobs=1)
            engine.ensure_fingerprints(store, one_index, jobs=1)
            assert store.fingerprint_set(one_index.fingerprint_key).n_pairs < full["counts"][1]


def test_a_bucket_the_full_computation_caps_is_not_extended() -> None:
    """Three equal signatures, a cap of two: the full computation would not expand the bucket, so the
    stored pair of the first two would be gone; extending it cannot give that result."""
    sigs = np.ones((3, 128), dtype=np.uint32)
    with pytest.raises(BucketCapped):
        minhash_new_pairs(sigs, np.full(3, 50), 2, Config(), bucket_cap=2)


def _size_class_pairs(
    sigs: np.ndarray, sizes: np.ndarray, cap: int, n_old: int | None = None
) -> tuple[set[tuple[int, int]], CandidateStats]:
    """The size-class pass's pairs and stats: of all sets, or (`n_old`) only the pairs with a set at or
    after `n_old`."""
    pairs_of = functools.partial(new_cross_pairs, n_old=n_old) if n_old is not None else None
    a, b, _, _, stats = containment_lsh_pairs(
        sigs,
        sizes,
        floor=0.7,
        min_size_ratio=0.5,
        min_shingles=150,
        lowest_ratio=partial_copy_ratio(0.5),
        bucket_cap=cap,
        **({"pairs_of": pairs_of} if pairs_of else {}),
    )
    return set(zip(a.tolist(), b.tolist(), strict=True)), stats


def _assert_extends(sigs: np.ndarray, sizes: np.ndarray, n_old: int, cap: int) -> set[tuple[int, int]]:
    """The size-class pass over the first `n_old` sets plus its pairs with a later set is the pass over all:
    the same pairs, candidates and capped buckets. Returns the pairs with a later set."""
    full, full_stats = _size_class_pairs(sigs, sizes, cap)
    old, old_stats = _size_class_pairs(sigs[:n_old], sizes[:n_old], cap)
    new, new_stats = _size_class_pairs(sigs, sizes, cap, n_old)
    assert old | new == full and not old & new
    assert all(max(pair) >= n_old for pair in new)
    for name in ("candidates", "capped_buckets", "capped_members"):
        assert getattr(old_stats, name) + getattr(new_stats, name) == getattr(full_stats, name), name
    return new


@pytest.mark.parametrize("n_old", [1, 9, 20, 31])
def test_size_class_pairs_with_new_sets_complete_the_stored_ones(n_old: int) -> None:
    """Originals of 1,500 shingles and their copies of the first 40%, in shuffled order: stored copies of
    new originals, new copies of stored originals, pairs within each side."""
    rng = random.Random(5)
    texts = []
    for d in range(16):
        words = [f"w{d}x{rng.randrange(10**6)}" for _ in range(1500)]
        texts += [" ".join(words), " ".join(words[:600])]
    rng.shuffle(texts)
    sets = sketch_many([text_words(t)[1] for t in texts], 5, Config().num_perm, Config().seed)
    new = _assert_extends(sets.minhash, sets.n_shingles, n_old, cap=2000)
    assert new and (n_old in (1, 31) or any(min(pair) < n_old for pair in new))


def _crowded(n: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` signatures whose every 4th 3-row band is one bucket (`test_containment_lsh`'s crowded case), of
    two sizes two classes apart: the bucket holds queries and indexed entries."""
    rng = np.random.default_rng(3)
    sigs = rng.integers(0, 2**32, size=(n, Config().num_perm), dtype=np.uint32)
    sigs[:, np.arange(Config().num_perm) % 4 != 3] = 7
    return sigs, np.resize([100, 250], n)


def test_a_size_class_bucket_capped_before_grows_without_a_recompute() -> None:
    sigs, sizes = _crowded(26)
    _assert_extends(sigs, sizes, 20, cap=5)  # 20 stored entries: capped before the 6 new ones came


def test_a_size_class_bucket_the_new_sets_push_over_the_cap_is_not_extended() -> None:
    """Four stored entries, two of each size, pair in the bucket; with three new ones it is above the cap of
    five: the full computation no longer expands it, so the stored pairs from it would be wrong."""
    sigs, sizes = _crowded(7)
    with pytest.raises(BucketCapped):
        _size_class_pairs(sigs, sizes, 5, n_old=4)


def test_the_statistics_of_an_extended_set_are_the_full_computations() -> None:
    """Stored statistics with size-class buckets capped before (their note), extended by six new entries:
    the counts and the note are those of the full computation."""
    config = Config()
    sigs, sizes = _crowded(26)

    def full(n: int) -> CandidateStats:
        *_, stats = minhash_pairs(
            sigs[:n],
            sizes[:n],
            similarity=config.similarity,
            floor=config.minhash_floor,
            min_size_ratio=config.min_size_ratio,
            seed=config.seed,
            min_shingles=config.min_contained_shingles,
            bucket_cap=5,
            partial_copies=True,
        )
        return stats

    stored = full(20)
    assert stored.size_class_capped_buckets > 0
    *_, new = minhash_new_pairs(sigs, sizes, 20, config, bucket_cap=5)
    assert merged_stats(stored, new) == full(26)
    assert merged_stats(stored, new).notes == full(26).notes


def _without_coverage(store: Store, config: Config) -> None:
    """The stored set as a version that did not record the pages it covers wrote it."""
    key = config.fingerprint_key
    stats = store.fingerprint_set(key).stored_stats()
    stats.pop(engine.COVERAGE)
    with store.writing():
        store.cursor().execute(
            "UPDATE fingerprint_sets SET stats = ? WHERE fingerprint_key = ?", [json.dumps(stats), key]
        )


def test_a_set_without_the_pages_it_covers_extends_by_its_counts(tmp_path: Path) -> None:
    config = Config()
    base, added = _crawls(tmp_path)
    full = _computed_at_once(tmp_path / "full.duckdb", config, base, added)
    with Store(tmp_path / "incremental.duckdb") as store:
        engine.ingest_file(store, base, config, jobs=1)
        engine.ensure_fingerprints(store, config, jobs=1)
        _without_coverage(store, config)
        assert engine.ensure_fingerprints(store, config, jobs=1).coverage is None
        engine.ingest_file(store, added, config, jobs=1)
        with store.writing():
            assert extend_fingerprints(store, config) is not None
        incremental = _state(store, config)
    for name in ("units", "pairs", "clusters"):
        pd.testing.assert_frame_equal(incremental[name], full[name], check_exact=True)
    assert incremental["stats"] == full["stats"]  # the coverage recorded again


def test_pages_without_a_new_text_are_covered_without_a_computation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-fetch of stored texts at other URLs, and a page too short to be content, bring no unit: the
    set covers them as it is."""
    config = Config()
    base, _ = _crawls(tmp_path)
    records = [json.loads(line) for line in base.read_text().splitlines()]
    again = [dict(r, url=r["url"] + "?again=1") for r in records[:5]]
    again.append({"url": "https://site0.example/short", "html": "<p>Too short.</p>", "status": 200})
    added = write_jsonl(tmp_path / "again.jsonl", again)
    with Store(tmp_path / "db.duckdb") as store:
        engine.ingest_file(store, base, config, jobs=1)
        before = engine.ensure_fingerprints(store, config, jobs=1)
        engine.ingest_file(store, added, config, jobs=1)

        def no_full_computation(*args: object, **kwargs: object) -> None:
            raise AssertionError("the set was computed again")

        monkeypatch.setattr(engine, "compute_fingerprints", no_full_computation)
        after = engine.ensure_fingerprints(store, config, jobs=1)
        assert (after.n_units, after.n_pairs) == (before.n_units, before.n_pairs)
        assert after.coverage == store.page_coverage()
        assert engine.current_fingerprints(store, config) is not None


def test_a_covered_page_gone_is_counted_again(tmp_path: Path) -> None:
    """A page the set was made from is gone (its text a unit of its own) and pages were added: the set
    is the full computation over the pages there are."""
    config = Config()
    base, added = _crawls(tmp_path)
    with Store(tmp_path / "db.duckdb") as store:
        engine.ingest_file(store, base, config, jobs=1)
        engine.ensure_fingerprints(store, config, jobs=1)
        engine.ingest_file(store, added, config, jobs=1)
        with store.writing():
            cur = store.cursor()
            gone = cur.execute(
                "SELECT min(page_id) FROM texts WHERE degenerate IS NULL AND exact_key IN "
                "(SELECT exact_key FROM texts GROUP BY exact_key HAVING count(*) = 1)"
            ).fetchone()[0]
            cur.execute("DELETE FROM texts WHERE page_id = ?", [gone])
            cur.execute("DELETE FROM pages WHERE page_id = ?", [gone])
        assert store.pages_after(store.fingerprint_set(config.fingerprint_key).coverage) is None
        engine.ensure_fingerprints(store, config, jobs=1)
        extended = _state(store, config)
        with store.writing():
            for table in ("fingerprint_sets", "units", "pairs"):
                store.cursor().execute(f"DELETE FROM {table}")
        engine.ensure_fingerprints(store, config, jobs=1)
        computed = _state(store, config)
    for name in ("units", "pairs", "clusters"):
        pd.testing.assert_frame_equal(extended[name], computed[name], check_exact=True)
    assert extended["counts"] == computed["counts"]
