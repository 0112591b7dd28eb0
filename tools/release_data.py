"""Reviewed facts behind ``specs/facts/broker-releases.json`` that neither kafka-python's
captured table nor the specs hold: the rows, the quirks, the feature levels, and where the
sources disagree. ``tools/release_table.py`` reads this module; every fact names where in
Kafka's source it was read (apache/kafka, or confluentinc/kafka for releases after
3.9.0-rc3: its ``4.0`` to ``4.3`` branches merge Apache's release branches, and the release
commits are the "Bump version to X.Y.Z" ones named in ``RELEASE_COMMITS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

Range = tuple[int, int]

#: The sources a row may cite, by id.
SOURCES: dict[str, str] = {
    "kafka-python": (
        "kafka-python 3 (Apache-2.0), kafka/protocol/broker_version_data.py BROKER_API_VERSIONS: "
        "the ApiVersions answers of real brokers in their default configuration (ZooKeeper mode "
        "before 4.0), captured by kafka-python's maintainers; its rows before 0.10.1 are "
        "synthesized (what a client may send to a broker without ApiVersions)"
    ),
    "specs": (
        "the release's own message specs (clients/src/main/resources/common/message/*Request.json):"
        " listeners, validVersions and latestVersionUnstable"
    ),
    "kafka": (
        "Apache Kafka's source at the release (apache/kafka tags; confluentinc/kafka release "
        "commits for 3.8.1 and later, see RELEASE_COMMITS)"
    ),
    "kversion": (
        "franz-go pkg/kversion (BSD-3-Clause), a hand-written table of ZooKeeper, KRaft broker "
        "and controller releases; the numbers are in tools/release_sources/kversion.json"
    ),
}

#: Releases read in confluentinc/kafka (not tagged there): the Apache release commit.
RELEASE_COMMITS: dict[str, str] = {
    "3.9.0": "cc53a632edcf78dc8b2a4c2c502c654950744e1e",
    "4.0.0": "4ae681446f18f9a6d7a59f317013ef82379a4ba4",
    "4.0.1": "b31ce61fd68c51d1b9b964b09874148f14b75964",
    "4.1.0": "13f70256db3c994c590e5d262a7cc50b9e973204",
    "4.2.0": "a18251bae0b825c69794a50dffd4c3100cf5ca5b",
    "4.3.0": "a9ce3221537b8653448750697915607dc7936cf3",
}

#: Where a real broker differs from its specs, by id: what it does and where that is read.
QUIRKS: dict[str, dict[str, str]] = {
    "KAFKA-18659": {
        "about": (
            "Kafka 4.0 removed Produce v0-2 yet still advertises Produce from v0, because "
            "librdkafka before 2.11.1 stops compressing when it is not advertised; a v0-2 "
            "request is refused: the broker closes the connection without an answer"
        ),
        "source": (
            "apache/kafka 4.0.0 ApiKeys.java lines 148-151 (PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION"
            " = 0) and 287-291 (toApiVersion); SocketServer.scala lines 801-809 "
            "(Processor.parseRequestHeader throws UnsupportedVersionException for a version "
            "outside validVersions) and 949-953 (processChannelException closes the connection); "
            "ProcessorTest.scala testParseRequestHeaderForProduceV0ToV2; apache/kafka#18727"
        ),
    },
    "telemetry": {
        "about": (
            "GetTelemetrySubscriptions (71) and PushTelemetry (72) are advertised only when a "
            "client-telemetry receiver (a metrics reporter implementing ClientTelemetry) is "
            "configured; a KRaft broker answers them either way"
        ),
        "source": (
            "apache/kafka 3.7.0 ApiVersionsResponse.java lines 185 and 234 (filterApis, "
            "intersectForwardableApis skip them unless clientTelemetryEnabled), "
            "ApiVersionManager.scala lines 147-148 (isTelemetryReceiverConfigured), "
            "KafkaApis.scala lines 3832-3846 (answered through the ClientMetricsManager)"
        ),
    },
    "unstable": {
        "about": (
            "a version marked latestVersionUnstable is neither advertised nor accepted (the "
            "connection is closed) unless unstable.api.versions.enable=true"
        ),
        "source": (
            "apache/kafka 4.0.0 ApiKeys.java lines 246-253 (isVersionEnabled) and "
            "SocketServer.scala lines 803-806 (InvalidRequestException for a disabled version)"
        ),
    },
    "joingroup-floor": {
        "about": (
            "4.0.0 removed JoinGroup v0-1 (KIP-896); 4.0.1 and 4.1.0 brought them back "
            "(KAFKA-19444): a 4.0.0 broker advertises JoinGroup from v2 and closes the "
            "connection on v0-1"
        ),
        "source": (
            "JoinGroupRequest.json at 4.0.0 (validVersions 2-9, line 37) and at 4.0.1 (0-9); "
            "apache/kafka commit 80b9abebad (KAFKA-19444, #20116)"
        ),
    },
    "envelope": {
        "about": (
            "a KRaft broker of 2.8 to 3.1 adds Envelope v0 to its ApiVersions answer, which its "
            "specs give to ZooKeeper brokers and controllers only"
        ),
        "source": (
            "apache/kafka 2.8.0, 3.0.0 and 3.1.0 ApiVersionManager.scala lines 101-109 ('a "
            "temporary workaround in order to allow testing of forwarding'); gone in 3.2.0"
        ),
    },
    "forwarding": {
        "about": (
            "a KRaft broker intersects forwardable APIs with its controller's ApiVersions once "
            "it has them (after it first forwards a request); in 3.0 and 3.1 the controller lacks "
            "UpdateFeatures (57), so it is advertised by a fresh broker and dropped after that"
        ),
        "source": (
            "apache/kafka 3.0.0 ApiVersionsResponse.java lines 173-201 "
            "(intersectForwardableApis drops a forwardable API the controller does not support),"
            " ApiKeys.java line 101 (UPDATE_FEATURES forwardable), UpdateFeaturesRequest.json "
            "listeners zkBroker and broker; 3.2.0 made it not forwardable"
        ),
    },
    "no-api-versions": {
        "about": (
            "brokers before 0.10.0 have no ApiVersions (KIP-35): 0.8 closes the connection on "
            "it; 0.9 logs an uncaught exception and never answers, leaving the connection open "
            "until the client gives up; fixed-version requests work"
        ),
        "source": (
            "apache/kafka 0.8.2.2 RequestKeys.scala lines 57 and 64 ('Wrong request type') and "
            "SocketServer.scala line 354 (any Throwable while reading closes the key); 0.9.0.0 "
            "RequestChannel.scala line 79 (AbstractRequest.getRequest), ApiKeys.java lines 67-69 "
            "(forId indexes an array of 17 keys: ArrayIndexOutOfBoundsException for 18), "
            "SocketServer.scala lines 421-433 (only InvalidRequestException and SchemaException "
            "close the connection) and 453-461 (the processor loop logs anything else)"
        ),
    },
    "features-v3": {
        "about": (
            "an ApiVersions v0-3 answer leaves out every supported feature whose minimum level "
            "is 0 (old clients fail on it); v4 lists them all; finalized levels of 0 are never "
            "listed"
        ),
        "source": (
            "apache/kafka 3.9.0 ApiVersionsResponse.java lines 285-320 "
            "(maybeFilterSupportedFeatureKeys, KAFKA-17492; createFinalizedFeatureKeys) and "
            "KafkaApis.scala line 1996 (alterFeatureLevel0 for request versions below 4)"
        ),
    },
    "raft-apis-disabled": {
        "about": (
            "2.7 defines Vote, BeginQuorumEpoch, EndQuorumEpoch and DescribeQuorum (52-55) but "
            "disables them: not advertised, and a request for one closes the connection"
        ),
        "source": (
            "apache/kafka 2.7.0 ApiKeys.java lines 244-251 (isEnabled false), "
            "ApiVersionsResponse.java line 180 (ApiKeys.enabledApis), SocketServer.scala line 934"
        ),
    },
}


@dataclass(frozen=True)
class Refusal:
    """Versions a broker advertises but refuses, and how it refuses them."""

    api_key: int
    versions: Range
    answer: str
    """``close``: the connection is closed without an answer."""
    quirk: str


@dataclass(frozen=True)
class RowSpec:
    """How one row of the table is built.

    ``base`` is ``kafka-python`` (its captured ranges), ``specs`` (the release's request
    specs for the kind's listener, stable versions) or ``fixed`` (``accepted`` only: no
    ApiVersions). ``changes`` sets (or, with None, removes) ranges over the base."""

    release: str
    kind: str
    base: str
    changes: dict[int, Range | None] = field(default_factory=dict)
    accepted: dict[int, Range] = field(default_factory=dict)
    api_versions: str = "answered"
    refused: tuple[Refusal, ...] = ()
    quirks: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


_PRODUCE_V0_2 = Refusal(0, (0, 2), "close", "KAFKA-18659")
_INTER_BROKER_V0 = {4: (0, 0), 5: (0, 0), 6: (0, 0), 7: (0, 0)}
_KRAFT_EARLY = (
    "KRaft was early access until 3.3 (KIP-833): not for production, yet runnable with "
    "process.roles=broker"
)


def _zk(release: str, *notes: str, quirks: tuple[str, ...] = ()) -> RowSpec:
    return RowSpec(release, "zookeeper", "kafka-python", quirks=quirks, notes=notes)


def _kraft(release: str, *notes: str, **kwargs: object) -> RowSpec:
    return RowSpec(release, "kraft", "specs", notes=notes, **kwargs)  # type: ignore[arg-type]


ROWS: tuple[RowSpec, ...] = (
    RowSpec(
        "0.8.0",
        "zookeeper",
        "fixed",
        accepted={0: (0, 0), 1: (0, 0), 2: (0, 0), 3: (0, 0), **_INTER_BROKER_V0},
        api_versions="closes",
        quirks=("no-api-versions",),
        notes=(
            "accepted: kafka-python's synthesized row plus the inter-broker APIs 4-7, which "
            "KafkaApis.scala handles at v0 (0.8.0 lines 65-72; each Scala request class has "
            "CurrentVersion 0)",
        ),
    ),
    RowSpec(
        "0.8.1",
        "zookeeper",
        "fixed",
        accepted={
            **{key: (0, 0) for key in (0, 1, 2, 3, 8, 9)},
            **_INTER_BROKER_V0,
        },
        api_versions="closes",
        quirks=("no-api-versions",),
        notes=(
            "accepted: kafka-python's synthesized row plus the inter-broker APIs 4-7 at v0 "
            "(0.8.1.1 KafkaApis.scala lines 185-194)",
        ),
    ),
    RowSpec(
        "0.8.2",
        "zookeeper",
        "fixed",
        accepted={
            0: (0, 0),
            1: (0, 0),
            2: (0, 0),
            3: (0, 0),
            8: (0, 1),
            9: (0, 1),
            10: (0, 0),
            **_INTER_BROKER_V0,
        },
        api_versions="closes",
        quirks=("no-api-versions",),
        notes=(
            "accepted: kafka-python's synthesized row (Protocol.java at 0.8.2.0 agrees) plus the "
            "inter-broker APIs 4-7 at v0",
            "kversion lists JoinGroup (11) and Heartbeat (12); 0.8.2.0 parses them "
            "(RequestKeys.scala) but KafkaApis.scala lines 59-70 has no handler ('Unknown api "
            "code'), so Kafka's source leaves them out",
        ),
    ),
    RowSpec(
        "0.9.0",
        "zookeeper",
        "fixed",
        accepted={
            0: (0, 1),
            1: (0, 1),
            2: (0, 0),
            3: (0, 0),
            4: (0, 0),
            5: (0, 0),
            6: (0, 1),
            7: (0, 1),
            8: (0, 2),
            9: (0, 1),
            **{key: (0, 0) for key in range(10, 17)},
        },
        api_versions="no answer",
        quirks=("no-api-versions",),
        notes=(
            "accepted: kafka-python's synthesized row plus the inter-broker APIs: Protocol.java "
            "at 0.9.0.0 (LeaderAndIsr v0, StopReplica v0, UpdateMetadata v0-1) and "
            "ControlledShutdownRequest.scala (v0-1, parsed by the Scala path of "
            "RequestKeys.keyToNameAndDeserializerMap)",
            "unlike 0.8, 0.9 does not close the connection on ApiVersions: it never answers and "
            "leaves the connection open (quirk no-api-versions)",
        ),
    ),
    _zk(
        "0.10.0",
        "kafka-python synthesized this row; Protocol.java at 0.10.0.0 gives the same ranges "
        "(ControlledShutdown from v1: its v0 has no schema, so ApiVersions starts at 1)",
    ),
    _zk("0.10.1"),
    _zk(
        "0.10.2",
        "kversion has OffsetFetch up to v1; kafka-python's capture and Protocol.java at "
        "0.10.2.0 line 386 (KIP-88) say v0-2",
    ),
    _zk("0.11.0"),
    _zk("1.0.0"),
    _zk("1.1.0"),
    _zk("2.0.0"),
    _zk("2.1.0"),
    _zk("2.2.0"),
    _zk("2.3.0"),
    _zk("2.4.0"),
    _zk("2.5.0"),
    _zk("2.6.0"),
    _zk(
        "2.7.0",
        "the specs (no listeners before 2.8) define Vote, BeginQuorumEpoch, EndQuorumEpoch and "
        "DescribeQuorum (52-55); 2.7 disables them, as kafka-python's capture and kversion "
        "show",
        quirks=("raft-apis-disabled",),
    ),
    _zk("2.8.0"),
    _kraft(
        "2.8.0",
        _KRAFT_EARLY,
        "kversion lacks UnregisterBroker (64); the 2.8.0 specs give it to the broker listener "
        "and ApiKeys.java line 108 makes it forwardable to a controller that has it, so it is "
        "advertised",
        changes={58: (0, 0)},
        quirks=("envelope",),
    ),
    _zk("3.0.0"),
    _kraft(
        "3.0.0",
        _KRAFT_EARLY,
        "kversion lacks DescribeQuorum (55) before 3.3; DescribeQuorumRequest.json gives it to "
        "the broker listener and ApiKeys.java line 99 makes it forwardable to a controller that "
        "has it, so it is advertised",
        changes={58: (0, 0)},
        quirks=("envelope", "forwarding"),
    ),
    _zk("3.1.0"),
    _kraft(
        "3.1.0",
        _KRAFT_EARLY,
        "kversion lacks DescribeQuorum (55) before 3.3 (as for 3.0)",
        changes={58: (0, 0)},
        quirks=("envelope", "forwarding"),
    ),
    _zk("3.2.0"),
    _kraft(
        "3.2.0",
        _KRAFT_EARLY,
        "kversion lacks DescribeQuorum (55) before 3.3 (as for 3.0)",
    ),
    _zk("3.3.0"),
    _kraft("3.3.0"),
    _zk("3.4.0"),
    _kraft("3.4.0"),
    _zk("3.5.0"),
    _kraft("3.5.0"),
    _zk("3.6.0"),
    _kraft("3.6.0"),
    _zk("3.7.0"),
    _kraft("3.7.0", quirks=("telemetry",)),
    _zk("3.8.0"),
    _kraft("3.8.0", quirks=("telemetry",)),
    _zk("3.9.0"),
    _kraft("3.9.0", quirks=("telemetry", "features-v3")),
    RowSpec(
        "4.0.0",
        "kraft",
        "kafka-python",
        refused=(_PRODUCE_V0_2,),
        quirks=("KAFKA-18659", "telemetry", "joingroup-floor", "features-v3"),
        notes=("kafka-python captured 4.0.0: JoinGroup from v2",),
    ),
    RowSpec(
        "4.0.1",
        "kraft",
        "kafka-python",
        changes={11: (0, 9)},
        refused=(_PRODUCE_V0_2,),
        quirks=("KAFKA-18659", "telemetry", "joingroup-floor", "features-v3"),
        notes=(
            "kafka-python's 4.0 row with JoinGroup v0-9, as JoinGroupRequest.json has it from "
            "4.0.1 (KAFKA-19444)",
        ),
    ),
    RowSpec(
        "4.1.0",
        "kraft",
        "kafka-python",
        refused=(_PRODUCE_V0_2,),
        quirks=("KAFKA-18659", "telemetry", "features-v3"),
        notes=(
            "kversion gives the share-group APIs (76-79) minimum version 0; their specs "
            "start at v1 (v0 was KIP-932's early access, removed in 4.1), as kafka-python's "
            "capture shows",
        ),
    ),
    RowSpec(
        "4.2.0",
        "kraft",
        "kafka-python",
        refused=(_PRODUCE_V0_2,),
        quirks=("KAFKA-18659", "telemetry", "features-v3"),
        notes=("kversion gives the share-group APIs (76-79) minimum version 0 (as for 4.1)",),
    ),
    RowSpec(
        "4.3.0",
        "kraft",
        "kafka-python",
        refused=(_PRODUCE_V0_2,),
        quirks=("KAFKA-18659", "telemetry", "features-v3"),
    ),
)

#: ``metadata.version`` levels each release line knows: (level, name, whether the metadata
#: changed at that level, which decides safe downgrades). Read from MetadataVersion.java
#: (server-common/src/main/java/org/apache/kafka/server/common/) at X.Y.0; unchanged in every
#: later patch release checked (3.3.0-3.3.2 ... 4.3.0-4.3.1). A level's "changed" flag can
#: differ between releases (it is reset while the level is not production ready).
METADATA_VERSIONS: dict[str, list[tuple[int, str, bool]]] = {
    "3.3": [(1, "3.0-IV1", True), (2, "3.1-IV0", False), (3, "3.2-IV0", True),
            (4, "3.3-IV0", False), (5, "3.3-IV1", True), (6, "3.3-IV2", True),
            (7, "3.3-IV3", True)],
    "3.4": [(1, "3.0-IV1", True), (2, "3.1-IV0", False), (3, "3.2-IV0", True),
            (4, "3.3-IV0", False), (5, "3.3-IV1", True), (6, "3.3-IV2", True),
            (7, "3.3-IV3", True), (8, "3.4-IV0", True)],
    "3.5": [(1, "3.0-IV1", True), (2, "3.1-IV0", False), (3, "3.2-IV0", True),
            (4, "3.3-IV0", False), (5, "3.3-IV1", True), (6, "3.3-IV2", True),
            (7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True)],
    "3.6": [(1, "3.0-IV1", True), (2, "3.1-IV0", False), (3, "3.2-IV0", True),
            (4, "3.3-IV0", False), (5, "3.3-IV1", True), (6, "3.3-IV2", True),
            (7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True), (12, "3.6-IV0", False),
            (13, "3.6-IV1", True), (14, "3.6-IV2", True)],
    "3.7": [(1, "3.0-IV1", True), (2, "3.1-IV0", False), (3, "3.2-IV0", True),
            (4, "3.3-IV0", False), (5, "3.3-IV1", True), (6, "3.3-IV2", True),
            (7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True), (12, "3.6-IV0", False),
            (13, "3.6-IV1", True), (14, "3.6-IV2", True), (15, "3.7-IV0", True),
            (16, "3.7-IV1", False), (17, "3.7-IV2", True), (18, "3.7-IV3", False),
            (19, "3.7-IV4", False), (20, "3.8-IV0", True)],
    "3.8": [(1, "3.0-IV1", True), (2, "3.1-IV0", False), (3, "3.2-IV0", True),
            (4, "3.3-IV0", False), (5, "3.3-IV1", True), (6, "3.3-IV2", True),
            (7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True), (12, "3.6-IV0", False),
            (13, "3.6-IV1", True), (14, "3.6-IV2", True), (15, "3.7-IV0", True),
            (16, "3.7-IV1", False), (17, "3.7-IV2", True), (18, "3.7-IV3", False),
            (19, "3.7-IV4", False), (20, "3.8-IV0", False), (21, "3.9-IV0", True)],
    "3.9": [(1, "3.0-IV1", True), (2, "3.1-IV0", False), (3, "3.2-IV0", True),
            (4, "3.3-IV0", False), (5, "3.3-IV1", True), (6, "3.3-IV2", True),
            (7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True), (12, "3.6-IV0", False),
            (13, "3.6-IV1", True), (14, "3.6-IV2", True), (15, "3.7-IV0", True),
            (16, "3.7-IV1", False), (17, "3.7-IV2", True), (18, "3.7-IV3", False),
            (19, "3.7-IV4", False), (20, "3.8-IV0", False), (21, "3.9-IV0", False),
            (22, "4.0-IV0", True), (23, "4.0-IV1", False)],
    "4.0": [(7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True), (12, "3.6-IV0", False),
            (13, "3.6-IV1", True), (14, "3.6-IV2", True), (15, "3.7-IV0", True),
            (16, "3.7-IV1", False), (17, "3.7-IV2", True), (18, "3.7-IV3", False),
            (19, "3.7-IV4", False), (20, "3.8-IV0", False), (21, "3.9-IV0", False),
            (22, "4.0-IV0", False), (23, "4.0-IV1", True), (24, "4.0-IV2", False),
            (25, "4.0-IV3", False), (26, "4.1-IV0", False)],
    "4.1": [(7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True), (12, "3.6-IV0", False),
            (13, "3.6-IV1", True), (14, "3.6-IV2", True), (15, "3.7-IV0", True),
            (16, "3.7-IV1", False), (17, "3.7-IV2", True), (18, "3.7-IV3", False),
            (19, "3.7-IV4", False), (20, "3.8-IV0", False), (21, "3.9-IV0", False),
            (22, "4.0-IV0", False), (23, "4.0-IV1", True), (24, "4.0-IV2", False),
            (25, "4.0-IV3", False), (26, "4.1-IV0", False), (27, "4.1-IV1", False),
            (28, "4.2-IV0", False), (29, "4.2-IV1", False)],
    "4.2": [(7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True), (12, "3.6-IV0", False),
            (13, "3.6-IV1", True), (14, "3.6-IV2", True), (15, "3.7-IV0", True),
            (16, "3.7-IV1", False), (17, "3.7-IV2", True), (18, "3.7-IV3", False),
            (19, "3.7-IV4", False), (20, "3.8-IV0", False), (21, "3.9-IV0", False),
            (22, "4.0-IV0", False), (23, "4.0-IV1", True), (24, "4.0-IV2", False),
            (25, "4.0-IV3", False), (26, "4.1-IV0", False), (27, "4.1-IV1", False),
            (28, "4.2-IV0", False), (29, "4.2-IV1", False), (30, "4.3-IV0", False)],
    "4.3": [(7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False),
            (10, "3.5-IV1", False), (11, "3.5-IV2", True), (12, "3.6-IV0", False),
            (13, "3.6-IV1", True), (14, "3.6-IV2", True), (15, "3.7-IV0", True),
            (16, "3.7-IV1", False), (17, "3.7-IV2", True), (18, "3.7-IV3", False),
            (19, "3.7-IV4", False), (20, "3.8-IV0", False), (21, "3.9-IV0", False),
            (22, "4.0-IV0", False), (23, "4.0-IV1", True), (24, "4.0-IV2", False),
            (25, "4.0-IV3", False), (26, "4.1-IV0", False), (27, "4.1-IV1", False),
            (28, "4.2-IV0", False), (29, "4.2-IV1", False), (30, "4.3-IV0", True),
            (31, "4.4-IV0", False)],
}  # fmt: skip
"""4.0 dropped the levels below 7 (3.3-IV3)."""

#: Supported feature ranges, default finalized levels and the lowest metadata.version
#: UpdateFeatures may set, per release line of KRaft brokers (3.3 introduced metadata.version).
#: supported: BrokerFeatures.defaultSupportedFeatures (core/.../BrokerFeatures.scala to 3.9,
#: server/.../BrokerFeatures.java from 4.0): metadata.version from MINIMUM_KRAFT_VERSION (3.x)
#: or MINIMUM_VERSION (4.x) to latest() (3.3-3.6) or LATEST_PRODUCTION (3.7+); every
#: production feature whose latest production level is above 0 from its first level.
#: supported_unstable: the same with unstable.feature.versions.enable (3.7:
#: unstable.metadata.versions.enable), up to the latest testing levels.
#: finalized: what `kafka-storage format` writes by default (StorageTool.scala to 3.8,
#: metadata/.../storage/Formatter.java from 3.9): metadata.version at the default release
#: version, every other feature at Feature.defaultLevel(that version); kraft.version 0 for a
#: static quorum (controller.quorum.voters, as the apache/kafka Docker image and 3.9's
#: config/kraft/server.properties set it; `--standalone` would make it 1).
#: floor: FeatureControlManager refuses a metadata.version below MINIMUM_BOOTSTRAP_VERSION
#: (3.3-IV0, 3.x) or MINIMUM_VERSION (3.3-IV3, 4.x).
KRAFT_FEATURES: dict[str, dict[str, object]] = {
    "3.3": {"supported": {"metadata.version": (1, 7)}, "finalized": {"metadata.version": 7},
            "floor": 4},
    "3.4": {"supported": {"metadata.version": (1, 8)}, "finalized": {"metadata.version": 8},
            "floor": 4},
    "3.5": {"supported": {"metadata.version": (1, 11)}, "finalized": {"metadata.version": 11},
            "floor": 4},
    "3.6": {"supported": {"metadata.version": (1, 14)}, "finalized": {"metadata.version": 14},
            "floor": 4},
    "3.7": {"supported": {"metadata.version": (1, 19)},
            "supported_unstable": {"metadata.version": (1, 20)},
            "finalized": {"metadata.version": 19}, "floor": 4},
    "3.8": {"supported": {"metadata.version": (1, 20)},
            "supported_unstable": {"metadata.version": (1, 21)},
            "finalized": {"metadata.version": 20}, "floor": 4},
    "3.9": {"supported": {"metadata.version": (1, 21), "kraft.version": (0, 1)},
            "supported_unstable": {"metadata.version": (1, 23), "kraft.version": (0, 1),
                                   "transaction.version": (0, 2)},
            "finalized": {"metadata.version": 21}, "floor": 4},
    "4.0": {"supported": {"metadata.version": (7, 25), "kraft.version": (0, 1),
                          "transaction.version": (0, 2), "group.version": (0, 1),
                          "eligible.leader.replicas.version": (0, 1)},
            "supported_unstable": {"metadata.version": (7, 26), "kraft.version": (0, 1),
                                   "transaction.version": (0, 2), "group.version": (0, 1),
                                   "eligible.leader.replicas.version": (0, 1)},
            "finalized": {"metadata.version": 25, "transaction.version": 2,
                          "group.version": 1},
            "floor": 7},
    "4.1": {"supported": {"metadata.version": (7, 27), "kraft.version": (0, 1),
                          "transaction.version": (0, 2), "group.version": (0, 1),
                          "eligible.leader.replicas.version": (0, 1), "share.version": (0, 1)},
            "supported_unstable": {"metadata.version": (7, 29), "kraft.version": (0, 1),
                                   "transaction.version": (0, 2), "group.version": (0, 1),
                                   "eligible.leader.replicas.version": (0, 1),
                                   "share.version": (0, 1), "streams.version": (0, 1)},
            "finalized": {"metadata.version": 27, "transaction.version": 2, "group.version": 1,
                          "eligible.leader.replicas.version": 1},
            "floor": 7},
    "4.2": {"supported": {"metadata.version": (7, 29), "kraft.version": (0, 1),
                          "transaction.version": (0, 2), "group.version": (0, 1),
                          "eligible.leader.replicas.version": (0, 1), "share.version": (0, 1),
                          "streams.version": (0, 1)},
            "supported_unstable": {"metadata.version": (7, 30), "kraft.version": (0, 1),
                                   "transaction.version": (0, 2), "group.version": (0, 1),
                                   "eligible.leader.replicas.version": (0, 1),
                                   "share.version": (0, 1), "streams.version": (0, 1)},
            "finalized": {"metadata.version": 29, "transaction.version": 2, "group.version": 1,
                          "eligible.leader.replicas.version": 1, "share.version": 1,
                          "streams.version": 1},
            "floor": 7},
    "4.3": {"supported": {"metadata.version": (7, 30), "kraft.version": (0, 1),
                          "transaction.version": (0, 2), "group.version": (0, 1),
                          "eligible.leader.replicas.version": (0, 1), "share.version": (0, 1),
                          "streams.version": (0, 1)},
            "supported_unstable": {"metadata.version": (7, 31), "kraft.version": (0, 1),
                                   "transaction.version": (0, 2), "group.version": (0, 1),
                                   "eligible.leader.replicas.version": (0, 1),
                                   "share.version": (0, 1), "streams.version": (0, 1)},
            "finalized": {"metadata.version": 30, "transaction.version": 2, "group.version": 1,
                          "eligible.leader.replicas.version": 1, "share.version": 1,
                          "streams.version": 1},
            "floor": 7},
}  # fmt: skip

#: How the finalized-features epoch behaves, by id.
EPOCHS: dict[str, str] = {
    "zookeeper": (
        "the version of the /feature znode: 0 once the controller has created it (empty, on "
        "first start), one more per feature update (KafkaController.enableFeatureVersioning)"
    ),
    "metadata offset": (
        "the offset of the newest metadata record the broker has applied "
        "(KRaftMetadataCache.features: image.highestOffsetAndEpoch().offset): it grows with "
        "every metadata change and about twice a second when idle (a NoOpRecord every "
        "metadata.max.idle.interval.ms, 500 ms, since 3.3)"
    ),
    "unknown": (
        "-1: the broker holds no finalized features (no FeatureLevelRecord was ever written; "
        "BrokerMetadataPublisher updates the cache only on one)"
    ),
}

#: ApiVersions v3 carries features (KIP-584) from 2.7 on: ZooKeeper brokers support none and
#: finalize none (BrokerFeatures.createDefault / createEmpty is empty, the /feature znode is
#: created empty); KRaft brokers before 3.3 hold none either.
FEATURES_FROM = "2.7.0"
KRAFT_FEATURE_VERSIONS_FROM = "3.3.0"
