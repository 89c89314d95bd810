"""What the local stages share: progress reports, batch sizes, and the clock that times each stage."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# (stage, done, total): pages, except stage "read": bytes of the file read so far
Progress = Callable[[str, int, int], None]
Log = Callable[[str], None]
BATCH = 256
INSERT_ROWS = 2048
# Below this many records a worker pool costs more than it saves.
PARALLEL_MIN = 2000


def no_progress(stage: str, done: int, total: int) -> None:
    pass


def say_nothing(message: str) -> None:
    pass


@dataclass(slots=True)
class StageClock:
    """Seconds per named stage, each reported through `say` as it starts and ends."""

    say: Log = say_nothing
    timings: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self.say(f"{name} ...")
        t0 = time.perf_counter()
        yield
        self.timings[name] = round(time.perf_counter() - t0, 2)
        self.say(f"{name}: {self.timings[name]:.1f} s")

    def total(self) -> dict[str, float]:
        return {**self.timings, "total": round(time.perf_counter() - self.started, 2)}
