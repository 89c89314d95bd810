"""The labels one Audit tab gives: written before they are confirmed, queued while the file is busy, undone
only while they are still the stored ones.

A label is written (and committed) before the page says "Labeled" or draws the next pair: a server killed
after the confirmation keeps it. While another process holds the database (a `neardup ingest`), labels wait
here, in the tab's session, and are written when it frees; the page says how many wait. Two tabs of one
labeler that label one pair keep the label given later (`Store.write_labels` compares the times: a label
key's press time, `ui.label_press`); a tab whose label arrives after a later one is told at once (`Saved.refused`),
one whose label was replaced on its next run (`superseded`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from ..audit import label_in
from ..errors import DatabaseLocked
from ..markdown import score_text as score_text
from ..pairkey import PairKey, key_of
from ..queues import AuditQueue
from ..store import Store
from ..store.labels import LabelRow


@dataclass(frozen=True, slots=True)
class GivenLabel:
    """A label this tab gave: the `Store.labels()` row, the pages it was given on (what undo reopens) and
    the label of the pair it replaced (what undo puts back; None: there was none)."""

    row: dict[str, Any]
    pages: tuple[int, int]
    previous: LabelRow | None

    @property
    def key(self) -> PairKey:
        return key_of(self.row)

    @property
    def labeler(self) -> str | None:
        labeler: str | None = self.row["labeler"]
        return labeler

    @property
    def given_at(self) -> datetime:
        given: datetime = self.row["labeled_at"]
        return given


@dataclass(frozen=True, slots=True)
class Saved:
    """What one `LabelSession.save` did: the labels written and kept, the ones a later label of the same
    pair and labeler kept out (each with that label as stored after the write), the labels' versions around
    the write (None: nothing was written), and the reason the file could not be written (None: it was)."""

    kept: list[GivenLabel] = field(default_factory=list)
    refused: list[tuple[GivenLabel, LabelRow | None]] = field(default_factory=list)
    versions: tuple[tuple[int, int], tuple[int, int]] | None = None
    busy: str | None = None


@dataclass(frozen=True, slots=True)
class Undone:
    """What one `LabelSession.undo` did (`label` None: nothing to undo) and whether it reached the store."""

    label: GivenLabel | None
    done: bool
    busy: str | None = None


@dataclass(slots=True)
class LabelSession:
    """One tab's labels: `saved` (written and kept, newest last: what undo takes back) and `waiting`
    (given while the file was busy, oldest first)."""

    saved: list[GivenLabel] = field(default_factory=list)
    waiting: list[GivenLabel] = field(default_factory=list)
    busy: str | None = None  # why the last write could not reach the file; None after one that did

    def give(self, label: GivenLabel) -> None:
        self.waiting.append(label)

    def save(self, store: Store) -> Saved:
        """Write the waiting labels in one transaction. DatabaseLocked (another process holds the file)
        keeps them waiting; any other error propagates with them still waiting."""
        if not self.waiting:
            return Saved()
        try:
            with store.writing():
                before = store.labels_version()
                kept = store.write_labels([given.row for given in self.waiting])
                after = store.labels_version()
                refused = [
                    (given, _stored(store, given))
                    for given, ok in zip(self.waiting, kept, strict=True)
                    if not ok
                ]
        except DatabaseLocked as exc:
            self.busy = str(exc)
            return Saved(busy=self.busy)
        written, self.waiting, self.busy = self.waiting, [], None
        done = [given for given, ok in zip(written, kept, strict=True) if ok]
        self.saved.extend(done)
        return Saved(kept=done, refused=refused, versions=(before, after))

    def undo(self, store: Store) -> Undone:
        """Take back the newest label: a waiting one is dropped; a saved one is put back to the label it
        replaced, unless a later label (another tab) replaced it since (then nothing changes)."""
        if self.waiting:
            return Undone(self.waiting.pop(), True)
        if not self.saved:
            return Undone(None, False)
        given = self.saved.pop()
        a, ma, b, mb = given.key
        try:
            done = store.take_back_label(
                a,
                b,
                md5_a=ma,
                md5_b=mb,
                labeler=given.labeler,
                given_at=given.given_at,
                previous=given.previous,
            )
        except DatabaseLocked as exc:
            self.saved.append(given)
            return Undone(given, False, busy=str(exc))
        return Undone(given, done)

    def superseded(self, labels: pd.DataFrame) -> list[tuple[GivenLabel, LabelRow]]:
        """The saved labels that `labels` (`Store.labels()`, read after them) holds a later label of the same
        pair and labeler in place of, each with that label; they are no longer this tab's to undo."""
        out, still = [], []
        for given in self.saved:
            stored = label_in(labels, given.key, given.labeler)
            if stored is not None and pd.Timestamp(stored["labeled_at"]) > pd.Timestamp(given.given_at):
                out.append((given, stored))
            else:
                still.append(given)
        self.saved = still
        return out

    def rows_waiting(self) -> list[dict[str, Any]]:
        return [given.row for given in self.waiting]

    def given(self) -> list[GivenLabel]:
        """Every label this tab gave and still holds, oldest first (what `k` goes back through)."""
        return [*self.saved, *self.waiting]


def _stored(store: Store, given: GivenLabel) -> LabelRow | None:
    """The label of `given`'s pair and labeler the store holds."""
    a, ma, b, mb = given.key
    return store.label_of(a, b, md5_a=ma, md5_b=mb, labeler=given.labeler)


# The Audit page's labeling choices in its URL (?labeler=ana&per_bucket=10&queue=active): a reload or a
# shared link keeps who labels, the quota and the queue (by `AuditQueue`'s value).
LABELER_MAX_CHARS = 100


@dataclass(frozen=True, slots=True)
class LabelingChoice:
    """Who labels, the pairs per bucket and the queue."""

    labeler: str
    per_bucket: int
    queue: AuditQueue

    def params(self) -> dict[str, str]:
        return {"labeler": self.labeler, "per_bucket": str(self.per_bucket), "queue": self.queue.value}


def choice_from_params(
    params: Mapping[str, str], default: LabelingChoice, *, per_bucket_max: int
) -> LabelingChoice:
    """`default` with what the URL's parameters name; a bad or missing value keeps the default's."""
    labeler = params.get("labeler", default.labeler)[:LABELER_MAX_CHARS]
    try:
        per_bucket = int(params.get("per_bucket", ""))
    except ValueError:
        per_bucket = default.per_bucket
    if not 1 <= per_bucket <= per_bucket_max:
        per_bucket = default.per_bucket
    try:
        queue = AuditQueue(params.get("queue", ""))
    except ValueError:
        queue = default.queue
    return LabelingChoice(labeler, per_bucket, queue)


def fetch_sides(left_fetched: Any, right_fetched: Any) -> tuple[str, str]:
    """The two pages' captions by their fetch times, whichever side each is on."""
    missing = [v is None or bool(pd.isna(v)) for v in (left_fetched, right_fetched)]
    if any(missing):
        return tuple("fetch time unknown" if m else "fetched" for m in missing)  # type: ignore[return-value]
    left, right = pd.Timestamp(left_fetched), pd.Timestamp(right_fetched)
    if left == right:
        return "same fetch time", "same fetch time"
    return ("earlier fetch", "later fetch") if left < right else ("later fetch", "earlier fetch")
