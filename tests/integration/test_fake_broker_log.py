"""Log maintenance on the fake broker: retention by time and size applied by the loop's
timer, DeleteRecords, compaction on demand (``cluster.compact()``), and the log start
offset as clients see it (ListOffsets, Fetch, OFFSET_OUT_OF_RANGE); ListOffsets by record
timestamp and its errors. Protocol level, then real consumers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from tests.support.fake_protocol import Speaker, wait_until
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
pytestmark = pytest.mark.skipif(not NEWEST.is_dir(), reason="no spec corpora")
NONE, OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC_OR_PARTITION = 0, 1, 3
INVALID_REQUEST, POLICY_VIOLATION, INVALID_RECORD = 42, 44, 87
T0 = 1_700_000_000_000


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(NEWEST, release="4.3", topics={"t": 1}) as c:
        yield c
        assert c.failures == []


def produce(
    speak: Speaker, topic: str, records: list[tuple[bytes | None, bytes | None]], ts: int = T0
) -> Any:
    module = speak.cluster.package.module("records")
    batch = module.build_batch([module.Record(n, ts + n, k, v) for n, (k, v) in enumerate(records)])
    answer = speak(
        ApiKey.PRODUCE,
        acks=-1,
        timeout_ms=1000,
        topic_data=[
            {
                "name": topic,
                "topic_id": speak.cluster.state.topics[topic].topic_id,
                "partition_data": [{"index": 0, "records": bytes(batch)}],
            }
        ],
    )
    return answer.responses[0].partition_responses[0]


def list_offset(speak: Speaker, timestamp: int, topic: str = "t", index: int = 0) -> Any:
    answer = speak(
        ApiKey.LIST_OFFSETS,
        replica_id=-1,
        topics=[
            {"name": topic, "partitions": [{"partition_index": index, "timestamp": timestamp}]}
        ],
    )
    return answer.topics[0].partitions[0]


def fetch(speak: Speaker, offset: int) -> Any:
    answer = speak(
        ApiKey.FETCH,
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=[
            {
                "topic_id": speak.cluster.state.topics["t"].topic_id,
                "partitions": [
                    {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
                ],
            }
        ],
    )
    return answer.responses[0].partitions[0]


def values(c: FakeCluster, data: bytes, start: int = 0) -> list[tuple[bytes | None, bytes | None]]:
    records = c.package.module("records")
    return [
        (r.key, r.value)
        for b in records.iter_batches(data)
        if not b.is_control
        for r in b.records()
        if r.offset >= start
    ]


def test_delete_records_moves_the_log_start_clients_see(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        for n in range(3):
            produce(speak, "t", [(None, f"{n}-{i}".encode()) for i in range(2)])
        deleted = speak(
            ApiKey.DELETE_RECORDS,
            topics=[{"name": "t", "partitions": [{"partition_index": 0, "offset": 3}]}],
            timeout_ms=1000,
        )
        result = deleted.topics[0].partitions[0]
        assert (result.error_code, result.low_watermark) == (NONE, 3)
        assert list_offset(speak, -2).offset_ == 3
        assert produce(speak, "t", [(None, b"more")]).log_start_offset == 3
        below = fetch(speak, 1)
        assert (below.error_code, below.log_start_offset) == (OFFSET_OUT_OF_RANGE, 3)
        from_start = fetch(speak, 3)
        assert from_start.log_start_offset == 3
        assert values(cluster, from_start.records, 3)[0] == (None, b"1-1")
        beyond = speak(
            ApiKey.DELETE_RECORDS,
            topics=[{"name": "t", "partitions": [{"partition_index": 0, "offset": 99}]}],
            timeout_ms=1000,
        )
        assert beyond.topics[0].partitions[0].error_code == OFFSET_OUT_OF_RANGE
        everything = speak(
            ApiKey.DELETE_RECORDS,
            topics=[
                {"name": "t", "partitions": [{"partition_index": 0, "offset": -1}]},
                {"name": "nope", "partitions": [{"partition_index": 0, "offset": 1}]},
            ],
            timeout_ms=1000,
        )
        assert everything.topics[0].partitions[0].low_watermark == 7
        assert everything.topics[1].partitions[0].error_code == UNKNOWN_TOPIC_OR_PARTITION
        assert cluster.state.topics["t"].partitions[0].batches == []


def test_retention_runs_on_the_loops_timer() -> None:
    with FakeCluster(
        NEWEST, release="4.3", topics={"old": 1, "big": 1}, log_retention_check_interval_ms=50
    ) as c:
        c.call(lambda: c.state.topics["old"].configs.update({"retention.ms": "60000"}))
        c.call(lambda: c.state.topics["big"].configs.update({"retention.bytes": "1"}))
        with Speaker(c) as speak:
            now = int(time.time() * 1000)
            produce(speak, "old", [(None, b"ancient")], ts=now - 3_600_000)
            produce(speak, "old", [(None, b"fresh")], ts=now)
            for n in range(3):
                produce(speak, "big", [(None, b"x" * 100)], ts=now)
            old, big = c.state.topics["old"].partitions[0], c.state.topics["big"].partitions[0]
            assert wait_until(lambda: c.call(lambda: (old.log_start, big.log_start)) == (1, 2), 5)
            assert list_offset(speak, -2, "old").offset_ == 1
            assert len(big.batches) == 1  # the newest batch stays, whatever retention.bytes
        assert c.failures == []


def test_compaction_keeps_the_last_record_of_each_key() -> None:
    with FakeCluster(NEWEST, release="4.3", topics={"t": 1}) as c:
        c.call(
            lambda: c.state.topics["t"].configs.update(
                {"cleanup.policy": "compact", "delete.retention.ms": "0"}
            )
        )
        with Speaker(c) as speak:
            produce(speak, "t", [(b"a", b"1"), (b"b", b"1"), (b"a", b"2")])
            produce(speak, "t", [(b"c", b"1"), (b"b", None), (b"a", b"3")])
            keyless = produce(speak, "t", [(None, b"no key")])
            assert keyless.error_code == INVALID_RECORD
            assert "without key" in keyless.error_message
            assert c.compact() == 3  # a:1, b:1, a:2
            kept = fetch(speak, 0)
            assert values(c, kept.records) == [(b"c", b"1"), (b"b", None), (b"a", b"3")]
            offsets = [
                r.offset
                for b in c.package.module("records").iter_batches(kept.records)
                for r in b.records()
            ]
            assert offsets == [3, 4, 5] and kept.high_watermark == 6
            assert c.compact() == 1  # past delete.retention.ms: the tombstone goes
            assert values(c, fetch(speak, 0).records) == [(b"c", b"1"), (b"a", b"3")]
            deleting = speak(
                ApiKey.DELETE_RECORDS,
                topics=[{"name": "t", "partitions": [{"partition_index": 0, "offset": 1}]}],
                timeout_ms=1000,
            )
            assert deleting.topics[0].partitions[0].error_code == POLICY_VIOLATION
        assert c.failures == []


def test_compaction_drops_aborted_transactions() -> None:
    with FakeCluster(NEWEST, release="4.3", topics={"t": 1}) as c:
        c.call(lambda: c.state.topics["t"].configs.update({"cleanup.policy": "compact,delete"}))
        records = c.package.module("records")
        log = c.state.topics["t"].partitions[0]
        from kafka_specgen.fake_broker.txn import write_marker

        def append(key: bytes, txn: bool) -> None:
            data = records.build_batch(
                [records.Record(0, T0, key, b"v")],
                producer_id=7 if txn else -1,
                producer_epoch=0 if txn else -1,
                is_transactional=txn,
            )
            log.append(
                data,
                1,
                max_timestamp=T0,
                producer_id=7 if txn else -1,
                transactional=txn,
                control=False,
            )

        def build() -> None:
            append(b"kept", False)
            append(b"aborted", True)
            write_marker(c.state, records, log, 7, 0, commit=False)

        c.call(build)
        assert c.compact() == 1
        kept = [r.key for b in log.batches for r in records.RecordBatch(b.data).records()]
        assert kept[0] == b"kept" and b"aborted" not in kept


def test_list_offsets_by_time_and_its_errors(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        produce(speak, "t", [(None, b"a"), (None, b"b"), (None, b"c")], ts=T0)  # T0, +1, +2
        produce(speak, "t", [(None, b"d")], ts=T0 + 100)
        by_time = list_offset(speak, T0 + 1)
        assert (by_time.offset_, by_time.timestamp) == (1, T0 + 1)  # the record, not the batch
        newest = list_offset(speak, -3)
        assert (newest.offset_, newest.timestamp) == (3, T0 + 100)
        assert list_offset(speak, T0 + 1000).offset_ == -1
        assert list_offset(speak, -4).offset_ == 0  # earliest local: no tiered storage here
        assert list_offset(speak, -5).offset_ == -1
        assert list_offset(speak, -1, index=5).error_code == UNKNOWN_TOPIC_OR_PARTITION
        assert list_offset(speak, -1, topic="nope").error_code == UNKNOWN_TOPIC_OR_PARTITION
        twice = speak(
            ApiKey.LIST_OFFSETS,
            replica_id=-1,
            topics=[
                {
                    "name": "t",
                    "partitions": [
                        {"partition_index": 0, "timestamp": -1},
                        {"partition_index": 0, "timestamp": -2},
                    ],
                }
            ],
        )
        assert [p.error_code for p in twice.topics[0].partitions] == [INVALID_REQUEST] * 2


@pytest.mark.parametrize("client", ["confluent", "kafka-python"])
def test_consumers_start_at_the_new_log_start(client: str) -> None:
    """After DeleteRecords, a new consumer (auto.offset.reset=earliest) starts at the log
    start offset, and one with a committed offset below it is reset there."""
    with FakeCluster(NEWEST, release="4.3", topics={"t": 1}) as c:
        with Speaker(c) as speak:
            produce(speak, "t", [(None, str(n).encode()) for n in range(10)])
            speak(
                ApiKey.DELETE_RECORDS,
                topics=[{"name": "t", "partitions": [{"partition_index": 0, "offset": 6}]}],
                timeout_ms=1000,
            )
        if client == "confluent":
            from confluent_kafka import Consumer

            consumer = Consumer(
                {
                    "bootstrap.servers": c.bootstrap,
                    "group.id": "g",
                    "auto.offset.reset": "earliest",
                    "log_level": 0,
                }
            )
            consumer.subscribe(["t"])
            got: list[bytes] = []
            deadline = time.monotonic() + 20
            while len(got) < 4 and time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    got.append(message.value())
            consumer.close()
        else:
            from kafka import KafkaConsumer

            kp = KafkaConsumer(
                "t",
                bootstrap_servers=c.bootstrap,
                group_id="g",
                auto_offset_reset="earliest",
                consumer_timeout_ms=10_000,
            )
            got = []
            for message in kp:
                got.append(message.value)
                if len(got) == 4:
                    break
            kp.close()
        assert got == [b"6", b"7", b"8", b"9"]
        assert c.failures == []
