"""KIP-848 consumer groups: ConsumerGroupHeartbeat and ConsumerGroupDescribe, after apache/kafka
``GroupMetadataManager.consumerGroupHeartbeat``.

Each heartbeat (1) creates or updates its member, bumping the group epoch when a
subscription (or the subscribed topics' partitions) changed, (2) computes the target
assignment for a new group epoch with the member's server assignor, and (3) moves the member
one step towards its target (``modern.reconcile``: revocation before assignment). Members
that stop heartbeating for ``group.consumer.session.timeout.ms``, or that do not revoke in
their rebalance timeout, are removed by timers on the cluster's loop.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from . import clock
from ..api_keys import ApiKey
from .assignors import CONSUMER_ASSIGNORS, DEFAULT_CONSUMER_ASSIGNOR
from .call import Call
from .errors import ErrorCode
from .groups import coordinates
from .handler import Handler
from .modern import (
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    UNREVOKED,
    ModernGroup,
    ModernMember,
    Partitions,
    copy_partitions,
    is_subset,
    reconcile,
)
from .modern_groups import (
    GroupRefused,
    assignment_items,
    described_assignment,
    fence,
    find_group,
    recompute_target,
    refresh_state,
    subscribed_topics,
    validate_regex,
)
from .shapes import Names
from .state import ClusterState, Group

#: ConsumerGroupHeartbeat v1: the member id is the client's (KIP-1082)
CLIENT_MEMBER_ID_VERSION = 1
#: AclOperation bits a group has when nothing is denied: READ, DELETE, DESCRIBE,
#: DESCRIBE_CONFIGS, ALTER_CONFIGS
GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)
NO_OPERATIONS = -(2**31)

NAMES = Names(
    # the early-access draft in Kafka 3.5-3.6's specs (never advertised) named the assignment so
    renamed={"topic_partitions": ("assigned_topic_partitions",)},
    absent={"subscribed_topic_regex": None, "member_type": -1},  # Kafka 4.0
)


class OwnedIn(Protocol):
    topic_id: uuid.UUID
    partitions: Sequence[int]


class HeartbeatIn(Protocol):
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    subscribed_topic_names: Sequence[str] | None
    subscribed_topic_regex: str | None
    server_assignor: str | None
    topic_partitions: Sequence[OwnedIn] | None


def heartbeat(call: Call) -> Any:
    req: HeartbeatIn = call.read(HeartbeatIn)
    try:
        problem = _invalid(call, req)
        if problem is not None:
            raise GroupRefused(ErrorCode.INVALID_REQUEST, problem)
        if req.server_assignor is not None and req.server_assignor not in CONSUMER_ASSIGNORS:
            raise GroupRefused(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: "
                f"{', '.join(CONSUMER_ASSIGNORS)}.",
            )
        if not coordinates(call, req.group_id):
            raise GroupRefused(ErrorCode.NOT_COORDINATOR)
        if req.subscribed_topic_regex:
            validate_regex(req.subscribed_topic_regex)
        if req.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return _leave(call, req)
        return _heartbeat(call, req)
    except GroupRefused as refused:
        return call.respond(
            error_code=refused.code,
            error_message=refused.message,
            member_id=None,
            member_epoch=0,
            heartbeat_interval_ms=0,
            assignment=None,
        )


def _invalid(call: Call, req: HeartbeatIn) -> str | None:
    """apache/kafka ``throwIfConsumerGroupHeartbeatRequestIsInvalid``."""
    if not req.group_id:
        return "GroupId can't be empty."
    if req.instance_id == "":
        return "InstanceId can't be empty."
    if req.rack_id == "":
        return "RackId can't be empty."
    if call.version >= CLIENT_MEMBER_ID_VERSION and not req.member_id:
        return "MemberId can't be empty."
    if req.member_epoch > 0 or req.member_epoch == LEAVE_EPOCH:
        return None if req.member_id else "MemberId can't be empty."
    if req.member_epoch == 0:
        if req.rebalance_timeout_ms == -1:
            return "RebalanceTimeoutMs must be provided in first request."
        if req.topic_partitions is None or len(req.topic_partitions) > 0:
            return "TopicPartitions must be empty when (re-)joining."
        if not req.subscribed_topic_names and not req.subscribed_topic_regex:
            return "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."
        return None
    if req.member_epoch == STATIC_LEAVE_EPOCH:
        if not req.member_id:
            return "MemberId can't be empty."
        return None if req.instance_id is not None else "InstanceId can't be null."
    return "MemberEpoch is invalid."


def _owned(req: HeartbeatIn) -> list[tuple[uuid.UUID, list[int]]] | None:
    if req.topic_partitions is None:
        return None
    return [(t.topic_id, list(t.partitions)) for t in req.topic_partitions]


def _heartbeat(call: Call, req: HeartbeatIn) -> Any:
    state, now = call.state, call.now
    group = find_group(state, req.group_id, "consumer", create=req.member_epoch == 0)
    modern = group.modern
    assert modern is not None
    owned = _owned(req)
    member = _member(call, group, modern, req, owned)
    before = copy_partitions(member.assigned)
    bump = _update(member, call, req)
    topics = subscribed_topics(state, modern)
    if bump or topics != modern.subscribed:
        modern.group_epoch += 1
    if modern.group_epoch > modern.assignment_epoch:
        assignor = member.server_assignor or _preferred(modern) or DEFAULT_CONSUMER_ASSIGNOR
        recompute_target(state, modern, topics, assignor, CONSUMER_ASSIGNORS[assignor])
    target = modern.target.get(member.member_id, {})
    if not member.reconciled_to(modern.assignment_epoch):
        modern.release(member)
        was = member.state
        reconcile(member, modern.assignment_epoch, target, modern.owner_epoch, owned)
        modern.own(member)
        if member.state == UNREVOKED and was != UNREVOKED:
            _arm_rebalance_timeout(state, group, member)
        elif member.state != UNREVOKED:
            member.rebalance.clear()
    _arm_session(call, group, member)
    refresh_state(group)
    full = req.member_epoch == 0 or (
        req.rebalance_timeout_ms != -1
        and req.subscribed_topic_names is not None
        and owned is not None
    )
    changed = before != member.assigned
    return call.respond(
        error_code=ErrorCode.NONE,
        error_message=None,
        member_id=member.member_id,
        member_epoch=member.member_epoch,
        heartbeat_interval_ms=call.limits.group_consumer_heartbeat_interval_ms,
        assignment=_assignment(call, member.assigned) if full or changed else None,
    )


def _member(
    call: Call,
    group: Group,
    modern: ModernGroup,
    req: HeartbeatIn,
    owned: list[tuple[uuid.UUID, list[int]]] | None,
) -> ModernMember:
    """The heartbeat's member: a new one for epoch 0, a static member taking its instance
    id's place back, else the existing one, its epoch checked."""
    member_id = req.member_id or str(uuid.uuid4())
    instance = req.instance_id
    if req.member_epoch == 0:
        if instance is not None and instance in modern.static:
            return _replace_static(call, group, modern, instance, member_id)
        known = modern.members.get(member_id)
        if known is not None:  # joining again (fenced, or its first answer was lost)
            fence(group, known)
        member = ModernMember(member_id, instance, session=call.state.alarm())
        member.rebalance = call.state.alarm()
        modern.members[member_id] = member
        if instance is not None:
            modern.static[instance] = member_id
        return member
    if instance is not None:
        holder = modern.static.get(instance)
        if holder is None:
            raise GroupRefused(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance} is unknown.")
        if holder != member_id:
            raise GroupRefused(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance} is not the member "
                f"{holder} that holds it.",
            )
    existing = modern.members.get(member_id)
    if existing is None:
        raise GroupRefused(
            ErrorCode.UNKNOWN_MEMBER_ID,
            f"Member {member_id} is not a member of group {group.group_id}.",
        )
    _check_epoch(existing, req.member_epoch, owned)
    return existing


def _check_epoch(
    member: ModernMember, epoch: int, owned: list[tuple[uuid.UUID, list[int]]] | None
) -> None:
    """apache/kafka ``throwIfConsumerGroupMemberEpochIsInvalid``: an epoch ahead is fenced,
    one behind only if it is the previous one and the member owns no more than it has (the
    answer with the new epoch may have been lost)."""
    if epoch > member.member_epoch or (
        epoch < member.member_epoch
        and (epoch != member.previous_member_epoch or not is_subset(owned, member.assigned))
    ):
        relation = "greater" if epoch > member.member_epoch else "smaller"
        raise GroupRefused(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a {relation} member epoch ({epoch}) than the one "
            f"known by the group coordinator ({member.member_epoch}). The member must abandon "
            "all its partitions and rejoin.",
        )


def _replace_static(
    call: Call, group: Group, modern: ModernGroup, instance: str, member_id: str
) -> ModernMember:
    """A static member back under a new member id takes its old one's place, assignment and
    epoch, without a rebalance, if the old one left temporarily (epoch -2)."""
    old = modern.members[modern.static[instance]]
    if old.member_id == member_id:
        return old
    if old.member_epoch != STATIC_LEAVE_EPOCH:
        raise GroupRefused(
            ErrorCode.UNRELEASED_INSTANCE_ID,
            f"Static member {old.member_id} with instance id {instance} cannot be replaced "
            "because it has not left the group yet.",
        )
    old.stop_timers()
    modern.release(old)
    del modern.members[old.member_id]
    member = ModernMember(member_id, instance, session=call.state.alarm())
    member.rebalance = call.state.alarm()
    for attr in (
        "rack_id",
        "rebalance_timeout_ms",
        "subscribed_topic_names",
        "subscribed_topic_regex",
        "server_assignor",
        "previous_member_epoch",
        "state",
    ):
        setattr(member, attr, getattr(old, attr))
    member.member_epoch = old.previous_member_epoch
    member.assigned = copy_partitions(old.assigned)
    modern.members[member_id] = member
    modern.static[instance] = member_id
    if old.member_id in modern.target:
        modern.target[member_id] = modern.target.pop(old.member_id)
    modern.own(member)
    return member


def _update(member: ModernMember, call: Call, req: HeartbeatIn) -> bool:
    """Take the heartbeat's fields (those it sent); whether the subscription changed."""
    if req.rack_id is not None:
        member.rack_id = req.rack_id
    if req.rebalance_timeout_ms != -1:
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
    if req.server_assignor is not None:
        member.server_assignor = req.server_assignor
    member.client_id, member.client_host = call.client_id or "", call.client_host
    member.principal = call.principal
    changed = False
    if req.subscribed_topic_names is not None:
        names = tuple(sorted(set(req.subscribed_topic_names)))
        changed = names != member.subscribed_topic_names
        member.subscribed_topic_names = names
    if req.subscribed_topic_regex is not None:
        regex = req.subscribed_topic_regex or None
        changed = changed or regex != member.subscribed_topic_regex
        member.subscribed_topic_regex = regex
    return changed


def _preferred(modern: ModernGroup) -> str | None:
    """The server assignor most members ask for (apache/kafka
    ``ConsumerGroup.computePreferredServerAssignor``)."""
    votes: dict[str, int] = {}
    for m in modern.members.values():
        if m.server_assignor:
            votes[m.server_assignor] = votes.get(m.server_assignor, 0) + 1
    return max(sorted(votes), key=lambda name: votes[name]) if votes else None


def _arm_session(call: Call, group: Group, member: ModernMember) -> None:
    state, member_id = call.state, member.member_id
    timeout = call.limits.group_consumer_session_timeout_ms / 1000.0
    member.session.set(call.now + timeout, lambda: _expire(state, group, member_id, None))


def _arm_rebalance_timeout(state: ClusterState, group: Group, member: ModernMember) -> None:
    epoch, member_id = member.member_epoch, member.member_id
    deadline = clock.now() + max(member.rebalance_timeout_ms, 0) / 1000.0
    member.rebalance.set(deadline, lambda: _expire(state, group, member_id, epoch))


def _expire(state: ClusterState, group: Group, member_id: str, epoch: int | None) -> None:
    """A member's session expired (``epoch`` None), or it did not revoke what it had to at
    ``epoch`` within its rebalance timeout: it is removed."""
    modern = group.modern
    member = modern.members.get(member_id) if modern is not None else None
    if member is None or state.groups.get(group.group_id) is not group:
        return
    if epoch is not None and (member.state != UNREVOKED or member.member_epoch != epoch):
        return
    fence(group, member)


def _leave(call: Call, req: HeartbeatIn) -> Any:
    group = find_group(call.state, req.group_id, "consumer", create=False)
    modern = group.modern
    assert modern is not None
    if req.instance_id is None:
        found = modern.members.get(req.member_id)
        if found is None:
            raise GroupRefused(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {req.member_id} is not a member of group {group.group_id}.",
            )
        member = found
    else:
        holder = modern.static.get(req.instance_id)
        if holder is None:
            raise GroupRefused(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown."
            )
        if holder != req.member_id:
            raise GroupRefused(ErrorCode.FENCED_INSTANCE_ID)
        member = modern.members[holder]
        if req.member_epoch == STATIC_LEAVE_EPOCH:
            # it will be back: it keeps its place and partitions until its session expires
            modern.release(member)
            member.previous_member_epoch = member.member_epoch
            member.member_epoch, member.pending_revocation = STATIC_LEAVE_EPOCH, {}
            modern.own(member)
            refresh_state(group)
            return call.respond(
                error_code=ErrorCode.NONE,
                member_id=member.member_id,
                member_epoch=STATIC_LEAVE_EPOCH,
                heartbeat_interval_ms=0,
                assignment=None,
            )
    fence(group, member)
    return call.respond(
        error_code=ErrorCode.NONE,
        member_id=req.member_id,
        member_epoch=req.member_epoch,
        heartbeat_interval_ms=0,
        assignment=None,
    )


def _assignment(call: Call, partitions: Partitions) -> Any:
    cls = call.item(call.response, "assignment")
    item = call.item(cls, "topic_partitions")
    return call.build(
        cls,
        topic_partitions=[
            call.build(item, topic_id=topic_id, partitions=indexes)
            for topic_id, indexes in assignment_items(partitions)
        ],
    )


# --- ConsumerGroupDescribe ------------------------------------------------------------------


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
        if not coordinates(call, group_id):
            code, message = ErrorCode.NOT_COORDINATOR, None
        elif group is None or group.modern is None or group.modern.kind != "consumer":
            code = ErrorCode.GROUP_ID_NOT_FOUND
            message = (
                f"Group {group_id} not found."
                if group is None
                else f"Group {group_id} is not a consumer group."
            )
        else:
            code, message = ErrorCode.NONE, None
        if code != ErrorCode.NONE or group is None or group.modern is None:
            described.append(
                call.build(group_class, error_code=code, error_message=message, group_id=group_id)
            )
            continue
        modern = group.modern
        members = [
            call.build(
                member_class,
                member_id=m.member_id,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=described_assignment(call, assignment_class, m.assigned),
                target_assignment=described_assignment(
                    call, assignment_class, modern.target.get(m.member_id, {})
                ),
                member_type=1,
            )
            for m in modern.members.values()
        ]
        described.append(
            call.build(
                group_class,
                error_code=ErrorCode.NONE,
                error_message=None,
                group_id=group_id,
                group_state=modern.state(),
                group_epoch=modern.group_epoch,
                assignment_epoch=modern.assignment_epoch,
                assignor_name=modern.assignor or _preferred(modern) or DEFAULT_CONSUMER_ASSIGNOR,
                members=members,
                authorized_operations=(
                    GROUP_OPERATIONS if req.include_authorized_operations else NO_OPERATIONS
                ),
            )
        )
    return call.respond(groups=described)


HANDLERS = (
    Handler(ApiKey.CONSUMER_GROUP_HEARTBEAT, (0, 1), heartbeat, NAMES, HeartbeatIn),
    Handler(ApiKey.CONSUMER_GROUP_DESCRIBE, (0, 1), describe, NAMES, DescribeIn),
)
