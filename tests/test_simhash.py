"""SimHash: the bulk version equals the textbook recipe; fingerprints are pinned."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import simhash_naive

import neardup
from neardup.shingles import shingle_hashes, words
from neardup.simhash import hamming, hamming_many, simhash64, simhash_many

TEXT = (
    "Near-duplicate detection finds web pages whose main text is almost the same, such as mirrors, "
    "tracking-parameter twins and re-fetches with a changed session token. SimHash maps each page to a "
    "64-bit fingerprint so that similar pages differ in few bits."
)
# Pinned (trafilatura pins its fingerprints too): changing words, hashing or voting must be deliberate.
GOLDEN_TEXT_K5 = 14992152354485253878
GOLDEN_TEXT_K3 = 14659303253586391792

_VOCAB = [f"w{i}" for i in range(5000)]


def _random_text(rng: np.random.Generator, n_words: int) -> str:
    return " ".join(rng.choice(_VOCAB, size=n_words))


def test_golden_simhash() -> None:
    assert neardup.simhash(TEXT, 5) == GOLDEN_TEXT_K5
    assert neardup.simhash(TEXT, 3) == GOLDEN_TEXT_K3
    assert neardup.simhash(TEXT) == GOLDEN_TEXT_K5  # default shingle size is 5


_u64 = st.integers(min_value=0, max_value=(1 << 64) - 1)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_u64, max_size=30), min_size=1, max_size=8))
def test_simhash_many_equals_naive(docs: list[list[int]]) -> None:
    arrays = [np.array(d, dtype=np.uint64) for d in docs]
    bulk = simhash_many(arrays)
    assert bulk.dtype == np.uint64
    assert [int(x) for x in bulk] == [simhash_naive(d) for d in docs]


def test_simhash_many_equals_naive_on_real_documents() -> None:
    rng = np.random.default_rng(20240601)
    docs = [shingle_hashes(words(_random_text(rng, int(rng.integers(0, 400)))), 5) for _ in range(60)]
    docs.append(np.empty(0, dtype=np.uint64))
    bulk = simhash_many(docs)
    assert [int(x) for x in bulk] == [simhash_naive(d.tolist()) for d in docs]
    # distinct=True on already-distinct arrays gives the same fingerprints
    assert np.array_equal(simhash_many([np.unique(d) for d in docs], distinct=True), bulk)
    assert [simhash64(d) for d in docs] == [int(x) for x in bulk]


def test_tie_gives_zero_bit() -> None:
    # Two hashes that are bitwise complements: every bit has one vote each way, so the fingerprint is 0.
    h = 0x0123456789ABCDEF
    docs = [np.array([h, h ^ ((1 << 64) - 1)], dtype=np.uint64)]
    assert int(simhash_many(docs)[0]) == 0 == simhash_naive(docs[0].tolist())
    # a single hash is its own fingerprint
    assert simhash64(np.array([h], dtype=np.uint64)) == h


def test_repeated_shingles_vote_once() -> None:
    a = np.array([1, 1, 1, 6], dtype=np.uint64)
    assert simhash64(a) == simhash64(np.array([1, 6], dtype=np.uint64))


def test_empty_document_is_zero() -> None:
    assert int(simhash_many([np.empty(0, dtype=np.uint64)])[0]) == 0
    assert simhash_naive([]) == 0
    assert neardup.simhash("") == 0
    assert simhash_many([]).shape == (0,)


def test_near_identical_texts_are_close_and_unrelated_texts_far() -> None:
    rng = np.random.default_rng(7)
    base = _random_text(rng, 600).split()
    edited = list(base)
    edited[300] = "changed"  # one word: at most 5 of ~600 shingles differ
    d_near = hamming(neardup.simhash(" ".join(base)), neardup.simhash(" ".join(edited)))
    assert d_near <= 3

    distances = []
    for _ in range(20):
        a, b = _random_text(rng, 300), _random_text(rng, 300)
        distances.append(hamming(neardup.simhash(a), neardup.simhash(b)))
    # unrelated 64-bit fingerprints differ in about half their bits
    assert 26 <= float(np.mean(distances)) <= 38
    assert min(distances) > 12


def test_hamming() -> None:
    assert hamming(0, 0) == 0
    assert hamming(0b1011, 0b0001) == 2
    assert hamming(0, (1 << 64) - 1) == 64
    assert hamming(np.uint64(5), np.uint64(6)) == 2


def test_hamming_many() -> None:
    a = np.array([0, 0b1011, (1 << 64) - 1], dtype=np.uint64)
    b = np.array([0, 0b0001, 0], dtype=np.uint64)
    assert hamming_many(a, b).tolist() == [0, 2, 64]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_simhash_of_text_is_simhash64_of_its_shingles(k: int) -> None:
    assert neardup.simhash(TEXT, k) == simhash64(shingle_hashes(words(TEXT), k))
