"""OffsetCommit and OffsetFetch, checked as Kafka's group coordinator checks them (apache/kafka
``OffsetMetadataManager``, ``ClassicGroup.validateOffsetCommit``).

Offsets are kept by topic name; OffsetCommit/OffsetFetch v10 name topics by id only
(KIP-848), resolved here, UNKNOWN_TOPIC_ID for an id no topic has.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from . import rebalance
from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .groups import coordinates
from .handler import Handler
from .rebalance import COMPLETING, EMPTY
from .shapes import Names
from .state import CommittedOffset, Group

ZERO_UUID = uuid.UUID(int=0)
#: OffsetCommit v9 answers GROUP_ID_NOT_FOUND for an unknown group (ILLEGAL_GENERATION before)
GROUP_NOT_FOUND_VERSION = 9
#: OffsetFetch v8 looks up several groups at once (KIP-709)
GROUPS_VERSION = 8
#: consumer group members (KIP-848) commit with OffsetCommit v9 or later
MODERN_COMMIT_VERSION = 9

COMMIT_NAMES = Names(
    renamed={"generation_id_or_member_epoch": ("generation_id",)},  # renamed in Kafka 3.6
    absent={"topic_id": ZERO_UUID},  # OffsetCommit v10, Kafka 4.1
)
FETCH_NAMES = Names(  # v8 came with Kafka 3.0, v9 (member id and epoch) with 3.7
    absent={"topic_id": ZERO_UUID, "groups": (), "member_id": None, "member_epoch": -1}
)


class CommitPartitionIn(Protocol):
    partition_index: int
    committed_offset: int
    committed_leader_epoch: int
    committed_metadata: str | None


class CommitTopicIn(Protocol):
    name: str
    topic_id: uuid.UUID
    partitions: Sequence[CommitPartitionIn]


class OffsetCommitIn(Protocol):
    group_id: str
    generation_id_or_member_epoch: int
    member_id: str
    group_instance_id: str | None
    topics: Sequence[CommitTopicIn]


def offset_commit(call: Call) -> Any:
    req: OffsetCommitIn = call.read(OffsetCommitIn)
    if not coordinates(call, req.group_id):
        return commit_response(call, req.topics, ErrorCode.NOT_COORDINATOR, None)
    group = call.state.groups.get(req.group_id)
    generation = req.generation_id_or_member_epoch
    if group is None:
        if generation < 0:  # a simple consumer's (or an admin's) group
            group = call.state.group(req.group_id)
        else:
            code = ErrorCode.ILLEGAL_GENERATION
            if call.version >= GROUP_NOT_FOUND_VERSION:
                code = ErrorCode.GROUP_ID_NOT_FOUND
            return commit_response(call, req.topics, code, None)
    rebalance.tick(group, call.now)
    if group.type != "classic":
        code = validate_modern_commit(group, req.member_id, generation, call.version)
    else:
        code = validate_commit(group, req.member_id, req.group_instance_id, generation)
    if code == ErrorCode.NONE and req.member_id in group.members:
        group.members[req.member_id].last_seen = call.now
    return commit_response(
        call, req.topics, code, group.offsets if code == ErrorCode.NONE else None
    )


def validate_commit(
    group: Group, member_id: str, instance: str | None, generation: int
) -> ErrorCode:
    """apache/kafka ``ClassicGroup.validateOffsetCommit``: only CompletingRebalance refuses a
    current member's commit (a commit during PreparingRebalance is kept, so that members
    that stop when another leaves lose nothing)."""
    if generation < 0 and group.state == EMPTY:
        return ErrorCode.NONE
    if generation >= 0 or member_id or instance is not None:
        code = rebalance.validate_member(group, member_id, instance)
        if code != ErrorCode.NONE:
            return code
        if generation != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
    elif group.state != EMPTY:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if group.state == COMPLETING:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return ErrorCode.NONE


def validate_modern_commit(
    group: Group, member_id: str | None, epoch: int, version: int
) -> ErrorCode:
    """apache/kafka ``ConsumerGroup.validateOffsetCommit``: an admin's commit (epoch -1)
    only while the group is empty; else the member's current epoch, with OffsetCommit v9 or
    later."""
    modern = group.modern
    if modern is None or modern.kind != "consumer":
        return ErrorCode.GROUP_ID_NOT_FOUND
    if epoch < 0 and not modern.members:
        return ErrorCode.NONE
    member = modern.members.get(member_id or "")
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if version < MODERN_COMMIT_VERSION:
        return ErrorCode.UNSUPPORTED_VERSION
    if epoch != member.member_epoch:
        return ErrorCode.STALE_MEMBER_EPOCH
    return ErrorCode.NONE


def validate_modern_fetch(group: Group | None, member_id: str | None, epoch: int) -> ErrorCode:
    """apache/kafka ``ConsumerGroup.validateOffsetFetch``: a member that names itself must
    be one, at its current epoch."""
    if group is None or group.modern is None or (member_id is None and epoch < 0):
        return ErrorCode.NONE
    if not member_id and epoch < 0:
        return ErrorCode.NONE
    member = group.modern.members.get(member_id or "")
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return ErrorCode.NONE if epoch == member.member_epoch else ErrorCode.STALE_MEMBER_EPOCH


def commit_response(
    call: Call,
    topics: Sequence[CommitTopicIn],
    code: ErrorCode,
    into: dict[tuple[str, int], CommittedOffset] | None,
) -> Any:
    """The answer to OffsetCommit and TxnOffsetCommit: the request's offsets stored
    ``into`` (unless None), and ``code`` for every partition (UNKNOWN_TOPIC_ID for a
    topic id no topic has)."""
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    answered = []
    for t in topics:
        name = t.name
        topic_code = code
        if not name and t.topic_id != ZERO_UUID:
            found = call.state.topic_by_id(t.topic_id)
            name = found.name if found is not None else ""
            if found is None and code == ErrorCode.NONE:
                topic_code = ErrorCode.UNKNOWN_TOPIC_ID
        for p in t.partitions:
            if into is not None and topic_code == ErrorCode.NONE:
                into[(name, p.partition_index)] = CommittedOffset(
                    p.committed_offset, p.committed_leader_epoch, p.committed_metadata
                )
        partitions = [
            call.build(partition_class, partition_index=p.partition_index, error_code=topic_code)
            for p in t.partitions
        ]
        answered.append(
            call.build(topic_class, name=t.name, topic_id=t.topic_id, partitions=partitions)
        )
    return call.respond(topics=answered)


# --- OffsetFetch ----------------------------------------------------------------------------


class FetchTopicIn(Protocol):
    name: str
    topic_id: uuid.UUID
    partition_indexes: Sequence[int]


class FetchGroupIn(Protocol):
    group_id: str
    member_id: str | None
    member_epoch: int
    topics: Sequence[FetchTopicIn] | None


class OffsetFetchIn(Protocol):
    group_id: str
    topics: Sequence[FetchTopicIn] | None
    groups: Sequence[FetchGroupIn]


def offset_fetch(call: Call) -> Any:
    req: OffsetFetchIn = call.read(OffsetFetchIn)
    if call.version >= GROUPS_VERSION:
        group_class = call.item(call.response, "groups")
        answered = []
        for g in req.groups:
            code = ErrorCode.NONE if coordinates(call, g.group_id) else ErrorCode.NOT_COORDINATOR
            if code == ErrorCode.NONE:
                group = call.state.groups.get(g.group_id)
                code = validate_modern_fetch(group, g.member_id, g.member_epoch)
            topics = _fetched(call, group_class, g.group_id, g.topics) if not code else []
            answered.append(
                call.build(group_class, group_id=g.group_id, error_code=code, topics=topics)
            )
        return call.respond(groups=answered)
    if not coordinates(call, req.group_id):
        return call.respond(error_code=ErrorCode.NOT_COORDINATOR, topics=[])
    topics = _fetched(call, call.response, req.group_id, req.topics)
    return call.respond(error_code=ErrorCode.NONE, topics=topics)


def _fetched(
    call: Call, parent: type, group_id: str, wanted: Sequence[FetchTopicIn] | None
) -> list[Any]:
    """The committed offsets of a group's partitions (every committed one for None)."""
    topic_class = call.item(parent, "topics")
    partition_class = call.item(topic_class, "partitions")
    group = call.state.groups.get(group_id)
    offsets = group.offsets if group is not None else {}
    asked: list[tuple[str, uuid.UUID, list[int], ErrorCode]] = []
    if wanted is None:
        by_name: dict[str, list[int]] = {}
        for name, index in sorted(offsets):
            by_name.setdefault(name, []).append(index)
        for name, indexes in by_name.items():
            topic = call.state.topics.get(name)
            asked.append((name, topic.topic_id if topic else ZERO_UUID, indexes, ErrorCode.NONE))
    else:
        for t in wanted:
            name, code = t.name, ErrorCode.NONE
            if not name and t.topic_id != ZERO_UUID:
                found = call.state.topic_by_id(t.topic_id)
                name = found.name if found is not None else ""
                code = ErrorCode.NONE if found is not None else ErrorCode.UNKNOWN_TOPIC_ID
            asked.append((name, t.topic_id, list(t.partition_indexes), code))
    none = CommittedOffset(-1, -1, "")
    answered = []
    for name, topic_id, indexes, code in asked:
        partitions = []
        for index in indexes:
            committed = offsets.get((name, index), none) if code == ErrorCode.NONE else none
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=index,
                    committed_offset=committed.offset,
                    committed_leader_epoch=committed.leader_epoch,
                    metadata=committed.metadata or "",
                    error_code=code,
                )
            )
        answered.append(
            call.build(topic_class, name=name, topic_id=topic_id, partitions=partitions)
        )
    return answered


HANDLERS = (
    Handler(ApiKey.OFFSET_COMMIT, (0, 10), offset_commit, COMMIT_NAMES, OffsetCommitIn),
    Handler(ApiKey.OFFSET_FETCH, (0, 10), offset_fetch, FETCH_NAMES, OffsetFetchIn),
)
