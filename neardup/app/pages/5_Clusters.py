"""Clusters: by size, members with the representative and why; open a member pair in Audit."""

from __future__ import annotations

import streamlit as st

from neardup.audit import cluster_members, cluster_table
from neardup.clusters import describe_rule
from neardup.ui.data import get_analysis
from neardup.ui.state import KEY_AUDIT_PAIR
from neardup.ui.widgets import open_database

st.set_page_config(page_title="neardup · Clusters", layout="wide")
st.title("Clusters")
store, path, config = open_database()
analysis = get_analysis(store, path, config)
clusters = cluster_table(analysis.pages)
if clusters.empty:
    st.info("No duplicate clusters at this threshold.")
    st.stop()

st.caption(
    f"{len(clusters):,} duplicate clusters; the representative is {describe_rule(config.representative)}."
)
event = st.dataframe(
    clusters,
    hide_index=True,
    width="stretch",
    height=300,
    on_select="rerun",
    selection_mode="single-row",
    key="neardup.clusters.table",
)
rows = event.selection.rows if event and event.selection else []
cluster_id = int(clusters.iloc[rows[0]]["cluster_id"]) if rows else int(clusters.iloc[0]["cluster_id"])

members = cluster_members(analysis.pages, cluster_id)
rep = members[members["is_representative"]].iloc[0]
st.subheader(f"Cluster {cluster_id}: {len(members)} pages")
st.caption(f"Representative ({clusters.set_index('cluster_id').loc[cluster_id, 'why']}):")
st.code(rep["url"], language=None, wrap_lines=True)
unit = "Hamming bits" if config.method == "simhash" else config.similarity
st.dataframe(
    members,
    hide_index=True,
    width="stretch",
    column_config={
        "url_differs": st.column_config.TextColumn(
            "differs from the representative's URL",
            help="The member URL from where it parts from the representative's (a tracking parameter, a "
            "print flag, another path); empty for the representative.",
        ),
        "url": st.column_config.TextColumn("url", width="large"),
        "similarity_to_representative": st.column_config.NumberColumn(
            f"similarity to rep. ({unit})",
            format="%d" if config.method == "simhash" else "%.2f",
            help=f"In the threshold's unit ({unit}): the stored pair's score where the member and the "
            "representative are a candidate pair, else an estimate from their fingerprints.",
        ),
    },
)

others = members[~members["is_representative"]]
if len(others):
    labels = {
        int(r.page_id): f"page {r.page_id} · {r.url} · fetched {r.fetched_at}" for r in others.itertuples()
    }
    choice = st.selectbox("Compare with the representative", list(labels), format_func=labels.__getitem__)
    if st.button("Open this pair in Audit"):
        st.session_state[KEY_AUDIT_PAIR] = (int(rep["page_id"]), int(choice))
        st.switch_page("pages/3_Audit.py")
