"""ACLs on the fake broker: the authorizer's rules (apache/kafka ``StandardAuthorizer``), the
ACL APIs at every version of three releases, the checks on each API with Kafka's errors,
and real clients (confluent-kafka, kafka-python) denied, then granted, over SASL_SSL.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, FakeCluster
from kafka_specgen.fake_broker.acl import AclBinding, AclFilter, Authorizer, Operation
from kafka_specgen.fake_broker.acl import PatternType, Permission, ResourceType, invalid_binding
from kafka_specgen.fake_broker.shapes import Shapes
from tests.integration.test_fake_broker_releases import Requests
from tests.support.fake_requests import connect, fetch_request, fetched, log_end
from tests.support.fake_requests import metadata_request, produce_request, produced
from tests.support.genpkg import CORPORA

SPECS, RELEASE = CORPORA / "4.1.2", "4.1"
USERS = {"admin": "admin-secret", "alice": "alice-secret"}
TOPIC_DENIED, GROUP_DENIED, CLUSTER_DENIED, TXN_DENIED = 29, 30, 31, 53
INVALID_REQUEST, SECURITY_DISABLED, NOT_ATTEMPTED, NOT_COORDINATOR = 42, 54, 55, 16
TOPIC, GROUP, CLUSTER, TXN = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER, 5
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = Permission.ALLOW, Permission.DENY
ALICE = "User:alice"


def acl(
    kind: int,
    name: str,
    operation: Operation,
    permission: Permission = ALLOW,
    pattern: PatternType = LITERAL,
    principal: str = ALICE,
    host: str = "*",
) -> AclBinding:
    return AclBinding(ResourceType(kind), name, pattern, principal, host, operation, permission)


# --- the rules --------------------------------------------------------------------------------------


def authorizer(*acls: AclBinding) -> Authorizer:
    az = Authorizer(["admin"])
    az.acls.update(dict.fromkeys(acls))
    return az


def test_super_users_may_do_anything_and_others_nothing_without_an_acl() -> None:
    az = authorizer()
    assert az.authorize("User:admin", "127.0.0.1", Operation.ALTER, CLUSTER, "kafka-cluster")
    assert not az.authorize(ALICE, "127.0.0.1", Operation.READ, TOPIC, "t")


def test_literal_wildcard_and_prefixed_acls_and_implied_operations() -> None:
    az = authorizer(
        acl(TOPIC, "t", Operation.READ),
        acl(TOPIC, "ord", Operation.WRITE, pattern=PREFIXED),
        acl(GROUP, "*", Operation.READ),
        acl(TOPIC, "conf", Operation.ALTER_CONFIGS),
    )

    def may(operation: Operation, kind: int, name: str) -> bool:
        return az.authorize(ALICE, "127.0.0.1", operation, kind, name)

    assert may(Operation.READ, TOPIC, "t") and may(Operation.DESCRIBE, TOPIC, "t")
    assert not may(Operation.WRITE, TOPIC, "t") and not may(Operation.READ, TOPIC, "t2")
    assert may(Operation.WRITE, TOPIC, "orders") and not may(Operation.WRITE, TOPIC, "or")
    assert may(Operation.READ, GROUP, "any-group")
    assert may(Operation.DESCRIBE_CONFIGS, TOPIC, "conf") and not may(Operation.READ, TOPIC, "conf")
    assert not az.authorize("User:bob", "127.0.0.1", Operation.READ, TOPIC, "t")


def test_deny_wins_and_hosts_and_principals_must_match() -> None:
    az = authorizer(
        acl(TOPIC, "*", Operation.ALL),
        acl(TOPIC, "secret", Operation.READ, DENY),
        acl(TOPIC, "remote", Operation.READ, host="10.0.0.1"),
        acl(TOPIC, "shared", Operation.READ, principal="User:*"),
        acl(GROUP, "g", Operation.ALL, DENY),
        acl(GROUP, "g", Operation.READ),
    )
    assert az.authorize(ALICE, "127.0.0.1", Operation.WRITE, TOPIC, "anything")
    assert not az.authorize(ALICE, "127.0.0.1", Operation.READ, TOPIC, "secret")
    assert az.authorize(ALICE, "127.0.0.1", Operation.WRITE, TOPIC, "secret")
    assert not az.authorize("User:bob", "127.0.0.1", Operation.READ, TOPIC, "remote")
    assert az.authorize("User:bob", "127.0.0.1", Operation.READ, TOPIC, "shared")
    assert not az.authorize(ALICE, "127.0.0.1", Operation.READ, GROUP, "g")


def test_authorized_operations_and_writes_anywhere() -> None:
    az = authorizer(acl(TOPIC, "t", Operation.READ), acl(TOPIC, "w", Operation.WRITE))
    bits = az.authorized_operations(ALICE, "127.0.0.1", TOPIC, "t")
    assert bits == (1 << Operation.READ) | (1 << Operation.DESCRIBE)
    assert az.allows_any(ALICE, "127.0.0.1", Operation.WRITE, TOPIC)
    assert not az.allows_any(ALICE, "127.0.0.1", Operation.WRITE, GROUP)
    denied = authorizer(acl(TOPIC, "w", Operation.WRITE), acl(TOPIC, "*", Operation.WRITE, DENY))
    assert not denied.allows_any(ALICE, "127.0.0.1", Operation.WRITE, TOPIC)


def test_filters_match_as_kafkas() -> None:
    acls = [
        acl(TOPIC, "orders-eu", Operation.READ),
        acl(TOPIC, "*", Operation.READ),
        acl(TOPIC, "orders-", Operation.WRITE, pattern=PREFIXED),
        acl(TOPIC, "other", Operation.READ),
        acl(GROUP, "orders-eu", Operation.READ),
    ]

    def matching(kind: int, name: str | None, pattern: int, **more: Any) -> list[int]:
        wanted = AclFilter(
            kind,
            name,
            pattern,
            more.get("principal"),
            more.get("host"),
            more.get("operation", Operation.ANY),
            more.get("permission", Permission.ANY),
        )
        return [n for n, a in enumerate(acls) if wanted.matches(a)]

    assert matching(ResourceType.ANY, None, PatternType.ANY) == [0, 1, 2, 3, 4]
    assert matching(TOPIC, "orders-eu", PatternType.MATCH) == [0, 1, 2]
    assert matching(TOPIC, "orders-eu", PatternType.ANY) == [0]
    assert matching(TOPIC, "orders-", PREFIXED) == [2]
    assert matching(TOPIC, None, LITERAL, operation=Operation.READ) == [0, 1, 3]
    assert matching(TOPIC, None, PatternType.ANY, principal="User:bob") == []
    assert (
        AclFilter(0, None, 1, None, None, 1, 1).invalid() == "The resource type filter is UNKNOWN."
    )


def test_bindings_kafka_refuses() -> None:
    assert invalid_binding(acl(TOPIC, "t", Operation.READ)) is None
    assert invalid_binding(acl(CLUSTER, "mine", Operation.ALTER)) == (
        "The only valid name for the CLUSTER resource is kafka-cluster"
    )
    assert invalid_binding(acl(TOPIC, "t", Operation.ANY)) == "Invalid operation ANY"
    assert invalid_binding(acl(TOPIC, "t", Operation.READ, pattern=PatternType.MATCH)) == (
        "Invalid patternType MATCH"
    )
    assert invalid_binding(acl(TOPIC, "", Operation.READ)) == "Resource name should not be empty"
    assert "Could not parse principal" in (
        invalid_binding(acl(TOPIC, "t", Operation.READ, principal="alice")) or ""
    )


# --- the ACL APIs, at every version of three releases ---------------------------------------------


def acl_values(binding: AclBinding, prefix: str = "") -> dict[str, Any]:
    return {
        f"resource_type{prefix}": binding.resource_type,
        f"resource_name{prefix}": binding.name,
        "resource_pattern_type" if not prefix else "pattern_type_filter": binding.pattern_type,
        f"principal{prefix}": binding.principal,
        f"host{prefix}": binding.host,
        "operation": binding.operation,
        "permission_type": binding.permission,
    }


@pytest.mark.parametrize("specs", ["2.4.0", "2.8.0", "4.1.2"])
def test_acl_apis_at_every_version(specs: str) -> None:
    """As the super user ANONYMOUS (a plaintext listener): create (two invalid ones refused),
    describe by filter, delete; each API at each version the release's specs have."""
    with FakeCluster(CORPORA / specs, superusers=["ANONYMOUS"]) as c:
        build = Requests(c.package)
        good = [
            acl(TOPIC, "orders-eu", Operation.READ),
            acl(TOPIC, "orders-", Operation.WRITE, pattern=PREFIXED),
        ]
        bad = acl(CLUSTER, "mine", Operation.ALTER)
        low, high = c.versions[ApiKey.CREATE_ACLS]
        with connect(c) as client:
            for version in range(low, high + 1):
                if version == 0:  # v0 has no pattern type: literal ACLs only
                    creations = [good[0], bad]
                else:
                    creations = [*good, bad]
                request = build.make(
                    ApiKey.CREATE_ACLS, creations=[acl_values(a) for a in creations]
                )
                results = client.request(request, version=version).results
                assert [r.error_code for r in results] == [0] * (len(creations) - 1) + [
                    INVALID_REQUEST
                ]
                assert (
                    results[-1].error_message
                    == "The only valid name for the CLUSTER resource is kafka-cluster"
                )
            low, high = c.versions[ApiKey.DESCRIBE_ACLS]
            for version in range(low, high + 1):
                pattern = PatternType.MATCH if version >= 1 else LITERAL
                request = build.make(
                    ApiKey.DESCRIBE_ACLS,
                    resource_type_filter=TOPIC,
                    resource_name_filter="orders-eu",
                    pattern_type_filter=pattern,
                    principal_filter=None,
                    host_filter=None,
                    operation=Operation.ANY,
                    permission_type=Permission.ANY,
                )
                answer = client.request(request, version=version)
                names = sorted(
                    r.resource_name if hasattr(r, "resource_name") else r.name
                    for r in answer.resources
                )
                assert answer.error_code == 0
                assert names == (["orders-", "orders-eu"] if version >= 1 else ["orders-eu"])
            delete = build.make(
                ApiKey.DELETE_ACLS,
                filters=[
                    {
                        "resource_type_filter": ResourceType.ANY,
                        "resource_name_filter": None,
                        "pattern_type_filter": (
                            PatternType.ANY if c.versions[ApiKey.DELETE_ACLS][1] >= 1 else LITERAL
                        ),
                        "principal_filter": ALICE,
                        "host_filter": None,
                        "operation": Operation.ANY,
                        "permission_type": Permission.ANY,
                    }
                ],
            )
            (deleted,) = client.request(
                delete, version=c.versions[ApiKey.DELETE_ACLS][1]
            ).filter_results
        assert deleted.error_code == 0 and len(deleted.matching_acls) == len(good)
        assert c.call(lambda: len(c.state.authorizer.acls)) == 0
        assert c.failures == []


def test_acl_apis_without_an_authorizer_or_the_right() -> None:
    with FakeCluster(SPECS) as plain, FakeCluster(SPECS, superusers=["admin"]) as enforced:
        for c, code in ((plain, SECURITY_DISABLED), (enforced, CLUSTER_DENIED)):
            build = Requests(c.package)
            with connect(c) as client:  # User:ANONYMOUS
                create = build.make(
                    ApiKey.CREATE_ACLS, creations=[acl_values(acl(TOPIC, "t", Operation.READ))]
                )
                assert [r.error_code for r in client.request(create).results] == [code]
                describe = build.make(
                    ApiKey.DESCRIBE_ACLS,
                    resource_type_filter=ResourceType.ANY,
                    pattern_type_filter=PatternType.ANY,
                    operation=Operation.ANY,
                    permission_type=Permission.ANY,
                )
                assert client.request(describe).error_code == code
        assert plain.state.authorizer is None and enforced.state.authorizer.acls == {}


# --- the checks on each API, with Kafka's errors --------------------------------------------------------


@pytest.fixture
def enforced() -> Iterator[FakeCluster]:
    with FakeCluster(
        SPECS, release=RELEASE, topics={"t": 2, "secret": 1}, users=USERS, superusers=["admin"]
    ) as c:
        yield c
        assert c.failures == []


def as_user(c: FakeCluster, user: str) -> Any:
    return connect(c, sasl=c.package.module("sasl").Plain(user, USERS[user]))


def grant(c: FakeCluster, *acls: AclBinding) -> None:
    build = Requests(c.package)
    with as_user(c, "admin") as admin:
        results = admin.request(
            build.make(ApiKey.CREATE_ACLS, creations=[acl_values(a) for a in acls])
        ).results
    assert [r.error_code for r in results] == [0] * len(acls)


def test_produce_fetch_and_list_offsets_per_topic(enforced: FakeCluster) -> None:
    c = enforced
    grant(c, acl(TOPIC, "t", Operation.WRITE), acl(TOPIC, "t", Operation.READ))
    with as_user(c, "alice") as alice:
        mixed = produce_request(c, "t", {0: [b"ok"]})
        secret = produce_request(c, "secret", {0: [b"no"]})
        mixed.topic_data = (*mixed.topic_data, *secret.topic_data)
        answer = alice.request(mixed)
        names = {t.topic_id: name for name, t in c.state.topics.items()}  # v13: by id
        codes = {
            t.name or names[t.topic_id]: [p.error_code for p in t.partition_responses]
            for t in answer.responses
        }
        assert codes == {"t": [0], "secret": [TOPIC_DENIED]}
        assert (log_end(c, "t"), log_end(c, "secret")) == (1, 0)
        assert fetched(alice.request(fetch_request(c, "secret", [0]))) == {0: (TOPIC_DENIED, 0)}
        code, size = fetched(alice.request(fetch_request(c, "t", [0])))[0]
        assert code == 0 and size > 0
        offsets = Requests(c.package).make(
            ApiKey.LIST_OFFSETS,
            topics=[{"name": "secret", "partitions": [{"partition_index": 0, "timestamp": -1}]}],
        )
        (topic,) = alice.request(offsets).topics
        assert topic.partitions[0].error_code == TOPIC_DENIED


def test_metadata_hides_topics_and_needs_create_for_new_ones(enforced: FakeCluster) -> None:
    c = enforced
    grant(
        c, acl(TOPIC, "t", Operation.READ), acl(TOPIC, "new-", Operation.CREATE, pattern=PREFIXED)
    )
    with as_user(c, "alice") as alice:
        every = alice.request(metadata_request(c, None))
        assert [t.name for t in every.topics] == ["t"]
        named = alice.request(metadata_request(c, ["secret", "t", "made"]))
        assert {t.name: t.error_code for t in named.topics} == {
            "secret": TOPIC_DENIED,
            "t": 0,
            "made": TOPIC_DENIED,  # it may not create it (nor describe it)
        }
        grant(c, acl(TOPIC, "new-topic", Operation.DESCRIBE))
        created = alice.request(metadata_request(c, ["new-topic"]))
        assert created.topics[0].error_code == 0
    assert c.call(lambda: sorted(c.state.topics)) == ["new-topic", "secret", "t"]


def test_topic_admin_needs_create_delete_and_describe_configs(enforced: FakeCluster) -> None:
    c = enforced
    build = Requests(c.package)
    create = build.make(
        ApiKey.CREATE_TOPICS,
        topics=[{"name": "mine", "num_partitions": 1, "replication_factor": 1}],
        timeout_ms=1000,
    )
    delete = build.make(
        ApiKey.DELETE_TOPICS, topics=[{"name": "t"}], topic_names=["t"], timeout_ms=1000
    )
    configs = build.make(
        ApiKey.DESCRIBE_CONFIGS,
        resources=[
            {"resource_type": 2, "resource_name": "t", "configuration_keys": None},
            {"resource_type": 4, "resource_name": "0", "configuration_keys": None},
        ],
    )
    with as_user(c, "alice") as alice:
        assert [t.error_code for t in alice.request(create).topics] == [TOPIC_DENIED]
        assert [t.error_code for t in alice.request(delete).responses] == [TOPIC_DENIED]
        assert [r.error_code for r in alice.request(configs).results] == [
            TOPIC_DENIED,
            CLUSTER_DENIED,
        ]
        grant(
            c,
            acl(CLUSTER, "kafka-cluster", Operation.CREATE),
            acl(TOPIC, "t", Operation.DESCRIBE_CONFIGS),
        )
        assert [t.error_code for t in alice.request(create).topics] == [0]
        assert [r.error_code for r in alice.request(configs).results] == [0, CLUSTER_DENIED]
    assert "mine" in c.state.topics and "t" in c.state.topics


def at(c: FakeCluster, request: Any, version: int) -> Any:
    """A copy of ``request`` holding only what ``version`` carries."""
    return Shapes(c.package).fit(copy.deepcopy(request), version)


def test_groups_need_read_and_describe(enforced: FakeCluster) -> None:
    c = enforced
    build = Requests(c.package)
    grant(c, acl(TOPIC, "t", Operation.READ), acl(GROUP, "open", Operation.READ))
    join = build.make(
        ApiKey.JOIN_GROUP,
        group_id="closed",
        session_timeout_ms=10000,
        rebalance_timeout_ms=1000,
        member_id="",
        protocol_type="consumer",
        protocols=[{"name": "range", "metadata": b""}],
    )
    find = build.make(
        ApiKey.FIND_COORDINATOR, key="closed", key_type=0, coordinator_keys=["closed", "open"]
    )

    def commit(group: str, topic: str) -> Any:
        return build.make(
            ApiKey.OFFSET_COMMIT,
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            topics=[{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1}]}],
        )

    fetch_offsets = build.make(
        ApiKey.OFFSET_FETCH,
        group_id="closed",
        topics=None,
        groups=[{"group_id": "closed", "topics": None}, {"group_id": "open", "topics": None}],
    )
    with as_user(c, "alice") as alice, as_user(c, "admin") as admin:
        admin.request(commit("closed", "t"))  # a group alice may not see
        assert alice.request(join).error_code == GROUP_DENIED
        found = alice.request(at(c, find, 4), version=4).coordinators
        assert {k.key: k.error_code for k in found} == {"closed": GROUP_DENIED, "open": 0}
        assert alice.request(at(c, find, 3), version=3).error_code == GROUP_DENIED
        denied = alice.request(commit("closed", "t"))
        assert [p.error_code for p in denied.topics[0].partitions] == [GROUP_DENIED]
        assert (
            alice.request(commit("open", "secret")).topics[0].partitions[0].error_code
            == TOPIC_DENIED
        )
        assert alice.request(commit("open", "t")).topics[0].partitions[0].error_code == 0
        groups = {g.group_id: g for g in alice.request(at(c, fetch_offsets, 9), version=9).groups}
        assert groups["closed"].error_code == GROUP_DENIED and groups["closed"].topics == ()
        assert groups["open"].error_code == 0 and [t.name for t in groups["open"].topics] == ["t"]
        assert alice.request(at(c, fetch_offsets, 7), version=7).error_code == GROUP_DENIED
        listed = alice.request(build.make(ApiKey.LIST_GROUPS, states_filter=[]))
        assert sorted(g.group_id for g in listed.groups) == ["open"]
        described = alice.request(
            build.make(
                ApiKey.DESCRIBE_GROUPS,
                groups=["closed", "open"],
                include_authorized_operations=True,
            )
        )
        codes = {g.group_id: (g.error_code, g.authorized_operations) for g in described.groups}
        assert codes["closed"][0] == GROUP_DENIED
        assert codes["open"] == (0, (1 << Operation.READ) | (1 << Operation.DESCRIBE))
        everything = admin.request(build.make(ApiKey.LIST_GROUPS, states_filter=[]))
        assert sorted(g.group_id for g in everything.groups) == ["closed", "open"]


def test_producer_ids_and_transactions(enforced: FakeCluster) -> None:
    c = enforced
    build = Requests(c.package)
    idempotent = build.make(
        ApiKey.INIT_PRODUCER_ID, transactional_id=None, transaction_timeout_ms=60000
    )
    transactional = build.make(
        ApiKey.INIT_PRODUCER_ID, transactional_id="tx", transaction_timeout_ms=60000
    )
    with as_user(c, "alice") as alice:
        assert alice.request(idempotent).error_code == CLUSTER_DENIED
        assert alice.request(transactional).error_code == TXN_DENIED
        grant(c, acl(TOPIC, "t", Operation.WRITE), acl(TXN, "tx", Operation.WRITE))
        assert alice.request(idempotent).error_code == 0  # WRITE on some topic (KIP-679)
        started = alice.request(transactional)
        assert started.error_code == 0
        add = build.make(
            ApiKey.ADD_PARTITIONS_TO_TXN,
            v3_and_below_transactional_id="tx",
            v3_and_below_producer_id=started.producer_id,
            v3_and_below_producer_epoch=started.producer_epoch,
            v3_and_below_topics=[
                {"name": "t", "partitions": [0]},
                {"name": "secret", "partitions": [0]},
            ],
        )
        answer = alice.request(at(c, add, 3), version=3)
        codes = {
            t.name: [p.partition_error_code for p in t.results_by_partition]
            for t in answer.results_by_topic_v3_and_below
        }
        assert codes == {"t": [NOT_ATTEMPTED], "secret": [TOPIC_DENIED]}
    assert c.state.transactions["tx"].partitions == set()  # nothing added


# --- real clients, denied then granted, over SASL_SSL ---------------------------------------------------


@pytest.fixture(params=[("2.8", "2.8.0"), ("4.1", "4.1.2")], ids=["2.8", "4.1"])
def secured(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    release, specs = request.param
    with FakeCluster(
        CORPORA / specs,
        release=release,
        brokers=3,
        topics={"t": 3, "secret": 1},
        users=USERS,
        superusers=["admin"],
        tls=True,
    ) as c:
        yield c
        assert c.failures == []


def test_confluent_kafka_denied_then_granted(secured: FakeCluster) -> None:
    from confluent_kafka import Consumer, KafkaError, Producer
    from confluent_kafka.admin import AclBinding as Binding
    from confluent_kafka.admin import AclBindingFilter, AclOperation, AclPermissionType
    from confluent_kafka.admin import AdminClient, ResourcePatternType
    from confluent_kafka.admin import ResourceType as Kind

    c = secured
    base = {
        "bootstrap.servers": c.bootstrap,
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(c.ca_file),
        "sasl.mechanism": "SCRAM-SHA-256",
        "log_level": 0,
    }
    alice = {**base, "sasl.username": "alice", "sasl.password": USERS["alice"]}
    admin = AdminClient({**base, "sasl.username": "admin", "sasl.password": USERS["admin"]})
    outcomes: list[Any] = []
    producer = Producer(alice)
    producer.produce("t", value=b"denied", on_delivery=lambda err, msg: outcomes.append(err))
    producer.flush(10)
    assert [e.code() for e in outcomes] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]

    def binding(kind: Any, name: str, operation: Any) -> Binding:
        return Binding(
            kind, name, ResourcePatternType.LITERAL, ALICE, "*", operation, AclPermissionType.ALLOW
        )

    grants = [
        binding(Kind.TOPIC, "t", AclOperation.WRITE),
        binding(Kind.TOPIC, "t", AclOperation.READ),
        binding(Kind.GROUP, "readers", AclOperation.READ),
    ]
    for future in admin.create_acls(grants).values():
        assert future.result() is None
    everything = AclBindingFilter(
        Kind.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    assert len(admin.describe_acls(everything).result()) == 3
    producer = Producer(alice)
    for i in range(6):
        producer.produce("t", value=b"%d" % i)
    assert producer.flush(20) == 0
    assert sorted(Consumer({**alice, "group.id": "x"}).list_topics(timeout=10).topics) == ["t"]
    consumer = Consumer({**alice, "group.id": "readers", "auto.offset.reset": "earliest"})
    consumer.subscribe(["t"])
    got: list[bytes] = []
    deadline = time.monotonic() + 20
    while len(got) < 6 and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            got.append(message.value())
    consumer.close()
    assert sorted(got) == [b"%d" % i for i in range(6)]
    stranger = Consumer({**alice, "group.id": "not-hers", "auto.offset.reset": "earliest"})
    stranger.subscribe(["t"])
    refused = None
    deadline = time.monotonic() + 10
    while refused is None and time.monotonic() < deadline:
        message = stranger.poll(0.2)
        if message is not None and message.error() is not None:
            refused = message.error()
    stranger.close()
    assert refused is not None and refused.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    (deleted,) = admin.delete_acls([everything]).values()
    assert len(deleted.result()) == 3
    hidden = Producer(alice).list_topics("t", timeout=10).topics["t"]  # revoked again
    assert hidden.error is not None and hidden.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_kafka_python_denied_then_granted(secured: FakeCluster) -> None:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import ACL, ACLFilter, ACLOperation, ACLPermissionType
    from kafka.admin import ACLResourcePatternType, ResourcePattern, ResourcePatternFilter
    from kafka.admin import ResourceType as Kind
    from kafka.errors import TopicAuthorizationFailedError

    c = secured
    base: dict[str, Any] = {
        "bootstrap_servers": c.bootstrap,
        "security_protocol": "SASL_SSL",
        "ssl_cafile": str(c.ca_file),
        "sasl_mechanism": "SCRAM-SHA-512",
    }
    alice = {**base, "sasl_plain_username": "alice", "sasl_plain_password": USERS["alice"]}
    admin = KafkaAdminClient(
        **base, sasl_plain_username="admin", sasl_plain_password=USERS["admin"]
    )
    producer = KafkaProducer(**alice, enable_idempotence=False)
    with pytest.raises(TopicAuthorizationFailedError):
        producer.send("t", b"denied").get(timeout=10)
    producer.close()

    def allow(kind: Any, name: str, operation: Any) -> Any:
        pattern = ResourcePattern(kind, name, ACLResourcePatternType.LITERAL)
        return ACL(ALICE, "*", operation, ACLPermissionType.ALLOW, pattern)

    created = admin.create_acls(
        [
            allow(Kind.TOPIC, "t", ACLOperation.WRITE),
            allow(Kind.TOPIC, "t", ACLOperation.READ),
            allow(Kind.GROUP, "readers", ACLOperation.READ),
        ]
    )
    assert len(created["succeeded"]) == 3 and created["failed"] == []
    producer = KafkaProducer(**alice)
    for i in range(6):
        producer.send("t", b"%d" % i)
    producer.flush(timeout=20)
    producer.close()
    consumer = KafkaConsumer(
        "t", group_id="readers", auto_offset_reset="earliest", consumer_timeout_ms=20000, **alice
    )
    got = []
    for message in consumer:
        got.append(message.value)
        if len(got) == 6:
            break
    consumer.close()
    assert sorted(got) == [b"%d" % i for i in range(6)]
    everything = ACLFilter(
        None,
        None,
        ACLOperation.ANY,
        ACLPermissionType.ANY,
        ResourcePatternFilter(Kind.ANY, None, ACLResourcePatternType.ANY),
    )
    described, error = admin.describe_acls(everything)
    assert len(described) == 3
    deleted = admin.delete_acls([everything])
    assert len(deleted[0][1]) == 3
    admin.close()


def test_authorized_operations_in_metadata_and_describe_cluster(enforced: FakeCluster) -> None:
    c = enforced
    build = Requests(c.package)
    describe = build.make(ApiKey.DESCRIBE_CLUSTER, include_cluster_authorized_operations=True)
    metadata = build.make(
        ApiKey.METADATA,
        topics=[{"name": "t"}],
        include_topic_authorized_operations=True,
        allow_auto_topic_creation=False,
    )
    with as_user(c, "alice") as alice:
        assert alice.request(describe).cluster_authorized_operations == 0  # no DESCRIBE
        grant(
            c,
            acl(CLUSTER, "kafka-cluster", Operation.DESCRIBE),
            acl(CLUSTER, "kafka-cluster", Operation.CREATE),
            acl(TOPIC, "t", Operation.WRITE),
        )
        bits = (1 << Operation.DESCRIBE) | (1 << Operation.CREATE)
        assert alice.request(describe).cluster_authorized_operations == bits
        (topic,) = alice.request(metadata).topics
        assert topic.topic_authorized_operations == (1 << Operation.WRITE) | (
            1 << Operation.DESCRIBE
        )
