"""Candidate search with and without reader comment threads in the main text: cost and recall per kind.

    python bench/studies/candidate_cost.py --input crawl.jsonl.gz --truth truth.csv --repeat 5

For each `comments` setting at otherwise default settings: ingest (texts and sketches are computed once, not
timed), then the candidate search (`candidates.minhash_pairs`: LSH banding and the estimate floor) and the
exact verification of its pairs (`engine.verify_exact`), each timed in CPU seconds of this process
(`time.process_time`, one job), median of `--repeat` runs, per page; then recall per kind, precision and
impure clusters against the truth. Prints Markdown.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))  # harness.py

from harness import cpu_median  # noqa: E402  (bench/harness.py)

from neardup import engine  # noqa: E402
from neardup.analysis import analyze, load_fingerprints  # noqa: E402
from neardup.candidates import minhash_pairs  # noqa: E402
from neardup.config import Config  # noqa: E402
from neardup.evaluate import load_truth, pairwise_scores, recall_per_kind  # noqa: E402
from neardup.store import Store  # noqa: E402

PARTIAL = ("print_version", "syndicated", "syndicated_partial")


def search(sigs: np.ndarray, n_shingles: np.ndarray, config: Config):
    """`candidates.minhash_pairs` at `config`'s settings, one job."""
    return minhash_pairs(
        sigs,
        n_shingles,
        similarity=config.similarity,
        floor=config.minhash_floor,
        min_size_ratio=config.min_size_ratio,
        seed=config.seed,
        min_shingles=config.min_contained_shingles,
        jobs=1,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT / "sample_data" / "crawl.jsonl.gz"))
    ap.add_argument("--truth", default=str(ROOT / "sample_data" / "truth.csv"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    truth = load_truth(args.truth)
    print(
        "| comments | pages | units | LSH candidates | after the estimate floor | stored pairs | candidate search CPU ms/page"
        " | exact verification CPU ms/page | "
        + " | ".join(PARTIAL)
        + " | other kinds min | precision | recall | impure | degenerate set aside |"
    )
    print("|---" * (13 + len(PARTIAL)) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for comments in (True, False):
            print(
                _row(Path(tmp) / f"c{int(comments)}.duckdb", args.input, truth, comments, args.repeat),
                flush=True,
            )


def _row(db: Path, path: str, truth, comments: bool, repeat: int) -> str:
    config = Config(comments=comments)
    store = Store(db)
    engine.ingest_file(store, path, config, jobs=1)
    fp = load_fingerprints(store, config, jobs=1)  # texts, sketches and pairs, not timed
    sigs, n_shingles = fp.minhash, fp.n_shingles.astype(np.int32)
    keys = store.units(config.fingerprint_key, with_signatures=False)["exact_key"].to_numpy()

    search_s, (a, b, _jac, _cont, stats) = cpu_median(lambda: search(sigs, n_shingles, config), repeat)
    verify_s, kept = cpu_median(
        lambda: engine.verify_exact(store, config, keys, n_shingles, a, b, stats, jobs=1), repeat
    )
    pages = analyze(fp, config).pages
    n_pages = store.count_pages()
    store.close()
    per_kind = recall_per_kind(pages, truth)
    s = pairwise_scores(pages, truth)
    others = min(r for kind, r in per_kind.items() if kind not in PARTIAL)
    return (
        f"| {str(comments).lower()} | {n_pages:,} | {len(sigs):,} | {stats.candidates:,} | {len(a):,} | "
        f"{len(kept[0]):,} | {1000 * search_s / n_pages:.3f} | {1000 * verify_s / n_pages:.3f} | "
        + " | ".join(f"{per_kind[k]:.3f}" for k in PARTIAL)
        + f" | {others:.3f} | {s.precision:.3f} | {s.recall:.3f} | {s.impure_clusters} | "
        f"{s.degenerate_caught}/{s.degenerate_total} |"
    )


if __name__ == "__main__":
    main()
