"""Imported by `parallel_map`'s forkserver only (as a preload module): the forkserver ends with the process
that started it, even by kill -9, and its workers (whose parent it is) get the kernel's parent-death
signal in turn. It watches that process rather than taking the parent-death signal itself: that signal
follows the thread that started the server (a Streamlit script run), and other threads' pools share it."""

from __future__ import annotations

import os
import sys

from .parallel import exit_with

# Only in the forkserver itself (`python -c "from multiprocessing.forkserver import main; ..."`).
if sys.argv[:1] == ["-c"] and "multiprocessing.forkserver" in sys.modules:
    exit_with(os.getppid())
