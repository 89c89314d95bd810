"""Pairwise precision / recall of a clustering against a ground-truth file.

Ground truth: a CSV `url,true_cluster,kind` with one row per record in record order (row i is line
i of the dump), as written by `scripts/make_sample.py` and `make_crawl.py`. Records whose kind starts
with `degenerate` should be set aside: each is its own true cluster, so clustering one with anything
counts as false positives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import numpy as np
import pandas as pd


class ScoresDict(TypedDict):
    """`Scores` as JSON: its fields by name."""

    precision: float
    recall: float
    f1: float
    true_pairs: int
    predicted_pairs: int
    correct_pairs: int
    impure_clusters: int
    degenerate_in_clusters: int
    degenerate_caught: int
    degenerate_total: int
    content_set_aside: int


@dataclass(frozen=True, slots=True)
class Scores:
    precision: float
    recall: float
    f1: float
    true_pairs: int
    predicted_pairs: int
    correct_pairs: int
    impure_clusters: int  # predicted clusters that merge two or more true clusters
    degenerate_in_clusters: int  # true degenerate pages inside a predicted duplicate cluster
    degenerate_caught: int  # true degenerate pages set aside
    degenerate_total: int
    content_set_aside: int  # true content pages set aside as degenerate (a rule too eager)

    def as_dict(self) -> ScoresDict:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "true_pairs": self.true_pairs,
            "predicted_pairs": self.predicted_pairs,
            "correct_pairs": self.correct_pairs,
            "impure_clusters": self.impure_clusters,
            "degenerate_in_clusters": self.degenerate_in_clusters,
            "degenerate_caught": self.degenerate_caught,
            "degenerate_total": self.degenerate_total,
            "content_set_aside": self.content_set_aside,
        }


def _pairs(counts: pd.Series) -> int:
    c = counts.to_numpy(dtype=np.int64)
    return int((c * (c - 1) // 2).sum())


def load_truth(path: str | Path) -> pd.DataFrame:
    truth = pd.read_csv(path, dtype=str)
    truth["line"] = np.arange(1, len(truth) + 1)
    return truth


def pairwise_scores(pages: pd.DataFrame, truth: pd.DataFrame) -> Scores:
    """`pages`: one row per loaded record with `line` and `cluster_id` (NA for set-aside pages)."""
    df = pages[["line", "cluster_id"]].merge(truth[["line", "true_cluster", "kind"]], on="line", how="inner")
    is_deg = df["kind"].str.startswith("degenerate")
    df.loc[is_deg, "true_cluster"] = "deg:" + df.loc[is_deg, "line"].astype(str)
    true_all = truth.loc[~truth["kind"].str.startswith("degenerate")]
    true_pairs = _pairs(true_all.groupby("true_cluster").size())
    clustered = df[df["cluster_id"].notna()]
    predicted = _pairs(clustered.groupby("cluster_id").size())
    correct = _pairs(clustered.groupby(["cluster_id", "true_cluster"]).size())
    purity = clustered.groupby("cluster_id")["true_cluster"].nunique()
    sizes = clustered.groupby("cluster_id").size()
    deg_in = clustered[clustered["kind"].str.startswith("degenerate")]
    deg_in_dups = int((deg_in["cluster_id"].map(sizes) > 1).sum())
    p = correct / predicted if predicted else 1.0
    r = correct / true_pairs if true_pairs else 1.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return Scores(
        precision=p,
        recall=r,
        f1=f1,
        true_pairs=true_pairs,
        predicted_pairs=predicted,
        correct_pairs=correct,
        impure_clusters=int((purity > 1).sum()),
        degenerate_in_clusters=deg_in_dups,
        degenerate_caught=int((is_deg & df["cluster_id"].isna()).sum()),
        degenerate_total=int(is_deg.sum()),
        content_set_aside=int((~is_deg & df["cluster_id"].isna()).sum()),
    )


def recall_per_kind(pages: pd.DataFrame, truth: pd.DataFrame) -> dict[str, float]:
    """Per duplicate kind: the share of its records clustered with their document's first record (the
    original). `pages` as for `pairwise_scores`; degenerate kinds and `original` are not listed."""
    cluster = pages.set_index("line")["cluster_id"]
    first = truth.groupby("true_cluster")["line"].transform("min").to_numpy()
    out = {}
    for kind in sorted(set(truth["kind"]) - {"original"}):
        if kind.startswith("degenerate"):
            continue
        sel = (truth["kind"] == kind).to_numpy()
        a = cluster.reindex(truth["line"].to_numpy()[sel]).to_numpy()
        b = cluster.reindex(first[sel]).to_numpy()
        out[kind] = float(np.mean(pd.notna(a) & pd.notna(b) & (a == b)))
    return out
