"""Hostile probe of the Audit page's labels (issue 31): no label is lost.

Three probes against a real `streamlit run app.py` over the 300-page generated crawl, TRIES tries each:
- kill: press d, wait for the "Labeled duplicate" confirmation, kill -9 the server at once, restart it:
  the store holds every confirmed label;
- tabs: one labeler in two tabs on one pair, the two keys 0-80 ms apart in either order: the label whose
  key was pressed later is stored, and the other tab says its label was not kept or was replaced;
- ingest: a real `neardup ingest` of a new 300-page dump starts while a tab labels a pair every 0.3-0.6 s:
  the ingest finishes (the labeler does not starve it), every label the tab gave is stored once the file is
  free, and no traceback shows.

    PYTHONPATH=. python bench/studies/probe_label_safety.py [--tries 20] [--only kill,tabs,ingest]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from live_app import Server, launch_browser, start_app, wait_for_health, wait_idle  # noqa: E402

from neardup.store import Store  # noqa: E402

PAIR_URLS_JS = """() => [...document.querySelectorAll('[data-testid="stCode"]')].slice(0, 2)
    .map(c => c.innerText.trim()).join('|')"""
BAR_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] button kbd')]
    .some(k => k.innerText.trim().toLowerCase() === 'd')"""
# Every toast a tab shows, kept (a toast leaves the screen after a few seconds).
RECORD_TOASTS_JS = """window.__toasts = []; new MutationObserver(() => { for (const t of document.querySelectorAll(
    '[data-testid="stToast"]')) if (!t.__seen) { t.__seen = true; window.__toasts.push(t.innerText); } })
    .observe(document, {childList: true, subtree: true});"""
IN_ALL_JS = """() => { const m = document.body.innerText.match(/\\((\\d+) labels? in all/); return m ? +m[1] : -1; }"""
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def make_dump(out: Path, seed: int) -> Path:
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "make_sample.py"),
            "--pages",
            "300",
            "--seed",
            str(seed),
            "--out",
            str(out),
            "--truth",
            str(out.parent / f"{out.name}.truth.csv"),
        ],
        check=True,
        capture_output=True,
        env=ENV,
    )
    return out


def neardup(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neardup.cli", *args], capture_output=True, text=True, env=ENV, cwd=ROOT
    )


def base_db(tmp: Path) -> Path:
    db = tmp / "base.duckdb"
    assert (
        neardup(
            "ingest", str(make_dump(tmp / "crawl.jsonl.gz", 3)), "--db", str(db), "--jobs", "1"
        ).returncode
        == 0
    )
    assert neardup("report", "--db", str(db), "--jobs", "1").returncode == 0  # the fingerprints
    return db


def serve(db: Path, tmp: Path) -> Server:
    url, proc, log = start_app(db, tmp)
    srv = Server(url, db, proc, log, 300, 0)
    wait_for_health(srv)
    return srv


def labels_in(db: Path) -> list[tuple[str, str, str]]:
    with Store(db, read_only=True, lock_wait_s=60) as store:
        df = store.labels()
    return [(r.url_a, r.url_b, r.label) for r in df.itertuples()]


def clear_labels(db: Path) -> None:
    with Store(db, lock_wait_s=60) as store:
        for r in store.labels().itertuples():
            store.delete_label(r.url_a, r.url_b, md5_a=r.md5_a, md5_b=r.md5_b, labeler=r.labeler)


def open_audit(page: object, srv: Server) -> str:
    """Open the Audit page and wait until it looks ready: its pair's two URLs and its label bar drawn (on a
    loaded box they can come seconds after the run is over)."""
    page.goto(srv.url + "/Audit?per_bucket=30")
    page.get_by_text(re.compile(r"^Pair \d+ of \d+")).first.wait_for(timeout=120_000)
    wait_idle(page)
    page.wait_for_function(f"() => ({PAIR_URLS_JS})().includes('|') && ({BAR_JS})()", timeout=120_000)
    return str(page.evaluate(PAIR_URLS_JS))


def toast(page: object, text: str, timeout_ms: float = 30_000) -> bool:
    try:
        page.locator('[data-testid="stToast"]', has_text=text).first.wait_for(timeout=timeout_ms)
    except Exception:
        return False
    return True


def tracebacks(page: object) -> int:
    return int(page.locator('[data-testid="stException"]').count())


def probe_kill(db: Path, tmp: Path, tries: int) -> str:
    lost = confirmed = 0  # labels confirmed, and of them not stored
    for i in range(tries):
        srv = serve(db, tmp)
        with launch_browser() as browser:
            open_audit(browser.page, srv)
            browser.page.keyboard.press("d")
            ok = toast(browser.page, "Labeled duplicate")
            os.killpg(srv.proc.pid, signal.SIGKILL)
            srv.proc.wait(timeout=20)
        stored = len(labels_in(db))
        lost += ok and not stored
        confirmed += ok
        print(f"kill {i + 1}: confirmed {ok}, stored {stored}", flush=True)
        clear_labels(db)  # the queue starts at its first pair again
    return f"kill -9 right after the confirmation: {tries} tries, {confirmed} labels confirmed, {lost} lost"


def probe_tabs(db: Path, tmp: Path, tries: int) -> str:
    srv = serve(db, tmp)
    rng = random.Random(1)
    kept_later = one_kept_other_told = skipped = arrived_last = 0
    try:
        with launch_browser() as browser:
            browser.page.context.add_init_script(RECORD_TOASTS_JS)
            for i in range(tries):
                clear_labels(db)
                # new tabs, new sessions (a reload keeps the tab's session, and its skips)
                tab1, tab2 = browser.page.context.new_page(), browser.page.context.new_page()
                for _ in range(5):  # both tabs on one pair (a reload draws the queue again)
                    if open_audit(tab1, srv) == open_audit(tab2, srv):
                        break
                else:
                    print(f"tabs {i + 1}: the two tabs show different pairs; try skipped", flush=True)
                    skipped += 1
                    tab1.close()
                    tab2.close()
                    continue
                first, second = (tab1, tab2) if i % 2 == 0 else (tab2, tab1)
                # a person types into the tab in front: each tab is brought to front before its key
                first.bring_to_front()
                first.keyboard.press("d")
                time.sleep(rng.uniform(0.0, 0.08))
                second.bring_to_front()
                second.keyboard.press("n")
                for tab in (first, second):
                    tab.wait_for_function("() => !document.body.innerText.includes('waiting to be saved')")
                    wait_idle(tab)
                stored = [lab for _, _, lab in labels_in(db)]
                for tab in (first, second):  # each tab's next run: a replaced label is told there
                    tab.bring_to_front()
                    tab.keyboard.press("s")
                    wait_idle(tab)
                time.sleep(1.0)
                lost_tabs = [
                    label
                    for tab, label in ((first, "duplicate"), (second, "not"))
                    if tab.evaluate(
                        "() => window.__toasts.some(t => /^(Replaced|Not kept): your label/.test(t))"
                    )
                ]
                ok = len(stored) == 1 and len(lost_tabs) == 1 and lost_tabs[0] != stored[0]
                one_kept_other_told += ok
                kept_later += stored == ["not"]
                # the earlier press's label reached the store after the later one's ("Not kept", not "Replaced")
                reordered = first.evaluate("() => window.__toasts.some(t => /Not kept: your label/.test(t))")
                arrived_last += reordered
                print(
                    f"tabs {i + 1}: stored {stored}, told the tab of {lost_tabs}"
                    f"{' (its label written last)' if reordered else ''}: {'ok' if ok else 'FAIL'}",
                    flush=True,
                )
                tab1.close()
                tab2.close()
    finally:
        srv.stop()
    return (
        f"two tabs, one pair, keys 0-80 ms apart: {tries - skipped} tries ({skipped} skipped: the tabs showed "
        f"different pairs); one label stored and the other tab told it was not kept or replaced: "
        f"{one_kept_other_told}; the label pressed later was the one kept: {kept_later} (in {arrived_last} of "
        f"them the label pressed earlier was written last)"
    )


def probe_ingest(db: Path, tmp: Path, tries: int) -> str:
    srv = serve(db, tmp)
    ingests_ok = lost = given_total = shown_tracebacks = 0
    try:
        with launch_browser() as browser:
            page = browser.page
            for i in range(tries):
                clear_labels(db)
                open_audit(page, srv)
                dump = make_dump(tmp / f"more-{i}.jsonl.gz", 100 + i)
                ingest = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "neardup.cli",
                        "ingest",
                        str(dump),
                        "--db",
                        str(db),
                        "--jobs",
                        "1",
                    ],
                    env=ENV,
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                presses = 0
                while ingest.poll() is None:
                    page.keyboard.press(random.choice("dnu"))
                    presses += 1
                    time.sleep(random.uniform(0.3, 0.6))
                out = ingest.communicate()[0]
                ingests_ok += ingest.returncode == 0
                page.wait_for_function(
                    "() => !document.body.innerText.includes('waiting to be saved')", timeout=60_000
                )
                wait_idle(page)
                shown_tracebacks += tracebacks(page)
                given = page.evaluate(IN_ALL_JS)
                stored = len(labels_in(db))
                given_total += given
                lost += max(given - stored, 0)
                print(
                    f"ingest {i + 1}: exit {ingest.returncode}, {presses} keys, {given} labels given, {stored} stored"
                    + ("" if ingest.returncode == 0 else f": {out.strip().splitlines()[-1]}"),
                    flush=True,
                )
    finally:
        srv.stop()
    return (
        f"labeling during `neardup ingest`: {tries} tries, {ingests_ok} ingests finished, {given_total} labels "
        f"given, {lost} lost, {shown_tracebacks} tracebacks"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--only", default="kill,tabs,ingest")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="neardup-probe-"))
    try:
        base = base_db(tmp)
        results = []
        for name in args.only.split(","):
            db = tmp / f"{name}.duckdb"
            shutil.copyfile(base, db)
            probe = {"kill": probe_kill, "tabs": probe_tabs, "ingest": probe_ingest}[name]
            results.append(probe(db, tmp, args.tries))
        print("\n".join(results))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
