"""The Streamlit app as package data: `Home.py` (the main script `neardup app` runs) and `pages/`.

A source checkout also has the top-level `app.py` and `pages/` (what `streamlit run app.py` and the tests'
AppTest run): each is a shim that runs its namesake here with `run_packaged`, so the app's code is in one
place and an installed wheel serves the same app from any directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

APP_DIR = Path(__file__).resolve().parent
HOME = APP_DIR / "Home.py"


def run_packaged(relative: str, namespace: dict[str, Any]) -> None:
    """Run the packaged script `relative` ("Home.py", "pages/3_Audit.py") in `namespace` (the shim's
    globals), compiled under its own file name so tracebacks point at the code that failed."""
    path = APP_DIR / relative
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
