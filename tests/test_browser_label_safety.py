"""An analyst's labels are never lost, in a real browser against a real server: confirmed only once written
(kill -9 right after the confirmation keeps it), queued in the tab while another process holds the file,
the later of two tabs' labels of one pair kept and the other tab told.

Each test runs a server of its own over a copy of the 300-page generated crawl (a test kills it)."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pandas as pd
import pytest
from live_app import (
    SentMessages,
    Server,
    assert_clean,
    file_held,
    launch_browser,
    live_labels,
    open_page,
    serving_copy,
    wait_idle,
)

from neardup.store import Store

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
PAIR_URLS_JS = """() => [...document.querySelectorAll('[data-testid="stCode"]')].slice(0, 2)
    .map(c => c.innerText.trim()).join('|')"""
TOASTS_JS = """() => [...document.querySelectorAll('[data-testid="stToast"]')].map(t => t.innerText)"""


def kill_9(server: Server) -> None:
    """SIGKILL to the server's process group: no shutdown, no checkpoint."""
    os.killpg(server.proc.pid, signal.SIGKILL)
    server.proc.wait(timeout=20)


def stored_labels(db: Path) -> pd.DataFrame:
    with Store(db) as store:
        return store.labels()


def open_audit(page: object, server: Server) -> str:
    open_page(page, server.url, "/Audit", "Labeled pairs")
    page.get_by_text(re.compile(r"^Pair \d+ of \d+")).first.wait_for()
    return str(page.evaluate(PAIR_URLS_JS))


def wait_toast(page: object, text: str, timeout_ms: float = 60_000) -> None:
    page.locator('[data-testid="stToast"]', has_text=text).first.wait_for(timeout=timeout_ms)


def test_a_label_confirmed_is_written_before_kill_9(small_db: Path, tmp_path: Path) -> None:
    """While another process reads the file (a write must wait), a label key says the label waits, never
    "Labeled"; once the file is free the label is written, and only then confirmed: kill -9 right after
    the confirmation keeps it."""
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        page = browser.page
        first = open_audit(page, server)
        with file_held(server.db, write=False):
            page.keyboard.press("d")
            page.get_by_text("1 label waiting to be saved").first.wait_for()
            assert not any(t.startswith("Labeled") for t in page.evaluate(TOASTS_JS))
            assert page.evaluate(PAIR_URLS_JS) != first  # the queue moves on while the label waits
        wait_toast(page, "Labeled duplicate")
        kill_9(server)
        assert_clean(browser, "/Audit after a label that waited")
    labels = stored_labels(server.db)
    assert labels["label"].tolist() == ["duplicate"]


def test_labels_given_while_an_ingest_holds_the_file_are_queued_then_written(
    small_db: Path, tmp_path: Path
) -> None:
    """Another process holds the file read-write (as `neardup ingest` does): labels given meanwhile wait in
    the tab, with how many on screen and no traceback; they are written once it is free."""
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        page = browser.page
        shown = [open_audit(page, server)]
        with file_held(server.db, write=True):
            page.keyboard.press("n")
            page.get_by_text("1 label waiting to be saved").first.wait_for()
            wait_idle(page)
            shown.append(page.evaluate(PAIR_URLS_JS))
            page.keyboard.press("d")
            page.get_by_text("2 labels waiting to be saved").first.wait_for()
            wait_idle(page)
            assert_clean(browser, "/Audit while another process writes")
        wait_toast(page, "Labeled not duplicate")
        page.get_by_text(re.compile(r"^Pair \d+ of \d+")).first.wait_for()
        page.wait_for_function("() => !document.body.innerText.includes('waiting to be saved')")
        wait_idle(page)
        assert_clean(browser, "/Audit once the file is free")
        server.stop()
    labels = stored_labels(server.db)
    assert sorted(labels["label"]) == ["duplicate", "not"]
    stored = {f"{a}|{b}" for a, b in zip(labels["url_a"], labels["url_b"], strict=True)}
    assert len(stored) == 2 and shown[0] != shown[1]


def test_two_tabs_keep_the_later_label_and_the_other_tab_is_told(small_db: Path, tmp_path: Path) -> None:
    """One labeler, two tabs, one pair: the label given later is kept whichever write lands last, and the
    tab whose label was replaced says so on its next run."""
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        first = browser.page
        second = first.context.new_page()
        assert open_audit(first, server) == open_audit(second, server)
        # written in the order given: the second replaces the first, whose tab is told on its next key
        first.keyboard.press("d")
        wait_toast(first, "Labeled duplicate")
        second.keyboard.press("n")
        wait_toast(second, "Labeled not duplicate")
        first.keyboard.press("s")
        wait_toast(first, "a later label of this pair from another tab or window was kept: not duplicate")
        assert live_labels(server)["label"].tolist() == ["not"]

        # given in one order while the file is busy, written in any: the later one stays (a reload is a
        # new session: both tabs show the first pair left)
        pair = open_audit(first, server)
        assert open_audit(second, server) == pair
        with file_held(server.db, write=False):
            second.keyboard.press("u")
            second.get_by_text("1 label waiting to be saved").first.wait_for()
            first.keyboard.press("d")
            first.get_by_text("1 label waiting to be saved").first.wait_for()
        wait_toast(first, "Labeled duplicate")
        second.wait_for_function("() => !document.body.innerText.includes('waiting to be saved')")
        server.stop()
    labels = stored_labels(server.db)
    assert sorted(labels["label"]) == ["duplicate", "not"]


def test_two_tabs_keep_the_label_pressed_later_when_the_earlier_arrives_last(
    small_db: Path, tmp_path: Path
) -> None:
    """One labeler, two tabs, one pair: the first tab's key is pressed first but its message reaches the
    server after the second tab's label is written (held on its websocket). The label pressed later is
    kept, and the first tab says in one line that its label was not kept and which one was."""
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        first = browser.page
        sent = SentMessages(first)
        second = first.context.new_page()
        assert open_audit(first, server) == open_audit(second, server)
        sent.hold()
        first.keyboard.press("d")
        first.wait_for_timeout(50)
        second.keyboard.press("n")
        wait_toast(second, "Labeled not duplicate")
        assert sent.held, "the first tab's key sent nothing to hold"
        sent.release()
        wait_toast(first, "a later label of this pair from another tab or window was kept: not duplicate")
        assert not any(t.startswith("Labeled") for t in first.evaluate(TOASTS_JS))
        assert live_labels(server)["label"].tolist() == ["not"]
