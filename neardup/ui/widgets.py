"""Sidebar controls and shared renderers."""

from __future__ import annotations

from typing import Literal, overload

import pandas as pd
import streamlit as st

from ..config import Config, default_threshold
from ..errors import NeardupError
from ..store import Store
from .data import clear_caches, get_store, load_sample_if_empty, sample_source
from .render import md_escape
from .state import (
    KEY_CONFIG,
    KEY_CONFIG_SYNC,
    KEY_FLASH,
    KEY_THRESHOLDS,
    SHINGLE_RANGE,
    W_METHOD,
    W_NORMALIZE,
    W_SHINGLE,
    W_SIMILARITY,
    current_config,
    db_path,
    default_config,
    setting_params,
    threshold_scale,
    w_threshold,
)


def _seed_widgets(config: Config) -> None:
    """Give each sidebar widget its value: its own last value, else (first run, or code changed the setting)
    the setting's. Widgets take no `value=`: session state is their one
    source of truth, so a rerun never makes a new widget that forgets the user's last change."""
    state = st.session_state
    sync = state.pop(KEY_CONFIG_SYNC, False)
    thresholds = state.setdefault(
        KEY_THRESHOLDS,
        {
            "simhash": default_threshold("simhash"),
            "containment": default_threshold("minhash"),
            "jaccard": default_threshold("minhash"),
        },
    )
    thresholds[threshold_scale(config)] = (
        int(config.threshold) if config.method == "simhash" else config.threshold
    )
    values = {
        W_METHOD: config.method,
        W_NORMALIZE: config.normalize,
        W_SHINGLE: config.shingle_size,
        W_SIMILARITY: config.similarity,
        **{w_threshold(scale): v for scale, v in thresholds.items()},
    }
    for key, value in values.items():
        # Assigned on every run, even to its own value: Streamlit drops a widget's state when another page
        # (a different widget id) or a run without that widget comes first; an assigned key is kept.
        state[key] = value if sync or key not in state else state[key]


def setting_sidebar() -> Config:
    """Method, shingle size, threshold and normalization controls; returns the chosen setting, which is also
    written to the URL (a reload, a bookmark or a shared link opens the same setting)."""
    config = current_config()
    _seed_widgets(config)
    state = st.session_state
    with st.sidebar:
        st.header("Setting")
        method = st.radio(
            "Method",
            ["minhash", "simhash"],
            horizontal=True,
            key=W_METHOD,
            help="MinHash finds candidate pairs by LSH, then scores each exactly (Jaccard / containment of the "
            "shingle sets); SimHash compares 64-bit fingerprints (Hamming bits).",
        )
        normalize = st.radio(
            "Boilerplate",
            ["main", "strip"],
            horizontal=True,
            key=W_NORMALIZE,
            help=(
                f"main: main-content extraction ({config.extractor}'s extractor; `extractor:` in dupcheck.yaml). "
                "strip: drop nav/header/footer/script/... tags."
            ),
        )
        shingle_size = st.slider("Shingle size (words)", *SHINGLE_RANGE, key=W_SHINGLE)
        similarity = state[W_SIMILARITY]
        if method == "simhash":
            threshold: float = st.slider(
                "Threshold (max Hamming bits)",
                0,
                config.simhash_max_bits,
                key=w_threshold("simhash"),
                help="Two pages are near duplicates when their fingerprints differ in at most this many bits.",
            )
        else:
            similarity = st.radio(
                "Similarity",
                ["containment", "jaccard"],
                horizontal=True,
                key=W_SIMILARITY,
                help="Containment catches partial copies (print versions, syndicated articles).",
            )
            floor = config.replace(similarity=similarity, threshold=1.0).minhash_floor
            threshold = st.slider(
                f"Threshold (min {similarity})",
                floor,
                1.0,
                step=0.01,
                key=w_threshold(similarity),
                help=f"Pairs are stored down to {floor:g} {similarity}; moving the threshold only filters them.",
            )
    config = config.with_shingle_size(shingle_size, min_words=default_config().min_words).replace(
        method=method, normalize=normalize, threshold=threshold, similarity=similarity
    )
    state[KEY_THRESHOLDS][threshold_scale(config)] = threshold
    state[KEY_CONFIG] = config
    params = setting_params(config)
    if any(st.query_params.get(k) != v for k, v in params.items()):
        st.query_params.update(params)
    return config


def flash(message: str) -> None:
    """A confirmation for the next run to show (a toast sent just before st.rerun would be lost)."""
    st.session_state[KEY_FLASH] = message


@overload
def open_database(*, setting: Literal[True] = True) -> tuple[Store, str, Config]: ...
@overload
def open_database(*, setting: Literal[False]) -> tuple[Store, str, None]: ...


def open_database(*, setting: bool = True) -> tuple[Store, str, Config | None]:
    """Every page starts here: the shared store (or a clear error), the sample on first start, the setting."""
    path = db_path()
    try:  # a foreign or damaged file, or one a CLI ingest is writing: one line, not a traceback
        store = get_store(path)
        loaded_sample = load_sample_if_empty(store)
        sample = sample_source(store)
        n_pages = store.count_pages()
    except NeardupError as exc:
        st.error(str(exc))
        st.stop()
    if loaded_sample:
        st.toast("No database was named and this one was empty: the bundled sample crawl was loaded.")
    if sample is not None:
        st.info(
            f"This database holds the bundled **sample crawl** ({int(sample['n_loaded']):,} synthetic pages). "
            "Load your own dump on the **Load** page and take the sample out there (*Remove this source*).",
            icon=":material/science:",
        )
    message = st.session_state.pop(KEY_FLASH, None)
    if message:
        st.toast(message)
    if n_pages == 0 and setting:  # the Load page (setting=False) is how pages get in
        st.info("This database holds no pages yet. Load a crawl dump on the **Load** page.")
        st.stop()
    return store, path, setting_sidebar() if setting else None


def escaped_text(label: str, value: object) -> None:
    """A label and an untrusted value (URL, title), shown as plain text."""
    st.caption(label)
    st.text(str(value) if value is not None else "")


def remove_source_form(store: Store, sources: pd.DataFrame) -> None:
    """Take one loaded source out of the database (its pages and everything derived from them; labels stay)."""
    names = {
        int(r.source_id): f"{r.source_id}: {r.path} ({r.n_loaded:,} pages)" for r in sources.itertuples()
    }
    sample = sample_source(store)
    ids = list(names)
    default = (
        ids.index(int(sample["source_id"])) if sample is not None and int(sample["source_id"]) in ids else 0
    )
    with st.form("neardup.load.remove", border=False):
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        chosen = c1.selectbox(
            "Source", ids, index=default, format_func=names.__getitem__, key="neardup.load.remove_source"
        )
        confirmed = c1.checkbox(
            "Yes, remove its pages, texts, sketches and the pairs derived from them (labels stay)",
            key="neardup.load.remove_confirm",
        )
        clicked = c2.form_submit_button("Remove this source", width="stretch")
    if clicked and not confirmed:
        st.warning("Tick the box to confirm the removal.")
    elif clicked:
        try:
            n_pages = store.remove_source(int(chosen))
        except NeardupError as exc:
            st.error(md_escape(str(exc)))
            return
        clear_caches()
        flash(f"Removed source {names[int(chosen)]}: {n_pages:,} pages out, labels kept.")
        st.rerun()
