"""Ordered, bounded parallel map over batches: both cores busy, memory flat."""

from __future__ import annotations

import multiprocessing as mp
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def parallel_map(func: Callable[[T], R], batches: Iterable[T], *, jobs: int | None = None) -> Iterator[R]:
    """`map(func, batches)` in worker processes, results in input order, at most 2 x jobs batches in flight.

    With jobs == 1 it runs in this process (no start-up cost, easy to debug). `func` must be a
    module-level function. Workers come from a forkserver: the parent may hold DuckDB threads.
    """
    jobs = jobs or default_jobs()
    if jobs <= 1:
        yield from map(func, batches)
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("forkserver")) as pool:
        inflight: deque[Future[R]] = deque()
        for batch in batches:
            inflight.append(pool.submit(func, batch))
            if len(inflight) >= 2 * jobs:
                yield inflight.popleft().result()
        while inflight:
            yield inflight.popleft().result()
