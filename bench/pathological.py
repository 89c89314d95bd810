#!/usr/bin/env python3
"""Hostile page shapes: CPU seconds one page costs on each normalization path, at several sizes.

    .venv/bin/python bench/pathological.py                     # every shape, every path, three sizes
    .venv/bin/python bench/pathological.py --shapes div-chain,attributes --timeout 60

Each (shape, size, path) runs in a fresh child process (so a page that stalls costs at most --timeout
seconds of the run and is printed as `>N`), which builds the page, warms up on a small page, then times
one call with `time.process_time`. Paths:
  - `main`: `parse_page(mode="main")`, neardup's extractor (the default);
  - `resiliparse`: `parse_page(mode="main", extractor="resiliparse")`;
  - `strip`: `parse_page(mode="strip")`;
  - `parts`: `stripped_parts`, the app's "what tag stripping removed" view;
  - `canonical`: the `<link rel=canonical>` lookup ingest runs on every page.
The last column says what the main path made of the page: its degenerate reason, or its word count.
The target: no page costs more than 1 s of CPU on any path, whatever its shape.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = " ".join(["word"] * 80)


def _chain(open_tag: str, close_tag: str) -> Callable[[int], str]:
    return lambda n: f"<html><body>{open_tag * n}{WORDS}{close_tag * n}</body></html>"


# shape -> (page of size n, sizes)
SHAPES: dict[str, tuple[Callable[[int], str], tuple[int, ...]]] = {
    "div-chain": (_chain("<div>", "</div>"), (10_000, 50_000, 500_000)),
    "div-chain-unclosed": (lambda n: "<div>" * n + WORDS, (10_000, 50_000, 500_000)),
    "span-chain": (_chain("<span>", "</span>"), (10_000, 50_000, 500_000)),
    # the deepest nesting a page may have, over and over: the walks' worst case under the bound
    "div-chains-250": (
        lambda n: "<html><body>" + ("<div>" * 250 + "x" + "</div>" * 250) * n + WORDS,
        (100, 1_000, 2_900),
    ),
    "div-chains-250-links": (
        lambda n: "<html><body>" + ("<div>" * 250 + "<a href=/>x</a> y" + "</div>" * 250) * n,
        (100, 1_000, 2_900),
    ),
    "ul-chain": (_chain("<ul><li>", "</li></ul>"), (10_000, 50_000, 200_000)),
    "footer-chain": (_chain("<footer>", "</footer>"), (10_000, 50_000, 200_000)),
    "article-chain": (_chain("<article>", "</article>"), (10_000, 50_000, 200_000)),
    "b-distinct": (lambda n: "".join(f"<b id=b{i}>" for i in range(n)) + WORDS, (10_000, 50_000, 200_000)),
    "table-chain": (_chain("<table>", "</table>"), (10_000, 100_000)),
    "table-cell-chain": (_chain("<table><tr><td>", "</td></tr></table>"), (10_000, 100_000)),
    "template-chain": (_chain("<template>", "</template>"), (10_000, 100_000)),
    "svg-chain": (_chain("<svg>", "</svg>"), (10_000, 100_000)),
    "svg-g-chain": (lambda n: "<svg>" + "<g>" * n + WORDS, (10_000, 100_000)),
    "math-chain": (_chain("<math>", "</math>"), (10_000, 100_000)),
    "p-unclosed": (lambda n: "<html><body>" + "<p>x" * n, (100_000, 1_000_000)),
    "attributes": (
        lambda n: "<html><body><div " + " ".join(f"a{i}=x" for i in range(n)) + f">{WORDS}</div>",
        (10_000, 80_000, 400_000),
    ),
    "attribute-names-distinct": (
        lambda n: "<html><body>" + "".join(f"<p a{i}>w</p>" for i in range(n)),
        (10_000, 100_000, 300_000),
    ),
    # resiliparse's lexbor keeps names HTML does not define in tables of a fixed size
    "void-attribute-names": (
        lambda n: "<html><body>" + "".join(f"<br a{i}>" for i in range(n)) + WORDS,
        (10_000, 140_000),
    ),
    "attribute-names-250-per-element": (
        lambda n: (
            "<html><body>"
            + "".join("<p " + " ".join(f"a{e + j}" for j in range(250)) + ">w</p>" for e in range(0, n, 250))
        ),
        (10_000, 100_000),
    ),
    "tag-names-pairs": (
        lambda n: "<html><body>" + "".join(f"<x-{i}>w</x-{i}>" for i in range(n)),
        (10_000, 70_000),
    ),
    "tag-names-distinct": (
        lambda n: "<html><body>" + "".join(f"<x-{i}>w</x-{i}>" for i in range(n)),
        (10_000, 100_000, 300_000),
    ),
    "formatting-reopened": (
        lambda n: "<p>" + "".join(f"<b id=b{i}>" for i in range(200)) + "</p>" + "<p>x</p>" * n,
        (1_000, 10_000, 500_000),
    ),
    "attributes-256-repeated": (
        lambda n: "<html><body>" + ("<p " + " ".join(f"a{i}" for i in range(250)) + ">w</p>") * n,
        (100, 1_000, 6_000),
    ),
    # each repeated <body> adds its attribute to the one body element, compared with the ones it has
    "body-attributes-merged": (
        lambda n: "<html><body>w" + "".join(f"<body a{i}>" for i in range(n)),
        (10_000, 40_000),
    ),
    "attributes-dup": (lambda n: "<html><body><div " + "a=x " * n + f">{WORDS}</div>", (100_000, 1_000_000)),
    "classes-distinct": (
        lambda n: "<html><body>" + "".join(f'<p class="c{i}">w</p>' for i in range(n)),
        (10_000, 100_000, 300_000),
    ),
    "class-5mb": (lambda n: f'<html><body><div class="{"ab " * n}">{WORDS}</div>', (100_000, 1_700_000)),
    "style-5mb": (
        lambda n: f'<html><body><div class="a" style="{"color:red;" * n}">{WORDS}</div>',
        (50_000, 500_000),
    ),
    "attribute-value-5mb": (
        lambda n: f'<html><body><div title="{"x" * n}">{WORDS}</div>',
        (500_000, 5_000_000),
    ),
    "comment-5mb": (lambda n: f"<html><body><!--{'x' * n}-->{WORDS}", (500_000, 5_000_000)),
    "comments-many": (lambda n: "<html><body>" + "<!--c-->" * n + WORDS, (100_000, 600_000)),
    "scripts-many": (lambda n: "<html><body>" + "<script>var x=1;</script>" * n + WORDS, (10_000, 200_000)),
    "link-tags": (lambda n: "<html><head>" + "<link " * n, (2_000, 13_000)),
    "text-5mb": (lambda n: f"<html><body><p>{'word ' * n}</p>", (100_000, 1_000_000)),
}

PATHS = ("main", "resiliparse", "strip", "parts", "canonical")


def run_one(shape: str, size: int, path: str) -> dict:
    """In the child: build the page, warm up, time one call."""
    from neardup.config import DEFAULT_STRIP_TAGS
    from neardup.normalize import parse_page, stripped_parts
    from neardup.records import rel_canonical_href

    calls: dict[str, Callable[[str], object]] = {
        "main": lambda h: parse_page(h, mode="main"),
        "resiliparse": lambda h: parse_page(h, mode="main", extractor="resiliparse"),
        "strip": lambda h: parse_page(h, mode="strip"),
        "parts": lambda h: stripped_parts(h, strip_tags=DEFAULT_STRIP_TAGS),
        "canonical": rel_canonical_href,
    }
    build = SHAPES[shape][0]
    html = build(size)
    call = calls[path]
    call(build(10))
    t = time.process_time()
    result = call(html)
    cpu_s = time.process_time() - t
    outcome = ""
    if hasattr(result, "text"):
        degenerate = getattr(result, "degenerate", None)
        outcome = degenerate or f"{len(result.text.split()):,} words"
    return {"cpu_s": cpu_s, "outcome": outcome, "mb": len(html.encode("utf-8", "replace")) / 2**20}


def measure(shape: str, size: int, path: str, timeout_s: float) -> dict:
    cmd = [sys.executable, __file__, "--child", json.dumps([shape, size, path])]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return {"cpu_s": None, "outcome": f"> {timeout_s:.0f} s", "mb": None}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"cpu_s": None, "outcome": f"error: {last[:60]}", "mb": None}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", help="comma-separated (default: all): " + ", ".join(SHAPES))
    ap.add_argument("--paths", default=",".join(PATHS), help="comma-separated, of: " + ", ".join(PATHS))
    ap.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per page before it counts as stalled"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(run_one(*json.loads(args.child))))
        return
    shapes = args.shapes.split(",") if args.shapes else list(SHAPES)
    paths = args.paths.split(",")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=False
    ).stdout.strip()
    print(f"commit {commit}; CPU seconds per page (`>N`: stopped after N s of wall clock)\n")
    print(f"| shape | size | MB | {' | '.join(paths)} | main made of it |")
    print(f"|---|---:|---:|{'---:|' * len(paths)}---|")
    worst = 0.0
    for shape in shapes:
        for size in SHAPES[shape][1]:
            cells, mb, outcome = [], "", ""
            for path in paths:
                r = measure(shape, size, path, args.timeout)
                if r["cpu_s"] is None:
                    cells.append(r["outcome"])
                    worst = float("inf")
                else:
                    cells.append(f"{r['cpu_s']:.3f}")
                    worst = max(worst, r["cpu_s"])
                    mb = f"{r['mb']:.1f}"
                if path == "main":
                    outcome = r["outcome"]
            print(f"| {shape} | {size:,} | {mb} | {' | '.join(cells)} | {outcome} |", flush=True)
    print(
        f"\nworst page: {worst:.3f} CPU-s" if worst != float("inf") else "\nworst page: at least one stalled"
    )


if __name__ == "__main__":
    main()
