"""The sketches stage: a SimHash and a MinHash signature per distinct content text under
`Config.sketch_key` (in workers). The ingest sketches its own setting as it goes; this runs for another
shingle size or normalization, and for the texts a fingerprint set is extended with."""

from __future__ import annotations

import pyarrow as pa

from ..batches import sketch_batch
from ..config import Config
from ..parallel import parallel_map
from ..store import Store
from .base import BATCH, INSERT_ROWS, PARALLEL_MIN, Progress, no_progress


def ensure_sketches(
    store: Store,
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    since: int = -1,
) -> int:
    """Sketch the distinct content texts (of the pages after page id `since`) that have no sketch under
    `config.sketch_key` yet; returns how many were sketched."""
    total = store.count_unsketched(
        config.norm_key, config.sketch_key, min_words=config.min_words, since=since
    )
    if total == 0:
        return 0
    batches = (
        (df["exact_key"].tolist(), df["text"].tolist(), config)
        for df in store.unsketched_texts(
            config.norm_key, config.sketch_key, BATCH * 4, min_words=config.min_words, since=since
        )
    )
    done = 0
    pending: list[pa.Table] = []
    for table in parallel_map(sketch_batch, batches, jobs=1 if total < PARALLEL_MIN else jobs):
        pending.append(table)
        done += table.num_rows
        if sum(t.num_rows for t in pending) >= INSERT_ROWS * 4:
            store.add_sketches(pa.concat_tables(pending), config.sketch_key)
            pending.clear()
        progress("fingerprint", done, total)
    if pending:
        store.add_sketches(pa.concat_tables(pending), config.sketch_key)
    return done
