"""Time the functions an app page calls after a threshold move (fingerprints already cached).

    python bench/bench_app.py --db bench/data/app.duckdb [--input crawl.jsonl.gz]

With --input, the dump is ingested into a fresh --db first (and fingerprints computed for the default
setting). Then, per method, for 5 thresholds: `analysis.analyze` (Home, Explore, Clusters, Export),
`labeled_pairs` + `audit_queue` + `bucket_tallies` (Audit, when the labels are read again; `candidate_pairs`
is cached per setting), what an Audit label key computes before the next pair is drawn (`audit.labels_with` +
`labeled_pairs_after` + `bucket_tallies` + `audit_queue`: the label put into the kept labels) and after it
(`Store.labels_version`, twice around the write), `pair_detail` (Audit: the pages, scores, diff and
suggested category of a pair; prefetched on a background thread for the next one) and its two
`Store.page` reads, `audit.tune_tables` (Tune), `drilldown.cluster_table` (Clusters) and
`export.clusters_frame` (Export), and `rules.learn_rules` over the URL table made once per setting (URL
rules; timed once per threshold, as a move does). Prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

from harness import median_ms  # bench/harness.py (this directory is on the path of a script run from it)

from neardup import audit, engine, rules
from neardup.analysis import Fingerprints, analyze, load_fingerprints
from neardup.config import Config
from neardup.csvsafe import to_csv
from neardup.drilldown import cluster_table
from neardup.export import clusters_frame
from neardup.labels import audit_queue, bucket_tallies
from neardup.store import Store

STORE: Store
THRESHOLDS = {"minhash": [0.7, 0.75, 0.8, 0.85, 0.9], "simhash": [2, 3, 4, 5, 6]}


def audit_rerun(pairs, cfg: Config, labels) -> object:
    """What the Audit page recomputes after a label: the labeled pairs, the queue, the tallies."""
    matched = audit.labeled_pairs(pairs, labels)
    bucket_tallies(pairs["bucket"], matched)
    return audit_queue(pairs, matched, per_bucket=5, seed=7, skipped=set(), focus=cfg.threshold)


def label_key(pairs, cfg: Config, labels, matched, index, row: dict) -> object:
    """What an Audit label key computes before the next pair is drawn: the label put into the kept labels,
    the labeled pairs and tallies after it, the queue."""
    after = audit.labels_with(labels, row)
    key = (row["url_a"], row["md5_a"], row["url_b"], row["md5_b"])
    matched = audit.labeled_pairs_after(pairs, after, matched, key, index=index)
    bucket_tallies(pairs["bucket"], matched)
    return audit_queue(
        pairs, matched, per_bucket=5, seed=7, skipped=set(), focus=cfg.threshold, positions=index.exact
    )


def page_calls(fp: Fingerprints, cfg: Config, labels, pairs) -> dict:
    """What a page recomputes after a threshold move (`candidate_pairs` is cached per setting in the app)."""
    analysis = analyze(fp, cfg)
    first = audit_rerun(pairs, cfg, labels).iloc[0]
    a, b = int(first["page_a"]), int(first["page_b"])
    index = audit.pair_index(pairs)
    matched = audit.labeled_pairs(pairs, labels, index=index)
    row = {
        **{c: first[c] for c in audit.PAIR_KEY},
        **{"label": "duplicate", "category": None, "note": None, "labeler": None, "setting": None},
        "labeled_at": datetime.now(UTC).replace(tzinfo=None),
    }
    return {
        "analyze (Home, Explore, Clusters, Export)": lambda: analyze(fp, cfg),
        "labeled_pairs + audit_queue + bucket_tallies (Audit, per label)": lambda: audit_rerun(
            pairs, cfg, labels
        ),
        "label key before the draw: labels_with + labeled_pairs_after + tallies + queue (Audit)": lambda: (
            label_key(pairs, cfg, labels, matched, index, row)
        ),
        "label key after the draw: labels_version x2 (Audit; and the write)": lambda: [
            STORE.labels_version() for _ in range(2)
        ],
        "pair_detail (Audit, once per pair, prefetched)": lambda: audit.pair_detail(STORE, a, b, cfg),
        "Store.page x2, source=False (in pair_detail)": lambda: [
            STORE.page(p, cfg.norm_key, source=False) for p in (a, b)
        ],
        "tune_tables (Tune)": lambda: audit.tune_tables(fp, cfg, labels),
        "cluster_table (Clusters)": lambda: cluster_table(analysis.pages),
        "clusters_frame (Export preview)": lambda: clusters_frame(STORE, analysis),
        "clusters.csv (Export, on click only)": lambda: to_csv(clusters_frame(STORE, analysis)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--input")
    args = ap.parse_args()
    if args.input:
        Path(args.db).unlink(missing_ok=True)
    global STORE
    store = STORE = Store(args.db)
    if args.input:
        t = time.perf_counter()
        engine.ingest_file(store, args.input, Config())
        print(f"ingested {store.count_pages():,} pages in {time.perf_counter() - t:.0f} s")
    print(f"{store.count_pages():,} pages\n")
    print("| method | page function | median ms over 5 thresholds x 5 runs | median CPU ms |")
    print("|---|---|---:|---:|")
    for method in ("minhash", "simhash"):
        base = Config().with_method(method)
        t = time.perf_counter()
        fp = load_fingerprints(store, base)
        print(f"| {method} | (load_fingerprints, once per setting: {time.perf_counter() - t:.1f} s) | | |")
        labels = store.labels()
        t = time.perf_counter()
        pairs = audit.candidate_pairs(fp, base)
        print(f"| {method} | (candidate_pairs, once per setting: {time.perf_counter() - t:.1f} s) | | |")
        t = time.perf_counter()
        table = rules.url_table(fp.pages)
        print(f"| {method} | (rules.url_table, once per setting: {time.perf_counter() - t:.1f} s) | | |")
        t = time.perf_counter()
        rules.learn_rules(analyze(fp, base).pages, table=table)
        print(f"| {method} | (learn_rules, first threshold: {time.perf_counter() - t:.1f} s) | | |")
        rows: dict[str, list[tuple[float, float]]] = {}
        for threshold in THRESHOLDS[method]:
            cfg = base.replace(threshold=threshold)
            for name, fn in page_calls(fp, cfg, labels, pairs).items():
                rows.setdefault(name, []).append(median_ms(fn))
            # once per threshold: a repeat at the same threshold would find its rules measured
            pages = analyze(fp, cfg).pages
            rows.setdefault("learn_rules at a threshold move (URL rules; table kept)", []).append(
                median_ms(lambda pages=pages, table=table: rules.learn_rules(pages, table=table), repeat=1)
            )
        for name, values in rows.items():
            wall = statistics.median(w for w, _ in values)
            cpu = statistics.median(c for _, c in values)
            print(f"| {method} | {name} | {wall:,.1f} | {cpu:,.1f} |")


if __name__ == "__main__":
    main()
