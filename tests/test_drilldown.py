"""The Clusters table and its filters by host, category, size and URL text; a host's pairs; the highlighted
passages escaped."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from neardup.analysis import analyze, load_fingerprints
from neardup.categories import page_categories
from neardup.config import Config
from neardup.drilldown import ClusterFilter, cluster_table, filter_clusters, host_pairs, take_rows
from neardup.evidence import shared_passages, text_words_with_spans
from neardup.store import Store
from neardup.ui.evidence import highlighted_markdown


def pages_frame() -> pd.DataFrame:
    rows = [  # cluster 1: two hosts; cluster 2: a print copy; cluster 3: 3 pages; a single page
        (1, 2, "a.example", "https://a.example/x", 0),
        (1, 2, "b.example", "https://b.example/x?utm_source=n", 1),
        (2, 2, "a.example", "https://a.example/y", 2),
        (2, 2, "a.example", "https://a.example/y/print", 3),
        (3, 3, "c.example", "https://c.example/z", 4),
        (3, 3, "c.example", "https://c.example/z2", 5),
        (3, 3, "c.example", "https://C.example/Z3", 6),
        (4, 1, "a.example", "https://a.example/alone", 7),
    ]
    df = pd.DataFrame(rows, columns=["cluster_id", "cluster_size", "host", "url", "unit_id"])
    canonical = df["url"].str.replace(r"\?.*", "", regex=True)
    first = df.groupby("cluster_id")["unit_id"].transform("min")
    return df.assign(
        canonical_url=canonical, representative_url=canonical[first].to_numpy(), why="shortest URL"
    )


CATEGORIES = pd.Series({1: "syndicated", 2: "print version", 3: "URL variant"})


def ids(flt: ClusterFilter, categories: list[str] | None = None) -> list[int]:
    pages = pages_frame()
    table = cluster_table(pages)
    if categories is not None:  # the table's own category column
        table.rows["category"] = categories
    return filter_clusters(table, pages, flt, CATEGORIES)["cluster_id"].tolist()


def test_the_table_largest_first_with_each_clusters_hosts() -> None:
    table = cluster_table(pages_frame())
    assert table.rows["cluster_id"].tolist() == [3, 1, 2] and table.rows["size"].tolist() == [3, 2, 2]
    assert table.rows["hosts"].tolist() == [1, 2, 1]
    assert table.rows["representative_url"].tolist() == [
        "https://c.example/z",
        "https://a.example/x",
        "https://a.example/y",
    ]
    assert table.hosts == ["a.example", "b.example", "c.example"]  # the single page's host has no cluster
    assert table.members_of(3).tolist() == [4, 5, 6] and table.members_of(4).tolist() == []


def test_each_filter_alone_and_together() -> None:
    assert ids(ClusterFilter()) == [3, 1, 2] and not ClusterFilter().active
    assert ids(ClusterFilter(host="a.example")) == [1, 2]  # a single page's host is no cluster of it
    assert ids(ClusterFilter(host="b.example")) == [1]
    assert ids(ClusterFilter(categories=("print version", "URL variant"))) == [3, 2]
    assert ids(ClusterFilter(min_size=3)) == [3]
    assert ids(ClusterFilter(max_size=2)) == [1, 2]
    assert ids(ClusterFilter(url_text="PRINT")) == [2]
    assert ids(ClusterFilter(url_text="z3")) == [3]  # case aside
    assert ids(ClusterFilter(url_text="utm_source")) == [1]  # the URL as fetched, not only the canonical
    assert ids(ClusterFilter(host="a.example", categories=("syndicated",), max_size=2)) == [1]
    assert ids(ClusterFilter(host="nowhere.example")) == []


def test_the_tables_own_category_column_wins() -> None:
    """A Clusters table that carries its category (from the categories module) is filtered by it."""
    assert ids(ClusterFilter(categories=("other",)), ["other", "other", "print version"]) == [3, 1]
    with pytest.raises(ValueError, match="categories"):
        filter_clusters(cluster_table(pages_frame()), pages_frame(), ClusterFilter(categories=("x",)))


def test_host_pairs_at_the_threshold_closest_first() -> None:
    pairs = pd.DataFrame({"unit_a": [0, 2, 4, 5], "unit_b": [1, 3, 5, 6], "score": [0.85, 0.95, 0.99, 0.75]})
    config = Config(threshold=0.8)
    assert host_pairs(pairs, pages_frame(), "a.example", config)["score"].tolist() == [0.95, 0.85]
    assert host_pairs(pairs, pages_frame(), "c.example", config)["score"].tolist() == [0.99]  # 0.75 is below
    bits = pd.DataFrame({"unit_a": [0, 2], "unit_b": [1, 3], "score": [5, 2]})
    simhash = Config(method="simhash", threshold=4)
    assert host_pairs(bits, pages_frame(), "a.example", simhash)["score"].tolist() == [2]


HOSTILE = (
    "<script>alert(1)</script> <img src=x onerror=alert(1)> [click](javascript:alert(1)) :red[x] "
    "**bold** $\\alert{1}$ https://evil.example/x www.evil.example mail@evil.example ] :blue-background["
)


def test_highlighted_passages_are_escaped_markdown() -> None:
    """Hostile text inside and around a passage: every ASCII punctuation of the page's text escaped (no
    tag, link, directive or formula can form), bare URLs broken; only the highlight's own directives are
    unescaped. Reading the escapes back gives the text."""
    left = f"intro words here {HOSTILE} tail of the left text"
    right = f"other start {HOSTILE} tail of the right"
    wa, wb = text_words_with_spans(left), text_words_with_spans(right)
    passages = shared_passages(wa.words, wb.words, 3)
    assert passages
    marks = [(p.start_a, p.n_words, i) for i, p in enumerate(passages)]
    shown = highlighted_markdown(wa, marks)
    directives = [f":{c}-badge[{i + 1}] :{c}-background[" for i, c in ((0, "blue"), (1, "violet"))][
        : len(marks)
    ]
    rest = shown
    for d in directives:
        assert d in rest
        rest = rest.replace(d, "", 1)
    # what is left is page text: no unescaped punctuation but the directives' closing brackets
    unescaped = [
        ch
        for i, ch in enumerate(rest)
        if ch in "<>[]()*$:`_!\\"
        and (i == 0 or rest[i - 1] != "\\")
        and not (ch == "\\" and i + 1 < len(rest))
    ]
    assert unescaped.count("]") == len(marks) and set(unescaped) <= {"]"}
    assert "https\u2060" in rest and "www\u2060" in rest and "@\u2060" in rest
    closers_out = re.sub(r"(?<!\\)\]", "", rest)
    assert re.sub(r"\\(.)", r"\1", closers_out).replace("\u2060", "") == left


def test_rows_taken_chunk_by_chunk_are_the_frames_take() -> None:
    urls = pa.chunked_array([["a", None, "c"], [], ["d"], ["e", "f", None, "h"]])
    frame = pd.DataFrame(
        {
            "url": pd.array(urls, dtype="str"),
            "n": np.arange(8),
            "host": pd.array(list("pqrstuvw"), dtype="str"),
        },
        index=pd.RangeIndex(10, 18),
    )
    for rows in ([6, 0, 3, 3, 7], [1], [], list(range(8))[::-1]):
        pd.testing.assert_frame_equal(take_rows(frame, np.array(rows, dtype=np.int64)), frame.take(rows))


def reference_cluster_table(pages: pd.DataFrame, categories: pd.DataFrame) -> pd.DataFrame:
    """The Clusters table by a group-by of every clustered page (the definition `cluster_table` keeps)."""
    clustered = pages[pages["cluster_size"].fillna(0) > 1]
    g = clustered.groupby("cluster_id")
    out = pd.DataFrame(
        {
            "size": g.size(),
            "representative_url": g["representative_url"].first(),
            "why": g["why"].first(),
            "hosts": g["host"].nunique(),
        }
    )
    out["category"] = (
        categories.loc[clustered.index, "cluster_category"].groupby(clustered["cluster_id"]).first()
    )
    out = out.reset_index()
    return out.sort_values(["size", "cluster_id"], ascending=[False, True]).reset_index(drop=True)


def reference_filter(clusters: pd.DataFrame, pages: pd.DataFrame, flt: ClusterFilter) -> list[int]:
    """The clusters passing `flt`, each page of the crawl tested (no table of members)."""
    members = pages[pages["cluster_size"].fillna(0) > 1]
    keep = pd.Series(True, index=clusters.index)
    if flt.host is not None:
        keep &= clusters["cluster_id"].isin(members.loc[members["host"] == flt.host, "cluster_id"])
    if flt.url_text:
        needle = flt.url_text.casefold()
        hit = members["url"].str.casefold().str.contains(needle, regex=False) | members[
            "canonical_url"
        ].str.casefold().str.contains(needle, regex=False)
        keep &= clusters["cluster_id"].isin(members.loc[hit, "cluster_id"])
    if flt.min_size is not None:
        keep &= clusters["size"] >= flt.min_size
    if flt.categories:
        keep &= clusters["category"].isin(flt.categories)
    return clusters.loc[keep, "cluster_id"].astype(int).tolist()


@pytest.mark.parametrize(
    ("method", "thresholds"),
    [("minhash", [0.7, 0.8, 0.87, 0.95]), ("simhash", [3, 6])],
    ids=["minhash", "simhash"],
)
def test_the_samples_table_members_and_filters_are_the_group_bys(
    sample_db: Path, method: str, thresholds: list[float]
) -> None:
    """On the sample crawl at several thresholds: the table's rows (ids, sizes, representatives, reasons,
    hosts, categories, order), each cluster's pages, the filters' hosts and categories and what the
    filters pass are those of a group-by over every page."""
    with Store(sample_db) as store:
        base = Config().with_method(method)  # type: ignore[arg-type]
        fp = load_fingerprints(store, base, jobs=1)
        for threshold in thresholds:
            config = replace(base, threshold=threshold)
            analysis = analyze(fp, config)
            pages = analysis.pages
            categories = page_categories(store, analysis, store.labels())
            table = cluster_table(pages, categories)
            expected = reference_cluster_table(pages, categories)
            assert len(expected) > 10
            pd.testing.assert_frame_equal(table.rows, expected)
            for cid in expected["cluster_id"]:
                want = pages.index[pages["cluster_id"] == cid]
                assert table.members_of(int(cid)).tolist() == want.tolist()
            pd.testing.assert_frame_equal(table.pages_of(pages, int(cid)), pages[pages["cluster_id"] == cid])
            clustered = pages[pages["cluster_size"].fillna(0) > 1]
            assert table.hosts == sorted(clustered["host"].dropna().unique().tolist())
            assert table.categories == sorted(expected["category"].dropna().astype(str).unique())
            top_host = clustered["host"].value_counts().index[0]
            for flt in (
                ClusterFilter(),
                ClusterFilter(host=top_host),
                ClusterFilter(url_text="UTM_"),
                ClusterFilter(url_text="print", min_size=3),
                ClusterFilter(categories=tuple(table.categories[:1]), host=top_host),
            ):
                got = filter_clusters(table, pages, flt)["cluster_id"].astype(int).tolist()
                assert got == reference_filter(expected, pages, flt), flt
