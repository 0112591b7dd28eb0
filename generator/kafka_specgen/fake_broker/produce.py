"""Produce: batches checked (``batches``), offsets assigned, idempotent producers' sequences
checked as Kafka checks them (apache/kafka ``ProducerAppendInfo``, ``ProducerStateEntry``)."""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..api_keys import ApiKey
from .batches import Budget, Refused, accepted_batches
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .leaders import current_leader, node_endpoints
from .log import BatchMetadata, PartitionLog, ProducerEntry, Topic
from .maintenance import policies
from .txn import implicit_add
from .shapes import Names

#: Produce v13 names topics by id only (KIP-516)
TOPIC_ID_VERSION = 13
ZERO_UUID = uuid.UUID(int=0)
INT32_MAX = 2**31 - 1

NAMES = Names(
    # until Kafka 2.7 the request had topics[].partitions[].partition_index and the
    # response responses[].partitions[].partition_index
    renamed={
        "topic_data": ("topics",),
        "partition_data": ("partitions",),
        "partition_responses": ("partitions",),
        "index": ("partition_index",),
    },
    absent={"topic_id": ZERO_UUID, "transactional_id": None},  # Produce v3 (0.11)
)


class PartitionIn(Protocol):
    index: int
    records: bytes | None


class TopicIn(Protocol):
    name: str
    topic_id: uuid.UUID
    partition_data: Sequence[PartitionIn]


class ProduceIn(Protocol):
    transactional_id: str | None
    acks: int
    topic_data: Sequence[TopicIn]


@dataclass
class Appended:
    code: ErrorCode
    base_offset: int = -1
    message: str | None = None


def produce(call: Call) -> Any:
    req: ProduceIn = call.read(ProduceIn)
    state = call.state
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partition_responses")
    budget = Budget(call.limits.max_decompressed_bytes)
    results = []
    leaders: set[int] = set()
    for t in req.topic_data:
        topic = state.topics.get(t.name) if t.name else state.topic_by_id(t.topic_id)
        partitions = []
        for p in t.partition_data:
            done = append_records(call, topic, p.index, p.records, budget, req.transactional_id)
            log_start = -1
            moved: dict[str, Any] = {}
            if done.code == ErrorCode.NONE and topic is not None:
                log_start = topic.partitions[p.index].log_start
            elif done.code == ErrorCode.NOT_LEADER_OR_FOLLOWER and topic is not None:
                log = topic.partitions[p.index]
                moved = current_leader(call, partition_class, log)
                leaders.add(log.leader)
            partitions.append(
                call.build(
                    partition_class,
                    index=p.index,
                    error_code=done.code,
                    error_message=done.message,
                    base_offset=done.base_offset,
                    log_append_time_ms=-1,
                    log_start_offset=log_start,
                    **moved,
                )
            )
        results.append(
            call.build(
                topic_class, name=t.name, topic_id=t.topic_id, partition_responses=partitions
            )
        )
    if req.acks == 0:
        return None
    return call.respond(responses=results, **node_endpoints(call, leaders))


def append_records(
    call: Call,
    topic: Topic | None,
    index: int,
    data: bytes | None,
    budget: Budget,
    transactional_id: str | None = None,
) -> Appended:
    """Append a partition's records; what the producer is told."""
    if topic is None:
        missing = call.version >= TOPIC_ID_VERSION
        return Appended(
            ErrorCode.UNKNOWN_TOPIC_ID if missing else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        )
    if not 0 <= index < len(topic.partitions):
        return Appended(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    log = topic.partitions[index]
    if log.leader != call.node.node_id:
        return Appended(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    max_message = _int_config(topic.configs, "max.message.bytes", call.limits.message_max_bytes)
    try:
        batches = accepted_batches(call.shapes.records, data, call.version, max_message, budget)
    except Refused as refused:
        return Appended(refused.code, message=refused.message)
    if "compact" in policies(call.state, topic) and _keyless(call, batches, budget):
        # apache/kafka LogValidator.validateKey
        return Appended(
            ErrorCode.INVALID_RECORD,
            message="Compacted topic cannot accept message without key in topic partition "
            f"{topic.name}-{index}.",
        )
    first = -1
    for batch in batches:
        code = implicit_add(call, transactional_id, batch, topic.name, index)
        if code != ErrorCode.NONE:
            return Appended(code)
        done = append_batch(log, batch, call.limits.idempotence_window)
        if done.code != ErrorCode.NONE:
            return done
        first = done.base_offset if first == -1 else first
    return Appended(ErrorCode.NONE, first)


def _keyless(call: Call, batches: list[Any], budget: Budget) -> bool:
    """Whether a record of ``batches`` has no key (or they decompress past the budget)."""
    records = call.shapes.records
    for batch in batches:
        try:
            for record in batch.records(max_decompressed_size=max(budget.left, 0)):
                budget.left -= len(record.key or b"") + len(record.value or b"")
                if record.key is None:
                    return True
        except records.CorruptRecordError:
            return True
    return False


def append_batch(log: PartitionLog, batch: Any, window: int) -> Appended:
    """Append one magic-2 batch. An idempotent producer's retry of one of its last
    ``window`` batches is acknowledged with the offset that batch got; a sequence gap, or
    a new epoch that does not start at 0, is refused; an older epoch is fenced."""
    pid, epoch = batch.producer_id, batch.producer_epoch
    first, last = batch.base_sequence, batch.last_sequence
    idempotent = pid >= 0 and first >= 0
    entry = log.producers.get(pid) if idempotent else None
    if entry is not None:
        if epoch < entry.epoch:
            return Appended(ErrorCode.INVALID_PRODUCER_EPOCH)
        duplicate = entry.duplicate_of(epoch, first, last)
        if duplicate is not None:
            return Appended(ErrorCode.NONE, duplicate.base_offset)
        if epoch != entry.epoch:
            if first != 0:
                return Appended(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
        elif not _in_sequence(entry.last_sequence, first):
            return Appended(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    base = log.append(
        batch.raw,
        batch.last_offset_delta + 1,
        max_timestamp=batch.max_timestamp,
        producer_id=pid,
        transactional=batch.is_transactional,
        control=batch.is_control,
    )
    if idempotent:
        if entry is None or entry.epoch != epoch:
            entry = log.producers[pid] = ProducerEntry(epoch, deque(maxlen=window))
        entry.batches.append(BatchMetadata(first, last, base))
        entry.last_timestamp = batch.max_timestamp
    return Appended(ErrorCode.NONE, base)


def _int_config(configs: dict[str, str], name: str, default: int) -> int:
    """A topic's numeric config, or ``default`` where it has none (or not a number)."""
    try:
        return int(configs[name])
    except (KeyError, ValueError):
        return default


def _in_sequence(last: int, first: int) -> bool:
    return first == last + 1 or (first == 0 and last == INT32_MAX)


HANDLERS = (Handler(ApiKey.PRODUCE, (0, 13), produce, NAMES, ProduceIn),)
