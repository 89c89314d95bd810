"""Candidate pairs: SimHash banding finds exactly the brute-force pairs; LSH buckets equal datasketch's."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from functools import reduce
from math import comb

import numpy as np
import pytest
from conftest import modules_imported_by
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lsh_buckets_datasketch, simhash_pairs_bruteforce

from neardup import candidates
from neardup.candidates import (
    CandidateStats,
    block_masks,
    choose_r,
    concat_ranges,
    exact_scores,
    intersection_sizes,
    lsh_buckets,
    lsh_params,
    lsh_threshold,
    minhash_pairs,
    pairs_in_runs,
    run_groups,
    simhash_pairs,
    size_guard,
    verify_pairs,
)
from neardup.minhash import minhash_many
from neardup.shingles import shingle_hashes, words
from neardup.simhash import hamming

ALL64 = (1 << 64) - 1


def _pair_set(a: np.ndarray, b: np.ndarray) -> set[tuple[int, int]]:
    return {(int(x), int(y)) for x, y in zip(a, b, strict=True)}


def _flip(fp: int, bits: list[int]) -> int:
    for bit in bits:
        fp ^= 1 << bit
    return fp


def _assert_same_as_bruteforce(fps: np.ndarray) -> None:
    ref_a, ref_b, ref_d = simhash_pairs_bruteforce(fps, 8)
    for t in range(9):
        within = ref_d <= t
        expected = _pair_set(ref_a[within], ref_b[within])
        for r in range(1, 5):
            a, b, d, stats = simhash_pairs(fps, t, r=r)
            assert _pair_set(a, b) == expected, (t, r)
            assert (a < b).all()
            assert [int(x) for x in d] == [hamming(fps[i], fps[j]) for i, j in zip(a, b, strict=True)]
            if len(fps) > 1:
                assert stats.tables == comb(t + r, r)


@st.composite
def fingerprint_sets(draw: st.DrawFn) -> np.ndarray:
    """Random fingerprints plus planted near copies at 0..12 bits (so every threshold has pairs)."""
    bases = draw(st.lists(st.integers(0, ALL64), min_size=1, max_size=12))
    fps = list(bases)
    for base in bases:
        for _ in range(draw(st.integers(0, 3))):
            n_flips = draw(st.integers(0, 12))
            bits = draw(st.lists(st.integers(0, 63), min_size=n_flips, max_size=n_flips, unique=True))
            fps.append(_flip(base, bits))
    order = draw(st.permutations(range(len(fps))))
    return np.array([fps[i] for i in order], dtype=np.uint64)


@settings(max_examples=30, deadline=None)
@given(fingerprint_sets())
def test_simhash_pairs_equals_bruteforce_property(fps: np.ndarray) -> None:
    _assert_same_as_bruteforce(fps)


def test_simhash_pairs_equals_bruteforce_seeded_with_planted_pairs() -> None:
    rng = np.random.default_rng(2024)
    base = rng.integers(0, 2**64, size=1500, dtype=np.uint64)
    planted = []
    for i in range(300):
        n_flips = i % 11  # 0..10 bits: inside and just outside every threshold
        bits = rng.choice(64, size=n_flips, replace=False).tolist()
        planted.append(_flip(int(base[i]), bits))
    # bits clustered in one block stress the pigeonhole argument
    for i in range(300, 340):
        planted.append(int(base[i]) ^ 0xFF)
    fps = np.concatenate([base, np.array(planted, dtype=np.uint64)])
    fps = fps[rng.permutation(len(fps))]
    _assert_same_as_bruteforce(fps)
    # and with r chosen automatically
    a, b, _, _ = simhash_pairs(fps, 8)
    ra, rb, _ = simhash_pairs_bruteforce(fps, 8)
    assert _pair_set(a, b) == _pair_set(ra, rb)
    assert len(ra) >= 286  # the planted pairs within 8 bits (246 + 40), at least


def test_simhash_pairs_trivial_inputs() -> None:
    for fps in (np.empty(0, np.uint64), np.array([5], np.uint64)):
        a, b, d, stats = simhash_pairs(fps, 3)
        assert len(a) == len(b) == len(d) == 0
    a, b, d, _ = simhash_pairs(np.array([9, 9], np.uint64), 0)
    assert (a.tolist(), b.tolist(), d.tolist()) == ([0], [1], [0])


def _pairs_from_every_table(fps: np.ndarray, max_bits: int, r: int, cap: int) -> set[tuple[int, int]]:
    """Reference: every close pair in any bucket of at most `cap` members, in any table (no dedupe)."""
    from itertools import combinations

    out = set()
    for combo in combinations(block_masks(max_bits + r), r):
        keys = fps & np.uint64(sum(combo))
        for key in np.unique(keys):
            members = np.flatnonzero(keys == key)
            if 2 <= len(members) <= cap:
                for x, y in combinations(members.tolist(), 2):
                    if bin(int(fps[x]) ^ int(fps[y])).count("1") <= max_bits:
                        out.add((x, y))
    return out


@given(seed=st.integers(0, 2**32 - 1), r=st.integers(1, 3), cap=st.integers(2, 8))
@settings(max_examples=40, deadline=None)
def test_each_pair_is_kept_once_even_when_buckets_are_capped(seed: int, r: int, cap: int) -> None:
    """Pairs are kept only in their first agreeing table, unless that table capped them: the result equals
    the union over all tables, capped or not (and, uncapped, the brute force)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**63, size=6, dtype=np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=(60, 3)).astype(np.uint64)
    fps = (
        base[rng.integers(0, 6, size=60)]
        ^ (flips[:, 0] * rng.integers(0, 2, 60).astype(np.uint64))
        ^ (flips[:, 1] * rng.integers(0, 2, 60).astype(np.uint64))
    )
    a, b, _, _ = simhash_pairs(fps, 3, r=r, bucket_cap=cap)
    assert set(zip(a.tolist(), b.tolist(), strict=True)) == _pairs_from_every_table(fps, 3, r, cap)


def test_oversized_bucket_is_not_expanded_but_reported() -> None:
    fps = np.array([42] * 12 + [ALL64], dtype=np.uint64)
    a, _, _, stats = simhash_pairs(fps, 2, r=1, bucket_cap=5)
    assert len(a) == 0
    assert stats.capped_buckets > 0
    assert stats.largest_bucket == 12
    assert any("boilerplate" in w for w in stats.warnings) and not stats.notes
    a, _, _, stats = simhash_pairs(fps, 2, r=1)  # default cap: all 66 pairs
    assert len(a) == 12 * 11 // 2
    assert stats.capped_buckets == 0 and not stats.notes and not stats.warnings


@pytest.mark.parametrize("n_blocks", [1, 3, 5, 9, 12])
def test_block_masks_partition_the_64_bits(n_blocks: int) -> None:
    masks = block_masks(n_blocks)
    assert len(masks) == n_blocks
    assert reduce(lambda x, y: x | y, masks) == ALL64
    assert sum(m.bit_count() for m in masks) == 64  # disjoint
    widths = [m.bit_count() for m in masks]
    assert max(widths) - min(widths) <= 1


def test_choose_r_minimizes_sorts_plus_random_candidates() -> None:
    """r blocks of the (bits + r) must match: C(bits + r, r) tables, each sorted (n) and yielding the pairs
    whose r blocks collide at random (n^2 / 2 pairs x 2^-(64 r / (bits + r)) per table)."""

    def cost(n: int, bits: int, r: int) -> float:
        tables = math.comb(bits + r, r)
        return tables * (n + n * n / 2 * 2.0 ** (-64 * r / (bits + r)))

    chosen = {}
    for n in (2, 100, 10_000, 1_000_000, 100_000_000):
        for bits in range(0, 9):
            r = choose_r(n, bits)
            assert 1 <= r <= 4
            assert cost(n, bits, r) == min(cost(n, bits, q) for q in range(1, 5)), (n, bits, r)
            chosen[n, bits] = r
    # the choice depends on the corpus: few pages sort few tables, many pages need longer keys
    assert chosen[2, 8] == 1 and chosen[100_000_000, 8] > 1, chosen


# --- MinHash LSH ---------------------------------------------------------------------------------
def _realish_signatures(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Documents from a small vocabulary, each with an edited copy at a few levels of change."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(800)]
    texts = []
    for _ in range(40):
        toks = list(rng.choice(vocab, size=int(rng.integers(60, 300))))
        texts.append(toks)
        for frac in (0.02, 0.1, 0.3):
            edited = list(toks)
            for pos in rng.choice(len(toks), size=max(1, int(frac * len(toks))), replace=False):
                edited[pos] = str(rng.choice(vocab))
            texts.append(edited)
    texts.append([])  # an empty document
    texts.append(["one", "two"])
    hashes = [np.unique(shingle_hashes(words(" ".join(t)), 5)) for t in texts]
    return minhash_many(hashes, 128, 1, distinct=True), np.array([len(h) for h in hashes])


@pytest.mark.parametrize(("bands", "rows"), [(16, 8), (32, 4), (64, 2), (42, 3)])
def test_lsh_buckets_equal_datasketch(bands: int, rows: int) -> None:
    sigs, _ = _realish_signatures()
    mine = sorted(tuple(b.tolist()) for b in lsh_buckets(sigs, bands, rows))
    ref = sorted(tuple(b.tolist()) for b in lsh_buckets_datasketch(sigs, bands, rows, seed=1))
    assert mine == ref
    assert len(mine) > 0


def test_lsh_buckets_equal_datasketch_at_engine_params() -> None:
    sigs, _ = _realish_signatures(seed=9)
    bands, rows = lsh_params(lsh_threshold(0.3, "containment", 0.5), 128)
    assert bands * rows <= 128
    mine = sorted(tuple(b.tolist()) for b in lsh_buckets(sigs, bands, rows))
    ref = sorted(tuple(b.tolist()) for b in lsh_buckets_datasketch(sigs, bands, rows, seed=1))
    assert mine == ref


def _datasketch_params(threshold: float, num_perm: int) -> tuple[int, int]:
    """What `MinHashLSH(threshold, num_perm)` picks (it raises where that is one band; the choice is this)."""
    from datasketch.lsh import _optimal_param

    return _optimal_param(threshold, num_perm, 0.5, 0.5)


# Every threshold the engine asks for: the one index over its guard ratios and floors, and the size-class
# tables of `partial_copies` down to their lowest ratio.
_ENGINE_THRESHOLDS = sorted(
    {
        lsh_threshold(f, sim, q)
        for f in (0.3, 0.5, 0.7, 0.8, 0.9)
        for sim in ("jaccard", "containment")
        for q in (0.05, 0.2, 0.35, 0.5, 0.7, 0.9)
    }
    | {
        candidates.CONTAINMENT_INDEXED * q / (1 + q - candidates.CONTAINMENT_INDEXED * q)
        for q in np.geomspace(0.05, 1.0, 40)
    }
)


@pytest.mark.parametrize("num_perm", [16, 64, 128, 256])
def test_lsh_params_are_datasketchs(num_perm: int) -> None:
    thresholds = [*np.round(np.arange(0.02, 1.0, 0.02), 2), *_ENGINE_THRESHOLDS]
    mine = [lsh_params(float(t), num_perm) for t in thresholds]
    assert mine == [_datasketch_params(float(t), num_perm) for t in thresholds]


def test_fingerprints_do_not_import_datasketch() -> None:
    """The candidate search runs in every fingerprint step, of the CLI, the app and an added crawl: choosing
    its bands must not cost datasketch's and scipy's import (0.2-0.3 CPU-s)."""
    loaded = modules_imported_by(
        "from neardup.candidates import lsh_params, size_class_tables\n"
        "lsh_params(0.36, 128); size_class_tables(0.35, 128)"
    )
    assert "neardup.candidates" in loaded
    assert not {"datasketch", "scipy.integrate"} & loaded


def test_lsh_threshold_below_the_floor() -> None:
    assert lsh_threshold(0.5, "jaccard", 0.5) == pytest.approx(0.4)
    # containment: sized for containment 0.8 at the guard ratio, whatever the floor:
    # at size ratio 0.5, jaccard is at least 0.4 / 1.1
    assert lsh_threshold(0.7, "containment", 0.5) == pytest.approx(0.4 / 1.1)
    assert lsh_threshold(0.9, "containment", 0.5) == pytest.approx(0.4 / 1.1)
    assert lsh_threshold(0.7, "containment", 0.05) == 0.05


def test_minhash_pairs_finds_edited_copies() -> None:
    sigs, sizes = _realish_signatures(seed=4)
    a, b, jac, cont, stats = minhash_pairs(
        sigs, sizes, similarity="jaccard", floor=0.5, min_size_ratio=0.5, seed=1
    )
    found = _pair_set(a, b)
    # document 4*i and its 2% edit (index 4*i + 1) are near-identical
    for i in range(40):
        assert (4 * i, 4 * i + 1) in found
    assert (jac >= 0.5).all()
    assert (a < b).all()
    assert stats.candidates >= len(a)


def _contained_pair(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    big = rng.choice(2**62, size=400, replace=False).astype(np.uint64)
    small = big[:100]  # fully contained, a quarter of the size
    others = [rng.choice(2**62, size=300, replace=False).astype(np.uint64) for _ in range(6)]
    docs = [small, big, *others]
    return minhash_many(docs, 128, 1), np.array([len(d) for d in docs])


def test_minhash_pairs_size_ratio_guard() -> None:
    sigs, sizes = _contained_pair(np.random.default_rng(1))
    a, b = np.array([0]), np.array([1])  # the short set, fully contained in one 4x larger (Jaccard 0.25)
    # the guard at 0.5: the short set is not "contained" (containment 0), so the pair is dropped ...
    keep, jac, cont = verify_pairs(sigs, sizes, a, b, similarity="containment", floor=0.7, min_size_ratio=0.5)
    assert not keep[0] and cont[0] == 0.0
    assert 0.1 < jac[0] < 0.45  # true Jaccard 0.25
    # ... a looser guard (0.2 <= 0.25) lets the containment through: high, the true value being 1
    keep, _, cont = verify_pairs(sigs, sizes, a, b, similarity="containment", floor=0.7, min_size_ratio=0.2)
    assert keep[0] and cont[0] > 0.8
    # ... and minhash_pairs applies the same guard to what its index finds
    a2, b2, _, cont2, _ = minhash_pairs(
        sigs, sizes, similarity="containment", floor=0.7, min_size_ratio=0.2, seed=1
    )
    found = dict(zip(zip(a2.tolist(), b2.tolist(), strict=True), cont2.tolist(), strict=True))
    assert found[(0, 1)] > 0.8


def test_oversized_lsh_bucket_is_reported() -> None:
    # 12 identical signatures (boilerplate) and one other: the bucket is capped, the note says so
    sigs = minhash_many([np.arange(50, dtype=np.uint64)] * 12 + [np.arange(1000, 1050, dtype=np.uint64)])
    sizes = np.full(13, 50)
    a, _, _, _, stats = minhash_pairs(
        sigs, sizes, similarity="jaccard", floor=0.5, min_size_ratio=0.5, seed=1, bucket_cap=5
    )
    assert len(a) == 0
    assert stats.capped_buckets > 0
    assert any("boilerplate" in w for w in stats.warnings)
    a, _, jac, _, stats = minhash_pairs(
        sigs, sizes, similarity="jaccard", floor=0.5, min_size_ratio=0.5, seed=1
    )
    assert len(a) == 12 * 11 // 2
    assert (jac == 1.0).all()
    assert stats.capped_buckets == 0


def test_minhash_pairs_trivial_inputs() -> None:
    sig = minhash_many([np.arange(10, dtype=np.uint64)])
    a, b, jac, cont, _ = minhash_pairs(
        sig, np.array([10]), similarity="jaccard", floor=0.3, min_size_ratio=0.5, seed=1
    )
    assert len(a) == len(b) == len(jac) == len(cont) == 0


# --- exact verification -----------------------------------------------------------------------------
@given(
    seed=st.integers(0, 2**32 - 1),
    n_sets=st.integers(1, 25),
    n_pairs=st.integers(0, 60),
    chunk=st.integers(1, 200),
    universe=st.integers(1, 80),
)
@settings(max_examples=80, deadline=None)
def test_intersection_sizes_equal_set_intersections(
    seed: int, n_sets: int, n_pairs: int, chunk: int, universe: int
) -> None:
    """Bulk intersections equal np.intersect1d pair by pair, for any chunking, empty sets and self-pairs."""
    rng = np.random.default_rng(seed)
    sets = [
        np.unique(rng.integers(0, universe, rng.integers(0, 40))).astype(np.uint32) for _ in range(n_sets)
    ]
    lens = np.array([len(x) for x in sets], dtype=np.int64)
    values = np.concatenate(sets)
    a, b = rng.integers(0, n_sets, n_pairs), rng.integers(0, n_sets, n_pairs)
    want = [len(np.intersect1d(sets[i], sets[j])) for i, j in zip(a, b, strict=True)]
    assert intersection_sizes(values, lens, a, b, chunk=chunk).tolist() == want  # compiled merge
    assert intersection_sizes(values, lens, a, b, chunk=chunk, compiled=False).tolist() == want  # numpy
    # sets addressed where they lie (not back to back): the reversed layout gives the same counts
    off = np.concatenate(([0], np.cumsum(lens[::-1])[:-1]))[::-1]
    rev = np.concatenate(sets[::-1]) if n_sets else values
    for compiled in (True, False):
        assert intersection_sizes(rev, lens, a, b, offsets=off, compiled=compiled).tolist() == want


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 30),
    n_pairs=st.integers(0, 80),
    num_perm=st.sampled_from([16, 128]),
)
@settings(max_examples=60, deadline=None)
def test_compiled_verification_equals_numpy(seed: int, n: int, n_pairs: int, num_perm: int) -> None:
    rng = np.random.default_rng(seed)
    sigs = rng.integers(0, 6, size=(n, num_perm), dtype=np.uint32)  # few values: many agreeing positions
    sizes = rng.integers(1, 500, size=n).astype(np.float64)
    a, b = rng.integers(0, n, n_pairs), rng.integers(0, n, n_pairs)
    for similarity, floor in (("jaccard", 0.3), ("containment", 0.5)):
        fast = verify_pairs(sigs, sizes, a, b, similarity=similarity, floor=floor, min_size_ratio=0.5)
        ref = verify_pairs(
            sigs, sizes, a, b, similarity=similarity, floor=floor, min_size_ratio=0.5, compiled=False
        )
        for x, y in zip(fast, ref, strict=True):
            assert np.array_equal(x, y)


def test_compiled_kernels_check_indices() -> None:
    sigs = np.zeros((3, 16), dtype=np.uint32)
    with pytest.raises(IndexError):
        verify_pairs(
            sigs,
            np.ones(3),
            np.array([0]),
            np.array([3]),
            similarity="jaccard",
            floor=0.5,
            min_size_ratio=0.5,
        )
    with pytest.raises(IndexError):
        intersection_sizes(np.arange(4, dtype=np.uint32), np.array([2, 2]), np.array([0]), np.array([2]))
    with pytest.raises(IndexError):  # a set reaching past the values
        intersection_sizes(np.arange(4, dtype=np.uint32), np.array([2, 3]), np.array([0]), np.array([1]))


def test_intersection_sizes_use_all_32_bits() -> None:
    """Values that agree in their low bits only are different shingles."""
    values = np.array([1, 0xFFFF0001, 7, 0x10001, 0xFFFF0001], dtype=np.uint32)
    for compiled in (True, False):
        got = intersection_sizes(values, np.array([2, 3]), np.array([0]), np.array([1]), compiled=compiled)
        assert got.tolist() == [1]


def test_concat_ranges_skips_empty_ranges() -> None:
    got = concat_ranges(np.array([5, 9, 2, 0]), np.array([2, 0, 3, 0]))
    assert got.tolist() == [5, 6, 2, 3, 4]
    assert concat_ranges(np.array([3]), np.array([0])).tolist() == []


def test_exact_scores_and_size_guard() -> None:
    jac, cont = exact_scores(np.array([10, 10, 0]), np.array([10, 40, 5]), np.array([20, 10, 5]), 0.5)
    assert np.allclose(jac, [0.5, 0.25, 0.0])
    # 10 of the smaller set's 10 are shared, but 10 < 0.5 x 40: the guard zeroes the containment
    assert np.allclose(cont, [1.0, 0.0, 0.0])


def test_size_guard_floor_admits_a_long_partial_copy_and_keeps_short_pages_out() -> None:
    """A print copy of an article whose page also carries a long comment thread: 375 shingles against
    9,587 (the issue's real case) is 4% of the size, but holds more shingles than the floor."""
    small = np.array([375, 75, 375])
    large = np.array([9587, 2000, 600])
    assert size_guard(small, large, 0.5).tolist() == [False, False, True]
    assert size_guard(small, large, 0.5, 150).tolist() == [True, False, True]
    assert size_guard(small, large, 0.5, 0).tolist() == [False, False, True]
    _, cont = exact_scores(np.array([370, 75]), small[:2], large[:2], 0.5, 150)
    assert np.allclose(cont, [370 / 375, 0.0])


def test_verify_pairs_applies_the_floor_in_both_kernels() -> None:
    rng = np.random.default_rng(3)
    sigs = rng.integers(0, 2**32, size=(2, 128), dtype=np.uint32)
    sigs[1, :10] = sigs[0, :10]  # Jaccard estimate 10/128
    sizes = np.array([300.0, 3000.0])
    a, b = np.array([0]), np.array([1])
    for compiled in (True, False):
        keep, _, cont = verify_pairs(
            sigs, sizes, a, b, similarity="containment", floor=0.7, min_size_ratio=0.5, compiled=compiled
        )
        assert not keep[0] and cont[0] == 0.0
        keep, _, cont = verify_pairs(
            sigs,
            sizes,
            a,
            b,
            similarity="containment",
            floor=0.7,
            min_size_ratio=0.5,
            min_shingles=200,
            compiled=compiled,
        )
        assert keep[0] and cont[0] > 0.7


def _groups(order: np.ndarray, starts: np.ndarray) -> set[frozenset[int]]:
    ends = np.concatenate((starts[1:], [len(order)]))
    return {frozenset(order[s:e].tolist()) for s, e in zip(starts, ends, strict=True)}


@pytest.mark.parametrize("rows", [1, 2, 4])
def test_band_groups_are_exact_even_when_keys_collide(rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    block = np.random.default_rng(rows).integers(0, 3, size=(300, rows), dtype=np.uint32)
    order = np.lexsort(block.T[::-1])
    want = _groups(order, candidates._run_starts(block[order]))
    assert _groups(*candidates._band_groups(block)) == want
    # a key that keeps one bit: different rows share keys, and the grouping must still be by rows
    monkeypatch.setattr(candidates, "fmix64", lambda h: h & np.uint64(1))
    assert _groups(*candidates._band_groups(block)) == want


def _in_small_steps(
    columns: Callable[[], Iterator[tuple[int, np.ndarray]]], chunk: int, group_bytes: int
) -> list[tuple[int, np.ndarray]]:
    """The (band, keys) of `columns()` made with chunks of `chunk` rows and groups of `group_bytes` of keys."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(candidates, "KEY_CHUNK_ROWS", chunk)
        mp.setattr(candidates, "KEY_GROUP_BYTES", group_bytes)
        return list(columns())


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 300),
    rows=st.integers(1, 5),
    bands=st.integers(1, 7),
    chunk=st.sampled_from([1, 7, 64, 2048]),
    group_bytes=st.sampled_from([1, 200, 1 << 20]),
    seed=st.integers(0, 2**16),
)
def test_band_key_columns_are_each_bands_keys(
    n: int, rows: int, bands: int, chunk: int, group_bytes: int, seed: int
) -> None:
    """Made a group of bands at a time over chunks of rows, the keys are each band's own, in band order."""
    sigs = np.random.default_rng(seed).integers(0, 2**32, (n, rows * bands + 3), dtype=np.uint32)
    sigs[n // 2 :: 3, :rows] = sigs[0, :rows] if n else 0  # some equal band rows
    got = _in_small_steps(lambda: candidates.band_key_columns(sigs, bands, rows), chunk, group_bytes)
    assert [b for b, _ in got] == list(range(bands))
    for band, keys in got:
        assert np.array_equal(
            keys, candidates.band_keys(sigs[:, band * rows : (band + 1) * rows], compiled=False)
        )


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 300),
    rows=st.integers(1, 5),
    bands=st.integers(1, 6),
    distances=st.lists(st.integers(1, 6), min_size=0, max_size=3, unique=True),
    chunk=st.sampled_from([1, 7, 64, 2048]),
    group_bytes=st.sampled_from([1, 500, 1 << 20]),
    seed=st.integers(0, 2**16),
)
def test_size_class_key_columns_are_each_bands_keys(
    n: int, rows: int, bands: int, distances: list[int], chunk: int, group_bytes: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    sigs = rng.integers(0, 2**32, (n, rows * bands), dtype=np.uint32)
    classes = rng.integers(0, 30, n).astype(np.int64)
    tables = candidates.SizeClassTables(bands, rows, tuple(distances))
    got = _in_small_steps(
        lambda: candidates.size_class_key_columns(sigs, classes, tables), chunk, group_bytes
    )
    assert [b for b, _ in got] == list(range(bands))
    for band, keys in got:
        block = sigs[:, band * rows : (band + 1) * rows]
        assert np.array_equal(keys, candidates.size_class_keys(block, classes, distances, compiled=False))


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=40),
    max_pairs=st.integers(1, 80),
    cap=st.integers(2, 10),
    seed=st.integers(0, 100),
)
def test_run_groups_give_the_pairs_and_statistics_of_all_runs_at_once(
    sizes: list[int], max_pairs: int, cap: int, seed: int
) -> None:
    order = np.random.default_rng(seed).permutation(sum(sizes))
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    whole = CandidateStats()
    i, j = pairs_in_runs(order, starts, cap, whole)
    grouped, found = CandidateStats(), []
    for group_order, group_starts in run_groups(order, starts, max_pairs, cap):
        group_sizes = np.diff(np.concatenate((group_starts, [len(group_order)])))
        assert (group_sizes * (group_sizes - 1) // 2 * (group_sizes <= cap)).sum() <= max_pairs or len(
            group_starts
        ) == 1
        found.append(np.stack(pairs_in_runs(group_order, group_starts, cap, grouped), axis=1))
    pairs = np.concatenate(found) if found else np.empty((0, 2), np.int64)
    assert sorted(map(tuple, pairs.tolist())) == sorted(zip(i.tolist(), j.tolist(), strict=True))
    assert (grouped.capped_buckets, grouped.capped_members) == (whole.capped_buckets, whole.capped_members)
    assert grouped.largest_bucket == whole.largest_bucket or len(order) < 2
