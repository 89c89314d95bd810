"""How often the estimate's interval holds the exact number (neardup.estimate), over seeds, on a database whose
fingerprint sets for the settings tried are stored (the exact numbers are read, not computed).

    python bench/estimate_coverage.py --db bench/data/app100k.duckdb --settings 6,7,simhash --seeds 10

The reference is the default setting; each setting is a shingle size, or "simhash" (the other method at the
default size). Prints one Markdown row per setting: the reference's and the exact near duplicates, the
estimates' median and range, the median interval width, how many seeds' intervals hold the exact number, and
the median seconds (CPU and wall) of one sample.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import commit, machine  # noqa: E402  (bench/harness.py)

from neardup import estimate  # noqa: E402
from neardup.analysis import analyze, load_fingerprints  # noqa: E402
from neardup.config import Config  # noqa: E402
from neardup.store import Store  # noqa: E402


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--settings", default="6,simhash")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1, help="sketching workers (1: the CPU seconds are all here)")
    args = ap.parse_args()
    store = Store(args.db, read_only=True)
    reference = Config()
    fp = load_fingerprints(store, reference)
    ref_numbers = analyze(fp, reference).numbers
    n, run = estimate.sample_size(len(fp.pages))
    print(f"{machine()}; commit {commit()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{len(fp.pages):,} pages; sample {n:,} in runs of {run:,}; reference: the default setting\n")
    print(
        "| setting | near, reference | near, exact | estimate median (range) | interval width median "
        "| exact inside | CPU s | wall s |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for setting in args.settings.split(","):
        config = (
            reference.with_method("simhash")
            if setting == "simhash"
            else reference.with_shingle_size(int(setting))
        )
        exact = analyze(load_fingerprints(store, config), config).numbers["near_duplicates"]
        values, widths, inside, cpu, wall = [], [], 0, [], []
        for seed in range(args.seeds):
            t, c = time.perf_counter(), cpu_s()
            counts = estimate.sample_counts(store, config, fp, seed=seed, jobs=args.jobs)
            assert counts is not None
            near = estimate.estimate_numbers(counts, config, reference, ref_numbers).numbers[
                "near_duplicates"
            ]
            cpu.append(cpu_s() - c)
            wall.append(time.perf_counter() - t)
            if near.value is None or near.low is None or near.high is None:
                continue
            values.append(near.value)
            widths.append(near.high - near.low)
            inside += near.low <= exact <= near.high
        print(
            f"| {setting} | {ref_numbers['near_duplicates']:,} | {exact:,} | "
            f"{statistics.median(values):,.0f} ({min(values):,}-{max(values):,}) | {statistics.median(widths):,.0f} | "
            f"{inside} of {args.seeds} | {statistics.median(cpu):.2f} | {statistics.median(wall):.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
