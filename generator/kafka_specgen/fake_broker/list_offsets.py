"""ListOffsets: the earliest, latest, max-timestamp or by-time offset of partitions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .apikeys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
READ_COMMITTED = 1

NAMES = Names(absent={"old_style_offsets": None})  # the v0 answer, gone from Kafka 4.0's specs


class PartitionIn(Protocol):
    partition_index: int
    timestamp: int


class TopicIn(Protocol):
    name: str
    partitions: Sequence[PartitionIn]


class ListOffsetsIn(Protocol):
    isolation_level: int
    topics: Sequence[TopicIn]


def list_offsets(call: Call) -> Any:
    req: ListOffsetsIn = call.read(ListOffsetsIn)
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    committed = req.isolation_level == READ_COMMITTED
    topics = []
    for t in req.topics:
        topic = call.state.topics.get(t.name)
        partitions = []
        for p in t.partitions:
            index = p.partition_index
            if topic is None or not 0 <= index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif topic.partitions[index].leader != call.node.node_id:
                code = ErrorCode.NOT_LEADER_OR_FOLLOWER
            else:
                code = ErrorCode.NONE
            if topic is None or code != ErrorCode.NONE:
                partitions.append(
                    call.build(partition_class, partition_index=index, error_code=code)
                )
                continue
            log = topic.partitions[index]
            if p.timestamp == EARLIEST:
                offset, timestamp = log.log_start, -1
            elif p.timestamp == LATEST:
                offset, timestamp = (log.last_stable if committed else log.end), -1
            elif p.timestamp == MAX_TIMESTAMP:
                stamps = [(b.max_timestamp, b.base_offset) for b in log.batches if not b.control]
                timestamp, offset = max(stamps, default=(-1, -1))
            else:
                offset, timestamp = log.offset_for_time(p.timestamp)
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=index,
                    error_code=ErrorCode.NONE,
                    old_style_offsets=[offset],
                    timestamp=timestamp,
                    offset=offset,
                    leader_epoch=log.leader_epoch,
                )
            )
        topics.append(call.build(topic_class, name=t.name, partitions=partitions))
    return call.respond(topics=topics)


HANDLERS = (Handler(ApiKey.LIST_OFFSETS, (0, 11), list_offsets, NAMES, ListOffsetsIn),)
