"""Crawl over crawl: a baseline crawl and a current crawl that drops, keeps, grows and adds clusters."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_crawl, page_html, sample_lines, words_text, write_jsonl

from neardup import compare, engine
from neardup.analysis import Fingerprints, analyze, load_fingerprints, subset_fingerprints
from neardup.cli import main
from neardup.compare import (
    Comparison,
    analysis_key,
    compare_sources,
    open_comparison,
    per_source_numbers,
    resolve_source,
)
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


def test_source_names_that_are_files_here_name_sources(
    crawls: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run where the crawl files are, their names are the sources they were loaded from, not databases."""
    monkeypatch.chdir(crawls["one"].parent)
    assert Path("base.jsonl").is_file() and Path("current.jsonl").is_file()
    cmp = open_comparison(str(crawls["one"]), "base.jsonl", "current.jsonl", Config(), jobs=1)
    assert cmp.matched_by == "cluster" and cmp.counts() == EXPECTED


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


def _edited(words: list[str], start: int, rng: random.Random) -> list[str]:
    """`words` with a block of 60 from `start` replaced."""
    return words[:start] + words_text(rng, 60).split() + words[start + 60 :]


@pytest.fixture(scope="module")
def three_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base.jsonl and current.jsonl with a story each whose texts are not duplicates of each other at
    0.8 (about 0.78 Jaccard), and between them in load order other.jsonl, with a text near both (about
    0.89): the full database joins the two stories through other.jsonl, the two sources alone do not."""
    tmp = tmp_path_factory.mktemp("three")
    rng = random.Random(7)
    story = words_text(rng, 400).split()
    bridge = _edited(story, 0, rng)
    far = _edited(bridge, 340, rng)

    def record(url: str, words: list[str], day: str) -> dict:
        return {"url": url, "html": page_html("Story", " ".join(words)), "fetched_at": day, "status": 200}

    base = [*make_crawl().records, record("https://news.example.com/bridged", story, "2024-05-01")]
    other = [
        *make_crawl(seed=11, n_unique=30).records,
        record("https://news.example.com/bridged?v=2", bridge, "2024-05-15"),
    ]
    current = [*_current_records(), record("https://news.example.com/bridged?v=3", far, "2024-06-06")]
    db = tmp / "three.duckdb"
    with Store(db) as store:
        for name, records in (("base", base), ("other", other), ("current", current)):
            engine.ingest_file(store, write_jsonl(tmp / f"{name}.jsonl", records), Config(), jobs=1)
        engine.ensure_fingerprints(store, Config(), jobs=1)
    shutil.copyfile(db, tmp / "unanalysed.duckdb")  # before any comparison stores an analysis in it
    return db


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_two_sources_read_alone_compare_as_the_full_load(three_sources: Path, method: str) -> None:
    config = Config(method=method, threshold=0.8 if method == "minhash" else 3)
    with Store(three_sources) as store:
        full = load_fingerprints(store, config, jobs=1)
        alone = load_fingerprints(store, config, jobs=1, source_ids=[1, 3])
    assert set(alone.pages["source_id"]) == {1, 3} and 2 in set(full.pages["source_id"])
    assert alone.n_units < full.n_units and len(alone.pairs["a"]) < len(full.pairs["a"])
    got = compare_sources(alone, config, 1, 3, ("a", "b"))
    want = compare_sources(full, config, 1, 3, ("a", "b"))
    for part in ("numbers", "hosts", "clusters", "repeats"):
        pd.testing.assert_frame_equal(getattr(got, part), getattr(want, part))
    assert got.counts() == EXPECTED | {"new": 1}  # the story of current.jsonl's own
    cmp = open_comparison(str(three_sources), "base.jsonl", "current.jsonl", config, jobs=1)
    pd.testing.assert_frame_equal(cmp.clusters, want.clusters)
    pd.testing.assert_frame_equal(cmp.repeats, want.repeats)


def test_a_third_source_joins_nothing_in_a_comparison(three_sources: Path) -> None:
    config = Config()
    with Store(three_sources) as store:
        full = load_fingerprints(store, config, jobs=1)
        sources = store.sources()
    pages = analyze(full, config).pages.set_index("url")
    bridged = [f"https://news.example.com/bridged{q}" for q in ("", "?v=2", "?v=3")]
    assert pages.loc[bridged, "cluster_id"].nunique() == 1  # one cluster through other.jsonl's page
    cmp = compare_sources(full, config, 1, 3, ("a", "b"))
    assert bridged[2] not in set(cmp.repeats["url"])
    # each side's numbers are the source's own, as in the trend over sources
    trend = per_source_numbers(full, config, sources).set_index("source_id")
    unique = cmp.numbers.set_index("metric").loc["unique_pages"]
    assert (unique["baseline"], unique["current"]) == (
        trend.at[1, "unique_pages"],
        trend.at[3, "unique_pages"],
    )


# --- each source's own analysis, stored -------------------------------------------------------


def _full_comparison(db: Path, config: Config, baseline: int, current: int) -> Comparison:
    """The comparison of two sources from the whole database's fingerprints, nothing stored read."""
    with Store(db) as store:
        fp = load_fingerprints(store, config, jobs=1)
    return compare_sources(fp, config, baseline, current, ("a", "b"))


def _assert_same(got: Comparison, want: Comparison) -> None:
    for part in ("numbers", "hosts", "clusters", "repeats"):
        pd.testing.assert_frame_equal(getattr(got, part), getattr(want, part))


def _is_stored(db: Path, source_id: int, config: Config) -> bool:
    with Store(db) as store:
        return store.source_analysis(source_id, analysis_key(config)) is not None


def _computing_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("a source's analysis was computed, not read")

    monkeypatch.setattr(compare, "_store_summary", fail)


@pytest.fixture
def three_copy(three_sources: Path, tmp_path: Path) -> Path:
    db = tmp_path / "three.duckdb"
    shutil.copyfile(three_sources.with_name("unanalysed.duckdb"), db)
    return db


@pytest.mark.parametrize("method", ["minhash", "simhash"])
@pytest.mark.parametrize(("baseline", "current"), [(1, 3), (3, 1), (1, 2), (2, 3)])
def test_a_comparison_through_the_stored_analysis_is_the_full_one(
    three_copy: Path, method: str, baseline: int, current: int
) -> None:
    config = Config(method=method, threshold=0.8 if method == "minhash" else 3)
    want = _full_comparison(three_copy, config, baseline, current)
    assert not _is_stored(three_copy, baseline, config)
    first = open_comparison(str(three_copy), str(baseline), str(current), config, jobs=1)
    assert _is_stored(three_copy, baseline, config)
    again = open_comparison(str(three_copy), str(baseline), str(current), config, jobs=1)
    _assert_same(first, want)
    _assert_same(again, want)


def test_a_second_comparison_reads_the_stored_analysis(
    three_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = open_comparison(str(three_copy), "1", "3", Config(), jobs=1)
    _computing_fails(monkeypatch)
    _assert_same(open_comparison(str(three_copy), "1", "3", Config(), jobs=1), first)
    # another threshold is another setting: its analysis is computed
    with pytest.raises(AssertionError, match="computed, not read"):
        open_comparison(str(three_copy), "1", "3", Config(threshold=0.9), jobs=1)


@pytest.mark.parametrize("recomputed", [True, False])
def test_a_crawl_added_later_is_compared_with_the_stored_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recomputed: bool
) -> None:
    """The baseline's analysis, stored by a comparison with one crawl, serves the comparison with a crawl
    loaded after it, whether the fingerprint set is extended or computed again with the units renumbered
    (as when a new text pushes a bucket over the cap: `stages.incremental.extend_fingerprints` gives up)."""
    config = Config()
    db = tmp_path / "db.duckdb"
    files = {
        "base": write_jsonl(tmp_path / "base.jsonl", make_crawl().records),
        "other": write_jsonl(tmp_path / "other.jsonl", make_crawl(seed=11, n_unique=30).records),
        "current": write_jsonl(tmp_path / "current.jsonl", _current_records()),
    }
    with Store(db) as store:
        for name in ("base", "other"):
            engine.ingest_file(store, files[name], config, jobs=1)
    open_comparison(str(db), "base.jsonl", "other.jsonl", config, jobs=1)
    with Store(db) as store:
        units_before = store.units(config.fingerprint_key)
        engine.ingest_file(store, files["current"], config, jobs=1)
        with monkeypatch.context() as patch:
            if recomputed:
                patch.setattr(engine, "extend_fingerprints", lambda *args, **kwargs: None)
            engine.ensure_fingerprints(store, config, jobs=1)
        renumbered = units_before.merge(store.units(config.fingerprint_key), on="exact_key")
    assert (renumbered["unit_id_x"] != renumbered["unit_id_y"]).any() == recomputed
    _computing_fails(monkeypatch)
    got = open_comparison(str(db), "base.jsonl", "current.jsonl", config, jobs=1)
    assert got.counts() == EXPECTED and len(got.repeats) == 17
    monkeypatch.undo()
    _assert_same(got, _full_comparison(db, config, 1, 3))


def test_changed_pairs_or_a_removed_source_drop_the_stored_analysis(three_copy: Path) -> None:
    config = Config()
    key, analysis = config.fingerprint_key, analysis_key(config)
    open_comparison(str(three_copy), "1", "3", config, jobs=1)
    with Store(three_copy) as store:
        fset = store.fingerprint_set(key)
        assert fset is not None
        base_units = store.source_unit_clusters(1, analysis, store.units(key)["unit_id"].to_numpy())[0]
        units, pairs = store.units(key, with_signatures=True), store.pairs(key)
        # the set written again with its units in another order, the same pairs between the same texts
        shuffled = units.sample(frac=1, random_state=1)
        renumber = dict(zip(shuffled["unit_id"], units["unit_id"], strict=True))
        ends = pairs[["a", "b"]].apply(lambda end: end.map(renumber))
        same = pairs.assign(a=ends.min(axis=1), b=ends.max(axis=1))

        def write(pairs: pd.DataFrame) -> None:
            store.save_fingerprints(
                key,
                norm_key=config.norm_key,
                method=config.method,
                shingle_size=config.shingle_size,
                units=shuffled.assign(unit_id=units["unit_id"].to_numpy()),
                pairs=pairs,
                stats=fset.stored_stats(),
                seconds=0.0,
            )

        write(same)
        assert store.source_analysis(1, analysis) is not None  # kept, renumbered
        ours = store.source_unit_clusters(1, analysis, units["unit_id"].to_numpy())[0]
        assert set(ours) == {renumber[u] for u in base_units}
        inside = same[same["a"].isin(ours) & same["b"].isin(ours)]
        assert len(inside)
        write(same.drop(index=inside.index[0]))  # one pair between two of the baseline's units less
        assert store.source_analysis(1, analysis) is None
    open_comparison(str(three_copy), "1", "3", config, jobs=1)
    with Store(three_copy) as store:
        assert store.source_analysis(1, analysis) is not None
        store.remove_source(2)
        assert store.source_analysis(1, analysis) is None
    _assert_same(
        open_comparison(str(three_copy), "1", "3", config, jobs=1), _full_comparison(three_copy, config, 1, 3)
    )


# --- the trend over many sources ------------------------------------------------------------------


def _numbers_of_each_source_alone(fp: Fingerprints, config: Config, sources: pd.DataFrame) -> pd.DataFrame:
    """The reference of `per_source_numbers`: each source's pages clustered on their own, one by one."""
    rows = []
    src = fp.pages["source_id"].to_numpy()
    for s in sources.sort_values("source_id").itertuples():
        keep = src == s.source_id
        if keep.any():
            numbers = analyze(subset_fingerprints(fp, keep), config).numbers
            row = {"source_id": s.source_id, "source": Path(s.path).name, "loaded_at": s.loaded_at}
            rows.append(row | {k: numbers[k] for k in compare.NUMBERS})
    return pd.DataFrame(rows, columns=["source_id", "source", "loaded_at", *compare.NUMBERS])


def _compared_by_subset_frames(fp: Fingerprints, config: Config, baseline: int, current: int) -> Comparison:
    """The reference of `compare_sources`: each side and the two together analysed as subsets of `fp`,
    each with its pages frame (`analyze` of `subset_fingerprints`), the joint clusters read from it."""
    src = fp.pages["source_id"].to_numpy()
    on_base, on_cur = src == baseline, src == current
    base = analyze(subset_fingerprints(fp, on_base), config)
    cur = analyze(subset_fingerprints(fp, on_cur), config)
    joint = analyze(subset_fingerprints(fp, on_base | on_cur), config).pages
    pages = joint.assign(
        side=["baseline" if s == baseline else "current" for s in joint["source_id"]],
        group=joint["cluster_id"],
    )
    clusters, repeats = compare._changes(pages)
    numbers, hosts = compare._side_numbers(base, cur), compare._side_hosts(base, cur)
    return Comparison("a", "b", numbers, hosts, clusters, repeats, "cluster")


@pytest.fixture(scope="module")
def sample_in_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample split into five files, as a crawl of many shards loads: four take every fourth
    line (a story's copies land in several sources), the fifth fetches the first 400 pages again at
    other URLs (texts whole in two sources)."""
    tmp = tmp_path_factory.mktemp("shards")
    lines = [line for line in sample_lines(10**6) if line.strip()]
    again = [json.loads(line) | {"url": json.loads(line)["url"] + "#again"} for line in lines[:400]]
    parts = [lines[i::4] for i in range(4)] + [[json.dumps(r).encode() for r in again]]
    db = tmp / "shards.duckdb"
    with Store(db) as store:
        for i, part in enumerate(parts):
            path = tmp / f"shard-{i}.jsonl"
            path.write_bytes(b"\n".join(part) + b"\n")
            engine.ingest_file(store, path, Config(), jobs=1)
        engine.ensure_fingerprints(store, Config(), jobs=1)
    return db


@pytest.mark.parametrize("threshold", [0.7, 0.8, 0.95])
def test_per_source_numbers_are_each_source_clustered_alone(sample_in_files: Path, threshold: float) -> None:
    config = Config(threshold=threshold)
    with Store(sample_in_files) as store:
        fp = load_fingerprints(store, config, jobs=1)
        sources = store.sources()
    want = _numbers_of_each_source_alone(fp, config, sources)
    assert len(want) == 5 and want["near_duplicates"].gt(0).all()
    pd.testing.assert_frame_equal(per_source_numbers(fp, config, sources), want)


def test_per_source_numbers_cluster_all_sources_at_once(
    sample_in_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crawl of a source per shard has hundreds of sources: one clustering of all their pages serves
    every threshold move, not one per source."""
    with Store(sample_in_files) as store:
        fp = load_fingerprints(store, Config(), jobs=1)
        sources = store.sources()
    calls = []
    real = compare.components
    monkeypatch.setattr(compare, "components", lambda *a: calls.append(a) or real(*a))
    monkeypatch.setattr(compare, "analyze", lambda *a: pytest.fail("a source clustered on its own"))
    per_source_numbers(fp, Config(), sources)
    assert len(calls) == 1


@pytest.mark.parametrize("threshold", [0.7, 0.8, 0.95])
@pytest.mark.parametrize(("baseline", "current"), [(4, 5), (1, 5), (3, 2), (1, 4)])
def test_two_sources_compare_as_their_subsets_analysed(
    sample_in_files: Path, threshold: float, baseline: int, current: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each side and the pair are clustered from the fingerprints' arrays, no analysis of a pages frame."""
    config = Config(threshold=threshold)
    with Store(sample_in_files) as store:
        fp = load_fingerprints(store, config, jobs=1)
    want = _compared_by_subset_frames(fp, config, baseline, current)
    assert len(want.repeats) and want.counts()["new"] + want.counts()["gone"] > 0
    monkeypatch.setattr(compare, "analyze", lambda *a: pytest.fail("a pages frame analysed"))
    _assert_same(compare_sources(fp, config, baseline, current, ("a", "b")), want)
