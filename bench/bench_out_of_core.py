#!/usr/bin/env python3
"""Peak memory of `neardup ingest` then `neardup report`, with the report's fingerprint step in memory and
out of core (`--memory-limit`), and whether both store the same pairs.

    PYTHONPATH=. .venv/bin/python bench/bench_out_of_core.py --pages 1000000 --workdir /tmp/ooc1m \
        --limits 100% 1GB --json /tmp/ooc1m/result.json

The crawl is the 16 KB bench crawl (`harness.ensure_crawl`, generated once under bench/data/), or `--input`.
One ingest into `<workdir>/base.duckdb`; then for each of `--limits` a copy of that file gets its
fingerprints (`neardup fingerprints --memory-limit L`; "100%" keeps the step in memory wherever it fits the
machine) and the report that reads them (`neardup report`: clusters and numbers). Each
command is watched like bench.py's engine run (`harness.run_monitored`: RSS summed over the process tree
every 0.2 s), with the peak size of the temporary files beside the database (the out-of-core files and
DuckDB's own). The pairs of each report (by the exact keys of their texts, with their scores) are compared
with the first report's (`--pairs-out`: saved, to compare runs apart). `--skip-ingest` reports on the
`base.duckdb` already there (a copy of a database made elsewhere: fingerprint sets stored in it are dropped
from each copy, so the step computes them anew); `--in-place`, with one limit, works on `base.duckdb` itself
instead of a copy (the disk of one database less; it is written). `--ingest-only` grows `base.duckdb` by
the input and measures that ingest alone (a database of several crawls, reported on later).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import anon_kb, commit, ensure_crawl, machine, process_tree, run_monitored  # noqa: E402


def watched(cmd: list[str], max_rss_mb: float, folder: Path) -> dict[str, Any]:
    """Run `cmd` under `run_monitored`; meanwhile a thread samples the bytes of the temporary files in
    `folder` (the out-of-core files and DuckDB's)."""
    t0 = time.monotonic()
    spilled = [0]
    anon = [0]
    done = threading.Event()

    def watch_disk() -> None:
        polls = 0
        while not done.wait(0.2):
            # the tree's anonymous memory (RSS less the file pages it maps: a memory-mapped spill file's
            # pages count in RSS while read, and are the kernel's to reclaim)
            children = [pid for pid in process_tree(os.getpid()) if pid != os.getpid()]
            anon[0] = max(anon[0], sum(anon_kb(pid) for pid in children))
            polls += 1
            if polls % 5:
                continue
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
        "peak_anon_mb": round(anon[0] / 1024),
        "peak_temp_files_mb": round(spilled[0] / 2**20),
        "machine_busy_s": round(run_monitored.machine_busy, 1),  # type: ignore[attr-defined]
        # (seconds, tree RSS MB) every ~2 s, to see which step holds the peak
        "rss_timeline": [(round(s[0] - samples[0][0]), round(s[1])) for s in samples[::10]],
    }


def file_mb(db: Path) -> int:
    return round(sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file()) / 2**20)


def stored_pairs(db: Path) -> dict[str, np.ndarray]:
    """The pairs of the database's fingerprint set computed last, by the exact keys of their texts, sorted."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        (key,) = con.execute(
            "SELECT fingerprint_key FROM fingerprint_sets ORDER BY computed_at DESC LIMIT 1"
        ).fetchall()[0]
        keys = con.execute(
            "SELECT exact_key FROM units WHERE fingerprint_key = ? ORDER BY unit_id", [key]
        ).fetchnumpy()["exact_key"]
        p = con.execute(
            "SELECT a, b, jaccard, containment FROM pairs WHERE fingerprint_key = ? ORDER BY a, b", [key]
        ).fetchnumpy()
    return {"a": p["a"], "b": p["b"], "key_a": keys[p["a"]], "key_b": keys[p["b"]], **p}


# What a report keeps of a crawl for the next (the URL parse, the copies' categories, the capped buckets):
# forgotten with the fingerprint sets, so the report measured computes them as a first report does.
REPORT_TABLES = (
    "url_parse_pages",
    "url_parse_keys",
    "url_parse_names",
    "suggested_categories",
    "capped_bucket_sets",
    "capped_buckets",
)


def drop_fingerprint_sets(db: Path) -> None:
    """Forget the fingerprint sets stored in `db`, so that `neardup fingerprints` computes them (their
    units and pairs are replaced when it saves), and what reports kept (`REPORT_TABLES`). DuckDB held to
    1 GB: left at its default (80% of the machine) it took 14 GB deleting a 3M-page database's tables."""
    import duckdb

    with duckdb.connect(str(db), config={"memory_limit": "1GB"}) as con:
        con.execute("DELETE FROM fingerprint_sets")
        for table in REPORT_TABLES:
            con.execute(f"DELETE FROM {table}")


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--pages", type=int, help="the bench crawl of this many pages (seed 42)")
    src.add_argument("--input", help="a crawl dump")
    ap.add_argument("--workdir", required=True, help="a folder for the databases (each the crawl's size)")
    ap.add_argument("--limits", nargs="+", default=["100%", "1GB"], help="--memory-limit of each report")
    ap.add_argument("--skip-ingest", action="store_true", help="report on <workdir>/base.duckdb as it is")
    ap.add_argument("--in-place", action="store_true", help="one limit: work on base.duckdb, not a copy")
    ap.add_argument(
        "--ingest-only", action="store_true", help="grow base.duckdb by the input, measure nothing else"
    )
    ap.add_argument("--json", help="write the result here too")
    ap.add_argument("--pairs-out", help="a folder: each report's pairs as <limit>.npz, to compare runs")
    ap.add_argument("--max-rss-mb", type=float, default=16000)
    args = ap.parse_args()
    if args.in_place and len(args.limits) != 1:
        ap.error("--in-place works on base.duckdb itself: give one limit")
    if args.ingest_only:
        args.limits = []
    return args


def measure_limit(
    args: argparse.Namespace, base: Path, limit: str
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The fingerprint step at `limit` on a copy of `base` (or `base` itself, `--in-place`), then the report
    that reads its result: their measurements, and the pairs stored."""
    work = base.parent
    folder = work if args.in_place else work / f"report-{limit.replace('%', 'pct')}"
    if not args.in_place:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    db = base if args.in_place else folder / "nd.duckdb"
    if not args.in_place:
        shutil.copyfile(base, db)
    drop_fingerprint_sets(db)
    neardup = [sys.executable, "-m", "neardup.cli"]
    step = [*neardup, "fingerprints", "--db", str(db), "--memory-limit", limit]
    report: dict[str, Any] = {"fingerprints": watched(step, args.max_rss_mb, folder)}
    pairs = stored_pairs(db)
    report["pairs"] = len(pairs["a"])
    if args.pairs_out:
        Path(args.pairs_out).mkdir(parents=True, exist_ok=True)
        np.savez(Path(args.pairs_out) / f"{limit.replace('%', 'pct')}.npz", **pairs)
    print(json.dumps({limit: {**report, "fingerprints": {**report["fingerprints"], "rss_timeline": "..."}}}))
    report["report"] = watched([*neardup, "report", "--db", str(db)], args.max_rss_mb, folder)
    report["db_mb_after_report"] = file_mb(db)
    if not args.in_place:
        shutil.rmtree(folder, ignore_errors=True)
    return report, pairs


def main() -> None:
    args = parse_args()
    crawl = Path(args.input) if args.input else ensure_crawl(args.pages)[0]
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    base = work / "base.duckdb"
    out: dict[str, Any] = {"commit": commit(), "machine": machine(), "input": str(crawl), "reports": {}}
    if not args.skip_ingest:
        ingest = [sys.executable, "-m", "neardup.cli", "ingest", str(crawl), "--db", str(base)]
        out["ingest"] = watched(ingest, args.max_rss_mb, work)
    out["db_mb_after_ingest"] = file_mb(base)
    first: dict[str, np.ndarray] | None = None
    for limit in args.limits:
        report, pairs = measure_limit(args, base, limit)
        if first is None:
            first = pairs
        else:
            report["same_pairs_as_first"] = all(np.array_equal(first[k], pairs[k]) for k in first)
        out["reports"][limit] = report
        shown = {k: {**v, "rss_timeline": "..."} if isinstance(v, dict) else v for k, v in report.items()}
        print(json.dumps({limit: shown}), flush=True)
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
