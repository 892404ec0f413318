"""Spark engine, set-up: the checks before a Spark job starts, and the SparkSession it runs in.

Data flow: cli (``--engine spark --master URL``) -> **spark.session** -> the jobs of
spark.ranker and spark.indexer. PySpark is the ``spark`` extra; Spark itself runs in a Java
virtual machine, so Java 17 or newer must be on the PATH (or in ``JAVA_HOME``): Debian's
``openjdk-17-jre-headless``, which ``make test`` installs when it can. Both are checked
before anything starts, each missing one said in one line (exit status 2), not as the
traceback PySpark prints when it cannot launch the JVM.

``--master`` is any Spark master URL: ``local[*]`` (the default: every core of this
machine), ``local[2]``, ``spark://HOST:7077`` for a standalone cluster, ``yarn``, or
``k8s://...``. On a cluster the executors open the crawl folders by their path, so the
folders must be on a file system every node mounts at the same path.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gossamer import extras
from gossamer.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DEFAULT_MASTER", "java_missing", "require_spark", "spark_session"]

DEFAULT_MASTER = "local[*]"
JAVA_PACKAGE = "openjdk-17-jre-headless"


def java_missing() -> str | None:
    """Why Spark cannot start its JVM here, or None when a ``java`` is there to start."""
    home = os.environ.get("JAVA_HOME")
    if home:
        if (Path(home) / "bin" / "java").is_file():
            return None
        return f"JAVA_HOME is {home}, which has no bin/java"
    if shutil.which("java") is None:
        return f"no java on the PATH (Debian: apt-get install {JAVA_PACKAGE})"
    return None


def require_spark(what: str) -> None:
    """Refuse to start ``what`` without PySpark or Java, in one line each."""
    extras.require(what, "spark")
    problem = java_missing()
    if problem is not None:
        raise ConfigError(f"{what} runs on Spark, which needs Java 17 or newer: {problem}")


def spark_session(master: str = DEFAULT_MASTER, *, app: str = "gossamer") -> SparkSession:
    """A SparkSession on ``master`` (the one already running in this process, if any)."""
    from pyspark.errors import PySparkException  # noqa: PLC0415 - the spark extra
    from pyspark.sql import SparkSession  # noqa: PLC0415

    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        # PageRank's joins are planned co-partitioned (spark/pagerank.py): a broadcast or
        # an adaptive re-plan would add a job to every one of its rounds.
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.sql.adaptive.enabled", "false")
    )
    if master.startswith("local"):
        # Spark's default of 200 shuffle partitions is sized for a cluster; one machine's
        # cores want a few each.
        builder = builder.config("spark.sql.shuffle.partitions", str(2 * (os.cpu_count() or 1)))
        # The tasks read crawl folders with Gossamer's own code, which this interpreter has
        # (PySpark would start "python3" from the PATH). PySpark reads the environment, not
        # its configuration, when it starts; a cluster's nodes name theirs the same way.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        return builder.getOrCreate()
    except (PySparkException, OSError) as exc:
        raise ConfigError(f"cannot start Spark on {master}: {exc}") from exc
