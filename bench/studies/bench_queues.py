"""Labels needed until precision and recall at the threshold are known to +/-0.05: quota sampler vs active queue.

    python bench/studies/bench_queues.py [--input sample_data/crawl.jsonl.gz] [--truth sample_data/truth.csv]
                                 [--seeds 3] [--method minhash] [--similarity containment] [--threshold T]

Loads the crawl into a temporary database at the default setting and takes its candidate pairs; the labeler
is the ground truth (a pair is a duplicate when both pages belong to one true cluster and neither is
degenerate). Per seed, each sampler labels one pair at a time until `neardup.labels.decision_at` says stop
(both interval half-widths at most 0.05; intervals as that function documents them: Wilson 95% per bucket,
combined conservatively as the weighted sum of the bounds, an unlabeled bucket counting as [0, 1] and a fully
labeled one as its exact rate):
- quota: `audit_queue` as the Audit page's "quota per bucket" queue serves it, with *pairs per bucket* raised
  by one each time its queue runs empty (every bucket gets 1 label, then 2, ...; nearest the threshold first);
- active: `active_queue` (the bucket where one more label narrows the two intervals most).
Prints the labels each needed per seed, the medians and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from neardup import audit, engine
from neardup.analysis import Fingerprints, load_fingerprints
from neardup.config import Config, default_threshold
from neardup.evaluate import load_truth
from neardup.labels import active_queue, audit_queue, bucket_tallies, decision_at
from neardup.store import Store

ROOT = Path(__file__).resolve().parents[2]


def truth_labels(fp: Fingerprints, pairs: pd.DataFrame, truth: pd.DataFrame) -> np.ndarray:
    """'duplicate' / 'not' per candidate pair from the ground truth."""
    cluster = truth.set_index("line")["true_cluster"].where(
        ~truth.set_index("line")["kind"].str.startswith("degenerate")
    )
    by_page = fp.pages.set_index("page_id")["line"].map(cluster)
    a = by_page.reindex(pairs["page_a"]).to_numpy(dtype=object)
    b = by_page.reindex(pairs["page_b"]).to_numpy(dtype=object)
    same = np.array([x is not None and x == x and x == y for x, y in zip(a, b, strict=True)])
    return np.where(same, "duplicate", "not")


def run(
    pairs: pd.DataFrame, truth: np.ndarray, config: Config, *, seed: int, active: bool
) -> tuple[int, object]:
    """Labels until the stop rule holds (or every pair is labeled), and the last decision."""
    rows: list[int] = []
    per_bucket = 1
    keys = pairs[audit.PAIR_KEY]
    while True:
        labeled = (
            pairs.iloc[rows][[*audit.PAIR_KEY, "bucket"]].assign(label=truth[rows]).reset_index(drop=True)
        )
        tallies = bucket_tallies(pairs["bucket"], labeled)
        decision = decision_at(tallies, config, max_more=0)
        if decision.done or len(rows) == len(pairs):
            return len(rows), decision
        if active:
            queue = active_queue(pairs, labeled, tallies, config, seed=seed, skipped=set())
        else:
            queue = audit_queue(
                pairs, labeled, per_bucket=per_bucket, seed=seed, skipped=set(), focus=config.threshold
            )
            while queue.empty:
                per_bucket += 1
                queue = audit_queue(
                    pairs, labeled, per_bucket=per_bucket, seed=seed, skipped=set(), focus=config.threshold
                )
        if queue.empty:
            return len(rows), decision
        hit = (keys == queue.iloc[0][audit.PAIR_KEY]).all(axis=1).to_numpy()
        rows.append(int(np.flatnonzero(hit)[0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT / "sample_data" / "crawl.jsonl.gz"))
    ap.add_argument("--truth", default=str(ROOT / "sample_data" / "truth.csv"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--method", choices=["minhash", "simhash"], default=Config().method)
    ap.add_argument("--similarity", choices=["containment", "jaccard"], default=Config().similarity)
    ap.add_argument("--threshold", type=float, help="default: the method's default threshold")
    args = ap.parse_args()
    threshold = default_threshold(args.method) if args.threshold is None else args.threshold
    config = Config(
        method=args.method,
        similarity=args.similarity,
        threshold=int(threshold) if args.method == "simhash" else threshold,
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "q.duckdb")
        engine.ingest_file(store, args.input, config)
        fp = load_fingerprints(store, config)
        pairs = audit.candidate_pairs(fp, config)
        truth = truth_labels(fp, pairs, load_truth(args.truth))
        store.close()
    sizes = pairs["bucket"].value_counts().sort_index()
    print(
        f"{args.input}: {len(pairs):,} candidate pairs ({config.method}, {config.similarity}, threshold "
        f"{config.threshold:g}), {int((truth == 'duplicate').sum()):,} true duplicates; pairs per bucket: "
        + ", ".join(f"{b:g}: {n}" for b, n in sizes.items())
    )
    needed: dict[str, list[int]] = {"quota": [], "active": []}
    for seed in range(1, args.seeds + 1):
        for name in needed:
            t = time.perf_counter()
            n, d = run(pairs, truth, config, seed=seed, active=name == "active")
            needed[name].append(n)
            print(
                f"seed {seed} {name:>6}: {n:5d} labels -> precision {d.precision:.3f} [{d.precision_low:.3f}-"
                f"{d.precision_high:.3f}], recall {d.recall:.3f} [{d.recall_low:.3f}-{d.recall_high:.3f}] "
                f"({time.perf_counter() - t:.0f} s)",
                flush=True,
            )
    q, a = statistics.median(needed["quota"]), statistics.median(needed["active"])
    print(f"median labels to +/-0.05: quota {q:g}, active {a:g} (active / quota = {a / q:.2f})")


if __name__ == "__main__":
    main()
