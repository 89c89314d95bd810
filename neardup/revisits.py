"""WARC revisits across files: a revisit whose record is in no file of this ingest stands for a page an
earlier ingest stored with the same payload digest (a de-duplicating crawl, Heritrix's
identical-payload-digest profile, writes the body once and revisits in later files).

`stored_page_lookup(store)` is the `warc.StoredPageLookup` the WARC reader calls once per such revisit:
one index lookup on the digest (`Store.page_by_payload`), preferring the page at the URL and date the
revisit's WARC-Refers-To-Target-URI / WARC-Refers-To-Date name."""

from __future__ import annotations

import json
from typing import Any

from .readers.capture import STORED_WARC_FIELDS, StoredPage, StoredPageLookup
from .records import parse_time
from .store import Store


def stored_page_lookup(store: Store) -> StoredPageLookup:
    """The lookup of stored pages by payload digest in `store`, for `warc.WarcBatches`."""

    def lookup(payload_digest: str, url: str | None, date: str | None) -> StoredPage | None:
        found = store.page_by_payload(payload_digest, url, parse_time(date))
        if found is None:
            return None
        page_id, html, status, extra_json = found
        if html is None:  # a page that came as text: no HTML to copy
            return None
        try:
            extra: dict[str, Any] = json.loads(extra_json) if extra_json else {}
        except ValueError:
            extra = {}
        warc = {name: extra[key] for key, name in STORED_WARC_FIELDS.items() if key in extra}
        return StoredPage(page_id=page_id, html=html, status=status, warc=warc)

    return lookup
