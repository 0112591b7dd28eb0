"""DeleteGroups and OffsetDelete (KIP-496), as apache/kafka ``GroupMetadataManager`` and
``OffsetMetadataManager`` validate them: only an empty group is deleted (NON_EMPTY_GROUP),
and a group still subscribed to a topic keeps its offsets (GROUP_SUBSCRIBED_TO_TOPIC)."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .groups import coordinates
from .handler import Handler
from .modern_groups import member_topics
from .shapes import PLAIN
from .state import ClusterState, Group

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class DeleteGroupsIn(Protocol):
    groups_names: Sequence[str]


def delete_groups(call: Call) -> Any:
    req: DeleteGroupsIn = call.read(DeleteGroupsIn)
    item = call.item(call.response, "results")
    results = []
    for group_id in req.groups_names:
        group = call.state.groups.get(group_id)
        if not coordinates(call, group_id):
            code = ErrorCode.NOT_COORDINATOR
        elif group is None or group.state == "Dead":
            code = ErrorCode.GROUP_ID_NOT_FOUND
        elif not group.empty:
            code = ErrorCode.NON_EMPTY_GROUP
        else:
            code = ErrorCode.NONE
            group.watchdog.clear()
            for share in group.modern.shares.values() if group.modern is not None else ():
                share.locks.clear()  # a share group's state goes with it
            del call.state.groups[group_id]
            group.state = "Dead"
            group.changed.fire()
        results.append(call.build(item, group_id=group_id, error_code=code))
    return call.respond(results=results)


class OffsetDeletePartitionIn(Protocol):
    partition_index: int


class OffsetDeleteTopicIn(Protocol):
    name: str
    partitions: Sequence[OffsetDeletePartitionIn]


class OffsetDeleteIn(Protocol):
    group_id: str
    topics: Sequence[OffsetDeleteTopicIn]


def offset_delete(call: Call) -> Any:
    req: OffsetDeleteIn = call.read(OffsetDeleteIn)
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    group = call.state.groups.get(req.group_id)
    if not coordinates(call, req.group_id):
        return call.respond(error_code=ErrorCode.NOT_COORDINATOR, topics=[])
    if group is None or group.state == "Dead":
        return call.respond(error_code=ErrorCode.GROUP_ID_NOT_FOUND, topics=[])
    if group.type == "share":
        return call.respond(error_code=ErrorCode.GROUP_ID_NOT_FOUND, topics=[])
    subscribed = subscribed_topics(call.state, group)
    topics = []
    for t in req.topics:
        code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if t.name in subscribed else ErrorCode.NONE
        partitions = []
        for p in t.partitions:
            if code == ErrorCode.NONE:
                group.offsets.pop((t.name, p.partition_index), None)
            partitions.append(
                call.build(partition_class, partition_index=p.partition_index, error_code=code)
            )
        topics.append(call.build(topic_class, name=t.name, partitions=partitions))
    return call.respond(error_code=ErrorCode.NONE, topics=topics)


def subscribed_topics(state: ClusterState, group: Group) -> set[str]:
    """The topics a group's members subscribe to: a consumer group's subscriptions, or
    those in a classic consumer group's protocol metadata (apache/kafka
    ``ClassicGroup.computeSubscribedTopics``; none for other protocol types)."""
    if group.modern is not None:
        out: set[str] = set()
        for member in group.modern.members.values():
            out.update(member_topics(state, member))
        return out
    if group.protocol_type != "consumer" or group.protocol is None:
        return set()
    topics: set[str] = set()
    for classic in group.members.values():
        topics.update(subscription_topics(dict(classic.protocols).get(group.protocol, b"")))
    return topics


def subscription_topics(metadata: bytes) -> list[str]:
    """The topics of a ConsumerProtocolSubscription (version, then the topic names), or
    none if it does not parse."""
    try:
        _INT16.unpack_from(metadata, 0)
        (count,) = _INT32.unpack_from(metadata, 2)
        pos, topics = 6, []
        for _ in range(max(count, 0)):
            (size,) = _INT16.unpack_from(metadata, pos)
            if size < 0 or pos + 2 + size > len(metadata):
                return []
            topics.append(metadata[pos + 2 : pos + 2 + size].decode("utf-8", "replace"))
            pos += 2 + size
        return topics
    except struct.error:
        return []


HANDLERS = (
    Handler(ApiKey.DELETE_GROUPS, (0, 2), delete_groups, PLAIN, DeleteGroupsIn),
    Handler(ApiKey.OFFSET_DELETE, (0, 0), offset_delete, PLAIN, OffsetDeleteIn),
)
