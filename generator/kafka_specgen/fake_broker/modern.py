"""What the cluster remembers of KIP-848 consumer groups and KIP-932 share groups, and the
member reconciliation of consumer groups (apache/kafka ``ConsumerGroup``,
``ConsumerGroupMember``, ``CurrentAssignmentBuilder``).

A group has an epoch, bumped whenever its members or their subscriptions change; the target
assignment is computed at once for the new epoch (so the group is never seen Assigning).
Each member then moves towards its target one heartbeat at a time: first it is asked to
revoke the partitions it must give up (UNREVOKED_PARTITIONS, at its old epoch), and only
once it stopped owning them does it get the next epoch; a partition still owned by another
member is given only once that member let it go (UNRELEASED_PARTITIONS).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .clock import Alarm
from .share_state import SharePartition, ShareSession

Partitions = dict[uuid.UUID, set[int]]
"""Topic id -> partition indexes."""

#: member states (apache/kafka ``MemberState``)
STABLE, UNREVOKED, UNRELEASED = "STABLE", "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS"
#: group states as ListGroups and the Describe APIs name them
EMPTY, ASSIGNING, RECONCILING, GROUP_STABLE = "Empty", "Assigning", "Reconciling", "Stable"
#: the member epochs a heartbeat leaves with (dynamic, static member coming back)
LEAVE_EPOCH, STATIC_LEAVE_EPOCH = -1, -2


@dataclass
class ModernMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    principal: str = "User:ANONYMOUS"
    """Who sent its last heartbeat: its regex matches the topics that one may describe."""
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: str = STABLE
    assigned: Partitions = field(default_factory=dict)
    pending_revocation: Partitions = field(default_factory=dict)
    session: Alarm = field(default_factory=lambda: Alarm(None), repr=False)
    rebalance: Alarm = field(default_factory=lambda: Alarm(None), repr=False)

    def reconciled_to(self, epoch: int) -> bool:
        return self.state == STABLE and self.member_epoch == epoch

    def stop_timers(self) -> None:
        self.session.clear()
        self.rebalance.clear()


@dataclass
class ModernGroup:
    """A consumer group's (``kind`` "consumer") or a share group's ("share") members and
    assignments; offsets stay in the ``state.Group`` that holds it."""

    kind: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ModernMember] = field(default_factory=dict)
    static: dict[str, str] = field(default_factory=dict)
    """Instance id -> the member id that holds it."""
    target: dict[str, Partitions] = field(default_factory=dict)
    """Member id -> its target assignment at ``assignment_epoch``."""
    owners: dict[tuple[uuid.UUID, int], int] = field(default_factory=dict)
    """A partition owned (assigned or being revoked) -> the epoch of its owner."""
    subscribed: dict[str, tuple[uuid.UUID, int]] = field(default_factory=dict)
    """The subscribed topics as the target assignment saw them: name -> (id, partitions)."""
    assignor: str = ""
    """The server assignor of the last target assignment."""
    shares: dict[tuple[uuid.UUID, int], SharePartition] = field(default_factory=dict)
    """A share group's partitions (topic id, index) -> the records it hands out."""
    sessions: dict[tuple[int, str], ShareSession] = field(default_factory=dict)
    """A share group's share sessions: (broker node id, member id) -> the session."""

    def state(self) -> str:
        """apache/kafka ``ConsumerGroup.maybeUpdateGroupState``."""
        if not self.members:
            return EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        if self.kind == "share":
            return GROUP_STABLE
        if any(not m.reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return RECONCILING
        return GROUP_STABLE

    def owner_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.owners.get((topic_id, partition), -1)

    def release(self, member: ModernMember) -> None:
        """Forget what ``member`` owns (before it changes, or when it goes)."""
        for partitions in (member.assigned, member.pending_revocation):
            for topic_id, indexes in partitions.items():
                for index in indexes:
                    self.owners.pop((topic_id, index), None)

    def own(self, member: ModernMember) -> None:
        for partitions in (member.assigned, member.pending_revocation):
            for topic_id, indexes in partitions.items():
                for index in indexes:
                    self.owners[(topic_id, index)] = member.member_epoch


def copy_partitions(partitions: Partitions) -> Partitions:
    return {topic_id: set(indexes) for topic_id, indexes in partitions.items() if indexes}


def owns_any(owned: Iterable[tuple[uuid.UUID, Iterable[int]]] | None, of: Partitions) -> bool:
    """Whether the partitions a member says it owns (None: it did not say) include any of
    ``of`` (apache/kafka ``CurrentAssignmentBuilder.ownsRevokedPartitions``)."""
    if owned is None:
        return True
    return any(index in of.get(topic_id, ()) for topic_id, indexes in owned for index in indexes)


def is_subset(owned: Iterable[tuple[uuid.UUID, Iterable[int]]] | None, of: Partitions) -> bool:
    if owned is None:
        return False
    return all(index in of.get(topic_id, ()) for topic_id, indexes in owned for index in indexes)


def reconcile(
    member: ModernMember,
    target_epoch: int,
    target: Partitions,
    owner_epoch: Callable[[uuid.UUID, int], int],
    owned: list[tuple[uuid.UUID, list[int]]] | None,
) -> None:
    """Move ``member`` one step towards ``target`` (in place): apache/kafka
    ``CurrentAssignmentBuilder.build``."""
    if member.state == STABLE:
        if member.member_epoch != target_epoch:
            _next(member, member.member_epoch, target_epoch, target, owner_epoch, owned)
    elif member.state == UNREVOKED:
        if not owns_any(owned, member.pending_revocation):
            _next(member, member.member_epoch + 1, target_epoch, target, owner_epoch, owned)
    elif member.state == UNRELEASED:
        _next(member, member.member_epoch, target_epoch, target, owner_epoch, owned)


def _next(
    member: ModernMember,
    epoch: int,
    target_epoch: int,
    target: Partitions,
    owner_epoch: Callable[[uuid.UUID, int], int],
    owned: list[tuple[uuid.UUID, list[int]]] | None,
) -> None:
    """apache/kafka ``CurrentAssignmentBuilder.computeNextAssignment``."""
    unreleased = False
    assigned: Partitions = {}
    revoking: Partitions = {}
    assigning: Partitions = {}
    for topic_id in set(target) | set(member.assigned):
        wanted = target.get(topic_id, set())
        current = member.assigned.get(topic_id, set())
        kept = current & wanted
        gone = current - kept
        coming = set()
        for index in wanted - kept:
            if owner_epoch(topic_id, index) != -1:
                unreleased = True
            else:
                coming.add(index)
        if kept:
            assigned[topic_id] = kept
        if gone:
            revoking[topic_id] = gone
        if coming:
            assigning[topic_id] = coming
    previous = member.member_epoch
    if revoking and owns_any(owned, revoking):
        member.state, member.assigned, member.pending_revocation = UNREVOKED, assigned, revoking
        _set_epoch(member, epoch, previous)
        return
    for topic_id, indexes in assigning.items():
        assigned.setdefault(topic_id, set()).update(indexes)
    member.state = UNRELEASED if unreleased else STABLE
    member.assigned, member.pending_revocation = assigned, {}
    _set_epoch(member, target_epoch, previous)


def _set_epoch(member: ModernMember, epoch: int, previous: int) -> None:
    """apache/kafka ``ConsumerGroupMember.Builder.updateMemberEpoch``: the previous epoch
    is the one before this update, even when the epoch stays."""
    member.previous_member_epoch = previous
    member.member_epoch = epoch
