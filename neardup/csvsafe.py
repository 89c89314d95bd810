"""Every CSV neardup writes goes through `to_csv`, which defuses spreadsheet formulas and shows control
characters as escapes.

Crawled URLs and analysts' notes are untrusted, and a cell such as `=HYPERLINK(...)` is run when the
file is opened in a spreadsheet. OWASP's rule (CSV injection): a text cell that begins with `= + - @`,
a tab or a carriage return gets a leading single quote, which spreadsheets show as text. Numeric
columns are left alone, so a negative number stays a number.

A crawled URL may also hold ESC, BEL, NUL or a line end: inside a quoted cell they are valid CSV, but they
drive a terminal the file is shown in (`cat`, `less -R`) and split the row for every line-based tool
(`grep`, `wc -l`, `head`). They are written as escapes (`escapes.escape_controls`). A labels file keeps
them (`keep_controls`): it is read back by `Store.import_labels`, which matches its URLs and notes exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import overload

import pandas as pd

from .escapes import CONTROLS, escape_controls

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# A cell `defuse_formulas` changed (a regular expression, as DuckDB's regexp_matches takes it): reading
# one of neardup's CSVs back (Store.import_labels) removes the quote again.
DEFUSED_PATTERN = "^'[" + "".join("\\" + t if t in "-]\\^" else t for t in FORMULA_TRIGGERS) + "]"


def defuse_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` in which every text cell that a spreadsheet would read as a formula starts with `'`."""
    return _map_text_columns(df, _defused)


def escape_control_cells(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` in which every control character of a text cell, line ends included, is an escape."""
    return _map_text_columns(df, _controls_escaped)


def _map_text_columns(df: pd.DataFrame, fix: Callable[[pd.Series], pd.Series]) -> pd.DataFrame:
    """A copy of `df` with `fix` applied to each text column (numbers, dates and booleans left as they are)."""
    out = df.copy()
    for name in out.columns:
        col = text = out[name]
        if isinstance(col.dtype, pd.CategoricalDtype) and _is_text(col.cat.categories.dtype):
            text = col.astype(col.cat.categories.dtype)  # text categories: each cell is read as its text
        if _is_text(text.dtype):
            fixed = fix(text)
            if fixed is not col:
                out[name] = fixed
    return out


def _is_text(dtype: object) -> bool:
    return isinstance(dtype, pd.StringDtype) or pd.api.types.is_object_dtype(dtype)


def _defused(col: pd.Series) -> pd.Series:
    risky = col.str.startswith(FORMULA_TRIGGERS).fillna(False).astype(bool)
    return col.where(~risky, "'" + col.astype("string")) if risky.any() else col


def _controls_escaped(col: pd.Series) -> pd.Series:
    risky = col.str.contains(CONTROLS).fillna(False).astype(bool)
    return col.where(~risky, col[risky].map(lambda v: escape_controls(v, keep=""))) if risky.any() else col


def _safe_cells(col: pd.Series) -> pd.Series:
    # escapes first: an escaped tab or carriage return no longer starts a formula
    return _defused(_controls_escaped(col))


@overload
def to_csv(df: pd.DataFrame, path: None = None, *, keep_controls: bool = False) -> str: ...
@overload
def to_csv(df: pd.DataFrame, path: str | Path, *, keep_controls: bool = False) -> None: ...


def to_csv(df: pd.DataFrame, path: str | Path | None = None, *, keep_controls: bool = False) -> str | None:
    """`df` as CSV (to `path`, or returned as text when no path is given), formulas defused and, unless
    `keep_controls`, control characters escaped.

    Lines end in CRLF as RFC 4180 has it: Python's csv module quotes a field only for the characters of
    the line terminator, so with a bare "\n" a carriage return inside a note would split its row."""
    safe = _map_text_columns(df, _defused if keep_controls else _safe_cells)
    return safe.to_csv(path, index=False, lineterminator="\r\n")
