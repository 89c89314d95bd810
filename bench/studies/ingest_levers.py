#!/usr/bin/env python3
"""Ingest levers on real-size pages, each timed alone: CPU ms per page, median of runs, one core.

    .venv/bin/python bench/studies/ingest_levers.py --input real.jsonl.gz --pages 1500

1. `rel=canonical`: the regex scan `validate` runs over each page's first 64 KB: the most taking the link
   from the extractor's parse could save.
2. The page's bytes for its MD5: `str.encode` then MD5, against `_html.utf8_md5` (MD5 of the str's cached
   UTF-8, the form the parser and Arrow read too). Each on freshly decoded strs, as a worker has them.
3. The return trip: the worker results of `batches.ingest_arrow` (pages and sketches as Arrow tables) sent
   through a pipe as the process pool sends them (pickled, `Connection.send`) by a forked child and
   received in this process; the CPU of each side, with the HTML column and with it emptied: what carrying
   the HTML back costs.
4. The DuckDB write: the same tables appended through `Store.add_ingested` in the engine's insert sizes
   (2,048 rows or 64 MB) in a bulk load, checkpointed at row group ends and at the end: process CPU (DuckDB's
   threads included), file size, and the CPU of reading 200 pages' HTML back (`Store.page_source`), for
   DuckDB's default compression of the HTML column (ZSTD above 4 KB strings), ZSTD disabled (FSST or none,
   DuckDB chooses), no compression, row groups of 2,048 and 16,384 rows, and the HTML emptied (the floor).
Prints Markdown.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: harness.py
from harness import cpu_median  # noqa: E402

from neardup import _html, batches, engine  # noqa: E402
from neardup import store as store_mod
from neardup.config import Config
from neardup.ingest import detect_format, file_sha256, read_batches, read_raw
from neardup.records import rel_canonical_href
from neardup.store import Store


def median_of(
    step: Callable[[], object], n: int, repeats: int, setup: Callable[[], object] | None = None
) -> float:
    """Median CPU milliseconds a page of `step` over `n` pages, after a warm-up; `setup` before each run."""
    return cpu_median(step, repeats, warmup=True, setup=setup)[0] * 1000 / n


def _sender(conn: Any, results: list[Any], spool: str | None) -> None:
    t = time.process_time()
    for r in results:
        conn.send((Spooled(r[0], spool), *r[1:]) if spool else r)
    conn.send(("cpu", time.process_time() - t))
    conn.close()


class Spooled:
    """The pages table without its HTML column, and the Arrow IPC file (in a spool directory) that holds it."""

    def __init__(self, table: pa.Table, spool: str) -> None:
        self.path = os.path.join(spool, f"{os.getpid()}-{time.monotonic_ns()}.arrow")
        html = table.select(["html"])
        with pa.OSFile(self.path, "wb") as f, pa.ipc.new_file(f, html.schema) as w:
            w.write_table(html)
        self.table = without_html(table)

    def load(self) -> pa.Table:
        html = pa.ipc.open_file(pa.memory_map(self.path)).read_all()
        os.unlink(self.path)  # the mapping stays readable while the table lives
        i = self.table.schema.get_field_index("html")
        return self.table.set_column(i, "html", html.column("html"))


def return_trip(results: list[Any], n_pages: int, spool: str | None = None) -> tuple[float, float, float]:
    """(child CPU ms/page, parent CPU ms/page, MB sent) of sending `results` as the pool sends them; with
    `spool`, the HTML goes through an Arrow IPC file there instead, memory-mapped by the receiver."""
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_sender, args=(send, results, spool))
    child.start()
    send.close()
    t = time.process_time()
    got = [recv.recv() for _ in results]
    if spool:
        got = [(r[0].load(), *r[1:]) for r in got]
        # DuckDB reads every byte: each mapped memory page faults in once (one byte of each touched here)
        for t_ in got:
            int(np.frombuffer(t_[0].column("html").chunks[0].buffers()[2], np.uint8)[::4096].sum())
    parent = time.process_time() - t
    _, child_cpu = recv.recv()
    child.join()
    nbytes = sum(r[0].nbytes + r[1].nbytes for r in got)
    return child_cpu * 1000 / n_pages, parent * 1000 / n_pages, nbytes / 1e6


def without_html(table: pa.Table) -> pa.Table:
    i = table.schema.get_field_index("html")
    return table.set_column(i, "html", pa.nulls(table.num_rows, pa.string()))


def write_run(
    tables: list[tuple[pa.Table, pa.Table]],
    tmp: Path,
    *,
    settings: list[str],
    row_group_rows: int,
    config: Config,
    reads: int,
) -> tuple[float, float, float, float]:
    """(CPU ms/page of the load, wall s, MB of file, CPU ms per page read back) for one DuckDB setting."""
    path = tmp / f"w{time.monotonic_ns()}.duckdb"
    store_mod.ROW_GROUP_ROWS = row_group_rows  # read when the file is attached
    store = Store(path, bulk=True)
    for s in settings:
        store.cursor().execute(s)
    source_id = store.begin_source("bench", f"{time.monotonic_ns():064d}", "jsonl")
    gc.collect()
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    next_id, rows = 1, 0
    with store.bulk_load():
        pending: list[tuple[pa.Table, pa.Table]] = []

        def flush() -> None:
            nonlocal next_id, rows
            batch = pa.concat_tables([p for p, _ in pending])
            sketches = pa.concat_tables([s for _, s in pending])
            ids = pa.array(range(next_id, next_id + batch.num_rows), pa.int64())
            full = (rows + batch.num_rows) // row_group_rows > rows // row_group_rows
            store.add_ingested(
                batch.append_column("page_id", ids),
                source_id,
                config.norm_key,
                sketches,
                config.sketch_key,
                checkpoint=full,
            )
            next_id += batch.num_rows
            rows += batch.num_rows
            pending.clear()

        for pages, sketches in tables:
            pending.append((pages, sketches))
            if (
                sum(p.num_rows for p, _ in pending) >= engine.INSERT_ROWS
                or sum(p.nbytes for p, _ in pending) >= engine.INSERT_BYTES
            ):
                flush()
        if pending:
            flush()
    store.close()
    load_cpu, wall = time.process_time() - t_cpu, time.perf_counter() - t_wall
    size_mb = os.path.getsize(path) / 1e6
    reader = Store(path, read_only=True)
    ids = random.Random(1).sample(range(1, rows + 1), min(reads, rows))
    t = time.process_time()
    for i in ids:
        reader.page_source(i)
    read_ms = (time.process_time() - t) * 1000 / len(ids)
    reader.close()
    path.unlink()
    store_mod.ROW_GROUP_ROWS = ROW_GROUP_ROWS
    return load_cpu * 1000 / rows, wall, size_mb, read_ms


ROW_GROUP_ROWS = store_mod.ROW_GROUP_ROWS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", type=Path, required=True)
    ap.add_argument("--pages", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--reads", type=int, default=200)
    ap.add_argument("--only", default="rel,md5,trip,write")
    args = ap.parse_args()
    only = set(args.only.split(","))
    config = Config()
    fmt = detect_format(args.input)
    raw = list(islice(read_raw(args.input, fmt), args.pages))
    payloads = [r.payload for r in raw if isinstance(r.payload, bytes)]
    n = len(raw)
    htmls = [orjson.loads(p)["html"] for p in payloads]
    mb = sum(len(h.encode()) for h in htmls) / 1e6
    print(
        f"{n:,} pages of `{args.input.name}` ({mb:.0f} MB of HTML, {mb * 1e3 / n:.0f} KB a page), load average "
        f"{os.getloadavg()[0]:.1f} at the start\n"
    )
    print("| lever | what | CPU ms/page |\n|---|---|---:|")
    if "rel" in only:
        ms = median_of(lambda: [rel_canonical_href(h) for h in htmls], n, args.repeats)
        print(f"| (a) rel=canonical | regex scan of the first 64 KB in `validate` | {ms:.3f} |")
    if "md5" in only:
        fresh: list[str] = []

        def refill() -> None:
            fresh[:] = [orjson.loads(p)["html"] for p in payloads]

        enc = median_of(
            lambda: [hashlib.md5(h.encode("utf-8")).hexdigest() for h in fresh], n, args.repeats, refill
        )
        view = median_of(lambda: [_html.utf8_md5(h) for h in fresh], n, args.repeats, refill)
        md5_only = (
            median_of(lambda: [hashlib.md5(b).hexdigest() for b in bodies], n, args.repeats, None)
            if (bodies := [h.encode() for h in htmls])
            else 0.0
        )
        print(f"| (d) MD5 bytes | `str.encode` + MD5 | {enc:.3f} |")
        print(
            f"| (d) MD5 bytes | `_html.utf8_md5` (the str's cached UTF-8; the parser then reads it free) | {view:.3f} |"
        )
        print(f"| (d) MD5 bytes | MD5 alone of the encoded bytes | {md5_only:.3f} |")

        # what the parser pays when the UTF-8 form is not cached yet, and when it is
        def parse_all() -> None:
            for h in fresh:
                _html.extract(h, True, ("script", "style"), 30, 0, 0, 0, False)

        cold = median_of(parse_all, n, args.repeats, refill)
        warm = median_of(parse_all, n, args.repeats, lambda: (refill(), [_html.utf8_md5(h) for h in fresh]))
        print(f"| (d) parse | `_html.extract` on fresh strs (UTF-8 made by the parser) | {cold:.3f} |")
        print(f"| (d) parse | the same after `utf8_md5` cached their UTF-8 | {warm:.3f} |")
    if "trip" not in only and "write" not in only:
        return
    chunks: list[Any] = []
    total = 0
    for chunk in read_batches(args.input, fmt, batch_records=engine.BATCH):
        chunk_list = list(chunk)
        chunks.append(chunk_list)
        total += len(chunk_list)
        if total >= n:
            break
    results = [batches.ingest_arrow((c, config)) for c in chunks]
    n_pages = sum(r[0].num_rows for r in results)
    if "trip" in only:
        for label, res, spool in (
            ("with the HTML", results, None),
            ("HTML column emptied", [(without_html(r[0]), *r[1:]) for r in results], None),
            (
                "HTML through an Arrow file in /dev/shm, memory-mapped, every memory page read",
                results,
                "/dev/shm",
            ),
        ):
            runs = [return_trip(res, n_pages, spool) for _ in range(args.repeats)]
            child = statistics.median(r[0] for r in runs)
            parent = statistics.median(r[1] for r in runs)
            print(
                f"| (b) return trip, {label} ({runs[0][2]:.0f} MB in {len(res)} batches) | worker: pickle + send | "
                f"{child:.3f} |"
            )
            print(f"| (b) return trip, {label} | main process: receive + unpickle | {parent:.3f} |")
    if "write" in only:
        tables = [(r[0], r[1]) for r in results]
        variants: list[tuple[str, list[str], int, bool]] = [
            ("default (ZSTD for the HTML), 16,384-row groups", [], 16_384, True),
            ("ZSTD disabled", ["SET GLOBAL disabled_compression_methods = 'zstd'"], 16_384, True),
            ("no compression", ["SET GLOBAL force_compression = 'uncompressed'"], 16_384, True),
            ("default, 2,048-row groups", [], 2_048, True),
            ("default, HTML column emptied (the floor)", [], 16_384, False),
        ]
        print(
            "\n| DuckDB write | load CPU ms/page | wall s | file MB | KB/page | read one page's HTML, CPU ms |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
            for label, settings, rg, html in variants:
                data = tables if html else [(without_html(p), s) for p, s in tables]
                runs = [
                    write_run(
                        data, Path(tmp), settings=settings, row_group_rows=rg, config=config, reads=args.reads
                    )
                    for _ in range(args.repeats)
                ]
                med = [statistics.median(r[i] for r in runs) for i in range(4)]
                print(
                    f"| {label} | {med[0]:.3f} | {med[1]:.1f} | {med[2]:.0f} | {med[2] * 1e3 / n_pages:.1f} | "
                    f"{med[3]:.2f} |",
                    flush=True,
                )
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; file sha {file_sha256(args.input)[:12]}")


if __name__ == "__main__":
    main()
