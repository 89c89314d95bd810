"""The Audit tab's labels and choices (neardup.ui.labeling), against a real store."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from neardup.queues import AuditQueue
from neardup.store import Store
from neardup.ui.labeling import (
    GivenLabel,
    LabelingChoice,
    LabelSession,
    choice_from_params,
    fetch_sides,
    score_text,
)

T0 = datetime(2026, 1, 1, 12)
DEFAULT = LabelingChoice("", 5, AuditQueue.QUOTA)


def given(label: str, at: datetime, labeler: str | None = None) -> GivenLabel:
    row = {"url_a": "https://a/", "md5_a": "1", "url_b": "https://b/", "md5_b": "2", "label": label}
    row |= {"category": None, "note": None, "labeler": labeler, "labeled_at": at, "setting": None}
    return GivenLabel(row, (1, 2), None)


def test_a_session_keeps_labels_waiting_while_another_process_writes(tmp_path: Path) -> None:
    with Store(tmp_path / "l.duckdb"):
        pass
    session = LabelSession()
    app = Store(tmp_path / "l.duckdb", on_demand=True, lock_wait_s=0.1, linger_s=0.0)
    session.give(given("duplicate", T0))
    # another process holds the file read-write, as `neardup ingest` does
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, duckdb; c = duckdb.connect(sys.argv[1]); print(1, flush=True); sys.stdin.read()",
            str(tmp_path / "l.duckdb"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
    saved = session.save(app)
    assert saved.busy is not None and len(session.waiting) == 1 and not saved.kept
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait(timeout=30)
    saved = session.save(app)
    assert saved.busy is None and len(saved.kept) == 1 and not session.waiting
    assert app.labels()["label"].tolist() == ["duplicate"]


def test_superseded_labels_are_told_once_and_leave_undo(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb", on_demand=True)
    session = LabelSession()
    session.give(given("duplicate", T0))
    assert len(session.save(store).kept) == 1
    store.write_labels([given("not", T0 + timedelta(seconds=1)).row])  # another tab, later
    ((replaced, stored),) = session.superseded(store.labels())
    assert replaced.row["label"] == "duplicate" and stored["label"] == "not"
    assert session.superseded(store.labels()) == [] and session.undo(store).label is None


def test_the_choices_from_a_link_are_checked() -> None:
    got = choice_from_params(
        {"labeler": "ana", "per_bucket": "12", "queue": "active"}, DEFAULT, per_bucket_max=30
    )
    assert got == LabelingChoice("ana", 12, AuditQueue.ACTIVE)
    assert got.params() == {"labeler": "ana", "per_bucket": "12", "queue": "active"}
    bad = choice_from_params(
        {"per_bucket": "1e9", "queue": "<script>", "labeler": "x" * 500}, DEFAULT, per_bucket_max=30
    )
    assert (len(bad.labeler), bad.per_bucket, bad.queue) == (100, 5, AuditQueue.QUOTA)


@pytest.mark.parametrize(
    ("left", "right", "sides"),
    [
        ("2026-03-20", "2026-03-15", ("later fetch", "earlier fetch")),
        ("2026-03-15", "2026-03-20", ("earlier fetch", "later fetch")),
        ("2026-03-15", "2026-03-15", ("same fetch time", "same fetch time")),
        (None, "2026-03-15", ("fetch time unknown", "fetched")),
    ],
)
def test_fetch_sides_follow_the_times_not_the_sides(
    left: str | None, right: str, sides: tuple[str, str]
) -> None:
    assert fetch_sides(pd.Timestamp(left) if left else pd.NaT, pd.Timestamp(right)) == sides


def test_scores_never_read_the_bucket_edge_above_them() -> None:
    assert [score_text(s) for s in (0.7996, 0.8, 0.999, 1.0, 0.0)] == ["0.79", "0.80", "0.99", "1.00", "0.00"]
