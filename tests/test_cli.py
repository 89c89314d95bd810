"""The CLI: ingest, report, export and replay; bad input exits 2 with one line on stderr."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import Crawl, write_jsonl
from hostile_configs import HOSTILE_CONFIGS

from neardup.analysis import analyze, load_fingerprints
from neardup.categories import suggest_copies, suggestion_key
from neardup.cli import main
from neardup.config import Config, default_threshold, load_config
from neardup.export import COLUMNS
from neardup.report import report_dict
from neardup.store import Store

SETTING = ["--method", "simhash", "--threshold", "5", "--shingle-size", "4"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path: Path, crawl_file: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = str(tmp_path / "cli.duckdb")
    code, out, _ = _run(capsys, "ingest", str(crawl_file), "--db", path, "--jobs", "1")
    assert code == 0
    assert f"{crawl_file}: 40 pages loaded, 0 records rejected" in out
    return path


def _report_json(capsys: pytest.CaptureFixture[str], db: str, *argv: str) -> dict:
    code, out, _ = _run(capsys, "report", "--json", "--db", db, "--jobs", "1", *argv)
    assert code == 0
    return json.loads(out)


def test_ingest_reports_rejects_and_is_idempotent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl: Crawl
) -> None:
    dump = tmp_path / "messy.jsonl"
    write_jsonl(dump, crawl.records[:5])
    with open(dump, "ab") as f:
        f.write(b"{not json\n")
        f.write(json.dumps({"html": "<p>x</p>"}).encode() + b"\n")
    db = str(tmp_path / "m.duckdb")
    code, out, _ = _run(capsys, "ingest", str(dump), "--db", db, "--jobs", "1")
    assert code == 0
    assert "5 pages loaded, 2 records rejected" in out
    assert "malformed JSON" in out and "missing url" in out
    assert "ingest_errors" in out
    code, out, _ = _run(capsys, "ingest", str(dump), "--db", db, "--jobs", "1")
    assert code == 0
    assert "already loaded" in out
    assert _report_json(capsys, db)["rejected_by_kind"] == {"malformed JSON": 1, "missing url": 1}
    code, out, _ = _run(capsys, "report", "--db", db, "--jobs", "1")
    assert code == 0
    assert "records rejected at ingest (2, not counted above): malformed JSON 1, missing url 1" in out


def test_report_text(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "report", "--db", db, "--jobs", "1")
    assert code == 0
    assert "neardup report" in out
    assert "minhash" in out and "containment >= 0.8" in out
    assert re.search(r"^\s+total pages\s+40$", out, re.MULTILINE)
    assert re.search(r"^\s+degenerate pages \(set aside\)\s+2\s+5\.0%$", out, re.MULTILINE)
    assert re.search(r"^\s+exact duplicates .*\s18\s+45\.0%$", out, re.MULTILINE)
    assert "degenerate by reason: soft-404 2" in out
    assert "news.example.com" in out


def test_report_json_has_the_numbers(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    d = _report_json(capsys, db)
    assert d["rejected_by_kind"] == {}
    n = d["numbers"]
    assert n["total_pages"] == 40
    assert n["content_pages"] + n["degenerate_pages"] == 40
    assert n["exact_duplicates"] + n["near_duplicates"] + n["unique_pages"] == n["content_pages"]
    assert (n["exact_duplicates"], n["near_duplicates"], n["degenerate_pages"]) == (18, 4, 2)
    assert all(isinstance(v, int | float) for v in n.values())
    assert d["degenerate_by_reason"] == {"soft-404": 2}
    assert d["setting"]["method"] == "minhash"
    assert d["top_hosts"][0]["host"] == "news.example.com"


def test_report_json_is_that_of_the_full_analysis(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The report reads no pages frame of strings; its numbers, hosts and reasons are the full analysis'."""
    got = _report_json(capsys, db)
    with Store(db, read_only=True) as store:
        full = analyze(load_fingerprints(store, Config()), Config())
        want = report_dict(full, rejected=store.rejects_by_kind())
    assert got == json.loads(json.dumps(want, default=str))


def _copies_to_compare(db: str, config: Config) -> int:
    """The copies whose category the database does not hold at `config` (a read-only look: nothing kept)."""
    with Store(db, read_only=True) as store:
        return suggest_copies(store, analyze(load_fingerprints(store, config), config)).compared


def test_report_keeps_the_copies_categories_of_its_threshold(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "report", "--db", db, "--jobs", "1", "--no-categories")[0] == 0
    assert _copies_to_compare(db, Config()) == 22
    assert _run(capsys, "report", "--db", db, "--jobs", "1")[0] == 0
    assert _copies_to_compare(db, Config()) == 0
    # the same copies against the same representatives at another threshold of the same texts
    assert _copies_to_compare(db, Config(threshold=0.9)) == 0
    # containment of other shingles is another comparison
    assert suggestion_key(Config().with_shingle_size(4)) != suggestion_key(Config())


def test_flags_change_the_setting(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    d = _report_json(capsys, db, *SETTING)
    assert (d["setting"]["method"], d["setting"]["threshold"], d["setting"]["shingle_size"]) == (
        "simhash",
        5,
        4,
    )
    # a method switch without a threshold takes that method's default
    d = _report_json(capsys, db, "--method", "simhash")
    assert d["setting"]["threshold"] == default_threshold("simhash")
    # tight thresholds find fewer near duplicates than loose ones
    tight = _report_json(capsys, db, "--method", "simhash", "--threshold", "0")["numbers"]["near_duplicates"]
    loose = _report_json(capsys, db, "--method", "simhash", "--threshold", "8")["numbers"]["near_duplicates"]
    assert tight == 0 < loose == 4


def test_extractor_flag(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    """resiliparse's extractor normalizes the pages again, under its own key; on these pages it gives the same
    text as neardup's, hence the same numbers."""
    default = _report_json(capsys, db)
    reference = _report_json(capsys, db, "--extractor", "resiliparse")
    assert (default["setting"]["extractor"], reference["setting"]["extractor"]) == ("neardup", "resiliparse")
    assert reference["numbers"] == default["numbers"]
    code, out, _ = _run(capsys, "report", "--db", db, "--jobs", "1", "--extractor", "resiliparse")
    assert code == 0 and "normalize=main (resiliparse)" in out


def test_export_and_replay(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl: Crawl) -> None:
    out_csv = tmp_path / "out" / "clusters.csv"
    out_csv.parent.mkdir()
    code, out, _ = _run(capsys, "export", "--db", db, "--jobs", "1", "--out", str(out_csv), *SETTING)
    assert code == 0
    yaml_path = out_csv.with_name("dupcheck.yaml")
    assert str(yaml_path) in out and yaml_path.exists()

    df = pd.read_csv(out_csv)
    assert (
        list(df.columns)
        == COLUMNS
        == [
            "url",
            "cluster_id",
            "cluster_size",
            "is_representative",
            "representative_url",
            "similarity_to_representative",
            "method",
            "shingle_size",
            "threshold",
            "degenerate",
            "category",
            "category_from",
            "suggested_action",
            "cluster_category",
        ]
    )
    assert len(df) == len(crawl.records)
    assert sorted(df["url"]) == sorted(r["url"] for r in crawl.records)
    assert set(df["method"]) == {"simhash"}
    assert set(df["shingle_size"]) == {4}
    assert set(df["threshold"]) == {5}
    soft = df[df["degenerate"].fillna("") != ""]
    assert list(soft["degenerate"]) == ["soft-404", "soft-404"]
    assert soft["cluster_id"].isna().all()
    assert not soft["is_representative"].any()
    clustered = df[df["cluster_id"].notna()]
    assert clustered.groupby("cluster_id")["is_representative"].sum().eq(1).all()
    sizes = clustered.groupby("cluster_id").size()
    assert (clustered["cluster_size"] == clustered["cluster_id"].map(sizes)).all()

    saved = yaml.safe_load(yaml_path.read_text())
    assert (saved["method"], saved["threshold"], saved["shingle_size"]) == ("simhash", 5, 4)
    config = load_config(yaml_path)
    assert (config.method, config.threshold, config.shingle_size) == ("simhash", 5, 4)

    exported = _report_json(capsys, db, *SETTING)
    replayed = _report_json(capsys, db, "--config", str(yaml_path))
    assert replayed["numbers"] == exported["numbers"]
    assert replayed["setting"] == exported["setting"]
    default = _report_json(capsys, db)
    assert default["setting"] != replayed["setting"]


def test_export_config_out(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _run(
        capsys,
        "export",
        "--db",
        db,
        "--jobs",
        "1",
        "--out",
        str(tmp_path / "c.csv"),
        "--config-out",
        str(tmp_path / "run.yaml"),
    )
    assert code == 0
    assert (tmp_path / "run.yaml").exists()
    assert not (tmp_path / "dupcheck.yaml").exists()


def _one_line_error(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error" in lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["report", "--threshold", "2.0"], ["threshold", "2.0"]),
        (["report", "--method", "simhash", "--threshold", "2.5"], ["2.5"]),
        (["report", "--method", "simhash", "--threshold", "40"], ["40"]),
        (["report", "--shingle-size", "0"], ["shingle_size", "0"]),
    ],
)
def test_bad_settings_exit_2(
    db: str, capsys: pytest.CaptureFixture[str], argv: list[str], needles: list[str]
) -> None:
    code, out, err = _run(capsys, *argv, "--db", db, "--jobs", "1")
    assert code == 2
    assert out == ""
    _one_line_error(err, *needles)


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["report", "--method", "jaccard"], ["invalid choice", "jaccard"]),
        (["report", "--extractor", "trafilatura"], ["invalid choice", "trafilatura"]),
        (["report", "--threshold", "high"], ["invalid float", "high"]),
        (["report", "--fail-over", "redundancy=20%"], ["--fail-over", "unknown gate metric 'redundancy'"]),
        (["report", "--fail-over", "redundant=x%"], ["--fail-over", "'x' is not a number"]),
        (["report", "--fail-over", "largest_cluster=5%"], ["--fail-over", "not a percentage"]),
        (["frobnicate"], ["invalid choice", "frobnicate"]),
        ([], ["required"]),
    ],
)
def test_bad_options_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needles: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    _one_line_error(err, *needles)


def test_missing_db_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nothing.duckdb"
    for cmd in (["report"], ["export", "--out", str(tmp_path / "x.csv")]):
        code, out, err = _run(capsys, *cmd, "--db", str(missing))
        assert code == 2
        _one_line_error(err, "no database", str(missing))
    assert not missing.exists()


def test_not_a_dump_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "image.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    db = str(tmp_path / "d.duckdb")
    code, _, err = _run(capsys, "ingest", str(png), "--db", db, "--jobs", "1")
    assert code == 2
    _one_line_error(err, "image.png", "not a crawl dump")
    # nothing was loaded, and no database made: a report says so, in one line
    code, _, err = _run(capsys, "report", "--db", db)
    assert code == 2
    _one_line_error(err, "no database at")


def test_bad_config_file_exits_2(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("method: simhash\nthreshold: 99\n")
    code, _, err = _run(capsys, "report", "--db", db, "--config", str(bad))
    assert code == 2
    _one_line_error(err, "99")
    code, _, err = _run(capsys, "report", "--db", db, "--config", str(tmp_path / "absent.yaml"))
    assert code == 2
    _one_line_error(err, "config file not found")


@pytest.mark.parametrize(("content", "needle"), HOSTILE_CONFIGS, ids=range(len(HOSTILE_CONFIGS)))
def test_hostile_config_files_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(content)
    code, out, err = _run(
        capsys,
        "ingest",
        str(tmp_path / "dump.jsonl"),
        "--db",
        str(tmp_path / "x.duckdb"),
        "--config",
        str(bad),
    )
    assert (code, out) == (2, "")
    _one_line_error(err, needle)
    assert len(err) < 400
    assert not (tmp_path / "x.duckdb").exists()


def test_console_script(tmp_path: Path, crawl_file: Path) -> None:
    script = Path(sys.executable).with_name("neardup")
    assert script.exists()
    help_run = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert help_run.returncode == 0
    for command in ("ingest", "report", "export", "evaluate", "app"):
        assert command in help_run.stdout
    db = str(tmp_path / "sub.duckdb")
    ing = subprocess.run(
        [sys.executable, "-m", "neardup.cli", "ingest", str(crawl_file), "--db", db, "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ing.returncode == 0, ing.stderr
    assert "40 pages loaded" in ing.stdout


@pytest.mark.parametrize(("flag", "value"), [([], "0"), (["--allow-any-path"], "1")])
def test_app_passes_the_path_rule_to_the_app(
    db: str, monkeypatch: pytest.MonkeyPatch, flag: list[str], value: str
) -> None:
    # the command `neardup app` would run, with its environment (the server itself is the browser test's)
    started: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(os, "execve", lambda exe, cmd, env: started.append((cmd, env)))
    monkeypatch.setenv("NEARDUP_ALLOW_ANY_PATH", "1")  # an inherited value does not decide
    assert main(["app", "--db", db, "--headless", *flag]) == 0
    [(cmd, env)] = started
    assert env["NEARDUP_ALLOW_ANY_PATH"] == value and "streamlit" in cmd


def test_export_never_overwrites_a_dupcheck_yaml(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-edited dupcheck.yaml beside the output is kept: the setting goes to a new name, said so; an
    existing --config-out is refused before anything is written."""
    edited = "# my hand-tuned setting\nthreshold: 0.9\n"
    (tmp_path / "dupcheck.yaml").write_text(edited)
    out_csv = tmp_path / "clusters.csv"
    code, out, _ = _run(capsys, "export", "--db", db, "--jobs", "1", "--out", str(out_csv))
    assert code == 0
    assert (tmp_path / "dupcheck.yaml").read_text() == edited
    assert "dupcheck-1.yaml" in out and "dupcheck.yaml exists and is kept" in out
    assert load_config(tmp_path / "dupcheck-1.yaml").threshold == 0.8
    out_csv.unlink()
    code, _, err = _run(
        capsys, "export", "--db", db, "--out", str(out_csv), "--config-out", str(tmp_path / "dupcheck.yaml")
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "never overwritten" in err
    assert (tmp_path / "dupcheck.yaml").read_text() == edited
    assert not out_csv.exists()


def test_readme_cli_table_is_the_parsers() -> None:
    """The README's CLI table is scripts/cli_table.py's output, so it lists every command and option."""
    root = Path(__file__).resolve().parent.parent
    table = subprocess.run(
        [sys.executable, str(root / "scripts" / "cli_table.py")], capture_output=True, text=True, check=True
    ).stdout
    begin, end = table.splitlines()[0], table.splitlines()[-1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    start = readme.index(begin)
    assert readme[start : readme.index(end, start) + len(end) + 1] == table
    for command in ("ingest", "report", "export", "evaluate", "spark", "open", "app"):
        assert f"| `neardup {command}" in table
    assert "`[--conf KEY=VALUE ...]`" in table and "`--truth TRUTH`" in table


def test_fingerprints_precomputes_the_shingle_sizes_and_methods_an_analyst_tries(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from neardup.config import Config
    from neardup.store import Store

    wanted = [Config().with_method(m).with_shingle_size(k) for m in ("minhash", "simhash") for k in (3, 4)]
    with Store(db) as store:
        assert all(store.fingerprint_set(c.fingerprint_key) is None for c in wanted)
    code, out, err = _run(capsys, "fingerprints", "--db", db, "--shingle", "3-4", "--method", "both")
    assert code == 0, err
    with Store(db) as store:
        assert all(store.fingerprint_set(c.fingerprint_key) is not None for c in wanted)
    assert len([line for line in out.splitlines() if "ready" in line]) == 4
    # the report at one of them reads what is stored, as the app does
    assert _report_json(capsys, db, "--shingle-size", "3", "--method", "simhash")["numbers"]["total_pages"]


def test_fingerprints_under_a_memory_limit_store_the_pairs_computed_in_memory(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--memory-limit` small enough for the step to go out of core (DuckDB opened at its share of it) stores
    the units and pairs of the in-memory step."""
    copy = str(tmp_path / "copy.duckdb")
    shutil.copyfile(db, copy)
    key = Config().fingerprint_key
    stored = []
    for path, limit in ((db, []), (copy, ["--memory-limit", "1KB"])):  # out of core at any size
        code, _, err = _run(capsys, "fingerprints", "--db", path, *limit)
        assert code == 0, err
        with Store(path) as store:
            stored.append((store.units(key, with_signatures=True), store.pairs(key).sort_values(["a", "b"])))
    pd.testing.assert_frame_equal(stored[0][0], stored[1][0])
    pd.testing.assert_frame_equal(stored[0][1].reset_index(drop=True), stored[1][1].reset_index(drop=True))
    assert len(stored[0][1])


@pytest.mark.parametrize("sizes", ["8-3", "0-2", "x", "3-"])
def test_fingerprints_refuses_a_bad_range_of_sizes(
    db: str, capsys: pytest.CaptureFixture[str], sizes: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["fingerprints", "--db", db, "--shingle", sizes])
    assert exc.value.code == 2
    assert "--shingle" in capsys.readouterr().err
