"""analysis: what a threshold move reuses of the fingerprints, and the columns it derives per threshold."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import write_jsonl

from neardup import engine
from neardup.analysis import (
    Fingerprints,
    analyze,
    load_fingerprints,
    number_clusters,
    pairs_at_threshold,
    subset_fingerprints,
)
from neardup.candidate_stats import CAPPED_NOTE, CAPPED_WARN_SHARE
from neardup.clusters import pick_representatives
from neardup.config import Config
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
