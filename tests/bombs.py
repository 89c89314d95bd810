"""Decompression bombs for tests and bench/bomb_memory.py: `size` bytes of spaces in a few hundred KB
(gzip, deflate), a few KB ("gzip, gzip") or a few tens of KB (br), made in about a second per GB.

The deflate stream is built, not compressed: after a first megabyte whose window is spaces, the block
that encodes the next megabyte as back-references is the same for every megabyte, so it is compressed
once (ended by a sync flush, byte-aligned) and repeated."""

from __future__ import annotations

import struct
import zlib

import brotli

MB = 1 << 20
_SPACES = b" " * MB


def _raw_deflate(megabytes: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(_SPACES) + c.flush(zlib.Z_SYNC_FLUSH)
    again = c.compress(_SPACES) + c.flush(zlib.Z_SYNC_FLUSH)
    return first + again * (megabytes - 1) + c.flush(zlib.Z_FINISH)


def _checksums(megabytes: int) -> tuple[int, int]:
    crc, adler = 0, 1
    for _ in range(megabytes):
        crc, adler = zlib.crc32(_SPACES, crc), zlib.adler32(_SPACES, adler)
    return crc, adler


def bomb(coding: str, megabytes: int) -> bytes:
    """A body of `megabytes` MB of spaces encoded with `coding`: gzip, deflate, br or "gzip, gzip"."""
    if coding == "br":
        c = brotli.Compressor(quality=1)
        return b"".join([c.process(_SPACES) for _ in range(megabytes)]) + c.finish()
    raw = _raw_deflate(megabytes)
    crc, adler = _checksums(megabytes)
    if coding == "deflate":
        return b"\x78\x9c" + raw + struct.pack(">I", adler)
    gz = (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
        + raw
        + struct.pack("<II", crc, (megabytes * MB) & 0xFFFFFFFF)
    )
    if coding == "gzip":
        return gz
    if coding == "gzip, gzip":
        return zlib.compress(gz, 9, wbits=31)
    raise ValueError(coding)
