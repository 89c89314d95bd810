"""Each removed page's category and action, as the Clusters page shows them in a real browser and as the
Export page's removed.csv gives them, on the bundled 3,000-page sample (plus two session-id copies of one of
its articles): a copy of known kind (sample_data/truth.csv) gets its kind's category, a removed page is never
told "keep both", and the download agrees with the page row by row.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from conftest import write_jsonl
from live_app import Browser, Server, assert_clean, click_button, open_page, serving

from neardup import engine
from neardup.analysis import load_fingerprints
from neardup.config import Config
from neardup.store import Store

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "crawl.jsonl.gz"
TRUTH = ROOT / "sample_data" / "truth.csv"

# A copy's true kind -> the category the rule table must give it (bench/bench_categories.py's KIND_CATEGORY).
KIND_CATEGORY = {
    "print_version": "print version",
    "utm_mirror": "URL variant",
    "www_twin": "URL variant",
    "scheme_twin": "URL variant",
    "trailing_slash": "URL variant",
}
SESSION_TAILS = (";jsessionid=0AF3B29C41D7", "?PHPSESSID=9d8c7b6a5f4e3d2c")


def picked_from_truth() -> tuple[dict[str, tuple[list[str], str]], str]:
    """Per kind above, the first true cluster of an original and one copy of that kind: (its two URLs, the
    category either removed page must get); and the first article of a cluster of its own (for the
    session-id copies)."""
    clusters: dict[str, list[dict[str, str]]] = {}
    with TRUTH.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            clusters.setdefault(row["true_cluster"], []).append(row)
    picked: dict[str, tuple[list[str], str]] = {}
    alone = ""
    for members in clusters.values():
        kinds = [m["kind"] for m in members]
        copy = [k for k in kinds if k != "original"]
        if kinds == ["original"] and not alone and "harborledger.com/" in members[0]["url"]:
            alone = members[0]["url"]
        if len(members) == 2 and len(copy) == 1 and copy[0] in KIND_CATEGORY and copy[0] not in picked:
            picked[copy[0]] = ([m["url"] for m in members], KIND_CATEGORY[copy[0]])
    assert set(picked) == set(KIND_CATEGORY) and alone
    return picked, alone


def session_copies(url: str) -> list[dict[str, object]]:
    """The sample's record of `url`, fetched again a day later under each session-id tail."""
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        record = next(r for r in map(json.loads, f) if r["url"] == url)
    day = pd.Timestamp(record["fetched_at"]) + pd.Timedelta(days=1)
    return [
        {**record, "url": url + tail, "fetched_at": (day + pd.Timedelta(hours=i)).isoformat()}
        for i, tail in enumerate(SESSION_TAILS)
    ]


class Sample:
    def __init__(self, server: Server, picked: dict[str, tuple[list[str], str]], page_url: dict[int, str]):
        self.server = server
        self.picked = picked
        self.page_url = page_url


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sample]:
    tmp = tmp_path_factory.mktemp("categories")
    picked, alone = picked_from_truth()
    copies = session_copies(alone)
    picked["session id"] = ([alone, *(str(c["url"]) for c in copies)], "URL variant")
    config = Config()
    db = tmp / "sample.duckdb"
    with Store(db) as store:
        assert engine.ingest_file(store, SAMPLE, config, jobs=1).loaded == 3000
        assert (
            engine.ingest_file(store, write_jsonl(tmp / "session.jsonl", copies), config, jobs=1).loaded == 2
        )
        engine.ensure_fingerprints(store, config, jobs=1)
        pages = load_fingerprints(store, config, jobs=1).pages
    page_url = dict(zip(pages["page_id"].astype(int), pages["url"], strict=True))
    with serving(db, tmp, 3002) as srv:
        yield Sample(srv, picked, page_url)


# The rows of a st.dataframe as its grid's accessible table has them (the rows and columns in view), each a
# dict by column title.
GRID_ROWS_JS = """el => {
    const title = {};
    for (const h of el.querySelectorAll('[role="columnheader"]')) title[h.getAttribute('aria-colindex')] =
        h.innerText.trim();
    return [...el.querySelectorAll('[role="row"]')].filter(r => r.querySelector('[role="gridcell"]')).map(
        r => Object.fromEntries([...r.querySelectorAll('[role="gridcell"]')].map(
            c => [title[c.getAttribute('aria-colindex')], c.innerText.trim()])));
}"""


def page_id(row: dict[str, str]) -> int:
    return int(row["page"].replace(",", ""))  # as the grid formats it


def shown_members(b: Browser, base: str, slug: str) -> tuple[int, list[dict[str, str]]]:
    """The Clusters page filtered by URL text `slug` (one cluster): its id and its members' rows."""
    page = b.page
    open_page(
        page, base, "/Clusters?url=" + urllib.parse.quote(slug, safe=""), "Compare with the representative"
    )
    assert page.get_by_text("1 duplicate clusters of").count() == 1, slug
    heading = page.get_by_role("heading", name=re.compile(r"^Cluster \d+: ")).inner_text()
    cluster_id = int(re.match(r"Cluster (\d+):", heading).group(1))
    members = page.locator('[data-testid="stDataFrame"]').nth(1)  # the clusters table comes first
    members.locator('[role="gridcell"]').first.wait_for(state="attached")  # screen-reader cells
    rows = members.evaluate(GRID_ROWS_JS)
    assert_clean(b, f"/Clusters?url={slug}")
    return cluster_id, rows


def test_removed_pages_get_their_own_category_on_clusters_and_in_removed_csv(
    sample: Sample, browser: Browser, tmp_path: Path
) -> None:
    base, picked, page_url = sample.server.url, sample.picked, sample.page_url
    shown: dict[str, dict[str, object]] = {}  # removed page's URL -> what Clusters shows for it
    for kind, (urls, want) in picked.items():
        slug = urls[0].rstrip("/").rsplit("/", 1)[-1]
        cluster_id, rows = shown_members(browser, base, slug)
        assert {page_url[page_id(r)] for r in rows} == set(urls), (kind, rows)
        reps = [
            r
            for r in rows
            if r["URL as fetched, where it differs from the representative's"] == "(representative)"
        ]
        assert len(reps) == 1, (kind, rows)
        removed = [r for r in rows if r is not reps[0]]
        assert len(removed) == len(urls) - 1
        for r in removed:
            assert "keep both" not in r["suggested action"], (kind, r)
            assert r["category"] == want, (kind, page_url[page_id(r)], r["category"])
            shown[page_url[page_id(r)]] = {
                "cluster_id": cluster_id,
                "representative_url": page_url[page_id(reps[0])],
                "category": r["category"],
                "suggested_action": r["suggested action"],
            }

    page = browser.page
    open_page(page, base, "/Export", "Import labels")
    with page.expect_download(timeout=120_000) as info:
        click_button(page, "removed.csv")
    assert info.value.suggested_filename == "removed.csv"
    info.value.save_as(tmp_path / "removed.csv")
    assert_clean(browser, "/Export after removed.csv")
    csv_rows = pd.read_csv(tmp_path / "removed.csv", keep_default_na=False)
    assert not csv_rows["suggested_action"].str.contains("keep both").any()
    # the clusters looked at: their removed pages in the CSV are the ones the page shows, with the same values
    ours = csv_rows[csv_rows["cluster_id"].isin({v["cluster_id"] for v in shown.values()})]
    assert sorted(ours["url"]) == sorted(shown)
    for row in ours.itertuples():
        got = {
            k: getattr(row, k) for k in ("cluster_id", "representative_url", "category", "suggested_action")
        }
        assert got == shown[row.url], row.url
