"""Containment size guard: the distributions that place it, and recall per kind at each setting.

    python bench/studies/size_guard.py --input crawl.jsonl.gz --truth truth.csv --floors 0,100,200,400

1. Every page's main text (the default extractor, 5-shingles) as an exact shingle set; the intersection
   of every two pages (a sparse product). For the true pairs (each variant with its original) of each
   kind: the smaller side's shingle count, the size ratio and the containment. For the pairs that must
   not match (two pages of different true clusters, degenerate pages included): how large the smaller
   side of a pair at containment >= 0.8 gets. A shingle floor below which no such pair lies keeps them
   out however the ratio falls; one above the smallest partial copy loses that copy.
2. Ingest, then recall per kind (`evaluate.recall_per_kind`) at the defaults with each floor
   (`min_contained_shingles`) and ratio, precision, impure clusters, stored pairs and LSH candidates. A
   copy the guard admits (part 1) but that stays unclustered was never an LSH candidate: the index is
   sized for the ratio (`candidates.lsh_threshold`), so it finds a pair far below it only by chance.
Prints Markdown.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from neardup import engine  # noqa: E402
from neardup.analysis import analyze, load_fingerprints  # noqa: E402
from neardup.config import Config  # noqa: E402
from neardup.evaluate import load_truth, pairwise_scores, recall_per_kind  # noqa: E402
from neardup.normalize import parse_configured  # noqa: E402
from neardup.shingles import shingle_set32_of, text_words  # noqa: E402
from neardup.store import Store  # noqa: E402

PARTIAL = ("print_version", "syndicated", "syndicated_partial")


def shingle_sets(path: str, config: Config) -> list[np.ndarray]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            html = json.loads(line)["html"]
            text = parse_configured(html, config).text
            out.append(shingle_set32_of(text_words(text)[1], config.shingle_size))
    return out


def all_intersections(sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, |S_i & S_j|) for every i < j sharing a shingle."""
    lens = np.array([len(s) for s in sets])
    values = np.concatenate(sets) if sets else np.empty(0, np.uint32)
    cols = np.unique(values, return_inverse=True)[1]
    m = sparse.csr_matrix(
        (np.ones(len(values), np.int32), cols, np.concatenate(([0], np.cumsum(lens)))),
        shape=(len(sets), int(cols.max()) + 1 if len(cols) else 0),
    )
    inter = sparse.triu(m @ m.T, k=1).tocoo()
    return inter.row.astype(np.int64), inter.col.astype(np.int64), inter.data.astype(np.int64)


def pct(x: np.ndarray, qs=(0, 10, 50, 90, 100)) -> str:
    return " / ".join(f"{v:.3g}" for v in np.percentile(x, qs)) if len(x) else "-"


def distributions(sets: list[np.ndarray], truth: pd.DataFrame) -> None:
    lens = np.array([len(s) for s in sets], dtype=np.int64)
    i, j, inter = all_intersections(sets)
    small, large = np.minimum(lens[i], lens[j]), np.maximum(lens[i], lens[j])
    cont = inter / np.maximum(small, 1)
    cluster, kind = truth["true_cluster"].to_numpy(), truth["kind"].to_numpy()
    deg = np.char.startswith(kind.astype(str), "degenerate")
    same = (cluster[i] == cluster[j]) & ~deg[i] & ~deg[j]
    lookup = pd.Series(cont, index=pd.MultiIndex.from_arrays([i, j]))

    print("## True pairs (variant, original): smaller side's shingles, size ratio, containment\n")
    print(
        "| kind | pairs | smaller shingles min / p10 / p50 / p90 / max | ratio min / p10 / p50 / p90 / max | "
        "containment min / p10 / p50 / p90 / max | ratio < 0.5 |"
    )
    print("|---|---:|---|---|---|---:|")
    first = (
        pd.Series(np.arange(len(truth)), index=truth.index).groupby(truth["true_cluster"]).transform("min")
    )
    for k in sorted(set(kind) - {"original"}):
        if k.startswith("degenerate"):
            continue
        v = np.flatnonzero(kind == k)
        o = first.to_numpy()[v]
        a, b = np.minimum(v, o), np.maximum(v, o)
        c = np.array([lookup.get((x, y), 0.0) for x, y in zip(a, b, strict=True)])
        sm, lg = np.minimum(lens[a], lens[b]), np.maximum(lens[a], lens[b])
        ratio = sm / np.maximum(lg, 1)
        print(f"| {k} | {len(v)} | {pct(sm)} | {pct(ratio)} | {pct(c)} | {int((ratio < 0.5).sum())} |")

    print("\n## Pairs that must not match, by containment: the smaller side's shingles\n")
    print(
        "| pairs | containment | count | smaller shingles max | p99 | largest with ratio < 0.5 | "
        "with a degenerate page | smaller shingles max among content pages |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for lo in (0.7, 0.8, 0.9):
        sel = ~same & (cont >= lo)
        below = sel & (small < 0.5 * large)
        content = sel & ~deg[i] & ~deg[j]
        print(
            f"| different true clusters | >= {lo} | {int(sel.sum())} | {int(small[sel].max()) if sel.any() else '-'} "
            f"| {int(np.percentile(small[sel], 99)) if sel.any() else '-'} | "
            f"{int(small[below].max()) if below.any() else '-'} | {int((sel & (deg[i] | deg[j])).sum())} | "
            f"{int(small[content].max()) if content.any() else '-'} |"
        )
    top = np.flatnonzero(~same & (cont >= 0.8))
    top = top[np.argsort(-small[top])][:8]
    print("\nLargest such pairs (smaller shingles, larger, containment, kinds, lines):\n")
    for t in top:
        print(
            f"- {small[t]} / {large[t]}, {cont[t]:.3f}, {kind[i[t]]} + {kind[j[t]]}, lines {i[t] + 1} + {j[t] + 1}"
        )


def scores_at(store: Store, truth: pd.DataFrame, config: Config) -> tuple[dict[str, float], object, int, int]:
    """Recall per kind, pairwise scores, stored pairs and LSH candidates at `config`."""
    fp = load_fingerprints(store, config, jobs=1)
    pages = analyze(fp, config).pages
    return (
        recall_per_kind(pages, truth),
        pairwise_scores(pages, truth),
        len(fp.pairs["a"]),
        fp.stats.candidates,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT / "sample_data" / "crawl.jsonl.gz"))
    ap.add_argument("--truth", default=str(ROOT / "sample_data" / "truth.csv"))
    ap.add_argument("--floors", default="0,100,200,300,400,600")
    ap.add_argument("--ratios", default="0.5")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--skip-distributions", action="store_true")
    args = ap.parse_args()
    truth = load_truth(args.truth)
    if not args.skip_distributions:
        t0 = time.perf_counter()
        distributions(shingle_sets(args.input, Config()), truth)
        print(f"\n({time.perf_counter() - t0:.0f} s)\n")
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "g.duckdb")
        engine.ingest_file(store, args.input, Config(), jobs=args.jobs)
        rows = []
        for ratio in (float(x) for x in args.ratios.split(",")):
            for floor in (int(x) for x in args.floors.split(",")):
                cfg = Config(min_size_ratio=ratio, min_contained_shingles=floor)
                rows.append((ratio, floor, *scores_at(store, truth, cfg)))
        kinds = sorted(rows[0][2])
        print("## Recall per kind (variant with its original in one cluster) at the defaults\n")
        print(
            "| ratio | floor | " + " | ".join(kinds) + " | precision | recall | impure | content set aside | "
            "stored pairs | LSH candidates |"
        )
        print("|---:|---:|" + "---:|" * (len(kinds) + 6))
        for ratio, floor, per_kind, s, n_pairs, n_candidates in rows:
            print(
                f"| {ratio} | {floor} | "
                + " | ".join(f"{per_kind[k]:.3f}" for k in kinds)
                + f" | {s.precision:.3f} | {s.recall:.3f} | {s.impure_clusters} | {s.content_set_aside} | "
                f"{n_pairs:,} | {n_candidates:,} |",
                flush=True,
            )
        store.close()


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - t0:.0f} s)")
