"""The Audit page's queues without the page: each queue class picks the pairs its rule names, passes over
labeled and skipped pairs, and says why a pair comes and why none is left."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from conftest import modules_imported_by

from neardup import audit
from neardup.config import Config
from neardup.labels import ADJUDICATOR, active_queue, audit_queue, bucket_of, bucket_tallies
from neardup.queues import (
    MORE_PER_BUCKET,
    PER_BUCKET_MAX,
    ActiveQueue,
    AuditQueue,
    ContestedQueue,
    DisagreementQueue,
    QueueBasis,
    QuotaQueue,
    pair_queue,
    queue_help,
)

CONFIG = Config(method="minhash", threshold=0.8, similarity="jaccard")
SIMHASH = Config(method="simhash", threshold=3)
T0 = datetime(2026, 1, 1, 12)


def minhash_pairs(n: int = 200, seed: int = 1) -> pd.DataFrame:
    """`n` candidate pairs with Jaccard scores from 0.5 to 1.0, their buckets at CONFIG."""
    rng = np.random.default_rng(seed)
    scores = np.round(rng.uniform(0.5, 1.0, n), 3)
    return pd.DataFrame(
        {
            "url_a": [f"https://a.example/{i}" for i in range(n)],
            "md5_a": [f"a{i}" for i in range(n)],
            "url_b": [f"https://b.example/{i}" for i in range(n)],
            "md5_b": [f"b{i}" for i in range(n)],
            "score": scores,
            "bucket": bucket_of(scores, CONFIG),
            "page_a": np.arange(n) * 2 + 1,
            "page_b": np.arange(n) * 2 + 2,
        }
    )


def labels_frame(rows: list[tuple[audit.PairKey, str, str | None]]) -> pd.DataFrame:
    """A `Store.labels()` frame of (key, label, labeler) rows, one second apart."""
    return pd.DataFrame(
        [
            {"url_a": a, "md5_a": ma, "url_b": b, "md5_b": mb, "label": label, "category": None, "note": None}
            | {"labeler": who, "labeled_at": T0 + timedelta(seconds=i), "setting": None}
            for i, ((a, ma, b, mb), label, who) in enumerate(rows)
        ],
        columns=[*audit.PAIR_KEY, "label", "category", "note", "labeler", "labeled_at", "setting"],
    )


def basis(
    pairs: pd.DataFrame,
    labels: pd.DataFrame | None = None,
    *,
    config: Config = CONFIG,
    per_bucket: int = 2,
    skipped: set[tuple[str, ...]] | None = None,
) -> QueueBasis:
    labels = labels_frame([]) if labels is None else labels
    index = audit.pair_index(pairs)
    matched = audit.labeled_pairs(pairs, labels, index=index)
    return QueueBasis(
        pairs=pairs,
        labels=labels,
        matched=matched,
        tallies=bucket_tallies(pairs["bucket"], matched),
        config=config,
        per_bucket=per_bucket,
        seed=7,
        skipped=skipped or set(),
        positions=index.exact,
    )


def key(row: pd.Series) -> tuple[str, ...]:
    return tuple(row[audit.PAIR_KEY])


def test_queue_names_are_the_url_values_and_the_display_names_come_from_the_queue_classes() -> None:
    assert [q.value for q in AuditQueue] == ["quota", "active", "disagree", "contested"]  # links keep working
    assert [q.display_name for q in AuditQueue] == [
        "quota per bucket",
        "active",
        "SimHash vs MinHash disagree",
        "labelers disagree",
    ]
    assert AuditQueue("active") is AuditQueue.ACTIVE and AuditQueue.ACTIVE == "active"
    assert [q for q in AuditQueue if q.compares_methods] == [AuditQueue.DISAGREE]
    assert [q for q in AuditQueue if q.adjudicates] == [AuditQueue.CONTESTED]
    assert "*SimHash vs MinHash disagree*: pairs one method flags" in queue_help()
    assert ADJUDICATOR in queue_help()


def test_pair_queue_makes_the_class_of_each_queue() -> None:
    pairs = minhash_pairs(4)
    made = {q: pair_queue(q, other_pairs=pairs, other=SIMHASH) for q in AuditQueue}
    assert {q: type(p) for q, p in made.items()} == {
        AuditQueue.QUOTA: QuotaQueue,
        AuditQueue.ACTIVE: ActiveQueue,
        AuditQueue.DISAGREE: DisagreementQueue,
        AuditQueue.CONTESTED: ContestedQueue,
    }
    assert all(p.kind is q for q, p in made.items())
    with pytest.raises(ValueError, match="other method"):
        pair_queue(AuditQueue.DISAGREE)


def test_quota_queue_fills_each_bucket_to_its_quota_nearest_the_threshold_first() -> None:
    pairs = minhash_pairs()
    queue = QuotaQueue()
    picked = queue.pairs(basis(pairs, per_bucket=2))
    assert picked["bucket"].value_counts().max() == 2
    assert set(picked["bucket"]) == set(pairs["bucket"])  # every bucket has pairs, so every bucket comes
    distance = (picked["bucket"] - CONFIG.threshold).abs().to_numpy()
    assert (np.diff(distance) >= -1e-12).all()  # nearest the threshold first
    # the same pick as labels.audit_queue: the queue is the page's wiring of it, not a second rule
    expected = audit_queue(pairs, basis(pairs).matched, per_bucket=2, seed=7, skipped=set(), focus=0.8)
    pd.testing.assert_frame_equal(picked, expected)

    first = picked.iloc[0]
    labeled = labels_frame([(key(first), "duplicate", "ana")])
    skipped = {key(picked.iloc[1])}
    after = queue.pairs(basis(pairs, labeled, per_bucket=2, skipped=skipped))
    keys = {key(r) for _, r in after.iterrows()}
    assert key(first) not in keys and not keys & skipped
    assert len(after) == len(picked) - 1  # the decided label counts; the skip brings the bucket's next pair

    caption = queue.caption(basis(pairs), first, "Pair 1 of 9", 9)
    assert caption.startswith("Pair 1 of 9 to label (9 left) · similarity bucket [")
    assert f"jaccard (this pair {np.floor(first['score'] * 100) / 100:.2f})" in caption
    assert "2 decided labels per bucket" in caption


def test_quota_queue_offers_more_pairs_only_while_a_bucket_has_pairs_left() -> None:
    pairs = minhash_pairs()
    queue = QuotaQueue()
    # the least labeled bucket (no label yet) gets MORE_PER_BUCKET, and the quota always goes up
    assert queue.more_quota(basis(pairs, per_bucket=2)) == MORE_PER_BUCKET
    assert queue.more_quota(basis(pairs, per_bucket=MORE_PER_BUCKET)) == MORE_PER_BUCKET + 1
    assert queue.more_quota(basis(pairs, per_bucket=PER_BUCKET_MAX - 1)) == PER_BUCKET_MAX
    assert queue.more_quota(basis(pairs, per_bucket=PER_BUCKET_MAX)) is None
    all_labeled = labels_frame([(key(r), "not", "ana") for _, r in pairs.iterrows()])
    assert queue.more_quota(basis(pairs, all_labeled, per_bucket=2)) is None
    assert "Every pair at this setting is labeled or skipped" in queue.done_message(basis(pairs, all_labeled))
    assert "200 decided labels at this setting, 0 pairs skipped" in queue.done_message(
        basis(pairs, all_labeled)
    )


def test_quota_queue_done_offers_the_more_key_only_when_it_brings_pairs() -> None:
    pairs = minhash_pairs()
    queue = QuotaQueue()
    full = labels_frame(
        [(key(r), "not", "ana") for _, r in queue.pairs(basis(pairs, per_bucket=2)).iterrows()]
    )
    assert queue.more_quota(basis(pairs, full, per_bucket=2)) is not None
    assert "For more, press **m**" in queue.done_message(basis(pairs, full, per_bucket=2))
    # every pair labeled: no key brings more, and the page draws none
    all_labeled = labels_frame([(key(r), "not", "ana") for _, r in pairs.iterrows()])
    said = queue.done_message(basis(pairs, all_labeled, per_bucket=2))
    assert "**m**" not in said and "Pairs per bucket" not in said
    assert said.startswith("Every pair at this setting is labeled or skipped (200 decided labels")


def test_active_queue_serves_the_decisive_buckets_until_the_stop_rule_holds() -> None:
    pairs = minhash_pairs()
    queue = ActiveQueue()
    b = basis(pairs)
    picked = queue.pairs(b)
    expected = active_queue(pairs, b.matched, b.tallies, CONFIG, seed=7, skipped=set())
    pd.testing.assert_frame_equal(picked, expected)
    assert len(picked) > 0
    assert queue.more_quota(b) is None
    caption = queue.caption(b, picked.iloc[0], "Pair 1 of 5", 5)
    assert caption.startswith("Pair 1 of 5 (5 left) in the buckets that narrow the decision · bucket [")
    assert "at 0.8 most" in caption
    skipped = {key(r) for _, r in picked.iterrows()}
    assert queue.pairs(basis(pairs, skipped=skipped)).empty  # every pair skipped: nothing left
    assert queue.done_message(basis(pairs, skipped=skipped)).startswith("Stop: precision at 0.8 is ")


def test_disagreement_queue_serves_the_pairs_one_method_flags_and_the_other_does_not() -> None:
    pairs = minhash_pairs(6)
    # the same pairs under SimHash: the first three within 3 bits, the rest far
    sim = pairs.assign(score=[1, 2, 3, 10, 12, 20], bucket=[1.0, 2.0, 3.0, 10.0, 12.0, 20.0])
    queue = DisagreementQueue(sim, SIMHASH)
    b = basis(pairs)
    picked = queue.pairs(b)
    by_mh = pairs["score"] >= 0.8
    by_sim = pd.Series([True, True, True, False, False, False])
    expected = {key(r) for (_, r), m, s in zip(pairs.iterrows(), by_mh, by_sim, strict=True) if m != s}
    assert {key(r) for _, r in picked.iterrows()} == expected and expected
    # the queue is the same from either side: the page's setting may be SimHash with MinHash the other
    from_simhash = DisagreementQueue(pairs, CONFIG).pairs(basis(sim, config=SIMHASH))
    pd.testing.assert_frame_equal(picked, from_simhash)

    first = picked.iloc[0]
    url_only = (first["url_a"], "", first["url_b"], "")  # a label without hashes covers every fetch
    assert key(first) not in {
        key(r) for _, r in queue.pairs(basis(pairs, labels_frame([(url_only, "not", "ana")]))).iterrows()
    }
    assert key(first) not in {key(r) for _, r in queue.pairs(basis(pairs, skipped={key(first)})).iterrows()}

    caption = queue.caption(b, first, "Pair 1 of 2", 2)
    assert caption.startswith(
        f"Pair 1 of 2 (2 left) SimHash and MinHash disagree on · flagged by {first['flagged_by']}"
    )
    assert "(threshold 3)" in caption and "(threshold 0.8)" in caption
    assert queue.done_message(b) == (
        "SimHash at 3 bits and MinHash at 0.8 jaccard flag the same pairs, apart from pairs labeled or skipped."
    )


def test_contested_queue_serves_pairs_the_labelers_disagree_on_until_adjudicated() -> None:
    pairs = minhash_pairs(5)
    contested, agreed = key(pairs.iloc[1]), key(pairs.iloc[3])
    hostile = "[sign in](https://evil.example/)"
    labels = labels_frame(
        [
            (contested, "duplicate", "ana"),
            (contested, "not", hostile),
            (agreed, "not", "ana"),
            (agreed, "not", "ben"),
        ]
    )
    queue = ContestedQueue()
    picked = queue.pairs(basis(pairs, labels))
    assert [key(r) for _, r in picked.iterrows()] == [contested]
    caption = queue.caption(basis(pairs, labels), picked.iloc[0], "Pair 1 of 1", 1)
    assert caption.startswith("Pair 1 of 1 (1 left) contested · bucket [")
    assert "ana: duplicate" in caption and caption.endswith("your label is the adjudicated final one")
    assert "](" not in caption and "\\[sign in\\]" in caption  # a labeler's name never becomes a link
    assert queue.pairs(basis(pairs, labels, skipped={contested})).empty
    settled = labels_frame(
        [(contested, "duplicate", "ana"), (contested, "not", "ben"), (contested, "not", ADJUDICATOR)]
    )
    assert queue.pairs(basis(pairs, settled)).empty
    assert queue.done_message(basis(pairs, settled)).startswith("No contested pair")


def test_the_queues_and_their_text_load_without_streamlit() -> None:
    """The queue logic is the engine's: the CLI, a bench or a test uses it without the app's stack."""
    loaded = modules_imported_by("import neardup.queues, neardup.markdown")
    assert "neardup.queues" in loaded and not any(m.split(".")[0] == "streamlit" for m in loaded)
