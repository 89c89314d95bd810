"""How often the Audit page's suggested category is right, against a generated crawl's ground truth.

    python bench/bench_categories.py --db sample.duckdb --truth sample_data/truth.csv

Every candidate pair at the default setting gets `audit.pair_detail`'s suggested category; its truth is the
kind of the copy in the pair (truth.csv: url, true_cluster, kind; the original's kind is `original`): a pair
of one true cluster is right when the suggestion names the kind of either page that is not the original
(two copies of one original: either kind), a pair of two degenerate pages wants "degenerate", any other pair
of two clusters "templated siblings". Prints the accuracy overall and per true category, and what the
wrong suggestions were.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

import pandas as pd

from neardup import analysis, audit
from neardup.config import Config
from neardup.store import Store

KIND_CATEGORY = {
    "utm_mirror": "URL variant",
    "trailing_slash": "URL variant",
    "www_twin": "URL variant",
    "scheme_twin": "URL variant",
    "exact_refetch": "URL variant",
    "refetch_noise": "noise re-fetch",
    "noise_in_content": "noise re-fetch",
    "stale_recrawl": "stale re-crawl",
    "print_version": "print version",
    "syndicated": "syndicated",
    "syndicated_partial": "syndicated",
    "regional_mirror": "regional mirror",
}


def expected(kinds_a: set[str], kinds_b: set[str], same_cluster: bool) -> set[str]:
    """The categories that are right for a pair of pages of these kinds (a URL fetched twice has two)."""
    if all(k.startswith("degenerate") for k in kinds_a | kinds_b):
        return {"degenerate"}
    if not same_cluster:
        return {"templated siblings"}
    return {KIND_CATEGORY[k] for k in kinds_a | kinds_b if k in KIND_CATEGORY} or {"other"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--truth", required=True, type=Path)
    args = ap.parse_args()
    truth = pd.read_csv(args.truth)
    kinds = truth.groupby("url")["kind"].agg(set).to_dict()
    cluster = dict(zip(truth["url"], truth["true_cluster"], strict=True))
    config = Config()
    with Store(args.db, read_only=True) as store:
        pairs = audit.candidate_pairs(analysis.load_fingerprints(store, config), config)
        right: collections.Counter[str] = collections.Counter()
        total: collections.Counter[str] = collections.Counter()
        wrong: collections.Counter[tuple[str, str]] = collections.Counter()
        for row in pairs.itertuples():
            detail = audit.pair_detail(store, int(row.page_a), int(row.page_b), config)
            a, b = detail.left["url"], detail.right["url"]
            want = expected(kinds[a], kinds[b], cluster[a] == cluster[b])
            name = " or ".join(sorted(want))
            total[name] += 1
            if detail.category in want:
                right[name] += 1
            else:
                wrong[(name, detail.category)] += 1
    n, ok = sum(total.values()), sum(right.values())
    print(f"{len(pairs)} candidate pairs at {config.method} {config.similarity} >= {config.threshold:g}")
    print(f"suggested category right: {ok} of {n} ({ok / n:.0%})\n")
    print("| true category | pairs | right | share |\n|---|---:|---:|---:|")
    for name, count in total.most_common():
        print(f"| {name} | {count} | {right[name]} | {right[name] / count:.0%} |")
    print("\nwrong suggestions (true -> suggested: pairs):")
    for (name, got), count in wrong.most_common():
        print(f"  {name} -> {got}: {count}")


if __name__ == "__main__":
    main()
