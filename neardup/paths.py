"""Which server-side files the app may read: those under the data roots.

A shared server's app must not become a way to read the server's files. A path typed on the Load page
is resolved (symlinks and `..` followed) and must land inside one of the roots: the folders named by
NEARDUP_DATA_DIR (os.pathsep-separated), else the working directory and the bundled sample_data/.
Every refusal is the same sentence, whether the file is missing, a folder, or outside the roots, so the
answer tells nothing about the server's files. `neardup app --allow-any-path` (NEARDUP_ALLOW_ANY_PATH=1)
lifts the rule on a personal machine. The CLI does not use this module: its user owns the shell.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from .errors import NeardupError, NotACrawlDump

DATA_DIR_ENV = "NEARDUP_DATA_DIR"
ALLOW_ANY_PATH_ENV = "NEARDUP_ALLOW_ANY_PATH"
SAMPLE_DIR = (
    Path(__file__).resolve().parent / "sample_data"
)  # package data; a link to ../sample_data in a checkout


class PathRefused(NeardupError):
    """A server-side path the app will not read."""


def allow_any_path(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(ALLOW_ANY_PATH_ENV, "") == "1"


def data_roots(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """The folders server-side paths must lie in, resolved."""
    named = [p for p in environ.get(DATA_DIR_ENV, "").split(os.pathsep) if p.strip()]
    roots = [Path(p).expanduser() for p in named] if named else [Path.cwd(), SAMPLE_DIR]
    return [Path(os.path.realpath(r)) for r in roots]


def server_path(text: str, *, roots: Sequence[Path] | None = None, allow_any: bool | None = None) -> Path:
    """The real path of a regular file the app may read, or PathRefused (one message for every refusal)."""
    roots = data_roots() if roots is None else roots
    allow_any = allow_any_path() if allow_any is None else allow_any
    refused = PathRefused(
        "Not loaded: give the path of a crawl dump inside the data folders this server reads "
        f"({', '.join(str(r) for r in roots)}; set {DATA_DIR_ENV} to change them)"
    )
    text = text.strip()
    if not text or "\x00" in text:
        raise refused
    real = Path(os.path.realpath(Path(text).expanduser()))
    inside = allow_any or any(real.is_relative_to(root) for root in roots)
    try:
        is_file = inside and real.is_file()
    except OSError:  # a path too long, or a folder that cannot be searched
        is_file = False
    if not is_file:
        raise refused
    return real


def shown_error(exc: NeardupError, *, path: Path, shown: str, detail: bool) -> str:
    """What the app says when a dump cannot be loaded. Without `detail`, a file that is not a crawl dump gets
    a fixed sentence, since ingest's message quotes the file (a CSV's column names, a JSON record's keys);
    with it (an upload, the user's own file, or --allow-any-path), the message with the shown name for the
    server's path."""
    if isinstance(exc, NotACrawlDump) and not detail:
        return (
            f"{shown} is not a crawl dump neardup can read: JSON lines, CSV or Parquet with a url and an "
            "html (or text) field, or a WARC, ARC or WACZ web archive"
        )
    return str(exc).replace(str(path), shown)


UPLOAD_CHUNK_BYTES = 1 << 20


def save_upload(upload: BinaryIO, name: str, folder: Path) -> Path:
    """Copy an uploaded file (any binary file object) into `folder` in 1 MB chunks, under its base name (which
    tells ingest the format); a name that is no file name (`..`, empty) becomes `upload`."""
    base = Path(name.replace("\\", "/")).name
    target = folder / (base if base not in ("", ".", "..") and "\x00" not in base else "upload")
    upload.seek(0)
    with target.open("wb") as out:
        shutil.copyfileobj(upload, out, UPLOAD_CHUNK_BYTES)
    return target
