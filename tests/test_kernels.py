"""The compiled kernels (neardup/_kernels.c) give exactly the values of the numpy / `re` reference path."""

from __future__ import annotations

import gzip
import hashlib
import json
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.batches import text_row
from neardup.candidates import band_keys, size_class_keys
from neardup.config import Config
from neardup.minhash import minhash_many, permutations
from neardup.shingles import (
    distinct,
    kernels,
    shingle_hashes,
    shingle_set32,
    shingle_set32_of,
    text_words,
    word_hashes,
    words,
)
from neardup.simhash import simhash_many
from neardup.sketch import sketch_many

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "crawl.jsonl.gz"

# Letters, digits, marks, punctuation, symbols and separators from several scripts, plus characters
# that NFKC or case folding change (ligatures, full-width forms, sharp s, dotted I, superscripts).
ALPHABET = st.sampled_from(
    list("abcXYZ019_ -.,;:!?'\"\t\n")
    + list("ßİıﬁﬀ²³½ＡＢｃ①ǅΣσςДжé\u0301\u0300中文字日本語한국어\u200b\u00a0")
    + ["\U0001f600", "\U0001d400", "\u0663", "\u2167", "\u00ad", "\ufeff"]
)


def test_the_kernels_are_built() -> None:
    # `pip install` compiles them; a silent fall-back to the reference path would cost 4x the CPU.
    assert kernels is not None


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(alphabet=ALPHABET, max_size=200), st.text(max_size=200)))
def test_tokenize_equals_words_and_word_hashes(text: str) -> None:
    joined, hashes = text_words(text)
    toks = words(text)
    assert joined == " ".join(toks).encode("utf-8")
    assert hashes.dtype == np.uint64
    assert hashes.tolist() == word_hashes(toks).tolist()
    ref_joined, ref_hashes = text_words(text, compiled=False)
    assert (joined, hashes.tolist()) == (ref_joined, ref_hashes.tolist())


def test_tokenize_pinned_values() -> None:
    joined, hashes = text_words("The Straße, ﬁne_print 2²!")
    assert joined == b"the strasse fine_print 22"
    # XXH3-64 (seed 0) of b"the": pinned so that the word hash can never drift between builds.
    assert int(hashes[0]) == 0xCB1283631CF33D7D


def test_tokenize_rejects_bytes() -> None:
    with pytest.raises(TypeError):
        kernels.tokenize(b"bytes are not text")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=2**64 - 1), max_size=300),
    st.integers(min_value=1, max_value=9),
    st.sampled_from([16, 128]),
    st.integers(min_value=0, max_value=3),
)
def test_sketch_equals_the_numpy_path(values: list[int], k: int, num_perm: int, seed: int) -> None:
    # Few distinct words, so that shingles repeat and the distinct count matters.
    wh = np.array([v % 7 if i % 3 else v for i, v in enumerate(values)], dtype=np.uint64)
    fast = sketch_many([wh], k, num_perm, seed)
    ref = sketch_many([wh], k, num_perm, seed, compiled=False)
    assert fast.n_shingles.tolist() == ref.n_shingles.tolist()
    assert fast.simhash.tolist() == ref.simhash.tolist()
    assert np.array_equal(fast.minhash, ref.minhash)
    assert shingle_set32_of(wh, k).tolist() == shingle_set32_of(wh, k, compiled=False).tolist()


def test_sketch_of_real_pages_matches_the_reference() -> None:
    texts = [text_row(rec["html"], None, None, Config())["text"] for rec in _sample_records(300)]
    fast = sketch_many([text_words(t)[1] for t in texts], 5)
    docs = [distinct(shingle_hashes(words(t), 5)) for t in texts]
    assert fast.n_shingles.tolist() == [len(d) for d in docs]
    assert fast.simhash.tolist() == simhash_many(docs, distinct=True).tolist()
    assert np.array_equal(fast.minhash, minhash_many(docs, 128, 1, distinct=True))


def test_empty_and_short_documents() -> None:
    a, b = permutations(128, 1)
    assert kernels.sketch(np.empty(0, np.uint64), 5, a, b) == (0, 0, b"\xff" * 512)
    two = word_hashes(["just", "two"])
    n, fp, sig = kernels.sketch(two, 5, a, b)  # fewer words than k: one shingle of all of them
    assert n == 1
    assert fp == int(simhash_many([shingle_hashes(["just", "two"], 5)])[0])
    assert shingle_set32_of(two, 5).tolist() == shingle_set32(["just", "two"], 5).tolist()


def test_exact_key_is_the_sha256_of_the_joined_words() -> None:
    row = text_row(None, "Hello,   World! hello world", None, Config())
    assert row["exact_key"] == hashlib.sha256(b"hello world hello world").hexdigest()
    assert row["n_words"] == 4


@pytest.mark.parametrize("bad", [np.zeros(3, np.uint16), b"1234567"])
def test_sketch_rejects_buffers_of_the_wrong_width(bad: object) -> None:
    a, b = permutations(128, 1)
    with pytest.raises(ValueError):
        kernels.sketch(bad, 5, a, b)


def test_sketch_rejects_mismatched_permutations() -> None:
    a, b = permutations(128, 1)
    with pytest.raises(ValueError):
        kernels.sketch(np.arange(10, dtype=np.uint64), 5, a, b[:64])
    with pytest.raises(ValueError):
        kernels.sketch(np.arange(10, dtype=np.uint64), 0, a, b)


def _sample_records(n: int) -> list[dict]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in islice(f, n)]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 40),
    width=st.integers(1, 40),
    lo=st.integers(0, 39),
    rows=st.integers(1, 8),
    step=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_band_keys_equal_the_numpy_path(n: int, width: int, lo: int, rows: int, step: int, seed: int) -> None:
    """On a column slice of a signature matrix (every `step`-th row too): the keys numpy computes."""
    sigs = np.random.default_rng(seed).integers(0, 2**32, size=(n, max(width, lo + rows)), dtype=np.uint32)
    block = sigs[::step, lo : lo + rows]
    got = band_keys(block)
    assert got.dtype == np.uint64 and np.array_equal(got, band_keys(block, compiled=False))


def test_band_keys_rejects_a_block_of_another_shape() -> None:
    with pytest.raises(ValueError, match="band_keys"):
        kernels.band_keys(np.zeros((4, 3), np.uint32), np.empty(3, np.uint64))
    with pytest.raises(ValueError, match="band_keys"):
        kernels.band_keys(np.zeros(4, np.uint32), np.empty(4, np.uint64))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.binary(max_size=300)
        | st.integers(min_value=0, max_value=200_000).map(
            lambda n: bytes(range(256)) * (n // 256) + b"x" * (n % 7)
        ),
        max_size=40,
    )
)
def test_md5_many_is_hashlib_md5_of_each(pages: list[bytes]) -> None:
    # lengths around the padding's edges (55, 56, 64) and messages of many blocks in lanes that finish apart
    assert kernels.md5_many(pages) == [hashlib.md5(p).hexdigest() for p in pages]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(ALPHABET, max_size=200), max_size=20))
def test_md5_many_of_a_str_is_the_md5_of_its_utf8(pages: list[str]) -> None:
    assert kernels.md5_many(pages) == [hashlib.md5(p.encode("utf-8")).hexdigest() for p in pages]
    assert [kernels.utf8_size(p) for p in pages] == [len(p.encode("utf-8")) for p in pages]


def test_md5_many_and_utf8_size_refuse_a_lone_surrogate() -> None:
    with pytest.raises(UnicodeEncodeError):
        kernels.md5_many(["ok", "\ud800"])
    with pytest.raises(UnicodeEncodeError):
        kernels.utf8_size("\udfff")
    with pytest.raises(TypeError):
        kernels.md5_many([1])  # type: ignore[list-item]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 30),
    rows=st.integers(1, 6),
    step=st.integers(1, 3),
    distances=st.lists(st.integers(1, 6), max_size=4),
    seed=st.integers(0, 2**32 - 1),
)
def test_size_class_keys_equal_the_numpy_path(
    n: int, rows: int, step: int, distances: list[int], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    block = rng.integers(0, 2**32, size=(n, 20), dtype=np.uint32)[::step, 3 : 3 + rows]
    size_class = rng.integers(0, 40, size=len(block))
    got = size_class_keys(block, size_class, distances)
    assert np.array_equal(got, size_class_keys(block, size_class, distances, compiled=False))


def test_size_class_keys_rejects_arrays_that_do_not_fit() -> None:
    block, own, dist = np.zeros((4, 3), np.uint32), np.zeros(4, np.int64), np.array([2, 3], np.int64)
    with pytest.raises(ValueError, match="size_class_keys"):
        kernels.size_class_keys(block, own, dist, np.empty(8, np.uint64))  # needs 4 * 3
    with pytest.raises(ValueError, match="size_class_keys"):
        kernels.size_class_keys(block, own[:3], dist, np.empty(12, np.uint64))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=300),
    st.lists(st.integers(0, 2**64 - 1), max_size=40),
    st.integers(0, 63),
    st.integers(0, 5),
)
def test_members_in_finds_the_keys_the_numpy_path_finds(
    keys: list[int], others: list[int], shift: int, repeats: int
) -> None:
    """The compiled lookup of `incremental._positions_in` against its numpy path: keys drawn from the
    wanted values (shifted back), others not, low bits alike and not."""
    from neardup.stages.incremental import _positions_in

    arr = np.array(keys + [k << shift & (2**64 - 1) for k in others] * repeats, dtype=np.uint64)
    wanted = np.unique(np.array(others + keys[:3], dtype=np.uint64) >> np.uint64(shift))
    got = _positions_in(arr, wanted, shift=shift)
    expected = _positions_in(arr, wanted, shift=shift, compiled=False)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(expected, np.flatnonzero(np.isin(arr >> np.uint64(shift), wanted)))


def test_members_in_checks_its_arguments() -> None:
    keys = np.arange(10, dtype=np.uint64)
    with pytest.raises(ValueError):
        kernels.members_in(keys, 64, keys, np.empty(10, np.int64))
    with pytest.raises(ValueError):
        kernels.members_in(keys, 0, keys, np.empty(9, np.int64))
    assert kernels.members_in(keys, 0, np.empty(0, np.uint64), np.empty(10, np.int64)) == 0
