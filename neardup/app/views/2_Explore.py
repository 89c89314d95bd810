"""Explore: similarity histogram with the threshold, cluster sizes, per-host rollup, warnings."""

from __future__ import annotations

import streamlit as st

from neardup.audit import labeled_pairs
from neardup.report import describe_config
from neardup.ui.data import get_candidate_pairs, get_clustering
from neardup.ui.state import W_COUNT_AXIS
from neardup.ui.widgets import COUNT_AXES, cluster_size_chart, hosts_table, open_database, similarity_figure

st.set_page_config(page_title="neardup · Explore", layout="wide")
st.title("Explore")
store, path, config = open_database()
clustering = get_clustering(store, path, config)  # counts only: no pages frame
pairs = get_candidate_pairs(store, path, config.fingerprint_key, config.similarity, config)
n = clustering.numbers
st.caption(describe_config(clustering.config))

c1, c2, c3, c4 = st.columns(4)
c1.metric("Exact duplicates", f"{n['exact_duplicates']:,}")
c2.metric("Near duplicates", f"{n['near_duplicates']:,}")
c3.metric("Unique pages", f"{n['unique_pages']:,}")
c4.metric("Pairs at threshold", f"{n['pairs_at_threshold']:,}", help="Candidate pairs on the duplicate side.")
for warning in clustering.warnings:
    st.warning(warning)

if pairs.empty:
    st.info("No candidate pairs at this setting: nothing here looks alike.")
else:
    chart = st.container()
    note, switch = st.columns([4, 1], vertical_alignment="center")
    count_axis = switch.radio(
        "Count axis",
        COUNT_AXES,
        horizontal=True,
        key=W_COUNT_AXIS,
        help="log: a bucket of a few pairs stays visible beside one of hundreds; linear: bar heights compare "
        "as the counts do.",
    )
    lab = labeled_pairs(pairs, store.labels())
    decided = lab[lab["label"].isin(["duplicate", "not"])]
    chart.plotly_chart(similarity_figure(pairs, decided, config, count_axis=count_axis), width="stretch")
    side = "at or below" if config.method == "simhash" else "at or above"
    note.caption(
        f"Pairs {side} the dashed line are near duplicates. Pairs are stored down to the loosest "
        "threshold, so moving the slider only filters them."
    )

left, right = st.columns(2)
with left:
    cluster_size_chart(clustering.cluster_sizes, height=340)
with right:
    hosts_table(clustering.hosts, height=340)
