"""A mixed fleet on one host, recorded: four apps on 127.0.0.1 talk to a Tansu broker
through ``kafka-specgen capture``, each producing and consuming:

=================  ======================================  ===============================
client id          software                                what it sends
=================  ======================================  ===============================
legacy-billing     kafka-python, ``api_version=(0, 10)``   ApiVersions v0, Produce v2 with
                                                           message format v1, Fetch v2 ...
orders-service     confluent-kafka (librdkafka)            ApiVersions v3+ (names itself)
inventory          aiokafka                                ApiVersions v0, negotiated
raw-metrics        a raw socket client (this module)       ApiVersions v0, Metadata v12,
                                                           Produce v9, Fetch v12
=================  ======================================  ===============================

Three of them report no software (ApiVersions below v3): only their client ids tell them
apart. Each app runs in a subprocess of its own (``python -m tests.support.mixed_fleet
APP BOOTSTRAP``), one after another, with a time limit; everything started is stopped.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from bench.tansu import free_port, start_tansu

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
APPS = ("orders-service", "legacy-billing", "inventory", "raw-metrics")
RECORDS = 6


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


def record_mixed_fleet(out: Path, timeout: float = 60.0) -> Path:
    """Record the four apps into ``out`` (a capture file); returns it."""
    proxy_port = free_port()
    broker = start_tansu(free_port(), advertised_port=proxy_port)
    proxy = subprocess.Popen(
        [sys.executable, "-m", "kafka_specgen.cli", "capture", "--quiet"]
        + ["--listen", f"{HOST}:{proxy_port}", "--upstream", f"{HOST}:{broker.port}"]
        + ["--out", str(out), "--duration", str(int(timeout * len(APPS)))],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_port(proxy_port)
        for app in APPS:
            done = subprocess.run(
                [sys.executable, "-m", "tests.support.mixed_fleet", app, f"{HOST}:{proxy_port}"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            if done.returncode != 0:
                raise RuntimeError(f"{app} failed:\n{done.stdout}\n{done.stderr[-3000:]}")
        time.sleep(0.3)
    finally:
        if proxy.poll() is None:
            proxy.send_signal(signal.SIGINT)
        try:
            proxy.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.communicate(timeout=5)
        broker.stop()
    return out


# --- the apps -----------------------------------------------------------------------------------


def orders_service(bootstrap: str) -> None:
    """confluent-kafka: creates every app's topic, produces and consumes."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "orders-service"})
    topics = [NewTopic(t, 1, 1) for t in ("orders", "billing", "inventory", "metrics")]
    for future in admin.create_topics(topics, request_timeout=10).values():
        future.result(timeout=15)
    producer = Producer({"bootstrap.servers": bootstrap, "client.id": "orders-service"})
    for i in range(RECORDS):
        producer.produce("orders", key=b"k%d" % i, value=b"order %d" % i, partition=0)
    assert producer.flush(15) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "orders-service",
            "group.id": "orders",
            "auto.offset.reset": "earliest",
        }
    )
    from confluent_kafka import TopicPartition

    consumer.assign([TopicPartition("orders", 0, 0)])
    got, deadline = 0, time.monotonic() + 15
    while got < RECORDS and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            got += 1
    consumer.close()
    print(f"orders-service consumed {got}")


def legacy_billing(bootstrap: str) -> None:
    """kafka-python pinned to Kafka 0.10: Produce v2 with message format v1, Fetch v2.
    (Tansu leaves Produce v2 unanswered: the producer gives up after its timeouts.)"""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    pinned = (0, 10, 0)
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        client_id="legacy-billing",
        api_version=pinned,
        acks="all",
        linger_ms=20,
        retries=0,
        request_timeout_ms=2000,
        delivery_timeout_ms=4000,
        max_block_ms=10000,
    )
    for i in range(RECORDS):
        producer.send("billing", key=b"k%d" % i, value=b"invoice %d" % i, partition=0)
    try:
        producer.flush(6)
    except Exception as exc:  # noqa: BLE001
        print(f"legacy-billing: produce not acknowledged ({type(exc).__name__})")
    producer.close(1)
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id="legacy-billing",
        api_version=pinned,
        group_id=None,
        enable_auto_commit=False,
        fetch_max_wait_ms=200,
        request_timeout_ms=5000,
    )
    tp = TopicPartition("billing", 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)  # no ListOffsets (Tansu's ListOffsets v0 answer is truncated)
    got, deadline = 0, time.monotonic() + 3
    while got < RECORDS and time.monotonic() < deadline:
        got += sum(len(r) for r in consumer.poll(timeout_ms=500).values())
    consumer.close()
    print(f"legacy-billing consumed {got}")


def inventory(bootstrap: str) -> None:
    """aiokafka: produces and consumes."""

    async def run() -> None:
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id="inventory")
        await producer.start()
        try:
            for i in range(RECORDS):
                await producer.send_and_wait("inventory", b"stock %d" % i, partition=0)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, client_id="inventory")
        await consumer.start()
        try:
            tp = TopicPartition("inventory", 0)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            got = await consumer.getmany(tp, timeout_ms=5000)
            print(f"inventory consumed {sum(len(v) for v in got.values())}")
        finally:
            await consumer.stop()

    asyncio.run(asyncio.wait_for(run(), 40))


def raw_metrics(bootstrap: str) -> None:
    """A client of its own on a socket: ApiVersions v0, Metadata v12, Produce v9 with a
    record batch, Fetch v12 (a package generated from the newest spec corpus)."""
    import tempfile

    from tests.support import genpkg

    with tempfile.TemporaryDirectory() as tmp:
        pkg = genpkg.generate_package([genpkg.newest_corpus()], Path(tmp), "raw_kafka")
        _raw_session(pkg, bootstrap)


def _raw_session(pkg: object, bootstrap: str) -> None:
    import importlib

    name = getattr(pkg, "__name__")
    framing = importlib.import_module(f"{name}.framing")
    headers = importlib.import_module(f"{name}.headers")
    registry = importlib.import_module(f"{name}.registry")
    records = importlib.import_module(f"{name}.records")
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:

        def call(key: int, version: int, corr: int, **fields: object) -> object:
            request = registry.API_KEYS[key].request(**fields)
            header = headers.RequestHeader(
                request_api_key=key,
                request_api_version=version,
                correlation_id=corr,
                client_id="raw-metrics",
            )
            frame = framing.encode_request(header, request)
            sock.sendall(struct.pack(">i", len(frame)) + frame)
            size = struct.unpack(">i", _read(sock, 4))[0]
            return framing.decode_response(_read(sock, size), key, version)[1]

        call(18, 0, 1)
        metadata = importlib.import_module(f"{name}.metadata")
        call(3, 12, 2, topics=[metadata.MetadataRequestTopic(name="metrics")])
        now = int(time.time() * 1000)
        batch = records.build_batch([records.Record(i, now, value=b"cpu=%d" % i) for i in range(3)])
        produce = importlib.import_module(f"{name}.produce")
        data = produce.ProduceRequestTopicProduceData(
            name="metrics",
            partition_data=[produce.ProduceRequestPartitionProduceData(index=0, records=batch)],
        )
        call(0, 9, 3, acks=1, timeout_ms=5000, topic_data=[data])
        fetch = importlib.import_module(f"{name}.fetch")
        topic = fetch.FetchRequestFetchTopic(
            topic="metrics",
            partitions=[
                fetch.FetchRequestFetchPartition(
                    partition=0, fetch_offset=0, partition_max_bytes=1 << 20
                )
            ],
        )
        call(1, 12, 4, max_wait_ms=100, min_bytes=1, max_bytes=1 << 20, topics=[topic])
    print("raw-metrics done")


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        data += chunk
    return data


if __name__ == "__main__":
    app, bootstrap = sys.argv[1], sys.argv[2]
    {
        "orders-service": orders_service,
        "legacy-billing": legacy_billing,
        "inventory": inventory,
        "raw-metrics": raw_metrics,
    }[app](bootstrap)
