"""End to end on a generated crawl: the numbers add up, mirrors cluster, soft-404s stay out."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import Crawl, make_crawl, page_html, short_page_fetches, words_text, write_jsonl

from neardup import engine
from neardup.analysis import (
    Analysis,
    ReportNumbers,
    analyze,
    load_fingerprints,
    number_clusters,
    pairs_at_threshold,
)
from neardup.candidate_stats import CAPPED_NOTE, CandidateStats, upgrade_stored_stats
from neardup.config import Config
from neardup.readers.jsonl import BLOCK_BYTES
from neardup.shingles import containment, jaccard, shingles, words
from neardup.stages import ingest as ingest_stage
from neardup.store import Store

# simhash distances of the near edits on this crawl are 1..3 bits: 4 leaves a margin
SETTINGS = {
    "minhash": Config(method="minhash", threshold=0.8),
    "simhash": Config(method="simhash", threshold=4),
    "minhash-strip": Config(method="minhash", threshold=0.8, normalize="strip"),
    "simhash-strip": Config(method="simhash", threshold=4, normalize="strip"),
}


def _analysis(store: Store, config: Config) -> Analysis:
    return analyze(load_fingerprints(store, config, jobs=1), config)


def _by_line(analysis: Analysis) -> pd.DataFrame:
    return analysis.pages.set_index("line").sort_index()


@pytest.mark.parametrize("name", list(SETTINGS))
def test_numbers_add_up(loaded: tuple[Store, Crawl], name: str) -> None:
    store, crawl = loaded
    n = _analysis(store, SETTINGS[name]).numbers
    assert n["total_pages"] == len(crawl.records) == 40
    assert n["content_pages"] + n["degenerate_pages"] == n["total_pages"]
    assert n["exact_duplicates"] + n["near_duplicates"] + n["unique_pages"] == n["content_pages"]
    assert n["redundant_pages"] == n["exact_duplicates"] + n["near_duplicates"]
    # what the crawl was built with
    n_articles, n_edits = len(crawl.article_groups), len(crawl.near_edits)
    assert n["degenerate_pages"] == len(crawl.soft404s) == 2
    assert n["byte_identical_duplicates"] == 2 * n_articles  # utm mirror and http twin: same bytes
    assert n["exact_duplicates"] == 3 * n_articles  # + the re-fetch with a new CSRF token
    assert n["near_duplicates"] == n_edits
    assert n["unique_pages"] == n_articles + len(crawl.uniques)
    assert n["duplicate_clusters"] == n_articles
    assert n["largest_cluster"] == 5
    assert n["redundant_pct"] == pytest.approx(100 * n["redundant_pages"] / 40, abs=0.01)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_mirrors_cluster_together_and_soft404s_never(loaded: tuple[Store, Crawl], name: str) -> None:
    store, crawl = loaded
    pages = _by_line(_analysis(store, SETTINGS[name]))
    cluster = {line: pages.loc[line, "cluster_id"] for line in pages.index}

    def cid(i: int) -> object:
        return cluster[i + 1]  # record i is on line i + 1

    seen = set()
    for a, group in enumerate(crawl.article_groups):
        ids = {cid(i) for i in group}
        if a in crawl.near_edits:
            ids.add(cid(crawl.near_edits[a]))
        assert len(ids) == 1, (a, ids)
        (only,) = ids
        assert not pd.isna(only)
        assert only not in seen  # different articles stay apart
        seen.add(only)
    for i in crawl.uniques:
        line = i + 1
        assert pages.loc[line, "cluster_size"] == 1
        assert bool(pages.loc[line, "is_representative"])
    for i in crawl.soft404s:
        row = pages.loc[i + 1]
        assert row["degenerate"] == "soft-404"
        assert pd.isna(row["cluster_id"])
        assert not bool(row["is_representative"])
        assert row["unit_id"] == -1


def test_representative_is_the_earliest_fetch(loaded: tuple[Store, Crawl]) -> None:
    store, crawl = loaded
    pages = _by_line(_analysis(store, SETTINGS["minhash"]))
    for group in crawl.article_groups:
        original = crawl.records[group[0]]
        line = group[0] + 1
        members = pages[pages["cluster_id"] == pages.loc[line, "cluster_id"]]
        reps = members[members["is_representative"]]
        assert len(reps) == 1
        assert reps.index[0] == line  # fetched first
        assert (
            members["representative_url"] == "https://news.example.com/" + original["url"].rsplit("/", 1)[1]
        ).all()
        assert (members["why"] == "earliest fetch").all()


def test_newest_representative_rule(loaded: tuple[Store, Crawl]) -> None:
    """`representative: [canonical, newest, shortest]` keeps each cluster's latest fetch: the edited copy
    (2024-03-01) where a story has one, else the re-fetch (2024-02-01); the numbers do not change."""
    store, crawl = loaded
    config = SETTINGS["minhash"].replace(representative=("canonical", "newest", "shortest"))
    newest = _analysis(store, config)
    pages = _by_line(newest)
    for i, group in enumerate(crawl.article_groups):
        members = pages[pages["cluster_id"] == pages.loc[group[0] + 1, "cluster_id"]]
        latest = crawl.near_edits.get(i, group[3]) + 1
        assert members.index[members["is_representative"]].tolist() == [latest]
        assert (members["why"] == "newest fetch").all()
    assert newest.numbers == _analysis(store, SETTINGS["minhash"]).numbers


def test_similarity_to_representative(loaded: tuple[Store, Crawl]) -> None:
    store, crawl = loaded
    for name, exact in (("minhash", 1.0), ("simhash", 0.0)):
        pages = _by_line(_analysis(store, SETTINGS[name]))
        for a, group in enumerate(crawl.article_groups):
            for i in group:
                assert pages.loc[i + 1, "similarity_to_representative"] == exact
            if a in crawl.near_edits:
                sim = pages.loc[crawl.near_edits[a] + 1, "similarity_to_representative"]
                if name == "minhash":
                    assert 0.8 <= sim < 1.0
                else:
                    assert 1 <= sim <= 4
        for i in crawl.soft404s:
            assert np.isnan(pages.loc[i + 1, "similarity_to_representative"])


def test_tighter_threshold_never_increases_near_duplicates(loaded: tuple[Store, Crawl]) -> None:
    store, _ = loaded
    simhash = SETTINGS["simhash"]
    fp = load_fingerprints(store, simhash, jobs=1)
    near = [analyze(fp, simhash.replace(threshold=t)).numbers["near_duplicates"] for t in range(8, -1, -1)]
    assert near == sorted(near, reverse=True)  # from loosest (8 bits) to tightest (0)
    assert near[0] == 4 and near[-1] == 0

    minhash = SETTINGS["minhash"]
    fp = load_fingerprints(store, minhash, jobs=1)
    results = [
        analyze(fp, minhash.replace(threshold=t)).numbers
        for t in (minhash.minhash_floor, 0.75, 0.8, 0.9, 0.95, 0.99, 1.0)
    ]
    near = [r["near_duplicates"] for r in results]
    assert near == sorted(near, reverse=True)
    assert near[0] == 4
    # exact duplicates do not depend on the threshold
    assert {r["exact_duplicates"] for r in results} == {18}


def test_fingerprints_are_cached(loaded: tuple[Store, Crawl]) -> None:
    store, _ = loaded
    config = SETTINGS["simhash"].replace(shingle_size=3)
    first = engine.ensure_fingerprints(store, config, jobs=1)
    second = engine.ensure_fingerprints(store, config, jobs=1)
    assert first.computed_at == second.computed_at
    assert first.n_units == second.n_units == 20
    # a threshold change shares the fingerprints; a shingle-size change does not
    assert (
        engine.ensure_fingerprints(store, config.replace(threshold=1), jobs=1).computed_at
        == first.computed_at
    )
    other = engine.ensure_fingerprints(store, config.replace(shingle_size=4), jobs=1)
    assert other.fingerprint_key != first.fingerprint_key


def test_ingest_sketches_the_setting_in_force(tmp_path: Path) -> None:
    """The ingest workers sketch content pages as they go; the sketches equal those computed later
    from the stored texts, so the default setting's fingerprints need no second pass over the texts."""
    crawl = make_crawl()
    path = write_jsonl(tmp_path / "crawl.jsonl", crawl.records)
    config = Config()
    with Store(tmp_path / "a.duckdb") as store:
        engine.ingest_file(store, path, config, jobs=1)
        assert store.count_units(config.norm_key) == 20
        assert store.count_unsketched(config.norm_key, config.sketch_key) == 0
        assert engine.ensure_sketches(store, config, jobs=1) == 0
        other = config.replace(shingle_size=3)
        assert store.count_unsketched(config.norm_key, other.sketch_key) == 20
        from_ingest = store.unit_sketches(config.norm_key, config.sketch_key, with_minhash=True)
        # the same sketches, computed afterwards from the stored texts
        store.cursor().execute("DELETE FROM sketches")
        assert engine.ensure_sketches(store, config, jobs=1) == 20
        from_texts = store.unit_sketches(config.norm_key, config.sketch_key, with_minhash=True)
        pd.testing.assert_frame_equal(from_ingest, from_texts)
        # a method switch reads the stored sketches: nothing is computed again
        engine.ensure_fingerprints(store, config.with_method("simhash"), jobs=1)
        assert engine.ensure_sketches(store, config, jobs=1) == 0


def test_older_database_gains_new_tables(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    with Store(db) as store:
        store.cursor().execute("DROP TABLE sketches")  # as a file written before sketches existed
    with Store(db) as store:
        assert store.count_unsketched(Config().norm_key, Config().sketch_key) == 0


def test_texts_are_normalized_once(loaded: tuple[Store, Crawl]) -> None:
    store, _ = loaded
    strip = Config(normalize="strip")
    engine.ensure_texts(store, strip, jobs=1)
    assert engine.ensure_texts(store, strip, jobs=1) == 0
    assert store.count_pages_without_text(strip.norm_key) == 0


def test_analyze_refuses_other_fingerprints(loaded: tuple[Store, Crawl]) -> None:
    store, _ = loaded
    fp = load_fingerprints(store, SETTINGS["simhash"], jobs=1)
    with pytest.raises(ValueError, match="same setting"):
        analyze(fp, SETTINGS["minhash"])


def test_hosts_table(loaded: tuple[Store, Crawl]) -> None:
    store, _ = loaded
    hosts = _analysis(store, SETTINGS["minhash"]).hosts.set_index("host")
    # story pages (24) + uniques (10) on news.example.com; its 18 exact copies are redundant there
    assert hosts.loc["news.example.com", "pages"] == 34
    assert hosts.loc["news.example.com", "redundant"] == 18
    assert hosts.loc["blog.example.org", "pages"] == 4
    assert hosts.loc["blog.example.org", "redundant"] == 4
    assert hosts["pages"].sum() == 38  # content pages only


def test_rel_canonical_picks_the_representative(tmp_path: Path) -> None:
    crawl = make_crawl(n_articles=2, n_edits=0, n_unique=2)
    # a late copy of story 0 at its own URL, named by the utm mirror's rel=canonical: it beats the earliest fetch
    target = "https://news.example.com/story-0-canonical"
    crawl.records.append({**crawl.records[0], "url": target, "fetched_at": "2025-01-01"})
    crawl.records[1] = {
        **crawl.records[1],
        "html": crawl.records[1]["html"].replace("<head>", f"<head><link rel='canonical' href='{target}'>"),
    }
    path = write_jsonl(tmp_path / "c.jsonl", crawl.records)
    with Store(tmp_path / "c.duckdb") as store:
        engine.ingest_file(store, path, Config(), jobs=1)
        pages = _by_line(_analysis(store, Config()))
    line = len(crawl.records)
    assert bool(pages.loc[line, "is_representative"])
    assert pages.loc[line, "why"] == "named by rel=canonical"
    assert (pages[pages["cluster_id"] == pages.loc[line, "cluster_id"]]["representative_url"] == target).all()


def test_empty_store_analysis(tmp_path: Path) -> None:
    with Store(tmp_path / "empty.duckdb") as store:
        n = _analysis(store, Config()).numbers
    assert n["total_pages"] == n["content_pages"] == n["unique_pages"] == 0
    assert n["redundant_pct"] == 0.0


def test_only_capped_bucket_notes_are_warnings(loaded: tuple[Store, Crawl]) -> None:
    """The LSH bands x rows note is information; a capped bucket is a warning."""
    store, _ = loaded
    fp = load_fingerprints(store, SETTINGS["minhash"], jobs=1)
    assert any("bands x rows" in note for note in fp.stats.notes)
    assert not fp.stats.warnings
    assert not any("bands x rows" in w for w in analyze(fp, SETTINGS["minhash"]).warnings)
    fp.stats = dataclasses.replace(fp.stats, capped_buckets=3, capped_members=9000)
    fp.stats.warn_capped("LSH", 2000)
    capped = f"3 LSH bucket(s) with more than 2000 members (9000 members) {CAPPED_NOTE}"
    assert analyze(fp, SETTINGS["minhash"]).warnings[:1] == [capped]


def test_candidate_stats_are_stored_as_fields_and_shown_as_text() -> None:
    """Notes and the capped-bucket warning are rendered from the fields, information apart from the
    warning; the stored form holds the fields, and the one list of text an older version stored
    (information first, the warning last) is read into the same fields."""
    stats = CandidateStats(tables=20, capped_buckets=2, capped_members=5000, lsh_bands=20, lsh_rows=6)
    stats.warn_capped("LSH", 2000)
    warning = f"2 LSH bucket(s) with more than 2000 members (5000 members) {CAPPED_NOTE}"
    assert stats.notes == ("LSH bands x rows = 20 x 6",)
    assert stats.warnings == (warning,)
    stored = stats.as_dict()
    assert "notes" not in stored and (stored["lsh_bands"], stored["capped_index"]) == (20, "LSH")
    assert CandidateStats.from_dict(stored) == stats
    older = {"tables": 20, "capped_buckets": 2, "capped_members": 5000, "notes": [*stats.notes, warning]}
    assert CandidateStats.from_dict(upgrade_stored_stats(older)) == stats  # type: ignore[arg-type]
    a_note = CandidateStats.from_dict(upgrade_stored_stats({"notes": ["LSH bands x rows = 9 x 13"]}))  # type: ignore[arg-type]
    assert a_note.warnings == () and a_note.notes == ("LSH bands x rows = 9 x 13",)


def test_boilerplate_only_crawl_warns(tmp_path: Path) -> None:
    # 25 identical pages: one cluster of 25 trips the "largest cluster" warning
    body = " ".join(f"term{i}" for i in range(120))
    recs = [
        {"url": f"https://e.com/p{i}", "html": f"<html><body><p>{body}</p></body></html>"} for i in range(25)
    ]
    path = write_jsonl(tmp_path / "b.jsonl", recs)
    with Store(tmp_path / "b.duckdb") as store:
        engine.ingest_file(store, path, Config(), jobs=1)
        analysis = _analysis(store, Config())
    assert analysis.numbers["largest_cluster"] == 25
    assert analysis.numbers["exact_duplicates"] == 24
    assert any("largest cluster holds 25 pages" in w for w in analysis.warnings)


# --- exact verification of MinHash pairs ------------------------------------------------------------
@pytest.fixture(scope="module")
def overlaps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """Rewrites of one 300-word article that keep 98% down to 40% of it: exact containment spans the
    floor (0.7), where a 128-permutation estimate can land on either side."""
    import random

    rng = random.Random(11)
    base = words_text(rng, 300).split(" ")
    records = [{"url": "https://a.example/base", "html": page_html("Base", " ".join(base))}]
    for i, keep in enumerate((0.98, 0.9, 0.8, 0.74, 0.7, 0.66, 0.6, 0.5, 0.4) * 2):
        n = int(len(base) * keep)
        body = base[:n] + words_text(rng, len(base) - n).split(" ")
        records.append({"url": f"https://b{i}.example/copy", "html": page_html(f"Copy {i}", " ".join(body))})
    tmp = tmp_path_factory.mktemp("overlaps")
    store = Store(tmp / "x.duckdb")
    engine.ingest_file(store, write_jsonl(tmp / "x.jsonl", records), Config(), jobs=1)
    yield store
    store.close()


def _reference_scores(
    store: Store, config: Config
) -> tuple[pd.DataFrame, dict[tuple[int, int], tuple[float, float]]]:
    """Units and, for every pair of them, (Jaccard, containment with the size guard) of their shingle strings."""
    units = store.unit_sketches(config.norm_key, config.sketch_key, with_minhash=False)
    texts = (
        store.cursor()
        .execute(
            "SELECT exact_key, any_value(text) AS text FROM texts WHERE norm_key = ? GROUP BY exact_key",
            [config.norm_key],
        )
        .df()
        .set_index("exact_key")["text"]
    )
    sets = [shingles(words(texts[k]), config.shingle_size) for k in units["exact_key"]]
    ref = {}
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            small, large = sorted((len(sets[i]), len(sets[j])))
            guard = small >= config.min_size_ratio * large or 0 < config.min_contained_shingles <= small
            ref[i, j] = (jaccard(sets[i], sets[j]), containment(sets[i], sets[j]) if guard else 0.0)
    return units, ref


def test_verify_exact_scores_every_pair_exactly(overlaps: Store) -> None:
    config = Config()
    units, ref = _reference_scores(overlaps, config)
    a, b = (np.array(x) for x in zip(*ref, strict=True))
    stats = CandidateStats()
    ka, kb, jac, cont = engine.verify_exact(
        overlaps, config, units["exact_key"].to_numpy(), units["n_shingles"].to_numpy(), a, b, stats, jobs=1
    )
    want = {p: s for p, s in ref.items() if s[1] >= config.minhash_floor}
    assert 0 < len(want) < len(ref)  # the floor splits this crawl's pairs
    got = {(int(i), int(j)): (x, y) for i, j, x, y in zip(ka, kb, jac, cont, strict=True)}
    assert got.keys() == want.keys()
    for p, (x, y) in got.items():
        assert x == pytest.approx(want[p][0]) and y == pytest.approx(want[p][1]), p
    assert (stats.verified_exact, stats.rejected_exact) == (len(ref), len(ref) - len(want))


def test_minhash_pairs_are_stored_with_exact_scores(overlaps: Store) -> None:
    """The default stores exact scores; "estimate" keeps the signature estimates, which pass the floor
    for pairs whose exact containment is below it."""
    exact, estimate = Config(), Config(verify="estimate")
    assert exact.fingerprint_key != estimate.fingerprint_key
    _, ref = _reference_scores(overlaps, exact)
    fp = load_fingerprints(overlaps, exact, jobs=1)
    est = load_fingerprints(overlaps, estimate, jobs=1)
    got = {
        (int(i), int(j)): c
        for i, j, c in zip(fp.pairs["a"], fp.pairs["b"], fp.pairs["containment"], strict=True)
    }
    kept = {(int(i), int(j)) for i, j in zip(est.pairs["a"], est.pairs["b"], strict=True)}
    assert got and set(got) <= kept
    for p, c in got.items():
        assert c == pytest.approx(ref[p][1]) and c >= exact.minhash_floor
    assert fp.stats.verified_exact == len(kept)
    assert fp.stats.rejected_exact == len(kept) - len(got)
    # every estimated pair below the floor by its exact score is one the estimate let through
    assert {p for p in kept if ref[p][1] < exact.minhash_floor} == kept - set(got)


def test_bulk_load_restores_automatic_checkpoints(tmp_path: Path) -> None:
    """Ingest turns DuckDB's automatic checkpoints off (it checkpoints where row groups fill up) and
    restores them afterwards, also when the file is rejected."""

    def threshold(store: Store) -> str:
        return store.cursor().execute("SELECT current_setting('checkpoint_threshold')").fetchone()[0]

    with Store(tmp_path / "x.duckdb") as store:
        before = threshold(store)
        with store.bulk_load():
            assert threshold(store) != before
        assert threshold(store) == before
        crawl = make_crawl()
        engine.ingest_file(store, write_jsonl(tmp_path / "ok.jsonl", crawl.records), Config(), jobs=1)
        assert threshold(store) == before
        bad = tmp_path / "bad.jsonl"
        bad.write_text("not json\n", encoding="utf-8")
        with pytest.raises(Exception, match="not a crawl dump"):
            engine.ingest_file(store, bad, Config(), jobs=1)
        assert threshold(store) == before
        assert store.count_pages() == len(crawl.records)


def _stored(store: Store) -> dict[str, list[tuple]]:
    cur = store.cursor()
    pages = cur.execute("SELECT page_id, line, url, md5 FROM pages ORDER BY page_id").fetchall()
    html = [h for t in store.page_records(np.array([p[0] for p in pages]), 64) for h in t["html"].to_pylist()]
    return {
        "pages": [(*p, h) for p, h in zip(pages, html, strict=True)],
        "texts": cur.execute("SELECT page_id, text, exact_key FROM texts ORDER BY page_id").fetchall(),
        "sketches": cur.execute("SELECT * FROM sketches ORDER BY ALL").fetchall(),
        "errors": cur.execute("SELECT line, reason FROM ingest_errors ORDER BY line").fetchall(),
    }


def test_inserts_cut_by_bytes_store_what_one_insert_stores(tmp_path: Path, monkeypatch) -> None:
    # Real pages are large: the pages waiting for an insert are cut by their bytes as well as their count.
    # Many small inserts give the same page ids, lines, texts, sketches and rejects as one.
    rng = random.Random(5)
    records: list[dict] = []
    script = "<script>var state = " + "[1,2,3,4,5,6,7,8,9]," * 8000 + "0;</script>"  # as real pages carry
    for i in range(30):
        html = page_html(f"Page {i}", words_text(rng, 300)).replace("</head>", script + "</head>")
        records.append({"url": f"https://big.example.com/{i}", "html": html})
        if i % 6 == 0:
            records.append({"url": "", "html": "<p>no url</p>"})
    path = write_jsonl(tmp_path / "big.jsonl", records)
    assert path.stat().st_size > 2 * BLOCK_BYTES  # several read blocks: several worker results
    one = Store(tmp_path / "one.duckdb")
    engine.ingest_file(one, path, Config(), jobs=1)
    monkeypatch.setattr(ingest_stage, "INSERT_BYTES", 1)  # an insert per worker result
    many = Store(tmp_path / "many.duckdb")
    summary = engine.ingest_file(many, path, Config(), jobs=1)
    assert summary.loaded == 30 and summary.errors == 5 and summary.records == 35
    assert _stored(many) == _stored(one)
    one.close()
    many.close()


def test_report_numbers_are_typed_and_read_as_a_mapping(loaded: tuple[Store, Crawl]) -> None:
    """`Analysis.numbers` is a `ReportNumbers`: fields by attribute, the same numbers by name, and its
    dict (the JSON report's `numbers`) in the report's order."""
    store, _ = loaded
    n = _analysis(store, Config()).numbers
    assert isinstance(n, ReportNumbers)
    assert n.redundant_pages == n.exact_duplicates + n.near_duplicates == n.content_pages - n.unique_pages
    assert n["near_duplicates"] == n.near_duplicates > 0
    assert n == n.as_dict() and dict(n) == n.as_dict()
    assert list(n.as_dict())[:3] == ["total_pages", "content_pages", "degenerate_pages"]
    with pytest.raises(KeyError):
        n["as_dict"]


def _verdicts(store: Store, config: Config) -> pd.DataFrame:
    return _analysis(store, config).pages.set_index("url")[["degenerate", "cluster_id", "n_words"]]


def test_a_short_page_gets_one_verdict_in_all_its_fetches(tmp_path: Path) -> None:
    """Two URL variants of a 25-word page and a fetch of it with a widget's seven words more (32, min_words 30):
    all three content, in one cluster, not two set aside as too short and one clustered. A page without a
    fetch that reaches min_words stays too short in every fetch, and so does a fetch further below than the
    margin (a third of min_words)."""
    first, later = short_page_fetches()
    with Store(tmp_path / "d.duckdb") as store:
        engine.ingest_file(store, write_jsonl(tmp_path / "a.jsonl", first + later), Config(), jobs=1)
        v = _verdicts(store, Config())
        brief = v.loc[[r["url"] for r in first[:2] + later]]
        assert brief["n_words"].tolist() == [25, 25, 32]
        assert brief["degenerate"].isna().all() and brief["cluster_id"].nunique() == 1, brief
        assert v.loc["https://news.example/brief/other", "degenerate"] == "too short"
        assert v.loc["https://news.example/stub", "degenerate"] == "too short"
        assert pd.isna(v.loc["https://news.example/stub?ref=home", "degenerate"])
        # at min_words 40 no fetch of the brief reaches it: all three are too short
        stricter = _verdicts(store, Config(min_words=40)).loc[brief.index]
        assert (stricter["degenerate"] == "too short").all(), stricter


def test_a_fetch_added_later_gives_its_page_the_verdict_a_full_computation_gives(tmp_path: Path) -> None:
    """The 32-word fetch comes in a crawl added after the fingerprints of the first were stored: the two
    25-word fetches stored as too short become content, as when both crawls are loaded at once."""
    first, later = short_page_fetches()
    config = Config()
    with Store(tmp_path / "full.duckdb") as store:
        engine.ingest_file(store, write_jsonl(tmp_path / "all.jsonl", first + later), config, jobs=1)
        full = _analysis(store, config).pages
    with Store(tmp_path / "added.duckdb") as store:
        engine.ingest_file(store, write_jsonl(tmp_path / "first.jsonl", first), config, jobs=1)
        assert _verdicts(store, config).loc[first[0]["url"], "degenerate"] == "too short"
        engine.ingest_file(store, write_jsonl(tmp_path / "later.jsonl", later), config, jobs=1)
        added = _analysis(store, config).pages
    cols = ["url", "degenerate", "cluster_id"]
    pd.testing.assert_frame_equal(added[cols], full[cols])
    brief = added.set_index("url").loc[[r["url"] for r in first[:2] + later]]
    assert brief["degenerate"].isna().all() and brief["cluster_id"].nunique() == 1


def test_clusters_are_numbered_by_size_then_first_page(loaded: tuple[Store, Crawl]) -> None:
    store, _ = loaded
    config = SETTINGS["minhash"]
    fp = load_fingerprints(store, config, jobs=1)
    numbering = number_clusters(fp, pairs_at_threshold(fp, config))
    content = fp.arrays["unit"] >= 0
    assert (numbering.cluster[~content] == 0).all() and (numbering.size[~content] == 0).all()
    ids = numbering.cluster[content]
    assert set(ids) == set(range(1, numbering.n_clusters + 1))
    assert (np.bincount(ids)[1:] == numbering.sizes).all()
    assert (np.diff(numbering.sizes) <= 0).all()  # largest first
    first_page = [
        fp.arrays["page_id"][numbering.cluster == k].min() for k in range(1, numbering.n_clusters + 1)
    ]
    for k in range(1, numbering.n_clusters):  # equal sizes: by first page id
        if numbering.sizes[k - 1] == numbering.sizes[k]:
            assert first_page[k - 1] < first_page[k]
    assert (numbering.size[content] == numbering.sizes[ids - 1]).all()
