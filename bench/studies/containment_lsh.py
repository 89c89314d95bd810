"""Partial copies the MinHash index misses, and a size-partitioned candidate pass for them (LSH Ensemble).

    python bench/studies/containment_lsh.py --input crawl.jsonl.gz --truth truth.csv --lowest-ratios 0.25,0.125

At the default settings (one job): ingest, fingerprints, then for every partial copy (print, syndicated and
cut-short syndicated) not clustered with its original, why: never an LSH candidate (no band equal), a
candidate whose estimate failed the floor or the size guard, or stored but below the threshold. Then
`candidates.minhash_pairs` alone against `minhash_pairs` + `candidates.containment_lsh_pairs` at each lowest
ratio: candidate search CPU (median of --repeat, `time.process_time`), candidates, stored pairs after exact
verification, recall per kind, precision, impure clusters. Prints Markdown.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from neardup import analysis, engine  # noqa: E402
from neardup.candidates import (  # noqa: E402
    containment_lsh_pairs,
    lsh_params,
    lsh_threshold,
    size_guard,
)
from neardup.config import Config  # noqa: E402
from neardup.evaluate import load_truth, pairwise_scores, recall_per_kind  # noqa: E402
from neardup.shingles import shingle_set32_of, text_words  # noqa: E402
from neardup.store import Store  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from candidate_cost import PARTIAL, search  # noqa: E402
from harness import cpu_median  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT / "sample_data" / "crawl.jsonl.gz"))
    ap.add_argument("--truth", default=str(ROOT / "sample_data" / "truth.csv"))
    ap.add_argument("--lowest-ratios", default="0.25,0.125")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    truth = load_truth(args.truth)
    config = Config()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "c.duckdb")
        engine.ingest_file(store, args.input, config, jobs=1)
        fp = analysis.load_fingerprints(store, config, jobs=1)
        sigs, n_sh = fp.minhash, fp.n_shingles.astype(np.int32)
        assert sigs is not None
        keys = store.units(config.fingerprint_key, with_signatures=False)["exact_key"].to_numpy()
        n_pages = store.count_pages()
        print(f"{args.input}: {n_pages:,} pages, {len(sigs):,} units\n")
        base = analyze_misses(store, fp, truth, config)

        base_s, (a, b, _, _, stats) = cpu_median(lambda: search(sigs, n_sh, config), args.repeat)
        rows = [("index alone", base_s, stats.candidates, a, b)]
        for lowest in (float(x) for x in args.lowest_ratios.split(",")):

            def extra(lowest: float = lowest) -> Any:
                return containment_lsh_pairs(
                    sigs,
                    n_sh,
                    floor=config.minhash_floor,
                    min_size_ratio=config.min_size_ratio,
                    min_shingles=config.min_contained_shingles,
                    lowest_ratio=lowest,
                )

            extra_s, (ea, eb, _, _, estats) = cpu_median(extra, args.repeat)
            codes = np.unique(np.concatenate((a * len(sigs) + b, ea * len(sigs) + eb)))
            rows.append(
                (
                    f"+ size classes down to ratio {lowest} ({'; '.join(estats.notes)})",
                    base_s + extra_s,
                    stats.candidates + estats.candidates,
                    codes // len(sigs),
                    codes % len(sigs),
                )
            )
        print(
            "| candidate search | CPU ms/page | x index alone | LSH candidates | after the estimate floor | stored "
            "pairs | " + " | ".join(PARTIAL) + " | other kinds min | precision | recall | impure |"
        )
        print("|---|" + "---:|" * (9 + len(PARTIAL)))
        for label, cpu_s, n_cand, pa_, pb_ in rows:
            ka, kb, kj, kc = engine.verify_exact(store, config, keys, n_sh, pa_, pb_, stats, jobs=1)
            pairs = {
                "a": ka.astype(np.int32),
                "b": kb.astype(np.int32),
                "jaccard": kj,
                "containment": kc,
                "hamming_bits": np.full(len(ka), -1, np.int16),
            }
            pages = analysis.analyze(dataclasses.replace(fp, pairs=pairs), config).pages
            per_kind = recall_per_kind(pages, truth)
            s = pairwise_scores(pages, truth)
            others = min(r for k, r in per_kind.items() if k not in PARTIAL)
            print(
                f"| {label} | {1000 * cpu_s / n_pages:.3f} | {cpu_s / base_s:.2f} | {n_cand:,} | {len(pa_):,} | "
                f"{len(ka):,} | "
                + " | ".join(f"{per_kind.get(k, float('nan')):.3f}" for k in PARTIAL)
                + f" | "
                f"{others:.3f} | {s.precision:.3f} | {s.recall:.3f} | {s.impure_clusters} |",
                flush=True,
            )
        del base
        store.close()


def analyze_misses(store: Store, fp: analysis.Fingerprints, truth: Any, config: Config) -> None:
    """Print each partial copy that is not clustered with its original, and why."""
    pages = analysis.analyze(fp, config).pages.merge(truth[["line", "true_cluster", "kind"]], on="line")
    first = pages.sort_values("line").groupby("true_cluster").first()
    bands, rows = lsh_params(
        lsh_threshold(config.minhash_floor, config.similarity, config.min_size_ratio), config.num_perm
    )
    sigs = fp.minhash
    assert sigs is not None
    print(f"Partial copies not clustered with their original (index: {bands} x {rows}):\n")
    print(
        "| kind | line | shingles copy / original | ratio | Jaccard | containment | band equal | estimate "
        "containment | guard | stored |"
    )
    print("|---|---:|---|---:|---:|---:|---|---:|---|---|")
    stored = set(zip(fp.pairs["a"].tolist(), fp.pairs["b"].tolist(), strict=True))
    counts: dict[str, int] = {}
    for row in pages[pages["kind"].isin(PARTIAL)].itertuples():
        orig = first.loc[row.true_cluster]
        if row.cluster_id == orig["cluster_id"] and row.cluster_id == row.cluster_id:
            continue
        u, v = int(row.unit_id), int(orig["unit_id"])
        if u < 0 or v < 0:
            print(f"| {row.kind} | {row.line} | set aside | | | | | | | |")
            continue
        sets = [
            shingle_set32_of(
                text_words(store.page(int(pid), config.norm_key)["text"])[1], config.shingle_size
            )
            for pid in (row.page_id, orig["page_id"])
        ]
        inter = len(np.intersect1d(sets[0], sets[1]))
        sa, sb = len(sets[0]), len(sets[1])
        band_eq = any(
            np.array_equal(sigs[u, k * rows : (k + 1) * rows], sigs[v, k * rows : (k + 1) * rows])
            for k in range(bands)
        )
        est_j = float(np.mean(sigs[u] == sigs[v]))
        est_c = est_j * (sa + sb) / (1 + est_j) / min(sa, sb)
        guard = bool(
            size_guard(np.array([sa]), np.array([sb]), config.min_size_ratio, config.min_contained_shingles)[
                0
            ]
        )
        is_stored = (min(u, v), max(u, v)) in stored
        why = "no band equal" if not band_eq else ("stored" if is_stored else "estimate or guard")
        counts[why] = counts.get(why, 0) + 1
        print(
            f"| {row.kind} | {row.line} | {sa} / {sb} | {min(sa, sb) / max(sa, sb):.3f} | {inter / (sa + sb - inter):.3f} | "
            f"{inter / min(sa, sb):.3f} | {'yes' if band_eq else 'no'} | {est_c:.3f} | {'passes' if guard else 'fails'} "
            f"| {'yes' if is_stored else 'no'} |"
        )
    print(f"\nMisses by cause: {counts}\n")


if __name__ == "__main__":
    main()
