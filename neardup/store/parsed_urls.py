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
        # Read in the order the rows were written (page id, then code order: `save_parsed_urls`), which a
        # scan keeps; sorted here only where it does not (an ORDER BY sorts a million rows every time).
        cur = self.cursor()
        try:
            pages = _columns(cur.sql("SELECT page_id, raw, base, trap FROM url_parse_pages"))
        except duckdb.CatalogException:
            return None
        if not len(pages["page_id"]):
            return None
        pages = _in_order(pages, pages["page_id"])
        keys = _columns(cur.sql("SELECT base, host, path, query, is_url FROM url_parse_keys"))
        keys = _in_order(keys, keys["base"])
        names: dict[str, pa.StringArray] = {}
        for kind in _NAME_KINDS:
            rows = cur.sql("SELECT code, name FROM url_parse_names WHERE kind = ?", params=[kind])
            table = rows.to_arrow_table()
            code = table.column("code").to_numpy()
            column = table.column("name").combine_chunks()
            if len(code) > 1 and not bool((code[1:] > code[:-1]).all()):
                column = column.take(pa.array(np.argsort(code, kind="stable")))
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
            # one JSON document of every query: a json.loads per query costs more than the parse
            queries=[
                tuple(map(tuple, q)) for q in json.loads("[" + ",".join(names["query"].to_pylist()) + "]")
            ],
            trap_hosts=names["trap_host"],
            trap_patterns=names["trap_pattern"],
        )


def _columns(rows: duckdb.DuckDBPyRelation) -> dict[str, np.ndarray]:
    """The columns of `rows` (numbers and booleans, no nulls) as numpy arrays, through Arrow."""
    table = rows.to_arrow_table()
    return {name: table.column(name).to_numpy() for name in table.column_names}


def _in_order(columns: dict[str, np.ndarray], by: np.ndarray) -> dict[str, np.ndarray]:
    """`columns` with their rows sorted by `by` (ascending), or as they are where they are so already."""
    by = np.asarray(by)
    if len(by) < 2 or bool((by[1:] > by[:-1]).all()):
        return columns
    order = np.argsort(by, kind="stable")
    return {name: np.asarray(values)[order] for name, values in columns.items()}
