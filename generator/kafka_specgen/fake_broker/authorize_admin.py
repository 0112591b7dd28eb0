"""The ACL checks of the admin APIs (configs, partitions, the cluster, producers and
transactions, group deletion), as apache/kafka ``KafkaApis`` and, for the APIs a KRaft
broker forwards, ``ControllerApis`` make them (the table is in ``authorize``).

A request refused as a whole is answered as Kafka's ``getErrorResponse`` answers it: the
top-level error where the API has one, and each topic, partition or resource the request
names listed with the error.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .acl import Authorizer, Operation, ResourceType
from .authorize_kit import CLUSTER_CONFIGS, CLUSTER_DENIED, GROUP_CONFIGS, GROUP_DENIED
from .authorize_kit import TOPIC_CONFIGS, TOPIC_DENIED, TXN_DENIED, Answer, Decide, allowed
from .authorize_kit import level_of, on_cluster, on_group, on_topics, operations, refused, topics
from .authorize_kit import with_messages
from .call import Call
from .errors import ErrorCode
from .layouts import Level, Path, after, get, make, split

_PARTITIONS = Level("partitions", "partitions", (("partition_index", "partition_index"),))
_INDEXES = Level("partition_indexes", "partitions", (("", "partition_index"),))

DELETE_RECORDS = Level(
    "topics",
    "topics",
    (("name", "name"),),
    Level(
        "partitions",
        "partitions",
        (("partition_index", "partition_index"),),
        empty={"low_watermark": -1},
    ),
)
WRITE_TXN_MARKERS = Level(
    "markers",
    "markers",
    (("producer_id", "producer_id"),),
    Level("topics", "topics", (("name", "name"),), _INDEXES),
)
CONFIG_RESOURCES = Level(
    "resources",
    "responses",
    (("resource_type", "resource_type"), ("resource_name", "resource_name")),
)
CREATE_PARTITIONS = Level("topics", "results", (("name", "name"),))
DELETE_GROUPS = Level("groups_names", "results", (("", "group_id"),))
ELECT_LEADERS = Level(
    "topic_partitions",
    "replica_election_results",
    (("topic", "topic"),),
    Level("partitions", "partition_result", (("", "partition_id"),)),
)
ALTER_REASSIGNMENTS = Level("topics", "responses", (("name", "name"),), _PARTITIONS)
LIST_REASSIGNMENTS = Level("topics", "topics", (("name", "name"),), _INDEXES)
OFFSET_DELETE = Level("topics", "topics", (("name", "name"),), _PARTITIONS)
DESCRIBE_PRODUCERS = Level("topics", "topics", (("name", "name"),), _INDEXES)
DESCRIBE_TRANSACTIONS = Level(
    "transactional_ids", "transaction_states", (("", "transactional_id"),)
)


def _configs(call: Call, authorizer: Authorizer, operation: Operation) -> Decide:
    """Each config resource needs ``operation`` on what it is: the cluster for brokers, broker
    loggers and client metrics, else the topic or the group (apache/kafka ``ConfigHelper``,
    ``ControllerApis.authorizeAlterResource``); other types are the handler's to refuse."""

    def decide(path: Path) -> int | None:
        kind, name = get(call, path[0], "resource_type"), get(call, path[0], "resource_name")
        if kind in CLUSTER_CONFIGS:
            return None if on_cluster(call, authorizer, operation) else CLUSTER_DENIED
        if kind == TOPIC_CONFIGS:
            ok = allowed(call, authorizer, operation, ResourceType.TOPIC, name)
            return None if ok else TOPIC_DENIED
        if kind == GROUP_CONFIGS:
            ok = allowed(call, authorizer, operation, ResourceType.GROUP, name)
            return None if ok else GROUP_DENIED
        return None

    return decide


def describe_configs(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    decide = _configs(call, authorizer, Operation.DESCRIBE_CONFIGS)
    return after(split(call, level_of(call), decide, answer), with_messages)


def alter_configs(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """AlterConfigs and IncrementalAlterConfigs: ALTER_CONFIGS on each resource."""
    decide = _configs(call, authorizer, Operation.ALTER_CONFIGS)
    return after(split(call, CONFIG_RESOURCES, decide, answer), with_messages)


def delete_groups(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    def decide(path: Path) -> int | None:
        ok = allowed(call, authorizer, Operation.DELETE, ResourceType.GROUP, path[0])
        return None if ok else GROUP_DENIED

    return split(call, DELETE_GROUPS, decide, answer)


def offset_delete(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """DELETE on the group (else the whole answer), READ on each topic; a top-level error of
    the coordinator replaces the topics refused here, as Kafka's ``OffsetDeleteResponse``
    builder merges them."""
    if not on_group(call, authorizer, Operation.DELETE):
        return refused(call, GROUP_DENIED)
    decide = topics(call, authorizer, OFFSET_DELETE, Operation.READ)
    return after(split(call, OFFSET_DELETE, decide, answer), _failed_alone("topics"))


def _failed_alone(field: str) -> Any:
    """A response change: a top-level error leaves the list ``field`` empty."""

    def change(response: Any) -> Any:
        if response.error_code != ErrorCode.NONE:
            setattr(response, field, ())
        return response

    return change


def alter_replica_log_dirs(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """ALTER on the cluster, else every partition of every directory refused."""
    if on_cluster(call, authorizer, Operation.ALTER):
        return answer(call)
    topic_class = call.item(call.response, "results")
    partition_class = call.item(topic_class, "partitions")
    results = [
        make(
            call,
            topic_class,
            {
                "topic_name": get(call, t, "name"),
                "partitions": [
                    make(
                        call, partition_class, {"partition_index": i, "error_code": CLUSTER_DENIED}
                    )
                    for i in get(call, t, "partitions")
                ],
            },
        )
        for d in get(call, call.request, "dirs")
        for t in get(call, d, "topics")
    ]
    return make(call, call.response, {"results": results})


def describe_transactions(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """DESCRIBE on each transactional id; a transaction's partitions show only for the
    topics the principal may describe."""

    def decide(path: Path) -> int | None:
        ok = allowed(call, authorizer, Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, path[0])
        return None if ok else TXN_DENIED

    def change(response: Any) -> Any:
        for state in response.transaction_states:
            state.topics = tuple(
                t
                for t in state.topics
                if allowed(call, authorizer, Operation.DESCRIBE, ResourceType.TOPIC, t.topic)
            )
        return response

    return after(split(call, DESCRIBE_TRANSACTIONS, decide, answer), change)


def list_transactions(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """Only the transactional ids the principal may describe are listed."""

    def change(response: Any) -> Any:
        response.transaction_states = tuple(
            s
            for s in response.transaction_states
            if allowed(
                call,
                authorizer,
                Operation.DESCRIBE,
                ResourceType.TRANSACTIONAL_ID,
                s.transactional_id,
            )
        )
        return response

    return after(answer(call), change)


def write_txn_markers(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """ALTER (an admin aborting a transaction, KIP-664) or CLUSTER_ACTION (a transaction
    coordinator) on the cluster."""
    if on_cluster(call, authorizer, Operation.ALTER, Operation.CLUSTER_ACTION):
        return answer(call)
    return refused(call, CLUSTER_DENIED, WRITE_TXN_MARKERS)


def describe_topic_partitions(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """DESCRIBE on each topic (apache/kafka ``DescribeTopicPartitionsRequestHandler``): a
    listing of every topic leaves the others out before it pages, named ones get
    TOPIC_AUTHORIZATION_FAILED without their id; each topic's authorized operations."""
    request, state = call.request, call.state
    named = [get(call, t, "name") for t in get(call, request, "topics") or ()]
    cursor = get(call, request, "cursor")
    first = get(call, cursor, "topic_name") if cursor is not None else ""
    names = named or sorted(state.topics)

    def may(name: str) -> bool:
        return allowed(call, authorizer, Operation.DESCRIBE, ResourceType.TOPIC, name)

    denied = [n for n in named if n >= first and not may(n)]
    kept = [n for n in names if may(n)]
    if kept:
        item = call.shapes.item(type(request), "topics", call.names)
        attr = call.shapes.attr(type(request), "topics", call.names)
        assert attr is not None
        asked = [make(call, item, {"name": n}) for n in kept]
        response = answer(
            dataclasses.replace(call, request=dataclasses.replace(request, **{attr: asked}))
        )
    else:
        response = make(call, call.response, {"topics": [], "next_cursor": None})
    topic_class = call.item(call.response, "topics")

    def change(response: Any) -> Any:
        for t in response.topics:
            if t.error_code == ErrorCode.NONE:
                t.topic_authorized_operations = operations(
                    call, authorizer, ResourceType.TOPIC, t.name
                )
        response.topics = (
            *response.topics,
            *(
                make(call, topic_class, {"error_code": TOPIC_DENIED, "name": n, "partitions": []})
                for n in denied
            ),
        )
        return response

    return after(response, change)


def describe_log_dirs(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """DESCRIBE on the cluster, else no directory (and the top-level error from v3)."""
    if on_cluster(call, authorizer, Operation.DESCRIBE):
        return answer(call)
    return refused(call, CLUSTER_DENIED)


def describe_producers(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
    """READ on each topic, its partitions refused with Kafka's message."""
    guard = on_topics(Operation.READ, level=DESCRIBE_PRODUCERS)
    return after(guard(call, authorizer, answer), with_messages)
