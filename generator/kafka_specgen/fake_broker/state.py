"""What the fake cluster remembers: brokers, topics, groups, producers and transactions.

One ``ClusterState`` serves every broker of the cluster. Only the event loop's thread
changes it (handlers run there, one at a time), so nothing here takes a lock; tests read it
freely, and change it through ``FakeCluster.call`` while the cluster runs.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .acl import Authorizer
from .clock import Alarm, Timers
from .log import PartitionLog, Topic
from .modern import ModernGroup
from .waiting import Signal

if TYPE_CHECKING:
    from .release import Emulation


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
    joined: bool = False
    """Whether it joined the rebalance under way (PreparingRebalance)."""
    last_seen: float = 0.0


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None


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
    static: dict[str, str] = field(default_factory=dict)
    """group.instance.id -> the member id that holds it now (KIP-345)."""
    fenced: dict[str, str] = field(default_factory=dict)
    """Member ids replaced by a static member's rejoin -> its group.instance.id."""
    join_deadline: float = 0.0
    """When the rebalance under way completes even if members are missing."""
    initial_delay_until: float = 0.0
    """A rebalance of an empty group waits until then for more members to come."""
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    """(topic, partition) -> the committed offset."""
    changed: Signal = field(default_factory=Signal, repr=False)
    """Fired when members join, sync or leave: wakes the waiting JoinGroup/SyncGroup."""
    type: str = "classic"
    """classic, consumer (KIP-848) or share (KIP-932): group ids are one namespace."""
    modern: ModernGroup | None = None
    """The members and assignments of a consumer or share group (None for a classic one)."""
    initial_delay: float = 0.1
    """group.initial.rebalance.delay.ms, in seconds."""
    watchdog: Alarm = field(default_factory=lambda: Alarm(None), repr=False)
    """A classic group's timer: its members' sessions and its rebalance deadline."""

    @property
    def empty(self) -> bool:
        if self.modern is not None:
            return not self.modern.members
        return not self.members and not self.pending


@dataclass
class Transaction:
    transactional_id: str
    producer_id: int
    epoch: int
    partitions: set[tuple[str, int]] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    pending_offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = field(default_factory=dict)
    state: str = "Empty"
    """Kafka's transaction states: Empty, Ongoing, CompleteCommit, CompleteAbort (the
    Prepare* states pass at once here)."""
    timeout_ms: int = 60000
    started_ms: int = -1
    """When its first partition or group joined it (wall clock)."""
    last_end: tuple[int, bool] | None = None
    """(the epoch it ended at, committed) of the last EndTxn, to answer its retry."""


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
    release: Emulation | None = None
    """The release the brokers emulate (None: every version of the spec set)."""
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    """(resource type, name) -> configs set by AlterConfigs, for brokers (name "" for the
    cluster-wide default), groups and client metrics (topics keep theirs)."""
    timers: Timers | None = field(default=None, repr=False)
    """The event loop's timers (None: no timer is set; time acts when requests come)."""
    group_initial_rebalance_delay: float = 0.1
    """Seconds a new classic group waits for more members (group.initial.rebalance.delay.ms)."""
    authorizer: Authorizer | None = None
    """The ACLs and super users, when the cluster enforces ACLs."""
    coordinators: dict[tuple[str, str], int] = field(default_factory=dict)
    """(key type, key) -> the node id set to coordinate it (``coordinator_set``)."""
    _by_id: dict[uuid.UUID, Topic] = field(default_factory=dict, repr=False)

    @property
    def release_name(self) -> str | None:
        """The emulated release (``3.9.0``), None without one: config defaults follow it."""
        return None if self.release is None else self.release.broker.name

    def create_topic(self, name: str, partitions: int) -> Topic:
        count = len(self.brokers)
        topic = Topic(
            name, [PartitionLog(leader=self.brokers[i % count].node_id) for i in range(partitions)]
        )
        self.topics[name] = topic
        self._by_id[topic.topic_id] = topic
        return topic

    def delete_topic(self, name: str) -> Topic | None:
        topic = self.topics.pop(name, None)
        if topic is not None:
            self._by_id.pop(topic.topic_id, None)
        return topic

    def topic_by_id(self, topic_id: uuid.UUID | None) -> Topic | None:
        if topic_id is None:
            return None
        topic = self._by_id.get(topic_id)
        if topic is not None and self.topics.get(topic.name) is topic:
            return topic
        # the index misses topics put into ``topics`` by hand (tests may)
        return next((t for t in self.topics.values() if t.topic_id == topic_id), None)

    def coordinator(self, key: str, kind: str = "group") -> BrokerAddress:
        """The broker that coordinates a group, a transactional id or a share partition
        (``kind`` "group", "transaction" or "share"): the one set for it, else a stable hash
        of the key."""
        chosen = self.coordinators.get((kind, key))
        if chosen is not None:
            return self.brokers[chosen]
        return self.brokers[zlib.crc32(key.encode()) % len(self.brokers)]

    def group(self, group_id: str) -> Group:
        if group_id not in self.groups:
            self.groups[group_id] = Group(
                group_id,
                initial_delay=self.group_initial_rebalance_delay,
                watchdog=Alarm(self.timers),
            )
        return self.groups[group_id]

    def alarm(self) -> Alarm:
        """A timer on the cluster's loop (one that never fires without a loop)."""
        return Alarm(self.timers)

    def later(self, when: float, callback: Callable[[], None]) -> Any:
        """Run ``callback`` on the loop at ``when`` (``time.monotonic``); None without one."""
        return self.timers.call_at(when, callback) if self.timers is not None else None

    def new_producer_id(self) -> int:
        self.next_producer_id += 1
        return self.next_producer_id
