"""gzip and zlib inflate by ISA-L where its wheels exist: the same bytes as zlib at ~2.7x its speed on
.jsonl.gz dumps (bench/RESULTS.md); the standard library elsewhere. Read by `ingest` and `warc`."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import BinaryIO, cast

try:
    from isal import igzip as fast_gzip
    from isal import isal_zlib as fast_zlib
except ImportError:  # a platform without isal wheels
    fast_gzip = gzip  # type: ignore[misc]
    fast_zlib = zlib  # type: ignore[misc]

# isal's stubs type isal_zlib.error as an instance; it is the exception class zlib.error mirrors
ZLIB_ERRORS: tuple[type[Exception], ...] = (zlib.error, cast(type[Exception], fast_zlib.error))


def open_gzip(path: Path) -> BinaryIO:
    """A gzip file's decompressed bytes, all members in turn."""
    return cast(BinaryIO, fast_gzip.open(path, "rb"))
