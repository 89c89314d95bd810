"""A labeled pair's key, and the columns and values of a label row.

A pair of pages is labeled by its two sides, each a (canonical URL, MD5 of the page's bytes), in one order:
the lesser side first. So a pair has one key whichever page is shown left, and a label given on one crawl
applies to the same two pages in another. The order is stated three ways, one per place a key is made: a
pair of sides in Python (`pair_key`), columns of sides in numpy (`sides_swapped`, for a frame of candidate
pairs) and in SQL (`SIDES_SWAPPED_SQL`, for a labels file being imported); tests check they agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

# A column of strings: an object array of str, or pandas' Arrow-backed string array (whose comparisons
# pandas' type stubs do not declare).
Strings = Any


class PairKey(NamedTuple):
    """The key of a labeled pair: its sides in order, (url_a, md5_a) <= (url_b, md5_b). A tuple, so a key
    equals the row of its values (`frame[PAIR_KEY].itertuples(name=None)`); made by `pair_key`."""

    url_a: str
    md5_a: str
    url_b: str
    md5_b: str


# A frame's key columns, as a list: pandas reads a tuple as one (multi-level) column name.
PAIR_KEY: list[str] = list(PairKey._fields)

LABELS = ("duplicate", "not", "unsure")
# The columns of a label row: of the store's `labels` table, of labels.csv (`Store.labels`,
# `Store.import_labels`).
LABEL_COLUMNS = (*PAIR_KEY, "label", "category", "note", "labeler", "labeled_at", "setting")

# Whether a row's sides (columns url_a, md5_a, url_b, md5_b) are out of `pair_key`'s order (DuckDB orders
# VARCHARs by their bytes, and UTF-8 keeps the code point order Python compares strings by).
SIDES_SWAPPED_SQL = "(url_a > url_b OR (url_a = url_b AND md5_a > md5_b))"


def pair_key(url_a: str, md5_a: str | None, url_b: str, md5_b: str | None) -> PairKey:
    """The key of the pair of pages (url_a, md5_a) and (url_b, md5_b), given in either order; a missing MD5
    (a label that applies to the URLs) is ""."""
    (a, ma), (b, mb) = sorted(((url_a, md5_a or ""), (url_b, md5_b or "")))
    return PairKey(a, ma, b, mb)


def key_of(row: Mapping[str, Any]) -> PairKey:
    """The key of a label row (url_a, md5_a, url_b, md5_b, as `Store.labels()` gives them)."""
    return pair_key(row["url_a"], row["md5_a"], row["url_b"], row["md5_b"])


def sides_swapped(url_a: Strings, md5_a: Strings, url_b: Strings, md5_b: Strings) -> np.ndarray:
    """Which rows of four columns of strings (object arrays, or pandas' Arrow-backed string arrays, compared
    in Arrow without a Python string each) have their sides out of `pair_key`'s order."""
    return np.asarray((url_a > url_b) | ((url_a == url_b) & (md5_a > md5_b)), dtype=bool)
