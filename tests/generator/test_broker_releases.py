"""kafka_specgen.broker_releases: finding a release's row, and what a row says."""

from __future__ import annotations

import pytest

from kafka_specgen.broker_releases import (
    SAFE_DOWNGRADE,
    UNSAFE_DOWNGRADE,
    ReleaseTableError,
    release,
    releases,
    table,
)
from kafka_specgen.release_names import Release


@pytest.mark.parametrize(
    "name, kraft, row, label",
    [
        ("3.8", False, "3.8.0", "3.8.0"),
        ("3.8.0", False, "3.8.0", "3.8.0"),
        ("3.8.1", False, "3.8.0", "3.8.0"),
        ("3.8.7", True, "3.8.0", "3.8.0 (KRaft)"),
        ("4.0", False, "4.0.0", "4.0.0"),  # 4.x is KRaft only, whatever kraft says
        ("4.0.0", True, "4.0.0", "4.0.0"),
        ("4.0.1", False, "4.0.1", "4.0.1"),
        ("4.0.2", False, "4.0.1", "4.0.1"),
        ("4.3.1", False, "4.3.0", "4.3.0"),
        ("0.10.2", False, "0.10.2.0", "0.10.2.0"),
        ("0.10.2.1", False, "0.10.2.0", "0.10.2.0"),
        ("0.8.2.2", False, "0.8.2.0", "0.8.2.0"),
        ("2.8", True, "2.8.0", "2.8.0 (KRaft)"),
    ],
)
def test_a_name_finds_the_newest_row_of_its_line_at_or_below_it(
    name: str, kraft: bool, row: str, label: str
) -> None:
    found = release(name, kraft=kraft)
    assert (found.name, found.label) == (row, label)
    assert found.kind == ("kraft" if kraft or name.startswith("4") else "zookeeper")


@pytest.mark.parametrize(
    "name, kraft, message",
    [
        ("5.0", False, "no Kafka 5.0 in the release table (0.8.0 to 4.3)"),
        ("3.10", False, "no Kafka 3.10 in the release table (0.8.0 to 4.3)"),
        ("2.4", True, "Kafka 2.4 has no KRaft brokers (KRaft came with 2.8)"),
        ("latest", False, "'latest' is not a Kafka release (like 3.9, 4.1.1 or 0.10.2)"),
    ],
)
def test_unknown_releases_are_one_line_errors(name: str, kraft: bool, message: str) -> None:
    with pytest.raises(ReleaseTableError) as info:
        release(name, kraft=kraft)
    assert str(info.value) == message


def test_rows_are_in_release_order_with_both_kinds_before_4() -> None:
    rows = releases()
    order = [(row.release, row.kind != "zookeeper") for row in rows]
    assert order == sorted(order) and len(rows) == 45
    assert [r.name for r in releases("kraft")][:2] == ["2.8.0", "3.0.0"]
    assert {r.kind for r in releases() if r.release >= Release.parse("4.0")} == {"kraft"}
    defaults = table().default_rows()
    assert len(defaults) == 34 and len({r.release for r in defaults}) == 34
    assert all(r.kind == "zookeeper" for r in defaults if r.release < Release.parse("4.0"))


def test_advertised_and_accepted() -> None:
    four = release("4.1")
    assert four.advertised()[0] == (0, 13) and four.accepted[0] == (3, 13)
    assert four.advertised(telemetry=True)[72] == (0, 0) and 72 not in four.advertised()
    assert four.accepted[72] == (0, 0)
    assert four.advertised()[8] == (2, 9) and four.advertised(unstable=True)[8] == (2, 10)
    assert four.accepted[8] == (2, 9) and four.accepts(unstable=True)[8] == (2, 10)
    refusal = four.refusal(0, 1)
    assert refusal is not None and (refusal.answer, refusal.quirk) == ("close", "KAFKA-18659")
    assert four.refusal(0, 3) is None and four.refusal(1, 0) is None
    zk = release("3.7")
    assert zk.accepted == zk.advertised() and 71 not in zk.accepted and 4 in zk.accepted


def test_brokers_without_api_versions() -> None:
    assert release("0.8.2").api_versions == "closes"
    nine = release("0.9")
    assert nine.api_versions == "no answer" and nine.advertised() == {}
    assert nine.accepted[16] == (0, 0) and 18 not in nine.accepted
    assert [q.id for q in nine.quirks] == ["no-api-versions"]
    assert release("0.10.0").api_versions == "answered"


def test_features() -> None:
    assert release("2.6").features is None
    zk = release("3.9").features
    assert zk is not None and (zk.epoch, dict(zk.supported), dict(zk.finalized)) == (
        "zookeeper",
        {},
        {},
    )
    assert release("3.2", kraft=True).features.epoch == "unknown"  # type: ignore[union-attr]
    f = release("4.0.1").features
    assert f is not None and f.epoch == "metadata offset"
    assert f.supported["metadata.version"] == (7, 25) and f.finalized["metadata.version"] == 25
    assert f.metadata_version_name(25) == "4.0-IV3" and f.metadata_version_name(7) == "3.3-IV3"
    assert f.metadata_version_name(0) == "UNKNOWN 0"
    # ApiVersions v3 leaves out what starts at level 0 (KAFKA-17492); v4 lists it.
    assert f.supported_in(3) == {"metadata.version": (7, 25)}
    assert f.supported_in(4)["group.version"] == (0, 1)
    assert f.supported_in(4, unstable=True)["metadata.version"] == (7, 26)
    assert release("3.8", kraft=True).features.supported_in(3) == {  # type: ignore[union-attr]
        "metadata.version": (1, 20)
    }


def test_metadata_version_moves_as_the_controller_allows() -> None:
    f = release("4.0").features
    assert f is not None
    assert f.metadata_version_change(25, 25) is None
    assert f.metadata_version_change(21, 25) is None  # upgrade
    assert f.metadata_version_change(25, 26) == "metadata.version 26 is outside the supported 7-25."
    assert f.metadata_version_change(25, 26, unstable=True) is None
    assert f.metadata_version_change(25, 24) == (
        "Can't downgrade the version of this feature without setting the upgrade type to "
        "either safe or unsafe downgrade."
    )
    # 4.0-IV1 (23) changed the metadata: downgrading across it is refused, not below it.
    assert f.metadata_version_change(25, 23, SAFE_DOWNGRADE) is None
    assert f.metadata_version_change(25, 22, SAFE_DOWNGRADE) == (
        "Refusing to perform the requested downgrade because it might delete metadata "
        "information."
    )
    assert f.metadata_version_change(25, 22, UNSAFE_DOWNGRADE) == (
        "Unsafe metadata downgrade is not supported in this version."
    )
    assert (
        f.metadata_version_change(22, 25, SAFE_DOWNGRADE) == "Can't downgrade to a newer version."
    )
    three = release("3.6", kraft=True).features
    assert three is not None
    assert three.metadata_version_change(14, 3) == (
        "Unable to set a metadata.version less than 3.3-IV0"
    )
    assert release("3.6").features.metadata_version_change(1, 2) == (  # type: ignore[union-attr]
        "this broker has no metadata.version to change"
    )


def test_every_row_cites_its_sources_and_quirks() -> None:
    for row in releases():
        assert row.sources, row.label
        for quirk in row.quirks:
            assert quirk.about and quirk.source and quirk is table().quirks[quirk.id]
    assert {q.id for q in release("4.0.0").quirks} >= {
        "KAFKA-18659",
        "telemetry",
        "joingroup-floor",
    }
