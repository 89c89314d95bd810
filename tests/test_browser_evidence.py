"""Evidence and drill-down in a real browser: why a pair matched (Audit, Clusters), the chain through a
cluster held together by one weak link, and a host picked on Home or Explore opening its clusters.

The server runs over the 300-page generated crawl plus a crafted cluster: an article (two copies), a page that
holds most of it and all of a second article, and that second article (two copies). The first and the last
share no word run: the page between them joins them, by a link just over the threshold on one side. The
texts carry hostile payloads, which must show as text in the highlighted passages. The evidence screenshot
for the README is taken here (NEARDUP_SCREENSHOTS=docs writes docs/evidence.png).
"""

from __future__ import annotations

import html
import json
import random
import re
import shutil
from collections.abc import Iterator

import pytest
from conftest import build_small_db
from live_app import (
    SHOTS,
    TIMEOUT_MS,
    Browser,
    Server,
    assert_clean,
    open_page,
    require_chromium,
    screenshot,
    serving,
    wait_idle,
)

from neardup import engine
from neardup.analysis import load_fingerprints
from neardup.config import Config
from neardup.store import Store

pytestmark = pytest.mark.browser

HOST = "chain.example"
PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    ":red[x]",
    "https://evil.example/x",
)


def article(rng: random.Random, n: int, with_payloads: bool = False) -> list[str]:
    vocab = [
        f"{a}{b}" for a in ("tal", "mor", "ves", "quin", "dro", "pel") for b in ("an", "ix", "ure", "om")
    ]
    out = [rng.choice(vocab) for _ in range(n)]
    if with_payloads:
        out[40:40] = list(PAYLOADS)
    return out


def chain_records() -> list[dict]:
    """Five pages at HOST: first (x2), middle, second (x2). Containment first-in-middle ~0.84 (weak at 0.8),
    second-in-middle ~1.0; first and second share nothing."""
    rng = random.Random(5)
    first, second = article(rng, 400, with_payloads=True), article(rng, 420)
    # an edit in the copied part: two shared passages, each in its colour
    middle = first[:120] + ["an", "edited", "sentence", "here"] + first[124:337] + second

    def page(path: str, words: list[str], day: int) -> dict:
        body = "".join(f"<p>{html.escape(' '.join(words[i : i + 60]))}</p>" for i in range(0, len(words), 60))
        page_html = (
            "<!DOCTYPE html><html><head><title>chain</title></head><body><main><article>"
            f"<h1>Chain story</h1>{body}"
            "</article></main></body></html>"
        )
        return {
            "url": f"https://{HOST}/{path}",
            "fetched_at": f"2026-05-0{day}T10:00:00Z",
            "status": 200,
            "html": page_html,
        }

    return [
        page("first", first, 1),
        page("first-copy", first, 2),
        page("middle", middle, 3),
        page("second", second, 4),
        page("second-copy", second, 5),
    ]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    require_chromium()
    tmp = tmp_path_factory.mktemp("evidence")
    db = tmp / "neardup.duckdb"
    shutil.move(build_small_db(tmp), db)
    crafted = tmp / "chain.jsonl"
    crafted.write_text("".join(json.dumps(r) + "\n" for r in chain_records()), encoding="utf-8")
    config = Config()
    with Store(db) as store:
        assert engine.ingest_file(store, crafted, config, jobs=1).loaded == 5
        fp = load_fingerprints(store, config, jobs=1)
        pages = fp.pages.set_index("url")
        units = [int(pages.loc[f"https://{HOST}/{p}", "unit_id"]) for p in ("first", "middle", "second")]
        stored = dict(
            zip(
                zip(fp.pairs["a"].tolist(), fp.pairs["b"].tolist(), strict=True),
                fp.pairs["containment"],
                strict=True,
            )
        )
        weak, strong = stored[tuple(sorted(units[:2]))], stored[tuple(sorted(units[1:]))]
        assert 0.8 <= weak < 0.85 and strong > 0.95, (weak, strong)
        assert tuple(sorted((units[0], units[2]))) not in stored
    with serving(db, tmp, 305) as srv:
        yield srv


def pick(page: object, label: str, option_text: str) -> None:
    """Choose the option containing `option_text` in the selectbox labelled `label`."""
    wait_idle(page)
    box = page.get_by_role("combobox", name=label, exact=True)
    box.scroll_into_view_if_needed()
    box.click()
    if box.get_attribute("aria-expanded") != "true":  # a click that scrolled the page only focused it
        box.press("ArrowDown")
    page.get_by_role("option").filter(has_text=option_text).first.click()
    wait_idle(page)


def click_table_row(page: object, table: object, row: int) -> None:
    """Select row `row` (0 = first data row) of a st.dataframe with row selection: its row marker, at the
    left end of the row (the grid is a canvas, 35 px per row under a 35 px header)."""
    table.scroll_into_view_if_needed()
    box = table.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 35 * row + 17)


def assert_no_markup(page: object) -> None:
    for selector in ("img[src='x']", "a[href^='javascript']", "a[href*='evil.example']"):
        assert page.locator(selector).count() == 0, selector
    assert not page.evaluate("() => [...document.scripts].some(s => s.text.includes('alert(1)'))")


def test_clusters_shows_the_chain_the_weak_link_and_the_passages(server: Server, browser: Browser) -> None:
    page = browser.page
    # the URL's filter: the crafted cluster alone
    open_page(page, server.url, f"/Clusters?url={HOST}", "Why two members match")
    assert page.get_by_text("1 duplicate clusters of").count() == 1
    warning = page.locator('[data-testid="stAlert"]', has_text="Held together by one weak link")
    warning.wait_for()
    text = warning.inner_text()
    assert "a group of 2 pages and one of 3" in text or "a group of 3 pages and one of 2" in text
    # the two ends of the chain: no shared passage, joined through the page between them
    pick(page, "Member", f"{HOST}/first")  # "first" before "first-copy": the first match
    pick(page, "and member", f"{HOST}/second-copy")
    page.get_by_text("Joined through 1 page").wait_for()
    assert page.get_by_text("no shared passage of 5 words or more").count() == 1
    assert page.get_by_text("no candidate pair").count() >= 1
    # drawn after the chain's line (a run's elements arrive one by one): waited for, not counted at once
    page.locator('[data-testid="stAlert"]', has_text="weakest link").wait_for()
    wait_idle(page)
    assert page.locator('[data-testid="stAlert"]', has_text="weakest link").count() == 1
    # an end and the page between: the shared passage in both texts, hostile text as text
    pick(page, "and member", f"{HOST}/middle")
    page.get_by_text("Shared passages highlighted in both texts (2)").wait_for()
    wait_idle(page)
    assert page.get_by_text(re.compile(r"2 shared passages \(the longest 2\d\d words\)")).count() == 1
    assert page.get_by_text("a stored candidate pair").count() >= 1
    sides = page.locator('[data-testid="stMarkdownContainer"]', has_text="onerror")
    assert sides.count() == 2
    for side in (sides.nth(0), sides.nth(1)):
        shown = side.inner_text().replace("\u2060", "")
        for payload in PAYLOADS:
            assert payload in shown, payload
    assert_no_markup(page)
    assert_clean(browser, "/Clusters evidence")
    wait_idle(page)
    page.get_by_text("Why two members match").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.evaluate("() => document.activeElement?.blur()")
    screenshot(page, "evidence.png")
    assert (SHOTS / "evidence.png").exists()


def test_audit_shows_why_each_pair_matched(server: Server, browser: Browser) -> None:
    page = browser.page
    open_page(page, server.url, "/Audit", "Labeled pairs")
    page.get_by_text("Why they match:").wait_for()
    line = page.locator('[data-testid="stMarkdownContainer"]', has_text="Candidate:").first
    line.wait_for()
    wait_idle(page)
    candidate = line.inner_text()
    assert "LSH bands" in candidate and "exact verification kept it" in candidate
    assert page.get_by_text(re.compile(r"^Passages: 1: ")).count() == 0  # drawn only when asked for
    page.get_by_text("Shared passages highlighted in both texts").first.click()
    wait_idle(page)
    page.get_by_text(re.compile(r"^Passages: 1: \d+ words")).wait_for()
    assert_clean(browser, "/Audit evidence")


@pytest.mark.parametrize("start", ["/", "/Explore"])
def test_a_host_picked_opens_its_clusters_and_pairs(server: Server, browser: Browser, start: str) -> None:
    page = browser.page
    open_page(page, server.url, start, "Redundant pages per host")
    table = page.locator('[data-testid="stDataFrame"]').first  # the hosts table comes first on both
    first_host = table.locator('[role="gridcell"]').first.inner_text(timeout=TIMEOUT_MS).strip()
    click_table_row(page, table, 0)
    page.wait_for_url(re.compile(r"/Clusters\?.*host="))
    page.get_by_text(f"Pairs at the threshold with a page on {first_host}").wait_for()
    wait_idle(page)
    assert page.get_by_role("combobox", name="Host", exact=True).input_value() == first_host
    clusters_caption = page.locator('[data-testid="stCaptionContainer"]', has_text="duplicate clusters").first
    assert "(filtered)" in clusters_caption.inner_text()
    # the host's pairs, then the clusters' caption right above the clusters table it counts
    pairs_table, clusters_table = page.locator('[data-testid="stDataFrame"]').all()[:2]
    assert (
        page.get_by_text(f"Pairs at the threshold with a page on {first_host}").bounding_box()["y"]
        < pairs_table.bounding_box()["y"]
        < clusters_caption.bounding_box()["y"]
        < clusters_table.bounding_box()["y"]
    )
    assert_clean(browser, f"drill-down from {start}")
    # back by the menu: the host picked before does not drill down again
    name = "Home" if start == "/" else "Explore"
    page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]', has_text=name).click()
    page.get_by_text("Redundant pages per host").wait_for()
    wait_idle(page)
    page.wait_for_timeout(1000)
    assert "/Clusters" not in page.url


GRID_FOCUSED_JS = """() => {
    const a = document.activeElement;
    return !!a?.closest('[data-testid="stDataFrame"]') && a.tagName !== 'BUTTON'
        && !a.closest('[data-testid="stElementToolbar"]');
}"""
CLUSTER_SHOWN_JS = (
    "() => [...document.querySelectorAll('h3')].map(h => h.innerText).find(t => t.startsWith('Cluster '))"
)


def test_a_cluster_is_chosen_by_keyboard_as_the_page_says(server: Server, browser: Browser) -> None:
    """Clusters without the mouse: Tab into the table, arrows to a row, Shift+Space shows its cluster; the page
    names those keys (the grid's own, shown nowhere else)."""
    page = browser.page
    open_page(page, server.url, "/Clusters", "Compare with the representative")
    assert page.get_by_text("Shift+Space", exact=False).count() >= 1
    before = page.evaluate(CLUSTER_SHOWN_JS)
    page.get_by_role("textbox", name="URL contains").focus()
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate(GRID_FOCUSED_JS):
            break
    assert page.evaluate(GRID_FOCUSED_JS), "no Tab reaches the clusters table"
    for key in ("ArrowDown", "ArrowDown", "Shift+Space"):
        page.keyboard.press(key)
    page.wait_for_function(f"() => ({CLUSTER_SHOWN_JS})() !== {json.dumps(before)}")
    wait_idle(page)
    assert page.evaluate(CLUSTER_SHOWN_JS) != before
    assert_clean(browser, "/Clusters by keyboard")
