"""The classic consumer group protocol: FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups and ListGroups.

A rebalance as Kafka runs it, simplified: a JoinGroup opens (or joins) a rebalance; the
answers wait until every member known before it has joined again, or until the rebalance
timeout drops the missing ones. The first member is the leader, who gets the members'
metadata and hands the assignments back in SyncGroup; the others' SyncGroup waits for it.
"""

from __future__ import annotations

import uuid
from typing import Any

from .call import Call, Wait, field_of
from .state import (
    ILLEGAL_GENERATION,
    INCONSISTENT_GROUP_PROTOCOL,
    MEMBER_ID_REQUIRED,
    NONE,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    Group,
    Member,
)

#: A JoinGroup that starts a rebalance waits this long for other members to come.
JOIN_WINDOW = 0.1
GROUP_KEY, TXN_KEY = 0, 1


def find_coordinator(call: Call) -> Any:
    req = call.request
    keys = list(getattr(req, "coordinator_keys", ()) or ()) or [getattr(req, "key", "")]
    found = [call.state.coordinator(key) for key in keys]
    if call.shapes.has(call.response, "coordinators") and call.version >= 4:
        item = call.item(call.response, "coordinators")
        return call.reply(
            coordinators=[
                call.make(
                    item, key=key, node_id=b.node_id, host=b.host, port=b.port, error_code=NONE
                )
                for key, b in zip(keys, found)
            ]
        )
    b = found[0]
    return call.reply(error_code=NONE, node_id=b.node_id, host=b.host, port=b.port)


def _coordinated(call: Call, group_id: str) -> bool:
    return call.state.coordinator(group_id).node_id == call.node.node_id


def join_group(call: Call) -> Any:
    req, state = call.request, call.state
    with state.lock:
        if not _coordinated(call, req.group_id):
            return call.reply(error_code=NOT_COORDINATOR, generation_id=-1)
        group = state.group(req.group_id)
        protocols = [(p.name, p.metadata) for p in req.protocols]
        if group.members and req.protocol_type != group.protocol_type:
            return call.reply(error_code=INCONSISTENT_GROUP_PROTOCOL, generation_id=-1)
        member_id = req.member_id
        if not member_id:
            member_id = f"{call.client_id or 'member'}-{uuid.uuid4()}"
            if call.version >= 4:  # KIP-394: the member comes back with its id
                group.pending.add(member_id)
                return call.reply(
                    error_code=MEMBER_ID_REQUIRED, generation_id=-1, member_id=member_id
                )
        elif member_id not in group.members and member_id not in group.pending:
            return call.reply(error_code=UNKNOWN_MEMBER_ID, generation_id=-1, member_id=member_id)
        member = group.members.get(member_id)
        if member is None:
            member = Member(
                member_id,
                call.client_id or "",
                call.client_host,
                protocols,
                req.session_timeout_ms,
                getattr(req, "rebalance_timeout_ms", req.session_timeout_ms),
                getattr(req, "group_instance_id", None),
            )
            group.members[member_id] = member
            group.pending.discard(member_id)
        member.protocols, member.last_seen = protocols, call.now
        group.protocol_type = req.protocol_type
        if group.state != "PreparingRebalance":
            group.state, group.rebalance_started = "PreparingRebalance", call.now
            for other in group.members.values():
                other.joined_generation = -1
        member.joined_generation = group.generation + 1
        timeout = max(m.rebalance_timeout_ms for m in group.members.values()) / 1000.0
    deadline = group.rebalance_started + timeout

    def poll(now: float, expired: bool) -> Any:
        with state.lock:
            if group.state == "PreparingRebalance":
                waiting = [m for m in group.members.values() if m.joined_generation == -1]
                if waiting and not expired and now < group.rebalance_started + timeout:
                    return None
                if not waiting and not expired and now < group.rebalance_started + JOIN_WINDOW:
                    return None  # let the others of a starting group come
                for gone in waiting:
                    del group.members[gone.member_id]
                complete_join(group)
            if member_id not in group.members:
                return call.reply(error_code=UNKNOWN_MEMBER_ID, generation_id=-1)
            return join_response(call, group, member_id)

    return poll(call.now, False) or Wait(deadline, poll)


def complete_join(group: Group) -> None:
    group.generation += 1
    group.state = "CompletingRebalance"
    members = list(group.members.values())
    group.leader = members[0].member_id
    common = [
        name for name, _ in members[0].protocols if all(name in dict(m.protocols) for m in members)
    ]
    group.protocol = common[0] if common else None
    for m in members:
        m.assignment = b""


def join_response(call: Call, group: Group, member_id: str) -> Any:
    item = call.item(call.response, "members")
    members = []
    if member_id == group.leader:
        members = [
            call.make(
                item,
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                metadata=dict(m.protocols).get(group.protocol or "", b""),
            )
            for m in group.members.values()
        ]
    return call.reply(
        error_code=NONE,
        generation_id=group.generation,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol,
        leader=group.leader or "",
        member_id=member_id,
        members=members,
    )


def sync_group(call: Call) -> Any:
    req, state = call.request, call.state
    with state.lock:
        group = state.groups.get(req.group_id)
        code = _member_check(call, group, req.member_id, req.generation_id)
        if code != NONE or group is None:
            return call.reply(error_code=code)
        if req.member_id == group.leader and group.state == "CompletingRebalance":
            given = {a.member_id: a.assignment for a in req.assignments}
            for m in group.members.values():
                m.assignment = given.get(m.member_id, b"")
            group.state = "Stable"

    def poll(now: float, expired: bool) -> Any:
        with state.lock:
            if group.state == "Stable":
                member = group.members.get(req.member_id)
                if member is None:
                    return call.reply(error_code=UNKNOWN_MEMBER_ID)
                return call.reply(
                    error_code=NONE,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol,
                    assignment=member.assignment,
                )
            if expired or group.state != "CompletingRebalance":
                return call.reply(error_code=REBALANCE_IN_PROGRESS)
            return None

    member = group.members[req.member_id]
    return poll(call.now, False) or Wait(call.now + member.session_timeout_ms / 1000.0, poll)


def _member_check(call: Call, group: Group | None, member_id: str, generation: int) -> int:
    if group is None:
        return UNKNOWN_MEMBER_ID
    member = group.members.get(member_id)
    if member is None:
        return UNKNOWN_MEMBER_ID
    member.last_seen = call.now
    if group.state == "PreparingRebalance":
        return REBALANCE_IN_PROGRESS
    if generation != group.generation:
        return ILLEGAL_GENERATION
    return NONE


def heartbeat(call: Call) -> Any:
    req, state = call.request, call.state
    with state.lock:
        group = state.groups.get(req.group_id)
        return call.reply(error_code=_member_check(call, group, req.member_id, req.generation_id))


def leave_group(call: Call) -> Any:
    req, state = call.request, call.state
    leaving = [m.member_id for m in getattr(req, "members", ()) or ()]
    if getattr(req, "member_id", ""):
        leaving.append(req.member_id)
    item = (
        call.item(call.response, "members") if call.shapes.has(call.response, "members") else None
    )
    results = []
    with state.lock:
        group = state.groups.get(req.group_id)
        for member_id in leaving:
            known = group is not None and member_id in group.members
            if group is not None and known:
                del group.members[member_id]
                group.state = "PreparingRebalance" if group.members else "Empty"
                group.rebalance_started = call.now
                for other in group.members.values():
                    other.joined_generation = -1
            if item is not None:
                results.append(
                    call.make(
                        item, member_id=member_id, error_code=NONE if known else UNKNOWN_MEMBER_ID
                    )
                )
    return call.reply(error_code=NONE, members=results)


# --- offsets --------------------------------------------------------------------------------


def offset_commit(call: Call) -> Any:
    req, state = call.request, call.state
    generation = field_of(req, "generation_id_or_member_epoch", "generation_id", default=-1)
    with state.lock:
        group = state.group(req.group_id)
        code = NONE
        if generation >= 0 or req.member_id:
            code = _member_check(call, group, req.member_id, generation)
        return commit_offsets(call, group.offsets if code == NONE else None, code)


def commit_offsets(
    call: Call, into: dict[tuple[str, int], tuple[int, str | None]] | None, code: int
) -> Any:
    """The answer to OffsetCommit and TxnOffsetCommit: the request's offsets stored
    ``into`` (unless None), and ``code`` for every partition."""
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    topics = []
    for t in call.request.topics:
        for p in t.partitions:
            if into is not None:
                into[(t.name, p.partition_index)] = (p.committed_offset, p.committed_metadata)
        partitions = [
            call.make(partition_class, partition_index=p.partition_index, error_code=code)
            for p in t.partitions
        ]
        topics.append(call.make(topic_class, name=t.name, partitions=partitions))
    return call.reply(topics=topics)


def offset_fetch(call: Call) -> Any:
    req, state = call.request, call.state
    if call.version >= 8:
        group_class = call.item(call.response, "groups")
        with state.lock:
            groups = [
                call.make(
                    group_class,
                    group_id=g.group_id,
                    error_code=NONE,
                    topics=_fetched(call, group_class, g.group_id, g.topics),
                )
                for g in req.groups
            ]
        return call.reply(groups=groups)
    with state.lock:
        topics = _fetched(call, call.response, req.group_id, req.topics)
    return call.reply(error_code=NONE, topics=topics)


def _fetched(call: Call, parent: type, group_id: str, wanted: Any) -> list[Any]:
    topic_class = call.item(parent, "topics")
    partition_class = call.item(topic_class, "partitions")
    group = call.state.groups.get(group_id)
    offsets = group.offsets if group else {}
    if wanted is None:  # every committed partition
        names: dict[str, list[int]] = {}
        for topic, index in sorted(offsets):
            names.setdefault(topic, []).append(index)
        pairs = list(names.items())
    else:
        pairs = [(t.name, list(t.partition_indexes)) for t in wanted]
    return [
        call.make(
            topic_class,
            name=name,
            partitions=[
                call.make(
                    partition_class,
                    partition_index=i,
                    committed_offset=offsets.get((name, i), (-1, None))[0],
                    committed_leader_epoch=-1,
                    metadata=offsets.get((name, i), (-1, ""))[1] or "",
                    error_code=NONE,
                )
                for i in indexes
            ],
        )
        for name, indexes in pairs
    ]


def describe_groups(call: Call) -> Any:
    state = call.state
    group_class = call.item(call.response, "groups")
    member_class = call.item(group_class, "members")
    described = []
    with state.lock:
        for group_id in call.request.groups:
            group = state.groups.get(group_id)
            if group is None:
                described.append(
                    call.make(
                        group_class,
                        error_code=NONE,
                        group_id=group_id,
                        group_state="Dead",
                        protocol_type="",
                        protocol_data="",
                    )
                )
                continue
            described.append(
                call.make(
                    group_class,
                    error_code=NONE,
                    group_id=group_id,
                    group_state=group.state,
                    protocol_type=group.protocol_type,
                    protocol_data=group.protocol or "",
                    members=[
                        call.make(
                            member_class,
                            member_id=m.member_id,
                            group_instance_id=m.group_instance_id,
                            client_id=m.client_id,
                            client_host=m.client_host,
                            member_metadata=dict(m.protocols).get(group.protocol or "", b""),
                            member_assignment=m.assignment,
                        )
                        for m in group.members.values()
                    ],
                )
            )
    return call.reply(groups=described)


def list_groups(call: Call) -> Any:
    state = call.state
    item = call.item(call.response, "groups")
    wanted = set(getattr(call.request, "states_filter", ()) or ())
    with state.lock:
        groups = [
            call.make(
                item,
                group_id=g.group_id,
                protocol_type=g.protocol_type,
                group_state=g.state,
                group_type="classic",
            )
            for g in state.groups.values()
            if not wanted or g.state in wanted
        ]
    return call.reply(error_code=NONE, groups=groups)
