#!/usr/bin/env python3
"""The local engine against `neardup spark` on local[2] and on a standalone cluster, on the bench crawl.

    .venv/bin/python bench/bench_spark.py --pages 100000                       # all three, MinHash
    .venv/bin/python bench/bench_spark.py --pages 100000 --record              # ... and append to RESULTS_SPARK.md
    .venv/bin/python bench/bench_spark.py --pages 1000000 --engines spark --crawl-dir /data/1m \\
        --keep-out /data/1m/out                                                # keep the Spark output
    .venv/bin/python bench/bench_spark.py --pages 100000 --engines spark \\
        --conf neardup.broadcastSignaturesBytes=0     # the LSH passes as above ~1M units: signatures shuffled

The crawl is `make_sample.py --profile bench` (16 KB pages), cached in --crawl-dir. Spark reads it as
gzip shards of --shard-pages records each, cut at the crawl's gzip member boundaries (the same bytes:
no plain copy, which would be 16 GB at 1M; a .gz file is one task, so one file would be one core). The
local engine reads the same shards in order, which are the same records as the whole file.

Each engine runs as CLI commands in child processes:
  - local: `neardup ingest` then `neardup report --method M`.
  - spark: `neardup spark SHARDS --out DIR --master local[2]`: one JVM (driver and executor), its Python
    workers.
  - standalone: a master and a worker started here as the cluster test starts them (tests/spark_cluster.py:
    separate JVMs on 127.0.0.1, the worker's Python a bare venv), then `neardup spark ... --master
    spark://...` with the environment packed and shipped (`spark.archives`); the executor is a third JVM
    under the worker, its Python workers run from the shipped archive.

What it measures, every 0.5 s from /proc, per process class (driver Python, driver JVM, executor JVM,
Python workers; the local engine's main process and its pool): CPU seconds and RSS. The CPU is cut at the
stage lines `neardup spark` logs ("fingerprints ...", "fingerprints: 12.3 s"), so each stage gets the CPU
of every process of the run while it ran. Spark's event log gives the shuffle bytes (per stage too, by
task finish time), the spill, and the executors' own CPU accounting.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "RESULTS_SPARK.md"
sys.path.insert(0, str(BENCH))
sys.path.insert(1, str(REPO / "tests"))

import harness  # noqa: E402  (bench/harness.py: crawl cache, /proc readers, machine line)
from spark_cluster import standalone_cluster  # noqa: E402  (tests/spark_cluster.py)
from spark_parity import spark_conf_flags  # noqa: E402

NEARDUP = [sys.executable, "-m", "neardup.cli"]
MB = 1024 * 1024
POLL_S = 0.5
STAGE_START = re.compile(r"^spark: (?P<name>[\w +.-]+) \.\.\.$")
STAGE_END = re.compile(r"^spark: (?P<name>[\w +.-]+): (?P<s>[\d.]+) s$")
ENGINES = ("local", "spark", "standalone")


# ------------------------------------------------------------------------------------------------
# input: the crawl as gzip shards
# ------------------------------------------------------------------------------------------------
def crawl_shards(args: argparse.Namespace) -> list[Path]:
    folder = Path(args.crawl_dir)
    gz = folder / f"crawl_{args.pages}_s{args.seed}.jsonl.gz"
    shards = gz.with_name(gz.name.removesuffix(".jsonl.gz") + f".shards{args.shard_pages}")
    if (shards / "_DONE").is_file():
        return sorted(shards.glob("part-*.jsonl.gz"))
    if not gz.is_file():
        if folder.resolve() != harness.DATA.resolve():
            raise SystemExit(f"{gz} is missing: make it with scripts/make_sample.py --profile bench")
        gz, _truth = harness.ensure_crawl(args.pages, args.seed)
    return harness.shard_crawl(gz, args.shard_pages)


# ------------------------------------------------------------------------------------------------
# the monitor: CPU and RSS per process class, stage marks from the log
# ------------------------------------------------------------------------------------------------
def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def classify(pid: int, root: int, executor_side: bool, engine: str) -> str:
    """The class of a process; "other" may change: spark-class is a shell script that execs the JVM."""
    cmd = cmdline(pid)
    if engine == "local":  # `neardup ingest` or `sh -c 'neardup report ...'`, and its pool
        return "pool" if "multiprocessing" in cmd else ("main" if "neardup" in cmd else "other")
    if pid == root:
        return "driver python"
    if "pyspark.daemon" in cmd or "pyspark/daemon" in cmd or "pyspark.worker" in cmd:
        return "python workers"
    if "java" in cmd.split(" ", 1)[0]:
        if "CoarseGrainedExecutorBackend" in cmd:
            return "executor JVM"
        if executor_side:
            return "other"  # the worker's launcher
        return "driver JVM" if "SparkSubmit" in cmd else "other"
    return "python workers" if executor_side and "python" in cmd else "other"


class Monitor:
    """Polls the process tree of `root` (and, on a cluster, the worker daemon's children) every POLL_S."""

    def __init__(self, root: int, engine: str, worker_pid: int | None, max_rss_mb: float) -> None:
        self.root, self.engine, self.worker_pid, self.max_rss_mb = root, engine, worker_pid, max_rss_mb
        self.kind: dict[tuple[int, int], str] = {}
        self.cpu_seen: dict[tuple[int, int], float] = {}
        self.samples: list[dict[str, Any]] = []
        self.killed = ""

    def poll(self) -> None:
        t = time.time()
        tree = {pid: (v, False) for pid, v in harness.process_tree(self.root).items()}
        if self.worker_pid is not None:
            for pid, v in harness.process_tree(self.worker_pid).items():
                if pid != self.worker_pid:
                    tree[pid] = (v, True)
        rss: dict[str, float] = {}
        biggest_worker = 0.0
        for pid, ((cpu, start), executor_side) in tree.items():
            key = (pid, start)
            if self.kind.get(key, "other") == "other":
                self.kind[key] = classify(pid, self.root, executor_side, self.engine)
            kind = self.kind[key]
            self.cpu_seen[key] = cpu
            r = harness.rss_kb(pid) / 1024
            rss[kind] = rss.get(kind, 0.0) + r
            if kind == "python workers":
                biggest_worker = max(biggest_worker, r)
        cpu_by: dict[str, float] = {}
        for key, cpu in self.cpu_seen.items():
            cpu_by[self.kind[key]] = cpu_by.get(self.kind[key], 0.0) + cpu
        total = sum(rss.values())
        self.samples.append(
            {"t": t, "cpu": cpu_by, "rss": rss, "rss_total": total, "biggest_worker": biggest_worker}
        )
        if total > self.max_rss_mb and not self.killed:
            self.killed = f"killed by the memory guard (RSS > {self.max_rss_mb:,.0f} MB)"
            print(self.killed, file=sys.stderr, flush=True)
            for pid in tree:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def cpu_at(self, t: float) -> dict[str, float]:
        """Cumulative CPU seconds per class at the first sample at or after `t`."""
        for s in self.samples:
            if s["t"] >= t:
                return dict(s["cpu"])
        return dict(self.samples[-1]["cpu"]) if self.samples else {}

    def peaks(self) -> dict[str, float]:
        out: dict[str, float] = {"total": 0.0, "biggest python worker": 0.0}
        for s in self.samples:
            out["total"] = max(out["total"], s["rss_total"])
            out["biggest python worker"] = max(out["biggest python worker"], s["biggest_worker"])
            for kind, mb in s["rss"].items():
                out[kind] = max(out.get(kind, 0.0), mb)
        return {k: round(v) for k, v in out.items()}


def monitored(
    cmd: list[str],
    engine: str,
    args: argparse.Namespace,
    log: Path,
    *,
    worker_pid: int | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run `cmd` (stdout and stderr to `log`, echoed), polling it; returns the measurements with the
    CPU per class of each stage the log marks."""
    marks: list[tuple[float, str, str]] = []
    t0 = time.time()
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=env
        )
        mon = Monitor(proc.pid, engine, worker_pid, args.max_rss_mb)

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                now = time.time()
                out.write(line)
                out.flush()
                sys.stderr.write(line)
                text = line.rstrip("\n")
                if m := STAGE_START.match(text):
                    marks.append((now, "start", m["name"]))
                elif m := STAGE_END.match(text):
                    marks.append((now, "end", m["name"]))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        while proc.poll() is None:
            mon.poll()
            time.sleep(POLL_S)
        mon.poll()
        reader.join(10)
    t1 = time.time()
    total = mon.cpu_at(t1)
    stages: dict[str, dict[str, float]] = {}

    def span(name: str, a: float, b: float) -> None:
        ca, cb = mon.cpu_at(a), mon.cpu_at(b)
        stages[name] = {
            "seconds": round(b - a, 1),
            **{k: round(cb.get(k, 0.0) - ca.get(k, 0.0), 1) for k in sorted(set(ca) | set(cb))},
        }

    starts = {name: t for t, what, name in marks if what == "start"}
    ends = [(t, name) for t, what, name in marks if what == "end"]
    if ends:
        span("start (JVM, session, probe)", t0, min(starts.values()))
        for t, name in ends:
            span(name, starts.get(name, t), t)
        span("finish (manifest, stop)", ends[-1][0], t1)
    return {
        "exit": proc.returncode,
        "killed": mon.killed,
        "seconds": round(t1 - t0, 1),
        "t0": t0,
        "t1": t1,
        "cpu_s": round(sum(total.values()), 1),
        "cpu_by_class": {k: round(v, 1) for k, v in sorted(total.items())},
        "peak_rss_mb": mon.peaks(),
        "stages": stages,
        "marks": marks,
    }


# ------------------------------------------------------------------------------------------------
# Spark's event log
# ------------------------------------------------------------------------------------------------
def event_totals(events_dir: Path, marks: list[tuple[float, str, str]]) -> dict[str, Any]:
    """Sums over all tasks of the Spark event log(s) in `events_dir`; shuffle written per neardup stage
    (by the task's finish time against the stage marks)."""
    tot: dict[str, Any] = {
        "shuffle_write": 0,
        "shuffle_read": 0,
        "memory_spill": 0,
        "disk_spill": 0,
        "input": 0,
        "output": 0,
        "tasks": 0,
        "executor_cpu_s": 0.0,
        "executor_run_s": 0.0,
        "gc_s": 0.0,
        "peak_execution_memory_max": 0,
        "shuffle_write_by_stage": {},
    }
    spans = [(t, name) for t, what, name in marks if what == "end"]
    for log in (p for p in events_dir.rglob("*") if p.is_file()):  # Spark 4: a directory per application
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                if '"SparkListenerTaskEnd"' not in line:
                    continue
                ev = json.loads(line)
                m = ev.get("Task Metrics") or {}
                tot["tasks"] += 1
                written = m.get("Shuffle Write Metrics", {}).get("Shuffle Bytes Written", 0)
                tot["shuffle_write"] += written
                r = m.get("Shuffle Read Metrics", {})
                tot["shuffle_read"] += r.get("Remote Bytes Read", 0) + r.get("Local Bytes Read", 0)
                tot["memory_spill"] += m.get("Memory Bytes Spilled", 0)
                tot["disk_spill"] += m.get("Disk Bytes Spilled", 0)
                tot["input"] += m.get("Input Metrics", {}).get("Bytes Read", 0)
                tot["output"] += m.get("Output Metrics", {}).get("Bytes Written", 0)
                tot["executor_cpu_s"] += m.get("Executor CPU Time", 0) / 1e9
                tot["executor_run_s"] += m.get("Executor Run Time", 0) / 1e3
                tot["gc_s"] += m.get("JVM GC Time", 0) / 1e3
                tot["peak_execution_memory_max"] = max(
                    tot["peak_execution_memory_max"], m.get("Peak Execution Memory", 0)
                )
                finished = (ev.get("Task Info") or {}).get("Finish Time", 0) / 1e3
                stage = next((name for t, name in spans if finished <= t), "finish (manifest, stop)")
                by = tot["shuffle_write_by_stage"]
                by[stage] = by.get(stage, 0) + written
    for k in ("executor_cpu_s", "executor_run_s", "gc_s"):
        tot[k] = round(tot[k], 1)
    return tot


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.parquet"))


# ------------------------------------------------------------------------------------------------
# the engines
# ------------------------------------------------------------------------------------------------
def spark_cmd(shards: list[Path], out: Path, method: str, master: str, conf: dict[str, str]) -> list[str]:
    return [
        *NEARDUP,
        "spark",
        *map(str, shards),
        "--out",
        str(out),
        "--method",
        method,
        "--master",
        master,
        *spark_conf_flags(conf),
    ]


def base_conf(args: argparse.Namespace, events: Path, local_dir: Path) -> dict[str, str]:
    conf = {
        "spark.ui.showConsoleProgress": "false",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": f"file://{events}",
        "spark.eventLog.compress": "false",
        "spark.local.dir": str(local_dir),
    }
    for kv in args.conf or []:
        key, _, value = kv.partition("=")
        conf[key] = value
    return conf


def spark_result(res: dict[str, Any], out: Path, events: Path, keep: bool) -> dict[str, Any]:
    if res["exit"] == 0:
        m = json.loads((out / "_MANIFEST.json").read_text())
        res["manifest"] = {k: m[k] for k in ("counts", "numbers", "candidate_stats", "timings_s", "spark")}
        res["parquet_bytes"] = {
            name: dir_bytes(out / name) for name in ("pages", "units", "pairs", "clusters")
        }
    res["events"] = event_totals(events, res["marks"])
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return res


def run_spark(shards: list[Path], method: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    keep = bool(args.keep_out)
    out = Path(args.keep_out) if keep else work / f"spark_{method}"
    events = work / f"events_spark_{method}"
    events.mkdir()
    conf = {"spark.driver.memory": args.driver_memory, **base_conf(args, events, work / "spark-local")}
    cmd = spark_cmd(shards, out, method, args.master, conf)
    if keep and args.overwrite:
        cmd.append("--overwrite")
    print(f"spark {method}: {shlex.join(cmd[2:6])} ...", file=sys.stderr, flush=True)
    res = monitored(cmd, "spark", args, work / f"spark_{method}.log")
    return spark_result(res, out, events, keep)


def run_standalone(shards: list[Path], method: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    out, events = work / f"standalone_{method}", work / f"events_standalone_{method}"
    events.mkdir()
    folder = work / f"cluster_{method}"
    folder.mkdir()
    env_cache = Path(args.crawl_dir) / "env-cache"  # packed once, as a user's cache would hold it
    with standalone_cluster(folder, cores=args.cores, memory=args.worker_memory) as cluster:
        conf = {
            "spark.driver.memory": args.cluster_driver_memory,
            "spark.executor.memory": args.executor_memory,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            # as local[N] sets it (session.py): 4 tasks per core
            "spark.sql.shuffle.partitions": str(4 * args.cores),
            **base_conf(args, events, work / "spark-local"),
        }
        cmd = spark_cmd(shards, out, method, cluster.master, conf) + ["--env-cache", str(env_cache)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
        print(f"standalone {method}: {cluster.master}", file=sys.stderr, flush=True)
        res = monitored(
            cmd, "standalone", args, work / f"standalone_{method}.log", worker_pid=cluster.worker_pid, env=env
        )
    return spark_result(res, out, events, False)


def run_local(shards: list[Path], methods: list[str], args: argparse.Namespace, work: Path) -> dict[str, Any]:
    db = work / "local.duckdb"
    print(f"local ingest: {len(shards)} shards", file=sys.stderr, flush=True)
    cmd = [*NEARDUP, "ingest", *map(str, shards), "--db", str(db)]
    res: dict[str, Any] = {"ingest": monitored(cmd, "local", args, work / "local_ingest.log")}
    for method in methods:
        print(f"local report {method}", file=sys.stderr, flush=True)
        report = shlex.join([*NEARDUP, "report", "--db", str(db), "--method", method, "--json"])
        res[method] = monitored(
            ["sh", "-c", f"{report} > {work}/report_{method}.json"],
            "local",
            args,
            work / f"local_{method}.log",
        )
        with contextlib.suppress(OSError, ValueError):
            res[method]["report"] = json.loads((work / f"report_{method}.json").read_text())
    res["db_mb"] = round(db.stat().st_size / MB) if db.exists() else None
    db.unlink(missing_ok=True)
    return res


# ------------------------------------------------------------------------------------------------
# the table
# ------------------------------------------------------------------------------------------------
SPARK_CLASSES = ("driver python", "driver JVM", "executor JVM", "python workers", "other")


SPARK_RUNS = (("spark", "Spark local[2]"), ("standalone", "Spark standalone"))


def spark_runs(info: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(method, label, measurements) of each Spark run made."""
    for method in info["methods"]:
        for engine, label in SPARK_RUNS:
            s = (info.get(engine) or {}).get(method)
            if s:
                yield method, label, s


def summary_rows(info: dict[str, Any]) -> list[str]:
    """One row per run: wall time, CPU, CPU per page, peak RSS."""
    ms = 1000 / info["pages"]
    lines = ["| run | wall s | CPU s | CPU ms/page | peak RSS MB | result |", "|---|---:|---:|---:|---:|---|"]

    def row(label: str, r: dict[str, Any], note: str = "") -> None:
        ok = "ok" if r["exit"] == 0 else (r["killed"] or f"exit {r['exit']}")
        lines.append(
            f"| {label} | {r['seconds']:,.1f} | {r['cpu_s']:,.0f} | {r['cpu_s'] * ms:.2f} | "
            f"{r['peak_rss_mb']:,.0f} | {ok}{'; ' + note if note else ''} |"
        )

    loc = info.get("local") or {}
    for method in info["methods"]:
        if loc.get(method):
            i, r = loc["ingest"], loc[method]
            both = {
                "exit": max(i["exit"], r["exit"]),
                "killed": i["killed"] or r["killed"],
                "seconds": i["seconds"] + r["seconds"],
                "cpu_s": i["cpu_s"] + r["cpu_s"],
                "peak_rss_mb": max(i["peak_rss_mb"]["total"], r["peak_rss_mb"]["total"]),
            }
            note = f"ingest {i['seconds']:.0f} s / {i['cpu_s']:.0f} CPU s, report {r['seconds']:.0f} s / {r['cpu_s']:.0f} CPU s"
            row(f"**local {method}** (ingest + report)", both, note)
    for method, label, s in spark_runs(info):
        row(f"**{label} {method}**", {**s, "peak_rss_mb": s["peak_rss_mb"]["total"]})
    return [*lines, ""]


def stage_table(pages: int, method: str, label: str, s: dict[str, Any]) -> list[str]:
    """CPU ms per page of each stage by process class, and the shuffle each stage wrote."""
    ms = 1000 / pages
    classes = [c for c in SPARK_CLASSES if any(c in st for st in s["stages"].values())]
    lines = [
        f"{label} {method}, CPU ms per page by stage and process:",
        "",
        "| stage | wall s | " + " | ".join(classes) + " | all | shuffle written B/page |",
        "|---|---:|" + "---:|" * (len(classes) + 2),
    ]
    by = s["events"]["shuffle_write_by_stage"]
    for name, st in s["stages"].items():
        cells = " | ".join(f"{st.get(c, 0.0) * ms:.2f}" for c in classes)
        allc = sum(st.get(c, 0.0) for c in classes)
        lines.append(
            f"| {name} | {st['seconds']:,.1f} | {cells} | {allc * ms:.2f} | {by.get(name, 0) / pages:,.0f} |"
        )
    tot = s["cpu_by_class"]
    cells = " | ".join(f"**{tot.get(c, 0.0) * ms:.2f}**" for c in classes)
    lines.append(
        f"| **run** | **{s['seconds']:,.1f}** | {cells} | **{s['cpu_s'] * ms:.2f}** | "
        f"**{s['events']['shuffle_write'] / pages:,.0f}** |"
    )
    peaks = ", ".join(f"{k} {v:,}" for k, v in s["peak_rss_mb"].items() if k != "total")
    return [*lines, "", f"Peak RSS MB: {peaks} (the tree at once: {s['peak_rss_mb']['total']:,}).", ""]


def counts_line(pages: int, method: str, label: str, s: dict[str, Any]) -> str:
    m, e, pb = s["manifest"], s["events"], s["parquet_bytes"]
    c, n, st = m["counts"], m["numbers"], m["candidate_stats"]
    return (
        f"{label} {method}: {c['pages']:,} pages, {c['units']:,} units, {st['candidates']:,} candidates -> "
        f"{c['pairs']:,} stored pairs (largest bucket {st['largest_bucket']}, capped {st['capped_buckets']}), "
        f"{n['unique_pages']:,} clusters, {n['redundant_pct']}% redundant. "
        f"Shuffle written {e['shuffle_write'] / MB:,.0f} MB ({e['shuffle_write'] / pages:,.0f} B/page), "
        f"spilled {e['disk_spill'] / MB:,.0f} MB to disk, {e['tasks']:,} tasks; the executors' own "
        f"accounting: {e['executor_cpu_s']:,.0f} CPU s in the JVM, GC {e['gc_s']:,.0f} s. "
        f"Parquet: pages {pb['pages'] / pages:,.0f} B/page, units {pb['units'] / max(c['units'], 1):,.0f} "
        f"B/unit, pairs {pb['pairs'] / max(c['pairs'], 1):,.0f} B/pair, clusters "
        f"{pb['clusters'] / pages:,.0f} B/page.\n"
    )


def render(info: dict[str, Any]) -> str:
    pages = info["pages"]
    lines = [
        f"### {pages:,} pages - {info['when']} - Spark {info.get('spark_version', '?')}, commit {info['commit']}",
        "",
        f"machine: {info['machine']}; input: {info['n_shards']} gzip shards of ~{info['shard_pages']:,} records "
        f"({info['input_mb']:,} MB); local[2]: driver memory {info['driver_memory']}; standalone: one worker of "
        f"{info['cores']} cores, executor memory {info['executor_memory']}, driver memory "
        f"{info['cluster_driver_memory']}; load average {info['load_before']} before, {info['load_after']} after",
        "",
        *summary_rows(info),
    ]
    for method, label, s in spark_runs(info):
        if s.get("stages"):
            lines += stage_table(pages, method, label, s)
    lines += [
        counts_line(pages, method, label, s) for method, label, s in spark_runs(info) if s.get("manifest")
    ]
    loc = info.get("local") or {}
    for method in info["methods"]:
        r = loc.get(method, {}).get("report")
        if r:
            nums = r.get("numbers", r)
            lines.append(
                f"local {method}: {nums.get('unique_pages', '?'):,} clusters, {nums.get('redundant_pct', '?')}% "
                f"redundant; peak RSS MB: ingest {loc['ingest']['peak_rss_mb']}, report "
                f"{loc[method]['peak_rss_mb']}.\n"
            )
    return "\n".join(lines)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--methods", nargs="+", default=["minhash"], choices=["simhash", "minhash"])
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    ap.add_argument(
        "--crawl-dir", default=str(harness.DATA), help="where the crawl and its shards are cached"
    )
    ap.add_argument("--shard-pages", type=int, default=5000, help="records per gzip shard (one task each)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument(
        "--driver-memory", default="6g", help="local[N]: the one JVM's heap (default %(default)s)"
    )
    ap.add_argument("--cores", type=int, default=2, help="standalone: the worker's cores")
    ap.add_argument("--worker-memory", default="7g", help="standalone: memory the worker offers")
    ap.add_argument("--executor-memory", default="6g", help="standalone: the executor's heap")
    ap.add_argument("--cluster-driver-memory", default="2g", help="standalone: the driver's heap")
    ap.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark setting (repeatable)")
    ap.add_argument("--keep-out", help="write the local[N] Spark output here and keep it (one method)")
    ap.add_argument("--overwrite", action="store_true", help="with --keep-out: replace an earlier output")
    ap.add_argument(
        "--work-dir", help="scratch folder (default: a new one in --crawl-dir), removed at the end"
    )
    ap.add_argument("--max-rss-mb", type=float, default=16_000, help="kill a run whose processes pass this")
    ap.add_argument("--record", action="store_true", help=f"append the tables to {RESULTS.name}")
    ap.add_argument("--json", help="also write the raw measurements here")
    args = ap.parse_args(argv)
    if args.keep_out and len(args.methods) > 1:
        ap.error("--keep-out keeps one method's output")

    shards = crawl_shards(args)
    work = Path(tempfile.mkdtemp(prefix="bench-spark-", dir=args.work_dir or args.crawl_dir))
    info: dict[str, Any] = {
        "pages": args.pages,
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": harness.commit(),
        "machine": harness.machine(),
        "methods": args.methods,
        "n_shards": len(shards),
        "shard_pages": args.shard_pages,
        "input_mb": round(sum(p.stat().st_size for p in shards) / MB),
        "driver_memory": args.driver_memory,
        "cores": args.cores,
        "executor_memory": args.executor_memory,
        "cluster_driver_memory": args.cluster_driver_memory,
        "load_before": load(),
    }
    try:
        for method in args.methods:
            if "spark" in args.engines:
                info.setdefault("spark", {})[method] = run_spark(shards, method, args, work)
            if "standalone" in args.engines:
                info.setdefault("standalone", {})[method] = run_standalone(shards, method, args, work)
            for engine in ("spark", "standalone"):
                man = (info.get(engine) or {}).get(method, {}).get("manifest")
                if man:
                    info["spark_version"] = man["spark"]["version"]
        if "local" in args.engines:
            info["local"] = run_local(shards, args.methods, args, work)
    finally:
        info["load_after"] = load()
        if args.json:
            Path(args.json).write_text(json.dumps(info, indent=2, default=str))
        shutil.rmtree(work, ignore_errors=True)
    md = render(info)
    print(md)
    if args.record:
        with open(RESULTS, "a", encoding="utf-8") as f:
            f.write("\n" + md + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
