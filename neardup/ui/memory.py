"""The app process's memory: what it frees goes back to the system, so its size follows what it holds.

The app drops crawl-sized arrays when a fingerprint set leaves its caches (a million-page crawl's set and
its analyses take about a gigabyte). glibc's malloc keeps the freed blocks of its heap for reuse: the
process stays at its largest size until `release_freed` (malloc_trim) gives the free pages back. Malloc's
own settings stay at their defaults: a low fixed mmap threshold makes every column-sized temporary a
fresh mapping, faulted in page by page, which slows a threshold move at 1M pages (bench/RESULTS.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import threading

_lock = threading.Lock()


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None  # not glibc (musl, macOS): nothing to give back


def release_freed() -> bool:
    """Give the free pages of malloc's heap back to the system (malloc_trim), after a large part of what the
    app holds was dropped. Returns whether any were."""
    libc = _libc()
    if libc is None:
        return False
    with _lock:
        return bool(libc.malloc_trim(0))
