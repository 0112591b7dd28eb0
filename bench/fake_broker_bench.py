"""Consuming from the fake broker with three clients, and the fake broker's own request rate
(``make bench-fake-broker``).

- Consume N records (1 KiB values; uncompressed and lz4) from one partition: our blocking
  ``Client`` on ``ClientConnection`` with ``records``, kafka-python 3 and aiokafka; records/s
  and our ratio to each.
- The fake broker's request rate: librdkafka's producer sending one small record per
  Produce request, each waiting for its answer (``flush`` after every record); Produce
  requests/s, the round trips the broker sustains for one connection.

    python bench/fake_broker_bench.py [--records N] [--specs PATH] [--json PATH] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from kafka_specgen.fake_broker import ApiKey, Call, FakeCluster  # noqa: E402
from tests.support.genpkg import newest_corpus  # noqa: E402

VALUE = bytes(range(256)) * 4  # 1 KiB
PER_BATCH = 500


def fill(cluster: FakeCluster, topic: str, count: int, codec: str) -> None:
    """``count`` records into partition 0, in batches built with ``records``."""
    records = cluster.package.module("records")
    produce = cluster.package.module("produce")
    client_module = cluster.package.module("client")
    host, port = cluster.bootstrap.rsplit(":", 1)
    topic_id = cluster.state.topics[topic].topic_id
    with client_module.Client.connect(host, int(port)) as client:
        for start in range(0, count, PER_BATCH):
            batch = records.build_batch(
                [
                    records.Record(i, 1_700_000_000_000, None, VALUE)
                    for i in range(start, min(count, start + PER_BATCH))
                ],
                compression=records.Compression[codec.upper()],
            )
            data = produce.ProduceRequestPartitionProduceData(index=0, records=batch)
            request = produce.ProduceRequest(
                acks=1,
                timeout_ms=5000,
                topic_data=[
                    produce.ProduceRequestTopicProduceData(
                        name=topic, topic_id=topic_id, partition_data=[data]
                    )
                ],
            )
            client.request(request)


def ours(cluster: FakeCluster, topic: str, count: int) -> int:
    fetch = cluster.package.module("fetch")
    records = cluster.package.module("records")
    client_module = cluster.package.module("client")
    host, port = cluster.bootstrap.rsplit(":", 1)
    topic_id = cluster.state.topics[topic].topic_id
    offset = got = 0
    with client_module.Client.connect(host, int(port)) as client:
        while got < count:
            request = fetch.FetchRequest(
                max_wait_ms=500,
                min_bytes=1,
                max_bytes=8 << 20,
                topics=[
                    fetch.FetchRequestFetchTopic(
                        topic=topic,
                        topic_id=topic_id,
                        partitions=[
                            fetch.FetchRequestFetchPartition(
                                partition=0, fetch_offset=offset, partition_max_bytes=8 << 20
                            )
                        ],
                    )
                ],
            )
            data = client.request(request).responses[0].partitions[0].records
            for batch in records.iter_batches(data):
                for record in batch.records():
                    if record.offset >= offset:
                        got += 1
                        offset = record.offset + 1
    return got


def kafka_python(cluster: FakeCluster, topic: str, count: int) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=30000,
        fetch_max_bytes=8 << 20,
        max_partition_fetch_bytes=8 << 20,
    )
    consumer.assign([TopicPartition(topic, 0)])
    got = 0
    for _ in consumer:
        got += 1
        if got == count:
            break
    consumer.close()
    return got


def aiokafka(cluster: FakeCluster, topic: str, count: int) -> int:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> int:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=cluster.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            fetch_max_bytes=8 << 20,
            max_partition_fetch_bytes=8 << 20,
        )
        await consumer.start()
        consumer.assign([TopicPartition(topic, 0)])
        got = 0
        try:
            while got < count:
                batches = await consumer.getmany(timeout_ms=1000, max_records=10000)
                got += sum(len(messages) for messages in batches.values())
        finally:
            await consumer.stop()
        return got

    return asyncio.run(run())


CONSUMERS: dict[str, Callable[[FakeCluster, str, int], int]] = {
    "ours (Client + records)": ours,
    "kafka-python": kafka_python,
    "aiokafka": aiokafka,
}


def consume_rates(specs: Path, count: int) -> dict[str, dict[str, float]]:
    rates: dict[str, dict[str, float]] = {}
    with FakeCluster(specs, topics={"none": 1, "lz4": 1}) as cluster:
        for codec in ("none", "lz4"):
            fill(cluster, codec, count, codec)
            rates[codec] = {}
            for name, consume in CONSUMERS.items():
                started = time.perf_counter()
                got = consume(cluster, codec, count)
                elapsed = time.perf_counter() - started
                assert got >= count, (name, codec, got)
                rates[codec][name] = round(count / elapsed)
    return rates


def broker_rate(specs: Path, count: int) -> dict[str, float]:
    from confluent_kafka import Producer

    with FakeCluster(specs, topics={"rate": 1}) as cluster:
        seen = [0]

        def counted(call: Call) -> Any:
            seen[0] += 1
            return None  # the usual answer

        cluster.control(ApiKey.PRODUCE, counted)
        config = {"bootstrap.servers": cluster.bootstrap, "linger.ms": 0, "acks": 1}
        producer = Producer(config)
        producer.produce("rate", value=b"warm-up")
        producer.flush(10)
        seen[0] = 0
        started = time.perf_counter()
        for _ in range(count):
            producer.produce("rate", value=b"x")
            producer.flush(10)  # one request at a time: each waits for its answer
        elapsed = time.perf_counter() - started
    return {
        "produce_requests": seen[0],
        "seconds": round(elapsed, 2),
        "requests_per_s": round(seen[0] / elapsed),
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Consuming from the fake broker",
        "",
        f"{result['records']:,} records of 1 KiB from one partition (`make bench-fake-broker`).",
        "",
        "| codec | client | records/s | ours relative to it |",
        "|---|---|---|---|",
    ]
    for codec, rates in result["consume"].items():
        mine = rates["ours (Client + records)"]
        for name, rate in rates.items():
            ratio = "-" if name.startswith("ours") else f"{mine / rate:.2f}x"
            lines.append(f"| {codec} | {name} | {rate:,} | {ratio} |")
    b = result["broker"]
    lines += [
        "",
        f"The fake broker answered {b['produce_requests']:,} Produce requests from "
        f"librdkafka (one record each, one at a time) in {b['seconds']} s: "
        f"{b['requests_per_s']:,} requests/s.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20000, help="records to consume")
    parser.add_argument("--requests", type=int, default=5000, help="records librdkafka sends")
    parser.add_argument("--specs", type=Path, default=None, help="spec set (default: newest)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON here")
    parser.add_argument("--markdown", type=Path, help="write a markdown summary here")
    args = parser.parse_args(argv)
    specs = args.specs or newest_corpus()
    result = {
        "records": args.records,
        "consume": consume_rates(specs, args.records),
        "broker": broker_rate(specs, args.requests),
    }
    text = markdown(result)
    print(text, end="")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
