"""Pairwise precision / recall against a ground truth."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from neardup.evaluate import load_truth, pairwise_scores


def _truth(tmp_path: Path, rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    path = tmp_path / "truth.csv"
    pd.DataFrame(rows, columns=["url", "true_cluster", "kind"]).to_csv(path, index=False)
    return load_truth(path)


def _pages(cluster_ids: list[int | None]) -> pd.DataFrame:
    return pd.DataFrame(
        {"line": range(1, len(cluster_ids) + 1), "cluster_id": pd.array(cluster_ids, dtype="Int64")}
    )


def test_perfect_clustering(tmp_path: Path) -> None:
    truth = _truth(
        tmp_path,
        [
            ("u1", "A", "original"),
            ("u2", "A", "mirror"),
            ("u3", "B", "original"),
            ("u4", "C", "degenerate-soft404"),
        ],
    )
    s = pairwise_scores(_pages([1, 1, 2, None]), truth)
    assert (s.precision, s.recall, s.f1) == (1.0, 1.0, 1.0)
    assert (s.true_pairs, s.predicted_pairs, s.correct_pairs) == (1, 1, 1)
    assert (s.degenerate_caught, s.degenerate_total, s.degenerate_in_clusters) == (1, 1, 0)
    assert s.impure_clusters == 0


def test_merged_and_missed_pairs(tmp_path: Path) -> None:
    # true: {1,2,3} and {4,5}; predicted: {1,2,4} and 3, 5 alone
    truth = _truth(
        tmp_path, [("u1", "A", "o"), ("u2", "A", "m"), ("u3", "A", "m"), ("u4", "B", "o"), ("u5", "B", "m")]
    )
    s = pairwise_scores(_pages([1, 1, 2, 1, 3]), truth)
    assert s.true_pairs == 3 + 1
    assert s.predicted_pairs == 3
    assert s.correct_pairs == 1  # (1, 2)
    assert s.precision == pytest.approx(1 / 3)
    assert s.recall == pytest.approx(1 / 4)
    assert s.f1 == pytest.approx(2 * (1 / 3) * (1 / 4) / (1 / 3 + 1 / 4))
    assert s.impure_clusters == 1


def test_degenerate_page_in_a_cluster_is_a_false_positive(tmp_path: Path) -> None:
    truth = _truth(
        tmp_path, [("u1", "A", "o"), ("u2", "X", "degenerate-soft404"), ("u3", "X", "degenerate-soft404")]
    )
    s = pairwise_scores(_pages([1, 2, 2]), truth)
    assert s.true_pairs == 0
    assert s.predicted_pairs == 1 and s.correct_pairs == 0
    assert s.precision == 0.0
    assert s.degenerate_in_clusters == 2
    assert s.degenerate_caught == 0
    assert set(s.as_dict()) >= {"precision", "recall", "f1"}
