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

With --quality it also scores the probe as `normalize: main` against ground truth (the bundled sample and
the cached 10k crawl): pairwise precision / recall / F1 at the default setting and its neighbours, the
probe's text replacing resiliparse's in an otherwise unchanged engine (one process, through ctypes).
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


def build_probe(source: Path) -> tuple[Path, Path]:
    """The probe executable and the same code as a shared library (for --quality)."""
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
    exe, lib = build / "probe", build / "probe.so"
    probe_c = str(BENCH / "lexbor_probe" / "probe.c")
    subprocess.run(["gcc", "-O2", *include, probe_c, *map(str, objects), "-o", str(exe)], check=True)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-DPROBE_LIB", *include, probe_c, *map(str, objects),
                    "-o", str(lib)], check=True)
    return exe, lib


def probe_parse_page(lib_path: Path):
    """A `parse_page` whose `main` mode is the probe's text (and title); `strip`, and the fallback for pages
    with under MAIN_FALLBACK_WORDS words of main text, stay neardup's."""
    import ctypes

    from neardup import normalize

    lib = ctypes.CDLL(str(lib_path))
    lib.probe_extract.restype = ctypes.c_size_t
    lib.probe_extract.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
    real = normalize.parse_page

    def parse_page(html: str, *, mode: str = "strip", strip_tags=normalize.DEFAULT_STRIP_TAGS):
        if mode != "main":
            return real(html, mode=mode, strip_tags=strip_tags)
        data = html.encode("utf-8")
        out = ctypes.create_string_buffer(2 * len(data) + 64)
        n = lib.probe_extract(data, len(data), out)
        title, _, text = out.raw[:n].partition(b"\0")
        text = _collapse(text.decode("utf-8", "replace"))
        if text.count(" ") + 1 < normalize.MAIN_FALLBACK_WORDS:
            return real(html, mode="strip", strip_tags=strip_tags)
        return normalize.ParsedPage(text, _collapse(title.decode("utf-8", "replace")))

    return parse_page


def quality(lib: Path) -> None:
    """Pairwise scores of resiliparse's `main` and the probe's, on the sample and the 10k crawl."""
    import tempfile

    from neardup import engine
    from neardup.config import Config
    from neardup.evaluate import load_truth, pairwise_scores
    from neardup.store import Store

    crawl, crawl_truth = local_bench.ensure_crawl(10_000, 42, None)
    inputs = [(BENCH.parent / "sample_data" / "crawl.jsonl.gz", BENCH.parent / "sample_data" / "truth.csv"),
              (crawl, crawl_truth)]
    settings = [("minhash", "containment", 0.8), ("minhash", "containment", 0.7), ("minhash", "jaccard", 0.8),
                ("minhash", "jaccard", 0.6), ("simhash", "jaccard", 6)]
    real = engine.parse_page
    print("\n| input | main text | method | similarity | threshold | precision | recall | F1 | impure clusters |"
          " degenerate merged |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for dump, truth_csv in inputs:
        truth = load_truth(truth_csv)
        for name, parse in (("resiliparse", real), ("C probe", probe_parse_page(lib))):
            engine.parse_page = parse
            try:
                with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "q.duckdb") as store:
                    engine.ingest_file(store, dump, Config(), jobs=1)
                    for method, similarity, threshold in settings:
                        config = Config(method=method, similarity=similarity, threshold=threshold)
                        fp = engine.load_fingerprints(store, config, jobs=1)
                        s = pairwise_scores(engine.analyze(fp, config).pages, truth)
                        print(f"| {dump.name} | {name} | {method} | {similarity if method == 'minhash' else 'hamming'}"
                              f" | {threshold} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} | "
                              f"{s.impure_clusters} | {s.degenerate_in_clusters} |", flush=True)
            finally:
                engine.parse_page = real


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
    ap.add_argument("--quality", action="store_true", help="also score the probe against ground truth")
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

    exe, lib = build_probe(lexbor_source())
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
    if args.quality:
        quality(lib)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
