"""Topics and records: Metadata, CreateTopics, DeleteTopics, Produce, Fetch, ListOffsets,
DescribeConfigs and DescribeCluster."""

from __future__ import annotations

from typing import Any

from .call import Call, Wait, field_of
from .log import PartitionLog, Topic
from .state import (
    CORRUPT_MESSAGE,
    INVALID_PARTITIONS,
    INVALID_PRODUCER_EPOCH,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    TOPIC_ALREADY_EXISTS,
    UNKNOWN_TOPIC_ID,
    UNKNOWN_TOPIC_OR_PARTITION,
    UNSUPPORTED_FOR_MESSAGE_FORMAT,
)

EARLIEST = -2
LATEST = -1
MAX_TIMESTAMP = -3


def brokers(call: Call) -> list[Any]:
    """The cluster's brokers, for Metadata (``node_id``) and DescribeCluster (``broker_id``)."""
    item = call.item(call.response, "brokers")
    return [
        call.make(item, node_id=b.node_id, broker_id=b.node_id, host=b.host, port=b.port, rack=None)
        for b in call.state.brokers
    ]


def metadata(call: Call) -> Any:
    req, state = call.request, call.state
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    # v0: an empty list means every topic; from v1 that is null
    every = req.topics is None or (call.version == 0 and not req.topics)
    auto = getattr(req, "allow_auto_topic_creation", True) and state.auto_create_topics
    with state.lock:
        if every:
            wanted = [(name, None) for name in sorted(state.topics)]
        else:
            wanted = [(t.name, getattr(t, "topic_id", None)) for t in req.topics]
        topics = []
        for name, topic_id in wanted:
            topic = state.topics.get(name) if name else state.topic_by_id(topic_id)
            if topic is None and name and auto:
                topic = state.create_topic(name, state.default_partitions)
            if topic is None:
                topics.append(
                    call.make(topic_class, error_code=UNKNOWN_TOPIC_OR_PARTITION, name=name)
                )
                continue
            partitions = [
                call.make(
                    partition_class,
                    error_code=NONE,
                    partition_index=i,
                    leader_id=log.leader,
                    leader_epoch=0,
                    replica_nodes=[log.leader],
                    isr_nodes=[log.leader],
                )
                for i, log in enumerate(topic.partitions)
            ]
            topics.append(
                call.make(
                    topic_class,
                    error_code=NONE,
                    name=topic.name,
                    topic_id=topic.topic_id,
                    partitions=partitions,
                )
            )
    return call.reply(
        brokers=brokers(call),
        cluster_id=state.cluster_id,
        controller_id=state.brokers[0].node_id,
        topics=topics,
    )


def create_topics(call: Call) -> Any:
    req, state = call.request, call.state
    result_class = call.item(call.response, "topics")
    results = []
    with state.lock:
        for t in req.topics:
            count = t.num_partitions if t.num_partitions != -1 else state.default_partitions
            if t.name in state.topics:
                code, message = TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists."
            elif count < 1:
                code, message = INVALID_PARTITIONS, "Number of partitions must be at least 1."
            else:
                code, message = NONE, None
                if not req.validate_only:
                    created = state.create_topic(t.name, count)
                    created.configs = {c.name: c.value for c in t.configs}
            topic = state.topics.get(t.name)
            results.append(
                call.make(
                    result_class,
                    name=t.name,
                    error_code=code,
                    error_message=message,
                    topic_id=topic.topic_id if topic and code == NONE else None,
                    num_partitions=count,
                    replication_factor=1,
                )
            )
    return call.reply(topics=results)


def delete_topics(call: Call) -> Any:
    req, state = call.request, call.state
    result_class = call.item(call.response, "responses")
    names = list(getattr(req, "topic_names", ()) or ())
    names += [t.name for t in getattr(req, "topics", ()) or () if t.name]
    results = []
    with state.lock:
        for t in getattr(req, "topics", ()) or ():
            if not t.name:
                topic = state.topic_by_id(t.topic_id)
                names.append(topic.name if topic else "")
        for name in names:
            topic = state.topics.pop(name, None)
            code = NONE if topic else UNKNOWN_TOPIC_OR_PARTITION
            results.append(
                call.make(
                    result_class,
                    name=name,
                    error_code=code,
                    topic_id=topic.topic_id if topic else None,
                )
            )
    return call.reply(responses=results)


# --- produce --------------------------------------------------------------------------------


def produce(call: Call) -> Any:
    req, state = call.request, call.state
    records = call.shapes.records
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partition_responses")
    results = []
    with state.lock:
        for t in req.topic_data:
            topic = state.topics.get(t.name) if t.name else state.topic_by_id(t.topic_id)
            partitions = []
            for p in t.partition_data:
                code, base = append_records(call, records, topic, p.index, p.records)
                partitions.append(
                    call.make(
                        partition_class,
                        index=p.index,
                        error_code=code,
                        base_offset=base,
                        log_append_time_ms=-1,
                        log_start_offset=(
                            topic.partitions[p.index].log_start if code == NONE and topic else -1
                        ),
                    )
                )
            results.append(
                call.make(
                    topic_class,
                    name=t.name,
                    topic_id=getattr(t, "topic_id", None),
                    partition_responses=partitions,
                )
            )
    if req.acks == 0:
        return None
    return call.reply(responses=results)


def append_records(
    call: Call, records: Any, topic: Topic | None, index: int, data: bytes | None
) -> tuple[int, int]:
    """(error code, base offset) of appending ``data`` to a partition."""
    if topic is None:
        return (UNKNOWN_TOPIC_ID if call.version >= 13 else UNKNOWN_TOPIC_OR_PARTITION), -1
    if not 0 <= index < len(topic.partitions):
        return UNKNOWN_TOPIC_OR_PARTITION, -1
    log = topic.partitions[index]
    if log.leader != call.node.node_id:
        return NOT_LEADER_OR_FOLLOWER, -1
    try:
        batches = list(records.iter_batches(data or b""))
        for batch in batches:
            batch.validate()
    except records.CorruptRecordError:
        return CORRUPT_MESSAGE, -1
    if not batches:
        return CORRUPT_MESSAGE, -1
    if not isinstance(batches[0], records.RecordBatch):
        if call.version > 2:  # record batches only, from Produce v3 on (KIP-98)
            return UNSUPPORTED_FOR_MESSAGE_FORMAT, -1
        batches = [as_record_batch(records, batches)]
    first = -1
    for batch in batches:
        code, base = append_batch(log, batch)
        if code != NONE:
            return code, -1
        first = base if first == -1 else first
    return NONE, first


def as_record_batch(records: Any, legacy: list[Any]) -> Any:
    """Message sets (magic 0 and 1, Produce v0-v2) as one magic-2 batch, as a broker
    converts them on the way in; consumers then fetch magic 2 (no down-conversion here)."""
    kept = [r for batch in legacy for r in batch.records()]
    data = records.build_batch(
        [records.Record(n, r.timestamp, r.key, r.value) for n, r in enumerate(kept)],
        compression=legacy[0].compression,
    )
    return records.RecordBatch(data)


def append_batch(log: PartitionLog, batch: Any) -> tuple[int, int]:
    """Append one batch, checking an idempotent producer's sequence numbers as Kafka does:
    the retry of the last batch is acknowledged with its offset, a gap is refused."""
    count = batch.last_offset_delta + 1
    pid = batch.producer_id
    if pid >= 0 and batch.base_sequence >= 0:
        seen = log.sequences.get(pid)
        if seen is not None:
            epoch, last_base, last_sequence, last_offset = seen
            if batch.producer_epoch < epoch:
                return INVALID_PRODUCER_EPOCH, -1
            if batch.producer_epoch == epoch:
                if batch.base_sequence == last_base:
                    return NONE, last_offset
                if batch.base_sequence != last_sequence + 1:
                    return OUT_OF_ORDER_SEQUENCE_NUMBER, -1
        log.sequences[pid] = (
            batch.producer_epoch,
            batch.base_sequence,
            batch.last_sequence,
            log.end,
        )
    base = log.append(
        batch.raw,
        count,
        max_timestamp=batch.max_timestamp,
        producer_id=pid,
        transactional=batch.is_transactional,
        control=batch.is_control,
    )
    return NONE, base


# --- fetch ----------------------------------------------------------------------------------


def fetch(call: Call) -> Any:
    req = call.request
    deadline = call.now + max(req.max_wait_ms, 0) / 1000.0

    def poll(now: float, expired: bool) -> Any:
        response, size = fetch_response(call)
        if expired or size >= max(req.min_bytes, 1) or response.error_code:
            return response
        return None

    response = poll(call.now, req.max_wait_ms <= 0)
    return response if response is not None else Wait(deadline, poll)


def fetch_response(call: Call) -> tuple[Any, int]:
    req, state = call.request, call.state
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partitions")
    aborted_class = call.item(partition_class, "aborted_transactions")
    committed = getattr(req, "isolation_level", 0) == 1
    budget = req.max_bytes if req.max_bytes > 0 else 1 << 30
    size = 0
    topics = []
    with state.lock:
        for t in req.topics:
            name = field_of(t, "topic", "name", default="")
            topic_id = getattr(t, "topic_id", None)
            topic = state.topics.get(name) if name else state.topic_by_id(topic_id)
            partitions = []
            for p in t.partitions:
                log = (
                    topic.partitions[p.partition]
                    if topic and 0 <= p.partition < len(topic.partitions)
                    else None
                )
                if log is None:
                    code = (
                        UNKNOWN_TOPIC_ID
                        if topic is None and not name
                        else (UNKNOWN_TOPIC_OR_PARTITION)
                    )
                    partitions.append(
                        call.make(partition_class, partition_index=p.partition, error_code=code)
                    )
                    continue
                if log.leader != call.node.node_id:
                    partitions.append(
                        call.make(
                            partition_class,
                            partition_index=p.partition,
                            error_code=NOT_LEADER_OR_FOLLOWER,
                        )
                    )
                    continue
                upto = log.last_stable if committed else log.end
                if not log.log_start <= p.fetch_offset <= log.end:
                    partitions.append(
                        call.make(
                            partition_class,
                            partition_index=p.partition,
                            error_code=OFFSET_OUT_OF_RANGE,
                            high_watermark=log.end,
                            last_stable_offset=log.last_stable,
                            log_start_offset=log.log_start,
                        )
                    )
                    continue
                limit = min(p.partition_max_bytes, max(budget - size, 0))
                data = log.read(p.fetch_offset, limit, upto) if limit > 0 or not size else b""
                size += len(data)
                aborted = (
                    [
                        call.make(
                            aborted_class, producer_id=a.producer_id, first_offset=a.first_offset
                        )
                        for a in log.aborted_in(p.fetch_offset, upto)
                    ]
                    if committed
                    else None
                )
                partitions.append(
                    call.make(
                        partition_class,
                        partition_index=p.partition,
                        error_code=NONE,
                        high_watermark=log.end,
                        last_stable_offset=log.last_stable,
                        log_start_offset=log.log_start,
                        aborted_transactions=aborted,
                        preferred_read_replica=-1,
                        records=data,
                    )
                )
            topics.append(
                call.make(
                    topic_class,
                    topic=topic.name if topic else name,
                    topic_id=topic_id,
                    partitions=partitions,
                )
            )
    return call.reply(error_code=NONE, session_id=0, responses=topics), size


# --- offsets, configs, cluster --------------------------------------------------------------


def list_offsets(call: Call) -> Any:
    req, state = call.request, call.state
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    committed = getattr(req, "isolation_level", 0) == 1
    topics = []
    with state.lock:
        for t in req.topics:
            topic = state.topics.get(t.name)
            partitions = []
            for p in t.partitions:
                if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                    partitions.append(
                        call.make(
                            partition_class,
                            partition_index=p.partition_index,
                            error_code=UNKNOWN_TOPIC_OR_PARTITION,
                        )
                    )
                    continue
                log = topic.partitions[p.partition_index]
                if p.timestamp == EARLIEST:
                    offset, timestamp = log.log_start, -1
                elif p.timestamp == LATEST:
                    offset, timestamp = (log.last_stable if committed else log.end), -1
                elif p.timestamp == MAX_TIMESTAMP:
                    stamps = [
                        (b.max_timestamp, b.base_offset) for b in log.batches if not b.control
                    ]
                    timestamp, offset = max(stamps, default=(-1, -1))
                else:
                    offset, timestamp = log.offset_for_time(p.timestamp)
                partitions.append(
                    call.make(
                        partition_class,
                        partition_index=p.partition_index,
                        error_code=NONE,
                        old_style_offsets=[offset],
                        timestamp=timestamp,
                        offset=offset,
                        leader_epoch=0,
                    )
                )
            topics.append(call.make(topic_class, name=t.name, partitions=partitions))
    return call.reply(topics=topics)


#: What DescribeConfigs says of a topic or broker it was not told otherwise.
DEFAULT_CONFIGS = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "message.format.version": "3.0-IV1",
    "retention.ms": "604800000",
}
TOPIC, BROKER = 2, 4


def describe_configs(call: Call) -> Any:
    req, state = call.request, call.state
    result_class = call.item(call.response, "results")
    config_class = call.item(result_class, "configs")
    results = []
    with state.lock:
        for r in req.resources:
            topic = state.topics.get(r.resource_name) if r.resource_type == TOPIC else None
            if r.resource_type == TOPIC and topic is None:
                results.append(
                    call.make(
                        result_class,
                        error_code=UNKNOWN_TOPIC_OR_PARTITION,
                        resource_type=r.resource_type,
                        resource_name=r.resource_name,
                    )
                )
                continue
            configs = {**DEFAULT_CONFIGS, **(topic.configs if topic else {})}
            wanted = r.configuration_keys
            entries = [
                call.make(
                    config_class,
                    name=k,
                    value=v,
                    read_only=r.resource_type == BROKER,
                    is_default=topic is None or k not in topic.configs,
                    config_source=(
                        1 if topic and k in topic.configs else 5
                    ),  # dynamic topic, default
                    is_sensitive=False,
                )
                for k, v in sorted(configs.items())
                if wanted is None or k in wanted
            ]
            results.append(
                call.make(
                    result_class,
                    error_code=NONE,
                    resource_type=r.resource_type,
                    resource_name=r.resource_name,
                    configs=entries,
                )
            )
    return call.reply(results=results)


def describe_cluster(call: Call) -> Any:
    state = call.state
    return call.reply(
        error_code=NONE,
        cluster_id=state.cluster_id,
        controller_id=state.brokers[0].node_id,
        brokers=brokers(call),
        endpoint_type=1,
    )
