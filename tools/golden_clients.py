"""The golden captures' client workloads (``tools/record_golden.py``): librdkafka,
kafka-python and aiokafka doing what an application does (admin, produce, consume,
transactions), and hand-made requests from this repo's own package. Each runs in its own
process, given the recording proxy's bootstrap address."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any, Callable


def wait_futures(futures: dict[Any, Any], what: str) -> None:
    for key, future in futures.items():
        try:
            print(f"{what} {key}: {future.result(timeout=15)}")
        except Exception as exc:  # noqa: BLE001 (a workload reports and goes on)
            print(f"{what} {key}: failed: {exc!r}")


def step(name: str, fn: Callable[[], Any]) -> Any:
    try:
        result = fn()
        print(f"{name}: ok {str(result)[:200]}")
        return result
    except Exception as exc:  # noqa: BLE001
        print(f"{name}: failed: {exc!r}")
        return None


def rd_create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "golden-rd-setup"})
    wait_futures(
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
    wait_futures(
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
    step("list_topics", lambda: admin.list_topics(timeout=10).topics)
    step(
        "describe_topics",
        lambda: admin.describe_topics(
            TopicCollection(["rd-admin-a", "rd-admin-b"]), request_timeout=10
        )["rd-admin-a"].result(timeout=15),
    )
    wait_futures(
        admin.describe_configs(
            [ConfigResource("topic", "rd-admin-a"), ConfigResource("broker", "111")],
            request_timeout=10,
        ),
        "describe_configs",
    )
    wait_futures(
        admin.create_partitions([NewPartitions("rd-admin-a", 5)], request_timeout=10),
        "create_partitions",
    )
    step("describe_cluster", lambda: admin.describe_cluster(request_timeout=10).result(15))
    step("list_consumer_groups", lambda: admin.list_consumer_groups(request_timeout=10).result(15))
    wait_futures(
        admin.describe_consumer_groups(["golden-rd-group"], request_timeout=10),
        "describe_consumer_groups",
    )
    wait_futures(
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
    latest, earliest = OffsetSpec.latest(), OffsetSpec.earliest()  # type: ignore[no-untyped-call]
    wait_futures(
        admin.list_offsets(
            {
                TopicPartition("rd-admin-a", 0): latest,
                TopicPartition("rd-admin-a", 1): earliest,
            },
            request_timeout=10,
        ),
        "list_offsets",
    )
    wait_futures(
        admin.delete_topics(["rd-admin-a", "rd-admin-b"], operation_timeout=5, request_timeout=10),
        "delete_topics",
    )


def librdkafka_producer(bootstrap: str) -> None:
    from confluent_kafka import Producer

    rd_create_topic(bootstrap, "rd-produce", 3)
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
    step("commit", lambda: consumer.commit(asynchronous=False))
    step("committed", lambda: consumer.committed(consumer.assignment(), timeout=10))
    consumer.close()


def librdkafka_transactions(bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    rd_create_topic(bootstrap, "rd-txn", 1)
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "golden-rd-txn",
            "transactional.id": "golden-rd-txn-id",
            "transaction.timeout.ms": 10000,
        }
    )
    step("init_transactions", lambda: producer.init_transactions(15))
    step("begin_transaction", producer.begin_transaction)
    for i in range(5):
        step("produce", lambda: producer.produce("rd-txn", key=b"k", value=f"txn {i}".encode()))
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "golden-rd-txn-consumer",
            "group.id": "golden-rd-txn-group",
        }
    )
    step(
        "send_offsets_to_transaction",
        lambda: producer.send_offsets_to_transaction(
            [TopicPartition("rd-txn", 0, 3)], consumer.consumer_group_metadata(), 15
        ),
    )
    step("commit_transaction", lambda: producer.commit_transaction(15))


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
    step(
        "create_topics",
        lambda: admin.create_topics(
            [NewTopic("kp-admin-a", 2, 1), NewTopic("kp-admin-b", 1, 1)], timeout_ms=5000
        ),
    )
    step("list_topics", admin.list_topics)
    step("describe_topics", lambda: admin.describe_topics(["kp-admin-a"]))
    step("describe_cluster", admin.describe_cluster)
    step(
        "describe_configs",
        lambda: admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-admin-a")]),
    )
    step("list_groups", admin.list_groups)
    step("describe_groups", lambda: admin.describe_groups(["golden-kp-group"]))
    step("list_group_offsets", lambda: admin.list_group_offsets("golden-kp-group"))
    step("describe_topic_partitions", lambda: admin.describe_topic_partitions(["kp-admin-a"]))
    step(
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
    step("list_partition_reassignments", admin.list_partition_reassignments)
    step("describe_user_scram_credentials", admin.describe_user_scram_credentials)
    step("delete_groups", lambda: admin.delete_groups(["golden-rd-txn-group"]))
    step(
        "delete_topics", lambda: admin.delete_topics(["kp-admin-a", "kp-admin-b"], timeout_ms=5000)
    )
    admin.close()


def kafka_python_producer(bootstrap: str) -> None:
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-kp-setup")
    step("create_topics", lambda: admin.create_topics([NewTopic("kp-produce", 3, 1)]))
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
    step("commit", consumer.commit)
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
