"""`neardup spark` on a real cluster shape: a standalone master and worker, each its own JVM started with
pyspark's `spark-class`, bound to 127.0.0.1 on free ports, whose worker runs a bare venv's Python (no
neardup, numpy or pyarrow), as a fresh cluster node would. The driver runs in its own process, as a
user's shell runs it: it must pack and ship its environment for the executors to import anything.

The README's standalone recipe is this test's: start the master and the worker, then
`neardup spark CRAWL --out DIR --master spark://HOST:PORT`.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import SAMPLE_CRAWL
from live_app import free_port
from spark_parity import assert_matches_local

from neardup import engine
from neardup.config import Config
from neardup.spark.pyenv import base_python, pack_environment
from neardup.store import Store

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
# One worker of one core; small heaps: the box is shared.
PR_SET_PDEATHSIG = 1  # prctl(2)
WORKER_CORES, WORKER_MEMORY, EXECUTOR_MEMORY = "1", "1g", "512m"
DRIVER_CONF = [
    "--conf",
    f"spark.executor.memory={EXECUTOR_MEMORY}",
    "--conf",
    "spark.driver.memory=1g",
    "--conf",
    "spark.driver.host=127.0.0.1",
    "--conf",
    "spark.driver.bindAddress=127.0.0.1",
    "--conf",
    "spark.sql.shuffle.partitions=4",
    "--conf",
    "spark.default.parallelism=4",
    "--conf",
    "spark.ui.enabled=false",
    "--conf",
    "spark.ui.showConsoleProgress=false",
    "--conf",
    "spark.sql.adaptive.enabled=false",
    "--conf",
    "neardup.logLevel=ERROR",
]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _node_env(**extra: str) -> dict[str, str]:
    """A cluster node's environment: nothing from this checkout or this venv's Python settings."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_CONF_DIR")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("NEARDUP_")}
    return {**env, **extra}


@dataclass(frozen=True, slots=True)
class Cluster:
    master: str  # spark://127.0.0.1:PORT
    python: Path  # the bare venv's Python the worker runs
    logs: Path


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except OSError:
        return 0


def _die_with_this_process() -> None:
    """In the child, before it runs `spark-class` (which execs the JVM): SIGTERM when the test process
    ends, so a killed test run leaves no daemon behind."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _daemon(cmd: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            cmd,
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=out,
            start_new_session=True,
            preexec_fn=_die_with_this_process,
        )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("cluster")
    bare = tmp / "bare"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = bare / "bin" / "python"
    lacks = subprocess.run(
        [str(python), "-c", "import neardup"], env=_node_env(), cwd=tmp, capture_output=True
    )
    assert lacks.returncode != 0  # the node's Python holds no neardup
    conf_dir = tmp / "conf"  # an empty Spark configuration: no user setting leaks in
    conf_dir.mkdir()
    env = _node_env(
        PATH=f"{bare / 'bin'}{os.pathsep}{os.environ['PATH']}",  # `python3` on the node is the bare one
        PYSPARK_PYTHON=str(python),
        SPARK_HOME=str(_spark_home()),
        SPARK_CONF_DIR=str(conf_dir),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_DAEMON_MEMORY="256m",
    )
    spark_class = str(_spark_home() / "bin" / "spark-class")
    port, ui_port, worker_port, worker_ui = free_port(), free_port(), free_port(), free_port()
    procs: list[subprocess.Popen[bytes]] = []
    logs = tmp / "logs"
    logs.mkdir()
    try:
        master_cmd = [spark_class, "org.apache.spark.deploy.master.Master"]
        master_cmd += ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port)]
        procs.append(_daemon(master_cmd, env, tmp, logs / "master.log"))
        worker_cmd = [spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}"]
        worker_cmd += ["--host", "127.0.0.1", "--port", str(worker_port), "--webui-port", str(worker_ui)]
        worker_cmd += ["--cores", WORKER_CORES, "--memory", WORKER_MEMORY, "--work-dir", str(tmp / "work")]
        procs.append(_daemon(worker_cmd, env, tmp, logs / "worker.log"))
        deadline = time.monotonic() + 120
        while _alive_workers(ui_port) < 1:
            dead = [p for p in procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                pytest.fail(
                    "the standalone cluster did not come up:\n"
                    + "".join(f.read_text(errors="replace")[-3000:] for f in sorted(logs.iterdir()))
                )
            time.sleep(1)
        yield Cluster(f"spark://127.0.0.1:{port}", python, logs)
    finally:
        for proc in reversed(procs):
            _stop(proc)


def _neardup_spark(cluster: Cluster, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`neardup spark` as a user's shell runs it, against the cluster."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    cmd = [sys.executable, "-m", "neardup.cli", "spark", "--out", str(out), "--master", cluster.master]
    cmd += [*DRIVER_CONF, *args]  # the test's own settings last: they override DRIVER_CONF's
    return subprocess.run(cmd, env=env, cwd=out.parent, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This environment packed into an empty cache folder, as `neardup spark` packs it."""
    said: list[str] = []
    archive = pack_environment(tmp_path_factory.mktemp("env_cache"), log=said.append)
    assert len(said) == 1 and said[0].startswith("packing the executors' Python environment")
    return archive


def test_the_archive_is_a_venv_of_neardup_and_its_dependencies(packed: Path) -> None:
    site = "lib/python{}.{}/site-packages".format(*sys.version_info[:2])
    with tarfile.open(packed) as tar:
        members = {m.name: m for m in tar.getmembers()}
        cfg = tar.extractfile("pyvenv.cfg").read().decode()  # type: ignore[union-attr]
    assert members["bin/python"].issym() and members["bin/python"].linkname == str(base_python())
    assert f"home = {base_python().parent}" in cfg
    names = set(members)
    for ext in ("_html", "_kernels"):  # the compiled extensions, as built here
        assert {n for n in names if n.startswith(f"{site}/neardup/{ext}.") and n.endswith(".so")}
    for module in (
        "neardup/spark/arrow.py",
        "numpy/__init__.py",
        "pyarrow/__init__.py",
        "xxhash/__init__.py",
    ):
        assert f"{site}/{module}" in names, module
    assert not {n for n in names if n.startswith((f"{site}/pyspark/", f"{site}/py4j/"))}  # the cluster's
    assert not {n for n in names if "/__pycache__/" in n or n.startswith(f"{site}/neardup/vendor/")}


def test_the_same_environment_is_packed_once(packed: Path) -> None:
    said: list[str] = []
    before = packed.stat()
    assert pack_environment(packed.parent, log=said.append) == packed
    after = packed.stat()
    assert said == [] and (after.st_ino, after.st_size) == (before.st_ino, before.st_size)  # not rewritten
    assert after.st_mtime >= before.st_mtime  # marked as used, for prune_cache


def test_a_cluster_without_neardup_gives_the_local_engines_result(
    cluster: Cluster, packed: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = _neardup_spark(cluster, out, str(SAMPLE_CRAWL), "--env-cache", str(packed.parent))
    assert done.returncode == 0, done.stderr[-5000:]
    # the driver found the archive packed above for the same environment, and shipped it
    assert f"executors' environment: {packed}" in done.stderr and "packing" not in done.stderr
    assert "executors ready: Python {}.{}".format(*sys.version_info[:2]) in done.stderr
    manifest = json.loads((out / "_MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["spark"]["master"] == cluster.master

    config = Config()
    with Store(tmp_path / "local.duckdb") as store:
        engine.ingest_file(store, SAMPLE_CRAWL, config, jobs=1)
        import pandas as pd

        pages = pd.read_parquet(out / "pages").sort_values("page_id").reset_index(drop=True)
        want = store.page_table(config.norm_key)
        cols = ["page_id", "line", "url", "canonical_url", "exact_key", "degenerate", "n_words"]
        pd.testing.assert_frame_equal(pages[cols], want[cols], check_dtype=False)
        assert_matches_local(out, manifest, store, config)


def test_without_shipping_the_probe_says_what_the_executors_lack(cluster: Cluster, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _neardup_spark(cluster, out, str(SAMPLE_CRAWL), "--python-env", "none")
    assert done.returncode == 2
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("neardup: error:")]
    assert len(errors) == 1, done.stderr[-5000:]
    (line,) = errors
    assert f"({cluster.python.parent}/" in line and "cannot import neardup: ModuleNotFoundError" in line
    assert "--python-env" in line
    assert "Traceback" not in done.stderr and "\tat org.apache" not in done.stderr
    assert not (out / "_MANIFEST.json").exists()


def test_a_cluster_that_cannot_start_an_executor_fails_within_the_probe_timeout(
    cluster: Cluster, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    # more memory than the worker offers: the master never starts an executor for this application
    done = _neardup_spark(
        cluster,
        out,
        str(SAMPLE_CRAWL),
        "--python-env",
        "none",
        "--conf",
        "spark.executor.memory=4g",
        "--conf",
        "neardup.probeTimeout=10",
    )
    assert done.returncode == 2
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("neardup: error:")]
    assert len(errors) == 1, done.stderr[-5000:]
    assert "no executor ran the probe task within 10 s" in errors[0]
    assert "spark.executor.memory" in errors[0]


def test_an_archive_whose_python_the_nodes_lack_fails_in_one_line(cluster: Cluster, tmp_path: Path) -> None:
    # a venv archive made on another machine: its bin/python links to a Python these nodes do not have
    archive = tmp_path / "elsewhere.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        link = tarfile.TarInfo("bin/python")
        link.type, link.linkname = tarfile.SYMTYPE, "/opt/no-such-python/bin/python3.11"
        tar.addfile(link)
    out = tmp_path / "out"
    done = _neardup_spark(cluster, out, str(SAMPLE_CRAWL), "--python-env", str(archive))
    assert done.returncode == 2
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("neardup: error:")]
    assert len(errors) == 1, done.stderr[-5000:]
    assert "the executors cannot run Python for `neardup spark`" in errors[0]
    assert 'java.io.IOException: Cannot run program "./environment/bin/python"' in errors[0]
    assert "the same path" in errors[0] and "Job aborted" not in errors[0]
    assert "Traceback" not in done.stderr and "\tat org.apache" not in done.stderr
