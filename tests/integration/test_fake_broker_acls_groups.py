"""ACLs on the group APIs of the fake broker that KIP-848 (consumer groups), KIP-932 (share
groups) and KIP-496 (DeleteGroups, OffsetDelete) brought, as apache/kafka ``KafkaApis``
checks them: each refused at protocol level with Kafka's errors where Kafka puts them, then
granted; and confluent-kafka's KIP-848 consumer, ShareConsumer and admin client denied,
then granted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from kafka_specgen.fake_broker.acl import Operation
from kafka_specgen.fake_broker.state import CommittedOffset
from tests.integration.test_fake_broker_acls import GROUP, TOPIC, USERS, acl, grant
from tests.integration.test_fake_broker_acls_admin import as_admin, as_alice, confluent_admin
from tests.integration.test_fake_broker_kip848 import Member
from tests.integration.test_fake_broker_share import ShareMember, acquired, partition
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
pytestmark = pytest.mark.skipif(not NEWEST.is_dir(), reason="no spec corpora")
NONE, TOPIC_DENIED, GROUP_DENIED = 0, 29, 30
HIDDEN = "The group has described topic(s) that the client is not authorized to describe."
READ, DESCRIBE, DELETE = Operation.READ, Operation.DESCRIBE, Operation.DELETE


@pytest.fixture
def enforced() -> Iterator[FakeCluster]:
    """SASL PLAIN users, "admin" a super user; alice may do nothing until granted."""
    with FakeCluster(
        NEWEST, release="4.3", topics={"t": 2, "secret": 1}, users=USERS, superusers=["admin"]
    ) as c:
        c.call(
            lambda: c.state.configs.setdefault((32, "sg"), {}).update(
                {"share.auto.offset.reset": "earliest"}
            )
        )
        yield c
        assert c.failures == []


def revoke(c: FakeCluster, *acls: Any) -> None:
    def drop() -> None:
        for binding in acls:
            c.state.authorizer.acls.pop(binding)

    c.call(drop)


# --- KIP-848 --------------------------------------------------------------------------------


def test_consumer_group_heartbeat_and_describe(enforced: FakeCluster) -> None:
    c = enforced
    with as_alice(c) as speak, as_admin(c) as admin:
        member = Member(speak)
        assert (member.beat().error_code, member.epoch) == (GROUP_DENIED, 0)
        grant(c, acl(GROUP, "g", READ))
        assert member.beat().error_code == TOPIC_DENIED  # subscribed to "t" by name
        grant(c, acl(TOPIC, "t", DESCRIBE))
        assert member.beat().error_code == NONE and member.epoch > 0
        assert {p for _, p in member.partitions()} == {0, 1}
        # a regex matches the topics its member may describe only
        regex = Member(speak, group="g")
        joined = regex.beat(subscribed_topic_names=None, subscribed_topic_regex="t|secret")
        assert joined.error_code == NONE
        assert c.call(lambda: sorted(c.state.groups["g"].modern.subscribed)) == ["t"]
        grant(c, acl(TOPIC, "secret", DESCRIBE))
        regex.beat()
        assert c.call(lambda: sorted(c.state.groups["g"].modern.subscribed)) == ["secret", "t"]

        def describe(*groups: str) -> Any:
            return speak(
                ApiKey.CONSUMER_GROUP_DESCRIBE,
                group_ids=list(groups),
                include_authorized_operations=True,
            ).groups

        hers, theirs = describe("g", "other")
        assert (hers.error_code, theirs.error_code) == (NONE, GROUP_DENIED)
        assert hers.authorized_operations == (1 << READ) | (1 << DESCRIBE)
        targets = {
            (tp.topic_name, p)
            for m in hers.members
            for tp in m.target_assignment.topic_partitions
            for p in tp.partitions
        }
        assert targets == {("t", 0), ("t", 1), ("secret", 0)}
        # a group whose assignment names a topic alice may not describe: no members shown
        grant(c, acl(GROUP, "other", DESCRIBE))
        beat = Member(admin, group="other").beat(subscribed_topic_names=["t", "secret"])
        assert beat.error_code == NONE
        revoke(c, acl(TOPIC, "secret", DESCRIBE))
        [other] = describe("other")
        assert (other.error_code, other.error_message, other.members) == (TOPIC_DENIED, HIDDEN, ())


def test_confluent_kip848_consumer_denied_then_granted(enforced: FakeCluster) -> None:
    from confluent_kafka import Consumer, KafkaError, Producer

    c = enforced
    producer = Producer({**confluent_config("admin", c)})
    for n in range(4):
        producer.produce("t", value=b"%d" % n, partition=n % 2)
    assert producer.flush(10) == 0
    config = {
        **confluent_config("alice", c),
        "group.id": "readers",
        "group.protocol": "consumer",
        "auto.offset.reset": "earliest",
    }
    # FindCoordinator needs DESCRIBE on the group, the heartbeat READ
    grant(c, acl(GROUP, "readers", DESCRIBE), acl(TOPIC, "t", READ))
    consumer = Consumer(config)
    consumer.subscribe(["t"])
    refused = poll_error(consumer)
    consumer.close()
    assert refused is not None and refused.code() == KafkaError._FATAL  # librdkafka's choice
    assert "ConsumerGroupHeartbeat fatal error: Broker: Group authorization failed" in str(refused)
    grant(c, acl(GROUP, "readers", READ))
    consumer = Consumer(config)
    consumer.subscribe(["t"])
    got: list[bytes] = []
    deadline = time.monotonic() + 20
    while len(got) < 4 and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            got.append(message.value())
    consumer.close()
    assert sorted(got) == [b"0", b"1", b"2", b"3"]


# --- KIP-932 --------------------------------------------------------------------------------


def test_share_group_heartbeat_fetch_and_acknowledge(enforced: FakeCluster) -> None:
    c = enforced
    with as_admin(c) as admin:
        records = c.package.module("records")
        batch = records.build_batch(
            [records.Record(n, 0, None, v) for n, v in enumerate([b"a", b"b"])]
        )
        written = admin(
            ApiKey.PRODUCE,
            acks=-1,
            timeout_ms=1000,
            topic_data=[
                {
                    "name": "t",
                    "topic_id": c.state.topics["t"].topic_id,
                    "partition_data": [{"index": 0, "records": bytes(batch)}],
                }
            ],
        )
        assert written.responses[0].partition_responses[0].error_code == NONE
    with as_alice(c) as speak:
        member = ShareMember(speak)
        assert member.beat().error_code == GROUP_DENIED
        assert member.fetch(c).error_code == GROUP_DENIED
        grant(c, acl(GROUP, "sg", READ))
        assert member.beat().error_code == TOPIC_DENIED  # subscribes to "t" by name
        grant(c, acl(TOPIC, "t", DESCRIBE))
        assert member.beat().error_code == NONE
        fetched = member.fetch(c)
        assert (fetched.error_code, partition(fetched).error_code) == (NONE, TOPIC_DENIED)
        assert acquired(fetched) == []
        reading = acl(TOPIC, "t", READ)
        grant(c, reading)
        fetched = member.fetch(c, [])
        assert partition(fetched).error_code == NONE and acquired(fetched) == [(0, 1, 1)]
        revoke(c, reading)
        # the session's partition, named by an earlier request, is refused too
        again = speak(
            ApiKey.SHARE_FETCH,
            group_id="sg",
            member_id=member.member_id,
            share_session_epoch=member.session,
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=1 << 20,
            max_records=500,
            batch_size=500,
            topics=[],
        )
        assert [(p.partition_index, p.error_code) for p in again.responses[0].partitions] == [
            (0, TOPIC_DENIED)
        ]
        member.session += 1
        acked = member.acknowledge(c, [(0, 1, 1)])
        assert (acked.error_code, partition(acked).error_code) == (NONE, TOPIC_DENIED)
        grant(c, reading)
        assert partition(member.acknowledge(c, [(0, 1, 1)])).error_code == NONE
    share = c.state.groups["sg"].modern.shares[(c.state.topics["t"].topic_id, 0)]
    assert share.start == 2  # acknowledged once READ came back


def test_share_group_describe_and_offsets(enforced: FakeCluster) -> None:
    c = enforced
    with as_admin(c) as admin, as_alice(c) as speak:
        ShareMember(admin, "other").beat(["t", "secret"])
        owner = ShareMember(admin)
        owner.beat(["t", "secret"])
        described = speak(ApiKey.SHARE_GROUP_DESCRIBE, group_ids=["sg"]).groups
        assert [g.error_code for g in described] == [GROUP_DENIED]
        grant(c, acl(GROUP, "sg", DESCRIBE), acl(TOPIC, "t", DESCRIBE))
        [group] = speak(ApiKey.SHARE_GROUP_DESCRIBE, group_ids=["sg"]).groups
        assert (group.error_code, group.error_message, group.members) == (TOPIC_DENIED, HIDDEN, ())

        def offsets(topics: list[dict[str, Any]] | None) -> Any:
            return speak(
                ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
                groups=[
                    {"group_id": "sg", "topics": topics},
                    {"group_id": "other", "topics": None},
                ],
            ).groups

        named, other = offsets(
            [{"topic_name": "secret", "partitions": [0]}, {"topic_name": "t", "partitions": [0]}]
        )
        assert other.error_code == GROUP_DENIED and other.topics == ()
        by_name = {t.topic_name: t for t in named.topics}
        [hidden] = by_name["secret"].partitions
        assert (hidden.error_code, hidden.start_offset, hidden.lag) == (TOPIC_DENIED, -1, -1)
        assert hidden.error_message == "Topic authorization failed."
        assert by_name["secret"].topic_id.int == 0 and by_name["t"].partitions[0].error_code == NONE
        listing, _ = offsets(None)
        assert [t.topic_name for t in listing.topics] == ["t"]  # "secret" left out
        topics = [{"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 0}]}]
        altered = speak(ApiKey.ALTER_SHARE_GROUP_OFFSETS, group_id="sg", topics=topics)
        assert (altered.error_code, altered.error_message) == (
            GROUP_DENIED,
            "Group authorization failed.",
        )
        deleted = speak(
            ApiKey.DELETE_SHARE_GROUP_OFFSETS, group_id="sg", topics=[{"topic_name": "t"}]
        )
        assert deleted.error_code == GROUP_DENIED
        grant(c, acl(GROUP, "sg", READ), acl(GROUP, "sg", DELETE))
        altered = speak(ApiKey.ALTER_SHARE_GROUP_OFFSETS, group_id="sg", topics=topics)
        # the group has a member: NON_EMPTY_GROUP from the coordinator replaces topic errors
        assert altered.error_code == 68 and altered.responses == ()
        assert owner.beat(epoch=-1).error_code == NONE  # the group is empty now
        altered = speak(ApiKey.ALTER_SHARE_GROUP_OFFSETS, group_id="sg", topics=topics)
        [t] = altered.responses
        assert (altered.error_code, t.topic_id, t.partitions[0].error_code) == (
            NONE,
            c.state.topics["t"].topic_id,
            TOPIC_DENIED,  # READ on the topic, not DESCRIBE
        )
        assert t.partitions[0].error_message == "Topic authorization failed."
        deleted = speak(
            ApiKey.DELETE_SHARE_GROUP_OFFSETS, group_id="sg", topics=[{"topic_name": "t"}]
        )
        assert [(r.topic_name, r.error_code) for r in deleted.responses] == [("t", TOPIC_DENIED)]
        grant(c, acl(TOPIC, "t", READ))
        altered = speak(ApiKey.ALTER_SHARE_GROUP_OFFSETS, group_id="sg", topics=topics)
        assert altered.responses[0].partitions[0].error_code == NONE
        deleted = speak(
            ApiKey.DELETE_SHARE_GROUP_OFFSETS, group_id="sg", topics=[{"topic_name": "t"}]
        )
        assert deleted.responses[0].error_code == NONE


def test_confluent_share_consumer_denied_then_granted(enforced: FakeCluster) -> None:
    from confluent_kafka import KafkaError, KafkaException, Producer, ShareConsumer

    c = enforced
    producer = Producer({**confluent_config("admin", c)})
    for n in range(4):
        producer.produce("t", value=b"%d" % n, partition=n % 2)
    assert producer.flush(10) == 0
    config = {**confluent_config("alice", c), "group.id": "sg"}
    # FindCoordinator needs DESCRIBE on the group, the heartbeat READ
    grant(c, acl(GROUP, "sg", DESCRIBE), acl(TOPIC, "t", READ))
    share = ShareConsumer(config)
    share.subscribe(["t"])
    refused = None
    deadline = time.monotonic() + 10
    while refused is None and time.monotonic() < deadline:
        try:
            share.poll(0.1)
        except KafkaException as exc:
            refused = exc.args[0].code()
    share.close()
    assert refused == KafkaError.GROUP_AUTHORIZATION_FAILED
    grant(c, acl(GROUP, "sg", READ))
    share = ShareConsumer(config)
    share.subscribe(["t"])
    got: list[bytes] = []
    deadline = time.monotonic() + 20
    while len(got) < 4 and time.monotonic() < deadline:
        got += [m.value() for m in share.poll(0.1) or [] if m.error() is None]
    share.close()
    assert sorted(got) == [b"0", b"1", b"2", b"3"]


# --- DeleteGroups and OffsetDelete ----------------------------------------------------------


def test_group_admin_denied_then_granted(enforced: FakeCluster) -> None:
    c = enforced

    def committed() -> None:
        c.state.group("g").offsets[("t", 0)] = CommittedOffset(1, -1, "")
        c.state.group("h").offsets[("t", 0)] = CommittedOffset(1, -1, "")

    c.call(committed)
    drop = {"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 0}]}]}
    with as_alice(c) as speak:
        deleted = speak(ApiKey.DELETE_GROUPS, groups_names=["g", "h"]).results
        assert [(r.group_id, r.error_code) for r in deleted] == [
            ("g", GROUP_DENIED),
            ("h", GROUP_DENIED),
        ]
        answer = speak(ApiKey.OFFSET_DELETE, **drop)
        assert (answer.error_code, answer.topics) == (GROUP_DENIED, ())
        grant(c, acl(GROUP, "g", DELETE), acl(GROUP, "h", DELETE))
        answer = speak(ApiKey.OFFSET_DELETE, **drop)
        assert answer.error_code == NONE
        assert [p.error_code for p in answer.topics[0].partitions] == [TOPIC_DENIED]
        assert ("t", 0) in c.state.groups["g"].offsets
        grant(c, acl(TOPIC, "t", READ))
        answer = speak(ApiKey.OFFSET_DELETE, **drop)
        assert [p.error_code for p in answer.topics[0].partitions] == [NONE]
        deleted = speak(ApiKey.DELETE_GROUPS, groups_names=["h"]).results
        assert [r.error_code for r in deleted] == [NONE]
    assert c.state.groups["g"].offsets == {} and "h" not in c.state.groups


def test_confluent_delete_groups_denied_then_granted(enforced: FakeCluster) -> None:
    from confluent_kafka import KafkaError, KafkaException

    c = enforced
    c.call(lambda: c.state.group("g").offsets.update({("t", 0): CommittedOffset(1, -1, "")}))
    grant(c, acl(GROUP, "g", DESCRIBE))  # FindCoordinator; DeleteGroups needs DELETE
    admin = confluent_admin(c)
    with pytest.raises(KafkaException) as refused:
        admin.delete_consumer_groups(["g"])["g"].result(15)
    assert refused.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert "g" in c.state.groups
    grant(c, acl(GROUP, "g", DELETE))
    admin.delete_consumer_groups(["g"])["g"].result(15)
    assert "g" not in c.state.groups


# --- helpers --------------------------------------------------------------------------------


def confluent_config(user: str, c: FakeCluster) -> dict[str, Any]:
    return {
        "bootstrap.servers": c.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": USERS[user],
        "log_level": 0,
    }


def poll_error(consumer: Any, timeout: float = 10.0) -> Any:
    """The first error a consumer's poll reports (None if none in time)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = consumer.poll(0.1)
        if message is not None and message.error() is not None:
            return message.error()
    return None
