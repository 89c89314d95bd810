"""The Spark session, the file system it sees, and the raw input records as DataFrames."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NeardupError, NotACrawlDump
from ..ingest import detect_format
from .probe import PROBE_TIMEOUT_S, check_java, check_master, probe_executors
from .pyenv import ARCHIVE_ALIAS, EXECUTOR_PYTHON, pack_environment

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Pages are large: Arrow batches of this many records keep the Python workers' memory flat.
ARROW_BATCH = 500
WARC_SUFFIXES = (".warc", ".warc.gz", ".wet", ".wet.gz", ".arc", ".arc.gz", ".wacz")  # read as archives
# Bookkeeping columns that travel with each raw record (names no crawl field uses).
SRC, FILE, START = "__nd_src", "__nd_file", "__nd_block"


def spark_session(
    master: str = "local[*]",
    *,
    conf: dict[str, str] | None = None,
    app_name: str = "neardup",
    python_env: str = "auto",
    env_cache: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> SparkSession:
    """A session for `run_spark`, checked before any work: Java, the master, and (on a cluster) an
    executor that imports neardup under the driver's Python and Spark versions (`probe`).

    Local masters run the workers on this interpreter. On a cluster the executors' Python comes from
    `python_env`: "auto" packs this environment (`pyenv.pack_environment`, cached in `env_cache`) and
    ships it with `spark.archives`; an archive path or URI (HDFS, S3, ...) ships that one instead;
    "none" uses the executors' own Python (neardup installed on every node)."""
    # Batches cross to Python as Arrow (mapInArrow), never through pyspark's pandas conversion.
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    say = log or (lambda msg: None)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise NeardupError(
            "pyspark is not installed: pip install 'neardup[spark]' (needs Java 17+)"
        ) from None
    check_java()
    local = master.startswith("local")
    defaults: dict[str, str] = {}
    if local:
        # The workers must import the same numpy / resiliparse / neardup as this process.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # Spark's 200 shuffle partitions turn each of the ~40 small stages into 200 tasks on a few cores.
        inside = master[len("local[") : -1] if master.startswith("local[") else "1"
        cores = (os.cpu_count() or 2) if inside in ("*", "") else int(inside.split(",")[0])
        defaults["spark.sql.shuffle.partitions"] = str(4 * cores)
        # One JVM holds the driver and every task: the throughput collector spends less CPU than G1
        # (no concurrent marking beside the tasks on a few cores) and its RSS stays near the live heap.
        defaults["spark.driver.extraJavaOptions"] = "-XX:+UseParallelGC"
    else:
        check_master(master)
    settings = {
        **defaults,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH),
        # Normalizing a page costs milliseconds of CPU: smaller splits than the 128 MB default keep the
        # cores evenly busy (a .gz file is one split whatever this says).
        "spark.sql.files.maxPartitionBytes": "32m",
        **(conf or {}),
    }
    executor_python = None
    if not local and python_env != "none":
        archive = shipped_archive(python_env, env_cache, say)
        archives = settings.get("spark.archives")
        settings["spark.archives"] = f"{archives},{archive}" if archives else archive
        executor_python = settings["spark.pyspark.python"] = EXECUTOR_PYTHON
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    # pyspark takes the executors' Python from this variable when the context starts
    before = os.environ.get("PYSPARK_PYTHON")
    if executor_python:
        os.environ["PYSPARK_PYTHON"] = executor_python
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # py4j / JVM launch errors carry no common type
        raise NeardupError(
            f"cannot start Spark ({master}): {str(exc).splitlines()[0]} (is Java 17+ installed and on PATH?)"
        ) from None
    finally:
        if executor_python:
            _restore_env("PYSPARK_PYTHON", before)
    spark.sparkContext.setLogLevel(settings.get("neardup.logLevel", "WARN"))
    if not local:
        timeout = float(settings.get("neardup.probeTimeout", PROBE_TIMEOUT_S))
        say(f"probing the executors (up to {timeout:.0f} s) ...")
        try:
            report = probe_executors(spark, timeout=timeout, shipped=python_env != "none")
        except BaseException:
            spark.stop()
            raise
        say(f"executors ready: Python {report.python_version}, Spark {report.pyspark_version}")
    return spark


def _restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def shipped_archive(python_env: str, env_cache: Path | None, say: Callable[[str], None]) -> str:
    """The `spark.archives` entry (`ARCHIVE#environment`) for `--python-env`: this environment packed
    ("auto"), or a prebuilt archive, local or any URI Spark reads."""
    if python_env == "auto":
        archive = str(pack_environment(env_cache, log=say))
        say(f"executors' environment: {archive}")
        return f"{archive}#{ARCHIVE_ALIAS}"
    path, _, alias = python_env.partition("#")
    if alias and alias != ARCHIVE_ALIAS:
        raise NeardupError(f"--python-env {python_env}: the archive is unpacked as #{ARCHIVE_ALIAS}")
    if "://" not in path and not Path(path).is_file():
        raise NeardupError(
            f"--python-env {path}: no such archive (a .tar.gz / .zip of a venv-pack or conda-pack "
            "environment, a local path or a URI the cluster reads)"
        )
    return f"{path if '://' in path else Path(path).resolve()}#{ARCHIVE_ALIAS}"


# --- files, through Hadoop's file system (local, HDFS, object stores alike) -----------------------
def hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a driver's context has its JVM
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), p


def exists(spark: SparkSession, path: str) -> bool:
    fs, p = hadoop_path(spark, path)
    return bool(fs.exists(p))


def delete(spark: SparkSession, path: str) -> None:
    fs, p = hadoop_path(spark, path)
    if fs.exists(p):
        fs.delete(p, True)


def read_text(spark: SparkSession, path: str) -> str:
    """A small text file on any Hadoop file system (a manifest), read by the driver."""
    fs, p = hadoop_path(spark, path)
    stream = fs.open(p)
    try:
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        return str(jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def write_text(spark: SparkSession, path: str, text: str) -> None:
    fs, p = hadoop_path(spark, path)
    out = fs.create(p, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()


def display_path(uri: str) -> str:
    """'file:///a/b' -> '/a/b' (what the local engine would print); other URIs unchanged."""
    return uri[len("file:") :].replace("///", "/", 1) if uri.startswith("file:") else uri


# --- inputs --------------------------------------------------------------------------------------
def input_format(path: str, forced: str) -> str:
    if forced != "auto":
        return forced
    name = path.rstrip("/").lower()
    if name.endswith((".csv", ".csv.gz")):
        raise NotACrawlDump(
            f"{path}: CSV is not read by `neardup spark`: convert it to JSONL or Parquet, "
            "or load it with `neardup ingest`"
        )
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(WARC_SUFFIXES):
        return "warc"
    local = Path(display_path(path))
    if local.is_dir() and any(local.glob("*.parquet")):
        return "parquet"
    if local.is_dir() and warc_files(str(local)):
        return "warc"
    if local.is_file():  # by its magic bytes, as locally
        try:
            if detect_format(local) in ("warc", "arc", "wacz"):  # one reader path: `arrow.archive_batches`
                return "warc"
        except NotACrawlDump:
            pass  # read as JSON lines: every line is a rejected record, as before
    return "jsonl"


def warc_files(path: str) -> list[str]:
    """A WARC input: the file, or the WARC files of a directory (sorted). WARC files are read whole by
    one task each (the reader needs the file's start), so they must be reachable from the executors at
    the same path (a local or shared file system)."""
    local = Path(display_path(path))
    if local.is_dir():
        return sorted(str(p) for p in local.iterdir() if p.name.lower().endswith(WARC_SUFFIXES))
    return [str(local)]


def read_inputs(spark: SparkSession, inputs: Sequence[str], forced_format: str) -> dict[str, DataFrame]:
    """Raw records per format, each with its input index, file and split start."""
    from pyspark.sql import functions as F

    frames: dict[str, list[DataFrame]] = {"jsonl": [], "parquet": [], "warc": []}
    for src, path in enumerate(inputs):
        fmt = input_format(path, forced_format)
        if fmt == "warc":
            files = warc_files(path)
            missing = [f for f in files if not Path(f).is_file()]
            if not files or missing:
                raise NotACrawlDump(f"{path}: no WARC file there" + (f" ({missing[0]})" if missing else ""))
            # `file:` URIs, as input_file_name() gives for the other formats
            frames["warc"].append(
                spark.createDataFrame(
                    [(src, Path(f).resolve().as_uri(), 0) for f in files],
                    f"{SRC} int, {FILE} string, {START} bigint",
                )
            )
            continue
        try:
            if fmt == "jsonl":
                # Raw bytes, as the local engine reads them: `validate` reports invalid UTF-8 itself.
                df = spark.read.text(path).select(F.col("value").cast("binary").alias("value"))
            else:
                df = spark.read.parquet(path)
        except Exception as exc:  # AnalysisException: path does not exist, unreadable Parquet
            raise NotACrawlDump(f"{path}: cannot read it as {fmt} ({str(exc).splitlines()[0]})") from None
        if fmt == "parquet" and "url" not in df.columns:
            raise NotACrawlDump(f"{path}: a Parquet file without a 'url' column")
        frames[fmt].append(
            df.withColumn(SRC, F.lit(src))
            .withColumn(FILE, F.input_file_name())
            .withColumn(START, F.input_file_block_start())
        )
    out = {}
    for fmt, dfs in frames.items():
        if dfs:
            df = dfs[0]
            for other in dfs[1:]:
                df = df.unionByName(other, allowMissingColumns=True)
            out[fmt] = df
    return out
