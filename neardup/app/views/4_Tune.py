"""Tune: precision and recall per threshold, estimated from the labels (stratified by bucket)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from neardup.app import page_script
from neardup.audit import labeled_pairs, labels_by_labeler
from neardup.labels import (
    ADJUDICATOR,
    MIN_LABELS_PER_BUCKET,
    STOP_HALF_WIDTH,
    agreement_table,
    bucket_edges,
    bucket_range,
    bucket_tallies,
    decision_at,
    estimates,
    labeler_overlap,
    pairs_without_labels,
    suggest_threshold,
    thin_buckets,
)
from neardup.queues import AuditQueue
from neardup.ui.data import get_candidate_pairs
from neardup.ui.state import (
    W_QUEUE,
    W_TUNE_LABEL_MORE,
    W_TUNE_LABELER_1,
    W_TUNE_LABELER_2,
    W_TUNE_USE,
    set_config,
)
from neardup.ui.widgets import flash, open_database

st.set_page_config(page_title="neardup · Tune", layout="wide")
st.title("Tune the threshold from labels")
store, path, config = open_database()
pairs = get_candidate_pairs(store, path, config.fingerprint_key, config.similarity, config)
labels = store.labels()
tallies = bucket_tallies(pairs["bucket"], labeled_pairs(pairs, labels))
# every bucket edge and the threshold in use, so the curves and the table show it and what the buckets
# between hold (an edge above an empty bucket flags what the next one up flags)
est = estimates(tallies, config, np.union1d(bucket_edges(config), [config.threshold]))

with st.expander("How precision, recall and their intervals are estimated"):
    st.markdown(
        "Pairs were sampled per similarity bucket, so each bucket's labeled duplicate share is weighted by the "
        "bucket's size. **Precision** is the estimated share of true duplicates among the pairs a threshold flags; "
        "**recall** the share of all duplicates among candidate pairs that it flags. *Unsure* labels are left out. "
        "Each interval is the Wilson 95% interval per bucket, combined as weighted sums; a bucket without labels "
        "counts as anything from 0% to 100% duplicates and a fully labeled bucket as exactly its share. The "
        "combination is conservative: the intervals are wider than true 95% intervals."
    )

n_labels = int(tallies["labeled"].sum())
if n_labels == 0:
    st.info("No labels at this setting yet. Label pairs on the **Audit** page, then come back.")
    st.stop()

decision = decision_at(tallies, config)
where = decision.summary().capitalize()
if decision.done:
    st.success(f"{where}: both known to +/-{STOP_HALF_WIDTH:g}. You can stop labeling at this threshold.")
else:
    top = decision.more.sort_values(ascending=False, kind="stable")
    spread = ", ".join(f"{n} in bucket {b:g}" for b, n in top.head(4).items()) + (
        " ..." if len(top) > 4 else ""
    )
    st.info(
        f"{where}. "
        + (
            f"About {int(top.sum())} more labels ({spread}) would bring both to +/-{STOP_HALF_WIDTH:g}, if the "
            "buckets' duplicate shares stay as labeled so far; the *active* queue on **Audit** serves them."
            if decision.reachable
            else f"Labeling every pair left would not bring both to +/-{STOP_HALF_WIDTH:g} ({int(top.sum())} "
            "pairs left in the buckets that matter)."
        )
    )
    if (
        decision.reachable
        and int(top.sum())
        and st.button(
            f"Label the {int(top.sum())} pairs that decide this",
            type="primary",
            key=W_TUNE_LABEL_MORE,
            help="Opens the Audit page on its active queue: the pairs whose labels narrow this decision most.",
        )
    ):
        st.session_state[W_QUEUE] = AuditQueue.ACTIVE
        st.switch_page(page_script("3_Audit.py"))
n_unknown, n_unknown_flagged = pairs_without_labels(tallies, config)
if n_unknown:
    st.caption(
        f"{n_unknown} of the {int(tallies['pairs'].sum())} candidate pairs are in buckets without labels "
        f"({n_unknown_flagged} of them flagged at {config.threshold:g}): the estimates leave them out and the "
        "intervals count them as anything from 0% to 100% duplicates."
    )
suggested, reason = suggest_threshold(est, tallies, config)
if suggested is not None:
    c1, c2 = st.columns([1, 3])
    c1.metric("Suggested threshold", f"{suggested:g}")
    c2.write(reason)
    if not decision.done:
        c2.caption(
            f"Provisional: the stop rule is not met at {config.threshold:g} (precision and recall not yet known "
            f"to +/-{STOP_HALF_WIDTH:g}), so this is no recommendation yet."
        )
    if config.threshold == suggested:
        c1.success("In use on every page.")
    # primary only once the labels are enough to decide (the stop rule); before that, one choice among others
    elif c1.button("Use this threshold", type="primary" if decision.done else "secondary", key=W_TUNE_USE):
        set_config(
            config.replace(threshold=int(suggested) if config.method == "simhash" else float(suggested))
        )
        flash(
            f"Threshold set to {suggested:g} (was {config.threshold:g}): every page and the export now use it."
        )
        st.rerun()
else:
    st.info(reason)

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
    placeholder="–",
    width="stretch",
    column_config={
        "threshold": st.column_config.NumberColumn("threshold", format="%g"),
        "pairs_flagged": st.column_config.NumberColumn("flagged", help="candidate pairs it flags"),
        "labels": st.column_config.NumberColumn("labels", help="decided labels among the flagged pairs"),
        "unlabeled_pairs": st.column_config.NumberColumn(
            "unlabeled", help="flagged pairs in buckets without a decided label"
        ),
        **{
            c: st.column_config.NumberColumn(
                c.replace("precision_", "").replace("recall_", "") + (" (95%)" if "_" in c else ""),
                help=c.replace("_", ", 95% interval, ") if "_" in c else None,
                format="%.2f",
            )
            for c in est.columns
            if "precision" in c or "recall" in c
        },
    },
)
st.markdown("**Per bucket** (labels, duplicate rate and its 95% interval; exact where every pair is labeled)")
st.dataframe(
    tallies.assign(scores=[bucket_range(b, config) for b in tallies["bucket"]]),
    column_order=["bucket", "scores", *tallies.columns.drop("bucket")],
    hide_index=True,
    placeholder="–",
    width="stretch",
    column_config={
        "bucket": st.column_config.NumberColumn("bucket", format="%g"),
        "labeled": st.column_config.NumberColumn("decided labels"),
        "rate": st.column_config.NumberColumn("duplicate rate", format="%.2f"),
        "rate_low": st.column_config.NumberColumn("95% low", format="%.2f"),
        "rate_high": st.column_config.NumberColumn("95% high", format="%.2f"),
        "unlabeled": st.column_config.NumberColumn(
            "pairs left", help="pairs without a label (an unsure label counts as one)"
        ),
    },
)

# --- agreement between labelers ------------------------------------------------------------------------
ratings = labels_by_labeler(pairs, labels)
ratings = ratings.assign(labeler=ratings["labeler"].fillna("(unnamed)"))
ratings = ratings[ratings["labeler"] != ADJUDICATOR]
overlap = labeler_overlap(ratings)
st.subheader("Agreement between labelers")
if overlap.empty:
    st.caption(
        "One labeler so far (or no pair labeled by two): agreement needs two labelers' labels of the same "
        "pairs. Labels imported on **Export** keep their labeler."
    )
else:
    c1, c2 = st.columns(2)
    first = c1.selectbox("Labeler", overlap["first"].unique(), key=W_TUNE_LABELER_1)
    seconds = overlap.loc[overlap["first"] == first, "second"]
    second = c2.selectbox("and labeler", seconds, key=W_TUNE_LABELER_2) if len(seconds) else None
    if second is not None:
        table = agreement_table(ratings, first, second)
        overall = table.iloc[0]
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Pairs both labeled", int(overall["pairs"]))
        m2.metric("Raw agreement", f"{overall['raw']:.0%}")
        m3.metric("Cohen's kappa", "n/a" if pd.isna(overall["kappa"]) else f"{overall['kappa']:.2f}")
        m4.metric("Gwet's AC1", "n/a" if pd.isna(overall["ac1"]) else f"{overall['ac1']:.2f}")
        st.caption(
            "Over the three labels (duplicate, not, unsure). Kappa's chance agreement comes from each labeler's "
            "own label shares, so when one label dominates (most pairs in a bucket are duplicates) kappa is low "
            "even at high raw agreement; AC1 pools the shares and stays near the raw agreement. n/a: both "
            "labelers gave one same label throughout. Pairs they disagree on are the Audit page's *labelers "
            "disagree* queue, where your label is the adjudicated final one."
        )
        st.dataframe(
            table,
            hide_index=True,
            placeholder="–",
            width="stretch",
            column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("raw", "kappa", "ac1")},
        )
