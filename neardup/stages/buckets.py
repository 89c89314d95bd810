"""The buckets of a MinHash fingerprint set's candidate search too large to expand (`capped_buckets`),
counted once per set from its stored signatures, a batch at a time, and kept in the store while the set
is the one counted."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from ..batches import signature_matrix
from ..candidate_stats import BUCKET_CAP
from ..capped_buckets import CappedBuckets, count_capped_buckets
from ..config import Config
from ..errors import NeardupError
from ..store import Store


def ensure_capped_buckets(store: Store, config: Config, *, bucket_cap: int = BUCKET_CAP) -> CappedBuckets:
    """The capped buckets of `config`'s stored MinHash fingerprint set: read from the store when they were
    counted for the set there is, else counted (two reads of every signature, one batch held at a time)
    and kept. A file that cannot be written now (read-only, or locked by another process) keeps none: the
    next call counts again."""
    if config.method != "minhash":
        raise ValueError("capped buckets are a MinHash candidate search's")
    key = config.fingerprint_key
    fset = store.fingerprint_set(key)
    if fset is None:
        raise NeardupError(f"no fingerprint set {key} is stored: compute it first")
    stored = store.capped_buckets(key)
    if (
        stored is not None
        and stored.n_units == fset.n_units
        and stored.set_computed_at == fset.computed_at
        and stored.bucket_cap == bucket_cap
    ):
        c = stored.columns
        return CappedBuckets(
            bucket_cap,
            c["lsh_table"].astype(np.int64),
            c["band"].astype(np.int64),
            c["bucket"].astype(np.uint64),
            c["size"].astype(np.int64),
        )
    n_shingles = store.units(key, with_exact_keys=False)["n_shingles"].to_numpy(dtype=np.int64)

    def batches() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for units, column in store.unit_signature_batches(key):
            yield units, signature_matrix(config.num_perm, column)

    counted = count_capped_buckets(batches, n_shingles, config, bucket_cap=bucket_cap)
    with contextlib.suppress(NeardupError):  # not writable now
        store.save_capped_buckets(
            key,
            n_units=fset.n_units,
            set_computed_at=fset.computed_at,
            bucket_cap=bucket_cap,
            lsh_table=counted.table,
            band=counted.band,
            bucket=counted.bucket,
            size=counted.size,
        )
    return counted
