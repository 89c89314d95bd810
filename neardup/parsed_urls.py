"""The pages' URLs as URL rules parse them (`url_parse.parse_urls`), as integer codes per page and each
distinct host, path, query and crawl-trap family once: what `rules.url_table` needs that no clustering
changes, in the form the store keeps (`Store.save_parsed_urls`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

Query = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class ParsedUrls:
    """The URLs of pages, in page id order, as codes. A page's URL as fetched has a raw code (equal codes,
    equal strings); its URL key (`urls.url_key`: the form rules compare) a base code (equal codes, equal
    `UrlKey.text`); a base code has a host, a path and a query code. A URL that is no http(s) URL has the
    key ("", "", the URL, ()) and no crawl-trap family (-1). The URLs are text UTF-8 holds (as the store
    keeps them: a record with a lone surrogate is rejected at ingest)."""

    page_id: np.ndarray  # ascending
    raw: np.ndarray  # per page: 0.. in order of first appearance
    base: np.ndarray  # per page: 0.. in order of first appearance of the key's text
    trap: np.ndarray  # per page: its crawl-trap family (host, pattern), -1 for no http(s) URL
    key_host: np.ndarray  # per base code: its host's code
    key_path: np.ndarray  # per base code: its path's code
    key_query: np.ndarray  # per base code: its query's code
    key_is_url: np.ndarray  # per base code: whether it is the key of an http(s) URL (scheme https)
    hosts: list[str]  # by host code: the host as written in the key (not the bare host)
    # By path code, as Arrow strings (bytes and offsets): a crawl has nearly as many paths as pages.
    paths: pa.StringArray
    queries: list[Query]  # by query code: the sorted (name, value) pairs
    # By crawl-trap family code: its bare host and pattern (as many families as a host has URL shapes).
    trap_hosts: pa.StringArray
    trap_patterns: pa.StringArray

    @property
    def n_raw(self) -> int:
        return int(self.raw.max(initial=-1)) + 1

    def path(self, code: int) -> str:
        """The path of path code `code`."""
        return str(self.paths[code].as_py())

    def trap_name(self, family: int) -> tuple[str, str]:
        """(bare host, pattern) of crawl-trap family `family`."""
        return str(self.trap_hosts[family].as_py()), str(self.trap_patterns[family].as_py())
