"""Adding a crawl extends the stored fingerprints: the result is the set a full computation stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import make_crawl, write_jsonl

from neardup import engine
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
    key = config.fingerprint_key
    fset = store.fingerprint_set(key)
    assert fset is not None
    pairs = store.pairs(key).sort_values(["a", "b"]).reset_index(drop=True)
    clusters = engine.analyze(engine.load_fingerprints(store, config, jobs=1), config).pages
    return {
        "units": store.units(key, with_signatures=True),
        "pairs": pairs,
        "counts": (fset["n_units"], fset["n_pairs"]),
        "stats": fset["stats"],
        "clusters": clusters[["page_id", "cluster_id", "representative_id", "similarity_to_representative"]],
    }


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_added_crawl_gives_the_full_computation(tmp_path: Path, method: str) -> None:
    config = Config(method="minhash") if method == "minhash" else Config(method="simhash", threshold=4)
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

    pairs = full["pairs"]
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


def test_a_set_numbered_otherwise_is_computed_again(tmp_path: Path) -> None:
    """Units stored in another order than their first pages' (as an older neardup stored them) are not
    extended: the new units' ids would not be what a full computation gives them."""
    config = Config()
    base, added = _crawls(tmp_path)
    with Store(tmp_path / "db.duckdb") as store:
        engine.ingest_file(store, base, config, jobs=1)
        engine.ensure_fingerprints(store, config, jobs=1)
        key = config.fingerprint_key
        units = store.units(key, with_signatures=True)
        units["unit_id"] = units["unit_id"].to_numpy()[::-1].copy()
        fset = store.fingerprint_set(key)
        assert fset is not None
        store.save_fingerprints(
            key,
            norm_key=config.norm_key,
            method=config.method,
            shingle_size=config.shingle_size,
            units=units,
            pairs=store.pairs(key).iloc[:0],
            stats=fset["stats"],
            seconds=0.0,
        )
        engine.ingest_file(store, added, config, jobs=1)
        with store.writing():
            assert extend_fingerprints(store, config) is None
        engine.ensure_fingerprints(store, config, jobs=1)
        assert store.units(key)["unit_id"].tolist() == list(range(store.count_units(config.norm_key)))
        assert len(store.pairs(key))
