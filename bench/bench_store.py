"""Time what an app page reads from the store: a held store against an on-demand one (the app's).

    python bench/bench_store.py --db bench/data/app.duckdb [--input crawl.jsonl.gz]

An app page reads a few small things from the store on every run (`count_pages`, `labels`, `sources`);
the rest comes from its in-memory caches. The on-demand store opens the file read-only for a read and
keeps it open `LINGER_S` after: a page's reads share one open ("warm"), and the first read after an idle
pause opens the file again ("cold"). Prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from neardup import engine
from neardup.config import Config
from neardup.store import Store


def page_reads(store: Store) -> None:
    store.count_pages()
    store.labels()
    store.sources()


def measure(stores: dict[str, tuple[Store, bool]], rounds: int = 41) -> dict[str, tuple[float, float]]:
    """Median wall and process-CPU milliseconds of `page_reads` per store, the stores interleaved in each
    round so that a busy machine slows them alike. (store, idle): idle closes the file before the reads."""
    wall: dict[str, list[float]] = {name: [] for name in stores}
    cpu: dict[str, list[float]] = {name: [] for name in stores}
    for _ in range(rounds):
        for name, (store, idle) in stores.items():
            if idle:
                store.close()  # what the linger timer does after an idle pause
            t, c = time.perf_counter(), time.process_time()
            page_reads(store)
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    return {
        name: (1000 * statistics.median(wall[name]), 1000 * statistics.median(cpu[name])) for name in stores
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--input")
    args = ap.parse_args()
    if args.input:
        Path(args.db).unlink(missing_ok=True)
        with Store(args.db, bulk=True) as store:
            engine.ingest_file(store, args.input, Config())
    held = Store(args.db, read_only=True)
    print(f"{held.count_pages():,} pages, {Path(args.db).stat().st_size / 1e6:.0f} MB\n")
    warm = Store(args.db, on_demand=True)
    results = measure(
        {
            "held (open for its whole life)": (held, False),
            "on demand, warm (within the linger)": (warm, False),
        }
    )
    held.close()
    results |= measure({"on demand, cold (opens the file)": (warm, True)})
    warm.close()
    print("| store | count_pages + labels + sources: median wall ms | median CPU ms |")
    print("|---|---:|---:|")
    for name, (wall_ms, cpu_ms) in results.items():
        print(f"| {name} | {wall_ms:.2f} | {cpu_ms:.2f} |")


if __name__ == "__main__":
    main()
