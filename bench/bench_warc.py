#!/usr/bin/env python3
"""WARC.gz against JSONL.gz of the same pages: `ingest_file` throughput (MB/s of HTML, pages/s).

    .venv/bin/python bench/bench_warc.py                  # the bundled 3,000-page sample, 5 rounds
    .venv/bin/python bench/bench_warc.py --pages 20000 --rounds 3
    .venv/bin/python bench/bench_warc.py --pages 2000 --profile realsize   # real pages' weight (~100 KB)

The forms: the JSON lines (`.jsonl.gz`), the WARC.gz a crawler writes (one gzip member per record,
inflated by FastWARC) and the WARC.gz gzipped as one stream (inflated by ISA-L), both written by
`scripts/jsonl_to_warc.py` from the same lines (windows-1252 pages, gzip Content-Encoding, chunked,
revisits). Each round ingests every form once, in a fresh database, each in its own process (peak RSS
of that process is the main process's memory: the reader lives there); rounds interleave the forms so
that the load of a shared machine hits all alike. Reported: medians over rounds, and the median of the
per-round ratios WARC / JSONL (a ratio from one round compares runs seconds apart). With `--jobs 1` the
ingest runs in the measuring process and its CPU seconds (`time.process_time`) are the whole cost:
pages per CPU-second, which the load of others on a shared machine moves far less than wall time. The reader alone
(`ingest.read_batches` without workers or DuckDB) is timed too: it is what the main process adds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "crawl.jsonl.gz"
CACHE = Path(tempfile.gettempdir()) / "neardup-bench-warc"
FORMS = ("jsonl.gz", "warc.gz", "warc.gz one stream")


def inputs(pages: int | None, profile: str = "sample") -> dict[str, Path]:
    CACHE.mkdir(exist_ok=True)
    tag = "sample" if pages is None else str(pages) if profile == "sample" else f"{profile}-{pages}"
    jsonl = SAMPLE if pages is None else CACHE / f"crawl-{tag}.jsonl.gz"
    if not jsonl.exists():
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "scripts" / "make_sample.py"),
                "--pages",
                str(pages),
                "--out",
                str(jsonl),
                "--truth",
                str(CACHE / f"truth-{tag}.csv"),
                "--profile",
                profile,
            ],
            check=True,
        )
    out = {
        "jsonl.gz": jsonl,
        "warc.gz": CACHE / f"crawl-{tag}.warc.gz",
        "warc.gz one stream": CACHE / f"crawl-{tag}-one-stream.warc.gz",
    }
    for form, flag in (("warc.gz", []), ("warc.gz one stream", ["--one-stream"])):
        if not out[form].exists() or out[form].stat().st_mtime < jsonl.stat().st_mtime:
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "scripts" / "jsonl_to_warc.py"),
                    *flag,
                    str(jsonl),
                    str(out[form]),
                ],
                check=True,
            )
    return out


def one(path: Path, jobs: int | None) -> dict[str, float]:
    """Ingest `path` into a fresh database (in this process); the reader alone first."""
    import resource

    from neardup import engine
    from neardup.config import Config
    from neardup.ingest import detect_format, read_batches
    from neardup.store import Store

    t = time.perf_counter()
    n_batches = sum(1 for _ in read_batches(path, detect_format(path)))
    read_s = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "b.duckdb") as store:
        t, cpu = time.perf_counter(), time.process_time()
        summary = engine.ingest_file(store, path, Config(), jobs=jobs)
        seconds, cpu_s = time.perf_counter() - t, time.process_time() - cpu
        html_mb = store.html_bytes() / 1e6
    return {
        "seconds": seconds,
        "cpu_s": cpu_s,
        "read_s": read_s,
        "pages": summary.loaded,
        "html_mb": html_mb,
        "batches": n_batches,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--pages", type=int, help="generate a crawl of this many pages (default: the bundled sample)"
    )
    ap.add_argument(
        "--profile",
        choices=("sample", "realsize", "bench"),
        default="sample",
        help="the generated crawl's pages (scripts/make_sample.py): sample ~12 KB, realsize ~100 KB",
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # a child: ingest this file, print JSON
    a = ap.parse_args(argv)
    if a.one is not None:
        print(json.dumps(one(a.one, a.jobs)))
        return 0
    files = inputs(a.pages, a.profile)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs: dict[str, list[dict[str, float]]] = {f: [] for f in FORMS}
    for r in range(a.rounds):
        order = FORMS if r % 2 == 0 else FORMS[::-1]
        for form in order:
            cmd = [sys.executable, __file__, "--one", str(files[form])] + (
                ["--jobs", str(a.jobs)] if a.jobs else []
            )
            res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
            res["mb_s"] = res["html_mb"] / res["seconds"]
            res["pages_s"] = res["pages"] / res["seconds"]
            res["read_mb_s"] = res["html_mb"] / res["read_s"]
            res["cpu_pages_s"] = res["pages"] / res["cpu_s"]
            runs[form].append(res)
            print(
                f"round {r + 1} {form:>20}: {res['seconds']:6.2f} s  {res['mb_s']:5.2f} MB/s  "
                f"{res['pages_s']:6.1f} pages/s  {res['cpu_pages_s']:6.1f} pages/CPU-s  "
                f"reader alone {res['read_mb_s']:6.1f} MB/s  "
                f"rss {res['rss_mb']:.0f} MB",
                file=sys.stderr,
                flush=True,
            )
    base = runs["jsonl.gz"]
    size = {f: files[f].stat().st_size / 1e6 for f in FORMS}
    pages = base[0]["pages"]
    print(
        f"\n{pages:,} pages, {base[0]['html_mb']:.1f} MB of HTML; median of {a.rounds} rounds "
        f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end)\n"
    )
    print(
        "| form | file MB | seconds | HTML MB/s | pages/s | reader alone MB/s | main RSS MB | "
        "throughput vs JSONL.gz | CPU-s | pages per CPU-s vs JSONL.gz |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for form in FORMS:
        rs = runs[form]
        ratio = statistics.median(b["seconds"] / w["seconds"] for b, w in zip(base, rs, strict=True))
        cpu_ratio = statistics.median(b["cpu_s"] / w["cpu_s"] for b, w in zip(base, rs, strict=True))
        print(
            f"| {form} | {size[form]:.1f} | {statistics.median(x['seconds'] for x in rs):.2f} | "
            f"{statistics.median(x['mb_s'] for x in rs):.2f} | {statistics.median(x['pages_s'] for x in rs):.1f} | "
            f"{statistics.median(x['read_mb_s'] for x in rs):.1f} | {statistics.median(x['rss_mb'] for x in rs):.0f} | "
            f"{100 * ratio:.0f}% | {statistics.median(x['cpu_s'] for x in rs):.2f} | {100 * cpu_ratio:.0f}% |"
        )
    # Same pages and the same HTML bytes in every form: the MB/s and pages/s ratios are the time ratio.
    assert len({runs[f][0]["pages"] for f in FORMS}) == 1, {f: runs[f][0]["pages"] for f in FORMS}
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
