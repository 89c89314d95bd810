#!/usr/bin/env python3
"""CPU seconds (and peak memory) of the hostile inputs the per-page and per-record budgets bound.

    .venv/bin/python bench/bench_budget.py                        # every part
    .venv/bin/python bench/bench_budget.py --parts csv-line --csv-line-mb 1000
    .venv/bin/python bench/bench_budget.py --tree /tmp/old        # the same, against another checkout

Parts, each measured in fresh child processes (so one shape's memory or a stall stays its own):
  - `pages`: one page of each hostile shape on the main and resiliparse paths (see bench/pathological.py),
    CPU seconds of the call;
  - `csv-line`: a CSV whose one record has a line of --csv-line-mb MB, read by `read_batches`: CPU seconds
    and the child's peak RSS;
  - `bad-lines`: `ingest_file` (jobs 1) of --bad-lines rejected records in JSONL and CSV, CPU seconds of the
    process and its threads, and of each stage alone (reading, checking, the batch tables, `add_errors`);
  - `labels`: `Store.import_labels` of --labels rows (bench/bench_labels.py's file), CPU seconds.
CPU time, not wall time: the machine is shared, and a loaded core stretches the wall clock, not the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (shape of bench/pathological.py, size, path)
PAGES = (
    ("classes-distinct", 300_000, "main"),
    ("class-5mb", 1_700_000, "main"),
    ("attribute-names-distinct", 300_000, "main"),
    ("void-attribute-names", 140_000, "resiliparse"),
    ("attribute-names-250-per-element", 100_000, "resiliparse"),
    ("tag-names-pairs", 70_000, "resiliparse"),
    ("attributes-256-repeated", 6_000, "main"),
    ("attributes-256-repeated", 6_000, "strip"),
)


def _child(tree: Path, code: str, timeout_s: float = 900.0) -> dict:
    """`result` of `code` run by a fresh interpreter importing neardup from `tree`."""
    program = (
        "import json, resource, sys, time\n"
        f"sys.path[:0] = [{str(tree)!r}, {str(tree / 'bench')!r}]\n"
        f"{code}\n"
        "result['peak_rss_mb'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "print(json.dumps(result))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    try:
        out = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            env=env,
            cwd=tree,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout_s:.0f} s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:100]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def pages(tree: Path) -> None:
    print("| shape | size | path | CPU s | made of it |\n|---|---:|---|---:|---|")
    for shape, size, path in PAGES:
        r = _child(
            tree,
            f"from pathological import run_one\nresult = run_one({shape!r}, {size}, {path!r})",
        )
        cpu = f"{r['cpu_s']:.3f}" if "cpu_s" in r else r["error"]
        print(f"| {shape} | {size:,} | {path} | {cpu} | {r.get('outcome', '')} |", flush=True)


def csv_line(tree: Path, mb: int, tmp: Path) -> None:
    path = tmp / "long-line.csv"
    with open(path, "w", encoding="ascii") as f:
        f.write("url,html\nhttps://e.com/a,<p>a</p>\nhttps://e.com/long,")
        chunk = "x" * (1 << 20)
        for _ in range(mb):
            f.write(chunk)
        f.write("\nhttps://e.com/b,<p>b</p>\n")
    r = _child(
        tree,
        f"""
from pathlib import Path
from neardup.ingest import read_batches
t = time.process_time()
records = [r for b in read_batches(Path({str(path)!r}), "csv") for r in b]
cpu_s = time.process_time() - t
result = {{"cpu_s": cpu_s, "kinds": [type(r.payload).__name__ for r in records]}}
""",
    )
    path.unlink()
    if "error" in r:
        print(f"csv, one {mb:,} MB line: {r['error']}")
        return
    print(
        f"csv, one {mb:,} MB line: {r['cpu_s']:.2f} CPU-s, peak RSS {r['peak_rss_mb']:,.0f} MB; "
        f"records read: {r['kinds']}"
    )


def bad_lines(tree: Path, n: int, tmp: Path) -> None:
    for fmt in ("jsonl", "csv"):
        r = _child(
            tree,
            f"""
from pathlib import Path
import error_flood
from neardup import engine
from neardup.batches import ingest_arrow, ingest_records
from neardup.config import Config
from neardup.ingest import read_batches
from neardup.store import Store
tmp = Path({str(tmp)!r})
dump = tmp / "flood.{fmt}"
error_flood.write_dump(dump, "{fmt}", {n})
result = {{}}
t = time.process_time()
batches = [list(b) for b in read_batches(dump, "{fmt}", batch_records=engine.BATCH)]
result["read"] = time.process_time() - t
t = time.process_time()
outs = [ingest_records(b, Config()) for b in batches]
result["check"] = time.process_time() - t
t = time.process_time()
for b in batches:
    ingest_arrow((b, Config()))
result["check + tables"] = time.process_time() - t
bad = [x for o in outs for x in o[1]]
with Store(tmp / "errors.duckdb") as store:
    sid = store.begin_source(str(dump), "0" * 64, "{fmt}")
    t = time.process_time()
    for i in range(0, len(bad), 50_000):
        store.add_errors(sid, str(dump), bad[i : i + 50_000])
    result["add_errors"] = time.process_time() - t
t = time.process_time()
with Store(tmp / "whole.duckdb") as store:
    s = engine.ingest_file(store, dump, Config(), jobs=1)
result["whole ingest"] = time.process_time() - t
assert (s.loaded, s.errors) == (1, {n}), (s.loaded, s.errors)
for p in tmp.glob("*.duckdb*"):
    p.unlink()
dump.unlink()
""",
        )
        if "error" in r:
            print(f"{fmt}, {n:,} bad lines: {r['error']}")
            continue
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r.items() if k != "peak_rss_mb")
        print(f"{fmt}, {n:,} bad lines, CPU s: {stages}", flush=True)


def labels(tree: Path, n: int, tmp: Path) -> None:
    r = _child(
        tree,
        f"""
from pathlib import Path
import pandas as pd
from bench_labels import make_labels
from neardup.csvsafe import to_csv
from neardup.store import Store
tmp = Path({str(tmp)!r})
to_csv(make_labels({n}), tmp / "labels.csv")
t = time.process_time()
frame = pd.read_csv(tmp / "labels.csv", dtype=str, keep_default_na=False)
result = {{"read_csv": time.process_time() - t}}
with Store(tmp / "labels.duckdb") as store:
    t = time.process_time()
    added = store.import_labels(frame)
    result["import_labels"] = time.process_time() - t
assert added == {n}, added
for p in tmp.glob("labels*"):
    p.unlink()
""",
    )
    if "error" in r:
        print(f"labels, {n:,} rows: {r['error']}")
        return
    print(
        f"labels, {n:,} rows: read_csv {r['read_csv']:.2f} CPU-s, import_labels {r['import_labels']:.2f} "
        f"CPU-s (DuckDB's threads included); peak RSS {r['peak_rss_mb']:,.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="pages,csv-line,bad-lines,labels")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose neardup to measure")
    ap.add_argument("--csv-line-mb", type=int, default=1000)
    ap.add_argument("--bad-lines", type=int, default=1_000_000)
    ap.add_argument("--labels", type=int, default=1_000_000)
    ap.add_argument("--tmp", type=Path, default=Path("/tmp"), help="where the inputs are written")
    args = ap.parse_args()
    tree = args.tree.resolve()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=tree, check=False
    ).stdout.strip()
    print(f"neardup from {tree} (commit {commit or '?'})\n")
    tmp = args.tmp / f"bench_budget.{os.getpid()}"
    tmp.mkdir(parents=True)
    try:
        parts = args.parts.split(",")
        if "pages" in parts:
            pages(tree)
        if "csv-line" in parts:
            csv_line(tree, args.csv_line_mb, tmp)
        if "bad-lines" in parts:
            bad_lines(tree, args.bad_lines, tmp)
        if "labels" in parts:
            labels(tree, args.labels, tmp)
    finally:
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
