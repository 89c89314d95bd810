"""Drill-down: the Clusters table (one row a duplicate cluster, each cluster's pages by one sort), filtered by
host, category, size and URL text; the duplicate clusters and pairs of one host."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

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


TABLE_COLUMNS = ["cluster_id", "size", "representative_url", "why", "hosts"]


@dataclass(frozen=True, slots=True, eq=False)
class ClusterTable:
    """The duplicate clusters (2+ pages) of an analysis' pages frame and where their pages are in it.

    `rows`: one row a cluster, largest first (then by id): `cluster_id`, `size`, `representative_url`,
    `why`, `hosts` (distinct hosts of its pages) and, made with the pages' categories, `category`.
    `member_rows`: the positions in the pages frame of every page of a duplicate cluster, by cluster id
    then position; cluster `ids[i]`'s are `member_rows[starts[i]:starts[i + 1]]`. `member_hosts`: each of
    those pages' host, as its index into `hosts` (-1: none). `hosts`, `categories`: the hosts with a
    page in a duplicate cluster and the clusters' categories, sorted (the filters' choices)."""

    rows: pd.DataFrame
    ids: np.ndarray
    starts: np.ndarray
    member_rows: np.ndarray
    member_hosts: np.ndarray
    hosts: list[str]
    categories: list[str]

    def members_of(self, cluster_id: int) -> np.ndarray:
        """The positions in the pages frame of cluster `cluster_id`'s pages (none for an id not in the table)."""
        i = int(np.searchsorted(self.ids, cluster_id))
        if i == len(self.ids) or self.ids[i] != cluster_id:
            return self.member_rows[:0]
        return self.member_rows[self.starts[i] : self.starts[i + 1]]

    def pages_of(self, pages: pd.DataFrame, cluster_id: int) -> pd.DataFrame:
        """The rows of `pages` (the frame the table was made of) of cluster `cluster_id`."""
        return take_rows(pages, self.members_of(cluster_id))

    def clusters_with(self, member: np.ndarray) -> np.ndarray:
        """The ids of the clusters with a page where `member` (a mask over `member_rows`)."""
        if not len(self.ids):
            return self.ids
        return self.ids[np.logical_or.reduceat(member, self.starts[:-1])]


def take_values(values: Any, rows: np.ndarray) -> Any:
    """`values.take(rows)` (a column's array), an Arrow-backed one taken from the chunks that hold `rows`:
    Arrow's take from a column of several chunks joins them first, a copy of the whole column."""
    rows = np.asarray(rows, dtype=np.int64)
    chunked = values.__arrow_array__() if hasattr(values, "__arrow_array__") else None
    if not isinstance(chunked, pa.ChunkedArray) or chunked.num_chunks < 2:
        return values.take(rows)
    ends = np.cumsum([len(chunk) for chunk in chunked.chunks])
    chunk_of = np.searchsorted(ends, rows, side="right")
    ascending = bool((rows[1:] >= rows[:-1]).all())  # the rows are in their chunks' order already
    order = np.arange(len(rows)) if ascending else np.argsort(chunk_of, kind="stable")
    by_chunk, chunk_by = rows[order], chunk_of[order]
    bounds = np.searchsorted(chunk_by, np.arange(chunked.num_chunks + 1))
    pieces = [
        chunked.chunk(i).take(pa.array(by_chunk[lo:hi] - (ends[i] - len(chunked.chunk(i)))))
        for i, (lo, hi) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
        if hi > lo
    ]
    taken = pa.concat_arrays(pieces) if pieces else chunked.chunk(0).slice(0, 0)
    return pd.array(taken if ascending else taken.take(pa.array(np.argsort(order))), dtype=values.dtype)


def take_rows(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """`frame.take(rows)`, each column by `take_values`."""
    columns = {name: take_values(column.array, rows) for name, column in frame.items()}
    return pd.DataFrame(columns, index=frame.index.take(rows), columns=frame.columns)


def cluster_table(pages: pd.DataFrame, categories: pd.DataFrame | None = None) -> ClusterTable:
    """The duplicate clusters of `pages` (an analysis' pages: cluster_id, cluster_size, host,
    representative_url, why) with, given `categories` (`categories.page_categories` of these pages), each
    cluster's `category`. One sort of the clustered pages by cluster id; a cluster's representative URL,
    reason and category are its first page's (every page of a cluster carries the same)."""
    columns = TABLE_COLUMNS if categories is None else [*TABLE_COLUMNS, "category"]
    cluster = pages["cluster_id"].to_numpy(dtype=np.int64, na_value=0)
    clustered = np.flatnonzero(pages["cluster_size"].to_numpy(dtype=np.int64, na_value=0) > 1)
    by_cluster = np.argsort(cluster[clustered], kind="stable")
    member_rows = clustered[by_cluster]
    sorted_ids = cluster[member_rows]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]]) if len(sorted_ids) else clustered
    ids, bounds = sorted_ids[starts], np.append(starts, len(member_rows))
    sizes = np.diff(bounds)
    # the hosts taken in the pages' order (one pass over the chunks), then put in the members' order
    codes, hosts = pd.factorize(take_values(pages["host"].array, clustered), sort=True)
    member_hosts = np.asarray(codes, dtype=np.int64)[by_cluster]
    # distinct (cluster, host) of the pages with a host, by one sort: each counts once for its cluster
    has_host = member_hosts >= 0
    pairs = np.sort(
        np.repeat(np.arange(len(ids)), sizes)[has_host] * max(len(hosts), 1) + member_hosts[has_host]
    )
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if len(pairs) else pairs
    n_hosts = np.bincount(pairs // max(len(hosts), 1), minlength=len(ids)).astype(np.int64)
    order = np.lexsort((ids, -sizes))  # largest first, then by id
    first = member_rows[starts[order]]  # each row's first page
    data: dict[str, Any] = {
        "cluster_id": pd.array(ids[order], dtype="Int64"),
        "size": sizes[order],
        "representative_url": take_values(pages["representative_url"].array, first),
        "why": take_values(pages["why"].array, first),
        "hosts": n_hosts[order],
    }
    cluster_categories: list[str] = []
    if categories is not None:
        category = categories["cluster_category"].loc[pages.index[first]].array
        data["category"] = category
        # the distinct ones first (a categorical column's are its codes'), then as text
        cluster_categories = sorted({str(c) for c in pd.unique(category) if not pd.isna(c)})
    rows = pd.DataFrame(data, columns=columns) if len(ids) else pd.DataFrame(columns=columns)
    return ClusterTable(
        rows=rows,
        ids=ids,
        starts=bounds,
        member_rows=member_rows,
        member_hosts=member_hosts,
        hosts=[str(h) for h in hosts],
        categories=cluster_categories,
    )


def filter_clusters(
    table: ClusterTable, pages: pd.DataFrame, flt: ClusterFilter, categories: pd.Series | None = None
) -> pd.DataFrame:
    """The rows of `table.rows` that pass `flt`. The category is the rows' `category` column where they have
    one, else `categories` (by cluster id). `pages` are the pages frame the table was made of (url,
    canonical_url): only the URL text filter reads them, for the clusters' pages alone."""
    clusters = table.rows
    if not flt.active:
        return clusters
    keep = np.ones(len(clusters), dtype=bool)
    ids = clusters["cluster_id"].to_numpy(dtype=np.int64, na_value=0)
    if flt.host is not None:
        code = table.hosts.index(flt.host) if flt.host in table.hosts else -2
        keep &= np.isin(ids, table.clusters_with(table.member_hosts == code))
    if flt.url_text:
        needle = flt.url_text.casefold()
        hit = np.zeros(len(table.member_rows), dtype=bool)
        for column in ("url", "canonical_url"):
            urls = pd.Series(take_values(pages[column].array, table.member_rows))
            hit |= urls.str.casefold().str.contains(needle, regex=False).fillna(False).to_numpy(dtype=bool)
        keep &= np.isin(ids, table.clusters_with(hit))
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
