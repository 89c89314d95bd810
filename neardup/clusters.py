"""Connected components and representatives, on integer arrays (fast enough to re-run per slider move)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .config import DEFAULT_REPRESENTATIVE

# Why a page represents its cluster: the first criterion of the rule that applies (index into WHY).
WHY = np.array(
    ["named by rel=canonical", "earliest fetch", "shortest URL", "newest fetch", "lowest page id"],
    dtype=object,
)
_WHY_OF = {"canonical": 0, "earliest": 1, "shortest": 2, "newest": 3}


_RULE_TEXT = {
    "canonical": "the member named by rel=canonical",
    "earliest": "the earliest fetch",
    "newest": "the newest fetch",
    "shortest": "the shortest URL",
}


def describe_rule(rule: Sequence[str] = DEFAULT_REPRESENTATIVE) -> str:
    """The representative rule in words: "the member named by rel=canonical, else the earliest fetch, ..."."""
    return ", else ".join(_RULE_TEXT[c] for c in rule) + ", else the first page loaded"


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Component label per node 0..n-1 for the undirected edges (a[i], b[i]) (labels are 0..k-1)."""
    if n == 0:
        return np.empty(0, dtype=np.int64)
    graph = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64)


def representative_rows(
    cluster: np.ndarray,
    url_id: np.ndarray,
    rel_id: np.ndarray,
    fetched_ns: np.ndarray,
    url_len: np.ndarray,
    page_id: np.ndarray,
    rule: Sequence[str] = DEFAULT_REPRESENTATIVE,
) -> tuple[np.ndarray, np.ndarray]:
    """Row index of each cluster's representative, and why it was chosen (index into WHY).

    `rule` orders the criteria (`Config.representative`): `canonical`, a member named by another
    member's rel=canonical (`rel_id`, in the same id space as `url_id`, -1 for none); `earliest` /
    `newest`, the first / last known fetch (`fetched_ns`, -1 for unknown: after every known time);
    `shortest`, the shortest canonical URL; then the lowest page id. The reason is the first criterion
    of the rule that applies to the cluster: canonical when the chosen page is named, a fetch time when
    the cluster has two or more distinct known times, shortest URL otherwise (or the lowest page id when
    the rule has no `shortest`). Returned in order of cluster value.
    """
    cluster = np.asarray(cluster, dtype=np.int64)
    if len(cluster) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    width = int(max(url_id.max(initial=0), rel_id.max(initial=0))) + 1
    names_other = (rel_id >= 0) & (rel_id != url_id)
    named_codes = np.unique(cluster[names_other] * width + rel_id[names_other])
    is_named = np.isin(cluster * width + url_id, named_codes)
    has_time = fetched_ns >= 0
    keys = {  # per criterion, sort keys (most significant first) that put the preferred page first
        "canonical": [~is_named],
        "earliest": [~has_time, np.where(has_time, fetched_ns, np.iinfo(np.int64).max)],
        "newest": [~has_time, np.where(has_time, -fetched_ns, np.iinfo(np.int64).max)],
        "shortest": [url_len],
    }
    significant = [cluster, *(k for criterion in rule for k in keys[criterion]), page_id]
    order = np.lexsort(significant[::-1])
    first = order[np.concatenate(([True], cluster[order][1:] != cluster[order][:-1]))]
    # A fetch time only decides when the cluster has two or more distinct known fetch times.
    timed_cluster, timed_ns = cluster[has_time], fetched_ns[has_time]
    by_time = np.lexsort((timed_ns, timed_cluster))
    timed_cluster, timed_ns = timed_cluster[by_time], timed_ns[by_time]
    distinct = np.ones(len(timed_cluster), dtype=bool)
    distinct[1:] = (timed_cluster[1:] != timed_cluster[:-1]) | (timed_ns[1:] != timed_ns[:-1])
    timed = timed_cluster[distinct]  # a cluster once per distinct known fetch time, ascending
    clusters_sorted = cluster[first]
    n_times = np.searchsorted(timed, clusters_sorted, "right") - np.searchsorted(
        timed, clusters_sorted, "left"
    )
    applies = {
        "canonical": is_named[first],
        "earliest": has_time[first] & (n_times > 1),
        "shortest": np.ones(len(first), dtype=bool),
    }
    applies["newest"] = applies["earliest"]
    why = np.full(len(first), 4)
    for criterion in reversed(rule):
        why = np.where(applies[criterion], _WHY_OF[criterion], why)
    return first, why


@dataclass(frozen=True, slots=True)
class RepresentativeRanks:
    """The part of `representative_rows`' order that no clustering changes, per page: the rule's criteria
    before `canonical` as a dense rank (`before`, equal criteria equal rank) and those after it, then the
    page id, as a rank of its own (`after`, a permutation of 0..n-1). `named` (per clustering) sits between
    them, so one integer per page, `before * 2n + (not named) * n + after`, orders a cluster's pages as
    the rule does: no sort of six keys per clustering. Made by `representative_ranks`."""

    rule: tuple[str, ...]
    before: np.ndarray
    after: np.ndarray


def _criterion_keys(criterion: str, fetched_ns: np.ndarray, url_len: np.ndarray) -> list[np.ndarray]:
    """Sort keys (most significant first) of a criterion that put the preferred page first; `canonical`,
    which depends on the clustering, has none here."""
    has_time = fetched_ns >= 0
    never = np.iinfo(np.int64).max  # an unknown time after every known one: one key, not two
    return {
        "canonical": [],
        "earliest": [np.where(has_time, fetched_ns, never)],
        "newest": [np.where(has_time, -fetched_ns, never)],
        "shortest": [url_len],
    }[criterion]


def representative_ranks(
    fetched_ns: np.ndarray,
    url_len: np.ndarray,
    page_id: np.ndarray,
    rule: Sequence[str] = DEFAULT_REPRESENTATIVE,
) -> RepresentativeRanks:
    """`RepresentativeRanks` of pages (arguments as `representative_rows`'), once per set of pages and rule."""
    rule = tuple(rule)
    cut = rule.index("canonical") if "canonical" in rule else 0
    n = len(page_id)
    before_keys = [k for c in rule[:cut] for k in _criterion_keys(c, fetched_ns, url_len)]
    after_keys = [k for c in rule[cut:] for k in _criterion_keys(c, fetched_ns, url_len)] + [page_id]
    before = np.zeros(n, dtype=np.int64)
    if before_keys and n:
        order = np.lexsort(before_keys[::-1])
        differs = np.zeros(n, dtype=bool)
        for key in before_keys:
            differs[1:] |= key[order][1:] != key[order][:-1]
        before[order] = np.cumsum(differs)
    after = np.empty(n, dtype=np.int64)
    after[np.lexsort(after_keys[::-1])] = np.arange(n)
    return RepresentativeRanks(rule, before, after)


def cluster_representatives(
    cluster: np.ndarray,
    n_ids: int,
    url_id: np.ndarray,
    rel_id: np.ndarray,
    fetched_ns: np.ndarray,
    ranks: RepresentativeRanks,
) -> tuple[np.ndarray, np.ndarray]:
    """`representative_rows` by cluster id: (row of each cluster's representative, -1 for an id with no
    row; why it was chosen, index into WHY, -1 for none), for cluster ids 0..n_ids-1 and the rows' arrays
    (`ranks` of the same rows). The same choice and reason: the pages of a cluster compared by one integer
    (`RepresentativeRanks`), the fetch-time condition by the earliest and latest known time."""
    cluster = np.asarray(cluster, dtype=np.int64)
    n = len(cluster)
    rep = np.full(n_ids, -1, dtype=np.int64)
    why = np.full(n_ids, -1, dtype=np.int64)
    if n == 0:
        return rep, why
    width = int(max(url_id.max(initial=0), rel_id.max(initial=0))) + 1
    names_other = (rel_id >= 0) & (rel_id != url_id)
    named_codes = np.unique(cluster[names_other] * width + rel_id[names_other])
    is_named = np.isin(cluster * width + url_id, named_codes) if len(named_codes) else np.zeros(n, dtype=bool)
    key = ranks.after
    if "canonical" in ranks.rule:
        span = int(ranks.after.max()) + 1
        key = ranks.before * (2 * span) + (~is_named) * span + ranks.after
    best = np.full(n_ids, np.iinfo(np.int64).max)
    np.minimum.at(best, cluster, key)
    rows = np.flatnonzero(key == best[cluster])  # one a cluster: keys are distinct
    rep[cluster[rows]] = rows
    # A fetch time only decides when the cluster has two or more distinct known fetch times.
    has_time = fetched_ns >= 0
    earliest = np.full(n_ids, np.iinfo(np.int64).max)
    latest = np.full(n_ids, -1, dtype=np.int64)
    np.minimum.at(earliest, cluster[has_time], fetched_ns[has_time])
    np.maximum.at(latest, cluster[has_time], fetched_ns[has_time])
    timed = has_time[rows] & (earliest[cluster[rows]] < latest[cluster[rows]])
    applies = {
        "canonical": is_named[rows],
        "earliest": timed,
        "newest": timed,
        "shortest": np.ones(len(rows), bool),
    }
    reason = np.full(len(rows), 4)
    for criterion in reversed(ranks.rule):
        reason = np.where(applies[criterion], _WHY_OF[criterion], reason)
    why[cluster[rows]] = reason
    return rep, why


def pick_representatives(
    pages: pd.DataFrame, cluster_col: str = "cluster_id", rule: Sequence[str] = DEFAULT_REPRESENTATIVE
) -> pd.DataFrame:
    """Representative per cluster under `rule`, with the reason (see `representative_rows`).

    Needs columns page_id, canonical_url, rel_canonical, fetched_at and `cluster_col`.
    Returns a frame indexed by cluster id: representative page_id, its URL, and `why`.
    """
    n = len(pages)
    codes, _ = pd.factorize(pd.concat([pages["canonical_url"], pages["rel_canonical"]], ignore_index=True))
    fetched = pd.to_datetime(pages["fetched_at"])
    fetched_ns = np.where(fetched.isna(), -1, fetched.to_numpy(dtype="datetime64[ns]").astype(np.int64))
    first, why = representative_rows(
        pages[cluster_col].to_numpy(dtype=np.int64),
        codes[:n],
        codes[n:],
        fetched_ns,
        pages["canonical_url"].str.len().to_numpy(dtype=np.int64),
        pages["page_id"].to_numpy(dtype=np.int64),
        rule,
    )
    return pd.DataFrame(
        {
            "representative_id": pages["page_id"].to_numpy()[first],
            "representative_url": pages["canonical_url"].to_numpy()[first],
            "why": WHY[why],
        },
        index=pd.Index(pages[cluster_col].to_numpy()[first], name=cluster_col),
    )
