"""bench/harness.py, which the benchmarks' figures rest on: the process-tree monitor counts a child's own
children (memory and CPU), the CPU median leaves out the warm-up, and a crawl is cut into shards at its gzip
members (the Spark bench's input)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import harness  # noqa: E402

# A parent that starts a child holding 80 MB and spinning the CPU, then waits for it.
TREE = """
import subprocess, sys
child = "import time; b = bytearray(80 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); t = time.process_time()\\n" \\
        "while time.process_time() - t < 0.6: pass\\ntime.sleep(0.5)"
subprocess.run([sys.executable, "-c", child], check=True)
"""


def test_the_monitor_sums_memory_and_cpu_over_the_whole_process_tree() -> None:
    code, samples, killed = harness.run_monitored(
        [sys.executable, "-c", TREE], max_rss_mb=4000, interval=0.05, pss_every=1
    )
    assert code == 0 and not killed
    assert max(s[4] for s in samples) >= 2  # the parent and its child
    assert max(s[1] for s in samples) > 80  # the child's 80 MB are in the tree's RSS
    assert max(s[5] for s in samples) > 80  # ... and it is the largest process
    assert samples[-1][3] >= 0.5  # the child's CPU seconds count, not the idle parent's
    assert max(s[6] for s in samples) < 0.5  # the main process's own CPU


def test_the_memory_guard_kills_the_tree() -> None:
    code, _samples, killed = harness.run_monitored([sys.executable, "-c", TREE], max_rss_mb=40, interval=0.05)
    assert code != 0 and killed.startswith("killed by the memory guard")


def test_the_cpu_median_runs_the_warm_up_and_setup_untimed() -> None:
    calls: list[str] = []
    median, last = harness.cpu_median(
        lambda: calls.append("run") or len(calls), 3, warmup=True, setup=lambda: calls.append("setup")
    )
    assert calls == ["setup", "run"] * 4 and last == 8 and median >= 0
    assert "nproc" in harness.machine() and "Python" in harness.machine()


def test_the_crawl_is_cut_into_shards_at_its_gzip_members(tmp_path: Path) -> None:
    gz = tmp_path / "crawl_600_s3.jsonl.gz"
    subprocess.run(
        [sys.executable, str(harness.MAKE_SAMPLE), "--profile", "bench", "--pages", "600", "--seed", "3"]
        + ["--out", str(gz), "--truth", str(tmp_path / "truth.csv")],
        check=True,
    )
    shards = harness.shard_crawl(gz, 250)
    # the same bytes, cut between members (200 records each): shards of 400 and 200 records
    assert b"".join(p.read_bytes() for p in shards) == gz.read_bytes()
    lines = [gzip.decompress(p.read_bytes()).splitlines() for p in shards]
    assert [len(x) for x in lines] == [400, 200]
    assert all(json.loads(line)["url"] for x in lines for line in x)  # whole records only
    assert harness.shard_crawl(gz, 250) == shards  # cached beside the crawl
