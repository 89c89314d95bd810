"""The app on settings tried one after another: what it keeps (a bounded number of fingerprint sets and
analyses) and what a threshold move reuses (the URL table of the URL rules page)."""

from __future__ import annotations

import gc
from typing import Any

import pandas as pd
import pytest
from app_driver import APP, TIMEOUT
from streamlit.testing.v1 import AppTest

from neardup import rules
from neardup.analysis import Analysis, Fingerprints
from neardup.ui import data as ui_data
from neardup.ui.state import W_METHOD, W_SHINGLE, w_threshold


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
    assert 0 < live(Analysis) <= ui_data.PER_THRESHOLD_ENTRIES
    # an analysis keeps its fingerprints' pages: none is kept of a fingerprint set the app let go
    gc.collect()
    kept = {a.config.fingerprint_key for a in gc.get_objects() if type(a) is Analysis}
    assert len(kept) <= ui_data.FINGERPRINT_ENTRIES, kept


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
