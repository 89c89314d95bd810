"""The checks `neardup spark` makes before any work, without a cluster: Java, the master, the archive
named by `--python-env`, what the executors' probe report is judged by, and the packed environment's
content hash. tests/test_spark_cluster.py runs them against a standalone cluster."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import SAMPLE_CRAWL
from live_app import free_port

from neardup.cli import main
from neardup.spark.probe import ExecutorReport, SparkUnavailable, check_executors
from neardup.spark.pyenv import ShippedFile, environment_key

pytestmark = pytest.mark.spark


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("neardup: error: ")
    return lines[0]


def test_a_master_that_does_not_answer_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    master = f"spark://127.0.0.1:{free_port()}"  # nothing listens there
    assert main(["spark", str(SAMPLE_CRAWL), "--out", str(tmp_path / "out"), "--master", master]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"the Spark master {master} does not answer (Connection refused)" in line
    assert not (tmp_path / "out").exists()


def test_no_java_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    assert main(["spark", str(SAMPLE_CRAWL), "--out", str(tmp_path / "out"), "--master", "local[1]"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"no Java runtime on JAVA_HOME={tmp_path / 'no-jdk'}" in line and "Java 17+" in line


def test_a_python_env_archive_that_is_not_there_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "env.tar.gz"
    args = ["spark", str(SAMPLE_CRAWL), "--out", str(tmp_path / "out"), "--python-env", str(missing)]
    # a master that answers is needed to get that far: this test's own listening socket
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        master = f"spark://127.0.0.1:{server.getsockname()[1]}"
        assert main([*args, "--master", master]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"--python-env {missing}: no such archive" in line


DRIVER = {"driver_python": "3.11", "driver_spark": "4.3.0", "python_exec": "python3"}


@pytest.mark.parametrize(
    ("report", "shipped", "says"),
    [
        (ExecutorReport("/usr/bin/python3", "3.10", "4.3.0", ""), False, "the executors run Python 3.10"),
        (
            ExecutorReport("/env/bin/python", "3.11", "3.5.1", ""),
            True,
            "the cluster runs Spark 3.5.1, this driver pyspark 4.3.0: install the cluster's version here "
            "(pip install 'pyspark==3.5.*')",
        ),
        (
            ExecutorReport("/usr/bin/python3", "3.11", "4.3.1", "neardup: ModuleNotFoundError: x"),
            False,
            "cannot import neardup: ModuleNotFoundError: x: ship neardup's environment",
        ),
        (
            ExecutorReport("./environment/bin/python", "3.11", "4.3.0", "neardup._html: ImportError: y"),
            True,
            "cannot import neardup._html: ImportError: y: the shipped environment does not hold it",
        ),
    ],
)
def test_what_the_executors_lack_is_said(report: ExecutorReport, shipped: bool, says: str) -> None:
    with pytest.raises(SparkUnavailable) as caught:
        check_executors(report, shipped=shipped, **DRIVER)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_executors_like_the_driver_pass() -> None:
    check_executors(ExecutorReport("/env/bin/python", "3.11", "4.3.2", ""), shipped=True, **DRIVER)


def test_the_environment_key_follows_the_content(tmp_path: Path) -> None:
    f = tmp_path / "mod.py"
    f.write_text("x = 1\n")
    files = [ShippedFile(f, "lib/python3.11/site-packages/mod.py", "")]
    key = environment_key(files)
    assert environment_key(files) == key
    f.write_text("x = 2\n")
    assert environment_key(files) != key
    assert environment_key([ShippedFile(f, "lib/python3.11/site-packages/other.py", "")]) != key


def test_a_failed_probe_task_is_told_by_its_own_error() -> None:
    from neardup.spark.probe import _first_line

    jvm = RuntimeError(
        "An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 "
        "times, most recent failure: Lost task 0.3 in stage 0.0 (TID 3) (127.0.0.1 executor 0): "
        'java.io.IOException: Cannot run program "./environment/bin/python": error=2, No such file\n'
        "\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)\n"
        "Caused by: java.io.IOException: error=2, No such file or directory\n"
    )
    assert (
        _first_line(jvm)
        == 'java.io.IOException: Cannot run program "./environment/bin/python": error=2, No such file'
    )
    python = RuntimeError(
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 "
        "times, most recent failure: Lost task 0.3 in stage 0.0 (TID 3) (127.0.0.1 executor 0): "
        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
        '  File "/x/pyspark.zip/pyspark/worker.py", line 1, in main\n'
        "pyspark.errors.exceptions.base.PySparkRuntimeError: [PYTHON_VERSION_MISMATCH] Python in worker "
        "has different version (3, 10) than that in driver 3.11\n"
        "\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(x.scala:1)\n"
    )
    assert _first_line(python).startswith(
        "pyspark.errors.exceptions.base.PySparkRuntimeError: [PYTHON_VERSION"
    )


def test_the_cache_keeps_the_most_recently_used_archives(tmp_path: Path) -> None:
    from neardup.spark.pyenv import prune_cache

    for age, key in enumerate("abcde"):
        archive = tmp_path / f"neardup-env-{key}.tar.gz"
        archive.write_bytes(b"x")
        os.utime(archive, (1_000_000 - age, 1_000_000 - age))  # a is the newest
    (tmp_path / "other.tar.gz").write_bytes(b"x")
    deleted = prune_cache(tmp_path, keep=3)
    assert sorted(p.name for p in deleted) == ["neardup-env-d.tar.gz", "neardup-env-e.tar.gz"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "neardup-env-a.tar.gz",
        "neardup-env-b.tar.gz",
        "neardup-env-c.tar.gz",
        "other.tar.gz",
    ]
