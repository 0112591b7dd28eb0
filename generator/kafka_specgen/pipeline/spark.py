"""Spark for the pipeline: a session (local mode on loopback unless told otherwise), and
the generated package and the pipeline's own code shipped to every executor as zips."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..library import GeneratedPackage


def spark_session(
    master: str | None = None, *, quick_jvm: bool = False, conf: dict[str, str] | None = None
) -> Any:
    """A SparkSession: ``master``, or local mode unless launched by ``spark-submit``.

    Local mode binds to loopback and runs the Python workers with this interpreter.
    ``quick_jvm`` trades JIT depth for start-up (tests).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if master is None and not under_submit:
        master = "local[*]"
    if master is not None and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("kafka-specgen pipeline")
    if master is not None:
        builder = builder.master(master)
    settings = {"spark.sql.session.timeZone": "UTC", "spark.ui.showConsoleProgress": "false"}
    if master is not None and master.startswith("local"):
        settings.update(
            {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.sql.shuffle.partitions": "8",
            }
        )
    if quick_jvm:
        settings["spark.driver.extraJavaOptions"] = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def zip_package(folder: Path, name: str, out: Path) -> Path:
    """A zip of the Python package ``folder/name`` (for ``addPyFile``)."""
    target = out / f"{name}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((folder / name).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(folder).as_posix())
    return target


def zip_pipeline(out: Path) -> Path:
    """A zip of ``kafka_specgen``'s own ``__init__`` and its ``pipeline`` subpackage: all
    that executors import of the tool (no jinja2, black or jsonschema there)."""
    import importlib

    init = importlib.import_module("kafka_specgen").__file__
    if init is None:
        raise RuntimeError("kafka_specgen has no __init__ file to ship")
    target = out / "kafka_specgen.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(Path(init), "kafka_specgen/__init__.py")
        here = Path(__file__).resolve().parent
        for path in sorted(here.rglob("*.py")):
            zf.write(path, f"kafka_specgen/pipeline/{path.relative_to(here).as_posix()}")
    return target


def ship(spark: Any, package: GeneratedPackage, workdir: Path) -> None:
    """Make ``package`` and the pipeline importable on the driver and every executor
    (``workdir``: where the zips go)."""
    package.module()
    sc = spark.sparkContext
    shipped = _SHIPPED.setdefault(sc.applicationId, set())
    # Spark refuses a second file of the same name
    if package.name not in shipped:
        sc.addPyFile(str(zip_package(package.folder, package.name, workdir)))
        shipped.add(package.name)
    if "kafka_specgen" not in shipped:
        sc.addPyFile(str(zip_pipeline(workdir)))
        shipped.add("kafka_specgen")


_SHIPPED: dict[str, set[str]] = {}
