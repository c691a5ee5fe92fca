"""One SparkSession (local[2]) for every Spark test, or a skip that says what is missing."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark", reason="the Spark engine's tests need PySpark: pip install 'cellsafe[spark]'")
    if shutil.which("java") is None:
        pytest.skip("the Spark engine's tests need Java 17 (Debian: apt-get install -y openjdk-17-jre-headless)")
    from cellsafe.engines.spark import spark_session

    session = spark_session("local[2]", config={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "2g"},
                            short_run=True)  # small tables: the JVM settings of a short run
    yield session
    session.stop()
