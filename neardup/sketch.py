"""Both fingerprints of many documents at once, from their word hashes: the per-page unit of work of
ingest, re-sketching and the Spark path.

Per document: the number of distinct k-shingle hashes, the 64-bit SimHash of them and the MinHash
signature of their low 32 bits. The compiled kernel (`neardup/_kernels.c`) does all three in one pass
per document; without it, `shingle_hashes_of` + `simhash_many` + `minhash_many` (numpy, in batches)
compute the same values, which the tests compare.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .minhash import minhash_many, permutations
from .shingles import distinct, kernels, shingle_hashes_of
from .simhash import simhash_many


class Sketches(NamedTuple):
    n_shingles: np.ndarray  # int32: distinct shingles per document
    simhash: np.ndarray  # uint64
    minhash: np.ndarray  # uint32, documents x num_perm


def sketch_many(
    word_hashes: Sequence[np.ndarray], k: int, num_perm: int = 128, seed: int = 1, *, compiled: bool = True
) -> Sketches:
    """SimHash and MinHash of each document, given as its word hashes (uint64 arrays)."""
    n = len(word_hashes)
    if compiled and kernels is not None:
        a, b = permutations(num_perm, seed)
        sizes = np.empty(n, dtype=np.int32)
        fps = np.empty(n, dtype=np.uint64)
        sigs = bytearray()
        for i, wh in enumerate(word_hashes):
            sizes[i], fps[i], sig = kernels.sketch(wh, k, a, b)
            sigs += sig
        return Sketches(sizes, fps, np.frombuffer(bytes(sigs), dtype=np.uint32).reshape(n, num_perm))
    docs = [distinct(shingle_hashes_of(wh, k)) for wh in word_hashes]
    sizes = np.fromiter((len(d) for d in docs), dtype=np.int32, count=n)
    return Sketches(
        sizes, simhash_many(docs, distinct=True), minhash_many(docs, num_perm, seed, distinct=True)
    )
