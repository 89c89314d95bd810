"""The compiled parts; everything else is in pyproject.toml.

- `neardup._kernels`: tokenize, word hashes, SimHash / MinHash sketches, pair verification (+ xxhash.h).
- `neardup._html`: main-content extraction and tag stripping over lexbor, vendored in neardup/vendor/lexbor
  (its HTML parser: the core, dom, html, ns and tag modules, Apache-2.0; one change, marked "neardup:" in
  core/hash.c: its name tables grow with their entries).
gcc and the Python headers build them at install; the lexbor sources compile on all cores.
"""

import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

LEXBOR = Path("neardup/vendor/lexbor")
LEXBOR_SOURCES = sorted(
    str(p) for m in ("core", "dom", "html", "ns", "tag", "ports/posix") for p in (LEXBOR / m).rglob("*.c")
)


class ParallelBuildExt(build_ext):
    """build_ext with one compiler per core unless told otherwise (lexbor is ~160 files)."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1


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
    ],
    cmdclass={"build_ext": ParallelBuildExt},
)
