"""The app on settings tried one after another: what it keeps (a bounded number of fingerprint sets and
analyses) and what a threshold move reuses (the URL table of the URL rules page)."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pandas as pd
import pytest
from app_driver import APP, TIMEOUT
from streamlit.testing.v1 import AppTest

from neardup import rules
from neardup.analysis import Analysis, Clustering, Fingerprints
from neardup.drilldown import ClusterTable
from neardup.ui import data as ui_data
from neardup.ui.state import KEY_CONFIG, W_METHOD, W_SHINGLE, w_threshold


def live(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def run(at: AppTest) -> AppTest:
    at.run(timeout=TIMEOUT)
    assert not at.exception, at.exception
    return at


def test_settings_tried_one_after_another_are_evicted_not_accumulated(db: str) -> None:
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    for t in (0.75, 0.8, 0.85, 0.9, 0.95):
        at.slider(key=w_threshold("containment")).set_value(t)
        run(at)
    for k in (3, 4, 6):
        at.slider(key=W_SHINGLE).set_value(k)
        run(at)
    at.radio(key=W_METHOD).set_value("simhash")
    run(at)
    for k in (5, 3):
        at.slider(key=W_SHINGLE).set_value(k)
        run(at)
    assert 0 < live(Fingerprints) <= ui_data.FINGERPRINT_ENTRIES
    assert 0 < live(Clustering) <= ui_data.PER_THRESHOLD_ENTRIES
    # an analysis keeps its fingerprints' pages: none is kept of a fingerprint set the app let go
    gc.collect()
    kept = {a.config.fingerprint_key for a in gc.get_objects() if type(a) is Clustering}
    assert len(kept) <= ui_data.FINGERPRINT_ENTRIES, kept


def test_of_the_thresholds_tried_only_the_one_shown_keeps_a_pages_frame(db: str) -> None:
    """A pages frame holds the crawl's columns: the thresholds tried before keep their clusterings (a few
    numbers a page), and one moved back to is built again from its clustering, not clustered again. Home
    draws counts only and builds no frame at all."""
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    for t in (0.75, 0.8, 0.85, 0.8):
        at.slider(key=w_threshold("containment")).set_value(t)
        run(at)
    assert live(Analysis) == 0 and live(Clustering) == 2
    (fp,) = (o for o in gc.get_objects() if type(o) is Fingerprints)
    assert fp.minhash is None  # no signature is compared by a clustering: read when a page first needs one
    at.switch_page("pages/5_Clusters.py")
    run(at)
    for t in (0.75, 0.8):
        at.slider(key=w_threshold("containment")).set_value(t)
        run(at)
    assert live(Analysis) == 1 and live(Clustering) == 2
    (analysis,) = (o for o in gc.get_objects() if type(o) is Analysis)
    assert analysis.config.threshold == 0.8 and analysis.pages["cluster_id"].notna().any()
    # the fingerprints hold the signatures of the units in a pair only (analysis.Fingerprints.signature_units)
    minhash = fp.held_signatures()
    assert minhash is not None and fp.signature_units is not None
    assert len(minhash) == len(np.union1d(fp.pairs["a"], fp.pairs["b"])) < fp.n_units


def test_the_clusterings_of_the_latest_two_thresholds_are_kept(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A threshold moved back and forth between two values is answered from the memo; a third value tried
    lets go of the clustering used least recently (each holds a few numbers a page: ~70 MB at 1M pages)."""
    clustered: list[float] = []
    real = ui_data.cluster_at_threshold

    def counted(fp: Fingerprints, config: Any) -> Clustering:
        clustered.append(config.threshold)
        return real(fp, config)

    monkeypatch.setattr(ui_data, "cluster_at_threshold", counted)
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    first = at.slider(key=w_threshold("containment")).value
    for t in (0.9, first, 0.9, 0.95, 0.9):
        at.slider(key=w_threshold("containment")).set_value(t)
        run(at)
    assert clustered == [first, 0.9, 0.95]
    assert live(Clustering) == 2
    at.slider(key=w_threshold("containment")).set_value(first)
    run(at)
    assert clustered == [first, 0.9, 0.95, first]  # the least recently used of three was let go


def test_a_fingerprint_set_let_go_gives_its_memory_back(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    released = []
    monkeypatch.setattr(ui_data, "release_freed", lambda: released.append(1) or True)
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    released.clear()  # what the first run let go of an earlier test's database
    at.slider(key=w_threshold("containment")).set_value(0.85)
    run(at)
    assert not released
    at.radio(key=W_METHOD).set_value("simhash")
    run(at)
    ui_data.FINGERPRINT_JOBS.wait(db, at.session_state[KEY_CONFIG], TIMEOUT)
    run(at)
    assert released and live(Fingerprints) == 1


def test_a_threshold_move_on_the_url_rules_page_parses_the_urls_once(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = []

    def counted(pages: pd.DataFrame, **kwargs: Any) -> rules.UrlTable:
        made.append(1)
        return real(pages, **kwargs)

    real = rules.url_table
    monkeypatch.setattr(rules, "url_table", counted)
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    at.switch_page("pages/7_URL_rules.py")
    run(at)
    shown = [int(m.value) for m in at.metric if m.label == "Rules"]
    for t in (0.75, 0.85, 0.95):
        at.slider(key=w_threshold("containment")).set_value(t)
        run(at)
        assert at.title[0].value == "URL rules"
        assert not at.error, [e.value for e in at.error]  # the kept table's bar is replayed, not drawn anew
        assert [m.label for m in at.metric][:1] == ["Rules"]
    assert shown and len(made) == 1


def test_the_pages_frames_are_let_go_on_a_page_that_draws_none(db: str) -> None:
    """The Clusters page draws from the analysis' pages frame, the pages' categories and the clusters table
    (hundreds of MB at 1M pages); a page that draws none of them lets them go, and a visit back builds them
    again from the clustering kept."""
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    at.switch_page("pages/5_Clusters.py")
    run(at)
    shown = [s.value for s in at.subheader]
    assert live(Analysis) == 1 and live(ClusterTable) == 1
    for page in ("pages/2_Explore.py", "pages/7_URL_rules.py", "app.py"):
        at.switch_page(page)
        run(at)
        assert live(Analysis) == 0 and live(ClusterTable) == 0, page
    at.switch_page("pages/5_Clusters.py")
    run(at)
    assert [s.value for s in at.subheader] == shown
    assert live(Analysis) == 1 and live(ClusterTable) == 1


def test_the_url_rules_page_learns_from_the_clustering_without_a_pages_frame(db: str) -> None:
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    at.switch_page("pages/7_URL_rules.py")
    run(at)
    assert at.title[0].value == "URL rules" and not at.error
    assert [m.label for m in at.metric][:1] == ["Rules"]
    assert live(Analysis) == 0


def test_the_clusters_page_keeps_the_table_of_the_threshold_shown_only(db: str) -> None:
    """A clusters table and the pages' categories hold a row or more a page: of the thresholds tried on the
    Clusters page only the shown one's are kept (a move back builds them again, a fraction of a second at
    1M pages)."""
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    at.switch_page("pages/5_Clusters.py")
    run(at)
    for t in (0.75, 0.85):
        at.slider(key=w_threshold("containment")).set_value(t)
        run(at)
        assert live(ClusterTable) == 1
    gc.collect()
    frames = [o for o in gc.get_objects() if type(o) is pd.DataFrame and "suggested_action" in o.columns]
    assert len(frames) == 1
