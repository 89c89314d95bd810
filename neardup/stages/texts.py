"""The texts stage: each page's HTML normalized under `Config.norm_key` (in workers), stored once."""

from __future__ import annotations

from ..batches import normalize_batch
from ..config import Config
from ..parallel import parallel_map
from ..store import Store
from .base import BATCH, PARALLEL_MIN, Progress, no_progress


def ensure_texts(
    store: Store,
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    since: int = -1,
) -> int:
    """Normalize the pages (after page id `since`) that have no text yet under `config.norm_key`; returns
    how many were done."""
    total = store.count_pages_without_text(config.norm_key, since=since)
    if total == 0:
        return 0
    batches = ((df, config) for df in store.pages_without_text(config.norm_key, BATCH, since=since))
    done = 0
    for out in parallel_map(normalize_batch, batches, jobs=1 if total < PARALLEL_MIN else jobs):
        store.add_texts(out)
        done += len(out)
        progress("normalize", done, total)
    return done
