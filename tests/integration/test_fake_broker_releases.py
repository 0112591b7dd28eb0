"""The fake broker served from each Kafka release's own spec set (2.4.0 to 4.3.1), whose
generated packages name fields differently (Fetch's ``partitions`` were
``partition_responses`` in 2.7-2.8, Produce's ``topic_data`` was ``topics`` before 2.8, ...).

- every handler's request ``Protocol`` is readable from every release's request classes;
- our own client sends every implemented API at every version the broker advertises, with
  real content, and gets the answers Kafka gives;
- real clients (librdkafka, kafka-python, aiokafka) produce with every codec, consume in a
  group, commit and resume against a user's spec folder (2.8.0's) with a release; the
  matrix of releases served with their bundled data is test_fake_broker.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from kafka_specgen.fake_broker.dispatch import HANDLERS
from kafka_specgen.fake_broker.shapes import Shapes
from kafka_specgen.library import GeneratedPackage, generated_package
from tests.support import fake_clients
from tests.support.genpkg import CORPORA

RELEASE_CORPORA = (
    sorted(
        (p.name for p in CORPORA.iterdir() if p.is_dir() and p.name[0].isdigit()),
        key=lambda name: tuple(int(part) for part in name.split(".")),
    )
    if CORPORA.is_dir()
    else []
)
pytestmark = pytest.mark.skipif(not RELEASE_CORPORA, reason="no ../shared/kafka-specs")
ROUND_TRIP = ["2.8.0"]
#: where the field names of the implemented APIs change, and the ends
EVERY_VERSION = ["2.4.0", "2.5.0", "2.7.0", "2.8.0", "3.0.0", "3.5.0", "3.7.0", "4.0.2", "4.3.1"]


def package(release: str) -> GeneratedPackage:
    return generated_package([CORPORA / release])


@pytest.mark.parametrize("release", RELEASE_CORPORA)
def test_every_request_protocol_reads_every_release(release: str) -> None:
    pkg = package(release)
    registry, shapes = pkg.module("registry"), Shapes(pkg)
    checked = 0
    for key, handler in HANDLERS.items():
        entry = registry.API_KEYS.get(key)
        if entry is None or handler.reads is None:
            continue
        assert shapes.unreadable(entry.request, handler.reads, handler.names) == [], key
        checked += 1
    assert checked >= 20


# --- every API at every version --------------------------------------------------------------


class Requests:
    """Requests built from values under the newest field names (nested structs as dicts),
    for one release's package, fitted to the version they are sent at."""

    def __init__(self, pkg: GeneratedPackage) -> None:
        self.pkg, self.shapes = pkg, Shapes(pkg)
        self.registry = pkg.module("registry")

    def make(self, api: int, **values: Any) -> Any:
        return self._make(self.registry.API_KEYS[api].request, HANDLERS[api].names, values)

    def _make(self, cls: type, names: Any, values: dict[str, Any]) -> Any:
        kept = {}
        for name, value in values.items():
            attr = self.shapes.attr(cls, name, names)
            if attr is None:
                continue  # a field this release does not have
            if isinstance(value, dict):
                value = self._make(self.shapes.item(cls, name, names), names, value)
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                item = self.shapes.item(cls, name, names)
                value = [self._make(item, names, v) for v in value]
            kept[attr] = value
        return cls(**kept)


@pytest.fixture(params=EVERY_VERSION)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[FakeCluster, Requests, Any]]:
    release = request.param
    if release not in RELEASE_CORPORA:
        pytest.skip(f"no {release} specs")
    with FakeCluster(CORPORA / release, topics={"t": 2}) as cluster:
        pkg = cluster.package
        connection = pkg.module("connection").ClientConnection(policy={})
        host, port = cluster.bootstrap.rsplit(":", 1)
        with pkg.module("client").Client.connect(host, int(port), connection) as client:
            yield cluster, Requests(pkg), client
        assert cluster.failures == []


def versions(cluster: FakeCluster, key: int, top: int | None = None) -> range:
    low, high = cluster.versions[key]
    return range(low, min(high, top if top is not None else high) + 1)


def send(client: Any, request: Any, version: int, shapes: Shapes) -> Any:
    return client.request(shapes.fit(request, version), version=version)


def records_for(pkg: GeneratedPackage, version: int, value: bytes) -> bytes:
    """A magic-2 batch from Produce v3 on, else a message set of the magic the version
    carries (v2: magic 1, v0-v1: magic 0)."""
    records = pkg.module("records")
    record = records.Record(0, 1_700_000_000_000, None, value)
    if version >= 3:
        return bytes(records.build_batch([record]))
    return bytes(records.build_legacy([record], magic=1 if version == 2 else 0))


def test_data_apis_at_every_version(served: tuple[FakeCluster, Requests, Any]) -> None:
    cluster, req, client = served
    shapes, pkg = req.shapes, req.pkg
    t = cluster.state.topics["t"]
    topic_id = t.topic_id
    produced = 0
    for v in versions(cluster, ApiKey.PRODUCE):
        value = f"v{v}".encode()
        request = req.make(
            ApiKey.PRODUCE,
            acks=-1,
            timeout_ms=1000,
            topic_data=[
                {
                    "name": "t",
                    "topic_id": topic_id,
                    "partition_data": [{"index": 0, "records": records_for(pkg, v, value)}],
                }
            ],
        )
        answer = send(client, request, v, shapes)
        [topic] = _field(shapes, answer, "responses", ApiKey.PRODUCE)
        [result] = _field(shapes, topic, "partition_responses", ApiKey.PRODUCE)
        assert _field(shapes, result, "error_code", ApiKey.PRODUCE) == 0, v
        assert _field(shapes, result, "base_offset", ApiKey.PRODUCE) == produced, v
        produced += 1
    assert t.partitions[0].end == produced
    records = pkg.module("records")
    for v in versions(cluster, ApiKey.FETCH):
        request = req.make(
            ApiKey.FETCH,
            replica_id=-1,
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=1 << 20,
            isolation_level=0,
            topics=[
                {
                    "topic": "t",
                    "topic_id": topic_id,
                    "partitions": [
                        {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
                    ],
                }
            ],
        )
        answer = send(client, request, v, shapes)
        [topic] = _field(shapes, answer, "responses", ApiKey.FETCH)
        [partition] = _field(shapes, topic, "partitions", ApiKey.FETCH)
        assert _field(shapes, partition, "error_code", ApiKey.FETCH) == 0, v
        assert _field(shapes, partition, "high_watermark", ApiKey.FETCH) == produced
        data = _field(shapes, partition, "records", ApiKey.FETCH)
        values = [r.value for b in records.iter_batches(data) for r in b.records()]
        first = versions(cluster, ApiKey.PRODUCE)[0]
        assert values == [f"v{n}".encode() for n in range(first, first + produced)], v
    for v in versions(cluster, ApiKey.LIST_OFFSETS):
        request = req.make(
            ApiKey.LIST_OFFSETS,
            replica_id=-1,
            topics=[{"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1}]}],
        )
        [topic] = send(client, request, v, shapes).topics
        [partition] = topic.partitions
        assert partition.error_code == 0
        offset = partition.old_style_offsets[0] if v == 0 else partition.offset_
        assert offset == produced, v
    for v in versions(cluster, ApiKey.METADATA):
        request = req.make(ApiKey.METADATA, topics=[{"name": "t", "topic_id": None}])
        answer = send(client, request, v, shapes)
        assert [(x.name, len(x.partitions)) for x in answer.topics] == [("t", 2)], v
        assert [b.node_id for b in answer.brokers] == [0]


def _field(shapes: Shapes, obj: Any, name: str, key: int) -> Any:
    """A response field read under its newest name."""
    attr = shapes.attr(type(obj), name, HANDLERS[key].names)
    assert attr is not None, (type(obj).__name__, name)
    return getattr(obj, attr)


def test_admin_apis_at_every_version(served: tuple[FakeCluster, Requests, Any]) -> None:
    cluster, req, client = served
    shapes = req.shapes
    for v in versions(cluster, ApiKey.CREATE_TOPICS):
        request = req.make(
            ApiKey.CREATE_TOPICS,
            timeout_ms=1000,
            topics=[
                {"name": f"new{v}", "num_partitions": 3, "replication_factor": 1},
                {"name": "t", "num_partitions": 1, "replication_factor": 1},
            ],
        )
        answer = send(client, request, v, shapes)
        assert [(x.name, x.error_code) for x in answer.topics] == [(f"new{v}", 0), ("t", 36)]
        assert len(cluster.state.topics[f"new{v}"].partitions) == 3
    for v in versions(cluster, ApiKey.DESCRIBE_CONFIGS):
        request = req.make(
            ApiKey.DESCRIBE_CONFIGS,
            resources=[{"resource_type": 2, "resource_name": "t", "configuration_keys": None}],
        )
        [result] = send(client, request, v, shapes).results
        assert result.error_code == 0 and "retention.ms" in {c.name for c in result.configs}
    if ApiKey.DESCRIBE_CLUSTER in cluster.versions:  # Kafka 2.8 on
        for v in versions(cluster, ApiKey.DESCRIBE_CLUSTER):
            answer = send(client, req.make(ApiKey.DESCRIBE_CLUSTER), v, shapes)
            assert answer.error_code == 0 and [b.broker_id for b in answer.brokers] == [0]
    for v in versions(cluster, ApiKey.DELETE_TOPICS):
        name = f"gone{v}"
        cluster.create_topic(name)
        request = req.make(
            ApiKey.DELETE_TOPICS, timeout_ms=1000, topic_names=[name], topics=[{"name": name}]
        )
        [result] = send(client, request, v, shapes).responses
        assert (result.name, result.error_code) == (name, 0), v
        assert name not in cluster.state.topics
    for v in versions(cluster, ApiKey.FIND_COORDINATOR):
        request = req.make(ApiKey.FIND_COORDINATOR, key="g", key_type=0, coordinator_keys=["g"])
        answer = send(client, request, v, shapes)
        found = answer.coordinators[0] if v >= 4 else answer
        assert (found.error_code, found.node_id) == (0, 0), v


def test_group_apis_at_every_version(served: tuple[FakeCluster, Requests, Any]) -> None:
    """A one-member group's life (join, sync, heartbeat, commit, leave), once per version of
    each group API (the others at their newest)."""
    cluster, req, client = served
    newest = {key: versions(cluster, key)[-1] for key in GROUP_APIS}
    flows = 0
    for key in GROUP_APIS:
        for v in versions(cluster, key):
            group_flow(cluster, req, client, f"g-{key}-{v}", {**newest, key: v})
            flows += 1
    assert flows >= 20


GROUP_APIS = (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP)


def group_flow(
    cluster: FakeCluster, req: Requests, client: Any, group: str, at: dict[int, int]
) -> None:
    shapes = req.shapes

    def join(member_id: str) -> Any:
        request = req.make(
            ApiKey.JOIN_GROUP,
            group_id=group,
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            member_id=member_id,
            protocol_type="consumer",
            protocols=[{"name": "range", "metadata": b"meta"}],
        )
        return send(client, request, at[ApiKey.JOIN_GROUP], shapes)

    joined = join("")
    if at[ApiKey.JOIN_GROUP] >= 4:  # KIP-394: come back with the id handed out
        assert joined.error_code == 79 and joined.member_id
        joined = join(joined.member_id)
    member_id, generation = joined.member_id, joined.generation_id
    assert (joined.error_code, generation, joined.leader) == (0, 1, member_id), at
    assert [m.member_id for m in joined.members] == [member_id]
    assert [m.metadata for m in joined.members] == [b"meta"]
    synced = send(
        client,
        req.make(
            ApiKey.SYNC_GROUP,
            group_id=group,
            generation_id=generation,
            member_id=member_id,
            protocol_type="consumer",
            protocol_name="range",
            assignments=[{"member_id": member_id, "assignment": b"mine"}],
        ),
        at[ApiKey.SYNC_GROUP],
        shapes,
    )
    assert (synced.error_code, synced.assignment) == (0, b"mine"), at
    beat = send(
        client,
        req.make(ApiKey.HEARTBEAT, group_id=group, generation_id=generation, member_id=member_id),
        at[ApiKey.HEARTBEAT],
        shapes,
    )
    assert beat.error_code == 0, at
    assert cluster.state.groups[group].state == "Stable"
    left = send(
        client,
        req.make(
            ApiKey.LEAVE_GROUP,
            group_id=group,
            member_id=member_id,
            members=[{"member_id": member_id}],
        ),
        at[ApiKey.LEAVE_GROUP],
        shapes,
    )
    assert left.error_code == 0 and [m.error_code for m in left.members] in ([], [0]), at
    assert cluster.state.groups[group].state == "Empty"
    assert not cluster.state.groups[group].members


def test_offset_apis_at_every_version(served: tuple[FakeCluster, Requests, Any]) -> None:
    """A simple consumer's commits (generation -1: an empty group), at every version of
    OffsetCommit, each read back at every version of OffsetFetch."""
    cluster, req, client = served
    shapes = req.shapes
    topic_id = cluster.state.topics["t"].topic_id
    for commit_v in versions(cluster, ApiKey.OFFSET_COMMIT):
        offset = 100 + commit_v
        committed = send(
            client,
            req.make(
                ApiKey.OFFSET_COMMIT,
                group_id="simple",
                generation_id_or_member_epoch=-1,
                member_id="",
                topics=[
                    {
                        "name": "t",
                        "topic_id": topic_id,
                        "partitions": [
                            {
                                "partition_index": 1,
                                "committed_offset": offset,
                                "committed_leader_epoch": -1,
                                "committed_metadata": "meta",
                            }
                        ],
                    }
                ],
            ),
            commit_v,
            shapes,
        )
        assert [p.error_code for p in committed.topics[0].partitions] == [0], commit_v
        for fetch_v in versions(cluster, ApiKey.OFFSET_FETCH):
            topics = [{"name": "t", "topic_id": topic_id, "partition_indexes": [1]}]
            request = req.make(
                ApiKey.OFFSET_FETCH,
                group_id="simple",
                topics=topics,
                groups=[{"group_id": "simple", "topics": topics}],
            )
            answer = send(client, request, fetch_v, shapes)
            topic = answer.groups[0].topics[0] if fetch_v >= 8 else answer.topics[0]
            [partition] = topic.partitions
            assert (partition.error_code, partition.committed_offset) == (0, offset), fetch_v
            assert partition.metadata == "meta"


def test_transaction_apis_at_every_version(served: tuple[FakeCluster, Requests, Any]) -> None:
    """A transaction (init, add a partition, add offsets, commit offsets, commit), once per
    version of each transaction API (the others at their newest; AddPartitionsToTxn at
    most v3, the clients' form)."""
    cluster, req, client = served
    top = {ApiKey.ADD_PARTITIONS_TO_TXN: 3}
    apis = (
        ApiKey.INIT_PRODUCER_ID,
        ApiKey.ADD_PARTITIONS_TO_TXN,
        ApiKey.ADD_OFFSETS_TO_TXN,
        ApiKey.TXN_OFFSET_COMMIT,
        ApiKey.END_TXN,
    )
    newest = {key: versions(cluster, key, top.get(key))[-1] for key in apis}
    markers = 0
    for key in apis:
        for v in versions(cluster, key, top.get(key)):
            transaction(cluster, req, client, f"tx-{key}-{v}", {**newest, key: v})
            markers += 1
            log = cluster.state.topics["t"].partitions[0]
            assert sum(b.control for b in log.batches) == markers


def transaction(
    cluster: FakeCluster, req: Requests, client: Any, txn_id: str, at: dict[int, int]
) -> None:
    shapes = req.shapes
    init = send(
        client,
        req.make(ApiKey.INIT_PRODUCER_ID, transactional_id=txn_id, transaction_timeout_ms=10_000),
        at[ApiKey.INIT_PRODUCER_ID],
        shapes,
    )
    assert init.error_code == 0 and init.producer_id > 0, at
    pid, epoch = init.producer_id, init.producer_epoch
    added = send(
        client,
        req.make(
            ApiKey.ADD_PARTITIONS_TO_TXN,
            v3_and_below_transactional_id=txn_id,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[{"name": "t", "partitions": [0]}],
        ),
        at[ApiKey.ADD_PARTITIONS_TO_TXN],
        shapes,
    )
    [topic] = _field(shapes, added, "results_by_topic_v3_and_below", ApiKey.ADD_PARTITIONS_TO_TXN)
    [partition] = _field(shapes, topic, "results_by_partition", ApiKey.ADD_PARTITIONS_TO_TXN)
    assert _field(shapes, partition, "partition_error_code", ApiKey.ADD_PARTITIONS_TO_TXN) == 0
    ids = dict(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch)
    offsets = send(
        client,
        req.make(ApiKey.ADD_OFFSETS_TO_TXN, group_id=txn_id, **ids),
        at[ApiKey.ADD_OFFSETS_TO_TXN],
        shapes,
    )
    assert offsets.error_code == 0, at
    committed = send(
        client,
        req.make(
            ApiKey.TXN_OFFSET_COMMIT,
            group_id=txn_id,
            generation_id=-1,
            member_id="",
            topics=[
                {
                    "name": "t",
                    "partitions": [
                        {"partition_index": 0, "committed_offset": 7, "committed_metadata": ""}
                    ],
                }
            ],
            **ids,
        ),
        at[ApiKey.TXN_OFFSET_COMMIT],
        shapes,
    )
    assert [p.error_code for p in committed.topics[0].partitions] == [0], at
    assert ("t", 0) not in cluster.state.group(txn_id).offsets  # held until the commit
    ended = send(
        client, req.make(ApiKey.END_TXN, committed=True, **ids), at[ApiKey.END_TXN], shapes
    )
    assert ended.error_code == 0, at
    assert cluster.state.groups[txn_id].offsets[("t", 0)].offset == 7


# --- real clients --------------------------------------------------------------------------


@pytest.mark.parametrize("release", ROUND_TRIP)
@pytest.mark.parametrize("client", sorted(fake_clients.CLIENTS))
def test_real_clients_against_each_release_package(client: str, release: str) -> None:
    """Produce with every codec, consume in a group, commit, resume, against a cluster
    served from the release's own specs and advertising the release's versions."""
    if release not in RELEASE_CORPORA:
        pytest.skip(f"no {release} specs")
    name = release.rsplit(".", 1)[0]
    with FakeCluster(CORPORA / release, release=name, brokers=2, topics={"t": 3}) as cluster:
        before, after = fake_clients.CLIENTS[client](cluster.bootstrap, "t")
        first, more = fake_clients.produced("t")
        assert sorted(before) == sorted(first)
        assert sorted(after) == sorted(more)
        assert cluster.failures == []


# --- the APIs of issue 27's admin, group, share and transaction work -------------------------


def _first(obj: Any, *path: str) -> Any:
    """``obj.a[0].b[0]...`` along ``path`` (lists take their first item)."""
    for name in path:
        obj = getattr(obj, name)
        if isinstance(obj, (list, tuple)):
            obj = obj[0]
    return obj


#: api -> (request values for version v, path to the field checked, the value expected)
NEW_APIS: dict[int, tuple[Any, tuple[str, ...], Any]] = {
    ApiKey.DELETE_RECORDS: (
        lambda v: dict(
            topics=[{"name": "t", "partitions": [{"partition_index": 0, "offset": -1}]}],
            timeout_ms=1000,
        ),
        ("topics", "partitions", "error_code"),
        0,
    ),
    ApiKey.ELECT_LEADERS: (
        lambda v: dict(
            election_type=0,
            topic_partitions=[{"topic": "t", "partitions": [0]}],
            timeout_ms=1000,
        ),
        ("replica_election_results", "partition_result", "error_code"),
        84,  # ELECTION_NOT_NEEDED
    ),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: (
        lambda v: dict(
            topics=[{"name": "t", "partitions": [{"partition_index": 0, "replicas": [0]}]}],
            timeout_ms=1000,
            allow_replication_factor_change=True,
        ),
        ("responses", "partitions", "error_code"),
        0,
    ),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: (lambda v: dict(timeout_ms=1000), ("error_code",), 0),
    ApiKey.DESCRIBE_LOG_DIRS: (
        lambda v: dict(topics=[{"topic": "t", "partitions": [0, 1]}]),
        ("results", "topics", "name"),
        "t",
    ),
    ApiKey.ALTER_REPLICA_LOG_DIRS: (
        lambda v: dict(
            dirs=[{"path": "/tmp/kafka-logs", "topics": [{"name": "t", "partitions": [0]}]}]
        ),
        ("results", "partitions", "error_code"),
        0,
    ),
    ApiKey.DESCRIBE_QUORUM: (
        lambda v: dict(
            topics=[{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]
        ),
        ("topics", "partitions", "leader_id"),
        0,
    ),
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: (
        lambda v: dict(topics=[{"name": "t"}], response_partition_limit=10),
        ("topics", "partitions", "leader_id"),
        0,
    ),
    ApiKey.ALTER_CONFIGS: (
        lambda v: dict(
            resources=[
                {
                    "resource_type": 2,
                    "resource_name": "t",
                    "configs": [{"name": "retention.ms", "value": str(1000 + v)}],
                }
            ]
        ),
        ("responses", "error_code"),
        0,
    ),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (
        lambda v: dict(
            resources=[
                {
                    "resource_type": 2,
                    "resource_name": "t",
                    "configs": [{"name": "segment.ms", "config_operation": 0, "value": "99"}],
                }
            ]
        ),
        ("responses", "error_code"),
        0,
    ),
    ApiKey.LIST_CONFIG_RESOURCES: (lambda v: dict(resource_types=[16]), ("error_code",), 0),
    ApiKey.OFFSET_DELETE: (
        lambda v: dict(
            group_id="od", topics=[{"name": "t", "partitions": [{"partition_index": 0}]}]
        ),
        ("topics", "partitions", "error_code"),
        0,
    ),
    ApiKey.DESCRIBE_PRODUCERS: (
        lambda v: dict(topics=[{"name": "t", "partition_indexes": [0]}]),
        ("topics", "partitions", "error_code"),
        0,
    ),
    ApiKey.DESCRIBE_TRANSACTIONS: (
        lambda v: dict(transactional_ids=["nope"]),
        ("transaction_states", "error_code"),
        105,  # TRANSACTIONAL_ID_NOT_FOUND
    ),
    ApiKey.LIST_TRANSACTIONS: (
        lambda v: dict(state_filters=[], producer_id_filters=[], duration_filter=-1),
        ("error_code",),
        0,
    ),
    ApiKey.WRITE_TXN_MARKERS: (
        lambda v: dict(
            markers=[
                {
                    "producer_id": 5,
                    "producer_epoch": 0,
                    "transaction_result": False,
                    "topics": [{"name": "t", "partition_indexes": [0]}],
                    "coordinator_epoch": 0,
                }
            ]
        ),
        ("markers", "topics", "partitions", "error_code"),
        0,
    ),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: (
        lambda v: dict(
            group_id=f"c{v}",
            member_id=f"member-{v}",
            member_epoch=0,
            rebalance_timeout_ms=1000,
            subscribed_topic_names=["t"],
            topic_partitions=[],
        ),
        ("member_epoch",),
        1,
    ),
    ApiKey.SHARE_GROUP_HEARTBEAT: (
        lambda v: dict(
            group_id=f"s{v}", member_id=f"member-{v}", member_epoch=0, subscribed_topic_names=["t"]
        ),
        ("member_epoch",),
        1,
    ),
}


def test_issue_27_apis_at_every_version(served: tuple[FakeCluster, Requests, Any]) -> None:
    """Every admin, consumer-group, share-group and transaction API the release's specs
    have, at every version, with real content: the answer the fake broker gives as Kafka,
    built from the release's own classes (a field a release names differently fails)."""
    cluster, req, client = served
    cluster.call(lambda: cluster.state.group("od"))
    sent = 0
    for api, (values, path, expected) in NEW_APIS.items():
        if api not in cluster.versions:
            continue
        for v in versions(cluster, api):
            answer = send(client, req.make(api, **values(v)), v, req.shapes)
            assert _first(answer, *path) == expected, (api, v)
            sent += 1
    for v in versions(cluster, ApiKey.DELETE_GROUPS):
        cluster.call(lambda: cluster.state.group(f"gone{v}"))
        answer = send(
            client, req.make(ApiKey.DELETE_GROUPS, groups_names=[f"gone{v}"]), v, req.shapes
        )
        assert answer.results[0].error_code == 0 and f"gone{v}" not in cluster.state.groups
    for v in versions(cluster, ApiKey.CREATE_PARTITIONS):
        cluster.create_topic(f"grow{v}", 1)
        request = req.make(
            ApiKey.CREATE_PARTITIONS,
            topics=[{"name": f"grow{v}", "count": 3, "assignments": None}],
            timeout_ms=1000,
        )
        assert send(client, request, v, req.shapes).results[0].error_code == 0
        assert len(cluster.state.topics[f"grow{v}"].partitions) == 3
    if ApiKey.CONSUMER_GROUP_DESCRIBE in cluster.versions:
        for v in versions(cluster, ApiKey.CONSUMER_GROUP_DESCRIBE):
            group = f"c{versions(cluster, ApiKey.CONSUMER_GROUP_HEARTBEAT)[-1]}"
            request = req.make(ApiKey.CONSUMER_GROUP_DESCRIBE, group_ids=[group])
            described = send(client, request, v, req.shapes).groups[0]
            assert (described.error_code, described.group_state) == (0, "Stable"), v
    release = cluster.package.module("registry").API_KEYS
    assert sent >= 15 if ApiKey.DESCRIBE_TOPIC_PARTITIONS in release else sent >= 10
