"""The Clusters page's filters and the members' evidence, driven by AppTest over the small crawl."""

from __future__ import annotations

import pandas as pd
import pytest
from app_driver import run_app

from neardup.ui import drilldown
from neardup.ui.state import W_EVIDENCE_RIGHT, W_FILTER_HOST, W_FILTER_URL


def test_clusters_filter_by_host_and_url_text(db: str) -> None:  # noqa: F811
    at = run_app("pages/5_Clusters.py")
    every = at.dataframe[0].value
    host = at.selectbox(key=W_FILTER_HOST)
    assert host.value == "(any host)"
    picked = host.options[1]
    host.set_value(picked).run()
    assert not at.exception
    shown = at.dataframe[0].value
    assert 0 < len(shown) < len(every)
    assert at.query_params["host"] in (picked, [picked])  # the filter is in the URL
    assert any(m.value.startswith("**Pairs at the threshold with a page on") for m in at.markdown)
    at.text_input(key=W_FILTER_URL).set_value("no-such-url-anywhere").run()
    assert not at.exception
    assert any("No duplicate cluster passes these filters" in i.value for i in at.info)


def test_two_members_evidence(db: str) -> None:  # noqa: F811
    at = run_app("pages/5_Clusters.py")
    assert any(m.value.startswith("**Why they match:**") for m in at.markdown)
    assert any(m.value.startswith("**Candidate:**") for m in at.markdown)
    right = at.selectbox(key=W_EVIDENCE_RIGHT)
    right.set_value(right.options[0]).run()  # the same page twice
    assert not at.exception
    assert any(c.value == "Pick two different members." for c in at.caption)


def test_the_table_lists_the_largest_clusters_and_says_so(db: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    at = run_app("pages/5_Clusters.py")
    every = at.dataframe[0].value
    assert len(every) > 3
    assert not any("largest listed" in c.value for c in at.caption)
    monkeypatch.setattr(drilldown, "SHOWN_CLUSTERS", 3)
    at.run()
    assert not at.exception
    pd.testing.assert_frame_equal(at.dataframe[0].value, every.head(3))
    assert any(
        c.value.startswith(f"{len(every):,} duplicate clusters, the 3 largest listed") for c in at.caption
    )
