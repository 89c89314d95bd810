"""CSV files (`.csv`, `.csv.gz`) with a header row -> `RawLine`s of dicts keyed by the header's names.

Named `csvfile` so that `csv` stays the standard library's module inside this package.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import NotACrawlDump
from ..records import MAX_PAGE_BYTES, RawLine
from ..rejects import RejectKind
from .inflate import open_binary, raw_position
from .jsonl import MAX_LINE_BYTES, UTF8_BOM


def read_csv(path: Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[RawLine]:
    """The records of a CSV file, each named by its first line; one with a line over `max_line_bytes`, or
    longer than it in all, is a `Reject` (see `_csv_records`). `NotACrawlDump` for a file without a `url`
    column."""
    yield from CsvRecords(path, max_line_bytes=max_line_bytes)


class CsvRecords:
    """`read_csv`'s records, and how far into the file (bytes as stored) those read so far reach."""

    def __init__(self, path: Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.path, self.max_line_bytes = Path(path), max_line_bytes
        self._reading: BinaryIO | None = None

    def __iter__(self) -> Iterator[RawLine]:
        with open_binary(self.path) as f:
            self._reading = f
            yield from _csv_records(self.path, f, self.max_line_bytes)

    @property
    def read_position(self) -> int:
        return raw_position(self._reading)


class _CsvTooLong(Exception):
    """The CSV record being read is over the limit; it has been skipped to its end. `args[0]`: the `Reject`."""


class _CsvLines:
    """The lines of a CSV file for `csv` as str (UTF-8, undecodable bytes kept as surrogates), read at most
    `max_bytes` at a time: a record longer than that, in one line or in all, is skipped as it streams
    (`_CsvTooLong`) and never held whole. Lines end at \\n, \\r\\n or a lone \\r, as `open(newline="")` ends them.

    A record ends at the first line end outside quotes; while skipping one, the quotes are counted (each `"`
    toggles; an escaped `""` toggles twice), as `csv` reads quoted fields. `lines()` is a generator (what
    `csv` iterates fastest); it ends at `_CsvTooLong`, and the next `lines()` reads on after the record."""

    def __init__(self, f: BinaryIO, max_bytes: int) -> None:
        self._f = f
        self._max = max_bytes
        self._pending: list[bytes] = []  # the rest of a read line cut at its lone \r
        self.line = 0  # lines read
        self._record_bytes = 0
        self._quotes = 0  # quotes read in the current record
        self._record_start = 1
        self._record_raw: list[bytes] = []  # the current record's lines as read (at most `max_bytes`)
        self._first = True

    def new_record(self) -> None:
        self._record_bytes = self._quotes = 0
        self._record_start = self.line + 1
        self._record_raw = []

    def record_text(self) -> str:
        """The lines of the current record read so far, as `lines()` gives them."""
        return b"".join(self._record_raw).decode("utf-8", "surrogateescape")

    def reread_after_first_line(self) -> int:
        """Give the current record's lines after its first back to `lines()`, to be read again as records
        of their own; the number of the last line the record had reached."""
        reached = self.line
        self._pending.extend(reversed(self._record_raw[1:]))
        self.line = self._record_start
        return reached

    def _read(self) -> bytes:
        if self._pending:
            return self._pending.pop()
        raw = self._f.readline(self._max + 1)
        if self._first:
            raw = raw.removeprefix(UTF8_BOM)
            self._first = False
        return self._cut_at_cr(raw) if b"\r" in raw else raw

    def _cut_at_cr(self, raw: bytes) -> bytes:
        if raw.count(b"\r") == raw.count(b"\r\n"):
            return raw
        pieces = _LONE_CR.split(raw)
        self._pending = pieces[:0:-1]
        return pieces[0]

    def lines(self) -> Iterator[str]:
        max_bytes = self._max
        readline = self._f.readline
        while True:
            if self._pending or self._first:
                raw = self._read()
            else:  # _read, inlined: the common case
                raw = readline(max_bytes + 1)
                cr = raw.find(b"\r")
                if cr >= 0 and (raw[cr + 1 : cr + 2] != b"\n" or raw.count(b"\r") > 1):  # not one \r\n
                    raw = self._cut_at_cr(raw)
            if not raw:
                return
            self.line += 1
            self._quotes += raw.count(b'"')
            self._record_bytes += len(raw)
            self._record_raw.append(raw)
            if self._record_bytes > max_bytes:
                self._too_long(raw)
            yield raw.decode("utf-8", "surrogateescape")

    def _too_long(self, raw: bytes) -> None:
        if len(raw) > self._max:  # readline stopped inside the line
            kind, where = RejectKind.LINE_TOO_LONG, f"line {self.line} is over {self._max:,} bytes"
            while not raw.endswith((b"\n", b"\r")) and (raw := self._read()):
                self._quotes += raw.count(b'"')
        else:
            kind, where = (
                RejectKind.RECORD_TOO_LONG,
                f"over {self._max:,} bytes from line {self._record_start}",
            )
        if not self.skip_record():
            where += ", to the end of the file: a quote it opens is never closed"
        limit = f"pages are limited to {MAX_PAGE_BYTES / 1e6:.0f} MB"
        raise _CsvTooLong(kind.reject(f": {where} ({limit}), skipped"))

    def skip_record(self) -> bool:
        """Read on to the end of the current record, unkept; False if the file ends inside it."""
        self._record_raw = []
        ended = True  # called at a line's end
        while self._quotes % 2 or not ended:
            raw = self._read()
            if not raw:
                return False
            if ended:
                self.line += 1
            ended = raw.endswith((b"\n", b"\r"))
            self._quotes += raw.count(b'"')
        return True


_LONE_CR = re.compile(rb"(?<=\r)(?!\n)")


# What Python's csv says, in strict mode only, of a quoted field that is not closed where a field ends:
# a character after its closing quote, or the end of the file inside it.
_STRICT_ONLY_CSV_ERRORS = re.compile(r"expected after|unexpected end of data")


def _csv_records(path: Path, f: BinaryIO, max_line_bytes: int) -> Iterator[RawLine]:
    """The records of a CSV file with a header row, as `csv.DictReader` gives them (the header's names as
    keys), each named by its first line. A record over `max_line_bytes` (see `_CsvLines`) or that `csv`
    cannot read is a `Reject`, and the next record is read from the line after it.

    Quoted fields are read strictly: a quote never closed would otherwise take the rows after it into its
    field (up to the next quote, or to the end of the file) without a word. A record of several lines whose
    quoted field does not close where a field ends is rejected as an unterminated quote, and its lines after
    the first are read again as records. On one line, `"a"b` reads as `ab`, as `csv` reads it leniently."""
    csv.field_size_limit(max(csv.field_size_limit(), max_line_bytes))
    lines = _CsvLines(f, max_line_bytes)
    try:
        fieldnames = csv.DictReader(lines.lines()).fieldnames
    except _CsvTooLong as exc:
        raise NotACrawlDump(f"{path}: a CSV whose header row cannot be read ({exc.args[0].detail})") from None
    except csv.Error as exc:
        raise NotACrawlDump(f"{path}: a CSV whose header row cannot be read ({exc})") from None
    if not fieldnames or "url" not in fieldnames:
        raise NotACrawlDump(f"{path}: a CSV without a 'url' column (columns: {fieldnames})")
    names, n_names = list(fieldnames), len(fieldnames)

    def record(row: list[str]) -> dict[Any, Any]:
        rec: dict[Any, Any] = dict(zip(names, row, strict=False))
        if len(row) != n_names:  # as DictReader: extra cells under None, missing ones None
            if len(row) > n_names:
                rec[None] = row[n_names:]
            else:
                rec.update(dict.fromkeys(names[len(row) :]))
        return rec

    while True:
        lines.new_record()
        start = lines.line + 1
        try:
            for row in csv.reader(lines.lines(), strict=True):
                if row:  # a blank line is no record
                    yield RawLine(start, record(row))
                lines.new_record()
                start = lines.line + 1
            return
        except _CsvTooLong as exc:
            yield RawLine(start, exc.args[0])
        except csv.Error as exc:
            if not _STRICT_ONLY_CSV_ERRORS.search(str(exc)):
                lines.skip_record()
                yield RawLine(start, RejectKind.MALFORMED_CSV.reject(f": {exc}"))
            elif lines.line == start:
                row = next(csv.reader([lines.record_text()]), [])
                if row:
                    yield RawLine(start, record(row))
            else:
                reached = lines.reread_after_first_line()
                yield RawLine(
                    start,
                    RejectKind.MALFORMED_CSV.reject(
                        f": a quote opened on line {start} is not closed where a field ends "
                        f"(read on to line {reached}); the lines after it are read as records"
                    ),
                )
