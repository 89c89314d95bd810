"""Drill-down widgets: a host picked in a table opens its clusters; the Clusters page's filters, kept in the
URL (`?host=...&category=...&size=2-5&url=print`), so a reload or a shared link shows the same clusters."""

from __future__ import annotations

from typing import cast

import pandas as pd
import streamlit as st

from ..app import page_script
from ..config import Config
from ..drilldown import ClusterFilter, ClusterTable, host_pairs
from ..store import Store
from .data import get_candidate_pairs
from .evidence import show_pair_evidence
from .render import md_escape
from .state import (
    FILTER_PARAMS,
    KEY_DRILL_HOST,
    W_FILTER_CATEGORY,
    W_FILTER_HOST,
    W_FILTER_SIZE,
    W_FILTER_URL,
    W_HOST_PAIRS,
)

ANY_HOST = "(any host)"
# The Clusters table lists this many of the clusters that pass the filters, the largest: a crawl of a
# million pages has over a hundred thousand clusters, 20 MB of table for the browser on each threshold;
# the filters reach the others.
SHOWN_CLUSTERS = 1_000


def open_host(host: str) -> None:
    """Show the Clusters page filtered to `host`'s clusters and pairs."""
    st.session_state[KEY_DRILL_HOST] = host
    st.switch_page(page_script("5_Clusters.py"), query_params={"host": host})


def _size_from_param(value: str, low: int, high: int) -> tuple[int, int]:
    try:
        lo, _, hi = value.partition("-")
        a, b = int(lo), int(hi or lo)
    except ValueError:
        return low, high
    return max(low, min(a, b)), min(high, max(a, b))


def _seed(hosts: list[str], categories: list[str], low: int, high: int) -> None:
    """The filter widgets' values: a drill-down's host with the other filters cleared; else, for a widget
    this session has not drawn yet, the URL's value or none."""
    state = st.session_state
    drilled = state.pop(KEY_DRILL_HOST, None)
    params = st.query_params
    if drilled is not None:
        state[W_FILTER_HOST] = drilled if drilled in hosts else ANY_HOST
        state[W_FILTER_CATEGORY] = []
        state[W_FILTER_SIZE] = (low, high)
        state[W_FILTER_URL] = ""
        return
    if W_FILTER_HOST not in state or state[W_FILTER_HOST] not in (ANY_HOST, *hosts):  # another threshold
        host = params.get("host")
        state[W_FILTER_HOST] = host if host in hosts else ANY_HOST
    if W_FILTER_CATEGORY not in state:
        state[W_FILTER_CATEGORY] = [c for c in params.get_all("category") if c in categories]
    elif not set(state[W_FILTER_CATEGORY]) <= set(categories):
        state[W_FILTER_CATEGORY] = [c for c in state[W_FILTER_CATEGORY] if c in categories]
    if W_FILTER_SIZE not in state or not (low <= state[W_FILTER_SIZE][0] <= state[W_FILTER_SIZE][1] <= high):
        state[W_FILTER_SIZE] = _size_from_param(params.get("size", ""), low, high)
    if W_FILTER_URL not in state:
        state[W_FILTER_URL] = params.get("url", "")


def cluster_filters(table: ClusterTable) -> ClusterFilter:
    """Host, category, size and URL text filters over the duplicate clusters of `table` (not empty); the
    chosen ones go to the URL."""
    hosts, categories = table.hosts, table.categories
    sizes = table.rows["size"]
    low, high = int(sizes.min()), int(sizes.max())
    _seed(hosts, categories, low, high)
    c1, c2, c3, c4 = st.columns([3, 3, 2, 3])
    host = c1.selectbox(
        "Host", [ANY_HOST, *hosts], key=W_FILTER_HOST, help="Clusters with a page on this host."
    )
    chosen = c2.multiselect("Category", categories, key=W_FILTER_CATEGORY, placeholder="any category")
    size: tuple[int, int] = (low, high)
    if high > low:  # a range slider: its state (set above) is a pair
        size = cast(
            tuple[int, int],
            c3.slider("Pages", low, high, key=W_FILTER_SIZE, help="Clusters of this many pages."),
        )
    else:
        c3.caption(f"Pages: every cluster has {low}.")
    url = c4.text_input(
        "URL contains",
        key=W_FILTER_URL,
        placeholder="e.g. print or utm_",
        help="A member's URL, as fetched or canonical.",
    )
    flt = ClusterFilter(
        host=None if host == ANY_HOST else host,
        categories=tuple(chosen),
        min_size=size[0] if size[0] > low else None,
        max_size=size[1] if size[1] < high else None,
        url_text=url.strip(),
    )
    _to_url(flt, low, high)
    return flt


def _to_url(flt: ClusterFilter, low: int, high: int) -> None:
    wanted: dict[str, str | list[str]] = {}
    if flt.host is not None:
        wanted["host"] = flt.host
    if flt.categories:
        wanted["category"] = list(flt.categories)
    if flt.min_size is not None or flt.max_size is not None:
        wanted["size"] = f"{flt.min_size or low}-{flt.max_size or high}"
    if flt.url_text:
        wanted["url"] = flt.url_text
    params = st.query_params
    for name in FILTER_PARAMS:
        value = wanted.get(name)
        current = params.get_all(name)
        if value is None and current:
            del params[name]
        elif value is not None and current != (value if isinstance(value, list) else [value]):
            params[name] = value


def show_host_pairs(store: Store, path: str, config: Config, host: str, pages: pd.DataFrame) -> None:
    """The pairs at the threshold with a page on `host`; a picked pair's evidence below them."""
    pairs = host_pairs(
        get_candidate_pairs(store, path, config.fingerprint_key, config.similarity, config),
        pages,
        host,
        config,
    )
    st.markdown(
        f"**Pairs at the threshold with a page on {md_escape(host)}** ({len(pairs):,}; pick one for its evidence)"
    )
    if pairs.empty:
        st.caption("None.")
        return
    unit = "bits" if config.method == "simhash" else config.similarity
    event = st.dataframe(
        pairs[["score", "page_a", "url_a", "page_b", "url_b"]],
        hide_index=True,
        width="stretch",
        height=min(36 * (len(pairs) + 1) + 2, 250),
        on_select="rerun",
        selection_mode="single-row",
        key=W_HOST_PAIRS,
        column_config={
            "score": st.column_config.NumberColumn(
                unit, format="%d" if config.method == "simhash" else "%.2f"
            ),
            "page_a": st.column_config.NumberColumn("page"),
            "url_a": st.column_config.TextColumn("URL (canonical)", width="large"),
            "page_b": st.column_config.NumberColumn("page"),
            "url_b": st.column_config.TextColumn("URL (canonical)", width="large"),
        },
    )
    rows = event.selection.rows if event and event.selection else []
    if rows:
        row = pairs.iloc[rows[0]]
        left = store.page(int(row["page_a"]), config.norm_key, source=False)
        right = store.page(int(row["page_b"]), config.norm_key, source=False)
        if left is not None and right is not None:
            show_pair_evidence(store, path, config, left, right, expanded=True)
