"""How `learn_rules` grows with the crawl: time and memory on the first N pages of an analysed database.

    python bench/studies/bench_rules_scale.py --db crawl.duckdb --pages 25000 50000 100000 [--profile]

Each size runs in its own process: the analysis of the whole database at the default setting, then
`learn_rules` on the pages with the N smallest page ids (a crawl's first N records). Memory is the peak RSS
the process reached during `learn_rules` minus its RSS before (the analysis is loaded by then). Prints
Markdown; `--profile` prints the top functions of the largest size instead.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_RUN = r"""
import cProfile, json, pstats, resource, sys, time
from neardup import analysis
from neardup.config import Config
from neardup.rules import learn_rules
from neardup.store import Store
db, n, profile = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
config = Config()
with Store(db, read_only=True) as store:
    pages = analysis.analyze(analysis.load_fingerprints(store, config), config).pages
pages = pages.nsmallest(n, "page_id")
def rss_mb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024
before = rss_mb()
peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0, c0 = time.perf_counter(), time.process_time()
if profile:
    prof = cProfile.Profile()
    learned = prof.runcall(learn_rules, pages)
    pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
else:
    learned = learn_rules(pages)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"pages": len(pages), "wall": wall, "cpu": cpu, "grew_mb": max(peak, peak0) - before,
                  "accepted": len(learned.accepted), "rejected": len(learned.rejected)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--pages", type=int, nargs="+", default=[25_000, 50_000, 100_000])
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if args.profile:
        subprocess.run([sys.executable, "-c", _RUN, args.db, str(max(args.pages)), "1"], check=True, env=env)
        return
    load0 = os.getloadavg()[0]
    rows = []
    for n in args.pages:
        out = subprocess.run(
            [sys.executable, "-c", _RUN, args.db, str(n), "0"],
            check=True,
            env=env,
            capture_output=True,
            text=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} cores)\n")
    print("| pages | rules kept / rejected | wall s | CPU s | CPU us per page | memory grew MB |")
    print("|---:|---|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['pages']:,} | {r['accepted']} / {r['rejected']} | {r['wall']:.1f} | {r['cpu']:.1f} | "
            f"{1e6 * r['cpu'] / r['pages']:.0f} | {r['grew_mb']:.0f} |"
        )


if __name__ == "__main__":
    main()
