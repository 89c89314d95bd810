"""Safe rendering of untrusted page text. Page text never goes through `unsafe_allow_html`:
it is shown with st.text / st.code / st.dataframe, or as Markdown in which every ASCII punctuation
character is backslash-escaped (so no link, image, HTML, LaTeX, emoji shortcode or directive can form)."""

from __future__ import annotations

import re
import string

import streamlit as st

from ..diff import Segment

_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")
_WS = re.compile(r"\s+")


def md_escape(text: str) -> str:
    """Escape `text` for Streamlit Markdown: whitespace collapsed, every ASCII punctuation escaped."""
    return _PUNCT.sub(r"\\\1", _WS.sub(" ", text)).strip()


def diff_markdown(segments: list[Segment], side: str) -> str:
    """One side of a word diff as escaped Markdown: deletions red, insertions green, folds grey."""
    parts = []
    for seg in segments:
        text = seg.left if side == "left" else seg.right
        if seg.op == "fold":
            parts.append(f":gray[*… {seg.n_words:,} equal words …*]")
        elif seg.op == "equal":
            parts.append(md_escape(text))
        elif text:
            colour = "red" if side == "left" else "green"
            parts.append(f":{colour}-background[{md_escape(text)}]")
    return " ".join(parts) or ":gray[*(no text)*]"


def show_diff(segments: list[Segment]) -> None:
    left, right = st.columns(2)
    with left:
        st.markdown(diff_markdown(segments, "left"))
    with right:
        st.markdown(diff_markdown(segments, "right"))
