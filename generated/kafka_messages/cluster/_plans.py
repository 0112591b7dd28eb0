# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""What the cluster helpers do, without I/O: each job is a generator that yields ``Ask``
(requests for nodes) and gets the answers back, so the blocking ``Cluster`` and the asyncio
``AsyncCluster`` run the same code. Requests are built per version where the shape
depends on it (``Build``: FindCoordinator v4 batches its keys)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

from .._codec import field_names, item_class
from ..error_codes import ErrorCode, error_code, errors_in
from ..errors import ProtocolError
from ..registry import API_KEYS, ApiKey
from ._metadata import BrokerInfo, ClusterMetadata
from ._responses import PARTITION_INDEX, FetchedPartition, fetched_records, first

T = TypeVar("T")
REFRESH_LEADER = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE})
"""Partition errors after which the leader is looked up again."""
REFRESH_COORDINATOR = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE})
"""Errors after which the group's coordinator is looked up again."""


@dataclass(frozen=True)
class Build:
    """A request built once the version is known: ``make(connection)`` gets the node's
    ``ClientConnection`` (``version_for``)."""

    make: Callable[[Any], Any]


Item = Union[Any, Build]


@dataclass(frozen=True)
class Ask:
    """Send each request to its node (None: any broker); resume with the answers in the
    same order: a response, None for an acks=0 Produce, or the ``ConnectionFailedError``
    that ended that node's connection."""

    requests: Sequence[tuple[int | None, Item]]


Plan = Generator[Ask, list[Any], T]


@dataclass
class ClusterState:
    """What the helpers remember between jobs."""

    metadata: ClusterMetadata = field(default_factory=ClusterMetadata)
    coordinators: dict[str, int] = field(default_factory=dict)
    retries: int = 3


def message(api_key: int, cls_attr: str = "request") -> Any:
    entry = API_KEYS.get(api_key)
    if entry is None:
        raise ProtocolError(-1, f"this package was generated without api key {api_key}", False, "")
    return getattr(entry, cls_attr)


def pick(cls: type, *names: str) -> str:
    """The first of ``names`` that ``cls`` has (field names changed across releases)."""
    have = field_names(cls)
    for name in names:
        if name in have:
            return name
    raise KeyError(f"{cls.__name__} has none of {', '.join(names)}")


# --- metadata -------------------------------------------------------------------------------


def refresh_plan(state: ClusterState, topics: list[str] | None = None) -> Plan[ClusterMetadata]:
    """Ask any broker for Metadata (of ``topics``, or of every topic)."""
    request_class = message(ApiKey.METADATA)

    def make(connection: Any) -> Any:
        version = connection.version_for(ApiKey.METADATA)
        if topics is None:
            return request_class(topics=None if version >= 1 else ())
        topic = item_class(request_class, "topics")
        wanted = [topic(name=name) for name in topics]
        if version < 4:  # before v4 a broker may create the topics it is asked about
            return request_class(topics=wanted)
        return request_class(topics=wanted, allow_auto_topic_creation=False)

    [answer] = yield Ask([(None, Build(make))])
    if isinstance(answer, Exception):
        raise answer
    fresh = ClusterMetadata.from_response(answer)
    state.metadata = fresh if topics is None else state.metadata.merged(fresh)
    return state.metadata


# --- produce and fetch ----------------------------------------------------------------------


def produce_request(
    metadata: ClusterMetadata, topic: str, batches: Mapping[int, bytes], acks: int, timeout_ms: int
) -> Any:
    """A Produce request for ``topic`` naming it both ways (name up to v12, id from v13)."""
    cls = message(ApiKey.PRODUCE)
    topics_attr = pick(cls, "topic_data", "topics")
    topic_cls = item_class(cls, topics_attr)
    parts_attr = pick(topic_cls, "partition_data", "partitions")
    part_cls = item_class(topic_cls, parts_attr)
    index = pick(part_cls, "index", "partition_index")
    parts = [part_cls(**{index: p, "records": data}) for p, data in sorted(batches.items())]
    fields: dict[str, Any] = {"name": topic, parts_attr: parts}
    topic_id = metadata.topic_id(topic)
    if topic_id is not None and "topic_id" in field_names(topic_cls):
        fields["topic_id"] = topic_id
    return cls(acks=acks, timeout_ms=timeout_ms, **{topics_attr: [topic_cls(**fields)]})


def fetch_request(
    metadata: ClusterMetadata,
    topic: str,
    offsets: Mapping[int, int],
    max_wait_ms: int,
    max_bytes: int,
    isolation_level: int,
) -> Any:
    """A Fetch request (a consumer's: replica id -1) for ``topic``, by name and by id."""
    cls = message(ApiKey.FETCH)
    topic_cls = item_class(cls, "topics")
    parts_attr = pick(topic_cls, "partitions", "fetch_partitions")
    part_cls = item_class(topic_cls, parts_attr)
    index = pick(part_cls, "partition", "partition_index")
    limit = pick(part_cls, "partition_max_bytes", "max_bytes")
    parts = [
        part_cls(**{index: p, "fetch_offset": offset, limit: max_bytes})
        for p, offset in sorted(offsets.items())
    ]
    fields: dict[str, Any] = {pick(topic_cls, "topic", "name"): topic, parts_attr: parts}
    topic_id = metadata.topic_id(topic)
    if topic_id is not None and "topic_id" in field_names(topic_cls):
        fields["topic_id"] = topic_id
    wait = pick(cls, "max_wait_ms", "max_wait")
    options = {wait: max_wait_ms, "min_bytes": 1, "max_bytes": max_bytes, "replica_id": -1}
    if "isolation_level" in field_names(cls):
        options["isolation_level"] = isolation_level
    return cls(topics=[topic_cls(**fields)], **options)


def by_leader(
    state: ClusterState, topic: str, partitions: Mapping[int, T]
) -> dict[int, dict[int, T]]:
    groups: dict[int, dict[int, T]] = {}
    for partition, value in partitions.items():
        groups.setdefault(state.metadata.leader(topic, partition), {})[partition] = value
    return groups


def produce_plan(
    state: ClusterState, topic: str, batches: Mapping[int, bytes], acks: int, timeout_ms: int
) -> Plan[dict[int, int]]:
    """Each partition's batch to its leader; returns partition -> base offset (-1 with
    acks=0). A moved leader (NOT_LEADER_OR_FOLLOWER) or a lost connection: the metadata is
    refreshed and those partitions sent again, ``state.retries`` times at most."""
    if topic not in state.metadata.topics:
        yield from refresh_plan(state, [topic])
    offsets: dict[int, int] = {}
    left = dict(batches)
    for attempt in range(state.retries + 1):
        groups = by_leader(state, topic, left)
        asks = [
            (node, produce_request(state.metadata, topic, parts, acks, timeout_ms))
            for node, parts in groups.items()
        ]
        answers = yield Ask(asks)
        left, failure = {}, None
        for (node, parts), answer in zip(groups.items(), answers):
            if answer is None:  # acks=0
                offsets.update({p: -1 for p in parts})
                continue
            if isinstance(answer, Exception):
                left.update(parts)
                failure = answer
                continue
            for t in answer.responses:
                for p in first(t, ("partition_responses", "partitions"), ()):
                    index, code = first(p, PARTITION_INDEX), error_code(p.error_code)
                    if code == ErrorCode.NONE:
                        offsets[index] = p.base_offset
                    elif code in REFRESH_LEADER and attempt < state.retries:
                        left[index] = parts[index]
                    else:
                        path = f"{topic}[{index}]"
                        raise ProtocolError(code, code.name, code.retriable, path)
        if not left:
            return offsets
        if failure is not None and attempt == state.retries:
            raise failure
        yield from refresh_plan(state, [topic])
    return offsets


def fetch_plan(
    state: ClusterState,
    topic: str,
    offsets: Mapping[int, int],
    max_wait_ms: int,
    max_bytes: int,
    isolation_level: int,
) -> Plan[dict[int, FetchedPartition]]:
    """Records of each partition from ``offsets``, from the leaders; moved leaders are
    looked up again as for ``produce``. Other partition errors are in the result."""
    if topic not in state.metadata.topics:
        yield from refresh_plan(state, [topic])
    result: dict[int, FetchedPartition] = {}
    left = dict(offsets)
    for attempt in range(state.retries + 1):
        groups = by_leader(state, topic, left)
        asks = [
            (node, fetch_request(state.metadata, topic, parts, max_wait_ms, max_bytes,
                                 isolation_level))
            for node, parts in groups.items()
        ]  # fmt: skip
        answers = yield Ask(asks)
        left, failure = {}, None
        for (node, parts), answer in zip(groups.items(), answers):
            if isinstance(answer, Exception):
                left.update(parts)
                failure = answer
                continue
            wanted = {(topic, p): offset for p, offset in parts.items()}
            for read in fetched_records(answer, state.metadata.names, wanted):
                if read.error in REFRESH_LEADER and attempt < state.retries:
                    left[read.partition] = parts[read.partition]
                else:
                    result[read.partition] = read
        if not left:
            return result
        if failure is not None and attempt == state.retries:
            raise failure
        yield from refresh_plan(state, [topic])
    return result


# --- routing --------------------------------------------------------------------------------


def coordinator_plan(state: ClusterState, group_id: str, again: bool = False) -> Plan[int]:
    """The node id of ``group_id``'s coordinator (FindCoordinator, remembered)."""
    if not again and group_id in state.coordinators:
        return state.coordinators[group_id]
    request_class = message(ApiKey.FIND_COORDINATOR)

    def make(connection: Any) -> Any:
        if connection.version_for(ApiKey.FIND_COORDINATOR) >= 4:  # KIP-699: a batch of keys
            return request_class(key_type=0, coordinator_keys=[group_id])
        return request_class(key=group_id)

    [answer] = yield Ask([(None, Build(make))])
    if isinstance(answer, Exception):
        raise answer
    found = answer.coordinators[0] if getattr(answer, "coordinators", ()) else answer
    code = error_code(found.error_code)
    if code != ErrorCode.NONE:
        raise ProtocolError(code, code.name, code.retriable, f"coordinator of {group_id!r}")
    brokers = dict(state.metadata.brokers)
    brokers[found.node_id] = BrokerInfo(found.node_id, found.host, found.port)
    state.metadata = state.metadata.merged(ClusterMetadata(brokers.values()))
    node_id: int = found.node_id
    state.coordinators[group_id] = node_id
    return node_id


def coordinator_request_plan(state: ClusterState, group_id: str, request: Item) -> Plan[Any]:
    """``request`` to the group's coordinator; on NOT_COORDINATOR or
    COORDINATOR_NOT_AVAILABLE (or a lost connection) it is found again and asked again."""
    answer: Any = None
    for attempt in range(state.retries + 1):
        node = yield from coordinator_plan(state, group_id, again=attempt > 0)
        [answer] = yield Ask([(node, request)])
        if isinstance(answer, Exception):
            if attempt == state.retries:
                raise answer
            continue
        codes = {error_code(getattr(answer, "error_code", ErrorCode.NONE))}
        codes |= {e for _, e in _errors(answer)}
        if not codes & REFRESH_COORDINATOR:
            return answer
    return answer


def leader_request_plan(
    state: ClusterState, topic: str, partition: int, request: Item
) -> Plan[Any]:
    """``request`` to the leader of ``topic``'s ``partition``; on NOT_LEADER_OR_FOLLOWER (or a
    lost connection) the metadata is refreshed and it is asked again."""
    answer: Any = None
    if topic not in state.metadata.topics:
        yield from refresh_plan(state, [topic])
    for attempt in range(state.retries + 1):
        node = state.metadata.leader(topic, partition)
        [answer] = yield Ask([(node, request)])
        moved = isinstance(answer, Exception) or any(
            e in REFRESH_LEADER for _, e in _errors(answer)
        )
        if not moved:
            return answer
        if attempt == state.retries:
            if isinstance(answer, Exception):
                raise answer
            return answer
        yield from refresh_plan(state, [topic])
    return answer


def _errors(response: Any) -> list[tuple[str, ErrorCode]]:
    return list(errors_in(response))
