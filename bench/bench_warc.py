#!/usr/bin/env python3
"""WARC.gz against JSONL.gz of the same pages: `ingest_file` throughput (MB/s of HTML, pages/s).

    .venv/bin/python bench/bench_warc.py                  # the bundled 3,000-page sample, 5 rounds
    .venv/bin/python bench/bench_warc.py --pages 20000 --rounds 3
    .venv/bin/python bench/bench_warc.py --pages 2000 --profile realsize   # real pages' weight (~100 KB)

The forms: the JSON lines (`.jsonl.gz`), the WARC.gz a crawler writes (one gzip member per record,
inflated by libdeflate in the compiled member loop) and the WARC.gz gzipped as one stream (inflated by
ISA-L, its records split by the compiled stream loop), both written by
`scripts/jsonl_to_warc.py` from the same lines (windows-1252 pages, gzip Content-Encoding, chunked,
revisits). Each round ingests every form once, in a fresh database, each in its own process (peak RSS
of that process is the main process's memory: the reader lives there); rounds interleave the forms so
that the load of a shared machine hits all alike. Reported: medians over rounds, and the median of the
per-round ratios WARC / JSONL (a ratio from one round compares runs seconds apart). With `--jobs 1` the
ingest runs in the measuring process and its CPU seconds (`time.process_time`) are the whole cost:
pages per CPU-second, which the load of others on a shared machine moves far less than wall time. The reader alone
(`ingest.read_batches` without workers or DuckDB) is timed too: it is what the main process adds.

Per page, each run reports the main process's CPU during the ingest (`time.process_time`: the reader, the
batches sent, the results gathered, the inserts) and its pool workers' (the forkserver's reaped children,
/proc), which the load of others moves less than wall time. With --code DIR (repeatable) each form runs
under each source tree (`git archive` of a commit, with its compiled .so files), interleaved round by round.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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


def _workers_cpu_s() -> float:
    """CPU seconds of this process's pool workers that have ended: a worker is a child of the forkserver,
    which reaps it, so its CPU is in the forkserver's cutime + cstime (/proc/PID/stat), its own imports not."""
    me, total = os.getpid(), 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:  # ppid
            total += (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime, cstime
    return total


def one(path: Path, jobs: int | None) -> dict[str, float]:
    """Ingest `path` into a fresh database (in this process); the reader alone first."""
    import resource

    from neardup import engine
    from neardup.config import Config
    from neardup.ingest import detect_format, read_batches
    from neardup.store import Store

    # as the ingest reads: revisits of a one-stream file's records read long before are held for the pages
    # stored (`WarcBatches.held_revisits`; linked there, one query), where a tree has that
    held: dict[str, Any] = {}
    if "source_pages" in inspect.signature(read_batches).parameters:
        held["source_pages"] = lambda numbers: {}
    t, cpu = time.perf_counter(), time.process_time()
    n_batches = sum(1 for _ in read_batches(path, detect_format(path), **held))
    read_s, read_cpu_s = time.perf_counter() - t, time.process_time() - cpu
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "b.duckdb") as store:
        t, cpu = time.perf_counter(), time.process_time()
        summary = engine.ingest_file(store, path, Config(), jobs=jobs)
        seconds, cpu_s = time.perf_counter() - t, time.process_time() - cpu
        html_mb = store.html_bytes() / 1e6
    time.sleep(0.3)  # the forkserver reaps the last workers
    return {
        "seconds": seconds,
        "cpu_s": cpu_s,
        "workers_cpu_s": _workers_cpu_s(),
        "read_s": read_s,
        "read_cpu_s": read_cpu_s,
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
    ap.add_argument(
        "--code",
        action="append",
        type=Path,
        help="run the forms with the neardup of this source tree too (e.g. a `git archive` of another "
        "commit, with its compiled .so files), interleaved round by round; repeatable. Default: this tree",
    )
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # a child: ingest this file, print JSON
    a = ap.parse_args(argv)
    if a.one is not None:
        print(json.dumps(one(a.one, a.jobs)))
        return 0
    files = inputs(a.pages, a.profile)
    codes = a.code or [ROOT]
    runs: dict[tuple[Path, str], list[dict[str, float]]] = {(c, f): [] for c in codes for f in FORMS}
    load0 = os.getloadavg()[0]
    for r in range(a.rounds):
        for code in codes if r % 2 == 0 else codes[::-1]:
            env = {**os.environ, "PYTHONPATH": str(code)}
            for form in FORMS if r % 2 == 0 else FORMS[::-1]:
                # -P: neither the script's directory nor the cwd on sys.path, here or in the pool's
                # forkserver (Python 3.11 starts it with `-c`, the cwd first on its path, the parent's path
                # not passed): the workers import the neardup of PYTHONPATH's tree, not the cwd's.
                cmd = [sys.executable, "-P", __file__, "--one", str(files[form])] + (
                    ["--jobs", str(a.jobs)] if a.jobs else []
                )
                child = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if child.returncode != 0:
                    raise SystemExit(f"{code.name} {form}: exit {child.returncode}\n{child.stderr[-4000:]}")
                res = json.loads(child.stdout)
                res["mb_s"] = res["html_mb"] / res["seconds"]
                res["pages_s"] = res["pages"] / res["seconds"]
                res["read_mb_s"] = res["html_mb"] / res["read_s"]
                res["cpu_pages_s"] = res["pages"] / res["cpu_s"]
                runs[code, form].append(res)
                print(
                    f"round {r + 1} {code.name} {form:>20}: {res['seconds']:6.2f} s  {res['mb_s']:5.2f} MB/s  "
                    f"main {1000 * res['cpu_s'] / res['pages']:.3f} CPU-ms/page  "
                    f"workers {1000 * res['workers_cpu_s'] / res['pages']:.3f}  "
                    f"reader alone {1000 * res['read_cpu_s'] / res['pages']:.3f} CPU-ms/page",
                    file=sys.stderr,
                    flush=True,
                )
    first = runs[codes[0], FORMS[0]][0]
    print(
        f"\n{first['pages']:,} pages, {first['html_mb']:.1f} MB of HTML; median of {a.rounds} rounds "
        f"({os.cpu_count()} cores, load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)\n"
    )
    print(
        "| code | form | file MB | seconds | HTML MB/s | wall vs JSONL.gz | main CPU-ms/page | "
        "main CPU vs JSONL.gz | workers CPU-ms/page | reader alone CPU-ms/page | main RSS MB |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    med = statistics.median
    for code in codes:
        base = runs[code, "jsonl.gz"]
        for form in FORMS:
            rs = runs[code, form]
            # per-round ratios: a ratio compares runs seconds apart
            wall = med(b["seconds"] / w["seconds"] for b, w in zip(base, rs, strict=True))
            main_cpu = med(w["cpu_s"] / b["cpu_s"] for b, w in zip(base, rs, strict=True))
            per_page = {
                k: med(1000 * x[k] / x["pages"] for x in rs) for k in ("cpu_s", "workers_cpu_s", "read_cpu_s")
            }
            print(
                f"| {code.name} | {form} | {files[form].stat().st_size / 1e6:.1f} | {med(x['seconds'] for x in rs):.2f} | "
                f"{med(x['mb_s'] for x in rs):.2f} | {100 * wall:.0f}% | {per_page['cpu_s']:.3f} | "
                f"{100 * main_cpu:.0f}% | {per_page['workers_cpu_s']:.3f} | {per_page['read_cpu_s']:.3f} | "
                f"{med(x['rss_mb'] for x in rs):.0f} |"
            )
    # Same pages and the same HTML bytes in every form: the MB/s and pages/s ratios are the time ratio.
    assert len({rs[0]["pages"] for rs in runs.values()}) == 1, {k: rs[0]["pages"] for k, rs in runs.items()}
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
