"""The Streamlit app driven headless with AppTest: every page runs, and the widgets do what they say.

One small crawl (scripts/make_sample.py, 300 pages) is ingested once per module; each test works on
its own copy of that database, so labels written by one test never leak into another.
"""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from app_driver import APP, PAGES, TIMEOUT, download, plotly_charts, run_app
from conftest import make_crawl, page_html, words_text, write_jsonl
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from neardup import audit, compare, engine
from neardup.analysis import Analysis, analyze, load_fingerprints
from neardup.app import HOME
from neardup.config import Config, save_config
from neardup.csvsafe import to_csv
from neardup.export import COLUMNS, clusters_frame
from neardup.labels import (
    ADJUDICATOR,
    CATEGORIES,
    LABELS,
    agreement,
    audit_queue,
    bucket_range,
    bucket_tallies,
    decision_at,
)
from neardup.queues import AuditQueue
from neardup.store import Store
from neardup.ui import data as ui_data
from neardup.ui.background import JobState
from neardup.ui.render import md_escape
from neardup.ui.state import (
    KEY_AUDIT_PAIR,
    KEY_AUDIT_SESSION,
    W_AUDIT_SHOW_LABELED,
    W_AUDIT_SHOW_PROGRESS,
    W_COMPARE_SHOWN,
    W_COUNT_AXIS,
    W_NORMALIZE,
    W_PER_BUCKET,
    W_QUEUE,
    W_SHINGLE,
    other_method,
)
from neardup.urls import canonicalize_url

ROOT = Path(__file__).resolve().parent.parent


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def button(at: AppTest, label: str) -> Any:
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r} among {[b.label for b in at.button]}"
    return found[0]


def default_analysis(store: Store, config: Config | None = None) -> Analysis:
    config = config or Config()
    return analyze(load_fingerprints(store, config, jobs=1), config)


# --- every page --------------------------------------------------------------------------------
def test_every_page_runs(db: str) -> None:
    at = run_app()
    assert at.title[0].value.startswith("neardup")
    assert not at.error
    for page, title in PAGES.items():
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert not at.error, (page, [e.value for e in at.error])
        assert at.title[0].value == title


def test_every_page_runs_on_its_own(db: str) -> None:
    for page, title in PAGES.items():
        st.cache_resource.clear()
        at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT).run()
        assert not at.exception, (page, at.exception)
        assert at.title[0].value == title


def test_the_packaged_app_serves_its_views(db: str) -> None:
    """`neardup app` runs neardup/app/Home.py, whose folder has views/ and no pages/: every page, the switch
    from Clusters to Audit and the way back Home work there as in a checkout."""
    at = AppTest.from_file(str(HOME), default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert at.title[0].value.startswith("neardup")
    for page, title in PAGES.items():
        at.switch_page(page.replace("pages/", "views/")).run()
        assert not at.exception, (page, at.exception)
        assert at.title[0].value == title
    at.switch_page("views/5_Clusters.py").run()
    button(at, "Open this pair in Audit").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Audit pairs"
    at.switch_page("Home.py").run()
    assert at.title[0].value.startswith("neardup")


# --- home: the numbers and the threshold slider ------------------------------------------------
def test_home_metrics_follow_the_threshold_slider(db: str, store: Store) -> None:
    at = run_app()
    before = metrics(at)
    expected = default_analysis(store).numbers
    assert before["Near duplicates"] == f"{expected['near_duplicates']:,}"
    assert before["Unique pages"] == f"{expected['unique_pages']:,}"
    assert f"{store.count_pages():,} pages" in at.caption[0].value

    threshold = next(s for s in at.sidebar.slider if s.label.startswith("Threshold"))
    assert threshold.value == pytest.approx(0.8)
    # this sample's near pairs have exact containment 0.94-0.995: 0.97 splits them
    threshold.set_value(0.97).run()
    assert not at.exception
    after = metrics(at)
    tighter = default_analysis(store, Config(threshold=0.97)).numbers
    assert after["Near duplicates"] == f"{tighter['near_duplicates']:,}"
    assert int(after["Near duplicates"].replace(",", "")) < int(before["Near duplicates"].replace(",", ""))
    assert int(after["Unique pages"].replace(",", "")) > int(before["Unique pages"].replace(",", ""))
    assert after["Exact duplicates"] == before["Exact duplicates"]  # the threshold only moves near ones

    # the setting follows the user to the other pages
    at.switch_page("pages/2_Explore.py").run()
    assert not at.exception
    assert metrics(at)["Pairs at threshold"] == f"{tighter['pairs_at_threshold']:,}"


def test_home_answers_its_question_in_one_sentence(db: str, store: Store) -> None:
    """The title asks how much is duplicated: the first line under it answers, in the metrics' numbers."""
    at = run_app()
    n = default_analysis(store).numbers
    answer = at.markdown[0].value
    assert answer.startswith(
        f"**{n['redundant_pct']:.1f}% of the {n['total_pages']:,} pages are redundant** "
        f"({n['redundant_pages']:,}: {n['exact_duplicates']:,} exact and {n['near_duplicates']:,} near duplicates)"
    ), answer
    assert f"keeps {n['unique_pages']:,}" in answer
    assert metrics(at)["Redundant"] == f"{n['redundant_pct']:.1f}%"


def test_home_and_explore_draw_the_same_cluster_sizes_and_hosts(db: str, store: Store) -> None:
    expected = default_analysis(store)
    for page in ("Home", "pages/2_Explore.py"):
        at = run_app(None if page == "Home" else page)
        sizes = plotly_charts(at)["Duplicate cluster sizes"]
        assert sizes["layout"]["xaxis"]["type"] == "category", page  # ticks on the sizes, never at 1.5 or 2.5
        counts = expected.cluster_sizes.value_counts().sort_index()
        assert sizes["data"][0]["x"] == [str(k) for k in counts.index], page
        hosts = next(d for d in at.dataframe if "redundant_pct" in d.value.columns)
        assert hosts.value.equals(expected.hosts), page
        assert any(m.value == "**Redundant pages per host**" for m in at.markdown), page


def test_home_largest_cluster_says_what_it_counts(db: str, store: Store) -> None:
    at = run_app()
    [largest] = [m for m in at.metric if m.label == "Largest cluster"]
    assert largest.value == f"{default_analysis(store).numbers['largest_cluster']:,}"
    assert "containment >= 0.8" in largest.proto.help  # the threshold in force
    next(s for s in at.sidebar.slider if s.label.startswith("Threshold")).set_value(0.97).run()
    [largest] = [m for m in at.metric if m.label == "Largest cluster"]
    assert "containment >= 0.97" in largest.proto.help


def add_contained_copy(store: Store, tmp_path: Path) -> None:
    """A page and a cut copy of it (its first 300 of 400 words): a pair of containment exactly 1.0."""
    import random

    body = words_text(random.Random(11), 400)
    short = " ".join(body.split(" ")[:300])
    records = [
        {"url": "https://print.example/story", "fetched_at": "2026-01-01", "html": page_html("Story", body)},
        {
            "url": "https://print.example/story-teaser",
            "fetched_at": "2026-01-02",
            "html": page_html("Story", short),
        },
    ]
    engine.ingest_file(store, write_jsonl(tmp_path / "contained.jsonl", records), Config(), jobs=1)
    engine.ensure_fingerprints(store, Config(), jobs=1)


def test_explore_histogram_ends_at_one_and_shows_every_labeled_share(
    db: str, store: Store, tmp_path: Path
) -> None:
    add_contained_copy(store, tmp_path)
    config = Config()
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    assert (pairs["score"] == 1.0).sum() == 1  # the cut copy
    lowest = pairs["bucket"].min()
    for row in pairs[pairs["bucket"] == lowest].itertuples():  # a share of 0% in the lowest bucket
        store.record_label(row.url_a, row.url_b, md5_a=row.md5_a, md5_b=row.md5_b, label="not")
    at = run_app("pages/2_Explore.py")
    fig = plotly_charts(at)["Candidate pairs by similarity"]
    bars, share = fig["data"][0], fig["data"][1]
    ends = [x + bars["width"] for x in bars["x"]]
    assert max(ends) == pytest.approx(1.0)  # no bar from 1.00 to 1.05
    assert fig["layout"]["xaxis"]["range"][1] < 1.0 + bars["width"] / 2  # the axis ends near 1.0 too
    # 1.0 is in the last bin, [0.95, 1.0]
    assert dict(zip(bars["x"], bars["y"], strict=True))[0.95] == int((pairs["score"] >= 0.95).sum())
    assert sum(bars["y"]) == len(pairs)
    # the 0% share is drawn above the axis line, not on it
    assert 0.0 in share["y"] and fig["layout"]["yaxis2"]["range"][0] < 0
    assert fig["layout"]["yaxis"]["type"] == "log"

    at.radio(key=W_COUNT_AXIS).set_value("linear").run()
    assert not at.exception
    fig = plotly_charts(at)["Candidate pairs by similarity"]
    assert fig["layout"]["yaxis"].get("type", "linear") == "linear"
    assert fig["layout"]["yaxis"]["title"]["text"] == "pairs"


def test_switching_method_to_simhash(db: str, store: Store) -> None:
    at = run_app()
    at.sidebar.radio[0].set_value("simhash").run()  # an estimate at once, the exact set in the background
    assert not at.exception
    threshold = next(s for s in at.sidebar.slider if s.label.startswith("Threshold"))
    assert threshold.label == "Threshold (max Hamming bits)"
    assert any("Estimate from" in info.value for info in at.info)
    simhash = Config(method="simhash", threshold=threshold.value)
    job = ui_data.FINGERPRINT_JOBS.wait(db, simhash, TIMEOUT)
    assert job is not None and job.state is JobState.DONE
    at.run()  # what the progress fragment starts when the job is done
    assert not any("Estimate from" in info.value for info in at.info)
    numbers = default_analysis(store, simhash).numbers
    assert metrics(at)["Unique pages"] == f"{numbers['unique_pages']:,}"
    for page in ("pages/2_Explore.py", "pages/3_Audit.py", "pages/4_Tune.py"):
        at.switch_page(page).run()
        assert not at.exception, page


def test_another_page_at_a_setting_being_computed_waits_for_that_computation(db: str, store: Store) -> None:
    """Home answers a new shingle size with an estimate and starts the exact set in the background; Explore
    at that setting waits for that computation (one job, not a second one of its own) and draws its numbers."""
    at = run_app()
    at.slider(key=W_SHINGLE).set_value(6).run()
    assert not at.exception
    assert any("Estimate from" in info.value for info in at.info)
    six = Config().with_shingle_size(6)
    assert ui_data.FINGERPRINT_JOBS.progress(db, six) is not None
    at.switch_page("pages/2_Explore.py").run()
    assert not at.exception
    job = ui_data.FINGERPRINT_JOBS.progress(db, six)
    assert job is not None and job.state is JobState.DONE
    assert any("shingles of 6 words" in c.value for c in at.caption)
    at.switch_page("app.py").run()
    assert not any("Estimate from" in info.value for info in at.info)
    numbers = default_analysis(store, six).numbers
    assert metrics(at)["Near duplicates"] == f"{numbers['near_duplicates']:,}"


# --- Audit: labels go to the store -------------------------------------------------------------
def first_sampled_pair(store: Store, skipped: set[tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The label key (url_a, md5_a, url_b, md5_b) of the first pair the Audit page shows."""
    config = Config()
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    queue = audit_queue(
        pairs,
        audit.labeled_pairs(pairs, store.labels()),
        per_bucket=5,
        seed=7,
        skipped=skipped or set(),
        focus=config.threshold,
    )
    return tuple(queue.iloc[0][audit.PAIR_KEY])


def queue_length(at: AppTest) -> int:
    """The pairs left in the queue, as the caption says ("Pair 3 of 12 ... (10 left)")."""
    caption = next(c.value for c in at.caption if c.value.startswith("Pair "))
    return int(re.search(r"\((\d+) left\)", caption).group(1))


def test_audit_duplicate_button_stores_a_label(db: str, store: Store) -> None:
    at = run_app("pages/3_Audit.py")
    assert store.labels().empty
    expected = first_sampled_pair(store)
    left = queue_length(at)
    at.sidebar.text_input[0].set_value("ana")
    button(at, "Duplicate").click().run()
    assert not at.exception

    labels = store.labels()
    assert len(labels) == 1
    row = labels.iloc[0]
    assert (*row[audit.PAIR_KEY], row["label"], row["labeler"]) == (*expected, "duplicate", "ana")
    assert '"threshold": 0.8' in row["setting"]
    assert queue_length(at) == left - 1  # the counter goes down with every decided label

    # the queue moves on; the next click labels the next pair
    second = first_sampled_pair(store)
    assert second != expected
    button(at, "Not duplicate").click().run()
    assert not at.exception
    labels = store.labels().set_index(audit.PAIR_KEY)["label"].to_dict()
    assert labels == {expected: "duplicate", second: "not"}
    assert queue_length(at) == left - 2
    assert any("2 labeled pairs at this setting (2 labels in all)" in c.value for c in at.caption)


def test_audit_category_and_label_in_one_rerun_keep_the_category(db: str, store: Store) -> None:
    """A category key and a label key pressed within one round trip reach the server as one rerun, whose
    callbacks run in the order the buttons were drawn (the label bar first): the label keeps the category."""
    at = run_app("pages/3_Audit.py")
    expected = first_sampled_pair(store)
    button(at, CATEGORIES[5]).click()
    button(at, "Duplicate").click().run()
    assert not at.exception
    row = store.labels().iloc[0]
    assert (*row[audit.PAIR_KEY], row["label"], row["category"]) == (*expected, "duplicate", CATEGORIES[5])

    # a label and undo in one rerun: the label is written, then undone
    button(at, "Not duplicate").click()
    button(at, "Undo").click().run()
    assert not at.exception
    assert len(store.labels()) == 1


def test_audit_labels_skips_and_undo_until_the_quota_is_met(db: str, store: Store) -> None:
    """The queue ends only when every bucket has its decided labels (skips bring the bucket's next pair)."""
    at = run_app("pages/3_Audit.py")
    at.sidebar.slider[-1].set_value(2).run()  # pairs per bucket
    assert at.sidebar.slider[-1].label == "Pairs per bucket"
    n_skips = n_labels = 0
    for i in range(60):
        if not any(c.value.startswith("Pair ") for c in at.caption):
            break
        left = queue_length(at)
        if i % 3 == 1:
            button(at, "Skip").click().run()
            n_skips += 1
            assert not at.exception
            if any(c.value.startswith("Pair ") for c in at.caption):
                assert queue_length(at) == left  # a skip brings another pair of the bucket
        else:
            button(at, "Duplicate" if i % 2 else "Not duplicate").click().run()
            n_labels += 1
            assert not at.exception
            if any(c.value.startswith("Pair ") for c in at.caption):
                assert queue_length(at) == left - 1
    assert any("Every bucket has 2 decided labels" in s.value for s in at.success)
    pairs = audit.candidate_pairs(load_fingerprints(store, Config(), jobs=1), Config())
    tallies = bucket_tallies(pairs["bucket"], audit.labeled_pairs(pairs, store.labels()))
    assert ((tallies["labeled"] >= 2) | (tallies["unlabeled"] == 0)).all()
    assert len(store.labels()) == n_labels and n_skips > 0

    # undo reverts the last label and reopens its pair
    last = store.labels().iloc[-1]
    button(at, "Undo the last label").click().run()
    assert not at.exception
    assert len(store.labels()) == n_labels - 1
    assert tuple(last[audit.PAIR_KEY]) not in set(
        store.labels()[audit.PAIR_KEY].itertuples(index=False, name=None)
    )
    assert any(c.value.startswith("Pair reopened by undo") for c in at.caption)
    shown = [canonicalize_url(c.value) for c in at.code][:2]
    assert sorted(shown) == [last["url_a"], last["url_b"]]


def audit_done_at_one_per_bucket() -> AppTest:
    """The Audit page with one pair per bucket labeled duplicate: the queue done."""
    at = run_app("pages/3_Audit.py")
    at.sidebar.slider(key=W_PER_BUCKET).set_value(1).run()
    for _ in range(40):
        if not any(c.value.startswith("Pair ") for c in at.caption):
            break
        button(at, "Duplicate").click().run()
    assert any("Every bucket has 1 decided label" in s.value for s in at.success)
    return at


def test_audit_k_goes_back_to_the_last_label_once_the_queue_is_done(db: str, store: Store) -> None:
    """The last pair of the queue labeled, k still goes back through the pairs this tab labeled."""
    at = audit_done_at_one_per_bucket()
    last = store.labels().sort_values("labeled_at").iloc[-1]
    back = button(at, "Previous")
    assert back.proto.shortcut == "k"
    back.click().run()
    assert not at.exception, at.exception
    assert any(
        c.value.startswith("A pair you labeled") and "your label: duplicate" in c.value for c in at.caption
    )
    shown = [canonicalize_url(c.value) for c in at.code][:2]
    assert sorted(shown) == sorted([last["url_a"], last["url_b"]])


def test_audit_more_pairs_key_raises_the_quota_once_the_queue_is_done(db: str, store: Store) -> None:
    """Once every bucket has its labels, a key raises the quota to 5 more than the least labeled bucket with
    pairs left has: more pairs without the sidebar's slider (which, focused, takes the label keys)."""
    at = audit_done_at_one_per_bucket()
    more = button(at, "More pairs: 6 per bucket")
    assert more.proto.shortcut == "m"
    more.click().run()
    assert not at.exception, at.exception
    assert at.sidebar.slider(key=W_PER_BUCKET).value == 6
    assert queue_length(at) >= 1
    button(at, "Duplicate").click().run()  # the labels go on at the new quota
    assert not at.exception


def choose_queue(at: AppTest, queue: AuditQueue) -> None:
    at.sidebar.radio(key=W_QUEUE).set_value(queue).run()
    assert not at.exception, at.exception


def test_audit_active_queue_starts_where_a_label_narrows_the_decision_most(db: str, store: Store) -> None:
    at = run_app("pages/3_Audit.py")
    choose_queue(at, AuditQueue.ACTIVE)
    config = Config()
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    for _ in range(3):
        matched = audit.labeled_pairs(pairs, store.labels())
        decision = decision_at(bucket_tallies(pairs["bucket"], matched), config)
        caption = next(c.value for c in at.caption if c.value.startswith("Pair "))
        assert "narrow" in caption
        assert f"bucket {bucket_range(decision.gain.index[0], config)}:" in caption  # the bucket's scores
        n = len(store.labels())
        button(at, "Duplicate").click().run()
        assert not at.exception and len(store.labels()) == n + 1


def test_audit_simhash_minhash_disagreement_queue(db: str, store: Store) -> None:
    at = run_app("pages/3_Audit.py")
    choose_queue(at, AuditQueue.DISAGREE)
    mh = Config()
    sim = other_method(mh, {})
    sim_pairs = audit.candidate_pairs(load_fingerprints(store, sim, jobs=1), sim)
    mh_pairs = audit.candidate_pairs(load_fingerprints(store, mh, jobs=1), mh)
    expected = audit.method_disagreements(
        sim_pairs, mh_pairs, simhash_bits=int(sim.threshold), minhash_threshold=mh.threshold
    )
    assert len(expected) >= 2
    assert queue_length(at) == len(expected)
    caption = next(c.value for c in at.caption if c.value.startswith("Pair "))
    assert f"flagged by {expected.iloc[0]['flagged_by']} only" in caption
    button(at, "Not duplicate").click().run()
    assert not at.exception
    row = store.labels().iloc[0]
    assert tuple(row[audit.PAIR_KEY]) == tuple(expected.iloc[0][audit.PAIR_KEY])
    assert queue_length(at) == len(expected) - 1  # the labeled pair leaves the queue


def test_audit_disagreement_queue_on_a_fresh_database_computes_the_other_method(db: str) -> None:
    """Only the app has the file open (read-only between writes), and the other method has no fingerprints
    yet: they are computed (a write) before the queue is read, not inside its read."""
    at = run_app("pages/3_Audit.py")
    choose_queue(at, AuditQueue.DISAGREE)
    assert not at.exception, at.exception
    assert queue_length(at) >= 2
    button(at, "Not duplicate").click().run()
    assert not at.exception, at.exception
    with Store(db, read_only=True) as store:
        assert len(store.labels()) == 1


def test_a_failing_page_shows_one_line_and_logs_the_traceback(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No page shows a traceback: an unexpected error is one sentence (what happened, what to do) and
    its details go to the server log."""

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("internal detail at /srv/secret/path")

    logged: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    logging.getLogger("neardup.app").addHandler(handler)
    at = run_app("pages/3_Audit.py")
    monkeypatch.setattr(audit, "method_disagreements", broken)
    at.sidebar.radio(key=W_QUEUE).set_value(AuditQueue.DISAGREE).run()
    assert not at.exception, at.exception
    (error,) = [e.value for e in at.error]
    assert "RuntimeError" in error and "reload the page" in error and "secret" not in error
    logging.getLogger("neardup.app").removeHandler(handler)
    assert [str(r.exc_info[1]) for r in logged if r.exc_info] == ["internal detail at /srv/secret/path"]


def test_audit_labelers_disagree_queue_takes_the_adjudicated_label(db: str, store: Store) -> None:
    a, ma, b, mb = first_sampled_pair(store)
    store.record_label(a, b, md5_a=ma, md5_b=mb, label="duplicate", labeler="ana")
    store.record_label(a, b, md5_a=ma, md5_b=mb, label="not", labeler="ben")
    at = run_app("pages/3_Audit.py")
    choose_queue(at, AuditQueue.CONTESTED)
    assert queue_length(at) == 1
    caption = next(c.value for c in at.caption if c.value.startswith("Pair "))
    assert "ana: duplicate" in caption and "ben: not" in caption
    button(at, "Not duplicate").click().run()
    assert not at.exception
    labels = store.labels()
    assert dict(zip(labels["labeler"], labels["label"], strict=True)) == {
        "ana": "duplicate",
        "ben": "not",
        ADJUDICATOR: "not",
    }
    assert any("No contested pair" in s.value for s in at.success)
    # undo takes the adjudicated label back: the pair is contested again
    button(at, "Undo the last label").click().run()
    assert not at.exception
    assert ADJUDICATOR not in set(store.labels()["labeler"])
    assert any("opened" in c.value and "adjudicated" in c.value for c in at.caption)
    button(at, "Duplicate").click().run()  # the reopened pair is adjudicated again
    assert not at.exception
    assert store.label_of(a, b, md5_a=ma, md5_b=mb, labeler=ADJUDICATOR)["label"] == "duplicate"


def test_audit_labeled_pairs_filter_by_bucket(
    db: str, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config(verify="estimate")  # signature estimates spread this database's pairs over buckets
    save_config(config, tmp_path / "dupcheck.yaml")
    monkeypatch.setenv("NEARDUP_CONFIG", str(tmp_path / "dupcheck.yaml"))
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    one_per_bucket = pairs.drop_duplicates("bucket")
    assert len(one_per_bucket) >= 2
    for row in one_per_bucket.itertuples():
        store.record_label(row.url_a, row.url_b, md5_a=row.md5_a, md5_b=row.md5_b, label="duplicate")
    at = run_app("pages/3_Audit.py")
    assert not at.dataframe  # the list is drawn only when switched on
    at.toggle(key=W_AUDIT_SHOW_LABELED).set_value(True).run()
    assert len(at.dataframe[-1].value) == len(one_per_bucket)
    bucket = float(one_per_bucket["bucket"].iloc[1])
    at.multiselect(key="neardup.audit.list.bucket").set_value([bucket]).run()
    assert not at.exception
    shown = at.dataframe[-1].value
    assert list(shown["bucket"]) == [bucket]
    assert list(shown["url_a"]) == [one_per_bucket["url_a"].iloc[1]]


def test_audit_skip_stores_nothing_and_moves_on(db: str, store: Store) -> None:
    at = run_app("pages/3_Audit.py")
    shown = [c.value for c in at.code][:2]
    button(at, "Skip").click().run()
    assert not at.exception
    assert store.labels().empty
    assert [c.value for c in at.code][:2] != shown


def test_audit_reopened_pair_takes_a_changed_label_and_undo_puts_the_first_back(
    db: str, store: Store
) -> None:
    """A pair reopened (as the labeled pairs list's button does) is labeled again: the label changes, and undo
    restores the label it replaced, with its time; the counters follow."""
    at = run_app("pages/3_Audit.py")
    expected = first_sampled_pair(store)
    button(at, "Duplicate").click().run()
    first = store.labels().iloc[0]
    pages = at.session_state[KEY_AUDIT_SESSION].labels.saved[-1].pages
    at.session_state[KEY_AUDIT_PAIR] = pages  # what "Open this pair to change its label" sets
    at.run()
    assert any(c.value.startswith("Pair opened from") for c in at.caption)
    assert not any("undo" in c.value for c in at.caption if c.value.startswith("Pair "))  # not undo's
    button(at, "Not duplicate").click().run()
    assert not at.exception
    labels = store.labels()
    assert len(labels) == 1 and tuple(labels.iloc[0][audit.PAIR_KEY]) == expected
    assert labels.iloc[0]["label"] == "not"
    assert any("1 labeled pair at this setting (1 label in all)" in c.value for c in at.caption)

    button(at, "Undo").click().run()
    assert not at.exception
    restored = store.labels().iloc[0]
    assert (restored["label"], restored["labeled_at"]) == ("duplicate", first["labeled_at"])
    button(at, "Undo").click().run()  # and the first label: none left
    assert store.labels().empty
    assert any("0 labeled pairs at this setting (0 labels in all)" in c.value for c in at.caption)


def test_audit_says_what_the_keys_mean_and_where_the_stop_rule_is(db: str, store: Store) -> None:
    at = run_app("pages/3_Audit.py")
    config = Config()
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    first = pairs[(pairs[audit.PAIR_KEY] == list(first_sampled_pair(store))).all(axis=1)].iloc[0]
    where = next(c.value for c in at.caption if c.value.startswith("Pair "))
    # the bucket as the scores it holds, in the threshold's unit, not its lower edge alone
    assert f"similarity bucket {bucket_range(first['bucket'], config)} containment" in where
    assert any(c.value.startswith("Are the two pages the same content? **d** duplicate") for c in at.caption)
    button(at, "Duplicate").click().run()
    at.toggle(key=W_AUDIT_SHOW_PROGRESS).set_value(True).run()
    assert not at.exception
    d = decision_at(bucket_tallies(pairs["bucket"], audit.labeled_pairs(pairs, store.labels())), config)
    assert any(
        m.value.startswith(f"Precision at 0.8 is {d.precision:.2f} [{d.precision_low:.2f}-")
        and f"About {int(d.more.sum())} more labels" in m.value
        for m in at.markdown
    )


def test_audit_label_shows_the_prefetched_pair_without_reading_it_again(
    db: str, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed: list[tuple[int, int]] = []
    real_pair_detail = audit.pair_detail

    def counted(store: Store, page_a: int, page_b: int, *args: Any, **kwargs: Any) -> audit.PairDetail:
        computed.append((page_a, page_b))
        return real_pair_detail(store, page_a, page_b, *args, **kwargs)

    monkeypatch.setattr(audit, "pair_detail", counted)
    at = run_app("pages/3_Audit.py")
    ui_data.PAIR_DETAILS.wait()  # the next pair is prefetched on a background thread
    assert len(computed) == 2  # the pair shown and the next one, prefetched
    prefetched = computed[1]
    button(at, "Duplicate").click().run()
    assert not at.exception
    ui_data.PAIR_DETAILS.wait()
    # the pair shown now is the one prefetched: only the pair after it is read
    assert len(computed) == 3 and prefetched not in computed[2:]
    assert len(store.labels()) == 1


def test_audit_raw_html_is_shown_as_source(db: str) -> None:
    at = run_app("pages/3_Audit.py")
    at.toggle[0].set_value(True)
    at.toggle[1].set_value(True).run()
    assert not at.exception
    html = [c for c in at.code if c.language == "html"]
    assert len(html) == 2 and "<html" in html[0].value.lower()


def removed_tables(at: AppTest) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe if list(d.value.columns) == ["where", "words", "text"]]


def test_audit_shows_what_the_boilerplate_setting_in_force_removed(db: str, store: Store) -> None:
    at = run_app("pages/3_Audit.py")
    at.toggle(key="neardup.audit.show_stripped").set_value(True).run()
    assert not at.exception
    assert sum(md_escape("Left out by main-content extraction (neardup)") in c.value for c in at.caption) == 2
    tables = removed_tables(at)
    assert len(tables) == 2  # one per side
    for table in tables:
        assert len(table) and (table["words"] > 0).all() and table["text"].str.len().gt(0).all()
        assert table["words"].is_monotonic_decreasing  # biggest first
        assert "script" not in set(table["where"])  # no element without text

    at.sidebar.radio(key=W_NORMALIZE).set_value("strip").run()
    assert not at.exception
    assert sum("Removed by tag stripping" in c.value for c in at.caption) == 2
    for table in removed_tables(at):
        assert set(table["where"]) <= set(Config().strip_tags) and (table["words"] > 0).all()
        assert table["words"].is_monotonic_decreasing


# --- URL rules and crawl over crawl --------------------------------------------------------------
def test_url_rules_page_shows_the_learned_rules_and_compares_two_crawls(
    db: str, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = run_app("pages/7_URL_rules.py")
    m = metrics(at)
    rules = at.dataframe[0].value
    assert int(m["Rules"]) == len(rules) > 0
    assert set(rules["precision"]) and rules["precision"].min() >= 0.95
    assert {"drop_param", "host_alias"} <= set(rules["kind"])
    assert "Load a second crawl" in " ".join(i.value for i in at.info)

    second = write_jsonl(tmp_path / "second.jsonl", make_crawl().records)
    engine.ingest_file(store, second, Config(), jobs=1)
    engine.ensure_fingerprints(store, Config(), jobs=1)
    st.cache_resource.clear()
    compared = []
    real = compare.compare_sources
    monkeypatch.setattr(compare, "compare_sources", lambda *a: compared.append(a[2:4]) or real(*a))
    at = run_app("pages/7_URL_rules.py")
    assert len(at.get("plotly_chart")) == 1 and not at.selectbox  # the trend; the comparison while on
    assert not compared
    at.toggle(key=W_COMPARE_SHOWN).set_value(True).run()
    assert [s.value for s in at.selectbox] == [1, 2] and compared == [(1, 2)]
    m = metrics(at)
    assert m["Current pages duplicating the baseline"] == "0"  # another site: nothing repeats
    assert int(m["Gone"]) > 0 and int(m["New clusters"]) > 0
    numbers = at.dataframe[-4].value.set_index("metric")
    assert numbers.loc["total_pages", "current"] == 40
    assert len(at.get("plotly_chart")) == 1


# --- Clusters -> Audit -------------------------------------------------------------------------
def test_clusters_open_a_pair_in_audit_and_label_it(db: str, store: Store) -> None:
    at = run_app("pages/5_Clusters.py")
    clusters = at.dataframe[0].value
    assert (clusters["size"] >= 2).all()
    assert at.subheader[0].value.startswith(f"Cluster {clusters.iloc[0]['cluster_id']}:")
    members = at.dataframe[1].value.set_index("page_id")
    column = json.loads(at.dataframe[1].proto.columns)["similarity_to_representative"]
    assert column["label"] == "similarity to rep. (containment)"  # the unit the threshold is in
    rep = members[members["is_representative"]].iloc[0]
    compare = next(s for s in at.selectbox if s.label == "Compare with the representative")
    other = members.loc[compare.value]  # a member page, by id
    assert not other["is_representative"]

    button(at, "Open this pair in Audit").click().run()
    assert not at.exception
    assert at.title[0].value == "Audit pairs"
    assert "opened from the Clusters page" in " ".join(c.value for c in at.caption)
    assert [c.value for c in at.code][:2] == [rep["url"], other["url"]]
    # AppTest does not follow an in-script st.switch_page for the next run (a browser does): go there
    at.switch_page("pages/3_Audit.py")
    button(at, "Duplicate").click().run()
    assert at.title[0].value == "Audit pairs"
    assert not at.exception
    labels = store.labels()
    expected = tuple(sorted((rep["canonical_url"], other["canonical_url"])))
    assert list(zip(labels["url_a"], labels["url_b"], strict=True)) == [expected]


def test_clusters_show_the_differing_url_tails_and_one_url_form(
    db: str, store: Store, tmp_path: Path
) -> None:
    import random

    body = words_text(random.Random(12), 400)
    urls = [  # one text at five URLs: the earliest fetch, the representative, carries a tracking parameter
        "https://news.example.net/a?utm_source=feed",
        "https://news.example.net/a?fbclid=abc",
        "https://news.example.net/a/print",
        "https://news.example.net/a?id=2&utm_medium=mail",
        "https://news.example.net/a",
    ]
    records = [
        {"url": u, "fetched_at": f"2026-01-0{i + 1}", "html": page_html("A", body)}
        for i, u in enumerate(urls)
    ]
    engine.ingest_file(store, write_jsonl(tmp_path / "tails.jsonl", records), Config(), jobs=1)
    engine.ensure_fingerprints(store, Config(), jobs=1)
    at = run_app("pages/5_Clusters.py")
    table = at.dataframe[0]
    top = table.value.iloc[0]
    assert top["size"] == 5  # the largest cluster, shown first
    columns = json.loads(table.proto.columns)
    assert columns["representative_url"]["label"] == "representative (canonical URL)"
    # the representative box shows the URL in the table's form, and the URL as fetched below it
    assert [c.value for c in at.code][:2] == [top["representative_url"], urls[0]]
    assert top["representative_url"] == "https://news.example.net/a"
    members = at.dataframe[1]
    differs = dict(zip(members.value["url"], members.value["url_differs"], strict=True))
    assert differs == {
        urls[0]: "(representative)",
        urls[1]: "...?fbclid=abc",
        urls[2]: ".../print",
        urls[3]: "...?id=2&utm_medium=mail",
        urls[4]: ".../a",  # no query where the representative has one
    }
    # the tail comes before the long URL columns, with the similarity in the threshold's unit beside it
    member_columns = json.loads(members.proto.columns)
    order = list(members.proto.column_order)
    assert order.index("url_differs") < order.index("url") and order.index("similarity_to_representative") < 3
    assert member_columns["similarity_to_representative"]["label"] == "similarity to rep. (containment)"
    assert member_columns["url"]["label"] == "URL as fetched"


# --- Tune --------------------------------------------------------------------------------------
def test_tune_without_then_with_labels(
    db: str, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Signature estimates spread this database's pairs over several buckets (their exact containments all
    # lie above 0.94), which is what this test needs: the app starts from such a dupcheck.yaml.
    config = Config(verify="estimate")
    save_config(config, tmp_path / "dupcheck.yaml")
    monkeypatch.setenv("NEARDUP_CONFIG", str(tmp_path / "dupcheck.yaml"))
    at = run_app("pages/4_Tune.py")
    assert any("No labels at this setting yet" in i.value for i in at.info)
    assert not at.dataframe

    # label every candidate pair: "not" in the lowest bucket, duplicates above it
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    buckets = sorted(pairs["bucket"].unique())
    lowest, second = buckets[0], buckets[1]
    n_low = int((pairs["bucket"] == lowest).sum())
    assert len(buckets) >= 3 and n_low / len(pairs) > 0.05, pairs["bucket"].value_counts()
    for row in pairs.itertuples():
        store.record_label(
            row.url_a,
            row.url_b,
            md5_a=row.md5_a,
            md5_b=row.md5_b,
            label="not" if row.bucket == lowest else "duplicate",
        )
    at.run()
    assert not at.exception
    assert not any("No labels at this setting yet" in i.value for i in at.info)
    est = at.dataframe[0].value.set_index("threshold")
    tallies = at.dataframe[1].value
    assert tallies["labeled"].sum() == len(pairs)
    assert sorted(tallies["bucket"]) == pytest.approx(buckets)
    # from the second bucket up, every flagged pair is a duplicate and every duplicate is flagged
    assert est.loc[second, "precision"] == pytest.approx(1.0)
    assert est.loc[second, "recall"] == pytest.approx(1.0)
    # the lowest bucket's threshold flags every pair, the "not"s among them
    assert est.loc[lowest, "pairs_flagged"] == len(pairs)
    assert est.loc[lowest, "precision"] == pytest.approx(1 - n_low / len(pairs))
    # the threshold in use (0.8, between the lowest bucket and the second) flags what the second bucket's
    # threshold flags: every duplicate and nothing else, so it is the suggestion, and the text quotes it
    config_in_use = at.session_state["neardup.config"]
    assert lowest < config_in_use.threshold <= second
    assert metrics(at)["Suggested threshold"] == f"{config_in_use.threshold:g}"
    assert any("In use on every page" in s.value for s in at.success)
    assert any(m.value.startswith(f"Precision at {config_in_use.threshold:g} is 1.00") for m in at.success)
    # the headline states the interval of the table's row at the threshold in use: one interval per threshold
    row = est.loc[config_in_use.threshold]
    stated = (
        f"[{row['precision_low']:.2f}-{row['precision_high']:.2f}], recall {row['recall']:.2f} "
        f"[{row['recall_low']:.2f}-{row['recall_high']:.2f}]"
    )
    assert any(stated in m.value for m in at.success), stated
    assert not [b for b in at.button if b.label == "Use this threshold"]
    # at the lowest bucket's threshold the "not"s are flagged: the suggestion is the nearest threshold that
    # flags the second bucket and up, and the line says which thresholds are the same
    slider = next(s for s in at.sidebar.slider if s.label.startswith("Threshold"))
    slider.set_value(float(lowest)).run()
    nearest = round(lowest + 0.05, 2)
    assert metrics(at)["Suggested threshold"] == f"{nearest:g}"
    assert any(
        f"any threshold from {nearest:g} to {second:g} flags the same pairs" in m.value for m in at.markdown
    )
    use = [b for b in at.button if b.label == "Use this threshold"]
    use[0].click().run()
    assert not at.exception
    assert at.session_state["neardup.config"].threshold == pytest.approx(nearest)
    # it says so, and the sidebar slider (the setting every page reads) shows it
    assert any(f"Threshold set to {nearest:g}" in t.value for t in at.toast)
    assert any("In use on every page" in s.value for s in at.success)
    slider = next(s for s in at.sidebar.slider if s.label.startswith("Threshold"))
    assert slider.value == pytest.approx(nearest)
    assert not [b for b in at.button if b.label == "Use this threshold"]
    # the thin-bucket warning names no bucket whose every pair is labeled
    assert not any("fewer than" in w.value for w in at.warning)
    # every pair labeled: the stop rule holds
    assert any("You can stop labeling" in s.value for s in at.success)


def test_tune_stop_rule_and_agreement_between_labelers(db: str, store: Store) -> None:
    config = Config()
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    first = pairs.head(6)
    ana = ["duplicate", "duplicate", "duplicate", "not", "duplicate", "not"]
    ben = ["duplicate", "not", "duplicate", "not", "duplicate", "duplicate"]
    for row, a, b in zip(first.itertuples(), ana, ben, strict=True):
        for who, label in (("ana", a), ("ben", b)):
            store.record_label(
                row.url_a, row.url_b, md5_a=row.md5_a, md5_b=row.md5_b, label=label, labeler=who
            )
    at = run_app("pages/4_Tune.py")
    # a few labels: the decision is open (the two contested pairs count as unsure, so their bucket can never
    # be known exactly), and the page says so
    assert any(
        i.value.startswith(f"Precision at {config.threshold:g} is") and "+/-0.05" in i.value for i in at.info
    )
    expected = agreement(ana, ben, LABELS)
    shown = metrics(at)
    assert shown["Pairs both labeled"] == "6"
    assert shown["Raw agreement"] == f"{expected.raw:.0%}"
    assert shown["Cohen's kappa"] == f"{expected.kappa:.2f}"
    assert shown["Gwet's AC1"] == f"{expected.ac1:.2f}"
    table = at.dataframe[-1].value.set_index("bucket")
    assert table.loc["all", "pairs"] == 6 and table["pairs"].drop("all").sum() == 6
    # 2 of the 6 pairs are contested (duplicate and not, no adjudicator)
    assert any("2 pairs are contested" in c.value for c in at.caption)


# --- Export ------------------------------------------------------------------------------------
def test_export_downloads_match_the_store(
    db: str, store: Store, downloads: list[MemoryMediaFileStorage]
) -> None:
    at = run_app("pages/6_Export.py")
    data = download(at, downloads, "clusters.csv")
    csv = pd.read_csv(io.BytesIO(data))
    assert list(csv.columns) == COLUMNS
    assert len(csv) == store.count_pages() == 300
    expected = clusters_frame(store, default_analysis(store))
    assert data.decode("utf-8") == to_csv(expected)
    captions = [c.value for c in at.caption]
    assert f"Below: clusters.csv, its first 200 of {len(csv):,} rows." in captions
    yaml_text = download(at, downloads, "dupcheck.yaml").decode("utf-8")
    assert "threshold: 0.8" in yaml_text and "method: minhash" in yaml_text
    [labels_button] = [d for d in at.get("download_button") if d.label == "labels.csv"]
    assert labels_button.proto.disabled  # nothing to export yet, and the page says why
    assert "No labels yet: label pairs on the Audit page (or import a colleague's below)." in captions

    store.record_label("https://a.example/", "https://b.example/", label="duplicate", labeler="ana")
    at.run()
    assert any(c.value.startswith("1 label, ") for c in at.caption)
    exported = pd.read_csv(io.BytesIO(download(at, downloads, "labels.csv")))
    assert exported[["url_a", "url_b", "label", "labeler"]].values.tolist() == [
        ["https://a.example/", "https://b.example/", "duplicate", "ana"]
    ]


# --- Load --------------------------------------------------------------------------------------
def test_load_a_server_side_path(
    db: str, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEARDUP_DATA_DIR", str(tmp_path))
    records = make_crawl().records[:10] + [{"html": "<p>a page without a url</p>"}]
    dump = write_jsonl(tmp_path / "more.jsonl", records)
    with dump.open("a", encoding="utf-8") as f:
        f.write("{not json\n")
    at = run_app("pages/1_Load.py")
    before = store.count_pages()
    at.text_input[0].set_value(str(dump)).run()
    button(at, "Load this path").click().run()
    assert not at.exception
    assert any("10 pages loaded, 2 records rejected" in s.value for s in at.success)
    assert store.count_pages() == before + 10
    errors = at.dataframe[-1].value
    assert errors[["line", "kind", "reason"]].values.tolist()[:1] == [[11, "missing url", "missing url"]]
    assert errors.iloc[1]["kind"] == "malformed JSON" and errors.iloc[1]["reason"].startswith(
        "malformed JSON:"
    )
    shown = [c.value.replace("\\", "") for c in at.caption]  # Markdown escapes taken out
    assert "1 × malformed JSON, 1 × missing url" in shown, shown
    # the same bytes again: nothing to do
    button(at, "Load this path").click().run()
    assert any("already loaded" in i.value for i in at.info)
    assert store.count_pages() == before + 10
    # the home page counts the new pages (the caches were cleared)
    at.switch_page("app.py").run()
    assert f"{before + 10:,} pages" in at.caption[0].value
    # the new pages are fingerprinted too, not set aside as if they were degenerate
    assert (
        metrics(at)["Degenerate (set aside)"]
        == f"{default_analysis(store).numbers['degenerate_pages']:,}"
        == "8"
    )


def test_load_a_missing_path_is_an_error_not_a_crash(db: str) -> None:
    at = run_app("pages/1_Load.py")
    at.text_input[0].set_value("/nonexistent/crawl.jsonl").run()
    button(at, "Load this path").click().run()
    assert not at.exception
    assert at.error


# --- first start -------------------------------------------------------------------------------
def test_first_start_loads_the_bundled_sample(empty_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEARDUP_LOAD_SAMPLE", "1")  # what `neardup app` without --db sets
    at = run_app()
    assert any("bundled **sample crawl**" in i.value for i in at.info)
    assert "3,000 pages" in at.caption[0].value
    assert int(metrics(at)["Duplicate clusters"].replace(",", "")) > 0
    # another session (a new tab, a colleague) is told too, on every page, though it loaded nothing
    other = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not other.exception and not other.toast
    assert any("bundled **sample crawl**" in i.value for i in other.info)
    for page in PAGES:
        other.switch_page(page).run()
        assert any("bundled **sample crawl**" in i.value for i in other.info), page


def test_without_a_sample_the_load_page_still_loads(
    empty_db: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # an installed package has no sample_data/: an empty database must not lock the user out
    monkeypatch.setenv("NEARDUP_LOAD_SAMPLE", "1")
    monkeypatch.setattr(ui_data, "SAMPLE", tmp_path / "no-sample.jsonl.gz")
    monkeypatch.setenv("NEARDUP_DATA_DIR", str(tmp_path))
    at = run_app()
    assert any("holds no pages yet" in i.value for i in at.info)
    at.switch_page("pages/1_Load.py").run()
    assert not at.exception
    dump = write_jsonl(tmp_path / "crawl.jsonl", make_crawl().records)
    at.text_input[0].set_value(str(dump)).run()
    button(at, "Load this path").click().run()
    assert not at.exception
    assert any("40 pages loaded" in s.value for s in at.success)
    at.switch_page("app.py").run()
    assert "40 pages" in at.caption[0].value


def test_load_a_warc_gives_the_report_of_its_jsonl_form(
    empty_db: str, base_db: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The small crawl as a WARC.gz (scripts/jsonl_to_warc.py) through the Load page: the same numbers as
    its JSON lines; the Audit page names each side's record in the archive."""
    monkeypatch.setattr(ui_data, "SAMPLE", tmp_path / "no-sample.jsonl.gz")
    monkeypatch.setenv("NEARDUP_DATA_DIR", str(tmp_path))  # the Load page reads server paths under it only
    crawl = tmp_path / "crawl.jsonl.gz"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "make_sample.py"),
            "--pages",
            "300",
            "--seed",
            "3",
            "--out",
            str(crawl),
            "--truth",
            str(tmp_path / "truth.csv"),
        ],
        check=True,
        capture_output=True,
    )
    warc = tmp_path / "crawl.warc.gz"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "jsonl_to_warc.py"), str(crawl), str(warc)],
        check=True,
        capture_output=True,
    )
    at = run_app()
    at.switch_page("pages/1_Load.py").run()
    at.text_input[0].set_value(str(warc)).run()
    button(at, "Load this path").click().run()
    assert not at.exception
    assert any("300 pages loaded, 0 records rejected" in s.value for s in at.success)
    with Store(base_db) as jsonl_store:
        want = default_analysis(jsonl_store).numbers
    with Store(empty_db) as warc_store:
        assert default_analysis(warc_store).numbers == want
    at.switch_page("pages/3_Audit.py").run()
    assert not at.exception
    records = [
        c.value for c in at.caption if c.value.startswith(md_escape("crawl.warc.gz · record <urn:uuid:"))
    ]
    assert len(records) == 2 and all("byte offset" in r for r in records), [c.value for c in at.caption]


def test_load_a_wacz_names_its_member_and_pages_list_on_the_audit_page(
    empty_db: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A WACZ of the archive corpus through the Load page; the Audit page names, for each side, the WACZ,
    its WARC member, whether the WACZ's pages list names the page, and the record's byte offset."""
    monkeypatch.setattr(ui_data, "SAMPLE", tmp_path / "no-sample.jsonl.gz")
    monkeypatch.setenv("NEARDUP_DATA_DIR", str(tmp_path))
    wacz = tmp_path / "crawl.wacz"
    wacz.write_bytes((ROOT / "tests" / "data" / "archives" / "webrecorder-layout.wacz").read_bytes())
    at = run_app()
    at.switch_page("pages/1_Load.py").run()
    at.text_input[0].set_value(str(wacz)).run()
    button(at, "Load this path").click().run()
    assert not at.exception
    assert any("9 pages loaded" in s.value for s in at.success)
    at.switch_page("pages/3_Audit.py").run()
    assert not at.exception
    records = [c.value for c in at.caption if c.value.startswith(md_escape("crawl.wacz · archive/rec-"))]
    assert len(records) == 2, [c.value for c in at.caption]
    assert all("pages list" in r and "byte offset" in r for r in records)
    # the article is a seed of the pages list, its near copy is not
    assert sorted("a page the crawler was asked for" in r for r in records) == [False, True]
