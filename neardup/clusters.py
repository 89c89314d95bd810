"""Connected components and representatives."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Component label per node 0..n-1 for the undirected edges (a[i], b[i]) (labels are 0..k-1)."""
    if n == 0:
        return np.empty(0, dtype=np.int64)
    graph = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64)


def pick_representatives(pages: pd.DataFrame, cluster_col: str = "cluster_id") -> pd.DataFrame:
    """Representative per cluster, with the reason.

    Rule: a member named by another member's rel=canonical; else the earliest `fetched_at`; else the
    shortest canonical URL (then the lowest page id, so the choice is deterministic).
    Needs columns page_id, canonical_url, rel_canonical, fetched_at and `cluster_col`.
    Returns a frame indexed by cluster id: representative page_id, its URL, and `why`.
    """
    df = pages[[cluster_col, "page_id", "canonical_url", "rel_canonical", "fetched_at"]].copy()
    named = df.dropna(subset=["rel_canonical"])
    named = named[named["rel_canonical"] != named["canonical_url"]]
    targets = set(zip(named[cluster_col], named["rel_canonical"], strict=True))
    df["is_named"] = [(c, u) in targets for c, u in zip(df[cluster_col], df["canonical_url"], strict=True)]
    df["has_time"] = df["fetched_at"].notna()
    df["url_len"] = df["canonical_url"].str.len()
    df = df.sort_values(
        [cluster_col, "is_named", "has_time", "fetched_at", "url_len", "page_id"],
        ascending=[True, False, False, True, True, True],
        na_position="last",
    )
    first = df.groupby(cluster_col, sort=False).head(1).set_index(cluster_col)
    multi_time = df.groupby(cluster_col)["fetched_at"].nunique() > 1
    why = np.where(
        first["is_named"], "named by rel=canonical",
        np.where(first["has_time"] & multi_time.reindex(first.index).fillna(False).to_numpy(),
                 "earliest fetch", "shortest URL"),
    )
    return pd.DataFrame(
        {"representative_id": first["page_id"], "representative_url": first["canonical_url"], "why": why},
        index=first.index,
    )
