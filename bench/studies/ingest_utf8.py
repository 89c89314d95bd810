#!/usr/bin/env python3
"""What parsing straight from a JSON line's UTF-8 bytes could save: the str round trip of each page, one core.

    .venv/bin/python bench/studies/ingest_utf8.py real.jsonl.gz --pages 2000

A worker decodes each JSON line with orjson into a str, then needs the page's UTF-8 again (its MD5, lexbor's
parse, the Arrow column): free for an ASCII page (CPython keeps its bytes), an encode for the others. Timed
alone on the same pages, median of --repeats runs of CPU time: orjson's decode, the UTF-8 form of the
non-ASCII pages, and, for scale, lexbor's parse + extraction (which reads the str's UTF-8). The decode and the
UTF-8 form are the most a JSON string unescaper writing UTF-8 could remove (it would still scan every byte).
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import time
from collections.abc import Callable
from itertools import islice
from typing import Any

import orjson

from neardup import _html
from neardup.config import Config


def cpu_ms(fn: Callable[[], Any], n: int, repeats: int) -> float:
    fn()
    runs = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        runs.append(time.process_time() - t0)
    return statistics.median(runs) * 1e3 / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump")
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with gzip.open(args.dump) as f:
        lines = list(islice(f, args.pages))
    pages = [h for h in (orjson.loads(ln).get("html") for ln in lines) if isinstance(h, str)]
    n = len(pages)
    wide = [h for h in pages if not h.isascii()]
    tags = Config().strip_tags
    rows = {
        "orjson decode of the line (str)": cpu_ms(
            lambda: [orjson.loads(ln) for ln in lines], n, args.repeats
        ),
        f"UTF-8 form of the non-ASCII pages ({len(wide) / n:.0%} of them)": cpu_ms(
            lambda: [h.encode("utf-8", "surrogatepass") for h in wide], n, args.repeats
        ),
        "parse + extract (lexbor, from the str's UTF-8)": cpu_ms(
            lambda: [_html.extract(h, True, tags, 0) for h in pages], n, args.repeats
        ),
    }
    print(
        f"{n:,} pages, {sum(len(ln) for ln in lines) / n / 1e3:.0f} KB of JSON a page, CPU ms a page (median of {args.repeats}):"
    )
    for name, ms in rows.items():
        print(f"| {name} | {ms:.3f} |")


if __name__ == "__main__":
    main()
