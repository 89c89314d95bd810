"""Audit sampling and label-based estimates: Wilson intervals, buckets, stratified precision / recall."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from neardup.config import Config
from neardup.labels import (
    ADJUDICATOR,
    LABELS,
    active_queue,
    agreement,
    agreement_table,
    audit_queue,
    bucket_edges,
    bucket_of,
    bucket_range,
    bucket_tallies,
    consensus_labels,
    decision_at,
    estimates,
    is_duplicate_at,
    labeler_overlap,
    pairs_without_labels,
    sample_pairs,
    suggest_threshold,
    thin_buckets,
    wilson,
)

MINHASH = Config(method="minhash", threshold=0.8)
SIMHASH = Config(method="simhash", threshold=3)


# --- Wilson score interval ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (0, 10, 0.0, 0.2775),  # z^2 / (n + z^2)
        (10, 10, 0.7225, 1.0),  # n / (n + z^2)
        (5, 10, 0.2366, 0.7634),
        (1, 1, 0.2065, 1.0),
        (50, 100, 0.4038, 0.5962),
    ],
)
def test_wilson_known_values(successes: int, n: int, low: float, high: float) -> None:
    # published 95% Wilson intervals, to four decimals
    lo, hi = wilson(successes, n)
    assert lo == pytest.approx(low, abs=5e-5)
    assert hi == pytest.approx(high, abs=5e-5)


def test_wilson_without_observations_is_uninformative() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def test_wilson_contains_the_point_estimate_and_narrows_with_n() -> None:
    for n in (1, 5, 20, 200):
        for k in range(n + 1):
            lo, hi = wilson(k, n)
            assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert wilson(50, 100)[1] - wilson(50, 100)[0] < wilson(5, 10)[1] - wilson(5, 10)[0]


# --- buckets -----------------------------------------------------------------------------------
def test_bucket_of_minhash_is_the_lower_005_edge() -> None:
    scores = np.array([0.3, 0.349, 0.35, 0.8, 0.8499, 0.85, 0.95, 0.999, 1.0])
    # 1.0 is in the last bucket, [0.95, 1.0]: no bucket of its own
    assert bucket_of(scores, MINHASH).tolist() == [0.3, 0.3, 0.35, 0.8, 0.8, 0.85, 0.95, 0.95, 0.95]


@pytest.mark.parametrize("config", [MINHASH, MINHASH.replace(similarity="jaccard"), SIMHASH])
def test_buckets_are_the_edges_explore_draws(config: Config) -> None:
    """One definition of the buckets: each score's bucket (Audit, Tune) is an edge of the Explore histogram."""
    edges = bucket_edges(config)
    if config.method == "simhash":
        scores = np.arange(0, config.simhash_max_bits + 1, dtype=np.float64)
    else:
        scores = np.linspace(config.minhash_floor, 1.0, 1001)
    assert set(bucket_of(scores, config).tolist()) == set(edges.tolist())
    assert bucket_range(float(edges[-1]), config) == (
        "[0.95, 1.00]" if config.method == "minhash" else "8 bits"
    )
    if config.method == "minhash":
        assert bucket_range(0.8, config) == "[0.80, 0.85)"


def test_bucket_of_minhash_survives_float_noise() -> None:
    # 0.85 * 20 is 16.999999999999996 in binary floating point; it still belongs to the 0.85 bucket
    assert bucket_of(np.array([0.1 * 8.5, 0.7 + 0.15]), MINHASH).tolist() == [0.85, 0.85]


def test_bucket_of_simhash_is_the_bit_count() -> None:
    assert bucket_of(np.array([0, 1, 5, 8]), SIMHASH).tolist() == [0.0, 1.0, 5.0, 8.0]


def test_is_duplicate_at_minhash_includes_the_threshold_bucket() -> None:
    buckets = np.array([0.7, 0.75, 0.8, 0.85, 1.0])
    assert is_duplicate_at(buckets, MINHASH).tolist() == [False, False, True, True, True]
    assert bool(is_duplicate_at(0.8, MINHASH.replace(threshold=0.8000000001)))  # float noise tolerated


def test_is_duplicate_at_simhash_counts_bits_at_or_below() -> None:
    buckets = np.arange(0, 9, dtype=float)
    assert is_duplicate_at(buckets, SIMHASH).tolist() == [True] * 4 + [False] * 5
    assert is_duplicate_at(buckets, SIMHASH.replace(threshold=0)).tolist() == [True] + [False] * 8


# --- sampling ----------------------------------------------------------------------------------
def _pairs(n_per_bucket: dict[float, int]) -> pd.DataFrame:
    rows = []
    for bucket, n in n_per_bucket.items():
        for i in range(n):
            rows.append(
                {
                    "url_a": f"https://a.example/{bucket:.2f}/{i}",
                    "url_b": f"https://b.example/{bucket:.2f}/{i}",
                    "bucket": bucket,
                }
            )
    return pd.DataFrame(rows)


PAIRS = _pairs({0.3: 40, 0.5: 3, 0.75: 12, 0.8: 20, 0.9: 1, 1.0: 8})


def test_sample_pairs_is_reproducible_for_a_seed() -> None:
    one = sample_pairs(PAIRS, per_bucket=5, seed=11, exclude=set(), focus=0.8)
    two = sample_pairs(PAIRS, per_bucket=5, seed=11, exclude=set(), focus=0.8)
    pd.testing.assert_frame_equal(one, two)
    others = [sample_pairs(PAIRS, per_bucket=5, seed=s, exclude=set(), focus=0.8) for s in range(12, 16)]
    assert any(not o.equals(one) for o in others), "the seed has no effect"


def test_sample_pairs_respects_per_bucket() -> None:
    for per_bucket in (1, 4, 100):
        got = sample_pairs(PAIRS, per_bucket=per_bucket, seed=1, exclude=set())
        counts = got["bucket"].value_counts()
        available = PAIRS["bucket"].value_counts()
        for bucket, n in available.items():
            assert counts.get(bucket, 0) == min(per_bucket, n)
        assert not got.duplicated(["url_a", "url_b"]).any()


def test_sample_pairs_skips_excluded_pairs() -> None:
    keys = list(zip(PAIRS["url_a"], PAIRS["url_b"], strict=True))
    exclude = set(keys[::2])
    got = sample_pairs(PAIRS, per_bucket=100, seed=5, exclude=exclude)
    got_keys = set(zip(got["url_a"], got["url_b"], strict=True))
    assert not got_keys & exclude
    assert got_keys == set(keys) - exclude
    # a bucket whose only pair is excluded disappears from the queue
    only = next(k for k, b in zip(keys, PAIRS["bucket"], strict=True) if b == 0.9)
    assert 0.9 not in set(sample_pairs(PAIRS, per_bucket=5, seed=5, exclude={only})["bucket"])


def test_sample_pairs_orders_by_distance_from_focus() -> None:
    got = sample_pairs(PAIRS, per_bucket=3, seed=2, exclude=set(), focus=0.8)
    dist = (got["bucket"] - 0.8).abs().to_numpy()
    assert (np.diff(dist) >= -1e-12).all()
    assert got["bucket"].iloc[0] == 0.8
    # a bucket's pairs stay together
    got = sample_pairs(_pairs({0.75: 2, 0.85: 2, 0.8: 1}), per_bucket=2, seed=0, exclude=set(), focus=0.8)
    assert got["bucket"].iloc[0] == 0.8
    assert got["bucket"].iloc[1] == got["bucket"].iloc[2] != got["bucket"].iloc[3] == got["bucket"].iloc[4]


def test_sample_pairs_on_no_pairs() -> None:
    empty = PAIRS.iloc[:0]
    assert sample_pairs(empty, per_bucket=5, seed=1, exclude=set()).empty


# --- tallies and estimates ---------------------------------------------------------------------
def _labels(spec: dict[float, tuple[int, int]], unsure: int = 0) -> pd.DataFrame:
    """Labeled pairs: bucket -> (duplicates, not duplicates); plus `unsure` labels in the top bucket."""
    rows = []
    for bucket, (dup, nodup) in spec.items():
        rows += [{"bucket": bucket, "label": "duplicate"}] * dup + [
            {"bucket": bucket, "label": "not"}
        ] * nodup
    rows += [{"bucket": max(spec), "label": "unsure"}] * unsure
    return pd.DataFrame(rows)


def _pair_buckets(sizes: dict[float, int]) -> pd.Series:
    return pd.Series(np.repeat(list(sizes), list(sizes.values())), dtype=float)


# 500 candidate pairs; by construction the duplicate rates are 1, 1, 0.5, 0, 0 from the top bucket
# down, so there are 250 duplicates and the 0.5 bucket (50 pairs) has no label.
SIZES = {0.5: 50, 0.6: 100, 0.7: 100, 0.8: 100, 0.9: 100, 1.0: 100}


def _tallies(n: int) -> pd.DataFrame:
    spec = {1.0: (n, 0), 0.9: (n, 0), 0.8: (n // 2, n // 2), 0.7: (0, n), 0.6: (0, n)}
    return bucket_tallies(_pair_buckets(SIZES), _labels(spec, unsure=3))


def test_bucket_tallies_count_pairs_and_decided_labels() -> None:
    t = _tallies(10).set_index("bucket")
    assert t["pairs"].to_dict() == {b: n for b, n in SIZES.items()}
    assert t.loc[1.0, "labeled"] == 10  # the 3 unsure labels are left out
    assert t.loc[0.8, "duplicates"] == 5
    assert t.loc[0.8, "rate"] == 0.5
    assert t.loc[0.5, "labeled"] == 0 and math.isnan(t.loc[0.5, "rate"])
    assert (t.loc[0.5, "rate_low"], t.loc[0.5, "rate_high"]) == (0.0, 1.0)
    assert t.loc[0.8, "rate_low"] == pytest.approx(wilson(5, 10)[0])


def test_estimates_recover_precision_and_recall_known_by_construction() -> None:
    est = estimates(_tallies(10), MINHASH).set_index("threshold")
    expected = {  # threshold: (pairs flagged, precision, recall)
        1.0: (100, 1.0, 100 / 250),
        0.9: (200, 1.0, 200 / 250),
        0.8: (300, 250 / 300, 1.0),
        0.7: (400, 250 / 400, 1.0),
        0.6: (500, 250 / 500, 1.0),
    }
    for threshold, (flagged, precision, recall) in expected.items():
        row = est.loc[threshold]
        assert row["pairs_flagged"] == flagged
        assert row["precision"] == pytest.approx(precision)
        assert row["recall"] == pytest.approx(recall)
        assert row["precision_low"] <= row["precision"] <= row["precision_high"]
        assert row["recall_low"] <= row["recall"] <= row["recall_high"]
        assert row["unlabeled_pairs"] == 0
    # the unlabeled bucket is flagged at 0.5 but contributes nothing to the estimates
    low = est.loc[0.5]
    assert (low["pairs_flagged"], low["unlabeled_pairs"]) == (550, 50)
    assert low["precision"] == pytest.approx(0.5)
    assert est.loc[0.9, "labels"] == 20
    # conservative interval: the weighted per-bucket Wilson bounds
    assert est.loc[0.8, "precision_low"] == pytest.approx((2 * wilson(10, 10)[0] + wilson(5, 10)[0]) / 3)


def test_estimates_simhash_flag_buckets_at_or_below_the_threshold() -> None:
    sizes = {0.0: 10, 1.0: 30, 2.0: 60, 3.0: 100}
    labels = _labels({0.0: (5, 0), 1.0: (5, 0), 2.0: (1, 4), 3.0: (0, 5)})
    est = estimates(bucket_tallies(_pair_buckets(sizes), labels), SIMHASH).set_index("threshold")
    total = 10 + 30 + 60 * 0.2
    assert est.loc[1.0, "pairs_flagged"] == 40
    assert est.loc[1.0, "precision"] == pytest.approx(1.0)
    assert est.loc[1.0, "recall"] == pytest.approx(40 / total)
    assert est.loc[2.0, "precision"] == pytest.approx(52 / 100)
    assert est.loc[3.0, "recall"] == pytest.approx(1.0)


def test_suggest_threshold_finds_the_most_duplicates_above_the_precision_floor() -> None:
    at_09 = MINHASH.replace(threshold=0.9)
    est = estimates(_tallies(10), at_09)
    # 0.8 finds every duplicate but has an estimated precision of 0.83; 0.9 finds the most of those >= 95%
    threshold, reason = suggest_threshold(est, _tallies(10), at_09)
    assert threshold == 0.9
    assert "most duplicates" in reason and "from 50 decided labels, 20 of them on pairs it flags" in reason
    assert f"{est.set_index('threshold').loc[0.9, 'precision_low']:.2f}" in reason  # the interval is stated
    # a looser floor admits 0.8, which finds more
    threshold, _ = suggest_threshold(est, _tallies(10), at_09, min_precision=0.8)
    assert threshold == 0.8
    # an unreachable floor gives no suggestion, and says why
    threshold, reason = suggest_threshold(est, _tallies(10), at_09, min_precision=1.01)
    assert threshold is None
    assert "101%" in reason


def test_suggest_threshold_moves_the_threshold_in_use_least() -> None:
    # the 0.85 bucket has no pairs: from 0.8, 0.85 flags what 0.9 flags, and is the nearer
    est = estimates(_tallies(10), MINHASH)
    threshold, reason = suggest_threshold(est, _tallies(10), MINHASH)
    assert threshold == 0.85
    assert reason.endswith("any threshold from 0.85 to 0.9 flags the same pairs.")


def test_suggest_threshold_keeps_the_threshold_in_use_when_it_flags_the_same_pairs() -> None:
    # pairs only at 0.95 and above, all duplicates: 0.8 (in use) flags the same pairs as 0.95, so it stays,
    # whatever precision the text quotes for it
    tallies = bucket_tallies(_pair_buckets({0.95: 37}), _labels({0.95: (10, 0)}))
    threshold, reason = suggest_threshold(estimates(tallies, MINHASH), tallies, MINHASH)
    assert threshold == MINHASH.threshold
    assert f"any threshold from {MINHASH.minhash_floor:g} to 0.95 flags the same pairs" in reason
    assert decision_at(tallies, MINHASH).precision == 1.0
    # the same for simhash: bits 0-1 hold the pairs, 3 bits (in use) flags them all
    tallies = bucket_tallies(_pair_buckets({0.0: 20, 1.0: 10}), _labels({0.0: (5, 0), 1.0: (5, 0)}))
    threshold, reason = suggest_threshold(estimates(tallies, SIMHASH), tallies, SIMHASH)
    assert threshold == SIMHASH.threshold
    assert f"from 1 to {SIMHASH.simhash_max_bits} flags the same pairs" in reason


def test_suggest_threshold_prefers_the_most_duplicates_among_several_qualifying_thresholds() -> None:
    # all buckets are pure duplicates: every threshold has precision 1, the loosest has recall 1
    sizes = {0.8: 100, 0.9: 100, 0.95: 100}
    tallies = bucket_tallies(_pair_buckets(sizes), _labels({b: (100, 0) for b in sizes}))
    at_095 = MINHASH.replace(threshold=0.95)
    threshold, _ = suggest_threshold(estimates(tallies, at_095), tallies, at_095)
    assert threshold == 0.8


def test_suggest_threshold_without_labels() -> None:
    tallies = bucket_tallies(_pair_buckets(SIZES), pd.DataFrame(columns=["bucket", "label"]))
    threshold, reason = suggest_threshold(estimates(tallies, MINHASH), tallies, MINHASH)
    assert threshold is None
    assert "no labels" in reason


def test_suggest_threshold_mentions_thin_buckets() -> None:
    sizes = {0.9: 100, 1.0: 100}
    tallies = bucket_tallies(_pair_buckets(sizes), _labels({1.0: (100, 0), 0.9: (2, 0)}))
    threshold, reason = suggest_threshold(estimates(tallies, MINHASH), tallies, MINHASH, min_precision=0.5)
    assert threshold is not None
    assert "1 bucket(s) have fewer than 5 labels" in reason


# --- the audit queue -----------------------------------------------------------------------------
def _keyed(pairs: pd.DataFrame) -> pd.DataFrame:
    return pairs.assign(md5_a="", md5_b="")


def _labeled(rows: pd.DataFrame, label: str) -> pd.DataFrame:
    return rows[["url_a", "md5_a", "url_b", "md5_b", "bucket"]].assign(label=label)


def test_audit_queue_shrinks_with_every_decided_label_and_refills_a_skip() -> None:
    pairs = _keyed(PAIRS)
    key = ["url_a", "md5_a", "url_b", "md5_b"]
    queue = audit_queue(
        pairs, _labeled(pairs.iloc[:0], "not"), per_bucket=5, seed=7, skipped=set(), focus=0.8
    )
    # every bucket up to its size: 5 + 3 + 5 + 5 + 1 + 5
    assert len(queue) == 24
    labeled = _labeled(queue.iloc[:1], "duplicate")
    after = audit_queue(pairs, labeled, per_bucket=5, seed=7, skipped=set(), focus=0.8)
    assert len(after) == 23
    assert tuple(queue.iloc[0][key]) not in set(after[key].itertuples(index=False, name=None))
    # an unsure label takes the pair out but not the quota: the bucket's next pair comes in
    unsure = audit_queue(
        pairs, _labeled(queue.iloc[:1], "unsure"), per_bucket=5, seed=7, skipped=set(), focus=0.8
    )
    assert len(unsure) == 24
    # a skip: the same, and the skipped pair never comes back
    skip = tuple(queue.iloc[1][key])
    skipped = audit_queue(pairs, labeled, per_bucket=5, seed=7, skipped={skip}, focus=0.8)
    assert len(skipped) == 23 and skip not in set(skipped[key].itertuples(index=False, name=None))
    # label everything in the queue: it is empty, and the pairs left over are in buckets that had their quota
    done = _labeled(queue, "not")
    assert audit_queue(pairs, done, per_bucket=5, seed=7, skipped=set()).empty
    assert len(audit_queue(pairs, done, per_bucket=6, seed=7, skipped=set())) == 4  # 0.3, 0.75, 0.8, 1.0


def test_audit_queue_keeps_its_order_when_a_pair_is_labeled_or_skipped() -> None:
    pairs = _keyed(PAIRS)
    key = ["url_a", "md5_a", "url_b", "md5_b"]

    def keys(queue: pd.DataFrame) -> list[tuple[str, ...]]:
        return list(queue[key].itertuples(index=False, name=None))

    queue = audit_queue(
        pairs, _labeled(pairs.iloc[:0], "not"), per_bucket=5, seed=7, skipped=set(), focus=0.8
    )
    # a decided label takes the first pair out and the second comes next: the page has it prefetched
    after = audit_queue(
        pairs, _labeled(queue.iloc[:1], "duplicate"), per_bucket=5, seed=7, skipped=set(), focus=0.8
    )
    assert keys(after) == keys(queue)[1:]
    # a skip (or an unsure label) brings the bucket's next pair in, after the pairs already queued
    skipped = audit_queue(
        pairs, _labeled(pairs.iloc[:0], "not"), per_bucket=5, seed=7, skipped={keys(queue)[0]}, focus=0.8
    )
    assert keys(skipped)[0] == keys(queue)[1]
    assert set(keys(queue)[1:]) < set(keys(skipped))


def test_thin_buckets_leave_out_a_bucket_with_nothing_left_to_label() -> None:
    pairs = _keyed(_pairs({0.8: 2, 0.9: 20}))
    labeled = pd.concat([_labeled(pairs.iloc[:2], "duplicate"), _labeled(pairs.iloc[2:4], "not")])
    tallies = bucket_tallies(pairs["bucket"], labeled)
    assert thin_buckets(tallies)["bucket"].tolist() == [0.9]  # 0.8 has 2 labels, and 2 pairs


# --- several labelers ----------------------------------------------------------------------------
def test_consensus_is_the_adjudicated_label_else_the_majority() -> None:
    t = pd.Timestamp("2026-01-01")
    rows = [  # pair, labeler, label
        ("p1", "ana", "duplicate"),
        ("p1", "ben", "duplicate"),
        ("p1", "cem", "not"),
        ("p2", "ana", "duplicate"),
        ("p2", "ben", "not"),
        ("p3", "ana", "duplicate"),
        ("p3", "ben", "not"),
        ("p3", ADJUDICATOR, "not"),
        ("p4", "ana", "not"),
    ]
    labels = pd.DataFrame(
        [
            {
                "url_a": p,
                "md5_a": "",
                "url_b": "x",
                "md5_b": "",
                "labeler": who,
                "label": lab,
                "labeled_at": t + pd.Timedelta(minutes=i),
            }
            for i, (p, who, lab) in enumerate(rows)
        ]
    )
    got = consensus_labels(labels).set_index("url_a")
    assert got["label"].to_dict() == {"p1": "duplicate", "p2": "unsure", "p3": "not", "p4": "not"}
    assert got["contested"].to_dict() == {"p1": True, "p2": True, "p3": False, "p4": False}
    assert got["labelers"].to_dict() == {"p1": 3, "p2": 2, "p3": 3, "p4": 1}


# --- agreement between labelers ------------------------------------------------------------------
def _two_by_two(both_yes: int, yes_no: int, no_yes: int, both_no: int) -> tuple[list[str], list[str]]:
    """Two labelers' labels from a 2x2 table (rows: the first labeler, columns: the second)."""
    first = ["duplicate"] * (both_yes + yes_no) + ["not"] * (no_yes + both_no)
    second = ["duplicate"] * both_yes + ["not"] * yes_no + ["duplicate"] * no_yes + ["not"] * both_no
    return first, second


def test_agreement_textbook_table() -> None:
    # 50 items, 20 / 5 / 10 / 15: p_o = 0.7, Cohen's p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4;
    # Gwet: pi = 0.55, p_e = 2 * 0.55 * 0.45 = 0.495, AC1 = 0.205 / 0.505.
    s = agreement(*_two_by_two(20, 5, 10, 15))
    assert (s.pairs, s.raw) == (50, pytest.approx(0.7))
    assert s.kappa == pytest.approx(0.4)
    assert s.ac1 == pytest.approx(0.205 / 0.505)


def test_agreement_kappa_paradox_one_label_dominates() -> None:
    # 80 pairs, 51 / 19 / 7 / 3: 67.5% raw agreement, but 'duplicate' dominates both labelers' marginals
    # (0.875, 0.725), so Cohen's p_e = 0.66875 and kappa = 0.00625 / 0.33125 = 0.019; AC1 pools the
    # marginals (pi = 0.8, p_e = 0.32) and gives 0.355 / 0.68 = 0.52.
    s = agreement(*_two_by_two(51, 19, 7, 3))
    assert s.raw == pytest.approx(0.675)
    assert s.kappa == pytest.approx(0.00625 / 0.33125)
    assert round(s.kappa, 2) == 0.02
    assert s.ac1 == pytest.approx(0.355 / 0.68)


def test_agreement_perfect_and_degenerate() -> None:
    s = agreement(["duplicate", "not", "not"], ["duplicate", "not", "not"])
    assert (s.raw, s.kappa, s.ac1) == (1.0, 1.0, 1.0)
    one = agreement(["duplicate"] * 4, ["duplicate"] * 4)  # one label throughout: kappa is undefined
    assert one.raw == 1.0 and math.isnan(one.kappa) and one.ac1 == 1.0
    assert agreement([], []).pairs == 0
    with pytest.raises(ValueError):
        agreement(["duplicate"], [])
    # q counts the scale's categories: with 'unsure' on the scale AC1's chance agreement halves
    f, s2 = _two_by_two(20, 5, 10, 15)
    assert agreement(f, s2, LABELS).ac1 == pytest.approx((0.7 - 0.495 / 2) / (1 - 0.495 / 2))


def test_agreement_table_per_bucket_and_overall() -> None:
    rows = []
    for i, (bucket, a, b) in enumerate(
        [(0.8, "duplicate", "duplicate"), (0.8, "not", "duplicate"), (0.9, "duplicate", "duplicate")]
    ):
        for who, lab in (("ana", a), ("ben", b)):
            rows.append(
                {
                    "url_a": f"p{i}",
                    "md5_a": "",
                    "url_b": "x",
                    "md5_b": "",
                    "bucket": bucket,
                    "labeler": who,
                    "label": lab,
                }
            )
    rows.append(
        {
            "url_a": "p9",
            "md5_a": "",
            "url_b": "x",
            "md5_b": "",
            "bucket": 0.9,
            "labeler": "ana",
            "label": "not",
        }
    )
    assert labeler_overlap(pd.DataFrame(rows)).to_dict("records") == [
        {"first": "ana", "second": "ben", "pairs": 3}
    ]
    table = agreement_table(pd.DataFrame(rows), "ana", "ben").set_index("bucket")
    assert table["pairs"].to_dict() == {"all": 3, "0.8": 2, "0.9": 1}  # p9 has one labeler only
    assert table.loc["all", "raw"] == pytest.approx(2 / 3)
    assert table.loc["0.8", "raw"] == 0.5 and table.loc["0.9", "raw"] == 1.0


# --- the decision at the threshold: active queue and stop rule -----------------------------------
def _tally_frame(spec: dict[float, tuple[int, int, int]]) -> pd.DataFrame:
    """bucket -> (pairs, duplicates labeled, not labeled)."""
    buckets = pd.Series(np.repeat(list(spec), [v[0] for v in spec.values()]), dtype=float)
    return bucket_tallies(buckets, _labels({b: (d, n) for b, (_, d, n) in spec.items()}))


def test_decision_counts_an_unlabeled_bucket_as_unknown_and_a_census_as_known() -> None:
    # 0.8 and 0.9 are flagged at 0.8; 0.7 is not, and has no label: it may hold 100 duplicates
    open_ = decision_at(_tally_frame({0.7: (100, 0, 0), 0.8: (100, 10, 0), 0.9: (100, 10, 0)}), MINHASH)
    found_low = 200 * wilson(10, 10)[0]
    assert open_.recall_high == 1.0 and not open_.done
    assert open_.recall_low == pytest.approx(found_low / (found_low + 100))
    assert open_.gain.index[0] == 0.7  # the unknown bucket narrows the decision most
    # every pair labeled: the rates are known, the intervals are points, the rule says stop
    census = decision_at(_tally_frame({0.7: (10, 0, 10), 0.8: (10, 10, 0), 0.9: (10, 9, 1)}), MINHASH)
    assert (census.precision_low, census.precision_high) == (pytest.approx(19 / 20), pytest.approx(19 / 20))
    assert (census.recall_low, census.recall_high) == (1.0, 1.0)
    assert census.done and census.gain.empty and census.more.empty


def test_decision_more_labels_reach_the_stop_rule() -> None:
    t = _tally_frame({0.6: (2000, 0, 5), 0.7: (2000, 0, 5), 0.8: (2000, 5, 0), 0.9: (2000, 5, 0)})
    d = decision_at(t, MINHASH)
    assert not d.done and d.reachable and d.more.sum() > 0
    # giving each bucket the simulated labels (all at its current rate) meets the rule
    spec = {b: (2000, 0, 5) for b in (0.6, 0.7)} | {b: (2000, 5, 0) for b in (0.8, 0.9)}
    for b, k in d.more.items():
        total, dup, nodup = spec[b]
        spec[b] = (total, dup + k, nodup) if dup else (total, dup, nodup + k)
    after = decision_at(_tally_frame(spec), MINHASH)
    assert after.done
    assert after.precision_high - after.precision_low <= 0.1 and after.recall_high - after.recall_low <= 0.1


def test_active_queue_starts_in_the_bucket_of_largest_gain_and_stops() -> None:
    pairs = _keyed(_pairs({0.7: 30, 0.8: 30, 0.9: 30}))
    none = pairs.iloc[:0].assign(label="not")[["url_a", "md5_a", "url_b", "md5_b", "bucket", "label"]]
    tallies = bucket_tallies(pairs["bucket"], none)
    queue = active_queue(pairs, none, tallies, MINHASH, seed=7, skipped=set())
    assert queue.iloc[0]["bucket"] == decision_at(tallies, MINHASH).gain.index[0]
    assert len(queue) == 90
    # every pair labeled by the rule of the bucket: nothing is left and the rule holds
    full = pd.concat(
        [_labeled(pairs[pairs["bucket"] >= 0.8], "duplicate"), _labeled(pairs[pairs["bucket"] < 0.8], "not")]
    )
    tallies = bucket_tallies(pairs["bucket"], full)
    assert active_queue(pairs, full, tallies, MINHASH, seed=7, skipped=set()).empty


def test_the_table_and_the_decision_state_one_interval_at_the_threshold() -> None:
    # an unlabeled bucket flagged at 0.7 and a fully labeled bucket: both enter the table's interval as they
    # enter the stop rule's, so the Tune page shows one interval at the threshold in use
    spec = {0.7: (40, 0, 0), 0.8: (10, 9, 1), 0.9: (100, 12, 1)}
    tallies = _tally_frame(spec)
    for threshold in (0.7, 0.8, 0.9):
        config = MINHASH.replace(threshold=threshold)
        row = estimates(tallies, config, [threshold]).iloc[0]
        d = decision_at(tallies, config)
        assert (row["precision"], row["recall"]) == (pytest.approx(d.precision), pytest.approx(d.recall))
        got = [row[f"{m}_{end}"] for m in ("precision", "recall") for end in ("low", "high")]
        want = [d.precision_low, d.precision_high, d.recall_low, d.recall_high]
        assert got == pytest.approx(want)
    # the census bucket's rate is known: no interval around it in the per-bucket table
    t = tallies.set_index("bucket")
    assert (t.loc[0.8, "rate_low"], t.loc[0.8, "rate_high"]) == (0.9, 0.9)
    assert t.loc[0.9, "rate_low"] == pytest.approx(wilson(12, 13)[0])


def test_unlabeled_buckets_widen_the_interval_and_leave_the_point_alone() -> None:
    # 0.7 holds 40 pairs without a label, 0.8 is a census of 10 duplicates: flagged together at 0.7
    spec = {0.7: (40, 0, 0), 0.8: (10, 10, 0)}
    row = estimates(_tally_frame(spec), MINHASH, [0.7]).iloc[0]
    assert row["precision"] == 1.0  # from the labeled bucket alone, not (10 + 0) / 50
    assert row["unlabeled_pairs"] == 40
    # the 40 unlabeled pairs may hold anything from 0 to 40 duplicates
    assert (row["precision_low"], row["precision_high"]) == (pytest.approx(10 / 50), 1.0)


def test_a_threshold_flagging_only_unlabeled_buckets_has_the_widest_interval_not_none() -> None:
    # at 0.9 only the unlabeled bucket is flagged: no point, and an interval from 0 to 1
    spec = {0.8: (10, 0, 10), 0.9: (40, 0, 0)}
    row = estimates(_tally_frame(spec), MINHASH, [0.9]).iloc[0]
    assert math.isnan(row["precision"]) and math.isnan(row["recall"])
    assert (row["precision_low"], row["precision_high"]) == (0.0, 1.0)
    # no duplicate labeled anywhere: recall is unknown, but the interval still covers it (0 to 1), as the
    # stop rule's does
    assert (row["recall_low"], row["recall_high"]) == (0.0, 1.0)
    d = decision_at(_tally_frame(spec), MINHASH.replace(threshold=0.9))
    assert (d.precision_low, d.precision_high, d.recall_low, d.recall_high) == (0.0, 1.0, 0.0, 1.0)


def test_pairs_without_labels_counts_all_and_flagged() -> None:
    spec = {0.7: (40, 0, 0), 0.8: (10, 10, 0), 0.9: (25, 0, 0)}
    assert pairs_without_labels(_tally_frame(spec), MINHASH) == (65, 25)
    assert pairs_without_labels(_tally_frame(spec), MINHASH, 0.7) == (65, 65)


def test_decision_summary_states_both_intervals_at_its_threshold() -> None:
    census = decision_at(_tally_frame({0.7: (10, 0, 10), 0.8: (10, 10, 0), 0.9: (10, 9, 1)}), MINHASH)
    assert census.summary() == "precision at 0.8 is 0.95 [0.95-0.95], recall 1.00 [1.00-1.00]"
    d = decision_at(_tally_frame({0.7: (100, 0, 0), 0.8: (100, 10, 0), 0.9: (100, 10, 0)}), MINHASH)
    assert d.summary() == (
        f"precision at 0.8 is {d.precision:.2f} [{d.precision_low:.2f}-{d.precision_high:.2f}], "
        f"recall {d.recall:.2f} [{d.recall_low:.2f}-{d.recall_high:.2f}]"
    )
