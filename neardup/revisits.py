"""WARC revisits linked to stored pages.

Across files: a revisit whose record is in no file of this ingest stands for a page an earlier ingest
stored with the same payload digest (a de-duplicating crawl, Heritrix's identical-payload-digest profile,
writes the body once and revisits in later files). `stored_page_lookup(store)` is the
`warc.StoredPageLookup` the WARC reader calls once per such revisit: one index lookup on the digest
(`Store.page_by_payload`), preferring the page at the URL and date the revisit's
WARC-Refers-To-Target-URI / WARC-Refers-To-Date name.

Within a file gzipped as one stream: a revisit of a record read long before stands for the page that record
made, stored by then. `source_page_lookup(store, source_id)` is the `warc.SourcePages` the reader calls
once for each batch of such revisits of the file (`WarcBatches.held_revisits`): the pages at those records'
numbers, instead of inflating the stream a second time to read the records again."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .readers.capture import STORED_WARC_FIELDS, SourcePages, StoredPage, StoredPageLookup
from .records import parse_time
from .store import Store

_READ_ROWS = 256  # pages read a query (`Store.page_records`): their HTML is in memory together


def stored_page_lookup(store: Store) -> StoredPageLookup:
    """The lookup of stored pages by payload digest in `store`, for `warc.WarcBatches`."""

    def lookup(payload_digest: str, url: str | None, date: str | None) -> StoredPage | None:
        found = store.page_by_payload(payload_digest, url, parse_time(date))
        if found is None:
            return None
        page_id, html, status, extra_json = found
        return _stored_page(page_id, html, status, extra_json)

    return lookup


def source_page_lookup(store: Store, source_id: int) -> SourcePages:
    """The lookup of the pages source `source_id` stored, by record number, for `warc.WarcBatches`."""

    def lookup(numbers: list[int]) -> dict[int, StoredPage]:
        at = store.pages_at_lines(source_id, numbers)
        line_of = {page_id: line for line, page_id in at.items()}
        found: dict[int, StoredPage] = {}
        for table in store.page_records(np.array(sorted(line_of), np.int64), _READ_ROWS):
            for row in table.select(["page_id", "html", "status", "extra"]).to_pylist():
                page = _stored_page(row["page_id"], row["html"], row["status"], row["extra"])
                if page is not None:
                    found[line_of[row["page_id"]]] = page
        return found

    return lookup


def _stored_page(
    page_id: int, html: str | None, status: int | None, extra_json: str | None
) -> StoredPage | None:
    """A stored page as a revisit's copy, with the WARC fields of its record; None for a page that came as text
    (no HTML to copy)."""
    if html is None:
        return None
    try:
        extra: dict[str, Any] = json.loads(extra_json) if extra_json else {}
    except ValueError:
        extra = {}
    warc = {name: extra[key] for key, name in STORED_WARC_FIELDS.items() if key in extra}
    return StoredPage(page_id=int(page_id), html=html, status=status, warc=warc)
