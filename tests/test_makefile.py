"""The Makefile's two commands: `make run` installs what running needs, `make test` the dev extra too.

Read from `make -n` (what make would run, nothing run): an install takes minutes and the network."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def planned(target: str, venv: Path) -> list[str]:
    if shutil.which("make") is None:
        pytest.fail("make is not installed")
    out = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if "pip install" in line and "--upgrade pip" not in line]


def test_make_run_installs_neardup_without_the_dev_extra(tmp_path: Path) -> None:
    installs = planned("run", tmp_path / "venv")
    assert installs, "make run installs nothing"
    assert not any("[dev]" in line or "[spark]" in line for line in installs), installs
    assert any(re.search(r"install .*-e '?\.'?( |$)", line) for line in installs), installs


def test_make_test_installs_the_dev_extra(tmp_path: Path) -> None:
    installs = planned("test", tmp_path / "venv")
    assert any("'.[dev]'" in line for line in installs), installs
