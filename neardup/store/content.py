"""Which texts are content at a setting's min_words: SQL conditions on a `texts` row, and the short fetches
that a fuller fetch of their page makes content (kept per state of the pages)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..short_texts import TOO_SHORT, short_fetch_margin
from .connection import StoreCore, one_row

# Whether a text is content, and why not. `degenerate` is stored at normalization with the min_words of that
# time; the "too short" rule is applied again when a query runs, with the setting's min_words (bound as a
# parameter), so a report at another min_words counts what it says. A stored 'too short' means no other
# rule applied (they are tried first): a text is content when it has no other reason and at least
# min_words words, or is a short fetch its page's other fetches make content (`SHORT_FETCH_KEYS`). Without a
# min_words, the decision stored at normalization.
_NO_OTHER_REASON = "({t}.degenerate IS NULL OR {t}.degenerate = '" + TOO_SHORT + "')"
# A page near min_words gets one verdict in all its fetches: a fetch of it with a widget's few words fewer than
# another (a rotating promo line, a "most read" entry) would else be set aside as too short while the other is
# clustered. So a text of min_words - short_fetch_margin(min_words) words or more is content when one of its
# pages shares its canonical URL (the same page under a tracking parameter, http or www, a trailing slash, or
# fetched again) with a fetch of at least min_words words: the verdict is the page's, and an exact duplicate's
# text takes it from any of its pages. A text further below is another state of the page (an empty shell, a
# cut fetch) and keeps its own verdict. The texts so kept, by exact key (parameters: norm_key, the margin's
# floor, min_words, norm_key again, min_words); `Store._short_fetch_keys` keeps them per state of the pages.
# The short texts' canonical URLs are found first and only the pages of those URLs joined to their texts: a
# join of every page's canonical URL with every other's costs ~13x as much at 1M pages.
SHORT_FETCH_KEYS = (
    "WITH s AS (SELECT s.exact_key, sp.canonical_url FROM texts s JOIN pages sp ON sp.page_id = s.page_id "
    "WHERE s.norm_key = ? AND s.n_words >= ? AND s.n_words < ? AND "
    + _NO_OTHER_REASON.format(t="s")
    + ") SELECT DISTINCT s.exact_key FROM s JOIN (SELECT lp.canonical_url FROM pages lp JOIN texts l "
    "ON l.page_id = lp.page_id WHERE l.norm_key = ? AND l.n_words >= ? AND "
    + _NO_OTHER_REASON.format(t="l")
    + " AND lp.canonical_url IN (SELECT canonical_url FROM s)) l ON l.canonical_url = s.canonical_url "
    "ORDER BY s.exact_key"
)


def is_content(min_words: int | None, kept: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """SQL condition on a `texts` row `t` (and its parameters): the text is content. `kept`: the short
    fetches' texts their pages make content (`Store._short_fetch_keys`)."""
    if min_words is None:
        return "t.degenerate IS NULL", []
    return (
        f"{_NO_OTHER_REASON.format(t='t')} AND (t.n_words >= ? OR t.exact_key IN (SELECT UNNEST(?::VARCHAR[])))",
        [min_words, list(kept)],
    )


def degenerate_sql(min_words: int | None, kept: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """SQL expression over a `texts` row `t` (and its parameters): why the text is not content, or NULL.
    A function of the row alone (no subquery, which DuckDB plans as a join): a scan of the texts keeps their
    stored order, page id order, which `page_table` reads them in."""
    if min_words is None:
        return "t.degenerate", []
    return (
        f"CASE WHEN t.degenerate IS NOT NULL AND t.degenerate <> '{TOO_SHORT}' THEN t.degenerate "
        f"WHEN t.n_words < ? AND NOT list_contains(?::VARCHAR[], t.exact_key) THEN '{TOO_SHORT}' END"
    ), [min_words, list(kept)]


class ContentRules(StoreCore):
    """The store's part that finds the short fetches kept as content, for the parts that select texts."""

    # `_short_fetch_keys` by (norm_key, min_words, the pages' last id and count, the texts' count)
    _short_fetches: dict[tuple[str, int, int, int, int], list[str]]

    def _short_fetch_keys(self, norm_key: str, min_words: int | None) -> list[str]:
        """The texts of `norm_key` short of `min_words` that a fetch of their page reaching it makes content
        (`SHORT_FETCH_KEYS`), kept per state of the pages and texts (pages only grow: their last id and count
        say which; texts of a normalization are only added: their count)."""
        if min_words is None:
            return []
        cur = self.cursor()
        last, n_pages, n_texts = one_row(
            cur.execute(
                "SELECT (SELECT coalesce(max(page_id), -1) FROM pages), (SELECT count(*) FROM pages), "
                "(SELECT count(*) FROM texts WHERE norm_key = ?)",
                [norm_key],
            ).fetchone()
        )
        state = (norm_key, min_words, last, n_pages, n_texts)
        if state not in self._short_fetches:
            floor = min_words - short_fetch_margin(min_words)
            keys = cur.execute(SHORT_FETCH_KEYS, [norm_key, floor, min_words, norm_key, min_words]).fetchall()
            if len(self._short_fetches) >= 8:  # a few settings at a time
                self._short_fetches.clear()
            self._short_fetches[state] = [k for (k,) in keys]
        return self._short_fetches[state]
