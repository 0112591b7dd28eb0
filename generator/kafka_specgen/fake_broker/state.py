"""What the fake cluster remembers: brokers, topics, groups, producers and transactions.

One ``ClusterState`` is shared by every listener thread; handlers hold ``lock`` while they
read or change it.
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass, field
from typing import Any

from .log import PartitionLog, Topic

#: Kafka's error codes the fake broker answers with.
NONE = 0
OFFSET_OUT_OF_RANGE = 1
CORRUPT_MESSAGE = 2
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_LEADER_OR_FOLLOWER = 6
NOT_COORDINATOR = 16
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27
UNSUPPORTED_VERSION = 35
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
INVALID_PRODUCER_EPOCH = 47
INVALID_TXN_STATE = 48
MEMBER_ID_REQUIRED = 79
UNKNOWN_TOPIC_ID = 100


@dataclass(frozen=True)
class BrokerAddress:
    node_id: int
    host: str
    port: int


@dataclass
class Member:
    member_id: str
    client_id: str
    client_host: str
    protocols: list[tuple[str, bytes]]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None = None
    assignment: bytes = b""
    joined_generation: int = -1
    last_seen: float = 0.0


@dataclass
class Group:
    group_id: str
    state: str = "Empty"
    """Empty, PreparingRebalance, CompletingRebalance or Stable (Kafka's names)."""
    generation: int = 0
    protocol_type: str = ""
    protocol: str | None = None
    leader: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)
    """Member ids handed out with MEMBER_ID_REQUIRED (KIP-394), not joined yet."""
    rebalance_started: float = 0.0
    offsets: dict[tuple[str, int], tuple[int, str | None]] = field(default_factory=dict)
    """(topic, partition) -> (committed offset, metadata)."""


@dataclass
class Transaction:
    transactional_id: str
    producer_id: int
    epoch: int
    partitions: set[tuple[str, int]] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    pending_offsets: dict[str, dict[tuple[str, int], tuple[int, str | None]]] = field(
        default_factory=dict
    )


@dataclass
class ClusterState:
    brokers: list[BrokerAddress]
    cluster_id: str = "fake-kafka-cluster"
    default_partitions: int = 1
    auto_create_topics: bool = True
    topics: dict[str, Topic] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    transactions: dict[str, Transaction] = field(default_factory=dict)
    next_producer_id: int = 1000
    lock: threading.RLock = field(default_factory=threading.RLock)

    def create_topic(self, name: str, partitions: int) -> Topic:
        count = len(self.brokers)
        topic = Topic(
            name, [PartitionLog(leader=self.brokers[i % count].node_id) for i in range(partitions)]
        )
        self.topics[name] = topic
        return topic

    def topic_by_id(self, topic_id: Any) -> Topic | None:
        for topic in self.topics.values():
            if topic.topic_id == topic_id:
                return topic
        return None

    def coordinator(self, key: str) -> BrokerAddress:
        """The broker that coordinates a group or a transactional id (a stable hash)."""
        return self.brokers[zlib.crc32(key.encode()) % len(self.brokers)]

    def group(self, group_id: str) -> Group:
        if group_id not in self.groups:
            self.groups[group_id] = Group(group_id)
        return self.groups[group_id]

    def new_producer_id(self) -> int:
        self.next_producer_id += 1
        return self.next_producer_id
