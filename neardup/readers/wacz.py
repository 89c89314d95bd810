"""WACZ files (Webrecorder's packaging of a crawl: ArchiveWeb.page, Browsertrix, py-wacz) -> the records
the rest of ingest reads.

A WACZ is a ZIP holding the crawl's WARC files under `archive/`, its pages list `pages/pages.jsonl`
(the pages the crawler was asked for or the user visited; Browsertrix puts the pages it found on its
own in `pages/extraPages.jsonl`), CDX indexes and `datapackage.json`. Early WACZ files keep all of it
under `data/`. Each WARC member is read by the WARC reader (`warc.WarcBatches`), one after the other,
from a temporary copy (the reader seeks in it); its records are numbered on from the previous member's.
A revisit whose record is in another WARC of the WACZ (a crawler rolls its WARCs over) is linked to that
record once every member is read, and comes after the members' records; its page names the member
(`refers_to_wacz_member`) beside the record's id and offset.

Every page keeps the WARC page's `extra` (`warc_file` is the member's file name, `warc_offset` an offset
in that member) and `archive_format` "wacz", `wacz_file`, `wacz_member` (its path in the ZIP),
`wacz_page`: whether `pages/pages.jsonl` lists the page's URL (as written, or the same canonical URL),
and `wacz_extra_page` when `pages/extraPages.jsonl` lists it.

A WACZ is read as hostile: a member's name is never a path on this machine (nothing is extracted by
name), a member is copied at most `MAX_MEMBER_BYTES` and at most `MAX_RATIO` times its compressed size
(a ZIP bomb stops there), a pages list is read at most `MAX_PAGES_BYTES`. A member that cannot be read
(encrypted, a name with `..`, too large, a bad CRC, not a WARC) and a bad line of a pages list are each
a `bad WACZ member` reject; the other members are read. A file that is not a readable ZIP, or has more
than `MAX_MEMBERS` members, is one `corrupt compressed file` reject (so ingest refuses it, naming why).
"""

from __future__ import annotations

import json
import tempfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..records import PageRecord
from ..rejects import Reject, RejectKind
from ..urls import canonicalize_url
from .capture import BATCH_BYTES, ArchiveBatches, ArchiveCapture, WarcCapture
from .warc import FRAMED_MAGIC, RecordIndex, WarcBatches, is_warc_head

ZIP_MAGIC = b"PK\x03\x04"
MAX_MEMBERS = 100_000
MAX_MEMBER_BYTES = 16 << 30  # one WARC of a WACZ (Browsertrix rolls its WARCs over at 1 GB by default)
MAX_RATIO = 200  # inflated / compressed: a WARC.gz is stored (1x), a plain WARC deflates ~5-10x
MAX_PAGES_BYTES = 256 << 20  # a pages list (~1.5M pages of ~150 bytes)
MAX_PAGE_LINE = 1 << 20  # a pages list line (its `text` field holds the page's text)
_COPY_CHUNK = 1 << 20
_PAGES_LISTS = {"pages/pages.jsonl": "wacz_page", "pages/extraPages.jsonl": "wacz_extra_page"}


def is_wacz(path: Path) -> bool:
    """Whether `path` is a ZIP laid out as a WACZ (a `datapackage.json`, or members under `archive/`)."""
    with open(path, "rb") as f:
        if f.read(4) != ZIP_MAGIC:
            return False
    try:
        with zipfile.ZipFile(path) as z:
            names = [_inner(n) for n in z.namelist()[:MAX_MEMBERS]]
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
        return path.name.lower().endswith(".wacz")  # a broken WACZ: refused by `WaczBatches` with its cause
    return "datapackage.json" in names or any(n.startswith("archive/") for n in names)


def _inner(name: str) -> str:
    """A member's path in the WACZ layout: early WACZ files keep everything under `data/`."""
    return name.removeprefix("data/")


def unsafe_name(name: str) -> str | None:
    """Why a member's name is not a plain relative path (absolute, `..`, a backslash, a control
    character), or None. Nothing is extracted by name; such a member is reported, not read."""
    if not name or name.startswith("/") or "\\" in name or (len(name) > 1 and name[1] == ":"):
        return "an absolute path"
    if any(ord(c) < 32 for c in name):
        return "a control character in its name"
    if ".." in PurePosixPath(name).parts:
        return "a '..' in its path"
    return None


class WaczBatches(ArchiveBatches):
    """The records of a WACZ's WARC members as batches of `RawLine(record number, capture | Reject)`,
    as `warc.WarcBatches` gives a WARC file's. After iteration, `skipped` and `revisits` add up the
    members'."""

    def __init__(self, path: Path, *, batch_records: int = 256, batch_bytes: int = BATCH_BYTES) -> None:
        self.path = Path(path)
        self.name = self.path.name
        self.batch_records, self.batch_bytes = batch_records, batch_bytes
        self.skipped: Counter[str] = Counter()
        self.revisits = 0
        self._member: tuple[zipfile.ZipInfo, WarcBatches] | None = None  # the WARC member being read

    @property
    def read_position(self) -> int:
        """How far into the WACZ the records read so far reach: the member being read, its bytes in the ZIP
        in the share of its WARC read."""
        if self._member is None:
            return 0
        info, reader = self._member
        return info.header_offset + info.compress_size * reader.read_position // max(info.file_size, 1)

    def _items(self) -> Iterator[ArchiveCapture | Reject]:
        try:
            z = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError) as exc:
            yield RejectKind.CORRUPT_FILE.reject(f": {self.name} is not a readable ZIP ({exc})")
            return
        with z:
            if len(z.infolist()) > MAX_MEMBERS:
                yield RejectKind.CORRUPT_FILE.reject(
                    f": {self.name} has {len(z.infolist()):,} members (a WACZ is read to {MAX_MEMBERS:,})"
                )
                return
            yield from self._members(z)

    def _members(self, z: zipfile.ZipFile) -> Iterator[ArchiveCapture | Reject]:
        indexes: dict[str, tuple[zipfile.ZipInfo, RecordIndex]] = {}
        waiting: list[ArchiveCapture] = []
        with tempfile.TemporaryDirectory(prefix="neardup-wacz-") as tmp:
            lists: dict[str, tuple[set[str], set[str]]] = {}
            for info in z.infolist():
                inner = _inner(info.filename)
                if inner in _PAGES_LISTS and unsafe_name(info.filename) is None:
                    urls, problems = _read_pages_list(z, info)
                    yield from problems
                    exact, canonical = lists.setdefault(_PAGES_LISTS[inner], (set(), set()))
                    exact.update(urls)
                    canonical.update(canonicalize_url(u) for u in urls)
            seen: set[str] = set()
            for info in z.infolist():
                name = info.filename
                if not _inner(name).startswith("archive/") or info.is_dir():
                    continue
                if name in seen:
                    yield _bad(name, "a second member of the same name, not read")
                    continue
                seen.add(name)
                if (why := unsafe_name(name)) is not None:
                    yield _bad(name, f"{why}, not read")
                    continue
                copy = Path(tmp) / "member"
                if (why := _copy_member(z, info, copy)) is not None:
                    yield _bad(name, why)
                    continue
                if (why := _not_a_warc(copy)) is not None:
                    yield _bad(name, why)
                    continue
                yield from self._member_records(copy, info, lists, waiting, indexes)
                copy.unlink()
            yield from self._linked_across_members(z, Path(tmp) / "record-member", waiting, indexes)

    def _member_records(
        self,
        copy: Path,
        info: zipfile.ZipInfo,
        lists: dict[str, tuple[set[str], set[str]]],
        waiting: list[ArchiveCapture],
        indexes: dict[str, tuple[zipfile.ZipInfo, RecordIndex]],
    ) -> Iterator[ArchiveCapture | Reject]:
        """A member's records; a revisit whose record is not in the member joins `waiting`, and where the
        member's records are goes to `indexes`."""
        name = info.filename
        reader = WarcBatches(copy)
        reader.name = PurePosixPath(name).name
        self._member = (info, reader)
        for raw in reader.records():
            item = raw.payload
            if isinstance(item, WarcCapture):
                capture = ArchiveCapture(item, self._fields(item.url, name, lists))
                if item.unlinked_revisit:
                    waiting.append(capture)
                else:
                    yield capture
            elif isinstance(item, Reject):
                yield Reject(item.kind, f"{item.detail} (in {name})", item.variant)
        self.skipped.update(reader.skipped)
        self.revisits += reader.revisits
        indexes[name] = (info, reader.index)

    def _linked_across_members(
        self,
        z: zipfile.ZipFile,
        copy: Path,
        waiting: list[ArchiveCapture],
        indexes: dict[str, tuple[zipfile.ZipInfo, RecordIndex]],
    ) -> Iterator[ArchiveCapture]:
        """The revisits whose record is in another WARC of the WACZ (a crawler rolls its WARCs over),
        linked to it: by WARC-Refers-To in any member, else by payload digest, the first member in the ZIP's
        order. Each member holding such records is copied out once more; a revisit whose record is in no
        member comes as it is (a "revisit without its record" when decoded)."""
        by_member: dict[str, list[tuple[ArchiveCapture, int]]] = {}
        for capture in waiting:
            cap = capture.capture
            found = next(
                (
                    (name, pos)
                    for keys in ((cap.refers_to, None), (None, cap.payload_digest))
                    for name, (_, index) in indexes.items()
                    if (pos := index.find(*keys)) is not None
                ),
                None,
            )
            if found is None:
                yield capture
            else:
                by_member.setdefault(found[0], []).append((capture, found[1]))
        for name, linked in by_member.items():
            info = indexes[name][0]
            why = _copy_member(z, info, copy)
            reader = WarcBatches(copy)
            reader.name = PurePosixPath(name).name
            for capture, pos in linked:
                original = reader.read_record_at(pos) if why is None else None
                if original is None:
                    yield capture
                    continue
                self.revisits += 1
                yield ArchiveCapture(
                    replace(capture.capture, original=original),
                    {**capture.fields, "refers_to_wacz_member": name},
                    capture.drop,
                )
            copy.unlink(missing_ok=True)

    def _fields(self, url: str, member: str, lists: dict[str, tuple[set[str], set[str]]]) -> PageRecord:
        fields: PageRecord = {"archive_format": "wacz", "wacz_file": self.name, "wacz_member": member}
        canonical = canonicalize_url(url)

        def listed(key: str) -> bool:
            exact, canonicals = lists.get(key, (set(), set()))
            return url in exact or canonical in canonicals

        fields["wacz_page"] = listed("wacz_page")
        if listed("wacz_extra_page"):
            fields["wacz_extra_page"] = True
        return fields


def _bad(member: str, why: str) -> Reject:
    return RejectKind.BAD_WACZ_MEMBER.reject(f" {member}: {why}", _variant(why))


def _variant(why: str) -> str:
    return why.split(" (", 1)[0].split(",", 1)[0][:40]


def _copy_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path) -> str | None:
    """Copy a member to `dest`, within the size and ratio bounds; why it cannot be, or None."""
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.file_size > MAX_MEMBER_BYTES:
        return f"too large ({info.file_size:,} bytes, at most {MAX_MEMBER_BYTES:,})"
    limit = min(MAX_MEMBER_BYTES, MAX_RATIO * max(info.compress_size, 1) + _COPY_CHUNK)
    copied = 0
    try:
        with z.open(info) as src, open(dest, "wb") as out:
            while chunk := src.read(_COPY_CHUNK):
                copied += len(chunk)
                if copied > limit:
                    return f"inflates past {limit:,} bytes (a ZIP bomb?)"
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
        return f"unreadable ({exc})"
    return None


def _not_a_warc(path: Path) -> str | None:
    with open(path, "rb") as f:
        head = f.read(4096)
    if head[:4] in FRAMED_MAGIC:
        return None
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, 16)
        except zlib.error as exc:
            return f"not a WARC file (a broken gzip start: {exc})"
    return None if is_warc_head(head) else "not a WARC file"


def _read_pages_list(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[list[str], list[Reject]]:
    """The URLs of a pages list (its first line is its header), and a reject per line that is not a
    page, at most 10 (then one for the rest)."""
    urls: list[str] = []
    problems: list[Reject] = []
    bad = 0
    name = info.filename

    def complain(why: str) -> None:
        nonlocal bad
        bad += 1
        if bad <= 10:
            problems.append(_bad(name, why))

    read = 0
    try:
        with z.open(info) as f:
            for number, line in enumerate(iter(lambda: f.readline(MAX_PAGE_LINE + 1), b""), start=1):
                read += len(line)
                if read > MAX_PAGES_BYTES:
                    complain(f"read to line {number}, its first {MAX_PAGES_BYTES:,} bytes")
                    break
                if len(line) > MAX_PAGE_LINE:
                    complain(f"line {number} is over {MAX_PAGE_LINE:,} bytes")
                    while len(line) > MAX_PAGE_LINE and not line.endswith(b"\n"):
                        line = f.readline(MAX_PAGE_LINE + 1)
                        read += len(line)
                    continue
                if not line.strip():
                    continue
                try:
                    page = json.loads(line)
                except ValueError:
                    complain(f"line {number} is not JSON")
                    continue
                if not isinstance(page, dict):
                    complain(f"line {number} is not a JSON object")
                elif isinstance(page.get("url"), str) and page["url"].strip():
                    urls.append(page["url"].strip())
                elif number > 1 or "format" not in page:  # the first line is the list's header
                    complain(f"line {number} has no url")
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
        complain(f"unreadable ({exc})")
    if bad > 10:
        problems.append(_bad(name, f"{bad - 10:,} more bad lines"))
    return urls, problems
