"""What an analyst sees on the first request to a freshly started app: the time until the page shows that
work is under way (Streamlit's running indicator, or a spinner's text) and the time until the numbers.

    python bench/bench_app_first_request.py --db bench/data/app.duckdb [--runs 3]

Starts `neardup app --db DB --headless` on a free port per run (a new server: nothing cached), opens
Home in Debian's Chromium and prints the median of each time over the runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from harness import (  # bench/harness.py (this directory is on the path of a script run from it)
    commit,
    machine,
)
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
WORKING = '[data-testid="stStatusWidgetRunningIcon"], [data-testid="stSpinner"]'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_run(db: str) -> tuple[float, float]:
    port = free_port()
    cli = "import sys; from neardup.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", cli, "app", "--db", db, "--headless", "--port", str(port)]
    cmd += ["--address", "127.0.0.1"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
            page = browser.new_page()
            page.set_default_timeout(600_000)
            t = time.perf_counter()
            page.goto(url + "/")
            page.locator(WORKING).first.wait_for(state="visible")
            working = time.perf_counter() - t
            page.get_by_text("Next:").first.wait_for()
            done = time.perf_counter() - t
            browser.close()
        return working, done
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"{machine()}; commit {commit()}; load average {os.getloadavg()[0]:.1f}\n")
    runs = [one_run(str(Path(args.db).resolve())) for _ in range(args.runs)]
    print("| first request | median s |\n|---|---:|")
    print(f"| a sign of work on the page | {statistics.median(w for w, _ in runs):.2f} |")
    print(f"| the numbers on the page | {statistics.median(d for _, d in runs):.2f} |")


if __name__ == "__main__":
    main()
