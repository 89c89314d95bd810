"""One Audit tab's state without the page: the keys' actions queue for the next run, act on the pair on
screen, and move through the queue and this tab's labeled pairs; labels are written to a real store and
undone there."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd

from neardup import audit
from neardup.config import Config
from neardup.labels import ADJUDICATOR
from neardup.markdown import md_escape
from neardup.store import Store
from neardup.ui.audit_session import AuditSession, PendingLabel, PendingUndo, ShownPair
from neardup.ui.data import label_view
from neardup.ui.state import OPENED_BY_BACK, OPENED_BY_UNDO

PAIRS = pd.DataFrame(
    [
        ("https://a/", "1", "https://b/", "2", 0.95, 0.97, 1, 2),
        ("https://c/", "3", "https://d/", "4", 0.85, 0.86, 3, 4),
        ("https://e/", "5", "https://f/", "6", 0.8, 0.81, 5, 6),
    ],
    columns=[*audit.PAIR_KEY, "bucket", "score", "page_a", "page_b"],
)
CONFIG = Config()


def shown(i: int, *, adjudicate: bool = False) -> ShownPair:
    row = PAIRS.iloc[i]
    return ShownPair(
        tuple(row[audit.PAIR_KEY]), (int(row["page_a"]), int(row["page_b"])), "print version", adjudicate
    )


def label_on(session: AuditSession, i: int, choice: str, **kw: object) -> None:
    """A label key pressed on pair `i`, and the next run's write of it."""
    session.shown = shown(i, **kw)  # type: ignore[arg-type]
    session.label(choice)
    for action in session.take_pending():
        assert isinstance(action, PendingLabel)
        session.give(action, pairs=PAIRS, labeler="ana", note="", config=CONFIG)


def test_keys_act_on_the_pair_shown_and_wait_for_the_next_run() -> None:
    session = AuditSession()
    session.label("duplicate")  # no pair on screen (one is being read): nothing
    session.skip()
    assert session.pending == [] and session.skipped == set()
    session.shown = shown(0)
    session.label("not")
    session.undo()
    assert session.take_pending() == [PendingLabel("not", shown(0)), PendingUndo()]
    assert session.take_pending() == []
    session.choose("syndicated")
    assert session.category(shown(0).key, "print version") == "syndicated"
    session.choose("syndicated")  # chosen again: taken back, the suggestion holds
    assert session.category(shown(0).key, "print version") is None
    session.skip()
    assert session.skipped == {shown(0).key} and session.note_reset


def test_a_label_is_the_stored_row_with_the_note_of_its_pair_only() -> None:
    session = AuditSession()
    session.shown = shown(0)
    session.label("duplicate")
    session.shown = shown(1, adjudicate=True)
    session.label("not")
    first, second = session.take_pending()
    assert isinstance(first, PendingLabel) and isinstance(second, PendingLabel)
    session.give(first, pairs=PAIRS, labeler="ana", note="same story", config=CONFIG)
    session.give(second, pairs=PAIRS, labeler="ana", note="same story", config=CONFIG)
    a, b = session.labels.rows_waiting()
    assert (a["url_a"], a["label"], a["labeler"], a["note"], a["category"]) == (
        "https://a/",
        "duplicate",
        "ana",
        "same story",
        "print version",
    )
    assert (b["labeler"], b["note"]) == (ADJUDICATOR, None)  # the note went with the pair it was typed on


def test_undo_puts_the_stored_label_back_and_reopens_its_pair(tmp_path: Path) -> None:
    store = Store(tmp_path / "u.duckdb", on_demand=True)
    session = AuditSession()
    session.view = label_view(store, PAIRS, None)
    label_on(session, 0, "duplicate")
    messages, current = session.save(store)
    assert messages == ["Labeled duplicate · print version · z undoes it"] and current
    assert session.view is not None and session.view.labels["label"].tolist() == ["duplicate"]
    assert store.labels()["label"].tolist() == ["duplicate"]
    assert session.undo_newest(store) == "Undone: duplicate · the pair is open again"
    assert store.labels().empty
    assert (session.opened, session.opened_by) == (shown(0).pages, OPENED_BY_UNDO)
    assert session.undo_newest(store) == "Nothing to undo in this session."


def test_k_and_j_go_through_this_tabs_labeled_pairs_then_on_in_the_queue() -> None:
    session = AuditSession()
    assert not session.can_step(-1) and not session.can_step(1)
    session.step(1)  # no labels: on in the queue
    assert session.position == 1 and session.opened is None
    for i in (0, 1, 2):
        label_on(session, i, "not")
    assert session.counter(0, 7) == "Pair 4 of 10"  # three labels given: the count goes on
    session.step(-1)
    assert (session.opened, session.opened_by, session.back) == (shown(2).pages, OPENED_BY_BACK, 1)
    session.step(-1)
    assert session.opened == shown(1).pages and session.can_step(1)
    session.step(1)
    assert session.opened == shown(2).pages
    session.step(1)  # past the newest: back to the queue, where it was
    assert (session.opened, session.back, session.position) == (None, 0, 1)
    session.ask_more(10)
    assert session.more == 10


def test_two_tabs_keep_the_label_pressed_later_whichever_write_arrives_first(tmp_path: Path) -> None:
    """One labeler, two tabs, one pair: the write of the key pressed later reaches the store first; the label
    kept is still the later press, and the tab whose label lost says which label was kept."""
    store = Store(tmp_path / "t.duckdb", on_demand=True)
    early, late = AuditSession(), AuditSession()
    pressed = datetime(2026, 12, 6, 10, 0, 0, 120_000)
    for session, choice, at in (
        (early, "duplicate", pressed),
        (late, "not", pressed + timedelta(milliseconds=30)),
    ):
        session.shown = shown(0)
        session.label(choice, pressed_at=at)
        for action in session.take_pending():
            assert isinstance(action, PendingLabel)
            session.give(action, pairs=PAIRS, labeler="ana", note="", config=CONFIG)
    assert late.save(store)[0] == ["Labeled not duplicate · print version · z undoes it"]
    (told,), _ = early.save(store)
    assert store.labels()["label"].tolist() == ["not"]
    assert store.labels()["labeled_at"].tolist() == [pd.Timestamp(pressed + timedelta(milliseconds=30))]
    assert told == (
        f"Not kept: your label duplicate of {md_escape('https://a/')} and {md_escape('https://b/')} "
        "(given at 10:00:00.120 UTC); "
        "a later label of this pair from another tab or window was kept: not duplicate "
        "(given at 10:00:00.150 UTC)"
    )
    assert early.undo_newest(store) == "Nothing to undo in this session."
