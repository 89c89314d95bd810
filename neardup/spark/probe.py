"""Checks before the first stage, each failing in one line a user can act on, never a JVM stack trace:
a Java runtime (`check_java`), a master that answers (`check_master`), and executors that run the same
Python and Spark as the driver and can import neardup with its compiled extensions (`probe_executors`,
a one-task job with a timeout)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import NeardupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# A cluster whose executors are up starts the probe's one task in seconds; YARN or Kubernetes may need
# longer to start containers (--conf neardup.probeTimeout=SECONDS).
PROBE_TIMEOUT_S = 60.0
MASTER_CONNECT_TIMEOUT_S = 5.0
# What `neardup spark` runs on the executors: the package, its compiled kernels and web archive readers, and
# the worker-side code.
PROBED_MODULES = (
    "neardup",
    "neardup._html",
    "neardup._kernels",
    "neardup._archives",
    "neardup.spark.arrow",
)
JAVA_HINT = "`neardup spark` needs a Java 17+ runtime (e.g. apt-get install default-jre-headless)"


class SparkUnavailable(NeardupError):
    """Spark cannot run here or on the cluster: Java, the master or the executors."""


@dataclass(frozen=True, slots=True)
class ExecutorReport:
    python: str  # the executors' interpreter
    python_version: str  # major.minor
    pyspark_version: str  # of the cluster's Spark, as its Python workers import it
    missing: str  # the first failed import, as "module: error", or ""


def check_java() -> None:
    """A `java` of version 17 or newer, where pyspark's launcher looks (JAVA_HOME, else PATH)."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    where = f"JAVA_HOME={home}" if home else "PATH"
    if not java or not os.access(java, os.X_OK):
        raise SparkUnavailable(f"no Java runtime on {where}: {JAVA_HINT}")
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkUnavailable(f"cannot run {java} ({exc}): {JAVA_HINT}") from None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr)
    if found is None:
        raise SparkUnavailable(f"{java} -version gives no version: {JAVA_HINT}")
    major = int(found.group(1)) if found.group(1) != "1" else int(found.group(2) or 0)
    if major < 17:
        raise SparkUnavailable(f"{java} is Java {major}: {JAVA_HINT}")


def master_addresses(master: str) -> list[tuple[str, int]]:
    """The (host, port) a spark:// or k8s:// master listens on; [] for masters found by other means
    (local, yarn: its address comes from the Hadoop configuration)."""
    if master.startswith("spark://"):
        hosts = master[len("spark://") :].split(",")  # spark://h1:7077,h2:7077: standby masters
        out = []
        for h in hosts:
            host, _, port = h.rpartition(":")
            if not host or not port.isdigit():
                raise SparkUnavailable(f"--master {master}: expected spark://HOST:PORT")
            out.append((host, int(port)))
        return out
    if master.startswith("k8s://"):
        url = urlsplit(
            master[len("k8s://") :] if "://" in master[len("k8s://") :] else "https://" + master[6:]
        )
        default = 443 if url.scheme == "https" else 80
        return [(url.hostname or "", url.port or default)]
    return []


def check_master(master: str, timeout: float = MASTER_CONNECT_TIMEOUT_S) -> None:
    """The master accepts a connection (any of a standalone master's standby list)."""
    addresses = master_addresses(master)
    errors = []
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            errors.append(exc.strerror or type(exc).__name__)
    if addresses:
        raise SparkUnavailable(
            f"the Spark master {master} does not answer ({errors[0]}): is it running, and are the host "
            "and port those it prints at start (spark://HOST:PORT)?"
        )


# The probe runs on an executor whose Python may hold nothing but the standard library: its code is
# compiled here from source, as a function of no importable module, so cloudpickle ships it by value
# and unpickling it there imports nothing.
_PROBE_SOURCE = """
def probe(_):
    import importlib, sys
    missing = ""
    for name in MODULES:
        try:
            importlib.import_module(name)
        except BaseException as exc:
            missing = f"{name}: {type(exc).__name__}: {exc}"
            break
    try:
        import pyspark
        spark_version = pyspark.__version__
    except BaseException:
        spark_version = "?"
    py = "%d.%d" % sys.version_info[:2]
    yield (sys.executable, py, spark_version, missing)
"""


def _probe_function() -> Any:
    namespace: dict[str, Any] = {"__name__": "neardup_executor_probe", "MODULES": PROBED_MODULES}
    exec(compile(_PROBE_SOURCE, "<neardup executor probe>", "exec"), namespace)
    fn = namespace["probe"]
    assert isinstance(fn, types.FunctionType)
    return fn


def _first_line(exc: BaseException) -> str:
    """The line of a py4j / JVM error that says what happened, without the stack trace: a failed task's
    own error (after "most recent failure: ... executor N): ") unless it is a Python traceback, whose
    last line is taken then, else the first line."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    for ln in lines:
        task = re.search(r"most recent failure: .*?\): (.+)", ln)
        if task and not task.group(1).endswith("Traceback (most recent call last):"):
            return task.group(1)[:300]
    for ln in reversed(lines):  # a Python worker's traceback ends with its exception
        if re.match(r"^[A-Za-z_.]*(Error|Exception)\b.*:", ln):
            return ln[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]


def run_probe(spark: SparkSession, timeout: float, *, shipped: bool) -> ExecutorReport:
    """One task on an executor, cancelled after `timeout` seconds."""
    sc = spark.sparkContext
    result: list[Any] = []
    failure: list[BaseException] = []
    group = "neardup-probe"

    def job() -> None:
        try:
            sc.setJobGroup(group, "neardup: can the executors import neardup?", interruptOnCancel=True)
            result.extend(sc.parallelize([0], 1).mapPartitions(_probe_function()).collect())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=job, name="neardup-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        sc.cancelJobGroup(group)
        thread.join(10)
        raise SparkUnavailable(
            f"no executor ran the probe task within {timeout:.0f} s: the cluster ({sc.master}) has no free "
            "worker with the cores and memory asked (spark.executor.cores, spark.executor.memory), or runs "
            f"another Spark version than this driver's pyspark {_driver_pyspark()} "
            "(--conf neardup.probeTimeout=SECONDS to wait longer)"
        )
    if failure:
        raise SparkUnavailable(
            f"the executors cannot run Python for `neardup spark`: {_first_line(failure[0])}"
            f"{_python_hint(sc.pythonExec, shipped)}"
        )
    python, python_version, pyspark_version, missing = result[0]
    return ExecutorReport(python, python_version, pyspark_version, missing)


def _driver_pyspark() -> str:
    import pyspark

    return str(pyspark.__version__)


def _python_hint(python: str, shipped: bool) -> str:
    if shipped:
        return (
            f" (their Python is {python!r} of the shipped archive: a venv archive links to the driver's "
            "base Python, which every node needs at the same path; a conda-pack archive holds its own)"
        )
    return (
        f" (their Python is {python!r}: let `neardup spark` ship its environment, the default, or pass "
        "--python-env with an archive built for the cluster)"
    )


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def check_executors(
    report: ExecutorReport, *, driver_python: str, driver_spark: str, python_exec: str, shipped: bool
) -> None:
    """SparkUnavailable unless the executors run the driver's Python X.Y and Spark X.Y and imported
    neardup; the message says what they lack and how to give it to them."""
    if report.python_version != driver_python:
        raise SparkUnavailable(
            f"the executors run Python {report.python_version} ({report.python}), this driver Python "
            f"{driver_python}: pyspark needs the same on both sides{_python_hint(python_exec, shipped)}"
        )
    if report.pyspark_version != "?" and _minor(report.pyspark_version) != _minor(driver_spark):
        raise SparkUnavailable(
            f"the cluster runs Spark {report.pyspark_version}, this driver pyspark {driver_spark}: "
            f"install the cluster's version here (pip install 'pyspark=={_minor(report.pyspark_version)}.*')"
        )
    if report.missing:
        how = (
            "the shipped environment does not hold it, or not for the executors' platform: pack it on a "
            "machine like the nodes, or pass --python-env with an archive built for them"
            if shipped
            else "ship neardup's environment (leave out --python-env none), pass --python-env with an "
            "archive built for the cluster, or install neardup[spark] on every node"
        )
        raise SparkUnavailable(
            f"the executors' Python ({report.python}) cannot import {report.missing}: {how}"
        )


def probe_executors(
    spark: SparkSession, *, timeout: float = PROBE_TIMEOUT_S, shipped: bool
) -> ExecutorReport:
    """An executor imports neardup with its compiled extensions, under the driver's Python and Spark
    versions; otherwise SparkUnavailable says what the executors lack and how to give it to them."""
    sc = spark.sparkContext
    level = spark.conf.get("neardup.logLevel", "WARN") or "WARN"
    sc.setLogLevel("OFF")  # a failed probe task is reported in one line below, not as Spark's trace
    try:
        report = run_probe(spark, timeout, shipped=shipped)
    finally:
        sc.setLogLevel(level)
    check_executors(
        report,
        driver_python="{}.{}".format(*sys.version_info[:2]),
        driver_spark=_driver_pyspark(),
        python_exec=sc.pythonExec,
        shipped=shipped,
    )
    return report
