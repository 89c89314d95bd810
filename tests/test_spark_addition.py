"""`neardup spark NEW --previous OUT1`: a crawl added to an earlier Spark output gives the output a full run
over the earlier inputs then the new ones gives (same pages, units, pairs, clusters, errors and numbers),
while only the new records are ingested and fingerprinted.

The bundled sample split in two files: the second repeats a record of the first (a duplicate across runs,
rejected as in a full run) and has a malformed line of its own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import sample_lines
from spark_parity import SPARK_CONF, output_table

from neardup.cli import main
from neardup.config import Config

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]

SETTINGS = {
    "simhash": Config(method="simhash", threshold=6, shingle_size=4),
    "minhash": Config(method="minhash", threshold=0.8, similarity="containment"),
}
TABLES = {
    "pages": ["page_id"],
    "units": ["unit_id"],
    "pairs": ["a", "b"],
    "clusters": ["page_id"],
    "errors": ["source_id", "line"],
}


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    lines = sample_lines(400)
    base = tmp_path_factory.mktemp("halves")
    old, new = base / "old.jsonl", base / "new.jsonl"
    old.write_bytes(b"\n".join(lines[:200]) + b"\n")
    new.write_bytes(b"\n".join([*lines[200:260], lines[10], b"{not json", *lines[260:]]) + b"\n")
    return old, new


def _spark(inputs: list[Path], out: Path, config: Config, *extra: str) -> dict:
    cfg = out.parent / f"{out.name}.yaml"
    cfg.write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in config.to_dict().items()), encoding="utf-8")
    args = ["spark", *map(str, inputs), "--out", str(out), "--config", str(cfg), *extra, *SPARK_CONF]
    assert main(args) == 0
    return json.loads((out / "_MANIFEST.json").read_text(encoding="utf-8"))


def _sorted(out: Path, name: str) -> pd.DataFrame:
    return output_table(out, name).sort_values(TABLES[name]).reset_index(drop=True)


@pytest.fixture(scope="module")
def firsts(halves: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The earlier run (the first half) under each setting."""
    base = tmp_path_factory.mktemp("first")
    for name, config in SETTINGS.items():
        _spark([halves[0]], base / name, config)
    return {name: base / name for name in SETTINGS}


@pytest.mark.parametrize("name", list(SETTINGS))
def test_adding_a_crawl_equals_a_full_run(
    halves: tuple[Path, Path], firsts: dict[str, Path], tmp_path: Path, name: str
) -> None:
    config = SETTINGS[name]
    old, new = halves
    full = _spark([old, new], tmp_path / "full", config)
    added = _spark([new], tmp_path / "added", config, "--previous", str(firsts[name]))

    for table in TABLES:
        pd.testing.assert_frame_equal(_sorted(tmp_path / "added", table), _sorted(tmp_path / "full", table))
    assert added["counts"] == full["counts"]
    assert added["numbers"] == full["numbers"]
    assert added["sources"] == full["sources"]
    assert added["inputs"] == full["inputs"]
    assert full["counts"]["pairs"] > 0 and full["counts"]["errors"] >= 2
    # the repeated record points at its first, in the other file
    reasons = set(_sorted(tmp_path / "added", "errors")["reason"])
    assert "duplicate record: same url, fetched_at and content as line 11 of source 1" in reasons
    # only the new file's records went through ingest and fingerprinting
    assert added["previous"]["pages"] == 200
    assert added["previous"]["new_units"] < full["counts"]["units"] - 150
    assert not added["previous"]["all_pairs_again"]  # the new units' buckets only


def test_refuses_a_previous_run_under_other_settings(
    halves: tuple[Path, Path], firsts: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "other.yaml"
    cfg.write_text("method: minhash\n", encoding="utf-8")
    args = ["spark", str(halves[1]), "--out", str(tmp_path / "x"), "--config", str(cfg)]
    assert main([*args, "--previous", str(firsts["simhash"]), *SPARK_CONF]) == 2
    assert re.search(r"error: --previous .* ran under other settings \(.*method", capsys.readouterr().err)
    assert not (tmp_path / "x" / "_MANIFEST.json").exists()
