"""Key press to the next pair drawn on the Audit page, in a real browser (Chromium headless, 1400x900).

    python bench/bench_audit_browser.py --db a-database.duckdb [--labels 30] [--tree DIR] [--repeat 1]

Copies --db to a temporary directory (the labels go to the copy), starts the app of --tree (default: this
checkout; another tree, e.g. an older commit's `git archive`, compares before and after) on it, opens
Audit with *pairs per bucket* at its maximum and labels --labels pairs by the keys d / n in turn. Each key
press is timed until the next pair's caption and URLs are drawn; the script run is then let finish before
the next key. Prints the median and the max in milliseconds, and the load average before and after.

--breakdown also prints, per key press (medians): when the first and the last websocket message of the
rerun arrived and when the pair was drawn (the browser's clock, from the keydown), when the run was over,
and the CPU milliseconds the app server and the browser's processes spent on it (/proc, from the key to
the run's end; means, as /proc counts 10 ms ticks).
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
sys.path.insert(0, str(ROOT / "bench"))
from harness import cpu_ms  # noqa: E402  (bench/harness.py)
from live_app import PAIR_SHOWN_JS, key_to_next_pair_ms, settled_value, slider_thumb, wait_idle  # noqa: E402  # noqa: E402

# Recorded in the page: the keydown's time, and the time and size of every websocket message.
WS_HOOK_JS = """
window.__ws = [];
window.__key = 0;
document.addEventListener('keydown', () => { window.__key = performance.now(); window.__ws = []; }, true);
const Native = window.WebSocket;
window.WebSocket = class extends Native {
    constructor(...args) {
        super(...args);
        this.addEventListener('message', e => window.__ws.push(
            [performance.now(), e.data.size ?? e.data.byteLength ?? e.data.length]));
    }
};
"""
DRAWN_JS = """before => {
    if ((PAIR_SHOWN)() === before) return false;
    window.__drawn = performance.now();
    return true;
}"""


def descendants(root: int) -> list[int]:
    """The processes under `root` (not itself), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def timed_key(page: object, key: str, server: int, browser: list[int]) -> dict[str, float]:
    """One key press, broken down (see --breakdown)."""
    before = page.evaluate(PAIR_SHOWN_JS)
    cpu_server, cpu_browser = cpu_ms([server]), cpu_ms(browser)
    page.keyboard.press(key)
    page.wait_for_function(DRAWN_JS.replace("PAIR_SHOWN", PAIR_SHOWN_JS), arg=before)
    wait_idle(page)
    t = page.evaluate(
        "() => ({key: window.__key, drawn: window.__drawn, ws: window.__ws, now: performance.now()})"
    )
    drawn = [m for m in t["ws"] if m[0] <= t["drawn"]]
    return {
        "first message": t["ws"][0][0] - t["key"] if t["ws"] else float("nan"),
        "last message before drawn": drawn[-1][0] - t["key"] if drawn else float("nan"),
        "drawn": t["drawn"] - t["key"],
        "run over (seen)": t["now"] - t["key"],
        "messages": len(t["ws"]),
        "kB": sum(m[1] for m in t["ws"]) / 1000,
        "server CPU ms": cpu_ms([server]) - cpu_server,
        "browser CPU ms": cpu_ms(browser) - cpu_browser,
    }


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


def run(
    tree: Path, db_in: Path, n_labels: int, parts: list[dict[str, float]] | None = None, think_ms: int = 0
) -> list[float]:
    tmp = Path(tempfile.mkdtemp(prefix="bench_audit_browser_"))
    db = tmp / "bench.duckdb"
    shutil.copyfile(db_in, db)
    url, proc = start(tree, db, tmp / "streamlit.log")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.add_init_script(WS_HOOK_JS)
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
            chromium = [pid for pid in descendants(os.getpid()) if pid != proc.pid]
            for i in range(n_labels):
                page.wait_for_timeout(think_ms)
                key = "d" if i % 2 else "n"
                if parts is None:
                    times_ms.append(key_to_next_pair_ms(page, key))
                else:
                    parts.append(timed_key(page, key, proc.pid, chromium))
                    times_ms.append(parts[-1]["drawn"])
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
    ap.add_argument("--breakdown", action="store_true", help="time the parts of each key press")
    ap.add_argument(
        "--think-ms",
        type=int,
        default=0,
        help="wait this long before each key, as a person reads the pair (the app's file is closed 1 s "
        "after its last use; 0: the next key once the run is over)",
    )
    args = ap.parse_args()
    trees = args.tree or [ROOT]
    for round_ in range(args.repeat):
        for tree in trees:
            before = loadavg()
            parts: list[dict[str, float]] | None = [] if args.breakdown else None
            times = run(tree.resolve(), args.db, args.labels, parts, args.think_ms)
            print(
                f"round {round_ + 1} {tree} think {args.think_ms} ms: {len(times)} labels, median {statistics.median(times):.0f} ms, "
                f"max {max(times):.0f} ms; load average {before} -> {loadavg()}",
                flush=True,
            )
            if parts:
                print(
                    "  medians: "
                    + ", ".join(
                        f"{k} {statistics.median(p[k] for p in parts):.1f}"
                        for k in parts[0]
                        if "CPU" not in k
                    )
                    + "; means (10 ms clock ticks): "
                    + ", ".join(
                        f"{k} {statistics.mean(p[k] for p in parts):.0f}" for k in parts[0] if "CPU" in k
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    main()
