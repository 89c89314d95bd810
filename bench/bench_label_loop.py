"""What the Audit page computes per label, at the size of a large crawl's candidate pairs (no database).

    python bench/bench_label_loop.py [--pairs 130000] [--labels 500] [--repeat 7]

A synthetic candidate-pairs frame (--pairs pairs over 10 buckets; the 100,000-page bench database had
129,790 MinHash pairs) and --labels labels of its pairs already given. Per label, after one more label:
`labeled_pairs` from scratch (no kept index) or `labeled_pairs_after` over a kept `pair_index`; then
`bucket_tallies` and `audit_queue` (quota per bucket), without and with the kept index. Prints medians in
milliseconds over --repeat runs.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from harness import median_ms  # bench/harness.py (this directory is on the path of a script run from it)

from neardup import audit
from neardup.labels import audit_queue, bucket_tallies


def synthetic(n_pairs: int, n_labels: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(1)
    ids = np.arange(n_pairs)
    pairs = pd.DataFrame(
        {
            "url_a": [f"https://a.example/{i}" for i in ids],
            "md5_a": [f"{i:032x}" for i in ids],
            "url_b": [f"https://b.example/{i}" for i in ids],
            "md5_b": [f"{i + n_pairs:032x}" for i in ids],
            "bucket": np.round(0.8 + 0.02 * rng.integers(0, 10, n_pairs), 2),
            "score": rng.uniform(0.8, 1.0, n_pairs),
            "page_a": ids,
            "page_b": ids + n_pairs,
        }
    )
    picked = pairs.sample(n_labels + 1, random_state=2)
    labels = picked[audit.PAIR_KEY].assign(
        label=rng.choice(["duplicate", "not"], len(picked)),
        category=None,
        note=None,
        labeler=None,
        labeled_at=pd.date_range("2026-01-01", periods=len(picked), freq="s"),
        setting="{}",
    )
    return pairs, labels.reset_index(drop=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=130_000)
    ap.add_argument("--labels", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    pairs, all_labels = synthetic(args.pairs, args.labels)
    before, labels = all_labels.iloc[:-1], all_labels
    new_key = tuple(labels.iloc[-1][audit.PAIR_KEY])
    t = time.perf_counter()
    index = audit.pair_index(pairs)
    print(
        f"{len(pairs):,} pairs, {len(labels):,} labels; pair_index once per setting: "
        f"{1000 * (time.perf_counter() - t):,.0f} ms"
    )
    matched_before = audit.labeled_pairs(pairs, before, index=index)

    def queue(matched: pd.DataFrame, positions: audit.PairIndex | None) -> None:
        bucket_tallies(pairs["bucket"], matched)
        audit_queue(
            pairs,
            matched,
            per_bucket=30,
            seed=7,
            skipped=set(),
            focus=0.8,
            positions=positions.exact if positions else None,
        )

    rows = {
        "labeled_pairs, recomputed": lambda: audit.labeled_pairs(pairs, labels),
        "labeled_pairs_after, kept index": lambda: audit.labeled_pairs_after(
            pairs, labels, matched_before, new_key, index=index
        ),
        "bucket_tallies + audit_queue": lambda: queue(matched_before, None),
        "bucket_tallies + audit_queue, kept index": lambda: queue(matched_before, index),
    }
    print("| per label | median ms |\n|---|---:|")
    for name, fn in rows.items():
        print(f"| {name} | {median_ms(fn, args.repeat)[0]:,.1f} |")


if __name__ == "__main__":
    main()
