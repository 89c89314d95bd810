"""Load a crawl dump: upload or server-side path; progress; rejected records; sources loaded."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from neardup import engine
from neardup.errors import NeardupError
from neardup.paths import PathRefused, allow_any_path, save_upload, server_path, shown_error
from neardup.ui.data import clear_caches, progress_bar
from neardup.ui.render import counted, md_escape
from neardup.ui.state import KEY_LAST_UPLOAD, current_config
from neardup.ui.widgets import open_database, remove_source_form

st.set_page_config(page_title="neardup · Load", layout="wide")
st.title("Load a crawl dump")
store, path, _ = open_database(setting=False)
config = current_config()

st.markdown(
    "JSON lines (`.jsonl`, `.jsonl.gz`, `.ndjson`), CSV or Parquet with a `url` and an `html` (or `text`) "
    "field, or a crawler's WARC (`.warc`, `.warc.gz`, WET), ARC (`.arc`, `.arc.gz`) or WACZ. Bad records "
    "are listed below and skipped; the same file twice is loaded once."
)
upload_col, path_col = st.columns(2)
with upload_col:
    uploaded = st.file_uploader(
        "Upload a dump",
        type=[
            "jsonl",
            "gz",
            "ndjson",
            "json",
            "csv",
            "parquet",
            "warc",
            "warc.gz",
            "wet",
            "arc",
            "arc.gz",
            "wacz",
        ],
    )
with path_col:
    typed_path = st.text_input(
        "...or a path on the server",
        placeholder="/data/crawl-2026-11.jsonl.gz",
        help="A file inside the data folders this server reads (NEARDUP_DATA_DIR).",
    )
    load_path = st.button("Load this path", disabled=not typed_path)


def run_ingest(file_path: Path, shown_name: str, *, detail: bool, upload: bool = False) -> None:
    """Load `file_path`; an upload is listed under its own name (`shown_name`), not the temporary copy's."""
    progress, bar = progress_bar(f"Loading {shown_name}")
    try:
        summary = engine.ingest_file(
            store, file_path, config, progress=progress, name=shown_name if upload else None
        )
    except NeardupError as exc:
        bar.empty()
        st.error(md_escape(shown_error(exc, path=file_path, shown=shown_name, detail=detail)))
        return
    bar.empty()
    clear_caches()
    if summary.status == "already loaded":
        st.info(f"{md_escape(shown_name)} is already loaded (same bytes): nothing to do.")
    else:
        st.success(
            f"{md_escape(shown_name)}: {counted(summary.loaded, 'page')} loaded, "
            f"{counted(summary.errors, 'record')} rejected "
            f"in {summary.seconds:.1f} s."
        )
        for note in summary.notes():
            st.caption(md_escape(note))


if uploaded is not None and st.session_state.get(KEY_LAST_UPLOAD) != (uploaded.name, uploaded.size):
    st.session_state[KEY_LAST_UPLOAD] = (uploaded.name, uploaded.size)
    with tempfile.TemporaryDirectory() as tmp:
        run_ingest(save_upload(uploaded, uploaded.name, Path(tmp)), uploaded.name, detail=True, upload=True)
if load_path:
    try:
        dump = server_path(typed_path)
    except PathRefused as exc:
        st.error(md_escape(str(exc)))
    else:
        run_ingest(dump, typed_path, detail=allow_any_path())

st.subheader("Sources loaded")
sources = store.sources()
if sources.empty:
    st.info("No source loaded yet.")
else:
    st.dataframe(
        sources,
        hide_index=True,
        placeholder="–",
        width="stretch",
        column_config={
            "source_id": st.column_config.NumberColumn("source", width="small"),
            "n_records": st.column_config.NumberColumn("records", help="Records read from the file."),
            "n_loaded": st.column_config.NumberColumn("pages loaded"),
            "n_errors": st.column_config.NumberColumn(
                "rejected", help="Records listed under Rejected records."
            ),
            "loaded_at": st.column_config.DatetimeColumn("loaded at", format="YYYY-MM-DD HH:mm"),
        },
    )
    remove_source_form(store, sources)
st.caption(f"{store.count_pages():,} pages in {md_escape(path)}")

st.subheader("Rejected records")
errors = store.ingest_errors(limit=5000)
if errors.empty:
    st.success("No record was rejected.")
else:
    by_kind = store.rejects_by_kind()
    st.caption(md_escape(", ".join(f"{n:,} × {kind}" for kind, n in by_kind.items())))
    st.dataframe(
        errors,
        hide_index=True,
        placeholder="–",
        width="stretch",
        # the reason (where in the file, which record, why) gets the width; a source's path is cut first
        column_config={
            "source": st.column_config.TextColumn("source", width="small"),
            "line": st.column_config.NumberColumn(format="%d", width="small"),
            "kind": st.column_config.TextColumn(
                "kind", help="What is wrong; the reason says where and why.", width="small"
            ),
            "reason": st.column_config.TextColumn("reason", width="large"),
        },
    )
