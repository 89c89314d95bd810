"""Clusters: by size, filtered by host, category, size and URL text; members with the representative and why,
how the cluster holds together, the evidence for two members; open a member pair in Audit."""

from __future__ import annotations

import streamlit as st

from neardup.app import page_script
from neardup.audit import cluster_members
from neardup.clusters import describe_rule
from neardup.drilldown import filter_clusters
from neardup.ui.data import get_analysis, get_cluster_table, get_page_categories
from neardup.ui.drilldown import SHOWN_CLUSTERS, cluster_filters, show_host_pairs
from neardup.ui.evidence import show_cluster_links, show_member_evidence
from neardup.ui.state import KEY_AUDIT_OPENED_BY, KEY_AUDIT_PAIR, OPENED_BY_CLUSTERS, W_CLUSTERS_TABLE
from neardup.ui.widgets import open_database

st.set_page_config(page_title="neardup · Clusters", layout="wide")
st.title("Clusters")
store, path, config = open_database(frames=True)
analysis = get_analysis(store, path, config)
labels_version = store.labels_version()
categories = get_page_categories(store, path, config, labels_version)
table = get_cluster_table(store, path, config, labels_version)
if table.rows.empty:
    st.info("No duplicate clusters at this threshold.")
    st.stop()

flt = cluster_filters(table)
all_clusters, clusters = table.rows, filter_clusters(table, analysis.pages, flt)
if flt.host is not None:  # above the clusters' caption, which goes with the table it counts
    show_host_pairs(store, path, config, flt.host, analysis.pages)
st.caption(
    f"{len(clusters):,} duplicate clusters"
    + (f" of {len(all_clusters):,} (filtered)" if flt.active else "")
    + (
        f", the {SHOWN_CLUSTERS:,} largest listed (filter for the others)"
        if len(clusters) > SHOWN_CLUSTERS
        else ""
    )
    + f"; the representative is {describe_rule(config.representative)}. "
    "URLs here are canonical (tracking parameters, scheme, www and trailing slash normalized) unless "
    "named as fetched. Keys: Tab into the table, arrows to a row, **Shift+Space** shows its cluster."
)
if clusters.empty:
    st.info("No duplicate cluster passes these filters.")
    st.stop()
clusters = clusters.head(SHOWN_CLUSTERS)
event = st.dataframe(
    clusters,
    hide_index=True,
    placeholder="–",
    width="stretch",
    height=300,
    on_select="rerun",
    selection_mode="single-row",
    key=W_CLUSTERS_TABLE,
    column_config={
        "cluster_id": st.column_config.NumberColumn("cluster", width="small"),
        "size": st.column_config.NumberColumn("pages", width="small"),
        # sized so the category, the column the filters above name, stays in view at 1400 px
        "representative_url": st.column_config.TextColumn("representative (canonical URL)", width="large"),
        "why": st.column_config.TextColumn("chosen as"),
        "hosts": st.column_config.NumberColumn("hosts", width="small"),
        "category": st.column_config.TextColumn(
            "category", help="The cluster's: its copies' most frequent (each copy's is in the table below)."
        ),
    },
)
rows = event.selection.rows if event and event.selection else []
shown = clusters.iloc[rows[0] if rows else 0]
cluster_id = int(shown["cluster_id"])

members = cluster_members(table.pages_of(analysis.pages, cluster_id), cluster_id, categories)
rep = members[members["is_representative"]].iloc[0]
st.subheader(f"Cluster {cluster_id}: {len(members)} pages")
st.caption(f"Representative, canonical URL ({shown['why']}):")
st.code(rep["canonical_url"], language=None, wrap_lines=True)
if rep["url"] != rep["canonical_url"]:
    st.caption("fetched as:")
    st.code(rep["url"], language=None, wrap_lines=True)
unit = "Hamming bits" if config.method == "simhash" else config.similarity
st.dataframe(
    members.assign(url_differs=members["url_differs"].mask(members["is_representative"], "(representative)")),
    hide_index=True,
    placeholder="–",
    width="stretch",
    column_order=[
        "page_id",
        "url_differs",
        "similarity_to_representative",
        "category",
        "action",
        "fetched_at",
        "host",
        "rel_canonical",
        "url",
        "canonical_url",
    ],
    column_config={
        "page_id": st.column_config.NumberColumn("page"),
        "url_differs": st.column_config.TextColumn(
            "URL as fetched, where it differs from the representative's",
            width="large",
            help="The member's URL as fetched, from where it parts from the representative's (a tracking "
            "parameter, a print flag, another path).",
        ),
        "similarity_to_representative": st.column_config.NumberColumn(
            f"similarity to rep. ({unit})",
            format="%d" if config.method == "simhash" else "%.2f",
            help=f"In the threshold's unit ({unit}): the stored pair's score where the member and the "
            "representative are a candidate pair, else an estimate from their fingerprints.",
        ),
        "category": st.column_config.TextColumn(
            "category",
            help="What this copy is relative to the representative (a labeled pair's category, else the rule "
            "the Audit page suggests with).",
        ),
        "action": st.column_config.TextColumn("suggested action", width="medium"),
        "fetched_at": st.column_config.DatetimeColumn("fetched", format="YYYY-MM-DD HH:mm"),
        "rel_canonical": st.column_config.TextColumn("rel=canonical"),
        "url": st.column_config.TextColumn("URL as fetched", width="large"),
        "canonical_url": st.column_config.TextColumn("canonical URL", width="large"),
    },
)

show_cluster_links(store, path, config, int(rep["page_id"]))
show_member_evidence(store, path, config, members)

others = members[~members["is_representative"]]
if len(others):
    labels = {
        int(r.page_id): f"page {r.page_id} · {r.url} · fetched {r.fetched_at}" for r in others.itertuples()
    }
    choice = st.selectbox("Compare with the representative", list(labels), format_func=labels.__getitem__)
    if st.button("Open this pair in Audit"):
        st.session_state[KEY_AUDIT_PAIR] = (int(rep["page_id"]), int(choice))
        st.session_state[KEY_AUDIT_OPENED_BY] = OPENED_BY_CLUSTERS
        st.switch_page(page_script("3_Audit.py"))
