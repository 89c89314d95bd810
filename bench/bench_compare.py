"""Crawl over crawl: the cost of adding a crawl to a database and comparing it with the one before.

    python bench/bench_compare.py --base-pages 100000 --add-pages 10000 [--repeat 3] [--method minhash]
        [--baseline-pages 10000] [--code before=/tmp/old-tree --code after=.]

Builds (once, cached under --work) a database of a synthetic base crawl (the bench crawl, `bench/harness.py`)
with its fingerprints, then `--repeat` times: copies it, ingests a second crawl (another seed) as a new
source, brings the fingerprints up to date (`engine.ensure_fingerprints`) and runs `neardup compare`
(`compare.open_comparison`) of the base crawl and the added one. With `--baseline-pages`, the database also
holds a previous crawl of that many pages (a third seed, loaded after the base), and the added crawl is
also compared with that one: the last two crawls of a database that holds more.

A tree that stores each source's own analysis (`compare.source_summary`) stores the baselines' first, before
the crawl is added (stage "analyse": what an earlier comparison with them leaves in the database; a tree
without it skips the stage), so the comparisons read it. Each comparison runs twice: the first opening of
the file after the fingerprint stage also replays that stage's write-ahead log.

Each `--code NAME=DIR` runs the stages on the tree at DIR (e.g. an older commit, `git archive`d), in turn
within each repeat, on the same base database (with `--one-build`, only the comparisons: the added crawl is
ingested once per repeat, by the first tree). Each stage's numbers go to stderr as it ends. Each stage runs in a fresh process with one job (no
worker processes), so its CPU time is the process's own (DuckDB's threads included) and does not depend on
how busy the shared machine is; wall time does. Prints Markdown: median wall and CPU seconds and the peak
RSS per stage.
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

from harness import ensure_crawl  # bench/harness.py (this directory is on the path of a script run from it)

ROOT = Path(__file__).resolve().parent.parent

# One stage in a child process; prints {"seconds": wall, "cpu": CPU seconds of the stage itself}.
_STAGE = r"""
import json, resource, sys, time
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
elif stage == "analyse":  # the baselines' own analyses stored, where the tree keeps them
    from neardup import compare
    if hasattr(compare, "source_summary"):
        with Store(db) as store:
            sources = store.sources()
            for name in arg.split(","):
                compare.source_summary(store, config, compare.resolve_source(sources, name), jobs=1)
elif stage == "compare":
    baseline, current = arg.split(",")
    cmp = open_comparison(db, baseline, current, config, jobs=1)
    print(len(cmp.repeats), file=sys.stderr)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0, "rss": rss}))
"""


def run_stage(stage: str, db: Path, arg: str, method: str, code: Path = ROOT) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MB of the process) of the stage, on the tree at `code`."""
    out = subprocess.run(
        [sys.executable, "-c", _STAGE, stage, str(db), arg, method],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(code)},
        cwd=code,  # `python -c` puts the working directory first on sys.path, before PYTHONPATH
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["seconds"], got["cpu"], got["rss"]


def built(
    db: Path, files: list[Path], method: str, start: Path | None = None
) -> dict[str, tuple[float, ...]]:
    """Build `db` (unless it exists) from a copy of `start` or empty, the files ingested in turn, with its
    fingerprints; the cost of each stage."""
    if db.exists():
        return {}
    tmp = db.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    if start is not None:
        shutil.copyfile(start, tmp)
    cost = {}
    for f in files:
        cost[f"ingest {f.name}"] = run_stage("ingest", tmp, str(f), method)
    cost[f"fingerprints of {db.name}"] = run_stage("fingerprints", tmp, "", method)
    tmp.rename(db)
    return cost


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-pages", type=int, default=100_000)
    ap.add_argument("--add-pages", type=int, default=10_000)
    ap.add_argument(
        "--baseline-pages",
        type=int,
        default=0,
        help="a previous crawl of this many pages, loaded after the base, is the baseline (default: the base)",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--method", default="minhash", choices=("minhash", "simhash"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/cmpbench"))
    ap.add_argument("--label", default="", help="a name for the code measured, e.g. a commit")
    ap.add_argument(
        "--base-label", help="use the base database built under this label (default: --label's own)"
    )
    ap.add_argument(
        "--code",
        action="append",
        metavar="NAME=DIR",
        help="measure the tree at DIR under NAME (repeatable; default: this tree)",
    )
    ap.add_argument(
        "--one-build",
        action="store_true",
        help="analyse, ingest and fingerprints once per repeat, with the first --code; the others only "
        "compare (for trees whose store and fingerprint code is the same)",
    )
    args = ap.parse_args()
    codes = [tuple(c.split("=", 1)) for c in args.code or [f"{args.label or 'this tree'}={ROOT}"]]
    args.work.mkdir(parents=True, exist_ok=True)
    base_file = ensure_crawl(args.base_pages, 42)[0]
    add_file = ensure_crawl(args.add_pages, 43)[0]
    load0 = os.getloadavg()
    stem = f"base_{args.base_pages}_{args.method}_{args.base_label or args.label or 'x'}"
    base_db = args.work / f"{stem}.duckdb"
    build = built(base_db, [base_file], args.method)
    baselines = {"compare with the base crawl": base_file}
    if args.baseline_pages:
        previous = ensure_crawl(args.baseline_pages, 44)[0]
        baselines[f"compare with the previous {args.baseline_pages:,}-page crawl"] = previous
        start, base_db = base_db, args.work / f"{stem}_then_{args.baseline_pages}.duckdb"
        build |= built(base_db, [previous], args.method, start)
    stage_names = ["analyse", "ingest", "fingerprints", *[s for b in baselines for s in (b, f"{b}, again")]]
    runs: dict[str, dict[str, list[tuple[float, ...]]]] = {
        name: {stage: [] for stage in stage_names} for name, _ in codes
    }

    def measured(name: str, stage: str, got: tuple[float, ...]) -> None:
        runs[name][stage].append(got)
        print(
            f"{name} {stage}: {got[1]:.2f} CPU s, {got[0]:.2f} s, {got[2]:,.0f} MB",
            file=sys.stderr,
            flush=True,
        )

    db = base_db.with_name(f"added_{os.getpid()}.duckdb")
    for _ in range(args.repeat):
        for i, (name, code) in enumerate(codes):
            if i == 0 or not args.one_build:
                shutil.copyfile(base_db, db)
                baseline_names = ",".join(b.name for b in baselines.values())
                for stage, arg in (
                    ("analyse", baseline_names),
                    ("ingest", str(add_file)),
                    ("fingerprints", ""),
                ):
                    measured(name, stage, run_stage(stage, db, arg, args.method, Path(code)))
            for stage, baseline in baselines.items():
                arg = f"{baseline.name},{add_file.name}"
                measured(name, stage, run_stage("compare", db, arg, args.method, Path(code)))
                measured(name, f"{stage}, again", run_stage("compare", db, arg, args.method, Path(code)))
        db.unlink()
    if args.one_build:  # the first tree's ingest and fingerprints, in every column
        for name, _ in codes[1:]:
            runs[name] |= {stage: runs[codes[0][0]][stage] for stage in ("analyse", "ingest", "fingerprints")}
    load1 = os.getloadavg()
    than = f" (then a {args.baseline_pages:,}-page crawl)" if args.baseline_pages else ""
    print(
        f"### {args.base_pages:,} + {args.add_pages:,} pages{than}, {args.method} - "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} - {args.label}\n"
    )
    print(
        f"{os.cpu_count()} cores; load average {load0[0]:.2f} before, {load1[0]:.2f} after; "
        f"median of {args.repeat}; one job (no worker processes)\n"
    )
    if build:
        print(
            "base build: "
            + ", ".join(
                f"{k} {r[0]:.1f} s wall / {r[1]:.1f} s CPU / {r[2]:,.0f} MB" for k, r in build.items()
            )
            + "\n"
        )
    names = [name for name, _ in codes]
    print(
        "| stage (adding the crawl) | "
        + " | ".join(f"{n}: CPU s | {n}: wall s | {n}: peak RSS MB" for n in names)
        + " |"
    )
    print("|---|" + "---:|---:|---:|" * len(names))
    # ingest, fingerprints and the comparison with the base when its analysis is stored
    totals = {n: [0.0, 0.0] for n in names}
    total_stages = {"ingest", "fingerprints", f"{next(iter(baselines))}, again"}
    for stage in stage_names:
        cells = []
        for n in names:
            rs = runs[n][stage]
            c, w = statistics.median(r[1] for r in rs), statistics.median(r[0] for r in rs)
            if stage in total_stages:
                totals[n][0] += c
                totals[n][1] += w
            cells.append(f"{c:.2f} | {w:.2f} | {statistics.median(r[2] for r in rs):,.0f}")
        print(f"| {stage} | " + " | ".join(cells) + " |")
    cells = [f"**{c:.2f}** | **{w:.2f}** |" for c, w in totals.values()]
    print("| **ingest + fingerprints + compare with the base, again** | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
