"""A suggested action per cluster: the labeled category, else one suggested from the cluster's URLs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from neardup.actions import ACTIONS, UNIQUE_ACTION, cluster_actions, site_name, suggest_categories
from neardup.cli import main
from neardup.labels import CATEGORIES
from neardup.store import Store
from neardup.urls import canonicalize_url, host_of


def _pages(rows: list[tuple]) -> pd.DataFrame:
    """(cluster_id or None, url, md5, unit_id) -> the columns `cluster_actions` reads."""
    df = pd.DataFrame(rows, columns=["cluster_id", "url", "md5", "unit_id"])
    df["cluster_id"] = df["cluster_id"].astype("Int64")
    df["cluster_size"] = df["cluster_id"].map(df["cluster_id"].value_counts()).astype("Int64")
    df["canonical_url"] = df["url"].map(canonicalize_url)
    df["host"] = df["canonical_url"].map(host_of)
    return df


PAGES = _pages(
    [
        (1, "https://shop.example.de/p/1", "m1", 1),
        (1, "https://shop.example.fr/p/1", "m2", 2),  # regional
        (2, "https://news.example.com/a", "m3", 3),
        (2, "https://blog.other.org/a-copy", "m4", 4),  # syndicated
        (3, "https://e.com/x?utm_source=n", "m5", 5),
        (3, "http://www.e.com/x/", "m5", 5),  # URL variant
        (4, "https://e.com/price", "m6", 6),
        (4, "https://e.com/price", "m7", 7),  # stale
        (5, "https://e.com/same", "m8", 8),
        (5, "https://e.com/same", "m9", 8),  # noise re-fetch
        (6, "https://e.com/y?session=1", "m10", 9),
        (6, "https://e.com/y?session=2", "m10", 9),  # URL variant
        (7, "https://e.com/red-shoe", "m11", 10),
        (7, "https://e.com/blue-shoe", "m12", 11),  # templated
        (8, "https://e.com/unique", "m13", 12),
        (None, "https://e.com/404", "m14", -1),
    ]
)


def test_every_category_has_an_action() -> None:
    assert set(ACTIONS) == set(CATEGORIES)


def test_site_name() -> None:
    assert site_name("m.shop.example.de") == site_name("www.shop.example.fr") == "shop.example"
    assert site_name("localhost") == "localhost"
    # a market as the first label (the sample's uk. and de. shops), with a language-region pair too
    assert site_name("uk.voltbarn.com") == site_name("www.voltbarn.com") == site_name("voltbarn.com")
    assert site_name("de.shop.example.com") == site_name("en-gb.shop.example.com") == "shop.example"
    assert site_name("news.example.com") != site_name("example.com")


def test_categories_suggested_from_urls() -> None:
    assert suggest_categories(PAGES).to_dict() == {
        1: "regional mirror",
        2: "syndicated",
        3: "URL variant",
        4: "stale re-crawl",
        5: "noise re-fetch",
        6: "URL variant",
        7: "templated siblings",
    }
    assert suggest_categories(PAGES[PAGES["cluster_id"] == 8]).empty


def test_actions_per_page() -> None:
    out = cluster_actions(PAGES)
    assert out.index.equals(PAGES.index)
    by_cluster = out.assign(cluster=PAGES["cluster_id"]).drop_duplicates("cluster")
    assert by_cluster["suggested_action"].tolist() == [
        "keep both; tag them as one product",
        "keep the original; drop or attribute the copies",
        "drop the variants; fix the frontier (canonicalize these URLs)",
        "keep the newest fetch",
        "drop the re-fetches; the content did not change",
        "drop the variants; fix the frontier (canonicalize these URLs)",
        "keep both; tighten normalization (the template outweighs the content)",
        UNIQUE_ACTION,
        "a scrape failure, not a duplicate: re-fetch",
    ]
    assert by_cluster["category_from"].tolist() == ["URLs"] * 7 + ["", ""]
    assert by_cluster["category"].tolist()[-2:] == ["", "degenerate"]


def _label(url_a: str, url_b: str, category: str | None, when: str, md5_a: str = "", md5_b: str = "") -> dict:
    return {
        "url_a": canonicalize_url(url_a),
        "md5_a": md5_a,
        "url_b": canonicalize_url(url_b),
        "md5_b": md5_b,
        "label": "duplicate",
        "category": category,
        "labeled_at": pd.Timestamp(when),
    }


def test_labels_override_the_suggestion() -> None:
    labels = pd.DataFrame(
        [
            # cluster 2: two labels say regional mirror (one by URL only), one says other
            _label(
                "https://news.example.com/a", "https://blog.other.org/a-copy", "regional mirror", "2024-01-01"
            ),
            _label(
                "https://news.example.com/a",
                "https://blog.other.org/a-copy",
                "regional mirror",
                "2024-01-02",
                "m3",
                "m4",
            ),
            _label(
                "https://news.example.com/a", "https://blog.other.org/a-copy", "other", "2024-01-03", "m3", ""
            ),
            # cluster 7: a tie between two categories goes to the most recent label
            _label("https://e.com/red-shoe", "https://e.com/blue-shoe", "URL variant", "2024-01-01"),
            _label(
                "https://e.com/red-shoe",
                "https://e.com/blue-shoe",
                "templated siblings",
                "2024-02-01",
                "m11",
                "m12",
            ),
            # sides in two clusters: no cluster's label; a wrong MD5 matches no page; no category: ignored
            _label("https://e.com/price", "https://e.com/same", "syndicated", "2024-01-01"),
            _label("https://e.com/x", "https://e.com/x", "syndicated", "2024-01-01", "nope", "m5"),
            _label("https://shop.example.de/p/1", "https://shop.example.fr/p/1", None, "2024-01-01"),
        ]
    )
    out = cluster_actions(PAGES, labels).assign(cluster=PAGES["cluster_id"]).drop_duplicates("cluster")
    got = dict(
        zip(out["cluster"].tolist(), zip(out["category"], out["category_from"], strict=True), strict=True)
    )
    assert got[2] == ("regional mirror", "label")
    assert got[7] == ("templated siblings", "label")
    assert got[1] == ("regional mirror", "URLs")
    assert got[3] == ("URL variant", "URLs") and got[4] == ("stale re-crawl", "URLs")


def test_clusters_csv_carries_the_labeled_category(
    tmp_path: Path, crawl_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "a.duckdb")
    assert main(["ingest", str(crawl_file), "--db", db, "--jobs", "1"]) == 0
    with Store(db) as store:
        store.record_label(
            "https://news.example.com/story-4",
            "https://news.example.com/story-4",
            label="duplicate",
            category="stale re-crawl",
        )
    out = tmp_path / "clusters.csv"
    assert main(["export", "--db", db, "--jobs", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    df = pd.read_csv(out, keep_default_na=False)
    story4 = df[df["representative_url"] == "https://news.example.com/story-4"]
    assert len(story4) == 4
    assert set(zip(story4["category"], story4["category_from"], story4["suggested_action"], strict=True)) == {
        ("stale re-crawl", "label", "keep the newest fetch")
    }
    story5 = df[df["representative_url"] == "https://news.example.com/story-5"]
    assert set(story5["category"]) == {"URL variant"} and set(story5["category_from"]) == {"URLs"}
    with_copy = df[df["representative_url"] == "https://news.example.com/story-0"]
    assert set(with_copy["category"]) == {"syndicated"}  # news.example.com and blog.example.org
    assert set(df.loc[df["degenerate"] != "", "suggested_action"]) == {
        "a scrape failure, not a duplicate: re-fetch"
    }
    assert set(df.loc[df["cluster_size"] == "1", "suggested_action"]) == {"keep"}
