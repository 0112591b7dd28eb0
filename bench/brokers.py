"""The brokers the fake-broker benchmarks run against, each in its own process on loopback
(``kafka-specgen fake-broker``; Tansu, what users would start instead), and the two ways the
benchmarks talk to one: our blocking client, and request frames encoded by hand."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kafka_specgen.library import GeneratedPackage

HOST = "127.0.0.1"


class Target:
    """A broker a load runs against: its name, its port and how to stop it."""

    def __init__(self, name: str, port: int, stop: Callable[[], None]) -> None:
        self.name, self.port, self.stop = name, port, stop

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"


class FakeBroker:
    """A running ``kafka-specgen fake-broker`` process and the port it listens on."""

    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process, self.port = process, port

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def peak_mib(self) -> float:
        """The broker's peak resident memory so far, MiB."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return float("nan")
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")


@contextmanager
def fake_broker(
    specs: Path, *args: str, address_space: int | None = None, files: int | None = None
) -> Iterator[FakeBroker]:
    """``kafka-specgen fake-broker --specs SPECS ARGS`` on a free port, in its own process,
    its address space and open files capped if asked; stopped at the end."""

    def limits() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    command = [sys.executable, "-m", "kafka_specgen.cli", "fake-broker"]
    process = subprocess.Popen(
        [*command, "--listen", f"{HOST}:0", "--specs", str(specs), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=limits if address_space is not None or files is not None else None,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        port = int(banner.split(f"{HOST}:")[1].split()[0])
        yield FakeBroker(process, port)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def fake_broker_target(specs: Path) -> Iterator[Target]:
    """The fake broker at its defaults, as a load's target."""
    with fake_broker(specs) as broker:
        yield Target("fake broker", broker.port, broker.process.terminate)


@contextmanager
def tansu() -> Iterator[Target]:
    """Tansu in memory, as a load's target."""
    from bench.tansu import free_port, start_tansu

    handle = start_tansu(free_port())
    try:
        yield Target("Tansu", handle.port, handle.stop)
    finally:
        handle.stop()


def client(package: GeneratedPackage, port: int, timeout: float = 30.0) -> Any:
    """Our blocking client, connected to the broker on ``port``."""
    connection = package.module("connection").ClientConnection(request_timeout=timeout)
    return package.module("client").Client.connect(HOST, port, connection)


def frame(package: GeneratedPackage, request: Any, version: int, cid: int) -> bytes:
    """``request`` as a whole frame (size prefix, header, body), to send on a raw socket."""
    headers, framing = package.module("headers"), package.module("framing")
    header = headers.RequestHeader(
        request_api_key=request.API_KEY,
        request_api_version=version,
        correlation_id=cid,
        client_id="bench",
    )
    return bytes(framing.add_size_prefix(framing.encode_request(header, request)))
