"""The app on a shared server: a bad NEARDUP_CONFIG, server paths outside the data roots, uploads."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from app_driver import APP, TIMEOUT, download
from streamlit.testing.v1 import AppTest


def test_a_bad_config_file_is_an_error_not_a_traceback(
    db: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bad = tmp_path / "dupcheck.yaml"
    bad.write_text("seed: 1\nseed: 2\n")
    monkeypatch.setenv("NEARDUP_CONFIG", str(bad))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert any("duplicate key" in e.value for e in at.error), [e.value for e in at.error]
    at.switch_page("pages/1_Load.py").run()
    assert not at.exception, at.exception
    assert any("duplicate key" in e.value for e in at.error)


def test_export_page_csvs_defuse_formulas(db: str, downloads: list) -> None:
    from neardup.store import Store

    Store(db).record_label(
        "https://a.example/",
        "https://b.example/",
        label="duplicate",
        labeler="=cmd|'/C calc'!A0",
        note="@SUM(1)",
    )
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/6_Export.py").run()
    assert not at.exception, at.exception
    labels = pd.read_csv(io.BytesIO(download(at, downloads, "labels.csv")), dtype=str, keep_default_na=False)
    assert (labels.loc[0, "labeler"], labels.loc[0, "note"]) == ("'=cmd|'/C calc'!A0", "'@SUM(1)")
    clusters = pd.read_csv(
        io.BytesIO(download(at, downloads, "clusters.csv")), dtype=str, keep_default_na=False
    )
    assert len(clusters) == 300


def _load_path(at: AppTest, text: str) -> list[str]:
    at.text_input[0].set_value(text).run()
    [load] = [b for b in at.button if b.label == "Load this path"]
    load.click().run()
    assert not at.exception, at.exception
    return [e.value for e in at.error]


def test_server_paths_outside_the_data_folders_are_refused_alike(
    db: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, private = tmp_path / "data", tmp_path / "private"
    root.mkdir()
    private.mkdir()
    (private / "users.csv").write_text("user,password\nroot,hunter2\n")
    (root / "a.csv").write_text("user,password\nroot,hunter2\n")
    (root / "b.jsonl").write_text('{"api_key": "k", "password": "p"}\n')
    monkeypatch.setenv("NEARDUP_DATA_DIR", str(root))
    monkeypatch.delenv("NEARDUP_ALLOW_ANY_PATH", raising=False)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/1_Load.py").run()
    refusals = {
        tuple(_load_path(at, p))
        for p in (
            str(private / "users.csv"),
            str(private / "absent.csv"),
            "/etc/passwd",
            f"{root}/../private/users.csv",
        )
    }
    assert len(refusals) == 1, refusals
    [[refusal]] = refusals
    assert "Not loaded" in refusal and "exist" not in refusal
    # inside the root, a file that is not a crawl dump: said so, without its column names or keys
    for name in ("a.csv", "b.jsonl"):
        [error] = _load_path(at, str(root / name))
        assert "not a crawl dump" in error
        for secret in ("user", "password", "api", "hunter2"):
            assert secret not in error, (secret, error)
