"""A producer and an asyncio consumer written with the connection layer alone (no
``cluster`` helpers): what a client-library author writes with the generated package.

    python plain_producer_consumer.py HOST:PORT [RECORDS]

The producer creates topic ``orders`` (6 partitions), writes RECORDS gzip records spread
over the partitions, each batch to its partition's leader; the consumer reads them all back
from the leaders and commits its offsets to the group's coordinator. Works on Kafka 2.8 to
4.3 (Produce v13 and Fetch v13+ name topics by id). Lines between ``# plumbing:`` and
``# end plumbing`` (and lines marked ``# plumbing``) are the plumbing the package could own.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any
from uuid import UUID

from kafka_app import records
from kafka_app.aio import AsyncClient
from kafka_app.client import Client
from kafka_app.connection import ClientConnection
from kafka_app.create_topics import CreateTopicsRequest, CreateTopicsRequestCreatableTopic
from kafka_app.error_codes import ErrorCode
from kafka_app.fetch import FetchRequest, FetchRequestFetchPartition, FetchRequestFetchTopic
from kafka_app.find_coordinator import FindCoordinatorRequest
from kafka_app.metadata import MetadataRequest, MetadataRequestTopic, MetadataResponse
from kafka_app.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from kafka_app.produce import (
    ProduceRequest,
    ProduceRequestPartitionProduceData,
    ProduceRequestTopicProduceData,
)

TOPIC, PARTITIONS, GROUP = "orders", 6, "order-readers"
RETRIES = 3


def connection() -> ClientConnection:
    return ClientConnection(client_id="orders-app", client_software=("orders-app", "1.0"))


# plumbing: metadata, leaders, topic ids, a connection per broker
class Brokers:
    """One blocking client per broker, found through Metadata."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.bootstrap = Client.connect(host, int(port), connection())
        self.clients: dict[int, Client] = {}
        self.metadata = self.refresh()

    def refresh(self) -> MetadataResponse:
        request = MetadataRequest(
            topics=[MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False
        )
        self.metadata = self.bootstrap.request(request)
        return self.metadata

    def leaders(self) -> dict[int, int]:
        [topic] = [t for t in self.metadata.topics if t.name == TOPIC]
        return {p.partition_index: p.leader_id for p in topic.partitions}

    def topic_id(self) -> UUID:
        [topic] = [t for t in self.metadata.topics if t.name == TOPIC]
        return topic.topic_id

    def client(self, node_id: int) -> Client:
        if node_id not in self.clients:
            [broker] = [b for b in self.metadata.brokers if b.node_id == node_id]
            self.clients[node_id] = Client.connect(broker.host, broker.port, connection())
        return self.clients[node_id]

    def close(self) -> None:
        for client in [self.bootstrap, *self.clients.values()]:
            client.close()


# end plumbing


def produce(bootstrap: str, count: int) -> dict[int, int]:
    """Write ``count`` records over the partitions; returns partition -> record count."""
    brokers = Brokers(bootstrap)
    try:
        created = brokers.bootstrap.request(
            CreateTopicsRequest(
                timeout_ms=5000,
                topics=[CreateTopicsRequestCreatableTopic(TOPIC, PARTITIONS, 1)],
            )
        )
        assert created.topics[0].error_code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)
        brokers.refresh()  # plumbing
        now_ms = int(time.time() * 1000)
        per_partition: dict[int, list[records.Record]] = {p: [] for p in range(PARTITIONS)}
        for n in range(count):
            key = f"order-{n}".encode()
            partition = n % PARTITIONS
            offset = len(per_partition[partition])
            per_partition[partition].append(records.Record(offset, now_ms, key, b"x" * 100))
        batches = {
            p: records.build_batch(rs, compression=records.Compression.GZIP)
            for p, rs in per_partition.items()
        }
        # plumbing: route each batch to its leader, by name and id, retry moved leaders
        left = dict(batches)
        for _ in range(RETRIES):
            by_leader: dict[int, dict[int, bytes]] = {}
            for partition, batch in left.items():
                by_leader.setdefault(brokers.leaders()[partition], {})[partition] = batch
            left = {}
            for node_id, parts in by_leader.items():
                topic = ProduceRequestTopicProduceData(
                    name=TOPIC,
                    topic_id=brokers.topic_id(),
                    partition_data=[
                        ProduceRequestPartitionProduceData(index=p, records=b)
                        for p, b in parts.items()
                    ],
                )
                answer = brokers.client(node_id).request(
                    ProduceRequest(acks=-1, timeout_ms=5000, topic_data=[topic])
                )
                for response in answer.responses:
                    for partition_response in response.partition_responses:
                        code = partition_response.error_code
                        if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                            left[partition_response.index] = parts[partition_response.index]
                        elif code != ErrorCode.NONE:
                            raise RuntimeError(f"partition {partition_response.index}: {code}")
            if not left:
                break
            brokers.refresh()
        # end plumbing
        return {p: len(rs) for p, rs in per_partition.items()}
    finally:
        brokers.close()


async def consume(bootstrap: str, count: int) -> list[bytes]:
    """Read every record back from offset 0, then commit the group's offsets."""
    host, port = bootstrap.rsplit(":", 1)
    # plumbing: metadata, leaders, topic ids and a connection per leader
    first = await AsyncClient.connect(host, int(port), connection())
    metadata = await first.request(MetadataRequest(topics=[MetadataRequestTopic(name=TOPIC)]))
    [topic] = [t for t in metadata.topics if t.name == TOPIC]
    leaders = {p.partition_index: p.leader_id for p in topic.partitions}
    names = {topic.topic_id: TOPIC}
    clients: dict[int, AsyncClient] = {}
    for broker in metadata.brokers:
        if broker.node_id in leaders.values():
            clients[broker.node_id] = await AsyncClient.connect(
                broker.host, broker.port, connection()
            )
    # end plumbing
    positions = {p: 0 for p in leaders}
    keys: list[bytes] = []
    try:
        for _ in range(50):  # bounded: the answers may come a few batches at a time
            if len(keys) >= count:
                break
            # plumbing: one Fetch per leader, by name and id; records per partition
            requests = []
            for node_id, client in clients.items():
                mine = [p for p, leader in leaders.items() if leader == node_id]
                partitions = [
                    FetchRequestFetchPartition(
                        partition=p, fetch_offset=positions[p], partition_max_bytes=1 << 20
                    )
                    for p in mine
                ]
                wanted = FetchRequestFetchTopic(
                    topic=TOPIC, topic_id=topic.topic_id, partitions=partitions
                )
                requests.append(
                    client.request(
                        FetchRequest(max_wait_ms=100, min_bytes=1, max_bytes=1 << 20,
                                     topics=[wanted])  # fmt: skip
                    )
                )
            for answer in await asyncio.gather(*requests):
                for fetched in answer.responses:
                    name = fetched.topic or names[fetched.topic_id]
                    assert name == TOPIC
                    for partition in fetched.partitions:
                        if partition.error_code != ErrorCode.NONE:
                            raise RuntimeError(
                                f"partition {partition.partition_index}: "
                                f"{ErrorCode(partition.error_code).name}"
                            )
                        for batch in records.iter_batches(partition.records):
                            batch.validate()
                            if batch.is_control:
                                continue
                            for record in batch.records():
                                if record.offset >= positions[partition.partition_index]:
                                    keys.append(record.key or b"")
                                    positions[partition.partition_index] = record.offset + 1
            # end plumbing
        await commit(first, positions)
        return keys
    finally:
        for client in [first, *clients.values()]:
            await client.close()


async def commit(client: AsyncClient, positions: dict[int, int]) -> None:
    """Commit the positions to the group's coordinator."""
    # plumbing: find the coordinator, connect to it
    version = client.connection.version_for(FindCoordinatorRequest.API_KEY)
    if version >= 4:
        found: Any = await client.request(FindCoordinatorRequest(coordinator_keys=[GROUP]))
        found = found.coordinators[0]
    else:
        found = await client.request(FindCoordinatorRequest(key=GROUP))
    coordinator = await AsyncClient.connect(found.host, found.port, connection())
    # end plumbing
    try:
        partitions = [
            OffsetCommitRequestPartition(partition_index=p, committed_offset=offset)
            for p, offset in positions.items()
        ]
        answer = await coordinator.request(
            OffsetCommitRequest(
                group_id=GROUP,
                generation_id_or_member_epoch=-1,
                topics=[OffsetCommitRequestTopic(name=TOPIC, partitions=partitions)],
            )
        )
        # plumbing: per-partition errors
        for committed in answer.topics:
            for partition in committed.partitions:
                if partition.error_code != ErrorCode.NONE:
                    raise RuntimeError(f"commit of partition {partition.partition_index}")
        # end plumbing
    finally:
        await coordinator.close()


def main() -> None:
    bootstrap = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    produced = produce(bootstrap, count)
    keys = asyncio.run(consume(bootstrap, count))
    assert sorted(keys) == sorted(f"order-{n}".encode() for n in range(count)), len(keys)
    print(f"produced {sum(produced.values())}, consumed {len(keys)}")


if __name__ == "__main__":
    main()
