"""KIP-890 transactions v2 on the fake broker (Produce v12 adds its partition to the
transaction, EndTxn v5 bumps the producer epoch), AddPartitionsToTxn's brokers' batched
form (v4-5), and what admins read of transactions (DescribeTransactions,
ListTransactions, DescribeProducers). librdkafka 2.16 and kafka-python 3 send EndTxn v1
and v3 and Produce v10 and v9 against a 4.3 cluster: neither uses transactions v2, which
is tested here at protocol level."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from tests.support.fake_protocol import Speaker
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
pytestmark = pytest.mark.skipif(not NEWEST.is_dir(), reason="no spec corpora")
NONE, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE = 0, 47, 48
INVALID_PRODUCER_ID_MAPPING, TRANSACTIONAL_ID_NOT_FOUND, TRANSACTION_ABORTABLE = 49, 105, 120


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(NEWEST, release="4.3", topics={"t": 2}) as c:
        yield c
        assert c.failures == []


def init(speak: Speaker, txn_id: str) -> tuple[int, int]:
    answer = speak(
        ApiKey.INIT_PRODUCER_ID,
        transactional_id=txn_id,
        transaction_timeout_ms=60000,
        producer_id=-1,
        producer_epoch=-1,
    )
    assert answer.error_code == NONE
    return answer.producer_id, answer.producer_epoch


def produce(
    speak: Speaker, txn_id: str, pid: int, epoch: int, seq: int, version: int, partition: int = 0
) -> Any:
    records = speak.cluster.package.module("records")
    batch = records.build_batch(
        [records.Record(0, 1_700_000_000_000, None, b"v")],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        is_transactional=True,
    )
    answer = speak(
        ApiKey.PRODUCE,
        version=version,
        transactional_id=txn_id,
        acks=-1,
        timeout_ms=1000,
        topic_data=[
            {
                "name": "t",
                "topic_id": speak.cluster.state.topics["t"].topic_id,
                "partition_data": [{"index": partition, "records": bytes(batch)}],
            }
        ],
    )
    return answer.responses[0].partition_responses[0]


def end(speak: Speaker, txn_id: str, pid: int, epoch: int, commit: bool, version: int = 5) -> Any:
    return speak(
        ApiKey.END_TXN,
        version=version,
        transactional_id=txn_id,
        producer_id=pid,
        producer_epoch=epoch,
        committed=commit,
    )


def markers(c: FakeCluster, partition: int = 0) -> list[tuple[int, int]]:
    """(offset, producer epoch) of the control batches of a partition."""
    records = c.package.module("records")
    log = c.state.topics["t"].partitions[partition]
    return [
        (b.base_offset, records.RecordBatch(b.data).producer_epoch)
        for b in log.batches
        if b.control
    ]


def test_transactions_v2(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        pid, epoch = init(speak, "tx")
        # Produce v12: no AddPartitionsToTxn, the partition joins the transaction
        assert produce(speak, "tx", pid, epoch, 0, version=12).error_code == NONE
        txn = cluster.state.transactions["tx"]
        assert txn.partitions == {("t", 0)} and txn.state == "Ongoing"
        ended = end(speak, "tx", pid, epoch, commit=True)
        assert (ended.error_code, ended.producer_id, ended.producer_epoch) == (NONE, pid, epoch + 1)
        assert markers(cluster) == [(1, epoch + 1)]  # the marker carries the new epoch
        again = end(speak, "tx", pid, epoch, commit=True)  # a retry: the same answer
        assert (again.error_code, again.producer_epoch) == (NONE, epoch + 1)
        assert len(markers(cluster)) == 1
        # the next transaction: new epoch, sequences from 0; the old epoch is fenced
        assert produce(speak, "tx", pid, epoch, 1, version=12).error_code == INVALID_PRODUCER_EPOCH
        assert produce(speak, "tx", pid, epoch + 1, 0, version=12).error_code == NONE
        aborted = end(speak, "tx", pid, epoch + 1, commit=False)
        assert aborted.producer_epoch == epoch + 2
        log = cluster.state.topics["t"].partitions[0]
        assert [(a.first_offset, a.last_offset) for a in log.aborted] == [(2, 3)]
        assert txn.state == "CompleteAbort"


def test_transactions_v1_keep_their_epoch(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        pid, epoch = init(speak, "tx")
        # Produce v11 does not add the partition: the transaction stays empty
        produce(speak, "tx", pid, epoch, 0, version=11)
        assert cluster.state.transactions["tx"].partitions == set()
        added = speak(
            ApiKey.ADD_PARTITIONS_TO_TXN,
            version=3,
            v3_and_below_transactional_id="tx",
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[{"name": "t", "partitions": [0]}],
        )
        assert (
            added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
            == NONE
        )
        ended = end(speak, "tx", pid, epoch, commit=True, version=4)
        assert ended.error_code == NONE and cluster.state.transactions["tx"].epoch == epoch
        assert (
            end(speak, "tx", pid + 1, epoch, True, version=4).error_code
            == INVALID_PRODUCER_ID_MAPPING
        )
        assert (
            end(speak, "other", pid, epoch, True, version=4).error_code
            == INVALID_PRODUCER_ID_MAPPING
        )


@pytest.mark.parametrize(
    ("version", "missing"), [(4, INVALID_TXN_STATE), (5, TRANSACTION_ABORTABLE)]
)
def test_add_partitions_brokers_batched_form(
    cluster: FakeCluster, version: int, missing: int
) -> None:
    with Speaker(cluster) as speak:
        pid, epoch = init(speak, "tx")
        answer = speak(
            ApiKey.ADD_PARTITIONS_TO_TXN,
            version=version,
            transactions=[
                {
                    "transactional_id": "tx",
                    "producer_id": pid,
                    "producer_epoch": epoch,
                    "verify_only": False,
                    "topics": [{"name": "t", "partitions": [0]}],
                },
                {
                    "transactional_id": "tx",
                    "producer_id": pid,
                    "producer_epoch": epoch,
                    "verify_only": True,
                    "topics": [{"name": "t", "partitions": [0, 1]}],
                },
                {
                    "transactional_id": "nope",
                    "producer_id": 1,
                    "producer_epoch": 0,
                    "verify_only": True,
                    "topics": [{"name": "t", "partitions": [0]}],
                },
            ],
        )
        assert answer.error_code == NONE
        codes = [
            [p.partition_error_code for t in r.topic_results for p in t.results_by_partition]
            for r in answer.results_by_transaction
        ]
        assert codes == [[NONE], [NONE, missing], [INVALID_PRODUCER_ID_MAPPING]]
        assert cluster.state.transactions["tx"].partitions == {("t", 0)}


def test_describe_and_list_transactions_and_producers(cluster: FakeCluster) -> None:
    coordinator = cluster.state.coordinator("tx").node_id
    with Speaker(cluster, coordinator) as speak:
        pid, epoch = init(speak, "tx")
        produce(speak, "tx", pid, epoch, 0, version=12, partition=1)
        [state] = speak(
            ApiKey.DESCRIBE_TRANSACTIONS, transactional_ids=["tx", "nope"]
        ).transaction_states[:1]
        assert (state.transaction_state, state.producer_id, state.transaction_timeout_ms) == (
            "Ongoing",
            pid,
            60000,
        )
        assert [(t.topic, list(t.partitions)) for t in state.topics] == [("t", [1])]
        missing = speak(
            ApiKey.DESCRIBE_TRANSACTIONS, transactional_ids=["nope"]
        ).transaction_states[0]
        assert missing.error_code == TRANSACTIONAL_ID_NOT_FOUND
        listed = speak(
            ApiKey.LIST_TRANSACTIONS,
            state_filters=["Ongoing", "Bogus"],
            producer_id_filters=[],
            duration_filter=-1,
        )
        assert [t.transactional_id for t in listed.transaction_states] == ["tx"]
        assert list(listed.unknown_state_filters) == ["Bogus"]
        time.sleep(0.05)
        young = speak(
            ApiKey.LIST_TRANSACTIONS,
            state_filters=[],
            producer_id_filters=[],
            duration_filter=60_000,
        )
        assert young.transaction_states == ()
        pattern = speak(
            ApiKey.LIST_TRANSACTIONS,
            state_filters=[],
            producer_id_filters=[],
            duration_filter=-1,
            transactional_id_pattern="t.",
        )
        assert [t.transactional_id for t in pattern.transaction_states] == ["tx"]
        bad = speak(
            ApiKey.LIST_TRANSACTIONS,
            state_filters=[],
            producer_id_filters=[],
            duration_filter=-1,
            transactional_id_pattern="(",
        )
        assert bad.error_code == 128
    leader = cluster.state.topics["t"].partitions[1].leader
    with Speaker(cluster, leader) as speak:
        producers = speak(
            ApiKey.DESCRIBE_PRODUCERS, topics=[{"name": "t", "partition_indexes": [1]}]
        )
        [active] = producers.topics[0].partitions[0].active_producers
        assert (active.producer_id, active.producer_epoch, active.last_sequence) == (pid, epoch, 0)
        assert active.current_txn_start_offset == 0
