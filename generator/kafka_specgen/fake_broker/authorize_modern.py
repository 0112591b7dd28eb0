"""The ACL checks of KIP-848 consumer groups and KIP-932 share groups, as apache/kafka
``KafkaApis`` makes them (the table is in ``authorize``).

Two checks happen inside the handlers, on what only they see: the topics a regex
subscription matches are those the member may describe (``modern_groups.member_topics``,
after ``TopicRegexResolver``), and ShareFetch and ShareAcknowledge refuse the partitions of
a share session whose topic the principal may not read (``share_fetch``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .acl import Authorizer, Operation, ResourceType
from .authorize_kit import GROUP_DENIED, TOPIC_DENIED, Answer, allowed, on_group, operations
from .authorize_kit import refused, with_messages
from .call import Call
from .errors import ErrorCode
from .layouts import Level, Path, after, get, make, split

#: Kafka's message for a described group whose assignments name a topic the principal may
#: not describe
HIDDEN_TOPICS = "The group has described topic(s) that the client is not authorized to describe."

DESCRIBED_GROUPS = Level("group_ids", "groups", (("", "group_id"),))
OFFSETS_GROUPS = Level("groups", "groups", (("group_id", "group_id"),))
OFFSETS_TOPICS = Level(
    "groups",
    "groups",
    (("group_id", "group_id"),),
    Level(
        "topics",
        "topics",
        (("topic_name", "topic_name"),),
        Level(
            "partitions",
            "partitions",
            (("", "partition_index"),),
            empty={"start_offset": -1, "lag": -1},
        ),
    ),
)
ALTER_OFFSETS = Level(
    "topics",
    "responses",
    (("topic_name", "topic_name"),),
    Level("partitions", "partitions", (("partition_index", "partition_index"),)),
)
DELETE_OFFSETS = Level("topics", "responses", (("topic_name", "topic_name"),))


def _describable(call: Call, authorizer: Authorizer, names: Sequence[str]) -> bool:
    return all(allowed(call, authorizer, Operation.DESCRIBE, ResourceType.TOPIC, n) for n in names)


def heartbeat(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """ConsumerGroupHeartbeat and ShareGroupHeartbeat: READ on the group, and DESCRIBE on
    every topic the heartbeat subscribes to by name (else TOPIC_AUTHORIZATION_FAILED for
    the whole heartbeat)."""
    if not on_group(call, authorizer, Operation.READ):
        return refused(call, GROUP_DENIED)
    names = get(call, call.request, "subscribed_topic_names")
    if names and not _describable(call, authorizer, names):
        return refused(call, TOPIC_DENIED)
    return answer(call)


def describe_groups(*assignments: str) -> Any:
    """ConsumerGroupDescribe and ShareGroupDescribe: DESCRIBE on each group; a group whose
    members' ``assignments`` name a topic the principal may not describe is refused with
    TOPIC_AUTHORIZATION_FAILED and no members."""

    def check(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
        def decide(path: Path) -> int | None:
            ok = allowed(call, authorizer, Operation.DESCRIBE, ResourceType.GROUP, path[0])
            return None if ok else GROUP_DENIED

        asked = get(call, call.request, "include_authorized_operations")

        def change(response: Any) -> Any:
            groups = []
            for g in response.groups:
                if g.error_code == ErrorCode.NONE and asked:
                    g.authorized_operations = operations(
                        call, authorizer, ResourceType.GROUP, g.group_id
                    )
                named = [
                    tp.topic_name
                    for m in g.members
                    for field in assignments
                    for tp in get(call, getattr(m, field), "topic_partitions")
                    if tp.topic_name  # "" for a topic deleted since
                ]
                if not _describable(call, authorizer, named):
                    g = make(
                        call,
                        type(g),
                        {
                            "group_id": g.group_id,
                            "error_code": TOPIC_DENIED,
                            "error_message": HIDDEN_TOPICS,
                            "members": [],
                        },
                    )
                groups.append(g)
            response.groups = tuple(groups)
            return response

        return after(split(call, DESCRIBED_GROUPS, decide, answer), change)

    return check


def share_session(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """ShareFetch and ShareAcknowledge: READ on the group (a request without one is the
    handler's INVALID_REQUEST); READ on each topic is checked by the handler."""
    group_id = get(call, call.request, "group_id")
    if group_id is None or on_group(call, authorizer, Operation.READ):
        return answer(call)
    return refused(call, GROUP_DENIED)


def describe_share_offsets(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """DESCRIBE on each group, then on each topic asked for (its partitions refused with
    start offset and lag -1); a listing of every topic leaves the others out; a group the
    coordinator refused keeps no topic."""

    def group(path: Path) -> int | None:
        name = get(call, path[0], "group_id")
        ok = allowed(call, authorizer, Operation.DESCRIBE, ResourceType.GROUP, name)
        return None if ok else GROUP_DENIED

    def topic(path: Path) -> int | None:
        name = get(call, path[1], "topic_name")
        ok = allowed(call, authorizer, Operation.DESCRIBE, ResourceType.TOPIC, name)
        return None if ok else TOPIC_DENIED

    asked = get(call, call.request, "groups") or ()
    listing = {get(call, g, "group_id") for g in asked if get(call, g, "topics") is None}

    def change(response: Any) -> Any:
        for g in response.groups:
            if g.error_code != ErrorCode.NONE:
                g.topics = ()
            elif g.group_id in listing:
                g.topics = tuple(
                    t
                    for t in g.topics
                    if allowed(
                        call, authorizer, Operation.DESCRIBE, ResourceType.TOPIC, t.topic_name
                    )
                )
            for t in g.topics:
                for p in t.partitions:
                    with_messages(p)
        return response

    def topics_of(call: Call) -> Any:
        return split(call, OFFSETS_TOPICS, topic, answer)

    return after(split(call, OFFSETS_GROUPS, group, topics_of), change)


def alter_share_offsets(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """READ on the group (else the whole answer) and on each topic; a topic refused here is
    answered with its id, as Kafka's builder does, and a top-level error of the coordinator
    replaces them."""
    if not on_group(call, authorizer, Operation.READ):
        return with_messages(refused(call, GROUP_DENIED))

    def topic(path: Path) -> int | None:
        name = get(call, path[0], "topic_name")
        ok = allowed(call, authorizer, Operation.READ, ResourceType.TOPIC, name)
        return None if ok else TOPIC_DENIED

    def change(response: Any) -> Any:
        if response.error_code != ErrorCode.NONE:
            response.responses = ()
        for t in response.responses:
            known = call.state.topics.get(t.topic_name)
            if known is not None:
                t.topic_id = known.topic_id
        return with_messages(response)

    return after(split(call, ALTER_OFFSETS, topic, answer), change)


def delete_share_offsets(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """DELETE on the group (else the whole answer), READ on each topic; a top-level error
    of the coordinator replaces the topics refused here."""
    if not on_group(call, authorizer, Operation.DELETE):
        return with_messages(refused(call, GROUP_DENIED))

    def topic(path: Path) -> int | None:
        name = get(call, path[0], "topic_name")
        ok = allowed(call, authorizer, Operation.READ, ResourceType.TOPIC, name)
        return None if ok else TOPIC_DENIED

    def change(response: Any) -> Any:
        if response.error_code != ErrorCode.NONE:
            response.responses = ()
        return with_messages(response)

    return after(split(call, DELETE_OFFSETS, topic, answer), change)
