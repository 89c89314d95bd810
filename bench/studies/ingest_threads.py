#!/usr/bin/env python3
"""Where the main process of `engine.ingest_file` spends its CPU, thread by thread, and (optionally) a
cProfile of its main thread.

    .venv/bin/python bench/studies/ingest_threads.py real.jsonl.gz [--profile main.prof]

Runs one ingest into a fresh DuckDB file in this process, with the engine's default parallelism. A
sampling thread reads /proc/self/task/<tid>/stat every 0.1 s and names each thread by the Python thread
that has its native id (the main thread, the writer, the prefetch reader, the pool's threads); threads
no Python thread owns are DuckDB's own (its checkpoint and compression workers). Printed: CPU seconds
and ms/page per thread name, the total, and the import time before the ingest.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import re
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

t_import = time.process_time()
from neardup.config import Config  # noqa: E402
from neardup.engine import ingest_file  # noqa: E402
from neardup.store import Store  # noqa: E402

t_import = time.process_time() - t_import
TICK = os.sysconf("SC_CLK_TCK")


def _task_cpu(tid: int) -> float | None:
    try:
        stat = Path(f"/proc/self/task/{tid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("--profile", type=Path, help="write a cProfile of the main thread here")
    args = ap.parse_args(argv)
    names: dict[int, str] = {}
    seen: dict[int, float] = {}
    stop = threading.Event()

    def sample() -> None:
        while True:
            for t in threading.enumerate():
                if t.native_id is not None:
                    names.setdefault(t.native_id, re.sub(r"[-_]\d+$", "", t.name))
            for entry in os.listdir("/proc/self/task"):
                cpu = _task_cpu(int(entry))
                if cpu is not None:
                    seen[int(entry)] = max(cpu, seen.get(int(entry), 0.0))
            if stop.wait(0.1):
                return

    sampler = threading.Thread(target=sample, name="sampler", daemon=True)
    with tempfile.TemporaryDirectory(prefix="neardup-threads-") as tmp:
        store = Store(Path(tmp) / "t.duckdb")
        main_tid = threading.main_thread().native_id or 0
        before = _task_cpu(main_tid) or 0.0  # the imports and the store's open
        sampler.start()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        prof = cProfile.Profile() if args.profile else None
        if prof:
            prof.enable()
        summary = ingest_file(store, args.input, Config())
        store.close()
        if prof:
            prof.disable()
            prof.dump_stats(args.profile)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        stop.set()
        sampler.join()
    by_name: dict[str, float] = defaultdict(float)
    for tid, s in seen.items():
        by_name[names.get(tid, "DuckDB (threads of its own)")] += s - (before if tid == main_tid else 0.0)
    pages = summary.loaded
    print(
        f"{pages:,} pages; imports {t_import:.2f} CPU-s; main process {cpu:.2f} CPU-s over {wall:.1f} s wall\n"
    )
    print("| thread | CPU s | CPU ms/page |")
    print("|---|---:|---:|")
    for name, s in sorted(by_name.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {s:.2f} | {s * 1000 / pages:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
