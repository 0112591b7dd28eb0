"""The classic group's state machine, after apache/kafka ``GroupMetadataManager`` and
``ClassicGroup``: members join (dynamic ones with KIP-394's member id round trip, static ones
by ``group.instance.id``, KIP-345), a rebalance completes when every member has rejoined or
its deadline passes, the leader's assignments make the group Stable, and members leave or
time out.

Time acts on a group through its ``watchdog``, a timer on the cluster's loop set for the
next moment something is due (a member's session expiring, the rebalance's deadline); the
JoinGroup requests waiting in a rebalance also wake at its deadlines, and every group request
first ``tick``s its group.
"""

from __future__ import annotations

import uuid
from collections import Counter

from . import clock
from .errors import ErrorCode
from .state import Group, Member

EMPTY, PREPARING, COMPLETING, STABLE = (
    "Empty",
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
)


def new_member_id(client_id: str | None, instance_id: str | None) -> str:
    """apache/kafka ``ClassicGroup.generateMemberId``."""
    return f"{instance_id or client_id or 'member'}-{uuid.uuid4()}"


def validate_member(group: Group, member_id: str, instance_id: str | None) -> ErrorCode:
    """apache/kafka ``ClassicGroup.validateMember``."""
    if instance_id is not None:
        holder = group.static.get(instance_id)
        if holder is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if holder != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
    if member_id not in group.members:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return ErrorCode.NONE


def supports(group: Group, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
    """Whether a member with these protocols may join (apache/kafka
    ``ClassicGroup.supportsProtocols``)."""
    if not group.members:
        return bool(protocol_type) and bool(protocols)
    names = {name for name, _ in protocols}
    return protocol_type == group.protocol_type and bool(names & _common(group))


def _common(group: Group) -> set[str]:
    members = list(group.members.values())
    common = {name for name, _ in members[0].protocols}
    for member in members[1:]:
        common &= {name for name, _ in member.protocols}
    return common


def select_protocol(group: Group) -> str | None:
    """Each member votes for the first of its protocols that all support; most votes win
    (apache/kafka ``ClassicGroup.selectProtocol``)."""
    common = _common(group)
    if not common:
        return None
    votes: Counter[str] = Counter()
    for member in group.members.values():
        votes[next(name for name, _ in member.protocols if name in common)] += 1
    return max(votes, key=lambda name: votes[name])


def tick(group: Group, now: float) -> None:
    """Let time act: members whose session expired leave a Stable group, and a rebalance
    whose time has come completes."""
    if group.type != "classic":
        return
    if group.state == STABLE:
        for member in list(group.members.values()):
            if now >= member.last_seen + member.session_timeout_ms / 1000.0:
                remove_member(group, member.member_id, now)
    maybe_complete_join(group, now)
    watch(group)


def watch(group: Group) -> None:
    """Set the group's watchdog for the next moment time acts on it (or keep an earlier
    one, which sets it again when it fires)."""
    when = _next_deadline(group)
    if when is None:
        group.watchdog.clear()
    elif not group.watchdog.pending or when < group.watchdog.when:
        group.watchdog.set(when, lambda: _wake(group))


def _next_deadline(group: Group) -> float | None:
    if group.state == STABLE and group.members:
        return min(m.last_seen + m.session_timeout_ms / 1000.0 for m in group.members.values())
    if group.state == PREPARING:
        return next_wake(group)
    return None


def _wake(group: Group) -> None:
    tick(group, clock.now())
    group.changed.fire()


def prepare_rebalance(group: Group, now: float) -> None:
    """Start a rebalance: every member has to join again."""
    if group.state == EMPTY:
        group.initial_delay_until = now + group.initial_delay
    else:
        group.initial_delay_until = 0.0
    if group.state == COMPLETING:
        for member in group.members.values():
            member.assignment = b""
    group.state = PREPARING
    timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
    group.join_deadline = now + timeout / 1000.0
    for member in group.members.values():
        member.joined = False
    group.changed.fire()
    watch(group)


def next_wake(group: Group) -> float:
    """When a JoinGroup waiting in the rebalance under way should look again."""
    if all(m.joined for m in group.members.values()) and group.initial_delay_until:
        return min(group.initial_delay_until, group.join_deadline)
    return group.join_deadline


def maybe_complete_join(group: Group, now: float) -> bool:
    if group.state != PREPARING:
        return False
    everyone = all(m.joined for m in group.members.values())
    if (everyone and now >= group.initial_delay_until) or now >= group.join_deadline:
        complete_join(group)
        return True
    return False


def complete_join(group: Group) -> None:
    """The members that did not rejoin are dropped; a new generation starts, with a
    protocol and a leader (the old one if it stayed)."""
    for member in [m for m in group.members.values() if not m.joined]:
        _drop(group, member)
    group.generation += 1
    group.initial_delay_until = 0.0
    if not group.members:
        group.state, group.protocol, group.leader = EMPTY, None, None
    else:
        group.protocol = select_protocol(group)
        if group.leader not in group.members:
            group.leader = next(iter(group.members))
        group.state = COMPLETING
        for member in group.members.values():
            member.assignment = b""
    group.changed.fire()


def add_member(group: Group, member: Member, now: float) -> None:
    """A new member joins: a rebalance starts, or the one under way takes it in."""
    group.members[member.member_id] = member
    if member.group_instance_id is not None:
        group.static[member.group_instance_id] = member.member_id
    group.pending.discard(member.member_id)
    rejoin(group, member, now)


def rejoin(group: Group, member: Member, now: float) -> None:
    """A member (new, or with changed metadata, or the leader) joins the next generation."""
    if group.state != PREPARING:
        prepare_rebalance(group, now)
    elif group.initial_delay_until:  # a new group waits a little longer for each newcomer
        group.initial_delay_until = min(now + group.initial_delay, group.join_deadline)
    member.joined = True
    group.changed.fire()
    maybe_complete_join(group, now)


def replace_static(group: Group, instance_id: str, new_id: str) -> Member:
    """A static member that comes back with no member id takes over its old one's place
    (apache/kafka ``ClassicGroup.replaceStaticMember``); the old id is fenced."""
    old_id = group.static[instance_id]
    member = group.members.pop(old_id)
    member.member_id = new_id
    group.members[new_id] = member
    group.static[instance_id] = new_id
    group.fenced[old_id] = instance_id
    if group.leader == old_id:
        group.leader = new_id
    group.changed.fire()
    return member


def remove_member(group: Group, member_id: str, now: float) -> None:
    """A member leaves (LeaveGroup, or its session expired)."""
    member = group.members.get(member_id)
    if member is None:
        group.pending.discard(member_id)
        return
    _drop(group, member)
    if not group.members:
        if group.state != EMPTY:
            group.generation += 1
        group.state, group.protocol, group.leader = EMPTY, None, None
        group.changed.fire()
    elif group.state in (STABLE, COMPLETING):
        prepare_rebalance(group, now)
    else:
        group.changed.fire()
        maybe_complete_join(group, now)


def _drop(group: Group, member: Member) -> None:
    del group.members[member.member_id]
    if member.group_instance_id is not None:
        if group.static.get(member.group_instance_id) == member.member_id:
            del group.static[member.group_instance_id]
