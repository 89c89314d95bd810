"""A shingle-size change in a real browser, on a crawl big enough that its fingerprints take a while: Home
answers with an estimate from a sample of the pages, labeled as one, the exact computation runs in the
background under one progress bar that names its stage, and its numbers replace the estimate when done: the
numbers `neardup report --shingle-size 6` prints for the same crawl."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from live_app import ROOT, assert_clean, launch_browser, serving, slider_thumb, wait_idle

from neardup.ui.background import STARTING_LABEL

pytestmark = pytest.mark.browser

PAGES = 8_000
ESTIMATE = "Estimate from"
PROGRESS = "Computing the exact numbers: stage"


def neardup(*args: str) -> str:
    """Run the `neardup` command of this checkout; its standard output."""
    cli = "import sys; from neardup.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NEARDUP_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-c", cli, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture(scope="module")
def crawl_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """8,000 generated pages, ingested and reported at the default setting; and the report's numbers at
    shingle size 6, computed by the CLI on a copy of the database."""
    tmp = tmp_path_factory.mktemp("estimate-crawl")
    crawl, db = tmp / "crawl.jsonl.gz", tmp / "crawl.duckdb"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_sample.py"), "--pages", str(PAGES), "--seed", "5"]
        + ["--out", str(crawl), "--truth", str(tmp / "truth.csv")],
        check=True,
        capture_output=True,
    )
    neardup("ingest", str(crawl), "--db", str(db))
    neardup("report", "--db", str(db))
    copy = tmp / "copy.duckdb"
    shutil.copy(db, copy)
    report = json.loads(neardup("report", "--db", str(copy), "--shingle-size", "6", "--json"))
    return db, report["numbers"]


def metric_value(page: object, label: str) -> int:
    metric = page.locator('[data-testid="stMetric"]').filter(has=page.get_by_text(label, exact=True))
    return int(metric.locator('[data-testid="stMetricValue"]').inner_text().replace(",", ""))


def test_a_shingle_change_shows_an_estimate_then_the_exact_numbers(
    crawl_db: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    db, exact = crawl_db
    with serving(db, tmp_path, PAGES) as srv, launch_browser() as b:
        page = b.page
        page.goto(srv.url + "/")
        page.get_by_text("Next:").first.wait_for()
        wait_idle(page)
        thumb = slider_thumb(page, "Shingle size (words)")
        thumb.focus()
        page.keyboard.press("ArrowRight")
        # the estimate, labeled as one, with the sample's size
        label = page.get_by_text(ESTIMATE).first
        label.wait_for()
        assert f"of {PAGES:,} pages" in label.inner_text()
        assert page.get_by_text("Near duplicates (estimate)").count() == 1
        # one progress bar over the stages of the exact computation, drawn with the estimate: the job is
        # starting, or running already (a loaded box may give it no stage drawn before it is done)
        bar = page.get_by_text(re.compile(f"{PROGRESS}|{STARTING_LABEL}")).first
        bar.wait_for()
        text = bar.inner_text()
        assert STARTING_LABEL in text or (" of " in text and "done" in text), text
        # then the exact numbers, and no estimate any more
        page.get_by_text("Next:").first.wait_for(timeout=300_000)
        wait_idle(page)
        assert page.get_by_text(ESTIMATE).count() == 0
        assert page.get_by_text(PROGRESS).count() == 0
        assert "shingles of 6 words" in page.get_by_text("Database ").first.inner_text()
        for label_text, name in (
            ("Exact duplicates", "exact_duplicates"),
            ("Near duplicates", "near_duplicates"),
        ):
            assert metric_value(page, label_text) == exact[name], label_text
        assert_clean(b, "Home after the exact numbers")
