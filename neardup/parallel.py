"""Ordered, bounded parallel map over batches: both cores busy, memory flat."""

from __future__ import annotations

import contextlib
import itertools
import mmap
import multiprocessing as mp
import os
import queue
import select
import signal
import sys
import threading
import time
import types
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def _bare_main() -> Iterator[None]:
    """Hide the caller's __main__ while workers start.

    A forkserver child re-runs the parent's main script unless it cannot find one; under Streamlit
    that script is the app itself. Workers only need `neardup`, so they get an empty __main__.
    Workers are started inside `submit`, which is the only place this is used.
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


_PR_SET_PDEATHSIG = 1  # prctl(2)


def set_parent_death_signal() -> None:
    """Have the kernel SIGKILL this process when the thread that forked it ends (Linux; elsewhere a no-op)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def exit_with(pid: int) -> None:
    """End this process as soon as process `pid` ends: a daemon thread waits on its pidfd (Linux), or
    polls it once a second where there is none."""

    def watch() -> None:
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        if pidfd is not None:
            select.select([pidfd], [], [])  # readable once the process has ended
        else:
            while True:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
                time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name=f"neardup-exit-with-{pid}", daemon=True).start()


def _worker_init(main_pid: int) -> None:
    """Worker initializer: end this worker when the process that started the pool dies (even by kill -9).

    Without it a killed `neardup ingest` leaves its workers running: each holds both ends of the pool's
    queues and the forkserver's liveness pipe, so none of them, nor the forkserver, nor the resource
    tracker (which waits for every holder of its pipe) ever sees end-of-file. A worker's parent is the
    forkserver, which ends with the main process (`_forkserver_init`); the kernel's parent-death signal
    then ends the worker even inside a long C call that holds the GIL. Watching the main process too
    covers systems without that signal."""
    set_parent_death_signal()
    if os.getppid() == 1:  # the forkserver is gone already
        os._exit(1)
    exit_with(main_pid)


def parallel_map(func: Callable[[T], R], batches: Iterable[T], *, jobs: int | None = None) -> Iterator[R]:
    """`map(func, batches)` in worker processes, results in input order, at most 2 x jobs batches in flight.

    With jobs == 1 it runs in this process (no start-up cost, easy to debug). `func` must be a
    module-level function of an importable module. Workers come from a forkserver (the parent may
    hold DuckDB and server threads, which `fork` would copy mid-flight) that has imported `func`'s
    module, started with a bare __main__, so scripts need no `if __name__ == "__main__"` guard and
    Streamlit apps are not re-run.
    """
    jobs = jobs or default_jobs()
    if jobs <= 1:
        yield from map(func, batches)
        return
    context = mp.get_context("forkserver")
    # The server imports `func`'s module once and forks every later worker from it: a worker then starts
    # in milliseconds instead of importing numpy, pyarrow, DuckDB and the parsers (~1 CPU-s each), and
    # the next pool (every `parallel_map` call starts one) reuses the same server.
    context.set_forkserver_preload([func.__module__, "neardup._forkserver_init"])
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_worker_init, initargs=(os.getpid(),)
    ) as pool:
        inflight: deque[Future[R]] = deque()
        for batch in batches:
            with _bare_main():
                inflight.append(pool.submit(func, batch))
            if len(inflight) >= 2 * jobs:
                yield inflight.popleft().result()
        while inflight:
            yield inflight.popleft().result()


_DONE = object()


def prefetch(items: Iterable[T], *, depth: int = 4) -> Iterator[T]:
    """Produce `items` in a background thread, at most `depth` ahead.

    Decompression (zlib) and DuckDB both release the GIL, so reading the next batches of a dump
    overlaps with writing the previous ones. An exception in the producer is re-raised here.
    """
    q: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(_DONE)
        except BaseException as exc:  # handed to the consumer
            q.put(exc)

    thread = threading.Thread(target=produce, name="neardup-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = q.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


# --- shared memory for large batch payloads ------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SlotRef:
    """Where a worker finds a payload: bytes [0, size) of file descriptor `fd` of process `pid` (a memfd
    that `token` names; the descriptor number of a closed slot may come back for a new one)."""

    pid: int
    fd: int
    token: int
    capacity: int
    size: int


class SharedSlots:
    """Memory the workers of a pool read batch payloads from, instead of a pipe.

    Sent through the pool's pipe, a 2 MB payload costs ~5 CPU-ms (pickled, written in 64 KB pieces, read
    back into a growing buffer, unpickled); copied into a slot, mapped once by each worker, it costs one
    copy. A slot is an anonymous file (memfd) that the workers open through /proc: it ends with this
    process, even by kill -9, leaving nothing behind. Slots are reused in order (`share` takes one,
    `done` frees the oldest taken: results come back in order), so their pages are allocated once.
    `available()` is False where there are no memfds or no /proc: callers then send the bytes."""

    MIN_CAPACITY = 4 << 20

    def __init__(self) -> None:
        self._free: list[tuple[int, mmap.mmap, int, int]] = []  # (fd, map, token, capacity)
        self._taken: deque[tuple[int, mmap.mmap, int, int] | None] = deque()

    @staticmethod
    def available() -> bool:
        return hasattr(os, "memfd_create") and os.path.isdir(f"/proc/{os.getpid()}/fd")

    def share(self, data: bytes) -> SlotRef:
        """`data` copied into a free slot (a new one, or a larger one, as needed)."""
        return self.share_parts([data])

    def share_parts(self, parts: Sequence[bytes | memoryview]) -> SlotRef:
        """`parts` copied one after the other into a free slot, without joining them first."""
        size = sum(len(part) for part in parts)
        slot = self._free.pop() if self._free else None
        if slot is not None and slot[3] < size:
            self._close(slot)
            slot = None
        if slot is None:
            capacity = max(self.MIN_CAPACITY, 1 << (size - 1).bit_length())
            fd = os.memfd_create("neardup-batch", os.MFD_CLOEXEC)
            try:
                os.ftruncate(fd, capacity)
                slot = (fd, mmap.mmap(fd, capacity), next(_tokens), capacity)
            except BaseException:
                os.close(fd)
                raise
        view, at = slot[1], 0
        for part in parts:
            view[at : at + len(part)] = part
            at += len(part)
        self._taken.append(slot)
        return SlotRef(os.getpid(), slot[0], slot[2], slot[3], size)

    def skip(self) -> None:
        """A batch sent without a slot: keeps `done` in step with the results."""
        self._taken.append(None)

    def done(self) -> None:
        """The oldest batch's result is back: its slot is free."""
        slot = self._taken.popleft()
        if slot is not None:
            self._free.append(slot)

    def close(self) -> None:
        for slot in [*self._free, *(s for s in self._taken if s is not None)]:
            self._close(slot)
        self._free.clear()
        self._taken.clear()

    @staticmethod
    def _close(slot: tuple[int, mmap.mmap, int, int]) -> None:
        slot[1].close()
        os.close(slot[0])

    def __enter__(self) -> SharedSlots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_tokens = itertools.count(1)
_mapped: dict[tuple[int, int], tuple[int, mmap.mmap]] = {}  # in a worker: (pid, fd) -> (token, map)


def shared_view(ref: SlotRef) -> mmap.mmap:
    """In a worker: the slot `ref` names, mapped read-only (once per slot; bytes [0, ref.size) are the
    payload). The map stays valid until the next `shared_view` of a slot with the same descriptor."""
    key = (ref.pid, ref.fd)
    cached = _mapped.get(key)
    if cached is not None and cached[0] == ref.token:
        return cached[1]
    if cached is not None:
        # A line still viewed (in an exception's traceback, say) keeps the old map alive until it goes:
        # the map is then unmapped by its last reference instead.
        with contextlib.suppress(BufferError):
            cached[1].close()
        del _mapped[key]
    fd = os.open(f"/proc/{ref.pid}/fd/{ref.fd}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        view = mmap.mmap(fd, ref.capacity, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    _mapped[key] = (ref.token, view)
    return view
