"""A shingle-size or method change in a real browser on a large database: the seconds from the slider's key to
the estimate on Home ("Estimate from N of M pages"), and to the exact numbers that replace it (the background
computation's end), with the app server's resident memory (its own process; the workers of a computation are
children that come and go) after each.

    python bench/bench_app_estimate.py --db bench/data/app100k.duckdb [--steps 7,8,simhash]

The database is copied first (the steps store fingerprint sets); the app starts on the copy, Home opens at
the default setting, then each step changes one control: a number moves the shingle slider to that size, a
method name switches the method. A step to a setting whose fingerprints are stored shows no estimate (its
row says so). Prints a Markdown table with the machine, the commit and the load average.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from harness import TICK, commit, machine, process_tree, rss_kb  # noqa: E402  (bench/harness.py)
from live_app import launch_browser, serving, slider_thumb, wait_idle  # noqa: E402

ESTIMATE = "Estimate from"
EXACT = "Next:"  # Home's last line, drawn with the exact numbers only
TIMEOUT_MS = 1_800_000


# Home drawn at a setting: the caption naming it, the estimate's label or the exact page's last line, and no
# script running.
DRAWN_JS = """(setting) => {
    const all = (id) => [...document.querySelectorAll(`[data-testid="${id}"]`)].map(e => e.innerText);
    const texts = all('stMarkdownContainer');
    return all('stCaptionContainer').some(t => t.startsWith('Database ') && t.includes(setting))
        && texts.some(t => t.startsWith('Estimate from') || t.startsWith('Next:'))
        && document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state') === 'notRunning';
}"""


def setting_text(step: str, shingle: int) -> str:
    """What Home's caption says of the setting a step leads to (`report.describe_config`)."""
    return f"shingles of {shingle} words" if step.isdigit() else f", {step}, shingles of {shingle} words"


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cpu_s(pids: list[int]) -> float:
    """CPU seconds of these processes and of the children they reaped (a pool's workers that exited)."""
    total = 0.0
    for pid in pids:
        try:
            rest = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in rest[11:15]) / TICK
    return total


def change(page: object, step: str, shingle: int) -> int:
    """Move the shingle slider to `step` (a size) or switch the method (a name); the shingle size after."""
    if step.isdigit():
        thumb = slider_thumb(page, "Shingle size (words)")
        thumb.focus()
        target = int(step)
        for _ in range(abs(target - shingle)):
            page.keyboard.press("ArrowRight" if target > shingle else "ArrowLeft")
        return target
    page.locator('[data-testid="stRadio"]', has_text="Method").get_by_text(step, exact=True).click()
    return shingle


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--steps", default="7,8,simhash", help="shingle sizes and methods, in order")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_app_estimate_"))
    db = tmp / "app.duckdb"
    shutil.copy(args.db, db)
    print(f"{machine()}; commit {commit()}; load average {loadavg()} (start)\n")
    print(
        "| step | to the estimate (s) | its CPU s (server + workers) | estimate | to the exact numbers (s) "
        "| server RSS MB |"
    )
    print("|---|---:|---:|---|---:|---:|")
    try:
        with serving(db, tmp, 0) as srv, launch_browser() as b:
            page = b.page
            page.set_default_timeout(TIMEOUT_MS)
            t0 = time.perf_counter()
            page.goto(srv.url + "/")
            page.get_by_text(EXACT).first.wait_for()
            wait_idle(page)
            rss = rss_kb(srv.proc.pid) / 1024
            print(
                f"| Home, default setting | | | | {time.perf_counter() - t0:,.1f} | {rss:,.0f} |", flush=True
            )
            shingle = 5
            for step in args.steps.split(","):
                pids = list(process_tree(srv.proc.pid))
                cpu0, t0 = cpu_s(pids), time.perf_counter()
                shingle = change(page, step, shingle)
                estimate = page.get_by_text(ESTIMATE).first
                exact = page.get_by_text(EXACT).first
                # the run of the new setting drawn to its end: its caption, then the estimate or the exact numbers
                page.wait_for_function(DRAWN_JS, arg=setting_text(step, shingle))
                to_estimate = time.perf_counter() - t0
                pids = sorted(set(pids) | set(process_tree(srv.proc.pid)))
                cpu = cpu_s(pids) - cpu0
                shown = estimate.inner_text().split("(")[0].strip() if estimate.count() else "(stored: exact)"
                exact.wait_for()
                wait_idle(page)
                to_exact = time.perf_counter() - t0
                rss = rss_kb(srv.proc.pid) / 1024
                first, spent = (
                    ("", "") if shown == "(stored: exact)" else (f"{to_estimate:,.1f}", f"{cpu:,.1f}")
                )
                print(f"| {step} | {first} | {spent} | {shown} | {to_exact:,.1f} | {rss:,.0f} |", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nload average {loadavg()} (end)")


if __name__ == "__main__":
    main()
