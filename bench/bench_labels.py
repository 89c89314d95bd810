"""Time a labels.csv import: the read as the Export page reads it, then `Store.import_labels`.

    python bench/bench_labels.py [--rows 1000000] [--repeat 3]

Writes a labels.csv of --rows distinct pairs (timed, with labeler and note, a tenth of the notes
beginning with '=' so they are defused) into a temporary folder, imports it --repeat times into a fresh
database each time, and prints the median seconds, rows/s and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from neardup.csvsafe import to_csv
from neardup.store import Store


def make_labels(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    t0 = datetime(2026, 1, 1)
    ids = np.arange(n)
    return pd.DataFrame(
        {
            "url_a": [f"https://a.example/page/{i}" for i in ids],
            "md5_a": "",
            "url_b": [f"https://b.example/page/{i}" for i in ids],
            "md5_b": "",
            "label": rng.choice(["duplicate", "not", "unsure"], n),
            "category": None,
            "note": np.where(ids % 10 == 0, "=SUM(1,2)", "looks the same"),
            "labeler": rng.choice(["ana", "ben", "chi"], n),
            "labeled_at": [str(t0 + timedelta(seconds=int(s))) for s in rng.integers(0, 10**7, n)],
            "setting": None,
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "labels.csv"
        to_csv(make_labels(args.rows), csv)
        read_s, import_s = [], []
        for i in range(args.repeat):
            t = time.perf_counter()
            frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
            read_s.append(time.perf_counter() - t)
            with Store(Path(tmp) / f"run{i}.duckdb") as store:
                t = time.perf_counter()
                added = store.import_labels(frame)
                import_s.append(time.perf_counter() - t)
            assert added == args.rows, added
            del frame
    read, imp = statistics.median(read_s), statistics.median(import_s)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{args.rows:,} labels: read_csv {read:.2f} s, import_labels {imp:.2f} s "
        f"({args.rows / imp:,.0f} rows/s), read + import {read + imp:.2f} s; peak RSS {peak_mb:,.0f} MB "
        f"(medians of {args.repeat})"
    )


if __name__ == "__main__":
    main()
