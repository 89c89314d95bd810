"""Degenerate pages against a crawl's ground truth: recall per kind of scrape failure, and the quality floors.

    python bench/degenerate_recall.py --input crawl.jsonl.gz --truth truth.csv [--input ... --truth ...]

For each crawl, at the default setting: pairwise precision and recall, clusters merging two true documents,
then per truth kind starting with `degenerate_` (soft-404, access denied, loading, consent, and on
`make_sample.py --profile realsize` / `realtail` crawls paywall and login walls) the share set aside (recall)
and the reasons given to them, and the content pages set aside by a degenerate rule (with their reasons).
Prints Markdown.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neardup import engine  # noqa: E402
from neardup.analysis import analyze, load_fingerprints  # noqa: E402
from neardup.config import Config  # noqa: E402
from neardup.evaluate import load_truth, pairwise_scores  # noqa: E402
from neardup.store import Store  # noqa: E402


def measure(path: str, truth_path: str, jobs: int | None) -> None:
    config = Config()
    truth = load_truth(truth_path)
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "d.duckdb") as store:
        t0 = time.perf_counter()
        engine.ingest_file(store, path, config, jobs=jobs)
        pages = analyze(load_fingerprints(store, config, jobs=jobs), config).pages
        seconds = time.perf_counter() - t0
    s = pairwise_scores(pages, truth)
    df = pages[["line", "cluster_id", "degenerate"]].merge(truth[["line", "kind"]], on="line")
    print(f"\n{path}: {len(df):,} pages ({seconds:.0f} s)\n")
    print(
        f"precision {s.precision:.3f}, recall {s.recall:.3f}, impure clusters {s.impure_clusters}, "
        f"degenerate in clusters {s.degenerate_in_clusters}, degenerate set aside "
        f"{s.degenerate_caught}/{s.degenerate_total}, content set aside {s.content_set_aside}\n"
    )
    print("| truth kind | pages | set aside | recall | reasons given |")
    print("|---|---:|---:|---:|---|")
    for kind in sorted(k for k in set(df["kind"]) if k.startswith("degenerate")):
        sel = df[df["kind"] == kind]
        aside = sel["degenerate"].notna()
        reasons = Counter(
            r.split(" ")[0] if r.startswith("status") else r for r in sel["degenerate"].dropna()
        )
        given = ", ".join(f"{r} {n}" for r, n in reasons.most_common())
        print(f"| {kind} | {len(sel)} | {int(aside.sum())} | {aside.mean():.3f} | {given} |")
    content = df[~df["kind"].str.startswith("degenerate") & df["degenerate"].notna()]
    if len(content):
        shown = ", ".join(f"{k}: {r}" for k, r in zip(content["kind"], content["degenerate"], strict=True))
        print(f"\ncontent pages set aside: {len(content)} ({shown})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--truth", action="append", default=[])
    ap.add_argument("--jobs", type=int)
    args = ap.parse_args()
    inputs = args.input or [str(ROOT / "sample_data" / "crawl.jsonl.gz")]
    truths = args.truth or [str(ROOT / "sample_data" / "truth.csv")]
    if len(inputs) != len(truths):
        ap.error("one --truth per --input")
    for path, truth in zip(inputs, truths, strict=True):
        measure(path, truth, args.jobs)


if __name__ == "__main__":
    main()
