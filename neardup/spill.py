"""Arrays kept on disk for the out-of-core fingerprint step, and the memory limit that sizes its pieces.

The large per-unit data of the fingerprint step (the MinHash signatures, 512 B a unit at 128 permutations;
the units' exact keys; the shingle sets exact verification compares, ~2.4 KB a unit of the 16 KB crawl) is
written once, in order, to files of a `SpillDir` (`DiskArray`) and read back through read-only memory maps.
Whoever reads a map calls `release` after each bounded piece of work: the pages read so far leave the
process's resident set (they stay in the kernel's page cache, which the kernel reclaims as it needs), so
the process holds the piece at hand, not the file. Unit ids are row numbers of these files, the same
numbering end to end; every offset into them is int64.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from .errors import ConfigError

try:
    from . import _kernels as kernels
except ImportError:  # pragma: no cover - the extension is built on install
    kernels = None  # type: ignore[assignment]

_UNITS = {"": 1, "B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
# The share of the machine's memory the fingerprint step keeps within when no limit is given.
DEFAULT_MACHINE_SHARE = 0.5
# What the in-memory fingerprint step holds a unit at its peak (signature frame and matrix, band arrays,
# shingle sets of the units in pairs): 3.5 GB at 1M pages of the 16 KB bench crawl (bench/RESULTS.md,
# "out of core"), rounded up.
IN_MEMORY_BYTES_PER_UNIT = 4096
# DuckDB's share of an out-of-core step's limit (its sorts, joins and inserts spill what passes it; left at
# its own 1 GB, its sort of the units and its join for their texts held 1 GB beside the step's pieces), and
# the least it is given: the units' query, a range of keys at a time, fails at 80 MB and passes at 96 MB.
DUCKDB_SHARE = 4
DUCKDB_MIN_MEMORY = 128 << 20


def machine_memory() -> int:
    """Bytes of physical memory."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def parse_memory_limit(text: str) -> int:
    """Bytes of a memory limit given as "2GB", "512MB", "1.5 GB" (binary units) or "40%" (of the machine's
    memory)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%|[KMGT]?B?)\s*", text.upper())
    if m is None or float(m.group(1)) <= 0:
        raise ConfigError(f"memory_limit: give a size such as 2GB, 512MB or 40%, not {text!r}")
    value, unit = float(m.group(1)), m.group(2)
    if unit == "%":
        if value > 100:
            raise ConfigError(f"memory_limit: a share of the machine is at most 100%, not {text!r}")
        return int(machine_memory() * value / 100)
    return int(value * _UNITS[unit if unit.endswith("B") or not unit else unit + "B"])


def out_of_core_limit(n_units: int, memory_limit: int | None, machine: int | None = None) -> int | None:
    """The memory limit the fingerprint step of `n_units` keeps within out of core, or None where it runs in
    memory: its estimated peak (`IN_MEMORY_BYTES_PER_UNIT`) fits in `memory_limit` (bytes; None: the
    `DEFAULT_MACHINE_SHARE` of `machine`, by default this machine's memory). Approximate: the estimate is
    of the bench crawl's pages."""
    limit = memory_limit
    if limit is None:
        limit = int((machine_memory() if machine is None else machine) * DEFAULT_MACHINE_SHARE)
    return None if n_units * IN_MEMORY_BYTES_PER_UNIT <= limit else limit


def duckdb_memory(memory_limit: int) -> int:
    """DuckDB's memory limit within a fingerprint step kept to `memory_limit` bytes: its share of it,
    `DUCKDB_MIN_MEMORY` at least."""
    return max(memory_limit // DUCKDB_SHARE, DUCKDB_MIN_MEMORY)


@dataclass(frozen=True, slots=True)
class SpillPlan:
    """How large each piece of the out-of-core fingerprint step is, from the memory limit (bytes): the rows
    of sketches read from the store at once, the rows of signatures copied into a band at once, the
    candidate pairs of a band made at once, the pairs whose shingle sets are intersected at once (their
    sets read into memory for the piece, `DiskArray.gather`), the bucket entries of a band (a unit, or one of
    its size-class entries) grouped at once, and the candidate pairs deduplicated at once; and DuckDB's
    memory limit meanwhile (a quarter of the limit, `DUCKDB_MIN_MEMORY` at least) and the units it sorts
    at once."""

    memory_limit: int
    read_rows: int
    copy_rows: int
    verify_pairs: int
    candidates: int
    bucket_entries: int
    pair_rows: int
    duckdb_memory: int
    sort_rows: int

    @classmethod
    def for_limit(cls, memory_limit: int, num_perm: int) -> SpillPlan:
        # A sixteenth of the limit for each piece: the pieces of two threads, the band arrays and DuckDB's
        # own share live beside them. Signature rows are 4 * num_perm bytes; a pair touches two rows of
        # signatures or two shingle sets (~2.4 KB each on the 16 KB crawl, 4 KB pages).
        piece = max(memory_limit // 16, 1)
        row = 4 * num_perm
        return cls(
            memory_limit=memory_limit,
            read_rows=max(1, min(piece // (row + 256), 1 << 16)),
            copy_rows=max(1, piece // row),
            verify_pairs=max(1, min(piece // (2 * 4096), 1 << 16)),
            # a candidate pair is 48 bytes at most while it is made (pair, code, its chunk's scores)
            candidates=max(1, piece // 48),
            # a bucket entry is ~100 bytes while its group is sorted into buckets (its rows, key, order, the
            # sorted copies, its run)
            bucket_entries=max(1, piece // 128),
            # a pair found is 24 bytes (code, two estimates), ~64 while its range is deduplicated
            pair_rows=max(1, piece // 64),
            duckdb_memory=duckdb_memory(memory_limit),
            # DuckDB's sort of the units' sketches in exact-key order holds a unit's row and more (it
            # needs more than 128 MB for 1M units at 128 permutations): a range of keys at a time, ~2 KB a
            # unit of its memory
            sort_rows=max(1, duckdb_memory(memory_limit) // 2048),
        )


class DiskArray:
    """An array appended to a file a chunk at a time (rows of `row_shape`), then read through a read-only
    memory map (`read`)."""

    def __init__(self, path: Path, dtype: npt.DTypeLike, row_shape: tuple[int, ...] = ()) -> None:
        self.path, self.dtype, self.row_shape = path, np.dtype(dtype), row_shape
        self.rows = 0
        self._file: BinaryIO | None = open(path, "wb")  # noqa: SIM115 (closed by read)
        self._map: mmap.mmap | None = None

    @property
    def row_bytes(self) -> int:
        """Bytes of a row."""
        return self.dtype.itemsize * int(np.prod(self.row_shape))

    @property
    def nbytes(self) -> int:
        """Bytes of the rows appended."""
        return self.rows * self.row_bytes

    def append(self, chunk: np.ndarray) -> None:
        chunk = np.ascontiguousarray(chunk, dtype=self.dtype)
        if chunk.shape[1:] != self.row_shape:
            raise ValueError(f"rows of shape {chunk.shape[1:]} appended to an array of {self.row_shape}")
        assert self._file is not None, "appended after read"
        self._file.write(chunk.tobytes())
        self.rows += len(chunk)

    def read(self) -> np.ndarray:
        """The array (read-only, on the memory map; empty without a map when no row was appended)."""
        self._finish()
        shape = (self.rows, *self.row_shape)
        if self.nbytes == 0:
            return np.empty(shape, dtype=self.dtype)
        if self._map is None:
            with open(self.path, "rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return np.frombuffer(self._map, dtype=self.dtype).reshape(shape)

    def _finish(self) -> None:
        """End the appends: the file is written out and closed."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def gather(self, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Rows [starts[i], starts[i] + counts[i]) for each i, back to back in that order, read with pread
        into memory of their size, in file order. Random reads through the map would bring whole
        page-cache folios (up to megabytes each, of a file written in one sequential pass) into the
        resident set: a piece of work that touches a few thousand scattered rows holds most of the file."""
        self._finish()
        starts = np.asarray(starts, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        out = np.empty((int(counts.sum()), *self.row_shape), dtype=self.dtype)
        row = self.row_bytes
        places = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if len(counts) else counts
        order = np.argsort(starts, kind="stable")  # the reads of a piece go forward through the file
        fd = os.open(self.path, os.O_RDONLY)
        try:
            _pread_ranges(fd, starts[order] * row, counts[order] * row, places[order] * row, out, self.path)
        finally:
            os.close(fd)
        return out

    def read_rows(self, ids: np.ndarray) -> np.ndarray:
        """The rows `ids` (int64), in that order, read with pread (`gather`)."""
        ids = np.asarray(ids, dtype=np.int64)
        return self.gather(ids, np.ones(len(ids), dtype=np.int64))

    def release(self) -> None:
        """Drop the pages of the map read so far from the process's resident set (the next read of them
        comes from the page cache again)."""
        if self._map is not None:
            self._map.madvise(mmap.MADV_DONTNEED)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._map is not None:
            # an array may still look at it: the map is then unmapped when the array goes
            with contextlib.suppress(BufferError):
                self._map.close()
            self._map = None


def _pread_ranges(
    fd: int, starts: np.ndarray, sizes: np.ndarray, places: np.ndarray, out: np.ndarray, path: Path
) -> None:
    """`sizes[i]` bytes of `fd` from byte `starts[i]` into `out` at byte `places[i]`, for each i in order
    (`kernels.pread_ranges`, a system call a range without the GIL; a Python loop without the kernels)."""
    view = out.reshape(-1).view(np.uint8)
    try:
        if kernels is not None:
            kernels.pread_ranges(fd, starts, sizes, places, view)
            return
        for start, size, place in zip(starts.tolist(), sizes.tolist(), places.tolist(), strict=True):
            if size and os.preadv(fd, [view.data[place : place + size]], start) != size:
                raise EOFError
    except EOFError:
        raise RuntimeError(f"{path}: rows past the end of the file read") from None


class DiskPairs:
    """Candidate pairs (code a * n + b, Jaccard and containment estimates), appended to a `SpillDir` as the
    bands find them, a pair as often as it is found; `unique` gives each pair once, sorted by code, with
    the estimates of its first finding, as `np.unique(..., return_index=True)` of the whole would: a range
    of codes at a time, about `rows` pairs at once."""

    def __init__(self, spill: SpillDir, rows: int) -> None:
        self.spill, self.rows = spill, max(1, rows)
        self.codes = spill.array("pair-codes", np.int64)
        self.jaccard = spill.array("pair-jaccard", np.float64)
        self.containment = spill.array("pair-containment", np.float64)
        self._lock = threading.Lock()  # the bands' threads append

    def append(self, codes: np.ndarray, jaccard: np.ndarray, containment: np.ndarray) -> None:
        with self._lock:
            self._append(codes, jaccard, containment)

    def _append(self, codes: np.ndarray, jaccard: np.ndarray, containment: np.ndarray) -> None:
        self.codes.append(codes)
        self.jaccard.append(jaccard)
        self.containment.append(containment)

    def unique(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(a, b, Jaccard, containment) of each pair once, sorted by (a, b), on memory maps."""
        codes, jac, cont = self.codes.read(), self.jaccard.read(), self.containment.read()
        out = [self.spill.array(f"pairs-{name}", dtype) for name, dtype in _PAIR_COLUMNS]
        for lo, hi in _code_ranges(codes, self.rows) if len(codes) else []:
            parts: list[list[np.ndarray]] = [[], [], []]
            for start in range(0, len(codes), self.rows):
                piece = slice(start, start + self.rows)
                within = (codes[piece] >= lo) & (codes[piece] < hi)
                for part, column in zip(parts, (codes, jac, cont), strict=True):
                    part.append(column[piece][within])
                self.spill.release()
            range_codes, first = np.unique(np.concatenate(parts[0]), return_index=True)
            for array, column in zip(
                out,
                (
                    range_codes // n,
                    range_codes % n,
                    np.concatenate(parts[1])[first],
                    np.concatenate(parts[2])[first],
                ),
                strict=True,
            ):
                array.append(column)
        return out[0].read(), out[1].read(), out[2].read(), out[3].read()


_PAIR_COLUMNS = (("a", np.int64), ("b", np.int64), ("jaccard", np.float64), ("containment", np.float64))


def _code_ranges(codes: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Consecutive ranges [lo, hi) of pair codes covering every code, each holding about `rows` of `codes`
    (bounds from quantiles of an evenly spaced sample; a code found many times can make a range larger)."""
    ranges = -(-len(codes) // rows)
    if ranges <= 1:
        return [(0, np.iinfo(np.int64).max)]
    sample = np.sort(codes[:: max(1, len(codes) // (64 * ranges))])
    bounds = np.unique(sample[(np.arange(1, ranges) * len(sample)) // ranges])
    edges = [0, *(int(b) for b in bounds), int(np.iinfo(np.int64).max)]
    return [(lo, hi) for lo, hi in zip(edges[:-1], edges[1:], strict=True) if hi > lo]


class SpillDir:
    """A temporary folder of `DiskArray`s (removed on exit), in `parent` (the database's folder: the
    spilled data is of its size, and a system temp folder may be a small memory-backed one)."""

    def __init__(self, parent: Path | None = None) -> None:
        if parent is not None:
            parent.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix="neardup-spill-", dir=parent))
        self.arrays: list[DiskArray] = []

    def array(self, name: str, dtype: npt.DTypeLike, row_shape: tuple[int, ...] = ()) -> DiskArray:
        out = DiskArray(self.path / f"{len(self.arrays)}-{name}.bin", dtype, row_shape)
        self.arrays.append(out)
        return out

    def bytes_used(self) -> int:
        return sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())

    def release(self) -> None:
        for array in self.arrays:
            array.release()

    def __enter__(self) -> SpillDir:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for array in self.arrays:
            array.close()
        shutil.rmtree(self.path, ignore_errors=True)
