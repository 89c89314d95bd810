"""The compiled parts; everything else is in pyproject.toml.

- `neardup._kernels`: tokenize, word hashes, SimHash / MinHash sketches, pair verification (+ xxhash.h).
- `neardup._html`: main-content extraction and tag stripping over lexbor, vendored in neardup/vendor/lexbor
  (its HTML parser: the core, dom, html, ns and tag modules, Apache-2.0; one change, marked "neardup:" in
  core/hash.c: its name tables grow with their entries).
- `neardup._archives`: the compiled parts of the web archive readers: the records of a WARC.gz written a gzip
  member per record (_warc_members.c) and the page of an HTTP response block in one pass (_payload.c), over
  libdeflate's decompressor, vendored in neardup/vendor/libdeflate (MIT; its decompression and CRC-32
  sources, as released).
gcc and the Python headers build them at install; the lexbor sources compile on all cores.
"""

import os
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

LEXBOR = Path("neardup/vendor/lexbor")
LIBDEFLATE = Path("neardup/vendor/libdeflate/lib")
LIBDEFLATE_SOURCES = [  # its decompressors and CRC-32, and the CPU feature checks that pick their code
    str(LIBDEFLATE / name)
    for name in ("deflate_decompress.c", "gzip_decompress.c", "crc32.c", "utils.c")
    + ("x86/cpu_features.c", "arm/cpu_features.c")
]
LEXBOR_SOURCES = sorted(
    str(p) for m in ("core", "dom", "html", "ns", "tag", "ports/posix") for p in (LEXBOR / m).rglob("*.c")
)


def _is_gcc(command: list[str]) -> bool:
    try:
        out = subprocess.run([command[0], "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Free Software Foundation" in out and "clang" not in out


class ParallelBuildExt(build_ext):
    """build_ext with one compiler per core unless told otherwise (lexbor is ~160 files), and GCC's link-time
    optimization for the HTML extractor: lexbor's tokenizer and tree builder call across its files for
    every character and node, and inlining them across files makes the parse ~11% cheaper on real-size
    pages (bench/RESULTS.md; the same output, checked on 13,000 pages)."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        if _is_gcc(self.compiler.compiler_so):
            for ext in self.extensions:
                if ext.name == "neardup._html":
                    ext.extra_compile_args += ["-flto=auto"]
                    ext.extra_link_args += [
                        "-flto=auto",
                        *[a for a in ext.extra_compile_args if a.startswith("-O")],
                    ]
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "neardup._kernels",
            sources=["neardup/_kernels.c"],
            depends=["neardup/vendor/xxhash.h"],
            extra_compile_args=["-O3"],
        ),
        Extension(
            "neardup._html",
            sources=["neardup/_html.c", *LEXBOR_SOURCES],
            include_dirs=["neardup/vendor"],
            depends=["neardup/vendor/xxhash.h"],
            define_macros=[("LEXBOR_STATIC", None)],
            extra_compile_args=["-O2", "-fvisibility=hidden", "-Wno-unused-parameter"],
        ),
        Extension(
            "neardup._archives",
            sources=[
                "neardup/_archives.c",
                "neardup/_warc_members.c",
                "neardup/_payload.c",
                *LIBDEFLATE_SOURCES,
            ],
            include_dirs=["neardup/vendor"],
            depends=["neardup/_archives.h"],
            extra_compile_args=["-O2", "-fvisibility=hidden", "-Wno-sign-compare"],
            # libdeflate marks its functions for export: bound to its own copy, whatever else is loaded
            extra_link_args=["-Wl,-Bsymbolic"],
        ),
    ],
    cmdclass={"build_ext": ParallelBuildExt},
)
