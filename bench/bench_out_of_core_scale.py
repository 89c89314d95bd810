#!/usr/bin/env python3
"""Peak memory of the out-of-core candidate search as the units grow, under one memory limit: the units of
a crawl (their MinHash signatures and shingle counts) taken 1, 2, 3 ... times, each copy its own crawl.

    PYTHONPATH=. .venv/bin/python bench/bench_out_of_core_scale.py --db /tmp/ooc/nd.duckdb \
        --workdir /tmp/ooc/scale --copies 1 2 3 --limit 1GB --json /tmp/ooc/scale.json

The units are those of the fingerprint set `--db` stored last (read once into `<workdir>/signatures.npy`).
Copy c > 0 of a unit has its signature XORed with one random word per permutation: within a copy the
signatures agree where the unit's do, so each copy has the crawl's buckets, candidates and pairs, and no
band row of one copy equals another's (so no pair across copies). Each run (a child process) writes the
copies' signatures to a spill folder as `neardup fingerprints` does out of core and runs its candidate
search (`stages.pairs.minhash_candidates` over `SpilledUnits.mapped()`: LSH bands, the size-class pass, the pairs
deduplicated on disk), sampling its RSS every 0.1 s. Exact verification is not run (it reads texts: the
units' sets of a copy are the crawl's); what it holds a unit is counted in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import commit, machine  # noqa: E402


def extract(db: Path, out: Path) -> None:
    """The signatures and shingle counts of the fingerprint set stored last in `db`, by unit id."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        (key,) = con.execute(
            "SELECT fingerprint_key FROM fingerprint_sets ORDER BY computed_at DESC LIMIT 1"
        ).fetchall()[0]
        n, num_perm = con.execute(
            "SELECT count(*), any_value(octet_length(minhash)) // 4 FROM units WHERE fingerprint_key = ?",
            [key],
        ).fetchall()[0]
        sigs = np.lib.format.open_memmap(
            out / "signatures.npy", mode="w+", dtype=np.uint32, shape=(n, num_perm)
        )
        counts = np.empty(n, np.int32)
        done = 0
        query = con.sql(
            "SELECT n_shingles, minhash FROM units WHERE fingerprint_key = $key ORDER BY unit_id",
            params={"key": key},
        )
        for batch in query.to_arrow_reader(50_000):
            rows = batch.to_pydict()
            m = len(rows["n_shingles"])
            sigs[done : done + m] = np.frombuffer(b"".join(rows["minhash"]), np.uint32).reshape(m, num_perm)
            counts[done : done + m] = rows["n_shingles"]
            done += m
        sigs.flush()
    np.save(out / "n_shingles.npy", counts)


def run_copies(workdir: Path, copies: int, limit: str, units: int | None = None) -> dict[str, Any]:
    """One run (in this process): the search over `copies` copies of the units (the first `units` of
    them, or all) under `limit`."""
    from neardup.candidates import lsh_threshold
    from neardup.config import Config
    from neardup.spill import SpillDir, SpillPlan, parse_memory_limit
    from neardup.stages.pairs import SpilledUnits, minhash_candidates

    config = Config()
    counts = np.load(workdir / "n_shingles.npy")[:units]
    n, num_perm = len(counts), np.load(workdir / "signatures.npy", mmap_mode="r").shape[1]
    rng = np.random.default_rng(7)
    masks = [np.zeros(num_perm, np.uint32)] + [
        rng.integers(0, 2**32, num_perm, dtype=np.uint32) for _ in range(copies - 1)
    ]
    stage, peaks, done = ["write"], dict[str, float](), threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            with open("/proc/self/statm") as f:
                mb = int(f.read().split()[1]) * 4096 / 2**20
            peaks[stage[0]] = max(peaks.get(stage[0], 0.0), mb)

    threading.Thread(target=sample, daemon=True).start()
    t0, cpu0 = time.perf_counter(), time.process_time()
    limit_bytes = parse_memory_limit(limit)
    plan = SpillPlan.for_limit(limit_bytes, num_perm)
    with SpillDir(workdir) as spill:
        sigs = spill.array("signatures", np.uint32, (num_perm,))
        for mask in masks:
            # read a piece at a time from the file, so that its pages are not this process's
            with open(workdir / "signatures.npy", "rb") as f:
                if np.lib.format.read_magic(f) == (1, 0):  # on to the first row
                    np.lib.format.read_array_header_1_0(f)
                else:
                    np.lib.format.read_array_header_2_0(f)
                for lo in range(0, n, plan.copy_rows):
                    rows = min(plan.copy_rows, n - lo)
                    piece = np.fromfile(f, np.uint32, rows * num_perm).reshape(rows, num_perm)
                    sigs.append(piece ^ mask)
        units = SpilledUnits(
            exact_keys=np.empty(0, "S64"),
            n_shingles=np.tile(counts, copies),
            simhash=None,
            signatures=sigs.read(),
            spill=spill,
            plan=plan,
        )
        stage[0] = "candidates"
        t_search, cpu_search = time.perf_counter(), time.process_time()
        a, _, _, _, stats = minhash_candidates(config, units.signatures, units.n_shingles, units.mapped())
        search = (time.perf_counter() - t_search, time.process_time() - cpu_search)
        disk = spill.bytes_used()
    done.set()
    return {
        "copies": copies,
        "units": n * copies,
        "limit": limit,
        "lsh_threshold": lsh_threshold(config.minhash_floor, config.similarity, config.min_size_ratio),
        "pairs": len(a),
        "candidates": stats.candidates,
        "search_wall_s": round(search[0], 1),
        "search_cpu_s": round(search[1], 1),
        "total_cpu_s": round(time.process_time() - cpu0, 1),
        "wall_s": round(time.perf_counter() - t0, 1),
        "peak_rss_mb": {k: round(v) for k, v in peaks.items()},
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "spill_mb": round(disk / 2**20),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", help="a database with a MinHash fingerprint set (read only)")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--copies", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--limit", default="1GB")
    ap.add_argument("--units", type=int, help="the first this many units of the crawl (default: all)")
    ap.add_argument("--json")
    ap.add_argument("--run", type=int, help=argparse.SUPPRESS)  # a child: one run of this many copies
    args = ap.parse_args()
    work = Path(args.workdir)
    if args.run:
        print(json.dumps(run_copies(work, args.run, args.limit, args.units)))
        return
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "signatures.npy").exists():
        if not args.db:
            raise SystemExit("--db: the database to take the units from")
        extract(Path(args.db), work)
    out: dict[str, Any] = {"commit": commit(), "machine": machine(), "units": args.units, "runs": []}
    for copies in args.copies:
        cmd = [sys.executable, __file__, "--workdir", str(work), "--limit", args.limit, "--run", str(copies)]
        cmd += ["--units", str(args.units)] if args.units else []
        result = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        print(json.dumps(result), flush=True)
        out["runs"].append(result)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
