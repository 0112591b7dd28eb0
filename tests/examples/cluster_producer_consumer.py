"""The producer and asyncio consumer of ``plain_producer_consumer.py``, written with the
``cluster`` helpers: the same work, the plumbing left to the package.

    python cluster_producer_consumer.py HOST:PORT [RECORDS]

Lines between ``# plumbing:`` and ``# end plumbing`` (and lines marked ``# plumbing``) are
the plumbing still written by hand.
"""

from __future__ import annotations

import asyncio
import sys
import time

from kafka_app import records
from kafka_app.cluster import AsyncCluster, Cluster, partition_errors
from kafka_app.connection import ClientConnection
from kafka_app.create_topics import CreateTopicsRequest, CreateTopicsRequestCreatableTopic
from kafka_app.error_codes import ErrorCode
from kafka_app.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)

TOPIC, PARTITIONS, GROUP = "orders", 6, "order-readers"


def connection() -> ClientConnection:
    return ClientConnection(client_id="orders-app", client_software=("orders-app", "1.0"))


def produce(bootstrap: str, count: int) -> dict[int, int]:
    """Write ``count`` records over the partitions; returns partition -> record count."""
    with Cluster.connect(bootstrap, connection()) as cluster:  # plumbing
        created = cluster.request(
            CreateTopicsRequest(
                timeout_ms=5000,
                topics=[CreateTopicsRequestCreatableTopic(TOPIC, PARTITIONS, 1)],
            )
        )
        assert created.topics[0].error_code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)
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
        cluster.produce(TOPIC, batches)
        return {p: len(rs) for p, rs in per_partition.items()}


async def consume(bootstrap: str, count: int) -> list[bytes]:
    """Read every record back from offset 0, then commit the group's offsets."""
    cluster = await AsyncCluster.connect(bootstrap, connection())  # plumbing
    try:
        positions = {p: 0 for p in cluster.metadata.partitions(TOPIC)}
        keys: list[bytes] = []
        for _ in range(50):  # bounded: the answers may come a few batches at a time
            if len(keys) >= count:
                break
            fetched = await cluster.fetch(TOPIC, positions, max_wait_ms=100)
            for partition, read in fetched.items():
                if read.error != ErrorCode.NONE:
                    raise RuntimeError(f"partition {partition}: {read.error.name}")
                keys += [record.key or b"" for record in read.records]
                if read.next_offset > 0:
                    positions[partition] = read.next_offset
        await commit(cluster, positions)
        return keys
    finally:
        await cluster.close()  # plumbing


async def commit(cluster: AsyncCluster, positions: dict[int, int]) -> None:
    """Commit the positions to the group's coordinator."""
    partitions = [
        OffsetCommitRequestPartition(partition_index=p, committed_offset=offset)
        for p, offset in positions.items()
    ]
    answer = await cluster.group_request(
        GROUP,
        OffsetCommitRequest(
            group_id=GROUP,
            generation_id_or_member_epoch=-1,
            topics=[OffsetCommitRequestTopic(name=TOPIC, partitions=partitions)],
        ),
    )
    for error in partition_errors(answer):  # plumbing
        raise RuntimeError(f"commit of partition {error.partition}: {error.error.name}")


def main() -> None:
    bootstrap = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    produced = produce(bootstrap, count)
    keys = asyncio.run(consume(bootstrap, count))
    assert sorted(keys) == sorted(f"order-{n}".encode() for n in range(count)), len(keys)
    print(f"produced {sum(produced.values())}, consumed {len(keys)}")


if __name__ == "__main__":
    main()
