"""Each copy's category and action relative to the page kept in its place (`neardup.categories`), on a
crawl ingested and analyzed for real: the Audit page's rule applied to (copy, representative)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest
from conftest import page_html, words_text, write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import analysis, categories, engine
from neardup.categories import (
    ACTIONS,
    KEEP_ACTION,
    NEWER_STALE_ACTION,
    REPRESENTATIVE_ACTION,
    cluster_category,
    page_categories,
    removed_action,
)
from neardup.config import Config
from neardup.diff import word_diff
from neardup.export import clusters_frame
from neardup.report import report_dict
from neardup.rules import learn_rules
from neardup.shingles import containment, shingles, words
from neardup.store import Store

HOST = "https://news.example.com"


def print_html(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{body}</p></body></html>"


def other_template(title: str, body: str) -> str:
    return (
        f"<html><head><title>{title}</title></head><body><div class='masthead'>Daily Reprints</div>"
        f"<main><article><h1>{title}</h1><p>{body}</p><p>First published by Example News.</p></article></main>"
        "<footer>Reprinted with permission.</footer></body></html>"
    )


def build_records() -> tuple[list[dict[str, object]], dict[str, str]]:
    """Records and the category each copy must get (by URL and fetch day)."""
    rng = random.Random(5)
    recs: list[dict[str, object]] = []
    want: dict[str, str] = {}

    def add(url: str, html: str, day: str, category: str | None) -> None:
        recs.append({"url": url, "html": html, "fetched_at": f"2024-{day}T10:00:00Z", "status": 200})
        if category:
            want[f"{url}@{day}"] = category

    # one article at same-host URLs a frontier should have folded, and its print copy
    body = words_text(rng, 400)
    add(f"{HOST}/story", page_html("Story", body), "01-01", None)
    add(f"{HOST}/story?print=1", print_html("Story", body), "01-02", "print version")
    for i, tail in enumerate(("?from=homepage", ";jsessionid=0AF3B29C", "?PHPSESSID=9d8c7b6a", ".php")):
        add(f"{HOST}/story{tail}", page_html("Story", body), f"01-0{3 + i}", "URL variant")
    # one URL fetched three times: the same text, then a sentence rewritten
    body2 = words_text(rng, 400)
    edited = body2.split(" ")
    edited[200:212] = [
        "the",
        "council",
        "voted",
        "on",
        "Tuesday",
        "to",
        "close",
        "the",
        "harbour",
        "road",
        "for",
        "repairs",
    ]
    add(f"{HOST}/report", page_html("Report", body2, csrf="aaa"), "02-01", None)
    add(f"{HOST}/report", page_html("Report", body2, csrf="bbb"), "02-02", "noise re-fetch")
    add(f"{HOST}/report", page_html("Report", " ".join(edited), csrf="ccc"), "02-03", "stale re-crawl")
    # an article republished on another site, and a shop page in another market
    body3 = words_text(rng, 400)
    add(f"{HOST}/essay", page_html("Essay", body3), "03-01", None)
    add(
        "https://reprints.example.org/2024/essay-reprint",
        other_template("Essay", body3),
        "03-02",
        "syndicated",
    )
    body4 = words_text(rng, 300)
    add("https://shop.example.com/kettle", page_html("Kettle", body4), "04-01", None)
    add("https://de.shop.example.com/kettle", page_html("Kettle", body4), "04-02", "regional mirror")
    for i in range(6):
        add(f"{HOST}/other-{i}", page_html(f"Other {i}", words_text(rng, 300)), "05-01", None)
    return recs, want


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, analysis.Analysis, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("categories")
    recs, want = build_records()
    store = Store(tmp / "crawl.duckdb")
    config = Config()
    assert engine.ingest_file(store, write_jsonl(tmp / "crawl.jsonl", recs), config, jobs=1).loaded == len(
        recs
    )
    return store, analysis.analyze(analysis.load_fingerprints(store, config), config), want


def keyed(a: analysis.Analysis, out: pd.DataFrame) -> pd.DataFrame:
    pages = a.pages.join(out)
    day = pd.to_datetime(pages["fetched_at"]).dt.strftime("%m-%d")
    return pages.set_index(pages["url"] + "@" + day)


def test_each_copy_gets_its_own_category_relative_to_its_representative(
    analyzed: tuple[Store, analysis.Analysis, dict[str, str]],
) -> None:
    store, a, want = analyzed
    pages = keyed(a, page_categories(store, a))
    removed = pages[pages["cluster_id"].notna() & ~pages["is_representative"].astype(bool)]
    assert set(removed.index) == set(want), "the crawl's copies are the removed pages"
    got = removed["category"].to_dict()
    assert got == want
    assert (removed["category_from"] == "URLs and text").all()
    for key, row in removed.iterrows():
        # the representative is the shortest URL, fetched first: the stale re-crawl is the newer fetch
        newer = want[key] == "stale re-crawl"
        assert row["suggested_action"] == removed_action(want[key], newer_than_kept=newer), key
    assert removed.loc[f"{HOST}/report@02-03", "suggested_action"] == NEWER_STALE_ACTION


def test_a_removed_page_is_never_told_to_keep_both(
    analyzed: tuple[Store, analysis.Analysis, dict[str, str]],
) -> None:
    store, a, _ = analyzed
    frame = clusters_frame(store, a)
    removed = frame[frame["cluster_id"].notna() & ~frame["is_representative"].astype(bool)]
    assert len(removed) == 9
    assert not removed["suggested_action"].str.contains("keep both").any()
    kept = frame[frame["is_representative"].astype(bool)]
    assert set(kept["suggested_action"]) == {KEEP_ACTION, REPRESENTATIVE_ACTION}
    assert (kept.loc[kept["cluster_size"] > 1, "suggested_action"] == REPRESENTATIVE_ACTION).all()
    # a cluster's category is its copies' most frequent: the article's four URL variants over its print copy
    story = frame.loc[frame["url"] == f"{HOST}/story", "cluster_category"].item()
    assert story == "URL variant"


def test_a_label_of_the_pair_with_the_representative_names_the_copys_category(
    analyzed: tuple[Store, analysis.Analysis, dict[str, str]],
) -> None:
    store, a, _ = analyzed
    pages = a.pages.set_index("url")
    copy = pages.loc[f"{HOST}/story?print=1"]
    rep = pages.loc[f"{HOST}/story"]
    labels = pd.DataFrame(
        {
            "url_a": [rep["canonical_url"]],
            "md5_a": [rep["md5"]],
            "url_b": [copy["canonical_url"]],
            "md5_b": [copy["md5"]],
            "label": ["duplicate"],
            "category": ["syndicated"],
            "labeled_at": [pd.Timestamp("2024-06-01")],
        }
    )
    out = keyed(a, page_categories(store, a, labels))
    row = out.loc[f"{HOST}/story?print=1@01-02"]
    assert (row["category"], row["category_from"]) == ("syndicated", "label")
    assert row["suggested_action"] == ACTIONS["syndicated"]


def test_cluster_category_is_the_most_frequent_first_listed_in_a_tie() -> None:
    assert cluster_category(pd.Series(["print version", "URL variant", "URL variant"])) == "URL variant"
    assert cluster_category(pd.Series(["syndicated", "URL variant"])) == "URL variant"
    assert cluster_category(pd.Series([], dtype=object)) == ""


def test_the_clusters_page_shows_each_copys_category_and_action(
    analyzed: tuple[Store, analysis.Analysis, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st
    from app_driver import APP, TIMEOUT
    from streamlit.testing.v1 import AppTest

    store, _, _ = analyzed
    monkeypatch.setenv("NEARDUP_DB", store.path)
    monkeypatch.delenv("NEARDUP_CONFIG", raising=False)
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
        at.switch_page("pages/5_Clusters.py").run()
        assert not at.exception, at.exception
        clusters, members = at.dataframe[0].value, at.dataframe[1].value
    finally:
        st.cache_resource.clear()
    # the largest cluster, shown first: the story at six URLs
    assert clusters.loc[0, "size"] == 6 and clusters.loc[0, "category"] == "URL variant"
    assert set(clusters["category"]) == {"URL variant", "noise re-fetch", "syndicated", "regional mirror"}
    by_url = members.set_index("url")
    assert by_url.loc[f"{HOST}/story?print=1", "category"] == "print version"
    assert by_url.loc[f"{HOST}/story.php", "action"] == ACTIONS["URL variant"]
    assert by_url.loc[f"{HOST}/story", "action"] == REPRESENTATIVE_ACTION
    assert not members["action"].str.contains("keep both").any()


def forget_suggestions(store: Store) -> None:
    """Drop the suggestions the store keeps, so that the next call compares every pair again."""
    with store.writing():
        store.cursor().execute("DELETE FROM suggested_categories")


def reference_suggestions(store: Store, a: analysis.Analysis) -> pd.Series:
    """Each copy's suggested category by page id, the way the rule was first applied: every pair in one run,
    the texts of every pair that needs them read at once by exact key (`Store.unit_texts`)."""
    p = a.pages
    removed = p[p["cluster_id"].notna() & ~p["is_representative"].astype(bool)]
    by_id = p.set_index("page_id", drop=False)
    cols = ["page_id", "url", "canonical_url", "fetched_at", "degenerate", "n_words", "unit_id", "exact_key"]
    pairs = [
        (by_id.loc[int(m), cols].to_dict(), by_id.loc[int(r), cols].to_dict())
        for m, r in zip(removed["page_id"], removed["representative_id"], strict=True)
    ]
    keys = sorted(
        {k for m, r in pairs if categories._needs_text(m, r) for k in (m["exact_key"], r["exact_key"])}
    )
    texts = {}
    for batch in store.unit_texts(a.config.norm_key, keys, 2048):
        texts.update(zip(batch["exact_key"], batch["text"], strict=True))
    names = list(categories._copy_categories(pairs, texts, a.config.shingle_size))
    return pd.Series(names, index=removed["page_id"].to_numpy(), dtype=object)


def suggested(store: Store, a: analysis.Analysis, **kwargs: object) -> pd.Series:
    s = categories.suggest_copies(store, a, **kwargs)  # type: ignore[arg-type]
    return pd.Series(s.category, index=a.pages["page_id"].to_numpy()[s.rows], dtype=object)


def test_progress_counts_the_pairs_compared_up_to_all_of_them(
    analyzed: tuple[Store, analysis.Analysis, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, a, _ = analyzed
    monkeypatch.setattr(categories, "PAIRS_PER_BATCH", 2)
    monkeypatch.setattr(categories, "WINDOW_TEXTS", 1)  # a read of texts per page
    monkeypatch.setattr(categories, "PENDING_TEXTS", 1)
    forget_suggestions(store)
    reports: list[tuple[str, int, int]] = []
    out = page_categories(store, a, progress=lambda stage, done, total: reports.append((stage, done, total)))
    forget_suggestions(store)
    pd.testing.assert_frame_equal(out, page_categories(store, a))
    removed = int((a.pages["cluster_id"].notna() & ~a.pages["is_representative"].astype(bool)).sum())
    assert reports[0] == (categories.CATEGORIES_STAGE, 0, removed)
    assert reports[-1] == (categories.CATEGORIES_STAGE, removed, removed)
    done = [d for _, d, _ in reports]
    assert done == sorted(done) and len(reports) > 2


def copy_pairs(a: analysis.Analysis) -> set[tuple[int, int]]:
    removed = a.pages[a.pages["cluster_id"].notna() & ~a.pages["is_representative"].astype(bool)]
    return set(zip(removed["page_id"].astype(int), removed["representative_id"].astype(int), strict=True))


def test_pairs_compared_once_are_read_from_the_store_at_any_threshold_and_by_another_process(
    analyzed: tuple[Store, analysis.Analysis, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, a, _ = analyzed
    forget_suggestions(store)
    calls: list[object] = []
    suggest = categories.suggest_category

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return suggest(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(categories, "suggest_category", counted)
    first = page_categories(store, a)
    removed = int((a.pages["cluster_id"].notna() & ~a.pages["is_representative"].astype(bool)).sum())
    assert len(calls) == removed == 9
    calls.clear()
    pd.testing.assert_frame_equal(page_categories(store, a), first)
    assert calls == []
    # a store of the file's own, read-only (another process, the app): the same frame, nothing compared
    with Store(store.path, on_demand=True) as other_store:
        pd.testing.assert_frame_equal(page_categories(other_store, a), first)
    assert calls == []
    fp = analysis.load_fingerprints(store, a.config)
    other = analysis.analyze(fp, a.config.replace(threshold=0.99))
    assert not other.pages["cluster_id"].equals(a.pages["cluster_id"]), "the threshold changes some cluster"
    forget_suggestions(store)
    calls.clear()
    at_other = page_categories(store, other)
    assert len(calls) == len(copy_pairs(other))
    # back at the first threshold, only the pairs it forms and the other does not are compared
    calls.clear()
    pd.testing.assert_frame_equal(page_categories(store, a), first)
    assert len(calls) == len(copy_pairs(a) - copy_pairs(other)) > 0
    # another rule table's suggestions are not read
    calls.clear()
    monkeypatch.setattr(categories, "RULES_VERSION", categories.RULES_VERSION + 1)
    pd.testing.assert_frame_equal(page_categories(store, other), at_other)
    assert len(calls) == len(copy_pairs(other))


def test_a_read_only_store_compares_and_keeps_nothing(
    analyzed: tuple[Store, analysis.Analysis, dict[str, str]],
) -> None:
    store, a, _ = analyzed
    forget_suggestions(store)
    with Store(store.path, read_only=True) as read_only:
        first = page_categories(read_only, a)
        assert categories.suggest_copies(read_only, a).compared == 9
    assert categories.suggest_copies(store, a).compared == 9
    assert categories.suggest_copies(store, a).compared == 0
    pd.testing.assert_frame_equal(page_categories(store, a), first)


def test_suggestions_are_the_rules_with_every_text_read_at_once_in_windows_of_one_text(
    analyzed: tuple[Store, analysis.Analysis, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, a, _ = analyzed
    monkeypatch.setattr(categories, "WINDOW_TEXTS", 1)
    monkeypatch.setattr(categories, "PENDING_TEXTS", 1)
    monkeypatch.setattr(categories, "PARALLEL_PAIRS", 1)  # through the worker pool
    forget_suggestions(store)
    got = suggested(store, a, jobs=2)
    pd.testing.assert_series_equal(got, reference_suggestions(store, a))
    pd.testing.assert_series_equal(suggested(store, a), got)  # read back


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, analysis.Analysis]:
    store = Store(tmp_path_factory.mktemp("sample") / "sample.duckdb")
    config = Config()
    engine.ingest_file(store, engine.SAMPLE_CRAWL, config, jobs=1)
    return store, analysis.analyze(analysis.load_fingerprints(store, config), config)


def test_the_reports_lean_analysis_reads_the_copies_fields_from_the_store_with_the_same_categories(
    sample: tuple[Store, analysis.Analysis], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, a = sample
    monkeypatch.setattr(categories, "COPIES_PER_READ", 7)  # many reads of a few copies' fields
    for config in (a.config, a.config.replace(url_rules=learn_rules(a.pages).rules)):
        full = analysis.analyze(analysis.load_fingerprints(store, config), config)
        fp = analysis.load_fingerprints(store, config, lean=True)
        lean = analysis.report_analysis(fp, analysis.cluster_at_threshold(fp, config))
        assert not {"exact_key", "host", "md5", "rel_canonical"} & set(lean.pages.columns)
        forget_suggestions(store)
        got = suggested(store, lean)
        assert len(got) > 7
        pd.testing.assert_series_equal(got, reference_suggestions(store, full))
        assert report_dict(lean) == report_dict(full)


@pytest.mark.parametrize("window", [1, 7, categories.WINDOW_TEXTS])
def test_every_copy_of_the_sample_gets_the_category_of_the_rule_with_every_text_read_at_once(
    sample: tuple[Store, analysis.Analysis], window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, a = sample
    monkeypatch.setattr(categories, "WINDOW_TEXTS", window)
    monkeypatch.setattr(categories, "PENDING_TEXTS", 3)
    forget_suggestions(store)
    want = reference_suggestions(store, a)
    assert len(want) > 500 and want.nunique() >= 5
    pd.testing.assert_series_equal(suggested(store, a), want)
    pd.testing.assert_series_equal(suggested(store, a), want)  # read back
    at_other = analysis.analyze(analysis.load_fingerprints(store, a.config), a.config.replace(threshold=0.95))
    pd.testing.assert_series_equal(suggested(store, at_other), reference_suggestions(store, at_other))


@st.composite
def drawn_crawls(draw: st.DrawFn) -> list[dict[str, object]]:
    """A few articles, each fetched at its URL, its variants, its print URL, a regional mirror and another
    site, some fetches with a few words edited: re-fetches, variants and other pages of one cluster."""
    rng = random.Random(draw(st.integers(0, 2**16)))
    recs: list[dict[str, object]] = []
    for i in range(draw(st.integers(1, 3))):
        body = words_text(rng, draw(st.integers(60, 200))).split(" ")
        for j, (url, _) in enumerate(draw(st.lists(st.sampled_from(PAIR_URLS), min_size=2, max_size=6))):
            edited = list(body)
            for _ in range(draw(st.integers(0, 2))):
                at = draw(st.integers(0, len(edited) - 1))
                edited[at : at + draw(st.integers(0, 9))] = draw(
                    st.lists(st.sampled_from(TEXT_WORDS), max_size=9)
                )
            recs.append(
                {
                    "url": url.replace("story", f"story-{i}"),
                    "html": page_html(f"Story {i}", " ".join(edited), csrf=str(j)),
                    "fetched_at": f"2024-01-{1 + draw(st.integers(0, 8)):02d}T10:00:00Z",
                    "status": 200,
                }
            )
    return recs


@settings(max_examples=15, deadline=None)
@given(drawn_crawls(), st.integers(1, 3), st.integers(1, 2))
def test_every_copy_of_a_drawn_crawl_gets_the_category_of_the_rule_with_every_text_read_at_once(
    tmp_path_factory: pytest.TempPathFactory, recs: list[dict[str, object]], window: int, pending: int
) -> None:
    tmp = tmp_path_factory.mktemp("drawn")
    store = Store(tmp / "crawl.duckdb")
    config = Config()
    engine.ingest_file(store, write_jsonl(tmp / "crawl.jsonl", recs), config, jobs=1)
    a = analysis.analyze(analysis.load_fingerprints(store, config), config)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(categories, "WINDOW_TEXTS", window)
        mp.setattr(categories, "PENDING_TEXTS", pending)
        pd.testing.assert_series_equal(suggested(store, a), reference_suggestions(store, a))
    store.close()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=60),
    st.integers(1, 5),
    st.integers(1, 4),
)
def test_pairs_come_once_each_with_both_texts_within_the_texts_held(
    drawn: list[tuple[int, int]], window: int, pending: int
) -> None:
    lo = np.array([min(x) for x in drawn], dtype=np.int64)
    hi = np.array([max(x) for x in drawn], dtype=np.int64)
    reads: list[list[int]] = []

    def read(ids: np.ndarray) -> dict[int, str]:
        assert len(ids) <= window and list(ids) == sorted(set(ids.tolist()))
        reads.append(ids.tolist())
        return {int(i): f"text {i}" for i in ids}

    seen: list[int] = []
    for at, texts in categories.pairs_with_texts(lo, hi, read, window_texts=window, pending_texts=pending):
        assert len(texts) <= window + pending
        for k in at.tolist():
            assert texts[int(lo[k])] == f"text {lo[k]}" and texts[int(hi[k])] == f"text {hi[k]}"
        seen += at.tolist()
    assert sorted(seen) == list(range(len(drawn)))
    if len(drawn) and pending >= len(set(lo.tolist())):
        # every text kept that a later window needs: one pass, each page read once
        assert sorted(i for r in reads for i in r) == sorted(set(lo.tolist()) | set(hi.tolist()))


# (fetched URL, canonical URL): one URL, a variant of it, its print copy, its regional mirror, another page
# of its site, a page of another site.
PAIR_URLS = [
    ("https://news.example.com/story", "https://news.example.com/story"),
    ("https://news.example.com/story?utm_source=x", "https://news.example.com/story"),
    ("https://news.example.com/story?print=1", "https://news.example.com/story?print=1"),
    ("https://de.news.example.com/story", "https://de.news.example.com/story"),
    ("https://news.example.com/other", "https://news.example.com/other"),
    ("https://reprints.example.org/story", "https://reprints.example.org/story"),
]
TEXT_WORDS = ["the", "river", "stone", "Netz", "Netz:", "$18.99", "$16.99", "2024", "(a)", "é", "—"]


@st.composite
def drawn_copy_pairs(draw: st.DrawFn) -> tuple[list[tuple[dict, dict]], dict[str, str]]:
    """(copy, representative) pairs of page records over a few texts: re-fetches, variants, other pages."""
    base = draw(st.lists(st.sampled_from(TEXT_WORDS), min_size=0, max_size=60))
    texts: dict[str, str] = {}
    for key in ("t0", "t1", "t2", "t3"):
        edited = list(base)
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(0, len(edited)))
            edited[at : at + draw(st.integers(0, 9))] = draw(
                st.lists(st.sampled_from(TEXT_WORDS), max_size=9)
            )
        texts[key] = " ".join(edited)

    def page(page_id: int) -> dict:
        url, canonical = draw(st.sampled_from(PAIR_URLS))
        key = draw(st.sampled_from(sorted(texts)))
        return {
            "page_id": page_id,
            "url": url,
            "canonical_url": canonical,
            "fetched_at": pd.Timestamp(f"2024-01-0{draw(st.integers(1, 3))}"),
            "degenerate": None,
            "n_words": len(texts[key].split()),
            "unit_id": int(key[1]),
            "exact_key": key,
        }

    pairs = [(page(2 * i + 1), page(2 * i)) for i in range(draw(st.integers(1, 6)))]
    return pairs, texts


def reference_category(member: dict, rep: dict, texts: dict[str, str], shingle_size: int) -> str:
    """The rule with every text read, difflib's full diff and the containment of joined shingles."""
    left, right = sorted([rep, member], key=lambda p: (p["fetched_at"], len(p["url"]), p["url"]))
    same = member["unit_id"] == rep["unit_id"]
    ta, tb = texts[left["exact_key"]], texts[right["exact_key"]]
    segments = [] if same else word_diff(ta, tb, compiled=False)
    c = 1.0 if same else containment(shingles(words(ta), shingle_size), shingles(words(tb), shingle_size))
    return categories.suggest_category(left, right, exact_containment=c, segments=segments, same_text=same)[0]


@settings(max_examples=300, deadline=None)
@given(drawn_copy_pairs(), st.integers(1, 4))
def test_categories_read_only_the_texts_they_need_and_match_the_full_rule(
    drawn: tuple[list[tuple[dict, dict]], dict[str, str]], shingle_size: int
) -> None:
    pairs, texts = drawn
    # each pair alone, with the texts it needs only (`_needs_text`)
    got = [
        name
        for member, rep in pairs
        for name, _ in categories.compare_pair_batch(
            (
                [(member, rep)],
                {k: texts[k] for k in (member["exact_key"], rep["exact_key"])}
                if categories._needs_text(member, rep)
                else {},
                shingle_size,
            )
        )
    ]
    assert got == [reference_category(member, rep, texts, shingle_size) for member, rep in pairs]
