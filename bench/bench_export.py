#!/usr/bin/env python3
"""Memory of `neardup export --kept` (JSONL.gz and Parquet) and `--removed`: the peak RSS each writer adds
to the process that holds the analysis, at a crawl size; run it at two sizes to see it stay flat.

    .venv/bin/python bench/bench_export.py --input bench/data/crawl_20000_s42.jsonl.gz
    .venv/bin/python bench/bench_export.py --input sample_data/crawl.jsonl.gz --db existing.duckdb

The peak is the kernel's high-water mark (VmHWM), reset before each writer (/proc/self/clear_refs), so
each figure is that writer's own peak minus the RSS it started from. SimHash by default (the cheaper
setting to compute; the writers do not depend on the method).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neardup import engine  # noqa: E402
from neardup.analysis import analyze, load_fingerprints  # noqa: E402
from neardup.config import Config  # noqa: E402
from neardup.export import write_kept, write_removed_csv  # noqa: E402
from neardup.store import Store  # noqa: E402


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", required=True, help="crawl dump to ingest (skipped with an existing --db)")
    ap.add_argument("--db", help="an existing database of that dump (default: ingest into a temporary one)")
    ap.add_argument("--method", default="simhash", choices=["simhash", "minhash"])
    args = ap.parse_args()
    config = Config().with_method(args.method)
    with tempfile.TemporaryDirectory(prefix="bench_export_") as tmp:
        db = args.db or str(Path(tmp) / "bench.duckdb")
        with Store(db, bulk=not args.db) as store:
            if not args.db:
                engine.ingest_file(store, args.input, config)
        with Store(db) as store:
            fp = load_fingerprints(store, config)
            analysis = analyze(fp, config)
            n = analysis.numbers
            print(
                f"{n['total_pages']:,} pages, {n['unique_pages']:,} kept, {n['redundant_pages']:,} removed; "
                f"RSS with the analysis loaded: {_status_kb('VmRSS') / 1024:.0f} MB"
            )
            for name, write in [
                ("kept.jsonl.gz", lambda p: write_kept(store, analysis, p)),
                ("kept.parquet", lambda p: write_kept(store, analysis, p)),
                ("removed.csv", lambda p: write_removed_csv(store, analysis, fp, p)),
            ]:
                path = Path(tmp) / name
                start_kb = _status_kb("VmRSS")
                _reset_peak()
                t0 = time.perf_counter()
                rows = write(path)
                seconds = time.perf_counter() - t0
                added_mb = (_status_kb("VmHWM") - start_kb) / 1024
                print(
                    f"  {name:<14} {rows:>9,} rows  {path.stat().st_size / 1e6:>8.1f} MB written  "
                    f"peak RSS +{added_mb:>6.0f} MB  {seconds:6.1f} s"
                )


if __name__ == "__main__":
    main()
