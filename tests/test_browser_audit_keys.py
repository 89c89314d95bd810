"""The Audit page's keys never go dead, in a real browser at 1400x900: the first key on a fresh page, Esc
from any field, after a click on a switch, the scroll keys, the key to the first change of the diff."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from live_app import (
    Browser,
    Server,
    assert_clean,
    open_page,
    screenshot,
    serving,
    wait_idle,
)

from neardup.store import Store
from neardup.urls import canonicalize_url

pytestmark = pytest.mark.browser

PAIR_URLS_JS = """() => [...document.querySelectorAll('[data-testid="stCode"]')].slice(0, 2)
    .map(c => c.innerText.trim()).join('|')"""
MAIN_TOP_JS = "() => document.querySelector('[data-testid=\"stMain\"]').scrollTop"


@pytest.fixture(scope="module")
def server(small_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(small_db, tmp_path_factory.mktemp("keys"), 300) as srv:
        yield srv


def open_audit(page: object, server: Server) -> str:
    open_page(page, server.url, "/Audit", "Labeled pairs")
    page.get_by_text(re.compile(r"^Pair \d+ of \d+")).first.wait_for()
    return str(page.evaluate(PAIR_URLS_JS))


def next_pair_after(page: object, key: str) -> str:
    """Press `key` (a real key press) and wait for another pair to be drawn."""
    before = page.evaluate(PAIR_URLS_JS)
    page.keyboard.press(key)
    page.wait_for_function(f"() => ({PAIR_URLS_JS})() !== {before!r}", timeout=15_000)
    wait_idle(page)
    return str(page.evaluate(PAIR_URLS_JS))


def test_the_first_key_on_a_fresh_page_acts(server: Server, browser: Browser) -> None:
    """A key pressed as soon as the pair is on screen of a page that starts to draw (its label bar may not
    be drawn yet) acts on that pair: a fresh session's skip shows the second pair."""
    page = browser.page
    first = open_audit(page, server)
    second = next_pair_after(page, "s")
    for _ in range(3):
        page.goto(server.url + "/Audit")  # a new session: its queue starts at the first pair again
        # the page's keyboard script is its first element, the pair is sent before its label bar
        page.wait_for_function(f"() => !!window.neardupKeyboard && ({PAIR_URLS_JS})() !== ''", polling="raf")
        page.keyboard.press("s")
        page.wait_for_function(f"() => ({PAIR_URLS_JS})() === {second!r}", timeout=15_000)
        wait_idle(page)
        assert page.evaluate(PAIR_URLS_JS) != first
    assert_clean(browser, "/Audit after an early key")


def test_esc_and_a_click_on_a_switch_hand_the_keys_back(server: Server, browser: Browser) -> None:
    page = browser.page
    open_audit(page, server)
    for switch in ("Raw HTML (as source, never rendered)", "What normalization removed", "Labeled pairs"):
        page.get_by_text(switch, exact=True).click()
        wait_idle(page)
        next_pair_after(page, "s")  # straight after the click
        page.get_by_text(switch, exact=True).click()
        wait_idle(page)
        page.keyboard.press("Escape")
        next_pair_after(page, "s")
    note = page.get_by_placeholder("optional note")
    note.click()
    page.keyboard.type("sd")  # typed into the note, no key acts
    assert note.input_value() == "sd"
    page.keyboard.press("Escape")
    wait_idle(page)
    next_pair_after(page, "s")
    assert_clean(browser, "/Audit after Esc and switches")


PASSAGES_SWITCH = re.compile(r"^Shared passages highlighted in both texts \(\d+\)$")
# where the diff's first change is, in px from the main pane's top (the diff comes after its heading)
FIRST_CHANGE_TOP_JS = """() => { const pane = document.querySelector('[data-testid="stMain"]');
    const heading = [...pane.querySelectorAll('p')].find(p => p.innerText.startsWith('Main text, word diff'));
    const change = [...pane.querySelectorAll('[data-testid="stMarkdownContainer"] span')].find(s =>
        /ColoredBackground/.test(s.className) && (heading.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_FOLLOWING));
    return change.getBoundingClientRect().top - pane.getBoundingClientRect().top; }"""
FIRST_PASSAGE_TOP_JS = """() => { const pane = document.querySelector('[data-testid="stMain"]');
    const badge = pane.querySelector('[data-testid="stMarkdownContainer"] .stMarkdownBadge');
    return badge.getBoundingClientRect().top - pane.getBoundingClientRect().top; }"""
ACTIVE_JS = """() => { const el = document.activeElement;
    return el ? el.tagName + (el.getAttribute('type') ? '[' + el.getAttribute('type') + ']' : '') : ''; }"""


def settle_scroll(page: object) -> None:
    """Until the main pane's scroll position holds for 300 ms (a smooth scroll is over)."""
    last = None
    while (top := page.evaluate(MAIN_TOP_JS)) != last:
        last = top
        page.wait_for_timeout(300)


def test_keys_act_after_the_passages_switch_and_another_switch(server: Server, browser: Browser) -> None:
    """The shared passages' switch on, then another switch of the main area clicked: the label keys act
    straight after the click, and again after Esc; the passages stay on while the pairs change."""
    page = browser.page
    open_audit(page, server)
    for other in ("Raw HTML (as source, never rendered)", "What normalization removed", "Labeled pairs"):
        page.get_by_text(PASSAGES_SWITCH).first.click()
        wait_idle(page)
        page.get_by_text(re.compile(r"^Passages: 1: |^No run of \d+ words")).first.wait_for()
        page.get_by_text(other, exact=True).click()
        wait_idle(page)
        focus = page.evaluate(ACTIVE_JS)
        try:
            next_pair_after(page, "s")
        except Exception as exc:
            raise AssertionError(f"no key acts after {other!r} (focus on {focus})") from exc
        page.get_by_text(re.compile(r"^Passages: 1: |^No run of \d+ words")).first.wait_for()
        page.keyboard.press("Escape")
        next_pair_after(page, "s")
        page.get_by_text(other, exact=True).click()  # both switches off again
        wait_idle(page)
        page.get_by_text(PASSAGES_SWITCH).first.click()
        wait_idle(page)
        page.keyboard.press("Escape")
        next_pair_after(page, "s")
    # with the passages on, g goes to the diff's first change, not to the first highlighted passage
    page.get_by_text(PASSAGES_SWITCH).first.click()
    wait_idle(page)
    for _ in range(20):
        if page.get_by_text("Main text, word diff").count():
            break
        next_pair_after(page, "s")
    wait_idle(page)
    page.get_by_text(re.compile(r"^Passages: 1: ")).first.wait_for()
    page.keyboard.press("Home")
    page.wait_for_function(f"() => ({MAIN_TOP_JS})() === 0")
    page.keyboard.press("g")
    page.wait_for_function(f"() => ({MAIN_TOP_JS})() > 0")
    settle_scroll(page)
    # the change on screen, and g went there, not to the first passage (g puts what it goes to 80 px under
    # the top, or scrolls to the end)
    change, passage = page.evaluate(FIRST_CHANGE_TOP_JS), page.evaluate(FIRST_PASSAGE_TOP_JS)
    assert 0 <= change < 900 and abs(passage - 80) > 5, (change, passage)
    assert_clean(browser, "/Audit after the passages switch and another")


def test_scroll_keys_and_the_first_change_key(server: Server, browser: Browser) -> None:
    """At 1400x900 the label bar and the pair's URLs are above the fold; PageDown, Space and the arrows
    scroll a freshly opened page, Home goes back; g jumps to the first change of the diff and back."""
    page = browser.page
    open_audit(page, server)
    for name in ("Duplicate", "Not duplicate", "Skip"):
        box = page.get_by_role("button", name=name).first.bounding_box()
        assert box and box["y"] + box["height"] <= 900, name
    for code in page.locator('[data-testid="stCode"]').all()[:2]:
        box = code.bounding_box()
        assert box and box["y"] + box["height"] <= 900
    screenshot(page, "audit_keys.png")
    assert page.evaluate(MAIN_TOP_JS) == 0
    for key in ("PageDown", "Space", "ArrowDown"):
        page.keyboard.press(key)
        page.wait_for_function(f"() => ({MAIN_TOP_JS})() > 0")
        page.keyboard.press("Home")
        page.wait_for_function(f"() => ({MAIN_TOP_JS})() === 0")
    # a pair with a change: skip identical ones
    for _ in range(20):
        if page.get_by_text("Main text, word diff").count():
            break
        next_pair_after(page, "s")
    page.keyboard.press("g")
    page.wait_for_function(f"() => ({MAIN_TOP_JS})() > 0")
    page.keyboard.press("g")
    page.wait_for_function(f"() => ({MAIN_TOP_JS})() === 0")
    assert_clean(browser, "/Audit scroll keys")


FETCH_CAPTIONS_JS = """() => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .map(c => c.innerText).filter(t => /fetch(ed)? ·|fetch time/.test(t))"""


def assert_fetch_captions_by_time(page: object) -> None:
    """The side captioned "earlier fetch" was fetched first, whichever side it is on."""
    captions = page.evaluate(FETCH_CAPTIONS_JS)[:2]
    times = {c.split(" · ")[0]: re.search(r"fetched (\S+ \S+)", c).group(1) for c in captions}
    if "earlier fetch" in times:
        assert times["earlier fetch"] < times["later fetch"], captions


def test_counts_history_and_the_labelers_choices_survive_a_reload(server: Server, browser: Browser) -> None:
    """ "Pair i of N" counts up; k goes back to the pair just labeled and shows its label, j returns; the
    name, pairs per bucket and queue are in the URL and survive a reload; earlier / later fetch by time."""
    page = browser.page
    open_audit(page, server)
    name = page.get_by_label("Your name", exact=True).and_(page.get_by_role("textbox"))
    name.fill("ana")
    name.press("Enter")
    wait_idle(page)
    page.get_by_text("active", exact=True).click()
    wait_idle(page)
    page.keyboard.press("Escape")
    caption = page.get_by_text(re.compile(r"^Pair \d+ of \d+")).first
    assert re.search(r"^Pair 1 of \d+", caption.inner_text())
    first = page.evaluate(PAIR_URLS_JS)
    assert_fetch_captions_by_time(page)
    second = next_pair_after(page, "d")
    page.get_by_text(re.compile(r"^Pair 2 of \d+")).first.wait_for()  # the active queue may grow
    assert next_pair_after(page, "k") == first
    page.get_by_text("your label: duplicate").first.wait_for()
    assert_fetch_captions_by_time(page)
    assert next_pair_after(page, "j") == second

    page.wait_for_function(
        "() => /labeler=ana/.test(location.search) && /queue=active/.test(location.search)"
    )
    page.reload()
    page.get_by_text(re.compile(r"^Pair \d+ of \d+")).first.wait_for()
    wait_idle(page)
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stSidebar"] input[type="text"]')]
            .some(i => i.value === 'ana')"""
    )
    assert page.get_by_role("radio", name="active").is_checked()
    assert_clean(browser, "/Audit after a reload")


def test_keys_pressed_40_ms_apart_are_all_kept(server: Server, browser: Browser) -> None:
    """Three skips 40 ms apart skip three pairs; three labels 40 ms apart label three pairs, each the pair
    it came to (the keys reach the server one rerun at a time)."""
    order = []
    slow = browser.page.context.new_page()
    order.append(open_audit(slow, server))
    for _ in range(3):
        order.append(next_pair_after(slow, "s"))
    slow.close()
    assert len(set(order)) == 4

    fast = browser.page.context.new_page()  # a new tab: a new session, its queue from the first pair
    assert open_audit(fast, server) == order[0]
    for _ in range(3):
        fast.keyboard.press("s")
        fast.wait_for_timeout(40)
    fast.wait_for_function(f"() => ({PAIR_URLS_JS})() === {order[3]!r}", timeout=30_000)
    wait_idle(fast)
    fast.close()

    labeling = browser.page.context.new_page()
    assert open_audit(labeling, server) == order[0]
    before = len(live_labels(server))
    for key in "dnd":
        labeling.keyboard.press(key)
        labeling.wait_for_timeout(40)
    labeling.wait_for_function(f"() => ({PAIR_URLS_JS})() === {order[3]!r}", timeout=30_000)
    wait_idle(labeling)
    labels = live_labels(server)
    assert len(labels) == before + 3
    newest = labels.sort_values("labeled_at").tail(3)
    assert newest["label"].tolist() == ["duplicate", "not", "duplicate"]
    shown = [set(pair.split("|")) for pair in order[:3]]
    for row, urls in zip(newest.itertuples(), shown, strict=True):
        assert {row.url_a, row.url_b} <= {canonicalize_url(u) for u in urls} | urls
    labeling.close()


def live_labels(server: Server) -> pd.DataFrame:
    """The labels as another process reads them while the app runs."""
    with Store(server.db, read_only=True, lock_wait_s=30) as store:
        return store.labels()


def test_page_keys_move_through_the_menu(server: Server, browser: Browser) -> None:
    """] opens the next page of the menu and [ the one before, on every page (wrapping at the ends); the
    keys are named on Home and in Audit's key list; typed into a field they are text."""
    page = browser.page
    open_audit(page, server)
    assert page.get_by_text("[ / ] page before / next").count() >= 1
    for key, path in (("]", "/Tune"), ("]", "/Clusters"), ("[", "/Tune"), ("[", "/Audit"), ("[", "/Explore")):
        page.keyboard.press(key)
        page.wait_for_url(re.compile(rf"{path}(\?|$)"))
        wait_idle(page)
    page.goto(server.url + "/")
    page.get_by_text("[ / ] page before / next").first.wait_for()
    wait_idle(page)
    page.keyboard.press("[")  # Home is the first: [ wraps to the last page
    page.wait_for_url(re.compile(r"/URL_rules(\?|$)"))
    wait_idle(page)
    open_audit(page, server)
    note = page.get_by_placeholder("optional note")
    note.click()
    page.keyboard.type("a]")
    assert note.input_value() == "a]"
    assert re.search(r"/Audit(\?|$)", page.url)
    assert_clean(browser, "page keys")
