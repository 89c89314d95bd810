"""A database file as files on disk: removing one with its companions, and telling a write that found no
room on the disk from other failures."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from pathlib import Path

# What the operating system says when a write finds no room: the disk (or its quota) is full, or the
# process's file size limit (ulimit -f) is reached.
_NO_ROOM = {
    "No space left on device": "disk full",
    "Disk quota exceeded": "disk quota exceeded",
    "File too large": "file size limit reached",
}


def no_room(exc: BaseException) -> str | None:
    """What kind of no room (`disk full`, ...) when `exc`, or an error it was raised in the handling of, is a write that
    found no room; else None. A failed write surfaces from DuckDB several times over (the write, then each
    later use of the invalidated database), so the whole chain is searched."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            return _NO_ROOM.get(os.strerror(current.errno), "disk full")
        for text, what in _NO_ROOM.items():
            if text in str(current):
                return what
        current = current.__cause__ or current.__context__
    return None


def remove_database_file(path: str | Path) -> None:
    """Remove a database file with its write-ahead log and its spill folder."""
    path = str(path)
    for name in (path, f"{path}.wal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
    shutil.rmtree(f"{path}.tmp", ignore_errors=True)
