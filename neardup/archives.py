"""What the ARC and WACZ readers (`arc.py`, `wacz.py`) share with the WARC reader: a record of theirs is a
`warc.WarcCapture` (the same HTTP parsing, Content-Encoding and charset decoding in the workers) with the
fields of the archive it came in added to its page's `extra`; and one line for a person that says where
a page's record is, whichever archive it came from.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .rejects import Reject
from .warc import WarcCapture, describe_record

if TYPE_CHECKING:
    from .ingest import RawLine


@dataclass(frozen=True, slots=True)
class ArchiveCapture:
    """A `WarcCapture` read from an ARC file or from a WARC inside a WACZ: `record()` is the capture's,
    with `fields` added to the page (`archive_format`, the WACZ member, `wacz_page`, ...) and the
    capture's fields named in `drop` left out (an ARC record has no WARC-Record-ID)."""

    capture: WarcCapture
    fields: tuple[tuple[str, Any], ...] = ()
    drop: tuple[str, ...] = ()

    def record(self) -> dict[str, Any] | Reject:
        rec = self.capture.record()
        if isinstance(rec, Reject):
            return rec
        for key in self.drop:
            rec.pop(key, None)
        rec.update(self.fields)
        return rec


class ArchiveBatches:
    """An archive's records in batches for the workers: `_items()` in file order, numbered from 1 (a page or
    a named error each), `batch_records` to a list."""

    batch_records: int

    def _items(self) -> Iterator[ArchiveCapture | Reject]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[list[RawLine]]:
        from .ingest import RawLine

        batch: list[RawLine] = []
        for number, item in enumerate(self._items(), start=1):
            batch.append(RawLine(number, item))
            if len(batch) >= self.batch_records:
                yield batch
                batch = []
        if batch:
            yield batch

    def records(self) -> Iterator[RawLine]:
        for batch in self:
            yield from batch


def describe_archive_record(extra: str | dict[str, Any] | None) -> str | None:
    """Where a page's record is in its archive, for a person: a WARC record as `warc.describe_record`
    says it; an ARC record by file, ARC version and byte offset; a WARC record in a WACZ with the WACZ
    file and member first, and whether the WACZ's pages list names the page. None for a page that did
    not come from an archive."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except ValueError:
            return None
    if not isinstance(extra, dict):
        return None
    fmt = extra.get("archive_format")
    if fmt == "arc":
        parts = [f"{extra.get('warc_file')} (ARC version {extra.get('arc_version')})"]
        if isinstance(extra.get("warc_offset"), int):
            where = (
                "" if extra.get("warc_offset_in", "file") == "file" else f" in the {extra['warc_offset_in']}"
            )
            parts.append(f"byte offset {extra['warc_offset']:,}{where}")
        if extra.get("charset"):
            parts.append(f"charset {extra['charset']} ({extra.get('charset_source')})")
        return " · ".join(parts)
    inner = describe_record(extra)
    if fmt != "wacz" or inner is None:
        return inner
    if extra.get("wacz_page") is True:
        listed = "in the WACZ's pages list (a page the crawler was asked for)"
    elif extra.get("wacz_extra_page") is True:
        listed = "in the WACZ's extra pages list (found by the crawler)"
    else:
        listed = "not in the WACZ's pages lists"
    return f"{extra.get('wacz_file')} · {extra.get('wacz_member')} · {listed} · {inner}"
