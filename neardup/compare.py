"""Crawl over crawl: the numbers of a baseline and a current crawl side by side, per host, the duplicate
clusters that are new, gone or grown, and the pages of the current crawl that duplicate a baseline page.

Within one database the two crawls are sources, clustered together at the setting: a current page
duplicates a baseline page when they share a cluster. Each source's own analysis at a setting is kept in
the database (`source_summary`), so comparing a new crawl with a large one reads the large one's stored
clusters and the pairs of the new crawl's texts, not its pages, units and pairs. Across two database files only the exact texts can
be matched (each file holds its own sketches): there a current page duplicates a baseline page when their
words are the same, and two clusters are one when they share a text.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from .analysis import (
    Analysis,
    Clustering,
    Fingerprints,
    ReportNumbers,
    analyze,
    cluster_at_threshold,
    duplicate_pairs,
    load_fingerprints,
    number_clusters,
    pairs_at_threshold,
    report_numbers,
    subset_fingerprints,
)
from .clusters import components
from .config import Config
from .errors import NeardupError
from .escapes import escape_controls
from .store import Store, is_database_file

NUMBERS = ("total_pages", "exact_duplicates", "near_duplicates", "unique_pages", "redundant_pct")
CHANGES = ("new", "gone", "grown", "shrunk", "same")


class ComparisonDict(TypedDict):
    """A `Comparison` as JSON (`Comparison.as_dict`): its tables as lists of rows, the changed clusters and
    repeats up to `top` of each."""

    baseline: str
    current: str
    matched_by: str
    numbers: list[dict[Hashable, Any]]
    clusters: dict[str, int]  # clusters by change (`CHANGES`)
    current_pages_duplicating_baseline: int
    hosts: list[dict[Hashable, Any]]
    changed_clusters: list[dict[Hashable, Any]]
    repeats: list[dict[Hashable, Any]]


@dataclass(slots=True)
class Comparison:
    baseline: str
    current: str
    numbers: pd.DataFrame  # metric, baseline, current, change
    hosts: pd.DataFrame  # host, pages and redundant % on each side
    clusters: (
        pd.DataFrame
    )  # one row per duplicate cluster on either side: baseline_pages, current_pages, change
    repeats: pd.DataFrame  # current pages that duplicate a baseline page, with that page
    matched_by: str  # "cluster" (one database) or "exact text" (two files)

    def counts(self) -> dict[str, int]:
        found = self.clusters["change"].value_counts()
        return {c: int(found.get(c, 0)) for c in CHANGES}

    def as_dict(self, *, top: int = 20) -> ComparisonDict:
        return {
            "baseline": self.baseline,
            "current": self.current,
            "matched_by": self.matched_by,
            "numbers": self.numbers.to_dict(orient="records"),
            "clusters": self.counts(),
            "current_pages_duplicating_baseline": len(self.repeats),
            "hosts": self.hosts.to_dict(orient="records"),
            "changed_clusters": self.clusters[self.clusters["change"] != "same"]
            .head(top)
            .to_dict(orient="records"),
            "repeats": self.repeats.head(top).to_dict(orient="records"),
        }


def resolve_source(sources: pd.DataFrame, name: str) -> int:
    """The source id a name means: its id, its path or the file name of its path."""
    if name.isdigit() and int(name) in set(sources["source_id"]):
        return int(name)
    hits = sources[(sources["path"] == name) | (sources["path"].map(lambda p: Path(p).name) == name)]
    if len(hits) == 1:
        return int(hits["source_id"].iloc[0])
    known = ", ".join(f"{r.source_id} ({Path(r.path).name})" for r in sources.itertuples()) or "none"
    what = "names several sources" if len(hits) else "is no source"
    raise NeardupError(f"{name!r} {what} of this database; name one by id or file name: {known}")


@dataclass(slots=True)
class SourceSummary:
    """A source's own numbers and hosts at a setting, as `analyze` of its pages alone gives them."""

    numbers: ReportNumbers
    hosts: pd.DataFrame  # host, pages, redundant, redundant_pct


# What a side of a comparison is read from: its numbers and hosts.
Side = Analysis | Clustering | SourceSummary


def _side_numbers(base: Side, cur: Side) -> pd.DataFrame:
    rows = [(k, base.numbers[k], cur.numbers[k]) for k in NUMBERS]
    df = pd.DataFrame(rows, columns=["metric", "baseline", "current"])
    df["change"] = (df["current"] - df["baseline"]).round(2)
    return df


def _side_hosts(base: Side, cur: Side) -> pd.DataFrame:
    cols = ["host", "pages", "redundant", "redundant_pct"]
    hosts = base.hosts[cols].merge(
        cur.hosts[cols], on="host", how="outer", suffixes=("_baseline", "_current")
    )
    for c in ("pages", "redundant"):
        for side in ("baseline", "current"):
            hosts[f"{c}_{side}"] = hosts[f"{c}_{side}"].fillna(0).astype(np.int64)
    hosts["redundant_pct_change"] = (
        hosts["redundant_pct_current"].fillna(0) - hosts["redundant_pct_baseline"].fillna(0)
    ).round(1)
    return hosts.sort_values(
        ["redundant_current", "pages_current"], ascending=False, kind="stable"
    ).reset_index(drop=True)


def _changes(pages: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cluster changes and repeats from pages with side ("baseline" / "current"), group (the joint cluster),
    page_id, url and exact_key."""
    content = pages[pages["group"].notna()]
    # Pages per group and side (a crosstab, counted with bincount: pandas' crosstab runs Python per group).
    codes, groups = pd.factorize(content["group"], sort=True)
    on_base = (content["side"] == "baseline").to_numpy()
    b = np.bincount(codes[on_base], minlength=len(groups))
    c = np.bincount(codes[~on_base], minlength=len(groups))
    example = content.sort_values("page_id").groupby("group")["url"].first()
    listed = (b >= 2) | (c >= 2)
    groups = np.asarray(groups, dtype=np.int64)[listed]
    clusters = _cluster_changes(groups, b[listed], c[listed], example.reindex(groups).to_numpy())

    first_base = (
        content[content["side"] == "baseline"]
        .sort_values("page_id")
        .groupby("group")[["page_id", "url", "exact_key"]]
        .first()
        .add_prefix("baseline_")
    )
    repeats = _repeats(content[content["side"] == "current"], first_base)
    return clusters, repeats


def _repeats(current: pd.DataFrame, first_base: pd.DataFrame) -> pd.DataFrame:
    """`Comparison.repeats`: the current content pages (page_id, url, exact_key, group) in a group with a
    baseline page, with the group's first baseline page (`first_base`, by group: baseline_page_id,
    baseline_url, baseline_exact_key)."""
    repeats = current.join(first_base, on="group", how="inner")
    repeats = repeats.assign(same_text=repeats["exact_key"] == repeats["baseline_exact_key"])
    return repeats[["page_id", "url", "baseline_page_id", "baseline_url", "same_text"]].reset_index(drop=True)


def _cluster_changes(
    cluster: np.ndarray, baseline_pages: np.ndarray, current_pages: np.ndarray, example_url: np.ndarray
) -> pd.DataFrame:
    """`Comparison.clusters` of the joint clusters with two or more pages on a side, in cluster id order:
    their pages on each side and the URL of their first page."""
    b, c = baseline_pages, current_pages
    change = np.select(
        [(c >= 2) & (b < 2), (b >= 2) & (c < 2), (b >= 2) & (c > b), (b >= 2) & (c < b)],
        ["new", "gone", "grown", "shrunk"],
        "same",
    )
    clusters = pd.DataFrame({"cluster": cluster, "baseline_pages": b, "current_pages": c})
    clusters["change"] = change
    clusters["example_url"] = example_url
    order = {k: i for i, k in enumerate(CHANGES)}
    return clusters.sort_values(
        ["change", "current_pages"], key=lambda s: s.map(order) if s.name == "change" else -s, kind="stable"
    ).reset_index(drop=True)


def compare_sources(
    fp: Fingerprints, config: Config, baseline: int, current: int, names: tuple[str, str]
) -> Comparison:
    """Two sources of one database, clustered together at `config`'s setting, as if they were all the
    database holds: each side's numbers are its own, and texts join only through pages of the two.
    `fp` may hold other sources too (the same result as `load_fingerprints` of the two alone). The three
    clusterings are of `fp`'s arrays (`subset_fingerprints` without pages); of its pages frame only the
    two sources' content pages' URLs and texts are read (a crawl of a source per shard has hundreds of
    small sources in a frame of millions of rows)."""
    src = fp.pages["source_id"].to_numpy()
    on_base, on_cur = src == baseline, src == current
    base = cluster_at_threshold(subset_fingerprints(fp, np.flatnonzero(on_base), with_pages=False), config)
    cur = cluster_at_threshold(subset_fingerprints(fp, np.flatnonzero(on_cur), with_pages=False), config)
    rows = np.flatnonzero(on_base | on_cur)
    joint = subset_fingerprints(fp, rows, with_pages=False)
    cluster = number_clusters(joint, pairs_at_threshold(joint, config)).cluster
    content = rows[cluster > 0]  # cluster 0: a degenerate page
    pages = pd.DataFrame(
        {
            "page_id": fp.arrays["page_id"][content],
            "url": fp.pages["url"].array.take(content),
            "exact_key": fp.pages["exact_key"].array.take(content),
            "side": np.where(on_base[content], "baseline", "current"),
            "group": cluster[cluster > 0],
        }
    )
    clusters, repeats = _changes(pages)
    return Comparison(*names, _side_numbers(base, cur), _side_hosts(base, cur), clusters, repeats, "cluster")


def analysis_key(config: Config) -> str:
    """Names the setting a source's own analysis is stored under: its fingerprint key and what clustering
    and the per-host numbers depend on besides (the threshold, the representative rule, the URL rules)."""
    return json.dumps(
        {
            "fingerprint_key": config.fingerprint_key,
            "threshold": config.threshold,
            "representative": list(config.representative),
            "url_rules": [r.as_dict() for r in config.url_rules],
        },
        sort_keys=True,
    )


def _own_fingerprints(store: Store, config: Config, source_id: int, *, jobs: int | None) -> Fingerprints:
    """The fingerprints of one source's pages as if they were all there is (`subset_fingerprints`: the
    pairs of two units of its content pages), with the stored unit ids."""
    fp = load_fingerprints(store, config, jobs=jobs, source_ids=[source_id])
    return subset_fingerprints(fp, np.ones(len(fp.pages), dtype=bool))


def _store_summary(store: Store, config: Config, source_id: int, fp: Fingerprints, own: Analysis) -> None:
    """Keep a source's own analysis (`own`, of `fp`, its fingerprints alone) in the store."""
    assert fp.unit_ids is not None
    pages = own.pages
    content = pages["cluster_id"].notna().to_numpy()
    cluster = pages["cluster_id"].to_numpy(dtype=np.int64, na_value=0)[content]
    page_id = fp.arrays["page_id"][content]
    order = np.lexsort((page_id, cluster))
    ids, first = np.unique(cluster[order], return_index=True)
    rows = np.flatnonzero(content)[order[first]]
    clusters = pd.DataFrame(
        {
            "cluster_id": ids,
            "pages": np.bincount(cluster)[ids],
            "first_page_id": fp.arrays["page_id"][rows],
            "first_url": pages["url"].to_numpy()[rows],
            "first_exact_key": pages["exact_key"].to_numpy()[rows],
        }
    )
    units, first_of_unit = np.unique(fp.arrays["unit"][content], return_index=True)
    store.save_source_analysis(
        source_id,
        analysis_key(config),
        fingerprint_key=config.fingerprint_key,
        numbers=own.numbers.as_dict(),
        hosts=own.hosts[["host", "pages", "redundant", "redundant_pct"]],
        clusters=clusters,
        units=pd.DataFrame(
            {
                "unit_id": fp.unit_ids[units],
                "exact_key": pages["exact_key"].to_numpy()[np.flatnonzero(content)[first_of_unit]],
                "cluster_id": cluster[first_of_unit],
            }
        ),
    )


def source_summary(store: Store, config: Config, source_id: int, *, jobs: int | None = None) -> SourceSummary:
    """A source's own numbers and hosts at `config`'s setting, from the store; computed from its pages and
    stored first when the store has none (or they were dropped: the pairs between its units changed when
    the fingerprint set was computed again). Its clusters are stored with them, for `compare_with_stored`."""
    key = analysis_key(config)
    stored = store.source_analysis(source_id, key)
    if stored is None:
        fp = _own_fingerprints(store, config, source_id, jobs=jobs)
        own = analyze(fp, config)
        _store_summary(store, config, source_id, fp, own)
        stored = store.source_analysis(source_id, key)
        assert stored is not None
    numbers, hosts = stored
    return SourceSummary(ReportNumbers(**numbers), hosts)


def _lookup(sorted_ids: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The position of each of `ids` in `sorted_ids` (sorted, distinct), and whether it is there."""
    at = np.searchsorted(sorted_ids, ids)
    found = at < len(sorted_ids)
    found[found] = sorted_ids[at[found]] == ids[found]
    return at, found


@dataclass(slots=True)
class _JointGroups:
    """The joint clusters of the current source's content pages and the baseline clusters they reach."""

    group: np.ndarray  # the group of each node: the current units, then the `reached` baseline clusters
    reached: np.ndarray  # the baseline cluster ids a current unit or a pair with one reaches, sorted
    rows: np.ndarray  # the current source's content pages, as rows of its `Fingerprints.pages`
    row_group: np.ndarray  # the group of each of `rows`

    def of_clusters(self, cluster_ids: np.ndarray) -> np.ndarray:
        """The group of each of `cluster_ids` (reached baseline clusters)."""
        n_units = len(self.group) - len(self.reached)
        return self.group[n_units + np.searchsorted(self.reached, cluster_ids)]


def _joint_groups(store: Store, config: Config, baseline: int, fp: Fingerprints) -> _JointGroups:
    """The baseline's stored clusters joined by the current source's units (`fp`): a unit both sources hold
    is in its baseline cluster, and a pair at the threshold with a current unit joins its two ends. Nodes:
    the current units with content pages (0..n_units-1), then the baseline clusters these reach."""
    assert fp.unit_ids is not None
    content = fp.arrays["unit"] >= 0
    local = np.unique(fp.arrays["unit"][content])
    units = fp.unit_ids[local]  # sorted: both are
    pairs = store.pairs_of_units(config.fingerprint_key, units)
    keep = duplicate_pairs(pairs, config)
    ends_a, ends_b = pairs["a"][keep].astype(np.int64), pairs["b"][keep].astype(np.int64)
    base_units, base_cluster = store.source_unit_clusters(
        baseline, analysis_key(config), np.union1d(units, np.concatenate([ends_a, ends_b]))
    )
    reached = np.unique(base_cluster)
    n_units = len(units)

    def node(ids: np.ndarray) -> np.ndarray:
        """The node of each stored unit id: a current unit's own, else its baseline cluster's, else -1."""
        out = np.full(len(ids), -1, dtype=np.int64)
        at, in_base = _lookup(base_units, ids)
        out[in_base] = n_units + np.searchsorted(reached, base_cluster[at[in_base]])
        at, in_cur = _lookup(units, ids)
        out[in_cur] = at[in_cur]
        return out

    na, nb = node(ends_a), node(ends_b)
    both = (na >= 0) & (nb >= 0)
    shared, is_shared = _lookup(units, base_units)  # current units the baseline holds too
    edges_a = np.concatenate([na[both], shared[is_shared]])
    edges_b = np.concatenate([nb[both], n_units + np.searchsorted(reached, base_cluster[is_shared])])
    group = components(n_units + len(reached), edges_a, edges_b)
    rows = np.flatnonzero(content)
    return _JointGroups(group, reached, rows, group[np.searchsorted(local, fp.arrays["unit"][rows])])


@dataclass(slots=True)
class _GroupCounts:
    """Per joint group (0..n-1): its pages on each side and its first page of either side; and of the
    groups with a baseline cluster, the one with the group's first baseline page."""

    baseline_pages: np.ndarray
    current_pages: np.ndarray
    first_page_id: np.ndarray
    first_url: np.ndarray
    with_baseline: np.ndarray  # the groups holding a baseline cluster, sorted
    first_cluster: np.ndarray  # for each of them, the row of `touched` with its first baseline page


def _group_counts(joint: _JointGroups, fp: Fingerprints, touched: pd.DataFrame) -> _GroupCounts:
    """Each joint group's pages on each side and first page, from the current pages of `joint` and the
    stored baseline clusters it reaches (`touched`: cluster_id, pages, first_page_id, first_url)."""
    touched_group = joint.of_clusters(touched["cluster_id"].to_numpy())
    cur_group = joint.row_group
    cur_page = fp.arrays["page_id"][joint.rows]
    n_groups = int(joint.group.max(initial=-1)) + 1
    b = np.bincount(touched_group, weights=touched["pages"].to_numpy(), minlength=n_groups).astype(np.int64)
    c = np.bincount(cur_group, minlength=n_groups)
    # The first baseline page of each group, and its first page of either side.
    by_first = np.lexsort((touched["first_page_id"].to_numpy(), touched_group))
    has_base, first_touched = np.unique(touched_group[by_first], return_index=True)
    first_cluster = by_first[first_touched]
    by_page = np.lexsort((cur_page, cur_group))
    has_cur, first_cur = np.unique(cur_group[by_page], return_index=True)
    first_page = np.full(n_groups, np.iinfo(np.int64).max)
    first_url = np.empty(n_groups, dtype=object)
    first_page[has_cur] = cur_page[by_page[first_cur]]
    first_url[has_cur] = fp.pages["url"].to_numpy()[joint.rows[by_page[first_cur]]]
    base_first = touched["first_page_id"].to_numpy()[first_cluster]
    earlier = base_first < first_page[has_base]
    first_page[has_base[earlier]] = base_first[earlier]
    first_url[has_base[earlier]] = touched["first_url"].to_numpy()[first_cluster][earlier]
    return _GroupCounts(b, c, first_page, first_url, has_base, first_cluster)


def _ranked_cluster_changes(counts: _GroupCounts, alone: pd.DataFrame) -> pd.DataFrame:
    """`Comparison.clusters` of the joint groups (`counts`) and of the baseline's stored clusters that no
    current unit reaches (`alone`, each a group of its own), with the joint cluster ids `analyze` gives."""
    b, c = counts.baseline_pages, counts.current_pages
    size = np.concatenate([b + c, alone["pages"].to_numpy()])
    first = np.concatenate([counts.first_page_id, alone["first_page_id"].to_numpy()])
    sides = (
        np.concatenate([b, alone["pages"].to_numpy()]),
        np.concatenate([c, np.zeros(len(alone), dtype=np.int64)]),
    )
    urls = np.concatenate([counts.first_url, alone["first_url"].to_numpy()])
    # Joint cluster ids as `analyze` numbers them: by size, largest first, then by first page id. Only
    # clusters of two or more pages are listed, and all of them rank before the single pages.
    multi = np.flatnonzero(size >= 2)
    ranked = multi[np.lexsort((first[multi], -size[multi]))]
    is_listed = (sides[0][ranked] >= 2) | (sides[1][ranked] >= 2)
    listed = ranked[is_listed]
    return _cluster_changes(1 + np.flatnonzero(is_listed), sides[0][listed], sides[1][listed], urls[listed])


def _stored_repeats(
    joint: _JointGroups, fp: Fingerprints, counts: _GroupCounts, touched: pd.DataFrame
) -> pd.DataFrame:
    """`Comparison.repeats`: the current pages in a joint group with a baseline cluster, each with the
    group's first baseline page (from the stored clusters, `touched`)."""
    at = counts.first_cluster
    return _repeats(
        fp.pages.iloc[joint.rows][["page_id", "url", "exact_key"]].assign(group=joint.row_group),
        pd.DataFrame(
            {
                "baseline_page_id": touched["first_page_id"].to_numpy()[at],
                "baseline_url": touched["first_url"].to_numpy()[at],
                "baseline_exact_key": touched["first_exact_key"].to_numpy()[at],
            },
            index=counts.with_baseline,
        ).astype({"baseline_url": fp.pages["url"].dtype, "baseline_exact_key": fp.pages["exact_key"].dtype}),
    )


def compare_with_stored(
    store: Store,
    config: Config,
    baseline: int,
    current: int,
    names: tuple[str, str],
    *,
    jobs: int | None = None,
) -> Comparison:
    """`compare_sources` of two sources of `store`, reading the baseline's stored analysis (`source_summary`)
    instead of its pages: the current source's pages, units and the pairs with one of its units are read,
    and of the baseline its numbers, hosts, clusters of two or more pages and the clusters those pairs
    reach. The same result as `compare_sources`; the cost grows with the current source."""
    base = source_summary(store, config, baseline, jobs=jobs)
    fp = _own_fingerprints(store, config, current, jobs=jobs)
    cur = analyze(fp, config)
    joint = _joint_groups(store, config, baseline, fp)
    stored = store.source_clusters(baseline, analysis_key(config), min_pages=2, cluster_ids=joint.reached)
    is_reached = np.isin(stored["cluster_id"].to_numpy(), joint.reached)
    touched = stored[is_reached]
    counts = _group_counts(joint, fp, touched)
    clusters = _ranked_cluster_changes(counts, stored[~is_reached])
    repeats = _stored_repeats(joint, fp, counts, touched)
    return Comparison(*names, _side_numbers(base, cur), _side_hosts(base, cur), clusters, repeats, "cluster")


def compare_files(base: Analysis, cur: Analysis, names: tuple[str, str]) -> Comparison:
    """Two database files, each analysed on its own; clusters matched by the texts they share."""
    cols = ["page_id", "url", "exact_key", "cluster_id"]
    both = pd.concat(
        [base.pages[cols].assign(side="baseline"), cur.pages[cols].assign(side="current")], ignore_index=True
    )
    content = both["cluster_id"].notna()
    node_of = pd.factorize(both["side"] + ":" + both["cluster_id"].astype("string"))[0]
    text_of = pd.factorize(both["exact_key"])[0]
    n_nodes = int(node_of.max(initial=-1)) + 1
    # A cluster node and a text node are joined for every content page: clusters sharing a text are one.
    edges_a = node_of[content.to_numpy()]
    edges_b = n_nodes + text_of[content.to_numpy()]
    labels = components(n_nodes + int(text_of.max(initial=-1)) + 1, edges_a, edges_b)
    group = pd.array(np.where(content, labels[node_of], 0), dtype="Int64")
    group[~content.to_numpy()] = pd.NA
    # Page ids of two files overlap: the current file's order comes after the baseline's.
    offset = int(base.pages["page_id"].max()) if len(base.pages) else 0
    both["page_id"] = both["page_id"] + np.where(both["side"] == "current", offset, 0)
    clusters, repeats = _changes(both.assign(group=group))
    repeats["page_id"] = repeats["page_id"] - offset
    return Comparison(
        *names, _side_numbers(base, cur), _side_hosts(base, cur), clusters, repeats, "exact text"
    )


@dataclass(frozen=True, slots=True, eq=False)
class SourceTexts:
    """The distinct texts of each source's content pages, one node per (source, text) in key order
    (`source * n_units + unit`), with the counts of each source that no threshold changes: what
    `per_source_numbers` clusters at a threshold (`source_texts`, made once per fingerprint set)."""

    source_ids: np.ndarray  # the sources with pages, ascending
    node_key: np.ndarray  # per node: source (index into source_ids) * n_units + unit, ascending
    node_source: np.ndarray  # per node: its source (index into source_ids)
    node_pages: np.ndarray  # per node: its content pages
    # The nodes grouped by unit: unit u's are unit_nodes[unit_start[u] : unit_start[u + 1]].
    unit_nodes: np.ndarray
    unit_start: np.ndarray
    fixed: dict[str, np.ndarray]  # per source: total_pages, content_pages, distinct_md5s, distinct_texts


def source_texts(fp: Fingerprints) -> SourceTexts:
    """The `SourceTexts` of `fp`'s pages, by their `source_id`."""
    unit, n_units = fp.arrays["unit"], fp.n_units
    # Source ids are small and dense: numbered by a count of each, not a sort of the pages.
    source_id = fp.pages["source_id"].to_numpy(dtype=np.int64)
    has_pages = np.bincount(source_id) > 0
    source_ids = np.flatnonzero(has_pages)
    source = (np.cumsum(has_pages) - 1)[source_id]
    n_sources = len(source_ids)
    content = unit >= 0
    node_key, node_pages = np.unique(source[content] * n_units + unit[content], return_counts=True)
    node_source, node_unit = node_key // max(n_units, 1), node_key % max(n_units, 1)
    md5 = fp.arrays["md5"][content]
    n_md5s = int(md5.max(initial=-1)) + 1
    # return_counts: a sort (numpy's unique of values alone hashes them, several times the CPU at 1M)
    md5_source = np.unique(source[content] * n_md5s + md5, return_counts=True)[0] // max(n_md5s, 1)
    unit_nodes = np.argsort(node_unit, kind="stable")
    return SourceTexts(
        source_ids,
        node_key,
        node_source,
        node_pages,
        unit_nodes,
        np.concatenate([[0], np.cumsum(np.bincount(node_unit, minlength=n_units))]),
        {
            "total_pages": np.bincount(source, minlength=n_sources),
            "content_pages": np.bincount(source[content], minlength=n_sources),
            "distinct_md5s": np.bincount(md5_source, minlength=n_sources),
            "distinct_texts": np.bincount(node_source, minlength=n_sources),
        },
    )


def per_source_numbers(
    fp: Fingerprints, config: Config, sources: pd.DataFrame, *, texts: SourceTexts | None = None
) -> pd.DataFrame:
    """The numbers of each source on its own, in load order (one row per source with pages): the trend
    over crawls. Each source is clustered as if its pages were all there is (`subset_fingerprints` of
    it), all sources in one pass over `texts` (`source_texts(fp)`, made here if not given): a pair at
    the threshold joins its two texts in every source that holds both. A crawl of a source per shard (a
    Spark output, many WARC files) has hundreds of sources; a threshold move clusters its pages once."""
    texts = source_texts(fp) if texts is None else texts
    counts = texts.fixed | _source_clusters(fp, config, texts)
    rows = []
    for s in sources.sort_values("source_id").itertuples():
        at = int(np.searchsorted(texts.source_ids, s.source_id))
        if at == len(texts.source_ids) or texts.source_ids[at] != s.source_id:
            continue
        n = report_numbers(**{k: int(v[at]) for k, v in counts.items()})
        rows.append(
            {
                "source_id": int(s.source_id),
                "source": Path(s.path).name,
                "loaded_at": s.loaded_at,
                **{k: n[k] for k in NUMBERS},
            }
        )
    return pd.DataFrame(rows, columns=["source_id", "source", "loaded_at", *NUMBERS])


def _source_clusters(fp: Fingerprints, config: Config, texts: SourceTexts) -> dict[str, np.ndarray]:
    """Per source, its clusters at `config.threshold` and their numbers (`report_numbers`' arguments):
    each pair is taken into the sources of its first text, and kept where that source holds its second
    text too; one connected-components pass over all the nodes."""
    n_units, n_sources = fp.n_units, len(texts.source_ids)
    nodes, node_source = texts.node_key, texts.node_source
    keep = duplicate_pairs(fp.pairs, config)
    a, b = fp.pairs["a"][keep], fp.pairs["b"][keep]
    fanout = np.diff(texts.unit_start)[a]
    pair = np.repeat(np.arange(len(a)), fanout)
    nth = np.arange(len(pair)) - np.repeat(np.cumsum(fanout) - fanout, fanout)
    node_a = texts.unit_nodes[texts.unit_start[a[pair]] + nth]
    key_b = node_source[node_a] * n_units + b[pair]
    node_b = np.minimum(np.searchsorted(nodes, key_b), max(len(nodes) - 1, 0))
    held = nodes[node_b] == key_b if len(nodes) else np.zeros(0, dtype=bool)
    label = components(len(nodes), node_a[held], node_b[held])
    n_clusters = int(label.max(initial=-1)) + 1
    cluster_source = np.zeros(n_clusters, dtype=np.int64)
    cluster_source[label] = node_source
    cluster_pages = np.bincount(label, weights=texts.node_pages, minlength=n_clusters).astype(np.int64)
    largest = np.zeros(n_sources, dtype=np.int64)
    np.maximum.at(largest, cluster_source, cluster_pages)
    return {
        "clusters": np.bincount(cluster_source, minlength=n_sources),
        "duplicate_clusters": np.bincount(cluster_source[cluster_pages > 1], minlength=n_sources),
        "largest_cluster": largest,
        "pairs_at_threshold": np.bincount(node_source[node_a[held]], minlength=n_sources),
    }


def open_comparison(
    db: str, baseline: str, current: str, config: Config, *, jobs: int | None = None
) -> Comparison:
    """`neardup compare`: two source names of `db`, or two database files (crawl dumps of those names in
    the working directory are the sources loaded from them)."""
    if is_database_file(baseline) and is_database_file(current):
        analyses = []
        for path in (baseline, current):
            with Store(path, on_demand=True) as store:
                analyses.append(analyze(load_fingerprints(store, config, jobs=jobs), config))
        return compare_files(analyses[0], analyses[1], (baseline, current))
    if not Path(db).exists():
        raise NeardupError(f"no database at {db}: name two sources of --db, or two database files")
    with Store(db, on_demand=True) as store:
        sources = store.sources()
        b, c = resolve_source(sources, baseline), resolve_source(sources, current)
        if b == c:
            raise NeardupError(f"--baseline and --current name the same source ({b})")
        return compare_with_stored(store, config, b, c, (baseline, current), jobs=jobs)


def comparison_text(cmp: Comparison, *, top: int = 10) -> str:
    lines = [f"neardup compare  baseline {cmp.baseline}  ->  current {cmp.current}", ""]
    lines.append(f"  {'':<20} {'baseline':>10} {'current':>10} {'change':>9}")
    for r in cmp.numbers.itertuples():
        fmt = ".2f" if r.metric == "redundant_pct" else ",.0f"
        lines.append(f"  {r.metric:<20} {r.baseline:>10{fmt}} {r.current:>10{fmt}} {r.change:>+9{fmt}}")
    k = cmp.counts()
    lines += [
        "",
        f"  duplicate clusters: {k['new']} new, {k['gone']} gone, {k['grown']} grown, {k['shrunk']} shrunk, "
        f"{k['same']} the same (matched by {cmp.matched_by})",
        f"  current pages that duplicate a baseline page: {len(cmp.repeats):,}",
        "",
        "  per host (redundant %: baseline -> current):",
    ]
    for h in cmp.hosts.head(top).itertuples():
        lines.append(
            f"    {escape_controls(h.host, keep=''):<30} {h.pages_baseline:>7,} -> {h.pages_current:>7,} pages  "
            f"{h.redundant_pct_baseline:>5.1f}% -> {h.redundant_pct_current:>5.1f}%"
        )
    changed = cmp.clusters[cmp.clusters["change"] != "same"].head(top)
    if len(changed):
        lines += ["", "  changed clusters:"]
        for c in changed.itertuples():
            lines.append(
                f"    {c.change:<7} {c.baseline_pages:>4} -> {c.current_pages:>4} pages  {escape_controls(c.example_url, keep='')}"
            )
    return "\n".join(lines)
