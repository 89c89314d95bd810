"""Two `neardup ingest` into the same new database at once: the schema is made once; the second ingest
waits for the first (or says the file is busy), never a traceback, and every dump that loads is whole."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import Crawl, write_jsonl

from neardup.store import Store

ROOT = Path(__file__).resolve().parents[1]
TRIES = 12

# Imports first, then waits for the go file: both processes start their ingest within a millisecond.
_RACER = """
import os, sys, time
from neardup.cli import main
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.0005)
sys.exit(main(sys.argv[2:]))
"""


def test_two_ingests_into_one_new_database(tmp_path: Path, crawl: Crawl) -> None:
    dumps = [
        write_jsonl(tmp_path / "a.jsonl", crawl.records[:20]),
        write_jsonl(tmp_path / "b.jsonl", crawl.records[20:40]),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NEARDUP_LOCK_WAIT_S": "60"}
    for attempt in range(TRIES):
        db = tmp_path / f"new{attempt}.duckdb"
        go = tmp_path / f"go{attempt}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _RACER, str(go), "ingest", str(d), "--db", str(db), "--jobs", "1"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for d in dumps
        ]
        time.sleep(1.0)  # both imported and waiting (a late one still races the other's open)
        go.touch()
        for d, p in zip(dumps, procs, strict=True):
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, (attempt, err)
            assert f"{d}: 20 pages loaded" in out and "Traceback" not in err
        with Store(db, read_only=True) as store:
            assert store.count_pages() == 40, attempt
            assert len(store.sources()) == 2
