"""Words, shingles and set similarities.

Shingle hashes are stable across runs, processes and machines: a word hashes to XXH3-64 of its
UTF-8 bytes (seed 0); a shingle of words w1..wk hashes to fmix64(sum_i h(wi) * P**(k-i) mod 2**64),
with P = 0x100000001B3 (the FNV prime) and fmix64 the MurmurHash3 64-bit finalizer. All arithmetic is
on uint64 with wrap-around, so numpy computes it for a whole document at once.

The bulk paths (`text_words`, `shingle_set32_of`, and `neardup.sketch`) run in the compiled kernels
of `neardup/_kernels.c` when they are built (`pip install` builds them with the system's C compiler),
and fall back to the numpy code here otherwise; tests prove the two give the same values.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Iterable, Sequence

import numpy as np
import xxhash

try:
    from . import _kernels as kernels
except ImportError:  # installed without a C compiler: the numpy reference path, same values, slower
    kernels = None  # type: ignore[assignment]

_WORD = re.compile(r"\w+")
_P = np.uint64(0x100000001B3)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


class _WordHashCache(dict[str, int]):
    """word -> XXH3-64; a miss computes and stores (lookups stay in C via map(__getitem__))."""

    def __missing__(self, word: str) -> int:
        h = self[word] = xxhash.xxh3_64_intdigest(word.encode("utf-8"))
        return h


_word_hash_cache = _WordHashCache()
_WORD_CACHE_LIMIT = 2_000_000


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    """Tokens: runs of word characters after NFKC normalization and case folding."""
    return _WORD.findall(_fold(text))


def text_words(text: str, *, compiled: bool = True) -> tuple[bytes, np.ndarray]:
    """The words of `text` as (their UTF-8 joined by single spaces, `word_hashes` of them), in one pass:
    what `words` then `word_hashes` give, without a Python string per word. `compiled=False` forces the
    reference path."""
    if compiled and kernels is not None:
        joined, hashes = kernels.tokenize(_fold(text))
        return joined, np.frombuffer(hashes, dtype=np.uint64)
    toks = words(text)
    return " ".join(toks).encode("utf-8"), word_hashes(toks)


def shingles(tokens: str | Sequence[str], k: int) -> set[str]:
    """Set of k consecutive words joined by one space; fewer than k words make one shingle of all.

    `tokens` is a text (split with `words`) or a sequence of tokens already split."""
    if k < 1:
        raise ValueError("shingle size must be at least 1")
    if isinstance(tokens, str):  # a str is a Sequence[str] of characters: never what is meant
        tokens = words(tokens)
    if not tokens:
        return set()
    if len(tokens) < k:
        return {" ".join(tokens)}
    return {" ".join(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def shingle_tuples(tokens: Sequence[str], k: int) -> set[tuple[str, ...]]:
    """`shingles(tokens, k)` as tuples of words rather than words joined by a space: the same set, one to
    one (a word of `words` holds no space), built without a string per shingle (comparing two texts' sets)."""
    if len(tokens) < k:
        return {tuple(tokens)} if tokens else set()
    return set(zip(*(tokens[i:] for i in range(k)), strict=False))


def jaccard(a: Iterable[Hashable], b: Iterable[Hashable]) -> float:
    """Exact Jaccard similarity |A & B| / |A | B| of two sets (1.0 for two empty sets)."""
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 1.0


def containment(a: Iterable[Hashable], b: Iterable[Hashable]) -> float:
    """Broder's containment of the smaller set in the larger: |A & B| / min(|A|, |B|)."""
    sa, sb = set(a), set(b)
    smaller = min(len(sa), len(sb))
    return len(sa & sb) / smaller if smaller else 0.0


def word_hashes(tokens: Sequence[str]) -> np.ndarray:
    """XXH3-64 of each word, as uint64 (memoized: crawl vocabularies repeat)."""
    if len(_word_hash_cache) > _WORD_CACHE_LIMIT:
        _word_hash_cache.clear()
    return np.fromiter(map(_word_hash_cache.__getitem__, tokens), dtype=np.uint64, count=len(tokens))


def fmix64(h: np.ndarray) -> np.ndarray:
    """The MurmurHash3 64-bit finalizer, elementwise (wraps mod 2**64)."""
    h = h ^ (h >> _S33)
    h = h * _C1
    h = h ^ (h >> _S33)
    h = h * _C2
    return h ^ (h >> _S33)


def shingle_hashes(tokens: Sequence[str], k: int) -> np.ndarray:
    """64-bit hashes of the document's k-shingles, in order, duplicates kept (uint64 array)."""
    return shingle_hashes_of(word_hashes(tokens), k)


def shingle_hashes_of(wh: np.ndarray, k: int) -> np.ndarray:
    """`shingle_hashes` from the word hashes of a document."""
    if k < 1:
        raise ValueError("shingle size must be at least 1")
    n = len(wh)
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    width = min(k, n)
    m = n - width + 1
    with np.errstate(over="ignore"):
        acc = wh[:m].copy()
        for j in range(1, width):
            acc = acc * _P + wh[j : j + m]
        return fmix64(acc)


def shingle_hash_of(shingle: str) -> int:
    """Hash of one shingle string, equal to the entry `shingle_hashes` gives for it."""
    return int(shingle_hashes(shingle.split(" "), len(shingle.split(" ")))[0])


def shingle_set32(tokens: Sequence[str], k: int) -> np.ndarray:
    """The document's distinct shingles as sorted uint32: the low 32 bits of `shingle_hashes`, i.e.
    exactly the values MinHash sketches. Exact verification intersects these sets."""
    return shingle_set32_of(word_hashes(tokens), k, compiled=False)


def shingle_set32_of(wh: np.ndarray, k: int, *, compiled: bool = True) -> np.ndarray:
    """`shingle_set32` from the word hashes of a document."""
    if compiled and kernels is not None:
        return np.frombuffer(kernels.shingle_set32(wh, k), dtype=np.uint32)
    return distinct(shingle_hashes_of(wh, k).astype(np.uint32))


def distinct(hashes: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort and a mask: faster than np.unique's hash path for uint64 here)."""
    if len(hashes) < 2:
        return hashes.copy()
    s = np.sort(hashes)
    return s[np.concatenate(([True], s[1:] != s[:-1]))]
