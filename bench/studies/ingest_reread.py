#!/usr/bin/env python3
"""What reading the stored raw HTML back costs: a normalization under another setting (every page's HTML
read and parsed again, `engine.ensure_texts`) and the raw HTML of single pages (`Store.page_source`, the
Audit page's raw-HTML view), under one or more source trees, interleaved.

    .venv/bin/python bench/studies/ingest_reread.py real.jsonl.gz --code /tmp/base --code . --repeats 3

Each source tree ingests the dump once into its own DuckDB file (not measured). Then, round after round,
each tree's file is copied and a child process under that tree normalizes it under `normalize: strip`;
this process polls /proc every 0.05 s for the CPU seconds of the child's tree (main process, forkserver,
workers) between the child's marks around `ensure_texts`. The child then reads `--sources` random
pages' raw HTML one at a time and reports its own CPU for them (one process: no workers).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402  (bench/harness.py: crawl cache, process-tree monitor, machine line)

INGEST = r"""
import sys
from neardup.config import Config
from neardup.engine import ingest_file
from neardup.store import Store
with Store(sys.argv[2]) as store:
    ingest_file(store, sys.argv[1], Config())
"""

CHILD = r"""
import json, random, sys, time
from neardup.config import Config
from neardup.engine import ensure_texts
from neardup.store import Store
store = Store(sys.argv[1])
t0 = time.monotonic()
n = ensure_texts(store, Config(normalize="strip"))
t1 = time.monotonic()
ids = random.Random(7).sample(range(1, store.count_pages() + 1), int(sys.argv[3]))
c = time.process_time()
size = sum(len(store.page_source(i)) for i in ids)
one = (time.process_time() - c) / len(ids)
store.close()
open(sys.argv[2], "w").write(json.dumps({"t0": t0, "t1": t1, "pages": n, "source_s": one, "chars": size}))
"""


def _cpu_between(samples: list[tuple[float, ...]], t0: float, t1: float) -> float:
    before = [s for s in samples if s[0] <= t0] or samples[:1]
    upto = [s for s in samples if s[0] <= t1] or samples
    return upto[-1][3] - before[-1][3]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("--code", action="append", type=Path, help="a source tree (repeatable; default this one)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sources", type=int, default=50, help="single pages read back (default 50)")
    args = ap.parse_args(argv)
    codes = args.code or [BENCH.parent]
    runs: dict[Path, list[dict[str, float]]] = {c: [] for c in codes}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="neardup-reread-") as tmp:
        dbs = {}
        for i, c in enumerate(codes):
            dbs[c] = Path(tmp) / f"base-{i}.duckdb"
            env = {**os.environ, "PYTHONPATH": str(c)}
            subprocess.run(
                [sys.executable, "-P", "-c", INGEST, str(args.input), str(dbs[c])], env=env, check=True
            )
        for _ in range(args.repeats):
            for c in codes:
                db, out = Path(tmp) / "run.duckdb", Path(tmp) / "out.json"
                shutil.copyfile(dbs[c], db)
                code, samples, killed = harness.run_monitored(
                    [
                        "env",
                        f"PYTHONPATH={c}",
                        sys.executable,
                        "-P",
                        "-c",
                        CHILD,
                        str(db),
                        str(out),
                        str(args.sources),
                    ],
                    max_rss_mb=8000,
                    interval=0.05,
                    pss_every=10**9,
                )
                if code != 0 or killed:
                    raise SystemExit(f"run under {c} failed ({code}) {killed}")
                rec = json.loads(out.read_text())
                rec["cpu"] = _cpu_between(samples, rec["t0"], rec["t1"])
                rec["rss_mb"] = max(s[1] for s in samples)
                runs[c].append(rec)
                db.unlink()
        sizes = {c: dbs[c].stat().st_size for c in codes}
    print(
        f"median of {args.repeats} runs; load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n"
    )
    print(
        "| code | pages | normalize again (strip): CPU ms/page (tree) | x first | one page's raw HTML: CPU ms "
        "| peak RSS MB | file KB/page |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    ref = None
    for c, rs in runs.items():
        pages = rs[0]["pages"]
        ms = statistics.median(r["cpu"] for r in rs) * 1000 / pages
        ref = ref or ms
        src = statistics.median(r["source_s"] for r in rs) * 1000
        print(
            f"| {c} | {pages:,} | {ms:.2f} | {ms / ref:.2f} | {src:.1f} | {max(r['rss_mb'] for r in rs):,.0f} "
            f"| {sizes[c] / pages / 1e3:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
