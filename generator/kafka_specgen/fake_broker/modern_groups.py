"""What consumer groups (KIP-848) and share groups (KIP-932) do alike: finding or creating
the group (converting an empty classic group of the same id, as Kafka does), the topics its
members subscribe to (by name or by regex), the target assignment, removing a member, and
the assignments as the Describe APIs show them."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping
from typing import Any

from .acl import Operation, ResourceType
from .assignors import Assignor
from .call import Call
from .errors import ErrorCode
from .modern import ModernGroup, ModernMember, Partitions
from .state import ClusterState, Group
from .topic_regex import RegexError, TopicRegex, compile_regex

#: Kafka's internal topics, which regex subscriptions never match
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


class GroupRefused(Exception):
    """A heartbeat answered with an error (its code and message)."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code, self.message = code, message


def find_group(state: ClusterState, group_id: str, kind: str, *, create: bool) -> Group:
    """The ``kind`` ("consumer" or "share") group ``group_id``, created if ``create`` (an
    empty classic group of that id becomes one, its offsets kept); GROUP_ID_NOT_FOUND for
    a missing one or one of another type (apache/kafka
    ``GroupMetadataManager.getOrMaybeCreateConsumerGroup`` and its share twin)."""
    group = state.groups.get(group_id)
    if group is None:
        if not create:
            raise GroupRefused(
                ErrorCode.GROUP_ID_NOT_FOUND, f"{kind.capitalize()} group {group_id} not found."
            )
        group = state.group(group_id)
    if group.type != kind:
        if group.type != "classic" or not group.empty or not create:
            end = "." if kind == "share" else ""  # Kafka's two messages differ so
            raise GroupRefused(
                ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a {kind} group{end}"
            )
        group.watchdog.clear()
        group.type, group.modern = kind, ModernGroup(kind)
        group.protocol_type, group.protocol, group.leader = kind, None, None
        refresh_state(group)
    return group


def refresh_state(group: Group) -> None:
    if group.modern is not None:
        group.state = group.modern.state()


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> TopicRegex:
    return compile_regex(pattern)


def validate_regex(pattern: str) -> TopicRegex:
    try:
        return _compiled(pattern)
    except RegexError as exc:
        raise GroupRefused(ErrorCode.INVALID_REGULAR_EXPRESSION, str(exc)) from None


def member_topics(state: ClusterState, member: ModernMember) -> tuple[str, ...]:
    """The topic names a member subscribes to: its names, and those its regex matches that
    it may describe (apache/kafka ``TopicRegexResolver``)."""
    names = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        regex = validate_regex(member.subscribed_topic_regex)
        names.update(
            t
            for t in state.topics
            if t not in INTERNAL_TOPICS and regex.matches(t) and _describable(state, member, t)
        )
    return tuple(sorted(names))


def _describable(state: ClusterState, member: ModernMember, topic: str) -> bool:
    authorizer = state.authorizer
    return authorizer is None or authorizer.authorize(
        member.principal, member.client_host, Operation.DESCRIBE, ResourceType.TOPIC, topic
    )


def subscribed_topics(state: ClusterState, modern: ModernGroup) -> dict[str, tuple[uuid.UUID, int]]:
    """The existing topics some member subscribes to: name -> (topic id, partitions)."""
    out: dict[str, tuple[uuid.UUID, int]] = {}
    for member in modern.members.values():
        for name in member_topics(state, member):
            topic = state.topics.get(name)
            if topic is not None:
                out[name] = (topic.topic_id, len(topic.partitions))
    return dict(sorted(out.items()))


def recompute_target(
    state: ClusterState,
    modern: ModernGroup,
    topics: Mapping[str, tuple[uuid.UUID, int]],
    assignor_name: str,
    assignor: Assignor,
) -> None:
    """The target assignment of every member for the group's epoch."""
    subscriptions = {m: member_topics(state, member) for m, member in modern.members.items()}
    modern.target = assignor(subscriptions, topics, modern.target)
    modern.assignment_epoch = modern.group_epoch
    modern.subscribed = dict(topics)
    modern.assignor = assignor_name


def fence(group: Group, member: ModernMember) -> None:
    """Remove a member (it left, its session expired, or it was fenced): its partitions
    are free, and the group's epoch moves on so the others get a new target."""
    modern = group.modern
    assert modern is not None
    member.stop_timers()
    modern.release(member)
    modern.members.pop(member.member_id, None)
    modern.target.pop(member.member_id, None)
    if member.instance_id is not None and modern.static.get(member.instance_id) == member.member_id:
        del modern.static[member.instance_id]
    modern.group_epoch += 1
    refresh_state(group)


def assignment_items(partitions: Partitions) -> list[tuple[uuid.UUID, list[int]]]:
    return [(t, sorted(p)) for t, p in sorted(partitions.items(), key=lambda i: str(i[0])) if p]


def described_assignment(call: Call, cls: type, partitions: Partitions) -> Any:
    """An ``Assignment`` of the Describe APIs: topic id, name and partitions."""
    item = call.item(cls, "topic_partitions")
    names = {t.topic_id: t.name for t in call.state.topics.values()}
    return call.build(
        cls,
        topic_partitions=[
            call.build(item, topic_id=topic_id, topic_name=names.get(topic_id, ""), partitions=p)
            for topic_id, p in assignment_items(partitions)
        ],
    )
