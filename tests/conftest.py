"""A small generated crawl with known duplicates, shared by the engine and CLI tests; the bundled sample."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from neardup import engine
from neardup.config import Config
from neardup.store import Store

# The bundled sample crawl (3,000 synthetic pages with ground truth), from the checkout.
ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CRAWL = ROOT / "sample_data" / "crawl.jsonl.gz"


def modules_imported_by(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (what an import costs a worker process)."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(*sys.modules, sep='\\n')"],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


VOCAB = [
    "river",
    "stone",
    "market",
    "garden",
    "winter",
    "signal",
    "harbor",
    "lantern",
    "orbit",
    "meadow",
    "copper",
    "valley",
    "thunder",
    "ribbon",
    "castle",
    "pepper",
    "silver",
    "canyon",
    "beacon",
    "glacier",
    "walnut",
    "falcon",
    "ember",
    "tundra",
    "velvet",
    "anchor",
    "bridge",
    "candle",
    "desert",
    "forest",
    "gravel",
    "island",
    "jungle",
    "kettle",
    "lemon",
    "marble",
    "needle",
    "oyster",
    "pillow",
    "quartz",
    "saddle",
    "timber",
    "umbrella",
    "violet",
    "wagon",
    "yarrow",
    "zephyr",
    "acorn",
    "basil",
    "cedar",
    "dune",
    "eagle",
    "fern",
    "ginger",
    "hazel",
    "iris",
    "juniper",
    "kelp",
    "lilac",
    "maple",
    "nutmeg",
    "olive",
    "plum",
    "quince",
    "rosemary",
    "sage",
    "thyme",
]


def words_text(rng: random.Random, n: int) -> str:
    """n words of prose-like text with sentence breaks."""
    out = []
    for i in range(n):
        w = rng.choice(VOCAB)
        out.append(w.capitalize() if i % 12 == 0 else w)
        if i % 12 == 11:
            out[-1] += "."
    return " ".join(out)


def page_html(title: str, body: str, *, csrf: str = "0000", canonical: str | None = None) -> str:
    """An article in a site template: nav, header, footer and a search form with a CSRF token."""
    nav = "".join(f"<li><a href='/section-{i}'>Section {i} of the site</a></li>" for i in range(8))
    link = f"<link rel='canonical' href='{canonical}'>" if canonical else ""
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{link}</head><body>"
        f"<header><div class='logo'>Example News</div></header><nav><ul>{nav}</ul></nav>"
        f"<form action='/search'><input type='hidden' name='csrf' value='{csrf}'>"
        "<input type='text' name='q'><button>Search</button></form>"
        f"<main><article><h1>{title}</h1><p>{body}</p></article></main>"
        "<footer><p>Copyright Example Media. All rights reserved. Privacy. Terms. Contact us.</p></footer>"
        "</body></html>"
    )


@dataclass
class Crawl:
    records: list[dict[str, Any]]
    # indexes into `records`
    article_groups: list[list[int]] = field(default_factory=list)  # original + utm + http twin + re-fetch
    near_edits: dict[int, int] = field(default_factory=dict)  # article -> index of its edited copy
    uniques: list[int] = field(default_factory=list)
    soft404s: list[int] = field(default_factory=list)


def make_crawl(seed: int = 3, n_articles: int = 6, n_edits: int = 4, n_unique: int = 10) -> Crawl:
    """40 pages by default: 6 articles x 4 exact copies, 4 near edits, 10 unique pages, 2 soft-404s."""
    rng = random.Random(seed)
    crawl = Crawl(records=[])
    recs = crawl.records
    for i in range(n_articles):
        title = f"Story {i}"
        body = words_text(rng, 400)
        url = f"https://news.example.com/story-{i}"
        group = []
        for variant_url, when, csrf in [
            (url, "2024-01-01T10:00:00Z", "aaa"),
            (f"{url}?utm_source=newsletter&utm_medium=email", "2024-01-02T10:00:00Z", "aaa"),
            (f"http://www.news.example.com/story-{i}/", "2024-01-03T10:00:00Z", "aaa"),
            (url, "2024-02-01T10:00:00Z", f"{rng.getrandbits(64):016x}"),  # re-fetch: new token
        ]:
            group.append(len(recs))
            recs.append(
                {
                    "url": variant_url,
                    "fetched_at": when,
                    "status": 200,
                    "html": page_html(title, body, csrf=csrf),
                }
            )
        crawl.article_groups.append(group)
        if i < n_edits:
            toks = body.split(" ")
            toks[200] = "CHANGEDWORD"  # one word of 400
            crawl.near_edits[i] = len(recs)
            recs.append(
                {
                    "url": f"https://blog.example.org/copy-of-story-{i}",
                    "fetched_at": "2024-03-01",
                    "status": 200,
                    "html": page_html(title, " ".join(toks), csrf="bbb"),
                }
            )
    for i in range(n_unique):
        crawl.uniques.append(len(recs))
        recs.append(
            {
                "url": f"https://news.example.com/unique-{i}",
                "fetched_at": "2024-01-05",
                "status": 200,
                "html": page_html(f"Unique {i}", words_text(rng, 300)),
            }
        )
    for i in range(2):
        crawl.soft404s.append(len(recs))
        recs.append(
            {
                "url": f"https://news.example.com/missing-{i}",
                "fetched_at": "2024-01-06",
                "status": 200,
                "html": page_html(
                    "Page not found", "Sorry, the page you requested could not be found. Try the search."
                ),
            }
        )
    return crawl


def short_page_fetches() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A 25-word brief fetched under two URL variants, then again with a "most read" widget's seven words more (32
    words, past min_words 30); a 25-word brief fetched once; a page fetched as a 15-word stub (past the margin)
    and as a 35-word page; long articles around them. The brief's third fetch comes in the second list."""
    rng = random.Random(11)
    brief, alone, stub = (words_text(rng, 25), words_text(rng, 25), words_text(rng, 35))

    def page(url: str, body: str, widget: str = "") -> dict[str, Any]:
        html = f"<html><body><article><p>{body}</p>{widget}</article></body></html>"
        return {"url": url, "html": html, "status": 200, "fetched_at": "2024-05-01T10:00:00Z"}

    widget = "<div class='most-read'>Most read: ferry timetable changes this week</div>"
    first = [
        page("https://news.example/brief/ferry?utm_source=newsletter", brief),
        page("http://www.news.example/brief/ferry/", brief),
        page("https://news.example/brief/other", alone),
        page("https://news.example/stub", " ".join(stub.split()[:15])),
        page("https://news.example/stub?ref=home", stub),
    ] + [page(f"https://news.example/story/{i}", words_text(rng, 300)) for i in range(6)]
    return first, [page("https://news.example/brief/ferry", brief, widget)]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def crawl() -> Crawl:
    return make_crawl()


def sample_lines(n: int) -> list[bytes]:
    """The first `n` JSON lines of the bundled sample crawl."""
    return gzip.decompress(SAMPLE_CRAWL.read_bytes()).split(b"\n")[:n]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Crawl]]:
    """The generated crawl, ingested (default setting) into a database of the test module's."""
    tmp = tmp_path_factory.mktemp("loaded")
    crawl = make_crawl()
    store = Store(tmp / "crawl.duckdb")
    summary = engine.ingest_file(store, write_jsonl(tmp / "crawl.jsonl", crawl.records), Config(), jobs=1)
    assert (summary.loaded, summary.errors) == (len(crawl.records), 0)
    yield store, crawl
    store.close()


@pytest.fixture
def crawl_file(tmp_path: Path, crawl: Crawl) -> Path:
    return write_jsonl(tmp_path / "crawl.jsonl", crawl.records)


@pytest.fixture
def empty_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The app's database (NEARDUP_DB, named) as a path where no file is yet; the app's caches cleared."""
    import streamlit as st  # only the app tests use this fixture

    path = str(tmp_path / "empty.duckdb")
    monkeypatch.setenv("NEARDUP_DB", path)
    monkeypatch.delenv("NEARDUP_CONFIG", raising=False)
    st.cache_resource.clear()
    yield path
    st.cache_resource.clear()


# --- the small crawl's database and the app over it ----------------------------------------------------
def build_small_db(tmp: Path) -> Path:
    """The 300-page generated crawl, ingested and fingerprinted for the default setting."""
    crawl = tmp / "crawl.jsonl.gz"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_sample.py"), "--pages", "300", "--seed", "3"]
        + ["--out", str(crawl), "--truth", str(tmp / "truth.csv")],
        check=True,
        capture_output=True,
    )
    db = tmp / "base.duckdb"
    with Store(db) as store:
        summary = engine.ingest_file(store, crawl, Config(), jobs=1)
        assert summary.loaded == 300
        engine.ensure_fingerprints(store, Config(), jobs=1)
    return db


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small crawl's database, built once per test module (copy it to write: a server of a test's own
    holds its file)."""
    return build_small_db(tmp_path_factory.mktemp("small"))


@pytest.fixture(scope="module")
def base_db(small_db: Path) -> Path:
    """The small crawl's database, by the name the app tests give it."""
    return small_db


def app_database(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh copy of `source`, named by NEARDUP_DB, with the app's cached store dropped around the test."""
    import streamlit as st

    path = tmp_path / "neardup.duckdb"
    shutil.copyfile(source, path)
    monkeypatch.setenv("NEARDUP_DB", str(path))
    monkeypatch.delenv("NEARDUP_CONFIG", raising=False)
    st.cache_resource.clear()
    yield str(path)
    st.cache_resource.clear()


@pytest.fixture
def db(small_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh copy of the small database, named by NEARDUP_DB; the app's cached store is dropped."""
    yield from app_database(small_db, tmp_path, monkeypatch)


@pytest.fixture
def store(db: str) -> Store:
    # The same file in the same process: DuckDB shares one database instance with the app's Store.
    return Store(db)


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> Any:
    """AppTest keeps download data in a media storage it creates per run; keep a handle on it
    (`app_driver.download` reads a button's bytes from it)."""
    from app_driver import DownloadStorages
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.testing.v1 import app_test as app_test_module

    made = DownloadStorages()
    managers: list[Any] = []

    class Recording(MemoryMediaFileStorage):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    class RecordingManager(app_test_module.MediaFileManager):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            managers.append(self)

    monkeypatch.setattr(app_test_module, "MemoryMediaFileStorage", Recording)
    monkeypatch.setattr(app_test_module, "MediaFileManager", RecordingManager)
    made.managers = managers
    return made


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium with one page (`live_app.launch_browser`), for the test module's tests in turn."""
    from live_app import launch_browser

    with launch_browser() as b:
        yield b


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test module that drives the browser is marked `browser` (`make test-fast` leaves it out): one that
    imports Playwright or the harness that launches it, or uses the `browser` fixture, without the mark is a
    collection error."""
    unmarked = sorted(
        {
            item.module.__name__
            for item in items
            if item.module is not None
            and (
                {"launch_browser", "sync_playwright"} & set(vars(item.module))
                or "browser" in getattr(item, "fixturenames", ())
            )
            and item.get_closest_marker("browser") is None
        }
    )
    if unmarked:
        raise pytest.UsageError(f"browser tests without the `browser` mark: {', '.join(unmarked)}")


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample crawl ingested and fingerprinted at the defaults, one database per test module."""
    path = tmp_path_factory.mktemp("sample") / "sample.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, engine.SAMPLE_CRAWL, Config(), jobs=1)
        engine.ensure_fingerprints(store, Config(), jobs=1)
    return path
