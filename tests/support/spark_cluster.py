"""A Spark standalone cluster on loopback, from pyspark's own ``bin/spark-class``: one
master and N workers (``org.apache.spark.deploy.master.Master`` / ``...worker.Worker``),
as Spark's standalone-mode documentation describes.

``with standalone_cluster(tmp, workers=2) as cluster:`` starts them, waits (bounded) until
the master's web UI lists every worker as alive, and yields ``cluster.url``
(``spark://127.0.0.1:PORT``); on the way out every process it started is stopped by its
pid (SIGTERM, then SIGKILL after a grace period). ``spark_submit(...)`` runs pyspark's
``bin/spark-submit``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def spark_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every Spark process here: loopback, the venv's Python."""
    env = dict(os.environ)
    env.update(
        {
            "SPARK_HOME": str(spark_home()),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_NO_DAEMONIZE": "1",
        }
    )
    env.pop("PYSPARK_GATEWAY_PORT", None)
    env.pop("PYSPARK_GATEWAY_SECRET", None)
    env.update(extra or {})
    return env


@dataclass
class Cluster:
    url: str
    webui: str
    workdir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def state(self) -> dict[str, object]:
        with urllib.request.urlopen(f"{self.webui}/json/", timeout=5) as reply:
            data: dict[str, object] = json.load(reply)
            return data

    def logs(self) -> str:
        parts = []
        for path in sorted(self.workdir.glob("*.log")):
            parts.append(f"--- {path.name}\n" + path.read_text(errors="replace")[-3000:])
        return "\n".join(parts)


def _stop(procs: Sequence[subprocess.Popen[bytes]], grace: float = 15) -> None:
    for proc in reversed(procs):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in reversed(procs):
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextmanager
def standalone_cluster(
    workdir: Path, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 120
) -> Iterator[Cluster]:
    workdir.mkdir(parents=True, exist_ok=True)
    spark_class = str(spark_home() / "bin" / "spark-class")
    port, ui = free_port(), free_port()
    cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui}", workdir)
    env = spark_env({"SPARK_DAEMON_MEMORY": "512m"})
    logs = []
    try:
        log = open(workdir / "master.log", "wb")
        logs.append(log)
        cluster.procs.append(
            subprocess.Popen(
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui),
                ],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        )
        for n in range(workers):
            log = open(workdir / f"worker{n}.log", "wb")
            logs.append(log)
            work = workdir / f"worker{n}"
            work.mkdir(exist_ok=True)
            cluster.procs.append(
                subprocess.Popen(
                    [
                        spark_class,
                        "org.apache.spark.deploy.worker.Worker",
                        "--host",
                        "127.0.0.1",
                        "--cores",
                        str(cores),
                        "--memory",
                        memory,
                        "--webui-port",
                        str(free_port()),
                        "--work-dir",
                        str(work),
                        cluster.url,
                    ],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + timeout
        alive = 0
        while time.monotonic() < deadline:
            dead = [p.args[1] for p in cluster.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"Spark process ended early: {dead}\n{cluster.logs()}")
            try:
                alive = int(cluster.state().get("aliveworkers", 0))  # type: ignore[call-overload]
            except OSError:
                alive = 0
            if alive >= workers:
                break
            time.sleep(1)
        else:
            raise TimeoutError(
                f"{alive} of {workers} workers alive after {timeout} s\n{cluster.logs()}"
            )
        yield cluster
    finally:
        _stop(cluster.procs)
        for log in logs:
            log.close()


def spark_submit(
    master: str,
    script: Path,
    args: Sequence[str],
    *,
    log: Path,
    timeout: float = 600,
    conf: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``spark-submit --master MASTER SCRIPT ARGS`` (docs/pipeline.md, "On a cluster"),
    output in ``log``."""
    command = [str(spark_home() / "bin" / "spark-submit"), "--master", master]
    for key, value in (conf or {}).items():
        command += ["--conf", f"{key}={value}"]
    command += [str(script), *args]
    with open(log, "w") as out:
        proc = subprocess.Popen(
            command,
            env=spark_env(),
            stdout=subprocess.PIPE,
            stderr=out,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
            raise
        return subprocess.CompletedProcess(command, proc.returncode, stdout, "")
