"""The classic consumer group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
DescribeGroups and ListGroups (the state machine is ``rebalance``'s).

A JoinGroup in a rebalance waits (on its group's ``changed`` signal and the rebalance's
deadlines) until the rebalance completes; the leader gets the members' metadata and hands
the assignments back in SyncGroup, where the others wait for it. Each broker answers for
the groups it coordinates (NOT_COORDINATOR for the others).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from . import rebalance
from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .rebalance import COMPLETING, EMPTY, PREPARING, STABLE
from .shapes import Names
from .state import Group, Member
from .waiting import Wait

#: JoinGroup v4 hands out member ids before joining (KIP-394)
MEMBER_ID_REQUIRED_VERSION = 4
#: JoinGroup v9 tells a static leader that rejoined to skip the assignment (KIP-814)
SKIP_ASSIGNMENT_VERSION = 9
#: LeaveGroup v3 names several members, each with its own outcome (KIP-345)
BATCHED_LEAVE_VERSION = 3
#: DescribeGroups v6 answers GROUP_ID_NOT_FOUND for an unknown group (KIP-1043)
GROUP_NOT_FOUND_VERSION = 6

NAMES = Names(
    absent={
        "reason": None,  # Kafka 3.2
        "protocol_type": None,  # SyncGroup's and JoinGroup response's, Kafka 2.5
        "protocol_name": None,
        "skip_assignment": False,  # Kafka 3.2
        "states_filter": None,  # Kafka 2.6
        "types_filter": None,  # Kafka 3.8
        "group_state": "",
        "group_type": "",
        "error_message": None,  # DescribeGroups v6, Kafka 4.0
    }
)


def coordinates(call: Call, group_id: str) -> bool:
    return call.state.coordinator(group_id).node_id == call.node.node_id


# --- JoinGroup ------------------------------------------------------------------------------


class ProtocolIn(Protocol):
    name: str
    metadata: bytes


class JoinGroupIn(Protocol):
    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: Sequence[ProtocolIn]


def join_group(call: Call) -> Any:
    req: JoinGroupIn = call.read(JoinGroupIn)
    state, now = call.state, call.now
    if not coordinates(call, req.group_id):
        return _join_error(call, ErrorCode.NOT_COORDINATOR, req.member_id)
    if req.member_id and req.group_id not in state.groups:
        return _join_error(call, ErrorCode.UNKNOWN_MEMBER_ID, req.member_id)
    group = state.group(req.group_id)
    if group.type != "classic":
        if not group.empty:  # Kafka converts a live consumer group only by its migration policy
            return _join_error(call, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, req.member_id)
        group.type, group.modern, group.state = "classic", None, EMPTY  # as Kafka converts one
    rebalance.tick(group, now)
    protocols = [(p.name, p.metadata) for p in req.protocols]
    if not rebalance.supports(group, req.protocol_type, protocols):
        return _join_error(call, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, req.member_id)
    # a v0 request has no rebalance timeout: the session timeout is both
    timeout = req.rebalance_timeout_ms if call.version >= 1 else req.session_timeout_ms
    instance = req.group_instance_id
    member_id = req.member_id
    if not member_id:
        member_id = rebalance.new_member_id(call.client_id, instance)
        if instance is not None and instance in group.static:
            return _static_rejoin(call, group, req, member_id, protocols, timeout)
        if instance is None and call.version >= MEMBER_ID_REQUIRED_VERSION:
            group.pending.add(member_id)
            return _join_error(call, ErrorCode.MEMBER_ID_REQUIRED, member_id)
    elif member_id not in group.pending:
        code = rebalance.validate_member(group, member_id, instance)
        if code != ErrorCode.NONE:
            return _join_error(call, code, member_id)
    member = group.members.get(member_id)
    if member is None:
        member = Member(
            member_id,
            call.client_id or "",
            call.client_host,
            protocols,
            req.session_timeout_ms,
            timeout,
            instance,
            last_seen=now,
        )
        group.protocol_type = req.protocol_type
        rebalance.add_member(group, member, now)
    else:
        member.last_seen = now
        changed = member.protocols != protocols
        member.protocols, member.session_timeout_ms = protocols, req.session_timeout_ms
        member.rebalance_timeout_ms = timeout
        if (
            group.state == PREPARING
            or changed
            or (group.state == STABLE and member_id == group.leader)
        ):
            rebalance.rejoin(group, member, now)
        # else: CompletingRebalance, or a follower of a Stable group, with the same
        # metadata: the current generation's answer at once
    return _joined(call, group, member_id)


def _static_rejoin(
    call: Call,
    group: Group,
    req: JoinGroupIn,
    member_id: str,
    protocols: list[tuple[str, bytes]],
    timeout: int,
) -> Any:
    """A static member back with no member id: it takes over its old id's place, without a
    rebalance when the group is Stable and its protocols keep the group's (KIP-345)."""
    assert req.group_instance_id is not None
    old_leader = group.leader
    member = rebalance.replace_static(group, req.group_instance_id, member_id)
    member.protocols, member.session_timeout_ms = protocols, req.session_timeout_ms
    member.rebalance_timeout_ms, member.last_seen = timeout, call.now
    if group.state == STABLE and rebalance.select_protocol(group) == group.protocol:
        leader = member_id == group.leader
        skip = call.version >= SKIP_ASSIGNMENT_VERSION
        return call.respond(
            error_code=ErrorCode.NONE,
            generation_id=group.generation,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol,
            # before v9 a rejoined static leader is told the old leader id, so that it
            # does not assign again (apache/kafka updateStaticMemberThenRebalanceOrCompleteJoin)
            leader=(group.leader if skip else old_leader) or "",
            skip_assignment=leader and skip,
            member_id=member_id,
            members=_members(call, group) if leader and skip else [],
        )
    if group.state == PREPARING:
        rebalance.rejoin(group, member, call.now)
    else:
        rebalance.prepare_rebalance(group, call.now)
        member.joined = True
    return _joined(call, group, member_id)


def _joined(call: Call, group: Group, member_id: str) -> Any:
    """The JoinGroup answer once the rebalance under way completes."""

    def poll(now: float, expired: bool) -> Any:
        if member_id in group.fenced:
            return _join_error(call, ErrorCode.FENCED_INSTANCE_ID, member_id)
        if group.state == PREPARING and not rebalance.maybe_complete_join(group, now):
            return Wait(rebalance.next_wake(group), poll, (group.changed,))
        if member_id not in group.members:
            return _join_error(call, ErrorCode.UNKNOWN_MEMBER_ID, member_id)
        leader = member_id == group.leader
        return call.respond(
            error_code=ErrorCode.NONE,
            generation_id=group.generation,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol,
            leader=group.leader or "",
            skip_assignment=False,
            member_id=member_id,
            members=_members(call, group) if leader else [],
        )

    return poll(call.now, False)


def _members(call: Call, group: Group) -> list[Any]:
    item = call.item(call.response, "members")
    return [
        call.build(
            item,
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            metadata=dict(m.protocols).get(group.protocol or "", b""),
        )
        for m in group.members.values()
    ]


def _join_error(call: Call, code: ErrorCode, member_id: str) -> Any:
    return call.respond(error_code=code, generation_id=-1, member_id=member_id)


# --- SyncGroup, Heartbeat, LeaveGroup -------------------------------------------------------


class AssignmentIn(Protocol):
    member_id: str
    assignment: bytes


class SyncGroupIn(Protocol):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    assignments: Sequence[AssignmentIn]


def sync_group(call: Call) -> Any:
    req: SyncGroupIn = call.read(SyncGroupIn)
    group = call.state.groups.get(req.group_id)
    if not coordinates(call, req.group_id):
        return call.respond(error_code=ErrorCode.NOT_COORDINATOR)
    if group is None:
        return call.respond(error_code=ErrorCode.UNKNOWN_MEMBER_ID)
    rebalance.tick(group, call.now)
    code = rebalance.validate_member(group, req.member_id, req.group_instance_id)
    if code == ErrorCode.NONE and req.generation_id != group.generation:
        code = ErrorCode.ILLEGAL_GENERATION
    if code == ErrorCode.NONE and (
        _inconsistent(req.protocol_type, group.protocol_type)
        or _inconsistent(req.protocol_name, group.protocol)
    ):
        code = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    if code == ErrorCode.NONE and group.state == PREPARING:
        code = ErrorCode.REBALANCE_IN_PROGRESS
    if code != ErrorCode.NONE:
        return call.respond(error_code=code)
    member = group.members[req.member_id]
    member.last_seen = call.now
    if req.member_id == group.leader and group.state == COMPLETING:
        given = {a.member_id: a.assignment for a in req.assignments}
        for m in group.members.values():
            m.assignment = given.get(m.member_id, b"")
        group.state = STABLE
        group.changed.fire()
        rebalance.watch(group)  # the members' sessions count from now on
    generation, member_id = group.generation, req.member_id

    def poll(now: float, expired: bool) -> Any:
        if member_id in group.fenced:
            return call.respond(error_code=ErrorCode.FENCED_INSTANCE_ID)
        synced = group.members.get(member_id)
        if synced is None:
            return call.respond(error_code=ErrorCode.UNKNOWN_MEMBER_ID)
        if group.state == STABLE and group.generation == generation:
            return call.respond(
                error_code=ErrorCode.NONE,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol,
                assignment=synced.assignment,
            )
        if group.state == COMPLETING and group.generation == generation and not expired:
            return None
        return call.respond(error_code=ErrorCode.REBALANCE_IN_PROGRESS)

    answer = poll(call.now, False)
    if answer is not None:
        return answer
    deadline = call.now + member.rebalance_timeout_ms / 1000.0
    return Wait(deadline, poll, (group.changed,))


def _inconsistent(asked: str | None, known: str | None) -> bool:
    return asked is not None and known is not None and asked != known


class HeartbeatIn(Protocol):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None


def heartbeat(call: Call) -> Any:
    req: HeartbeatIn = call.read(HeartbeatIn)
    if not coordinates(call, req.group_id):
        return call.respond(error_code=ErrorCode.NOT_COORDINATOR)
    group = call.state.groups.get(req.group_id)
    if group is None:
        return call.respond(error_code=ErrorCode.UNKNOWN_MEMBER_ID)
    rebalance.tick(group, call.now)
    code = rebalance.validate_member(group, req.member_id, req.group_instance_id)
    if code == ErrorCode.NONE and req.generation_id != group.generation:
        code = ErrorCode.ILLEGAL_GENERATION
    if code == ErrorCode.NONE:
        group.members[req.member_id].last_seen = call.now
        if group.state == EMPTY:
            code = ErrorCode.UNKNOWN_MEMBER_ID
        elif group.state == PREPARING:
            code = ErrorCode.REBALANCE_IN_PROGRESS
    return call.respond(error_code=code)


class LeavingIn(Protocol):
    member_id: str
    group_instance_id: str | None


class LeaveGroupIn(Protocol):
    group_id: str
    member_id: str
    members: Sequence[LeavingIn]


def leave_group(call: Call) -> Any:
    req: LeaveGroupIn = call.read(LeaveGroupIn)
    if not coordinates(call, req.group_id):
        return call.respond(error_code=ErrorCode.NOT_COORDINATOR)
    group = call.state.groups.get(req.group_id)
    leaving: list[tuple[str, str | None]] = [
        (m.member_id, m.group_instance_id) for m in req.members
    ]
    if req.member_id:  # v0-v2: one member
        leaving.append((req.member_id, None))
    item = call.item(call.response, "members")
    results = []
    for member_id, instance in leaving:
        code = ErrorCode.UNKNOWN_MEMBER_ID
        if group is not None:
            code = _leave(group, member_id, instance, call.now)
        results.append(
            call.build(item, member_id=member_id, group_instance_id=instance, error_code=code)
        )
    # v0-v2 carry their one member's outcome at the top; v3+ per member
    top = results[0].error_code if results and call.version < BATCHED_LEAVE_VERSION else 0
    return call.respond(error_code=top, members=results)


def _leave(group: Group, member_id: str, instance: str | None, now: float) -> ErrorCode:
    """apache/kafka ``GroupMetadataManager.classicGroupLeaveToClassicGroup``: a static
    member may be removed by its instance id alone (an admin's LeaveGroup)."""
    if instance is not None:
        holder = group.static.get(instance)
        if holder is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_id and member_id != holder:
            return ErrorCode.FENCED_INSTANCE_ID
        member_id = holder
    elif member_id in group.pending:
        group.pending.discard(member_id)
        return ErrorCode.NONE
    elif member_id not in group.members:
        return ErrorCode.UNKNOWN_MEMBER_ID
    rebalance.remove_member(group, member_id, now)
    return ErrorCode.NONE


# --- DescribeGroups and ListGroups ----------------------------------------------------------


class DescribeGroupsIn(Protocol):
    groups: Sequence[str]


def describe_groups(call: Call) -> Any:
    req: DescribeGroupsIn = call.read(DescribeGroupsIn)
    group_class = call.item(call.response, "groups")
    member_class = call.item(group_class, "members")
    described = []
    for group_id in req.groups:
        group = call.state.groups.get(group_id)
        if group is not None:
            rebalance.tick(group, call.now)
        if not coordinates(call, group_id):
            described.append(
                call.build(group_class, error_code=ErrorCode.NOT_COORDINATOR, group_id=group_id)
            )
        elif group is None or group.type != "classic":
            # a consumer or share group is described by its own API (ConsumerGroupDescribe)
            missing = call.version >= GROUP_NOT_FOUND_VERSION
            why = "not found" if group is None else "is not a classic group"
            described.append(
                call.build(
                    group_class,
                    error_code=ErrorCode.GROUP_ID_NOT_FOUND if missing else ErrorCode.NONE,
                    error_message=f"Group {group_id} {why}." if missing else None,
                    group_id=group_id,
                    group_state="Dead",
                    protocol_type="",
                    protocol_data="",
                )
            )
        else:
            members = [
                call.build(
                    member_class,
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=dict(m.protocols).get(group.protocol or "", b""),
                    member_assignment=m.assignment,
                )
                for m in group.members.values()
            ]
            described.append(
                call.build(
                    group_class,
                    error_code=ErrorCode.NONE,
                    group_id=group_id,
                    group_state=group.state,
                    protocol_type=group.protocol_type,
                    protocol_data=group.protocol or "",
                    members=members,
                )
            )
    return call.respond(groups=described)


class ListGroupsIn(Protocol):
    states_filter: Sequence[str] | None
    types_filter: Sequence[str] | None


def list_groups(call: Call) -> Any:
    """The groups this broker coordinates (each broker answers for its own)."""
    req: ListGroupsIn = call.read(ListGroupsIn)
    item = call.item(call.response, "groups")
    states = {s.lower() for s in req.states_filter or ()}
    types = {t.lower() for t in req.types_filter or ()}
    listed = []
    for group in call.state.groups.values():
        if not coordinates(call, group.group_id):
            continue
        rebalance.tick(group, call.now)
        if (states and group.state.lower() not in states) or (types and group.type not in types):
            continue
        listed.append(
            call.build(
                item,
                group_id=group.group_id,
                protocol_type=group.protocol_type if group.type == "classic" else group.type,
                group_state=group.state,
                group_type=group.type,
            )
        )
    return call.respond(error_code=ErrorCode.NONE, groups=listed)


HANDLERS = (
    Handler(ApiKey.JOIN_GROUP, (0, 9), join_group, NAMES, JoinGroupIn),
    Handler(ApiKey.SYNC_GROUP, (0, 5), sync_group, NAMES, SyncGroupIn),
    Handler(ApiKey.HEARTBEAT, (0, 4), heartbeat, NAMES, HeartbeatIn),
    Handler(ApiKey.LEAVE_GROUP, (0, 5), leave_group, NAMES, LeaveGroupIn),
    Handler(ApiKey.DESCRIBE_GROUPS, (0, 6), describe_groups, NAMES, DescribeGroupsIn),
    Handler(ApiKey.LIST_GROUPS, (0, 5), list_groups, NAMES, ListGroupsIn),
)
