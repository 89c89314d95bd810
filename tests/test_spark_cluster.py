"""`neardup spark` on a real cluster shape: a standalone master and worker, each its own JVM started with
pyspark's `spark-class`, bound to 127.0.0.1 on free ports, whose worker runs a bare venv's Python (no
neardup, numpy or pyarrow), as a fresh cluster node would. The driver runs in its own process, as a
user's shell runs it: it must pack and ship its environment for the executors to import anything.

The README's standalone recipe is this test's: start the master and the worker, then
`neardup spark CRAWL --out DIR --master spark://HOST:PORT`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SAMPLE_CRAWL
from spark_cluster import Cluster, ClusterDown, node_env, standalone_cluster
from spark_parity import assert_matches_local, spark_conf_flags

from neardup import engine
from neardup.config import Config
from neardup.spark.pyenv import base_python, pack_environment
from neardup.store import Store

pytestmark = pytest.mark.spark

# One worker of one core; small heaps: the box is shared.
WORKER_CORES, WORKER_MEMORY, EXECUTOR_MEMORY = 1, "1g", "512m"
DRIVER_CONF = spark_conf_flags(
    {
        "spark.executor.memory": EXECUTOR_MEMORY,
        "spark.driver.memory": "1g",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "4",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.adaptive.enabled": "false",
        "neardup.logLevel": "ERROR",
    }
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("cluster")
    try:
        with standalone_cluster(tmp, cores=WORKER_CORES, memory=WORKER_MEMORY) as up:
            lacks = subprocess.run(
                [str(up.python), "-c", "import neardup"], env=node_env(), cwd=tmp, capture_output=True
            )
            assert lacks.returncode != 0  # the node's Python holds no neardup
            yield up
    except ClusterDown as e:
        pytest.fail(str(e))


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
