"""The golden captures' record-batch workloads (``tools/record_golden.py``): every codec,
transactions and the legacy message formats, per client."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from golden_clients import rd_create_topic, step

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
        rd_create_topic(bootstrap, topic, 1)
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
    rd_create_topic(bootstrap, topic, 1)
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
    step("init_transactions", lambda: producer.init_transactions(15))
    for n, end in enumerate(("commit", "abort", "commit")):
        step(f"begin_transaction {n}", producer.begin_transaction)
        for record in _sample_records(f"rd-txn-{n}-{end}", n)[:3]:
            step(
                "produce",
                lambda: producer.produce(
                    topic, key=record["key"], value=record["value"], headers=record["headers"]
                ),
            )
        step("flush", lambda: producer.flush(10))
        if end == "commit":
            step(f"commit_transaction {n}", lambda: producer.commit_transaction(15))
        else:
            step(f"abort_transaction {n}", lambda: producer.abort_transaction(15))
    # Tansu 0.6.0 sends no aborted transactions, so read_committed sees all 9 records
    _rd_consume(bootstrap, topic, "golden-rd-txn-committed", 9, "read_committed")
    _rd_consume(bootstrap, topic, "golden-rd-txn-uncommitted", 9, "read_uncommitted")


def _kp_create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-kp-setup")
    step("create_topics", lambda: admin.create_topics([NewTopic(topic, partitions, 1)]))
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
    step("init_transactions", producer.init_transactions)
    for n, end in enumerate(("commit", "abort", "commit")):
        step(f"begin_transaction {n}", producer.begin_transaction)
        for record in _sample_records(f"kp-txn-{n}-{end}", n, null_header=False)[:3]:
            step(
                "send",
                lambda: producer.send(
                    topic,
                    key=record["key"],
                    value=record["value"],
                    partition=0,
                    headers=record["headers"],
                ),
            )
        step("flush", lambda: producer.flush(10))
        if end == "commit":
            step(f"commit_transaction {n}", producer.commit_transaction)
        else:
            step(f"abort_transaction {n}", producer.abort_transaction)
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
