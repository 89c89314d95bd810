"""Cached access to the store and the engine for the app (st.cache_resource / st.cache_data)."""

from __future__ import annotations

import streamlit as st

from .. import engine
from ..config import Config
from ..store import Store


@st.cache_resource(show_spinner=False)
def get_store(path: str) -> Store:
    return Store(path)


@st.cache_resource(show_spinner=False, max_entries=4)
def get_fingerprints(_store: Store, path: str, fingerprint_key: str, config: Config) -> engine.Fingerprints:
    """Fingerprints for a setting; computed once (with a progress bar) and cached in DuckDB and here."""
    fset = _store.fingerprint_set(fingerprint_key)
    if fset is None:
        bar = st.progress(0.0, text="Computing fingerprints for this setting (once)...")

        def progress(stage: str, done: int, total: int) -> None:
            frac = min(done / total, 1.0) if total else 0.0
            bar.progress(frac, text=f"{stage}: {done:,} / {total:,}" if total else f"{stage}...")

        fp = engine.load_fingerprints(_store, config, progress=progress)
        bar.empty()
        return fp
    return engine.load_fingerprints(_store, config)


@st.cache_data(show_spinner=False, max_entries=32)
def get_analysis(_store: Store, path: str, config: Config) -> engine.Analysis:
    fp = get_fingerprints(_store, path, config.fingerprint_key, config)
    return engine.analyze(fp, config)
