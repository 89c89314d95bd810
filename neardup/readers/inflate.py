"""gzip and zlib inflate by ISA-L where its wheels exist: the same bytes as zlib at ~2.7x its speed on
.jsonl.gz dumps (bench/RESULTS.md); the standard library elsewhere. Used by the readers of every format."""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

try:
    from isal import igzip as fast_gzip
    from isal import isal_zlib as fast_zlib
except ImportError:  # a platform without isal wheels
    fast_gzip = gzip  # type: ignore[misc]
    fast_zlib = zlib  # type: ignore[misc]

# isal's stubs type isal_zlib.error as an instance; it is the exception class zlib.error mirrors
ZLIB_ERRORS: tuple[type[Exception], ...] = (zlib.error, cast(type[Exception], fast_zlib.error))


GZIP_MAGIC = b"\x1f\x8b"


def open_gzip(path: Path) -> BinaryIO:
    """A gzip file's decompressed bytes, all members in turn."""
    return cast(BinaryIO, fast_gzip.open(path, "rb"))


def open_binary(path: Path) -> BinaryIO:
    """A file's bytes, gunzipped when it is gzipped (by its magic bytes)."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return open_gzip(path) if magic == GZIP_MAGIC else open(path, "rb")


def raw_position(f: BinaryIO | None) -> int:
    """Bytes read so far of the file as stored under `f`: a raw file's position, a gzip file's (`open_gzip`)
    or a `GzipStream`'s compressed bytes; 0 for none or a closed one."""
    if f is None or f.closed:
        return 0
    if isinstance(f, GzipStream):
        return f.raw_position()
    raw = getattr(f, "fileobj", None)  # a gzip file: its compressed file
    return raw.tell() if raw is not None and not raw.closed else f.tell()


_READ_BYTES = 1 << 18
_HISTORY_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class GzipBreak:
    """Where a gzip stream stops early. `kind`: 'truncated' (the file ends inside a member) or 'corrupt'
    (a CRC or deflate error: the member's output is not what was compressed); `at` is the decompressed
    byte the stream stopped at, `member` the compressed byte its member starts at, `size` the file's."""

    kind: str
    detail: str
    at: int
    member: int
    size: int


class GzipStream(io.RawIOBase):
    """A gzip file's decompressed bytes (all members in turn) that end at a break instead of raising:
    what was inflated before a cut or a CRC failure is read as usual, then EOF, and `broken` says why.
    (A reader that raises mid-read loses the complete records its parser buffered.) Seekable: forward by
    inflating on, backward into the last `_HISTORY_BYTES` read from what is kept of them (a parser that read
    ahead of a record it resumes at), further back by inflating again from the start."""

    def __init__(self, path: Path, *, on_break: Callable[[GzipBreak], None] | None = None) -> None:
        super().__init__()
        self._on_break = on_break
        self._f = open(path, "rb")  # noqa: SIM115  (closed by close())
        self._size = os.fstat(self._f.fileno()).st_size
        self.broken: GzipBreak | None = None
        self._restart()

    def _restart(self) -> None:
        self._f.seek(0)
        self._d = fast_zlib.decompressobj(31)
        self._in = b""  # compressed bytes not yet given to the inflater
        self._read_total = 0
        self._member = 0
        self._started = False
        self._full = False  # the last piece filled its limit
        self._done = False
        self._out = b""  # inflated bytes, read up to `_off`
        self._off = 0
        self._out_start = 0  # where `_out` starts in the decompressed stream
        self._history: list[tuple[int, bytes]] = []  # the pieces before `_out`: (start, bytes)
        self._history_bytes = 0
        self._pos = 0  # decompressed bytes read

    def raw_position(self) -> int:
        """Bytes of the gzip file read so far (inflated or waiting to be)."""
        return self._read_total

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset + (self._pos if whence == io.SEEK_CUR else 0)
        if whence == io.SEEK_END:
            raise io.UnsupportedOperation("a gzip stream has no known end")
        if target < self._pos:
            self._rewind(target)
        while self._pos < target and self._piece(target - self._pos):
            pass
        return self._pos

    def _rewind(self, target: int) -> None:
        """Go back to `target`: within the pieces kept, else from the start."""
        if target >= self._out_start:
            self._off, self._pos = target - self._out_start, target
            return
        kept = [i for i, (start, _) in enumerate(self._history) if start <= target]
        if not kept:
            self._restart()
            return
        first = kept[-1]
        start = self._history[first][0]
        self._out = b"".join([piece for _, piece in self._history[first:]] + [self._out])
        self._out_start, self._off, self._pos = start, target - start, target
        del self._history[first:]
        self._history_bytes = sum(len(piece) for _, piece in self._history)

    def _keep(self) -> None:
        """Keep the piece read to its end among the last pieces, up to `_HISTORY_BYTES`."""
        if self._out:
            self._history.append((self._out_start, self._out))
            self._history_bytes += len(self._out)
            self._out_start += len(self._out)
            self._out = b""
            while self._history_bytes > _HISTORY_BYTES and len(self._history) > 1:
                self._history_bytes -= len(self._history.pop(0)[1])

    def _fill(self) -> None:
        """Inflate the next piece into `_out` (at most `_READ_BYTES`); `_done` at the end or a break."""
        while self._off >= len(self._out) and not self._done:
            # a full piece may leave output inside the inflater: ask again before reading on
            if not self._in and not self._full:
                self._in = self._f.read(_READ_BYTES)
                self._read_total += len(self._in)
                if not self._in:
                    self._done = True
                    if self._started:
                        self._stop(
                            "truncated",
                            f"the file ends at byte {self._read_total:,}, inside the gzip member that "
                            f"starts at byte {self._member:,}",
                        )
                    return
            if not self._started:
                if not self._in.startswith(GZIP_MAGIC[:1]):  # zero padding or garbage after the last member
                    self._done = True
                    return
                self._started = True
            self._keep()
            try:
                self._out, self._off = self._d.decompress(self._in, _READ_BYTES), 0
                self._full = len(self._out) == _READ_BYTES
            except ZLIB_ERRORS as exc:
                self._done = True
                self._stop("corrupt", str(exc))
                return
            self._in = self._d.unconsumed_tail
            if self._d.eof:
                self._in = self._d.unused_data
                self._member = self._read_total - len(self._in)
                self._d, self._started, self._full = fast_zlib.decompressobj(31), False, False

    def _stop(self, kind: str, detail: str) -> None:
        if self.broken is None:
            self.broken = GzipBreak(kind, detail, self._pos, self._member, self._size)
            if self._on_break is not None:
                self._on_break(self.broken)

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            parts = []
            while chunk := self.read(_READ_BYTES):
                parts.append(chunk)
            return b"".join(parts)
        out = self._piece(size)
        if len(out) < size and out:  # as a buffered file reads: `size` bytes unless the stream ends
            parts = [out]
            got = len(out)
            while got < size and (more := self._piece(size - got)):
                parts.append(more)
                got += len(more)
            out = b"".join(parts)
        return out

    def _piece(self, size: int) -> bytes:
        """Up to `size` bytes of the inflated piece at hand (inflating the next one if it is used up)."""
        self._fill()
        start = self._off
        out = self._out if start == 0 and size >= len(self._out) else self._out[start : start + size]
        self._off += len(out)
        self._pos += len(out)
        return out

    def read1(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all, when negative) of one inflated piece: the rest of the one at hand, else the
        next, as they are: a whole piece is not copied, nor joined with the next; b"" at the end."""
        return self._piece(_READ_BYTES if size is None or size < 0 else size)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._f.close()
        super().close()
