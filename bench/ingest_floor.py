#!/usr/bin/env python3
"""Where the ingest CPU goes: each step of the per-page work, timed alone on the same pages, one core.

    .venv/bin/python bench/ingest_floor.py                       # 3,000 pages of the cached 10k crawl
    .venv/bin/python bench/ingest_floor.py --pages 5000 --normalize strip

Each step runs over all sampled pages in one process (no workers, no DuckDB, no profiler), after a
warm-up, as the median of --repeats runs of CPU time (`time.process_time`). The sum is a lower bound
for the CPU one page costs in an ingest worker; the main process (reading and decompressing the dump,
DuckDB appends) comes on top. Divide the sum by the cores that two busy processes actually get.

Tokenizing and sketching are timed twice: with the compiled kernels (`neardup/_kernels.c`, what
ingest runs, counted in the sum) and with the numpy reference path they replace (shown, not summed).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Callable
from itertools import islice
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402  (bench/harness.py: crawl cache, process-tree monitor, machine line)
import pyarrow as pa  # noqa: E402
import xxhash  # noqa: E402

from neardup.batches import html_blocks, sketch_table  # noqa: E402
from neardup.config import Config  # noqa: E402
from neardup.ingest import detect_format, read_raw  # noqa: E402
from neardup.normalize import degenerate_reason, parse_page  # noqa: E402
from neardup.readers.jsonl import BLOCK_BYTES, _inflated  # noqa: E402
from neardup.records import _kernels, add_md5s, decode_json_line, validate  # noqa: E402
from neardup.shingles import text_words  # noqa: E402
from neardup.sketch import sketch_many  # noqa: E402


def cpu_ms_per_page(step: Callable[[], object], n: int, repeats: int) -> float:
    """Median CPU milliseconds a page of `step` over `n` pages, after a warm-up (caches, lazy imports)."""
    return harness.cpu_median(step, repeats, warmup=True)[0] * 1000 / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--crawl-pages", type=int, default=10_000, help="which cached bench crawl (default 10000)"
    )
    ap.add_argument(
        "--input", type=Path, help="sample this dump instead (e.g. make_sample.py --profile realsize)"
    )
    ap.add_argument("--pages", type=int, default=3000, help="pages sampled from its start (default 3000)")
    ap.add_argument("--normalize", default="main", choices=["main", "strip"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    crawl = args.input or harness.ensure_crawl(args.crawl_pages, 42)[0]
    config = Config(normalize=args.normalize)
    raw = list(islice(read_raw(crawl, detect_format(crawl)), args.pages))
    recs = [r for r in map(validate, raw) if isinstance(r, dict)]
    parsed = [parse_page(r["html"], mode=config.normalize) for r in recs]
    tokens = [text_words(p.text) for p in parsed]
    content = [
        i
        for i, (r, p, (_, wh)) in enumerate(zip(recs, parsed, tokens, strict=True))
        if degenerate_reason(
            p.text, title=p.title, status=r["status"], n_words=len(wh), min_words=config.min_words
        )
        is None
    ]
    n = len(recs)

    def sketch(compiled: bool) -> list[object]:
        return [
            sketch_many(
                [tokens[j][1] for j in content[i : i + 500]],
                config.shingle_size,
                config.num_perm,
                config.seed,
                compiled=compiled,
            )
            for i in range(0, len(content), 500)
        ]

    # the html column of the worker batches: pages in runs of about a JSON-lines block (`ingest.BLOCK_BYTES`)
    html_tables, run, run_bytes = [], [], 0
    for r in recs:
        run.append(r["html"])
        run_bytes += len(r["html"])
        if run_bytes >= BLOCK_BYTES:
            html_tables.append(pa.table({"html": pa.array(run, pa.string())}))
            run, run_bytes = [], 0
    if run:
        html_tables.append(pa.table({"html": pa.array(run, pa.string())}))
    lines = [r.payload for r in raw if isinstance(r.payload, bytes)]
    bodies = [r["html"].encode("utf-8") for r in recs]

    def inflate() -> int:
        with open(crawl, "rb") as f:
            return sum(len(p) for p in _inflated(f) if isinstance(p, bytes)) if crawl.suffix == ".gz" else 0

    steps: list[tuple[str, Callable[[], object], bool]] = [
        (
            "validate: JSON, URL canonicalization, MD5 (a batch's together), rel=canonical",
            lambda: add_md5s([v for v in (validate(r, md5=False) for r in raw) if isinstance(v, dict)]),
            True,
        ),
        (
            "... of which: JSON decode (orjson, `json` where they could differ)",
            lambda: [decode_json_line(b) for b in lines],
            False,
        ),
        (
            "... JSON decode with `json` alone",
            lambda: [decode_json_line(b, fast=False) for b in lines],
            False,
        ),
        (
            "... MD5 of the page's bytes, eight pages at a time (`_kernels.md5_many`)",
            lambda: _kernels.md5_many(bodies) if _kernels is not None else None,
            False,
        ),
        (
            "... the same by hashlib, one page at a time",
            lambda: [hashlib.md5(b).hexdigest() for b in bodies],
            False,
        ),
        (
            "... XXH3-128 of the same (not used: MD5 is the stored identity)",
            lambda: [xxhash.xxh3_128_hexdigest(b) for b in bodies],
            False,
        ),
        (
            f"parse + extract ({config.normalize})",
            lambda: [parse_page(r["html"], mode=config.normalize) for r in recs],
            True,
        ),
        (
            "words + word hashes (NFKC, casefold, \\w+, XXH3), compiled",
            lambda: [text_words(p.text) for p in parsed],
            True,
        ),
        (
            "... the same, reference path (`re` + a dict of hashes)",
            lambda: [text_words(p.text, compiled=False) for p in parsed],
            False,
        ),
        (
            "exact key (SHA-256 of the joined words) + degenerate test",
            lambda: [
                (
                    hashlib.sha256(joined).hexdigest(),
                    degenerate_reason(
                        p.text, title=p.title, status=None, n_words=len(wh), min_words=config.min_words
                    ),
                )
                for p, (joined, wh) in zip(parsed, tokens, strict=True)
            ],
            True,
        ),
        ("sketch: shingle hashes, SimHash, MinHash, compiled", lambda: sketch(True), True),
        ("... the same, reference path (numpy, batches of 500)", lambda: sketch(False), False),
        (
            "raw HTML into Zstandard blocks (`batches.html_blocks`, ~2 MB of pages a block)",
            lambda: [html_blocks(t) for t in html_tables],
            True,
        ),
        (
            "Arrow table of the sketches",
            lambda: [
                sketch_table(
                    [""] * len(content[i : i + 500]), [tokens[j][1] for j in content[i : i + 500]], config
                )
                for i in range(0, len(content), 500)
            ],
            False,
        ),
    ]
    rows = [(name, cpu_ms_per_page(fn, n, args.repeats), summed) for name, fn, summed in steps]
    if crawl.suffix == ".gz":  # the main process's share: inflating the whole dump, per page of it
        total_pages = sum(1 for _ in read_raw(crawl, detect_format(crawl)))
        rows.append(
            (
                "inflate (ISA-L) of the dump, main process",
                cpu_ms_per_page(inflate, total_pages, args.repeats),
                False,
            )
        )
    total = sum(ms for _, ms, summed in rows if summed)
    print(
        f"{n:,} pages of `{crawl.name}`, normalize={config.normalize}, median of {args.repeats} runs, "
        f"CPU ms per page, one core\n"
    )
    print("| step | CPU ms/page | share |\n|---|---:|---:|")
    for name, ms, summed in rows:
        print(f"| {name} | {ms:.3f} | {f'{ms / total:.0%}' if summed else 'not summed'} |")
    print(f"| **sum** | **{total:.3f}** | |")
    print(
        f"\n100k pages need {total * 100:.0f} CPU-s in the workers alone: {total * 100 / 2:.0f} s on two "
        f"whole cores, {total * 100 / 1.2:.0f} s on the ~1.2 cores two busy processes get on this box."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
