"""The pages' URLs as URL rules parse them (`parsed_urls.ParsedUrls`), kept so that a page reads columns
instead of parsing every URL of the crawl again."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pyarrow as pa

from ..parsed_urls import ParsedUrls
from .connection import StoreCore, reads, transaction, writes

PARSED_URL_TABLES = ("url_parse_pages", "url_parse_keys", "url_parse_names")
_NAME_KINDS = ("host", "path", "query", "trap_host", "trap_pattern")


class ParsedUrlsMixin(StoreCore):
    """The store's part that keeps the parsed URLs of the pages."""

    @writes
    def save_parsed_urls(self, parse: ParsedUrls) -> None:
        """Keep `parse` (of every page there is), replacing the one kept before."""
        names: dict[str, pa.Array] = {
            "host": pa.array(parse.hosts, pa.string()),
            "path": parse.paths,
            "query": pa.array([json.dumps(q) for q in parse.queries], pa.string()),
            "trap_host": parse.trap_hosts,
            "trap_pattern": parse.trap_patterns,
        }
        tables = {
            "url_parse_pages": pa.table(
                {
                    "page_id": parse.page_id.astype(np.int64),
                    "raw": parse.raw.astype(np.int32),
                    "base": parse.base.astype(np.int32),
                    "trap": parse.trap.astype(np.int32),
                }
            ),
            "url_parse_keys": pa.table(
                {
                    "base": np.arange(len(parse.key_host), dtype=np.int32),
                    "host": parse.key_host.astype(np.int32),
                    "path": parse.key_path.astype(np.int32),
                    "query": parse.key_query.astype(np.int32),
                    "is_url": parse.key_is_url.astype(bool),
                }
            ),
            "url_parse_names": pa.table(
                {
                    "kind": pa.array([k for k in _NAME_KINDS for _ in names[k]], pa.string()),
                    "code": pa.array(
                        np.concatenate([np.arange(len(names[k]), dtype=np.int32) for k in _NAME_KINDS])
                    ),
                    "name": pa.concat_arrays([names[k].cast(pa.string()) for k in _NAME_KINDS]),
                }
            ),
        }
        cur = self.cursor()
        with transaction(cur):
            for table, rows in tables.items():
                cur.execute(f"DELETE FROM {table}")
                cur.register("url_parse_batch", rows)
                cur.execute(f"INSERT INTO {table} SELECT * FROM url_parse_batch")
                cur.unregister("url_parse_batch")

    @reads
    def parsed_urls(self) -> ParsedUrls | None:
        """The parsed URLs kept (`save_parsed_urls`), or None: none kept, or a file older than its tables.
        Whether they are of the pages there are is the caller's to check (their page ids)."""
        cur = self.cursor()
        try:
            pages = cur.execute(
                "SELECT page_id, raw, base, trap FROM url_parse_pages ORDER BY page_id"
            ).fetchnumpy()
        except duckdb.CatalogException:
            return None
        if not len(pages["page_id"]):
            return None
        keys = cur.execute("SELECT host, path, query, is_url FROM url_parse_keys ORDER BY base").fetchnumpy()
        names: dict[str, pa.StringArray] = {}
        for kind in _NAME_KINDS:
            rows = cur.sql("SELECT name FROM url_parse_names WHERE kind = ? ORDER BY code", params=[kind])
            column = rows.to_arrow_table().column("name").combine_chunks()
            names[kind] = column if column.type == pa.string() else column.cast(pa.string())
        return ParsedUrls(
            page_id=pages["page_id"].astype(np.int64),
            raw=pages["raw"].astype(np.int64),
            base=pages["base"].astype(np.int64),
            trap=pages["trap"].astype(np.int64),
            key_host=keys["host"].astype(np.int64),
            key_path=keys["path"].astype(np.int64),
            key_query=keys["query"].astype(np.int64),
            key_is_url=keys["is_url"].astype(bool),
            hosts=names["host"].to_pylist(),
            paths=names["path"],
            queries=[tuple((n, v) for n, v in json.loads(q)) for q in names["query"].to_pylist()],
            trap_hosts=names["trap_host"],
            trap_patterns=names["trap_pattern"],
        )
