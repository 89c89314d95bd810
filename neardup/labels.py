"""Audit sampling and label-based estimates of precision and recall per threshold.

Pairs are sampled stratified by similarity bucket (reproducible seed; already-labeled pairs skipped),
so each bucket's labeled share of duplicates estimates that bucket's duplicate rate; estimates over
all candidate pairs weight each bucket by its size. Intervals are Wilson score intervals per bucket,
combined conservatively (the weighted sum of the per-bucket bounds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .config import Config

LABELS = ("duplicate", "not", "unsure")
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


def bucket_edges(config: Config) -> np.ndarray:
    """Bucket lower edges: one per bit for simhash (0..max), 0.05 wide for minhash (floor..1)."""
    if config.method == "simhash":
        return np.arange(0, config.simhash_max_bits + 1, dtype=np.float64)
    lo = math.floor(config.minhash_floor * 20) / 20
    return np.round(np.arange(lo, 1.0001, 0.05), 2)


def bucket_of(scores: np.ndarray, config: Config) -> np.ndarray:
    """Bucket label per pair score: the bit count for simhash, the 0.05 bucket's lower edge for minhash."""
    s = np.asarray(scores, dtype=np.float64)
    if config.method == "simhash":
        return s
    return np.round(np.floor(s * 20 + 1e-9) / 20, 2)


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
    `exclude` is then the 4-tuple `neardup.audit.PAIR_KEY`). With `focus` (a
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
_LABEL_KEY = ["url_a", "md5_a", "url_b", "md5_b"]


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
    latest = by_time.drop_duplicates(_LABEL_KEY, keep="last")
    if not labels.duplicated(_LABEL_KEY).any():
        return latest.assign(labelers=1, contested=False).reset_index(drop=True)
    rows = []
    for _, group in labels.groupby(_LABEL_KEY, sort=False):
        votes = group["label"].value_counts()
        decided = set(group["label"]) & {"duplicate", "not"}
        judge = group[group["labeler"] == ADJUDICATOR]
        if len(judge):
            label, contested = judge["label"].iloc[-1], False
        else:
            top = votes[votes == votes.max()].index
            label, contested = (top[0] if len(top) == 1 else "unsure"), len(decided) > 1
        rows.append((*group[_LABEL_KEY].iloc[0], label, group["labeler"].nunique(dropna=False), contested))
    resolved = pd.DataFrame(rows, columns=[*_LABEL_KEY, "label", "labelers", "contested"])
    return latest.drop(columns="label").merge(resolved, on=_LABEL_KEY, how="inner").reset_index(drop=True)


def audit_queue(
    pairs: pd.DataFrame,
    labeled: pd.DataFrame,
    *,
    per_bucket: int,
    seed: int,
    skipped: set[tuple[str, ...]],
    focus: float | None = None,
) -> pd.DataFrame:
    """The pairs still to label so that every bucket has `per_bucket` decided labels (duplicate / not).

    Each bucket's pairs are taken in one reproducible shuffled order (by `seed`); labeled and skipped pairs
    are passed over, and a bucket's decided labels count against its quota, so the queue shrinks by one with
    every decided label, a skip brings the bucket's next pair, and the queue is empty only when every bucket
    has its quota or no unlabeled, unskipped pair left. `labeled` is `neardup.audit.labeled_pairs(pairs, ...)`
    (with `bucket` and `label`); keys are the 4-tuple `neardup.audit.PAIR_KEY`.
    """
    if pairs.empty:
        return pairs
    key_cols = ["url_a", "md5_a", "url_b", "md5_b"]
    done = set(zip(*(labeled[c].to_numpy() for c in key_cols), strict=True)) if len(labeled) else set()
    exclude = done | skipped
    if exclude:
        keys = zip(*(pairs[c].to_numpy() for c in key_cols), strict=True)
        todo = pairs[np.fromiter((k not in exclude for k in keys), dtype=bool, count=len(pairs))]
    else:
        todo = pairs
    have: dict[float, int] = {}
    if len(labeled):
        for bucket, label in zip(labeled["bucket"].to_numpy(), labeled["label"].to_numpy(), strict=True):
            if label in ("duplicate", "not"):
                have[bucket] = have.get(bucket, 0) + 1
    order = np.random.default_rng(seed).permutation(len(todo))
    taken: dict[float, int] = {}
    chosen = []
    for pos, bucket in zip(
        order, todo["bucket"].to_numpy()[order], strict=True
    ):  # shuffled: first come, first picked
        n = taken.get(bucket, 0)
        if n < per_bucket - have.get(bucket, 0):
            taken[bucket] = n + 1
            chosen.append(pos)
    picked = todo.iloc[chosen]
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
    """Per bucket: candidate pairs, labeled pairs (duplicate / not; unsure excluded), duplicate rate + Wilson."""
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
    rows = []
    for bucket, n_pairs in sizes.items():
        n_lab, n_dup = n_decided.get(bucket, 0), n_dups.get(bucket, 0)
        lo, hi = wilson(n_dup, n_lab)
        rows.append(
            BucketTally(
                float(bucket),
                int(n_pairs),
                n_lab,
                n_dup,
                n_dup / n_lab if n_lab else float("nan"),
                lo,
                hi,
                int(n_pairs) - n_any.get(bucket, 0),
                n_contested.get(bucket, 0),
            )
        )
    return pd.DataFrame(rows)


def estimates(tallies: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Estimated precision and recall over all candidate pairs, per candidate threshold (bucket edge).

    precision(t) = sum_{b dup at t} N_b p_b / sum_{b dup at t} N_b
    recall(t)    = sum_{b dup at t} N_b p_b / sum_b N_b p_b   (relative to the duplicates among candidates)
    Buckets without labels contribute nothing and are counted in `unlabeled_pairs`.
    """
    t = tallies[tallies["labeled"] > 0]
    rows = []
    total_dup = (t["pairs"] * t["rate"]).sum()
    total_dup_lo = (t["pairs"] * t["rate_low"]).sum()
    total_dup_hi = (t["pairs"] * t["rate_high"]).sum()
    for threshold in tallies["bucket"]:
        inside = t[is_duplicate_at(t["bucket"].to_numpy(), config, threshold)]
        all_inside = tallies[is_duplicate_at(tallies["bucket"].to_numpy(), config, threshold)]
        n = inside["pairs"].sum()
        dup = (inside["pairs"] * inside["rate"]).sum()
        dup_lo = (inside["pairs"] * inside["rate_low"]).sum()
        dup_hi = (inside["pairs"] * inside["rate_high"]).sum()
        outside_lo = total_dup_lo - dup_lo
        outside_hi = total_dup_hi - dup_hi
        rows.append(
            {
                "threshold": threshold,
                "pairs_flagged": int(all_inside["pairs"].sum()),
                "labels": int(inside["labeled"].sum()),
                "unlabeled_pairs": int(all_inside.loc[all_inside["labeled"] == 0, "pairs"].sum()),
                "precision": dup / n if n else float("nan"),
                "precision_low": dup_lo / n if n else float("nan"),
                "precision_high": dup_hi / n if n else float("nan"),
                "recall": dup / total_dup if total_dup else float("nan"),
                "recall_low": dup_lo / (dup_lo + outside_hi) if dup_lo + outside_hi else float("nan"),
                "recall_high": dup_hi / (dup_hi + outside_lo) if dup_hi + outside_lo else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def thin_buckets(tallies: pd.DataFrame) -> pd.DataFrame:
    """Buckets with fewer than MIN_LABELS_PER_BUCKET decided labels that more labels could still fill."""
    return tallies[(tallies["labeled"] < MIN_LABELS_PER_BUCKET) & (tallies["unlabeled"] > 0)]


def suggest_threshold(
    est: pd.DataFrame, tallies: pd.DataFrame, *, min_precision: float = 0.95
) -> tuple[float | None, str]:
    """The threshold with the best estimated F1 among those whose estimated precision is >= min_precision.

    The rule uses the point estimates (a Wilson lower bound of 95% needs about 70 duplicate labels in
    the flagged buckets, more than an audit of a few dozen pairs gives); the reason states the
    interval and the label count, so the evidence behind the suggestion stays visible.
    """
    if est.empty or est["labels"].sum() == 0:
        return None, "no labels yet: label pairs in the Audit page first"
    ok = est[(est["precision"] >= min_precision) & est["recall"].notna()]
    if ok.empty:
        return (
            None,
            f"no threshold reaches an estimated precision of {min_precision:.0%} with the labels so far",
        )
    f1 = 2 * ok["precision"] * ok["recall"] / (ok["precision"] + ok["recall"])
    best = ok.loc[f1.idxmax()]
    thin = thin_buckets(tallies)
    thin = thin[thin["labeled"] > 0]
    reason = (
        f"best estimated F1 ({f1.max():.2f}: precision {best['precision']:.2f} "
        f"[95% interval {best['precision_low']:.2f}-{best['precision_high']:.2f}], recall {best['recall']:.2f} "
        f"[{best['recall_low']:.2f}-{best['recall_high']:.2f}]) among thresholds with an estimated precision of "
        f"at least {min_precision:.0%}; based on {int(tallies['labeled'].sum())} labels"
    )
    if len(thin):
        reason += f"; {len(thin)} bucket(s) have fewer than {MIN_LABELS_PER_BUCKET} labels"
    return float(best["threshold"]), reason
