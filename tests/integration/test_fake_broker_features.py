"""Feature levels (KIP-584) on the fake broker, as each release's brokers hold them: the
ApiVersions v3+ fields, UpdateFeatures as ZooKeeper, early KRaft and KRaft controllers answer
it (Kafka's errors and messages, written here from Kafka's source), and the
``metadata.version`` upgrade flow run end to end with the generated package's client, its
negotiation checks and ``broker-versions``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kafka_specgen.cli import main
from kafka_specgen.fake_broker import FakeCluster
from kafka_specgen.library import GeneratedPackage, SpecSet, generated_package

UPGRADE, SAFE, UNSAFE = 1, 2, 3
INVALID_REQUEST, INVALID_UPDATE_VERSION = 42, 95


def package(release: str = "4.3") -> GeneratedPackage:
    return generated_package(SpecSet.of_release(release))


@contextmanager
def client_of(
    cluster: FakeCluster, pkg: GeneratedPackage | None = None, node: int = 0
) -> Iterator[Any]:
    pkg = pkg or package()
    broker = cluster.state.brokers[node]
    connection = pkg.module("connection").ClientConnection(client_id="features", policy={})
    with pkg.module("client").Client.connect(broker.host, broker.port, connection) as client:
        yield client


def update(
    client: Any, version: int, *updates: tuple[str, int, int], validate_only: bool = False
) -> Any:
    """UpdateFeatures at ``version`` with (feature, level, upgrade type) updates; at v0 a
    downgrade type becomes ``allowDowngrade``."""
    features = package().module("update_features")  # the clients here are 4.3's
    keys = []
    for name, level, kind in updates:
        if version == 0:
            fields = {"allow_downgrade": kind != UPGRADE}
        else:
            fields = {"upgrade_type": kind}
        keys.append(
            features.UpdateFeaturesRequestFeatureUpdateKey(
                feature=name, max_version_level=level, **fields
            )
        )
    extra = {"validate_only": validate_only} if version >= 1 else {}
    request = features.UpdateFeaturesRequest(feature_updates=keys, **extra)
    return client.request(request, version=version)


def results(answer: Any) -> dict[str, tuple[int, str | None]]:
    return {r.feature: (r.error_code, r.error_message) for r in answer.results}


def finalized(cluster: FakeCluster) -> tuple[dict[str, tuple[int, int]], int]:
    """The finalized levels and epoch a new connection's ApiVersions answer carries."""
    with client_of(cluster) as client:
        features = client.ready.features
    return dict(features.finalized), features.epoch


# --- ApiVersions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "kraft", "supported", "levels", "epoch"),
    [
        ("2.6", False, {}, {}, -1),  # no features before 2.7
        ("2.7", False, {}, {}, 0),  # ZooKeeper: the empty /feature znode, version 0
        ("3.2", True, {}, {}, -1),  # KRaft before 3.3 holds none
        (
            "3.9",
            True,
            {"kraft.version": (0, 1), "metadata.version": (1, 21)},
            {"metadata.version": (21, 21)},
            20,
        ),
        (
            "4.0",
            False,
            {
                "eligible.leader.replicas.version": (0, 1),
                "group.version": (0, 1),
                "kraft.version": (0, 1),
                "metadata.version": (7, 25),
                "transaction.version": (0, 2),
            },
            {"group.version": (1, 1), "metadata.version": (25, 25), "transaction.version": (2, 2)},
            20,
        ),
    ],
)
def test_api_versions_carries_the_release_features(
    release: str,
    kraft: bool,
    supported: dict[str, tuple[int, int]],
    levels: dict[str, tuple[int, int]],
    epoch: int,
) -> None:
    with FakeCluster(release=release, kraft=kraft) as c:
        with client_of(c) as client:
            features = client.ready.features
        assert features.supported == supported and features.finalized == levels
        assert features.epoch >= epoch if epoch > 0 else features.epoch == epoch
        if supported:  # an ApiVersions v3 answer leaves out features from level 0
            with client_of(c, package("3.8")) as client:
                assert client.ready.api_versions_version == 3
                assert set(client.ready.features.supported) == {"metadata.version"}


# --- UpdateFeatures, release by release ----------------------------------------------------------


def test_zookeeper_brokers_support_no_feature() -> None:
    """KafkaController.validateFeatureUpdate: 2.8's words (v0), then KIP-778's (3.3+, v1);
    a broker that is not the controller answers NOT_CONTROLLER."""
    not_supported = (
        "Could not apply finalized feature update because the provided feature is not supported."
    )
    with FakeCluster(release="2.8", brokers=2) as c:
        with client_of(c) as client:
            answer = update(
                client, 0, ("metadata.version", 1, UPGRADE), ("x", 0, SAFE), ("y", 0, UPGRADE)
            )
        assert answer.error_code == 0 and results(answer) == {
            "metadata.version": (INVALID_REQUEST, not_supported),
            "x": (INVALID_REQUEST, "Can not delete non-existing finalized feature."),
            "y": (
                INVALID_REQUEST,
                "Can not provide maxVersionLevel: 0 less than 1 without setting the "
                "allowDowngrade flag to true in the request.",
            ),
        }
        with client_of(c, node=1) as client:
            answer = update(client, 0, ("metadata.version", 1, UPGRADE))
        assert (answer.error_code, answer.results) == (41, ())  # NOT_CONTROLLER
    with FakeCluster(release="3.9") as c:
        with client_of(c) as client:
            answer = update(client, 1, ("a", 1, 7), ("b", 0, UPGRADE), ("c", 2, UPGRADE))
        assert results(answer) == {
            "a": (INVALID_REQUEST, "Received unknown upgrade type."),
            "b": (
                INVALID_REQUEST,
                "Can not provide versionLevel: 0 less than 1 without setting the SAFE "
                "downgradeType in the request.",
            ),
            "c": (INVALID_REQUEST, not_supported),
        }
        assert finalized(c) == ({}, 0)


def test_kraft_brokers_before_3_3_cannot_update_features() -> None:
    """3.0 and 3.1 forward UpdateFeatures to a controller without it; 3.2 refuses it itself;
    2.8 does not have it."""
    with FakeCluster(release="3.0", kraft=True) as c, client_of(c) as client:
        answer = update(client, 0, ("metadata.version", 1, UPGRADE))
        assert (answer.error_code, answer.error_message) == (-1, None)
    with FakeCluster(release="3.2", kraft=True) as c, client_of(c) as client:
        answer = update(client, 0, ("metadata.version", 1, UPGRADE))
        assert answer.error_code == 35 and "Should always be forwarded" in answer.error_message
    pkg = package()
    with FakeCluster(release="2.8", kraft=True) as c:
        with client_of(c, pkg) as client:
            with pytest.raises(pkg.module("errors").UnsupportedVersionError):
                client.connection.version_for(57)  # not advertised: the client refuses
        # told the broker had it (configured versions), the client sends; the broker closes
        host, port = c.bootstrap.rsplit(":", 1)
        lying = pkg.module("connection").ClientConnection(broker_versions={57: (0, 1), 18: (0, 3)})
        with pkg.module("client").Client.connect(host, int(port), lying) as client:
            with pytest.raises(pkg.module("connection").ConnectionFailedError):
                update(client, 0, ("metadata.version", 1, UPGRADE))


def test_metadata_version_moves_a_kraft_3_9_controller_allows() -> None:
    """FeatureControlManager: any supported level from the floor up; downgrades only with a
    downgrade type and only across levels that did not change the metadata (3.7-IV2 did);
    a v0 request's allowDowngrade does not count (the controller reads UpgradeType)."""

    def invalid(level: int, reason: str, feature: str = "metadata.version") -> tuple[int, str]:
        return (
            INVALID_UPDATE_VERSION,
            f"Invalid update version {level} for feature {feature}. {reason}",
        )

    def invalid_mv(level: int, reason: str) -> tuple[int, str]:
        return INVALID_UPDATE_VERSION, f"Invalid metadata.version {level}. {reason}"

    downgrade_type = (
        "Can't downgrade the version of this feature without setting the upgrade type to "
        "either safe or unsafe downgrade."
    )
    with FakeCluster(release="3.9", kraft=True) as c, client_of(c) as client:
        levels, epoch = finalized(c)
        assert levels == {"metadata.version": (21, 21)}
        answer = update(client, 1, ("metadata.version", 19, SAFE), validate_only=True)
        assert results(answer) == {"metadata.version": (0, None)}
        assert finalized(c)[0] == levels  # validate only
        assert results(update(client, 0, ("metadata.version", 19, SAFE))) == {
            "metadata.version": invalid(19, downgrade_type)
        }
        assert results(update(client, 1, ("metadata.version", 19, SAFE))) == {
            "metadata.version": (0, None)
        }
        levels, later = finalized(c)
        assert levels == {"metadata.version": (19, 19)} and later > epoch
        refusals = {
            (16, SAFE): invalid_mv(
                16,
                "Refusing to perform the requested downgrade because it might delete metadata "
                "information.",
            ),
            (16, UNSAFE): invalid_mv(
                16, "Unsafe metadata downgrade is not supported in this version."
            ),
            (3, SAFE): invalid_mv(3, "Unable to set a metadata.version less than 3.3-IV0"),
            (22, UPGRADE): invalid(22, "Local controller 0 only supports versions 1-21"),
            (20, SAFE): invalid(20, "Can't downgrade to a newer version."),
            (18, UPGRADE): invalid(18, downgrade_type),
            (20, 4): invalid(20, "The controller does not support the given upgrade type."),
        }
        for (level, kind), expected in refusals.items():
            answer = update(client, 1, ("metadata.version", level, kind))
            assert results(answer) == {"metadata.version": expected}, (level, kind)
        answer = update(
            client, 1, ("metadata.version", 21, UPGRADE), ("unknown.version", 1, UPGRADE)
        )
        assert results(answer) == {  # each update succeeds or fails alone before 4.0
            "metadata.version": (0, None),
            "unknown.version": invalid(
                1, "Local controller 0 does not support this feature.", "unknown.version"
            ),
        }
        assert finalized(c)[0] == {"metadata.version": (21, 21)}
    with FakeCluster(release="3.5", kraft=True) as c, client_of(c) as client:
        answer = update(client, 1, ("metadata.version", 8, SAFE))  # across 3.5-IV2
        assert results(answer)["metadata.version"][1] == (
            "Invalid metadata.version 8. Refusing to perform the requested downgrade because it "
            "might delete metadata information. Retry using UNSAFE_DOWNGRADE if you want to "
            "force the downgrade to proceed."
        )


def test_from_4_0_one_failed_update_fails_them_all() -> None:
    with FakeCluster(release="4.3") as c, client_of(c) as client:
        answer = update(client, 2, ("group.version", 0, SAFE), ("metadata.version", 5, UPGRADE))
        assert (answer.error_code, answer.results) == (INVALID_UPDATE_VERSION, ())
        assert answer.error_message == (
            "The update failed for all features since the following feature had an error: "
            "Invalid update version 5 for feature metadata.version. Local controller 0 only "
            "supports versions 7-30"
        )
        assert finalized(c)[0]["group.version"] == (1, 1)
        answer = update(client, 2, ("group.version", 0, SAFE))
        assert (answer.error_code, answer.results) == (0, ())  # v2: no per-feature results
        assert "group.version" not in finalized(c)[0]  # level 0: not finalized any more
        answer = update(client, 1, ("group.version", 1, UPGRADE))
        assert results(answer) == {"group.version": (0, None)}
        assert finalized(c)[0]["group.version"] == (1, 1)


# --- the upgrade flow ------------------------------------------------------------------------------


def test_the_metadata_version_upgrade_flow_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    """As an operator's tool would: find the brokers' UpdateFeatures and feature levels, check
    with the negotiation module that upgrade types can be sent (UpdateFeatures v1), dry-run
    the upgrade, run it, and see the new level and a higher epoch in ApiVersions and in
    ``broker-versions`` (``kafka-features.sh describe``'s lines)."""
    pkg = package()
    negotiation = pkg.module("negotiation")
    needs = {57: (1, 2)}  # UpdateFeatures with upgrade types and validate-only
    with FakeCluster(release="2.6") as old, client_of(old) as client:
        check = negotiation.check_feature(needs, client.ready.versions)
        assert not check and check.reasons == (
            "UpdateFeatures(57): needs versions 1 to 2, not available",
        )
    with FakeCluster(release="3.2", kraft=True) as early, client_of(early) as client:
        assert not negotiation.check_feature(needs, client.ready.versions)
    with FakeCluster(release="3.8", kraft=True, brokers=2) as c:
        with client_of(c) as client:
            check = negotiation.check_feature(needs, client.ready.versions)
            assert check and check.versions == {57: 1}
            ready = client.ready
            low, high = ready.features.supported["metadata.version"]
            assert (low, high) == (1, 20)
            # the cluster still runs 3.7-IV4 (19) after its brokers were upgraded to 3.8
            assert results(update(client, 1, ("metadata.version", 19, SAFE))) == {
                "metadata.version": (0, None)
            }
            before = finalized(c)
            assert before[0] == {"metadata.version": (19, 19)}
            dry = update(
                client, check.versions[57], ("metadata.version", high, UPGRADE), validate_only=True
            )
            assert results(dry) == {"metadata.version": (0, None)} and finalized(c)[0] == before[0]
            done = update(client, check.versions[57], ("metadata.version", high, UPGRADE))
            assert results(done) == {"metadata.version": (0, None)}
        for node in (0, 1):  # every broker shows it
            with client_of(c, node=node) as client:
                features = client.ready.features
            assert features.finalized == {"metadata.version": (20, 20)}
            assert features.epoch > before[1]
        code = main(["broker-versions", "--bootstrap-server", c.bootstrap, "--timeout", "5"])
    out = capsys.readouterr().out
    assert code == 0
    lines = re.findall(r"^Feature: metadata\.version\t.*$", out, re.M)
    assert len(lines) == 2 and all(
        re.fullmatch(
            r"Feature: metadata\.version\tSupportedMinVersion: 3\.0-IV1\t"
            r"SupportedMaxVersion: 3\.8-IV0\tFinalizedVersionLevel: 3\.8-IV0\tEpoch: (\d+)",
            line,
        )
        for line in lines
    )
    assert all(int(line.rsplit(" ", 1)[1]) > before[1] for line in lines)
