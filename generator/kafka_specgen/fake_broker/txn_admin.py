"""What admin clients ask about producers and transactions: DescribeProducers (a partition's
active producers), DescribeTransactions and ListTransactions (the transactions a broker
coordinates), and WriteTxnMarkers, which an admin sends to abort a hanging transaction
(KIP-664)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from . import clock
from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .modern_groups import GroupRefused, validate_regex
from .shapes import PLAIN, Names
from .txn import write_marker

#: Kafka's transaction states (apache/kafka ``TransactionState``)
STATES = (
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
)
LIST_NAMES = Names(absent={"duration_filter": -1, "transactional_id_pattern": None})
MARKER_NAMES = Names(absent={"transaction_version": 0})


class ProducersTopicIn(Protocol):
    name: str
    partition_indexes: Sequence[int]


class DescribeProducersIn(Protocol):
    topics: Sequence[ProducersTopicIn]


def describe_producers(call: Call) -> Any:
    req: DescribeProducersIn = call.read(DescribeProducersIn)
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    producer_class = call.item(partition_class, "active_producers")
    answered = []
    for t in req.topics:
        topic = call.state.topics.get(t.name)
        partitions = []
        for index in t.partition_indexes:
            producers: list[Any] = []
            if topic is None or not 0 <= index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif topic.partitions[index].leader != call.node.node_id:
                code = ErrorCode.NOT_LEADER_OR_FOLLOWER
            else:
                log = topic.partitions[index]
                code = ErrorCode.NONE
                producers = [
                    call.build(
                        producer_class,
                        producer_id=pid,
                        producer_epoch=entry.epoch,
                        last_sequence=entry.last_sequence,
                        last_timestamp=entry.last_timestamp,
                        coordinator_epoch=entry.coordinator_epoch,
                        current_txn_start_offset=log.open_txns.get(pid, -1),
                    )
                    for pid, entry in sorted(log.producers.items())
                ]
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=index,
                    error_code=code,
                    error_message=None,
                    active_producers=producers,
                )
            )
        answered.append(call.build(topic_class, name=t.name, partitions=partitions))
    return call.respond(topics=answered)


def _coordinates(call: Call, transactional_id: str) -> bool:
    return call.state.coordinator(transactional_id).node_id == call.node.node_id


class DescribeTransactionsIn(Protocol):
    transactional_ids: Sequence[str]


def describe_transactions(call: Call) -> Any:
    req: DescribeTransactionsIn = call.read(DescribeTransactionsIn)
    item = call.item(call.response, "transaction_states")
    topic_class = call.item(item, "topics")
    described = []
    for transactional_id in req.transactional_ids:
        txn = call.state.transactions.get(transactional_id)
        if not _coordinates(call, transactional_id):
            described.append(
                call.build(
                    item, error_code=ErrorCode.NOT_COORDINATOR, transactional_id=transactional_id
                )
            )
            continue
        if txn is None:
            described.append(
                call.build(
                    item,
                    error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
                    transactional_id=transactional_id,
                )
            )
            continue
        by_topic: dict[str, list[int]] = {}
        for name, index in sorted(txn.partitions):
            by_topic.setdefault(name, []).append(index)
        described.append(
            call.build(
                item,
                error_code=ErrorCode.NONE,
                transactional_id=transactional_id,
                transaction_state=txn.state,
                transaction_timeout_ms=txn.timeout_ms,
                transaction_start_time_ms=txn.started_ms,
                producer_id=txn.producer_id,
                producer_epoch=txn.epoch,
                topics=[
                    call.build(topic_class, topic=name, partitions=indexes)
                    for name, indexes in by_topic.items()
                ],
            )
        )
    return call.respond(transaction_states=described)


class ListTransactionsIn(Protocol):
    state_filters: Sequence[str]
    producer_id_filters: Sequence[int]
    duration_filter: int
    transactional_id_pattern: str | None


def list_transactions(call: Call) -> Any:
    """The transactions this broker coordinates, filtered by state, producer id, how long
    they have been running (v1) and a regular expression on their id (v2)."""
    req: ListTransactionsIn = call.read(ListTransactionsIn)
    item = call.item(call.response, "transaction_states")
    unknown = [s for s in req.state_filters if s not in STATES]
    states = {s for s in req.state_filters if s in STATES}
    pattern = None
    if req.transactional_id_pattern:
        try:
            pattern = validate_regex(req.transactional_id_pattern)
        except GroupRefused:
            return call.respond(
                error_code=ErrorCode.INVALID_REGULAR_EXPRESSION,
                unknown_state_filters=[],
                transaction_states=[],
            )
    now_ms = clock.wall_ms()
    listed = []
    for txn in sorted(call.state.transactions.values(), key=lambda t: t.transactional_id):
        if not _coordinates(call, txn.transactional_id):
            continue
        if (req.state_filters and txn.state not in states) or (
            req.producer_id_filters and txn.producer_id not in req.producer_id_filters
        ):
            continue
        if req.duration_filter >= 0 and (
            txn.state != "Ongoing" or now_ms - txn.started_ms < req.duration_filter
        ):
            continue
        if pattern is not None and not pattern.matches(txn.transactional_id):
            continue
        listed.append(
            call.build(
                item,
                transactional_id=txn.transactional_id,
                producer_id=txn.producer_id,
                transaction_state=txn.state,
            )
        )
    return call.respond(
        error_code=ErrorCode.NONE, unknown_state_filters=unknown, transaction_states=listed
    )


class MarkerTopicIn(Protocol):
    name: str
    partition_indexes: Sequence[int]


class MarkerIn(Protocol):
    producer_id: int
    producer_epoch: int
    transaction_result: bool
    topics: Sequence[MarkerTopicIn]
    coordinator_epoch: int


class WriteTxnMarkersIn(Protocol):
    markers: Sequence[MarkerIn]


def write_txn_markers(call: Call) -> Any:
    """Write each marker to its partitions (apache/kafka
    ``KafkaApis.handleWriteTxnMarkersRequest``); a marker older than the producer's epoch
    is refused."""
    req: WriteTxnMarkersIn = call.read(WriteTxnMarkersIn)
    marker_class = call.item(call.response, "markers")
    topic_class = call.item(marker_class, "topics")
    partition_class = call.item(topic_class, "partitions")
    records = call.shapes.records
    answered = []
    for m in req.markers:
        topics = []
        for t in m.topics:
            topic = call.state.topics.get(t.name)
            partitions = []
            for index in t.partition_indexes:
                if topic is None or not 0 <= index < len(topic.partitions):
                    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                elif topic.partitions[index].leader != call.node.node_id:
                    code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                else:
                    log = topic.partitions[index]
                    entry = log.producers.get(m.producer_id)
                    if entry is not None and m.producer_epoch < entry.epoch:
                        code = ErrorCode.INVALID_PRODUCER_EPOCH
                    else:
                        code = ErrorCode.NONE
                        write_marker(
                            call.state,
                            records,
                            log,
                            m.producer_id,
                            m.producer_epoch,
                            commit=m.transaction_result,
                            coordinator_epoch=m.coordinator_epoch,
                        )
                partitions.append(
                    call.build(partition_class, partition_index=index, error_code=code)
                )
            topics.append(call.build(topic_class, name=t.name, partitions=partitions))
        answered.append(call.build(marker_class, producer_id=m.producer_id, topics=topics))
    return call.respond(markers=answered)


HANDLERS = (
    Handler(ApiKey.DESCRIBE_PRODUCERS, (0, 0), describe_producers, PLAIN, DescribeProducersIn),
    Handler(
        ApiKey.DESCRIBE_TRANSACTIONS, (0, 0), describe_transactions, PLAIN, DescribeTransactionsIn
    ),
    Handler(ApiKey.LIST_TRANSACTIONS, (0, 2), list_transactions, LIST_NAMES, ListTransactionsIn),
    Handler(ApiKey.WRITE_TXN_MARKERS, (0, 2), write_txn_markers, MARKER_NAMES, WriteTxnMarkersIn),
)
