"""Crawl over crawl: the cost of adding a crawl to a database and comparing it with the one before.

    python bench/bench_compare.py --base-pages 100000 --add-pages 10000 [--repeat 3] [--method minhash]

Builds (once, cached under --work) a database of a synthetic base crawl (`/work/shared/tools/make_crawl.py`)
with its fingerprints, then `--repeat` times: copies it, ingests a second crawl (another seed) as a new
source, brings the fingerprints up to date (`engine.ensure_fingerprints`) and runs `neardup compare`
(`compare.open_comparison`) of the two sources. Each stage runs in a fresh process with one job (no
worker processes), so its CPU time is the process's own (DuckDB's threads included) and does not depend on
how busy the shared machine is; wall time does. Prints Markdown: median wall and CPU seconds per stage.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAKE_CRAWL = Path("/work/shared/tools/make_crawl.py")

# One stage in a child process; prints {"seconds": wall, "cpu": CPU seconds of the stage itself}.
_STAGE = r"""
import json, sys, time
from neardup import engine
from neardup.compare import open_comparison
from neardup.config import Config
from neardup.store import Store
stage, db, arg, method = sys.argv[1:5]
config = Config(method=method)
t0, c0 = time.perf_counter(), time.process_time()
if stage == "ingest":
    with Store(db, bulk=True) as store:
        engine.ingest_file(store, arg, config, jobs=1)
elif stage == "fingerprints":
    with Store(db) as store:
        engine.ensure_fingerprints(store, config, jobs=1)
elif stage == "compare":
    baseline, current = arg.split(",")
    cmp = open_comparison(db, baseline, current, config, jobs=1)
    print(len(cmp.repeats), file=sys.stderr)
print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""


def run_stage(stage: str, db: Path, arg: str, method: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of the stage."""
    out = subprocess.run(
        [sys.executable, "-c", _STAGE, stage, str(db), arg, method],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["seconds"], got["cpu"]


def crawl(work: Path, pages: int, seed: int) -> Path:
    out = work / f"crawl_{pages}_s{seed}.jsonl.gz"
    if not out.exists():
        tmp = out.with_suffix(".tmp")
        subprocess.run(
            [sys.executable, str(MAKE_CRAWL), "--pages", str(pages), "--seed", str(seed), "--out", str(tmp)],
            check=True,
        )
        tmp.rename(out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-pages", type=int, default=100_000)
    ap.add_argument("--add-pages", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--method", default="minhash", choices=("minhash", "simhash"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/cmpbench"))
    ap.add_argument("--label", default="", help="a name for the code measured, e.g. a commit")
    ap.add_argument(
        "--base-label", help="use the base database built under this label (default: --label's own)"
    )
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    base_file = crawl(args.work, args.base_pages, 42)
    add_file = crawl(args.work, args.add_pages, 43)
    load0 = os.getloadavg()
    base_db = (
        args.work / f"base_{args.base_pages}_{args.method}_{args.base_label or args.label or 'x'}.duckdb"
    )
    build: dict[str, tuple[float, float]] = {}
    if not base_db.exists():
        tmp = base_db.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        build["ingest"] = run_stage("ingest", tmp, str(base_file), args.method)
        build["fingerprints"] = run_stage("fingerprints", tmp, "", args.method)
        tmp.rename(base_db)
    runs: dict[str, list[tuple[float, float]]] = {"ingest": [], "fingerprints": [], "compare": []}
    for _ in range(args.repeat):
        db = base_db.with_name(f"added_{os.getpid()}.duckdb")
        shutil.copyfile(base_db, db)
        runs["ingest"].append(run_stage("ingest", db, str(add_file), args.method))
        runs["fingerprints"].append(run_stage("fingerprints", db, "", args.method))
        runs["compare"].append(run_stage("compare", db, f"{base_file.name},{add_file.name}", args.method))
        db.unlink()
    load1 = os.getloadavg()
    print(
        f"### {args.base_pages:,} + {args.add_pages:,} pages, {args.method} - "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} - {args.label}\n"
    )
    print(
        f"{os.cpu_count()} cores; load average {load0[0]:.2f} before, {load1[0]:.2f} after; "
        f"median of {args.repeat}; one job (no worker processes)\n"
    )
    if build:
        print(
            "base build: "
            + ", ".join(f"{k} {w:.1f} s wall / {c:.1f} s CPU" for k, (w, c) in build.items())
            + "\n"
        )
    print("| stage (adding the crawl) | wall s | CPU s |")
    print("|---|---:|---:|")
    total_w = total_c = 0.0
    for stage, rs in runs.items():
        w = statistics.median(r[0] for r in rs)
        c = statistics.median(r[1] for r in rs)
        total_w, total_c = total_w + w, total_c + c
        print(f"| {stage} | {w:.2f} | {c:.2f} |")
    print(f"| **all three** | **{total_w:.2f}** | **{total_c:.2f}** |")


if __name__ == "__main__":
    main()
