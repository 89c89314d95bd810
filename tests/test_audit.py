"""What the Audit / Tune / Clusters views get from the engine, and the label store they write to."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import Crawl, make_crawl, page_html, sample_lines, words_text, write_jsonl

from neardup import audit, engine
from neardup.analysis import Fingerprints, analyze, load_fingerprints, pair_scores
from neardup.config import Config
from neardup.csvsafe import to_csv
from neardup.drilldown import cluster_table
from neardup.errors import NeardupError
from neardup.labels import bucket_of
from neardup.store import Store

SETTINGS = [Config(method="minhash", threshold=0.8), Config(method="simhash", threshold=4)]


def _page_id(store: Store, crawl: Crawl, index: int) -> int:
    """Page id of the crawl record at `index` (ids are assigned in record order from 1)."""
    page = store.page(index + 1, Config().norm_key)
    assert page is not None and page["url"] == crawl.records[index]["url"]
    return index + 1


@pytest.mark.parametrize("config", SETTINGS, ids=lambda c: c.method)
def test_candidate_pairs_are_ordered_by_canonical_url(loaded: tuple[Store, Crawl], config: Config) -> None:
    store, _ = loaded
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    assert len(pairs) > 0
    assert (pairs["url_a"] < pairs["url_b"]).all()
    assert not pairs.duplicated(["url_a", "url_b"]).any()
    assert (pairs["unit_a"] != pairs["unit_b"]).all()
    # the page ids point at pages with those canonical URLs
    for row in pairs.head(10).itertuples():
        assert store.page(int(row.page_a), config.norm_key)["canonical_url"] == row.url_a
        assert store.page(int(row.page_b), config.norm_key)["canonical_url"] == row.url_b
    if config.method == "simhash":
        assert pairs["score"].between(0, config.simhash_max_bits).all()
    else:
        assert pairs["score"].between(config.minhash_floor - 1e-9, 1.0 + 1e-9).all()


def _candidate_pairs_by_frames(fp: Fingerprints, config: Config) -> pd.DataFrame:
    """The reference of `audit.candidate_pairs`: each unit's first page looked up in a frame of every
    unit's, both sides of each pair read from it."""
    content = fp.pages[fp.pages["unit_id"] >= 0]
    up = content.sort_values("page_id").groupby("unit_id", sort=True).head(1).set_index("unit_id")
    a, b = fp.pairs["a"].astype(np.int64), fp.pairs["b"].astype(np.int64)
    pa_, pb_ = up.reindex(a), up.reindex(b)
    ua, ub = pa_["canonical_url"].to_numpy(dtype=object), pb_["canonical_url"].to_numpy(dtype=object)
    ma, mb = pa_["md5"].to_numpy(dtype=object), pb_["md5"].to_numpy(dtype=object)
    swap = (ua > ub) | ((ua == ub) & (ma > mb))
    scores = pair_scores(fp, config)
    return pd.DataFrame(
        {
            "unit_a": np.where(swap, b, a),
            "unit_b": np.where(swap, a, b),
            "page_a": np.where(swap, pb_["page_id"], pa_["page_id"]),
            "page_b": np.where(swap, pa_["page_id"], pb_["page_id"]),
            "url_a": np.where(swap, ub, ua),
            "md5_a": np.where(swap, mb, ma),
            "url_b": np.where(swap, ua, ub),
            "md5_b": np.where(swap, ma, mb),
            "score": scores,
            "bucket": bucket_of(scores, config),
        }
    )


@pytest.mark.parametrize("config", SETTINGS, ids=lambda c: c.method)
def test_candidate_pairs_name_each_text_by_its_first_page(small_db: Path, config: Config) -> None:
    """Of a text fetched at several pages, a pair names the lowest page id, whichever page is read."""
    with Store(small_db) as store:
        fp = load_fingerprints(store, config, jobs=1)
    units = fp.pages.loc[fp.pages["unit_id"] >= 0, "unit_id"]
    assert units.duplicated().any() and (fp.pages["unit_id"] < 0).any()  # exact copies, degenerate pages
    pd.testing.assert_frame_equal(audit.candidate_pairs(fp, config), _candidate_pairs_by_frames(fp, config))


def test_near_edits_are_candidate_pairs(loaded: tuple[Store, Crawl]) -> None:
    store, crawl = loaded
    config = SETTINGS[0]
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    keys = set(zip(pairs["url_a"], pairs["url_b"], strict=True))
    for article, edit in crawl.near_edits.items():
        a = store.page(crawl.article_groups[article][0] + 1, Config().norm_key)["canonical_url"]
        b = store.page(edit + 1, Config().norm_key)["canonical_url"]
        assert tuple(sorted((a, b))) in keys


def test_pages_loaded_after_the_fingerprints_get_fingerprinted(tmp_path: Path) -> None:
    crawl = make_crawl()
    edits = set(crawl.near_edits.values())
    first = [r for i, r in enumerate(crawl.records) if i not in edits]
    later = [crawl.records[i] for i in sorted(edits)]
    config = SETTINGS[0]
    with Store(tmp_path / "db.duckdb") as store:
        engine.ingest_file(store, write_jsonl(tmp_path / "first.jsonl", first), config, jobs=1)
        engine.ensure_fingerprints(store, config, jobs=1)
        engine.ingest_file(store, write_jsonl(tmp_path / "later.jsonl", later), config, jobs=1)
        fp = load_fingerprints(store, config, jobs=1)
        assert (fp.pages["unit_id"] >= 0).sum() == len(crawl.records) - len(crawl.soft404s)
        pairs = audit.candidate_pairs(fp, config)
        edit_urls = {
            store.page(i + 1, Config().norm_key)["canonical_url"]
            for i in range(len(first), len(crawl.records))
        }
        assert edit_urls <= set(pairs["url_a"]) | set(pairs["url_b"])


@pytest.mark.parametrize("config", SETTINGS, ids=lambda c: c.method)
def test_pair_detail_of_identical_texts(loaded: tuple[Store, Crawl], config: Config) -> None:
    store, crawl = loaded
    first, utm = crawl.article_groups[0][:2]  # same article, a tracking parameter added
    detail = audit.pair_detail(store, _page_id(store, crawl, first), _page_id(store, crawl, utm), config)
    assert detail.left["text"] == detail.right["text"]
    assert detail.exact_jaccard == 1.0
    assert detail.exact_containment == 1.0
    assert detail.simhash_bits == 0
    assert detail.minhash_jaccard == 1.0
    assert detail.left["url"] == crawl.records[first]["url"]
    assert "html" not in detail.left  # read when shown: the page's source, as loaded
    assert "<header>" in store.page_source(int(detail.left["page_id"]))


@pytest.mark.parametrize("config", SETTINGS, ids=lambda c: c.method)
def test_pair_detail_values_are_in_range(loaded: tuple[Store, Crawl], config: Config) -> None:
    store, crawl = loaded
    edit_pair = (crawl.article_groups[0][0], crawl.near_edits[0])
    unrelated = (crawl.uniques[0], crawl.uniques[1])
    for a, b in (edit_pair, unrelated):
        d = audit.pair_detail(store, _page_id(store, crawl, a), _page_id(store, crawl, b), config)
        for value in (d.exact_jaccard, d.exact_containment, d.minhash_jaccard):
            assert 0.0 <= value <= 1.0
        assert 0 <= d.simhash_bits <= 64
        assert d.exact_containment >= d.exact_jaccard
    near = audit.pair_detail(store, edit_pair[0] + 1, edit_pair[1] + 1, config)
    far = audit.pair_detail(store, unrelated[0] + 1, unrelated[1] + 1, config)
    assert 0.9 < near.exact_jaccard < 1.0  # one word of 400 changed
    assert far.exact_jaccard < 0.2
    assert near.simhash_bits < far.simhash_bits


def test_pair_detail_of_a_missing_page(loaded: tuple[Store, Crawl]) -> None:
    store, _ = loaded
    with pytest.raises(KeyError, match="10000"):
        audit.pair_detail(store, 1, 10_000, SETTINGS[0])


def test_labeled_pairs_and_tune_tables(loaded: tuple[Store, Crawl], tmp_path: Path) -> None:
    store, _ = loaded
    config = SETTINGS[0]
    fp = load_fingerprints(store, config, jobs=1)
    pairs = audit.candidate_pairs(fp, config)
    labels = pd.DataFrame(
        {
            "url_a": [*pairs["url_a"].head(3), "https://elsewhere.example/a"],
            "url_b": [*pairs["url_b"].head(3), "https://elsewhere.example/b"],
            "label": ["duplicate", "not", "unsure", "duplicate"],
        }
    )
    lab = audit.labeled_pairs(pairs, labels)
    assert len(lab) == 3  # the pair that is no candidate of this setting is left out
    assert set(lab["bucket"]) <= set(pairs["bucket"])
    tallies, est = audit.tune_tables(fp, config, labels)
    assert tallies["pairs"].sum() == len(pairs)
    assert tallies["labeled"].sum() == 2  # unsure is not counted
    assert set(est["threshold"]) == set(tallies["bucket"])
    assert audit.labeled_pairs(pairs, labels.iloc[:0]).empty


def test_labels_by_labeler_keep_each_labelers_label(loaded: tuple[Store, Crawl]) -> None:
    store, _ = loaded
    config = SETTINGS[0]
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    p0, p1 = pairs.iloc[0], pairs.iloc[1]
    labels = pd.DataFrame(
        [
            {**{c: p0[c] for c in audit.PAIR_KEY}, "labeler": "ana", "label": "duplicate"},
            {**{c: p0[c] for c in audit.PAIR_KEY}, "labeler": "ben", "label": "not"},
            # ben's URL-only label of the same pair: his exact label wins
            {
                "url_a": p0["url_a"],
                "md5_a": "",
                "url_b": p0["url_b"],
                "md5_b": "",
                "labeler": "ben",
                "label": "unsure",
            },
            {
                "url_a": p1["url_a"],
                "md5_a": "",
                "url_b": p1["url_b"],
                "md5_b": "",
                "labeler": None,
                "label": "not",
            },
            {
                "url_a": "https://x.example/",
                "md5_a": "",
                "url_b": "https://y.example/",
                "md5_b": "",
                "labeler": "ana",
                "label": "not",
            },
        ]
    )
    got = audit.labels_by_labeler(pairs, labels)
    first = got[
        got["url_a"].eq(p0["url_a"])
        & got["md5_a"].eq(p0["md5_a"])
        & got["url_b"].eq(p0["url_b"])
        & got["md5_b"].eq(p0["md5_b"])
    ]
    assert dict(zip(first["labeler"], first["label"], strict=True)) == {"ana": "duplicate", "ben": "not"}
    assert set(first["bucket"]) == {p0["bucket"]}
    assert got["url_a"].eq("https://x.example/").sum() == 0  # no candidate pair at this setting
    assert (got["labeler"].isna() & got["label"].eq("not")).sum() >= 1


def test_method_disagreements_are_the_pairs_one_method_flags() -> None:
    def frame(rows: list[tuple[str, float]]) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"url_a": u, "md5_a": "m", "url_b": "z", "md5_b": "m", "page_a": i, "page_b": 99, "score": s}
                for i, (u, s) in enumerate(rows)
            ]
        )

    sim = frame([("both", 1), ("sim only", 3), ("sim far", 0), ("neither", 9)])
    mh = frame([("both", 0.95), ("mh only", 0.9), ("sim only", 0.5), ("neither", 0.3)])
    got = audit.method_disagreements(sim, mh, simhash_bits=4, minhash_threshold=0.8).set_index("url_a")
    assert set(got.index) == {"sim only", "sim far", "mh only"}
    assert got.loc["sim only", "flagged_by"] == "SimHash" and got.loc["sim only", "minhash_score"] == 0.5
    assert got.loc["mh only", "flagged_by"] == "MinHash" and pd.isna(got.loc["mh only", "simhash_bits"])
    assert pd.isna(got.loc["sim far", "minhash_score"])  # no MinHash candidate at all
    # nearest a threshold first, in shares of the distance from the threshold to identity
    assert list(got.index) == ["sim only", "mh only", "sim far"]


@pytest.mark.parametrize(
    ("url", "reference", "expected"),
    [
        ("https://a.example/x/page?utm_source=feed", "https://a.example/x/page", "...?utm_source=feed"),
        ("https://a.example/x/page?id=1&fbclid=abc", "https://a.example/x/page?id=1", "...&fbclid=abc"),
        ("https://a.example/news/print/item-1", "https://a.example/news/item-1", ".../print/item-1"),
        ("https://b.example/x", "https://a.example/x", "https://b.example/x"),  # another host: all of it
        ("https://a.example/x", "https://a.example/x", ""),
    ],
)
def test_url_difference_shows_the_tail_that_differs(url: str, reference: str, expected: str) -> None:
    assert audit.url_difference(url, reference) == expected


def test_cluster_table_and_members(loaded: tuple[Store, Crawl]) -> None:
    store, crawl = loaded
    config = SETTINGS[0]
    analysis = analyze(load_fingerprints(store, config, jobs=1), config)
    clusters = cluster_table(analysis.pages).rows
    assert (clusters["size"] >= 2).all()
    assert clusters["size"].is_monotonic_decreasing
    # 4 articles x (4 copies + 1 near edit), 2 articles x 4 copies
    assert sorted(clusters["size"].tolist(), reverse=True) == [5, 5, 5, 5, 4, 4]
    members = audit.cluster_members(analysis.pages, int(clusters.iloc[0]["cluster_id"]))
    assert len(members) == clusters.iloc[0]["size"]
    assert members["is_representative"].sum() == 1 and bool(members["is_representative"].iloc[0])
    assert members["url_differs"].iloc[0] == ""  # the representative


def test_one_label_counts_once(tmp_path: Path) -> None:
    """Two re-fetches of one URL with different edits are two pairs with the mirror: a label given to
    one of them (keyed by URL and content hash) counts once; a URL-only label covers both."""
    body = words_text(random.Random(5), 400).split(" ")
    edit = lambda i: " ".join(body[:i] + ["EDITED"] + body[i + 1 :])  # noqa: E731
    records = [
        {
            "url": "https://site.example/doc",
            "fetched_at": "2026-01-01",
            "html": page_html("Doc", " ".join(body)),
        },
        {"url": "https://site.example/doc", "fetched_at": "2026-01-02", "html": page_html("Doc", edit(100))},
        {
            "url": "https://mirror.example/doc",
            "fetched_at": "2026-01-03",
            "html": page_html("Doc", edit(300)),
        },
    ]
    config = SETTINGS[0]
    with Store(tmp_path / "db.duckdb") as store:
        engine.ingest_file(store, write_jsonl(tmp_path / "c.jsonl", records), config, jobs=1)
        fp = load_fingerprints(store, config, jobs=1)
        pairs = audit.candidate_pairs(fp, config)
        assert len(pairs) == 3  # three distinct texts, all alike
        assert not pairs.duplicated(audit.PAIR_KEY).any()
        to_mirror = pairs[(pairs["url_a"] != pairs["url_b"])].iloc[0]
        store.record_label(
            to_mirror.url_a, to_mirror.url_b, md5_a=to_mirror.md5_a, md5_b=to_mirror.md5_b, label="duplicate"
        )
        tallies, _ = audit.tune_tables(fp, config, store.labels())
        assert tallies["labeled"].sum() == 1
        store.record_label("https://site.example/doc", "https://mirror.example/doc", label="not")
        tallies, _ = audit.tune_tables(fp, config, store.labels())
        assert tallies["labeled"].sum() == 2  # the exact label kept its pair, the URL-only one took the other


# --- the label store ---------------------------------------------------------------------------
T0 = datetime(2026, 1, 1, 12, 0, 0)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "labels.duckdb") as s:
        yield s


def _label_map(store: Store) -> dict[tuple[str, str], tuple[str, datetime]]:
    df = store.labels()
    return {(r.url_a, r.url_b): (r.label, r.labeled_at.to_pydatetime()) for r in df.itertuples()}


def test_record_label_orders_the_urls_and_replaces(store: Store) -> None:
    store.record_label("https://b.example/", "https://a.example/", label="not", labeled_at=T0)
    store.record_label(
        "https://a.example/", "https://b.example/", label="duplicate", labeled_at=T0 + timedelta(1)
    )
    assert _label_map(store) == {
        ("https://a.example/", "https://b.example/"): ("duplicate", T0 + timedelta(1))
    }


def test_labels_with_is_what_the_store_reads_after_the_write(store: Store) -> None:
    """The Audit page draws the next pair from audit.labels_with and writes the label after: the frame it
    draws from is the one the store gives once the label is written (a first label, another labeler's
    label of the same pair, an unnamed labeler, a changed label)."""
    a, b, c = "https://a.example/", "https://b.example/", "https://c.example/"
    writes = [
        (a, "m1", b, "m2", "duplicate", "URL variant", None, None),
        (a, "m1", b, "m2", "not", None, "a note", "ann"),
        (a, "", c, "", "unsure", "syndicated", None, None),
        (a, "m1", b, "m2", "not", "stale re-crawl", None, None),  # the unnamed labeler changes theirs
    ]
    for i, (url_a, md5_a, url_b, md5_b, label, category, note, labeler) in enumerate(writes):
        row = {
            "url_a": url_a,
            "md5_a": md5_a,
            "url_b": url_b,
            "md5_b": md5_b,
            "label": label,
            "category": category,
            "note": note,
            "labeler": labeler,
            "labeled_at": T0 + timedelta(minutes=i),
            "setting": '{"threshold": 0.8}',
        }
        expected = audit.labels_with(store.labels(), row)
        store.record_label(
            url_a,
            url_b,
            md5_a=md5_a,
            md5_b=md5_b,
            label=label,
            category=category,
            note=note,
            labeler=labeler,
            setting={"threshold": 0.8},
            labeled_at=row["labeled_at"],
        )
        # (DuckDB gives a column of strings and nulls as str with NaN, or as objects with None)
        assert nulls_as_none(expected) == nulls_as_none(store.labels())


def test_label_in_gives_a_missing_note_as_none(store: Store) -> None:
    """What undo puts back: a label without a note or category, among labels with them, has None there
    (not NaN, which the store would keep as the text 'nan')."""
    store.record_label(
        "https://a.example/", "https://b.example/", label="not", note="n", category="syndicated"
    )
    store.record_label("https://a.example/", "https://c.example/", label="duplicate")
    found = audit.label_in(store.labels(), ("https://a.example/", "", "https://c.example/", ""), None)
    assert found is not None and found["label"] == "duplicate"
    assert found["note"] is None and found["category"] is None


def nulls_as_none(labels: pd.DataFrame) -> list[dict[str, object]]:
    return [{k: None if pd.isna(v) else v for k, v in r.items()} for r in labels.to_dict("records")]


def test_import_labels_latest_wins_per_labeler(store: Store) -> None:
    store.record_label("https://a/", "https://b/", label="not", labeled_at=T0, labeler="ana")
    store.record_label("https://c/", "https://d/", label="not", labeled_at=T0, labeler="ben")
    incoming = pd.DataFrame(
        {
            # ana's newer label of her pair (in the other URL order), ben's older one, a new pair, and a colleague's
            # label of ana's pair: it is added beside hers, never over it
            "url_a": ["https://b/", "https://c/", "https://e/", "https://a/"],
            "url_b": ["https://a/", "https://d/", "https://f/", "https://b/"],
            "label": ["duplicate", "duplicate", "unsure", "not"],
            "labeled_at": [
                str(T0 + timedelta(hours=1)),
                str(T0 - timedelta(hours=1)),
                str(T0),
                str(T0 + timedelta(hours=2)),
            ],
            "labeler": ["ana", "ben", None, "cem"],
            "category": ["URL variant", None, None, None],
            "note": [None, None, "odd", None],
        }
    )
    assert store.import_labels(incoming) == 3
    got = {
        (r.url_a, r.url_b, r.labeler if isinstance(r.labeler, str) else None): (
            r.label,
            r.labeled_at.to_pydatetime(),
        )
        for r in store.labels().itertuples()
    }
    assert got == {
        ("https://a/", "https://b/", "ana"): ("duplicate", T0 + timedelta(hours=1)),
        ("https://a/", "https://b/", "cem"): ("not", T0 + timedelta(hours=2)),
        ("https://c/", "https://d/", "ben"): ("not", T0),
        ("https://e/", "https://f/", None): ("unsure", T0),
    }
    row = store.labels().set_index(["url_a", "labeler"]).loc[("https://a/", "ana")]
    assert row["category"] == "URL variant"
    # importing the same file again changes nothing
    assert store.import_labels(incoming) == 0
    assert len(store.labels()) == 4


def test_import_labels_without_a_time_never_overrides(store: Store) -> None:
    store.record_label("https://a/", "https://b/", label="not", labeled_at=T0)
    incoming = pd.DataFrame(
        {
            "url_a": ["https://a/", "https://x/"],
            "url_b": ["https://b/", "https://y/"],
            "label": ["duplicate", "duplicate"],
        }
    )
    assert store.import_labels(incoming) == 1
    got = _label_map(store)
    assert got[("https://a/", "https://b/")] == ("not", T0)
    assert got[("https://x/", "https://y/")][0] == "duplicate"


def test_import_labels_repeated_pair_in_one_file_keeps_the_latest(store: Store) -> None:
    incoming = pd.DataFrame(
        {
            "url_a": ["https://a/", "https://b/", "https://a/"],
            "url_b": ["https://b/", "https://a/", "https://b/"],
            "label": ["not", "duplicate", "unsure"],
            "labeled_at": [str(T0), str(T0 + timedelta(hours=2)), str(T0 + timedelta(hours=1))],
        }
    )
    assert store.import_labels(incoming) == 1  # one row of the table: the newest label of the pair
    assert _label_map(store) == {("https://a/", "https://b/"): ("duplicate", T0 + timedelta(hours=2))}


def test_labels_round_trip_through_csv(store: Store, tmp_path: Path) -> None:
    store.record_label(
        "https://a/",
        "https://b/",
        label="duplicate",
        category="syndicated",
        note="same text",
        labeler="ana",
        setting=Config().to_dict(),
        labeled_at=T0,
    )
    store.record_label("https://c/", "https://d/", label="not", labeled_at=T0 + timedelta(minutes=5))
    path = tmp_path / "labels.csv"
    store.labels().to_csv(path, index=False)
    with Store(tmp_path / "colleague.duckdb") as other:
        assert other.import_labels(pd.read_csv(path)) == 2
        mine, theirs = store.labels(), other.labels()
        pd.testing.assert_frame_equal(mine.drop(columns="setting"), theirs.drop(columns="setting"))
        assert theirs["setting"].iloc[0] == mine["setting"].iloc[0]


def _import_error(store: Store, incoming: pd.DataFrame) -> str:
    before = store.labels()
    with pytest.raises(NeardupError) as exc:
        store.import_labels(incoming, now=T0)
    pd.testing.assert_frame_equal(store.labels(), before)  # all or nothing
    message = str(exc.value)
    assert "\n" not in message and message.startswith("labels file refused, nothing imported")
    return message


@pytest.mark.parametrize(
    ("column", "value", "needle"),
    [
        ("label", "maybe", "row 3, column label: 'maybe' is not one of duplicate, not, unsure"),
        ("label", "<script>", "column label: '<script>' is not one of"),
        ("label", "nan", "column label: 'nan' is not one of"),
        ("label", "", "column label: '' is not one of"),
        ("url_b", "", "row 3, column url_b: '' is empty"),
        ("md5_a", "abc", "row 3, column md5_a: 'abc' is not an MD5"),
        ("labeled_at", "yesterday", "row 3, column labeled_at: 'yesterday' is not an ISO 8601 time"),
        (
            "labeled_at",
            "2999-01-01T00:00:00Z",
            "row 3, column labeled_at: '2999-01-01T00:00:00Z' is in the future",
        ),
        ("labeled_at", str(T0 + timedelta(minutes=6)), "is in the future (after 2026-01-01 12:05 UTC)"),
        ("setting", "{not json", "row 3, column setting: '{not json' is not a JSON object"),
        ("setting", "[1, 2]", "is not a JSON object"),
    ],
)
def test_import_labels_refuses_a_bad_row_and_keeps_nothing(
    store: Store, column: str, value: str, needle: str
) -> None:
    store.record_label("https://a/", "https://b/", label="not", labeled_at=T0 - timedelta(days=1))
    incoming = pd.DataFrame(
        {
            "url_a": ["https://a/", "https://c/", "https://e/"],
            "url_b": ["https://b/", "https://d/", "https://f/"],
            "label": ["duplicate", "not", "unsure"],
            "md5_a": ["", "", ""],
            "setting": ["", "", ""],
            "labeled_at": [str(T0 - timedelta(hours=1))] * 3,
        },
        dtype=object,
    )
    incoming.loc[2, column] = value
    assert needle in _import_error(store, incoming)


def test_import_labels_names_the_first_errors_and_counts_the_rest(store: Store) -> None:
    incoming = pd.DataFrame(
        {
            "url_a": [f"https://a/{i}" for i in range(10)],
            "url_b": ["https://b/"] * 10,
            "label": ["maybe"] * 10,
        }
    )
    message = _import_error(store, incoming)
    assert "row 1, column label" in message and "row 3, column label" in message
    assert "row 4" not in message and message.endswith("(and 7 more)")


def test_import_labels_accepts_times_with_offsets_and_the_clock_skew(store: Store) -> None:
    incoming = pd.DataFrame(
        {
            "url_a": ["https://a/", "https://c/"],
            "url_b": ["https://b/", "https://d/"],
            "label": ["duplicate", "not"],
            "labeled_at": ["2026-01-01T14:00:00+02:00", str(T0 + timedelta(minutes=4))],
        }
    )
    assert store.import_labels(incoming, now=T0) == 2
    assert _label_map(store) == {
        ("https://a/", "https://b/"): ("duplicate", T0),
        ("https://c/", "https://d/"): ("not", T0 + timedelta(minutes=4)),
    }


def test_labels_with_formulas_round_trip_through_the_defused_csv(store: Store, tmp_path: Path) -> None:
    store.record_label(
        "https://a/",
        "https://b/",
        label="duplicate",
        note='=HYPERLINK("https://evil/")',
        labeler="@ana",
        category="-2",
        labeled_at=T0,
    )
    path = tmp_path / "labels.csv"
    to_csv(store.labels(), path)
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert (raw.loc[0, "note"], raw.loc[0, "labeler"], raw.loc[0, "category"]) == (
        '\'=HYPERLINK("https://evil/")',
        "'@ana",
        "'-2",
    )
    with Store(tmp_path / "colleague.duckdb") as other:
        assert other.import_labels(raw) == 1
        pd.testing.assert_frame_equal(other.labels(), store.labels())


def test_import_labels_needs_the_key_columns(store: Store) -> None:
    with pytest.raises(NeardupError, match="url_a"):
        store.import_labels(pd.DataFrame({"a": [1], "b": [2]}))


def test_import_labels_follows_the_tables_own_key(store: Store) -> None:
    """Keyed by pair and labeler (one label per analyst), the same import keeps each analyst's label."""
    cur = store.cursor()
    cur.execute("DROP TABLE labels")
    cur.execute(
        "CREATE TABLE labels (url_a VARCHAR NOT NULL, md5_a VARCHAR NOT NULL DEFAULT '', url_b VARCHAR NOT NULL, "
        "md5_b VARCHAR NOT NULL DEFAULT '', label VARCHAR NOT NULL, category VARCHAR, note VARCHAR, "
        "labeler VARCHAR NOT NULL DEFAULT '', labeled_at TIMESTAMP NOT NULL, setting JSON, "
        "PRIMARY KEY (url_a, md5_a, url_b, md5_b, labeler))"
    )
    incoming = pd.DataFrame(
        {
            "url_a": ["https://a/", "https://b/", "https://a/", "https://a/"],
            "url_b": ["https://b/", "https://a/", "https://b/", "https://b/"],
            "label": ["duplicate", "not", "unsure", "not"],
            "labeler": ["ana", "ben", "ana", ""],
            "labeled_at": [str(T0), str(T0), str(T0 + timedelta(hours=1)), ""],
        }
    )
    assert store.import_labels(incoming, now=T0 + timedelta(hours=2)) == 3
    got = (
        store.labels().fillna({"labeler": ""}).sort_values("labeler")
    )  # labels() gives an unnamed labeler as None
    assert got[["labeler", "label"]].values.tolist() == [["", "not"], ["ana", "unsure"], ["ben", "not"]]


# --- one label per (pair, labeler) ----------------------------------------------------------------
def test_two_labelers_of_one_pair_keep_both_labels(store: Store) -> None:
    store.record_label("https://a/", "https://b/", label="duplicate", labeler="ana", labeled_at=T0)
    store.record_label("https://b/", "https://a/", label="not", labeler="ben", labeled_at=T0 + timedelta(1))
    store.record_label(
        "https://a/", "https://b/", label="unsure", labeler="ana", labeled_at=T0 + timedelta(2)
    )
    got = store.labels().set_index("labeler")["label"].to_dict()
    assert got == {"ana": "unsure", "ben": "not"}
    assert store.label_of("https://b/", "https://a/", labeler="ben")["label"] == "not"
    store.delete_label("https://a/", "https://b/", labeler="ana")
    assert store.labels()["labeler"].tolist() == ["ben"]


def test_the_latest_label_by_time_is_kept_whichever_is_written_last(store: Store) -> None:
    """Two tabs of one labeler label one pair: the label given later stays even when it is written first
    (the other tab's write reaches the file after it), and the write says which was kept."""
    later = {"url_a": "https://a/", "md5_a": "1", "url_b": "https://b/", "md5_b": "2", "label": "not"}
    later |= {"category": None, "note": None, "labeler": "ana", "labeled_at": T0 + timedelta(seconds=1)}
    earlier = later | {"label": "duplicate", "labeled_at": T0, "url_a": "https://b/", "md5_a": "2"}
    earlier |= {"url_b": "https://a/", "md5_b": "1", "setting": None}
    later["setting"] = None
    assert store.write_labels([later]) == [True]
    assert store.write_labels([earlier]) == [False]
    assert not store.record_label(
        "https://a/", "https://b/", md5_a="1", md5_b="2", label="unsure", labeler="ana", labeled_at=T0
    )
    got = store.label_of("https://a/", "https://b/", md5_a="1", md5_b="2", labeler="ana")
    assert (got["label"], got["labeled_at"].to_pydatetime()) == ("not", T0 + timedelta(seconds=1))
    assert store.write_labels([earlier | {"labeled_at": T0 + timedelta(seconds=2)}]) == [True]
    assert (
        store.label_of("https://a/", "https://b/", md5_a="1", md5_b="2", labeler="ana")["label"]
        == "duplicate"
    )


def test_take_back_label_puts_back_the_previous_one_unless_a_later_one_replaced_it(store: Store) -> None:
    pair = {"md5_a": "1", "md5_b": "2", "labeler": "ana"}
    store.record_label("https://a/", "https://b/", label="not", category="syndicated", labeled_at=T0, **pair)
    previous = store.label_of("https://a/", "https://b/", **pair)
    store.record_label("https://a/", "https://b/", label="duplicate", labeled_at=T0 + timedelta(1), **pair)
    assert store.take_back_label(
        "https://b/",
        "https://a/",
        md5_a="2",
        md5_b="1",
        labeler="ana",
        given_at=T0 + timedelta(1),
        previous=previous,
    )
    got = store.label_of("https://a/", "https://b/", **pair)
    assert (got["label"], got["category"], got["labeled_at"].to_pydatetime()) == ("not", "syndicated", T0)
    # a label another tab gave later is not taken back by this tab's undo
    store.record_label("https://a/", "https://b/", label="unsure", labeled_at=T0 + timedelta(2), **pair)
    assert not store.take_back_label("https://a/", "https://b/", given_at=T0 + timedelta(1), **pair)
    assert store.label_of("https://a/", "https://b/", **pair)["label"] == "unsure"
    assert store.take_back_label("https://a/", "https://b/", given_at=T0 + timedelta(2), **pair)
    assert store.label_of("https://a/", "https://b/", **pair) is None


def test_concurrent_label_writes_of_one_pair_never_raise(store: Store) -> None:
    """Two tabs labeling the same pair at once: each write lands, none raises, no labeler's row is lost."""
    import threading

    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def label(labeler: str, label: str) -> None:
        try:
            barrier.wait()
            for i in range(40):
                store.record_label(
                    "https://a/",
                    "https://b/",
                    md5_a="1",
                    md5_b="2",
                    label=label,
                    labeler=labeler,
                    note=str(i),
                )
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=label, args=args)
        for args in (("ana", "duplicate"), ("ana", "not"), ("ben", "not"), ("", "unsure"))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    labels = store.labels()
    assert sorted(labels["labeler"].fillna("")) == ["", "ana", "ben"]
    assert (labels["note"] == "39").all()


def test_a_schema_2_labels_table_is_upgraded_in_place(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "old.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE labels")
    con.execute(
        "CREATE TABLE labels (url_a VARCHAR NOT NULL, md5_a VARCHAR NOT NULL DEFAULT '', url_b VARCHAR NOT "
        "NULL, md5_b VARCHAR NOT NULL DEFAULT '', label VARCHAR NOT NULL, category VARCHAR, note VARCHAR, "
        "labeler VARCHAR, labeled_at TIMESTAMP NOT NULL, setting JSON, PRIMARY KEY (url_a, md5_a, url_b, md5_b))"
    )
    con.execute(
        "INSERT INTO labels VALUES ('https://a/', 'm1', 'https://b/', 'm2', 'duplicate', 'URL variant', NULL, "
        "NULL, ?, NULL), ('https://c/', '', 'https://d/', '', 'not', NULL, 'n', 'ana', ?, NULL)",
        [T0, T0],
    )
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.close()
    with Store(path, read_only=True) as old:  # read as it is
        assert len(old.labels()) == 2
    with Store(path) as store:
        labels = store.labels()
        assert labels[["url_a", "label", "note"]].fillna("").values.tolist() == [
            ["https://a/", "duplicate", ""],
            ["https://c/", "not", "n"],
        ]
        store.record_label("https://a/", "https://b/", md5_a="m1", md5_b="m2", label="not", labeler="ben")
        store.record_label(
            "https://a/", "https://b/", md5_a="m1", md5_b="m2", label="unsure"
        )  # the unnamed one
        mine = store.labels().set_index(store.labels()["labeler"].fillna(""))
        assert mine.loc[["", "ana", "ben"], "label"].tolist() == ["unsure", "not", "not"]
    with Store(path) as again:  # the upgrade ran once
        assert len(again.labels()) == 3


# --- the suggested category of two pages of one shop in two markets -----------------------------------
# Three records of the sample crawl: two products of one family on voltbarn.com (one spec table, other
# SKU, colour and description) and the second one's regional mirror on uk.voltbarn.com.
WHITE = "https://voltbarn.com/item/vo-10895/voltbarn-chemont-2-power-bank-white/"
RED = "https://voltbarn.com/item/vo-10897/voltbarn-chemont-2-power-bank-red/"
RED_UK = "https://uk.voltbarn.com/item/vo-10897/voltbarn-chemont-2-power-bank-red/"


@pytest.fixture(scope="module")
def one_shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, dict[str, int]]]:
    """The three records ingested, and the page id of each URL."""
    wanted = {WHITE, RED, RED_UK}
    records = [r for r in (json.loads(line) for line in sample_lines(3000) if line) if r["url"] in wanted]
    assert {r["url"] for r in records} == wanted
    tmp = tmp_path_factory.mktemp("one_shop")
    store = Store(tmp / "shop.duckdb")
    engine.ingest_file(store, write_jsonl(tmp / "shop.jsonl", records), Config(), jobs=1)
    yield store, {r["url"]: i + 1 for i, r in enumerate(records)}
    store.close()


@pytest.mark.parametrize(
    ("a", "b", "category"),
    [
        (WHITE, RED_UK, "templated siblings"),  # another product, in the other market
        (RED, RED_UK, "regional mirror"),  # the same product in two markets
        (WHITE, RED, "templated siblings"),  # two products on one host
    ],
    ids=["other product, other market", "same product, other market", "other product, one host"],
)
def test_one_shop_in_two_markets_is_a_mirror_only_of_the_same_product(
    one_shop: tuple[Store, dict[str, int]], a: str, b: str, category: str
) -> None:
    store, page_ids = one_shop
    detail = audit.pair_detail(store, page_ids[a], page_ids[b], Config())
    assert detail.category == category, detail.category_reason


def test_each_text_is_shown_by_its_earliest_page_taken_from_five_columns(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`unit_pages`: the earliest page of each text, as a sort of the content pages by page id and the first
    of each text's rows give it, taken from the five columns it shows (the whole pages frame is a few
    hundred MB at 1M pages: a filter, a sort and a group-by of it held three copies)."""
    fp = load_fingerprints(store, Config())
    pages = fp.pages.sample(frac=1.0, random_state=3)  # any row order
    fp.pages = pages
    content = pages[pages["unit_id"] >= 0]
    first = content.sort_values("page_id").groupby("unit_id", sort=True).head(1)
    expected = first.set_index("unit_id")[["page_id", "canonical_url", "md5", "host", "fetched_at"]]
    taken: list[list[str]] = []
    real = pd.DataFrame.take

    def take(frame: pd.DataFrame, indices: object, axis: object = 0, **kwargs: object) -> pd.DataFrame:
        if axis in (0, "index"):  # rows taken (a selection of columns is a take along the columns)
            taken.append(list(frame.columns))
        return real(frame, indices, axis=axis, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pd.DataFrame, "take", take)
    got = audit.unit_pages(fp)
    pd.testing.assert_frame_equal(got, expected)
    assert taken == [list(expected.columns)]
