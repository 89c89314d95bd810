"""A batch of web archive records for a worker pool with their blocks in shared memory
(`parallel.SharedSlots`): the blocks (HTTP header and payload, ~all of a batch's bytes) are copied once
into a slot, and what crosses the pool's pipe is each record's other fields as a plain tuple.

Pickled whole, a batch of 256 WARC records (4 MB) is written to the pipe in 64 KB pieces and read back
in the worker, and every `WarcCapture` goes through the dataclass's Python `__getstate__` /
`__setstate__`: ~45 CPU-ms of the main process for the 3,000 pages of the bundled sample, as much again
in the workers (bench/RESULTS.md). A revisit's record (`WarcCapture.original`) and a stored page go in the
tuple, pickled: they are few.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from ..parallel import SharedSlots, SlotRef, shared_view
from ..records import RawLine
from .capture import ArchiveCapture, WarcCapture

_NAMES = [f.name for f in fields(WarcCapture)]
_BLOCK = _NAMES.index("block")
# A capture's fields but its block, in one C call (`WarcCapture(*before, block, *after)` makes it again).
_OTHER_FIELDS = attrgetter(*(n for n in _NAMES if n != "block"))

# A record of the batch: (line, the capture's other fields) for a `WarcCapture`; (line, its capture's
# other fields, fields, drop) for an `ArchiveCapture`; anything else (a `Reject`) as the `RawLine` it is.
_Row = tuple[int, tuple[Any, ...]] | tuple[int, tuple[Any, ...], Any, Any] | RawLine


@dataclass(frozen=True, slots=True)
class SharedCaptures:
    """The records of an archive's batch, their blocks in a slot one after the other in record order (a
    row with a capture takes the next `sizes` entry). Iterated in a worker: the batch's `RawLine`s as the
    reader gave them, each block a view of the slot, not a copy: valid until the batch's result is back
    (the slot is then reused), which is as long as a worker decodes the batch's records."""

    rows: list[_Row]
    sizes: list[int]
    slot: SlotRef

    def __iter__(self) -> Iterator[RawLine]:
        view = memoryview(shared_view(self.slot))
        at = 0
        sizes = iter(self.sizes)
        for row in self.rows:
            if isinstance(row, RawLine):
                yield row
                continue
            end = at + next(sizes)
            others = row[1]
            # positional, in field order (mypy cannot count the fields in a tuple of Any)
            capture = WarcCapture(*others[:_BLOCK], view[at:end], *others[_BLOCK:])  # type: ignore[call-arg]
            at = end
            yield RawLine(row[0], capture if len(row) == 2 else ArchiveCapture(capture, row[2], row[3]))


def shared_captures(batch: list[RawLine], slots: SharedSlots) -> list[RawLine] | SharedCaptures:
    """`batch` with its captures' blocks in `slots` (a batch without a capture goes as it is)."""
    rows: list[_Row] = []
    blocks: list[bytes | memoryview] = []
    for raw in batch:
        payload = raw.payload
        if type(payload) is WarcCapture:
            rows.append((raw.line, _OTHER_FIELDS(payload)))
            blocks.append(payload.block)
        elif type(payload) is ArchiveCapture:
            rows.append((raw.line, _OTHER_FIELDS(payload.capture), payload.fields, payload.drop))
            blocks.append(payload.capture.block)
        else:
            rows.append(raw)
    if not blocks:
        slots.skip()
        return batch
    return SharedCaptures(rows, [len(b) for b in blocks], slots.share_parts(blocks))
