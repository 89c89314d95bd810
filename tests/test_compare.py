"""Crawl over crawl: a baseline crawl and a current crawl that drops, keeps, grows and adds clusters."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import make_crawl, page_html, words_text, write_jsonl

from neardup import engine
from neardup.analysis import load_fingerprints
from neardup.cli import main
from neardup.compare import compare_sources, open_comparison, per_source_numbers, resolve_source
from neardup.config import Config
from neardup.errors import NeardupError
from neardup.store import Store

EXPECTED = {"new": 1, "gone": 5, "grown": 1, "shrunk": 0, "same": 0}


def _current_records() -> list[dict]:
    """The baseline's 10 unique pages again; story 0's four fetches and two more URLs of it; one fetch of
    story 1; a new page fetched at two URLs. Stories 2-5 are not crawled."""
    base = make_crawl()
    recs = base.records
    out = [dict(recs[i], fetched_at="2024-06-01") for i in base.uniques]
    story0 = base.article_groups[0]
    out += [dict(recs[i], fetched_at="2024-06-02") for i in story0]
    out += [
        dict(recs[story0[0]], url=f"https://news.example.com/story-0?sessionid={s}", fetched_at="2024-06-03")
        for s in ("a1", "b2")
    ]
    out.append(dict(recs[base.article_groups[1][0]], fetched_at="2024-06-04"))
    fresh = page_html("Fresh story", words_text(random.Random(99), 400))
    out += [
        {"url": u, "html": fresh, "fetched_at": "2024-06-05", "status": 200}
        for u in ("https://news.example.com/fresh", "https://m.news.example.com/fresh")
    ]
    return out


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("compare")
    base_file = write_jsonl(tmp / "base.jsonl", make_crawl().records)
    cur_file = write_jsonl(tmp / "current.jsonl", _current_records())
    paths = {"one": tmp / "both.duckdb", "base": tmp / "base.duckdb", "cur": tmp / "cur.duckdb"}
    for db, files in (
        (paths["one"], [base_file, cur_file]),
        (paths["base"], [base_file]),
        (paths["cur"], [cur_file]),
    ):
        with Store(db) as store:
            for f in files:
                engine.ingest_file(store, f, Config(), jobs=1)
            engine.ensure_fingerprints(store, Config(), jobs=1)
    return paths


def test_sources_of_one_database(crawls: dict[str, Path]) -> None:
    cmp = open_comparison(str(crawls["one"]), "base.jsonl", "current.jsonl", Config(), jobs=1)
    assert cmp.counts() == EXPECTED
    numbers = cmp.numbers.set_index("metric")
    assert numbers.loc["total_pages", "baseline"] == 40 and numbers.loc["total_pages", "current"] == 19
    # 10 unique pages, story 0's six fetches and story 1's one duplicate a baseline page
    assert len(cmp.repeats) == 17
    assert cmp.repeats["same_text"].all()
    grown = cmp.clusters[cmp.clusters["change"] == "grown"].iloc[0]
    assert (grown["current_pages"], grown["baseline_pages"]) == (6, 5)  # story 0 and its near edit
    new = cmp.clusters[cmp.clusters["change"] == "new"].iloc[0]
    assert (new["baseline_pages"], new["current_pages"]) == (0, 2)
    hosts = cmp.hosts.set_index("host")
    assert hosts.loc["news.example.com", "pages_current"] == 18  # all but the m. copy of the new page
    assert hosts.loc["m.news.example.com", "pages_baseline"] == 0


def test_two_database_files_match_by_text(crawls: dict[str, Path]) -> None:
    cmp = open_comparison("unused.duckdb", str(crawls["base"]), str(crawls["cur"]), Config(), jobs=1)
    assert cmp.matched_by == "exact text"
    assert cmp.counts() == EXPECTED
    assert len(cmp.repeats) == 17
    assert set(cmp.repeats["page_id"]) <= set(range(1, 20))


def test_per_source_numbers(crawls: dict[str, Path]) -> None:
    config = Config()
    with Store(crawls["one"]) as store:
        sources = store.sources()
        fp = load_fingerprints(store, config, jobs=1)
    trend = per_source_numbers(fp, config, sources)
    assert list(trend["source"]) == ["base.jsonl", "current.jsonl"]
    assert list(trend["total_pages"]) == [40, 19]
    same = compare_sources(fp, config, 1, 2, ("a", "b"))
    assert same.numbers.set_index("metric").loc["unique_pages", "current"] == trend["unique_pages"].iloc[1]


def test_unknown_source_names_the_sources(crawls: dict[str, Path]) -> None:
    with Store(crawls["one"]) as store:
        sources = store.sources()
    assert resolve_source(sources, "2") == 2
    with pytest.raises(NeardupError, match=r"'nope' is no source.*1 \(base.jsonl\), 2 \(current.jsonl\)"):
        resolve_source(sources, "nope")


def test_cli_compare(crawls: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repeats = tmp_path / "repeats.csv"
    argv = ["compare", "--db", str(crawls["one"]), "--baseline", "1", "--current", "current.jsonl"]
    assert main([*argv, "--json", "--repeats-out", str(repeats)]) == 0
    data = json.loads(capsys.readouterr().out.split("\nwrote ")[0])
    assert data["clusters"] == EXPECTED and data["current_pages_duplicating_baseline"] == 17
    assert len(repeats.read_text().splitlines()) == 18
    assert main(argv) == 0
    assert "1 new, 5 gone, 1 grown" in capsys.readouterr().out
    assert main(["compare", "--db", str(crawls["one"]), "--baseline", "1", "--current", "1"]) == 2
