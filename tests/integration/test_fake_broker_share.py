"""KIP-932 share groups on the fake broker: ShareGroupHeartbeat, ShareFetch and
ShareAcknowledge (acquisition locks, delivery counts, release, reject, lock expiry, share
sessions), the share-group offsets APIs, FindCoordinator key type 2 and ListGroups type
"share"; protocol-level cases with our own client, then confluent-kafka's ShareConsumer
against the 4.2 and 4.3 spec sets."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from tests.support.fake_protocol import Speaker, wait_until
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
pytestmark = pytest.mark.skipif(not NEWEST.is_dir(), reason="no spec corpora")
NONE, INVALID_REQUEST, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND = 0, 42, 68, 69
UNSUPPORTED_VERSION, FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID = 35, 110, 25
INVALID_RECORD_STATE, SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH = 121, 122, 123
ACCEPT, RELEASE, REJECT = 1, 2, 3


def produce(c: FakeCluster, topic: str, values: list[bytes], partition: int = 0) -> None:
    records = c.package.module("records")
    batch = records.build_batch(
        [records.Record(n, 1_700_000_000_000, None, v) for n, v in enumerate(values)]
    )
    with Speaker(c) as speak:
        answer = speak(
            ApiKey.PRODUCE,
            acks=-1,
            timeout_ms=1000,
            topic_data=[
                {
                    "name": topic,
                    "topic_id": c.state.topics[topic].topic_id,
                    "partition_data": [{"index": partition, "records": bytes(batch)}],
                }
            ],
        )
        assert answer.responses[0].partition_responses[0].error_code == NONE


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(NEWEST, release="4.3", topics={"t": 1}) as c:
        c.call(
            lambda: c.state.configs.setdefault((32, "sg"), {}).update(
                {"share.auto.offset.reset": "earliest"}
            )
        )
        yield c
        assert c.failures == []


class ShareMember:
    def __init__(self, speak: Speaker, group: str = "sg") -> None:
        self.speak, self.group = speak, group
        self.member_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        self.epoch = 0
        self.session = 0
        self.assigned: dict[uuid.UUID, list[int]] = {}

    def beat(self, topics: list[str] | None = None, epoch: int | None = None) -> Any:
        answer = self.speak(
            ApiKey.SHARE_GROUP_HEARTBEAT,
            group_id=self.group,
            member_id=self.member_id,
            member_epoch=self.epoch if epoch is None else epoch,
            subscribed_topic_names=(
                topics if topics is not None else (["t"] if self.epoch == 0 else None)
            ),
        )
        if answer.error_code == NONE:
            self.epoch = answer.member_epoch
            if answer.assignment is not None:
                self.assigned = {
                    tp.topic_id: sorted(tp.partitions) for tp in answer.assignment.topic_partitions
                }
        return answer

    def fetch(
        self, c: FakeCluster, acks: list[tuple[int, int, int]] = (), *, wait_ms: int = 0, **kw: Any
    ) -> Any:
        tid = c.state.topics["t"].topic_id
        batches = [
            {"first_offset": f, "last_offset": l, "acknowledge_types": [k]} for f, l, k in acks
        ]
        answer = self.speak(
            ApiKey.SHARE_FETCH,
            group_id=self.group,
            member_id=self.member_id,
            share_session_epoch=self.session,
            max_wait_ms=wait_ms,
            min_bytes=1,
            max_bytes=1 << 20,
            max_records=kw.pop("max_records", 500),
            batch_size=500,
            topics=[
                {
                    "topic_id": tid,
                    "partitions": [{"partition_index": 0, "acknowledgement_batches": batches}],
                }
            ],
            **kw,
        )
        if answer.error_code == NONE:
            self.session = self.session + 1 if self.session >= 0 else self.session
        return answer

    def acknowledge(
        self, c: FakeCluster, acks: list[tuple[int, int, int]], final: bool = False
    ) -> Any:
        tid = c.state.topics["t"].topic_id
        answer = self.speak(
            ApiKey.SHARE_ACKNOWLEDGE,
            group_id=self.group,
            member_id=self.member_id,
            share_session_epoch=-1 if final else self.session,
            topics=[
                {
                    "topic_id": tid,
                    "partitions": [
                        {
                            "partition_index": 0,
                            "acknowledgement_batches": [
                                {"first_offset": f, "last_offset": l, "acknowledge_types": [k]}
                                for f, l, k in acks
                            ],
                        }
                    ],
                }
            ],
        )
        if answer.error_code == NONE and not final:
            self.session += 1
        return answer


def acquired(answer: Any) -> list[tuple[int, int, int]]:
    return [
        (a.first_offset, a.last_offset, a.delivery_count)
        for t in answer.responses
        for p in t.partitions
        for a in p.acquired_records
    ]


def partition(answer: Any) -> Any:
    return answer.responses[0].partitions[0]


def test_members_share_a_partition_record_by_record(cluster: FakeCluster) -> None:
    produce(cluster, "t", [f"v{n}".encode() for n in range(6)])
    with Speaker(cluster) as speak:
        a, b = ShareMember(speak), ShareMember(speak)
        assert a.beat().error_code == NONE and b.beat().error_code == NONE
        a.beat()
        tid = cluster.state.topics["t"].topic_id
        assert a.assigned == {tid: [0]} and b.assigned == {tid: [0]}  # both get the partition
        first = a.fetch(cluster, max_records=1, share_acquire_mode=1)
        assert acquired(first) == [(0, 0, 1)]
        assert first.acquisition_lock_timeout_ms == 30000
        second = b.fetch(cluster)
        assert acquired(second) == [(1, 5, 1)]  # what a holds is not b's
        values = [
            r.value
            for batch in cluster.package.module("records").iter_batches(partition(second).records)
            for r in batch.records()
        ]
        assert values[1:] == [f"v{n}".encode() for n in range(1, 6)]
        wrong = b.acknowledge(cluster, [(0, 0, ACCEPT)])
        assert partition(wrong).error_code == INVALID_RECORD_STATE
        # a range wider than what is in flight is refused before any work (a hostile peer)
        huge = b.acknowledge(cluster, [(1, 10**15, ACCEPT)])
        assert partition(huge).error_code == INVALID_RECORD_STATE
        released = a.fetch(cluster, acks=[(0, 0, RELEASE)], max_records=1, share_acquire_mode=1)
        assert partition(released).acknowledge_error_code == NONE
        assert acquired(released) == [(0, 0, 2)]  # delivered a second time
        b.acknowledge(cluster, [(1, 4, ACCEPT), (5, 5, REJECT)])
        a.acknowledge(cluster, [(0, 0, ACCEPT)])
        share = cluster.state.groups["sg"].modern.shares[(tid, 0)]
        assert share.start == 6 and share.records == {}


def test_locks_expire_and_the_delivery_limit_archives() -> None:
    with FakeCluster(NEWEST, release="4.3", topics={"t": 1}) as c:
        c.call(
            lambda: c.state.configs.setdefault((32, "sg"), {}).update(
                {
                    "share.auto.offset.reset": "earliest",
                    "share.record.lock.duration.ms": "150",
                    "share.delivery.count.limit": "2",
                }
            )
        )
        produce(c, "t", [b"x"])
        with Speaker(c) as speak:
            m = ShareMember(speak)
            m.beat()
            assert acquired(m.fetch(c)) == [(0, 0, 1)]
            share = c.state.groups["sg"].modern.shares[(c.state.topics["t"].topic_id, 0)]
            # nobody acknowledges: the loop's timer gives it back
            assert wait_until(lambda: c.call(lambda: share.state_of(0) == "AVAILABLE"), 5)
            assert acquired(m.fetch(c)) == [(0, 0, 2)]
            assert wait_until(lambda: c.call(lambda: share.start == 1), 5)  # archived: done
            assert acquired(m.fetch(c)) == []
        assert c.failures == []


def test_a_waiting_share_fetch_is_woken_by_an_append(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        m = ShareMember(speak)
        m.beat()
        m.fetch(cluster)  # opens the session, nothing there
        cid = speak.client.send(
            speak.make(
                ApiKey.SHARE_FETCH,
                group_id="sg",
                member_id=m.member_id,
                share_session_epoch=1,
                max_wait_ms=10_000,
                min_bytes=1,
                max_bytes=1 << 20,
                max_records=10,
                batch_size=10,
                topics=[],
            )
        )
        assert wait_until(lambda: any(x.waiting for x in cluster.connections()), 5)
        produce(cluster, "t", [b"late"])
        while cid not in speak.client.answers:
            speak.client._pump()
        answer = speak.client.answers.pop(cid).response
        assert acquired(answer) == [(0, 0, 1)]


def test_share_sessions(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        m = ShareMember(speak)
        m.beat()
        m.session = 3
        assert m.fetch(cluster).error_code == SHARE_SESSION_NOT_FOUND
        m.session = 0
        assert m.fetch(cluster).error_code == NONE
        m.session = 7
        assert m.fetch(cluster).error_code == INVALID_SHARE_SESSION_EPOCH
        m.session = 0
        produce(cluster, "t", [b"a", b"b"])
        assert acquired(m.fetch(cluster)) == [(0, 1, 1)]
        closing = m.acknowledge(cluster, [(0, 0, ACCEPT)], final=True)
        assert closing.error_code == NONE
        share = cluster.state.groups["sg"].modern.shares[(cluster.state.topics["t"].topic_id, 0)]
        assert share.start == 1 and share.state_of(1) == "AVAILABLE"  # released on close
        assert m.acknowledge(cluster, []).error_code == SHARE_SESSION_NOT_FOUND


def test_heartbeats(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        m = ShareMember(speak)
        assert m.beat(topics=[]).error_code == INVALID_REQUEST
        m.beat()
        assert m.beat(epoch=m.epoch + 1).error_code == FENCED_MEMBER_EPOCH
        stranger = ShareMember(speak)
        stranger.epoch = 3
        assert stranger.beat().error_code == UNKNOWN_MEMBER_ID
        listed = speak(ApiKey.LIST_GROUPS, types_filter=["share"]).groups
        assert [(g.group_id, g.group_type, g.protocol_type) for g in listed] == [
            ("sg", "share", "share")
        ]
        described = speak(ApiKey.SHARE_GROUP_DESCRIBE, group_ids=["sg", "nope"]).groups
        assert described[0].group_state == "Stable" and described[0].assignor_name == "simple"
        assert [tp.topic_name for tp in described[0].members[0].assignment.topic_partitions] == [
            "t"
        ]
        assert described[1].error_code == GROUP_ID_NOT_FOUND
        left = speak(
            ApiKey.SHARE_GROUP_HEARTBEAT, group_id="sg", member_id=m.member_id, member_epoch=-1
        )
        assert left.member_epoch == -1 and cluster.state.groups["sg"].state == "Empty"


def test_share_group_offsets_apis(cluster: FakeCluster) -> None:
    produce(cluster, "t", [b"a", b"b", b"c", b"d"])
    with Speaker(cluster) as speak:
        m = ShareMember(speak)
        m.beat()
        m.fetch(cluster, max_records=1, share_acquire_mode=1)
        m.acknowledge(cluster, [(0, 0, ACCEPT)])
        busy = speak(
            ApiKey.ALTER_SHARE_GROUP_OFFSETS,
            group_id="sg",
            topics=[{"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 3}]}],
        )
        assert busy.error_code == NON_EMPTY_GROUP

        def described() -> Any:
            answer = speak(
                ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
                groups=[{"group_id": "sg", "topics": [{"topic_name": "t", "partitions": [0]}]}],
            )
            return answer.groups[0].topics[0].partitions[0]

        now = described()
        assert (now.start_offset, now.lag) == (1, 3)
        speak(ApiKey.SHARE_GROUP_HEARTBEAT, group_id="sg", member_id=m.member_id, member_epoch=-1)
        altered = speak(
            ApiKey.ALTER_SHARE_GROUP_OFFSETS,
            group_id="sg",
            topics=[{"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 3}]}],
        )
        assert altered.error_code == NONE
        assert (described().start_offset, described().lag) == (3, 1)
        deleted = speak(
            ApiKey.DELETE_SHARE_GROUP_OFFSETS, group_id="sg", topics=[{"topic_name": "t"}]
        )
        assert deleted.responses[0].error_code == NONE
        assert described().start_offset == -1
        other = speak(
            ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, groups=[{"group_id": "nope", "topics": None}]
        )
        assert other.groups[0].error_code == GROUP_ID_NOT_FOUND


def test_find_coordinator_for_share_partitions(cluster: FakeCluster) -> None:
    key = f"sg:{base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip('=')}:0"
    with Speaker(cluster) as speak:
        found = speak(ApiKey.FIND_COORDINATOR, key_type=2, coordinator_keys=[key, "sg:bad:0"])
        assert [c.error_code for c in found.coordinators] == [NONE, INVALID_REQUEST]
        old = speak(ApiKey.FIND_COORDINATOR, version=5, key_type=2, coordinator_keys=[key])
        assert old.coordinators[0].error_code == UNSUPPORTED_VERSION
        unknown = speak(ApiKey.FIND_COORDINATOR, key_type=7, coordinator_keys=["x"])
        assert unknown.coordinators[0].error_code == INVALID_REQUEST


# --- confluent-kafka's ShareConsumer ---------------------------------------------------------


@pytest.mark.parametrize("specs", ["4.2.1", "4.3.1"])
def test_confluent_share_consumers(specs: str) -> None:
    """Two ShareConsumers of one group read 60 records of two partitions between them, each
    record once; an explicit-mode consumer's RELEASE gives a record back to the group and
    REJECT does not."""
    from confluent_kafka import Producer, ShareConsumer

    if not (CORPORA / specs).is_dir():
        pytest.skip(f"no {specs} specs")
    with FakeCluster(
        CORPORA / specs,
        release=specs.rsplit(".", 1)[0],
        topics={"t": 2},
        group_share_heartbeat_interval_ms=200,
    ) as c:
        for group in ("sg", "explicit"):
            c.call(
                lambda g=group: c.state.configs.setdefault((32, g), {}).update(
                    {"share.auto.offset.reset": "earliest"}
                )
            )
        producer = Producer({"bootstrap.servers": c.bootstrap, "log_level": 0})
        for n in range(60):
            producer.produce("t", value=str(n).encode(), partition=n % 2)
        assert producer.flush(10) == 0

        def consumer(group: str, **conf: Any) -> Any:
            share = ShareConsumer({"bootstrap.servers": c.bootstrap, "group.id": group, **conf})
            share.subscribe(["t"])
            return share

        consumers = [consumer("sg"), consumer("sg")]
        got: list[bytes] = []
        for _ in range(200):
            for each in consumers:
                for message in each.poll(0.05) or []:
                    if message.error() is None:
                        got.append(message.value())
            if len(got) >= 60:
                break
        for each in consumers:
            each.poll(0.05)  # acknowledges the last ones (implicit mode)
            each.close()
        assert sorted(got, key=int) == [str(n).encode() for n in range(60)]

        from confluent_kafka import AcknowledgeType

        explicit = consumer("explicit", **{"share.acknowledgement.mode": "explicit"})
        decisions: dict[bytes, list[Any]] = {}
        for _ in range(200):
            for message in explicit.poll(0.05) or []:
                value = message.value()
                decisions.setdefault(value, []).append(
                    message.delivery_count() if hasattr(message, "delivery_count") else None
                )
                kind = (
                    AcknowledgeType.RELEASE
                    if value == b"0" and len(decisions[value]) == 1
                    else (AcknowledgeType.REJECT if value == b"1" else AcknowledgeType.ACCEPT)
                )
                explicit.acknowledge(message, kind)
            if len(decisions) >= 60 and len(decisions[b"0"]) >= 2:
                break
        explicit.poll(0.05)
        explicit.close()
        assert len(decisions[b"0"]) == 2  # released, delivered again
        assert len(decisions[b"1"]) == 1  # rejected: archived
        assert all(len(v) == 1 for k, v in decisions.items() if k != b"0")
        group = c.state.groups["explicit"]
        starts = {index: s.start for (_, index), s in group.modern.shares.items()}
        assert starts == {0: 30, 1: 30}
        assert c.failures == []
