"""The 16 KB bench crawl (`make_sample.py --profile bench`, scripts/bench_crawl.py): the crawl the README's
100k and 1M-page figures were measured on, made from the repository alone."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# 400 pages, seed 42, as the team's make_crawl.py (which the README's figures were measured with) writes
# them: the JSON lines uncompressed (gzip's bytes vary with zlib) and the truth CSV.
PINNED_LINES_SHA256 = "ecb1d756d2fd77454a3c38a0895384a4d40ff2cb0bd9e684173b20d7eb6d0bc6"
PINNED_TRUTH_SHA256 = "abed55ff75c4485ebe9f189c011ba901951852c8ffc7a84b83e3f1f48f0ca48a"


def make(tmp_path: Path, *args: str) -> tuple[Path, Path]:
    out, truth = tmp_path / "crawl.jsonl.gz", tmp_path / "truth.csv"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_sample.py"), "--profile", "bench", *args]
        + ["--out", str(out), "--truth", str(truth)],
        check=True,
        capture_output=True,
    )
    return out, truth


def test_the_bench_profile_writes_the_crawl_the_figures_were_measured_on(tmp_path: Path) -> None:
    out, truth = make(tmp_path, "--pages", "400", "--seed", "42")
    lines = gzip.decompress(out.read_bytes())
    assert hashlib.sha256(lines).hexdigest() == PINNED_LINES_SHA256
    assert hashlib.sha256(truth.read_bytes()).hexdigest() == PINNED_TRUTH_SHA256


def test_the_bench_crawl_has_16_kb_pages_and_a_truth_row_per_record(tmp_path: Path) -> None:
    out, truth = make(tmp_path, "--pages", "600", "--seed", "5")
    records = [json.loads(line) for line in gzip.decompress(out.read_bytes()).splitlines()]
    with truth.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(records) == len(rows) == 600
    assert [r["url"] for r in records] == [r["url"] for r in rows]
    assert 14_000 < sum(len(r["html"]) for r in records) / len(records) < 19_000
    kinds = Counter(r["kind"] for r in rows)
    assert kinds["original"] < 560 and sum(v for k, v in kinds.items() if k.startswith("degenerate")) > 0
    clusters = Counter(r["true_cluster"] for r in rows if not r["kind"].startswith("degenerate"))
    assert max(clusters.values()) > 1  # duplicates share their original's cluster


def test_the_bench_crawl_is_the_same_whatever_the_number_of_processes(tmp_path: Path) -> None:
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"crawl_{jobs}.jsonl"  # no .gz: written uncompressed
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "bench_crawl.py"), "--pages", "300", "--seed", "9"]
            + ["--out", str(out), "--jobs", jobs, "--quiet"],
            check=True,
        )
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].count(b"\n") == 300
