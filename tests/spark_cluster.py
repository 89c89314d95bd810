"""A Spark standalone cluster on this machine, shaped as a real one: a master and a worker, each its own
JVM started with pyspark's `spark-class`, bound to 127.0.0.1 on free ports, the worker running a bare
venv's Python (no neardup, numpy or pyarrow), as a fresh cluster node would. The cluster test and
`bench/bench_spark.py` start it the same way: `standalone_cluster(folder, cores=..., memory=...)`.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from live_app import free_port

PR_SET_PDEATHSIG = 1  # prctl(2)
START_TIMEOUT_S = 120


class ClusterDown(RuntimeError):
    """The master or the worker did not come up; the message holds the tails of their logs."""


@dataclass(frozen=True, slots=True)
class Cluster:
    master: str  # spark://127.0.0.1:PORT
    python: Path  # the bare venv's Python the worker runs
    logs: Path
    worker_pid: int  # the worker daemon: the executors' JVMs and their Python workers are its children


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def node_env(**extra: str) -> dict[str, str]:
    """A cluster node's environment: nothing from this checkout or this venv's Python settings."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_CONF_DIR")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("NEARDUP_")}
    return {**env, **extra}


def bare_venv(folder: Path) -> Path:
    """A venv without pip, neardup or any package; returns its Python."""
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder / "bin" / "python"


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except OSError:
        return 0


def _die_with_this_process() -> None:
    """In the child, before it runs `spark-class` (which execs the JVM): SIGTERM when the process that
    started the cluster ends, so a killed test or benchmark leaves no daemon behind."""
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


@contextmanager
def standalone_cluster(folder: Path, *, cores: int, memory: str) -> Iterator[Cluster]:
    """A master and one worker of `cores` cores and `memory` for executors, started under `folder`
    (the bare venv, logs, the worker's work dir) and stopped on exit; raises ClusterDown if the worker
    has not registered with the master within START_TIMEOUT_S."""
    python = bare_venv(folder / "bare")
    conf_dir = folder / "conf"  # an empty Spark configuration: no user setting leaks in
    conf_dir.mkdir()
    env = node_env(
        PATH=f"{python.parent}{os.pathsep}{os.environ['PATH']}",  # `python3` on the node is the bare one
        PYSPARK_PYTHON=str(python),
        SPARK_HOME=str(spark_home()),
        SPARK_CONF_DIR=str(conf_dir),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_DAEMON_MEMORY="256m",
    )
    spark_class = str(spark_home() / "bin" / "spark-class")
    port, ui_port, worker_port, worker_ui = free_port(), free_port(), free_port(), free_port()
    procs: list[subprocess.Popen[bytes]] = []
    logs = folder / "logs"
    logs.mkdir()
    try:
        master_cmd = [spark_class, "org.apache.spark.deploy.master.Master"]
        master_cmd += ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port)]
        procs.append(_daemon(master_cmd, env, folder, logs / "master.log"))
        worker_cmd = [spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}"]
        worker_cmd += ["--host", "127.0.0.1", "--port", str(worker_port), "--webui-port", str(worker_ui)]
        worker_cmd += ["--cores", str(cores), "--memory", memory, "--work-dir", str(folder / "work")]
        procs.append(_daemon(worker_cmd, env, folder, logs / "worker.log"))
        deadline = time.monotonic() + START_TIMEOUT_S
        while _alive_workers(ui_port) < 1:
            dead = [p for p in procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise ClusterDown(
                    "the standalone cluster did not come up:\n"
                    + "".join(f.read_text(errors="replace")[-3000:] for f in sorted(logs.iterdir()))
                )
            time.sleep(1)
        yield Cluster(f"spark://127.0.0.1:{port}", python, logs, procs[1].pid)
    finally:
        for proc in reversed(procs):
            _stop(proc)
