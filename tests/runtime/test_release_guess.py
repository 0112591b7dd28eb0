"""Which Kafka release a broker is (``connection.guess_broker_release``, ``Ready.release_guess``),
given each row of the release table's own ApiVersions answer, with and without features."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from kafka_specgen.broker_releases import BrokerRelease, releases
from tests.support.genpkg import GENERATED

sys.path.insert(0, str(GENERATED))

from kafka_messages.connection import (  # noqa: E402
    ClientConnection,
    Features,
    Ready,
    RequestReceived,
    ServerConnection,
    guess_broker_release,
)
from kafka_messages.releases import BROKER_RELEASES, BROKER_ROWS, METADATA_VERSIONS  # noqa: E402

ANSWERING = [row for row in releases() if row.advertised()]
#: The rows whose ranges are the same: only the features of an ApiVersions v3+ answer tell
#: them apart (3.4 changed no API version of KRaft brokers; metadata.version went 7 -> 8).
TIES = {"3.3.0 (KRaft)", "3.4.0 (KRaft)"}


def features_of(row: BrokerRelease, api_versions_version: int) -> Features:
    """The feature part of ``row``'s own ApiVersions answer at that version."""
    f = row.features
    if f is None or api_versions_version < 3:
        return Features()
    epoch = {"zookeeper": 0, "metadata offset": 42, "unknown": -1}[f.epoch]
    finalized = {name: (level, level) for name, level in f.finalized.items() if level}
    return Features(dict(f.supported_in(api_versions_version)), finalized, epoch)


def test_the_package_table_is_the_tools() -> None:
    assert [row.release for row in BROKER_ROWS] == [r.name for r in ANSWERING]
    for ours, row in zip(BROKER_ROWS, ANSWERING):
        assert (ours.label, ours.kraft) == (row.label, row.kind == "kraft")
        assert ours.advertised == row.advertised()
        assert {**ours.advertised, **ours.telemetry} == row.advertised(telemetry=True)
        if row.features is not None:
            assert ours.supported_features == dict(row.features.supported)
            assert ours.finalized_features == dict(row.features.finalized)
            for level, (name, _) in row.features.metadata_versions.items():
                assert METADATA_VERSIONS[level] == name
    assert list(BROKER_RELEASES)[-6:] == ["3.9.0", "4.0.0", "4.0.1", "4.1.0", "4.2.0", "4.3.0"]
    assert BROKER_RELEASES["3.9.0"][4] == (0, 7)  # the ZooKeeper broker: LeaderAndIsr


@pytest.mark.parametrize("row", ANSWERING, ids=lambda r: r.label)
def test_every_row_is_named_from_its_own_answer(row: BrokerRelease) -> None:
    answers = [row.advertised(), row.advertised(telemetry=True)]
    for versions in answers:
        for api_versions_version in (4, 3):
            guess = guess_broker_release(versions, features_of(row, api_versions_version))
            assert (guess.kind, guess.low) == ("exact", row.label), api_versions_version
        for features in (None, Features()):  # an ApiVersions v0-2 answer: no features
            guess = guess_broker_release(versions, features)
            if row.label in TIES:
                assert guess.kind == "one of" and set(guess.candidates) == TIES
                assert str(guess) == "one of 3.3.0 (KRaft), 3.4.0 (KRaft)"
            else:
                assert str(guess) == row.label


@pytest.mark.parametrize(
    "base, change, expected",
    [
        ("3.9", {0: (0, 12)}, "at least 3.9.0"),  # a ZooKeeper broker newer than the table
        ("4.3", {1: (4, 19)}, "at least 4.3.0"),
        ("3.6", {0: (0, 10)}, "between 3.6.0 and 3.7.0"),
        ("3.6 kraft", {0: (0, 10)}, "between 3.6.0 (KRaft) and 3.7.0 (KRaft)"),
        ("0.10.0", {0: (0, 1)}, "older than 0.10.0.0"),
    ],
)
def test_a_broker_no_row_matches_gets_a_kversion_form(
    base: str, change: dict[int, tuple[int, int]], expected: str
) -> None:
    name, _, kind = base.partition(" ")
    kind = kind or ("kraft" if name.startswith("4") else "zookeeper")
    row = next(r for r in ANSWERING if r.release.short == name and r.kind == kind)
    versions = {**row.advertised(), **change}
    assert str(guess_broker_release(versions, Features())) == expected


def converse(client: Any, server: Any, answer: Any) -> Ready:
    """ApiVersions to a ServerConnection, answered by ``answer(server, event)``."""
    client.start(0.0)
    for _ in range(5):
        events = server.receive_data(client.data_to_send())
        for event in events:
            assert isinstance(event, RequestReceived) and event.api_key == 18
            answer(server, event)
        for event in client.receive_data(server.data_to_send(), 0.0):
            if isinstance(event, Ready):
                return event
    raise AssertionError("no Ready")


@pytest.mark.parametrize("label", ["3.3.0 (KRaft)", "3.4.0 (KRaft)", "4.0.0", "4.0.1"])
def test_ready_names_the_release_from_the_answer_and_its_features(label: str) -> None:
    row = next(r for r in ANSWERING if r.label == label)
    f = row.features
    assert f is not None

    def answer(server: Any, event: Any) -> None:
        version = event.api_version
        finalized = {name: (level, level) for name, level in f.finalized.items()}
        server.send_api_versions(
            event,
            row.advertised(),
            supported_features=f.supported_in(version),
            finalized_features=finalized,
            finalized_features_epoch=7,
        )

    ready = converse(ClientConnection(), ServerConnection(), answer)
    assert ready.api_versions_version == min(4, row.advertised()[18][1])
    assert ready.features.supported["metadata.version"] == f.supported["metadata.version"]
    assert str(ready.release_guess) == label
