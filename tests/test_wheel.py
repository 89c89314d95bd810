"""The installed product: the wheel built from this tree, installed into a fresh venv, serves the app.

`neardup app` is started from a folder that holds nothing of the checkout, so the app's scripts, pages,
schema, favicon and sample must all come from the wheel. The venv gets the wheel (without dependencies)
and then a .pth naming this interpreter's site-packages for the dependencies: no download, and the
checkout's own neardup (an editable install's finder lives in a .pth there, which a .pth line does not
run) is never imported.

The extensions `make install` compiled in place (neardup/*.so, newer than their sources) are put where
the wheel's build looks for them first, so the build does not compile lexbor a second time; without
them (or under another build folder name) it compiles them.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_app import CHROMIUM, assert_clean, free_port, launch_browser, open_page

pytestmark = [pytest.mark.wheel, pytest.mark.browser]

ROOT = Path(__file__).resolve().parent.parent
# What the build does not read: the copy of the tree the wheel is built from leaves them out.
NOT_BUILT = (".git", ".venv", "build", "*.egg-info", "__pycache__", "*.duckdb*", "tests", "bench")
NOT_BUILT += ("docs", ".ruff_cache", ".pytest_cache", ".hypothesis", "out")
SAMPLE_PAGES = 3_000


def _run(cmd: list[str], **kw: object) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert done.returncode == 0, (
        f"{cmd} exited with {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    )
    return done.stdout


def _clean_env() -> dict[str, str]:
    """The environment of a user's shell: nothing pointing back at the checkout or at a database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEARDUP_")}
    env.pop("PYTHONPATH", None)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed: its bin/ folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(*NOT_BUILT))
    built = src / "build" / f"lib.{sysconfig.get_platform()}-{sys.implementation.cache_tag}" / "neardup"
    built.mkdir(parents=True)
    for so in (src / "neardup").glob("*.so"):
        shutil.copy2(so, built / so.name)
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip"]
    _run([*pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir", str(dist), str(src)])
    (wheel,) = dist.glob("neardup-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip()
    )
    # the wheel first: with the dependencies' folder on its path pip would find neardup installed there
    _run([*pip, "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)], env=_clean_env())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "neardup_test_deps.pth").write_text("".join(f"{d}\n" for d in sorted(deps)), encoding="utf-8")
    return venv / "bin"


def test_wheel_holds_the_app_and_the_sample(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import neardup, neardup.app, neardup.engine, neardup.spark.run, neardup.ui.widgets;"
        "print(neardup.__file__); print(neardup.app.HOME.is_file());"
        "print(sorted(p.name for p in neardup.app.VIEWS.glob('*.py')));"
        "print(neardup.engine.SAMPLE_CRAWL.is_file())"
    )
    out = _run([str(installed / "python"), "-c", probe], cwd=tmp_path, env=_clean_env()).splitlines()
    assert Path(out[0]).is_relative_to(installed.parent), out[0]
    assert out[1:] == [
        "True",
        str(sorted(p.name for p in (ROOT / "neardup" / "app" / "views").glob("*.py"))),
        "True",
    ]


@pytest.fixture(scope="module")
def served(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`neardup app` from an empty folder (no database named: it loads the packaged sample first)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"the wheel test needs Debian's Chromium at {CHROMIUM}: apt-get install chromium")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    port = free_port()
    log = elsewhere.parent / f"{elsewhere.name}.log"
    cmd = [str(installed / "neardup"), "app", "--headless", "--port", str(port), "--address", "127.0.0.1"]
    with log.open("wb") as out:
        # its own process group, stopped whole (`neardup app` becomes the Streamlit server: no child)
        proc = subprocess.Popen(
            cmd, cwd=elsewhere, env=_clean_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (
                f"neardup app exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
            )
            assert time.monotonic() < deadline, f"no answer within 120 s:\n{log.read_text()[-3000:]}"
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.status == 200 and resp.read() == b"ok":
                        break
            except OSError:
                time.sleep(0.3)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def test_installed_app_serves_home_and_pages_from_any_folder(served: str) -> None:
    with launch_browser() as b:
        open_page(b.page, served, "/", "Next:")
        assert_clean(b, "/")
        assert f" · {SAMPLE_PAGES:,} pages · " in b.page.locator("body").inner_text()  # the Home caption
        open_page(b.page, served, "/Load", "Rejected records")
        assert_clean(b, "/Load")
