"""The size-partitioned candidate pass (`candidates.containment_lsh_pairs`): short copies inside long pages."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from conftest import write_jsonl

from neardup.analysis import analyze, load_fingerprints
from neardup.candidate_stats import upgrade_stored_stats
from neardup.candidates import CandidateStats, containment_lsh_pairs, minhash_pairs
from neardup.config import Config
from neardup.engine import ingest_file
from neardup.errors import ConfigError
from neardup.shingles import text_words
from neardup.sketch import sketch_many
from neardup.store import Store

CONFIG = Config()


def _sketches(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    s = sketch_many([text_words(t)[1] for t in texts], CONFIG.shingle_size, CONFIG.num_perm, CONFIG.seed)
    return s.minhash, s.n_shingles


def _corpus(n_docs: int, share: float) -> tuple[list[str], list[tuple[int, int]]]:
    """`n_docs` long articles of distinct words and, for each, a copy of its first `share`: (copy, original)."""
    rng = random.Random(5)
    texts, pairs = [], []
    for d in range(n_docs):
        words = [f"w{d}x{rng.randrange(10**6)}" for _ in range(1500)]
        texts.append(" ".join(words))
        texts.append(" ".join(words[: int(len(words) * share)]))
        pairs.append((2 * d, 2 * d + 1))
    return texts, pairs


def _found(a: np.ndarray, b: np.ndarray) -> set[tuple[int, int]]:
    return {(int(x), int(y)) for x, y in zip(np.minimum(a, b), np.maximum(a, b), strict=True)}


def test_a_short_copy_contained_in_a_long_page_is_a_candidate() -> None:
    # Copies at 40% of their originals: containment 1, Jaccard 0.4, near the 0.36 the one index is sized for.
    texts, pairs = _corpus(20, 0.4)
    sigs, sizes = _sketches(texts)
    a, b, jac, cont, stats = containment_lsh_pairs(
        sigs, sizes, floor=0.7, min_size_ratio=0.5, min_shingles=150, lowest_ratio=0.25
    )
    found = _found(a, b)
    assert found == set(pairs)  # every copy, and nothing else: the originals share no shingle
    assert (cont >= 0.7).all() and (jac < 0.6).all()
    assert stats.tables > 0 and stats.candidates >= len(pairs)
    ia, ib, *_ = minhash_pairs(
        sigs,
        sizes,
        similarity="containment",
        floor=0.7,
        min_size_ratio=0.5,
        seed=CONFIG.seed,
        min_shingles=150,
    )
    assert _found(ia, ib) < found  # the one index finds some of them only


def test_pages_of_like_size_and_copies_below_the_lowest_ratio_are_left_to_the_index() -> None:
    texts, _ = _corpus(6, 0.1)  # copies at 10%: below the lowest ratio asked for
    sigs, sizes = _sketches(texts)
    a, b, *_ = containment_lsh_pairs(
        sigs, sizes, floor=0.7, min_size_ratio=0.5, min_shingles=150, lowest_ratio=0.25
    )
    assert len(a) == 0
    twins, _ = _corpus(4, 1.0)  # a page and its copy: one size class, the index's case
    sigs, sizes = _sketches(twins)
    a, b, *_ = containment_lsh_pairs(
        sigs, sizes, floor=0.7, min_size_ratio=0.5, min_shingles=150, lowest_ratio=0.25
    )
    assert len(a) == 0


def test_a_short_page_below_the_size_guard_is_never_contained() -> None:
    # A 60-shingle notice inside a long page: below half its size and below the 150-shingle floor.
    texts, pairs = _corpus(8, 0.04)
    sigs, sizes = _sketches(texts)
    assert (sizes[1::2] < 150).all()
    a, b, *_ = containment_lsh_pairs(
        sigs, sizes, floor=0.7, min_size_ratio=0.5, min_shingles=150, lowest_ratio=0.01
    )
    assert len(a) == 0
    a, b, *_ = containment_lsh_pairs(
        sigs, sizes, floor=0.7, min_size_ratio=0.5, min_shingles=0, lowest_ratio=0.01
    )
    assert len(a) == 0  # the ratio alone


def test_minhash_pairs_with_partial_copies_add_the_size_classes_pairs() -> None:
    texts, pairs = _corpus(20, 0.4)
    sigs, sizes = _sketches(texts)
    common = dict(similarity="containment", floor=0.7, min_size_ratio=0.5, seed=CONFIG.seed, min_shingles=150)
    ia, ib, *_ = minhash_pairs(sigs, sizes, **common)  # type: ignore[arg-type]
    pa_, pb_, _, cont, stats = minhash_pairs(sigs, sizes, partial_copies=True, **common)  # type: ignore[arg-type]
    found = _found(pa_, pb_)
    # LSH is approximate: the pass down to ratio 0.354 (0.5 / SIZE_CLASS_FACTOR) finds most 40% copies
    assert _found(ia, ib) < found <= set(pairs) and len(found) >= 0.9 * len(pairs)
    assert (cont >= 0.7).all()
    assert any("size class" in note for note in stats.notes)


def test_the_engine_finds_a_cut_short_copy_only_with_partial_copies(tmp_path: Path) -> None:
    rng = random.Random(9)
    records = []
    for d in range(12):  # long articles and, for each, a syndicated copy of its first 40%
        words = [f"t{d}q{rng.randrange(10**6)}" for _ in range(1500)]
        for i, body in enumerate((words, words[:600])):
            html = f"<html><body><article><p>{' '.join(body)}</p></article></body></html>"
            records.append({"url": f"https://site{i}.example/a/{d}", "html": html, "status": 200})
    dump = write_jsonl(tmp_path / "crawl.jsonl", records)

    def redundant(config: Config) -> int:
        with Store(tmp_path / f"{config.partial_copies}.duckdb") as store:
            ingest_file(store, dump, config, jobs=1)
            return analyze(load_fingerprints(store, config, jobs=1), config).numbers.redundant_pages

    with_pass, without = redundant(Config()), redundant(Config(partial_copies=False))
    assert without < with_pass <= 12 and with_pass >= 10
    with pytest.raises(ConfigError):
        Config.from_dict({"partial_copies": "yes"})


def test_crowded_size_class_buckets_are_a_note_not_the_boilerplate_warning() -> None:
    """The size-class tables have 3-row bands: a site's templated pages of like sizes crowd their buckets (26
    above the cap at 100k make_crawl pages, where the one index has none). Such buckets are noted, not
    reported as boilerplate: the capped-bucket warning and counts stay the one index's."""
    rng = np.random.default_rng(3)
    sigs = rng.integers(0, 2**32, size=(20, CONFIG.num_perm), dtype=np.uint32)
    # Every 4-row band of the one index holds a position that differs (p % 4 == 3); every 4th 3-row band of
    # the size classes does not.
    shared = np.arange(CONFIG.num_perm) % 4 != 3
    sigs[:, shared] = 7
    sizes = np.repeat([100, 250], 10)  # two size classes apart: one class's queries meet the other's entries
    common = dict(similarity="containment", floor=0.7, min_size_ratio=0.5, seed=CONFIG.seed, min_shingles=150)
    *_, index_only = minhash_pairs(sigs, sizes, bucket_cap=5, **common)  # type: ignore[arg-type]
    assert index_only.capped_buckets == 0 and not index_only.warnings
    *_, stats = minhash_pairs(sigs, sizes, bucket_cap=5, partial_copies=True, **common)  # type: ignore[arg-type]
    assert stats.capped_buckets == 0 and stats.capped_members == 0 and not stats.warnings, stats
    assert stats.largest_bucket == index_only.largest_bucket
    assert any("size-class" in note and "not expanded" in note for note in stats.notes), stats.notes
    assert CandidateStats.from_dict(stats.as_dict()) == stats
    # A set an older version stored, its notes as text and the counts in the note only, is read with them.
    counts = ("tables", "candidates", "largest_bucket", "capped_buckets", "capped_members")
    note_only = {**{k: v for k, v in stats.as_dict().items() if k in counts}, "notes": list(stats.notes)}
    assert CandidateStats.from_dict(upgrade_stored_stats(note_only)) == stats  # type: ignore[arg-type]
    assert stats.size_class_capped_buckets > 0
