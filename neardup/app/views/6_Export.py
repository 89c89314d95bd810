"""Export: clusters.csv, dupcheck.yaml, labels.csv, the deduplicated dump and the removed pages; import a
colleague's labels."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from neardup.config import dump_config
from neardup.csvsafe import to_csv
from neardup.errors import NeardupError
from neardup.export import clusters_frame, kept_bytes, kept_download_format, removed_frame
from neardup.report import describe_setting
from neardup.ui.data import get_analysis, get_fingerprints, get_page_categories
from neardup.ui.render import counted, md_escape
from neardup.ui.state import KEY_LABELS_UPLOAD
from neardup.ui.widgets import open_database

st.set_page_config(page_title="neardup · Export", layout="wide")
st.title("Export")
store, path, config = open_database(frames=True)
analysis = get_analysis(store, path, config)
st.markdown("The files below are written at this setting (the sidebar's, also in this page's link):")
st.code(describe_setting(analysis), language=None, wrap_lines=True)

# a labeled pair's category names its copy's
clusters = clusters_frame(
    store, analysis, categories=get_page_categories(store, path, config, store.labels_version())
)
# The downloads sit on top but are drawn after an import below has run, so labels.csv holds what it added.
downloads = st.container()
st.caption(f"Below: clusters.csv, its first {min(200, len(clusters)):,} of {len(clusters):,} rows.")
st.dataframe(clusters.head(200), hide_index=True, placeholder="–", width="stretch")

st.subheader("Import labels")
uploaded = st.file_uploader(
    "A labels.csv from a colleague (merged: per pair and labeler the latest label wins; "
    "other labelers' labels stay)",
    type=["csv"],
)
if uploaded is not None and st.session_state.get(KEY_LABELS_UPLOAD) != (uploaded.name, uploaded.size):
    st.session_state[KEY_LABELS_UPLOAD] = (uploaded.name, uploaded.size)
    try:
        # every cell as the text it is: a label `nan` or an empty note must not turn into a float
        added = store.import_labels(pd.read_csv(uploaded, dtype=str, keep_default_na=False))
    except (NeardupError, pd.errors.ParserError, ValueError) as exc:
        st.error(f"Could not import {md_escape(uploaded.name)}: {md_escape(str(exc))}")
    else:
        st.success(f"{added} labels added or updated from {md_escape(uploaded.name)}.")

labels = store.labels()
removed_categories = get_page_categories(store, path, config, store.labels_version())
with downloads:
    c1, c2, c3 = st.columns(3)
    # The CSV is written when the button is clicked, not on every rerun (0.9 s at 100k pages). Each run
    # gives such a button a new file id and drops the last run's at its end, and the browser asks for the
    # file after it asked for the click's rerun: a rerun on the click could drop the id before the request
    # is served, and the click downloads nothing. Nothing here changes on a download, so none reruns.
    c1.download_button(
        "clusters.csv",
        lambda: to_csv(clusters),
        "clusters.csv",
        "text/csv",
        type="primary",
        on_click="ignore",
    )
    c1.caption(
        f"{counted(len(clusters), 'page')}, one row each: cluster, representative, similarity, suggested action."
    )
    c2.download_button(
        "dupcheck.yaml", dump_config(config), "dupcheck.yaml", "application/yaml", on_click="ignore"
    )
    c2.caption("This setting, to replay it: `neardup report --config dupcheck.yaml`.")
    c3.download_button(
        "labels.csv",
        to_csv(labels, keep_controls=True),  # read back by import_labels, which matches URLs exactly
        "labels.csv",
        "text/csv",
        disabled=labels.empty,
        on_click="ignore",
    )
    c3.caption(
        "No labels yet: label pairs on the Audit page (or import a colleague's below)."
        if labels.empty
        else f"{counted(len(labels), 'label')}, every labeler's: the pair, label, category, note, labeler, time."
    )
    # The deduplicated dump and what it left out: written on the click (deferred), as clusters.csv is.
    n = analysis.numbers
    kept_fmt = kept_download_format(store)
    kept_name = f"kept.{kept_fmt}"
    d1, d2, _ = st.columns(3)
    d1.download_button(
        kept_name,
        lambda: kept_bytes(store, analysis, kept_fmt),
        kept_name,
        "application/octet-stream",
        on_click="ignore",
    )
    d1.caption(
        f"The deduplicated dump: {counted(int(n['unique_pages']), 'page')}, one per cluster, as loaded plus "
        "`cluster_id` (degenerate pages left out)"
        + (
            "; WARC response records with their record IDs, the HTML as stored (UTF-8)."
            if kept_fmt == "warc.gz"
            else "."
        )
        + " For a large crawl: `neardup export --kept`."
    )
    removed_labels = labels
    d2.download_button(
        "removed.csv",
        lambda: to_csv(
            removed_frame(
                store,
                analysis,
                get_fingerprints(store, path, config.fingerprint_key, config),
                removed_labels,
                categories=removed_categories,
            )
        ),
        "removed.csv",
        "text/csv",
        on_click="ignore",
    )
    d2.caption(
        f"{counted(int(n['redundant_pages']), 'removed page')}, one row each: the page kept in its place, their "
        "similarity, the copy's category and action."
    )
