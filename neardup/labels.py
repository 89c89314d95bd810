"""Audit sampling and label-based estimates of precision and recall per threshold.

Pairs are sampled stratified by similarity bucket (reproducible seed; already-labeled pairs skipped),
so each bucket's labeled share of duplicates estimates that bucket's duplicate rate; estimates over
all candidate pairs weight each bucket by its size. Intervals are Wilson score intervals per bucket,
combined conservatively (the weighted sum of the per-bucket bounds).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from .config import Config
from .pairkey import LABELS as LABELS
from .pairkey import PAIR_KEY

# The kinds of duplicate an analyst names; the first eight are on the keys 1-8 in the Audit page.
CATEGORIES = (
    "URL variant",
    "noise re-fetch",
    "stale re-crawl",
    "print version",
    "syndicated",
    "regional mirror",
    "templated siblings",
    "degenerate",
    "other",
)
MIN_LABELS_PER_BUCKET = 5


BUCKET_WIDTH = 0.05  # a MinHash bucket: [edge, edge + 0.05), the last one [0.95, 1.0] with 1.0 in it


def bucket_edges(config: Config) -> np.ndarray:
    """Bucket lower edges: one per bit for simhash (0..max), 0.05 wide for minhash (floor..0.95)."""
    if config.method == "simhash":
        return np.arange(0, config.simhash_max_bits + 1, dtype=np.float64)
    lo = math.floor(config.minhash_floor * 20) / 20
    return np.round(np.arange(lo, 1.0 - BUCKET_WIDTH / 2, BUCKET_WIDTH), 2)


def bucket_of(scores: np.ndarray, config: Config) -> np.ndarray:
    """Bucket label per pair score: the bit count for simhash, the 0.05 bucket's lower edge for minhash (a
    score of 1.0 is in the last bucket, 0.95: every bucket is as wide as the others, as Explore draws them)."""
    s = np.asarray(scores, dtype=np.float64)
    if config.method == "simhash":
        return s
    return np.round(np.minimum(np.floor(s * 20 + 1e-9) / 20, 1.0 - BUCKET_WIDTH), 2)


def bucket_range(bucket: float, config: Config) -> str:
    """The scores a bucket holds, as shown: "3 bits", "[0.80, 0.85)", "[0.95, 1.00]"."""
    if config.method == "simhash":
        return f"{bucket:g} bits"
    high = bucket + BUCKET_WIDTH
    return f"[{bucket:.2f}, {high:.2f}" + ("]" if high >= 1.0 - 1e-9 else ")")


def is_duplicate_at(bucket: np.ndarray | float, config: Config, threshold: float | None = None) -> np.ndarray:
    """Whether a bucket lies on the duplicate side of `threshold` (default: `config.threshold`)."""
    b = np.asarray(bucket, dtype=np.float64)
    t = config.threshold if threshold is None else threshold
    if config.method == "simhash":
        return b <= t
    return b >= t - 1e-9


def wilson(successes: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion (0, 1 when n == 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def sample_pairs(
    pairs: pd.DataFrame,
    *,
    per_bucket: int,
    seed: int,
    exclude: set[tuple[str, str]],
    focus: float | None = None,
    config: Config | None = None,
) -> pd.DataFrame:
    """Up to `per_bucket` pairs from each bucket, reproducibly, skipping labeled pairs.

    `pairs` needs columns `bucket`, `url_a`, `url_b` (and `md5_a`, `md5_b` when present: the key of
    `exclude` is then the 4-tuple `neardup.pairkey.PAIR_KEY`). With `focus` (a
    threshold), buckets are ordered by their distance from it, so the audit starts where the decision is.
    """
    if pairs.empty:
        return pairs
    key_cols = [c for c in ("url_a", "md5_a", "url_b", "md5_b") if c in pairs.columns]
    todo = pairs[~pd.MultiIndex.from_frame(pairs[key_cols]).isin(list(exclude))] if exclude else pairs
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(todo))
    # The first `per_bucket` of each bucket in the shuffled order, ranked on a column (no frame shuffle).
    buckets = pd.Series(todo["bucket"].to_numpy()[order])
    rank = buckets.groupby(buckets, sort=False).cumcount()
    picked = todo.iloc[order[np.flatnonzero(rank < per_bucket)]]
    if focus is not None:
        dist = (picked["bucket"] - focus).abs()
        picked = picked.assign(_d=dist).sort_values(["_d", "bucket"], kind="stable").drop(columns="_d")
    return picked.reset_index(drop=True)


ADJUDICATOR = "adjudicator"  # the labeler name whose label settles a pair the labelers disagree on


def consensus_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """One row per labeled pair (the latest label's other columns): the adjudicator's label if there is one,
    else the majority of its labelers' labels (a tie: 'unsure'). `labelers` counts them; `contested` marks
    pairs whose labelers gave both 'duplicate' and 'not' and that no adjudicator settled."""
    if labels.empty:
        return labels.assign(labelers=pd.Series(dtype="int64"), contested=pd.Series(dtype="bool"))
    labels = labels.assign(
        **{c: labels[c].fillna("") if c in labels else "" for c in ("md5_a", "md5_b")},
        labeler=labels.get("labeler"),
    )
    by_time = labels.sort_values("labeled_at", kind="stable") if "labeled_at" in labels else labels
    latest = by_time.drop_duplicates(PAIR_KEY, keep="last")
    if not labels.duplicated(PAIR_KEY).any():
        return latest.assign(labelers=1, contested=False).reset_index(drop=True)
    rows = []
    for _, group in labels.groupby(PAIR_KEY, sort=False):
        votes = group["label"].value_counts()
        decided = set(group["label"]) & {"duplicate", "not"}
        judge = group[group["labeler"] == ADJUDICATOR]
        if len(judge):
            label, contested = judge["label"].iloc[-1], False
        else:
            top = votes[votes == votes.max()].index
            label, contested = (top[0] if len(top) == 1 else "unsure"), len(decided) > 1
        rows.append((*group[PAIR_KEY].iloc[0], label, group["labeler"].nunique(dropna=False), contested))
    resolved = pd.DataFrame(rows, columns=[*PAIR_KEY, "label", "labelers", "contested"])
    return latest.drop(columns="label").merge(resolved, on=PAIR_KEY, how="inner").reset_index(drop=True)


def audit_queue(
    pairs: pd.DataFrame,
    labeled: pd.DataFrame,
    *,
    per_bucket: int,
    seed: int,
    skipped: set[tuple[str, ...]],
    focus: float | None = None,
    positions: Mapping[Any, int] | None = None,
) -> pd.DataFrame:
    """The pairs still to label so that every bucket has `per_bucket` decided labels (duplicate / not).

    Each bucket's pairs are taken in one reproducible shuffled order (by `seed`); labeled and skipped pairs
    are passed over, and a bucket's decided labels count against its quota, so the queue shrinks by one with
    every decided label, a skip brings the bucket's next pair, and the queue is empty only when every bucket
    has its quota or no unlabeled, unskipped pair left. `labeled` is `neardup.audit.labeled_pairs(pairs, ...)`
    (with `bucket` and `label`); keys are the 4-tuple `neardup.pairkey.PAIR_KEY`. `positions` (a key's row in
    `pairs`: `neardup.audit.pair_index(pairs).exact`, kept by the caller) spares a pass over every pair's key.
    """
    if pairs.empty:
        return pairs
    key_cols = ["url_a", "md5_a", "url_b", "md5_b"]
    done = set(zip(*(labeled[c].to_numpy() for c in key_cols), strict=True)) if len(labeled) else set()
    exclude = done | skipped
    # One order over all the pairs, passed over where labeled or skipped: a label takes its pair out and
    # leaves the rest of the queue in place, so the pair after it comes next (the page prefetches it).
    order = np.random.default_rng(seed).permutation(len(pairs))
    if exclude:
        if positions is not None:
            todo = np.ones(len(pairs), dtype=bool)
            todo[[positions[k] for k in exclude if k in positions]] = False
        else:
            keys = zip(*(pairs[c].to_numpy() for c in key_cols), strict=True)
            todo = np.fromiter((k not in exclude for k in keys), dtype=bool, count=len(pairs))
        order = order[todo[order]]
    have: dict[float, int] = {}
    if len(labeled):
        for bucket, label in zip(labeled["bucket"].to_numpy(), labeled["label"].to_numpy(), strict=True):
            if label in ("duplicate", "not"):
                have[bucket] = have.get(bucket, 0) + 1
    # First come in the shuffled order, first picked: a pair is taken while its bucket is short of its quota.
    buckets, which = np.unique(pairs["bucket"].to_numpy()[order], return_inverse=True)
    need = np.array([per_bucket - have.get(b, 0) for b in buckets.tolist()], dtype=np.int64)
    rank = pd.Series(which).groupby(which).cumcount().to_numpy()
    picked = pairs.iloc[order[rank < need[which]]] if len(order) else pairs.iloc[:0]
    if focus is not None:
        dist = (picked["bucket"] - focus).abs()
        picked = picked.assign(_d=dist).sort_values(["_d", "bucket"], kind="stable").drop(columns="_d")
    return picked.reset_index(drop=True)


@dataclass(frozen=True, slots=True)
class BucketTally:
    bucket: float
    pairs: int
    labeled: int
    duplicates: int
    rate: float
    rate_low: float
    rate_high: float
    unlabeled: int  # pairs without any label (unsure included): a thin bucket with none left cannot grow
    contested: int  # labeled pairs whose labelers disagree and no adjudicator settled


def bucket_tallies(pair_buckets: pd.Series, labeled: pd.DataFrame) -> pd.DataFrame:
    """Per bucket: candidate pairs, labeled pairs (duplicate / not; unsure excluded), duplicate rate and its
    bounds (`_bucket_bounds`: Wilson 95%; [0, 1] without labels; the rate itself where every pair is labeled)."""
    sizes = pair_buckets.value_counts().sort_index()
    n_any: dict[float, int] = {}
    n_decided: dict[float, int] = {}
    n_dups: dict[float, int] = {}
    n_contested: dict[float, int] = {}
    if len(labeled):
        contested = (
            labeled["contested"].to_numpy(dtype=bool)
            if "contested" in labeled
            else np.zeros(len(labeled), bool)
        )
        for bucket, label, disputed in zip(
            labeled["bucket"].to_numpy(), labeled["label"].to_numpy(), contested, strict=True
        ):
            n_any[bucket] = n_any.get(bucket, 0) + 1
            n_contested[bucket] = n_contested.get(bucket, 0) + int(disputed)
            if label in ("duplicate", "not"):
                n_decided[bucket] = n_decided.get(bucket, 0) + 1
                n_dups[bucket] = n_dups.get(bucket, 0) + int(label == "duplicate")
    pairs = sizes.to_numpy(np.int64)
    decided = np.array([n_decided.get(b, 0) for b in sizes.index], np.int64)
    dups = np.array([n_dups.get(b, 0) for b in sizes.index], np.int64)
    lo, hi = _bucket_bounds(pairs.astype(np.float64), decided.astype(np.float64), dups.astype(np.float64))
    columns = {
        "bucket": sizes.index.to_numpy(np.float64),
        "pairs": pairs,
        "labeled": decided,
        "duplicates": dups,
        "rate": np.where(decided > 0, dups / np.maximum(decided, 1), np.nan),
        "rate_low": lo,
        "rate_high": hi,
        "unlabeled": pairs - np.array([n_any.get(b, 0) for b in sizes.index], np.int64),
        "contested": np.array([n_contested.get(b, 0) for b in sizes.index], np.int64),
    }
    return pd.DataFrame({f.name: columns[f.name] for f in fields(BucketTally)})


def estimates(
    tallies: pd.DataFrame, config: Config, thresholds: Sequence[float] | np.ndarray | None = None
) -> pd.DataFrame:
    """Estimated precision and recall over all candidate pairs, per threshold in `thresholds` (default: the
    edges of the buckets that hold pairs).

    precision(t) = sum_{b dup at t} N_b p_b / sum_{b dup at t} N_b
    recall(t)    = sum_{b dup at t} N_b p_b / sum_b N_b p_b   (relative to the duplicates among candidates)
    The point estimates leave buckets without labels out (they are counted in `unlabeled_pairs`; a threshold
    that flags only such buckets has no point estimate, NaN); the intervals cover them instead; the
    intervals are the stop rule's (`decision_at`): Wilson 95% per bucket combined as weighted sums, a bucket
    without labels anything from 0 to 1 and a fully labeled bucket exactly its rate, so one threshold has one
    interval wherever it is shown.
    """
    n_pairs = tallies["pairs"].to_numpy(np.float64)
    n = tallies["labeled"].to_numpy(np.float64)
    dups = tallies["duplicates"].to_numpy(np.float64)
    buckets = tallies["bucket"].to_numpy(np.float64)
    known = n > 0
    found = np.where(known, n_pairs * dups / np.maximum(n, 1), 0.0)
    lo, hi = tallies["rate_low"].to_numpy(np.float64), tallies["rate_high"].to_numpy(np.float64)
    total_dup = found.sum()
    rows = []
    for threshold in buckets if thresholds is None else thresholds:
        inside = is_duplicate_at(buckets, config, threshold)
        n_known = n_pairs[inside & known].sum()
        dup = found[inside].sum()
        p_lo, p_hi, r_lo, r_hi = _decision(n_pairs, inside, lo, hi)
        rows.append(
            {
                "threshold": threshold,
                "pairs_flagged": int(n_pairs[inside].sum()),
                "labels": int(n[inside].sum()),
                "unlabeled_pairs": int(n_pairs[inside & ~known].sum()),
                # the points come from labeled buckets only; a threshold flagging only unlabeled buckets has
                # no point (not 0), and its interval, like every other, lets each unlabeled bucket be 0 to 1
                "precision": dup / n_known if n_known else float("nan"),
                "precision_low": p_lo,
                "precision_high": p_hi,
                "recall": dup / total_dup if total_dup and n_known else float("nan"),
                "recall_low": r_lo,
                "recall_high": r_hi,
            }
        )
    return pd.DataFrame(rows)


def pairs_without_labels(
    tallies: pd.DataFrame, config: Config, threshold: float | None = None
) -> tuple[int, int]:
    """(candidate pairs in buckets without a decided label, those of them flagged at `threshold`, default the
    threshold in use): the pairs the point estimates leave out and the intervals count as anything from 0 to 1."""
    t = config.threshold if threshold is None else threshold
    unknown = tallies["labeled"].to_numpy() == 0
    flagged = is_duplicate_at(tallies["bucket"].to_numpy(np.float64), config, t)
    n_pairs = tallies["pairs"].to_numpy(np.int64)
    return int(n_pairs[unknown].sum()), int(n_pairs[unknown & flagged].sum())


def thin_buckets(tallies: pd.DataFrame) -> pd.DataFrame:
    """Buckets with fewer than MIN_LABELS_PER_BUCKET decided labels that more labels could still fill."""
    return tallies[(tallies["labeled"] < MIN_LABELS_PER_BUCKET) & (tallies["unlabeled"] > 0)]


def suggest_threshold(
    est: pd.DataFrame, tallies: pd.DataFrame, config: Config, *, min_precision: float = 0.95
) -> tuple[float | None, str]:
    """The threshold that finds the most duplicates (highest estimated recall; then highest precision, then
    the fewest flagged pairs in buckets without labels) among those whose estimated precision is at least
    `min_precision`, and the one line that says why.

    Thresholds that flag the same buckets are the same decision on these pairs (a bucket without pairs
    between them changes nothing): of those, the one nearest the threshold in use is suggested, so the
    suggestion is the threshold in use whenever that is as good. The rule uses the point estimates (a Wilson
    lower bound of 95% needs about 70 duplicate labels per bucket, more than an audit of a few dozen pairs
    gives); the line states the interval and the label count, so the evidence behind it stays visible.
    """
    if est.empty or est["labels"].sum() == 0:
        return None, "no labels yet: label pairs in the Audit page first"
    ok = est[(est["precision"] >= min_precision) & est["recall"].notna()]
    if ok.empty:
        return (
            None,
            f"no threshold reaches an estimated precision of {min_precision:.0%} with the labels so far",
        )
    best = ok.sort_values(
        ["recall", "precision", "unlabeled_pairs"], ascending=[False, False, True], kind="stable"
    ).iloc[0]
    buckets = tallies["bucket"].to_numpy(np.float64)
    flagged = is_duplicate_at(buckets, config, float(best["threshold"]))
    same = [
        float(t)
        for t in np.unique(np.append(bucket_edges(config), config.threshold))
        if (is_duplicate_at(buckets, config, float(t)) == flagged).all()
    ]
    suggested = min(same, key=lambda t: (abs(t - config.threshold), t))
    lo, hi = min(same), max(same)
    reason = (
        f"It finds the most duplicates (recall {best['recall']:.2f} [{best['recall_low']:.2f}-"
        f"{best['recall_high']:.2f}]) of the thresholds whose estimated precision is {min_precision:.0%} or more "
        f"(precision {best['precision']:.2f} [95% interval {best['precision_low']:.2f}-"
        f"{best['precision_high']:.2f}]; from {int(tallies['labeled'].sum())} decided labels, "
        f"{int(best['labels'])} of them on pairs it flags)"
        + (f"; any threshold from {lo:g} to {hi:g} flags the same pairs." if hi > lo else ".")
    )
    thin = thin_buckets(tallies)
    thin = thin[thin["labeled"] > 0]
    if len(thin):
        reason += f" {len(thin)} bucket(s) have fewer than {MIN_LABELS_PER_BUCKET} labels."
    return suggested, reason


# --- agreement between two labelers -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Agreement:
    pairs: int  # pairs both labelers labeled
    raw: float  # share of those pairs given the same label
    kappa: float  # Cohen's kappa: chance agreement from each labeler's own label shares
    ac1: float  # Gwet's AC1: chance agreement from the pooled shares, stable when one label dominates


def agreement(first: Sequence[str], second: Sequence[str], categories: Sequence[str] = ()) -> Agreement:
    """Raw agreement, Cohen's kappa and Gwet's AC1 of two labelers' labels of the same pairs (in order).

    kappa = (p_o - p_e) / (1 - p_e), p_e = sum_k pA_k pB_k (Cohen 1960);
    AC1 = (p_o - p_e) / (1 - p_e), p_e = sum_k pi_k (1 - pi_k) / (q - 1), pi_k = (pA_k + pB_k) / 2 (Gwet 2008),
    with q the number of `categories` (default: the labels either labeler used, at least 2). A statistic whose
    chance agreement is 1 (both labelers gave one same label throughout) is undefined: NaN.
    """
    if len(first) != len(second):
        raise ValueError("agreement needs two labels per pair")
    n = len(first)
    if n == 0:
        return Agreement(0, float("nan"), float("nan"), float("nan"))
    cats = list(dict.fromkeys([*categories, *first, *second]))
    q = max(len(categories) or len(cats), 2)
    a = np.array([sum(x == c for x in first) for c in cats], dtype=np.float64) / n
    b = np.array([sum(x == c for x in second) for c in cats], dtype=np.float64) / n
    p_o = sum(x == y for x, y in zip(first, second, strict=True)) / n
    pe_kappa = float(a @ b)
    pi = (a + b) / 2
    pe_ac1 = float((pi * (1 - pi)).sum() / (q - 1))

    def chance_corrected(p_e: float) -> float:
        return (p_o - p_e) / (1 - p_e) if p_e < 1 - 1e-12 else float("nan")

    return Agreement(n, p_o, chance_corrected(pe_kappa), chance_corrected(pe_ac1))


def agreement_table(ratings: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """Agreement of labelers `first` and `second` per bucket and over all pairs both labeled ("all" row first).

    `ratings` has one row per (pair, labeler): the pair key columns, `bucket`, `labeler`, `label`
    (`neardup.audit.labels_by_labeler`). Statistics over the three labels (q = 3).
    """
    key = [*PAIR_KEY, "bucket"]
    a = ratings[ratings["labeler"] == first][[*key, "label"]]
    b = ratings[ratings["labeler"] == second][[*key, "label"]]
    both = a.merge(b, on=key, suffixes=("_1", "_2"))
    groups = [("all", both)] + [(f"{bucket:g}", g) for bucket, g in both.groupby("bucket", sort=True)]
    rows = []
    for name, g in groups:
        s = agreement(list(g["label_1"]), list(g["label_2"]), LABELS)
        rows.append({"bucket": name, "pairs": s.pairs, "raw": s.raw, "kappa": s.kappa, "ac1": s.ac1})
    return pd.DataFrame(rows, columns=["bucket", "pairs", "raw", "kappa", "ac1"])


def labeler_overlap(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per two labelers (`first` < `second`), the pairs both labeled (`pairs`), most first; pairs with none
    shared are left out. `ratings` as for `agreement_table`."""
    items = {
        who: set(g[PAIR_KEY].itertuples(index=False, name=None))
        for who, g in ratings.groupby("labeler", sort=True)
    }
    names = sorted(items)
    rows = [
        (x, y, len(items[x] & items[y]))
        for i, x in enumerate(names)
        for y in names[i + 1 :]
        if items[x] & items[y]
    ]
    out = pd.DataFrame(rows, columns=["first", "second", "pairs"])
    return out.sort_values("pairs", ascending=False, kind="stable").reset_index(drop=True)


# --- the decision at one threshold: its interval, the bucket a label narrows most, when to stop --------

STOP_HALF_WIDTH = 0.05  # stop when precision and recall at the threshold are both known to +/- this


def _bucket_bounds(n_pairs: np.ndarray, n: np.ndarray, dups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilson 95% bounds per bucket; [0, 1] without labels; a bucket whose every pair is labeled is a census
    (its rate is known, no interval)."""
    z = 1.96
    m = np.maximum(n, 1e-12)
    p = dups / m
    denom = 1 + z * z / m
    centre = (p + z * z / (2 * m)) / denom
    half = z * np.sqrt(np.maximum(p * (1 - p) / m + z * z / (4 * m * m), 0)) / denom
    census = (n > 0) & (n >= n_pairs)
    lo = np.where(census, p, np.where(n > 0, np.maximum(0.0, centre - half), 0.0))
    hi = np.where(census, p, np.where(n > 0, np.minimum(1.0, centre + half), 1.0))
    return lo, hi


def _decision(
    n_pairs: np.ndarray, inside: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[float, float, float, float]:
    """(precision low, high, recall low, high) from per-bucket bounds, combined as `estimates` combines them."""
    n_in = n_pairs[inside].sum()
    in_lo, in_hi = (n_pairs * lo)[inside].sum(), (n_pairs * hi)[inside].sum()
    out_lo, out_hi = (n_pairs * lo)[~inside].sum(), (n_pairs * hi)[~inside].sum()
    p_lo, p_hi = (in_lo / n_in, in_hi / n_in) if n_in else (0.0, 1.0)
    r_lo = in_lo / (in_lo + out_hi) if in_lo + out_hi else 0.0
    r_hi = in_hi / (in_hi + out_lo) if in_hi + out_lo else 1.0
    return p_lo, p_hi, r_lo, r_hi


@dataclass(frozen=True, slots=True)
class Decision:
    threshold: float
    precision: float
    precision_low: float
    precision_high: float
    recall: float
    recall_low: float
    recall_high: float
    done: bool  # both intervals within +/- STOP_HALF_WIDTH
    gain: (
        pd.Series
    )  # per bucket with pairs left: how much one more label narrows the two intervals (expected)
    more: (
        pd.Series
    )  # per bucket: about how many more labels reach the stop rule (if the rates stay as labeled)
    reachable: bool  # whether labeling every pair left would reach it (else `more` is every pair left)

    def summary(self) -> str:
        """The decision in one sentence (Tune, Audit): "precision at T is P [lo-hi], recall R [lo-hi]"."""
        return (
            f"precision at {self.threshold:g} is {self.precision:.2f} [{self.precision_low:.2f}-"
            f"{self.precision_high:.2f}], recall {self.recall:.2f} [{self.recall_low:.2f}-{self.recall_high:.2f}]"
        )


def decision_at(
    tallies: pd.DataFrame,
    config: Config,
    threshold: float | None = None,
    *,
    half_width: float = STOP_HALF_WIDTH,
    max_more: int = 2000,
) -> Decision:
    """Precision and recall at one threshold with the intervals of `estimates` (Wilson 95% per bucket, combined
    as the weighted sum of the bounds) except that a bucket without labels counts as anything from 0 to 1 and a
    fully labeled bucket as exactly its rate, so the decision is open while any flagged or unflagged bucket is
    unknown. `gain`: per bucket with unlabeled pairs, the expected drop per label of how far the two interval
    widths exceed 2 * `half_width` (summed), from one more label there or from labeling the whole bucket,
    whichever is larger (outcomes drawn from the bucket's labeled rate, 1/2 without labels). `more`: the labels
    per bucket that the greedy rule (always the bucket of largest gain) takes until both half-widths are at
    most `half_width`, simulated with the bucket's labeled rate as the outcome of each label (at most
    `max_more`; an estimate that may overshoot by a fifth, as the simulation adds labels in batches).
    """
    t = config.threshold if threshold is None else threshold
    n_pairs = tallies["pairs"].to_numpy(np.float64)
    n = tallies["labeled"].to_numpy(np.float64)
    dups = tallies["duplicates"].to_numpy(np.float64)
    left = tallies["unlabeled"].to_numpy(np.float64)
    buckets = tallies["bucket"].to_numpy(np.float64)
    inside = is_duplicate_at(buckets, config, t)
    known = n > 0
    rate = np.where(known, dups / np.maximum(n, 1), np.nan)
    n_in = n_pairs[inside & known].sum()
    precision = float((n_pairs * rate)[inside & known].sum() / n_in) if n_in else float("nan")
    total = (n_pairs * rate)[known].sum()
    recall = float((n_pairs * rate)[inside & known].sum() / total) if total else float("nan")

    target = 2 * half_width

    def width(n_: np.ndarray, d_: np.ndarray) -> tuple[float, float, tuple[float, float, float, float]]:
        """(how far the two widths exceed the target, summed; the larger width; the bounds)."""
        lo, hi = _bucket_bounds(n_pairs, n_, d_)
        bounds = _decision(n_pairs, inside, lo, hi)
        wp, wr = bounds[1] - bounds[0], bounds[3] - bounds[2]
        return max(0.0, wp - target) + max(0.0, wr - target), max(wp, wr), bounds

    def excess_if(lo: np.ndarray, hi: np.ndarray, new_lo: np.ndarray, new_hi: np.ndarray) -> np.ndarray:
        """Per bucket b: `width(...)[0]` with bucket b's bounds replaced by (new_lo[b], new_hi[b]), all b at once
        (each bound enters the combined bounds through four sums)."""
        w_in = np.where(inside, n_pairs, 0.0)
        w_out = n_pairs - w_in
        in_lo = (w_in * lo).sum() + w_in * (new_lo - lo)
        in_hi = (w_in * hi).sum() + w_in * (new_hi - hi)
        out_lo = (w_out * lo).sum() + w_out * (new_lo - lo)
        out_hi = (w_out * hi).sum() + w_out * (new_hi - hi)
        n_in = w_in.sum()
        wp = (in_hi - in_lo) / n_in if n_in else np.ones(len(lo))
        with np.errstate(divide="ignore", invalid="ignore"):
            r_lo = np.where(in_lo + out_hi > 0, in_lo / (in_lo + out_hi), 0.0)
            r_hi = np.where(in_hi + out_lo > 0, in_hi / (in_hi + out_lo), 1.0)
        return np.maximum(0.0, wp - target) + np.maximum(0.0, r_hi - r_lo - target)

    def gains(n_: np.ndarray, d_: np.ndarray, left_: np.ndarray) -> np.ndarray:
        """Per bucket: the expected narrowing per label, of one more label or of labeling the whole bucket
        (a census; a one-label look-ahead alone never sees that a small bucket's last labels close it)."""
        now = width(n_, d_)[0]
        lo, hi = _bucket_bounds(n_pairs, n_, d_)
        p = np.where(n_ > 0, d_ / np.maximum(n_, 1), 0.5)
        dup_lo, dup_hi = _bucket_bounds(n_pairs, n_ + 1, d_ + 1)
        not_lo, not_hi = _bucket_bounds(n_pairs, n_ + 1, d_)
        all_lo, all_hi = _bucket_bounds(n_pairs, n_ + left_, d_ + p * left_)
        one = now - (p * excess_if(lo, hi, dup_lo, dup_hi) + (1 - p) * excess_if(lo, hi, not_lo, not_hi))
        with np.errstate(divide="ignore", invalid="ignore"):
            census = (now - excess_if(lo, hi, all_lo, all_hi)) / left_
        return np.where(left_ > 0, np.maximum(one, census), -np.inf)

    _, w_now, (p_lo, p_hi, r_lo, r_hi) = width(n, dups)
    g = gains(n, dups, left)
    gain = pd.Series(g, index=buckets)[left > 0].sort_values(ascending=False, kind="stable")

    # The stop rule, simulated: the greedy bucket gets labels whose outcomes are its expected share, a fifth of
    # its labels so far at a time (at least one), so a count in the thousands takes tens of steps, not thousands.
    sim_n, sim_d, sim_left = n.copy(), dups.copy(), left.copy()
    more = np.zeros(len(n), dtype=np.int64)
    w = w_now
    while w > target + 1e-12 and sim_left.sum() > 0 and more.sum() < max_more:
        sg = gains(sim_n, sim_d, sim_left)
        i = int(np.argmax(sg))
        p_i = sim_d[i] / sim_n[i] if sim_n[i] > 0 else 0.5
        k = int(min(sim_left[i], max(1, sim_n[i] // 5)))
        sim_n[i] += k
        sim_d[i] += p_i * k
        sim_left[i] -= k
        more[i] += k
        w = width(sim_n, sim_d)[1]
    more_s = pd.Series(more, index=buckets)
    return Decision(
        threshold=float(t),
        precision=precision,
        precision_low=p_lo,
        precision_high=p_hi,
        recall=recall,
        recall_low=r_lo,
        recall_high=r_hi,
        done=w_now <= 2 * half_width + 1e-12,
        gain=gain,
        more=more_s[more_s > 0],
        reachable=w <= 2 * half_width + 1e-12,
    )


def active_queue(
    pairs: pd.DataFrame,
    labeled: pd.DataFrame,
    tallies: pd.DataFrame,
    config: Config,
    *,
    seed: int,
    skipped: set[tuple[str, ...]],
) -> pd.DataFrame:
    """The pairs left to label, those of the bucket where one more label narrows the decision at the threshold
    most first (then the next bucket's), each bucket in one reproducible shuffled order; empty once the stop
    rule holds (`decision_at(...).done`)."""
    decision = decision_at(tallies, config, max_more=0)
    if pairs.empty or decision.done:
        return pairs.iloc[:0]
    todo = audit_queue(pairs, labeled, per_bucket=len(pairs), seed=seed, skipped=skipped)
    rank = {b: i for i, b in enumerate(decision.gain[decision.gain > 0].index)}
    order = todo["bucket"].map(rank)
    return (
        todo.assign(_r=order)
        .dropna(subset=["_r"])
        .sort_values("_r", kind="stable")
        .drop(columns="_r")
        .reset_index(drop=True)
    )
