"""The buckets of a MinHash candidate search too large to expand into pairs, per band: what a replay of the
search on one pair (`evidence.trace_minhash`) needs to know of every other signature.

A bucket holds the units whose signatures are equal in one band (the one LSH index's bands, or a size-class
band of the pass for partial copies, `candidates.containment_lsh_pairs`); one of more than
`candidate_stats.BUCKET_CAP` units is not expanded. Counting a pair's bucket reads every unit's signature
(half a gigabyte at a million units); the buckets above the cap are a handful per band, counted once per
fingerprint set (`count_capped_buckets`) and kept in the store, so a replay reads two signatures and looks
its buckets up. A bucket is named by the 64-bit key the search sorts it by (`candidates.band_keys`,
`candidates.size_class_keys`): two different band rows with one key (about 2^-64 a pair) count as one bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from .candidate_stats import BUCKET_CAP, SizeClassTables
from .candidates import (
    band_key_columns,
    band_keys,
    lsh_params,
    lsh_threshold,
    partial_copy_ratio,
    size_class_key_columns,
    size_class_keys,
    size_class_tables,
    size_classes,
)
from .config import Config

INDEX = -1  # the `table` of the one LSH index's bands; a size-class pass's tables are numbered from 0
# A band's keys are first counted by their low bits (a bincount): only the keys in a bin of more than the
# cap are kept and counted exactly. 2^16 bins hold ~50 entries each at a million units (the size-class
# bands hold three per unit), so a bin over a cap of 2,000 is one that holds a bucket of about that size.
_BINS = 1 << 16


@dataclass(frozen=True, slots=True)
class CappedBuckets:
    """The buckets of more than `bucket_cap` units of one fingerprint set's candidate search: each one's
    `table` (`INDEX`, or the number of a size-class pass's `SizeClassTables`), band, key and size."""

    bucket_cap: int
    table: np.ndarray  # int64
    band: np.ndarray  # int64
    bucket: np.ndarray  # uint64
    size: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.size)

    def size_of(self, table: int, band: int, bucket: int) -> int | None:
        """The size of a bucket over the cap; None: the bucket holds at most `bucket_cap` units."""
        at = np.flatnonzero((self.table == table) & (self.band == band) & (self.bucket == np.uint64(bucket)))
        return int(self.size[at[0]]) if len(at) else None


def no_capped_buckets(bucket_cap: int = BUCKET_CAP) -> CappedBuckets:
    return CappedBuckets(
        bucket_cap,
        np.empty(0, np.int64),
        np.empty(0, np.int64),
        np.empty(0, np.uint64),
        np.empty(0, np.int64),
    )


def index_params(config: Config, num_perm: int) -> tuple[int, int]:
    """The one LSH index's (bands, rows) for `config`, as `candidates.minhash_pairs` derives them."""
    return lsh_params(lsh_threshold(config.minhash_floor, config.similarity, config.min_size_ratio), num_perm)


def size_class_pass(config: Config, num_perm: int) -> list[SizeClassTables]:
    """The size-class pass's tables for `config` (none where it runs no such pass)."""
    if not config.searches_partial_copies:
        return []
    return size_class_tables(partial_copy_ratio(config.min_size_ratio), num_perm)


def index_bucket(signature: np.ndarray, band: int, rows: int) -> int:
    """The key of the one index's bucket that holds `signature` (one unit's) in `band`."""
    block = np.ascontiguousarray(signature[band * rows : (band + 1) * rows], dtype=np.uint32)[None, :]
    return int(band_keys(block)[0])


def size_class_bucket(signature: np.ndarray, size_class: int, tables: SizeClassTables, band: int) -> int:
    """The key of the size-class bucket in `band` of `tables` that indexes `signature` (a unit of class
    `size_class`): the bucket its queries from the classes below meet it in."""
    rows = tables.rows
    block = np.ascontiguousarray(signature[band * rows : (band + 1) * rows], dtype=np.uint32)[None, :]
    keys = size_class_keys(block, np.array([size_class], dtype=np.int64), tables.distances)
    return int(keys[0] >> np.uint64(1))


def _bucket_keys(
    sigs: np.ndarray, size_class: np.ndarray, config: Config
) -> Iterator[tuple[tuple[int, int], np.ndarray]]:
    """((table, band), the bucket key of each entry) of every band the search of `config` sorts `sigs`
    (rows of units of classes `size_class`) into."""
    bands, rows = index_params(config, sigs.shape[1])
    for band, keys in band_key_columns(sigs, bands, rows):
        yield (INDEX, band), keys
    for number, tables in enumerate(size_class_pass(config, sigs.shape[1])):
        for band, keys in size_class_key_columns(sigs, size_class, tables):
            yield (number, band), keys >> np.uint64(1)  # the lowest bit tells a query from an indexed entry


def _bins(keys: np.ndarray) -> np.ndarray:
    return (keys & np.uint64(_BINS - 1)).astype(np.intp)


def count_capped_buckets(
    batches: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]],
    n_shingles: np.ndarray,
    config: Config,
    *,
    bucket_cap: int = BUCKET_CAP,
) -> CappedBuckets:
    """The buckets over `bucket_cap` of the candidate search of `config` (MinHash): the one index's, and the
    size-class pass's where the setting runs it. `batches()` gives (unit ids, their signatures) of every unit
    of the set once, a batch at a time; `n_shingles` is every unit's set size, by unit id.

    Two passes over the batches, each holding one batch and its keys: the first counts each band's keys by
    their low bits, the second keeps the keys in a bin of more than the cap and counts them exactly."""
    size_class = size_classes(np.asarray(n_shingles))
    bins: dict[tuple[int, int], np.ndarray] = {}
    for units, sigs in batches():
        for at, keys in _bucket_keys(np.ascontiguousarray(sigs, dtype=np.uint32), size_class[units], config):
            counts = np.bincount(_bins(keys), minlength=_BINS)
            bins[at] = counts if at not in bins else bins[at] + counts
    crowded = {at: counts > bucket_cap for at, counts in bins.items() if (counts > bucket_cap).any()}
    if not crowded:
        return no_capped_buckets(bucket_cap)
    kept: dict[tuple[int, int], list[np.ndarray]] = {at: [] for at in crowded}
    for units, sigs in batches():
        for at, keys in _bucket_keys(np.ascontiguousarray(sigs, dtype=np.uint32), size_class[units], config):
            if at in crowded:
                kept[at].append(keys[crowded[at][_bins(keys)]])
    tables, bands, buckets, sizes = [], [], [], []
    for (table, band), parts in sorted(kept.items()):
        values, counts = np.unique(np.concatenate(parts), return_counts=True)
        over = counts > bucket_cap
        tables.append(np.full(int(over.sum()), table, np.int64))
        bands.append(np.full(int(over.sum()), band, np.int64))
        buckets.append(values[over].astype(np.uint64))
        sizes.append(counts[over].astype(np.int64))
    return CappedBuckets(
        bucket_cap,
        np.concatenate(tables),
        np.concatenate(bands),
        np.concatenate(buckets),
        np.concatenate(sizes),
    )
