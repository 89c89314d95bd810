"""A real browser sees that the app is at work: Streamlit's running indicator (and its Stop button) during a
long first run, both as `streamlit run app.py` starts it (./.streamlit/config.toml) and as `neardup app` does
(its command-line options), and no "Deploy" button in either."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_app import CHROMIUM, Server, launch_browser, start_app, wait_for_health, wait_idle

from neardup import engine
from neardup.config import Config
from neardup.store import Store

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "crawl.jsonl.gz"
RUNNING = '[data-testid="stStatusWidgetRunningIcon"]'


@pytest.mark.parametrize("packaged", [False, True], ids=["streamlit-run", "neardup-app"])
def test_a_long_first_run_shows_the_running_indicator(tmp_path: Path, packaged: bool) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"the browser test needs Debian's Chromium at {CHROMIUM}: apt-get install chromium")
    db = tmp_path / "sample.duckdb"
    with Store(db) as store:  # pages without fingerprints: the first run computes them, for seconds
        engine.ingest_file(store, SAMPLE, Config(), jobs=1)
        n_pages = store.count_pages()
    url, proc, log = start_app(db, tmp_path, packaged=packaged)
    srv = Server(url, db, proc, log, n_pages, 0)
    try:
        wait_for_health(srv)
        with launch_browser() as b:
            b.page.goto(url + "/")
            b.page.locator(RUNNING).wait_for(state="visible")
            assert b.page.get_by_role("button", name="Stop").is_visible()
            wait_idle(b.page)
            b.page.get_by_text("Next:").first.wait_for()
            assert b.page.locator(RUNNING).count() == 0
            assert b.page.locator('[data-testid="stAppDeployButton"]').count() == 0
            assert not b.errors, b.errors
    finally:
        srv.stop()
