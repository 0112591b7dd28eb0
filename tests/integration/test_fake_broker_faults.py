"""Fault injection with librdkafka's mock cluster names (``push_request_errors``,
``broker_set_down``, ``partition_set_leader``, ``coordinator_set``, ...) and kfake's held
requests: each at protocol level with our own client, and with a real client reacting as
it does against Kafka (confluent-kafka retries, follows a leader or a coordinator move,
waits for a held request).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import DISCONNECT, ApiKey, FakeCluster
from tests.support.fake_requests import connect, fetch_request, fetched, log_end
from tests.support.fake_requests import metadata_request, produce_request, produced
from tests.support.genpkg import CORPORA

SPECS, RELEASE = CORPORA / "4.1.2", "4.1"
NONE, NOT_LEADER, MESSAGE_TOO_LARGE = 0, 6, 10
LEADER_NOT_AVAILABLE, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 5, 15, 16
QUIET = {"log_level": 0}


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(SPECS, release=RELEASE, brokers=3, topics={"t": 3}) as c:
        yield c
        assert c.failures == []


def leader(c: FakeCluster, topic: str, partition: int = 0) -> int:
    return int(c.call(lambda: c.state.topics[topic].partitions[partition].leader))


def requests_of(c: FakeCluster, api: int) -> list[int]:
    """The brokers the tracked requests of ``api`` went to, in order."""
    return [r.broker for r in c.get_requests() if r.api_key == api]


def confluent_producer(c: FakeCluster, **config: Any) -> Any:
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": c.bootstrap, **QUIET, **config})


def confluent_consumer(c: FakeCluster, group: str, **config: Any) -> Any:
    from confluent_kafka import Consumer

    return Consumer(
        {
            "bootstrap.servers": c.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **QUIET,
            **config,
        }
    )


def poll_values(consumer: Any, count: int, within: float = 20.0) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + within
    while len(got) < count and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            got.append(message.value())
    return got


# --- errors ------------------------------------------------------------------------------------


def test_request_errors_are_taken_in_order_and_the_handler_never_sees_them(
    cluster: FakeCluster,
) -> None:
    c = cluster
    node = leader(c, "t", 0)
    c.push_request_errors(ApiKey.PRODUCE, ["NOT_LEADER_OR_FOLLOWER", NONE, MESSAGE_TOO_LARGE])
    with connect(c, node) as client:
        answers = [produced(client.request(produce_request(c, "t", {0: [b"v"]}))) for _ in "1234"]
    assert answers == [
        {0: (NOT_LEADER, -1)},  # refused: nothing appended
        {0: (NONE, 0)},  # NONE: answered as usual
        {0: (MESSAGE_TOO_LARGE, -1)},
        {0: (NONE, 1)},  # the stack is empty: as usual again
    ]
    assert log_end(c, "t", 0) == 2


def test_disconnect_closes_the_connection_then_requests_are_answered_again(
    cluster: FakeCluster,
) -> None:
    c = cluster
    c.push_request_errors("Metadata", [DISCONNECT])
    errors = c.package.module("connection")
    with connect(c) as client:
        with pytest.raises(errors.ConnectionFailedError):
            client.request(metadata_request(c, ["t"]))
    with connect(c) as client:
        assert client.request(metadata_request(c, ["t"])).topics[0].error_code == NONE


def test_errors_on_a_flat_api_and_on_one_broker_only(cluster: FakeCluster) -> None:
    c = cluster
    find = c.package.module("find_coordinator")
    request = find.FindCoordinatorRequest(key="g", key_type=0)
    c.broker_push_request_errors(1, ApiKey.FIND_COORDINATOR, [COORDINATOR_NOT_AVAILABLE])
    with connect(c, 0) as first, connect(c, 1) as second:
        assert first.request(request, version=3).error_code == NONE
        refused = second.request(request, version=3)
        assert (refused.error_code, refused.node_id) == (COORDINATOR_NOT_AVAILABLE, -1)
        assert second.request(request, version=3).error_code == NONE


def test_clear_request_errors(cluster: FakeCluster) -> None:
    c = cluster
    c.push_request_errors(ApiKey.METADATA, ["UNKNOWN_SERVER_ERROR"] * 3)
    c.clear_request_errors("METADATA")
    with connect(c) as client:
        assert client.request(metadata_request(c, ["t"])).topics[0].error_code == NONE


def test_bad_arguments_are_refused_with_one_line(cluster: FakeCluster) -> None:
    c = cluster
    with pytest.raises(ValueError, match="no Kafka error named 'NOT_AN_ERROR'"):
        c.push_request_errors(ApiKey.PRODUCE, ["NOT_AN_ERROR"])
    with pytest.raises(ValueError, match="no Kafka API named 'Producer'"):
        c.push_request_errors("Producer", [NOT_LEADER])
    with pytest.raises(ValueError, match="no broker 7 in the cluster"):
        c.broker_set_rtt(7, 10)
    with pytest.raises(ValueError, match="no partitions to fail"):
        c.push_partition_errors(ApiKey.METADATA, "t", 0, [NOT_LEADER])
    with pytest.raises(ValueError, match="'group' or 'transaction'"):
        c.coordinator_set("share", "g", 0)


def test_partition_errors_hit_that_partition_only(cluster: FakeCluster) -> None:
    c = cluster
    c.partition_set_leader("t", 1, 0)
    c.partition_set_leader("t", 2, 0)
    c.push_partition_errors(ApiKey.PRODUCE, "t", 1, ["NOT_LEADER_OR_FOLLOWER"])
    c.push_partition_errors(ApiKey.FETCH, "t", 2, [MESSAGE_TOO_LARGE])
    with connect(c, 0) as client:
        first = produced(client.request(produce_request(c, "t", {1: [b"a"], 2: [b"b"]})))
        second = produced(client.request(produce_request(c, "t", {1: [b"c"], 2: [b"d"]})))
        answers = [fetched(client.request(fetch_request(c, "t", [1, 2]))) for _ in "12"]
    assert first == {1: (NOT_LEADER, -1), 2: (NONE, 0)}
    assert second == {1: (NONE, 0), 2: (NONE, 1)}
    assert answers[0][2] == (MESSAGE_TOO_LARGE, 0) and answers[0][1][0] == NONE
    assert answers[1][2][0] == NONE and answers[1][2][1] > 0
    assert (log_end(c, "t", 1), log_end(c, "t", 2)) == (1, 2)


def test_librdkafka_producer_retries_through_not_leader(cluster: FakeCluster) -> None:
    c = cluster
    c.start_request_tracking()
    c.push_request_errors(ApiKey.PRODUCE, ["NOT_LEADER_OR_FOLLOWER"] * 3)
    producer = confluent_producer(c, **{"enable.idempotence": True})
    failures: list[Any] = []
    for i in range(5):
        producer.produce(
            "t", value=b"%d" % i, partition=0, on_delivery=lambda e, m: failures.append(e)
        )
    assert producer.flush(20) == 0
    assert failures == [None] * 5
    assert log_end(c, "t", 0) == 5  # each record once: the refused requests appended nothing
    assert len(requests_of(c, ApiKey.PRODUCE)) >= 4


def test_librdkafka_consumer_reads_through_partition_errors(cluster: FakeCluster) -> None:
    c = cluster
    producer = confluent_producer(c)
    for i in range(6):
        producer.produce("t", value=b"%d" % i, partition=i % 3)
    assert producer.flush(10) == 0
    c.push_partition_errors(ApiKey.FETCH, "t", 1, ["NOT_LEADER_OR_FOLLOWER"] * 2)
    consumer = confluent_consumer(c, "reader")
    consumer.subscribe(["t"])
    try:
        assert sorted(poll_values(consumer, 6)) == [b"%d" % i for i in range(6)]
    finally:
        consumer.close()
    assert c.call(lambda: c.routes.faults.partition_errors) == {}  # both were answered


# --- brokers down and up, round-trip times -------------------------------------------------


def test_broker_set_down_closes_it_and_set_up_listens_on_the_same_port(
    cluster: FakeCluster,
) -> None:
    c = cluster
    errors = c.package.module("connection")
    address = (c.state.brokers[1].host, c.state.brokers[1].port)
    with connect(c, 1) as client:
        c.broker_set_down(1)
        with pytest.raises(errors.ConnectionFailedError):
            client.request(metadata_request(c, ["t"]))
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=2).close()
    with connect(c, 0) as client:  # the others serve; Metadata still lists it
        brokers = client.request(metadata_request(c, None)).brokers
        assert sorted(b.node_id for b in brokers) == [0, 1, 2]
    c.broker_set_up(1)
    with connect(c, 1) as client:
        assert client.request(metadata_request(c, ["t"])).topics[0].error_code == NONE


def test_a_producer_waits_for_a_broker_that_comes_back(cluster: FakeCluster) -> None:
    c = cluster
    node = leader(c, "t", 0)
    producer = confluent_producer(c, **{"message.timeout.ms": 30000})
    producer.produce("t", value=b"before", partition=0)
    assert producer.flush(10) == 0
    c.broker_set_down(node)
    producer.produce("t", value=b"while down", partition=0)
    assert producer.flush(1.5) == 1  # not delivered while the leader is down
    assert log_end(c, "t", 0) == 1
    c.broker_set_up(node)
    assert producer.flush(20) == 0
    assert log_end(c, "t", 0) == 2


def test_rtt_holds_answers_back_without_serialising_pipelined_requests(
    cluster: FakeCluster,
) -> None:
    c = cluster
    rtt = 0.3
    c.broker_set_rtt(0, rtt * 1000)
    with connect(c, 0) as slow, connect(c, 1) as fast:
        started = time.monotonic()
        ids = [slow.send(metadata_request(c, ["t"])) for _ in range(5)]
        while not all(i in slow.answers for i in ids):
            slow._pump()
        pipelined = time.monotonic() - started
        started = time.monotonic()
        fast.request(metadata_request(c, ["t"]))
        other = time.monotonic() - started
        c.broker_set_rtt(0, 0)
        started = time.monotonic()
        slow.request(metadata_request(c, ["t"]))
        after = time.monotonic() - started
    assert rtt <= pipelined < 4 * rtt  # each held back rtt, none behind the others' rtt
    assert other < rtt and after < rtt


# --- leaders and coordinators ------------------------------------------------------------------


def test_partition_set_leader_moves_producers_and_consumers(cluster: FakeCluster) -> None:
    c = cluster
    old = leader(c, "t", 0)
    new = (old + 1) % 3
    producer = confluent_producer(c)
    for i in range(3):
        producer.produce("t", value=b"a%d" % i, partition=0)
    assert producer.flush(10) == 0
    consumer = confluent_consumer(c, "follower")
    consumer.assign([__import__("confluent_kafka").TopicPartition("t", 0, 0)])
    try:
        assert len(poll_values(consumer, 3)) == 3
        c.start_request_tracking()
        c.partition_set_leader("t", 0, new)
        for i in range(3):
            producer.produce("t", value=b"b%d" % i, partition=0)
        assert producer.flush(10) == 0
        assert poll_values(consumer, 3) == [b"b0", b"b1", b"b2"]
    finally:
        consumer.close()
    assert requests_of(c, ApiKey.PRODUCE)[-1] == new
    assert requests_of(c, ApiKey.FETCH)[-1] == new
    assert len(requests_of(c, ApiKey.FETCH)) < 50  # moved at once (KIP-951), no busy loop
    with connect(c, 0) as client:
        (topic,) = client.request(metadata_request(c, ["t"])).topics
        assert (topic.partitions[0].leader_id, topic.partitions[0].leader_epoch) == (new, 1)


def test_a_partition_without_leader(cluster: FakeCluster) -> None:
    c = cluster
    c.partition_set_leader("t", 0, -1)
    with connect(c) as client:
        (topic,) = client.request(metadata_request(c, ["t"])).topics
    assert (topic.partitions[0].error_code, topic.partitions[0].leader_id) == (
        LEADER_NOT_AVAILABLE,
        -1,
    )
    producer = confluent_producer(c, **{"message.timeout.ms": 30000})
    producer.produce("t", value=b"x", partition=0)
    assert producer.flush(1.5) == 1
    c.partition_set_leader("t", 0, 2)
    assert producer.flush(20) == 0
    assert log_end(c, "t", 0) == 1


def test_a_consumer_group_follows_its_coordinator(cluster: FakeCluster) -> None:
    c = cluster
    group = "moving"
    producer = confluent_producer(c)
    for i in range(6):
        producer.produce("t", value=b"%d" % i, partition=i % 3)
    assert producer.flush(10) == 0
    old = c.state.coordinator(group).node_id
    new = (old + 1) % 3
    consumer = confluent_consumer(c, group)
    consumer.subscribe(["t"])
    try:
        assert len(poll_values(consumer, 3)) == 3
        consumer.commit(asynchronous=False)
        c.start_request_tracking()
        c.coordinator_set("group", group, new)
        assert len(poll_values(consumer, 3)) == 3
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    commits = requests_of(c, ApiKey.OFFSET_COMMIT)
    assert commits and commits[-1] == new  # it asked where the group went, and went there
    assert requests_of(c, ApiKey.FIND_COORDINATOR)
    offsets = c.call(lambda: dict(c.state.groups[group].offsets))
    assert sum(o.offset for o in offsets.values()) == 6  # nothing lost on the way


def test_coordinator_set_for_a_transactional_id(cluster: FakeCluster) -> None:
    c = cluster
    find = c.package.module("find_coordinator")
    c.coordinator_set("transaction", "tx", 2)
    c.coordinator_set("group", "tx", 1)
    with connect(c) as client:
        as_txn = client.request(find.FindCoordinatorRequest(key="tx", key_type=1), version=3)
        as_group = client.request(find.FindCoordinatorRequest(key="tx", key_type=0), version=3)
        batched = client.request(
            find.FindCoordinatorRequest(key_type=1, coordinator_keys=["tx"]), version=4
        )
    assert (as_txn.node_id, as_group.node_id, batched.coordinators[0].node_id) == (2, 1, 2)


# --- held requests ----------------------------------------------------------------------------------


def test_a_held_produce_completes_once_released(cluster: FakeCluster) -> None:
    c = cluster
    producer = confluent_producer(c)
    producer.produce("t", value=b"warm-up", partition=0)
    assert producer.flush(10) == 0
    handle = c.hold(ApiKey.PRODUCE)
    producer.produce("t", value=b"held", partition=0)
    assert handle.wait(1, timeout=10)
    assert producer.flush(0.5) == 1  # held: no answer yet
    with connect(c, leader(c, "t", 0)) as other:  # other connections are answered meanwhile
        assert other.request(metadata_request(c, ["t"])).topics[0].error_code == NONE
    assert log_end(c, "t", 0) == 1  # not appended while held
    handle.release()
    assert producer.flush(10) == 0
    assert log_end(c, "t", 0) == 2


def test_a_held_request_holds_its_connection_and_is_answered_at_its_timeout(
    cluster: FakeCluster,
) -> None:
    c = cluster
    with c.hold("Metadata", node=0, timeout=0.4) as handle, connect(c, 0) as held:
        started = time.monotonic()
        first = held.send(metadata_request(c, ["t"]))
        behind = held.request(metadata_request(c, ["t"]))  # answered after the held one
        assert first in held.answers
        assert time.monotonic() - started >= 0.4
        assert behind.topics[0].error_code == NONE and handle.held >= 1
        with connect(c, 1) as elsewhere:  # the hold is broker 0's only
            started = time.monotonic()
            elsewhere.request(metadata_request(c, ["t"]))
            assert time.monotonic() - started < 0.4


def test_request_tracking(cluster: FakeCluster) -> None:
    c = cluster
    with connect(c) as client:
        client.request(metadata_request(c, ["t"]))  # before tracking: not kept
        c.start_request_tracking()
        client.request(metadata_request(c, ["t"]))
        deadline = time.monotonic() + 5
        while not c.get_requests() and time.monotonic() < deadline:
            time.sleep(0.01)
        c.stop_request_tracking()
        client.request(metadata_request(c, ["t"]))  # after: not kept
    (request,) = c.get_requests()
    assert (request.broker, request.api_key, request.client_id) == (
        0,
        ApiKey.METADATA,
        "fake-tests",
    )
    assert request.api_version == c.versions[ApiKey.METADATA][1]
    assert abs(request.timestamp - time.time()) < 30
    c.clear_requests()
    assert c.get_requests() == []


def test_fault_injection_is_thread_safe(cluster: FakeCluster) -> None:
    """Many threads push errors while clients send: every error is answered once."""
    c = cluster
    node = leader(c, "t", 0)

    def push() -> None:
        for _ in range(50):
            c.push_request_errors(ApiKey.PRODUCE, [MESSAGE_TOO_LARGE])

    threads = [threading.Thread(target=push) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with connect(c, node) as client:
        codes = [
            produced(client.request(produce_request(c, "t", {0: [b"v"]})))[0][0] for _ in range(210)
        ]
    assert codes.count(MESSAGE_TOO_LARGE) == 200 and codes[-10:] == [NONE] * 10
