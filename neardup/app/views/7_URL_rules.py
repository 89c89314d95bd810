"""URL rules learned from the clusters, crawl traps, and crawl over crawl (the sources of the database)."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import streamlit as st
import yaml

from neardup.config import dump_config
from neardup.csvsafe import to_csv
from neardup.report import describe_config
from neardup.rules import crawler_rules
from neardup.ui.data import get_clustering, get_comparison, get_learned_rules, get_source_trend
from neardup.ui.render import md_escape
from neardup.ui.state import W_COMPARE_BASELINE, W_COMPARE_CURRENT, W_COMPARE_SHOWN, W_RULES_TABLE
from neardup.ui.widgets import open_database

st.set_page_config(page_title="neardup · URL rules", layout="wide")
st.title("URL rules")
store, path, config = open_database()
clustering = get_clustering(store, path, config)  # no pages frame: the URL table holds the URLs
st.caption(f"Learned from the clusters at {md_escape(describe_config(clustering.config))}.")

learned = get_learned_rules(store, path, config)
c1, c2, c3 = st.columns(3)
c1.metric("Rules", f"{len(learned.accepted):,}", help="Per-host rewrites at or above the precision floor.")
c2.metric(
    "Fetches saved",
    f"{learned.pages_saved:,}",
    help="Pages at a second URL of one rewritten URL: a crawler applying the rules would not fetch them.",
)
c3.metric(
    "Candidates rejected",
    f"{len(learned.rejected):,}",
    help="Too imprecise, too little support, or merging no URL pair beside the kept rules of its host "
    "(the twin of a kept rule, e.g. the same parameter on the www. host).",
)

# the accepted and the rejected rules' tables (`LearnedRules.table`)
RULE_COLUMNS = {
    "precision": st.column_config.NumberColumn(format="%.2f"),
    "support_pairs": st.column_config.NumberColumn("support (URL pairs)"),
    "support_clusters": st.column_config.NumberColumn("clusters"),
    "merged_pairs": st.column_config.NumberColumn(
        "merged pairs", help="URL pairs (of pages) the rule rewrites to one URL."
    ),
    "pages_saved": st.column_config.NumberColumn(
        "pages saved", help="Fetches a crawler applying the rule would not make."
    ),
    "counter_examples": st.column_config.TextColumn("counter-examples"),
}
table = learned.table()
if table.empty:
    st.info("No URL rule explains the clusters at this setting.")
else:
    st.dataframe(
        table,
        hide_index=True,
        placeholder="–",
        width="stretch",
        column_config=RULE_COLUMNS,
        key=W_RULES_TABLE,
    )
    rules_config = config.replace(url_rules=learned.rules)
    crawler = crawler_rules(learned.rules)
    # The files are written when a button is pressed, not on every run (a threshold move reruns the page).
    d1, d2, d3 = st.columns(3)
    d1.download_button(
        "dupcheck.yaml (url_rules)",
        lambda: dump_config(rules_config),
        file_name="dupcheck.yaml",
        mime="text/yaml",
    )
    d2.download_button(
        "Crawler rules (YAML)",
        lambda: yaml.safe_dump(crawler, sort_keys=False),
        file_name="url_rules.yaml",
        mime="text/yaml",
    )
    d3.download_button(
        "Crawler rules (JSON)",
        lambda: json.dumps(crawler, indent=2),
        file_name="url_rules.json",
        mime="application/json",
    )

rejected = learned.table(accepted=False)
if len(rejected):
    with st.expander(f"Rejected candidates ({len(rejected):,}), with counter-examples"):
        st.dataframe(rejected, hide_index=True, placeholder="–", width="stretch", column_config=RULE_COLUMNS)

st.subheader("Crawl traps")
if learned.traps.empty:
    st.caption("No URL pattern family with many URLs and few distinct texts.")
else:
    st.dataframe(
        learned.traps,
        hide_index=True,
        placeholder="–",
        width="stretch",
        column_config={
            "distinct_texts": st.column_config.NumberColumn(
                "distinct texts",
                help="Clusters among the family's pages; 0: every page of it is set aside as no content "
                "(degenerate: a login, search or soft-404 page).",
            ),
        },
    )

st.subheader("Crawl over crawl")
# One source has no trend: its numbers are Home's, not clustered again per threshold here.
trend = get_source_trend(store, path, config) if len(store.sources()) >= 2 else None
if trend is None or len(trend) < 2:
    st.info("Load a second crawl of the same sites (the Load page) to compare crawls.")
    st.stop()
fig = go.Figure()
x = [f"{r.source_id}: {r.source}" for r in trend.itertuples()]
fig.add_scatter(x=x, y=trend["redundant_pct"], mode="lines+markers", name="redundant %")
for key, name in (("exact_duplicates", "exact duplicates %"), ("near_duplicates", "near duplicates %")):
    fig.add_scatter(
        x=x, y=(100 * trend[key] / trend["total_pages"]).round(2), mode="lines+markers", name=name
    )
fig.update_layout(height=320, margin={"t": 20, "b": 20}, yaxis_title="% of the crawl's pages")
st.plotly_chart(fig, width="stretch")

# Two sources clustered together again at every threshold: drawn only while on (the trend is the overview;
# a crawl of a source per shard has hundreds of sources).
if not st.toggle(
    "Compare two sources",
    key=W_COMPARE_SHOWN,
    help="Clusters new, gone, grown or shrunk from a baseline source to a current one, per host, and the "
    "current pages that duplicate a baseline page (`neardup compare`).",
):
    st.stop()
names = {int(r.source_id): f"{r.source_id}: {r.source}" for r in trend.itertuples()}
ids = list(names)
b1, b2 = st.columns(2)
baseline = b1.selectbox(
    "Baseline", ids, index=len(ids) - 2, format_func=names.__getitem__, key=W_COMPARE_BASELINE
)
current = b2.selectbox(
    "Current", ids, index=len(ids) - 1, format_func=names.__getitem__, key=W_COMPARE_CURRENT
)
if baseline == current:
    st.warning("Choose two different sources.")
    st.stop()
cmp = get_comparison(store, path, config, int(baseline), int(current))
counts = cmp.counts()
m = st.columns(5)
m[0].metric("New clusters", counts["new"])
m[1].metric("Gone", counts["gone"])
m[2].metric("Grown", counts["grown"])
m[3].metric("Shrunk", counts["shrunk"])
m[4].metric("Current pages duplicating the baseline", f"{len(cmp.repeats):,}")
st.dataframe(cmp.numbers, hide_index=True, placeholder="–", width="stretch")
st.markdown("**Per host**")
st.dataframe(cmp.hosts, hide_index=True, placeholder="–", width="stretch")
st.markdown("**Changed clusters**")
st.dataframe(
    cmp.clusters[cmp.clusters["change"] != "same"], hide_index=True, placeholder="–", width="stretch"
)
st.markdown("**Current pages that duplicate a baseline page**")
st.dataframe(cmp.repeats.head(500), hide_index=True, placeholder="–", width="stretch")
st.download_button("repeats.csv", to_csv(cmp.repeats) or "", file_name="repeats.csv", mime="text/csv")
