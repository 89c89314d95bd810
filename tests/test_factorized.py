"""`factorized.first_rows`: the row each code of a factorization first appears at."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from neardup.factorized import first_rows


@given(st.lists(st.integers(-3, 5), max_size=60))
def test_each_codes_first_row_in_code_order(values: list[int]) -> None:
    codes = pd.factorize(np.asarray(values, dtype=np.int64))[0]
    rows = first_rows(codes)
    assert rows.tolist() == np.flatnonzero(~pd.Series(values, dtype="int64").duplicated().to_numpy()).tolist()
    assert codes[rows].tolist() == list(range(len(rows)))


def test_no_codes_no_rows() -> None:
    assert first_rows(np.empty(0, dtype=np.int64)).dtype == np.int64
    assert len(first_rows(np.empty(0, dtype=np.int64))) == 0
