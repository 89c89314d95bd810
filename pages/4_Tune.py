"""Tune: precision and recall per threshold, estimated from the labels (stratified by bucket)."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from neardup.audit import tune_tables
from neardup.labels import MIN_LABELS_PER_BUCKET, suggest_threshold, thin_buckets
from neardup.ui.data import get_fingerprints
from neardup.ui.state import set_config
from neardup.ui.widgets import flash, open_database

st.set_page_config(page_title="neardup · Tune", layout="wide")
st.title("Tune the threshold from labels")
store, path, config = open_database()
fp = get_fingerprints(store, path, config.fingerprint_key, config)
tallies, est = tune_tables(fp, config, store.labels())

st.markdown(
    "Pairs were sampled per similarity bucket, so each bucket's labeled duplicate share is weighted by the "
    "bucket's size. **Precision** is the estimated share of true duplicates among the pairs a threshold flags; "
    "**recall** the share of all duplicates among candidate pairs that it flags. Intervals are Wilson 95% "
    "per bucket, combined conservatively. *Unsure* labels are left out."
)
n_labels = int(tallies["labeled"].sum())
if n_labels == 0:
    st.info("No labels at this setting yet. Label pairs on the **Audit** page, then come back.")
    st.stop()

thin = thin_buckets(tallies)
if len(thin):
    st.warning(
        f"{len(thin)} of {len(tallies)} buckets have fewer than {MIN_LABELS_PER_BUCKET} decided labels and "
        f"unlabeled pairs left ({', '.join(f'{b:g}' for b in thin['bucket'][:12])}"
        f"{' ...' if len(thin) > 12 else ''}): their estimates are wide or missing. Label more on **Audit**."
    )
n_contested = int(tallies["contested"].sum())
st.caption(
    f"{n_labels} decided labels at this setting; per pair the adjudicator's label counts, else the labelers' "
    f"majority: {n_contested} pairs are contested (labelers disagree, no adjudicator's label)."
    if n_contested
    else f"{n_labels} decided labels at this setting; no pair is contested."
)

suggested, reason = suggest_threshold(est, tallies)
if suggested is not None:
    c1, c2 = st.columns([1, 3])
    c1.metric("Suggested threshold", f"{suggested:g}")
    c2.write(reason)
    if config.threshold == suggested:
        c1.success("In use on every page.")
    elif c1.button("Use this threshold", type="primary"):
        set_config(
            config.replace(threshold=int(suggested) if config.method == "simhash" else float(suggested))
        )
        flash(
            f"Threshold set to {suggested:g} (was {config.threshold:g}): every page and the export now use it."
        )
        st.rerun()
else:
    st.info(reason)

fig = go.Figure()
for name, colour, band in (
    ("precision", "#4C78A8", "rgba(76,120,168,0.18)"),
    ("recall", "#F58518", "rgba(245,133,24,0.18)"),
):
    fig.add_trace(
        go.Scatter(
            x=est["threshold"],
            y=est[f"{name}_high"],
            mode="lines",
            line=dict(width=0),
            showlegend=False,
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=est["threshold"],
            y=est[f"{name}_low"],
            mode="lines",
            line=dict(width=0),
            fill="tonexty",
            fillcolor=band,
            showlegend=False,
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(x=est["threshold"], y=est[name], mode="lines+markers", name=name, line=dict(color=colour))
    )
fig.add_vline(
    x=config.threshold,
    line_dash="dash",
    annotation_text=f"current {config.threshold:g}",
    annotation_position="bottom right",
)
fig.update_layout(
    height=380,
    yaxis=dict(range=[0, 1.02], title="estimate"),
    xaxis_title="threshold (bits)" if config.method == "simhash" else f"threshold ({config.similarity})",
    margin=dict(t=30, b=10),
    legend=dict(orientation="h", y=-0.2),
)
if config.method == "simhash":
    fig.update_xaxes(autorange="reversed", dtick=1)
st.plotly_chart(fig, width="stretch")

st.markdown("**Per threshold**")
st.dataframe(
    est,
    hide_index=True,
    width="stretch",
    column_config={
        c: st.column_config.NumberColumn(format="%.2f")
        for c in est.columns
        if "precision" in c or "recall" in c
    },
)
st.markdown("**Per bucket** (labels, duplicate rate, Wilson 95%)")
st.dataframe(
    tallies,
    hide_index=True,
    width="stretch",
    column_config={
        c: st.column_config.NumberColumn(format="%.2f") for c in ("rate", "rate_low", "rate_high")
    },
)
