"""Drill-down: the duplicate clusters and pairs of one host, and the Clusters table filtered by host,
category, size and URL text."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .config import Config


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterFilter:
    """Which duplicate clusters to list: a cluster passes when it has a page on `host` (None: any), its
    category is one of `categories` (empty: any), it holds `min_size` to `max_size` pages (None: no
    limit), and a member's URL as fetched or canonical contains `url_text` (case-insensitive; "": any)."""

    host: str | None = None
    categories: tuple[str, ...] = ()
    min_size: int | None = None
    max_size: int | None = None
    url_text: str = ""

    @property
    def active(self) -> bool:
        return self != ClusterFilter()


def filter_clusters(
    clusters: pd.DataFrame, pages: pd.DataFrame, flt: ClusterFilter, categories: pd.Series | None = None
) -> pd.DataFrame:
    """The rows of `clusters` (a table with `cluster_id` and `size`, e.g. `audit.cluster_table`) that pass
    `flt`. The category is the table's `category` column where it has one, else `categories` (by cluster
    id). `pages` are the analysis' pages (cluster_id, host, url, canonical_url)."""
    keep = np.ones(len(clusters), dtype=bool)
    ids = clusters["cluster_id"].to_numpy()
    members = pages[pages["cluster_size"].fillna(0) > 1]
    if flt.host is not None:
        keep &= np.isin(ids, members.loc[members["host"] == flt.host, "cluster_id"].to_numpy())
    if flt.url_text:
        needle = flt.url_text.casefold()
        hit = members["url"].str.casefold().str.contains(needle, regex=False) | members[
            "canonical_url"
        ].str.casefold().str.contains(needle, regex=False)
        keep &= np.isin(ids, members.loc[hit.fillna(False).to_numpy(dtype=bool), "cluster_id"].to_numpy())
    if flt.min_size is not None:
        keep &= clusters["size"].to_numpy() >= flt.min_size
    if flt.max_size is not None:
        keep &= clusters["size"].to_numpy() <= flt.max_size
    if flt.categories:
        if "category" in clusters:
            category = clusters["category"].astype(str).to_numpy()
        elif categories is not None:
            category = categories.reindex(ids).astype(str).to_numpy()
        else:
            raise ValueError("filter_clusters() needs the clusters' categories to filter by category")
        keep &= np.isin(category, list(flt.categories))
    return clusters[keep].reset_index(drop=True)


def host_pairs(pairs: pd.DataFrame, pages: pd.DataFrame, host: str, config: Config) -> pd.DataFrame:
    """The candidate pairs at the threshold (`audit.candidate_pairs`) with a text that a page of `host`
    holds, closest first."""
    units = pages.loc[(pages["host"] == host) & (pages["unit_id"] >= 0), "unit_id"].unique()
    score = pairs["score"].to_numpy()
    at = score <= config.threshold if config.method == "simhash" else score >= config.threshold
    on_host = pairs["unit_a"].isin(units).to_numpy() | pairs["unit_b"].isin(units).to_numpy()
    out = pairs[at & on_host]
    return out.sort_values("score", ascending=config.method == "simhash", kind="stable").reset_index(
        drop=True
    )
