#!/usr/bin/env python3
"""Peak memory of `neardup ingest` then `neardup report` on one crawl, each watched like bench.py's engine run
(`harness.run_monitored`: RSS summed over the process tree every 0.2 s), with the report's fingerprint step
in memory or out of core (`--memory-limit`).

    PYTHONPATH=. .venv/bin/python bench/bench_out_of_core.py --input bench/data/crawl_1000000_s42.jsonl.gz \
        --db /tmp/ooc/1m.duckdb --memory-limit 1GB --json /tmp/ooc/1m.json

`--skip-ingest` reports on a database already ingested (a copy: the report writes its fingerprint set).
The pairs of the run are written to `--pairs-out` (a, b, jaccard, containment as .npz) to compare two runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import commit, machine, run_monitored  # noqa: E402


def watched(cmd: list[str], max_rss_mb: float, folder: Path) -> dict[str, Any]:
    """Run `cmd` under `run_monitored`; meanwhile a thread samples the bytes of the out-of-core files and
    DuckDB's temporary files in `folder` (the database's)."""
    t0 = time.monotonic()
    spilled = [0]
    done = threading.Event()

    def watch_disk() -> None:
        while not done.wait(1.0):
            total = 0
            for p in [*folder.glob("neardup-spill-*/*"), *folder.glob("*.tmp/*")]:
                with contextlib.suppress(OSError):
                    total += p.stat().st_size
            spilled[0] = max(spilled[0], total)

    watcher = threading.Thread(target=watch_disk, daemon=True)
    watcher.start()
    rc, samples, killed = run_monitored(cmd, max_rss_mb=max_rss_mb)
    done.set()
    watcher.join()
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {rc} {killed}")
    return {
        "wall_s": round(time.monotonic() - t0, 1),
        "cpu_s": round(samples[-1][3], 1),
        "peak_rss_mb": round(max(s[1] for s in samples)),
        "peak_single_mb": round(max(s[5] for s in samples)),
        "peak_temp_files_mb": round(spilled[0] / 2**20),
        "machine_busy_s": round(run_monitored.machine_busy, 1),  # type: ignore[attr-defined]
        # (seconds, tree RSS MB) every ~2 s, to see which step holds the peak
        "rss_timeline": [(round(s[0] - samples[0][0]), round(s[1])) for s in samples[::10]],
    }


def disk_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file()) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--memory-limit", help="passed to `neardup report` (default: the in-memory path)")
    ap.add_argument("--skip-ingest", action="store_true")
    ap.add_argument("--skip-report", action="store_true", help="ingest only (copy the file for each report)")
    ap.add_argument("--pairs-out")
    ap.add_argument("--json")
    ap.add_argument("--max-rss-mb", type=float, default=16000)
    args = ap.parse_args()
    db = Path(args.db)
    neardup = [sys.executable, "-m", "neardup.cli"]
    out: dict[str, object] = {"commit": commit(), "machine": machine(), "input": args.input}
    if not args.skip_ingest:
        out["ingest"] = watched([*neardup, "ingest", args.input, "--db", str(db)], args.max_rss_mb, db.parent)
        out["db_mb_after_ingest"] = round(disk_mb(db))
    if args.skip_report:
        print(json.dumps(out, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1))
        return
    report = [*neardup, "report", "--db", str(db)]
    if args.memory_limit:
        report += ["--memory-limit", args.memory_limit]
    out["report"] = watched(report, args.max_rss_mb, db.parent)
    out["db_mb_after_report"] = round(disk_mb(db))
    if args.pairs_out:
        import duckdb

        with duckdb.connect(str(db), read_only=True) as con:
            a, b, jac, cont = (
                con.execute("SELECT a, b, jaccard, containment FROM pairs ORDER BY fingerprint_key, a, b")
                .fetchnumpy()
                .values()
            )
            units = con.execute("SELECT exact_key FROM units ORDER BY fingerprint_key, unit_id").fetchnumpy()
        ka, kb = units["exact_key"][a], units["exact_key"][b]
        np.savez(args.pairs_out, a=a, b=b, jaccard=jac, containment=cont, key_a=ka, key_b=kb)
        out["pairs"] = len(a)
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    shutil.rmtree(str(db) + ".tmp", ignore_errors=True)


if __name__ == "__main__":
    main()
