"""Safe rendering of untrusted page text. Page text never goes through `unsafe_allow_html`:
it is shown with st.text / st.code / st.dataframe, or as Markdown escaped by `md_escape`
(`neardup.markdown`: no link, image, HTML or autolink can form)."""

from __future__ import annotations

import streamlit as st

from ..diff import Segment
from ..markdown import WORD_JOINER as WORD_JOINER
from ..markdown import counted as counted
from ..markdown import md_escape as md_escape


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
