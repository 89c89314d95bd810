"""URL rules on a crawl with ground truth: the rules `neardup rules` learns, their precision against the
truth, the share of URL-variant duplicates they explain, and the fetches they save.

    python bench/url_rules.py                                  # the bundled sample
    python bench/url_rules.py --input crawl.jsonl.gz --truth truth.csv

A URL-variant duplicate is a record of kind utm_mirror, scheme_twin, www_twin, trailing_slash or
print_version (scripts/make_sample.py); it is explained when its rewritten URL equals the rewritten URL
of another record of its true cluster. Prints Markdown.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

from neardup import engine
from neardup.analysis import analyze, load_fingerprints
from neardup.config import Config
from neardup.evaluate import load_truth
from neardup.rules import learn_rules, rewritten_urls, rule_stats
from neardup.store import Store

ROOT = Path(__file__).resolve().parent.parent
URL_VARIANTS = ("utm_mirror", "scheme_twin", "www_twin", "trailing_slash", "print_version")


def explained(pages: pd.DataFrame, urls: list[str]) -> pd.Series:
    """Per record: does its rewritten URL equal that of another record of its true cluster."""
    df = pages.assign(rewritten=urls)
    per = df.groupby(["true_cluster", "rewritten"])["line"].transform("size")
    return per > 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT / "sample_data" / "crawl.jsonl.gz"))
    ap.add_argument("--truth", default=str(ROOT / "sample_data" / "truth.csv"))
    ap.add_argument("--jobs", type=int)
    args = ap.parse_args()
    config = Config()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "rules.duckdb") as store:
        engine.ingest_file(store, args.input, config, jobs=args.jobs)
        analysis = analyze(load_fingerprints(store, config, jobs=args.jobs), config)
    started = time.perf_counter()
    learned = learn_rules(analysis.pages)
    seconds = time.perf_counter() - started
    truth = load_truth(args.truth)
    pages = analysis.pages.merge(truth[["line", "true_cluster", "kind"]], on="line")
    is_deg = pages["kind"].str.startswith("degenerate")
    as_truth = pages.assign(cluster_id=pd.Series(pd.factorize(pages["true_cluster"])[0]).where(~is_deg))
    truth_stats = {s.rule: s for s in rule_stats(as_truth, learned.rules)}

    print(f"{len(learned.accepted)} rules learned in {seconds:.1f} s, {len(learned.rejected)} rejected\n")
    print("| host | rule | support (pairs / clusters) | precision (clusters) | precision (truth) | saves |")
    print("|---|---|---|---|---|---|")
    for s in learned.accepted:
        t = truth_stats[s.rule]
        print(
            f"| {s.rule.host} | {s.rule.kind} {s.rule.name} | {s.pairs_in_cluster} / {s.clusters} | "
            f"{s.precision:.2f} | {t.precision:.2f} | {s.pages_saved} |"
        )
    merged = sum(t.merged_pairs for t in truth_stats.values())
    right = sum(t.pairs_in_cluster for t in truth_stats.values())
    print(f"\nmerged URL pairs in one true cluster: {right} / {merged} ({right / max(merged, 1):.3f})")

    variants = pages["kind"].isin(URL_VARIANTS)
    base = explained(pages, rewritten_urls(pages["url"].tolist(), ()))
    ruled = explained(pages, rewritten_urls(pages["url"].tolist(), learned.rules))
    print("\n| kind | records | explained by the base form | explained with the rules |")
    print("|---|---|---|---|")
    for kind in URL_VARIANTS:
        k = pages["kind"] == kind
        print(f"| {kind} | {int(k.sum())} | {int((base & k).sum())} | {int((ruled & k).sum())} |")
    n = int(variants.sum())
    print(
        f"| all URL variants | {n} | {int((base & variants).sum())} ({(base & variants).sum() / n:.1%}) | "
        f"{int((ruled & variants).sum())} ({(ruled & variants).sum() / n:.1%}) |"
    )
    print(f"\nfetches saved by the rules together: {learned.pages_saved} of {len(pages)} records")
    print(f"crawl-trap families: {len(learned.traps)}")


if __name__ == "__main__":
    main()
