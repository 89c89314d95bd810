#!/usr/bin/env python3
"""What a C loop over a per-record WARC.gz's gzip members with libdeflate could save the main process.

    git clone https://github.com/ebiggers/libdeflate /tmp/libdeflate   # measured at 28e88e9 (v1.25-9)
    .venv/bin/python bench/studies/warc_member_inflate.py --libdeflate /tmp/libdeflate

FastWARC (the reader of a WARC.gz of one gzip member per record) inflates each member with its own zlib
(zlib-rs in FastWARC 2.0). The question: would a C loop over the members with a faster inflater, handing
FastWARC the inflated records, save the main process at least ~0.02 CPU-ms a page? Compiled here with gcc
(-O2, as setup.py builds the extensions) from libdeflate's decompression sources and the system zlib, called
through ctypes once for the whole file (or once per 4 MB of output), so no per-member call from Python.
Timed in one process, rounds interleaved, CPU time (`time.process_time`) per page of the file:

- FastWARC over the .warc.gz (what `WarcBatches` does today: its inflate, the record split, the block read);
- FastWARC over the same WARC inflated beforehand (the record split and the block read alone);
- the member loop alone, libdeflate (`libdeflate_gzip_decompress_ex`, which says how much input a member
  used) and zlib (`inflateReset` per member), inflating the whole file into one buffer;
- the integration at its cheapest: the libdeflate loop inflating whole members into a reused buffer up to
  4 MB at a time, each piece copied to a bytes object and read by FastWARC from a BytesIO.
"""

from __future__ import annotations

import argparse
import ctypes
import io
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fastwarc.warc import ArchiveIterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import bench_warc  # noqa: E402

LOOP_C = r"""
#include <string.h>
#include <zlib.h>
#include "libdeflate.h"

/* Inflate the gzip members of in[pos:n] into out until `want` bytes are out or the input ends.
   Returns the bytes out (or < 0: a member libdeflate cannot read); *next is the input offset after. */
long libdeflate_members(struct libdeflate_decompressor *d, const unsigned char *in, size_t n, size_t pos,
                        unsigned char *out, size_t cap, size_t want, size_t *next) {
    size_t o = 0;
    while (pos < n && o < want) {
        size_t in_used, out_used;
        enum libdeflate_result r = libdeflate_gzip_decompress_ex(d, in + pos, n - pos, out + o, cap - o,
                                                                  &in_used, &out_used);
        if (r != LIBDEFLATE_SUCCESS) return -1 - (long)r;
        pos += in_used;
        o += out_used;
    }
    *next = pos;
    return (long)o;
}

/* The same with zlib: one inflate state, reset per member. */
long zlib_members(const unsigned char *in, size_t n, unsigned char *out, size_t cap) {
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, 31) != Z_OK) return -1;
    size_t pos = 0, o = 0;
    while (pos < n) {
        inflateReset(&s);
        s.next_in = (unsigned char *)in + pos;
        s.avail_in = (uInt)(n - pos);
        s.next_out = out + o;
        s.avail_out = (uInt)(cap - o);
        if (inflate(&s, Z_FINISH) != Z_STREAM_END) { inflateEnd(&s); return -1; }
        pos = n - s.avail_in;
        o = cap - s.avail_out;
    }
    inflateEnd(&s);
    return (long)o;
}
"""
LIBDEFLATE_SOURCES = (
    "lib/deflate_decompress.c",
    "lib/gzip_decompress.c",
    "lib/crc32.c",
    "lib/utils.c",
    "lib/x86/cpu_features.c",
    "lib/arm/cpu_features.c",
)
OUT_CAPACITY = 256 << 20
PIECE_BYTES = 4 << 20


def build(libdeflate: Path, workdir: Path) -> ctypes.CDLL:
    """The member loops as a shared library: libdeflate's decompression sources and the system zlib."""
    loop = workdir / "member_loop.c"
    loop.write_text(LOOP_C)
    lib = workdir / "member_loop.so"
    sources = [str(loop), *(str(libdeflate / s) for s in LIBDEFLATE_SOURCES)]
    cmd = ["gcc", "-O2", "-fPIC", "-shared", f"-I{libdeflate}", f"-I{libdeflate / 'lib'}", "-o", str(lib)]
    subprocess.run([*cmd, *sources, "-lz"], check=True)
    dll = ctypes.CDLL(str(lib))
    size_p = ctypes.POINTER(ctypes.c_size_t)
    dll.libdeflate_alloc_decompressor.restype = ctypes.c_void_p
    dll.libdeflate_members.restype = ctypes.c_long
    dll.libdeflate_members.argtypes = [ctypes.c_void_p, ctypes.c_char_p, *[ctypes.c_size_t] * 2]
    dll.libdeflate_members.argtypes += [ctypes.c_void_p, *[ctypes.c_size_t] * 2, size_p]
    dll.zlib_members.restype = ctypes.c_long
    dll.zlib_members.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    return dll


def read_blocks(stream: io.BufferedIOBase | io.BytesIO) -> int:
    """FastWARC's pass as `WarcBatches` makes it: every record, its block read."""
    records = 0
    for rec in ArchiveIterator(stream, parse_http=False):
        rec.reader.read()
        records += 1
    return records


def steps(dll: ctypes.CDLL, path: Path) -> dict[str, Callable[[], int]]:
    """The timed steps, each returning the records (or bytes) it read."""
    data = path.read_bytes()
    out = ctypes.create_string_buffer(OUT_CAPACITY)
    decompressor = dll.libdeflate_alloc_decompressor()
    after = ctypes.c_size_t()

    def whole_libdeflate() -> int:
        got = dll.libdeflate_members(decompressor, data, len(data), 0, out, OUT_CAPACITY, OUT_CAPACITY, after)
        assert got > 0 and after.value == len(data), got
        return int(got)

    def whole_zlib() -> int:
        got = dll.zlib_members(data, len(data), out, OUT_CAPACITY)
        assert got > 0, got
        return int(got)

    plain = ctypes.string_at(out, whole_libdeflate())

    def fastwarc_gz() -> int:
        with open(path, "rb") as f:
            return read_blocks(f)

    def in_pieces() -> int:
        pos, records = 0, 0
        while pos < len(data):
            got = dll.libdeflate_members(
                decompressor, data, len(data), pos, out, OUT_CAPACITY, PIECE_BYTES, after
            )
            assert got > 0, got
            pos = after.value
            records += read_blocks(io.BytesIO(ctypes.string_at(out, got)))
        return records

    return {
        "FastWARC over the .warc.gz": fastwarc_gz,
        "FastWARC over the inflated WARC": lambda: read_blocks(io.BytesIO(plain)),
        "member loop, libdeflate": whole_libdeflate,
        "member loop, zlib 1.2 (system)": whole_zlib,
        "libdeflate 4 MB pieces + FastWARC": in_pieces,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libdeflate", type=Path, required=True, help="a checkout of ebiggers/libdeflate")
    ap.add_argument(
        "--pages", type=int, default=None, help="bench_warc's generated crawl (default: the sample)"
    )
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args()
    path = bench_warc.inputs(args.pages)["warc.gz"]
    with tempfile.TemporaryDirectory() as tmp:
        timed = steps(build(args.libdeflate, Path(tmp)), path)
        pages = timed["FastWARC over the .warc.gz"]()
        runs: dict[str, list[float]] = {name: [] for name in timed}
        for _ in range(args.rounds):
            for name, fn in timed.items():
                t0 = time.process_time()
                fn()
                runs[name].append((time.process_time() - t0) * 1e3 / pages)
    print(f"{path.name}: {pages:,} records, {path.stat().st_size / 1e6:.1f} MB, {args.rounds} rounds")
    print("| step | min CPU-ms/page | median CPU-ms/page |\n| --- | ---: | ---: |")
    for name, ms in runs.items():
        print(f"| {name} | {min(ms):.4f} | {statistics.median(ms):.4f} |")
    base = runs["FastWARC over the .warc.gz"]
    cheapest = [
        a + b
        for a, b in zip(runs["member loop, libdeflate"], runs["FastWARC over the inflated WARC"], strict=True)
    ]
    for name, ms in (
        ("at most (libdeflate's loop + FastWARC's split, no copy)", cheapest),
        ("by the 4 MB pieces", runs["libdeflate 4 MB pieces + FastWARC"]),
    ):
        saved = [b - a for a, b in zip(ms, base, strict=True)]
        print(
            f"saved {name}, per round: median {statistics.median(saved):.4f}, "
            f"range {min(saved):.4f} .. {max(saved):.4f} CPU-ms/page"
        )


if __name__ == "__main__":
    main()
