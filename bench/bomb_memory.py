#!/usr/bin/env python3
"""Peak memory of ingesting a WARC whose one HTML response is a decompression bomb (Content-Encoding gzip,
deflate, br, "gzip, gzip"), 1 GB and 2 GB inflated, against the same WARC without it.

    PYTHONPATH=. .venv/bin/python bench/bomb_memory.py            # 1 GB and 2 GB, each encoding
    PYTHONPATH=. .venv/bin/python bench/bomb_memory.py --gb 1

Each ingest runs in a process of its own (`engine.ingest_file`, `jobs=1`: the record is decoded in that
process), which reports its peak RSS (`ru_maxrss`). The bombs are made by tests/bombs.py (spaces)."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bombs import bomb  # noqa: E402
from warcio.statusandheaders import StatusAndHeaders  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

CODINGS = ("gzip", "deflate", "br", "gzip, gzip")
PAGE = (
    b"<html><head><title>A page</title></head><body><p>" + b"words of a page " * 200 + b"</p></body></html>"
)
CHILD = """
import json, resource, sys
from neardup import engine
from neardup.config import Config
from neardup.store import Store
store = Store(sys.argv[2])
summary = engine.ingest_file(store, sys.argv[1], Config(), jobs=1)
store.close()
print(json.dumps({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "loaded": summary.loaded, "reasons": summary.reasons}))
"""


def write_warc(path: Path, body: bytes | None, coding: str) -> None:
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        pages = [("http://site.test/page", PAGE, [("Content-Type", "text/html")])]
        if body is not None:
            pages.append(
                ("http://site.test/bomb", body, [("Content-Type", "text/html"), ("Content-Encoding", coding)])
            )
        for url, payload, headers in pages:
            http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
            w.write_record(
                w.create_warc_record(url, "response", payload=io.BytesIO(payload), http_headers=http)
            )


def peak(path: Path, tmp: Path) -> dict[str, object]:
    db = tmp / "db.duckdb"
    db.unlink(missing_ok=True)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(db)], capture_output=True, text=True, check=True, cwd=tmp
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base = tmp / "base.warc.gz"
        write_warc(base, None, "")
        print(f"without a bomb: peak RSS {peak(base, tmp)['rss_mb']:.0f} MB")
        print("| encoding | inflated | record bytes | peak RSS MB | reject |")
        print("| --- | ---: | ---: | ---: | --- |")
        for gb in args.gb:
            for coding in CODINGS:
                body = bomb(coding, gb * 1024)
                path = tmp / "bomb.warc.gz"
                write_warc(path, body, coding)
                result = peak(path, tmp)
                reasons = ", ".join(f"{n} x {r}" for r, n in result["reasons"].items())  # type: ignore[attr-defined]
                print(
                    f"| {coding} | {gb} GB | {len(body):,} | {result['rss_mb']:.0f} | {reasons} |", flush=True
                )
                path.unlink()


if __name__ == "__main__":
    main()
