"""OffsetForLeaderEpoch (KIP-320): where a leader epoch of a partition ends, so that a
consumer whose partition moved to a new leader can check its position (librdkafka does
after a leader change)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names

NAMES = Names(renamed={"topic": ("name",), "partition": ("partition_index",)})  # until 2.4


class PartitionIn(Protocol):
    partition: int
    current_leader_epoch: int
    leader_epoch: int


class TopicIn(Protocol):
    topic: str
    partitions: Sequence[PartitionIn]


class OffsetForLeaderEpochIn(Protocol):
    topics: Sequence[TopicIn]


def offset_for_leader_epoch(call: Call) -> Any:
    req: OffsetForLeaderEpochIn = call.read(OffsetForLeaderEpochIn)
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    topics = []
    for t in req.topics:
        topic = call.state.topics.get(t.topic)
        partitions = []
        for p in t.partitions:
            epoch, end = -1, -1
            code: int
            if topic is None or not 0 <= p.partition < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                log = topic.partitions[p.partition]
                if log.leader != call.node.node_id:
                    code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                elif 0 <= p.current_leader_epoch < log.leader_epoch:
                    code = ErrorCode.FENCED_LEADER_EPOCH
                elif p.current_leader_epoch > log.leader_epoch:
                    code = ErrorCode.UNKNOWN_LEADER_EPOCH
                else:
                    code = ErrorCode.NONE
                    epoch, end = log.end_offset_for(p.leader_epoch)
            partitions.append(
                call.build(
                    partition_class,
                    error_code=code,
                    partition=p.partition,
                    leader_epoch=epoch,
                    end_offset=end,
                )
            )
        topics.append(call.build(topic_class, topic=t.topic, partitions=partitions))
    return call.respond(topics=topics)


HANDLERS = (
    Handler(
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        (0, 4),
        offset_for_leader_epoch,
        NAMES,
        OffsetForLeaderEpochIn,
    ),
)
