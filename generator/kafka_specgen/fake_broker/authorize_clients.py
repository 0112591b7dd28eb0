"""The ACL checks of the APIs clients use to produce, consume, find coordinators, join
classic groups and run transactions, as apache/kafka ``KafkaApis`` makes them (the table is
in ``authorize``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from .acl import CLUSTER_NAME, Authorizer, Operation, ResourceType
from .authorize_kit import CLUSTER_DENIED, GROUP_DENIED, TOPIC_DENIED, TXN_DENIED, Answer
from .authorize_kit import allowed, cluster_operations, level_of, on_group, on_topics, operations
from .authorize_kit import refused, refusing, topics, transactional
from .call import Call
from .coordinator import TRANSACTION
from .dispatch import with_error
from .errors import ErrorCode
from .layouts import Path, after, get, layout, make, split


def produce(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if not transactional(call, authorizer):
        return split(call, level_of(call), refusing(TXN_DENIED), answer)
    return on_topics(Operation.WRITE)(call, authorizer, answer)


def metadata(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    topics = get(call, call.request, "topics")
    every = topics is None or (call.version == 0 and not topics)
    state = call.state
    denied: list[tuple[str | None, Any]] = []
    if not every:
        auto = get(call, call.request, "allow_auto_topic_creation") and state.auto_create_topics
        may_create = allowed(call, authorizer, Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
        kept = []
        for t in topics:
            name = get(call, t, "name") or None
            if name is None:
                found = state.topic_by_id(get(call, t, "topic_id"))
                name = found.name if found is not None else None
            if name is None:
                kept.append(t)  # an unknown id: UNKNOWN_TOPIC_ID from the handler
            elif not allowed(call, authorizer, Operation.DESCRIBE, ResourceType.TOPIC, name):
                denied.append((get(call, t, "name"), get(call, t, "topic_id")))
            elif (
                name not in state.topics
                and auto
                and not may_create
                and not allowed(call, authorizer, Operation.CREATE, ResourceType.TOPIC, name)
            ):
                denied.append((name, get(call, t, "topic_id")))
            else:
                kept.append(t)
        if denied:
            attr = call.shapes.attr(type(call.request), "topics", call.names)
            call = dataclasses.replace(
                call, request=dataclasses.replace(call.request, **{attr: kept})  # type: ignore[arg-type]
            )
    nothing_left = call.version == 0 and not every and not get(call, call.request, "topics")

    def change(response: Any) -> Any:
        topic_class = call.item(call.response, "topics")
        listed = [] if nothing_left else list(get(call, response, "topics") or ())
        if every:
            listed = [
                t
                for t in listed
                if allowed(call, authorizer, Operation.DESCRIBE, ResourceType.TOPIC, t.name)
            ]
        listed += [
            make(
                call,
                topic_class,
                {"error_code": TOPIC_DENIED, "name": name, "topic_id": topic_id, "partitions": []},
            )
            for name, topic_id in denied
        ]
        if get(call, call.request, "include_topic_authorized_operations"):
            for t in listed:
                if t.error_code == ErrorCode.NONE:
                    t.topic_authorized_operations = authorizer.authorized_operations(
                        call.principal, call.client_host, ResourceType.TOPIC, t.name
                    )
        if get(call, call.request, "include_cluster_authorized_operations"):
            response.cluster_authorized_operations = cluster_operations(call, authorizer)
        response.topics = tuple(listed)
        return response

    return after(answer(call), change)


def describe_cluster(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    def change(response: Any) -> Any:
        if get(call, call.request, "include_cluster_authorized_operations"):
            response.cluster_authorized_operations = cluster_operations(call, authorizer)
        return response

    return after(answer(call), change)


def create_topics(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if allowed(call, authorizer, Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME):
        return answer(call)
    return on_topics(Operation.CREATE)(call, authorizer, answer)


def find_coordinator(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    transaction = get(call, call.request, "key_type") == TRANSACTION
    kind = ResourceType.TRANSACTIONAL_ID if transaction else ResourceType.GROUP
    code = TXN_DENIED if transaction else GROUP_DENIED

    def denied(key: str) -> bool:
        return not allowed(call, authorizer, Operation.DESCRIBE, kind, key)

    level = layout(call.api_key, call.version)
    if level is None:
        return refused(call, code) if denied(get(call, call.request, "key")) else answer(call)
    return split(call, level, lambda path: code if denied(path[0]) else None, answer)


def group_read(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup: READ on the group."""
    return (
        answer(call) if on_group(call, authorizer, Operation.READ) else refused(call, GROUP_DENIED)
    )


def offset_commit(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if not on_group(call, authorizer, Operation.READ):
        return split(call, level_of(call), refusing(GROUP_DENIED), answer)
    return on_topics(Operation.READ)(call, authorizer, answer)


def txn_offset_commit(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if not transactional(call, authorizer):
        return split(call, level_of(call), refusing(TXN_DENIED), answer)
    return offset_commit(call, authorizer, answer)


def offset_fetch(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    groups = call.version >= 8

    def fix(holder: Any, group_id: str, listing: bool) -> None:
        if not allowed(call, authorizer, Operation.DESCRIBE, ResourceType.GROUP, group_id):
            if groups or call.version >= 2:
                holder.error_code, holder.topics = GROUP_DENIED, ()
            else:
                with_error(holder, GROUP_DENIED)
            return
        kept = []
        for t in holder.topics:
            if allowed(call, authorizer, Operation.DESCRIBE, ResourceType.TOPIC, t.name):
                kept.append(t)
            elif not listing:
                for p in t.partitions:
                    p.committed_offset, p.error_code = -1, TOPIC_DENIED
                kept.append(t)
        holder.topics = tuple(kept)

    def change(response: Any) -> Any:
        if groups:
            asked = {g.group_id: g.topics is None for g in get(call, call.request, "groups")}
            for g in response.groups:
                fix(g, g.group_id, asked.get(g.group_id, True))
        else:
            listing = get(call, call.request, "topics") is None
            fix(response, get(call, call.request, "group_id"), listing)
        return response

    return after(answer(call), change)


def describe_groups(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    def decide(path: Path) -> int | None:
        ok = allowed(call, authorizer, Operation.DESCRIBE, ResourceType.GROUP, path[0])
        return None if ok else GROUP_DENIED

    def change(response: Any) -> Any:
        if get(call, call.request, "include_authorized_operations"):
            for g in response.groups:
                if g.error_code == ErrorCode.NONE:
                    g.authorized_operations = operations(
                        call, authorizer, ResourceType.GROUP, g.group_id
                    )
        return response

    return after(split(call, level_of(call), decide, answer), change)


def list_groups(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if allowed(call, authorizer, Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return answer(call)

    def change(response: Any) -> Any:
        response.groups = tuple(
            g
            for g in response.groups
            if allowed(call, authorizer, Operation.DESCRIBE, ResourceType.GROUP, g.group_id)
        )
        return response

    return after(answer(call), change)


def init_producer_id(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if get(call, call.request, "transactional_id"):
        return answer(call) if transactional(call, authorizer) else refused(call, TXN_DENIED)
    cluster = (ResourceType.CLUSTER, CLUSTER_NAME)
    if allowed(call, authorizer, Operation.IDEMPOTENT_WRITE, *cluster) or authorizer.allows_any(
        call.principal, call.client_host, Operation.WRITE, ResourceType.TOPIC
    ):
        return answer(call)
    return refused(call, CLUSTER_DENIED)


def add_partitions_to_txn(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    level = level_of(call)
    if not transactional(call, authorizer):
        return split(call, level, refusing(TXN_DENIED), answer)
    decide = topics(call, authorizer, level, Operation.WRITE)
    asked = get(call, call.request, "v3_and_below_topics") or ()
    if all(decide((t,)) is None for t in asked):
        return answer(call)
    # apache/kafka: one refused topic fails the request; the others were not attempted
    return split(
        call, level, lambda path: decide(path) or ErrorCode.OPERATION_NOT_ATTEMPTED, answer
    )


def add_offsets_to_txn(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if not transactional(call, authorizer):
        return refused(call, TXN_DENIED)
    return group_read(call, authorizer, answer)


def end_txn(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    return answer(call) if transactional(call, authorizer) else refused(call, TXN_DENIED)
