"""The Streamlit app as package data: `Home.py` (the main script `neardup app` runs) and `views/`.

A source checkout also has the top-level `app.py` and `pages/` (what `streamlit run app.py` and the tests'
AppTest run): each is a shim that runs its namesake here, so the app's code is in one place and an installed
wheel serves the same app from any directory.

The packaged pages are in `views/`, not `pages/`: Streamlit serves a `pages/` folder next to the main script
as pages of their own (a menu of file names) until a run has called st.navigation, so a server's first
request for /Audit would get that menu. The checkout's `pages/` shims cannot be renamed (they are what
`streamlit run app.py` and AppTest's `switch_page("pages/3_Audit.py")` address), so a shim Streamlit runs
that way runs the app instead (`run_page`), whose navigation opens the page the URL names.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

APP_DIR = Path(__file__).resolve().parent
HOME = APP_DIR / "Home.py"
VIEWS = APP_DIR / "views"


@dataclass(frozen=True)
class AppPage:
    file: str  # in views/ (and, in a checkout, its shim in pages/)
    title: str
    icon: str
    url_path: str


# The pages after Home, in menu order.
PAGES = (
    AppPage("1_Load.py", "Load", ":material/upload_file:", "Load"),
    AppPage("2_Explore.py", "Explore", ":material/bar_chart:", "Explore"),
    AppPage("3_Audit.py", "Audit", ":material/compare:", "Audit"),
    AppPage("4_Tune.py", "Tune", ":material/tune:", "Tune"),
    AppPage("5_Clusters.py", "Clusters", ":material/workspaces:", "Clusters"),
    AppPage("6_Export.py", "Export", ":material/download:", "Export"),
    AppPage("7_URL_rules.py", "URL rules", ":material/link:", "URL_rules"),
)

# Set while Home.py's navigation runs a page (per script thread: each session runs in its own).
_NAVIGATING: ContextVar[bool] = ContextVar("neardup_app_navigating", default=False)


def run_packaged(relative: str, namespace: dict[str, Any]) -> None:
    """Run the packaged script `relative` ("Home.py", "views/3_Audit.py") in `namespace` (the shim's
    globals), compiled under its own file name so tracebacks point at the code that failed."""
    path = APP_DIR / relative
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)


def main_script() -> Path | None:
    """The main script of the running session (`app.py`, Home.py; None outside a script run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return Path(ctx.main_script_path).resolve() if ctx else None


def page_script(file: str) -> Path:
    """The script st.navigation registers for the page `file` ("3_Audit.py"): the checkout's shim in the
    `pages/` folder next to the main script when there is one (`app.py`'s; what st.switch_page and AppTest
    name as "pages/3_Audit.py"), else the packaged view. st.switch_page takes it as well."""
    main = main_script()
    shim = main.parent / "pages" / file if main else None
    return shim if shim is not None and shim.is_file() else VIEWS / file


@contextmanager
def navigating() -> Iterator[None]:
    """Around Home.py's `st.navigation(...).run()`: the scripts it runs as pages (the main script as the
    Home page, the shims) run their page, not the navigation again."""
    token = _NAVIGATING.set(True)
    try:
        yield
    finally:
        _NAVIGATING.reset(token)


def in_navigation() -> bool:
    """Whether this script runs as a page of Home.py's navigation."""
    return _NAVIGATING.get()


def run_page(file: str, namespace: dict[str, Any]) -> None:
    """A checkout's `pages/<file>` shim. Run by Home.py's navigation, or as the main script itself
    (`AppTest.from_file("pages/3_Audit.py")`, `streamlit run pages/3_Audit.py`), it runs the view. Run by
    Streamlit as a page of the `pages/` folder (a server's first run, before any st.navigation), it runs
    the app: its navigation replaces the folder's menu and opens this page, which the URL names."""
    main, own = main_script(), namespace.get("__file__")
    if in_navigation() or main is None or (own is not None and Path(own).resolve() == main):
        run_packaged(f"views/{file}", namespace)
    else:
        run_packaged("Home.py", namespace)
