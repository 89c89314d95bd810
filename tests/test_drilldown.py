"""Clusters filtered by host, category, size and URL text; a host's pairs; the highlighted passages escaped."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from neardup.config import Config
from neardup.drilldown import ClusterFilter, filter_clusters, host_pairs
from neardup.evidence import shared_passages, text_words_with_spans
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
    return df.assign(canonical_url=df["url"].str.replace(r"\?.*", "", regex=True))


def clusters_frame() -> pd.DataFrame:
    return pd.DataFrame({"cluster_id": [3, 1, 2], "size": [3, 2, 2]})


CATEGORIES = pd.Series({1: "syndicated", 2: "print version", 3: "URL variant"})


def ids(flt: ClusterFilter, table: pd.DataFrame | None = None) -> list[int]:
    table = clusters_frame() if table is None else table
    return filter_clusters(table, pages_frame(), flt, CATEGORIES)["cluster_id"].tolist()


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
    table = clusters_frame().assign(category=["other", "other", "print version"])
    assert ids(ClusterFilter(categories=("other",)), table) == [3, 1]
    with pytest.raises(ValueError, match="categories"):
        filter_clusters(clusters_frame(), pages_frame(), ClusterFilter(categories=("x",)))


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
