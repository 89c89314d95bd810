"""Key press to the next pair drawn on the Audit page, in a real browser (Chromium headless, 1400x900).

    python bench/bench_audit_browser.py --db a-database.duckdb [--labels 30] [--tree DIR] [--repeat 1]

Copies --db to a temporary directory (the labels go to the copy), starts the app of --tree (default: this
checkout; another tree, e.g. an older commit's `git archive`, compares before and after) on it, opens
Audit with *pairs per bucket* at its maximum and labels --labels pairs by the keys d / n in turn. Each key
press is timed until the next pair's caption and URLs are drawn; the script run is then let finish before
the next key. Prints the median and the max in milliseconds, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
sys.path.insert(0, str(ROOT / "tests"))
from test_browser import settled_value, slider_thumb, wait_idle  # noqa: E402
from test_browser_labeling import key_to_next_pair_ms  # noqa: E402


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def start(tree: Path, db: Path, log: Path) -> tuple[str, subprocess.Popen[bytes]]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "NEARDUP_DB": str(db), "PYTHONPATH": str(tree)}
    env.pop("NEARDUP_CONFIG", None)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"),
                *("--server.port", str(port), "--server.address", "127.0.0.1"),
                *("--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"),
            ],
            cwd=tree,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return url, proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"the app did not start: {log.read_text()[-2000:]}")


def run(tree: Path, db_in: Path, n_labels: int) -> list[float]:
    tmp = Path(tempfile.mkdtemp(prefix="bench_audit_browser_"))
    db = tmp / "bench.duckdb"
    shutil.copyfile(db_in, db)
    url, proc = start(tree, db, tmp / "streamlit.log")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(600_000)
            page.goto(url + "/Audit")
            page.get_by_text("Labeled pairs").first.wait_for()
            wait_idle(page)
            thumb = slider_thumb(page, "Pairs per bucket")
            thumb.focus()
            page.keyboard.press("End")
            if settled_value(page, thumb) != 30:
                raise SystemExit("the Pairs per bucket slider did not reach 30")
            page.evaluate("document.activeElement.blur()")
            times_ms = []
            for i in range(n_labels):
                times_ms.append(key_to_next_pair_ms(page, "d" if i % 2 else "n"))
            browser.close()
        return times_ms
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(tmp)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--labels", type=int, default=30)
    ap.add_argument(
        "--tree", type=Path, action="append", help="app tree(s) to time in turn (default: this one)"
    )
    ap.add_argument("--repeat", type=int, default=1, help="rounds over the trees")
    args = ap.parse_args()
    trees = args.tree or [ROOT]
    for round_ in range(args.repeat):
        for tree in trees:
            before = loadavg()
            times = run(tree.resolve(), args.db, args.labels)
            print(
                f"round {round_ + 1} {tree}: {len(times)} labels, median {statistics.median(times):.0f} ms, "
                f"max {max(times):.0f} ms; load average {before} -> {loadavg()}",
                flush=True,
            )


if __name__ == "__main__":
    main()
