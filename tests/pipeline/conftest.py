"""The pipeline tests' Spark: one local session for every test file that asks for it (the
JVM start costs seconds), and the spec set the captures are decoded with."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.support import genpkg


def golden_specs() -> Path:
    """A spec folder that has every version the captures use (Produce v0-v2, Fetch
    v0-v3): Kafka trunk of 2024-10. (The pipeline's own default, ``--release all``, is
    tested on the mixed fleet and from the wheel.)"""
    return genpkg.CORPORA / "trunk-2024-10" / "message"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    # `make test` installs the spark extra and Java: a missing piece is a failure to see,
    # not a reason to skip.
    if (
        shutil.which("java") is None
        or subprocess.run(["java", "-version"], capture_output=True, check=False).returncode != 0
    ):
        raise RuntimeError("PySpark needs Java 17+ on PATH (docs/pipeline.md, 'Set-up')")
    from kafka_specgen.pipeline.datasource import KafkaCaptureDataSource
    from kafka_specgen.pipeline.spark import spark_session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    session = spark_session(
        "local[2]",
        quick_jvm=True,
        conf={
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "1g",
        },
    )
    session.dataSource.register(KafkaCaptureDataSource)
    yield session
    session.stop()
