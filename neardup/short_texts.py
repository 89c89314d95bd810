"""The too-short rule, where a page's text is judged and where pages are counted: the reason a text of
fewer than `min_words` words is not content, and how far short a fetch may fall when another fetch of its
page reaches `min_words`.

`normalize` gives the reason at normalization; the store's queries (`store.content`) and Spark's
`keep_short_fetches` apply it again at the setting's min_words, over all the fetches of a page.
"""

from __future__ import annotations

TOO_SHORT = "too short"


def short_fetch_margin(min_words: int) -> int:
    """How many words short of `min_words` a fetch may be and still be content when another fetch of its page
    (the same canonical URL) reaches them: a third of min_words (10 at the default 30; a widget's line or two).
    A page near min_words so gets one verdict in all its fetches, whose volatile parts (a rotating promo line,
    a "most read" entry) differ by a few words. Applied where the pages are seen together: the store's queries
    (`store.content.SHORT_FETCH_KEYS`) and Spark's `keep_short_fetches`."""
    return min_words // 3
