"""Sources: the load's progress in bytes, taking a source out, and when the bundled sample is loaded."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_crawl, page_html, words_text, write_jsonl
from streamlit.testing.v1 import AppTest

from neardup import engine
from neardup.analysis import analyze, load_fingerprints
from neardup.categories import suggest_copies
from neardup.cli import app_database
from neardup.config import Config
from neardup.store import DEFAULT_DB, Store
from neardup.ui import data as ui_data
from neardup.ui.data import progress_text

ROOT = Path(__file__).resolve().parent.parent


def big_gz_dump(path: Path, n: int = 1500) -> Path:
    """Pages of random words (gzip barely shrinks them), so the file spans many read blocks."""
    rng = random.Random(5)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "url": f"https://big.example/{i}",
                        "fetched_at": "2026-03-01T00:00:00Z",
                        "status": 200,
                        "html": page_html(f"Page {i}", words_text(rng, 900)),
                    }
                )
                + "\n"
            )
    return path


# --- progress --------------------------------------------------------------------------------------
def test_ingest_reports_bytes_read_of_the_file_size(tmp_path: Path) -> None:
    dump = big_gz_dump(tmp_path / "big.jsonl.gz")
    size = dump.stat().st_size
    seen: list[tuple[int, int]] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "read":
            seen.append((done, total))

    with Store(tmp_path / "db.duckdb") as store:
        assert engine.ingest_file(store, dump, Config(), progress=progress, jobs=1).loaded == 1500
    assert len(seen) >= 3
    assert {total for _, total in seen} == {size}
    done = [d for d, _ in seen]
    assert done == sorted(done) and 0 < done[0] < size and done[-1] == size


def _dump_forms(tmp_path: Path) -> dict[str, Path]:
    """The pages of `big_gz_dump` as a web archive of each form ingest reads: a WARC.gz of a gzip member per
    record (scripts/jsonl_to_warc.py), one gzipped as one stream, a plain WARC, an ARC.gz of a member per
    record, a WACZ holding the WARC.gz; and as CSV, CSV.gz and Parquet."""
    import subprocess
    import sys
    import zipfile

    dump = big_gz_dump(tmp_path / "big.jsonl.gz")
    forms = {"warc.gz": tmp_path / "big.warc.gz", "warc.gz one stream": tmp_path / "big-one.warc.gz"}
    for form, flags in (("warc.gz", []), ("warc.gz one stream", ["--one-stream"])):
        script = ROOT / "scripts" / "jsonl_to_warc.py"
        subprocess.run([sys.executable, str(script), *flags, str(dump), str(forms[form])], check=True)
    forms["warc"] = tmp_path / "big.warc"
    forms["warc"].write_bytes(gzip.decompress(forms["warc.gz one stream"].read_bytes()))
    desc = b"1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n"
    head = f"filedesc://big.arc 0.0.0.0 20240305101500 text/plain {len(desc)}\n".encode() + desc + b"\n"
    forms["arc.gz"] = tmp_path / "big.arc.gz"
    with open(forms["arc.gz"], "wb") as arc, gzip.open(dump, "rb") as lines:
        arc.write(gzip.compress(head))
        for line in lines:
            rec = json.loads(line)
            block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + rec["html"].encode()
            line_head = f"{rec['url']} 192.0.2.1 20240305101500 text/html {len(block)}\n".encode()
            arc.write(gzip.compress(line_head + block + b"\n"))
    forms["wacz"] = tmp_path / "big.wacz"
    with zipfile.ZipFile(forms["wacz"], "w") as z:
        z.writestr("archive/data.warc.gz", forms["warc.gz"].read_bytes())
        z.writestr("pages/pages.jsonl", b'{"format": "json-pages-1.0", "id": "pages"}\n')
    table = pd.read_json(dump, lines=True)
    forms["csv"] = tmp_path / "big.csv"
    table.to_csv(forms["csv"], index=False)
    forms["csv.gz"] = tmp_path / "big.csv.gz"
    forms["csv.gz"].write_bytes(gzip.compress(forms["csv"].read_bytes()))
    forms["parquet"] = tmp_path / "big.parquet"
    table.to_parquet(forms["parquet"], index=False, row_group_size=600)  # three row groups
    return forms


def test_a_load_of_any_other_form_reports_bytes_read_of_the_file_size(tmp_path: Path) -> None:
    """A web archive's, a CSV's or a Parquet file's load says how far into the file it is, as a JSON-lines
    load does: a percentage and an ETA on the Load page and the CLI, not a running count of records alone."""
    for form, path in _dump_forms(tmp_path).items():
        size = path.stat().st_size
        seen: list[tuple[int, int]] = []

        def progress(stage: str, done: int, total: int) -> None:
            if stage == "read":
                seen.append((done, total))  # noqa: B023  (called within this iteration)

        with Store(tmp_path / f"{form}.duckdb") as store:
            assert engine.ingest_file(store, path, Config(), progress=progress, jobs=1).loaded == 1500, form
        assert len(seen) >= 3, form
        assert {total for _, total in seen} == {size}, form
        done = [d for d, _ in seen]
        assert done == sorted(done) and 0 < done[0] < size and done[-1] == size, (form, done, size)


def test_progress_text_gives_a_percentage_and_an_eta() -> None:
    frac, text = progress_text("read", 25_000_000, 100_000_000, elapsed_s=10.0, pages=1234)
    assert frac == 0.25
    assert text == "25% of 100.0 MB read, 1,234 records, about 30 s left"
    assert progress_text("texts", 5, 10, elapsed_s=1.0, pages=0) == (0.5, "texts: 5 / 10")


def test_progress_text_gives_a_counted_stage_its_eta_from_the_stage_rate() -> None:
    """A stage after the read has an ETA of its own, from its rate since it began (not since the start)."""
    frac, text = progress_text("candidates", 25, 100, elapsed_s=100.0, pages=0, stage_elapsed_s=10.0)
    assert (frac, text) == (0.25, "candidates: 25 / 100, about 30 s left")
    assert progress_text("candidates", 0, 100, elapsed_s=9.0, pages=0, stage_elapsed_s=9.0)[1] == (
        "candidates: 0 / 100"
    )


# --- taking a source out -----------------------------------------------------------------------------
def analysis_numbers(store: Store) -> dict[str, int]:
    config = Config()
    return analyze(load_fingerprints(store, config, jobs=1), config).numbers


def test_remove_source_takes_out_its_pages_and_what_was_derived(tmp_path: Path) -> None:
    crawl = make_crawl()
    mine = write_jsonl(tmp_path / "mine.jsonl", crawl.records)
    other = write_jsonl(tmp_path / "other.jsonl", make_crawl(seed=9, n_articles=3).records)
    config = Config()
    with Store(tmp_path / "alone.duckdb") as alone:
        engine.ingest_file(alone, mine, config, jobs=1)
        expected = analysis_numbers(alone)
    with Store(tmp_path / "both.duckdb") as store:
        engine.ingest_file(store, mine, config, jobs=1)
        engine.ingest_file(store, other, config, jobs=1)
        assert analysis_numbers(store) != expected
        store.record_label("https://x.example/a", "https://x.example/b", label="duplicate", labeler="ana")
        other_row = store.sources().set_index("path").loc[str(other)]
        other_id = int(other_row["source_id"])
        assert store.remove_source(other_id) == int(other_row["n_loaded"]) > 20
        cur = store.cursor()
        assert store.count_pages() == len(crawl.records)
        assert cur.execute(
            "SELECT count(*) FROM texts WHERE page_id NOT IN (SELECT page_id FROM pages)"
        ).fetchone() == (0,)
        assert cur.execute(
            "SELECT count(*) FROM sketches WHERE exact_key NOT IN (SELECT exact_key FROM texts)"
        ).fetchone() == (0,)
        assert cur.execute(
            "SELECT count(*) FROM ingest_errors WHERE source_id = ?", [other_id]
        ).fetchone() == (0,)
        assert store.fingerprint_set(config.fingerprint_key) is None  # recomputed from the pages left
        assert len(store.labels()) == 1
        assert analysis_numbers(store) == expected
        assert list(store.sources()["path"]) == [str(mine)]


def query(store: Store, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows of `sql`, read to the end on a cursor of their own (an open result would hold a transaction)."""
    cur = store.cursor()
    try:
        rows = cur.execute(sql, list(params)).fetchall()
    finally:
        cur.close()
    return rows


def test_a_removed_source_leaves_no_parsed_url_or_category_for_the_pages_that_take_its_ids(
    tmp_path: Path,
) -> None:
    """Page ids are reused after the last source is removed: what was kept per page id (the parsed URLs, the
    copies' suggested categories) must go with the pages, or the next source's pages would read them."""
    crawl = make_crawl()
    mine = write_jsonl(tmp_path / "mine.jsonl", crawl.records)
    mine_pages = {(r["url"], r["html"]) for r in crawl.records}  # a page loaded already is not loaded again
    other_records = [
        r for r in make_crawl(seed=9, n_articles=3).records if (r["url"], r["html"]) not in mine_pages
    ]
    other = write_jsonl(tmp_path / "other.jsonl", other_records)
    # the same pages under another host: as many records, so they take the removed pages' ids exactly
    moved = [{**r, "url": r["url"].replace("://", "://moved.", 1)} for r in other_records]
    third = write_jsonl(tmp_path / "third.jsonl", moved)
    config = Config()
    with Store(tmp_path / "db.duckdb") as store:
        engine.ingest_file(store, mine, config, jobs=1)
        engine.ingest_file(store, other, config, jobs=1)
        analysis = analyze(load_fingerprints(store, config, jobs=1), config)
        engine.ensure_parsed_urls(store, analysis.pages)
        suggest_copies(store, analysis, jobs=1)
        assert query(store, "SELECT count(*) FROM suggested_categories") != [(0,)]
        other_id = int(store.sources().set_index("path").loc[str(other), "source_id"])
        other_ids = {
            row[0] for row in query(store, "SELECT page_id FROM pages WHERE source_id = ?", other_id)
        }
        store.remove_source(other_id)
        assert query(
            store,
            "SELECT count(*) FROM suggested_categories WHERE page_id NOT IN (SELECT page_id FROM pages) "
            "OR representative_id NOT IN (SELECT page_id FROM pages)",
        ) == [(0,)]

        engine.ingest_file(store, third, config, jobs=1)
        third_id = int(store.sources().set_index("path").loc[str(third), "source_id"])
        third_ids = {
            row[0] for row in query(store, "SELECT page_id FROM pages WHERE source_id = ?", third_id)
        }
        assert third_ids == other_ids  # the case this guards: the new pages under the old ids
        pages = analyze(load_fingerprints(store, config, jobs=1), config).pages
        parsed = engine.ensure_parsed_urls(store, pages)
        hosts = set(parsed.hosts)
        assert any(h.startswith("moved.") for h in hosts)
        assert not any(
            h in hosts
            for h in {r["url"].split("/")[2] for r in other_records}
            - {r["url"].split("/")[2] for r in crawl.records}
        )


# --- the bundled sample -------------------------------------------------------------------------------
def test_only_an_app_started_without_a_database_named_gets_the_sample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NEARDUP_DB", raising=False)
    assert app_database(None) == (Path(DEFAULT_DB), True)
    assert app_database("crawl.duckdb") == (Path("crawl.duckdb"), False)
    monkeypatch.setenv("NEARDUP_DB", "/data/team.duckdb")
    assert app_database(None) == (Path("/data/team.duckdb"), False)


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_named_empty_database_gets_no_sample(empty_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEARDUP_LOAD_SAMPLE", raising=False)
    at = run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=120))
    assert any("holds no pages yet" in i.value for i in at.info)
    with Store(empty_db, read_only=True) as store:
        assert store.count_pages() == 0


def test_the_sample_shows_a_banner_until_it_is_removed(
    empty_db: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NEARDUP_LOAD_SAMPLE", "1")
    monkeypatch.setenv("NEARDUP_DATA_DIR", str(tmp_path))  # the Load page reads server paths under it only
    at = run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=300))
    assert "3,000 pages" in at.caption[0].value
    assert any("bundled **sample crawl** (3,000 synthetic pages)" in i.value for i in at.info)
    # a crawl of one's own, then the sample out
    at.switch_page("pages/1_Load.py")
    run(at)
    dump = write_jsonl(tmp_path / "crawl.jsonl", make_crawl().records)
    at.text_input[0].set_value(str(dump))
    run(at)
    next(b for b in at.button if b.label == "Load this path").click()
    run(at)
    assert any("40 pages loaded" in s.value for s in at.success)
    assert at.selectbox(key="neardup.load.remove_source").value == 1  # the sample is offered first
    at.checkbox(key="neardup.load.remove_confirm").check()
    next(b for b in at.button if b.label == "Remove this source").click()
    run(at)
    assert not any("sample crawl" in i.value for i in at.info)
    assert any("3,000 pages out, labels kept" in t.value for t in at.toast)
    at.switch_page("app.py")
    run(at)
    assert "40 pages" in at.caption[0].value  # and the sample is not loaded again into the emptied space
    assert ui_data.sample_source(Store(empty_db)) is None


def test_removing_a_source_names_it_as_its_file_is_named(empty_db: str, tmp_path: Path) -> None:
    """A file name is shown as it is (no Markdown of its own: `**`, `_`), its pages counted in words."""
    dump = write_jsonl(tmp_path / "crawl_**one**.jsonl", make_crawl().records[:1])
    with Store(empty_db) as store:
        engine.ingest_file(store, dump, Config(), jobs=1)
    at = run(AppTest.from_file(str(ROOT / "pages" / "1_Load.py"), default_timeout=120))
    remove = at.selectbox(key="neardup.load.remove_source")
    assert remove.options == [f"1: {dump} (1 page)"]
    at.checkbox(key="neardup.load.remove_confirm").check()
    next(b for b in at.button if b.label == "Remove this source").click()
    run(at)
    [toast] = [t.value for t in at.toast]
    assert "1 page out, labels kept" in toast
    assert "\\*\\*one\\*\\*" in toast and "**one**" not in toast
