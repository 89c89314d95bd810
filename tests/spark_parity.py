"""What the Spark tests compare: `neardup spark`'s output tables against the local engine's store."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from neardup.analysis import analyze, load_fingerprints
from neardup.config import Config
from neardup.store import Store


def spark_conf_flags(conf: Mapping[str, str]) -> list[str]:
    """`--conf KEY=VALUE` flags of `neardup spark`, one pair per setting, in the mapping's order."""
    return [flag for key, value in conf.items() for flag in ("--conf", f"{key}={value}")]


SPARK_CONF = [
    "--master",
    "local[2]",
    *spark_conf_flags(
        {
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "4",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": "1g",
            "spark.sql.files.maxPartitionBytes": "2000000",
            "spark.sql.adaptive.enabled": "false",  # re-planning costs more than it saves on 600 pages
            "neardup.logLevel": "ERROR",
        }
    ),
]


def output_table(out: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(out / name)


def assert_matches_local(out: Path, manifest: dict, store: Store, config: Config) -> pd.DataFrame:
    """Spark's units, pairs, clusters, representatives, numbers and candidate statistics equal the local
    engine's on the same records under `config`; returns the pairs."""
    fp = load_fingerprints(store, config, jobs=1)
    analysis = analyze(fp, config)

    # fingerprints per exact key (and the same unit numbering)
    units = output_table(out, "units").sort_values("unit_id").reset_index(drop=True)
    want_units = store.units(config.fingerprint_key, with_signatures=True)
    assert units["exact_key"].tolist() == want_units["exact_key"].tolist()
    assert units["n_shingles"].tolist() == want_units["n_shingles"].tolist()
    if config.method == "simhash":
        got_fp = units["simhash"].to_numpy(dtype=np.int64).view(np.uint64)
        assert (got_fp == want_units["simhash"].to_numpy(dtype=np.uint64)).all()
    else:
        assert [bytes(b) for b in units["minhash"]] == [bytes(b) for b in want_units["minhash"]]

    # the same verified pairs with the same similarities, down to the loosest threshold
    pairs = output_table(out, "pairs")
    want_pairs = store.pairs(config.fingerprint_key)
    assert len(pairs) == len(want_pairs) > 0
    score_cols = ["hamming_bits"] if config.method == "simhash" else ["jaccard", "containment"]
    got = pairs.set_index(["a", "b"]).sort_index()[score_cols]
    want = want_pairs.set_index(["a", "b"]).sort_index()[score_cols]
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    page_of = analysis.pages[analysis.pages["unit_id"] >= 0].groupby("unit_id")["page_id"].min()
    assert (pairs["page_a"].to_numpy() == page_of.reindex(pairs["a"]).to_numpy()).all()

    # the same clusters: as partitions of pages and of urls, with the same ids and representatives
    clusters = output_table(out, "clusters").set_index("page_id").sort_index()
    content = analysis.pages[analysis.pages["cluster_id"].notna()].set_index("page_id").sort_index()
    assert clusters.index.tolist() == content.index.tolist()
    assert clusters["cluster_id"].tolist() == content["cluster_id"].astype(int).tolist()
    for col in ["cluster_size", "representative_id", "representative_url", "why", "is_representative"]:
        assert clusters[col].tolist() == content[col].tolist(), col
    as_urls = {frozenset(g) for g in clusters.groupby("cluster_id")["url"].agg(frozenset)}
    assert as_urls == {frozenset(g) for g in content.groupby("cluster_id")["url"].agg(frozenset)}
    assert manifest["numbers"] == analysis.numbers
    assert analysis.numbers["near_duplicates"] > 0
    assert manifest["candidate_stats"] == fp.stats.as_dict()
    return pairs
