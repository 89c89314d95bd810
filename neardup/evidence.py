"""Why two pages matched: the passages they share, their scores, and what made them a candidate pair.

`pair_evidence` answers for one pair under a setting, from the texts and the stored fingerprints:

- the **shared passages** (`shared_passages`): the longest common runs of words, each located in both texts,
  taken longest first over the words not yet in a passage (greedy string tiling, as plagiarism detectors
  tile two texts), down to one shingle's length: shorter runs share no shingle, so they add nothing to the
  scores;
- the **scores** (`pair_scores`): exact Jaccard and the containment each way of the shingle sets the exact
  verification intersects (`batches.set_batch`), and the engine's containment (of the smaller set, 0 where
  the size guard fails);
- **what made it a candidate** (`trace_minhash`, `trace_simhash`): the candidate search replayed on the two
  stored fingerprints: which LSH bands (or SimHash blocks) hold equal values, the estimate the search
  verified against the floor, whether the size-class pass for partial copies could find it, and whether
  exact verification kept it. The replay follows `candidates.minhash_pairs` and `candidates.simhash_pairs`
  with the parameters they derive from the setting and the number of texts.
"""

from __future__ import annotations

import functools
import heapq
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from .analysis import Fingerprints, pair_scores
from .candidate_stats import SizeClassTables
from .candidates import BUCKET_CAP, block_masks, choose_r, size_classes, size_guard
from .capped_buckets import (
    INDEX,
    CappedBuckets,
    index_bucket,
    index_params,
    size_class_bucket,
    size_class_pass,
)
from .config import Config
from .minhash import estimate_containment, estimate_jaccard
from .shingles import shingle_hashes_of, shingle_set32_of, text_words, word_hashes

_WORD = re.compile(r"\w+")
# A shingle seen more often than this in one text is no anchor for a passage (a repeated boilerplate line
# would pair every copy with every other); the passages through it are still found from their other shingles.
MAX_ANCHOR_REPEATS = 64


# --- words with their place in the text -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TextWords:
    """A text's words as the shingles see them (NFKC, case-folded runs of word characters), with the
    character span of each in the text as stored, for highlighting."""

    text: str
    words: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.words)

    def span(self, first: int, n_words: int) -> tuple[int, int]:
        """The characters of words first .. first + n_words - 1."""
        return self.starts[first], self.ends[first + n_words - 1]


def text_words_with_spans(text: str) -> TextWords:
    """`TextWords` of `text`: each run of word characters, folded on its own as `shingles.words` folds the
    whole text (the same words for texts whose folding keeps their word boundaries, as it does for the
    bundled sample's)."""
    found = list(_WORD.finditer(text))
    return TextWords(
        text,
        tuple(map(_fold_word, (m.group() for m in found))),
        tuple(m.start() for m in found),
        tuple(m.end() for m in found),
    )


def _fold_word(word: str) -> str:
    return word.casefold() if word.isascii() else unicodedata.normalize("NFKC", word).casefold()


# --- shared passages ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Passage:
    """A run of `n_words` equal words at word `start_a` of text A and word `start_b` of text B."""

    start_a: int
    start_b: int
    n_words: int


def _gram_keys(words: tuple[str, ...], k: int) -> np.ndarray:
    return shingle_hashes_of(word_hashes(list(words)), k) if len(words) >= k else np.empty(0, np.uint64)


def _maximal_runs(words_a: tuple[str, ...], words_b: tuple[str, ...], k: int) -> list[tuple[int, int, int]]:
    """Every maximal common run of at least `k` words, as (start_a, start_b, n_words): the diagonals of
    equal k-word shingles, joined where they follow one another."""
    ga, gb = _gram_keys(words_a, k), _gram_keys(words_b, k)
    if not len(ga) or not len(gb):
        return []
    order = np.argsort(ga, kind="stable")
    sorted_a = ga[order]
    lo = np.searchsorted(sorted_a, gb, "left")
    hi = np.searchsorted(sorted_a, gb, "right")
    counts = hi - lo
    counts[counts > MAX_ANCHOR_REPEATS] = 0
    if not counts.any():
        return []
    j = np.repeat(np.arange(len(gb)), counts)
    first = np.repeat(lo - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    i = order[np.arange(len(j)) + first]
    diagonal = i - j
    by = np.lexsort((i, diagonal))
    i, j, diagonal = i[by], j[by], diagonal[by]
    starts = np.flatnonzero(np.concatenate(([True], (diagonal[1:] != diagonal[:-1]) | (i[1:] != i[:-1] + 1))))
    ends = np.concatenate((starts[1:], [len(i)]))
    runs = []
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        a0, b0, n = int(i[s]), int(j[s]), e - s + k - 1
        if words_a[a0 : a0 + n] == words_b[b0 : b0 + n]:  # a hash collision joins no run
            runs.append((a0, b0, n))
    return runs


def shared_passages(words_a: tuple[str, ...], words_b: tuple[str, ...], min_words: int) -> list[Passage]:
    """The longest common runs of words, each word of either text in one passage at most: the longest run
    of words not yet in a passage is taken first, then the next, down to `min_words` (greedy string tiling;
    passages may come in another order in each text). Longest first, then by place in A."""
    k = max(1, min_words)
    used_a = np.zeros(len(words_a), dtype=bool)
    used_b = np.zeros(len(words_b), dtype=bool)
    heap = [(-n, a, b) for a, b, n in _maximal_runs(words_a, words_b, k)]
    heapq.heapify(heap)
    out: list[Passage] = []
    while heap:
        (
            neg,
            a,
            b,
        ) = heapq.heappop(heap)
        n = -neg
        free = ~(used_a[a : a + n] | used_b[b : b + n])
        if free.all():
            used_a[a : a + n] = used_b[b : b + n] = True
            out.append(Passage(a, b, n))
            continue
        # What is left of the run between the words taken since it was found goes back, if long enough.
        edges = np.flatnonzero(np.diff(np.concatenate(([False], free, [False])).astype(np.int8)))
        for s, e in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            if e - s >= k:
                heapq.heappush(heap, (-(e - s), a + s, b + s))
    return sorted(out, key=lambda p: (-p.n_words, p.start_a))


# --- scores ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Scores:
    """Exact scores of two shingle sets (the sorted uint32 values exact verification intersects)."""

    shingles_a: int
    shingles_b: int
    shared: int
    jaccard: float
    containment_a_in_b: float  # share of A's shingles that B has
    containment_b_in_a: float
    containment: float  # as the engine stores it: of the smaller set; 0 where the size guard fails
    size_guard_passed: bool


def shingle_set(text: str, k: int) -> np.ndarray:
    """The text's shingle set as exact verification builds it (`batches.set_batch`)."""
    return shingle_set32_of(text_words(text)[1], k)


def exact_pair_scores(set_a: np.ndarray, set_b: np.ndarray, config: Config) -> Scores:
    na, nb = len(set_a), len(set_b)
    shared = int(len(np.intersect1d(set_a, set_b, assume_unique=True)))
    union = na + nb - shared
    guard = bool(
        size_guard(np.array([na]), np.array([nb]), config.min_size_ratio, config.min_contained_shingles)[0]
    )
    smaller = min(na, nb)
    return Scores(
        shingles_a=na,
        shingles_b=nb,
        shared=shared,
        jaccard=shared / union if union else 1.0,
        containment_a_in_b=shared / na if na else 0.0,
        containment_b_in_a=shared / nb if nb else 0.0,
        containment=(shared / smaller if smaller else 0.0) if guard else 0.0,
        size_guard_passed=guard,
    )


# --- what made it a candidate ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BandHit:
    """A band (or SimHash table) in which the two fingerprints are equal, and how many texts share that
    bucket: a bucket of more than `candidates.BUCKET_CAP` is not expanded into pairs. The sizes are counted
    in band order up to the first bucket that was expanded (a count reads every fingerprint); the bands
    after it have None, as has an expanded bucket where only the buckets over the cap are known
    (`capped_buckets.CappedBuckets`)."""

    band: int
    bucket_size: int | None

    @property
    def expanded(self) -> bool:
        return self.bucket_size is None or self.bucket_size <= BUCKET_CAP


def _counted(hits: Sequence[tuple[int, Callable[[], int | None]]]) -> tuple[BandHit, ...]:
    """`BandHit`s of (band, bucket size counter; a counter of capped buckets gives None for a bucket at or
    under the cap): counted until a bucket at or under the cap is found."""
    out, found = [], False
    for band, count in hits:
        size = None if found else count()
        found = found or size is None or size <= BUCKET_CAP
        out.append(BandHit(band, size))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class SizeClassTrace:
    """The size-class pass for partial copies (`candidates.containment_lsh_pairs`) on this pair."""

    class_a: int
    class_b: int
    searched: bool  # the classes are a distance apart that the pass queries
    bands: int
    rows: int
    hits: tuple[BandHit, ...]

    @property
    def distance(self) -> int:
        return abs(self.class_a - self.class_b)

    @property
    def found(self) -> bool:
        return self.searched and any(h.expanded for h in self.hits)


@dataclass(frozen=True, slots=True)
class MinHashTrace:
    """The MinHash candidate search replayed on the pair's two stored signatures."""

    bands: int
    rows: int
    hits: tuple[BandHit, ...]  # the one LSH index's bands with equal rows
    estimate_jaccard: float  # share of equal signature values
    estimate_containment: float  # from the Jaccard estimate and the set sizes; 0 where the size guard fails
    similarity: str  # what the floor applies to
    floor: float
    size_class: SizeClassTrace | None  # None: the setting runs no size-class pass
    verify: str  # "exact" | "estimate"
    exact_score: float  # the exact score in `similarity`
    stored: bool  # a stored candidate pair of this setting

    @property
    def estimate(self) -> float:
        return self.estimate_jaccard if self.similarity == "jaccard" else self.estimate_containment

    @property
    def found_by_index(self) -> bool:
        return any(h.expanded for h in self.hits)

    @property
    def estimate_passed(self) -> bool:
        return self.estimate >= self.floor

    @property
    def size_class_found(self) -> bool:
        # The pass verifies with the containment estimate, whatever the setting's similarity.
        return (
            self.size_class is not None and self.size_class.found and self.estimate_containment >= self.floor
        )

    @property
    def exact_passed(self) -> bool:
        return self.verify != "exact" or self.exact_score >= self.floor


@dataclass(frozen=True, slots=True)
class SimHashTrace:
    """The SimHash pigeonhole search replayed on the pair's two stored fingerprints: the 64 bits in
    `n_blocks` blocks, a table per combination of `r` blocks; the pair is a candidate in each table whose
    blocks it agrees on, and kept when the fingerprints differ in at most `max_bits`."""

    hamming_bits: int
    max_bits: int
    n_blocks: int
    r: int
    agreeing_blocks: tuple[int, ...]
    tables: tuple[BandHit, ...]  # the tables (combinations of r agreeing blocks) it collided in
    stored: bool

    @property
    def found(self) -> bool:
        return any(t.expanded for t in self.tables) and self.hamming_bits <= self.max_bits


def _bucket_size(block: np.ndarray, row: np.ndarray) -> int:
    return int(np.count_nonzero((block == row).all(axis=1)))


def _rows_bucket_size(sigs: np.ndarray, rows: np.ndarray, cols: slice, row: np.ndarray) -> int:
    return _bucket_size(sigs[rows, cols], row)


def _masked_bucket_size(fps: np.ndarray, fingerprint: int, mask: int) -> int:
    m = np.uint64(mask)
    return int(np.count_nonzero((fps & m) == (np.uint64(fingerprint) & m)))


def _pair_signatures(
    fp: Fingerprints,
    unit_a: int,
    unit_b: int,
    capped: CappedBuckets | None,
    pair_signatures: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(signature of unit_a, of unit_b, every unit's signature: an empty matrix where `capped` stands in
    for them) for `trace_minhash`."""
    if capped is not None:
        if pair_signatures is not None:
            return pair_signatures[0], pair_signatures[1], np.empty((0, len(pair_signatures[0])), np.uint32)
        sa, sb = fp.signatures(np.array([unit_a, unit_b]))
        return sa, sb, np.empty((0, len(sa)), np.uint32)
    every = fp.held_signatures() if fp.signature_units is None else None
    if every is None:
        raise ValueError(
            "trace_minhash() needs every unit's signature in the fingerprints, or the set's capped buckets"
        )
    return every[unit_a], every[unit_b], every


def _size_class_trace(
    config: Config,
    classes: np.ndarray,
    pair: tuple[tuple[int, np.ndarray], tuple[int, np.ndarray]],
    sigs: np.ndarray,
    capped: CappedBuckets | None,
) -> SizeClassTrace:
    """The size-class pass replayed on `pair` ((unit, signature) twice) of units of size classes `classes`:
    bucket sizes from `capped`, else counted in `sigs` (every unit's signatures)."""
    (unit_a, sa), (unit_b, sb) = pair
    ca, cb = int(classes[unit_a]), int(classes[unit_b])
    # the query, the indexed set
    (low, sig_low), (high, sig_high) = pair if ca <= cb else pair[::-1]
    for number, tables in enumerate(size_class_pass(config, len(sa))):
        if abs(ca - cb) not in tables.distances:
            continue
        r = tables.rows
        # a bucket: the indexed entries in the larger set's class, the queries from the classes below it
        in_bucket = classes == classes[high]
        for d in tables.distances:
            in_bucket |= classes == classes[high] - d

        def bucket_size(
            band: int,
            number: int = number,
            tables: SizeClassTables = tables,
            in_bucket: np.ndarray = in_bucket,
        ) -> Callable[[], int | None]:
            if capped is not None:
                key = size_class_bucket(sig_high, int(classes[high]), tables, band)
                return functools.partial(capped.size_of, number, band, key)
            cols = slice(band * tables.rows, (band + 1) * tables.rows)
            return functools.partial(_rows_bucket_size, sigs, in_bucket, cols, sig_high[cols])

        hits = [
            (band, bucket_size(band))
            for band in range(tables.bands)
            if np.array_equal(sig_low[band * r : (band + 1) * r], sig_high[band * r : (band + 1) * r])
        ]
        return SizeClassTrace(ca, cb, True, tables.bands, tables.rows, _counted(hits))
    return SizeClassTrace(ca, cb, False, 0, 0, ())


def trace_minhash(
    fp: Fingerprints,
    config: Config,
    unit_a: int,
    unit_b: int,
    *,
    exact_score: float,
    stored: bool,
    capped: CappedBuckets | None = None,
    pair_signatures: tuple[np.ndarray, np.ndarray] | None = None,
) -> MinHashTrace:
    """Replay `candidates.minhash_pairs` (and its size-class pass) on units `unit_a` and `unit_b` of `fp`.
    A band's bucket size is counted in every unit's signature, where `fp` holds them all
    (`Fingerprints.signature_units` is None); or, for a bucket over the cap, read from `capped` (the set's
    `CappedBuckets`), with the two units' signatures `pair_signatures` (default: `fp`'s), where `fp` holds
    only those of the units in a pair."""
    sa, sb, sigs = _pair_signatures(fp, unit_a, unit_b, capped, pair_signatures)
    sizes = fp.n_shingles.astype(np.float64)
    bands, rows = index_params(config, len(sa))
    equal = sa == sb

    def bucket_size(band: int) -> Callable[[], int | None]:
        if capped is not None:
            return functools.partial(capped.size_of, INDEX, band, index_bucket(sa, band, rows))
        cols = slice(band * rows, (band + 1) * rows)
        return functools.partial(_bucket_size, sigs[:, cols], sa[cols])

    hits = [
        (band, bucket_size(band)) for band in range(bands) if equal[band * rows : (band + 1) * rows].all()
    ]
    jac = float(estimate_jaccard(sa, sb))
    na, nb = sizes[unit_a], sizes[unit_b]
    guard = bool(
        size_guard(np.array([na]), np.array([nb]), config.min_size_ratio, config.min_contained_shingles)[0]
    )
    cont = float(estimate_containment(np.array(jac), np.array(na), np.array(nb))) if guard else 0.0
    size_class = None
    if config.searches_partial_copies:
        size_class = _size_class_trace(
            config, size_classes(sizes), ((unit_a, sa), (unit_b, sb)), sigs, capped
        )
    return MinHashTrace(
        bands=bands,
        rows=rows,
        hits=_counted(hits),
        estimate_jaccard=jac,
        estimate_containment=cont,
        similarity=config.similarity,
        floor=config.minhash_floor,
        size_class=size_class,
        verify=config.verify,
        exact_score=exact_score,
        stored=stored,
    )


def trace_simhash(
    fp: Fingerprints, config: Config, unit_a: int, unit_b: int, *, stored: bool
) -> SimHashTrace:
    """Replay `candidates.simhash_pairs` on units `unit_a` and `unit_b` of `fp`."""
    assert fp.simhash is not None
    fps = fp.simhash.astype(np.uint64)
    max_bits = config.simhash_max_bits
    r = choose_r(len(fps), max_bits)
    masks = block_masks(max_bits + r)
    fa, fb = int(fps[unit_a]), int(fps[unit_b])
    agree = tuple(k for k, m in enumerate(masks) if (fa ^ fb) & m == 0)
    tables = [
        (number, functools.partial(_masked_bucket_size, fps, fa, sum(masks[k] for k in combo)))
        for number, combo in enumerate(combinations(range(len(masks)), r))
        if set(combo) <= set(agree)
    ]
    return SimHashTrace(
        hamming_bits=(fa ^ fb).bit_count(),
        max_bits=max_bits,
        n_blocks=len(masks),
        r=r,
        agreeing_blocks=agree,
        tables=_counted(tables),
        stored=stored,
    )


# --- one pair -------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PairEvidence:
    """Why pages `page_a` and `page_b` match (or do not) under `config`."""

    page_a: int
    page_b: int
    unit_a: int  # -1: a degenerate page, never fingerprinted
    unit_b: int
    words_a: TextWords
    words_b: TextWords
    passages: tuple[Passage, ...]  # longest first
    min_passage_words: int
    scores: Scores
    candidate: MinHashTrace | SimHashTrace | None  # None: the same text, or a page without fingerprint
    stored_score: float | None  # the stored pair's score in the threshold's unit (None: no stored pair)
    threshold: float
    method: str

    @property
    def same_text(self) -> bool:
        return self.unit_a == self.unit_b and self.unit_a >= 0

    @property
    def words_shared_a(self) -> int:
        return sum(p.n_words for p in self.passages)

    @property
    def share_a(self) -> float:
        """Share of A's words that lie in a shared passage."""
        return self.words_shared_a / len(self.words_a) if len(self.words_a) else 0.0

    @property
    def share_b(self) -> float:
        return self.words_shared_a / len(self.words_b) if len(self.words_b) else 0.0

    @property
    def linked(self) -> bool:
        """A stored pair at the threshold (or the same text): the pair joins its cluster directly."""
        if self.same_text:
            return True
        if self.stored_score is None:
            return False
        if self.method == "simhash":
            return self.stored_score <= self.threshold
        return self.stored_score >= self.threshold


def unit_of_page(fp: Fingerprints, page_id: int) -> int:
    """The unit (distinct text) of a page in `fp`; -1 for a degenerate page. KeyError if it is not there."""
    rows = np.flatnonzero(fp.arrays["page_id"] == page_id)
    if not len(rows):
        raise KeyError(f"page {page_id} is not in these fingerprints")
    return int(fp.arrays["unit"][rows[0]])


def stored_pair_score(fp: Fingerprints, config: Config, unit_a: int, unit_b: int) -> float | None:
    """The stored pair's score of two units in the threshold's unit, or None where they are no stored pair."""
    lo, hi = min(unit_a, unit_b), max(unit_a, unit_b)
    at = np.flatnonzero((fp.pairs["a"] == lo) & (fp.pairs["b"] == hi))
    return float(pair_scores(fp, config)[at[0]]) if len(at) else None


def pair_evidence(
    fp: Fingerprints,
    config: Config,
    page_a: Mapping[str, Any],
    page_b: Mapping[str, Any],
    *,
    capped: CappedBuckets | None = None,
    pair_signatures: tuple[np.ndarray, np.ndarray] | None = None,
) -> PairEvidence:
    """The evidence for two pages (`Store.page` rows: page_id and text under `config.norm_key`) under
    `config`, from their texts and `fp`, the fingerprints of the same setting (MinHash: holding every unit's
    signature; or, where they hold only some, the set's capped buckets, `capped`, with the two pages' units'
    signatures, `pair_signatures`, where `fp` may not hold them; see `trace_minhash`). Exact but for the estimate, which is the signatures' (approximate, as the search that
    used it)."""
    if config.fingerprint_key != fp.config.fingerprint_key:
        raise ValueError("pair_evidence() needs fingerprints computed for the same setting")
    id_a, id_b = int(page_a["page_id"]), int(page_b["page_id"])
    text_a, text_b = page_a.get("text") or "", page_b.get("text") or ""
    unit_a, unit_b = unit_of_page(fp, id_a), unit_of_page(fp, id_b)
    k = config.shingle_size
    words_a, words_b = text_words_with_spans(text_a), text_words_with_spans(text_b)
    scores = exact_pair_scores(shingle_set(text_a, k), shingle_set(text_b, k), config)
    stored = stored_pair_score(fp, config, unit_a, unit_b) if min(unit_a, unit_b) >= 0 else None
    trace: MinHashTrace | SimHashTrace | None = None
    if unit_a >= 0 and unit_b >= 0 and unit_a != unit_b:
        if config.method == "simhash":
            trace = trace_simhash(fp, config, unit_a, unit_b, stored=stored is not None)
        else:
            exact = scores.jaccard if config.similarity == "jaccard" else scores.containment
            trace = trace_minhash(
                fp,
                config,
                unit_a,
                unit_b,
                exact_score=exact,
                stored=stored is not None,
                capped=capped,
                pair_signatures=pair_signatures,
            )
    return PairEvidence(
        page_a=id_a,
        page_b=id_b,
        unit_a=unit_a,
        unit_b=unit_b,
        words_a=words_a,
        words_b=words_b,
        passages=tuple(shared_passages(words_a.words, words_b.words, k)),
        min_passage_words=k,
        scores=scores,
        candidate=trace,
        stored_score=stored,
        threshold=config.threshold,
        method=config.method,
    )
