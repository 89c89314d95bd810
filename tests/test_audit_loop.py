"""The Audit page's label loop without the page: the labels' version, the kept view of them, and the
labeled pairs updated after one label against the same computed from scratch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neardup import audit
from neardup.diff import word_diff
from neardup.labels import audit_queue, bucket_tallies
from neardup.store import Store
from neardup.ui.data import label_view, label_view_after, label_view_with

PAIRS = pd.DataFrame(
    [
        # url_a, md5_a, url_b, md5_b, bucket, score, page_a, page_b
        ("a", "1", "b", "2", 0.95, 0.97, 1, 2),
        ("a", "1", "c", "3", 0.95, 0.96, 1, 3),
        ("a", "9", "c", "3", 0.85, 0.88, 4, 3),  # the same two URLs, another fetch of a
        ("d", "4", "e", "5", 0.85, 0.86, 5, 6),
        ("f", "6", "g", "7", 0.8, 0.81, 7, 8),
    ],
    columns=[*audit.PAIR_KEY, "bucket", "score", "page_a", "page_b"],
)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store(tmp_path / "loop.duckdb") as s:
        yield s


def canonical(matched: pd.DataFrame) -> pd.DataFrame:
    cols = [*audit.PAIR_KEY, "bucket", "label", "category", "labeler", "labelers", "contested"]
    return matched[cols].sort_values(audit.PAIR_KEY).reset_index(drop=True).astype(object)


def test_labels_version_changes_with_every_write(store: Store) -> None:
    versions = [store.labels_version()]
    store.record_label("a", "b", md5_a="1", md5_b="2", label="duplicate", labeler="ana")
    versions.append(store.labels_version())
    store.record_label("a", "b", md5_a="1", md5_b="2", label="not", labeler="ana")  # same count
    versions.append(store.labels_version())
    store.record_label("a", "b", md5_a="1", md5_b="2", label="not", category="print version", labeler="ana")
    versions.append(store.labels_version())
    store.delete_label("a", "b", md5_a="1", md5_b="2", labeler="ana")
    versions.append(store.labels_version())
    assert len(set(versions[:-1])) == 4 and versions[-1] == versions[0] == (0, 0)
    assert store.labels_version() == versions[-1]  # reading does not change it


def test_labeled_pairs_after_one_label_match_the_full_recompute(store: Store) -> None:
    """Each write's update (the one-row append, or the recompute it falls back to) against labeled_pairs."""
    index = audit.pair_index(PAIRS)
    matched = audit.labeled_pairs(PAIRS, store.labels(), index=index)
    writes = [
        (("a", "1", "b", "2"), "duplicate", "ana"),  # first label of its URLs: appended
        (("d", "4", "e", "5"), "duplicate", "ana"),  # appended
        (("d", "4", "e", "5"), "not", "ana"),  # the same labeler changes it: still one row
        (("a", "1", "b", "2"), "not", "ben"),  # a second labeler: contested, recomputed
        (("a", "1", "c", "3"), "duplicate", "ana"),  # appended
        (("a", "", "c", ""), "not", "ana"),  # URL-only: the other fetch of a too
        (("x", "1", "y", "2"), "duplicate", "ana"),  # no candidate pair
        (("f", "6", "g", "7"), "unsure", None),  # unnamed labeler
        (("a", "1", "c", "3"), "not", "ana"),  # a changed label
    ]
    for (a, ma, b, mb), label, labeler in writes:
        store.record_label(a, b, md5_a=ma, md5_b=mb, label=label, category="syndicated", labeler=labeler)
        labels = store.labels()
        after = audit.labeled_pairs_after(PAIRS, labels, matched, (a, ma, b, mb), index=index)
        full = audit.labeled_pairs(PAIRS, labels)
        pd.testing.assert_frame_equal(canonical(after), canonical(full))
        matched = after
    assert set(matched["label"]) == {"not", "unsure"} and matched["contested"].any()  # ana and ben tie
    assert len(matched) == 5  # every candidate pair, the fetch of a by the URL-only label


def nulls_as_none(matched: pd.DataFrame) -> pd.DataFrame:
    found = canonical(matched)
    return found.where(found.notna(), None)


def test_label_view_with_a_label_is_the_view_read_after_writing_it(store: Store) -> None:
    """A label key draws from label_view_with (the label put into the kept view) and writes it after: that
    view's labels, labeled pairs and tallies are the ones read from the store once the label is written."""
    view = label_view(store, PAIRS, None)
    writes = [
        (("a", "1", "b", "2"), "duplicate", "ana"),
        (("a", "1", "b", "2"), "not", "ben"),  # a second labeler: contested
        (("d", "4", "e", "5"), "duplicate", None),
        (("d", "4", "e", "5"), "unsure", None),  # changed by the same (unnamed) labeler
        (("a", "", "c", ""), "not", "ana"),  # URL-only
    ]
    for i, ((a, ma, b, mb), label, labeler) in enumerate(writes):
        when = pd.Timestamp("2026-01-01") + pd.Timedelta(minutes=i)
        row = {
            **dict(zip(audit.PAIR_KEY, (a, ma, b, mb), strict=True)),
            **{"label": label, "category": "syndicated", "note": None, "labeler": labeler, "setting": None},
            "labeled_at": when.to_pydatetime(),
        }
        drawn = label_view_with(view, row)
        store.record_label(
            a, b, md5_a=ma, md5_b=mb, label=label, category="syndicated", labeler=labeler, labeled_at=when
        )
        read = label_view(store, PAIRS, None)
        # (a column of strings and nulls comes from DuckDB with NaN or with None for the nulls)
        pd.testing.assert_frame_equal(nulls_as_none(drawn.matched), nulls_as_none(read.matched))
        pd.testing.assert_frame_equal(drawn.tallies, read.tallies, check_dtype=False)
        assert len(drawn.labels) == len(read.labels)
        view = drawn


def test_label_view_is_kept_until_a_label_changes(store: Store, tmp_path: Path) -> None:
    view = label_view(store, PAIRS, None)
    assert view.matched.empty and int(view.tallies["pairs"].sum()) == len(PAIRS)
    assert label_view(store, PAIRS, view) is view  # nothing written: the same view

    store.record_label("a", "b", md5_a="1", md5_b="2", label="duplicate")
    after = label_view_after(store, view, ("a", "1", "b", "2"))
    assert len(after.matched) == 1 and after.version == store.labels_version()
    assert label_view(store, PAIRS, after) is after

    # another writer (a second tab, the CLI): the version differs, the view is made again
    with Store(tmp_path / "loop.duckdb") as other:
        other.record_label("d", "e", md5_a="4", md5_b="5", label="not", labeler="ben")
    again = label_view(store, PAIRS, after)
    assert again is not after and len(again.matched) == 2
    pd.testing.assert_frame_equal(
        again.tallies, bucket_tallies(PAIRS["bucket"], audit.labeled_pairs(PAIRS, store.labels()))
    )
    # another setting's pairs: a new view over them, not the old one
    assert label_view(store, PAIRS.iloc[:2].reset_index(drop=True), again).pairs is not PAIRS


# --- the suggested category of a re-fetch: noise or a stale re-crawl -----------------------------------
BODY = " ".join(f"word{i}" for i in range(120))
REST = " ".join(f"more{i}" for i in range(120))


def refetch_category(before: str, after: str) -> str:
    page = {"canonical_url": "https://a.example/x", "url": "https://a.example/x", "n_words": 250}
    category, _ = audit.suggest_category(
        page, dict(page), exact_containment=0.95, segments=word_diff(before, after)
    )
    return category


@pytest.mark.parametrize(
    ("before", "after", "category"),
    [
        # the rotated banner at the top of the text
        (
            f"Subscribe today and get your first month free {BODY}",
            f"Support local journalism: become a member {BODY}",
            "noise re-fetch",
        ),
        # a box inserted inside the text, and one taken out
        (
            f"{BODY} {REST}",
            f"{BODY} Welcome back! Continue where you left off or sign out now. {REST}",
            "noise re-fetch",
        ),
        (
            f"{BODY} Recommended for you: three links to other stories here {REST}",
            f"{BODY} {REST}",
            "noise re-fetch",
        ),
        # one sentence of the text rewritten
        (
            f"{BODY} He reports one doullbla between their place today. {REST}",
            f"{BODY} Several cesearers have received these spare years of the service. {REST}",
            "stale re-crawl",
        ),
        # a price
        (f"{BODY} now $427.99 {REST}", f"{BODY} now $470.99 {REST}", "stale re-crawl"),
        # a price, and the banner rotated in the same fetch (the sample's shop pages)
        (
            f"New: download our app for iOS and Android {BODY} now $18.99 {REST}",
            f"Spring sale: up to 40% off selected items {BODY} now $16.99 {REST}",
            "stale re-crawl",
        ),
        # only the banner, which names a price of its own
        (
            f"Free shipping on orders over $50 {BODY} now $18.99 {REST}",
            f"Spring sale: up to 40% off selected items {BODY} now $18.99 {REST}",
            "noise re-fetch",
        ),
        (BODY, BODY, "noise re-fetch"),
    ],
)
def test_a_refetch_is_noise_unless_its_text_was_edited(before: str, after: str, category: str) -> None:
    assert refetch_category(before, after) == category


def test_audit_queue_with_kept_positions_is_the_same_queue() -> None:
    """The quota queue from a kept pair index equals the one from the keys, and both the first-come pick."""
    rng = np.random.default_rng(4)
    n = 400
    pairs = pd.DataFrame(
        {
            "url_a": [f"a{i}" for i in range(n)],
            "md5_a": [f"{i}" for i in range(n)],
            "url_b": [f"b{i}" for i in range(n)],
            "md5_b": [f"{i}" for i in range(n)],
            "bucket": rng.choice([0.8, 0.85, 0.9, 0.95], n, p=[0.05, 0.15, 0.3, 0.5]),
            "score": 0.9,
            "page_a": range(n),
            "page_b": range(n, 2 * n),
        }
    )
    labeled = pairs.sample(40, random_state=5)[[*audit.PAIR_KEY, "bucket"]].assign(
        label=rng.choice(["duplicate", "not", "unsure"], 40)
    )
    skipped = {tuple(k) for k in pairs.sample(30, random_state=6)[audit.PAIR_KEY].itertuples(index=False)}
    index = audit.pair_index(pairs)
    for per_bucket in (1, 12, 40):
        kwargs = {"per_bucket": per_bucket, "seed": 3, "skipped": skipped}
        from_keys = audit_queue(pairs, labeled, **kwargs)
        kept = audit_queue(pairs, labeled, **kwargs, positions=index.exact)
        pd.testing.assert_frame_equal(from_keys, kept)
        # the reference: the shuffled order, a pair taken while its bucket is short of its quota
        done = {tuple(k) for k in labeled[audit.PAIR_KEY].itertuples(index=False)} | skipped
        have = labeled[labeled["label"] != "unsure"]["bucket"].value_counts().to_dict()
        taken: dict[float, int] = {}
        expected = []
        for pos in np.random.default_rng(3).permutation(n):
            row = pairs.iloc[pos]
            if tuple(row[audit.PAIR_KEY]) in done:
                continue
            if taken.get(row["bucket"], 0) < per_bucket - have.get(row["bucket"], 0):
                taken[row["bucket"]] = taken.get(row["bucket"], 0) + 1
                expected.append(pos)
        assert list(kept["page_a"]) == expected
