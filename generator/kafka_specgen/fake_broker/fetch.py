"""Fetch: records from the partition logs, within the client's limits and the broker's
``fetch_max_bytes``; a Fetch without enough data waits (up to max_wait) on its partitions'
``arrivals`` signals, and counts the bytes there are (cheaply) before it builds its answer."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .leaders import current_leader, node_endpoints
from .log import PartitionLog
from .shapes import Names
from .waiting import Wait

ZERO_UUID = uuid.UUID(int=0)
READ_COMMITTED = 1

NAMES = Names(
    renamed={
        # the request until Kafka 2.6
        "max_wait_ms": ("max_wait",),
        "topic": ("name",),
        "partitions": ("fetch_partitions", "partition_responses"),
        "partition": ("partition_index",),
        "partition_max_bytes": ("max_bytes",),
        # the response until 2.6 (topics, name, aborted) and in 2.7-2.8 (partition_responses,
        # partition, record_set)
        "responses": ("topics",),
        "partition_index": ("partition",),
        "aborted_transactions": ("aborted",),
        "records": ("record_set",),
    },
    absent={"topic_id": ZERO_UUID},
)


class PartitionIn(Protocol):
    partition: int
    fetch_offset: int
    partition_max_bytes: int


class TopicIn(Protocol):
    topic: str
    topic_id: uuid.UUID
    partitions: Sequence[PartitionIn]


class FetchIn(Protocol):
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    topics: Sequence[TopicIn]


@dataclass
class Wanted:
    """One partition of the request: its log, or the error that answers it."""

    topic: TopicIn
    name: str
    partition: PartitionIn
    log: PartitionLog | None
    error: ErrorCode = ErrorCode.NONE


def fetch(call: Call) -> Any:
    req: FetchIn = call.read(FetchIn)
    committed = req.isolation_level == READ_COMMITTED
    wanted = _wanted(call, req)
    min_bytes = req.min_bytes

    def enough() -> bool:
        size = 0
        for w in wanted:
            if w.log is not None:
                upto = w.log.last_stable if committed else w.log.end
                size += w.log.readable(w.partition.fetch_offset, upto, min_bytes - size)
                if size >= min_bytes:
                    return True
        return size >= min_bytes

    def poll(now: float, expired: bool) -> Any:
        if expired or enough():
            return _response(call, req, wanted)
        return None

    if req.max_wait_ms <= 0 or not wanted or any(w.error for w in wanted) or enough():
        return _response(call, req, wanted)
    arrivals = [w.log.arrivals for w in wanted if w.log is not None]
    return Wait(call.now + req.max_wait_ms / 1000.0, poll, arrivals)


def _wanted(call: Call, req: FetchIn) -> list[Wanted]:
    state = call.state
    out = []
    for t in req.topics:
        topic = state.topics.get(t.topic) if t.topic else state.topic_by_id(t.topic_id)
        for p in t.partitions:
            name = topic.name if topic is not None else t.topic
            if topic is None:
                by_id = not t.topic
                code = ErrorCode.UNKNOWN_TOPIC_ID if by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                out.append(Wanted(t, name, p, None, code))
            elif not 0 <= p.partition < len(topic.partitions):
                out.append(Wanted(t, name, p, None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                log = topic.partitions[p.partition]
                if log.leader != call.node.node_id:
                    out.append(Wanted(t, name, p, log, ErrorCode.NOT_LEADER_OR_FOLLOWER))
                elif not log.log_start <= p.fetch_offset <= log.end:
                    out.append(Wanted(t, name, p, log, ErrorCode.OFFSET_OUT_OF_RANGE))
                else:
                    out.append(Wanted(t, name, p, log))
    return out


def _response(call: Call, req: FetchIn, wanted: list[Wanted]) -> Any:
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partitions")
    aborted_class = call.item(partition_class, "aborted_transactions")
    committed = req.isolation_level == READ_COMMITTED
    budget = min(req.max_bytes, call.limits.fetch_max_bytes)
    size = 0
    topics: list[Any] = []
    by_topic: dict[int, list[Any]] = {}
    leaders: set[int] = set()
    for w in wanted:
        partitions = by_topic.get(id(w.topic))
        if partitions is None:
            partitions = by_topic[id(w.topic)] = []
            topics.append((w, partitions))
        log = w.log
        error = w.error
        if log is not None and log.leader != call.node.node_id:
            # not the leader, or no more (the partition moved while the Fetch waited)
            error = ErrorCode.NOT_LEADER_OR_FOLLOWER
        if log is None or error:
            # as Kafka's FetchResponse.partitionResponse: no offsets, and empty records (not
            # null, which librdkafka cannot parse)
            fields: dict[str, Any] = {
                "high_watermark": -1,
                "last_stable_offset": -1,
                "log_start_offset": -1,
                "records": b"",
            }
            if log is not None and error == ErrorCode.OFFSET_OUT_OF_RANGE:  # where the log is
                fields |= {
                    "high_watermark": log.end,
                    "last_stable_offset": log.last_stable,
                    "log_start_offset": log.log_start,
                }
            elif log is not None:  # the leader it moved to
                fields |= current_leader(call, partition_class, log)
                leaders.add(log.leader)
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=w.partition.partition,
                    error_code=error,
                    **fields,
                )
            )
            continue
        upto = log.last_stable if committed else log.end
        limit = min(w.partition.partition_max_bytes, budget - size)
        # the first partition with data gets one batch even over the limits, as Kafka
        # makes progress past a batch larger than them
        data = log.read(w.partition.fetch_offset, limit, upto, at_least_one=size == 0)
        size += len(data)
        aborted = None
        if committed:
            aborted = [
                call.build(aborted_class, producer_id=a.producer_id, first_offset=a.first_offset)
                for a in log.aborted_in(w.partition.fetch_offset, upto)
            ]
        partitions.append(
            call.build(
                partition_class,
                partition_index=w.partition.partition,
                error_code=ErrorCode.NONE,
                high_watermark=log.end,
                last_stable_offset=log.last_stable,
                log_start_offset=log.log_start,
                aborted_transactions=aborted,
                preferred_read_replica=-1,
                records=data,
            )
        )
    responses = [
        call.build(topic_class, topic=w.name, topic_id=w.topic.topic_id, partitions=partitions)
        for w, partitions in topics
    ]
    return call.respond(
        error_code=ErrorCode.NONE,
        session_id=0,
        responses=responses,
        **node_endpoints(call, leaders),
    )


HANDLERS = (Handler(ApiKey.FETCH, (0, 18), fetch, NAMES, FetchIn),)
