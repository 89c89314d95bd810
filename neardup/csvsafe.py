"""Every CSV neardup writes goes through `to_csv`, which defuses spreadsheet formulas.

Crawled URLs and analysts' notes are untrusted, and a cell such as `=HYPERLINK(...)` is run when the
file is opened in a spreadsheet. OWASP's rule (CSV injection): a text cell that begins with `= + - @`,
a tab or a carriage return gets a leading single quote, which spreadsheets show as text. Numeric
columns are left alone, so a negative number stays a number.
"""

from __future__ import annotations

from pathlib import Path
from typing import overload

import pandas as pd

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# A cell `defuse_formulas` changed (a regular expression, as DuckDB's regexp_matches takes it): reading
# one of neardup's CSVs back (Store.import_labels) removes the quote again.
DEFUSED_PATTERN = "^'[" + "".join("\\" + t if t in "-]\\^" else t for t in FORMULA_TRIGGERS) + "]"


def defuse_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` in which every text cell that a spreadsheet would read as a formula starts with `'`."""
    out = df.copy()
    for name in out.columns:
        col = out[name]
        if col.dtype != object and not isinstance(col.dtype, pd.StringDtype):
            continue
        risky = col.str.startswith(FORMULA_TRIGGERS).fillna(False).astype(bool)
        if risky.any():
            out[name] = col.where(~risky, "'" + col.astype("string"))
    return out


@overload
def to_csv(df: pd.DataFrame, path: None = None) -> str: ...
@overload
def to_csv(df: pd.DataFrame, path: str | Path) -> None: ...


def to_csv(df: pd.DataFrame, path: str | Path | None = None) -> str | None:
    """`df` as CSV (to `path`, or returned as text when no path is given), formulas defused.

    Lines end in CRLF as RFC 4180 has it: Python's csv module quotes a field only for the characters of
    the line terminator, so with a bare "\n" a carriage return inside a note would split its row."""
    return defuse_formulas(df).to_csv(path, index=False, lineterminator="\r\n")
