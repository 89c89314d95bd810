"""analysis: what a threshold move reuses of the fingerprints, and the columns it derives per threshold."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import engine
from neardup.analysis import (
    ClusterNumbering,
    Fingerprints,
    analyze,
    load_fingerprints,
    naming_codes,
    number_clusters,
    pairs_at_threshold,
    string_codes,
    subset_fingerprints,
)
from neardup.candidate_stats import CAPPED_NOTE, CAPPED_WARN_SHARE
from neardup.candidates import CandidateStats
from neardup.clusters import components, pick_representatives, representative_rows
from neardup.config import Config
from neardup.rules import learn_rules
from neardup.store import Store


@pytest.fixture(scope="module")
def sample_fp(tmp_path_factory: pytest.TempPathFactory) -> Fingerprints:
    path = tmp_path_factory.mktemp("analysis") / "sample.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, engine.SAMPLE_CRAWL, Config(), jobs=1)
        return load_fingerprints(store, Config(), jobs=1)


def test_a_subset_of_analysed_fingerprints_scores_its_own_pairs(sample_fp: Fingerprints) -> None:
    keep = np.arange(len(sample_fp.pages)) % 2 == 0
    fresh = analyze(subset_fingerprints(sample_fp, keep), Config())
    analyze(sample_fp, Config())  # the full set's pair index is made here
    after = analyze(subset_fingerprints(sample_fp, keep), Config())
    pd.testing.assert_frame_equal(after.pages, fresh.pages)
    assert after.numbers == fresh.numbers


@pytest.mark.parametrize("threshold", [0.7, 0.8, 0.9, 1.0])
def test_each_threshold_names_the_representatives_pick_representatives_names(
    sample_fp: Fingerprints, threshold: float
) -> None:
    pages = analyze(sample_fp, Config(threshold=threshold)).pages
    content = pages[pages["cluster_id"].notna()]
    reps = pick_representatives(content)
    by_page = reps.loc[content["cluster_id"]]
    assert (content["representative_id"].to_numpy() == by_page["representative_id"].to_numpy()).all()
    assert (content["representative_url"].to_numpy() == by_page["representative_url"].to_numpy()).all()
    assert (content["why"].to_numpy() == by_page["why"].to_numpy()).all()
    degenerate = pages[pages["cluster_id"].isna()]
    assert (
        len(degenerate) and degenerate["representative_url"].isna().all() and degenerate["why"].isna().all()
    )
    # the page's own URL where it represents its cluster (a string column, as the store's URLs)
    own = content[content["is_representative"]]
    assert (own["representative_url"] == own["canonical_url"]).all()
    assert pages["representative_url"].dtype == pages["canonical_url"].dtype


@pytest.mark.parametrize(("members", "warned"), [(4_000, False), (400_000, True)])
def test_capped_buckets_warn_only_where_they_are_a_share_of_the_index(
    sample_fp: Fingerprints, members: int, warned: bool
) -> None:
    """A bucket cap is fixed, a crawl's families grow with it: capped buckets holding a small share of the
    LSH index's bucket memberships (units x tables) are no sign of boilerplate."""
    stats = dataclasses.replace(sample_fp.stats, capped_buckets=8, capped_members=members, capped_index="")
    stats.warn_capped("LSH", 2000)
    fp = dataclasses.replace(sample_fp, stats=stats)
    share = members / (fp.n_units * stats.tables)
    assert (share >= CAPPED_WARN_SHARE) == warned
    capped = [w for w in analyze(fp, Config()).warnings if w.endswith(CAPPED_NOTE)]
    assert len(capped) == warned


def _big_cluster_warnings(tmp_path: Path, config: Config) -> list[str]:
    body = " ".join(f"term{i}" for i in range(120))
    recs = [
        {"url": f"https://e.com/p{i}", "html": f"<html><body><p>{body}</p></body></html>"} for i in range(25)
    ]
    path = write_jsonl(tmp_path / "b.jsonl", recs)
    with Store(tmp_path / f"{config.normalize}-{config.threshold}.duckdb") as store:
        engine.ingest_file(store, path, config, jobs=1)
        analysis = analyze(load_fingerprints(store, config, jobs=1), config)
    return [w for w in analysis.warnings if "largest cluster holds" in w]


@pytest.mark.parametrize(
    ("config", "advised", "not_advised"),
    [
        (Config(normalize="strip"), ["normalize: main", "tighter threshold"], []),
        (Config(), ["tighter threshold"], ["normalize: main"]),
        (Config(threshold=1.0), [], ["normalize: main", "tighter threshold"]),
        (Config().with_method("simhash"), ["tighter threshold"], ["normalize: main"]),
        (Config().with_method("simhash").replace(threshold=0), [], ["normalize", "tighter"]),
    ],
    ids=["strip", "main", "tightest-minhash", "simhash-main", "tightest-simhash"],
)
def test_the_big_cluster_warning_never_advises_a_setting_in_force(
    tmp_path: Path, config: Config, advised: list[str], not_advised: list[str]
) -> None:
    (warning,) = _big_cluster_warnings(tmp_path, config)
    assert all(a in warning for a in advised), warning
    assert not any(a in warning for a in not_advised), warning


@pytest.mark.parametrize("threshold", [0.7, 0.9])
def test_clusters_are_numbered_alike_whatever_the_order_of_the_pages(
    sample_fp: Fingerprints, threshold: float
) -> None:
    keep = pairs_at_threshold(sample_fp, Config(threshold=threshold))
    order = np.random.default_rng(3).permutation(len(sample_fp.pages))  # not in page id order
    shuffled = dataclasses.replace(sample_fp, arrays={k: v[order] for k, v in sample_fp.arrays.items()})
    in_order, out_of_order = number_clusters(sample_fp, keep), number_clusters(shuffled, keep)
    assert np.array_equal(in_order.cluster[order], out_of_order.cluster)
    assert np.array_equal(in_order.sizes, out_of_order.sizes)
    assert in_order.n_clusters > 0 and (np.diff(in_order.sizes) <= 0).all()


_URLS = st.sampled_from(
    ["https://a.example/", "https://a.example/x", "https://b.example/", "https://b.example/y"]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.sampled_from(["0" * 32, "f" * 32, "0" * 31 + "1", "ab" * 16])), max_size=30
    )
)
def test_string_codes_are_pandas_factorize_codes(values: list[str | None]) -> None:
    """MD5s compared as 64-bit words (or, with a null or another length, hashed as strings) get the codes
    `pd.factorize` gives."""
    want = pd.factorize(pd.Series(values, dtype=object))[0]
    for kind in (pa.string(), pa.large_string()):
        assert (string_codes(pa.array(values, kind)) == want).all()
        if len(values) > 2:  # an array that starts inside its buffers
            assert (
                string_codes(pa.array(values, kind).slice(2)) == pd.factorize(pd.Series(values[2:]))[0]
            ).all()
        # in chunks, as DuckDB reads a column: one of them empty, one starting inside its buffers
        cut = len(values) // 2
        whole = pa.array(["x" * 32, *values], kind)
        chunked = pa.chunked_array([whole.slice(1, cut), pa.array([], kind), whole.slice(1 + cut)])
        assert (string_codes(chunked) == want).all()
    varied = [*values, "short"]
    assert (string_codes(pa.array(varied)) == pd.factorize(pd.Series(varied, dtype=object))[0]).all()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_URLS, st.one_of(st.none(), _URLS), st.integers(0, 3)), min_size=1, max_size=25),
    st.sampled_from(
        [("canonical", "earliest", "shortest"), ("shortest", "canonical"), ("newest", "canonical")]
    ),
)
def test_naming_codes_choose_the_representatives_of_every_url_coded(
    pages: list[tuple[str, str | None, int]], rule: tuple[str, ...]
) -> None:
    """Only the URLs a rel=canonical names get codes of their own (`naming_codes`): the representatives
    and reasons are those of every canonical and rel=canonical URL factorized together."""
    canonical, rel, cluster = (list(c) for c in zip(*pages, strict=True))
    n = len(pages)
    codes = pd.factorize(pd.Series(canonical + rel, dtype=object))[0]
    url_id, rel_id = naming_codes(pa.array(canonical), pa.array(rel, pa.string()))
    rest = (np.full(n, -1, dtype=np.int64), np.arange(n, dtype=np.int64) % 3, np.arange(n, dtype=np.int64))
    want = representative_rows(np.array(cluster), codes[:n], codes[n:], *rest, rule)
    got = representative_rows(np.array(cluster), url_id, rel_id, *rest, rule)
    assert (want[0] == got[0]).all() and (want[1] == got[1]).all()


def _numbered_by_lexsort(fp: Fingerprints, keep: np.ndarray) -> ClusterNumbering:
    """The numbering `number_clusters` gives, by its definition: components of units, ranked by size (largest
    first), then by first page id, with a sort of both keys over every component."""
    unit, page_id = fp.arrays["unit"], fp.arrays["page_id"]
    idx = np.flatnonzero(unit >= 0)
    comp = components(fp.n_units, fp.pairs["a"][keep], fp.pairs["b"][keep])[unit[idx]]
    present, inverse, counts = np.unique(comp, return_inverse=True, return_counts=True)
    first = np.full(len(present), np.iinfo(np.int64).max)
    np.minimum.at(first, inverse, page_id[idx])
    rank = np.empty(len(present), dtype=np.int64)
    rank[np.lexsort((first, -counts))] = np.arange(1, len(present) + 1)
    cluster, size = np.zeros(len(unit), dtype=np.int64), np.zeros(len(unit), dtype=np.int64)
    cluster[idx], size[idx] = rank[inverse], counts[inverse]
    sizes = np.empty(len(present), dtype=np.int64)
    sizes[rank - 1] = counts
    return ClusterNumbering(cluster, size, sizes)


@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(1, 12), st.booleans())
def test_clusters_are_numbered_by_size_then_first_page(
    data: st.DataObject, n_units: int, in_order: bool
) -> None:
    """`number_clusters` (a sort of the multi-page components only) numbers the clusters as a sort of every
    component by size and first page id does, with the pages in page id order or not."""
    n_pages = data.draw(st.integers(0, 30))
    unit = np.array(data.draw(st.lists(st.integers(-1, n_units - 1), min_size=n_pages, max_size=n_pages)))
    page_id = np.arange(1, n_pages + 1, dtype=np.int64)
    if not in_order:
        page_id = np.array(data.draw(st.permutations(page_id.tolist())), dtype=np.int64)
    edges = data.draw(
        st.lists(st.tuples(st.integers(0, n_units - 1), st.integers(0, n_units - 1)), max_size=15)
    )
    a = np.array([min(e) for e in edges], dtype=np.int32)
    b = np.array([max(e) for e in edges], dtype=np.int32)
    fp = Fingerprints(
        Config(),
        pd.DataFrame(),
        n_units,
        {"a": a, "b": b},
        None,
        None,
        CandidateStats(),
        arrays={"unit": unit.astype(np.int64), "page_id": page_id},
    )
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a))), dtype=bool)
    got, want = number_clusters(fp, keep), _numbered_by_lexsort(fp, keep)
    assert (got.cluster == want.cluster).all() and (got.size == want.size).all()
    assert (got.sizes == want.sizes).all()


def test_loaded_pages_have_the_units_and_codes_of_their_columns(tmp_path: Path) -> None:
    """The page query's unit per page (a join) is the unit of the page's text, and the page arrays made
    through Arrow are those `pd.factorize` and `str.len` give of the frame's columns."""
    with Store(tmp_path / "sample.duckdb") as store:
        engine.ingest_file(store, engine.SAMPLE_CRAWL, Config(), jobs=1)
        fp = load_fingerprints(store, Config(), jobs=1)
        units = store.units(Config().fingerprint_key)
    pages = fp.pages
    unit_of = pd.Series(units["unit_id"].to_numpy(), index=units["exact_key"])
    want = pages["exact_key"].map(unit_of).fillna(-1).astype(np.int64).to_numpy().copy()
    want[pages["degenerate"].notna().to_numpy()] = -1
    assert (pages["unit_id"].to_numpy() == want).all() and (fp.arrays["unit"] == want).all()
    assert (fp.arrays["md5"] == pd.factorize(pages["md5"])[0]).all()
    host_codes, hosts = pd.factorize(pages["host"])
    assert (fp.arrays["host"] == host_codes).all() and list(fp.hosts) == list(hosts)
    assert (fp.arrays["url_len"] == pages["canonical_url"].str.len().to_numpy()).all()


def _assert_lean_load_is_the_full_ones(store: Store, config: Config) -> None:
    full = load_fingerprints(store, config, jobs=1)
    lean = load_fingerprints(store, config, jobs=1, lean=True)
    assert full.arrays.keys() == lean.arrays.keys()
    for name, values in full.arrays.items():
        assert np.array_equal(values, lean.arrays[name]), name
    assert list(full.hosts) == list(lean.hosts)
    kept = ["page_id", "degenerate", "unit_id", *(("url", "canonical_url") if config.url_rules else ())]
    assert sorted(lean.pages.columns) == sorted(kept)
    pd.testing.assert_frame_equal(lean.pages[kept], full.pages[kept])


def test_a_lean_load_codes_its_columns_as_a_full_load_does(tmp_path: Path) -> None:
    """The report's load reads the coded columns a group at a time (`Store.page_column_groups`): the same
    arrays, hosts and frame columns as the full load, with URL rules, and with pages that have no text
    under the setting (their rows dropped from both)."""
    path = tmp_path / "sample.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, engine.SAMPLE_CRAWL, Config(), jobs=1)
        rules = learn_rules(analyze(load_fingerprints(store, Config(), jobs=1), Config()).pages).rules
        assert rules
        for config in (Config(), Config(url_rules=rules)):
            _assert_lean_load_is_the_full_ones(store, config)
        n_pages = store.count_pages()
    with duckdb.connect(str(path)) as con:
        con.execute("DELETE FROM texts WHERE page_id IN (SELECT page_id FROM pages ORDER BY page_id LIMIT 3)")
    with Store(path) as store:
        fp = load_fingerprints(store, Config(), jobs=1, lean=True)
        assert len(fp.pages) == n_pages - 3
        _assert_lean_load_is_the_full_ones(store, Config())
