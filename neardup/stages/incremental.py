"""The incremental fingerprints stage: a stored set brought up to date when a crawl is added, the new texts
against every stored one.

A stored fingerprint set keeps its unit ids: the units (distinct content texts) a later crawl brings are
numbered after the stored ones (in exact_key order among themselves). A full computation numbers all units
in exact_key order instead; ids are internal, and everything shown (pairs of pages, scores, clusters, the
report) is the same either way. The pairs among stored units stay as stored; the new units are looked up
in the same LSH bands (MinHash; under `partial_copies` also the size-class tables of
`candidates.containment_lsh_pairs`) or pigeonhole tables (SimHash) a full computation builds over all
units, their candidate pairs with any unit are verified the same way (MinHash estimates, then the exact
shingle sets for `verify: exact`), and the pairs that pass are appended. tests/test_incremental.py checks
the result against a full computation.

Two things a new unit can change make the full computation differ from stored pairs plus new ones: a bucket
that grows past `BUCKET_CAP` while it holds a stored pair (the full computation no longer expands it) and,
for SimHash, a unit count at which `choose_r` picks other tables (the statistics differ). Then this returns
None and the caller computes everything again.

What this costs grows with the new units except for one pass over the stored fingerprints: each band's
keys of every unit are hashed and the new units' keys looked up among them (a linear scan, no sort of the
whole set and no pair of two stored units).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from itertools import combinations

import numpy as np
import pandas as pd

from ..batches import signature_matrix
from ..candidate_stats import BUCKET_CAP, CandidateStats
from ..candidates import (
    band_key_columns,
    block_masks,
    choose_r,
    concat_ranges,
    containment_lsh_pairs,
    lsh_params,
    lsh_threshold,
    partial_copy_ratio,
    verify_pairs,
)
from ..config import Config
from ..fingerprint_set import FingerprintSet, stored_stats
from ..shingles import kernels
from ..simhash import hamming_many
from ..store import Store
from .base import Progress, no_progress
from .fingerprints import added_since
from .pairs import UnitPairs, verified_exactly
from .sketches import ensure_sketches


class BucketCapped(Exception):
    """A bucket with a new unit holds more than `BUCKET_CAP` units: the full computation is needed."""


def _positions_in(
    keys: np.ndarray, wanted: np.ndarray, *, shift: int = 0, compiled: bool = True
) -> np.ndarray:
    """The positions (ascending) of `keys` whose value >> `shift` is a value of `wanted` (sorted, distinct
    uint64). The keys are hashes, uniform in their low bits: a table of the wanted values' low bits (about 1
    in 64 entries set) rules out most keys with one look each, and only the rest are searched in `wanted` (a
    binary search of every key costs 7-8x more: 54 against 8 ms for 330k keys and 30k wanted). Compiled
    (`kernels.members_in`): one pass over the keys, no temporary arrays; numpy: a pass per step."""
    if compiled and kernels is not None:
        out = np.empty(len(keys), dtype=np.int64)
        found = kernels.members_in(
            np.ascontiguousarray(keys, dtype=np.uint64), shift, np.ascontiguousarray(wanted, np.uint64), out
        )
        return out[:found]
    if shift:
        keys = keys >> np.uint64(shift)
    bits = max(16, len(wanted).bit_length() + 6)
    low = np.uint64((1 << bits) - 1)
    table = np.zeros(1 << bits, dtype=bool)
    table[wanted & low] = True
    maybe = np.flatnonzero(table[keys & low])
    pos = np.minimum(np.searchsorted(wanted, keys[maybe]), len(wanted) - 1)
    return maybe[wanted[pos] == keys[maybe]]


def _new_pairs_in_table(
    keys: np.ndarray, n_old: int, cap: int, stats: CandidateStats
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (i, j), i != j, of units with equal `keys` where j is a new unit (id >= n_old), each pair once
    per direction it is found; raises `BucketCapped` if such a bucket holds more than `cap` units."""
    members = _positions_in(keys, np.unique(keys[n_old:]))  # every unit in a bucket with a new unit
    order = members[np.argsort(keys[members], kind="stable")]
    sorted_keys = keys[order]
    starts = np.concatenate(([0], np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1))
    sizes = np.diff(np.concatenate((starts, [len(order)])))
    if len(sizes):
        stats.largest_bucket = max(stats.largest_bucket, int(sizes.max()))
        if int(sizes.max()) > cap:
            raise BucketCapped
    run_of = np.repeat(np.arange(len(starts)), sizes)  # position in `order` -> its run
    new_pos = np.flatnonzero(order >= n_old)
    runs = run_of[new_pos]
    partners = order[concat_ranges(starts[runs], sizes[runs])]
    me = np.repeat(order[new_pos], sizes[runs])
    other = partners != me
    return partners[other], me[other]


def new_cross_pairs(
    keys: np.ndarray, ids: np.ndarray, cap: int, stats: CandidateStats, *, n_old: int
) -> tuple[np.ndarray, np.ndarray]:
    """`candidates.cross_pairs` restricted to the (query, indexed) pairs with a new set (id >= `n_old`).

    Only the buckets holding a new entry are sorted. One above `cap` is not expanded, as in the full
    pass, and counted the way the full pass would count it beside the stored counts: a bucket capped before
    adds its new members, one the new entries push over the cap adds itself. If a bucket pushed over the
    cap held a stored pair, the full pass would no longer find that pair there: `BucketCapped`."""
    new_buckets = np.unique(keys[ids >= n_old] >> np.uint64(1))
    if not len(new_buckets):
        return np.empty(0, np.int64), np.empty(0, np.int64)
    members = _positions_in(keys, new_buckets, shift=1)
    # By bucket, its queries before its indexed entries (`keys`), and new entries first within each.
    member_keys, member_new = keys[members], ids[members] >= n_old
    by_bucket = np.lexsort((~member_new, member_keys))
    order, sk, new = members[by_bucket], member_keys[by_bucket], member_new[by_bucket]
    bucket = sk >> np.uint64(1)
    starts = np.concatenate(([0], np.flatnonzero(bucket[1:] != bucket[:-1]) + 1))
    sizes = np.diff(np.concatenate((starts, [len(sk)])))
    indexed = (sk & np.uint64(1)).astype(np.int64)
    n_x = np.add.reduceat(indexed, starts)
    n_q = sizes - n_x
    new_x = np.add.reduceat(indexed * new, starts)
    new_q = np.add.reduceat(new.astype(np.int64), starts) - new_x
    n_new = new_q + new_x
    stats.largest_bucket = max(stats.largest_bucket, int(sizes.max()))
    over, was_over = sizes > cap, sizes - n_new > cap
    if (over & ~was_over & (n_q > new_q) & (n_x > new_x)).any():
        raise BucketCapped
    stats.capped_buckets += int((over & ~was_over).sum())
    stats.capped_members += int(sizes[over & ~was_over].sum() + n_new[over & was_over].sum())
    keep = ~over & (n_q > 0) & (n_x > 0)
    starts, n_q, n_x, new_q, new_x = starts[keep], n_q[keep], n_x[keep], new_q[keep], new_x[keep]
    # A new query with every indexed entry, and a stored query with every new indexed entry.
    q_pos = np.concatenate((concat_ranges(starts, new_q), concat_ranges(starts + new_q, n_q - new_q)))
    per_query = np.concatenate((np.repeat(n_x, new_q), np.repeat(new_x, n_q - new_q)))
    x_start = np.concatenate((np.repeat(starts + n_q, new_q), np.repeat(starts + n_q, n_q - new_q)))
    x_pos = concat_ranges(x_start, per_query)
    return ids[order[np.repeat(q_pos, per_query)]], ids[order[x_pos]]


def _distinct_codes(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    return np.unique(np.minimum(i, j) * n + np.maximum(i, j))


def minhash_new_pairs(
    sigs: np.ndarray, n_shingles: np.ndarray, n_old: int, config: Config, *, bucket_cap: int = BUCKET_CAP
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, CandidateStats]:
    """`candidates.minhash_pairs` restricted to the pairs with a unit at or after `n_old`: the same bands,
    the same estimates and floor, and under `partial_copies` the same size-class pass (`new_cross_pairs`),
    its candidates and capped buckets counted in the stats as `add_size_class_pass` counts them. Raises
    `BucketCapped` where the full computation would cap a bucket that holds a new unit and a stored pair."""
    n = len(sigs)
    stats = CandidateStats(bucket_cap=bucket_cap)
    bands, rows = lsh_params(
        lsh_threshold(config.minhash_floor, config.similarity, config.min_size_ratio), sigs.shape[1]
    )
    sizes = np.asarray(n_shingles, dtype=np.float64)
    kept: list[tuple[np.ndarray, ...]] = []
    for band, keys in band_key_columns(sigs, bands, rows):
        block = sigs[:, band * rows : (band + 1) * rows]
        i, j = _new_pairs_in_table(keys, n_old, bucket_cap, stats)
        same_rows = (block[i] == block[j]).all(axis=1)  # a key collision is no bucket
        codes = _distinct_codes(i[same_rows], j[same_rows], n)
        stats.candidates += len(codes)
        keep, jac, cont = verify_pairs(
            sigs,
            sizes,
            codes // n,
            codes % n,
            similarity=config.similarity,
            floor=config.minhash_floor,
            min_size_ratio=config.min_size_ratio,
            min_shingles=config.min_contained_shingles,
        )
        kept.append((codes[keep], jac[keep], cont[keep]))
    if config.searches_partial_copies:
        pa, pb, pjac, pcont, partial = containment_lsh_pairs(
            sigs,
            sizes,
            floor=config.minhash_floor,
            min_size_ratio=config.min_size_ratio,
            lowest_ratio=partial_copy_ratio(config.min_size_ratio),
            min_shingles=config.min_contained_shingles,
            bucket_cap=bucket_cap,
            pairs_of=functools.partial(new_cross_pairs, n_old=n_old),
        )
        stats.candidates += partial.candidates
        stats.size_class_capped_buckets += partial.capped_buckets
        stats.size_class_capped_members += partial.capped_members
        kept.append((pa * n + pb, pjac, pcont))
    codes, jac, cont = (np.concatenate(parts) for parts in zip(*kept, strict=True))
    codes, first = np.unique(codes, return_index=True)
    return codes // n, codes % n, jac[first], cont[first], stats


def simhash_new_pairs(
    fps: np.ndarray, n_old: int, max_bits: int, *, bucket_cap: int = BUCKET_CAP
) -> tuple[np.ndarray, np.ndarray, np.ndarray, CandidateStats]:
    """`candidates.simhash_pairs` restricted to the pairs with a unit at or after `n_old`: every such pair
    within `max_bits`, found in the same tables. Raises `BucketCapped` where the full computation would cap
    a bucket that holds a new unit."""
    n = len(fps)
    stats = CandidateStats(bucket_cap=bucket_cap)
    r = choose_r(n, max_bits)
    masks = block_masks(max_bits + r)
    found: list[np.ndarray] = []
    for combo in combinations(range(len(masks)), r):
        i, j = _new_pairs_in_table(fps & np.uint64(sum(masks[k] for k in combo)), n_old, bucket_cap, stats)
        codes = _distinct_codes(i, j, n)
        stats.tables += 1
        stats.candidates += len(codes)
        a, b = codes // n, codes % n
        found.append(codes[np.bitwise_count(fps[a] ^ fps[b]) <= max_bits])
    codes = np.unique(np.concatenate(found)) if found else np.empty(0, np.int64)
    a, b = codes // n, codes % n
    return a, b, hamming_many(fps[a], fps[b]), stats


def merged_stats(stored: CandidateStats, new: CandidateStats) -> CandidateStats:
    """The statistics of the whole set: the stored ones plus what the new units added (the tables are the
    same ones; the one index's capped buckets unchanged: a bucket with a new unit is never capped there;
    the size-class pass's capped buckets counted on)."""
    return dataclasses.replace(
        stored,
        candidates=stored.candidates + new.candidates,
        verified_exact=stored.verified_exact + new.verified_exact,
        rejected_exact=stored.rejected_exact + new.rejected_exact,
        largest_bucket=max(stored.largest_bucket, new.largest_bucket),
        size_class_capped_buckets=stored.size_class_capped_buckets + new.size_class_capped_buckets,
        size_class_capped_members=stored.size_class_capped_members + new.size_class_capped_members,
    )


def extend_fingerprints(
    store: Store, config: Config, *, progress: Progress = no_progress, jobs: int | None = None
) -> FingerprintSet | None:
    """Bring the stored fingerprint set of `config` up to date with the texts that came after it, when the
    stored units are a prefix of today's (see the module docstring); returns the updated set, or None when
    the stored set cannot be extended (none, numbered otherwise, or a bucket cap or table change) and must
    be computed again. Runs inside the caller's `store.writing()`."""
    key = config.fingerprint_key
    stored = store.fingerprint_set(key)
    if stored is None:
        return None
    t0 = time.perf_counter()
    since = added_since(store, stored)
    coverage = store.page_coverage()  # the pages as they are now, every one with its text
    ensure_sketches(store, config, progress=progress, jobs=jobs, since=-1 if since is None else since)
    minhash = config.method == "minhash"
    new = store.appended_units(
        key, config.norm_key, config.sketch_key, with_minhash=minhash, min_words=config.min_words, since=since
    )
    if new is None or (not len(new) and since is None):
        return None
    if not len(new):  # the pages added bring no new content text: the set covers them as it is
        store.append_fingerprints(
            key, units=None, pairs=None, stats=stored_stats(stored.stats, coverage), seconds=stored.seconds
        )
        return store.fingerprint_set(key)
    progress("candidates", 0, 1)
    pairs = new_unit_pairs(store, config, new, progress=progress, jobs=jobs)
    if pairs is None:
        return None
    new["simhash" if minhash else "minhash"] = None
    progress("candidates", 1, 1)
    store.append_fingerprints(
        key,
        units=new,
        pairs=pairs.frame(),
        stats=stored_stats(merged_stats(stored.stats, pairs.stats), coverage),
        seconds=time.perf_counter() - t0,
    )
    return store.fingerprint_set(key)


def new_unit_pairs(
    store: Store,
    config: Config,
    new: pd.DataFrame,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
) -> UnitPairs | None:
    """The pairs with a unit of `new` (`Store.appended_units`; given its unit ids here, after the stored
    ones), verified as `config` says; None where the full computation would differ (`BucketCapped`, or
    SimHash tables that change with the unit count)."""
    key, minhash = config.fingerprint_key, config.method == "minhash"
    if minhash:
        old, old_sigs = store.unit_signatures(key)
    else:
        old = store.units(key)
    n_old = len(old)
    new.insert(0, "unit_id", np.arange(n_old, n_old + len(new), dtype=np.int32))
    n_shingles = np.concatenate((old["n_shingles"].to_numpy(np.int32), new["n_shingles"].to_numpy(np.int32)))
    try:
        if minhash:
            sigs = signature_matrix(config.num_perm, old_sigs, new["minhash"].tolist())
            del old_sigs
            a, b, jac, cont, stats = minhash_new_pairs(sigs, n_shingles, n_old, config)
            del sigs  # the verification needs the room
            found = UnitPairs(a, b, stats, jaccard=jac, containment=cont)
        else:
            fps = np.concatenate((old["simhash"].to_numpy(np.uint64), new["simhash"].to_numpy(np.uint64)))
            if choose_r(len(fps), config.simhash_max_bits) != choose_r(n_old, config.simhash_max_bits):
                return None
            a, b, bits, stats = simhash_new_pairs(fps, n_old, config.simhash_max_bits)
            return UnitPairs(a, b, stats, hamming_bits=bits)
    except BucketCapped:
        return None
    if config.verify != "exact":
        return found
    unit_keys = np.concatenate((old["exact_key"].to_numpy(), new["exact_key"].to_numpy()))
    return verified_exactly(store, config, unit_keys, n_shingles, found, progress=progress, jobs=jobs)
