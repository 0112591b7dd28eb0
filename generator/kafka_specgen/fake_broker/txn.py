"""Idempotent and transactional producers: InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, TxnOffsetCommit and EndTxn (which writes the COMMIT or ABORT markers).

A transaction's state changes at once (no PrepareCommit phase to wait out).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from .apikeys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .log import AbortedTxn
from .offsets import CommitTopicIn, commit_response
from .shapes import PLAIN, Names
from .state import Transaction

ZERO_UUID = uuid.UUID(int=0)

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
    }
)
END_NAMES = Names(absent={"producer_id": -1, "producer_epoch": -1})  # EndTxn v5, Kafka 4.0
TXN_COMMIT_NAMES = Names(absent={"topic_id": ZERO_UUID})


class InitProducerIdIn(Protocol):
    transactional_id: str | None


def init_producer_id(call: Call) -> Any:
    req: InitProducerIdIn = call.read(InitProducerIdIn)
    state = call.state
    if not req.transactional_id:
        return call.respond(
            error_code=ErrorCode.NONE, producer_id=state.new_producer_id(), producer_epoch=0
        )
    txn = state.transactions.get(req.transactional_id)
    if txn is None:
        txn = Transaction(req.transactional_id, state.new_producer_id(), 0)
        state.transactions[req.transactional_id] = txn
    else:
        if txn.partitions:  # a new producer instance fences the old one's transaction
            end_transaction(call, txn, commit=False)
        txn.epoch += 1
    return call.respond(
        error_code=ErrorCode.NONE, producer_id=txn.producer_id, producer_epoch=txn.epoch
    )


def _transaction(
    call: Call, transactional_id: str, producer_id: int, epoch: int
) -> tuple[Transaction | None, ErrorCode]:
    txn = call.state.transactions.get(transactional_id)
    if txn is None or txn.producer_id != producer_id:
        return None, ErrorCode.INVALID_TXN_STATE
    if txn.epoch != epoch:
        return None, ErrorCode.INVALID_PRODUCER_EPOCH
    return txn, ErrorCode.NONE


class TxnTopicIn(Protocol):
    name: str
    partitions: Sequence[int]


class AddPartitionsToTxnIn(Protocol):
    v3_and_below_transactional_id: str
    v3_and_below_producer_id: int
    v3_and_below_producer_epoch: int
    v3_and_below_topics: Sequence[TxnTopicIn]


def add_partitions_to_txn(call: Call) -> Any:
    req: AddPartitionsToTxnIn = call.read(AddPartitionsToTxnIn)
    topic_class = call.item(call.response, "results_by_topic_v3_and_below")
    partition_class = call.item(topic_class, "results_by_partition")
    txn, code = _transaction(
        call,
        req.v3_and_below_transactional_id,
        req.v3_and_below_producer_id,
        req.v3_and_below_producer_epoch,
    )
    results = []
    for t in req.v3_and_below_topics:
        topic = call.state.topics.get(t.name)
        codes = []
        for index in t.partitions:
            known = topic is not None and 0 <= index < len(topic.partitions)
            partition_code = code
            if code == ErrorCode.NONE and not known:
                partition_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if txn is not None and known:
                txn.partitions.add((t.name, index))
            codes.append(
                call.build(
                    partition_class, partition_index=index, partition_error_code=partition_code
                )
            )
        results.append(call.build(topic_class, name=t.name, results_by_partition=codes))
    return call.respond(results_by_topic_v3_and_below=results)


class AddOffsetsToTxnIn(Protocol):
    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str


def add_offsets_to_txn(call: Call) -> Any:
    req: AddOffsetsToTxnIn = call.read(AddOffsetsToTxnIn)
    txn, code = _transaction(call, req.transactional_id, req.producer_id, req.producer_epoch)
    if txn is not None:
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
    txn, code = _transaction(call, req.transactional_id, req.producer_id, req.producer_epoch)
    if txn is not None:
        end_transaction(call, txn, commit=req.committed)
    return call.respond(
        error_code=code, producer_id=req.producer_id, producer_epoch=req.producer_epoch
    )


def end_transaction(call: Call, txn: Transaction, *, commit: bool) -> None:
    """Write the marker to every partition of the transaction and close it there; commit
    or drop its pending offsets."""
    records = call.shapes.records
    kind = records.ControlType.COMMIT if commit else records.ControlType.ABORT
    key, value = records.encode_control(records.ControlRecord(kind, coordinator_epoch=0))
    now_ms = int(time.time() * 1000)
    for name, index in sorted(txn.partitions):
        topic = call.state.topics.get(name)
        if topic is None:
            continue
        log = topic.partitions[index]
        marker = records.build_batch(
            [records.Record(0, now_ms, key, value)],
            producer_id=txn.producer_id,
            producer_epoch=txn.epoch,
            is_transactional=True,
            is_control=True,
        )
        first = log.open_txns.pop(txn.producer_id, None)
        offset = log.append(
            marker,
            1,
            max_timestamp=now_ms,
            producer_id=txn.producer_id,
            transactional=True,
            control=True,
        )
        if not commit and first is not None:
            log.aborted.append(AbortedTxn(txn.producer_id, first, offset))
    if commit:
        for group_id, offsets in txn.pending_offsets.items():
            call.state.group(group_id).offsets.update(offsets)
    txn.partitions.clear()
    txn.groups.clear()
    txn.pending_offsets.clear()


HANDLERS = (
    Handler(ApiKey.INIT_PRODUCER_ID, (0, 6), init_producer_id, PLAIN, InitProducerIdIn),
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
