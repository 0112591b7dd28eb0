"""The classic group coordinator's rules that clients depend on (apache/kafka
``GroupMetadataManager``, ``ClassicGroup``): commits during PreparingRebalance, ListGroups
per coordinator, OffsetCommit/OffsetFetch v10 by topic id, static membership (KIP-345).
Protocol-level cases with our own client, then real confluent-kafka consumers.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import FakeCluster
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
pytestmark = pytest.mark.skipif(not NEWEST.is_dir(), reason="no ../shared/kafka-specs")
REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID, UNKNOWN_TOPIC_ID = 27, 82, 100


def connect(c: FakeCluster, node: int = 0) -> Any:
    broker = c.state.brokers[node]
    return c.package.module("client").Client.connect(broker.host, broker.port)


class Member:
    """A group member speaking the protocol with our client (newest versions)."""

    def __init__(self, c: FakeCluster, group: str, instance: str | None = None) -> None:
        self.c, self.group, self.instance = c, group, instance
        self.client = connect(c, c.state.coordinator(group).node_id)
        self.member_id = ""
        self.generation = -1
        self.m = c.package.module

    def join_request(self, version: int | None = None) -> Any:
        join = self.m("join_group")
        return join.JoinGroupRequest(
            group_id=self.group,
            session_timeout_ms=30_000,
            rebalance_timeout_ms=5_000,
            member_id=self.member_id,
            group_instance_id=self.instance,
            protocol_type="consumer",
            protocols=[join.JoinGroupRequestProtocol(name="range", metadata=b"m")],
        )

    def send_join(self, version: int | None = None) -> int:
        return int(self.client.send(self.join_request(), version=version))

    def joined(self, cid: int) -> Any:
        while cid not in self.client.answers:
            self.client._pump()
        answer = self.client.answers.pop(cid).response
        if answer.error_code == 0:
            self.member_id, self.generation = answer.member_id, answer.generation_id
        return answer

    def get_member_id(self) -> None:
        """KIP-394's round trip for a dynamic member: the id to join with."""
        if self.instance is None and not self.member_id:
            answer = self.joined(self.send_join())
            assert answer.error_code == 79  # MEMBER_ID_REQUIRED
            self.member_id = answer.member_id

    def join(self, version: int | None = None) -> Any:
        if version is None or version >= 4:
            self.get_member_id()
        return self.joined(self.send_join(version))

    def sync(self, assignments: dict[str, bytes] | None = None) -> Any:
        sync = self.m("sync_group")
        return self.client.request(
            sync.SyncGroupRequest(
                group_id=self.group,
                generation_id=self.generation,
                member_id=self.member_id,
                group_instance_id=self.instance,
                protocol_type="consumer",
                protocol_name="range",
                assignments=[
                    sync.SyncGroupRequestAssignment(member_id=k, assignment=v)
                    for k, v in (assignments or {}).items()
                ],
            )
        )

    def heartbeat(self, member_id: str | None = None) -> int:
        answer = self.client.request(
            self.m("heartbeat").HeartbeatRequest(
                group_id=self.group,
                generation_id=self.generation,
                member_id=member_id or self.member_id,
                group_instance_id=self.instance,
            )
        )
        return int(answer.error_code)

    def commit(self, offset: int, version: int = 9) -> int:
        commit = self.m("offset_commit")
        request = commit.OffsetCommitRequest(
            group_id=self.group,
            generation_id_or_member_epoch=self.generation,
            member_id=self.member_id,
            group_instance_id=self.instance,
            topics=[
                commit.OffsetCommitRequestTopic(
                    name="t",
                    partitions=[
                        commit.OffsetCommitRequestPartition(
                            partition_index=0, committed_offset=offset
                        )
                    ],
                )
            ],
        )
        answer = self.client.request(request, version=version)
        return int(answer.topics[0].partitions[0].error_code)

    def leave(self) -> None:
        leave = self.m("leave_group")
        self.client.request(
            leave.LeaveGroupRequest(
                group_id=self.group,
                members=[
                    leave.LeaveGroupRequestMemberIdentity(
                        member_id=self.member_id, group_instance_id=self.instance
                    )
                ],
            )
        )

    def close(self) -> None:
        self.client.close()


def stable_pair(c: FakeCluster, group: str, **instances: str) -> tuple[Member, Member]:
    """Two members of one generation, Stable, the first the leader."""
    a = Member(c, group, instances.get("a"))
    b = Member(c, group, instances.get("b"))
    a.get_member_id()
    b.get_member_id()
    cid_a, cid_b = a.send_join(), b.send_join()
    first, second = a.joined(cid_a), b.joined(cid_b)
    assert first.error_code == second.error_code == 0
    assert first.generation_id == second.generation_id == 1
    leader, follower = (a, b) if first.leader == a.member_id else (b, a)
    assert leader.sync({a.member_id: b"A", b.member_id: b"B"}).error_code == 0
    assert follower.sync().error_code == 0
    assert c.state.groups[group].state == "Stable"
    return a, b


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(NEWEST, topics={"t": 1}) as c:
        yield c


def test_commits_during_preparing_rebalance_are_kept(cluster: FakeCluster) -> None:
    a, b = stable_pair(cluster, "g")
    try:
        a.leave()
        assert cluster.state.groups["g"].state == "PreparingRebalance"
        assert b.commit(42) == 0  # Kafka keeps it (ClassicGroup.validateOffsetCommit)
        assert cluster.state.groups["g"].offsets[("t", 0)].offset == 42
        assert b.heartbeat() == REBALANCE_IN_PROGRESS
        rejoined = b.join()
        assert rejoined.error_code == 0 and cluster.state.groups["g"].state == "CompletingRebalance"
        assert b.commit(43) == REBALANCE_IN_PROGRESS  # only CompletingRebalance refuses
        assert b.sync({b.member_id: b"B"}).error_code == 0
        assert b.commit(44) == 0
    finally:
        a.close()
        b.close()
    assert cluster.failures == []


def test_list_groups_is_answered_per_coordinator() -> None:
    with FakeCluster(NEWEST, brokers=3, topics={"t": 1}) as c:
        groups = [f"group-{n}" for n in range(12)]
        for group in groups:
            member = Member(c, group)
            assert member.join().error_code == 0
            member.close()
        listed: dict[int, list[str]] = {}
        for node in range(3):
            with connect(c, node) as client:
                answer = client.request(c.package.module("list_groups").ListGroupsRequest())
            listed[node] = sorted(g.group_id for g in answer.groups)
        for node, names in listed.items():
            assert names == sorted(g for g in groups if c.state.coordinator(g).node_id == node)
        assert sorted(sum(listed.values(), [])) == sorted(groups)  # each once
        assert all(listed.values())  # the 12 groups spread over the 3 brokers


def test_offsets_by_topic_id(cluster: FakeCluster) -> None:
    """OffsetCommit/OffsetFetch v10 name topics by id only: kept under the topic's name,
    read back by id and by name; an unknown id gets UNKNOWN_TOPIC_ID."""
    commit, fetch = cluster.package.module("offset_commit"), cluster.package.module("offset_fetch")
    topic_id = cluster.state.topics["t"].topic_id

    def committed(tid: uuid.UUID) -> int:
        request = commit.OffsetCommitRequest(
            group_id="ids",
            generation_id_or_member_epoch=-1,
            topics=[
                commit.OffsetCommitRequestTopic(
                    topic_id=tid,
                    partitions=[
                        commit.OffsetCommitRequestPartition(partition_index=0, committed_offset=9)
                    ],
                )
            ],
        )
        with connect(cluster) as client:
            answer = client.request(request, version=10)
        assert answer.topics[0].topic_id == tid
        return int(answer.topics[0].partitions[0].error_code)

    assert committed(uuid.uuid4()) == UNKNOWN_TOPIC_ID
    assert committed(topic_id) == 0
    assert cluster.state.groups["ids"].offsets[("t", 0)].offset == 9
    for version, topic in ((10, {"topic_id": topic_id}), (9, {"name": "t"})):
        request = fetch.OffsetFetchRequest(
            groups=[
                fetch.OffsetFetchRequestGroup(
                    group_id="ids",
                    topics=[fetch.OffsetFetchRequestTopics(partition_indexes=[0], **topic)],
                )
            ]
        )
        with connect(cluster) as client:
            answer = client.request(request, version=version)
        [partition] = answer.groups[0].topics[0].partitions
        assert (partition.error_code, partition.committed_offset) == (0, 9), version


@pytest.mark.parametrize("join_version", [5, 9])
def test_a_static_member_rejoins_without_a_rebalance(
    cluster: FakeCluster, join_version: int
) -> None:
    a, b = stable_pair(cluster, "static", a="instance-a", b="instance-b")
    group = cluster.state.groups["static"]
    generation, old_id = group.generation, a.member_id
    was_leader = group.leader == old_id
    restarted = Member(cluster, "static", "instance-a")  # a's process, restarted
    try:
        answer = restarted.join(version=join_version)
        assert answer.error_code == 0 and answer.generation_id == generation
        assert restarted.member_id != old_id and group.state == "Stable"
        assert group.generation == generation and group.static["instance-a"] == restarted.member_id
        if was_leader:
            if join_version >= 9:  # KIP-814: it is told it leads, and not to assign
                assert answer.skip_assignment and answer.leader == restarted.member_id
                assert len(answer.members) == 2
            else:  # told the old leader id: it does not assign again
                assert answer.leader == old_id and not answer.members
        synced = restarted.sync()
        assert (synced.error_code, synced.assignment) == (0, b"A")  # its assignment kept
        assert a.heartbeat() == FENCED_INSTANCE_ID  # the old process is fenced
        assert a.commit(1) == FENCED_INSTANCE_ID
        assert b.heartbeat() == 0 and restarted.heartbeat() == 0
    finally:
        for member in (a, b, restarted):
            member.close()
    assert cluster.failures == []


# --- real clients ---------------------------------------------------------------------------


def consume(bootstrap: str, group: str, seconds: float, **config: Any) -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 30_000,
            "log_level": 0,
            **config,
        }
    )
    consumer.subscribe(["t"])
    return consumer


def poll_until(consumers: list[Any], wanted: int, seconds: float) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + seconds
    while len(got) < wanted and time.monotonic() < deadline:
        for consumer in consumers:
            for message in consumer.consume(1000, 0.05):
                if message.error() is None:
                    got.append(message.value())
    return got


def produce(bootstrap: str, values: list[bytes]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 0})
    for value in values:
        producer.produce("t", value=value)
    assert producer.flush(20) == 0


def test_consumers_that_close_lose_no_commits() -> None:
    """Two consumers read 6,000 records (auto-commit) and close one after the other: the
    second commits while the group rebalances after the first left. A third consumer of
    the group then reads none of them again."""
    with FakeCluster(NEWEST, topics={"t": 6}) as c:
        values = [f"r{n}".encode() for n in range(6000)]
        produce(c.bootstrap, values)
        first = consume(c.bootstrap, "g", 30)
        second = consume(c.bootstrap, "g", 30)
        try:
            got = poll_until([first, second], 6000, 40)
            assert sorted(got) == sorted(values)
        finally:
            first.close()
            second.close()
        third = consume(c.bootstrap, "g", 30)
        try:
            again = poll_until([third], 1, 6)
            assert third.assignment()  # it did join and fetch
        finally:
            third.close()
        assert again == []
        assert sum(o.offset for o in c.state.groups["g"].offsets.values()) == 6000
        assert c.failures == []


def test_static_consumers_restart_without_a_rebalance() -> None:
    """confluent-kafka consumers with group.instance.id: one restarts (a static member
    leaves no LeaveGroup behind) and gets its partitions back in the same generation."""
    with FakeCluster(NEWEST, topics={"t": 4}) as c:
        a = consume(c.bootstrap, "static", 30, **{"group.instance.id": "a"})
        b = consume(c.bootstrap, "static", 30, **{"group.instance.id": "b"})
        restarted = None
        try:
            produce(c.bootstrap, [f"before{n}".encode() for n in range(40)])
            assert len(poll_until([a, b], 40, 30)) == 40
            generation = c.state.groups["static"].generation
            a.close()
            restarted = consume(c.bootstrap, "static", 30, **{"group.instance.id": "a"})
            produce(c.bootstrap, [f"after{n}".encode() for n in range(40)])
            got = poll_until([restarted, b], 40, 30)
            assert sorted(got) == sorted(f"after{n}".encode() for n in range(40))
            assert c.state.groups["static"].generation == generation
            assert len(c.state.groups["static"].members) == 2
        finally:
            b.close()
            if restarted is not None:
                restarted.close()
        assert c.failures == []


def test_a_silent_member_is_removed_by_the_groups_timer() -> None:
    """A member that stops heartbeating leaves after its session timeout although nobody
    sends the group anything (the group's watchdog on the loop's timers)."""
    with FakeCluster(NEWEST, topics={"t": 1}) as c:
        member = Member(c, "quiet")
        member.get_member_id()
        join = member.join_request()
        join.session_timeout_ms = 300
        join.member_id = member.member_id
        assert member.joined(member.client.send(join)).error_code == 0
        assert member.sync({member.member_id: b"A"}).error_code == 0
        group = c.state.groups["quiet"]
        deadline = time.monotonic() + 5
        while c.call(lambda: group.state) != "Empty" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group.state == "Empty" and not group.members
        member.close()
        assert c.failures == []


@pytest.mark.parametrize("delay_ms", [0, 400])
def test_the_initial_rebalance_delay_is_an_option(delay_ms: int) -> None:
    """group.initial.rebalance.delay.ms: the first rebalance of an empty group waits this
    long for more members (Kafka's default is 3000; the fake broker's 100)."""
    with FakeCluster(NEWEST, topics={"t": 1}, group_initial_rebalance_delay_ms=delay_ms) as c:
        member = Member(c, "g")
        member.get_member_id()
        started = time.monotonic()
        assert member.join().error_code == 0
        waited = time.monotonic() - started
        assert (waited >= 0.4) if delay_ms else (waited < 0.4)
        member.close()
