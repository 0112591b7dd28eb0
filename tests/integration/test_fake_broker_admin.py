"""What admin clients call, answered as Kafka answers: configs (every topic config with its
source and synonyms, per release line; broker and group configs; Alter and
IncrementalAlter), DeleteGroups, OffsetDelete, CreatePartitions, ElectLeaders,
reassignments, DescribeTopicPartitions, DescribeLogDirs, AlterReplicaLogDirs,
DescribeQuorum, ListConfigResources, transactions and producers. Protocol-level rules
first, then confluent-kafka's AdminClient, kafka-python's KafkaAdminClient and KafkaJS's
admin against the same cluster."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from kafka_specgen.fake_broker.state import CommittedOffset
from tests.support import kafkajs
from tests.support.fake_protocol import Speaker
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
pytestmark = pytest.mark.skipif(not NEWEST.is_dir(), reason="no spec corpora")
NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS, INVALID_CONFIG = 0, 3, 37, 40
INVALID_REQUEST, INVALID_REPLICA_ASSIGNMENT, LOG_DIR_NOT_FOUND = 42, 39, 57
NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, ELECTION_NOT_NEEDED = 68, 69, 84
GROUP_SUBSCRIBED_TO_TOPIC, NO_REASSIGNMENT_IN_PROGRESS = 86, 85
TOPIC, BROKER, GROUP, CLIENT_METRICS = 2, 4, 32, 16
DYNAMIC_TOPIC, DYNAMIC_DEFAULT_BROKER, STATIC_BROKER, DEFAULT = 1, 3, 4, 5


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(
        NEWEST, release="4.3", brokers=2, topics={"t": 2}, message_max_bytes=2_000_000
    ) as c:
        yield c
        assert c.failures == []


def describe(speak: Speaker, kind: int, name: str, keys: list[str] | None = None) -> Any:
    answer = speak(
        ApiKey.DESCRIBE_CONFIGS,
        resources=[{"resource_type": kind, "resource_name": name, "configuration_keys": keys}],
        include_synonyms=True,
    )
    return answer.results[0]


def configs(result: Any) -> dict[str, Any]:
    return {c.name: c for c in result.configs}


# --- configs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("specs", "present", "absent"),
    [
        (
            "2.8.0",
            {"message.format.version", "message.timestamp.difference.max.ms"},
            {"compression.zstd.level", "remote.storage.enable"},
        ),
        (
            "3.9.0",
            {"remote.storage.enable", "compression.zstd.level", "message.format.version"},
            set(),
        ),
        (
            "4.3.1",
            {"remote.storage.enable", "message.timestamp.after.max.ms"},
            {"message.format.version", "message.downconversion.enable"},
        ),
    ],
)
def test_every_topic_config_of_the_release_line(
    specs: str, present: set[str], absent: set[str]
) -> None:
    if not (CORPORA / specs).is_dir():
        pytest.skip(f"no {specs} specs")
    with (
        FakeCluster(CORPORA / specs, release=specs.rsplit(".", 1)[0], topics={"t": 1}) as c,
        Speaker(c) as speak,
    ):
        found = configs(describe(speak, TOPIC, "t"))
        assert len(found) >= 25
        assert present <= set(found) and not (absent & set(found))
        retention = found["retention.ms"]
        assert (retention.value, retention.config_source, retention.read_only) == (
            "604800000",
            DEFAULT,
            False,
        )
        assert [(s.name, s.source) for s in retention.synonyms] == [("log.retention.ms", DEFAULT)]
        if specs == "4.3.1":
            assert found["message.timestamp.after.max.ms"].value == "3600000"  # KIP-1030


def test_config_sources_and_synonyms(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        altered = speak(
            ApiKey.INCREMENTAL_ALTER_CONFIGS,
            resources=[
                {
                    "resource_type": TOPIC,
                    "resource_name": "t",
                    "configs": [
                        {"name": "retention.ms", "config_operation": 0, "value": "1000"},
                        {"name": "cleanup.policy", "config_operation": 2, "value": "compact"},
                    ],
                },
                {
                    "resource_type": BROKER,
                    "resource_name": "",
                    "configs": [
                        {"name": "log.retention.bytes", "config_operation": 0, "value": "12345"},
                    ],
                },
            ],
        )
        assert [r.error_code for r in altered.responses] == [NONE, NONE]
        found = configs(describe(speak, TOPIC, "t"))
        assert (found["retention.ms"].value, found["retention.ms"].config_source) == (
            "1000",
            DYNAMIC_TOPIC,
        )
        assert [(s.name, s.value, s.source) for s in found["retention.ms"].synonyms] == [
            ("retention.ms", "1000", DYNAMIC_TOPIC),
            ("log.retention.ms", "604800000", DEFAULT),
        ]
        assert found["cleanup.policy"].value == "delete,compact"
        assert (found["retention.bytes"].value, found["retention.bytes"].config_source) == (
            "12345",
            DYNAMIC_DEFAULT_BROKER,
        )
        assert (found["max.message.bytes"].value, found["max.message.bytes"].config_source) == (
            "2000000",
            STATIC_BROKER,
        )
        broker = configs(describe(speak, BROKER, "0"))
        assert broker["message.max.bytes"].config_source == STATIC_BROKER
        assert broker["broker.id"].read_only and not broker["log.retention.bytes"].read_only
        defaults = describe(speak, BROKER, "")
        assert [(c.name, c.value) for c in defaults.configs] == [("log.retention.bytes", "12345")]
        other = describe(speak, BROKER, "1")
        assert other.error_code == INVALID_REQUEST  # each broker describes itself
        missing = describe(speak, TOPIC, "nope")
        assert missing.error_code == UNKNOWN_TOPIC_OR_PARTITION


def test_alter_configs_validation(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:

        def alter(
            kind: int, name: str, key: str, value: str, api: int = ApiKey.ALTER_CONFIGS
        ) -> Any:
            item = {"name": key, "value": value, "config_operation": 0}
            answer = speak(
                api, resources=[{"resource_type": kind, "resource_name": name, "configs": [item]}]
            )
            return answer.responses[0]

        unknown = alter(TOPIC, "t", "retention.forever", "1")
        assert (unknown.error_code, unknown.error_message) == (
            INVALID_CONFIG,
            "Unknown topic config name: retention.forever",
        )
        assert alter(TOPIC, "t", "retention.ms", "soon").error_code == INVALID_CONFIG
        assert alter(TOPIC, "t", "cleanup.policy", "shred").error_code == INVALID_CONFIG
        assert alter(BROKER, "", "broker.id", "7").error_code == INVALID_REQUEST
        assert alter(TOPIC, "t", "segment.ms", "1000").error_code == NONE
        # AlterConfigs replaces the whole set: retention.ms goes back to its default
        assert alter(TOPIC, "t", "retention.ms", "5").error_code == NONE
        assert alter(TOPIC, "t", "segment.bytes", "100000").error_code == NONE
        assert cluster.state.topics["t"].configs == {"segment.bytes": "100000"}
        subtract = speak(
            ApiKey.INCREMENTAL_ALTER_CONFIGS,
            resources=[
                {
                    "resource_type": TOPIC,
                    "resource_name": "t",
                    "configs": [
                        {"name": "retention.ms", "config_operation": 3, "value": "1"},
                    ],
                }
            ],
        )
        assert subtract.responses[0].error_code == INVALID_CONFIG  # not a list


def test_group_configs_reach_the_coordinator(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        set_ = speak(
            ApiKey.INCREMENTAL_ALTER_CONFIGS,
            resources=[
                {
                    "resource_type": GROUP,
                    "resource_name": "g",
                    "configs": [
                        {
                            "name": "consumer.heartbeat.interval.ms",
                            "config_operation": 0,
                            "value": "777",
                        },
                    ],
                }
            ],
        )
        assert set_.responses[0].error_code == NONE
        found = configs(describe(speak, GROUP, "g"))
        assert found["consumer.heartbeat.interval.ms"].value == "777"
        assert found["share.auto.offset.reset"].value == "latest"
        listed = speak(ApiKey.LIST_CONFIG_RESOURCES, resource_types=[GROUP, TOPIC])
        assert [(r.resource_type, r.resource_name) for r in listed.config_resources] == [
            (TOPIC, "t"),
            (GROUP, "g"),
        ]
        metrics = speak(ApiKey.LIST_CONFIG_RESOURCES, version=0)
        assert metrics.error_code == NONE and metrics.config_resources == ()


# --- groups ---------------------------------------------------------------------------------


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocolSubscription v0: version, topic names, no user data."""
    out = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        out += struct.pack(">h", len(topic)) + topic.encode()
    return out + struct.pack(">i", -1)


def test_delete_groups_and_offsets(cluster: FakeCluster) -> None:
    coordinator = cluster.state.coordinator("g").node_id
    with Speaker(cluster, coordinator) as speak:
        joined = speak(
            ApiKey.JOIN_GROUP,
            version=3,
            group_id="g",
            session_timeout_ms=30000,
            rebalance_timeout_ms=30000,
            member_id="",
            protocol_type="consumer",
            protocols=[{"name": "range", "metadata": subscription("t")}],
        )
        assert joined.error_code == NONE
        group = cluster.state.groups["g"]
        group.offsets[("t", 0)] = CommittedOffset(1, -1, "")
        group.offsets[("u", 0)] = CommittedOffset(2, -1, "")
        deleted = speak(
            ApiKey.OFFSET_DELETE,
            group_id="g",
            topics=[
                {"name": "t", "partitions": [{"partition_index": 0}]},
                {"name": "u", "partitions": [{"partition_index": 0}]},
            ],
        )
        assert [t.partitions[0].error_code for t in deleted.topics] == [
            GROUP_SUBSCRIBED_TO_TOPIC,
            NONE,
        ]
        assert set(group.offsets) == {("t", 0)}
        busy = speak(ApiKey.DELETE_GROUPS, groups_names=["g", "nope"])
        assert [r.error_code for r in busy.results] == [NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND]
        speak(ApiKey.LEAVE_GROUP, version=0, group_id="g", member_id=joined.member_id)
        assert speak(ApiKey.DELETE_GROUPS, groups_names=["g"]).results[0].error_code == NONE
        assert "g" not in cluster.state.groups


# --- partitions -----------------------------------------------------------------------------


def test_partition_apis(cluster: FakeCluster) -> None:
    with Speaker(cluster) as speak:
        grown = speak(
            ApiKey.CREATE_PARTITIONS,
            topics=[
                {"name": "t", "count": 4, "assignments": None},
                {"name": "t2", "count": 4, "assignments": None},
            ],
            timeout_ms=1000,
        )
        assert [r.error_code for r in grown.results] == [NONE, UNKNOWN_TOPIC_OR_PARTITION]
        assert len(cluster.state.topics["t"].partitions) == 4
        again = speak(
            ApiKey.CREATE_PARTITIONS,
            topics=[{"name": "t", "count": 3, "assignments": None}],
            timeout_ms=1000,
        )
        assert again.results[0].error_code == INVALID_PARTITIONS
        assert "would not be an increase" in again.results[0].error_message
        placed = speak(
            ApiKey.CREATE_PARTITIONS,
            topics=[
                {"name": "t", "count": 6, "assignments": [{"broker_ids": [1]}, {"broker_ids": [9]}]}
            ],
            timeout_ms=1000,
        )
        assert placed.results[0].error_code == INVALID_REPLICA_ASSIGNMENT
        elected = speak(
            ApiKey.ELECT_LEADERS,
            election_type=0,
            topic_partitions=[{"topic": "t", "partitions": [0]}],
            timeout_ms=1000,
        )
        assert (
            elected.replica_election_results[0].partition_result[0].error_code
            == ELECTION_NOT_NEEDED
        )
        moved = speak(
            ApiKey.ALTER_PARTITION_REASSIGNMENTS,
            topics=[
                {
                    "name": "t",
                    "partitions": [
                        {"partition_index": 0, "replicas": [1]},
                        {"partition_index": 1, "replicas": None},
                    ],
                }
            ],
            timeout_ms=1000,
        )
        assert [p.error_code for p in moved.responses[0].partitions] == [
            NONE,
            NO_REASSIGNMENT_IN_PROGRESS,
        ]
        assert cluster.state.topics["t"].partitions[0].leader == 1
        assert speak(ApiKey.LIST_PARTITION_REASSIGNMENTS, topics=None, timeout_ms=1000).topics == ()
        cluster.create_topic("a", 3)
        first = speak(
            ApiKey.DESCRIBE_TOPIC_PARTITIONS,
            topics=[{"name": "a"}, {"name": "t"}],
            response_partition_limit=4,
        )
        assert [(t.name, len(t.partitions)) for t in first.topics] == [("a", 3), ("t", 1)]
        assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("t", 1)
        rest = speak(
            ApiKey.DESCRIBE_TOPIC_PARTITIONS,
            topics=[{"name": "a"}, {"name": "t"}],
            response_partition_limit=10,
            cursor={"topic_name": "t", "partition_index": 1},
        )
        assert [p.partition_index for p in rest.topics[0].partitions] == [1, 2, 3]
        assert rest.next_cursor is None


def test_log_dirs_and_quorum(cluster: FakeCluster) -> None:
    with Speaker(cluster, 1) as speak:
        dirs = speak(ApiKey.DESCRIBE_LOG_DIRS, topics=None).results[0]
        assert dirs.log_dir == "/tmp/kafka-logs"
        led = {(t.name, p.partition_index) for t in dirs.topics for p in t.partitions}
        assert led == {("t", 1)}  # broker 1 leads partition 1 only
        moved = speak(
            ApiKey.ALTER_REPLICA_LOG_DIRS,
            dirs=[
                {"path": "/tmp/kafka-logs", "topics": [{"name": "t", "partitions": [1]}]},
                {"path": "/elsewhere", "topics": [{"name": "t", "partitions": [1]}]},
            ],
        )
        assert [r.partitions[0].error_code for r in moved.results] == [NONE, LOG_DIR_NOT_FOUND]
        quorum = speak(
            ApiKey.DESCRIBE_QUORUM,
            topics=[{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}],
        )
        partition = quorum.topics[0].partitions[0]
        assert (partition.leader_id, [v.replica_id for v in partition.current_voters]) == (0, [0])
        assert [o.replica_id for o in partition.observers] == [1]
        assert quorum.nodes[0].listeners[0].name == "CONTROLLER"


# --- real admin clients ---------------------------------------------------------------------


def test_confluent_admin_client(cluster: FakeCluster) -> None:
    from confluent_kafka import (
        ConsumerGroupTopicPartitions,
        ElectionType,
        KafkaException,
        Producer,
        TopicPartition,
    )
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        NewPartitions,
        OffsetSpec,
        ResourceType,
    )

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    for n in range(10):
        producer.produce("t", value=b"%d" % n, partition=n % 2, timestamp=1_700_000_000_000 + n)
    assert producer.flush(10) == 0
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})

    def done(futures: Any) -> Any:
        if isinstance(futures, dict):
            return {k: f.result(15) for k, f in futures.items()}
        return futures.result(15)

    done(admin.create_partitions([NewPartitions("t", 3)]))
    assert len(cluster.state.topics["t"].partitions) == 3
    topic = ConfigResource(ResourceType.TOPIC, "t")
    described = done(admin.describe_configs([topic]))[topic]
    assert described["retention.ms"].value == "604800000" and described["retention.ms"].is_default
    change = ConfigResource(
        ResourceType.TOPIC,
        "t",
        incremental_configs=[
            ConfigEntry("retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    done(admin.incremental_alter_configs([change]))
    assert done(admin.describe_configs([topic]))[topic]["retention.ms"].value == "86400000"
    deleted = done(admin.delete_records([TopicPartition("t", 0, 3)]))
    assert next(iter(deleted.values())).low_watermark == 3
    offsets = done(
        admin.list_offsets(
            {
                TopicPartition("t", 0): OffsetSpec.earliest(),
                TopicPartition("t", 1): OffsetSpec.max_timestamp(),
            }
        )
    )
    assert [o.offset for o in offsets.values()] == [3, 4]
    with pytest.raises(KafkaException, match="ELECTION_NOT_NEEDED|not needed"):
        for error in done(
            admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition("t", 0)])
        ).values():
            if error is not None:
                raise KafkaException(error)
    done(
        admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions("g", [TopicPartition("t", 1, 2)])]
        )
    )
    listed = done(
        admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions("g", [TopicPartition("t", 1)])]
        )
    )
    assert [p.offset for p in listed["g"].topic_partitions] == [2]
    groups = done(admin.list_consumer_groups())
    assert [g.group_id for g in groups.valid] == ["g"]
    done(admin.delete_consumer_groups(["g"]))
    assert "g" not in cluster.state.groups
    cluster_info = done(admin.describe_cluster())
    assert len(cluster_info.nodes) == 2


def test_confluent_describes_a_kip848_group(cluster: FakeCluster) -> None:
    from confluent_kafka import Consumer, ConsumerGroupState
    from confluent_kafka.admin import AdminClient

    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": "g848",
            "group.protocol": "consumer",
            "log_level": 0,
        }
    )
    consumer.subscribe(["t"])
    for _ in range(50):
        consumer.poll(0.05)
        if consumer.assignment():
            break
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    described = admin.describe_consumer_groups(["g848"])["g848"].result(15)
    assert described.state == ConsumerGroupState.STABLE
    assert [len(m.assignment.topic_partitions) for m in described.members] == [2]
    busy = admin.delete_consumer_groups(["g848"])["g848"]
    with pytest.raises(Exception, match="NON_EMPTY_GROUP|not empty"):
        busy.result(15)
    consumer.close()


def test_kafka_python_admin_client(cluster: FakeCluster) -> None:
    from kafka import KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewPartitions

    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, transactional_id="tx")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", b"open", partition=0)
    producer.flush()
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        listed = admin.list_transactions()
        assert [t.transactional_id for ts in listed.values() for t in ts] == ["tx"]
        txn = admin.describe_transactions(["tx"])["tx"]
        assert str(txn.state).lower().endswith("ongoing") and txn.topic_partitions == {
            TopicPartition("t", 0)
        }
        producers = admin.describe_producers([TopicPartition("t", 0)])[TopicPartition("t", 0)]
        [state] = producers.active_producers
        assert state.current_transaction_start_offset == 0
        from kafka.admin import AbortTransactionSpec

        admin.abort_transaction(
            AbortTransactionSpec(TopicPartition("t", 0), state.producer_id, state.producer_epoch)
        )
        log = cluster.state.topics["t"].partitions[0]
        assert log.open_txns == {} and log.aborted[0].first_offset == 0
        dirs = admin.describe_log_dirs()
        assert {d["broker"] for d in dirs} == {0, 1}
        quorum = admin.describe_metadata_quorum()
        assert quorum["topics"][0]["partitions"][0]["leader_id"] == 0
        assert admin.list_config_resources() == {"topic": ["t"], "broker": ["0", "1"]}
        admin.create_partitions({"t": NewPartitions(3)})
        assert (
            admin.delete_records({TopicPartition("t", 1): 0})[TopicPartition("t", 1)]["error_code"]
            == 0
        )
        assert admin.list_partition_reassignments() == {}
        topics = admin.describe_topic_partitions(["t"])["topics"]
        assert [len(t["partitions"]) for t in topics] == [3]
        admin.alter_partition_reassignments({TopicPartition("t", 2): [1]})
        assert cluster.state.topics["t"].partitions[2].leader == 1
        from kafka import TopicPartitionReplica

        moved = admin.alter_replica_log_dirs(
            {
                TopicPartitionReplica("t", 2, 1): "/tmp/kafka-logs",
                TopicPartitionReplica("t", 0, 0): "/elsewhere",
            }
        )
        assert sorted(e.__name__ for e in moved.values()) == ["LogDirNotFoundError", "NoError"]
        elected = admin.elect_leaders(0, {"t": [0]}, raise_errors=False)
        [result] = elected.replica_election_results[0].partition_result
        assert result.error_code == ELECTION_NOT_NEEDED
        cluster.call(
            lambda: cluster.state.group("old").offsets.update(
                {("t", 0): CommittedOffset(1, -1, "")}
            )
        )
        dropped = admin.delete_group_offsets("old", [TopicPartition("t", 0)])
        assert [e.__name__ for e in dropped.values()] == ["NoError"]
        assert cluster.state.groups["old"].offsets == {}
    finally:
        admin.close()
        producer.close(timeout=1)


def test_kafkajs_admin() -> None:
    with FakeCluster(NEWEST, release="4.3", brokers=2) as c:
        out = kafkajs.run("admin.js", c.bootstrap)
        assert c.failures == []
    assert out["createTopics"] is True
    assert out["fetchTopicMetadata"] == 3  # after CreatePartitions
    low = {p["partition"]: p["low"] for p in out["fetchTopicOffsets"]}
    assert low == {0: "2", 1: "0", 2: "0"}  # DeleteRecords moved partition 0's start
    assert out["describeConfigs"] == [
        ["cleanup.policy", "delete", True],
        ["retention.ms", "604800000", True],
    ]
    assert out["describeConfigsAfter"] == [["retention.ms", "1000", False, DYNAMIC_TOPIC]]
    assert {p["partition"]: p["offset"] for t in out["fetchOffsets"] for p in t["partitions"]} == {
        0: "-1",
        1: "2",
        2: "-1",
    }
    assert out["describeGroups"] == [["kg", "Empty"]]
    assert out["deleteGroups"] == [{"groupId": "kg", "errorCode": 0}]
    assert out["describeCluster"] == 2
    assert not any(isinstance(v, dict) and "error" in v for v in out.values()), out


def test_offset_fetch_returns_the_committed_leader_epoch(cluster: FakeCluster) -> None:
    coordinator = cluster.state.coordinator("epochs").node_id
    with Speaker(cluster, coordinator) as speak:
        speak(
            ApiKey.OFFSET_COMMIT,
            group_id="epochs",
            generation_id_or_member_epoch=-1,
            member_id="",
            topics=[
                {
                    "name": "t",
                    "topic_id": cluster.state.topics["t"].topic_id,
                    "partitions": [
                        {"partition_index": 0, "committed_offset": 9, "committed_leader_epoch": 7}
                    ],
                }
            ],
        )
        low, high = cluster.versions[ApiKey.OFFSET_FETCH]
        for version in range(max(low, 5), high + 1):  # the epoch came with v5
            topics = [
                {
                    "name": "t",
                    "topic_id": cluster.state.topics["t"].topic_id,
                    "partition_indexes": [0],
                }
            ]
            answer = speak(
                ApiKey.OFFSET_FETCH,
                version=version,
                group_id="epochs",
                topics=topics,
                groups=[{"group_id": "epochs", "topics": topics}],
            )
            topic = answer.groups[0].topics[0] if version >= 8 else answer.topics[0]
            [partition] = topic.partitions
            assert (partition.committed_offset, partition.committed_leader_epoch) == (9, 7), version
