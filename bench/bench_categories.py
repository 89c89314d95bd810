"""How often the category neardup gives is right, against a generated crawl's ground truth.

    python bench/bench_categories.py --db sample.duckdb --truth sample_data/truth.csv            # pages
    python bench/bench_categories.py --db sample.duckdb --truth sample_data/truth.csv --pairs    # pairs

Pages (the default): every page deduplication removes gets `categories.page_categories`' category relative
to its representative (what clusters.csv and removed.csv say); its truth is the removed page's own kind, or,
for an original removed in favour of one of its copies, that copy's kind; a removed page of another true
cluster than its representative's wants "templated siblings". Prints the accuracy per true kind, the wrong
categories, and how many removed pages are told to keep both (none should be).

Pairs (--pairs): every candidate pair at the default setting gets `audit.pair_detail`'s suggested category; its truth is the
kind of the copy in the pair (truth.csv: url, true_cluster, kind; the original's kind is `original`): a pair
of one true cluster is right when the suggestion names the kind of either page that is not the original
(two copies of one original: either kind), a pair of two degenerate pages wants "degenerate", any other pair
of two clusters "templated siblings". Prints the accuracy overall and per true category, and what the
wrong suggestions were.
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

import pandas as pd

from neardup import analysis, audit, categories
from neardup.config import Config
from neardup.store import Store

KIND_CATEGORY = {
    "utm_mirror": "URL variant",
    "trailing_slash": "URL variant",
    "www_twin": "URL variant",
    "scheme_twin": "URL variant",
    "exact_refetch": "noise re-fetch",  # the same URL again, the same bytes: a re-fetch, not another URL
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


def page_accuracy(db: Path, truth: pd.DataFrame) -> None:
    kinds = truth.groupby("url")["kind"].agg(set).to_dict()
    cluster = dict(zip(truth["url"], truth["true_cluster"], strict=True))
    config = Config()
    with Store(db, read_only=True) as store:
        a = analysis.analyze(analysis.load_fingerprints(store, config), config)
        t0 = time.perf_counter()
        found = categories.page_categories(store, a, store.labels())
        seconds = time.perf_counter() - t0
    pages = a.pages.join(found)
    removed = pages[pages["cluster_id"].notna() & ~pages["is_representative"].astype(bool)]
    url_of = pages.set_index("page_id")["url"]
    right: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    wrong: collections.Counter[tuple[str, str]] = collections.Counter()
    for row in removed.itertuples():
        rep = url_of[row.representative_id]
        own = {k for k in kinds[row.url] if k != "original"}
        if cluster[row.url] != cluster[rep]:
            name, want = "another page (false match)", {"templated siblings"}
        else:
            of = own or {k for k in kinds[rep] if k != "original"}
            name = " / ".join(sorted(of)) + ("" if own else " (original removed)")
            want = {KIND_CATEGORY[k] for k in of if k in KIND_CATEGORY} or {"other"}
        total[name] += 1
        if row.category in want:
            right[name] += 1
        else:
            wrong[(name, row.category)] += 1
    n, ok = sum(total.values()), sum(right.values())
    keep_both = int(removed["suggested_action"].str.contains("keep both").sum())
    print(
        f"{len(pages):,} pages, {n:,} removed at {config.method} {config.similarity} >= {config.threshold:g}"
    )
    print(f"category right: {ok} of {n} ({ok / n:.1%}); told to keep both: {keep_both}; {seconds:.2f} s\n")
    print("| removed page's true kind | pages | right | share |\n|---|---:|---:|---:|")
    for name, count in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {count} | {right[name]} | {right[name] / count:.0%} |")
    print("\nwrong categories (true -> given: pages):")
    for (name, got), count in wrong.most_common():
        print(f"  {name} -> {got}: {count}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--truth", required=True, type=Path)
    ap.add_argument("--pairs", action="store_true", help="the Audit page's suggestion per candidate pair")
    args = ap.parse_args()
    truth = pd.read_csv(args.truth)
    if not args.pairs:
        page_accuracy(args.db, truth)
        return
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
