"""The compression of stored HTML: the codec of `html_blocks.data`, which the ingest workers compress with
(`batches.html_blocks`) and the store inflates with (`Store.page_source` and the page readers).

Zstandard (pyarrow's) at level 3 finds the template a block's pages share; per page, deflate or brotli
alone makes a file ~3x larger, and brotli over the same blocks costs twice the CPU (bench/RESULTS.md).
"""

from __future__ import annotations

import functools

import pyarrow as pa

HTML_CODEC = "zstd"
HTML_LEVEL = 3


@functools.cache
def html_codec() -> pa.Codec:
    """The codec of `html_blocks.data` (one per process: a codec does not pickle)."""
    return pa.Codec(HTML_CODEC, compression_level=HTML_LEVEL)
