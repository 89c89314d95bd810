"""The CLI among other processes: a FIFO given as a config is refused (not waited on), and a reader that
stops early (`| head`) ends the output quietly, as Unix tools do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Crawl, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _neardup(*args: str) -> list[str]:
    return [sys.executable, "-m", "neardup.cli", *args]


def test_a_fifo_as_config_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "settings.yaml"
    os.mkfifo(fifo)
    result = subprocess.run(
        _neardup(
            "ingest", str(tmp_path / "d.jsonl"), "--db", str(tmp_path / "x.duckdb"), "--config", str(fifo)
        ),
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,  # a FIFO nobody writes to would block its reader forever
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a regular file" in lines[0] and str(fifo) in lines[0], result.stderr


@pytest.fixture(scope="module")
def piped_db(tmp_path_factory: pytest.TempPathFactory, crawl: Crawl) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("pipes")
    first = write_jsonl(tmp / "first.jsonl", crawl.records[:30])
    second = write_jsonl(tmp / "second.jsonl", crawl.records[10:])
    db = tmp / "p.duckdb"
    ingest = _neardup("ingest", str(first), str(second), "--db", str(db), "--jobs", "1")
    subprocess.run(ingest, check=True, env=ENV, capture_output=True)
    return tmp, db


def _piped_to_head(argv: list[str], lines: int = 1) -> tuple[int, str, str]:
    """`argv | head -n LINES` in a shell: the exit status of `argv` (pipefail), its stderr, head's output."""
    err = Path(os.environ.get("TMPDIR", "/tmp")) / f"neardup-pipe-{os.getpid()}.err"
    command = " ".join(f"'{a}'" for a in argv) + f" 2>'{err}' | head -n {lines}"
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, env=ENV, timeout=300
    )
    stderr = err.read_text()
    err.unlink()
    return result.returncode, stderr, result.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["export", "--out", "/dev/stdout"],
        ["report", "--json"],
        ["report", "--top-hosts", "1000"],
        ["compare", "--baseline", "1", "--current", "2"],
        ["ingest"],
    ],
    ids=["export-to-stdout", "report-json", "report", "compare", "ingest"],
)
def test_a_reader_that_stops_early_ends_the_output_quietly(
    piped_db: tuple[Path, Path], crawl: Crawl, command: list[str]
) -> None:
    tmp, db = piped_db
    if command == ["ingest"]:
        dumps = [write_jsonl(tmp / f"more{i}.jsonl", crawl.records[i::5]) for i in range(5)]
        command = ["ingest", *map(str, dumps), "--db", str(tmp / "fresh.duckdb"), "--jobs", "1"]
    else:
        command = [*command, "--db", str(db), "--jobs", "1"]
    if command[0] == "export":
        command += ["--config-out", str(tmp / "dupcheck.yaml")]
    code, stderr, head = _piped_to_head(_neardup(*command))
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert len(head.splitlines()) == 1
    assert code in (0, 141), (code, stderr)  # 141: ended by SIGPIPE, as `yes | head -1`
