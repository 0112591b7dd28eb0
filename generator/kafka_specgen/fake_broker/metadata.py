"""Metadata (topics auto-created on first use, as with ``auto.create.topics.enable``) and
DescribeCluster."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names

ZERO_UUID = uuid.UUID(int=0)
METADATA_NAMES = Names(absent={"topic_id": ZERO_UUID})  # topic ids came with Kafka 2.8
CLUSTER_NAMES = Names(absent={"endpoint_type": 1})  # DescribeCluster v1 (Kafka 3.7)


class TopicIn(Protocol):
    name: str | None
    topic_id: uuid.UUID


class MetadataIn(Protocol):
    topics: Sequence[TopicIn] | None
    allow_auto_topic_creation: bool


def brokers(call: Call, id_field: str) -> list[Any]:
    """The cluster's brokers, their id in ``id_field`` (``node_id`` in Metadata,
    ``broker_id`` in DescribeCluster)."""
    item = call.item(call.response, "brokers")
    return [
        call.build(item, **{id_field: b.node_id}, host=b.host, port=b.port, rack=None)
        for b in call.state.brokers
    ]


def metadata(call: Call) -> Any:
    req: MetadataIn = call.read(MetadataIn)
    state = call.state
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    # v0: an empty list means every topic; from v1 that is null
    every = req.topics is None or (call.version == 0 and not req.topics)
    auto = req.allow_auto_topic_creation and state.auto_create_topics
    wanted: list[tuple[str | None, uuid.UUID]]
    if every:
        wanted = [(name, ZERO_UUID) for name in sorted(state.topics)]
    else:
        wanted = [(t.name, t.topic_id) for t in req.topics or ()]
    topics = []
    for name, topic_id in wanted:
        topic = state.topics.get(name) if name else state.topic_by_id(topic_id)
        if topic is None and name and auto:
            topic = state.create_topic(name, state.default_partitions)
        if topic is None:
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if name else ErrorCode.UNKNOWN_TOPIC_ID
            topics.append(call.build(topic_class, error_code=code, name=name, topic_id=topic_id))
            continue
        partitions = [
            call.build(
                partition_class,
                # a partition without a leader (partition_set_leader(..., -1))
                error_code=ErrorCode.NONE if log.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
                partition_index=i,
                leader_id=log.leader,
                leader_epoch=log.leader_epoch,
                replica_nodes=[log.leader] if log.leader >= 0 else [],
                isr_nodes=[log.leader] if log.leader >= 0 else [],
            )
            for i, log in enumerate(topic.partitions)
        ]
        topics.append(
            call.build(
                topic_class,
                error_code=ErrorCode.NONE,
                name=topic.name,
                topic_id=topic.topic_id,
                partitions=partitions,
            )
        )
    return call.respond(
        brokers=brokers(call, "node_id"),
        cluster_id=state.cluster_id,
        controller_id=state.brokers[0].node_id,
        topics=topics,
    )


def describe_cluster(call: Call) -> Any:
    state = call.state
    return call.respond(
        error_code=ErrorCode.NONE,
        cluster_id=state.cluster_id,
        controller_id=state.brokers[0].node_id,
        brokers=brokers(call, "broker_id"),
        endpoint_type=1,
    )


HANDLERS = (
    Handler(ApiKey.METADATA, (0, 13), metadata, METADATA_NAMES, MetadataIn),
    Handler(ApiKey.DESCRIBE_CLUSTER, (0, 2), describe_cluster, CLUSTER_NAMES),
)
