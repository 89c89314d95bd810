"""Load a crawl dump: upload or server-side path; progress; rejected records; sources loaded."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from neardup import engine
from neardup.errors import NeardupError
from neardup.ui.data import clear_caches, progress_bar
from neardup.ui.render import md_escape
from neardup.ui.state import current_config
from neardup.ui.widgets import open_database, remove_source_form

st.set_page_config(page_title="neardup · Load", layout="wide")
st.title("Load a crawl dump")
store, path, _ = open_database(setting=False)
config = current_config()

st.markdown("JSON lines (`.jsonl`, `.jsonl.gz`, `.ndjson`), CSV or Parquet with a `url` and an `html` (or `text`) "
            "field. Bad records are listed below and skipped; the same file twice is loaded once.")
upload_col, path_col = st.columns(2)
with upload_col:
    uploaded = st.file_uploader("Upload a dump", type=["jsonl", "gz", "ndjson", "json", "csv", "parquet"])
with path_col:
    server_path = st.text_input("...or a path on the server", placeholder="/data/crawl-2026-11.jsonl.gz")
    load_path = st.button("Load this path", disabled=not server_path)


def run_ingest(file_path: Path, shown_name: str) -> None:
    progress, bar = progress_bar(f"Loading {shown_name}")
    try:
        summary = engine.ingest_file(store, file_path, config, progress=progress)
    except NeardupError as exc:
        bar.empty()
        st.error(md_escape(str(exc)))
        return
    bar.empty()
    clear_caches()
    if summary.status == "already loaded":
        st.info(f"{md_escape(shown_name)} is already loaded (same bytes): nothing to do.")
    else:
        st.success(f"{md_escape(shown_name)}: {summary.loaded:,} pages loaded, {summary.errors:,} records rejected "
                   f"in {summary.seconds:.1f} s.")


if uploaded is not None and st.session_state.get("neardup.last_upload") != (uploaded.name, uploaded.size):
    st.session_state["neardup.last_upload"] = (uploaded.name, uploaded.size)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / Path(uploaded.name).name
        target.write_bytes(uploaded.getbuffer())
        run_ingest(target, uploaded.name)
if load_path:
    run_ingest(Path(server_path).expanduser(), server_path)

st.subheader("Sources loaded")
sources = store.sources()
if sources.empty:
    st.info("No source loaded yet.")
else:
    st.dataframe(sources, hide_index=True, width="stretch")
    remove_source_form(store, sources)
st.caption(f"{store.count_pages():,} pages in {md_escape(path)}")

st.subheader("Rejected records")
errors = store.ingest_errors(limit=5000)
if errors.empty:
    st.success("No record was rejected.")
else:
    st.dataframe(errors, hide_index=True, width="stretch",
                 column_config={"line": st.column_config.NumberColumn(format="%d")})
