"""Quality grid: pairwise precision / recall / F1 of each setting against a crawl's ground truth.

    python bench/quality.py                                   # the bundled sample
    python bench/quality.py --input crawl.jsonl.gz --truth truth.csv

Used to choose the defaults (README, "How the defaults were chosen"); prints a Markdown table.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from neardup import engine
from neardup.analysis import analyze, load_fingerprints
from neardup.config import Config
from neardup.evaluate import load_truth, pairwise_scores
from neardup.store import Store

ROOT = Path(__file__).resolve().parent.parent
GRID = {
    ("simhash", "jaccard"): [2, 3, 4, 5, 6, 8],
    ("minhash", "jaccard"): [0.5, 0.6, 0.7, 0.8, 0.9],
    ("minhash", "containment"): [0.7, 0.75, 0.8, 0.85, 0.9],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT / "sample_data" / "crawl.jsonl.gz"))
    ap.add_argument("--truth", default=str(ROOT / "sample_data" / "truth.csv"))
    ap.add_argument("--shingle-sizes", default="3,5,7")
    ap.add_argument("--jobs", type=int)
    ap.add_argument(
        "--normalizations",
        default="strip,main:neardup,main:resiliparse",
        help="strip, main:neardup (the default extractor), main:resiliparse",
    )
    args = ap.parse_args()
    truth = load_truth(args.truth)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "q.duckdb")
        engine.ingest_file(store, args.input, Config(normalize="strip"), jobs=args.jobs)
        print(f"{args.input}: {store.count_pages():,} pages\n")
        print(
            "| normalize | method | similarity | k | threshold | precision | recall | F1 | impure clusters | degenerate merged | degenerate set aside |"
        )
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        normalizations = [_normalization(n) for n in args.normalizations.split(",")]
        for norm in normalizations:
            for k in (int(x) for x in args.shingle_sizes.split(",")):
                for (method, similarity), thresholds in GRID.items():
                    base = norm.replace(
                        method=method,
                        similarity=similarity,
                        shingle_size=k,
                        threshold=thresholds[0],
                        min_words=max(30, k),
                    )
                    fp = load_fingerprints(store, base, jobs=args.jobs)
                    for t in thresholds:
                        cfg = base.replace(threshold=t)
                        s = pairwise_scores(analyze(fp, cfg).pages, truth)
                        sim = similarity if method == "minhash" else "hamming"
                        print(
                            f"| {norm.normalization} | {method} | {sim} | {k} | {t} | {s.precision:.3f} | {s.recall:.3f} | "
                            f"{s.f1:.3f} | {s.impure_clusters} | {s.degenerate_in_clusters} | "
                            f"{s.degenerate_caught}/{s.degenerate_total} |",
                            flush=True,
                        )
        # Word counts of main text: where the degenerate cut-off sits.
        for norm in normalizations:
            pages = store.page_table(norm.norm_key)
            merged = pages.merge(truth[["line", "kind"]], on="line")
            deg = merged["kind"].str.startswith("degenerate")
            q = np.percentile(merged.loc[~deg, "n_words"], [0, 1, 5]).round().astype(int).tolist()
            print(
                f"\n{norm.normalization}: content pages' words min/p1/p5 = {q}; degenerate pages' words max = "
                f"{int(merged.loc[deg, 'n_words'].max())}"
            )
        store.close()


def _normalization(name: str) -> Config:
    """`strip`, `main:neardup` or `main:resiliparse` as the default Config with that normalization."""
    normalize, _, extractor = name.partition(":")
    return Config(normalize=normalize, extractor=extractor or "neardup")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - t0:.0f} s)")
