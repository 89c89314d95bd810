"""No page shows the analyst a traceback: an error is one sentence on the page, its traceback in the log."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.logger import get_logger

from ..errors import DatabaseLocked, NeardupError
from .render import md_escape

LOG = get_logger("neardup.app")


def error_sentence(exc: Exception) -> str:
    """What happened and what to do, in one line: a `NeardupError` says both itself."""
    if isinstance(exc, DatabaseLocked):
        return f"The database is busy: {exc}. Reload the page once it is free (nothing you did is lost)."
    if isinstance(exc, NeardupError):
        text = str(exc).rstrip()
        return text if text.endswith(".") else f"{text}."
    return (
        f"This page failed ({type(exc).__name__}), which is a bug in neardup: reload the page to try again, "
        "and if it happens again report it with the server's log, which holds the details."
    )


@contextmanager
def one_line_errors(where: str) -> Iterator[None]:
    """Around a page's body (or a fragment's): an exception becomes one `st.error` line and a traceback in
    the server's log. Streamlit's own stop and rerun signals are BaseExceptions and pass."""
    try:
        yield
    except Exception as exc:
        LOG.error("%s failed", where, exc_info=exc)
        st.error(md_escape(error_sentence(exc)), icon=":material/error:")
