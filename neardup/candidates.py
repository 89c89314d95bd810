"""Candidate pairs: SimHash pigeonhole banding and MinHash LSH (datasketch), each verified.

SimHash banding (Manku et al., generalized pigeonhole): split the 64 bits into t + r blocks. Two
fingerprints within t bits differ in at most t blocks, so they agree exactly on at least r blocks;
indexing every combination of r blocks therefore finds every pair within t bits, the same pairs a
brute-force comparison finds (a property test checks this). r = 1 is the plain "t + 1 blocks" scheme;
a larger r means longer keys, fewer false candidates, more tables. `choose_r` picks the cheapest.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from .candidate_stats import BUCKET_CAP, CandidateStats, SizeClassTables
from .minhash import estimate_containment, estimate_jaccard
from .parallel import default_jobs
from .shingles import fmix64, kernels
from .simhash import hamming_many
from .spill import DiskPairs

_U32 = np.uint64(32)
EXACT_CHUNK = 1 << 21  # shingles looked up at once in exact verification (~40 MB of work arrays)
VERIFY_CHUNK = (
    1 << 14
)  # candidate pairs verified at once: 2 x 16k x 512 B = 16 MB; measured 5x faster than 256k


def block_masks(n_blocks: int) -> list[int]:
    """Bit masks of n_blocks contiguous blocks covering the 64 bits, sizes differing by at most one."""
    masks, start = [], 0
    for i in range(n_blocks):
        width = 64 // n_blocks + (1 if i < 64 % n_blocks else 0)
        masks.append(((1 << width) - 1) << start)
        start += width
    return masks


def choose_r(n: int, max_bits: int) -> int:
    """Blocks that must match (1..4), minimizing tables x n (sorting) + expected random candidates."""
    best, best_cost = 1, float("inf")
    for r in range(1, 5):
        blocks = max_bits + r
        tables = comb(blocks, r)
        key_bits = 64 * r / blocks
        cost = tables * n + tables * n * n / 2 / 2**key_bits
        if cost < best_cost:
            best, best_cost = r, cost
    return best


def pairs_in_runs(
    order: np.ndarray,
    run_starts: np.ndarray,
    cap: int,
    stats: CandidateStats,
    capped: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) pairs within runs: `order` lists items grouped into runs beginning at `run_starts`.

    Runs longer than `cap` are not expanded; their members are flagged in `capped` when given.
    """
    n = len(order)
    if n < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    starts = run_starts
    sizes = np.diff(np.concatenate((starts, [n])))
    stats.largest_bucket = max(stats.largest_bucket, int(sizes.max()))
    big = sizes > cap
    if big.any():
        stats.capped_buckets += int(big.sum())
        stats.capped_members += int(sizes[big].sum())
        if capped is not None:
            capped[order[concat_ranges(starts[big], sizes[big])]] = True
    keep = (sizes > 1) & ~big
    if not keep.any():
        return np.empty(0, np.int64), np.empty(0, np.int64)
    run_end = np.repeat(starts[keep] + sizes[keep], sizes[keep])
    pos = concat_ranges(starts[keep], sizes[keep])
    out_i, out_j = [], []
    d = 1
    while pos.size:
        partner = pos + d
        ok = partner < run_end
        pos, partner, run_end = pos[ok], partner[ok], run_end[ok]
        if not pos.size:
            break
        out_i.append(order[pos])
        out_j.append(order[partner])
        d += 1
    return np.concatenate(out_i), np.concatenate(out_j)


def run_groups(
    order: np.ndarray, run_starts: np.ndarray, max_pairs: int, cap: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(order, run_starts) of consecutive runs of `pairs_in_runs`'s input, each group holding at most
    `max_pairs` pairs (a larger run on its own; runs above `cap`, which give none, count none): together
    the same pairs and statistics, a bounded piece at a time."""
    n = len(order)
    sizes = np.diff(np.concatenate((run_starts, [n])))
    pairs = np.cumsum(np.where(sizes > cap, 0, sizes * (sizes - 1) // 2))
    first = 0
    while first < len(run_starts):
        before = int(pairs[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(pairs, before + max_pairs, side="right")))
        lo, hi = int(run_starts[first]), int(run_starts[last]) if last < len(run_starts) else n
        yield order[lo:hi], run_starts[first:last] - lo
        first = last


def _run_starts(sorted_rows: np.ndarray) -> np.ndarray:
    """Start positions of runs of equal rows (1-D keys or 2-D rows), given rows in sorted order."""
    if sorted_rows.ndim == 1:
        change = sorted_rows[1:] != sorted_rows[:-1]
    else:
        change = (sorted_rows[1:] != sorted_rows[:-1]).any(axis=1)
    return np.concatenate(([0], np.flatnonzero(change) + 1))


def concat_ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + z) for each (s, z), vectorized."""
    nonempty = sizes > 0
    starts, sizes = starts[nonempty], sizes[nonempty]
    total = int(sizes.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    steps = np.ones(total, dtype=np.int64)
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    steps[first] = starts - np.concatenate(([0], starts[:-1] + sizes[:-1] - 1))
    return np.cumsum(steps)


def _unique_pairs(i: np.ndarray, j: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    code = np.unique(lo * n + hi)
    return code // n, code % n


def simhash_pairs(
    fingerprints: np.ndarray, max_bits: int, *, r: int | None = None, bucket_cap: int = BUCKET_CAP
) -> tuple[np.ndarray, np.ndarray, np.ndarray, CandidateStats]:
    """Every pair (a < b) of fingerprints within `max_bits` Hamming distance, with the distance.

    Exact (no pair a brute force finds is lost) unless a bucket exceeds `bucket_cap`; such buckets
    are counted in the stats.
    """
    fps = np.asarray(fingerprints, dtype=np.uint64)
    n = len(fps)
    stats = CandidateStats(bucket_cap=bucket_cap)
    if n < 2:
        e = np.empty(0, np.int64)
        return e, e, np.empty(0, np.uint8), stats
    r = r or choose_r(n, max_bits)
    masks = block_masks(max_bits + r)
    found_i, found_j = [], []
    capped_before = np.zeros(n, dtype=bool)  # members of a capped bucket in an earlier table
    capped_here = np.zeros(n, dtype=bool)
    for combo in combinations(range(len(masks)), r):
        mask = np.uint64(sum(masks[k] for k in combo))
        keys = fps & mask
        order = np.argsort(keys, kind="stable")
        i, j = pairs_in_runs(order, _run_starts(keys[order]), bucket_cap, stats, capped_here)
        stats.tables += 1
        stats.candidates += len(i)
        if len(i):
            diff = fps[i] ^ fps[j]
            keep = np.bitwise_count(diff) <= max_bits
            # A close pair agrees on many block combinations; keep it only in the first one (the
            # lexicographically first r agreeing blocks), so memory holds each pair once: a block
            # before this combination's last one and not in it must differ.
            first = np.ones(len(i), dtype=bool)
            for k in range(combo[-1]):
                if k not in combo:
                    first &= (diff & np.uint64(masks[k])) != 0
            # ... unless that earlier bucket was capped: then this table is where the pair is found.
            keep &= first | capped_before[i] | capped_before[j]
            found_i.append(i[keep])
            found_j.append(j[keep])
        capped_before |= capped_here
    # The warning goes in before the early return: all-boilerplate input yields no pairs but must warn.
    stats.warn_capped("SimHash", bucket_cap)
    if not found_i:
        e = np.empty(0, np.int64)
        return e, e, np.empty(0, np.uint8), stats
    a, b = _unique_pairs(np.concatenate(found_i), np.concatenate(found_j), n)
    return a, b, hamming_many(fps[a], fps[b]), stats


# Containment the LSH index is sized to find as reliably as Jaccard pairs at the floor.
CONTAINMENT_INDEXED = 0.8


def lsh_threshold(floor: float, similarity: str, min_size_ratio: float) -> float:
    """Jaccard threshold for the LSH index, below the loosest similarity stored.

    Jaccard: 80% of the floor. Containment c with size ratio at least q implies Jaccard >= c*q / (1 + q - c*q);
    the index is sized for c = 0.8 (`CONTAINMENT_INDEXED`) at the guard ratio q, the worst case of a
    partial copy (0.36 at q = 0.5). Containment pairs at or above 0.8 are then found with probability
    >= 42% at the worst ratio, >= 87% when the smaller page is 70% of the larger, and > 99.9% for
    typical print or syndicated copies (Jaccard >= 0.8); pairs between the floor and 0.8 are found only
    when their Jaccard is high as well. A pair below the ratio that the shingle floor of `size_guard`
    admits (a print copy at 4% of an original with a long comment thread: Jaccard ~0.04) is found only
    by chance: the index is not sized for it. Sizing the index for the floor itself (0.11 for containment 0.3)
    made every pair of one site's pages a candidate (measured: millions of pairs at 20k pages).
    """
    if similarity == "jaccard":
        return max(0.05, 0.8 * floor)
    c, q = CONTAINMENT_INDEXED, min_size_ratio
    return max(0.05, c * q / (1 + q - c * q))


@functools.cache
def lsh_params(threshold: float, num_perm: int) -> tuple[int, int]:
    """Bands and rows that datasketch's MinHashLSH chooses for this threshold (equal FP/FN weights): of all
    b x r <= num_perm, the first in (b, r) order with the least false-positive area of the S-curve
    1 - (1 - s^r)^b below the threshold plus false-negative area above it. The curve is a polynomial of
    degree b * r <= num_perm, so Gauss-Legendre nodes integrate it exactly (datasketch integrates each
    (b, r) with scipy's `quad`: the same choice, a test compares them, without importing datasketch and
    scipy.integrate, 0.2-0.3 CPU-s, in each process that searches candidates). Unlike MinHashLSH, a choice
    of one band is returned, not refused (num_perm 16 above ~0.87)."""
    b = np.concatenate([np.full(num_perm // k, k) for k in range(1, num_perm + 1)]).astype(np.float64)
    r = np.concatenate([np.arange(1, num_perm // k + 1) for k in range(1, num_perm + 1)]).astype(np.float64)
    nodes, weights = np.polynomial.legendre.leggauss(num_perm // 2 + 1)  # exact to degree num_perm + 1

    def area(lo: float, hi: float, curve: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        s = (hi - lo) / 2 * nodes + (hi + lo) / 2
        return np.asarray(curve(s[None, :]) @ weights * ((hi - lo) / 2))

    def s_curve(s: np.ndarray) -> np.ndarray:
        return np.asarray(1 - (1 - s ** r[:, None]) ** b[:, None])

    error = 0.5 * area(0.0, threshold, s_curve) + 0.5 * area(threshold, 1.0, lambda s: 1 - s_curve(s))
    best = int(np.argmin(error))  # the first of equal minima, as datasketch's strict `<` keeps
    return int(b[best]), int(r[best])


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _kernel_rows(block: np.ndarray) -> np.ndarray | None:
    """A band (n x rows) as the compiled kernels read it, uint32 with each row's values back to back (a column
    slice of the signatures is, as it lies); None where the numpy path runs (no kernels, another dtype)."""
    if kernels is None or block.dtype != np.uint32 or block.ndim != 2 or not block.shape[1]:
        return None
    return block if block.strides[1] == 4 and block.strides[0] >= 0 else np.ascontiguousarray(block)


def band_keys(block: np.ndarray, *, compiled: bool = True) -> np.ndarray:
    """One 64-bit key per row of a band (n x rows, uint32), mixed from its values: equal rows have equal
    keys (different rows rarely do: callers that need exact buckets compare the rows where keys match).
    Compiled (`kernels.band_keys`, on the column slice where it lies): one pass over the rows; the numpy
    reference makes a pass over the n keys per column and gathers each column across the rows."""
    rows = _kernel_rows(block) if compiled and block.shape[1] > 1 else None  # one column: numpy's cast
    if rows is not None:
        out = np.empty(len(rows), dtype=np.uint64)
        kernels.band_keys(rows, out)
        return out
    with np.errstate(over="ignore"):
        key = block[:, 0].astype(np.uint64)
        for col in range(1, block.shape[1]):
            key = fmix64(key * _MIX + block[:, col])
    return key


# The keys of several bands are made together, over the signatures' rows a chunk at a time: the chunk (2,048
# rows, 1 MB of 128-permutation signatures) stays in cache while each band of the group reads its columns.
# One band at a time over all rows reads each row's cache line once per band: 1.84 s for 1M x 32 bands of 4
# rows, 0.36 s eight bands at a time (bench/RESULTS.md).
KEY_CHUNK_ROWS = 2048
KEY_GROUP_BANDS = 8
KEY_GROUP_BYTES = 64 << 20  # the keys of one group of bands at most (fewer bands when a band's are larger)


def _key_groups(bands: int, bytes_per_band: int) -> Iterator[range]:
    group = max(1, min(KEY_GROUP_BANDS, KEY_GROUP_BYTES // max(bytes_per_band, 1)))
    for first in range(0, bands, group):
        yield range(first, min(bands, first + group))


def band_key_columns(
    signatures: np.ndarray, bands: int, rows: int, *, compiled: bool = True
) -> Iterator[tuple[int, np.ndarray]]:
    """(band, `band_keys` of the band's columns) for each band in order: the same keys, made by the compiled
    kernel a group of bands at a time over chunks of rows (see KEY_CHUNK_ROWS)."""
    sigs = signatures
    if not (
        compiled and kernels is not None and rows > 1 and sigs.dtype == np.uint32 and sigs.flags.c_contiguous
    ):
        for band in range(bands):
            yield band, band_keys(sigs[:, band * rows : (band + 1) * rows], compiled=compiled)
        return
    n = len(sigs)
    for group in _key_groups(bands, 8 * n):
        out = np.empty((len(group), n), dtype=np.uint64)
        for start in range(0, n, KEY_CHUNK_ROWS):
            chunk = sigs[start : start + KEY_CHUNK_ROWS]
            for k, band in enumerate(group):
                kernels.band_keys(
                    chunk[:, band * rows : (band + 1) * rows], out[k, start : start + len(chunk)]
                )
        yield from zip(group, out, strict=True)


def _band_groups(block: np.ndarray, key: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(order, run_starts) grouping the rows of one band (n x rows, uint32) that are equal.

    Rows are sorted by their `band_keys` (one argsort of uint64, ~7x faster than a lexsort over the
    columns). Equal rows have equal keys; if two different rows ever share a key, the band is grouped by a
    lexsort of the rows themselves, so the groups are exact either way. `key`: the band's keys, if made.
    """
    key = band_keys(block) if key is None else key
    order = np.argsort(key, kind="stable")
    sorted_keys, sorted_rows = key[order], block[order]
    key_change = sorted_keys[1:] != sorted_keys[:-1]
    if not np.array_equal(key_change, (sorted_rows[1:] != sorted_rows[:-1]).any(axis=1)):
        order = np.lexsort(block.T[::-1])  # a key collision
        return order, _run_starts(block[order])
    return order, np.concatenate(([0], np.flatnonzero(key_change) + 1))


@dataclass(frozen=True, slots=True)
class MappedSignatures:
    """How the candidate search reads signatures that lie in a memory map (`neardup.spill`): a band's
    columns are copied into memory `copy_rows` rows at a time, and `release` drops the map's pages read so
    far from the resident set after each such piece; a band's buckets are sorted a group of whole buckets
    at a time (`bucket_groups`, about `bucket_entries` entries), their candidate pairs made a group of
    buckets at a time (`run_groups`, about `candidates` at once), and the pairs kept go to `pairs` (on
    disk) instead of memory. Where `rows` is given, the rows a chunk of pairs compares are read with it
    (pread of sorted distinct ids: `verify_read_pairs`) instead of through the map, whose scattered read
    faults each map a whole page-cache folio (up to megabytes) and hold most of the file resident."""

    copy_rows: int
    release: Callable[[], None]
    candidates: int  # candidate pairs of a band made at once
    bands: int  # bands in hand at once (each holds ~20 bytes a signature row while it is)
    bucket_entries: int
    pairs: DiskPairs
    rows: Callable[[np.ndarray], np.ndarray] | None

    def band(self, sigs: np.ndarray, columns: slice) -> np.ndarray:
        """The columns of every row, copied (n x columns, C order) a piece at a time."""
        out = np.empty((len(sigs), columns.stop - columns.start), dtype=sigs.dtype)
        for start in range(0, len(sigs), self.copy_rows):
            out[start : start + self.copy_rows] = sigs[start : start + self.copy_rows, columns]
            self.release()
        return out

    def bucket_groups(
        self, n: int, entry_keys: Callable[[slice | np.ndarray], np.ndarray], entries_per_row: int
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(positions, keys) of the entries of a band of `n` rows in groups of whole buckets, about
        `bucket_entries` entries a group. `entry_keys(rows)` gives the keys of the band's rows `rows` (m of
        them): `entries_per_row` blocks of m, entry k of the band being row k % n's entry k // n; a bucket
        is the keys equal but for the lowest bit (as `size_class_keys` makes them). A group's keys are made
        again from its rows, so beside the band a byte or two an entry is held, not its key."""
        total = n * entries_per_row
        groups = -(-total // self.bucket_entries)
        if groups <= 1:
            yield np.arange(total), entry_keys(slice(0, n))
            return
        group_of = np.empty((entries_per_row, n), dtype=np.min_scalar_type(groups - 1))
        for start in range(0, n, self.copy_rows):
            keys = entry_keys(slice(start, start + self.copy_rows)).reshape(entries_per_row, -1)
            group_of[:, start : start + keys.shape[1]] = (keys >> np.uint64(1)) % np.uint64(groups)
        flat = group_of.reshape(-1)
        for group in range(groups):
            positions = np.flatnonzero(flat == group)
            if not len(positions):
                continue
            rows, at = np.unique(positions % n, return_inverse=True)
            yield positions, entry_keys(rows)[(positions // n) * len(rows) + at]


def _lsh_tables(signatures: np.ndarray, bands: int, rows: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per band: (order, run_starts) grouping documents whose band rows are equal, as MinHashLSH buckets them."""
    sigs = np.ascontiguousarray(signatures)
    for band, keys in band_key_columns(sigs, bands, rows):
        yield _band_groups(sigs[:, band * rows : (band + 1) * rows], keys)


def _mapped_lsh_runs(
    sigs: np.ndarray, band: int, rows: int, mapped: MappedSignatures, bucket_cap: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The (order, run_starts) groups of `run_groups` of one band of mapped signatures, a group of its
    buckets at a time (`MappedSignatures.bucket_groups`): together the runs `_lsh_tables` gives the band."""
    block = mapped.band(sigs, slice(band * rows, (band + 1) * rows))
    for positions, keys in mapped.bucket_groups(len(block), lambda at: band_keys(block[at]), 1):
        order, starts = _band_groups(block[positions], keys)
        yield from run_groups(positions[order], starts, mapped.candidates, bucket_cap)


def lsh_band_table(signatures: np.ndarray, band: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, run_starts) of one band of the signatures, as `minhash_pairs` groups each band."""
    sigs = np.ascontiguousarray(signatures)
    return _band_groups(sigs[:, band * rows : (band + 1) * rows])


def verified_band_pairs(
    signatures: np.ndarray,
    n_shingles: np.ndarray,
    table: tuple[np.ndarray, np.ndarray] | None,
    *,
    similarity: str,
    floor: float,
    min_size_ratio: float,
    min_shingles: int = 0,
    bucket_cap: int = BUCKET_CAP,
    groups: Iterable[tuple[np.ndarray, np.ndarray]] | None = None,
    rows: Callable[[np.ndarray], np.ndarray] | None = None,
    sink: Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None = None,
) -> tuple[CandidateStats, list[tuple[np.ndarray, ...]]]:
    """The candidates of one LSH band (`table`: `lsh_band_table`), verified with `verify_pairs`: the
    band's counts, and chunks of (a * n + b with a < b, jaccard estimate, containment estimate) of the
    pairs at or above `floor`, n the number of signatures. `groups`: the band's runs in groups in place of
    `table` (out of core), `rows` reads the signatures a chunk compares (`verify_read_pairs`), `sink`
    given each chunk kept in place of the list."""
    # In chunks: memory follows the pairs kept, not the (much larger) candidate count. A pair found
    # in several bands is verified each time (measured: 88% of candidates are distinct pairs).
    n = len(signatures)
    band_stats, kept = CandidateStats(tables=1), list[tuple[np.ndarray, ...]]()
    for group in groups if groups is not None else [table] if table is not None else []:
        i, j = pairs_in_runs(*group, bucket_cap, band_stats)
        codes = np.minimum(i, j) * n + np.maximum(i, j)  # distinct: a document is in one bucket per band
        band_stats.candidates += len(codes)
        for lo in range(0, len(codes), VERIFY_CHUNK):
            chunk = codes[lo : lo + VERIFY_CHUNK]
            keep, jac, cont = verify_read_pairs(
                signatures,
                n_shingles,
                chunk // n,
                chunk % n,
                rows,
                similarity=similarity,
                floor=floor,
                min_size_ratio=min_size_ratio,
                min_shingles=min_shingles,
            )
            if sink is None:
                kept.append((chunk[keep], jac[keep], cont[keep]))
            else:
                sink(chunk[keep], jac[keep], cont[keep])
    return band_stats, kept


def band_counts(table: tuple[np.ndarray, np.ndarray], bucket_cap: int = BUCKET_CAP) -> CandidateStats:
    """The counts `verified_band_pairs` gives for one band (`table`), without forming its pairs."""
    order, starts = table
    stats = CandidateStats(tables=1)
    if len(order) < 2:
        return stats
    sizes = np.diff(np.concatenate((starts, [len(order)]))).astype(np.int64)
    big = sizes > bucket_cap
    kept = sizes[(sizes > 1) & ~big]
    stats.candidates = int((kept * (kept - 1) // 2).sum())
    stats.largest_bucket = int(sizes.max())
    stats.capped_buckets = int(big.sum())
    stats.capped_members = int(sizes[big].sum())
    return stats


def lsh_buckets(signatures: np.ndarray, bands: int, rows: int) -> list[np.ndarray]:
    """The same buckets as datasketch's MinHashLSH (`tests/oracles.py`), computed with a sort per band (numpy)."""
    out = []
    n = len(signatures)
    for order, starts in _lsh_tables(signatures, bands, rows):
        sizes = np.diff(np.concatenate((starts, [n])))
        for s, z in zip(starts[sizes > 1], sizes[sizes > 1], strict=True):
            out.append(np.sort(order[s : s + z]))
    return out


def size_guard(
    size_a: np.ndarray, size_b: np.ndarray, min_size_ratio: float, min_shingles: int = 0
) -> np.ndarray:
    """Where containment counts: the smaller shingle set is at least `min_size_ratio` of the larger, or
    holds at least `min_shingles` shingles (0: the ratio alone). A short page (a soft-404 or a notice in a
    site template) is never "contained" in a long article, while a print copy of an article whose own
    page carries a long comment thread (4-45% of its size) still is."""
    sa, sb = np.asarray(size_a, dtype=np.float64), np.asarray(size_b, dtype=np.float64)
    smaller = np.minimum(sa, sb)
    ok = smaller / np.maximum(np.maximum(sa, sb), 1) >= min_size_ratio
    return ok | (smaller >= min_shingles) if min_shingles > 0 else ok


def above_floor(jac: np.ndarray, cont: np.ndarray, similarity: str, floor: float) -> np.ndarray:
    """Which pairs are stored: the chosen similarity is at least the loosest threshold offered."""
    return (jac if similarity == "jaccard" else cont) >= floor


def score_estimates(
    sig_a: np.ndarray,
    sig_b: np.ndarray,
    size_a: np.ndarray,
    size_b: np.ndarray,
    *,
    similarity: str,
    floor: float,
    min_size_ratio: float,
    min_shingles: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keep mask, Jaccard estimate, containment estimate) for pairs of signature rows and set sizes;
    containment is 0 where `size_guard` fails."""
    return _score_jaccard(
        estimate_jaccard(sig_a, sig_b),
        size_a,
        size_b,
        similarity=similarity,
        floor=floor,
        min_size_ratio=min_size_ratio,
        min_shingles=min_shingles,
    )


def _score_jaccard(
    jac: np.ndarray,
    size_a: np.ndarray,
    size_b: np.ndarray,
    *,
    similarity: str,
    floor: float,
    min_size_ratio: float,
    min_shingles: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sa, sb = np.asarray(size_a, dtype=np.float64), np.asarray(size_b, dtype=np.float64)
    cont = np.where(size_guard(sa, sb, min_size_ratio, min_shingles), estimate_containment(jac, sa, sb), 0.0)
    return above_floor(jac, cont, similarity, floor), jac, cont


def verify_pairs(
    signatures: np.ndarray,
    n_shingles: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    *,
    similarity: str,
    floor: float,
    min_size_ratio: float,
    min_shingles: int = 0,
    compiled: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`score_estimates` for candidate pairs (a[i], b[i]) of rows of `signatures` (the compiled kernel
    compares the rows in place, without gathering them, and without the GIL)."""
    if compiled and kernels is not None:
        a, b = np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64)
        equal = np.empty(len(a), dtype=np.int32)
        kernels.count_equal(
            np.ascontiguousarray(signatures, dtype=np.uint32), signatures.shape[1], a, b, equal
        )
        jac = equal / signatures.shape[1]
    else:
        jac = estimate_jaccard(signatures[a], signatures[b])
    return _score_jaccard(
        jac,
        n_shingles[a],
        n_shingles[b],
        similarity=similarity,
        floor=floor,
        min_size_ratio=min_size_ratio,
        min_shingles=min_shingles,
    )


def verify_read_pairs(
    signatures: np.ndarray,
    n_shingles: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    rows: Callable[[np.ndarray], np.ndarray] | None,
    *,
    similarity: str,
    floor: float,
    min_size_ratio: float,
    min_shingles: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`verify_pairs` of the pairs (a[i], b[i]); with `rows` (out of core), the signature rows they compare
    read first, once each, in row order (`rows(ids)`, ids sorted and distinct), instead of through
    `signatures` (then a memory map)."""
    if rows is not None:
        ids, at = np.unique(np.concatenate((a, b)), return_inverse=True)
        signatures, n_shingles, a, b = rows(ids), np.asarray(n_shingles)[ids], at[: len(a)], at[len(a) :]
    return verify_pairs(
        signatures,
        n_shingles,
        a,
        b,
        similarity=similarity,
        floor=floor,
        min_size_ratio=min_size_ratio,
        min_shingles=min_shingles,
    )


def minhash_pairs(
    signatures: np.ndarray,
    n_shingles: np.ndarray,
    *,
    similarity: str,
    floor: float,
    min_size_ratio: float,
    seed: int,
    min_shingles: int = 0,
    bucket_cap: int = BUCKET_CAP,
    jobs: int | None = None,
    partial_copies: bool = False,
    mapped: MappedSignatures | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, CandidateStats]:
    """LSH candidates (datasketch's MinHashLSH banding), verified with the signature estimates.

    The bands x rows are those datasketch's `MinHashLSH` picks for `lsh_threshold(...)`; the buckets
    are formed with one sort per band instead of a Python insert per document and band (a test
    checks they equal MinHashLSH's). Returns (a, b, jaccard_estimate, containment_estimate, stats)
    for pairs whose chosen similarity is at least `floor`. Containment is 0 where `size_guard` fails (the
    smaller set is below `min_size_ratio` of the larger and below `min_shingles`): a short page (a
    soft-404 in a site template) is never "contained" in a long article. Estimates are approximate (MinHash); with `verify: exact` (the default)
    the engine replaces them with exact scores from the shingle sets (`exact_scores`). With
    `partial_copies` (containment only) the size-partitioned pass `containment_lsh_pairs` adds the copies
    down to a size ratio of `min_size_ratio / SIZE_CLASS_FACTOR` that the one index finds only by chance.
    `mapped`: the signatures lie in a memory map, read as it says (the same pairs).
    """
    sigs = np.ascontiguousarray(signatures, dtype=np.uint32)  # so each chunk's kernel call copies nothing
    n = len(sigs)
    stats = CandidateStats(bucket_cap=bucket_cap)
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), np.empty(0), stats)
    if n < 2:
        return empty
    bands, rows = lsh_params(lsh_threshold(floor, similarity, min_size_ratio), sigs.shape[1])
    stats.lsh_bands, stats.lsh_rows = bands, rows
    sizes = np.asarray(n_shingles, dtype=np.float64)

    def band(
        table: tuple[np.ndarray, np.ndarray] | None, groups: Iterable[tuple[np.ndarray, np.ndarray]] | None
    ) -> tuple[CandidateStats, list[tuple[np.ndarray, ...]]]:
        return verified_band_pairs(
            sigs,
            sizes,
            table,
            similarity=similarity,
            floor=floor,
            min_size_ratio=min_size_ratio,
            min_shingles=min_shingles,
            bucket_cap=bucket_cap,
            groups=groups,
            rows=None if mapped is None else mapped.rows,
            sink=None if mapped is None else mapped.pairs.append,
        )

    # Out of core, a band is grouped in the thread that scores it, a group of its buckets at a time, and
    # the pairs kept go to disk.
    work = (
        ((table, None) for table in _lsh_tables(sigs, bands, rows))
        if mapped is None
        else ((None, _mapped_lsh_runs(sigs, number, rows, mapped, bucket_cap)) for number in range(bands))
    )
    # numpy releases the GIL in the sorts, gathers and compares: threads share the signatures.
    kept: list[tuple[np.ndarray, ...]] = []
    workers = max(1, jobs or default_jobs())
    if mapped is not None:  # each worker holds one band
        workers = max(1, min(workers, mapped.bands))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        inflight: deque[Future[tuple[CandidateStats, list[tuple[np.ndarray, ...]]]]] = deque()
        for table, groups in work:
            inflight.append(pool.submit(band, table, groups))
            while len(inflight) > workers or (inflight and inflight[0].done()):
                band_stats, band_kept = inflight.popleft().result()
                stats.merge(band_stats)
                kept.extend(band_kept)
        for future in inflight:
            band_stats, band_kept = future.result()
            stats.merge(band_stats)
            kept.extend(band_kept)
    if partial_copies and similarity == "containment":
        pa_, pb_, pjac, pcont, partial = containment_lsh_pairs(
            sigs,
            sizes,
            floor=floor,
            min_size_ratio=min_size_ratio,
            lowest_ratio=partial_copy_ratio(min_size_ratio),
            min_shingles=min_shingles,
            bucket_cap=bucket_cap,
            mapped=mapped,
        )
        add_size_class_pass(stats, partial, bucket_cap)
        kept.append((pa_ * n + pb_, pjac, pcont))
    stats.warn_capped("LSH", bucket_cap)
    if mapped is not None:
        return (*mapped.pairs.unique(n), stats)
    if not kept:
        return empty
    codes, jac, cont = (np.concatenate(parts) for parts in zip(*kept, strict=True))
    codes, first = np.unique(codes, return_index=True)  # sorted by (a, b)
    return codes // n, codes % n, jac[first], cont[first], stats


# --- exact verification ----------------------------------------------------------------------------
def intersection_sizes(
    values: np.ndarray,
    lens: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    chunk: int = EXACT_CHUNK,
    *,
    offsets: np.ndarray | None = None,
    compiled: bool = True,
) -> np.ndarray:
    """|S_a & S_b| for each pair, where set i is values[off[i] : off[i] + lens[i]] (sorted, distinct uint32);
    `off` is `offsets`, or by default the sets lie back to back in order.

    Compiled: one merge per pair (`kernels.intersect_counts`). The numpy reference: per chunk of pairs,
    the larger sets of the chunk become one sorted array of keys (set rank << 32 | value); each element
    of each pair's smaller set is looked up with one `searchsorted`. Cost ~ the sum of the smaller sets'
    sizes, not their product.
    """
    lens = np.ascontiguousarray(lens, dtype=np.int64)
    off = (
        np.concatenate(([0], np.cumsum(lens)[:-1])).astype(np.int64)
        if offsets is None
        else np.ascontiguousarray(offsets, dtype=np.int64)
    )
    a, b = np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64)
    if compiled and kernels is not None:
        out = np.empty(len(a), dtype=np.int64)
        kernels.intersect_counts(np.ascontiguousarray(values, dtype=np.uint32), off, lens, a, b, out)
        return out
    big = np.where(lens[a] >= lens[b], a, b)
    small = np.where(lens[a] >= lens[b], b, a)
    out = np.zeros(len(a), dtype=np.int64)
    cum = np.cumsum(lens[small])
    lo = 0
    while lo < len(a):  # chunks of consecutive pairs whose smaller sets hold about `chunk` values
        hi = max(lo + 1, int(np.searchsorted(cum, (cum[lo - 1] if lo else 0) + chunk, side="right")))
        sel = slice(lo, hi)
        bigs, rank = np.unique(big[sel], return_inverse=True)
        keys = (np.repeat(np.arange(len(bigs), dtype=np.uint64), lens[bigs]) << _U32) | values[
            concat_ranges(off[bigs], lens[bigs])
        ].astype(np.uint64)
        q_len = lens[small[sel]]
        q_pair = np.repeat(np.arange(len(q_len)), q_len)
        q = (rank[q_pair].astype(np.uint64) << _U32) | values[concat_ranges(off[small[sel]], q_len)].astype(
            np.uint64
        )
        pos = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
        hit = keys[pos] == q if len(keys) else np.zeros(len(q), dtype=bool)
        out[sel] = np.bincount(q_pair, weights=hit, minlength=len(q_len)).astype(np.int64)
        lo = hi
    return out


def exact_scores(
    inter: np.ndarray, size_a: np.ndarray, size_b: np.ndarray, min_size_ratio: float, min_shingles: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Jaccard, containment) from intersection and set sizes, with the size-ratio guard on containment."""
    sa, sb = np.asarray(size_a, dtype=np.float64), np.asarray(size_b, dtype=np.float64)
    inter = np.asarray(inter, dtype=np.float64)
    union = sa + sb - inter
    jac = np.divide(inter, union, out=np.ones_like(union), where=union > 0)
    smaller = np.minimum(sa, sb)
    cont = np.divide(inter, smaller, out=np.zeros_like(smaller), where=smaller > 0)
    return jac, np.where(size_guard(sa, sb, min_size_ratio, min_shingles), cont, 0.0)


# --- size-partitioned LSH for partial copies (LSH Ensemble) ----------------------------------------
# Sets are put in size classes that grow by this factor; two sets d classes apart have a size ratio in
# (SIZE_CLASS_FACTOR ** -(d + 1), SIZE_CLASS_FACTOR ** -(d - 1)).
SIZE_CLASS_FACTOR = 2**0.5
_INDEXED = np.uint64(1)  # the lowest bit of a size-class key: an indexed entry, not a query


def partial_copy_ratio(min_size_ratio: float) -> float:
    """The lowest size ratio the size-partitioned pass looks for under `partial_copies`: one size class
    below the guard's ratio (a cut-short copy at 35% of its original at the default 0.5)."""
    return min_size_ratio / SIZE_CLASS_FACTOR


def size_class_tables(
    lowest_ratio: float, num_perm: int, containment: float = CONTAINMENT_INDEXED
) -> list[SizeClassTables]:
    """The tables of `containment_lsh_pairs`: class distances d = 2, 3, ... down to size ratios of
    `lowest_ratio`, each with the bands x rows datasketch picks for the Jaccard that containment
    `containment` implies at the distance's lowest ratio q (c*q / (1 + q - c*q)); distances with the
    same bands x rows share their tables."""
    params: dict[tuple[int, int], list[int]] = {}
    d = 2
    while SIZE_CLASS_FACTOR ** -(d - 1) > lowest_ratio:
        q_lo = max(SIZE_CLASS_FACTOR ** -(d + 1), lowest_ratio)
        bands_rows = lsh_params(containment * q_lo / (1 + q_lo - containment * q_lo), num_perm)
        params.setdefault(bands_rows, []).append(d)
        d += 1
    return [SizeClassTables(b, r, tuple(ds)) for (b, r), ds in params.items()]


def size_classes(n_shingles: np.ndarray) -> np.ndarray:
    """The size class of each set (int64): floor(log(size) / log(SIZE_CLASS_FACTOR)), empty sets in class 0."""
    sizes = np.asarray(n_shingles, dtype=np.float64)
    return np.floor(np.log(np.maximum(sizes, 1)) / np.log(SIZE_CLASS_FACTOR)).astype(np.int64)


def size_class_keys(
    block: np.ndarray, size_class: np.ndarray, distances: Sequence[int], *, compiled: bool = True
) -> np.ndarray:
    """The bucket keys of one band (n x rows, uint32) of sets in `size_class`: n indexed entries (lowest bit
    1, in the set's own class) then n query entries per distance d (lowest bit 0, in the class d above the
    set's). A query and an indexed entry share a bucket (all bits but the lowest) when their band rows are
    equal and the indexed set is d classes above the query's; entry k % n is set k % n. Compiled
    (`kernels.size_class_keys`): one pass over the rows; numpy: a pass over the n keys per column and per
    mixing step of each entry."""
    rows = _kernel_rows(block) if compiled else None
    if rows is not None:
        out = np.empty(len(rows) * (1 + len(distances)), dtype=np.uint64)
        own_class = np.ascontiguousarray(size_class, dtype=np.int64)
        kernels.size_class_keys(rows, own_class, np.asarray(distances, dtype=np.int64), out)
        return out
    own = np.asarray(size_class).astype(np.uint64)
    with np.errstate(over="ignore"):
        key = band_keys(block, compiled=compiled) * _MIX
        return np.concatenate(
            [fmix64(key + own) | _INDEXED] + [fmix64(key + own + np.uint64(d)) & ~_INDEXED for d in distances]
        )


def size_class_key_columns(
    signatures: np.ndarray,
    size_class: np.ndarray,
    tables: SizeClassTables,
    *,
    compiled: bool = True,
) -> Iterator[tuple[int, np.ndarray]]:
    """(band, `size_class_keys` of the band's columns) for each band of `tables` in order: the same keys, made
    by the compiled kernel a group of bands at a time over chunks of rows (see KEY_CHUNK_ROWS)."""
    sigs, rows, distances = signatures, tables.rows, tables.distances
    if not (compiled and kernels is not None and sigs.dtype == np.uint32 and sigs.flags.c_contiguous):
        for band in range(tables.bands):
            yield band, size_class_keys(sigs[:, band * rows : (band + 1) * rows], size_class, distances)
        return
    n, entries = len(sigs), 1 + len(distances)
    own = np.ascontiguousarray(size_class, dtype=np.int64)
    dist = np.asarray(distances, dtype=np.int64)
    scratch = np.empty(KEY_CHUNK_ROWS * entries, dtype=np.uint64)
    for group in _key_groups(tables.bands, 8 * n * entries):
        out = np.empty((len(group), entries, n), dtype=np.uint64)
        for start in range(0, n, KEY_CHUNK_ROWS):
            chunk = sigs[start : start + KEY_CHUNK_ROWS]
            m = len(chunk)
            for k, band in enumerate(group):
                kernels.size_class_keys(
                    chunk[:, band * rows : (band + 1) * rows],
                    own[start : start + m],
                    dist,
                    scratch[: m * entries],
                )
                out[k, :, start : start + m] = scratch[: m * entries].reshape(entries, m)
        yield from zip(group, out.reshape(len(group), entries * n), strict=True)


def cross_pairs(
    keys: np.ndarray, ids: np.ndarray, cap: int, stats: CandidateStats
) -> tuple[np.ndarray, np.ndarray]:
    """Every (query, indexed) pair of `ids` in one bucket. `keys`: a bucket in all bits but the lowest, which
    is 0 for a query entry and 1 for an indexed one (`size_class_keys`). Buckets of more than `cap` entries
    are not expanded (counted in `stats`, with the largest bucket)."""
    order = np.argsort(keys)  # a bucket's queries before its indexed entries
    sk = keys[order]
    bucket = sk >> np.uint64(1)
    starts = np.concatenate(([0], np.flatnonzero(bucket[1:] != bucket[:-1]) + 1))
    sizes = np.diff(np.concatenate((starts, [len(sk)])))
    n_x = np.add.reduceat((sk & _INDEXED).astype(np.int64), starts)
    n_q = sizes - n_x
    big = sizes > cap
    if big.any():
        stats.capped_buckets += int(big.sum())
        stats.capped_members += int(sizes[big].sum())
    stats.largest_bucket = max(stats.largest_bucket, int(sizes.max(initial=0)))
    keep = (n_q > 0) & (n_x > 0) & ~big
    starts, n_q, n_x = starts[keep], n_q[keep], n_x[keep]
    per_query = np.repeat(n_x, n_q)
    q_pos = concat_ranges(starts, n_q)
    x_pos = concat_ranges(np.repeat(starts + n_q, n_q), per_query)
    return ids[order[np.repeat(q_pos, per_query)]], ids[order[x_pos]]


def cross_groups(
    keys: np.ndarray, ids: np.ndarray, max_pairs: int, cap: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(keys, ids) of consecutive buckets of `cross_pairs`'s input, each piece holding at most `max_pairs`
    pairs (a larger bucket on its own; buckets above `cap`, which give none, count none): together the
    same pairs and statistics, a bounded piece at a time (as `run_groups` for the LSH bands)."""
    if not len(keys):
        return
    order = np.argsort(keys)
    sk = keys[order]
    bucket = sk >> np.uint64(1)
    starts = np.concatenate(([0], np.flatnonzero(bucket[1:] != bucket[:-1]) + 1))
    del bucket
    sizes = np.diff(np.concatenate((starts, [len(sk)])))
    n_x = np.add.reduceat((sk & _INDEXED).astype(np.int64), starts)
    pairs = np.cumsum(np.where(sizes > cap, 0, n_x * (sizes - n_x)))
    first = 0
    while first < len(starts):
        before = int(pairs[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(pairs, before + max_pairs, side="right")))
        lo, hi = int(starts[first]), int(starts[last]) if last < len(starts) else len(sk)
        yield sk[lo:hi], ids[order[lo:hi]]
        first = last


def add_size_class_pass(stats: CandidateStats, partial: CandidateStats, bucket_cap: int) -> None:
    """Add the size-class pass's tables and candidates to the one index's `stats`, and its notes. Its buckets
    above `bucket_cap` are a note, not the capped-bucket warning, and not in the capped counts: its 3-row
    bands are loose by design, and a site's templated pages of like sizes crowd them with no boilerplate
    being fingerprinted (26 such buckets at 100k make_crawl pages, where the one index has none); the pairs
    in them are left to the one index."""
    stats.tables += partial.tables
    stats.candidates += partial.candidates
    stats.size_class_tables += partial.size_class_tables
    stats.size_class_capped_buckets += partial.capped_buckets
    stats.size_class_capped_members += partial.capped_members
    stats.bucket_cap = bucket_cap


PairFinder = Callable[[np.ndarray, np.ndarray, int, CandidateStats], tuple[np.ndarray, np.ndarray]]


def verified_size_class_pairs(
    signatures: np.ndarray,
    n_shingles: np.ndarray,
    keys: np.ndarray,
    ids: np.ndarray,
    stats: CandidateStats,
    *,
    floor: float,
    min_size_ratio: float,
    min_shingles: int = 0,
    bucket_cap: int = BUCKET_CAP,
    pairs_of: PairFinder = cross_pairs,
    rows: Callable[[np.ndarray], np.ndarray] | None = None,
) -> list[tuple[np.ndarray, ...]]:
    """The candidates of one size-class band, or of a piece of it (`keys`: its `size_class_keys`, entry k
    being set `ids[k]`), counted into `stats` (the caller counts the band's table) and verified for containment with `verify_pairs`: chunks of
    (a * n + b with a < b, jaccard estimate, containment estimate) of the pairs at or above `floor`, n the
    number of signatures. `rows` reads the signatures a chunk compares (`verify_read_pairs`)."""
    n = len(signatures)
    i, j = pairs_of(keys, ids, bucket_cap, stats)
    stats.candidates += len(i)
    kept = list[tuple[np.ndarray, ...]]()
    for lo in range(0, len(i), VERIFY_CHUNK):
        a, b = i[lo : lo + VERIFY_CHUNK], j[lo : lo + VERIFY_CHUNK]
        keep, jac, cont = verify_read_pairs(
            signatures,
            n_shingles,
            a,
            b,
            rows,
            similarity="containment",
            floor=floor,
            min_size_ratio=min_size_ratio,
            min_shingles=min_shingles,
        )
        kept.append((np.minimum(a, b)[keep] * n + np.maximum(a, b)[keep], jac[keep], cont[keep]))
    return kept


def containment_lsh_pairs(
    signatures: np.ndarray,
    n_shingles: np.ndarray,
    *,
    floor: float,
    min_size_ratio: float,
    lowest_ratio: float,
    min_shingles: int = 0,
    containment: float = CONTAINMENT_INDEXED,
    bucket_cap: int = BUCKET_CAP,
    pairs_of: PairFinder = cross_pairs,
    mapped: MappedSignatures | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, CandidateStats]:
    """Candidate pairs of a set and a much larger one, for containment: LSH Ensemble (Zhu et al., VLDB 2016).

    `minhash_pairs` sizes one index for the containment `containment` at the guard's size ratio: a copy
    that is a smaller share of its original (a cut-short copy at 30-50%) has a lower Jaccard and is found
    only by chance. Here the sets are partitioned by size (`size_classes`); a set is a query into the
    classes d = 2, 3, ... above its own, down to size ratios of `lowest_ratio`, with the bands x rows of
    `size_class_tables` (`size_class_keys` are the buckets, `pairs_of` the pairs: `cross_pairs`, or the
    pairs with a new set when a stored result is extended, `stages.incremental.new_cross_pairs`). Only pairs of those
    classes are candidates, so the looser index does not pair every two pages of similar size. Pairs are
    verified with the signature estimates as `minhash_pairs` verifies them (containment at least `floor`,
    `size_guard`); the same return shape, the stats counting this pass's tables and candidates.
    Approximate, as any LSH. `mapped`: the signatures lie in a memory map, a band's buckets are made a
    group at a time, and the pairs found go to `mapped.pairs` (none returned).
    """
    sigs = np.ascontiguousarray(signatures, dtype=np.uint32)
    n = len(sigs)
    stats = CandidateStats(bucket_cap=bucket_cap)
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), np.empty(0), stats)
    sizes = np.asarray(n_shingles, dtype=np.float64)
    if n < 2:
        return empty
    size_class = size_classes(sizes)
    found: list[tuple[np.ndarray, ...]] = []
    for tables in size_class_tables(lowest_ratio, sigs.shape[1], containment):
        stats.size_class_tables += (tables,)
        for groups in _size_class_bands(sigs, size_class, tables, mapped, bucket_cap):
            stats.tables += 1  # a band is one table, in however many pieces out of core
            for keys, ids in groups:
                kept = verified_size_class_pairs(
                    sigs,
                    sizes,
                    keys,
                    ids,
                    stats,
                    floor=floor,
                    min_size_ratio=min_size_ratio,
                    min_shingles=min_shingles,
                    bucket_cap=bucket_cap,
                    pairs_of=pairs_of,
                    rows=None if mapped is None else mapped.rows,
                )
                if mapped is None:
                    found += kept
                else:
                    for codes, jac, cont in kept:
                        mapped.pairs.append(codes, jac, cont)
    stats.warn_capped("size-class LSH", bucket_cap)
    if not found:
        return empty
    codes, jac, cont = (np.concatenate(parts) for parts in zip(*found, strict=True))
    codes, first = np.unique(codes, return_index=True)
    return codes // n, codes % n, jac[first], cont[first], stats


def _size_class_bands(
    sigs: np.ndarray,
    size_class: np.ndarray,
    tables: SizeClassTables,
    mapped: MappedSignatures | None,
    bucket_cap: int,
) -> Iterator[Iterator[tuple[np.ndarray, np.ndarray]]]:
    """Per band of `tables`: its (keys, ids) entries (`size_class_keys`, the unit id of each), all at once,
    or out of core (`mapped`) a group of whole buckets at a time (`MappedSignatures.bucket_groups`), each
    cut into pieces of about `mapped.candidates` pairs (`cross_groups`)."""
    n, entries = len(sigs), len(tables.distances) + 1
    if mapped is None:
        ids = np.tile(np.arange(n, dtype=np.int64), entries)
        for _, keys in size_class_key_columns(sigs, size_class, tables):
            yield iter([(keys, ids)])
        return
    for band in range(tables.bands):
        yield _mapped_size_class_band(sigs, size_class, tables, band, mapped, bucket_cap)


def _mapped_size_class_band(
    sigs: np.ndarray,
    size_class: np.ndarray,
    tables: SizeClassTables,
    band: int,
    mapped: MappedSignatures,
    bucket_cap: int,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    block = mapped.band(sigs, slice(band * tables.rows, (band + 1) * tables.rows))

    def entry_keys(at: slice | np.ndarray) -> np.ndarray:
        return size_class_keys(block[at], size_class[at], tables.distances)

    n = len(block)
    for positions, keys in mapped.bucket_groups(n, entry_keys, len(tables.distances) + 1):
        yield from cross_groups(keys, positions % n, mapped.candidates, bucket_cap)
