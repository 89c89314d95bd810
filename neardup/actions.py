"""What to do about each duplicate cluster: its category (from the analyst's labels, else suggested from
its URLs) and the action the audit's decision table gives for that category.

Decision table: URL variants are the frontier's fault (drop them and canonicalize those URLs); a stale
re-crawl keeps its newest fetch; regional mirrors are one product in several markets (keep both, tag
them as one); templated siblings are different pages whose template outweighs their content (keep both,
tighten normalization); a degenerate page is a scrape failure, not a duplicate.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .labels import CATEGORIES

ACTIONS: dict[str, str] = {
    "URL variant": "drop the variants; fix the frontier (canonicalize these URLs)",
    "noise re-fetch": "drop the re-fetches; the content did not change",
    "stale re-crawl": "keep the newest fetch",
    "print version": "keep the article; drop the print copy (or exclude print URLs from the frontier)",
    "regional mirror": "keep both; tag them as one product",
    "syndicated": "keep the original; drop or attribute the copies",
    "templated siblings": "keep both; tighten normalization (the template outweighs the content)",
    "degenerate": "a scrape failure, not a duplicate: re-fetch",
    "other": "review the cluster",
}
UNIQUE_ACTION = "keep"  # a cluster of one page


# A market as a host's first label: a country or language code (`uk.`, `de.`), or language-region (`en-gb.`).
_MARKET_LABEL = re.compile(r"^[a-z]{2}(-[a-z]{2})?\.(?=.+\.)")


def site_name(host: str) -> str:
    """A host without its mobile / www / market prefix and its last label: `m.shop.example.de` and
    `uk.shop.example.com` -> `shop.example`. Hosts that differ only there are one site in several markets
    (no public-suffix list: `example.co.uk` and `example.de` count as different sites)."""
    for prefix in ("www.", "m."):
        host = host.removeprefix(prefix)
    host = _MARKET_LABEL.sub("", host, count=1)
    return host.rsplit(".", 1)[0] if "." in host else host


def _distinct_per_cluster(cluster: np.ndarray, values: pd.Series | np.ndarray, n_clusters: int) -> np.ndarray:
    """How many distinct `values` (or their integer codes) each cluster id 0..n_clusters-1 holds."""
    codes = (values if isinstance(values, np.ndarray) else pd.factorize(values)[0]).astype(np.int64)
    width = int(codes.max(initial=0)) + 1
    keys = np.sort(cluster * width + codes)  # sorted, not np.unique: its hash path is slower on wide keys
    distinct = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if len(keys) else keys
    return np.bincount(distinct // width, minlength=n_clusters)


def suggest_categories(pages: pd.DataFrame) -> pd.Series:
    """A category per duplicate cluster (2+ pages) from its URLs and texts, indexed by cluster id. Rules,
    in order: several hosts -> "regional mirror" if they are one site name (`site_name`), else
    "syndicated"; one canonical URL -> "URL variant" if the loaded URLs differ, else a re-fetch of one
    URL: "noise re-fetch" if every fetch has the same text, "stale re-crawl" if not; several canonical
    URLs on one host -> "URL variant" if they all hold the same text, else "templated siblings".

    Needs columns cluster_id, cluster_size, url, canonical_url, host and unit_id (`analysis.analyze`)."""
    multi = pages[pages["cluster_size"].fillna(0).to_numpy() > 1]
    cluster = multi["cluster_id"].to_numpy(dtype=np.int64)
    ids = np.flatnonzero(np.bincount(cluster)) if len(cluster) else cluster
    if not len(ids):
        return pd.Series([], dtype=object, index=pd.Index([], name="cluster_id"), name="category")
    host_codes, hosts = pd.factorize(multi["host"])
    site_codes = pd.factorize(pd.Index(hosts).map(site_name))[0][host_codes]
    k = int(ids.max()) + 1
    hosts_n, sites_n = (_distinct_per_cluster(cluster, v, k)[ids] for v in (host_codes, site_codes))
    canonical, urls, texts = (
        _distinct_per_cluster(cluster, multi[c], k)[ids] for c in ("canonical_url", "url", "unit_id")
    )
    category = np.select(
        [
            (hosts_n > 1) & (sites_n == 1),
            hosts_n > 1,
            (canonical == 1) & (urls > 1),
            (canonical == 1) & (texts == 1),
            canonical == 1,
            texts == 1,
        ],
        ["regional mirror", "syndicated", "URL variant", "noise re-fetch", "stale re-crawl", "URL variant"],
        default="templated siblings",
    )
    return pd.Series(category.astype(object), index=pd.Index(ids, name="cluster_id"), name="category")


def labeled_categories(pages: pd.DataFrame, labels: pd.DataFrame) -> pd.Series:
    """A category per cluster from the labels whose two sides are pages of that cluster: the most
    frequent category among them, the most recent label breaking a tie. A side is (canonical URL, MD5);
    a label without MD5s ("") matches any page at those URLs (`Store.labels`)."""
    empty = pd.Series([], dtype=object, index=pd.Index([], name="cluster_id"), name="category")
    if labels.empty or "category" not in labels:
        return empty
    lab = labels[labels["category"].isin(CATEGORIES)].reset_index(drop=True)
    clustered = pages.loc[
        pages["cluster_id"].notna(), ["canonical_url", "md5", "cluster_id"]
    ].drop_duplicates()
    if lab.empty or clustered.empty:
        return empty
    sides = []
    for url_col, md5_col in (("url_a", "md5_a"), ("url_b", "md5_b")):
        side = pd.DataFrame(
            {
                "label": lab.index,
                "canonical_url": lab[url_col].to_numpy(),
                "md5": lab[md5_col].fillna("").to_numpy(),
                "side": url_col,
            }
        )
        exact = side[side["md5"] != ""].merge(clustered, on=["canonical_url", "md5"])
        loose = (
            side[side["md5"] == ""]
            .drop(columns="md5")
            .merge(clustered.drop(columns="md5"), on="canonical_url")
        )
        sides.append(
            pd.concat([exact[["label", "side", "cluster_id"]], loose[["label", "side", "cluster_id"]]])
        )
    both = pd.concat(sides).drop_duplicates()
    in_one = both.groupby(["label", "cluster_id"])["side"].nunique()
    hits = in_one[in_one == 2].reset_index()[["label", "cluster_id"]]
    if hits.empty:
        return empty
    hits = hits.assign(
        category=lab["category"].to_numpy()[hits["label"]],
        labeled_at=pd.to_datetime(lab["labeled_at"]).to_numpy()[hits["label"]],
    )
    tally = (
        hits.groupby(["cluster_id", "category"])
        .agg(n=("label", "size"), last=("labeled_at", "max"))
        .reset_index()
    )
    best = tally.sort_values(["cluster_id", "n", "last"], ascending=[True, False, False]).drop_duplicates(
        "cluster_id"
    )
    return pd.Series(
        best["category"].to_numpy(),
        index=pd.Index(best["cluster_id"].to_numpy(), name="cluster_id"),
        name="category",
    )


def cluster_actions(pages: pd.DataFrame, labels: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per page: `category` and `category_from` ("label" or "URLs") of its cluster, and `suggested_action`
    (categorical columns). A unique page (a cluster of one) gets no category and the action "keep"; a
    degenerate page the category "degenerate" whatever its labels say (it has no cluster)."""
    names = ["", *CATEGORIES]
    code_of = {name: i for i, name in enumerate(names)}
    cluster = pages["cluster_id"].fillna(0).to_numpy(dtype=np.int64)  # 0: no cluster (degenerate)
    k = int(cluster.max(initial=0)) + 1
    category = np.zeros(k, dtype=np.int8)
    source = np.zeros(k, dtype=np.int8)
    for found, source_code in (
        (suggest_categories(pages), 1),
        (labeled_categories(pages, labels) if labels is not None else None, 2),
    ):
        if found is not None and len(found):
            at = found.index.to_numpy(dtype=np.int64)
            category[at] = found.map(code_of).to_numpy(dtype=np.int8)
            source[at] = source_code
    category[0], source[0] = code_of["degenerate"], 0
    page_category = category[cluster]
    return pd.DataFrame(
        {
            "category": pd.Categorical.from_codes(page_category, names),
            "category_from": pd.Categorical.from_codes(source[cluster], ["", "URLs", "label"]),
            "suggested_action": pd.Categorical.from_codes(
                page_category, [UNIQUE_ACTION, *map(ACTIONS.get, CATEGORIES)]
            ),
        },
        index=pages.index,
    )
