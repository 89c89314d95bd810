"""Write a JSON-lines crawl dump as a WARC.gz a crawler could have written: the same pages, in the same order.

One gzip member per record (as crawlers write them), or with `--one-stream` the whole file as one gzip
stream (a third of the size: the sample ships so), and one record per input line, so record *i* is line
*i* and the sample's truth.csv describes both forms. No warcinfo or request records (they would shift
the record numbers). What varies, deterministically by line number, is what a reader must undo:

- pages whose HTML windows-1252 can hold, on the Pinecrest Outfitters hosts, are sent in windows-1252
  with the charset in the HTTP header (their own `<meta charset="utf-8">` is overruled by it);
- every tenth record is sent with `Content-Encoding: gzip`, every seventh with chunked transfer;
- a record whose URL and HTML repeat an earlier record is a `revisit` (identical payload digest)
  pointing at it, as a deduplicating crawler writes it;
- the others declare `charset=utf-8` on even lines and no charset on odd ones (the `<meta>` decides).

    python scripts/jsonl_to_warc.py --one-stream sample_data/crawl.jsonl.gz sample_data/crawl.warc.gz

Stdlib only; the same input gives the same bytes (record ids are derived from the line number).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import sys
import uuid
from http import HTTPStatus
from pathlib import Path
from typing import BinaryIO

CP1252_HOSTS = ("pinecrestoutfitters.com",)
REVISIT_PROFILE = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"


def _sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _record_id(line: int) -> str:
    return f"<urn:uuid:{uuid.UUID(bytes=hashlib.md5(f'neardup-sample-{line}'.encode()).digest())}>"


def _chunked(body: bytes, size: int = 4096) -> bytes:
    parts = [
        b"%x\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size]) for i in range(0, len(body), size)
    ]
    return b"".join(parts) + b"0\r\n\r\n"


def _warc_record(fields: list[tuple[str, str]], block: bytes) -> bytes:
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields)
    head += f"Content-Length: {len(block)}\r\n\r\n"
    return head.encode("utf-8") + block + b"\r\n\r\n"


def _http_head(status: int, headers: list[tuple[str, str]]) -> bytes:
    reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def convert(lines: BinaryIO, out: BinaryIO, *, per_record: bool = True) -> dict[str, int]:
    """Write the records of `lines` to `out`, each record its own gzip member when `per_record`, else
    uncompressed (the caller compresses the stream)."""
    counts = {"records": 0, "windows-1252": 0, "gzip": 0, "chunked": 0, "revisit": 0}
    # (url, digest of the decoded payload) -> the first record's id, date and payload digest
    seen: dict[tuple[str, str], tuple[str, str, str]] = {}
    for number, raw in enumerate(lines, start=1):
        rec = json.loads(raw)
        url, html, date, status = rec["url"], rec["html"], rec["fetched_at"], int(rec.get("status") or 200)
        host = url.split("/")[2]
        charset = "utf-8"
        if host.endswith(CP1252_HOSTS):
            try:
                payload = html.encode("cp1252")
                charset = "windows-1252"
            except UnicodeEncodeError:
                payload = html.encode("utf-8")
        else:
            payload = html.encode("utf-8")
        declared = charset if charset != "utf-8" or number % 2 == 0 else None
        headers = [
            ("Content-Type", "text/html" + (f"; charset={declared}" if declared else "")),
            ("Date", date),
        ]
        body = payload
        if number % 10 == 0:
            body = gzip.compress(payload, compresslevel=6, mtime=0)
            headers.append(("Content-Encoding", "gzip"))
            counts["gzip"] += 1
        digest = _sha1(body)  # the payload as transferred (before transfer coding)
        if number % 7 == 0:
            body = _chunked(body)
            headers.append(("Transfer-Encoding", "chunked"))
            counts["chunked"] += 1
        else:
            headers.append(("Content-Length", str(len(body))))
        record_id = _record_id(number)
        fields = [
            ("WARC-Type", "response"),
            ("WARC-Record-ID", record_id),
            ("WARC-Date", date),
            ("WARC-Target-URI", url),
            ("WARC-Payload-Digest", digest),
        ]
        original = seen.get((url, _sha1(payload)))
        if original is not None:  # the crawler keeps the headers only; the digest is the original's
            block = _http_head(status, headers)
            fields[0] = ("WARC-Type", "revisit")
            fields[-1] = ("WARC-Payload-Digest", original[2])
            fields += [
                ("WARC-Profile", REVISIT_PROFILE),
                ("WARC-Refers-To", original[0]),
                ("WARC-Refers-To-Target-URI", url),
                ("WARC-Refers-To-Date", original[1]),
            ]
            counts["revisit"] += 1
        else:
            block = _http_head(status, headers) + body
            seen[(url, _sha1(payload))] = (record_id, date, digest)
        fields += [
            ("WARC-Block-Digest", _sha1(block)),
            ("Content-Type", "application/http; msgtype=response"),
        ]
        data = _warc_record(fields, block)
        out.write(gzip.compress(data, compresslevel=6, mtime=0) if per_record else data)
        counts["records"] += 1
        counts["windows-1252"] += charset == "windows-1252"
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "jsonl", type=Path, help="input .jsonl or .jsonl.gz ({url, html, fetched_at, status} per line)"
    )
    ap.add_argument("warc", type=Path, help="output .warc.gz")
    ap.add_argument(
        "--one-stream", action="store_true", help="gzip the whole file as one stream, not per record"
    )
    a = ap.parse_args(argv)
    opener = gzip.open if a.jsonl.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(a.jsonl, "rb") as lines, open(a.warc, "wb") as raw:
        if a.one_stream:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as out:
                counts = convert(lines, out, per_record=False)  # type: ignore[arg-type]
        else:
            counts = convert(lines, raw)
    print(" ".join(f"{k}={v}" for k, v in counts.items()), f"bytes={a.warc.stat().st_size}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
