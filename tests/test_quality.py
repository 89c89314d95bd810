"""Quality gate on the bundled sample crawl's ground truth (trafilatura-style eval gate).

Floors a regression would break: pairwise F1 >= 0.95 at the default setting, no cluster that merges two
true documents (templated siblings, shared disclaimers, another article in the same template), and
no degenerate page (soft-404, access denied, loading shell) clustered with anything.

Every gate runs on both forms of the sample: the JSON lines and the WARC.gz of the same fetches
(windows-1252, gzip-encoded, chunked and revisit records), which must give the same numbers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neardup import engine
from neardup.config import Config
from neardup.evaluate import load_truth, pairwise_scores
from neardup.store import Store

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"


FORMS = ["crawl.jsonl.gz", "crawl.warc.gz"]


def _load(tmp_path_factory, name):
    store = Store(tmp_path_factory.mktemp("quality") / "sample.duckdb")
    engine.ingest_file(store, SAMPLE / name, Config(), jobs=1)
    return store


@pytest.fixture(scope="module", params=FORMS)
def sample_store(request, tmp_path_factory):
    store = _load(tmp_path_factory, request.param)
    yield store
    store.close()


@pytest.fixture(scope="module")
def truth():
    return load_truth(SAMPLE / "truth.csv")


def _scores(store, truth, config):
    fp = engine.load_fingerprints(store, config, jobs=1)
    return pairwise_scores(engine.analyze(fp, config).pages, truth)


def test_default_setting_meets_the_gate(sample_store, truth):
    s = _scores(sample_store, truth, Config())
    assert s.f1 >= 0.95, s
    assert s.precision >= 0.98, s
    assert s.impure_clusters == 0, s
    assert s.degenerate_in_clusters == 0, s
    assert s.degenerate_caught == s.degenerate_total > 0, s
    assert s.content_set_aside == 0, s


def test_simhash_default_is_usable(sample_store, truth):
    s = _scores(sample_store, truth, Config().with_method("simhash"))
    assert s.precision >= 0.98 and s.recall >= 0.85, s
    assert s.degenerate_in_clusters == 0, s


def test_tag_stripping_with_jaccard_is_weaker_on_partial_copies(sample_store, truth):
    """Print versions and syndicated copies: containment over main text finds what Jaccard misses."""
    strip_jaccard = _scores(sample_store, truth, Config(normalize="strip", similarity="jaccard", threshold=0.8))
    main_containment = _scores(sample_store, truth, Config())
    assert main_containment.recall > strip_jaccard.recall


def test_a_loose_threshold_merges_hard_negatives(sample_store, truth):
    """The sample must be able to fail: at containment 0.7 templated siblings merge (the gate's
    impure-cluster floor breaks), and with signature estimates instead of exact scores they merge by
    the dozen (an estimate that passed the floor is biased upwards)."""
    exact = _scores(sample_store, truth, Config(threshold=0.7))
    assert exact.impure_clusters > 0, exact
    estimate = _scores(sample_store, truth, Config(threshold=0.7, verify="estimate"))
    assert estimate.precision < 0.9 < exact.precision, (estimate, exact)
    assert estimate.impure_clusters > exact.impure_clusters
    assert estimate.recall == exact.recall == 1.0


def test_both_forms_give_the_same_numbers(tmp_path_factory, truth):
    stores = [_load(tmp_path_factory, name) for name in FORMS]
    try:
        for config in (Config(), Config().with_method("simhash")):
            (a, sa), (b, sb) = [(engine.analyze(engine.load_fingerprints(s, config, jobs=1), config),
                                 _scores(s, truth, config)) for s in stores]
            assert a.numbers == b.numbers and sa == sb
            cols = ["line", "url", "md5", "status", "fetched_at", "cluster_id"]
            assert a.pages[cols].equals(b.pages[cols])
    finally:
        for s in stores:
            s.close()
