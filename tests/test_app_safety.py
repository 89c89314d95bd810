"""The app on a shared server: a bad NEARDUP_CONFIG, server paths outside the data roots, uploads."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, TIMEOUT, base_db, db  # noqa: F401 - fixtures


def test_a_bad_config_file_is_an_error_not_a_traceback(db: str, tmp_path: Path,  # noqa: F811
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "dupcheck.yaml"
    bad.write_text("seed: 1\nseed: 2\n")
    monkeypatch.setenv("NEARDUP_CONFIG", str(bad))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert any("duplicate key" in e.value for e in at.error), [e.value for e in at.error]
    at.switch_page("pages/1_Load.py").run()
    assert not at.exception, at.exception
    assert any("duplicate key" in e.value for e in at.error)
