#!/usr/bin/env python3
"""The peer a skilled engineer builds in an afternoon: the three numbers of a JSON-lines crawl, nothing stored.

    .venv/bin/python bench/peers/expert_stack.py crawl.jsonl.gz [--jobs 2] [--json out.json]

Both cores (`multiprocessing.Pool` over ~2 MB batches of raw lines, the lines decoded in the workers),
orjson, resiliparse's main-content extraction (`HTMLTree.parse_from_bytes` +
`extract_plain_text(main_content=True)`), words joined into 5-word shingles, rensa's Rust MinHash
(`RMinHash.from_token_sets`, 128 permutations) and LSH (`RMinHashLSH`, 16 bands of 8 rows), candidates kept
when rensa's estimated Jaccard reaches 0.8, and a union-find. The three numbers, as redundant pages:
byte-identical (same MD5 of the HTML as an earlier page), exact (same words as an earlier page, the
byte-identical ones included), near (a distinct text in a near cluster, but its first), as neardup's report
counts them.

Nothing is kept: no HTML, no text, no signatures on disk, no per-page record beyond the run. It is the
reference `bench/bench.py` times neardup's `ingest` + first report against (neardup stores everything an
audit needs). Needs the `bench` extra (rensa); neardup is not imported.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from multiprocessing import Pool

import orjson
from rensa import RMinHash, RMinHashLSH
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

NUM_PERM = 128
SEED = 1
SHINGLE = 5
THRESHOLD = 0.8
BANDS = 16
BATCH_BYTES = 2 << 20


def read_batches(path: str) -> Iterator[list[bytes]]:
    """The dump's lines in batches of about BATCH_BYTES."""
    batch: list[bytes] = []
    size = 0
    with gzip.open(path, "rb") as f:
        for line in f:
            batch.append(line)
            size += len(line)
            if size >= BATCH_BYTES:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def work(lines: list[bytes]) -> tuple[list[bytes], list[bytes], list[RMinHash | None]]:
    """Per page: MD5 of the HTML, a key of its words, and the MinHash of its 5-word shingles (None when it
    has fewer than 5 words)."""
    md5s: list[bytes] = []
    keys: list[bytes] = []
    shingle_sets: list[list[str]] = []
    has_shingles: list[bool] = []
    for line in lines:
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        html = rec.get("html") if isinstance(rec, dict) else None
        if not isinstance(html, str):
            continue
        data = html.encode("utf-8", "surrogatepass")
        md5s.append(hashlib.md5(data).digest())
        text = extract_plain_text(HTMLTree.parse_from_bytes(data, "utf-8"), main_content=True)
        words = text.split()
        keys.append(hashlib.md5(" ".join(words).encode("utf-8", "surrogatepass")).digest())
        shingles = [" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)]
        has_shingles.append(bool(shingles))
        if shingles:
            shingle_sets.append(shingles)
    made = iter(RMinHash.from_token_sets(shingle_sets, NUM_PERM, SEED))
    return md5s, keys, [next(made) if h else None for h in has_shingles]


class UnionFind:
    def __init__(self) -> None:
        self.parent: list[int] = []

    def add(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def three_numbers(path: str, jobs: int) -> dict[str, int]:
    seen_md5: set[bytes] = set()
    key_ids: dict[bytes, int] = {}
    sketches: list[RMinHash] = []  # one per exact group with shingles, by its id in the LSH
    lsh = RMinHashLSH(THRESHOLD, NUM_PERM, BANDS)
    pages = byte_identical = exact = 0
    with Pool(jobs) as pool:
        for md5s, keys, mhs in pool.imap(work, read_batches(path)):
            for md5, key, mh in zip(md5s, keys, mhs, strict=True):
                pages += 1
                if md5 in seen_md5:
                    byte_identical += 1
                    continue
                seen_md5.add(md5)
                if key in key_ids:
                    exact += 1
                    continue
                key_ids[key] = -1
                if mh is not None:
                    key_ids[key] = len(sketches)
                    lsh.insert(len(sketches), mh)
                    sketches.append(mh)
    groups = UnionFind()
    for _ in sketches:
        groups.add()
    for i, mh in enumerate(sketches):
        for j in lsh.query(mh):
            if j > i and mh.jaccard(sketches[j]) >= THRESHOLD:
                groups.union(i, j)
    clusters = len({groups.find(i) for i in range(len(sketches))})
    return {
        "pages": pages,
        "byte_identical": byte_identical,
        "exact": byte_identical + exact,
        "near": len(sketches) - clusters,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("crawl", help="a .jsonl or .jsonl.gz dump with an `html` field per line")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="worker processes")
    ap.add_argument("--json", help="write the numbers and the wall seconds to this file")
    args = ap.parse_args(argv)
    start = time.monotonic()
    numbers = three_numbers(args.crawl, args.jobs)
    end = time.monotonic()
    out = {**numbers, "t_start": start, "t_end": end, "seconds": end - start}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f)
    else:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
