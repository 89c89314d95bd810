#!/usr/bin/env python3
"""How fast a dump of bad records loads: every record is rejected, so the time is the error path.

    .venv/bin/python bench/error_flood.py                   # 200,000 bad lines, JSONL and CSV
    .venv/bin/python bench/error_flood.py --lines 1000000 --formats jsonl

Each format's file holds one good page (a dump with no usable record is refused) and `--lines`
records of three kinds of rejects (malformed JSON, a missing url, a blank page). Prints the median
wall time of `--repeats` loads into fresh databases, and the rejected rows per second.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import tempfile
import time
from pathlib import Path

from neardup import engine
from neardup.config import Config
from neardup.store import Store

GOOD = {"url": "https://example.com/", "html": "<p>" + "word " * 80 + "</p>"}


def write_dump(path: Path, fmt: str, lines: int) -> None:
    if fmt == "jsonl":
        bad = [
            b'{"url": "https://e.com/cut", "html": "<p>x',
            b'{"html": "<p>no url</p>"}',
            b'{"url": "https://e.com/blank", "html": " "}',
        ]
        with open(path, "wb") as f:
            f.write(json.dumps(GOOD).encode() + b"\n")
            for i in range(lines):
                f.write(bad[i % 3] + b"\n")
        return
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["url", "html"])
        w.writerow([GOOD["url"], GOOD["html"]])
        rows = [["", "<p>no url</p>"], ["https://e.com/blank", " "], ["https://e.com/none", ""]]
        for i in range(lines):
            w.writerow(rows[i % 3])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--formats", nargs="+", default=["jsonl", "csv"], choices=["jsonl", "csv"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats:
            dump = Path(tmp) / f"flood.{fmt}"
            write_dump(dump, fmt, args.lines)
            runs = []
            for r in range(args.repeats):
                with Store(Path(tmp) / f"{fmt}{r}.duckdb") as store:
                    t = time.perf_counter()
                    s = engine.ingest_file(store, dump, Config(), jobs=args.jobs)
                    runs.append(time.perf_counter() - t)
                    assert (s.loaded, s.errors) == (1, args.lines), (s.loaded, s.errors)
            sec = statistics.median(runs)
            print(
                f"{fmt}: {args.lines:,} rejected records in {sec:.2f} s (median of {args.repeats}): "
                f"{args.lines / sec:,.0f} rows/s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
