"""What one Audit tab keeps across reruns: its labels (`LabelSession`: saved, waiting, undo), the labels
and undos its keys gave that the next run writes, the pair on screen those keys act on, where it is in its
queue and in its own labeled pairs, the pairs it skipped and the categories it chose.

The page's buttons call its methods (`label`, `undo`, `skip`, `step`, `choose`, `ask_more`); the page's
run writes what they queued (`take_pending`, `save`, `undo_newest`) and draws from the rest. It holds no
widget: what a widget shows (the note, the quota slider) the page sets from `note_reset` and `more`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import pandas as pd

from ..audit import PairKey, label_in, labels_with
from ..config import Config
from ..labels import ADJUDICATOR
from ..markdown import md_escape
from ..store import Store
from ..store.labels import LabelRow
from .data import LabelView, label_view_with
from .labeling import GivenLabel, LabelSession
from .state import OPENED_BY_BACK, OPENED_BY_UNDO

LABEL_NAMES = {"duplicate": "Duplicate", "not": "Not duplicate", "unsure": "Unsure"}


@dataclass(frozen=True, slots=True)
class ShownPair:
    """The pair a run put on screen: its label key, its pages (left, right), the suggested category, and
    whether a label given on it is the adjudicated final one."""

    key: PairKey
    pages: tuple[int, int]
    suggested: str | None
    adjudicate: bool


@dataclass(frozen=True, slots=True)
class PendingLabel:
    """A label key pressed on `pair` at `pressed_at` (the browser's stamp, `ui.label_press`; None: a click,
    given at the time the next run takes it), written by the next run."""

    choice: str
    pair: ShownPair
    pressed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class PendingUndo:
    """The undo key, done by the next run."""


PendingAction = PendingLabel | PendingUndo


@dataclass(slots=True)
class AuditSession:
    """One Audit tab's state (kept in its session under `state.KEY_AUDIT_SESSION`)."""

    labels: LabelSession = field(default_factory=LabelSession)
    pending: list[PendingAction] = field(default_factory=list)  # given by buttons, written by the next run
    # The pair the last run drew: the label and category keys act on it, not on arguments bound when a
    # button was drawn (a run cut short leaves the last run's buttons on screen). None while a pair is read.
    shown: ShownPair | None = None
    skipped: set[tuple[str, ...]] = field(default_factory=set)
    chosen: dict[PairKey, str | None] = field(default_factory=dict)  # pair -> the category chosen for it
    position: int = 0  # in the queue
    back: int = 0  # how many of this tab's labeled pairs `k` went back (0: the queue)
    opened: tuple[int, int] | None = None  # a pair opened out of the queue (pages, in their order)
    opened_by: str | None = None  # what opened it (one of state.OPENED_BY_*), for its caption
    note_reset: bool = False  # the pair was left: its note is to be emptied before the next is drawn
    more: int | None = None  # the quota the "more pairs" key asks for (the page's run sets the slider)
    view: LabelView | None = None  # the labels as of their last version, with this tab's written in

    def label(self, choice: str, pressed_at: datetime | None = None) -> None:
        if self.shown is not None:
            self.pending.append(PendingLabel(choice, self.shown, pressed_at))

    def undo(self) -> None:
        self.pending.append(PendingUndo())

    def take_pending(self) -> list[PendingAction]:
        pending, self.pending = self.pending, []
        return pending

    def skip(self) -> None:
        if self.shown is not None:
            self.skipped.add(self.shown.key)
        self.leave()

    def choose(self, category: str) -> None:
        """Choose `category` for the pair shown; choosing it again takes it back (the suggestion holds)."""
        if self.shown is not None:
            key = self.shown.key
            self.chosen[key] = None if self.chosen.get(key) == category else category

    def category(self, key: PairKey, suggested: str | None) -> str | None:
        return self.chosen.get(key, suggested)

    def open(self, pages: tuple[int, int], opened_by: str | None) -> None:
        self.opened, self.opened_by = pages, opened_by

    def leave(self) -> None:
        """Leave the pair shown for the queue's."""
        self.opened = self.opened_by = None
        self.note_reset = True
        self.back = 0

    def can_step(self, step: int) -> bool:
        """Whether `step` moves through this tab's labeled pairs (k back, j forward again)."""
        return self.back < len(self.labels.given()) if step < 0 else self.back > 0

    def step(self, step: int) -> None:
        """k goes back through the pairs this tab labeled, newest first, j forward again and then on in the
        queue; without labels to go back to they move in the queue."""
        given = self.labels.given()
        back = min(self.back, len(given))
        if (step < 0 and back < len(given)) or (step > 0 and back > 1):
            back -= step
            self.open(given[-back].pages, OPENED_BY_BACK)
            self.note_reset = True
            self.back = back
            return
        if back == 0:
            self.position += step
        self.leave()

    def ask_more(self, quota: int) -> None:
        self.more = quota

    def counter(self, position: int, n_queue: int) -> str:
        """Which pair of how many: this tab's labels and skips count, so the number goes on."""
        done = len(self.labels.given()) + len(self.skipped)
        return f"Pair {done + position + 1} of {done + n_queue}"

    def labels_given(self, pairs: pd.DataFrame) -> pd.DataFrame | None:
        """The labels the kept view holds with the labels waiting in this tab put in (None without a view
        of `pairs`)."""
        if self.view is None or self.view.pairs is not pairs:
            return None
        labels = self.view.labels
        for row in self.labels.rows_waiting():
            labels = labels_with(labels, row)
        return labels

    def give(
        self, action: PendingLabel, *, pairs: pd.DataFrame, labeler: str, note: str, config: Config
    ) -> None:
        """Queue the label `action` gave for writing, as a `Store.labels()` row with what undo puts back,
        and leave its pair."""
        pair = action.pair
        who = ADJUDICATOR if pair.adjudicate else labeler or None
        a, ma, b, mb = pair.key
        row = {
            "url_a": a,
            "md5_a": ma,
            "url_b": b,
            "md5_b": mb,
            "label": action.choice,
            "category": self.category(pair.key, pair.suggested),
            "note": None if self.note_reset else note or None,
            "labeler": who,
            "labeled_at": action.pressed_at or datetime.now(UTC).replace(tzinfo=None),
            "setting": json.dumps(config.to_dict()),
        }
        labels = self.labels_given(pairs)
        self.labels.give(
            GivenLabel(row, pair.pages, label_in(labels, pair.key, who) if labels is not None else None)
        )
        self.leave()

    def undo_newest(self, store: Store) -> str:
        """Undo the newest label of this tab and reopen its pair; what to tell the analyst."""
        undone = self.labels.undo(store)
        if undone.label is None:
            return "Nothing to undo in this session."
        if undone.busy is not None:
            return f"Not undone: the database is busy ({undone.busy}). Press z again once it is free."
        self.open(undone.label.pages, OPENED_BY_UNDO)
        if undone.done:
            return f"Undone: {LABEL_NAMES[undone.label.row['label']].lower()} · the pair is open again"
        return "Not undone: a later label of this pair, given elsewhere, replaced yours; the pair is open"

    def save(self, store: Store) -> tuple[list[str], bool]:
        """Write the labels waiting in this tab: what to tell the analyst, and whether the kept view is
        known current (labels were written, and no other session wrote one since it was read); a current
        view takes the labels written."""
        saved = self.labels.save(store)
        messages = [labeled_message(g) + " · z undoes it" for g in saved.kept]
        messages += [lost_message("Not kept", g, stored) for g, stored in saved.refused]
        view = self.view
        current = saved.versions is not None and view is not None and saved.versions[0] == view.version
        if current and view is not None and saved.versions is not None:
            for given in saved.kept:
                view = label_view_with(view, given.row)
            self.view = replace(view, version=saved.versions[1])
        return messages, current


def labeled_message(given: GivenLabel) -> str:
    row = given.row
    return (
        ("Adjudicated: " if row["labeler"] == ADJUDICATOR else "Labeled ")
        + LABEL_NAMES[row["label"]].lower()
        + (f" · {md_escape(row['category'])}" if row["category"] else "")
    )


def superseded_message(given: GivenLabel, stored: LabelRow) -> str:
    return lost_message("Replaced", given, stored)


def lost_message(what: str, given: GivenLabel, stored: LabelRow | None) -> str:
    """One line: this tab's label of a pair lost to a later label of the same pair and labeler (`stored`;
    None: it was taken back since), given in another tab or window, and which one that is."""
    row = given.row
    mine = (
        f"{what}: your label {LABEL_NAMES[row['label']].lower()} of {md_escape(row['url_a'])} and "
        f"{md_escape(row['url_b'])} (given at {clock_time(row['labeled_at'])})"
    )
    if stored is None:
        return f"{mine}; a later label of this pair was given in another tab or window"
    kept = LABEL_NAMES.get(stored["label"], md_escape(str(stored["label"]))).lower()
    return (
        f"{mine}; a later label of this pair from another tab or window was kept: {kept} "
        f"(given at {clock_time(stored['labeled_at'])})"
    )


def clock_time(at: object) -> str:
    """A label's time (naive UTC) to the millisecond."""
    return pd.Timestamp(at).strftime("%H:%M:%S.%f")[:-3] + " UTC"
