"""The crawl's URLs parsed for URL rules (`parse_urls`): what rule learning needs of them that no clustering
changes, as integer codes (`parsed_urls.ParsedUrls`). Made once per crawl (`neardup report`, or the URL
rules page where a database has none) and kept in the store (`Store.save_parsed_urls`): the page reads
columns instead of parsing a million URLs. `rules.url_table` makes its table of one."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from .parsed_urls import ParsedUrls
from .url_keys import key_texts, trap_patterns, url_keys_many
from .urls import UrlKey, bare_host

# `parse_urls` calls its `step` this many times.
PARSE_STEPS = 4


def parse_urls(
    page_id: np.ndarray, urls: np.ndarray, *, step: Callable[[], None] = lambda: None
) -> ParsedUrls:
    """The `ParsedUrls` of pages (`page_id`, their `urls`, in any order): each distinct URL parsed once
    (`url_keys.url_keys_many`); `step()` is called after each of its PARSE_STEPS steps."""
    order = np.argsort(np.asarray(page_id, dtype=np.int64), kind="stable")
    raw_codes, raw_urls = pd.factorize(pd.Series(np.asarray(urls, dtype=object)[order], dtype=object))
    parsed = url_keys_many(raw_urls)
    step()
    raw_keys = [k or UrlKey("", "", url, ()) for k, url in zip(parsed, raw_urls, strict=True)]
    text_codes, texts = pd.factorize(pd.Series(key_texts(raw_keys), dtype=object))
    base_keys: list[UrlKey] = [UrlKey("", "", "", ())] * len(texts)
    for key, code in zip(raw_keys, text_codes, strict=True):
        base_keys[code] = key
    key_host, hosts = pd.factorize(pd.Series([k.host for k in base_keys], dtype=object))
    key_path, paths = pd.factorize(pd.Series([k.path for k in base_keys], dtype=object))
    key_query, queries = pd.factorize(pd.Series([k.query for k in base_keys], dtype=object))
    step()
    # A crawl-trap family is a (bare host, pattern): numbered as a pair of codes, not hashed as strings.
    host_codes, host_names = pd.factorize(pd.Series([k.host for k in raw_keys], dtype=object))
    bare_codes, bare_names = pd.factorize(np.asarray([bare_host(h) for h in host_names], dtype=object))
    on_key = np.flatnonzero([k is not None for k in parsed])
    pattern_codes, pattern_names = pd.factorize(
        pd.Series(trap_patterns([raw_keys[i] for i in on_key]), dtype=object)
    )
    step()
    n_patterns = max(len(pattern_names), 1)
    family_of = np.full(len(parsed), -1, dtype=np.int64)
    family_of[on_key] = bare_codes[host_codes[on_key]] * n_patterns + pattern_codes
    family_codes, family_pairs = pd.factorize(family_of, use_na_sentinel=False)
    named = family_pairs[family_pairs >= 0]
    family_hosts = pa.array(np.asarray(bare_names, dtype=object)[named // n_patterns], type=pa.string())
    family_patterns = pa.array(np.asarray(pattern_names, dtype=object)[named % n_patterns], type=pa.string())
    # The codes of families: 0.. in order of first appearance, -1 for a URL with no key.
    renumber = np.cumsum(family_pairs >= 0) - 1
    renumber[family_pairs < 0] = -1
    empty = np.empty(0, dtype=np.int64)
    step()
    return ParsedUrls(
        page_id=np.asarray(page_id, dtype=np.int64)[order],
        raw=raw_codes.astype(np.int64),
        base=text_codes[raw_codes].astype(np.int64) if len(raw_codes) else empty,
        trap=renumber[family_codes][raw_codes].astype(np.int64) if len(raw_codes) else empty,
        key_host=key_host.astype(np.int64),
        key_path=key_path.astype(np.int64),
        key_query=key_query.astype(np.int64),
        key_is_url=np.asarray([k.scheme == "https" for k in base_keys], dtype=bool),
        hosts=list(hosts),
        paths=pa.array(np.asarray(paths, dtype=object), type=pa.string()),
        queries=list(queries),
        trap_hosts=family_hosts,
        trap_patterns=family_patterns,
    )
