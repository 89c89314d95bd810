#!/usr/bin/env python3
"""`neardup spark NEW --previous OUT1` against a full run over old + new, on a synthetic crawl
(`make_sample.py --profile bench`) split in two: the first PAGES - NEW lines, then the last NEW.

    .venv/bin/python bench/bench_spark_add.py --pages 110000 --new 10000 --method simhash

Each run is one CLI command in a child process (bench_spark.monitored: CPU-seconds and peak RSS of the
whole process tree, JVM and Python workers). Prints the three runs (earlier, add, full), the CPU ratio
add / full, and checks the add's numbers equal the full run's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402
from bench_spark import NEARDUP, monitored, plain_copy  # noqa: E402


def split_crawl(plain: Path, n_new: int, work: Path) -> tuple[Path, Path]:
    lines = plain.read_bytes().splitlines(keepends=True)
    old, new = work / "old.jsonl", work / "new.jsonl"
    old.write_bytes(b"".join(lines[:-n_new]))
    new.write_bytes(b"".join(lines[-n_new:]))
    return old, new


def spark(inputs: list[Path], out: Path, args: argparse.Namespace, *extra: str) -> dict[str, Any]:
    cmd = [*NEARDUP, "spark", *map(str, inputs), "--out", str(out), "--method", args.method, *extra]
    cmd += ["--master", args.master, "--conf", f"spark.driver.memory={args.driver_memory}"]
    cmd += ["--conf", "spark.ui.showConsoleProgress=false"]
    print(" ".join(cmd[2:]), file=sys.stderr, flush=True)
    res = monitored(cmd, args.max_rss_mb)
    if res["exit"] == 0:
        m = json.loads((out / "_MANIFEST.json").read_text())
        res["manifest"] = {k: m.get(k) for k in ("counts", "numbers", "timings_s", "previous")}
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=22_000, help="old + new pages")
    ap.add_argument("--new", type=int, default=2_000, help="the pages added")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--method", choices=["simhash", "minhash"], default="simhash")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--max-rss-mb", type=float, default=14_000)
    ap.add_argument("--json", help="also write the raw measurements here")
    args = ap.parse_args(argv)

    gz, _truth = harness.ensure_crawl(args.pages, args.seed)
    work = Path(tempfile.mkdtemp(prefix="bench-spark-add-", dir=harness.DATA))
    try:
        old, new = split_crawl(plain_copy(gz), args.new, work)
        runs = {
            "earlier": spark([old], work / "first", args),
            "add": spark([new], work / "added", args, "--previous", str(work / "first")),
            "full": spark([old, new], work / "full", args),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, r in runs.items():
        t = (r.get("manifest") or {}).get("timings_s", {})
        stages = ", ".join(f"{k} {v:.0f} s" for k, v in t.items() if k != "total")
        print(f"| {name} | {r['seconds']} | {r['cpu_s']} | {r['peak_rss_mb']:.0f} | {stages} |")
    add, full = runs["add"], runs["full"]
    same = (add.get("manifest") or {}).get("numbers") == (full.get("manifest") or {}).get("numbers")
    print(
        f"add / full: CPU {add['cpu_s'] / max(full['cpu_s'], 1e-9):.2f}, wall "
        f"{add['seconds'] / max(full['seconds'], 1e-9):.2f}; same numbers: {same}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "runs": runs}, indent=2, default=str))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
