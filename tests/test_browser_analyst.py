"""A real browser against the app as an analyst meets it: a hostile link's setting, `neardup app` started
from any directory and stopped by a signal, the deduplicated dump downloaded from the Export page.

Each test runs a server of its own over a copy of the small crawl (tests/test_app.py's `build_small_db`).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from live_app import (
    PAGES,
    ROOT,
    Browser,
    Server,
    assert_clean,
    click_button,
    free_port,
    launch_browser,
    open_page,
    screenshot,
    wait_for_health,
    wait_idle,
)

from neardup.store import Store

pytestmark = pytest.mark.browser


def start_neardup_app(db: Path, cwd: Path, log: Path, *extra: str) -> tuple[str, subprocess.Popen]:
    """`neardup app --db db` started in `cwd` (a folder without .streamlit/), in a session of its own."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("NEARDUP_CONFIG", None)
    env.pop("NEARDUP_DB", None)
    cli = "import sys; from neardup.cli import main; sys.exit(main(sys.argv[1:]))"  # the `neardup` script
    cmd = [sys.executable, "-c", cli, "app", "--db", str(db), "--headless", "--port", str(port)]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*cmd, "--address", "127.0.0.1", *extra],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return f"http://127.0.0.1:{port}", proc


@pytest.fixture
def app_server(small_db: Path, tmp_path: Path) -> Iterator[Server]:
    """`neardup app` from an empty folder over a copy of the small crawl."""
    db = tmp_path / "neardup.duckdb"
    shutil.copyfile(small_db, db)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    log = tmp_path / "app.log"
    url, proc = start_neardup_app(db, elsewhere, log)
    srv = Server(url, db, proc, log, 300, 0)
    try:
        wait_for_health(srv)
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def browser() -> Iterator[Browser]:
    with launch_browser() as b:
        yield b


# --- the setting in a link is data, never markup ------------------------------------------------------
EVIL = "https://evil.example"


def test_a_links_setting_is_shown_as_text_and_bad_numbers_are_named(
    app_server: Server, browser: Browser
) -> None:
    page = browser.page
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    alert = '[data-testid="stAlertContentWarning"]'

    def opened(path: str, query: str) -> str:
        page.goto(f"{app_server.url}{path}?{query}")
        page.locator(alert).first.wait_for()
        wait_idle(page)
        assert_clean(browser, f"{path}?{query}")
        return page.locator(alert).first.inner_text()

    link = f"[Your session expired: sign in again]({EVIL}/login)"
    shown = opened("/", "normalize=" + urllib.parse.quote(link))
    assert link in shown.replace("\u2060", "")
    assert page.locator("a[href*='evil.example']").count() == 0
    screenshot(page, "link_setting_as_text.png")

    pixel = f"![x]({EVIL}/pixel.png)"
    shown = opened("/Explore", "method=" + urllib.parse.quote(pixel))
    assert pixel in shown.replace("\u2060", "")
    page.wait_for_timeout(500)
    assert page.locator("img[src*='evil.example']").count() == 0
    elsewhere = [u for u in requests if urllib.parse.urlsplit(u).hostname != "127.0.0.1"]
    assert not elsewhere, elsewhere

    # a threshold no setting can have: one warning naming it on every page, never a traceback
    for value in ("inf", "1e400"):
        for path, _, _ in PAGES:
            shown = opened(path, f"method=simhash&threshold={value}")
            assert "threshold" in shown and "default setting" in shown, (path, shown)
    for query, named in (
        ("method=simhash&threshold=-0.5", "-0.5"),
        ("method=simhash&threshold=8.99", "8.99"),
        ("method=minhash&threshold=-0.5", "-0.5"),
    ):
        shown = opened("/Explore", query)
        assert named in shown, (query, shown)


# --- `neardup app` started anywhere serves the same app, and a signal stops all of it -----------------
def upload_limit(page: object) -> str:
    """The limit the Load page's uploader states ("Limit 2GB per file • ...")."""
    return page.locator('[data-testid="stFileUploaderDropzoneInstructions"]').first.inner_text()


def test_the_app_started_elsewhere_takes_large_uploads_and_keeps_their_names(
    app_server: Server, browser: Browser, tmp_path: Path
) -> None:
    page = browser.page
    open_page(page, app_server.url, "/Load", "Rejected records")
    limit = upload_limit(page)
    assert "2GB" in limit.replace(" ", "") or "2000MB" in limit.replace(" ", ""), limit
    dump = tmp_path / "shop crawl 2026-12.jsonl"
    rows = [
        {"url": f"https://upload.example/p{i}", "html": f"<p>{' '.join(['word'] * 40)} page number {i}</p>"}
        for i in range(5)
    ]
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(dump))
    page.get_by_text("5 pages loaded").wait_for()
    wait_idle(page)
    assert_clean(browser, "/Load after an upload")
    screenshot(page, "load_upload_name.png")
    app_server.stop()
    with Store(app_server.db, read_only=True) as store:
        listed = list(store.sources()["path"])
        rejects = store.ingest_errors(limit=10)
    assert listed[-1] == dump.name, listed  # the small crawl's own source is listed first
    assert rejects.empty


def session_processes(sid: int) -> list[int]:
    """The live processes of the session `sid` (a process started with start_new_session leads it)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:  # state, ppid, pgrp, session
            out.append(int(entry.name))
    return out


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["kill", "kill-9"])
def test_a_signal_to_neardup_app_stops_its_server(
    small_db: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    db = tmp_path / "neardup.duckdb"
    shutil.copyfile(small_db, db)
    url, proc = start_neardup_app(db, tmp_path, tmp_path / "app.log")
    srv = Server(url, db, proc, tmp_path / "app.log", 300, 0)
    try:
        wait_for_health(srv)
        os.kill(proc.pid, sig)  # the pid `neardup app` was started as, not its process group
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while (session_processes(proc.pid) or answers(url)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not session_processes(proc.pid), "a process of `neardup app` outlived it"
        assert not answers(url)
    finally:
        for pid in session_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)


# --- the deduplicated dump and the removed pages, from the Export page ------------------------------
def test_export_page_downloads_the_kept_dump_and_the_removed_pages(
    app_server: Server, browser: Browser, tmp_path: Path
) -> None:
    page = browser.page
    open_page(page, app_server.url, "/Export", "Import labels")
    screenshot(page, "export_kept_removed.png")
    got = {}
    for name in ("kept.jsonl.gz", "removed.csv"):
        with page.expect_download(timeout=60_000) as info:
            click_button(page, name)
        assert info.value.suggested_filename == name
        got[name] = tmp_path / name
        info.value.save_as(got[name])
    assert_clean(browser, "/Export after the downloads")
    with gzip.open(got["kept.jsonl.gz"], "rt", encoding="utf-8") as f:
        kept = [json.loads(line) for line in f]
    removed = pd.read_csv(got["removed.csv"])
    app_server.stop()
    with Store(app_server.db, read_only=True) as store:
        n_pages, n_errors = store.count_pages(), len(store.ingest_errors(limit=10))
    # the small crawl: 300 pages, 241 kept, 51 removed, 8 set aside as degenerate (the Home page's numbers)
    assert (n_pages, n_errors) == (300, 0)
    assert (len(kept), len(removed)) == (241, 51)
    assert {"url", "html", "fetched_at", "cluster_id"} <= set(kept[0])
    assert set(removed["representative_url"]) <= {r["url"] for r in kept}
    assert {"similarity", "category", "suggested_action"} <= set(removed.columns)
    assert removed["category"].notna().all()
    assert not removed["suggested_action"].str.contains("keep both").any()


# --- an ingest from outside is read by the next run, on every page -----------------------------------
def test_an_outside_ingest_is_read_on_the_next_reload(
    app_server: Server, browser: Browser, tmp_path: Path
) -> None:
    page = browser.page

    def home_numbers() -> tuple[int, int]:
        open_page(page, app_server.url, "/", "Next:")
        header = page.get_by_text("Database ", exact=False).first.inner_text()
        answer = page.get_by_text("pages are redundant", exact=False).first.inner_text()
        shown = int(re.search(r"· ([\d,]+) pages ·", header).group(1).replace(",", ""))
        counted = int(re.search(r"of the ([\d,]+) pages", answer).group(1).replace(",", ""))
        return shown, counted

    assert home_numbers() == (300, 300)
    open_page(page, app_server.url, "/Explore", "Per host")
    more = tmp_path / "more.jsonl"
    rows = [
        {"url": f"https://later.example/p{i}", "html": f"<p>{'alpha beta gamma ' * 30} n{i}</p>"}
        for i in range(4)
    ]
    more.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cli = "import sys; from neardup.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", cli, "ingest", str(more), "--db", str(app_server.db), "--jobs", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert home_numbers() == (304, 304)
    assert_clean(browser, "/ after an outside ingest")
    screenshot(page, "home_after_outside_ingest.png")


# --- Tune on a few labels -----------------------------------------------------------------------------
def test_tune_on_a_few_labels_offers_the_pairs_that_decide_it(small_db: Path, tmp_path: Path) -> None:
    """Three labels in the lowest bucket: no primary "Use this threshold"; the primary button is the one
    that opens Audit's active queue, which it does."""
    from neardup import audit
    from neardup.analysis import load_fingerprints
    from neardup.config import Config

    db = tmp_path / "neardup.duckdb"
    shutil.copyfile(small_db, db)
    config = Config()
    with Store(db) as store:
        pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
        lowest = pairs[pairs["bucket"] == pairs["bucket"].min()].head(3)
        for row in lowest.itertuples():
            store.record_label(row.url_a, row.url_b, md5_a=row.md5_a, md5_b=row.md5_b, label="duplicate")
    url, proc = start_neardup_app(db, tmp_path, tmp_path / "app.log")
    srv = Server(url, db, proc, tmp_path / "app.log", 300, 3)
    try:
        wait_for_health(srv)
        with launch_browser() as b:
            page = b.page
            open_page(page, url, "/Tune", "How precision, recall")
            assert page.get_by_text("You can stop labeling").count() == 0
            use = page.get_by_role("button").filter(has_text="Use this threshold")
            if use.count():
                assert use.first.get_attribute("data-testid") != "stBaseButton-primary"
                assert page.get_by_text("Provisional: the stop rule is not met").count() == 1
            more = page.get_by_role("button").filter(
                has_text=re.compile(r"^Label the \d+ pairs that decide this")
            )
            assert more.first.get_attribute("data-testid") == "stBaseButton-primary"
            screenshot(page, "tune_few_labels.png")
            more.first.click()
            page.locator("h1", has_text="Audit").wait_for()
            wait_idle(page)
            # the sidebar's labeling widgets come after the page's first pair is drawn
            page.locator('[data-testid="stSidebar"]').get_by_text("Queue", exact=True).wait_for(
                timeout=60_000
            )
            checked = page.locator(
                '[data-testid="stSidebar"] [role="radiogroup"] input[type="radio"]:checked'
            )
            values = checked.evaluate_all("els => els.map(e => e.closest('label').innerText.trim())")
            assert "active" in values, values
            assert_clean(b, "/Audit from Tune")
            screenshot(page, "audit_from_tune.png")
    finally:
        srv.stop()
