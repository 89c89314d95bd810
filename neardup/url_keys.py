"""URL keys of many URLs at once (`url_keys_many`, `key_texts`, `trap_patterns`): the bulk form of
`urls.url_key`, `UrlKey.text` and the crawl-trap pattern, equal to them URL for URL.

A URL of the common shape (http or https, a host of letters, digits, dots and hyphens, no port, no user,
printable ASCII) is split by one regular expression over the whole column; any other goes through
`urlsplit` as `url_key` does. A million URLs take seconds instead of minutes (URL rules of a million-page
crawl parse every URL once)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, quote, urlencode

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .urls import UrlKey, url_key

# Printable ASCII without space: urlsplit removes or keeps nothing of such a URL that this split does not.
_COMMON_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://(?P<host>[A-Za-z0-9.-]+)(?P<path>/[!-\"$->@-~]*)?(?:\?(?P<query>[!-\"$-~]*))?(?:#[!-~]*)?$"
# A path segment (Arrow's RE2 has no lookaround): a number, and a token of id characters (with a digit).
_NUMBER_SEGMENT = r"^[0-9]+$"
_TOKEN_SEGMENT = r"^[A-Za-z0-9_-]{6,}$"
_NUMBER = re.compile(r"^\d+$")
_TOKEN = re.compile(r"^(?=.*\d)[A-Za-z0-9_-]{6,}$")


def url_keys_many(urls: Sequence[str]) -> list[UrlKey | None]:
    """`[url_key(u) for u in urls]`, the common URL shape split in bulk (Arrow's regular expressions)."""
    column = _arrow_strings(list(urls))
    parts = pc.extract_regex(column, _COMMON_URL)
    common = parts.is_valid().to_numpy(zero_copy_only=False)
    hosts = pc.utf8_rtrim(pc.ascii_lower(parts.field("host")), characters=".")
    paths = parts.field("path")
    long = pc.greater(pc.binary_length(paths), 1)
    trimmed = pc.utf8_rtrim(paths, characters="/")
    paths = pc.if_else(long, pc.if_else(pc.equal(trimmed, ""), "/", trimmed), paths)
    paths = pc.if_else(pc.equal(paths, ""), "/", paths)
    # One string per distinct host and one parse per distinct query, not one per URL.
    host_codes, host_names = pd.factorize(hosts.to_numpy(zero_copy_only=False))
    host_of = np.asarray(host_names, dtype=object)[host_codes] if len(host_names) else host_codes
    query_codes, query_texts = pd.factorize(parts.field("query").to_numpy(zero_copy_only=False))
    pairs_of = [tuple(sorted(parse_qsl(q, keep_blank_values=True))) for q in query_texts]
    path_of = paths.to_numpy(zero_copy_only=False)
    keys: list[UrlKey | None] = [None] * len(column)
    for i in np.flatnonzero(common).tolist():
        keys[i] = UrlKey("https", host_of[i], path_of[i], pairs_of[query_codes[i]])
    for i in np.flatnonzero(~common).tolist():
        keys[i] = url_key(urls[i])
    return keys


def key_texts(keys: Sequence[UrlKey]) -> list[str]:
    """`[k.text() for k in keys]`: a key with a host and a rooted path is joined directly, its query encoded
    once per distinct query."""
    encoded: dict[tuple[tuple[str, str], ...], str] = {(): ""}
    out = []
    for k in keys:
        if not k.host or k.path[:1] != "/":
            out.append(k.text())
            continue
        if (query := encoded.get(k.query)) is None:
            query = encoded[k.query] = urlencode(k.query, quote_via=quote)
        out.append(f"{k.scheme}://{k.host}{k.path}?{query}" if query else f"{k.scheme}://{k.host}{k.path}")
    return out


def _trap_pattern(key: UrlKey) -> str:
    """The URL pattern of a crawl-trap family: numbers and id-like segments generalized, query values
    dropped."""
    segs = ["{n}" if _NUMBER.match(s) else "{id}" if _TOKEN.match(s) else s for s in key.path.split("/")]
    query = "&".join(sorted({f"{n}=*" for n, _ in key.query}))
    return "/".join(segs) + ("?" + query if query else "")


def trap_patterns(keys: Sequence[UrlKey]) -> list[str]:
    """`_trap_pattern` of each key; the rooted printable-ASCII paths (a URL of the common shape) split into
    segments and generalized in bulk (Arrow), each distinct query's names joined once."""
    paths = _arrow_strings([k.path for k in keys])
    bulk = pc.fill_null(pc.match_substring_regex(paths, r"^/[!-~]*$"), False)
    segments = pc.split_pattern(pc.if_else(bulk, paths, pa.scalar(None, pa.string())), "/")
    flat = pc.list_flatten(segments)
    number = pc.match_substring_regex(flat, _NUMBER_SEGMENT)
    token = pc.and_(pc.match_substring_regex(flat, _TOKEN_SEGMENT), pc.match_substring_regex(flat, "[0-9]"))
    generalized = pc.if_else(number, "{n}", pc.if_else(token, "{id}", flat))
    joined = pc.binary_join(pa.ListArray.from_arrays(segments.offsets, generalized), "/")
    general = joined.to_numpy(zero_copy_only=False)
    names: dict[tuple[tuple[str, str], ...], str] = {}
    out: list[str] = []
    for key, done, pattern in zip(keys, bulk.to_numpy(zero_copy_only=False), general, strict=True):
        if not done:
            out.append(_trap_pattern(key))
        elif key.query:
            if (query := names.get(key.query)) is None:
                query = names[key.query] = "&".join(sorted({f"{n}=*" for n, _ in key.query}))
            out.append(pattern + "?" + query)
        else:
            out.append(pattern)
    return out


def _arrow_strings(texts: list[str]) -> pa.StringArray:
    """`texts` as an Arrow array; a text that is no valid UTF-8 (a lone surrogate) becomes null, which the
    bulk forms leave to the per-item ones."""
    try:
        return pa.array(texts, type=pa.string())
    except (pa.ArrowInvalid, UnicodeEncodeError):
        return pa.array([t if _encodes(t) else None for t in texts], type=pa.string())


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
