"""One SparkSession for every Spark test: starting the JVM costs seconds, a test's job less.

``local[2]`` (this machine's two cores), two shuffle partitions (one a core: four cost the
Spark tests about 3 s more, in rounds of tiny tasks), no web UI. Without PySpark or Java the
tests that ask for it are skipped, saying which is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from gossamer import extras
from gossamer.spark.session import java_missing, spark_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    if not extras.installed("spark"):
        pytest.skip("pyspark is not installed (the spark extra)")
    problem = java_missing()
    if problem is not None:
        pytest.skip(f"Spark needs Java: {problem}")
    session = spark_session("local[2]", app="gossamer-tests")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()
