"""ACLs enforced on the requests, as Kafka's request handlers check them (apache/kafka
``KafkaApis``, ``AuthHelper``), with Kafka's errors.

``guard`` (``Routes.guard`` when the cluster has an authorizer) runs in front of each
handler. Per API, the resources a request names are checked: the refused ones get their
error, the handler answers the others (``layouts.split``); for an API whose request is one
resource (a group, a transactional id), a refusal is the whole answer.

===========================  ==============================================================
Produce                      WRITE on the transactional id (if any), WRITE on each topic
Fetch                        READ on each topic
ListOffsets                  DESCRIBE on each topic
OffsetForLeaderEpoch         DESCRIBE on each topic
Metadata                     DESCRIBE on each topic: a listing of every topic leaves the
                             others out, named ones get TOPIC_AUTHORIZATION_FAILED; creating
                             one needs CREATE on the cluster or the topic
DescribeCluster              (the cluster's authorized operations need DESCRIBE on it)
CreateTopics / DeleteTopics  CREATE (on the cluster, else each topic) / DELETE on each topic
DescribeConfigs              DESCRIBE_CONFIGS on each topic, or on the cluster for brokers
FindCoordinator              DESCRIBE on the group or transactional id
Join/Sync/Heartbeat/Leave    READ on the group
OffsetCommit                 READ on the group, READ on each topic
OffsetFetch                  DESCRIBE on the group, DESCRIBE on each topic (a listing of
                             every committed offset leaves the others out)
DescribeGroups / ListGroups  DESCRIBE on each group / on the cluster, else only the groups
                             the principal may describe
InitProducerId               WRITE on the transactional id; an idempotent producer needs
                             IDEMPOTENT_WRITE on the cluster or WRITE on some topic
AddPartitionsToTxn           WRITE on the transactional id and on each topic (one refused
                             topic: nothing added, the others OPERATION_NOT_ATTEMPTED)
AddOffsetsToTxn              WRITE on the transactional id, READ on the group
TxnOffsetCommit              WRITE on the transactional id, READ on the group and topics
EndTxn                       WRITE on the transactional id
===========================  ==============================================================

The ACL APIs check the cluster themselves (``acls``); the APIs not listed are not checked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .acl import CLUSTER_NAME, Authorizer, Operation, ResourceType
from ..api_keys import ApiKey
from .call import Call
from .coordinator import TRANSACTION
from .dispatch import with_error
from .errors import ErrorCode
from .layouts import BLANK, Level, Path, after, get, layout, make, split

Answer = Callable[[Call], Any]
Guard = Callable[[Call, Authorizer, Answer], Any]

TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
#: What the ``*_authorized_operations`` fields hold when not asked for
NOT_ASKED = -(2**31)
#: DescribeConfigs' resource types that are the cluster's (a broker, a broker's loggers)
BROKER_RESOURCES = (4, 8)


def guard(call: Call, answer: Answer) -> Any:
    """``answer(call)`` for what the principal may do, Kafka's errors for the rest."""
    authorizer = call.state.authorizer
    rule = GUARDS.get(call.api_key)
    if authorizer is None or rule is None:
        return answer(call)
    return rule(call, authorizer, answer)


def allowed(call: Call, authorizer: Authorizer, operation: int, kind: int, name: str) -> bool:
    return authorizer.authorize(call.principal, call.client_host, operation, kind, name)


def refused(call: Call, code: int) -> Any:
    """The API's answer with ``code`` in every error field (a one-resource request)."""
    return with_error(make(call, call.response, BLANK), code)


def _level(call: Call) -> Level:
    level = layout(call.api_key, call.version)
    assert level is not None, call.api_key
    return level


def topic_name(call: Call, level: Level, item: Any) -> str | None:
    """The topic a request item names (by name, or by id); None for an unknown id."""
    field = level.keys[0][0]
    name = item if field == "" else get(call, item, field)
    if name:
        return str(name)
    found = call.state.topic_by_id(get(call, item, "topic_id"))
    return found.name if found is not None else None


def on_topics(operation: Operation, code: int = TOPIC_DENIED) -> Guard:
    """A guard that checks ``operation`` on each topic of the request."""

    def check(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
        return split(call, _level(call), _topics(call, authorizer, operation, code), answer)

    return check


def _topics(call: Call, authorizer: Authorizer, operation: int, code: int) -> Any:
    level = _level(call)

    def decide(path: Path) -> int | None:
        name = topic_name(call, level, path[0])
        if name is None or allowed(call, authorizer, operation, ResourceType.TOPIC, name):
            return None
        return code

    return decide


def _all(code: int) -> Callable[[Path], int]:
    return lambda path: code


def _transactional(call: Call, authorizer: Authorizer) -> bool:
    """Whether the principal may WRITE on the request's transactional id (if it has one)."""
    txn = get(call, call.request, "transactional_id") or get(
        call, call.request, "v3_and_below_transactional_id"
    )
    return not txn or allowed(call, authorizer, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, txn)


def _group(call: Call, authorizer: Authorizer, operation: int) -> bool:
    group = get(call, call.request, "group_id") or ""
    return allowed(call, authorizer, operation, ResourceType.GROUP, group)


# --- the guards -----------------------------------------------------------------------------


def produce(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if not _transactional(call, authorizer):
        return split(call, _level(call), _all(TXN_DENIED), answer)
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


def cluster_operations(call: Call, authorizer: Authorizer) -> int:
    """The cluster's ``*_authorized_operations``: 0 without DESCRIBE on it (Kafka's
    ``AuthHelper``)."""
    if not allowed(call, authorizer, Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return 0
    return authorizer.authorized_operations(
        call.principal, call.client_host, ResourceType.CLUSTER, CLUSTER_NAME
    )


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


def describe_configs(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    def decide(path: Path) -> int | None:
        kind, name = get(call, path[0], "resource_type"), get(call, path[0], "resource_name")
        if kind in BROKER_RESOURCES:
            cluster = (ResourceType.CLUSTER, CLUSTER_NAME)
            ok = allowed(call, authorizer, Operation.DESCRIBE_CONFIGS, *cluster)
            return None if ok else CLUSTER_DENIED
        ok = allowed(call, authorizer, Operation.DESCRIBE_CONFIGS, ResourceType.TOPIC, name)
        return None if ok else TOPIC_DENIED

    return split(call, _level(call), decide, answer)


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
    return answer(call) if _group(call, authorizer, Operation.READ) else refused(call, GROUP_DENIED)


def offset_commit(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if not _group(call, authorizer, Operation.READ):
        return split(call, _level(call), _all(GROUP_DENIED), answer)
    return on_topics(Operation.READ)(call, authorizer, answer)


def txn_offset_commit(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if not _transactional(call, authorizer):
        return split(call, _level(call), _all(TXN_DENIED), answer)
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
                    g.authorized_operations = authorizer.authorized_operations(
                        call.principal, call.client_host, ResourceType.GROUP, g.group_id
                    )
        return response

    return after(split(call, _level(call), decide, answer), change)


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
        return answer(call) if _transactional(call, authorizer) else refused(call, TXN_DENIED)
    cluster = (ResourceType.CLUSTER, CLUSTER_NAME)
    if allowed(call, authorizer, Operation.IDEMPOTENT_WRITE, *cluster) or authorizer.allows_any(
        call.principal, call.client_host, Operation.WRITE, ResourceType.TOPIC
    ):
        return answer(call)
    return refused(call, CLUSTER_DENIED)


def add_partitions_to_txn(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    level = _level(call)
    if not _transactional(call, authorizer):
        return split(call, level, _all(TXN_DENIED), answer)
    decide = _topics(call, authorizer, Operation.WRITE, TOPIC_DENIED)
    topics = get(call, call.request, "v3_and_below_topics") or ()
    if all(decide((t,)) is None for t in topics):
        return answer(call)
    # apache/kafka: one refused topic fails the request; the others were not attempted
    return split(
        call, level, lambda path: decide(path) or ErrorCode.OPERATION_NOT_ATTEMPTED, answer
    )


def add_offsets_to_txn(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    if not _transactional(call, authorizer):
        return refused(call, TXN_DENIED)
    return group_read(call, authorizer, answer)


def end_txn(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    return answer(call) if _transactional(call, authorizer) else refused(call, TXN_DENIED)


GUARDS: dict[int, Guard] = {
    ApiKey.PRODUCE: produce,
    ApiKey.FETCH: on_topics(Operation.READ),
    ApiKey.LIST_OFFSETS: on_topics(Operation.DESCRIBE),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: on_topics(Operation.DESCRIBE),
    ApiKey.METADATA: metadata,
    ApiKey.DESCRIBE_CLUSTER: describe_cluster,
    ApiKey.CREATE_TOPICS: create_topics,
    ApiKey.DELETE_TOPICS: on_topics(Operation.DELETE),
    ApiKey.DESCRIBE_CONFIGS: describe_configs,
    ApiKey.FIND_COORDINATOR: find_coordinator,
    ApiKey.JOIN_GROUP: group_read,
    ApiKey.SYNC_GROUP: group_read,
    ApiKey.HEARTBEAT: group_read,
    ApiKey.LEAVE_GROUP: group_read,
    ApiKey.OFFSET_COMMIT: offset_commit,
    ApiKey.OFFSET_FETCH: offset_fetch,
    ApiKey.DESCRIBE_GROUPS: describe_groups,
    ApiKey.LIST_GROUPS: list_groups,
    ApiKey.INIT_PRODUCER_ID: init_producer_id,
    ApiKey.ADD_PARTITIONS_TO_TXN: add_partitions_to_txn,
    ApiKey.ADD_OFFSETS_TO_TXN: add_offsets_to_txn,
    ApiKey.TXN_OFFSET_COMMIT: txn_offset_commit,
    ApiKey.END_TXN: end_txn,
}
"""API key -> its check (the APIs without one are not checked)."""
