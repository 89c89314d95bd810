#!/usr/bin/env python3
"""`neardup spark` on local[N] against the local engine, on a synthetic crawl (`make_sample.py --profile bench`).

    .venv/bin/python bench/bench_spark.py --pages 20000                 # both methods, Spark and local
    .venv/bin/python bench/bench_spark.py --pages 100000 --record       # ... and append to bench/RESULTS_SPARK.md
    .venv/bin/python bench/bench_spark.py --pages 100000 --no-local     # Spark only

What it measures, per method, each as one CLI command in a child process:
  - Spark: `neardup spark CRAWL --out DIR --method M --master local[2]` (ingest -> clusters, Parquet out).
    Spark reads an uncompressed copy of the crawl (cached beside it): a .gz file is one split, i.e.
    one core; `--gz` reads the .gz as is. Wall time includes the JVM start.
  - local: `neardup ingest` once (shared by both methods), then `neardup report --method M`.
  - memory: RSS summed over the child's whole process tree (JVM + Python workers, or the engine and its
    pool), polled every 0.2 s (bench.py's monitor); a tree above --max-rss-mb is killed.
  - Spark's own accounting from its event log: shuffle bytes written, bytes spilled, output bytes, and
    the written Parquet per page, which is what a cluster-size estimate needs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "RESULTS_SPARK.md"
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402  (bench/harness.py: crawl cache, process-tree monitor, machine line)

NEARDUP = [sys.executable, "-m", "neardup.cli"]
MB = 1024 * 1024


def plain_copy(gz: Path) -> Path:
    """An uncompressed copy of the crawl (splittable input for Spark), cached beside it."""
    out = gz.with_suffix("")
    if not out.is_file():
        part = out.with_name("partial-" + out.name)
        with gzip.open(gz, "rb") as src, open(part, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
        part.rename(out)
    return out


def monitored(cmd: list[str], max_rss_mb: float) -> dict[str, Any]:
    t0 = time.monotonic()
    code, samples, killed = harness.run_monitored(cmd, max_rss_mb=max_rss_mb)
    wall = time.monotonic() - t0
    return {
        "exit": code,
        "killed": killed,
        "seconds": round(wall, 1),
        "peak_rss_mb": round(max(s[1] for s in samples), 0) if samples else 0.0,
        "peak_pss_mb": round(max(s[2] for s in samples), 0) if samples else 0.0,
        "cpu_s": round(samples[-1][3], 1) if samples else 0.0,
    }


def event_totals(events_dir: Path) -> dict[str, int]:
    """Sums over all tasks of the Spark event log(s) in `events_dir`."""
    tot = {
        "shuffle_write": 0,
        "shuffle_read": 0,
        "memory_spill": 0,
        "disk_spill": 0,
        "input": 0,
        "output": 0,
        "tasks": 0,
        "peak_execution_memory_max": 0,
    }
    for log in (p for p in events_dir.rglob("*") if p.is_file()):  # Spark 4: a directory per application
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                if '"SparkListenerTaskEnd"' not in line:
                    continue
                m = json.loads(line).get("Task Metrics") or {}
                tot["tasks"] += 1
                tot["shuffle_write"] += m.get("Shuffle Write Metrics", {}).get("Shuffle Bytes Written", 0)
                r = m.get("Shuffle Read Metrics", {})
                tot["shuffle_read"] += r.get("Remote Bytes Read", 0) + r.get("Local Bytes Read", 0)
                tot["memory_spill"] += m.get("Memory Bytes Spilled", 0)
                tot["disk_spill"] += m.get("Disk Bytes Spilled", 0)
                tot["input"] += m.get("Input Metrics", {}).get("Bytes Read", 0)
                tot["output"] += m.get("Output Metrics", {}).get("Bytes Written", 0)
                tot["peak_execution_memory_max"] = max(
                    tot["peak_execution_memory_max"], m.get("Peak Execution Memory", 0)
                )
    return tot


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.parquet"))


def run_spark(crawl: Path, method: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    out, events = work / f"spark_{method}", work / f"events_{method}"
    events.mkdir()
    cmd = [
        *NEARDUP,
        "spark",
        str(crawl),
        "--out",
        str(out),
        "--method",
        method,
        "--master",
        args.master,
        "--conf",
        f"spark.driver.memory={args.driver_memory}",
        "--conf",
        "spark.ui.showConsoleProgress=false",
        "--conf",
        "spark.eventLog.enabled=true",
        "--conf",
        f"spark.eventLog.dir=file://{events}",
        "--conf",
        "spark.eventLog.compress=false",
        "--conf",
        f"spark.local.dir={work}/spark-local",
    ]
    for kv in args.conf or []:
        cmd += ["--conf", kv]
    print(f"spark {method}: {' '.join(cmd[2:])}", file=sys.stderr, flush=True)
    res = monitored(cmd, args.max_rss_mb)
    if res["exit"] == 0:
        m = json.loads((out / "_MANIFEST.json").read_text())
        res["manifest"] = {k: m[k] for k in ("counts", "numbers", "candidate_stats", "timings_s", "spark")}
        res["parquet_bytes"] = {
            name: dir_bytes(out / name) for name in ("pages", "units", "pairs", "clusters")
        }
    res["events"] = event_totals(events)
    shutil.rmtree(out, ignore_errors=True)
    return res


def run_local(gz: Path, methods: list[str], args: argparse.Namespace, work: Path) -> dict[str, Any]:
    db = work / "local.duckdb"
    print(f"local ingest: {gz}", file=sys.stderr, flush=True)
    res: dict[str, Any] = {
        "ingest": monitored([*NEARDUP, "ingest", str(gz), "--db", str(db)], args.max_rss_mb)
    }
    for method in methods:
        print(f"local report {method}", file=sys.stderr, flush=True)
        report = shlex.join([*NEARDUP, "report", "--db", str(db), "--method", method, "--json"])
        res[method] = monitored(["sh", "-c", f"{report} > {work}/report_{method}.json"], args.max_rss_mb)
    res["db_mb"] = round(db.stat().st_size / MB) if db.exists() else None
    return res


def render(info: dict[str, Any]) -> str:
    pages = info["pages"]
    lines = [
        f"### {pages:,} pages - {info['when']} - Spark {info.get('spark_version', '?')} on {info['master']}",
        "",
        f"machine: {info['machine']}; driver memory {info['driver_memory']}; Spark input: `{info['spark_input']}` "
        f"({info['spark_input_mb']:,} MB); local input: `{info['gz']}`",
        "",
        "| run | seconds | pages/s | CPU s (tree) | peak RSS MB (tree) | result |",
        "|---|---:|---:|---:|---:|---|",
    ]

    def row(label: str, r: dict[str, Any] | None, note: str = "") -> None:
        if not r:
            return
        ok = "ok" if r["exit"] == 0 else ("killed (memory guard)" if r["killed"] else f"exit {r['exit']}")
        rate = f"{pages / r['seconds']:,.0f}" if r["exit"] == 0 else "-"
        lines.append(
            f"| {label} | {r['seconds']:,.1f} | {rate} | {r['cpu_s']:,.0f} | {r['peak_rss_mb']:,.0f} | "
            f"{ok}{'; ' + note if note else ''} |"
        )

    loc = info.get("local") or {}
    for method in info["methods"]:
        s = info["spark"].get(method)
        note = ""
        if s and s.get("manifest"):
            m = s["manifest"]
            t = m["timings_s"]
            note = ", ".join(f"{k} {v:.0f} s" for k, v in t.items() if k != "total")
        row(f"**Spark {method}** (ingest -> clusters, Parquet)", s, note)
        if loc.get(method):
            both = {
                "exit": max(loc["ingest"]["exit"], loc[method]["exit"]),
                "killed": loc["ingest"]["killed"] or loc[method]["killed"],
                "seconds": round(loc["ingest"]["seconds"] + loc[method]["seconds"], 1),
                "cpu_s": loc["ingest"]["cpu_s"] + loc[method]["cpu_s"],
                "peak_rss_mb": max(loc["ingest"]["peak_rss_mb"], loc[method]["peak_rss_mb"]),
            }
            row(
                f"**local {method}** (ingest + report)",
                both,
                f"ingest {loc['ingest']['seconds']:.0f} s, report {loc[method]['seconds']:.0f} s",
            )
    lines.append("")
    for method in info["methods"]:
        s = info["spark"].get(method)
        if not s or not s.get("manifest"):
            continue
        m, e, pb = s["manifest"], s["events"], s["parquet_bytes"]
        c, n, st = m["counts"], m["numbers"], m["candidate_stats"]
        lines.append(
            f"Spark {method}: {c['pages']:,} pages, {c['units']:,} units, {st['candidates']:,} candidates -> "
            f"{c['pairs']:,} stored pairs (largest bucket {st['largest_bucket']}, capped {st['capped_buckets']}), "
            f"{n['unique_pages']:,} clusters, {n['redundant_pct']}% redundant; CC rounds {m['spark']['cc_rounds']}. "
            f"Shuffle written {e['shuffle_write'] / MB:,.0f} MB ({e['shuffle_write'] / pages:,.0f} B/page), "
            f"spilled {e['disk_spill'] / MB:,.0f} MB to disk, {e['tasks']:,} tasks. "
            f"Parquet: pages {pb['pages'] / pages:,.0f} B/page, units {pb['units'] / max(c['units'], 1):,.0f} B/unit, "
            f"pairs {pb['pairs'] / max(c['pairs'], 1):,.0f} B/pair, clusters {pb['clusters'] / pages:,.0f} B/page."
        )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--methods", nargs="+", default=["simhash", "minhash"], choices=["simhash", "minhash"])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument(
        "--driver-memory", default="6g", help="local mode: the one JVM's heap (default %(default)s)"
    )
    ap.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark setting (repeatable)")
    ap.add_argument(
        "--gz", action="store_true", help="let Spark read the .gz (one split) instead of a plain copy"
    )
    ap.add_argument("--no-local", action="store_true", help="skip the local engine")
    ap.add_argument(
        "--max-rss-mb", type=float, default=14_000, help="kill a run whose process tree passes this"
    )
    ap.add_argument("--record", action="store_true", help=f"append the table to {RESULTS.name}")
    ap.add_argument("--json", help="also write the raw measurements here")
    args = ap.parse_args(argv)

    gz, _truth = harness.ensure_crawl(args.pages, args.seed)
    spark_input = gz if args.gz else plain_copy(gz)
    work = Path(tempfile.mkdtemp(prefix="bench-spark-", dir=harness.DATA))
    info: dict[str, Any] = {
        "pages": args.pages,
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "master": args.master,
        "driver_memory": args.driver_memory,
        "machine": harness.machine(),
        "methods": args.methods,
        "spark_input": spark_input.name,
        "spark_input_mb": round(spark_input.stat().st_size / MB),
        "gz": gz.name,
        "spark": {},
    }
    try:
        for method in args.methods:
            info["spark"][method] = run_spark(spark_input, method, args, work)
            if info["spark"][method].get("manifest"):
                info["spark_version"] = info["spark"][method]["manifest"]["spark"]["version"]
        if not args.no_local:
            info["local"] = run_local(gz, args.methods, args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    md = render(info)
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps(info, indent=2, default=str))
    if args.record:
        with open(RESULTS, "a", encoding="utf-8") as f:
            f.write(("\n" if RESULTS.exists() else "# neardup spark benchmark\n\n") + md + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
