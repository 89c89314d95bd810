"""The Tune page on too few labels: nothing it shows is a primary recommendation until the stop rule is met,
a threshold flagging only unlabeled buckets has no recall point (not 0), and one button takes the analyst to
the pairs that decide it."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_driver import run_app

from neardup import audit
from neardup.analysis import load_fingerprints
from neardup.config import Config, save_config
from neardup.store import Store


def test_tune_on_a_few_labels_recommends_nothing_primary(
    db: str, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config(verify="estimate")  # spreads this database's pairs over several buckets
    save_config(config, tmp_path / "dupcheck.yaml")
    monkeypatch.setenv("NEARDUP_CONFIG", str(tmp_path / "dupcheck.yaml"))
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    buckets = sorted(pairs["bucket"].unique())
    assert len(buckets) >= 3
    # three labels, all in the lowest bucket: the buckets above it are unlabeled
    for row in pairs[pairs["bucket"] == buckets[0]].head(3).itertuples():
        store.record_label(row.url_a, row.url_b, md5_a=row.md5_a, md5_b=row.md5_b, label="duplicate")
    at = run_app("pages/4_Tune.py")
    # the caption says how many pairs the labels do not reach: the interval covers them, the point leaves them out
    n_unlabeled = int((pairs["bucket"] != buckets[0]).sum())
    [said] = [c.value for c in at.caption if "in buckets without labels" in c.value]
    assert f"{n_unlabeled} of the {len(pairs)} candidate pairs are in buckets without labels" in said, said
    est = at.dataframe[0].value.set_index("threshold")
    above = est[est.index > buckets[0]]
    only_unlabeled = above[above["labels"] == 0]
    assert len(only_unlabeled), est
    # no point estimate where no flagged bucket is labeled: the interval says how little is known
    assert only_unlabeled["recall"].isna().all(), only_unlabeled
    assert (only_unlabeled["recall_high"] - only_unlabeled["recall_low"] > 0.5).all()
    assert not any("You can stop labeling" in s.value for s in at.success)
    use = [b for b in at.button if b.label == "Use this threshold"]
    assert all(b.proto.type != "primary" for b in use)
    assert not use or any("Provisional" in c.value for c in at.caption)
    [more] = [b for b in at.button if b.label.startswith("Label the ")]
    n = int(more.label.split()[2])
    assert n > 0 and "pairs that decide this" in more.label
    more.click().run()
    assert not at.exception, at.exception
    assert at.title[0].value.startswith("Audit")
    assert at.session_state["neardup.audit.queue"] == "active"
