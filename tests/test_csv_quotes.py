"""A CSV quote that is never closed: the record it opens is a named error and the rows after it load."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from neardup.ingest import read_raw
from neardup.rejects import Reject

N = 2001
BAD = 500  # the row with the unterminated quote, on line BAD + 2 (the header is line 1)


def _html(i: int) -> str:
    return f"<html><body><p>page number {i}, words words words</p></body></html>"


def _write(path: Path, *, quoted: bool) -> None:
    """N rows, row BAD's html opened with a quote that is never closed. `quoted`: every html quoted (the
    next quote closes the bad one); else no other quote in the file (the bad one runs to its end)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        f.write("url,html\n")
        for i in range(N):
            html = _html(i) if quoted else _html(i).replace(",", "")
            cell = f'"{html}"' if quoted else html
            if i == BAD:
                cell = f'"{html}'
            f.write(f"https://ex.com/{i},{cell}\n")


@pytest.mark.parametrize("quoted", [True, False], ids=["quoted-rows", "unquoted-rows"])
def test_an_unterminated_quote_is_one_named_error_and_every_other_row_loads(
    tmp_path: Path, quoted: bool
) -> None:
    path = tmp_path / "q.csv"
    _write(path, quoted=quoted)
    records = list(read_raw(path, "csv"))
    pages = {r.line: r.payload for r in records if isinstance(r.payload, dict)}
    errors = {r.line: r.payload for r in records if isinstance(r.payload, Reject)}
    assert len(pages) + len(errors) == N
    assert list(errors) == [BAD + 2]
    assert "quote" in errors[BAD + 2].detail and f"line {BAD + 2}" in errors[BAD + 2].detail
    for line, rec in pages.items():
        i = line - 2
        assert rec["url"] == f"https://ex.com/{i}"
        assert rec["html"] == (_html(i) if quoted else _html(i).replace(",", ""))


def test_quoted_fields_across_lines_and_lenient_quotes_still_read(tmp_path: Path) -> None:
    """A quoted field holding line ends is one record; `"a"b` reads as `ab`, as Python's csv reads it."""
    path = tmp_path / "ok.csv"
    rows = [
        ["https://ex.com/0", '<p>one\nline two\r\nline three, "quoted"</p>'],
        ["https://ex.com/1", "<p>x</p>"],
    ]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["url", "html"])
        w.writerows(rows)
        f.write('https://ex.com/2,"<p>a</p>"<p>b</p>\n')
    records = list(read_raw(path, "csv"))
    assert [(r.line, r.payload) for r in records] == [
        (2, dict(zip(["url", "html"], rows[0], strict=True))),
        (5, dict(zip(["url", "html"], rows[1], strict=True))),
        (6, {"url": "https://ex.com/2", "html": "<p>a</p><p>b</p>"}),
    ]
