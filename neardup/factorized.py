"""Codes numbered in order of first appearance, as `pd.factorize` numbers them (0, 1, ... each first seen
after the ones before it)."""

from __future__ import annotations

import numpy as np


def first_rows(codes: np.ndarray) -> np.ndarray:
    """The row where each code 0..n-1 of `codes` first appears, in code order: a row whose code is above
    every code before it."""
    if not len(codes):
        return np.empty(0, dtype=np.int64)
    seen = np.maximum.accumulate(codes)
    return np.flatnonzero(codes > np.concatenate(([-1], seen[:-1])))
