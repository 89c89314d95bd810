"""A real browser against `streamlit run app.py`: Debian's Chromium driven by Playwright.

The server runs on a free port over a pre-built database: the 300-page generated crawl, a few labels
(from its ground truth, so the Tune page has something to show), and a small cluster of pages whose
text carries XSS payloads. Every page must render without an exception and without any dialog; the
payloads must show up as literal text. The screenshots in docs/ (shown by the README) are taken here
(with NEARDUP_SCREENSHOTS=docs).
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from conftest import build_small_db
from live_app import (
    CHROMIUM,
    PAGES,
    SHOTS,
    TIMEOUT_MS,
    Browser,
    Server,
    assert_clean,
    click_button,
    launch_browser,
    open_page,
    require_chromium,
    screenshot,
    serving,
    settled_value,
    slider_thumb,
    start_app,
    wait_for_health,
    wait_idle,
)

from neardup import audit, engine
from neardup.analysis import load_fingerprints
from neardup.config import Config
from neardup.export import COLUMNS
from neardup.labels import sample_pairs
from neardup.store import Store
from neardup.urls import canonicalize_url

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent


SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[click](javascript:alert(1))"
LATEX = "$\\alert{1}$"
# bare URLs and an address in page text: GFM would autolink them
AUTOLINKS = ("https://evil.example/x", "www.evil.example", "mail@evil.example")
XSS_HOST = "https://xss.example"
XSS_COPIES = 3  # plus the original: a 4-page cluster, larger than any in the small crawl


def xss_html(edition: int) -> str:
    """A page whose main text holds the payloads (as text) and whose HTML holds them as tags.
    The copies differ in one word, right after the payloads and before the bare links, so the diff shows
    them all within its 12 words of context around the change."""
    rng = random.Random(42)
    vocab = [
        "zarquon",
        "blinter",
        "mossle",
        "tavrik",
        "quenby",
        "florp",
        "grizzen",
        "pomble",
        "shunt",
        "vexil",
        "wumpet",
        "yarble",
        "cradlin",
        "drossel",
        "eskander",
        "fribble",
        "gantry",
        "hoskin",
    ]
    paragraphs = ["<p>" + " ".join(rng.choice(vocab) for _ in range(50)) + ".</p>" for _ in range(6)]
    payload = (
        f"<p>Payloads: &lt;script&gt;alert(1)&lt;/script&gt; and &lt;img src=x onerror=alert(1)&gt; and "
        f"{LINK} and {LATEX} and :red[x] **bold** edition{edition} {' '.join(AUTOLINKS)}</p>"
    )
    return (
        "<!DOCTYPE html><html><head><title>&lt;img src=x onerror=alert(1)&gt;</title></head><body>"
        "<nav><a href='/'>Home</a></nav><main><article><h1>Security notes</h1>"
        + paragraphs[0]
        + payload
        + "".join(paragraphs[1:])
        + f"{SCRIPT}{IMG}</article></main></body></html>"
    )


def xss_records() -> list[dict]:
    urls = [
        f"{XSS_HOST}/notes",
        *(f"{XSS_HOST}/copy-{i}" for i in range(1, XSS_COPIES)),
        f"{XSS_HOST}/search?q={SCRIPT}",
    ]
    return [
        {"url": url, "fetched_at": f"2026-04-0{i + 1}T10:00:00Z", "status": 200, "html": xss_html(i)}
        for i, url in enumerate(urls)
    ]


def label_from_truth(store: Store, truth_csv: Path, config: Config) -> int:
    """Label a stratified sample (10 pairs per bucket, another seed than the app's) from the ground truth."""
    cluster_of = {}
    with truth_csv.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            cluster_of[row["url"]] = row["true_cluster"]
    pairs = audit.candidate_pairs(load_fingerprints(store, config, jobs=1), config)
    picked = sample_pairs(pairs, per_bucket=10, seed=99, exclude=set())
    for row in picked.itertuples():
        a, b = store.page(int(row.page_a), config.norm_key), store.page(int(row.page_b), config.norm_key)
        same = cluster_of.get(a["url"]) == cluster_of.get(b["url"])
        store.record_label(
            row.url_a,
            row.url_b,
            md5_a=row.md5_a,
            md5_b=row.md5_b,
            label="duplicate" if same else "not",
            labeler="truth",
            setting=config.to_dict(),
        )
    return len(picked)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    require_chromium()
    tmp = tmp_path_factory.mktemp("browser")
    db = tmp / "neardup.duckdb"
    shutil.move(build_small_db(tmp), db)
    xss_file = tmp / "xss.jsonl"
    xss_file.write_text("".join(json.dumps(r) + "\n" for r in xss_records()), encoding="utf-8")
    config = Config()
    with Store(db) as store:
        assert engine.ingest_file(store, xss_file, config, jobs=1).loaded == XSS_COPIES + 1
        engine.ensure_fingerprints(store, config, jobs=1)
        assert label_from_truth(store, tmp / "truth.csv", config) >= 10
        n_pages, n_labels = store.count_pages(), len(store.labels())
    with serving(db, tmp, n_pages, n_labels, xss_urls=[r["url"] for r in xss_records()]) as srv:
        yield srv


# --- the tests (they share one server; the last one stops it) ----------------------------------
# The sidebar menu st.navigation draws (Home.py): (icon, title) in its order.
NAV_MENU = [
    ("home", "Home"),
    ("upload_file", "Load"),
    ("bar_chart", "Explore"),
    ("compare", "Audit"),
    ("tune", "Tune"),
    ("workspaces", "Clusters"),
    ("download", "Export"),
    ("link", "URL rules"),
]


def sidebar_menu(page: object) -> list[tuple[str, str]]:
    """The entries of the sidebar page menu once it is drawn: (icon name, title) each."""
    links = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    links.first.wait_for()
    entries = links.evaluate_all(
        """els => els.map(a => {
            const icon = a.querySelector('[data-testid="stIconMaterial"]')?.textContent.trim() || "";
            return [icon, a.innerText.replace(icon, "").trim()];
        })"""
    )
    return [tuple(e) for e in entries]


@pytest.mark.parametrize("packaged", [False, True], ids=["streamlit-run-app.py", "neardup-app"])
def test_a_fresh_server_opens_any_page_with_the_app_menu(
    small_db: Path, tmp_path: Path, packaged: bool
) -> None:
    """The first request of a new server goes straight to a page: Streamlit finds a `pages/` folder next to
    the main script, and until a run has called st.navigation it serves that folder's scripts as pages of
    their own (a menu of file names, "app" for the main script). The page must come with the app's menu."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"the browser test needs Debian's Chromium at {CHROMIUM}: apt-get install chromium")
    db = tmp_path / "neardup.duckdb"
    shutil.copyfile(small_db, db)
    url, proc, log = start_app(db, tmp_path, packaged=packaged)
    srv = Server(url, db, proc, log, 300, 0)
    try:
        wait_for_health(srv)
        with launch_browser() as b:
            open_page(b.page, url, "/Audit", "Labeled pairs")
            assert sidebar_menu(b.page) == NAV_MENU
            assert b.page.locator("h1", has_text="Audit pairs").count() == 1
            assert_clean(b, "/Audit first")
            # another page in a new session of the same server
            other = b.page.context.new_page()
            other.set_default_timeout(TIMEOUT_MS)
            open_page(other, url, "/Tune", "How precision, recall")
            assert sidebar_menu(other) == NAV_MENU
            assert other.locator("h1", has_text="Tune the threshold from labels").count() == 1
            other.close()
    finally:
        srv.stop()


# A sitecustomize for a server that serves each deferred download (a `data=` callable, made on the click)
# a while after the request came, as a busy server may: by then the rerun the click asked for is over.
LATE_DOWNLOADS = """
import asyncio

from streamlit.runtime import backend_operation_handler

handle = backend_operation_handler.DeferredFileHandler.handle


async def late(self, request, session_id):
    await asyncio.sleep(1.5)
    return await handle(self, request, session_id)


backend_operation_handler.DeferredFileHandler.handle = late
print("%s", flush=True)
"""
LATE_MARK = "deferred downloads are served 1.5 s late"
LATE_DOWNLOADS %= LATE_MARK


def test_export_clusters_csv_served_after_a_rerun(small_db: Path, tmp_path: Path) -> None:
    """The file a click asks for is still there when the request is served after the click's rerun (each
    run replaces a deferred download's file id, and the run's end drops the ids no button shows). Its own
    server and browser: it runs before the module's (one Playwright at a time)."""
    db = tmp_path / "neardup.duckdb"
    shutil.copyfile(small_db, db)
    site = tmp_path / "late"
    site.mkdir()
    (site / "sitecustomize.py").write_text(LATE_DOWNLOADS, encoding="utf-8")
    path = os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])
    url, proc, log = start_app(db, tmp_path, {"PYTHONPATH": path})
    srv = Server(url, db, proc, log, 300, 0)
    try:
        wait_for_health(srv)
        with launch_browser() as b:
            open_page(b.page, url, "/Export", "Import labels")
            with b.page.expect_download(timeout=30_000) as info:
                click_button(b.page, "clusters.csv")
            target = tmp_path / "clusters.csv"
            info.value.save_as(target)
            assert len(pd.read_csv(target)) == 300
            assert_clean(b, "/Export, a late download")
    finally:
        srv.stop()
    assert LATE_MARK in log.read_text()  # the server did serve its downloads late


def test_every_page_renders_and_is_captured(server: Server, browser: Browser) -> None:
    SHOTS.mkdir(exist_ok=True)
    page = browser.page
    for path, marker, shot in PAGES:
        open_page(page, server.url, path, marker)
        assert_clean(browser, path)
        if shot:
            screenshot(page, shot)
    # the home page tells the real numbers
    open_page(page, server.url, "/", "Next:")
    assert (
        f"{server.n_pages:,} pages" in page.locator('[data-testid="stCaptionContainer"]').first.inner_text()
    )


def svg_texts(locator: object) -> list[str]:
    return locator.evaluate_all("els => els.map(e => e.textContent)")  # SVG text has no innerText


def test_chart_axes_as_drawn(server: Server, browser: Browser) -> None:
    """What only the drawn chart shows: Plotly types an axis of numeric strings as numbers (ticks at 2.5
    pages) unless told it is a category, puts its end ticks where the range says, and clips a marker at the
    axis line."""
    page = browser.page
    for path, marker in (("/", "Next:"), ("/Explore", "Per host")):
        open_page(page, server.url, path, marker)
        sizes = page.locator('[data-testid="stPlotlyChart"]', has_text="Duplicate cluster sizes")
        ticks = svg_texts(sizes.locator(".xtick text"))
        assert ticks and all(t.isdigit() for t in ticks), (path, ticks)
    hist = page.locator('[data-testid="stPlotlyChart"]', has_text="Candidate pairs by similarity")
    ticks = svg_texts(hist.locator(".xtick text"))
    assert ticks[-1] == "1.00", ticks  # the last bin ends at 1.0: no 1.05
    plot = hist.locator(".nsewdrag").first.bounding_box()
    points = hist.locator(".scatterlayer .point").all()
    assert points  # the truth labels' duplicate share per bucket
    for point in points:
        box = point.bounding_box()
        assert box["y"] + box["height"] <= plot["y"] + plot["height"] + 0.5, "a share dot cut by the x axis"
    screenshot(page, "explore_labeled.png")
    # the count axis switch
    choose_radio(page, "Count axis", "linear")
    hist.locator("text.ytitle").filter(has_text=re.compile(r"^pairs$")).wait_for()  # redrawn: linear
    choose_radio(page, "Count axis", "log")
    hist.locator("text.ytitle").filter(has_text="pairs (log scale)").wait_for()
    assert_clean(browser, "/Explore charts")


def press_on(page: object, thumb: object, key: str, times: int, expected: float) -> None:
    """Press an arrow key on the slider `times` times, each once the app is idle and the slider shows the
    step before (a rerun may redraw the slider and take its focus between two presses, as a person would
    see), then wait until it shows `expected`."""
    for _ in range(times):
        before = float(thumb.input_value())
        wait_idle(page)
        thumb.focus()
        page.keyboard.press(key)
        page.wait_for_function(
            "([el, v]) => Math.abs(parseFloat(el.value) - v) > 1e-6", arg=[thumb.element_handle(), before]
        )
    page.wait_for_function(
        "([el, v]) => Math.abs(parseFloat(el.value) - v) < 1e-6", arg=[thumb.element_handle(), expected]
    )


def choose_radio(page: object, group: str, option: str) -> None:
    page.locator('[data-testid="stRadio"]', has_text=group).get_by_text(option, exact=True).click()
    wait_idle(page)


def switch_to_simhash(page: object) -> object:
    """Choose SimHash in the sidebar; its bits slider, once drawn at the default 6."""
    choose_radio(page, "Method", "simhash")
    bits = slider_thumb(page, "Threshold (max Hamming bits)")
    bits.wait_for()
    assert settled_value(page, bits) == 6
    return bits


def test_sidebar_widgets_keep_every_change(server: Server, browser: Browser) -> None:
    page = browser.page
    open_page(page, server.url, "/Explore", "Per host")
    containment = slider_thumb(page, "Threshold (min containment)")
    assert settled_value(page, containment) == 0.8
    for key, times, expected in (("ArrowLeft", 5, 0.75), ("ArrowRight", 15, 0.9), ("ArrowLeft", 3, 0.87)):
        press_on(page, containment, key, times, expected)
        assert settled_value(page, containment) == expected, f"after {key} x{times}"
    # a mouse drag to the far left end: the floor
    box = containment.bounding_box()
    track = page.locator('[data-testid="stSlider"]', has_text="Threshold (min containment)").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(track["x"] - 50, box["y"] + box["height"] / 2, steps=8)
    page.mouse.up()
    assert settled_value(page, containment) == 0.7
    press_on(page, containment, "ArrowRight", 12, 0.82)
    assert settled_value(page, containment) == 0.82

    bits = switch_to_simhash(page)
    press_on(page, bits, "ArrowLeft", 2, 4)
    assert settled_value(page, bits) == 4
    choose_radio(page, "Method", "minhash")
    containment = slider_thumb(page, "Threshold (min containment)")
    containment.wait_for()
    assert settled_value(page, containment) == 0.82  # each scale keeps its own threshold
    choose_radio(page, "Method", "simhash")
    bits.wait_for()
    assert settled_value(page, bits) == 4
    assert (
        page.locator('[data-testid="stRadio"]', has_text="Method")
        .get_by_role("radio", name="simhash")
        .is_checked()
    )
    assert_clean(browser, "/Explore after moving the sidebar widgets")


def test_a_threshold_moved_after_a_method_switch_goes_to_the_next_page(
    server: Server, browser: Browser
) -> None:
    """The bits threshold moved right after switching to SimHash is the one the next page opens at (the
    slider's first run assigns its state; the move after it must still be what the session keeps)."""
    page = browser.page
    open_page(page, server.url, "/", "Next:")
    bits = switch_to_simhash(page)
    press_on(page, bits, "ArrowRight", 1, 7)
    assert settled_value(page, bits) == 7
    page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]', has_text="Explore").click()
    page.get_by_text("Per host").first.wait_for()
    assert settled_value(page, slider_thumb(page, "Threshold (max Hamming bits)")) == 7
    assert "threshold=7" in page.url
    assert_clean(browser, "/Explore after a method switch and a threshold move on Home")


# Every value the threshold slider shows, from now on (a new element after a redraw included).
RECORD_SLIDER_JS = """label => { window.__shown = []; let last = null; const tick = () => {
    const el = [...document.querySelectorAll('[data-testid="stSlider"]')]
        .find(s => s.innerText.includes(label))?.querySelector('input[type=range]');
    if (el && el.value !== last) { window.__shown.push(parseFloat(el.value)); last = el.value; }
    requestAnimationFrame(tick); }; tick(); }"""
# Counts the script runs that start (the app element's state turning to 'running'), seen by a mutation
# observer: a rerun shorter than a frame can start and end between two polls of the attribute.
COUNT_RUNS_JS = """() => { window.__runs = 0; const app = document.querySelector('[data-testid="stApp"]');
    new MutationObserver(() => { if (app.getAttribute('data-test-script-state') === 'running') window.__runs++; })
        .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }"""
# The press's rerun has started, or is over already: then the URL holds the value the press set (a quick run's
# 'running' and 'notRunning' can reach the page in one render, which no observer sees).
RUN_STARTED_JS = """expected => window.__runs > 0
    || new URLSearchParams(location.search).get('threshold') === expected"""


def test_a_key_press_during_a_rerun_is_kept(server: Server, browser: Browser) -> None:
    """A second press lands while the first one's rerun is under way: that run must not push the value
    from before the press back to the slider (it did while every run assigned the widgets' state)."""
    page = browser.page
    label = "Threshold (min containment)"
    open_page(page, server.url, "/Explore", "Per host")
    page.evaluate(COUNT_RUNS_JS)
    for key, step in (("ArrowLeft", -0.01), ("ArrowRight", 0.01)):
        thumb = slider_thumb(page, label)
        start = settled_value(page, thumb)
        page.evaluate(RECORD_SLIDER_JS, label)
        for i in range(4):
            wait_idle(page)
            thumb.focus()
            page.evaluate("() => { window.__runs = 0; }")
            page.keyboard.press(key)
            page.wait_for_function(
                RUN_STARTED_JS, arg=f"{round(start + (2 * i + 1) * step, 2):g}", polling="raf"
            )
            page.keyboard.press(key)
        assert settled_value(page, thumb) == round(start + 8 * step, 2), key
        shown = page.evaluate("() => window.__shown")
        back = [(a, b) for a, b in zip(shown, shown[1:], strict=False) if (b - a) * step < -1e-9]
        assert not back, f"{key}: the slider went back {back} (shown: {shown})"
    assert_clean(browser, "/Explore after presses during reruns")


def test_setting_survives_reload_and_a_shared_link(server: Server, browser: Browser) -> None:
    page = browser.page
    open_page(page, server.url, "/Explore", "Per host")
    thumb = slider_thumb(page, "Threshold (min containment)")
    press_on(page, thumb, "ArrowLeft", 4, 0.76)
    assert settled_value(page, thumb) == 0.76
    assert "threshold=0.76" in page.url
    page.reload()
    page.get_by_text("Per host").first.wait_for()
    assert settled_value(page, slider_thumb(page, "Threshold (min containment)")) == 0.76
    shared = page.url
    other = page.context.new_page()
    try:
        other.set_default_timeout(TIMEOUT_MS)
        other.goto(shared.replace("/Explore", "/Export"))
        other.get_by_text("Import labels").first.wait_for()
        wait_idle(other)
        assert settled_value(other, slider_thumb(other, "Threshold (min containment)")) == 0.76
        # Export names the setting it writes (drawn below the slider, maybe after the run wait_idle saw end)
        other.locator("main", has_text="containment >= 0.76").wait_for()
    finally:
        other.close()


def test_xss_payloads_show_as_text(server: Server, browser: Browser) -> None:
    page = browser.page
    open_page(page, server.url, "/Clusters", "Compare with the representative")
    # the payload cluster is the largest, so it is the one shown
    assert page.get_by_text(f"{XSS_HOST}/notes").count() >= 1
    click_button(page, "Open this pair in Audit")
    page.get_by_text("Pair opened from the Clusters page").wait_for()
    wait_idle(page)
    diff = page.locator('[data-testid="stMarkdownContainer"]', has_text="onerror")
    diff.nth(1).wait_for(timeout=60_000)  # the rerun after the click may still be drawing
    assert diff.count() == 2  # left and right
    text = diff.first.inner_text()
    for payload in (SCRIPT, IMG, LINK, LATEX, ":red[x]", "**bold**"):
        assert payload in text, payload
    # the raw HTML is shown as source, tags and all
    page.get_by_text("Raw HTML (as source, never rendered)").click()
    wait_idle(page)
    code = page.locator('[data-testid="stCode"]', has_text="onerror")
    code.nth(1).wait_for(timeout=60_000)
    assert code.count() == 2
    assert SCRIPT in code.first.inner_text()
    # the bare URLs and the address read as text, none became a link
    shown = text.replace("\u2060", "")
    for literal in AUTOLINKS:
        assert literal in shown, literal
    assert page.locator("a[href*='evil.example']").count() == 0
    # nothing became markup
    for selector in ("img[src='x']", "a[href^='javascript']", ".katex"):
        assert page.locator(selector).count() == 0, selector
    assert not page.evaluate("() => [...document.scripts].some(s => s.text.includes('alert(1)'))")
    assert_clean(browser, "Audit with the payload pair")
    screenshot(page, "audit_xss.png")


def test_no_request_leaves_the_server(server: Server, browser: Browser) -> None:
    """A page load fetches nothing from another host: no font CDN for the favicon or the icons."""
    page = browser.page
    requests: list[str] = []

    def record(request: object) -> None:
        requests.append(request.url)

    page.on("request", record)
    for path, marker, _ in PAGES[:4]:
        open_page(page, server.url, path, marker)
    page.wait_for_timeout(1000)  # the favicon is requested after the page is drawn
    page.remove_listener("request", record)
    assert requests
    elsewhere = [u for u in requests if not u.startswith((server.url + "/", "data:", "blob:"))]
    assert not elsewhere, elsewhere
    icon = page.locator("link[rel*='icon']").first.get_attribute("href")
    assert icon and (icon.startswith(server.url) or not icon.startswith(("http:", "https:", "//"))), icon


def test_export_clusters_csv(server: Server, browser: Browser, tmp_path: Path) -> None:
    page = browser.page
    open_page(page, server.url, "/Export", "Import labels")
    with page.expect_download(timeout=30_000) as info:
        click_button(page, "clusters.csv")
    download = info.value
    assert download.suggested_filename == "clusters.csv"
    target = tmp_path / "clusters.csv"
    download.save_as(target)
    df = pd.read_csv(target)
    assert list(df.columns) == COLUMNS
    assert len(df) == server.n_pages
    assert set(server.xss_urls) <= set(df["url"])
    xss = df[df["url"].isin(server.xss_urls)]
    assert xss["cluster_id"].nunique() == 1 and (xss["cluster_size"] == XSS_COPIES + 1).all()
    assert_clean(browser, "/Export")


def test_labels_csv_right_after_an_import_holds_the_import(
    server: Server, browser: Browser, tmp_path: Path
) -> None:
    page = browser.page
    open_page(page, server.url, "/Export", "Import labels")
    colleague = tmp_path / "colleague.csv"
    pd.DataFrame(
        {
            "url_a": ["https://imported.example/a"],
            "url_b": ["https://imported.example/b"],
            "label": ["duplicate"],
            "labeler": ["colleague"],
        }
    ).to_csv(colleague, index=False)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(colleague))
    page.get_by_text("1 labels added or updated").wait_for()
    wait_idle(page)
    server.n_labels += 1
    with page.expect_download() as info:
        click_button(page, "labels.csv")
    target = tmp_path / "labels.csv"
    info.value.save_as(target)
    exported = pd.read_csv(target)
    assert len(exported) == server.n_labels
    assert "colleague" in set(exported["labeler"])
    assert_clean(browser, "/Export after an import")


def test_label_a_pair_reaches_the_database(server: Server, browser: Browser) -> None:
    page = browser.page
    open_page(page, server.url, "/Audit", "Labeled pairs")
    per_bucket = slider_thumb(page, "Pairs per bucket")  # the truth labels met the default quota of 5
    per_bucket.focus()
    page.keyboard.press("End")
    assert settled_value(page, per_bucket) == 30
    page.get_by_text(re.compile(r"^Pair \d+ of \d+ to label")).wait_for()
    # the caption may be the one drawn before the quota changed: wait for the pair's two URLs as well
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stCode\"]').length >= 2")
    wait_idle(page)
    shown = [c.inner_text().strip() for c in page.locator('[data-testid="stCode"]').all()[:2]]
    assert len(shown) == 2
    page.get_by_label("Your name", exact=True).and_(page.get_by_role("textbox")).fill("playwright")
    page.get_by_label("Your name", exact=True).and_(page.get_by_role("textbox")).press("Enter")
    wait_idle(page)
    click_button(page, "Duplicate")
    page.get_by_text(f"({server.n_labels + 1} labels in all)").wait_for()
    wait_idle(page)
    assert_clean(browser, "/Audit after labeling")

    server.stop()  # DuckDB has one writer process: read the labels once the app is gone
    with Store(server.db, read_only=True) as store:
        labels = store.labels()
    mine = labels[labels["labeler"] == "playwright"]
    assert len(mine) == 1

    row = mine.iloc[0]
    assert (row["url_a"], row["url_b"]) == tuple(sorted(canonicalize_url(u) for u in shown))
    assert row["label"] == "duplicate"
