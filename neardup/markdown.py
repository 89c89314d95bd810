"""Text for the app's Markdown: untrusted text escaped, counts in words, scores to two decimals. No
Streamlit, so the queue captions (`neardup.queues`) and the pages build their sentences the same way.

Every ASCII punctuation character is backslash-escaped (so no link, image, HTML, LaTeX, emoji shortcode or
directive can form) and a word joiner breaks every bare URL and e-mail address.

Escaping alone does not stop GFM's autolink literals: Streamlit's Markdown (remark-gfm) finds
`https://...`, `www.` and `name@host.tld` in the text nodes after the escapes are resolved, by
regular expressions over ASCII word characters. An invisible U+2060 WORD JOINER after the protocol,
after `www` and after `@` is no such character, so no link can form; the text reads the same."""

from __future__ import annotations

import math
import re
import string

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


def score_text(score: float) -> str:
    """A score in [0, 1] to two decimals, rounded down: a pair in the bucket [0.75, 0.80) never reads 0.80,
    and only identical shingle sets read 1.00."""
    return f"{math.floor(score * 100 + 1e-9) / 100:.2f}"
