"""The report's three numbers at a setting whose fingerprints are not computed yet, estimated from a random
sample of the pages (what the app shows within seconds while the exact set is computed).

The sample is drawn as runs of consecutive pages (by page id; `SAMPLE_RUN` each, the runs chosen uniformly
at random with a fixed seed): every page has the same chance to be in it, and the texts of a run are read
from one or two row groups of the store, where pages drawn one by one would decompress every text.

The sample's units (distinct content texts) are sketched and paired at the new setting with the engine's own
stages (`batches.sketch_batch`, `stages.pairs.find_pairs`, exact verification included), and clustered.

Why the sample's own counts cannot simply be scaled up: a page is a near (or exact) duplicate through a
partner, and a uniform sample of a share p of the pages holds a page's partner with probability about p. A
two-page cluster is seen whole with probability p^2 (1 in 2,500 at p = 2%), so in-sample counts times 1/p
under-count near copies many times over, and by how much depends on the crawl's cluster sizes.

The estimator used here is a ratio estimator against a reference: a setting whose exact numbers are known
(the one the app showed before the change, whose fingerprints are in memory). The same sample is counted at
both settings (the reference's stored pairs between two sampled units are exactly its pairs in the sample);
the sample under-counts both alike, so

    estimate(new) = exact(reference) * count_in_sample(new) / count_in_sample(reference)

It assumes the sample's under-count is the same at both settings: that the new setting's clusters have
about the reference's sizes. That holds for a neighbouring shingle size or the other method at the same
size; it holds less when a setting merges or splits clusters wholesale (a big template cluster). Exact and
byte-identical duplicates depend on neither shingle size nor method: with the reference's normalization and
`min_words` their two sample counts are equal and the estimate is the reference's exact count (an interval of
width 0). Another normalization or `min_words` has no estimate (its texts are not the reference's).

The interval is a delete-a-group jackknife: the sampled runs are dealt into `JACKKNIFE_GROUPS` groups, the
ratio computed without each group in turn, and its variance taken from their spread; the bounds are the estimate
plus or minus a Student-t quantile times its standard error. A sample in which no count differs between the
two settings has a jackknife spread of 0, yet the crawl may hold changes the sample has none of: the interval
is at least as wide as the Wilson interval of the share of the sample's count that differs (k = |new - ref|
of n = max(new, ref); for k = 0, a relative half-width of 1.96^2 / (n + 1.96^2)). Results are approximate: tests check, over
seeds, that the exact number falls inside the interval in most of them (tests/test_estimate.py).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from .analysis import Fingerprints, duplicate_pairs
from .batches import sketch_batch
from .clusters import components
from .config import Config
from .labels import wilson
from .parallel import parallel_map
from .stages.base import BATCH, PARALLEL_MIN
from .stages.pairs import find_pairs
from .store import Store

# Pages sampled: 3.4 CPU-s on 100k pages of the 16 KB bench crawl (reading the texts 0.8, sketching 1.4 over
# the workers, pairing and verifying 0.6, counting the rest; bench/RESULTS.md), ~2.5 s on two idle cores.
# None of it grows with the crawl: the texts read are those of the sampled runs.
SAMPLE_PAGES = 20_000
# Consecutive pages (by page id) drawn together, so a run's texts are read from a few stretches of the store:
# 2,000 pages in 4 runs of 500 read in 0.14 CPU-s at 100k pages, 2,000 drawn one by one in 1.07 (every text
# of the table decompressed).
SAMPLE_RUN = 1_000
SAMPLE_SEED = 20_240_601
JACKKNIFE_GROUPS = 10
# Student's t at 0.975 with JACKKNIFE_GROUPS - 1 = 9 degrees of freedom: a 95% interval.
T_975_9 = 2.262
Z_975 = 1.96
NUMBERS = ("byte_identical_duplicates", "exact_duplicates", "near_duplicates")
# Counted from the texts and MD5s alone: the same at every shingle size and method of one normalization and
# `min_words` (their sample counts at the two settings are equal too, whatever the sample holds).
SETTING_FREE = ("byte_identical_duplicates", "exact_duplicates")


@dataclass(frozen=True, slots=True)
class Estimated:
    """One estimated count with its 95% interval (low <= value <= high), or no value where the sample has
    nothing to scale from (none of the reference's near duplicates is in it)."""

    value: int | None
    low: int | None
    high: int | None

    @property
    def exact(self) -> bool:
        """Whether the interval has width 0 (the count does not depend on what changed)."""
        return self.value is not None and self.low == self.high == self.value


@dataclass(frozen=True, slots=True, kw_only=True)
class SampleCounts:
    """What an estimate needs from the sample, computed once per (setting, reference) and kept for every
    threshold: the sampled pages (content or not, their MD5 and unit codes, their jackknife group) and the
    pairs of sampled units at the new setting and at the reference's, with their scores."""

    config: Config  # the new setting (any threshold)
    reference: Config  # the reference's setting (any threshold)
    total_pages: int
    content: np.ndarray  # per sampled page: a content page (not degenerate)
    md5: np.ndarray  # per sampled page: its MD5's code
    unit: np.ndarray  # per sampled page: its unit's code in the sample, 0..n_units-1 (-1: degenerate)
    group: np.ndarray  # per sampled page: its jackknife group, 0..JACKKNIFE_GROUPS-1
    n_units: int
    pairs: dict[str, np.ndarray]  # the new setting's pairs of sampled units (a, b and the scores)
    reference_pairs: dict[str, np.ndarray]  # the reference's
    seconds: float

    @property
    def sample_pages(self) -> int:
        return len(self.content)


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """The three numbers at `config`, estimated from `sample_pages` of the `total_pages` pages by scaling the
    reference's exact numbers (see the module's docstring)."""

    config: Config
    reference: Config
    sample_pages: int
    total_pages: int
    numbers: Mapping[str, Estimated]  # by NUMBERS' names
    seconds: float  # computing the sample's pairs


def sample_page_rows(
    total_pages: int, sample_pages: int, seed: int = SAMPLE_SEED, *, run_pages: int = SAMPLE_RUN
) -> np.ndarray:
    """Rows 0..total_pages-1 of a random sample of about `sample_pages` (all rows when it would be all runs),
    drawn as runs of `run_pages` consecutive rows: every row has the same chance to be in it, and the texts
    of a run of page ids are read from a few row groups (see `Store.texts_in_ranges`). The same for a seed."""
    runs = -(-total_pages // run_pages)
    wanted = -(-sample_pages // run_pages)
    if wanted >= runs:
        return np.arange(total_pages)
    chosen = np.sort(np.random.default_rng(seed).choice(runs, wanted, replace=False))
    rows = (chosen[:, None] * run_pages + np.arange(run_pages)).ravel()
    return rows[rows < total_pages]


def sample_size(total_pages: int) -> tuple[int, int]:
    """(pages, pages per run) of the sample of a crawl of `total_pages`: SAMPLE_PAGES, at most a fifth of the
    pages (a sample of most of them would cost about what the exact computation does), in runs of at most
    SAMPLE_RUN that make at least two runs per jackknife group."""
    pages = max(1, min(SAMPLE_PAGES, total_pages // 5))
    return pages, max(1, min(SAMPLE_RUN, pages // (2 * JACKKNIFE_GROUPS)))


def jackknife_groups(rows: np.ndarray, run_pages: int = SAMPLE_RUN) -> np.ndarray:
    """The jackknife group of each sampled row: its run's rank, dealt round-robin into JACKKNIFE_GROUPS (the
    runs are what was drawn at random, so a group leaves out whole runs)."""
    run_rank = np.unique(rows // run_pages, return_inverse=True)[1]
    return run_rank % JACKKNIFE_GROUPS


def comparable(config: Config, reference: Config) -> bool:
    """Whether `reference`'s exact numbers can be scaled to `config`: the same texts and content pages."""
    return config.norm_key == reference.norm_key and config.min_words == reference.min_words


def _runs(page_ids: np.ndarray, rows: np.ndarray, run_pages: int) -> list[tuple[int, int]]:
    """(first, last) page id of each run of sampled rows."""
    run = rows // run_pages
    starts = np.flatnonzero(np.r_[True, run[1:] != run[:-1]])
    ends = np.r_[starts[1:], len(rows)] - 1
    return [
        (int(page_ids[s : e + 1].min()), int(page_ids[s : e + 1].max()))
        for s, e in zip(starts, ends, strict=True)
    ]


def _sample_units(
    store: Store, config: Config, ranges: list[tuple[int, int]], exact_keys: list[str], *, jobs: int | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sample's units at `config` (unit_id in `exact_keys`' order, exact_key, n_shingles, simhash,
    minhash), as `Store.unit_sketches` gives them to `find_pairs`, and their texts (exact_key, text): read
    by the sampled runs of page ids, sketched in workers."""
    texts = store.texts_in_ranges(config.norm_key, ranges)
    texts = texts[texts["exact_key"].isin(exact_keys)].drop_duplicates("exact_key", ignore_index=True)
    batches = (
        (texts["exact_key"][i : i + BATCH].tolist(), texts["text"][i : i + BATCH].tolist(), config)
        for i in range(0, len(texts), BATCH)
    )
    tables = list(parallel_map(sketch_batch, batches, jobs=1 if len(texts) < PARALLEL_MIN else jobs))
    units = pa.concat_tables(tables).to_pandas().set_index("exact_key").loc[exact_keys].reset_index()
    units.insert(0, "unit_id", np.arange(len(units), dtype=np.int32))
    return units, texts


def sample_counts(
    store: Store,
    config: Config,
    reference: Fingerprints,
    *,
    sample_pages: int | None = None,
    seed: int = SAMPLE_SEED,
    run_pages: int | None = None,
    jobs: int | None = None,
) -> SampleCounts | None:
    """The sample's pages and pairs at `config` and at the reference's setting (None when the reference is
    not `comparable`). Reads the sampled texts from `store` and pairs them with the engine's stages. The
    sample's size and runs are `sample_size`'s unless given."""
    if not comparable(config, reference.config):
        return None
    default_pages, default_run = sample_size(len(reference.arrays["unit"]))
    sample_pages = default_pages if sample_pages is None else sample_pages
    run_pages = default_run if run_pages is None else run_pages
    t0 = time.perf_counter()
    rows = sample_page_rows(len(reference.arrays["unit"]), sample_pages, seed, run_pages=run_pages)
    ref_unit = reference.arrays["unit"][rows]
    content = ref_unit >= 0
    sampled_units, unit = np.unique(ref_unit[content], return_inverse=True)
    local = np.full(len(ref_unit), -1, dtype=np.int64)
    local[content] = unit
    # the exact key of each sampled unit, from one of its sampled pages
    keys = reference.pages["exact_key"].to_numpy()[rows[content]]
    first = np.unique(unit, return_index=True)[1]
    exact_keys = [str(k) for k in keys[first]]

    ranges = _runs(reference.arrays["page_id"][rows], rows, run_pages)
    units, texts = _sample_units(store, config, ranges, exact_keys, jobs=jobs)
    found = find_pairs(store, config, units, jobs=jobs, texts=texts)
    pairs = {str(k): np.asarray(v) for k, v in found.frame().items()}

    # the reference's stored pairs whose two units are sampled: its pairs within the sample, exactly
    to_local = np.full(reference.n_units, -1, dtype=np.int64)
    to_local[sampled_units] = np.arange(len(sampled_units))
    ra, rb = to_local[reference.pairs["a"]], to_local[reference.pairs["b"]]
    inside = (ra >= 0) & (rb >= 0)
    reference_pairs = {k: np.asarray(v)[inside] for k, v in reference.pairs.items()}
    reference_pairs["a"], reference_pairs["b"] = ra[inside], rb[inside]

    return SampleCounts(
        config=config,
        reference=reference.config,
        total_pages=len(reference.arrays["unit"]),
        content=content,
        md5=reference.arrays["md5"][rows],
        unit=local,
        group=jackknife_groups(rows, run_pages),
        n_units=len(sampled_units),
        pairs=pairs,
        reference_pairs=reference_pairs,
        seconds=time.perf_counter() - t0,
    )


def count_numbers(
    content: np.ndarray, md5: np.ndarray, unit: np.ndarray, n_units: int, a: np.ndarray, b: np.ndarray
) -> tuple[int, int, int]:
    """(byte-identical, exact, near) duplicates among pages as `analysis.report_numbers` counts them, for
    pages given by their content flag, MD5 code and unit code, and the unit pairs (a, b) that join units:
    content pages less distinct MD5s; less distinct units; distinct units less their clusters."""
    units = unit[content]
    n_content = len(units)
    present = np.zeros(n_units, dtype=bool)
    present[units] = True
    n_present = int(present.sum())
    on = present[a] & present[b]
    labels = components(n_units, a[on], b[on])
    clusters = len(np.unique(labels[present])) if n_present else 0
    return (
        n_content - len(np.unique(md5[content])),
        n_content - n_present,
        n_present - clusters,
    )


def _counts(
    sample: SampleCounts, pairs: Mapping[str, np.ndarray], keep: np.ndarray, pages: np.ndarray
) -> np.ndarray:
    """`count_numbers` of the sampled pages where `pages`, joined by the pairs where `keep`."""
    a, b = pairs["a"][keep].astype(np.int64), pairs["b"][keep].astype(np.int64)
    return np.array(
        count_numbers(sample.content & pages, sample.md5, sample.unit, sample.n_units, a, b), dtype=np.float64
    )


def wilson_halfwidth(k: float, n: float, z: float = Z_975) -> float:
    """How far the upper bound of the Wilson score interval of k successes in n trials lies above k / n. For
    k = 0 it is z^2 / (n + z^2): the room a sample that saw no change leaves for changes it holds none of."""
    return wilson(k, n, z)[1] - k / n


def scaled(
    reference_exact: int, new: float, ref: float, new_groups: np.ndarray, ref_groups: np.ndarray, cap: int
) -> Estimated:
    """`reference_exact * new / ref` with its interval, within [0, cap]: the jackknife's (`new_groups[g]`,
    `ref_groups[g]`: the two sample counts without group g), at least as wide as `wilson_halfwidth` of the
    share of the sample's counts that differ between the settings."""
    if ref <= 0 or np.any(ref_groups <= 0):
        if new == ref == 0 and reference_exact == 0:
            return Estimated(0, 0, 0)
        return Estimated(None, None, None)
    ratio = new / ref
    value = reference_exact * ratio
    jack = reference_exact * new_groups / ref_groups
    g = len(jack)
    se = float(np.sqrt((g - 1) / g * np.sum((jack - jack.mean()) ** 2)))
    half = max(T_975_9 * se, reference_exact * wilson_halfwidth(abs(new - ref), max(new, ref)))
    low, high = max(0.0, value - half), min(float(cap), value + half)
    return Estimated(round(min(value, cap)), int(np.floor(low)), int(np.ceil(high)))


def estimate_numbers(
    sample: SampleCounts, config: Config, reference: Config, reference_numbers: Mapping[str, int | float]
) -> Estimate:
    """The three numbers at `config` (the sample's setting at any threshold), scaled from the exact
    `reference_numbers` at `reference` (the reference's setting at the threshold they were counted at)."""
    if config.fingerprint_key != sample.config.fingerprint_key:
        raise ValueError("estimate_numbers() needs the sample counted at the same setting")
    keep_new = duplicate_pairs(sample.pairs, config)
    keep_ref = duplicate_pairs(sample.reference_pairs, reference)
    every = np.ones(sample.sample_pages, dtype=bool)
    new, ref = (
        _counts(sample, sample.pairs, keep_new, every),
        _counts(sample, sample.reference_pairs, keep_ref, every),
    )
    groups = range(JACKKNIFE_GROUPS)
    new_g = np.array([_counts(sample, sample.pairs, keep_new, sample.group != g) for g in groups])
    ref_g = np.array([_counts(sample, sample.reference_pairs, keep_ref, sample.group != g) for g in groups])
    cap = int(reference_numbers["content_pages"])
    numbers: dict[str, Estimated] = {}
    for i, name in enumerate(NUMBERS):
        exact = int(reference_numbers[name])
        if name in SETTING_FREE and comparable(config, reference):
            numbers[name] = Estimated(exact, exact, exact)
        else:
            numbers[name] = scaled(exact, new[i], ref[i], new_g[:, i], ref_g[:, i], cap)
    return Estimate(
        config=config,
        reference=reference,
        sample_pages=sample.sample_pages,
        total_pages=sample.total_pages,
        numbers=numbers,
        seconds=sample.seconds,
    )
