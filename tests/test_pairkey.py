"""pairkey: one key per pair of pages whichever side comes first, the same order in Python, numpy and SQL."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.pairkey import (
    LABEL_COLUMNS,
    PAIR_KEY,
    SIDES_SWAPPED_SQL,
    PairKey,
    key_of,
    pair_key,
    sides_swapped,
)
from neardup.store import Store

# URLs and MD5s that often tie, with non-ASCII text (the orders must agree beyond ASCII)
urls = st.sampled_from(
    ["https://a.example/", "https://b.example/", "https://é.example/", "https://a.example/x"]
)
md5s = st.sampled_from(["", "0" * 32, "f" * 32, "9e107d9d372bb6826bd81d3542a419d6"]) | st.text(max_size=3)
sides = st.tuples(urls, md5s)


def test_a_pair_has_one_key_whichever_side_comes_first() -> None:
    a, b = ("https://b.example/", "f" * 32), ("https://a.example/", "0" * 32)
    key = pair_key(*a, *b)
    assert key == pair_key(*b, *a) == PairKey("https://a.example/", "0" * 32, "https://b.example/", "f" * 32)
    assert key.url_a == "https://a.example/" and key.md5_b == "f" * 32


def test_one_url_orders_by_md5_and_a_missing_md5_is_empty() -> None:
    assert pair_key("https://a.example/", "f" * 32, "https://a.example/", None) == (
        "https://a.example/",
        "",
        "https://a.example/",
        "f" * 32,
    )


def test_a_key_is_the_row_of_its_values() -> None:
    # frames give keys as plain tuples (itertuples(name=None)); a PairKey finds them in a set or dict
    row = {"url_a": "https://a.example/", "md5_a": "", "url_b": "https://b.example/", "md5_b": ""}
    plain = tuple(row[c] for c in PAIR_KEY)
    assert key_of(row) == plain and hash(key_of(row)) == hash(plain)
    assert key_of(row) in {plain} and {plain: 1}[key_of(row)] == 1


def test_the_key_columns_begin_the_label_columns_of_the_labels_table(tmp_path: Path) -> None:
    assert PAIR_KEY == list(PairKey._fields) == list(LABEL_COLUMNS[:4])
    with Store(tmp_path / "labels.duckdb") as store:
        columns = [
            c
            for (c,) in store.cursor()
            .execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'labels' "
                "ORDER BY ordinal_position"
            )
            .fetchall()
        ]
    assert tuple(columns) == LABEL_COLUMNS


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(sides, sides), min_size=1, max_size=20))
def test_numpy_and_sql_order_sides_as_pair_key_does(
    pairs: list[tuple[tuple[str, str], tuple[str, str]]],
) -> None:
    expected = [pair_key(*a, *b) != (*a, *b) for a, b in pairs]
    columns = [np.array(values, dtype=object) for values in zip(*((*a, *b) for a, b in pairs), strict=True)]
    assert sides_swapped(*columns).tolist() == expected
    assert sides_swapped(*(pd.array(c, dtype="str") for c in columns)).tolist() == expected  # in Arrow
    con = duckdb.connect()
    con.execute("CREATE TABLE t (i INTEGER, url_a VARCHAR, md5_a VARCHAR, url_b VARCHAR, md5_b VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [[i, *a, *b] for i, (a, b) in enumerate(pairs)])
    got = [bool(s) for (s,) in con.execute(f"SELECT {SIDES_SWAPPED_SQL} FROM t ORDER BY i").fetchall()]
    con.close()
    assert got == expected


@pytest.mark.parametrize("swapped", [False, True])
def test_the_store_keeps_a_label_under_its_key(tmp_path: Path, swapped: bool) -> None:
    a, b = ("https://b.example/", "f" * 32), ("https://a.example/", "0" * 32)
    first, second = (b, a) if swapped else (a, b)
    with Store(tmp_path / f"l{swapped}.duckdb") as store:
        store.record_label(first[0], second[0], md5_a=first[1], md5_b=second[1], label="duplicate")
        row = store.labels().iloc[0]
        assert key_of(row) == tuple(row[PAIR_KEY]) == pair_key(*a, *b)
        assert store.label_of(a[0], b[0], md5_a=a[1], md5_b=b[1]) is not None
