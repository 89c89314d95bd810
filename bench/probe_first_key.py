"""The first key on a freshly opened Audit page: how often it is lost, in a real browser (Chromium headless).

    python bench/probe_first_key.py [--sessions 40] [--burn 0] [--wait 15]

Builds the 300-page sample database, starts the app on it, skips once to learn the second pair, then opens
--sessions fresh sessions of /Audit (a new page load each: its queue starts at the first pair) and presses
`s` as soon as the page's keyboard script is installed and the pair's URLs are drawn (checked every frame),
as tests/test_browser_audit_keys.py does. A session whose second pair is not drawn within --wait seconds
lost its key. --burn N starts N busy Python loops for the run (a loaded box draws the page slower).

Per session it prints the load average and what the page showed in the browser's clock (ms from the page
load): the script run's state changes, when the URLs were drawn and the label bar's keys as drawn (`z-`: a
disabled button), and when the key was pressed; the key counts as pressed on a part-drawn bar when its
button was not drawn then.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from conftest import build_small_db  # noqa: E402  (tests/conftest.py)
from live_app import launch_browser, open_page, serving, wait_idle  # noqa: E402

PAIR_URLS_JS = """() => [...document.querySelectorAll('[data-testid="stCode"]')].slice(0, 2)
    .map(c => c.innerText.trim()).join('|')"""
BAR_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] button kbd')]
    .map(k => k.innerText.trim().toLowerCase() + (k.closest('button').disabled ? '-' : '')).join('')"""
# Installed before each page's own scripts: the run's states, the URLs and the bar's keys as they change.
TIMELINE_JS = (
    """window.__timeline = []; let __bar = null, __urls = false;
new MutationObserver(records => {
    const t = Math.round(performance.now());
    for (const r of records) if (r.attributeName === 'data-test-script-state')
        window.__timeline.push(t + ':' + r.target.getAttribute('data-test-script-state'));
    const bar = ("""
    + BAR_JS
    + """)();
    if (bar !== __bar) { __bar = bar; window.__timeline.push(t + ':bar=' + bar); }
    const urls = document.querySelectorAll('[data-testid="stCode"]').length > 0;
    if (urls !== __urls) { __urls = urls; window.__timeline.push(t + ':urls'); }
}).observe(document, {subtree: true, childList: true, attributes: true,
    attributeFilter: ['data-test-script-state', 'disabled']});"""
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--burn", type=int, default=0, help="busy loops started for the run")
    ap.add_argument("--wait", type=float, default=15.0, help="seconds the second pair may take")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="neardup-first-key-"))
    db = build_small_db(tmp)
    burners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(args.burn)]
    lost = part_drawn = 0
    try:
        with serving(db, tmp, 300) as srv, launch_browser() as browser:
            page = browser.page
            open_page(page, srv.url, "/Audit", "Labeled pairs")
            page.get_by_text("Pair ").first.wait_for()
            first = page.evaluate(PAIR_URLS_JS)
            page.keyboard.press("s")
            page.wait_for_function(f"() => ({PAIR_URLS_JS})() !== {first!r}", timeout=30_000)
            wait_idle(page)
            second = page.evaluate(PAIR_URLS_JS)
            page.add_init_script(TIMELINE_JS)
            for i in range(args.sessions):
                page.goto(srv.url + "/Audit")
                page.wait_for_function(
                    f"() => !!window.neardupKeyboard && ({PAIR_URLS_JS})() !== ''", polling="raf"
                )
                bar = page.evaluate(BAR_JS)
                pressed_at = page.evaluate("() => Math.round(performance.now())")
                page.keyboard.press("s")
                try:
                    page.wait_for_function(
                        f"() => ({PAIR_URLS_JS})() === {second!r}", timeout=args.wait * 1000
                    )
                    ok = True
                except Exception:  # playwright's TimeoutError
                    ok = False
                lost += not ok
                part_drawn += "s" not in bar
                load = Path("/proc/loadavg").read_text().split()[0]
                timeline = " ".join(page.evaluate("() => window.__timeline"))
                print(
                    f"{i} {'ok' if ok else 'LOST'} load {load} key at {pressed_at} (bar {bar!r}): {timeline}"
                )
                wait_idle(page)
    finally:
        for proc in burners:
            proc.kill()
    print(f"lost {lost} of {args.sessions} first keys ({part_drawn} pressed before their button was drawn)")


if __name__ == "__main__":
    main()
