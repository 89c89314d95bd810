"""parallel_map (ordered, bounded, real worker processes) and prefetch."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import parallel_probe as probe
import pytest

from neardup.parallel import SharedSlots, SlotRef, parallel_map, prefetch, shared_view


def test_results_come_back_in_input_order_from_other_processes() -> None:
    assert list(parallel_map(probe.square_slowly, range(20), jobs=2)) == [x * x for x in range(20)]
    pids = {pid for _, pid, _ in parallel_map(probe.whoami, range(8), jobs=2)}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


@pytest.mark.skipif(not SharedSlots.available(), reason="no memfd or /proc")
def test_workers_read_what_was_shared() -> None:
    payloads = [os.urandom(n) for n in (10, 5 << 20, 3, 1 << 20, 0, 7 << 20)]
    with SharedSlots() as slots:

        def refs() -> Iterator[SlotRef]:
            for p in payloads:
                yield slots.share(p)

        got = []
        for data in parallel_map(probe.shared_payload, refs(), jobs=2):
            got.append(data)
            slots.done()
    assert got == payloads


@pytest.mark.skipif(not SharedSlots.available(), reason="no memfd or /proc")
def test_a_slot_mapped_again_while_a_view_of_its_old_map_lives() -> None:
    with SharedSlots() as slots:
        ref = slots.share(b"first batch")
        old = memoryview(shared_view(ref))[:5]  # a line still held, as in an exception's traceback
        again = SlotRef(ref.pid, ref.fd, ref.token + 1000, ref.capacity, ref.size)  # the descriptor reused
        assert shared_view(again)[: ref.size] == b"first batch"
        assert old == b"first"


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


def _process_table() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, state, start time) of every live process; zombies count as ended."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] not in ("Z", "X"):
                table[int(entry)] = (int(fields[1]), fields[0], fields[19])
    return table


def _descendants(pid: int) -> dict[int, str]:
    """Every process whose parent chain leads to `pid`, with its start time (pids are reused)."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for child, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(child)
    found, stack = {}, [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found[child] = table[child][2]
            stack.append(child)
    return found


def test_kill_9_of_an_ingest_leaves_no_process_behind(tmp_path: Path) -> None:
    """The forkserver, the resource tracker and the workers all end when the ingest is killed mid-way."""
    from conftest import make_crawl, write_jsonl

    dump = write_jsonl(tmp_path / "big.jsonl", make_crawl(n_articles=0, n_edits=0, n_unique=8000).records)
    root = str(Path(__file__).resolve().parent.parent)
    ingest = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neardup.cli",
            "ingest",
            str(dump),
            "--db",
            str(tmp_path / "k.duckdb"),
            "--jobs",
            "2",
        ],
        env={**os.environ, "PYTHONPATH": root},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # resource tracker + forkserver + 2 workers, mid-load
        seen: dict[int, str] = {}
        for _ in range(1200):
            seen = _descendants(ingest.pid)
            if len(seen) >= 4 or ingest.poll() is not None:
                break
            threading.Event().wait(0.05)
        assert len(seen) >= 4 and ingest.poll() is None, "the ingest ended before its workers were seen"
    finally:
        ingest.kill()
        ingest.wait(timeout=30)
    left = seen
    for _ in range(300):  # bounded wait for the kernel and the processes to wind down
        table = _process_table()
        left = {pid: start for pid, start in seen.items() if pid in table and table[pid][2] == start}
        if not left:
            break
        threading.Event().wait(0.1)
    for pid in left:  # never leave them running, whatever the outcome
        os.kill(pid, 9)
    assert not left, f"{len(left)} processes outlived the killed ingest"


def test_a_pool_outlives_the_thread_that_started_the_forkserver() -> None:
    """Streamlit runs each script in its own thread: the forkserver one run started serves the next."""
    started, leave = threading.Event(), threading.Event()

    def first_run() -> None:
        list(parallel_map(probe.whoami, range(4), jobs=2))  # starts the forkserver in this thread
        started.set()
        leave.wait(60)

    first = threading.Thread(target=first_run)
    first.start()
    assert started.wait(120)

    def batches() -> Iterator[int]:
        for x in range(40):
            if x == 8:
                leave.set()  # the starting thread ends while this pool's workers run
                first.join()
            yield x

    assert list(parallel_map(probe.square_slowly, batches(), jobs=2)) == [x * x for x in range(40)]
