"""neardup audit app: home page. Run with `neardup app` or `streamlit run app.py` (NEARDUP_DB=...)."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from neardup.errors import NeardupError
from neardup.report import describe_setting
from neardup.ui.data import get_analysis, get_store
from neardup.ui.state import db_path
from neardup.ui.widgets import setting_sidebar

st.set_page_config(page_title="neardup", page_icon=":material/content_copy:", layout="wide")
st.title("neardup: how much of this crawl is duplicated?")

path = db_path()
try:
    store = get_store(path)
except NeardupError as exc:
    st.error(str(exc))
    st.stop()

n_pages = store.count_pages()
st.caption(f"Database `{path}` · {n_pages:,} pages")
if n_pages == 0:
    st.info("This database holds no pages yet. Load a crawl dump with `neardup ingest DUMP --db "
            f"{path}`, then reload this page.")
    st.stop()

config = setting_sidebar()
analysis = get_analysis(store, path, config)
n = analysis.numbers
st.subheader(describe_setting(analysis))

c1, c2, c3 = st.columns(3)
c1.metric("Exact duplicates", f"{n['exact_duplicates']:,}", help="Same words after normalization (incl. byte-identical).")
c2.metric("Near duplicates", f"{n['near_duplicates']:,}", help="Distinct texts merged by the near-duplicate threshold.")
c3.metric("Unique pages", f"{n['unique_pages']:,}", help="One representative per cluster: what dedup keeps.")
c4, c5, c6, c7 = st.columns(4)
c4.metric("Duplicate clusters", f"{n['duplicate_clusters']:,}")
c5.metric("Largest cluster", f"{n['largest_cluster']:,}")
c6.metric("Redundant", f"{n['redundant_pct']:.1f}%", help="(exact + near) / total pages")
c7.metric("Degenerate (set aside)", f"{n['degenerate_pages']:,}", help="Block pages, soft-404s, loading shells, too short, non-2xx.")

for warning in analysis.warnings:
    st.warning(warning)

left, right = st.columns(2)
with left:
    st.markdown("**Pages by host**")
    st.dataframe(analysis.hosts, hide_index=True, width="stretch", height=320)
with right:
    sizes = analysis.cluster_sizes
    if len(sizes):
        counts = sizes.value_counts().sort_index()
        fig = px.bar(x=counts.index.astype(str), y=counts.to_numpy(), labels={"x": "cluster size (pages)", "y": "clusters"},
                     title="Duplicate cluster sizes")
        fig.update_layout(height=320, margin=dict(t=40, b=10, l=10, r=10))
        st.plotly_chart(fig, width="stretch")
    else:
        st.info("No duplicate clusters at this threshold.")
