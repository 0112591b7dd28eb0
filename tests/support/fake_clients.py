"""Real Kafka clients' everyday work against a broker, one function per client: produce
with every codec, consume it all in a group, commit, produce more, and resume from the
committed offsets with a new consumer of the same group.

Each returns what it consumed, ``(first run, after resuming)``, for the test to compare
with what it produced. Every loop is bounded.
"""

from __future__ import annotations

import asyncio
import time

CODECS = ("gzip", "snappy", "lz4", "zstd")
PER_CODEC = 5
MORE = 3
DEADLINE = 20.0


def produced(topic: str) -> tuple[list[bytes], list[bytes]]:
    """The values the functions below produce: before the commit, and after it."""
    first = [f"{topic}-{codec}-{i}".encode() for codec in CODECS for i in range(PER_CODEC)]
    more = [f"{topic}-more-{i}".encode() for i in range(MORE)]
    return first, more


def kafka_python(bootstrap: str, topic: str) -> tuple[list[bytes], list[bytes]]:
    from kafka import KafkaConsumer, KafkaProducer

    first, more = produced(topic)

    def produce(values: list[bytes], codec: str | None) -> None:
        producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec)
        for value in values:
            producer.send(topic, value=value)
        producer.flush(timeout=DEADLINE)
        producer.close()

    def consume(count: int) -> list[bytes]:
        consumer = KafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id="g",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            consumer_timeout_ms=int(DEADLINE * 1000),
        )
        got = []
        for message in consumer:
            got.append(message.value)
            if len(got) == count:
                break
        consumer.commit()
        consumer.close()
        return got

    for n, codec in enumerate(CODECS):
        produce(first[n * PER_CODEC : (n + 1) * PER_CODEC], codec)
    before = consume(len(first))
    produce(more, None)
    return before, consume(len(more))


def confluent(bootstrap: str, topic: str) -> tuple[list[bytes], list[bytes]]:
    from confluent_kafka import Consumer, Producer

    first, more = produced(topic)

    def produce(values: list[bytes], codec: str) -> None:
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "compression.type": codec,
                "enable.idempotence": True,
                "log_level": 0,
            }
        )
        for value in values:
            producer.produce(topic, value=value)
        assert producer.flush(DEADLINE) == 0

    def consume(count: int) -> list[bytes]:
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "g",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "log_level": 0,
            }
        )
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + DEADLINE
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                got.append(message.value())
        consumer.commit(asynchronous=False)
        consumer.close()
        return got

    for n, codec in enumerate(CODECS):
        produce(first[n * PER_CODEC : (n + 1) * PER_CODEC], codec)
    before = consume(len(first))
    produce(more, "none")
    return before, consume(len(more))


def aiokafka(bootstrap: str, topic: str) -> tuple[list[bytes], list[bytes]]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    first, more = produced(topic)

    async def produce(values: list[bytes], codec: str | None) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, compression_type=codec)
        await producer.start()
        try:
            for value in values:
                await producer.send_and_wait(topic, value)
        finally:
            await producer.stop()

    async def consume(count: int) -> list[bytes]:
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id="g",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        got: list[bytes] = []
        try:
            deadline = time.monotonic() + DEADLINE
            while len(got) < count and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=200)
                got += [m.value for messages in batches.values() for m in messages]
            await consumer.commit()
        finally:
            await consumer.stop()
        return got

    async def main() -> tuple[list[bytes], list[bytes]]:
        for n, codec in enumerate(CODECS):
            await produce(first[n * PER_CODEC : (n + 1) * PER_CODEC], codec)
        before = await consume(len(first))
        await produce(more, None)
        return before, await consume(len(more))

    return asyncio.run(main())


CLIENTS = {"kafka-python": kafka_python, "librdkafka": confluent, "aiokafka": aiokafka}
