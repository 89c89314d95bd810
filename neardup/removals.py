"""What a page's normalization removed, for an analyst to read beside its text (the Audit page).

The setting in force decides what "removed" means:
- `strip`: the elements named in `strip_tags`, each with its text (`normalize.stripped_parts`).
- `main`: the text main-content extraction left out: the elements of `strip_tags` it dropped whole (a nav,
  a footer), by tag, and the runs of words of the rest of the body it dropped, as `body` (a cookie banner in a
  div, a byline, a comment thread, a link list inside the content area).
- `main` on a page where the extractor found fewer than `MAIN_FALLBACK_WORDS` words: the page's text is its
  tag-stripped text, so what tag stripping removed.

Elements without text (script, style, svg) are not listed: they remove markup, not words a reader would see.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import Config
from .diff import word_diff
from .normalize import MAIN_FALLBACK_WORDS, TOO_COMPLEX, parse_configured, parse_page, stripped_parts


@dataclass(frozen=True, slots=True)
class Removal:
    where: str  # a tag name, or "body" (main extraction's own call on the rest of the body)
    words: int
    text: str


@dataclass(frozen=True, slots=True)
class Removals:
    summary: str  # what was removed, in the setting's terms
    parts: list[Removal]  # biggest first


def _by_size(parts: list[Removal]) -> list[Removal]:
    return sorted((p for p in parts if p.words), key=lambda p: -p.words)  # stable: document order in a tie


def _stripped(html: str, config: Config) -> list[Removal]:
    return [
        Removal(tag, len(text.split()), text)
        for tag, text in stripped_parts(html, strip_tags=config.strip_tags)
    ]


def removals(html: str, config: Config) -> Removals:
    """What `config`'s normalization removed from `html` (see the module docstring), biggest first."""
    parsed = parse_configured(html, config)
    if parsed.degenerate == TOO_COMPLEX:
        return Removals(f"{TOO_COMPLEX}: not parsed, so nothing of it is text", [])
    stripped = _stripped(html, config)
    if config.normalize == "strip":
        return Removals("Removed by tag stripping (strip_tags), with their text.", _by_size(stripped))
    if parsed.main_words is not None and parsed.main_words < MAIN_FALLBACK_WORDS:
        return Removals(
            f"Main-content extraction found {parsed.main_words} words (under {MAIN_FALLBACK_WORDS}), so this "
            "page's text is tag-stripped: removed by tag stripping (strip_tags).",
            _by_size(stripped),
        )
    kept = f" {parsed.text} "
    # Whole elements of strip_tags the main text does not hold, then the runs of the rest of the body it left out.
    elements = [p for p in stripped if p.text and f" {p.text} " not in kept]
    body = parse_page(html, mode="strip", strip_tags=config.strip_tags).text
    runs = [
        Removal("body", len(seg.left.split()), seg.left)
        for seg in word_diff(body, parsed.text, fold_min=len(body))
        if seg.op in ("delete", "replace") and any(c.isalnum() for c in seg.left)
    ]
    return Removals(
        f"Left out by main-content extraction ({config.extractor}): elements of strip_tags dropped whole, "
        "by tag; other text of the body as body.",
        _by_size(elements + runs),
    )
