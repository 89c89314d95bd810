"""The Python environment a cluster's executors run `neardup spark` in, packed as one archive.

Spark ships an archive to every executor with `spark.archives=ARCHIVE#environment`, unpacks it in the
executor's working folder and starts the Python workers with `spark.pyspark.python=./environment/bin/python`
(Spark's "Python Package Management": venv-pack, conda-pack, PEX). `pack_environment` writes the venv-pack
layout straight from this interpreter's installed files, with no staging venv and no download:

- `lib/pythonX.Y/site-packages/`: the `neardup` package as imported here (its compiled extensions
  included) and every distribution in the closure of neardup's runtime requirements, each from the files
  its installer recorded (RECORD), so the executors run the very versions the driver runs. pyspark and
  py4j are left out: the cluster's own Spark puts its copies on the workers' path.
- `bin/python`, a link to this interpreter's base Python, and `pyvenv.cfg` naming its folder, as in
  a venv. The archive carries packages, not the interpreter: like venv-pack's archives, it needs the
  same Python (version and path) on the executors' nodes, on the same platform (the extensions are
  compiled for it). A cluster whose nodes differ takes a conda-pack archive, which holds its Python,
  through `--python-env ARCHIVE`.

The archive is named by a hash of what goes in (versions, the recorded file hashes, neardup's own
files) and kept in a cache folder, so a second run with the same environment reuses it.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import sys
import sysconfig
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ..errors import NeardupError

# Bump when the archive's layout changes: older archives in the cache are then not reused.
LAYOUT_VERSION = 1
CACHE_ENV = "NEARDUP_CACHE_DIR"
ARCHIVE_ALIAS = "environment"
EXECUTOR_PYTHON = f"./{ARCHIVE_ALIAS}/bin/python"
# The cluster's Spark provides these to its Python workers (pyspark.zip, py4j-*.zip on their path).
PROVIDED_BY_SPARK = frozenset({"pyspark", "py4j"})
# Parts of the package folder that are not the package: C sources, build leftovers, the sample link.
NOT_SHIPPED = frozenset({"__pycache__", "vendor", "sample_data"})
# Archives kept in the cache folder, the most recently used first (~220 MB each).
KEEP_ARCHIVES = 3
# gzip level 1: ~3x level 6's speed for ~10% more bytes; the archive is written once per environment.
GZIP_LEVEL = 1


class EnvironmentNotPackable(NeardupError):
    """This interpreter's environment cannot be packed for the executors."""


@dataclass(frozen=True, slots=True)
class ShippedFile:
    source: Path  # on this machine
    name: str  # inside the archive
    recorded_hash: str  # the installer's hash of the content (RECORD), or "" when it gave none


def default_cache_dir() -> Path:
    """$NEARDUP_CACHE_DIR, else $XDG_CACHE_HOME/neardup, else ~/.cache/neardup; archives go to spark-env/."""
    base = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "neardup"
    )
    return Path(base) / "spark-env"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions() -> list[metadata.Distribution]:
    """The installed distributions neardup needs at run time (its requirements' closure, extras and
    markers evaluated as pip would here), without neardup itself and what Spark provides."""
    from packaging.requirements import Requirement

    try:
        root = metadata.distribution("neardup")
    except metadata.PackageNotFoundError:
        raise EnvironmentNotPackable(
            "neardup is not installed in this Python (no package metadata): pip install it, "
            "or pass --python-env with an archive built for the cluster"
        ) from None
    found: dict[str, metadata.Distribution] = {}
    todo: list[tuple[str, frozenset[str]]] = [
        (r, frozenset()) for r in root.requires or [] if _needed(Requirement(r), frozenset())
    ]
    while todo:
        text, _ = todo.pop()
        req = Requirement(text)
        key = _normalized(req.name)
        if key in found or key in PROVIDED_BY_SPARK:
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            raise EnvironmentNotPackable(
                f"{req.name} (a requirement of neardup) is not installed here: install it, or pass "
                "--python-env with an archive built for the cluster"
            ) from None
        found[key] = dist
        extras = frozenset(req.extras)
        todo.extend((r, extras) for r in dist.requires or [] if _needed(Requirement(r), extras))
    return [found[k] for k in sorted(found)]


def _needed(req: object, extras: frozenset[str]) -> bool:
    marker = getattr(req, "marker", None)
    if marker is None:
        return True
    return any(marker.evaluate({"extra": e}) for e in (extras or {""}))


def base_python() -> Path:
    """The interpreter a venv's `bin/python` links to (this one, outside a venv)."""
    return Path(getattr(sys, "_base_executable", sys.executable))


def _package_dir() -> Path:
    return Path(__file__).resolve().parent.parent


def _site_packages() -> str:
    return f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


def shipped_files() -> Iterator[ShippedFile]:
    """Every file the archive holds under site-packages: neardup's package folder, then each runtime
    distribution's recorded files (scripts and data outside site-packages are left out: the workers
    only import)."""
    site = _site_packages()
    pkg = _package_dir()
    for path in sorted(pkg.rglob("*")):
        rel = path.relative_to(pkg)
        if NOT_SHIPPED.intersection(rel.parts) or not path.is_file() or path.suffix in (".c", ".o"):
            continue
        yield ShippedFile(path, f"{site}/{pkg.name}/{rel.as_posix()}", "")
    for dist in runtime_distributions():
        files = dist.files
        if not files:
            raise EnvironmentNotPackable(
                f"{dist.metadata['Name']} lists no installed files (no RECORD): reinstall it with pip, "
                "or pass --python-env with an archive built for the cluster"
            )
        for record in files:
            name = record.as_posix()
            if name.startswith("../") or "__pycache__" in record.parts:
                continue  # scripts, headers, data outside site-packages; bytecode is made on the nodes
            source = Path(str(record.locate()))
            if source.is_file():
                yield ShippedFile(source, f"{site}/{name}", record.hash.value if record.hash else "")


def environment_key(files: list[ShippedFile]) -> str:
    """A hash of what the archive would hold: the Python, and each file's name, size and content (the
    content of a file its installer recorded a hash for is known by that hash, unread)."""
    h = hashlib.sha256()
    h.update(f"{LAYOUT_VERSION}|{sys.version}|{sysconfig.get_platform()}|{base_python()}\n".encode())
    for f in files:
        content = f.recorded_hash or hashlib.sha256(f.source.read_bytes()).hexdigest()
        h.update(f"{f.name}|{f.source.stat().st_size}|{content}\n".encode())
    return h.hexdigest()[:16]


def _venv_files(tar: tarfile.TarFile) -> None:
    base = base_python()
    ver = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    cfg = f"home = {base.parent}\ninclude-system-site-packages = false\nversion = {ver}\n".encode()
    info = tarfile.TarInfo("pyvenv.cfg")
    info.size, info.mode = len(cfg), 0o644
    tar.addfile(info, io.BytesIO(cfg))
    for name, target in (("bin/python", str(base)), ("bin/python3", "python")):
        link = tarfile.TarInfo(name)
        link.type, link.linkname, link.mode = tarfile.SYMTYPE, target, 0o777
        tar.addfile(link)


def pack_environment(cache_dir: Path | None = None, *, log: Callable[[str], None] | None = None) -> Path:
    """The archive of this environment for the executors (`.tar.gz`, venv-pack's layout), from the cache
    when one with the same content is there, else written to it (atomically)."""
    cache = cache_dir or default_cache_dir()
    files = list(shipped_files())
    archive = cache / f"neardup-env-{environment_key(files)}.tar.gz"
    if archive.is_file():
        os.utime(archive)  # recently used: kept by prune_cache
        return archive
    size = sum(f.source.stat().st_size for f in files)
    if log:
        log(f"packing the executors' Python environment ({len(files):,} files, {size / 1e6:,.0f} MB) ...")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".packing-", suffix=".tar.gz", dir=cache)
    except OSError as exc:
        raise EnvironmentNotPackable(
            f"cannot write the executors' environment to {cache}: {exc.strerror} "
            f"(set {CACHE_ENV} or --env-cache to a writable folder)"
        ) from None
    try:
        with (
            os.fdopen(fd, "wb") as raw,
            tarfile.open(fileobj=raw, mode="w:gz", compresslevel=GZIP_LEVEL) as tar,
        ):
            _venv_files(tar)
            for f in files:
                with f.source.open("rb") as fh:
                    info = tar.gettarinfo(arcname=f.name, fileobj=fh)
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    tar.addfile(info, fh)
        os.replace(tmp, archive)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    prune_cache(cache)
    return archive


def prune_cache(cache: Path, keep: int = KEEP_ARCHIVES) -> list[Path]:
    """Delete all but the `keep` most recently used archives in `cache` (each change to neardup's own
    files makes a new one); returns the deleted."""
    archives = sorted(cache.glob("neardup-env-*.tar.gz"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in archives[keep:]:
        old.unlink(missing_ok=True)
    return archives[keep:]
