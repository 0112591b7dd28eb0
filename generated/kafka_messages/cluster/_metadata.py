# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``ClusterMetadata``: what a Metadata response says about a cluster, as lookups.

Topic names and ids (Kafka 4.1+ names topics by id in Produce v13 and Fetch v13+), the
leader of each partition, the brokers' addresses. Pure: built from a decoded response.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from ..error_codes import ErrorCode, error_code

ZERO_UUID = UUID(int=0)


@dataclass(frozen=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: UUID | None
    """None when the broker gave no id (Metadata before v10, or a broker before 2.8)."""
    leaders: dict[int, int] = field(default_factory=dict)
    """Partition -> the node id of its leader (-1: none now)."""
    error: ErrorCode = ErrorCode.NONE


class ClusterMetadata:
    """Brokers, topics with their ids and partition leaders (``from_response``)."""

    def __init__(
        self,
        brokers: Iterable[BrokerInfo] = (),
        topics: Iterable[TopicInfo] = (),
        controller_id: int = -1,
        cluster_id: str | None = None,
    ) -> None:
        self.brokers: dict[int, BrokerInfo] = {b.node_id: b for b in brokers}
        self.topics: dict[str, TopicInfo] = {t.name: t for t in topics}
        self.controller_id = controller_id
        self.cluster_id = cluster_id
        self._names = {t.topic_id: t.name for t in self.topics.values() if t.topic_id}

    @classmethod
    def from_response(cls, response: Any) -> ClusterMetadata:
        """From a decoded ``MetadataResponse`` of any version."""
        brokers = [
            BrokerInfo(b.node_id, b.host, b.port, getattr(b, "rack", None))
            for b in response.brokers
        ]
        topics = []
        for t in response.topics:
            if t.name is None:
                continue
            topic_id = getattr(t, "topic_id", None)
            leaders = {p.partition_index: p.leader_id for p in t.partitions}
            ident = None if topic_id in (None, ZERO_UUID) else topic_id
            topics.append(TopicInfo(t.name, ident, leaders, error_code(t.error_code)))
        controller = getattr(response, "controller_id", -1)
        return cls(brokers, topics, controller, getattr(response, "cluster_id", None))

    def merged(self, newer: ClusterMetadata) -> ClusterMetadata:
        """These facts updated by a newer response (that may list only some topics)."""
        brokers = {**self.brokers, **newer.brokers}.values()
        topics = {**self.topics, **newer.topics}.values()
        controller = newer.controller_id if newer.controller_id != -1 else self.controller_id
        return ClusterMetadata(brokers, topics, controller, newer.cluster_id or self.cluster_id)

    def topic(self, name: str) -> TopicInfo:
        found = self.topics.get(name)
        if found is None:
            raise KeyError(f"no topic {name!r} in the metadata (known: {sorted(self.topics)})")
        return found

    def topic_id(self, name: str) -> UUID | None:
        """The id of topic ``name`` (None when the broker gave none: before Kafka 2.8)."""
        return self.topic(name).topic_id

    def topic_name(self, topic_id: UUID) -> str:
        """The name of the topic with this id."""
        name = self._names.get(topic_id)
        if name is None:
            raise KeyError(f"no topic with id {topic_id} in the metadata")
        return name

    @property
    def names(self) -> Mapping[UUID, str]:
        """Topic id -> name, for reading responses that name topics by id."""
        return self._names

    def leader(self, topic: str, partition: int) -> int:
        """The node id of the leader of ``topic``'s ``partition`` (-1: none now)."""
        leaders = self.topic(topic).leaders
        if partition not in leaders:
            raise KeyError(f"topic {topic!r} has no partition {partition}")
        return leaders[partition]

    def partitions(self, topic: str) -> list[int]:
        return sorted(self.topic(topic).leaders)
