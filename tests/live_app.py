"""A live app for the browser tests (and the benchmarks that drive one): `streamlit run app.py` (or `neardup
app`) on a free port over a database, and Debian's Chromium driven by Playwright, with the waits and checks
every browser test uses. Playwright is imported when a browser is launched, so importing this costs nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest

from neardup.store import Store

ROOT = Path(__file__).resolve().parent.parent

CHROMIUM = "/usr/bin/chromium"


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


VIEWPORT = {"width": 1400, "height": 900}


# Screenshots go to a temporary directory; NEARDUP_SCREENSHOTS=docs writes the README's ones.
SHOTS = Path(os.environ.get("NEARDUP_SCREENSHOTS") or tempfile.mkdtemp(prefix="neardup-shots-"))


TIMEOUT_MS = 60_000


# (path, text the page shows once its script has run to the end, screenshot). The Audit page's is taken on
# the sample (tests/test_browser_labeling.py), where unlabeled pairs are left to show.
PAGES: list[tuple[str, str, str | None]] = [
    ("/", "Next:", "home.png"),
    ("/Load", "Rejected records", "load.png"),
    ("/Explore", "Per host", "explore.png"),
    ("/Audit", "Labeled pairs", None),
    ("/Tune", "How precision, recall", "tune.png"),
    ("/Clusters", "Compare with the representative", "clusters.png"),
    ("/Export", "Import labels", "export.png"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    db: Path
    proc: subprocess.Popen
    log: Path
    n_pages: int
    n_labels: int
    xss_urls: list[str] = field(default_factory=list)

    def stop(self) -> None:
        """Stop the server's process group."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


def wait_for_health(server: Server, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            pytest.fail(f"streamlit exited with {server.proc.returncode}:\n{server.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    pytest.fail(f"streamlit did not answer within {timeout_s} s:\n{server.log.read_text()[-3000:]}")


def start_app(
    db: Path, tmp: Path, env: dict[str, str] | None = None, *, packaged: bool = False
) -> tuple[str, subprocess.Popen, Path]:
    """`streamlit run app.py` over `db` on a free port (with `packaged`: `neardup app --db db`, which runs
    the packaged Home.py): (base URL, process, log file). The process leads its own process group."""
    port = free_port()
    log = tmp / f"streamlit-{port}.log"
    env = {**os.environ, "NEARDUP_DB": str(db), **(env or {})}
    env.pop("NEARDUP_CONFIG", None)
    address = ["--server.address" if not packaged else "--address", "127.0.0.1"]
    if packaged:
        cli = "import sys; from neardup.cli import main; sys.exit(main(sys.argv[1:]))"  # the `neardup` script
        cmd = ["-c", cli, "app", "--db", str(db), "--headless", "--port", str(port), *address]
    else:
        cmd = [
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            *address,
            "--browser.gatherUsageStats",
            "false",
            # others may edit the pages while this runs: no reruns on file changes
            "--server.fileWatcherType",
            "none",
        ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, *cmd],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return f"http://127.0.0.1:{port}", proc, log


@dataclass
class Browser:
    page: object
    dialogs: list[str]
    errors: list[str]


@contextmanager
def launch_browser() -> Iterator[Browser]:
    """Chromium with one page at VIEWPORT; dialogs are dismissed and recorded, as are JavaScript errors."""
    from playwright.sync_api import sync_playwright

    require_chromium()

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = chromium.new_context(viewport=VIEWPORT, accept_downloads=True)
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            dialogs: list[str] = []
            errors: list[str] = []

            def on_dialog(dialog: object) -> None:
                dialogs.append(f"{dialog.type}: {dialog.message}")
                dialog.dismiss()

            page.on("dialog", on_dialog)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            yield Browser(page, dialogs, errors)
            context.close()
        finally:
            chromium.close()


def wait_idle(page: object) -> None:
    """Until the script run is over (Streamlit marks the app element while a script runs)."""
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state')"
        " === 'notRunning'"
    )


def wait_drawn(page: object) -> None:
    """Until lazily loaded elements (charts, tables) replaced their skeletons and charts are drawn."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stSkeleton\"]') && [...document.querySelectorAll("
        "'[data-testid=\"stPlotlyChart\"]')].every(c => c.querySelector('.main-svg'))"
    )


def open_page(page: object, base: str, path: str, marker: str) -> None:
    page.goto(base + path)
    page.get_by_text(marker).first.wait_for()
    wait_idle(page)
    wait_drawn(page)


def screenshot(page: object, name: str) -> None:
    wait_drawn(page)
    page.wait_for_timeout(600)  # table canvases and chart transitions paint after they are in the DOM
    page.screenshot(path=str(SHOTS / name))


def assert_clean(b: Browser, where: str) -> None:
    exc = b.page.locator('[data-testid="stException"]')
    assert exc.count() == 0, f"{where}: {exc.first.inner_text()}"
    assert not b.dialogs, f"{where}: a dialog opened: {b.dialogs}"
    assert not b.errors, f"{where}: JavaScript errors: {b.errors}"


def click_button(page: object, name: str) -> None:
    """A button by its label; a button with a keyboard shortcut has the key after it in its name."""
    page.get_by_role("button").filter(has_text=re.compile(rf"^{re.escape(name)}\W*\w?$")).click()


def slider_thumb(page: object, label: str) -> object:
    return page.locator('[data-testid="stSlider"]', has_text=label).get_by_role("slider")


def settled_value(page: object, thumb: object) -> float:
    """The slider's value once the rerun its change started is over (and one more, had it started another)."""
    wait_idle(page)
    page.wait_for_timeout(700)
    wait_idle(page)
    return round(float(thumb.input_value()), 2)


PAIR_SHOWN_JS = """() => {
    const cap = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
        .map(c => c.innerText).find(t => t.startsWith('Pair ')) || '';
    const codes = [...document.querySelectorAll('[data-testid="stCode"]')].slice(0, 2).map(c => c.innerText);
    return cap + '|' + codes.join('|');
}"""


def key_to_next_pair_ms(page: object, key: str) -> float:
    """Press `key`, wait until another pair is drawn (its caption and URLs), then until the run is over;
    the milliseconds from the key to the draw."""
    before = page.evaluate(PAIR_SHOWN_JS)
    t0 = time.perf_counter()
    page.keyboard.press(key)
    page.wait_for_function(f"() => ({PAIR_SHOWN_JS})() !== {json.dumps(before)}")
    elapsed_ms = (time.perf_counter() - t0) * 1000
    wait_idle(page)
    return elapsed_ms


def require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"the browser test needs Debian's Chromium at {CHROMIUM}: apt-get install chromium")


@contextmanager
def serving(
    db: Path,
    tmp: Path,
    n_pages: int,
    n_labels: int = 0,
    *,
    env: dict[str, str] | None = None,
    xss_urls: list[str] | None = None,
) -> Iterator[Server]:
    """`streamlit run app.py` over `db` (`start_app`), answering, until the block ends."""
    require_chromium()
    url, proc, log = start_app(db, tmp, env)
    srv = Server(url, db, proc, log, n_pages, n_labels, xss_urls or [])
    try:
        wait_for_health(srv)
        yield srv
    finally:
        srv.stop()


class SentMessages:
    """The messages a page sends to the server over Streamlit's websocket (Playwright's WebSocket route, set
    before the page opens the app): passed on, or kept back from `hold` until `release`, then sent in their
    order. Reorders what two tabs send without touching the app."""

    def __init__(self, page: object) -> None:
        self.holding = False
        self.held: list[str | bytes] = []
        self.server: object = None
        page.route_web_socket(re.compile(r"/_stcore/stream"), self.connect)

    def connect(self, ws: object) -> None:
        server = ws.connect_to_server()
        self.server = server

        def to_server(message: str | bytes) -> None:
            if self.holding:
                self.held.append(message)
            else:
                server.send(message)

        ws.on_message(to_server)

    def hold(self) -> None:
        self.holding = True

    def release(self) -> None:
        self.holding = False
        while self.held:
            self.server.send(self.held.pop(0))


@contextmanager
def file_held(db: Path, *, write: bool) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the database (read-write as an ingest does, or read-only as `neardup
    report` does) until the block ends."""
    code = (
        "import sys; from neardup.store import Store; "
        f"s = Store(sys.argv[1], read_only={not write}, lock_wait_s=30); print('held', flush=True); "
        "sys.stdin.read(); s.close()"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        if proc.stdout.readline().strip() != "held":  # it could not take the file: say why
            proc.wait(timeout=30)
            raise AssertionError(f"the holding process could not open the file: {proc.stderr.read()}")
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


@contextmanager
def serving_copy(db: Path, tmp: Path, n_pages: int = 300) -> Iterator[Server]:
    """`serving` over a copy of `db` in `tmp`: a test's labels stay out of the shared database."""
    copy = tmp / "neardup.duckdb"
    shutil.copyfile(db, copy)
    with serving(copy, tmp, n_pages) as srv:
        yield srv


def live_labels(server: Server) -> pd.DataFrame:
    """The labels as another process reads them while the app runs (read-only, waiting for a write)."""
    with Store(server.db, read_only=True, lock_wait_s=30) as store:
        return store.labels()
