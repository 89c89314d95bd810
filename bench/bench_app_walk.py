"""The analyst's walk through the app on a large database, in this process (Streamlit's AppTest runs the
real pages and their caches): the time of each step and the process's resident memory after it.

    python bench/bench_app_walk.py --db bench/data/app.duckdb [--skip-fingerprints] [--skip-other-pages]

Steps: Home at the default setting; four threshold moves to values not seen before (Home); the first
render of every other page; two threshold moves on Clusters; the URL rules page, then two threshold moves
on it; then shingle sizes 4 and 6 and SimHash at 6, 5 and 4 (Home; a size whose fingerprints are not
stored answers with an estimate from a sample, and a second row times the exact numbers the background
computation brings, the long part); `--stop-after STEP` ends the walk after the step of that name. Prints
one Markdown row per step: wall seconds, the process's CPU seconds (the figure to compare on a loaded box),
resident memory after it and its peak during the step (the kernel's high-water mark, reset before each
step where /proc/self/clear_refs allows); run it on one commit and another (PYTHONPATH) for before/after.
Medians of the threshold moves.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import time
from pathlib import Path

from harness import (  # bench/harness.py (this directory is on the path of a script run from it)
    commit,
    machine,
)
from streamlit.testing.v1 import AppTest

from neardup.ui.data import FINGERPRINT_JOBS
from neardup.ui.state import KEY_CONFIG, W_METHOD, W_SHINGLE, w_threshold

ESTIMATE = "Estimate from"  # Home's label of an estimate (neardup.ui.pending)

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 3600
STOP_AFTER: str | None = None  # --stop-after: the step the walk ends with


class WalkEnd(Exception):
    """The step named by --stop-after is done."""


PAGES = ["2_Explore", "3_Audit", "4_Tune", "5_Clusters", "6_Export", "1_Load"]


def rss_mb(field: str = "VmRSS") -> float:
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


PEAK_MB = 0.0  # the walk's peak so far, of the steps before the high-water mark's last reset


def reset_peak() -> None:
    """Start the kernel's high-water mark (VmHWM) again from the current resident size (Linux 4.0+): the
    next reading is the peak since. Where that is refused, readings stay the peak since the start."""
    global PEAK_MB
    PEAK_MB = max(PEAK_MB, rss_mb("VmHWM"))
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def walk_peak_mb() -> float:
    return max(PEAK_MB, rss_mb("VmHWM"))


def step(name: str, at: AppTest, act) -> float:
    reset_peak()
    t, cpu_start = time.perf_counter(), time.process_time()
    act(at)
    at.run(timeout=TIMEOUT_S)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu_start
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]  # a page's failure, shown in one line (ui.guard)
    print(f"| {name} | {seconds:,.2f} | {cpu:,.2f} | {rss_mb():,.0f} | {rss_mb('VmHWM'):,.0f} |", flush=True)
    if name == STOP_AFTER:
        raise WalkEnd
    if any(ESTIMATE in info.value for info in at.info):  # the exact set is computed in the background
        config = at.session_state[KEY_CONFIG]
        FINGERPRINT_JOBS.wait(os.environ["NEARDUP_DB"], config, TIMEOUT_S)
        at.run(timeout=TIMEOUT_S)  # what Home's progress fragment starts when the set is in
        assert not at.exception, at.exception
        exact, cpu = time.perf_counter() - t, time.process_time() - cpu_start
        print(
            f"| {name}: the exact numbers (background) | {exact:,.2f} | {cpu:,.2f} | {rss_mb():,.0f} "
            f"| {rss_mb('VmHWM'):,.0f} |",
            flush=True,
        )
    return seconds


def threshold(t: float):
    return lambda at: at.slider(key=w_threshold("containment")).set_value(t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--skip-fingerprints", action="store_true", help="stop before the shingle sizes")
    ap.add_argument(
        "--skip-other-pages",
        action="store_true",
        help="Home and URL rules only: no first visit of the other pages, no threshold move on Clusters",
    )
    ap.add_argument("--stop-after", help='end the walk after this step (e.g. "Clusters, first visit")')
    args = ap.parse_args()
    global STOP_AFTER
    STOP_AFTER = args.stop_after
    try:
        walk(args)
    except WalkEnd:
        print(f"| (peak) | | | | {walk_peak_mb():,.0f} |", flush=True)


def walk(args: argparse.Namespace) -> None:
    os.environ["NEARDUP_DB"] = str(Path(args.db).resolve())
    os.environ.pop("NEARDUP_CONFIG", None)
    os.chdir(ROOT)
    print(f"{machine()}; commit {commit()}; load average {os.getloadavg()[0]:.1f}\n")
    print(
        "| step | seconds | CPU s | RSS MB | peak MB |\n|---|---:|---:|---:|---:|\n"
        f"| (start) | | | {rss_mb():,.0f} | {rss_mb('VmHWM'):,.0f} |"
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S)
    step("Home, first run (default setting)", at, lambda at: None)
    moves = [
        step(f"Home, threshold -> {t} (not seen before)", at, threshold(t)) for t in (0.81, 0.83, 0.86, 0.9)
    ]
    print(f"| Home, threshold move: median | {statistics.median(moves):,.2f} | | | |")
    for page in [] if args.skip_other_pages else PAGES:
        step(
            f"{page.split('_', 1)[1]}, first visit",
            at,
            lambda at, page=page: at.switch_page(f"pages/{page}.py"),
        )
    if not args.skip_other_pages:
        step("Clusters", at, lambda at: at.switch_page("pages/5_Clusters.py"))
        for t in (0.84, 0.87):
            step(f"Clusters, threshold -> {t} (not seen before)", at, threshold(t))
    step("URL rules, first visit", at, lambda at: at.switch_page("pages/7_URL_rules.py"))
    for t in (0.82, 0.85):
        step(f"URL rules, threshold -> {t}", at, threshold(t))
    step("Home", at, lambda at: at.switch_page("app.py"))
    print(f"| (peak) | | | | {walk_peak_mb():,.0f} |", flush=True)
    if args.skip_fingerprints:
        return
    for k in (4, 6):
        step(f"Home, shingle size {k}", at, lambda at, k=k: at.slider(key=W_SHINGLE).set_value(k))
    step("Home, SimHash (shingle size 6)", at, lambda at: at.radio(key=W_METHOD).set_value("simhash"))
    for k in (5, 4):
        step(f"Home, SimHash shingle size {k}", at, lambda at, k=k: at.slider(key=W_SHINGLE).set_value(k))
    print(f"| (end) | | | {rss_mb():,.0f} | |")
    print(f"| (peak) | | | | {walk_peak_mb():,.0f} |")


if __name__ == "__main__":
    main()
