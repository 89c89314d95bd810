"""Imported by `parallel_map`'s forkserver only (as a preload module): the forkserver gets the kernel's
parent-death signal, so it dies with the process that started it, even by kill -9, and its workers
(whose parent it is) get theirs in turn. The kernel delivers these without the worker's GIL, so a worker
stuck in a long C call still ends. (The signal follows the thread that started the server; a server
killed when that thread ends is started again by the next pool.)"""

from __future__ import annotations

import sys

from .parallel import set_parent_death_signal

# Only in the forkserver itself (`python -c "from multiprocessing.forkserver import main; ..."`).
if sys.argv[:1] == ["-c"] and "multiprocessing.forkserver" in sys.modules:
    set_parent_death_signal()
