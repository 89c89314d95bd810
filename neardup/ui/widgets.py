"""Sidebar controls and shared renderers."""

from __future__ import annotations

import streamlit as st

from ..config import Config
from ..errors import NeardupError
from ..store import Store
from .data import get_store, load_sample_if_empty
from .state import current_config, db_path, set_config


def setting_sidebar() -> Config:
    """Method, shingle size, threshold and normalization controls; returns the chosen setting."""
    config = current_config()
    with st.sidebar:
        st.header("Setting")
        method = st.radio(
            "Method", ["minhash", "simhash"], index=["minhash", "simhash"].index(config.method), horizontal=True,
            help="MinHash finds candidate pairs by LSH, then scores each exactly (Jaccard / containment of the "
                 "shingle sets); SimHash compares 64-bit fingerprints (Hamming bits).",
        )
        if method != config.method:
            config = config.with_method(method)
        normalize = st.radio(
            "Boilerplate", ["main", "strip"], index=["main", "strip"].index(config.normalize), horizontal=True,
            help=(f"main: main-content extraction ({config.extractor}'s extractor; `extractor:` in dupcheck.yaml). "
                  "strip: drop nav/header/footer/script/... tags."),
        )
        shingle_size = st.slider("Shingle size (words)", 3, 10, config.shingle_size)
        if method == "simhash":
            threshold: float = st.slider(
                "Threshold (max Hamming bits)", 0, config.simhash_max_bits, int(config.threshold),
                help="Two pages are near duplicates when their fingerprints differ in at most this many bits.",
            )
            similarity = config.similarity
        else:
            similarity = st.radio(
                "Similarity", ["containment", "jaccard"], index=["containment", "jaccard"].index(config.similarity),
                horizontal=True, help="Containment catches partial copies (print versions, syndicated articles).",
            )
            floor = config.replace(similarity=similarity, threshold=1.0).minhash_floor
            threshold = st.slider(
                f"Threshold (min {similarity})", floor, 1.0, max(float(config.threshold), floor), 0.01,
                help=f"Pairs are stored down to {floor:g} {similarity}; moving the threshold only filters them.",
            )
    config = config.replace(
        normalize=normalize, shingle_size=shingle_size, threshold=threshold, similarity=similarity,
        min_words=max(config.min_words, shingle_size),
    )
    set_config(config)
    return config


def open_database(*, setting: bool = True) -> tuple[Store, str, Config | None]:
    """Every page starts here: the shared store (or a clear error), the sample on first start, the setting."""
    path = db_path()
    try:  # a foreign or damaged file, or one a CLI ingest is writing: one line, not a traceback
        store = get_store(path)
        loaded_sample = load_sample_if_empty(store)
        n_pages = store.count_pages()
    except NeardupError as exc:
        st.error(str(exc))
        st.stop()
    if loaded_sample:
        st.toast("This database was empty: the bundled sample crawl was loaded.")
        st.session_state["neardup.sample_notice"] = True
    if n_pages == 0 and setting:  # the Load page (setting=False) is how pages get in
        st.info("This database holds no pages yet. Load a crawl dump on the **Load** page.")
        st.stop()
    return store, path, setting_sidebar() if setting else None


def escaped_text(label: str, value: object) -> None:
    """A label and an untrusted value (URL, title), shown as plain text."""
    st.caption(label)
    st.text(str(value) if value is not None else "")
