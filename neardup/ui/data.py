"""Cached access to the store and the engine for the app (st.cache_resource; results are read-only)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from .. import audit, engine
from ..config import Config
from ..store import Store

# A page waits this long for a CLI write (e.g. a report computing fingerprints) before it says who holds
# the file; a reload then retries.
APP_LOCK_WAIT_S = 3.0
SAMPLE = Path(__file__).resolve().parent.parent.parent / "sample_data" / "crawl.jsonl.gz"


@st.cache_resource(show_spinner=False)
def get_store(path: str) -> Store:
    """The app's store holds the file only while a query or a write runs (read-only for reads), so the
    CLI can ingest into it or report from it while the app is open."""
    return Store(path, on_demand=True, lock_wait_s=APP_LOCK_WAIT_S)


def progress_bar(text: str) -> tuple[engine.Progress, object]:
    """A Streamlit progress bar and the engine callback that drives it."""
    bar = st.progress(0.0, text=text)

    def progress(stage: str, done: int, total: int) -> None:
        frac = min(done / total, 1.0) if total else 0.0
        label = f"{stage}: {done:,} / {total:,}" if total else f"{stage}: {done:,}"
        bar.progress(frac, text=f"{text} ({label})")

    return progress, bar


def load_sample_if_empty(store: Store) -> bool:
    """First start: an empty database gets the bundled sample, so there is something to see."""
    if store.count_pages() > 0 or not SAMPLE.exists():
        return False
    progress, bar = progress_bar("First start: loading the bundled sample crawl")
    engine.ingest_file(store, SAMPLE, Config(), progress=progress)
    bar.empty()
    return True


@st.cache_resource(show_spinner=False, max_entries=4)
def get_fingerprints(_store: Store, path: str, fingerprint_key: str, _config: Config) -> engine.Fingerprints:
    """Fingerprints for a setting: computed once (with a progress bar), then cached in DuckDB and here."""
    if _store.fingerprint_set(fingerprint_key) is None or _store.count_pages_without_text(_config.norm_key):
        progress, bar = progress_bar("Computing fingerprints for this setting (once)")
        fp = engine.load_fingerprints(_store, _config, progress=progress)
        bar.empty()
        return fp
    return engine.load_fingerprints(_store, _config)


@st.cache_resource(show_spinner=False, max_entries=16)
def get_analysis(_store: Store, path: str, config: Config) -> engine.Analysis:
    fp = get_fingerprints(_store, path, config.fingerprint_key, config)
    return engine.analyze(fp, config)


@st.cache_resource(show_spinner=False, max_entries=8)
def get_candidate_pairs(_store: Store, path: str, fingerprint_key: str, similarity: str, _config: Config) -> pd.DataFrame:
    fp = get_fingerprints(_store, path, fingerprint_key, _config)
    return audit.candidate_pairs(fp, _config)


def clear_caches() -> None:
    """After new data (an ingest): drop everything derived from the database."""
    get_fingerprints.clear()
    get_analysis.clear()
    get_candidate_pairs.clear()
