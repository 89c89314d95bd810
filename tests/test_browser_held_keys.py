"""A label key held until the label bar is drawn acts only on the pair on screen when it was pressed, in a
real browser against a real server: pressed with no pair on screen (the page still loading, the database
held by another process) it is dropped with a message, never applied to the pair drawn next; pressed on a
pair whose label bar is not drawn yet it labels that pair.

The server's messages to the page are held back from a chosen element on (Playwright's WebSocket route), so
the key is pressed at that point of the drawing every time. Each test runs a server of its own over a copy of
the 300-page generated crawl."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from live_app import (
    assert_clean,
    click_button,
    file_held,
    launch_browser,
    live_labels,
    serving_copy,
    wait_idle,
)

from neardup.urls import canonicalize_url

pytestmark = pytest.mark.browser

PAIR_URLS_JS = """() => [...document.querySelectorAll('[data-testid="stCode"]')].slice(0, 2)
    .map(c => c.innerText.trim()).join('|')"""
TOASTS_JS = """() => [...document.querySelectorAll('[data-testid="stToast"]')].map(t => t.innerText)"""
BAR_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] button kbd')]
    .some(k => k.innerText.trim().toLowerCase() === 'd')"""
# no key held or waiting for its rerun: what the keys were to do is done
KEYS_SETTLED_JS = """() => { const s = window.neardupKeyboard;
    return !!s && !s.early.length && !s.sent && !s.queued.length; }"""
HIDE_SENDER_JS = """() => { window.__send = window.neardupSendLabelKey; Object.defineProperty(window,
    'neardupSendLabelKey', {configurable: true, get: () => undefined, set: f => { window.__send = f; }}); }"""
NO_PAIR_NOTICE = "Key d ignored: no pair was on screen when it was pressed"
PAIR_MARKER = b"<script>/* pair "  # a pair's first element: its scroll-to-top script, naming its page ids
LABEL_BAR = b"Duplicate"  # the label bar's first button, drawn after the pair


class HeldMessages:
    """The server's messages to the page: passed on until one holding `start` comes while `armed`, which and
    all after it are kept back until `release`."""

    def __init__(self, page: object, start: bytes, *, armed: bool = True) -> None:
        self.start = start
        self.armed = armed
        self.held: list[str | bytes] = []
        self.holding = False
        self.released = False
        self.route: object = None
        page.route_web_socket(re.compile(r"/_stcore/stream"), self.connect)

    def connect(self, ws: object) -> None:
        server = ws.connect_to_server()
        ws.on_message(server.send)
        self.route = ws

        def to_page(message: str | bytes) -> None:
            data = message.encode() if isinstance(message, str) else message
            if not self.released and (self.holding or (self.armed and self.start in data)):
                self.holding = True
                self.held.append(message)
            else:
                ws.send(message)

        server.on_message(to_page)

    def wait_holding(self, page: object) -> None:
        for _ in range(1200):
            if self.holding:
                return
            page.wait_for_timeout(50)
        raise AssertionError(f"no message with {self.start!r} came")

    def release(self) -> None:
        self.released = True
        for message in self.held:
            self.route.send(message)
        self.held.clear()


def test_a_key_pressed_before_any_pair_is_drawn_is_dropped_with_a_message(
    small_db: Path, tmp_path: Path
) -> None:
    """A label key pressed while a fresh page is drawn but no pair is on screen yet is not held for the pair
    drawn next: a message says it was ignored, and the pair drawn is not labeled."""
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        page = browser.page
        held = HeldMessages(page, PAIR_MARKER)
        page.goto(server.url + "/Audit")
        page.wait_for_function("() => !!window.neardupKeyboard")
        held.wait_holding(page)
        assert page.evaluate(PAIR_URLS_JS) == ""
        page.keyboard.press("d")
        page.get_by_text(NO_PAIR_NOTICE).wait_for()
        held.release()
        page.get_by_text(re.compile(r"^Pair 1 of \d+")).first.wait_for()
        page.wait_for_function(BAR_JS)
        wait_idle(page)
        page.wait_for_function(KEYS_SETTLED_JS)
        wait_idle(page)
        assert live_labels(server).empty
        assert not any(t.startswith("Labeled") for t in page.evaluate(TOASTS_JS))
        page.get_by_text(re.compile(r"^Pair 1 of \d+")).first.wait_for()
        assert_clean(browser, "/Audit after a key with no pair on screen")


def test_a_key_pressed_while_another_process_holds_the_file_is_dropped(
    small_db: Path, tmp_path: Path
) -> None:
    """A fresh page opened while another process holds the file read-write says so and shows no pair; a
    label key pressed then is ignored with a message, and the pair drawn by the rerun asked for once the
    file is free (r, within the time a held key waits) is not labeled."""

    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        page = browser.page
        with file_held(server.db, write=True):
            page.goto(server.url + "/Audit")
            page.wait_for_function("() => !!window.neardupKeyboard")
            wait_idle(page)
            assert page.evaluate(PAIR_URLS_JS) == ""
            page.keyboard.press("d")
            page.get_by_text(NO_PAIR_NOTICE).wait_for()
        page.keyboard.press("r")  # Streamlit's rerun
        page.get_by_text(re.compile(r"^Pair 1 of \d+")).first.wait_for()
        page.wait_for_function(BAR_JS)
        wait_idle(page)
        page.wait_for_function(KEYS_SETTLED_JS)
        wait_idle(page)
        assert live_labels(server).empty
        assert not any(t.startswith("Labeled") for t in page.evaluate(TOASTS_JS))
        assert_clean(browser, "/Audit after a key while the file was held")


def test_a_key_pressed_on_a_pair_before_its_label_bar_is_drawn_labels_that_pair(
    small_db: Path, tmp_path: Path
) -> None:
    """The pair on screen, its label bar not drawn yet: a label key waits for the bar and labels that pair."""
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        page = browser.page
        held = HeldMessages(page, LABEL_BAR)
        page.goto(server.url + "/Audit")
        held.wait_holding(page)
        page.wait_for_function(f"() => ({PAIR_URLS_JS})().includes('|')")
        shown = str(page.evaluate(PAIR_URLS_JS))
        assert not page.evaluate(BAR_JS)
        page.keyboard.press("d")
        assert page.evaluate("() => window.neardupKeyboard.early.length") == 1  # held for the bar
        held.release()
        page.locator('[data-testid="stToast"]', has_text="Labeled duplicate").first.wait_for()
        page.wait_for_function(KEYS_SETTLED_JS)
        wait_idle(page)
        labels = live_labels(server)
        assert labels["label"].tolist() == ["duplicate"]
        urls = set(shown.split("|"))
        assert {labels["url_a"].iloc[0], labels["url_b"].iloc[0]} <= {
            canonicalize_url(u) for u in urls
        } | urls
        assert page.evaluate(PAIR_URLS_JS) != shown  # the queue moved on
        assert_clean(browser, "/Audit after a key held for the label bar")


def test_a_key_pressed_while_the_next_pair_is_drawn_is_dropped_when_its_pair_changed(
    small_db: Path, tmp_path: Path
) -> None:
    """A click on Skip starts a run that draws the next pair; a label key pressed while it runs, with the
    skipped pair still on screen, is held for the run's end, then dropped with a message (the pair on screen
    changed): it labels neither pair."""
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        page = browser.page
        held = HeldMessages(page, PAIR_MARKER, armed=False)
        page.goto(server.url + "/Audit")
        page.get_by_text(re.compile(r"^Pair 1 of \d+")).first.wait_for()
        page.wait_for_function(BAR_JS)
        wait_idle(page)
        skipped = str(page.evaluate(PAIR_URLS_JS))
        held.armed = True  # the next pair's first element, and all after it, wait
        click_button(page, "Skip")
        held.wait_holding(page)
        page.wait_for_function(
            "() => document.querySelector('[data-testid=\"stApp\"]').getAttribute('data-test-script-state')"
            " === 'running'"
        )
        assert page.evaluate(PAIR_URLS_JS) == skipped
        page.keyboard.press("d")
        assert page.evaluate("() => window.neardupKeyboard.early.length") == 1  # held for the run's end
        held.release()
        page.get_by_text("Key d ignored: the pair on screen changed since it was pressed").wait_for()
        page.wait_for_function(KEYS_SETTLED_JS)
        wait_idle(page)
        assert page.evaluate(PAIR_URLS_JS) not in ("", skipped)
        assert live_labels(server).empty
        assert not any(t.startswith("Labeled") for t in page.evaluate(TOASTS_JS))
        assert_clean(browser, "/Audit after a key pressed while the next pair was drawn")


def test_a_label_key_pressed_before_the_components_script_waits_and_keeps_its_press_time(
    small_db: Path, tmp_path: Path
) -> None:
    """A label key pressed while the label-keys component's script is not loaded yet (taken away here) is
    held, not sent through its button without its time; once the script is there the label is stored at
    the time the key was pressed, to the millisecond."""
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        page = browser.page
        page.goto(server.url + "/Audit")
        page.get_by_text(re.compile(r"^Pair 1 of \d+")).first.wait_for()
        page.wait_for_function(BAR_JS)
        page.wait_for_function("() => !!window.neardupSendLabelKey")
        wait_idle(page)
        page.wait_for_function(KEYS_SETTLED_JS)
        # the script as not loaded yet: what it installs (again, on a redraw) is kept aside
        page.evaluate(HIDE_SENDER_JS)
        page.keyboard.press("d")
        pressed_ms = page.evaluate("() => window.neardupKeyboard.early.map(k => k.pressedAt)")
        assert len(pressed_ms) == 1  # held for the component's script
        page.evaluate(
            "() => { delete window.neardupSendLabelKey; window.neardupSendLabelKey = window.__send; }"
        )
        page.locator('[data-testid="stToast"]', has_text="Labeled duplicate").first.wait_for()
        page.wait_for_function(KEYS_SETTLED_JS)
        wait_idle(page)
        labels = live_labels(server)
        assert labels["label"].tolist() == ["duplicate"]
        assert labels["labeled_at"].iloc[0] == pd.Timestamp(pressed_ms[0], unit="ms")
        assert_clean(browser, "/Audit after a label key held for the component's script")


def _one_pair_per_bucket(page: object) -> None:
    """The Audit page's *Pairs per bucket* set to 1 from the keyboard (a tab's own setting), the keys let go."""
    thumb = page.locator('[data-testid="stSlider"]', has_text="Pairs per bucket").get_by_role("slider")
    thumb.focus()
    page.keyboard.press("Home")
    wait_idle(page)
    page.evaluate("() => document.activeElement.blur()")


def test_a_key_whose_button_is_disabled_says_so_not_that_no_pair_was_on_screen(
    small_db: Path, tmp_path: Path
) -> None:
    """With the queue done, a second tab has nothing of its own to undo: z there names its disabled button
    ("Undo the last label is not available here"), not a pair that was never to be on screen."""
    done_text = re.compile(r"^Every bucket has 1 decided label")
    with serving_copy(small_db, tmp_path) as server, launch_browser() as browser:
        page = browser.page
        page.goto(server.url + "/Audit")
        page.wait_for_function("() => !!window.neardupKeyboard")
        page.get_by_text(re.compile(r"^Pair 1 of \d+")).first.wait_for()
        wait_idle(page)
        _one_pair_per_bucket(page)
        for _ in range(60):
            # the next pair's label bar, or the queue's end (drawn in a run of its own, maybe a moment later)
            page.wait_for_function(
                f"() => ({BAR_JS})() || document.body.innerText.includes('Every bucket has 1 decided label')"
            )
            if page.get_by_text(done_text).count():
                break
            page.keyboard.press("d")
            page.wait_for_function(KEYS_SETTLED_JS)
            wait_idle(page)
        page.get_by_text(done_text).first.wait_for()
        assert not live_labels(server).empty
        other = page.context.new_page()
        other.goto(server.url + "/Audit")
        other.wait_for_function("() => !!window.neardupKeyboard")
        other.get_by_text(re.compile(r"^Pair \d+ of \d+|^Every bucket")).first.wait_for()
        wait_idle(other)
        _one_pair_per_bucket(other)
        other.get_by_text(done_text).first.wait_for()
        # a fresh page draws its buttons after its run, as their code loads: z is pressed once Undo is there
        other.get_by_role("button", name=re.compile(r"^Undo the last label")).wait_for()
        wait_idle(other)
        other.keyboard.press("z")
        other.get_by_text("Key z ignored: Undo the last label is not available here").wait_for()
        assert other.get_by_text(re.compile("no pair was on screen")).count() == 0
        assert_clean(browser, "/Audit, z with nothing to undo in a second tab")
