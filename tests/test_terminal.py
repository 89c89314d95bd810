"""Crawled bytes never reach the analyst's terminal as control sequences, nor clusters.csv as raw controls."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import make_crawl, write_jsonl

from neardup.cli import main
from neardup.escapes import escape_controls

# Sequences a hostile crawl puts in a URL: clear the screen, set the title (OSC ... BEL), a hyperlink (OSC 8),
# a bell, a carriage return that overwrites the line, NUL, DEL, a C1 CSI, a right-to-left override.
HOSTILE = [
    "\x1b[2J\x1b[H",
    "\x1b]0;pwned\x07",
    "\x1b]8;;https://evil.example\x1b\\",
    "\x07",
    "\rFAKE",
    "\x00",
    "\x7f",
    "\x9b31m",
    "\u202e",
    "\nFAKE",
]
# What no output may hold: C0 controls but line feed and tab, DEL, C1 controls, bidirectional overrides.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_escape_controls_shows_each_control_as_an_escape() -> None:
    assert escape_controls("a\x1b[2Jb\x07c\x00\u202e\x9b") == "a\\x1b[2Jb\\x07c\\x00\\u202e\\x9b"
    assert escape_controls("tab\there\nline") == "tab\there\nline"
    assert escape_controls("one\nline\r", keep="") == "one\\nline\\r"
    assert escape_controls("bad \udcff byte") == "bad \\xff byte"  # a byte kept by surrogateescape
    assert escape_controls("plain é ü 日本") == "plain é ü 日本"


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("terminal")
    records = make_crawl().records[:40]
    for i, seq in enumerate(HOSTILE):
        records[i] = {**records[i], "url": f"https://ex{seq}ample.com/{seq}/page{i}"}
        records[20 + i] = {**records[i], "url": f"https://ex{seq}ample.com/copy{seq}{i}"}
    baseline = write_jsonl(tmp / "base\x1b]0;title\x07.jsonl", records[:30])
    current = write_jsonl(tmp / "current.jsonl", records[10:])
    return tmp, baseline, current


def _assert_clean(text: str) -> None:
    found = UNSAFE.findall(text)
    assert not found, found


def test_no_cli_output_holds_a_control_sequence(
    hostile_db: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp, baseline, current = hostile_db
    db = str(tmp / "t.duckdb")
    truth = tmp / "truth.csv"
    truth.write_text(
        "url,true_cluster,kind\n" + "".join(f"https://x.example/{i},{i},unique\n" for i in range(3))
    )
    runs = [
        ["ingest", str(baseline), str(current), "--db", db, "--jobs", "1"],
        ["ingest", str(tmp / "missing\x1b[2J.jsonl"), "--db", db, "--jobs", "1"],
        ["report", "--db", db, "--jobs", "1", "--top-hosts", "50"],
        ["report", "--db", db, "--jobs", "1", "--json"],
        ["rules", "--db", db, "--jobs", "1", "--min-support", "1", "--min-precision", "0"],
        ["compare", "--db", db, "--baseline", "1", "--current", "2", "--top", "50", "--jobs", "1"],
        ["compare", "--db", db, "--baseline", "1", "--current", "2", "--json", "--jobs", "1"],
        ["export", "--db", db, "--out", str(tmp / "c.csv"), "--jobs", "1"],
        ["evaluate", "--db", db, "--truth", str(truth), "--jobs", "1"],
        ["report", "--db", str(tmp / "none\x07.duckdb")],
    ]
    outputs = []
    for argv in runs:
        main(argv)
        out, err = capsys.readouterr()
        outputs.append(out)
        _assert_clean(out)
        _assert_clean(err)
    assert "\\x1b[2J" in outputs[5]  # compare names the hostile URLs, escaped
    assert not any(line.startswith("FAKE") for out in outputs for line in out.splitlines())


def test_clusters_csv_holds_no_raw_control_character(
    hostile_db: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp, baseline, current = hostile_db
    db = str(tmp / "csv.duckdb")
    assert main(["ingest", str(baseline), str(current), "--db", db, "--jobs", "1"]) == 0
    out = tmp / "clusters.csv"
    removed = tmp / "removed.csv"
    assert main(["export", "--db", db, "--out", str(out), "--removed", str(removed), "--jobs", "1"]) == 0
    capsys.readouterr()
    for path in (out, removed):
        text = path.read_bytes().decode("utf-8")
        rows = text.split("\r\n")
        assert rows[-1] == ""
        for row in rows[:-1]:
            assert "\n" not in row and "\r" not in row
            _assert_clean(row)
    assert "https://ex\\x1b]0;pwnedexample.com" not in text
    written = out.read_text(encoding="utf-8")
    assert "https://ex\\x1b]0;pwned\\x07ample.com" in written and "\\nFAKE" in written
