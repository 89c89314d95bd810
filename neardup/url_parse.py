"""The crawl's URLs parsed for URL rules (`parse_urls`): what rule learning needs of them that no clustering
changes, as integer codes (`parsed_urls.ParsedUrls`). Made once per crawl (`neardup report`, or the URL
rules page where a database has none) and kept in the store (`Store.save_parsed_urls`): the page reads
columns instead of parsing a million URLs. `rules.url_table` makes its table of one."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from hashlib import blake2b

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import factorized
from .parsed_urls import ParsedUrls, Query
from .url_keys import key_texts, trap_patterns, url_keys_many
from .urls import UrlKey, bare_host

# `parse_urls` calls its `step` this many times.
PARSE_STEPS = 4
# Distinct URLs parsed at a time: their keys as Python objects are held for that many only.
PARSE_BLOCK = 65_536


# URLs of pages in page id order, in batches: a function that reads them (again at each call).
UrlBatches = Callable[[], Iterable[pa.Array | pa.ChunkedArray]]


def parse_urls(
    page_id: np.ndarray,
    urls: np.ndarray | pa.Array | pa.ChunkedArray | UrlBatches,
    *,
    step: Callable[[], None] = lambda: None,
) -> ParsedUrls:
    """The `ParsedUrls` of pages (`page_id`, their `urls`, in any order; or a function reading them in
    batches, `page_id` ascending: a store's scan, read twice and never held whole): each distinct URL parsed
    once (`url_keys.url_keys_many`), `PARSE_BLOCK` of them at a time, each block's keys reduced to integer
    codes, paths and trap patterns as Arrow strings and key texts as 16-byte digests before the next (the
    keys of a crawl's URLs as Python objects would be several times their bytes); `step()` is called after
    each of its PARSE_STEPS steps. The URLs themselves are coded by their digests, so the distinct URLs are
    not held beside them."""
    ids = np.asarray(page_id, dtype=np.int64)
    ascending = len(ids) < 2 or bool((ids[1:] > ids[:-1]).all())
    order = None if ascending else np.argsort(ids, kind="stable")
    batches: UrlBatches
    if callable(urls):
        if order is not None:
            raise ValueError("URLs read in batches are those of pages in ascending page id order")
        batches = urls
    else:
        column = (
            urls if isinstance(urls, pa.Array | pa.ChunkedArray) else pa.array(np.asarray(urls, dtype=object))
        )
        del urls
        if order is not None:  # codes in order of first appearance, as `pd.factorize` numbers them
            column = column.take(pa.array(order))
        batches = functools.partial(_slices, column, PARSE_BLOCK)
    raw_codes = _first_appearance_codes(
        pa.chunked_array([_digests(_strings(b)) for b in batches()], _DIGEST)
    )[0]
    if len(raw_codes) != len(ids):
        raise ValueError(f"{len(raw_codes)} URLs read for {len(ids)} pages")
    first_rows = factorized.first_rows(raw_codes)
    n_raw = len(first_rows)
    text_digests: list[pa.Array] = []
    paths_of_raw: list[pa.Array] = []
    host_of = np.empty(n_raw, dtype=np.int64)  # per distinct URL: its key's host (`host_code`)
    query_of = np.empty(n_raw, dtype=np.int64)  # its key's query (`query_code`)
    # its crawl-trap pattern, null for no key: Arrow strings, coded after the loop (nearly as many patterns
    # as paths where slugs are not generalized: as Python strings, the largest thing the parse would hold)
    patterns_of_raw: list[pa.Array] = []
    https = np.zeros(n_raw, dtype=bool)
    host_code: dict[str, int] = {}
    query_code: dict[Query, int] = {}
    at = 0
    for block in _distinct_urls(batches, first_rows):
        parsed = url_keys_many(block)
        raw_keys = [k or UrlKey("", "", url, ()) for k, url in zip(parsed, block, strict=True)]
        del block
        end = at + len(raw_keys)
        text_digests.append(_digests(key_texts(raw_keys)))
        paths_of_raw.append(pa.array([k.path for k in raw_keys], pa.string()))
        host_of[at:end] = [host_code.setdefault(k.host, len(host_code)) for k in raw_keys]
        query_of[at:end] = [query_code.setdefault(k.query, len(query_code)) for k in raw_keys]
        https[at:end] = [k.scheme == "https" for k in raw_keys]
        on_key = np.flatnonzero([k is not None for k in parsed])
        patterns: list[str | None] = [None] * len(raw_keys)
        for i, pattern in zip(
            on_key.tolist(), trap_patterns([raw_keys[i] for i in on_key.tolist()]), strict=True
        ):
            patterns[i] = pattern
        patterns_of_raw.append(pa.array(patterns, pa.string()))
        del parsed, raw_keys, patterns
        at = end
    if at != n_raw:
        raise ValueError(f"{at} distinct URLs read again of {n_raw}: the pages changed between the reads")
    del batches, first_rows
    step()
    text_codes = _first_appearance_codes(pa.chunked_array(text_digests, _DIGEST))[0]
    del text_digests
    # A key text's host, path and query: those of its last URL (all of its URLs have the same).
    last_of_text = _last_rows(text_codes, int(text_codes.max(initial=-1)) + 1)
    host_names = list(host_code)
    query_list = list(query_code)
    key_host, host_uniques = pd.factorize(host_of[last_of_text])
    key_query, query_uniques = pd.factorize(query_of[last_of_text])
    # the distinct paths of the raw URLs, then those of the keys in order of their first key
    raw_path, raw_paths = _first_appearance_codes(pa.chunked_array(paths_of_raw, pa.string()))
    del paths_of_raw
    key_path, key_raw_path = pd.factorize(raw_path[last_of_text])
    del raw_path
    paths = raw_paths.take(pa.array(key_raw_path))
    del raw_paths
    step()
    # A crawl-trap family is a (bare host, pattern): numbered as a pair of codes, not hashed as strings.
    bare_codes, bare_names = pd.factorize(np.asarray([bare_host(h) for h in host_names], dtype=object))
    pattern_of, pattern_names = _first_appearance_codes(pa.chunked_array(patterns_of_raw, pa.string()))
    del patterns_of_raw
    on_key_all = pattern_of >= 0
    step()
    n_patterns = max(len(pattern_names), 1)
    family_of = np.full(n_raw, -1, dtype=np.int64)
    family_of[on_key_all] = bare_codes[host_of[on_key_all]] * n_patterns + pattern_of[on_key_all]
    family_codes, family_pairs = pd.factorize(family_of, use_na_sentinel=False)
    named = family_pairs[family_pairs >= 0]
    family_hosts = pa.array(np.asarray(bare_names, dtype=object)[named // n_patterns], type=pa.string())
    family_patterns = pattern_names.take(pa.array(named % n_patterns))
    # The codes of families: 0.. in order of first appearance, -1 for a URL with no key.
    renumber = np.cumsum(family_pairs >= 0) - 1
    renumber[family_pairs < 0] = -1
    empty = np.empty(0, dtype=np.int64)
    step()
    return ParsedUrls(
        page_id=ids if order is None else ids[order],
        raw=raw_codes,
        base=text_codes[raw_codes].astype(np.int64) if len(raw_codes) else empty,
        trap=renumber[family_codes][raw_codes].astype(np.int64) if len(raw_codes) else empty,
        key_host=key_host.astype(np.int64),
        key_path=key_path.astype(np.int64),
        key_query=key_query.astype(np.int64),
        key_is_url=https[last_of_text],
        hosts=[host_names[c] for c in host_uniques.tolist()],
        paths=paths,
        queries=[query_list[c] for c in query_uniques.tolist()],
        trap_hosts=family_hosts,
        trap_patterns=family_patterns,
    )


def _strings(urls: pa.Array | pa.ChunkedArray) -> list[str]:
    """URLs as Python strings (text of any type, e.g. a column of large strings)."""
    return (urls if pa.types.is_string(urls.type) else urls.cast(pa.string())).to_pylist()


def _slices(column: pa.Array | pa.ChunkedArray, rows: int) -> Iterator[pa.Array | pa.ChunkedArray]:
    """`column` `rows` at a time."""
    for at in range(0, len(column), rows):
        yield column.slice(at, rows)


def _distinct_urls(batches: UrlBatches, first_rows: np.ndarray) -> Iterator[list[str]]:
    """The URLs at `first_rows` of the pages `batches` reads (each distinct URL once, in code order),
    `PARSE_BLOCK` at a time."""
    pending: list[str] = []
    start = 0
    for batch in batches():
        lo, hi = np.searchsorted(first_rows, [start, start + len(batch)])
        if hi > lo:
            pending += _strings(batch.take(pa.array(first_rows[lo:hi] - start)))
        start += len(batch)
        while len(pending) >= PARSE_BLOCK:
            yield pending[:PARSE_BLOCK]
            pending = pending[PARSE_BLOCK:]
    if pending:
        yield pending


# A key text's digest: 128 bits, so that two of a crawl's distinct texts share one with a chance of ~n^2 / 2^129.
_DIGEST = pa.binary(16)


def _digests(texts: list[str]) -> pa.FixedSizeBinaryArray:
    """The BLAKE2b-128 digest of each text's UTF-8 (lone surrogates passed through)."""
    joined = b"".join(blake2b(t.encode("utf-8", "surrogatepass"), digest_size=16).digest() for t in texts)
    return pa.FixedSizeBinaryArray.from_buffers(_DIGEST, len(texts), [None, pa.py_buffer(joined)])


def _first_appearance_codes(values: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """(code of each value, -1 for null; the distinct values by code), codes in order of first appearance
    (one dictionary for every chunk: no chunk is copied into one array)."""
    encoded = pc.dictionary_encode(values)
    if not encoded.num_chunks:
        return np.empty(0, dtype=np.int64), pa.array([], values.type)
    codes = np.concatenate(
        [
            np.asarray(c.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
            for c in encoded.chunks
        ]
    )
    return codes, encoded.chunk(0).dictionary


def _last_rows(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """The last row of each code 0..n_codes-1 (every code has one)."""
    reversed_first = np.unique(codes[::-1], return_index=True)[1]
    out = np.empty(n_codes, dtype=np.int64)
    out[:] = len(codes) - 1 - reversed_first
    return out
