"""ACLs enforced on the requests, as Kafka's request handlers check them (apache/kafka
``KafkaApis``, ``ControllerApis`` for what a KRaft broker forwards, ``AuthHelper``), with
Kafka's errors.

``guard`` (``Routes.guard`` when the cluster has an authorizer) runs in front of each
handler. Per API, the resources a request names are checked: the refused ones get their
error, the handler answers the others (``layouts.split``); for an API whose request is one
resource (a group, a transactional id) or the cluster, a refusal is the whole answer.

Clients (``authorize_clients``):

===========================  ==============================================================
Produce                      WRITE on the transactional id (if any), WRITE on each topic
Fetch                        READ on each topic
ListOffsets                  DESCRIBE on each topic
OffsetForLeaderEpoch         DESCRIBE on each topic
Metadata                     DESCRIBE on each topic: a listing of every topic leaves the
                             others out, named ones get TOPIC_AUTHORIZATION_FAILED; creating
                             one needs CREATE on the cluster or the topic
DescribeCluster              (the cluster's authorized operations need DESCRIBE on it)
CreateTopics / DeleteTopics  CREATE (on the cluster, else each topic) / DELETE on each topic
FindCoordinator              DESCRIBE on the group or transactional id
Join/Sync/Heartbeat/Leave    READ on the group
OffsetCommit                 READ on the group, READ on each topic
OffsetFetch                  DESCRIBE on the group, DESCRIBE on each topic (a listing of
                             every committed offset leaves the others out)
DescribeGroups / ListGroups  DESCRIBE on each group / on the cluster, else only the groups
                             the principal may describe
InitProducerId               WRITE on the transactional id; an idempotent producer needs
                             IDEMPOTENT_WRITE on the cluster or WRITE on some topic
AddPartitionsToTxn           WRITE on the transactional id and on each topic (one refused
                             topic: nothing added, the others OPERATION_NOT_ATTEMPTED)
AddOffsetsToTxn              WRITE on the transactional id, READ on the group
TxnOffsetCommit              WRITE on the transactional id, READ on the group and topics
EndTxn                       WRITE on the transactional id
===========================  ==============================================================

Admin APIs (``authorize_admin``); "the cluster" refuses the whole request with
CLUSTER_AUTHORIZATION_FAILED:

===========================  ==============================================================
DescribeConfigs              DESCRIBE_CONFIGS on each resource: the cluster for brokers,
                             broker loggers and client metrics, else the topic or group
AlterConfigs, Incremental-   ALTER_CONFIGS on each resource, as DescribeConfigs
AlterConfigs
ListConfigResources          DESCRIBE_CONFIGS on the cluster
CreatePartitions             ALTER on each topic
DeleteRecords                DELETE on each topic
ElectLeaders                 ALTER on the cluster (each partition named refused too)
AlterPartitionReassignments  ALTER on the cluster (each partition named refused too)
ListPartitionReassignments   DESCRIBE on the cluster
DescribeTopicPartitions      DESCRIBE on each topic, as Metadata; the topics' authorized
                             operations
DescribeLogDirs              DESCRIBE on the cluster (no directory listed without)
AlterReplicaLogDirs          ALTER on the cluster (each partition refused)
DescribeQuorum               DESCRIBE on the cluster
UpdateFeatures               ALTER on the cluster
DescribeProducers            READ on each topic
DescribeTransactions         DESCRIBE on each transactional id; only the topics the
                             principal may describe are listed
ListTransactions             only the transactional ids the principal may describe
WriteTxnMarkers              ALTER or CLUSTER_ACTION on the cluster (each partition refused)
DeleteGroups                 DELETE on each group
OffsetDelete                 DELETE on the group, READ on each topic
===========================  ==============================================================

KIP-848 and KIP-932 (``authorize_modern``):

===========================  ==============================================================
ConsumerGroupHeartbeat,      READ on the group; DESCRIBE on every topic subscribed to by
ShareGroupHeartbeat          name (else TOPIC_AUTHORIZATION_FAILED); a regex matches only
                             the topics the member may describe
ConsumerGroupDescribe,       DESCRIBE on each group; a group whose assignments name a topic
ShareGroupDescribe           the principal may not describe: TOPIC_AUTHORIZATION_FAILED
ShareFetch, ShareAcknowledge READ on the group; READ on each topic of the share session
                             (TOPIC_AUTHORIZATION_FAILED per partition)
DescribeShareGroupOffsets    DESCRIBE on each group and each topic (a listing of every
                             topic leaves the others out)
AlterShareGroupOffsets       READ on the group, READ on each topic
DeleteShareGroupOffsets      DELETE on the group, READ on each topic
===========================  ==============================================================

``UNCHECKED`` names the APIs served without a guard, and why.
"""

from __future__ import annotations

from typing import Any

from ..api_keys import ApiKey
from . import authorize_admin as admin
from . import authorize_clients as clients
from . import authorize_modern as modern
from .acl import Operation
from .authorize_kit import Answer, Guard, on_cluster_only, on_topics
from .call import Call


def guard(call: Call, answer: Answer) -> Any:
    """``answer(call)`` for what the principal may do, Kafka's errors for the rest."""
    authorizer = call.state.authorizer
    rule = GUARDS.get(call.api_key)
    if authorizer is None or rule is None:
        return answer(call)
    return rule(call, authorizer, answer)


GUARDS: dict[int, Guard] = {
    # clients
    ApiKey.PRODUCE: clients.produce,
    ApiKey.FETCH: on_topics(Operation.READ),
    ApiKey.LIST_OFFSETS: on_topics(Operation.DESCRIBE),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: on_topics(Operation.DESCRIBE),
    ApiKey.METADATA: clients.metadata,
    ApiKey.DESCRIBE_CLUSTER: clients.describe_cluster,
    ApiKey.CREATE_TOPICS: clients.create_topics,
    ApiKey.DELETE_TOPICS: on_topics(Operation.DELETE),
    ApiKey.FIND_COORDINATOR: clients.find_coordinator,
    ApiKey.JOIN_GROUP: clients.group_read,
    ApiKey.SYNC_GROUP: clients.group_read,
    ApiKey.HEARTBEAT: clients.group_read,
    ApiKey.LEAVE_GROUP: clients.group_read,
    ApiKey.OFFSET_COMMIT: clients.offset_commit,
    ApiKey.OFFSET_FETCH: clients.offset_fetch,
    ApiKey.DESCRIBE_GROUPS: clients.describe_groups,
    ApiKey.LIST_GROUPS: clients.list_groups,
    ApiKey.INIT_PRODUCER_ID: clients.init_producer_id,
    ApiKey.ADD_PARTITIONS_TO_TXN: clients.add_partitions_to_txn,
    ApiKey.ADD_OFFSETS_TO_TXN: clients.add_offsets_to_txn,
    ApiKey.TXN_OFFSET_COMMIT: clients.txn_offset_commit,
    ApiKey.END_TXN: clients.end_txn,
    # configs
    ApiKey.DESCRIBE_CONFIGS: admin.describe_configs,
    ApiKey.ALTER_CONFIGS: admin.alter_configs,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: admin.alter_configs,
    ApiKey.LIST_CONFIG_RESOURCES: on_cluster_only(Operation.DESCRIBE_CONFIGS),
    # partitions
    ApiKey.CREATE_PARTITIONS: on_topics(Operation.ALTER, level=admin.CREATE_PARTITIONS),
    ApiKey.DELETE_RECORDS: on_topics(Operation.DELETE, level=admin.DELETE_RECORDS),
    ApiKey.ELECT_LEADERS: on_cluster_only(Operation.ALTER, admin.ELECT_LEADERS),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: on_cluster_only(
        Operation.ALTER, admin.ALTER_REASSIGNMENTS
    ),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: on_cluster_only(
        Operation.DESCRIBE, admin.LIST_REASSIGNMENTS
    ),
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: admin.describe_topic_partitions,
    # the cluster
    ApiKey.DESCRIBE_LOG_DIRS: admin.describe_log_dirs,
    ApiKey.ALTER_REPLICA_LOG_DIRS: admin.alter_replica_log_dirs,
    ApiKey.DESCRIBE_QUORUM: on_cluster_only(Operation.DESCRIBE),
    ApiKey.UPDATE_FEATURES: on_cluster_only(Operation.ALTER),
    # producers and transactions
    ApiKey.DESCRIBE_PRODUCERS: admin.describe_producers,
    ApiKey.DESCRIBE_TRANSACTIONS: admin.describe_transactions,
    ApiKey.LIST_TRANSACTIONS: admin.list_transactions,
    ApiKey.WRITE_TXN_MARKERS: admin.write_txn_markers,
    # group admin
    ApiKey.DELETE_GROUPS: admin.delete_groups,
    ApiKey.OFFSET_DELETE: admin.offset_delete,
    # KIP-848 and KIP-932
    ApiKey.CONSUMER_GROUP_HEARTBEAT: modern.heartbeat,
    ApiKey.CONSUMER_GROUP_DESCRIBE: modern.describe_groups("assignment", "target_assignment"),
    ApiKey.SHARE_GROUP_HEARTBEAT: modern.heartbeat,
    ApiKey.SHARE_GROUP_DESCRIBE: modern.describe_groups("assignment"),
    ApiKey.SHARE_FETCH: modern.share_session,
    ApiKey.SHARE_ACKNOWLEDGE: modern.share_session,
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: modern.describe_share_offsets,
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: modern.alter_share_offsets,
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: modern.delete_share_offsets,
}
"""API key -> its check."""

UNCHECKED: dict[int, str] = {
    ApiKey.API_VERSIONS: "answered to anyone, before authentication too",
    ApiKey.SASL_HANDSHAKE: "authentication itself",
    ApiKey.SASL_AUTHENTICATE: "authentication itself",
    ApiKey.DESCRIBE_ACLS: "checks DESCRIBE on the cluster itself (acls)",
    ApiKey.CREATE_ACLS: "checks ALTER on the cluster itself (acls)",
    ApiKey.DELETE_ACLS: "checks ALTER on the cluster itself (acls)",
}
"""API key -> why the fake broker serves it without a guard (as Kafka does)."""
