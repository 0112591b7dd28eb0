"""The benchmark's logical messages, built in our generated classes.

Each case names the package that holds it ("repo": the committed ``generated/kafka_messages``;
"kp": a package generated from the kafka-python 3.0.12 spec corpus, for the APIs the repo's
own ``specs/`` do not have), the message, the version and a builder. The peers' instances are
derived from ours by the adapters in ``tests/peers.py``, so all three describe the same values.
"""

from __future__ import annotations

import random
import sys
import uuid
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Case:
    id: str
    package: str  # "repo" or "kp"
    message: str  # the spec's message name
    version: int
    build: Callable[[type], Any]  # message class -> instance
    shape: str


def _records(seed: int) -> bytes:
    """1 KiB of opaque record-batch bytes (the codecs treat ``records`` as a blob)."""
    return random.Random(seed).randbytes(1024)


def api_versions_response(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    # 70 api keys plus a finalized-features epoch tag: 508 bytes at v3.
    keys = [
        api.ApiVersionsResponseApiVersion(api_key=k, min_version=0, max_version=(k % 13) + 1)
        for k in range(70)
    ]
    return cls(error_code=0, api_keys=keys, throttle_time_ms=0, finalized_features_epoch=42)


def api_versions_request(cls: type) -> Any:
    return cls(client_software_name="kafka-specgen-bench", client_software_version="1.0.0")


def metadata_request(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    topics = [api.MetadataRequestTopic(name=f"bench-topic-{t:03d}") for t in range(20)]
    return cls(topics=topics, allow_auto_topic_creation=True)


def metadata_response(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    brokers = [
        api.MetadataResponseBroker(
            node_id=b, host=f"broker-{b}.kafka.internal", port=9092, rack=f"rack-{b}"
        )
        for b in range(3)
    ]
    topics = []
    for t in range(50):
        partitions = [
            api.MetadataResponsePartition(
                error_code=0,
                partition_index=p,
                leader_id=p % 3,
                leader_epoch=7,
                replica_nodes=[p % 3, (p + 1) % 3, (p + 2) % 3],
                isr_nodes=[p % 3, (p + 1) % 3, (p + 2) % 3],
                offline_replicas=[],
            )
            for p in range(20)
        ]
        topics.append(
            api.MetadataResponseTopic(
                error_code=0,
                name=f"topic-{t:04d}",
                topic_id=uuid.UUID(int=(t + 1) * 0x1234567890ABCDEF),
                is_internal=False,
                partitions=partitions,
                topic_authorized_operations=-2147483648,
            )
        )
    return cls(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id="kafka-specgen-bench",
        controller_id=1,
        topics=topics,
    )


def produce_request(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    topics = [
        api.ProduceRequestTopicProduceData(
            name=f"bench-topic-{t}",
            partition_data=[
                api.ProduceRequestPartitionProduceData(index=p, records=_records(t * 4 + p))
                for p in range(4)
            ],
        )
        for t in range(5)
    ]
    return cls(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=topics)


def fetch_response(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    topics = [
        api.FetchResponseFetchableTopicResponse(
            topic=f"bench-topic-{t}",
            partitions=[
                api.FetchResponsePartitionData(
                    partition_index=p,
                    error_code=0,
                    high_watermark=100_000 + p,
                    last_stable_offset=100_000 + p,
                    log_start_offset=0,
                    aborted_transactions=None,
                    preferred_read_replica=-1,
                    records=_records(100 + t * 4 + p),
                )
                for p in range(4)
            ],
        )
        for t in range(5)
    ]
    return cls(throttle_time_ms=0, error_code=0, session_id=12345, responses=topics)


CASES: dict[str, Case] = {
    c.id: c
    for c in [
        Case(
            "api_versions_response_v3",
            "repo",
            "ApiVersionsResponse",
            3,
            api_versions_response,
            "70 api keys + features epoch tag",
        ),
        Case(
            "metadata_response_v12",
            "repo",
            "MetadataResponse",
            12,
            metadata_response,
            "3 brokers, 50 topics x 20 partitions",
        ),
        Case("metadata_request_v4", "repo", "MetadataRequest", 4, metadata_request, "20 topics"),
        Case(
            "produce_request_v9",
            "kp",
            "ProduceRequest",
            9,
            produce_request,
            "5 topics x 4 partitions, 1 KiB records",
        ),
        Case(
            "fetch_response_v12",
            "kp",
            "FetchResponse",
            12,
            fetch_response,
            "5 topics x 4 partitions, 1 KiB records",
        ),
        Case(
            "api_versions_request_v3",
            "repo",
            "ApiVersionsRequest",
            3,
            api_versions_request,
            "client software name and version",
        ),
    ]
}
