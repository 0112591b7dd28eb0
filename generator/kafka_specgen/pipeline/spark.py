"""Spark for the pipeline: a session (local mode on loopback unless told otherwise), what
is shipped to every executor (the generated package and the installed ``kafka_specgen``
package, whole, as zips), and the one line that says why a job failed.

Spark's own console logging is switched off (``log4j2.properties`` beside this module, and
``setLogLevel("OFF")``): a failed task would otherwise print pages of Java and Python
traces. The job reports a failure itself (``failure_line``), in one line, and keeps the
trace in a file.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from ..library import GeneratedPackage

#: A log4j2 configuration that keeps Spark's console quiet (the driver JVM of local mode).
LOG4J2 = Path(__file__).resolve().parent / "log4j2.properties"


def spark_session(
    master: str | None = None, *, quick_jvm: bool = False, conf: dict[str, str] | None = None
) -> Any:
    """A SparkSession: ``master``, or local mode unless launched by ``spark-submit``.

    Local mode binds to loopback and runs the Python workers with this interpreter.
    ``quick_jvm`` trades JIT depth for start-up (small inputs, tests).
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
    java_options = []
    if LOG4J2.is_file() and not under_submit:
        java_options.append(f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}")
    if master is not None and master.startswith("local"):
        settings.update(
            {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.sql.shuffle.partitions": "8",
            }
        )
    if quick_jvm:
        java_options += ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    if master is not None and master.startswith("local") and not under_submit:
        from .classarchive import archive_options

        java_options += archive_options()
    if java_options:
        settings["spark.driver.extraJavaOptions"] = " ".join(java_options)
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    if under_submit:
        session = builder.getOrCreate()
    else:
        session = _with_jvm_output_in(JVM_LOG, builder.getOrCreate)
    session.sparkContext.setLogLevel("OFF")
    return session


#: Where the local JVM (and the Python workers it starts) write their output: the JVM's
#: start-up notices, its class archive's (``classarchive``), and what it says when it dies.
JVM_LOG = Path(tempfile.gettempdir()) / f"kafka-specgen-spark-{os.getpid()}.log"


def _with_jvm_output_in(log: Path, start: Any) -> Any:
    """Run ``start`` (which launches the JVM) with file descriptors 1 and 2 pointing to
    ``log``, so the JVM inherits that as its stdout and stderr; this process gets its own
    back."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(log, "ab") as out:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            return start()
    finally:
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)


# --- what the executors get ----------------------------------------------------------------------


def zip_package(folder: Path, name: str, out: Path) -> Path:
    """A zip of the Python package ``folder/name`` (for ``addPyFile``)."""
    target = out / f"{name}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, arcname in _files(folder / name, name):
            zf.write(path, arcname)
    return target


def zip_tool(out: Path) -> Path:
    """A zip of the installed ``kafka_specgen`` package, whole: every module and data file
    of its folder, and its data folders (``specs``, ``templates``) where a checkout keeps
    them outside it. Executors import whatever the job's functions import, so nothing is
    picked: a module added later is shipped too."""
    import importlib

    from ..resources import package_folder

    init = importlib.import_module("kafka_specgen").__file__
    if init is None:
        raise RuntimeError("kafka_specgen has no __init__ file to ship")
    package = Path(init).resolve().parent
    target = out / "kafka_specgen.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, arcname in _files(package, "kafka_specgen"):
            zf.write(path, arcname)
        for data in ("specs", "templates"):
            folder = package_folder(data).resolve()
            if package not in folder.parents:
                for path, arcname in _files(folder, f"kafka_specgen/{data}"):
                    zf.write(path, arcname)
    return target


def _files(folder: Path, prefix: str) -> Iterator[tuple[Path, str]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield path, f"{prefix}/{path.relative_to(folder).as_posix()}"


def ship(spark: Any, package: GeneratedPackage, workdir: Path) -> None:
    """Make ``package`` and ``kafka_specgen`` importable on the driver and every executor
    (``workdir``: where the zips go)."""
    package.module()
    sc = spark.sparkContext
    shipped = _SHIPPED.setdefault(sc.applicationId, set())
    # Spark refuses a second file of the same name
    if package.name not in shipped:
        sc.addPyFile(str(zip_package(package.folder, package.name, workdir)))
        shipped.add(package.name)
    if "kafka_specgen" not in shipped:
        sc.addPyFile(str(zip_tool(workdir)))
        shipped.add("kafka_specgen")


_SHIPPED: dict[str, set[str]] = {}


# --- failures -----------------------------------------------------------------------------------

#: The last line of a Python traceback: ``ModuleNotFoundError: No module named 'x'``.
_PYTHON_ERROR = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b.*)$")
#: A Java exception line: ``java.io.FileNotFoundException: ...``; ``Caused by: ...``.
_JAVA_ERROR = re.compile(r"^(?:Caused by: )?((?:[a-z]\w*\.)+[A-Z]\w*(?:Exception|Error)\b.*)$")


#: Java exceptions that only say a worker went away: the cause is elsewhere.
_SYMPTOMS = ("java.net.SocketException", "java.io.EOFException", "java.lang.InterruptedException")


def failure_line(exc: BaseException) -> str:
    """Why a Spark job failed, in one line: the Python exception an executor's Python
    worker raised (the last line of its traceback, from the error or, for a worker that
    crashed, from the JVM's stderr), else the root Java exception, else the exception's own
    first line."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    python = [m.group(1) for line in lines if (m := _PYTHON_ERROR.match(line))]
    if "Traceback (most recent call last)" in text and python:
        return f"an executor's Python worker raised {python[-1]}"
    if "Python worker exited unexpectedly" in text:
        worker = _last_python_error(JVM_LOG)
        return "an executor's Python worker crashed" + (f": {worker}" if worker else "")
    java = [m.group(1) for line in lines if (m := _JAVA_ERROR.match(line.lstrip(": ")))]
    causes = [j for j in java if not j.startswith(_SYMPTOMS)]
    if causes:
        return causes[-1]
    if python:
        return python[-1]
    first = lines[0] if lines else type(exc).__name__
    return f"{type(exc).__name__}: {first}" if type(exc).__name__ not in first else first


def _last_python_error(log: Path) -> str | None:
    """The last Python exception line in the tail of a log file."""
    if not log.is_file():
        return None
    with open(log, "rb") as f:
        f.seek(max(0, log.stat().st_size - 65536))
        tail = f.read().decode("utf-8", errors="replace")
    found = [m.group(1) for line in tail.splitlines() if (m := _PYTHON_ERROR.match(line.strip()))]
    return found[-1] if found else None


def keep_trace(exc: BaseException) -> Path:
    """Write the whole failure (Java and Python traces, and the tail of the JVM's stderr)
    to a file; returns its path."""
    import traceback

    handle, name = tempfile.mkstemp(prefix="kafka-specgen-pipeline-failure-", suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        out.write("\n" + str(exc) + "\n")
        if JVM_LOG.is_file():
            out.write(f"\n--- the end of {JVM_LOG} ---\n")
            out.write(JVM_LOG.read_text(encoding="utf-8", errors="replace")[-20000:])
    return Path(name)
