"""Explore: similarity histogram with the threshold, cluster sizes, per-host rollup, warnings."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from neardup.audit import labeled_pairs
from neardup.labels import bucket_edges
from neardup.report import describe_setting
from neardup.ui.data import get_analysis, get_candidate_pairs
from neardup.ui.widgets import open_database

st.set_page_config(page_title="neardup · Explore", layout="wide")
st.title("Explore")
store, path, config = open_database()
analysis = get_analysis(store, path, config)
pairs = get_candidate_pairs(store, path, config.fingerprint_key, config.similarity, config)
n = analysis.numbers
st.caption(describe_setting(analysis))

c1, c2, c3, c4 = st.columns(4)
c1.metric("Exact duplicates", f"{n['exact_duplicates']:,}")
c2.metric("Near duplicates", f"{n['near_duplicates']:,}")
c3.metric("Unique pages", f"{n['unique_pages']:,}")
c4.metric("Pairs at threshold", f"{n['pairs_at_threshold']:,}", help="Candidate pairs on the duplicate side.")
for warning in analysis.warnings:
    st.warning(warning)

unit = "Hamming distance (bits)" if config.method == "simhash" else f"{config.similarity} (buckets of 0.05)"
if pairs.empty:
    st.info("No candidate pairs at this setting: nothing here looks alike.")
else:
    counts = pairs["bucket"].value_counts().sort_index()
    if config.method == "simhash":
        bar = go.Bar(x=counts.index, y=counts.to_numpy(), name="candidate pairs", marker_color="#4C78A8")
    else:  # each bar spans its bucket [edge, edge + 0.05), from the floor up: empty buckets show as gaps
        counts = counts.reindex(bucket_edges(config), fill_value=0)
        bar = go.Bar(
            x=counts.index,
            y=counts.to_numpy(),
            offset=0,
            width=0.05,
            name="candidate pairs",
            marker_color="#4C78A8",
            marker_line=dict(color="white", width=1),
            hovertemplate="%{x:.2f}-%{customdata:.2f}: %{y:,} pairs<extra></extra>",
            customdata=counts.index + 0.05,
        )
    fig = go.Figure(bar)
    lab = labeled_pairs(pairs, store.labels())
    decided = lab[lab["label"].isin(["duplicate", "not"])]
    if len(decided):
        share = decided.groupby("bucket")["label"].apply(lambda s: (s == "duplicate").mean())
        share = share.reindex(counts.index)  # unlabeled buckets stay gaps, not interpolated
        mid = 0 if config.method == "simhash" else 0.025  # at the middle of the bucket's bar
        fig.add_trace(
            go.Scatter(
                x=share.index + mid,
                y=share.to_numpy(),
                name="labeled duplicate share",
                yaxis="y2",
                mode="lines+markers",
                marker_color="#E45756",
                connectgaps=False,
            )
        )
    fig.add_vline(
        x=config.threshold,
        line_dash="dash",
        line_color="black",
        annotation_text=f"threshold {config.threshold:g}",
    )
    fig.update_layout(
        title="Candidate pairs by similarity",
        xaxis_title=unit,
        height=380,
        yaxis=dict(type="log", dtick=1, title="pairs (log scale)"),
        yaxis2=dict(
            overlaying="y",
            side="right",
            range=[0, 1.05],
            tickvals=[0, 0.25, 0.5, 0.75, 1],
            tickformat=".0%",
            title="labeled duplicate share",
            showgrid=False,
        ),
        legend=dict(orientation="h", y=-0.25),
        margin=dict(t=50, b=10),
    )
    if config.method == "simhash":
        fig.update_xaxes(autorange="reversed", dtick=1)
    else:
        fig.update_xaxes(range=[float(counts.index.min()), 1.05], dtick=0.05, tickformat=".2f")
    st.plotly_chart(fig, width="stretch")
    side = "at or below" if config.method == "simhash" else "at or above"
    st.caption(
        f"Pairs {side} the dashed line are near duplicates. Pairs are stored down to the loosest "
        "threshold, so moving the slider only filters them."
    )

left, right = st.columns(2)
with left:
    sizes = analysis.cluster_sizes
    if len(sizes):
        vc = sizes.value_counts().sort_index()
        fig2 = go.Figure(go.Bar(x=vc.index.astype(str), y=vc.to_numpy(), marker_color="#72B7B2"))
        fig2.update_layout(
            title="Duplicate cluster sizes",
            # Sizes as categories: a numeric axis puts ticks between two sizes (1.5, 2.5 pages).
            xaxis=dict(title="pages in cluster", type="category"),
            yaxis_title="clusters",
            height=340,
            margin=dict(t=50, b=10),
        )
        st.plotly_chart(fig2, width="stretch")
    else:
        st.info("No duplicate clusters at this threshold.")
with right:
    st.markdown("**Per host**")
    st.dataframe(
        analysis.hosts,
        hide_index=True,
        width="stretch",
        height=340,
        column_config={"redundant_pct": st.column_config.NumberColumn("redundant %", format="%.1f")},
    )
