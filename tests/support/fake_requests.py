"""Protocol-level requests to a ``FakeCluster`` with our own client, for the fake broker's
security and fault-injection tests: a connection to one broker (optionally with SASL, or
over TLS), and the requests the tests send most, built from the cluster's own package at
the newest versions."""

from __future__ import annotations

import ssl
from typing import Any

from kafka_specgen.fake_broker import FakeCluster


def connect(
    c: FakeCluster,
    node: int = 0,
    *,
    sasl: Any = None,
    tls: bool = False,
    server_hostname: str = "127.0.0.1",
    timeout: float = 10.0,
) -> Any:
    """A ready ``Client`` of the cluster's package on broker ``node`` (the ApiVersions
    handshake, and SASL with ``sasl``, a mechanism of the package's ``sasl`` module, done)."""
    broker = c.state.brokers[node]
    package = c.package.module
    connection = package("connection").ClientConnection(
        client_id="fake-tests", sasl=sasl, request_timeout=timeout
    )
    client_class = package("client").Client
    context = ssl.create_default_context(cafile=str(c.ca_file)) if tls else None
    return client_class.connect(
        broker.host,
        broker.port,
        connection,
        timeout=timeout,
        ssl=context,
        server_hostname=server_hostname if tls else None,
    )


def batch(c: FakeCluster, values: list[bytes], **options: Any) -> bytes:
    records = c.package.module("records")
    return bytes(
        records.build_batch(
            [records.Record(i, 1_700_000_000_000, None, v) for i, v in enumerate(values)],
            **options,
        )
    )


def produce_request(
    c: FakeCluster,
    topic: str,
    partitions: dict[int, list[bytes]],
    *,
    acks: int = -1,
    transactional_id: str | None = None,
) -> Any:
    produce = c.package.module("produce")
    data = [
        produce.ProduceRequestPartitionProduceData(index=index, records=batch(c, values))
        for index, values in partitions.items()
    ]
    found = c.state.topics.get(topic)
    topic_data = produce.ProduceRequestTopicProduceData(
        name=topic, topic_id=found.topic_id if found else None, partition_data=data
    )
    return produce.ProduceRequest(
        transactional_id=transactional_id, acks=acks, timeout_ms=5000, topic_data=[topic_data]
    )


def produced(response: Any) -> dict[int, tuple[int, int]]:
    """Partition -> (error code, base offset) of a Produce response of one topic."""
    (topic,) = response.responses
    return {p.index: (p.error_code, p.base_offset) for p in topic.partition_responses}


def fetch_request(c: FakeCluster, topic: str, partitions: list[int], max_wait_ms: int = 0) -> Any:
    fetch = c.package.module("fetch")
    found = c.state.topics.get(topic)
    return fetch.FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=[
            fetch.FetchRequestFetchTopic(
                topic=topic,
                topic_id=found.topic_id if found else None,
                partitions=[
                    fetch.FetchRequestFetchPartition(
                        partition=p, fetch_offset=0, partition_max_bytes=1 << 20
                    )
                    for p in partitions
                ],
            )
        ],
    )


def fetched(response: Any) -> dict[int, tuple[int, int]]:
    """Partition -> (error code, bytes of records) of a Fetch response of one topic."""
    (topic,) = response.responses
    return {p.partition_index: (p.error_code, len(p.records or b"")) for p in topic.partitions}


def metadata_request(c: FakeCluster, topics: list[str] | None, auto_create: bool = True) -> Any:
    metadata = c.package.module("metadata")
    return metadata.MetadataRequest(
        topics=(
            None if topics is None else [metadata.MetadataRequestTopic(name=t) for t in topics]
        ),
        allow_auto_topic_creation=auto_create,
    )


def log_end(c: FakeCluster, topic: str, partition: int = 0) -> int:
    return int(c.call(lambda: c.state.topics[topic].partitions[partition].end))
