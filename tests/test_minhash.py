"""MinHash signatures: bit-identical to datasketch; estimates close to exact values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from conftest import modules_imported_by
from datasketch import MinHash
from oracles import lean

from neardup.minhash import (
    EMPTY,
    estimate_containment,
    estimate_jaccard,
    minhash_many,
    permutations,
)
from neardup.shingles import jaccard, shingle_hashes, words

_VOCAB = [f"w{i}" for i in range(3000)]


def _datasketch_signature(hashes: np.ndarray, num_perm: int = 128, seed: int = 1) -> np.ndarray:
    m = MinHash(num_perm=num_perm, seed=seed, hashfunc=int)
    if len(hashes):
        m.update_batch([int(h) & 0xFFFFFFFF for h in hashes])
    return np.asarray(m.hashvalues)


def _docs() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    docs = [shingle_hashes(words(" ".join(rng.choice(_VOCAB, size=n))), 5) for n in (1, 3, 10, 80, 700, 3000)]
    docs.append(np.empty(0, dtype=np.uint64))
    # repeated values, and two 64-bit hashes that share their low 32 bits
    docs.append(np.array([7, 7, 7, (1 << 40) + 7, 123456789], dtype=np.uint64))
    docs.append(rng.integers(0, 2**63, size=50_000, dtype=np.uint64))  # more than one chunk
    return docs


def test_minhash_many_equals_datasketch() -> None:
    docs = _docs()
    sigs = minhash_many(docs, 128, 1)
    assert sigs.shape == (len(docs), 128)
    assert sigs.dtype == np.uint32
    for doc, sig in zip(docs, sigs, strict=True):
        assert np.array_equal(sig, _datasketch_signature(doc))


@pytest.mark.parametrize(("num_perm", "seed"), [(64, 1), (256, 42)])
def test_minhash_many_equals_datasketch_other_settings(num_perm: int, seed: int) -> None:
    docs = _docs()[:6]
    sigs = minhash_many(docs, num_perm, seed)
    for doc, sig in zip(docs, sigs, strict=True):
        assert np.array_equal(sig, _datasketch_signature(doc, num_perm, seed))


def test_empty_document_gets_the_empty_signature() -> None:
    sig = minhash_many([np.empty(0, dtype=np.uint64)])[0]
    assert (sig == EMPTY).all()
    assert np.array_equal(sig, MinHash(num_perm=128, seed=1).hashvalues)


def test_distinct_true_gives_the_same_signatures() -> None:
    docs = _docs()
    deduped = [np.unique(d) for d in docs]
    assert np.array_equal(minhash_many(deduped, distinct=True), minhash_many(docs))
    # repeats do not change a minimum either, even unflagged
    doubled = [np.concatenate([d, d]) for d in docs]
    assert np.array_equal(minhash_many(doubled, distinct=True), minhash_many(docs))


def test_batching_does_not_change_a_signature() -> None:
    docs = _docs()
    together = minhash_many(docs)
    alone = np.vstack([minhash_many([d]) for d in docs])
    assert np.array_equal(together, alone)


@pytest.mark.parametrize(("num_perm", "seed"), [(128, 1), (256, 7), (64, 2**32 - 1), (1, 0)])
def test_permutations_are_datasketchs_for_any_size_and_seed(num_perm: int, seed: int) -> None:
    a, b = permutations(num_perm, seed)
    ref = MinHash(num_perm=num_perm, seed=seed, scheme="affine32").permutations
    assert a.dtype == b.dtype == np.uint32
    assert np.array_equal(a, ref[0]) and np.array_equal(b, ref[1])
    assert (a % 2 == 1).all()  # odd: each permutation is a bijection of the 32-bit values


def test_sketching_does_not_import_datasketch() -> None:
    """Every ingest worker sketches; datasketch pulls in scipy (~0.4 CPU-s an import), so the permutations are
    drawn without it."""
    loaded = modules_imported_by(
        "import numpy as np\nfrom neardup.sketch import sketch_many\n"
        "sketch_many([np.arange(40, dtype=np.uint64)], 5)"
    )
    assert "neardup.sketch" in loaded
    assert not {"datasketch", "scipy"} & loaded


def test_lean_wraps_the_signature() -> None:
    sig = minhash_many([_docs()[3]])[0]
    lm = lean(sig, seed=1)
    assert np.array_equal(lm.hashvalues, sig)
    assert lm.jaccard(lean(sig, seed=1)) == 1.0


def test_estimate_jaccard_close_to_exact() -> None:
    rng = np.random.default_rng(3)
    universe = rng.choice(2**62, size=20_000, replace=False).astype(np.uint64)
    for shared in (0.2, 0.5, 0.8, 0.95):
        n = 4000
        n_shared = int(n * shared)
        a = universe[:n]
        b = np.concatenate([universe[:n_shared], universe[10_000 : 10_000 + n - n_shared]])
        sig = minhash_many([a, b])
        est = float(estimate_jaccard(sig[0], sig[1]))
        exact = jaccard(a.tolist(), b.tolist())
        assert abs(est - exact) < 0.1, (shared, est, exact)


def test_estimate_jaccard_rowwise() -> None:
    x = np.array([[1, 2, 3, 4], [1, 1, 1, 1]], dtype=np.uint32)
    y = np.array([[1, 2, 0, 0], [1, 1, 1, 1]], dtype=np.uint32)
    assert estimate_jaccard(x, y).tolist() == [0.5, 1.0]
    sig = minhash_many([np.arange(100, dtype=np.uint64)])[0]
    assert float(estimate_jaccard(sig, sig)) == 1.0


def test_estimate_containment_formula() -> None:
    # |A| = 100 inside |B| = 400: J = 100/400 = 0.25, |A & B| = J/(1+J) * 500 = 100, containment = 1
    assert estimate_containment(np.array([0.25]), np.array([100]), np.array([400])).tolist() == [1.0]
    # |A| = |B| = 100, |A & B| = 50: J = 50/150
    assert float(estimate_containment(1 / 3, 100, 100)) == pytest.approx(0.5)
    # order of the two sizes does not matter
    assert float(estimate_containment(0.2, 50, 200)) == pytest.approx(
        float(estimate_containment(0.2, 200, 50))
    )
    assert float(estimate_containment(0.2, 50, 200)) == pytest.approx(0.2 / 1.2 * 250 / 50)
    # clipped to [0, 1]: an over-estimated J cannot give containment above 1
    assert float(estimate_containment(0.9, 10, 1000)) == 1.0
    assert float(estimate_containment(0.0, 10, 1000)) == 0.0
    # an empty set does not divide by zero
    assert float(estimate_containment(0.0, 0, 0)) == 0.0


def test_estimated_containment_close_to_exact() -> None:
    rng = np.random.default_rng(5)
    big = rng.choice(2**62, size=4000, replace=False).astype(np.uint64)
    small = np.concatenate([big[:900], rng.choice(2**62, size=100).astype(np.uint64) | np.uint64(2**62)])
    sig = minhash_many([small, big])
    est = float(estimate_containment(estimate_jaccard(sig[0], sig[1]), 1000, 4000))
    assert abs(est - 0.9) < 0.15


def test_signature_matrix_reads_the_stored_bytes_as_signatures() -> None:
    from neardup.batches import signature_matrix, signatures

    rng = np.random.default_rng(3)
    sigs = rng.integers(0, 2**32, size=(7, 16), dtype=np.uint32)
    blobs = [row.tobytes() for row in sigs]
    column = pa.chunked_array([pa.array(blobs[:3], pa.binary()), pa.array(blobs[3:], pa.binary())])
    np.testing.assert_array_equal(signature_matrix(16, column), sigs)
    np.testing.assert_array_equal(signature_matrix(16, pa.array(blobs, pa.binary()).slice(2, 4)), sigs[2:6])
    np.testing.assert_array_equal(signature_matrix(16, pa.array(blobs, pa.large_binary())), sigs)
    np.testing.assert_array_equal(signature_matrix(16, column.slice(1, 3), blobs[5:]), sigs[[1, 2, 3, 5, 6]])
    assert signature_matrix(16, pa.chunked_array([], pa.binary()), []).shape == (0, 16)
    odd = [blobs[0][:60], blobs[1] + blobs[2][:4]]  # not 64 bytes each: the bytes objects' path
    np.testing.assert_array_equal(signature_matrix(16, pa.array(odd, pa.binary())), signatures(odd, 16))
    with pytest.raises(ValueError):
        signature_matrix(16, pa.array([blobs[0], None], pa.binary()))
