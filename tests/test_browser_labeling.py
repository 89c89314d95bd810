"""The analyst's loop in a real browser, on the bundled 3,000-page sample crawl: labeling by keyboard.

The app is started the way `make run` starts it (no database named: the sample is loaded into a fresh file).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_app import (
    PAIR_SHOWN_JS,
    Browser,
    Server,
    assert_clean,
    key_to_next_pair_ms,
    launch_browser,
    open_page,
    screenshot,
    serving,
    settled_value,
    slider_thumb,
    wait_idle,
)

from neardup.labels import CATEGORIES
from neardup.store import Store

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "crawl.jsonl.gz"


@pytest.fixture(scope="module")
def sample_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    assert SAMPLE.exists(), SAMPLE
    tmp = tmp_path_factory.mktemp("sample")
    with serving(tmp / "sample.duckdb", tmp, 3000, env={"NEARDUP_LOAD_SAMPLE": "1"}) as srv:
        yield srv


@pytest.fixture(scope="module")
def sample_browser(sample_server: Server) -> Iterator[Browser]:
    with launch_browser() as b:
        yield b


# Two key presses in one task, as a fast typist's "6d" reaches a busy server: Streamlit coalesces the two
# buttons' triggers into one rerun and runs their callbacks in the order the buttons were drawn.
TYPE_TWO_KEYS_JS = """keys => {
    for (const key of keys) {
        for (const type of ["keydown", "keyup"]) {
            document.activeElement.dispatchEvent(new KeyboardEvent(type, {key, code: /[0-9]/.test(key) ?
                "Digit" + key : "Key" + key.toUpperCase(), bubbles: true, cancelable: true}));
        }
    }
}"""


# A button by its label (the text beside its icon and its key).
BUTTON_JS = """name => [...document.querySelectorAll('button')].find(
    b => b.querySelector('[data-testid="stMarkdownContainer"]')?.innerText === name)"""
TRUNCATED_JS = f"""names => names.filter(name => {{
    const button = ({BUTTON_JS})(name);
    if (!button) return true;
    return [button, ...button.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1);
}})"""


def test_category_buttons_show_their_whole_names(sample_server: Server, sample_browser: Browser) -> None:
    """At 1400x900 every category button (keys 1-8) shows its whole name, above the pair's URLs."""
    page = sample_browser.page
    page.goto(sample_server.url + "/")  # the first visit loads and fingerprints the sample
    page.get_by_text("Next:").first.wait_for(timeout=600_000)
    open_page(page, sample_server.url, "/Audit", "Labeled pairs")
    names = list(CATEGORIES[:8])
    assert page.evaluate(TRUNCATED_JS, names) == []
    last = page.get_by_role("button", name=CATEGORIES[7]).first.bounding_box()
    assert last and last["y"] + last["height"] <= 900
    screenshot(page, "audit.png")
    assert_clean(sample_browser, "/Audit")


SHORTCUTS = {
    "Duplicate": "D",
    "Not duplicate": "N",
    "Unsure": "U",
    "Skip": "S",
    "Undo": "Z",
    "Previous": "K",
    "Next": "J",
    **{name: str(i + 1) for i, name in enumerate(CATEGORIES[:8])},
}
KBD_JS = f"""names => Object.fromEntries(names.map(name => {{
    const button = ({BUTTON_JS})(name);
    return [name, button?.querySelector('kbd')?.innerText ?? null];
}}))"""
IN_SIDEBAR_JS = "() => !!document.activeElement?.closest('[data-testid=\"stSidebar\"]')"
MAIN_TOP_JS = "() => document.querySelector('[data-testid=\"stMain\"]').scrollTop"


def scroll_down(page: object) -> float:
    page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 1200)")
    page.wait_for_function(f"() => ({MAIN_TOP_JS})() > 0")
    return float(page.evaluate(MAIN_TOP_JS))


def test_keys_on_the_buttons_undo_and_the_next_pair_opens_at_its_top(
    sample_server: Server, sample_browser: Browser
) -> None:
    """Every button shows its key; a category key keeps the page where it is, a label or a skip opens the
    next pair at its top; z takes the label back and reopens its pair."""
    page = sample_browser.page
    page.goto(sample_server.url + "/Audit")
    page.get_by_text("Labeled pairs").first.wait_for(timeout=600_000)
    open_page(page, sample_server.url, "/Audit", "Labeled pairs")
    assert page.evaluate(KBD_JS, list(SHORTCUTS)) == SHORTCUTS

    first = page.evaluate(PAIR_SHOWN_JS)
    down = scroll_down(page)
    page.keyboard.press("2")  # a category: the same pair, where it was
    page.locator("button:has(strong)", has_text=CATEGORIES[1]).wait_for()  # the chosen kind is in bold
    wait_idle(page)
    # (the category line below the buttons may wrap differently: a few pixels of layout, not a jump)
    assert page.evaluate(PAIR_SHOWN_JS) == first and page.evaluate(MAIN_TOP_JS) > down / 2

    key_to_next_pair_ms(page, "n")  # a label: the next pair, at its top
    page.wait_for_function(f"() => ({MAIN_TOP_JS})() === 0")
    labeled = page.evaluate(PAIR_SHOWN_JS)
    scroll_down(page)
    key_to_next_pair_ms(page, "s")  # a skip too
    page.wait_for_function(f"() => ({MAIN_TOP_JS})() === 0")

    key_to_next_pair_ms(page, "z")  # undo: the labeled pair again, opened, and no label left
    reopened = page.evaluate(PAIR_SHOWN_JS)
    assert reopened.split("|")[1:] == first.split("|")[1:] and labeled != first
    page.get_by_text("Pair reopened by undo").wait_for()
    page.get_by_text("Progress: 0 labeled pairs at this setting (0 labels in all)").wait_for()

    # the labeled pairs list and its filters are drawn once switched on
    key_to_next_pair_ms(page, "d")
    page.get_by_text("Labeled pairs", exact=True).click()
    for name in ("Label", "Category", "Labeler", "Bucket"):
        page.get_by_text(name, exact=True).first.wait_for()
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    wait_idle(page)
    assert_clean(sample_browser, "/Audit keys, undo and the labeled pairs list")


def test_label_30_pairs_by_keyboard_alone(sample_server: Server, sample_browser: Browser) -> None:
    """The analyst's loop: name, quota and 30 labels without the mouse. Each key press to the next pair
    drawn is timed (written to the test log; speed is not asserted)."""
    server, browser = sample_server, sample_browser
    page = browser.page
    page.goto(
        server.url + "/Audit"
    )  # the first visit loads the sample and fingerprints it: minutes on a busy machine
    page.get_by_text("Labeled pairs").first.wait_for(timeout=600_000)
    open_page(page, server.url, "/Audit", "Labeled pairs")
    name = page.get_by_label("Your name", exact=True).and_(page.get_by_role("textbox"))
    name.focus()
    page.keyboard.type("keyboard")
    page.keyboard.press("Enter")
    wait_idle(page)
    per_bucket = slider_thumb(page, "Pairs per bucket")
    per_bucket.focus()
    page.keyboard.press("End")
    assert settled_value(page, per_bucket) == 30
    # The slider keeps the focus and a focused field takes no shortcut: Esc leaves it (as a person would).
    page.keyboard.press("Escape")
    assert page.evaluate(IN_SIDEBAR_JS) is False
    caption = page.evaluate(PAIR_SHOWN_JS)
    assert int(caption.split(" of ")[1].split()[0]) >= 30, caption
    # the label bar is in view without scrolling at 1400x900
    for label in ("Duplicate", "Not duplicate", "Unsure", "Skip", "Undo"):
        box = page.get_by_role("button", name=label).first.bounding_box()
        assert box and box["y"] + box["height"] <= 900, label
    times_ms = []
    for i in range(30):
        if i % 5 == 2:
            page.keyboard.press("2")  # a category on its key; the label follows once it is drawn
            wait_idle(page)
        elif i % 5 == 4:  # a category and the label typed in one go: both reach the server as one rerun
            before = page.evaluate(PAIR_SHOWN_JS)
            page.evaluate(TYPE_TWO_KEYS_JS, ["6", "d" if i % 2 else "n"])
            page.wait_for_function(f"() => ({PAIR_SHOWN_JS})() !== {json.dumps(before)}")
            wait_idle(page)
            continue
        times_ms.append(key_to_next_pair_ms(page, "d" if i % 2 else "n"))
    times_ms.sort()
    median_ms = times_ms[len(times_ms) // 2]
    print(
        f"keyboard label to next pair drawn: median {median_ms:.0f} ms, max {times_ms[-1]:.0f} ms (30 labels)"
    )
    assert_clean(browser, "/Audit after 30 keyboard labels")
    timings = sample_server.log.parent / "keyboard_timings_ms.json"
    timings.write_text(json.dumps(times_ms), encoding="utf-8")

    sample_server.stop()  # DuckDB has one writer process: read the labels once the app is gone
    with Store(sample_server.db, read_only=True) as store:
        labels = store.labels()
    by_keys = labels[labels["labeler"] == "keyboard"]
    assert len(by_keys) == 30
    assert set(by_keys["label"]) == {"duplicate", "not"}
    # the pairs given key 2 or 6 before their label (and the ones where it was suggested) carry it
    assert (by_keys["category"] == CATEGORIES[1]).sum() >= 6
    assert (by_keys["category"] == CATEGORIES[5]).sum() >= 6
