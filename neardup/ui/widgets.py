"""Sidebar controls and shared renderers."""

from __future__ import annotations

import streamlit as st

from ..config import Config
from .state import current_config, set_config


def setting_sidebar() -> Config:
    """Method, shingle size, threshold and normalization controls; returns the chosen setting."""
    config = current_config()
    with st.sidebar:
        st.header("Setting")
        method = st.radio(
            "Method", ["minhash", "simhash"], index=["minhash", "simhash"].index(config.method), horizontal=True,
            help="MinHash estimates Jaccard / containment of shingle sets; SimHash compares 64-bit fingerprints.",
        )
        if method != config.method:
            config = config.with_method(method)
        normalize = st.radio(
            "Boilerplate", ["main", "strip"], index=["main", "strip"].index(config.normalize), horizontal=True,
            help="main: main-content extraction (resiliparse). strip: drop nav/header/footer/script/... tags.",
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
            threshold = st.slider(
                f"Threshold (min {similarity})", config.minhash_min_similarity, 1.0, float(config.threshold), 0.01
            )
    config = config.replace(
        normalize=normalize, shingle_size=shingle_size, threshold=threshold, similarity=similarity,
        min_words=max(config.min_words, shingle_size),
    )
    set_config(config)
    return config
