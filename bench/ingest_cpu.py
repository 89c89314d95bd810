#!/usr/bin/env python3
"""CPU per page of `engine.ingest_file` on one dump, main process and workers apart, median of runs.

    .venv/bin/python bench/ingest_cpu.py real.jsonl.gz real.warc.gz --repeats 3

Each run ingests the dump into a fresh DuckDB file in a child process, with the engine's default
parallelism; this process polls /proc every 0.05 s for the CPU seconds of every process of the child's
tree (main process, forkserver, pool workers) and its RSS. The files given are run in turn, round after
round, so that the shared box's drift hits each alike. Reported per file: pages, MB of HTML, CPU ms per
page (tree and main process), MB of HTML per CPU-second, wall seconds, peak tree RSS, and what two
whole cores would give (pages/s and MB/s of HTML at 2 CPU-s per second). The first row is the
reference of the ratio column. With --code DIR (repeatable) each dump is run under each source tree
(e.g. `git archive` of the commit before a change, with the compiled .so files), interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402  (bench/harness.py: crawl cache, process-tree monitor, machine line)

# The CPU counted is the tree's up to `end` (the ingest and the store's close); what the child reads after
# it (the HTML's size, which inflates the column under schema 3) is not. Its query reads either schema.
CHILD = r"""
import json, os, sys, time
from neardup.config import Config
from neardup.engine import ingest_file
from neardup.store import Store
store = Store(sys.argv[2])
t0 = time.perf_counter()
s = ingest_file(store, sys.argv[1], Config())
store.close()
wall, end = time.perf_counter() - t0, time.monotonic()
import duckdb
with duckdb.connect(sys.argv[2], read_only=True) as con:
    cols = {c for (c,) in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'pages'").fetchall()}
    blocks = " + coalesce(sum(html_bytes), 0)" if "html_bytes" in cols else ""
    n, html = con.execute(f"SELECT count(*), coalesce(sum(strlen(html)), 0){blocks} FROM pages").fetchone()
open(sys.argv[3], "w").write(json.dumps({"pages": n, "html_bytes": int(html or 0), "loaded": s.loaded, "errors": s.errors,
                  "wall": wall, "end": end, "file_bytes": os.path.getsize(sys.argv[2])}))
"""


def run_once(path: Path, workdir: Path, code: Path) -> dict[str, float]:
    db = workdir / f"bench-{time.monotonic_ns()}.duckdb"
    out = workdir / "out.json"
    code, samples, killed = harness.run_monitored(
        ["env", f"PYTHONPATH={code}", sys.executable, "-P", "-c", CHILD, str(path), str(db), str(out)],
        max_rss_mb=8000,
        interval=0.05,
        pss_every=10**9,
    )
    if code != 0 or killed:
        raise SystemExit(f"ingest of {path} failed ({code}) {killed}")
    rec = json.loads(out.read_text().strip().splitlines()[-1])
    db.unlink(missing_ok=True)
    counted = [s for s in samples if s[0] <= rec["end"]] or samples
    rec["cpu"] = counted[-1][3]
    rec["main_cpu"] = max(s[6] for s in counted)
    rec["rss_mb"] = max(s[1] for s in samples)
    return rec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", type=Path)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--code",
        action="append",
        type=Path,
        help="run each dump with the neardup of this source tree too (e.g. a `git archive` of another "
        "commit, with its compiled .so files); repeatable. Default: this tree",
    )
    args = ap.parse_args(argv)
    codes = args.code or [BENCH.parent]
    runs: dict[tuple[Path, Path], list[dict[str, float]]] = {(c, p): [] for p in args.inputs for c in codes}
    busy0 = harness.machine_busy_s()
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="neardup-ingest-cpu-") as tmp:
        for _ in range(args.repeats):
            for c, p in runs:
                runs[c, p].append(run_once(p, Path(tmp), c))
    others = (harness.machine_busy_s() - busy0 - sum(r["cpu"] for rs in runs.values() for r in rs)) / (
        time.monotonic() - t0
    )
    print(
        f"commit {harness.commit()}, median of {args.repeats} runs; other processes used "
        f"{others:.2f} cores meanwhile; load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n"
    )
    print(
        "| code | dump | pages | MB of HTML | CPU ms/page (tree) | main process | MB of HTML per CPU-s | x first "
        "| wall s | 2 cores: pages/s | 2 cores: MB/s | peak RSS MB | file KB/page |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ref = None
    for (c, p), rs in runs.items():
        pages = rs[0]["pages"]
        mb = rs[0]["html_bytes"] / 1e6
        cpu = statistics.median(r["cpu"] for r in rs)
        main_cpu = statistics.median(r["main_cpu"] for r in rs)
        ms = cpu * 1000 / pages
        ref = ref or ms
        print(
            f"| {c.name} | {p.name} | {pages:,} | {mb:,.0f} | {ms:.2f} | {main_cpu * 1000 / pages:.2f} | {mb / cpu:.0f} "
            f"| {ms / ref:.2f} | {statistics.median(r['wall'] for r in rs):.1f} | {2 * pages / cpu:,.0f} "
            f"| {2 * mb / cpu:.0f} | {max(r['rss_mb'] for r in rs):,.0f} | {rs[0]['file_bytes'] / pages / 1e3:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
