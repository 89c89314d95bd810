"""parallel_map (ordered, bounded, real worker processes) and prefetch."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import parallel_probe as probe
import pytest

from neardup.parallel import parallel_map, prefetch


def test_results_come_back_in_input_order_from_other_processes() -> None:
    assert list(parallel_map(probe.square_slowly, range(20), jobs=2)) == [x * x for x in range(20)]
    pids = {pid for _, pid, _ in parallel_map(probe.whoami, range(8), jobs=2)}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_one_job_runs_in_this_process() -> None:
    assert [pid for _, pid, _ in parallel_map(probe.whoami, range(3), jobs=1)] == [os.getpid()] * 3


def test_a_failing_batch_raises_in_the_caller() -> None:
    with pytest.raises(ValueError, match="bad batch 3"):
        list(parallel_map(probe.fail_on_three, range(10), jobs=2))


def test_at_most_two_batches_per_worker_are_in_flight() -> None:
    taken = 0

    def batches():
        nonlocal taken
        for x in range(100):
            taken += 1
            yield x

    results = parallel_map(probe.square_slowly, batches(), jobs=2)
    assert next(results) == 0
    assert taken <= 2 * 2 + 1  # the 4 in flight and the one whose submission waited for the first result
    assert list(results) == [x * x for x in range(1, 100)]


def test_workers_fork_from_a_server_that_imported_the_module_already() -> None:
    # A fresh interpreter, so that this test starts its own forkserver. The second pool's workers must
    # carry the module as the server imported it (before that pool existed) instead of importing it again.
    script = textwrap.dedent("""
        import time
        from neardup.parallel import parallel_map
        import parallel_probe as probe
        list(parallel_map(probe.whoami, range(4), jobs=2))
        started = time.monotonic()
        imported = [t for _, _, t in parallel_map(probe.whoami, range(4), jobs=2)]
        print(all(t < started for t in imported))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_prefetch_yields_everything_in_order_and_reraises_the_producers_error() -> None:
    assert list(prefetch(iter(range(50)), depth=2)) == list(range(50))

    def broken():
        yield 1
        raise OSError("disk went away")

    got = []
    with pytest.raises(OSError, match="disk went away"):
        for item in prefetch(broken()):
            got.append(item)
    assert got == [1]


def test_prefetch_stops_its_thread_when_the_consumer_leaves_early() -> None:
    before = set(threading.enumerate())
    it = prefetch(iter(range(10_000)), depth=2)
    assert next(it) == 0
    [producer] = [t for t in threading.enumerate() if t.name == "neardup-prefetch" and t not in before]
    it.close()
    producer.join(timeout=5)
    assert not producer.is_alive()
