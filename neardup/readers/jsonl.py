"""JSON lines (`.jsonl`, `.ndjson`, `.json`, optionally gzipped) -> `RawLine`s of undecoded lines.

For the workers the file is cut into `LineBlock`s at newlines (one bytes object crosses the process
boundary, the worker splits the lines). A gzipped file is inflated member by member, so a CRC failure
names the lines it puts in doubt; a line over the limit is skipped as it streams, unread.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..parallel import SharedSlots, SlotRef, shared_view
from ..records import MAX_PAGE_BYTES, RawLine
from ..rejects import Reject, RejectKind
from .inflate import GZIP_MAGIC, ZLIB_ERRORS, fast_zlib, open_binary

# A JSON line may hold a page of MAX_PAGE_BYTES twice over (escaped quotes, `\/`) and 1 MB of other fields;
# a longer line is rejected as it streams, unread (a gz bomb of one 1 GB line costs one read piece of memory).
MAX_LINE_BYTES = 2 * MAX_PAGE_BYTES + (1 << 20)
UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class LineBlock:
    """Whole lines of a JSON-lines dump in one buffer, `first_line` the 1-based number of the first.

    The reading process only cuts the decompressed stream at a newline; the worker splits the lines.
    One bytes object crosses the process boundary instead of a pickled record per line."""

    first_line: int
    data: bytes
    # Why the line after `data`'s lines is rejected: a compressed file that ends early, a line too long.
    error: Reject | None = None
    # Set with `error` when a gzip member fails its CRC: the lines from this one on, already read or not,
    # are not what was compressed and must not be kept.
    discard_from: int | None = None
    # How far the reader was in the file (compressed bytes) when it cut this block: for progress (0: unknown).
    end_byte: int = 0

    @property
    def error_line(self) -> int:
        return self.first_line + self.data.count(b"\n")

    def __iter__(self) -> Iterator[RawLine]:
        return _split_lines(self.data, self.first_line, len(self.data))


@dataclass(frozen=True, slots=True)
class SharedLines:
    """The lines of a `LineBlock` without an error, left in a worker pool's shared memory
    (`parallel.SharedSlots`): what crosses the pipe is where they are. Iterated in a worker, as the block."""

    first_line: int
    slot: SlotRef

    def __iter__(self) -> Iterator[RawLine]:
        return _split_lines(shared_view(self.slot), self.first_line, self.slot.size)


_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what `bytes.strip` strips


def _split_lines(buf: bytes | mmap.mmap, first_line: int, end: int) -> Iterator[RawLine]:
    """The lines of `buf[:end]` but blank ones, numbered from `first_line`, as views of `buf`: a page-sized
    line is not copied before it is decoded."""
    view = memoryview(buf)
    i, start = first_line, 0
    while start < end:
        nl = buf.find(b"\n", start, end)
        stop = end if nl < 0 else nl
        if start < stop and (view[start] not in _ASCII_SPACE or bytes(view[start:stop]).strip()):
            yield RawLine(i, view[start:stop])
        i, start = i + 1, stop + 1


def shared_lines(block: Iterable[RawLine], slots: SharedSlots) -> Iterable[RawLine]:
    """`block` with its lines in `slots` when it is a `LineBlock` of lines only (one with an error, or
    not JSON lines, goes as it is)."""
    if isinstance(block, LineBlock) and block.error is None and block.data:
        return SharedLines(block.first_line, slots.share(block.data))
    slots.skip()
    return block


BLOCK_BYTES = 2 << 20  # ~130 pages of 16 KB a batch
READ_BYTES = 1 << 18


@dataclass(frozen=True, slots=True)
class _Member:
    """A gzip member starts at compressed byte `offset`."""

    offset: int


@dataclass(frozen=True, slots=True)
class _Break:
    """The compressed stream stops early. `kind`: 'truncated' (the file ends inside a member), 'corrupt'
    (a CRC or deflate error: the member's output is not what was compressed) or 'trailing' (bytes
    after the last member that are not a gzip member)."""

    kind: str
    detail: str
    offset: int


def _inflated(f: BinaryIO) -> Iterator[bytes | _Member | _Break]:
    """The decompressed bytes of a gzip file in pieces of at most READ_BYTES, a `_Member` before each member
    and a `_Break` last if the stream stops early. Each member is inflated on its own, so its CRC (checked
    at its end) vouches for the pieces since its `_Member`; the bounded pieces keep a gz bomb's memory flat."""
    read_total = 0  # compressed bytes read from the file
    member = 0  # compressed byte where the current member starts
    d = fast_zlib.decompressobj(31)
    yield _Member(0)
    data, full, started = b"", False, False
    while True:
        if not data and not full:  # a full piece may leave output inside the inflater: ask again first
            data = f.read(READ_BYTES)
            read_total += len(data)
            if not data:
                break
        if not started:
            if not data.startswith(GZIP_MAGIC[:1]):  # after the last member: zero padding or garbage
                trailing = _trailing_bytes(data, f)
                if trailing:
                    yield _Break("trailing", f"{trailing:,} bytes that are not a gzip member", member)
                return
            started = True
        try:
            out = d.decompress(data, READ_BYTES)
        except ZLIB_ERRORS as exc:
            yield _Break("corrupt", str(exc), member)
            return
        full = len(out) == READ_BYTES
        data = d.unconsumed_tail
        if out:
            yield out
        if d.eof:
            data, full = d.unused_data, False
            member = read_total - len(data)
            d, started = fast_zlib.decompressobj(31), False
            yield _Member(member)
    if started and not d.eof:
        yield _Break(
            "truncated", f"the file ends inside the gzip member that starts at byte {member:,}", member
        )


def _trailing_bytes(data: bytes, f: BinaryIO) -> int:
    """How many bytes follow the last gzip member, `data` and the rest of `f`; 0 if they are all zero bytes
    (gzip(1) ignores zero padding, and so does this)."""
    n, garbage = 0, False
    while data:
        n += len(data)
        garbage = garbage or bool(data.strip(b"\0"))
        data = f.read(READ_BYTES)
    return n if garbage else 0


def _plain(f: BinaryIO) -> Iterator[bytes | _Member | _Break]:
    while piece := f.read(READ_BYTES):
        yield piece


def _break_reason(brk: _Break, first_line: int, partial: bool) -> Reject:
    if brk.kind == "truncated":
        where = "inside this record" if partial else "here"
        return RejectKind.TRUNCATED_FILE.reject(
            f": {brk.detail}; reading stopped {where}. The complete lines before "
            "are loaded (a cut-off member has no CRC to check them against)",
        )
    if brk.kind == "corrupt":
        since = (
            "its lines and all after it are"
            if first_line == 1
            else (
                f"the lines before line {first_line} passed their members' CRC; this member's lines and all after it are"
            )
        )
        return RejectKind.CORRUPT_FILE.reject(
            f": {brk.detail} in the gzip member that starts at byte {brk.offset:,} "
            f"(line {first_line}). gzip checks a member only at its end, so {since} not loaded",
        )
    return RejectKind.TRAILING_DATA.reject(f": {brk.detail}, ignored")


def read_jsonl_blocks(path: Path, *, block_bytes: int, max_line_bytes: int) -> Iterator[LineBlock]:
    """The lines of a JSON-lines file in `LineBlock`s of about `block_bytes` (a block ends at a newline: a
    longer line is a block of its own). A line longer than `max_line_bytes` is dropped as it streams and
    named in an error block, so the reader holds at most about `block_bytes + max_line_bytes` whatever the
    file. A compressed file that ends early keeps its complete lines; one whose CRC or deflate data fails
    gives an error block with `discard_from` set: the lines of the failed member (and after) must not be kept."""
    with open(path, "rb") as f:
        pieces = _inflated(f) if f.read(2) == GZIP_MAGIC else _plain(f)
        f.seek(0)
        yield from _line_blocks(pieces, block_bytes, max_line_bytes, f.tell)


def read_jsonl(path: Path) -> Iterator[RawLine]:
    """The non-blank lines of a JSON-lines file, one `RawLine` each, numbered from 1."""
    with open_binary(path) as f:
        for i, line in enumerate(f, start=1):
            if i == 1:
                line = line.removeprefix(UTF8_BOM)
            if line.strip():
                yield RawLine(i, line)


def _line_blocks(
    pieces: Iterator[bytes | _Member | _Break],
    block_bytes: int,
    max_line_bytes: int,
    position: Callable[[], int],
) -> Iterator[LineBlock]:
    """`pieces` cut into `LineBlock`s; `position()` is how far the reader is in the file (for progress)."""
    line = 1  # the number of the first line in `parts`
    parts: list[bytes] = []
    size = 0  # bytes in `parts`
    tail = 0  # bytes in `parts` after its last newline (the line being read)
    nl = 0  # newlines in `parts`
    member_line = 1  # the line in which the current gzip member starts
    skipping = False  # inside a line over `max_line_bytes`: drop to its newline
    first = True
    for piece in pieces:
        if isinstance(piece, _Member):
            member_line = line + nl
            continue
        if isinstance(piece, _Break):
            data = b"".join(parts)
            if piece.kind == "corrupt":
                keep = _first_lines(data, member_line - line) if member_line > line else b""
                if keep:
                    yield LineBlock(line, keep)
                yield LineBlock(
                    member_line, b"", _break_reason(piece, member_line, False), discard_from=member_line
                )
                return
            cut = data.rfind(b"\n") + 1
            if cut:
                yield LineBlock(line, data[:cut])
                line += nl
            partial = skipping or bool(data[cut:].strip())
            yield LineBlock(line, b"", _break_reason(piece, line, partial))
            return
        if first and piece:
            piece = piece.removeprefix(UTF8_BOM)
            first = False
        newlines = count_newlines(piece)
        if skipping:
            if not newlines:
                continue
            piece = piece[piece.index(b"\n") + 1 :]
            newlines -= 1
            skipping = False
            line += 1
        if newlines and tail + (end := piece.index(b"\n")) > max_line_bytes:  # the line ends here, too long
            data = b"".join(parts)
            yield from _before_long_line(data, line, len(data) - tail, nl, max_line_bytes)
            line += nl + 1
            piece = piece[end + 1 :]
            newlines -= 1
            parts.clear()
            size = tail = nl = 0
        parts.append(piece)
        size += len(piece)
        nl += newlines
        tail = tail + len(piece) if not newlines else len(piece) - piece.rindex(b"\n") - 1
        if tail > max_line_bytes:  # an endless line: keep the lines before it, then skip it unread
            data = b"".join(parts)
            yield from _before_long_line(data, line, len(data) - tail, nl, max_line_bytes)
            line += nl
            parts.clear()
            size = tail = nl = 0
            skipping = True
            continue
        if size < block_bytes or size == tail:  # no newline yet: one long line, read on
            continue
        yield LineBlock(line, _cut_lines(parts, tail), end_byte=position())
        line += nl
        size, nl = tail, 0
    if skipping:  # the file ends inside the long line: it is named already
        return
    data = b"".join(parts)
    if data:
        yield LineBlock(line, data, end_byte=position())


def _cut_lines(parts: list[bytes], tail: int) -> bytes:
    """The bytes of `parts` but their last `tail` (the line being read), joined in one copy; `parts` is
    left holding the tail."""
    k, rest = len(parts) - 1, tail
    while rest > len(parts[k]):
        rest -= len(parts[k])
        k -= 1
    cut = len(parts[k]) - rest
    data = b"".join([*parts[:k], memoryview(parts[k])[:cut]])
    parts[:] = [parts[k][cut:], *parts[k + 1 :]] if tail else []
    return data


def count_newlines(data: bytes, *, scan: int = 64) -> int:
    """`data.count(b"\\n")`. A dump's lines are long (one page each): finding the few newlines of a read piece
    (memchr) is ~5x faster than `bytes.count`, which tests every byte; past `scan` of them, it counts."""
    n, i = 0, data.find(b"\n")
    while i >= 0:
        n += 1
        if n == scan:
            return data.count(b"\n")
        i = data.find(b"\n", i + 1)
    return n


def _before_long_line(
    data: bytes, line: int, cut: int, newlines: int, max_line_bytes: int
) -> Iterator[LineBlock]:
    """The lines of `data` before `cut` (from `line`, `newlines` of them), then the error of the too-long line
    that starts there."""
    if cut:
        yield LineBlock(line, data[:cut])
    yield LineBlock(
        line + newlines,
        b"",
        RejectKind.LINE_TOO_LONG.reject(
            f": over {max_line_bytes:,} bytes "
            f"(pages are limited to {MAX_PAGE_BYTES / 1e6:.0f} MB), skipped unread",
        ),
    )


def _first_lines(data: bytes, n: int) -> bytes:
    """The first `n` newline-terminated lines of `data` (fewer if it has fewer)."""
    end = 0
    for _ in range(n):
        nl = data.find(b"\n", end)
        if nl < 0:
            break
        end = nl + 1
    return data[:end]
