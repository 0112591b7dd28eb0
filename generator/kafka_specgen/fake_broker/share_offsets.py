"""The share-group offsets APIs of KIP-932: DescribeShareGroupOffsets (each partition's start
offset and, from v1, its lag), AlterShareGroupOffsets and DeleteShareGroupOffsets (for an
empty share group only, NON_EMPTY_GROUP otherwise), after apache/kafka's share
coordinator."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .groups import coordinates
from .handler import Handler
from .modern_groups import GroupRefused, find_group
from .shapes import PLAIN, Names
from .share_state import SharePartition
from .state import Group

OFFSETS_NAMES = Names(absent={"lag": -1})  # DescribeShareGroupOffsets v1 (Kafka 4.2)


class OffsetsTopicIn(Protocol):
    topic_name: str
    partitions: Sequence[int] | None


class OffsetsGroupIn(Protocol):
    group_id: str
    topics: Sequence[OffsetsTopicIn] | None


class DescribeOffsetsIn(Protocol):
    groups: Sequence[OffsetsGroupIn]


def describe_offsets(call: Call) -> Any:
    """Each partition's start offset (-1 where the group has no state for it yet), and
    from v1 its lag: the records from there to the end not yet acknowledged."""
    req: DescribeOffsetsIn = call.read(DescribeOffsetsIn)
    group_class = call.item(call.response, "groups")
    topic_class = call.item(group_class, "topics")
    partition_class = call.item(topic_class, "partitions")
    answered = []
    for g in req.groups:
        group = call.state.groups.get(g.group_id)
        code = ErrorCode.NONE
        if not coordinates(call, g.group_id):
            code = ErrorCode.NOT_COORDINATOR
        elif group is None or group.modern is None or group.modern.kind != "share":
            code = ErrorCode.GROUP_ID_NOT_FOUND
        if code != ErrorCode.NONE or group is None or group.modern is None:
            answered.append(
                call.build(group_class, group_id=g.group_id, error_code=code, topics=[])
            )
            continue
        shares = group.modern.shares
        wanted: list[tuple[str, list[int] | None]]
        if g.topics is None:
            ids = {t.topic_id: t.name for t in call.state.topics.values()}
            names = sorted({ids[t] for t, _ in shares if t in ids})
            wanted = [(name, None) for name in names]
        else:
            wanted = [
                (t.topic_name, list(t.partitions) if t.partitions is not None else None)
                for t in g.topics
            ]
        topics = []
        for name, indexes in wanted:
            topic = call.state.topics.get(name)
            if topic is None:
                topics.append(call.build(topic_class, topic_name=name, partitions=[]))
                continue
            partitions = []
            for index in indexes if indexes is not None else range(len(topic.partitions)):
                share = shares.get((topic.topic_id, index))
                known = 0 <= index < len(topic.partitions)
                start = share.start if share is not None else -1
                lag = -1
                if share is not None and known:
                    end = topic.partitions[index].end
                    lag = max(end - share.start - share.done_above_start(), 0)
                partitions.append(
                    call.build(
                        partition_class,
                        partition_index=index,
                        start_offset=start,
                        leader_epoch=0 if share is not None else -1,
                        lag=lag,
                        error_code=(
                            ErrorCode.NONE if known else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                        ),
                        error_message=None,
                    )
                )
            topics.append(
                call.build(
                    topic_class, topic_name=name, topic_id=topic.topic_id, partitions=partitions
                )
            )
        answered.append(
            call.build(group_class, group_id=g.group_id, error_code=ErrorCode.NONE, topics=topics)
        )
    return call.respond(groups=answered)


def _empty_share_group(call: Call, group_id: str, create: bool) -> tuple[Group | None, ErrorCode]:
    if not coordinates(call, group_id):
        return None, ErrorCode.NOT_COORDINATOR
    try:
        group = find_group(call.state, group_id, "share", create=create)
    except GroupRefused:
        return None, ErrorCode.GROUP_ID_NOT_FOUND
    if not group.empty:
        return None, ErrorCode.NON_EMPTY_GROUP
    return group, ErrorCode.NONE


class AlterPartitionIn(Protocol):
    partition_index: int
    start_offset: int


class AlterTopicIn(Protocol):
    topic_name: str
    partitions: Sequence[AlterPartitionIn]


class AlterOffsetsIn(Protocol):
    group_id: str
    topics: Sequence[AlterTopicIn]


def alter_offsets(call: Call) -> Any:
    """Set where an empty share group starts reading (``kafka-share-groups --reset-offsets``)."""
    req: AlterOffsetsIn = call.read(AlterOffsetsIn)
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partitions")
    group, code = _empty_share_group(call, req.group_id, create=True)
    if group is None or group.modern is None:
        return call.respond(error_code=code, error_message=None, responses=[])
    answered = []
    for t in req.topics:
        topic = call.state.topics.get(t.topic_name)
        partitions = []
        for p in t.partitions:
            known = topic is not None and 0 <= p.partition_index < len(topic.partitions)
            if topic is not None and known:
                key = (topic.topic_id, p.partition_index)
                log = topic.partitions[p.partition_index]
                start = min(max(p.start_offset, log.log_start), log.end)
                group.modern.shares[key] = SharePartition(start, locks=call.state.alarm())
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=p.partition_index,
                    error_code=ErrorCode.NONE if known else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message=None,
                )
            )
        answered.append(
            call.build(
                topic_class,
                topic_name=t.topic_name,
                topic_id=topic.topic_id if topic is not None else uuid.UUID(int=0),
                partitions=partitions,
            )
        )
    return call.respond(error_code=ErrorCode.NONE, error_message=None, responses=answered)


class DeleteTopicIn(Protocol):
    topic_name: str


class DeleteOffsetsIn(Protocol):
    group_id: str
    topics: Sequence[DeleteTopicIn]


def delete_offsets(call: Call) -> Any:
    """Forget an empty share group's state of whole topics."""
    req: DeleteOffsetsIn = call.read(DeleteOffsetsIn)
    item = call.item(call.response, "responses")
    group, code = _empty_share_group(call, req.group_id, create=False)
    if group is None or group.modern is None:
        return call.respond(error_code=code, error_message=None, responses=[])
    shares = group.modern.shares
    answered = []
    for t in req.topics:
        topic = call.state.topics.get(t.topic_name)
        if topic is None:
            answered.append(
                call.build(
                    item,
                    topic_name=t.topic_name,
                    topic_id=uuid.UUID(int=0),
                    error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message=f"The topic {t.topic_name} does not exist.",
                )
            )
            continue
        for key in [k for k in shares if k[0] == topic.topic_id]:
            shares.pop(key).locks.clear()
        answered.append(
            call.build(
                item,
                topic_name=t.topic_name,
                topic_id=topic.topic_id,
                error_code=ErrorCode.NONE,
                error_message=None,
            )
        )
    return call.respond(error_code=ErrorCode.NONE, error_message=None, responses=answered)


HANDLERS = (
    Handler(
        ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
        (0, 1),
        describe_offsets,
        OFFSETS_NAMES,
        DescribeOffsetsIn,
    ),
    Handler(ApiKey.ALTER_SHARE_GROUP_OFFSETS, (0, 0), alter_offsets, PLAIN, AlterOffsetsIn),
    Handler(ApiKey.DELETE_SHARE_GROUP_OFFSETS, (0, 0), delete_offsets, PLAIN, DeleteOffsetsIn),
)
