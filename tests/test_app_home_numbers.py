"""Home draws a clustering's counts, never the pages frame the other pages read: at every threshold its three
numbers, cluster-size bars and per-host rollup are those the pages frame of the full analysis gives, counted
here from that frame's own columns (cluster, representative, host) on the bundled sample crawl."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from app_driver import APP, TIMEOUT, plotly_charts
from conftest import app_database
from streamlit.testing.v1 import AppTest

from neardup.analysis import analyze, load_fingerprints
from neardup.config import Config
from neardup.store import Store
from neardup.ui.state import w_threshold

THRESHOLDS = (0.75, 0.9, 0.97, 0.8)  # the last one moved back to


@pytest.fixture
def sample_app_db(sample_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh copy of the bundled sample's database, named by NEARDUP_DB."""
    yield from app_database(sample_db, tmp_path, monkeypatch)


def from_pages_frame(pages: pd.DataFrame) -> dict[str, Any]:
    """What Home shows, counted from an analysis' pages frame."""
    content = pages[pages["cluster_id"].notna()]
    clusters = content.groupby("cluster_id").size()
    sizes = clusters[clusters > 1].value_counts().sort_index()
    redundant = ~content["is_representative"]
    hosts = (
        pd.DataFrame({"host": content["host"], "page": 1, "redundant": redundant.astype(np.int64)})
        .groupby("host", sort=False)
        .agg(pages=("page", "sum"), redundant=("redundant", "sum"))
        .reset_index()
    )
    hosts["redundant_pct"] = (100.0 * hosts["redundant"] / hosts["pages"]).round(1)
    hosts = hosts.sort_values(["redundant", "pages", "host"], ascending=[False, False, True])
    distinct_texts = content["unit_id"].nunique()
    return {
        "metrics": {
            "Exact duplicates": f"{len(content) - distinct_texts:,}",
            "Near duplicates": f"{distinct_texts - len(clusters):,}",
            "Unique pages": f"{len(clusters):,}",
            "Duplicate clusters": f"{int((clusters > 1).sum()):,}",
            "Largest cluster": f"{int(clusters.max()):,}",
            "Degenerate (set aside)": f"{len(pages) - len(content):,}",
            "Redundant": f"{100.0 * (len(content) - len(clusters)) / len(pages):.1f}%",
        },
        "sizes": ([str(s) for s in sizes.index], sizes.tolist()),
        "hosts": hosts.reset_index(drop=True)[["host", "pages", "redundant", "redundant_pct"]],
    }


def shown_on_home(at: AppTest) -> dict[str, Any]:
    chart = plotly_charts(at)["Duplicate cluster sizes"]
    hosts = next(d.value for d in at.dataframe if "redundant_pct" in d.value.columns)
    hosts = hosts.sort_values(["redundant", "pages", "host"], ascending=[False, False, True])
    return {
        "metrics": {m.label: m.value for m in at.metric},
        "sizes": (chart["data"][0]["x"], chart["data"][0]["y"]),
        "hosts": hosts.reset_index(drop=True)[["host", "pages", "redundant", "redundant_pct"]],
    }


def test_home_shows_the_counts_of_the_full_analysis_at_every_threshold(sample_app_db: str) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    with Store(sample_app_db, read_only=True) as store:
        fp = load_fingerprints(store, Config(), jobs=1)
    assert at.slider(key=w_threshold("containment")).value == 0.8  # the default, then the moves
    for threshold in (0.8, *THRESHOLDS):
        if threshold != at.slider(key=w_threshold("containment")).value:
            at.slider(key=w_threshold("containment")).set_value(threshold).run()
            assert not at.exception, at.exception
        want = from_pages_frame(analyze(fp, Config(threshold=threshold)).pages)
        got = shown_on_home(at)
        assert int(got["metrics"]["Near duplicates"].replace(",", "")) > 0, threshold
        assert {k: got["metrics"][k] for k in want["metrics"]} == want["metrics"], threshold
        assert got["sizes"] == want["sizes"], threshold
        pd.testing.assert_frame_equal(
            got["hosts"], want["hosts"], check_dtype=False, obj=f"hosts at {threshold}"
        )
