"""Crawled text made safe to show where control characters act: a terminal, a line-based CSV reader.

A URL or a file name from a crawl may hold an escape sequence that clears the analyst's screen, sets the
terminal's title or a hyperlink (ESC, OSC ... BEL), a carriage return that overwrites the line shown, NUL,
C1 controls (U+0080-U+009F, CSI among them) or a bidirectional override that reorders what is read.
`escape_controls` shows each as a visible escape (`\\x1b`, `\\u202e`), so the text stays recognisable."""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls, the bidirectional embeddings, overrides and isolates, and the lone
# surrogates that stand for undecodable bytes (a file name read with surrogateescape).
CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_controls(text: str, *, keep: str = "\n\t") -> str:
    """`text` with every control character but those in `keep` shown as its escape (`\\x1b`)."""
    if not CONTROLS.search(text):
        return text
    return CONTROLS.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)
