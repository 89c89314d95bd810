"""Session-state keys and defaults, in one place."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import Config
from ..errors import ConfigError
from ..store import DEFAULT_DB

KEY_CONFIG = "neardup.config"
KEY_LABELER = "neardup.labeler"
KEY_AUDIT_POS = "neardup.audit.position"
KEY_AUDIT_PAIR = "neardup.audit.pair"  # (page_a, page_b) opened from another page
KEY_AUDIT_SEED = "neardup.audit.seed"


def db_path() -> str:
    return os.environ.get("NEARDUP_DB", DEFAULT_DB)


def default_config() -> Config:
    """The settings in NEARDUP_CONFIG's file, else the defaults. A bad file raises ConfigError."""
    path = os.environ.get("NEARDUP_CONFIG")
    if path and Path(path).exists():
        from ..config import load_config

        return load_config(path)
    return Config()


def current_config() -> Config:
    """This session's settings; a bad NEARDUP_CONFIG stops the page with its one-line error."""
    import streamlit as st

    if KEY_CONFIG not in st.session_state:
        try:
            st.session_state[KEY_CONFIG] = default_config()
        except ConfigError as exc:
            from .render import md_escape

            st.error(f"NEARDUP_CONFIG: {md_escape(str(exc))}")
            st.stop()
    return st.session_state[KEY_CONFIG]


def set_config(config: Config) -> None:
    import streamlit as st

    st.session_state[KEY_CONFIG] = config
