"""What normalization removed, in the setting's terms: strip lists the stripped elements, main what the
extractor left out; neither lists an element without text."""

from __future__ import annotations

import random

from conftest import words_text

from neardup.config import Config
from neardup.normalize import MAIN_FALLBACK_WORDS, parse_page, stripped_parts
from neardup.removals import removals

ARTICLE = words_text(random.Random(1), 300)
COOKIES = "We use cookies to improve your experience and show relevant offers Accept all"
NAV = " ".join(f"Section {i}" for i in range(10))
FOOTER = "Copyright Example Media All rights reserved Privacy Terms Contact us"


def page(article: str = ARTICLE) -> str:
    return (
        "<!DOCTYPE html><html><head><title>T</title><style>p{margin:0}</style>"
        "<script>window.x = 1;</script></head><body>"
        f"<div class='cookie-banner'><p>{COOKIES}</p></div>"
        f"<nav><ul>{''.join(f'<li><a href=/s{i}>Section {i}</a></li>' for i in range(10))}</ul></nav>"
        f"<main><article><h1>A story</h1><p>{article}</p></article></main>"
        f"<footer><p>{FOOTER}</p></footer><script>track()</script></body></html>"
    )


def test_strip_lists_the_stripped_elements_with_text_biggest_first() -> None:
    found = removals(page(), Config(normalize="strip"))
    assert "tag stripping" in found.summary
    assert [(p.where, p.text) for p in found.parts] == [("nav", NAV), ("footer", FOOTER)]
    assert [p.words for p in found.parts] == [20, 10]
    # the script and style elements are stripped too, but hold no text a reader would miss
    assert {"script", "style"} <= {tag for tag, _ in stripped_parts(page())}


def test_main_lists_what_the_extractor_left_out() -> None:
    config = Config()  # normalize: main
    html = page()
    found = removals(html, config)
    assert "main-content extraction" in found.summary
    where = {p.text: p.where for p in found.parts}
    assert where[NAV] == "nav" and where[FOOTER] == "footer"
    assert where[COOKIES] == "body"  # a banner in a div: no stripped element, the extractor's own call
    kept = parse_page(html, mode="main").text
    assert all(p.text not in kept for p in found.parts)
    assert ARTICLE not in " ".join(p.text for p in found.parts)
    assert [p.words for p in found.parts] == sorted((p.words for p in found.parts), reverse=True)
    assert all(p.words > 0 and p.text for p in found.parts)


def test_main_on_a_page_without_main_content_lists_what_stripping_removed() -> None:
    html = page(article="Too short to be an article.")
    assert parse_page(html, mode="main").main_words < MAIN_FALLBACK_WORDS
    found = removals(html, Config())
    assert f"under {MAIN_FALLBACK_WORDS}" in found.summary and "tag stripping" in found.summary
    assert found.parts == removals(html, Config(normalize="strip")).parts
