"""The pages' URLs parsed for URL rules (`url_parse.parse_urls`), once per crawl: kept in the store and
read back while the pages are the same."""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd

from ..errors import NeardupError
from ..parsed_urls import ParsedUrls
from ..store import Store
from ..store.pages import PagesOutOfOrder
from ..url_parse import PARSE_BLOCK, PARSE_STEPS, parse_urls
from .base import Progress, no_progress

STAGE = "parsing the crawl's URLs"


def ensure_parsed_urls(store: Store, pages: pd.DataFrame, *, progress: Progress = no_progress) -> ParsedUrls:
    """The URLs of `pages` (page_id, and url, else read from the store) as URL rules parse them: read from
    the store when it keeps those of these pages, else parsed (`progress` told of each step) and, when they
    are every page of the store, kept. A file that cannot be written now (read-only, or locked by another
    process) keeps none: the next call parses again."""
    page_id = pages["page_id"].to_numpy(dtype=np.int64)
    kept = store.parsed_urls()
    if kept is not None and np.array_equal(kept.page_id, np.sort(page_id, kind="stable")):
        return kept
    steps = iter(range(1, PARSE_STEPS + 1))
    progress(STAGE, 0, PARSE_STEPS)
    parsed = None
    every_page = len(page_id) == store.count_pages()
    if every_page:  # read twice in batches (`parse_urls`), not held whole
        with contextlib.suppress(PagesOutOfOrder):
            parsed = parse_urls(
                np.sort(page_id),
                lambda: store.page_url_batches(PARSE_BLOCK),
                step=lambda: progress(STAGE, next(steps), PARSE_STEPS),
            )
    if parsed is None:
        # the URLs passed with no other reference: the parse lets go of them once coded
        parsed = parse_urls(
            page_id,
            pages["url"].to_numpy(dtype=object) if "url" in pages.columns else store.page_urls(page_id),
            step=lambda: progress(STAGE, next(steps), PARSE_STEPS),
        )
    try:
        if every_page:
            store.save_parsed_urls(parsed)
    except NeardupError:
        pass
    return parsed
