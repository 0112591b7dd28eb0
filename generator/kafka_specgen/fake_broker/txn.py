"""Idempotent and transactional producers: InitProducerId, AddPartitionsToTxn (the clients'
form, v0-3, and the brokers' batched form, v4-5), AddOffsetsToTxn, TxnOffsetCommit and
EndTxn (which writes the COMMIT or ABORT markers), with KIP-890's transactions v2: a
Produce v12 of a transactional producer adds its partition to the transaction itself, and
EndTxn v5 bumps the producer epoch at the end of every transaction.

A transaction's state changes at once (no PrepareCommit phase to wait out).
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Sequence
from typing import Any, Protocol

from . import clock
from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .log import AbortedTxn, PartitionLog, ProducerEntry
from .offsets import CommitTopicIn, commit_response
from .shapes import PLAIN, Names
from .state import ClusterState, Transaction

ZERO_UUID = uuid.UUID(int=0)
#: an epoch this high starts over with a new producer id (apache/kafka
#: ``TransactionMetadata.isEpochExhausted``)
EPOCH_EXHAUSTED = 32767 - 1
#: AddPartitionsToTxn v4 is the brokers' batched form (KIP-890); v5 adds TRANSACTION_ABORTABLE
BATCHED_VERSION, ABORTABLE_VERSION = 4, 5
#: EndTxn v5 and Produce v12: transactions v2 (KIP-890 part 2)
TV2_END_VERSION, TV2_PRODUCE_VERSION = 5, 12
#: InitProducerId v3 lets an idempotent producer bump its epoch (KIP-360)
BUMP_VERSION = 3

PARTITIONS_NAMES = Names(
    # Kafka 3.5 renamed the client's fields when it added the brokers' batched form (v4)
    renamed={
        "v3_and_below_transactional_id": ("transactional_id",),
        "v3_and_below_producer_id": ("producer_id",),
        "v3_and_below_producer_epoch": ("producer_epoch",),
        "v3_and_below_topics": ("topics",),
        "results_by_topic_v3_and_below": ("results",),
        "results_by_partition": ("results",),
        "partition_error_code": ("error_code",),
    },
    absent={"transactions": (), "results_by_transaction": (), "error_code": 0},
)
END_NAMES = Names(absent={"producer_id": -1, "producer_epoch": -1})  # EndTxn v5, Kafka 4.0
INIT_NAMES = Names(absent={"producer_id": -1, "producer_epoch": -1})  # InitProducerId v3
TXN_COMMIT_NAMES = Names(absent={"topic_id": ZERO_UUID})


class InitProducerIdIn(Protocol):
    transactional_id: str | None
    transaction_timeout_ms: int
    producer_id: int
    producer_epoch: int


def init_producer_id(call: Call) -> Any:
    req: InitProducerIdIn = call.read(InitProducerIdIn)
    state = call.state
    if not req.transactional_id:
        if req.producer_id >= 0 and call.version >= BUMP_VERSION:  # KIP-360: same id, epoch+1
            if req.producer_epoch + 1 < EPOCH_EXHAUSTED:
                return _ids(call, req.producer_id, req.producer_epoch + 1)
        return _ids(call, state.new_producer_id(), 0)
    txn = state.transactions.get(req.transactional_id)
    if txn is None:
        txn = Transaction(req.transactional_id, state.new_producer_id(), 0)
        state.transactions[req.transactional_id] = txn
    else:
        if req.producer_id >= 0 and (req.producer_id, req.producer_epoch) != (
            txn.producer_id,
            txn.epoch,
        ):
            return _ids(call, -1, -1, ErrorCode.PRODUCER_FENCED)
        if txn.state == "Ongoing":  # a new producer instance fences the old one's transaction
            end_transaction(call.state, call.shapes.records, txn, commit=False)
        _bump(state, txn)
    txn.timeout_ms = req.transaction_timeout_ms
    txn.state, txn.last_end = "Empty", None
    return _ids(call, txn.producer_id, txn.epoch)


def _ids(call: Call, producer_id: int, epoch: int, code: ErrorCode = ErrorCode.NONE) -> Any:
    return call.respond(error_code=code, producer_id=producer_id, producer_epoch=epoch)


def _bump(state: ClusterState, txn: Transaction) -> None:
    """The next epoch, or a new producer id once the epochs run out."""
    if txn.epoch + 1 >= EPOCH_EXHAUSTED:
        txn.producer_id, txn.epoch = state.new_producer_id(), 0
    else:
        txn.epoch += 1


def _transaction(
    call: Call, transactional_id: str, producer_id: int, epoch: int
) -> tuple[Transaction | None, ErrorCode]:
    txn = call.state.transactions.get(transactional_id)
    if txn is None or txn.producer_id != producer_id:  # apache/kafka TransactionCoordinator
        return None, ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if txn.epoch != epoch:
        return None, ErrorCode.INVALID_PRODUCER_EPOCH
    return txn, ErrorCode.NONE


def begin(txn: Transaction) -> None:
    if txn.state != "Ongoing":
        txn.state, txn.started_ms = "Ongoing", clock.wall_ms()


def add_partition(call: Call, txn: Transaction, topic: str, index: int) -> None:
    begin(txn)
    txn.partitions.add((topic, index))


def implicit_add(
    call: Call, transactional_id: str | None, batch: Any, topic: str, index: int
) -> ErrorCode:
    """Produce v12 of a transactional producer: its partition joins its transaction
    (KIP-890 part 2), if the producer id and epoch are the transaction's."""
    if call.version < TV2_PRODUCE_VERSION or not batch.is_transactional or not transactional_id:
        return ErrorCode.NONE
    txn, code = _transaction(call, transactional_id, batch.producer_id, batch.producer_epoch)
    if txn is not None:
        add_partition(call, txn, topic, index)
    return code


class TxnTopicIn(Protocol):
    name: str
    partitions: Sequence[int]


class BatchedTxnIn(Protocol):
    transactional_id: str
    producer_id: int
    producer_epoch: int
    verify_only: bool
    topics: Sequence[TxnTopicIn]


class AddPartitionsToTxnIn(Protocol):
    v3_and_below_transactional_id: str
    v3_and_below_producer_id: int
    v3_and_below_producer_epoch: int
    v3_and_below_topics: Sequence[TxnTopicIn]
    transactions: Sequence[BatchedTxnIn]


def add_partitions_to_txn(call: Call) -> Any:
    req: AddPartitionsToTxnIn = call.read(AddPartitionsToTxnIn)
    if call.version >= BATCHED_VERSION:
        return _batched(call, req)
    topic_class = call.item(call.response, "results_by_topic_v3_and_below")
    results = _added(
        call,
        topic_class,
        req.v3_and_below_transactional_id,
        req.v3_and_below_producer_id,
        req.v3_and_below_producer_epoch,
        req.v3_and_below_topics,
        verify_only=False,
    )
    return call.respond(results_by_topic_v3_and_below=results)


def _batched(call: Call, req: AddPartitionsToTxnIn) -> Any:
    """The brokers' form (a partition leader verifying or adding for producers): one
    result per transaction (apache/kafka ``TransactionCoordinator.handleAddPartitions`` and
    ``handleVerifyPartitionsInTransaction``)."""
    txn_class = call.item(call.response, "results_by_transaction")
    topic_class = call.item(txn_class, "topic_results")
    results = [
        call.build(
            txn_class,
            transactional_id=t.transactional_id,
            topic_results=_added(
                call,
                topic_class,
                t.transactional_id,
                t.producer_id,
                t.producer_epoch,
                t.topics,
                verify_only=t.verify_only,
            ),
        )
        for t in req.transactions
    ]
    return call.respond(error_code=ErrorCode.NONE, results_by_transaction=results)


def _added(
    call: Call,
    topic_class: type,
    transactional_id: str,
    producer_id: int,
    epoch: int,
    topics: Sequence[TxnTopicIn],
    *,
    verify_only: bool,
) -> list[Any]:
    partition_class = call.item(topic_class, "results_by_partition")
    txn, code = _transaction(call, transactional_id, producer_id, epoch)
    missing = (
        ErrorCode.TRANSACTION_ABORTABLE
        if call.version >= ABORTABLE_VERSION
        else ErrorCode.INVALID_TXN_STATE
    )
    results = []
    for t in topics:
        topic = call.state.topics.get(t.name)
        codes = []
        for index in t.partitions:
            known = topic is not None and 0 <= index < len(topic.partitions)
            partition_code = code
            if code == ErrorCode.NONE and not known:
                partition_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif txn is not None and verify_only:
                if (t.name, index) not in txn.partitions:
                    partition_code = missing
            elif txn is not None and known:
                add_partition(call, txn, t.name, index)
            codes.append(
                call.build(
                    partition_class, partition_index=index, partition_error_code=partition_code
                )
            )
        results.append(call.build(topic_class, name=t.name, results_by_partition=codes))
    return results


class AddOffsetsToTxnIn(Protocol):
    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str


def add_offsets_to_txn(call: Call) -> Any:
    req: AddOffsetsToTxnIn = call.read(AddOffsetsToTxnIn)
    txn, code = _transaction(call, req.transactional_id, req.producer_id, req.producer_epoch)
    if txn is not None:
        begin(txn)
        txn.groups.add(req.group_id)
    return call.respond(error_code=code)


class TxnOffsetCommitIn(Protocol):
    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    topics: Sequence[CommitTopicIn]


def txn_offset_commit(call: Call) -> Any:
    """Offsets held back until the transaction commits (dropped if it aborts)."""
    req: TxnOffsetCommitIn = call.read(TxnOffsetCommitIn)
    txn, code = _transaction(call, req.transactional_id, req.producer_id, req.producer_epoch)
    pending = None if txn is None else txn.pending_offsets.setdefault(req.group_id, {})
    return commit_response(call, req.topics, code, pending)


class EndTxnIn(Protocol):
    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool


def end_txn(call: Call) -> Any:
    req: EndTxnIn = call.read(EndTxnIn)
    tv2 = call.version >= TV2_END_VERSION
    txn = call.state.transactions.get(req.transactional_id)
    if (
        tv2
        and txn is not None
        and txn.last_end == (req.producer_epoch, req.committed)
        and txn.producer_id == req.producer_id
    ):
        # a retry of the EndTxn that bumped the epoch: the same answer
        return _ended(call, txn.producer_id, txn.epoch, ErrorCode.NONE)
    txn, code = _transaction(call, req.transactional_id, req.producer_id, req.producer_epoch)
    if txn is None:
        return _ended(call, req.producer_id, req.producer_epoch, code)
    if tv2:
        ended_at = txn.epoch
        _bump(call.state, txn)  # the markers carry the new epoch (KIP-890 part 2)
        txn.last_end = (ended_at, req.committed)
    end_transaction(call.state, call.shapes.records, txn, commit=req.committed)
    return _ended(call, txn.producer_id, txn.epoch, ErrorCode.NONE)


def _ended(call: Call, producer_id: int, epoch: int, code: ErrorCode) -> Any:
    return call.respond(error_code=code, producer_id=producer_id, producer_epoch=epoch)


def write_marker(
    state: ClusterState,
    records: Any,
    log: PartitionLog,
    producer_id: int,
    epoch: int,
    *,
    commit: bool,
    coordinator_epoch: int = 0,
) -> None:
    """Append a COMMIT or ABORT marker for ``producer_id`` to ``log`` and close its
    transaction there (an aborted one is remembered for read_committed fetches)."""
    kind = records.ControlType.COMMIT if commit else records.ControlType.ABORT
    key, value = records.encode_control(records.ControlRecord(kind, coordinator_epoch))
    now_ms = clock.wall_ms()
    marker = records.build_batch(
        [records.Record(0, now_ms, key, value)],
        producer_id=producer_id,
        producer_epoch=epoch,
        is_transactional=True,
        is_control=True,
    )
    first = log.open_txns.pop(producer_id, None)
    offset = log.append(
        marker, 1, max_timestamp=now_ms, producer_id=producer_id, transactional=True, control=True
    )
    if not commit and first is not None:
        log.aborted.append(AbortedTxn(producer_id, first, offset))
    entry = log.producers.get(producer_id)
    if entry is None or entry.epoch < epoch:
        entry = log.producers[producer_id] = ProducerEntry(epoch, deque(maxlen=5))
    entry.coordinator_epoch, entry.last_timestamp = coordinator_epoch, now_ms


def end_transaction(state: ClusterState, records: Any, txn: Transaction, *, commit: bool) -> None:
    """Write the marker to every partition of the transaction and close it there; commit
    or drop its pending offsets."""
    for name, index in sorted(txn.partitions):
        topic = state.topics.get(name)
        if topic is not None and index < len(topic.partitions):
            write_marker(
                state, records, topic.partitions[index], txn.producer_id, txn.epoch, commit=commit
            )
    if commit:
        for group_id, offsets in txn.pending_offsets.items():
            state.group(group_id).offsets.update(offsets)
    txn.partitions.clear()
    txn.groups.clear()
    txn.pending_offsets.clear()
    txn.state = "CompleteCommit" if commit else "CompleteAbort"


HANDLERS = (
    Handler(ApiKey.INIT_PRODUCER_ID, (0, 6), init_producer_id, INIT_NAMES, InitProducerIdIn),
    Handler(
        ApiKey.ADD_PARTITIONS_TO_TXN,
        (0, 5),
        add_partitions_to_txn,
        PARTITIONS_NAMES,
        AddPartitionsToTxnIn,
    ),
    Handler(ApiKey.ADD_OFFSETS_TO_TXN, (0, 4), add_offsets_to_txn, PLAIN, AddOffsetsToTxnIn),
    Handler(ApiKey.END_TXN, (0, 5), end_txn, END_NAMES, EndTxnIn),
    Handler(
        ApiKey.TXN_OFFSET_COMMIT, (0, 5), txn_offset_commit, TXN_COMMIT_NAMES, TxnOffsetCommitIn
    ),
)
