"""KIP-932 share groups: ShareGroupHeartbeat and ShareGroupDescribe, after apache/kafka
``GroupMetadataManager.shareGroupHeartbeat`` (the offsets APIs are ``share_offsets``'s,
ShareFetch and ShareAcknowledge ``share_fetch``'s).

Members get their target assignment at once (records, not partitions, are what members
share, so nothing is revoked first). A partition's share state starts, when the group first
subscribes to its topic, at the offset ``share.auto.offset.reset`` says (latest unless the
group config says otherwise).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from . import clock
from ..api_keys import ApiKey
from .assignors import SHARE_ASSIGNOR, simple
from .call import Call
from .configs import group_setting, group_value
from .consumer_groups import GROUP_OPERATIONS, NO_OPERATIONS
from .errors import ErrorCode
from .groups import coordinates
from .handler import Handler
from .modern import LEAVE_EPOCH, ModernGroup, ModernMember, copy_partitions
from .modern_groups import (
    GroupRefused,
    assignment_items,
    described_assignment,
    fence,
    find_group,
    recompute_target,
    refresh_state,
    subscribed_topics,
)
from .shapes import PLAIN
from .share_state import SharePartition
from .state import ClusterState, Group

_DURATION = re.compile(
    r"P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


def lock_duration_ms(call: Call, group_id: str) -> int:
    return group_value(
        call.state,
        group_id,
        "share.record.lock.duration.ms",
        call.limits.group_share_record_lock_duration_ms,
    )


def delivery_limit(call: Call, group_id: str) -> int:
    return group_value(
        call.state,
        group_id,
        "share.delivery.count.limit",
        call.limits.group_share_delivery_count_limit,
    )


def leave(group: Group, member: ModernMember, limit: int) -> None:
    """A share member goes: what it holds is released, then it leaves the group."""
    modern = group.modern
    assert modern is not None
    for share in modern.shares.values():
        share.release_member(member.member_id, limit)
    for key in [k for k in modern.sessions if k[1] == member.member_id]:
        del modern.sessions[key]
    fence(group, member)


# --- ShareGroupHeartbeat --------------------------------------------------------------------


class HeartbeatIn(Protocol):
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: Sequence[str] | None


def heartbeat(call: Call) -> Any:
    req: HeartbeatIn = call.read(HeartbeatIn)
    try:
        problem = _invalid(req)
        if problem is not None:
            raise GroupRefused(ErrorCode.INVALID_REQUEST, problem)
        if not coordinates(call, req.group_id):
            raise GroupRefused(ErrorCode.NOT_COORDINATOR)
        group = find_group(call.state, req.group_id, "share", create=req.member_epoch == 0)
        modern = group.modern
        assert modern is not None
        if req.member_epoch == LEAVE_EPOCH:
            member = modern.members.get(req.member_id)
            if member is None:
                raise GroupRefused(ErrorCode.UNKNOWN_MEMBER_ID)
            leave(group, member, delivery_limit(call, req.group_id))
            return call.respond(
                error_code=ErrorCode.NONE,
                member_id=req.member_id,
                member_epoch=LEAVE_EPOCH,
                heartbeat_interval_ms=0,
                assignment=None,
            )
        return _heartbeat(call, req, group, modern)
    except GroupRefused as refused:
        return call.respond(
            error_code=refused.code,
            error_message=refused.message,
            member_id=None,
            member_epoch=0,
            heartbeat_interval_ms=0,
            assignment=None,
        )


def _invalid(req: HeartbeatIn) -> str | None:
    """apache/kafka ``throwIfShareGroupHeartbeatRequestIsInvalid``."""
    if not req.group_id:
        return "GroupId can't be empty."
    if req.rack_id == "":
        return "RackId can't be empty."
    if not req.member_id:
        return "MemberId can't be empty."
    if req.member_epoch > 0 or req.member_epoch == LEAVE_EPOCH:
        return None
    if req.member_epoch == 0:
        if not req.subscribed_topic_names:
            return "SubscribedTopicNames must be set in first request."
        return None
    return "MemberEpoch is invalid."


def _heartbeat(call: Call, req: HeartbeatIn, group: Group, modern: ModernGroup) -> Any:
    state = call.state
    member = modern.members.get(req.member_id)
    if req.member_epoch == 0:
        if member is not None:  # joining again
            leave(group, member, delivery_limit(call, group.group_id))
        member = ModernMember(req.member_id, session=state.alarm())
        modern.members[req.member_id] = member
    elif member is None:
        raise GroupRefused(
            ErrorCode.UNKNOWN_MEMBER_ID,
            f"Member {req.member_id} is not a member of group {group.group_id}.",
        )
    elif req.member_epoch > member.member_epoch or (
        req.member_epoch < member.member_epoch and req.member_epoch != member.previous_member_epoch
    ):
        raise GroupRefused(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The share group member has a different member epoch ({req.member_epoch}) than "
            f"the one known by the group coordinator ({member.member_epoch}). The member must "
            "abandon all its partitions and rejoin.",
        )
    before = copy_partitions(member.assigned)
    changed = False
    if req.rack_id is not None:
        member.rack_id = req.rack_id
    if req.subscribed_topic_names is not None:
        names = tuple(sorted(set(req.subscribed_topic_names)))
        changed = names != member.subscribed_topic_names
        member.subscribed_topic_names = names
    member.client_id, member.client_host = call.client_id or "", call.client_host
    topics = subscribed_topics(state, modern)
    if changed or topics != modern.subscribed:
        modern.group_epoch += 1
    if modern.group_epoch > modern.assignment_epoch:
        recompute_target(state, modern, topics, SHARE_ASSIGNOR, simple)
        _initialize(call, group, modern, topics)
    if member.member_epoch != modern.assignment_epoch:
        member.previous_member_epoch = member.member_epoch
        member.member_epoch = modern.assignment_epoch
        member.assigned = copy_partitions(modern.target.get(member.member_id, {}))
    timeout = group_value(
        state,
        group.group_id,
        "share.session.timeout.ms",
        call.limits.group_share_session_timeout_ms,
    )
    limit = delivery_limit(call, group.group_id)
    member_id = member.member_id
    member.session.set(call.now + timeout / 1000.0, lambda: _expire(state, group, member_id, limit))
    refresh_state(group)
    interval = group_value(
        state,
        group.group_id,
        "share.heartbeat.interval.ms",
        call.limits.group_share_heartbeat_interval_ms,
    )
    assignment = None
    if req.member_epoch == 0 or before != member.assigned:
        cls = call.item(call.response, "assignment")
        item = call.item(cls, "topic_partitions")
        assignment = call.build(
            cls,
            topic_partitions=[
                call.build(item, topic_id=t, partitions=p)
                for t, p in assignment_items(member.assigned)
            ],
        )
    return call.respond(
        error_code=ErrorCode.NONE,
        error_message=None,
        member_id=member.member_id,
        member_epoch=member.member_epoch,
        heartbeat_interval_ms=interval,
        assignment=assignment,
    )


def _expire(state: ClusterState, group: Group, member_id: str, limit: int) -> None:
    modern = group.modern
    member = modern.members.get(member_id) if modern is not None else None
    if member is not None and state.groups.get(group.group_id) is group:
        leave(group, member, limit)


def _initialize(
    call: Call, group: Group, modern: ModernGroup, topics: dict[str, tuple[uuid.UUID, int]]
) -> None:
    """Give the partitions the group subscribes to a share state, starting where
    share.auto.offset.reset says (apache/kafka ``InitializeShareGroupState``)."""
    reset = group_setting(call.state, group.group_id, "share.auto.offset.reset", "latest")
    for name, (topic_id, count) in topics.items():
        topic = call.state.topics[name]
        for index in range(count):
            if (topic_id, index) not in modern.shares:
                log = topic.partitions[index]
                start = initial_offset(call, log, reset)
                modern.shares[(topic_id, index)] = SharePartition(start, locks=call.state.alarm())


def initial_offset(call: Call, log: Any, reset: str) -> int:
    if reset == "earliest":
        return int(log.log_start)
    if reset.startswith("by_duration:"):
        found = _DURATION.match(reset.split(":", 1)[1].strip())
        if found is not None:
            d, h, m, s = (float(found.group(k) or 0) for k in "dhms")
            back_ms = int(((d * 24 + h) * 60 + m) * 60_000 + s * 1000)
            offset, _ = log.offset_for_time(call.shapes.records, clock.wall_ms() - back_ms)
            return int(offset) if offset >= 0 else int(log.end)
    return int(log.end)


# --- ShareGroupDescribe ---------------------------------------------------------------------


class DescribeIn(Protocol):
    group_ids: Sequence[str]
    include_authorized_operations: bool


def describe(call: Call) -> Any:
    req: DescribeIn = call.read(DescribeIn)
    group_class = call.item(call.response, "groups")
    member_class = call.item(group_class, "members")
    assignment_class = call.item(member_class, "assignment")
    described = []
    for group_id in req.group_ids:
        group = call.state.groups.get(group_id)
        modern = group.modern if group is not None else None
        if not coordinates(call, group_id):
            described.append(
                call.build(group_class, error_code=ErrorCode.NOT_COORDINATOR, group_id=group_id)
            )
            continue
        if modern is None or modern.kind != "share":
            why = "not found" if group is None else "is not a share group"
            described.append(
                call.build(
                    group_class,
                    error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                    error_message=f"Group {group_id} {why}.",
                    group_id=group_id,
                )
            )
            continue
        members = [
            call.build(
                member_class,
                member_id=m.member_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                assignment=described_assignment(call, assignment_class, m.assigned),
            )
            for m in modern.members.values()
        ]
        described.append(
            call.build(
                group_class,
                error_code=ErrorCode.NONE,
                group_id=group_id,
                group_state=modern.state(),
                group_epoch=modern.group_epoch,
                assignment_epoch=modern.assignment_epoch,
                assignor_name=SHARE_ASSIGNOR,
                members=members,
                authorized_operations=(
                    GROUP_OPERATIONS if req.include_authorized_operations else NO_OPERATIONS
                ),
            )
        )
    return call.respond(groups=described)


HANDLERS = (
    Handler(ApiKey.SHARE_GROUP_HEARTBEAT, (1, 1), heartbeat, PLAIN, HeartbeatIn),
    Handler(ApiKey.SHARE_GROUP_DESCRIBE, (1, 1), describe, PLAIN, DescribeIn),
)
