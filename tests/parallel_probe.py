"""Worker functions for tests/test_parallel.py: pool workers import them by module name."""

from __future__ import annotations

import os
import time

from neardup.parallel import SlotRef, shared_view

IMPORTED_AT = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process on the machine


def whoami(x: int) -> tuple[int, int, float]:
    return x, os.getpid(), IMPORTED_AT


def square_slowly(x: int) -> int:
    time.sleep(0.01 * (x % 3))  # later items finish first: the order must still be the input's
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError(f"bad batch {x}")
    return x


def shared_payload(ref: SlotRef) -> bytes:
    return shared_view(ref)[: ref.size]
