"""Safe rendering of untrusted page text. Page text never goes through `unsafe_allow_html`:
it is shown with st.text / st.code / st.dataframe, or as Markdown in which every ASCII punctuation
character is backslash-escaped (so no link, image, HTML, LaTeX, emoji shortcode or directive can form)
and a word joiner breaks every bare URL and e-mail address.

Escaping alone does not stop GFM's autolink literals: Streamlit's Markdown (remark-gfm) finds
`https://...`, `www.` and `name@host.tld` in the text nodes after the escapes are resolved, by
regular expressions over ASCII word characters. An invisible U+2060 WORD JOINER after the protocol,
after `www` and after `@` is no such character, so no link can form; the text reads the same."""

from __future__ import annotations

import re
import string

import streamlit as st

from ..diff import Segment

_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")
_WS = re.compile(r"\s+")
WORD_JOINER = "\u2060"
# Where an autolink literal would start: a protocol before ':', 'www' before '.', an '@' (an e-mail address).
_AUTOLINK = re.compile(r"(?i)(https?|mailto|xmpp)(?=:)|(www)(?=\.)|(@)")


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, the noun plural unless `n` is 1: "1 labeled pair", "2,048 labeled pairs"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def md_escape(text: str) -> str:
    """Escape `text` for Streamlit Markdown: whitespace collapsed, bare URLs and e-mail addresses broken by
    a word joiner, every ASCII punctuation escaped."""
    text = _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, _WS.sub(" ", text))
    return _PUNCT.sub(r"\\\1", text).strip()


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
