#!/usr/bin/env python3
"""How much cheaper main-content extraction could be in C. An experiment: nothing in neardup uses it.

    .venv/bin/python bench/lexbor_probe.py                 # 3,000 pages of the cached 10k crawl
    .venv/bin/python bench/lexbor_probe.py --pages 5000

resiliparse's parse + main-content extraction is 0.57 of the 0.81 CPU-ms an ingest worker spends per page
(`bench/ingest_floor.py`), and it is what keeps 100k pages above 60 s. This script fetches selectolax's
source distribution from PyPI (it bundles lexbor's C sources, Apache-2.0) into bench/data/, compiles
lexbor's HTML parser (core, dom, html, ns, tag: ~10 s on two cores) and `lexbor_probe/probe.c`, then, on
the same pages, one core, best of 3 passes:
  - times resiliparse's parse + main-content extraction, as `normalize: main` runs it;
  - times the C probe: lexbor parse, a walk of <body> that skips subtrees by tag and by a crude list of
    30 class/id words, the text collected; once creating a lexbor document per page, once reusing one;
  - compares the probe's text with resiliparse's (5-shingle Jaccard per page). The probe's rules are a
    stand-in: agreement on this synthetic crawl says nothing about real pages.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import statistics
import struct
import subprocess
import sys
import tarfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import bench as local_bench  # noqa: E402  (crawl cache)
from neardup.ingest import detect_format, read_raw, validate  # noqa: E402
from neardup.normalize import _collapse, parse_page  # noqa: E402
from neardup.shingles import words  # noqa: E402

DATA = BENCH / "data"
LEXBOR_MODULES = ("core", "dom", "html", "ns", "tag")


def lexbor_source() -> Path:
    """lexbor's `source/` directory from the sdist of the installed selectolax, downloaded once."""
    version = importlib.metadata.version("selectolax")
    root = DATA / f"selectolax-{version}"
    if not (root / "lexbor" / "source").is_dir():
        index = urllib.request.urlopen("https://pypi.org/simple/selectolax/", timeout=60).read().decode()
        match = re.search(rf'href="([^"]*selectolax-{re.escape(version)}\.tar\.gz)[#"]', index)
        if not match:
            raise SystemExit(f"no sdist of selectolax {version} on PyPI")
        sdist = DATA / f"selectolax-{version}.tar.gz"
        urllib.request.urlretrieve(match.group(1), sdist)
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if "/lexbor/" in m.name]
            tar.extractall(DATA, members=members, filter="data")
    return root / "lexbor" / "source"


def build_probe(source: Path) -> Path:
    build = source.parent / "build"
    build.mkdir(exist_ok=True)
    files = [p for m in LEXBOR_MODULES for p in (source / "lexbor" / m).rglob("*.c")]
    files += list((source / "lexbor" / "ports" / "posix").rglob("*.c"))
    include = ["-I", str(source), "-I", str(source / "lexbor" / "ports" / "posix")]

    def compile_one(c: Path) -> Path:
        obj = build / (str(c.relative_to(source)).replace("/", "_") + ".o")
        if not obj.is_file():
            subprocess.run(["gcc", "-O2", "-fPIC", *include, "-c", str(c), "-o", str(obj)], check=True)
        return obj

    with ThreadPoolExecutor(max_workers=2) as pool:
        objects = list(pool.map(compile_one, files))
    exe = build / "probe"
    subprocess.run(["gcc", "-O2", *include, str(BENCH / "lexbor_probe" / "probe.c"), *map(str, objects),
                    "-o", str(exe)], check=True)
    return exe


def best_cpu_ms(step, n: int, repeats: int = 3) -> float:
    step()
    runs = []
    for _ in range(repeats):
        t = time.process_time()
        step()
        runs.append((time.process_time() - t) * 1000 / n)
    return min(runs)


def shingles(text: str, k: int = 5) -> set[str]:
    w = words(text)
    return {" ".join(w[i:i + k]) for i in range(max(1, len(w) - k + 1))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--crawl-pages", type=int, default=10_000, help="which cached make_crawl dump (default 10000)")
    ap.add_argument("--pages", type=int, default=3000, help="pages sampled from its start (default 3000)")
    args = ap.parse_args(argv)

    crawl, _ = local_bench.ensure_crawl(args.crawl_pages, 42, None)
    recs = [r for r in map(validate, islice(read_raw(crawl, detect_format(crawl)), args.pages))
            if not isinstance(r, str) and r["html"] is not None]
    htmls = [r["html"] for r in recs]
    pages_bin = DATA / "lexbor_probe_pages.bin"
    with open(pages_bin, "wb") as f:
        for html in htmls:
            data = html.encode("utf-8")
            f.write(struct.pack("<I", len(data)) + data)

    exe = build_probe(lexbor_source())
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    resiliparse_ms = best_cpu_ms(lambda: [extract_plain_text(HTMLTree.parse(h), main_content=True, alt_texts=False,
                                                             preserve_formatting=False) for h in htmls], len(htmls))
    timings = {}
    for mode in ("new", "reuse"):
        out = subprocess.run([str(exe), str(pages_bin), mode, str(DATA / "lexbor_probe_texts.bin")],
                             check=True, capture_output=True, text=True).stdout
        timings[mode] = min(float(m) for m in re.findall(r"([\d.]+) CPU-ms/page", out))

    data = (DATA / "lexbor_probe_texts.bin").read_bytes()
    probe_texts, off = [], 0
    while off < len(data):
        (n,) = struct.unpack_from("<I", data, off)
        probe_texts.append(_collapse(data[off + 4:off + 4 + n].decode("utf-8", "replace")))
        off += 4 + n
    ref = [parse_page(h, mode="main").text for h in htmls]
    jaccard = []
    for a, b in zip(probe_texts, ref, strict=True):
        sa, sb = shingles(a), shingles(b)
        jaccard.append(len(sa & sb) / max(1, len(sa | sb)))

    print(f"{len(htmls):,} pages of `{crawl.name}`, CPU ms per page, one core, best of 3\n")
    print("| extraction | CPU ms/page |\n|---|---:|")
    print(f"| resiliparse parse + main-content extraction (`normalize: main`) | {resiliparse_ms:.3f} |")
    print(f"| C probe: lexbor parse + rule walk, a new document per page | {timings['new']:.3f} |")
    print(f"| C probe: the same, one document cleaned and reused | {timings['reuse']:.3f} |")
    deciles = statistics.quantiles(jaccard, n=10)
    print(f"\nThe probe's text against resiliparse's, 5-shingle Jaccard per page: median "
          f"{statistics.median(jaccard):.3f}, 10th percentile {deciles[0]:.3f}, minimum {min(jaccard):.3f}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
