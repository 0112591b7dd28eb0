"""ACLs on the admin APIs of the fake broker (configs, partitions, the cluster, features,
producers and transactions), as apache/kafka ``KafkaApis`` and ``ControllerApis`` check
them: each refused at protocol level with Kafka's errors where Kafka puts them, then
granted; and real admin clients (confluent-kafka, kafka-python) denied, then granted. The
rule that every API served has a guard is held here too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from kafka_specgen.fake_broker.acl import Operation
from kafka_specgen.fake_broker.authorize import GUARDS, UNCHECKED
from kafka_specgen.fake_broker.dispatch import HANDLERS
from tests.integration.test_fake_broker_acls import CLUSTER, GROUP, TOPIC, TXN, USERS, acl
from tests.integration.test_fake_broker_acls import grant
from tests.support.fake_protocol import Speaker
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
pytestmark = pytest.mark.skipif(not NEWEST.is_dir(), reason="no spec corpora")
TOPIC_DENIED, GROUP_DENIED, CLUSTER_DENIED, TXN_DENIED = 29, 30, 31, 53
MESSAGES = {
    TOPIC_DENIED: "Topic authorization failed.",
    GROUP_DENIED: "Group authorization failed.",
    CLUSTER_DENIED: "Cluster authorization failed.",
}
NONE, ELECTION_NOT_NEEDED = 0, 84
CLUSTER_NAME = "kafka-cluster"
BROKER_CONFIGS, CLIENT_METRICS, GROUP_CONFIGS = 4, 16, 32


def test_every_api_served_has_a_guard_or_a_reason() -> None:
    """An API added to the fake broker without a rule would answer everyone: this fails."""
    served = {*HANDLERS, ApiKey.API_VERSIONS}
    assert set(GUARDS).isdisjoint(UNCHECKED)
    assert {ApiKey(k).name for k in served - set(GUARDS) - set(UNCHECKED)} == set()
    assert {ApiKey(k).name for k in set(GUARDS) | set(UNCHECKED)} - {
        ApiKey(k).name for k in served
    } == set()


@pytest.fixture
def enforced() -> Iterator[FakeCluster]:
    """SASL PLAIN users, "admin" a super user; alice may do nothing until granted."""
    with FakeCluster(
        NEWEST,
        release="4.3",
        topics={"t": 2, "secret": 1},
        users=USERS,
        superusers=["admin"],
        group_initial_rebalance_delay_ms=0,
    ) as c:
        yield c
        assert c.failures == []


def as_alice(c: FakeCluster) -> Speaker:
    return Speaker(c, sasl=c.package.module("sasl").Plain("alice", USERS["alice"]))


def as_admin(c: FakeCluster) -> Speaker:
    return Speaker(c, sasl=c.package.module("sasl").Plain("admin", USERS["admin"]))


def codes(items: Any) -> list[tuple[int, str | None]]:
    return [(i.error_code, i.error_message) for i in items]


# --- configs --------------------------------------------------------------------------------


def test_configs_denied_then_granted(enforced: FakeCluster) -> None:
    c = enforced
    resources = [(TOPIC, "t"), (BROKER_CONFIGS, "0"), (GROUP_CONFIGS, "g"), (CLIENT_METRICS, "m")]
    denied = [TOPIC_DENIED, CLUSTER_DENIED, GROUP_DENIED, CLUSTER_DENIED]
    changes = [
        {
            "resource_type": TOPIC,
            "resource_name": "t",
            "configs": [{"name": "retention.ms", "config_operation": 0, "value": "1000"}],
        },
        {
            "resource_type": GROUP_CONFIGS,
            "resource_name": "g",
            "configs": [
                {"name": "consumer.heartbeat.interval.ms", "config_operation": 0, "value": "777"}
            ],
        },
    ]
    with as_alice(c) as speak:

        def describe() -> Any:
            return speak(
                ApiKey.DESCRIBE_CONFIGS,
                resources=[
                    {"resource_type": k, "resource_name": n, "configuration_keys": ["x"]}
                    for k, n in resources
                ],
            ).results

        assert codes(describe()) == [(code, MESSAGES[code]) for code in denied]
        changed = speak(ApiKey.INCREMENTAL_ALTER_CONFIGS, resources=changes).responses
        assert codes(changed) == [(TOPIC_DENIED, MESSAGES[TOPIC_DENIED])] + [
            (GROUP_DENIED, MESSAGES[GROUP_DENIED])
        ]
        legacy = speak(
            ApiKey.ALTER_CONFIGS,
            resources=[
                {
                    "resource_type": BROKER_CONFIGS,
                    "resource_name": "",
                    "configs": [{"name": "log.retention.ms", "value": "1000"}],
                }
            ],
        )
        assert codes(legacy.responses) == [(CLUSTER_DENIED, MESSAGES[CLUSTER_DENIED])]
        assert speak(ApiKey.LIST_CONFIG_RESOURCES, resource_types=[]).error_code == CLUSTER_DENIED
        assert c.call(lambda: (c.state.topics["t"].configs, c.state.configs)) == ({}, {})
        grant(
            c,
            acl(TOPIC, "t", Operation.ALTER_CONFIGS),
            acl(GROUP, "g", Operation.ALTER_CONFIGS),
            acl(CLUSTER, CLUSTER_NAME, Operation.DESCRIBE_CONFIGS),
        )
        assert [r.error_code for r in describe()] == [NONE] * 4  # ALTER_ implies DESCRIBE_
        changed = speak(ApiKey.INCREMENTAL_ALTER_CONFIGS, resources=changes).responses
        assert [r.error_code for r in changed] == [NONE, NONE]
        assert speak(ApiKey.LIST_CONFIG_RESOURCES, resource_types=[]).error_code == NONE
    assert c.state.topics["t"].configs == {"retention.ms": "1000"}


def test_confluent_configs_denied_then_granted(enforced: FakeCluster) -> None:
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    c = enforced
    admin = confluent_admin(c)
    topic = ConfigResource(ResourceType.TOPIC, "t")
    change = ConfigResource(
        ResourceType.TOPIC,
        "t",
        incremental_configs=[
            ConfigEntry("retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    for futures in (admin.describe_configs([topic]), admin.incremental_alter_configs([change])):
        with pytest.raises(KafkaException) as refused:
            futures[topic].result(15)
        assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    grant(c, acl(TOPIC, "t", Operation.ALTER_CONFIGS))
    admin.incremental_alter_configs([change])[topic].result(15)
    assert admin.describe_configs([topic])[topic].result(15)["retention.ms"].value == "86400000"


# --- partitions -----------------------------------------------------------------------------


def test_partition_admin_denied_then_granted(enforced: FakeCluster) -> None:
    c = enforced
    grow = {"topics": [{"name": "t", "count": 3, "assignments": None}], "timeout_ms": 1000}
    delete = {
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "offset": -1}]}],
        "timeout_ms": 1000,
    }
    elect = {
        "election_type": 0,
        "topic_partitions": [{"topic": "t", "partitions": [0, 1]}],
        "timeout_ms": 1000,
    }
    move = {
        "topics": [{"name": "t", "partitions": [{"partition_index": 1, "replicas": [0]}]}],
        "timeout_ms": 1000,
    }
    listing = {"topics": [{"name": "t", "partition_indexes": [0]}], "timeout_ms": 1000}
    with as_alice(c) as speak:
        assert speak(ApiKey.CREATE_PARTITIONS, **grow).results[0].error_code == TOPIC_DENIED
        [deleted] = speak(ApiKey.DELETE_RECORDS, **delete).topics[0].partitions
        assert (deleted.error_code, deleted.low_watermark) == (TOPIC_DENIED, -1)
        elected = speak(ApiKey.ELECT_LEADERS, **elect)
        assert elected.error_code == CLUSTER_DENIED  # and each partition named, as Kafka lists
        assert (
            codes(elected.replica_election_results[0].partition_result)
            == [(CLUSTER_DENIED, MESSAGES[CLUSTER_DENIED])] * 2
        )
        moved = speak(ApiKey.ALTER_PARTITION_REASSIGNMENTS, **move)
        assert (moved.error_code, moved.error_message) == (CLUSTER_DENIED, MESSAGES[CLUSTER_DENIED])
        assert [p.error_code for p in moved.responses[0].partitions] == [CLUSTER_DENIED]
        listed = speak(ApiKey.LIST_PARTITION_REASSIGNMENTS, **listing)
        assert listed.error_code == CLUSTER_DENIED
        named = speak(
            ApiKey.DESCRIBE_TOPIC_PARTITIONS,
            topics=[{"name": "t"}, {"name": "secret"}],
            response_partition_limit=100,
        )
        assert [(t.name, t.error_code, t.topic_id.int) for t in named.topics] == [
            ("t", TOPIC_DENIED, 0),
            ("secret", TOPIC_DENIED, 0),
        ]
        every = speak(ApiKey.DESCRIBE_TOPIC_PARTITIONS, topics=[], response_partition_limit=1)
        assert every.topics == () and every.next_cursor is None
        assert len(c.state.topics["t"].partitions) == 2
        grant(
            c,
            acl(TOPIC, "t", Operation.ALTER),
            acl(TOPIC, "t", Operation.DELETE),
            acl(CLUSTER, CLUSTER_NAME, Operation.ALTER),
        )
        assert speak(ApiKey.CREATE_PARTITIONS, **grow).results[0].error_code == NONE
        assert speak(ApiKey.DELETE_RECORDS, **delete).topics[0].partitions[0].error_code == NONE
        elected = speak(ApiKey.ELECT_LEADERS, **elect)
        assert elected.error_code == NONE
        assert {p.error_code for p in elected.replica_election_results[0].partition_result} == {
            ELECTION_NOT_NEEDED
        }
        assert speak(ApiKey.ALTER_PARTITION_REASSIGNMENTS, **move).error_code == NONE
        assert speak(ApiKey.LIST_PARTITION_REASSIGNMENTS, **listing).error_code == NONE
        # a listing pages over the topics alice may describe only (ALTER implies DESCRIBE)
        every = speak(ApiKey.DESCRIBE_TOPIC_PARTITIONS, topics=[], response_partition_limit=2)
        assert [(t.name, len(t.partitions)) for t in every.topics] == [("t", 2)]
        assert (every.next_cursor.topic_name, every.next_cursor.partition_index) == ("t", 2)
        assert every.topics[0].topic_authorized_operations == sum(
            1 << op for op in (Operation.DELETE, Operation.ALTER, Operation.DESCRIBE)
        )
    assert len(c.state.topics["t"].partitions) == 3


def test_confluent_create_partitions_denied_then_granted(enforced: FakeCluster) -> None:
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewPartitions

    c = enforced
    admin = confluent_admin(c)
    with pytest.raises(KafkaException) as refused:
        admin.create_partitions([NewPartitions("t", 3)])["t"].result(15)
    assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    grant(c, acl(TOPIC, "t", Operation.ALTER))
    admin.create_partitions([NewPartitions("t", 3)])["t"].result(15)
    assert len(c.state.topics["t"].partitions) == 3


# --- the cluster and its features -----------------------------------------------------------


def test_cluster_admin_and_features_denied_then_granted(enforced: FakeCluster) -> None:
    c = enforced
    quorum = {
        "topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]
    }
    dirs = {"dirs": [{"path": "/tmp/kafka-logs", "topics": [{"name": "t", "partitions": [0, 1]}]}]}
    level = c.call(lambda: c.state.release.finalized["group.version"])
    update = {
        "timeout_ms": 1000,
        "feature_updates": [
            {"feature": "group.version", "max_version_level": 0, "upgrade_type": 2}
        ],
        "validate_only": True,
    }
    with as_alice(c) as speak:
        logs = speak(ApiKey.DESCRIBE_LOG_DIRS, topics=None)
        assert (logs.error_code, logs.results) == (CLUSTER_DENIED, ())
        moved = speak(ApiKey.ALTER_REPLICA_LOG_DIRS, **dirs)
        assert [(r.topic_name, [p.error_code for p in r.partitions]) for r in moved.results] == [
            ("t", [CLUSTER_DENIED, CLUSTER_DENIED])
        ]
        described = speak(ApiKey.DESCRIBE_QUORUM, **quorum)
        assert (described.error_code, described.error_message, described.topics) == (
            CLUSTER_DENIED,
            MESSAGES[CLUSTER_DENIED],
            (),
        )
        updated = speak(ApiKey.UPDATE_FEATURES, **update)
        assert (updated.error_code, updated.error_message, updated.results) == (
            CLUSTER_DENIED,
            MESSAGES[CLUSTER_DENIED],
            (),
        )
        grant(c, acl(CLUSTER, CLUSTER_NAME, Operation.ALTER))  # ALTER implies DESCRIBE
        assert speak(ApiKey.DESCRIBE_LOG_DIRS, topics=None).results[0].error_code == NONE
        moved = speak(ApiKey.ALTER_REPLICA_LOG_DIRS, **dirs)
        assert {p.error_code for r in moved.results for p in r.partitions} == {NONE}
        assert speak(ApiKey.DESCRIBE_QUORUM, **quorum).error_code == NONE
        assert speak(ApiKey.UPDATE_FEATURES, **update).error_code == NONE
    assert c.call(lambda: c.state.release.finalized["group.version"]) == level  # validate only


def test_kafka_python_features_and_quorum_denied_then_granted(enforced: FakeCluster) -> None:
    from kafka.errors import ClusterAuthorizationFailedError

    c = enforced
    level = c.call(lambda: c.state.release.finalized["group.version"])
    admin = kafka_python_admin(c)
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            admin.describe_metadata_quorum()
        with pytest.raises(ClusterAuthorizationFailedError):
            admin.update_features({"group.version": level}, validate_only=True)
        grant(c, acl(CLUSTER, CLUSTER_NAME, Operation.ALTER))
        assert admin.describe_metadata_quorum()["topics"][0]["partitions"][0]["leader_id"] == 0
        admin.update_features({"group.version": level}, validate_only=True)
    finally:
        admin.close()


# --- producers and transactions -------------------------------------------------------------


def test_txn_admin_denied_then_granted(enforced: FakeCluster) -> None:
    """A transaction of the super user over "t" and "secret": alice sees it once she may
    describe its id, and of its partitions only those of topics she may describe."""
    c = enforced
    open_transaction(c)
    marker = {
        "producer_id": 4242,
        "producer_epoch": 0,
        "transaction_result": False,
        "topics": [{"name": "t", "partition_indexes": [1]}],
        "coordinator_epoch": 0,
    }
    with as_alice(c) as speak:
        producers = speak(
            ApiKey.DESCRIBE_PRODUCERS, topics=[{"name": "t", "partition_indexes": [0]}]
        )
        assert codes(producers.topics[0].partitions) == [(TOPIC_DENIED, MESSAGES[TOPIC_DENIED])]
        described = speak(ApiKey.DESCRIBE_TRANSACTIONS, transactional_ids=["tx"])
        assert [s.error_code for s in described.transaction_states] == [TXN_DENIED]
        assert (
            speak(
                ApiKey.LIST_TRANSACTIONS, state_filters=[], producer_id_filters=[]
            ).transaction_states
            == ()
        )
        written = speak(ApiKey.WRITE_TXN_MARKERS, markers=[marker])
        assert written.markers[0].topics[0].partitions[0].error_code == CLUSTER_DENIED
        grant(c, acl(TXN, "tx", Operation.DESCRIBE), acl(TOPIC, "t", Operation.READ))
        listed = speak(ApiKey.LIST_TRANSACTIONS, state_filters=[], producer_id_filters=[])
        assert [s.transactional_id for s in listed.transaction_states] == ["tx"]
        [state] = speak(ApiKey.DESCRIBE_TRANSACTIONS, transactional_ids=["tx"]).transaction_states
        assert state.error_code == NONE and [t.topic for t in state.topics] == ["t"]
        producers = speak(
            ApiKey.DESCRIBE_PRODUCERS, topics=[{"name": "t", "partition_indexes": [0]}]
        )
        assert producers.topics[0].partitions[0].error_code == NONE
        assert len(producers.topics[0].partitions[0].active_producers) == 1
        grant(c, acl(CLUSTER, CLUSTER_NAME, Operation.ALTER))  # an admin's abort (KIP-664)
        written = speak(ApiKey.WRITE_TXN_MARKERS, markers=[marker])
        assert written.markers[0].topics[0].partitions[0].error_code == NONE


def test_kafka_python_txn_admin_denied_then_granted(enforced: FakeCluster) -> None:
    from kafka.errors import TransactionalIdAuthorizationFailedError

    c = enforced
    open_transaction(c)
    admin = kafka_python_admin(c)
    try:
        assert [t for ts in admin.list_transactions().values() for t in ts] == []
        with pytest.raises(TransactionalIdAuthorizationFailedError):
            admin.describe_transactions(["tx"])
        grant(c, acl(TXN, "tx", Operation.DESCRIBE), acl(TOPIC, "t", Operation.DESCRIBE))
        listed = admin.list_transactions()
        assert [t.transactional_id for ts in listed.values() for t in ts] == ["tx"]
        txn = admin.describe_transactions(["tx"])["tx"]
        assert {tp.topic for tp in txn.topic_partitions} == {"t"}  # "secret" is hidden
    finally:
        admin.close()


# --- helpers --------------------------------------------------------------------------------


def open_transaction(c: FakeCluster) -> None:
    """The super user's transactional producer writes to "t" and "secret", left open."""
    from kafka import KafkaProducer

    producer = KafkaProducer(**kafka_python_config(c, "admin"), transactional_id="tx")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send("t", b"open", partition=0)
        producer.send("secret", b"open", partition=0)
        producer.flush()
    finally:
        producer.close(timeout=1)


def kafka_python_config(c: FakeCluster, user: str) -> dict[str, Any]:
    return {
        "bootstrap_servers": c.bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": user,
        "sasl_plain_password": USERS[user],
    }


def kafka_python_admin(c: FakeCluster) -> Any:
    from kafka import KafkaAdminClient

    return KafkaAdminClient(**kafka_python_config(c, "alice"))


def confluent_admin(c: FakeCluster) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient(
        {
            "bootstrap.servers": c.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": USERS["alice"],
            "log_level": 0,
        }
    )
