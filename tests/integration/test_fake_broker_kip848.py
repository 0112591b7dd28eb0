"""KIP-848 consumer groups on the fake broker (apache/kafka ``GroupMetadataManager``,
``CurrentAssignmentBuilder``): member epochs, revocation before assignment, server-side
assignors, regex subscriptions, session and rebalance timeouts on the loop's timers, and
how OffsetCommit, OffsetFetch, ListGroups, DescribeGroups and JoinGroup meet consumer
groups. Protocol-level cases with our own client, then confluent-kafka's
``group.protocol=consumer`` consumers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from tests.support.fake_protocol import Speaker, wait_until
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
pytestmark = pytest.mark.skipif(not NEWEST.is_dir(), reason="no spec corpora")
NONE, UNKNOWN_MEMBER_ID, INCONSISTENT_GROUP_PROTOCOL = 0, 25, 23
INVALID_REQUEST, UNSUPPORTED_VERSION, GROUP_ID_NOT_FOUND = 42, 35, 69
FENCED_MEMBER_EPOCH, UNSUPPORTED_ASSIGNOR, STALE_MEMBER_EPOCH = 110, 112, 113
FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID, INVALID_REGULAR_EXPRESSION = 82, 111, 128


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(NEWEST, release="4.3", topics={"t": 4, "u": 2}) as c:
        yield c
        assert c.failures == []


def topic_id(c: FakeCluster, name: str) -> uuid.UUID:
    return c.state.topics[name].topic_id


class Member:
    """A consumer group member speaking ConsumerGroupHeartbeat v1."""

    def __init__(self, speaker: Speaker, group: str = "g", instance: str | None = None) -> None:
        self.speak, self.group, self.instance = speaker, group, instance
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.owned: dict[uuid.UUID, list[int]] = {}

    def beat(self, *, full: bool = False, **fields: Any) -> Any:
        joining = self.epoch == 0
        request = {
            "group_id": self.group,
            "member_id": self.member_id,
            "member_epoch": self.epoch,
            "instance_id": self.instance,
            "rebalance_timeout_ms": 5000 if joining or full else -1,
            "subscribed_topic_names": ["t"] if joining or full else None,
            "topic_partitions": (
                [] if joining else [{"topic_id": t, "partitions": p} for t, p in self.owned.items()]
            ),
            **fields,
        }
        answer = self.speak(ApiKey.CONSUMER_GROUP_HEARTBEAT, **request)
        if answer.error_code == NONE:
            self.epoch = answer.member_epoch
            if answer.assignment is not None:
                self.owned = {
                    tp.topic_id: sorted(tp.partitions) for tp in answer.assignment.topic_partitions
                }
        return answer

    def partitions(self) -> set[tuple[uuid.UUID, int]]:
        return {(t, p) for t, ps in self.owned.items() for p in ps}


def test_revocation_comes_before_assignment(cluster: FakeCluster) -> None:
    """A joins and owns all four partitions; when B joins, B gets nothing until A has said
    (in a heartbeat) that it stopped owning the partitions that move; no partition is
    ever owned by both."""
    with Speaker(cluster) as speak:
        a, b = Member(speak), Member(speak)
        first = a.beat()
        assert (first.error_code, first.member_epoch) == (NONE, 1)
        assert len(a.partitions()) == 4
        joined = b.beat()
        assert joined.error_code == NONE and b.partitions() == set()
        steps = 0
        while len(b.partitions()) < 2 and steps < 10:
            steps += 1
            a.beat()
            assert not (a.partitions() & b.partitions())
            b.beat()
            assert not (a.partitions() & b.partitions())
        assert len(a.partitions()) == len(b.partitions()) == 2
        assert a.epoch == b.epoch == cluster.state.groups["g"].modern.group_epoch
        assert cluster.state.groups["g"].state == "Stable"


def test_the_revoking_member_keeps_its_epoch_until_it_revoked(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        a, b = Member(speak), Member(speak)
        a.beat()
        b.beat()
        asked = a.beat()  # told to keep only two
        assert asked.member_epoch == 1 and len(a.partitions()) == 2
        group = cluster.state.groups["g"]
        assert group.state == "Reconciling" and group.modern.group_epoch == 2
        # still saying it owns all four: it stays at epoch 1
        still = speak(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            group_id="g",
            member_id=a.member_id,
            member_epoch=1,
            topic_partitions=[{"topic_id": topic_id(cluster, "t"), "partitions": [0, 1, 2, 3]}],
        )
        assert (still.error_code, still.member_epoch) == (NONE, 1)
        done = a.beat()
        assert done.member_epoch == 2


def test_member_epochs_are_checked(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        a = Member(speak)
        a.beat()
        ahead = speak(
            ApiKey.CONSUMER_GROUP_HEARTBEAT, group_id="g", member_id=a.member_id, member_epoch=7
        )
        assert (
            ahead.error_code == FENCED_MEMBER_EPOCH
            and "greater member epoch" in ahead.error_message
        )
        stranger = speak(
            ApiKey.CONSUMER_GROUP_HEARTBEAT, group_id="g", member_id="nobody", member_epoch=1
        )
        assert stranger.error_code == UNKNOWN_MEMBER_ID
        nowhere = speak(
            ApiKey.CONSUMER_GROUP_HEARTBEAT, group_id="missing", member_id="m", member_epoch=1
        )
        assert (nowhere.error_code, nowhere.error_message) == (
            GROUP_ID_NOT_FOUND,
            "Consumer group missing not found.",
        )
        speak(
            ApiKey.SHARE_GROUP_HEARTBEAT,
            group_id="shared",
            member_id="s",
            member_epoch=0,
            subscribed_topic_names=["t"],
        )
        other = Member(speak, "shared").beat()
        assert (other.error_code, other.error_message) == (
            GROUP_ID_NOT_FOUND,
            "Group shared is not a consumer group",
        )
        # the answer with epoch 2 was lost: epoch 1 with a subset of the assignment is fine
        b = Member(speak)
        b.beat()
        a.beat()
        a.beat()
        assert a.epoch == 2
        previous = speak(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            group_id="g",
            member_id=a.member_id,
            member_epoch=1,
            topic_partitions=[{"topic_id": t, "partitions": p} for t, p in a.owned.items()],
        )
        assert previous.error_code == NONE


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"group_id": ""}, "GroupId can't be empty."),
        ({"member_id": ""}, "MemberId can't be empty."),
        ({"rebalance_timeout_ms": -1}, "RebalanceTimeoutMs must be provided in first request."),
        ({"topic_partitions": None}, "TopicPartitions must be empty when (re-)joining."),
        ({"subscribed_topic_names": []}, "SubscribedTopicNames or SubscribedTopicRegex"),
        ({"member_epoch": -3}, "MemberEpoch is invalid."),
    ],
)
def test_invalid_heartbeats(cluster: FakeCluster, fields: dict[str, Any], message: str) -> None:
    with Speaker(cluster) as speak:
        answer = Member(speak).beat(**fields)
        assert answer.error_code == INVALID_REQUEST
        assert answer.error_message.startswith(message)


def test_server_assignors(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        bad = Member(speak).beat(server_assignor="sticky")
        assert bad.error_code == UNSUPPORTED_ASSIGNOR and "uniform, range" in bad.error_message
        members = [Member(speak, "ranged") for _ in range(2)]
        for m in members:
            m.beat(subscribed_topic_names=["t", "u"], server_assignor="range")
        for _ in range(4):
            for m in members:
                m.beat()
        t, u = topic_id(cluster, "t"), topic_id(cluster, "u")
        first, second = sorted(members, key=lambda m: m.member_id)
        assert first.owned == {t: [0, 1], u: [0]} and second.owned == {t: [2, 3], u: [1]}
        described = speak(ApiKey.CONSUMER_GROUP_DESCRIBE, group_ids=["ranged"])
        assert described.groups[0].assignor_name == "range"


def test_regex_subscriptions_follow_new_topics(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        m = Member(speak)
        joined = m.beat(subscribed_topic_names=None, subscribed_topic_regex="(t|orders-.*)")
        assert joined.error_code == NONE
        assert {tid for tid, _ in m.partitions()} == {topic_id(cluster, "t")}
        cluster.create_topic("orders-eu", 2)
        cluster.create_topic("other", 2)
        m.beat()
        m.beat()
        assert {tid for tid, _ in m.partitions()} == {
            topic_id(cluster, "t"),
            topic_id(cluster, "orders-eu"),
        }
        bad = Member(speak).beat(subscribed_topic_names=None, subscribed_topic_regex="(a")
        assert bad.error_code == INVALID_REGULAR_EXPRESSION


def test_sessions_expire_on_the_loops_timer() -> None:
    """A member that stops heartbeating is removed after group.consumer.session.timeout.ms
    although nobody sends the group anything."""
    with FakeCluster(
        NEWEST, release="4.3", topics={"t": 4}, group_consumer_session_timeout_ms=300
    ) as c:
        with Speaker(c) as speak:
            Member(speak).beat()
            group = c.state.groups["g"]
            assert len(group.modern.members) == 1
            assert wait_until(lambda: not c.call(lambda: len(group.modern.members)), timeout=5)
            assert group.state == "Empty" and group.modern.group_epoch == 2
        assert c.failures == []


def test_a_member_that_does_not_revoke_in_time_is_removed() -> None:
    with FakeCluster(NEWEST, release="4.3", topics={"t": 4}) as c:
        with Speaker(c) as speak:
            a, b = Member(speak), Member(speak)
            a.beat(rebalance_timeout_ms=200)
            b.beat()
            a.beat()  # asked to revoke, then never comes back
            group = c.state.groups["g"]
            assert wait_until(lambda: c.call(lambda: a.member_id not in group.modern.members), 5)
            for _ in range(3):
                b.beat()
            assert len(b.partitions()) == 4


def test_static_members_come_back_without_a_rebalance(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        a, b = Member(speak, instance="i-a"), Member(speak, instance="i-b")
        a.beat()
        b.beat()
        for _ in range(3):
            a.beat()
            b.beat()
        group = cluster.state.groups["g"]
        epoch, kept = group.modern.group_epoch, a.partitions()
        taken = Member(speak, instance="i-a").beat()
        assert taken.error_code == UNRELEASED_INSTANCE_ID
        gone = speak(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            group_id="g",
            member_id=a.member_id,
            member_epoch=-2,
            instance_id="i-a",
        )
        assert (gone.error_code, gone.member_epoch) == (NONE, -2)
        back = Member(speak, instance="i-a")
        answer = back.beat()
        assert answer.error_code == NONE and back.partitions() == kept
        assert group.modern.group_epoch == epoch  # no rebalance
        wrong = speak(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            group_id="g",
            member_id=a.member_id,
            member_epoch=back.epoch,
            instance_id="i-a",
        )
        assert wrong.error_code == FENCED_INSTANCE_ID


def commit(speak: Speaker, c: FakeCluster, member: str, epoch: int, version: int = 10) -> int:
    answer = speak(
        ApiKey.OFFSET_COMMIT,
        version=version,
        group_id="g",
        generation_id_or_member_epoch=epoch,
        member_id=member,
        topics=[
            {
                "name": "t",
                "topic_id": topic_id(c, "t"),
                "partitions": [{"partition_index": 0, "committed_offset": 5}],
            }
        ],
    )
    return int(answer.topics[0].partitions[0].error_code)


def test_offset_commit_and_fetch_check_member_epochs(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        m = Member(speak)
        m.beat()
        assert commit(speak, cluster, m.member_id, m.epoch) == NONE
        assert commit(speak, cluster, m.member_id, m.epoch + 1) == STALE_MEMBER_EPOCH
        assert commit(speak, cluster, "nobody", m.epoch) == UNKNOWN_MEMBER_ID
        assert commit(speak, cluster, m.member_id, m.epoch, version=8) == UNSUPPORTED_VERSION
        assert commit(speak, cluster, "", -1) == UNKNOWN_MEMBER_ID  # an admin: only when empty

        def fetch(member: str | None, epoch: int) -> Any:
            return speak(
                ApiKey.OFFSET_FETCH,
                groups=[
                    {
                        "group_id": "g",
                        "member_id": member,
                        "member_epoch": epoch,
                        "topics": [{"topic_id": topic_id(cluster, "t"), "partition_indexes": [0]}],
                    }
                ],
            ).groups[0]

        assert fetch(m.member_id, m.epoch).topics[0].partitions[0].committed_offset == 5
        assert fetch(None, -1).error_code == NONE  # an admin
        assert fetch(m.member_id, m.epoch + 3).error_code == STALE_MEMBER_EPOCH
        assert fetch("nobody", 1).error_code == UNKNOWN_MEMBER_ID


def test_list_describe_and_join_meet_consumer_groups(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        Member(speak).beat()
        join = cluster.package.module("join_group")
        classic = speak(
            ApiKey.JOIN_GROUP,
            group_id="c",
            session_timeout_ms=10000,
            rebalance_timeout_ms=10000,
            member_id="",
            protocol_type="consumer",
            protocols=[{"name": "range", "metadata": b""}],
        )
        assert classic.error_code == 79 and join  # a classic group beside it
        listed = speak(ApiKey.LIST_GROUPS, types_filter=["consumer"])
        assert [(g.group_id, g.group_type, g.protocol_type) for g in listed.groups] == [
            ("g", "consumer", "consumer")
        ]
        classic_groups = speak(ApiKey.LIST_GROUPS, types_filter=["Classic"]).groups
        assert [g.group_id for g in classic_groups] == ["c"]  # the filter ignores case
        states = speak(ApiKey.LIST_GROUPS, states_filter=["stable"]).groups
        assert [g.group_id for g in states] == ["g"]
        described = speak(ApiKey.DESCRIBE_GROUPS, groups=["g"]).groups[0]
        assert described.error_code == GROUP_ID_NOT_FOUND
        assert described.error_message == "Group g is not a classic group."
        refused = speak(
            ApiKey.JOIN_GROUP,
            group_id="g",
            session_timeout_ms=10000,
            rebalance_timeout_ms=10000,
            member_id="",
            protocol_type="consumer",
            protocols=[{"name": "range", "metadata": b""}],
        )
        assert refused.error_code == INCONSISTENT_GROUP_PROTOCOL
        group = speak(ApiKey.CONSUMER_GROUP_DESCRIBE, group_ids=["g", "nope"]).groups
        assert group[0].group_state == "Stable" and group[0].members[0].member_type == 1
        names = {tp.topic_name for tp in group[0].members[0].assignment.topic_partitions}
        assert names == {"t"}
        assert group[1].error_code == GROUP_ID_NOT_FOUND


def test_an_empty_classic_group_becomes_a_consumer_group(cluster: FakeCluster) -> None:
    """Offsets committed by a simple consumer stay when the group turns into a consumer
    group (and back)."""
    with Speaker(cluster) as speak:
        assert commit(speak, cluster, "", -1) == NONE
        assert cluster.state.groups["g"].type == "classic"
        m = Member(speak)
        m.beat()
        group = cluster.state.groups["g"]
        assert group.type == "consumer" and group.offsets[("t", 0)].offset == 5
        speak(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            group_id="g",
            member_id=m.member_id,
            member_epoch=-1,
        )
        assert group.state == "Empty"
        back = speak(
            ApiKey.JOIN_GROUP,
            group_id="g",
            session_timeout_ms=10000,
            rebalance_timeout_ms=10000,
            member_id="",
            protocol_type="consumer",
            protocols=[{"name": "range", "metadata": b""}],
        )
        assert back.error_code == 79 and group.type == "classic"


# --- confluent-kafka's KIP-848 consumer ------------------------------------------------------


@pytest.mark.parametrize("specs", ["4.0.2", "4.3.1"])
def test_confluent_consumers_rebalance_without_duplicates(specs: str) -> None:
    """Two, then three consumers of group.protocol=consumer share six partitions; one
    leaves; every record is read exactly once (commits after each record).

    The group's offsets start committed at 0: librdkafka 2.16 applies auto.offset.reset
    again (its own ListOffsets) to a partition it keeps across an assignment change when
    that partition had no committed offset when it first got it, and reads it again from
    the start, whatever the broker answers (seen in 1 run of 15 without the commits, in
    none of 30 with them)."""
    from confluent_kafka import Consumer, KafkaException, Producer

    total = 600
    if not (CORPORA / specs).is_dir():
        pytest.skip(f"no {specs} specs")
    release = specs.rsplit(".", 1)[0]
    with FakeCluster(
        CORPORA / specs, release=release, topics={"t": 6}, group_consumer_heartbeat_interval_ms=200
    ) as c:
        producer = Producer({"bootstrap.servers": c.bootstrap, "log_level": 0})
        for n in range(total):
            producer.produce("t", value=str(n).encode(), partition=n % 6)
        assert producer.flush(10) == 0
        with Speaker(c) as speak:  # an admin's commit (epoch -1) to the empty group
            answer = speak(
                ApiKey.OFFSET_COMMIT,
                group_id="g",
                generation_id_or_member_epoch=-1,
                member_id="",
                topics=[
                    {
                        "name": "t",
                        "topic_id": topic_id(c, "t"),
                        "partitions": [
                            {"partition_index": n, "committed_offset": 0} for n in range(6)
                        ],
                    }
                ],
            )
            assert {p.error_code for p in answer.topics[0].partitions} == {NONE}

        def consumer(name: str) -> Any:
            return Consumer(
                {
                    "bootstrap.servers": c.bootstrap,
                    "group.id": "g",
                    "group.protocol": "consumer",
                    "client.id": name,
                    "auto.offset.reset": "earliest",
                    "enable.auto.commit": False,
                    "log_level": 0,
                }
            )

        def commit_retrying(each: Any, message: Any) -> None:
            """A commit that raced a heartbeat bumping the member epoch gets
            STALE_MEMBER_EPOCH (as from Kafka): commit again, as an application would."""
            for _ in range(20):
                try:
                    each.commit(message=message, asynchronous=False)
                    return
                except KafkaException as exc:
                    assert exc.args[0].code() == STALE_MEMBER_EPOCH, exc
            raise AssertionError("the commit kept failing")

        seen: list[bytes] = []
        running = {name: consumer(name) for name in ("a", "b")}
        for each in running.values():
            each.subscribe(["t"])

        def pump(rounds: int) -> None:
            for _ in range(rounds):
                for each in running.values():
                    message = each.poll(0.02)
                    if message is not None and message.error() is None:
                        seen.append(message.value())
                        commit_retrying(each, message)

        pump(50)
        running["c"] = consumer("c")
        running["c"].subscribe(["t"])
        pump(60)
        assignments = {n: len(each.assignment()) for n, each in running.items()}
        running.pop("a").close()
        for _ in range(400):
            if len(seen) >= total:
                break
            pump(1)
        for each in running.values():
            each.close()
        assert len(seen) == total, (len(seen), len(set(seen)))
        assert sorted(seen, key=int) == [str(n).encode() for n in range(total)]
        assert sum(assignments.values()) == 6 and all(assignments.values())
        group = c.state.groups["g"]
        assert group.type == "consumer" and group.state == "Empty"
        assert c.failures == []
