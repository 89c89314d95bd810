"""The database file: shared between the app and the CLI, foreign or damaged files refused unwritten."""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml
from conftest import Crawl, make_crawl, page_html, words_text, write_jsonl
from oracles import every_signature

from neardup import engine
from neardup import store as store_module
from neardup.analysis import analyze, load_fingerprints
from neardup.cli import main
from neardup.compare import analysis_key, source_summary
from neardup.config import Config
from neardup.errors import NeardupError
from neardup.rejects import Reject, RejectKind
from neardup.store import SCHEMA_VERSION, Store
from neardup.store.connection import transaction

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SETTING = ["--method", "simhash", "--threshold", "5", "--shingle-size", "4", "--jobs", "1"]


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neardup.cli", *argv],
        capture_output=True,
        text=True,
        env={**ENV, **(env or {})},
        timeout=300,
    )


class _Holder:
    """Another process with the database open, driven line by line over stdin (`script` gets `db`)."""

    def __init__(self, tmp_path: Path, db: Path, script: str) -> None:
        path = tmp_path / "holder.py"
        path.write_text(textwrap.dedent(script), encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, str(path), db.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=ENV,
            cwd=tmp_path,
        )
        assert self.ask(None) == "ready"

    def ask(self, line: str | None) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if line is not None:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def db(tmp_path: Path, crawl_file: Path) -> Path:
    path = tmp_path / "shared.duckdb"
    assert main(["ingest", str(crawl_file), "--db", str(path), "--jobs", "1"]) == 0
    return path


def _second_dump(tmp_path: Path) -> Path:
    records = make_crawl(seed=11, n_articles=2, n_edits=0, n_unique=3).records
    for r in records:
        r["url"] = r["url"].replace("example.com", "example.net")
    return write_jsonl(tmp_path / "more.jsonl", records)


# The app's own store (neardup.ui.data.get_store), open in another process and idle between requests.
APP_LIKE = """
    import sys
    from neardup.ui.data import get_store
    store = get_store(sys.argv[1])
    store.count_pages()
    print("ready", flush=True)
    for line in sys.stdin:
        print(store.count_pages(), flush=True)
"""


def test_cli_ingests_and_reports_while_the_app_is_open(tmp_path: Path, db: Path) -> None:
    app = _Holder(tmp_path, db, APP_LIKE)
    try:
        report = _cli("report", "--db", str(db), *SETTING)
        assert report.returncode == 0, report.stderr
        assert "40" in report.stdout
        ingest = _cli("ingest", str(_second_dump(tmp_path)), "--db", str(db), "--jobs", "1")
        assert ingest.returncode == 0, ingest.stderr
        assert app.ask("count") == str(40 + 13)  # the app reads what the CLI wrote
        again = _cli("report", "--db", str(db), *SETTING)
        assert again.returncode == 0, again.stderr
    finally:
        app.close()


# A reader in the middle of a long read: the file is open read-only while the report runs.
READER = """
    import sys
    from neardup.store import Store
    store = Store(sys.argv[1], on_demand=True)
    with store.reading():
        store.count_pages()
        print("ready", flush=True)
        sys.stdin.readline()
"""


def test_report_with_stored_fingerprints_only_reads(tmp_path: Path, db: Path) -> None:
    assert _cli("report", "--db", str(db), *SETTING).returncode == 0  # computes and stores them
    reader = _Holder(tmp_path, db, READER)
    try:
        report = _cli("report", "--json", "--db", str(db), *SETTING)
        assert report.returncode == 0, report.stderr
        # a setting not computed yet needs to write: it says who holds the file, in one line
        other = _cli(
            "report",
            "--db",
            str(db),
            "--method",
            "minhash",
            "--jobs",
            "1",
            env={"NEARDUP_LOCK_WAIT_S": "0.3"},
        )
        assert other.returncode == 2
        assert other.stderr.strip().splitlines() == [
            f"neardup: error: shared.duckdb is open read-only by PID {reader.proc.pid} (holder.py {db.name}), "
            "and writing needs it to itself; close that process (or wait for it to finish) and retry"
        ]
    finally:
        reader.close()


# What `neardup ingest` does: the file held read-write for the whole load.
WRITER = """
    import sys
    from neardup.store import Store
    store = Store(sys.argv[1], bulk=True)
    print("ready", flush=True)
    sys.stdin.readline()
"""


def test_a_writer_holding_the_file_is_named_in_one_line(tmp_path: Path, db: Path) -> None:
    writer = _Holder(tmp_path, db, WRITER)
    try:
        for argv in (
            ["report", "--db", str(db), *SETTING],
            ["ingest", str(_second_dump(tmp_path)), "--db", str(db), "--jobs", "1"],
        ):
            result = _cli(*argv, env={"NEARDUP_LOCK_WAIT_S": "0.3"})
            assert result.returncode == 2
            assert result.stderr.strip().splitlines() == [
                f"neardup: error: shared.duckdb is open for writing by PID {writer.proc.pid} (holder.py {db.name}); "
                "wait for it to finish (or close it) and retry"
            ]
    finally:
        writer.close()
    assert _cli("report", "--db", str(db), *SETTING).returncode == 0


def test_an_open_waits_for_a_short_write_to_finish(tmp_path: Path, db: Path) -> None:
    writer = _Holder(tmp_path, db, WRITER)
    timer = threading.Timer(0.5, writer.close)  # the writer finishes while the open waits
    timer.start()
    try:
        with Store(db, on_demand=True, lock_wait_s=120) as store:
            assert store.count_pages() == 40
    finally:
        timer.join()


def test_in_process_readers_and_writers_share_one_connection(tmp_path: Path, db: Path) -> None:
    """A write waits for this process's readers, then the file is reopened read-write; a write never
    starts inside this thread's own read."""
    store = Store(db, on_demand=True)
    with store.reading():
        assert store.count_pages() == 40
        with pytest.raises(NeardupError, match="a write cannot start inside a read"):
            store.add_errors(1, "x", [(1, Reject(RejectKind.MISSING_URL, "missing url"))])
    store.add_errors(1, "x", [(1, Reject(RejectKind.MISSING_URL, "missing url"))])
    with store.writing():
        assert store.count_pages() == 40  # reads share the open read-write connection
    store.close()
    with Store(db, read_only=True) as ro, pytest.raises(NeardupError, match="opened read-only"):
        ro.add_errors(1, "x", [(1, Reject(RejectKind.MISSING_URL, "missing url"))])


def test_on_demand_store_closes_the_file_when_idle(tmp_path: Path, db: Path) -> None:
    store = Store(db, on_demand=True)
    assert store.count_pages() == 40
    store.close()  # also what the linger timer does
    con = duckdb.connect()  # another "process" could now take the write lock: this one holds nothing
    con.execute(f"ATTACH '{db}' AS other")
    con.close()
    assert store.count_pages() == 40  # and the store opens it again on demand
    store.close()


def test_a_store_given_a_memory_limit_opens_the_file_with_it_for_reads_and_writes(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`neardup report`'s store (`memory_limit`, as `cli._open(scans=True)` makes it) caps DuckDB's memory
    where it opens the file, to read or to write; without it a read-only open has DUCKDB_READ_MEMORY;
    NEARDUP_DUCKDB_MEMORY overrides both."""

    def limit(store: Store, *, write: bool) -> str:
        with store.writing() if write else store.reading():
            return str(store.cursor().execute("SELECT current_setting('memory_limit')").fetchone()[0])

    monkeypatch.delenv("NEARDUP_DUCKDB_MEMORY", raising=False)
    scans = Store(db, on_demand=True, linger_s=0.0, memory_limit="40MB")
    assert limit(scans, write=False) == "38.1 MiB"  # DuckDB shows 40 MB in MiB
    assert limit(scans, write=True) == "38.1 MiB"
    scans.close()
    plain = Store(db, on_demand=True, linger_s=0.0)
    assert limit(plain, write=False) == "244.1 MiB"  # DUCKDB_READ_MEMORY, 256 MB
    plain.close()
    monkeypatch.setenv("NEARDUP_DUCKDB_MEMORY", "30MB")
    scans = Store(db, on_demand=True, linger_s=0.0, memory_limit="40MB")
    assert limit(scans, write=False) == "28.6 MiB"
    scans.close()


def test_page_fields_are_the_page_tables_rows_of_those_pages_in_page_id_order(db: Path) -> None:
    """`page_fields` (put in page id order after DuckDB's join, not sorted by it) gives each asked page's
    fields as `page_table` has them, by page id, under the memory limit `neardup report` gives DuckDB."""
    config = Config()
    columns = ["page_id", "url", "canonical_url", "fetched_at", "degenerate", "n_words", "exact_key"]
    with Store(db, on_demand=True, linger_s=0.0, memory_limit="40MB") as store:
        table = store.page_table(config.norm_key, min_words=config.min_words)
        wanted = np.sort(table["page_id"].to_numpy(dtype=np.int64)[[0, 3, 4, 17, 30, 39]])
        got = store.page_fields(config.norm_key, wanted, min_words=config.min_words).to_pandas()
    expected = table.set_index("page_id").loc[wanted].reset_index()[columns]
    assert got["page_id"].tolist() == wanted.tolist()
    pd.testing.assert_frame_equal(got[columns], expected, check_dtype=False)


# --- files that are not neardup databases ---------------------------------------------------------
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _foreign_duckdb(path: Path, *tables: str) -> Path:
    con = duckdb.connect(str(path))
    for t in tables:
        con.execute(f"CREATE TABLE {t} (id INTEGER, name VARCHAR)")
        con.execute(f"INSERT INTO {t} VALUES (1, 'x')")
    con.close()
    return path


def _truncated(tmp_path: Path, db: Path, fraction: float) -> Path:
    data = db.read_bytes()
    out = tmp_path / f"cut{int(fraction * 100)}.duckdb"
    out.write_bytes(data[: int(len(data) * fraction)])
    return out


@pytest.mark.parametrize(
    "kind",
    [
        "other_app",
        "own_pages_table",
        "meta_without_version",
        "meta_with_version",
        "meta_with_version_and_sources",
        "only_sequence",
        "only_macro",
        "only_enum",
        "only_schema",
        "sqlite",
        "text",
        "empty_file",
        "truncated_10",
        "truncated_60",
        "truncated_97",
    ],
)
def test_a_file_that_is_not_a_neardup_database_is_refused_unwritten(
    tmp_path: Path, db: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "foreign.duckdb"
    expect = "another application's database"
    if kind == "other_app":
        _foreign_duckdb(path, "customers", "orders")
    elif kind == "own_pages_table":
        _foreign_duckdb(path, "pages")
    elif kind == "meta_without_version":
        _foreign_duckdb(path, "meta")
        expect = "not a neardup database"
    elif kind.startswith("meta_with_version"):  # another application's meta(key, value), with the same row
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
        if kind.endswith("sources"):
            con.execute("CREATE TABLE sources (id INTEGER, name VARCHAR)")
        con.close()
        expect = "not a neardup database"
    elif kind.startswith("only_"):  # objects that are no table
        con = duckdb.connect(str(path))
        con.execute(
            {
                "only_sequence": "CREATE SEQUENCE invoice_ids",
                "only_macro": "CREATE MACRO add_tax(x) AS x * 1.2",
                "only_enum": "CREATE TYPE mood AS ENUM ('sad', 'ok')",
                "only_schema": "CREATE SCHEMA billing",
            }[kind]
        )
        con.close()
    elif kind == "sqlite":
        path = tmp_path / "app.sqlite"
        sqlite3.connect(path).execute("CREATE TABLE pages (url TEXT)").connection.commit()
        expect = "is a SQLite database, not a DuckDB file"
    elif kind == "text":
        path.write_text("not a database\n" * 100)
        expect = "is not a DuckDB database file"
    elif kind == "empty_file":
        path.write_bytes(b"")
        expect = "is not a DuckDB database file"
    else:
        path = _truncated(tmp_path, db, int(kind.rsplit("_", 1)[1]) / 100)
        expect = "is damaged (truncated or corrupt)"
    before = _digest(path)
    for argv in (
        ["report", "--db", str(path), *SETTING],
        ["ingest", str(_second_dump(tmp_path)), "--db", str(path), "--jobs", "1"],
    ):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert len(err.strip().splitlines()) == 1, err
        assert expect in err
        assert "Traceback" not in err
    with pytest.raises(NeardupError, match=expect.replace("(", r"\(").replace(")", r"\)")):
        Store(path, on_demand=True).count_pages()
    assert _digest(path) == before
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name)) == [
        path.name
    ]  # no WAL


def test_sqlite_file_needs_no_extension_download(tmp_path: Path) -> None:
    """DuckDB would fetch its SQLite reader from the internet; the store never installs or loads one."""
    path = tmp_path / "app.db"
    sqlite3.connect(path).execute("CREATE TABLE t (a)").connection.commit()
    home = tmp_path / "home"
    home.mkdir()
    result = _cli("report", "--db", str(path), env={"HOME": str(home)})
    assert result.returncode == 2
    assert "is a SQLite database" in result.stderr
    assert not any(home.rglob("*extension*"))


def test_an_empty_duckdb_file_becomes_a_neardup_database(tmp_path: Path, crawl_file: Path) -> None:
    path = _foreign_duckdb(tmp_path / "empty.duckdb")
    assert main(["ingest", str(crawl_file), "--db", str(path), "--jobs", "1"]) == 0
    with Store(path, read_only=True) as store:
        assert store.count_pages() == 40


def test_the_app_refuses_a_foreign_database_with_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from neardup.ui import data as ui_data

    path = _foreign_duckdb(tmp_path / "crm.duckdb", "customers")
    before = _digest(path)
    monkeypatch.setenv("NEARDUP_DB", str(path))
    ui_data.get_store.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        f"{path} is another application's database (tables: customers), not a neardup one: "
        "give neardup a new file (--db)"
    ]
    assert _digest(path) == before


# --- min_words applies when the analysis runs ---------------------------------------------------
def _short_pages_dump(tmp_path: Path) -> Path:
    """The conftest crawl plus pages of 12, 20 and 50 words (two copies each, so they cluster)."""
    rng = random.Random(5)
    records = make_crawl().records
    for n in (12, 20, 50):
        body = words_text(rng, n)
        for copy in range(2):
            records.append(
                {
                    "url": f"https://short.example.com/{n}-{copy}",
                    "fetched_at": "2024-01-07",
                    "status": 200,
                    "html": page_html(f"Note {n}", body),
                }
            )
    return write_jsonl(tmp_path / "short.jsonl", records)


@pytest.mark.parametrize("min_words", [10, 15, 30, 60])
def test_report_applies_the_configs_min_words(
    tmp_path: Path, min_words: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database ingested at the default min_words (30) reports at another min_words exactly what a
    database ingested at that min_words reports."""
    dump = _short_pages_dump(tmp_path)
    config = tmp_path / "dupcheck.yaml"
    config.write_text(yaml.safe_dump({"min_words": min_words, "shingle_size": 4}))
    reports = []
    for name, ingest_config in (("default", []), ("same", ["--config", str(config)])):
        db = str(tmp_path / f"{name}.duckdb")
        assert main(["ingest", str(dump), "--db", db, "--jobs", "1", *ingest_config]) == 0
        capsys.readouterr()
        for method in ("minhash", "simhash"):
            assert (
                main(
                    [
                        "report",
                        "--json",
                        "--db",
                        db,
                        "--config",
                        str(config),
                        "--method",
                        method,
                        "--jobs",
                        "1",
                    ]
                )
                == 0
            )
            reports.append((name, method, json.loads(capsys.readouterr().out)))
    by = {(name, method): r for name, method, r in reports}
    for method in ("minhash", "simhash"):
        assert by[("default", method)] == by[("same", method)]
    numbers = by[("default", "minhash")]["numbers"]
    short = sum(n < min_words for n in (12, 20, 50)) * 2
    assert by[("default", "minhash")]["degenerate_by_reason"].get("too short", 0) == short
    assert numbers["content_pages"] == 40 - 2 + 6 - short


def test_a_held_store_can_be_closed_on_another_thread_and_a_read_only_one_refuses_writers(db: Path) -> None:
    store = Store(db)
    closer = threading.Thread(target=store.close)
    closer.start()
    closer.join()
    with Store(db) as again:  # the file was released, and this thread's leases are not confused
        assert again.count_pages() == 40
    with Store(db, read_only=True), pytest.raises(NeardupError, match="open read-only in this process"):
        Store(db)


def test_a_generator_holding_a_lease_can_be_closed_on_another_thread(db: Path) -> None:
    """The collector may close an abandoned generator (its lease inside) on any thread: the lease goes back
    to the thread that took it, which can then write (no read of its own left open)."""
    store = Store(db, on_demand=True)
    config = Config()
    texts = store.unsketched_texts(config.norm_key, "none yet", 1)  # a generator method: its lease lives
    assert len(next(texts)) == 1  # while it is open
    raised: list[BaseException] = []
    closer = threading.Thread(target=lambda: _close_catching(texts, raised))
    closer.start()
    closer.join()
    assert raised == []
    store.add_errors(1, "x", [(1, Reject(RejectKind.MISSING_URL, "missing url"))])  # no read left here
    store.close()


def _close_catching(generator: Any, raised: list[BaseException]) -> None:
    try:
        generator.close()
    except BaseException as exc:  # noqa: BLE001 - the test reports what a thread's close raised
        raised.append(exc)


def test_a_schema_3_file_gets_its_reject_kinds_in_place(tmp_path: Path, crawl_file: Path) -> None:
    """A file of the schema before `ingest_errors.kind`: read-only, its kinds are read from the reasons;
    opened for writing it is upgraded once, each row taking the kind an ingest writes today."""
    good = crawl_file.read_bytes().splitlines()[0]
    bad = [
        b'{"url": "", "html": "<p>x</p>"}',
        b'{"url": "https://e.com/1", "html": ',
        b"[1, 2]",
        b'{"url": "https://e.com/\xff", "html": "<p>x</p>"}',
        b'{"url": "https://e.com/2", "html": "  "}',
        b'{"url": "https://e.com/3"}',
        good,  # a repeat of line 1
    ]
    dump = tmp_path / "mixed.jsonl"
    dump.write_bytes(b"\n".join([good, *bad]) + b"\n")
    path = tmp_path / "old.duckdb"
    assert main(["ingest", str(dump), "--db", str(path), "--jobs", "1"]) == 0
    with Store(path) as store:
        written = store.ingest_errors()
    assert written["kind"].tolist() == [
        "missing url",
        "malformed JSON",
        "not a JSON object",
        "invalid UTF-8",
        "empty page",
        "missing html or text",
        "duplicate record",
    ]
    con = duckdb.connect(str(path))  # the same rows as schema 3 held them: no kind column
    con.execute("ALTER TABLE ingest_errors DROP COLUMN kind")
    con.execute("INSERT INTO ingest_errors VALUES (1, 'x', 99, 'a reason no kind begins')")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()
    want = [*written["kind"], "unreadable record"]
    with Store(path, read_only=True) as old:  # read as it is
        assert old.ingest_errors()["kind"].tolist() == want
        assert old.rejects_by_kind()["missing url"] == 1
    with Store(path) as store:
        errors = store.ingest_errors()
        assert errors["kind"].tolist() == want
        assert errors["reason"].tolist()[:-1] == written["reason"].tolist()
        assert store.cursor().execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            store_module.SCHEMA_VERSION,
        )
        columns = store.cursor().execute("SELECT * FROM ingest_errors LIMIT 0").description
        assert [c[0] for c in columns] == ["source_id", "source", "line", "kind", "reason"]
    with Store(path) as again:  # the upgrade ran once
        assert again.rejects_by_kind() == {kind: 1 for kind in want}


def _html_of(store: Store) -> dict[int, str | None]:
    ids = np.array(sorted(store.page_table(Config().norm_key)["page_id"]))
    return {r["page_id"]: r["html"] for t in store.page_records(ids, 7) for r in t.to_pylist()}


def test_a_schema_3_file_reads_its_html_column_and_takes_new_pages_in_blocks(
    tmp_path: Path, crawl: Crawl, crawl_file: Path
) -> None:
    # A file of schema 3 holds the raw HTML in pages.html: it reads the same read-only and after the upgrade,
    # and the pages loaded after the upgrade go into html_blocks beside it.
    path = tmp_path / "old.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, crawl_file, Config(), jobs=1)
    want = {i + 1: r["html"] for i, r in enumerate(crawl.records)}
    con = duckdb.connect(str(path))  # the same file as schema 3 wrote it
    con.register("old_html", pa.table({"page_id": list(want), "html": list(want.values())}))
    con.execute("UPDATE pages SET html = old_html.html FROM old_html WHERE pages.page_id = old_html.page_id")
    for column in ("html_block", "html_start", "html_bytes"):
        con.execute(f"ALTER TABLE pages DROP COLUMN {column}")
    con.execute("DROP TABLE html_blocks")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()
    with Store(path, read_only=True) as old:  # read as it is
        assert _html_of(old) == want
        assert old.page_source(5) == want[5] and old.page(5, Config().norm_key)["html"] == want[5]
    more = _second_dump(tmp_path)
    with Store(path) as store:
        assert _html_of(store) == want
        summary = engine.ingest_file(store, more, Config(), jobs=1)
        n_blocks, in_column = (
            store.cursor()
            .execute("SELECT (SELECT count(*) FROM html_blocks), count(html) FROM pages")
            .fetchone()
        )
        assert n_blocks >= 1 and in_column == len(want)
        added = {
            len(want) + i + 1: json.loads(line)["html"]
            for i, line in enumerate(more.read_text().splitlines())
        }
        assert summary.loaded == len(added)
        assert _html_of(store) == {**want, **added}
        # a new normalization reads every page's HTML, from the column and from the blocks
        assert engine.ensure_texts(store, Config(normalize="strip"), jobs=1) == len(want) + len(added)
    with Store(path, read_only=True) as again:
        assert (
            again.cursor().execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
            == store_module.SCHEMA_VERSION
        )


def test_a_schema_4_file_gains_the_tables_of_the_sources_analyses(tmp_path: Path, crawl_file: Path) -> None:
    """A file of the schema before each source's stored analysis reads as it is (nothing stored), and opened
    for writing it gains the tables, once, and stores an analysis as a new file does."""
    config = Config()
    path = tmp_path / "old.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, crawl_file, config, jobs=1)
        engine.ensure_fingerprints(store, config, jobs=1)
        want = analyze(load_fingerprints(store, config, jobs=1), config)
    con = duckdb.connect(str(path))  # the same file as schema 4 wrote it
    for table in ("source_analyses", "source_hosts", "source_clusters", "source_units"):
        con.execute(f"DROP TABLE {table}")
    con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    con.close()
    with Store(path, read_only=True) as old:
        assert old.source_analysis(1, analysis_key(config)) is None
    with Store(path) as store:
        version = store.cursor().execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert version == (store_module.SCHEMA_VERSION,)
        got = source_summary(store, config, 1, jobs=1)
        assert store.source_analysis(1, analysis_key(config)) is not None
    assert got.numbers == want.numbers
    with Store(path, read_only=True) as again:  # the upgrade ran once, the analysis is kept
        assert source_summary(again, config, 1).hosts.equals(got.hosts)


def test_a_schema_5_file_has_its_candidate_statistics_rewritten_as_fields_once(
    tmp_path: Path, crawl_file: Path
) -> None:
    """A fingerprint set stored with its notes as text (schema 5) reads as the fields they say, and opened
    for writing it is stored as those fields, once."""
    config = Config()
    path = tmp_path / "old.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, crawl_file, config, jobs=1)
        fset = engine.ensure_fingerprints(store, config, jobs=1)
    stats = fset.stats
    assert stats.lsh_bands and stats.size_class_tables  # notes of two kinds to read back
    counts = (
        "tables",
        "candidates",
        "largest_bucket",
        "capped_buckets",
        "capped_members",
        "verified_exact",
        "rejected_exact",
    )
    older = {k: v for k, v in fset.stored_stats().items() if k in counts or k == engine.COVERAGE}
    older["notes"] = [*stats.notes, *stats.warnings]
    con = duckdb.connect(str(path))  # the same file as schema 5 wrote it
    con.execute("UPDATE fingerprint_sets SET stats = ?", [json.dumps(older)])
    con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    con.close()
    with Store(path, read_only=True) as old:
        assert old.fingerprint_set(config.fingerprint_key) == fset
    with Store(path) as store:
        version = store.cursor().execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert version == (store_module.SCHEMA_VERSION,)
    con = duckdb.connect(str(path), read_only=True)
    (stored,) = con.execute("SELECT stats FROM fingerprint_sets").fetchone()
    con.close()
    assert json.loads(stored) == fset.stored_stats()


def test_html_blocks_go_with_their_last_page(tmp_path: Path, crawl: Crawl) -> None:
    # Pages share a compressed block: a rejected repeat leaves its neighbours' HTML readable, and a block
    # goes when no page of it is left.
    records = crawl.records[:6] + [crawl.records[2]] + crawl.records[6:9]  # line 7 repeats line 3
    dump = write_jsonl(tmp_path / "repeat.jsonl", records)
    with Store(tmp_path / "b.duckdb") as store:
        summary = engine.ingest_file(store, dump, Config(), jobs=1)
        assert summary.reasons == {"duplicate record": 1}
        assert sorted(h for h in _html_of(store).values() if h) == sorted(
            r["html"] for i, r in enumerate(records) if i != 6
        )
        assert store.cursor().execute("SELECT count(*) FROM html_blocks").fetchone()[0] == 1
        store.remove_source(int(store.sources()["source_id"][0]))
        assert store.cursor().execute("SELECT count(*) FROM html_blocks").fetchone()[0] == 0


def test_duckdb_spills_beside_the_database_not_into_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is attached to an in-memory connection, whose spill directory DuckDB puts in the working
    directory (`.tmp/`); a large sort or join of a report run from a repository left one there."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("NEARDUP_DUCKDB_MEMORY", "100MB")
    db = tmp_path / "data" / "crawl.duckdb"
    db.parent.mkdir()
    with Store(db) as store, store.reading():
        cur = store.cursor()
        assert cur.execute("SELECT current_setting('temp_directory')").fetchone() == (f"{db}.tmp",)
        # 20M rows to sort under a 100 MB cap: DuckDB spills
        got = cur.execute(
            "SELECT count(*), max(x) FROM (SELECT range AS x FROM range(20000000) ORDER BY hash(range))"
        )
        assert got.fetchone() == (20000000, 19999999)
        assert (db.parent / "crawl.duckdb.tmp").is_dir()
    assert list(work.iterdir()) == []


def test_the_page_table_of_every_page_is_that_of_the_pages_of_every_source(tmp_path: Path, db: Path) -> None:
    """Every page's table (pages and texts read side by side, units placed by page id) is the table the
    join of the sources' pages gives, after a second source, a removal and with a second normalization that
    only some pages have."""
    config = Config()
    other = config.replace(normalize="strip")
    with Store(db) as store:
        engine.ingest_file(store, _second_dump(tmp_path), config, jobs=1)
        load_fingerprints(store, config, jobs=1)
        texts = store.texts_in_ranges(config.norm_key, [(0, 10**12)]).iloc[::2]
        store.add_texts(
            pd.DataFrame(
                {
                    "norm_key": other.norm_key,
                    "page_id": texts["page_id"].to_numpy(),
                    "text": texts["text"].to_numpy(),
                    "title": None,
                    "n_words": [len(t.split()) for t in texts["text"]],
                    "exact_key": texts["exact_key"].to_numpy(),
                    "degenerate": None,
                }
            )
        )
        store.remove_source(int(store.sources()["source_id"].iloc[0]))
        sources = store.sources()["source_id"].tolist()
        for norm_key in (config.norm_key, other.norm_key):
            for key in (None, config.fingerprint_key):
                every = store.page_table(norm_key, min_words=config.min_words, fingerprint_key=key)
                joined = store.page_table(
                    norm_key, min_words=config.min_words, source_ids=sources, fingerprint_key=key
                )
                pd.testing.assert_frame_equal(every, joined)
                assert len(every)
        assert len(store.page_table(other.norm_key)) < len(store.page_table(config.norm_key))


def test_a_transaction_commits_its_block_and_rolls_it_back_when_it_raises(tmp_path: Path) -> None:
    with Store(tmp_path / "db.duckdb") as store, store.writing():
        cur = store.cursor()
        cur.execute("CREATE TABLE kept (n INTEGER)")
        with transaction(cur):
            cur.execute("INSERT INTO kept VALUES (1)")
        with pytest.raises(ZeroDivisionError), transaction(cur):
            cur.execute("INSERT INTO kept VALUES (2)")
            _ = 1 / 0
        assert cur.execute("SELECT n FROM kept").fetchall() == [(1,)]


def test_the_signatures_of_some_units_are_read_a_batch_at_a_time(store: Store) -> None:
    """The units in a pair are a quarter of a million-page crawl's: their signatures are read a batch at a
    time in stored order (no sort of half a gigabyte of bytes in DuckDB, no second copy of them in
    Arrow), each batch placed by unit id, and give the matrix the whole set's read gives."""
    config = Config()
    fp = load_fingerprints(store, config)
    wanted = fp.signature_units
    assert wanted is not None and 0 < len(wanted) < fp.n_units
    batches = list(store.unit_signature_batches_of(config.fingerprint_key, wanted, batch_rows=7))
    assert all(len(ids) == len(column) <= 7 for ids, column in batches)
    assert sorted(np.concatenate([ids for ids, _ in batches]).tolist()) == wanted.tolist()
    every = every_signature(store, config, fp.n_units)
    assert np.array_equal(fp.held_signatures(), every[wanted])


def test_a_file_open_only_to_read_caps_duckdb_s_memory_lower(tmp_path: Path) -> None:
    """DuckDB keeps the blocks a read scanned (a million units' signatures are half a gigabyte) up to its
    memory limit: a read-only open (the app's pages) caps it lower than a write (an ingest's checkpoints)."""
    path = tmp_path / "db.duckdb"
    with Store(path) as writer:
        writer.count_pages()
        limit = writer.cursor().sql("SELECT current_setting('memory_limit')").fetchall()[0]
    reader = Store(path, on_demand=True, linger_s=0.0)
    with reader.reading():
        read_limit = reader.cursor().sql("SELECT current_setting('memory_limit')").fetchall()[0]
    reader.close()
    assert limit is not None and read_limit is not None
    assert limit[0] == "953.6 MiB" and read_limit[0] == "244.1 MiB"
