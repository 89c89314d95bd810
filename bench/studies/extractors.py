#!/usr/bin/env python3
"""The main-content extractors side by side, on one core: cost per page and how alike their texts are.

    .venv/bin/python bench/studies/extractors.py                 # 3,000 pages of the cached 10k crawl
    .venv/bin/python bench/studies/extractors.py --pages 6000 --input crawl.jsonl.gz

Times, best of 3 passes over the same pages (CPU time of this process):
  - neardup's extractor (`neardup._html`, resiliparse's rules in C over lexbor), main and strip;
  - resiliparse's `extract_plain_text(main_content=True)` with its parse, as `extractor: resiliparse` runs it;
and compares neardup's main text with resiliparse's: identical pages, and the 5-shingle Jaccard per page.
Which extractor scores better against ground truth is bench/quality.py's question (bench/QUALITY.md).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import sys
import time
from itertools import islice
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402  (bench/harness.py: crawl cache, process-tree monitor, machine line)

from neardup.config import DEFAULT_STRIP_TAGS  # noqa: E402
from neardup.ingest import detect_format, read_raw  # noqa: E402
from neardup.normalize import parse_page  # noqa: E402
from neardup.records import validate  # noqa: E402
from neardup.shingles import shingles, words  # noqa: E402


def best_of(n: int, f) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def jaccard(a: str, b: str, k: int = 5) -> float:
    x, y = set(shingles(words(a), k)), set(shingles(words(b), k))
    return len(x & y) / len(x | y) if x | y else 1.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", help="a crawl dump (default: the cached 10k bench crawl)")
    ap.add_argument("--pages", type=int, default=3000)
    args = ap.parse_args()
    path = Path(args.input) if args.input else harness.ensure_crawl(10_000, 42)[0]
    fmt = detect_format(path)
    recs = [r for r in map(validate, islice(read_raw(path, fmt), args.pages)) if isinstance(r, dict)]
    htmls = [r["html"] for r in recs if r.get("html")]
    n = len(htmls)
    kb = sum(map(len, htmls)) / n / 1024
    print(
        f"{path.name}: {n:,} pages, {kb:.1f} KB of HTML on average; resiliparse "
        f"{importlib.metadata.version('resiliparse')}; CPU ms per page, best of 3\n"
    )
    runs = {
        "neardup, main": lambda: [parse_page(h, mode="main") for h in htmls],
        "neardup, strip": lambda: [parse_page(h, mode="strip", strip_tags=DEFAULT_STRIP_TAGS) for h in htmls],
        "resiliparse, main": lambda: [parse_page(h, mode="main", extractor="resiliparse") for h in htmls],
    }
    cost = {name: best_of(3, f) / n * 1e3 for name, f in runs.items()}
    for name, ms in cost.items():
        print(f"  {name:20s} {ms:.3f} ms/page")
    print(f"\n  resiliparse / neardup (main): {cost['resiliparse, main'] / cost['neardup, main']:.1f}x")
    ours = [parse_page(h, mode="main") for h in htmls]
    theirs = [parse_page(h, mode="main", extractor="resiliparse") for h in htmls]
    same = sum(a.text == b.text for a, b in zip(ours, theirs, strict=True))
    titles = sum(a.title == b.title for a, b in zip(ours, theirs, strict=True))
    js = sorted(jaccard(a.text, b.text) for a, b in zip(ours, theirs, strict=True))
    q = statistics.quantiles(js, n=100)
    print(f"  main text identical on {same:,} of {n:,} pages; titles identical on {titles:,}")
    print(
        f"  5-shingle Jaccard, neardup vs resiliparse: p1 {q[0]:.3f}, p10 {q[9]:.3f}, median {statistics.median(js):.3f}"
    )


if __name__ == "__main__":
    main()
