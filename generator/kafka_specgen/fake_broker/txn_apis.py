"""Idempotent and transactional producers: InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, TxnOffsetCommit and EndTxn (which writes the COMMIT or ABORT markers).

One transaction coordinator answers for every transactional id; a transaction's state
changes at once (no PrepareCommit phase to wait out).
"""

from __future__ import annotations

import time
from typing import Any

from .call import Call, field_of
from .group_apis import commit_offsets
from .log import AbortedTxn
from .state import (
    INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE,
    NONE,
    UNKNOWN_TOPIC_OR_PARTITION,
    Transaction,
)


def init_producer_id(call: Call) -> Any:
    req, state = call.request, call.state
    with state.lock:
        if not req.transactional_id:
            return call.reply(
                error_code=NONE, producer_id=state.new_producer_id(), producer_epoch=0
            )
        txn = state.transactions.get(req.transactional_id)
        if txn is None:
            txn = Transaction(req.transactional_id, state.new_producer_id(), 0)
            state.transactions[req.transactional_id] = txn
        else:
            if txn.partitions:  # a new producer instance fences the old one's transaction
                end_transaction(call, txn, commit=False)
            txn.epoch += 1
        return call.reply(error_code=NONE, producer_id=txn.producer_id, producer_epoch=txn.epoch)


def _transaction(call: Call, transactional_id: str, producer_id: int, epoch: int) -> Any:
    txn = call.state.transactions.get(transactional_id)
    if txn is None or txn.producer_id != producer_id:
        return None, INVALID_TXN_STATE
    if txn.epoch != epoch:
        return None, INVALID_PRODUCER_EPOCH
    return txn, NONE


def add_partitions_to_txn(call: Call) -> Any:
    req, state = call.request, call.state
    transactional_id = field_of(req, "v3_and_below_transactional_id", "transactional_id")
    producer_id = field_of(req, "v3_and_below_producer_id", "producer_id")
    epoch = field_of(req, "v3_and_below_producer_epoch", "producer_epoch")
    topics = field_of(req, "v3_and_below_topics", "topics")
    results_attr = (
        "results_by_topic_v3_and_below"
        if call.shapes.has(call.response, "results_by_topic_v3_and_below")
        else "results"
    )
    topic_class = call.item(call.response, results_attr)
    partitions_attr = (
        "results_by_partition"
        if call.shapes.has(topic_class, "results_by_partition")
        else "results"
    )
    partition_class = call.item(topic_class, partitions_attr)
    with state.lock:
        txn, code = _transaction(call, transactional_id, producer_id, epoch)
        results = []
        for t in topics:
            topic = state.topics.get(t.name)
            codes = []
            for index in t.partitions:
                known = topic is not None and 0 <= index < len(topic.partitions)
                partition_code = (
                    code if code != NONE else (NONE if known else UNKNOWN_TOPIC_OR_PARTITION)
                )
                if txn is not None and known:
                    txn.partitions.add((t.name, index))
                codes.append(
                    call.make(
                        partition_class,
                        partition_index=index,
                        partition_error_code=partition_code,
                        error_code=partition_code,
                    )
                )
            results.append(call.make(topic_class, name=t.name, **{partitions_attr: codes}))
    return call.reply(**{results_attr: results})


def add_offsets_to_txn(call: Call) -> Any:
    req, state = call.request, call.state
    with state.lock:
        txn, code = _transaction(call, req.transactional_id, req.producer_id, req.producer_epoch)
        if txn is not None:
            txn.groups.add(req.group_id)
    return call.reply(error_code=code)


def txn_offset_commit(call: Call) -> Any:
    """Offsets held back until the transaction commits (dropped if it aborts)."""
    req, state = call.request, call.state
    with state.lock:
        txn, code = _transaction(call, req.transactional_id, req.producer_id, req.producer_epoch)
        pending = None if txn is None else txn.pending_offsets.setdefault(req.group_id, {})
        return commit_offsets(call, pending, code)


def end_txn(call: Call) -> Any:
    req, state = call.request, call.state
    with state.lock:
        txn, code = _transaction(call, req.transactional_id, req.producer_id, req.producer_epoch)
        if txn is not None:
            end_transaction(call, txn, commit=req.committed)
    return call.reply(
        error_code=code, producer_id=req.producer_id, producer_epoch=req.producer_epoch
    )


def end_transaction(call: Call, txn: Transaction, *, commit: bool) -> None:
    """Write the marker to every partition of the transaction and close it there; commit
    or drop its pending offsets. The caller holds the state's lock."""
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
