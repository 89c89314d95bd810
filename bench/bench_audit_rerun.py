"""Server time of the Audit page's rerun after a label key, under Streamlit's AppTest.

    python bench/bench_audit_rerun.py --db copy-of-a-database.duckdb [--labels 20] [--profile]

Opens the Audit page on --db (labels are written to it: pass a copy), then clicks Duplicate / Not duplicate
in turn --labels times and times each `at.run()` (the rerun the click causes: the label written, the queue,
the counts and the next pair drawn). Prints the median and the max in milliseconds; --profile prints the
cProfile of all the label reruns, by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time
from pathlib import Path

from streamlit.runtime.scriptrunner import script_runner
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--labels", type=int, default=20)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    os.environ["NEARDUP_DB"] = args.db
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
    timed["on"] = True
    times_ms: list[float] = []
    for i in range(args.labels):
        label = "Duplicate" if i % 2 == 0 else "Not duplicate"
        found = next((b for b in at.button if b.label == label), None)
        assert found is not None, (i, [s.value for s in at.success], [e.value for e in at.error])
        found.click()
        t = time.perf_counter()
        at.run()
        times_ms.append(1000 * (time.perf_counter() - t))
        assert not at.exception, at.exception
    print(
        f"label reruns: {len(times_ms)}, median {statistics.median(times_ms):.0f} ms, max {max(times_ms):.0f} ms"
    )
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(45)


if __name__ == "__main__":
    main()
