"""Adding a crawl extends the stored fingerprints: the result is the set a full computation stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import make_crawl, write_jsonl

from neardup import analysis, engine
from neardup.config import Config
from neardup.incremental import BucketCapped, extend_fingerprints, minhash_new_pairs
from neardup.store import Store


def _crawls(tmp_path: Path) -> tuple[Path, Path]:
    """A base crawl and an added one: the added crawl repeats base texts, edits some of them (pairs of a
    stored and a new unit) and brings stories of its own with their edits (pairs of two new units)."""
    recs = make_crawl(seed=3, n_articles=8, n_edits=6).records
    added = recs[1::2] + [dict(r, fetched_at="2024-06-01") for r in make_crawl(seed=5).records]
    return write_jsonl(tmp_path / "base.jsonl", recs[::2]), write_jsonl(tmp_path / "added.jsonl", added)


def _state(store: Store, config: Config) -> dict[str, Any]:
    """The fingerprint set as a user sees it: units and pairs by text (unit ids are internal), clusters."""
    key = config.fingerprint_key
    fset = store.fingerprint_set(key)
    assert fset is not None
    units = store.units(key, with_signatures=True)
    text_of = units["exact_key"].to_numpy()
    pairs = store.pairs(key)
    a, b = text_of[pairs.pop("a")], text_of[pairs.pop("b")]
    pairs.insert(0, "text_a", np.minimum(a, b))
    pairs.insert(1, "text_b", np.maximum(a, b))
    clusters = analysis.analyze(analysis.load_fingerprints(store, config, jobs=1), config).pages
    return {
        "units": units.drop(columns="unit_id").sort_values("exact_key").reset_index(drop=True),
        "pairs": pairs.sort_values(["text_a", "text_b"]).reset_index(drop=True),
        "counts": (fset["n_units"], fset["n_pairs"]),
        "stats": fset["stats"],
        "clusters": clusters[["page_id", "cluster_id", "representative_id", "similarity_to_representative"]],
    }


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_added_crawl_gives_the_full_computation(tmp_path: Path, method: str) -> None:
    # The size-class pass (`partial_copies`) is computed again, not extended: MinHash here without it.
    minhash = Config(method="minhash", partial_copies=False)
    config = minhash if method == "minhash" else Config(method="simhash", threshold=4)
    base, added = _crawls(tmp_path)
    with Store(tmp_path / "full.duckdb") as store:
        for f in (base, added):
            engine.ingest_file(store, f, config, jobs=1)
        engine.ensure_fingerprints(store, config, jobs=1)
        full = _state(store, config)
    with Store(tmp_path / "incremental.duckdb") as store:
        engine.ingest_file(store, base, config, jobs=1)
        n_old = engine.ensure_fingerprints(store, config, jobs=1)["n_units"]
        engine.ingest_file(store, added, config, jobs=1)
        with store.writing():
            assert extend_fingerprints(store, config) is not None
        incremental = _state(store, config)
        pairs = store.pairs(config.fingerprint_key)  # by unit id: the stored ones come first
        ids = store.units(config.fingerprint_key)["unit_id"].tolist()

    assert ids == list(range(incremental["counts"][0]))
    assert ((pairs["a"] < n_old) & (pairs["b"] >= n_old)).any()  # a stored unit and a new one
    assert (pairs["a"] >= n_old).any()  # two new units
    assert (pairs["b"] < n_old).any()  # two stored units
    for name in ("units", "pairs", "clusters"):
        pd.testing.assert_frame_equal(incremental[name], full[name], check_exact=True)
    assert incremental["counts"] == full["counts"]
    assert incremental["stats"] == full["stats"]


def test_a_bucket_the_full_computation_caps_is_not_extended() -> None:
    """Three equal signatures, a cap of two: the full computation would not expand the bucket, so the
    stored pair of the first two would be gone; extending it cannot give that result."""
    sigs = np.ones((3, 128), dtype=np.uint32)
    with pytest.raises(BucketCapped):
        minhash_new_pairs(sigs, np.full(3, 50), 2, Config(), bucket_cap=2)
