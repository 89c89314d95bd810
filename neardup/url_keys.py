"""URL keys of many URLs at once (`url_keys_many`, `key_texts`, `trap_patterns`): the bulk form of
`urls.url_key`, `UrlKey.text` and the crawl-trap pattern, equal to them URL for URL.

A URL of the common shape (http or https, a host of letters, digits, dots and hyphens, no port, no user,
printable ASCII) is split by one regular expression over the whole column; any other goes through
`urlsplit` as `url_key` does. A million URLs take seconds instead of minutes (URL rules of a million-page
crawl parse every URL once)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import parse_qsl

import numpy as np
import pandas as pd

from .urls import UrlKey, url_key

# Printable ASCII without space: urlsplit removes or keeps nothing of such a URL that this split does not.
_COMMON_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9.-]+)(/[!-\"$->@-~]*)?(?:\?([!-\"$-~]*))?(?:#[!-~]*)?$"
_NUMBER_SEGMENT = r"(?<=/)[0-9]+(?=/|$)"
_TOKEN_SEGMENT = r"(?<=/)(?=[^/]*[0-9])[A-Za-z0-9_-]{6,}(?=/|$)"
_NUMBER = re.compile(r"^\d+$")
_TOKEN = re.compile(r"^(?=.*\d)[A-Za-z0-9_-]{6,}$")


def url_keys_many(urls: Sequence[str]) -> list[UrlKey | None]:
    """`[url_key(u) for u in urls]`, the common URL shape split in bulk."""
    column = pd.Series(list(urls), dtype=object)
    parts = column.str.extract(_COMMON_URL, expand=True)
    common = parts[0].notna().to_numpy()
    hosts = parts[0].str.lower().str.rstrip(".")
    paths = parts[1].fillna("/")
    long = paths.str.len() > 1
    paths = paths.where(~long, paths.str.rstrip("/").replace("", "/"))
    # One string per distinct host, not one per URL.
    host_codes, host_names = pd.factorize(hosts)
    host_of = np.asarray(host_names, dtype=object)[host_codes] if len(host_names) else host_codes
    path_of, query_of = paths.to_numpy(), parts[2].to_numpy()
    keys: list[UrlKey | None] = [None] * len(column)
    for i in np.flatnonzero(common).tolist():
        query = query_of[i]
        pairs = tuple(sorted(parse_qsl(query, keep_blank_values=True))) if isinstance(query, str) else ()
        keys[i] = UrlKey("https", host_of[i], path_of[i], pairs)
    for i in np.flatnonzero(~common).tolist():
        keys[i] = url_key(urls[i])
    return keys


def key_texts(keys: Sequence[UrlKey]) -> list[str]:
    """`[k.text() for k in keys]`: a key with a host, a rooted path and no query is joined directly."""
    return [
        f"{k.scheme}://{k.host}{k.path}" if k.host and not k.query and k.path[:1] == "/" else k.text()
        for k in keys
    ]


def _trap_pattern(key: UrlKey) -> str:
    """The URL pattern of a crawl-trap family: numbers and id-like segments generalized, query values
    dropped."""
    segs = ["{n}" if _NUMBER.match(s) else "{id}" if _TOKEN.match(s) else s for s in key.path.split("/")]
    query = "&".join(sorted({f"{n}=*" for n, _ in key.query}))
    return "/".join(segs) + ("?" + query if query else "")


def trap_patterns(keys: Sequence[UrlKey]) -> list[str]:
    """`_trap_pattern` of each key; the rooted printable-ASCII paths (a URL of the common shape) in bulk."""
    paths = pd.Series([k.path for k in keys], dtype=object)
    bulk = paths.str.fullmatch(r"/[!-~]*").fillna(False).to_numpy(dtype=bool)
    general = paths.str.replace(_NUMBER_SEGMENT, "{n}", regex=True).str.replace(
        _TOKEN_SEGMENT, "{id}", regex=True
    )
    out: list[str] = []
    for key, done, pattern in zip(keys, bulk, general, strict=True):
        if not done:
            out.append(_trap_pattern(key))
        elif key.query:
            out.append(pattern + "?" + "&".join(sorted({f"{n}=*" for n, _ in key.query})))
        else:
            out.append(pattern)
    return out
