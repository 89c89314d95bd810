"""Session-state keys and defaults, in one place."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import Config
from ..store import DEFAULT_DB

KEY_CONFIG = "neardup.config"
KEY_LABELER = "neardup.labeler"
KEY_AUDIT_POS = "neardup.audit.position"
KEY_AUDIT_PAIR = "neardup.audit.pair"  # (page_a, page_b) opened from another page
KEY_AUDIT_SEED = "neardup.audit.seed"


def db_path() -> str:
    return os.environ.get("NEARDUP_DB", DEFAULT_DB)


def default_config() -> Config:
    path = os.environ.get("NEARDUP_CONFIG")
    if path and Path(path).exists():
        from ..config import load_config

        return load_config(path)
    return Config()


def current_config() -> Config:
    import streamlit as st

    if KEY_CONFIG not in st.session_state:
        st.session_state[KEY_CONFIG] = default_config()
    return st.session_state[KEY_CONFIG]


def set_config(config: Config) -> None:
    import streamlit as st

    st.session_state[KEY_CONFIG] = config
