"""Words, shingles, set similarities and the stable shingle hash."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.shingles import (
    containment,
    distinct,
    jaccard,
    shingle_hash_of,
    shingle_hashes,
    shingles,
    word_hashes,
    words,
)

M64 = (1 << 64) - 1
FNV_PRIME = 0x100000001B3


def _fmix64(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & M64
    return h ^ (h >> 33)


def _reference_shingle_hash(tokens: list[str]) -> int:
    """The module docstring's definition, in plain Python integers."""
    acc = 0
    for w in tokens:
        acc = (acc * FNV_PRIME + xxhash.xxh3_64_intdigest(w.encode("utf-8"))) & M64
    return _fmix64(acc)


# --- words ---------------------------------------------------------------------------------------
def test_words_casefold_and_nfkc() -> None:
    assert words("The QUICK brown Fox") == ["the", "quick", "brown", "fox"]
    # NFKC turns the "fi" ligature into two letters; casefold turns ß into ss.
    assert words("\ufb01ne Straße") == ["fine", "strasse"]
    assert words("STRASSE") == words("Straße")
    # full-width letters and digits are NFKC-folded to ASCII
    assert words("ＡＢＣ １２３") == ["abc", "123"]


def test_words_split_on_punctuation_and_keep_digits_and_underscores() -> None:
    assert words("Hello, world! It's 2024: e-mail foo_bar.") == [
        "hello",
        "world",
        "it",
        "s",
        "2024",
        "e",
        "mail",
        "foo_bar",
    ]
    assert words("") == []
    assert words("  ... !!! ") == []


# --- shingles ------------------------------------------------------------------------------------
def test_shingles_of_k_words() -> None:
    toks = ["a", "b", "c", "d"]
    assert shingles(toks, 2) == {"a b", "b c", "c d"}
    assert shingles(toks, 4) == {"a b c d"}
    assert shingles(toks, 1) == {"a", "b", "c", "d"}


def test_shingles_fewer_than_k_words_make_one_shingle() -> None:
    assert shingles(["a", "b"], 5) == {"a b"}
    assert shingles([], 3) == set()


def test_shingles_are_a_set() -> None:
    assert shingles(["a", "b", "a", "b", "a"], 2) == {"a b", "b a"}


def test_shingle_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        shingles(["a"], 0)
    with pytest.raises(ValueError, match="at least 1"):
        shingle_hashes(["a"], 0)


# --- similarities --------------------------------------------------------------------------------
def test_jaccard_exact_values() -> None:
    assert jaccard({1, 2, 3}, {2, 3, 4}) == pytest.approx(2 / 4)
    assert jaccard({1, 2}, {3, 4}) == 0.0
    assert jaccard({1, 2}, [2, 1, 1]) == 1.0
    assert jaccard(set(), set()) == 1.0
    assert jaccard({1}, set()) == 0.0


def test_containment_exact_values() -> None:
    # the smaller set {1, 2} is fully inside the larger
    assert containment({1, 2}, {1, 2, 3, 4, 5}) == 1.0
    assert containment({1, 2, 3, 4, 5}, {1, 2}) == 1.0
    assert containment({1, 2, 3, 4}, {3, 4, 5, 6, 7, 8}) == pytest.approx(2 / 4)
    assert containment(set(), {1}) == 0.0
    assert containment(set(), set()) == 0.0


def test_quick_fox_example() -> None:
    a = shingles(words("The quick brown fox jumps"), 3)
    b = shingles(words("the quick brown fox leaps"), 3)
    assert jaccard(a, b) == pytest.approx(2 / 4)


# --- stable hashes -------------------------------------------------------------------------------
FOX = "The quick brown fox jumps over the lazy dog"
# Pinned: a change to the hash function changes every stored fingerprint and must be deliberate.
GOLDEN_FOX_K3 = [
    14360821804592691295,
    11121592785142410994,
    1577987426549498455,
    12993432317827952885,
    12160694756943654696,
    16598960814406873621,
    17449387443895076020,
]
GOLDEN_FOX_K1 = [
    6262987914597377152,
    596418238614783752,
    4496347263053700,
    1034746857032539651,
    8407825633095411917,
    17490034353775761634,
    6262987914597377152,
    17844478103975061172,
    12984001197911167695,
]
GOLDEN_FINE_STRASSE_K5 = 3451472969746375051


def test_shingle_hashes_golden_values() -> None:
    toks = words(FOX)
    assert shingle_hashes(toks, 3).dtype == np.uint64
    assert [int(h) for h in shingle_hashes(toks, 3)] == GOLDEN_FOX_K3
    assert [int(h) for h in shingle_hashes(toks, 1)] == GOLDEN_FOX_K1
    # fewer words than k: one shingle of all words
    assert [int(h) for h in shingle_hashes(words("\ufb01ne Straße"), 5)] == [GOLDEN_FINE_STRASSE_K5]


def test_shingle_hashes_match_the_documented_definition() -> None:
    toks = words(FOX + " and then the dog wakes up, Straße \ufb01ne")
    for k in (1, 2, 3, 5, 8):
        expected = [_reference_shingle_hash(toks[i : i + k]) for i in range(len(toks) - k + 1)]
        assert [int(h) for h in shingle_hashes(toks, k)] == expected
    assert [int(h) for h in word_hashes(toks)] == [xxhash.xxh3_64_intdigest(w.encode()) for w in toks]


def test_repeated_shingles_hash_equal_and_are_kept() -> None:
    hashes = shingle_hashes(words(FOX), 1)
    assert hashes[0] == hashes[6]  # "the" twice
    assert len(distinct(hashes)) == len(hashes) - 1


def test_shingle_hash_of_agrees_with_shingle_hashes() -> None:
    toks = words(FOX)
    for k in (1, 3, 5):
        hashes = shingle_hashes(toks, k)
        for i in range(len(toks) - k + 1):
            assert shingle_hash_of(" ".join(toks[i : i + k])) == int(hashes[i])


def test_distinct_sorts_and_dedups() -> None:
    arr = np.array([5, 3, 5, 1, 3], dtype=np.uint64)
    assert distinct(arr).tolist() == [1, 3, 5]
    assert distinct(np.array([7], dtype=np.uint64)).tolist() == [7]
    assert distinct(np.empty(0, dtype=np.uint64)).tolist() == []


_token = st.text(alphabet="abcdefghijklmnopqrstuvwxyzäöüß0123456789", min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(_token, max_size=40), st.integers(min_value=1, max_value=10))
def test_shingle_hashes_length(tokens: list[str], k: int) -> None:
    n = len(tokens)
    expected = 0 if n == 0 else (1 if n < k else n - k + 1)
    assert len(shingle_hashes(tokens, k)) == expected
    # as many distinct hashes as distinct shingle strings (no collisions on tiny inputs)
    assert len(distinct(shingle_hashes(tokens, k))) == len(shingles(tokens, k))


def test_shingles_of_a_text_are_shingles_of_its_words() -> None:
    text = "The quick, brown fox -- jumps over the lazy dog."
    assert shingles(text, 2) == shingles(words(text), 2)
    assert shingles("abc def", 2) == {"abc def"}
    assert shingles("", 3) == set()
