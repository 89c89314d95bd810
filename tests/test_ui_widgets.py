"""The shared charts' figures (`ui.widgets`): what a reader sees of each bar."""

from __future__ import annotations

import pandas as pd

from neardup.ui.widgets import cluster_size_figure


def test_each_cluster_size_bar_names_its_count() -> None:
    """At 100k pages the clusters of two pages are thousands and those of five a handful: a bar too short
    to see still shows its count."""
    sizes = pd.Series([2] * 12_000 + [3] * 1_300 + [5] * 7)
    (bar,) = cluster_size_figure(sizes).data
    assert list(bar.x) == ["2", "3", "5"] and list(bar.y) == [12_000, 1_300, 7]
    assert bar.texttemplate == "%{y:,}" and bar.textposition == "outside"
