"""Live: a short librdkafka session through ``kafka-specgen capture`` in front of Tansu.

The test starts its own Tansu (advertising the proxy's port, so every reconnect passes
through the proxy) and the proxy as a subprocess, drives confluent-kafka through it,
stops the proxy with SIGINT, and checks the capture: every request has its response,
and every frame round-trips byte-exact with the package generated from the newest corpus.
It stops everything it started.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.golden import Frame
from bench.tansu import free_port, start_tansu
from tests.runtime.test_golden import corpus_for, packages, round_trip_problem  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def librdkafka_session(bootstrap: str) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "live-admin"})
    for future in admin.create_topics([NewTopic("live-topic", 2, 1)], request_timeout=10).values():
        future.result(timeout=15)
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "live-producer",
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 1,
        }
    )
    for i in range(6):
        producer.produce(
            "live-topic",
            key=b"k%d" % i,
            value=b"live %d" % i,
            partition=i % 2,
            headers=[("h", b"v")],
        )
    assert producer.flush(15) == 0
    assert "live-topic" in admin.list_topics(timeout=10).topics


def test_capture_of_a_librdkafka_session_round_trips(tmp_path: Path, packages: Any) -> None:
    proxy_port = free_port()
    broker = start_tansu(free_port(), advertised_port=proxy_port)
    out = tmp_path / "live.jsonl"
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kafka_specgen.cli",
            "capture",
            "--listen",
            f"{HOST}:{proxy_port}",
            "--upstream",
            f"{HOST}:{broker.port}",
            "--out",
            str(out),
            "--duration",
            "60",
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_port(proxy_port)
        librdkafka_session(f"{HOST}:{proxy_port}")
        time.sleep(0.2)
    finally:
        if proxy.poll() is None:
            proxy.send_signal(signal.SIGINT)
        try:
            _, stderr = proxy.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proxy.kill()
            _, stderr = proxy.communicate(timeout=5)
        broker.stop()
    assert proxy.returncode == 0, stderr
    assert "frames written" in stderr

    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) >= 10
    keys = {(r["api_key"], r["dir"]) for r in records}
    assert {
        (18, "request"),
        (18, "response"),
        (19, "request"),
        (0, "request"),
        (0, "response"),
        (3, "response"),
    } <= keys
    requests = {(r["conn"], r["correlation_id"]) for r in records if r["dir"] == "request"}
    responses = [(r["conn"], r["correlation_id"]) for r in records if r["dir"] == "response"]
    assert set(responses) <= requests
    assert all(r["client_id"] in ("live-admin", "live-producer") for r in records)
    # the two ends of each frame: the client's address is where requests come from and
    # responses go, the broker's (the upstream) the other way round
    upstream = f"{HOST}:{broker.port}"
    for r in records:
        client, far = (r["src"], r["dst"]) if r["dir"] == "request" else (r["dst"], r["src"])
        assert far == upstream and client.startswith(f"{HOST}:") and client != upstream
    problems = []
    for i, r in enumerate(records, 1):
        name = corpus_for(r["api_key"], r["api_version"])
        assert name is not None, r
        frame = Frame(
            "live.jsonl",
            i,
            "librdkafka",
            r["dir"],
            r["api_key"],
            r["api_version"],
            r["correlation_id"],
            r["client_id"],
            bytes.fromhex(r["frame"]),
        )
        problem = round_trip_problem(frame, packages(name))
        if problem:
            problems.append(problem)
    assert not problems, "\n".join(problems)
