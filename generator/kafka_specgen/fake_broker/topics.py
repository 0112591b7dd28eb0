"""CreateTopics (at most ``Limits.max_partitions_per_request`` partitions per request, as
Kafka's controller caps one operation) and DeleteTopics."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names

ZERO_UUID = uuid.UUID(int=0)
CREATE_NAMES = Names(absent={"topic_id": None})  # topic ids came with Kafka 2.8
DELETE_NAMES = Names(absent={"topic_id": ZERO_UUID, "topics": None})  # DeleteTopics v6 (2.8)
#: apache/kafka ReplicationControlManager.validateTotalNumberOfPartitions (Kafka 4.0 on)
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."


class ConfigIn(Protocol):
    name: str
    value: str | None


class CreatableTopicIn(Protocol):
    name: str
    num_partitions: int
    replication_factor: int
    assignments: Sequence[object]
    configs: Sequence[ConfigIn]


class CreateTopicsIn(Protocol):
    topics: Sequence[CreatableTopicIn]
    validate_only: bool


def create_topics(call: Call) -> Any:
    req: CreateTopicsIn = call.read(CreateTopicsIn)
    state = call.state
    result_class = call.item(call.response, "topics")
    default = state.default_partitions
    total = sum(_partitions(t, default) for t in req.topics)
    if total > call.limits.max_partitions_per_request:
        return call.respond(
            topics=[
                call.build(
                    result_class,
                    name=t.name,
                    error_code=ErrorCode.POLICY_VIOLATION,
                    error_message=TOO_MANY_PARTITIONS,
                )
                for t in req.topics
            ]
        )
    results = []
    for t in req.topics:
        count = _partitions(t, default)
        message: str | None
        if t.name in state.topics:
            code, message = ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists."
        elif t.replication_factor < -1 or t.replication_factor == 0:
            code = ErrorCode.INVALID_REPLICATION_FACTOR
            message = "Replication factor must be larger than 0, or -1 to use the default value."
        elif count < 1:
            code = ErrorCode.INVALID_PARTITIONS
            message = "Number of partitions was set to an invalid non-positive value."
        else:
            code, message = ErrorCode.NONE, None
            if not req.validate_only:
                created = state.create_topic(t.name, count)
                created.configs = {c.name: c.value for c in t.configs if c.value is not None}
        topic = state.topics.get(t.name)
        results.append(
            call.build(
                result_class,
                name=t.name,
                error_code=code,
                error_message=message,
                topic_id=topic.topic_id if topic and code == ErrorCode.NONE else ZERO_UUID,
                num_partitions=count if code == ErrorCode.NONE else -1,
                replication_factor=1 if code == ErrorCode.NONE else -1,
            )
        )
    return call.respond(topics=results)


def _partitions(topic: CreatableTopicIn, default: int) -> int:
    """The partitions a topic of the request would have (0 for an invalid count)."""
    if topic.assignments:
        return len(topic.assignments)
    if topic.num_partitions == -1:
        return default
    return max(topic.num_partitions, 0)


class DeleteTopicIn(Protocol):
    name: str | None
    topic_id: uuid.UUID


class DeleteTopicsIn(Protocol):
    topic_names: Sequence[str] | None
    topics: Sequence[DeleteTopicIn] | None


def delete_topics(call: Call) -> Any:
    req: DeleteTopicsIn = call.read(DeleteTopicsIn)
    state = call.state
    result_class = call.item(call.response, "responses")
    wanted: list[tuple[str | None, uuid.UUID]] = [(n, ZERO_UUID) for n in req.topic_names or ()]
    wanted += [(t.name, t.topic_id) for t in req.topics or ()]
    results = []
    for name, topic_id in wanted:
        found = state.topics.get(name) if name else state.topic_by_id(topic_id)
        if found is None:
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if name else ErrorCode.UNKNOWN_TOPIC_ID
            results.append(call.build(result_class, name=name, topic_id=topic_id, error_code=code))
            continue
        state.delete_topic(found.name)
        results.append(
            call.build(
                result_class,
                name=found.name,
                topic_id=found.topic_id,
                error_code=ErrorCode.NONE,
            )
        )
    return call.respond(responses=results)


HANDLERS = (
    Handler(ApiKey.CREATE_TOPICS, (0, 7), create_topics, CREATE_NAMES, CreateTopicsIn),
    Handler(ApiKey.DELETE_TOPICS, (0, 6), delete_topics, DELETE_NAMES, DeleteTopicsIn),
)
