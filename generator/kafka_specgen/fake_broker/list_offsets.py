"""ListOffsets: the earliest, latest, max-timestamp or by-time offset of partitions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .log import PartitionLog
from .shapes import Names

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
EARLIEST_PENDING_UPLOAD = -6
READ_COMMITTED = 1
#: ListOffsets v1 on refuses a partition named twice (v0 took several offsets of one)
DUPLICATES_REFUSED_VERSION = 1

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
    asked = [(t.name, p.partition_index) for t in req.topics for p in t.partitions]
    twice = {tp for tp in asked if asked.count(tp) > 1}
    topics = []
    for t in req.topics:
        topic = call.state.topics.get(t.name)
        partitions = []
        for p in t.partitions:
            index = p.partition_index
            if (t.name, index) in twice and call.version >= DUPLICATES_REFUSED_VERSION:
                code = ErrorCode.INVALID_REQUEST
            elif topic is None or not 0 <= index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif topic.partitions[index].leader != call.node.node_id:
                code = ErrorCode.NOT_LEADER_OR_FOLLOWER
            else:
                code = ErrorCode.NONE
            if topic is None or code != ErrorCode.NONE:
                partitions.append(
                    call.build(
                        partition_class,
                        partition_index=index,
                        error_code=code,
                        old_style_offsets=[],
                        timestamp=-1,
                        offset=-1,
                        leader_epoch=-1,
                    )
                )
                continue
            offset, timestamp = _lookup(call, topic.partitions[index], p.timestamp, committed)
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=index,
                    error_code=ErrorCode.NONE,
                    old_style_offsets=[offset] if offset >= 0 else [],
                    timestamp=timestamp,
                    offset=offset,
                    leader_epoch=topic.partitions[index].leader_epoch if offset >= 0 else -1,
                )
            )
        topics.append(call.build(topic_class, name=t.name, partitions=partitions))
    return call.respond(topics=topics)


def _lookup(call: Call, log: PartitionLog, timestamp: int, committed: bool) -> tuple[int, int]:
    """(offset, timestamp) for a ListOffsets timestamp (apache/kafka
    ``UnifiedLog.fetchOffsetByTimestamp``; no tiered storage here)."""
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return log.log_start, -1
    if timestamp == LATEST:
        return (log.last_stable if committed else log.end), -1
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1
    if timestamp == MAX_TIMESTAMP:
        stamp, offset = log.max_timestamp(call.shapes.records)
        return offset, stamp
    return log.offset_for_time(call.shapes.records, timestamp)


HANDLERS = (Handler(ApiKey.LIST_OFFSETS, (0, 11), list_offsets, NAMES, ListOffsetsIn),)
