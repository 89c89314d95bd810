"""Server time of the Audit page's rerun after a label key, under Streamlit's AppTest.

    python bench/bench_audit_rerun.py --db a-database.duckdb [--labels 20] [--profile [--only neardup]]

Copies --db to a temporary directory (the labels are written to the copy), opens the Audit page there with
*pairs per bucket* at its maximum, then clicks Duplicate / Not duplicate in turn --labels times and times
each `at.run()` (the rerun the click causes: the label written, the queue, the counts and the next pair
drawn). Prints the median and the max in milliseconds, and the median CPU milliseconds of the process; --profile prints the cProfile of all the label
reruns, by cumulative time (--only: the rows whose file path contains this).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from streamlit.runtime.scriptrunner import script_runner
from streamlit.testing.v1 import AppTest

from neardup.ui.state import W_PER_BUCKET

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--labels", type=int, default=20)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_audit_"))
    db = tmp / "bench.duckdb"
    shutil.copyfile(args.db, db)
    if Path(f"{args.db}.wal").exists():
        shutil.copyfile(f"{args.db}.wal", f"{db}.wal")
    os.environ["NEARDUP_DB"] = str(db)
    profile = cProfile.Profile() if args.profile else None
    timed = {"on": False}
    if profile:
        # The script runs on AppTest's own thread: profile it there, around the page's execution.
        run_script = script_runner.exec_func_with_error_handling

        def profiled(*a: object, **k: object) -> object:
            if not timed["on"]:
                return run_script(*a, **k)
            profile.enable()
            try:
                return run_script(*a, **k)
            finally:
                profile.disable()

        script_runner.exec_func_with_error_handling = profiled
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page("pages/3_Audit.py").run()
    assert not at.exception, at.exception
    at.sidebar.slider(key=W_PER_BUCKET).set_value(30).run()
    assert not at.exception, at.exception
    timed["on"] = True
    times_ms: list[float] = []
    cpu_ms: list[float] = []
    for i in range(args.labels):
        label = "Duplicate" if i % 2 == 0 else "Not duplicate"
        found = next((b for b in at.button if b.label == label), None)
        assert found is not None, (i, [s.value for s in at.success], [e.value for e in at.error])
        found.click()
        t, c = time.perf_counter(), time.process_time()
        at.run()
        times_ms.append(1000 * (time.perf_counter() - t))
        cpu_ms.append(1000 * (time.process_time() - c))
        assert not at.exception, at.exception
    print(
        f"label reruns: {len(times_ms)}, median {statistics.median(times_ms):.0f} ms, max {max(times_ms):.0f} ms; "
        f"CPU (the process's threads, the prefetch's too) median {statistics.median(cpu_ms):.0f} ms"
    )
    shutil.rmtree(tmp)
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.only, 60)


if __name__ == "__main__":
    main()
