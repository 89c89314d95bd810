"""Which reader a file needs: its format from its magic bytes (gunzipped when gzipped) and its name."""

from __future__ import annotations

import gzip
import stat
import zlib
from pathlib import Path

from ..errors import NotACrawlDump
from .arc import is_arc_head
from .inflate import GZIP_MAGIC
from .jsonl import UTF8_BOM
from .wacz import is_wacz
from .warc import is_framed_warc, is_warc_head

PARQUET_MAGIC = b"PAR1"

_ARCHIVE_NAMES = {
    ".warc": "a WARC file (no WARC/ header)",
    ".wet": "a WARC file (no WARC/ header)",
    ".arc": "an ARC file (no filedesc:// header)",
    ".wacz": "a WACZ file (no ZIP with a datapackage.json or archive/)",
}


def detect_format(path: Path) -> str:
    """'jsonl', 'csv', 'parquet', 'warc', 'arc' or 'wacz', from the magic bytes and the name; NotACrawlDump
    otherwise, and for what is not a regular file (a folder, a device such as /dev/null, a FIFO: a dump is
    read twice, for its hash and its records) or is empty."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise NotACrawlDump(f"{path}: no such file") from None
    except OSError as exc:
        raise NotACrawlDump(f"{path}: cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise NotACrawlDump(f"{path}: a folder, not a crawl dump (give the files in it)")
    if not stat.S_ISREG(mode):
        raise NotACrawlDump(f"{path}: not a regular file (a device, FIFO or socket), not a crawl dump")
    if path.stat().st_size == 0:
        raise NotACrawlDump(f"{path}: an empty file, not a crawl dump")
    with open(path, "rb") as f:
        head = f.read(4096)
    name = path.name.lower().removesuffix(".gz")
    if head[:4] == PARQUET_MAGIC:
        return "parquet"
    if is_wacz(path):
        return "wacz"
    if head[:2] == GZIP_MAGIC:
        try:
            with gzip.open(path, "rb") as g:
                head = g.read(4096)
        except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a later member is corrupt
            head = _inflate_head(path)  # a file cut short still has a readable start (read_batches keeps it)
            if not head:
                raise NotACrawlDump(f"{path}: a broken gzip file ({exc})") from None
    if is_warc_head(head) or is_framed_warc(path):
        return "warc"
    if is_arc_head(head):
        return "arc"
    suffix = name[name.rfind(".") :]
    if suffix in _ARCHIVE_NAMES:
        raise NotACrawlDump(f"{path}: named {suffix} but not {_ARCHIVE_NAMES[suffix]}")
    if name.endswith(".parquet"):
        raise NotACrawlDump(f"{path}: named .parquet but not a Parquet file")
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".jsonl", ".ndjson", ".json")) or head.removeprefix(UTF8_BOM).lstrip()[:1] == b"{":
        return "jsonl"
    raise NotACrawlDump(
        f"{path}: not a crawl dump (expected .jsonl, .jsonl.gz, .ndjson, .csv or .parquet with url and html fields,"
        " or a WARC, ARC or WACZ file)"
    )


def _inflate_head(path: Path) -> bytes:
    """The first decompressed bytes of a gzip file that may end early; b"" when its start is broken too."""
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    try:
        return zlib.decompressobj(wbits=31).decompress(data, 4096)
    except zlib.error:
        return b""
