"""Driving the app's pages in-process with Streamlit's AppTest: the app script, its pages and their titles,
a page run to the end without an exception, the bytes a download button gives and the Plotly figures drawn."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent

APP = str(ROOT / "app.py")


PAGES = {
    "pages/1_Load.py": "Load a crawl dump",
    "pages/2_Explore.py": "Explore",
    "pages/3_Audit.py": "Audit pairs",
    "pages/4_Tune.py": "Tune the threshold from labels",
    "pages/5_Clusters.py": "Clusters",
    "pages/6_Export.py": "Export",
    "pages/7_URL_rules.py": "URL rules",
}


TIMEOUT = 120


def run_app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(page).run()
        assert not at.exception, at.exception
        assert at.title[0].value == PAGES[page]
    return at


class DownloadStorages(list):
    """The media storages AppTest made, in order, and (`managers`) its media file managers."""

    managers: list[Any]


def download(at: AppTest, storages: list[MemoryMediaFileStorage], label: str) -> bytes:
    """The bytes a click would download (a deferred button's callable is run, as the click would)."""
    [element] = [d for d in at.get("download_button") if d.label == label]
    proto = element.proto
    url = (
        storages.managers[-1].execute_deferred(proto.deferred_file_id)  # type: ignore[attr-defined]
        if proto.HasField("deferred_file_id")
        else proto.url
    )
    return storages[-1].get_file(url.rsplit("/", 1)[1]).content


def _decoded(node: Any) -> Any:
    """A Plotly JSON spec with its typed arrays ({"dtype", "bdata"}: base64 numbers) as lists."""
    if isinstance(node, dict):
        if set(node) >= {"dtype", "bdata"}:
            return np.frombuffer(base64.b64decode(node["bdata"]), dtype=node["dtype"]).tolist()
        return {k: _decoded(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_decoded(v) for v in node]
    return node


def plotly_charts(at: AppTest) -> dict[str, dict[str, Any]]:
    """The page's Plotly figures (as JSON, typed arrays decoded) by title."""
    specs = [_decoded(json.loads(c.proto.spec)) for c in at.get("plotly_chart")]
    return {s["layout"].get("title", {}).get("text", ""): s for s in specs}
