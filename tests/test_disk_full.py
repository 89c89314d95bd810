"""A disk that fills up during `neardup ingest`: one line, nothing of the file kept, no half-made database.

On a tmpfs of a few MB where the machine lets this process mount one (root; CI is), else under a file
size limit (`ulimit -f`: the write fails with EFBIG where a full disk gives ENOSPC)."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from neardup.store import Store

ROOT = Path(__file__).resolve().parents[1]
ROOM_MB = 12


def _dump(path: Path, n: int, seed: int) -> Path:
    """Pages of random words: they compress badly, so a few thousand fill the room."""
    rng = random.Random(seed)
    words = [f"w{i}x{rng.random():.6f}" for i in range(20_000)]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            body = " ".join(rng.choice(words) for _ in range(400))
            f.write(json.dumps({"url": f"https://ex{seed}.example/{i}", "html": f"<p>{body}</p>"}) + "\n")
    return path


@pytest.fixture
def room(tmp_path: Path) -> Iterator[tuple[Path, int | None]]:
    """A folder with ROOM_MB of room: a tmpfs (None), or a plain folder and the file size limit to run under."""
    mnt = tmp_path / "room"
    mnt.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={ROOM_MB}m", "tmpfs", str(mnt)], capture_output=True
    )
    if mounted.returncode == 0:
        try:
            yield mnt, None
        finally:
            subprocess.run(["umount", str(mnt)], check=True)
    else:
        yield mnt, ROOM_MB << 20


def _ingest(dump: Path, db: Path, fsize: int | None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "neardup.cli", "ingest", str(dump), "--db", str(db), "--jobs", "1"],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limit,
        timeout=600,
    )


def _one_line(result: subprocess.CompletedProcess[str], dump: Path) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("neardup: error: ") and f"nothing of {dump} was kept" in lines[0], lines[0]
    assert "disk full" in lines[0] or "file size limit" in lines[0]


def test_a_full_disk_on_a_new_database_leaves_no_file(tmp_path: Path, room: tuple[Path, int | None]) -> None:
    folder, fsize = room
    dump = _dump(tmp_path / "big.jsonl", 12_000, seed=1)
    db = folder / "new.duckdb"
    _one_line(_ingest(dump, db, fsize), dump)
    assert sorted(p.name for p in folder.iterdir()) == []


def test_a_full_disk_keeps_an_existing_database_as_it_was(
    tmp_path: Path, room: tuple[Path, int | None]
) -> None:
    folder, fsize = room
    small = _dump(tmp_path / "small.jsonl", 200, seed=2)
    db = folder / "old.duckdb"
    assert _ingest(small, db, fsize).returncode == 0
    big = _dump(tmp_path / "big.jsonl", 12_000, seed=1)
    _one_line(_ingest(big, db, fsize), big)
    with Store(db) as store:  # as the next command opens it: a load cut off part-way is dropped
        assert list(store.sources()["path"]) == [str(small)]
        assert store.count_pages() == 200
