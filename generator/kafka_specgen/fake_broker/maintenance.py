"""Log maintenance: retention by time and size (applied by a timer every
``log.retention.check.interval.ms``), DeleteRecords, and compaction on demand
(``FakeCluster.compact``), after apache/kafka ``UnifiedLog.deleteOldSegments`` and
``LogCleaner``.

Kafka deletes and cleans whole segments (``segment.bytes``, 1 GiB by default); here every
record batch counts as its own segment, so retention drops batches one by one and
compaction cleans the whole log, the active segment included. The log start offset moves
as Kafka moves it, and clients see it in ListOffsets (earliest), in Fetch
(``log_start_offset``, OFFSET_OUT_OF_RANGE below it) and in Produce answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from . import clock
from ..api_keys import ApiKey
from .call import Call
from .config_defaults import BROKER, TOPIC, release_of, table
from .errors import ErrorCode
from .handler import Handler
from .limits import Limits
from .log import PartitionLog, StoredBatch, Topic
from .shapes import PLAIN
from .state import ClusterState

#: DeleteRecords' offset meaning "up to the high watermark"
HIGH_WATERMARK = -1


def topic_setting(state: ClusterState, topic: Topic, name: str) -> str | None:
    """A topic's effective config: its own, else the cluster-wide dynamic broker default of
    its synonym, else Kafka's default."""
    if name in topic.configs:
        return topic.configs[name]
    config = table(TOPIC, release_of(state.release_name)).get(name)
    if config is None:
        return None
    if config.synonym is not None:
        dynamic = state.configs.get((BROKER, ""), {}).get(config.synonym)
        if dynamic is not None:
            return dynamic
    return config.default


def _number(state: ClusterState, topic: Topic, name: str) -> int:
    try:
        return int(topic_setting(state, topic, name) or "-1")
    except ValueError:
        return -1


def policies(state: ClusterState, topic: Topic) -> set[str]:
    text = topic_setting(state, topic, "cleanup.policy") or "delete"
    return {p.strip().lower() for p in text.split(",") if p.strip()}


# --- retention ------------------------------------------------------------------------------


def apply_retention(state: ClusterState, now_ms: int | None = None) -> int:
    """Delete what retention.ms and retention.bytes let go, in every topic whose
    cleanup.policy has ``delete``; how many batches went."""
    now_ms = clock.wall_ms() if now_ms is None else now_ms
    gone = 0
    for topic in state.topics.values():
        if "delete" not in policies(state, topic):
            continue
        retention_ms = _number(state, topic, "retention.ms")
        retention_bytes = _number(state, topic, "retention.bytes")
        for log in topic.partitions:
            gone += _expire(log, now_ms, retention_ms, retention_bytes)
    return gone


def _expire(log: PartitionLog, now_ms: int, retention_ms: int, retention_bytes: int) -> int:
    """apache/kafka ``deleteRetentionMsBreachedSegments`` and
    ``deleteRetentionSizeBreachedSegments``, batch by batch, below the high watermark."""
    drop, size = 0, log.size
    for batch in log.batches:
        # a batch without timestamps (a converted magic 0 message set) expires by size only
        too_old = 0 <= retention_ms < now_ms - batch.max_timestamp and batch.max_timestamp >= 0
        too_big = retention_bytes >= 0 and size - len(batch.data) >= retention_bytes
        if not (too_old or too_big) or batch.next_offset > log.end:
            break
        drop += 1
        size -= len(batch.data)
    if drop:
        log.delete_before(log.batches[drop - 1].next_offset)
    return drop


def start(state: ClusterState, limits: Limits) -> None:
    """Apply retention every ``log_retention_check_interval_ms`` on the cluster's loop."""
    interval = limits.log_retention_check_interval_ms / 1000.0

    def check() -> None:
        apply_retention(state)
        state.later(clock.now() + interval, check)

    state.later(clock.now() + interval, check)


# --- DeleteRecords --------------------------------------------------------------------------


class PartitionIn(Protocol):
    partition_index: int
    offset: int


class TopicIn(Protocol):
    name: str
    partitions: Sequence[PartitionIn]


class DeleteRecordsIn(Protocol):
    topics: Sequence[TopicIn]


def delete_records(call: Call) -> Any:
    """apache/kafka ``UnifiedLog.maybeIncrementLogStartOffset`` through
    ``ReplicaManager.deleteRecords``."""
    req: DeleteRecordsIn = call.read(DeleteRecordsIn)
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    answered = []
    for t in req.topics:
        topic = call.state.topics.get(t.name)
        partitions = []
        for p in t.partitions:
            code, low = _delete(call, topic, p.partition_index, p.offset)
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=p.partition_index,
                    low_watermark=low,
                    error_code=code,
                )
            )
        answered.append(call.build(topic_class, name=t.name, partitions=partitions))
    return call.respond(topics=answered)


def _delete(call: Call, topic: Topic | None, index: int, offset: int) -> tuple[ErrorCode, int]:
    if topic is None or not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1
    log = topic.partitions[index]
    if log.leader != call.node.node_id:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, -1
    if "delete" not in policies(call.state, topic):
        return ErrorCode.POLICY_VIOLATION, -1
    if offset == HIGH_WATERMARK:
        offset = log.end
    if offset < 0 or offset > log.end:
        return ErrorCode.OFFSET_OUT_OF_RANGE, -1
    if offset > log.log_start:
        log.delete_before(offset)
    return ErrorCode.NONE, log.log_start


# --- compaction -----------------------------------------------------------------------------


def compact(state: ClusterState, records: Any, topic_name: str | None = None) -> int:
    """Clean every partition of the topics whose cleanup.policy has ``compact`` (or of
    ``topic_name``): the last record of each key stays, with its offset; tombstones stay
    until delete.retention.ms after the cleaning that first saw them; records of aborted
    transactions go. Returns how many records went."""
    now_ms = clock.wall_ms()
    removed = 0
    for topic in state.topics.values():
        if topic_name is not None and topic.name != topic_name:
            continue
        if "compact" not in policies(state, topic):
            continue
        horizon = now_ms + max(_number(state, topic, "delete.retention.ms"), 0)
        for log in topic.partitions:
            removed += _clean(log, records, now_ms, horizon)
    return removed


def _clean(log: PartitionLog, records: Any, now_ms: int, horizon: int) -> int:
    """apache/kafka ``LogCleaner.cleanSegments`` over the whole log."""
    aborted = [(a.producer_id, a.first_offset, a.last_offset) for a in log.aborted]

    def is_aborted(batch: StoredBatch) -> bool:
        return batch.transactional and any(
            pid == batch.producer_id and first <= batch.base_offset <= last
            for pid, first, last in aborted
        )

    last: dict[bytes, int] = {}
    for batch in log.batches:
        if batch.control or is_aborted(batch):
            continue
        for record in records.RecordBatch(batch.data).records():
            if record.key is not None:
                last[record.key] = record.offset
    kept: list[StoredBatch] = []
    removed = 0
    for batch in log.batches:
        if batch.control:
            kept.append(batch)
            continue
        parsed = records.RecordBatch(batch.data)
        every = list(parsed.records())
        if is_aborted(batch):
            removed += len(every)
            continue
        expired = parsed.has_delete_horizon and now_ms >= parsed.base_timestamp
        keep = [
            r
            for r in every
            if r.key is not None
            and last.get(r.key) == r.offset
            and not (expired and r.value is None)
        ]
        removed += len(every) - len(keep)
        needs_horizon = not parsed.has_delete_horizon and any(r.value is None for r in keep)
        if not keep:
            continue
        if len(keep) == len(every) and not needs_horizon:
            kept.append(batch)
            continue
        kept.append(_rebuilt(records, parsed, batch, keep, horizon if needs_horizon else None))
    log.replace_batches(kept)
    return removed


def _rebuilt(
    records: Any, parsed: Any, batch: StoredBatch, keep: list[Any], horizon: int | None
) -> StoredBatch:
    """The batch with only ``keep``, its offsets, producer and attributes as they were."""
    delete_horizon = horizon is not None or parsed.has_delete_horizon
    data = records.build_batch(
        keep,
        compression=parsed.compression,
        base_offset=parsed.base_offset,
        producer_id=parsed.producer_id,
        producer_epoch=parsed.producer_epoch,
        base_sequence=parsed.base_sequence,
        is_transactional=parsed.is_transactional,
        timestamp_type=parsed.timestamp_type,
        partition_leader_epoch=0,
        base_timestamp=(
            horizon
            if horizon is not None
            else (parsed.base_timestamp if parsed.has_delete_horizon else None)
        ),
        last_offset_delta=parsed.last_offset_delta,
        has_delete_horizon=delete_horizon,
    )
    return StoredBatch(
        batch.base_offset,
        batch.next_offset,
        bytes(data),
        batch.max_timestamp,
        batch.producer_id,
        batch.transactional,
        batch.control,
    )


HANDLERS = (Handler(ApiKey.DELETE_RECORDS, (0, 2), delete_records, PLAIN, DeleteRecordsIn),)
