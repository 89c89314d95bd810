"""After a `neardup ingest` into the database the app has open, every page of the next run reads the new
state: the header's page count and the analysis below it agree, on every page."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from app_driver import APP, TIMEOUT
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def home_numbers(at: AppTest) -> tuple[int, int]:
    """(pages in the header caption, pages the analysis counted) on the Home page."""
    header = next(c.value for c in at.caption if c.value.startswith("Database"))
    shown = int(re.search(r"· ([\d,]+) pages ·", header).group(1).replace(",", ""))
    answer = next(m.value for m in at.markdown if "pages are redundant" in m.value)
    counted = int(re.search(r"of the ([\d,]+) pages", answer).group(1).replace(",", ""))
    return shown, counted


def test_an_ingest_from_outside_is_read_by_the_next_run(db: str, tmp_path: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert home_numbers(at) == (300, 300)
    at.switch_page("pages/2_Explore.py").run()
    assert not at.exception, at.exception
    assert not any("later.example" in set(df.value.get("host", [])) for df in at.dataframe)

    extra = tmp_path / "more.jsonl"
    rows = [
        {
            "url": f"https://later.example/p{i}",
            "html": f"<p>{' '.join(['alpha', 'beta', 'gamma'] * 30)} n{i}</p>",
        }
        for i in range(5)
    ]
    extra.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    ingest = subprocess.run(
        [sys.executable, "-m", "neardup.cli", "ingest", str(extra), "--db", db, "--jobs", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ingest.returncode == 0, ingest.stderr

    at.switch_page("app.py").run()
    assert not at.exception, at.exception
    assert home_numbers(at) == (305, 305)
    at.switch_page("pages/2_Explore.py").run()
    assert not at.exception, at.exception
    hosts = [df.value for df in at.dataframe if "host" in df.value.columns]
    assert hosts and "later.example" in set(hosts[0]["host"]), "Explore's hosts are the new analysis'"
