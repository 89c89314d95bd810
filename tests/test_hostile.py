"""Hostile dumps: whatever the records hold, a load finishes, every record is a page or a named reject.

A 10,000-record dump with 1,000 hostile records of over 20 kinds, in every input format, through the CLI;
and random hostile records (hypothesis) through every format's whole path."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup import engine
from neardup.config import Config
from neardup.readers.jsonl import MAX_LINE_BYTES
from neardup.records import MAX_PAGE_BYTES
from neardup.rejects import RejectKind
from neardup.store import Store, kind_of_reason_sql

CONFIG = Config()
ROOT = Path(__file__).resolve().parent.parent
FIELDS = ["url", "html", "text", "fetched_at", "status", "note"]
BIG_INT = "9" * 5000  # over Python's 4,300-digit limit for int()


def _good(i: int) -> dict[str, Any]:
    return {
        "url": f"https://good.example.com/{i}",
        "fetched_at": "2024-05-01T10:00:00Z",
        "status": "200",
        "html": f"<html><title>t{i}</title><body><p>page {i} says {' '.join(f'w{i}x{j}' for j in range(12))}</p>"
        "</body></html>",
        "note": f"n{i}",
    }


def _bad_utf8(text: str) -> str:
    """`text` with a byte that is not UTF-8, as a string that writes back to those bytes (surrogateescape)."""
    return text + b"\xff".decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Kind:
    """A kind of hostile record: the record (a dict for every format, or a raw JSON line), and what must
    become of it: rejected with a reason starting with `reject`, or kept, passing `check` on its page."""

    name: str
    make: Callable[[int], dict[str, Any] | bytes]
    reject: str | tuple[str, ...] | None = None
    check: Callable[[dict[str, Any]], bool] | None = None
    formats: tuple[str, ...] = ("jsonl", "jsonl.gz", "csv", "parquet")
    once: bool = False  # a big record: one in the dump


def _extra(page: dict[str, Any]) -> dict[str, Any]:
    return json.loads(page["extra"]) if isinstance(page["extra"], str) else {}


def _no_time_kept_in_extra(value: str) -> Callable[[dict[str, Any]], bool]:
    return lambda page: pd.isna(page["fetched_at"]) and _extra(page).get("fetched_at") == value


def _no_status_kept_in_extra(value: str) -> Callable[[dict[str, Any]], bool]:
    return lambda page: pd.isna(page["status"]) and _extra(page).get("status") == value


JSON_ONLY = ("jsonl", "jsonl.gz")
KINDS = [
    # rejected, in every format
    Kind("missing url", lambda i: {**_good(i), "url": ""}, reject="missing url"),
    Kind("blank url", lambda i: {**_good(i), "url": " \t "}, reject="missing url"),
    Kind(
        "no html or text", lambda i: {**_good(i), "html": ""}, reject=("empty page", "missing html or text")
    ),
    Kind("blank html", lambda i: {**_good(i), "html": "  \n  "}, reject="empty page"),
    Kind(
        "page too large",
        lambda i: {**_good(i), "html": "<p>" + "x" * (MAX_PAGE_BYTES + 10) + "</p>"},
        reject="page too large",
        once=True,
    ),
    Kind(
        "not UTF-8 in url",
        lambda i: {**_good(i), "url": _bad_utf8(f"https://bad.example.com/{i}")},
        reject="invalid UTF-8",
    ),
    Kind(
        "not UTF-8 in html",
        lambda i: {**_good(i), "html": _bad_utf8(_good(i)["html"])},
        reject="invalid UTF-8",
    ),
    Kind(
        "not UTF-8 in another field", lambda i: {**_good(i), "note": _bad_utf8("n")}, reject="invalid UTF-8"
    ),
    Kind("duplicate record", lambda i: _good(0), reject="duplicate record"),
    # kept, the bad field left empty and its value kept with the other fields
    Kind(
        "fetched_at before year 1 in UTC",
        lambda i: {**_good(i), "fetched_at": "0001-01-01T00:00:00+05:00"},
        check=_no_time_kept_in_extra("0001-01-01T00:00:00+05:00"),
    ),
    Kind(
        "fetched_at after year 9999 in UTC",
        lambda i: {**_good(i), "fetched_at": "9999-12-31T23:59:59-05:00"},
        check=_no_time_kept_in_extra("9999-12-31T23:59:59-05:00"),
    ),
    Kind(
        "fetched_at not a date",
        lambda i: {**_good(i), "fetched_at": "2024-13-45"},
        check=_no_time_kept_in_extra("2024-13-45"),
    ),
    Kind(
        "status of 5,000 digits",
        lambda i: {**_good(i), "status": BIG_INT},
        check=_no_status_kept_in_extra(BIG_INT),
    ),
    Kind("status out of range", lambda i: {**_good(i), "status": "42"}, check=_no_status_kept_in_extra("42")),
    Kind("status not a number", lambda i: {**_good(i), "status": "OK"}, check=_no_status_kept_in_extra("OK")),
    Kind(
        "NUL characters in html",
        lambda i: {**_good(i), "html": _good(i)["html"].replace("<p>", "<p>\0\0")},
        check=lambda page: "\0" in page["html"],
    ),
    Kind(
        "url no parser accepts",
        lambda i: {**_good(i), "url": f"http://[::1/{i}"},
        check=lambda page: page["url"].startswith("http://[::1/"),
    ),
    Kind(
        "no visible text",
        lambda i: {**_good(i), "html": "<html><body><script>var x;</script></body></html>"},
        check=lambda page: isinstance(page["degenerate"], str),
    ),
    Kind(
        "control characters in url",
        lambda i: {**_good(i), "url": f"https://ctl.example.com/\x01\x7f{i}"},
        check=lambda page: "\x01" in page["url"],
    ),
    Kind("status negative", lambda i: {**_good(i), "status": "-1"}, check=_no_status_kept_in_extra("-1")),
    # JSON lines only
    Kind(
        "half a surrogate pair (escaped)",
        lambda i: json.dumps({**_good(i), "html": "<p>\ud800</p>"}).encode(),
        reject="invalid Unicode in field 'html'",
        formats=JSON_ONLY,
    ),
    Kind(
        "malformed JSON",
        lambda i: b'{"url": "https://e.com/cut", "html": "<p>',
        reject="malformed JSON",
        formats=JSON_ONLY,
    ),
    Kind("not an object", lambda i: b"[1, 2, 3]", reject="not a JSON object", formats=JSON_ONLY),
    Kind(
        "nested 1,200 levels",
        lambda i: (
            b'{"url": "https://e.com/deep", "html": "<p>x</p>", "x": ' + b"[" * 1200 + b"]" * 1200 + b"}"
        ),
        reject="JSON nested too deeply",
        formats=JSON_ONLY,
    ),
    Kind(
        "an integer of 5,000 digits",
        lambda i: json.dumps(_good(i))[:-1].encode() + b', "n": ' + BIG_INT.encode() + b"}",
        check=lambda page: _extra(page)["n"] == BIG_INT,
        formats=JSON_ONLY,
    ),
    Kind(
        "fetched_at true",
        lambda i: {**_good(i), "fetched_at": True},
        check=_no_time_kept_in_extra(True),
        formats=JSON_ONLY,
    ),
    Kind(
        "NaN and Infinity",
        lambda i: json.dumps(_good(i))[:-1].encode() + b', "score": NaN, "v": [Infinity]}',
        check=lambda page: _extra(page) == {"note": page["_note"], "score": "nan", "v": ["inf"]},
        formats=JSON_ONLY,
    ),
    Kind(
        "a line of 17 MB",
        lambda i: b'{"url": "https://e.com/long", "html": "' + b"y" * MAX_LINE_BYTES + b'"}',
        reject="line too long",
        formats=JSON_ONLY,
        once=True,
    ),
    # CSV only: rows with more or fewer cells than the header has names
    Kind(
        "more cells than columns",
        lambda i: [*(_good(i).get(f, "") for f in FIELDS), "surplus"],  # type: ignore[misc]
        check=lambda page: _extra(page)["null"] == ["surplus"],
        formats=("csv",),
    ),
    Kind(
        "fewer cells than columns",
        lambda i: [f"https://short.example.com/{i}"],  # type: ignore[misc]
        reject=("empty page", "missing html or text"),
        formats=("csv",),
    ),
]


def _records(fmt: str, n: int = 10_000, every: int = 10) -> tuple[list[Any], dict[int, Kind]]:
    """n records, every `every`-th one hostile (kinds in turn, a big one once); (records, kind per record index)."""
    kinds = [k for k in KINDS if fmt in k.formats]
    small = [k for k in kinds if not k.once]
    recs: list[Any] = []
    hostile: dict[int, Kind] = {}
    big = [k for k in kinds if k.once]
    for i in range(n):
        if i % every == every - 1:
            kind = big.pop() if big else small[len(hostile) % len(small)]
            hostile[i] = kind
            recs.append(kind.make(i))
        else:
            recs.append(_good(i))
    return recs, hostile


def _write(path: Path, fmt: str, recs: list[Any]) -> list[int]:
    """Write `recs` as a `fmt` file; returns the line (or row) number where each record starts."""
    if fmt.startswith("jsonl"):
        with (gzip.open if fmt.endswith(".gz") else open)(path, "wb") as f:
            for r in recs:
                line = (
                    r
                    if isinstance(r, bytes)
                    else json.dumps(r, ensure_ascii=False).encode("utf-8", "surrogateescape")
                )
                f.write(line + b"\n")
        return list(range(1, len(recs) + 1))
    if fmt == "csv":
        with open(path, "w", newline="", encoding="utf-8", errors="surrogateescape") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            for r in recs:
                w.writerow(r if isinstance(r, list) else [r.get(k, "") for k in FIELDS])
        with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
            csv.field_size_limit(1 << 30)
            reader = csv.reader(f)
            starts, start = [], 1
            for _ in reader:
                starts.append(start)
                start = reader.line_num + 1
        return starts[1:]  # after the header
    columns = {
        k: pa.array(
            [None if r.get(k) is None else str(r[k]).encode("utf-8", "surrogateescape") for r in recs],
            pa.binary(),
        ).view(pa.string())
        for k in FIELDS
    }
    pq.write_table(pa.table(columns), path, row_group_size=2000)
    return list(range(1, len(recs) + 1))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "neardup.cli", *args], capture_output=True, text=True, env=env, timeout=600
    )


@pytest.mark.parametrize("fmt", ["jsonl", "jsonl.gz", "csv", "parquet"])
def test_a_hostile_dump_loads_every_good_record_and_names_every_bad_one(tmp_path: Path, fmt: str) -> None:
    recs, hostile = _records(fmt)
    kinds = {k.name for k in KINDS if fmt in k.formats}
    assert len(hostile) == 1000 and len(kinds) >= 20 and set(k.name for k in hostile.values()) == kinds
    path = tmp_path / f"hostile.{fmt}"
    lines = _write(path, fmt, recs)
    db = tmp_path / "h.duckdb"
    run = _cli("ingest", str(path), "--db", str(db), "--jobs", "1")
    assert run.returncode == 0, run.stderr[-2000:]
    with Store(db) as store:
        errors = store.ingest_errors()
        table = store.page_table(CONFIG.norm_key)
        # the columns a kind's check reads, for all pages in one query
        table = table.merge(store.cursor().execute("SELECT page_id, extra FROM pages").df(), on="page_id")
        ids = np.sort(table["page_id"].to_numpy())
        html = [h for t in store.page_records(ids, 256) for h in t["html"].to_pylist()]
        table = table.merge(pd.DataFrame({"page_id": ids, "html": html}), on="page_id")
        sources = store.sources()
        rejected = dict(zip(errors["line"].astype(int), errors["reason"], strict=True))
        assert len(rejected) == len(errors)  # one reason a line
        # each reject is stored with its kind, the words its reason begins with, as an older file's
        # upgrade reads them from its reasons
        assert all(r.startswith(RejectKind(k)) for k, r in zip(errors["kind"], errors["reason"], strict=True))
        mismatched = f"SELECT count(*) FROM ingest_errors WHERE kind <> {kind_of_reason_sql('reason')}"
        assert store.cursor().execute(mismatched).fetchone() == (0,)
        pages = {int(row["line"]): row for row in table.to_dict("records")}
        assert len(pages) == len(table)
        assert len(pages) + len(errors) == len(recs)
        assert sources[["n_records", "n_loaded", "n_errors"]].iloc[0].tolist() == [
            len(recs),
            len(pages),
            len(errors),
        ]
        for i in range(len(recs)):
            line, kind = lines[i], hostile.get(i)
            if kind is None or kind.check is not None:
                assert line in pages, (line, kind and kind.name, rejected.get(line))
                if kind is not None:
                    page = {**pages[line], "_note": f"n{i}"}
                    assert kind.check(page), (kind.name, page["fetched_at"], page["status"], page["extra"])
            else:
                assert line in rejected, (line, kind.name)
                assert rejected[line].startswith(kind.reject), (kind.name, rejected[line])
    again = _cli("ingest", str(path), "--db", str(db))
    assert again.returncode == 0 and "already loaded" in again.stdout
    with Store(db) as store:
        assert store.count_pages() == len(pages) and len(store.ingest_errors()) == len(errors)


# --- random hostile records through each format's whole path ----------------------------------------
def _hostile_text(max_size: int) -> st.SearchStrategy[str]:
    return st.text(st.sampled_from("a <&\u00e9\ud800\udfff\0\n\r\"',") | st.characters(), max_size=max_size)


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | _hostile_text(8)
    | st.sampled_from([BIG_INT, "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_hostile_text(5), inner, max_size=3),
    max_leaves=8,
)
_RECORDS = st.fixed_dictionaries(
    {
        "url": st.one_of(_hostile_text(30), st.just("https://e.com/"), st.none()),
        "html": st.one_of(_hostile_text(60).map(lambda t: f"<p>{t}</p>"), st.just(""), st.none()),
        "fetched_at": _JSON_VALUES,
        "status": _JSON_VALUES,
        "note": _JSON_VALUES,
    },
)
_RAW_LINES = st.one_of(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ")),
    st.integers(min_value=1, max_value=3000).map(lambda d: b"[" * d + b"]" * d),
    st.just(BIG_INT.encode()),
    st.just(b'{"url": "https://e.com/n", "html": "<p>x</p>", "n": -' + BIG_INT.encode() + b"}"),
)


def _json_line(rec: dict[str, Any]) -> bytes:
    return json.dumps(rec, default=str).encode("utf-8")  # ASCII: a lone surrogate passes as an escape


def _cell(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, default=str)


def _write_any(path: Path, fmt: str, recs: list[dict[str, Any] | bytes]) -> int:
    """`recs` as a `fmt` file (raw lines only in JSON lines); returns how many records the file holds."""
    if fmt.startswith("jsonl"):
        body = b"".join((r if isinstance(r, bytes) else _json_line(r)) + b"\n" for r in recs)
        path.write_bytes(gzip.compress(body) if fmt.endswith(".gz") else body)
        return sum(1 for line in body.split(b"\n") if line.strip())
    rows = [r for r in recs if isinstance(r, dict)]
    if fmt == "csv":
        with open(path, "w", newline="", encoding="utf-8", errors="surrogatepass") as f:
            w = csv.writer(f)
            w.writerow(FIELDS[:2] + FIELDS[3:])
            for r in rows:
                w.writerow([_cell(r[k]) for k in ("url", "html", "fetched_at", "status", "note")])
        with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
            return sum(1 for _ in csv.DictReader(f))  # a record may span lines
    columns = {
        k: pa.array(
            [None if r[k] is None else _cell(r[k]).encode("utf-8", "surrogatepass") for r in rows],
            pa.binary(),
        ).view(pa.string())
        for k in ("url", "html", "fetched_at", "status", "note")
    }
    pq.write_table(pa.table(columns), path)
    return len(rows)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recs=st.lists(st.one_of(_RECORDS, _RAW_LINES), min_size=1, max_size=8))
def test_random_hostile_records_never_stop_a_load(
    tmp_path_factory: pytest.TempPathFactory, recs: list[dict[str, Any] | bytes]
) -> None:
    # One good record first (its own per format: the formats load into one database, where a repeat is a
    # duplicate): a file with no usable record at all is refused as a whole (NotACrawlDump).
    tmp = tmp_path_factory.mktemp("hostile")
    with Store(tmp / "h.duckdb") as store:
        pages = errors = 0
        for fmt in ("jsonl", "jsonl.gz", "csv", "parquet"):
            path = tmp / f"d.{fmt}"
            good = {
                "url": f"https://good.example.com/{fmt}",
                "html": "<p>a good page</p>",
                "fetched_at": None,
                "status": None,
                "note": None,
            }
            n = _write_any(path, fmt, [good, *recs])
            s = engine.ingest_file(store, path, CONFIG, jobs=1)
            assert s.loaded + s.errors == s.records == n, fmt
            pages, errors = pages + s.loaded, errors + s.errors
            assert (store.count_pages(), len(store.ingest_errors())) == (pages, errors)
